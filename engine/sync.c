/*
 * sync.c — image control: sync_memory (end the segment), sync_all (complete + barrier) and
 * sync_images (complete + pairwise notification).  The barrier and the notifications are remote
 * atomic increments of counters in the peers' control blocks, so they need no target-side thread:
 * the counters only grow, which makes every wait a simple "counter >= expected".
 */
#include <stddef.h>
#include <stdlib.h>
#include "tracker.h"

/* A stopping rank announces 1 + the number of sync_all barriers it completed (rmx_terminate):
 * it stopped before barrier `epoch` (1-based) if it completed fewer.  A rank that completed it
 * had every rank enter it, so that barrier still completes everywhere. */
static int stopped_before(rmx_ctx_t *ctx, int r, uint64_t epoch)
{
    uint64_t v = __atomic_load_n(rmx_ctrl_stopped(ctx->ctrl, ctx->size, r), __ATOMIC_ACQUIRE);
    return v != 0 && v - 1 < epoch;
}

/* Stops end a wait only for these (never in the termination barrier, where all stop). */
#define STOP_NEVER 0

/* What rank r announced when it failed on purpose (rmx_fail): 1 + the barriers it completed;
 * 0 if it did not. */
static uint64_t failure_word(rmx_ctx_t *ctx, int r)
{
    volatile uint64_t *w =
        (volatile uint64_t *)((char *)ctx->ctrl + rmx_ctrl_failed_offset(ctx->size, r));
    return r != ctx->rank ? __atomic_load_n(w, __ATOMIC_ACQUIRE) : 0;
}

static int failure_announced(rmx_ctx_t *ctx, int r)
{
    return failure_word(ctx, r) != 0;
}

/* Rank r failed on purpose after completing barrier `epoch` (1-based; a sync_all's or a window
 * creation's): every notification it owed that barrier was applied before it completed it, and
 * so before its announcement, so that barrier still completes without it (as for a stop).  Every
 * other wait (UINT64_MAX; STOP_NEVER: the termination barrier, which it never enters) needs it. */
static int failed_after(rmx_ctx_t *ctx, int r, uint64_t epoch)
{
    uint64_t v = failure_word(ctx, r);
    return v != 0 && epoch != STOP_NEVER && epoch != UINT64_MAX && v - 1 >= epoch;
}

/* Rank r: RMX_ERR_PEER if it failed, RMX_ERR_STOPPED if it stopped before barrier `epoch`
 * (UINT64_MAX: at all; STOP_NEVER: stops do not count), else RMX_OK.  A rank that announced its
 * failure (rmx_fail) is from then on a failed peer for every call, as if the transport had
 * reported it (its endpoint is left to that report or to finalize: the process may still be
 * there), except for a barrier it completed before (failed_after). */
static int rank_state(rmx_ctx_t *ctx, int r, uint64_t epoch)
{
    if (failure_announced(ctx, r)) {
        ctx->peers[r].failed = 1;
        return failed_after(ctx, r, epoch) ? RMX_OK : RMX_ERR_PEER;
    }
    if (ctx->peers[r].failed)
        return RMX_ERR_PEER;
    if (epoch != STOP_NEVER && r != ctx->rank && stopped_before(ctx, r, epoch))
        return RMX_ERR_STOPPED;
    return RMX_OK;
}

/* Why a wait on `peer` (< 0: on every rank, a collective) cannot end; a failure wins over a stop. */
static int wait_broken(rmx_ctx_t *ctx, int peer, uint64_t epoch)
{
    int lo = peer >= 0 ? peer : 0, hi = peer >= 0 ? peer + 1 : ctx->size;
    int rc = RMX_OK;
    for (int r = lo; r < hi && rc != RMX_ERR_PEER; r++) {
        int rc1 = rank_state(ctx, r, epoch);
        rc = rc1 != RMX_OK ? rc1 : rc;
    }
    return rc;
}

