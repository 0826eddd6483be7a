/*
 * test_nb.c — nonblocking operations (rmx_iget, rmx_iput, rmx_iget_sub, rmx_irmw, rmx_test,
 * rmx_wait, rmx_wait_all) and per-target completion (rmx_flush, rmx_flush_local), between real
 * processes over real UCP.  make check runs them four ways (default, RMX_DIRECT=0,
 * UCX_TLS=tcp,self, RMX_WIN_MEMORY=user): on the direct path every get is a copy complete at
 * once; over UCP and tcp the gets stay in flight, and the flow-dependency rules are what these
 * tests check against a reference model.
 */
#include <signal.h>
#include <sys/mman.h>
#include "harness.h"

#define WIN_BYTES (64u << 10)

/* Each test's rank body gets an initialized context; the context is finalized after it. */
typedef int (*rank_body_t)(rmx_ctx_t *ctx, void *arg);
typedef struct {
    rank_body_t body;
    void *arg;
} body_t;

static int rank_main(const rmx_config_t *cfg, void *arg)
{
    const body_t *b = arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int rc = b->body(ctx, b->arg);
    RANK_OK(rmx_finalize(ctx));
    return rc;
}

static void run_body(int n, rank_body_t body, const rmx_config_t *cfg)
{
    body_t b = {body, NULL};
    run_ranks_cfg(n, rank_main, &b, cfg, 120);
}

/* ---------------------------------------------------------------- 64 overlapping gets */
/* Every rank owns a quarter of every other rank's window (its "region") and mixes, in one
 * segment, 64 igets of overlapping ranges of its regions at 3 targets with puts (small ones,
 * staged; large ones, straight out; iputs) to the same bytes.  A model of each region says what
 * every get must return: the bytes as the earlier puts left them, never a later put's.  The gets
 * are waited for only at the end, all at once. */
#define NGETS 64
#define REGION (WIN_BYTES / 4)

typedef struct {
    int target;
    size_t off, len;
    unsigned char *dst, *want;
} get_rec_t;

static uint32_t rnd(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static int rank_overlapping_gets(rmx_ctx_t *ctx, void *arg)
{
    (void)arg;
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, WIN_BYTES, &base, &win));
    /* each region starts with its owner's pattern, written by the window's owner */
    for (int o = 0; o < n; o++)
        fill_pattern((unsigned char *)base + (size_t)o * REGION, REGION, me * 4 + o, 0);
    RANK_OK(rmx_sync_all(ctx));
    unsigned char *model[4];
    for (int t = 0; t < n; t++) {
        model[t] = malloc(REGION);
        fill_pattern(model[t], REGION, t * 4 + me, 0);
    }
    RANK_OK(rmx_stats_reset(ctx));
    get_rec_t g[NGETS];
    rmx_request_t *req[NGETS * 2];
    int nreq = 0;
    unsigned char *src = malloc(REGION);
    uint32_t seed = 977u * (uint32_t)me + 5;
    for (int i = 0; i < NGETS; i++) {
        int t = (me + 1 + i % 3) % n;
        size_t disp = (size_t)me * REGION;
        /* a get of an overlapping range */
        size_t len = 1 + rnd(&seed) % (i % 4 == 0 ? 12000 : 600);
        size_t off = rnd(&seed) % (REGION - len);
        g[i] = (get_rec_t){t, off, len, malloc(len), malloc(len)};
        memcpy(g[i].want, model[t] + off, len);
        memset(g[i].dst, 0xEE, len);
        RANK_OK(rmx_iget(win, g[i].dst, len, t, disp + off, &req[nreq]));
        nreq++;
        /* then a put over bytes it (probably) reads, and one elsewhere */
        for (int k = 0; k < 2; k++) {
            size_t plen = 1 + rnd(&seed) % (k == 0 && i % 5 == 0 ? 9000 : 300);
            size_t poff = k == 0 ? off + (len > 1 ? rnd(&seed) % len : 0) : rnd(&seed) % REGION;
            if (poff + plen > REGION)
                poff = REGION - plen;
            fill_pattern(src, plen, me, i * 2 + k + 1);
            memcpy(model[t] + poff, src, plen);
            if (i % 7 == 3) {
                RANK_OK(rmx_iput(win, src, plen, t, disp + poff, &req[nreq]));
                RANK_OK(rmx_flush_local(win, t)); /* src is rewritten next */
                nreq++;
            } else {
                RANK_OK(rmx_put(win, src, plen, t, disp + poff));
            }
        }
    }
    RANK_OK(rmx_wait_all(req, nreq));
    for (int i = 0; i < nreq; i++)
        RANK_ASSERT(req[i] == NULL, "wait_all releases every request");
    for (int i = 0; i < NGETS; i++)
        for (size_t b = 0; b < g[i].len; b++)
            RANK_ASSERT(g[i].dst[b] == g[i].want[b],
                        "get %d (target %d, [%zu, +%zu)) byte %zu: %#x, wanted %#x", i,
                        g[i].target, g[i].off, g[i].len, b, g[i].dst[b], g[i].want[b]);
    rmx_stats_t st;
    RANK_OK(rmx_stats(ctx, &st));
    if (st.nb_requests > 0) /* gets in flight (not the direct path): later puts waited */
        RANK_ASSERT(st.nb_write_waits > 0, "no put waited for an outstanding get");
    RANK_OK(rmx_sync_all(ctx));
    /* the regions hold what the model says */
    for (int t = 0; t < n; t++) {
        if (t == me)
            continue;
        RANK_OK(rmx_get(win, src, REGION, t, (size_t)me * REGION));
        RANK_ASSERT(memcmp(src, model[t], REGION) == 0, "region at %d differs", t);
    }
    for (int i = 0; i < NGETS; i++) {
        free(g[i].dst);
        free(g[i].want);
    }
    for (int t = 0; t < n; t++)
        free(model[t]);
    free(src);
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    return 0;
}

