/*
 * test_caf.c — Fortran coarrays on rmx: each Fortran program of tests/caf, compiled by gfortran
 * -fcoarray=lib against libcaf_rmx, runs under `mpirun -np N` (PMIx) with 2 and 4 images.  The
 * programs check their own results and ERROR STOP on any mismatch; here the job's exit status is
 * asserted, and for the fail_* programs that the job fails, with the expected message.
 */
#include <sys/wait.h>
#include "harness.h"

#define CAF_TIMEOUT_S 60

/* Run prog on np images; its combined output goes to *out (malloc'd, may be NULL). */
static int run_caf(const char *prog, int np, char **out)
{
    char log[] = "/tmp/rmx_caf_XXXXXX";
    int fd = mkstemp(log);
    cr_assert(fd >= 0);
    close(fd);
    /* Under `make asan` no leak report for the Fortran programs: a main program's allocatables
     * and PMIx's internals are legitimately still allocated at exit (libcaf_rmx frees its own). */
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout %d mpirun "
             "--allow-run-as-root --oversubscribe -np %d %s/caf/%s > %s 2>&1",
             CAF_TIMEOUT_S, np, RMX_TEST_BIN_DIR, prog, log);
    int ws = system(cmd);
    int rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    FILE *f = fopen(log, "r");
    char *text = NULL;
    size_t cap = 0;
    if (f != NULL) {
        ssize_t n = getdelim(&text, &cap, '\0', f);
        if (n < 0) {
            free(text);
            text = NULL;
        }
        fclose(f);
    }
    unlink(log);
    if (rc != 0 && text != NULL && out == NULL)
        fprintf(stderr, "%s -np %d (exit %d):\n%s\n", prog, np, rc, text);
    if (out != NULL)
        *out = text;
    else
        free(text);
    return rc;
}

static void expect_pass(const char *prog, int np)
{
    cr_expect_eq(run_caf(prog, np, NULL), 0, "%s on %d images failed", prog, np);
}

/* The job must fail (not time out: 124 is timeout's status) and say `text`. */
static void expect_failure_saying(const char *prog, int np, const char *text)
{
    char *out = NULL;
    int rc = run_caf(prog, np, &out);
    cr_expect_neq(rc, 0, "%s on %d images should have failed", prog, np);
    cr_expect_neq(rc, 124, "%s on %d images hung", prog, np);
    cr_expect(out != NULL && strstr(out, text) != NULL, "%s: no \"%s\" in:\n%s", prog, text,
              out != NULL ? out : "(no output)");
    free(out);
}

#define CAF_TEST(prog)                                                                   \
    Test(caf, prog##_2_images, .timeout = RMX_T(90)) { expect_pass(#prog, 2); }                 \
    Test(caf, prog##_4_images, .timeout = RMX_T(90)) { expect_pass(#prog, 4); }

CAF_TEST(caf_images)
CAF_TEST(caf_rma)
CAF_TEST(caf_segments)
CAF_TEST(caf_coll)
CAF_TEST(caf_stop)
CAF_TEST(caf_stopped)
CAF_TEST(caf_atomic)
CAF_TEST(caf_lock)
CAF_TEST(caf_self_order)
CAF_TEST(caf_vector)
CAF_TEST(caf_convert)

Test(caf, error_stop_ends_every_image_with_failure, .timeout = RMX_T(90))
{
    expect_failure_saying("fail_error_stop", 2, "ERROR STOP 7");
}

Test(caf, unsupported_feature_fails_naming_the_entry_point, .timeout = RMX_T(90))
{
    expect_failure_saying("fail_unsupported", 2, "_gfortran_caf_get: not supported");
}
