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
#include "../perf.h"

#define MAX_REPS 101

typedef struct {
    const char *tests;
    size_t min_size, max_size;
    size_t sizes[PERF_MAX_SIZES];
    int nsizes;
    long iters, warmup;
    double time_s;
    int reps, target;
    double idle_s;          /* --idle-target: other PEs sleep this long, no SHMEM calls */
} opts_t;

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

/* perf.h's helpers take a perf_env_t; only data_len matters to them. */
static long bw_ops(const env_t *e, size_t len)
{
    perf_env_t pe = {.data_len = e->data_len};
    return perf_bw_ops(&pe, len);
}

static long rate_ops(const env_t *e, size_t len)
{
    perf_env_t pe = {.data_len = e->data_len};
    return perf_rate_ops(&pe, len);
}

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
    put_slots(e, len, n, bw_ops(e, len), perf_slot(len));
}

static void put_rate(env_t *e, size_t len, long n)
{
    put_slots(e, len, n, rate_ops(e, len), len);
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
    get_slots(e, len, n, bw_ops(e, len), perf_slot(len));
}

static void get_rate(env_t *e, size_t len, long n)
{
    get_slots(e, len, n, rate_ops(e, len), len);
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

#define MiB(x) ((size_t)(x) << 20)
#define KiB(x) ((size_t)(x) << 10)
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
    if (o->tests == NULL || strcmp(o->tests, "all") == 0)
        return 1;
    char buf[512], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", o->tests);
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save))
        if (strcmp(tok, "all") == 0 || strcmp(tok, t->name) == 0 || strcmp(tok, t->group) == 0)
            return 1;
    return 0;
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
        double ops = t->window == 1 ? (double)bw_ops(e, len)
                     : t->window == 2 ? (double)rate_ops(e, len) : 1.0;
        v = t->metric == METRIC_LAT  ? sec * 1e6
            : t->metric == METRIC_BW ? ops * (double)len / sec / 1e6
                                     : ops / sec / 1e6;
    } else if (o->idle_s > 0) {
        usleep((useconds_t)(o->idle_s * 1e6)); /* shows which calls need the target's progress */
    }
    shmem_barrier_all();
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *unit(perf_metric_t m)
{
    return m == METRIC_LAT ? "us" : m == METRIC_BW ? "MB/s" : "Mop/s";
}

/* Same sizes as rmx_perf: --sizes, else powers of two from --min to --max, clamped to the test. */
static int sweep(const test_t *t, const opts_t *o, size_t *out)
{
    if (t->min_len == t->max_len) {
        out[0] = t->min_len;
        return 1;
    }
    int n = 0;
    if (o->nsizes > 0) {
        for (int i = 0; i < o->nsizes; i++)
            if (o->sizes[i] >= t->min_len && o->sizes[i] <= t->max_len)
                out[n++] = o->sizes[i];
        return n;
    }
    size_t lo = o->min_size > t->min_len ? o->min_size : t->min_len;
    size_t hi = o->max_size < t->max_len ? o->max_size : t->max_len;
    for (size_t len = lo; len <= hi && n < PERF_MAX_SIZES; len *= 2)
        out[n++] = len;
    return n;
}

/* rmx_perf's sub_fits: the arrays are PERF_SUB_WIDTH times the section and must fit. */
static int fits(const env_t *e, const test_t *t, size_t len)
{
    if (strcmp(t->group, "sub") != 0)
        return 1;
    return len % sizeof(double) == 0 && len * PERF_SUB_WIDTH <= e->data_len;
}

static void run_test(env_t *e, const test_t *t, const opts_t *o)
{
    size_t sizes[PERF_MAX_SIZES];
    int ns = sweep(t, o, sizes);
    for (int i = 0; i < ns; i++) {
        size_t len = sizes[i];
        if (!fits(e, t, len))
            continue;
        double v[MAX_REPS];
        for (int r = 0; r < o->reps; r++)
            v[r] = measure(e, t, o, len);
        if (e->me == 0) {
            qsort(v, (size_t)o->reps, sizeof(double), cmp_double);
            double med = o->reps % 2 ? v[o->reps / 2] : (v[o->reps / 2 - 1] + v[o->reps / 2]) / 2;
            printf("%s,%zu,%s,%.6g\n", t->name, len, unit(t->metric), med);
            fflush(stdout);
        }
    }
}

