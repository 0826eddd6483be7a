/*
 * test_perf.c — smoke tests of the benchmark tool: build/rmx_perf runs in a quick mode on 2
 * forked ranks and must exit 0 with well-formed rows (CSV, JSON, SVG); its command line refuses
 * every bad input with a message and status 2 before measuring, a failed write is status 1,
 * SIGINT / SIGTERM print the rows so far and leave nothing behind, and --help is the README's
 * rmx_perf(1) block.  Nothing here asserts on speed: only that numbers are there and positive.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
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

/* rmx_perf with args, started by launcher (a command prefix; "" for none). */
static run_out_t run_perf_under(const char *launcher, const char *args)
{
    char errpath[] = "/tmp/rmx_perf_err_XXXXXX";
    int fd = mkstemp(errpath);
    cr_assert(fd >= 0);
    close(fd);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "%s%s %s 2>%s", launcher, PERF_BIN, args, errpath);
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

static run_out_t run_perf(const char *args)
{
    return run_perf_under("", args);
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

/* fadd_call, the floor under fadd on UCP's route: raw UCP's fetch-add behind a bare call (rmx
 * column) beside the inline one (ucp column), both measured. */
Test(perf, the_call_floor_row_measures_both_columns)
{
    run_out_t r = run_perf(QUICK " --test fadd,fadd_call --sizes 8 --csv");
    cr_assert_eq(r.status, 0, "rmx_perf exited %d; stderr:\n%s\nstdout:\n%s", r.status, r.err,
                 r.out);
    const char *tests[] = {"fadd", "fadd_call"};
    for (size_t t = 0; t < 2; t++) {
        double rmx = NAN, ucp = NAN;
        cr_assert(csv_row(r.out, tests[t], 8, &rmx, &ucp), "no %s row:\n%s", tests[t], r.out);
        cr_expect(rmx > 0 && isfinite(rmx) && ucp > 0 && isfinite(ucp), "%s: %g %g", tests[t],
                  rmx, ucp);
    }
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
    snprintf(text, sizeof(text), "%sput_lat,8,us,1,10,0.1\nfadd,8,us,n/a,4,n/a\n"
             "cswap,8,us,0.0001,1000,1e-07\n", head);
    write_file(a, text);
    snprintf(text, sizeof(text), "%sput_lat,8,us,3,30,0.1\nfadd,8,us,n/a,5,n/a\n", head);
    write_file(b, text);
    snprintf(text, sizeof(text), "%sput_lat,8,us,2,20,0.1\nget_lat,8,us,7,6,1.1667\n", head);
    write_file(c, text); /* get_lat only here: a row of the merge still (it was dropped) */
    write_file(m1, "# osc: ucx\ntest,size,unit,mpi\nput_lat,8,us,4\nfadd,8,us,100\n");
    write_file(m2, "test,size,unit,mpi\nput_lat,8,us,8\nfadd,8,us,300\n");
    snprintf(args, sizeof(args), "--merge %s --merge %s --merge %s --mpi %s --mpi %s --csv", a, b,
             c, m1, m2);
    run_out_t r = run_perf(args);
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    cr_expect(strstr(r.out, "\nput_lat,8,us,2,20,0.1000,6,0.3333\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "\nfadd,8,us,n/a,4.5,n/a,200,n/a\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "\nget_lat,8,us,7,6,1.1667,n/a,n/a\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "\ncswap,8,us,0.0001,1000,1e-07,n/a,n/a\n") != NULL, /* 0.0000 */
              "%s", r.out);
    const char *put = strstr(r.out, "\nput_lat"), *get = strstr(r.out, "\nget_lat"),
               *fadd = strstr(r.out, "\nfadd");
    cr_expect(put != NULL && get != NULL && fadd != NULL && put < get && get < fadd,
              "rows in the test table's order:\n%s", r.out);
    cr_expect(strstr(r.out, "median of 3 runs") != NULL, "%s", r.out);
    free(r.out);
    /* JSON says so too (it said nothing of the merge) */
    snprintf(args, sizeof(args), "--merge %s --merge %s --merge %s --json", a, b, c);
    r = run_perf(args);
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    cr_expect(strstr(r.out, "\"merged\": 3, \"load_max\": 1.00") != NULL, "%s", r.out);
    free(r.out);
    snprintf(args, sizeof(args), "--merge %s --json", a); /* one file: nothing merged */
    r = run_perf(args);
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    cr_expect(strstr(r.out, "\"merged\"") == NULL, "%s", r.out);
    free(r.out);
    unlink(a), unlink(b), unlink(c), unlink(m1), unlink(m2);
    rmdir(dir);
}

/* SIGTERM while the ranks start, make windows and measure leaves no /dev/shm file (README,
 * SIGNALS).  Before: a segment UCX had opened and not yet unlinked when the watcher _exited
 * stayed, in 4 of 30 runs here (13 of 16 on a busier machine). */
Test(perf, a_signal_leaves_no_shared_memory_file, .timeout = RMX_T(240))
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s/perf_signal_shm.sh %s 40", RMX_TEST_SRC_DIR, PERF_BIN);
    char *out = NULL;
    int rc = rmx_test_run(cmd, &out);
    if (rc == 77) {
        free(out);
        cr_skip_test("no private mount and IPC namespace here (unshare -m -i)");
    }
    cr_expect_eq(rc, 0, "%s: exit %d\n%s", cmd, rc, out != NULL ? out : "");
    cr_expect(out != NULL && atoi(out) == 0, "files left in /dev/shm: %s", out != NULL ? out : "");
    free(out);
}

/* Under rmx's fork launcher rmx_perf uses the launched ranks, as under mpirun: one run of 3
 * ranks, one report (each rank forked a 2-rank run of its own: 3 reports, "2 ranks" each). */
Test(perf, fork_launcher_ranks_make_one_run)
{
    char launcher[512];
    snprintf(launcher, sizeof(launcher), "timeout 120 %s/../rmx_forkrun -n 3 ", RMX_TEST_BIN_DIR);
    run_out_t r = run_perf_under(launcher, QUICK " --test put_lat --sizes 8 --csv");
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    const char *first = strstr(r.out, "test,size,unit,");
    cr_expect(first != NULL && strstr(first + 1, "test,size,unit,") == NULL, "%s", r.out);
    cr_expect(strstr(r.out, "# rmx_perf: 3 ranks, rank 0 -> rank 2,") != NULL, "%s", r.out);
    free(r.out);
}

/* A --merge, --mpi, --mpi-sm or --shmem file that is not that program's results is a usage error
 * naming the file and line, before anything is measured (they gave an empty table, or a column
 * of n/a, or another program's numbers under this one's name, and exit status 0). */
Test(perf, result_files_that_are_not_results_are_refused)
{
    char dir[] = "/tmp/rmx_perf_bad_XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    static const char *const files[][2] = {
        {"empty", ""},
        {"garbage", "hello,world\n1,2,3\n"},
        {"rmx", "# rmx_perf: 2 ranks, rank 0 -> rank 1, median of 3 repetitions, load average 1.00"
                "\ntest,size,unit,rmx,ucp,rmx_over_ucp\nput_lat,8,us,1,2,0.5\n"},
        {"rmx5", "# rmx_perf: 2 ranks, rank 0 -> rank 1, median of 5 repetitions, load average "
                 "1.00\ntest,size,unit,rmx,ucp,rmx_over_ucp\nput_lat,8,us,1,2,0.5\n"},
        {"neg", "# rmx_perf: 2 ranks, rank 0 -> rank 1, median of 3 repetitions, load average 1.00"
                "\ntest,size,unit,rmx,ucp,rmx_over_ucp\nput_lat,8,us,-1,2,-0.5\n"},
        {"unit", "# rmx_perf: 2 ranks, rank 0 -> rank 1, median of 3 repetitions, load average "
                 "1.00\ntest,size,unit,rmx,ucp,rmx_over_ucp\nput_lat,8,MB/s,1,2,0.5\n"},
        {"norun", "test,size,unit,rmx,ucp,rmx_over_ucp\nput_lat,8,us,1,2,0.5\n"},
        {"sm", "# osc: sm (Open MPI 4.1), passive target\ntest,size,unit,mpi\nput_lat,8,us,1\n"},
        {"mpi", "# osc: ucx (Open MPI 4.1)\ntest,size,unit,mpi\nput_lat,8,us,1\n"},
        {"size", "test,size,unit,shmem\nfadd,16,us,1\n"},
    };
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[128];
        snprintf(path, sizeof(path), "%s/%s.csv", dir, files[i][0]);
        write_file(path, files[i][1]);
    }
    static const char *const bad[][2] = {
        {"--merge %s/empty.csv", "empty.csv: no results in it"},
        {"--merge %s/garbage.csv", "garbage.csv:1: not rmx_perf --csv's results"},
        {"--merge %s/rmx.csv --merge %s/rmx5.csv", "merge runs made alike"},
        {"--merge %s/neg.csv", "neg.csv:3: not a row rmx_perf writes"},
        {"--merge %s/unit.csv", "unit.csv:3: not a row rmx_perf writes"},
        {"--merge %s/norun.csv", "norun.csv: no '# rmx_perf:' line"},
        {"--merge %s/mpi.csv", "mpi.csv:2: not rmx_perf --csv's results"},
        {"--test put_lat --mpi %s/rmx.csv", "rmx.csv:2: not Open MPI's results"},
        {"--test put_lat --mpi %s/garbage.csv", "garbage.csv:1: not Open MPI's results"},
        {"--test put_lat --mpi %s/sm.csv", "that is --mpi-sm's file"},
        {"--test put_lat --mpi-sm %s/mpi.csv", "that is --mpi's file"},
        {"--test put_lat --shmem %s/mpi.csv", "not OpenSHMEM's results"},
        {"--test put_lat --shmem %s/size.csv", "size.csv:2: not a row"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char args[512];
        snprintf(args, sizeof(args), bad[i][0], dir, dir);
        run_out_t r = run_perf(args);
        cr_expect_eq(r.status, 2, "%s: exit %d, stderr:\n%s", args, r.status, r.err);
        cr_expect(strstr(r.err, bad[i][1]) != NULL, "%s: no \"%s\" in:\n%s", args, bad[i][1],
                  r.err);
        cr_expect(r.out[0] == '\0', "%s: stdout:\n%s", args, r.out);
        free(r.out);
    }
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[128];
        snprintf(path, sizeof(path), "%s/%s.csv", dir, files[i][0]);
        unlink(path);
    }
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

