/*
 * window.c — windows: memory every rank exposes, mapped with ucp_mem_map, its packed rkey exchanged
 * so every rank holds an unpacked rkey and the size of every other rank's part.
 *
 * rmx_win_allocate lets UCP allocate (UCP_MEM_MAP_ALLOCATE) because only such memory is reached
 * truly one-sidedly over shared memory (DESIGN.md), then binds it to the caller's NUMA node.
 * Each window also carries an 8-byte lock word per rank (lock.c), with a slot per origin after it:
 * a region of the context's exchange area (exchange.c) while one is free, else a UCP-allocated
 * map of its own.
 *
 * Creation and free are collective, and agreed: a rank whose arguments or resources fail still
 * takes part, announcing its failure, so every rank fails together (the others with
 * RMX_ERR_COLLECTIVE) instead of waiting for a partner that gave up, and nothing is left
 * behind.  Only a handle that names no context cannot take part.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "internal.h"
#include "../transports/resources.h"
#include "../transports/topo.h"

/* File descriptors a window may need in the worst case (UCX's shared-memory segment and the
 * mappings of peers' segments, opened one at a time) plus the headroom UCX needs to go on. */
#define RMX_WINDOW_FDS 32
/* Windows from this size on are checked against the memory left before UCX is asked. */
#define RMX_WINDOW_CHECKED_LEN ((size_t)1 << 20)

/* Unmap (frees it too when UCP allocated it) now, or, when peers may still access it, once the
 * context has closed its endpoints (ctx->orphans; out of memory for the list: now after all). */
static void unmap_window_part(rmx_ctx_t *ctx, ucp_mem_h memh, int peers_may_still_access)
{
    if (memh == NULL)
        return;
    if (peers_may_still_access) {
        ucp_mem_h *grown = realloc(ctx->orphans, (size_t)(ctx->n_orphans + 1) * sizeof(*grown));
        if (grown != NULL) {
            ctx->orphans = grown;
            ctx->orphans[ctx->n_orphans++] = memh;
            return;
        }
    }
    rmx_ucx_mem_unmap(&ctx->ucx, memh);
}

static void free_window_resources(rmx_win_t *win, int peers_may_still_access)
{
    rmx_ctx_t *ctx = win->ctx;
    /* Requests that arrived before every peer was done with the window (a timed-out one that
     * is still served in software, by UCX or by rmx's handlers) are served now, while the
     * memory is there. */
    if (win->memh != NULL)
        rmx_ucx_drain(&ctx->ucx);
    if (win->remote != NULL)
        rmx_remote_release(ctx, win->remote);
    if (win->lock_remote != NULL)
        rmx_remote_release(ctx, win->lock_remote);
    rmx_rkeys_packed_free(ctx, win->rkeys_packed);
    win->rkeys_packed = NULL;
    free(win->remote);
    free(win->lock_remote);
    free(win->lock_held);
    win->remote = win->lock_remote = NULL;
    win->lock_held = NULL;
    unmap_window_part(ctx, win->memh, peers_may_still_access);
    unmap_window_part(ctx, win->lock_memh, peers_may_still_access);
    rmx_xchg_lock_give(ctx, win->lock_area_slot, peers_may_still_access);
    win->memh = win->lock_memh = NULL;
    win->lock_area_slot = -1;
    /* Pages rmx took for rmx_win_allocate (RMX_WIN_MEMORY_USER): kept, like the mapping, while
     * peers may still access them. */
    if (win->pages != NULL && !peers_may_still_access)
        munmap(win->pages, win->pages_len);
    win->pages = NULL;
}

/* rmx_win_allocate's memory under RMX_WIN_MEMORY_USER: zeroed pages of our own, registered. */
static void *take_pages(rmx_win_t *win, size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    win->pages = p;
    win->pages_len = len;
    return p;
}

/* The lock word and, after it, one slot per origin rank (lock.c). */
static size_t lock_region_len(const rmx_ctx_t *ctx)
{
    return sizeof(uint64_t) * (1 + (size_t)ctx->size);
}

