/*
 * test_tracker_random.c — the tracker against a sequential model of the coarray rules.
 *
 * Several ranks run a random mix of puts, gets, fetching and non-fetching atomic adds, local
 * sync_memory calls and empty lock/unlock epochs on two windows (one allocated, one created), with segment ends chosen at
 * random among sync_all, sync_images(NULL) and sync_images(full list in random order).
 * The schedule is a pure function of (seed, segment, rank), so every rank can replay what every
 * other rank does.  It keeps each result well defined: in each segment every chunk of every
 * window has at most one owner; only the owner writes it (puts, atomics), and a rank reads only
 * chunks it owns (then it must see its own earlier writes of the segment, in program order) or
 * chunks nobody owns (the value at the segment start).  Each rank keeps the model of every
 * window, checks every get and fetched value against it as it goes, applies the others' writes
 * at each segment end, and compares its own windows with the model (the chunks nobody writes in
 * the next segment at once, everything at the end).
 *
 * Atomics are rmx_rmw SUMs on uint64 words (fetching or not).
 * RMX_TRACKER_SEED=n in the environment replays a failing schedule.
 */
#include "harness.h"

#define MAXR 4
#define NWIN 2
#define CHUNKS 8
#define CHUNK 6144 /* > the default coalesce_max: some puts are large */
#define WLEN (CHUNKS * CHUNK)
#define NSEG 40
#define NOPS 80
#define NOBODY MAXR

typedef struct rng {
    uint64_t s;
} rng_t;

static uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rng_below(rng_t *r, size_t n)
{
    return (size_t)(rng_next(r) % n);
}

static rng_t rng_for(uint64_t seed, int seg, int who)
{
    rng_t r = {seed ^ ((uint64_t)seg * 0x100000001b3ull) ^ ((uint64_t)(who + 3) << 48)};
    rng_next(&r);
    return r;
}

enum { OP_PUT, OP_GET, OP_FETCH_ADD, OP_ADD, OP_SYNC_MEMORY };

typedef struct op {
    int kind, win, target;
    size_t disp, len;
    uint64_t value; /* seed of a put's bytes, or the addend */
} op_t;

typedef struct chunk_ref {
    int win, target, chunk;
} chunk_ref_t;

/* owner[w][t][c]: who may write chunk c of target t's part of window w in this segment. */
typedef uint8_t owners_t[NWIN][MAXR][CHUNKS];

static void draw_owners(uint64_t seed, int seg, int n, owners_t owner)
{
    rng_t r = rng_for(seed, seg, -1);
    for (int w = 0; w < NWIN; w++)
        for (int t = 0; t < n; t++)
            for (int c = 0; c < CHUNKS; c++) {
                size_t o = rng_below(&r, (size_t)n + 1);
                owner[w][t][c] = (uint8_t)(o == (size_t)n ? NOBODY : o);
            }
}

static void put_bytes(unsigned char *buf, const op_t *op)
{
    rng_t r = {op->value};
    for (size_t i = 0; i < op->len; i++)
        buf[i] = (unsigned char)(rng_next(&r) >> 56);
}

static size_t random_len(rng_t *r, size_t room)
{
    size_t kind = rng_below(r, 20), len;
    if (kind < 11)
        len = 1 + rng_below(r, 16);
    else if (kind < 17)
        len = 17 + rng_below(r, 496);
    else
        len = 513 + rng_below(r, CHUNK - 512);
    return len < room ? len : room;
}

/* [disp, disp+len) inside chunk c, often starting where the last put to it ended (adjacent
 * small puts are what coalescing combines) or overlapping it. */
static void place(rng_t *r, const chunk_ref_t *c, const op_t *last, op_t *op, size_t align)
{
    size_t c0 = (size_t)c->chunk * CHUNK;
    op->win = c->win;
    op->target = c->target;
    int near_last = last->kind == OP_PUT && last->win == c->win && last->target == c->target &&
                    last->disp / CHUNK == (size_t)c->chunk && rng_below(r, 2);
    size_t start = near_last ? (rng_below(r, 2) ? last->disp + last->len : last->disp)
                             : c0 + rng_below(r, CHUNK);
    start -= (start - c0) % align;
    if (start >= c0 + CHUNK)
        start = c0 + rng_below(r, CHUNK / align) * align;
    op->disp = start;
    op->len = align > 1 ? align : random_len(r, c0 + CHUNK - start);
}

