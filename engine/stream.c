/*
 * stream.c — streams (rmx.h): one thread's own path to the other ranks.
 *
 * A stream is a context of its own for the data path.  Everything put, get, the sections, rmw,
 * the nonblocking calls and flush touch through their window is reached through win->ctx: the
 * endpoints (ctx->peers), the worker and its landing memory (ctx->ucx), the tracker, the section
 * memo, the stats.  So a stream is an rmx_ctx_t with those of its own (a UCP worker of the
 * parent's owner context, endpoints from it to every rank's service worker, its own tracker),
 * the job's rank, size, config and direct settings copied, `owner` its creating thread and no
 * thread level of its own (mt 0: the owner check, no lock), and a window bound to it is an
 * rmx_win_t whose ctx is the stream, with rkeys unpacked on the stream's endpoints from the
 * packed keys the window kept (window.c).  The data path is one piece of code for both, and two
 * streams share nothing on it.  What is the rank's, not a stream's, stays with the parent:
 * windows' creation and free, locks (lock.c forwards a bound handle's to its window),
 * synchronization, serving peers (the service worker and the agent).
 *
 * The parent's lists (its streams, a window's count of bound handles) change only under the
 * parent's lock at RMX_THREAD_MULTIPLE: creation, free and binding take it like any call on the
 * context; none of it is on the data path.
 *
 * A freed stream's worker and endpoints are kept (the parent's stream_pool) and the next
 * rmx_stream_create takes them: making a worker and wiring an endpoint to every rank costs
 * milliseconds, and every handshake is a window in which a rank's death can abort its peer
 * inside UCX 1.13 (rmx.h).  What belongs to a stream's life goes with it: bound handles,
 * requests (the tracker is made anew), statistics, the owner thread.
 */
#include <stdlib.h>
#include <string.h>
#include "tracker.h"

/* The stream's context behind a handle, or NULL when it is none (or freed). */
static rmx_ctx_t *stream_ctx(rmx_stream_t *stream)
{
    rmx_ctx_t *s = (rmx_ctx_t *)(void *)stream;
    return s != NULL && s->magic == RMX_CTX_MAGIC && s->parent != NULL ? s : NULL;
}

/* A stream alive and this thread its owner. */
static int stream_check(rmx_ctx_t *s)
{
    return s == NULL ? RMX_ERR_ARG : rmx_ctx_check(s);
}

static void rkeys_release(rmx_ctx_t *s, rmx_win_t *bound)
{
    if (bound->remote != NULL)
        rmx_remote_release(s, bound->remote);
    free(bound->remote);
    bound->remote = NULL;
}

/* A bound handle goes (its stream's operations on it completed or given up). */
static void bound_release(rmx_win_t *bound)
{
    rmx_ctx_t *s = bound->ctx;
    for (rmx_win_t **p = &s->bound; *p != NULL; p = &(*p)->next_bound)
        if (*p == bound) {
            *p = bound->next_bound;
            break;
        }
    rkeys_release(s, bound);
    __atomic_sub_fetch(&bound->parent->n_bound, 1, __ATOMIC_RELEASE);
    rmx_bury(bound, &bound->magic);
}

/* What goes with a stream's life, after its operations: bound handles, the tracker (and every
 * request), the section memo.  The worker and the endpoints stay (the pool). */
static void stream_end_life(rmx_ctx_t *s)
{
    while (s->bound != NULL)
        bound_release(s->bound);
    rmx_tracker_destroy(s);
    free(s->sub_memo);
    s->sub_memo = NULL;
}

/* Everything of the stream: its life, then endpoints and worker. */
static void stream_release(rmx_ctx_t *s)
{
    stream_end_life(s);
    rmx_peers_close(s);
    rmx_ucx_close(&s->ucx);
}

/* A stream of the pool for this thread: a new life (tracker, stats, owner); NULL when the pool
 * is empty or the tracker cannot be made.  Under the parent's lock. */
static rmx_ctx_t *stream_from_pool(rmx_ctx_t *ctx)
{
    rmx_ctx_t *s = ctx->stream_pool;
    if (s == NULL)
        return NULL;
    if (rmx_tracker_create(s) != RMX_OK)
        return NULL;
    ctx->stream_pool = s->next_stream;
    memset(&s->stats, 0, sizeof(s->stats));
    s->owner = pthread_self();
    /* ranks that failed while it was kept: failed for it too (its worker was not progressed) */
    for (int r = 0; r < s->size; r++)
        if (ctx->peers[r].failed)
            rmx_peer_failed(&s->peers[r]);
    return s;
}

