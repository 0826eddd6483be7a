/*
 * rma.c — contiguous put and get: the origin-side checks, then the path chooser of rma.h (a copy
 * to oneself or to a mapped peer, the tracker, or one blocking UCP get).
 */
#include "rma.h"

int rmx_self_move(rmx_win_t *win, void *dst, const void *src, size_t len, size_t disp)
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
        return RMX_MT_RETRY(rc, win->ctx, rmx_put(win, src, len, target, disp));
    if (src == NULL && len > 0)
        return RMX_ERR_ARG;
    if ((rc = rmx_check_target(win, target, disp, len)) != RMX_OK)
        return rc;
    if (len == 0)
        return RMX_OK;
    return rmx_put_checked(win, src, len, target, disp);
}

int rmx_get(rmx_win_t *win, void *dst, size_t len, int target, size_t disp)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_get(win, dst, len, target, disp));
    if (dst == NULL && len > 0)
        return RMX_ERR_ARG;
    if ((rc = rmx_check_target(win, target, disp, len)) != RMX_OK)
        return rc;
    if (len == 0)
        return RMX_OK;
    return rmx_get_checked(win, dst, len, target, disp);
}
