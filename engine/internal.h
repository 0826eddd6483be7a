/*
 * internal.h — the engine's shared state: the context, windows, and the checks every entry point
 * runs before touching the wire.  Modules: context.c (init/finalize), exchange.c (variable-length
 * allgather), window.c, rma.c (put/get), tracker.c (segments), sync.c (barrier, sync_images),
 * rmw.c, lock.c, subarray.c, stats.c, errors.c.
 */
#ifndef RMX_INTERNAL_H
#define RMX_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "../api/rmx.h"
#include "../transports/boot.h"
#include "../transports/ucx.h"
#include "copy.h"
#include "log.h"

#define RMX_CTX_MAGIC  0x524d5843u /* "RMXC" */
#define RMX_WIN_MAGIC  0x524d5857u /* "RMXW" */
#define RMX_DEAD_MAGIC 0xdeadbeefu

#define RMX_DEFAULT_TIMEOUT_S    10.0
#define RMX_DEFAULT_COALESCE_MAX 4096

/* Where a peer's memory is: the address there, its size, our unpacked rkey for it, and its
 * address in this process when UCX maps it here (shared memory: UCP operations complete in
 * place).  direct: that address when this rank may also reach it with loads and stores itself
 * (rmx_direct_t; ctx->direct), else NULL. */
typedef struct rmx_remote {
    uint64_t addr;
    size_t size;
    ucp_rkey_h rkey;
    void *ptr;              /* the window part mapped here by UCX (ucp_rkey_ptr), else NULL */
    unsigned char *direct;  /* ptr when rmx copies to it itself (rmx_direct_t), else NULL */
    /* A UCP put to it is complete at the target when it returns: UCX maps it here and the
     * endpoint's puts are copies (rmx_ucx_ep_rma_mapped).  The tracker keeps nothing pending for
     * such puts: no flush, fence or flow wait ever waits for them (engine/tracker.c). */
    int lands;
    /* A fetching UCP atomic to it answers in place, over UCP's own RMA: UCX maps it here (ptr),
     * rmx does not (no direct: no CPU atomics either), no active-message route.  The facts
     * rmw.c's UCP route needs, in one load (it tested four, 0.5 ns). */
    int ucp_amo_in_place;
} rmx_remote_t;

struct rmx_ctx;
typedef struct rmx_peer {
    ucp_ep_h ep;            /* NULL once its peer failed (rmx_peers_reap) */
    /* Where UCX would serve RMA to the peer in software (tcp), rmx's active-message route
     * (transports/am_rma.c); NULL: UCP RMA (shared memory, self). */
    rmx_am_peer_t *am;
    ucp_ep_h dead_ep;       /* then the endpoint, closed at finalize */
    int failed;             /* set by the endpoint error handler; later calls get RMX_ERR_PEER */
    int rma_mapped;         /* rmx_ucx_ep_rma_mapped(ep): 1, 0, or -1 not asked yet */
    struct rmx_ctx *ctx;    /* for the error handler, which gets only this peer */
} rmx_peer_t;

/*
 * The control block every rank exposes (UCP-allocated, one per context): counters that remote
 * ranks bump with atomics so that sync_all and sync_images need no target-side activity.
 */
#define RMX_BARRIER_ROUNDS 32
typedef struct rmx_ctrl {
    uint64_t barrier[RMX_BARRIER_ROUNDS]; /* dissemination round k: notifications received   */
    uint64_t term[RMX_BARRIER_ROUNDS];    /* the same for finalize's termination barrier     */
    /* [0, size): images[r], sync_images notifications from rank r; [size, 2 size): stopped[r],
     * nonzero once rank r has begun rmx_finalize (rmx_ctrl_stopped); [2 size, 3 size):
     * closing[r], nonzero once rank r is done with every request (rmx_close_barrier);
     * [3 size, 4 size): failed[r], nonzero once rank r has announced that it fails (rmx_fail):
     * 1 + the barriers it completed, as for stopped[r] */
    uint64_t images[];
} rmx_ctrl_t;
#define RMX_CTRL_WORDS_PER_RANK 4

/* Byte offset of stopped[r] in a control block of `size` ranks: where a stopping rank writes. */
static inline size_t rmx_ctrl_stopped_offset(int size, int r)
{
    return offsetof(rmx_ctrl_t, images) + ((size_t)size + (size_t)r) * sizeof(uint64_t);
}

static inline volatile uint64_t *rmx_ctrl_stopped(rmx_ctrl_t *c, int size, int r)
{
    return (volatile uint64_t *)((char *)c + rmx_ctrl_stopped_offset(size, r));
}

static inline size_t rmx_ctrl_closing_offset(int size, int r)
{
    return offsetof(rmx_ctrl_t, images) + (2 * (size_t)size + (size_t)r) * sizeof(uint64_t);
}

static inline size_t rmx_ctrl_failed_offset(int size, int r)
{
    return offsetof(rmx_ctrl_t, images) + (3 * (size_t)size + (size_t)r) * sizeof(uint64_t);
}

