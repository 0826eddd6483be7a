/*
 * test_lock.c — passive-target locks between real processes: exclusive locks exclude (a
 * get-modify-put counter loses no update, alone and mixed with implicit-epoch rmw), shared locks
 * admit several readers at once and exclude writers, NOCHECK takes no lock, an implicit epoch
 * waits for an explicit holder, and every misuse returns its exact code.
 *
 * Waits in these tests are bounded (a deadline turns a missing reader into a failure, not a hang)
 * and nothing asserts on time.
 */
#include <inttypes.h>
#include <sched.h>
#include "harness.h"

#define DEADLINE_S 20.0

/* Read a uint64 word of target atomically. */
static uint64_t fetch_word(rmx_win_t *win, int target, size_t disp)
{
    uint64_t v;
    RANK_OK(rmx_rmw(win, NULL, 1, RMX_UINT64, &v, target, disp, 0, RMX_OP_NO_OP));
    return v;
}

static uint64_t add_word(rmx_win_t *win, int target, size_t disp, int64_t delta)
{
    uint64_t old;
    RANK_OK(rmx_rmw(win, &delta, 1, RMX_INT64, &old, target, disp, 0, RMX_OP_SUM));
    return old;
}

/* ---- exclusive: get, add one, put, under the lock; then the same mixed with implicit epochs */
#define GMP_ITERS 1000

static int rank_get_modify_put(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    /* phase 1: every rank does get-modify-put under an explicit exclusive lock */
    for (int i = 0; i < GMP_ITERS; i++) {
        uint64_t v;
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0));
        RANK_ASSERT(add_word(win, 0, 8, 1) == 0, "another rank is inside the exclusive lock");
        RANK_OK(rmx_get(win, &v, 8, 0, 0));
        if (i % 4 == 0)
            sched_yield(); /* widen the window a missing lock would let others into */
        v++;
        RANK_OK(rmx_put(win, &v, 8, 0, 0));
        add_word(win, 0, 8, -1);
        RANK_OK(rmx_win_unlock(win, 0));
    }
    RANK_OK(rmx_sync_all(ctx));
    uint64_t want = (uint64_t)n * GMP_ITERS;
    if (me == 0)
        RANK_ASSERT(base[0] == want, "phase 1: counter %" PRIu64 ", want %" PRIu64, base[0], want);
    RANK_OK(rmx_sync_all(ctx)); /* nobody starts phase 2 before rank 0 has looked */
    /* phase 2: even ranks keep doing get-modify-put, odd ranks INC with an implicit epoch
     * (exclusive lock; op; unlock): an implicit INC that took no lock would be overwritten */
    for (int i = 0; i < GMP_ITERS; i++) {
        if (me % 2 == 0) {
            uint64_t v;
            RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0));
            RANK_OK(rmx_get(win, &v, 8, 0, 0));
            v++;
            RANK_OK(rmx_put(win, &v, 8, 0, 0));
            RANK_OK(rmx_win_unlock(win, 0));
        } else {
            RANK_OK(rmx_rmw(win, NULL, 1, RMX_UINT64, NULL, 0, 0,
                            RMX_MODE_PASSIVE_EPOCH_IMPLICIT, RMX_OP_INC));
        }
    }
    rmx_stats_t st;
    RANK_OK(rmx_stats(ctx, &st));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0)
        RANK_ASSERT(base[0] == 2 * want, "phase 2: counter %" PRIu64 ", want %" PRIu64, base[0],
                    2 * want);
    fprintf(stderr, "[smoke] lock rank %d: %" PRIu64 " lock back-off rounds\n", me,
            st.lock_retries);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(lock, exclusive_get_modify_put_loses_no_update_4_ranks, .timeout = RMX_T(120))
{
    run_ranks(4, rank_get_modify_put, NULL);
}

/* ---- shared: two readers are inside at the same time ---------------------------------- */
/* Ranks 1 and 2 take a shared lock on rank 0, say so, and wait (bounded) until both are in
 * before either leaves.  Were the lock exclusive, the second could never enter. */
