/*
 * driver.h — the driver shared by the benchmarks written on other runtimes (perf/mpi/osu_rma.c,
 * perf/shmem/bench_shmem.c): rmx_perf's options (those about rmx's own output and columns are
 * accepted and ignored, so compare.sh hands every program the same arguments), its size sweep,
 * the sections that fit, and the median of the repetitions as one CSV row, the format
 * rmx_perf --mpi / --mpi-sm / --shmem read.  What measures (timing, barriers, broadcasts) is each
 * runtime's own and stays in its program.  Header-only: each program is one translation unit
 * built by its runtime's compiler wrapper (mpicc, oshcc).
 */
#ifndef RMX_PERF_DRIVER_H
#define RMX_PERF_DRIVER_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perf.h"

#define DRIVER_MAX_REPS 101

typedef struct {
    const char *tests;
    size_t min_size, max_size;
    size_t sizes[PERF_MAX_SIZES];
    int nsizes;
    long iters, warmup;
    double time_s;
    int reps, target;
    double idle_s;          /* --idle-target: the other ranks sleep this long, no runtime calls */
} driver_opts_t;

/* The test is named by --test (its name, its group or "all"). */
static int driver_selected(const driver_opts_t *o, const char *name, const char *group)
{
    if (o->tests == NULL || strcmp(o->tests, "all") == 0)
        return 1;
    char buf[512], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", o->tests);
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save))
        if (strcmp(tok, "all") == 0 || strcmp(tok, name) == 0 || strcmp(tok, group) == 0)
            return 1;
    return 0;
}

/* Same sizes as rmx_perf: --sizes, else powers of two from --min to --max, clamped to the test's
 * [min_len, max_len]. */
static int driver_sweep(const driver_opts_t *o, size_t min_len, size_t max_len, size_t *out)
{
    if (min_len == max_len) {
        out[0] = min_len;
        return 1;
    }
    int n = 0;
    if (o->nsizes > 0) {
        for (int i = 0; i < o->nsizes; i++)
            if (o->sizes[i] >= min_len && o->sizes[i] <= max_len)
                out[n++] = o->sizes[i];
        return n;
    }
    size_t lo = o->min_size > min_len ? o->min_size : min_len;
    size_t hi = o->max_size < max_len ? o->max_size : max_len;
    for (size_t len = lo; len <= hi && n < PERF_MAX_SIZES; len *= 2)
        out[n++] = len;
    return n;
}

/* perf.h's window sizes for the bandwidth and rate tests; only data_len matters to them. */
static long driver_bw_ops(size_t data_len, size_t len)
{
    perf_env_t pe = {.data_len = data_len};
    return perf_bw_ops(&pe, len);
}

static long driver_rate_ops(size_t data_len, size_t len)
{
    perf_env_t pe = {.data_len = data_len};
    return perf_rate_ops(&pe, len);
}

/* rmx_perf's sub_fits: a section test's arrays are PERF_SUB_WIDTH times the section. */
static int driver_fits(const char *group, size_t len, size_t data_len)
{
    if (strcmp(group, "sub") != 0)
        return 1;
    return len % sizeof(double) == 0 && len * PERF_SUB_WIDTH <= data_len;
}

static int driver_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..reps) as one CSV row: test,size,unit,value. */
static void driver_print_median(const char *name, size_t len, perf_metric_t metric, double *v,
                                int reps)
{
    qsort(v, (size_t)reps, sizeof(double), driver_cmp_double);
    double med = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
    const char *unit = metric == METRIC_LAT ? "us" : metric == METRIC_BW ? "MB/s" : "Mop/s";
    printf("%s,%zu,%s,%.6g\n", name, len, unit, med);
    fflush(stdout);
}

/* "4096", "4K", "1M", with an optional B. */
static int driver_parse_size(const char *s, size_t *out)
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

static int driver_parse_sizes(const char *list, driver_opts_t *o)
{
    char buf[512], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", list);
    o->nsizes = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (o->nsizes == PERF_MAX_SIZES || driver_parse_size(tok, &o->sizes[o->nsizes]) != 0)
            return -1;
        size_t v = o->sizes[o->nsizes++];
        o->min_size = o->nsizes == 1 || v < o->min_size ? v : o->min_size;
        o->max_size = o->nsizes == 1 || v > o->max_size ? v : o->max_size;
    }
    return o->nsizes > 0 ? 0 : -1;
}

