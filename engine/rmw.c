/*
 * rmw.c — read-modify-write (rmx_rmw, rmx_rmw2): the MPI-3 "MPI_Rmw / MPI_Rmw2" proposal on UCP.
 *
 * Each of the `count` elements is one atomic operation on its own.  An element goes to a native
 * UCP atomic when the op and datatype fit one exactly; everything else is a compare-and-swap loop
 * on the target word (read it atomically, compute the new bits locally, CSWAP old->new, retry with
 * the value the CSWAP saw).  The loop only ever changes memory through CSWAP, so it is atomic
 * against native atomics from other ranks on the same word.
 *
 *   native                                          emulated (CSWAP loop)
 *   INC, SUM on integers             -> ADD         INC, SUM on float/double
 *   BAND/BOR/BXOR, no fetch          -> AND/OR/XOR  BAND/BOR/BXOR with fetch (see below)
 *   SWAP on every type               -> SWAP        PROD, LAND, LOR, LXOR, MIN, MAX
 *   NO_OP on every type              -> ADD 0       MASK_SWAP, COMP_SWAP_GT/GE/LT/LE/NE
 *   COMP_SWAP on integers            -> CSWAP       COMP_SWAP on float/double
 *
 * Why fetching bitwise ops are emulated: UCX 1.13's shared-memory transports (self, sysv, posix)
 * return the right old value for fetching AND/OR/XOR but store a wrong one (DESIGN.md).  ADD,
 * SWAP, CSWAP and the non-fetching bitwise ops are correct there.
 *
 * Floating point compares by value with the C operators, never by bit pattern: COMP_SWAP swaps
 * when `target == comparand` as doubles, so -0.0 matches +0.0, and a NaN target matches nothing
 * (but satisfies NE).  MIN/MAX replace the target only when the operand compares strictly
 * less/greater, so a NaN on either side leaves the target as it is, and -0.0 vs +0.0 keeps the
 * target.  The CSWAP itself is on the exact bits observed, so a concurrent change between two
 * bit patterns of equal value (-0.0 -> +0.0) is still detected and retried.
 *
 * Epochs: RMX_MODE_PASSIVE_EPOCH_IMPLICIT wraps the call in rmx_win_lock(EXCLUSIVE) /
 * rmx_win_unlock, image control included; with RMX_MODE_NOCHECK no lock is taken.  Either form
 * inside an explicit epoch of this rank on the same target is a nested epoch: RMX_ERR_EPOCH.
 * Without an assert the call is simply atomic.  NO_OP with a NULL result sends nothing.
 *
 * Completion: a fetching atomic is complete at the target when it returns (the reply came back).
 * A non-fetching one is only locally complete, so one endpoint flush per call finishes them:
 * a later get or atomic from this rank then sees the update whatever lanes UCP picks.  A CPU
 * atomic on a mapped target (rmx_direct_t, rmx_remote_amo) is complete when done.
 */
#include "internal.h"
#include "tracker.h"

typedef struct dtype_info {
    uint8_t size;     /* 4 or 8 */
    uint8_t is_float;
    uint8_t is_signed;
} dtype_info_t;

static const dtype_info_t dtypes[RMX_DTYPE_COUNT] = {
    [RMX_INT32] = {4, 0, 1},  [RMX_INT64] = {8, 0, 1}, [RMX_UINT32] = {4, 0, 0},
    [RMX_UINT64] = {8, 0, 0}, [RMX_FLOAT] = {4, 1, 1}, [RMX_DOUBLE] = {8, 1, 1},
};

/* ---------------------------------------------------------------- element values as bits */
/* An element travels as its bit pattern in the low `size` bytes of a uint64_t. */

static inline uint64_t elem_load(const void *buf, int i, size_t size)
{
    return rmx_bits_load((const char *)buf + (size_t)i * size, size);
}

static inline void elem_store(void *buf, int i, size_t size, uint64_t bits)
{
    rmx_bits_store((char *)buf + (size_t)i * size, size, bits);
}

static inline uint64_t size_mask(size_t size)
{
    return size == 4 ? UINT64_C(0xffffffff) : UINT64_MAX;
}

