/*
 * test_sub_packed.c — strided sections over rmx's active messages (tcp): their short runs travel
 * packed (engine/subarray_rma.c, transports/am_rma.c PUTV/GETV), many runs to a message,
 * unpacked by the target's handler.  Checked here, between real processes:
 *  - put_sub and get_sub of many shapes (columns, 3-d sections, runs of 1..64 B, runs on both
 *    sides of the packing threshold in one call, local pieces finer than the remote runs, run
 *    counts at the message-splitting boundaries) against a reference model, byte for byte, and
 *    the number of packed messages and the runs they carried against a model of the packer
 *    (over tcp; elsewhere the UCP path, and no packed message at all);
 *  - a target computing outside rmx: its progress agent serves the packed messages;
 *  - segment order: a get_sub, get or atomic after a put_sub of the same bytes sees it; a put
 *    after it to overlapping bytes lands after it; a put staged before it lands before it;
 *  - the target refuses malformed packed messages and ones reaching outside the window named,
 *    writing and reading nothing, and the origin gets RMX_ERR_TRANSPORT.
 * The data tests run in whatever transport the suite runs in (default, UCX_TLS=tcp,self,
 * RMX_WIN_MEMORY=user) and once more with tcp forced; the agent and refusal tests force tcp.
 */
#include <stdint.h>
#include "harness.h"
#include "../engine/internal.h"

#define WIN (1u << 20)
#define BG 0x5a
#define MAX_ELEMS 20000
/* subarray_rma.c's threshold: longer runs are not packed. */
#define RUN_MAX (RMX_AM_PACK_MAX / 4)

/* ---------------------------------------------------------------- the reference model */

static rmx_sub_t vec(size_t elem, size_t n)
{
    const size_t d[1][4] = {{n, 0, n, 1}};
    return make_sub(elem, RMX_ORDER_C, 1, d);
}

/* The byte offset of every element of the section, in element order (the fastest dimension
 * first: the last for C order, the first for Fortran order), one odometer step at a time. */
static size_t ref_offsets(const rmx_sub_t *s, size_t *out, size_t cap)
{
    int r = s->rank;
    size_t pitch[RMX_SUB_MAX_RANK], idx[RMX_SUB_MAX_RANK] = {0}, n = 1;
    int order[RMX_SUB_MAX_RANK]; /* order[0]: the fastest dimension */
    for (int i = 0; i < r; i++)
        order[i] = s->order == RMX_ORDER_C ? r - 1 - i : i;
    size_t p = s->elem_size;
    for (int i = 0; i < r; i++) {
        pitch[order[i]] = p;
        p *= s->dim[order[i]].extent;
        n *= s->dim[order[i]].count;
    }
    if (n > cap)
        return 0;
    for (size_t e = 0; e < n; e++) {
        size_t off = 0;
        for (int d = 0; d < r; d++)
            off += (s->dim[d].first + idx[d] * s->dim[d].stride) * pitch[d];
        out[e] = off;
        for (int i = 0; i < r; i++) {
            int d = order[i];
            if (++idx[d] < s->dim[d].count)
                break;
            idx[d] = 0;
        }
    }
    return n;
}

/* The maximal remote runs (consecutive elements at adjacent bytes merged): their offsets and
 * lengths. */
static size_t ref_runs(const size_t *off, size_t n, size_t elem, size_t *at, size_t *len)
{
    size_t k = 0;
    for (size_t e = 0; e < n; e++) {
        if (k > 0 && off[e] == off[e - 1] + elem) {
            len[k - 1] += elem;
        } else {
            at[k] = off[e];
            len[k++] = elem;
        }
    }
    return k;
}

/* What the packer sends for these runs: messages and the runs they carry.  A pack holds
 * consecutive runs of at most RUN_MAX bytes as records (ucx.h: runs of one length at a constant
 * pitch share one), a put's with their bytes, a get's answer at most RMX_AM_PACK_MAX bytes; a
 * longer run closes the pack.  A put's pack of one run goes as a plain put, a get's is still a
 * packed get. */
