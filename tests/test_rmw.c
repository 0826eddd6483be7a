/*
 * test_rmw.c — rmx_rmw / rmx_rmw2 between real processes: every op x datatype against a
 * reference computed here, fetch-XOR end to end (UCX 1.13's shared-memory fetch-XOR stores a
 * wrong value), which ops are native and which emulated (counted), floating-point compares by
 * value, concurrent INC / emulated ops / MAX from 4 ranks on one word, and every bad input with
 * its exact code and the target untouched.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include "harness.h"

#define NE 6 /* elements per table case */

typedef union vec {
    int32_t i32[NE];
    int64_t i64[NE];
    uint32_t u32[NE];
    uint64_t u64[NE];
    float f[NE];
    double d[NE];
    unsigned char bytes[NE * 8];
} vec_t;

static const char *dt_name[] = {"int32", "int64", "uint32", "uint64", "float", "double"};
static const char *op_name[] = {"INC", "PROD", "SUM", "LAND", "LOR", "LXOR", "BAND",
                                "BOR", "BXOR", "SWAP", "MIN", "MAX", "NO_OP"};
static const char *op2_name[] = {"COMP_SWAP", "MASK_SWAP", "GT", "GE", "LT", "LE", "NE"};

static size_t dsize(rmx_dtype_t dt)
{
    return dt == RMX_INT32 || dt == RMX_UINT32 || dt == RMX_FLOAT ? 4 : 8;
}

/* Target, operand (comparand / mask) and operand2: equal and unequal pairs, zeros, negatives
 * (huge values once unsigned), and -0.0 against +0.0 for the floats. */
static const int64_t int_t[NE] = {6, -3, 0, 100, 0, 7};
static const int64_t int_a[NE] = {6, 5, 0, -7, 9, 3};
static const double flt_t[NE] = {6.5, -3.25, -0.0, 100, 0, 7};
static const double flt_a[NE] = {6.5, 5, 0.0, -7, 9, 3.5};
static const int64_t both_b[NE] = {11, 12, 13, 14, 15, 16};

static void fill(vec_t *v, rmx_dtype_t dt, const int64_t *ints, const double *flts)
{
    memset(v, 0, sizeof(*v));
    for (int i = 0; i < NE; i++) {
        switch (dt) {
        case RMX_INT32:  v->i32[i] = (int32_t)ints[i]; break;
        case RMX_INT64:  v->i64[i] = ints[i]; break;
        case RMX_UINT32: v->u32[i] = (uint32_t)ints[i]; break;
        case RMX_UINT64: v->u64[i] = (uint64_t)ints[i]; break;
        case RMX_FLOAT:  v->f[i] = (float)(flts ? flts[i] : (double)ints[i]); break;
        case RMX_DOUBLE: v->d[i] = flts ? flts[i] : (double)ints[i]; break;
        default: break;
        }
    }
}

/* ---- the reference: what each op does, written with the C operators of each type */
#define REF_COMMON(T)                                                                        \
    case RMX_OP_INC:   *out = (T)(t + 1); break;                                             \
    case RMX_OP_PROD:  *out = (T)(t * a); break;                                             \
    case RMX_OP_SUM:   *out = (T)(t + a); break;                                             \
    case RMX_OP_SWAP:  *out = a; break;                                                      \
    case RMX_OP_MIN:   *out = a < t ? a : t; break;                                          \
    case RMX_OP_MAX:   *out = a > t ? a : t; break;                                          \
    case RMX_OP_NO_OP: *out = t; break;

#define REF_INT_ONLY(T)                                                                      \
    case RMX_OP_LAND:  *out = (T)(t && a); break;                                            \
    case RMX_OP_LOR:   *out = (T)(t || a); break;                                            \
    case RMX_OP_LXOR:  *out = (T)(!t != !a); break;                                          \
    case RMX_OP_BAND:  *out = (T)(t & a); break;                                             \
    case RMX_OP_BOR:   *out = (T)(t | a); break;                                             \
    case RMX_OP_BXOR:  *out = (T)(t ^ a); break;

#define REF2_COMMON                                                                          \
    case RMX_OP2_COMP_SWAP:    *out = t == a ? b : t; break;                                 \
    case RMX_OP2_COMP_SWAP_GT: *out = t > a ? b : t; break;                                  \
    case RMX_OP2_COMP_SWAP_GE: *out = t >= a ? b : t; break;                                 \
    case RMX_OP2_COMP_SWAP_LT: *out = t < a ? b : t; break;                                  \
    case RMX_OP2_COMP_SWAP_LE: *out = t <= a ? b : t; break;                                 \
    case RMX_OP2_COMP_SWAP_NE: *out = t != a ? b : t; break;

