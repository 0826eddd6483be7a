/*
 * subarray_rma.c — rmx_put_sub / rmx_get_sub: the origin-side checks, then one UCP operation per
 * remote run found by the walk of engine/subarray.c (DESIGN.md "Subarrays and contiguity"), or,
 * over rmx's active messages (tcp), the short runs packed many to a message.
 *
 * Over UCP, each remote contiguous run is exactly one operation.  Its local side cannot be an
 * iovec: in UCX 1.13.1 ucp_put_nbx/ucp_get_nbx take only contiguous data — ucp.h says "Only the
 * datatype ucp_dt_make_contig(1) is supported" for both, and in src/ucp/rma/rma_send.c the (v1)
 * path ucp_put_nbx -> ucp_rma_nonblocking -> ucp_rma_request_init sets
 * req->send.datatype = ucp_dt_make_contig(1) whatever param->datatype says, so an IOV datatype
 * would be read as raw bytes.  So when several local pieces cover one remote run they are
 * gathered into a staging buffer first (put), or the run is read into staging and scattered (get).
 *
 * Where UCP does RMA one-sidedly (shared memory) that stays so.  Where rmx's own active messages
 * carry RMA (tcp: transports/am_rma.c, served at the target by rmx's handlers) every run would
 * be a message the target's handler applies and, for a put, acknowledges; there the short runs
 * travel packed instead (below): many to a message, a put's with their bytes, unpacked by the
 * target's handler and acknowledged once; a get as one run list, answered with the bytes back
 * to back and scattered here.  A record describes a progression of equal runs (ucx.h
 * rmx_am_pack_t), so a column is one 16-byte record and its bytes.
 *
 * Packing was measured once before (tests/prog_sub_bench.c, over shared memory) and rejected:
 * the target had to sit in a progress loop to unpack, a computing target held the data back for
 * its whole busy time, and a segment end would have needed an acknowledgement from the target.
 * None of that holds on the active-message route any more: the target's progress agent
 * (transports/agent.c) serves the handlers whenever the target is busy outside rmx, every put
 * there is already acknowledged by the handler that applied it (am_rma.c), and flushes wait for
 * those acknowledgements; per-run messages needed the same target.  A packed put is tracked as
 * one put of the bytes its runs span (rmx_tracker_put_span): staged puts to those bytes go out
 * first, it is fenced after earlier puts to them, and a later get or atomic of them flushes.
 *
 * Measured 2026-12-03 with build/rmx_perf, UCX_TLS=tcp,self, 2 ranks: a 4 KiB column (512 runs
 * of 8 B) against one contiguous 4 KiB put or get in the same run, 5 runs interleaved with the
 * build before this, load average 8.8-9.4 on the 2 shared cores, median of the per-run ratios:
 * before, put_col/put_lat 182x (3745 us) and get_col/get_lat 341x (13358 us); packed, 1.70x
 * (36.4 us) and 1.85x (40.4 us).  Single rows swing between ~15 and ~150 us with the machine's
 * scheduling, whichever the path; earlier sets gave 1.08x and 1.22x (41.8x and 202x before, load
 * 9.4) and 1.46x and 2.40x (53x and 161x before, load 4.3-4.8).  With the target asleep between
 * messages (--idle-target 1: its agent wakes for each) 4101 -> 90 us and 9584 -> 141 us.
 * By run length (64 KiB sections and smaller, put_sub + completion, then get_sub): packing won at every run length that leaves room for 3 runs in a
 * 32 KiB message (16 runs of 8 KiB: 103 us vs 179 us per-run; 150 vs 180 with 16 KiB messages),
 * so runs of up to 8 KiB are packed, and messages of 32 KiB beat 8 and 16 KiB for runs of 1-4 KiB
 * (32 runs of 4 KiB: 70 us vs 155 and 333).
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

/* One remote run, the usual way: straight from local memory when one piece covers it, else
 * gathered into staging first. */
