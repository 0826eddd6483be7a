/*
 * lock.c — passive-target locks (rmx_win_lock / rmx_win_unlock): one 64-bit lock word per rank
 * and window, taken and released with remote atomics only, so the target never has to progress.
 *
 * The word:   bits 44..63   the writer holding the lock: its rank + 1 (0: none)
 *             bits 22..43   writers waiting for it
 *             bits 0..21    readers holding it (plus readers momentarily trying)
 * The writer's rank is in the word so that a rank whose acquisition timed out can tell later
 * whether its CSWAP took the lock (see "After a timeout").  Hence at most 2^20 - 2 ranks.
 *
 * Exclusive: CSWAP 0 -> WRITER (the uncontended case, one atomic).  Otherwise announce yourself
 * as waiting (ADD WAITING), then wait until no writer and no reader holds the word and CSWAP
 * "waiting, free" -> "one fewer waiting, writer".
 * Shared: ADD 1; if the old word shows a writer holding *or waiting*, take the 1 back, wait until
 * neither is shown, and try again.
 *
 * Fairness: readers give way to waiting writers, so a stream of readers cannot starve a writer:
 * once a writer has announced itself, no new reader gets in and the readers inside drain.
 * Writers among themselves are not queued (whoever's CSWAP lands first wins, back-off spreads
 * them out), and a steady stream of writers can delay readers; both are bounded in practice by
 * the finite work of the holders, not guaranteed FIFO.
 *
 * Back-off: while the lock is contended the waiter re-reads the word after a delay that doubles
 * from 1 up to BACKOFF_MAX polls of the worker (progress keeps tcp and software-atomic peers
 * going) with a yield, so waiters do not saturate the target's cache line or the 2 cores.  Each
 * round counts in stats.lock_retries.  A lock may legitimately be held for long: only a peer the
 * transport declared failed ends the wait (RMX_ERR_PEER).
 *
 * Who is involved: next to its word, each rank's lock region has one slot per origin rank,
 * nonzero while that origin may have a share in the word (holding, waiting, or trying).  An origin
 * sets its slot before its first operation on the word (ordered before it: a fence where the
 * word is not in place) and clears it after its release has completed.  When a waiter backs off
 * while some rank has failed, it reads the failed ranks' slots: a failed rank whose slot is clear
 * has no share in the word, so the wait goes on among the survivors; one whose slot is set may
 * hold it for good, and the wait ends with RMX_ERR_PEER.  (The word alone says how many hold or
 * wait, not who.)
 *
 * After a timeout: an operation on the word that timed out (the target silent for
 * peer_timeout_s) is still on its way and may take effect later: a CSWAP may make this rank the
 * writer, an ADD count it as waiting or reading, and then every other rank would wait for ever.
 * So the lock call returns RMX_ERR_TIMEOUT with lock_held[target] RMX_HELD_UNSETTLED, plus what
 * this rank may have added (HELD_MAY_WAIT, HELD_MAY_READ), and the next rmx_win_lock or
 * rmx_win_unlock of that target, rmx_sync_all, rmx_win_free or rmx_finalize settles it first:
 * a fetching read of the word after a fence (applied after every earlier operation of this rank
 * on it: one endpoint's active messages are applied in order, and the fence orders UCP's), then
 * this rank gives back what it holds: the writer's place if the word names it, else its waiting
 * or reading count, and its slot.  While the target stays silent the settling times out too and is
 * tried again at the next such call.
 *
 * Lock and unlock are image control.  lock ends the current segment (all targets) before taking
 * the word; unlock completes this rank's operations at the target, then releases with a fetching
 * ADD so the release is complete at the target when unlock returns (a following lock by this
 * rank can never overtake it).  RMX_MODE_NOCHECK on lock takes no word (the caller promises no
 * conflicting epoch, as in MPI) but the epoch is still tracked: nesting and unlock rules hold.
 */
#include "internal.h"

#define WRITER_SHIFT  44
#define LOCK_WRITER   (~UINT64_C(0) << WRITER_SHIFT)              /* the writer field */
#define WRITER_OF(r)  ((uint64_t)((r) + 1) << WRITER_SHIFT)       /* rank r holds it */
#define LOCK_WAITING  (UINT64_C(1) << 22)
#define LOCK_READER   UINT64_C(1)
#define WAITERS(w)    (((w) >> 22) & UINT64_C(0x3fffff))
#define READERS(w)    ((w) & UINT64_C(0x3fffff))
#define LOCK_MAX_RANKS ((1 << 20) - 2)                            /* rank + 1 fits the field */

