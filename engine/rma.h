/*
 * rma.h — one contiguous put or get after the caller's checks: the path chooser shared by
 * rmx_put/rmx_get (rma.c) and the sections that are one run on both sides (subarray_rma.c).
 *   to this rank itself: a local copy now (memmove: "Self" in rmx.h);
 *   to a peer mapped here (rmx_direct_t): a copy, complete at once;
 *   otherwise: the tracker (put: staged, coalesced or issued) or a UCP get after the flow
 *   dependency check.
 * Inline: this is the whole data path of an 8-byte put.
 */
#ifndef RMX_RMA_H
#define RMX_RMA_H

#include "tracker.h"

/* A transfer between this rank's own window and its own memory is a copy at once (memmove).
 * Fortran needs it: a coindexed assignment to this_image() is in program order, so
 * `a(i)[this_image()] = x` must be visible to the next statement, and must not land later over
 * what the program wrote locally meanwhile (a staged put would, at the next segment end).
 * memmove also covers sides that share bytes (`a(2:n)[this_image()] = a(1:n-1)`), which UCX's
 * self transport, copying front to back, would not.  rmx_tracker_access first: nothing is staged
 * or pending to oneself now that every put to self is done here, but it keeps the copy after
 * anything this segment might still owe those bytes. */
int rmx_self_move(rmx_win_t *win, void *dst, const void *src, size_t len, size_t disp);

/* win, target, [disp, disp+len) checked, len > 0: counted in stats.puts here. */
static inline int rmx_put_checked(rmx_win_t *win, const void *src, size_t len, int target,
                                  size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    ctx->stats.puts++;
    unsigned char *mapped = win->remote[target].direct;
    if (__builtin_expect(target == ctx->rank, 0)) {
        ctx->stats.puts_self++;
        return rmx_self_move(win, (unsigned char *)win->base + disp, src, len, disp);
    }
    /* A direct or staged put never reaches UCX, so a loop of them would never let keepalive
     * notice a dead target (see rmx_ucx_tick). */
    rmx_ucx_tick(&ctx->ucx);
    if (mapped != NULL) { /* nothing to track: complete when the copy is */
        ctx->stats.direct_puts++;
        rmx_direct_copy(mapped + disp, src, len);
        return RMX_OK;
    }
    return rmx_tracker_put_fast(win, src, len, target, disp);
}

/* The same for a get, counted in stats.gets. */
static inline int rmx_get_checked(rmx_win_t *win, void *dst, size_t len, int target, size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    ctx->stats.gets++;
    const rmx_remote_t *rem = &win->remote[target];
    if (__builtin_expect(target == ctx->rank, 0))
        return rmx_self_move(win, dst, (unsigned char *)win->base + disp, len, disp);
    /* Nothing is ever pending to a mapped target: its puts were copies. */
    if (rem->direct == NULL) {
        int rc = rmx_tracker_access(win, target, disp, len);
        if (rc != RMX_OK)
            return rc;
    }
    return rmx_remote_get(ctx, rem, target, dst, len, disp);
}

#endif
