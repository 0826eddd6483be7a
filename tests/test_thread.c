/*
 * test_thread.c — the threading rule of rmx.h: a context and its windows belong to the thread
 * that called rmx_init; every entry point called from any other thread returns RMX_ERR_THREAD,
 * touches nothing, and leaves the context fully usable by its owner.  Several contexts, each
 * owned by its own thread, work side by side (their shared process state is locked).
 */
#include <pthread.h>
#include "harness.h"

typedef struct {
    rmx_ctx_t *ctx;
    rmx_win_t *win;
    unsigned char *base;
    int right;
    int failures;           /* entry points that did not answer RMX_ERR_THREAD */
    char first_failure[128];
} foreign_t;

static void expect_thread_error(foreign_t *f, const char *what, int rc)
{
    if (rc == RMX_ERR_THREAD)
        return;
    if (f->failures++ == 0)
        snprintf(f->first_failure, sizeof(f->first_failure), "%s returned %d (%s)", what, rc,
                 rmx_strerror(rc));
}

#define FOREIGN(f, call) expect_thread_error(f, #call, (call))

/* Every public entry point that takes a context or a window, with otherwise valid arguments. */
static void *call_everything_from_another_thread(void *arg)
{
    foreign_t *f = arg;
    unsigned char buf[64];
    memset(buf, 0x77, sizeof(buf));
    size_t len;
    void *base;
    rmx_win_t *w = NULL;
    rmx_stats_t st;
    int images[1] = {f->right};
    rmx_win_t *win = f->win;

    FOREIGN(f, rmx_rank(f->ctx));
    FOREIGN(f, rmx_size(f->ctx));
    FOREIGN(f, rmx_put(f->win, buf, sizeof(buf), f->right, 0));
    FOREIGN(f, rmx_get(f->win, buf, sizeof(buf), f->right, 0));
    FOREIGN(f, rmx_win_size(f->win, 0, &len));
    FOREIGN(f, rmx_win_allocate(f->ctx, 64, &base, &w));
    FOREIGN(f, rmx_win_create(f->ctx, buf, sizeof(buf), &w));
    FOREIGN(f, rmx_win_free(&win));
    FOREIGN(f, rmx_sync_all(f->ctx));
    FOREIGN(f, rmx_sync_images(f->ctx, images, 1));
    FOREIGN(f, rmx_sync_images(f->ctx, NULL, 0));
    FOREIGN(f, rmx_sync_memory(f->ctx));
    FOREIGN(f, rmx_stats(f->ctx, &st));
    FOREIGN(f, rmx_stats_reset(f->ctx));
    rmx_sub_t sub;
    memset(&sub, 0, sizeof(sub));
    sub.elem_size = 8;
    sub.rank = 1;
    sub.dim[0] = (rmx_sub_dim_t){.extent = 8, .first = 0, .count = 8, .stride = 1};
    FOREIGN(f, rmx_put_sub(f->win, buf, &sub, f->right, 0, &sub));
    FOREIGN(f, rmx_get_sub(f->win, buf, &sub, f->right, 0, &sub));
    uint64_t one = 1, old = 0;
    FOREIGN(f, rmx_rmw(f->win, &one, 1, RMX_UINT64, &old, f->right, 0, 0, RMX_OP_SUM));
    FOREIGN(f, rmx_rmw2(f->win, &one, 1, RMX_UINT64, &one, &old, f->right, 0, 0,
                        RMX_OP2_COMP_SWAP));
    FOREIGN(f, rmx_win_lock(f->win, RMX_LOCK_EXCLUSIVE, f->right, 0));
    FOREIGN(f, rmx_win_unlock(f->win, f->right));
    FOREIGN(f, rmx_finalize(f->ctx));
    if (win != f->win) /* a refused win_free must leave the handle alone */
        expect_thread_error(f, "rmx_win_free cleared the handle", RMX_OK);
    if (w != NULL)
        expect_thread_error(f, "a window was created", RMX_OK);
    return NULL;
}