struct rmx_tracker; /* engine/tracker.c */

struct rmx_ctx {
    uint32_t magic;
    int rank, size;
    pthread_t owner;
    rmx_config_t cfg;
    rmx_boot_t boot;
    rmx_ucx_t ucx;
    rmx_peer_t *peers;              /* [size] */
    int unreaped;                   /* peers failed whose endpoint is not closed yet */

    ucp_mem_h ctrl_memh;
    rmx_ctrl_t *ctrl;               /* local control block */
    size_t ctrl_len;
    rmx_remote_t *ctrl_remote;      /* [size] */
    uint64_t barrier_epoch;         /* UCP barriers begun (sync_all, window free) */
    uint64_t barriers_done;         /* of those, completed (announced when this rank stops) */
    uint16_t barrier_flags[RMX_BARRIER_ROUNDS][2]; /* failure flags seen per round (sync.c) */
    uint64_t term_epoch;            /* termination barriers (one per finalize) */
    uint64_t *images_sent;          /* [size] sync_images notifications sent to each rank */

    /* exchange.c: the area window creation exchanges its blobs through, over rmx's own
     * endpoints (every rank exposes one; NULL: the bootstrap carries them instead) */
    ucp_mem_h xchg_memh;
    void *xchg;
    size_t xchg_len;
    rmx_remote_t *xchg_remote;      /* [size] */
    size_t xchg_slot;               /* bytes per rank and bank */
    uint64_t xchg_rounds[2];        /* exchanges begun per bank (epoch parity) */
    uint64_t *xchg_agreed;          /* [size] the agreement word last seen from each rank */
    uint64_t xchg_locks_used;       /* windows' lock regions in the area: bit i, region i taken */
    unsigned xchg_lock_next;        /* where the search for a free one starts (round robin) */

    struct rmx_win *wins;           /* open windows (finalize frees them) */
    /* Mappings of windows whose collective free failed (a rank died): a survivor that has not
     * freed the window yet may still reach them, and over tcp the target serves its gets and
     * puts from that memory, so it stays mapped until no endpoint is left (context.c). */
    ucp_mem_h *orphans;
    int n_orphans;
    struct rmx_tracker *tracker;
    struct rmx_sub_memo *sub_memo;  /* [2] the last local and remote section layouts (NULL
                                     * until the first section call; subarray_rma.c) */
    int direct;                     /* copies to and from mapped peers (cfg.direct on) */
    int direct_atomics;             /* and CPU atomics on them: agreed by every rank at init */
    rmx_stats_t stats;
    int locks_unsettled;            /* lock_held entries RMX_HELD_UNSETTLED, at most (lock.c) */
    rmx_logger_t log;               /* RMX_LOG (log.h): level, rank, time of init */
    /* RMX_THREAD_MULTIPLE (rmx.h): every entry point holds `mt_lock` (RMX_MT_RETRY); waits on
     * other ranks let it go between polls (rmx_ctx_yield).  All below under the lock. */
    int mt;                         /* cfg.threads == RMX_THREAD_MULTIPLE */
    pthread_mutex_t mt_lock;        /* never destroyed: the handle outlives finalize (rmx_bury) */
    int mt_inside;                  /* threads inside an entry point (waiters that yielded too) */
    int mt_collective;              /* a collective call is running on some thread */
    int mt_closing;                 /* rmx_finalize has begun: every new call is RMX_ERR_CTX */
    /* Streams (stream.c).  A stream is a context of its own for the data path: its own worker,
     * endpoints, tracker, stats and owner thread (mt 0), with the job's rank, size, config and
     * direct settings; `parent` names the context it was made from (NULL: this is one).  The
     * parent keeps every peer's address to connect streams to, and its streams (finalize frees
     * them); a stream keeps the windows bound to it. */
    struct rmx_ctx *parent;
    struct rmx_ctx *streams;        /* parent: its streams */
    struct rmx_ctx *stream_pool;    /* parent: freed streams kept for reuse, endpoints wired */
    struct rmx_ctx *next_stream;    /* a stream: the next of its parent's */
    struct rmx_win *bound;          /* a stream: windows bound to it (rmx_win_bind) */
    void *peer_addrs;               /* parent: every rank's service worker address */
    size_t peer_addr_stride;        /* (rmx_exchange's layout) */
};

