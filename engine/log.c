/*
 * log.c — RMX_LOG: resolving the level, and writing a line (log.h).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "log.h"

static const char *const level_words[] = {"error", "warn", "info", "debug"};
#define N_LEVELS (sizeof(level_words) / sizeof(level_words[0]))

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Where messages without a context count their time from: the process's first one. */
static pthread_once_t anon_once = PTHREAD_ONCE_INIT;
static double anon_t0;

static void anon_start(void)
{
    anon_t0 = monotonic_s();
}

/* RMX_LOG's level, or 0 when unset or empty, -1 when it names none. */
static int env_level(const char **value)
{
    const char *s = getenv("RMX_LOG");
    *value = s;
    if (s == NULL || *s == '\0')
        return 0;
    for (size_t i = 0; i < N_LEVELS; i++)
        if (strcmp(s, level_words[i]) == 0)
            return RMX_LOG_ERROR + (int)i;
    return -1;
}

rmx_log_level_t rmx_log_anon_level(void)
{
    const char *s;
    int v = env_level(&s);
    return v > 0 ? (rmx_log_level_t)v : RMX_LOG_WARN;
}

int rmx_log_env(rmx_log_level_t dflt, rmx_log_level_t *level)
{
    const char *s;
    int v = env_level(&s);
    if (v < 0) {
        rmx_logf(NULL, RMX_LOG_ERROR, "RMX_LOG=%s is not one of %s %s %s %s", s, level_words[0],
                 level_words[1], level_words[2], level_words[3]);
        return RMX_ERR_ARG;
    }
    *level = v > 0 ? (rmx_log_level_t)v : dflt;
    return RMX_OK;
}

int rmx_log_open(rmx_logger_t *lg, rmx_log_level_t field)
{
    lg->rank = -1;
    lg->t0 = monotonic_s();
    lg->level = RMX_LOG_WARN; /* for the messages about a bad field or RMX_LOG itself */
    if ((unsigned)field > RMX_LOG_DEBUG)
        return RMX_ERR_ARG;
    return rmx_log_env(field == RMX_LOG_DEFAULT ? RMX_LOG_WARN : field, &lg->level);
}

void rmx_log_emit(const rmx_logger_t *lg, rmx_log_level_t level, const char *fmt, ...)
{
    char line[1024];
    double t0 = 0;
    char rank[16] = "-";
    if (lg != NULL) {
        t0 = lg->t0;
        if (lg->rank >= 0)
            snprintf(rank, sizeof(rank), "%d", lg->rank);
    } else {
        pthread_once(&anon_once, anon_start);
        t0 = anon_t0;
    }
    const char *word = level >= RMX_LOG_ERROR && level <= RMX_LOG_DEBUG
                           ? level_words[level - RMX_LOG_ERROR] : "?";
    int n = snprintf(line, sizeof(line), "rmx[%s +%.3fs] %s: ", rank, monotonic_s() - t0, word);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof(line))
        n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(line) - 2) /* cut: the line still ends with its newline */
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    /* One write: whole lines, even when ranks and threads share the stream.  stdio's stderr is
     * unbuffered, so nothing of the program's own is left behind in a buffer to overtake. */
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

/* ---------------------------------------------------------------- rmx_init's report (info) */
#include "internal.h"
#include "../transports/topo.h"

static const char *bind_word(rmx_bind_t b)
{
    switch (b) {
    case RMX_BIND_CORE: return "core";
    case RMX_BIND_NUMA: return "numa";
    default: return "none";
    }
}

static void report_boot(rmx_ctx_t *ctx)
{
    char cpus[256];
    if (rmx_topo_binding(cpus, sizeof(cpus)) != RMX_OK)
        snprintf(cpus, sizeof(cpus), "unknown");
    rmx_log(ctx, RMX_LOG_INFO, "bootstrap %s: rank %d of %d (local %d of %d), peer timeout %g s",
            ctx->boot.name, ctx->rank, ctx->size, ctx->boot.local_rank, ctx->boot.local_size,
            ctx->cfg.peer_timeout_s);
    /* the launcher may have bound the process itself (mpirun does): say both */
    rmx_log(ctx, RMX_LOG_INFO, "binding: RMX_BIND %s (rmx_config_t.bind); this process runs on "
            "cpus %s", bind_word(ctx->cfg.bind), cpus);
}

