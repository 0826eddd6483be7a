/*
 * test_log.c — RMX_LOG and rmx_config_t.log_level: what real ranks write on stderr at each level.
 *
 * The ranks' stderr is captured: the test process points its descriptor 2 at a temporary file
 * before rmx_fork_run forks them (they inherit it), then reads the file.  Transport names differ
 * between the ways make check runs (shared memory, UCX_TLS=tcp,self, RMX_DIRECT=0,
 * RMX_WIN_MEMORY=user), so the lines are checked for their structure, and the transport against
 * the one this way must use.
 */
#include <fcntl.h>
#include <regex.h>
#include <sys/stat.h>
#include "harness.h"

/* Run n ranks of fn with stderr captured; returns what they wrote (malloc'd, NUL-terminated). */
static char *run_captured(int n, rmx_fork_main_t fn, const rmx_config_t *cfg, int *rc)
{
    char path[] = "/tmp/rmx_test_log.XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0, "mkstemp");
    unlink(path);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    cr_assert(saved >= 0);
    dup2(fd, STDERR_FILENO);
    int status[8];
    *rc = rmx_fork_run(n, fn, NULL, cfg, RMX_T(60), status);
    dup2(saved, STDERR_FILENO);
    close(saved);
    struct stat sb;
    cr_assert_eq(fstat(fd, &sb), 0);
    char *text = calloc(1, (size_t)sb.st_size + 1);
    cr_assert_not_null(text);
    ssize_t got = pread(fd, text, (size_t)sb.st_size, 0);
    cr_assert_eq(got, sb.st_size);
    close(fd);
    return text;
}

/* Lines of text matching the extended regular expression re (anchored per line). */
static int count_lines(const char *text, const char *re)
{
    regex_t rx;
    cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE | REG_NOSUB), 0, "regex %s", re);
    int n = 0;
    for (const char *p = text; *p != '\0';) {
        const char *eol = strchr(p, '\n');
        size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);
        char line[2048];
        snprintf(line, sizeof(line), "%.*s", (int)len, p);
        n += regexec(&rx, line, 0, NULL, 0) == 0;
        p += len + (eol != NULL);
    }
    regfree(&rx);
    return n;
}

/* One line per rank r of n whose message matches re: "rmx[r +S.SSSs] LEVEL: <re>". */
static void expect_per_rank(const char *text, int n, const char *level, const char *re)
{
    for (int r = 0; r < n; r++) {
        char full[512];
        snprintf(full, sizeof(full), "^rmx\\[%d \\+[0-9]+\\.[0-9]{3}s\\] %s: %s", r, level, re);
        cr_expect_eq(count_lines(text, full), 1, "want one line /%s/ of rank %d in:\n%s", full,
                     r, text);
    }
}

static int rank_init_finalize(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

/* A window, a lock and an unlock on the next rank, the free. */
static int rank_window_and_lock(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    void *base;
    rmx_win_t *win;
    RANK_OK(rmx_win_allocate(ctx, 4096, &base, &win));
    int next = (rmx_rank(ctx) + 1) % rmx_size(ctx);
    RANK_OK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, next, 0));
    RANK_OK(rmx_win_unlock(win, next));
    RANK_OK(rmx_win_free(&win));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

/* The transports this way of make check puts between two local ranks: shared memory, or tcp
 * when UCX_TLS leaves shared memory out (rmx then carries RMA over its active messages). */
static const char *expected_peer_line(void)
{
    const char *tls = getenv("UCX_TLS");
    int tcp_only = tls != NULL && strstr(tls, "tcp") != NULL && strstr(tls, "sm") == NULL &&
                   strstr(tls, "posix") == NULL && strstr(tls, "sysv") == NULL &&
                   strstr(tls, "all") == NULL;
    return tcp_only ? "put/get/atomics rmx active messages over tcp$"
                    : "put/get [a-z0-9_]+( [a-z0-9_]+)*, atomics [a-z0-9_ -]+(, direct \\(mapped"
                      "(, CPU atomics)?\\))?$";
}

/* Everything the info level promises, once per rank, with the rank's prefix. */
static void expect_info_report(const char *text, int n)
{
    expect_per_rank(text, n, "info", "bootstrap oob: rank [0-9]+ of 2 \\(local [0-9]+ of "
                                     "[0-9]+\\), peer timeout [0-9.e+]+ s$");
    expect_per_rank(text, n, "info", "binding: RMX_BIND (none|core|numa) .*runs on cpus [0-9]");
    expect_per_rank(text, n, "info", "progress: agent (running|not running) \\(.+\\)$");
    expect_per_rank(text, n, "info", "direct: .+");
    char re[512];
    for (int r = 0; r < n; r++) {
        snprintf(re, sizeof(re), "^rmx\\[%d \\+[0-9.]+s\\] info: peer %d: %s", r, 1 - r,
                 expected_peer_line());
        cr_expect_eq(count_lines(text, re), 1, "want /%s/ in:\n%s", re, text);
    }
}

Test(log, info_reports_transports_progress_direct_and_binding_per_rank, .timeout = RMX_T(90))
{
    setenv("RMX_LOG", "info", 1);
    int rc;
    char *text = run_captured(2, rank_init_finalize, NULL, &rc);
    cr_assert_eq(rc, RMX_OK, "ranks failed: %s\n%s", rmx_strerror(rc), text);
    expect_info_report(text, 2);
    /* what RMX_DIRECT=0 says is the reason it gives */
    const char *d = getenv("RMX_DIRECT");
    if (d != NULL && strcmp(d, "0") == 0)
        cr_expect_eq(count_lines(text, "info: direct: off \\(RMX_DIRECT=0"), 2, "%s", text);
    cr_expect_eq(count_lines(text, " debug: "), 0, "info level wrote debug lines:\n%s", text);
    free(text);
}

