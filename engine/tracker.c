/*
 * tracker.c — segment bookkeeping (DESIGN.md "Segments and the completion tracker").
 *
 * A put returns as soon as its source may be reused; it becomes complete at the target only at
 * the end of the segment.  In between, the tracker keeps per target:
 *  - a staged run: small puts to adjacent or overlapping bytes of one window, combined in a
 *    staging buffer and issued later as one UCP put (coalescing);
 *  - the pending ranges: remote bytes written by UCP puts issued but not yet flushed, each
 *    tagged with the fence epoch it was issued in.
 * From these it decides, per access, the least ordering the coarray rules need:
 *  - get or atomic touching staged bytes: issue the run first; touching pending bytes: flush that
 *    endpoint (a flow dependency); touching neither: no wait at all;
 *  - put overlapping bytes pending in the current fence epoch: ucp_worker_fence, not a flush
 *    (puts of older epochs are already ordered by the fence that ended their epoch);
 *  - segment end: issue every staged run, then one endpoint flush when a single target has
 *    pending puts, else one worker flush.
 * The range list per target is short and bounded: ranges of one window and epoch that touch are
 * merged (sequential puts stay one range), and a full list coarsens by widening the nearest range
 * of the same window, or by marking the whole target dirty.  Over-approximating only costs an
 * extra fence or flush, never correctness.
 *
 * A staged run lives in the tracker's own buffer; rmx_ucx_put returns after local completion, so
 * the buffer is free again as soon as the run is issued.
 *
 * Atomics (engine/rmw.c) call rmx_tracker_access like a get, so they follow every
 * overlapping put with a flush, never a fence: UCP may send atomics over another transport than
 * puts (amo on posix, puts on sysv here), and the fence does not order across transports.
 * rmw.c completes its non-fetching atomics itself, so nothing later needs ordering after them.
 *
 * The fence relies on UCX keeping two puts on one endpoint in order after ucp_worker_fence.  In
 * UCX 1.13 the fence is per transport: puts of different sizes that UCP sends over different
 * transports (multi-rail, or a zcopy lane on another transport) are not ordered by it.  Local
 * ranks here send every put size over one transport (sysv, rmx_ucx_ep_describe), so it holds.
 */
#include <stdlib.h>
#include "tracker.h"

int rmx_tracker_create(rmx_ctx_t *ctx)
{
    rmx_tracker_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return RMX_ERR_NOMEM;
    size_t max = ctx->cfg.coalesce_max < RMX_STAGE_MAX ? ctx->cfg.coalesce_max : RMX_STAGE_MAX;
    t->coalesce_max = ctx->cfg.coalesce_disable ? 0 : max;
    t->tgt = calloc((size_t)ctx->size, sizeof(*t->tgt));
    t->touched = calloc((size_t)ctx->size, sizeof(*t->touched));
    if (t->tgt == NULL || t->touched == NULL) {
        free(t->tgt);
        free(t->touched);
        free(t);
        return RMX_ERR_NOMEM;
    }
    ctx->tracker = t;
    return RMX_OK;
}

void rmx_tracker_destroy(rmx_ctx_t *ctx)
{
    rmx_tracker_t *t = ctx->tracker;
    if (t == NULL)
        return;
    rmx_nb_destroy(t);
    for (int r = 0; r < ctx->size; r++)
        free(t->tgt[r].stage.buf);
    free(t->tgt);
    free(t->touched);
    free(t);
    ctx->tracker = NULL;
}

/* ---------------------------------------------------------------- per-target state */

static inline int overlaps(size_t lo, size_t hi, size_t a, size_t b)
{
    return lo < b && a < hi;
}

static inline int has_pending(const rmx_target_state_t *ts)
{
    return ts->nranges > 0 || ts->all_dirty;
}

static int pending_overlap(const rmx_target_state_t *ts, rmx_win_t *win, size_t lo, size_t hi)
{
    if (ts->all_dirty)
        return 1;
    for (int i = ts->nranges - 1; i >= 0; i--) {
        const rmx_range_t *r = &ts->ranges[i];
        if (r->win == win && overlaps(lo, hi, r->lo, r->hi))
            return 1;
    }
    return 0;
}

/* Overlap with a put issued since the last fence: only those can still be reordered. */
static int unfenced_overlap(const rmx_tracker_t *t, const rmx_target_state_t *ts, rmx_win_t *win,
                            size_t lo, size_t hi)
{
    if (ts->all_dirty && ts->all_dirty_epoch == t->epoch)
        return 1;
    /* Every range written this epoch is inside the hull (rmx_tracker_hull_add). */
    if (ts->hull_win == NULL || ts->hull_epoch != t->epoch)
        return 0;
    if (ts->hull_win != RMX_HULL_MIXED &&
        (ts->hull_win != win || !overlaps(lo, hi, ts->hull_lo, ts->hull_hi)))
        return 0;
    for (int i = ts->nranges - 1; i >= 0; i--) {
        const rmx_range_t *r = &ts->ranges[i];
        if (r->epoch == t->epoch && r->win == win && overlaps(lo, hi, r->lo, r->hi))
            return 1;
    }
    return 0;
}

