/* test_context.c — rmx_init/rmx_finalize, single-process bootstrap, config, errors, threads. */
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include "harness.h"

Test(context, single_process_init_reports_rank_0_of_1)
{
    rmx_ctx_t *ctx;
    cr_assert_eq(rmx_init(NULL, &ctx), RMX_OK);
    cr_expect_eq(rmx_rank(ctx), 0);
    cr_expect_eq(rmx_size(ctx), 1);
    cr_expect_eq(rmx_finalize(ctx), RMX_OK);
}

Test(context, every_call_works_on_one_process_through_self)
{
    rmx_ctx_t *ctx;
    cr_assert_eq(rmx_init(NULL, &ctx), RMX_OK);
    void *base;
    rmx_win_t *win;
    cr_assert_eq(rmx_win_allocate(ctx, 4096, &base, &win), RMX_OK);
    char out[100], in[100];
    fill_pattern(out, sizeof(out), 0, 1);
    cr_assert_eq(rmx_put(win, out, sizeof(out), 0, 10), RMX_OK);
    cr_assert_eq(rmx_get(win, in, sizeof(in), 0, 10), RMX_OK);
    cr_expect_eq(check_pattern(in, sizeof(in), 0, 1), sizeof(in));
    cr_assert_eq(rmx_sync_all(ctx), RMX_OK);
    cr_expect_eq(check_pattern((char *)base + 10, sizeof(out), 0, 1), sizeof(out));
    cr_assert_eq(rmx_sync_images(ctx, NULL, 0), RMX_OK);
    int me = 0;
    cr_assert_eq(rmx_sync_images(ctx, &me, 1), RMX_OK);
    cr_assert_eq(rmx_win_free(&win), RMX_OK);
    cr_expect_null(win);
    cr_expect_eq(rmx_finalize(ctx), RMX_OK);
}

Test(context, config_init_sets_the_documented_defaults)
{
    rmx_config_t cfg;
    memset(&cfg, 0xff, sizeof(cfg));
    rmx_config_init(&cfg);
    cr_expect_eq(cfg.bootstrap, RMX_BOOT_AUTO);
    cr_expect_eq(cfg.bind, RMX_BIND_ENV);
    cr_expect_eq(cfg.peer_timeout_s, 10.0);
    cr_expect_gt(cfg.coalesce_max, 0);
    cr_expect_eq(cfg.coalesce_disable, 0);
    rmx_config_init(NULL); /* must not crash */
}

Test(context, bad_arguments_to_init_are_rejected)
{
    rmx_ctx_t *ctx = (rmx_ctx_t *)0x1;
    cr_expect_eq(rmx_init(NULL, NULL), RMX_ERR_ARG);
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.peer_timeout_s = -1;
    cr_expect_eq(rmx_init(&cfg, &ctx), RMX_ERR_ARG);
    cr_expect_null(ctx);
    rmx_config_init(&cfg);
    cfg.bootstrap = (rmx_boot_kind_t)42;
    cr_expect_eq(rmx_init(&cfg, &ctx), RMX_ERR_ARG);
    rmx_config_init(&cfg);
    cfg.bootstrap = RMX_BOOT_OOB; /* no callbacks given */
    cr_expect_eq(rmx_init(&cfg, &ctx), RMX_ERR_ARG);
    cfg.oob.allgather = NULL;
    cfg.oob.size = 2;
    cfg.oob.rank = 5;
    cr_expect_eq(rmx_init(&cfg, &ctx), RMX_ERR_ARG);
}

/* Every field is checked, NaN and infinity included (NaN passes every `< 0` test and used to
 * become UCX's own 20 s keepalive). */
