/*
 * test_perf.c — smoke tests of the benchmark tool: build/rmx_perf runs in a quick mode on 2
 * forked ranks and must exit 0 with well-formed rows (CSV, JSON, SVG), and must refuse bad
 * options with status 2.  Nothing here asserts on speed: only that numbers are there and positive.
 */
#include <math.h>
#include <pthread.h>
#include <sys/wait.h>
#include "harness.h"

#define PERF_BIN RMX_TEST_BIN_DIR "/../rmx_perf"
#define QUICK "--ranks 2 --iters 50 --warmup 5 --time 0.005 --reps 1 --quiet"

typedef struct {
    char *out;      /* stdout of the run, NUL-terminated */
    int status;     /* exit status, or -1 when it did not exit normally */
    char err[8192]; /* the start of its stderr, for failure messages */
} run_out_t;

static void read_err(run_out_t *r, const char *path)
{
    r->err[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        size_t n = fread(r->err, 1, sizeof(r->err) - 1, f);
        r->err[n] = '\0';
        fclose(f);
    }
    unlink(path);
}

static run_out_t run_perf(const char *args)
{
    char errpath[] = "/tmp/rmx_perf_err_XXXXXX";
    int fd = mkstemp(errpath);
    cr_assert(fd >= 0);
    close(fd);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "%s %s 2>%s", PERF_BIN, args, errpath);
    run_out_t r = {.out = NULL, .status = -1};
    FILE *p = popen(cmd, "r");
    cr_assert(p != NULL, "popen %s", cmd);
    size_t cap = 1 << 16, len = 0, got;
    r.out = malloc(cap);
    cr_assert(r.out != NULL);
    while ((got = fread(r.out + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 1024) {
            cap *= 2;
            r.out = realloc(r.out, cap);
            cr_assert(r.out != NULL);
        }
    }
    r.out[len] = '\0';
    int ws = pclose(p);
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    read_err(&r, errpath);
    return r;
}

/* The CSV row of (test, size): its rmx and ucp columns; 0 when the row is missing. */
static int csv_row(const char *csv, const char *test, size_t size, double *rmx, double *ucp)
{
    char key[64];
    snprintf(key, sizeof(key), "\n%s,%zu,", test, size);
    const char *p = strstr(csv, key);
    if (p == NULL)
        return 0;
    p += strlen(key);
    const char *comma = strchr(p, ','); /* skip the unit */
    if (comma == NULL)
        return 0;
    char *end;
    *rmx = strtod(comma + 1, &end);
    if (end == comma + 1 || *end != ',')
        return 0;
    const char *u = end + 1;
    *ucp = strtod(u, &end);
    return end != u;
}

Test(perf, quick_csv_has_positive_put_and_get_rows)
{
    run_out_t r = run_perf(QUICK " --test put_lat,get_lat,put_bw --max 4096 --csv");
    cr_assert_eq(r.status, 0, "rmx_perf exited %d; stderr:\n%s\nstdout:\n%s", r.status, r.err,
                 r.out);
    cr_assert(strstr(r.out, "\ntest,size,unit,rmx,ucp,rmx_over_ucp\n") != NULL, "%s", r.out);
    const char *tests[] = {"put_lat", "get_lat", "put_bw"};
    for (size_t t = 0; t < 3; t++)
        for (size_t size = 1; size <= 4096; size *= 2) {
            double rmx = NAN, ucp = NAN;
            cr_assert(csv_row(r.out, tests[t], size, &rmx, &ucp), "no %s row for %zu B:\n%s",
                      tests[t], size, r.out);
            cr_expect(rmx > 0 && isfinite(rmx), "%s %zu B: rmx %g", tests[t], size, rmx);
            cr_expect(ucp > 0 && isfinite(ucp), "%s %zu B: ucp %g", tests[t], size, ucp);
        }
    cr_expect(strstr(r.out, "put_lat,8192,") == NULL, "--max 4096 was not respected");
    free(r.out);
}

