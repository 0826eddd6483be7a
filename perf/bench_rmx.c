/*
 * bench_rmx.c — the rmx side of every benchmark, on the public API (api/rmx.h) only.
 *
 * rmx_rmw, rmx_rmw2 and the subarray calls are referenced weakly: a build of the engine that
 * does not have them yet still links, and those rows print "n/a" (as they do when a call returns
 * an error).  rmx_perf links the engine's objects rather than the archive, so a definition that
 * exists is always the one bound.
 */
#include <string.h>
#include "perf.h"

#pragma weak rmx_rmw
#pragma weak rmx_rmw2
#pragma weak rmx_put_sub
#pragma weak rmx_get_sub

#define TRY(expr)                     \
    do {                              \
        int try_rc_ = (expr);         \
        if (try_rc_ != RMX_OK)        \
            return try_rc_;           \
    } while (0)

/* ---------------------------------------------------------------- put / get */
int bench_rmx_put_lat(perf_env_t *e, size_t len, long n)
{
    for (long i = 0; i < n; i++) {
        TRY(rmx_put(e->win, e->local, len, e->target, 0));
        TRY(rmx_sync_memory(e->ctx));
    }
    return RMX_OK;
}

int bench_rmx_put_bw(perf_env_t *e, size_t len, long n)
{
    long w = perf_bw_ops(e, len);
    size_t slot = perf_slot(len);
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < w; j++)
            TRY(rmx_put(e->win, e->local + (size_t)j * slot, len, e->target, (size_t)j * slot));
        TRY(rmx_sync_memory(e->ctx));
    }
    return RMX_OK;
}

int bench_rmx_put_rate(perf_env_t *e, size_t len, long n)
{
    long w = perf_rate_ops(e, len);
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < w; j++)
            TRY(rmx_put(e->win, e->local + (size_t)j * len, len, e->target,
                        e->disp0 + (size_t)j * len));
        /* a stream completes its own operations (the context's sync does not) */
        TRY(e->stream != NULL ? rmx_stream_flush(e->stream) : rmx_sync_memory(e->ctx));
    }
    return RMX_OK;
}

int bench_rmx_get_lat(perf_env_t *e, size_t len, long n)
{
    for (long i = 0; i < n; i++)
        TRY(rmx_get(e->win, e->local, len, e->target, 0));
    return RMX_OK;
}

int bench_rmx_get_bw(perf_env_t *e, size_t len, long n)
{
    long w = perf_bw_ops(e, len);
    size_t slot = perf_slot(len);
    for (long i = 0; i < n; i++)
        for (long j = 0; j < w; j++)
            TRY(rmx_get(e->win, e->local + (size_t)j * slot, len, e->target, (size_t)j * slot));
    return RMX_OK;
}

int bench_rmx_get_rate(perf_env_t *e, size_t len, long n)
{
    long w = perf_rate_ops(e, len);
    for (long i = 0; i < n; i++)
        for (long j = 0; j < w; j++)
            TRY(rmx_get(e->win, e->local + (size_t)j * len, len, e->target, (size_t)j * len));
    return RMX_OK;
}

/* ---------------------------------------------------------------- read-modify-write */
static size_t rmw_disp(const perf_env_t *e, int word)
{
    return e->data_len + PERF_CTRL_RMW + (size_t)word * sizeof(int64_t);
}

/* Which assert makes rmx_rmw a plain atomic (no lock): IMPLICIT|NOCHECK per DESIGN.md, else 0. */
int perf_rmw_probe(perf_env_t *e)
{
    static const int asserts[] = {RMX_MODE_PASSIVE_EPOCH_IMPLICIT | RMX_MODE_NOCHECK, 0};
    e->rmw_ok = 0;
    if (!rmx_rmw)
        return RMX_ERR_UNSUPPORTED;
    int rc = RMX_ERR_UNSUPPORTED;
    for (size_t i = 0; i < sizeof(asserts) / sizeof(asserts[0]); i++) {
        int64_t zero = 0, old = -1;
        rc = rmx_rmw(e->win, &zero, 1, RMX_INT64, &old, e->target, rmw_disp(e, 0), asserts[i],
                     RMX_OP_SUM);
        if (rc == RMX_OK) {
            e->rmw_assert = asserts[i];
            e->rmw_ok = 1;
            return RMX_OK;
        }
    }
    return rc;
}

