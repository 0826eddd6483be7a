/*
 * exchange.c — the variable-length allgather rmx needs at init and window creation (worker
 * addresses and packed rkeys differ in length per rank and transport).
 *
 * At init it is built on the bootstrap's fixed-length allgather: lengths first, then the blobs
 * padded to the longest.  Once the context is up, window creation exchanges over rmx's own
 * endpoints instead (rmx_exchange_regions_live): every bootstrap round costs a PMIx fence under
 * mpirun (0.3-1 ms each), while one round of UCP puts and atomics costs microseconds.
 *
 * The exchange area (one per rank, UCP-allocated so that shared memory reaches it one-sidedly,
 * its rkey published at init with the control block):
 *     [arrivals[2]: one counter per bank, on their own cache line]
 *     [agreed[size]: each rank's agreement word (agree_round), padded to a line]
 *     [bank 0: size slots of XCHG_SLOT bytes][bank 1: the same]
 *     [XCHG_LOCKS lock regions of windows: (1 + size) words each, lock.c]
 * A slot holds its blob's length (a uint64) and the blob.  Exchange number e (counted alike on
 * every rank, as window creation is collective) uses bank e % 2: each rank puts its slot into
 * slot[rank] of that bank at every other rank, makes the puts complete there, and then adds 1 to
 * that rank's arrival counter of the bank; it waits until its own counter has grown by size - 1.
 * Then every rank unpacks every rkey and the ranks agree (agree_round), all to all.
 *
 * Why two banks suffice: a rank writes bank b of exchange e at peer p only once it has finished
 * exchange e - 1, which needed p's arrival for e - 1; p sends that only when it begins e - 1,
 * after it finished exchange e - 2 (bank b too), reading its bank included.  So nobody writes
 * bank b for e while p may still read it for e - 2, and p's counter of bank b already holds
 * every arrival of e - 2 when the first of e lands (the counts per bank never mix exchanges).
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* What the first round carries: who sent it, and its blob's length. */
typedef struct {
    uint64_t rank;
    uint64_t len;
} xchg_len_t;

#define XCHG_BLOB_MAX ((uint64_t)1 << 30) /* far above any address or packed rkeys */

/* The bootstrap's allgather failed, or did not do what an allgather does (why, then what it
 * found: "" or a parenthesis). */
static int bootstrap_failed(rmx_ctx_t *ctx, const char *why, const char *found)
{
    rmx_logf(&ctx->log, RMX_LOG_ERROR, "the %s bootstrap's allgather %s%s%s", ctx->boot.name,
             why, found,
             ctx->cfg.bootstrap == RMX_BOOT_OOB && strcmp(why, "failed") != 0
                 ? ": rmx_config_t.oob.allgather must put rank i's bytes at recvbuf + i * len, "
                   "ranks as oob.rank numbers them"
                 : "");
    return RMX_ERR_BOOTSTRAP;
}

int rmx_exchange(rmx_ctx_t *ctx, const void *blob, size_t len, void **all, size_t *stride)
{
    rmx_boot_t *b = &ctx->boot;
    xchg_len_t mine = {(uint64_t)ctx->rank, len};
    xchg_len_t *lens = malloc((size_t)ctx->size * sizeof(*lens));
    if (lens == NULL)
        return RMX_ERR_NOMEM;
    if (b->allgather(b, &mine, lens, sizeof(mine)) != RMX_OK) {
        free(lens);
        return bootstrap_failed(ctx, "failed", " (returned an error)");
    }
    /* Every rank sees the same recvbuf from a callback that gathers at all, so every rank finds
     * the same fault here and all fail together: none goes on to wait for the others. */
    uint64_t longest = len;
    int rc = RMX_OK;
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        const char *why = lens[r].rank != (uint64_t)r ? "put another rank's bytes in a slot"
                        : lens[r].len > XCHG_BLOB_MAX || (r == ctx->rank && lens[r].len != len)
                            ? "gave a length no rank sent"
                            : NULL;
        if (why != NULL) {
            char found[96];
            snprintf(found, sizeof(found), " (slot %d: rank %llu, length %llu)", r,
                     (unsigned long long)lens[r].rank, (unsigned long long)lens[r].len);
            rc = bootstrap_failed(ctx, why, found);
        }
        longest = lens[r].len > longest ? lens[r].len : longest;
    }
    free(lens);
    if (rc != RMX_OK)
        return rc;

    size_t slot = sizeof(uint64_t) + (size_t)longest;
    char *send = calloc(1, slot);
    char *recv = malloc(slot * (size_t)ctx->size);
    if (send == NULL || recv == NULL) {
        free(send);
        free(recv);
        return RMX_ERR_NOMEM;
    }
    memcpy(send, &mine.len, sizeof(mine.len));
    if (len > 0)
        memcpy(send + sizeof(mine.len), blob, len);
    if (b->allgather(b, send, recv, slot) != RMX_OK)
        rc = bootstrap_failed(ctx, "failed", " (returned an error)");
    else if (memcmp(recv + (size_t)ctx->rank * slot, send, slot) != 0)
        rc = bootstrap_failed(ctx, "did not put this rank's bytes in its slot", "");
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

