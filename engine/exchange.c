/*
 * exchange.c — the variable-length allgather rmx needs at init and window creation (worker
 * addresses and packed rkeys differ in length per rank and transport), built on the bootstrap's
 * fixed-length allgather: lengths first, then the blobs padded to the longest.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int rmx_exchange(rmx_ctx_t *ctx, const void *blob, size_t len, void **all, size_t *stride)
{
    rmx_boot_t *b = &ctx->boot;
    uint64_t mine = len;
    uint64_t *lens = malloc((size_t)ctx->size * sizeof(*lens));
    if (lens == NULL)
        return RMX_ERR_NOMEM;
    if (b->allgather(b, &mine, lens, sizeof(mine)) != RMX_OK) {
        free(lens);
        return RMX_ERR_BOOTSTRAP;
    }
    uint64_t longest = 0;
    for (int r = 0; r < ctx->size; r++)
        longest = lens[r] > longest ? lens[r] : longest;
    free(lens);

    size_t slot = sizeof(uint64_t) + (size_t)longest;
    char *send = calloc(1, slot);
    char *recv = malloc(slot * (size_t)ctx->size);
    if (send == NULL || recv == NULL) {
        free(send);
        free(recv);
        return RMX_ERR_NOMEM;
    }
    memcpy(send, &mine, sizeof(mine));
    if (len > 0)
        memcpy(send + sizeof(mine), blob, len);
    int rc = b->allgather(b, send, recv, slot) == RMX_OK ? RMX_OK : RMX_ERR_BOOTSTRAP;
    free(send);
    if (rc != RMX_OK) {
        free(recv);
        return rc;
    }
    *all = recv;
    *stride = slot;
    return RMX_OK;
}

int rmx_agree(rmx_ctx_t *ctx, int local_rc)
{
    rmx_boot_t *b = &ctx->boot;
    int32_t mine = local_rc;
    int32_t *all = malloc((size_t)ctx->size * sizeof(*all));
    if (all == NULL)
        return RMX_ERR_NOMEM; /* cannot take part: the others' exchange fails with ours */
    int rc = b->allgather(b, &mine, all, sizeof(mine)) == RMX_OK ? RMX_OK : RMX_ERR_BOOTSTRAP;
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++)
        if (all[r] != RMX_OK)
            rc = RMX_ERR_COLLECTIVE;
    free(all);
    return local_rc != RMX_OK ? local_rc : rc;
}

/* What each rank publishes per region, after its status: address, length, packed rkey length;
 * then the rkey. */
typedef struct {
    uint64_t addr;
    uint64_t len;
    uint64_t rkey_len;
} region_header_t;

/* This rank's blob: its status, then each region (only the status when it is not RMX_OK). */
static int pack_regions(rmx_ctx_t *ctx, int local_rc, const rmx_region_t *regions, int n,
                        char **blob, size_t *blob_len)
{
    void *rkey[RMX_REGIONS_MAX] = {NULL};
    size_t rkey_len[RMX_REGIONS_MAX] = {0}, total = sizeof(int64_t);
    for (int i = 0; i < n && local_rc == RMX_OK; i++) {
        if (regions[i].memh != NULL)
            local_rc = rmx_ucx_rkey_pack(&ctx->ucx, regions[i].memh, &rkey[i], &rkey_len[i]);
        total += sizeof(region_header_t) + rkey_len[i];
    }
    if (local_rc != RMX_OK)
        total = sizeof(int64_t);
    char *p = malloc(total);
    if (p == NULL && local_rc == RMX_OK)
        local_rc = RMX_ERR_NOMEM;
    if (p != NULL) {
        int64_t st = local_rc;
        memcpy(p, &st, sizeof(st));
        for (size_t at = sizeof(st), i = 0; local_rc == RMX_OK && i < (size_t)n; i++) {
            region_header_t h = {.addr = (uint64_t)(uintptr_t)regions[i].addr,
                                 .len = regions[i].len, .rkey_len = rkey_len[i]};
            memcpy(p + at, &h, sizeof(h));
            if (rkey_len[i] > 0)
                memcpy(p + at + sizeof(h), rkey[i], rkey_len[i]);
            at += sizeof(h) + rkey_len[i];
        }
    }
    for (int i = 0; i < n; i++)
        if (rkey[i] != NULL)
            rmx_ucx_rkey_buffer_release(rkey[i]);
    *blob = p;
    *blob_len = p != NULL ? total : 0; /* an empty blob fails the others too */
    return local_rc;
}

