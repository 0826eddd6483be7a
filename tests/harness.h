/*
 * harness.h — multi-process tests: a Criterion test (the parent) forks N ranks with rmx_fork_run;
 * each rank runs a plain C function that reads top to bottom as what that rank does, and reports
 * failure through its exit status (RANK_* macros print why, then exit 1).  The parent asserts every
 * rank exited 0.
 */
#ifndef RMX_TEST_HARNESS_H
#define RMX_TEST_HARNESS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../api/rmx.h"
#include "../api/rmx_fork.h"

#define RANK_FAIL(...)                                                                 \
    do {                                                                               \
        fprintf(stderr, "rank %d: %s:%d: ", (int)getpid(), __FILE__, __LINE__);        \
        fprintf(stderr, __VA_ARGS__);                                                  \
        fputc('\n', stderr);                                                           \
        fflush(stderr);                                                                \
        _exit(1);                                                                      \
    } while (0)

#define RANK_ASSERT(cond, ...)                                                         \
    do {                                                                               \
        if (!(cond))                                                                   \
            RANK_FAIL("assertion `" #cond "` failed: " __VA_ARGS__);                   \
    } while (0)

/* The call must return `want` (an RMX_* code). */
#define RANK_RC(want, expr)                                                            \
    do {                                                                               \
        int rank_rc_ = (expr);                                                         \
        if (rank_rc_ != (want))                                                        \
            RANK_FAIL("%s returned %d (%s), wanted %d (%s)", #expr, rank_rc_,          \
                      rmx_strerror(rank_rc_), (int)(want), rmx_strerror(want));        \
    } while (0)

#define RANK_OK(expr) RANK_RC(RMX_OK, expr)

/* Every time limit of the tests is multiplied by this: make valgrind builds the tests with
 * -DRMX_TEST_TIME_SCALE=30, since memcheck runs rmx and UCX 20-50 times slower. */
#ifndef RMX_TEST_TIME_SCALE
#define RMX_TEST_TIME_SCALE 1
#endif
#define RMX_T(seconds) ((seconds) * RMX_TEST_TIME_SCALE)

/* tests/harness_run.c: run `cmd` through sh, its standard output and error together into *out
 * (malloc'd, "" when none; out NULL: discarded); returns its exit status, 128 + signal when
 * killed (124 when timeout(1) ended it), -1 when it could not be started. */
int rmx_test_run(const char *cmd, char **out);
/* The whole of the file at path, malloc'd ("" when it cannot be read). */
char *rmx_test_slurp(const char *path);

/* Fork n ranks running fn, fail the Criterion test unless every one exits 0. */
static inline void run_ranks_cfg(int n, rmx_fork_main_t fn, void *arg, const rmx_config_t *cfg,
                                 double timeout_s)
{
    int status[64];
    cr_assert(n <= 64);
    int rc = rmx_fork_run(n, fn, arg, cfg, RMX_T(timeout_s), status);
    for (int i = 0; i < n; i++)
        cr_expect_eq(status[i], 0, "rank %d exited with status %d", i, status[i]);
    cr_assert_eq(rc, RMX_OK, "rmx_fork_run: %s", rmx_strerror(rc));
}

static inline void run_ranks(int n, rmx_fork_main_t fn, void *arg)
{
    run_ranks_cfg(n, fn, arg, NULL, 120);
}

/* A byte that depends on who wrote it, where and in which round: misplaced data shows. */
static inline unsigned char pattern_byte(int writer, size_t offset, int round)
{
    return (unsigned char)(writer * 131 + offset * 7 + (offset >> 8) * 13 + round * 29 + 1);
}

static inline void fill_pattern(void *buf, size_t len, int writer, int round)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = pattern_byte(writer, i, round);
}

/* Index of the first byte that differs from the pattern, or len. */
static inline size_t check_pattern(const void *buf, size_t len, int writer, int round)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < len; i++)
        if (p[i] != pattern_byte(writer, i, round))
            return i;
    return len;
}

/* A section: dims[i] = {extent, first, count, stride}, in the order written (dim[0] first). */
static inline rmx_sub_t make_sub(size_t elem, rmx_order_t order, int rank, const size_t dims[][4])
{
    rmx_sub_t s;
    memset(&s, 0, sizeof(s));
    s.elem_size = elem;
    s.order = order;
    s.rank = rank;
    for (int i = 0; i < rank && i < RMX_SUB_MAX_RANK; i++)
        s.dim[i] = (rmx_sub_dim_t){dims[i][0], dims[i][1], dims[i][2], dims[i][3]};
    return s;
}

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#ifndef RMX_TEST_BIN_DIR
#define RMX_TEST_BIN_DIR "build/tests"
#endif

#endif
