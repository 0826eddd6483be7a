/*
 * perf.h — what the files of rmx_perf share: options, the benchmark environment of one context,
 * the test table, result rows, and the geometry both sides of a test must agree on.
 *
 *   rmx_perf.c    launch (PMIx launcher or forked ranks), the measurement driver, the report
 *   options.c     the command line (getopt_long, every value checked) and the help text
 *   interrupt.c   SIGINT / SIGTERM: the rows measured so far are printed, the ranks end
 *   tests.c       the test table: name, metric, size range, the rmx body and the raw-UCP body
 *   bench_rmx.c   bodies on the public API (api/rmx.h) only
 *   bench_ucp.c   the same bodies on raw UCP calls on the same endpoints, rkeys and buffers
 *   report.c      table / CSV / JSON on stdout and --output, merging of other programs' results
 *   plot.c        the hand-written SVG chart (--plot)
 *
 * Completion semantics are the same on both sides of every row (see tests.c): a row compares
 * two ways of getting the same guarantee, never a weaker one against a stronger one.
 */
#ifndef RMX_PERF_H
#define RMX_PERF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "../api/rmx.h"

#define MiB(x) ((size_t)(x) << 20)
#define KiB(x) ((size_t)(x) << 10)
#define PERF_MAX_SIZES 64
#define PERF_MAX_FILES 16

typedef enum { METRIC_LAT = 0, METRIC_BW, METRIC_RATE } perf_metric_t;

/* Columns measured by other programs under the same launcher and read back from their result
 * files (perf/compare.sh): Open MPI RMA with osc ucx (perf/mpi/osu_rma), the same with osc sm
 * (on-node runs), and Open MPI's OpenSHMEM (perf/shmem/bench_shmem). */
typedef enum { PERF_EXT_MPI = 0, PERF_EXT_MPI_SM, PERF_EXT_SHMEM, PERF_NEXT } perf_ext_t;

typedef struct perf_ext_info {
    const char *option;     /* rmx_perf option naming a result file: "--mpi" */
    const char *key;        /* CSV / JSON column and table header: "mpi" */
    const char *ratio;      /* table header of rmx's ratio to it: "rmx/mpi" */
    const char *label;      /* header line and plot legend: "Open MPI" */
} perf_ext_info_t;

extern const perf_ext_info_t perf_ext[PERF_NEXT];

/* --output's format */
typedef enum { PERF_FMT_NONE = 0, PERF_FMT_CSV, PERF_FMT_JSON } perf_format_t;

/* perf_parse_args: 0 parsed; PERF_USAGE (the exit status of a usage error); PERF_DONE (--help
 * printed: exit 0). */
#define PERF_USAGE 2
#define PERF_DONE 3

typedef struct perf_opts {
    const char *tests;      /* comma-separated names or groups; NULL: all */
    size_t min_size, max_size;
    size_t sizes[PERF_MAX_SIZES];  /* --sizes: explicit list instead of the sweep */
    int nsizes;
    long iters, warmup;     /* per point and repetition, upper bounds */
    double time_s;          /* time bound per point and repetition */
    int reps;               /* repetitions; rows report the median */
    double idle_s;          /* --idle-target: non-origin ranks sleep instead of progressing */
    int ranks;              /* forked ranks when no launcher started us */
    int ranks_given;        /* --ranks was on the command line */
    int target;             /* rank the origin (rank 0) talks to; -1: the last rank */
    int baseline;           /* 1: raw UCP beside rmx */
    int threads;            /* --threads: rank 0's threads, each on its stream (1: one) */
    int shared_context;     /* --shared-context: those threads share the context instead */
    int csv, json;
    int progress;           /* 1: progress line on stderr, 0: none, -1: when stderr is a tty */
    const char *plot;       /* SVG file or NULL */
    const char *output;     /* --output FILE or NULL */
    perf_format_t out_format;
    FILE *plot_f, *output_f; /* both opened before anything is measured (rank 0's) */
    int list, topology;     /* --list, --topology: print and exit */
    const char *ext_csv[PERF_NEXT][PERF_MAX_FILES];  /* --mpi, --mpi-sm, --shmem result files */
    int next[PERF_NEXT];
    const char *merge[PERF_MAX_FILES];    /* --merge: rows from these rmx_perf --csv files */
    int nmerge;
} perf_opts_t;

