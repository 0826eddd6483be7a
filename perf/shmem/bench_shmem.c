/*
 * bench_shmem.c — the OpenSHMEM column of perf/compare.sh: rmx_perf's tests written on
 * OpenSHMEM 1.4 (Open MPI's oshmem, spml ucx), built with oshcc and run with oshrun under the
 * same placement as rmx_perf.  The geometry (slots, windows of operations, array shapes,
 * data-area size, the control words) comes from ../perf.h, so every row moves exactly the bytes
 * rmx_perf's row moves, with the same completion:
 *   put    shmem_putmem ... shmem_quiet           (complete at the target, like rmx_sync_memory)
 *   get    shmem_getmem                           (blocking, like rmx_get)
 *   atomic shmem_long_atomic_fetch_add / _swap / _compare_swap on one long (old value returned)
 *   max    no OpenSHMEM atomic: fetch + compare_swap loop, as bench_ucp.c writes it
 *   column shmem_long_iput / shmem_long_iget: k elements of 8 B, PERF_SUB_WIDTH elements apart
 *          (the column of a k x PERF_SUB_WIDTH double array at element (0, 1), both sides)
 *   row    shmem_putmem / shmem_getmem of the contiguous row at element (1, 0)
 *   sync   shmem_barrier_all
 * The window is the symmetric heap (shmem_malloc of the data area plus PERF_CTRL_BYTES); the
 * local buffer is private malloc'd memory, as rmx_perf's is.
 * Output: "test,size,unit,shmem" lines (value: median of --reps), read by rmx_perf --shmem.
 * Options: rmx_perf's; the ones about output or the UCP baseline are accepted and ignored so
 * compare.sh can hand every program the same arguments.
 * It lives in perf/shmem/ so rmx_perf does not link it.
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../driver.h"

typedef driver_opts_t opts_t;

typedef struct {
    char *base;             /* symmetric: data area + PERF_CTRL_BYTES */
    char *local;            /* private source / destination of data_len bytes */
    size_t data_len;
    int me, n, target;
    long cas_expect, max_next;
    unsigned share_seq;     /* share_more calls so far (alternating slots) */
} env_t;

typedef void (*body_t)(env_t *e, size_t len, long n);

typedef struct {
    const char *name, *group;
    perf_metric_t metric;
    size_t min_len, max_len;
    int collective;
    int window;             /* 0: one op per iteration, 1: PERF_BW_WINDOW slots, 2: rate window */
    body_t body;
} test_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- put / get */
static void put_lat(env_t *e, size_t len, long n)
{
    for (long i = 0; i < n; i++) {
        shmem_putmem(e->base, e->local, len, e->target);
        shmem_quiet();
    }
}

static void put_slots(env_t *e, size_t len, long n, long w, size_t step)
{
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < w; j++)
            shmem_putmem(e->base + (size_t)j * step, e->local + (size_t)j * step, len, e->target);
        shmem_quiet();
    }
}

static void put_bw(env_t *e, size_t len, long n)
{
    put_slots(e, len, n, driver_bw_ops(e->data_len, len), perf_slot(len));
}

static void put_rate(env_t *e, size_t len, long n)
{
    put_slots(e, len, n, driver_rate_ops(e->data_len, len), len);
}

static void get_lat(env_t *e, size_t len, long n)
{
    for (long i = 0; i < n; i++)
        shmem_getmem(e->local, e->base, len, e->target);
}

static void get_slots(env_t *e, size_t len, long n, long w, size_t step)
{
    for (long i = 0; i < n; i++)
        for (long j = 0; j < w; j++)
            shmem_getmem(e->local + (size_t)j * step, e->base + (size_t)j * step, len, e->target);
}

static void get_bw(env_t *e, size_t len, long n)
{
    get_slots(e, len, n, driver_bw_ops(e->data_len, len), perf_slot(len));
}

static void get_rate(env_t *e, size_t len, long n)
{
    get_slots(e, len, n, driver_rate_ops(e->data_len, len), len);
}

