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
#define RMX_STAGE_MAX (64u << 10) /* larger runs gain nothing over one put; buffers stay small */

typedef struct rmx_range {
    rmx_win_t *win;
    size_t lo, hi;          /* [lo, hi) in the target's part of win */
    uint64_t epoch;         /* fence epoch of the newest put merged in here */
} rmx_range_t;

typedef struct rmx_stage {
    rmx_win_t *win;         /* NULL: nothing staged */
    size_t lo, hi;
    unsigned char *buf;     /* [coalesce_max]; buf[0] holds byte lo */
} rmx_stage_t;

typedef struct rmx_target_state {
    rmx_stage_t stage;
    int nranges;
    int all_dirty;          /* the list overflowed: every byte of the target counts as pending */
    uint64_t all_dirty_epoch;
    int touched;            /* listed in tracker->touched */
    rmx_range_t ranges[RMX_RANGE_CAP];
} rmx_target_state_t;

typedef struct rmx_tracker {
    size_t coalesce_max;    /* 0: coalescing off */
    uint64_t epoch;         /* ucp_worker_fence calls so far */
    rmx_target_state_t *tgt; /* [size]: one flat array, one load less on the put path */
    int *touched;           /* targets with something staged or pending */
    int ntouched;
} rmx_tracker_t;

static inline int rmx_tracker_put_fast(rmx_win_t *win, const void *src, size_t len, int target,
                                       size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_tracker_t *t = ctx->tracker;
    rmx_target_state_t *ts = &t->tgt[target];
    rmx_stage_t *s = &ts->stage;
    if (s->win == win && disp == s->hi && s->hi - s->lo + len <= t->coalesce_max) {
        memcpy(s->buf + (s->hi - s->lo), src, len);
        s->hi += len;
        ctx->stats.puts_coalesced++;
        return RMX_OK;
    }
    /* Not coalesced, nothing staged, one pending range of this window and epoch ending where
     * this put starts: no fence needed, and the range just grows. */
    rmx_range_t *r = &ts->ranges[0];
    if (ts->nranges == 1 && s->win == NULL && len > t->coalesce_max && !ts->all_dirty &&
        r->win == win && r->epoch == t->epoch && r->hi == disp) {
        ctx->stats.ucp_puts++;
        int rc = rmx_ucx_put(&ctx->ucx, rmx_ep(ctx, target), src, len,
                             win->remote[target].addr + disp, win->remote[target].rkey);
        if (rc == RMX_OK)
            r->hi += len;
        return rc;
    }
    return rmx_tracker_put(win, src, len, target, disp);
}

#endif
