/*
 * subarray_rma.c — rmx_put_sub / rmx_get_sub: the origin-side checks, then one UCP operation per
 * remote run found by the walk of engine/subarray.c (DESIGN.md "Subarrays and contiguity").
 *
 * Each remote contiguous run is exactly one UCP operation.  Its local side cannot be an iovec:
 * in UCX 1.13.1 ucp_put_nbx/ucp_get_nbx take only contiguous data — ucp.h says "Only the datatype
 * ucp_dt_make_contig(1) is supported" for both, and in src/ucp/rma/rma_send.c the default (v1)
 * path ucp_put_nbx -> ucp_rma_nonblocking -> ucp_rma_request_init sets
 * req->send.datatype = ucp_dt_make_contig(1) whatever param->datatype says, so an IOV datatype
 * would be read as raw bytes.  So when several local pieces cover one remote run they are
 * gathered into a staging buffer first (put), or the run is read into staging and scattered (get).
 *
 * Packing many short remote runs into one active message that the target scatters was measured
 * (tests/prog_sub_bench.c) and not adopted.  It can win for runs of 8-64 B, by up to ~6x, but
 * only while the target sits in a progress loop; for runs of 512 B and more it always lost (6x to
 * over 100x); a target that computes holds the data back for the whole busy time (milliseconds
 * where per-run puts take microseconds); and a segment end would need an acknowledgement from
 * the target, since a flush completes the AM's delivery, not its handler.  Per-run puts complete
 * with no target involvement, which is the guarantee rmx makes.  Figures in the bench.
 */
#include <stdlib.h>
#include "internal.h"
#include "subarray.h"
#include "tracker.h"

/* ---------------------------------------------------------------- put_sub / get_sub */

/* Origin-side checks shared by put_sub and get_sub; nothing is sent when one fails. */
static int check_sub_call(rmx_win_t *win, const void *buf, const rmx_sub_t *local, int target,
                          size_t disp, const rmx_sub_t *remote, rmx_sub_layout_t *L,
                          rmx_sub_layout_t *R)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return rc;
    if (rmx_sub_layout(local, L) != RMX_OK || rmx_sub_layout(remote, R) != RMX_OK ||
        rmx_sub_match(L, R) != RMX_OK)
        return RMX_ERR_ARG;
    if (buf == NULL && L->nelem > 0)
        return RMX_ERR_ARG;
    return rmx_check_target(win, target, disp, R->hi);
}

/* Scratch for runs covered by several local pieces: on the stack when small, else a heap buffer
 * that grows to the longest such run of the call. */
#define STAGE_ON_STACK 4096
typedef struct stage {
    unsigned char small[STAGE_ON_STACK];
    unsigned char *heap;
    size_t cap;
} stage_t;

static unsigned char *stage_get(stage_t *st, size_t len)
{
    if (len <= STAGE_ON_STACK)
        return st->small;
    if (len > st->cap) {
        unsigned char *p = realloc(st->heap, len);
        if (p == NULL)
            return NULL;
        st->heap = p;
        st->cap = len;
    }
    return st->heap;
}

int rmx_put_sub(rmx_win_t *win, const void *src, const rmx_sub_t *local, int target,
                size_t disp, const rmx_sub_t *remote)
{
    rmx_sub_layout_t L, R;
    int rc = check_sub_call(win, src, local, target, disp, remote, &L, &R);
    if (rc != RMX_OK || L.nelem == 0)
        return rc;
    win->ctx->stats.puts++;
    const unsigned char *from = src;
    rmx_sub_walk_t w;
    rmx_sub_walk_init(&w, &L, &R);
    stage_t st;
    st.heap = NULL;
    st.cap = 0;
    size_t roff, rlen, loff, len;
    while (rc == RMX_OK && rmx_sub_walk_next_run(&w, &roff, &rlen)) {
        if (rmx_sub_walk_run_is_one_piece(&w, &loff)) {
            rc = rmx_tracker_put(win, from + loff, rlen, target, disp + roff);
            continue;
        }
        unsigned char *buf = stage_get(&st, rlen);
        if (buf == NULL) {
            rc = RMX_ERR_NOMEM;
            break;
        }
        size_t at = 0;
        while (rmx_sub_walk_next_piece(&w, &loff, &len)) {
            memcpy(buf + at, from + loff, len);
            at += len;
        }
        rc = rmx_tracker_put(win, buf, rlen, target, disp + roff);
    }
    free(st.heap);
    return rc;
}

/* Direct gets are left in flight up to this many at once, then waited for in order. */
#define GETS_IN_FLIGHT 64

static int wait_gets(rmx_ucx_t *u, ucs_status_ptr_t *req, int *n)
{
    int rc = RMX_OK;
    for (int i = 0; i < *n; i++) {
        int r = rmx_ucx_wait(u, req[i]);
        if (rc == RMX_OK)
            rc = r;
    }
    *n = 0;
    return rc;
}

int rmx_get_sub(rmx_win_t *win, void *dst, const rmx_sub_t *local, int target, size_t disp,
                const rmx_sub_t *remote)
{
    rmx_sub_layout_t L, R;
    int rc = check_sub_call(win, dst, local, target, disp, remote, &L, &R);
    if (rc != RMX_OK || L.nelem == 0)
        return rc;
    rmx_ctx_t *ctx = win->ctx;
    ctx->stats.gets++;
    if ((rc = rmx_tracker_access(win, target, disp + R.lo, R.hi - R.lo)) != RMX_OK)
        return rc;
    unsigned char *to = dst;
    ucp_ep_h ep = rmx_ep(ctx, target);
    uint64_t raddr = win->remote[target].addr + disp;
    ucp_rkey_h rkey = win->remote[target].rkey;
    ucp_request_param_t prm = {.op_attr_mask = 0};
    ucs_status_ptr_t inflight[GETS_IN_FLIGHT];
    int ninflight = 0;
    rmx_sub_walk_t w;
    rmx_sub_walk_init(&w, &L, &R);
    stage_t st;
    st.heap = NULL;
    st.cap = 0;
    size_t roff, rlen, loff, len;
    while (rc == RMX_OK && rmx_sub_walk_next_run(&w, &roff, &rlen)) {
        ctx->stats.ucp_gets++;
        if (rmx_sub_walk_run_is_one_piece(&w, &loff)) {
            ucs_status_ptr_t req = ucp_get_nbx(ep, to + loff, rlen, raddr + roff, rkey, &prm);
            if (UCS_PTR_IS_ERR(req))
                rc = rmx_ucx_status(UCS_PTR_STATUS(req));
            else if (req != NULL)
                inflight[ninflight++] = req;
            if (ninflight == GETS_IN_FLIGHT && rc == RMX_OK)
                rc = wait_gets(&ctx->ucx, inflight, &ninflight);
            continue;
        }
        unsigned char *buf = stage_get(&st, rlen);
        if (buf == NULL) {
            rc = RMX_ERR_NOMEM;
            break;
        }
        if ((rc = rmx_ucx_get(&ctx->ucx, ep, buf, rlen, raddr + roff, rkey)) != RMX_OK)
            break;
        size_t at = 0;
        while (rmx_sub_walk_next_piece(&w, &loff, &len)) {
            memcpy(to + loff, buf + at, len);
            at += len;
        }
    }
    int rc2 = wait_gets(&ctx->ucx, inflight, &ninflight);
    free(st.heap);
    return rc != RMX_OK ? rc : rc2;
}
