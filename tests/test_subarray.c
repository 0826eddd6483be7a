/*
 * test_subarray.c — engine/subarray.c: the contiguous length on textbook sections, the joint
 * local/remote walk against a naive element-by-element reference over thousands of random
 * shape pairs, real rmx_put_sub/rmx_get_sub between 2 ranks checked against the same reference
 * (and the number of UCP operations against the number of remote runs), and bad descriptors.
 */
#include <stdint.h>
#include "harness.h"
#include "../engine/subarray.h"

/* ---------------------------------------------------------------- building descriptors */

/* The call between two snapshots went to a mapped peer as one copy (rmx_direct_t). */
static int direct_used(const rmx_stats_t *s0, const rmx_stats_t *s1)
{
    return s1->direct_puts + s1->direct_gets > s0->direct_puts + s0->direct_gets;
}

/* 1-d contiguous vector of n elements. */
static rmx_sub_t vec(size_t elem, size_t n)
{
    const size_t d[1][4] = {{n, 0, n, 1}};
    return make_sub(elem, RMX_ORDER_C, 1, d);
}

/* ---------------------------------------------------------------- contiguous length */

Test(subarray, contig_whole_array_is_one_run)
{
    const size_t d[2][4] = {{7, 0, 7, 1}, {5, 0, 5, 1}}; /* a(1:7,1:5) */
    rmx_sub_t f = make_sub(8, RMX_ORDER_FORTRAN, 2, d), c = make_sub(8, RMX_ORDER_C, 2, d);
    cr_expect_eq(rmx_sub_contig_elems(&f), 35);
    cr_expect_eq(rmx_sub_contig_elems(&c), 35);
    rmx_sub_layout_t l;
    cr_assert_eq(rmx_sub_layout(&f, &l), RMX_OK);
    cr_expect_eq(l.nruns, 1);
    cr_expect_eq(l.run_bytes, 35 * 8);
}

Test(subarray, contig_fortran_a_2_5_3_is_4)
{
    /* real a(10,10); a(2:5,3): first index varies fastest, 4 consecutive elements */
    const size_t d[2][4] = {{10, 1, 4, 1}, {10, 2, 1, 1}};
    rmx_sub_t s = make_sub(4, RMX_ORDER_FORTRAN, 2, d);
    cr_expect_eq(rmx_sub_contig_elems(&s), 4);
    rmx_sub_layout_t l;
    cr_assert_eq(rmx_sub_layout(&s, &l), RMX_OK);
    cr_expect_eq(l.nruns, 1);
    cr_expect_eq(l.base, (2 * 10 + 1) * 4);
}

Test(subarray, contig_rows_and_columns_in_both_orders)
{
    /* C: double a[6][9]; a[2][1..7] is a row (contiguous), a[1..4][3] a column (stride 9) */
    const size_t row[2][4] = {{6, 2, 1, 1}, {9, 1, 7, 1}};
    const size_t col[2][4] = {{6, 1, 4, 1}, {9, 3, 1, 1}};
    rmx_sub_t crow = make_sub(8, RMX_ORDER_C, 2, row), ccol = make_sub(8, RMX_ORDER_C, 2, col);
    cr_expect_eq(rmx_sub_contig_elems(&crow), 7);
    cr_expect_eq(rmx_sub_contig_elems(&ccol), 1);
    /* The same descriptors read in Fortran order swap the roles: dim[0] is now fastest. */
    rmx_sub_t frow = make_sub(8, RMX_ORDER_FORTRAN, 2, row);
    rmx_sub_t fcol = make_sub(8, RMX_ORDER_FORTRAN, 2, col);
    cr_expect_eq(rmx_sub_contig_elems(&frow), 1);
    cr_expect_eq(rmx_sub_contig_elems(&fcol), 4);
    rmx_sub_layout_t l;
    cr_assert_eq(rmx_sub_layout(&ccol, &l), RMX_OK);
    cr_expect_eq(l.nruns, 4);
    cr_expect_eq(l.nouter, 1);
    cr_expect_eq(l.step[0], 9 * 8);
}

