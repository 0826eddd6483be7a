/*
 * rmx_perf.c — the benchmark driver: options, launch, and the measurement loop.
 *
 *   rmx_perf [--test LIST] [--min SIZE] [--max SIZE] [--sizes LIST] [--iters N] [--warmup N]
 *            [--time S] [--reps N] [--ranks N] [--target R] [--baseline ucp|none] [--csv|--json]
 *            [--plot FILE.svg] [--mpi FILE.csv] [--mpi-sm FILE.csv] [--shmem FILE.csv]
 *            [--merge FILE.csv] [--progress|--quiet] [--list] [--topology]
 *
 * Options are options.c's (getopt_long, every value checked, the help text); SIGINT and SIGTERM
 * interrupt.c's (the rows so far are printed).
 *
 * Under a launcher (PMIx's: mpirun, srun --mpi=pmix, prterun; rmx's fork launcher: rmx_forkrun)
 * it uses the launched ranks; otherwise it forks --ranks local ranks (rmx_fork_run).  Rank 0 is
 * the origin, --target the rank it reads and writes (default: the last rank); the others wait in
 * sync_all.
 *
 * Every point (test, size) is measured --reps times; each repetition runs the rmx body and the
 * raw-UCP body back to back (alternating which goes first), so load on the machine hits both
 * sides alike, and a row reports the median of each side. A repetition is a warm-up (at most
 * --warmup iterations or a quarter of --time), then iterations in doubling batches until --iters
 * or --time is reached; only the batches are timed. Collective tests (sync_all) let rank 0 decide
 * when to stop and tell the others between batches.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perf.h"
#include "interrupt.h"
#include "../api/rmx_fork.h"
#include "../engine/internal.h"

#define TRY(expr)                     \
    do {                              \
        int try_rc_ = (expr);         \
        if (try_rc_ != RMX_OK)        \
            return try_rc_;           \
    } while (0)

#define MAX_REPS 101

typedef struct perf_state {
    const perf_opts_t *o;
    perf_env_t env;          /* the default context */
    perf_env_t env_nc;       /* a second context with coalescing disabled, when a test needs it */
    int have_nc;
    uint8_t selected[64];
    perf_run_t run;
    int npoints, done_points, show_progress;
    atomic_int published;    /* rows rank 0's watcher may print (rows never move: preallocated) */
    atomic_int live;         /* run's header is filled and points are being measured */
    /* --idle-target, on the target: time away, and what its progress agent did meanwhile */
    double away_s, agent_cpu_s;
    uint64_t agent_wakeups;
} perf_state_t;

/* ---------------------------------------------------------------- tests */
static void list_tests(void)
{
    for (int i = 0; i < perf_ntests; i++)
        printf("%-12s %-5s %-7s %s\n", perf_tests[i].name, perf_tests[i].group,
               perf_unit(perf_tests[i].metric), perf_tests[i].what);
}