Test(nb, overlapping_gets_and_puts_to_3_targets_4_ranks, .timeout = RMX_T(120))
{
    run_body(4, rank_overlapping_gets, NULL);
}

/* ---------------------------------------------------------------- a put after a slow get */
/* A large get, then a put of the same bytes: the put must not overtake the get (the get returns
 * the old bytes).  The target computes outside rmx meanwhile, so over tcp its progress agent
 * serves the get chunk by chunk while the put waits. */
#define BIG (4u << 20)

static void busy_for(double s)
{
    double end = now_s() + s;
    while (now_s() < end) /* computing: no rmx call, no sleep */
        __asm__ volatile("" ::: "memory");
}

static int rank_put_after_get(rmx_ctx_t *ctx, void *arg)
{
    (void)arg;
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, BIG, &base, &win));
    memset(base, 0x11, BIG);
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1) {
        busy_for(0.5);
    } else {
        unsigned char *dst = malloc(BIG), *src = malloc(BIG);
        memset(dst, 0xEE, BIG);
        memset(src, 0x22, BIG);
        rmx_request_t *r;
        RANK_OK(rmx_iget(win, dst, BIG, 1, 0, &r));
        RANK_OK(rmx_put(win, src, BIG, 1, 0));
        RANK_OK(rmx_wait(&r));
        for (size_t i = 0; i < BIG; i++)
            RANK_ASSERT(dst[i] == 0x11, "byte %zu of the get is %#x: the put overtook it", i,
                        dst[i]);
        free(dst);
        free(src);
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1)
        for (size_t i = 0; i < BIG; i++)
            RANK_ASSERT(((unsigned char *)base)[i] == 0x22, "byte %zu not the put's", i);
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    return 0;
}

Test(nb, a_put_does_not_overtake_an_earlier_get, .timeout = RMX_T(120))
{
    run_body(2, rank_put_after_get, NULL);
}

/* ---------------------------------------------------------------- rmx_flush */
/* Rank 0 puts to 1 and 2 (staged small puts and a large one), flushes target 1 only, then
 * tells 1 through a flag in another window (a non-fetching atomic, complete on return).  Rank
 * 1 must see the data at once; 2's puts are still outstanding: the flush flushed one endpoint,
 * and the segment end flushes the other. */
#define FL_SMALL 64
#define FL_LARGE (32u << 10)

static int rank_flush_one_target(rmx_ctx_t *ctx, void *arg)
{
    (void)arg;
    int me = rmx_rank(ctx);
    void *base, *fbase;
    rmx_win_t *win, *flags;
    RANK_OK(rmx_win_allocate(ctx, WIN_BYTES, &base, &win));
    RANK_OK(rmx_win_allocate(ctx, 64, &fbase, &flags));
    RANK_OK(rmx_sync_all(ctx));
    unsigned char *src = malloc(FL_LARGE);
    if (me == 0) {
        for (int round = 1; round <= 3; round++) {
            for (int t = 1; t <= 2; t++) {
                fill_pattern(src, FL_LARGE, t, round);
                for (size_t off = 0; off < 16 * FL_SMALL; off += FL_SMALL)
                    RANK_OK(rmx_put(win, src + off, FL_SMALL, t, off));
                RANK_OK(rmx_put(win, src + 16 * FL_SMALL, FL_LARGE - 16 * FL_SMALL, t,
                                16 * FL_SMALL));
            }
            rmx_stats_t a, b;
            RANK_OK(rmx_stats(ctx, &a));
            RANK_OK(rmx_flush(win, 1));
            RANK_OK(rmx_stats(ctx, &b));
            RANK_ASSERT(b.flushes_worker == a.flushes_worker, "rmx_flush flushed every target");
            /* copies, by rmx or by UCX (landed): complete at once, nothing to flush */
            int direct = b.direct_puts > 0 || b.landed_puts > 0;
            if (!direct)
                RANK_ASSERT(b.flushes_ep == a.flushes_ep + 1, "%llu endpoint flushes, wanted 1",
                            (unsigned long long)(b.flushes_ep - a.flushes_ep));
            int64_t one = 1;
            RANK_OK(rmx_rmw(flags, &one, 1, RMX_INT64, NULL, 1, 0, 0, RMX_OP_SUM));
            /* target 2's puts are still pending: the segment end flushes its endpoint alone */
            RANK_OK(rmx_sync_memory(ctx));
            rmx_stats_t c;
            RANK_OK(rmx_stats(ctx, &c));
            if (!direct)
                RANK_ASSERT(c.flushes_ep == b.flushes_ep + 1 + 1 /* the atomic's */ &&
                                c.flushes_worker == b.flushes_worker,
                            "after rmx_flush(1), sync_memory flushed %llu endpoints, %llu "
                            "workers: wanted target 2 alone",
                            (unsigned long long)(c.flushes_ep - b.flushes_ep),
                            (unsigned long long)(c.flushes_worker - b.flushes_worker));
            RANK_OK(rmx_sync_all(ctx));
            RANK_OK(rmx_sync_all(ctx)); /* the targets have checked */
        }
    } else {
        for (int round = 1; round <= 3; round++) {
            if (me == 1) {
                volatile int64_t *flag = fbase;
                double give_up = now_s() + RMX_T(20);
                while (*flag < round) {
                    RANK_OK(rmx_progress(ctx));
                    RANK_ASSERT(now_s() < give_up, "round %d: no notification", round);
                }
                size_t bad = check_pattern(base, FL_LARGE, 1, round);
                RANK_ASSERT(bad == FL_LARGE, "round %d: byte %zu not there after rmx_flush",
                            round, bad);
            }
            RANK_OK(rmx_sync_all(ctx));
            size_t bad = check_pattern(base, FL_LARGE, 2, round);
            if (me == 2 && bad != FL_LARGE)
                RANK_ASSERT(bad == FL_LARGE,
                            "round %d: target 2's puts incomplete after sync_all: byte %zu %#x",
                            round, bad, ((unsigned char *)base)[bad]);
            RANK_OK(rmx_sync_all(ctx));
        }
    }
    /* bad targets */
    RANK_RC(RMX_ERR_RANK, rmx_flush(win, -2));
    RANK_RC(RMX_ERR_RANK, rmx_flush(win, rmx_size(ctx)));
    RANK_RC(RMX_ERR_RANK, rmx_flush_local(win, rmx_size(ctx)));
    RANK_RC(RMX_ERR_WIN, rmx_flush(NULL, 0));
    RANK_RC(RMX_ERR_WIN, rmx_flush_local(NULL, RMX_TARGET_ALL));
    RANK_OK(rmx_flush(win, RMX_TARGET_ALL));
    RANK_OK(rmx_flush_local(win, RMX_TARGET_ALL));
    RANK_OK(rmx_flush(win, me)); /* to itself: nothing is ever pending */
    free(src);
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&flags));
    RANK_OK(rmx_win_free(&win));
    return 0;
}

