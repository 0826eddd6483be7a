/* test_sync.c — sync_all (UCP barrier) and sync_images (pairwise, Fortran semantics). */
#include <time.h>
#include "harness.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Round after round, every rank stamps its slot at every rank, then the barrier: each rank must
 * see this round's stamp from everyone (a barrier that let anyone through early would show). */
static int rank_barrier_rounds(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *slots;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, sizeof(uint64_t) * (size_t)n, (void **)&slots, &win));
    for (uint64_t round = 1; round <= 200; round++) {
        if (round % 50 == (uint64_t)me)
            sleep_ms(20); /* a straggler */
        for (int t = 0; t < n; t++)
            RANK_OK(rmx_put(win, &round, sizeof(round), t, sizeof(uint64_t) * (size_t)me));
        RANK_OK(rmx_sync_all(ctx));
        for (int w = 0; w < n; w++)
            RANK_ASSERT(slots[w] == round, "round %llu: slot %d holds %llu",
                        (unsigned long long)round, w, (unsigned long long)slots[w]);
        RANK_OK(rmx_sync_all(ctx)); /* nobody overwrites before everyone checked */
    }
    rmx_stats_t st;
    RANK_OK(rmx_stats(ctx, &st));
    RANK_ASSERT(st.barriers == 400, "barriers %llu", (unsigned long long)st.barriers);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(sync, sync_all_is_a_barrier_3_ranks, .timeout = RMX_T(60)) { run_ranks(3, rank_barrier_rounds, NULL); }
Test(sync, sync_all_is_a_barrier_4_ranks, .timeout = RMX_T(60)) { run_ranks(4, rank_barrier_rounds, NULL); }

/* Pairs (0,1) and (2,3) sync with each other only; the pair's put is visible after the sync.
 * Rank 2 dawdles: ranks 0 and 1 must not be held up by it (they never name it). */
static int rank_pairs(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    int partner = me ^ 1;
    uint64_t *slot;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, sizeof(uint64_t), (void **)&slot, &win));
    double t0 = now_s();
    for (uint64_t round = 1; round <= 300; round++) {
        if (me == 2 && round == 1)
            sleep_ms(1500);
        uint64_t v = round * 10 + (uint64_t)me;
        RANK_OK(rmx_put(win, &v, sizeof(v), partner, 0));
        RANK_OK(rmx_sync_images(ctx, &partner, 1));
        RANK_ASSERT(*slot == round * 10 + (uint64_t)partner, "round %llu: %llu",
                    (unsigned long long)round, (unsigned long long)*slot);
        RANK_OK(rmx_sync_images(ctx, &partner, 1));
    }
    double took = now_s() - t0;
    if (me < 2)
        RANK_ASSERT(took < 1.4, "pair (0,1) waited %.2f s for an image it never named", took);
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(sync, sync_images_pairs_are_independent_4_ranks, .timeout = RMX_T(60)) { run_ranks(4, rank_pairs, NULL); }

/* Rank 0 syncs with everyone (the list form and the NULL form); the others name rank 0 only. */
static int rank_star(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *slots;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, sizeof(uint64_t) * (size_t)n, (void **)&slots, &win));
    int all[16];
    for (int i = 0; i < n; i++)
        all[i] = i;
    int zero = 0;
    for (uint64_t round = 1; round <= 100; round++) {
        if (me != 0) {
            RANK_OK(rmx_put(win, &round, sizeof(round), 0, sizeof(uint64_t) * (size_t)me));
            RANK_OK(rmx_sync_images(ctx, &zero, 1));
        } else {
            RANK_OK(round % 2 ? rmx_sync_images(ctx, all, n) : rmx_sync_images(ctx, NULL, 0));
            for (int w = 1; w < n; w++)
                RANK_ASSERT(slots[w] == round);
        }
        if (me != 0)
            RANK_OK(rmx_sync_images(ctx, &zero, 1));
        else
            RANK_OK(rmx_sync_images(ctx, NULL, 0));
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(sync, sync_images_star_4_ranks, .timeout = RMX_T(60)) { run_ranks(4, rank_star, NULL); }

/* ---------------------------------------------------------------- a rank that stops */

/* Rank `last` finalizes (Fortran: STOP) while the others go on.  Its finalize must not pass for
 * their sync_all: those return RMX_ERR_STOPPED, every time; its window stays readable until all
 * ranks have finalized; syncs that do not involve it keep working; and then every finalize
 * returns RMX_OK. */
static int rank_one_stops(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx), last = n - 1;
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    base[0] = 1000 + (uint64_t)me;
    RANK_OK(rmx_peer_status(ctx, last)); /* before the sync_all it cannot have stopped */
    RANK_RC(RMX_ERR_RANK, rmx_peer_status(ctx, n));
    RANK_OK(rmx_sync_all(ctx));
    if (me == last) {
        RANK_OK(rmx_finalize(ctx)); /* returns once the others have finalized too */
        return 0;
    }
    RANK_RC(RMX_ERR_STOPPED, rmx_sync_all(ctx));
    RANK_RC(RMX_ERR_STOPPED, rmx_peer_status(ctx, last));
    RANK_OK(rmx_peer_status(ctx, me));
    RANK_RC(RMX_ERR_STOPPED, rmx_sync_all(ctx)); /* still: it never comes back */
    RANK_RC(RMX_ERR_STOPPED, rmx_sync_images(ctx, &last, 1));
    uint64_t got = 0;
    RANK_OK(rmx_get(win, &got, sizeof(got), last, 0)); /* its data remain reachable */
    RANK_ASSERT(got == 1000 + (uint64_t)last, "the stopped rank's word reads %llu",
                (unsigned long long)got);
    /* the ranks still running synchronize among themselves */
    int others[64], k = 0;
    for (int r = 0; r < last; r++)
        if (r != me)
            others[k++] = r;
    uint64_t v = (uint64_t)me;
    RANK_OK(rmx_put(win, &v, sizeof(v), (me + 1) % last, 8));
    RANK_OK(rmx_sync_images(ctx, others, k));
    uint64_t from_left = (uint64_t)((me + last - 1) % last);
    RANK_ASSERT(last < 2 || base[1] == from_left, "put among runners: %llu",
                (unsigned long long)base[1]);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(sync, a_finalizing_rank_is_not_matched_by_sync_all_3_ranks, .timeout = RMX_T(60))
{
    run_ranks(3, rank_one_stops, NULL);
}

Test(sync, a_finalizing_rank_is_not_matched_by_sync_all_5_ranks, .timeout = RMX_T(60))
{
    run_ranks(5, rank_one_stops, NULL);
}

/* A notification sent just before finalize still counts: rank 1 syncs with 0 and stops at
 * once, rank 0 gets there late and must see the sync, not the stop. */
static int rank_syncs_then_stops(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), other = 1 - me;
    if (me == 0)
        sleep_ms(200);
    RANK_OK(rmx_sync_images(ctx, &other, 1));
    if (me == 0) {
        sleep_ms(100); /* rank 1 has stopped by now */
        RANK_RC(RMX_ERR_STOPPED, rmx_peer_status(ctx, 1));
        RANK_RC(RMX_ERR_STOPPED, rmx_sync_images(ctx, &other, 1));
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(sync, sync_images_just_before_finalize_still_counts, .timeout = RMX_T(60))
{
    run_ranks(2, rank_syncs_then_stops, NULL);
}