static inline double as_double(rmx_dtype_t dt, uint64_t bits)
{
    if (dt == RMX_FLOAT) {
        float f;
        uint32_t b = (uint32_t)bits;
        memcpy(&f, &b, 4);
        return f;
    }
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

static inline uint64_t from_double(rmx_dtype_t dt, double v)
{
    if (dt == RMX_FLOAT) {
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, 4);
        return b;
    }
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

/* Signed view of an integer element (sign-extends int32). */
static inline int64_t as_signed(rmx_dtype_t dt, uint64_t bits)
{
    return dt == RMX_INT32 ? (int64_t)(int32_t)(uint32_t)bits : (int64_t)bits;
}

/* -1, 0, 1 for a < b, a == b, a > b; 2 when unordered (a NaN). */
static int compare(rmx_dtype_t dt, uint64_t a, uint64_t b)
{
    const dtype_info_t *d = &dtypes[dt];
    if (d->is_float) {
        double x = as_double(dt, a), y = as_double(dt, b);
        return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
    }
    if (d->is_signed) {
        int64_t x = as_signed(dt, a), y = as_signed(dt, b);
        return x < y ? -1 : x > y;
    }
    return a < b ? -1 : a > b;
}

/* Sum / product: integers wrap modulo 2^bits (two's complement, so signedness does not matter
 * and no signed overflow happens in C); floats round in their own precision. */
static uint64_t add(rmx_dtype_t dt, uint64_t a, uint64_t b)
{
    if (dtypes[dt].is_float)
        return dt == RMX_FLOAT ? from_double(dt, (float)as_double(dt, a) + (float)as_double(dt, b))
                               : from_double(dt, as_double(dt, a) + as_double(dt, b));
    return (a + b) & size_mask(dtypes[dt].size);
}

static uint64_t mul(rmx_dtype_t dt, uint64_t a, uint64_t b)
{
    if (dtypes[dt].is_float)
        return dt == RMX_FLOAT ? from_double(dt, (float)as_double(dt, a) * (float)as_double(dt, b))
                               : from_double(dt, as_double(dt, a) * as_double(dt, b));
    return (a * b) & size_mask(dtypes[dt].size);
}

static uint64_t one(rmx_dtype_t dt)
{
    return dtypes[dt].is_float ? from_double(dt, 1.0) : 1;
}

/* ---------------------------------------------------------------- what each op computes */
/* The new target bits for old target bits `t`; *write 0 when the op leaves the target alone
 * (a false predicate, or MIN/MAX with nothing to change). */

static uint64_t rmw_new_value(rmx_rmw_op_t op, rmx_dtype_t dt, uint64_t t, uint64_t a, int *write)
{
    *write = 1;
    switch (op) {
    case RMX_OP_INC:   return add(dt, t, one(dt));
    case RMX_OP_PROD:  return mul(dt, t, a);
    case RMX_OP_SUM:   return add(dt, t, a);
    case RMX_OP_LAND:  return (t != 0) && (a != 0);
    case RMX_OP_LOR:   return (t != 0) || (a != 0);
    case RMX_OP_LXOR:  return (t != 0) != (a != 0);
    case RMX_OP_BAND:  return t & a;
    case RMX_OP_BOR:   return t | a;
    case RMX_OP_BXOR:  return t ^ a;
    case RMX_OP_SWAP:  return a;
    case RMX_OP_MIN:   *write = compare(dt, a, t) == -1; return a;
    case RMX_OP_MAX:   *write = compare(dt, a, t) == 1;  return a;
    case RMX_OP_NO_OP: *write = 0; return t;
    default:           *write = 0; return t;
    }
}

static int predicate(rmx_rmw2_op_t op, int c)
{
    switch (op) {
    case RMX_OP2_COMP_SWAP:    return c == 0;
    case RMX_OP2_COMP_SWAP_GT: return c == 1;
    case RMX_OP2_COMP_SWAP_GE: return c == 1 || c == 0;
    case RMX_OP2_COMP_SWAP_LT: return c == -1;
    case RMX_OP2_COMP_SWAP_LE: return c == -1 || c == 0;
    case RMX_OP2_COMP_SWAP_NE: return c != 0;
    default:                   return 0;
    }
}

static uint64_t rmw2_new_value(rmx_rmw2_op_t op, rmx_dtype_t dt, uint64_t t, uint64_t a,
                               uint64_t b, int *write)
{
    if (op == RMX_OP2_MASK_SWAP) {
        *write = 1;
        return (t & ~a) | (b & a);
    }
    *write = predicate(op, compare(dt, t, a));
    return b;
}

/* ---------------------------------------------------------------- validation */

static inline int op_defined_for(rmx_rmw_op_t op, rmx_dtype_t dt)
{
    if (!dtypes[dt].is_float)
        return 1;
    switch (op) {
    case RMX_OP_LAND: case RMX_OP_LOR: case RMX_OP_LXOR:
    case RMX_OP_BAND: case RMX_OP_BOR: case RMX_OP_BXOR:
        return 0;
    default:
        return 1;
    }
}

static inline int operand_needed(rmx_rmw_op_t op)
{
    return op != RMX_OP_INC && op != RMX_OP_NO_OP;
}

/* The per-call layers (checks, site, one element) are forced inline: out of line they cost as
 * many instructions as the UCP atomic itself (callgrind, perf/rmx_perf --test fadd). */
#define RMW_INLINE static inline __attribute__((always_inline))

/* Window, assert, target, range and alignment: what both entry points check. */
RMW_INLINE int check_access(rmx_win_t *win, int count, rmx_dtype_t dt, int target, size_t disp,
                        int assert)
{
    if (assert & ~(RMX_MODE_PASSIVE_EPOCH_IMPLICIT | RMX_MODE_NOCHECK))
        return RMX_ERR_ARG;
    if (count < 0)
        return RMX_ERR_ARG;
    size_t size = dtypes[dt].size;
    int rc = rmx_check_target(win, target, disp, (size_t)count * size);
    if (rc != RMX_OK)
        return rc;
    /* size is 4 or 8: a mask, not two divisions on every call */
    if (((disp | (win->remote[target].addr + disp)) & (size - 1)) != 0)
        return RMX_ERR_ALIGN;
    /* Nested epochs are not allowed: an implicit one inside an explicit one on this target. */
    /* (a bound handle has no lock state: its window's lock_epoch checks the same, lock.c) */
    if ((assert & RMX_MODE_PASSIVE_EPOCH_IMPLICIT) && win->lock_held != NULL &&
        win->lock_held[target] &&
        !(win->lock_held[target] & (RMX_HELD_IMPLICIT | RMX_HELD_UNSETTLED))) /* another
                                       * thread's: waited for; a timed-out one's: settled */
        return RMX_ERR_EPOCH;
    return RMX_OK;
}

RMW_INLINE int check_rmw(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt, int target,
                     size_t disp, int assert, rmx_rmw_op_t op)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return rc;
    if ((int)op < 0 || op >= RMX_OP_COUNT)
        return RMX_ERR_OP;
    if ((int)dt < 0 || dt >= RMX_DTYPE_COUNT || !op_defined_for(op, dt))
        return RMX_ERR_DATATYPE;
    if (operand == NULL && operand_needed(op) && count > 0)
        return RMX_ERR_ARG;
    return check_access(win, count, dt, target, disp, assert);
}