/* Progress until (*word & mask) >= value (the barrier's words carry flags above their count). */
static int wait_word_masked(rmx_ctx_t *ctx, volatile uint64_t *word, uint64_t value,
                            uint64_t mask, int peer, uint64_t epoch)
{
    unsigned work = 0;
    /* A slow peer is legitimate here (it may compute for minutes before its sync), so there is no
     * deadline: a dead one is noticed by UCX keepalive, which runs inside ucp_worker_progress and
     * asks the kernel, not the peer (its pid over shared memory, its socket over tcp), so a busy
     * peer is never mistaken for a dead one.  UCX_KEEPALIVE_INTERVAL is peer_timeout_s/4 (ucx.c).
     * Failures are looked for every 256 rounds or events, busy or idle (rmx_ucx_work_due says why). */
    while ((__atomic_load_n(word, __ATOMIC_ACQUIRE) & mask) < value) {
        unsigned events = rmx_ucx_progress(&ctx->ucx);
        if (rmx_ucx_work_due(&work, events, 256)) {
            int rc = wait_broken(ctx, peer, epoch);
            /* A rank notifies before it announces its stop, in order on one endpoint: once
             * the stop is visible, a notification it sent is too. */
            if (rc != RMX_OK && (__atomic_load_n(word, __ATOMIC_ACQUIRE) & mask) < value)
                return rc;
            if (events == 0)
                rmx_ctx_yield(ctx); /* other threads' work may be what the peer waits for */
        }
    }
    return RMX_OK;
}

static int wait_word(rmx_ctx_t *ctx, volatile uint64_t *word, uint64_t value, int peer,
                     uint64_t epoch)
{
    return wait_word_masked(ctx, word, value, UINT64_MAX, peer, epoch);
}

int rmx_wait_word_geq_from(rmx_ctx_t *ctx, volatile uint64_t *word, uint64_t value, int peer)
{
    return wait_word(ctx, word, value, peer, UINT64_MAX);
}

/* Add `value` to the counter at `offset` of target's control block.  Where the block is mapped
 * here (UCX shared memory) a fetching add, done in place: applied when it returns.  Elsewhere a
 * non-fetching one, complete at the origin only (where UCX serves it in software it may still
 * wait at the target), which whoever needs it applied flushes (notify_complete): a fetching one
 * could not be retried after a timeout without counting twice. */
static int notify_value(rmx_ctx_t *ctx, int target, size_t offset, uint64_t value)
{
    const rmx_remote_t *block = &ctx->ctrl_remote[target];
    uint64_t old;
    return rmx_remote_amo(ctx, block, target, UCP_ATOMIC_OP_ADD, &value,
                          block->ptr != NULL ? &old : NULL, sizeof(value), offset);
}

/* The notifications sent to targets[0..n) have been applied at their targets.  until_answered 0:
 * one flush at most (finalize's last step, where a peer may leave without answering). */
static int notify_complete(rmx_ctx_t *ctx, const int *targets, int n, int until_answered)
{
    /* Not counted in stats.flushes_ep, which counts the tracker's completions of data.  A
     * barrier round notifies one rank: no allocation for a few. */
    rmx_ucx_dest_t few[8];
    rmx_ucx_dest_t *dests = n <= 8 ? few : malloc((size_t)n * sizeof(*dests));
    if (dests == NULL)
        return RMX_ERR_NOMEM;
    int rc;
    /* Like every wait on another rank, no deadline: without the agent (RMX_PROGRESS=none) a
     * peer that is slow to reach its own sync answers late, and only a failure ends the wait
     * (a timed-out flush is released and issued again: it references no memory). */
    do {
        int k = 0;
        for (int i = 0; i < n; i++) {
            int t = targets[i];
            if (rmx_ep(ctx, t) != NULL && !ctx->peers[t].failed && /* failed: its wait says so */
                ctx->ctrl_remote[t].ptr == NULL)                   /* in place: applied */
                dests[k++] = rmx_dest(ctx, t);
        }
        rc = k == 0 ? RMX_OK : k == 1 ? rmx_ucx_flush_ep(&ctx->ucx, dests[0].ep, dests[0].am)
                                      : rmx_ucx_flush_eps(&ctx->ucx, dests, k);
        /* Between two flushes of a wait with no deadline, other threads get in
         * (RMX_THREAD_MULTIPLE): the peer may be waiting for their work before it serves. */
        if (rc == RMX_ERR_TIMEOUT && until_answered)
            rmx_ctx_yield(ctx);
    } while (rc == RMX_ERR_TIMEOUT && until_answered);
    if (dests != few)
        free(dests);
    return rc;
}