Test(subarray, contig_whole_planes_then_partial)
{
    /* Fortran a(4,3,10): a(:,:,2:6) = 5 whole planes of 12 = one run of 60 */
    const size_t d[3][4] = {{4, 0, 4, 1}, {3, 0, 3, 1}, {10, 1, 5, 1}};
    rmx_sub_t s = make_sub(1, RMX_ORDER_FORTRAN, 3, d);
    cr_expect_eq(rmx_sub_contig_elems(&s), 60);
    /* a(:,2:3,2:6): the partial second dimension stops the run at 4*2 */
    const size_t e[3][4] = {{4, 0, 4, 1}, {3, 1, 2, 1}, {10, 1, 5, 1}};
    rmx_sub_t t = make_sub(1, RMX_ORDER_FORTRAN, 3, e);
    cr_expect_eq(rmx_sub_contig_elems(&t), 8);
}

Test(subarray, contig_strided)
{
    /* a(1:9:2): every other element, runs of 1 */
    const size_t d[1][4] = {{9, 0, 5, 2}};
    rmx_sub_t s = make_sub(8, RMX_ORDER_FORTRAN, 1, d);
    cr_expect_eq(rmx_sub_contig_elems(&s), 1);
    /* a(:, 1:9:2) of a(4,9): whole columns, every other one: runs of 4 */
    const size_t e[2][4] = {{4, 0, 4, 1}, {9, 0, 5, 2}};
    rmx_sub_t t = make_sub(8, RMX_ORDER_FORTRAN, 2, e);
    cr_expect_eq(rmx_sub_contig_elems(&t), 4);
    rmx_sub_layout_t l;
    cr_assert_eq(rmx_sub_layout(&t, &l), RMX_OK);
    cr_expect_eq(l.nruns, 5);
    cr_expect_eq(l.step[0], 2 * 4 * 8);
    /* a(1:39:2, 1:2) of a(39,2): element 38 of column 1 touches element 0 of column 2, so the
     * 40 runs of 1 by the rule are 39 maximal runs, one of them 2 long */
    const size_t f[2][4] = {{39, 0, 20, 2}, {2, 0, 2, 1}};
    rmx_sub_t u = make_sub(4, RMX_ORDER_FORTRAN, 2, f);
    cr_assert_eq(rmx_sub_layout(&u, &l), RMX_OK);
    cr_expect_eq(l.nruns, 40);
    cr_expect_eq(rmx_sub_count_runs(&l), 39);
    cr_expect_eq(rmx_sub_longest_run(&l), 2 * 4);
}

Test(subarray, contig_single_element)
{
    const size_t d[3][4] = {{5, 4, 1, 3}, {6, 2, 1, 1}, {7, 0, 1, 9}};
    rmx_sub_t s = make_sub(16, RMX_ORDER_C, 3, d);
    cr_expect_eq(rmx_sub_contig_elems(&s), 1);
    rmx_sub_layout_t l;
    cr_assert_eq(rmx_sub_layout(&s, &l), RMX_OK);
    cr_expect_eq(l.nelem, 1);
    cr_expect_eq(l.nruns, 1);
    cr_expect_eq(l.base, ((4 * 6 + 2) * 7 + 0) * 16);
    cr_expect_eq(l.hi - l.lo, 16);
}

Test(subarray, empty_section_has_no_runs)
{
    const size_t d[2][4] = {{5, 0, 0, 1}, {6, 2, 3, 1}};
    rmx_sub_t s = make_sub(4, RMX_ORDER_C, 2, d);
    rmx_sub_layout_t l;
    cr_assert_eq(rmx_sub_layout(&s, &l), RMX_OK);
    cr_expect_eq(l.nelem, 0);
    cr_expect_eq(l.nruns, 0);
    rmx_sub_cursor_t c;
    size_t off;
    rmx_sub_cursor_init(&c, &l);
    size_t len;
    cr_expect_eq(rmx_sub_cursor_next(&c, &off, &len), 0);
    cr_expect_eq(rmx_sub_count_runs(&l), 0);
}

