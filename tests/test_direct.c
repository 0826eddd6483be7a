/*
 * test_direct.c — direct on-node access (rmx.h, rmx_direct_t): where a peer's window part is
 * mapped here, puts, gets and sections are copies and atomics CPU atomics, counted in
 * stats.direct_* and never in stats.ucp_*; RMX_DIRECT off sends everything through UCP; CPU
 * atomics only when every rank agrees (one rank with direct access off turns them off for all,
 * and the counters stay exact under contention either way).
 *
 * Whether a mapping exists is the transport's business: UCX maps UCP-allocated memory of a rank
 * on this node over its shared-memory transports (the default), not over UCX_TLS=tcp,self, and
 * never memory registered from the user (RMX_WIN_MEMORY=user).  The expectations follow.
 */
#include <inttypes.h>
#include "harness.h"
#include "../engine/copy.h"

/* The run's transports can map peers' UCP-allocated memory. */
static int shm_transports(void)
{
    const char *tls = getenv("UCX_TLS");
    return tls == NULL || strstr(tls, "sm") != NULL || strstr(tls, "posix") != NULL ||
           strstr(tls, "sysv") != NULL || strstr(tls, "all") != NULL;
}

/* rmx_win_allocate's windows are UCP-allocated (else registered user pages). */
static int windows_mappable(void)
{
    const char *m = getenv("RMX_WIN_MEMORY");
    return shm_transports() && (m == NULL || strcmp(m, "user") != 0);
}

static rmx_stats_t stats_of(rmx_ctx_t *ctx)
{
    rmx_stats_t st;
    RANK_OK(rmx_stats(ctx, &st));
    return st;
}

#define U(x) ((unsigned long long)(x))
enum { WIN = 4096, COL = 16 };

/* Rank 0 puts, gets, updates and moves a column at rank 1, in every form; rank 1 checks. */
static int rank_every_form(const rmx_config_t *base, void *arg)
{
    int want_direct = *(const int *)arg && windows_mappable();
    rmx_config_t cfg = *base;
    cfg.direct = *(const int *)arg ? RMX_DIRECT_ON : RMX_DIRECT_OFF;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&cfg, &ctx));
    int me = rmx_rank(ctx);
    uint64_t *base_p;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, WIN, (void **)&base_p, &win));
    RANK_OK(rmx_stats_reset(ctx));
    if (me == 0) {
        uint64_t v = 0x0123456789abcdefull, got = 0, one = 1, old = 99;
        RANK_OK(rmx_put(win, &v, sizeof(v), 1, 0));
        RANK_OK(rmx_get(win, &got, sizeof(got), 1, 0)); /* sees the put: program order */
        RANK_ASSERT(got == v, "get after put: %#llx", U(got));
        RANK_OK(rmx_rmw(win, &one, 1, RMX_UINT64, &old, 1, 8, 0, RMX_OP_SUM));
        RANK_ASSERT(old == 0, "fetch-add old %llu", U(old));
        uint64_t cmp = 1, swp = 7;
        RANK_OK(rmx_rmw2(win, &cmp, 1, RMX_UINT64, &swp, &old, 1, 8, 0, RMX_OP2_COMP_SWAP));
        RANK_ASSERT(old == 1, "compare-swap old %llu", U(old));
        /* a column of COL elements of a COL x 2 matrix, into the window at byte 64 */
        uint64_t m[COL][2], back[COL][2];
        for (int i = 0; i < COL; i++) {
            m[i][0] = 1000 + (uint64_t)i;
            m[i][1] = 0;
        }
        rmx_sub_t col = {.elem_size = 8, .rank = 2, .order = RMX_ORDER_C,
                         .dim = {{COL, 0, COL, 1}, {2, 0, 1, 1}}};
        RANK_OK(rmx_put_sub(win, m, &col, 1, 64, &col));
        memset(back, 0, sizeof(back));
        RANK_OK(rmx_get_sub(win, back, &col, 1, 64, &col));
        for (int i = 0; i < COL; i++)
            RANK_ASSERT(back[i][0] == 1000 + (uint64_t)i && back[i][1] == 0, "row %d", i);
        RANK_OK(rmx_sync_memory(ctx));
        rmx_stats_t st = stats_of(ctx);
        RANK_ASSERT(st.puts == 2 && st.gets == 2 && st.atomics == 2, "puts %llu gets %llu",
                    U(st.puts), U(st.gets));
        if (want_direct) {
            RANK_ASSERT(st.direct_puts == 2 && st.direct_gets == 2 && st.ucp_puts == 0 &&
                            st.ucp_gets == 0 && st.puts_coalesced == 0,
                        "direct puts %llu gets %llu, ucp puts %llu gets %llu", U(st.direct_puts),
                        U(st.direct_gets), U(st.ucp_puts), U(st.ucp_gets));
            RANK_ASSERT(st.direct_amos == 2 && st.ucp_amos == 0 && st.flushes_ep == 0 &&
                            st.flushes_worker == 0,
                        "direct amos %llu, ucp amos %llu, flushes %llu", U(st.direct_amos),
                        U(st.ucp_amos), U(st.flushes_ep + st.flushes_worker));
        } else {
            RANK_ASSERT(st.direct_puts == 0 && st.direct_gets == 0 && st.direct_amos == 0,
                        "direct puts %llu gets %llu amos %llu without a mapping or switched off",
                        U(st.direct_puts), U(st.direct_gets), U(st.direct_amos));
            RANK_ASSERT(st.ucp_puts + st.puts_coalesced > 0 && st.ucp_amos == 2);
        }
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1) {
        RANK_ASSERT(base_p[0] == 0x0123456789abcdefull && base_p[1] == 7, "%#llx %llu",
                    U(base_p[0]), U(base_p[1]));
        for (int i = 0; i < COL; i++)
            RANK_ASSERT(base_p[8 + 2 * i] == 1000 + (uint64_t)i && base_p[9 + 2 * i] == 0,
                        "column element %d", i);
    }
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(direct, every_form_is_a_copy_or_cpu_atomic_where_mapped_2_ranks, .timeout = RMX_T(60))
{
    int on = 1;
    run_ranks(2, rank_every_form, &on);
}