static int rank_two_readers(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    for (int round = 1; round <= 20; round++) {
        if (me != 0) {
            RANK_OK(rmx_win_lock(win, RMX_LOCK_SHARED, 0, 0));
            add_word(win, 0, 0, 1);
            double until = now_s() + DEADLINE_S;
            while (fetch_word(win, 0, 0) < 2u * (unsigned)round)
                RANK_ASSERT(now_s() < until, "round %d: the other reader never got in", round);
            RANK_OK(rmx_win_unlock(win, 0));
        }
        RANK_OK(rmx_sync_all(ctx));
    }
    if (me == 0)
        RANK_ASSERT(base[0] == 40);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(lock, shared_admits_two_readers_at_once, .timeout = RMX_T(120))
{
    run_ranks(3, rank_two_readers, NULL);
}

/* ---- readers and writers: no writer beside anyone, readers beside readers only -------- */
#define RW_ITERS 300

static int rank_readers_writers(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    const size_t WRITERS = 0, READERS = 8;
    int writer = me < 2; /* ranks 0, 1 write; 2, 3 read; all on rank 0's lock */
    for (int i = 0; i < RW_ITERS; i++) {
        if (writer) {
            RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0));
            RANK_ASSERT(add_word(win, 0, WRITERS, 1) == 0, "two writers inside");
            RANK_ASSERT(fetch_word(win, 0, READERS) == 0, "a reader beside a writer");
            add_word(win, 0, WRITERS, -1);
        } else {
            RANK_OK(rmx_win_lock(win, RMX_LOCK_SHARED, 0, 0));
            add_word(win, 0, READERS, 1);
            RANK_ASSERT(fetch_word(win, 0, WRITERS) == 0, "a writer beside a reader");
            add_word(win, 0, READERS, -1);
        }
        RANK_OK(rmx_win_unlock(win, 0));
    }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(lock, readers_exclude_writers_4_ranks, .timeout = RMX_T(120))
{
    run_ranks(4, rank_readers_writers, NULL);
}

/* ---- an implicit epoch waits for an explicit holder; NOCHECK does not take the word ---- */
/* Rank 0 holds the exclusive lock on itself, lets rank 1 start, then after a pause writes 100
 * and unlocks.  Rank 1's implicit-epoch INC can only run after the unlock, so it fetches 100.
 * Meanwhile rank 1 also takes a NOCHECK lock and does an IMPLICIT|NOCHECK rmw on another word:
 * both must go through while rank 0 still holds the lock (rank 0 waits for them to land). */
static int rank_implicit_waits(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0));
        RANK_OK(rmx_sync_all(ctx)); /* rank 1 may go */
        double until = now_s() + DEADLINE_S;
        while (fetch_word(win, 0, 16) < 2) /* rank 1's two NOCHECK updates, under my lock */
            RANK_ASSERT(now_s() < until, "NOCHECK blocked on a held lock");
        usleep(50 * 1000); /* give a lock-ignoring INC the chance to land first */
        uint64_t hundred = 100;
        RANK_OK(rmx_put(win, &hundred, 8, 0, 8));
        RANK_OK(rmx_win_unlock(win, 0));
    } else {
        RANK_OK(rmx_sync_all(ctx));
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, RMX_MODE_NOCHECK));
        add_word(win, 0, 16, 1);
        RANK_OK(rmx_win_unlock(win, 0));
        RANK_OK(rmx_rmw(win, NULL, 1, RMX_UINT64, NULL, 0, 16,
                        RMX_MODE_PASSIVE_EPOCH_IMPLICIT | RMX_MODE_NOCHECK, RMX_OP_INC));
        uint64_t old;
        RANK_OK(rmx_rmw(win, NULL, 1, RMX_UINT64, &old, 0, 8, RMX_MODE_PASSIVE_EPOCH_IMPLICIT,
                        RMX_OP_INC));
        RANK_ASSERT(old == 100, "the implicit epoch ran inside rank 0's lock: fetched %" PRIu64,
                    old);
        rmx_stats_t st;
        RANK_OK(rmx_stats(ctx, &st));
        RANK_ASSERT(st.lock_retries > 0, "the lock was held, yet no back-off was counted");
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0)
        RANK_ASSERT(base[1] == 101 && base[2] == 2);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(lock, implicit_epoch_waits_for_holder_nocheck_does_not, .timeout = RMX_T(60))
{
    run_ranks(2, rank_implicit_waits, NULL);
}

/* ---- the epoch completes its puts before releasing: a big put under the lock is whole
 * for the next holder */