Test(nb, flush_completes_one_target_only_3_ranks, .timeout = RMX_T(120))
{
    run_body(3, rank_flush_one_target, NULL);
}

/* ---------------------------------------------------------------- rmx_iput, flush_local */
/* Large iputs from one buffer, rewritten after each rmx_flush_local (or rmx_wait, or a test
 * loop): the target must see every round's bytes, none of a later round's. */
#define IP_LEN (16u << 10)
#define IP_ROUNDS 4

static int rank_iput_reuse(rmx_ctx_t *ctx, void *arg)
{
    (void)arg;
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, IP_LEN * IP_ROUNDS * 3, &base, &win));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        unsigned char *src = malloc(IP_LEN);
        rmx_request_t *r[IP_ROUNDS * 3];
        for (int k = 0; k < IP_ROUNDS * 3; k++) {
            fill_pattern(src, IP_LEN, 0, k);
            RANK_OK(rmx_iput(win, src, IP_LEN, 1, (size_t)k * IP_LEN, &r[k]));
            RANK_ASSERT(r[k] != NULL, "no request");
            if (k % 3 == 0) {
                RANK_OK(rmx_flush_local(win, 1));
            } else if (k % 3 == 1) {
                RANK_OK(rmx_wait(&r[k]));
                RANK_ASSERT(r[k] == NULL, "rmx_wait leaves the handle");
            } else {
                int done = 0;
                while (!done)
                    RANK_OK(rmx_test(&r[k], &done));
                RANK_ASSERT(r[k] == NULL, "rmx_test (done) leaves the handle");
            }
            memset(src, 0xEE, IP_LEN); /* reused: must not reach the target */
        }
        RANK_OK(rmx_wait_all(r, IP_ROUNDS * 3));
        free(src);
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1)
        for (int k = 0; k < IP_ROUNDS * 3; k++) {
            size_t bad = check_pattern((unsigned char *)base + (size_t)k * IP_LEN, IP_LEN, 0, k);
            RANK_ASSERT(bad == IP_LEN, "iput %d: byte %zu wrong", k, bad);
        }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    return 0;
}

Test(nb, iput_source_reusable_after_flush_local_wait_or_test, .timeout = RMX_T(120))
{
    run_body(2, rank_iput_reuse, NULL);
}

