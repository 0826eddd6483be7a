/*
 * report.c — rmx_perf's output: the aligned table, CSV and JSON on stdout, and the reader of the
 * other programs' result files (perf/mpi/osu_rma under osc ucx and osc sm, perf/shmem/bench_shmem)
 * whose values join the rows by (test, size), each as its own column.
 *
 * A ratio is always rmx's value divided by the other column's, in the row's unit: for us
 * (latency) below 1 means rmx is faster, for MB/s and Mop/s above 1 means rmx is faster.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perf.h"

const perf_ext_info_t perf_ext[PERF_NEXT] = {
    [PERF_EXT_MPI] = {"--mpi", "mpi", "rmx/mpi", "Open MPI"},
    [PERF_EXT_MPI_SM] = {"--mpi-sm", "mpi_sm", "rmx/sm", "Open MPI osc/sm"},
    [PERF_EXT_SHMEM] = {"--shmem", "shmem", "rmx/shmem", "OpenSHMEM"},
};

const char *perf_unit(perf_metric_t m)
{
    switch (m) {
    case METRIC_LAT: return "us";
    case METRIC_BW: return "MB/s";
    case METRIC_RATE: return "Mop/s";
    }
    return "?";
}

void perf_format_size(char *buf, size_t n, size_t bytes)
{
    if (bytes == 0)
        snprintf(buf, n, "-");
    else if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0)
        snprintf(buf, n, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, n, "%zu KiB", bytes >> 10);
    else
        snprintf(buf, n, "%zu B", bytes);
}

static void format_value(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else if (v < 0.01) /* two digits still, not 0.000 */
        snprintf(buf, n, "%.2g", v);
    else if (v < 10)
        snprintf(buf, n, "%.3f", v);
    else if (v < 1000)
        snprintf(buf, n, "%.2f", v);
    else
        snprintf(buf, n, "%.0f", v);
}

static void format_ratio(char *buf, size_t n, double a, double b)
{
    if (isnan(a) || isnan(b) || b <= 0)
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, a / b < 0.1 || a / b >= 1000 ? "%.2g" : "%.2f", a / b); /* fits the column */
}

static void print_header_comments(FILE *f, const perf_run_t *run, const char *lead)
{
    fprintf(f, "%srmx_perf: %d ranks, rank 0 -> rank %d, median of %d repetitions, "
            "load average %.2f\n", lead, run->ranks, run->target, run->reps, run->load1);
    if (run->nfiles > 1)
        fprintf(f, "%smerged: median of %d runs, load average "
                "%.2f .. %.2f\n", lead, run->nfiles, run->load1, run->load_max);
    if (run->transport[0] != '\0')
        fprintf(f, "%sUCX lanes rank 0 -> %d: %s\n", lead, run->target, run->transport);
    for (int x = 0; x < PERF_NEXT; x++)
        if (run->have_ext[x] && run->ext_note[x][0] != '\0')
            fprintf(f, "%s%s: %s\n", lead, perf_ext[x].label, run->ext_note[x]);
    if (run->have_agent && !run->agent_running)
        fprintf(f, "%sprogress agent of rank %d: not running\n", lead, run->target);
    else if (run->have_agent)
        fprintf(f, "%sprogress agent of rank %d: serving while the rank was away %.3f ms CPU in "
                "%.2f s (%.2f%%, %.0f wakeups); with no request %.3f ms CPU in %.2f s (%.3f%%)\n",
                lead, run->target, run->agent_cpu_s * 1e3, run->idle_s,
                run->idle_s > 0 ? 100 * run->agent_cpu_s / run->idle_s : 0.0, run->agent_wakeups,
                run->quiet_cpu_s * 1e3, run->quiet_s,
                run->quiet_s > 0 ? 100 * run->quiet_cpu_s / run->quiet_s : 0.0);
    if (run->note[0] != '\0')
        fprintf(f, "%s%s\n", lead, run->note);
}