struct rmx_win {
    uint32_t magic;
    rmx_ctx_t *ctx;
    struct rmx_win *next;           /* in ctx->wins */
    void *base;
    size_t size;
    int allocated;                  /* 1: rmx owns the memory (rmx_win_allocate) */
    void *pages;                    /* rmx_win_allocate under RMX_WIN_MEMORY_USER: our mmap */
    size_t pages_len;
    ucp_mem_h memh;                 /* NULL for a zero-length window */
    rmx_remote_t *remote;           /* [ctx->size] each rank's part */
    /* lock.c: a lock region per rank (the word, then a slot per origin), and what this rank
     * holds at each target */
    ucp_mem_h lock_memh;            /* NULL when the region is one of the exchange area's */
    int lock_area_slot;             /* that region's number, or -1 */
    uint64_t *lock_word;
    rmx_remote_t *lock_remote;      /* [ctx->size] */
    uint8_t *lock_held;             /* [ctx->size] 0, RMX_LOCK_EXCLUSIVE or RMX_LOCK_SHARED,
                                     * with the RMX_HELD_* bits (lock.c) */
    int mt_closing;                 /* RMX_THREAD_MULTIPLE: rmx_win_free is under way */
    /* Streams (stream.c): a window's packed rkeys, [ctx->size], each a uint64_t length and the
     * bytes (NULL for an empty part), for binding it; how many handles are bound to it (atomic:
     * streams' threads unbind).  A handle bound to a stream: `parent` the window, ctx the
     * stream, remote[] its own rkeys, no lock state (locks go to the parent, lock.c), and
     * `next_bound` in the stream's list. */
    void **rkeys_packed;
    int n_bound;
    struct rmx_win *parent;
    struct rmx_win *next_bound;
};

/* Bits of rmx_win.lock_held[] beside the lock type (lock.c). */
#define RMX_HELD_NOCHECK  0x80      /* no word was taken (RMX_MODE_NOCHECK) */
#define RMX_HELD_PENDING  0x40      /* being acquired: its back-off lets other threads in */
#define RMX_HELD_IMPLICIT 0x20      /* an rmw's implicit epoch (RMX_MODE_PASSIVE_EPOCH_IMPLICIT) */
#define RMX_HELD_UNSETTLED 0x10     /* no epoch: an acquisition timed out, its leftovers are given
                                     * back at the next lock/unlock/free (lock.c) */
#define RMX_HELD_TYPE(h)  ((h) & 0x3)

/* lock.c: an rmw's implicit exclusive epoch on target, from inside rmx_rmw/rmx_rmw2 (which hold
 * the context).  At RMX_THREAD_MULTIPLE it first waits out another thread's implicit epoch on
 * the same target; an explicit one is RMX_ERR_EPOCH, as the nesting rule says. */
int rmx_win_lock_implicit(rmx_win_t *win, int target);
int rmx_win_unlock_implicit(rmx_win_t *win, int target);
/* Give back what timed-out acquisitions on win may have taken (lock.c, "After a timeout");
 * RMX_ERR_TIMEOUT while a target is still silent (rmx_win_free). */
int rmx_win_settle_locks(rmx_win_t *win);
/* rmx_win_settle_locks on every window of ctx, and count what is left (ctx->locks_unsettled). */
void rmx_settle_all_locks(rmx_ctx_t *ctx);
/* That, and release every lock this rank holds on win (rmx_finalize: a rank waiting for one
 * would never come to its own finalize). */
int rmx_win_unlock_all_held(rmx_win_t *win);

/* Mark a released handle dead and keep its memory, so later use is detected (context.c). */
void rmx_bury(void *handle, uint32_t *magic);

/* ---- validation, run by every entry point before anything is sent */
/* This thread's pthread_self(), fetched once per thread: pthread_self() is a call through the
 * PLT, and with the out-of-line check around it it was a large part of rmx_put's overhead over
 * a raw ucp_put_nbx (perf/rmx_perf --test put_rate --sizes 8).  initial-exec: a %fs-relative
 * load, also in librmx.so. */
extern __thread pthread_t rmx_self_tid __attribute__((tls_model("initial-exec")));
extern __thread int rmx_self_known __attribute__((tls_model("initial-exec")));

static inline pthread_t rmx_self_thread(void)
{
    if (__builtin_expect(!rmx_self_known, 0)) {
        rmx_self_tid = pthread_self();
        rmx_self_known = 1;
    }
    return rmx_self_tid;
}

/* Retire the endpoints of failed peers: no call uses them again (peer.ep NULL); they are closed at
 * finalize (peer.dead_ep).  Run at the start of an entry point (rmx_ctx_check), never inside one:
 * the failure is noticed inside progress, where the endpoint may still be in use by the call
 * under way.  Not closed now: force-closing a failed endpoint mid-job left UCX 1.13's count of
 * the interfaces' users wrong, and the shared-memory interface a live peer's answers arrive on
 * was no longer progressed (peer/dies_during_put_subs_shm under RMX_WIN_MEMORY=user, 1 run in
 * 2; 0 in 12 since). */
void rmx_peers_reap(rmx_ctx_t *ctx);

/*
 * Entry: every public call on a context or window begins with its check, and hands any failure
 * to RMX_MT_RETRY with a call of itself:
 *     int rc = rmx_ctx_check(ctx);                 (or rmx_win_check(win))
 *     if (rc != RMX_OK)
 *         return RMX_MT_RETRY(rc, ctx, rmx_xxx(ctx, ...));
 * At RMX_THREAD_SINGLE the check is the owner check and RMX_MT_RETRY returns rc: one more branch,
 * on ctx->mt, is all the fast path pays (no state crosses the body, so its returns cost
 * nothing).  At RMX_THREAD_MULTIPLE a thread that does not hold the context's lock gets
 * RMX_MT_LOCK from the check, and RMX_MT_RETRY takes the lock, makes the call again (which now
 * passes its check: this thread holds it), and lets the lock go.  One body per call, and calls
 * made from inside others on the same thread (rmw's implicit epoch calls rmx_win_lock, sections
 * call rmx_put_sub) pass through, as the lock is theirs already.
 */