Test(perf, json_and_svg_are_well_formed)
{
    char svg[] = "/tmp/rmx_perf_test_XXXXXX";
    int fd = mkstemp(svg);
    cr_assert(fd >= 0);
    close(fd);
    char args[512];
    snprintf(args, sizeof(args), QUICK " --test put_lat,sync_all --max 64 --json --plot %s", svg);
    run_out_t r = run_perf(args);
    cr_assert_eq(r.status, 0, "rmx_perf exited %d; stderr:\n%s\nstdout:\n%s", r.status, r.err,
                 r.out);
    cr_expect(r.out[0] == '{' && strstr(r.out, "\"rows\": [") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "{\"test\": \"put_lat\", \"size\": 64, \"unit\": \"us\", \"rmx\": ") !=
                  NULL, "%s", r.out);
    cr_expect(strstr(r.out, "\"test\": \"sync_all\"") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "]}\n") != NULL, "JSON not closed:\n%s", r.out);

    FILE *f = fopen(svg, "r");
    cr_assert(f != NULL);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(svg);
    cr_expect(strncmp(buf, "<?xml", 5) == 0);
    cr_expect(strstr(buf, "</svg>") != NULL, "SVG not closed");
    cr_expect(strstr(buf, ">put_lat<") != NULL, "no put_lat panel");
    cr_expect(strstr(buf, "message size (bytes)") != NULL, "no x axis label");
    cr_expect(strstr(buf, ">raw UCP<") != NULL, "no baseline in the legend");
    cr_expect(strstr(buf, "d='M") != NULL, "no data line");
    free(r.out);
}

Test(perf, without_baseline_only_rmx_is_printed)
{
    run_out_t r = run_perf(QUICK " --test get_lat --min 8 --max 8 --baseline none --csv");
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    cr_expect(strstr(r.out, "\ntest,size,unit,rmx\nget_lat,8,us,") != NULL, "%s", r.out);
    free(r.out);
}

Test(perf, bad_options_are_refused_with_status_2)
{
    const char *bad[] = {"--test no_such_test", "--min 0", "--min 64 --max 8", "--reps 0",
                         "--iters x", "--baseline mpi", "--frobnicate", "--time"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        run_out_t r = run_perf(bad[i]);
        cr_expect_eq(r.status, 2, "'%s' exited %d", bad[i], r.status);
        free(r.out);
    }
}

/* engine/rma.c caches each thread's identity for its owner check (found by rmx_perf): a thread
 * that does not own the context still gets RMX_ERR_THREAD from put and get, on its first call and
 * on later ones, and the owner keeps working. */
typedef struct {
    rmx_win_t *win;
    int put_rc[2], get_rc[2];
} thread_probe_t;

static void *put_get_from_other_thread(void *arg)
{
    thread_probe_t *p = arg;
    char buf[8] = {0};
    for (int i = 0; i < 2; i++) {
        p->put_rc[i] = rmx_put(p->win, buf, sizeof(buf), 0, 0);
        p->get_rc[i] = rmx_get(p->win, buf, sizeof(buf), 0, 0);
    }
    return NULL;
}

Test(perf, hot_path_owner_check_still_refuses_other_threads)
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.bootstrap = RMX_BOOT_SINGLE;
    rmx_ctx_t *ctx;
    cr_assert_eq(rmx_init(&cfg, &ctx), RMX_OK);
    void *base;
    thread_probe_t p = {0};
    cr_assert_eq(rmx_win_allocate(ctx, 64, &base, &p.win), RMX_OK);
    char buf[8] = "abcdefg";
    cr_expect_eq(rmx_put(p.win, buf, sizeof(buf), 0, 0), RMX_OK);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, put_get_from_other_thread, &p), 0);
    pthread_join(th, NULL);
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(p.put_rc[i], RMX_ERR_THREAD, "put %d: %s", i, rmx_strerror(p.put_rc[i]));
        cr_expect_eq(p.get_rc[i], RMX_ERR_THREAD, "get %d: %s", i, rmx_strerror(p.get_rc[i]));
    }
    char back[8] = {0};
    cr_expect_eq(rmx_get(p.win, back, sizeof(back), 0, 0), RMX_OK);
    cr_expect_str_eq(back, "abcdefg");
    cr_expect_eq(rmx_win_free(&p.win), RMX_OK);
    cr_expect_eq(rmx_finalize(ctx), RMX_OK);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* compare.sh's last step: rows are medians over several runs, Open MPI's column too, joined by
 * (test, size); a row missing from one file is the median of the others. */
