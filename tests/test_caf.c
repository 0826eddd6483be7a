/*
 * test_caf.c — Fortran coarrays on rmx: each Fortran program of tests/caf, built by build/rmxcaf
 * (gfortran -fcoarray=lib against libcaf_rmx), runs through build/rmxrun with 2, 3 and 4 images
 * under both launchers: mpirun (PMIx bootstrap) and rmx's fork launcher (rmx_fork_exec, the
 * RMX_FORK_* bootstrap).  The programs check their own results and ERROR STOP on any mismatch;
 * here the job's exit status is asserted, and for the fail_* programs that the job fails, with
 * the expected message.
 */
#include "harness.h"

#define CAF_TIMEOUT_S 60

/* Run prog on np images under launcher ("mpirun" or "fork"); its combined output goes to *out
 * (malloc'd, may be NULL). */
static int run_caf_with(const char *launcher, const char *prog, int np, char **out)
{
    /* Under `make asan` no leak report for the Fortran programs: a main program's allocatables
     * and PMIx's internals are legitimately still allocated at exit (libcaf_rmx frees its own). */
    char cmd[1024];
    /* rmxrun's own timeout (124 under either launcher); timeout(1) only in case rmxrun hangs. */
    snprintf(cmd, sizeof(cmd),
             "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout %d "
             "%s/../rmxrun --launcher %s --timeout %d -n %d %s/caf/%s",
             CAF_TIMEOUT_S + 15, RMX_TEST_BIN_DIR, launcher, CAF_TIMEOUT_S, np, RMX_TEST_BIN_DIR,
             prog);
    char *text;
    int rc = rmx_test_run(cmd, &text);
    if (rc != 0 && out == NULL)
        fprintf(stderr, "%s -np %d under %s (exit %d):\n%s\n", prog, np, launcher, rc, text);
    if (out != NULL)
        *out = text;
    else
        free(text);
    return rc;
}

static void expect_pass_with(const char *launcher, const char *prog, int np)
{
    cr_expect_eq(run_caf_with(launcher, prog, np, NULL), 0, "%s on %d images under %s failed",
                 prog, np, launcher);
}

/* The job must fail (not time out: 124 is timeout's status) and say `text`, under either
 * launcher. */
static void expect_failure_saying(const char *prog, int np, const char *text)
{
    static const char *const launchers[] = {"mpirun", "fork"};
    for (int l = 0; l < 2; l++) {
        char *out = NULL;
        int rc = run_caf_with(launchers[l], prog, np, &out);
        cr_expect_neq(rc, 0, "%s on %d images under %s should have failed", prog, np,
                      launchers[l]);
        cr_expect_neq(rc, 124, "%s on %d images under %s hung", prog, np, launchers[l]);
        cr_expect(out != NULL && strstr(out, text) != NULL, "%s under %s: no \"%s\" in:\n%s",
                  prog, launchers[l], text, out != NULL ? out : "(no output)");
        free(out);
    }
}

/* Every program on 2, 3 and 4 images, under mpirun and under the fork launcher. */
#define CAF_TEST(prog)                                                                      \
    CAF_TEST_ON(prog, 2, mpirun) CAF_TEST_ON(prog, 3, mpirun) CAF_TEST_ON(prog, 4, mpirun)    \
    CAF_TEST_ON(prog, 2, fork) CAF_TEST_ON(prog, 3, fork) CAF_TEST_ON(prog, 4, fork)