Test(subarray, invalid_descriptors_are_rejected)
{
    rmx_sub_layout_t l;
    cr_expect_eq(rmx_sub_layout(NULL, &l), RMX_ERR_ARG);
    rmx_sub_t s = vec(8, 10);
    s.elem_size = 0;
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    s = vec(8, 10);
    s.rank = 0;
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    s.rank = RMX_SUB_MAX_RANK + 1;
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    s = vec(8, 10);
    s.order = (rmx_order_t)2;
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    s = vec(8, 10);
    s.dim[0].stride = 0;
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    s = vec(8, 10);
    s.dim[0].first = 1; /* 1 + 9 = 10 >= extent */
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    s = vec(8, 10);
    s.dim[0].count = 4;
    s.dim[0].stride = 3; /* 0 + 3*3 = 9: last legal */
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_OK);
    s.dim[0].stride = 4; /* 12 */
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    s.dim[0].stride = SIZE_MAX / 2; /* (count-1)*stride overflows */
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    s = vec(8, 10);
    s.dim[0].first = SIZE_MAX; /* first + reach wraps */
    s.dim[0].count = 2;
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    const size_t huge[2][4] = {{SIZE_MAX / 4, 0, 1, 1}, {8, 0, 1, 1}}; /* array bytes overflow */
    s = make_sub(1, RMX_ORDER_C, 2, huge);
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    const size_t big[1][4] = {{SIZE_MAX / 4, 0, 1, 1}}; /* elements fit, bytes do not */
    s = make_sub(8, RMX_ORDER_C, 1, big);
    cr_expect_eq(rmx_sub_layout(&s, &l), RMX_ERR_ARG);
    cr_expect_eq(rmx_sub_contig_elems(&s), 0);
}

/* ---------------------------------------------------------------- the naive reference */

/* Byte offset of every section element, in element order: an odometer over element indices. */
static size_t naive_offsets(const rmx_sub_t *s, size_t *out, size_t max)
{
    int r = s->rank;
    size_t idx[RMX_SUB_MAX_RANK] = {0}, n = 0;
    for (int i = 0; i < r; i++)
        if (s->dim[i].count == 0)
            return 0;
    for (;;) {
        /* linear element index, written order, then bytes */
        size_t lin = 0;
        for (int i = 0; i < r; i++) {
            int d = s->order == RMX_ORDER_C ? i : r - 1 - i; /* slowest first */
            lin = lin * s->dim[d].extent + s->dim[d].first + idx[d] * s->dim[d].stride;
        }
        cr_assert(n < max);
        out[n++] = lin * s->elem_size;
        int k = 0;
        for (; k < r; k++) {
            int d = s->order == RMX_ORDER_FORTRAN ? k : r - 1 - k; /* fastest first */
            if (++idx[d] < s->dim[d].count)
                break;
            idx[d] = 0;
        }
        if (k == r)
            return n;
    }
}

/* Number of maximal runs of consecutive byte offsets in an element-order list. */
static size_t naive_runs(const size_t *off, size_t n, size_t elem)
{
    size_t runs = n > 0;
    for (size_t i = 1; i < n; i++)
        runs += off[i] != off[i - 1] + elem;
    return runs;
}

/* ---------------------------------------------------------------- random sections */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static size_t rnd_upto(size_t n) { return n == 0 ? 0 : (size_t)(rnd() % n); } /* 0..n-1 */

/* Fill dimension d so that it holds `count` elements: a stride (mostly 1), an extent with some
 * slack (sometimes none: a whole dimension), a first index that fits. */
static void random_dim(rmx_sub_dim_t *d, size_t count)
{
    d->count = count;
    d->stride = rnd_upto(4) == 0 ? 1 + rnd_upto(3) : 1;
    size_t span = count == 0 ? 1 : (count - 1) * d->stride + 1;
    size_t slack = rnd_upto(3) == 0 ? 0 : rnd_upto(4);
    d->extent = span + slack;
    d->first = rnd_upto(slack + 1);
}

static const size_t elem_sizes[] = {1, 4, 8, 16};

/* A random section of `nelem` elements: counts are a random factorisation of nelem over
 * 1..5 dimensions. */
static rmx_sub_t random_sub_of(size_t elem, size_t nelem)
{
    rmx_sub_t s;
    memset(&s, 0, sizeof(s));
    s.elem_size = elem;
    s.order = rnd_upto(2) ? RMX_ORDER_FORTRAN : RMX_ORDER_C;
    s.rank = 1 + (int)rnd_upto(5);
    size_t left = nelem;
    for (int i = 0; i < s.rank; i++) {
        size_t c = left;
        if (i < s.rank - 1) {
            size_t divs[64], nd = 0;
            for (size_t k = 1; k <= left && nd < 64; k++)
                if (left % k == 0)
                    divs[nd++] = k;
            c = divs[rnd_upto(nd)];
        }
        random_dim(&s.dim[i], c);
        left /= c;
    }
    return s;
}

static size_t array_elems(const rmx_sub_t *s)
{
    size_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->dim[i].extent;
    return n;
}