#define RKEY_IN_AREA UINT64_MAX /* in a region header: the region is in the sender's area */

/* A region inside this rank's exchange area (a window's lock region), not the area itself. */
static int in_area(const rmx_ctx_t *ctx, const rmx_region_t *region)
{
    return ctx->xchg_memh != NULL && region->memh == ctx->xchg_memh &&
           region->remote != ctx->xchg_remote;
}

/* This rank's blob: its status, then each region (only the status when it is not RMX_OK). */
static int pack_regions(rmx_ctx_t *ctx, int local_rc, const rmx_region_t *regions, int n,
                        char **blob, size_t *blob_len)
{
    void *rkey[RMX_REGIONS_MAX] = {NULL};
    size_t rkey_len[RMX_REGIONS_MAX] = {0}, total = sizeof(int64_t);
    for (int i = 0; i < n && local_rc == RMX_OK; i++) {
        if (in_area(ctx, &regions[i]))
            ; /* its rkey went out with the area's at init */
        else if (regions[i].memh != NULL)
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
                                 .len = regions[i].len,
                                 .rkey_len = in_area(ctx, &regions[i]) ? RKEY_IN_AREA
                                                                        : rkey_len[i]};
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
        rmx_remote_t *rem = &regions[i].remote[r];
        rem->addr = h.addr;
        rem->size = (size_t)h.len;
        rem->rkey = NULL;
        rem->ptr = NULL;
        rem->direct = NULL;
        if (h.rkey_len == RKEY_IN_AREA) { /* shares r's area rkey (rmx_remote_release) */
            if (ctx->xchg_remote == NULL || ctx->xchg_remote[r].rkey == NULL)
                return RMX_ERR_BOOTSTRAP;
            rem->rkey = ctx->xchg_remote[r].rkey;
            rmx_remote_map(ctx, r, rem, ctx->direct); /* as for any region (below) */
            continue;
        }
        if (got - at < h.rkey_len)
            return RMX_ERR_BOOTSTRAP;
        if (h.rkey_len > 0) {
            int rc = rmx_ucx_rkey_unpack(rmx_ep(ctx, r), p + at, &rem->rkey);
            if (rc != RMX_OK)
                return rc;
            if (regions[i].packed != NULL) { /* kept for streams (rmx_win_bind) */
                uint64_t *keep = malloc(sizeof(uint64_t) + h.rkey_len);
                if (keep == NULL)
                    return RMX_ERR_NOMEM;
                keep[0] = h.rkey_len;
                memcpy(keep + 1, p + at, h.rkey_len);
                regions[i].packed[r] = keep;
            }
            rmx_remote_map(ctx, r, rem, ctx->direct);
        }
        at += h.rkey_len;
    }
    return RMX_OK;
}

/* Statuses first (the first agreement: every rank's part exists; they travel with the blobs),
 * then every rank's regions unpacked here, which can fail here alone (no memory, no file
 * descriptor for a peer's shared-memory segment): that needs the second agreement, the caller's.
 * Blobs are at all + r * stride; one longer than limit is garbage. */
