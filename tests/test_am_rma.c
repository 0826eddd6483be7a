/*
 * test_am_rma.c — transports/am_rma.c: peers over tcp are reached through rmx's own active
 * messages (shared memory and self through UCP's RMA), and what those carry is right: puts of
 * every protocol size applied in the order they were sent (last writer wins, with nothing but
 * the tracker's fence between overlapping puts: no ordering of its own), gets that span several
 * answer chunks, atomics of every native op and size, and flushes to several peers at once.
 * (The peers' deaths are tests/test_peer_failure.c's; timed-out answers test_progress.c's.)
 */
#include "harness.h"
#include "../engine/internal.h"

/* ---- which peers take the active-message route */

static int rank_routes(const rmx_config_t *cfg, void *arg)
{
    int tcp = *(const int *)arg;
    if (tcp)
        setenv("UCX_TLS", "tcp,self", 1);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    for (int r = 0; r < ctx->size; r++) {
        int am = ctx->peers[r].am != NULL;
        if (r == ctx->rank)
            RANK_ASSERT(!am, "this rank reaches itself over active messages");
        else
            RANK_ASSERT(am == tcp, "rank %d: active-message route %d over %s", r, am,
                        tcp ? "tcp" : "shared memory");
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(am_rma, tcp_peers_are_reached_over_active_messages, .timeout = RMX_T(60))
{
    static const int tcp = 1;
    run_ranks(3, rank_routes, (void *)&tcp);
}

Test(am_rma, shared_memory_peers_keep_ucp_rma, .timeout = RMX_T(60))
{
    if (getenv("UCX_TLS") != NULL)
        cr_skip_test("UCX_TLS is set: the transport choice is the user's");
    static const int shm = 0;
    run_ranks(3, rank_routes, (void *)&shm);
}

/* ---- the data, over tcp */

#define WIN (1u << 20)
#define BIG (96u * 1024 + 123) /* several answer/put chunks (am_rma.c AM_CHUNK) */
#define ROUNDS 40

/* The puts of round k, in issue order: (offset, length, writer tag).  A big one over several
 * chunks, then smaller ones of each UCP protocol (inline, zcopy, several chunks) landing inside
 * its chunks, the last inside its last chunk: any of them overtaken shows in the final bytes. */
static const struct { size_t off, len; } puts_of_round[] = {
    {0, BIG}, {40000, 9000}, {BIG - 200, 64}, {70000, 20000}, {5, 3}, {BIG - 1, 1},
};
#define NPUTS (sizeof(puts_of_round) / sizeof(puts_of_round[0]))

static void expected_image(unsigned char *img, int writer)
{
    memset(img, 0, WIN);
    for (size_t i = 0; i < NPUTS; i++)
        fill_pattern(img + puts_of_round[i].off, puts_of_round[i].len, writer * 16 + (int)i,
                     ROUNDS - 1);
}

/* Rank 0 writes ROUNDS rounds to every other rank, coalescing off (every put goes out as it
 * is), and ends the segment once (a worker flush: several targets); each target then checks its
 * window, and rank 0 reads it back in gets of sizes around the chunk boundaries. */
static int rank_in_order(const rmx_config_t *cfg0, void *arg)
{
    (void)arg;
    setenv("UCX_TLS", "tcp,self", 1);
    /* A low rendezvous threshold and several eager rails: rmx must force eager and one lane
     * anyway (am_rma.c), or the ordering below fails. */
    setenv("UCX_RNDV_THRESH", "2k", 1);
    setenv("UCX_MAX_EAGER_RAILS", "4", 1);
    rmx_config_t cfg = *cfg0;
    cfg.coalesce_disable = 1;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, WIN, (void **)&base, &win));
    unsigned char *buf = malloc(WIN), *img = malloc(WIN);
    RANK_ASSERT(buf != NULL && img != NULL);
    rmx_stats_t st;
    RANK_OK(rmx_stats_reset(ctx));
    if (me == 0) {
        for (int k = 0; k < ROUNDS; k++)
            for (size_t i = 0; i < NPUTS; i++)
                for (int t = 1; t < n; t++) {
                    fill_pattern(buf, puts_of_round[i].len, t * 16 + (int)i, k);
                    RANK_OK(rmx_put(win, buf, puts_of_round[i].len, t, puts_of_round[i].off));
                }
        RANK_OK(rmx_sync_memory(ctx));
        RANK_OK(rmx_stats(ctx, &st));
        RANK_ASSERT(st.ucp_puts == (uint64_t)ROUNDS * NPUTS * (uint64_t)(n - 1),
                    "%llu puts issued", (unsigned long long)st.ucp_puts);
        RANK_ASSERT(n == 2 ? st.flushes_ep == 1 : st.flushes_worker == 1,
                    "segment end: %llu ep flushes, %llu worker flushes",
                    (unsigned long long)st.flushes_ep, (unsigned long long)st.flushes_worker);
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me != 0) {
        expected_image(img, me);
        for (size_t b = 0; b < WIN; b++)
            RANK_ASSERT(base[b] == img[b], "byte %zu: %u, wanted %u (a put overtaken?)", b,
                        base[b], img[b]);
    } else {
        static const size_t get_sizes[] = {1, 8, 8184, 8185, 8200, 32767, 32768, 32769, BIG,
                                           WIN};
        for (int t = 1; t < n; t++) {
            expected_image(img, t);
            for (size_t i = 0; i < sizeof(get_sizes) / sizeof(get_sizes[0]); i++) {
                size_t len = get_sizes[i], off = len == WIN ? 0 : 3;
                memset(buf, 0xee, len);
                RANK_OK(rmx_get(win, buf, len, t, off));
                RANK_ASSERT(memcmp(buf, img + off, len) == 0, "get of %zu B from %d wrong",
                            len, t);
            }
        }
    }
    RANK_OK(rmx_sync_all(ctx));
    free(buf);
    free(img);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(am_rma, puts_apply_in_order_and_gets_reassemble_tcp_2_ranks, .timeout = RMX_T(120))
{
    run_ranks(2, rank_in_order, NULL);
}

Test(am_rma, puts_apply_in_order_and_gets_reassemble_tcp_3_ranks, .timeout = RMX_T(120))
{
    run_ranks(3, rank_in_order, NULL);
}

/* Every native op on 4 and 8 bytes, fetching and not, from every rank at once on rank 0's
 * words: the sums come out exact and every fetch saw a value some rank could have left. */
#define AMO_ROUNDS 200

static int rank_atomics(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    setenv("UCX_TLS", "tcp,self", 1);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    const int nc = RMX_MODE_NOCHECK; /* no lock: the ops' atomicity is what is tested */
    RANK_OK(rmx_sync_all(ctx));
    for (int i = 0; i < AMO_ROUNDS; i++) {
        uint64_t one64 = 1, old64;
        uint32_t one32 = 1, old32;
        RANK_OK(rmx_rmw(win, &one64, 1, RMX_UINT64, NULL, 0, 0, nc, RMX_OP_SUM));
        RANK_OK(rmx_rmw(win, &one64, 1, RMX_UINT64, &old64, 0, 8, nc, RMX_OP_SUM));
        RANK_OK(rmx_rmw(win, &one32, 1, RMX_UINT32, NULL, 0, 16, nc, RMX_OP_SUM));
        RANK_OK(rmx_rmw(win, &one32, 1, RMX_UINT32, &old32, 0, 20, nc, RMX_OP_SUM));
        /* bit `me` of word 24 set and cleared, bit 32+me toggled twice: both end as they began */
        uint64_t bit = UINT64_C(1) << me, hi = UINT64_C(1) << (32 + me), nbit = ~bit;
        RANK_OK(rmx_rmw(win, &bit, 1, RMX_UINT64, NULL, 0, 24, nc, RMX_OP_BOR));
        RANK_OK(rmx_rmw(win, &nbit, 1, RMX_UINT64, NULL, 0, 24, nc, RMX_OP_BAND));
        RANK_OK(rmx_rmw(win, &hi, 1, RMX_UINT64, NULL, 0, 24, nc, RMX_OP_BXOR));
        RANK_OK(rmx_rmw(win, &hi, 1, RMX_UINT64, NULL, 0, 24, nc, RMX_OP_BXOR));
        /* a swap and a compare-and-swap that only this rank's value can satisfy */
        uint64_t mine = (uint64_t)me + 1;
        RANK_OK(rmx_rmw(win, &mine, 1, RMX_UINT64, &old64, 0, 32, nc, RMX_OP_SWAP));
        RANK_ASSERT(old64 <= (uint64_t)n, "swap saw %llu", (unsigned long long)old64);
        uint32_t expect = (uint32_t)me * 1000 + (uint32_t)i, next = expect + 1, was;
        uint32_t slot = 40 + 4 * (uint32_t)(me % 6);
        if (i == 0 && me < 6)
            RANK_OK(rmx_rmw(win, &expect, 1, RMX_UINT32, NULL, 0, slot, nc, RMX_OP_SWAP));
        if (me < 6) {
            RANK_OK(rmx_rmw2(win, &expect, 1, RMX_UINT32, &next, &was, 0, slot, nc,
                             RMX_OP2_COMP_SWAP));
            RANK_ASSERT(was == expect, "cswap saw %u, wanted %u", was, expect);
        }
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        uint64_t w64[2];
        uint32_t w32[2];
        memcpy(w64, base, sizeof(w64));
        memcpy(w32, base + 16, sizeof(w32));
        uint64_t want = (uint64_t)AMO_ROUNDS * (uint64_t)n;
        RANK_ASSERT(w64[0] == want && w64[1] == want, "64-bit sums %llu %llu, wanted %llu",
                    (unsigned long long)w64[0], (unsigned long long)w64[1],
                    (unsigned long long)want);
        RANK_ASSERT(w32[0] == want && w32[1] == want, "32-bit sums %u %u", w32[0], w32[1]);
        uint64_t bits;
        memcpy(&bits, base + 24, sizeof(bits));
        RANK_ASSERT(bits == 0, "bitwise word %#llx", (unsigned long long)bits);
        for (int r = 0; r < n && r < 6; r++) {
            uint32_t v;
            memcpy(&v, base + 40 + 4 * r, sizeof(v));
            RANK_ASSERT(v == (uint32_t)r * 1000 + AMO_ROUNDS, "rank %d's cswap word %u", r, v);
        }
    }
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(am_rma, every_native_atomic_tcp_3_ranks, .timeout = RMX_T(120))
{
    run_ranks(3, rank_atomics, NULL);
}