/* The list is full: collapse every range of win into one, then add [lo, hi).  The list then has
 * room for the next puts, so a long walk of separate puts costs O(1) per put amortised; only the
 * gaps between the collapsed ranges are over-approximated (an extra fence or flush at worst). */
static void coarsen(rmx_tracker_t *t, rmx_target_state_t *ts, rmx_win_t *win, size_t lo,
                    size_t hi)
{
    int keep = 0, merged = -1;
    for (int i = 0; i < ts->nranges; i++) {
        rmx_range_t r = ts->ranges[i];
        if (r.win != win) {
            ts->ranges[keep++] = r;
        } else if (merged < 0) {
            merged = keep;
            ts->ranges[keep++] = r;
        } else {
            rmx_range_t *m = &ts->ranges[merged];
            m->lo = r.lo < m->lo ? r.lo : m->lo;
            m->hi = r.hi > m->hi ? r.hi : m->hi;
            m->epoch = r.epoch > m->epoch ? r.epoch : m->epoch;
        }
    }
    ts->nranges = keep;
    if (merged < 0) { /* RMX_RANGE_CAP other windows at once: give up precision for this target */
        ts->all_dirty = 1;
        ts->all_dirty_epoch = t->epoch;
        ts->nranges = 0;
        return;
    }
    rmx_range_t *m = &ts->ranges[merged];
    if (m->epoch == t->epoch) /* its gaps now count as written this epoch */
        rmx_tracker_hull_add(t, ts, win, m->lo, m->hi);
    if (ts->nranges == RMX_RANGE_CAP) { /* one range per window and still full: widen ours */
        m->lo = lo < m->lo ? lo : m->lo;
        m->hi = hi > m->hi ? hi : m->hi;
        m->epoch = t->epoch;
        rmx_tracker_hull_add(t, ts, win, m->lo, m->hi);
        return;
    }
    ts->ranges[ts->nranges++] = (rmx_range_t){.win = win, .lo = lo, .hi = hi, .epoch = t->epoch};
    rmx_tracker_hull_add(t, ts, win, lo, hi);
}

static void add_pending(rmx_tracker_t *t, rmx_target_state_t *ts, rmx_win_t *win, size_t lo,
                        size_t hi)
{
    if (ts->all_dirty) {
        ts->all_dirty_epoch = t->epoch;
        return;
    }
    if (ts->nranges > 0) { /* sequential puts: the newest range usually just grows */
        rmx_range_t *r = &ts->ranges[ts->nranges - 1];
        if (r->win == win && r->epoch == t->epoch && lo <= r->hi && r->lo <= hi) {
            r->lo = lo < r->lo ? lo : r->lo;
            r->hi = hi > r->hi ? hi : r->hi;
            rmx_tracker_hull_add(t, ts, win, lo, hi);
            return;
        }
    }
    if (ts->nranges == RMX_RANGE_CAP) {
        coarsen(t, ts, win, lo, hi);
        return;
    }
    ts->ranges[ts->nranges++] = (rmx_range_t){.win = win, .lo = lo, .hi = hi, .epoch = t->epoch};
    rmx_tracker_hull_add(t, ts, win, lo, hi);
}

/* ---------------------------------------------------------------- issuing */

/* One UCP put of [disp, disp+len), fenced after any unfenced put of overlapping bytes. */
static int issue_put(rmx_win_t *win, rmx_target_state_t *ts, const void *src, size_t len,
                     int target, size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_tracker_t *t = ctx->tracker;
    if (unfenced_overlap(t, ts, win, disp, disp + len)) {
        int rc = rmx_ucx_fence(&ctx->ucx);
        if (rc != RMX_OK)
            return rc;
        ctx->stats.fences++;
        t->epoch++;
    }
    int rc = rmx_tracker_send(win, src, len, target, disp);
    if (rc == RMX_OK && !win->remote[target].lands) {
        add_pending(t, ts, win, disp, disp + len);
        rmx_tracker_mark_touched(t, ts, target);
    }
    return rc;
}

static int issue_stage(rmx_target_state_t *ts, int target)
{
    rmx_stage_t *s = &ts->stage;
    rmx_win_t *win = s->win;
    if (win == NULL)
        return RMX_OK;
    s->win = NULL;
    return issue_put(win, ts, s->buf, s->hi - s->lo, target, s->lo);
}

