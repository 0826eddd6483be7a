/*
 * osu_rma.c — the Open MPI column of perf/compare.sh: rmx_perf's tests written on MPI-3 RMA
 * (MPI_Put / MPI_Get / MPI_Fetch_and_op / MPI_Compare_and_swap, derived datatypes for the
 * subarray sections) in the OSU one-sided style: passive target, rank 0 holds MPI_Win_lock_all
 * for the whole run and completes with MPI_Win_flush(target).  The geometry (slots, windows of
 * operations, array shapes, data-area size) comes from ../perf.h, so every row moves exactly the
 * bytes rmx_perf's row moves, with the same completion:
 *   put    MPI_Put ... MPI_Win_flush          get    MPI_Get + MPI_Win_flush (blocking)
 *   atomic MPI_Fetch_and_op / MPI_Compare_and_swap + MPI_Win_flush (old value returned)
 *   sync   MPI_Barrier
 *   window MPI_Win_allocate + MPI_Win_free (win_create)
 * Output: "test,size,unit,value" lines (value: median of --reps), read by rmx_perf --mpi.
 * --idle-target S: the non-origin ranks sleep S seconds (no MPI calls) during each measurement
 * instead of waiting in MPI_Barrier, which shows the calls that need the target's progress (use
 * --warmup 0, or the warm-up absorbs the wait).
 * Built by perf/compare.sh with mpicc; it lives in perf/mpi/ so rmx_perf does not link it.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../driver.h"

typedef driver_opts_t opts_t;

typedef struct {
    MPI_Win win;
    char *base, *local;
    size_t data_len;
    int me, n, target;
    int64_t cas_expect, max_next;
    MPI_Datatype col;       /* the column section of the current size */
    size_t col_k;
} env_t;

typedef int (*body_t)(env_t *e, size_t len, long n);

typedef struct {
    const char *name, *group;
    perf_metric_t metric;
    size_t min_len, max_len;
    int collective;
    int window;             /* 0: one op per iteration, 1: PERF_BW_WINDOW slots, 2: rate window */
    body_t body;
} test_t;

static int flush(env_t *e)
{
    return MPI_Win_flush(e->target, e->win);
}

/* ---------------------------------------------------------------- bodies */
static int put_lat(env_t *e, size_t len, long n)
{
    for (long i = 0; i < n; i++) {
        MPI_Put(e->local, (int)len, MPI_BYTE, e->target, 0, (int)len, MPI_BYTE, e->win);
        flush(e);
    }
    return 0;
}

static int put_bw(env_t *e, size_t len, long n)
{
    long w = driver_bw_ops(e->data_len, len);
    size_t slot = perf_slot(len);
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < w; j++)
            MPI_Put(e->local + (size_t)j * slot, (int)len, MPI_BYTE, e->target,
                    (MPI_Aint)((size_t)j * slot), (int)len, MPI_BYTE, e->win);
        flush(e);
    }
    return 0;
}

static int put_rate(env_t *e, size_t len, long n)
{
    long w = driver_rate_ops(e->data_len, len);
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < w; j++)
            MPI_Put(e->local + (size_t)j * len, (int)len, MPI_BYTE, e->target,
                    (MPI_Aint)((size_t)j * len), (int)len, MPI_BYTE, e->win);
        flush(e);
    }
    return 0;
}

static int get_lat(env_t *e, size_t len, long n)
{
    for (long i = 0; i < n; i++) {
        MPI_Get(e->local, (int)len, MPI_BYTE, e->target, 0, (int)len, MPI_BYTE, e->win);
        flush(e);
    }
    return 0;
}

static int get_slots(env_t *e, size_t len, long n, long w, size_t step)
{
    for (long i = 0; i < n; i++)
        for (long j = 0; j < w; j++) {
            MPI_Get(e->local + (size_t)j * step, (int)len, MPI_BYTE, e->target,
                    (MPI_Aint)((size_t)j * step), (int)len, MPI_BYTE, e->win);
            flush(e);
        }
    return 0;
}

static int get_bw(env_t *e, size_t len, long n)
{
    return get_slots(e, len, n, driver_bw_ops(e->data_len, len), perf_slot(len));
}

static int get_rate(env_t *e, size_t len, long n)
{
    return get_slots(e, len, n, driver_rate_ops(e->data_len, len), len);
}

static MPI_Aint rmw_disp(const env_t *e, int word)
{
    return (MPI_Aint)(e->data_len + PERF_CTRL_RMW + (size_t)word * sizeof(int64_t));
}

static int fetch_add(env_t *e, size_t len, long n)
{
    (void)len;
    int64_t one = 1, old;
    for (long i = 0; i < n; i++) {
        MPI_Fetch_and_op(&one, &old, MPI_INT64_T, e->target, rmw_disp(e, 0), MPI_SUM, e->win);
        flush(e);
    }
    return 0;
}