static int put_run(rmx_win_t *win, const unsigned char *from, rmx_sub_walk_t *w, size_t rlen,
                   int target, size_t rdisp, stage_t *st)
{
    size_t loff, len;
    if (rmx_sub_walk_run_is_one_piece(w, &loff))
        return rmx_tracker_put(win, from + loff, rlen, target, rdisp);
    unsigned char *buf = stage_get(st, rlen);
    if (buf == NULL)
        return RMX_ERR_NOMEM;
    size_t at = 0;
    while (rmx_sub_walk_next_piece(w, &loff, &len)) {
        memcpy(buf + at, from + loff, len);
        at += len;
    }
    return rmx_tracker_put(win, buf, rlen, target, rdisp);
}

/* ---------------------------------------------------------------- runs in lockstep over UCP
 * Both sides cut into runs alike (same_runs) and no two remote runs touching (so every run is a
 * maximal one, the one UCP put the general walk would issue for it): the section is one tracker
 * decision, as a packed put is (rmx_tracker_put_span: earlier staged bytes of the span go out
 * first, a fence after earlier puts to them, the span pending until the segment ends), then one
 * UCP put per run straight from local memory, the two cursors stepping together.  The general
 * walk cost about 250 instructions of walking and tracking around each put of a column
 * (callgrind, put_col RMX_DIRECT=0). */
static int runs_never_touch(const rmx_sub_layout_t *l)
{
    size_t back = 0; /* how far the faster dimensions' steps went before this one wraps them */
    for (int d = 0; d < l->nouter; d++) {
        if (l->step[d] == back + l->run_bytes)
            return 0;
        back += (l->count[d] - 1) * l->step[d];
    }
    return 1;
}

typedef struct lockstep {
    rmx_win_t *win;
    int target;
    size_t disp;
    const unsigned char *from;
    const rmx_sub_layout_t *L, *R;
} lockstep_t;

static int send_lockstep(void *arg)
{
    const lockstep_t *p = arg;
    size_t run = p->R->run_bytes;
    rmx_sub_cursor_t t, f;
    rmx_sub_cursor_init(&t, p->R);
    rmx_sub_cursor_init(&f, p->L);
    int rc = RMX_OK;
    for (size_t k = 0; k < p->R->nruns && rc == RMX_OK; k++) {
        rc = rmx_tracker_send(p->win, p->from + f.off, run, p->target, p->disp + t.off);
        rmx_sub_cursor_step(&t);
        rmx_sub_cursor_step(&f);
    }
    return rc;
}

static int put_sub_lockstep(rmx_win_t *win, const unsigned char *from, const rmx_sub_layout_t *L,
                            const rmx_sub_layout_t *R, int target, size_t disp)
{
    lockstep_t p = {win, target, disp, from, L, R};
    rmx_ucx_tick(&win->ctx->ucx);
    /* on a window part whose puts land on return, the span is complete when sent */
    return rmx_tracker_put_span(win, target, disp + R->lo, disp + R->hi,
                                win->remote[target].lands, send_lockstep, &p);
}

/* ---------------------------------------------------------------- packed runs (active messages)
 * Where rmx's own active messages carry RMA (tcp), the runs of at most PACK_RUN_MAX bytes go
 * packed, many to a message (ucx.h rmx_am_pack_t): a put's runs with their bytes, unpacked by
 * the target's handler (its progress agent when it is busy outside rmx) and acknowledged once;
 * a get's run list, answered with the bytes back to back and scattered here.  A pack holds
 * consecutive runs of the walk: a longer run closes it and goes the usual way. */
#define PACK_RUN_MAX (RMX_AM_PACK_MAX / 4) /* a message holds at least 3 such runs */
/* Packed gets in flight at once, each answer in a buffer of its own. */
#define PACKS_IN_FLIGHT 4

typedef struct packer {
    rmx_win_t *win;
    int target;
    size_t lo, hi;          /* window bytes the pack's runs lie in (a put's, for the tracker) */
    rmx_am_pack_t *pk;
} packer_t;