/* The ops rank `me` issues in segment seg (every rank can compute every rank's list). */
static int draw_ops(uint64_t seed, int seg, int me, int n, owners_t owner, op_t *ops)
{
    chunk_ref_t mine[NWIN * MAXR * CHUNKS], readable[NWIN * MAXR * CHUNKS];
    int nmine = 0, nread = 0;
    for (int w = 0; w < NWIN; w++)
        for (int t = 0; t < n; t++)
            for (int c = 0; c < CHUNKS; c++) {
                chunk_ref_t ref = {w, t, c};
                if (owner[w][t][c] == me)
                    mine[nmine++] = ref;
                if (owner[w][t][c] == me || owner[w][t][c] == NOBODY)
                    readable[nread++] = ref;
            }
    rng_t r = rng_for(seed, seg, me);
    op_t last = {.kind = OP_GET};
    for (int i = 0; i < NOPS; i++) {
        op_t *op = &ops[i];
        size_t roll = rng_below(&r, 100);
        int kind = roll < 50 ? OP_PUT : roll < 78 ? OP_GET : roll < 88 ? OP_FETCH_ADD
                 : roll < 96 ? OP_ADD : OP_SYNC_MEMORY;
        if (kind != OP_GET && kind != OP_SYNC_MEMORY && nmine == 0)
            kind = OP_GET;
        op->kind = kind;
        op->value = rng_next(&r);
        if (kind == OP_SYNC_MEMORY)
            continue;
        /* Half the time stay on the chunk of the last put: that is where dependencies are. */
        chunk_ref_t same = {last.win, last.target, (int)(last.disp / CHUNK)};
        const chunk_ref_t *c;
        if (last.kind == OP_PUT && rng_below(&r, 2))
            c = &same;
        else if (kind == OP_GET) {
            c = &readable[rng_below(&r, (size_t)nread)];
        } else {
            c = &mine[rng_below(&r, (size_t)nmine)];
        }
        if (kind == OP_FETCH_ADD || kind == OP_ADD)
            op->value %= 1000;
        place(&r, c, &last, op, kind == OP_FETCH_ADD || kind == OP_ADD ? sizeof(uint64_t) : 1);
        if (kind == OP_PUT)
            last = *op;
    }
    return NOPS;
}

typedef struct world {
    rmx_ctx_t *ctx;
    rmx_win_t *win[NWIN];
    unsigned char *base[NWIN];
    unsigned char *model[NWIN][MAXR]; /* what every rank's part of every window must hold */
    uint64_t seed;
    int me, n;
    uint64_t puts, gets;
} world_t;

static void model_add(world_t *wd, const op_t *op)
{
    uint64_t v;
    unsigned char *p = wd->model[op->win][op->target] + op->disp;
    memcpy(&v, p, sizeof(v));
    v += op->value;
    memcpy(p, &v, sizeof(v));
}

static void model_apply(world_t *wd, const op_t *op, unsigned char *scratch)
{
    if (op->kind == OP_PUT) {
        put_bytes(scratch, op);
        memcpy(wd->model[op->win][op->target] + op->disp, scratch, op->len);
    } else if (op->kind == OP_FETCH_ADD || op->kind == OP_ADD) {
        model_add(wd, op);
    }
}

static uint64_t atomic_add(world_t *wd, const op_t *op, int fetch)
{
    uint64_t old = 0;
    RANK_OK(rmx_rmw(wd->win[op->win], &op->value, 1, RMX_UINT64, fetch ? &old : NULL,
                    op->target, op->disp, 0, RMX_OP_SUM));
    return old;
}

