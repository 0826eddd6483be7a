/*
 * bench_ucp.c — the raw-UCP side of every benchmark: the same loop as bench_rmx.c written
 * directly on ucp_put_nbx / ucp_get_nbx / ucp_atomic_op_nbx / ucp_ep_flush_nbx, on the
 * endpoints, remote addresses, rkeys and buffers of the very window rmx uses (reached through
 * engine/internal.h).  It is what a careful user of UCP would write for the same guarantee:
 *   put    returns when the source is reusable; a flush of the target's endpoint completes it there
 *   get    returns when the data is in the destination
 *   atomic returns with the old value
 * so each row's difference is the cost of rmx's checks, tracker and call layers.  Request
 * parameters set only the fields their mask names (zeroing the whole struct costs more than an
 * 8-byte put over shared memory; rmx's transports/ucx.h does the same).
 */
#include <sched.h>
#include "perf.h"
#include "../engine/internal.h"

#define TRY(expr)                     \
    do {                              \
        int try_rc_ = (expr);         \
        if (try_rc_ != RMX_OK)        \
            return try_rc_;           \
    } while (0)

#define WAIT_TIMEOUT_S 10.0

/* Progress until the request completes (yielding now and then: 2 cores, other processes). */
static inline int wait_req(ucp_worker_h w, ucs_status_ptr_t req)
{
    if (req == NULL)
        return RMX_OK;
    if (UCS_PTR_IS_ERR(req))
        return RMX_ERR_TRANSPORT;
    ucs_status_t st;
    unsigned idle = 0;
    double deadline = 0;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        if (ucp_worker_progress(w) != 0)
            continue;
        if ((++idle & 1023) == 0) {
            double t = rmx_now_s();
            if (deadline == 0)
                deadline = t + WAIT_TIMEOUT_S;
            else if (t > deadline) {
                ucp_request_free(req);
                return RMX_ERR_TIMEOUT;
            }
            sched_yield();
        }
    }
    ucp_request_free(req);
    return st == UCS_OK ? RMX_OK : RMX_ERR_TRANSPORT;
}

typedef struct {
    ucp_worker_h worker;
    ucp_ep_h ep;
    uint64_t raddr;
    ucp_rkey_h rkey;
} target_t;

static inline target_t target_of(const perf_env_t *e)
{
    rmx_ctx_t *ctx = e->ctx;
    return (target_t){
        .worker = ctx->ucx.worker,
        .ep = ctx->peers[e->target].ep,
        .raddr = e->win->remote[e->target].addr,
        .rkey = e->win->remote[e->target].rkey,
    };
}

static inline int put(const target_t *t, const void *src, size_t len, size_t disp)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = 0; /* UCP reads only the fields the mask names */
    return wait_req(t->worker, ucp_put_nbx(t->ep, src, len, t->raddr + disp, t->rkey, &prm));
}

static inline int get(const target_t *t, void *dst, size_t len, size_t disp)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = 0; /* UCP reads only the fields the mask names */
    return wait_req(t->worker, ucp_get_nbx(t->ep, dst, len, t->raddr + disp, t->rkey, &prm));
}

/* A get whose completion is left to the next flush (the request goes back to UCP at once). */
static inline int get_nowait(const target_t *t, void *dst, size_t len, size_t disp)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = 0; /* UCP reads only the fields the mask names */
    ucs_status_ptr_t req = ucp_get_nbx(t->ep, dst, len, t->raddr + disp, t->rkey, &prm);
    if (UCS_PTR_IS_ERR(req))
        return RMX_ERR_TRANSPORT;
    if (req != NULL)
        ucp_request_free(req);
    return RMX_OK;
}

static inline int flush(const target_t *t)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = 0; /* UCP reads only the fields the mask names */
    return wait_req(t->worker, ucp_ep_flush_nbx(t->ep, &prm));
}

static inline int amo(const target_t *t, ucp_atomic_op_t op, const void *operand, void *reply,
                      size_t disp)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    prm.datatype = ucp_dt_make_contig(sizeof(int64_t));
    prm.reply_buffer = reply;
    return wait_req(t->worker, ucp_atomic_op_nbx(t->ep, op, operand, 1, t->raddr + disp, t->rkey,
                                                 &prm));
}

/* ---------------------------------------------------------------- put / get */
int bench_ucp_put_lat(perf_env_t *e, size_t len, long n)
{
    target_t t = target_of(e);
    for (long i = 0; i < n; i++) {
        TRY(put(&t, e->local, len, 0));
        TRY(flush(&t));
    }
    return RMX_OK;
}