/* One rmx context with its benchmark window, as every body sees it. */
typedef struct perf_env {
    rmx_ctx_t *ctx;
    rmx_win_t *win;         /* the window, or (--threads) bound to this thread's stream */
    rmx_stream_t *stream;   /* --threads: this thread's stream, or NULL (the context) */
    char *base;             /* this rank's window memory */
    char *local;            /* source / destination buffer of data_len bytes (malloc'd) */
    size_t data_len;        /* bytes of each window the tests may use; a control area follows */
    size_t disp0;           /* --threads: where this thread's part of the data area begins */
    size_t fadd_disp;       /* --threads: this thread's fetch-add word (0: the shared one) */
    int me, n, target;
    int rmw_assert;         /* assert flags under which rmx_rmw runs without a lock */
    int rmw_ok;             /* rmx_rmw answered the probe */
    int64_t cas_expect;     /* current value of the compare-swap word (only the origin writes) */
    int64_t max_next;       /* next operand of the MAX test: always a new maximum */
    uint64_t ucp_epoch;     /* raw-UCP barrier calls so far */
    unsigned share_seq;     /* share_u64 calls so far (alternating slots) */
} perf_env_t;

/* Runs n iterations of one test on one side; returns RMX_OK or a negative RMX_ERR_*. */
typedef int (*perf_body_t)(perf_env_t *e, size_t len, long n);

typedef struct perf_test {
    const char *name;
    const char *group;       /* put, get, rmw, sub, sync */
    perf_metric_t metric;
    size_t min_len, max_len; /* the sweep is clamped to this range */
    int collective;          /* every rank runs the body (sync) */
    int nocoalesce;          /* the rmx side runs on the context with coalescing disabled */
    long (*ops)(const perf_env_t *e, size_t len);  /* operations per iteration; NULL: 1 */
    int (*fits)(const perf_env_t *e, size_t len);  /* NULL: always */
    perf_body_t rmx, ucp;
    const char *what;        /* one line: what an iteration is */
} perf_test_t;

extern const perf_test_t perf_tests[];
extern const int perf_ntests;

/* One printed row.  Values are in the metric's unit; NAN means not measured ("n/a"). */
typedef struct perf_row {
    const perf_test_t *test;
    size_t size;
    double rmx, ucp;
    double ext[PERF_NEXT];   /* the other programs' values (perf_ext_t) */
} perf_row_t;

typedef struct perf_run {
    perf_row_t *rows;
    int nrows, cap;
    char transport[256];     /* what UCX chose for the origin-target endpoint */
    double load1;            /* 1-minute load average at the start */
    int ranks, reps, target;
    int nfiles;              /* --merge: result files combined (median per row) */
    double load_max;
    int have_ext[PERF_NEXT];     /* a result file of that column was read */
    char ext_note[PERF_NEXT][160]; /* its "# osc: ..." / "# shmem: ..." line */
    /* --idle-target: what the target's progress agent used while the target was away */
    int have_agent;          /* reported by the target */
    int agent_running;
    double idle_s, agent_cpu_s, agent_wakeups;
    double quiet_s, quiet_cpu_s; /* and while no request came at all */
    char note[128];          /* "interrupted by SIGINT after 3 of 40 points"; "" when complete */
} perf_run_t;

/* ---- geometry shared by bench_rmx.c and bench_ucp.c */
#define PERF_CTRL_BYTES  4096     /* control area after the data area of every window */
#define PERF_CTRL_SHARE  0        /* two uint64 slots: rank 0's decisions for collective tests */
#define PERF_CTRL_RMW    64       /* four int64 words: fadd, swap, cswap, max */
#define PERF_CTRL_BARRIER 256     /* raw-UCP barrier counters, one per round */
#define PERF_CTRL_AGENT  512      /* six doubles: the target's progress-agent report */
#define PERF_CTRL_THREADS 1024    /* --threads: each thread's fetch-add word, a cache line apart */
#define PERF_BW_WINDOW   64       /* puts/gets in flight per bandwidth iteration */
#define PERF_RATE_WINDOW 256      /* puts/gets per message-rate iteration */
#define PERF_SUB_WIDTH   16       /* the short extent of the 2-d subarray arrays */

/* Bandwidth slots are neither overlapping nor adjacent, so neither ordering nor coalescing
 * applies: each slot starts on a fresh 64-byte line, 64 bytes after the previous one ends. */
static inline size_t perf_slot(size_t len)
{
    return ((len + 63) & ~(size_t)63) + 64;
}

