/*
 * test_peer_failure.c — a rank dies (SIGKILL, no chance to clean up) while the others are using
 * it.  Every survivor's call that needs the dead rank must return RMX_ERR_PEER (or complete, when
 * it did not need it), calls among survivors must go on working, and finalize must return.
 *
 * Three ranks: 0 and 1 survive, 2 is the victim.  The victim writes the time of its death into a
 * page shared by all ranks (made before the fork), so survivors print how long detection took.
 * Timeouts are small (peer_timeout_s = 2) to keep the suite short; detection latency is printed,
 * not asserted (the machine is shared), and the Criterion timeout bounds every test.
 */
#include <sys/wait.h>
#include <signal.h>
#include <stdatomic.h>
#include <sched.h>
#include <sys/mman.h>
#include "harness.h"

#define NRANKS 3
#define VICTIM 2
#define WIN_BYTES 4096
#define PEER_TIMEOUT_S 2.0

typedef struct {
    volatile double died_at; /* CLOCK_MONOTONIC seconds, set by the victim just before dying */
    volatile pid_t victim_pid;
    volatile long victim_rounds; /* DIE_KILLED_*: request rounds the victim completed */
    volatile int windows_made;   /* DIE_AFTER_WIN_ALLOCATE: survivors whose allocate returned */
} death_note_t;

static death_note_t *note;

typedef enum {
    DIE_IDLE,           /* sleep a little, then die: survivors are in the middle of their op */
    DIE_IN_SYNC_LOOP,   /* take part in 20 sync_alls, then die: survivors are inside one    */
    DIE_AFTER_WIN_ALLOCATE, /* take part in one more window's creation, then die            */
    DIE_HOLDING_LOCK,   /* take rank 0's lock exclusively, then die without unlocking       */
    /* killed by another process while busy (these stay last: `death >= DIE_KILLED_BUSY`) */
    DIE_KILLED_BUSY,    /* issue requests to both survivors in a loop until rank 0 kills it */
    DIE_KILLED_PUTTING, /* stream puts (many in flight) to both survivors until killed      */
    DIE_KILLED_FETCHING, /* stream gets (many answers in flight) and fetching atomics       */
} death_kind_t;

typedef struct scenario {
    const char *name;
    /* what the survivors do against the victim until it fails; returns the failing rc */
    int (*survivor_op)(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base);
    death_kind_t death;
    int tcp;                /* UCX_TLS=tcp,self: detection over sockets instead of shm */
} scenario_t;

static void die_now(void)
{
    note->died_at = now_s();
    raise(SIGKILL);
}

static double detection_latency(void)
{
    double died = note->died_at;
    return died > 0 ? now_s() - died : -1;
}

/* ---- what survivors do while the victim dies: each repeats until an error comes back */

static int keep_putting(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)ctx;
    (void)base;
    unsigned char buf[256];
    memset(buf, 0x5A, sizeof(buf));
    int rc;
    while ((rc = rmx_put(win, buf, sizeof(buf), VICTIM, 0)) == RMX_OK)
        ;
    return rc;
}

/* Strided sections: many small UCP puts per call. */
static int keep_putting_sections(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)ctx;
    (void)base;
    uint64_t src[16] = {0};
    rmx_sub_t local = {.elem_size = 8, .rank = 1, .order = RMX_ORDER_C};
    local.dim[0] = (rmx_sub_dim_t){.extent = 16, .first = 0, .count = 16, .stride = 1};
    rmx_sub_t remote = {.elem_size = 8, .rank = 2, .order = RMX_ORDER_C};
    remote.dim[0] = (rmx_sub_dim_t){.extent = 8, .first = 0, .count = 4, .stride = 2};
    remote.dim[1] = (rmx_sub_dim_t){.extent = 8, .first = 1, .count = 4, .stride = 2};
    int rc;
    while ((rc = rmx_put_sub(win, src, &local, VICTIM, 0, &remote)) == RMX_OK)
        ;
    return rc;
}

static int keep_getting(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)ctx;
    (void)base;
    unsigned char buf[256];
    int rc;
    while ((rc = rmx_get(win, buf, sizeof(buf), VICTIM, 0)) == RMX_OK)
        ;
    return rc;
}

/* Large gets: over tcp they are in flight (need the target's progress) when the victim dies. */
static int keep_getting_large(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)ctx;
    (void)base;
    unsigned char *buf = malloc(WIN_BYTES * 64);
    RANK_ASSERT(buf != NULL);
    int rc;
    while ((rc = rmx_get(win, buf, WIN_BYTES * 64, VICTIM, 0)) == RMX_OK)
        ;
    free(buf);
    return rc;
}