static int swap(env_t *e, size_t len, long n)
{
    (void)len;
    int64_t old;
    for (long i = 0; i < n; i++) {
        int64_t v = i;
        MPI_Fetch_and_op(&v, &old, MPI_INT64_T, e->target, rmw_disp(e, 1), MPI_REPLACE, e->win);
        flush(e);
    }
    return 0;
}

static int cswap(env_t *e, size_t len, long n)
{
    (void)len;
    for (long i = 0; i < n; i++) {
        int64_t cmp = e->cas_expect, next = cmp + 1, old;
        MPI_Compare_and_swap(&next, &cmp, &old, MPI_INT64_T, e->target, rmw_disp(e, 2), e->win);
        flush(e);
        e->cas_expect = old == cmp ? next : old;
    }
    return 0;
}

static int max_op(env_t *e, size_t len, long n)
{
    (void)len;
    int64_t old;
    for (long i = 0; i < n; i++) {
        int64_t v = ++e->max_next;
        MPI_Fetch_and_op(&v, &old, MPI_INT64_T, e->target, rmw_disp(e, 3), MPI_MAX, e->win);
        flush(e);
    }
    return 0;
}

/* The column of a k x PERF_SUB_WIDTH array, as a vector type starting at element (0, 1). */
static MPI_Datatype column_type(env_t *e, size_t k)
{
    if (e->col_k != k) {
        if (e->col_k != 0)
            MPI_Type_free(&e->col);
        MPI_Type_vector((int)k, 1, PERF_SUB_WIDTH, MPI_DOUBLE, &e->col);
        MPI_Type_commit(&e->col);
        e->col_k = k;
    }
    return e->col;
}

static int put_col(env_t *e, size_t len, long n)
{
    MPI_Datatype t = column_type(e, perf_sub_elems(len));
    size_t off = perf_col_offset(0);
    for (long i = 0; i < n; i++) {
        MPI_Put(e->local + off, 1, t, e->target, (MPI_Aint)off, 1, t, e->win);
        flush(e);
    }
    return 0;
}

static int get_col(env_t *e, size_t len, long n)
{
    MPI_Datatype t = column_type(e, perf_sub_elems(len));
    size_t off = perf_col_offset(0);
    for (long i = 0; i < n; i++) {
        MPI_Get(e->local + off, 1, t, e->target, (MPI_Aint)off, 1, t, e->win);
        flush(e);
    }
    return 0;
}

static int put_row(env_t *e, size_t len, long n)
{
    size_t k = perf_sub_elems(len), off = perf_row_offset(k);
    for (long i = 0; i < n; i++) {
        MPI_Put(e->local + off, (int)k, MPI_DOUBLE, e->target, (MPI_Aint)off, (int)k, MPI_DOUBLE,
                e->win);
        flush(e);
    }
    return 0;
}

static int get_row(env_t *e, size_t len, long n)
{
    size_t k = perf_sub_elems(len), off = perf_row_offset(k);
    for (long i = 0; i < n; i++) {
        MPI_Get(e->local + off, (int)k, MPI_DOUBLE, e->target, (MPI_Aint)off, (int)k, MPI_DOUBLE,
                e->win);
        flush(e);
    }
    return 0;
}