#define DEFINE_INT_REF(N, T)                                                                 \
    static int ref1_##N(int op, T t, T a, T *out)                                            \
    {                                                                                        \
        switch (op) { REF_COMMON(T) REF_INT_ONLY(T) default: return 0; }                     \
        return 1;                                                                            \
    }                                                                                        \
    static int ref2_##N(int op, T t, T a, T b, T *out)                                       \
    {                                                                                        \
        switch (op) {                                                                        \
        REF2_COMMON                                                                          \
        case RMX_OP2_MASK_SWAP: *out = (T)((t & ~a) | (b & a)); break;                       \
        default: return 0;                                                                   \
        }                                                                                    \
        return 1;                                                                            \
    }

#define DEFINE_FLT_REF(N, T)                                                                 \
    static int ref1_##N(int op, T t, T a, T *out)                                            \
    {                                                                                        \
        switch (op) { REF_COMMON(T) default: return 0; }                                     \
        return 1;                                                                            \
    }                                                                                        \
    static int ref2_##N(int op, T t, T a, T b, T *out)                                       \
    {                                                                                        \
        switch (op) { REF2_COMMON default: return 0; }                                       \
        return 1;                                                                            \
    }

DEFINE_INT_REF(i32, int32_t)
DEFINE_INT_REF(i64, int64_t)
DEFINE_INT_REF(u32, uint32_t)
DEFINE_INT_REF(u64, uint64_t)
DEFINE_FLT_REF(f, float)
DEFINE_FLT_REF(d, double)

/* out = op applied element-wise to t (with a, b); 0 when the op is undefined for dt. */
static int reference(int two, int op, rmx_dtype_t dt, const vec_t *t, const vec_t *a,
                     const vec_t *b, vec_t *out)
{
    int ok = 1;
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < NE && ok; i++) {
#define REF_CASE(DT, N)                                                                      \
    case DT:                                                                                 \
        ok = two ? ref2_##N(op, t->N[i], a->N[i], b->N[i], &out->N[i])                       \
                 : ref1_##N(op, t->N[i], a->N[i], &out->N[i]);                               \
        break;
        switch (dt) {
        REF_CASE(RMX_INT32, i32)
        REF_CASE(RMX_INT64, i64)
        REF_CASE(RMX_UINT32, u32)
        REF_CASE(RMX_UINT64, u64)
        REF_CASE(RMX_FLOAT, f)
        REF_CASE(RMX_DOUBLE, d)
        default: ok = 0;
        }
    }
    return ok;
}

/* ---- the table: every op x datatype, with and without fetch, count NE and count 1 */

#define REGION 128 /* bytes per (origin, target) region: NE elements + a guard after them */

static void one_case(rmx_win_t *win, int two, int op, rmx_dtype_t dt, int fetch, int count,
                     int target, size_t disp)
{
    vec_t t, a, b, want, got, res;
    const size_t sz = dsize(dt), guard_at = disp + (size_t)count * sz;
    int is_float = dt == RMX_FLOAT || dt == RMX_DOUBLE;
    fill(&t, dt, int_t, is_float ? flt_t : NULL);
    fill(&a, dt, int_a, is_float ? flt_a : NULL);
    fill(&b, dt, both_b, NULL);
    int defined = reference(two, op, dt, &t, &a, &b, &want);
    /* count 1 works on element 3 (100 vs -7: unequal, signed and unsigned order differ) */
    int first = count == 1 ? 3 : 0;
    uint64_t guard = 0x5a5a5a5a5a5a5a5aull, guard_seen = 0;
    RANK_OK(rmx_put(win, t.bytes + first * sz, (size_t)count * sz, target, disp));
    RANK_OK(rmx_put(win, &guard, sizeof(guard), target, guard_at));
    memset(&res, 0xee, sizeof(res));
    void *result = fetch ? res.bytes : NULL;
    const void *opa = a.bytes + first * sz, *opb = b.bytes + first * sz;
    int rc = two ? rmx_rmw2(win, opa, count, dt, opb, result, target, disp, 0, op)
                 : rmx_rmw(win, opa, count, dt, result, target, disp, 0, op);
    const char *name = two ? op2_name[op] : op_name[op];
    RANK_OK(rmx_get(win, got.bytes, (size_t)count * sz, target, disp));
    RANK_OK(rmx_get(win, &guard_seen, sizeof(guard_seen), target, guard_at));
    RANK_ASSERT(guard_seen == guard, "%s %s: bytes after the last element changed", name,
                dt_name[dt]);
    if (!defined) {
        RANK_RC(RMX_ERR_DATATYPE, rc);
        RANK_ASSERT(memcmp(got.bytes, t.bytes + first * sz, (size_t)count * sz) == 0,
                    "%s %s: rejected, yet the target changed", name, dt_name[dt]);
        return;
    }
    RANK_ASSERT(rc == RMX_OK, "%s %s count %d fetch %d: %s", name, dt_name[dt], count, fetch,
                rmx_strerror(rc));
    for (int i = 0; i < count; i++) {
        size_t off = (size_t)(first + i) * sz;
        RANK_ASSERT(memcmp(got.bytes + (size_t)i * sz, want.bytes + off, sz) == 0,
                    "%s %s count %d fetch %d target %d: element %d wrong in memory", name,
                    dt_name[dt], count, fetch, target, first + i);
        if (fetch)
            RANK_ASSERT(memcmp(res.bytes + (size_t)i * sz, t.bytes + off, sz) == 0,
                        "%s %s count %d target %d: element %d: wrong old value", name,
                        dt_name[dt], count, target, first + i);
    }
    if (!fetch)
        RANK_ASSERT(res.bytes[0] == 0xee, "result written although NULL was passed");
}

