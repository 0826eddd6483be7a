/*
 * rmx_perf.c — smoke benchmark: 8-byte put+flush and get latency, rmx beside raw UCP on the same
 * endpoints in the same run.  (The full tool is built under its own issue.)
 *   rmx_perf [--ranks N] [--iters N] [--topology]
 * Under a PMIx launcher it uses the launched ranks; otherwise it forks --ranks local ranks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../api/rmx.h"
#include "../api/rmx_fork.h"
#include "../engine/internal.h"

typedef struct {
    int iters;
} perf_opts_t;

static double bench_rmx_put(rmx_ctx_t *ctx, rmx_win_t *win, int peer, int iters)
{
    uint64_t v = 1;
    double t0 = rmx_now_s();
    for (int i = 0; i < iters; i++) {
        rmx_put(win, &v, sizeof(v), peer, 0);
        rmx_sync_memory(ctx);
    }
    return (rmx_now_s() - t0) / iters * 1e6;
}

static double bench_ucp_put(rmx_ctx_t *ctx, rmx_win_t *win, int peer, int iters)
{
    uint64_t v = 1;
    ucp_ep_h ep = ctx->peers[peer].ep;
    double t0 = rmx_now_s();
    for (int i = 0; i < iters; i++) {
        rmx_ucx_put(&ctx->ucx, ep, &v, sizeof(v), win->remote[peer].addr, win->remote[peer].rkey);
        rmx_ucx_flush_worker(&ctx->ucx);
    }
    return (rmx_now_s() - t0) / iters * 1e6;
}

static double bench_rmx_get(rmx_ctx_t *ctx, rmx_win_t *win, int peer, int iters)
{
    (void)ctx;
    uint64_t v;
    double t0 = rmx_now_s();
    for (int i = 0; i < iters; i++)
        rmx_get(win, &v, sizeof(v), peer, 0);
    return (rmx_now_s() - t0) / iters * 1e6;
}

static double bench_ucp_get(rmx_ctx_t *ctx, rmx_win_t *win, int peer, int iters)
{
    uint64_t v;
    ucp_ep_h ep = ctx->peers[peer].ep;
    double t0 = rmx_now_s();
    for (int i = 0; i < iters; i++)
        rmx_ucx_get(&ctx->ucx, ep, &v, sizeof(v), win->remote[peer].addr, win->remote[peer].rkey);
    return (rmx_now_s() - t0) / iters * 1e6;
}

static int perf_main(const rmx_config_t *cfg, void *arg)
{
    perf_opts_t *o = arg;
    rmx_ctx_t *ctx;
    int rc = rmx_init(cfg, &ctx);
    if (rc != RMX_OK) {
        fprintf(stderr, "rmx_init: %s\n", rmx_strerror(rc));
        return 1;
    }
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    void *base;
    rmx_win_t *win;
    if ((rc = rmx_win_allocate(ctx, 4096, &base, &win)) != RMX_OK) {
        fprintf(stderr, "rmx_win_allocate: %s\n", rmx_strerror(rc));
        return 1;
    }
    int peer = (me + 1) % n;
    if (me == 0) {
        bench_rmx_put(ctx, win, peer, o->iters / 10);
        bench_ucp_put(ctx, win, peer, o->iters / 10);
        double rp = bench_rmx_put(ctx, win, peer, o->iters), up = bench_ucp_put(ctx, win, peer, o->iters);
        double rg = bench_rmx_get(ctx, win, peer, o->iters), ug = bench_ucp_get(ctx, win, peer, o->iters);
        printf("%-24s %12s %12s %8s\n", "test (8 B)", "rmx us", "ucp us", "rmx/ucp");
        printf("%-24s %12.3f %12.3f %8.2f\n", "put+flush latency", rp, up, rp / up);
        printf("%-24s %12.3f %12.3f %8.2f\n", "get latency", rg, ug, rg / ug);
    }
    rmx_sync_all(ctx);
    rmx_win_free(&win);
    rmx_finalize(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    perf_opts_t o = {.iters = 20000};
    int ranks = 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ranks") == 0 && i + 1 < argc)
            ranks = atoi(argv[++i]);
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            o.iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--topology") == 0)
            return rmx_topology_print(stdout) == RMX_OK ? 0 : 1;
        else {
            fprintf(stderr, "usage: %s [--ranks N] [--iters N] [--topology]\n", argv[0]);
            return 2;
        }
    }
    if (getenv("PMIX_NAMESPACE") != NULL)
        return perf_main(NULL, &o);
    int rc = rmx_fork_run(ranks, perf_main, &o, NULL, 600, NULL);
    return rc == RMX_OK ? 0 : 1;
}
