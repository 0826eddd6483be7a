/*
 * test_tracker.c — the segment tracker's decisions, checked through rmx_stats between real
 * processes: coalescing of adjacent small puts, one flush per segment, flow-dependency waits
 * only on overlap, fences (not waits) between overlapping puts, atomics ordered after puts, and
 * sync_images completing everything (segment order is transitive).
 */
#include "harness.h"

/* What a rank function is told: how to configure coalescing. */
typedef struct mode {
    int coalesce_disable;
    size_t coalesce_max; /* 0: default */
    int descending;      /* rank_adjacent_puts: issue the puts from the top down */
    int lonely_first;    /* rank_adjacent_puts: first 10 segments of one put each */
} mode_t_;

static const mode_t_ coalescing_on = {0, 0, 0, 0};
static const mode_t_ coalescing_off = {1, 0, 0, 0};
static const mode_t_ coalescing_on_descending = {0, 0, 1, 0};
static const mode_t_ coalescing_on_after_lonely_segments = {0, 0, 0, 1};

static rmx_ctx_t *init_mode(const rmx_config_t *base, const void *arg)
{
    rmx_config_t cfg = *base;
    cfg.direct = RMX_DIRECT_OFF; /* the tracker's decisions on the UCP path are what is counted */
    /* Registered pages, not UCP-allocated memory: where UCX maps the latter here (shared
     * memory), its puts are copies that land when issued and the tracker has nothing to decide
     * (test_direct: switched_off_puts_ucx_copies_land_when_issued). */
    cfg.window_memory = RMX_WIN_MEMORY_USER;
    const mode_t_ *m = arg;
    if (m != NULL) {
        cfg.coalesce_disable = m->coalesce_disable;
        if (m->coalesce_max != 0)
            cfg.coalesce_max = m->coalesce_max;
    }
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&cfg, &ctx));
    return ctx;
}

static rmx_stats_t stats_of(rmx_ctx_t *ctx)
{
    rmx_stats_t st;
    RANK_OK(rmx_stats(ctx, &st));
    return st;
}

#define U(x) ((unsigned long long)(x))

/* ---------------------------------------------------------------- coalescing and flushes */

/* 1000 8-byte puts to adjacent bytes of the right neighbour, then sync_all. */
static int rank_adjacent_puts(const rmx_config_t *cfg, void *arg)
{
    const mode_t_ *m = arg;
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 1000 * sizeof(uint64_t), (void **)&base, &win));
    /* Segments of a single put make later puts bypass staging (engine/tracker.c): coalescing
     * must come back as soon as puts touch each other again. */
    for (int seg = 0; m->lonely_first && seg < 10; seg++) {
        uint64_t v = 0;
        RANK_OK(rmx_put(win, &v, sizeof(v), right, 0));
        RANK_OK(rmx_sync_memory(ctx));
    }
    RANK_OK(rmx_stats_reset(ctx));
    for (uint64_t k = 0; k < 1000; k++) {
        uint64_t i = m->descending ? 999 - k : k;
        uint64_t v = (uint64_t)me << 32 | i;
        RANK_OK(rmx_put(win, &v, sizeof(v), right, i * sizeof(v)));
    }
    RANK_OK(rmx_sync_all(ctx));
    rmx_stats_t st = stats_of(ctx);
    RANK_ASSERT(st.puts == 1000, "puts %llu", U(st.puts));
    if (m->coalesce_disable) {
        RANK_ASSERT(st.ucp_puts == 1000, "ucp_puts %llu", U(st.ucp_puts));
        RANK_ASSERT(st.puts_coalesced == 0, "coalesced %llu", U(st.puts_coalesced));
    } else {
        /* 8000 bytes: two staged runs of at most 4 KiB, plus (lonely_first) the first put,
         * which goes out alone before the second one shows that puts touch again. */
        RANK_ASSERT(st.ucp_puts <= 2u + (unsigned)m->lonely_first, "ucp_puts %llu",
                    U(st.ucp_puts));
        RANK_ASSERT(st.ucp_puts + st.puts_coalesced == 1000, "ucp_puts %llu + coalesced %llu",
                    U(st.ucp_puts), U(st.puts_coalesced));
    }
    RANK_ASSERT(st.flushes_ep == 1 && st.flushes_worker == 0, "flushes ep %llu worker %llu",
                U(st.flushes_ep), U(st.flushes_worker));
    RANK_ASSERT(st.fences == 0 && st.flow_waits == 0, "fences %llu waits %llu", U(st.fences),
                U(st.flow_waits));
    for (uint64_t i = 0; i < 1000; i++)
        RANK_ASSERT(base[i] == ((uint64_t)left << 32 | i), "word %llu: %llx", U(i), U(base[i]));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, adjacent_8B_puts_coalesce_to_2_ucp_puts_1_flush, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_adjacent_puts, (void *)&coalescing_on, NULL, 60);
}

