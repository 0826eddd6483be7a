/*
 * plot.c — --plot FILE.svg: one panel per swept test (value vs message size, both axes log),
 * rmx, raw UCP and (when given) Open MPI (osc ucx, osc sm) and OpenSHMEM as lines on the same
 * panel, with a legend under the axes and labelled axes.  Hand-written SVG: no plotting library
 * to install, and any browser shows it.
 */
#include <stdio.h>
#include <string.h>
#include "perf.h"

#define PANEL_W 500
#define PANEL_H 350
#define COLS 2
#define M_LEFT 72
#define M_RIGHT 18
#define M_TOP 44
#define M_BOTTOM 72

typedef struct {
    const char *name, *color, *dash, *marker;
} series_t;

/* rmx, raw UCP, then one per perf_ext_t column in its order. */
static const series_t series[] = {
    {"rmx", "#1f5fbf", "", "circle"},
    {"raw UCP", "#e07b00", "6,4", "square"},
    {"Open MPI", "#2a9d3a", "2,3", "diamond"},
    {"Open MPI osc/sm", "#8e44ad", "8,3,2,3", "diamond"},
    {"OpenSHMEM", "#c0392b", "1,2", "square"},
};
#define NSERIES ((int)(sizeof(series) / sizeof(series[0])))
_Static_assert(sizeof(series) / sizeof(series[0]) == 2 + PERF_NEXT, "a series per column");

typedef struct {
    double x0, x1, y0, y1;   /* data range: log2 size, log10 value */
    double px, py, pw, ph;   /* plot area in the SVG */
} axes_t;

static double row_value(const perf_row_t *r, int s)
{
    return s == 0 ? r->rmx : s == 1 ? r->ucp : r->ext[s - 2];
}

static double sx(const axes_t *a, double size)
{
    return a->px + (log2(size) - a->x0) / (a->x1 - a->x0) * a->pw;
}

static double sy(const axes_t *a, double v)
{
    return a->py + a->ph - (log10(v) - a->y0) / (a->y1 - a->y0) * a->ph;
}

static void size_label(char *buf, size_t n, double size)
{
    size_t b = (size_t)size;
    if (b >= ((size_t)1 << 20))
        snprintf(buf, n, "%zuM", b >> 20);
    else if (b >= 1024)
        snprintf(buf, n, "%zuK", b >> 10);
    else
        snprintf(buf, n, "%zu", b);
}

static void value_label(char *buf, size_t n, int decade)
{
    if (decade >= 0 && decade <= 5)
        snprintf(buf, n, "%.0f", pow(10, decade));
    else if (decade < 0 && decade >= -3)
        snprintf(buf, n, "%.*f", -decade, pow(10, decade));
    else
        snprintf(buf, n, "1e%d", decade);
}

static const char *axis_title(perf_metric_t m)
{
    switch (m) {
    case METRIC_LAT: return "time per iteration (us)";
    case METRIC_BW: return "bandwidth (MB/s)";
    case METRIC_RATE: return "message rate (Mop/s)";
    }
    return "";
}

static void draw_axes(FILE *f, const axes_t *a, const perf_test_t *t)
{
    fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='#fff' stroke='#444'/>\n",
            a->px, a->py, a->pw, a->ph);
    for (int d = (int)a->y0; d <= (int)a->y1; d++) {
        for (int m = 1; m < 10; m++) {
            double v = m * pow(10, d);
            if (log10(v) < a->y0 - 1e-9 || log10(v) > a->y1 + 1e-9)
                continue;
            double y = sy(a, v);
            fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s'/>\n", a->px, y,
                    a->px + a->pw, y, m == 1 ? "#ccc" : "#eee");
            if (m == 1) {
                char lab[24];
                value_label(lab, sizeof(lab), d);
                fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='end' font-size='11'>%s</text>\n",
                        a->px - 5, y + 4, lab);
            }
        }
    }
    int step = a->x1 - a->x0 > 12 ? 2 : 1, e0 = (int)a->x0;
    if (e0 % step != 0)
        e0++; /* ticks on even powers of two when thinned: 1, 4, 16, ... 1M, 4M */
    for (int e = e0; e <= (int)a->x1; e += step) {
        double x = sx(a, pow(2, e));
        char lab[24];
        size_label(lab, sizeof(lab), pow(2, e));
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#eee'/>\n", x, a->py, x,
                a->py + a->ph);
        fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle' font-size='11'>%s</text>\n", x,
                a->py + a->ph + 15, lab);
    }
    fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle' font-size='12'>message size (bytes)"
               "</text>\n", a->px + a->pw / 2, a->py + a->ph + 34);
    fprintf(f, "<text transform='translate(%.1f,%.1f) rotate(-90)' text-anchor='middle' "
               "font-size='12'>%s</text>\n", a->px - 50, a->py + a->ph / 2, axis_title(t->metric));
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='14' font-weight='bold'>%s</text>\n", a->px,
            a->py - 20, t->name);
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='10' fill='#555'>%.80s</text>\n", a->px,
            a->py - 6, t->what);
}