static int packer_open(packer_t *p, rmx_win_t *win, int target)
{
    p->win = win;
    p->target = target;
    p->pk = malloc(sizeof(*p->pk));
    if (p->pk == NULL)
        return RMX_ERR_NOMEM;
    rmx_am_pack_reset(p->pk, win->remote[target].addr, win->remote[target].size);
    return RMX_OK;
}

/* Room in the pack for the run [off, off+len) (with its bytes: a put): where they go, or NULL
 * when the pack must go first. */
static unsigned char *packer_add(packer_t *p, size_t off, size_t len, int put)
{
    unsigned char *at = rmx_am_pack_add(p->pk, off, len, put);
    if (at != NULL) {
        int first = p->pk->nruns == 1;
        p->lo = first || off < p->lo ? off : p->lo;
        p->hi = first || off + len > p->hi ? off + len : p->hi;
    }
    return at;
}

static int send_put_pack(void *arg)
{
    packer_t *p = arg;
    rmx_ctx_t *ctx = p->win->ctx;
    return rmx_am_put_packed(&ctx->ucx, rmx_am(ctx, p->target), p->pk);
}

/* The runs packed so far go out: in one message, tracked as one put of the bytes they span; a
 * single run as the usual put (which may then coalesce with its neighbours). */
static int put_pack_flush(packer_t *p)
{
    rmx_am_pack_t *pk = p->pk;
    rmx_ctx_t *ctx = p->win->ctx;
    int rc = RMX_OK;
    if (pk->nruns == 1) {
        rc = rmx_tracker_put(p->win, pk->body + sizeof(rmx_am_run_t), pk->bytes, p->target,
                             pk->first); /* the one record's bytes */
    } else if (pk->nruns > 1) {
        ctx->stats.ucp_puts++;
        ctx->stats.packed_msgs++;
        ctx->stats.packed_runs += pk->nruns;
        rc = rmx_tracker_put_span(p->win, p->target, p->lo, p->hi, 0, send_put_pack, p);
    }
    rmx_am_pack_reset(pk, pk->base, pk->span);
    return rc;
}

/* The remote side one progression of equal runs with gaps between them (a column, a strided
 * vector), the local side the same number of runs of that length, or contiguous: the runs pair
 * up one to one, and the pack is filled run for run without the joint walk.  *lstep: bytes
 * between local runs. */
static int progression(const rmx_sub_layout_t *L, const rmx_sub_layout_t *R, size_t *lstep)
{
    size_t run = R->run_bytes;
    if (R->nouter != 1 || R->step[0] <= run || run > PACK_RUN_MAX)
        return 0;
    if (L->nouter == 0) { /* one local run of every byte */
        *lstep = run;
        return 1;
    }
    if (L->nouter == 1 && L->run_bytes == run && L->count[0] == R->count[0]) {
        *lstep = L->step[0];
        return 1;
    }
    return 0;
}

static int put_progression(packer_t *p, const unsigned char *src, size_t lstep,
                           const rmx_sub_layout_t *R, size_t disp)
{
    size_t run = R->run_bytes, off = disp + R->base;
    int rc = RMX_OK;
    for (size_t k = 0; k < R->nruns; k++, src += lstep, off += R->step[0]) {
        unsigned char *at = packer_add(p, off, run, 1);
        if (at == NULL && ((rc = put_pack_flush(p)) != RMX_OK ||
                           (at = packer_add(p, off, run, 1)) == NULL))
            return rc != RMX_OK ? rc : RMX_ERR_TRANSPORT; /* an empty pack holds any such run */
        memcpy(at, src, run);
    }
    return put_pack_flush(p);
}