/* A local/remote pair with the same element count; arrays kept <= max_elems elements. */
static void random_pair(rmx_sub_t *local, rmx_sub_t *remote, size_t max_elems)
{
    for (;;) {
        size_t elem = elem_sizes[rnd_upto(4)];
        size_t nelem = 1 + rnd_upto(rnd_upto(4) == 0 ? 200 : 40);
        *local = random_sub_of(elem, nelem);
        *remote = random_sub_of(elem, nelem);
        if (array_elems(local) <= max_elems && array_elems(remote) <= max_elems)
            return;
    }
}

/* ---------------------------------------------------------------- walk vs reference */

#define MAX_ELEMS 4096

/* Walk the pair; every piece must map element for element onto the reference, the remote runs
 * must be exactly the reference's maximal runs, and pieces must break exactly where either
 * side's reference offsets break. */
static void check_walk(const rmx_sub_t *ls, const rmx_sub_t *rs)
{
    static size_t lref[MAX_ELEMS * 4], rref[MAX_ELEMS * 4];
    rmx_sub_layout_t L, R;
    cr_assert_eq(rmx_sub_layout(ls, &L), RMX_OK);
    cr_assert_eq(rmx_sub_layout(rs, &R), RMX_OK);
    cr_assert_eq(rmx_sub_match(&L, &R), RMX_OK);
    size_t n = naive_offsets(ls, lref, MAX_ELEMS * 4);
    cr_assert_eq(naive_offsets(rs, rref, MAX_ELEMS * 4), n);
    cr_assert_eq(L.nelem, n);
    size_t elem = ls->elem_size;
    size_t rruns = rmx_sub_count_runs(&R);
    cr_expect_eq(rruns, naive_runs(rref, n, elem), "remote runs %zu, reference %zu", rruns,
                 naive_runs(rref, n, elem));
    cr_expect_eq(rmx_sub_count_runs(&L), naive_runs(lref, n, elem));
    cr_expect(R.nruns >= rruns, "merging touching runs only ever removes runs");
    size_t breaks = n > 0;
    for (size_t i = 1; i < n; i++)
        breaks += lref[i] != lref[i - 1] + elem || rref[i] != rref[i - 1] + elem;

    rmx_sub_walk_t w;
    rmx_sub_walk_init(&w, &L, &R);
    size_t e = 0, runs = 0, pieces = 0, roff, rlen, loff, len;
    while (rmx_sub_walk_next_run(&w, &roff, &rlen)) {
        runs++;
        size_t one_off, at = 0;
        int one = rmx_sub_walk_run_is_one_piece(&w, &one_off);
        int npieces = 0;
        while (rmx_sub_walk_next_piece(&w, &loff, &len)) {
            npieces++;
            pieces++;
            cr_assert(len > 0 && len % elem == 0);
            if (one)
                cr_assert_eq(loff, one_off);
            for (size_t j = 0; j < len / elem; j++, e++) {
                cr_assert(e < n, "walk yields more elements than the section holds");
                cr_assert_eq(loff + j * elem, lref[e], "element %zu local", e);
                cr_assert_eq(roff + at + j * elem, rref[e], "element %zu remote", e);
            }
            at += len;
        }
        cr_assert_eq(at, rlen, "pieces cover the remote run");
        cr_assert(!one || npieces == 1);
    }
    cr_assert_eq(e, n);
    cr_expect_eq(runs, rruns);
    cr_expect_eq(pieces, breaks, "pieces %zu, reference breaks %zu", pieces, breaks);
}

Test(subarray, walk_matches_reference_on_5000_random_pairs)
{
    rng_state = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 5000; i++) {
        rmx_sub_t l, r;
        random_pair(&l, &r, MAX_ELEMS);
        check_walk(&l, &r);
    }
}

Test(subarray, walk_same_shape_on_both_sides_is_one_piece_per_run)
{
    rng_state = 12345;
    for (int i = 0; i < 1000; i++) {
        rmx_sub_t l, r;
        random_pair(&l, &r, MAX_ELEMS);
        check_walk(&l, &l);
        rmx_sub_layout_t L;
        cr_assert_eq(rmx_sub_layout(&l, &L), RMX_OK);
        rmx_sub_walk_t w;
        rmx_sub_walk_init(&w, &L, &L);
        size_t roff, rlen, loff;
        while (rmx_sub_walk_next_run(&w, &roff, &rlen)) {
            cr_assert(rmx_sub_walk_run_is_one_piece(&w, &loff));
            cr_assert_eq(loff, roff);
        }
    }
}