typedef struct { uint64_t msgs, runs; } packs_t;

static packs_t model_packs(const size_t *at, const size_t *len, size_t k, int put)
{
    packs_t t = {0, 0};
    size_t n = 0, body = 0, bytes = 0, r_off = 0, r_len = 0, r_count = 0, r_pitch = 0;
#define CLOSE()                                                                            \
    do {                                                                                   \
        if (n > (put ? 1u : 0u)) {                                                         \
            t.msgs++;                                                                      \
            t.runs += n;                                                                   \
        }                                                                                  \
        n = body = bytes = r_count = 0;                                                    \
    } while (0)
    for (size_t i = 0; i < k; i++) {
        if (len[i] > RUN_MAX) {
            CLOSE();
            continue;
        }
        size_t data = put ? len[i] : 0;
        int cont = r_count > 0 && len[i] == r_len &&
                   (r_count == 1 ? at[i] >= r_off + r_len : at[i] == r_off + r_count * r_pitch);
        size_t need = data + (cont ? 0 : sizeof(rmx_am_run_t));
        if (body + need > RMX_AM_PACK_MAX || (!put && bytes + len[i] > RMX_AM_PACK_MAX)) {
            CLOSE();
            cont = 0;
            need = data + sizeof(rmx_am_run_t);
        }
        if (cont) {
            if (r_count == 1)
                r_pitch = at[i] - r_off;
            r_count++;
        } else {
            r_off = at[i];
            r_len = len[i];
            r_count = 1;
        }
        n++;
        body += need;
        bytes += len[i];
    }
    CLOSE();
#undef CLOSE
    return t;
}

/* ---------------------------------------------------------------- the shapes */

typedef struct {
    char name[48];
    rmx_sub_t l, r;
    size_t disp;
} shape_t;

#define MAX_SHAPES 128

/* The column of a k x 2 array of doubles: k runs of 8 B (rmx_perf's put_col). */
static shape_t column(size_t k)
{
    shape_t s;
    const size_t d[2][4] = {{k, 0, k, 1}, {2, 1, 1, 1}};
    snprintf(s.name, sizeof(s.name), "column of %zu", k);
    s.l = s.r = make_sub(8, RMX_ORDER_C, 2, d);
    s.disp = 0;
    return s;
}

/* n runs of len bytes, len bytes apart, from a contiguous local buffer. */
static shape_t spaced(size_t len, size_t n, size_t disp)
{
    shape_t s;
    const size_t d[1][4] = {{2 * n, 0, n, 2}};
    snprintf(s.name, sizeof(s.name), "%zu runs of %zu B", n, len);
    s.r = make_sub(len, RMX_ORDER_C, 1, d);
    s.l = vec(len, n);
    s.disp = disp;
    return s;
}

