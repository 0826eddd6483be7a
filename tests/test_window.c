/*
 * test_window.c — window creation's exchange (engine/exchange.c): once the context is up, every
 * window's addresses, sizes and rkeys travel in one round over rmx's own endpoints, through an
 * exchange area of two banks that alternate from one window to the next.
 *
 * What must hold: many windows in a row, alive several at a time and of sizes that differ per
 * rank and per window, each see every peer's part (sizes, data, lock word) and nothing of an
 * earlier one; a rank whose arguments fail makes every rank fail together, at once, and the next
 * window works (the banks stay in step); a rank that dies while the others create a window gives
 * them RMX_ERR_PEER within the peer timeout, never a hang; blobs that do not fit a slot, and
 * areas laid out differently on different ranks, go through the bootstrap instead, alike on
 * every rank.
 */
#include <signal.h>
#include <stdint.h>
#include "harness.h"

#define ROUNDS 120
#define LIVE 3 /* windows alive at once: each round frees the one made LIVE rounds before */

typedef struct {
    int tcp;            /* UCX_TLS=tcp,self: the exchange goes over rmx's active messages */
    const char *slot;   /* RMX_WIN_XCHG_SLOT on every rank, or NULL */
    int odd_slot;       /* rank 1 alone sets RMX_WIN_XCHG_SLOT=64: areas differ */
} opts_t;

static rmx_ctx_t *open_ctx(const rmx_config_t *cfg, const opts_t *o)
{
    if (o != NULL && o->tcp)
        setenv("UCX_TLS", "tcp,self", 1);
    if (o != NULL && o->slot != NULL)
        setenv("RMX_WIN_XCHG_SLOT", o->slot, 1);
    rmx_ctx_t *ctx;
    /* the rank is known only after init: the odd layout is chosen by the fork launcher's rank */
    const char *fork_rank = getenv("RMX_FORK_RANK");
    if (o != NULL && o->odd_slot && fork_rank != NULL && atoi(fork_rank) == 1)
        setenv("RMX_WIN_XCHG_SLOT", "64", 1);
    RANK_OK(rmx_init(cfg, &ctx));
    return ctx;
}

/* Rank r's part of window number w: sizes differ per rank and per window, some are 0. */
static size_t part_len(int r, int w)
{
    static const size_t lens[] = {64, 0, 4096, 8, 200, 65536, 24};
    return lens[(size_t)(r + w) % (sizeof(lens) / sizeof(lens[0]))];
}

typedef struct {
    rmx_win_t *win;
    unsigned char *base;
    unsigned char user[256]; /* the memory of windows from rmx_win_create */
    int number;
} slot_t;

/* Window w: allocated, or (every third) created over the rank's own memory. */
static void make_window(rmx_ctx_t *ctx, slot_t *s, int w)
{
    int me = rmx_rank(ctx);
    size_t len = part_len(me, w);
    s->number = w;
    if (w % 3 == 2) {
        len = len < sizeof(s->user) ? len : sizeof(s->user);
        memset(s->user, 0, sizeof(s->user));
        RANK_OK(rmx_win_create(ctx, s->user, len, &s->win));
        s->base = s->user;
    } else {
        void *base;
        RANK_OK(rmx_win_allocate(ctx, len, &base, &s->win));
        s->base = base;
    }
}

static size_t made_len(int r, int w)
{
    size_t len = part_len(r, w);
    return w % 3 == 2 && len > 256 ? 256 : len;
}

/* Every rank writes its number into byte `me` of every peer's part (where it fits), takes each
 * peer's lock once, and checks what it got: the right sizes, its peers' bytes, zeros elsewhere. */
static void use_window(rmx_ctx_t *ctx, slot_t *s)
{
    int me = rmx_rank(ctx), n = rmx_size(ctx), w = s->number;
    for (int t = 0; t < n; t++) {
        size_t len;
        RANK_OK(rmx_win_size(s->win, t, &len));
        RANK_ASSERT(len == made_len(t, w), "window %d: rank %d's part is %zu bytes, not %zu", w,
                    t, len, made_len(t, w));
        unsigned char v = (unsigned char)(w * 16 + me + 1);
        if ((size_t)me < len)
            RANK_OK(rmx_put(s->win, &v, 1, t, (size_t)me));
    }
    RANK_OK(rmx_sync_all(ctx));
    size_t mine = made_len(me, w);
    for (size_t i = 0; i < mine && i < 64; i++) {
        unsigned char want = (int)i < n ? (unsigned char)(w * 16 + (int)i + 1) : 0;
        RANK_ASSERT(s->base[i] == want, "window %d byte %zu: %d, not %d", w, i, s->base[i], want);
    }
    int t = (me + w) % n;
    RANK_OK(rmx_win_lock(s->win, w % 2 ? RMX_LOCK_SHARED : RMX_LOCK_EXCLUSIVE, t, 0));
    RANK_OK(rmx_win_unlock(s->win, t));
}