void perf_print_table(FILE *f, const perf_run_t *run, const perf_opts_t *o)
{
    print_header_comments(f, run, "# ");
    fprintf(f, "%-12s %8s %6s %10s", "test", "size", "unit", "rmx");
    if (o->baseline)
        fprintf(f, " %10s %8s", "ucp", "rmx/ucp");
    for (int x = 0; x < PERF_NEXT; x++)
        if (run->have_ext[x])
            fprintf(f, " %10s %9s", perf_ext[x].key, perf_ext[x].ratio);
    fprintf(f, "\n");
    const char *last = NULL;
    for (int i = 0; i < run->nrows; i++) {
        const perf_row_t *r = &run->rows[i];
        char sz[32], v[32], b[32], q[32];
        if (last != NULL && strcmp(last, r->test->group) != 0)
            fprintf(f, "\n");
        last = r->test->group;
        perf_format_size(sz, sizeof(sz), r->size);
        format_value(v, sizeof(v), r->rmx);
        fprintf(f, "%-12s %8s %6s %10s", r->test->name, sz, perf_unit(r->test->metric), v);
        if (o->baseline) {
            format_value(b, sizeof(b), r->ucp);
            format_ratio(q, sizeof(q), r->rmx, r->ucp);
            fprintf(f, " %10s %8s", b, q);
        }
        for (int x = 0; x < PERF_NEXT; x++)
            if (run->have_ext[x]) {
                format_value(b, sizeof(b), r->ext[x]);
                format_ratio(q, sizeof(q), r->rmx, r->ext[x]);
                fprintf(f, " %10s %9s", b, q);
            }
        fprintf(f, "\n");
    }
    fprintf(f, "# ratio = rmx value / other value: for us below 1 is rmx faster, "
            "for MB/s and Mop/s above 1 is rmx faster\n");
}

static void csv_value(FILE *f, double v)
{
    if (isnan(v))
        fprintf(f, ",n/a");
    else
        fprintf(f, ",%.6g", v);
}

static void csv_ratio(FILE *f, double a, double b)
{
    if (isnan(a) || isnan(b) || b <= 0)
        fprintf(f, ",n/a");
    else if (a / b >= 0.001)
        fprintf(f, ",%.4f", a / b);
    else /* a waiting target's atomics against CPU atomics: 3.9e-07, not 0.0000 */
        fprintf(f, ",%.3g", a / b);
}

void perf_print_csv(FILE *f, const perf_run_t *run, const perf_opts_t *o)
{
    print_header_comments(f, run, "# ");
    fprintf(f, "test,size,unit,rmx");
    if (o->baseline)
        fprintf(f, ",ucp,rmx_over_ucp");
    for (int x = 0; x < PERF_NEXT; x++)
        if (run->have_ext[x])
            fprintf(f, ",%s,rmx_over_%s", perf_ext[x].key, perf_ext[x].key);
    fprintf(f, "\n");
    for (int i = 0; i < run->nrows; i++) {
        const perf_row_t *r = &run->rows[i];
        fprintf(f, "%s,%zu,%s", r->test->name, r->size, perf_unit(r->test->metric));
        csv_value(f, r->rmx);
        if (o->baseline) {
            csv_value(f, r->ucp);
            csv_ratio(f, r->rmx, r->ucp);
        }
        for (int x = 0; x < PERF_NEXT; x++)
            if (run->have_ext[x]) {
                csv_value(f, r->ext[x]);
                csv_ratio(f, r->rmx, r->ext[x]);
            }
        fprintf(f, "\n");
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, const char *key, double v)
{
    fprintf(f, ", \"%s\": ", key);
    if (isnan(v))
        fprintf(f, "null");
    else
        fprintf(f, "%.6g", v);
}

void perf_print_json(FILE *f, const perf_run_t *run, const perf_opts_t *o)
{
    fprintf(f, "{\"ranks\": %d, \"target\": %d, \"reps\": %d, \"load1\": %.2f, \"transport\": ",
            run->ranks, run->target, run->reps, run->load1);
    json_string(f, run->transport);
    if (run->nfiles > 1) /* as the table's "merged" line */
        fprintf(f, ", \"merged\": %d, \"load_max\": %.2f", run->nfiles, run->load_max);
    if (run->note[0] != '\0') {
        fprintf(f, ", \"interrupted\": ");
        json_string(f, run->note);
    }
    for (int x = 0; x < PERF_NEXT; x++)
        if (run->have_ext[x]) {
            fprintf(f, ", \"%s\": ", perf_ext[x].key);
            json_string(f, run->ext_note[x]);
        }
    fprintf(f, ",\n \"rows\": [");
    for (int i = 0; i < run->nrows; i++) {
        const perf_row_t *r = &run->rows[i];
        fprintf(f, "%s\n  {\"test\": \"%s\", \"size\": %zu, \"unit\": \"%s\"", i ? "," : "",
                r->test->name, r->size, perf_unit(r->test->metric));
        json_number(f, "rmx", r->rmx);
        if (o->baseline) {
            json_number(f, "ucp", r->ucp);
            json_number(f, "rmx_over_ucp", r->ucp > 0 ? r->rmx / r->ucp : NAN);
        }
        for (int x = 0; x < PERF_NEXT; x++)
            if (run->have_ext[x]) {
                char key[48];
                json_number(f, perf_ext[x].key, r->ext[x]);
                snprintf(key, sizeof(key), "rmx_over_%s", perf_ext[x].key);
                json_number(f, key, r->ext[x] > 0 ? r->rmx / r->ext[x] : NAN);
            }
        fprintf(f, "}");
    }
    fprintf(f, "\n]}\n");
}

/* Writes and closes f; -1 with a message naming path when any write failed (a full disk shows
 * only at fflush or fclose). */
static int finish_file(FILE *f, const char *path)
{
    int bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad)
        fprintf(stderr, "rmx_perf: cannot write %s: %s\n", path, strerror(errno));
    return bad ? -1 : 0;
}

