/*
 * prog_stress.c — N ranks (default 4) doing random mixed one-sided operations for a bounded time,
 * verified at every sync_all: zero lost updates and zero corrupted bytes, or a non-zero exit.
 *
 *   prog_stress [seconds=60] [ranks=4] [seed=1]
 *
 * Each rank's window has one region per writer; only writer w ever writes region w at any target,
 * so w keeps an exact shadow of it (the bytes it put there and the id of the put that wrote each
 * byte).  Inside a segment w reads its own regions back at random (a get after overlapping puts
 * must see them: the flow-dependency rule); after each sync_all every writer reads every target's
 * region back in full and compares it with the shadow.  A byte that differs is corrupted; a put
 * none of whose bytes survived where its id is still the latest is lost.
 * Puts are contiguous or strided sections (rmx_put_sub).  Atomics (native ADD, ADD inside an
 * implicit locked epoch, INC) all hit one counter per rank; at each sync_all its owner checks it
 * equals the sum of what every rank reports having added (a lost update shows as a shortfall).
 * Segments end with sync_all, and in between sometimes with sync_memory or a sync_images with the
 * neighbours, so every image-control path is exercised.  Counts are printed per rank.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../api/rmx.h"
#include "../api/rmx_fork.h"

#define REGION (64u * 1024u)     /* bytes of one writer's region at one target */
#define MAX_PUT (16u * 1024u)
#define MAX_RANKS 16

typedef struct {
    uint64_t puts, put_subs, atomics, gets, gets_checked, syncs_all, syncs_memory, syncs_images, verifications;
    uint64_t bytes_put, bytes_got, corrupted_bytes, lost_updates;
} counts_t;

typedef struct {
    double seconds;
    uint64_t seed;
} stress_arg_t;

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The byte put `op` writes at region offset `off`: a wrong offset or a stale put shows. */
static unsigned char put_byte(uint32_t op, size_t off)
{
    uint32_t x = op * 2654435761u ^ (uint32_t)off * 40503u;
    return (unsigned char)(x ^ x >> 11 ^ x >> 23);
}

typedef struct {
    rmx_ctx_t *ctx;
    rmx_win_t *win;
    int me, n;
    unsigned char *shadow[MAX_RANKS];   /* what my region at target t must hold */
    uint32_t *last_op[MAX_RANKS];       /* id of the put that wrote each byte (0: none) */
    unsigned char *scratch;
    uint32_t next_op;
    uint64_t rng;
    counts_t c;
    size_t ctrl;                        /* window offset of: stop flag, counter, contributions */
    unsigned char *base;
    uint64_t added[MAX_RANKS];          /* what I added to each target's counter so far */
} rank_t;

/* Control area after the regions: [0] stop flag, [8] the counter every rank adds to atomically,
 * [64 + 8w] how much writer w has added to this rank's counter (w's own window, read by get). */
#define CTRL_COUNTER 8
#define CTRL_CONTRIB 64
#define CTRL_BYTES (CTRL_CONTRIB + 8 * MAX_RANKS)

#define FAIL(r, ...)                                                                     \
    do {                                                                                 \
        fprintf(stderr, "stress rank %d: ", (r)->me);                                    \
        fprintf(stderr, __VA_ARGS__);                                                    \
        fputc('\n', stderr);                                                             \
        return -1;                                                                       \
    } while (0)

