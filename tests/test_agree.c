/*
 * test_agree.c — collectives agree, and resources are refused rather than exhausted.
 *
 * A collective call that fails on one rank only (a bad argument, a size the system cannot back,
 * an open epoch, no file descriptor left) returns an error on every rank, promptly: that rank its
 * own code, the others RMX_ERR_COLLECTIVE; nothing is created or freed, nothing is left in
 * /dev/shm, and every rank goes on working.  Before, the failing rank returned at once and the
 * others waited for it forever, and an oversized window filled /dev/shm until the OOM killer came.
 */
#include <dirent.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "harness.h"

#define NRANKS 3
#define ODD 1 /* the rank whose part fails */

/* Every rank's code from the same call: the odd one its own, the others RMX_ERR_COLLECTIVE. */
static void expect_agreed(int me, int rc, int want_odd, const char *what)
{
    int want = me == ODD ? want_odd : RMX_ERR_COLLECTIVE;
    RANK_ASSERT(rc == want, "%s: rank %d got %d (%s), wanted %d (%s)", what, me, rc,
                rmx_strerror(rc), want, rmx_strerror(want));
}

/* After a failed collective every rank can still make, use and free a window. */
static void still_works(rmx_ctx_t *ctx)
{
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    uint64_t v = 1000 + (uint64_t)me, want = 1000 + (uint64_t)((me + n - 1) % n);
    RANK_OK(rmx_put(win, &v, 8, (me + 1) % n, 0));
    RANK_OK(rmx_sync_all(ctx));
    RANK_ASSERT(base[0] == want, "got %llu", (unsigned long long)base[0]);
    RANK_OK(rmx_win_free(&win));
}

/* The largest file in /dev/shm (bytes): what UCX left behind when it filled /dev/shm for an
 * oversized window was one of 24.9 GB.  (Not a count of files: other jobs come and go.) */
static unsigned long long largest_in_dev_shm(void)
{
    DIR *d = opendir("/dev/shm");
    unsigned long long largest = 0;
    if (d == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[512];
        struct stat st;
        snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
        if (e->d_name[0] != '.' && stat(path, &st) == 0 && (unsigned long long)st.st_size > largest)
            largest = (unsigned long long)st.st_size;
    }
    closedir(d);
    return largest;
}

static int rank_bad_arguments(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    char buf[64];
    rmx_win_t *win = (rmx_win_t *)0x1;
    void *base = (void *)0x1;
    double t0 = now_s();
    /* rmx_win_create(ctx, NULL, 64, ...) on one rank, valid memory on the others */
    int rc = rmx_win_create(ctx, me == ODD ? NULL : buf, sizeof(buf), &win);
    expect_agreed(me, rc, RMX_ERR_ARG, "win_create");
    RANK_ASSERT(win == NULL, "no window on a failed create");
    /* no place for the result on one rank */
    rc = me == ODD ? rmx_win_allocate(ctx, 64, &base, NULL) : rmx_win_allocate(ctx, 64, &base, &win);
    expect_agreed(me, rc, RMX_ERR_ARG, "win_allocate");
    RANK_ASSERT(base == NULL && (me == ODD || win == NULL));
    RANK_ASSERT(now_s() - t0 < 5, "the failed collectives took %.1f s", now_s() - t0);
    still_works(ctx);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(agree, a_bad_argument_on_one_rank_fails_every_rank_3_ranks, .timeout = RMX_T(60))
{
    run_ranks(NRANKS, rank_bad_arguments, NULL);
}

/* rmx_win_free with an epoch still open on one rank: nobody frees, everybody keeps the window. */
static int rank_free_with_open_epoch(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 64, (void **)&base, &win));
    if (me == ODD)
        RANK_OK(rmx_win_lock(win, RMX_LOCK_SHARED, 0, 0));
    rmx_win_t *w = win;
    expect_agreed(me, rmx_win_free(&w), RMX_ERR_EPOCH, "win_free");
    RANK_ASSERT(w == win, "a refused free keeps the handle");
    /* the window is still whole on every rank */
    uint64_t v = 7 + (uint64_t)me, got, want = 7 + (uint64_t)((me + n - 1) % n);
    RANK_OK(rmx_put(win, &v, 8, (me + 1) % n, 8));
    if (me == ODD)
        RANK_OK(rmx_win_unlock(win, 0));
    RANK_OK(rmx_sync_all(ctx));
    RANK_OK(rmx_get(win, &got, 8, me, 8));
    RANK_ASSERT(got == want);
    RANK_OK(rmx_win_free(&win));
    RANK_ASSERT(win == NULL);
    still_works(ctx);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(agree, a_free_refused_on_one_rank_keeps_the_window_everywhere_3_ranks, .timeout = RMX_T(60))
{
    run_ranks(NRANKS, rank_free_with_open_epoch, NULL);
}