/* ---------------------------------------------------------------- other forms, bad input */
static int rank_forms_and_bad_input(rmx_ctx_t *ctx, void *arg)
{
    (void)arg;
    int me = rmx_rank(ctx), n = rmx_size(ctx), peer = (me + 1) % n;
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 4096, &base, &win));
    int64_t *w = base;
    for (int i = 0; i < 64; i++)
        w[i] = me * 1000 + i;
    RANK_OK(rmx_sync_all(ctx));
    /* iget_sub: every other element of peer's first 32 */
    int64_t got[16];
    size_t ld[1][4] = {{16, 0, 16, 1}}, rd[1][4] = {{64, 0, 16, 2}};
    rmx_sub_t L = make_sub(8, RMX_ORDER_C, 1, ld), R = make_sub(8, RMX_ORDER_C, 1, rd);
    rmx_request_t *r = NULL;
    RANK_OK(rmx_iget_sub(win, got, &L, peer, 0, &R, &r));
    RANK_OK(rmx_wait(&r));
    for (int i = 0; i < 16; i++)
        RANK_ASSERT(got[i] == peer * 1000 + 2 * i, "iget_sub element %d: %lld", i,
                    (long long)got[i]);
    /* iget_sub of one run on both sides: in flight as an iget; elements 8..23 of peer's */
    size_t cd[1][4] = {{64, 8, 16, 1}};
    rmx_sub_t C = make_sub(8, RMX_ORDER_C, 1, cd);
    memset(got, 0xEE, sizeof(got));
    RANK_OK(rmx_iget_sub(win, got, &L, peer, 0, &C, &r));
    RANK_OK(rmx_wait(&r));
    for (int i = 0; i < 16; i++)
        RANK_ASSERT(got[i] == peer * 1000 + 8 + i, "contiguous iget_sub element %d: %lld", i,
                    (long long)got[i]);
    RANK_RC(RMX_ERR_ARG, rmx_iget_sub(win, NULL, &L, peer, 0, &C, &r));
    RANK_RC(RMX_ERR_RANGE, rmx_iget_sub(win, got, &L, peer, 4000, &C, &r));
    /* irmw: fetching (a request), non-fetching (none) */
    RANK_OK(rmx_sync_all(ctx));
    int64_t one = 1, old = -1;
    RANK_OK(rmx_irmw(win, &one, 1, RMX_INT64, &old, peer, 63 * 8, 0, RMX_OP_SUM, &r));
    RANK_ASSERT(r != NULL, "a fetching irmw returns a request");
    RANK_OK(rmx_wait(&r));
    RANK_ASSERT(old == peer * 1000 + 63, "irmw fetched %lld", (long long)old);
    r = (rmx_request_t *)&old; /* overwritten */
    RANK_OK(rmx_irmw(win, &one, 1, RMX_INT64, NULL, peer, 62 * 8, 0, RMX_OP_SUM, &r));
    RANK_ASSERT(r == NULL, "a non-fetching irmw returns no request");
    int64_t cmp = peer * 1000 + 61, nv = 7;
    RANK_OK(rmx_irmw2(win, &cmp, 1, RMX_INT64, &nv, &old, peer, 61 * 8, 0, RMX_OP2_COMP_SWAP,
                      &r));
    RANK_OK(rmx_wait(&r));
    RANK_ASSERT(old == cmp, "irmw2 fetched %lld", (long long)old);
    RANK_OK(rmx_sync_all(ctx));
    RANK_ASSERT(w[63] == me * 1000 + 64 && w[62] == me * 1000 + 63 && w[61] == 7,
                "atomics landed wrong: %lld %lld %lld", (long long)w[63], (long long)w[62],
                (long long)w[61]);
    /* bad input: clear codes, nothing issued, *req NULL */
    char buf[64];
    r = (rmx_request_t *)buf;
    RANK_RC(RMX_ERR_ARG, rmx_iget(win, buf, 8, peer, 0, NULL));
    RANK_RC(RMX_ERR_RANK, rmx_iget(win, buf, 8, n, 0, &r));
    RANK_ASSERT(r == NULL, "a failed iget leaves *req NULL");
    RANK_RC(RMX_ERR_RANK, rmx_iget(win, buf, 8, -1, 0, &r));
    RANK_RC(RMX_ERR_RANGE, rmx_iget(win, buf, 8, peer, 4090, &r));
    RANK_RC(RMX_ERR_ARG, rmx_iget(win, NULL, 8, peer, 0, &r));
    RANK_RC(RMX_ERR_WIN, rmx_iget(NULL, buf, 8, peer, 0, &r));
    RANK_RC(RMX_ERR_ARG, rmx_iput(win, buf, 8, peer, 0, NULL));
    RANK_RC(RMX_ERR_RANGE, rmx_iput(win, buf, 8, peer, 4096, &r));
    RANK_RC(RMX_ERR_ARG, rmx_iget_sub(win, got, &L, peer, 0, &R, NULL));
    RANK_RC(RMX_ERR_ARG, rmx_irmw(win, &one, 1, RMX_INT64, &old, peer, 0, 0, RMX_OP_SUM, NULL));
    RANK_RC(RMX_ERR_ALIGN, rmx_irmw(win, &one, 1, RMX_INT64, &old, peer, 3, 0, RMX_OP_SUM, &r));
    RANK_ASSERT(r == NULL, "a failed irmw leaves *req NULL");
    RANK_RC(RMX_ERR_ARG, rmx_wait(NULL));
    RANK_RC(RMX_ERR_ARG, rmx_wait_all(NULL, 1));
    RANK_RC(RMX_ERR_ARG, rmx_wait_all(&r, -1));
    RANK_OK(rmx_wait_all(NULL, 0));
    int done = 0;
    RANK_RC(RMX_ERR_ARG, rmx_test(NULL, &done));
    r = NULL;
    RANK_RC(RMX_ERR_ARG, rmx_test(&r, NULL));
    RANK_OK(rmx_wait(&r)); /* a NULL request: done at once */
    RANK_OK(rmx_test(&r, &done));
    RANK_ASSERT(done == 1, "a NULL request tests done");
    /* a released handle, and the same request twice in one wait_all */
    RANK_OK(rmx_iget(win, buf, 8, peer, 0, &r));
    rmx_request_t *copy = r, *twice[2] = {r, r};
    RANK_RC(RMX_ERR_ARG, rmx_wait_all(twice, 2));
    RANK_OK(rmx_wait(&r));
    RANK_RC(RMX_ERR_ARG, rmx_wait(&copy));
    RANK_RC(RMX_ERR_ARG, rmx_test(&copy, &done));
    /* a segment end completes a request (its data there) without releasing it */
    int64_t four[4] = {-1, -1, -1, -1};
    RANK_OK(rmx_iget(win, four, sizeof(four), peer, 8, &r));
    RANK_OK(rmx_sync_memory(ctx));
    for (int i = 0; i < 4; i++)
        RANK_ASSERT(four[i] == peer * 1000 + 1 + i, "after sync_memory, element %d: %lld", i,
                    (long long)four[i]);
    RANK_ASSERT(r != NULL, "sync_memory released the request");
    RANK_OK(rmx_test(&r, &done));
    RANK_ASSERT(done == 1 && r == NULL, "a request completed by sync_memory tests done");
    /* a request outlives its window: freed with it outstanding, then waited on */
    rmx_win_t *w2;
    void *b2;
    RANK_OK(rmx_win_allocate(ctx, 1 << 20, &b2, &w2));
    memset(b2, me + 1, 1 << 20);
    RANK_OK(rmx_sync_all(ctx));
    unsigned char *big = malloc(1 << 20);
    RANK_OK(rmx_iget(w2, big, 1 << 20, peer, 0, &r));
    RANK_OK(rmx_win_free(&w2));
    RANK_OK(rmx_wait(&r));
    for (size_t i = 0; i < (1u << 20); i++)
        RANK_ASSERT(big[i] == peer + 1, "byte %zu of a get completed by win_free: %#x", i,
                    big[i]);
    free(big);
    /* left outstanding (or complete, unreleased) at finalize: released by it */
    RANK_OK(rmx_iget(win, buf, 64, peer, 0, &r));
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    return 0;
}