/* Any other pair of sections: the joint walk, runs longer than PACK_RUN_MAX the usual way. */
static int put_walk(packer_t *p, const unsigned char *from, const rmx_sub_layout_t *L,
                    const rmx_sub_layout_t *R, size_t disp)
{
    rmx_win_t *win = p->win;
    int target = p->target, rc = RMX_OK;
    rmx_sub_walk_t w;
    rmx_sub_walk_init(&w, L, R);
    stage_t st;
    st.heap = NULL;
    st.cap = 0;
    size_t roff, rlen, loff, len;
    while (rc == RMX_OK && rmx_sub_walk_next_run(&w, &roff, &rlen)) {
        if (rlen > PACK_RUN_MAX) {
            if ((rc = put_pack_flush(p)) == RMX_OK)
                rc = put_run(win, from, &w, rlen, target, disp + roff, &st);
            continue;
        }
        unsigned char *at = packer_add(p, disp + roff, rlen, 1);
        if (at == NULL && (rc = put_pack_flush(p)) == RMX_OK &&
            (at = packer_add(p, disp + roff, rlen, 1)) == NULL)
            rc = RMX_ERR_TRANSPORT; /* cannot be: an empty pack holds any run this short */
        while (rc == RMX_OK && rmx_sub_walk_next_piece(&w, &loff, &len)) {
            memcpy(at, from + loff, len);
            at += len;
        }
    }
    if (rc == RMX_OK)
        rc = put_pack_flush(p);
    free(st.heap);
    return rc;
}

static int put_sub_packed(rmx_win_t *win, const unsigned char *from, const rmx_sub_layout_t *L,
                          const rmx_sub_layout_t *R, int target, size_t disp)
{
    packer_t p;
    int rc = packer_open(&p, win, target);
    if (rc != RMX_OK)
        return rc;
    size_t lstep;
    if (progression(L, R, &lstep))
        rc = put_progression(&p, from + L->base, lstep, R, disp);
    else
        rc = put_walk(&p, from, L, R, disp);
    free(p.pk);
    return rc;
}

int rmx_put_sub(rmx_win_t *win, const void *src, const rmx_sub_t *local, int target,
                size_t disp, const rmx_sub_t *remote)
{
    rmx_sub_layout_t L, R;
    int rc = check_sub_call(win, src, local, target, disp, remote, &L, &R);
    if (rc != RMX_OK || L.nelem == 0)
        return RMX_MT_RETRY(rc, win->ctx, rmx_put_sub(win, src, local, target, disp, remote));
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
    if (rmx_am(win->ctx, target) != NULL)
        return put_sub_packed(win, from, &L, &R, target, disp);
    if (same_runs(&L, &R) && runs_never_touch(&R))
        return put_sub_lockstep(win, from, &L, &R, target, disp);
    rmx_sub_walk_t w;
    rmx_sub_walk_init(&w, &L, &R);
    stage_t st;
    st.heap = NULL;
    st.cap = 0;
    size_t roff, rlen;
    while (rc == RMX_OK && rmx_sub_walk_next_run(&w, &roff, &rlen))
        rc = put_run(win, from, &w, rlen, target, disp + roff, &st);
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
    rmx_win_t *win;
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
        return rmx_ucx_failed(u, UCS_PTR_STATUS(req));
    b->req[b->n] = req;
    b->dst[b->n] = dst;
    b->off[b->n] = b->used;
    b->len[b->n] = len;
    b->n++;
    b->used += len;
    return RMX_OK;
}

/* One remote run, the usual way: straight into local memory when one piece covers it (in the
 * batch), else read whole into staging and scattered. */
static int get_run(get_batch_t *b, const rmx_remote_t *rem, unsigned char *to, rmx_sub_walk_t *w,
                   size_t rlen, size_t rdisp, stage_t *st)
{
    size_t loff, len;
    if (rmx_sub_walk_run_is_one_piece(w, &loff)) {
        b->ctx->stats.ucp_gets++;
        return batch_get(b, to + loff, rlen, rem->addr + rdisp);
    }
    /* Several local pieces (the landing buffer may be used for the run: the batch completes
     * first). */
    unsigned char *buf = stage_get(st, rlen);
    if (buf == NULL)
        return RMX_ERR_NOMEM;
    int rc = batch_complete(b);
    if (rc != RMX_OK || (rc = rmx_remote_get(b->ctx, rem, b->target, buf, rlen, rdisp)) != RMX_OK)
        return rc;
    size_t at = 0;
    while (rmx_sub_walk_next_piece(w, &loff, &len)) {
        memcpy(to + loff, buf + at, len);
        at += len;
    }
    return RMX_OK;
}