static int rank_many_windows(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = open_ctx(cfg, arg);
    slot_t live[LIVE] = {0};
    double t0 = now_s();
    for (int w = 0; w < ROUNDS; w++) {
        slot_t *s = &live[w % LIVE];
        if (s->win != NULL) {
            RANK_OK(rmx_win_free(&s->win));
            RANK_ASSERT(s->win == NULL);
        }
        make_window(ctx, s, w);
        use_window(ctx, s);
    }
    for (int i = 0; i < LIVE; i++)
        RANK_OK(rmx_win_free(&live[i].win));
    if (rmx_rank(ctx) == 0)
        fprintf(stderr, "window/many: %d windows in %.3f s\n", ROUNDS, now_s() - t0);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(window, created_and_freed_many_times_2_ranks, .timeout = RMX_T(120))
{
    run_ranks(2, rank_many_windows, NULL);
}

Test(window, created_and_freed_many_times_3_ranks, .timeout = RMX_T(120))
{
    run_ranks(3, rank_many_windows, NULL);
}

Test(window, created_and_freed_many_times_4_ranks, .timeout = RMX_T(120))
{
    run_ranks(4, rank_many_windows, NULL);
}

Test(window, created_and_freed_many_times_over_tcp_3_ranks, .timeout = RMX_T(120))
{
    static const opts_t o = {.tcp = 1};
    run_ranks(3, rank_many_windows, (void *)&o);
}

/* More windows alive than the exchange area has lock regions (64): the rest map their own, and
 * every lock word works; freed, the regions serve new windows. */
static int rank_many_alive(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = open_ctx(cfg, arg);
    enum { ALIVE = 70 };
    static slot_t alive[ALIVE];
    for (int round = 0; round < 2; round++) {
        for (int w = 0; w < ALIVE; w++)
            make_window(ctx, &alive[w], w);
        for (int w = ALIVE - 1; w >= 0; w--)
            use_window(ctx, &alive[w]);
        for (int w = 0; w < ALIVE; w++)
            RANK_OK(rmx_win_free(&alive[w].win));
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(window, more_windows_alive_than_lock_regions_in_the_area_3_ranks, .timeout = RMX_T(120))
{
    run_ranks(3, rank_many_alive, NULL);
}

/* No blob fits a slot of 16 bytes: every window goes through the bootstrap after the round. */
Test(window, blobs_too_big_for_a_slot_go_through_the_bootstrap_3_ranks, .timeout = RMX_T(120))
{
    static const opts_t o = {.slot = "16"};
    run_ranks(3, rank_many_windows, (void *)&o);
}

/* Slots of 64 bytes hold 56 of blob: exactly a zero-length part's (status, two region headers,
 * no rkey: the lock region is in the area), never a part with an rkey, so some windows have
 * both kinds; every rank must still decide alike. */
Test(window, some_blobs_too_big_for_a_slot_3_ranks, .timeout = RMX_T(120))
{
    static const opts_t o = {.slot = "64"};
    run_ranks(3, rank_many_windows, (void *)&o);
}

/* One rank's area has another layout: no rank uses its area, windows go through the bootstrap. */
Test(window, areas_laid_out_differently_use_the_bootstrap_3_ranks, .timeout = RMX_T(120))
{
    static const opts_t o = {.odd_slot = 1};
    run_ranks(3, rank_many_windows, (void *)&o);
}

/* ---------------------------------------------------------------- a rank with bad arguments */
/* Round after round one rank (a different one each time) passes a bad argument: it gets
 * RMX_ERR_ARG, the others RMX_ERR_COLLECTIVE, at once; the good windows in between work. */
static int rank_bad_argument_rounds(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = open_ctx(cfg, arg);
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    slot_t s = {0};
    for (int w = 0; w < 40; w++) {
        int bad = w % (n + 1); /* n: nobody */
        double t0 = now_s();
        if (bad < n) {
            rmx_win_t *win = (rmx_win_t *)0x1;
            void *base = (void *)0x1;
            int rc = me != bad ? rmx_win_allocate(ctx, 64, &base, &win)
                     : w & 1   ? rmx_win_allocate(ctx, 64, &base, NULL)
                               : rmx_win_create(ctx, NULL, 64, &win);
            int want = me == bad ? RMX_ERR_ARG : RMX_ERR_COLLECTIVE;
            RANK_ASSERT(rc == want, "round %d: rank %d got %s, wanted %s", w, me,
                        rmx_strerror(rc), rmx_strerror(want));
            int odd = w & 1;
            int created = me == bad && !odd; /* rmx_win_create: no base to clear */
            int no_handle = me == bad && odd; /* rmx_win_allocate without a place for it */
            RANK_ASSERT(created || base == NULL, "round %d: a base on a failed creation", w);
            RANK_ASSERT(no_handle || win == NULL, "round %d: a window on a failed creation", w);
        } else {
            make_window(ctx, &s, w);
            use_window(ctx, &s);
            RANK_OK(rmx_win_free(&s.win));
        }
        RANK_ASSERT(now_s() - t0 < 5, "round %d took %.1f s", w, now_s() - t0);
    }
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(window, a_bad_argument_on_one_rank_fails_all_together_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_bad_argument_rounds, NULL);
}

Test(window, a_bad_argument_on_one_rank_fails_all_together_4_ranks, .timeout = RMX_T(60))
{
    run_ranks(4, rank_bad_argument_rounds, NULL);
}

Test(window, a_bad_argument_on_one_rank_fails_all_together_over_tcp_3_ranks,
     .timeout = RMX_T(60))
{
    static const opts_t o = {.tcp = 1};
    run_ranks(3, rank_bad_argument_rounds, (void *)&o);
}

/* ---------------------------------------------------------------- a rank that dies */
#define PEER_TIMEOUT_S 2.0
#define VICTIM 1

/* The victim makes a few windows with the others, then is killed while they are in the next
 * creation (it never comes): they get RMX_ERR_PEER well within the peer timeout's reach. */
static int rank_dies_during_creation(const rmx_config_t *cfg, void *arg)
{
    rmx_ctx_t *ctx = open_ctx(cfg, arg);
    int me = rmx_rank(ctx);
    slot_t s = {0};
    for (int w = 0; w < 5; w++) {
        make_window(ctx, &s, w);
        use_window(ctx, &s);
        RANK_OK(rmx_win_free(&s.win));
    }
    if (me == VICTIM) {
        usleep(50 * 1000); /* the others are inside rmx_win_allocate by now */
        raise(SIGKILL);
    }
    double t0 = now_s();
    void *base;
    rmx_win_t *win;
    int rc = rmx_win_allocate(ctx, 64, &base, &win);
    double took = now_s() - t0;
    fprintf(stderr, "window/dies: rank %d got %s after %.3f s\n", me, rmx_strerror(rc), took);
    RANK_RC(RMX_ERR_PEER, rc);
    RANK_ASSERT(win == NULL && base == NULL);
    RANK_ASSERT(took < 4 * PEER_TIMEOUT_S + 2, "the error came after %.1f s", took);
    RANK_RC(RMX_ERR_PEER, rmx_win_allocate(ctx, 64, &base, &win)); /* and stays */
    /* No survivor stops while another may still wait in its creation: that one would report
     * the stop (RMX_ERR_STOPPED, also right) if it saw it before it learnt of the death. */
    int survivors[8], ns = 0;
    for (int r = 0; r < rmx_size(ctx); r++)
        if (r != VICTIM && r != me)
            survivors[ns++] = r;
    RANK_OK(rmx_sync_images(ctx, survivors, ns));
    (void)rmx_finalize(ctx);
    return 0;
}

static void run_with_victim(int n, const opts_t *o)
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.peer_timeout_s = PEER_TIMEOUT_S;
    int status[8];
    int rc = rmx_fork_run(n, rank_dies_during_creation, (void *)o, &cfg, RMX_T(60), status);
    for (int r = 0; r < n; r++)
        cr_expect_eq(status[r], r == VICTIM ? 128 + SIGKILL : 0, "rank %d exited with %d", r,
                     status[r]);
    cr_expect_eq(rc, RMX_ERR_PEER, "rmx_fork_run: %s", rmx_strerror(rc));
}

Test(window, a_rank_dies_during_creation_2_ranks, .timeout = RMX_T(90))
{
    run_with_victim(2, NULL);
}

Test(window, a_rank_dies_during_creation_4_ranks, .timeout = RMX_T(90))
{
    run_with_victim(4, NULL);
}

Test(window, a_rank_dies_during_creation_over_tcp_3_ranks, .timeout = RMX_T(90))
{
    static const opts_t o = {.tcp = 1};
    run_with_victim(3, &o);
}