Test(tracker, descending_adjacent_puts_coalesce_too, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_adjacent_puts, (void *)&coalescing_on_descending, NULL, 60);
}

Test(tracker, adjacent_puts_coalesce_after_segments_of_one_put, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_adjacent_puts, (void *)&coalescing_on_after_lonely_segments, NULL, 60);
}

Test(tracker, coalescing_disabled_issues_1000_ucp_puts, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_adjacent_puts, (void *)&coalescing_off, NULL, 60);
}

/* A passive epoch is a segment too: 1000 adjacent puts inside lock/unlock leave as at most two
 * UCP puts, and unlock completes them with one endpoint flush. */
static int rank_epoch_puts(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 1000 * sizeof(uint64_t), (void **)&base, &win));
    RANK_OK(rmx_stats_reset(ctx));
    RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, right, 0));
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t v = (uint64_t)me << 32 | i;
        RANK_OK(rmx_put(win, &v, sizeof(v), right, i * sizeof(v)));
    }
    RANK_OK(rmx_win_unlock(win, right));
    rmx_stats_t st = stats_of(ctx);
    RANK_ASSERT(st.ucp_puts <= 2 && st.flushes_ep == 1 && st.flushes_worker == 0,
                "ucp_puts %llu flushes ep %llu worker %llu", U(st.ucp_puts), U(st.flushes_ep),
                U(st.flushes_worker));
    RANK_OK(rmx_sync_all(ctx));
    for (uint64_t i = 0; i < 1000; i++)
        RANK_ASSERT(base[i] == ((uint64_t)left << 32 | i), "word %llu", U(i));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, lock_epoch_puts_coalesce_unlock_flushes_once, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_epoch_puts, (void *)&coalescing_on, NULL, 60);
}

/* Puts to several targets end with one worker flush, not one flush per put or per target. */
static int rank_all_targets(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 100 * sizeof(uint64_t) * (size_t)n, (void **)&base, &win));
    RANK_OK(rmx_stats_reset(ctx));
    for (uint64_t i = 0; i < 100; i++)
        for (int t = 0; t < n; t++) {
            uint64_t v = (uint64_t)me << 32 | i;
            RANK_OK(rmx_put(win, &v, sizeof(v), t, ((size_t)me * 100 + i) * sizeof(v)));
        }
    RANK_OK(rmx_sync_all(ctx));
    rmx_stats_t st = stats_of(ctx);
    /* Puts to this rank itself are local copies at once (rmx.h "Self"): one run per other target. */
    RANK_ASSERT(st.ucp_puts == (uint64_t)n - 1 && st.puts_self == 100,
                "ucp_puts %llu (one run per other target), puts_self %llu", U(st.ucp_puts),
                U(st.puts_self));
    RANK_ASSERT(st.flushes_worker == 1 && st.flushes_ep == 0, "flushes ep %llu worker %llu",
                U(st.flushes_ep), U(st.flushes_worker));
    for (int w = 0; w < n; w++)
        for (uint64_t i = 0; i < 100; i++)
            RANK_ASSERT(base[(size_t)w * 100 + i] == ((uint64_t)w << 32 | i));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, interleaved_targets_coalesce_per_target_one_worker_flush, .timeout = RMX_T(60))
{
    run_ranks_cfg(3, rank_all_targets, (void *)&coalescing_on, NULL, 60);
}

/* ---------------------------------------------------------------- flow dependencies */

