/*
 * halo.c — a halo exchange with subarray puts.  A grid of NY rows is cut into blocks of NX
 * columns, one per rank, in a ring (the last rank's right neighbour is rank 0).  Each rank's
 * block carries one ghost column on either side, holding a copy of the neighbour's edge column.
 * Every iteration each rank writes its two edge columns into its neighbours' ghost columns with
 * rmx_put_sub (a column of a C array is strided: NY elements NX + 2 apart, described by an
 * rmx_sub_t, sent as one call), then smooths its block: u = (left + u + right) / 3.  At the end
 * every rank checks its block against the same computation done on the whole grid alone.
 *
 * Build (make tests builds it as build/tests/examples/halo), by hand from the checkout:
 *     cc -std=c11 -Iapi tests/examples/halo.c build/librmx.a \
 *        $(pkg-config --libs ucx hwloc pmix) -lpthread -lm -o halo
 * Run on 2 (or more) ranks:
 *     mpirun -np 2 ./halo               or    build/rmx_forkrun -n 2 ./halo
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rmx.h>

#define NY 4       /* rows */
#define NX 6       /* columns per rank, without the two ghost columns */
#define ITERS 5

/* Every rmx call returns RMX_OK (0) or a negative RMX_ERR_* code that rmx_strerror explains. */
#define CHECK(call)                                                                    \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != RMX_OK) {                                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                    rmx_strerror(rc_));                                                \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* Column c of a block double u[NY][NX + 2] (C order: dim[0] is the row, dim[1] the column;
 * each dimension's {extent, first, count, stride}). */
static rmx_sub_t column(size_t c)
{
    rmx_sub_t s = {.elem_size = sizeof(double), .rank = 2, .order = RMX_ORDER_C};
    s.dim[0] = (rmx_sub_dim_t){NY, 0, NY, 1};       /* every row */
    s.dim[1] = (rmx_sub_dim_t){NX + 2, c, 1, 1};    /* of column c only */
    return s;
}

/* One smoothing step of a row of w cells, in[1..w], whose outer neighbours are in[0] and
 * in[w + 1]: out[x] = (in[x - 1] + in[x] + in[x + 1]) / 3. */
static void smooth(const double *in, double *out, int w)
{
    for (int x = 1; x <= w; x++)
        out[x] = (in[x - 1] + in[x] + in[x + 1]) / 3.0;
}

int main(void)
{
    rmx_ctx_t *ctx;
    CHECK(rmx_init(NULL, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    int left = (me + n - 1) % n, right = (me + 1) % n;

    /* The block is the window itself, so the neighbours can write its ghost columns. */
    double(*u)[NX + 2];
    rmx_win_t *win;
    CHECK(rmx_win_allocate(ctx, sizeof(double[NY][NX + 2]), (void **)&u, &win));

    /* The whole grid, which every rank also computes alone to check its block against: gw
     * columns plus two for the ring's wrap-around, laid out as the blocks are. */
    int gw = NX * n;
    double *grid = malloc(sizeof(double) * NY * (size_t)(gw + 2));
    double *out = malloc(sizeof(double) * (size_t)(gw + 2));     /* one smoothed row */
    if (grid == NULL || out == NULL) {
        fprintf(stderr, "halo: out of memory\n");
        return 1;
    }
#define G(y, x) grid[(y) * (gw + 2) + (x)]
    for (int y = 0; y < NY; y++)
        for (int x = 1; x <= gw; x++)
            G(y, x) = (x * 7 + y * 3) % 11;                 /* any start that is not uniform */
    for (int y = 0; y < NY; y++)
        for (int x = 1; x <= NX; x++)
            u[y][x] = G(y, me * NX + x);

    rmx_sub_t first = column(1), last = column(NX), ghost_l = column(0), ghost_r = column(NX + 1);
    for (int it = 0; it < ITERS; it++) {
        /* My first column is my left neighbour's right ghost, my last my right neighbour's left
         * ghost.  disp 0: the remote block starts at offset 0 of the neighbour's window. */
        CHECK(rmx_put_sub(win, u, &first, left, 0, &ghost_r));
        CHECK(rmx_put_sub(win, u, &last, right, 0, &ghost_l));
        CHECK(rmx_sync_all(ctx));           /* puts complete everywhere: ghosts are filled */
        for (int y = 0; y < NY; y++) {
            smooth(u[y], out, NX);
            memcpy(&u[y][1], &out[1], NX * sizeof(double));
            G(y, 0) = G(y, gw);             /* the grid's own "halo": the ring wraps around */
            G(y, gw + 1) = G(y, 1);
            smooth(&G(y, 0), out, gw);
            memcpy(&G(y, 1), &out[1], (size_t)gw * sizeof(double));
        }
        CHECK(rmx_sync_all(ctx));           /* nobody reads its ghosts any more: refill them */
    }

    /* Same operations in the same order: the results must be equal to the last bit. */
    int wrong = 0;
    for (int y = 0; y < NY; y++)
        for (int x = 1; x <= NX; x++)
            wrong += u[y][x] != G(y, me * NX + x);
    printf("rank %d: halo: %d iterations, %d of %d cells differ from the whole-grid result\n",
           me, ITERS, wrong, NY * NX);
    free(grid);
    free(out);
    CHECK(rmx_win_free(&win));
    CHECK(rmx_finalize(ctx));
    return wrong != 0;
}