/* Local runs of 3 elements against remote runs of 2: 0-1 | 2 3 | 4-5 ... pieces break at both
 * boundaries (plain MIN(3,2)=2 chunks would straddle the local break at element 3). */
Test(subarray, walk_cuts_at_both_boundaries_when_runs_do_not_divide)
{
    const size_t ld[2][4] = {{5, 0, 3, 1}, {4, 0, 4, 1}}; /* Fortran (5,4): (1:3,:) runs of 3 */
    const size_t rd[2][4] = {{3, 0, 2, 1}, {6, 0, 6, 1}}; /* Fortran (3,6): (1:2,:) runs of 2 */
    rmx_sub_t l = make_sub(4, RMX_ORDER_FORTRAN, 2, ld), r = make_sub(4, RMX_ORDER_FORTRAN, 2, rd);
    check_walk(&l, &r);
    rmx_sub_layout_t L, R;
    cr_assert_eq(rmx_sub_layout(&l, &L), RMX_OK);
    cr_assert_eq(rmx_sub_layout(&r, &R), RMX_OK);
    cr_expect_eq(L.run_elems, 3);
    cr_expect_eq(R.run_elems, 2);
    cr_expect_eq(R.nruns, 6);
}

/* ---------------------------------------------------------------- put_sub / get_sub, 2 ranks */

#define WIN_BYTES (MAX_ELEMS * 16 + 64)
#define BACKGROUND 0x5a
#define NCASES 300

static unsigned char src_byte(size_t i, int round) { return pattern_byte(0, i, round); }

/* What rank 1's window holds after rank 0's put_sub of round's case. */
static void expected_window(unsigned char *win, const rmx_sub_t *l, const rmx_sub_t *r,
                            size_t disp, int round)
{
    static size_t lref[MAX_ELEMS * 4], rref[MAX_ELEMS * 4];
    size_t n = naive_offsets(l, lref, MAX_ELEMS * 4);
    naive_offsets(r, rref, MAX_ELEMS * 4);
    memset(win, BACKGROUND, WIN_BYTES);
    for (size_t e = 0; e < n; e++)
        for (size_t b = 0; b < l->elem_size; b++)
            win[disp + rref[e] + b] = src_byte(lref[e] + b, round);
}

/* Remote runs moved between two stats snapshots: one per UCP operation (ops: ucp_puts or
 * ucp_gets), except that a packed message (over active messages, tcp) carried packed_runs. */
#define RUNS_MOVED(s0, s1, ops)                                                             \
    ((s1).ops - (s0).ops - ((s1).packed_msgs - (s0).packed_msgs) +                          \
     ((s1).packed_runs - (s0).packed_runs))

static int rank_random_put_get(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, WIN_BYTES, (void **)&base, &win));
    unsigned char *want = malloc(WIN_BYTES), *src = malloc(WIN_BYTES), *dst = malloc(WIN_BYTES);
    static size_t lref[MAX_ELEMS * 4], rref[MAX_ELEMS * 4];
    RANK_ASSERT(want && src && dst);
    rng_state = 0xabcdef12345ull;
    for (int round = 0; round < NCASES; round++) {
        rmx_sub_t l, r;
        random_pair(&l, &r, MAX_ELEMS);
        size_t disp = rnd_upto(64);
        rmx_sub_layout_t R;
        RANK_OK(rmx_sub_layout(&r, &R));
        size_t nrem = naive_offsets(&r, rref, MAX_ELEMS * 4);
        size_t nruns = naive_runs(rref, nrem, r.elem_size); /* maximal remote runs */
        memset(base, BACKGROUND, WIN_BYTES);
        RANK_OK(rmx_sync_all(ctx));
        if (me == 0) {
            for (size_t i = 0; i < WIN_BYTES; i++)
                src[i] = src_byte(i, round);
            rmx_stats_t s0, s1;
            RANK_OK(rmx_stats(ctx, &s0));
            RANK_OK(rmx_put_sub(win, src, &l, 1, disp, &r));
            RANK_OK(rmx_stats(ctx, &s1));
            RANK_ASSERT(s1.puts - s0.puts == 1);
            RANK_ASSERT(RUNS_MOVED(s0, s1, ucp_puts) == (direct_used(&s0, &s1) ? 0 : nruns),
                        "round %d: %llu runs put for %zu runs", round,
                        (unsigned long long)RUNS_MOVED(s0, s1, ucp_puts), nruns);
        }
        RANK_OK(rmx_sync_all(ctx));
        expected_window(want, &l, &r, disp, round);
        if (me == 1) {
            for (size_t i = 0; i < WIN_BYTES; i++)
                RANK_ASSERT(base[i] == want[i], "round %d: window byte %zu is %#x, want %#x",
                            round, i, base[i], want[i]);
        } else {
            /* read it back through the same pair of sections: dst = src at the section */
            memset(dst, BACKGROUND, WIN_BYTES);
            rmx_stats_t s0, s1;
            RANK_OK(rmx_stats(ctx, &s0));
            RANK_OK(rmx_get_sub(win, dst, &l, 1, disp, &r));
            RANK_OK(rmx_stats(ctx, &s1));
            RANK_ASSERT(s1.gets - s0.gets == 1);
            RANK_ASSERT(RUNS_MOVED(s0, s1, ucp_gets) == (direct_used(&s0, &s1) ? 0 : nruns),
                        "round %d", round);
            size_t n = naive_offsets(&l, lref, MAX_ELEMS * 4);
            naive_offsets(&r, rref, MAX_ELEMS * 4);
            memset(want, BACKGROUND, WIN_BYTES);
            for (size_t e = 0; e < n; e++)
                for (size_t b = 0; b < l.elem_size; b++)
                    want[lref[e] + b] = src_byte(lref[e] + b, round);
            for (size_t i = 0; i < WIN_BYTES; i++)
                RANK_ASSERT(dst[i] == want[i], "round %d: get byte %zu is %#x, want %#x", round,
                            i, dst[i], want[i]);
        }
        RANK_OK(rmx_sync_all(ctx)); /* rank 0's get is done before rank 1 resets its window */
    }
    free(want);
    free(src);
    free(dst);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