static void marker(FILE *f, const series_t *s, double x, double y)
{
    if (strcmp(s->marker, "circle") == 0)
        fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n", x, y, s->color);
    else if (strcmp(s->marker, "square") == 0)
        fprintf(f, "<rect x='%.1f' y='%.1f' width='6' height='6' fill='%s'/>\n", x - 3, y - 3,
                s->color);
    else
        fprintf(f, "<path d='M%.1f %.1f l4 4 l-4 4 l-4 -4 z' fill='%s'/>\n", x, y - 4, s->color);
}

/* A polyline per series; a missing value (n/a) breaks the line. */
static void draw_series(FILE *f, const axes_t *a, const perf_row_t *rows, int n, int s)
{
    const series_t *ser = &series[s];
    int open = 0;
    fprintf(f, "<path fill='none' stroke='%s' stroke-width='2' stroke-dasharray='%s' d='",
            ser->color, ser->dash);
    for (int i = 0; i < n; i++) {
        double v = row_value(&rows[i], s);
        if (isnan(v) || v <= 0) {
            open = 0;
            continue;
        }
        fprintf(f, "%s%.1f %.1f ", open ? "L" : "M", sx(a, (double)rows[i].size), sy(a, v));
        open = 1;
    }
    fprintf(f, "'/>\n");
    for (int i = 0; i < n; i++) {
        double v = row_value(&rows[i], s);
        if (!isnan(v) && v > 0)
            marker(f, ser, sx(a, (double)rows[i].size), sy(a, v));
    }
}

/* A one-line legend under the x axis title, from the panel's left edge, where it can hide no
 * data and meets no title; entry width from the name (about 6.2 px a character at 11 px). */
static void draw_legend(FILE *f, const axes_t *a, const int *present)
{
    double x = a->px - M_LEFT + 12, y = a->py + a->ph + 56;
    for (int s = 0; s < NSERIES; s++) {
        if (!present[s])
            continue;
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' stroke-width='2' "
                   "stroke-dasharray='%s'/>\n", x, y - 4, x + 24, y - 4, series[s].color,
                series[s].dash);
        marker(f, &series[s], x + 12, y - 4);
        fprintf(f, "<text x='%.1f' y='%.1f' font-size='11'>%s</text>\n", x + 29, y, series[s].name);
        x += 29 + 6.2 * (double)strlen(series[s].name) + 10;
    }
}

static void panel(FILE *f, const perf_row_t *rows, int n, double ox, double oy)
{
    axes_t a = {.px = ox + M_LEFT, .py = oy + M_TOP, .pw = PANEL_W - M_LEFT - M_RIGHT,
                .ph = PANEL_H - M_TOP - M_BOTTOM};
    double vmin = INFINITY, vmax = -INFINITY;
    int present[NSERIES] = {0};
    for (int i = 0; i < n; i++)
        for (int s = 0; s < NSERIES; s++) {
            double v = row_value(&rows[i], s);
            if (isnan(v) || v <= 0)
                continue;
            present[s] = 1;
            vmin = v < vmin ? v : vmin;
            vmax = v > vmax ? v : vmax;
        }
    if (vmin > vmax)
        vmin = 1, vmax = 10; /* nothing measured: an empty chart with sane axes */
    a.x0 = floor(log2((double)rows[0].size));
    a.x1 = ceil(log2((double)rows[n - 1].size));
    a.y0 = floor(log10(vmin));
    a.y1 = ceil(log10(vmax));
    if (a.y1 <= a.y0)
        a.y1 = a.y0 + 1;
    draw_axes(f, &a, rows[0].test);
    for (int s = 0; s < NSERIES; s++)
        if (present[s])
            draw_series(f, &a, rows, n, s);
    draw_legend(f, &a, present);
}

int perf_plot_svg(const perf_run_t *run, FILE *f)
{
    /* Rows of one test are consecutive and in size order (the driver's sweep). */
    int starts[64], counts[64], np = 0;
    for (int i = 0; i < run->nrows && np < 64;) {
        int j = i;
        while (j < run->nrows && run->rows[j].test == run->rows[i].test)
            j++;
        if (j - i >= 2) {
            starts[np] = i;
            counts[np++] = j - i;
        }
        i = j;
    }
    int nrow = (np + COLS - 1) / COLS;
    int width = COLS * PANEL_W, height = 40 + (nrow ? nrow : 1) * PANEL_H;
    fprintf(f, "<?xml version='1.0' encoding='UTF-8'?>\n"
               "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
               "viewBox='0 0 %d %d' font-family='sans-serif'>\n"
               "<rect width='100%%' height='100%%' fill='#fafafa'/>\n",
            width, height, width, height);
    fprintf(f, "<text x='12' y='24' font-size='15'>rmx_perf: %d ranks, rank 0 -&gt; %d, median of "
               "%d repetitions, load average %.2f</text>\n",
            run->ranks, run->target, run->reps, run->load1);
    for (int p = 0; p < np; p++)
        panel(f, run->rows + starts[p], counts[p], (p % COLS) * PANEL_W, 40 + (p / COLS) * PANEL_H);
    if (np == 0)
        fprintf(f, "<text x='12' y='70' font-size='13'>no test swept more than one size</text>\n");
    fprintf(f, "</svg>\n");
    return ferror(f) ? -1 : 0;
}
