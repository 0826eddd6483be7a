/*
 * sync.c — image control: sync_memory (end the segment), sync_all (complete + barrier) and
 * sync_images (complete + pairwise notification).  The barrier and the notifications are remote
 * atomic increments of counters in the peers' control blocks, so they need no target-side thread:
 * the counters only grow, which makes every wait a simple "counter >= expected".
 */
#include <stddef.h>
#include <stdlib.h>
#include "internal.h"

static int any_peer_failed(rmx_ctx_t *ctx)
{
    for (int r = 0; r < ctx->size; r++)
        if (ctx->peers[r].failed)
            return 1;
    return 0;
}

/* peer < 0: any failed peer ends the wait (a collective needs them all). */
static int wait_failed(rmx_ctx_t *ctx, int peer)
{
    return peer >= 0 ? ctx->peers[peer].failed : any_peer_failed(ctx);
}

int rmx_wait_word_geq_from(rmx_ctx_t *ctx, volatile uint64_t *word, uint64_t value, int peer)
{
    unsigned idle = 0;
    /* A slow peer is legitimate here (it may compute for minutes before its sync), so there is no
     * deadline: a dead one is noticed by UCX keepalive, which runs inside ucp_worker_progress and
     * asks the kernel, not the peer (its pid over shared memory, its socket over tcp), so a busy
     * peer is never mistaken for a dead one.  UCX_KEEPALIVE_INTERVAL is peer_timeout_s/4 (ucx.c). */
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < value) {
        if (rmx_ucx_progress(&ctx->ucx) != 0)
            continue;
        if ((++idle & 255) == 0) {
            if (wait_failed(ctx, peer))
                return RMX_ERR_PEER;
            sched_yield();
        }
    }
    return RMX_OK;
}

int rmx_wait_word_geq(rmx_ctx_t *ctx, volatile uint64_t *word, uint64_t value)
{
    return rmx_wait_word_geq_from(ctx, word, value, -1);
}

static int notify(rmx_ctx_t *ctx, int target, size_t offset)
{
    uint64_t one = 1;
    rmx_remote_t *rc = &ctx->ctrl_remote[target];
    ctx->stats.ucp_amos++;
    return rmx_ucx_amo(&ctx->ucx, rmx_ep(ctx, target), UCP_ATOMIC_OP_ADD, &one, NULL,
                       sizeof(one), rc->addr + offset, rc->rkey);
}

/* Dissemination barrier: in round k rank i tells rank i+2^k, then waits to be told by i-2^k. */
int rmx_barrier_ucp(rmx_ctx_t *ctx)
{
    uint64_t epoch = ++ctx->barrier_epoch;
    int rc = RMX_OK;
    for (int k = 0, dist = 1; dist < ctx->size && rc == RMX_OK; k++, dist <<= 1) {
        int to = (ctx->rank + dist) % ctx->size;
        rc = notify(ctx, to, offsetof(rmx_ctrl_t, barrier) + (size_t)k * sizeof(uint64_t));
        if (rc == RMX_OK)
            rc = rmx_wait_word_geq(ctx, &ctx->ctrl->barrier[k], epoch);
    }
    if (rc == RMX_OK)
        ctx->stats.barriers++;
    return rc;
}

int rmx_sync_memory(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    return rc != RMX_OK ? rc : rmx_tracker_complete(ctx, -1);
}

int rmx_sync_all(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return rc;
    rc = rmx_tracker_complete(ctx, -1);
    int rc2 = rmx_barrier_ucp(ctx);
    return rc != RMX_OK ? rc : rc2;
}

static int check_image_list(rmx_ctx_t *ctx, const int *images, int n)
{
    if (n < 0)
        return RMX_ERR_ARG;
    if (n > 0 && images == NULL)
        return RMX_ERR_ARG;
    uint8_t *seen = calloc((size_t)ctx->size, 1);
    if (seen == NULL)
        return RMX_ERR_NOMEM;
    int rc = RMX_OK;
    for (int i = 0; i < n && rc == RMX_OK; i++) {
        if (images[i] < 0 || images[i] >= ctx->size)
            rc = RMX_ERR_RANK;
        else if (seen[images[i]]++)
            rc = RMX_ERR_ARG; /* Fortran: an image may appear once */
    }
    free(seen);
    return rc;
}

int rmx_sync_images(rmx_ctx_t *ctx, const int *images, int n)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return rc;
    int all = images == NULL;
    if (all)
        n = ctx->size;
    else if ((rc = check_image_list(ctx, images, n)) != RMX_OK)
        return rc;
    for (int i = 0; i < n; i++) {
        int peer = all ? i : images[i];
        if (ctx->peers[peer].failed)
            return RMX_ERR_PEER;
    }
    /* Complete every operation of this segment, not only those to the partners: segment order
     * is transitive (if we put to C, then sync with B, and B then syncs with C, C's next segment
     * follows ours and must see the put). */
    rc = rmx_tracker_complete(ctx, -1);
    for (int i = 0; i < n && rc == RMX_OK; i++) {
        int peer = all ? i : images[i];
        if (peer == ctx->rank)
            continue;
        ctx->images_sent[peer]++;
        rc = notify(ctx, peer, offsetof(rmx_ctrl_t, images) + (size_t)ctx->rank * sizeof(uint64_t));
    }
    for (int i = 0; i < n && rc == RMX_OK; i++) {
        int peer = all ? i : images[i];
        if (peer != ctx->rank)
            rc = rmx_wait_word_geq_from(ctx, &ctx->ctrl->images[peer], ctx->images_sent[peer],
                                        peer);
    }
    return rc;
}
