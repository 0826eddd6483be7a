/*
 * rma.c — contiguous put and get: the origin-side checks, then the tracker (put) or the flow
 * dependency check and one blocking ucp_get_nbx (get).  The put path is inline down to the UCP
 * call for the common cases (engine/tracker.h).  A put or get to this rank itself is a local copy,
 * and so is one to a peer whose memory is mapped here (rmx_direct_t).
 */
#include "tracker.h"

/* A transfer between this rank's own window and its own memory is a copy at once (memmove).
 * Fortran needs it: a coindexed assignment to this_image() is in program order, so
 * `a(i)[this_image()] = x` must be visible to the next statement, and must not land later over
 * what the program wrote locally meanwhile (a staged put would, at the next segment end).
 * memmove also covers sides that share bytes (`a(2:n)[this_image()] = a(1:n-1)`), which UCX's
 * self transport, copying front to back, would not.  rmx_tracker_access first: nothing is staged
 * or pending to oneself now that every put to self is done here, but it keeps the copy after
 * anything this segment might still owe those bytes. */
static inline int is_self(const rmx_win_t *win, int target)
{
    return target == win->ctx->rank;
}

static int self_move(rmx_win_t *win, void *dst, const void *src, size_t len, size_t disp)
{
    int rc = rmx_tracker_access(win, win->ctx->rank, disp, len);
    if (rc == RMX_OK)
        memmove(dst, src, len);
    return rc;
}

int rmx_put(rmx_win_t *win, const void *src, size_t len, int target, size_t disp)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return rc;
    if (src == NULL && len > 0)
        return RMX_ERR_ARG;
    if ((rc = rmx_check_target(win, target, disp, len)) != RMX_OK)
        return rc;
    if (len == 0)
        return RMX_OK;
    win->ctx->stats.puts++;
    if (__builtin_expect(is_self(win, target), 0)) {
        win->ctx->stats.puts_self++;
        return self_move(win, (unsigned char *)win->base + disp, src, len, disp);
    }
    /* A mapped target: a copy, complete at once (rmx_direct_t); nothing to track. */
    unsigned char *mapped = win->remote[target].direct;
    if (mapped != NULL) {
        win->ctx->stats.direct_puts++;
        memcpy(mapped + disp, src, len);
        return RMX_OK;
    }
    /* A staged put never reaches UCX, so a loop of them would never let keepalive notice a dead
     * target (see rmx_ucx_tick). */
    rmx_ucx_tick(&win->ctx->ucx);
    return rmx_tracker_put_fast(win, src, len, target, disp);
}

int rmx_get(rmx_win_t *win, void *dst, size_t len, int target, size_t disp)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return rc;
    if (dst == NULL && len > 0)
        return RMX_ERR_ARG;
    if ((rc = rmx_check_target(win, target, disp, len)) != RMX_OK)
        return rc;
    if (len == 0)
        return RMX_OK;
    rmx_ctx_t *ctx = win->ctx;
    ctx->stats.gets++;
    if (__builtin_expect(is_self(win, target), 0))
        return self_move(win, dst, (unsigned char *)win->base + disp, len, disp);
    /* Nothing is ever pending to a mapped target: its puts were copies. */
    if (win->remote[target].direct == NULL &&
        (rc = rmx_tracker_access(win, target, disp, len)) != RMX_OK)
        return rc;
    return rmx_remote_get(ctx, &win->remote[target], target, dst, len, disp);
}