/*
 * Dissemination barrier on counters[RMX_BARRIER_ROUNDS] of every control block: in round k rank
 * i tells rank i+2^k, then waits to be told by i-2^k.  The notification also says whether the
 * teller knows of a rank that failed its local part of the collective call (*flag): after the
 * last round every rank has heard, through some chain, from every rank, so all agree.
 *
 * A counter's low 32 bits count notifications (one per barrier); a flagged notification also
 * adds 1 to a 16-bit field of flags.  A teller can be one barrier ahead of us (it may finish a
 * barrier, and begin the next, before we have seen its round), never two (the next one cannot
 * end without us), so even and odd barriers count flags in separate fields, and a field moves by
 * at most one per barrier of its parity.  flags_seen NULL: no flags (the termination barrier).
 */
#define COUNT_MASK UINT64_C(0xffffffff)
#define FLAG_SHIFT(epoch) (32 + 16 * (unsigned)((epoch) & 1))

static int barrier_on(rmx_ctx_t *ctx, size_t counters, uint64_t epoch, uint64_t stop_epoch,
                      uint16_t (*flags_seen)[2], int *flag)
{
    int rc = RMX_OK;
    volatile uint64_t *mine = (volatile uint64_t *)((char *)ctx->ctrl + counters);
    unsigned shift = FLAG_SHIFT(epoch);
    for (int k = 0, dist = 1; dist < ctx->size && rc == RMX_OK; k++, dist <<= 1) {
        int to = (ctx->rank + dist) % ctx->size;
        uint64_t value = 1 + (flags_seen != NULL && *flag ? UINT64_C(1) << shift : 0);
        rc = notify_value(ctx, to, counters + (size_t)k * sizeof(uint64_t), value);
        if (rc == RMX_OK)
            rc = notify_complete(ctx, &to, 1, 1);
        if (rc == RMX_ERR_PEER && failed_after(ctx, to, stop_epoch))
            rc = RMX_OK; /* it left after completing this barrier: it needs no word from us */
        if (rc == RMX_OK)
            rc = wait_word_masked(ctx, &mine[k], epoch & COUNT_MASK, COUNT_MASK, -1, stop_epoch);
        if (rc == RMX_OK && flags_seen != NULL) {
            uint16_t got = (uint16_t)(__atomic_load_n(&mine[k], __ATOMIC_ACQUIRE) >> shift);
            if (got != flags_seen[k][epoch & 1]) {
                flags_seen[k][epoch & 1] = got;
                *flag = 1;
            }
        }
    }
    return rc;
}

int rmx_barrier_agree(rmx_ctx_t *ctx, int local_rc, int *any_failed)
{
    uint64_t epoch = ++ctx->barrier_epoch;
    int flag = local_rc != RMX_OK;
    int rc = barrier_on(ctx, offsetof(rmx_ctrl_t, barrier), epoch, epoch, ctx->barrier_flags,
                        &flag);
    if (rc == RMX_OK)
        ctx->barriers_done++;
    *any_failed = flag;
    return rc;
}

int rmx_barrier_ucp(rmx_ctx_t *ctx, int local_rc, int *any_failed)
{
    int rc = rmx_barrier_agree(ctx, local_rc, any_failed);
    if (rc == RMX_OK)
        ctx->stats.barriers++;
    return rc;
}