Test(nb, other_forms_and_bad_input_2_ranks, .timeout = RMX_T(60))
{
    run_body(2, rank_forms_and_bad_input, NULL);
}

/* ---------------------------------------------------------------- a target that stops */
/* Without a progress agent the target serves nothing while it computes: over tcp (and for
 * registered memory) a get then needs it.  With peer_timeout_s 1, rmx_wait gives up after 1 s
 * (RMX_ERR_TIMEOUT) and the buffer is never written afterwards, also once the target serves
 * again.  Where the get needs nothing of the target (UCP-allocated shared memory) it completes
 * with the data. */
static int rank_get_times_out(rmx_ctx_t *ctx, void *arg)
{
    (void)arg;
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 4096, &base, &win));
    memset(base, 0x33, 4096);
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1) {
        busy_for(2.5);
    } else {
        busy_for(0.3); /* the target has left sync_all: it serves nothing now */
        unsigned char dst[4096];
        memset(dst, 0xEE, sizeof(dst));
        rmx_request_t *r;
        RANK_OK(rmx_iget(win, dst, sizeof(dst), 1, 0, &r));
        int rc = rmx_wait(&r);
        RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_TIMEOUT || rc == RMX_ERR_PEER,
                    "rmx_wait: %s", rmx_strerror(rc));
        RANK_ASSERT(r == NULL, "rmx_wait leaves the handle");
        unsigned char want = rc == RMX_OK ? 0x33 : 0xEE;
        for (size_t i = 0; i < sizeof(dst); i++)
            RANK_ASSERT(dst[i] == want, "byte %zu: %#x (%s)", i, dst[i], rmx_strerror(rc));
        fprintf(stderr, "nb: the get to a stopped target: %s\n", rmx_strerror(rc));
        /* the target serves again: a late answer must not land */
        double end = now_s() + 3;
        while (now_s() < end)
            RANK_OK(rmx_progress(ctx));
        for (size_t i = 0; i < sizeof(dst); i++)
            RANK_ASSERT(dst[i] == want, "byte %zu written after the wait: %#x", i, dst[i]);
    }
    int rc = rmx_sync_all(ctx);
    RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_PEER || rc == RMX_ERR_COLLECTIVE,
                "sync_all: %s", rmx_strerror(rc));
    (void)rmx_win_free(&win);
    return 0;
}

Test(nb, a_get_to_a_stopped_target_times_out_and_writes_nothing_later, .timeout = RMX_T(60))
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.progress = RMX_PROGRESS_NONE;
    cfg.peer_timeout_s = 1;
    run_body(2, rank_get_times_out, &cfg);
}

/* ---------------------------------------------------------------- peer death */
/* Rank 2 is killed while rank 0 has 16 large gets outstanding to it (without a progress agent
 * the victim serves none while it sleeps, over tcp and for registered memory): each completes
 * with RMX_ERR_PEER (or RMX_OK with the data, where the get needed nothing of it), and no
 * buffer changes afterwards. */
#define NVICTIM_GETS 16
#define VG_LEN (64u << 10)

static int rank_victim_with_gets(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, VG_LEN, &base, &win));
    memset(base, 0x44, VG_LEN);
    RANK_OK(rmx_sync_all(ctx));
    if (me == 2) {
        busy_for(0.5);
        raise(SIGKILL);
    }
    if (me == 0) {
        busy_for(0.2); /* the victim has left sync_all: it serves nothing now */
        unsigned char *dst[NVICTIM_GETS];
        rmx_request_t *r[NVICTIM_GETS];
        for (int i = 0; i < NVICTIM_GETS; i++) {
            dst[i] = malloc(VG_LEN);
            memset(dst[i], 0xEE, VG_LEN);
            int rc = rmx_iget(win, dst[i], VG_LEN, 2, 0, &r[i]);
            RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_PEER, "iget: %s", rmx_strerror(rc));
        }
        int npeer = 0;
        for (int i = 0; i < NVICTIM_GETS; i++) {
            int rc = rmx_wait(&r[i]);
            RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_PEER || rc == RMX_ERR_TIMEOUT,
                        "get %d: %s", i, rmx_strerror(rc));
            if (rc == RMX_OK)
                for (size_t b = 0; b < VG_LEN; b++)
                    RANK_ASSERT(dst[i][b] == 0x44, "get %d byte %zu: %#x", i, b, dst[i][b]);
            npeer += rc != RMX_OK;
        }
        fprintf(stderr, "nb: %d of %d gets failed with the victim\n", npeer, NVICTIM_GETS);
        unsigned char *snap = malloc(VG_LEN);
        for (int i = 0; i < NVICTIM_GETS; i++) {
            memcpy(snap, dst[i], VG_LEN);
            double end = now_s() + 0.2;
            while (now_s() < end)
                (void)rmx_progress(ctx);
            RANK_ASSERT(memcmp(snap, dst[i], VG_LEN) == 0, "get %d's buffer written later", i);
            free(dst[i]);
        }
        free(snap);
    }
    /* survivors: among themselves all goes on */
    int rc = rmx_finalize(ctx);
    RANK_ASSERT(rc == RMX_ERR_PEER || rc == RMX_OK || rc == RMX_ERR_TIMEOUT, "finalize: %s",
                rmx_strerror(rc));
    _exit(0);
}