static int take_regions(rmx_ctx_t *ctx, int local_rc, const void *all, size_t stride,
                        size_t limit, rmx_region_t *regions, int n, int *unpacked)
{
    int rc = RMX_OK;
    *unpacked = 0;
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        size_t got;
        const char *p = rmx_exchange_blob(all, stride, r, &got);
        int64_t st = RMX_ERR_COLLECTIVE;
        if (got >= sizeof(st) && got <= limit)
            memcpy(&st, p, sizeof(st));
        if (st != RMX_OK)
            rc = RMX_ERR_COLLECTIVE;
    }
    if (local_rc != RMX_OK || rc != RMX_OK)
        return local_rc != RMX_OK ? local_rc : rc;
    *unpacked = 1;
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        size_t got;
        const char *p = rmx_exchange_blob(all, stride, r, &got);
        rc = unpack_regions(ctx, r, p, got, regions, n);
    }
    return rc;
}

static void release_regions(rmx_ctx_t *ctx, rmx_region_t *regions, int n)
{
    for (int i = 0; i < n; i++)
        rmx_remote_release(ctx, regions[i].remote);
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
    int unpacked;
    rc = take_regions(ctx, local_rc, all, stride, stride - sizeof(uint64_t), regions, n,
                      &unpacked);
    free(all);
    if (!unpacked)
        return rc; /* every rank saw the same statuses: all return here, no agreement needed */
    /* The second agreement, which is also the barrier after which peers may target the
     * regions. */
    rc = rmx_agree(ctx, rc);
    if (rc != RMX_OK)
        release_regions(ctx, regions, n);
    return rc;
}

/* ---------------------------------------------------------------- over rmx's own endpoints */
/* Bytes per rank and bank: a blob's length, then the blob (a window's, with two packed rkeys of
 * shared memory, is about 110).  RMX_WIN_XCHG_SLOT overrides it: a tuning knob, and how the
 * tests send blobs through the bootstrap. */
#define XCHG_SLOT      512
#define XCHG_SLOT_MIN  16
#define XCHG_SLOT_MAX  65536
#define XCHG_COUNTERS  64           /* the two arrival counters, on a line of their own */
/* What a rank adds to its agreement word at every other rank: 1, plus this when its part of the
 * exchange failed (it unpacked not every region). */
#define XCHG_AGREE_FAIL (UINT64_C(1) << 40)
#define XCHG_MAX_RANKS 4096         /* beyond, the area would take over 6 MiB a rank: bootstrap */
#define XCHG_TOO_BIG   UINT64_MAX   /* a slot's length: the blob did not fit, see the bootstrap */
/* Lock regions of windows in the area (one bit each in ctx->xchg_locks_used).  A window's own
 * lock region cost a ucp_mem_map and its unmap (13 us of a 2-rank window's life here), a packed
 * rkey, and one rkey unpack and destroy per peer (a shared-memory attach each); a program with
 * more windows alive gets such regions for the rest. */
#define XCHG_LOCKS     64

/* Rank r's agreement word, after the counters: r adds to it at every rank (agree_round). */
static size_t agree_offset(int r)
{
    return XCHG_COUNTERS + (size_t)r * sizeof(uint64_t);
}

static size_t slot_offset(const rmx_ctx_t *ctx, int bank, int r)
{
    size_t head = (agree_offset(ctx->size) + 63) & ~(size_t)63;
    return head + ((size_t)bank * (size_t)ctx->size + (size_t)r) * ctx->xchg_slot;
}

/* Lock regions follow the banks, each on lines of its own. */
static size_t lock_stride(const rmx_ctx_t *ctx)
{
    return ((1 + (size_t)ctx->size) * sizeof(uint64_t) + 63) & ~(size_t)63;
}

static size_t lock_offset(const rmx_ctx_t *ctx, int i)
{
    return slot_offset(ctx, 2, 0) + (size_t)i * lock_stride(ctx);
}

int rmx_xchg_lock_take(rmx_ctx_t *ctx, size_t len, uint64_t **region)
{
    if (ctx->xchg == NULL || len > lock_stride(ctx))
        return -1;
    for (unsigned k = 0; k < XCHG_LOCKS; k++) {
        /* Round robin: a region comes back into use as late as possible. */
        unsigned i = (ctx->xchg_lock_next + k) % XCHG_LOCKS;
        if (ctx->xchg_locks_used & (UINT64_C(1) << i))
            continue;
        ctx->xchg_locks_used |= UINT64_C(1) << i;
        ctx->xchg_lock_next = i + 1;
        *region = (uint64_t *)((char *)ctx->xchg + lock_offset(ctx, (int)i));
        memset(*region, 0, len); /* before the exchange that lets peers reach it */
        return (int)i;
    }
    return -1;
}