static int keep_putting_and_flushing(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)base;
    unsigned char buf[64] = {1};
    int rc;
    do {
        rc = rmx_put(win, buf, sizeof(buf), VICTIM, 8);
        if (rc == RMX_OK)
            rc = rmx_sync_memory(ctx);
    } while (rc == RMX_OK);
    return rc;
}

/* Native atomics (SUM on uint64 is one UCP ADD) without a lock. */
static int keep_adding(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)ctx;
    (void)base;
    uint64_t one = 1;
    int rc;
    while ((rc = rmx_rmw(win, &one, 1, RMX_UINT64, NULL, VICTIM, 512,
                         RMX_MODE_PASSIVE_EPOCH_IMPLICIT | RMX_MODE_NOCHECK, RMX_OP_SUM)) == RMX_OK)
        ;
    return rc;
}

/* Emulated fetching atomics (MAX on int64 is a CSWAP loop), implicit epoch with a lock. */
static int keep_maxing_locked(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)base;
    int64_t v = rmx_rank(ctx), old;
    int rc;
    while ((rc = rmx_rmw(win, &v, 1, RMX_INT64, &old, VICTIM, 520,
                         RMX_MODE_PASSIVE_EPOCH_IMPLICIT, RMX_OP_MAX)) == RMX_OK)
        v++;
    return rc;
}

/* Both survivors contend for the victim's lock word, so each spends time waiting for it. */
static int keep_locking_victim(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)ctx;
    (void)base;
    int rc;
    while ((rc = rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, VICTIM, 0)) == RMX_OK) {
        uint64_t x = 1;
        rc = rmx_put(win, &x, sizeof(x), VICTIM, 528);
        int rc2 = rmx_win_unlock(win, VICTIM);
        if (rc != RMX_OK || rc2 != RMX_OK)
            return rc != RMX_OK ? rc : rc2;
    }
    return rc;
}

/* The victim dies holding rank 0's lock: the survivors wait for a holder that is gone. */
static int lock_held_by_the_dead(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)ctx;
    (void)base;
    int rc;
    while ((rc = rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0)) == RMX_OK)
        if ((rc = rmx_win_unlock(win, 0)) != RMX_OK)
            break;
    return rc;
}

/* sync_all needs every rank: it may succeed while the victim still lives, never after. */
static int keep_syncing(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)win;
    (void)base;
    int rc;
    while ((rc = rmx_sync_all(ctx)) == RMX_OK)
        ;
    return rc;
}

/* sync_images with the victim: waits for a notification that never comes. */
static int sync_images_with_victim(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)win;
    (void)base;
    int victim = VICTIM;
    return rmx_sync_images(ctx, &victim, 1);
}

/* Window creation is collective: the dead rank never joins it. */
static int allocate_a_window(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)win;
    (void)base;
    void *b;
    rmx_win_t *w;
    int rc = rmx_win_allocate(ctx, 64, &b, &w);
    RANK_ASSERT(rc != RMX_OK, "window created without the dead rank");
    RANK_ASSERT(w == NULL && b == NULL);
    /* The bootstrap saw the death before UCX did; wait until UCX knows too (sync_all needs the
     * victim, so it fails once keepalive has declared it dead). */
    while (rmx_sync_all(ctx) == RMX_OK)
        ;
    return rc;
}

/* The victim created a window with everyone, then died; freeing it needs its barrier. */
static int free_a_window(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    (void)win;
    (void)base;
    void *b;
    rmx_win_t *w;
    RANK_OK(rmx_win_allocate(ctx, 64, &b, &w));
    __atomic_add_fetch(&note->windows_made, 1, __ATOMIC_SEQ_CST);
    int rc = rmx_win_free(&w);
    RANK_ASSERT(w == NULL, "win_free must release the handle even when it fails");
    return rc;
}

/* ---- after the failure: the dead rank is unreachable, the survivors are not */

static void survivors_still_work(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    int me = rmx_rank(ctx), other = 1 - me;
    unsigned char out[512], in[512];

    /* calls that involve the victim fail at once */
    RANK_RC(RMX_ERR_PEER, rmx_put(win, out, 8, VICTIM, 0));
    RANK_RC(RMX_ERR_PEER, rmx_get(win, in, 8, VICTIM, 0));
    int victim = VICTIM;
    RANK_RC(RMX_ERR_PEER, rmx_sync_images(ctx, &victim, 1));
    RANK_RC(RMX_ERR_PEER, rmx_sync_all(ctx));
    /* argument checks still come first */
    RANK_RC(RMX_ERR_RANK, rmx_put(win, out, 8, NRANKS, 0));

    /* puts and gets between the survivors, ordered by sync_images between the two of them */
    fill_pattern(out, sizeof(out), me, 7);
    RANK_OK(rmx_put(win, out, sizeof(out), other, 1024));
    RANK_OK(rmx_sync_images(ctx, &other, 1));
    size_t bad = check_pattern(base + 1024, sizeof(out), other, 7);
    RANK_ASSERT(bad == sizeof(out), "byte %zu from rank %d wrong after the failure: %#x", bad,
                other, base[1024 + bad]);
    RANK_OK(rmx_get(win, in, sizeof(in), other, 1024));
    bad = check_pattern(in, sizeof(in), me, 7);
    RANK_ASSERT(bad == sizeof(in), "get: byte %zu wrong after the failure", bad);
    RANK_OK(rmx_sync_images(ctx, &other, 1));
    RANK_OK(rmx_sync_memory(ctx));
}

