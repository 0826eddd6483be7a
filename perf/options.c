/*
 * options.c — rmx_perf's command line: getopt_long, every value checked, and the help text.
 *
 * The help text is the README's "rmx_perf(1)" section verbatim (tests/test_perf.c diffs the two),
 * so it is one string here, not assembled from pieces.  Every bad input ends in a message on
 * stderr that names the option and the value, and in exit status 2 (perf_parse_args returns
 * PERF_USAGE); nothing is measured first.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perf.h"

#define MAX_REPS 101
#define MAX_RANKS 64
#define MAX_THREADS 16
#define MAX_TIME_S 3600.0
#define MAX_IDLE_S 60.0

static const char help_text[] =
    "Usage: rmx_perf [OPTION]...\n"
    "Measure rmx's one-sided operations beside the same operations on raw UCP.\n"
    "\n"
    "Without a launcher rmx_perf forks --ranks local ranks; under a PMIx launcher (mpirun,\n"
    "srun --mpi=pmix, prterun) or rmx's fork launcher (rmx_forkrun, rmxrun --launcher fork)\n"
    "it uses the launched ranks.  Rank 0 puts to and gets from --target; the other ranks\n"
    "wait.  Every point (test, size) is measured --reps times and its row shows the median.\n"
    "\n"
    "Tests:\n"
    "  -t, --test LIST      test names or groups, comma-separated (put, get, rmw, sub, sync,\n"
    "                       win, all; --list names the tests); default all.  --tests is the same\n"
    "\n"
    "Sizes (bytes, with an optional K, M or G suffix and B: 8, 4K, 1MB):\n"
    "      --min SIZE       smallest size of the power-of-two sweep (default 1)\n"
    "      --max SIZE       largest size of the sweep (default 4M)\n"
    "  -s, --sizes LIST     explicit sizes instead of the sweep, e.g. 8,4K,1M (at most 64)\n"
    "                       A size is 1 .. 4M, the largest any test measures (its window is\n"
    "                       16 x the largest size, 1 .. 64 MiB a rank); each size of --sizes\n"
    "                       must be one a selected test runs at; the ranks' windows and\n"
    "                       buffers must fit in MemAvailable (/proc/meminfo).\n"
    "\n"
    "Measurement:\n"
    "      --iters N        iterations per point and repetition, at most (N >= 1;\n"
    "                       default 1000000)\n"
    "      --warmup N       warm-up iterations, at most (N >= 0; default 1000)\n"
    "      --time S         time bound per point and repetition in seconds (0 < S <= 3600;\n"
    "                       default 0.02)\n"
    "  -r, --reps N         repetitions per point; rows show the median (1 .. 101; default 3)\n"
    "      --idle-target S  the other ranks sleep S seconds (0 .. 60) in each measurement\n"
    "                       instead of progressing (with --warmup 0: shows what needs the\n"
    "                       target)\n"
    "\n"
    "Ranks:\n"
    "      --ranks N        ranks to fork when not launched (2 .. 64; default 2; a launcher's\n"
    "                       ranks win)\n"
    "      --target R       rank that rank 0 talks to (1 .. ranks-1; default the last)\n"
    "      --baseline B     ucp (default): raw UCP beside rmx; none: rmx only\n"
    "      --threads N      N threads of rank 0, each on a stream of its own\n"
    "                       (RMX_THREAD_MULTIPLE; 1 .. 16; default 1): put_rate is their total\n"
    "                       message rate, fadd the latency each sees; only those two tests,\n"
    "                       rmx only\n"
    "      --shared-context with --threads: the threads share the context instead of streams\n"
    "\n"
    "Output:\n"
    "      --csv            CSV on standard output instead of the table\n"
    "      --json           JSON on standard output instead of the table (the last of --csv\n"
    "                       and --json wins)\n"
    "  -o, --output FILE    also write the rows to FILE, as CSV or JSON\n"
    "      --format F       csv or json: the format of --output (default: FILE's extension,\n"
    "                       .csv or .json)\n"
    "      --plot FILE      also write an SVG chart of every swept test\n"
    "      --progress       a progress line on stderr (default when stderr is a terminal)\n"
    "      --quiet          no progress line\n"
    "  --output and --plot files are created before anything is measured: one that cannot be,\n"
    "  or that names an input file or the other output, is a usage error.\n"
    "\n"
    "Other programs' results (perf/compare.sh):\n"
    "      --mpi FILE       Open MPI's results (perf/mpi/osu_rma, osc ucx) as a column;\n"
    "                       repeatable: the median over the files\n"
    "      --mpi-sm FILE    the same for osu_rma under --mca osc sm (its own column)\n"
    "      --shmem FILE     the same for OpenSHMEM (perf/shmem/bench_shmem)\n"
    "      --merge FILE     measure nothing: rows are the median over these --csv outputs of\n"
    "                       earlier runs (repeatable, at most 16 files an option)\n"
    "\n"
    "Information:\n"
    "      --list           list the tests and what one iteration is, and exit\n"
    "      --topology       print the machine's topology (hwloc) and exit\n"
    "  -h, --help           print this help and exit\n"
    "\n"
    "Signals:\n"
    "  On SIGINT or SIGTERM rmx_perf prints the rows measured so far (the table or --csv/--json,\n"
    "  and --output and --plot), ends every rank it forked, and exits with 128 + the signal.\n"
    "\n"
    "Exit status:\n"
    "  0    every point was measured and every output written\n"
    "  1    the run failed (an rmx or UCX error, a rank died, an output could not be written)\n"
    "  2    usage error: an unknown option or test, a bad number or size, a file that cannot be\n"
    "       created or read\n"
    "  130  interrupted by SIGINT (143: SIGTERM)\n";

int perf_launched(void)
{
    return getenv("PMIX_NAMESPACE") != NULL || getenv("RMX_FORK_RANK") != NULL;
}

int perf_rank0(void)
{
    const char *r = getenv(getenv("PMIX_NAMESPACE") != NULL ? "PMIX_RANK" : "RMX_FORK_RANK");
    return r == NULL || strcmp(r, "0") == 0;
}

/* Under a launcher every rank parses the same argv: only rank 0 (or a process that cannot
 * tell) says what is wrong, once, instead of once a rank. */
