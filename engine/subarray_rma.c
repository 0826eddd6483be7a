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
#include "rma.h"
#include "subarray.h"

/* ---------------------------------------------------------------- put_sub / get_sub */

/* Origin-side checks shared by put_sub and get_sub; nothing is sent when one fails. */
static int check_sub_call(rmx_win_t *win, const void *buf, const rmx_sub_t *local, int target,
                          size_t disp, const rmx_sub_t *remote, rmx_sub_layout_t *L,
                          rmx_sub_layout_t *R)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return rc;
    rmx_ctx_t *ctx = win->ctx;
    if (ctx->sub_memo == NULL && (ctx->sub_memo = calloc(2, sizeof(rmx_sub_memo_t))) == NULL)
        return RMX_ERR_NOMEM;
    rmx_sub_memo_t *memo = ctx->sub_memo;
    if (rmx_sub_layout_memo(&memo[0], local, L) != RMX_OK ||
        rmx_sub_layout_memo(&memo[1], remote, R) != RMX_OK || rmx_sub_match(L, R) != RMX_OK)
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

/* A section of this rank's own window and a local section sharing bytes with it (Fortran's
 * `a(2:n:2)[this_image()] = a(1:n-1:2)`): every element must be read before any is written, so
 * the local side goes through a contiguous copy (as rma.c's memmove for contiguous transfers). */
static int self_sections_overlap(const rmx_win_t *win, int target, size_t disp,
                                 const rmx_sub_layout_t *R, const void *buf,
                                 const rmx_sub_layout_t *L)
{
    if (target != win->ctx->rank)
        return 0;
    uintptr_t a = (uintptr_t)buf + L->lo, a_end = (uintptr_t)buf + L->hi;
    uintptr_t b = (uintptr_t)win->base + disp + R->lo, b_end = (uintptr_t)win->base + disp + R->hi;
    return a < b_end && b < a_end;
}

/* Copy the elements of section L of buf to the contiguous tmp (pack) or back (unpack). */
static void local_copy(const rmx_sub_layout_t *L, unsigned char *buf, unsigned char *tmp,
                       int pack)
{
    rmx_sub_cursor_t c;
    rmx_sub_cursor_init(&c, L);
    size_t off, len, at = 0;
    while (rmx_sub_cursor_next(&c, &off, &len)) {
        if (pack)
            memcpy(tmp + at, buf + off, len);
        else
            memcpy(buf + off, tmp + at, len);
        at += len;
    }
}

/* The same elements, contiguous: the local side of an overlapping self transfer. */
static void contiguous_sub(rmx_sub_t *c, const rmx_sub_layout_t *L)
{
    memset(c, 0, sizeof(*c));
    c->elem_size = L->elem_size;
    c->rank = 1;
    c->order = RMX_ORDER_C;
    c->dim[0] = (rmx_sub_dim_t){.extent = L->nelem, .first = 0, .count = L->nelem, .stride = 1};
}

static int put_sub_through_copy(rmx_win_t *win, const void *src, const rmx_sub_layout_t *L,
                                int target, size_t disp, const rmx_sub_t *remote)
{
    unsigned char *tmp = malloc(L->nelem * L->elem_size);
    if (tmp == NULL)
        return RMX_ERR_NOMEM;
    local_copy(L, (unsigned char *)src, tmp, 1);
    rmx_sub_t c;
    contiguous_sub(&c, L);
    int rc = rmx_put_sub(win, tmp, &c, target, disp, remote);
    free(tmp);
    return rc;
}

static int get_sub_through_copy(rmx_win_t *win, void *dst, const rmx_sub_layout_t *L,
                                int target, size_t disp, const rmx_sub_t *remote)
{
    unsigned char *tmp = malloc(L->nelem * L->elem_size);
    if (tmp == NULL)
        return RMX_ERR_NOMEM;
    rmx_sub_t c;
    contiguous_sub(&c, L);
    int rc = rmx_get_sub(win, tmp, &c, target, disp, remote);
    if (rc == RMX_OK)
        local_copy(L, dst, tmp, 0);
    free(tmp);
    return rc;
}

/* Both sides cut into runs of one length the same number of times (the same section, or the
 * same shape in arrays of other extents): they can be walked in lockstep, run for run. */