#define RMX_MT_LOCK 1   /* internal: "take the lock and call again"; never returned to a caller */

/* The context whose lock this thread holds (at most one: entry points do not cross contexts),
 * and whether this thread's call holding it is a collective (rmx_collective_enter). */
extern __thread rmx_ctx_t *rmx_mt_held __attribute__((tls_model("initial-exec")));
extern __thread int rmx_mt_collective_mine __attribute__((tls_model("initial-exec")));

/* Take ctx's lock (RMX_OK, or RMX_ERR_CTX when the context was finalized or is being finalized
 * meanwhile: the lock is held either way), and let it go returning rc (context.c). */
int rmx_mt_lock(rmx_ctx_t *ctx);
int rmx_mt_unlock_ret(rmx_ctx_t *ctx, int rc);
#define RMX_MT_RETRY(rc, ctx, call)                                                             \
    (__builtin_expect((rc) != RMX_MT_LOCK, 1)                                                   \
         ? (rc)                                                                                 \
         : rmx_mt_unlock_ret((ctx), rmx_mt_lock(ctx) == RMX_OK ? (call) : RMX_ERR_CTX))

/* Context alive and this thread let in (the owner; at RMX_THREAD_MULTIPLE the holder of the lock,
 * else RMX_MT_LOCK); failed peers' endpoints reaped. */
static inline int rmx_ctx_check(rmx_ctx_t *ctx)
{
    if (ctx == NULL || ctx->magic != RMX_CTX_MAGIC)
        return RMX_ERR_CTX;
    if (__builtin_expect(ctx->mt, 0)) {
        if (rmx_mt_held != ctx)
            return RMX_MT_LOCK;
        if (ctx->mt_closing)
            return RMX_ERR_CTX; /* let in while rmx_finalize waits */
    } else if (!pthread_equal(ctx->owner, rmx_self_thread())) {
        return RMX_ERR_THREAD;
    }
    if (__builtin_expect(ctx->unreaped, 0))
        rmx_peers_reap(ctx);
    return RMX_OK;
}

/* rmx_win_check's RMX_OK without calling anything: false also where the check would have work
 * to do first (peers to reap, this thread's id not fetched yet).  A fast path that calls nothing
 * saves fewer registers: with it (and rmw.c's direct route) rmx_rmw's direct fetch-add costs
 * ~2 ns beside the CPU atomic's 7, against 3.5 before (perf/rmx_perf fadd, fadd_cpu).  Where it
 * is false, the entry point's checked path runs, does that work and reports any error. */
static inline int rmx_win_ready(const rmx_win_t *win)
{
    if (win == NULL || win->magic != RMX_WIN_MAGIC)
        return 0;
    const rmx_ctx_t *ctx = win->ctx; /* set before the window's magic */
    if (ctx->magic != RMX_CTX_MAGIC)
        return 0;
    if (__builtin_expect(ctx->mt | ctx->unreaped, 0))
        return !ctx->unreaped && rmx_mt_held == ctx && !ctx->mt_closing && !win->mt_closing;
    /* rmx_self_tid is 0 until fetched, and no thread's id is 0 (glibc and musl: a pointer), so an
     * unfetched id is simply not the owner: the checked path fetches it.  Not testing
     * rmx_self_known too saves the direct fetch-add a TLS load and a branch. */
    return pthread_equal(ctx->owner, rmx_self_tid);
}

static inline int rmx_win_check(rmx_win_t *win)
{
    if (win == NULL || win->magic != RMX_WIN_MAGIC)
        return RMX_ERR_WIN;
    int rc = rmx_ctx_check(win->ctx);
    /* RMX_THREAD_MULTIPLE: another thread may be freeing it (its barrier lets others in) */
    if (rc == RMX_OK && __builtin_expect(win->ctx->mt, 0) && win->mt_closing)
        return RMX_ERR_WIN;
    return rc;
}

/* RMX_THREAD_MULTIPLE, read without the lock: some thread is inside a collective call. */
static inline int rmx_mt_in_collective(const rmx_ctx_t *ctx)
{
    return __atomic_load_n(&ctx->mt_collective, __ATOMIC_RELAXED);
}

/* A collective call (rmx.h, Threads): at RMX_THREAD_MULTIPLE one at a time per rank, another
 * thread's is RMX_ERR_THREAD; the mark goes when the lock does (rmx_mt_unlock_ret).  Call once
 * the check passed. */
static inline int rmx_collective_enter(rmx_ctx_t *ctx)
{
    if (!ctx->mt)
        return RMX_OK;
    if (rmx_mt_in_collective(ctx))
        return RMX_ERR_THREAD;
    __atomic_store_n(&ctx->mt_collective, 1, __ATOMIC_RELAXED);
    rmx_mt_collective_mine = 1;
    return RMX_OK;
}