/* lock_held[target] while RMX_HELD_UNSETTLED: what this rank may have added to the word. */
#define HELD_MAY_WAIT 0x04
#define HELD_MAY_READ 0x08

#define BACKOFF_MAX   1024

/* lock_held[target] holds the type, plus RMX_HELD_* bits (internal.h). */
#define HELD_NOCHECK  RMX_HELD_NOCHECK

/* ---------------------------------------------------------------- the word at one target */

typedef struct lock_site {
    rmx_ctx_t *ctx;
    const rmx_remote_t *word;   /* the lock word at target */
    int target;
    unsigned backoff;
    uint8_t may;                /* HELD_MAY_*: counts of ours the word may hold right now */
} lock_site_t;

static int word_amo(lock_site_t *s, ucp_atomic_op_t op, uint64_t value, uint64_t *reply)
{
    return rmx_remote_amo(s->ctx, s->word, s->target, op, &value, reply, sizeof(value), 0);
}

/* Origin r's slot in the target's lock region (after the word). */
static size_t slot_disp(int r)
{
    return sizeof(uint64_t) * (1 + (size_t)r);
}

/* This rank may have a share in the word from now on: the slot is set at the target before any
 * later operation on the word lands there. */
static int involve(lock_site_t *s)
{
    uint64_t one = 1;
    int rc = rmx_remote_amo(s->ctx, s->word, s->target, UCP_ATOMIC_OP_ADD, &one, NULL,
                            sizeof(one), slot_disp(s->ctx->rank));
    if (rc == RMX_OK && s->word->ptr == NULL) /* in place it is applied already */
        rc = rmx_ucx_fence(&s->ctx->ucx);
    return rc;
}

/* This rank's share in the word is gone (released, or withdrawn): clear the slot.  Complete at
 * the origin only; a failure between the release and this leaves the slot set, which can only
 * make a waiter give up with RMX_ERR_PEER rather than wait for ever. */
static void disinvolve(lock_site_t *s)
{
    uint64_t minus_one = (uint64_t)0 - 1;
    (void)rmx_remote_amo(s->ctx, s->word, s->target, UCP_ATOMIC_OP_ADD, &minus_one, NULL,
                         sizeof(minus_one), slot_disp(s->ctx->rank));
}

/* RMX_ERR_PEER when a failed rank may have a share in the word (none failed: RMX_OK). */
static int failed_rank_involved(lock_site_t *s)
{
    for (int r = 0; r < s->ctx->size; r++) {
        if (!s->ctx->peers[r].failed)
            continue;
        uint64_t zero = 0, slot = 1;
        int rc = rmx_remote_amo(s->ctx, s->word, s->target, UCP_ATOMIC_OP_ADD, &zero, &slot,
                                sizeof(zero), slot_disp(r));
        if (rc != RMX_OK)
            return rc;
        if (slot != 0)
            return RMX_ERR_PEER;
    }
    return RMX_OK;
}

static int word_add(lock_site_t *s, uint64_t value, uint64_t *old)
{
    *old = 0;
    return word_amo(s, UCP_ATOMIC_OP_ADD, value, old);
}

static int word_read(lock_site_t *s, uint64_t *old)
{
    return word_add(s, 0, old);
}

/* CSWAP expect -> want; *seen gets the word as it was. */
static int word_cswap(lock_site_t *s, uint64_t expect, uint64_t want, uint64_t *seen)
{
    *seen = want;
    return word_amo(s, UCP_ATOMIC_OP_CSWAP, expect, seen);
}

/* One round of bounded exponential back-off. */
static int back_off(lock_site_t *s)
{
    s->ctx->stats.lock_retries++;
    /* A lock we keep losing may be held by a rank that has died: waiting on would be waiting
     * for ever.  Its slot says whether it can be (failed ranks re-read every round: a request
     * of a rank that died may still be on its way to the target). */
    int rc = failed_rank_involved(s);
    if (rc != RMX_OK)
        return rc;
    for (unsigned i = 0; i < s->backoff; i++)
        rmx_ucx_progress(&s->ctx->ucx);
    /* 2 cores, often more ranks: let the holder run; and this rank's other threads, whose work
     * the holder may be waiting for (RMX_THREAD_MULTIPLE) */
    rmx_ctx_yield(s->ctx);
    if (s->backoff < BACKOFF_MAX)
        s->backoff *= 2;
    return RMX_OK;
}