static int barrier(env_t *e, size_t len, long n)
{
    (void)e;
    (void)len;
    for (long i = 0; i < n; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

/* rmx_perf's win_create: a window's collective life, created and freed. */
static int win_create(env_t *e, size_t len, long n)
{
    (void)e;
    for (long i = 0; i < n; i++) {
        void *base;
        MPI_Win w;
        MPI_Win_allocate((MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
        MPI_Win_free(&w);
    }
    return 0;
}

static const test_t tests[] = {
    {"put_lat", "put", METRIC_LAT, 1, MiB(4), 0, 0, put_lat},
    {"put_bw", "put", METRIC_BW, 1, MiB(4), 0, 1, put_bw},
    {"put_rate", "put", METRIC_RATE, 1, KiB(64), 0, 2, put_rate},
    {"get_lat", "get", METRIC_LAT, 1, MiB(4), 0, 0, get_lat},
    {"get_bw", "get", METRIC_BW, 1, MiB(4), 0, 1, get_bw},
    {"get_rate", "get", METRIC_RATE, 1, KiB(64), 0, 2, get_rate},
    {"fadd", "rmw", METRIC_LAT, 8, 8, 0, 0, fetch_add},
    {"swap", "rmw", METRIC_LAT, 8, 8, 0, 0, swap},
    {"cswap", "rmw", METRIC_LAT, 8, 8, 0, 0, cswap},
    {"max", "rmw", METRIC_LAT, 8, 8, 0, 0, max_op},
    {"put_col", "sub", METRIC_LAT, 8, MiB(4), 0, 0, put_col},
    {"put_row", "sub", METRIC_LAT, 8, MiB(4), 0, 0, put_row},
    {"get_col", "sub", METRIC_LAT, 8, MiB(4), 0, 0, get_col},
    {"get_row", "sub", METRIC_LAT, 8, MiB(4), 0, 0, get_row},
    {"sync_all", "sync", METRIC_LAT, 0, 0, 1, 0, barrier},
    {"win_create", "win", METRIC_LAT, KiB(4), KiB(4), 1, 0, win_create},
};
#define NTESTS ((int)(sizeof(tests) / sizeof(tests[0])))

/* ---------------------------------------------------------------- measurement */
static int selected(const opts_t *o, const test_t *t)
{
    return driver_selected(o, t->name, t->group);
}

/* Doubling batches until max_iters or max_s of timed work; rank 0 decides for collectives. */
static void run_bounded(env_t *e, const test_t *t, size_t len, long max_iters, double max_s,
                        long *done, double *busy)
{
    long batch = 1, cap = max_iters / 16 > 0 ? max_iters / 16 : 1;
    *done = 0;
    *busy = 0;
    while (*done < max_iters) {
        long n = batch < max_iters - *done ? batch : max_iters - *done;
        double t0 = MPI_Wtime();
        t->body(e, len, n);
        *busy += MPI_Wtime() - t0;
        *done += n;
        int more = *done < max_iters && *busy < max_s;
        if (t->collective)
            MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!more)
            break;
        if (batch < cap)
            batch *= 2;
    }
}

static double measure(env_t *e, const test_t *t, const opts_t *o, size_t len)
{
    double v = NAN;
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->collective || e->me == 0) {
        long done, warm = o->warmup < o->iters ? o->warmup : o->iters;
        double busy;
        if (warm > 0)
            run_bounded(e, t, len, warm, o->time_s / 4, &done, &busy);
        run_bounded(e, t, len, o->iters, o->time_s, &done, &busy);
        double sec = busy / (double)done;
        double ops = t->window == 1 ? (double)driver_bw_ops(e->data_len, len)
                     : t->window == 2 ? (double)driver_rate_ops(e->data_len, len) : 1.0;
        v = t->metric == METRIC_LAT  ? sec * 1e6
            : t->metric == METRIC_BW ? ops * (double)len / sec / 1e6
                                     : ops / sec / 1e6;
    } else if (o->idle_s > 0) {
        usleep((useconds_t)(o->idle_s * 1e6)); /* shows which calls need the target's progress */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return v;
}

static void run_test(env_t *e, const test_t *t, const opts_t *o)
{
    size_t sizes[PERF_MAX_SIZES];
    int ns = driver_sweep(o, t->min_len, t->max_len, sizes);
    for (int i = 0; i < ns; i++) {
        size_t len = sizes[i];
        if (!driver_fits(t->group, len, e->data_len))
            continue;
        double v[DRIVER_MAX_REPS];
        for (int r = 0; r < o->reps; r++)
            v[r] = measure(e, t, o, len);
        if (e->me == 0)
            driver_print_median(t->name, len, t->metric, v, o->reps);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    opts_t o;
    env_t e = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &e.me);
    MPI_Comm_size(MPI_COMM_WORLD, &e.n);
    if (driver_parse_args(argc, argv, &o, "osu_rma") != 0 || e.n < 2) {
        if (e.me == 0)
            fprintf(stderr, "osu_rma: bad options, or fewer than 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    e.target = o.target < 0 || o.target >= e.n ? e.n - 1 : o.target;
    e.data_len = driver_data_len(&o);
    MPI_Win_allocate((MPI_Aint)(e.data_len + PERF_CTRL_BYTES), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                     &e.base, &e.win);
    memset(e.base, 0, e.data_len + PERF_CTRL_BYTES);
    e.local = malloc(e.data_len);
    for (size_t i = 0; i < e.data_len; i++)
        e.local[i] = (char)(i * 131u + 7u);
    MPI_Barrier(MPI_COMM_WORLD);
    if (e.me == 0) {
        const char *osc = getenv("OMPI_MCA_osc");
        printf("# osc: %s (Open MPI %d.%d), passive target, lock_all + flush\n",
               osc ? osc : "default", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION);
        printf("test,size,unit,mpi\n");
        MPI_Win_lock_all(MPI_MODE_NOCHECK, e.win);
    }
    for (int i = 0; i < NTESTS; i++)
        if (selected(&o, &tests[i]))
            run_test(&e, &tests[i], &o);
    if (e.me == 0)
        MPI_Win_unlock_all(e.win);
    if (e.col_k != 0)
        MPI_Type_free(&e.col);
    MPI_Win_free(&e.win);
    free(e.local);
    MPI_Finalize();
    return 0;
}
