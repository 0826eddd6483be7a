/*
 * tracker.h — the segment tracker's state (engine/tracker.c explains the rules) and the inline
 * fast path of rmx_put.  The two commonest puts of a message-rate loop, the next bytes after a
 * staged run and (coalescing off) the next bytes after the only pending range, are decided here
 * without a call; everything else goes to rmx_tracker_put.
 */
#ifndef RMX_TRACKER_H
#define RMX_TRACKER_H

#include "internal.h"

#define RMX_RANGE_CAP 16          /* pending ranges per target before the list coarsens */
#define RMX_STAGE_MAX RMX_COALESCE_MAX_LIMIT
#define RMX_LANDED_STAGE_MAX 1024 /* bytes: longer landed puts go out at once (put_rate 4 KiB 0.74x -> 1.02x raw UCP) */
#define RMX_LONELY_RUNS 4         /* single-put runs in a row before puts bypass staging */ /* larger runs gain nothing over one put; buffers stay small */

typedef struct rmx_range {
    rmx_win_t *win;
    size_t lo, hi;          /* [lo, hi) in the target's part of win */
    uint64_t epoch;         /* fence epoch of the newest put merged in here */
} rmx_range_t;

typedef struct rmx_stage {
    rmx_win_t *win;         /* NULL: nothing staged */
    size_t lo, hi;
    unsigned char *buf;     /* [coalesce_max]; buf[0] holds byte lo */
    int merged;             /* a second put joined the run */
} rmx_stage_t;

typedef struct rmx_target_state {
    rmx_stage_t stage;
    int nranges;
    /* Nonblocking gets and fetching atomics to this target still outstanding (engine/nb.c): a
     * later put or atomic to bytes one of them reads waits for it (rmx_nb_before_write), and
     * a later get of bytes an atomic updates (rmx_nb_before_read).  Beside the fields every
     * put and get reads: no cache line more on their path. */
    int nb_gets;
    int all_dirty;          /* the list overflowed: every byte of the target counts as pending */
    uint64_t all_dirty_epoch;
    int touched;            /* listed in tracker->touched */
    /* Runs that went out holding one put, in a row.  A walk of separate small puts (a strided
     * section, scattered slots) gains nothing from staging but pays a copy per put: after a few
     * such runs, puts go out at once until one touches the previous put again. */
    int lonely_runs;
    rmx_win_t *last_win;    /* the previous put of segment last_segment */
    uint64_t last_segment;
    size_t last_lo, last_hi;
    /* Hull of the ranges written since the last fence.  Most puts (a strided walk, separate
     * slots) lie outside it, which settles "must this put be fenced?" without the list. */
    rmx_win_t *hull_win;    /* NULL: none this epoch; RMX_HULL_MIXED: several windows */
    uint64_t hull_epoch;
    size_t hull_lo, hull_hi;
    rmx_range_t ranges[RMX_RANGE_CAP];
} rmx_target_state_t;

#define RMX_HULL_MIXED ((rmx_win_t *)1)

/* The nonblocking requests of one tracker (engine/nb.c): issued but not complete, complete but
 * not yet released by rmx_test/rmx_wait, and released ones kept for reuse.  Kept here, with the
 * segment state they depend on, so that a stream with a tracker of its own has its own. */
struct rmx_request;
typedef struct rmx_nb {
    struct rmx_request *outstanding; /* doubly linked, oldest first */
    struct rmx_request *outstanding_tail;
    struct rmx_request *done;        /* doubly linked */
    struct rmx_request *free;        /* singly linked */
    int noutstanding;
} rmx_nb_t;

typedef struct rmx_tracker {
    size_t coalesce_max;    /* 0: coalescing off */
    uint64_t epoch;         /* ucp_worker_fence calls so far */
    rmx_target_state_t *tgt; /* [size]: one flat array, one load less on the put path */
    int *touched;           /* targets with something staged or pending */
    int ntouched;
    uint64_t segment;       /* segments ended so far (tracker.c complete_all, _end_if_idle) */
    rmx_nb_t nb;
} rmx_tracker_t;

/* engine/nb.c: a put or atomic is about to write [disp, disp+len) of win at target, which has
 * outstanding nonblocking gets: complete those that read any of those bytes first. */
int rmx_nb_before_write(rmx_win_t *win, int target, size_t disp, size_t len);
/* engine/nb.c: complete (not release) the outstanding requests to target (-1: all); the first
 * error of the completing itself (a request's own error is the request's). */
