/*
 * context.c — rmx_init / rmx_finalize: bootstrap, binding, the UCP worker, endpoints to every
 * rank, and the control block that sync_all and sync_images count on.
 *
 * Released handles become tombstones (magic RMX_DEAD_MAGIC) that stay allocated for the life of
 * the process, so a stale handle is reported as RMX_ERR_CTX / RMX_ERR_WIN instead of being a
 * use-after-free.  They are a few hundred bytes each and stay reachable from `graveyard`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "../transports/topo.h"

typedef struct tombstone {
    struct tombstone *next;
    void *handle;
} tombstone_t;

static tombstone_t *graveyard;

/* Several contexts may live in one process, each owned by its own thread (rmx.h): what they share
 * (the graveyard, the hwloc topology's reference count, the environment UCX reads at ucp_init) is
 * touched under this lock.  Never held across communication: contexts in one process may be
 * ranks of one job and wait for each other. */
static pthread_mutex_t process_lock = PTHREAD_MUTEX_INITIALIZER;

void rmx_bury(void *handle, uint32_t *magic)
{
    *magic = RMX_DEAD_MAGIC;
    tombstone_t *t = malloc(sizeof(*t));
    if (t == NULL)
        return; /* the handle merely becomes unreachable for leak checkers */
    t->handle = handle;
    pthread_mutex_lock(&process_lock);
    t->next = graveyard;
    graveyard = t;
    pthread_mutex_unlock(&process_lock);
}

void rmx_config_init(rmx_config_t *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof(*cfg));
    cfg->bootstrap = RMX_BOOT_AUTO;
    cfg->bind = RMX_BIND_ENV;
    cfg->peer_timeout_s = RMX_DEFAULT_TIMEOUT_S;
    cfg->coalesce_max = RMX_DEFAULT_COALESCE_MAX;
}

__thread pthread_t rmx_self_tid __attribute__((tls_model("initial-exec")));
__thread int rmx_self_known __attribute__((tls_model("initial-exec")));

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

int rmx_progress(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return rc;
    (void)rmx_ucx_progress(&ctx->ucx);
    return RMX_OK;
}

int rmx_rank(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    return rc != RMX_OK ? rc : ctx->rank;
}

int rmx_size(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    return rc != RMX_OK ? rc : ctx->size;
}

/* Called from inside ucp_worker_progress: only record the failure; the endpoint is closed at the
 * next entry point (rmx_peers_reap). */
static void on_peer_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)ep;
    (void)status;
    rmx_peer_t *p = arg;
    p->failed = 1;
    p->ctx->unreaped = 1;
    if (p->am != NULL)
        rmx_am_peer_failed(&p->ctx->ucx, p->am); /* its answers will never come */
}

/* A word of an environment variable among `words` (indexes = values first..); unset: dflt. */
static int env_choice(const char *var, const char *const *words, int n, int first, int dflt,
                      int *out)
{
    const char *s = getenv(var);
    if (s == NULL || *s == '\0') {
        *out = dflt;
        return RMX_OK;
    }
    for (int i = 0; i < n; i++)
        if (strcmp(s, words[i]) == 0) {
            *out = first + i;
            return RMX_OK;
        }
    fprintf(stderr, "rmx: %s=%s is not one of", var, s);
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %s", words[i]);
    fprintf(stderr, "\n");
    return RMX_ERR_ARG;
}

static int resolve_progress(rmx_progress_t *p)
{
    static const char *const words[] = {"auto", "thread", "none"};
    if (*p == RMX_PROGRESS_ENV) {
        int v;
        int rc = env_choice("RMX_PROGRESS", words, 3, RMX_PROGRESS_AUTO, RMX_PROGRESS_AUTO, &v);
        *p = (rmx_progress_t)v;
        return rc;
    }
    return *p >= RMX_PROGRESS_AUTO && *p <= RMX_PROGRESS_NONE ? RMX_OK : RMX_ERR_ARG;
}