/* Options that take a value but concern only rmx_perf (output files, baseline, other columns). */
static int driver_ignored_with_value(const char *a)
{
    static const char *const names[] = {"--baseline", "--plot", "--mpi", "--mpi-sm", "--shmem",
                                        "--ranks", "--merge", "--output",
                                        "--format"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(a, names[i]) == 0)
            return 1;
    return 0;
}

/* rmx_perf's spellings (getopt_long there): "--opt=value" is "--opt value", and its short
 * options are their long names.  *inline_value: the value after '=', or NULL. */
static const char *driver_option_name(const char *a, char *buf, size_t n,
                                      const char **inline_value)
{
    static const char *const shorts[][2] = {{"-t", "--test"}, {"-s", "--sizes"},
                                            {"-r", "--reps"}, {"-o", "--output"}};
    *inline_value = NULL;
    for (size_t i = 0; i < sizeof(shorts) / sizeof(shorts[0]); i++)
        if (strcmp(a, shorts[i][0]) == 0)
            return shorts[i][1];
    const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
    if (eq == NULL || (size_t)(eq - a) >= n)
        return a;
    snprintf(buf, n, "%.*s", (int)(eq - a), a);
    *inline_value = eq + 1;
    return buf;
}

/* rmx_perf's options; -1 with a message naming the bad one. */
static int driver_parse_args(int argc, char **argv, driver_opts_t *o, const char *prog)
{
    *o = (driver_opts_t){.min_size = 1, .max_size = MiB(4), .iters = 1000000, .warmup = 1000,
                         .time_s = 0.02, .reps = 3, .target = -1};
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *iv, *a = driver_option_name(argv[i], name, sizeof(name), &iv);
        const char *v = iv != NULL ? iv : i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0, takes = iv == NULL;
        if (strcmp(a, "--test") == 0 || strcmp(a, "--tests") == 0)
            bad = v == NULL, o->tests = v;
        else if (strcmp(a, "--min") == 0)
            bad = v == NULL || driver_parse_size(v, &o->min_size) != 0;
        else if (strcmp(a, "--max") == 0)
            bad = v == NULL || driver_parse_size(v, &o->max_size) != 0;
        else if (strcmp(a, "--sizes") == 0)
            bad = v == NULL || driver_parse_sizes(v, o) != 0;
        else if (strcmp(a, "--iters") == 0)
            bad = v == NULL || (o->iters = atol(v)) < 1;
        else if (strcmp(a, "--warmup") == 0)
            bad = v == NULL || (o->warmup = atol(v)) < 0;
        else if (strcmp(a, "--time") == 0)
            bad = v == NULL || (o->time_s = atof(v)) <= 0;
        else if (strcmp(a, "--reps") == 0)
            bad = v == NULL || (o->reps = atoi(v)) < 1 || o->reps > DRIVER_MAX_REPS;
        else if (strcmp(a, "--target") == 0)
            bad = v == NULL || (o->target = atoi(v)) < 1;
        else if (strcmp(a, "--idle-target") == 0)
            bad = v == NULL || (o->idle_s = atof(v)) < 0;
        else if (driver_ignored_with_value(a))
            bad = v == NULL;
        else if ((strcmp(a, "--csv") == 0 || strcmp(a, "--json") == 0 ||
                  strcmp(a, "--progress") == 0 || strcmp(a, "--quiet") == 0) && iv == NULL)
            takes = 0;
        else
            bad = 1;
        if (bad) {
            fprintf(stderr, "%s: bad or missing value for %s\n", prog, a);
            return -1;
        }
        i += takes;
    }
    return o->min_size <= o->max_size ? 0 : -1;
}

/* Same formula as rmx_perf: PERF_SUB_WIDTH x the largest size, within 1 .. 64 MiB. */
static size_t driver_data_len(const driver_opts_t *o)
{
    size_t want = o->max_size * PERF_SUB_WIDTH;
    return want < MiB(1) ? MiB(1) : want > MiB(64) ? MiB(64) : want;
}

#endif
