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
    /* zero elements is a valid no-op everywhere, with NULL buffers; the other checks still run */
    RANK_OK(rmx_rmw(win, NULL, 0, RMX_UINT64, NULL, 1, 8, 0, RMX_OP_SUM));
    RANK_OK(rmx_rmw(win, NULL, 0, RMX_UINT64, NULL, 1, 8, RMX_MODE_PASSIVE_EPOCH_IMPLICIT,
                    RMX_OP_SWAP));
    RANK_OK(rmx_rmw2(win, NULL, 0, RMX_INT32, NULL, NULL, 1, 4, 0, RMX_OP2_COMP_SWAP));
    rmx_sub_t none = {.elem_size = 8, .rank = 1, .order = RMX_ORDER_C};
    none.dim[0] = (rmx_sub_dim_t){.extent = 2, .first = 0, .count = 0, .stride = 1};
    RANK_OK(rmx_put_sub(win, NULL, &none, 1, 0, &none));
    RANK_OK(rmx_get_sub(win, NULL, &none, 1, 0, &none));
    RANK_RC(RMX_ERR_RANK, rmx_put(win, NULL, 0, 2, 0));
    RANK_RC(RMX_ERR_RANK, rmx_rmw(win, NULL, 0, RMX_UINT64, NULL, 2, 0, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_RANGE, rmx_get(win, NULL, 0, 1, 17));
    RANK_RC(RMX_ERR_RANGE, rmx_rmw(win, NULL, 0, RMX_UINT64, NULL, 1, 24, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_ARG, rmx_rmw(win, NULL, -1, RMX_UINT64, NULL, 1, 8, 0, RMX_OP_SUM));
    RANK_RC(RMX_ERR_OP, rmx_rmw(win, NULL, 0, RMX_UINT64, NULL, 1, 8, 0, RMX_OP_COUNT));
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

/* ---------------------------------------------------------------- overlapping self transfers */

/* A put from one's own window to an overlapping part of it, and a get the other way: Fortran's
 * `a(2:n)[this_image()] = a(1:n-1)` must behave as if the right side were read first (memmove),
 * also across pending puts of the segment and for strided sections.  Compared with memmove on a
 * private copy. */
#define OVL_BYTES (100u * 1024u)
static int rank_self_overlap(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 2 * OVL_BYTES, (void **)&base, &win));
    unsigned char *model = malloc(2 * OVL_BYTES);
    RANK_ASSERT(model != NULL);
    fill_pattern(base, 2 * OVL_BYTES, me, 1);
    memcpy(model, base, 2 * OVL_BYTES);
    for (size_t shift = 1; shift <= 4096; shift *= 8) {
        /* forward: destination after the source */
        RANK_OK(rmx_put(win, base, OVL_BYTES, me, shift));
        memmove(model + shift, model, OVL_BYTES);
        /* backward, while the forward one may still be pending */
        RANK_OK(rmx_put(win, base + 2 * shift, OVL_BYTES, me, shift));
        memmove(model + shift, model + 2 * shift, OVL_BYTES);
        RANK_OK(rmx_sync_memory(ctx));
        RANK_ASSERT(memcmp(base, model, 2 * OVL_BYTES) == 0, "put, shift %zu", shift);
        /* a get whose destination is the window itself */
        RANK_OK(rmx_get(win, base + shift, OVL_BYTES, me, 0));
        memmove(model + shift, model, OVL_BYTES);
        RANK_ASSERT(memcmp(base, model, 2 * OVL_BYTES) == 0, "get, shift %zu", shift);
    }
    /* a small staged put to bytes that an overlapping put then reads */
    unsigned char x[16];
    memset(x, 0xEE, sizeof(x));
    RANK_OK(rmx_put(win, x, sizeof(x), me, 100));
    memcpy(model + 100, x, sizeof(x));
    RANK_OK(rmx_put(win, base + 64, 4096, me, 96));
    memmove(model + 96, model + 64, 4096);
    RANK_OK(rmx_sync_memory(ctx));
    RANK_ASSERT(memcmp(base, model, 2 * OVL_BYTES) == 0, "staged then overlapping put");
    /* strided: every other 8-byte element of [0, 8 KiB) to every other element from 8 bytes on */
    uint64_t *b64 = (uint64_t *)base, *m64 = (uint64_t *)model;
    rmx_sub_t sec = {.elem_size = 8, .rank = 1, .order = RMX_ORDER_C};
    sec.dim[0] = (rmx_sub_dim_t){.extent = 2048, .first = 0, .count = 1000, .stride = 2};
    rmx_sub_t dst = sec;
    dst.dim[0].first = 1;
    RANK_OK(rmx_put_sub(win, base, &sec, me, 0, &dst));
    uint64_t tmp[1000];
    for (int i = 0; i < 1000; i++)
        tmp[i] = m64[2 * i];
    for (int i = 0; i < 1000; i++)
        m64[1 + 2 * i] = tmp[i];
    RANK_OK(rmx_sync_memory(ctx));
    RANK_ASSERT(memcmp(base, model, 2 * OVL_BYTES) == 0, "put_sub");
    RANK_OK(rmx_get_sub(win, base, &sec, me, 8, &sec)); /* reads elements 1,3,.. into 0,2,.. */
    for (int i = 0; i < 1000; i++)
        tmp[i] = m64[1 + 2 * i];
    for (int i = 0; i < 1000; i++)
        m64[2 * i] = tmp[i];
    RANK_ASSERT(memcmp(b64, m64, 2 * OVL_BYTES) == 0, "get_sub");
    free(model);
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rma, overlapping_self_transfers_are_memmove_2_ranks, .timeout = RMX_T(60)) { run_ranks(2, rank_self_overlap, NULL); }