static inline int stage_overlap(const rmx_target_state_t *ts, rmx_win_t *win, size_t lo,
                                size_t hi)
{
    const rmx_stage_t *s = &ts->stage;
    return s->win == win && overlaps(lo, hi, s->lo, s->hi);
}

/* Extend the staged run by [disp, disp+len) if it touches the run and the result fits.
 * Later bytes overwrite earlier ones: last writer wins, as issued. */
static inline int stage_merge(rmx_stage_t *s, size_t cap, rmx_win_t *win, const void *src,
                              size_t len, size_t disp)
{
    if (s->win != win || disp > s->hi || disp + len < s->lo)
        return 0;
    size_t lo = disp < s->lo ? disp : s->lo;
    size_t hi = disp + len > s->hi ? disp + len : s->hi;
    if (hi - lo > cap)
        return 0;
    if (lo < s->lo)
        memmove(s->buf + (s->lo - lo), s->buf, s->hi - s->lo);
    memcpy(s->buf + (disp - lo), src, len);
    s->lo = lo;
    s->hi = hi;
    return 1;
}

static int stage_put(rmx_win_t *win, rmx_target_state_t *ts, const void *src, size_t len,
                     int target, size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_tracker_t *t = ctx->tracker;
    rmx_stage_t *s = &ts->stage;
    if (stage_merge(s, t->coalesce_max, win, src, len, disp)) {
        s->merged = 1;
        ctx->stats.puts_coalesced++;
        return RMX_OK;
    }
    if (s->win != NULL)
        ts->lonely_runs = s->merged ? 0 : ts->lonely_runs + 1;
    int rc = issue_stage(ts, target);
    if (rc != RMX_OK)
        return rc;
    int touches_last = rmx_tracker_touches_last(t, ts, win, disp, len);
    rmx_tracker_set_last(t, ts, win, disp, len);
    if (ts->lonely_runs >= RMX_LONELY_RUNS && !touches_last)
        return issue_put(win, ts, src, len, target, disp);
    ts->lonely_runs = touches_last ? 0 : ts->lonely_runs;
    if (s->buf == NULL && (s->buf = malloc(t->coalesce_max)) == NULL)
        return issue_put(win, ts, src, len, target, disp);
    memcpy(s->buf, src, len);
    s->merged = 0;
    s->win = win;
    s->lo = disp;
    s->hi = disp + len;
    rmx_tracker_mark_touched(t, ts, target);
    return RMX_OK;
}

int rmx_tracker_put(rmx_win_t *win, const void *src, size_t len, int target, size_t disp)
{
    rmx_tracker_t *t = win->ctx->tracker;
    rmx_target_state_t *ts = &t->tgt[target];
    int rc = rmx_tracker_write_check(win, target, disp, len);
    if (rc != RMX_OK)
        return rc;
    /* A landed put is itself one copy: staging it too pays off only while the UCP call it
     * saves costs more than copying its bytes once more (RMX_LANDED_STAGE_MAX). */
    if (len <= t->coalesce_max && !(win->remote[target].lands && len > RMX_LANDED_STAGE_MAX))
        return stage_put(win, ts, src, len, target, disp);
    /* A large put goes out at once, after any staged bytes it overwrites. */
    if (stage_overlap(ts, win, disp, disp + len)) {
        rc = issue_stage(ts, target);
        if (rc != RMX_OK)
            return rc;
    }
    return issue_put(win, ts, src, len, target, disp);
}

/* A message the caller sends that writes only bytes of [lo, hi) of win (a packed put of many runs,
 * subarray_rma.c): ordered and completed as one put of the whole range would be.  Staged bytes
 * in the range go out first (they were put earlier), a put of the range earlier in this fence
 * epoch is fenced, and the range counts as pending until the segment ends.  The gaps between
 * the runs are over-approximated: at worst a later access to them flushes or fences. */
int rmx_tracker_put_span(rmx_win_t *win, int target, size_t lo, size_t hi, int landed,
                         int (*send)(void *arg), void *arg)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_tracker_t *t = ctx->tracker;
    rmx_target_state_t *ts = &t->tgt[target];
    int rc = rmx_tracker_write_check(win, target, lo, hi - lo);
    if (rc != RMX_OK)
        return rc;
    if (stage_overlap(ts, win, lo, hi) && (rc = issue_stage(ts, target)) != RMX_OK)
        return rc;
    if (unfenced_overlap(t, ts, win, lo, hi)) {
        if ((rc = rmx_ucx_fence(&ctx->ucx)) != RMX_OK)
            return rc;
        ctx->stats.fences++;
        t->epoch++;
    }
    rc = rmx_transfer_done(ctx, target, send(arg));
    if (rc == RMX_OK && !landed) {
        add_pending(t, ts, win, lo, hi);
        rmx_tracker_mark_touched(t, ts, target);
    }
    return rc;
}