/* A survivor's rmx_finalize returns within peer_timeout_s + 2 s, with a documented code. */
static void finalize_in_time(rmx_ctx_t *ctx)
{
    double t0 = now_s();
    int rc = rmx_finalize(ctx);
    double took = now_s() - t0;
    RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_PEER || rc == RMX_ERR_STOPPED ||
                rc == RMX_ERR_TIMEOUT, "finalize: %s", rmx_strerror(rc));
    RANK_ASSERT(took <= PEER_TIMEOUT_S + 2, "finalize took %.2f s", took);
}

/* Every rank: a context (over tcp if asked), a window of `bytes`, and a sync_all. */
static rmx_ctx_t *open_rank(const rmx_config_t *cfg, int tcp, size_t bytes, unsigned char **base,
                            rmx_win_t **win)
{
    if (tcp)
        setenv("UCX_TLS", "tcp,self", 1);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    RANK_OK(rmx_win_allocate(ctx, bytes, (void **)base, win));
    RANK_OK(rmx_sync_all(ctx));
    return ctx;
}

static int rank_peer_dies(const rmx_config_t *cfg, void *arg)
{
    const scenario_t *sc = arg;
    unsigned char *base;
    rmx_win_t *win;
    rmx_ctx_t *ctx = open_rank(cfg, sc->tcp, WIN_BYTES * 64, &base, &win);
    int me = rmx_rank(ctx);

    if (me == VICTIM) {
        void *b;
        rmx_win_t *w;
        if (sc->death == DIE_IN_SYNC_LOOP)
            for (int i = 0; i < 20; i++)
                RANK_OK(rmx_sync_all(ctx));
        else if (sc->death == DIE_AFTER_WIN_ALLOCATE) {
            RANK_OK(rmx_win_allocate(ctx, 64, &b, &w));
            /* A collective that returned here says nothing of the others: the victim's last
             * agreement (a remote add, over tcp still in its socket) dies with it if it goes at
             * once, and a survivor's allocate fails (CI, tcp under ASan, 1 run).  Die once
             * every survivor has its window; the progress agent sends what is left meanwhile. */
            double give_up = now_s() + RMX_T(30);
            while (__atomic_load_n(&note->windows_made, __ATOMIC_SEQ_CST) < NRANKS - 1 &&
                   now_s() < give_up)
                usleep(1000);
        }
        else if (sc->death == DIE_KILLED_BUSY) {
            /* Requests that each survivor must answer (over tcp UCX serves them in software):
             * fetching atomics, emulated ones (a CSWAP loop), gets, lock attempts. */
            note->victim_pid = getpid();
            uint64_t one = 1, old;
            int64_t v = 0, was;
            unsigned char buf[2048];
            for (;;) {
                (void)rmx_rmw(win, &one, 1, RMX_UINT64, &old, 0, 512, RMX_MODE_NOCHECK, RMX_OP_SUM);
                (void)rmx_get(win, buf, sizeof(buf), 1, 0);
                (void)rmx_rmw(win, &v, 1, RMX_INT64, &was, 1, 520, RMX_MODE_NOCHECK, RMX_OP_MAX);
                if (rmx_win_lock(win, RMX_LOCK_SHARED, 0, 0) == RMX_OK)
                    (void)rmx_win_unlock(win, 0);
                v++;
                note->victim_rounds++;
            }
        }
        else if (sc->death == DIE_KILLED_PUTTING) {
            /* Puts complete at the origin at once: hundreds are in flight, each one an
             * acknowledgement (over tcp) the survivor sends back to a rank about to vanish. */
            note->victim_pid = getpid();
            unsigned char buf[1024];
            memset(buf, 0x33, sizeof(buf));
            for (unsigned i = 0;; i++) {
                (void)rmx_put(win, buf, 8 + (i % 4) * 300, (int)(i & 1), (i * 1040) % (WIN_BYTES * 32));
                if ((i & 1023) == 1023) {
                    (void)rmx_sync_memory(ctx);
                    note->victim_rounds++;
                }
            }
        }
        else if (sc->death == DIE_KILLED_FETCHING) {
            /* Answers in flight from both survivors when it dies: a get of the whole window
             * (with UCX's own emulation the survivor aborted in ucp_get_req_handler, 5 runs in
             * 40), a section get of 64 runs (64 gets in flight), fetching atomics (native ones
             * and a CSWAP loop). */
            note->victim_pid = getpid();
            unsigned char *buf = malloc(WIN_BYTES * 64);
            RANK_ASSERT(buf != NULL);
            rmx_sub_t local = {.elem_size = 8, .rank = 1, .order = RMX_ORDER_C};
            local.dim[0] = (rmx_sub_dim_t){.extent = 64, .first = 0, .count = 64, .stride = 1};
            rmx_sub_t column = {.elem_size = 8, .rank = 2, .order = RMX_ORDER_C};
            column.dim[0] = (rmx_sub_dim_t){.extent = 64, .first = 0, .count = 64, .stride = 1};
            column.dim[1] = (rmx_sub_dim_t){.extent = 16, .first = 3, .count = 1, .stride = 1};
            const int nc = RMX_MODE_NOCHECK;
            for (unsigned i = 0;; i++) {
                int t = (int)(i & 1);
                uint64_t one = 1, old, zero = 0;
                int64_t v = i, was;
                (void)rmx_get(win, buf, WIN_BYTES * 64, t, 0);
                (void)rmx_get_sub(win, buf, &local, t, 0, &column);
                (void)rmx_rmw(win, &one, 1, RMX_UINT64, &old, t, 512, nc, RMX_OP_SUM);
                (void)rmx_rmw(win, &v, 1, RMX_INT64, &was, t, 520, nc, RMX_OP_SWAP);
                (void)rmx_rmw2(win, &zero, 1, RMX_UINT64, &one, &old, t, 536, nc,
                               RMX_OP2_COMP_SWAP);
                (void)rmx_rmw(win, &v, 1, RMX_INT64, &was, t, 544, nc, RMX_OP_MAX);
                note->victim_rounds++;
            }
        }
        else if (sc->death == DIE_HOLDING_LOCK) {
            RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0));
            usleep(300 * 1000);
        }
        else
            usleep(300 * 1000); /* let the survivors get busy with it */
        die_now();
    }

    int rc = sc->survivor_op(ctx, win, base);
    double latency = detection_latency();
    fprintf(stderr, "peer_failure/%s: rank %d got %s %.3f s after the victim died\n", sc->name,
            me, rmx_strerror(rc), latency);
    RANK_RC(RMX_ERR_PEER, rc);
    RANK_ASSERT(latency >= 0, "an error before the victim died");
    if (sc->death >= DIE_KILLED_BUSY)
        RANK_ASSERT(note->victim_rounds > 10, "the victim was not busy: %ld request rounds",
                    note->victim_rounds);

    survivors_still_work(ctx, win, base);
    /* both survivors are done with each other before either tears down */
    int other = 1 - me;
    RANK_OK(rmx_sync_images(ctx, &other, 1));
    RANK_RC(RMX_ERR_PEER, rmx_win_free(&win)); /* collective: needs the victim */
    RANK_ASSERT(win == NULL);
    finalize_in_time(ctx);
    RANK_RC(RMX_ERR_CTX, rmx_rank(ctx)); /* and the context is gone either way */
    return 0;
}

