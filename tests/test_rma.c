/* test_rma.c — contiguous put/get between real processes over real UCP, 2 and 4 ranks. */
#include "harness.h"

static const size_t sizes[] = {1, 2, 3, 7, 8, 9, 63, 64, 65, 1000, 4096, 4097, 65536, 262147,
                               1u << 20, (1u << 20) + 5, 8u << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAX_SIZE (8u << 20)

/* Each rank puts a size-and-writer-specific pattern into its right neighbour's window, the
 * segment ends, each rank checks its own window byte for byte, then reads the left neighbour's. */
static int put_get_every_size(rmx_ctx_t *ctx, rmx_win_t *win, unsigned char *base)
{
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *buf = malloc(MAX_SIZE);
    RANK_ASSERT(buf != NULL);
    for (size_t i = 0; i < NSIZES; i++) {
        size_t len = sizes[i];
        size_t disp = len < MAX_SIZE ? 1 : 0; /* unaligned where there is room */
        fill_pattern(buf, len, me, (int)i);
        RANK_OK(rmx_put(win, buf, len, right, disp));
        memset(buf, 0, len); /* the source is reusable as soon as put returns */
        RANK_OK(rmx_sync_all(ctx));
        size_t bad = check_pattern(base + disp, len, left, (int)i);
        RANK_ASSERT(bad == len, "size %zu: byte %zu wrong at the target", len, bad);
        RANK_OK(rmx_get(win, buf, len, left, disp));
        bad = check_pattern(buf, len, (left + n - 1) % n, (int)i);
        RANK_ASSERT(bad == len, "size %zu: byte %zu wrong in get", len, bad);
        RANK_OK(rmx_sync_all(ctx));
    }
    free(buf);
    return 0;
}

static int rank_allocated_window(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, MAX_SIZE, &base, &win));
    put_get_every_size(ctx, win, base);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

static int rank_created_window(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    unsigned char *mem = calloc(1, MAX_SIZE);
    RANK_ASSERT(mem != NULL);
    rmx_win_t *win;
    RANK_OK(rmx_win_create(ctx, mem, MAX_SIZE, &win));
    put_get_every_size(ctx, win, mem);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    free(mem);
    return 0;
}

Test(rma, put_get_1B_to_8MiB_allocated_2_ranks, .timeout = RMX_T(120)) { run_ranks(2, rank_allocated_window, NULL); }
Test(rma, put_get_1B_to_8MiB_allocated_4_ranks, .timeout = RMX_T(120)) { run_ranks(4, rank_allocated_window, NULL); }
Test(rma, put_get_1B_to_8MiB_created_2_ranks, .timeout = RMX_T(120)) { run_ranks(2, rank_created_window, NULL); }
Test(rma, put_get_1B_to_8MiB_created_4_ranks, .timeout = RMX_T(120)) { run_ranks(4, rank_created_window, NULL); }

/* Every rank writes its slot of every other rank's window; all slots arrive, none overlap. */
static int rank_all_to_all(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    const size_t slot = 1000;
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, slot * (size_t)n, (void **)&base, &win));
    unsigned char buf[1000];
    for (int t = 0; t < n; t++) {
        fill_pattern(buf, slot, me, t);
        RANK_OK(rmx_put(win, buf, slot, t, slot * (size_t)me));
    }
    RANK_OK(rmx_sync_all(ctx));
    for (int w = 0; w < n; w++)
        RANK_ASSERT(check_pattern(base + slot * (size_t)w, slot, w, me) == slot, "slot %d", w);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rma, all_to_all_slots_4_ranks, .timeout = RMX_T(60)) { run_ranks(4, rank_all_to_all, NULL); }

/* A get after a put of the same bytes in one segment sees the put (flow dependency). */
static int rank_get_after_put(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 1 << 16, &base, &win));
    unsigned char out[1 << 12], in[1 << 12];
    for (int round = 0; round < 50; round++) {
        fill_pattern(out, sizeof(out), me, round);
        RANK_OK(rmx_put(win, out, sizeof(out), (me + 1) % n, (size_t)me * sizeof(out)));
        RANK_OK(rmx_get(win, in, sizeof(in), (me + 1) % n, (size_t)me * sizeof(out)));
        RANK_ASSERT(memcmp(in, out, sizeof(in)) == 0, "round %d", round);
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rma, get_after_put_sees_the_put_2_ranks, .timeout = RMX_T(60)) { run_ranks(2, rank_get_after_put, NULL); }

/* Zero-length windows and zero-length transfers are legal and move nothing. */
static int rank_zero_lengths(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    /* rank 0 exposes nothing, rank 1 exposes 16 bytes */
    RANK_OK(rmx_win_allocate(ctx, me == 0 ? 0 : 16, &base, &win));
    size_t len;
    RANK_OK(rmx_win_size(win, 0, &len));
    RANK_ASSERT(len == 0);
    RANK_OK(rmx_win_size(win, 1, &len));
    RANK_ASSERT(len == 16);
    char c = 'x';
    RANK_OK(rmx_put(win, NULL, 0, 0, 0));
    RANK_OK(rmx_get(win, NULL, 0, 0, 0));
    RANK_RC(RMX_ERR_RANGE, rmx_put(win, &c, 1, 0, 0));
    RANK_OK(rmx_put(win, &c, 1, 1, 15));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1)
        RANK_ASSERT(((char *)base)[15] == 'x');
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rma, zero_length_windows_and_transfers, .timeout = RMX_T(60)) { run_ranks(2, rank_zero_lengths, NULL); }