static int make_shapes(shape_t *s)
{
    int n = 0;
    /* columns, and run counts at the splitting boundaries: a put message holds one record and
     * the bytes of (RMX_AM_PACK_MAX - 16) / 8 runs of 8 B, a get's answer RMX_AM_PACK_MAX / 8 */
    const size_t put_per = (RMX_AM_PACK_MAX - sizeof(rmx_am_run_t)) / 8;
    const size_t get_per = RMX_AM_PACK_MAX / 8;
    const size_t ks[] = {2, 3, 512, put_per - 1, put_per, put_per + 1, put_per + 2, 2 * put_per,
                         2 * put_per + 1, get_per - 1, get_per, get_per + 1, 2 * get_per + 1};
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
        s[n++] = column(ks[i]);
    /* runs of 1..64 B, at odd displacements */
    for (size_t len = 1; len <= 64; len++)
        s[n++] = spaced(len, 150, len % 7);
    /* runs at the packing threshold: packed 3 to a message, and just past it: not packed */
    s[n++] = spaced(RUN_MAX, 8, 0);
    s[n++] = spaced(RUN_MAX + 1, 8, 3);
    s[n++] = spaced(RUN_MAX - 8, 7, 0);
    {   /* Fortran a(1:39:2, 1:4) of a(39, 4) of 5000 B elements: runs of 5000 B (packed) and,
         * where a column's last element touches the next one's first, 10000 B (not): both
         * kinds in one call, each closing the other's pack */
        shape_t x;
        const size_t d[2][4] = {{39, 0, 20, 2}, {4, 0, 4, 1}};
        snprintf(x.name, sizeof(x.name), "mixed 5000/10000 B runs");
        x.r = make_sub(5000, RMX_ORDER_FORTRAN, 2, d);
        x.l = vec(5000, 80);
        x.disp = 1;
        s[n++] = x;
    }
    {   /* 3-d, C order, every dimension strided: runs of one 4 B element */
        shape_t x;
        const size_t d[3][4] = {{12, 1, 5, 2}, {10, 2, 6, 1}, {9, 0, 3, 3}};
        snprintf(x.name, sizeof(x.name), "3-d strided");
        x.r = make_sub(4, RMX_ORDER_C, 3, d);
        const size_t ld[3][4] = {{3, 0, 3, 1}, {6, 0, 6, 1}, {9, 2, 5, 1}};
        x.l = make_sub(4, RMX_ORDER_FORTRAN, 3, ld); /* 3 x 6 x 5 = 90 elements, runs of 12 B */
        x.disp = 5;
        s[n++] = x;
    }
    {   /* 3-d, Fortran order, the fastest dimension a partial stride-1 run of 7: 28 B runs */
        shape_t x;
        const size_t d[3][4] = {{9, 1, 7, 1}, {10, 0, 5, 2}, {11, 3, 4, 2}};
        snprintf(x.name, sizeof(x.name), "3-d runs of 28 B");
        x.r = x.l = make_sub(4, RMX_ORDER_FORTRAN, 3, d);
        x.disp = 0;
        s[n++] = x;
    }
    {   /* remote runs of 64 B (whole rows of 8 doubles, every other row), each covered by 8
         * local pieces (a column): the pack gathers them, the answer is scattered to them */
        shape_t x;
        const size_t d[2][4] = {{400, 0, 200, 2}, {8, 0, 8, 1}};
        const size_t ld[2][4] = {{1600, 0, 1600, 1}, {3, 2, 1, 1}};
        snprintf(x.name, sizeof(x.name), "rows from a column");
        x.r = make_sub(8, RMX_ORDER_C, 2, d);
        x.l = make_sub(8, RMX_ORDER_C, 2, ld);
        x.disp = 0;
        s[n++] = x;
    }
    return n;
}

/* ---------------------------------------------------------------- put and get, checked */

static size_t lref[MAX_ELEMS], rref[MAX_ELEMS], runat[MAX_ELEMS], runlen[MAX_ELEMS];

static unsigned char src_byte(size_t i, int round)
{
    return pattern_byte(0, i, round);
}

/* Stats delta check: over the active-message route exactly the packer's messages, else none. */
static void check_packs(const char *what, const shape_t *s, int am, const rmx_stats_t *a,
                        const rmx_stats_t *b, packs_t want)
{
    uint64_t msgs = b->packed_msgs - a->packed_msgs, runs = b->packed_runs - a->packed_runs;
    if (!am)
        want = (packs_t){0, 0};
    RANK_ASSERT(msgs == want.msgs && runs == want.runs,
                "%s %s: %llu packed messages carrying %llu runs, want %llu and %llu", what,
                s->name, (unsigned long long)msgs, (unsigned long long)runs,
                (unsigned long long)want.msgs, (unsigned long long)want.runs);
}