static int resolve_window_memory(rmx_win_memory_t *m)
{
    static const char *const words[] = {"ucp", "user"};
    if (*m == RMX_WIN_MEMORY_ENV) {
        int v;
        int rc = env_choice("RMX_WIN_MEMORY", words, 2, RMX_WIN_MEMORY_UCP, RMX_WIN_MEMORY_UCP,
                            &v);
        *m = (rmx_win_memory_t)v;
        return rc;
    }
    return *m >= RMX_WIN_MEMORY_UCP && *m <= RMX_WIN_MEMORY_USER ? RMX_OK : RMX_ERR_ARG;
}

static int open_bootstrap(rmx_ctx_t *ctx)
{
    switch (ctx->cfg.bootstrap) {
    case RMX_BOOT_AUTO:
        /* Launched by a PMIx launcher but unable to reach it: an error, not a silent single run
         * (N singletons would each believe they are the whole job). */
        if (rmx_boot_pmix_launched())
            return rmx_boot_pmix_open(&ctx->boot);
        return rmx_boot_single_open(&ctx->boot);
    case RMX_BOOT_PMIX:
        return rmx_boot_pmix_open(&ctx->boot);
    case RMX_BOOT_OOB:
        return rmx_boot_oob_open(&ctx->boot, &ctx->cfg.oob);
    case RMX_BOOT_SINGLE:
        return rmx_boot_single_open(&ctx->boot);
    }
    return RMX_ERR_ARG;
}

/* Endpoints from this rank's worker to every peer's service worker (where the progress agent
 * serves them), and to its own worker for itself (UCX's self transport: in place).  Peers that
 * UCX would serve RMA to in software (tcp) are reached over rmx's active messages instead
 * (transports/am_rma.c: where UCX's own emulation aborts a survivor that answers a dead rank). */
static int connect_peers(rmx_ctx_t *ctx)
{
    void *addr, *own;
    size_t len, own_len, stride;
    void *all;
    int rc = rmx_ucx_worker_address(&ctx->ucx, 0, &addr, &len);
    if (rc != RMX_OK)
        return rc;
    rc = rmx_exchange(ctx, addr, len, &all, &stride);
    rmx_ucx_worker_address_release(&ctx->ucx, 0, addr);
    if (rc != RMX_OK)
        return rc;
    if ((rc = rmx_ucx_worker_address(&ctx->ucx, 1, &own, &own_len)) != RMX_OK) {
        free(all);
        return rc;
    }
    ctx->peers = calloc((size_t)ctx->size, sizeof(*ctx->peers));
    rc = ctx->peers == NULL ? RMX_ERR_NOMEM : rmx_am_join(&ctx->ucx, ctx->rank, ctx->size);
    for (int r = 0; r < ctx->size && rc == RMX_OK; r++) {
        size_t plen;
        const void *peer_addr = r == ctx->rank ? own : rmx_exchange_blob(all, stride, r, &plen);
        ctx->peers[r].ctx = ctx;
        rc = rmx_ucx_ep_create(&ctx->ucx, peer_addr, on_peer_error, &ctx->peers[r],
                               &ctx->peers[r].ep);
        if (rc == RMX_OK && r != ctx->rank)
            rc = rmx_am_route(&ctx->ucx, ctx->peers[r].ep, r, &ctx->peers[r].am);
    }
    rmx_ucx_worker_address_release(&ctx->ucx, 1, own);
    free(all);
    return rc;
}

int rmx_progress_needed(rmx_ctx_t *ctx)
{
    if (ctx->size == 1)
        return RMX_OK;
    if (ctx->cfg.progress == RMX_PROGRESS_NONE) {
        ctx->ucx.serve_every_progress = 1; /* the owner's progress is all peers get */
        return RMX_OK;
    }
    return rmx_ucx_agent_start(&ctx->ucx); /* AUTO; THREAD has it running already */
}

/* RMX_PROGRESS_THREAD: the agent always runs; AUTO: when a peer is reached through a transport
 * that needs the target's progress (windows of registered memory start it too: window.c); NONE:
 * then the owner thread serves peers at every progress call. */