int bench_ucp_put_bw(perf_env_t *e, size_t len, long n)
{
    target_t t = target_of(e);
    long w = perf_bw_ops(e, len);
    size_t slot = perf_slot(len);
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < w; j++)
            TRY(put(&t, e->local + (size_t)j * slot, len, (size_t)j * slot));
        TRY(flush(&t));
    }
    return RMX_OK;
}

int bench_ucp_put_rate(perf_env_t *e, size_t len, long n)
{
    target_t t = target_of(e);
    long w = perf_rate_ops(e, len);
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < w; j++)
            TRY(put(&t, e->local + (size_t)j * len, len, (size_t)j * len));
        TRY(flush(&t));
    }
    return RMX_OK;
}

int bench_ucp_get_lat(perf_env_t *e, size_t len, long n)
{
    target_t t = target_of(e);
    for (long i = 0; i < n; i++)
        TRY(get(&t, e->local, len, 0));
    return RMX_OK;
}

int bench_ucp_get_bw(perf_env_t *e, size_t len, long n)
{
    target_t t = target_of(e);
    long w = perf_bw_ops(e, len);
    size_t slot = perf_slot(len);
    for (long i = 0; i < n; i++)
        for (long j = 0; j < w; j++)
            TRY(get(&t, e->local + (size_t)j * slot, len, (size_t)j * slot));
    return RMX_OK;
}

int bench_ucp_get_rate(perf_env_t *e, size_t len, long n)
{
    target_t t = target_of(e);
    long w = perf_rate_ops(e, len);
    for (long i = 0; i < n; i++)
        for (long j = 0; j < w; j++)
            TRY(get(&t, e->local + (size_t)j * len, len, (size_t)j * len));
    return RMX_OK;
}

/* ---------------------------------------------------------------- atomics */
static size_t rmw_disp(const perf_env_t *e, int word)
{
    return e->data_len + PERF_CTRL_RMW + (size_t)word * sizeof(int64_t);
}

int bench_ucp_fadd(perf_env_t *e, size_t len, long n)
{
    (void)len;
    target_t t = target_of(e);
    int64_t one = 1, old;
    for (long i = 0; i < n; i++)
        TRY(amo(&t, UCP_ATOMIC_OP_ADD, &one, &old, rmw_disp(e, 0)));
    return RMX_OK;
}

/* The floor under a library's fetch-add on UCP's route (fadd_call): raw UCP's, behind an
 * out-of-line call shaped like rmx_rmw (its nine arguments; the endpoint, rkey and address
 * looked up by target, as any library finds them) that checks nothing at all.  Measured beside
 * the inline loop above, it is what the call itself adds, whatever the library does in it. */
static __attribute__((noinline)) int fadd_call(const perf_env_t *e, const void *operand,
                                               int count, rmx_dtype_t dt, void *result,
                                               int target, size_t disp, int assert,
                                               rmx_rmw_op_t op)
{
    (void)count, (void)dt, (void)assert, (void)op;
    const rmx_ctx_t *ctx = e->ctx;
    const rmx_remote_t *rem = &e->win->remote[target];
    target_t t = {ctx->ucx.worker, ctx->peers[target].ep, rem->addr, rem->rkey};
    return amo(&t, UCP_ATOMIC_OP_ADD, operand, result, disp);
}

int bench_ucp_fadd_call(perf_env_t *e, size_t len, long n)
{
    (void)len;
    int64_t one = 1, old;
    size_t disp = rmw_disp(e, 0);
    for (long i = 0; i < n; i++)
        TRY(fadd_call(e, &one, 1, RMX_INT64, &old, e->target, disp, 0, RMX_OP_SUM));
    return RMX_OK;
}

int bench_ucp_swap(perf_env_t *e, size_t len, long n)
{
    (void)len;
    target_t t = target_of(e);
    int64_t old;
    for (long i = 0; i < n; i++) {
        int64_t v = i;
        TRY(amo(&t, UCP_ATOMIC_OP_SWAP, &v, &old, rmw_disp(e, 1)));
    }
    return RMX_OK;
}

/* UCP CSWAP: the operand is the comparand, the reply buffer carries the new value in and the
 * old value out. */
