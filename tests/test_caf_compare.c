/*
 * test_caf_compare.c — libcaf_rmx and OpenCoarrays held to the same answers.  Every program of
 * tests/caf is also built against OpenCoarrays' libcaf_openmpi (the Makefile's `caf` rule, into
 * BUILD/tests/caf-oca/); here both builds run under mpirun with the same image count (2 and 4),
 * both must exit 0, and their standard outputs must be equal line by line: nothing is stripped,
 * and the lines are sorted first only for the programs tests/caf/compare.conf marks `sort` (the
 * images print in no fixed order).  stderr is not compared (mpirun's and each runtime's own
 * diagnostics: OpenCoarrays prints a STOP line per image, Open MPI abort banners), only shown on a
 * mismatch.  compare.conf is the one list of the programs left out, each with its reason; the
 * Makefile reads the same file.  Programs are found by scanning tests/caf, so a new one is
 * compared without an edit here.  Without OpenCoarrays (no `caf`) everything is skipped, saying so.
 */
#include <dirent.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "harness.h"
#include <criterion/parameterized.h>

#define CMP_TIMEOUT_S 60
#define CMP_CONF RMX_TEST_SRC_DIR "/caf/compare.conf"
#define CMP_MAX_PROGS 256

struct cmp_run {
    char prog[128];
    int np;
};

/* 1 when compare.conf has an `action` (skip, sort) rule matching prog, its reason copied into
 * reason; 0 when none matches. */
static int conf_lookup(const char *prog, const char *action, char *reason, size_t cap)
{
    FILE *f = fopen(CMP_CONF, "r");
    cr_assert(f != NULL, "cannot open %s", CMP_CONF);
    char line[1024], act[16], pat[128];
    int found = 0, used = 0;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        if (line[0] == '#' || sscanf(line, "%15s %127s %n", act, pat, &used) < 2)
            continue;
        if (strcmp(act, action) == 0 && fnmatch(pat, prog, 0) == 0) {
            found = 1;
            if (reason != NULL) {
                snprintf(reason, cap, "%s", line + used);
                reason[strcspn(reason, "\n")] = '\0';
            }
        }
    }
    fclose(f);
    return found;
}

static int opencoarrays_installed(void)
{
    return system("command -v caf > /dev/null 2>&1") == 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The programs of tests/caf, sorted by name (so the parameters come in a stable order). */
static size_t list_programs(char *names[], size_t cap)
{
    DIR *d = opendir(RMX_TEST_SRC_DIR "/caf");
    size_t n = 0;
    if (d == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < cap;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && len < 128 && strcmp(e->d_name + len - 4, ".f90") == 0)
            names[n++] = strndup(e->d_name, len - 4);
    }
    closedir(d);
    qsort(names, n, sizeof(names[0]), cmp_name);
    return n;
}

static void free_params(struct criterion_test_params *crp)
{
    cr_free(crp->params);
}

ParameterizedTestParameters(caf_compare, programs)
{
    char *names[CMP_MAX_PROGS];
    size_t n = list_programs(names, CMP_MAX_PROGS);
    static const int nps[] = {2, 4};
    size_t count = n * 2;
    struct cmp_run *runs = cr_malloc(sizeof(*runs) * (count > 0 ? count : 1));
    if (runs == NULL) {
        fprintf(stderr, "caf_compare: out of memory for %zu parameters\n", count);
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < 2; j++) {
            snprintf(runs[i * 2 + j].prog, sizeof(runs[0].prog), "%s", names[i]);
            runs[i * 2 + j].np = nps[j];
        }
        free(names[i]);
    }
    return cr_make_param_array(struct cmp_run, runs, count, free_params);
}

struct cmp_output {
    int rc;
    char *out, *err;
};

/* Run bin on np images; stdout and stderr kept apart (mpirun forwards each separately). */
static struct cmp_output run_job(const char *bin, int np)
{
    char out[] = "/tmp/rmx_cmp_out_XXXXXX", err[] = "/tmp/rmx_cmp_err_XXXXXX";
    int fo = mkstemp(out), fe = mkstemp(err);
    cr_assert(fo >= 0 && fe >= 0);
    close(fo);
    close(fe);
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout %d mpirun "
             "--allow-run-as-root --oversubscribe -np %d %s > %s 2> %s < /dev/null",
             RMX_T(CMP_TIMEOUT_S), np, bin, out, err);
    int ws = system(cmd);
    struct cmp_output r = {WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws), rmx_test_slurp(out),
                           rmx_test_slurp(err)};
    unlink(out);
    unlink(err);
    return r;
}

/* Split text into lines (in place); *n lines. */
static char **split_lines(char *text, size_t *n)
{
    size_t cap = 16, k = 0;
    char **v = malloc(cap * sizeof(*v));
    cr_assert(v != NULL);
    for (char *p = text; *p != '\0';) {
        char *nl = strchr(p, '\n');
        if (k == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof(*v));
            cr_assert(v != NULL);
        }
        v[k++] = p;
        if (nl == NULL)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    *n = k;
    return v;
}