/* Coalescing off: each remote run must be its own UCP put, so the count is exact (or, to a
 * mapped peer, the call is one direct copy).  Both paths, whatever RMX_DIRECT says. */
static void run_subarray_test(rmx_fork_main_t fn, rmx_direct_t direct, int timeout_s)
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.coalesce_disable = 1;
    cfg.direct = direct;
    run_ranks_cfg(2, fn, NULL, &cfg, timeout_s);
}

Test(subarray, random_put_get_sub_match_reference_2_ranks, .timeout = RMX_T(120))
{
    run_subarray_test(rank_random_put_get, RMX_DIRECT_ENV, 110);
}

Test(subarray, random_put_get_sub_match_reference_through_ucp_2_ranks, .timeout = RMX_T(120))
{
    run_subarray_test(rank_random_put_get, RMX_DIRECT_OFF, 110);
}

/* A big strided case: a column of a C matrix into a row of another (runs of 1 into one run of
 * 1000, through staging) and back. */
static int rank_column_to_row(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    enum { N = 1000 };
    double *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 3 * N * sizeof(double), (void **)&base, &win));
    double *m = calloc((size_t)N * 3, sizeof(double));
    RANK_ASSERT(m != NULL);
    const size_t col[2][4] = {{N, 0, N, 1}, {3, 1, 1, 1}}; /* m[0..N-1][1] of m[N][3] */
    const size_t row[2][4] = {{3, 2, 1, 1}, {N, 0, N, 1}}; /* w[2][0..N-1] of w[3][N] */
    rmx_sub_t lc = make_sub(8, RMX_ORDER_C, 2, col), rr = make_sub(8, RMX_ORDER_C, 2, row);
    if (me == 0) {
        for (int i = 0; i < N; i++)
            m[i * 3 + 1] = i + 0.5;
        rmx_stats_t s0, s1;
        RANK_OK(rmx_stats(ctx, &s0));
        RANK_OK(rmx_put_sub(win, m, &lc, 1, 0, &rr));
        RANK_OK(rmx_stats(ctx, &s1));
        RANK_ASSERT(s1.ucp_puts - s0.ucp_puts == (direct_used(&s0, &s1) ? 0 : 1),
                    "one remote run, one UCP put");
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1) {
        for (int i = 0; i < N; i++)
            RANK_ASSERT(base[2 * N + i] == i + 0.5, "element %d", i);
        for (int i = 0; i < 2 * N; i++)
            RANK_ASSERT(base[i] == 0, "byte outside the row changed");
    } else {
        memset(m, 0, sizeof(double) * 3 * N);
        RANK_OK(rmx_get_sub(win, m, &lc, 1, 0, &rr));
        for (int i = 0; i < N; i++) {
            RANK_ASSERT(m[i * 3 + 1] == i + 0.5, "element %d", i);
            RANK_ASSERT(m[i * 3] == 0 && m[i * 3 + 2] == 0);
        }
    }
    RANK_OK(rmx_sync_all(ctx)); /* rank 1 has checked the row before it is overwritten */
    if (me == 0) {
        /* column to column: N remote runs of one element, each straight from local memory */
        rmx_stats_t s0, s1;
        RANK_OK(rmx_stats(ctx, &s0));
        RANK_OK(rmx_put_sub(win, m, &lc, 1, 0, &lc));
        RANK_OK(rmx_stats(ctx, &s1));
        RANK_ASSERT(RUNS_MOVED(s0, s1, ucp_puts) == (direct_used(&s0, &s1) ? 0 : N));
    }
    RANK_OK(rmx_sync_all(ctx));
    if (me == 1)
        for (int i = 0; i < N; i++)
            RANK_ASSERT(base[i * 3 + 1] == i + 0.5, "column element %d", i);
    free(m);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(subarray, column_to_row_and_back_2_ranks, .timeout = RMX_T(60))
{
    run_subarray_test(rank_column_to_row, RMX_DIRECT_ENV, 50);
}