static int rank_every_op_every_type(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, REGION * 2 * (size_t)n, &base, &win));
    RANK_OK(rmx_sync_all(ctx));
    int targets[2] = {(me + 1) % n, me}; /* a peer (sysv/posix) and myself (self) */
    int cases = 0;
    for (int k = 0; k < 2; k++) {
        size_t disp = REGION * (size_t)(2 * me + k);
        for (int dt = 0; dt < RMX_DTYPE_COUNT; dt++)
            for (int fetch = 0; fetch < 2; fetch++)
                for (int count = 1; count <= NE; count += NE - 1) {
                    for (int op = 0; op < RMX_OP_COUNT; op++, cases++)
                        one_case(win, 0, op, dt, fetch, count, targets[k], disp);
                    for (int op = 0; op < RMX_OP2_COUNT; op++, cases++)
                        one_case(win, 1, op, dt, fetch, count, targets[k], disp);
                }
    }
    RANK_ASSERT(cases == 2 * RMX_DTYPE_COUNT * 2 * 2 * (RMX_OP_COUNT + RMX_OP2_COUNT));
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rmw, every_op_every_datatype_against_reference_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_every_op_every_type, NULL);
}

/* ---- fetch-XOR end to end: the old value comes back AND memory holds old ^ operand */
static int rank_fetch_xor(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64 * (size_t)n, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    int targets[2] = {(me + 1) % n, me};
    for (int k = 0; k < 2; k++) {
        size_t disp = 64 * (size_t)me + 32 * (size_t)k;
        uint64_t v64 = 0xf0f0f0f00ff00ff0ull, x64 = 0xff00ff0000ff00ffull, old64 = 0, now64;
        RANK_OK(rmx_put(win, &v64, 8, targets[k], disp));
        for (int round = 0; round < 3; round++) {
            RANK_OK(rmx_rmw(win, &x64, 1, RMX_UINT64, &old64, targets[k], disp, 0, RMX_OP_BXOR));
            RANK_OK(rmx_get(win, &now64, 8, targets[k], disp));
            RANK_ASSERT(old64 == v64, "round %d: fetched %#" PRIx64 ", was %#" PRIx64, round,
                        old64, v64);
            RANK_ASSERT(now64 == (v64 ^ x64), "round %d: memory %#" PRIx64 ", want %#" PRIx64,
                        round, now64, v64 ^ x64);
            v64 = now64;
        }
        uint32_t v32 = 0x12345678u, x32 = 0xffff0000u, old32 = 0, now32;
        RANK_OK(rmx_put(win, &v32, 4, targets[k], disp + 8));
        RANK_OK(rmx_rmw(win, &x32, 1, RMX_UINT32, &old32, targets[k], disp + 8, 0, RMX_OP_BXOR));
        RANK_OK(rmx_get(win, &now32, 4, targets[k], disp + 8));
        RANK_ASSERT(old32 == v32 && now32 == (v32 ^ x32), "32-bit: old %#x memory %#x", old32,
                    now32);
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rmw, fetch_xor_returns_old_and_stores_old_xor_operand, .timeout = RMX_T(60))
{
    run_ranks(2, rank_fetch_xor, NULL);
}

/* ---- native or emulated: the number of UCP atomics per element shows which path ran */
static uint64_t amos_of(rmx_ctx_t *ctx, rmx_win_t *win, int target, int two, int op,
                        rmx_dtype_t dt, int fetch)
{
    vec_t a, b, res;
    fill(&a, dt, int_a, NULL);
    fill(&b, dt, both_b, NULL);
    rmx_stats_t s0, s1;
    RANK_OK(rmx_stats(ctx, &s0));
    int rc = two ? rmx_rmw2(win, a.bytes, NE, dt, b.bytes, fetch ? res.bytes : NULL, target, 0,
                            0, op)
                 : rmx_rmw(win, a.bytes, NE, dt, fetch ? res.bytes : NULL, target, 0, 0, op);
    RANK_OK(rc);
    RANK_OK(rmx_stats(ctx, &s1));
    RANK_ASSERT(s1.atomics == s0.atomics + 1, "one rmx call counts one atomic");
    RANK_ASSERT(s1.cas_retries == s0.cas_retries, "nobody else touches this word");
    /* UCP atomics, or CPU atomics on a mapped target: the same count either way */
    return (s1.ucp_amos + s1.direct_amos - s0.ucp_amos - s0.direct_amos) / NE;
}

static int rank_native_or_emulated(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, &base, &win));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        int t = 1;
        /* one UCP atomic per element: native */
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_INC, RMX_INT64, 1) == 1);
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_SUM, RMX_UINT32, 1) == 1);
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_SUM, RMX_INT32, 0) == 1);
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_BXOR, RMX_UINT64, 0) == 1);
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_BAND, RMX_INT32, 0) == 1);
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_SWAP, RMX_DOUBLE, 1) == 1);
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_SWAP, RMX_INT32, 0) == 1);
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_NO_OP, RMX_FLOAT, 1) == 1);
        RANK_ASSERT(amos_of(ctx, win, t, 1, RMX_OP2_COMP_SWAP, RMX_UINT64, 1) == 1);
        /* read + CSWAP per element: emulated (fetching bitwise, PROD, floats, ordered) */
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_BXOR, RMX_UINT64, 1) == 2);
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_BOR, RMX_INT32, 1) == 2);
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_PROD, RMX_UINT64, 0) == 2);
        RANK_ASSERT(amos_of(ctx, win, t, 0, RMX_OP_SUM, RMX_DOUBLE, 1) == 2);
        RANK_ASSERT(amos_of(ctx, win, t, 1, RMX_OP2_MASK_SWAP, RMX_UINT32, 1) == 2);
        /* target is 16 everywhere now: COMP_SWAP_LT 16 < a is false for int_a -> read only */
        RANK_ASSERT(amos_of(ctx, win, t, 1, RMX_OP2_COMP_SWAP_LT, RMX_UINT64, 1) == 1);
    }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rmw, native_and_emulated_paths_counted, .timeout = RMX_T(60))
{
    run_ranks(2, rank_native_or_emulated, NULL);
}