Test(nb, outstanding_gets_to_a_rank_that_dies_fail_and_write_nothing_later,
     .timeout = RMX_T(60))
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.progress = RMX_PROGRESS_NONE;
    cfg.peer_timeout_s = 2;
    int status[3];
    int rc = rmx_fork_run(3, rank_victim_with_gets, NULL, &cfg, RMX_T(60), status);
    cr_expect_eq(status[0], 0, "rank 0 exited with %d", status[0]);
    cr_expect_eq(status[1], 0, "rank 1 exited with %d", status[1]);
    cr_expect_eq(status[2], 128 + SIGKILL, "the victim exited with %d", status[2]);
    cr_expect(rc == RMX_ERR_PEER, "rmx_fork_run: %s", rmx_strerror(rc));
}

/* ---------------------------------------------------------------- fetching atomics in flight */
/* 4 ranks each leave 16 fetch-and-adds on rank 0's counter outstanding, then wait: the 64 old
 * values are 0..63, once each.  An irmw then a get of the same word: the get sees the update
 * (it waits for the atomic); an irmw then a put of that word: the put lands after it. */
#define NFADD 16

static int rank_irmw_in_flight(rmx_ctx_t *ctx, void *arg)
{
    (void)arg;
    int me = rmx_rank(ctx), n = rmx_size(ctx), peer = (me + 1) % n;
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 4096, &base, &win));
    int64_t *w = base;
    RANK_OK(rmx_sync_all(ctx));
    int64_t one = 1, old[NFADD];
    rmx_request_t *r[NFADD];
    for (int i = 0; i < NFADD; i++)
        RANK_OK(rmx_irmw(win, &one, 1, RMX_INT64, &old[i], 0, 0, 0, RMX_OP_SUM, &r[i]));
    RANK_OK(rmx_wait_all(r, NFADD));
    /* slot me+1 at peer: an atomic then a get, then an atomic then a put */
    int64_t five = 5, o5 = -1, got = -1, cmp = 5, nv = 9, o9 = -1, put = 100;
    size_t slot = (size_t)(me + 1) * 8;
    rmx_request_t *a, *b;
    RANK_OK(rmx_irmw(win, &five, 1, RMX_INT64, &o5, peer, slot, 0, RMX_OP_SUM, &a));
    RANK_OK(rmx_get(win, &got, 8, peer, slot));
    RANK_ASSERT(got == 5, "a get after an outstanding irmw read %lld", (long long)got);
    RANK_OK(rmx_irmw2(win, &cmp, 1, RMX_INT64, &nv, &o9, peer, slot, 0, RMX_OP2_COMP_SWAP, &b));
    RANK_OK(rmx_put(win, &put, 8, peer, slot));
    RANK_OK(rmx_wait(&a));
    RANK_OK(rmx_wait(&b));
    RANK_ASSERT(o5 == 0 && o9 == 5, "old values %lld %lld", (long long)o5, (long long)o9);
    /* the fetched counter values go to rank 0's table */
    RANK_OK(rmx_put(win, old, sizeof(old), 0, 512 + (size_t)me * sizeof(old)));
    RANK_OK(rmx_sync_all(ctx));
    int64_t mine = w[(me + n - 1) % n + 1]; /* the slot of the rank before */
    RANK_ASSERT(mine == 100, "the put after the CSWAP lost: %lld", (long long)mine);
    if (me == 0) {
        RANK_ASSERT(w[0] == NFADD * n, "counter %lld", (long long)w[0]);
        int seen[64] = {0};
        for (int i = 0; i < NFADD * n; i++) {
            int64_t v = w[64 + i];
            RANK_ASSERT(v >= 0 && v < NFADD * n && !seen[v], "fetched value %lld twice or "
                        "out of range", (long long)v);
            seen[v] = 1;
        }
    }
    rmx_stats_t st;
    RANK_OK(rmx_stats(ctx, &st));
    fprintf(stderr, "nb: rank %d: %llu requests left in flight\n", me,
            (unsigned long long)st.nb_requests);
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    return 0;
}

Test(nb, fetching_atomics_in_flight_4_ranks, .timeout = RMX_T(60))
{
    run_body(4, rank_irmw_in_flight, NULL);
}

/* ---------------------------------------------------------------- threads */
/* RMX_THREAD_MULTIPLE: two threads of rank 0 each keep 32 igets and a fetch-add in flight to
 * rank 1, test and wait them, and flush, concurrently; one thread waits on a request the other
 * issued. */
#include <pthread.h>
#define MT_GETS 32

typedef struct {
    rmx_ctx_t *ctx;
    rmx_win_t *win;
    int id;
    int fail;
    rmx_request_t *handoff; /* thread 0 issues it, thread 1 waits on it */
} mt_arg_t;

static pthread_barrier_t mt_bar;
static mt_arg_t *mt_args;