/* The packed gets of one rmx_get_sub in flight: each one's answer, and the walk at its first
 * run (its pieces not yet taken), from which the answer is scattered. */
typedef struct get_packs {
    packer_t p;
    unsigned char *to;
    int n;
    uint64_t token[PACKS_IN_FLIGHT];
    size_t bytes[PACKS_IN_FLIGHT];
    rmx_sub_walk_t at[PACKS_IN_FLIGHT];     /* the walk's packs: the walk at the first run */
    size_t first[PACKS_IN_FLIGHT];          /* a progression's: the index of the first run */
    unsigned char *answer[PACKS_IN_FLIGHT]; /* [RMX_AM_PACK_MAX] each, allocated at first use */
    int ended[PACKS_IN_FLIGHT];             /* answered or failed (packs_test), with rcs[i] */
    int rcs[PACKS_IN_FLIGHT];
    rmx_sub_walk_t start;   /* the walk at the first run of the pack being built */
    size_t start_run;       /* a progression's: the index of that run */
    int prog;               /* a progression (progression()): the local runs are `lrun` bytes
                             * every `lstep` from `lbase` */
    unsigned char *lbase;
    size_t lstep, lrun;
} get_packs_t;

/* An answer into the caller's buffer.  The walk is at the pack's first run, its local run
 * loaded: the answer is the section's next `bytes` bytes in element order, so it fills the local
 * runs from there on, whatever the remote runs were (the local cursor alone is walked). */
static void scatter(unsigned char *to, rmx_sub_walk_t *w, size_t bytes, const unsigned char *a)
{
    size_t off = w->loc_off, len = w->loc_left;
    while (bytes > 0) {
        if (len == 0 && !rmx_sub_cursor_next(&w->loc, &off, &len))
            return;
        size_t n = len < bytes ? len : bytes;
        memcpy(to + off, a, n);
        a += n;
        bytes -= n;
        off += n;
        len -= n;
    }
}

/* Wait for every packed get in flight (those packs_test saw end need no wait) and scatter the
 * answers; after a failure the rest are given up (their answers dropped). */
static int packs_complete(get_packs_t *g)
{
    rmx_ucx_t *u = &g->p.win->ctx->ucx;
    int rc = RMX_OK;
    for (int i = 0; i < g->n; i++) {
        if (rc != RMX_OK) {
            if (!g->ended[i])
                rmx_am_abandon(u, g->token[i]);
            continue;
        }
        if ((rc = g->ended[i] ? g->rcs[i] : rmx_am_wait(u, g->token[i])) != RMX_OK)
            continue;
        if (!g->prog) {
            scatter(g->to, &g->at[i], g->bytes[i], g->answer[i]);
            continue;
        }
        unsigned char *to = g->lbase + g->first[i] * g->lstep;
        for (size_t at = 0; at < g->bytes[i]; at += g->lrun, to += g->lstep)
            memcpy(to, g->answer[i] + at, g->lrun);
    }
    g->n = 0;
    memset(g->ended, 0, sizeof(g->ended));
    return rc;
}

/* Without waiting: 1 while some packed get is unanswered, else packs_complete's result. */
static int packs_test(get_packs_t *g)
{
    rmx_ucx_t *u = &g->p.win->ctx->ucx;
    int pending = 0;
    for (int i = 0; i < g->n; i++) {
        if (g->ended[i])
            continue;
        int rc = rmx_am_test(u, g->token[i]);
        if (rc == 1) {
            pending = 1;
            continue;
        }
        g->ended[i] = 1;
        g->rcs[i] = rc;
    }
    return pending ? 1 : packs_complete(g);
}