Test(subarray, column_to_row_and_back_through_ucp_2_ranks, .timeout = RMX_T(60))
{
    run_subarray_test(rank_column_to_row, RMX_DIRECT_OFF, 50);
}

/* A get_sub after a put_sub of the same section in one segment sees the put (the tracker's
 * flow dependency covers subarrays too). */
static int rank_get_sub_after_put_sub(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64 * 64 * 4, &base, &win));
    const size_t d[2][4] = {{64, 3, 20, 3}, {64, 5, 7, 2}}; /* Fortran a(4:61:3, 6:18:2) */
    rmx_sub_t s = make_sub(4, RMX_ORDER_FORTRAN, 2, d);
    const size_t packed[1][4] = {{140, 0, 140, 1}};
    rmx_sub_t p = make_sub(4, RMX_ORDER_FORTRAN, 1, packed);
    uint32_t out[140], in[140];
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 140; i++)
            out[i] = (uint32_t)(me * 100000 + round * 1000 + i);
        RANK_OK(rmx_put_sub(win, out, &p, (me + 1) % n, 0, &s));
        memset(in, 0, sizeof(in));
        RANK_OK(rmx_get_sub(win, in, &p, (me + 1) % n, 0, &s));
        RANK_ASSERT(memcmp(in, out, sizeof(in)) == 0, "round %d", round);
    }
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(subarray, get_sub_after_put_sub_sees_the_put_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_get_sub_after_put_sub, NULL);
}

/* ---------------------------------------------------------------- bad calls, 2 ranks */

#define BAD_WIN 512

static int rank_bad_descriptors(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), other = 1 - me;
    unsigned char *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, BAD_WIN, (void **)&base, &win));
    memset(base, 0xAB, BAD_WIN);
    RANK_OK(rmx_sync_all(ctx));
    unsigned char buf[BAD_WIN];
    memset(buf, 0x11, sizeof(buf));
    rmx_stats_t s0, s1;
    RANK_OK(rmx_stats(ctx, &s0));

    rmx_sub_t good = vec(8, 16), bad;