int rmx_barrier_presence(rmx_ctx_t *ctx)
{
    int any_failed; /* the flags' bookkeeping per round stays the same on every rank */
    return rmx_barrier_agree(ctx, RMX_OK, &any_failed);
}

/* Add value at `offset` of the control block of every rank not known to have failed, then see
 * the adds applied (notify_complete's until_answered). */
static void notify_live_ranks(rmx_ctx_t *ctx, size_t offset, uint64_t value, int until_answered)
{
    int *told = malloc((size_t)ctx->size * sizeof(*told));
    int ntold = 0;
    for (int r = 0; r < ctx->size; r++)
        if (r != ctx->rank && !ctx->peers[r].failed && /* a failed one: its wait says so */
            notify_value(ctx, r, offset, value) == RMX_OK && told != NULL)
            told[ntold++] = r;
    if (told != NULL)
        (void)notify_complete(ctx, told, ntold, until_answered);
    free(told);
}

/* Every rank of ranks[0..n) (NULL: ranks 0..n-1) known to have failed said so itself
 * (rmx_fail). */
static int failures_announced_among(rmx_ctx_t *ctx, const int *ranks, int n)
{
    for (int i = 0; i < n; i++) {
        int r = ranks != NULL ? ranks[i] : i;
        if (ctx->peers[r].failed && !failure_announced(ctx, r))
            return 0;
    }
    return 1;
}

/* Every rank known to have failed said so itself (rmx_fail).  Then the failures are the
 * program's (Fortran FAIL IMAGE), every other rank is healthy and reaches this rank, and the
 * survivors may compute for any time before they stop.  A failure the transport reported may be
 * one-sided (an endpoint closed after a timeout: that rank may still count on our stop), so it
 * keeps finalize's deadline (rmx_close_barrier). */
static int only_announced_failures(rmx_ctx_t *ctx)
{
    return failures_announced_among(ctx, NULL, ctx->size);
}

/* The termination barrier broke on a failed rank: its chains of notifications no longer reach
 * everyone, but every live rank's stop announcement still reaches every other (notify_live_ranks),
 * so wait for those instead.  No deadline, as in any wait on a live rank (normal termination
 * waits for every image to initiate it); a rank failing meanwhile ends the wait for it. */
static void wait_live_ranks_stopped(rmx_ctx_t *ctx)
{
    for (int r = 0; r < ctx->size; r++) {
        volatile uint64_t *word = rmx_ctrl_stopped(ctx->ctrl, ctx->size, r);
        unsigned idle = 0;
        while (r != ctx->rank && __atomic_load_n(word, __ATOMIC_ACQUIRE) == 0 &&
               rank_state(ctx, r, STOP_NEVER) == RMX_OK) {
            if (rmx_ucx_progress(&ctx->ucx) != 0)
                continue;
            if ((++idle & 255) == 0)
                rmx_ctx_yield(ctx);
        }
    }
}

int rmx_terminate(rmx_ctx_t *ctx)
{
    int rc = rmx_tracker_complete(ctx, -1);
    /* Notifications already sent (a sync_images just before finalize) reach each peer before
     * the announcement: a waiter that sees the stop then sees them (wait_word). */
    (void)rmx_ucx_fence(&ctx->ucx);
    notify_live_ranks(ctx, rmx_ctrl_stopped_offset(ctx->size, ctx->rank), ctx->barriers_done + 1,
                      1);
    int no_flag = 0;
    int rc2 = barrier_on(ctx, offsetof(rmx_ctrl_t, term), ++ctx->term_epoch, STOP_NEVER, NULL,
                         &no_flag);
    if (rc2 == RMX_ERR_PEER && only_announced_failures(ctx))
        wait_live_ranks_stopped(ctx);
    return rc != RMX_OK ? rc : rc2;
}