/* The run list packed so far goes out as one packed get. */
static int get_pack_flush(get_packs_t *g)
{
    rmx_am_pack_t *pk = g->p.pk;
    if (pk->nruns == 0)
        return RMX_OK;
    int rc;
    if (g->n == PACKS_IN_FLIGHT && (rc = packs_complete(g)) != RMX_OK)
        return rc;
    int i = g->n, target = g->p.target;
    if (g->answer[i] == NULL && (g->answer[i] = malloc(RMX_AM_PACK_MAX)) == NULL)
        return RMX_ERR_NOMEM;
    rmx_ctx_t *ctx = g->p.win->ctx;
    ctx->stats.ucp_gets++;
    ctx->stats.packed_msgs++;
    ctx->stats.packed_runs += pk->nruns;
    rc = rmx_am_get_packed_start(&ctx->ucx, rmx_am(ctx, target), pk, g->answer[i], &g->token[i]);
    if ((rc = rmx_transfer_done(ctx, target, rc)) != RMX_OK)
        return rc;
    g->bytes[i] = pk->bytes;
    if (g->prog)
        g->first[i] = g->start_run;
    else
        g->at[i] = g->start;
    g->n++;
    rmx_am_pack_reset(pk, pk->base, pk->span);
    return RMX_OK;
}

/* Add the current run to the packed gets: the walk's (at its start), or the progression's k-th. */
static int get_pack_add(get_packs_t *g, const rmx_sub_walk_t *w, size_t k, size_t off,
                        size_t len)
{
    int rc;
    if (packer_add(&g->p, off, len, 0) == NULL) {
        if ((rc = get_pack_flush(g)) != RMX_OK)
            return rc;
        if (packer_add(&g->p, off, len, 0) == NULL)
            return RMX_ERR_TRANSPORT; /* cannot be: an empty pack holds any run this short */
    }
    if (g->p.pk->nruns == 1) {
        if (w != NULL)
            g->start = *w;
        g->start_run = k;
    }
    return RMX_OK;
}

static int packs_open(get_packs_t *g, rmx_win_t *win, int target, unsigned char *to)
{
    memset(g, 0, sizeof(*g));
    g->to = to;
    return packer_open(&g->p, win, target);
}

/* Every run of the section into packed gets, the last ones left in flight; b NULL: no run is
 * longer than PACK_RUN_MAX (else such a run goes the usual way, through b). */
static int packs_issue(get_packs_t *g, get_batch_t *b, const rmx_remote_t *rem,
                       const rmx_sub_layout_t *L, const rmx_sub_layout_t *R, size_t disp)
{
    int rc = RMX_OK;
    stage_t st;
    st.heap = NULL;
    st.cap = 0;
    g->prog = progression(L, R, &g->lstep);
    if (g->prog) {
        g->lbase = g->to + L->base;
        g->lrun = R->run_bytes;
        size_t off = disp + R->base;
        for (size_t k = 0; rc == RMX_OK && k < R->nruns; k++, off += R->step[0])
            rc = get_pack_add(g, NULL, k, off, g->lrun);
    } else {
        rmx_sub_walk_t w;
        rmx_sub_walk_init(&w, L, R);
        size_t roff, rlen;
        while (rc == RMX_OK && rmx_sub_walk_next_run(&w, &roff, &rlen)) {
            if (rlen > PACK_RUN_MAX) {
                if ((rc = get_pack_flush(g)) == RMX_OK)
                    rc = b != NULL ? get_run(b, rem, g->to, &w, rlen, disp + roff, &st)
                                   : RMX_ERR_TRANSPORT; /* the caller said none is */
            } else {
                rc = get_pack_add(g, &w, 0, disp + roff, rlen);
            }
        }
    }
    if (rc == RMX_OK)
        rc = get_pack_flush(g);
    free(st.heap);
    return rc;
}