/* ---- floating point: compared by value, not by bits */
static int rank_float_compares(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    double *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        double t, old, now, nz = -0.0, pz = 0.0, nan = NAN, nine = 9.0, big = 1e300;
        /* -0.0 == +0.0: the swap happens */
        RANK_OK(rmx_put(win, &nz, 8, 1, 0));
        RANK_OK(rmx_rmw2(win, &pz, 1, RMX_DOUBLE, &nine, &old, 1, 0, 0, RMX_OP2_COMP_SWAP));
        RANK_OK(rmx_get(win, &now, 8, 1, 0));
        RANK_ASSERT(signbit(old) && old == 0.0 && now == 9.0, "-0.0 must equal +0.0");
        /* NaN equals nothing, not even NaN */
        RANK_OK(rmx_put(win, &nan, 8, 1, 0));
        RANK_OK(rmx_rmw2(win, &nan, 1, RMX_DOUBLE, &nine, &old, 1, 0, 0, RMX_OP2_COMP_SWAP));
        RANK_OK(rmx_get(win, &now, 8, 1, 0));
        RANK_ASSERT(isnan(old) && isnan(now), "NaN == NaN must be false");
        RANK_OK(rmx_rmw2(win, &nan, 1, RMX_DOUBLE, &nine, &old, 1, 0, 0, RMX_OP2_COMP_SWAP_NE));
        RANK_OK(rmx_get(win, &now, 8, 1, 0));
        RANK_ASSERT(now == 9.0, "NaN != NaN must be true");
        /* MAX with a NaN operand leaves the target; MIN of -0.0 and +0.0 keeps the target */
        RANK_OK(rmx_rmw(win, &nan, 1, RMX_DOUBLE, &old, 1, 0, 0, RMX_OP_MAX));
        RANK_OK(rmx_get(win, &now, 8, 1, 0));
        RANK_ASSERT(old == 9.0 && now == 9.0);
        RANK_OK(rmx_rmw(win, &big, 1, RMX_DOUBLE, NULL, 1, 0, 0, RMX_OP_MAX));
        RANK_OK(rmx_get(win, &now, 8, 1, 0));
        RANK_ASSERT(now == 1e300);
        RANK_OK(rmx_put(win, &pz, 8, 1, 0));
        RANK_OK(rmx_rmw(win, &nz, 1, RMX_DOUBLE, NULL, 1, 0, 0, RMX_OP_MIN));
        RANK_OK(rmx_get(win, &t, 8, 1, 0));
        RANK_ASSERT(t == 0.0 && !signbit(t), "MIN(+0.0, -0.0) keeps the target's +0.0");
        /* float: the same in single precision; FLT_MAX * 2 overflows to +inf */
        float f = FLT_MAX, two = 2.0f, fold, fnow, fnan = NAN;
        RANK_OK(rmx_put(win, &f, 4, 1, 8));
        RANK_OK(rmx_rmw(win, &two, 1, RMX_FLOAT, &fold, 1, 8, 0, RMX_OP_PROD));
        RANK_OK(rmx_get(win, &fnow, 4, 1, 8));
        RANK_ASSERT(fold == FLT_MAX && isinf(fnow) && fnow > 0);
        RANK_OK(rmx_rmw2(win, &fnan, 1, RMX_FLOAT, &two, &fold, 1, 8, 0, RMX_OP2_COMP_SWAP_GE));
        RANK_OK(rmx_get(win, &fnow, 4, 1, 8));
        RANK_ASSERT(isinf(fnow), "inf >= NaN is false");
    }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rmw, floats_compare_by_value_nan_and_signed_zero, .timeout = RMX_T(60))
{
    run_ranks(2, rank_float_compares, NULL);
}