void rmx_xchg_lock_give(rmx_ctx_t *ctx, int slot, int peers_may_still_access)
{
    if (slot >= 0 && !peers_may_still_access)
        ctx->xchg_locks_used &= ~(UINT64_C(1) << slot);
}

static size_t slot_bytes(void)
{
    const char *s = getenv("RMX_WIN_XCHG_SLOT");
    char *end;
    unsigned long v = s != NULL ? strtoul(s, &end, 10) : 0;
    if (s == NULL || *s == '\0' || *end != '\0' || v < XCHG_SLOT_MIN || v > XCHG_SLOT_MAX)
        return XCHG_SLOT;
    return (size_t)v & ~(size_t)7; /* the next slot's length word stays aligned */
}

int rmx_xchg_area_map(rmx_ctx_t *ctx, rmx_region_t *region)
{
    *region = (rmx_region_t){0};
    if (ctx->size > XCHG_MAX_RANKS)
        return RMX_OK;
    ctx->xchg_slot = slot_bytes();
    size_t len = lock_offset(ctx, XCHG_LOCKS);
    ctx->xchg_remote = calloc((size_t)ctx->size, sizeof(*ctx->xchg_remote));
    ctx->xchg_agreed = calloc((size_t)ctx->size, sizeof(*ctx->xchg_agreed));
    if (ctx->xchg_remote == NULL || ctx->xchg_agreed == NULL)
        return RMX_ERR_NOMEM;
    void *addr;
    int rc = rmx_ucx_mem_map(&ctx->ucx, NULL, len, &ctx->xchg_memh, &addr);
    if (rc != RMX_OK)
        return rc;
    memset(addr, 0, len); /* before init's agreement, after which peers may write here */
    ctx->xchg = addr;
    ctx->xchg_len = len;
    *region = (rmx_region_t){ctx->xchg_memh, addr, len, ctx->xchg_remote, NULL};
    return RMX_OK;
}

void rmx_xchg_area_check(rmx_ctx_t *ctx)
{
    /* A rank whose area differs from this one's sees some other length too (one length per
     * layout): if they are not all alike, every rank finds a mismatch. */
    for (int r = 0; ctx->xchg != NULL && r < ctx->size; r++)
        if (ctx->xchg_remote[r].size != ctx->xchg_len)
            ctx->xchg = NULL; /* still mapped (ctx->xchg_memh) until finalize */
}

static volatile uint64_t *arrivals(rmx_ctx_t *ctx, int bank)
{
    return (volatile uint64_t *)ctx->xchg + bank;
}

/* Put `mine` (this rank's slot, `len` bytes) into slot[rank] of `bank` at every other rank. */
static int put_slot(rmx_ctx_t *ctx, int bank, const char *mine, size_t len)
{
    rmx_ucx_dest_t few[8];
    rmx_ucx_dest_t *ucp = ctx->size <= 8 ? few : malloc((size_t)ctx->size * sizeof(*ucp));
    if (ucp == NULL)
        return RMX_ERR_NOMEM;
    int n = 0, rc = RMX_OK;
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        if (r == ctx->rank)
            continue;
        const rmx_remote_t *area = &ctx->xchg_remote[r];
        rc = rmx_ucx_put(&ctx->ucx, rmx_ep(ctx, r), rmx_am(ctx, r), mine, len,
                         area->addr + slot_offset(ctx, bank, ctx->rank), area->rkey);
        rc = rmx_transfer_done(ctx, r, rc);
        /* Over rmx's active messages (tcp) the arrival that follows is applied after the put
         * (one endpoint's messages are applied in order).  Over UCP it may travel on another
         * transport than the put (sysv puts, posix atomics), which no fence orders: the puts
         * complete at their targets first (tracker.c's header). */
        if (rc == RMX_OK && rmx_am(ctx, r) == NULL)
            ucp[n++] = rmx_dest(ctx, r);
    }
    /* No deadline, as in every wait on another rank (sync.c's notify_complete): a timed-out
     * flush references no memory, and is issued again. */
    while (rc == RMX_OK && n > 0 && (rc = rmx_ucx_flush_eps(&ctx->ucx, ucp, n)) == RMX_ERR_TIMEOUT)
        rc = RMX_OK;
    if (ucp != few)
        free(ucp);
    return rc;
}