int perf_report(const perf_run_t *run, const perf_opts_t *o)
{
    int rc = 0;
    if (o->json)
        perf_print_json(stdout, run, o);
    else if (o->csv)
        perf_print_csv(stdout, run, o);
    else
        perf_print_table(stdout, run, o);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "rmx_perf: cannot write standard output: %s\n", strerror(errno));
        rc = -1;
    }
    if (o->output_f != NULL) {
        if (o->out_format == PERF_FMT_JSON)
            perf_print_json(o->output_f, run, o);
        else
            perf_print_csv(o->output_f, run, o);
        rc |= finish_file(o->output_f, o->output);
    }
    if (o->plot_f != NULL) {
        (void)perf_plot_svg(run, o->plot_f);
        rc |= finish_file(o->plot_f, o->plot);
    }
    return rc;
}

/* ---------------------------------------------------------------- reading result files */
/* One data line of a result file: "test,size,unit,a[,b,...]" (rmx_perf --csv: a = rmx, b = ucp;
 * osu_rma, bench_shmem: a = their value).  "n/a" reads as NAN. */
typedef struct {
    char test[32];
    size_t size;
    double a, b;
} entry_t;

typedef struct {
    entry_t *e;
    int n, cap;
} entries_t;

/* A measured value: "n/a" (NAN), or a positive finite number; -1 for anything else. */
static double parse_value(const char *s)
{
    if (strcmp(s, "n/a") == 0)
        return NAN;
    char *end;
    double v = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(v) && v > 0 ? v : -1;
}

static int entries_add(entries_t *es, const entry_t *e)
{
    if (es->n == es->cap) {
        int cap = es->cap ? es->cap * 2 : 128;
        entry_t *p = realloc(es->e, (size_t)cap * sizeof(*p));
        if (p == NULL)
            return -1;
        es->e = p;
        es->cap = cap;
    }
    es->e[es->n++] = *e;
    return 0;
}

/* Header comments fill run (ranks, target, repetitions, load, lanes); in another program's file
 * (ext >= 0) its "# osc: ..." or "# shmem: ..." line is that column's note. */
static void read_comment(perf_run_t *run, int ext, const char *line)
{
    int ranks, target, reps;
    double load;
    const char *p;
    if (sscanf(line, "# rmx_perf: %d ranks, rank 0 -> rank %d, median of %d repetitions, "
                     "load average %lf", &ranks, &target, &reps, &load) == 4) {
        run->ranks = ranks;
        run->target = target;
        run->reps = reps;
        if (run->nfiles == 0 || load < run->load1)
            run->load1 = load;
        if (run->nfiles == 0 || load > run->load_max)
            run->load_max = load;
    } else if ((p = strstr(line, "UCX lanes rank 0 -> ")) != NULL && (p = strchr(p, ':')) != NULL)
        snprintf(run->transport, sizeof(run->transport), "%s", p + 2);
    else if (ext >= 0 &&
             ((p = strstr(line, "osc:")) != NULL || (p = strstr(line, "shmem:")) != NULL))
        snprintf(run->ext_note[ext], sizeof(run->ext_note[ext]), "%s", p);
}

