/*
 * test_examples.c — the programs of tests/examples, run as their users would run them (the
 * command at the head of each file): the C examples under Open MPI's mpirun (PMIx bootstrap)
 * and under rmx's fork launcher build/rmx_forkrun, the MPI example under mpirun, the coarray
 * example through build/rmxrun under both launchers.  `make tests` builds them; this builds
 * nothing.  Each example checks its own results and exits non-zero on a wrong one; here the
 * exit status is asserted and the lines the example prints when it is right are looked for.
 */
#include "harness.h"

#define EX_DIR RMX_TEST_BIN_DIR "/examples"
#define EX_TIMEOUT_S RMX_T(60)

/* How a user starts `prog args` on np ranks with launcher "mpirun" or "fork".  RMX_TEST_WRAPPER
 * (make valgrind) goes in front of each rank under mpirun, which valgrind does not follow (it
 * follows rmx_forkrun's children itself), when `wrap`: not for an MPI program, whose library
 * memcheck does not know. */
static void launch_cmd(char *cmd, size_t len, const char *launcher, int np, const char *prog,
                       const char *args, int wrap)
{
    const char *wrapper = wrap ? getenv("RMX_TEST_WRAPPER") : NULL;
    if (strcmp(launcher, "mpirun") == 0)
        snprintf(cmd, len,
                 "timeout %d mpirun --allow-run-as-root --oversubscribe -np %d %s %s/%s %s",
                 EX_TIMEOUT_S, np, wrapper != NULL ? wrapper : "", EX_DIR, prog, args);
    else
        snprintf(cmd, len, "%s/../rmx_forkrun --timeout %d -n %d %s/%s %s", RMX_TEST_BIN_DIR,
                 EX_TIMEOUT_S, np, EX_DIR, prog, args);
}

/* The example exits 0 and prints each of the NULL-terminated lines `want`. */
static void expect_example(const char *cmd, const char *const *want)
{
    char *out;
    int rc = rmx_test_run(cmd, &out);
    cr_expect_eq(rc, 0, "`%s` exited with %d:\n%s", cmd, rc, out);
    for (int i = 0; want[i] != NULL; i++)
        cr_expect(strstr(out, want[i]) != NULL, "`%s` did not print \"%s\":\n%s", cmd, want[i],
                  out);
    free(out);
}

static void expect_c_example(const char *launcher, const char *prog, const char *args,
                             const char *const *want)
{
    char cmd[1024];
    launch_cmd(cmd, sizeof(cmd), launcher, 2, prog, args, 1);
    expect_example(cmd, want);
}

/* ---- hello: put, get, fetch-add on 2 ranks */
static const char *const hello_lines[] = {
    "rank 0: put: my word[0] is 101 (from rank 1)",
    "rank 1: put: my word[0] is 100 (from rank 0)",
    "rank 0: get: rank 1's word[0] is 100",
    "rank 1: get: rank 0's word[0] is 101",
    "rank 0: counter is 3 (want 3)",
    "rank 0: hello ok",
    "rank 1: hello ok",
    NULL,
};
Test(examples, hello_mpirun, .timeout = RMX_T(90))
{
    expect_c_example("mpirun", "hello", "", hello_lines);
}
Test(examples, hello_forkrun, .timeout = RMX_T(90))
{
    expect_c_example("fork", "hello", "", hello_lines);
}

/* The example's own check of its launch: one rank is refused with a message, not a crash. */
Test(examples, hello_on_one_rank_says_it_needs_two, .timeout = RMX_T(90))
{
    char cmd[1024], *out;
    snprintf(cmd, sizeof(cmd), "%s/../rmx_forkrun --timeout %d -n 1 %s/hello", RMX_TEST_BIN_DIR,
             EX_TIMEOUT_S, EX_DIR);
    int rc = rmx_test_run(cmd, &out);
    cr_expect(rc != 0 && rc != 124, "`%s` exited with %d", cmd, rc);
    cr_expect(strstr(out, "hello needs at least 2 ranks, got 1") != NULL, "no message in:\n%s",
              out);
    free(out);
}

/* ---- counter: 2 ranks x 1000 locked get-add-put on rank 0 */
static const char *const counter_lines[] = {
    "counter: 2 ranks x 1000 increments = 2000 (want 2000)",
    NULL,
};
Test(examples, counter_mpirun, .timeout = RMX_T(90))
{
    expect_c_example("mpirun", "counter", "1000", counter_lines);
}
Test(examples, counter_forkrun, .timeout = RMX_T(90))
{
    expect_c_example("fork", "counter", "1000", counter_lines);
}

/* ---- halo: rmx_put_sub of ghost columns, compared with the whole grid */
static const char *const halo_lines[] = {
    "rank 0: halo: 5 iterations, 0 of 24 cells differ from the whole-grid result",
    "rank 1: halo: 5 iterations, 0 of 24 cells differ from the whole-grid result",
    NULL,
};
Test(examples, halo_mpirun, .timeout = RMX_T(90))
{
    expect_c_example("mpirun", "halo", "", halo_lines);
}
Test(examples, halo_forkrun, .timeout = RMX_T(90))
{
    expect_c_example("fork", "halo", "", halo_lines);
}

/* ---- mpi_embed: MPI launches and bootstraps rmx through rmx_config_t.oob.  Open MPI keeps
 * memory to the end of the process, so no leak report under make asan (as for test_caf). */
Test(examples, mpi_embed_mpirun, .timeout = RMX_T(90))
{
    if (access(EX_DIR "/mpi_embed", X_OK) != 0)
        cr_skip_test("no %s/mpi_embed: mpicc was not found when it was built (make deps installs "
                     "libopenmpi-dev)", EX_DIR);
    static const char *const lines[] = {
        "mpi_embed: 2 ranks, 1024 doubles each put by rmx, 0 wrong",
        NULL,
    };
    char cmd[1024];
    launch_cmd(cmd, sizeof(cmd), "mpirun", 2, "mpi_embed", "", 0);
    char env_cmd[1200];
    snprintf(env_cmd, sizeof(env_cmd),
             "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 %s", cmd);
    expect_example(env_cmd, lines);
}

/* ---- coarray: build/rmxrun, under mpirun (its default when mpirun is installed) and fork */
static void expect_coarray(const char *launcher)
{
    static const char *const lines[] = {
        "image 1: greeting from image 1: 101 102 103 104 105",
        "image 2: greeting from image 1: 101 102 103 104 105",
        "image 1: square of image 2 is 4",
        "image 2: square of image 1 is 1",
        "coarray: 2 images ok",
        NULL,
    };
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout %d "
             "%s/../rmxrun --launcher %s --timeout %d -n 2 %s/coarray",
             EX_TIMEOUT_S + 15, RMX_TEST_BIN_DIR, launcher, EX_TIMEOUT_S, EX_DIR);
    expect_example(cmd, lines);
}
Test(examples, coarray_rmxrun_mpirun, .timeout = RMX_T(90))
{
    expect_coarray("mpirun");
}
Test(examples, coarray_rmxrun_fork, .timeout = RMX_T(90))
{
    expect_coarray("fork");
}