Test(context, every_config_field_is_validated)
{
    static const struct {
        const char *what;
        double timeout;
        size_t coalesce_max;
        int coalesce_disable, progress, window_memory, bind;
    } bad[] = {
        {"NaN timeout", NAN, 0, 0, 0, 0, 0},
        {"infinite timeout", INFINITY, 0, 0, 0, 0, 0},
        {"-infinite timeout", -INFINITY, 0, 0, 0, 0, 0},
        {"negative timeout", -0.5, 0, 0, 0, 0, 0},
        {"absurd timeout", 1e300, 0, 0, 0, 0, 0},
        {"absurd coalesce_max", 0, SIZE_MAX, 0, 0, 0, 0},
        {"coalesce_max above the limit", 0, RMX_COALESCE_MAX_LIMIT + 1, 0, 0, 0, 0},
        {"coalesce_disable 2", 0, 0, 2, 0, 0, 0},
        {"coalesce_disable -1", 0, 0, -1, 0, 0, 0},
        {"progress 9", 0, 0, 0, 9, 0, 0},
        {"progress -1", 0, 0, 0, -1, 0, 0},
        {"window_memory 7", 0, 0, 0, 0, 7, 0},
        {"bind 12", 0, 0, 0, 0, 0, 12},
        {"bind -3", 0, 0, 0, 0, 0, -3},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        rmx_config_t cfg;
        rmx_config_init(&cfg);
        cfg.bootstrap = RMX_BOOT_SINGLE;
        cfg.peer_timeout_s = bad[i].timeout;
        cfg.coalesce_max = bad[i].coalesce_max;
        cfg.coalesce_disable = bad[i].coalesce_disable;
        cfg.progress = (rmx_progress_t)bad[i].progress;
        cfg.window_memory = (rmx_win_memory_t)bad[i].window_memory;
        cfg.bind = (rmx_bind_t)bad[i].bind;
        rmx_ctx_t *ctx = (rmx_ctx_t *)0x1;
        int rc = rmx_init(&cfg, &ctx);
        cr_expect_eq(rc, RMX_ERR_ARG, "%s: %s", bad[i].what, rmx_strerror(rc));
        cr_expect_null(ctx, "%s", bad[i].what);
        if (rc == RMX_OK)
            rmx_finalize(ctx);
    }
    /* the limits themselves are fine */
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.bootstrap = RMX_BOOT_SINGLE;
    cfg.peer_timeout_s = 1e6;
    cfg.coalesce_max = RMX_COALESCE_MAX_LIMIT;
    rmx_ctx_t *ctx;
    cr_assert_eq(rmx_init(&cfg, &ctx), RMX_OK);
    cr_expect_eq(rmx_finalize(ctx), RMX_OK);
}

/* Environment words are checked as the fields are. */
Test(context, bad_environment_words_are_rejected)
{
    static const char *const vars[][2] = {
        {"RMX_PROGRESS", "sometimes"}, {"RMX_WIN_MEMORY", "gpu"}, {"RMX_BIND", "socket"},
    };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        setenv(vars[i][0], vars[i][1], 1);
        rmx_config_t cfg;
        rmx_config_init(&cfg);
        cfg.bootstrap = RMX_BOOT_SINGLE;
        rmx_ctx_t *ctx = NULL;
        int rc = rmx_init(&cfg, &ctx);
        cr_expect_eq(rc, RMX_ERR_ARG, "%s=%s: %s", vars[i][0], vars[i][1], rmx_strerror(rc));
        if (rc == RMX_OK)
            rmx_finalize(ctx);
        unsetenv(vars[i][0]);
    }
}

Test(context, calls_without_a_context_fail_cleanly)
{
    rmx_stats_t st;
    void *base;
    rmx_win_t *win;
    cr_expect_eq(rmx_rank(NULL), RMX_ERR_CTX);
    cr_expect_eq(rmx_size(NULL), RMX_ERR_CTX);
    cr_expect_eq(rmx_finalize(NULL), RMX_ERR_CTX);
    cr_expect_eq(rmx_sync_all(NULL), RMX_ERR_CTX);
    cr_expect_eq(rmx_sync_memory(NULL), RMX_ERR_CTX);
    cr_expect_eq(rmx_sync_images(NULL, NULL, 0), RMX_ERR_CTX);
    cr_expect_eq(rmx_stats(NULL, &st), RMX_ERR_CTX);
    cr_expect_eq(rmx_win_allocate(NULL, 8, &base, &win), RMX_ERR_CTX);
    cr_expect_eq(rmx_win_create(NULL, &st, 8, &win), RMX_ERR_CTX);
    char buf[8];
    cr_expect_eq(rmx_put(NULL, buf, 8, 0, 0), RMX_ERR_WIN);
    cr_expect_eq(rmx_get(NULL, buf, 8, 0, 0), RMX_ERR_WIN);
    cr_expect_eq(rmx_win_free(NULL), RMX_ERR_ARG);
    win = NULL;
    cr_expect_eq(rmx_win_free(&win), RMX_ERR_WIN);
}