/* DIE_KILLED_*: a process of its own kills the victim, so that both survivors are inside
 * sync_all, answering its requests, when it dies.  A process, not a thread of the test process:
 * ranks forked while another thread holds a lock (ASan's allocator) would start with it held. */
static void kill_the_busy_victim(void)
{
    double give_up = now_s() + RMX_T(30);
    while (note->victim_pid == 0 && now_s() < give_up)
        usleep(1000);
    usleep(300 * 1000);
    while (note->victim_rounds < 20 && now_s() < give_up) /* slow under valgrind */
        usleep(1000);
    note->died_at = now_s();
    fprintf(stderr, "peer_failure: killing the busy victim after %ld request rounds\n",
            note->victim_rounds);
    if (note->victim_pid != 0)
        kill(note->victim_pid, SIGKILL);
}

/* Fork the three ranks of fn; the victim must die of SIGKILL and the survivors exit 0. */
static void run_job_with_a_victim(const char *name, rmx_fork_main_t fn, void *arg, int kill_busy,
                                  int want_rc)
{
    note = mmap(NULL, sizeof(*note), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert(note != MAP_FAILED);
    note->died_at = 0;
    note->victim_pid = 0;
    note->victim_rounds = 0;
    note->windows_made = 0;
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.peer_timeout_s = PEER_TIMEOUT_S;
    int status[NRANKS];
    pid_t killer = -1;
    if (kill_busy) {
        killer = fork();
        cr_assert(killer >= 0);
        if (killer == 0) {
            kill_the_busy_victim();
            _exit(0);
        }
    }
    int rc = rmx_fork_run(NRANKS, fn, arg, &cfg, RMX_T(60), status);
    if (killer > 0)
        waitpid(killer, NULL, 0);
    for (int r = 0; r < NRANKS; r++)
        cr_expect_eq(status[r], r == VICTIM ? 128 + SIGKILL : 0, "%s: rank %d exited with %d",
                     name, r, status[r]);
    cr_expect_eq(rc, want_rc, "%s: rmx_fork_run: %s", name, rmx_strerror(rc));
    munmap(note, sizeof(*note));
}

static void run_scenario(const scenario_t *sc)
{
    /* Known UCX 1.13 limit (rmx.h, Peer failure): with registered windows over shared memory UCX
     * serves puts, gets and atomics in software, so the victim's process writes active messages
     * (acknowledgements, answers, its own requests) into the survivors' shared-memory FIFOs.  A
     * sender reserves a FIFO slot, fills it, then flips its owner bit, and the receiver reads the
     * slots in order: a victim killed between the two leaves a slot that is never completed, and
     * everything behind it, the other survivor's answers included, is never read.  The
     * survivors' transfers to each other then time out (these scenarios: 1 suite run in 6 under
     * ASan, 4 runs in 12 of dies_during_put_subs_shm alone; UCX_ADAPTIVE_PROGRESS=n does not
     * change it).  Skipped in that configuration alone, and said so; with allocated windows the
     * victim writes into no survivor's FIFO and every scenario runs. */
    static const char *const wedged[] = {
        "dies_during_puts_shm", "dies_during_gets_shm", "dies_during_put_subs_shm",
        "dies_during_put_flush_shm", "dies_during_atomics_shm",
        "dies_during_locked_emulated_atomics_shm", "dies_while_others_wait_for_its_lock_shm",
        "killed_while_it_sends_requests_shm", "killed_while_it_streams_puts_shm",
        "killed_while_it_streams_gets_and_atomics_shm"};
    const char *wm = getenv("RMX_WIN_MEMORY");
    for (size_t i = 0; i < sizeof(wedged) / sizeof(wedged[0]); i++)
        if (wm != NULL && strcmp(wm, "user") == 0 && strcmp(sc->name, wedged[i]) == 0)
            cr_skip_test("UCX 1.13: a sender killed mid-write wedges a shared-memory FIFO "
                         "(rmx.h, Peer failure)");
    run_job_with_a_victim(sc->name, rank_peer_dies, (void *)sc, sc->death >= DIE_KILLED_BUSY,
                          RMX_ERR_PEER);
}

#define SCENARIO(id, op, death_, tcp_)                                                       \
    Test(peer, id, .timeout = RMX_T(40))                                                     \
    {                                                                                        \
        static const scenario_t sc = {#id, op, death_, tcp_};                               \
        run_scenario(&sc);                                                                   \
    }

SCENARIO(dies_during_puts_shm, keep_putting, DIE_IDLE, 0)
SCENARIO(dies_during_gets_shm, keep_getting, DIE_IDLE, 0)
SCENARIO(dies_during_put_subs_shm, keep_putting_sections, DIE_IDLE, 0)
SCENARIO(dies_during_put_flush_shm, keep_putting_and_flushing, DIE_IDLE, 0)
SCENARIO(dies_before_sync_all_shm, keep_syncing, DIE_IDLE, 0)
SCENARIO(dies_between_sync_alls_shm, keep_syncing, DIE_IN_SYNC_LOOP, 0)
SCENARIO(dies_during_sync_images_shm, sync_images_with_victim, DIE_IDLE, 0)
SCENARIO(dies_during_atomics_shm, keep_adding, DIE_IDLE, 0)
SCENARIO(dies_during_locked_emulated_atomics_shm, keep_maxing_locked, DIE_IDLE, 0)
SCENARIO(dies_while_others_wait_for_its_lock_shm, keep_locking_victim, DIE_IDLE, 0)
/* The holder's slot in the lock region is set: waiters give up with RMX_ERR_PEER (lock.c). */
SCENARIO(dies_holding_a_lock_others_wait_for_shm, lock_held_by_the_dead, DIE_HOLDING_LOCK, 0)
SCENARIO(dies_during_win_allocate_shm, allocate_a_window, DIE_IDLE, 0)
SCENARIO(dies_before_win_free_shm, free_a_window, DIE_AFTER_WIN_ALLOCATE, 0)
SCENARIO(dies_during_atomics_tcp, keep_adding, DIE_IDLE, 1)
SCENARIO(dies_while_others_wait_for_its_lock_tcp, keep_locking_victim, DIE_IDLE, 1)
SCENARIO(dies_during_puts_tcp, keep_putting, DIE_IDLE, 1)
SCENARIO(dies_during_put_subs_tcp, keep_putting_sections, DIE_IDLE, 1)
SCENARIO(dies_during_large_gets_tcp, keep_getting_large, DIE_IDLE, 1)
SCENARIO(dies_between_sync_alls_tcp, keep_syncing, DIE_IN_SYNC_LOOP, 1)
SCENARIO(killed_while_it_sends_requests_shm, keep_syncing, DIE_KILLED_BUSY, 0)
SCENARIO(killed_while_it_sends_requests_tcp, keep_syncing, DIE_KILLED_BUSY, 1)
SCENARIO(killed_while_it_streams_puts_shm, keep_syncing, DIE_KILLED_PUTTING, 0)
SCENARIO(killed_while_it_streams_puts_tcp, keep_syncing, DIE_KILLED_PUTTING, 1)
SCENARIO(killed_while_it_streams_gets_and_atomics_shm, keep_syncing, DIE_KILLED_FETCHING, 0)
SCENARIO(killed_while_it_streams_gets_and_atomics_tcp, keep_syncing, DIE_KILLED_FETCHING, 1)

/*
 * After a failure, one survivor finalizes while the other is busy and does not progress.  Its
 * failed syncs have sent notifications (remote atomics) to the busy one that nobody answered
 * yet, and the busy survivor answers them once it progresses again.  When UCX emulated atomics
 * over tcp, it aborted a process whose answer could not be sent because the requester had gone
 * (ucp_request_try_send: "Fatal: unexpected error: Endpoint timeout"): the busy survivor died
 * here every time until finalize waited for every answer before closing its endpoints.  rmx's
 * own answers (transports/am_rma.c) just fail; finalize still waits for them.
 */
static int rank_finalizes_while_a_survivor_is_busy(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    unsigned char *base;
    rmx_win_t *win;
    rmx_ctx_t *ctx = open_rank(cfg, 1, 4096, &base, &win);
    int me = rmx_rank(ctx);
    if (me == VICTIM) {
        usleep(100 * 1000);
        die_now();
    }
    int rc;
    while ((rc = rmx_sync_all(ctx)) == RMX_OK)
        ;
    /* Rank 1 may learn of the failure only after rank 0, which noticed first, has stopped: its
     * sync_all then ends on the stop (as in prog_survivors.c; 1 ASan run in ~70). */
    RANK_ASSERT(rc == RMX_ERR_PEER || (me == 1 && rc == RMX_ERR_STOPPED), "sync_all: %s",
                rmx_strerror(rc));
    if (me == 0) {
        /* In a dissemination barrier of 3, rank 0 first notifies rank 1, then waits for the dead
         * rank 2: each of these leaves one notification at rank 1. */
        for (int i = 0; i < 4; i++)
            RANK_RC(RMX_ERR_PEER, rmx_sync_all(ctx));
        rc = rmx_finalize(ctx);
        RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_PEER, "finalize: %s", rmx_strerror(rc));
        return 0;
    }
    usleep(500 * 1000); /* computing: rank 0's notifications wait in the socket */
    /* The first call that progresses the worker answers them.  Rank 0 may be gone by the time
     * the get needs it, or may still be waiting for those answers and serve it. */
    unsigned char buf[8];
    rc = rmx_get(win, buf, sizeof(buf), 0, 0);
    RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_PEER, "get: %s", rmx_strerror(rc));
    rc = rmx_finalize(ctx);
    RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_PEER, "finalize: %s", rmx_strerror(rc));
    return 0;
}