static int acquire_exclusive(lock_site_t *s)
{
    uint64_t seen, mine = WRITER_OF(s->ctx->rank);
    int rc = involve(s);
    if (rc != RMX_OK)
        return rc;
    if ((rc = word_cswap(s, 0, mine, &seen)) != RMX_OK || seen == 0)
        return rc;
    s->may |= HELD_MAY_WAIT;
    if ((rc = word_add(s, LOCK_WAITING, &seen)) != RMX_OK)
        return rc;
    uint64_t word = seen + LOCK_WAITING;
    for (;;) {
        if (!(word & LOCK_WRITER) && READERS(word) == 0) {
            if ((rc = word_cswap(s, word, word - LOCK_WAITING + mine, &seen)) != RMX_OK)
                return rc;
            if (seen == word)
                return RMX_OK;
            word = seen;
            if (!(word & LOCK_WRITER) && READERS(word) == 0)
                continue; /* another waiter came or went: the lock is still free, retry now */
        }
        if ((rc = back_off(s)) != RMX_OK || (rc = word_read(s, &word)) != RMX_OK)
            break;
    }
    if (rc == RMX_ERR_TIMEOUT)
        return rc; /* settled later (lock_epoch) */
    /* Giving up (failed peer): withdraw the announcement if the word is still reachable. */
    uint64_t ignored;
    if (word_add(s, (uint64_t)0 - LOCK_WAITING, &ignored) == RMX_OK)
        disinvolve(s);
    return rc;
}

static int acquire_shared(lock_site_t *s)
{
    int rc = involve(s);
    if (rc != RMX_OK)
        return rc;
    for (;;) {
        uint64_t old;
        s->may |= HELD_MAY_READ;
        rc = word_add(s, LOCK_READER, &old);
        if (rc != RMX_OK)
            return rc;
        if (!(old & LOCK_WRITER) && WAITERS(old) == 0)
            return RMX_OK;
        s->may &= (uint8_t)~HELD_MAY_READ; /* taken back below: applied before any later op */
        if ((rc = word_add(s, (uint64_t)0 - LOCK_READER, &old)) != RMX_OK)
            return rc;
        /* Wait for the writers (holding and waiting) to be gone before adding again. */
        do {
            if ((rc = back_off(s)) != RMX_OK || (rc = word_read(s, &old)) != RMX_OK) {
                if (rc == RMX_ERR_PEER && !s->ctx->peers[s->target].failed)
                    disinvolve(s); /* our 1 was taken back: no share is left */
                return rc;
            }
        } while ((old & LOCK_WRITER) || WAITERS(old) != 0);
    }
}

static int release(lock_site_t *s, int type)
{
    uint64_t old;
    uint64_t share = type == RMX_LOCK_EXCLUSIVE ? WRITER_OF(s->ctx->rank) : LOCK_READER;
    int rc = word_add(s, (uint64_t)0 - share, &old);
    if (rc == RMX_OK)
        disinvolve(s);
    return rc;
}

static void site_open(lock_site_t *s, rmx_win_t *win, int target)
{
    *s = (lock_site_t){.ctx = win->ctx, .word = &win->lock_remote[target], .target = target,
                       .backoff = 1};
}

/* A timed-out acquisition's leftovers (the header's "After a timeout"): RMX_OK once given back,
 * with lock_held[target] cleared; RMX_ERR_TIMEOUT while the target is still silent. */
static int settle(rmx_win_t *win, int target)
{
    uint8_t held = win->lock_held[target];
    if (win->ctx->peers[target].failed) { /* its memory, the word with it, is gone */
        win->lock_held[target] = 0;
        return RMX_OK;
    }
    lock_site_t s;
    site_open(&s, win, target);
    uint64_t word;
    int rc = s.word->ptr == NULL && s.word->direct == NULL ? rmx_ucx_fence(&s.ctx->ucx) : RMX_OK;
    if (rc == RMX_OK)
        rc = word_read(&s, &word);
    if (rc == RMX_ERR_TIMEOUT)
        return rc;
    if (rc == RMX_OK && (word & LOCK_WRITER) == WRITER_OF(s.ctx->rank))
        rc = release(&s, RMX_LOCK_EXCLUSIVE); /* its CSWAP took the lock (waiting consumed) */
    else if (rc == RMX_OK) {
        uint64_t back = (held & HELD_MAY_WAIT ? LOCK_WAITING : 0) +
                        (held & HELD_MAY_READ ? LOCK_READER : 0), ignored;
        if (back != 0)
            rc = word_add(&s, (uint64_t)0 - back, &ignored);
        if (rc == RMX_OK)
            disinvolve(&s);
    }
    if (rc == RMX_ERR_TIMEOUT)
        return rc;
    win->lock_held[target] = 0; /* given back, or the target failed meanwhile */
    rmx_log(win->ctx, RMX_LOG_DEBUG, "window %p: the timed-out lock of rank %d settled%s%s",
            (void *)win, target, rc == RMX_OK ? "" : ": ", rc == RMX_OK ? "" : rmx_strerror(rc));
    return rc == RMX_ERR_PEER ? RMX_OK : rc;
}