RMW_INLINE int check_rmw2(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt,
                      const void *operand2, int target, size_t disp, int assert, rmx_rmw2_op_t op)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return rc;
    if ((int)op < 0 || op >= RMX_OP2_COUNT)
        return RMX_ERR_OP;
    if ((int)dt < 0 || dt >= RMX_DTYPE_COUNT || (op == RMX_OP2_MASK_SWAP && dtypes[dt].is_float))
        return RMX_ERR_DATATYPE;
    if ((operand == NULL || operand2 == NULL) && count > 0)
        return RMX_ERR_ARG;
    return check_access(win, count, dt, target, disp, assert);
}

/* ---------------------------------------------------------------- one element on the wire */

typedef struct rmw_site {
    rmx_ctx_t *ctx;
    const rmx_remote_t *remote; /* the target's part of the window */
    int target;
    size_t disp;      /* of element 0 */
    rmx_dtype_t dt;
    size_t size;
    int unflushed;    /* non-fetching atomics issued, not yet complete at the target */
    int direct;       /* CPU atomics on the mapped target: complete when done */
} rmw_site_t;

/* One native atomic on the element of `size` (4 or 8) bytes at disp, its bits in the low bytes
 * of a uint64_t (rmx_remote_amo: a CPU atomic where the target is mapped, else UCP's).  reply
 * NULL: no fetch.  CSWAP: *reply is the new value in, the old value out. */
RMW_INLINE int elem_amo_sized(rmx_ctx_t *ctx, const rmx_remote_t *remote, int target,
                              ucp_atomic_op_t op, uint64_t value, uint64_t *reply, size_t size,
                              size_t disp)
{
    if (size == 8)
        return rmx_remote_amo(ctx, remote, target, op, &value, reply, 8, disp);
    uint32_t v = (uint32_t)value, r = reply ? (uint32_t)*reply : 0;
    int rc = rmx_remote_amo(ctx, remote, target, op, &v, reply ? &r : NULL, 4, disp);
    if (reply)
        *reply = r;
    return rc;
}

/* The UCP route out of line: its request parameters and call sequence would otherwise widen the
 * frame of every caller, CPU atomics included (they cost that path more instructions than the
 * atomic itself). */
static __attribute__((noinline)) int elem_amo_ucp(rmx_ctx_t *ctx, const rmx_remote_t *remote,
                                                  int target, ucp_atomic_op_t op,
                                                  uint64_t value, uint64_t *reply, size_t size,
                                                  size_t disp)
{
    return elem_amo_sized(ctx, remote, target, op, value, reply, size, disp);
}

/* elem_amo_sized, a CPU atomic inline and a UCP one out of line. */
RMW_INLINE int elem_amo(rmx_ctx_t *ctx, const rmx_remote_t *remote, int target,
                        ucp_atomic_op_t op, uint64_t value, uint64_t *reply, size_t size,
                        size_t disp)
{
    if (!rmx_remote_amo_direct(ctx, remote))
        return elem_amo_ucp(ctx, remote, target, op, value, reply, size, disp);
    return elem_amo_sized(ctx, remote, target, op, value, reply, size, disp);
}

/* The same on element i of a call's site. */
RMW_INLINE int amo(rmw_site_t *s, int i, ucp_atomic_op_t op, uint64_t value, uint64_t *reply)
{
    int rc = elem_amo(s->ctx, s->remote, s->target, op, value, reply, s->size,
                      s->disp + (size_t)i * s->size);
    if (reply == NULL && !s->direct)
        s->unflushed = 1;
    return rc;
}

static inline int atomic_read(rmw_site_t *s, int i, uint64_t *out)
{
    *out = 0;
    return amo(s, i, UCP_ATOMIC_OP_ADD, 0, out);
}

/* CSWAP loop: the general form of every emulated op.  new_value(old) -> (bits, write). */
typedef uint64_t (*new_value_fn)(const void *how, rmx_dtype_t dt, uint64_t old, int *write);

static int cas_loop(rmw_site_t *s, int i, new_value_fn f, const void *how, uint64_t *old_out)
{
    uint64_t old;
    int rc = atomic_read(s, i, &old);
    while (rc == RMX_OK) {
        int write;
        uint64_t want = f(how, s->dt, old, &write) & size_mask(s->size);
        if (!write)
            break; /* the read was atomic: leaving the target alone is the op at that instant */
        uint64_t seen = want;
        if ((rc = amo(s, i, UCP_ATOMIC_OP_CSWAP, old, &seen)) != RMX_OK)
            break;
        if (seen == old)
            break;
        s->ctx->stats.cas_retries++;
        old = seen;
    }
    *old_out = old;
    return rc;
}

typedef struct rmw_how { rmx_rmw_op_t op; uint64_t a; } rmw_how_t;
typedef struct rmw2_how { rmx_rmw2_op_t op; uint64_t a, b; } rmw2_how_t;

static uint64_t rmw_fn(const void *how, rmx_dtype_t dt, uint64_t old, int *write)
{
    const rmw_how_t *h = how;
    return rmw_new_value(h->op, dt, old, h->a, write);
}