#define BOTH(code, l, r)                                                                   \
    do {                                                                                   \
        RANK_RC(code, rmx_put_sub(win, buf, l, other, 0, r));                              \
        RANK_RC(code, rmx_get_sub(win, buf, l, other, 0, r));                              \
    } while (0)
    BOTH(RMX_ERR_ARG, NULL, &good);
    BOTH(RMX_ERR_ARG, &good, NULL);
    bad = good;
    bad.rank = 0;
    BOTH(RMX_ERR_ARG, &bad, &good);
    bad.rank = 16;
    BOTH(RMX_ERR_ARG, &good, &bad);
    bad = good;
    bad.elem_size = 0;
    BOTH(RMX_ERR_ARG, &bad, &bad);
    bad = good;
    bad.elem_size = 4; /* element sizes differ */
    BOTH(RMX_ERR_ARG, &good, &bad);
    bad = vec(8, 15); /* element counts differ */
    BOTH(RMX_ERR_ARG, &good, &bad);
    bad = good;
    bad.dim[0].stride = 0;
    BOTH(RMX_ERR_ARG, &good, &bad);
    bad = good;
    bad.dim[0].first = 1; /* section runs past the extent */
    BOTH(RMX_ERR_ARG, &bad, &good);
    bad = good;
    bad.order = (rmx_order_t)7;
    BOTH(RMX_ERR_ARG, &good, &bad);
    const size_t wrap[2][4] = {{SIZE_MAX / 2, 0, 4, 1}, {4, 0, 4, 1}};
    bad = make_sub(8, RMX_ORDER_C, 2, wrap); /* 16 elements, array bytes overflow */
    BOTH(RMX_ERR_ARG, &good, &bad);
    BOTH(RMX_ERR_ARG, &bad, &good);
    RANK_RC(RMX_ERR_ARG, rmx_put_sub(win, NULL, &good, other, 0, &good));
    RANK_RC(RMX_ERR_ARG, rmx_get_sub(win, NULL, &good, other, 0, &good));
    /* target and range checks use the remote section's bytes */
    RANK_RC(RMX_ERR_RANK, rmx_put_sub(win, buf, &good, 2, 0, &good));
    RANK_RC(RMX_ERR_RANK, rmx_get_sub(win, buf, &good, -1, 0, &good));
    rmx_sub_t edge = vec(8, BAD_WIN / 8);
    RANK_RC(RMX_ERR_RANGE, rmx_put_sub(win, buf, &edge, other, 1, &edge));
    RANK_RC(RMX_ERR_RANGE, rmx_get_sub(win, buf, &edge, other, 8, &edge));
    RANK_RC(RMX_ERR_RANGE, rmx_put_sub(win, buf, &good, other, SIZE_MAX - 8, &good));
    const size_t far[1][4] = {{1000, 990, 1, 1}}; /* one element at byte 7920 */
    bad = make_sub(8, RMX_ORDER_C, 1, far);
    rmx_sub_t one = vec(8, 1);
    RANK_RC(RMX_ERR_RANGE, rmx_put_sub(win, buf, &one, other, 0, &bad));
    RANK_RC(RMX_ERR_WIN, rmx_put_sub(NULL, buf, &good, other, 0, &good));
    RANK_RC(RMX_ERR_WIN, rmx_get_sub(NULL, buf, &good, other, 0, &good));
    /* an empty section is fine and moves nothing, even with a NULL buffer */
    rmx_sub_t empty = vec(8, 0);
    RANK_OK(rmx_put_sub(win, NULL, &empty, other, 0, &empty));
    RANK_OK(rmx_get_sub(win, NULL, &empty, other, 0, &empty));

    RANK_OK(rmx_stats(ctx, &s1));
    RANK_ASSERT(s1.ucp_puts == s0.ucp_puts && s1.ucp_gets == s0.ucp_gets &&
                s1.direct_puts == s0.direct_puts && s1.direct_gets == s0.direct_gets,
                "nothing was sent");
    RANK_ASSERT(s1.puts == s0.puts && s1.gets == s0.gets);
    for (size_t i = 0; i < sizeof(buf); i++)
        RANK_ASSERT(buf[i] == 0x11, "failed get wrote local byte %zu", i);
    RANK_OK(rmx_sync_all(ctx));
    for (size_t i = 0; i < BAD_WIN; i++)
        RANK_ASSERT(base[i] == 0xAB, "byte %zu of my window changed to %#x", i, base[i]);
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(subarray, bad_descriptors_give_their_code_and_send_nothing_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_bad_descriptors, NULL);
}

/* ---------------------------------------------------------------- the fuzz target, briefly */

/* `make fuzz` builds it (clang); when present, 20000 deterministic runs (about a second) must
 * find nothing.  Crash inputs and the log land next to the binary. */
Test(subarray, fuzz_target_20000_runs_if_built, .timeout = RMX_T(120))
{
    const char *dir = RMX_TEST_BIN_DIR;
    char bin[1024], cmd[4096];
    snprintf(bin, sizeof(bin), "%s/fuzz_subarray", dir);
    if (access(bin, X_OK) != 0)
        cr_skip_test("%s not built (make fuzz)", bin);
    snprintf(cmd, sizeof(cmd),
             "%s -runs=20000 -seed=1 -artifact_prefix=%s/ > %s/fuzz_subarray.log 2>&1", bin, dir,
             dir);
    int st = system(cmd);
    cr_expect_eq(st, 0, "fuzz_subarray found a failing input: see %s/fuzz_subarray.log", dir);
}
