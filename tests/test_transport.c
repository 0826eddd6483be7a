/* test_transport.c — which UCX transports rmx ends up on (peer error handling must not cost us
 * shared memory between local ranks: DESIGN.md, "UCP_ERR_HANDLING_MODE_PEER silently drops..."). */
#include "harness.h"
#include "../engine/internal.h"

static int rank_describe_peer(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    char info[8192];
    RANK_OK(rmx_ucx_ep_describe(ctx->peers[(ctx->rank + 1) % ctx->size].ep, info, sizeof(info)));
    RANK_ASSERT(strstr(info, "sysv") != NULL || strstr(info, "posix") != NULL,
                "local peers are not on shared memory:\n%s", info);
    RANK_ASSERT(strstr(info, "tcp") == NULL, "tcp chosen for a local peer:\n%s", info);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(transport, local_ranks_talk_over_shared_memory, .timeout = RMX_T(60))
{
    if (getenv("UCX_TLS") != NULL)
        cr_skip_test("UCX_TLS is set: the transport choice is the user's");
    run_ranks(2, rank_describe_peer, NULL);
}
