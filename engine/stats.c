/* stats.c — rmx_stats: the counters the engine keeps of what it did (tests assert on them). */
#include <string.h>
#include "internal.h"

int rmx_stats(rmx_ctx_t *ctx, rmx_stats_t *out)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_stats(ctx, out));
    if (out == NULL)
        return RMX_ERR_ARG;
    *out = ctx->stats;
    double cpu_s;
    rmx_ucx_agent_usage(&ctx->ucx, &cpu_s, &out->agent_wakeups);
    out->agent_cpu_ns = (uint64_t)(cpu_s * 1e9);
    out->agent_running = ctx->ucx.agent_running;
    return RMX_OK;
}

int rmx_stats_reset(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_stats_reset(ctx));
    memset(&ctx->stats, 0, sizeof(ctx->stats));
    return RMX_OK;
}
