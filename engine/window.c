/*
 * window.c — windows: memory every rank exposes, mapped with ucp_mem_map, its packed rkey exchanged
 * so every rank holds an unpacked rkey and the size of every other rank's part.
 *
 * rmx_win_allocate lets UCP allocate (UCP_MEM_MAP_ALLOCATE) because only such memory is reached
 * truly one-sidedly over shared memory (DESIGN.md), then binds it to the caller's NUMA node.
 * Each window also carries an 8-byte lock word per rank (lock.c), in its own UCP-allocated map.
 *
 * Creation and free are collective.  Argument errors are detected locally and returned at once;
 * a resource failure on one rank is announced through the exchange, so every rank fails together
 * instead of waiting for a partner that gave up.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "internal.h"
#include "../transports/topo.h"

static int publish(rmx_win_t *win, int local_rc)
{
    rmx_ctx_t *ctx = win->ctx;
    if (local_rc != RMX_OK) {
        /* Take part in the exchange with an empty blob: peers see it and fail as well. */
        void *all;
        size_t stride;
        if (rmx_exchange(ctx, NULL, 0, &all, &stride) == RMX_OK)
            free(all);
        return local_rc;
    }
    int rc = rmx_exchange_region(ctx, win->memh, win->base, win->size, win->remote);
    if (rc == RMX_OK)
        rc = rmx_exchange_region(ctx, win->lock_memh, win->lock_word, sizeof(uint64_t),
                                 win->lock_remote);
    if (rc == RMX_ERR_BOOTSTRAP)
        rc = RMX_ERR_PEER; /* someone announced a failure, or the exchange itself failed */
    return rc;
}

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
    free(win->remote);
    free(win->lock_remote);
    free(win->lock_held);
    win->remote = win->lock_remote = NULL;
    win->lock_held = NULL;
    unmap_window_part(ctx, win->memh, peers_may_still_access);
    unmap_window_part(ctx, win->lock_memh, peers_may_still_access);
    win->memh = win->lock_memh = NULL;
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

static int window_open(rmx_ctx_t *ctx, void *user_base, size_t len, int allocate,
                       rmx_win_t **out)
{
    rmx_win_t *win = calloc(1, sizeof(*win));
    if (win == NULL)
        return RMX_ERR_NOMEM;
    win->ctx = ctx;
    win->size = len;
    win->allocated = allocate;
    win->remote = calloc((size_t)ctx->size, sizeof(*win->remote));
    win->lock_remote = calloc((size_t)ctx->size, sizeof(*win->lock_remote));
    win->lock_held = calloc((size_t)ctx->size, sizeof(*win->lock_held));
    int rc = win->remote && win->lock_remote && win->lock_held ? RMX_OK : RMX_ERR_NOMEM;
    if (rc == RMX_OK && allocate && len > 0 && ctx->cfg.window_memory == RMX_WIN_MEMORY_USER) {
        allocate = 0;
        if ((user_base = take_pages(win, len)) == NULL)
            rc = RMX_ERR_NOMEM;
    }
    /* Registered memory is not reached one-sidedly by UCX's shared-memory atomics: before any
     * peer may target it, the progress agent must serve this rank (RMX_PROGRESS_AUTO). */
    if (rc == RMX_OK && !allocate && len > 0)
        rc = rmx_progress_needed(ctx);
    if (rc == RMX_OK && len > 0) {
        rc = rmx_ucx_mem_map(&ctx->ucx, allocate ? NULL : user_base, len, &win->memh, &win->base);
        /* ucp_mem_query reports the registration's start, which UCP may have rounded down:
         * the window is what the caller passed. */
        if (rc == RMX_OK && !allocate)
            win->base = user_base; /* also rmx's own pages (RMX_WIN_MEMORY_USER), zeroed by mmap */
        if (rc == RMX_OK && allocate) {
            rmx_topo_place_local(win->base, len);
            memset(win->base, 0, len);
        }
    } else if (rc == RMX_OK) {
        win->base = allocate ? NULL : user_base;
    }
    if (rc == RMX_OK) {
        void *lock;
        rc = rmx_ucx_mem_map(&ctx->ucx, NULL, sizeof(uint64_t), &win->lock_memh, &lock);
        if (rc == RMX_OK) {
            win->lock_word = lock;
            *win->lock_word = 0;
        }
    }
    rc = publish(win, rc);
    int published = rc == RMX_OK; /* peers hold our rkeys: one of them may pass the barrier */
    /* Nobody targets a window before every rank has it. */
    if (rc == RMX_OK)
        rc = ctx->boot.barrier(&ctx->boot) == RMX_OK ? RMX_OK : RMX_ERR_BOOTSTRAP;
    if (rc != RMX_OK) {
        free_window_resources(win, published && ctx->size > 1);
        free(win);
        return rc;
    }
    win->magic = RMX_WIN_MAGIC;
    win->next = ctx->wins;
    ctx->wins = win;
    *out = win;
    return RMX_OK;
}

int rmx_win_allocate(rmx_ctx_t *ctx, size_t len, void **base, rmx_win_t **win)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return rc;
    if (base == NULL || win == NULL)
        return RMX_ERR_ARG;
    *win = NULL;
    *base = NULL;
    rc = window_open(ctx, NULL, len, 1, win);
    if (rc == RMX_OK)
        *base = (*win)->base;
    return rc;
}

int rmx_win_create(rmx_ctx_t *ctx, void *base, size_t len, rmx_win_t **win)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return rc;
    if (win == NULL || (base == NULL && len > 0))
        return RMX_ERR_ARG;
    *win = NULL;
    return window_open(ctx, base, len, 0, win);
}

int rmx_win_size(rmx_win_t *win, int rank, size_t *len)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return rc;
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
    /* Every rank must be done with this window before anyone unmaps its part. */
    if (how == RMX_WIN_BARRIER) {
        int rc2 = rmx_barrier_ucp(ctx);
        if (rc2 != RMX_OK)
            how = RMX_WIN_OTHERS_UNKNOWN;
        rc = rc != RMX_OK ? rc : rc2;
    }
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
    if (rc != RMX_OK)
        return rc;
    for (int r = 0; r < win->ctx->size; r++)
        if (win->lock_held[r])
            return RMX_ERR_EPOCH; /* an access epoch is still open on this window */
    rc = rmx_win_release(win, RMX_WIN_BARRIER);
    *winp = NULL;
    return rc;
}
