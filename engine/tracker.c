/*
 * tracker.c — segment bookkeeping.  Puts are issued at once and left incomplete at the target;
 * the tracker remembers which targets have puts outstanding, makes a later get or atomic to such a
 * target wait for them (flow dependency), and completes everything at segment end with one flush.
 *
 * This first version tracks targets, not byte ranges: any access to a target with a pending put
 * flushes that endpoint.  That is correct (never too little waiting) but waits more than needed.
 */
#include <stdlib.h>
#include "internal.h"

typedef struct rmx_tracker {
    uint8_t *pending;     /* [size] 1: puts to this target not yet complete there */
    int npending;
} rmx_tracker_t;

int rmx_tracker_create(rmx_ctx_t *ctx)
{
    rmx_tracker_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return RMX_ERR_NOMEM;
    t->pending = calloc((size_t)ctx->size, 1);
    if (t->pending == NULL) {
        free(t);
        return RMX_ERR_NOMEM;
    }
    ctx->tracker = t;
    return RMX_OK;
}

void rmx_tracker_destroy(rmx_ctx_t *ctx)
{
    if (ctx->tracker == NULL)
        return;
    free(ctx->tracker->pending);
    free(ctx->tracker);
    ctx->tracker = NULL;
}

int rmx_tracker_put(rmx_win_t *win, const void *src, size_t len, int target, size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_tracker_t *t = ctx->tracker;
    ctx->stats.ucp_puts++;
    int rc = rmx_ucx_put(&ctx->ucx, rmx_ep(ctx, target), src, len,
                         win->remote[target].addr + disp, win->remote[target].rkey);
    if (!t->pending[target]) {
        t->pending[target] = 1;
        t->npending++;
    }
    return rc;
}

static int complete_target(rmx_ctx_t *ctx, int target)
{
    rmx_tracker_t *t = ctx->tracker;
    ctx->stats.flushes_ep++;
    int rc = rmx_ucx_flush_ep(&ctx->ucx, rmx_ep(ctx, target));
    t->pending[target] = 0;
    t->npending--;
    return rc;
}

int rmx_tracker_before_access(rmx_win_t *win, int target, size_t disp, size_t len)
{
    (void)disp;
    (void)len;
    rmx_ctx_t *ctx = win->ctx;
    if (!ctx->tracker->pending[target]) {
        ctx->stats.waits_avoided++;
        return RMX_OK;
    }
    ctx->stats.flow_waits++;
    return complete_target(ctx, target);
}

int rmx_tracker_complete(rmx_ctx_t *ctx, int target)
{
    rmx_tracker_t *t = ctx->tracker;
    if (target >= 0)
        return t->pending[target] ? complete_target(ctx, target) : RMX_OK;
    if (t->npending == 0)
        return RMX_OK;
    ctx->stats.flushes_worker++;
    int rc = rmx_ucx_flush_worker(&ctx->ucx);
    for (int r = 0; r < ctx->size; r++)
        t->pending[r] = 0;
    t->npending = 0;
    return rc;
}

int rmx_tracker_forget_window(rmx_win_t *win)
{
    return rmx_tracker_complete(win->ctx, -1);
}