/* Add 1 to every other rank's arrival counter of `bank`.  Where the area is mapped here the add
 * is a fetching one done in place (applied when it returns); elsewhere a non-fetching one,
 * applied before that rank can see the exchange complete, which needs this rank's arrival: by
 * the time the agreement that ends the exchange completes here, it has been applied everywhere
 * (so no flush of it is needed). */
static int notify_arrival(rmx_ctx_t *ctx, int bank)
{
    int rc = RMX_OK;
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        if (r == ctx->rank)
            continue;
        const rmx_remote_t *area = &ctx->xchg_remote[r];
        uint64_t one = 1, old;
        rc = rmx_remote_amo(ctx, area, r, UCP_ATOMIC_OP_ADD, &one,
                            area->ptr != NULL ? &old : NULL, sizeof(one),
                            (size_t)bank * sizeof(uint64_t));
    }
    return rc;
}

/* One exchange through the area: this rank's blob out, every rank's in.  *bank_out: the bank
 * holding them; *too_big: some rank's blob did not fit its slot (alike on every rank). */
static int xchg_round(rmx_ctx_t *ctx, const char *blob, size_t len, int *bank_out, int *too_big)
{
    int bank = (int)((ctx->xchg_rounds[0] + ctx->xchg_rounds[1]) & 1);
    uint64_t expect = ++ctx->xchg_rounds[bank] * (uint64_t)(ctx->size - 1);
    char *mine = (char *)ctx->xchg + slot_offset(ctx, bank, ctx->rank);
    uint64_t head = len <= ctx->xchg_slot - sizeof(uint64_t) ? len : XCHG_TOO_BIG;
    memcpy(mine, &head, sizeof(head));
    if (head != XCHG_TOO_BIG && len > 0)
        memcpy(mine + sizeof(head), blob, len);
    size_t sent = sizeof(head) + (head != XCHG_TOO_BIG ? len : 0);
    int rc = put_slot(ctx, bank, mine, sent);
    if (rc == RMX_OK)
        rc = notify_arrival(ctx, bank);
    /* Every rank, or RMX_ERR_PEER / RMX_ERR_STOPPED when one failed or began finalize instead. */
    if (rc == RMX_OK)
        rc = rmx_wait_word_geq_from(ctx, arrivals(ctx, bank), expect, -1);
    *bank_out = bank;
    *too_big = 0;
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        uint64_t h;
        memcpy(&h, (char *)ctx->xchg + slot_offset(ctx, bank, r), sizeof(h));
        *too_big |= h == XCHG_TOO_BIG;
    }
    return rc;
}

/* The second agreement, all to all: this rank adds 1 (plus XCHG_AGREE_FAIL when local_rc failed)
 * to its word at every other rank, then waits for every other rank's word here to have moved,
 * and *any_failed says whether one moved by more than 1.  One atomic per peer and one wait,
 * where the dissemination barrier (rmx_barrier_agree) took log2(size) rounds each with a flush,
 * a round trip through the peer's progress agent over tcp.
 * Each wait is on that rank alone, and a rank's stop or failure ends it only while its word has
 * not moved: a rank that agreed, returned and began rmx_finalize (or rmx_fail) before a slower
 * one's word reached us is no cause for an error.  A word moves once per exchange: a rank
 * cannot add for exchange e + 1 before it has this rank's arrival of e + 1 (the round). */
static int agree_round(rmx_ctx_t *ctx, int local_rc, int *any_failed)
{
    uint64_t add = 1 + (local_rc != RMX_OK ? XCHG_AGREE_FAIL : 0);
    int rc = RMX_OK;
    *any_failed = local_rc != RMX_OK;
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        if (r == ctx->rank)
            continue;
        const rmx_remote_t *area = &ctx->xchg_remote[r];
        uint64_t old;
        rc = rmx_remote_amo(ctx, area, r, UCP_ATOMIC_OP_ADD, &add,
                            area->ptr != NULL ? &old : NULL, sizeof(add),
                            agree_offset(ctx->rank));
    }
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        if (r == ctx->rank)
            continue;
        volatile uint64_t *w = (volatile uint64_t *)((char *)ctx->xchg + agree_offset(r));
        rc = rmx_wait_word_geq_from(ctx, w, ctx->xchg_agreed[r] + 1, r);
        if (rc != RMX_OK)
            break;
        uint64_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
        *any_failed |= v - ctx->xchg_agreed[r] != 1;
        ctx->xchg_agreed[r] = v;
    }
    return rc;
}