Test(perf, merge_takes_the_median_over_runs)
{
    char dir[] = "/tmp/rmx_perf_merge_XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    char a[128], b[128], c[128], m1[128], m2[128], args[800];
    snprintf(a, sizeof(a), "%s/a.csv", dir);
    snprintf(b, sizeof(b), "%s/b.csv", dir);
    snprintf(c, sizeof(c), "%s/c.csv", dir);
    snprintf(m1, sizeof(m1), "%s/m1.csv", dir);
    snprintf(m2, sizeof(m2), "%s/m2.csv", dir);
    const char *head = "# rmx_perf: 2 ranks, rank 0 -> rank 1, median of 3 repetitions, "
                       "load average 1.00\ntest,size,unit,rmx,ucp,rmx_over_ucp\n";
    char text[512];
    snprintf(text, sizeof(text), "%sput_lat,8,us,1,10,0.1\nfadd,8,us,n/a,4,n/a\n", head);
    write_file(a, text);
    snprintf(text, sizeof(text), "%sput_lat,8,us,3,30,0.1\nfadd,8,us,n/a,5,n/a\n", head);
    write_file(b, text);
    snprintf(text, sizeof(text), "%sput_lat,8,us,2,20,0.1\n", head);
    write_file(c, text);
    write_file(m1, "# osc: ucx\ntest,size,unit,mpi\nput_lat,8,us,4\nfadd,8,us,100\n");
    write_file(m2, "test,size,unit,mpi\nput_lat,8,us,8\nfadd,8,us,300\n");
    snprintf(args, sizeof(args), "--merge %s --merge %s --merge %s --mpi %s --mpi %s --csv", a, b,
             c, m1, m2);
    run_out_t r = run_perf(args);
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    cr_expect(strstr(r.out, "\nput_lat,8,us,2,20,0.1000,6,0.3333\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "\nfadd,8,us,n/a,4.5,n/a,200,n/a\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "median of 3 runs") != NULL, "%s", r.out);
    free(r.out);
    unlink(a), unlink(b), unlink(c), unlink(m1), unlink(m2);
    rmdir(dir);
}

/* The line of text that starts with prefix, its runs of blanks squeezed to one space; "" when
 * there is none.  Table columns are padded, so this compares their order and content only. */
static void squeezed_line(const char *text, const char *prefix, char *out, size_t n)
{
    out[0] = '\0';
    size_t pl = strlen(prefix);
    for (const char *p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : p) {
        if (strncmp(p, prefix, pl) != 0)
            continue;
        size_t o = 0;
        for (; *p != '\0' && *p != '\n' && o + 1 < n; p++)
            if (*p != ' ' || (o > 0 && out[o - 1] != ' '))
                out[o++] = *p;
        out[o] = '\0';
        return;
    }
}

/* make compare's other columns: --mpi-sm (Open MPI osc/sm) and --shmem (OpenSHMEM) join the rows
 * like --mpi, each the median over its files, with rmx's ratio to it, in the table, the CSV and
 * the JSON; a row a program did not measure is n/a in its column. */
Test(perf, merge_shows_osc_sm_and_openshmem_columns)
{
    char dir[] = "/tmp/rmx_perf_ext_XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    char rmx[128], sm[128], s1[128], s2[128], files[700], args[800];
    snprintf(rmx, sizeof(rmx), "%s/rmx.csv", dir);
    snprintf(sm, sizeof(sm), "%s/sm.csv", dir);
    snprintf(s1, sizeof(s1), "%s/s1.csv", dir);
    snprintf(s2, sizeof(s2), "%s/s2.csv", dir);
    write_file(rmx, "# rmx_perf: 2 ranks, rank 0 -> rank 1, median of 3 repetitions, load average "
                    "1.00\ntest,size,unit,rmx,ucp,rmx_over_ucp\nput_lat,8,us,2,20,0.1\n"
                    "fadd,8,us,n/a,4,n/a\nsync_all,0,us,1,2,0.5\n");
    write_file(sm, "# osc: sm (Open MPI 4.1), passive target\ntest,size,unit,mpi\n"
                   "put_lat,8,us,0.5\nsync_all,0,us,4\n");
    write_file(s1, "# shmem: spml ucx (Open MPI 4.1 oshmem)\ntest,size,unit,shmem\n"
                   "put_lat,8,us,1\nfadd,8,us,2\n");
    write_file(s2, "test,size,unit,shmem\nput_lat,8,us,3\nfadd,8,us,n/a\n");
    snprintf(files, sizeof(files), "--merge %s --mpi-sm %s --shmem %s --shmem %s", rmx, sm, s1, s2);
    char table[128];

    run_out_t r = run_perf(files);
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    squeezed_line(r.out, "test ", table, sizeof(table));
    cr_expect_str_eq(table, "test size unit rmx ucp rmx/ucp mpi_sm rmx/sm shmem rmx/shmem",
                     "%s", r.out);
    squeezed_line(r.out, "put_lat ", table, sizeof(table));
    cr_expect_str_eq(table, "put_lat 8 B us 2.000 20.00 0.10 0.500 4.00 2.000 1.00", "%s", r.out);
    squeezed_line(r.out, "fadd ", table, sizeof(table));
    cr_expect_str_eq(table, "fadd 8 B us n/a 4.000 n/a n/a n/a 2.000 n/a", "%s", r.out);
    cr_expect(strstr(r.out, "\n# OpenSHMEM: shmem: spml ucx (Open MPI 4.1 oshmem)\n") != NULL,
              "%s", r.out);
    cr_expect(strstr(r.out, "\n# Open MPI osc/sm: osc: sm (Open MPI 4.1)") != NULL, "%s", r.out);
    free(r.out);

    snprintf(args, sizeof(args), "--json --csv %s", files); /* the last wins: compare.sh's way */
    r = run_perf(args);
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    cr_expect(strstr(r.out, "\ntest,size,unit,rmx,ucp,rmx_over_ucp,mpi_sm,rmx_over_mpi_sm,shmem,"
                            "rmx_over_shmem\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "\nput_lat,8,us,2,20,0.1000,0.5,4.0000,2,1.0000\n") != NULL, "%s",
              r.out);
    cr_expect(strstr(r.out, "\nsync_all,0,us,1,2,0.5000,4,0.2500,n/a,n/a\n") != NULL, "%s", r.out);
    free(r.out);

    snprintf(args, sizeof(args), "--json --merge %s --shmem %s --shmem %s", rmx, s1, s2);
    r = run_perf(args);
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    cr_expect(strstr(r.out, "\"shmem\": 2, \"rmx_over_shmem\": 1}") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "mpi_sm") == NULL, "no --mpi-sm file, no column:\n%s", r.out);
    free(r.out);
    unlink(rmx), unlink(sm), unlink(s1), unlink(s2);
    rmdir(dir);
}