static uint64_t rmw2_fn(const void *how, rmx_dtype_t dt, uint64_t old, int *write)
{
    const rmw2_how_t *h = how;
    return rmw2_new_value(h->op, dt, old, h->a, h->b, write);
}

/* The native atomic that does exactly (op, dt, fetch), if there is one. */
RMW_INLINE int rmw_native(rmx_rmw_op_t op, rmx_dtype_t dt, int fetch, uint64_t a,
                      ucp_atomic_op_t *uop, uint64_t *value)
{
    int integer = !dtypes[dt].is_float;
    *value = a;
    switch (op) {
    case RMX_OP_INC:   *uop = UCP_ATOMIC_OP_ADD; *value = 1; return integer;
    case RMX_OP_SUM:   *uop = UCP_ATOMIC_OP_ADD; return integer;
    case RMX_OP_BAND:  *uop = UCP_ATOMIC_OP_AND; return integer && !fetch;
    case RMX_OP_BOR:   *uop = UCP_ATOMIC_OP_OR;  return integer && !fetch;
    case RMX_OP_BXOR:  *uop = UCP_ATOMIC_OP_XOR; return integer && !fetch;
    case RMX_OP_SWAP:  *uop = UCP_ATOMIC_OP_SWAP; return 1;  /* bits are bits */
    case RMX_OP_NO_OP: *uop = UCP_ATOMIC_OP_ADD; *value = 0; return 1;
    default:           return 0;
    }
}

RMW_INLINE int rmw_element(rmw_site_t *s, int i, rmx_rmw_op_t op, uint64_t a, uint64_t *old, int fetch)
{
    ucp_atomic_op_t uop;
    uint64_t value;
    if (op == RMX_OP_NO_OP && !fetch)
        return RMX_OK; /* nothing to read, nothing to change */
    if (!rmw_native(op, s->dt, fetch, a, &uop, &value)) {
        rmw_how_t how = {op, a};
        return cas_loop(s, i, rmw_fn, &how, old);
    }
    /* SWAP has no non-fetching form in UCP */
    if (!fetch && uop != UCP_ATOMIC_OP_SWAP)
        return amo(s, i, uop, value, NULL);
    *old = 0;
    return amo(s, i, uop, value, old);
}

static int rmw2_element(rmw_site_t *s, int i, rmx_rmw2_op_t op, uint64_t a, uint64_t b,
                        uint64_t *old)
{
    if (op == RMX_OP2_COMP_SWAP && !dtypes[s->dt].is_float) {
        *old = b;
        return amo(s, i, UCP_ATOMIC_OP_CSWAP, a, old);
    }
    rmw2_how_t how = {op, a, b};
    return cas_loop(s, i, rmw2_fn, &how, old);
}

/* ---------------------------------------------------------------- entry points */

RMW_INLINE int site_open(rmw_site_t *s, rmx_win_t *win, rmx_dtype_t dt, int count, int target,
                     size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    *s = (rmw_site_t){.ctx = ctx, .remote = &win->remote[target], .target = target,
                      .disp = disp, .dt = dt, .size = dtypes[dt].size,
                      .direct = rmx_remote_amo_direct(ctx, &win->remote[target])};
    ctx->stats.atomics++;
    /* An atomic on bytes an earlier put of this segment wrote must see that put; on bytes an
     * outstanding nonblocking get reads, it waits for that get (engine/nb.c). */
    return rmx_tracker_update_access(win, target, disp, (size_t)count * s->size);
}

/* Non-fetching atomics issued to target are complete there once this returns. */
static int flush_target_of(rmx_ctx_t *ctx, int target)
{
    ctx->stats.flushes_ep++;
    return rmx_ucx_flush_ep(&ctx->ucx, rmx_ep(ctx, target), rmx_am(ctx, target));
}

RMW_INLINE int site_close(rmw_site_t *s, int rc)
{
    if (s->unflushed) {
        int rc2 = flush_target_of(s->ctx, s->target);
        rc = rc != RMX_OK ? rc : rc2;
    }
    return rc;
}

/* An implicit epoch without NOCHECK: the call is wrapped in the target's exclusive lock. */
static inline int takes_lock(int assert)
{
    return (assert & RMX_MODE_PASSIVE_EPOCH_IMPLICIT) && !(assert & RMX_MODE_NOCHECK);
}

static int epoch_begin(rmx_win_t *win, int target, int assert)
{
    if (takes_lock(assert))
        return rmx_win_lock_implicit(win, target);
    return RMX_OK;
}

static int epoch_end(rmx_win_t *win, int target, int assert, int rc)
{
    if (takes_lock(assert)) {
        int rc2 = rmx_win_unlock_implicit(win, target);
        rc = rc != RMX_OK ? rc : rc2;
    }
    return rc;
}

RMW_INLINE int rmw_elements(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt,
                        void *result, int target, size_t disp, rmx_rmw_op_t op)
{
    rmw_site_t s;
    int rc = site_open(&s, win, dt, count, target, disp);
    for (int i = 0; i < count && rc == RMX_OK; i++) {
        uint64_t a = operand_needed(op) ? elem_load(operand, i, s.size) : 0, old = 0;
        rc = rmw_element(&s, i, op, a, &old, result != NULL);
        if (rc == RMX_OK && result != NULL)
            elem_store(result, i, s.size, old);
    }
    return site_close(&s, rc);
}

