/*
 * context.c — rmx_init / rmx_finalize: bootstrap, binding, the UCP worker, endpoints to every
 * rank, and the control block that sync_all and sync_images count on.
 *
 * Released handles become tombstones (magic RMX_DEAD_MAGIC) that stay allocated for the life of
 * the process, so a stale handle is reported as RMX_ERR_CTX / RMX_ERR_WIN instead of being a
 * use-after-free.  They are a few hundred bytes each and stay reachable from `graveyard`.
 */
#include <math.h>
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
__thread rmx_ctx_t *rmx_mt_held __attribute__((tls_model("initial-exec")));

/* ---- RMX_THREAD_MULTIPLE: the context's lock (internal.h, RMX_MT_RETRY) */
__thread int rmx_mt_collective_mine __attribute__((tls_model("initial-exec")));

int rmx_mt_lock(rmx_ctx_t *ctx)
{
    pthread_mutex_lock(&ctx->mt_lock);
    rmx_mt_held = ctx;
    __atomic_add_fetch(&ctx->mt_inside, 1, __ATOMIC_RELAXED); /* read without the lock too */
    /* Checked again under the lock: finalize may have begun or ended while we waited for it. */
    return ctx->magic == RMX_CTX_MAGIC && !ctx->mt_closing ? RMX_OK : RMX_ERR_CTX;
}

int rmx_mt_unlock_ret(rmx_ctx_t *ctx, int rc)
{
    if (rmx_mt_collective_mine) {
        __atomic_store_n(&ctx->mt_collective, 0, __ATOMIC_RELAXED); /* read without the lock */
        rmx_mt_collective_mine = 0;
    }
    __atomic_sub_fetch(&ctx->mt_inside, 1, __ATOMIC_RELAXED);
    rmx_mt_held = NULL;
    pthread_mutex_unlock(&ctx->mt_lock);
    return rc;
}

void rmx_ctx_yield(rmx_ctx_t *ctx)
{
    if (!ctx->mt || rmx_mt_held != ctx) {
        sched_yield();
        return;
    }
    rmx_mt_held = NULL;
    pthread_mutex_unlock(&ctx->mt_lock);
    sched_yield(); /* a thread blocked on the lock was woken: let it take it */
    pthread_mutex_lock(&ctx->mt_lock);
    rmx_mt_held = ctx;
}

int rmx_progress(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_progress(ctx));
    (void)rmx_ucx_progress(&ctx->ucx);
    return RMX_OK;
}

int rmx_rank(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    return rc != RMX_OK ? RMX_MT_RETRY(rc, ctx, rmx_rank(ctx)) : ctx->rank;
}

int rmx_size(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    return rc != RMX_OK ? RMX_MT_RETRY(rc, ctx, rmx_size(ctx)) : ctx->size;
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
    char list[256] = "";
    for (int i = 0; i < n; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof(list) - used, " %s", words[i]);
    }
    rmx_logf(NULL, RMX_LOG_ERROR, "%s=%s is not one of%s", var, s, list);
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

static int resolve_direct(rmx_direct_t *d)
{
    static const char *const words[] = {"1", "0"};
    if (*d == RMX_DIRECT_ENV) {
        int v;
        int rc = env_choice("RMX_DIRECT", words, 2, RMX_DIRECT_ON, RMX_DIRECT_ON, &v);
        *d = (rmx_direct_t)v;
        return rc;
    }
    return *d >= RMX_DIRECT_ON && *d <= RMX_DIRECT_OFF ? RMX_OK : RMX_ERR_ARG;
}

/* A launcher that started this process as one of several, without a PMIx server rmx could
 * join (srun without --mpi=pmix, a PMI-1/PMI-2 launcher, ranks started by hand with Open MPI's
 * variables): its name and the variable that says so, else NULL. */