static inline long perf_bw_ops(const perf_env_t *e, size_t len)
{
    size_t fit = e->data_len / perf_slot(len);
    return fit < PERF_BW_WINDOW ? (long)(fit ? fit : 1) : PERF_BW_WINDOW;
}

static inline long perf_rate_ops(const perf_env_t *e, size_t len)
{
    size_t fit = e->data_len / len;
    return fit < PERF_RATE_WINDOW ? (long)(fit ? fit : 1) : PERF_RATE_WINDOW;
}

/* 2-d arrays of doubles in C order, PERF_SUB_WIDTH x k or k x PERF_SUB_WIDTH elements (k = len/8):
 * the column section is k elements PERF_SUB_WIDTH*8 bytes apart (k runs of 8 bytes), the row
 * section one contiguous run of len bytes.  The remote array starts at disp 0, the local array
 * at e->local, same shape. */
static inline size_t perf_sub_elems(size_t len)
{
    return len / sizeof(double);
}
static inline size_t perf_col_offset(size_t i)
{
    return (i * PERF_SUB_WIDTH + 1) * sizeof(double);  /* element (i, 1) of a k x W array */
}
static inline size_t perf_row_offset(size_t k)
{
    return k * sizeof(double);                         /* element (1, 0) of a W x k array */
}
void perf_col_section(rmx_sub_t *s, size_t k);
void perf_row_section(rmx_sub_t *s, size_t k);

/* ---- bench_rmx.c (bench_rmx_*) and bench_ucp.c (bench_ucp_*): one body per test and side */
#define PERF_BODIES(X) \
    X(put_lat) X(put_bw) X(put_rate) X(get_lat) X(get_bw) X(get_rate) \
    X(fadd) X(swap) X(cswap) X(max) X(put_col) X(put_row) X(get_col) X(get_row) X(sync)
#define PERF_DECLARE_BODY(name)                                   \
    int bench_rmx_##name(perf_env_t *e, size_t len, long n);      \
    int bench_ucp_##name(perf_env_t *e, size_t len, long n);
PERF_BODIES(PERF_DECLARE_BODY)
int bench_rmx_win_create(perf_env_t *e, size_t len, long n); /* rmx only: no raw-UCP body */
int bench_ucp_fadd_call(perf_env_t *e, size_t len, long n);  /* UCP behind a bare call */
int bench_cpu_fadd(perf_env_t *e, size_t len, long n);       /* no call at all: the floor */

int perf_rmw_probe(perf_env_t *e);
int perf_share_u64(perf_env_t *e, uint64_t *v);  /* rank 0's *v reaches every rank; collective */

/* ---- report.c */
const char *perf_unit(perf_metric_t m);
/* Median per (test, size) over the files: one other program's column, or (--merge) the run.
 * Each returns 0, or -1 with why in err (a file that cannot be read, or is not the program's
 * results: every line is checked; --merge's files must be runs of the same ranks, target and
 * repetitions). */
int perf_read_ext(perf_run_t *run, perf_ext_t which, const char *const *paths, int n, char *err,
                  size_t errlen);
int perf_merge_runs(perf_run_t *run, const char *const *paths, int n, char *err, size_t errlen);
void perf_print_table(FILE *f, const perf_run_t *run, const perf_opts_t *o);
void perf_print_csv(FILE *f, const perf_run_t *run, const perf_opts_t *o);
void perf_print_json(FILE *f, const perf_run_t *run, const perf_opts_t *o);
void perf_format_size(char *buf, size_t n, size_t bytes);
/* Standard output (table, --csv or --json), --output and --plot; 0, or -1 with a message naming
 * what could not be written.  Closes --output's and --plot's files. */
int perf_report(const perf_run_t *run, const perf_opts_t *o);

/* ---- plot.c: the chart into f (not closed here); -1 when a write failed */
int perf_plot_svg(const perf_run_t *run, FILE *f);

/* ---- options.c */
int perf_parse_args(int argc, char **argv, perf_opts_t *o);
void perf_print_help(FILE *f);
int perf_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Started by a launcher: PMIx's (mpirun, srun --mpi=pmix, prterun: PMIX_NAMESPACE) or rmx's fork
 * launcher's (rmx_forkrun, rmxrun --launcher fork: RMX_FORK_RANK); rmx_perf then forks nothing. */
int perf_launched(void);
/* Not launched, or the launched rank 0 (a process that cannot tell counts as rank 0). */
int perf_rank0(void);
size_t perf_largest_size(void);   /* the largest size any test measures */

#endif