/* ---------------------------------------------------------------- one element, fast */
/* The commonest call by far: one element, an op the transport does natively, no lock to take
 * (a counter, a ticket, a flag, a CAS), on a healthy window and target.  It is recognised
 * before the checks of the general path, from the few facts that make it so; anything else,
 * every error included, goes to the checked path (rmw_checked), which reports it.  Through the
 * checked path's layers the call cost ~200 instructions around a CPU atomic (callgrind), as many
 * as UCP's whole fetch-add; most were checks that this path makes as a handful of tests.
 *
 * Its checks call nothing (rmx_win_ready), and on a target mapped here (CPU atomics) the
 * commonest calls take a route of their own (the direct route below): fetch-add at 0.62x raw
 * UCP, 0.73x before.  The entry point makes only that route; the rest is tail-called with the
 * site found (rmw_after_direct: the UCP route, then the general fast path).  A first such split
 * checked the site again there and cost UCP's route 1.5-4 ns (DESIGN.md); handed the site, it
 * saves UCP's route 1.5-3 ns, and the direct route's frame lost a saved register. */
#define RMW_NOT_FAST 1

/* The element's part of the window when the call can take a fast route, else NULL: window and
 * context ready for this thread, a plain or NOCHECK assert (no lock), target in range and not
 * failed, [disp, disp+size) inside its part and aligned, no epoch of this rank held there (the
 * checked path tells a nested epoch from another thread's implicit one). */
RMW_INLINE const rmx_remote_t *fast_site(rmx_win_t *win, int count, rmx_dtype_t dt, int target,
                                         size_t disp, int assert)
{
    if (count != 1 || (unsigned)dt >= RMX_DTYPE_COUNT || (unsigned)assert > 3 ||
        assert == RMX_MODE_PASSIVE_EPOCH_IMPLICIT || !rmx_win_ready(win))
        return NULL;
    const rmx_ctx_t *ctx = win->ctx;
    if ((unsigned)target >= (unsigned)ctx->size || ctx->peers[target].failed)
        return NULL;
    const rmx_remote_t *rem = &win->remote[target];
    /* the commonest types' size a constant: no table load, the alignment mask folded */
    size_t size = dt == RMX_INT64 || dt == RMX_UINT64 ? 8 : dtypes[dt].size;
    if (rem->size < size || disp > rem->size - size || ((disp | rem->addr) & (size - 1)) != 0)
        return NULL;
    if (assert != 0 && win->lock_held != NULL && win->lock_held[target] != 0)
        return NULL;
    return rem;
}

/* Whether a fast call to rem may take the direct route: a CPU atomic that needs no call around
 * it (the progress tick not due: the general fast path makes that call). */
RMW_INLINE int fast_direct(rmx_ctx_t *ctx, const rmx_remote_t *rem)
{
    return rmx_remote_amo_direct(ctx, rem) && !rmx_ucx_tick_due(&ctx->ucx);
}

/* A UCP atomic: after this segment's puts to its bytes, and complete at the target on return
 * (a non-fetching one flushed, as site_close does).  Out of line: see elem_amo. */
static __attribute__((noinline)) int fast_amo_ucp(rmx_win_t *win, const rmx_remote_t *rem,
                                                  int target, size_t disp, ucp_atomic_op_t uop,
                                                  uint64_t value, uint64_t *old, size_t size)
{
    rmx_ctx_t *ctx = win->ctx;
    int rc = rmx_tracker_update_access(win, target, disp, size); /* as site_open */
    if (rc == RMX_OK)
        rc = elem_amo_sized(ctx, rem, target, uop, value, old, size, disp);
    if (old == NULL && rc == RMX_OK)
        rc = flush_target_of(ctx, target);
    return rc;
}

/* The atomic itself, counted; *old (when fetching) holds CSWAP's new value on entry.  A CPU
 * atomic on a mapped target needs no tracker decision: nothing is ever pending to it (its puts
 * were copies, its gets and atomics complete at once). */
RMW_INLINE int fast_amo(rmx_win_t *win, const rmx_remote_t *rem, int target, size_t disp,
                        ucp_atomic_op_t uop, uint64_t value, uint64_t *old, size_t size)
{
    rmx_ctx_t *ctx = win->ctx;
    ctx->stats.atomics++;
    if (!rmx_remote_amo_direct(ctx, rem))
        return fast_amo_ucp(win, rem, target, disp, uop, value, old, size);
    return elem_amo_sized(ctx, rem, target, uop, value, old, size, disp); /* the CPU atomic */
}

/* The direct route: one 64-bit integer added (SUM, INC), swapped (SWAP, fetching) or compared
 * and swapped (rmx_rmw2's COMP_SWAP) on a target mapped here, the counters, tickets, flags and
 * CASes of one node, tried first by the fast path.  Written for these alone (the size a
 * constant, an op or two): through the general decoding (rmw_native, the size by type) the
 * call kept its values in memory and cost 2 ns more.  The counters are bumped after the
 * atomic: a locked instruction waits until the stores before it are done (0.7 ns here). */
RMW_INLINE uint64_t direct64_amo(rmx_win_t *win, const rmx_remote_t *rem, size_t disp,
                                 ucp_atomic_op_t uop, uint64_t value, uint64_t desired)
{
    uint64_t old = rmx_direct_amo(win->ctx, rem, uop, value, desired, 8, disp);
    win->ctx->stats.atomics++;
    win->ctx->ucx.since_progress++; /* the tick, not due (fast_direct) */
    return old;
}