/* This rank's part of a new window: memory (rmx's or the caller's), mapped, and its lock word. */
static int window_part(rmx_win_t *win, void *user_base, size_t len, int allocate)
{
    rmx_ctx_t *ctx = win->ctx;
    int rc = RMX_OK;
    /* Refused here, not by UCX: asked for more than there is, it fills /dev/shm or memory
     * until the OOM killer strikes, and it crashes past the file-descriptor limit.  A small
     * window cannot fill anything (UCX's allocation just fails), and reading /proc/meminfo and
     * /proc/self/statm took a quarter of a window's local set-up time. */
    if (allocate && len >= RMX_WINDOW_CHECKED_LEN &&
        (rc = rmx_res_check_memory(len, "rmx_win_allocate", &ctx->log)) != RMX_OK)
        return rc;
    if ((rc = rmx_res_check_fds(RMX_WINDOW_FDS, "window creation", &ctx->log)) != RMX_OK)
        return rc;
    if (allocate && len > 0 && ctx->cfg.window_memory == RMX_WIN_MEMORY_USER) {
        allocate = 0;
        if ((user_base = take_pages(win, len)) == NULL)
            return RMX_ERR_NOMEM;
    }
    /* Registered memory is not reached one-sidedly by UCX's shared-memory atomics: before any
     * peer may target it, the progress agent must serve this rank (RMX_PROGRESS_AUTO). */
    if (!allocate && len > 0 && (rc = rmx_progress_needed(ctx)) != RMX_OK)
        return rc;
    if (len > 0) {
        rc = rmx_ucx_mem_map(&ctx->ucx, allocate ? NULL : user_base, len, &win->memh, &win->base);
        if (rc != RMX_OK)
            return rc;
        /* ucp_mem_query reports the registration's start, which UCP may have rounded down:
         * the window is what the caller passed. */
        if (!allocate)
            win->base = user_base; /* also rmx's own pages (RMX_WIN_MEMORY_USER), zeroed by mmap */
        else {
            rmx_topo_place_local(win->base, len);
            if (!ctx->ucx.alloc_zeroed) /* else a fresh mapping: zero already (ucx.c) */
                memset(win->base, 0, len);
        }
    } else {
        win->base = allocate ? NULL : user_base;
    }
    /* The lock region: one of the exchange area's when one is free, else a mapping of its own. */
    win->lock_area_slot = rmx_xchg_lock_take(ctx, lock_region_len(ctx), &win->lock_word);
    if (win->lock_area_slot >= 0)
        return RMX_OK;
    void *lock;
    rc = rmx_ucx_mem_map(&ctx->ucx, NULL, lock_region_len(ctx), &win->lock_memh, &lock);
    if (rc == RMX_OK) {
        win->lock_word = lock;
        memset(lock, 0, lock_region_len(ctx));
    }
    return rc;
}

/* Debug level: a window exists (rmx.h, rmx_log_level_t). */
static void log_window_created(const rmx_win_t *win)
{
    rmx_ctx_t *ctx = win->ctx;
    int mapped = 0;
    for (int r = 0; r < ctx->size; r++)
        if (r != ctx->rank && win->remote[r].direct != NULL)
            mapped++;
    const char *memory = !win->allocated ? "the caller's memory, registered (rmx_win_create)"
                         : win->pages != NULL ? "rmx's pages, registered (RMX_WIN_MEMORY=user)"
                                              : "UCP-allocated";
    rmx_log(ctx, RMX_LOG_DEBUG, "window %p created: %zu bytes here, %s; direct to %d of %d "
            "peers%s, lock region %s", (void *)win, win->size, memory, mapped, ctx->size - 1,
            mapped > 0 && ctx->direct_atomics ? " (CPU atomics)" : "",
            win->lock_area_slot >= 0 ? "in the exchange area" : "mapped on its own");
}

/* Collective.  local_rc: the caller's argument checks; a rank that failed them still takes part,
 * so that every rank fails together (rmx_exchange_regions_live) rather than waiting for it. */
static int window_open(rmx_ctx_t *ctx, void *user_base, size_t len, int allocate, int local_rc,
                       rmx_win_t **out)
{
    rmx_win_t *win = calloc(1, sizeof(*win));
    if (win == NULL) /* still take part, in the same exchange as the others */
        return rmx_exchange_regions_live(ctx, RMX_ERR_NOMEM, NULL, 0);
    win->ctx = ctx;
    win->lock_area_slot = -1;
    win->size = len;
    win->allocated = allocate;
    win->remote = calloc((size_t)ctx->size, sizeof(*win->remote));
    win->lock_remote = calloc((size_t)ctx->size, sizeof(*win->lock_remote));
    win->lock_held = calloc((size_t)ctx->size, sizeof(*win->lock_held));
    win->rkeys_packed = calloc((size_t)ctx->size, sizeof(*win->rkeys_packed));
    int rc = local_rc;
    if (rc == RMX_OK &&
        !(win->remote && win->lock_remote && win->lock_held && win->rkeys_packed))
        rc = RMX_ERR_NOMEM;
    if (rc == RMX_OK)
        rc = window_part(win, user_base, len, allocate);
    /* A lock region in the exchange area is published as such (by the area's memh). */
    rmx_region_t regions[2] = {
        {win->memh, win->base, win->size, win->remote, win->rkeys_packed},
        {win->lock_area_slot >= 0 ? ctx->xchg_memh : win->lock_memh, win->lock_word,
         lock_region_len(ctx), win->lock_remote, NULL},
    };
    /* One exchange (over rmx's own endpoints) and its agreement; on RMX_OK every rank has the
     * window, and nobody targeted it before (the agreement is the barrier).  On failure nobody
     * ever will: free it now.  A rank that is gone: RMX_ERR_PEER (rmx.h, Peer failure). */
    rc = rmx_exchange_regions_live(ctx, rc, regions, 2);
    if (rc != RMX_OK) {
        free_window_resources(win, 0);
        free(win);
        return rc;
    }
    win->magic = RMX_WIN_MAGIC;
    win->next = ctx->wins;
    ctx->wins = win;
    *out = win;
    if (rmx_log_on(&ctx->log, RMX_LOG_DEBUG))
        log_window_created(win);
    return RMX_OK;
}