int bench_rmx_fadd(perf_env_t *e, size_t len, long n)
{
    (void)len;
    if (!e->rmw_ok)
        return RMX_ERR_UNSUPPORTED;
    int64_t one = 1, old;
    /* --threads: a word of each thread's own (their latency, not their contention on one) */
    size_t disp = e->fadd_disp != 0 ? e->fadd_disp : rmw_disp(e, 0);
    for (long i = 0; i < n; i++)
        TRY(rmx_rmw(e->win, &one, 1, RMX_INT64, &old, e->target, disp, e->rmw_assert,
                    RMX_OP_SUM));
    return RMX_OK;
}

/* The floor under fadd: the CPU's own fetch-add (lock xadd on x86) on a word of this rank's
 * window, the same kind of memory as the target's mapped word, with no call to rmx or UCP.  What
 * a direct fetch-add costs beyond it is the call's. */
int bench_cpu_fadd(perf_env_t *e, size_t len, long n)
{
    (void)len;
    int64_t *word = (int64_t *)(void *)(e->base + rmw_disp(e, 0));
    volatile int64_t old;
    for (long i = 0; i < n; i++)
        old = __atomic_fetch_add(word, 1, __ATOMIC_SEQ_CST);
    (void)old;
    return RMX_OK;
}

int bench_rmx_swap(perf_env_t *e, size_t len, long n)
{
    (void)len;
    if (!e->rmw_ok)
        return RMX_ERR_UNSUPPORTED;
    int64_t old;
    for (long i = 0; i < n; i++) {
        int64_t v = i;
        TRY(rmx_rmw(e->win, &v, 1, RMX_INT64, &old, e->target, rmw_disp(e, 1), e->rmw_assert,
                    RMX_OP_SWAP));
    }
    return RMX_OK;
}

/* Every compare-swap succeeds: the origin is the only writer and knows the current value. */
int bench_rmx_cswap(perf_env_t *e, size_t len, long n)
{
    (void)len;
    if (!e->rmw_ok || !rmx_rmw2)
        return RMX_ERR_UNSUPPORTED;
    for (long i = 0; i < n; i++) {
        int64_t cmp = e->cas_expect, next = cmp + 1, old;
        TRY(rmx_rmw2(e->win, &cmp, 1, RMX_INT64, &next, &old, e->target, rmw_disp(e, 2),
                     e->rmw_assert, RMX_OP2_COMP_SWAP));
        e->cas_expect = old == cmp ? next : old;
    }
    return RMX_OK;
}

/* MAX has no UCP atomic: rmx emulates it (CAS loop).  The operand always raises the maximum,
 * so every call really updates the target. */
int bench_rmx_max(perf_env_t *e, size_t len, long n)
{
    (void)len;
    if (!e->rmw_ok)
        return RMX_ERR_UNSUPPORTED;
    int64_t old;
    for (long i = 0; i < n; i++) {
        int64_t v = ++e->max_next;
        TRY(rmx_rmw(e->win, &v, 1, RMX_INT64, &old, e->target, rmw_disp(e, 3), e->rmw_assert,
                    RMX_OP_MAX));
    }
    return RMX_OK;
}

/* ---------------------------------------------------------------- subarrays */
void perf_col_section(rmx_sub_t *s, size_t k)
{
    memset(s, 0, sizeof(*s));
    s->elem_size = sizeof(double);
    s->rank = 2;
    s->order = RMX_ORDER_C;
    s->dim[0] = (rmx_sub_dim_t){.extent = k, .first = 0, .count = k, .stride = 1};
    s->dim[1] = (rmx_sub_dim_t){.extent = PERF_SUB_WIDTH, .first = 1, .count = 1, .stride = 1};
}