/* ---------------------------------------------------------------- entry points */

static int check_lock_target(rmx_win_t *win, int target)
{
    rmx_ctx_t *ctx = win->ctx;
    if (target < 0 || target >= ctx->size)
        return RMX_ERR_RANK;
    if (ctx->size > LOCK_MAX_RANKS)
        return RMX_ERR_UNSUPPORTED; /* the writer's rank + 1 must fit the word's field */
    if (ctx->peers[target].failed)
        return RMX_ERR_PEER;
    return RMX_OK;
}

/* A lock epoch on target; held_bits: RMX_HELD_IMPLICIT for an rmw's (else 0). */
static int lock_epoch(rmx_win_t *win, rmx_lock_t type, int target, int assert, int held_bits)
{
    int rc;
    if ((rc = check_lock_target(win, target)) != RMX_OK)
        return rc;
    if ((win->lock_held[target] & RMX_HELD_UNSETTLED) && (rc = settle(win, target)) != RMX_OK)
        return rc;
    if (win->lock_held[target])
        return RMX_ERR_EPOCH;
    /* Image control: the segment before the lock ends here. */
    if ((rc = rmx_tracker_complete(win->ctx, -1)) != RMX_OK)
        return rc;
    if (!(assert & RMX_MODE_NOCHECK)) {
        lock_site_t s;
        site_open(&s, win, target);
        /* Taken for this epoch while the back-off lets other threads in: theirs is EPOCH. */
        win->lock_held[target] = (uint8_t)(type | RMX_HELD_PENDING | held_bits);
        rc = type == RMX_LOCK_EXCLUSIVE ? acquire_exclusive(&s) : acquire_shared(&s);
        if (rc == RMX_ERR_TIMEOUT && !win->ctx->peers[target].failed) {
            win->lock_held[target] = (uint8_t)(RMX_HELD_UNSETTLED | s.may);
            win->ctx->locks_unsettled++;
            rmx_log(win->ctx, RMX_LOG_DEBUG, "window %p: lock of rank %d timed out: settled at "
                    "the next lock or unlock of it, sync_all, window free or finalize",
                    (void *)win, target);
            return rc;
        }
        if (rc != RMX_OK) {
            win->lock_held[target] = 0;
            rmx_log(win->ctx, RMX_LOG_DEBUG, "window %p: lock of rank %d failed: %s",
                    (void *)win, target, rmx_strerror(rc));
            return rc;
        }
    }
    win->lock_held[target] =
        (uint8_t)(type | held_bits | (assert & RMX_MODE_NOCHECK ? HELD_NOCHECK : 0));
    rmx_log(win->ctx, RMX_LOG_DEBUG, "window %p: %s lock of rank %d taken%s", (void *)win,
            type == RMX_LOCK_EXCLUSIVE ? "exclusive" : "shared", target,
            assert & RMX_MODE_NOCHECK ? " (NOCHECK: no lock word)" : "");
    return RMX_OK;
}

/* A handle bound to a stream (stream.c): the lock is the rank's, held in its window.  The lock
 * and the unlock end the stream's segment too, so its operations complete first; then the
 * window's own entry point takes or releases the lock (taking the context's lock at
 * RMX_THREAD_MULTIPLE, as any call on it). */
static int complete_stream(rmx_win_t *bound)
{
    return rmx_tracker_complete(bound->ctx, -1);
}

/* An rmw's implicit epoch on a bound handle, entered like a call on the window. */
static int lock_implicit_entry(rmx_win_t *win, int target)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, lock_implicit_entry(win, target));
    return rmx_win_lock_implicit(win, target);
}

static int unlock_implicit_entry(rmx_win_t *win, int target)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, unlock_implicit_entry(win, target));
    return rmx_win_unlock_implicit(win, target);
}

int rmx_win_lock(rmx_win_t *win, rmx_lock_t type, int target, int assert)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_win_lock(win, type, target, assert));
    if (win->parent != NULL) {
        rc = complete_stream(win);
        return rc != RMX_OK ? rc : rmx_win_lock(win->parent, type, target, assert);
    }
    if (type != RMX_LOCK_EXCLUSIVE && type != RMX_LOCK_SHARED)
        return RMX_ERR_ARG;
    if (assert & ~RMX_MODE_NOCHECK)
        return RMX_ERR_ARG; /* an implicit epoch is an rmw assert, not a lock mode */
    return lock_epoch(win, type, target, assert, 0);
}