static int quiet_errors(void)
{
    return !perf_rank0();
}

int perf_usage_error(const char *fmt, ...)
{
    if (!quiet_errors()) {
        va_list ap;
        va_start(ap, fmt);
        fputs("rmx_perf: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputs("\n(rmx_perf --help lists the options)\n", stderr);
        va_end(ap);
    }
    return PERF_USAGE;
}

void perf_print_help(FILE *f)
{
    fputs(help_text, f);
}

size_t perf_largest_size(void)
{
    size_t m = 0;
    for (int i = 0; i < perf_ntests; i++)
        m = perf_tests[i].max_len > m ? perf_tests[i].max_len : m;
    return m;
}

/* "4096", "4K", "1M", "1MB": digits only before the suffix (no sign, no blanks), no overflow. */
static int parse_size(const char *s, size_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    int shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0' || v > (SIZE_MAX >> shift))
        return -1;
    *out = (size_t)v << shift;
    return 0;
}

/* One size of --min, --max or --sizes: a number, within 1 .. the largest any test measures. */
static int check_size(const char *opt, const char *s, size_t *out)
{
    if (parse_size(s, out) != 0)
        return perf_usage_error("%s '%s': not a size (bytes, with an optional K, M or G suffix)",
                                opt, s);
    size_t hi = perf_largest_size();
    if (*out == 0 || *out > hi) {
        char lim[32];
        perf_format_size(lim, sizeof(lim), hi);
        return perf_usage_error("%s '%s': a size is 1 B .. %s (the largest any test measures)",
                                opt, s, lim);
    }
    return 0;
}

/* "8,4K,1M": explicit sizes instead of the power-of-two sweep; they set --min and --max. */
static int parse_size_list(const char *list, perf_opts_t *o)
{
    o->nsizes = 0;
    const char *p = list;
    for (;;) {
        size_t n = strcspn(p, ",");
        char tok[64];
        if (n == 0 || n >= sizeof(tok))
            return perf_usage_error("--sizes '%s': an empty or overlong item", list);
        if (o->nsizes == PERF_MAX_SIZES)
            return perf_usage_error("--sizes '%s': more than %d sizes", list, PERF_MAX_SIZES);
        memcpy(tok, p, n);
        tok[n] = '\0';
        if (check_size("--sizes", tok, &o->sizes[o->nsizes]) != 0)
            return PERF_USAGE;
        o->nsizes++;
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    o->min_size = o->max_size = o->sizes[0];
    for (int i = 1; i < o->nsizes; i++) {
        o->min_size = o->sizes[i] < o->min_size ? o->sizes[i] : o->min_size;
        o->max_size = o->sizes[i] > o->max_size ? o->sizes[i] : o->max_size;
    }
    return 0;
}

/* A whole decimal number within lo .. hi: no trailing characters, no overflow. */
static int check_long(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        if (hi == LONG_MAX)
            return perf_usage_error("%s '%s': need a whole number >= %ld", opt, s, lo);
        return perf_usage_error("%s '%s': need a whole number in %ld .. %ld", opt, s, lo, hi);
    }
    *out = v;
    return 0;
}

/* Seconds: a finite number in lo .. hi (lo itself allowed only when lo_ok). */
static int check_seconds(const char *opt, const char *s, double lo, int lo_ok, double hi,
                         double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || v < lo ||
        (v == lo && !lo_ok) || v > hi)
        return perf_usage_error("%s '%s': need seconds, %s%g and <= %g", opt, s,
                                lo_ok ? ">= " : "> ", lo, hi);
    *out = v;
    return 0;
}