/* ---- contention: 4 ranks hammer one word of rank 0 */

#define ITERS 100000
/* Over UCX_TLS=tcp,self each of these atomics is a software round trip through rank 0's agent
 * (~150 us with 4 ranks on 2 cores): the mixed test's 8 round trips an iteration took 113-118 s,
 * and failed at run_ranks' 120 s limit in CI.  A limit of its own, under criterion's 180. */
#define CONTENTION_LIMIT_S 170

typedef struct contention {
    int iters;
} contention_t;

/* Word 0 counts INCs; word 1 collects the sum of every old value fetched. */
static int rank_inc_contention(const rmx_config_t *cfg, void *arg)
{
    int iters = ((contention_t *)arg)->iters;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    double t0 = now_s();
    uint64_t prev = 0, sum = 0;
    for (int i = 0; i < iters; i++) {
        uint64_t old;
        RANK_OK(rmx_rmw(win, NULL, 1, RMX_UINT64, &old, 0, 0, 0, RMX_OP_INC));
        RANK_ASSERT(i == 0 || old > prev, "old values of one rank must grow: %" PRIu64
                    " after %" PRIu64, old, prev);
        RANK_ASSERT(old < (uint64_t)n * (uint64_t)iters);
        prev = old;
        sum += old;
    }
    double t1 = now_s();
    RANK_OK(rmx_rmw(win, &sum, 1, RMX_UINT64, NULL, 0, 8, 0, RMX_OP_SUM));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        uint64_t total = (uint64_t)n * (uint64_t)iters;
        RANK_ASSERT(base[0] == total, "counter %" PRIu64 ", want %" PRIu64, base[0], total);
        RANK_ASSERT(base[1] == total * (total - 1) / 2,
                    "the old values fetched are not 0..%" PRIu64 " once each", total - 1);
    }
    rmx_stats_t st;
    RANK_OK(rmx_stats(ctx, &st));
    RANK_ASSERT(st.ucp_amos + st.direct_amos >= (uint64_t)iters,
                "the INCs were not all native atomics");
    fprintf(stderr, "[smoke] rank %d: [%.4f, %.4f] %d fetch-INC: %.4f s\n", me, fmod(t0, 100),
            fmod(t1, 100), iters, t1 - t0);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rmw, inc_4_ranks_x_100000_ends_at_400000, .timeout = RMX_T(120))
{
    contention_t c = {ITERS};
    run_ranks(4, rank_inc_contention, &c);
}

/* PROD by 1 (emulated: read + CSWAP) interleaved with SUM 1 (native ADD) on the same word: a CAS
 * loop that stored a stale value would lose some of the other ranks' ADDs.  Word 1: fetch-BXOR of
 * bit 63 (emulated) against INC (native) on one word.  Word 2: SUM 1.0 on a double (emulated). */
static int rank_emulated_contention(const rmx_config_t *cfg, void *arg)
{
    int iters = ((contention_t *)arg)->iters;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    const uint64_t one = 1, top = UINT64_C(1) << 63;
    const double fone = 1.0;
    double t0 = now_s();
    uint64_t prev = 0;
    for (int i = 0; i < iters; i++) {
        uint64_t old;
        RANK_OK(rmx_rmw(win, &one, 1, RMX_UINT64, &old, 0, 0, 0, RMX_OP_PROD));
        RANK_ASSERT(old >= prev, "PROD by 1 went backwards: %" PRIu64 " < %" PRIu64, old, prev);
        prev = old;
        RANK_OK(rmx_rmw(win, &one, 1, RMX_UINT64, &old, 0, 0, 0, RMX_OP_SUM));
        RANK_ASSERT(old >= prev);
        prev = old + 1;
        RANK_OK(rmx_rmw(win, &top, 1, RMX_UINT64, &old, 0, 8, 0, RMX_OP_BXOR));
        RANK_OK(rmx_rmw(win, NULL, 1, RMX_UINT64, NULL, 0, 8, 0, RMX_OP_INC));
        RANK_OK(rmx_rmw(win, &fone, 1, RMX_DOUBLE, NULL, 0, 16, 0, RMX_OP_SUM));
    }
    double t1 = now_s();
    rmx_stats_t st;
    RANK_OK(rmx_stats(ctx, &st));
    RANK_OK(rmx_sync_all(ctx));
    uint64_t total = (uint64_t)n * (uint64_t)iters;
    if (me == 0) {
        double d;
        memcpy(&d, &base[2], 8);
        RANK_ASSERT(base[0] == total, "PROD/SUM word %" PRIu64 ", want %" PRIu64, base[0], total);
        RANK_ASSERT(base[1] == total, "XOR/INC word %#" PRIx64 ", want %#" PRIx64
                    " (an even number of bit-63 flips)", base[1], total);
        RANK_ASSERT(d == (double)total, "double SUM %.1f, want %" PRIu64, d, total);
    }
    fprintf(stderr, "[smoke] rank %d: [%.3f, %.3f] %d x (PROD, SUM, fetch-BXOR, INC, SUM double): %.2f s, "
            "%" PRIu64 " CAS retries\n", me, fmod(t0, 100), fmod(t1, 100), iters, t1 - t0, st.cas_retries);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rmw, emulated_ops_against_native_4_ranks_x_100000, .timeout = RMX_T(180))
{
    contention_t c = {ITERS};
    run_ranks_cfg(4, rank_emulated_contention, &c, NULL, CONTENTION_LIMIT_S);
}