static int rank_unlock_completes(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    const size_t len = 1 << 18;
    unsigned char *base, *buf = malloc(len);
    RANK_ASSERT(buf != NULL);
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, len + 64, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    /* each rank in turn (by a ticket under the lock) overwrites the block with its pattern;
     * each next holder must find the previous holder's pattern whole */
    for (int round = 0; round < 5; round++) {
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0));
        uint64_t ticket;
        RANK_OK(rmx_get(win, &ticket, 8, 0, len));
        if (ticket > 0) {
            int prev = (int)((ticket - 1) % 1000), prev_round = (int)((ticket - 1) / 1000);
            RANK_OK(rmx_get(win, buf, len, 0, 0));
            size_t bad = check_pattern(buf, len, prev, prev_round);
            RANK_ASSERT(bad == len, "previous holder's block incomplete at byte %zu", bad);
        }
        fill_pattern(buf, len, me, round);
        RANK_OK(rmx_put(win, buf, len, 0, 0));
        ticket = (uint64_t)round * 1000 + (uint64_t)me + 1;
        RANK_OK(rmx_put(win, &ticket, 8, 0, len));
        RANK_OK(rmx_win_unlock(win, 0));
    }
    RANK_OK(rmx_sync_all(ctx));
    free(buf);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(lock, unlock_completes_the_epochs_puts_4_ranks, .timeout = RMX_T(60))
{
    run_ranks(4, rank_unlock_completes, NULL);
}

/* ---- misuse: the exact code ---------------------------------------------------------- */
static int rank_lock_errors(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx), t = (me + 1) % n;
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, &base, &win));
    RANK_OK(rmx_sync_all(ctx));
    /* handles, types, asserts, ranks */
    RANK_RC(RMX_ERR_WIN, rmx_win_lock(NULL, RMX_LOCK_EXCLUSIVE, t, 0));
    RANK_RC(RMX_ERR_WIN, rmx_win_unlock(NULL, t));
    RANK_RC(RMX_ERR_ARG, rmx_win_lock(win, (rmx_lock_t)0, t, 0));
    RANK_RC(RMX_ERR_ARG, rmx_win_lock(win, (rmx_lock_t)3, t, 0));
    RANK_RC(RMX_ERR_ARG, rmx_win_lock(win, (rmx_lock_t)-1, t, 0));
    RANK_RC(RMX_ERR_ARG, rmx_win_lock(win, RMX_LOCK_SHARED, t, 0x10));
    RANK_RC(RMX_ERR_ARG, rmx_win_lock(win, RMX_LOCK_SHARED, t, RMX_MODE_PASSIVE_EPOCH_IMPLICIT));
    RANK_RC(RMX_ERR_RANK, rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, n, 0));
    RANK_RC(RMX_ERR_RANK, rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, -1, 0));
    RANK_RC(RMX_ERR_RANK, rmx_win_unlock(win, n));
    /* epochs: unlock without lock, lock twice (any mix of types), unlock twice */
    RANK_RC(RMX_ERR_EPOCH, rmx_win_unlock(win, t));
    static const rmx_lock_t types[] = {RMX_LOCK_EXCLUSIVE, RMX_LOCK_SHARED};
    for (int k = 0; k < 2; k++) {
        for (int assert = 0; assert <= RMX_MODE_NOCHECK; assert += RMX_MODE_NOCHECK) {
            RANK_OK(rmx_win_lock(win, types[k], t, assert));
            RANK_RC(RMX_ERR_EPOCH, rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, t, 0));
            RANK_RC(RMX_ERR_EPOCH, rmx_win_lock(win, RMX_LOCK_SHARED, t, 0));
            RANK_RC(RMX_ERR_EPOCH, rmx_win_lock(win, types[k], t, RMX_MODE_NOCHECK));
            /* an epoch on another target is independent.  NOCHECK: the peer may hold our
             * own word exclusively right now, waiting for it would deadlock both ranks (it
             * did under valgrind's slowdown) */
            RANK_OK(rmx_win_lock(win, RMX_LOCK_SHARED, me, RMX_MODE_NOCHECK));
            RANK_OK(rmx_win_unlock(win, me));
            /* a window with an open epoch cannot be freed */
            RANK_RC(RMX_ERR_EPOCH, rmx_win_free(&win));
            RANK_ASSERT(win != NULL);
            RANK_OK(rmx_win_unlock(win, t));
            RANK_RC(RMX_ERR_EPOCH, rmx_win_unlock(win, t));
        }
    }
    /* the word was left free by all of that: an exclusive lock from everyone still works */
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, t, 0));
    RANK_OK(rmx_win_unlock(win, t));
    RANK_OK(rmx_sync_all(ctx));
    rmx_win_t *stale = win;
    RANK_OK(rmx_win_free(&win));
    RANK_RC(RMX_ERR_WIN, rmx_win_lock(stale, RMX_LOCK_EXCLUSIVE, t, 0));
    RANK_RC(RMX_ERR_WIN, rmx_win_unlock(stale, t));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(lock, misuse_gives_its_code_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_lock_errors, NULL);
}