/* perf/shmem/bench_shmem (make compare's OpenSHMEM column) runs under oshrun in a quick mode and
 * prints a positive row for every test and size it was asked for.  Skipped, visibly, where Open
 * MPI's OpenSHMEM is not installed (the Makefile builds the program only when oshcc exists). */
#define SHMEM_BIN RMX_TEST_BIN_DIR "/../perf/bench_shmem"

Test(perf, bench_shmem_runs_under_oshrun, .timeout = RMX_T(180))
{
    if (system("command -v oshrun >/dev/null 2>&1") != 0 || access(SHMEM_BIN, X_OK) != 0)
        cr_skip_test("oshrun or " SHMEM_BIN " missing (Open MPI's OpenSHMEM not installed)");
    static const char *const tests[] = {"put_lat", "put_bw", "put_rate", "get_lat", "get_bw",
                                        "get_rate", "put_col", "put_row", "get_col", "get_row"};
    static const char *const fixed[] = {"\nfadd,8,", "\nswap,8,", "\ncswap,8,", "\nmax,8,",
                                        "\nsync_all,0,"};
    char cmd[1024], errpath[] = "/tmp/rmx_shmem_err_XXXXXX";
    int fd = mkstemp(errpath);
    cr_assert(fd >= 0);
    close(fd);
    /* osc ^rdma: Open MPI 4.1's shmem_finalize crashes otherwise (see perf/compare.sh). */
    snprintf(cmd, sizeof(cmd),
             "timeout 150 oshrun --allow-run-as-root --oversubscribe -np 2 --mca spml ucx "
             "--mca osc ^rdma %s --sizes 8,64 --iters 50 --warmup 5 --time 0.002 --reps 1 "
             "--csv 2>%s", SHMEM_BIN, errpath);
    FILE *p = popen(cmd, "r");
    cr_assert(p != NULL);
    char out[8192];
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    int ws = pclose(p);
    run_out_t e;
    read_err(&e, errpath);
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "%s exited %d; stderr:\n%s\nstdout:\n%s",
              cmd, ws, e.err, out);
    cr_expect(strstr(out, "\ntest,size,unit,shmem\n") != NULL, "%s", out);
    char key[64];
    for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++)
        for (size_t size = 8; size <= 64; size *= 8) {
            snprintf(key, sizeof(key), "\n%s,%zu,", tests[t], size);
            const char *row = strstr(out, key);
            double v = row ? strtod(strchr(row + strlen(key), ',') + 1, NULL) : NAN;
            cr_expect(v > 0 && isfinite(v), "%s: %g\n%s", key, v, out);
        }
    for (size_t t = 0; t < sizeof(fixed) / sizeof(fixed[0]); t++) {
        const char *row = strstr(out, fixed[t]);
        double v = row ? strtod(strchr(row + strlen(fixed[t]), ',') + 1, NULL) : NAN;
        cr_expect(v > 0 && isfinite(v), "%s: %g\n%s", fixed[t], v, out);
    }
}