int rmx_fail(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_fail(ctx));
    /* Announced as a stop is, with 1 + the barriers completed (failed_after): a barrier this rank
     * completed has all its notifications applied, so the others still complete it.  Once a
     * survivor's wait can see the mark, every notification sent before it (fence) is visible. */
    (void)rmx_ucx_fence(&ctx->ucx);
    notify_live_ranks(ctx, rmx_ctrl_failed_offset(ctx->size, ctx->rank), ctx->barriers_done + 1,
                      1);
    ctx->magic = RMX_DEAD_MAGIC; /* no further use; the memory stays, the process ends now */
    ctx->boot.fini(&ctx->boot);
    return RMX_OK;
}

int rmx_close_barrier(rmx_ctx_t *ctx)
{
    /* Every rank told, then every rank waited for: not a dissemination barrier, whose chains a
     * failed rank would break.  A failed rank is neither told nor waited for; one that fails
     * meanwhile ends the wait for it (keepalive); one that never comes ends it at the deadline. */
    /* One flush at most: a rank that saw our word may close before it answers (no harm). */
    notify_live_ranks(ctx, rmx_ctrl_closing_offset(ctx->size, ctx->rank), 1, 0);
    double deadline = rmx_now_s() + ctx->cfg.peer_timeout_s;
    for (int r = 0; r < ctx->size; r++) {
        volatile uint64_t *word =
            (volatile uint64_t *)((char *)ctx->ctrl + rmx_ctrl_closing_offset(ctx->size, r));
        unsigned work = 0;
        while (r != ctx->rank && !ctx->peers[r].failed &&
               __atomic_load_n(word, __ATOMIC_ACQUIRE) == 0) {
            unsigned events = rmx_ucx_progress(&ctx->ucx);
            if (rmx_ucx_work_due(&work, events, 256)) { /* busy or idle (rmx_ucx_work_due) */
                if (rmx_now_s() > deadline)
                    return RMX_ERR_TIMEOUT;
                if (events == 0)
                    rmx_ctx_yield(ctx);
            }
        }
    }
    return RMX_OK;
}

int rmx_peer_status(rmx_ctx_t *ctx, int rank)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_peer_status(ctx, rank));
    if (rank < 0 || rank >= ctx->size)
        return RMX_ERR_RANK;
    return rank_state(ctx, rank, UINT64_MAX);
}

int rmx_sync_memory(rmx_ctx_t *ctx)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_sync_memory(ctx));
    /* Also with nothing outstanding (every put direct, or none): `while (flag != v)
     * rmx_sync_memory(ctx);` is how a coarray program waits, and without the agent
     * (RMX_PROGRESS=none) this is where the flag arrives.  Once in RMX_UCX_QUIET_PROGRESS calls:
     * a progress call on every one cost more than a direct put and its completion together.
     * With something outstanding the completion progresses (or needed no progress at all). */
    /* Direct puts are plain stores: ordered before whatever synchronizes next (free on x86). */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (rmx_tracker_end_if_idle(ctx)) {
        rmx_ucx_tick(&ctx->ucx);
        return RMX_OK;
    }
    return rmx_tracker_complete(ctx, -1);
}