Test(peer, a_survivor_finalizes_while_another_is_busy_tcp, .timeout = RMX_T(40))
{
    run_job_with_a_victim("a_survivor_finalizes_while_another_is_busy_tcp",
                          rank_finalizes_while_a_survivor_is_busy, NULL, 0, RMX_ERR_PEER);
}

/*
 * A rank that had no part in a lock dies: the survivors go on taking and releasing it, contended,
 * with every update made under it kept.  The victim used the same lock earlier (its share is
 * cleared by its unlocks), then dies outside any epoch.  Before, once any rank had failed, a
 * contended lock failed at once with RMX_ERR_PEER although its host and both contenders lived.
 */
#define LOCK_ROUNDS 300
#define LOCK_COUNTER 64
static int rank_locks_among_survivors(const rmx_config_t *cfg, void *arg)
{
    const int *tcp = arg;
    unsigned char *base;
    rmx_win_t *win;
    rmx_ctx_t *ctx = open_rank(cfg, *tcp, WIN_BYTES, &base, &win);
    int me = rmx_rank(ctx);
    if (me == VICTIM) {
        for (int i = 0; i < 50; i++) {
            RANK_OK(rmx_win_lock(win, i % 2 ? RMX_LOCK_SHARED : RMX_LOCK_EXCLUSIVE, 0, 0));
            RANK_OK(rmx_win_unlock(win, 0));
        }
        usleep(100 * 1000);
        die_now();
    }
    int rc;
    while ((rc = rmx_sync_all(ctx)) == RMX_OK)
        ;
    RANK_RC(RMX_ERR_PEER, rc);
    RANK_RC(RMX_ERR_PEER, rmx_peer_status(ctx, VICTIM));
    int other = 1 - me;
    RANK_OK(rmx_sync_images(ctx, &other, 1)); /* both know, then both contend */
    for (int i = 0; i < LOCK_ROUNDS; i++) {
        uint64_t v;
        RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0));
        RANK_OK(rmx_get(win, &v, sizeof(v), 0, LOCK_COUNTER));
        v++;
        RANK_OK(rmx_put(win, &v, sizeof(v), 0, LOCK_COUNTER));
        if (i % 10 == 0)
            usleep(1000); /* hold it a while: the other survivor has to wait for it */
        RANK_OK(rmx_win_unlock(win, 0));
        RANK_OK(rmx_win_lock(win, RMX_LOCK_SHARED, 0, 0));
        RANK_OK(rmx_get(win, &v, sizeof(v), 0, LOCK_COUNTER));
        RANK_OK(rmx_win_unlock(win, 0));
        int64_t one = 1, old;
        RANK_OK(rmx_rmw(win, &one, 1, RMX_INT64, &old, 0, LOCK_COUNTER + 8,
                        RMX_MODE_PASSIVE_EPOCH_IMPLICIT, RMX_OP_MAX));
    }
    RANK_OK(rmx_sync_images(ctx, &other, 1));
    if (me == 0) {
        uint64_t v;
        memcpy(&v, base + LOCK_COUNTER, sizeof(v));
        RANK_ASSERT(v == 2 * LOCK_ROUNDS, "counter %llu after %d locked increments",
                    (unsigned long long)v, 2 * LOCK_ROUNDS);
    }
    rmx_stats_t st;
    RANK_OK(rmx_stats(ctx, &st));
    fprintf(stderr, "peer_failure/locks_among_survivors: rank %d: %llu lock retries\n", me,
            (unsigned long long)st.lock_retries);
    RANK_ASSERT(st.lock_retries > 0, "the lock was never contended");
    RANK_OK(rmx_sync_images(ctx, &other, 1));
    RANK_RC(RMX_ERR_PEER, rmx_win_free(&win));
    finalize_in_time(ctx);
    return 0;
}