Test(direct, switched_off_everything_goes_through_ucp_2_ranks, .timeout = RMX_T(60))
{
    int on = 0;
    run_ranks(2, rank_every_form, &on);
}

/* Direct access off, window parts UCX maps here: UCP's puts are UCX's copies into the mapped
 * memory, complete when they return (rmx_remote_t.lands).  Rank 0 writes every pattern the
 * tracker would otherwise order or wait for (a walk of separate puts, a rewrite of a slot, a
 * large put over small ones, small ones inside a large one, a get and an atomic after puts to
 * their bytes), then a flag; rank 1 sleeps outside rmx meanwhile and, without calling rmx, finds
 * the flag and every byte.  Where puts land the counters show no flush, fence or flow wait; where
 * they cannot (tcp, registered memory) they show the flushes and no landed put. */
enum { SLOTS = 40, BIG = 2048, BIG_AT = 1024, FLAG_AT = 3968 };
static int rank_landed(const rmx_config_t *base, void *arg)
{
    (void)arg;
    rmx_config_t cfg = *base;
    cfg.direct = RMX_DIRECT_OFF;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&cfg, &ctx));
    int me = rmx_rank(ctx);
    unsigned char *w;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, WIN, (void **)&w, &win));
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_stats_reset(ctx));
    if (me == 0) {
        for (uint64_t i = 0; i < SLOTS; i++) { /* separate slots: 8 bytes apart */
            uint64_t v = 100 + i;
            RANK_OK(rmx_put(win, &v, 8, 1, 16 * i));
        }
        uint64_t again = 7;
        RANK_OK(rmx_put(win, &again, 8, 1, 0)); /* the same slot again: last writer wins */
        unsigned char big[BIG], inside[24];
        memset(big, 0xab, sizeof(big));
        memset(inside, 0xcd, sizeof(inside));
        uint64_t small = 0x1111;
        RANK_OK(rmx_put(win, &small, 8, 1, BIG_AT + 64));     /* then a large put over it */
        RANK_OK(rmx_put(win, big, BIG, 1, BIG_AT));
        RANK_OK(rmx_put(win, inside, sizeof(inside), 1, BIG_AT + 100)); /* inside the large */
        unsigned char back[BIG];
        RANK_OK(rmx_get(win, back, BIG, 1, BIG_AT)); /* sees both: program order */
        for (int i = 0; i < BIG; i++)
            RANK_ASSERT(back[i] == (i >= 100 && i < 124 ? 0xcd : 0xab), "byte %d: %#x", i,
                        back[i]);
        uint64_t one = 1, old = 0;
        RANK_OK(rmx_rmw(win, &one, 1, RMX_UINT64, &old, 1, 16, 0, RMX_OP_SUM));
        RANK_ASSERT(old == 101, "fetch-add after a put to its word saw %llu", U(old));
        RANK_OK(rmx_sync_memory(ctx));
        uint64_t flag = 1;
        RANK_OK(rmx_put(win, &flag, 8, 1, FLAG_AT));
        RANK_OK(rmx_sync_memory(ctx));
        rmx_stats_t st = stats_of(ctx);
        if (windows_mappable()) {
            RANK_ASSERT(st.landed_puts > 0 && st.landed_puts == st.ucp_puts,
                        "landed %llu of %llu UCP puts", U(st.landed_puts), U(st.ucp_puts));
            RANK_ASSERT(st.flushes_ep + st.flushes_worker == 0 && st.fences == 0 &&
                            st.flow_waits == 0,
                        "flushes %llu, fences %llu, flow waits %llu for puts that landed",
                        U(st.flushes_ep + st.flushes_worker), U(st.fences), U(st.flow_waits));
        } else {
            RANK_ASSERT(st.landed_puts == 0 && st.flushes_ep + st.flushes_worker > 0,
                        "landed %llu, flushes %llu without a mapping", U(st.landed_puts),
                        U(st.flushes_ep + st.flushes_worker));
        }
    } else {
        usleep(200 * 1000); /* busy elsewhere while rank 0 writes */
        volatile uint64_t *flag = (volatile uint64_t *)(void *)(w + FLAG_AT);
        double until = now_s() + 20;
        while (*flag != 1 && now_s() < until)
            usleep(1000); /* not in rmx: the agent, or nothing at all, must have served them */
        RANK_ASSERT(*flag == 1, "the flag never arrived");
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        uint64_t slot;
        for (uint64_t i = 0; i < SLOTS; i++) {
            memcpy(&slot, w + 16 * i, 8);
            uint64_t want = i == 0 ? 7 : i == 1 ? 102 : 100 + i;
            RANK_ASSERT(slot == want, "slot %llu: %llu, want %llu", U(i), U(slot), U(want));
            memcpy(&slot, w + 16 * i + 8, 8);
            RANK_ASSERT(slot == 0, "between slots %llu: %llu", U(i), U(slot));
        }
        for (int i = 0; i < BIG; i++)
            RANK_ASSERT(w[BIG_AT + i] == (i >= 100 && i < 124 ? 0xcd : 0xab), "byte %d", i);
    }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(direct, switched_off_puts_ucx_copies_land_when_issued_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_landed, NULL);
}