/* Sizes no machine of ours can back: refused at once, on one rank or on all. */
static int rank_oversized(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    static const size_t huge[] = {SIZE_MAX, SIZE_MAX / 2, (size_t)1 << 40, (size_t)64 << 30};
    for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
        void *base;
        rmx_win_t *win;
        double t0 = now_s();
        /* only the odd rank asks too much */
        int rc = rmx_win_allocate(ctx, me == ODD ? huge[i] : 64, &base, &win);
        expect_agreed(me, rc, RMX_ERR_NOMEM, "oversized allocate on one rank");
        /* every rank asks too much */
        rc = rmx_win_allocate(ctx, huge[i], &base, &win);
        RANK_RC(RMX_ERR_NOMEM, rc);
        RANK_ASSERT(now_s() - t0 < 5, "%zu bytes: refused after %.1f s", huge[i], now_s() - t0);
    }
    RANK_OK(rmx_sync_all(ctx));
    unsigned long long largest = largest_in_dev_shm();
    RANK_ASSERT(largest < (1ull << 30), "a file of %llu bytes in /dev/shm", largest);
    still_works(ctx);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(agree, oversized_windows_are_refused_3_ranks, .timeout = RMX_T(60))
{
    run_ranks(NRANKS, rank_oversized, NULL);
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* Under a small RLIMIT_AS, a window beyond it is refused (naming the limit), one within it is
 * not.  Not under AddressSanitizer, whose shadow memory needs terabytes of address space. */
#ifndef UNDER_ASAN
static int rank_address_space_limit(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    RANK_ASSERT(f != NULL);
    int fields = fscanf(f, "%llu", &pages);
    fclose(f);
    RANK_ASSERT(fields == 1);
    size_t now = (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
    struct rlimit rl = {.rlim_cur = now + (512u << 20), .rlim_max = RLIM_INFINITY};
    RANK_ASSERT(getrlimit(RLIMIT_AS, &rl) == 0);
    rl.rlim_cur = now + (512u << 20);
    RANK_ASSERT(setrlimit(RLIMIT_AS, &rl) == 0);
    void *base;
    rmx_win_t *win;
    RANK_RC(RMX_ERR_NOMEM, rmx_win_allocate(ctx, (size_t)1 << 30, &base, &win));
    RANK_OK(rmx_win_allocate(ctx, 1u << 20, &base, &win));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}
#endif

Test(agree, a_window_beyond_rlimit_as_is_refused_2_ranks, .timeout = RMX_T(60))
{
#ifdef UNDER_ASAN
    cr_skip_test("AddressSanitizer reserves terabytes of address space: RLIMIT_AS cannot be set");
#else
    if (getenv("RMX_TEST_WRAPPER") != NULL)
        cr_skip_test("valgrind maps its own address space");
    run_ranks(2, rank_address_space_limit, NULL);
#endif
}

/* Windows until the file descriptors run out (a low RLIMIT_NOFILE; a window of posix shared
 * memory takes some, of sysv shared memory or over tcp none, so there the loop ends at
 * MAX_WINS): every rank gets an error at the same window (RMX_ERR_NOMEM where they ran out,
 * RMX_ERR_COLLECTIVE elsewhere) and none crashes.  Then one rank holds all but a few descriptors
 * itself: its next window creation is refused on every rank, whatever the transport, and after
 * it lets them go all goes on.  MAX_WINS stays well below the machine's sysv segment limit
 * (SHMMNI, 4096 for the whole machine): 3 ranks of 2000 windows used them all up, and every other
 * test running meanwhile failed its rmx_init with RMX_ERR_NOMEM (badinput, 1 run in 3). */
#define MAX_WINS 150
static int rank_fd_exhaustion(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    struct rlimit rl;
    RANK_ASSERT(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    rl.rlim_cur = 256;
    RANK_ASSERT(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    int me = rmx_rank(ctx);
    static rmx_win_t *wins[MAX_WINS];
    int n = 0, rc = RMX_OK;
    while (n < MAX_WINS) {
        void *base;
        if ((rc = rmx_win_allocate(ctx, 4096, &base, &wins[n])) != RMX_OK)
            break;
        n++;
    }
    RANK_ASSERT(rc == RMX_OK || rc == RMX_ERR_NOMEM || rc == RMX_ERR_COLLECTIVE,
                "window %d: %s", n, rmx_strerror(rc));
    /* all ranks stopped at the same window: compare counts through a window of one of them */
    while (n > 8)
        RANK_OK(rmx_win_free(&wins[--n]));
    uint64_t *counts;
    rmx_win_t *cw;
    RANK_OK(rmx_win_allocate(ctx, 8 * NRANKS, (void **)&counts, &cw));
    uint64_t mine = (uint64_t)n;
    RANK_OK(rmx_put(cw, &mine, 8, 0, 8 * (size_t)me));
    RANK_OK(rmx_sync_all(ctx));
    if (me == 0)
        for (int r = 1; r < NRANKS; r++)
            RANK_ASSERT(counts[r] == counts[0], "rank %d kept %llu windows, rank 0 %llu", r,
                        (unsigned long long)counts[r], (unsigned long long)counts[0]);
    RANK_OK(rmx_win_free(&cw));
    while (n > 0)
        RANK_OK(rmx_win_free(&wins[--n]));

    int held[256], nheld = 0;
    if (me == ODD) {
        while (nheld < 256 && (held[nheld] = dup(STDERR_FILENO)) >= 0)
            nheld++;
        for (int i = 0; i < 8 && nheld > 0; i++)
            close(held[--nheld]); /* a few left: fewer than a window may need */
    }
    void *base;
    rmx_win_t *w;
    expect_agreed(me, rmx_win_allocate(ctx, 4096, &base, &w), RMX_ERR_NOMEM, "fds held");
    while (nheld > 0)
        close(held[--nheld]);
    still_works(ctx);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(agree, running_out_of_file_descriptors_is_refused_3_ranks, .timeout = RMX_T(120))
{
    run_ranks(NRANKS, rank_fd_exhaustion, NULL);
}
