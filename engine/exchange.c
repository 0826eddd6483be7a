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

/* The blob each rank publishes for a region: address, length, then the packed rkey. */
typedef struct {
    uint64_t addr;
    uint64_t len;
} region_header_t;

int rmx_exchange_region(rmx_ctx_t *ctx, ucp_mem_h memh, void *addr, size_t len,
                        rmx_remote_t *remote)
{
    void *rkey_buf = NULL;
    size_t rkey_len = 0;
    int local_rc = RMX_OK;
    if (memh != NULL)
        local_rc = rmx_ucx_rkey_pack(&ctx->ucx, memh, &rkey_buf, &rkey_len);
    size_t blob_len = sizeof(region_header_t) + rkey_len;
    char *blob = local_rc == RMX_OK ? malloc(blob_len) : NULL;
    if (blob == NULL) {
        local_rc = local_rc != RMX_OK ? local_rc : RMX_ERR_NOMEM;
        blob_len = 0; /* still take part: an empty blob tells the peers to fail too */
    } else {
        region_header_t hdr = {.addr = (uint64_t)(uintptr_t)addr, .len = len};
        memcpy(blob, &hdr, sizeof(hdr));
        if (rkey_len > 0)
            memcpy(blob + sizeof(hdr), rkey_buf, rkey_len);
    }
    if (rkey_buf != NULL)
        rmx_ucx_rkey_buffer_release(rkey_buf);

    void *all;
    size_t stride;
    int rc = rmx_exchange(ctx, blob, blob_len, &all, &stride);
    free(blob);
    if (rc != RMX_OK || local_rc != RMX_OK) {
        if (rc == RMX_OK)
            free(all);
        return local_rc != RMX_OK ? local_rc : rc;
    }
    region_header_t hdr;
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        size_t got;
        const char *p = rmx_exchange_blob(all, stride, r, &got);
        if (got < sizeof(region_header_t)) {
            rc = RMX_ERR_BOOTSTRAP;
            break;
        }
        memcpy(&hdr, p, sizeof(hdr));
        remote[r].addr = hdr.addr;
        remote[r].size = (size_t)hdr.len;
        remote[r].rkey = NULL;
        remote[r].ptr = NULL;
        if (got > sizeof(hdr))
            rc = rmx_ucx_rkey_unpack(rmx_ep(ctx, r), p + sizeof(hdr), &remote[r].rkey);
        if (rc == RMX_OK && remote[r].rkey != NULL)
            remote[r].ptr = rmx_ucx_rkey_ptr(remote[r].rkey, hdr.addr);
    }
    free(all);
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
