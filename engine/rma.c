/*
 * rma.c — contiguous put and get: the origin-side checks, then the tracker (put) or the flow
 * dependency check and one blocking ucp_get_nbx (get).  The put path is inline down to the UCP
 * call for the common cases (engine/tracker.h).
 */
#include "tracker.h"

/* A transfer between this rank's own window and its own memory whose two sides share bytes
 * (Fortran's `a(2:n)[this_image()] = a(1:n-1)`): UCX's self transport copies front to back and
 * would read bytes it has already overwritten, so it is a memmove here, after whatever this
 * segment still owes those bytes. */
static inline int self_overlap(const rmx_win_t *win, int target, size_t disp, const void *buf,
                               size_t len)
{
    if (target != win->ctx->rank)
        return 0;
    uintptr_t a = (uintptr_t)buf, b = (uintptr_t)win->base + disp;
    return a < b + len && b < a + len;
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
    if (__builtin_expect(self_overlap(win, target, disp, src, len), 0))
        return self_move(win, (unsigned char *)win->base + disp, src, len, disp);
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
    if (__builtin_expect(self_overlap(win, target, disp, dst, len), 0))
        return self_move(win, dst, (unsigned char *)win->base + disp, len, disp);
    if ((rc = rmx_tracker_access(win, target, disp, len)) != RMX_OK)
        return rc;
    ctx->stats.ucp_gets++;
    return rmx_remote_get(ctx, &win->remote[target], target, dst, len, disp);
}