int rmx_sync_all(rmx_ctx_t *ctx)
{
    int rc = rmx_collective_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, rmx_sync_all(ctx));
    /* A lock that timed out may hold a word another rank waits for before it comes here: given
     * back first (lock.c, "After a timeout"; the sync waits for that target anyway). */
    if (ctx->locks_unsettled > 0)
        rmx_settle_all_locks(ctx);
    /* Agreed: when one rank's operations did not complete, every rank learns it. */
    rc = rmx_tracker_complete(ctx, -1);
    int any_failed;
    int rc2 = rmx_barrier_ucp(ctx, rc, &any_failed);
    if (rc2 != RMX_OK)
        return rc2;
    return rc != RMX_OK ? rc : any_failed ? RMX_ERR_COLLECTIVE : RMX_OK;
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
        return RMX_MT_RETRY(rc, ctx, rmx_sync_images(ctx, images, n));
    int all = images == NULL;
    if (all)
        n = ctx->size;
    else if ((rc = check_image_list(ctx, images, n)) != RMX_OK)
        return rc;
    /* A partner known to have failed is neither told nor waited for, and the call still
     * synchronizes with every live partner before it returns RMX_ERR_PEER (Fortran: the images
     * that have not failed synchronize).  So every survivor tells every other survivor exactly
     * once per call, whoever learnt of the failure first, and the counts stay matched. */
    int gone = RMX_OK;
    /* Complete every operation of this segment, not only those to the partners: segment order
     * is transitive (if we put to C, then sync with B, and B then syncs with C, C's next segment
     * follows ours and must see the put).  One that failed on a dead rank is that rank's loss. */
    rc = rmx_tracker_complete(ctx, -1);
    if (rc == RMX_ERR_PEER) {
        gone = RMX_ERR_PEER;
        rc = RMX_OK;
    }
    int *told = calloc((size_t)(n > 0 ? n : 1), sizeof(*told));
    /* The count each wait needs, taken now: at RMX_THREAD_MULTIPLE another thread's sync_images
     * may send the next notification while this one waits (it lets others in). */
    uint64_t *want = calloc((size_t)(n > 0 ? n : 1), sizeof(*want));
    if (told == NULL || want == NULL) {
        free(told);
        free(want);
        return RMX_ERR_NOMEM;
    }
    int ntold = 0;
    for (int i = 0; i < n && rc == RMX_OK; i++) {
        int peer = all ? i : images[i];
        if (peer == ctx->rank)
            continue;
        if (rank_state(ctx, peer, STOP_NEVER) == RMX_ERR_PEER) {
            gone = RMX_ERR_PEER;
            continue;
        }
        ctx->images_sent[peer]++;
        rc = notify_value(ctx, peer, offsetof(rmx_ctrl_t, images) +
                                         (size_t)ctx->rank * sizeof(uint64_t), 1);
        if (rc == RMX_ERR_PEER) { /* it failed just now: tell the others all the same */
            gone = RMX_ERR_PEER;
            rc = RMX_OK;
            continue;
        }
        want[ntold] = ctx->images_sent[peer];
        told[ntold++] = peer;
    }
    int rc2 = notify_complete(ctx, told, ntold, 1); /* all partners in one round trip */
    /* A partner that failed on purpose (rmx_fail, FAIL IMAGE) once its part of this sync was done
     * can be gone before it acknowledged our notification (its exit ends the connection): its
     * wait below says whether its part arrived.  Seen once over tcp, where the flush said
     * RMX_ERR_PEER and a survivor's SYNC ALL without STAT= ended the program. */
    if (rc2 == RMX_ERR_PEER && failures_announced_among(ctx, told, ntold))
        rc2 = RMX_OK;
    rc = rc != RMX_OK ? rc : rc2;
    /* Wait for each partner told; one that failed or stopped meanwhile does not end the wait
     * for the others (a failure is reported over a stop, as in every wait). */
    int stopped = RMX_OK;
    for (int i = 0; i < ntold && (rc == RMX_OK || rc == RMX_ERR_PEER); i++) {
        int peer = told[i];
        int rc3 = rmx_wait_word_geq_from(ctx, &ctx->ctrl->images[peer], want[i], peer);
        if (rc3 == RMX_ERR_PEER)
            gone = RMX_ERR_PEER;
        else if (rc3 == RMX_ERR_STOPPED)
            stopped = RMX_ERR_STOPPED;
        else if (rc3 != RMX_OK)
            rc = rc3;
    }
    free(told);
    free(want);
    if (rc == RMX_ERR_PEER)
        gone = RMX_ERR_PEER, rc = RMX_OK;
    return rc != RMX_OK ? rc : gone != RMX_OK ? gone : stopped;
}