/* rmx_win_allocate's memory starts zeroed, also where an earlier window of the same size was
 * filled and freed (UCP could hand the same memory out again), and with UCP free to use recycled
 * memory (UCX_ALLOC_PRIO with thp and heap: rmx must then zero it itself, ucx.c). */
static int rank_windows_start_zeroed(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    const size_t lens[] = {64, 4096, 1u << 20, 16u << 20};
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            unsigned char *base;
            rmx_win_t *win;
            RANK_OK(rmx_win_allocate(ctx, lens[i], (void **)&base, &win));
            for (size_t k = 0; k < lens[i]; k++)
                RANK_ASSERT(base[k] == 0, "round %d: byte %zu of %zu not zero", round, k,
                            lens[i]);
            memset(base, 0xa5, lens[i]);
            RANK_OK(rmx_win_free(&win));
        }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(rma, allocated_windows_start_zeroed, .timeout = RMX_T(60))
{
    run_ranks(2, rank_windows_start_zeroed, NULL);
}

Test(rma, allocated_windows_start_zeroed_from_recycled_memory, .timeout = RMX_T(60))
{
    setenv("UCX_ALLOC_PRIO", "thp,heap", 1); /* inherited by the forked ranks */
    run_ranks(2, rank_windows_start_zeroed, NULL);
    unsetenv("UCX_ALLOC_PRIO");
}

/* ---------------------------------------------------------------- program order on oneself */

/* A put to the calling rank itself is done when the call returns (rmx.h "Self"): a plain load
 * sees it at once, and a plain store made afterwards is never overwritten later (a small put used
 * to wait in the staging buffer until the segment end, and landed over the store).  Contiguous
 * and sectioned, coalescing on (the default) and off. */
static int rank_self_program_order(const rmx_config_t *cfg, void *arg)
{
    rmx_config_t c = *cfg;
    c.coalesce_disable = *(const int *)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&c, &ctx));
    int me = rmx_rank(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 512 * sizeof(uint64_t), (void **)&base, &win));
    RANK_OK(rmx_stats_reset(ctx));
    for (uint64_t i = 0; i < 256; i++) {
        uint64_t v = 1000 + i;
        RANK_OK(rmx_put(win, &v, sizeof(v), me, i * sizeof(v)));
        RANK_ASSERT(base[i] == v, "put %llu not visible on return", (unsigned long long)i);
        base[i] = v + 1; /* must survive the segment end */
        uint64_t got = 0;
        RANK_OK(rmx_get(win, &got, sizeof(got), me, i * sizeof(got)));
        RANK_ASSERT(got == v + 1, "get %llu: %llu", (unsigned long long)i,
                    (unsigned long long)got);
    }
    uint64_t src[64];
    for (int i = 0; i < 64; i++)
        src[i] = 5000 + (uint64_t)i;
    rmx_sub_t loc = {.elem_size = 8, .rank = 1, .order = RMX_ORDER_C};
    loc.dim[0] = (rmx_sub_dim_t){.extent = 64, .first = 0, .count = 64, .stride = 1};
    rmx_sub_t rem = loc;
    rem.dim[0] = (rmx_sub_dim_t){.extent = 256, .first = 0, .count = 64, .stride = 3};
    RANK_OK(rmx_put_sub(win, src, &loc, me, 256 * sizeof(uint64_t), &rem));
    for (int i = 0; i < 64; i++) {
        RANK_ASSERT(base[256 + 3 * i] == src[i], "put_sub element %d not visible on return", i);
        base[256 + 3 * i] = 7;
    }
    RANK_OK(rmx_sync_all(ctx));
    for (uint64_t i = 0; i < 256; i++)
        RANK_ASSERT(base[i] == 1001 + i, "element %llu overwritten after the store",
                    (unsigned long long)i);
    for (int i = 0; i < 64; i++)
        RANK_ASSERT(base[256 + 3 * i] == 7, "put_sub element %d overwritten after the store", i);
    rmx_stats_t st;
    RANK_OK(rmx_stats(ctx, &st));
    RANK_ASSERT(st.puts_self == 257 && st.ucp_puts == 0 && st.ucp_gets == 0,
                "puts_self %llu ucp_puts %llu ucp_gets %llu", (unsigned long long)st.puts_self,
                (unsigned long long)st.ucp_puts, (unsigned long long)st.ucp_gets);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

static const int coalescing_on = 0, coalescing_off = 1;
Test(rma, puts_to_self_are_in_program_order_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_self_program_order, (void *)&coalescing_on);
}
Test(rma, puts_to_self_are_in_program_order_uncoalesced_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_self_program_order, (void *)&coalescing_off);
}