RMW_INLINE int direct64_fits(rmx_win_t *win, const rmx_remote_t *rem, rmx_dtype_t dt)
{
    return fast_direct(win->ctx, rem) && (dt == RMX_INT64 || dt == RMX_UINT64);
}

/* The rmx_rmw calls of both 64-bit routes (direct, UCP): an add (SUM, INC) or a fetching SWAP,
 * with its operand; rmx_rmw2's: a COMP_SWAP with both operands.  Their UCP op and operand. */
RMW_INLINE int rmw64_call(const void *operand, const void *result, rmx_rmw_op_t op)
{
    return (op == RMX_OP_SUM || op == RMX_OP_INC || (op == RMX_OP_SWAP && result != NULL)) &&
           (operand != NULL || op == RMX_OP_INC);
}

RMW_INLINE ucp_atomic_op_t rmw64_uop(rmx_rmw_op_t op)
{
    return op == RMX_OP_SWAP ? UCP_ATOMIC_OP_SWAP : UCP_ATOMIC_OP_ADD;
}

RMW_INLINE uint64_t rmw64_value(const void *operand, rmx_rmw_op_t op)
{
    return op == RMX_OP_INC ? 1 : rmx_bits_load(operand, 8);
}

RMW_INLINE int rmw2_64_call(const void *operand, const void *operand2, rmx_rmw2_op_t op)
{
    return op == RMX_OP2_COMP_SWAP && operand != NULL && operand2 != NULL;
}

RMW_INLINE int rmw_direct64(rmx_win_t *win, const rmx_remote_t *rem, const void *operand,
                            rmx_dtype_t dt, void *result, size_t disp, rmx_rmw_op_t op)
{
    if (!direct64_fits(win, rem, dt) || !rmw64_call(operand, result, op))
        return RMW_NOT_FAST;
    uint64_t old = direct64_amo(win, rem, disp, rmw64_uop(op), rmw64_value(operand, op), 0);
    if (result != NULL)
        rmx_bits_store(result, 8, old);
    return RMX_OK;
}

RMW_INLINE int rmw2_direct64(rmx_win_t *win, const rmx_remote_t *rem, const void *operand,
                             rmx_dtype_t dt, const void *operand2, void *result, size_t disp,
                             rmx_rmw2_op_t op)
{
    if (!direct64_fits(win, rem, dt) || !rmw2_64_call(operand, operand2, op))
        return RMW_NOT_FAST;
    uint64_t old = direct64_amo(win, rem, disp, UCP_ATOMIC_OP_CSWAP, rmx_bits_load(operand, 8),
                                rmx_bits_load(operand2, 8));
    if (result != NULL)
        rmx_bits_store(result, 8, old);
    return RMX_OK;
}

/* The UCP route: the same calls (a fetching 64-bit add, swap or compare-and-swap) on a target
 * that UCX maps here (the reply in place, rmx_ucx_amo) over UCP's own RMA (no active messages)
 * and rmx does not (no CPU atomics: RMX_DIRECT=0): rem->ucp_amo_in_place, set when the window
 * part was mapped; with nothing of this segment pending to it (rmx_tracker_nothing_pending,
 * counted).  As the direct route, a handful of tests and the size a constant; the atomic is
 * rmx_remote_amo's (rmx_remote_amo_ucp), its active-message branch folded away.  A part rmx
 * maps but whose atomics are UCP's (some rank maps nothing) takes the general fast path. */
RMW_INLINE int ucp64_fits(rmx_win_t *win, const rmx_remote_t *rem, rmx_dtype_t dt,
                          const void *result, int target)
{
    rmx_ctx_t *ctx = win->ctx;
    return (dt == RMX_INT64 || dt == RMX_UINT64) && result != NULL && rem->ucp_amo_in_place &&
           rmx_tracker_nothing_pending(ctx, target);
}

/* old: CSWAP's new value in. */
RMW_INLINE int ucp64_amo(rmx_win_t *win, const rmx_remote_t *rem, int target, size_t disp,
                         ucp_atomic_op_t uop, uint64_t value, uint64_t old, void *result)
{
    rmx_ctx_t *ctx = win->ctx;
    ctx->stats.atomics++;
    int rc = rmx_remote_amo_ucp(ctx, rem, target, NULL, uop, &value, &old, 8, disp);
    if (rc == RMX_OK)
        rmx_bits_store(result, 8, old);
    return rc;
}

/* Tested apart from the atomic (rmw_after_direct): the fallback after a call whose result the
 * compiler cannot rule out being RMW_NOT_FAST kept every argument across it (1.5 ns more). */
RMW_INLINE int rmw_ucp64_fits(rmx_win_t *win, const rmx_remote_t *rem, const void *operand,
                              rmx_dtype_t dt, const void *result, int target, rmx_rmw_op_t op)
{
    return rmw64_call(operand, result, op) && ucp64_fits(win, rem, dt, result, target);
}

RMW_INLINE int rmw_ucp64(rmx_win_t *win, const rmx_remote_t *rem, const void *operand,
                         void *result, int target, size_t disp, rmx_rmw_op_t op)
{
    return ucp64_amo(win, rem, target, disp, rmw64_uop(op), rmw64_value(operand, op), 0, result);
}

RMW_INLINE int rmw2_ucp64_fits(rmx_win_t *win, const rmx_remote_t *rem, const void *operand,
                               rmx_dtype_t dt, const void *operand2, const void *result,
                               int target, rmx_rmw2_op_t op)
{
    return rmw2_64_call(operand, operand2, op) && ucp64_fits(win, rem, dt, result, target);
}