/* Rank r's regions from its blob into regions[i].remote[r]. */
static int unpack_regions(rmx_ctx_t *ctx, int r, const char *p, size_t got,
                          rmx_region_t *regions, int n)
{
    size_t at = sizeof(int64_t);
    for (int i = 0; i < n; i++) {
        region_header_t h;
        if (got < at + sizeof(h))
            return RMX_ERR_BOOTSTRAP;
        memcpy(&h, p + at, sizeof(h));
        at += sizeof(h);
        if (got - at < h.rkey_len)
            return RMX_ERR_BOOTSTRAP;
        rmx_remote_t *rem = &regions[i].remote[r];
        rem->addr = h.addr;
        rem->size = (size_t)h.len;
        rem->rkey = NULL;
        rem->ptr = NULL;
        rem->direct = NULL;
        if (h.rkey_len > 0) {
            int rc = rmx_ucx_rkey_unpack(rmx_ep(ctx, r), p + at, &rem->rkey);
            if (rc != RMX_OK)
                return rc;
            rem->ptr = rmx_ucx_rkey_ptr(rem->rkey, h.addr);
            rem->direct = ctx->direct ? rem->ptr : NULL;
        }
        at += h.rkey_len;
    }
    return RMX_OK;
}

int rmx_exchange_regions(rmx_ctx_t *ctx, int local_rc, rmx_region_t *regions, int n)
{
    if (n > RMX_REGIONS_MAX)
        local_rc = local_rc != RMX_OK ? local_rc : RMX_ERR_ARG;
    char *blob;
    size_t blob_len;
    local_rc = pack_regions(ctx, local_rc, regions, n, &blob, &blob_len);
    void *all;
    size_t stride;
    int rc = rmx_exchange(ctx, blob, blob_len, &all, &stride);
    free(blob);
    if (rc != RMX_OK)
        return local_rc != RMX_OK ? local_rc : rc;
    /* First agreement: every rank's part exists (statuses travel with the blobs). */
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        size_t got;
        const char *p = rmx_exchange_blob(all, stride, r, &got);
        int64_t st = RMX_ERR_COLLECTIVE;
        if (got >= sizeof(st))
            memcpy(&st, p, sizeof(st));
        if (st != RMX_OK)
            rc = RMX_ERR_COLLECTIVE;
    }
    if (local_rc != RMX_OK || rc != RMX_OK) {
        free(all);
        return local_rc != RMX_OK ? local_rc : rc;
    }
    /* Then each rank unpacks every rkey, which can fail here alone (no memory, no file
     * descriptor for a peer's shared-memory segment): the second agreement, which is also the
     * barrier after which peers may target the regions. */
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        size_t got;
        const char *p = rmx_exchange_blob(all, stride, r, &got);
        rc = unpack_regions(ctx, r, p, got, regions, n);
    }
    free(all);
    rc = rmx_agree(ctx, rc);
    if (rc != RMX_OK)
        for (int i = 0; i < n; i++)
            rmx_remote_release(ctx, regions[i].remote);
    return rc;
}

void rmx_remote_release(rmx_ctx_t *ctx, rmx_remote_t *remote)
{
    for (int r = 0; r < ctx->size; r++) {
        if (remote[r].rkey != NULL)
            ucp_rkey_destroy(remote[r].rkey);
        remote[r].rkey = NULL;
    }
}