/* The stream's endpoints: to every rank's service worker, as the parent's.  Peers the parent
 * knows to have failed are failed here too. */
static int stream_connect(rmx_ctx_t *s, rmx_ctx_t *ctx)
{
    void *own;
    size_t own_len;
    int rc = rmx_ucx_worker_address(&s->ucx, 1, &own, &own_len);
    if (rc == RMX_OK) {
        rc = rmx_peers_connect(s, ctx->peer_addrs, ctx->peer_addr_stride, own, ctx->peers);
        rmx_ucx_worker_address_release(&s->ucx, 1, own);
    }
    /* A rank dying during the handshake fails its endpoint: that rank alone is lost. */
    rmx_ucx_serve_for(&s->ucx, &ctx->ucx);
    if (rc == RMX_OK && rmx_peers_wire_up(s, ctx->ctrl_remote) == RMX_ERR_TIMEOUT)
        rc = RMX_ERR_TIMEOUT;
    rmx_ucx_serve_end(&s->ucx);
    return rc;
}

/* A stream made from nothing: worker, endpoints wired up to every rank, tracker. */
static int stream_new(rmx_ctx_t *ctx, rmx_ctx_t **out)
{
    rmx_ctx_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return RMX_ERR_NOMEM;
    s->parent = ctx;
    s->rank = ctx->rank;
    s->size = ctx->size;
    s->cfg = ctx->cfg;
    s->log = ctx->log;
    s->owner = pthread_self();
    s->direct = ctx->direct;
    s->direct_atomics = ctx->direct_atomics;
    int rc = rmx_ucx_open_stream(&s->ucx, &ctx->ucx);
    s->ucx.log = &s->log;
    if (rc == RMX_OK)
        rc = stream_connect(s, ctx);
    if (rc == RMX_OK)
        rc = rmx_tracker_create(s);
    if (rc != RMX_OK) {
        if (s->ucx.worker != NULL)
            stream_release(s);
        free(s);
        rmx_log(ctx, RMX_LOG_ERROR, "rmx_stream_create: %s", rmx_strerror(rc));
        return rc;
    }
    *out = s;
    return RMX_OK;
}

int rmx_stream_create(rmx_ctx_t *ctx, rmx_stream_t **out)
{
    if (out != NULL)
        *out = NULL;
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_stream_create(ctx, out));
    if (out == NULL)
        return RMX_ERR_ARG;
    if (ctx->parent != NULL)
        return RMX_ERR_CTX; /* a stream handle cast to a context */
    rmx_ctx_t *s = stream_from_pool(ctx);
    if (s == NULL && (rc = stream_new(ctx, &s)) != RMX_OK)
        return rc;
    s->next_stream = ctx->streams;
    ctx->streams = s;
    s->magic = RMX_CTX_MAGIC;
    rmx_log(ctx, RMX_LOG_DEBUG, "stream %p ready", (void *)s);
    *out = (rmx_stream_t *)(void *)s;
    return RMX_OK;
}

/* From the parent's streams to its pool, under its lock. */
static int stream_retire(rmx_ctx_t *ctx, rmx_ctx_t *s)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, stream_retire(ctx, s));
    for (rmx_ctx_t **p = &ctx->streams; *p != NULL; p = &(*p)->next_stream)
        if (*p == s) {
            *p = s->next_stream;
            break;
        }
    s->next_stream = ctx->stream_pool;
    ctx->stream_pool = s;
    return RMX_OK;
}

int rmx_stream_free(rmx_stream_t **streamp)
{
    if (streamp == NULL)
        return RMX_ERR_ARG;
    if (*streamp == NULL)
        return RMX_OK;
    rmx_ctx_t *s = stream_ctx(*streamp);
    int rc = stream_check(s);
    if (rc != RMX_OK)
        return rc;
    rc = rmx_tracker_complete(s, -1);
    /* The handle is dead from here (a stale copy of it is RMX_ERR_ARG until the pool hands
     * this stream out again). */
    stream_end_life(s);
    s->magic = RMX_DEAD_MAGIC;
    int rc2 = stream_retire(s->parent, s);
    *streamp = NULL;
    return rc != RMX_OK ? rc : rc2;
}