static int same_runs(const rmx_sub_layout_t *a, const rmx_sub_layout_t *b)
{
    if (a->run_bytes != b->run_bytes || a->nouter != b->nouter)
        return 0;
    for (int d = 0; d < a->nouter; d++)
        if (a->count[d] != b->count[d])
            return 0;
    return 1;
}

/* Copy every run of F at `from` to the matching run of T at `to` (same_runs(T, F)).  The run
 * length is a constant in the common element sizes, so each run is a move or two, not a call:
 * a column of 8-byte elements goes at a few ns per element. */
#define COPY_RUNS(n)                                                                          \
    for (size_t k = 0; k < nruns; k++) {                                                      \
        memcpy(to + t.off, from + f.off, (n));                                                \
        rmx_sub_cursor_step(&t);                                                              \
        rmx_sub_cursor_step(&f);                                                              \
    }
static void copy_runs(unsigned char *to, const rmx_sub_layout_t *T, const unsigned char *from,
                      const rmx_sub_layout_t *F)
{
    rmx_sub_cursor_t t, f;
    rmx_sub_cursor_init(&t, T);
    rmx_sub_cursor_init(&f, F);
    size_t nruns = T->nruns, run = T->run_bytes;
    if (T->nouter == 1 && run == 8) { /* a column of doubles or 64-bit integers */
        size_t ts = T->step[0], fs = F->step[0];
        to += T->base;
        from += F->base;
        for (size_t k = 0; k < nruns; k++)
            memcpy(to + k * ts, from + k * fs, 8);
        return;
    }
    switch (run) {
    case 4:  COPY_RUNS(4);  break;
    case 8:  COPY_RUNS(8);  break;
    case 16: COPY_RUNS(16); break;
    default: COPY_RUNS(run); break;
    }
}

/* A section of memory this rank reaches with loads and stores: its own window part (`mine` is
 * win->base), or a peer's mapped here (rmx_direct_t).  Copied at once, piece by piece, after
 * whatever this segment still owes its bytes (as rma.c does for contiguous transfers to self:
 * program order on one's own image; to a mapped peer nothing is ever owed).  The sides do not
 * share bytes here (self_sections_overlap went first). */
static int mapped_sub_copy(rmx_win_t *win, int target, unsigned char *mapped, unsigned char *buf,
                           const rmx_sub_layout_t *L, size_t disp, const rmx_sub_layout_t *R,
                           int put)
{
    int rc = rmx_tracker_access(win, target, disp + R->lo, R->hi - R->lo);
    if (rc != RMX_OK)
        return rc;
    rmx_ucx_tick(&win->ctx->ucx); /* keepalive, as for puts (rma.h) */
    unsigned char *mine = mapped + disp;
    if (same_runs(L, R)) {
        if (put)
            copy_runs(mine, R, buf, L);
        else
            copy_runs(buf, L, mine, R);
        return RMX_OK;
    }
    rmx_sub_walk_t w;
    rmx_sub_walk_init(&w, L, R);
    size_t roff, rlen, loff, len;
    while (rmx_sub_walk_next_run(&w, &roff, &rlen)) {
        size_t at = 0;
        while (rmx_sub_walk_next_piece(&w, &loff, &len)) {
            if (put)
                memcpy(mine + roff + at, buf + loff, len);
            else
                memcpy(buf + loff, mine + roff + at, len);
            at += len;
        }
    }
    return RMX_OK;
}