Test(log, warn_and_the_default_write_no_report, .timeout = RMX_T(90))
{
    static const char *const levels[] = {"warn", "error", NULL};
    for (int i = 0; i < 3; i++) {
        if (levels[i] != NULL)
            setenv("RMX_LOG", levels[i], 1);
        else
            unsetenv("RMX_LOG"); /* the default: warn */
        int rc;
        char *text = run_captured(2, rank_window_and_lock, NULL, &rc);
        cr_assert_eq(rc, RMX_OK, "ranks failed: %s\n%s", rmx_strerror(rc), text);
        cr_expect_eq(count_lines(text, "^rmx\\[.*\\] (info|debug): "), 0,
                     "RMX_LOG=%s wrote info or debug lines:\n%s", levels[i] ? levels[i] : "",
                     text);
        cr_expect_eq(count_lines(text, "peer [0-9]+: put/get"), 0, "%s", text);
        free(text);
    }
}

Test(log, debug_reports_windows_and_locks, .timeout = RMX_T(90))
{
    setenv("RMX_LOG", "debug", 1);
    int rc;
    char *text = run_captured(2, rank_window_and_lock, NULL, &rc);
    cr_assert_eq(rc, RMX_OK, "ranks failed: %s\n%s", rmx_strerror(rc), text);
    expect_info_report(text, 2); /* debug includes info */
    expect_per_rank(text, 2, "debug", "window 0x[0-9a-f]+ created: 4096 bytes here, "
                                      "(UCP-allocated|rmx's pages, registered \\(RMX_WIN_MEMORY="
                                      "user\\)); direct to [01] of 1 peers");
    expect_per_rank(text, 2, "debug", "window 0x[0-9a-f]+: exclusive lock of rank [01] taken$");
    expect_per_rank(text, 2, "debug", "window 0x[0-9a-f]+: lock of rank [01] released$");
    expect_per_rank(text, 2, "debug", "window 0x[0-9a-f]+ freed \\(4096 bytes here\\)$");
    free(text);
}

/* The field alone, with RMX_LOG unset; and RMX_LOG, when set, wins over it. */
Test(log, config_field_sets_the_level_and_rmx_log_wins, .timeout = RMX_T(90))
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cr_expect_eq(cfg.log_level, RMX_LOG_DEFAULT);
    cfg.log_level = RMX_LOG_INFO;
    unsetenv("RMX_LOG");
    int rc;
    char *text = run_captured(2, rank_init_finalize, &cfg, &rc);
    cr_assert_eq(rc, RMX_OK, "ranks failed: %s\n%s", rmx_strerror(rc), text);
    expect_info_report(text, 2);
    free(text);

    setenv("RMX_LOG", "warn", 1);
    text = run_captured(2, rank_init_finalize, &cfg, &rc);
    cr_assert_eq(rc, RMX_OK, "ranks failed: %s\n%s", rmx_strerror(rc), text);
    cr_expect_eq(count_lines(text, " info: "), 0, "RMX_LOG=warn did not win:\n%s", text);
    free(text);
}

/* In this process (no ranks needed): a bad RMX_LOG word or field value is refused, with a line. */
static char *init_captured(const rmx_config_t *cfg, int *rc)
{
    char path[] = "/tmp/rmx_test_log.XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    unlink(path);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    rmx_ctx_t *ctx = NULL;
    *rc = rmx_init(cfg, &ctx);
    dup2(saved, STDERR_FILENO);
    close(saved);
    if (*rc == RMX_OK)
        rmx_finalize(ctx);
    char *text = calloc(1, 4096);
    cr_assert_not_null(text);
    ssize_t got = pread(fd, text, 4095, 0);
    cr_assert(got >= 0);
    close(fd);
    return text;
}

Test(log, bad_values_are_refused_with_a_message)
{
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.bootstrap = RMX_BOOT_SINGLE;
    setenv("RMX_LOG", "loud", 1);
    int rc;
    char *text = init_captured(&cfg, &rc);
    cr_expect_eq(rc, RMX_ERR_ARG, "RMX_LOG=loud: %s", rmx_strerror(rc));
    cr_expect_eq(count_lines(text, "^rmx\\[- \\+[0-9.]+s\\] error: RMX_LOG=loud is not one of "
                                   "error warn info debug$"), 1, "%s", text);
    free(text);

    unsetenv("RMX_LOG");
    cfg.log_level = (rmx_log_level_t)7;
    text = init_captured(&cfg, &rc);
    cr_expect_eq(rc, RMX_ERR_ARG, "log_level 7: %s", rmx_strerror(rc));
    cr_expect_eq(count_lines(text, "error: rmx_init: rmx_config_t.log_level is not an "
                                   "rmx_log_level_t"), 1, "%s", text);
    free(text);

    /* the other words are accepted */
    static const char *const ok[] = {"error", "warn", "info", "debug", ""};
    cfg.log_level = RMX_LOG_DEFAULT;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        setenv("RMX_LOG", ok[i], 1);
        text = init_captured(&cfg, &rc);
        cr_expect_eq(rc, RMX_OK, "RMX_LOG=%s: %s\n%s", ok[i], rmx_strerror(rc), text);
        free(text);
    }
    unsetenv("RMX_LOG");
}