static void run_op(world_t *wd, int seg, int i, const op_t *op, unsigned char *buf)
{
    const unsigned char *want = op->kind == OP_SYNC_MEMORY ? NULL
                              : wd->model[op->win][op->target] + op->disp;
    switch (op->kind) {
    case OP_PUT:
        put_bytes(buf, op);
        RANK_OK(rmx_put(wd->win[op->win], buf, op->len, op->target, op->disp));
        memset(buf, 0xee, op->len); /* the source is reusable on return */
        wd->puts++;
        break;
    case OP_GET:
        RANK_OK(rmx_get(wd->win[op->win], buf, op->len, op->target, op->disp));
        for (size_t k = 0; k < op->len; k++)
            RANK_ASSERT(buf[k] == want[k],
                        "seed %llu seg %d op %d: get win %d target %d [%zu,+%zu) byte %zu is %d, "
                        "model %d", (unsigned long long)wd->seed, seg, i, op->win, op->target,
                        op->disp, op->len, k, buf[k], want[k]);
        wd->gets++;
        break;
    case OP_FETCH_ADD:
    case OP_ADD: {
        uint64_t old = atomic_add(wd, op, op->kind == OP_FETCH_ADD), model;
        memcpy(&model, want, sizeof(model));
        RANK_ASSERT(op->kind == OP_ADD || old == model,
                    "seed %llu seg %d op %d: fetch_add win %d target %d @%zu fetched %llx, model "
                    "%llx", (unsigned long long)wd->seed, seg, i, op->win, op->target, op->disp,
                    (unsigned long long)old, (unsigned long long)model);
        break;
    }
    case OP_SYNC_MEMORY: /* or an empty passive epoch: image control, ends the segment too */
        if (op->value % 3 == 0) {
            RANK_OK(rmx_sync_memory(wd->ctx));
        } else {
            rmx_win_t *win = wd->win[op->value / 3 % NWIN];
            int t = (int)(op->value / 7 % (uint64_t)wd->n);
            RANK_OK(rmx_win_lock(win, op->value % 3 == 1 ? RMX_LOCK_EXCLUSIVE : RMX_LOCK_SHARED,
                                 t, 0));
            RANK_OK(rmx_win_unlock(win, t));
        }
        break;
    }
}

static void end_segment(world_t *wd, int seg)
{
    rng_t r = rng_for(wd->seed, seg, -2);
    int all[MAXR];
    switch (rng_below(&r, 3)) {
    case 0:
        RANK_OK(rmx_sync_all(wd->ctx));
        break;
    case 1:
        RANK_OK(rmx_sync_images(wd->ctx, NULL, 0));
        break;
    default: { /* the whole list, each rank in its own order */
        rng_t mine = rng_for(wd->seed, seg, 100 + wd->me);
        for (int i = 0; i < wd->n; i++)
            all[i] = i;
        for (int i = wd->n - 1; i > 0; i--) {
            int j = (int)rng_below(&mine, (size_t)i + 1), tmp = all[i];
            all[i] = all[j];
            all[j] = tmp;
        }
        RANK_OK(rmx_sync_images(wd->ctx, all, wd->n));
    }
    }
}

/* Own windows against the model, for the chunks nobody else writes in segment next_seg
 * (next_seg < 0: all of them). */
static void check_own_windows(world_t *wd, int next_seg, int seg)
{
    owners_t next;
    if (next_seg >= 0)
        draw_owners(wd->seed, next_seg, wd->n, next);
    for (int w = 0; w < NWIN; w++)
        for (int c = 0; c < CHUNKS; c++) {
            if (next_seg >= 0 && next[w][wd->me][c] != NOBODY && next[w][wd->me][c] != wd->me)
                continue;
            const unsigned char *have = wd->base[w] + (size_t)c * CHUNK;
            const unsigned char *want = wd->model[w][wd->me] + (size_t)c * CHUNK;
            for (size_t k = 0; k < CHUNK; k++)
                RANK_ASSERT(have[k] == want[k],
                            "seed %llu after seg %d: win %d byte %zu is %d, model %d",
                            (unsigned long long)wd->seed, seg, w, (size_t)c * CHUNK + k, have[k],
                            want[k]);
        }
}

static uint64_t seed_from_env(uint64_t dflt)
{
    const char *s = getenv("RMX_TRACKER_SEED");
    return s != NULL ? strtoull(s, NULL, 0) : dflt;
}

typedef struct random_case {
    uint64_t seed;
    int coalesce_disable;
    size_t coalesce_max;
} random_case_t;