int rmx_win_lock_implicit(rmx_win_t *win, int target)
{
    if (win->parent != NULL) {
        int rc = complete_stream(win);
        return rc != RMX_OK ? rc : lock_implicit_entry(win->parent, target);
    }
    /* Only at RMX_THREAD_MULTIPLE can another call's implicit epoch be open here (the caller
     * checked the nesting rule): wait for its end, letting that thread in to finish it. */
    while (win->lock_held[target] & RMX_HELD_IMPLICIT) {
        rmx_ctx_yield(win->ctx);
        if (win->magic != RMX_WIN_MAGIC || win->mt_closing)
            return RMX_ERR_WIN;
    }
    return lock_epoch(win, RMX_LOCK_EXCLUSIVE, target, 0, RMX_HELD_IMPLICIT);
}

/* End the epoch on target (its lock_held entry nonzero). */
static int unlock_epoch(rmx_win_t *win, int target)
{
    uint8_t held = win->lock_held[target];
    /* Unlock is image control, so the segment ends: every operation of this rank completes, not
     * only those to `target`.  Fortran orders the unlocking segment before the next locker's,
     * and that image may read what we put to a third one.  With one target touched this is
     * still one endpoint flush. */
    int rc = rmx_tracker_complete(win->ctx, -1);
    /* Release even when completion failed: the caller learns of the failure from rc, while a
     * word left taken would stop every other rank for good. */
    if (!(held & HELD_NOCHECK) && !win->ctx->peers[target].failed) {
        lock_site_t s;
        site_open(&s, win, target);
        int rc2 = release(&s, RMX_HELD_TYPE(held));
        rc = rc != RMX_OK ? rc : rc2;
    }
    win->lock_held[target] = 0;
    rmx_log(win->ctx, RMX_LOG_DEBUG, "window %p: lock of rank %d released%s%s", (void *)win,
            target, rc == RMX_OK ? "" : ": ", rc == RMX_OK ? "" : rmx_strerror(rc));
    return rc;
}

int rmx_win_unlock(rmx_win_t *win, int target)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_win_unlock(win, target));
    if (win->parent != NULL) {
        rc = complete_stream(win);
        int rc2 = rmx_win_unlock(win->parent, target); /* released even when that failed */
        return rc != RMX_OK ? rc : rc2;
    }
    if (target < 0 || target >= win->ctx->size)
        return RMX_ERR_RANK;
    uint8_t held = win->lock_held[target];
    if (held & RMX_HELD_UNSETTLED) /* a lock that timed out: give back what it may have taken */
        return settle(win, target);
    /* none; or another thread's, still being acquired or an rmw's own (RMX_THREAD_MULTIPLE) */
    if (!held || (held & (RMX_HELD_PENDING | RMX_HELD_IMPLICIT)))
        return RMX_ERR_EPOCH;
    return unlock_epoch(win, target);
}

int rmx_win_settle_locks(rmx_win_t *win)
{
    int rc = RMX_OK;
    for (int r = 0; r < win->ctx->size; r++)
        if (win->lock_held[r] & RMX_HELD_UNSETTLED) {
            int rc2 = settle(win, r);
            rc = rc != RMX_OK ? rc : rc2;
        }
    return rc;
}

void rmx_settle_all_locks(rmx_ctx_t *ctx)
{
    int left = 0;
    for (rmx_win_t *w = ctx->wins; w != NULL; w = w->next) {
        (void)rmx_win_settle_locks(w);
        for (int r = 0; r < ctx->size; r++)
            left += (w->lock_held[r] & RMX_HELD_UNSETTLED) != 0;
    }
    ctx->locks_unsettled = left;
}

int rmx_win_unlock_all_held(rmx_win_t *win)
{
    int rc = rmx_win_settle_locks(win);
    for (int r = 0; r < win->ctx->size; r++) {
        uint8_t held = win->lock_held[r];
        if (!held || (held & (RMX_HELD_PENDING | RMX_HELD_UNSETTLED)))
            continue;
        rmx_log(win->ctx, RMX_LOG_WARN, "rmx_finalize: window %p: this rank still held the lock "
                "of rank %d: released", (void *)win, r);
        int rc2 = unlock_epoch(win, r);
        rc = rc != RMX_OK ? rc : rc2;
    }
    return rc;
}

int rmx_win_unlock_implicit(rmx_win_t *win, int target)
{
    if (win->parent != NULL) {
        int rc = complete_stream(win);
        int rc2 = unlock_implicit_entry(win->parent, target);
        return rc != RMX_OK ? rc : rc2;
    }
    return unlock_epoch(win, target);
}