#define CAF_TEST_ON(prog, np, launcher)                                                     \
    Test(caf, prog##_##np##_images_##launcher, .timeout = RMX_T(90))                        \
    {                                                                                       \
        expect_pass_with(#launcher, #prog, np);                                             \
    }

CAF_TEST(caf_images)
CAF_TEST(caf_rma)
CAF_TEST(caf_segments)
CAF_TEST(caf_coll)
CAF_TEST(caf_co_broadcast)
CAF_TEST(caf_co_reduce)
CAF_TEST(caf_coll_team)
CAF_TEST(caf_coll_stat)
CAF_TEST(caf_stop)
CAF_TEST(caf_stopped)
CAF_TEST(caf_atomic)
CAF_TEST(caf_lock)
CAF_TEST(caf_components)
CAF_TEST(caf_teams)
CAF_TEST(caf_team_end)
CAF_TEST(caf_fail_image) /* FAIL IMAGE: needs no mpirun option (the image leaves as if finished) */
CAF_TEST(caf_fail_team)
CAF_TEST(caf_random_init)
CAF_TEST(caf_events)
CAF_TEST(caf_self_order)
CAF_TEST(caf_vector)
CAF_TEST(caf_convert)
CAF_TEST(caf_vector_ref)
CAF_TEST(caf_answers)
CAF_TEST(caf_nested)
CAF_TEST(caf_oom)

/* Run caf_random_init on 2 images: its exit status, and the hexadecimal values on its lines
 * "repeatable draw X" and "non-repeatable draw Y" (image 1's first draws, on stderr).  Its own
 * mpirun, so it does not depend on how the harness above runs programs; no leak report under
 * make asan, as for every Fortran program (run_caf_with). */
static int random_init_draws(char rep[32], char other[32])
{
    static const char k_rep[] = "repeatable draw ", k_other[] = "non-repeatable draw ";
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout %d mpirun "
             "--allow-run-as-root --oversubscribe -np 2 %s/caf/caf_random_init 2>&1",
             CAF_TIMEOUT_S, RMX_TEST_BIN_DIR);
    rep[0] = other[0] = '\0';
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char line[512];
    while (fgets(line, sizeof(line), p) != NULL) {
        if (strncmp(line, k_rep, strlen(k_rep)) == 0)
            sscanf(line + strlen(k_rep), "%31[0-9A-F]", rep);
        else if (strncmp(line, k_other, strlen(k_other)) == 0)
            sscanf(line + strlen(k_other), "%31[0-9A-F]", other);
    }
    return pclose(p);
}

/* RANDOM_INIT across runs: REPEATABLE=.true. the same numbers in every run, .false. others. */
Test(caf, random_init_repeatable_across_runs, .timeout = RMX_T(120))
{
    char rep[2][32], other[2][32];
    for (int run = 0; run < 2; run++) {
        cr_assert_eq(random_init_draws(rep[run], other[run]), 0, "caf_random_init failed");
        cr_assert(rep[run][0] != '\0' && other[run][0] != '\0', "no draws printed");
    }
    cr_expect_str_eq(rep[0], rep[1], "RANDOM_INIT(.true., .false.) differs between runs");
    cr_expect_str_neq(other[0], other[1], "RANDOM_INIT(.false., .false.) repeats between runs");
}

Test(caf, error_stop_ends_every_image_with_failure, .timeout = RMX_T(90))
{
    expect_failure_saying("fail_error_stop", 2, "ERROR STOP 7");
}

Test(caf, critical_held_by_a_failed_image_ends_the_program_naming_it, .timeout = RMX_T(90))
{
    expect_failure_saying("fail_critical_failed", 2,
                          "lock variable was held by image 2, which has failed");
}

Test(caf, unsupported_feature_fails_naming_the_entry_point, .timeout = RMX_T(90))
{
    expect_failure_saying("fail_unsupported", 2, "_gfortran_caf_get: not supported");
}

Test(caf, unallocated_component_on_another_image_is_an_error, .timeout = RMX_T(90))
{
    expect_failure_saying("fail_unallocated_component", 2, "not allocated on image 2");
}

Test(caf, deferred_length_component_without_length_fails_naming_it, .timeout = RMX_T(90))
{
    expect_failure_saying("fail_deferred_length", 2,
                          "_gfortran_caf_send_by_ref: not supported: a deferred-length");
}