/* ---------------------------------------------------------------- completion */

static void clear_pending(rmx_target_state_t *ts)
{
    ts->nranges = 0;
    ts->all_dirty = 0;
    ts->hull_win = NULL;
}

static int flush_target(rmx_ctx_t *ctx, rmx_target_state_t *ts, int target)
{
    ctx->stats.flushes_ep++;
    clear_pending(ts);
    return rmx_ucx_flush_ep(&ctx->ucx, rmx_ep(ctx, target), rmx_am(ctx, target));
}

int rmx_tracker_before_access(rmx_win_t *win, int target, size_t disp, size_t len)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_target_state_t *ts = &ctx->tracker->tgt[target];
    size_t hi = disp + len;
    if (ts->nb_gets != 0) {
        int rc = rmx_nb_before_read(win, target, disp, len);
        if (rc != RMX_OK)
            return rc;
    }
    /* Nothing staged or pending at all was decided inline (tracker.h rmx_tracker_access). */
    if (stage_overlap(ts, win, disp, hi)) {
        int rc = issue_stage(ts, target);
        if (rc != RMX_OK)
            return rc;
    }
    if (!pending_overlap(ts, win, disp, hi)) {
        ctx->stats.waits_avoided++;
        return RMX_OK;
    }
    ctx->stats.flow_waits++;
    return flush_target(ctx, ts, target);
}

int rmx_tracker_before_update(rmx_win_t *win, int target, size_t disp, size_t len)
{
    if (win->ctx->tracker->tgt[target].nb_gets != 0) {
        int rc = rmx_nb_before_write(win, target, disp, len);
        if (rc != RMX_OK)
            return rc;
    }
    return rmx_tracker_before_access(win, target, disp, len);
}

static void untouch_all(rmx_tracker_t *t)
{
    for (int i = 0; i < t->ntouched; i++) {
        rmx_target_state_t *ts = &t->tgt[t->touched[i]];
        clear_pending(ts);
        ts->stage.win = NULL;
        ts->touched = 0;
    }
    t->ntouched = 0;
}

/* The segment ends: a run that still holds a single put counts as lonely (a loop of one put per
 * segment, as in put-then-sync, gains nothing from staging).  That no later put is compared with
 * this segment's last one is the segment count's doing (t->segment, rmx_tracker_touches_last). */
static inline void end_of_segment(rmx_target_state_t *ts)
{
    if (ts->stage.win != NULL)
        ts->lonely_runs = ts->stage.merged ? 0 : ts->lonely_runs + 1;
}

static int complete_all(rmx_ctx_t *ctx)
{
    rmx_tracker_t *t = ctx->tracker;
    int rc = RMX_OK, npending = 0, last = -1;
    for (int i = 0; i < t->ntouched; i++) {
        int target = t->touched[i];
        end_of_segment(&t->tgt[target]);
        int rc2 = issue_stage(&t->tgt[target], target);
        rc = rc != RMX_OK ? rc : rc2;
        if (has_pending(&t->tgt[target])) {
            npending++;
            last = target;
        }
    }
    if (npending == 1) {
        int rc2 = flush_target(ctx, &t->tgt[last], last);
        rc = rc != RMX_OK ? rc : rc2;
    } else if (npending > 1) {
        ctx->stats.flushes_worker++;
        int rc2 = rmx_ucx_flush_worker(&ctx->ucx);
        rc = rc != RMX_OK ? rc : rc2;
    }
    untouch_all(t);
    t->segment++;
    return rc;
}

/* The puts first (the flush also completes most gets), then the nonblocking requests: each is
 * complete afterwards, its data delivered, and still the caller's to release (engine/nb.c). */
int rmx_tracker_complete(rmx_ctx_t *ctx, int target)
{
    int rc;
    if (target < 0) {
        rc = complete_all(ctx);
    } else {
        rmx_target_state_t *ts = &ctx->tracker->tgt[target];
        rc = issue_stage(ts, target);
        if (has_pending(ts)) {
            int rc2 = flush_target(ctx, ts, target);
            rc = rc != RMX_OK ? rc : rc2;
        }
    }
    if (ctx->tracker->nb.noutstanding > 0) {
        int rc2 = rmx_nb_complete(ctx, target);
        rc = rc != RMX_OK ? rc : rc2;
    }
    return rc;
}

int rmx_tracker_forget_window(rmx_win_t *win)
{
    /* Simplest safe rule: the whole segment ends.  Nothing staged or pending can then refer to
     * the window, whose rkeys are about to go. */
    return rmx_tracker_complete(win->ctx, -1);
}