/* A collective's check result check_rc, or RMX_ERR_THREAD when this thread is not let in yet
 * (RMX_MT_LOCK) and another thread is inside a collective, learned without the lock: that one may
 * hold the lock while it waits for a peer (a flush over tcp that only the peer's progress
 * answers, under RMX_PROGRESS=none), and this one would block until it ended, then run as a
 * collective the other ranks never call. */
static inline int rmx_collective_refused(const rmx_ctx_t *ctx, int check_rc)
{
    return check_rc == RMX_MT_LOCK && rmx_mt_in_collective(ctx) ? RMX_ERR_THREAD : check_rc;
}

/* The checks a collective entry point begins with: rmx_ctx_check, then rmx_collective_enter. */
static inline int rmx_collective_check(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    return rc == RMX_OK ? rmx_collective_enter(ctx) : rmx_collective_refused(ctx, rc);
}

/* A wait on other ranks, between two polls: at RMX_THREAD_MULTIPLE let the rank's other threads
 * in (their work may be what the other ranks wait for), else just give the core away.  Whatever
 * the caller keeps across it must not be what another thread's call may change. */
void rmx_ctx_yield(rmx_ctx_t *ctx);

/* Target rank, then [disp, disp+len) inside its window. */
static inline int rmx_check_target(rmx_win_t *win, int target, size_t disp, size_t len)
{
    rmx_ctx_t *ctx = win->ctx;
    if (target < 0 || target >= ctx->size)
        return RMX_ERR_RANK;
    if (ctx->peers[target].failed)
        return RMX_ERR_PEER;
    size_t size = win->remote[target].size;
    if (disp > size || len > size - disp)
        return RMX_ERR_RANGE;
    return RMX_OK;
}

static inline ucp_ep_h rmx_ep(rmx_ctx_t *ctx, int target)
{
    return ctx->peers[target].ep;
}

static inline rmx_am_peer_t *rmx_am(rmx_ctx_t *ctx, int target)
{
    return ctx->peers[target].am;
}

static inline rmx_ucx_dest_t rmx_dest(rmx_ctx_t *ctx, int target)
{
    return (rmx_ucx_dest_t){.ep = ctx->peers[target].ep, .am = ctx->peers[target].am};
}

/* A transfer that may still have touched the caller's memory timed out, and the transport closed
 * the endpoint to stop it (rmx_ucx_put, in-place rmx_ucx_get): from here on the target is
 * unreachable for this rank, as if it had failed.  Returns rc. */
static inline int rmx_transfer_done(rmx_ctx_t *ctx, int target, int rc)
{
    if (__builtin_expect(rc == RMX_ERR_TIMEOUT, 0)) {
        ctx->peers[target].ep = NULL;
        ctx->peers[target].failed = 1;
    }
    return rc;
}

#define RMX_DIRECT_DOWN_MIN 2048 /* bytes: shorter copies lose little to aliasing (2 KiB: 14 ns) */
/* A copy to or from a peer's mapped window (rmx_direct_t).  Where the destination is 16..127
 * bytes ahead of the source modulo 4 KiB (not a multiple of 64), a forward copy's loads alias its
 * own stores and, at some physical placements, a 4 KiB copy takes 120 ns instead of 22: there
 * the copy runs downward (engine/copy.c), 33 ns.  Elsewhere memcpy, as fast or faster (a few
 * bytes behind, 8 bytes ahead: within 10% of the downward copy, measured here). */
static inline void rmx_direct_copy(void *dst, const void *src, size_t len)
{
    size_t ahead = ((uintptr_t)dst - (uintptr_t)src) & 4095;
    if (len >= RMX_DIRECT_DOWN_MIN && ahead >= 16 && ahead < 128 && ahead % 64 != 0)
        rmx_copy_down(dst, src, len);
    else
        memcpy(dst, src, len);
}

/* Blocking get of [disp, disp+len) of `remote` at target into dst: a copy where it is mapped
 * (rmx_direct_t), else one UCP get (rmx_ucx_get's landing rules). */
static inline int rmx_remote_get(rmx_ctx_t *ctx, const rmx_remote_t *remote, int target,
                                 void *dst, size_t len, size_t disp)
{
    if (remote->direct != NULL) {
        ctx->stats.direct_gets++;
        rmx_ucx_tick(&ctx->ucx); /* keepalive, as for puts (rma.h) */
        rmx_direct_copy(dst, remote->direct + disp, len);
        return RMX_OK;
    }
    ctx->stats.ucp_gets++;
    int in_place = remote->ptr != NULL;
    int rc = rmx_ucx_get(&ctx->ucx, rmx_ep(ctx, target), rmx_am(ctx, target), dst, len,
                         remote->addr + disp, remote->rkey, in_place);
    return in_place ? rmx_transfer_done(ctx, target, rc) : rc;
}