Test(context, a_finalized_context_is_recognised)
{
    rmx_ctx_t *ctx;
    cr_assert_eq(rmx_init(NULL, &ctx), RMX_OK);
    void *base;
    rmx_win_t *win;
    cr_assert_eq(rmx_win_allocate(ctx, 64, &base, &win), RMX_OK);
    cr_assert_eq(rmx_finalize(ctx), RMX_OK); /* frees the open window too */
    char buf[8] = {0};
    cr_expect_eq(rmx_finalize(ctx), RMX_ERR_CTX);
    cr_expect_eq(rmx_rank(ctx), RMX_ERR_CTX);
    cr_expect_eq(rmx_sync_all(ctx), RMX_ERR_CTX);
    cr_expect_eq(rmx_put(win, buf, 8, 0, 0), RMX_ERR_WIN);
    cr_expect_eq(rmx_win_free(&win), RMX_ERR_WIN);
}

static void *call_from_other_thread(void *arg)
{
    rmx_ctx_t *ctx = arg;
    static int results[3];
    results[0] = rmx_rank(ctx);
    results[1] = rmx_sync_all(ctx);
    results[2] = rmx_finalize(ctx);
    return results;
}

Test(context, only_the_owner_thread_may_use_a_context)
{
    rmx_ctx_t *ctx;
    cr_assert_eq(rmx_init(NULL, &ctx), RMX_OK);
    pthread_t th;
    void *ret;
    cr_assert_eq(pthread_create(&th, NULL, call_from_other_thread, ctx), 0);
    pthread_join(th, &ret);
    int *results = ret;
    for (int i = 0; i < 3; i++)
        cr_expect_eq(results[i], RMX_ERR_THREAD, "call %d: %s", i, rmx_strerror(results[i]));
    cr_expect_eq(rmx_finalize(ctx), RMX_OK);
}

Test(context, strerror_explains_every_code)
{
    int codes[] = {RMX_OK, RMX_ERR_ARG, RMX_ERR_RANK, RMX_ERR_RANGE, RMX_ERR_ALIGN,
                   RMX_ERR_DATATYPE, RMX_ERR_OP, RMX_ERR_EPOCH, RMX_ERR_WIN, RMX_ERR_CTX,
                   RMX_ERR_NOMEM, RMX_ERR_PEER, RMX_ERR_TIMEOUT, RMX_ERR_BOOTSTRAP,
                   RMX_ERR_TRANSPORT, RMX_ERR_UNSUPPORTED, RMX_ERR_THREAD, RMX_ERR_STOPPED};
    size_t n = sizeof(codes) / sizeof(codes[0]);
    const char *unknown = rmx_strerror(12345);
    for (size_t i = 0; i < n; i++) {
        const char *s = rmx_strerror(codes[i]);
        cr_assert_not_null(s);
        cr_expect_neq(strcmp(s, unknown), 0, "code %d has no message", codes[i]);
        for (size_t j = 0; j < i; j++)
            cr_expect_neq(strcmp(s, rmx_strerror(codes[j])), 0, "codes %d and %d share a message",
                          codes[i], codes[j]);
    }
}

Test(context, two_contexts_in_one_process_are_independent)
{
    rmx_ctx_t *a, *b;
    cr_assert_eq(rmx_init(NULL, &a), RMX_OK);
    cr_assert_eq(rmx_init(NULL, &b), RMX_OK);
    void *base_a, *base_b;
    rmx_win_t *wa, *wb;
    cr_assert_eq(rmx_win_allocate(a, 16, &base_a, &wa), RMX_OK);
    cr_assert_eq(rmx_win_allocate(b, 16, &base_b, &wb), RMX_OK);
    uint64_t v = 77;
    cr_assert_eq(rmx_put(wa, &v, 8, 0, 0), RMX_OK);
    cr_assert_eq(rmx_sync_memory(a), RMX_OK);
    cr_expect_eq(*(uint64_t *)base_a, 77);
    cr_expect_eq(*(uint64_t *)base_b, 0);
    cr_expect_eq(rmx_finalize(a), RMX_OK);
    cr_expect_eq(rmx_put(wb, &v, 8, 0, 8), RMX_OK);
    cr_expect_eq(rmx_finalize(b), RMX_OK);
}