/* Every rank hammers one counter with fetch-INC and a lock-protected plain read-modify-write,
 * both at rank 1.  rank0_off: rank 0 alone has direct access off, so no rank may use CPU atomics
 * (UCP's and the CPU's need not be atomic with each other); else all are on and the ranks that
 * map rank 1 use them.  Both counters must be exact either way. */
enum { ITERS = 3000 };
typedef struct contention {
    int rank0_off;
} contention_t;

static int rank_contend(const rmx_config_t *base, void *arg)
{
    const contention_t *c = arg;
    rmx_config_t cfg = *base;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&cfg, &ctx)); /* a first context, to learn this rank's number */
    cfg.direct = c->rank0_off && rmx_rank(ctx) == 0 ? RMX_DIRECT_OFF : RMX_DIRECT_ON;
    RANK_OK(rmx_finalize(ctx));
    RANK_OK(rmx_init(&cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *w;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&w, &win));
    RANK_OK(rmx_sync_all(ctx));
    for (int i = 0; i < ITERS; i++) {
        uint64_t old;
        RANK_OK(rmx_rmw(win, NULL, 1, RMX_UINT64, i % 2 ? &old : NULL, 1, 0, 0, RMX_OP_INC));
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 1, 0)); /* the lock words' atomics */
        uint64_t v;
        RANK_OK(rmx_get(win, &v, sizeof(v), 1, 8));
        v++;
        RANK_OK(rmx_put(win, &v, sizeof(v), 1, 8));
        RANK_OK(rmx_win_unlock(win, 1));
    }
    RANK_OK(rmx_sync_all(ctx));
    rmx_stats_t st = stats_of(ctx);
    if (c->rank0_off)
        RANK_ASSERT(st.direct_amos == 0, "rank %d did %llu CPU atomics although rank 0 has "
                    "direct access off", me, U(st.direct_amos));
    else if (shm_transports() && me != 1)
        RANK_ASSERT(st.direct_amos >= ITERS, "rank %d: %llu CPU atomics", me, U(st.direct_amos));
    if (me == 1)
        RANK_ASSERT(w[0] == (uint64_t)n * ITERS && w[1] == (uint64_t)n * ITERS,
                    "counters %llu %llu, want %llu", U(w[0]), U(w[1]), U((uint64_t)n * ITERS));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(direct, one_rank_off_means_no_cpu_atomics_anywhere_3_ranks, .timeout = RMX_T(120))
{
    contention_t c = {.rank0_off = 1};
    run_ranks(3, rank_contend, &c);
}