/* The old way, for a context without an area: the bootstrap, whose collectives wait for ever
 * for a rank that is gone (a PMIx fence does, also under mpirun's recovery and for a rank that
 * left through rmx_fail), so a barrier over UCP first finds a failed or stopped rank, alike on
 * every other rank: it cannot complete unless every rank has entered it. */
static int exchange_via_bootstrap(rmx_ctx_t *ctx, int local_rc, rmx_region_t *regions, int n)
{
    int rc = rmx_barrier_presence(ctx);
    if (rc != RMX_OK)
        return rc;
    rc = rmx_exchange_regions(ctx, local_rc, regions, n);
    return rc == RMX_ERR_BOOTSTRAP ? RMX_ERR_PEER : rc; /* the exchange failed: a rank is gone */
}

int rmx_exchange_regions_live(rmx_ctx_t *ctx, int local_rc, rmx_region_t *regions, int n)
{
    if (ctx->xchg == NULL)
        return exchange_via_bootstrap(ctx, local_rc, regions, n);
    if (n > RMX_REGIONS_MAX)
        local_rc = local_rc != RMX_OK ? local_rc : RMX_ERR_ARG;
    char *blob;
    size_t blob_len;
    local_rc = pack_regions(ctx, local_rc, regions, n, &blob, &blob_len);
    int bank, too_big;
    int rc = xchg_round(ctx, blob, blob_len, &bank, &too_big);
    void *all = NULL;
    const void *got = (const char *)ctx->xchg + slot_offset(ctx, bank, 0);
    size_t stride = ctx->xchg_slot;
    /* Every rank took part in the round, so the bootstrap's exchange cannot wait for a rank
     * that never comes (unless one dies just now, as with rmx_barrier_presence before it). */
    if (rc == RMX_OK && too_big) {
        rc = rmx_exchange(ctx, blob, blob_len, &all, &stride);
        rc = rc == RMX_ERR_BOOTSTRAP ? RMX_ERR_PEER : rc;
        got = all;
    }
    free(blob);
    if (rc != RMX_OK)
        return local_rc != RMX_OK ? local_rc : rc;
    int unpacked;
    rc = take_regions(ctx, local_rc, got, stride, stride - sizeof(uint64_t), regions, n,
                      &unpacked);
    free(all);
    /* The second agreement: every rank could unpack every rkey.  When it completes, every rank
     * has every region, and peers may target them (they were ready before they were sent).
     * Also when a status failed, although every rank saw the same statuses: a rank that left
     * at once could begin rmx_finalize while another still waits for an arrival in the round,
     * which would then blame the stop (RMX_ERR_STOPPED); nobody leaves the agreement before
     * every other rank has finished the round. */
    int any_failed;
    int rc2 = agree_round(ctx, rc, &any_failed);
    if (!unpacked)
        return rc; /* a status failed: the same error everywhere, nothing unpacked */
    if (rc2 != RMX_OK)
        rc = rc2;
    else if (any_failed && rc == RMX_OK)
        rc = RMX_ERR_COLLECTIVE;
    if (rc != RMX_OK)
        release_regions(ctx, regions, n);
    return rc;
}

void rmx_remote_release(rmx_ctx_t *ctx, rmx_remote_t *remote)
{
    for (int r = 0; r < ctx->size; r++) {
        /* a region in r's exchange area holds the area's rkey, which is the area's to destroy */
        int shared = remote != ctx->xchg_remote && ctx->xchg_remote != NULL &&
                     remote[r].rkey == ctx->xchg_remote[r].rkey;
        if (remote[r].rkey != NULL && !shared)
            ucp_rkey_destroy(remote[r].rkey);
        remote[r].rkey = NULL;
    }
}