/* ---------------------------------------------------------------- atomics */
/* The four int64 words of the control area (long is 64 bits on every LP64 target). */
static long *rmw_word(const env_t *e, int word)
{
    return (long *)(void *)(e->base + e->data_len + PERF_CTRL_RMW + (size_t)word * sizeof(long));
}

static void fetch_add(env_t *e, size_t len, long n)
{
    (void)len;
    long *w = rmw_word(e, 0);
    for (long i = 0; i < n; i++)
        (void)shmem_long_atomic_fetch_add(w, 1, e->target);
}

static void swap(env_t *e, size_t len, long n)
{
    (void)len;
    long *w = rmw_word(e, 1);
    for (long i = 0; i < n; i++)
        (void)shmem_long_atomic_swap(w, i, e->target);
}

/* Every compare-swap succeeds: the origin is the only writer and knows the current value. */
static void cswap(env_t *e, size_t len, long n)
{
    (void)len;
    long *w = rmw_word(e, 2);
    for (long i = 0; i < n; i++) {
        long cmp = e->cas_expect, next = cmp + 1;
        long old = shmem_long_atomic_compare_swap(w, cmp, next, e->target);
        e->cas_expect = old == cmp ? next : old;
    }
}

/* OpenSHMEM has no fetching MAX: fetch the word, then compare-swap until it sticks. */
static void max_op(env_t *e, size_t len, long n)
{
    (void)len;
    long *w = rmw_word(e, 3);
    for (long i = 0; i < n; i++) {
        long v = ++e->max_next, cur = shmem_long_atomic_fetch(w, e->target);
        while (cur < v) {
            long old = shmem_long_atomic_compare_swap(w, cur, v, e->target);
            if (old == cur)
                break;
            cur = old;
        }
    }
}

/* ---------------------------------------------------------------- subarrays */
/* The column of a k x PERF_SUB_WIDTH double array: k 8-byte elements from element (0, 1), the
 * stride PERF_SUB_WIDTH elements on both sides (shmem_long_iput moves 8-byte elements, the same
 * bytes as doubles). */
static long *col_at(char *array)
{
    return (long *)(void *)(array + perf_col_offset(0));
}

static void put_col(env_t *e, size_t len, long n)
{
    size_t k = perf_sub_elems(len);
    for (long i = 0; i < n; i++) {
        shmem_long_iput(col_at(e->base), col_at(e->local), PERF_SUB_WIDTH, PERF_SUB_WIDTH, k,
                        e->target);
        shmem_quiet();
    }
}

static void get_col(env_t *e, size_t len, long n)
{
    size_t k = perf_sub_elems(len);
    for (long i = 0; i < n; i++)
        shmem_long_iget(col_at(e->local), col_at(e->base), PERF_SUB_WIDTH, PERF_SUB_WIDTH, k,
                        e->target);
}

/* The row of a PERF_SUB_WIDTH x k array: one contiguous run of len bytes at element (1, 0). */
static void put_row(env_t *e, size_t len, long n)
{
    size_t off = perf_row_offset(perf_sub_elems(len));
    for (long i = 0; i < n; i++) {
        shmem_putmem(e->base + off, e->local + off, len, e->target);
        shmem_quiet();
    }
}

static void get_row(env_t *e, size_t len, long n)
{
    size_t off = perf_row_offset(perf_sub_elems(len));
    for (long i = 0; i < n; i++)
        shmem_getmem(e->local + off, e->base + off, len, e->target);
}

/* ---------------------------------------------------------------- synchronization */
static void barrier(env_t *e, size_t len, long n)
{
    (void)e;
    (void)len;
    for (long i = 0; i < n; i++)
        shmem_barrier_all();
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
};
#define NTESTS ((int)(sizeof(tests) / sizeof(tests[0])))

/* ---------------------------------------------------------------- measurement */
static int selected(const opts_t *o, const test_t *t)
{
    return driver_selected(o, t->name, t->group);
}

/* PE 0's decision reaches every PE: put into each PE's share slot, then a barrier (which
 * completes the puts).  The two slots alternate so a fast PE 0 cannot overwrite a value a slow
 * PE has not read yet. */
