/*
 * rma.c — contiguous put and get: the origin-side checks, then the tracker (put) or the flow
 * dependency check and one blocking ucp_get_nbx (get).  The put path is inline down to the UCP
 * call for the common cases (engine/tracker.h).
 */
#include "tracker.h"

/* This thread's pthread_self(), fetched once per thread.  pthread_self() is a call through the
 * PLT; on the benchmark machine (a VM) that call and the out-of-line rmx_ctx_check around it were
 * a large part of rmx_put's overhead over a raw ucp_put_nbx: caching and inlining cut that
 * overhead by about a quarter (perf/rmx_perf --test put_rate --sizes 8, medians of 8 runs).
 * initial-exec: a %fs-relative load, also in librmx.so. */
static __thread pthread_t self_tid __attribute__((tls_model("initial-exec")));
static __thread int self_known __attribute__((tls_model("initial-exec")));

static inline pthread_t self_thread(void)
{
    if (__builtin_expect(!self_known, 0)) {
        self_tid = pthread_self();
        self_known = 1;
    }
    return self_tid;
}

/* rmx_win_check with the context check inlined (same checks, same order, same codes). */
static inline int win_check_fast(rmx_win_t *win)
{
    if (win == NULL || win->magic != RMX_WIN_MAGIC)
        return RMX_ERR_WIN;
    rmx_ctx_t *ctx = win->ctx;
    if (ctx == NULL || ctx->magic != RMX_CTX_MAGIC)
        return RMX_ERR_CTX;
    if (!pthread_equal(ctx->owner, self_thread()))
        return RMX_ERR_THREAD;
    return RMX_OK;
}

int rmx_put(rmx_win_t *win, const void *src, size_t len, int target, size_t disp)
{
    int rc = win_check_fast(win);
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
    int rc = win_check_fast(win);
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
    if ((rc = rmx_tracker_before_access(win, target, disp, len)) != RMX_OK)
        return rc;
    ctx->stats.ucp_gets++;
    return rmx_ucx_get(&ctx->ucx, rmx_ep(ctx, target), dst, len,
                       win->remote[target].addr + disp, win->remote[target].rkey);
}
