/*
 * subarray.c — rmx_put_sub / rmx_get_sub, and the descriptor arithmetic under them (layout,
 * contiguous length, the joint local/remote walk; see subarray.h and DESIGN.md "Subarrays and
 * contiguity").
 *
 * Each remote contiguous run is exactly one UCP operation.  Its local side cannot be an iovec:
 * in UCX 1.13.1 ucp_put_nbx/ucp_get_nbx take only contiguous data — ucp.h says "Only the datatype
 * ucp_dt_make_contig(1) is supported" for both, and in src/ucp/rma/rma_send.c the default (v1)
 * path ucp_put_nbx -> ucp_rma_nonblocking -> ucp_rma_request_init sets
 * req->send.datatype = ucp_dt_make_contig(1) whatever param->datatype says, so an IOV datatype
 * would be read as raw bytes.  So when several local pieces cover one remote run they are
 * gathered into a staging buffer first (put), or the run is read into staging and scattered (get).
 *
 * Packing many tiny remote runs into one message scattered by an active-message handler at the
 * target was measured (tests/prog_sub_bench.c) and not adopted; see the figures there.
 */
#include <stdlib.h>
#include "internal.h"
#include "subarray.h"

/* ---------------------------------------------------------------- descriptor arithmetic */

static int mul_overflows(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

static int add_overflows(size_t a, size_t b, size_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

/* Dimension i counted from the fastest one. */
static const rmx_sub_dim_t *fastest_dim(const rmx_sub_t *s, int i)
{
    return s->order == RMX_ORDER_FORTRAN ? &s->dim[i] : &s->dim[s->rank - 1 - i];
}

static int header_ok(const rmx_sub_t *s)
{
    return s != NULL && s->elem_size > 0 && s->rank >= 1 && s->rank <= RMX_SUB_MAX_RANK &&
           (s->order == RMX_ORDER_C || s->order == RMX_ORDER_FORTRAN);
}

/* The section fits in its dimension: first + (count-1)*stride < extent, without wrapping. */
static int dim_ok(const rmx_sub_dim_t *d)
{
    if (d->stride == 0)
        return 0;
    if (d->count == 0)
        return 1;
    size_t reach, last;
    if (mul_overflows(d->count - 1, d->stride, &reach) || add_overflows(d->first, reach, &last))
        return 0;
    return last < d->extent;
}

/* A dimension joins the contiguous run if it is covered whole with stride 1 (a count of 1
 * makes the stride irrelevant). */
static int dim_whole(const rmx_sub_dim_t *d)
{
    return d->count == d->extent && (d->stride == 1 || d->count == 1);
}

static int dim_unit(const rmx_sub_dim_t *d)
{
    return d->stride == 1 || d->count == 1;
}

int rmx_sub_layout(const rmx_sub_t *s, rmx_sub_layout_t *out)
{
    if (!header_ok(s) || out == NULL)
        return RMX_ERR_ARG;
    memset(out, 0, sizeof(*out));
    out->elem_size = s->elem_size;
    /* pitch[i]: bytes between neighbours along fastest dimension i; the last product is the
     * whole array, so every offset computed below fits once this loop passed */
    size_t pitch[RMX_SUB_MAX_RANK], bytes = s->elem_size, nelem = 1;
    for (int i = 0; i < s->rank; i++) {
        const rmx_sub_dim_t *d = fastest_dim(s, i);
        if (!dim_ok(d))
            return RMX_ERR_ARG;
        pitch[i] = bytes;
        if (mul_overflows(bytes, d->extent, &bytes))
            return RMX_ERR_ARG;
        nelem *= d->count; /* <= product of extents, which fits */
    }
    if (nelem == 0)
        return RMX_OK; /* empty section: nothing to walk */
    out->nelem = nelem;

    size_t base = 0, reach = 0;
    for (int i = 0; i < s->rank; i++) {
        const rmx_sub_dim_t *d = fastest_dim(s, i);
        base += d->first * pitch[i];
        reach += (d->count - 1) * d->stride * pitch[i];
    }
    out->base = out->lo = base;
    out->hi = base + reach + s->elem_size;

    int i = 0;
    size_t run = 1;
    while (i < s->rank && dim_whole(fastest_dim(s, i)))
        run *= fastest_dim(s, i++)->count;
    if (i < s->rank && dim_unit(fastest_dim(s, i)))
        run *= fastest_dim(s, i++)->count;
    out->run_elems = run;
    out->run_bytes = run * s->elem_size;
    out->nruns = nelem / run;
    for (; i < s->rank; i++) {
        const rmx_sub_dim_t *d = fastest_dim(s, i);
        if (d->count == 1)
            continue; /* walks nowhere */
        out->count[out->nouter] = d->count;
        out->step[out->nouter] = d->stride * pitch[i];
        out->nouter++;
    }
    return RMX_OK;
}

int rmx_sub_match(const rmx_sub_layout_t *local, const rmx_sub_layout_t *remote)
{
    if (local->elem_size != remote->elem_size || local->nelem != remote->nelem)
        return RMX_ERR_ARG;
    return RMX_OK;
}

size_t rmx_sub_contig_elems(const rmx_sub_t *s)
{
    rmx_sub_layout_t l;
    if (rmx_sub_layout(s, &l) != RMX_OK)
        return 0;
    return l.run_elems;
}

/* ---------------------------------------------------------------- walking */

void rmx_sub_cursor_init(rmx_sub_cursor_t *c, const rmx_sub_layout_t *l)
{
    memset(c, 0, sizeof(*c));
    c->l = l;
    c->left = l->nruns;
    c->off = l->base;
}

size_t rmx_sub_count_runs(const rmx_sub_layout_t *l)
{
    rmx_sub_cursor_t c;
    size_t n = 0, off, len;
    rmx_sub_cursor_init(&c, l);
    while (rmx_sub_cursor_next(&c, &off, &len))
        n++;
    return n;
}

size_t rmx_sub_longest_run(const rmx_sub_layout_t *l)
{
    rmx_sub_cursor_t c;
    size_t most = 0, off, len;
    rmx_sub_cursor_init(&c, l);
    while (rmx_sub_cursor_next(&c, &off, &len))
        if (len > most)
            most = len;
    return most;
}

void rmx_sub_walk_init(rmx_sub_walk_t *w, const rmx_sub_layout_t *local,
                       const rmx_sub_layout_t *remote)
{
    memset(w, 0, sizeof(*w));
    rmx_sub_cursor_init(&w->loc, local);
    rmx_sub_cursor_init(&w->rem, remote);
}

/* Make sure a local run is current (the element counts match, so one exists while remote bytes
 * remain). */
static int load_local_run(rmx_sub_walk_t *w)
{
    return w->loc_left > 0 || rmx_sub_cursor_next(&w->loc, &w->loc_off, &w->loc_left);
}

int rmx_sub_walk_next_piece(rmx_sub_walk_t *w, size_t *loff, size_t *len)
{
    if (w->rem_left == 0 || !load_local_run(w))
        return 0;
    size_t n = w->loc_left < w->rem_left ? w->loc_left : w->rem_left;
    *loff = w->loc_off;
    *len = n;
    w->loc_off += n;
    w->loc_left -= n;
    w->rem_left -= n;
    return 1;
}

int rmx_sub_walk_next_run(rmx_sub_walk_t *w, size_t *roff, size_t *rlen)
{
    size_t loff, len;
    while (rmx_sub_walk_next_piece(w, &loff, &len))
        ;
    if (!rmx_sub_cursor_next(&w->rem, roff, rlen))
        return 0;
    w->rem_left = *rlen;
    return load_local_run(w);
}

int rmx_sub_walk_run_is_one_piece(const rmx_sub_walk_t *w, size_t *loff)
{
    *loff = w->loc_off;
    return w->loc_left >= w->rem_left;
}

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
    if ((rc = rmx_tracker_before_access(win, target, disp + R.lo, R.hi - R.lo)) != RMX_OK)
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