/* ---------------------------------------------------------------- options */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    if (*end == 'B' || *end == 'b')
        end++;
    *out = (size_t)v;
    return *end == '\0' && v > 0 ? 0 : -1;
}

static int parse_sizes(const char *list, opts_t *o)
{
    char buf[512], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", list);
    o->nsizes = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (o->nsizes == PERF_MAX_SIZES || parse_size(tok, &o->sizes[o->nsizes]) != 0)
            return -1;
        size_t v = o->sizes[o->nsizes++];
        o->min_size = o->nsizes == 1 || v < o->min_size ? v : o->min_size;
        o->max_size = o->nsizes == 1 || v > o->max_size ? v : o->max_size;
    }
    return o->nsizes > 0 ? 0 : -1;
}

/* Options that take a value but concern only rmx_perf (output files, baseline, other columns). */
static int ignored_with_value(const char *a)
{
    static const char *const names[] = {"--baseline", "--plot", "--mpi", "--mpi-sm", "--shmem",
                                        "--ranks", "--merge"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(a, names[i]) == 0)
            return 1;
    return 0;
}

static int parse_args(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){.min_size = 1, .max_size = MiB(4), .iters = 1000000, .warmup = 1000,
                  .time_s = 0.02, .reps = 3, .target = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0, takes = 1;
        if (strcmp(a, "--test") == 0 || strcmp(a, "--tests") == 0)
            bad = v == NULL, o->tests = v;
        else if (strcmp(a, "--min") == 0)
            bad = v == NULL || parse_size(v, &o->min_size) != 0;
        else if (strcmp(a, "--max") == 0)
            bad = v == NULL || parse_size(v, &o->max_size) != 0;
        else if (strcmp(a, "--sizes") == 0)
            bad = v == NULL || parse_sizes(v, o) != 0;
        else if (strcmp(a, "--iters") == 0)
            bad = v == NULL || (o->iters = atol(v)) < 1;
        else if (strcmp(a, "--warmup") == 0)
            bad = v == NULL || (o->warmup = atol(v)) < 0;
        else if (strcmp(a, "--time") == 0)
            bad = v == NULL || (o->time_s = atof(v)) <= 0;
        else if (strcmp(a, "--reps") == 0)
            bad = v == NULL || (o->reps = atoi(v)) < 1 || o->reps > MAX_REPS;
        else if (strcmp(a, "--target") == 0)
            bad = v == NULL || (o->target = atoi(v)) < 1;
        else if (strcmp(a, "--idle-target") == 0)
            bad = v == NULL || (o->idle_s = atof(v)) < 0;
        else if (ignored_with_value(a))
            bad = v == NULL;
        else if (strcmp(a, "--csv") == 0 || strcmp(a, "--json") == 0 ||
                 strcmp(a, "--progress") == 0 || strcmp(a, "--quiet") == 0)
            takes = 0;
        else
            bad = 1;
        if (bad) {
            fprintf(stderr, "bench_shmem: bad or missing value for %s\n", a);
            return -1;
        }
        i += takes;
    }
    return o->min_size <= o->max_size ? 0 : -1;
}

/* Same formula as rmx_perf: PERF_SUB_WIDTH x the largest size, within 1 .. 64 MiB. */
static size_t data_len_for(const opts_t *o)
{
    size_t want = o->max_size * PERF_SUB_WIDTH;
    return want < MiB(1) ? MiB(1) : want > MiB(64) ? MiB(64) : want;
}

/* The symmetric window and the local buffer; 0 on every PE or -1 on every PE. */
static int env_open(env_t *e, const opts_t *o)
{
    e->me = shmem_my_pe();
    e->n = shmem_n_pes();
    e->target = o->target < 0 || o->target >= e->n ? e->n - 1 : o->target;
    e->data_len = data_len_for(o);
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
    if (parse_args(argc, argv, &o) != 0 || n < 2) {
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
