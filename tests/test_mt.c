/*
 * test_mt.c — RMX_THREAD_MULTIPLE (rmx.h, "Threads"): several threads of every rank share one
 * context.  Their puts, gets and atomics all land (fetch-add counters exact), locks exclude
 * across ranks and threads, windows come and go on one thread while the others do RMA, and a
 * thread that waits on another rank (rmx_sync_images, a contended rmx_win_lock) lets the rank's
 * other threads in, whose work is what that rank waits for (a lock held for the whole wait would
 * deadlock these tests: they would time out).  The single level still refuses other threads,
 * and a bad level is refused.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>
#include "harness.h"

#define NTHREADS 4
#define ITERS    200
#define SLOT     64     /* bytes each (origin, thread) writes at its right neighbour */
#define DATA_AT  1024   /* where those slots begin in the window */
#define WIN_LEN  (DATA_AT + 64 * NTHREADS * SLOT)

static rmx_config_t multiple(const rmx_config_t *cfg)
{
    rmx_config_t c;
    if (cfg != NULL)
        c = *cfg;
    else
        rmx_config_init(&c);
    c.threads = RMX_THREAD_MULTIPLE;
    return c;
}

/* The first failure of any thread of this rank, reported by the rank's main thread. */
static char failure[256];
static atomic_int failed;

#define T_CHECK(cond, ...)                                                            \
    do {                                                                              \
        if (!(cond)) {                                                                \
            if (atomic_fetch_add(&failed, 1) == 0)                                    \
                snprintf(failure, sizeof(failure), __VA_ARGS__);                      \
            return NULL;                                                              \
        }                                                                             \
    } while (0)