/* ---------------------------------------------------------------- the command line */
/* Every bad input: status 2, a message on stderr naming the problem, nothing on stdout (nothing
 * was measured).  None of these forks a rank. */
Test(perf, bad_input_is_refused_with_status_2_and_a_message)
{
    static const char *const bad[][2] = {
        {"--sizes 64G", "--sizes '64G': a size is 1 B .. 4 MiB"},
        {"--max 5M", "--max '5M': a size is 1 B .. 4 MiB"},
        {"--min 0", "--min '0': a size is 1 B"},
        {"--sizes 8,,16", "--sizes '8,,16': an empty"},
        {"--sizes 8,", "--sizes '8,': an empty"},
        {"--sizes -8", "--sizes '-8': not a size"},
        {"--sizes 4Kx", "--sizes '4Kx': not a size"},
        {"--min 99999999999999999999G", "not a size"},
        {"--min 64 --max 8", "--min is larger than --max"},
        {"--test put_rate --sizes 8,1M", "no selected test runs at 1 MiB"},
        {"--test sub --sizes 3", "nothing to measure"},
        {"--test fadd --sizes 4M", "no selected test runs at 4 MiB"}, /* ran fadd at 8 B */
        {"--test win_create,sync_all --sizes 8", "no selected test runs at 8 B"},
        {"--iters x", "--iters 'x': need a whole number >= 1"},
        {"--iters 10x", "--iters '10x': need a whole number"},
        {"--iters 0", "--iters '0'"},
        {"--iters -5", "--iters '-5'"},
        {"--iters 99999999999999999999", "--iters '99999999999999999999'"},
        {"--warmup -1", "--warmup '-1': need a whole number >= 0"},
        {"--time 0", "--time '0': need seconds"},
        {"--time nan", "--time 'nan'"},
        {"--time 1e9", "--time '1e9'"},
        {"--time 0.1s", "--time '0.1s'"},
        {"--idle-target inf", "--idle-target 'inf'"},
        {"--reps 0", "--reps '0': need a whole number in 1 .. 101"},
        {"--reps 102", "--reps '102'"},
        {"--ranks 1", "--ranks '1': need a whole number in 2 .. 64"},
        {"--ranks 65", "--ranks '65'"},
        {"--ranks 2 --target 2", "--target 2: need a rank below --ranks 2"},
        {"--target 0", "--target '0'"},
        {"--test no_such_test", "no test or group 'no_such_test'"},
        {"--json=1", "option '--json' takes no value (--json=1)"}, /* said '-\n' */
        {"--help=x", "option '--help' takes no value"},
        {"--shared-context", "--shared-context: only with --threads N > 1"},
        {"--threads 2 --test all", "--threads: 'all' is not put_rate or fadd"},
        {"--test put,", "--test 'put,': an empty test name"},
        {"--baseline mpi", "--baseline 'mpi': need ucp or none"},
        {"--frobnicate", "unknown option '--frobnicate'"},
        {"-x", "unknown option '-x'"},
        {"--time", "option '--time' needs a value"},
        {"stray", "unexpected argument 'stray'"},
        {"--format csv", "--format applies to --output"},
        {"--output r.txt", "--output 'r.txt': name it .csv or .json"},
        {"--output r.csv --format xml", "--format 'xml': need csv or json"},
        {"--output /nonexistent/r.csv", "--output /nonexistent/r.csv: No such file"},
        {"--plot /nonexistent/p.svg", "--plot /nonexistent/p.svg: No such file"},
        {"--mpi /nonexistent/m.csv", "--mpi /nonexistent/m.csv: No such file"},
        {"--merge /nonexistent/m.csv", "--merge /nonexistent/m.csv: No such file"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        run_out_t r = run_perf(bad[i][0]);
        cr_expect_eq(r.status, 2, "'%s' exited %d; stderr:\n%s", bad[i][0], r.status, r.err);
        cr_expect(strncmp(r.err, "rmx_perf: ", 10) == 0 && strstr(r.err, bad[i][1]) != NULL,
                  "'%s': stderr lacks \"%s\":\n%s", bad[i][0], bad[i][1], r.err);
        cr_expect_str_empty(r.out, "'%s' printed on stdout:\n%s", bad[i][0], r.out);
        free(r.out);
    }
}

/* Option names as perf/compare.sh, the Makefile and the README spell them, in both getopt
 * forms (--opt value, --opt=value), are accepted. */
Test(perf, existing_option_spellings_still_work)
{
    run_out_t r = run_perf("--ranks=2 --iters=50 --warmup 5 --time=0.005 --reps 1 --quiet "
                           "--tests fadd --baseline=none --progress --quiet --json --csv");
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    cr_expect(strstr(r.out, "\ntest,size,unit,rmx\nfadd,8,us,") != NULL, "%s", r.out);
    free(r.out);
}

/* A write that fails after the measurement (a full disk: /dev/full) is status 1 and a message
 * naming what was not written. */
Test(perf, failed_output_write_exits_1)
{
    static const char *const cases[][2] = {
        {"--output /dev/full --format csv", "cannot write /dev/full"},
        {"--output /dev/full --format json", "cannot write /dev/full"},
        {"--plot /dev/full", "cannot write /dev/full"},
        {"--csv >/dev/full", "cannot write standard output"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char args[512];
        snprintf(args, sizeof(args), QUICK " --test fadd,put_lat --sizes 8,64 %s", cases[i][0]);
        run_out_t r = run_perf(args);
        cr_expect_eq(r.status, 1, "'%s' exited %d; stderr:\n%s", cases[i][0], r.status, r.err);
        cr_expect(strstr(r.err, cases[i][1]) != NULL, "'%s': stderr lacks \"%s\":\n%s",
                  cases[i][0], cases[i][1], r.err);
        free(r.out);
    }
}

/* A small JSON checker (RFC 8259 grammar, no semantics): the end of the value at p, or NULL. */
static const char *json_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

static const char *json_str(const char *p)
{
    if (*p != '"')
        return NULL;
    for (p++; *p != '"'; p++) {
        if (*p == '\0' || (unsigned char)*p < 0x20)
            return NULL;
        if (*p != '\\')
            continue;
        p++;
        if (*p == 'u') {
            for (int i = 0; i < 4; i++)
                if (!isxdigit((unsigned char)*++p))
                    return NULL;
        } else if (*p == '\0' || strchr("\"\\/bfnrt", *p) == NULL)
            return NULL;
    }
    return p + 1;
}

static const char *json_digits(const char *p)
{
    if (!isdigit((unsigned char)*p))
        return NULL;
    while (isdigit((unsigned char)*p))
        p++;
    return p;
}

static const char *json_num(const char *p)
{
    if (*p == '-')
        p++;
    p = *p == '0' ? p + 1 : json_digits(p);
    if (p != NULL && *p == '.')
        p = json_digits(p + 1);
    if (p != NULL && (*p == 'e' || *p == 'E')) {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        p = json_digits(p);
    }
    return p;
}

static const char *json_value(const char *p, int depth)
{
    p = json_ws(p);
    if (depth > 16)
        return NULL;
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        p = json_ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (obj) {
                p = json_str(json_ws(p));
                if (p == NULL || *(p = json_ws(p)) != ':')
                    return NULL;
                p++;
            }
            if ((p = json_value(p, depth + 1)) == NULL)
                return NULL;
            p = json_ws(p);
            if (*p != ',')
                return *p == close ? p + 1 : NULL;
            p++;
        }
    }
    if (*p == '"')
        return json_str(p);
    if (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)
        return p + 4;
    if (strncmp(p, "false", 5) == 0)
        return p + 5;
    return json_num(p);
}