static int rank_shapes(const rmx_config_t *cfg, void *arg)
{
    if (arg != NULL)
        setenv("UCX_TLS", "tcp,self", 1);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, WIN, (void **)&base, &win));
    unsigned char *want = malloc(WIN), *src = malloc(WIN), *dst = malloc(WIN);
    shape_t *shapes = malloc(MAX_SHAPES * sizeof(*shapes));
    RANK_ASSERT(want && src && dst && shapes);
    int nshapes = make_shapes(shapes), am = me == 0 && ctx->peers[1].am != NULL;
    RANK_ASSERT(arg == NULL || me == 1 || am, "tcp forced, yet no active-message route");
    for (int i = 0; i < nshapes; i++) {
        const shape_t *s = &shapes[i];
        size_t n = ref_offsets(&s->l, lref, MAX_ELEMS);
        RANK_ASSERT(n > 0 && ref_offsets(&s->r, rref, MAX_ELEMS) == n, "%s", s->name);
        size_t k = ref_runs(rref, n, s->r.elem_size, runat, runlen), esz = s->l.elem_size;
        memset(want, BG, WIN);
        for (size_t e = 0; e < n; e++)
            for (size_t b = 0; b < esz; b++)
                want[s->disp + rref[e] + b] = src_byte(lref[e] + b, i);
        memset(base, BG, WIN);
        RANK_OK(rmx_sync_all(ctx));
        if (me == 0) {
            for (size_t b = 0; b < WIN; b++)
                src[b] = src_byte(b, i);
            rmx_stats_t a, b;
            RANK_OK(rmx_stats(ctx, &a));
            RANK_OK(rmx_put_sub(win, src, &s->l, 1, s->disp, &s->r));
            RANK_OK(rmx_sync_memory(ctx));
            RANK_OK(rmx_stats(ctx, &b));
            check_packs("put", s, am, &a, &b, model_packs(runat, runlen, k, 1));
        }
        RANK_OK(rmx_sync_all(ctx));
        if (me == 1) {
            for (size_t b = 0; b < WIN; b++)
                RANK_ASSERT(base[b] == want[b], "%s: window byte %zu is %#x, want %#x", s->name,
                            b, base[b], want[b]);
        } else {
            memset(dst, BG, WIN);
            rmx_stats_t a, b;
            RANK_OK(rmx_stats(ctx, &a));
            RANK_OK(rmx_get_sub(win, dst, &s->l, 1, s->disp, &s->r));
            RANK_OK(rmx_stats(ctx, &b));
            check_packs("get", s, am, &a, &b, model_packs(runat, runlen, k, 0));
            memset(want, BG, WIN);
            for (size_t e = 0; e < n; e++)
                for (size_t b2 = 0; b2 < esz; b2++)
                    want[lref[e] + b2] = src_byte(lref[e] + b2, i);
            for (size_t b2 = 0; b2 < WIN; b2++)
                RANK_ASSERT(dst[b2] == want[b2], "%s: got byte %zu is %#x, want %#x", s->name,
                            b2, dst[b2], want[b2]);
        }
        RANK_OK(rmx_sync_all(ctx)); /* the get is done before the window is reset */
    }
    free(shapes);
    free(want);
    free(src);
    free(dst);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(sub_packed, shapes_match_the_reference_2_ranks, .timeout = RMX_T(240))
{
    run_ranks_cfg(2, rank_shapes, NULL, NULL, 230);
}

Test(sub_packed, shapes_match_the_reference_over_tcp_2_ranks, .timeout = RMX_T(240))
{
    static const int tcp = 1;
    run_ranks_cfg(2, rank_shapes, (void *)&tcp, NULL, 230);
}

/* ---------------------------------------------------------------- a target busy outside rmx */

#define BUSY_S 1.5
#define COL 4096

/* Rank 1 computes for BUSY_S without calling rmx, its "busy" word set meanwhile; rank 0 puts a
 * column, completes it, reads it back and reads the busy word: still set, so the packed put,
 * its flush and the packed get were all served while the target computed (by its agent). */
