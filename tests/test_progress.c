/*
 * test_progress.c — one-sided means the target is not needed: every operation aimed at a rank
 * that computes or sleeps outside rmx completes in a small fraction of its busy time, over shared
 * memory and over tcp, on allocated and on registered (rmx_win_create) windows (the progress
 * agent: transports/agent.c).  And a call that timed out has let go of the caller's memory:
 * nothing writes into its buffer or its stack afterwards.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include "harness.h"

#define ORIGIN 0
#define TARGET 1
#define WIN_BYTES (128u << 10)
#define FLAG_DISP 2048
#define BIG_DISP 4096

/* How long the target stays away, and what the origin's calls may take at most meanwhile: a
 * quarter of it, which tells "served at once" from "waited for the target" on a loaded 2-core
 * machine (a tenth failed now and then there, by 10 to 40 ms, with other jobs running). */
#define BUSY_S RMX_T(1.0)
#define QUICK_S (BUSY_S / 4)

typedef enum { BUSY_SLEEPING, BUSY_COMPUTING } busy_kind_t;

typedef struct {
    int tcp;                 /* UCX_TLS=tcp,self */
    int created;             /* rmx_win_create instead of rmx_win_allocate */
    busy_kind_t busy;
    rmx_progress_t progress; /* 0: the default (auto) */
} setup_t;

static volatile double sink;