#define CALL(r, expr)                                                                    \
    do {                                                                                 \
        int rc_ = (expr);                                                                \
        if (rc_ != RMX_OK)                                                               \
            FAIL(r, "%s: %s", #expr, rmx_strerror(rc_));                                 \
    } while (0)

static size_t region_disp(const rank_t *r) { return (size_t)r->me * REGION; }

/* Small puts mostly (they are coalesced and fenced), a few large ones (other UCX protocols). */
static size_t random_len(rank_t *r)
{
    uint64_t x = rng_next(&r->rng);
    size_t cap = x % 8 == 0 ? MAX_PUT : 64;
    return 1 + (size_t)(rng_next(&r->rng) % cap);
}

static int random_put(rank_t *r)
{
    int t = (int)(rng_next(&r->rng) % (uint64_t)r->n);
    size_t len = random_len(r);
    size_t off = (size_t)(rng_next(&r->rng) % (REGION - len + 1));
    uint32_t op = ++r->next_op;
    for (size_t i = 0; i < len; i++)
        r->scratch[i] = put_byte(op, off + i);
    CALL(r, rmx_put(r->win, r->scratch, len, t, region_disp(r) + off));
    memset(r->scratch, 0xEE, len); /* the source is reusable once put returns */
    for (size_t i = 0; i < len; i++) {
        r->shadow[t][off + i] = put_byte(op, off + i);
        r->last_op[t][off + i] = op;
    }
    r->c.puts++;
    r->c.bytes_put += len;
    return 0;
}

/* A strided 1-d section of my region at a target, from a contiguous local buffer. */
static int random_put_sub(rank_t *r)
{
    static const size_t sizes[] = {1, 4, 8};
    int t = (int)(rng_next(&r->rng) % (uint64_t)r->n);
    size_t es = sizes[rng_next(&r->rng) % 3];
    size_t extent = REGION / es, count = 1 + (size_t)(rng_next(&r->rng) % 64);
    size_t stride = 1 + (size_t)(rng_next(&r->rng) % 8);
    size_t first = (size_t)(rng_next(&r->rng) % (extent - (count - 1) * stride));
    rmx_sub_t remote = {.elem_size = es, .rank = 1, .order = RMX_ORDER_C};
    remote.dim[0] = (rmx_sub_dim_t){.extent = extent, .first = first, .count = count, .stride = stride};
    rmx_sub_t local = {.elem_size = es, .rank = 1, .order = RMX_ORDER_C};
    local.dim[0] = (rmx_sub_dim_t){.extent = count, .first = 0, .count = count, .stride = 1};
    uint32_t op = ++r->next_op;
    for (size_t k = 0; k < count; k++)
        for (size_t b = 0; b < es; b++)
            r->scratch[k * es + b] = put_byte(op, (first + k * stride) * es + b);
    CALL(r, rmx_put_sub(r->win, r->scratch, &local, t, region_disp(r), &remote));
    for (size_t k = 0; k < count; k++)
        for (size_t b = 0; b < es; b++) {
            size_t off = (first + k * stride) * es + b;
            r->shadow[t][off] = put_byte(op, off);
            r->last_op[t][off] = op;
        }
    r->c.put_subs++;
    r->c.bytes_put += count * es;
    return 0;
}

/* Atomic additions to a target's one shared counter: native ADD with no lock, the same inside
 * an implicit exclusive epoch (lock; add; unlock), or INC.  Every rank adds to every counter. */
static int random_atomic(rank_t *r)
{
    int t = (int)(rng_next(&r->rng) % (uint64_t)r->n);
    uint64_t v = 1 + rng_next(&r->rng) % 1000, old;
    size_t disp = r->ctrl + CTRL_COUNTER;
    switch (rng_next(&r->rng) % 3) {
    case 0:
        CALL(r, rmx_rmw(r->win, &v, 1, RMX_UINT64, NULL, t, disp,
                        RMX_MODE_PASSIVE_EPOCH_IMPLICIT | RMX_MODE_NOCHECK, RMX_OP_SUM));
        break;
    case 1:
        CALL(r, rmx_rmw(r->win, &v, 1, RMX_UINT64, &old, t, disp, RMX_MODE_PASSIVE_EPOCH_IMPLICIT,
                        RMX_OP_SUM));
        break;
    default:
        v = 1;
        CALL(r, rmx_rmw(r->win, NULL, 1, RMX_UINT64, &old, t, disp,
                        RMX_MODE_PASSIVE_EPOCH_IMPLICIT | RMX_MODE_NOCHECK, RMX_OP_INC));
        break;
    }
    r->added[t] += v;
    r->c.atomics++;
    return 0;
}

/* After a sync_all: my counter is the sum of what every rank says it added to it. */
static int verify_counter(rank_t *r)
{
    uint64_t want = 0, got;
    for (int w = 0; w < r->n; w++) {
        CALL(r, rmx_get(r->win, &got, sizeof(got), w, r->ctrl + CTRL_CONTRIB + 8 * (size_t)r->me));
        want += got;
    }
    uint64_t have = __atomic_load_n((uint64_t *)(r->base + r->ctrl + CTRL_COUNTER), __ATOMIC_ACQUIRE);
    if (have != want) {
        r->c.lost_updates++;
        fprintf(stderr, "stress rank %d: counter %llu, contributions sum to %llu\n", r->me,
                (unsigned long long)have, (unsigned long long)want);
    }
    return 0;
}

/* Reading my own region back in mid-segment: must already show every put I issued to it. */
static int random_get(rank_t *r)
{
    int t = (int)(rng_next(&r->rng) % (uint64_t)r->n);
    size_t len = random_len(r);
    size_t off = (size_t)(rng_next(&r->rng) % (REGION - len + 1));
    CALL(r, rmx_get(r->win, r->scratch, len, t, region_disp(r) + off));
    r->c.gets++;
    r->c.bytes_got += len;
    r->c.gets_checked++;
    for (size_t i = 0; i < len; i++)
        if (r->scratch[i] != r->shadow[t][off + i]) {
            r->c.corrupted_bytes++;
            if (r->c.corrupted_bytes < 5)
                fprintf(stderr, "stress rank %d: get from %d byte %zu: %#x, wanted %#x\n",
                        r->me, t, off + i, r->scratch[i], r->shadow[t][off + i]);
        }
    return 0;
}

static int sync_neighbours(rank_t *r)
{
    int peers[2] = {(r->me + 1) % r->n, (r->me + r->n - 1) % r->n};
    int count = r->n > 2 ? 2 : 1;
    if (r->n == 1)
        return 0;
    CALL(r, rmx_sync_images(r->ctx, peers, count));
    r->c.syncs_images++;
    return 0;
}

/* After a sync_all: every target's copy of my region equals my shadow. */
static int verify_all(rank_t *r)
{
    for (int t = 0; t < r->n; t++) {
        CALL(r, rmx_get(r->win, r->scratch, REGION, t, region_disp(r)));
        r->c.bytes_got += REGION;
        uint32_t lost_op = 0;
        for (size_t i = 0; i < REGION; i++) {
            if (r->scratch[i] == r->shadow[t][i])
                continue;
            r->c.corrupted_bytes++;
            if (r->last_op[t][i] != 0 && r->last_op[t][i] != lost_op) {
                lost_op = r->last_op[t][i]; /* one lost put usually spans many bytes */
                r->c.lost_updates++;
            }
            if (r->c.corrupted_bytes < 5)
                fprintf(stderr, "stress rank %d: target %d byte %zu: %#x, wanted %#x (put %u)\n",
                        r->me, t, i, r->scratch[i], r->shadow[t][i], r->last_op[t][i]);
        }
    }
    r->c.verifications++;
    return 0;
}

static int one_segment(rank_t *r)
{
    int ops = 16 + (int)(rng_next(&r->rng) % 200);
    for (int i = 0; i < ops; i++) {
        uint64_t x = rng_next(&r->rng) % 100;
        int rc = 0;
        if (x < 45)
            rc = random_put(r);
        else if (x < 55)
            rc = random_put_sub(r);
        else if (x < 65)
            rc = random_atomic(r);
        else if (x < 95)
            rc = random_get(r);
        else {
            CALL(r, rmx_sync_memory(r->ctx));
            r->c.syncs_memory++;
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int stress_rank(const rmx_config_t *cfg, void *argp)
{
    const stress_arg_t *arg = argp;
    static rank_t rank;
    rank_t *r = &rank;
    CALL(r, rmx_init(cfg, &r->ctx));
    r->me = rmx_rank(r->ctx);
    r->n = rmx_size(r->ctx);
    r->rng = arg->seed * 0x9E3779B97F4A7C15ull + (uint64_t)r->me * 7919 + 1;
    void *base;
    CALL(r, rmx_win_allocate(r->ctx, (size_t)r->n * REGION + CTRL_BYTES, &base, &r->win));
    r->base = base;
    r->ctrl = (size_t)r->n * REGION;
    r->scratch = malloc(REGION);
    if (r->scratch == NULL)
        FAIL(r, "out of memory");
    for (int t = 0; t < r->n; t++) {
        r->shadow[t] = calloc(1, REGION);
        r->last_op[t] = calloc(REGION, sizeof(uint32_t));
        if (r->shadow[t] == NULL || r->last_op[t] == NULL)
            FAIL(r, "out of memory");
    }
    CALL(r, rmx_sync_all(r->ctx));

    /* Every rank must run the same number of rounds (sync_all is collective): rank 0's clock
     * decides, and its verdict travels as a byte it puts into everyone's control slot. */
    size_t ctrl = (size_t)r->n * REGION;
    volatile unsigned char *stop_flag = (unsigned char *)base + ctrl;
    double deadline = now_s() + arg->seconds;
    int rc = 0;
    for (int round = 0; rc == 0; round++) {
        rc = one_segment(r);
        if (rc == 0 && round % 3 == 1)
            rc = sync_neighbours(r);
        if (rc == 0)
            rc = one_segment(r);
        if (rc != 0)
            break;
        /* publish my totals in my own window: read by the counters' owners after the barrier */
        memcpy(r->base + r->ctrl + CTRL_CONTRIB, r->added, sizeof(uint64_t) * (size_t)r->n);
        CALL(r, rmx_sync_all(r->ctx));
        r->c.syncs_all++;
        if ((rc = verify_all(r)) != 0 || (rc = verify_counter(r)) != 0)
            break;
        unsigned char stop = now_s() > deadline;
        for (int t = 0; r->me == 0 && t < r->n; t++)
            CALL(r, rmx_put(r->win, &stop, 1, t, ctrl));
        CALL(r, rmx_sync_all(r->ctx)); /* nobody writes again before everyone verified */
        r->c.syncs_all++;
        if (*stop_flag)
            break;
    }
    if (rc != 0)
        return 1;
    rmx_stats_t st;
    CALL(r, rmx_stats(r->ctx, &st));
    printf("stress rank %d: %llu puts + %llu put_subs (%llu B), %llu atomics, %llu gets (%llu B, %llu checked), %llu sync_all, "
           "%llu sync_memory, %llu sync_images, %llu verifications; ucp puts %llu, coalesced "
           "%llu, flow waits %llu; lost updates %llu, corrupted bytes %llu\n",
           r->me, (unsigned long long)r->c.puts, (unsigned long long)r->c.put_subs,
           (unsigned long long)r->c.bytes_put, (unsigned long long)r->c.atomics,
           (unsigned long long)r->c.gets, (unsigned long long)r->c.bytes_got,
           (unsigned long long)r->c.gets_checked, (unsigned long long)r->c.syncs_all,
           (unsigned long long)r->c.syncs_memory, (unsigned long long)r->c.syncs_images,
           (unsigned long long)r->c.verifications, (unsigned long long)st.ucp_puts,
           (unsigned long long)st.puts_coalesced, (unsigned long long)st.flow_waits,
           (unsigned long long)r->c.lost_updates, (unsigned long long)r->c.corrupted_bytes);
    int bad = r->c.lost_updates != 0 || r->c.corrupted_bytes != 0 || r->c.verifications == 0;
    CALL(r, rmx_win_free(&r->win));
    CALL(r, rmx_finalize(r->ctx));
    for (int t = 0; t < r->n; t++) {
        free(r->shadow[t]);
        free(r->last_op[t]);
    }
    free(r->scratch);
    return bad ? 2 : 0;
}

int main(int argc, char **argv)
{
    stress_arg_t arg = {.seconds = argc > 1 ? atof(argv[1]) : 60, .seed = 1};
    int nranks = argc > 2 ? atoi(argv[2]) : 4;
    if (argc > 3)
        arg.seed = strtoull(argv[3], NULL, 10);
    if (arg.seconds <= 0 || nranks < 1 || nranks > MAX_RANKS) {
        fprintf(stderr, "usage: %s [seconds>0] [ranks 1..%d] [seed]\n", argv[0], MAX_RANKS);
        return 2;
    }
    int status[MAX_RANKS];
    /* bounded: the run ends by itself after `seconds`; the harness kills it well after that */
    int rc = rmx_fork_run(nranks, stress_rank, &arg, NULL, arg.seconds * 3 + 60, status);
    int ok = rc == RMX_OK;
    for (int i = 0; i < nranks; i++)
        if (status[i] != 0) {
            fprintf(stderr, "stress: rank %d exited with %d\n", i, status[i]);
            ok = 0;
        }
    printf("stress: %d ranks, %.0f s, seed %llu: %s\n", nranks, arg.seconds,
           (unsigned long long)arg.seed, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
