/*
 * rma.c — contiguous put and get: the origin-side checks, then the tracker (put) or the flow
 * dependency check and one blocking ucp_get_nbx (get).  The put path is inline down to the UCP
 * call for the common cases (engine/tracker.h).
 */
#include "tracker.h"

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
    if ((rc = rmx_tracker_access(win, target, disp, len)) != RMX_OK)
        return rc;
    ctx->stats.ucp_gets++;
    return rmx_remote_get(ctx, &win->remote[target], target, dst, len, disp);
}