#define SMALL 64
#define LARGE 8192 /* above the default coalesce_max: issued at once */

/* Put to [0, len) of the right neighbour, get [16 KiB, +len): no wait, whatever the put size. */
static int rank_disjoint_get(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int right = (me + 1) % n;
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 32768, (void **)&base, &win));
    static unsigned char out[LARGE], in[LARGE];
    const size_t lens[] = {SMALL, LARGE};
    for (int k = 0; k < 2; k++) {
        size_t len = lens[k];
        RANK_OK(rmx_sync_all(ctx));
        RANK_OK(rmx_stats_reset(ctx));
        fill_pattern(out, len, me, k);
        RANK_OK(rmx_put(win, out, len, right, 0));
        RANK_OK(rmx_get(win, in, len, right, 16384));
        rmx_stats_t st = stats_of(ctx);
        RANK_ASSERT(st.flow_waits == 0 && st.waits_avoided == 1, "len %zu: waits %llu avoided %llu",
                    len, U(st.flow_waits), U(st.waits_avoided));
        RANK_ASSERT(st.flushes_ep == 0 && st.flushes_worker == 0, "len %zu", len);
        RANK_ASSERT(st.ucp_puts == (len == LARGE ? 1u : 0u), "len %zu: ucp_puts %llu", len,
                    U(st.ucp_puts));
        for (size_t i = 0; i < len; i++)
            RANK_ASSERT(in[i] == 0, "len %zu: byte %zu of untouched bytes is %d", len, i, in[i]);
        RANK_OK(rmx_sync_all(ctx));
        int left = (me + n - 1) % n;
        RANK_ASSERT(check_pattern(base, len, left, k) == len, "len %zu", len);
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, put_get_disjoint_bytes_no_wait, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_disjoint_get, (void *)&coalescing_on, NULL, 60);
}

/* Put, then get of bytes inside it: exactly one wait per round and the get sees the put.  A
 * small put is still staged when the get comes: the get must issue it first. */
static int rank_overlapping_get(const rmx_config_t *cfg, void *arg)
{
    const mode_t_ *m = arg;
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int right = (me + 1) % n;
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 32768, (void **)&base, &win));
    static unsigned char out[LARGE], in[LARGE];
    const size_t lens[] = {SMALL, LARGE};
    for (int round = 0; round < 40; round++) {
        size_t len = lens[round % 2];
        RANK_OK(rmx_sync_all(ctx));
        RANK_OK(rmx_stats_reset(ctx));
        fill_pattern(out, len, me, round);
        RANK_OK(rmx_put(win, out, len, right, 100));
        rmx_stats_t st = stats_of(ctx);
        int staged = !m->coalesce_disable && len == SMALL;
        RANK_ASSERT(st.ucp_puts == (staged ? 0u : 1u), "ucp_puts %llu", U(st.ucp_puts));
        RANK_OK(rmx_get(win, in, len / 2, right, 100 + len / 4));
        st = stats_of(ctx);
        RANK_ASSERT(st.flow_waits == 1 && st.flushes_ep == 1, "len %zu: waits %llu flushes %llu",
                    len, U(st.flow_waits), U(st.flushes_ep));
        RANK_ASSERT(st.ucp_puts == 1, "len %zu: the staged put was not issued", len);
        RANK_ASSERT(memcmp(in, out + len / 4, len / 2) == 0, "round %d: get missed the put", round);
        /* Completed by the get: the segment end has nothing left to flush. */
        RANK_OK(rmx_sync_memory(ctx));
        st = stats_of(ctx);
        RANK_ASSERT(st.flushes_ep == 1 && st.flushes_worker == 0);
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, put_then_overlapping_get_one_wait_sees_data, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_overlapping_get, (void *)&coalescing_on, NULL, 60);
}

Test(tracker, put_then_overlapping_get_one_wait_uncoalesced, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_overlapping_get, (void *)&coalescing_off, NULL, 60);
}

/* ---------------------------------------------------------------- put after put */

typedef struct overlap_case {
    mode_t_ mode;
    size_t len_a, len_b, shift; /* A = [0, len_a), B = [shift, shift+len_b) */
    uint64_t fences;            /* expected per round */
    uint64_t ucp_puts;
} overlap_case_t;