static void *mt_thread(void *p)
{
    mt_arg_t *a = p;
    int64_t got[MT_GETS], one = 1, old = -1;
    rmx_request_t *r[MT_GETS + 1];
    for (int round = 0; round < 20 && !a->fail; round++) {
        for (int i = 0; i < MT_GETS; i++) {
            got[i] = -1;
            a->fail |= rmx_iget(a->win, &got[i], 8, 1, (size_t)i * 8, &r[i]) != RMX_OK;
        }
        a->fail |= rmx_irmw(a->win, &one, 1, RMX_INT64, &old, 1, 4096 + (size_t)a->id * 8, 0,
                            RMX_OP_SUM, &r[MT_GETS]) != RMX_OK;
        int done = 0;
        a->fail |= rmx_test(&r[0], &done) != RMX_OK;
        a->fail |= rmx_flush(a->win, 1) != RMX_OK;
        a->fail |= rmx_wait_all(r, MT_GETS + 1) != RMX_OK;
        for (int i = 0; i < MT_GETS; i++)
            a->fail |= got[i] != 1000 + i;
        a->fail |= old != round;
    }
    if (a->id == 0)
        a->fail |= rmx_iget(a->win, &got[0], 8, 1, 0, &a->handoff) != RMX_OK;
    pthread_barrier_wait(&mt_bar);
    if (a->id == 1)
        a->fail |= rmx_wait(&mt_args[0].handoff) != RMX_OK;
    return NULL;
}

static int rank_threads(rmx_ctx_t *ctx, void *arg)
{
    (void)arg;
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 8192, &base, &win));
    int64_t *w = base;
    for (int i = 0; i < MT_GETS; i++)
        w[i] = 1000 + i;
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        mt_arg_t a[2] = {{ctx, win, 0, 0, NULL}, {ctx, win, 1, 0, NULL}};
        mt_args = a;
        pthread_barrier_init(&mt_bar, NULL, 2);
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            RANK_ASSERT(pthread_create(&t[i], NULL, mt_thread, &a[i]) == 0, "thread");
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        RANK_ASSERT(!a[0].fail && !a[1].fail, "a thread's nonblocking calls failed");
        RANK_ASSERT(a[0].handoff == NULL, "the other thread's wait left the handle");
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1)
        RANK_ASSERT(w[512] == 20 && w[513] == 20, "counters %lld %lld", (long long)w[512],
                    (long long)w[513]);
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    return 0;
}

Test(nb, requests_from_two_threads_at_thread_multiple, .timeout = RMX_T(60))
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.threads = RMX_THREAD_MULTIPLE;
    run_body(2, rank_threads, &cfg);
}

/* ---------------------------------------------------------------- strided gets in flight (tcp) */
/* Over tcp a section of many short runs travels as packed gets, left in flight by rmx_iget_sub:
 * rank 0 reads a column block of a 256 x 64 grid of int64 from ranks 1 and 2 (2 elements of
 * every row: 256 runs) into a contiguous and into a strided local section, and a block of 2048
 * runs (more packs than stay in flight), while rank 2 computes outside rmx for the first part
 * (its progress agent serves it).  The calls return with the requests outstanding
 * (stats.nb_requests), a put to bytes one of them reads waits for it (nb_write_waits) and the
 * get sees the bytes before the put, and every element matches the model. */
#define GRID_R 256
#define GRID_C 64
#define GRID_V(rank, i) ((int64_t)(rank) * 1000000 + (int64_t)(i))