/* Marks the selected tests; -1 (and a message) for a name that is neither test nor group. */
static int select_tests(const char *list, uint8_t *sel)
{
    if (list == NULL || strcmp(list, "all") == 0) {
        memset(sel, 1, (size_t)perf_ntests);
        return 0;
    }
    char *copy = strdup(list);
    if (copy == NULL)
        return -1;
    int rc = 0;
    for (char *save, *tok = strtok_r(copy, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        int hit = 0;
        for (int i = 0; i < perf_ntests; i++)
            if (strcmp(tok, "all") == 0 || strcmp(tok, perf_tests[i].name) == 0 ||
                strcmp(tok, perf_tests[i].group) == 0)
                sel[i] = 1, hit = 1;
        if (!hit && rc == 0)
            rc = perf_usage_error("--test: no test or group '%s' (rmx_perf --list names them)",
                                  tok);
    }
    free(copy);
    return rc != 0 ? -1 : 0;
}

/* ---------------------------------------------------------------- sizes */
/* The sizes a test runs at: --sizes if given, else powers of two from --min to --max, both
 * clamped to the test's own range; a fixed-size test (the atomics, sync_all) runs at its size. */
static int sweep(const perf_test_t *t, const perf_opts_t *o, size_t *out)
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

/* ---------------------------------------------------------------- environments */
/* The data area: big enough for the largest subarray test (PERF_SUB_WIDTH x the section) and
 * for some bandwidth slots, at most 64 MiB. */
static size_t data_len_for(const perf_opts_t *o)
{
    size_t want = o->max_size * PERF_SUB_WIDTH;
    size_t lo = (size_t)1 << 20, hi = (size_t)64 << 20;
    return want < lo ? lo : want > hi ? hi : want;
}

static int env_open(perf_env_t *e, rmx_ctx_t *ctx, const perf_opts_t *o)
{
    memset(e, 0, sizeof(*e));
    e->ctx = ctx;
    e->me = rmx_rank(ctx);
    e->n = rmx_size(ctx);
    e->target = o->target < 0 ? e->n - 1 : o->target;
    if (e->target >= e->n)
        return RMX_ERR_RANK;
    e->data_len = data_len_for(o);
    void *base;
    TRY(rmx_win_allocate(ctx, e->data_len + PERF_CTRL_BYTES, &base, &e->win));
    e->base = base;
    e->local = malloc(e->data_len);
    if (e->local == NULL)
        return RMX_ERR_NOMEM;
    for (size_t i = 0; i < e->data_len; i++)
        e->local[i] = (char)(i * 131u + 7u);
    if (e->me == 0)
        (void)perf_rmw_probe(e); /* failure leaves rmw_ok 0: those rows print n/a */
    return rmx_sync_all(ctx);
}

static void env_close(perf_env_t *e)
{
    if (e->win != NULL)
        (void)rmx_win_free(&e->win);
    free(e->local);
    e->local = NULL;
}

/* "sysv(amo am) posix(amo); put 0..<short>..; get 0..<bcopy>..": the origin-target endpoint's
 * lanes and the protocols of its first put and get lane. */
static void describe_transport(perf_env_t *e, char *out, size_t outlen)
{
    char info[4096];
    out[0] = '\0';
    if (rmx_ucx_ep_describe(e->ctx->peers[e->target].ep, info, sizeof(info)) != RMX_OK)
        return;
    size_t used = 0;
    for (char *save, *line = strtok_r(info, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char *proto = strstr(line, "put[0]:");
        if (proto == NULL)
            proto = strstr(line, "get[0]:");
        if (proto != NULL) { /* "put[0]: 0..<short>..4294967296..<bcopy>..(inf)" */
            int n = snprintf(out + used, outlen - used, "; %.3s %s", proto, proto + 8);
            if (n < 0 || (size_t)n >= outlen - used)
                break;
            used += (size_t)n;
            continue;
        }
        char *lane = strstr(line, "lane[");
        char *colon = lane ? strchr(lane, ':') : NULL;
        if (colon == NULL)
            continue;
        char *tl = strchr(colon + 1, ':'); /* "  2:posix/memory.0 md[2] -> ... rma_bw#0 am" */
        char *slash = tl ? strchr(tl, '/') : NULL;
        char *arrow = strstr(line, "->");
        if (slash == NULL || arrow == NULL)
            continue;
        char caps[96] = "";
        char *p = strchr(arrow, ' ');
        p = p ? strchr(p + 1, ' ') : NULL; /* skip the remote md/tl/sysdev word */
        size_t cl = 0;
        for (char *w = p; w != NULL && *w != '\0';) {
            while (*w == ' ')
                w++;
            size_t wl = strcspn(w, " #");
            if (wl > 0 && cl + wl + 2 < sizeof(caps))
                cl += (size_t)snprintf(caps + cl, sizeof(caps) - cl, "%s%.*s", cl ? " " : "",
                                       (int)wl, w);
            w = strchr(w, ' ');
        }
        int n = snprintf(out + used, outlen - used, "%s%.*s(%s)", used ? " " : "",
                         (int)(slash - tl - 1), tl + 1, caps);
        if (n < 0 || (size_t)n >= outlen - used)
            break;
        used += (size_t)n;
    }
}

static double load_average(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

/* ---------------------------------------------------------------- measurement */
/* --threads N: rank 0's N threads run the body at once (RMX_THREAD_MULTIPLE), each on its own
 * copy of the environment: its own source buffer, its own part of the data area (disp0) and its
 * own stream with the window bound to it (--shared-context: the context itself).  A batch is N
 * bodies of n iterations between two barriers, timed as one. */
typedef struct team team_t;
typedef struct member {
    perf_env_t env;
    team_t *team;
    int rc;
    pthread_t th;
} member_t;

struct team {
    int n;
    int streams;        /* each member on a stream of its own */
    rmx_win_t *win;     /* the window they bind */
    pthread_barrier_t go, done;
    perf_body_t body;
    size_t len;
    long iters;         /* this batch's, per thread */
    int quit;
    member_t m[];
};

/* In the member's own thread: a stream is its creator's. */
static int member_stream_open(member_t *m)
{
    if (!m->team->streams)
        return RMX_OK;
    int rc = rmx_stream_create(m->env.ctx, &m->env.stream);
    if (rc == RMX_OK)
        rc = rmx_win_bind(m->team->win, m->env.stream, &m->env.win);
    return rc;
}

static void member_stream_close(member_t *m)
{
    if (m->env.stream != NULL && m->env.win != m->team->win)
        (void)rmx_win_free(&m->env.win);
    (void)rmx_stream_free(&m->env.stream);
}

static void *team_member(void *arg)
{
    member_t *m = arg;
    team_t *tm = m->team;
    m->rc = member_stream_open(m);
    for (;;) {
        pthread_barrier_wait(&tm->go);
        if (tm->quit) {
            member_stream_close(m);
            return NULL;
        }
        int rc = m->rc != RMX_OK ? m->rc : tm->body(&m->env, tm->len, tm->iters);
        if (rc != RMX_OK)
            m->rc = rc;
        pthread_barrier_wait(&tm->done);
    }
}

static void team_free(team_t *tm, int started)
{
    if (started > 1) {
        tm->quit = 1;
        pthread_barrier_wait(&tm->go);
        for (int k = 1; k < started; k++)
            pthread_join(tm->m[k].th, NULL);
    }
    member_stream_close(&tm->m[0]);
    for (int k = 1; k < tm->n; k++)
        free(tm->m[k].env.local);
    pthread_barrier_destroy(&tm->go);
    pthread_barrier_destroy(&tm->done);
    free(tm);
}

/* Thread 0 is the caller, on e itself; the others start and wait for the first batch. */
static team_t *team_new(perf_env_t *e, int n, int streams, perf_body_t body, size_t len)
{
    team_t *tm = calloc(1, sizeof(*tm) + (size_t)n * sizeof(member_t));
    if (tm == NULL)
        return NULL;
    tm->n = n;
    tm->streams = streams;
    tm->win = e->win;
    tm->body = body;
    tm->len = len;
    pthread_barrier_init(&tm->go, NULL, (unsigned)n);
    pthread_barrier_init(&tm->done, NULL, (unsigned)n);
    size_t part = (e->data_len / (size_t)n) & ~(size_t)63;
    int ok = 1;
    for (int k = 0; k < n; k++) {
        tm->m[k].env = *e;
        tm->m[k].team = tm;
        tm->m[k].env.disp0 = (size_t)k * part;
        tm->m[k].env.fadd_disp = e->data_len + PERF_CTRL_THREADS + (size_t)k * 64;
        if (k > 0 && (tm->m[k].env.local = malloc(e->data_len)) == NULL)
            ok = 0;
        if (k > 0 && ok)
            memcpy(tm->m[k].env.local, e->local, e->data_len);
    }
    if (ok)
        tm->m[0].rc = member_stream_open(&tm->m[0]);
    int started = 1;
    for (int k = 1; k < n && ok; k++, started++)
        ok = pthread_create(&tm->m[k].th, NULL, team_member, &tm->m[k]) == 0;
    if (!ok) {
        /* the started ones wait at `go` for a count that never comes: a team of fewer */
        pthread_barrier_destroy(&tm->go);
        pthread_barrier_init(&tm->go, NULL, (unsigned)started);
        team_free(tm, started);
        return NULL;
    }
    return tm;
}

static int team_batch(team_t *tm, long iters)
{
    tm->iters = iters;
    pthread_barrier_wait(&tm->go);
    int rc = tm->m[0].rc != RMX_OK ? tm->m[0].rc : tm->body(&tm->m[0].env, tm->len, iters);
    pthread_barrier_wait(&tm->done);
    for (int k = 1; k < tm->n && rc == RMX_OK; k++)
        rc = tm->m[k].rc;
    return rc;
}

typedef struct {
    long done;
    double busy;
} run_t;

/* Batches of doubling size until max_iters or max_s of timed work; only batches are timed. */
static int run_bounded(perf_env_t *e, const perf_test_t *t, perf_body_t body, size_t len,
                       long max_iters, double max_s, run_t *r, team_t *team)
{
    long batch = 1, cap = max_iters / 16 > 0 ? max_iters / 16 : 1;
    r->done = 0;
    r->busy = 0;
    while (r->done < max_iters) {
        long n = batch < max_iters - r->done ? batch : max_iters - r->done;
        double t0 = rmx_now_s();
        int rc = team != NULL ? team_batch(team, n) : body(e, len, n);
        r->busy += rmx_now_s() - t0;
        if (rc != RMX_OK)
            return rc;
        r->done += n;
        uint64_t more = r->done < max_iters && r->busy < max_s;
        if (t->collective)
            TRY(perf_share_u64(e, &more));
        if (!more)
            break;
        if (batch < cap)
            batch *= 2;
    }
    return RMX_OK;
}

static double metric_value(const perf_test_t *t, const perf_env_t *e, size_t len, double sec)
{
    double ops = t->ops ? (double)t->ops(e, len) : 1.0;
    switch (t->metric) {
    case METRIC_LAT: return sec * 1e6;                   /* us per iteration */
    case METRIC_BW: return ops * (double)len / sec / 1e6; /* MB/s */
    case METRIC_RATE: return ops / sec / 1e6;             /* million operations per second */
    }
    return NAN;
}

/* One repetition of one side: bracketed by sync_all on the context it runs on (so over
 * transports that need target progress the waiting ranks progress the right worker). */
static int measure(perf_state_t *s, perf_env_t *e, const perf_test_t *t, perf_body_t body,
                   size_t len, double *value)
{
    const perf_opts_t *o = s->o;
    *value = NAN;
    TRY(rmx_sync_all(e->ctx));
    int rc = RMX_OK;
    if (t->collective || e->me == 0) {
        run_t r;
        long warm = o->warmup < o->iters ? o->warmup : o->iters;
        team_t *team = NULL;
        if (o->threads > 1 && !t->collective &&
            (team = team_new(e, o->threads, !o->shared_context, body, len)) == NULL)
            rc = RMX_ERR_NOMEM;
        if (rc == RMX_OK && warm > 0)
            rc = run_bounded(e, t, body, len, warm, o->time_s / 4, &r, team);
        if (rc == RMX_OK)
            rc = run_bounded(e, t, body, len, o->iters, o->time_s, &r, team);
        /* rates add up over the threads; a latency is what each thread sees */
        double per = team != NULL && t->metric != METRIC_LAT ? (double)o->threads : 1.0;
        if (rc == RMX_OK && r.done > 0)
            *value = metric_value(t, e, len, r.busy / (double)r.done / per);
        if (team != NULL)
            team_free(team, team->n);
    } else if (o->idle_s > 0) {
        rmx_stats_t a, b;
        int have = e->me == e->target && rmx_stats(e->ctx, &a) == RMX_OK;
        double t0 = rmx_now_s();
        usleep((useconds_t)(o->idle_s * 1e6)); /* no progress here: one-sided means unaffected */
        if (have && rmx_stats(e->ctx, &b) == RMX_OK) {
            s->away_s += rmx_now_s() - t0;
            s->agent_cpu_s += (double)(b.agent_cpu_ns - a.agent_cpu_ns) * 1e-9;
            s->agent_wakeups += b.agent_wakeups - a.agent_wakeups;
        }
    }
    int rc2 = rmx_sync_all(e->ctx);
    if (rc == RMX_ERR_PEER || rc == RMX_ERR_TIMEOUT || rc == RMX_ERR_TRANSPORT)
        return rc;  /* the run cannot go on; a refused call (n/a) can */
    return rc2;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the values that are numbers; NAN when none is. */
static double median(double *v, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[m++] = v[i];
    if (m == 0)
        return NAN;
    qsort(v, (size_t)m, sizeof(*v), cmp_double);
    return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

static perf_row_t *add_row(perf_run_t *run)
{
    if (run->nrows == run->cap) {
        int cap = run->cap ? run->cap * 2 : 64;
        perf_row_t *rows = realloc(run->rows, (size_t)cap * sizeof(*rows));
        if (rows == NULL)
            return NULL;
        run->rows = rows;
        run->cap = cap;
    }
    perf_row_t *r = &run->rows[run->nrows++];
    *r = (perf_row_t){.rmx = NAN, .ucp = NAN};
    for (int x = 0; x < PERF_NEXT; x++)
        r->ext[x] = NAN;
    return r;
}

static void progress(perf_state_t *s, const perf_test_t *t, size_t len)
{
    if (!s->show_progress)
        return;
    char sz[32];
    perf_format_size(sz, sizeof(sz), len);
    int tty = isatty(STDERR_FILENO);
    fprintf(stderr, "%srmx_perf: [%3d/%3d] %-12s %8s%s", tty ? "\r" : "", s->done_points + 1,
            s->npoints, t->name, sz, tty ? "   " : "\n");
    fflush(stderr);
}

static int point(perf_state_t *s, const perf_test_t *t, size_t len)
{
    const perf_opts_t *o = s->o;
    perf_env_t *e = t->nocoalesce ? &s->env_nc : &s->env;
    double vr[MAX_REPS], vu[MAX_REPS];
    progress(s, t, len);
    for (int rep = 0; rep < o->reps; rep++) {
        vu[rep] = NAN;
        /* Odd repetitions measure the baseline first: neither side always runs second. */
        if (o->baseline && rep % 2 == 1)
            TRY(measure(s, &s->env, t, t->ucp, len, &vu[rep]));
        TRY(measure(s, e, t, t->rmx, len, &vr[rep]));
        if (o->baseline && rep % 2 == 0)
            TRY(measure(s, &s->env, t, t->ucp, len, &vu[rep]));
    }
    s->done_points++;
    if (s->env.me != 0)
        return RMX_OK;
    perf_row_t *row = add_row(&s->run);
    if (row == NULL)
        return RMX_ERR_NOMEM;
    row->test = t;
    row->size = len;
    row->rmx = median(vr, o->reps);
    row->ucp = median(vu, o->reps);
    atomic_store(&s->published, s->run.nrows); /* the row is whole: the watcher may print it */
    return RMX_OK;
}

static int fits(const perf_state_t *s, const perf_test_t *t, size_t len)
{
    return t->fits == NULL || t->fits(&s->env, len);
}

static int count_points(const perf_state_t *s)
{
    size_t sizes[PERF_MAX_SIZES];
    int n = 0;
    for (int i = 0; i < perf_ntests; i++) {
        if (!s->selected[i])
            continue;
        int ns = sweep(&perf_tests[i], s->o, sizes);
        for (int k = 0; k < ns; k++)
            n += fits(s, &perf_tests[i], sizes[k]);
    }
    return n;
}

static int run_all(perf_state_t *s)
{
    size_t sizes[PERF_MAX_SIZES];
    s->npoints = count_points(s);
    if (s->env.me == 0 && s->npoints > 0) {
        /* Every row's place exists before the first point: add_row never moves them while
         * rank 0's watcher thread (interrupt.c) may be reading them. */
        s->run.rows = calloc((size_t)s->npoints, sizeof(*s->run.rows));
        if (s->run.rows == NULL)
            return RMX_ERR_NOMEM;
        s->run.cap = s->npoints;
    }
    atomic_store(&s->live, 1);
    for (int i = 0; i < perf_ntests; i++) {
        const perf_test_t *t = &perf_tests[i];
        if (!s->selected[i])
            continue;
        int ns = sweep(t, s->o, sizes);
        for (int k = 0; k < ns; k++)
            if (fits(s, t, sizes[k]))
                TRY(point(s, t, sizes[k]));
    }
    if (s->show_progress && isatty(STDERR_FILENO))
        fprintf(stderr, "\r%60s\r", "");
    return RMX_OK;
}

/* --idle-target: the target tells rank 0 what its progress agent used while it was away. */
static int gather_agent_report(perf_state_t *s)
{
    perf_env_t *e = &s->env;
    if (s->o->idle_s <= 0 || e->n < 2)
        return RMX_OK;
    size_t at = e->data_len + PERF_CTRL_AGENT;
    /* And with no request at all: every rank away for a while. */
    TRY(rmx_sync_all(e->ctx));
    rmx_stats_t a, b;
    TRY(rmx_stats(e->ctx, &a));
    double t0 = rmx_now_s();
    usleep(300 * 1000);
    double quiet_s = rmx_now_s() - t0;
    TRY(rmx_stats(e->ctx, &b));
    if (e->me == e->target) {
        double v[6] = {s->away_s, s->agent_cpu_s, (double)s->agent_wakeups, b.agent_running,
                       quiet_s, (double)(b.agent_cpu_ns - a.agent_cpu_ns) * 1e-9};
        TRY(rmx_put(e->win, v, sizeof(v), 0, at));
    }
    TRY(rmx_sync_all(e->ctx));
    if (e->me == 0) {
        double v[6];
        memcpy(v, e->base + at, sizeof(v));
        s->run.have_agent = 1;
        s->run.idle_s = v[0];
        s->run.agent_cpu_s = v[1];
        s->run.agent_wakeups = v[2];
        s->run.agent_running = v[3] != 0;
        s->run.quiet_s = v[4];
        s->run.quiet_cpu_s = v[5];
    }
    return RMX_OK;
}

/* The other programs' columns, then every output; 0, or -1 when an output was not written. */
static int report(perf_state_t *s, perf_run_t *run)
{
    const perf_opts_t *o = s->o;
    char err[512];
    for (int x = 0; x < PERF_NEXT; x++)
        if (o->next[x] > 0 &&
            perf_read_ext(run, (perf_ext_t)x, o->ext_csv[x], o->next[x], err, sizeof(err)) != 0)
            fprintf(stderr, "rmx_perf: %s %s\n", perf_ext[x].option, err);
    return perf_report(run, o);
}

/* The normal end: the complete report, unless rank 0's watcher is already printing the rows
 * so far (a signal came first). */
static int final_report(perf_state_t *s)
{
    if (!perf_report_claim())
        return 0;
    int rc = report(s, &s->run);
    perf_report_out();
    return rc;
}

/* Rank 0's watcher thread, on SIGINT / SIGTERM: the rows measured so far, and a note saying
 * so, everywhere the complete report would have gone. */
static void interrupted_report(int sig, void *arg)
{
    perf_state_t *s = arg;
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
    if (!atomic_load(&s->live)) {
        fprintf(stderr, "rmx_perf: interrupted by %s before the first point\n", name);
        return;
    }
    perf_run_t run = s->run; /* rows up to `published` are whole and never written again */
    run.nrows = atomic_load(&s->published);
    snprintf(run.note, sizeof(run.note), "interrupted by %s after %d of %d points", name,
             run.nrows, s->npoints);
    if (s->show_progress && isatty(STDERR_FILENO))
        fprintf(stderr, "\n");
    fprintf(stderr, "rmx_perf: %s\n", run.note);
    (void)report(s, &run);
}

/* --merge: a report of earlier runs, no ranks, no measurement. */
static int merge_only(perf_state_t *s)
{
    char err[512];
    if (perf_merge_runs(&s->run, s->o->merge, s->o->nmerge, err, sizeof(err)) != 0) {
        fprintf(stderr, "rmx_perf: --merge %s\n", err);
        return 1;
    }
    int rc = report(s, &s->run);
    free(s->run.rows);
    return rc == 0 ? 0 : 1;
}

static int needs_nocoalesce(const perf_state_t *s)
{
    for (int i = 0; i < perf_ntests; i++)
        if (s->selected[i] && perf_tests[i].nocoalesce)
            return 1;
    return 0;
}

static int perf_main(const rmx_config_t *cfg, void *arg)
{
    perf_state_t *s = arg;
    rmx_ctx_t *ctx, *ctx_nc = NULL;
    rmx_config_t c;
    if (cfg != NULL)
        c = *cfg;
    else
        rmx_config_init(&c);
    if (s->o->threads > 1)
        c.threads = RMX_THREAD_MULTIPLE;
    int rc = rmx_init(&c, &ctx);
    if (rc != RMX_OK) {
        fprintf(stderr, "rmx_perf: rmx_init: %s\n", rmx_strerror(rc));
        return 1;
    }
    if (needs_nocoalesce(s)) {
        rmx_config_t nc = c;
        nc.coalesce_disable = 1;
        rc = rmx_init(&nc, &ctx_nc);
    }
    if (rc == RMX_OK)
        rc = env_open(&s->env, ctx, s->o);
    if (rc == RMX_OK && ctx_nc != NULL && (rc = env_open(&s->env_nc, ctx_nc, s->o)) == RMX_OK)
        s->have_nc = 1;
    if (rc == RMX_OK && s->env.n < 2 && s->env.me == 0)
        fprintf(stderr, "rmx_perf: one rank only: rank 0 talks to itself\n");
    if (rc == RMX_OK) {
        s->show_progress = s->env.me == 0 &&
                           (s->o->progress == 1 || (s->o->progress < 0 && isatty(STDERR_FILENO)));
        s->run.ranks = s->env.n;
        s->run.reps = s->o->reps;
        s->run.target = s->env.target;
        s->run.load1 = load_average();
        if (s->env.me == 0)
            describe_transport(&s->env, s->run.transport, sizeof(s->run.transport));
        rc = run_all(s);
    }
    if (rc == RMX_OK)
        rc = gather_agent_report(s);
    int out_rc = 0;
    if (rc == RMX_OK && s->env.me == 0)
        out_rc = final_report(s);
    if (rc == RMX_ERR_RANK && s->o->target >= s->env.n) {
        if (s->env.me == 0)
            perf_usage_error("--target %d: need a rank below the %d launched", s->o->target,
                             s->env.n);
        out_rc = PERF_USAGE;
    } else if (rc != RMX_OK)
        fprintf(stderr, "rmx_perf: rank %d: %s\n", s->env.me, rmx_strerror(rc));
    env_close(&s->env_nc);
    env_close(&s->env);
    if (ctx_nc != NULL)
        (void)rmx_finalize(ctx_nc);
    (void)rmx_finalize(ctx);
    free(s->run.rows);
    fflush(stdout);
    fflush(stderr);
    if (out_rc == PERF_USAGE)
        return PERF_USAGE;
    return rc == RMX_OK && out_rc == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------- before any rank starts */
/* Bytes a rank maps: the window and the local buffer of each context. */
static size_t bytes_per_rank(const perf_state_t *s)
{
    size_t data = data_len_for(s->o);
    return (2 * data + PERF_CTRL_BYTES) * (needs_nocoalesce(s) ? 2 : 1);
}

/* MemAvailable of /proc/meminfo in bytes; 0 when unknown. */
static size_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL)
        return 0;
    char line[128];
    unsigned long long kb = 0;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (size_t)kb * 1024;
}

/* An explicit size (--sizes) that none of the selected tests runs at (a sweeping test within its
 * range, a fixed-size one at its own size: fadd at 8 B, win_create at 4 KiB, sync_all at none),
 * so it would silently measure nothing or something else; 0 when there is none. */
static size_t unused_size(const perf_state_t *s)
{
    for (int k = 0; k < s->o->nsizes; k++) {
        size_t len = s->o->sizes[k];
        int used = 0;
        for (int i = 0; i < perf_ntests && !used; i++) {
            const perf_test_t *t = &perf_tests[i];
            if (s->selected[i])
                used = t->min_len == t->max_len
                           ? len == t->min_len
                           : len >= t->min_len && len <= t->max_len && fits(s, t, len);
        }
        if (!used)
            return len;
    }
    return 0;
}

/* What the options ask for can be done: some point to measure, a target among the forked ranks,
 * and memory for every rank of this machine.  PERF_USAGE with a message, or 0. */
static int check_plan(perf_state_t *s, int launched)
{
    const perf_opts_t *o = s->o;
    s->env.data_len = data_len_for(o); /* what sub_fits looks at; env_open sets it again */
    if (count_points(s) == 0)
        return perf_usage_error("nothing to measure: no selected test runs at the sizes given "
                                "(rmx_perf --list; the subarray tests need multiples of 8)");
    size_t bad = unused_size(s);
    if (bad != 0) {
        char sz[32];
        perf_format_size(sz, sizeof(sz), bad);
        return perf_usage_error("--sizes: no selected test runs at %s (rmx_perf --list; the "
                                "rate tests stop at 64 KiB, the subarray tests need multiples "
                                "of 8, the atomics run at 8 B, win_create at 4 KiB)", sz);
    }
    if (!launched && o->target >= o->ranks)
        return perf_usage_error("--target %d: need a rank below --ranks %d", o->target,
                                o->ranks);
    size_t ranks = launched ? 1 : (size_t)o->ranks, need = ranks * bytes_per_rank(s);
    size_t avail = mem_available();
    if (avail > 0 && need > avail) {
        char sz[32];
        perf_format_size(sz, sizeof(sz), o->max_size);
        return perf_usage_error("%zu rank(s) x %zu MiB (windows and buffers for sizes up to %s) "
                                "need more than the %zu MiB available (MemAvailable)", ranks,
                                bytes_per_rank(s) >> 20, sz, avail >> 20);
    }
    return 0;
}

/* The options that name result files to read, in turn: x < PERF_NEXT another program's
 * (perf_ext[x]: --mpi, --mpi-sm, --shmem), x == PERF_NEXT --merge's earlier rmx_perf outputs. */
static int input_count(const perf_opts_t *o, int x)
{
    return x < PERF_NEXT ? o->next[x] : o->nmerge;
}

static const char *const *input_paths(const perf_opts_t *o, int x)
{
    return x < PERF_NEXT ? o->ext_csv[x] : o->merge;
}

static const char *input_option(int x)
{
    return x < PERF_NEXT ? perf_ext[x].option : "--merge";
}

/* The result files read later: each must read now, every line what its option expects, before
 * anything is measured. */
static int check_inputs(const perf_opts_t *o)
{
    char err[512];
    for (int x = 0; x <= PERF_NEXT; x++) {
        perf_run_t scratch = {0}; /* no rows: the files are read and checked, nothing joined */
        int n = input_count(o, x);
        int rc = n == 0 ? 0
               : x < PERF_NEXT ? perf_read_ext(&scratch, (perf_ext_t)x, input_paths(o, x), n, err,
                                               sizeof(err))
                               : perf_merge_runs(&scratch, input_paths(o, x), n, err, sizeof(err));
        free(scratch.rows);
        if (rc != 0)
            return perf_usage_error("%s %s", input_option(x), err);
    }
    return 0;
}

static int open_output(const char *opt, const char *path, FILE **f)
{
    if (path == NULL)
        return 0;
    *f = fopen(path, "w");
    if (*f == NULL)
        return perf_usage_error("%s %s: %s", opt, path, strerror(errno));
    return 0;
}

/* Whether two paths name one file: the same inode when it exists, else the same directory (by
 * inode) and name, however either is spelled ("d/./x", "d/../d/x"). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
    const char *fa = na != NULL ? na + 1 : a, *fb = nb != NULL ? nb + 1 : b;
    if (strcmp(fa, fb) != 0 || *fa == '\0')
        return 0;
    char da[PATH_MAX], db[PATH_MAX];
    snprintf(da, sizeof(da), "%.*s", na != NULL ? (int)(na - a) + 1 : 1, na != NULL ? a : ".");
    snprintf(db, sizeof(db), "%.*s", nb != NULL ? (int)(nb - b) + 1 : 1, nb != NULL ? b : ".");
    return stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* An output file that is also an input (--merge, --mpi, --mpi-sm, --shmem: read again for the
 * rows after the output was truncated) or the other output (one overwrote the other). */
static int outputs_apart(const perf_opts_t *o)
{
    if (o->output != NULL && o->plot != NULL && same_file(o->output, o->plot))
        return perf_usage_error("--plot %s: the same file as --output %s", o->plot, o->output);
    const char *outs[2] = {o->output, o->plot}, *opt[2] = {"--output", "--plot"};
    for (int k = 0; k < 2; k++)
        for (int x = 0; x <= PERF_NEXT && outs[k] != NULL; x++)
            for (int i = 0; i < input_count(o, x); i++)
                if (same_file(outs[k], input_paths(o, x)[i]))
                    return perf_usage_error("%s %s: the same file as the input %s %s", opt[k],
                                            outs[k], input_option(x), input_paths(o, x)[i]);
    return 0;
}

/* --output and --plot are created now, so a bad path costs no measurement.  Under a launcher
 * only rank 0 creates them: every rank truncating the same file would race. */
static int open_outputs(perf_opts_t *o, int launched)
{
    if (launched && !perf_rank0())
        return 0;
    if (outputs_apart(o) != 0)
        return PERF_USAGE;
    if (open_output("--output", o->output, &o->output_f) != 0)
        return PERF_USAGE;
    return open_output("--plot", o->plot, &o->plot_f);
}

/* A rank: its signals go to the watcher (interrupt.c) before rmx_init makes any thread. */
static int rank_main(const rmx_config_t *cfg, void *arg)
{
    perf_state_t *s = arg;
    int fork_rank = cfg != NULL ? cfg->oob.rank : -1;
    int rank0 = cfg != NULL ? fork_rank == 0 : perf_rank0();
    if (perf_rank_signals(fork_rank, rank0 ? interrupted_report : NULL, s) != 0)
        fprintf(stderr, "rmx_perf: cannot watch for signals; ^C loses the rows\n");
    return perf_main(cfg, arg);
}

/* Without a launcher: fork the ranks.  The exit status is rank 0's when it failed (2: a usage
 * error only a rank could see), 128 + the signal when interrupted. */
static int fork_ranks(perf_state_t *s)
{
    int nranks = s->o->ranks, status[64];
    if (perf_launcher_signals() != 0)
        fprintf(stderr, "rmx_perf: cannot catch signals; ^C loses the rows\n");
    fflush(stdout);
    int rc = rmx_fork_run(nranks, rank_main, s, NULL, 3600, status);
    int sig = perf_launcher_signal();
    if (sig != 0)
        return 128 + sig;
    if (rc == RMX_OK)
        return 0;
    if (status[0] == PERF_USAGE || status[0] == 1)
        return status[0];
    fprintf(stderr, "rmx_perf: %s\n", rmx_strerror(rc));
    return 1;
}

int main(int argc, char **argv)
{
    perf_opts_t o;
    int prc = perf_parse_args(argc, argv, &o);
    if (prc == PERF_DONE)
        return fflush(stdout) == 0 ? 0 : 1;
    if (prc != 0)
        return PERF_USAGE;
    if (o.list) {
        list_tests();
        return fflush(stdout) == 0 ? 0 : 1;
    }
    if (o.topology)
        return rmx_topology_print(stdout) == RMX_OK && fflush(stdout) == 0 ? 0 : 1;
    perf_state_t s = {.o = &o};
    int launched = perf_launched();
    if (select_tests(o.tests, s.selected) != 0 || check_inputs(&o) != 0)
        return PERF_USAGE;
    if (o.nmerge == 0 && check_plan(&s, launched) != 0)
        return PERF_USAGE;
    if (open_outputs(&o, launched) != 0)
        return PERF_USAGE;
    if (o.nmerge > 0)
        return merge_only(&s);
    if (launched)
        return rank_main(NULL, &s);
    return fork_ranks(&s);
}