static int rank_foreign_thread(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    static foreign_t f;
    RANK_OK(rmx_init(cfg, &f.ctx));
    int me = rmx_rank(f.ctx), n = rmx_size(f.ctx);
    f.right = (me + 1) % n;
    RANK_OK(rmx_win_allocate(f.ctx, 64, (void **)&f.base, &f.win));
    memset(f.base, 0xAB, 64);
    RANK_OK(rmx_stats_reset(f.ctx));
    RANK_OK(rmx_sync_all(f.ctx));

    pthread_t th;
    RANK_ASSERT(pthread_create(&th, NULL, call_everything_from_another_thread, &f) == 0);
    RANK_ASSERT(pthread_join(th, NULL) == 0);
    RANK_ASSERT(f.failures == 0, "%d entry points let a foreign thread in; first: %s", f.failures,
                f.first_failure);

    /* nothing happened: no data moved, no counter moved, and the owner carries on */
    RANK_OK(rmx_sync_all(f.ctx));
    for (int i = 0; i < 64; i++)
        RANK_ASSERT(f.base[i] == 0xAB, "byte %d changed by a refused call", i);
    rmx_stats_t st;
    RANK_OK(rmx_stats(f.ctx, &st));
    RANK_ASSERT(st.puts == 0 && st.gets == 0 && st.atomics == 0 && st.barriers == 2,
                "puts %llu gets %llu atomics %llu barriers %llu", (unsigned long long)st.puts,
                (unsigned long long)st.gets, (unsigned long long)st.atomics,
                (unsigned long long)st.barriers);
    RANK_OK(rmx_sync_all(f.ctx)); /* everyone has checked before anyone writes */
    unsigned char v = (unsigned char)me;
    RANK_OK(rmx_put(f.win, &v, 1, f.right, 0));
    RANK_OK(rmx_sync_all(f.ctx));
    int left = (me + n - 1) % n;
    RANK_ASSERT(f.base[0] == (unsigned char)left, "got %d from the left neighbour", f.base[0]);
    RANK_OK(rmx_win_free(&f.win));
    RANK_OK(rmx_finalize(f.ctx));
    return 0;
}

Test(thread, every_entry_point_refuses_a_foreign_thread_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_foreign_thread, NULL);
}

/* Four threads, each owning a single-process context, all working at once. */
static void *own_context(void *arg)
{
    int *result = arg;
    for (int round = 0; round < 5; round++) {
        rmx_config_t cfg;
        rmx_config_init(&cfg);
        cfg.bootstrap = RMX_BOOT_SINGLE;
        rmx_ctx_t *ctx;
        rmx_win_t *win;
        unsigned char *base, buf[256], back[256];
        if ((*result = rmx_init(&cfg, &ctx)) != RMX_OK)
            return NULL;
        if ((*result = rmx_win_allocate(ctx, sizeof(buf), (void **)&base, &win)) != RMX_OK)
            return NULL;
        fill_pattern(buf, sizeof(buf), round, (int)(size_t)pthread_self() & 0xff);
        if ((*result = rmx_put(win, buf, sizeof(buf), 0, 0)) != RMX_OK ||
            (*result = rmx_sync_all(ctx)) != RMX_OK ||
            (*result = rmx_get(win, back, sizeof(back), 0, 0)) != RMX_OK)
            return NULL;
        if (memcmp(buf, back, sizeof(buf)) != 0 || memcmp(buf, base, sizeof(buf)) != 0) {
            *result = RMX_ERR_TRANSPORT;
            return NULL;
        }
        if ((*result = rmx_finalize(ctx)) != RMX_OK)
            return NULL;
    }
    return NULL;
}

Test(thread, one_context_per_thread_side_by_side, .timeout = RMX_T(60))
{
    pthread_t th[4];
    int result[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, own_context, &result[i]), 0);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(pthread_join(th[i], NULL), 0);
        cr_expect_eq(result[i], RMX_OK, "thread %d: %s", i, rmx_strerror(result[i]));
    }
}

/* rmx_topology_print, rmx_strerror and rmx_config_init need no context: any thread may call them
 * at any time, also while another thread creates and destroys contexts (the first call loads
 * the process's hwloc topology). */
static volatile int stop_printing;

static void *print_topology_forever(void *arg)
{
    int *result = arg;
    FILE *sink = fopen("/dev/null", "w");
    *result = sink != NULL ? RMX_OK : RMX_ERR_ARG;
    while (!stop_printing && *result == RMX_OK) {
        *result = rmx_topology_print(sink);
        rmx_config_t cfg;
        rmx_config_init(&cfg);
        if (cfg.peer_timeout_s <= 0 || rmx_strerror(RMX_ERR_PEER)[0] == '\0')
            *result = RMX_ERR_ARG;
    }
    if (sink != NULL)
        fclose(sink);
    return NULL;
}

Test(thread, context_free_calls_are_safe_beside_init_and_finalize, .timeout = RMX_T(60))
{
    pthread_t th[2];
    int result[2];
    stop_printing = 0;
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, print_topology_forever, &result[i]), 0);
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.bootstrap = RMX_BOOT_SINGLE;
    double end = now_s() + 1.5;
    int rounds = 0, rc = RMX_OK;
    while (now_s() < end && rc == RMX_OK) {
        rmx_ctx_t *ctx;
        rc = rmx_init(&cfg, &ctx);
        if (rc == RMX_OK)
            rc = rmx_finalize(ctx);
        rounds++;
    }
    stop_printing = 1;
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(pthread_join(th[i], NULL), 0);
        cr_expect_eq(result[i], RMX_OK, "printing thread %d: %s", i, rmx_strerror(result[i]));
    }
    cr_expect_eq(rc, RMX_OK, "init/finalize round %d: %s", rounds, rmx_strerror(rc));
}