/* Collective: the argument checks below do not return at once (see window_open). */
int rmx_win_allocate(rmx_ctx_t *ctx, size_t len, void **base, rmx_win_t **win)
{
    int rc = rmx_collective_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_win_allocate(ctx, len, base, win));
    if (win != NULL)
        *win = NULL;
    if (base != NULL)
        *base = NULL;
    rmx_win_t *w = NULL;
    rc = window_open(ctx, NULL, len, 1, base == NULL || win == NULL ? RMX_ERR_ARG : RMX_OK, &w);
    if (rc == RMX_OK) {
        *win = w;
        *base = w->base;
    }
    return rc;
}

int rmx_win_create(rmx_ctx_t *ctx, void *base, size_t len, rmx_win_t **win)
{
    int rc = rmx_collective_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_win_create(ctx, base, len, win));
    if (win != NULL)
        *win = NULL;
    rmx_win_t *w = NULL;
    rc = window_open(ctx, base, len, 0, win == NULL || (base == NULL && len > 0) ? RMX_ERR_ARG
                                                                                 : RMX_OK, &w);
    if (rc == RMX_OK)
        *win = w;
    return rc;
}

int rmx_win_size(rmx_win_t *win, int rank, size_t *len)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_win_size(win, rank, len));
    if (len == NULL)
        return RMX_ERR_ARG;
    if (rank < 0 || rank >= win->ctx->size)
        return RMX_ERR_RANK;
    *len = win->remote[rank].size;
    return RMX_OK;
}

int rmx_win_release(rmx_win_t *win, int how)
{
    rmx_ctx_t *ctx = win->ctx;
    int rc = rmx_tracker_forget_window(win);
    for (rmx_win_t **p = &ctx->wins; *p != NULL; p = &(*p)->next)
        if (*p == win) {
            *p = win->next;
            break;
        }
    free_window_resources(win, how == RMX_WIN_OTHERS_UNKNOWN && ctx->size > 1);
    rmx_bury(win, &win->magic);
    return rc;
}

int rmx_win_free(rmx_win_t **winp)
{
    if (winp == NULL)
        return RMX_ERR_ARG;
    rmx_win_t *win = *winp;
    int rc = rmx_win_check(win);
    if (rc == RMX_OK && win->parent != NULL) { /* a handle bound to a stream: local */
        rc = rmx_win_unbind(win);
        *winp = NULL;
        return rc;
    }
    if (rc == RMX_OK)
        rc = rmx_collective_enter(win->ctx);
    else if (rc == RMX_MT_LOCK && win->parent == NULL) /* win is valid: a collective, refused */
        rc = rmx_collective_refused(win->ctx, rc);            /* at once, as rmx_collective_check */
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_win_free(winp));
    rmx_ctx_t *ctx = win->ctx;
    /* RMX_THREAD_MULTIPLE: from here other threads' calls on it are RMX_ERR_WIN (its barrier lets
     * them in); a lock some thread is still acquiring on it shows in lock_held (EPOCH below). */
    win->mt_closing = 1;
    int local_rc = rmx_win_settle_locks(win); /* a timed-out lock's leftovers given back */
    for (int r = 0; r < ctx->size && local_rc == RMX_OK; r++)
        if (win->lock_held[r])
            local_rc = RMX_ERR_EPOCH; /* an access epoch is still open on this window */
    int n_bound = __atomic_load_n(&win->n_bound, __ATOMIC_ACQUIRE);
    if (n_bound > 0) {
        rmx_log(ctx, RMX_LOG_ERROR, "rmx_win_free: window %p is still bound to %d stream(s): "
                "free every bound handle (rmx_win_free) first", (void *)win, n_bound);
        local_rc = RMX_ERR_ARG;
    }
    /* This rank's operations on the window complete before the barrier, so that after it no
     * rank has any left and each may unmap its part.  The barrier also agrees: when one rank
     * may not free the window, no rank does, and every rank goes on using it. */
    if (local_rc == RMX_OK)
        rc = rmx_tracker_forget_window(win);
    int any_failed;
    int rc2 = rmx_barrier_ucp(ctx, local_rc, &any_failed);
    if (rc2 == RMX_OK && any_failed) {
        rmx_log(ctx, RMX_LOG_DEBUG, "window %p: free refused (%s): it stays valid on every rank",
                (void *)win, rmx_strerror(local_rc != RMX_OK ? local_rc : RMX_ERR_COLLECTIVE));
        win->mt_closing = 0;
        return local_rc != RMX_OK ? local_rc : RMX_ERR_COLLECTIVE;
    }
    rmx_log(ctx, RMX_LOG_DEBUG, "window %p freed (%zu bytes here)%s", (void *)win, win->size,
            rc2 == RMX_OK ? "" : ": not agreed by every rank, its memory stays mapped until "
                                 "rmx_finalize");
    int rc3 = rmx_win_release(win, rc2 == RMX_OK ? RMX_WIN_ALL_DONE : RMX_WIN_OTHERS_UNKNOWN);
    *winp = NULL;
    return rc != RMX_OK ? rc : rc2 != RMX_OK ? rc2 : rc3;
}
