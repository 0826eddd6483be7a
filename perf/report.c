/*
 * report.c — rmx_perf's output: the aligned table, CSV and JSON on stdout, and the reader of an
 * Open MPI result file (perf/mpi/osu_rma output) whose values join the rows by (test, size).
 *
 * A ratio is always rmx's value divided by the other column's, in the row's unit: for us
 * (latency) below 1 means rmx is faster, for MB/s and Mop/s above 1 means rmx is faster.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perf.h"

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
        snprintf(buf, n, "%.2f", a / b);
}

static void print_header_comments(const perf_run_t *run, const char *lead)
{
    printf("%srmx_perf: %d ranks, rank 0 -> rank %d, median of %d repetitions, load average %.2f\n",
           lead, run->ranks, run->target, run->reps, run->load1);
    if (run->transport[0] != '\0')
        printf("%sUCX lanes rank 0 -> %d: %s\n", lead, run->target, run->transport);
    if (run->have_mpi && run->mpi_note[0] != '\0')
        printf("%sOpen MPI: %s\n", lead, run->mpi_note);
}

void perf_print_table(const perf_run_t *run, const perf_opts_t *o)
{
    print_header_comments(run, "# ");
    printf("%-12s %8s %6s %10s", "test", "size", "unit", "rmx");
    if (o->baseline)
        printf(" %10s %8s", "ucp", "rmx/ucp");
    if (run->have_mpi)
        printf(" %10s %8s", "mpi", "rmx/mpi");
    printf("\n");
    const char *last = NULL;
    for (int i = 0; i < run->nrows; i++) {
        const perf_row_t *r = &run->rows[i];
        char sz[32], v[32], b[32], q[32];
        if (last != NULL && strcmp(last, r->test->group) != 0)
            printf("\n");
        last = r->test->group;
        perf_format_size(sz, sizeof(sz), r->size);
        format_value(v, sizeof(v), r->rmx);
        printf("%-12s %8s %6s %10s", r->test->name, sz, perf_unit(r->test->metric), v);
        if (o->baseline) {
            format_value(b, sizeof(b), r->ucp);
            format_ratio(q, sizeof(q), r->rmx, r->ucp);
            printf(" %10s %8s", b, q);
        }
        if (run->have_mpi) {
            format_value(b, sizeof(b), r->mpi);
            format_ratio(q, sizeof(q), r->rmx, r->mpi);
            printf(" %10s %8s", b, q);
        }
        printf("\n");
    }
    printf("# ratio = rmx value / other value: for us below 1 is rmx faster, "
           "for MB/s and Mop/s above 1 is rmx faster\n");
}

static void csv_value(double v)
{
    if (isnan(v))
        printf(",n/a");
    else
        printf(",%.6g", v);
}

static void csv_ratio(double a, double b)
{
    if (isnan(a) || isnan(b) || b <= 0)
        printf(",n/a");
    else
        printf(",%.4f", a / b);
}

void perf_print_csv(const perf_run_t *run, const perf_opts_t *o)
{
    print_header_comments(run, "# ");
    printf("test,size,unit,rmx");
    if (o->baseline)
        printf(",ucp,rmx_over_ucp");
    if (run->have_mpi)
        printf(",mpi,rmx_over_mpi");
    printf("\n");
    for (int i = 0; i < run->nrows; i++) {
        const perf_row_t *r = &run->rows[i];
        printf("%s,%zu,%s", r->test->name, r->size, perf_unit(r->test->metric));
        csv_value(r->rmx);
        if (o->baseline) {
            csv_value(r->ucp);
            csv_ratio(r->rmx, r->ucp);
        }
        if (run->have_mpi) {
            csv_value(r->mpi);
            csv_ratio(r->rmx, r->mpi);
        }
        printf("\n");
    }
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void json_number(const char *key, double v)
{
    printf(", \"%s\": ", key);
    if (isnan(v))
        printf("null");
    else
        printf("%.6g", v);
}

void perf_print_json(const perf_run_t *run, const perf_opts_t *o)
{
    printf("{\"ranks\": %d, \"target\": %d, \"reps\": %d, \"load1\": %.2f, \"transport\": ",
           run->ranks, run->target, run->reps, run->load1);
    json_string(run->transport);
    if (run->have_mpi) {
        printf(", \"mpi\": ");
        json_string(run->mpi_note);
    }
    printf(",\n \"rows\": [");
    for (int i = 0; i < run->nrows; i++) {
        const perf_row_t *r = &run->rows[i];
        printf("%s\n  {\"test\": \"%s\", \"size\": %zu, \"unit\": \"%s\"", i ? "," : "",
               r->test->name, r->size, perf_unit(r->test->metric));
        json_number("rmx", r->rmx);
        if (o->baseline) {
            json_number("ucp", r->ucp);
            json_number("rmx_over_ucp", r->ucp > 0 ? r->rmx / r->ucp : NAN);
        }
        if (run->have_mpi) {
            json_number("mpi", r->mpi);
            json_number("rmx_over_mpi", r->mpi > 0 ? r->rmx / r->mpi : NAN);
        }
        printf("}");
    }
    printf("\n]}\n");
}

/* Lines "test,size,unit,value" (a header line and "# ..." comments allowed; "# osc: X" is kept
 * as the note shown with the results). */
int perf_read_mpi(perf_run_t *run, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[512];
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#') {
            const char *note = strstr(line, "osc:");
            if (note != NULL)
                snprintf(run->mpi_note, sizeof(run->mpi_note), "%s", note);
            continue;
        }
        char test[64], unit[16], value[64];
        size_t size;
        if (sscanf(line, "%63[^,],%zu,%15[^,],%63s", test, &size, unit, value) != 4)
            continue;
        char *end;
        double v = strtod(value, &end);
        if (end == value)
            v = NAN;
        for (int i = 0; i < run->nrows; i++)
            if (run->rows[i].size == size && strcmp(run->rows[i].test->name, test) == 0)
                run->rows[i].mpi = v;
    }
    fclose(f);
    run->have_mpi = 1;
    return 0;
}