#define T_OK(expr)                                                                    \
    do {                                                                              \
        int t_rc_ = (expr);                                                           \
        T_CHECK(t_rc_ == RMX_OK, "line %d: %s: %s", __LINE__, #expr, rmx_strerror(t_rc_)); \
    } while (0)

/* ---------------------------------------------------------------- everything at once */

typedef struct {
    rmx_ctx_t *ctx;
    rmx_win_t *win;                 /* counters at 0 (fetch-add) and 8 (implicit epochs), slots */
    rmx_win_t *lockwin[NTHREADS];   /* thread t's lock and the counter it protects, at rank 0 */
    int me, n, t;
} worker_t;

static void *mixed_worker(void *arg)
{
    worker_t *w = arg;
    int right = (w->me + 1) % w->n;
    size_t slot = DATA_AT + (size_t)(w->me * NTHREADS + w->t) * SLOT;
    unsigned char out[SLOT], back[SLOT];
    uint64_t one = 1, old;
    for (int i = 0; i < ITERS && !atomic_load(&failed); i++) {
        /* a get after a put to the same bytes sees it, whatever the other threads do */
        fill_pattern(out, SLOT, w->me * NTHREADS + w->t, i);
        T_OK(rmx_put(w->win, out, SLOT, right, slot));
        T_OK(rmx_get(w->win, back, SLOT, right, slot));
        T_CHECK(memcmp(out, back, SLOT) == 0, "thread %d round %d: get did not see the put",
                w->t, i);
        int target = i % w->n;
        T_OK(rmx_rmw(w->win, &one, 1, RMX_UINT64, &old, target, 0, 0, RMX_OP_SUM));
        T_CHECK(old < (uint64_t)(w->n * NTHREADS * ITERS), "fetched %llu", (unsigned long long)old);
        if (i % 10 == 0) {
            /* a read-modify-write by hand: exact only if the lock excludes */
            uint64_t v;
            T_OK(rmx_win_lock(w->lockwin[w->t], RMX_LOCK_EXCLUSIVE, 0, 0));
            T_OK(rmx_get(w->lockwin[w->t], &v, sizeof(v), 0, 0));
            v++;
            T_OK(rmx_put(w->lockwin[w->t], &v, sizeof(v), 0, 0));
            T_OK(rmx_win_unlock(w->lockwin[w->t], 0));
        }
        if (i % 20 == 5) /* threads' implicit epochs on one target wait for each other */
            T_OK(rmx_rmw(w->win, &one, 1, RMX_UINT64, NULL, target, 8,
                         RMX_MODE_PASSIVE_EPOCH_IMPLICIT, RMX_OP_SUM));
        if (i % 7 == 0)
            T_OK(rmx_sync_memory(w->ctx));
    }
    return NULL;
}

/* Rounds i of ITERS where a thread aims at `target`, and those with i % 20 == 5. */
static uint64_t rounds_at(int target, int n, int implicit_only)
{
    uint64_t k = 0;
    for (int i = 0; i < ITERS; i++)
        if (i % n == target && (!implicit_only || i % 20 == 5))
            k++;
    return k;
}

static int rank_mixed(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_config_t c = multiple(cfg);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&c, &ctx));
    worker_t w[NTHREADS];
    uint64_t *base, *lockbase[NTHREADS];
    rmx_win_t *win, *lockwin[NTHREADS];
    RANK_OK(rmx_win_allocate(ctx, WIN_LEN, (void **)&base, &win));
    for (int t = 0; t < NTHREADS; t++)
        RANK_OK(rmx_win_allocate(ctx, 64, (void **)&lockbase[t], &lockwin[t]));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    RANK_OK(rmx_sync_all(ctx));
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        w[t] = (worker_t){.ctx = ctx, .win = win, .me = me, .n = n, .t = t};
        memcpy(w[t].lockwin, lockwin, sizeof(lockwin));
        RANK_ASSERT(pthread_create(&th[t], NULL, mixed_worker, &w[t]) == 0);
    }
    for (int t = 0; t < NTHREADS; t++)
        RANK_ASSERT(pthread_join(th[t], NULL) == 0);
    RANK_ASSERT(!atomic_load(&failed), "%s", failure);
    RANK_OK(rmx_sync_all(ctx));
    /* every thread of every rank added exactly once per round aimed here */
    uint64_t want = (uint64_t)n * NTHREADS * rounds_at(me, n, 0);
    RANK_ASSERT(base[0] == want, "fetch-add counter %llu, wanted %llu",
                (unsigned long long)base[0], (unsigned long long)want);
    want = (uint64_t)n * NTHREADS * rounds_at(me, n, 1);
    RANK_ASSERT(base[1] == want, "implicit-epoch counter %llu, wanted %llu",
                (unsigned long long)base[1], (unsigned long long)want);
    for (int t = 0; me == 0 && t < NTHREADS; t++)
        RANK_ASSERT(lockbase[t][0] == (uint64_t)n * (ITERS / 10),
                    "locked counter of thread %d: %llu, wanted %d", t,
                    (unsigned long long)lockbase[t][0], n * (ITERS / 10));
    int left = (me + n - 1) % n;
    for (int t = 0; t < NTHREADS; t++) {
        size_t slot = DATA_AT + (size_t)(left * NTHREADS + t) * SLOT;
        RANK_ASSERT(check_pattern((unsigned char *)base + slot, SLOT, left * NTHREADS + t,
                                  ITERS - 1) == SLOT, "slot of thread %d of rank %d", t, left);
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(mt, puts_gets_atomics_locks_4_threads_3_ranks, .timeout = RMX_T(120))
{
    run_ranks(3, rank_mixed, NULL);
}

Test(mt, puts_gets_atomics_locks_4_threads_2_ranks, .timeout = RMX_T(120))
{
    run_ranks(2, rank_mixed, NULL);
}

/* ---------------------------------------------------------------- windows come and go */

typedef struct {
    rmx_ctx_t *ctx;
    rmx_win_t *win;
    int me, n, t;
    atomic_int *stop;
    int rounds;
} rma_loop_t;

static void *rma_until_stopped(void *arg)
{
    rma_loop_t *l = arg;
    int right = (l->me + 1) % l->n;
    size_t slot = (size_t)l->t * SLOT;
    unsigned char out[SLOT], back[SLOT];
    for (l->rounds = 0; !atomic_load(l->stop) && !atomic_load(&failed); l->rounds++) {
        fill_pattern(out, SLOT, l->me * NTHREADS + l->t, l->rounds);
        T_OK(rmx_put(l->win, out, SLOT, right, slot));
        T_OK(rmx_get(l->win, back, SLOT, right, slot));
        T_CHECK(memcmp(out, back, SLOT) == 0, "round %d: get did not see the put", l->rounds);
    }
    return NULL;
}

static int rank_windows_come_and_go(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_config_t c = multiple(cfg);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&c, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, NTHREADS * SLOT, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    atomic_int stop = 0;
    rma_loop_t l[NTHREADS - 1];
    pthread_t th[NTHREADS - 1];
    for (int t = 0; t < NTHREADS - 1; t++) {
        l[t] = (rma_loop_t){.ctx = ctx, .win = win, .me = me, .n = n, .t = t, .stop = &stop};
        RANK_ASSERT(pthread_create(&th[t], NULL, rma_until_stopped, &l[t]) == 0);
    }
    /* this thread: the collectives, while the others keep going on `win` */
    for (int round = 0; round < 8; round++) {
        unsigned char *b2, buf[32];
        rmx_win_t *w2;
        if (round % 2)
            RANK_OK(rmx_win_allocate(ctx, 256, (void **)&b2, &w2));
        else
            RANK_OK(rmx_win_create(ctx, buf, sizeof(buf), &w2));
        uint64_t v = (uint64_t)(me + 1) * 1000 + (uint64_t)round;
        RANK_OK(rmx_put(w2, &v, sizeof(v), (me + 1) % n, 8));
        RANK_OK(rmx_sync_all(ctx));
        uint64_t got, from_left = (uint64_t)((me + n - 1) % n + 1) * 1000 + (uint64_t)round;
        RANK_OK(rmx_get(w2, &got, sizeof(got), me, 8));
        RANK_ASSERT(got == from_left, "round %d: %llu", round, (unsigned long long)got);
        RANK_OK(rmx_win_free(&w2));
        RANK_ASSERT(w2 == NULL);
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < NTHREADS - 1; t++)
        RANK_ASSERT(pthread_join(th[t], NULL) == 0);
    RANK_ASSERT(!atomic_load(&failed), "%s", failure);
    for (int t = 0; t < NTHREADS - 1; t++)
        RANK_ASSERT(l[t].rounds > 0, "thread %d never got in", t);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(mt, window_create_free_beside_rma_on_another_window, .timeout = RMX_T(120))
{
    run_ranks(2, rank_windows_come_and_go, NULL);
}

/* ---------------------------------------------------------------- waits let others in */

#define FEED_PUTS 100
#define DONE      UINT64_C(0xd0e)

typedef struct {
    rmx_ctx_t *ctx;
    rmx_win_t *win;
    int waiter_rc;
    int lock;           /* 1: the waiter waits in rmx_win_lock, else in rmx_sync_images */
    double waited_s;
} blocked_t;

/* Thread A of rank 0: the wait rank 1 ends only once thread B's puts have all arrived. */
static void *wait_on_rank_1(void *arg)
{
    blocked_t *b = arg;
    int one = 1;
    double t0 = now_s();
    if (b->lock) {
        b->waiter_rc = rmx_win_lock(b->win, RMX_LOCK_EXCLUSIVE, 0, 0);
        if (b->waiter_rc == RMX_OK)
            b->waiter_rc = rmx_win_unlock(b->win, 0);
    } else {
        b->waiter_rc = rmx_sync_images(b->ctx, &one, 1);
    }
    b->waited_s = now_s() - t0;
    return NULL;
}

/* Rank 1's local word at 8 until it reads DONE: the coarray way, plus rmx_progress, which
 * serves the puts where nothing else would (RMX_PROGRESS=none over tcp). */
static int wait_for_done(rmx_ctx_t *ctx, volatile uint64_t *word, double limit_s)
{
    double end = now_s() + limit_s;
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != DONE) {
        if (rmx_sync_memory(ctx) != RMX_OK || rmx_progress(ctx) != RMX_OK || now_s() > end)
            return 0;
    }
    return 1;
}

static int rank_wait_lets_others_in(const rmx_config_t *cfg, void *arg)
{
    int lock = *(int *)arg;
    rmx_config_t c = multiple(cfg);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&c, &ctx));
    int me = rmx_rank(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    if (me == 1 && lock) /* held until rank 0's other thread has fed us */
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        blocked_t b = {.ctx = ctx, .win = win, .lock = lock};
        pthread_t th;
        RANK_ASSERT(pthread_create(&th, NULL, wait_on_rank_1, &b) == 0);
        usleep(50000); /* let it begin to wait: the puts below must get in beside it */
        double t0 = now_s();
        for (uint64_t i = 1; i <= FEED_PUTS; i++) {
            RANK_OK(rmx_put(win, &i, sizeof(i), 1, 8));
            RANK_OK(rmx_sync_memory(ctx));
        }
        uint64_t done = DONE;
        RANK_OK(rmx_put(win, &done, sizeof(done), 1, 8));
        RANK_OK(rmx_sync_memory(ctx));
        double fed_s = now_s() - t0;
        RANK_ASSERT(pthread_join(th, NULL) == 0);
        RANK_OK(b.waiter_rc);
        /* bounded: the puts were not held up until the wait ended (it could not end first) */
        RANK_ASSERT(fed_s < RMX_T(20), "%d puts beside a blocked %s took %.1f s", FEED_PUTS,
                    lock ? "rmx_win_lock" : "rmx_sync_images", fed_s);
        RANK_ASSERT(b.waited_s < RMX_T(30), "the wait took %.1f s", b.waited_s);
    } else {
        int zero = 0;
        RANK_ASSERT(wait_for_done(ctx, &base[1], RMX_T(30)),
                    "rank 0's puts never all arrived while its other thread waited (last %llu)",
                    (unsigned long long)base[1]);
        if (lock)
            RANK_OK(rmx_win_unlock(win, 0));
        else
            RANK_OK(rmx_sync_images(ctx, &zero, 1));
    }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(mt, blocked_sync_images_lets_other_threads_put, .timeout = RMX_T(90))
{
    int lock = 0;
    run_ranks(2, rank_wait_lets_others_in, &lock);
}