/* "--test put,,get" has an empty name; the names themselves are checked by perf_select_tests. */
static int check_test_list(const char *list)
{
    size_t n = strlen(list);
    if (n == 0 || list[0] == ',' || list[n - 1] == ',' || strstr(list, ",,") != NULL)
        return perf_usage_error("--test '%s': an empty test name", list);
    return 0;
}

enum {
    OPT_THREADS = 250,
    OPT_SHARED_CONTEXT,
    OPT_MIN = 256, OPT_MAX, OPT_ITERS, OPT_WARMUP, OPT_TIME, OPT_RANKS, OPT_TARGET, OPT_BASELINE,
    OPT_IDLE, OPT_CSV, OPT_JSON, OPT_FORMAT, OPT_PLOT, OPT_PROGRESS, OPT_QUIET, OPT_MERGE,
    OPT_LIST, OPT_TOPOLOGY, OPT_EXT /* + perf_ext_t */
};

static const struct option long_opts[] = {
    {"test", required_argument, NULL, 't'},
    {"tests", required_argument, NULL, 't'},
    {"min", required_argument, NULL, OPT_MIN},
    {"max", required_argument, NULL, OPT_MAX},
    {"sizes", required_argument, NULL, 's'},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"time", required_argument, NULL, OPT_TIME},
    {"reps", required_argument, NULL, 'r'},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"target", required_argument, NULL, OPT_TARGET},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"shared-context", no_argument, NULL, OPT_SHARED_CONTEXT},
    {"idle-target", required_argument, NULL, OPT_IDLE},
    {"csv", no_argument, NULL, OPT_CSV},
    {"json", no_argument, NULL, OPT_JSON},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"mpi", required_argument, NULL, OPT_EXT + PERF_EXT_MPI},
    {"mpi-sm", required_argument, NULL, OPT_EXT + PERF_EXT_MPI_SM},
    {"shmem", required_argument, NULL, OPT_EXT + PERF_EXT_SHMEM},
    {"merge", required_argument, NULL, OPT_MERGE},
    {"list", no_argument, NULL, OPT_LIST},
    {"topology", no_argument, NULL, OPT_TOPOLOGY},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* What getopt_long refused: an unknown option, or a value given to a flag (--json=1: getopt
 * then sets optopt to the flag's code, not a character to print). */
static int bad_option(const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (strncmp(arg, "--", 2) == 0 && eq != NULL)
        for (const struct option *lo = long_opts; lo->name != NULL; lo++)
            if (lo->has_arg == no_argument && strlen(lo->name) == (size_t)(eq - arg - 2) &&
                strncmp(lo->name, arg + 2, (size_t)(eq - arg - 2)) == 0)
                return perf_usage_error("option '--%s' takes no value (%s)", lo->name, arg);
    if (strncmp(arg, "--", 2) == 0 || optopt == 0)
        return perf_usage_error("unknown option '%s'", arg);
    return perf_usage_error("unknown option '-%c'", optopt);
}

static int add_file(const char *opt, const char *path, const char **list, int *n)
{
    if (*n == PERF_MAX_FILES)
        return perf_usage_error("%s: more than %d files", opt, PERF_MAX_FILES);
    list[(*n)++] = path;
    return 0;
}

/* One option with its value; 0 or PERF_USAGE. */
static int apply_option(int c, const char *v, perf_opts_t *o)
{
    long l;
    switch (c) {
    case 't':
        o->tests = v;
        return check_test_list(v);
    case OPT_MIN: return check_size("--min", v, &o->min_size);
    case OPT_MAX: return check_size("--max", v, &o->max_size);
    case 's': return parse_size_list(v, o);
    case OPT_ITERS: return check_long("--iters", v, 1, LONG_MAX, &o->iters);
    case OPT_WARMUP: return check_long("--warmup", v, 0, LONG_MAX, &o->warmup);
    case OPT_TIME: return check_seconds("--time", v, 0, 0, MAX_TIME_S, &o->time_s);
    case OPT_IDLE: return check_seconds("--idle-target", v, 0, 1, MAX_IDLE_S, &o->idle_s);
    case 'r':
        if (check_long("--reps", v, 1, MAX_REPS, &l) != 0)
            return PERF_USAGE;
        o->reps = (int)l;
        return 0;
    case OPT_RANKS:
        if (check_long("--ranks", v, 2, MAX_RANKS, &l) != 0)
            return PERF_USAGE;
        o->ranks = (int)l;
        o->ranks_given = 1;
        return 0;
    case OPT_TARGET:
        if (check_long("--target", v, 1, MAX_RANKS * 1024, &l) != 0)
            return PERF_USAGE;
        o->target = (int)l;
        return 0;
    case OPT_THREADS:
        if (check_long("--threads", v, 1, MAX_THREADS, &l) != 0)
            return PERF_USAGE;
        o->threads = (int)l;
        return 0;
    case OPT_SHARED_CONTEXT: o->shared_context = 1; return 0;
    case OPT_BASELINE:
        if (strcmp(v, "ucp") != 0 && strcmp(v, "none") != 0)
            return perf_usage_error("--baseline '%s': need ucp or none", v);
        o->baseline = strcmp(v, "ucp") == 0;
        return 0;
    case OPT_CSV: o->csv = 1, o->json = 0; return 0; /* the last wins: compare.sh appends --csv */
    case OPT_JSON: o->json = 1, o->csv = 0; return 0;
    case 'o': o->output = v; return 0;
    case OPT_FORMAT:
        if (strcmp(v, "csv") != 0 && strcmp(v, "json") != 0)
            return perf_usage_error("--format '%s': need csv or json", v);
        o->out_format = strcmp(v, "csv") == 0 ? PERF_FMT_CSV : PERF_FMT_JSON;
        return 0;
    case OPT_PLOT: o->plot = v; return 0;
    case OPT_PROGRESS: o->progress = 1; return 0;
    case OPT_QUIET: o->progress = 0; return 0;
    case OPT_MERGE: return add_file("--merge", v, o->merge, &o->nmerge);
    case OPT_LIST: o->list = 1; return 0;
    case OPT_TOPOLOGY: o->topology = 1; return 0;
    }
    if (c >= OPT_EXT && c < OPT_EXT + PERF_NEXT) {
        perf_ext_t x = (perf_ext_t)(c - OPT_EXT);
        return add_file(perf_ext[x].option, v, o->ext_csv[x], &o->next[x]);
    }
    return PERF_USAGE;
}

/* --output's format: --format, else the file's extension. */
static int output_format(perf_opts_t *o)
{
    if (o->output == NULL) {
        if (o->out_format != PERF_FMT_NONE)
            return perf_usage_error("--format applies to --output FILE, which is missing");
        return 0;
    }
    if (o->out_format != PERF_FMT_NONE)
        return 0;
    const char *dot = strrchr(o->output, '.');
    if (dot != NULL && strcmp(dot, ".csv") == 0)
        o->out_format = PERF_FMT_CSV;
    else if (dot != NULL && strcmp(dot, ".json") == 0)
        o->out_format = PERF_FMT_JSON;
    else
        return perf_usage_error("--output '%s': name it .csv or .json, or give --format",
                                o->output);
    return 0;
}

/* --threads N > 1: only put_rate and fadd (their bodies keep no state a second thread would
 * share: each thread gets its own buffer and its own part of the window), and no raw-UCP column
 * (its worker is a single thread's).  No --test: those two. */
static int check_threaded_tests(perf_opts_t *o)
{
    o->baseline = 0;
    if (o->tests == NULL) {
        o->tests = "put_rate,fadd";
        return 0;
    }
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", o->tests);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save))
        if (strcmp(tok, "put_rate") != 0 && strcmp(tok, "fadd") != 0)
            return perf_usage_error("--threads: '%s' is not put_rate or fadd (only those two "
                                    "tests run on several threads)", tok);
    return 0;
}

/* What the options say together: the sweep is not empty and the output format is known. */
static int check_together(perf_opts_t *o)
{
    if (o->nsizes == 0 && o->min_size > o->max_size)
        return perf_usage_error("--min is larger than --max");
    if (o->target > 0 && o->ranks_given && o->target >= o->ranks)
        return perf_usage_error("--target %d: need a rank below --ranks %d", o->target,
                                o->ranks);
    if (o->threads > 1 && check_threaded_tests(o) != 0)
        return PERF_USAGE;
    if (o->shared_context && o->threads < 2)
        return perf_usage_error("--shared-context: only with --threads N > 1 (one thread shares "
                                "nothing)");
    return output_format(o);
}

int perf_parse_args(int argc, char **argv, perf_opts_t *o)
{
    *o = (perf_opts_t){.min_size = 1, .max_size = MiB(4), .iters = 1000000, .warmup = 1000,
                       .time_s = 0.02, .reps = 3, .ranks = 2, .target = -1, .baseline = 1,
                       .progress = -1, .threads = 1};
    opterr = 0; /* our own messages, said once under a launcher */
    optind = 1;
    int c, longidx;
    while ((c = getopt_long(argc, argv, ":t:s:r:o:h", long_opts, &longidx)) != -1) {
        if (c == 'h') {
            perf_print_help(stdout);
            return PERF_DONE;
        }
        if (c == '?')
            return bad_option(argv[optind - 1]);
        if (c == ':')
            return perf_usage_error("option '%s' needs a value", argv[optind - 1]);
        if (apply_option(c, optarg, o) != 0)
            return PERF_USAGE;
    }
    if (optind < argc)
        return perf_usage_error("unexpected argument '%s'", argv[optind]);
    return check_together(o);
}