static const char *launcher_without_pmix(const char **var, const char **value)
{
    static const struct {
        const char *name, *size_var, *rank_var;
    } launchers[] = {
        {"Slurm's srun", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID"},
        {"a PMI-1/PMI-2 launcher (Hydra, srun --mpi=pmi2)", "PMI_SIZE", "PMI_RANK"},
        {"Open MPI (without its PMIx server)", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
        {"MVAPICH", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"},
    };
    for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
        const char *size = getenv(launchers[i].size_var);
        if (size != NULL && atol(size) > 1 && getenv(launchers[i].rank_var) != NULL) {
            *var = launchers[i].size_var;
            *value = size;
            return launchers[i].name;
        }
    }
    return NULL;
}

#define RMX_TIMEOUT_MAX_S 1e6            /* 11.6 days: beyond it a number is a mistake */

static int bad_field(const char *field, const char *why)
{
    rmx_logf(NULL, RMX_LOG_ERROR, "rmx_init: rmx_config_t.%s %s", field, why);
    return RMX_ERR_ARG;
}

/* Check every field of the caller's configuration, each with a message naming it, and resolve
 * defaults and environment variables; RMX_ERR_ARG on the first bad one. */
static int resolve_config(rmx_config_t *c)
{
    if ((unsigned)c->bootstrap > RMX_BOOT_SINGLE)
        return bad_field("bootstrap", "is not an rmx_boot_kind_t");
    if ((unsigned)c->bind > RMX_BIND_NUMA)
        return bad_field("bind", "is not an rmx_bind_t");
    /* isfinite first: every comparison with NaN is false, so NaN passed `< 0` checks */
    if (!isfinite(c->peer_timeout_s) || c->peer_timeout_s < 0 ||
        c->peer_timeout_s > RMX_TIMEOUT_MAX_S)
        return bad_field("peer_timeout_s", "must be a finite number of seconds in [0, 1e6] "
                                           "(0: the default, 10 s)");
    if (c->peer_timeout_s == 0)
        c->peer_timeout_s = RMX_DEFAULT_TIMEOUT_S;
    if (c->coalesce_max > RMX_COALESCE_MAX_LIMIT)
        return bad_field("coalesce_max", "must be at most RMX_COALESCE_MAX_LIMIT (65536 bytes)");
    if (c->coalesce_max == 0)
        c->coalesce_max = RMX_DEFAULT_COALESCE_MAX;
    if (c->coalesce_disable != 0 && c->coalesce_disable != 1)
        return bad_field("coalesce_disable", "must be 0 or 1");
    if (resolve_progress(&c->progress) != RMX_OK)
        return bad_field("progress", "is not an rmx_progress_t (or RMX_PROGRESS is bad)");
    if (resolve_window_memory(&c->window_memory) != RMX_OK)
        return bad_field("window_memory", "is not an rmx_win_memory_t (or RMX_WIN_MEMORY is bad)");
    if (c->threads != RMX_THREAD_SINGLE && c->threads != RMX_THREAD_MULTIPLE)
        return bad_field("threads", "is not an rmx_thread_level_t (RMX_THREAD_SINGLE or "
                                    "RMX_THREAD_MULTIPLE)");
    if (resolve_direct(&c->direct) != RMX_OK)
        return bad_field("direct", "is not an rmx_direct_t (or RMX_DIRECT is not 1 or 0)");
    if (c->bootstrap == RMX_BOOT_OOB) {
        const rmx_oob_t *o = &c->oob;
        if (o->allgather == NULL || o->barrier == NULL)
            return bad_field("oob", "needs both callbacks, allgather and barrier");
        if (o->size < 1 || o->rank < 0 || o->rank >= o->size)
            return bad_field("oob", "needs 0 <= rank < size");
    }
    return RMX_OK;
}

static int open_bootstrap(rmx_ctx_t *ctx)
{
    const char *launcher, *var, *value;
    switch (ctx->cfg.bootstrap) {
    case RMX_BOOT_AUTO:
        /* rmx_fork_exec's variables first: they come from this process's own launcher, while
         * PMIx's may be inherited from one further out. */
        if (rmx_boot_fork_launched())
            return rmx_boot_fork_open(&ctx->boot);
        /* Launched by a PMIx launcher but unable to reach it: an error, not a silent single run
         * (N singletons would each believe they are the whole job).  The same for a launcher
         * rmx recognises but cannot join. */
        if (rmx_boot_pmix_launched())
            return rmx_boot_pmix_open(&ctx->boot);
        if ((launcher = launcher_without_pmix(&var, &value)) != NULL) {
            rmx_log(ctx, RMX_LOG_ERROR,
                    "rmx_init: started by %s as one of %s=%s ranks, but without a PMIx "
                    "server to join; run it with `srun --mpi=pmix` or Open MPI's mpirun, or "
                    "set rmx_config_t.bootstrap to RMX_BOOT_OOB (the embedding runtime's "
                    "collectives) or RMX_BOOT_SINGLE",
                    launcher, var, value);
            return RMX_ERR_BOOTSTRAP;
        }
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

/* Endpoints from this rank's worker to every peer's service worker (peers.c).  Every rank's
 * address is kept: streams (stream.c) connect to the same service workers later. */
static int connect_peers(rmx_ctx_t *ctx)
{
    void *addr, *own;
    size_t len, own_len;
    int rc = rmx_ucx_worker_address(&ctx->ucx, 0, &addr, &len);
    if (rc != RMX_OK)
        return rc;
    rc = rmx_exchange(ctx, addr, len, &ctx->peer_addrs, &ctx->peer_addr_stride);
    rmx_ucx_worker_address_release(&ctx->ucx, 0, addr);
    if (rc != RMX_OK)
        return rc;
    if ((rc = rmx_ucx_worker_address(&ctx->ucx, 1, &own, &own_len)) != RMX_OK)
        return rc;
    rc = rmx_peers_connect(ctx, ctx->peer_addrs, ctx->peer_addr_stride, own, NULL);
    rmx_ucx_worker_address_release(&ctx->ucx, 1, own);
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

/* Collective, whatever local_rc (this rank's state so far): the exchange carries it, so a rank
 * that failed before here fails every rank's init instead of leaving them waiting for it. */
static int create_control_block(rmx_ctx_t *ctx, int local_rc)
{
    ctx->ctrl_len = sizeof(rmx_ctrl_t) +
                    RMX_CTRL_WORDS_PER_RANK * (size_t)ctx->size * sizeof(uint64_t);
    void *addr;
    int rc = local_rc;
    if (rc == RMX_OK && (rc = rmx_ucx_mem_map(&ctx->ucx, NULL, ctx->ctrl_len, &ctx->ctrl_memh,
                                              &addr)) == RMX_OK) {
        ctx->ctrl = addr;
        memset(ctx->ctrl, 0, ctx->ctrl_len);
    }
    ctx->ctrl_remote = calloc((size_t)ctx->size, sizeof(*ctx->ctrl_remote));
    ctx->images_sent = calloc((size_t)ctx->size, sizeof(*ctx->images_sent));
    if (rc == RMX_OK && (ctx->ctrl_remote == NULL || ctx->images_sent == NULL))
        rc = RMX_ERR_NOMEM;
    /* The window exchange area travels with it (exchange.c): one bootstrap exchange for both.
     * Whether there is one depends on the job's size alone, so every rank whose part exists
     * publishes the same number of regions (a failed one publishes only its status). */
    rmx_region_t blocks[2] = {{ctx->ctrl_memh, ctx->ctrl, ctx->ctrl_len, ctx->ctrl_remote, NULL}};
    int rc2 = rc == RMX_OK ? rmx_xchg_area_map(ctx, &blocks[1]) : RMX_OK;
    rc = rc != RMX_OK ? rc : rc2;
    int n = blocks[1].memh != NULL ? 2 : 1;
    /* Every control block is zeroed before anyone may bump a counter in it: the exchange's
     * agreement is the barrier. */
    rc = rmx_exchange_regions(ctx, rc, blocks, n);
    if (rc == RMX_OK && n == 2)
        rmx_xchg_area_check(ctx);
    return rc;
}

/* Atomics on mapped words may be CPU atomics only when no agent updates them any other way
 * (rmx.h, rmx_direct_t): when every rank has direct access on and maps every other rank's control
 * block, which is memory UCP allocated like rmx_win_allocate's.  Then all ranks are on this node
 * and UCX maps a region for every one of them or for none (it depends on how the region was
 * registered, not on who asks), so all use the same kind of atomic on every word.  Agreed over
 * UCP. */
static int agree_direct_atomics(rmx_ctx_t *ctx)
{
    int maps_all = ctx->direct;
    for (int r = 0; r < ctx->size; r++)
        if (r != ctx->rank && ctx->ctrl_remote[r].direct == NULL)
            maps_all = 0;
    int any_without;
    int rc = rmx_barrier_agree(ctx, maps_all ? RMX_OK : RMX_ERR_UNSUPPORTED, &any_without);
    ctx->direct_atomics = rc == RMX_OK && !any_without;
    return rc;
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

/* Tear down whatever init got to; safe on a partly built context.  finalizing: every rank is in
 * rmx_finalize (the control block exists), else init failed on every rank (it agrees).  Returns
 * RMX_ERR_TIMEOUT when a rank did not come to the end of finalize in time. */
static int release_context(rmx_ctx_t *ctx, int boot_open, int finalizing)
{
    int rc = RMX_OK;
    if (ctx->tracker != NULL)
        rmx_tracker_destroy(ctx);
    free(ctx->sub_memo);
    ctx->sub_memo = NULL;
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
        /* Nobody may destroy its worker while a peer still flushes its endpoint to it.  At
         * finalize the ranks wait for each other over UCP, never through the bootstrap: its
         * collectives (a PMIx fence, an embedding runtime's barrier) wait for ever for a rank
         * that died, and under mpirun's recovery the survivors did. */
        if (finalizing && ctx->ctrl_remote != NULL)
            rc = rmx_close_barrier(ctx);
        else if (boot_open)
            (void)ctx->boot.barrier(&ctx->boot);
    }
    if (ctx->ctrl_remote != NULL)
        rmx_remote_release(ctx, ctx->ctrl_remote);
    if (ctx->xchg_remote != NULL)
        rmx_remote_release(ctx, ctx->xchg_remote);
    free(ctx->xchg_remote);
    free(ctx->xchg_agreed);
    ctx->xchg_remote = NULL;
    ctx->xchg_agreed = NULL;
    free(ctx->ctrl_remote);
    free(ctx->images_sent);
    ctx->ctrl_remote = NULL;
    ctx->images_sent = NULL;
    /* Force-close: a graceful close over tcp would wait for a peer that may be gone already. */
    for (int r = 0; ctx->peers != NULL && r < ctx->size; r++) {
        if (ctx->peers[r].ep != NULL)
            rmx_ucx_ep_close(&ctx->ucx, ctx->peers[r].ep, 0);
        if (ctx->peers[r].dead_ep != NULL)
            rmx_ucx_ep_close(&ctx->ucx, ctx->peers[r].dead_ep, 0);
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
    free(ctx->peer_addrs);
    ctx->peer_addrs = NULL;
    if (ctx->ctrl_memh != NULL)
        rmx_ucx_mem_unmap(&ctx->ucx, ctx->ctrl_memh);
    if (ctx->xchg_memh != NULL) /* like the control block: peers may write it until now */
        rmx_ucx_mem_unmap(&ctx->ucx, ctx->xchg_memh);
    ctx->ctrl_memh = ctx->xchg_memh = NULL;
    ctx->xchg = NULL;
    pthread_mutex_lock(&process_lock);
    rmx_ucx_close(&ctx->ucx);
    pthread_mutex_unlock(&process_lock);
    if (boot_open)
        ctx->boot.fini(&ctx->boot);
    return rc;
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
    if (rmx_log_open(&ctx->log, ctx->cfg.log_level) != RMX_OK) {
        (void)bad_field("log_level", "is not an rmx_log_level_t (or RMX_LOG is bad)");
        free(ctx);
        return RMX_ERR_ARG;
    }
    if (resolve_config(&ctx->cfg) != RMX_OK) {
        free(ctx);
        return RMX_ERR_ARG;
    }
    ctx->owner = pthread_self();
    ctx->mt = ctx->cfg.threads == RMX_THREAD_MULTIPLE;
    if (ctx->mt)
        pthread_mutex_init(&ctx->mt_lock, NULL);
    ctx->direct = ctx->cfg.direct == RMX_DIRECT_ON;

    int rc = open_bootstrap(ctx);
    if (rc != RMX_OK) {
        free(ctx);
        return rc == RMX_ERR_ARG ? RMX_ERR_ARG : RMX_ERR_BOOTSTRAP;
    }
    ctx->rank = ctx->boot.rank;
    ctx->size = ctx->boot.size;
    ctx->log.rank = ctx->rank;

    pthread_mutex_lock(&process_lock);
    rc = rmx_topo_load();
    if (rc == RMX_OK) /* before the worker exists; resolves cfg.bind (RMX_BIND) for the report */
        rc = rmx_topo_bind(&ctx->cfg.bind, ctx->boot.local_rank, &ctx->log);
    if (rc == RMX_OK)
        rc = rmx_ucx_open(&ctx->ucx, ctx->cfg.peer_timeout_s, ctx->mt, &ctx->log);
    pthread_mutex_unlock(&process_lock);
    if (rc == RMX_OK)
        rc = connect_peers(ctx);
    if (rc == RMX_OK)
        rc = start_progress(ctx);
    if (rc == RMX_OK)
        rc = rmx_tracker_create(ctx);
    if (ctx->peers != NULL) /* every rank got this far: the last step agrees for all */
        rc = create_control_block(ctx, rc);
    if (rc == RMX_OK)
        rc = agree_direct_atomics(ctx);
    if (rc != RMX_OK) {
        (void)release_context(ctx, 1, 0);
        free(ctx);
        return rc;
    }
    ctx->magic = RMX_CTX_MAGIC;
    if (rmx_log_on(&ctx->log, RMX_LOG_INFO))
        rmx_log_init_report(ctx);
    *out = ctx;
    return RMX_OK;
}

int rmx_finalize(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    /* Another thread inside a call: refused at once, not once that call let go of the lock (it
     * may hold it while it waits for a peer: rmx_collective_check). */
    if (rc == RMX_MT_LOCK && __atomic_load_n(&ctx->mt_inside, __ATOMIC_RELAXED) > 0)
        return RMX_ERR_THREAD;
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_finalize(ctx));
    /* RMX_THREAD_MULTIPLE: not under another thread's feet (rmx.h, Threads); once begun, every
     * new call (also from a thread let in while this one waits below) is RMX_ERR_CTX. */
    if (ctx->mt) { /* this thread holds the lock */
        if (ctx->mt_inside > 1)
            return RMX_ERR_THREAD;
        ctx->mt_closing = 1;
    }
    rmx_streams_free_all(ctx); /* their operations complete like the context's */
    /* Every rank's operations complete, and every rank stops accessing, before memory goes:
     * Fortran's normal termination, where an image's data stay reachable until all images
     * have initiated it.  Not a sync_all: ranks still in one learn that this one stopped. */
    /* A lock this rank still holds is released first: a rank waiting for it would never come
     * to its own rmx_finalize, which rmx_terminate waits for. */
    for (rmx_win_t *w = ctx->wins; w != NULL; w = w->next)
        (void)rmx_win_unlock_all_held(w);
    rc = rmx_terminate(ctx);
    while (ctx->wins != NULL) {
        int rc2 = rmx_win_release(ctx->wins, rc == RMX_OK ? RMX_WIN_ALL_DONE
                                                           : RMX_WIN_OTHERS_UNKNOWN);
        if (rc == RMX_OK)
            rc = rc2;
    }
    int rc3 = release_context(ctx, 1, 1);
    rmx_bury(ctx, &ctx->magic);
    return rc != RMX_OK ? rc : rc3;
}
