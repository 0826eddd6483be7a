/*
 * peers.c — the endpoints of a context or a stream to every rank: connected to the ranks' service
 * workers, failures recorded by UCX's error callback and retired at the next entry point.
 */
#include <stdlib.h>
#include "internal.h"

void rmx_peer_failed(rmx_peer_t *p)
{
    if (p->failed)
        return;
    p->failed = 1;
    p->ctx->unreaped = 1;
    if (p->am != NULL)
        rmx_am_peer_failed(&p->ctx->ucx, p->am); /* its answers will never come */
}

/* Called from inside ucp_worker_progress: only record the failure; the endpoint is closed at the
 * next entry point (rmx_peers_reap). */
static void on_peer_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    rmx_peer_t *p = arg;
    rmx_log(p->ctx, RMX_LOG_DEBUG, "peer %d failed: %s (UCX)", (int)(p - p->ctx->peers),
            ucs_status_string(status));
    rmx_peer_failed(p);
}

/* Peers that UCX would serve RMA to in software (tcp) are reached over rmx's active messages
 * (transports/am_rma.c: where UCX's own emulation aborts a survivor that answers a dead rank);
 * this rank itself through its own worker (UCX's self transport: in place). */
int rmx_peers_connect(rmx_ctx_t *ctx, const void *addrs, size_t stride, const void *own,
                      const rmx_peer_t *known)
{
    ctx->peers = calloc((size_t)ctx->size, sizeof(*ctx->peers));
    int rc = ctx->peers == NULL ? RMX_ERR_NOMEM : rmx_am_join(&ctx->ucx, ctx->rank, ctx->size);
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        size_t len;
        const void *addr = r == ctx->rank ? own : rmx_exchange_blob(addrs, stride, r, &len);
        rmx_peer_t *p = &ctx->peers[r];
        p->ctx = ctx;
        p->rma_mapped = -1;
        if (known != NULL && r != ctx->rank && known[r].failed) {
            rmx_peer_failed(p); /* known dead: no endpoint (tcp would be refused, shm unmappable) */
            continue;
        }
        rc = rmx_ucx_ep_create(&ctx->ucx, addr, on_peer_error, p, &p->ep);
        if (rc != RMX_OK && known != NULL && r != ctx->rank) {
            /* a stream: a rank it cannot reach (one dying now) is failed for it alone */
            rmx_log(ctx, RMX_LOG_WARN, "no endpoint to rank %d (%s): it is failed for this "
                    "stream", r, rmx_strerror(rc));
            p->ep = NULL;
            rmx_peer_failed(p);
            rc = RMX_OK;
            continue;
        }
        if (rc == RMX_OK && r != ctx->rank)
            rc = rmx_am_route(&ctx->ucx, p->ep, r, &p->am);
    }
    return rc;
}

int rmx_peers_wire_up(rmx_ctx_t *ctx, const rmx_remote_t *ping)
{
    rmx_ucx_dest_t *dests = calloc((size_t)ctx->size, sizeof(*dests));
    if (dests == NULL)
        return RMX_ERR_NOMEM;
    int n = 0, rc = RMX_OK;
    for (int r = 0; r < ctx->size; r++) {
        rmx_peer_t *p = &ctx->peers[r];
        if (p->ep == NULL || r == ctx->rank)
            continue;
        if (p->am != NULL) {
            /* A round trip: its answer comes back on the connection the peer opened to this
             * worker, behind the handshake's reply, which is then no longer pending there. */
            uint64_t word;
            int rc1 = rmx_am_get(&ctx->ucx, p->am, &word, sizeof(word), ping[r].addr);
            if (rc1 == RMX_ERR_TIMEOUT)
                rc = rc1;
        } else {
            dests[n++] = (rmx_ucx_dest_t){.ep = p->ep};
        }
    }
    int rc2 = rmx_ucx_flush_eps(&ctx->ucx, dests, n);
    free(dests);
    return rc != RMX_OK ? rc : rc2;
}

void rmx_peers_reap(rmx_ctx_t *ctx)
{
    ctx->unreaped = 0;
    for (int r = 0; r < ctx->size; r++) {
        rmx_peer_t *p = &ctx->peers[r];
        if (p->failed && p->ep != NULL) {
            p->dead_ep = p->ep;
            p->ep = NULL;
        }
    }
}

void rmx_peers_close(rmx_ctx_t *ctx)
{
    for (int r = 0; ctx->peers != NULL && r < ctx->size; r++) {
        rmx_peer_t *p = &ctx->peers[r];
        if (p->ep != NULL)
            rmx_ucx_ep_close(&ctx->ucx, p->ep, !p->failed);
        if (p->dead_ep != NULL)
            rmx_ucx_ep_close(&ctx->ucx, p->dead_ep, 0);
    }
    free(ctx->peers);
    ctx->peers = NULL;
}

void rmx_remote_map(rmx_ctx_t *ctx, int r, rmx_remote_t *rem, int direct)
{
    rem->ptr = rmx_ucx_rkey_ptr(rem->rkey, rem->addr);
    rem->direct = direct ? rem->ptr : NULL;
    rem->lands = 0;
    rem->ucp_amo_in_place = 0;
    if (rem->ptr == NULL)
        return;
    /* Asked once per peer, and only of peers UCX maps memory of (ucp_ep_print_info is slow). */
    rmx_peer_t *p = &ctx->peers[r];
    if (p->rma_mapped < 0)
        p->rma_mapped = p->ep != NULL && rmx_ucx_ep_rma_mapped(p->ep);
    rem->lands = p->rma_mapped && p->am == NULL;
    rem->ucp_amo_in_place = rem->direct == NULL && p->am == NULL;
}