/* 0 when equal; else 1 + the index of the first differing line (after sorting when asked). */
static size_t first_difference(const char *a, const char *b, int sorted)
{
    char *ca = strdup(a), *cb = strdup(b);
    size_t na, nb, diff = 0;
    char **la = split_lines(ca, &na), **lb = split_lines(cb, &nb);
    if (sorted) {
        qsort(la, na, sizeof(*la), cmp_name);
        qsort(lb, nb, sizeof(*lb), cmp_name);
    }
    for (size_t i = 0; diff == 0 && i < (na > nb ? na : nb); i++)
        if (i >= na || i >= nb || strcmp(la[i], lb[i]) != 0)
            diff = i + 1;
    free(la);
    free(lb);
    free(ca);
    free(cb);
    return diff;
}

static void show(const char *who, const struct cmp_output *o)
{
    fprintf(stderr, "---- %s: exit %d, stdout:\n%s---- %s stderr:\n%s", who, o->rc, o->out, who,
            o->err);
}

ParameterizedTest(struct cmp_run *r, caf_compare, programs,
                  .timeout = RMX_T(2 * CMP_TIMEOUT_S + 30))
{
    char reason[400];
    if (!opencoarrays_installed())
        cr_skip_test("OpenCoarrays (caf) not installed");
    if (conf_lookup(r->prog, "skip", reason, sizeof(reason)))
        cr_skip_test("%s: not compared with OpenCoarrays: %s", r->prog, reason);
    char rmx_bin[512], oca_bin[512];
    snprintf(rmx_bin, sizeof(rmx_bin), "%s/caf/%s", RMX_TEST_BIN_DIR, r->prog);
    snprintf(oca_bin, sizeof(oca_bin), "%s/caf-oca/%s", RMX_TEST_BIN_DIR, r->prog);
    struct stat st;
    cr_assert(stat(oca_bin, &st) == 0,
              "%s missing: make tests builds it with OpenCoarrays' caf (or list %s in %s)", oca_bin,
              r->prog, CMP_CONF);

    struct cmp_output rmx = run_job(rmx_bin, r->np), oca = run_job(oca_bin, r->np);
    int sorted = conf_lookup(r->prog, "sort", NULL, 0);
    size_t diff = first_difference(rmx.out, oca.out, sorted);
    int ok = rmx.rc == 0 && oca.rc == 0 && diff == 0;
    if (!ok) {
        fprintf(stderr, "==== %s on %d images: libcaf_rmx and OpenCoarrays disagree", r->prog,
                r->np);
        if (diff != 0)
            fprintf(stderr, " from %sline %zu of stdout", sorted ? "sorted " : "", diff);
        fprintf(stderr, "\n");
        show("libcaf_rmx", &rmx);
        show("OpenCoarrays", &oca);
        if (oca.rc != 0)
            fprintf(stderr, "==== (a program OpenCoarrays cannot run is listed in %s, with the "
                            "reason)\n", CMP_CONF);
        else if (diff != 0 && !sorted)
            fprintf(stderr,
                    "==== (if the images print in no fixed order: a `sort %s` line in %s)\n",
                    r->prog, CMP_CONF);
    }
    cr_expect_eq(rmx.rc, 0, "%s on %d images: libcaf_rmx build exited %d", r->prog, r->np, rmx.rc);
    cr_expect_eq(oca.rc, 0, "%s on %d images: OpenCoarrays build exited %d", r->prog, r->np,
                 oca.rc);
    cr_expect_eq(diff, 0, "%s on %d images: outputs differ from line %zu", r->prog, r->np, diff);
    free(rmx.out);
    free(rmx.err);
    free(oca.out);
    free(oca.err);
}

/* One visible line: what is compared and what is not (a skipped Criterion test alone is silent). */
Test(caf_compare, coverage)
{
    if (!opencoarrays_installed()) {
        fprintf(stderr, "caf_compare: OpenCoarrays (caf) not installed: libcaf_rmx is not compared "
                        "with it (apt-get install libcoarrays-openmpi-dev)\n");
        cr_skip_test("OpenCoarrays (caf) not installed");
    }
    char *names[CMP_MAX_PROGS];
    size_t n = list_programs(names, CMP_MAX_PROGS), skipped = 0;
    cr_assert(n > 0, "no programs in %s/caf", RMX_TEST_SRC_DIR);
    fprintf(stderr, "caf_compare: not compared with OpenCoarrays:");
    for (size_t i = 0; i < n; i++) {
        if (conf_lookup(names[i], "skip", NULL, 0)) {
            fprintf(stderr, " %s", names[i]);
            skipped++;
        }
        free(names[i]);
    }
    fprintf(stderr, "%s (%zu of %zu programs compared; reasons in %s)\n", skipped ? "" : " none",
            n - skipped, n, CMP_CONF);
}