void perf_row_section(rmx_sub_t *s, size_t k)
{
    memset(s, 0, sizeof(*s));
    s->elem_size = sizeof(double);
    s->rank = 2;
    s->order = RMX_ORDER_C;
    s->dim[0] = (rmx_sub_dim_t){.extent = PERF_SUB_WIDTH, .first = 1, .count = 1, .stride = 1};
    s->dim[1] = (rmx_sub_dim_t){.extent = k, .first = 0, .count = k, .stride = 1};
}

static int put_sub_loop(perf_env_t *e, const rmx_sub_t *s, long n)
{
    if (!rmx_put_sub)
        return RMX_ERR_UNSUPPORTED;
    for (long i = 0; i < n; i++) {
        TRY(rmx_put_sub(e->win, e->local, s, e->target, 0, s));
        TRY(rmx_sync_memory(e->ctx));
    }
    return RMX_OK;
}

static int get_sub_loop(perf_env_t *e, const rmx_sub_t *s, long n)
{
    if (!rmx_get_sub)
        return RMX_ERR_UNSUPPORTED;
    for (long i = 0; i < n; i++)
        TRY(rmx_get_sub(e->win, e->local, s, e->target, 0, s));
    return RMX_OK;
}

int bench_rmx_put_col(perf_env_t *e, size_t len, long n)
{
    rmx_sub_t s;
    perf_col_section(&s, perf_sub_elems(len));
    return put_sub_loop(e, &s, n);
}

int bench_rmx_put_row(perf_env_t *e, size_t len, long n)
{
    rmx_sub_t s;
    perf_row_section(&s, perf_sub_elems(len));
    return put_sub_loop(e, &s, n);
}

int bench_rmx_get_col(perf_env_t *e, size_t len, long n)
{
    rmx_sub_t s;
    perf_col_section(&s, perf_sub_elems(len));
    return get_sub_loop(e, &s, n);
}

int bench_rmx_get_row(perf_env_t *e, size_t len, long n)
{
    rmx_sub_t s;
    perf_row_section(&s, perf_sub_elems(len));
    return get_sub_loop(e, &s, n);
}

/* ---------------------------------------------------------------- synchronization */
int bench_rmx_sync(perf_env_t *e, size_t len, long n)
{
    (void)len;
    for (long i = 0; i < n; i++)
        TRY(rmx_sync_all(e->ctx));
    return RMX_OK;
}

/* ---------------------------------------------------------------- windows */
/* A window of len bytes created and freed: the collective cost of a window's life (MPI:
 * MPI_Win_allocate + MPI_Win_free, perf/mpi/osu_rma.c). */
int bench_rmx_win_create(perf_env_t *e, size_t len, long n)
{
    for (long i = 0; i < n; i++) {
        void *base;
        rmx_win_t *w;
        TRY(rmx_win_allocate(e->ctx, len, &base, &w));
        TRY(rmx_win_free(&w));
    }
    return RMX_OK;
}

/* Rank 0 puts *v into every rank's share slot; after sync_all everyone reads it.  The two slots
 * alternate so a fast rank 0 cannot overwrite a value a slow rank has not read yet. */
int perf_share_u64(perf_env_t *e, uint64_t *v)
{
    size_t disp = e->data_len + PERF_CTRL_SHARE + (e->share_seq++ & 1) * sizeof(uint64_t);
    if (e->me == 0)
        for (int r = 1; r < e->n; r++)
            TRY(rmx_put(e->win, v, sizeof(*v), r, disp));
    TRY(rmx_sync_all(e->ctx));
    if (e->me != 0)
        memcpy(v, e->base + disp, sizeof(*v));
    return RMX_OK;
}