/* Put A then put B overlapping it, round after round: after the segment the target holds B where
 * B wrote and A elsewhere; the ordering cost is what the case expects. */
static int rank_put_after_put(const rmx_config_t *cfg, void *arg)
{
    const overlap_case_t *c = arg;
    rmx_ctx_t *ctx = init_mode(cfg, &c->mode);
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 1 << 18, (void **)&base, &win));
    unsigned char *a = malloc(c->len_a), *b = malloc(c->len_b);
    RANK_ASSERT(a && b);
    for (int round = 0; round < 30; round++) {
        RANK_OK(rmx_stats_reset(ctx));
        fill_pattern(a, c->len_a, me, 2 * round);
        fill_pattern(b, c->len_b, me, 2 * round + 1);
        RANK_OK(rmx_put(win, a, c->len_a, right, 0));
        RANK_OK(rmx_put(win, b, c->len_b, right, c->shift));
        RANK_OK(rmx_sync_all(ctx));
        rmx_stats_t st = stats_of(ctx);
        RANK_ASSERT(st.fences == c->fences, "fences %llu", U(st.fences));
        RANK_ASSERT(st.ucp_puts == c->ucp_puts, "ucp_puts %llu", U(st.ucp_puts));
        RANK_ASSERT(st.flow_waits == 0 && st.flushes_ep == 1);
        RANK_ASSERT(check_pattern(base, c->shift, left, 2 * round) == c->shift, "round %d", round);
        RANK_ASSERT(check_pattern(base + c->shift, c->len_b, left, 2 * round + 1) == c->len_b,
                    "round %d: B lost to A", round);
        for (size_t i = c->shift + c->len_b; i < c->len_a; i++)
            RANK_ASSERT(base[i] == pattern_byte(left, i, 2 * round), "round %d: A's byte %zu",
                        round, i);
        RANK_OK(rmx_sync_all(ctx));
    }
    free(a);
    free(b);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

static overlap_case_t small_coalesced = {{0, 0, 0, 0}, 64, 64, 32, 0, 1};
static overlap_case_t small_inside = {{0, 0, 0, 0}, 64, 16, 8, 0, 1};
static overlap_case_t small_uncoalesced = {{1, 0, 0, 0}, 64, 64, 32, 1, 2};
static overlap_case_t large_both = {{0, 0, 0, 0}, 65536, 65536, 4096, 1, 2};
static overlap_case_t large_then_small = {{0, 0, 0, 0}, 65536, 64, 1000, 1, 2};
static overlap_case_t small_then_large = {{0, 0, 0, 0}, 64, 65536, 8, 1, 2};
static overlap_case_t disjoint_large = {{0, 0, 0, 0}, 65536, 65536, 65536, 0, 2};

Test(tracker, put_after_put_coalesced_last_writer_wins, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_put_after_put, &small_coalesced, NULL, 60);
}
Test(tracker, put_after_put_coalesced_inside_last_writer_wins, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_put_after_put, &small_inside, NULL, 60);
}
Test(tracker, put_after_put_small_uncoalesced_fences, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_put_after_put, &small_uncoalesced, NULL, 60);
}
Test(tracker, put_after_put_large_fences_not_waits, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_put_after_put, &large_both, NULL, 60);
}
Test(tracker, put_after_put_staged_after_large_fences, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_put_after_put, &large_then_small, NULL, 60);
}
Test(tracker, put_after_put_large_over_staged_issues_stage_first, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_put_after_put, &small_then_large, NULL, 60);
}
Test(tracker, put_after_put_disjoint_needs_no_fence, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_put_after_put, &disjoint_large, NULL, 60);
}

/* ---------------------------------------------------------------- atomics after puts */

static uint64_t fetch_add(rmx_win_t *win, int target, size_t disp, uint64_t v)
{
    uint64_t old = 0;
    RANK_OK(rmx_rmw(win, &v, 1, RMX_UINT64, &old, target, disp, 0, RMX_OP_SUM));
    return old;
}

static void post_add(rmx_win_t *win, int target, size_t disp, uint64_t v)
{
    RANK_OK(rmx_rmw(win, &v, 1, RMX_UINT64, NULL, target, disp, 0, RMX_OP_SUM));
}