/* An element of 4 or 8 bytes as its bit pattern in the low bytes of a uint64_t, and back. */
static inline uint64_t rmx_bits_load(const void *p, size_t size)
{
    if (size == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline void rmx_bits_store(void *p, size_t size, uint64_t bits)
{
    if (size == 4) {
        uint32_t v = (uint32_t)bits;
        memcpy(p, &v, 4);
    } else {
        memcpy(p, &bits, 8);
    }
}

/* One CPU atomic on the mapped word w of 4 or 8 bytes, returning the word's old value: v the
 * operand (CSWAP: the comparand, `desired` the new value).  Sequentially consistent: it also
 * orders this rank's earlier direct stores before it, as a synchronization notification needs.
 * By value: through pointers (rmx_ucx_amo's operand and reply), the fast path kept the old
 * value in memory, and its direct fetch-add cost 1.3 ns more. */
#define RMX_CPU_AMO(bits)                                                                     \
    static inline __attribute__((always_inline)) uint##bits##_t rmx_cpu_amo##bits(           \
        uint##bits##_t *w, ucp_atomic_op_t op, uint##bits##_t v, uint##bits##_t desired)     \
    {                                                                                         \
        switch (op) {                                                                         \
        case UCP_ATOMIC_OP_ADD: return __atomic_fetch_add(w, v, __ATOMIC_SEQ_CST);            \
        case UCP_ATOMIC_OP_AND: return __atomic_fetch_and(w, v, __ATOMIC_SEQ_CST);            \
        case UCP_ATOMIC_OP_OR:  return __atomic_fetch_or(w, v, __ATOMIC_SEQ_CST);             \
        case UCP_ATOMIC_OP_XOR: return __atomic_fetch_xor(w, v, __ATOMIC_SEQ_CST);            \
        case UCP_ATOMIC_OP_SWAP: return __atomic_exchange_n(w, v, __ATOMIC_SEQ_CST);          \
        default: /* CSWAP */                                                                  \
            __atomic_compare_exchange_n(w, &v, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);\
            return v; /* the old value either way */                                          \
        }                                                                                     \
    }
RMX_CPU_AMO(32)
RMX_CPU_AMO(64)

/* Whether atomics on `remote` are CPU atomics (rmx_direct_t): no flush ever follows them. */
static inline int rmx_remote_amo_direct(const rmx_ctx_t *ctx, const rmx_remote_t *remote)
{
    return remote->direct != NULL && ctx->direct_atomics;
}

/* The CPU atomic of rmx_remote_amo on a mapped `remote` that has not failed, counted, on the
 * element of `size` (4 or 8) bytes at disp, its bits in the low bytes of value and desired (the
 * new value of a CSWAP); returns the old bits.  The caller ticks (rmx_ucx_tick, or, calling
 * nothing, tests rmx_ucx_tick_due and counts). */
static inline __attribute__((always_inline)) uint64_t
rmx_direct_amo(rmx_ctx_t *ctx, const rmx_remote_t *remote, ucp_atomic_op_t op, uint64_t value,
               uint64_t desired, size_t size, size_t disp)
{
    void *w = remote->direct + disp;
    uint64_t old = size == 4 ? rmx_cpu_amo32((uint32_t *)w, op, (uint32_t)value, (uint32_t)desired)
                             : rmx_cpu_amo64((uint64_t *)w, op, value, desired);
    ctx->stats.direct_amos++; /* after: a locked instruction waits for the stores before it */
    return old;
}

/* The UCP atomic of rmx_remote_amo, am the target's active-message route (rmx_am): a caller
 * that has seen it NULL passes the constant, and the route's branches fold away. */
static inline __attribute__((always_inline)) int
rmx_remote_amo_ucp(rmx_ctx_t *ctx, const rmx_remote_t *remote, int target, rmx_am_peer_t *am,
                   ucp_atomic_op_t op, const void *operand, void *reply, size_t size, size_t disp)
{
    int in_place = remote->ptr != NULL;
    ctx->stats.ucp_amos++;
    int rc = rmx_ucx_amo(&ctx->ucx, rmx_ep(ctx, target), am, op, operand, reply, size,
                         remote->addr + disp, remote->rkey, in_place);
    return reply != NULL && in_place ? rmx_transfer_done(ctx, target, rc) : rc;
}

/* One atomic on [disp, disp+size) of `remote` at target: a CPU atomic where that is coherent
 * (rmx_remote_amo_direct), else a native UCP one (rmx_ucx_amo's reply rules; a fetching one on
 * mapped memory that timed out has closed the endpoint, rmx_transfer_done). */
static inline __attribute__((always_inline)) int
rmx_remote_amo(rmx_ctx_t *ctx, const rmx_remote_t *remote, int target, ucp_atomic_op_t op,
               const void *operand, void *reply, size_t size, size_t disp)
{
    if (rmx_remote_amo_direct(ctx, remote)) {
        if (__builtin_expect(ctx->peers[target].failed, 0))
            return RMX_ERR_PEER; /* as a UCP atomic to it would: its memory is no one's now */
        rmx_ucx_tick(&ctx->ucx); /* keepalive, as for puts (rma.h) */
        uint64_t desired = op == UCP_ATOMIC_OP_CSWAP ? rmx_bits_load(reply, size) : 0;
        uint64_t old = rmx_direct_amo(ctx, remote, op, rmx_bits_load(operand, size), desired,
                                      size, disp);
        if (reply != NULL)
            rmx_bits_store(reply, size, old);
        return RMX_OK;
    }
    return rmx_remote_amo_ucp(ctx, remote, target, rmx_am(ctx, target), op, operand, reply, size,
                              disp);
}

/* The progress agent may be needed from now on (RMX_PROGRESS_AUTO): start it (context.c). */
int rmx_progress_needed(rmx_ctx_t *ctx);

/* ---- exchange.c: allgather of per-rank blobs of any length over the bootstrap */
/* On success *all points to a buffer of size*(*stride) bytes: rank r's blob at r*(*stride),
 * preceded by its length as a uint64_t.  Free with free(). */
int rmx_exchange(rmx_ctx_t *ctx, const void *blob, size_t len, void **all, size_t *stride);
static inline const void *rmx_exchange_blob(const void *all, size_t stride, int r, size_t *len)
{
    const char *p = (const char *)all + (size_t)r * stride;
    uint64_t l;
    memcpy(&l, p, sizeof(l));
    *len = (size_t)l;
    return p + sizeof(uint64_t);
}

/* Agreement over the bootstrap: every rank contributes its local status.  RMX_OK when all were
 * RMX_OK; this rank's own code when it failed; RMX_ERR_COLLECTIVE when only others did.  Every
 * rank calls it, whatever its local status: that is what lets all fail together. */
int rmx_agree(rmx_ctx_t *ctx, int local_rc);

/* A memory region every rank exposes: [addr, addr+len) mapped with memh (NULL when len is 0);
 * remote[size] receives every rank's. */
typedef struct rmx_region {
    ucp_mem_h memh;
    void *addr;
    size_t len;
    rmx_remote_t *remote;
    void **packed;      /* [size] to keep every rank's packed rkey in (rkeys_packed), or NULL */
} rmx_region_t;
#define RMX_REGIONS_MAX 4

/* Collective: publish n regions (one exchange for all) with this rank's status local_rc, and
 * agree.  When any rank's status or rkey unpacking failed, every rank returns an error (as
 * rmx_agree) with nothing unpacked; on RMX_OK every rank has every region, and peers may target
 * them (the agreement is the barrier). */
int rmx_exchange_regions(rmx_ctx_t *ctx, int local_rc, rmx_region_t *regions, int n);
void rmx_remote_release(rmx_ctx_t *ctx, rmx_remote_t *remote);

/* The exchange area of a context (exchange.c): mapped and zeroed into *region (its remote[]
 * array allocated too), for init to publish with the control block; RMX_OK with nothing mapped
 * when the job is too large for it (window creation then uses the bootstrap). */
int rmx_xchg_area_map(rmx_ctx_t *ctx, rmx_region_t *region);
/* After init's exchange published it: every rank's area is laid out alike, or no rank uses its
 * own (the same decision everywhere). */
void rmx_xchg_area_check(rmx_ctx_t *ctx);
/* A window's lock region (len bytes, zeroed) from the area, reached through the area's rkey
 * that every rank holds already: no mapping, no rkey to pack or unpack.  -1 when none is free
 * (or len too long, or no area): the window maps its own. */
int rmx_xchg_lock_take(rmx_ctx_t *ctx, size_t len, uint64_t **region);
/* Give it back; never (orphan) when peers may still reach it (a free that did not agree). */
void rmx_xchg_lock_give(rmx_ctx_t *ctx, int slot, int peers_may_still_access);
/* rmx_exchange_regions' contract, for a context that is up: one allgather over rmx's own
 * endpoints through the exchange area, then one UCP barrier that agrees (every rank could
 * unpack every rkey).  A dead or stopped rank ends it with RMX_ERR_PEER / RMX_ERR_STOPPED on
 * every other rank, never a hang.  A blob that does not fit its slot sends every rank through
 * the bootstrap's exchange for that window (all alike); so does a context without an area. */
int rmx_exchange_regions_live(rmx_ctx_t *ctx, int local_rc, rmx_region_t *regions, int n);
/* ---- tracker.c: segment bookkeeping (see DESIGN.md "Segments and the completion tracker") */
int rmx_tracker_create(rmx_ctx_t *ctx);
void rmx_tracker_destroy(rmx_ctx_t *ctx);
/* A put of [disp, disp+len) at target of win; src is reusable when this returns. */
int rmx_tracker_put(rmx_win_t *win, const void *src, size_t len, int target, size_t disp);
/* A caller-sent message writing only bytes of [lo, hi) of win at target, tracked as one put of
 * that range (tracker.c). */
int rmx_tracker_put_span(rmx_win_t *win, int target, size_t lo, size_t hi, int landed,
                         int (*send)(void *arg), void *arg);
/* Before a get (or an atomic) reads/updates [disp, disp+len) at target: resolve dependencies.
 * Call it through rmx_tracker_access (tracker.h), which decides the no-dependency case inline. */
int rmx_tracker_before_access(rmx_win_t *win, int target, size_t disp, size_t len);
/* Segment end: every outstanding operation complete at its target. target -1: all targets. */
int rmx_tracker_complete(rmx_ctx_t *ctx, int target);
/* A window is going away: nothing may remain pending against it. */
int rmx_tracker_forget_window(rmx_win_t *win);

/* ---- sync.c */
/* Barrier over UCP that also agrees: *any_failed is 1 on every rank when some rank's local_rc
 * was not RMX_OK.  Returns RMX_ERR_PEER / RMX_ERR_STOPPED when the barrier itself failed. */
int rmx_barrier_ucp(rmx_ctx_t *ctx, int local_rc, int *any_failed);
/* The same, not counted in stats.barriers (rmx's own agreements). */
int rmx_barrier_agree(rmx_ctx_t *ctx, int local_rc, int *any_failed);
/* A barrier that only establishes that every rank is there, alike on all (window creation, before
 * the bootstrap's exchange, which would wait for ever for a failed rank): RMX_ERR_PEER /
 * RMX_ERR_STOPPED otherwise.  Not counted in stats.barriers (the program's synchronizations). */
int rmx_barrier_presence(rmx_ctx_t *ctx);
/* finalize: tell every rank this one stopped, then wait until all have (engine/sync.c). */
int rmx_terminate(rmx_ctx_t *ctx);
/* finalize's last step, once every request of this rank has been answered: wait until every rank
 * believed alive is there too (or has failed), at most peer_timeout_s (RMX_ERR_TIMEOUT). */
int rmx_close_barrier(rmx_ctx_t *ctx);
/* Progress until *word >= value (word bumped by `peer`'s remote atomics); RMX_ERR_PEER if it
 * fails first, RMX_ERR_STOPPED if it begins rmx_finalize without having bumped it. */
int rmx_wait_word_geq_from(rmx_ctx_t *ctx, volatile uint64_t *word, uint64_t value, int peer);

/* ---- peers.c */
/* The endpoints of ctx (a context or a stream) to every rank, from its worker to the ranks'
 * service workers at addrs (rmx_exchange's layout), and to its own worker `own` for itself.
 * known: NULL for a context (every endpoint must be made); a stream's parent's peers: the ranks
 * failed there get none, and a rank no endpoint can be made to is failed too. */
int rmx_peers_connect(rmx_ctx_t *ctx, const void *addrs, size_t stride, const void *own,
                      const rmx_peer_t *known);
/* The peer failed (UCX's error callback, or a stream learning it from its parent): later calls
 * to it are RMX_ERR_PEER, its endpoint is retired at the next entry point (rmx_peers_reap), and
 * its active-message answers will never come.  Once per peer. */
void rmx_peer_failed(rmx_peer_t *p);
/* rem->rkey unpacked on rank r's endpoint: where UCX maps it here (rem->ptr), whether rmx copies
 * to it itself (rem->direct, with direct) and whether UCP puts to it land on return (rem->lands). */
void rmx_remote_map(rmx_ctx_t *ctx, int r, rmx_remote_t *rem, int direct);
/* Wire every remote endpoint of a stream up before it is used: a UCP flush of each, and over
 * rmx's active messages (tcp) a round trip reading 8 bytes at ping[r].addr (any address the peer
 * exposes).  UCX 1.13 aborts a process (an assertion in ucp_request_send_state_ff, removed
 * upstream by openucx/ucx#8175) when a peer dies while the handshake's reply to it is still
 * queued there; after the round trip it no longer is.  RMX_ERR_TIMEOUT, or the flush's error. */
int rmx_peers_wire_up(rmx_ctx_t *ctx, const rmx_remote_t *ping);
/* A stream's end: close its endpoints (graceful for live peers) and free the array. */
void rmx_peers_close(rmx_ctx_t *ctx);

/* ---- stream.c */
/* finalize: free the streams the program left (their threads done with them). */
void rmx_streams_free_all(rmx_ctx_t *ctx);
/* rmx_win_free of a bound handle: complete its stream's operations to it, release it. */
int rmx_win_unbind(rmx_win_t *bound);
/* The packed rkeys kept for binding (window.c frees them with the window). */
void rmx_rkeys_packed_free(rmx_ctx_t *ctx, void **packed);

/* ---- window.c */
/* Free a window (its operations completed first).  RMX_WIN_ALL_DONE: every rank has synchronized
 * already; RMX_WIN_OTHERS_UNKNOWN: that synchronization failed, so survivors may still reach the
 * memory (it stays mapped until the endpoints close). */
enum { RMX_WIN_ALL_DONE, RMX_WIN_OTHERS_UNKNOWN };
int rmx_win_release(rmx_win_t *win, int how);

#endif