int rmx_nb_complete(rmx_ctx_t *ctx, int target);
/* engine/nb.c: free every request, whatever its state (the tracker goes away). */
void rmx_nb_destroy(rmx_tracker_t *t);

/* engine/nb.c: a get or atomic is about to read [disp, disp+len) of win at target, which has
 * outstanding nonblocking requests: complete the atomics among them that update those bytes. */
int rmx_nb_before_read(rmx_win_t *win, int target, size_t disp, size_t len);

/* rmw.c, for rmx_irmw/rmx_irmw2 (nb.c): the call checked as rmx_rmw/rmx_rmw2 check it, and
 * whether it is one native fetching atomic that can be left in flight (native), with its UCP
 * op, operand bits (value) and CSWAP's new value (value2), of `size` bytes. */
typedef struct rmx_amo_plan {
    int native;
    ucp_atomic_op_t uop;
    uint64_t value, value2;
    size_t size;
} rmx_amo_plan_t;
int rmx_rmw_plan(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt, int target,
                 size_t disp, int assert, rmx_rmw_op_t op, rmx_amo_plan_t *plan);
int rmx_rmw2_plan(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt,
                  const void *operand2, int target, size_t disp, int assert, rmx_rmw2_op_t op,
                  rmx_amo_plan_t *plan);

/* A put or atomic to [disp, disp+len) at target: after the outstanding gets of those bytes. */
static inline int rmx_tracker_write_check(rmx_win_t *win, int target, size_t disp, size_t len)
{
    if (__builtin_expect(win->ctx->tracker->tgt[target].nb_gets == 0, 1))
        return RMX_OK;
    return rmx_nb_before_write(win, target, disp, len);
}

/* [lo, hi) of win was written in the current fence epoch. */
static inline void rmx_tracker_hull_add(const rmx_tracker_t *t, rmx_target_state_t *ts,
                                        rmx_win_t *win, size_t lo, size_t hi)
{
    if (ts->hull_win == NULL || ts->hull_epoch != t->epoch) {
        ts->hull_win = win;
        ts->hull_epoch = t->epoch;
        ts->hull_lo = lo;
        ts->hull_hi = hi;
    } else if (ts->hull_win != win) {
        ts->hull_win = RMX_HULL_MIXED;
    } else {
        ts->hull_lo = lo < ts->hull_lo ? lo : ts->hull_lo;
        ts->hull_hi = hi > ts->hull_hi ? hi : ts->hull_hi;
    }
}

/* Something of this segment is staged or pending at target (the segment end visits it). */
static inline void rmx_tracker_mark_touched(rmx_tracker_t *t, rmx_target_state_t *ts, int target)
{
    if (!ts->touched) {
        ts->touched = 1;
        t->touched[t->ntouched++] = target;
    }
}

/* The put [disp, disp+len) of win touches the previous put to this target in this segment. */
static inline int rmx_tracker_touches_last(const rmx_tracker_t *t, const rmx_target_state_t *ts,
                                           const rmx_win_t *win, size_t disp, size_t len)
{
    return ts->last_win == win && ts->last_segment == t->segment && disp <= ts->last_hi &&
           ts->last_lo <= disp + len;
}

static inline void rmx_tracker_set_last(const rmx_tracker_t *t, rmx_target_state_t *ts,
                                        rmx_win_t *win, size_t disp, size_t len)
{
    ts->last_win = win;
    ts->last_segment = t->segment;
    ts->last_lo = disp;
    ts->last_hi = disp + len;
}

/* One UCP put of [disp, disp+len) of win at target, counted; a timeout retires the target
 * (rmx_transfer_done).  Whatever ordering it needs was decided before. */
static inline int rmx_tracker_send(rmx_win_t *win, const void *src, size_t len, int target,
                                   size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    ctx->stats.ucp_puts++;
    ctx->stats.landed_puts += (unsigned)win->remote[target].lands;
    return rmx_transfer_done(ctx, target,
                             rmx_ucx_put(&ctx->ucx, rmx_ep(ctx, target), rmx_am(ctx, target),
                                         src, len, win->remote[target].addr + disp,
                                         win->remote[target].rkey));
}