RMW_INLINE int rmw2_ucp64(rmx_win_t *win, const rmx_remote_t *rem, const void *operand,
                          const void *operand2, void *result, int target, size_t disp)
{
    return ucp64_amo(win, rem, target, disp, UCP_ATOMIC_OP_CSWAP, rmx_bits_load(operand, 8),
                     rmx_bits_load(operand2, 8), result);
}

/* The general fast path: any native op on any type, CPU atomic or UCP's. */
RMW_INLINE int rmw_fast(rmx_win_t *win, const rmx_remote_t *rem, const void *operand,
                        rmx_dtype_t dt, void *result, int target, size_t disp, rmx_rmw_op_t op)
{
    int fetch = result != NULL;
    ucp_atomic_op_t uop;
    uint64_t value;
    if ((unsigned)op >= RMX_OP_COUNT || op == RMX_OP_NO_OP ||
        (operand == NULL && operand_needed(op)))
        return RMW_NOT_FAST;
    size_t size = dtypes[dt].size;
    if (!rmw_native(op, dt, fetch, operand_needed(op) ? elem_load(operand, 0, size) : 0, &uop,
                    &value) ||
        (!fetch && uop == UCP_ATOMIC_OP_SWAP)) /* SWAP has no non-fetching form in UCP */
        return RMW_NOT_FAST;
    uint64_t old = 0;
    int rc = fast_amo(win, rem, target, disp, uop, value, fetch ? &old : NULL, size);
    if (rc == RMX_OK && fetch)
        elem_store(result, 0, size, old);
    return rc;
}

RMW_INLINE int rmw2_fast(rmx_win_t *win, const rmx_remote_t *rem, const void *operand,
                         rmx_dtype_t dt, const void *operand2, void *result, int target,
                         size_t disp, rmx_rmw2_op_t op)
{
    if (op != RMX_OP2_COMP_SWAP || dtypes[dt].is_float || operand == NULL || operand2 == NULL)
        return RMW_NOT_FAST;
    size_t size = dtypes[dt].size;
    uint64_t old = elem_load(operand2, 0, size); /* CSWAP: the new value in, the old one out */
    int rc = fast_amo(win, rem, target, disp, UCP_ATOMIC_OP_CSWAP, elem_load(operand, 0, size),
                      &old, size);
    if (rc == RMX_OK && result != NULL)
        elem_store(result, 0, size, old);
    return rc;
}

/* ---------------------------------------------------------------- entry points */

/* Every call the fast path did not take: checked (the error, or at RMX_THREAD_MULTIPLE the
 * context's lock taken and the call made again), then element by element, in an implicit epoch
 * when the assert asks for one.  Out of line: inlined, its layers widened the fast path's frame. */
static __attribute__((noinline)) int rmw_checked(rmx_win_t *win, const void *operand, int count,
                                                 rmx_dtype_t dt, void *result, int target,
                                                 size_t disp, int assert, rmx_rmw_op_t op)
{
    int rc = check_rmw(win, operand, count, dt, target, disp, assert, op);
    if (rc != RMX_OK || count == 0)
        return RMX_MT_RETRY(rc, win->ctx,
                            rmx_rmw(win, operand, count, dt, result, target, disp, assert, op));
    if ((rc = epoch_begin(win, target, assert)) != RMX_OK)
        return rc;
    rc = rmw_elements(win, operand, count, dt, result, target, disp, op);
    return epoch_end(win, target, assert, rc);
}

/* The rest of the fast path, after the direct route: the UCP route, else the general fast path
 * or, failing that, the checked path.  Out of line, each with a frame of its own, and tail-called
 * with the site that fast_site found (nothing is checked twice): the entry point's frame is then
 * only the direct route's, and the UCP route's holds only what its call keeps (before, the route
 * went through the general fast path's decoding inside the entry's frame, then fast_amo_ucp's:
 * RMX_DIRECT=0 fetch-add 1.62x raw UCP, now 1.45x; perf/rmx_perf fadd). */
static __attribute__((noinline)) int rmw_general(rmx_win_t *win, const void *operand,
                                                 const rmx_remote_t *rem, rmx_dtype_t dt,
                                                 void *result, int target, size_t disp,
                                                 int assert, rmx_rmw_op_t op)
{
    int rc = rmw_fast(win, rem, operand, dt, result, target, disp, op);
    if (__builtin_expect(rc != RMW_NOT_FAST, 1))
        return rc;
    return rmw_checked(win, operand, 1, dt, result, target, disp, assert, op);
}

static __attribute__((noinline)) int rmw_after_direct(rmx_win_t *win, const void *operand,
                                                      const rmx_remote_t *rem, rmx_dtype_t dt,
                                                      void *result, int target, size_t disp,
                                                      int assert, rmx_rmw_op_t op)
{
    if (__builtin_expect(!rmw_ucp64_fits(win, rem, operand, dt, result, target, op), 0))
        return rmw_general(win, operand, rem, dt, result, target, disp, assert, op);
    return rmw_ucp64(win, rem, operand, result, target, disp, op);
}

int rmx_rmw(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt, void *result,
            int target, size_t disp, int assert, rmx_rmw_op_t op)
{
    const rmx_remote_t *rem = fast_site(win, count, dt, target, disp, assert);
    if (__builtin_expect(rem != NULL, 1)) {
        int rc = rmw_direct64(win, rem, operand, dt, result, disp, op);
        if (__builtin_expect(rc != RMW_NOT_FAST, 1))
            return rc;
        return rmw_after_direct(win, operand, rem, dt, result, target, disp, assert, op);
    }
    return rmw_checked(win, operand, count, dt, result, target, disp, assert, op);
}