/* Put a word (staged, or inside a large issued put), add to it atomically: the add sees the put
 * after exactly one flow-dependency wait; then a non-fetching add (rmx_rmw completes it) and a
 * get that must see it, and a second atomic with nothing pending that must not wait. */
static int rank_atomic_after_put(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 2 * LARGE, (void **)&base, &win));
    static uint64_t big[LARGE / sizeof(uint64_t)];
    for (uint64_t round = 1; round <= 40; round++) {
        RANK_OK(rmx_stats_reset(ctx));
        uint64_t v = round * 1000 + (uint64_t)me;
        size_t w = (size_t)(round % 7) * 8; /* the word, a different one each round */
        if (round % 2) {
            RANK_OK(rmx_put(win, &v, sizeof(v), right, w * sizeof(uint64_t)));
        } else {
            for (size_t i = 0; i < LARGE / sizeof(uint64_t); i++)
                big[i] = v;
            RANK_OK(rmx_put(win, big, sizeof(big), right, 0));
        }
        uint64_t old = fetch_add(win, right, w * sizeof(uint64_t), 5);
        RANK_ASSERT(old == v, "round %llu: the atomic overtook the put (saw %llu)", U(round),
                    U(old));
        rmx_stats_t st = stats_of(ctx);
        RANK_ASSERT(st.flow_waits == 1, "waits %llu", U(st.flow_waits));
        post_add(win, right, w * sizeof(uint64_t), 2);
        uint64_t got;
        RANK_OK(rmx_get(win, &got, sizeof(got), right, w * sizeof(uint64_t)));
        RANK_ASSERT(got == v + 7, "round %llu: get overtook the add: %llu", U(round), U(got));
        RANK_ASSERT(fetch_add(win, right, w * sizeof(uint64_t), 0) == v + 7);
        st = stats_of(ctx);
        RANK_ASSERT(st.flow_waits == 1 && st.atomics == 3, "waits %llu atomics %llu",
                    U(st.flow_waits), U(st.atomics));
        RANK_OK(rmx_sync_all(ctx));
        RANK_ASSERT(base[w] == round * 1000 + (uint64_t)left + 7, "round %llu: %llu", U(round),
                    U(base[w]));
        RANK_OK(rmx_sync_all(ctx));
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, atomic_after_put_is_ordered_after_it, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_atomic_after_put, (void *)&coalescing_on, NULL, 60);
}

/* ---------------------------------------------------------------- staging boundaries */

/* A staged run is issued when a put goes to another window of the same target, and a get of
 * another window does not disturb it. */
static int rank_two_windows(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    uint64_t *b1, *b2;
    rmx_win_t *w1, *w2;
    RANK_OK(rmx_win_allocate(ctx, 4096, (void **)&b1, &w1));
    RANK_OK(rmx_win_allocate(ctx, 4096, (void **)&b2, &w2));
    RANK_OK(rmx_stats_reset(ctx));
    uint64_t v = 11 + (uint64_t)me, got = 99;
    RANK_OK(rmx_put(w1, &v, 8, right, 0));
    RANK_OK(rmx_put(w1, &v, 8, right, 8)); /* merged */
    RANK_OK(rmx_get(w2, &got, 8, right, 0)); /* same bytes, other window: no conflict */
    rmx_stats_t st = stats_of(ctx);
    RANK_ASSERT(got == 0 && st.ucp_puts == 0 && st.flow_waits == 0 && st.puts_coalesced == 1);
    RANK_OK(rmx_put(w2, &v, 8, right, 8)); /* other window: the w1 run goes out */
    st = stats_of(ctx);
    RANK_ASSERT(st.ucp_puts == 1, "ucp_puts %llu", U(st.ucp_puts));
    RANK_OK(rmx_win_free(&w2)); /* freeing a window completes what was staged for it */
    RANK_ASSERT(b1[0] == 11 + (uint64_t)left && b1[1] == 11 + (uint64_t)left);
    st = stats_of(ctx);
    RANK_ASSERT(st.ucp_puts == 2, "ucp_puts %llu", U(st.ucp_puts));
    RANK_OK(rmx_win_free(&w1));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, staged_run_bounded_by_window, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_two_windows, (void *)&coalescing_on, NULL, 60);
}