Test(peer, locks_among_survivors_after_an_uninvolved_death_shm, .timeout = RMX_T(40))
{
    static const int tcp = 0;
    run_job_with_a_victim("locks_among_survivors_shm", rank_locks_among_survivors, (void *)&tcp,
                          0, RMX_ERR_PEER);
}

Test(peer, locks_among_survivors_after_an_uninvolved_death_tcp, .timeout = RMX_T(40))
{
    static const int tcp = 1;
    run_job_with_a_victim("locks_among_survivors_tcp", rank_locks_among_survivors, (void *)&tcp,
                          0, RMX_ERR_PEER);
}

/*
 * An embedding runtime's barrier does not know that a rank died (MPI's would wait for it, or
 * abort the job): a survivor's rmx_finalize must not call it once a rank has failed.  Here the
 * runtime is a barrier on a shared page that waits for every rank for ever.  Before, finalize
 * ended in the bootstrap's barrier and the survivors hung there (under mpirun with recovery,
 * PMIx's fence did the same).
 */
typedef struct {
    _Atomic unsigned arrived, generation;
} stubborn_t;
static stubborn_t *stubborn;

static int stubborn_barrier(void *coll_ctx)
{
    (void)coll_ctx;
    unsigned gen = atomic_load(&stubborn->generation);
    if (atomic_fetch_add(&stubborn->arrived, 1) + 1 == NRANKS) {
        atomic_store(&stubborn->arrived, 0);
        atomic_fetch_add(&stubborn->generation, 1);
        return 0;
    }
    while (atomic_load(&stubborn->generation) == gen)
        sched_yield();
    return 0;
}