void rmx_streams_free_all(rmx_ctx_t *ctx)
{
    while (ctx->streams != NULL) {
        rmx_ctx_t *s = ctx->streams;
        ctx->streams = s->next_stream;
        if (s->tracker != NULL) /* (NULL: freed while finalize began, its life over) */
            (void)rmx_tracker_complete(s, -1);
        stream_release(s);
        rmx_bury(s, &s->magic);
    }
    while (ctx->stream_pool != NULL) {
        rmx_ctx_t *s = ctx->stream_pool;
        ctx->stream_pool = s->next_stream;
        stream_release(s); /* its life ended when it was freed */
        rmx_bury(s, &s->magic);
    }
}

int rmx_stream_flush(rmx_stream_t *stream)
{
    rmx_ctx_t *s = stream_ctx(stream);
    int rc = stream_check(s);
    if (rc != RMX_OK)
        return rc;
    __atomic_thread_fence(__ATOMIC_RELEASE); /* direct puts: before what the caller sends next */
    if (rmx_tracker_end_if_idle(s)) {
        rmx_ucx_tick(&s->ucx); /* a loop of flushes still lets keepalive run */
        return RMX_OK;
    }
    return rmx_tracker_complete(s, -1);
}

int rmx_stream_stats(rmx_stream_t *stream, rmx_stats_t *out)
{
    rmx_ctx_t *s = stream_ctx(stream);
    int rc = stream_check(s);
    if (rc != RMX_OK)
        return rc;
    if (out == NULL)
        return RMX_ERR_ARG;
    *out = s->stats;
    return RMX_OK;
}

/* The window's ranks' parts as the stream reaches them: its own rkeys (and their mappings). */
static int bound_remotes(rmx_ctx_t *s, rmx_win_t *win, rmx_win_t *bound)
{
    bound->remote = calloc((size_t)s->size, sizeof(*bound->remote));
    if (bound->remote == NULL)
        return RMX_ERR_NOMEM;
    for (int r = 0; r < s->size; r++) {
        rmx_remote_t *rem = &bound->remote[r];
        rem->addr = win->remote[r].addr;
        rem->size = win->remote[r].size;
        const uint64_t *packed = win->rkeys_packed[r];
        if (packed == NULL || rmx_ep(s, r) == NULL)
            continue; /* an empty part, or a failed peer (its calls are RMX_ERR_PEER) */
        int rc = rmx_ucx_rkey_unpack(rmx_ep(s, r), packed + 1, &rem->rkey);
        if (rc != RMX_OK)
            return rc;
        rmx_remote_map(s, r, rem, s->direct);
    }
    return RMX_OK;
}

/* The window's side, under the parent's lock: alive, not closing, of the stream's context. */
static int bind_window(rmx_win_t *win, rmx_ctx_t *s, rmx_win_t **out)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, bind_window(win, s, out));
    if (win->parent != NULL)
        return RMX_ERR_WIN; /* already a bound handle */
    if (win->ctx != s->parent)
        return RMX_ERR_ARG; /* a window of another context */
    for (rmx_win_t *b = s->bound; b != NULL; b = b->next_bound)
        if (b->parent == win)
            return RMX_ERR_ARG; /* bound to this stream already */
    rmx_win_t *bound = calloc(1, sizeof(*bound));
    if (bound == NULL)
        return RMX_ERR_NOMEM;
    bound->ctx = s;
    bound->parent = win;
    bound->base = win->base;
    bound->size = win->size;
    bound->lock_area_slot = -1;
    rc = bound_remotes(s, win, bound);
    if (rc != RMX_OK) {
        rkeys_release(s, bound);
        free(bound);
        return rc;
    }
    __atomic_add_fetch(&win->n_bound, 1, __ATOMIC_RELAXED);
    bound->next_bound = s->bound;
    s->bound = bound;
    bound->magic = RMX_WIN_MAGIC;
    *out = bound;
    return RMX_OK;
}

int rmx_win_bind(rmx_win_t *win, rmx_stream_t *stream, rmx_win_t **out)
{
    if (out == NULL)
        return RMX_ERR_ARG;
    *out = NULL;
    rmx_ctx_t *s = stream_ctx(stream);
    int rc = stream_check(s);
    if (rc != RMX_OK)
        return rc;
    if (win == NULL || win->magic != RMX_WIN_MAGIC)
        return RMX_ERR_WIN;
    return bind_window(win, s, out);
}

int rmx_win_unbind(rmx_win_t *bound)
{
    int rc = rmx_tracker_forget_window(bound);
    bound_release(bound);
    return rc;
}

void rmx_rkeys_packed_free(rmx_ctx_t *ctx, void **packed)
{
    for (int r = 0; packed != NULL && r < ctx->size; r++)
        free(packed[r]);
    free(packed);
}