Test(mt, contended_win_lock_lets_other_threads_put, .timeout = RMX_T(90))
{
    int lock = 1;
    run_ranks(2, rank_wait_lets_others_in, &lock);
}

/* ---------------------------------------------------------------- misuse is reported */

/* A collective while another thread of the rank is inside one, and rmx_finalize while another
 * thread is inside any call: RMX_ERR_THREAD at once, nothing done (rmx.h, Threads). */
typedef struct {
    rmx_ctx_t *ctx;
    atomic_int entered;
    int rc;
} in_sync_all_t;

static void *sync_all_thread(void *arg)
{
    in_sync_all_t *s = arg;
    atomic_store(&s->entered, 1);
    s->rc = rmx_sync_all(s->ctx);
    return NULL;
}

static int rank_second_collective(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_config_t c = multiple(cfg);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&c, &ctx));
    int me = rmx_rank(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        /* rank 1 joins this sync_all only once told (the put below) */
        in_sync_all_t s = {.ctx = ctx};
        pthread_t th;
        RANK_ASSERT(pthread_create(&th, NULL, sync_all_thread, &s) == 0);
        while (!atomic_load(&s.entered))
            sched_yield();
        /* From `entered` to inside rmx_sync_all is a few microseconds of the thread's CPU; on 2
         * loaded cores it may wait for a time slice or a few (ms), hence half a second. */
        usleep(500000);
        void *b2;
        rmx_win_t *w2 = NULL;
        RANK_RC(RMX_ERR_THREAD, rmx_win_allocate(ctx, 64, &b2, &w2));
        RANK_ASSERT(w2 == NULL);
        RANK_RC(RMX_ERR_THREAD, rmx_sync_all(ctx));
        RANK_RC(RMX_ERR_THREAD, rmx_finalize(ctx));
        uint64_t done = DONE;
        RANK_OK(rmx_put(win, &done, sizeof(done), 1, 8));
        RANK_OK(rmx_sync_memory(ctx));
        RANK_ASSERT(pthread_join(th, NULL) == 0);
        RANK_OK(s.rc);
    } else {
        RANK_ASSERT(wait_for_done(ctx, &base[1], RMX_T(30)), "never told");
        RANK_OK(rmx_sync_all(ctx));
    }
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    RANK_RC(RMX_ERR_CTX, rmx_rank(ctx));
    return 0;
}