static int json_valid(const char *text)
{
    const char *end = json_value(text, 0);
    return end != NULL && *json_ws(end) == '\0';
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    while (buf != NULL && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 1024) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    if (buf != NULL)
        buf[len] = '\0';
    fclose(f);
    return buf;
}

/* --output FILE: JSON by extension beside a CSV stdout, CSV by --format whatever the name; both
 * carry the rows the run measured, and the JSON parses. */
Test(perf, output_file_is_valid_csv_or_json)
{
    cr_assert(json_valid("{\"a\": [1, -2.5e3, null, \"x\\\"\"], \"b\": {}}"));
    cr_assert(!json_valid("{\"a\": [1, ]}"), "the checker must be able to say no");
    cr_assert(!json_valid("{\"a\": nan}"));
    char dir[] = "/tmp/rmx_perf_out_XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    char js[128], cs[128], args[512];
    snprintf(js, sizeof(js), "%s/rows.json", dir);
    snprintf(cs, sizeof(cs), "%s/rows.data", dir);

    snprintf(args, sizeof(args), QUICK " --test put_lat,fadd --sizes 8,64 --csv --output %s", js);
    run_out_t r = run_perf(args);
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    cr_expect(strstr(r.out, "\nput_lat,64,us,") != NULL, "stdout is the CSV:\n%s", r.out);
    char *j = slurp(js);
    cr_assert(j != NULL, "%s not written", js);
    cr_expect(json_valid(j), "not JSON:\n%s", j);
    cr_expect(strstr(j, "{\"test\": \"put_lat\", \"size\": 64, \"unit\": \"us\", \"rmx\": ") !=
              NULL, "%s", j);
    cr_expect(strstr(j, "{\"test\": \"fadd\", \"size\": 8,") != NULL, "%s", j);
    free(j);
    free(r.out);

    snprintf(args, sizeof(args), QUICK " --test put_lat --sizes 8,64 --output %s --format csv",
             cs);
    r = run_perf(args);
    cr_assert_eq(r.status, 0, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
    cr_expect(strstr(r.out, "test             size") != NULL, "stdout is the table:\n%s", r.out);
    char *c = slurp(cs);
    cr_assert(c != NULL, "%s not written", cs);
    double rmx = NAN, ucp = NAN;
    cr_expect(strstr(c, "\ntest,size,unit,rmx,ucp,rmx_over_ucp\n") != NULL, "%s", c);
    cr_expect(csv_row(c, "put_lat", 8, &rmx, &ucp) && rmx > 0 && ucp > 0, "%s", c);
    cr_expect(csv_row(c, "put_lat", 64, &rmx, &ucp) && rmx > 0 && ucp > 0, "%s", c);
    free(c);
    free(r.out);
    unlink(js), unlink(cs);
    rmdir(dir);
}

/* The help text is the README's rmx_perf(1) block, byte for byte. */
Test(perf, help_is_the_readme_block)
{
    run_out_t r = run_perf("--help");
    cr_assert_eq(r.status, 0, "stderr:\n%s", r.err);
    char *readme = slurp(RMX_TEST_SRC_DIR "/../README.md");
    cr_assert(readme != NULL, "README.md not found");
    const char *mark = "<!-- rmx_perf --help:";
    const char *p = strstr(readme, mark);
    cr_assert(p != NULL, "README.md has no '%s' marker", mark);
    p = strstr(p, "\n```text\n");
    cr_assert(p != NULL, "no ```text block after the marker");
    p += strlen("\n```text\n");
    const char *end = strstr(p, "\n```\n");
    cr_assert(end != NULL, "the block is not closed");
    size_t n = (size_t)(end - p) + 1; /* with its last newline */
    size_t line = 1, i = 0;
    for (; i < n && r.out[i] == p[i]; i++)
        line += p[i] == '\n';
    cr_expect(i == n && r.out[n] == '\0',
              "rmx_perf --help and README.md differ from line %zu:\n  help:   %.80s\n  README: "
              "%.80s\n(paste the output of build/rmx_perf --help into the block)", line,
              r.out + i, p + i);
    free(readme);
    free(r.out);
}

/* ---------------------------------------------------------------- SIGINT / SIGTERM */
/* rmx_perf with args in a process group of its own (as a shell job is), stdout and stderr into
 * files: the test can signal it like ^C does (the group) or like kill does (the process). */
static pid_t spawn_perf(const char *args, const char *out, const char *err)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "exec %s %s", PERF_BIN, args);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: whichever runs first, the group exists before a kill */
    return pid;
}