Test(direct, cpu_atomics_and_locks_exact_under_contention_4_ranks, .timeout = RMX_T(120))
{
    contention_t c = {.rank0_off = 0};
    run_ranks(4, rank_contend, &c);
}

/* Copies at every relative placement of the two sides (rmx_direct_copy takes another loop when
 * they are a few bytes apart modulo 4 KiB), lengths around its 2 KiB threshold and beyond:
 * every byte lands, none beside. */
static int rank_copy_placements(const rmx_config_t *base, void *arg)
{
    (void)arg;
    rmx_config_t cfg = *base;
    cfg.direct = RMX_DIRECT_ON;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&cfg, &ctx));
    int me = rmx_rank(ctx);
    enum { SPAN = 1 << 17 };
    unsigned char *w;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, SPAN + 8192, (void **)&w, &win));
    /* page-aligned, like the window: the placements below are then exact */
    unsigned char *srcbuf = aligned_alloc(4096, SPAN + 8192);
    unsigned char *dstbuf = aligned_alloc(4096, SPAN + 8192);
    RANK_ASSERT(srcbuf != NULL && dstbuf != NULL);
    static const size_t lens[] = {64, 2047, 2048, 2049, 4096, 4096 + 37, 65536 + 5};
    static const size_t disps[] = {0, 1, 100, 4090};
    /* local side this many bytes before (put) or after (get) the window bytes, modulo 4 KiB */
    static const size_t shifts[] = {0, 1, 8, 16, 48, 63, 64, 100, 127, 128, 4000, 4090};
    int round = 0;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
        for (size_t k = 0; k < sizeof(disps) / sizeof(disps[0]) * 12; k++, round++) {
            size_t len = lens[li], disp = disps[k / 12], at = (disp + shifts[k % 12]) % 4096;
            memset(w, 0, SPAN + 8192);
            RANK_OK(rmx_sync_all(ctx));
            if (me == 0) {
                fill_pattern(srcbuf + at, len, 0, round);
                RANK_OK(rmx_put(win, srcbuf + at, len, 1, disp));
                memset(dstbuf, 0xee, SPAN + 8192);
                RANK_OK(rmx_get(win, dstbuf + at, len, 1, disp)); /* sees the put */
                RANK_ASSERT(check_pattern(dstbuf + at, len, 0, round) == len,
                            "len %zu disp %zu at %zu: got a wrong byte", len, disp, at);
                RANK_ASSERT(dstbuf[at + len] == 0xee && (at == 0 || dstbuf[at - 1] == 0xee),
                            "len %zu disp %zu at %zu: a get wrote beside", len, disp, at);
            }
            RANK_OK(rmx_sync_all(ctx));
            if (me == 1) {
                RANK_ASSERT(check_pattern(w + disp, len, 0, round) == len, "len %zu disp %zu",
                            len, disp);
                RANK_ASSERT(w[disp + len] == 0 && (disp == 0 || w[disp - 1] == 0),
                            "len %zu disp %zu: a put wrote beside", len, disp);
            }
        }
    }
    free(srcbuf);
    free(dstbuf);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(direct, copies_land_exactly_at_every_placement_2_ranks, .timeout = RMX_T(120))
{
    run_ranks(2, rank_copy_placements, NULL);
}