static int share_more(env_t *e, int more)
{
    size_t disp = e->data_len + PERF_CTRL_SHARE + (e->share_seq++ & 1) * sizeof(int);
    int *slot = (int *)(void *)(e->base + disp);
    if (e->me == 0)
        for (int pe = 1; pe < e->n; pe++)
            shmem_putmem(slot, &more, sizeof(more), pe);
    shmem_barrier_all();
    return e->me == 0 ? more : *(volatile int *)slot;
}

/* Doubling batches until max_iters or max_s of timed work; PE 0 decides for collectives. */
static void run_bounded(env_t *e, const test_t *t, size_t len, long max_iters, double max_s,
                        long *done, double *busy)
{
    long batch = 1, cap = max_iters / 16 > 0 ? max_iters / 16 : 1;
    *done = 0;
    *busy = 0;
    while (*done < max_iters) {
        long n = batch < max_iters - *done ? batch : max_iters - *done;
        double t0 = now_s();
        t->body(e, len, n);
        *busy += now_s() - t0;
        *done += n;
        int more = *done < max_iters && *busy < max_s;
        if (t->collective)
            more = share_more(e, more);
        if (!more)
            break;
        if (batch < cap)
            batch *= 2;
    }
}

static double measure(env_t *e, const test_t *t, const opts_t *o, size_t len)
{
    double v = NAN;
    shmem_barrier_all();
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
    shmem_barrier_all();
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

/* The symmetric window and the local buffer; 0 on every PE or -1 on every PE. */
static int env_open(env_t *e, const opts_t *o)
{
    e->me = shmem_my_pe();
    e->n = shmem_n_pes();
    e->target = o->target < 0 || o->target >= e->n ? e->n - 1 : o->target;
    e->data_len = driver_data_len(o);
    e->base = shmem_malloc(e->data_len + PERF_CTRL_BYTES); /* collective */
    e->local = malloc(e->data_len);
    static int ok[2];   /* symmetric: every PE's verdict reaches PE 0 through a reduction */
    static long psync[SHMEM_REDUCE_SYNC_SIZE];
    static int pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    ok[0] = e->base != NULL && e->local != NULL;
    shmem_barrier_all();
    shmem_int_and_to_all(&ok[1], &ok[0], 1, 0, 0, e->n, pwrk, psync);
    if (!ok[1])
        return -1;
    memset(e->base, 0, e->data_len + PERF_CTRL_BYTES);
    for (size_t i = 0; i < e->data_len; i++)
        e->local[i] = (char)(i * 131u + 7u);
    shmem_barrier_all();
    return 0;
}

int main(int argc, char **argv)
{
    shmem_init();
    opts_t o;
    env_t e = {0};
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (driver_parse_args(argc, argv, &o, "bench_shmem") != 0 || n < 2) {
        if (me == 0)
            fprintf(stderr, "bench_shmem: bad options, or fewer than 2 PEs\n");
        shmem_finalize();
        return 2;
    }
    if (env_open(&e, &o) != 0) {
        if (me == 0)
            fprintf(stderr, "bench_shmem: cannot allocate %zu bytes of symmetric heap "
                            "(SHMEM_SYMMETRIC_HEAP_SIZE)\n", e.data_len + PERF_CTRL_BYTES);
        shmem_finalize();
        return 1;
    }
    if (me == 0) {
        const char *spml = getenv("OMPI_MCA_spml");
        int major, minor;
        shmem_info_get_version(&major, &minor);
        printf("# shmem: spml %s (Open MPI %d.%d oshmem, OpenSHMEM %d.%d), put+quiet, "
               "blocking get, fetching atomics, iput/iget columns\n",
               spml ? spml : "default", OSHMEM_MAJOR_VERSION, OSHMEM_MINOR_VERSION, major, minor);
        printf("test,size,unit,shmem\n");
        fflush(stdout);
    }
    for (int i = 0; i < NTESTS; i++)
        if (selected(&o, &tests[i]))
            run_test(&e, &tests[i], &o);
    shmem_barrier_all();
    shmem_free(e.base);
    free(e.local);
    shmem_finalize();
    return 0;
}