int rmx_put_sub(rmx_win_t *win, const void *src, const rmx_sub_t *local, int target,
                size_t disp, const rmx_sub_t *remote)
{
    rmx_sub_layout_t L, R;
    int rc = check_sub_call(win, src, local, target, disp, remote, &L, &R);
    if (rc != RMX_OK || L.nelem == 0)
        return rc;
    if (L.nruns == 1 && R.nruns == 1) /* one run on both sides: a plain put */
        return rmx_put_checked(win, (const unsigned char *)src + L.base, L.run_bytes, target,
                               disp + R.base);
    if (self_sections_overlap(win, target, disp, &R, src, &L))
        return put_sub_through_copy(win, src, &L, target, disp, remote);
    win->ctx->stats.puts++;
    if (target == win->ctx->rank) {
        win->ctx->stats.puts_self++;
        return mapped_sub_copy(win, target, win->base, (unsigned char *)src, &L, disp, &R, 1);
    }
    if (win->remote[target].direct != NULL) {
        win->ctx->stats.direct_puts++;
        return mapped_sub_copy(win, target, win->remote[target].direct, (unsigned char *)src, &L,
                               disp, &R, 1);
    }
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

/* Gets are left in flight up to this many at once, then waited for together. */
#define GETS_IN_FLIGHT 64
/* Where gets land in rmx's buffer, a batch holds up to this many bytes (or one longer run). */
#define LANDING_BATCH (256u << 10)

/* The gets in flight of one rmx_get_sub.  In place (UCX shared memory: nothing is needed of the
 * target) they write the caller's buffer directly; otherwise they land in the transport's landing
 * buffer and are copied out when the batch completes, so an answer that comes after a timeout
 * writes there and not into the caller's memory.  Over active messages (tcp) rmx's own reply
 * handler copies each answer into the caller's buffer while its get is still waited for, and
 * drops it once given up: no landing buffer. */
typedef struct get_batch {
    rmx_ctx_t *ctx;
    int target;
    ucp_ep_h ep;
    rmx_am_peer_t *am;
    ucp_rkey_h rkey;
    int in_place;
    int n;
    size_t used, cap;                    /* landing bytes in use, landing size */
    ucs_status_ptr_t req[GETS_IN_FLIGHT];
    uint64_t token[GETS_IN_FLIGHT];      /* over active messages */
    unsigned char *dst[GETS_IN_FLIGHT];  /* where each one's bytes belong */
    size_t off[GETS_IN_FLIGHT], len[GETS_IN_FLIGHT];
} get_batch_t;

/* Over active messages: after the first failure the rest are given up (their answers dropped). */
static int batch_complete_am(get_batch_t *b)
{
    int rc = RMX_OK;
    for (int i = 0; i < b->n; i++) {
        if (rc == RMX_OK)
            rc = rmx_am_wait(&b->ctx->ucx, b->token[i]);
        else
            rmx_am_abandon(&b->ctx->ucx, b->token[i]);
    }
    b->n = 0;
    return rc;
}

/* Wait for every get of the batch and deliver what landed.  On a timeout the rest are given up:
 * with the landing buffer, or (in place) by closing the endpoint, so that none writes later. */
static int batch_complete(get_batch_t *b)
{
    if (b->am != NULL)
        return batch_complete_am(b);
    rmx_ucx_t *u = &b->ctx->ucx;
    int rc = RMX_OK, i;
    for (i = 0; i < b->n; i++) {
        int rc1 = rmx_ucx_wait_req(u, b->req[i], RMX_UCX_KEEP);
        if (rc1 == RMX_ERR_TIMEOUT) {
            rc = rc1;
            break;
        }
        rc = rc != RMX_OK ? rc : rc1;
    }
    if (i < b->n) { /* req[i..n) are still in flight */
        if (b->in_place) {
            rmx_ucx_purge(u, b->ep, &b->req[i], b->n - i);
            rmx_transfer_done(b->ctx, b->target, RMX_ERR_TIMEOUT);
        } else {
            for (int k = i; k < b->n; k++)
                rmx_ucx_abandon_req(u, b->req[k]);
            rmx_ucx_landing_abandon(u);
            b->cap = 0;
        }
    } else if (!b->in_place && rc == RMX_OK) {
        for (int k = 0; k < b->n; k++)
            memcpy(b->dst[k], u->landing + b->off[k], b->len[k]);
    }
    b->n = 0;
    b->used = 0;
    return rc;
}

static int batch_get(get_batch_t *b, unsigned char *dst, size_t len, uint64_t raddr)
{
    rmx_ucx_t *u = &b->ctx->ucx;
    int rc;
    if (b->am != NULL) {
        if (b->n == GETS_IN_FLIGHT && (rc = batch_complete(b)) != RMX_OK)
            return rc;
        if ((rc = rmx_am_get_start(u, b->am, dst, len, raddr, &b->token[b->n])) != RMX_OK)
            return rc;
        b->n++;
        return RMX_OK;
    }
    if (b->n == GETS_IN_FLIGHT || (!b->in_place && b->used + len > b->cap))
        if ((rc = batch_complete(b)) != RMX_OK)
            return rc;
    unsigned char *to = dst;
    if (!b->in_place) {
        if (len > b->cap) { /* nothing in flight: the landing buffer may move */
            if (rmx_ucx_landing(u, len > LANDING_BATCH ? len : LANDING_BATCH) == NULL)
                return RMX_ERR_NOMEM;
            b->cap = u->landing_len;
        }
        to = u->landing + b->used;
    }
    ucp_request_param_t prm = {.op_attr_mask = 0};
    ucs_status_ptr_t req = ucp_get_nbx(b->ep, to, len, raddr, b->rkey, &prm);
    if (UCS_PTR_IS_ERR(req))
        return rmx_ucx_status(UCS_PTR_STATUS(req));
    b->req[b->n] = req;
    b->dst[b->n] = dst;
    b->off[b->n] = b->used;
    b->len[b->n] = len;
    b->n++;
    b->used += len;
    return RMX_OK;
}

int rmx_get_sub(rmx_win_t *win, void *dst, const rmx_sub_t *local, int target, size_t disp,
                const rmx_sub_t *remote)
{
    rmx_sub_layout_t L, R;
    int rc = check_sub_call(win, dst, local, target, disp, remote, &L, &R);
    if (rc != RMX_OK || L.nelem == 0)
        return rc;
    if (L.nruns == 1 && R.nruns == 1) /* one run on both sides: a plain get */
        return rmx_get_checked(win, (unsigned char *)dst + L.base, L.run_bytes, target,
                               disp + R.base);
    if (self_sections_overlap(win, target, disp, &R, dst, &L))
        return get_sub_through_copy(win, dst, &L, target, disp, remote);
    rmx_ctx_t *ctx = win->ctx;
    ctx->stats.gets++;
    if (target == ctx->rank)
        return mapped_sub_copy(win, target, win->base, dst, &L, disp, &R, 0);
    if (win->remote[target].direct != NULL) {
        ctx->stats.direct_gets++;
        return mapped_sub_copy(win, target, win->remote[target].direct, dst, &L, disp, &R, 0);
    }
    if ((rc = rmx_tracker_access(win, target, disp + R.lo, R.hi - R.lo)) != RMX_OK)
        return rc;
    if (rmx_ep(ctx, target) == NULL)
        return RMX_ERR_PEER;
    unsigned char *to = dst;
    const rmx_remote_t *rem = &win->remote[target];
    uint64_t raddr = rem->addr + disp;
    get_batch_t b = {.ctx = ctx, .target = target, .ep = rmx_ep(ctx, target),
                     .am = rmx_am(ctx, target), .rkey = rem->rkey, .in_place = rem->ptr != NULL};
    rmx_sub_walk_t w;
    rmx_sub_walk_init(&w, &L, &R);
    stage_t st;
    st.heap = NULL;
    st.cap = 0;
    size_t roff, rlen, loff, len;
    while (rc == RMX_OK && rmx_sub_walk_next_run(&w, &roff, &rlen)) {
        if (rmx_sub_walk_run_is_one_piece(&w, &loff)) {
            ctx->stats.ucp_gets++;
            rc = batch_get(&b, to + loff, rlen, raddr + roff);
            continue;
        }
        /* Several local pieces: read the run whole, then scatter it (the landing buffer may be
         * used for it, so the batch completes first). */
        unsigned char *buf = stage_get(&st, rlen);
        if (buf == NULL) {
            rc = RMX_ERR_NOMEM;
            break;
        }
        if ((rc = batch_complete(&b)) != RMX_OK ||
            (rc = rmx_remote_get(ctx, rem, target, buf, rlen, disp + roff)) != RMX_OK)
            break;
        size_t at = 0;
        while (rmx_sub_walk_next_piece(&w, &loff, &len)) {
            memcpy(to + loff, buf + at, len);
            at += len;
        }
    }
    int rc2 = batch_complete(&b);
    free(st.heap);
    return rc != RMX_OK ? rc : rc2;
}