/* Thousands of non-adjacent puts overflow the range list: it coarsens, data stays right, a
 * rewrite of the same bytes is ordered after the first, and the segment still ends with one
 * flush. */
static int rank_scattered_puts(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    const uint64_t nputs = 3000;
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 2 * nputs * sizeof(uint64_t), (void **)&base, &win));
    RANK_OK(rmx_stats_reset(ctx));
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t i = 0; i < nputs; i++) {
            uint64_t k = (i * 7919) % nputs; /* every slot once, in scattered order */
            uint64_t v = (uint64_t)me << 40 | (uint64_t)pass << 32 | k;
            RANK_OK(rmx_put(win, &v, sizeof(v), right, 2 * k * sizeof(v)));
        }
    uint64_t gap;
    RANK_OK(rmx_get(win, &gap, sizeof(gap), right, sizeof(gap))); /* slot 1: never written */
    RANK_ASSERT(gap == 0);
    RANK_OK(rmx_sync_all(ctx));
    rmx_stats_t st = stats_of(ctx);
    RANK_ASSERT(st.ucp_puts == 2 * nputs, "ucp_puts %llu", U(st.ucp_puts));
    RANK_ASSERT(st.flushes_ep + st.flushes_worker <= 2, "flushes %llu + %llu", U(st.flushes_ep),
                U(st.flushes_worker));
    for (uint64_t k = 0; k < nputs; k++) {
        RANK_ASSERT(base[2 * k] == ((uint64_t)left << 40 | 1ull << 32 | k), "slot %llu: %llx",
                    U(k), U(base[2 * k]));
        RANK_ASSERT(base[2 * k + 1] == 0);
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, scattered_puts_overflow_range_list_safely, .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_scattered_puts, (void *)&coalescing_on, NULL, 60);
}

/* ---------------------------------------------------------------- sync_images */

/* Rank 0 puts to rank 2 then syncs with rank 1 only; rank 1 then syncs with rank 2; rank 2 must
 * see rank 0's put (segment order is transitive), although 0 and 2 never synced directly.  Rank 0
 * then waits (through rank 1) until rank 2 has looked, so nothing else completes the put first. */
static int rank_sync_images_transitive(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx);
    uint64_t *slot;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, sizeof(uint64_t), (void **)&slot, &win));
    int zero = 0, one = 1, two = 2;
    for (uint64_t round = 1; round <= 100; round++) {
        if (me == 0) {
            RANK_OK(rmx_put(win, &round, sizeof(round), 2, 0));
            RANK_OK(rmx_sync_images(ctx, &one, 1));
            RANK_OK(rmx_sync_images(ctx, &one, 1)); /* returns after rank 2 has checked */
        } else if (me == 1) {
            RANK_OK(rmx_sync_images(ctx, &zero, 1));
            RANK_OK(rmx_sync_images(ctx, &two, 1));
            RANK_OK(rmx_sync_images(ctx, &two, 1));
            RANK_OK(rmx_sync_images(ctx, &zero, 1));
        } else {
            RANK_OK(rmx_sync_images(ctx, &one, 1));
            RANK_ASSERT(*slot == round, "round %llu: slot %llu", U(round), U(*slot));
            RANK_OK(rmx_sync_images(ctx, &one, 1));
        }
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, sync_images_order_is_transitive_3_ranks, .timeout = RMX_T(60))
{
    run_ranks_cfg(3, rank_sync_images_transitive, (void *)&coalescing_on, NULL, 60);
}

/* After a walk of separate puts, puts bypass the staging buffer (no copy per put); a put that
 * then overlaps the previous one is staged again, fenced behind it, and wins. */