/* The processes of group pgid (the launcher and its ranks), from /proc. */
static int group_members(pid_t pgid, pid_t *pids, int max)
{
    DIR *d = opendir("/proc");
    int n = 0;
    struct dirent *de;
    while (d != NULL && (de = readdir(d)) != NULL && n < max) {
        char path[300], buf[512];
        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        size_t len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *rp = strrchr(buf, ')'); /* "pid (comm) state ppid pgrp ..." */
        char state;
        int ppid, pgrp;
        if (rp != NULL && sscanf(rp + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 &&
            pgrp == pgid && state != 'Z')
            pids[n++] = (pid_t)atoi(de->d_name);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* What the ranks have mapped that must not outlive them: /dev/shm files still linked, and the
 * System V segments they created (shmid). */
typedef struct {
    char shm[16][160];
    int nshm;
    long sysv[64];
    int nsysv;
} leftovers_t;

static void note_leftovers(const pid_t *pids, int n, leftovers_t *l)
{
    for (int i = 0; i < n; i++) {
        char path[64], line[512];
        snprintf(path, sizeof(path), "/proc/%d/maps", (int)pids[i]);
        FILE *f = fopen(path, "r");
        while (f != NULL && fgets(line, sizeof(line), f) != NULL && l->nshm < 16) {
            char *p = strstr(line, "/dev/shm/");
            if (p != NULL && strstr(p, "(deleted)") == NULL) {
                p[strcspn(p, "\n")] = '\0';
                snprintf(l->shm[l->nshm++], sizeof(l->shm[0]), "%s", p);
            }
        }
        if (f != NULL)
            fclose(f);
    }
    FILE *f = fopen("/proc/sysvipc/shm", "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof(line), f) != NULL && l->nsysv < 64) {
        long key, shmid, perms, size, cpid;
        if (sscanf(line, "%ld %ld %lo %ld %ld", &key, &shmid, &perms, &size, &cpid) != 5)
            continue; /* the header */
        for (int i = 0; i < n; i++)
            if (cpid == pids[i])
                l->sysv[l->nsysv++] = shmid;
    }
    if (f != NULL)
        fclose(f);
}

static int sysv_exists(long shmid)
{
    FILE *f = fopen("/proc/sysvipc/shm", "r");
    char line[512];
    int found = 0;
    while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL) {
        long key, id;
        found = sscanf(line, "%ld %ld", &key, &id) == 2 && id == shmid;
    }
    if (f != NULL)
        fclose(f);
    return found;
}

/* Waits until file holds needle (or seconds pass); 1 when it does. */
static int wait_for_text(const char *file, const char *needle, double seconds)
{
    for (double t = 0; t < seconds; t += 0.05) {
        char *text = slurp(file);
        int hit = text != NULL && strstr(text, needle) != NULL;
        free(text);
        if (hit)
            return 1;
        usleep(50 * 1000);
    }
    return 0;
}

/* The exit status of pid within seconds; -1 (and the group SIGKILLed) when it did not end. */
static int wait_exit(pid_t pid, double seconds)
{
    int ws;
    for (double t = 0; t < seconds; t += 0.02) {
        if (waitpid(pid, &ws, WNOHANG) == pid)
            return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws) + 1000;
        usleep(20 * 1000);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, &ws, 0);
    return -1;
}

/* A run of 23 points of about 1.2 s each, interrupted after its second: rank 0 prints the two
 * or more rows so far (table and --output CSV) with a note, the status is 128 + sig, and no
 * process, /dev/shm file or System V segment of the run is left. */
static void interrupt_run(int sig, int whole_group)
{
    char dir[] = "/tmp/rmx_perf_sig_XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    char out[128], err[128], csv[128], args[512];
    snprintf(out, sizeof(out), "%s/out", dir);
    snprintf(err, sizeof(err), "%s/err", dir);
    snprintf(csv, sizeof(csv), "%s/rows.csv", dir);
    snprintf(args, sizeof(args), "--ranks 2 --test put_lat --iters 1000000000 --warmup 10 "
             "--time 0.5 --reps 1 --progress --output %s", csv);
    pid_t pid = spawn_perf(args, out, err);
    int started = wait_for_text(err, "[  3/", RMX_T(60));
    pid_t pids[16];
    int n = group_members(pid, pids, 16);
    leftovers_t l = {.nshm = 0};
    note_leftovers(pids, n, &l);
    kill(whole_group ? -pid : pid, sig);
    int st = wait_exit(pid, RMX_T(30));
    char *o = slurp(out), *e = slurp(err), *c = slurp(csv);
    cr_assert(started, "no third point within 60 s; stderr:\n%s", e);
    cr_expect_eq(n, 3, "the launcher and 2 ranks, found %d", n);
    cr_expect_eq(st, 128 + sig, "exit status %d, want %d; stderr:\n%s", st, 128 + sig, e);
    char note[64];
    snprintf(note, sizeof(note), "# interrupted by %s after ", sig == SIGINT ? "SIGINT" :
             "SIGTERM");
    cr_expect(o != NULL && strstr(o, note) != NULL, "no '%s' on stdout:\n%s", note, o);
    cr_expect(o != NULL && strstr(o, "\nput_lat           1 B") != NULL &&
              strstr(o, "\nput_lat           2 B") != NULL, "rows lost:\n%s", o);
    double rmx, ucp;
    cr_expect(c != NULL && strstr(c, note) != NULL && csv_row(c, "put_lat", 1, &rmx, &ucp) &&
              csv_row(c, "put_lat", 2, &rmx, &ucp), "--output lacks the rows:\n%s", c);
    cr_expect(kill(-pid, 0) != 0 && errno == ESRCH, "processes of the run are left");
    for (int i = 0; i < l.nshm; i++)
        cr_expect(access(l.shm[i], F_OK) != 0, "%s is left", l.shm[i]);
    for (int i = 0; i < l.nsysv; i++)
        cr_expect(!sysv_exists(l.sysv[i]), "System V segment %ld is left", l.sysv[i]);
    free(o), free(e), free(c);
    unlink(out), unlink(err), unlink(csv);
    rmdir(dir);
}

Test(perf, sigint_to_the_group_prints_the_rows_so_far, .timeout = RMX_T(120))
{
    interrupt_run(SIGINT, 1); /* ^C */
}

Test(perf, sigterm_to_the_launcher_prints_the_rows_so_far, .timeout = RMX_T(120))
{
    interrupt_run(SIGTERM, 0); /* kill PID: the launcher alone gets it */
}

/* kill -INT PID: the launcher forwards it as SIGTERM, but the note names what the user sent
 * (it said SIGTERM beside an exit status of 130). */
Test(perf, sigint_to_the_launcher_alone_is_named_sigint, .timeout = RMX_T(120))
{
    interrupt_run(SIGINT, 0);
}

/* --threads N (issue 18): rank 0's N threads, each on a stream of its own (--shared-context: on
 * the one context, RMX_THREAD_MULTIPLE): put_rate is their total rate, fadd each one's latency;
 * rmx only; other tests are refused. */
static double rmx_only_value(const char *csv, const char *row)
{
    const char *p = strstr(csv, row);
    return p != NULL ? strtod(p + strlen(row), NULL) : NAN;
}

Test(perf, threads_on_streams_and_on_one_context)
{
    static const char *const modes[] = {" --threads 3", " --threads 2 --shared-context"};
    run_out_t r;
    for (int m = 0; m < 2; m++) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "%s%s --sizes 8 --csv", QUICK, modes[m]);
        r = run_perf(cmd);
        cr_assert_eq(r.status, 0, "%s: rmx_perf exited %d; stderr:\n%s\nstdout:\n%s", modes[m],
                     r.status, r.err, r.out);
        cr_expect(strstr(r.out, "\ntest,size,unit,rmx\n") != NULL, "not rmx only:\n%s", r.out);
        double rate = rmx_only_value(r.out, "\nput_rate,8,Mop/s,");
        double fadd = rmx_only_value(r.out, "\nfadd,8,us,");
        cr_expect(rate > 0 && isfinite(rate), "%s: put_rate %g:\n%s", modes[m], rate, r.out);
        cr_expect(fadd > 0 && isfinite(fadd), "%s: fadd %g:\n%s", modes[m], fadd, r.out);
        free(r.out);
    }
    r = run_perf(QUICK " --threads 2 --test get_lat");
    cr_expect_eq(r.status, 2, "--threads with get_lat: exit %d", r.status);
    cr_expect(strstr(r.err, "--threads") != NULL, "%s", r.err);
    free(r.out);
    r = run_perf(QUICK " --threads 17");
    cr_expect_eq(r.status, 2, "--threads 17: exit %d", r.status);
    free(r.out);
}

