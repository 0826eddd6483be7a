/* test_errors.c — bad input to the foundation calls: the exact error code, and nothing written. */
#include "harness.h"

#define WIN_BYTES 256

/* Windows of different sizes per rank: range checks must use the *target's* size. */
static size_t window_bytes(int rank) { return WIN_BYTES * (size_t)(rank + 1); }

static int rank_bad_inputs(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, window_bytes(me), (void **)&base, &win));
    memset(base, 0xAB, window_bytes(me));
    RANK_OK(rmx_sync_all(ctx));

    unsigned char buf[4 * WIN_BYTES];
    memset(buf, 0x11, sizeof(buf));
    int right = (me + 1) % n;
    size_t rsize = window_bytes(right);

    /* ranks */
    RANK_RC(RMX_ERR_RANK, rmx_put(win, buf, 8, -1, 0));
    RANK_RC(RMX_ERR_RANK, rmx_put(win, buf, 8, n, 0));
    RANK_RC(RMX_ERR_RANK, rmx_get(win, buf, 8, n + 100, 0));
    RANK_RC(RMX_ERR_RANK, rmx_get(win, buf, 8, -7, 0));
    /* ranges, against the target's own size */
    RANK_RC(RMX_ERR_RANGE, rmx_put(win, buf, rsize + 1, right, 0));
    RANK_RC(RMX_ERR_RANGE, rmx_put(win, buf, 1, right, rsize));
    RANK_RC(RMX_ERR_RANGE, rmx_put(win, buf, 8, right, rsize - 4));
    RANK_RC(RMX_ERR_RANGE, rmx_put(win, buf, 8, right, SIZE_MAX - 2)); /* disp+len wraps */
    RANK_RC(RMX_ERR_RANGE, rmx_put(win, buf, SIZE_MAX, right, 8));
    RANK_RC(RMX_ERR_RANGE, rmx_get(win, buf, rsize + 1, right, 0));
    RANK_RC(RMX_ERR_RANGE, rmx_get(win, buf, 2, right, rsize - 1));
    RANK_OK(rmx_get(win, buf, rsize, right, 0)); /* exactly the window: fine */
    memset(buf, 0x11, sizeof(buf));
    /* NULL buffers */
    RANK_RC(RMX_ERR_ARG, rmx_put(win, NULL, 8, right, 0));
    RANK_RC(RMX_ERR_ARG, rmx_get(win, NULL, 8, right, 0));
    RANK_RC(RMX_ERR_ARG, rmx_win_size(win, 0, NULL));
    RANK_RC(RMX_ERR_RANK, rmx_win_size(win, n, &rsize));
    RANK_RC(RMX_ERR_ARG, rmx_stats(ctx, NULL));
    /* bad window arguments */
    void *p;
    rmx_win_t *w2;
    RANK_RC(RMX_ERR_ARG, rmx_win_allocate(ctx, 8, NULL, &w2));
    RANK_RC(RMX_ERR_ARG, rmx_win_allocate(ctx, 8, &p, NULL));
    RANK_RC(RMX_ERR_ARG, rmx_win_create(ctx, NULL, 8, &w2));
    RANK_RC(RMX_ERR_ARG, rmx_win_create(ctx, buf, 8, NULL));
    /* sync_images list */
    int dup[2] = {right, right}, bad_rank = n, neg = -1;
    RANK_RC(RMX_ERR_ARG, rmx_sync_images(ctx, dup, 2));
    RANK_RC(RMX_ERR_RANK, rmx_sync_images(ctx, &bad_rank, 1));
    RANK_RC(RMX_ERR_RANK, rmx_sync_images(ctx, &neg, 1));
    RANK_RC(RMX_ERR_ARG, rmx_sync_images(ctx, dup, -1));

    /* none of the failed calls wrote anything anywhere */
    RANK_OK(rmx_sync_all(ctx));
    for (size_t i = 0; i < window_bytes(me); i++)
        RANK_ASSERT(base[i] == 0xAB, "byte %zu of my window changed to %#x", i, base[i]);

    /* use after free */
    rmx_win_t *stale = win;
    RANK_OK(rmx_win_free(&win));
    RANK_ASSERT(win == NULL);
    RANK_RC(RMX_ERR_WIN, rmx_put(stale, buf, 8, right, 0));
    RANK_RC(RMX_ERR_WIN, rmx_get(stale, buf, 8, right, 0));
    RANK_RC(RMX_ERR_WIN, rmx_win_free(&stale));
    RANK_RC(RMX_ERR_WIN, rmx_win_size(stale, 0, &rsize));
    RANK_OK(rmx_finalize(ctx));
    RANK_RC(RMX_ERR_CTX, rmx_sync_all(ctx));
    return 0;
}

Test(errors, bad_inputs_give_their_code_and_write_nothing_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_bad_inputs, NULL);
}

Test(errors, bad_inputs_give_their_code_and_write_nothing_4_ranks, .timeout = RMX_T(60))
{
    run_ranks(4, rank_bad_inputs, NULL);
}