Test(mt, second_collective_and_finalize_beside_a_call_are_refused, .timeout = RMX_T(90))
{
    run_ranks(2, rank_second_collective, NULL);
}

/* The same while the peer sleeps outside rmx, under RMX_PROGRESS=none over tcp: the thread inside
 * sync_all then waits, holding the context's lock, for a flush only the sleeper can answer; the
 * second collective blocked on that lock until the first ended and then ran as a collective of
 * its own, a step ahead of the other ranks (a header-only tester's find).  Refused at once. */
static int rank_second_collective_peer_asleep(const rmx_config_t *cfg, void *arg)
{
    atomic_int *awake = arg;
    setenv("UCX_TLS", "tcp,self", 1);
    rmx_config_t c = multiple(cfg);
    c.progress = RMX_PROGRESS_NONE;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&c, &ctx));
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, &base, &win));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1) {
        usleep((useconds_t)(RMX_T(1.5) * 1e6)); /* outside rmx: nobody serves rank 0 */
        atomic_store(awake, 1);
        RANK_OK(rmx_sync_all(ctx));
    } else {
        in_sync_all_t s = {.ctx = ctx};
        pthread_t th;
        RANK_ASSERT(pthread_create(&th, NULL, sync_all_thread, &s) == 0);
        while (!atomic_load(&s.entered))
            sched_yield();
        usleep(300000); /* as above: the thread is inside sync_all by now */
        RANK_RC(RMX_ERR_THREAD, rmx_sync_all(ctx));
        void *b2;
        rmx_win_t *w2 = NULL;
        RANK_RC(RMX_ERR_THREAD, rmx_win_allocate(ctx, 64, &b2, &w2));
        RANK_RC(RMX_ERR_THREAD, rmx_win_free(&win));
        RANK_ASSERT(win != NULL, "a refused free keeps the handle");
        RANK_RC(RMX_ERR_THREAD, rmx_finalize(ctx));
        RANK_ASSERT(!atomic_load(awake), "refused only once the peer woke, not at once");
        RANK_ASSERT(pthread_join(th, NULL) == 0);
        RANK_OK(s.rc);
    }
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(mt, second_collective_is_refused_at_once_while_the_peer_sleeps, .timeout = RMX_T(90))
{
    atomic_int *awake = mmap(NULL, sizeof(*awake), PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert(awake != MAP_FAILED);
    atomic_init(awake, 0);
    run_ranks(2, rank_second_collective_peer_asleep, awake);
    munmap(awake, sizeof(*awake));
}

static void *foreign_put(void *arg)
{
    void **a = arg;
    unsigned char b = 1;
    *(int *)a[1] = rmx_put((rmx_win_t *)a[0], &b, 1, 0, 0);
    *(int *)a[2] = rmx_rank((rmx_ctx_t *)a[3]);
    return NULL;
}

Test(mt, single_level_refuses_other_threads, .timeout = RMX_T(30))
{
    rmx_config_t c;
    rmx_config_init(&c);
    cr_assert_eq(c.threads, RMX_THREAD_SINGLE, "the default level is SINGLE");
    c.bootstrap = RMX_BOOT_SINGLE;
    c.threads = RMX_THREAD_SINGLE;
    for (int level = 0; level < 2; level++) {
        c.threads = level ? RMX_THREAD_MULTIPLE : RMX_THREAD_SINGLE;
        rmx_ctx_t *ctx;
        rmx_win_t *win;
        void *base;
        cr_assert_eq(rmx_init(&c, &ctx), RMX_OK);
        cr_assert_eq(rmx_win_allocate(ctx, 8, &base, &win), RMX_OK);
        int put_rc = -100, rank_rc = -100;
        void *a[4] = {win, &put_rc, &rank_rc, ctx};
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, foreign_put, a), 0);
        cr_assert_eq(pthread_join(th, NULL), 0);
        cr_expect_eq(put_rc, level ? RMX_OK : RMX_ERR_THREAD, "level %d: put %s", level,
                     rmx_strerror(put_rc));
        cr_expect_eq(rank_rc, level ? 0 : RMX_ERR_THREAD, "level %d: rank %d", level, rank_rc);
        cr_expect_eq(((unsigned char *)base)[0], level ? 1 : 0, "level %d", level);
        cr_assert_eq(rmx_finalize(ctx), RMX_OK);
    }
}

Test(mt, bad_level_is_refused, .timeout = RMX_T(30))
{
    int bad[] = {2, 7, -1};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rmx_config_t c;
        rmx_config_init(&c);
        c.bootstrap = RMX_BOOT_SINGLE;
        c.threads = (rmx_thread_level_t)bad[i];
        rmx_ctx_t *ctx = (rmx_ctx_t *)&c; /* must be cleared */
        cr_expect_eq(rmx_init(&c, &ctx), RMX_ERR_ARG, "level %d", bad[i]);
        cr_expect_null(ctx);
    }
}