static void report_progress(rmx_ctx_t *ctx)
{
    const char *why;
    int running = ctx->ucx.agent_running;
    switch (ctx->cfg.progress) {
    case RMX_PROGRESS_THREAD:
        why = "RMX_PROGRESS=thread";
        break;
    case RMX_PROGRESS_NONE:
        why = "RMX_PROGRESS=none: peers' operations that need this rank are served only inside "
              "its rmx calls";
        break;
    default:
        why = ctx->size == 1 ? "auto: a single rank"
              : running      ? "auto: some peer is reached through a transport that needs this "
                               "rank's progress"
                             : "auto: every peer reaches this rank one-sidedly over shared "
                               "memory; it starts with the first window of registered memory";
    }
    rmx_log(ctx, RMX_LOG_INFO, "progress: agent %s (%s)", running ? "running" : "not running",
            why);
}

static void report_direct(rmx_ctx_t *ctx)
{
    int mapped = 0;
    for (int r = 0; r < ctx->size; r++)
        if (r != ctx->rank && ctx->ctrl_remote[r].direct != NULL)
            mapped++;
    const char *user = ctx->cfg.window_memory == RMX_WIN_MEMORY_USER
                           ? "; windows of rmx_win_allocate are registered pages "
                             "(RMX_WIN_MEMORY=user), reached through UCP"
                           : "";
    if (ctx->size == 1)
        rmx_log(ctx, RMX_LOG_INFO, "direct: not needed (a single rank: puts and gets are local "
                "copies)");
    else if (!ctx->direct)
        rmx_log(ctx, RMX_LOG_INFO, "direct: off (RMX_DIRECT=0 or rmx_config_t.direct): every "
                "operation goes through UCP");
    else if (mapped == 0)
        rmx_log(ctx, RMX_LOG_INFO, "direct: not in use: UCX maps no peer's memory here (no "
                "shared-memory transport to any peer: other nodes, or UCX_TLS)");
    else if (ctx->direct_atomics)
        rmx_log(ctx, RMX_LOG_INFO, "direct: in use: puts and gets to %d mapped peers are copies, "
                "atomics are CPU atomics%s", mapped, user);
    else
        rmx_log(ctx, RMX_LOG_INFO, "direct: puts and gets to %d of %d peers are copies; atomics "
                "go through UCP (some rank does not map every other rank's memory, or has direct "
                "access off)%s", mapped, ctx->size - 1, user);
}

/* One peer in a few words: what carries its puts, gets and atomics. */
static void describe_peer(rmx_ctx_t *ctx, int r, char *out, size_t len)
{
    char rma[128], amo[128], am[128];
    if (rmx_ucx_ep_transports(ctx->peers[r].ep, rma, amo, am, sizeof(rma)) != RMX_OK) {
        snprintf(out, len, "not described (UCX gave no endpoint information)");
        return;
    }
    if (ctx->peers[r].am != NULL) {
        snprintf(out, len, "put/get/atomics rmx active messages over %s", am);
        return;
    }
    int mapped = ctx->ctrl_remote[r].direct != NULL;
    snprintf(out, len, "put/get %s, atomics %s%s", rma, amo,
             !mapped                ? ""
             : ctx->direct_atomics ? ", direct (mapped, CPU atomics)"
                                   : ", direct (mapped)");
}

/* Peers alike in a run ("peers 1-3: ..."), so that a large job says a few lines. */
static void report_peers(rmx_ctx_t *ctx)
{
    char prev[512] = "", cur[512];
    int first = -1, last = -1;
    for (int r = 0; r <= ctx->size; r++) {
        if (r == ctx->rank)
            continue;
        if (r < ctx->size)
            describe_peer(ctx, r, cur, sizeof(cur));
        if (first >= 0 && (r == ctx->size || strcmp(cur, prev) != 0)) {
            if (first == last)
                rmx_log(ctx, RMX_LOG_INFO, "peer %d: %s", first, prev);
            else
                rmx_log(ctx, RMX_LOG_INFO, "peers %d-%d: %s", first, last, prev);
            first = -1;
        }
        if (r == ctx->size)
            break;
        if (first < 0) {
            first = r;
            memcpy(prev, cur, sizeof(prev));
        }
        last = r;
    }
}

void rmx_log_init_report(rmx_ctx_t *ctx)
{
    report_boot(ctx);
    report_progress(ctx);
    report_direct(ctx);
    report_peers(ctx);
}