static inline int rmx_tracker_put_fast(rmx_win_t *win, const void *src, size_t len, int target,
                                       size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_tracker_t *t = ctx->tracker;
    rmx_target_state_t *ts = &t->tgt[target];
    rmx_stage_t *s = &ts->stage;
    if (__builtin_expect(ts->nb_gets != 0, 0)) {
        int rc = rmx_nb_before_write(win, target, disp, len);
        if (rc != RMX_OK)
            return rc;
    }
    if (s->win == win && disp == s->hi && s->hi - s->lo + len <= t->coalesce_max) {
        memcpy(s->buf + (s->hi - s->lo), src, len);
        s->hi += len;
        s->merged = 1;
        ctx->stats.puts_coalesced++;
        return RMX_OK;
    }
    /* Not coalesced, nothing staged, one pending range of this window and epoch ending where
     * this put starts: no fence needed, and the range just grows. */
    rmx_range_t *r = &ts->ranges[0];
    if (ts->nranges == 1 && s->win == NULL && len > t->coalesce_max && !ts->all_dirty &&
        r->win == win && r->epoch == t->epoch && r->hi == disp) {
        int rc = rmx_tracker_send(win, src, len, target, disp);
        if (rc == RMX_OK) {
            r->hi += len;
            rmx_tracker_hull_add(t, ts, win, disp, r->hi);
        }
        return rc;
    }
    /* A lonely put (tracker.c stage_put: staging has shown it gains nothing here) with nothing
     * staged or pending to the target, as in a loop of one put per segment: out at once, its
     * range the only pending one and nothing to fence, which is what stage_put and issue_put
     * would decide, without their calls. */
    if (ts->lonely_runs >= RMX_LONELY_RUNS && s->win == NULL && ts->nranges == 0 &&
        !ts->all_dirty && len <= t->coalesce_max &&
        !rmx_tracker_touches_last(t, ts, win, disp, len)) {
        int rc = rmx_tracker_send(win, src, len, target, disp);
        rmx_tracker_set_last(t, ts, win, disp, len);
        if (rc == RMX_OK && !win->remote[target].lands) { /* landed: nothing to record */
            *r = (rmx_range_t){.win = win, .lo = disp, .hi = disp + len, .epoch = t->epoch};
            ts->nranges = 1;
            rmx_tracker_hull_add(t, ts, win, disp, disp + len);
            rmx_tracker_mark_touched(t, ts, target);
        }
        return rc;
    }
    return rmx_tracker_put(win, src, len, target, disp);
}

/* A segment ends (rmx_sync_memory, rmx_flush, rmx_stream_flush): 1 when nothing of it is staged
 * or outstanding, so that it ends here with nothing to complete (counted as ended); 0: the caller
 * completes it (rmx_tracker_complete). */
static inline int rmx_tracker_end_if_idle(rmx_ctx_t *ctx)
{
    rmx_tracker_t *t = ctx->tracker;
    if (t->ntouched > 0 || t->nb.noutstanding > 0)
        return 0;
    t->segment++;
    return 1;
}

/* Nothing of this segment to the target, neither staged nor unflushed puts nor outstanding
 * gets: a get or atomic then waits for nothing (counted as a wait avoided). */
static inline int rmx_tracker_nothing_pending(rmx_ctx_t *ctx, int target)
{
    const rmx_target_state_t *ts = &ctx->tracker->tgt[target];
    if (__builtin_expect(ts->nranges == 0 && !ts->all_dirty && ts->stage.win == NULL &&
                             ts->nb_gets == 0, 1)) {
        ctx->stats.waits_avoided++;
        return 1;
    }
    return 0;
}

/* A get or atomic must wait for nothing when this segment has neither staged nor unflushed
 * puts to the target: the common case of a get or atomic loop, decided without a call. */
static inline int rmx_tracker_access(rmx_win_t *win, int target, size_t disp, size_t len)
{
    if (rmx_tracker_nothing_pending(win->ctx, target))
        return RMX_OK;
    return rmx_tracker_before_access(win, target, disp, len);
}

/* rmx_tracker_access for an atomic, which also writes its bytes: the same inline decision,
 * and on the slow path it first waits for outstanding gets of those bytes (rmx_nb_before_write)
 * as a put does.  One test on the fast path, as before nonblocking gets existed. */
int rmx_tracker_before_update(rmx_win_t *win, int target, size_t disp, size_t len);
static inline int rmx_tracker_update_access(rmx_win_t *win, int target, size_t disp, size_t len)
{
    if (rmx_tracker_nothing_pending(win->ctx, target))
        return RMX_OK;
    return rmx_tracker_before_update(win, target, disp, len);
}

#endif
