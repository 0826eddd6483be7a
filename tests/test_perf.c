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