static int rank_busy_target(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    setenv("UCX_TLS", "tcp,self", 1);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    double *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, (2 * COL + 1) * sizeof(double), (void **)&base, &win));
    rmx_sub_t col = column(COL).r;
    volatile double *busy = &base[2 * COL];
    for (int round = 0; round < 3; round++) {
        *busy = 1;
        RANK_OK(rmx_sync_all(ctx));
        if (me == 1) {
            double t0 = now_s(), x = 0;
            while (now_s() - t0 < BUSY_S)
                x += 1e-9; /* computing, outside rmx */
            *busy = 0;
            RANK_ASSERT(x > 0);
        } else {
            double *out = calloc(2 * COL, sizeof(double)), *in = calloc(2 * COL, sizeof(double));
            RANK_ASSERT(out && in);
            for (int i = 0; i < COL; i++)
                out[2 * i + 1] = round * 1e6 + i;
            rmx_stats_t a, b;
            RANK_OK(rmx_stats(ctx, &a));
            RANK_OK(rmx_put_sub(win, out, &col, 1, 0, &col));
            RANK_OK(rmx_sync_memory(ctx));
            RANK_OK(rmx_get_sub(win, in, &col, 1, 0, &col));
            double still = 0;
            RANK_OK(rmx_get(win, &still, sizeof(still), 1, 2 * COL * sizeof(double)));
            RANK_OK(rmx_stats(ctx, &b));
            RANK_ASSERT(b.packed_msgs - a.packed_msgs >= 2, "the column went packed");
            RANK_ASSERT(still == 1, "round %d: served only once the target stopped computing",
                        round);
            for (int i = 0; i < COL; i++)
                RANK_ASSERT(in[2 * i + 1] == out[2 * i + 1] && in[2 * i] == 0,
                            "round %d: element %d", round, i);
            free(out);
            free(in);
        }
        RANK_OK(rmx_sync_all(ctx));
        if (me == 1)
            for (int i = 0; i < COL; i++)
                RANK_ASSERT(base[2 * i + 1] == round * 1e6 + i, "round %d: element %d", round, i);
    }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(sub_packed, a_target_computing_outside_rmx_is_served_by_its_agent, .timeout = RMX_T(60))
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.progress = RMX_PROGRESS_THREAD;
    run_ranks_cfg(2, rank_busy_target, NULL, &cfg, 50);
}

/* ---------------------------------------------------------------- segment order */

#define OCOL 600 /* a column of OCOL doubles in a OCOL x 2 array */

static double value(int round, int step, int i)
{
    return round * 1e6 + step * 1e4 + i;
}

/* Rank 0 does, in one segment each, what a program may do to the same bytes of rank 1 (on
 * failure the step names the rule), then rank 1 checks what landed. */
