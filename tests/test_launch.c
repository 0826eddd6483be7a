/* test_launch.c — rmx jobs under real launchers: Slurm's `srun --mpi=pmix` on a single-node Slurm
 * the test starts itself (tests/slurm_run.sh), Open MPI's mpirun; and the launchers rmx
 * recognises but cannot join without a PMIx server (srun without --mpi=pmix, PMI-1/PMI-2, ranks
 * started by hand with Open MPI's variables), which must fail in rmx_init with a message naming
 * the launcher and what to do — not run as N jobs of one rank.  Every job is
 * tests/prog_launch.c: put ring, get back, an atomic counter, rank agreed with the launcher. */
#include <sys/wait.h>
#include "harness.h"

#ifndef RMX_TEST_SRC_DIR
#define RMX_TEST_SRC_DIR "tests"
#endif

static int count_of(const char *haystack, const char *needle)
{
    int n = 0;
    for (const char *s = strstr(haystack, needle); s != NULL; s = strstr(s + 1, needle))
        n++;
    return n;
}

/* The script's verdict: its last line ("PASS", "SKIP: why", "FAIL: why"). */
static const char *last_line(char *out)
{
    size_t len = strlen(out);
    while (len > 0 && out[len - 1] == '\n')
        out[--len] = '\0';
    char *nl = strrchr(out, '\n');
    return nl != NULL ? nl + 1 : out;
}

/* A single-node Slurm of the test's own; skipped (visibly, with the reason) where Slurm is not
 * installed or cannot run in this machine or container. */
Test(launch, srun_mpi_pmix_2_ranks_and_srun_without_pmix, .timeout = RMX_T(60) * 3 + 60)
{
    char *out;
    char cmd[1024];
    /* make valgrind runs the script natively (--trace-children-skip-by-arg), and srun's ranks
     * under RMX_TEST_WRAPPER */
    snprintf(cmd, sizeof(cmd), "SLURM_RUN_STEP_TIMEOUT=%d bash %s/slurm_run.sh %s ", RMX_T(60),
             RMX_TEST_SRC_DIR, RMX_TEST_BIN_DIR);
    int rc = rmx_test_run(cmd, &out);
    const char *verdict = last_line(out);
    if (rc == 77) {
        if (strncmp(verdict, "SKIP: ", 6) == 0)
            verdict += 6;
        fprintf(stderr, "launch::srun_mpi_pmix_2_ranks_and_srun_without_pmix: skipped: %s\n",
                verdict);
        char reason[512];
        snprintf(reason, sizeof(reason), "%s", verdict);
        free(out);
        cr_skip_test("%s", reason);
    }
    cr_expect_eq(rc, 0, "tests/slurm_run.sh exited %d: %s\nits output:\n%s", rc, verdict, out);
    cr_expect_str_eq(verdict, "PASS", "its output:\n%s", out);
    free(out);
}

Test(launch, mpirun_2_ranks, .timeout = RMX_T(150))
{
    char *out;
    char cmd[1024];
    const char *wrapper = getenv("RMX_TEST_WRAPPER"); /* make valgrind: each rank under it */
    snprintf(cmd, sizeof(cmd),
             "timeout %d mpirun --allow-run-as-root --oversubscribe -np 2 %s %s/prog_launch 2",
             RMX_T(120), wrapper != NULL ? wrapper : "", RMX_TEST_BIN_DIR);
    int rc = rmx_test_run(cmd, &out);
    cr_expect_eq(rc, 0, "mpirun exited %d; its output:\n%s", rc, out);
    cr_expect_eq(count_of(out, ": OK\n"), 2, "not every rank said OK:\n%s", out);
    cr_expect_eq(count_of(out, "rank 0 of 2: OK"), 1, "%s", out);
    cr_expect_eq(count_of(out, "rank 1 of 2: OK"), 1, "%s", out);
    free(out);
}

/* Every launcher variable rmx looks at, and PMIx's and rmx_fork_exec's: the child sees only the
 * ones a case sets, whatever this test runs under. */
#define UNSET_LAUNCHERS                                                                  \
    "env -u PMIX_NAMESPACE -u PMIX_RANK -u PMIX_SERVER_URI41 -u PMIX_SERVER_URI4 "       \
    "-u RMX_FORK_FD -u RMX_FORK_RANK -u RMX_FORK_SIZE "                                  \
    "-u SLURM_STEP_NUM_TASKS -u SLURM_PROCID -u PMI_SIZE -u PMI_RANK "                   \
    "-u OMPI_COMM_WORLD_SIZE -u OMPI_COMM_WORLD_RANK -u MV2_COMM_WORLD_SIZE "            \
    "-u MV2_COMM_WORLD_RANK "

/* One rank of a job started by a launcher without a PMIx server: rmx_init fails
 * (RMX_ERR_BOOTSTRAP: prog_launch exits 1 after printing the error's text) and rmx's message
 * names the launcher, its variable and what to do; the rank does not go on as a job of its own. */
static void without_pmix(const char *env, const char *launcher, const char *size_var)
{
    char *out;
    char cmd[1024];
    /* A child of this process: make valgrind follows it (--trace-children), no wrapper. */
    snprintf(cmd, sizeof(cmd), UNSET_LAUNCHERS "%s %s/prog_launch 2", env, RMX_TEST_BIN_DIR);
    int rc = rmx_test_run(cmd, &out);
    cr_expect_eq(rc, 1, "%s: prog_launch exited %d:\n%s", env, rc, out);
    char said[256];
    snprintf(said, sizeof(said), "started by %s as one of %s ranks", launcher,
             size_var);
    cr_expect_neq(strstr(out, said), NULL, "%s: rmx did not say `%s`:\n%s", env, said, out);
    cr_expect_neq(strstr(out, "without a PMIx server"), NULL, "%s:\n%s", env, out);
    cr_expect_neq(strstr(out, "srun --mpi=pmix"), NULL, "%s: no advice:\n%s", env, out);
    cr_expect_neq(strstr(out, rmx_strerror(RMX_ERR_BOOTSTRAP)), NULL,
                  "%s: rmx_init did not return RMX_ERR_BOOTSTRAP:\n%s", env, out);
    cr_expect_eq(strstr(out, ": OK"), NULL, "%s: ran as a job of its own:\n%s", env, out);
    free(out);
}

Test(launch, srun_variables_without_pmix_is_a_clear_error, .timeout = RMX_T(30))
{
    without_pmix("SLURM_STEP_NUM_TASKS=2 SLURM_PROCID=1", "Slurm's srun",
                 "SLURM_STEP_NUM_TASKS=2");
}

Test(launch, pmi1_variables_without_pmix_is_a_clear_error, .timeout = RMX_T(30))
{
    without_pmix("PMI_SIZE=2 PMI_RANK=1", "a PMI-1/PMI-2 launcher (Hydra, srun --mpi=pmi2)", "PMI_SIZE=2");
}

Test(launch, ompi_variables_by_hand_is_a_clear_error, .timeout = RMX_T(30))
{
    without_pmix("OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0", "Open MPI (without its PMIx server)",
                 "OMPI_COMM_WORLD_SIZE=2");
}