/* MAX (emulated, signed): rank r proposes the values k*n + r - offset, k = 0..iters-1, each
 * once in a scrambled order; the word starts below all of them.  Each old value fetched must be the
 * initial value or a value some rank proposed, never below what this rank already proposed,
 * and never smaller than the previous old value this rank saw. */
static int rank_max_contention(const rmx_config_t *cfg, void *arg)
{
    int iters = ((contention_t *)arg)->iters;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    const int64_t offset = (int64_t)n * iters / 2, initial = INT64_MIN;
    if (me == 0)
        base[0] = initial;
    RANK_OK(rmx_sync_all(ctx));
    int64_t prev_old = initial, my_max = initial;
    /* k = i * 7919 mod iters: a permutation of 0..iters-1 (7919 is prime and does not divide
     * iters), different per rank by a rotation */
    for (int i = 0; i < iters; i++) {
        int64_t k = ((int64_t)i * 7919 + (int64_t)me * (iters / 4 + 1)) % iters;
        int64_t v = k * n + me - offset, old;
        RANK_OK(rmx_rmw(win, &v, 1, RMX_INT64, &old, 0, 0, 0, RMX_OP_MAX));
        RANK_ASSERT(old >= prev_old, "MAX went backwards: %" PRId64 " < %" PRId64, old, prev_old);
        RANK_ASSERT(old >= my_max, "MAX lost my %" PRId64 ": saw %" PRId64, my_max, old);
        RANK_ASSERT(old == initial || ((old + offset) >= 0 && (old + offset) < (int64_t)n * iters),
                    "old value %" PRId64 " was never proposed", old);
        prev_old = old;
        if (v > my_max)
            my_max = v;
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        int64_t want = (int64_t)(iters - 1) * n + (n - 1) - offset;
        RANK_ASSERT(base[0] == want, "final %" PRId64 ", want %" PRId64, base[0], want);
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rmw, max_4_ranks_x_100000_distinct_proposals, .timeout = RMX_T(120))
{
    contention_t c = {ITERS};
    run_ranks(4, rank_max_contention, &c);
}

/* Registered (rmx_win_create) memory: the same INC contention on a small scale. */
static int rank_created_window_inc(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *mem = calloc(8, sizeof(uint64_t));
    RANK_ASSERT(mem != NULL);
    rmx_win_t *win;
    RANK_OK(rmx_win_create(ctx, mem, 8 * sizeof(uint64_t), &win));
    const int iters = 2000;
    int64_t minus = -1;
    for (int i = 0; i < iters; i++) {
        RANK_OK(rmx_rmw(win, NULL, 1, RMX_UINT64, NULL, 0, 0, 0, RMX_OP_INC));
        RANK_OK(rmx_rmw(win, &minus, 1, RMX_INT64, NULL, 0, 8, 0, RMX_OP_SUM));
        uint64_t one = 1, old;
        RANK_OK(rmx_rmw(win, &one, 1, RMX_UINT64, &old, 0, 16, 0, RMX_OP_PROD));
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        RANK_ASSERT(mem[0] == (uint64_t)n * iters, "%" PRIu64, mem[0]);
        RANK_ASSERT((int64_t)mem[1] == -(int64_t)n * iters, "%" PRId64, (int64_t)mem[1]);
        RANK_ASSERT(mem[2] == 0);
    }
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    free(mem);
    return 0;
}

Test(rmw, created_window_inc_sum_prod_4_ranks, .timeout = RMX_T(60))
{
    run_ranks(4, rank_created_window_inc, NULL);
}

/* ---- bad input: the exact code, nothing written at the target, the result buffer untouched */
#define ERR_WIN_BYTES 256

static void expect_untouched(const unsigned char *res, size_t len)
{
    for (size_t i = 0; i < len; i++)
        RANK_ASSERT(res[i] == 0xcd, "result byte %zu written by a rejected call", i);
}

static int rank_rmw_bad_inputs(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx), t = (me + 1) % n;
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, ERR_WIN_BYTES, (void **)&base, &win));
    memset(base, 0xab, ERR_WIN_BYTES);
    RANK_OK(rmx_sync_all(ctx));
    int64_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    unsigned char res[64];
    memset(res, 0xcd, sizeof(res));
    const size_t W = ERR_WIN_BYTES;

    /* window */
    RANK_RC(RMX_ERR_WIN, rmx_rmw(NULL, a, 1, RMX_INT64, res, t, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_WIN, rmx_rmw2(NULL, a, 1, RMX_INT64, b, res, t, 0, 0, RMX_OP2_COMP_SWAP));
    /* ranks */
    RANK_RC(RMX_ERR_RANK, rmx_rmw(win, a, 1, RMX_INT64, res, -1, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_RANK, rmx_rmw(win, a, 1, RMX_INT64, res, n, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_RANK, rmx_rmw2(win, a, 1, RMX_INT64, b, res, n + 3, 0, 0, RMX_OP2_COMP_SWAP));
    /* range: disp + count * size within the target's window */
    RANK_RC(RMX_ERR_RANGE, rmx_rmw(win, a, 1, RMX_INT64, res, t, W, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_RANGE, rmx_rmw(win, a, 1, RMX_INT64, res, t, W - 4, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_RANGE, rmx_rmw(win, a, 2, RMX_INT64, res, t, W - 8, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_RANGE, rmx_rmw(win, a, 2, RMX_INT32, res, t, W - 4, 0, RMX_OP_INC));
    RANK_RC(RMX_ERR_RANGE, rmx_rmw(win, a, 0x7fffffff, RMX_INT64, res, t, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_RANGE, rmx_rmw(win, a, 1, RMX_INT64, res, t, SIZE_MAX - 3, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_RANGE, rmx_rmw2(win, a, 4, RMX_INT64, b, res, t, W - 24, 0, RMX_OP2_COMP_SWAP));
    /* alignment: disp a multiple of the element size */
    RANK_RC(RMX_ERR_ALIGN, rmx_rmw(win, a, 1, RMX_INT64, res, t, 4, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_ALIGN, rmx_rmw(win, a, 1, RMX_UINT64, res, t, 1, 0, RMX_OP_INC));
    RANK_RC(RMX_ERR_ALIGN, rmx_rmw(win, a, 1, RMX_INT32, res, t, 2, 0, RMX_OP_SWAP));
    RANK_RC(RMX_ERR_ALIGN, rmx_rmw(win, a, 1, RMX_FLOAT, res, t, 6, 0, RMX_OP_MAX));
    RANK_RC(RMX_ERR_ALIGN, rmx_rmw(win, a, 3, RMX_DOUBLE, res, t, 12, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_ALIGN, rmx_rmw2(win, a, 1, RMX_INT64, b, res, t, 4, 0, RMX_OP2_COMP_SWAP));
    /* datatypes: unknown, and logical / bitwise / mask ops on floating point */
    RANK_RC(RMX_ERR_DATATYPE, rmx_rmw(win, a, 1, (rmx_dtype_t)-1, res, t, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_DATATYPE, rmx_rmw(win, a, 1, RMX_DTYPE_COUNT, res, t, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_DATATYPE, rmx_rmw2(win, a, 1, RMX_DTYPE_COUNT, b, res, t, 0, 0,
                                       RMX_OP2_COMP_SWAP));
    static const rmx_rmw_op_t not_for_floats[] = {RMX_OP_LAND, RMX_OP_LOR, RMX_OP_LXOR,
                                                  RMX_OP_BAND, RMX_OP_BOR, RMX_OP_BXOR};
    for (size_t i = 0; i < sizeof(not_for_floats) / sizeof(not_for_floats[0]); i++) {
        RANK_RC(RMX_ERR_DATATYPE, rmx_rmw(win, a, 1, RMX_FLOAT, res, t, 0, 0, not_for_floats[i]));
        RANK_RC(RMX_ERR_DATATYPE, rmx_rmw(win, a, 1, RMX_DOUBLE, NULL, t, 0, 0, not_for_floats[i]));
    }
    RANK_RC(RMX_ERR_DATATYPE, rmx_rmw2(win, a, 1, RMX_FLOAT, b, res, t, 0, 0, RMX_OP2_MASK_SWAP));
    RANK_RC(RMX_ERR_DATATYPE, rmx_rmw2(win, a, 1, RMX_DOUBLE, b, res, t, 0, 0, RMX_OP2_MASK_SWAP));
    /* operations */
    RANK_RC(RMX_ERR_OP, rmx_rmw(win, a, 1, RMX_INT64, res, t, 0, 0, (rmx_rmw_op_t)-1));
    RANK_RC(RMX_ERR_OP, rmx_rmw(win, a, 1, RMX_INT64, res, t, 0, 0, RMX_OP_COUNT));
    RANK_RC(RMX_ERR_OP, rmx_rmw2(win, a, 1, RMX_INT64, b, res, t, 0, 0, (rmx_rmw2_op_t)-1));
    RANK_RC(RMX_ERR_OP, rmx_rmw2(win, a, 1, RMX_INT64, b, res, t, 0, 0, RMX_OP2_COUNT));
    /* arguments: count, operands, assert bits */
    RANK_RC(RMX_OK, rmx_rmw(win, a, 0, RMX_INT64, res, t, 0, 0, RMX_OP_SUM)); /* no-op (rmx.h) */
    RANK_RC(RMX_ERR_ARG, rmx_rmw(win, a, -4, RMX_INT64, res, t, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_ARG, rmx_rmw2(win, a, -1, RMX_INT64, b, res, t, 0, 0, RMX_OP2_COMP_SWAP));
    RANK_RC(RMX_ERR_ARG, rmx_rmw(win, NULL, 1, RMX_INT64, res, t, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_ARG, rmx_rmw(win, NULL, 1, RMX_INT64, res, t, 0, 0, RMX_OP_SWAP));
    RANK_RC(RMX_ERR_ARG, rmx_rmw2(win, NULL, 1, RMX_INT64, b, res, t, 0, 0, RMX_OP2_COMP_SWAP));
    RANK_RC(RMX_ERR_ARG, rmx_rmw2(win, a, 1, RMX_INT64, NULL, res, t, 0, 0, RMX_OP2_MASK_SWAP));
    RANK_RC(RMX_ERR_ARG, rmx_rmw(win, a, 1, RMX_INT64, res, t, 0, 0x4, RMX_OP_SUM));
    RANK_RC(RMX_ERR_ARG, rmx_rmw(win, a, 1, RMX_INT64, res, t, 0, -1, RMX_OP_SUM));
    RANK_RC(RMX_ERR_ARG, rmx_rmw2(win, a, 1, RMX_INT64, b, res, t, 0, 0x100, RMX_OP2_COMP_SWAP));
    /* an implicit epoch inside an explicit one on the same target */
    static const rmx_lock_t types[] = {RMX_LOCK_EXCLUSIVE, RMX_LOCK_SHARED};
    for (int k = 0; k < 2; k++) {
        RANK_OK(rmx_win_lock(win, types[k], t, 0));
        RANK_RC(RMX_ERR_EPOCH, rmx_rmw(win, a, 1, RMX_INT64, res, t, 0,
                                       RMX_MODE_PASSIVE_EPOCH_IMPLICIT, RMX_OP_SUM));
        RANK_RC(RMX_ERR_EPOCH, rmx_rmw(win, a, 1, RMX_INT64, res, t, 0,
                                       RMX_MODE_PASSIVE_EPOCH_IMPLICIT | RMX_MODE_NOCHECK,
                                       RMX_OP_SUM));
        RANK_RC(RMX_ERR_EPOCH, rmx_rmw2(win, a, 1, RMX_INT64, b, res, t, 0,
                                        RMX_MODE_PASSIVE_EPOCH_IMPLICIT, RMX_OP2_COMP_SWAP));
        RANK_OK(rmx_win_unlock(win, t));
    }
    expect_untouched(res, sizeof(res));

    /* none of it reached any window */
    RANK_OK(rmx_sync_all(ctx));
    for (size_t i = 0; i < W; i++)
        RANK_ASSERT(base[i] == 0xab, "byte %zu of my window changed to %#x", i, base[i]);

    /* the remote address must be aligned too, not only disp: a window starting at +4 */
    unsigned char *raw = aligned_alloc(64, 128);
    RANK_ASSERT(raw != NULL);
    memset(raw, 0xab, 128);
    rmx_win_t *odd;
    RANK_OK(rmx_win_create(ctx, raw + 4, 64, &odd));
    RANK_RC(RMX_ERR_ALIGN, rmx_rmw(odd, a, 1, RMX_INT64, res, t, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_ALIGN, rmx_rmw(odd, a, 1, RMX_DOUBLE, res, t, 8, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_ALIGN, rmx_rmw2(odd, a, 1, RMX_UINT64, b, res, t, 16, 0, RMX_OP2_COMP_SWAP));
    RANK_RC(RMX_ERR_ALIGN, rmx_rmw(odd, a, 1, RMX_INT64, res, t, 4, 0, RMX_OP_SUM)); /* disp */
    expect_untouched(res, sizeof(res));
    /* ...while a 4-byte element at disp 0 is fine, and lands at the window's base */
    RANK_OK(rmx_rmw(odd, NULL, 1, RMX_UINT32, NULL, t, 0, 0, RMX_OP_INC));
    RANK_OK(rmx_sync_all(ctx));
    uint32_t first;
    memcpy(&first, raw + 4, 4);
    RANK_ASSERT(first == 0xabababacu, "the INC landed elsewhere: %#x", first);
    for (size_t i = 0; i < 128; i++)
        RANK_ASSERT((i >= 4 && i < 8) || raw[i] == 0xab, "byte %zu of the created window changed", i);
    RANK_OK(rmx_win_free(&odd));
    free(raw);

    /* a freed window */
    rmx_win_t *stale = win;
    RANK_OK(rmx_win_free(&win));
    RANK_RC(RMX_ERR_WIN, rmx_rmw(stale, a, 1, RMX_INT64, res, t, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_WIN, rmx_rmw2(stale, a, 1, RMX_INT64, b, res, t, 0, 0, RMX_OP2_COMP_SWAP));
    expect_untouched(res, sizeof(res));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rmw, bad_inputs_give_their_code_and_write_nothing_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_rmw_bad_inputs, NULL);
}