/* The downward copy (engine/copy.c) at every vector width this CPU runs, against memcpy: every
 * length around its vector multiples, both sides at every offset within a vector: every byte
 * lands, none beside. */
Test(direct, downward_copies_equal_memcpy_at_every_width)
{
    enum { SPAN = 66 * 1024, PAD = 128 }; /* both multiples of 64: aligned_alloc's rule */
    unsigned char *src = aligned_alloc(64, SPAN + 2 * PAD), *dst = aligned_alloc(64, SPAN + 2 * PAD);
    unsigned char *want = malloc(SPAN + 2 * PAD);
    cr_assert(src != NULL && dst != NULL && want != NULL);
    for (size_t i = 0; i < SPAN + 2 * PAD; i++)
        src[i] = (unsigned char)(i * 131u + 7u);
    static const size_t lens[] = {0, 1, 31, 32, 33, 127, 128, 129, 255, 256, 257, 511, 1000,
                                  2048, 4096 + 37, 65536 + 5};
    static const size_t offs[] = {0, 1, 15, 16, 31, 32, 33, 63};
    int widths = 0;
    for (int isa = RMX_COPY_PLAIN; isa <= (int)rmx_copy_best_isa(); isa++, widths++)
        for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
            for (size_t a = 0; a < sizeof(offs) / sizeof(offs[0]); a++)
                for (size_t b = 0; b < sizeof(offs) / sizeof(offs[0]); b++) {
                    size_t len = lens[li], at = PAD + offs[a], from = PAD + offs[b] + 7 * a;
                    memset(dst, 0xee, SPAN + 2 * PAD);
                    memset(want, 0xee, SPAN + 2 * PAD);
                    memcpy(want + at, src + from, len);
                    rmx_copy_down_isa((rmx_copy_isa_t)isa, dst + at, src + from, len);
                    cr_assert(memcmp(dst, want, SPAN + 2 * PAD) == 0,
                              "width %d len %zu dst +%zu src +%zu: a byte differs", isa, len,
                              at, from);
                }
    cr_log_info("downward copies checked at %d widths", widths);
    free(src);
    free(dst);
    free(want);
}

Test(direct, bad_setting_is_refused)
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.bootstrap = RMX_BOOT_SINGLE;
    cfg.direct = (rmx_direct_t)7;
    rmx_ctx_t *ctx = NULL;
    cr_assert_eq(rmx_init(&cfg, &ctx), RMX_ERR_ARG);
    cfg.direct = RMX_DIRECT_ENV;
    setenv("RMX_DIRECT", "yes", 1);
    cr_assert_eq(rmx_init(&cfg, &ctx), RMX_ERR_ARG);
    unsetenv("RMX_DIRECT");
    cr_assert_null(ctx);
}