/* Give up what is still in flight (its answers are dropped), free the buffers. */
static void packs_close(get_packs_t *g)
{
    for (int i = 0; i < g->n; i++)
        if (!g->ended[i])
            rmx_am_abandon(&g->p.win->ctx->ucx, g->token[i]);
    g->n = 0;
    for (int i = 0; i < PACKS_IN_FLIGHT; i++)
        free(g->answer[i]);
    free(g->p.pk);
}

static int get_sub_packed(get_batch_t *b, const rmx_remote_t *rem, unsigned char *to,
                          const rmx_sub_layout_t *L, const rmx_sub_layout_t *R, size_t disp)
{
    get_packs_t g;
    int rc = packs_open(&g, b->win, b->target, to);
    if (rc == RMX_OK)
        rc = packs_issue(&g, b, rem, L, R, disp);
    int rc2 = rc == RMX_OK ? packs_complete(&g) : RMX_OK, rc3 = batch_complete(b);
    packs_close(&g);
    return rc != RMX_OK ? rc : rc2 != RMX_OK ? rc2 : rc3;
}

/* A section's packed gets left in flight (rmx_iget_sub, engine/nb.c): the layouts its walks
 * point into live here. */
struct rmx_sub_getv {
    get_packs_t g;
    rmx_sub_layout_t L, R;
};

int rmx_sub_getv_start(rmx_win_t *win, void *dst, const rmx_sub_layout_t *L,
                       const rmx_sub_layout_t *R, int target, size_t disp, rmx_sub_getv_t **out)
{
    *out = NULL;
    rmx_ctx_t *ctx = win->ctx;
    if (rmx_am(ctx, target) == NULL || rmx_sub_longest_run(R) > PACK_RUN_MAX)
        return RMX_OK; /* not this way: the caller reads it now */
    rmx_sub_getv_t *v = malloc(sizeof(*v));
    if (v == NULL)
        return RMX_ERR_NOMEM;
    v->L = *L;
    v->R = *R;
    int rc = packs_open(&v->g, win, target, dst);
    if (rc == RMX_OK)
        rc = packs_issue(&v->g, NULL, &win->remote[target], &v->L, &v->R, disp);
    if (rc != RMX_OK) {
        rmx_sub_getv_free(v);
        return rc;
    }
    ctx->stats.gets++;
    *out = v;
    return RMX_OK;
}

int rmx_sub_getv_test(rmx_sub_getv_t *v)
{
    return packs_test(&v->g);
}

int rmx_sub_getv_wait(rmx_sub_getv_t *v)
{
    return packs_complete(&v->g);
}

void rmx_sub_getv_free(rmx_sub_getv_t *v)
{
    packs_close(&v->g);
    free(v);
}

int rmx_get_sub(rmx_win_t *win, void *dst, const rmx_sub_t *local, int target, size_t disp,
                const rmx_sub_t *remote)
{
    rmx_sub_layout_t L, R;
    int rc = check_sub_call(win, dst, local, target, disp, remote, &L, &R);
    if (rc != RMX_OK || L.nelem == 0)
        return RMX_MT_RETRY(rc, win->ctx, rmx_get_sub(win, dst, local, target, disp, remote));
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
    get_batch_t b = {.ctx = ctx, .win = win, .target = target, .ep = rmx_ep(ctx, target),
                     .am = rmx_am(ctx, target), .rkey = rem->rkey, .in_place = rem->ptr != NULL};
    if (b.am != NULL)
        return get_sub_packed(&b, rem, to, &L, &R, disp);
    rmx_sub_walk_t w;
    rmx_sub_walk_init(&w, &L, &R);
    stage_t st;
    st.heap = NULL;
    st.cap = 0;
    size_t roff, rlen;
    while (rc == RMX_OK && rmx_sub_walk_next_run(&w, &roff, &rlen))
        rc = get_run(&b, rem, to, &w, rlen, disp + roff, &st);
    int rc2 = batch_complete(&b);
    free(st.heap);
    return rc != RMX_OK ? rc : rc2;
}