RMW_INLINE int rmw2_elements(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt,
                         const void *operand2, void *result, int target, size_t disp,
                         rmx_rmw2_op_t op)
{
    rmw_site_t s;
    int rc = site_open(&s, win, dt, count, target, disp);
    for (int i = 0; i < count && rc == RMX_OK; i++) {
        uint64_t old;
        rc = rmw2_element(&s, i, op, elem_load(operand, i, s.size),
                          elem_load(operand2, i, s.size), &old);
        if (rc == RMX_OK && result != NULL)
            elem_store(result, i, s.size, old);
    }
    return site_close(&s, rc);
}

static __attribute__((noinline)) int rmw2_checked(rmx_win_t *win, const void *operand,
                                                  int count, rmx_dtype_t dt,
                                                  const void *operand2, void *result, int target,
                                                  size_t disp, int assert, rmx_rmw2_op_t op)
{
    int rc = check_rmw2(win, operand, count, dt, operand2, target, disp, assert, op);
    if (rc != RMX_OK || count == 0)
        return RMX_MT_RETRY(rc, win->ctx, rmx_rmw2(win, operand, count, dt, operand2, result,
                                                   target, disp, assert, op));
    if ((rc = epoch_begin(win, target, assert)) != RMX_OK)
        return rc;
    rc = rmw2_elements(win, operand, count, dt, operand2, result, target, disp, op);
    return epoch_end(win, target, assert, rc);
}

/* As rmw_general and rmw_after_direct. */
static __attribute__((noinline)) int rmw2_general(rmx_win_t *win, const void *operand,
                                                  const rmx_remote_t *rem, rmx_dtype_t dt,
                                                  const void *operand2, void *result, int target,
                                                  size_t disp, int assert, rmx_rmw2_op_t op)
{
    int rc = rmw2_fast(win, rem, operand, dt, operand2, result, target, disp, op);
    if (__builtin_expect(rc != RMW_NOT_FAST, 1))
        return rc;
    return rmw2_checked(win, operand, 1, dt, operand2, result, target, disp, assert, op);
}

static __attribute__((noinline)) int rmw2_after_direct(rmx_win_t *win, const void *operand,
                                                       const rmx_remote_t *rem, rmx_dtype_t dt,
                                                       const void *operand2, void *result,
                                                       int target, size_t disp, int assert,
                                                       rmx_rmw2_op_t op)
{
    if (__builtin_expect(!rmw2_ucp64_fits(win, rem, operand, dt, operand2, result, target, op),
                         0))
        return rmw2_general(win, operand, rem, dt, operand2, result, target, disp, assert, op);
    return rmw2_ucp64(win, rem, operand, operand2, result, target, disp);
}

int rmx_rmw2(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt,
             const void *operand2, void *result, int target, size_t disp, int assert,
             rmx_rmw2_op_t op)
{
    const rmx_remote_t *rem = fast_site(win, count, dt, target, disp, assert);
    if (__builtin_expect(rem != NULL, 1)) {
        int rc = rmw2_direct64(win, rem, operand, dt, operand2, result, disp, op);
        if (__builtin_expect(rc != RMW_NOT_FAST, 1))
            return rc;
        return rmw2_after_direct(win, operand, rem, dt, operand2, result, target, disp, assert,
                                 op);
    }
    return rmw2_checked(win, operand, count, dt, operand2, result, target, disp, assert, op);
}

/* ---------------------------------------------------------------- nonblocking (engine/nb.c) */

/* What a fetching rmx_irmw/rmx_irmw2 can leave in flight: one element, one native UCP atomic
 * (no CAS loop, whose rounds each need the last answer), no lock to take, to a peer neither
 * this rank nor mapped here (no CPU atomic, no copy that would not wait for it). */
static int plan_target(rmx_win_t *win, int count, int target, int assert)
{
    return count == 1 && !takes_lock(assert) && target != win->ctx->rank &&
           win->remote[target].direct == NULL;
}

int rmx_rmw_plan(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt, int target,
                 size_t disp, int assert, rmx_rmw_op_t op, rmx_amo_plan_t *plan)
{
    int rc = check_rmw(win, operand, count, dt, target, disp, assert, op);
    plan->native = 0;
    if (rc != RMX_OK || !plan_target(win, count, target, assert))
        return rc;
    size_t size = dtypes[dt].size;
    plan->size = size;
    plan->native = op != RMX_OP_NO_OP &&
                   rmw_native(op, dt, 1, operand_needed(op) ? elem_load(operand, 0, size) : 0,
                              &plan->uop, &plan->value);
    return RMX_OK;
}

int rmx_rmw2_plan(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt,
                  const void *operand2, int target, size_t disp, int assert, rmx_rmw2_op_t op,
                  rmx_amo_plan_t *plan)
{
    int rc = check_rmw2(win, operand, count, dt, operand2, target, disp, assert, op);
    plan->native = 0;
    if (rc != RMX_OK || !plan_target(win, count, target, assert))
        return rc;
    size_t size = dtypes[dt].size;
    plan->size = size;
    plan->native = op == RMX_OP2_COMP_SWAP && !dtypes[dt].is_float; /* as rmw2_element */
    plan->uop = UCP_ATOMIC_OP_CSWAP;
    plan->value = elem_load(operand, 0, size);
    plan->value2 = elem_load(operand2, 0, size);
    return RMX_OK;
}