static int rank_strided_in_flight(const rmx_config_t *cfg0, void *arg)
{
    (void)arg;
    setenv("UCX_TLS", "tcp,self", 1);
    rmx_config_t cfg = *cfg0;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&cfg, &ctx));
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    size_t grid = (size_t)GRID_R * GRID_C * 8;
    RANK_OK(rmx_win_allocate(ctx, grid, &base, &win));
    int64_t *w = base;
    for (size_t i = 0; i < (size_t)GRID_R * GRID_C; i++)
        w[i] = GRID_V(me, i);
    RANK_OK(rmx_sync_all(ctx));
    if (me == 2) {
        busy_for(RMX_T(1.0)); /* computing outside rmx: the agent answers */
    } else if (me == 0) {
        /* columns 5 and 6 of every row, from 1 into a contiguous buffer, from 2 into every
         * other element of a strided one */
        size_t rd[2][4] = {{GRID_R, 0, GRID_R, 1}, {GRID_C, 5, 2, 1}};
        size_t ld1[1][4] = {{2 * GRID_R, 0, 2 * GRID_R, 1}};
        size_t ld2[1][4] = {{4 * GRID_R, 1, 2 * GRID_R, 2}};
        rmx_sub_t R = make_sub(8, RMX_ORDER_C, 2, rd);
        rmx_sub_t L1 = make_sub(8, RMX_ORDER_C, 1, ld1), L2 = make_sub(8, RMX_ORDER_C, 1, ld2);
        int64_t *a = calloc(2 * GRID_R, 8), *b = malloc(4 * GRID_R * 8);
        for (int i = 0; i < 4 * GRID_R; i++)
            b[i] = -7;
        rmx_stats_t s0, s1;
        RANK_OK(rmx_stats(ctx, &s0));
        rmx_request_t *reqs[3] = {NULL, NULL, NULL};
        double t0 = now_s();
        RANK_OK(rmx_iget_sub(win, a, &L1, 1, 0, &R, &reqs[0]));
        RANK_OK(rmx_iget_sub(win, b, &L2, 2, 0, &R, &reqs[1]));
        double issued = now_s() - t0;
        RANK_OK(rmx_stats(ctx, &s1));
        RANK_ASSERT(s1.nb_requests - s0.nb_requests == 2,
                    "%llu of 2 strided igets left in flight",
                    (unsigned long long)(s1.nb_requests - s0.nb_requests));
        RANK_ASSERT(s1.packed_msgs > s0.packed_msgs, "no packed get was sent");
        /* a put to row 3's column 5 at rank 1 waits for the get that reads it */
        int64_t v = -1;
        RANK_OK(rmx_put(win, &v, 8, 1, (3 * GRID_C + 5) * 8));
        RANK_OK(rmx_stats(ctx, &s0));
        RANK_ASSERT(s0.nb_write_waits - s1.nb_write_waits == 1, "the put waited for %llu gets",
                    (unsigned long long)(s0.nb_write_waits - s1.nb_write_waits));
        /* a section of 2048 runs of 8 B from rank 1: several packs, the last ones in flight */
        size_t bd[2][4] = {{GRID_R, 0, GRID_R, 1}, {GRID_C, 0, 8, 8}};
        size_t lbd[1][4] = {{8 * GRID_R, 0, 8 * GRID_R, 1}};
        rmx_sub_t BR = make_sub(8, RMX_ORDER_C, 2, bd), BL = make_sub(8, RMX_ORDER_C, 1, lbd);
        int64_t *c = calloc(8 * GRID_R, 8);
        RANK_OK(rmx_iget_sub(win, c, &BL, 1, 0, &BR, &reqs[2]));
        RANK_OK(rmx_wait_all(reqs, 3));
        double took = now_s() - t0;
        fprintf(stderr, "nb: strided igets over tcp: issued in %.1f us, all done in %.1f ms\n",
                issued * 1e6, took * 1e3);
        RANK_ASSERT(took < RMX_T(0.5), "the gets took %.3f s: rank 2 computing stalled them",
                    took);
        for (int r = 0; r < GRID_R; r++)
            for (int k = 0; k < 2; k++) {
                int64_t want = GRID_V(1, r * GRID_C + 5 + k);
                RANK_ASSERT(a[2 * r + k] == want, "from 1, row %d col %d: %lld, wanted %lld", r,
                            5 + k, (long long)a[2 * r + k], (long long)want);
                want = GRID_V(2, r * GRID_C + 5 + k);
                RANK_ASSERT(b[1 + 2 * (2 * r + k)] == want, "from 2, row %d col %d: %lld", r,
                            5 + k, (long long)b[1 + 2 * (2 * r + k)]);
                RANK_ASSERT(b[2 * (2 * r + k)] == -7, "from 2: a gap was written");
            }
        for (int r = 0; r < GRID_R; r++)
            for (int k = 0; k < 8; k++) {
                int64_t want = GRID_V(1, r * GRID_C + 8 * k); /* (row 3 col 5 is no column
                                                                * of the block: 0, 8, ..) */
                RANK_ASSERT(c[8 * r + k] == want, "block from 1, row %d col %d: %lld", r, 8 * k,
                            (long long)c[8 * r + k]);
            }
        free(a);
        free(b);
        free(c);
    }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(nb, strided_igets_stay_in_flight_over_tcp_3_ranks, .timeout = RMX_T(60))
{
    run_ranks_cfg(3, rank_strided_in_flight, NULL, NULL, 45);
}

/* The same to a target that serves nothing (no agent, computing): the wait gives up after
 * peer_timeout_s, and a late answer (once it serves again) never lands in the buffer. */
static int rank_strided_times_out(const rmx_config_t *cfg0, void *arg)
{
    (void)arg;
    setenv("UCX_TLS", "tcp,self", 1);
    rmx_config_t cfg = *cfg0;
    cfg.progress = RMX_PROGRESS_NONE;
    cfg.peer_timeout_s = 0.5;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&cfg, &ctx));
    int me = rmx_rank(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, (size_t)GRID_R * GRID_C * 8, &base, &win));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1) {
        busy_for(2.5);
    } else {
        busy_for(0.3); /* the target has left sync_all */
        size_t rd[2][4] = {{GRID_R, 0, GRID_R, 1}, {GRID_C, 5, 2, 1}};
        size_t ld[1][4] = {{2 * GRID_R, 0, 2 * GRID_R, 1}};
        rmx_sub_t R = make_sub(8, RMX_ORDER_C, 2, rd), L = make_sub(8, RMX_ORDER_C, 1, ld);
        int64_t dst[2 * GRID_R];
        for (int i = 0; i < 2 * GRID_R; i++)
            dst[i] = -7;
        rmx_request_t *r;
        RANK_OK(rmx_iget_sub(win, dst, &L, 1, 0, &R, &r));
        int done = 0;
        RANK_OK(rmx_test(&r, &done));
        RANK_ASSERT(!done, "the section was read from a target that serves nothing");
        int rc = rmx_wait(&r);
        RANK_ASSERT(rc == RMX_ERR_TIMEOUT || rc == RMX_ERR_PEER, "rmx_wait: %s",
                    rmx_strerror(rc));
        double end = now_s() + 3; /* the target serves again: late answers must not land */
        while (now_s() < end)
            RANK_OK(rmx_progress(ctx));
        for (int i = 0; i < 2 * GRID_R; i++)
            RANK_ASSERT(dst[i] == -7, "element %d written after the wait gave up: %lld", i,
                        (long long)dst[i]);
    }
    int rc = rmx_sync_all(ctx);
    RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_PEER || rc == RMX_ERR_COLLECTIVE, "sync_all: %s",
                rmx_strerror(rc));
    (void)rmx_win_free(&win);
    (void)rmx_finalize(ctx);
    return 0;
}

Test(nb, a_strided_iget_to_a_busy_target_times_out_and_writes_nothing_later,
     .timeout = RMX_T(60))
{
    run_ranks_cfg(2, rank_strided_times_out, NULL, NULL, 45);
}