static int rank_walk_then_overlap(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx);
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 4096, (void **)&base, &win));
    if (me == 0) {
        uint64_t v = 7;
        for (int i = 0; i < 32; i++) /* every other 8-byte slot: nothing to coalesce */
            RANK_OK(rmx_put(win, &v, sizeof(v), 1, (size_t)i * 16));
        rmx_stats_t before = stats_of(ctx);
        RANK_ASSERT(before.puts_coalesced == 0);
        RANK_ASSERT(before.ucp_puts >= 31, "walk puts issued: %llu",
                    (unsigned long long)before.ucp_puts);
        uint64_t a[4] = {1, 1, 1, 1}, b[2] = {2, 2};
        RANK_OK(rmx_put(win, a, sizeof(a), 1, 1024));
        RANK_OK(rmx_put(win, b, sizeof(b), 1, 1024 + 8));
        RANK_OK(rmx_sync_memory(ctx));
        rmx_stats_t after = stats_of(ctx);
        RANK_ASSERT(after.fences + after.puts_coalesced - before.fences - before.puts_coalesced
                        >= 1, "the overlapping put was neither ordered nor merged");
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1) {
        uint64_t got[4];
        memcpy(got, base + 1024, sizeof(got));
        RANK_ASSERT(got[0] == 1 && got[1] == 2 && got[2] == 2 && got[3] == 1,
                    "%llu %llu %llu %llu", (unsigned long long)got[0], (unsigned long long)got[1],
                    (unsigned long long)got[2], (unsigned long long)got[3]);
        for (int i = 0; i < 32; i++)
            RANK_ASSERT(((uint64_t *)base)[2 * i] == 7 && ((uint64_t *)base)[2 * i + 1] == 0);
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, walk_of_separate_puts_then_overlap_last_writer_wins, .timeout = RMX_T(60))
{
    run_ranks(2, rank_walk_then_overlap, (void *)&coalescing_on);
}

/* A loop of one put per segment makes puts go out at once (lonely, decided inline in tracker.h):
 * such a put is still pending until its segment ends.  A get of its bytes waits for it (one flow
 * wait, one flush), and the segment end flushes it once; a put to other bytes waits for nothing. */
static int rank_lonely_puts_stay_pending(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = init_mode(cfg, arg);
    int me = rmx_rank(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 4096, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        for (int seg = 0; seg < 10; seg++) { /* lonely from here on */
            uint64_t v = (uint64_t)seg;
            RANK_OK(rmx_put(win, &v, sizeof(v), 1, (size_t)seg * 64));
            RANK_OK(rmx_sync_memory(ctx));
        }
        RANK_OK(rmx_stats_reset(ctx));
        uint64_t v = 4242, got = 0;
        RANK_OK(rmx_put(win, &v, sizeof(v), 1, 2048));
        rmx_stats_t st = stats_of(ctx);
        RANK_ASSERT(st.ucp_puts == 1 && st.puts_coalesced == 0, "ucp_puts %llu coalesced %llu",
                    U(st.ucp_puts), U(st.puts_coalesced));
        RANK_OK(rmx_get(win, &got, sizeof(got), 1, 2048 + 64)); /* other bytes: no wait */
        st = stats_of(ctx);
        RANK_ASSERT(st.flow_waits == 0 && st.flushes_ep == 0, "waits %llu flushes %llu",
                    U(st.flow_waits), U(st.flushes_ep));
        RANK_OK(rmx_get(win, &got, sizeof(got), 1, 2048)); /* its bytes: waits for it */
        st = stats_of(ctx);
        RANK_ASSERT(got == 4242 && st.flow_waits == 1 && st.flushes_ep == 1,
                    "got %llu waits %llu flushes %llu", U(got), U(st.flow_waits),
                    U(st.flushes_ep));
        RANK_OK(rmx_put(win, &v, sizeof(v), 1, 3072));
        RANK_OK(rmx_sync_memory(ctx)); /* the segment end completes it */
        st = stats_of(ctx);
        RANK_ASSERT(st.ucp_puts == 2 && st.flushes_ep == 2, "ucp_puts %llu flushes %llu",
                    U(st.ucp_puts), U(st.flushes_ep));
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1)
        RANK_ASSERT(base[2048 / 8] == 4242 && base[3072 / 8] == 4242 && base[9 * 8] == 9);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(tracker, lonely_puts_stay_pending_until_their_segment_ends, .timeout = RMX_T(60))
{
    run_ranks(2, rank_lonely_puts_stay_pending, (void *)&coalescing_on);
}