static int rank_order(const rmx_config_t *cfg, void *arg)
{
    if (arg != NULL)
        setenv("UCX_TLS", "tcp,self", 1);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    double *base;
    rmx_win_t *win;
    const size_t bytes = 2 * OCOL * sizeof(double);
    RANK_OK(rmx_win_allocate(ctx, bytes, (void **)&base, &win));
    rmx_sub_t col = column(OCOL).r;
    double *a = calloc(2 * OCOL, sizeof(double)), *in = calloc(2 * OCOL, sizeof(double));
    RANK_ASSERT(a && in);
    for (int round = 0; round < 20; round++) {
        if (me == 0) {
            /* 1: put_sub, then get_sub of the same bytes: sees it */
            for (int i = 0; i < OCOL; i++)
                a[2 * i + 1] = value(round, 1, i);
            RANK_OK(rmx_put_sub(win, a, &col, 1, 0, &col));
            memset(in, 0, bytes);
            RANK_OK(rmx_get_sub(win, in, &col, 1, 0, &col));
            for (int i = 0; i < OCOL; i++)
                RANK_ASSERT(in[2 * i + 1] == value(round, 1, i), "round %d: get_sub after "
                            "put_sub, element %d is %g", round, i, in[2 * i + 1]);
            /* 2: put_sub, then a plain get of one element: sees it */
            for (int i = 0; i < OCOL; i++)
                a[2 * i + 1] = value(round, 2, i);
            RANK_OK(rmx_put_sub(win, a, &col, 1, 0, &col));
            double one = 0;
            int at = (round * 37) % OCOL;
            RANK_OK(rmx_get(win, &one, sizeof(one), 1, (2 * at + 1) * sizeof(double)));
            RANK_ASSERT(one == value(round, 2, at), "round %d: get after put_sub", round);
            /* 3: put_sub, then a put of one element (8 B, staged) and a put of a block over
             * several column elements and the gaps: each lands after it */
            for (int i = 0; i < OCOL; i++)
                a[2 * i + 1] = value(round, 3, i);
            RANK_OK(rmx_put_sub(win, a, &col, 1, 0, &col));
            double later = -1;
            RANK_OK(rmx_put(win, &later, sizeof(later), 1, (2 * at + 1) * sizeof(double)));
            double block[40];
            for (int i = 0; i < 40; i++)
                block[i] = -2 - i;
            RANK_OK(rmx_put(win, block, sizeof(block), 1, 200 * sizeof(double)));
            RANK_OK(rmx_sync_memory(ctx));
        }
        RANK_OK(rmx_sync_all(ctx));
        if (me == 1) {
            int at = (round * 37) % OCOL;
            for (int i = 0; i < OCOL; i++) {
                double w = 2 * i + 1 >= 200 && 2 * i + 1 < 240 ? -2 - (2 * i + 1 - 200)
                           : i == at ? -1 : value(round, 3, i);
                RANK_ASSERT(base[2 * i + 1] == w, "round %d: a put after put_sub landed "
                            "before it: element %d is %g, want %g", round, i, base[2 * i + 1],
                            w);
            }
        }
        RANK_OK(rmx_sync_all(ctx));
        if (me == 0) {
            /* 4: a put staged before put_sub lands before it; 5: put_sub then put_sub */
            int at = (round * 11) % OCOL;
            double early = -7;
            RANK_OK(rmx_put(win, &early, sizeof(early), 1, (2 * at + 1) * sizeof(double)));
            for (int i = 0; i < OCOL; i++)
                a[2 * i + 1] = value(round, 4, i);
            RANK_OK(rmx_put_sub(win, a, &col, 1, 0, &col));
            for (int i = 0; i < OCOL; i += 2)
                a[2 * i + 1] = value(round, 5, i);
            RANK_OK(rmx_put_sub(win, a, &col, 1, 0, &col));
            RANK_OK(rmx_sync_memory(ctx));
        }
        RANK_OK(rmx_sync_all(ctx));
        if (me == 1)
            for (int i = 0; i < OCOL; i++) {
                double w = value(round, i % 2 == 0 ? 5 : 4, i);
                RANK_ASSERT(base[2 * i + 1] == w, "round %d: element %d is %g, want %g (a put "
                            "before put_sub landed after it, or put_subs out of order)", round,
                            i, base[2 * i + 1], w);
            }
        RANK_OK(rmx_sync_all(ctx));
    }
    free(a);
    free(in);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(sub_packed, puts_and_gets_around_put_sub_keep_segment_order_2_ranks, .timeout = RMX_T(120))
{
    run_ranks(2, rank_order, NULL);
}

Test(sub_packed, puts_and_gets_around_put_sub_keep_segment_order_over_tcp_2_ranks,
     .timeout = RMX_T(120))
{
    static const int tcp = 1;
    run_ranks(2, rank_order, (void *)&tcp);
}

/* ---------------------------------------------------------------- refused at the target */

#define RWIN 4096

/* A record of count runs written as given, checked by nobody but the target. */
static void put_runs(rmx_am_pack_t *pk, uint32_t off, uint32_t len, uint32_t count,
                     uint32_t pitch, int with_data, unsigned char fill)
{
    rmx_am_run_t r = {.off = off, .len = len, .count = count, .pitch = pitch};
    memcpy(pk->body + pk->len, &r, sizeof(r));
    pk->len += sizeof(r);
    if (with_data) {
        memset(pk->body + pk->len, fill, (size_t)len * count);
        pk->len += (size_t)len * count;
    }
    pk->nrecs++;
    pk->nruns += count;
    pk->bytes += (size_t)len * count;
}

static void put_record(rmx_am_pack_t *pk, uint32_t off, uint32_t len, int with_data,
                       unsigned char fill)
{
    put_runs(pk, off, len, 1, 0, with_data, fill);
}

/* A bad packed put: sent, then the flush reports the refusal. */
static void refused_put(rmx_ctx_t *ctx, rmx_am_pack_t *pk, const char *what)
{
    rmx_ucx_t *u = &ctx->ucx;
    rmx_am_peer_t *am = ctx->peers[1].am;
    RANK_OK(rmx_am_put_packed(u, am, pk));
    int rc = rmx_am_flush(u, &am, 1);
    RANK_ASSERT(rc == RMX_ERR_TRANSPORT, "%s: flush returned %d, want RMX_ERR_TRANSPORT", what,
                rc);
    RANK_OK(rmx_am_flush(u, &am, 1)); /* reported once */
}

static void refused_get(rmx_ctx_t *ctx, rmx_am_pack_t *pk, const char *what)
{
    unsigned char out[64];
    memset(out, 0x11, sizeof(out));
    uint64_t token;
    RANK_OK(rmx_am_get_packed_start(&ctx->ucx, ctx->peers[1].am, pk, out, &token));
    int rc = rmx_am_wait(&ctx->ucx, token);
    RANK_ASSERT(rc == RMX_ERR_TRANSPORT, "%s: get returned %d, want RMX_ERR_TRANSPORT", what, rc);
    for (size_t i = 0; i < sizeof(out); i++)
        RANK_ASSERT(out[i] == 0x11, "%s: a refused get wrote byte %zu", what, i);
}

static int rank_refused(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    setenv("UCX_TLS", "tcp,self", 1);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 2 * RWIN, (void **)&base, &win));
    memset(base, BG, 2 * RWIN);
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0) {
        RANK_ASSERT(ctx->peers[1].am != NULL, "tcp forced, yet no active-message route");
        rmx_am_pack_t *pk = malloc(sizeof(*pk));
        RANK_ASSERT(pk != NULL);
        /* The messages name only the first half of the window: what lies past it is "outside
         * the window" for them, and must stay BG. */
        uint64_t wbase = win->remote[1].addr, span = RWIN;
#define RESET(first_)                                                                      \
    do {                                                                                   \
        rmx_am_pack_reset(pk, wbase, span);                                                \
        pk->first = (first_);                                                              \
    } while (0)
        /* a well-formed one is applied (the harness itself is right) */
        RESET(16);
        put_record(pk, 0, 8, 1, 0x21);
        put_record(pk, 100, 4, 1, 0x22);
        RANK_OK(rmx_am_put_packed(&ctx->ucx, ctx->peers[1].am, pk));
        RANK_OK(rmx_am_flush(&ctx->ucx, &ctx->peers[1].am, 1));
        /* a good run, then one ending one byte past the window: neither is written */
        RESET(RWIN - 64);
        put_record(pk, 0, 8, 1, 0x31);
        put_record(pk, 60, 5, 1, 0x32);
        refused_put(ctx, pk, "run past the window");
        RESET(RWIN + 8); /* starts past the window */
        put_record(pk, 0, 8, 1, 0x33);
        put_record(pk, 16, 8, 1, 0x33);
        refused_put(ctx, pk, "first past the window");
        RESET(0); /* offset + length wraps around 2^32 */
        put_record(pk, 8, 8, 1, 0x34);
        put_record(pk, UINT32_MAX - 2, 8, 1, 0x34);
        refused_put(ctx, pk, "run wrapping around");
        RESET(0); /* more runs announced than the body holds */
        put_record(pk, 0, 8, 1, 0x35);
        put_record(pk, 32, 8, 1, 0x35);
        pk->nrecs = 3;
        refused_put(ctx, pk, "fewer records than announced");
        RESET(0); /* fewer: the body has bytes after the last run */
        put_record(pk, 0, 8, 1, 0x36);
        put_record(pk, 32, 8, 1, 0x36);
        pk->nrecs = 1;
        refused_put(ctx, pk, "bytes after the last record");
        RESET(0); /* a run's bytes cut short by the body's end */
        put_record(pk, 0, 8, 1, 0x37);
        put_record(pk, 32, 8, 1, 0x37);
        pk->len -= 3;
        refused_put(ctx, pk, "a run cut short");
        RESET(0); /* a progression of runs whose last one ends past the window (the first
                   * ones inside it are not written either) */
        put_runs(pk, 0, 8, 4, RWIN / 3, 1, 0x39);
        refused_put(ctx, pk, "progression past the window");
        RESET(0); /* a record of no runs, or of empty ones */
        put_runs(pk, 0, 8, 1, 0, 1, 0x3a);
        put_runs(pk, 64, 8, 0, 8, 1, 0x3a);
        refused_put(ctx, pk, "record of no runs");
        RESET(0);
        put_runs(pk, 0, 8, 1, 0, 1, 0x3b);
        put_runs(pk, 64, 0, 1000, 8, 1, 0x3b);
        refused_put(ctx, pk, "record of empty runs");
        RESET(0); /* a progression's pitch wrapping 64 bits is still past the window */
        put_runs(pk, 0, 8, UINT32_MAX, UINT32_MAX, 0, 0x3c);
        pk->len += 64;
        refused_put(ctx, pk, "progression wrapping around");
        rmx_am_pack_reset(pk, UINT64_MAX - 100, 4096); /* the window wraps the address space */
        pk->first = 0;
        put_record(pk, 0, 8, 1, 0x38);
        put_record(pk, 16, 8, 1, 0x38);
        refused_put(ctx, pk, "window wrapping around");

        /* gets: the same checks, and the answer's length as declared */
        RESET(RWIN - 64);
        put_record(pk, 0, 8, 0, 0);
        put_record(pk, 60, 5, 0, 0);
        refused_get(ctx, pk, "get past the window");
        RESET(0);
        put_record(pk, 0, 8, 0, 0);
        put_record(pk, 16, 8, 0, 0);
        pk->bytes = 24;
        refused_get(ctx, pk, "get of more bytes than its runs");
        RESET(0);
        put_record(pk, 0, 8, 0, 0);
        put_record(pk, 16, 8, 0, 0);
        pk->nrecs = 3;
        refused_get(ctx, pk, "get of more records than listed");
        RESET(0); /* a progression whose last run ends past the window */
        put_runs(pk, 0, 8, 4, RWIN / 3, 0, 0);
        refused_get(ctx, pk, "get of a progression past the window");
        RESET(0); /* an answer longer than a message */
        put_runs(pk, 0, 8, RMX_AM_PACK_MAX / 8 + 1, 0, 0, 0);
        refused_get(ctx, pk, "get of more than a message");
        /* a good get still works, and sees the good put */
        RESET(16);
        put_record(pk, 0, 8, 0, 0);
        put_record(pk, 100, 4, 0, 0);
        unsigned char got[12];
        uint64_t token;
        RANK_OK(rmx_am_get_packed_start(&ctx->ucx, ctx->peers[1].am, pk, got, &token));
        RANK_OK(rmx_am_wait(&ctx->ucx, token));
        for (int i = 0; i < 12; i++)
            RANK_ASSERT(got[i] == (i < 8 ? 0x21 : 0x22), "good get, byte %d", i);
        free(pk);
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1)
        for (size_t i = 0; i < 2 * RWIN; i++) {
            unsigned char w = i >= 16 && i < 24 ? 0x21 : i >= 116 && i < 120 ? 0x22 : BG;
            RANK_ASSERT(base[i] == w, "window byte %zu is %#x, want %#x: a refused packed put "
                        "was written", i, base[i], w);
        }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(sub_packed, malformed_or_out_of_window_packs_are_refused_whole_2_ranks,
     .timeout = RMX_T(60))
{
    run_ranks(2, rank_refused, NULL);
}