int bench_ucp_cswap(perf_env_t *e, size_t len, long n)
{
    (void)len;
    target_t t = target_of(e);
    for (long i = 0; i < n; i++) {
        int64_t cmp = e->cas_expect, inout = cmp + 1;
        TRY(amo(&t, UCP_ATOMIC_OP_CSWAP, &cmp, &inout, rmw_disp(e, 2)));
        e->cas_expect = inout == cmp ? cmp + 1 : inout;
    }
    return RMX_OK;
}

/* What one writes by hand for MAX on UCP: fetch the word, then CSWAP until it sticks. */
int bench_ucp_max(perf_env_t *e, size_t len, long n)
{
    (void)len;
    target_t t = target_of(e);
    size_t disp = rmw_disp(e, 3);
    for (long i = 0; i < n; i++) {
        int64_t v = ++e->max_next, zero = 0, cur;
        TRY(amo(&t, UCP_ATOMIC_OP_ADD, &zero, &cur, disp));
        while (cur < v) {
            int64_t cmp = cur, inout = v;
            TRY(amo(&t, UCP_ATOMIC_OP_CSWAP, &cmp, &inout, disp));
            if (inout == cmp)
                break;
            cur = inout;
        }
    }
    return RMX_OK;
}

/* ---------------------------------------------------------------- subarrays */
/* Column: one 8-byte put per remote run, straight from the local element (UCP takes any
 * address), one flush for the section. */
int bench_ucp_put_col(perf_env_t *e, size_t len, long n)
{
    target_t t = target_of(e);
    size_t k = perf_sub_elems(len);
    for (long i = 0; i < n; i++) {
        for (size_t r = 0; r < k; r++)
            TRY(put(&t, e->local + perf_col_offset(r), sizeof(double), perf_col_offset(r)));
        TRY(flush(&t));
    }
    return RMX_OK;
}

int bench_ucp_put_row(perf_env_t *e, size_t len, long n)
{
    target_t t = target_of(e);
    size_t off = perf_row_offset(perf_sub_elems(len));
    for (long i = 0; i < n; i++) {
        TRY(put(&t, e->local + off, len, off));
        TRY(flush(&t));
    }
    return RMX_OK;
}

int bench_ucp_get_col(perf_env_t *e, size_t len, long n)
{
    target_t t = target_of(e);
    size_t k = perf_sub_elems(len);
    for (long i = 0; i < n; i++) {
        for (size_t r = 0; r < k; r++)
            TRY(get_nowait(&t, e->local + perf_col_offset(r), sizeof(double), perf_col_offset(r)));
        TRY(flush(&t));
    }
    return RMX_OK;
}

int bench_ucp_get_row(perf_env_t *e, size_t len, long n)
{
    target_t t = target_of(e);
    size_t off = perf_row_offset(perf_sub_elems(len));
    for (long i = 0; i < n; i++)
        TRY(get(&t, e->local + off, len, off));
    return RMX_OK;
}

/* ---------------------------------------------------------------- barrier */
/* rmx's barrier algorithm (dissemination, remote atomic increments of monotonic counters) on
 * raw UCP, with counters in the benchmark window's control area. */
int bench_ucp_sync(perf_env_t *e, size_t len, long n)
{
    (void)len;
    rmx_ctx_t *ctx = e->ctx;
    ucp_worker_h w = ctx->ucx.worker;
    for (long i = 0; i < n; i++) {
        uint64_t epoch = ++e->ucp_epoch;
        for (int k = 0, dist = 1; dist < e->n; k++, dist <<= 1) {
            int to = (e->me + dist) % e->n;
            size_t off = e->data_len + PERF_CTRL_BARRIER + (size_t)k * sizeof(uint64_t);
            uint64_t one = 1;
            ucp_request_param_t prm;
            prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
            prm.datatype = ucp_dt_make_contig(sizeof(uint64_t));
            TRY(wait_req(w, ucp_atomic_op_nbx(ctx->peers[to].ep, UCP_ATOMIC_OP_ADD, &one, 1,
                                              e->win->remote[to].addr + off,
                                              e->win->remote[to].rkey, &prm)));
            volatile uint64_t *word = (volatile uint64_t *)(void *)(e->base + off);
            unsigned idle = 0;
            while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < epoch) {
                if (ucp_worker_progress(w) != 0 || (++idle & 255) != 0)
                    continue;
                if (ctx->peers[(e->me + e->n - dist) % e->n].failed)
                    return RMX_ERR_PEER;
                sched_yield();
            }
        }
    }
    return RMX_OK;
}