static int rank_random(const rmx_config_t *base_cfg, void *arg)
{
    const random_case_t *rc = arg;
    rmx_config_t cfg = *base_cfg;
    cfg.coalesce_disable = rc->coalesce_disable;
    if (rc->coalesce_max)
        cfg.coalesce_max = rc->coalesce_max;
    world_t wd = {.seed = seed_from_env(rc->seed)};
    RANK_OK(rmx_init(&cfg, &wd.ctx));
    wd.me = rmx_rank(wd.ctx);
    wd.n = rmx_size(wd.ctx);
    RANK_ASSERT(wd.n <= MAXR);
    RANK_OK(rmx_win_allocate(wd.ctx, WLEN, (void **)&wd.base[0], &wd.win[0]));
    unsigned char *created = calloc(1, WLEN);
    RANK_ASSERT(created != NULL);
    wd.base[1] = created;
    RANK_OK(rmx_win_create(wd.ctx, created, WLEN, &wd.win[1]));
    for (int w = 0; w < NWIN; w++)
        for (int t = 0; t < wd.n; t++)
            RANK_ASSERT((wd.model[w][t] = calloc(1, WLEN)) != NULL);
    RANK_OK(rmx_stats_reset(wd.ctx));

    static unsigned char buf[CHUNK];
    static op_t ops[NOPS];
    for (int seg = 0; seg < NSEG; seg++) {
        owners_t owner;
        draw_owners(wd.seed, seg, wd.n, owner);
        draw_ops(wd.seed, seg, wd.me, wd.n, owner, ops);
        for (int i = 0; i < NOPS; i++) {
            run_op(&wd, seg, i, &ops[i], buf);
            model_apply(&wd, &ops[i], buf);
        }
        end_segment(&wd, seg);
        for (int other = 0; other < wd.n; other++) {
            if (other == wd.me)
                continue;
            draw_ops(wd.seed, seg, other, wd.n, owner, ops);
            for (int i = 0; i < NOPS; i++)
                model_apply(&wd, &ops[i], buf);
        }
        check_own_windows(&wd, seg + 1 < NSEG ? seg + 1 : -1, seg);
    }
    RANK_OK(rmx_sync_all(wd.ctx));
    check_own_windows(&wd, -1, NSEG);

    rmx_stats_t st;
    RANK_OK(rmx_stats(wd.ctx, &st));
    RANK_ASSERT(st.puts == wd.puts && st.gets == wd.gets);
    RANK_ASSERT(st.ucp_puts + st.puts_coalesced + st.puts_self + st.direct_puts == st.puts,
                "ucp_puts %llu + coalesced %llu + self %llu + direct %llu != %llu",
                (unsigned long long)st.ucp_puts, (unsigned long long)st.puts_coalesced,
                (unsigned long long)st.puts_self, (unsigned long long)st.direct_puts,
                (unsigned long long)st.puts);
    if (rc->coalesce_disable)
        RANK_ASSERT(st.puts_coalesced == 0);
    else
        RANK_ASSERT(st.puts_coalesced > 0, "a schedule full of adjacent small puts merged none");
    RANK_ASSERT(st.waits_avoided > 0 && st.flow_waits > 0);
    if (getenv("RMX_TRACKER_VERBOSE") != NULL)
        fprintf(stderr, "rank %d: puts %llu ucp_puts %llu coalesced %llu gets %llu fences %llu "
                "flow_waits %llu avoided %llu flushes ep %llu worker %llu\n", wd.me,
                (unsigned long long)st.puts, (unsigned long long)st.ucp_puts,
                (unsigned long long)st.puts_coalesced, (unsigned long long)st.gets,
                (unsigned long long)st.fences, (unsigned long long)st.flow_waits,
                (unsigned long long)st.waits_avoided, (unsigned long long)st.flushes_ep,
                (unsigned long long)st.flushes_worker);

    RANK_OK(rmx_win_free(&wd.win[1]));
    RANK_OK(rmx_win_free(&wd.win[0]));
    free(created);
    for (int w = 0; w < NWIN; w++)
        for (int t = 0; t < wd.n; t++)
            free(wd.model[w][t]);
    RANK_OK(rmx_finalize(wd.ctx));
    return 0;
}

static random_case_t case_default = {0x5eed0001, 0, 0};
static random_case_t case_small_staging = {0x5eed0002, 0, 64};
static random_case_t case_uncoalesced = {0x5eed0003, 1, 0};

Test(tracker, random_schedule_matches_model_4_ranks, .timeout = RMX_T(60))
{
    run_ranks_cfg(4, rank_random, &case_default, NULL, 60);
}
Test(tracker, random_schedule_matches_model_small_staging_3_ranks, .timeout = RMX_T(60))
{
    run_ranks_cfg(3, rank_random, &case_small_staging, NULL, 60);
}
Test(tracker, random_schedule_matches_model_uncoalesced_4_ranks, .timeout = RMX_T(60))
{
    run_ranks_cfg(4, rank_random, &case_uncoalesced, NULL, 60);
}