static int rank_survivors_finalize(const rmx_config_t *base_cfg, void *arg)
{
    const int *tcp = arg;
    rmx_config_t cfg = *base_cfg;
    cfg.oob.barrier = stubborn_barrier;
    unsigned char *base;
    rmx_win_t *win;
    rmx_ctx_t *ctx = open_rank(&cfg, *tcp, WIN_BYTES, &base, &win);
    if (rmx_rank(ctx) == VICTIM) {
        usleep(100 * 1000);
        die_now();
    }
    int rc;
    while ((rc = rmx_sync_all(ctx)) == RMX_OK)
        ;
    RANK_ASSERT(rc == RMX_ERR_PEER || rc == RMX_ERR_STOPPED, "sync_all: %s", rmx_strerror(rc));
    finalize_in_time(ctx);
    return 0;
}

static void survivors_finalize(int tcp)
{
    stubborn = mmap(NULL, sizeof(*stubborn), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                    -1, 0);
    cr_assert(stubborn != MAP_FAILED);
    atomic_init(&stubborn->arrived, 0);
    atomic_init(&stubborn->generation, 0);
    run_job_with_a_victim(tcp ? "survivors_finalize_tcp" : "survivors_finalize_shm",
                          rank_survivors_finalize, &tcp, 0, RMX_ERR_PEER);
    munmap(stubborn, sizeof(*stubborn));
}