static int start_progress(rmx_ctx_t *ctx)
{
    if (ctx->cfg.progress == RMX_PROGRESS_THREAD)
        return rmx_ucx_agent_start(&ctx->ucx);
    for (int r = 0; r < ctx->size; r++)
        if (r != ctx->rank && rmx_ucx_ep_needs_target_progress(ctx->peers[r].ep))
            return rmx_progress_needed(ctx);
    return RMX_OK;
}

static int create_control_block(rmx_ctx_t *ctx)
{
    ctx->ctrl_len = sizeof(rmx_ctrl_t) + 2 * (size_t)ctx->size * sizeof(uint64_t);
    void *addr;
    int rc = rmx_ucx_mem_map(&ctx->ucx, NULL, ctx->ctrl_len, &ctx->ctrl_memh, &addr);
    if (rc != RMX_OK)
        return rc;
    ctx->ctrl = addr;
    memset(ctx->ctrl, 0, ctx->ctrl_len);
    ctx->ctrl_remote = calloc((size_t)ctx->size, sizeof(*ctx->ctrl_remote));
    ctx->images_sent = calloc((size_t)ctx->size, sizeof(*ctx->images_sent));
    if (ctx->ctrl_remote == NULL || ctx->images_sent == NULL)
        return RMX_ERR_NOMEM;
    return rmx_exchange_region(ctx, ctx->ctrl_memh, ctx->ctrl, ctx->ctrl_len, ctx->ctrl_remote);
}

static void flush_live_peers(rmx_ctx_t *ctx)
{
    rmx_ucx_dest_t *dests = calloc((size_t)ctx->size, sizeof(*dests));
    if (dests == NULL)
        return;
    int n = 0;
    for (int r = 0; r < ctx->size; r++)
        if (ctx->peers[r].ep != NULL && !ctx->peers[r].failed)
            dests[n++] = rmx_dest(ctx, r);
    (void)rmx_ucx_flush_eps(&ctx->ucx, dests, n); /* a peer failing meanwhile is no news here */
    free(dests);
}

/* Tear down whatever init got to; safe on a partly built context. */
static void release_context(rmx_ctx_t *ctx, int boot_open)
{
    if (ctx->tracker != NULL)
        rmx_tracker_destroy(ctx);
    if (ctx->ctrl_remote != NULL)
        rmx_remote_release(ctx, ctx->ctrl_remote);
    free(ctx->ctrl_remote);
    free(ctx->images_sent);
    ctx->ctrl_remote = NULL;
    ctx->images_sent = NULL;
    if (ctx->peers != NULL) {
        /* Every request of ours is answered before our endpoints go.  Where UCX serves RMA in
         * software itself (atomics on registered memory over shared memory), the target answers
         * each request, and UCX 1.13 aborts the *target* (ucp_request_try_send: "Fatal:
         * unexpected error: Endpoint timeout") when that answer cannot be sent because the
         * requester has closed or exited; over tcp rmx's own answers (transports/am_rma.c)
         * would just fail, but its puts and notifications are applied at the target only once
         * flushed.  Sync notifications complete at the origin at once, and a sync that failed
         * on a dead rank returns with some still unanswered. */
        flush_live_peers(ctx);
        /* Then force-close: a graceful close over tcp would wait for a peer that already sits
         * in the bootstrap barrier below, not progressing its worker. */
        for (int r = 0; r < ctx->size; r++) {
            if (ctx->peers[r].ep != NULL)
                rmx_ucx_ep_close(&ctx->ucx, ctx->peers[r].ep, 0);
            if (ctx->peers[r].dead_ep != NULL)
                rmx_ucx_ep_close(&ctx->ucx, ctx->peers[r].dead_ep, 0);
        }
        /* Nobody may destroy its worker while a peer still flushes its endpoint to it. */
        if (boot_open)
            (void)ctx->boot.barrier(&ctx->boot);
    }
    /* Nobody serves a request any more: what survivors might still have reached (windows whose
     * collective free failed) and the control block can go now. */
    rmx_ucx_agent_stop(&ctx->ucx);
    for (int i = 0; i < ctx->n_orphans; i++)
        rmx_ucx_mem_unmap(&ctx->ucx, ctx->orphans[i]);
    free(ctx->orphans);
    ctx->orphans = NULL;
    ctx->n_orphans = 0;
    free(ctx->peers);
    ctx->peers = NULL;
    if (ctx->ctrl_memh != NULL)
        rmx_ucx_mem_unmap(&ctx->ucx, ctx->ctrl_memh);
    ctx->ctrl_memh = NULL;
    pthread_mutex_lock(&process_lock);
    rmx_ucx_close(&ctx->ucx);
    if (ctx->topo_held)
        rmx_topo_release();
    pthread_mutex_unlock(&process_lock);
    ctx->topo_held = 0;
    if (boot_open)
        ctx->boot.fini(&ctx->boot);
}