/* ---- a writer gets in while readers keep taking the lock ----------------------------- */
/* Ranks 1..3 read in a loop under shared locks until they see the flag; rank 0 waits until all
 * of them are reading, then takes the exclusive lock and sets the flag.  Readers give way to a
 * waiting writer, so this ends; the deadline turns starvation into a failure. */
static int rank_writer_not_starved(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    const size_t FLAG = 0, READING = 8;
    double until = now_s() + DEADLINE_S;
    if (me == 0) {
        while (fetch_word(win, 0, READING) < (uint64_t)(n - 1))
            RANK_ASSERT(now_s() < until, "readers did not start");
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0));
        uint64_t one = 1;
        RANK_OK(rmx_put(win, &one, 8, 0, FLAG));
        RANK_OK(rmx_win_unlock(win, 0));
    } else {
        add_word(win, 0, READING, 1);
        uint64_t flag = 0, rounds = 0;
        while (flag == 0) {
            RANK_ASSERT(now_s() < until, "the writer never got in (%" PRIu64 " reads)", rounds);
            RANK_OK(rmx_win_lock(win, RMX_LOCK_SHARED, 0, 0));
            RANK_OK(rmx_get(win, &flag, 8, 0, FLAG));
            RANK_OK(rmx_win_unlock(win, 0));
            rounds++;
        }
    }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(lock, writer_gets_in_while_readers_keep_reading_4_ranks, .timeout = RMX_T(60))
{
    run_ranks(4, rank_writer_not_starved, NULL);
}

/* Unlock ends the segment for every target (Fortran image control), not only the unlocked one:
 * holding rank 1's lock, rank 0 puts to rank 2, then raises a flag at rank 1; whoever sees the flag
 * under that lock must also see rank 0's put at rank 2 (small puts are staged by the tracker,
 * so an unlock that only completed rank 1 would leave it unsent). */
static int rank_unlock_completes_all_targets(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 2 * sizeof(uint64_t), (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        uint64_t value = 4242, flag = 1;
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 1, 0));
        RANK_OK(rmx_put(win, &value, sizeof(value), 2, 0)); /* inside the epoch on rank 1 */
        RANK_OK(rmx_put(win, &flag, sizeof(flag), 1, sizeof(uint64_t)));
        RANK_OK(rmx_win_unlock(win, 1));
        /* Stay out of image control for a while: only the unlock can have completed the put. */
        struct timespec pause = {0, 300 * 1000000L};
        nanosleep(&pause, NULL);
    } else if (me == 1) {
        uint64_t flag = 0, value = 0;
        for (long spins = 0; flag == 0; spins++) {
            RANK_ASSERT(spins < 100000000L, "flag never came");
            RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 1, 0));
            RANK_OK(rmx_get(win, &flag, sizeof(flag), 1, sizeof(uint64_t)));
            RANK_OK(rmx_win_unlock(win, 1));
        }
        RANK_OK(rmx_get(win, &value, sizeof(value), 2, 0));
        RANK_ASSERT(value == 4242, "flag seen but rank 0's earlier put to rank 2 is not: %llu",
                    (unsigned long long)value);
    }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(lock, unlock_completes_puts_to_every_target_3_ranks, .timeout = RMX_T(60))
{
    run_ranks(3, rank_unlock_completes_all_targets, NULL);
}

/* ---- a rank that finalizes while it holds a lock releases it: a rank waiting for that lock
 * gets it (before: it waited for ever, and the finalizing ranks waited for it in rmx_finalize) */
static int rank_finalize_holding(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, &base, &win));
    if (me == 0) {
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 1, 0));
        RANK_OK(rmx_sync_images(ctx, (int[]){2}, 1)); /* rank 2 may try now */
        RANK_OK(rmx_finalize(ctx));                    /* holding the lock, window open */
        return 0;
    }
    if (me == 2) {
        RANK_OK(rmx_sync_images(ctx, (int[]){0}, 1));
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 1, 0)); /* once rank 0 let go */
        RANK_OK(rmx_win_unlock(win, 1));
    }
    (void)rmx_win_free(&win); /* collective, and rank 0 is in rmx_finalize: it may be refused */
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(lock, finalize_releases_the_locks_it_holds_3_ranks, .timeout = RMX_T(60))
{
    run_ranks_cfg(3, rank_finalize_holding, NULL, NULL, 40);
}