/* An output that names an input, or --output and --plot naming one file: --merge's own input
 * was truncated by --output before it was read again for the rows (the run printed headers
 * only), and --plot overwrote --output.  Refused before anything is written. */
Test(perf, an_output_naming_an_input_or_the_other_output_is_refused)
{
    char dir[] = "/tmp/rmx_perf_same_XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    const char *base = strrchr(dir, '/') + 1;
    char a[128], m[128], x[128], args[6][600];
    snprintf(a, sizeof(a), "%s/a.csv", dir);
    snprintf(m, sizeof(m), "%s/m.csv", dir);
    snprintf(x, sizeof(x), "%s/x.csv", dir);
    const char *text = "# rmx_perf: 2 ranks, rank 0 -> rank 1, median of 3 repetitions, "
                       "load average 1.00\ntest,size,unit,rmx,ucp,rmx_over_ucp\n"
                       "put_lat,8,us,1,10,0.1\n";
    const char *mpi = "test,size,unit,mpi\nput_lat,8,us,4\n";
    write_file(a, text);
    write_file(m, mpi);
    snprintf(args[0], sizeof(args[0]), "--merge %s --output %s", a, a);
    snprintf(args[1], sizeof(args[1]), "--merge %s --output %s/../%s/./a.csv", a, dir, base);
    snprintf(args[2], sizeof(args[2]), "--merge %s --plot %s", a, a);
    snprintf(args[3], sizeof(args[3]), "--merge %s --output %s --plot %s/./x.csv", a, x, dir);
    snprintf(args[4], sizeof(args[4]), "--test put_lat --sizes 8 --mpi %s --output %s", m, m);
    snprintf(args[5], sizeof(args[5]), "--test put_lat --sizes 8 --mpi %s --plot %s/../%s/m.csv",
             m, dir, base);
    const char *names[] = {"--output", "--output", "--plot", "--plot", "--output", "--plot"};
    for (int i = 0; i < 6; i++) {
        run_out_t r = run_perf(args[i]);
        cr_expect_eq(r.status, 2, "'%s' exited %d; stderr:\n%s", args[i], r.status, r.err);
        cr_expect(strstr(r.err, names[i]) != NULL && strstr(r.err, "same file") != NULL,
                  "'%s': stderr:\n%s", args[i], r.err);
        free(r.out);
        char *left_a = slurp(a), *left_m = slurp(m);
        cr_expect(left_a != NULL && strcmp(left_a, text) == 0 && left_m != NULL &&
                      strcmp(left_m, mpi) == 0,
                  "'%s' changed an input", args[i]);
        free(left_a);
        free(left_m);
        cr_expect(access(x, F_OK) != 0, "'%s' created %s", args[i], x);
    }
    /* distinct files still work, however spelled */
    snprintf(args[0], sizeof(args[0]), "--merge %s --output %s/./x.csv --csv", a, dir);
    run_out_t r = run_perf(args[0]);
    cr_expect_eq(r.status, 0, "'%s' exited %d; stderr:\n%s", args[0], r.status, r.err);
    free(r.out);
    unlink(a), unlink(m), unlink(x);
    rmdir(dir);
}