/* The test of a row, when the row is one rmx_perf could have written: a test it has, in that
 * test's unit, at a size the test runs at. */
static const perf_test_t *test_named(const char *name)
{
    for (int i = 0; i < perf_ntests; i++)
        if (strcmp(perf_tests[i].name, name) == 0)
            return &perf_tests[i];
    return NULL;
}

static const perf_test_t *row_test(const entry_t *e, const char *unit)
{
    const perf_test_t *t = test_named(e->test);
    return t != NULL && strcmp(unit, perf_unit(t->metric)) == 0 && e->size >= t->min_len &&
                   e->size <= t->max_len
               ? t
               : NULL;
}

/* One result file into es, every line checked: ext >= 0 another program's (its column header
 * "test,size,unit,mpi" or "...,shmem"), -1 an rmx_perf --csv output (--merge: "...,rmx", and
 * its "# rmx_perf:" line).  0, or -1 with why in err ("FILE:LINE: ..."). */
static int read_entries(perf_run_t *run, int ext, const char *path, entries_t *es, char *err,
                        size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    const char *key = ext < 0 ? "rmx" : ext == PERF_EXT_SHMEM ? "shmem" : "mpi";
    char want[32], line[512];
    int wl = snprintf(want, sizeof(want), "test,size,unit,%s", key);
    int rc = 0, lineno = 0, header = 0, rmx_line = 0;
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#') {
            rmx_line |= strncmp(line, "# rmx_perf: ", 12) == 0;
            if ((ext == PERF_EXT_MPI && strstr(line, "osc: sm") != NULL) ||
                (ext == PERF_EXT_MPI_SM && strstr(line, "osc: ucx") != NULL)) {
                snprintf(err, errlen, "%s:%d: Open MPI's results under osc %s: that is %s's "
                         "file", path, lineno, ext == PERF_EXT_MPI ? "sm" : "ucx",
                         ext == PERF_EXT_MPI ? "--mpi-sm" : "--mpi");
                rc = -1;
            }
            read_comment(run, ext, line);
            continue;
        }
        if (!header) {
            if (strncmp(line, want, (size_t)wl) != 0 || (line[wl] != '\0' && line[wl] != ',')) {
                snprintf(err, errlen, "%s:%d: not %s's results: the column header should begin "
                         "'%s'", path, lineno, ext < 0 ? "rmx_perf --csv" : perf_ext[ext].label,
                         want);
                rc = -1;
            }
            header = 1;
            continue;
        }
        entry_t e = {.a = NAN, .b = NAN};
        char unit[16], a[32] = "", b[32] = "";
        int got = sscanf(line, "%31[^,],%zu,%15[^,],%31[^,],%31[^,]", e.test, &e.size, unit, a, b);
        if (got >= 4) {
            e.a = parse_value(a);
            if (got == 5)
                e.b = parse_value(b);
        }
        if (got < 4 || row_test(&e, unit) == NULL || e.a < 0 || e.b < 0) {
            snprintf(err, errlen, "%s:%d: not a row rmx_perf writes (test,size,unit,value: a "
                     "test of rmx_perf --list, in its unit, at a size it runs at, a positive "
                     "value or n/a): '%.60s'", path, lineno, line);
            rc = -1;
        } else if (entries_add(es, &e) != 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -1;
        }
    }
    fclose(f);
    if (rc == 0 && es->n == 0)
        snprintf(err, errlen, "%s: no results in it", path), rc = -1;
    if (rc == 0 && ext < 0 && !rmx_line)
        snprintf(err, errlen, "%s: no '# rmx_perf:' line: not an rmx_perf --csv output", path),
            rc = -1;
    return rc;
}