/* Outside rmx for `seconds`: asleep, or computing on this core. */
static void be_busy(busy_kind_t how, double seconds)
{
    double until = now_s() + seconds;
    if (how == BUSY_SLEEPING) {
        while (now_s() < until)
            usleep(10000);
        return;
    }
    double x = 1.0;
    while (now_s() < until)
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

typedef struct {
    rmx_ctx_t *ctx;
    rmx_win_t *win;
    unsigned char *base;
    void *user_mem;
} rank_t;

static rank_t open_rank(const rmx_config_t *cfg0, const setup_t *s, double timeout_s)
{
    if (s->tcp)
        setenv("UCX_TLS", "tcp,self", 1);
    rmx_config_t cfg;
    if (cfg0 != NULL)
        cfg = *cfg0;
    else
        rmx_config_init(&cfg);
    if (s->progress != RMX_PROGRESS_ENV)
        cfg.progress = s->progress;
    if (timeout_s > 0)
        cfg.peer_timeout_s = timeout_s;
    rank_t r = {0};
    RANK_OK(rmx_init(&cfg, &r.ctx));
    if (s->created) {
        r.user_mem = calloc(1, WIN_BYTES);
        RANK_ASSERT(r.user_mem != NULL);
        r.base = r.user_mem;
        RANK_OK(rmx_win_create(r.ctx, r.user_mem, WIN_BYTES, &r.win));
    } else {
        void *b;
        RANK_OK(rmx_win_allocate(r.ctx, WIN_BYTES, &b, &r.win));
        r.base = b;
    }
    return r;
}

static void close_rank(rank_t *r)
{
    RANK_OK(rmx_win_free(&r->win));
    RANK_OK(rmx_finalize(r->ctx));
    free(r->user_mem);
}

/* The call `what` took at most QUICK_S while the target was busy. */
#define QUICKLY(what, expr)                                                                  \
    do {                                                                                     \
        double t0_ = now_s();                                                                \
        RANK_OK(expr);                                                                       \
        double dt_ = now_s() - t0_;                                                          \
        RANK_ASSERT(dt_ < QUICK_S, "%s took %.3f s with the target busy for %.1f s", what,   \
                    dt_, (double)BUSY_S);                                                    \
    } while (0)

/* Every rmw op on its own int64 word: operand, the target's value afterwards (it starts at 0). */
typedef struct {
    rmx_rmw_op_t op;
    int64_t operand, after;
} rmw_case_t;
static const rmw_case_t rmw_cases[] = {
    {RMX_OP_INC, 0, 1},   {RMX_OP_PROD, 3, 0},  {RMX_OP_SUM, 7, 7},    {RMX_OP_LAND, 1, 0},
    {RMX_OP_LOR, 1, 1},   {RMX_OP_LXOR, 1, 1},  {RMX_OP_BAND, 0xff, 0}, {RMX_OP_BOR, 5, 5},
    {RMX_OP_BXOR, 6, 6},  {RMX_OP_SWAP, 9, 9},  {RMX_OP_MIN, -4, -4},  {RMX_OP_MAX, 11, 11},
    {RMX_OP_NO_OP, 0, 0},
};
typedef struct {
    rmx_rmw2_op_t op;
    int64_t comparand, value, after;
} rmw2_case_t;
static const rmw2_case_t rmw2_cases[] = {
    {RMX_OP2_COMP_SWAP, 0, 21, 21},    {RMX_OP2_MASK_SWAP, 0xf0, 0xab, 0xa0},
    {RMX_OP2_COMP_SWAP_GT, -1, 5, 5},  {RMX_OP2_COMP_SWAP_GE, 0, 6, 6},
    {RMX_OP2_COMP_SWAP_LT, 1, 7, 7},   {RMX_OP2_COMP_SWAP_LE, 0, 8, 8},
    {RMX_OP2_COMP_SWAP_NE, 1, 9, 9},
};
#define NRMW (sizeof(rmw_cases) / sizeof(rmw_cases[0]))
#define NRMW2 (sizeof(rmw2_cases) / sizeof(rmw2_cases[0]))
#define RMW_DISP 256 /* words: RMW_DISP + 8 * i, then the rmw2 ones */
#define IMPLICIT_DISP 1024
#define LOCKED_DISP 1032

/* The origin's operations, each timed, while the target is away. */
static void operate_on_busy_target(rank_t *r)
{
    uint64_t v = 0x1122334455667788u, got = 0;
    QUICKLY("put + sync_memory", (rmx_put(r->win, &v, 8, TARGET, 0), rmx_sync_memory(r->ctx)));
    QUICKLY("get", rmx_get(r->win, &got, 8, TARGET, 0));
    RANK_ASSERT(got == v, "get read %llx", (unsigned long long)got);
    unsigned char big[8192];
    fill_pattern(big, sizeof(big), ORIGIN, 1);
    QUICKLY("8 KiB put + sync_memory",
            (rmx_put(r->win, big, sizeof(big), TARGET, BIG_DISP), rmx_sync_memory(r->ctx)));
    for (size_t i = 0; i < NRMW; i++) {
        int64_t old = -1;
        QUICKLY("rmw", rmx_rmw(r->win, &rmw_cases[i].operand, 1, RMX_INT64, &old, TARGET,
                               RMW_DISP + 8 * i, 0, rmw_cases[i].op));
        RANK_ASSERT(old == 0, "rmw op %d fetched %lld", (int)rmw_cases[i].op, (long long)old);
    }
    for (size_t i = 0; i < NRMW2; i++) {
        int64_t old = -1;
        QUICKLY("rmw2", rmx_rmw2(r->win, &rmw2_cases[i].comparand, 1, RMX_INT64,
                                 &rmw2_cases[i].value, &old, TARGET, RMW_DISP + 8 * (NRMW + i), 0,
                                 rmw2_cases[i].op));
        RANK_ASSERT(old == 0, "rmw2 op %d fetched %lld", (int)rmw2_cases[i].op, (long long)old);
    }
    int64_t one = 1;
    QUICKLY("rmw in an implicit epoch", rmx_rmw(r->win, &one, 1, RMX_INT64, NULL, TARGET,
                                                IMPLICIT_DISP, RMX_MODE_PASSIVE_EPOCH_IMPLICIT,
                                                RMX_OP_SUM));
    QUICKLY("lock", rmx_win_lock(r->win, RMX_LOCK_EXCLUSIVE, TARGET, 0));
    QUICKLY("put in the epoch", rmx_put(r->win, &v, 8, TARGET, LOCKED_DISP));
    QUICKLY("unlock", rmx_win_unlock(r->win, TARGET));
    QUICKLY("shared lock", rmx_win_lock(r->win, RMX_LOCK_SHARED, TARGET, 0));
    QUICKLY("shared unlock", rmx_win_unlock(r->win, TARGET));
}

/* The target checks what the origin did while it was away. */
static void check_target_memory(rank_t *r)
{
    uint64_t v;
    memcpy(&v, r->base, 8);
    RANK_ASSERT(v == 0x1122334455667788u, "put word %llx", (unsigned long long)v);
    unsigned char big[8192];
    fill_pattern(big, sizeof(big), ORIGIN, 1);
    RANK_ASSERT(memcmp(r->base + BIG_DISP, big, sizeof(big)) == 0, "8 KiB put");
    for (size_t i = 0; i < NRMW; i++) {
        int64_t w;
        memcpy(&w, r->base + RMW_DISP + 8 * i, 8);
        RANK_ASSERT(w == rmw_cases[i].after, "rmw op %d left %lld, want %lld",
                    (int)rmw_cases[i].op, (long long)w, (long long)rmw_cases[i].after);
    }
    for (size_t i = 0; i < NRMW2; i++) {
        int64_t w;
        memcpy(&w, r->base + RMW_DISP + 8 * (NRMW + i), 8);
        RANK_ASSERT(w == rmw2_cases[i].after, "rmw2 op %d left %lld, want %lld",
                    (int)rmw2_cases[i].op, (long long)w, (long long)rmw2_cases[i].after);
    }
    int64_t w;
    memcpy(&w, r->base + IMPLICIT_DISP, 8);
    RANK_ASSERT(w == 1, "implicit-epoch SUM left %lld", (long long)w);
    memcpy(&v, r->base + LOCKED_DISP, 8);
    RANK_ASSERT(v == 0x1122334455667788u, "put in the lock epoch");
}

static int rank_busy_target(const rmx_config_t *cfg, void *arg)
{
    const setup_t *s = arg;
    rank_t r = open_rank(cfg, s, 0);
    int me = rmx_rank(r.ctx);
    RANK_OK(rmx_sync_all(r.ctx));
    if (me == TARGET)
        be_busy(s->busy, BUSY_S);
    else
        operate_on_busy_target(&r);
    RANK_OK(rmx_sync_all(r.ctx));
    /* SYNC IMAGES with a partner that is away: the origin's notification is applied while the
     * target computes, so the target's matching call, when it comes, finds it at once; the
     * origin's returns as soon as the target's has been made. */
    int partner = 1 - me;
    if (me == TARGET) {
        be_busy(s->busy, BUSY_S);
        QUICKLY("sync_images after the partner's", rmx_sync_images(r.ctx, &partner, 1));
    } else {
        double t0 = now_s();
        RANK_OK(rmx_sync_images(r.ctx, &partner, 1));
        double dt = now_s() - t0;
        RANK_ASSERT(dt < BUSY_S + QUICK_S, "sync_images took %.3f s, the partner came after %.1f s",
                    dt, (double)BUSY_S);
    }
    if (me == TARGET)
        check_target_memory(&r);
    close_rank(&r);
    return 0;
}

/* The coarray wait: the target polls a flag of its own window, once with rmx_sync_memory (the
 * standard idiom; it progresses even with nothing outstanding) and once outside rmx entirely. */
static int rank_flag_wait(const rmx_config_t *cfg, void *arg)
{
    const setup_t *s = arg;
    rank_t r = open_rank(cfg, s, 0);
    int me = rmx_rank(r.ctx);
    volatile uint64_t *flag = (volatile uint64_t *)(r.base + FLAG_DISP);
    for (uint64_t round = 1; round <= 2; round++) {
        RANK_OK(rmx_sync_all(r.ctx));
        if (me == TARGET) {
            double until = now_s() + BUSY_S;
            while (*flag != round && now_s() < until) {
                if (round == 1)
                    RANK_OK(rmx_sync_memory(r.ctx));
                else
                    be_busy(s->busy, 0.001);
            }
            RANK_ASSERT(*flag == round, "round %llu: the flag never arrived",
                        (unsigned long long)round);
        } else {
            usleep(20000); /* the target is polling by now */
            QUICKLY("flag put + sync_memory",
                    (rmx_put(r.win, &round, 8, TARGET, FLAG_DISP), rmx_sync_memory(r.ctx)));
        }
    }
    RANK_OK(rmx_sync_all(r.ctx));
    close_rank(&r);
    return 0;
}

#define SETUP(tcp_, created_, busy_) (&(setup_t){.tcp = tcp_, .created = created_, .busy = busy_})

#define BUSY_TESTS(name, tcp_, created_)                                                     \
    Test(progress, name##_target_sleeping, .timeout = RMX_T(60))                              \
    {                                                                                        \
        run_ranks(2, rank_busy_target, SETUP(tcp_, created_, BUSY_SLEEPING));                \
    }                                                                                        \
    Test(progress, name##_target_computing, .timeout = RMX_T(60))                             \
    {                                                                                        \
        run_ranks(2, rank_busy_target, SETUP(tcp_, created_, BUSY_COMPUTING));               \
    }                                                                                        \
    Test(progress, name##_flag_wait, .timeout = RMX_T(60))                                    \
    {                                                                                        \
        run_ranks(2, rank_flag_wait, SETUP(tcp_, created_, BUSY_COMPUTING));                 \
    }

BUSY_TESTS(shm_allocated, 0, 0)
BUSY_TESTS(shm_created, 0, 1)
BUSY_TESTS(tcp_allocated, 1, 0)
BUSY_TESTS(tcp_created, 1, 1)

/* RMX_PROGRESS=none runs no agent, even where peers need this rank's progress (tcp).  (What
 * the tests above see without it was checked by hand: with RMX_PROGRESS=none 10 of them fail,
 * each waiting out the whole busy time.  Not a test of its own: without an agent UCX still
 * answers over tcp now and then from its own thread, so "it must stall" is not reliable.) */
static int rank_no_agent(const rmx_config_t *cfg, void *arg)
{
    const setup_t *s = arg;
    rank_t r = open_rank(cfg, s, 0);
    rmx_stats_t st;
    RANK_OK(rmx_stats(r.ctx, &st));
    RANK_ASSERT(!st.agent_running, "RMX_PROGRESS=none, yet the agent runs");
    RANK_OK(rmx_sync_all(r.ctx));
    close_rank(&r);
    return 0;
}

Test(progress, none_runs_no_agent_even_over_tcp, .timeout = RMX_T(60))
{
    setup_t s = {.tcp = 1, .created = 1, .progress = RMX_PROGRESS_NONE};
    run_ranks(2, rank_no_agent, &s);
}

/* Without the agent, `while (flag != v) rmx_sync_memory(ctx);` is how a coarray program waits
 * (rmx.h, rmx_sync_memory), and the flag's put over tcp is served by the waiting rank's own
 * progress: each rank in turn puts a flag to the other and waits for the other's with
 * rmx_sync_memory alone.  Before, an idle rmx_sync_memory progressed only the worker this rank
 * issues on, never the one peers' requests arrive at: the first wait never ended. */
static int rank_flag_wait_by_sync_memory(const rmx_config_t *cfg, void *arg)
{
    const setup_t *s = arg;
    rank_t r = open_rank(cfg, s, 0);
    int me = rmx_rank(r.ctx), other = 1 - me;
    RANK_OK(rmx_sync_all(r.ctx));
    volatile uint64_t *flag = (volatile uint64_t *)r.base;
    /* rank 0 sends the odd values, rank 1 the even ones, each after seeing the one before */
    for (uint64_t v = 1; v <= 20; v++) {
        if ((int)(v & 1) == (me == 0)) {
            RANK_OK(rmx_put(r.win, &v, sizeof(v), other, 0));
            RANK_OK(rmx_sync_memory(r.ctx));
            continue;
        }
        double give_up = now_s() + 20;
        while (*flag < v && now_s() < give_up)
            RANK_OK(rmx_sync_memory(r.ctx));
        RANK_ASSERT(*flag >= v, "value %llu never came (the flag reads %llu)",
                    (unsigned long long)v, (unsigned long long)*flag);
    }
    RANK_OK(rmx_sync_all(r.ctx));
    close_rank(&r);
    return 0;
}

Test(progress, flag_wait_by_sync_memory_without_agent_tcp, .timeout = RMX_T(60))
{
    setup_t s = {.tcp = 1, .progress = RMX_PROGRESS_NONE};
    run_ranks(2, rank_flag_wait_by_sync_memory, &s);
}

Test(progress, flag_wait_by_sync_memory_without_agent_created, .timeout = RMX_T(60))
{
    setup_t s = {.created = 1, .progress = RMX_PROGRESS_NONE};
    run_ranks(2, rank_flag_wait_by_sync_memory, &s);
}

/* AUTO starts the agent exactly where something needs it. */
static int rank_auto_mode(const rmx_config_t *cfg, void *arg)
{
    const setup_t *s = arg;
    rank_t r = open_rank(cfg, s, 0);
    rmx_stats_t st;
    RANK_OK(rmx_stats(r.ctx, &st));
    int want = s->tcp || s->created;
    RANK_ASSERT(st.agent_running == want, "agent %s (tcp %d, registered window %d)",
                st.agent_running ? "runs" : "does not run", s->tcp, s->created);
    close_rank(&r);
    return 0;
}

Test(progress, auto_runs_the_agent_only_where_needed, .timeout = RMX_T(60))
{
    if (getenv("UCX_TLS") != NULL || getenv("RMX_WIN_MEMORY") != NULL)
        cr_skip_test("UCX_TLS or RMX_WIN_MEMORY set: the transport choice is the user's");
    run_ranks(2, rank_auto_mode, SETUP(0, 0, BUSY_SLEEPING));
    run_ranks(2, rank_auto_mode, SETUP(0, 1, BUSY_SLEEPING));
    run_ranks(2, rank_auto_mode, SETUP(1, 0, BUSY_SLEEPING));
}

/* The agent sleeps while nothing comes: over a second of a quiet job it uses almost no CPU. */
static int rank_idle_agent(const rmx_config_t *cfg, void *arg)
{
    setup_t s = {.tcp = 1, .progress = RMX_PROGRESS_THREAD};
    (void)arg;
    rank_t r = open_rank(cfg, &s, 0);
    RANK_OK(rmx_sync_all(r.ctx));
    rmx_stats_t a, b;
    RANK_OK(rmx_stats(r.ctx, &a));
    be_busy(BUSY_SLEEPING, 1.0);
    RANK_OK(rmx_stats(r.ctx, &b));
    RANK_ASSERT(a.agent_running && b.agent_running);
    double cpu = (double)(b.agent_cpu_ns - a.agent_cpu_ns) * 1e-9;
    fprintf(stderr, "progress: idle agent used %.6f s of CPU in 1 s, %llu wakeups\n", cpu,
            (unsigned long long)(b.agent_wakeups - a.agent_wakeups));
    RANK_ASSERT(cpu < 0.01 * RMX_TEST_TIME_SCALE, "the idle agent used %.4f s of CPU in 1 s",
                cpu);
    RANK_OK(rmx_sync_all(r.ctx));
    close_rank(&r);
    return 0;
}

Test(progress, an_idle_agent_sleeps, .timeout = RMX_T(60))
{
    run_ranks(2, rank_idle_agent, NULL);
}

/* Bad values are refused, naming the variable. */
Test(progress, bad_progress_values_are_refused, .timeout = RMX_T(30))
{
    rmx_config_t cfg;
    rmx_ctx_t *ctx = NULL;
    rmx_config_init(&cfg);
    cfg.bootstrap = RMX_BOOT_SINGLE;
    cfg.progress = (rmx_progress_t)42;
    cr_expect_eq(rmx_init(&cfg, &ctx), RMX_ERR_ARG);
    cfg.progress = RMX_PROGRESS_ENV;
    cfg.window_memory = (rmx_win_memory_t)7;
    cr_expect_eq(rmx_init(&cfg, &ctx), RMX_ERR_ARG);
    cfg.window_memory = RMX_WIN_MEMORY_ENV;
    char *old = getenv("RMX_PROGRESS") ? strdup(getenv("RMX_PROGRESS")) : NULL;
    setenv("RMX_PROGRESS", "sometimes", 1);
    cr_expect_eq(rmx_init(&cfg, &ctx), RMX_ERR_ARG);
    cr_expect_null(ctx);
    setenv("RMX_PROGRESS", "thread", 1);
    cr_assert_eq(rmx_init(&cfg, &ctx), RMX_OK);
    cr_expect_eq(rmx_progress(ctx), RMX_OK);
    cr_expect_eq(rmx_finalize(ctx), RMX_OK);
    cr_expect_eq(rmx_progress(ctx), RMX_ERR_CTX);
    if (old != NULL)
        setenv("RMX_PROGRESS", old, 1);
    else
        unsetenv("RMX_PROGRESS");
    free(old);
    cr_expect_eq(rmx_progress(NULL), RMX_ERR_CTX);
}

/* ---------------------------------------------------------------- a timed-out call lets go */

#define GET_BYTES 65536
#define CANARY 0x5ca1ab1ec0ffee11u

typedef struct {
    uint64_t before;
    unsigned char buf[GET_BYTES];
    uint64_t after;
} guarded_t;

/* A fetching atomic whose result lives in this frame; it times out and the frame is left. */
static __attribute__((noinline)) int fetch_into_frame(rank_t *r, uint64_t *saw)
{
    volatile uint64_t frame[8] = {CANARY, CANARY, 0, CANARY, CANARY, CANARY, CANARY, CANARY};
    uint64_t one = 1;
    int rc = rmx_rmw(r->win, &one, 1, RMX_UINT64, (void *)&frame[2], TARGET, 512, 0, RMX_OP_SUM);
    *saw = frame[2];
    return rc;
}

/* A frame over the same stack, kept while the late answers arrive; 0 when nothing wrote it. */
static __attribute__((noinline)) int frame_stays_unwritten(rank_t *r, double seconds)
{
    volatile unsigned char area[16384];
    for (size_t i = 0; i < sizeof(area); i++)
        area[i] = (unsigned char)(i * 7 + 3);
    double until = now_s() + seconds;
    while (now_s() < until)
        RANK_OK(rmx_progress(r->ctx));
    for (size_t i = 0; i < sizeof(area); i++)
        if (area[i] != (unsigned char)(i * 7 + 3))
            return 1;
    return 0;
}

/* How the target stays away: stopped by a signal (agent included: nothing can answer), or
 * computing without an agent (RMX_PROGRESS=none). */
typedef enum { AWAY_STOPPED, AWAY_COMPUTING } away_t;

typedef struct {
    setup_t setup;
    away_t away;
    volatile pid_t *target_pid; /* MAP_SHARED: the origin stops and continues the target */
} timeout_setup_t;

/* The MAP_SHARED page: the target's pid, and the origin's "I have left the sync_all" (the
 * target must not stop while the origin's barrier still needs it). */
#define ORIGIN_LEFT(pid) ((pid)[1])

static void wait_until_stopped(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    for (int i = 0; i < 10000; i++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        const char *paren = strrchr(buf, ')');
        if (paren != NULL && (paren[2] == 'T' || paren[2] == 't'))
            return;
        usleep(1000);
    }
    RANK_FAIL("the target did not stop");
}

static int rank_timeout_lets_go(const rmx_config_t *cfg, void *arg)
{
    const timeout_setup_t *t = arg;
    setup_t mine = t->setup;
    if (t->away == AWAY_COMPUTING && cfg->oob.rank == TARGET)
        mine.progress = RMX_PROGRESS_NONE; /* the fork launcher gives the rank before rmx_init */
    double timeout = RMX_T(0.3);
    rank_t r = open_rank(cfg, &mine, timeout);
    int me = rmx_rank(r.ctx);
    RANK_OK(rmx_sync_all(r.ctx));
    if (me == TARGET) {
        if (t->away == AWAY_STOPPED) {
            while (ORIGIN_LEFT(t->target_pid) == 0)
                usleep(1000);
            *t->target_pid = getpid();
            raise(SIGSTOP); /* until the origin's SIGCONT */
        } else {
            be_busy(BUSY_COMPUTING, 4 * timeout);
        }
    } else {
        guarded_t *g = malloc(sizeof(*g));
        RANK_ASSERT(g != NULL);
        g->before = g->after = CANARY;
        memset(g->buf, 0xab, sizeof(g->buf));
        if (t->away == AWAY_STOPPED) {
            ORIGIN_LEFT(t->target_pid) = 1;
            while (*t->target_pid == 0)
                usleep(1000);
            wait_until_stopped(*t->target_pid);
        } else {
            usleep((useconds_t)(timeout * 1e6 / 3)); /* the target has left its sync_all */
        }
        int rc_get = rmx_get(r.win, g->buf, GET_BYTES, TARGET, 0);
        uint64_t saw = 0;
        int rc_amo = fetch_into_frame(&r, &saw);
        if (t->away == AWAY_STOPPED) {
            /* Over shared memory UCX reads registered memory with CMA: no target needed. */
            RANK_ASSERT(rc_get == RMX_ERR_TIMEOUT || (!t->setup.tcp && rc_get == RMX_OK),
                        "get: %s", rmx_strerror(rc_get));
            RANK_RC(RMX_ERR_TIMEOUT, rc_amo);
            kill(*t->target_pid, SIGCONT);
        }
        /* Without an agent UCX may still answer over tcp from its own thread now and then;
         * whatever timed out is checked the same way. */
        RANK_ASSERT(rc_get == RMX_OK || rc_get == RMX_ERR_TIMEOUT, "get: %s",
                    rmx_strerror(rc_get));
        RANK_ASSERT(rc_amo == RMX_OK || rc_amo == RMX_ERR_TIMEOUT, "rmw: %s",
                    rmx_strerror(rc_amo));
        /* The target comes back and answers; the answers must land in rmx's memory. */
        RANK_ASSERT(frame_stays_unwritten(&r, 6 * timeout) == 0,
                    "a late answer wrote into the stack");
        for (size_t i = 0; i < sizeof(g->buf) && rc_get == RMX_ERR_TIMEOUT; i++)
            RANK_ASSERT(g->buf[i] == 0xab, "byte %zu of the get buffer changed", i);
        RANK_ASSERT(g->before == CANARY && g->after == CANARY, "the canaries changed");
        free(g);
    }
    RANK_OK(rmx_sync_all(r.ctx));
    /* The SUM (timed out or not) was applied once, and the ranks go on working together. */
    uint64_t one = 1, old = 0;
    if (me == ORIGIN)
        RANK_OK(rmx_rmw(r.win, &one, 1, RMX_UINT64, &old, TARGET, 512, 0, RMX_OP_SUM));
    RANK_OK(rmx_sync_all(r.ctx));
    if (me == ORIGIN)
        RANK_ASSERT(old == 1, "the first SUM was applied %llu times", (unsigned long long)old);
    close_rank(&r);
    return 0;
}

static void run_timeout_test(int tcp, int created, away_t away)
{
    volatile pid_t *pid = mmap(NULL, 2 * sizeof(pid_t), PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert(pid != MAP_FAILED);
    pid[0] = pid[1] = 0;
    timeout_setup_t t = {.setup = {.tcp = tcp, .created = created}, .away = away,
                         .target_pid = pid};
    run_ranks(2, rank_timeout_lets_go, &t);
    munmap((void *)pid, 2 * sizeof(pid_t));
}

Test(progress, a_timed_out_call_lets_go_of_the_callers_memory_tcp, .timeout = RMX_T(60))
{
    run_timeout_test(1, 0, AWAY_STOPPED);
}

Test(progress, a_timed_out_call_lets_go_of_the_callers_memory_shm_created, .timeout = RMX_T(60))
{
    run_timeout_test(0, 1, AWAY_STOPPED);
}

Test(progress, a_timed_out_call_lets_go_target_computing_without_agent_tcp, .timeout = RMX_T(60))
{
    run_timeout_test(1, 0, AWAY_COMPUTING);
}

Test(progress, a_timed_out_call_lets_go_target_computing_without_agent_shm_created,
     .timeout = RMX_T(60))
{
    run_timeout_test(0, 1, AWAY_COMPUTING);
}

/* A lock that timed out on a stopped target (its acquisition may still take effect when the
 * target runs again) is given back at this rank's next unlock or lock of it: another rank then
 * gets the lock.  Before: the late CSWAP (or ADD) held the word for good, unlock said
 * RMX_ERR_EPOCH, and every later lock of that target waited for ever.  Over tcp (where the
 * target's answer needs it to run); modes: exclusive, shared, an rmw's implicit epoch, and the
 * settling done by the next lock instead of an unlock, by the window's free, or by a sync_all
 * after which the other rank locks. */
typedef enum {
    LT_EXCLUSIVE, LT_SHARED, LT_IMPLICIT, LT_RELOCK, LT_FREE, LT_SYNC, LT_NMODES
} lock_timeout_mode_t;

typedef struct {
    volatile pid_t *shared; /* [0] the target's pid, [1] the origin's go, [2] rank 2's go */
    lock_timeout_mode_t mode;
    int created;
} lock_timeout_t;

static int rank_lock_timeout(const rmx_config_t *cfg, void *arg)
{
    const lock_timeout_t *t = arg;
    setup_t s = {.tcp = 1, .created = t->created};
    rank_t r = open_rank(cfg, &s, RMX_T(0.5));
    int me = rmx_rank(r.ctx);
    RANK_OK(rmx_sync_all(r.ctx));
    if (me == 1) {
        t->shared[0] = getpid();
        raise(SIGSTOP); /* until rank 0's SIGCONT */
    } else if (me == 0) {
        while (t->shared[0] == 0)
            usleep(1000);
        wait_until_stopped(t->shared[0]);
        uint64_t one = 1, old;
        int rc = t->mode == LT_IMPLICIT
                     ? rmx_rmw(r.win, &one, 1, RMX_UINT64, &old, 1, 8,
                               RMX_MODE_PASSIVE_EPOCH_IMPLICIT, RMX_OP_SUM)
                     : rmx_win_lock(r.win, t->mode == LT_SHARED ? RMX_LOCK_SHARED
                                                                : RMX_LOCK_EXCLUSIVE, 1, 0);
        RANK_RC(RMX_ERR_TIMEOUT, rc);
        kill(t->shared[0], SIGCONT);
        double until = now_s() + RMX_T(20);
        if (t->mode == LT_FREE || t->mode == LT_SYNC) { /* rmx_win_free, rmx_sync_all settle */
        } else if (t->mode == LT_RELOCK) { /* the next lock settles, then takes it */
            while ((rc = rmx_win_lock(r.win, RMX_LOCK_EXCLUSIVE, 1, 0)) == RMX_ERR_TIMEOUT &&
                   now_s() < until)
                ;
            RANK_OK(rc);
            RANK_OK(rmx_win_unlock(r.win, 1));
        } else if (t->mode == LT_IMPLICIT) { /* the next implicit epoch settles it */
            while ((rc = rmx_rmw(r.win, &one, 1, RMX_UINT64, &old, 1, 8,
                                 RMX_MODE_PASSIVE_EPOCH_IMPLICIT, RMX_OP_SUM)) ==
                       RMX_ERR_TIMEOUT && now_s() < until)
                ;
            RANK_OK(rc);
        } else { /* the unlock gives back what the timed-out lock took */
            while ((rc = rmx_win_unlock(r.win, 1)) == RMX_ERR_TIMEOUT && now_s() < until)
                ;
            RANK_OK(rc);
            RANK_RC(RMX_ERR_EPOCH, rmx_win_unlock(r.win, 1)); /* nothing is left to unlock */
        }
        t->shared[2] = 1;
    } else {
        while (t->shared[2] == 0)
            usleep(1000);
    }
    if (t->mode == LT_SYNC)
        RANK_OK(rmx_sync_all(r.ctx)); /* rank 0's gives back the word first */
    if (me == 2 && t->mode != LT_FREE) {
        RANK_OK(rmx_win_lock(r.win, RMX_LOCK_EXCLUSIVE, 1, 0)); /* waited for ever */
        RANK_OK(rmx_win_unlock(r.win, 1));
        RANK_OK(rmx_win_lock(r.win, RMX_LOCK_SHARED, 1, 0));
        RANK_OK(rmx_win_unlock(r.win, 1));
    }
    RANK_OK(rmx_sync_all(r.ctx));
    close_rank(&r); /* LT_FREE: refused (RMX_ERR_EPOCH) while the leftovers were not settled */
    return 0;
}

Test(progress, a_timed_out_lock_is_given_back_tcp, .timeout = RMX_T(240))
{
    volatile pid_t *shared = mmap(NULL, 3 * sizeof(pid_t), PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert(shared != MAP_FAILED);
    for (int created = 0; created <= 1; created++)
        for (int mode = 0; mode < LT_NMODES; mode++) {
            shared[0] = shared[1] = shared[2] = 0;
            lock_timeout_t t = {.shared = shared, .mode = (lock_timeout_mode_t)mode,
                                .created = created};
            run_ranks_cfg(3, rank_lock_timeout, &t, NULL, 40);
        }
    munmap((void *)shared, 3 * sizeof(pid_t));
}

/* ---------------------------------------------------------------- windows of user memory */

/* Create, free and create again; then one rank waits outside rmx while the other is in
 * rmx_sync_all.  Barrier notifications used to be taken as applied when UCX had only sent them
 * (over shared memory with registered memory UCX applies them in software at the target): the
 * second create hung in its first round, and a sync_all now and then waited for a rank that had
 * already left it. */
static int rank_create_free_cycles(const rmx_config_t *cfg0, void *arg)
{
    const setup_t *s = arg;
    rmx_config_t cfg = *cfg0;
    if (s->progress != RMX_PROGRESS_ENV)
        cfg.progress = s->progress;
    if (s->tcp)
        setenv("UCX_TLS", "tcp,self", 1);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&cfg, &ctx));
    int me = rmx_rank(ctx);
    for (int round = 0; round < 20; round++) {
        char *mem = calloc(1, 4096);
        RANK_ASSERT(mem != NULL);
        rmx_win_t *win;
        RANK_OK(rmx_win_create(ctx, mem, 4096, &win));
        RANK_OK(rmx_win_free(&win));
        RANK_OK(rmx_win_create(ctx, mem, 4096, &win));
        /* Rank 1 leaves the barrier and stays away longer than rank 0 may take in it (without
         * the agent, over tcp, rank 0's flush of its notification may wait for rank 1's
         * return: then it only has to complete). */
        if (me == 1) {
            RANK_OK(rmx_sync_all(ctx));
            be_busy(BUSY_SLEEPING, 2 * QUICK_S);
        } else if (s->progress == RMX_PROGRESS_NONE) {
            RANK_OK(rmx_sync_all(ctx));
        } else {
            QUICKLY("sync_all while the partner is away after it", rmx_sync_all(ctx));
        }
        RANK_OK(rmx_win_free(&win));
        free(mem);
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(progress, created_windows_create_free_and_sync, .timeout = RMX_T(60))
{
    run_ranks(2, rank_create_free_cycles, SETUP(0, 1, BUSY_SLEEPING));
}

Test(progress, created_windows_create_free_and_sync_without_agent, .timeout = RMX_T(60))
{
    setup_t s = {.created = 1, .progress = RMX_PROGRESS_NONE};
    run_ranks(2, rank_create_free_cycles, &s);
}

/* A wait whose worker is never idle still times out.  The origin (rank 0, no agent: its waits
 * serve its peers) gets from rank 2, which is stopped, while rank 1 keeps a stream of puts to
 * the origin in flight; every progress call of the origin's wait then has rank 1's puts to
 * serve.  The waits looked at the clock only after rounds that progressed nothing, so the get
 * waited as long as the stream lasted instead of peer_timeout_s. */
typedef struct {
    volatile pid_t pid[2];   /* rank 2's pid; the origin's "I have left the sync_all" */
    volatile int origin_getting; /* the origin is about to wait: rank 1 starts its stream */
    volatile int origin_done; /* the origin's wait has returned: rank 1 stops its stream */
    volatile double waited;   /* how long the wait took (from the death, when rank 2 dies) */
    volatile int rc;
    volatile long puts;       /* rank 1's puts during the wait */
    int dead;                 /* rank 2 is killed, the origin syncs with it (else: stopped, get) */
    volatile double died_at;
} busy_wait_page_t;

static int rank_busy_wait_times_out(const rmx_config_t *cfg, void *arg)
{
    busy_wait_page_t *p = arg;
    setup_t mine = {.tcp = 1};
    if (cfg->oob.rank == ORIGIN)
        mine.progress = RMX_PROGRESS_NONE; /* the origin's waits serve rank 1's puts */
    double timeout = RMX_T(0.5), stream_s = 30 * timeout;
    rmx_config_t c = *cfg;
    c.coalesce_disable = 1; /* rank 1's puts leave one by one, none staged */
    rank_t r = open_rank(&c, &mine, timeout);
    int me = rmx_rank(r.ctx);
    RANK_OK(rmx_sync_all(r.ctx));
    if (me == 2) {
        while (p->pid[1] == 0)
            usleep(1000);
        p->pid[0] = getpid();
        if (p->dead) { /* dies once the origin waits for it beside rank 1's stream */
            while (!p->origin_getting)
                usleep(100);
            usleep((useconds_t)(timeout * 1e6 / 2));
            p->died_at = now_s();
            raise(SIGKILL);
        }
        raise(SIGSTOP); /* until the origin's SIGCONT */
    } else if (me == 1) {
        unsigned char src[64];
        memset(src, me, sizeof(src));
        while (!p->origin_getting)
            usleep(100);
        double until = now_s() + stream_s;
        long puts = 0;
        while (!p->origin_done && now_s() < until) /* only the origin's wait serves them */
            RANK_OK(rmx_put(r.win, src, sizeof(src), ORIGIN, (size_t)(puts++ % 512) * 64));
        p->puts = puts;
        RANK_ASSERT(p->origin_done, "the origin's wait still waited after %.1f s", stream_s);
    } else {
        p->pid[1] = 1;
        while (p->pid[0] == 0)
            usleep(1000);
        if (!p->dead)
            wait_until_stopped(p->pid[0]);
        else
            usleep((useconds_t)(timeout * 1e6 / 4)); /* rank 1's stream under way */
        p->origin_getting = 1;
        unsigned char dst[64];
        int victim = 2;
        double t0 = now_s();
        p->rc = p->dead ? rmx_sync_images(r.ctx, &victim, 1)
                        : rmx_get(r.win, dst, sizeof(dst), 2, 0);
        p->waited = now_s() - (p->dead ? p->died_at : t0);
        p->origin_done = 1;
        if (!p->dead)
            kill(p->pid[0], SIGCONT);
        RANK_RC(p->dead ? RMX_ERR_PEER : RMX_ERR_TIMEOUT, p->rc);
        /* A few times peer_timeout_s at most (rmx.h), far from the stream's 30. */
        RANK_ASSERT(p->waited < 8 * timeout, "the wait took %.2f s with peer_timeout_s %.2f",
                    p->waited, timeout);
    }
    if (p->dead) { /* the survivors end with the victim gone */
        int rc = rmx_win_free(&r.win);
        RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_PEER, "win_free: %s", rmx_strerror(rc));
        rc = rmx_finalize(r.ctx);
        RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_PEER, "finalize: %s", rmx_strerror(rc));
        return 0;
    }
    RANK_OK(rmx_sync_all(r.ctx));
    close_rank(&r);
    return 0;
}

static void run_busy_wait(int dead)
{
    busy_wait_page_t *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert(p != MAP_FAILED);
    memset(p, 0, sizeof(*p));
    p->dead = dead;
    int status[3];
    int rc = rmx_fork_run(3, rank_busy_wait_times_out, p, NULL, RMX_T(60), status);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(status[i], dead && i == 2 ? 128 + SIGKILL : 0, "rank %d exited with %d", i,
                     status[i]);
    cr_expect(dead || rc == RMX_OK, "rmx_fork_run: %s", rmx_strerror(rc));
    fprintf(stderr, "progress: the %s waited %.2f s (%s) while rank 1 made %ld puts to it\n",
            dead ? "sync_images" : "get", p->waited, rmx_strerror(p->rc), p->puts);
    cr_expect(p->puts > 100, "rank 1 made only %ld puts meanwhile", p->puts);
    munmap(p, sizeof(*p));
}

Test(progress, a_wait_whose_worker_is_never_idle_still_times_out_tcp, .timeout = RMX_T(90))
{
    run_busy_wait(0);
}

/* The same for a sync whose partner dies meanwhile: failures are looked for on busy rounds too
 * (before, the sync_images waited 14.75 s, as long as rank 1's stream lasted, 2 runs in 3). */
Test(progress, a_sync_whose_worker_is_never_idle_still_sees_a_death_tcp, .timeout = RMX_T(90))
{
    run_busy_wait(1);
}

/* A window's free is not held by traffic to another window.  rmx_win_free serves what reached
 * the window before every rank was done with it (rmx_ucx_drain: a pass of the progress agent
 * that began after the free asked) before it unmaps.  Here rank 1's threads keep streams of
 * puts to another window of rank 0 in flight, each on a stream of its own, from before rank 0's
 * free until it has returned: the agent's pass went on until a progress call found nothing. */
#define FREE_STREAMERS 2
typedef struct {
    volatile int streaming;    /* rank 1's threads have begun */
    volatile int free_done;    /* rank 0's free has returned: rank 1's threads stop */
    volatile double took;      /* rank 0's free */
    long puts;                 /* rank 1's puts meanwhile */
} free_stream_page_t;

typedef struct {
    rmx_ctx_t *ctx;
    rmx_win_t *win;
    free_stream_page_t *page;
    double until;
} streamer_t;

static void *stream_puts(void *arg)
{
    streamer_t *s = arg;
    rmx_stream_t *st = NULL;
    rmx_win_t *b = NULL;
    if (rmx_stream_create(s->ctx, &st) != RMX_OK || rmx_win_bind(s->win, st, &b) != RMX_OK)
        RANK_FAIL("stream or bind failed");
    unsigned char src[64];
    memset(src, 1, sizeof(src));
    long puts = 0;
    s->page->streaming = 1;
    while (!s->page->free_done && now_s() < s->until)
        RANK_OK(rmx_put(b, src, sizeof(src), 0, (size_t)(puts++ % 512) * 64));
    __atomic_add_fetch(&s->page->puts, puts, __ATOMIC_SEQ_CST);
    RANK_OK(rmx_win_free(&b));
    RANK_OK(rmx_stream_free(&st));
    return NULL;
}

static int rank_free_beside_streams(const rmx_config_t *cfg, void *arg)
{
    free_stream_page_t *p = arg;
    setup_t mine = {.tcp = 1}; /* the default progress: rank 0's agent serves the streams */
    rmx_config_t c = *cfg;
    c.coalesce_disable = 1; /* the puts leave one by one */
    c.threads = RMX_THREAD_MULTIPLE;
    rank_t r = open_rank(&c, &mine, 0);
    rmx_win_t *freed = NULL;
    void *freed_base;
    RANK_OK(rmx_win_allocate(r.ctx, 4096, &freed_base, &freed));
    RANK_OK(rmx_sync_all(r.ctx));
    if (rmx_rank(r.ctx) == 0) {
        while (!p->streaming)
            usleep(100);
        usleep(50000); /* the streams under way */
        double t0 = now_s();
        RANK_OK(rmx_win_free(&freed));
        p->took = now_s() - t0;
        p->free_done = 1;
        RANK_ASSERT(p->took < QUICK_S, "rmx_win_free took %.2f s beside rank 1's streams",
                    p->took);
    } else {
        pthread_t th[FREE_STREAMERS];
        streamer_t s = {r.ctx, r.win, p, now_s() + RMX_T(20)};
        for (int t = 0; t < FREE_STREAMERS; t++)
            RANK_ASSERT(pthread_create(&th[t], NULL, stream_puts, &s) == 0);
        RANK_OK(rmx_win_free(&freed));
        for (int t = 0; t < FREE_STREAMERS; t++)
            pthread_join(th[t], NULL);
        RANK_ASSERT(p->free_done, "rank 0's free had not returned after 20 s");
    }
    RANK_OK(rmx_sync_all(r.ctx));
    close_rank(&r);
    return 0;
}

Test(progress, a_window_free_is_not_held_by_traffic_to_another_window_tcp,
     .timeout = RMX_T(90))
{
    free_stream_page_t *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert(p != MAP_FAILED);
    memset(p, 0, sizeof(*p));
    int status[2];
    int rc = rmx_fork_run(2, rank_free_beside_streams, p, NULL, RMX_T(60), status);
    fprintf(stderr, "progress: rank 0's win_free took %.3f s while rank 1 made %ld puts to it\n",
            p->took, p->puts);
    cr_expect(rc == RMX_OK && status[0] == 0 && status[1] == 0, "rmx_fork_run: %s (%d, %d)",
              rmx_strerror(rc), status[0], status[1]);
    munmap(p, sizeof(*p));
}