int rmx_init(const rmx_config_t *cfg, rmx_ctx_t **out)
{
    if (out == NULL)
        return RMX_ERR_ARG;
    *out = NULL;
    rmx_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return RMX_ERR_NOMEM;
    if (cfg != NULL)
        ctx->cfg = *cfg;
    else
        rmx_config_init(&ctx->cfg);
    if (ctx->cfg.peer_timeout_s < 0 || ctx->cfg.bootstrap > RMX_BOOT_SINGLE ||
        ctx->cfg.bind > RMX_BIND_NUMA) {
        free(ctx);
        return RMX_ERR_ARG;
    }
    if (ctx->cfg.peer_timeout_s == 0)
        ctx->cfg.peer_timeout_s = RMX_DEFAULT_TIMEOUT_S;
    if (resolve_progress(&ctx->cfg.progress) != RMX_OK ||
        resolve_window_memory(&ctx->cfg.window_memory) != RMX_OK) {
        free(ctx);
        return RMX_ERR_ARG;
    }
    if (ctx->cfg.coalesce_max == 0)
        ctx->cfg.coalesce_max = RMX_DEFAULT_COALESCE_MAX;
    ctx->owner = pthread_self();

    int rc = open_bootstrap(ctx);
    if (rc != RMX_OK) {
        free(ctx);
        return rc == RMX_ERR_ARG ? RMX_ERR_ARG : RMX_ERR_BOOTSTRAP;
    }
    ctx->rank = ctx->boot.rank;
    ctx->size = ctx->boot.size;

    pthread_mutex_lock(&process_lock);
    rc = rmx_topo_acquire();
    if (rc == RMX_OK) {
        ctx->topo_held = 1;
        rc = rmx_topo_bind(ctx->cfg.bind, ctx->boot.local_rank); /* before the worker exists */
    }
    if (rc == RMX_OK)
        rc = rmx_ucx_open(&ctx->ucx, ctx->cfg.peer_timeout_s);
    pthread_mutex_unlock(&process_lock);
    if (rc == RMX_OK)
        rc = connect_peers(ctx);
    if (rc == RMX_OK)
        rc = start_progress(ctx);
    if (rc == RMX_OK)
        rc = create_control_block(ctx);
    if (rc == RMX_OK)
        rc = rmx_tracker_create(ctx);
    /* Every control block is zeroed before anyone may bump a counter in it. */
    if (rc == RMX_OK)
        rc = ctx->boot.barrier(&ctx->boot);
    if (rc != RMX_OK) {
        release_context(ctx, 1);
        free(ctx);
        return rc;
    }
    ctx->magic = RMX_CTX_MAGIC;
    *out = ctx;
    return RMX_OK;
}

int rmx_finalize(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return rc;
    /* Every rank's operations complete, and every rank stops accessing, before memory goes:
     * Fortran's normal termination, where an image's data stay reachable until all images
     * have initiated it.  Not a sync_all: ranks still in one learn that this one stopped. */
    rc = rmx_terminate(ctx);
    while (ctx->wins != NULL) {
        int rc2 = rmx_win_release(ctx->wins, rc == RMX_OK ? RMX_WIN_ALL_DONE
                                                           : RMX_WIN_OTHERS_UNKNOWN);
        if (rc == RMX_OK)
            rc = rc2;
    }
    release_context(ctx, 1);
    rmx_bury(ctx, &ctx->magic);
    return rc;
}