Test(peer, survivors_finalize_past_a_runtime_barrier_that_waits_shm, .timeout = RMX_T(30))
{
    survivors_finalize(0);
}

Test(peer, survivors_finalize_past_a_runtime_barrier_that_waits_tcp, .timeout = RMX_T(30))
{
    survivors_finalize(1);
}

/* ---- a rank that fails on purpose (rmx_fail: Fortran's FAIL IMAGE) and exits normally.  The
 * survivors learn it from its announcement, not from the transport (within a fraction of
 * peer_timeout_s); a sync_all it completed before completes for everyone, however late they come
 * to it; they still synchronize among themselves (sync_images passes over it and reports it); a
 * window creation fails alike everywhere instead of waiting for it in the bootstrap; finalize
 * returns RMX_ERR_PEER and the job's status is 0. */
static int rank_fails_on_purpose(const rmx_config_t *cfg, void *arg)
{
    int tcp = *(const int *)arg;
    unsigned char *base;
    rmx_win_t *win;
    rmx_ctx_t *ctx = open_rank(cfg, tcp, WIN_BYTES, &base, &win);
    int me = rmx_rank(ctx);
    if (me != VICTIM)
        usleep(200 * 1000); /* the victim completes the barrier first, and fails before we do */
    RANK_OK(rmx_sync_all(ctx));
    if (me == VICTIM) {
        RANK_OK(rmx_fail(ctx));
        RANK_RC(RMX_ERR_CTX, rmx_sync_all(ctx));
        _exit(0);
    }
    double t0 = now_s();
    RANK_RC(RMX_ERR_PEER, rmx_sync_all(ctx));
    double took = now_s() - t0;
    RANK_ASSERT(took < PEER_TIMEOUT_S / 4, "the failure took %.2f s to notice", took);
    RANK_RC(RMX_ERR_PEER, rmx_peer_status(ctx, VICTIM));
    int victim = VICTIM, other = 1 - me;
    RANK_RC(RMX_ERR_PEER, rmx_sync_images(ctx, &victim, 1));
    uint64_t v = 100 + (uint64_t)me, got = 0;
    RANK_RC(RMX_ERR_PEER, rmx_get(win, &got, sizeof(got), VICTIM, 0));
    RANK_OK(rmx_put(win, &v, sizeof(v), other, sizeof(v) * (size_t)me));
    RANK_RC(RMX_ERR_PEER, rmx_sync_images(ctx, NULL, 0));
    memcpy(&got, base + sizeof(v) * (size_t)other, sizeof(got));
    RANK_ASSERT(got == 100 + (uint64_t)other, "the other survivor's put not seen: %llu",
                (unsigned long long)got);
    void *b2;
    rmx_win_t *w2;
    RANK_RC(RMX_ERR_PEER, rmx_win_allocate(ctx, 64, &b2, &w2));
    RANK_RC(RMX_ERR_PEER, rmx_finalize(ctx));
    return 0;
}

static void fails_on_purpose(int tcp)
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.peer_timeout_s = PEER_TIMEOUT_S;
    int status[NRANKS];
    int rc = rmx_fork_run(NRANKS, rank_fails_on_purpose, &tcp, &cfg, RMX_T(60), status);
    for (int r = 0; r < NRANKS; r++)
        cr_expect_eq(status[r], 0, "rank %d exited with %d", r, status[r]);
    cr_expect_eq(rc, RMX_OK, "rmx_fork_run: %s", rmx_strerror(rc));
}

Test(peer, fails_on_purpose_shm, .timeout = RMX_T(40)) { fails_on_purpose(0); }
Test(peer, fails_on_purpose_tcp, .timeout = RMX_T(40)) { fails_on_purpose(1); }