static double median_of(double *v, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[m++] = v[i];
    if (m == 0)
        return NAN;
    for (int i = 1; i < m; i++) /* insertion sort: a handful of values */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

/* The median over the files of column a (or b) for (test, size). */
static double median_across(entries_t *files, int nfiles, const char *test, size_t size, int col_b)
{
    double v[PERF_MAX_FILES];
    int n = 0;
    for (int f = 0; f < nfiles; f++)
        for (int i = 0; i < files[f].n; i++) {
            const entry_t *e = &files[f].e[i];
            if (e->size == size && strcmp(e->test, test) == 0) {
                v[n++] = col_b ? e->b : e->a;
                break;
            }
        }
    return median_of(v, n);
}

static void free_entries(entries_t *files, int n)
{
    for (int f = 0; f < n; f++)
        free(files[f].e);
}

int perf_read_ext(perf_run_t *run, perf_ext_t which, const char *const *paths, int n, char *err,
                  size_t errlen)
{
    entries_t files[PERF_MAX_FILES] = {{0}};
    int rc = 0;
    for (int f = 0; f < n && rc == 0; f++)
        rc = read_entries(run, (int)which, paths[f], &files[f], err, errlen);
    if (rc == 0) {
        for (int i = 0; i < run->nrows; i++)
            run->rows[i].ext[which] =
                median_across(files, n, run->rows[i].test->name, run->rows[i].size, 0);
        run->have_ext[which] = 1;
    }
    free_entries(files, n);
    return rc;
}

static int row_index(const perf_run_t *run, const perf_test_t *t, size_t size)
{
    for (int i = 0; i < run->nrows; i++)
        if (run->rows[i].test == t && run->rows[i].size == size)
            return i;
    return -1;
}

/* A normal run's order: the test table's, then size. */
static int row_order(const void *x, const void *y)
{
    const perf_row_t *a = x, *b = y;
    if (a->test != b->test)
        return a->test < b->test ? -1 : 1;
    return (a->size > b->size) - (a->size < b->size);
}

int perf_merge_runs(perf_run_t *run, const char *const *paths, int n, char *err, size_t errlen)
{
    entries_t files[PERF_MAX_FILES] = {{0}};
    int rc = 0, ranks = 0, target = 0, reps = 0;
    for (int f = 0; f < n && rc == 0; f++) {
        rc = read_entries(run, -1, paths[f], &files[f], err, errlen);
        if (rc == 0 && f > 0 && (run->ranks != ranks || run->target != target ||
                                 run->reps != reps)) {
            snprintf(err, errlen, "%s is a run of %d ranks, rank 0 -> rank %d, %d repetitions; "
                     "%s of %d, rank 0 -> rank %d, %d: merge runs made alike", paths[f],
                     run->ranks, run->target, run->reps, paths[0], ranks, target, reps);
            rc = -1;
        }
        ranks = run->ranks, target = run->target, reps = run->reps;
        run->nfiles++;
    }
    /* Every row of any file (a row missing from some is the median of the others). */
    for (int f = 0; rc == 0 && f < n; f++)
        for (int i = 0; rc == 0 && i < files[f].n; i++) {
            const entry_t *e = &files[f].e[i];
            const perf_test_t *t = test_named(e->test);
            if (row_index(run, t, e->size) >= 0)
                continue;
            if (run->nrows == run->cap) {
                int cap = run->cap ? run->cap * 2 : 64;
                perf_row_t *rows = realloc(run->rows, (size_t)cap * sizeof(*rows));
                if (rows == NULL) {
                    snprintf(err, errlen, "out of memory");
                    rc = -1;
                    break;
                }
                run->rows = rows;
                run->cap = cap;
            }
            perf_row_t *r = &run->rows[run->nrows++];
            *r = (perf_row_t){
                .test = t, .size = e->size,
                .rmx = median_across(files, n, e->test, e->size, 0),
                .ucp = median_across(files, n, e->test, e->size, 1),
            };
            for (int x = 0; x < PERF_NEXT; x++)
                r->ext[x] = NAN;
        }
    if (rc == 0 && run->nrows > 1)
        qsort(run->rows, (size_t)run->nrows, sizeof(*run->rows), row_order);
    free_entries(files, n);
    return rc;
}
