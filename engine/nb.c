/*
 * nb.c — nonblocking operations (rmx_iget, rmx_iget_sub, rmx_iput, rmx_irmw, rmx_irmw2), their
 * requests (rmx_test, rmx_wait, rmx_wait_all), and per-target completion (rmx_flush,
 * rmx_flush_local).  rmx.h documents the semantics.
 *
 * A request lives in its tracker (tracker.h rmx_nb_t): outstanding, then done (its result kept
 * until rmx_test/rmx_wait releases it), then on the free list for reuse.  Everything here hangs
 * off the tracker, so a stream with a tracker (and a worker) of its own will have requests of
 * its own.
 *
 * What is left outstanding: a get that needs UCP (a UCP get in flight, or a get request over
 * rmx's active messages, am_rma.c) and a put larger than coalesce_max over UCP RMA (its source
 * is read until the UCP request completes).  Everything else completes inside the issuing call:
 * copies to and from this rank and mapped peers, small puts (staged: the source is copied),
 * puts over active messages (rmx_am_put returns once the chunks left), sections of more than
 * one run over UCP RMA or with runs longer than a packed one (rmx_get_sub), and the fetching
 * atomics that are not one native UCP atomic (through the blocking calls).  A section to a peer
 * over active messages goes as packed gets (subarray.h rmx_sub_getv_t), scattered when they
 * have all been answered.
 *
 * A fetching atomic in flight (rmx_irmw/rmx_irmw2: one element, native op, no lock, to a peer
 * not mapped here) is tracked as a get that also writes its bytes: later puts and atomics of
 * them wait for it (as for gets), and so do later gets (rmx_nb_before_read, from the slow path
 * of rmx_tracker_access).  Over tcp and UCX's software emulation the transport keeps one
 * endpoint's requests in order anyway; the waits matter where it does not (RDMA: a read may
 * pass an atomic).
 *
 * Flow dependencies (tracker.c's rules, extended):
 *  - a get first resolves earlier puts to its bytes (rmx_tracker_access: staged bytes issued,
 *    the endpoint flushed), as rmx_get does;
 *  - a later put or atomic to bytes an outstanding get reads completes that get first
 *    (rmx_nb_before_write, from tracker.h's put path, rmx_tracker_put, rmx_tracker_put_span and
 *    rmw.c): UCP does not order a put after an earlier get on the same endpoint;
 *  - an rmx_iput is a put to the tracker (rmx_tracker_put_span: pending range, fences), so later
 *    gets and atomics of its bytes flush it, as any put.
 *
 * Where the data land: in place (UCX maps the target's memory here, nothing is needed of it)
 * the UCP get writes dst directly, and a timed-out one has its endpoint closed before the wait
 * returns; otherwise (registered memory over shared memory, RDMA) into the request's own
 * landing buffer, copied to dst on success and abandoned to the transport on a timeout (ucx.h
 * rmx_ucx_abandon_*); over active messages rmx's reply handler copies into dst only while the
 * request is live (am_rma.c), and a request given up (timeout, peer failure) drops later answers.
 */
#include <stdlib.h>
#include "rma.h"
#include "subarray.h"

#define RMX_REQ_MAGIC 0x524d5852u /* "RMXR" */

typedef enum {
    NB_DONE,        /* completed by the issuing call */
    NB_GET_UCP,     /* ucp_get_nbx in flight: in place, or into `land` */
    NB_GET_AM,      /* rmx_am_get_start's token */
    NB_PUT_UCP,     /* ucp_put_nbx in flight, reading the caller's source */
    NB_GET_SUB,     /* a section's packed gets (subarray.h rmx_sub_getv_t) */
} nb_kind_t;

struct rmx_request {
    uint32_t magic;             /* RMX_REQ_MAGIC; RMX_DEAD_MAGIC once released */
    nb_kind_t kind;
    int done, rc;               /* completed, and its result */
    rmx_ctx_t *ctx;
    /* while outstanding */
    rmx_win_t *win;
    int target;
    size_t lo, hi;              /* the window bytes it reads or writes */
    ucs_status_ptr_t ucp;
    uint64_t token;
    void *dst;
    int in_place;
    int updates;                /* a fetching atomic: it also writes [lo, hi) */
    rmx_sub_getv_t *getv;       /* NB_GET_SUB's */
    unsigned char *land;        /* kept for reuse with the request; NULL once abandoned */
    size_t land_cap;
    struct rmx_request *prev, *next;
};

/* ---------------------------------------------------------------- lists */

static void list_remove(rmx_request_t **head, rmx_request_t **tail, rmx_request_t *r)
{
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        *head = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    else if (tail != NULL)
        *tail = r->prev;
    r->prev = r->next = NULL;
}

static void done_push(rmx_nb_t *nb, rmx_request_t *r)
{
    r->prev = NULL;
    r->next = nb->done;
    if (nb->done != NULL)
        nb->done->prev = r;
    nb->done = r;
}

static rmx_request_t *req_new(rmx_ctx_t *ctx)
{
    rmx_nb_t *nb = &ctx->tracker->nb;
    rmx_request_t *r = nb->free;
    if (r != NULL) {
        nb->free = r->next;
    } else if ((r = calloc(1, sizeof(*r))) == NULL) {
        return NULL;
    }
    unsigned char *land = r->land;
    size_t cap = r->land_cap;
    memset(r, 0, sizeof(*r));
    r->land = land;
    r->land_cap = cap;
    r->magic = RMX_REQ_MAGIC;
    r->ctx = ctx;
    return r;
}

/* Back to the free list: the handle is dead (rmx.h: detected until the memory is reused). */
static void req_free(rmx_nb_t *nb, rmx_request_t *r)
{
    r->magic = RMX_DEAD_MAGIC;
    r->next = nb->free;
    nb->free = r;
}

/* Completed by the issuing call: straight onto the done list. */
static rmx_request_t *req_done_now(rmx_ctx_t *ctx, rmx_request_t *r, int rc)
{
    r->kind = NB_DONE;
    r->done = 1;
    r->rc = rc;
    done_push(&ctx->tracker->nb, r);
    return r;
}

static void req_outstanding(rmx_ctx_t *ctx, rmx_request_t *r)
{
    rmx_nb_t *nb = &ctx->tracker->nb;
    r->prev = nb->outstanding_tail;
    r->next = NULL;
    if (nb->outstanding_tail != NULL)
        nb->outstanding_tail->next = r;
    else
        nb->outstanding = r;
    nb->outstanding_tail = r;
    nb->noutstanding++;
    if (r->kind != NB_PUT_UCP)
        ctx->tracker->tgt[r->target].nb_gets++;
}

/* It has completed with rc: off the outstanding list, onto the done list. */
static void req_finish(rmx_request_t *r, int rc)
{
    rmx_ctx_t *ctx = r->ctx;
    rmx_nb_t *nb = &ctx->tracker->nb;
    list_remove(&nb->outstanding, &nb->outstanding_tail, r);
    nb->noutstanding--;
    if (r->kind != NB_PUT_UCP)
        ctx->tracker->tgt[r->target].nb_gets--;
    r->done = 1;
    r->rc = rc;
    r->ucp = NULL;
    r->token = 0;
    if (r->getv != NULL)
        rmx_sub_getv_free(r->getv);
    r->getv = NULL;
    r->win = NULL; /* the window may go; the request stays valid */
    done_push(nb, r);
}

/* ---------------------------------------------------------------- completing */

/* A UCP request of r ended with st (freed here): deliver what landed. */
static void ucp_ended(rmx_request_t *r, ucs_status_t st)
{
    rmx_ucx_t *u = &r->ctx->ucx;
    ucp_request_free(r->ucp);
    r->ucp = NULL;
    int rc = st == UCS_OK ? RMX_OK : rmx_ucx_failed(u, st);
    if (rc == RMX_OK && r->kind == NB_GET_UCP && !r->in_place)
        memcpy(r->dst, r->land, r->hi - r->lo);
    req_finish(r, rc);
}

/* Without waiting: complete r if it is done. */
static void req_poll(rmx_request_t *r)
{
    if (r->done)
        return;
    if (r->kind == NB_GET_AM || r->kind == NB_GET_SUB) {
        int rc = r->kind == NB_GET_AM ? rmx_am_test(&r->ctx->ucx, r->token)
                                      : rmx_sub_getv_test(r->getv);
        if (rc != 1)
            req_finish(r, rc);
        return;
    }
    ucs_status_t st = ucp_request_check_status(r->ucp);
    if (st != UCS_INPROGRESS)
        ucp_ended(r, st);
}

/* A UCP request of r timed out: make sure it never touches memory it should not any more. */
static void ucp_timed_out(rmx_request_t *r)
{
    rmx_ctx_t *ctx = r->ctx;
    rmx_ucx_t *u = &ctx->ucx;
    if (r->kind == NB_GET_UCP && !r->in_place) {
        /* it may still write its landing buffer: both go to the transport */
        rmx_ucx_abandon_req(u, r->ucp);
        rmx_ucx_abandon_mem(u, r->land);
        r->land = NULL;
        r->land_cap = 0;
    } else {
        /* it may still write dst or read the source: close the endpoint, which purges it */
        ucp_ep_h ep = rmx_ep(ctx, r->target);
        if (ep != NULL)
            rmx_ucx_purge(u, ep, &r->ucp, 1);
        else
            ucp_request_free(r->ucp); /* already purged with its endpoint */
        rmx_transfer_done(ctx, r->target, RMX_ERR_TIMEOUT);
    }
    r->ucp = NULL;
    req_finish(r, RMX_ERR_TIMEOUT);
}

/* Until r completes, at most timeout_s. */
static void req_wait(rmx_request_t *r)
{
    if (r->done)
        return;
    rmx_ucx_t *u = &r->ctx->ucx;
    if (r->kind == NB_GET_AM) {
        req_finish(r, rmx_am_wait(u, r->token));
        return;
    }
    if (r->kind == NB_GET_SUB) {
        req_finish(r, rmx_sub_getv_wait(r->getv));
        return;
    }
    ucs_status_ptr_t req = r->ucp;
    int rc = rmx_ucx_wait_req(u, req, RMX_UCX_KEEP); /* frees it unless it timed out */
    if (rc == RMX_ERR_TIMEOUT) {
        ucp_timed_out(r);
        return;
    }
    r->ucp = NULL;
    if (rc == RMX_OK && r->kind == NB_GET_UCP && !r->in_place)
        memcpy(r->dst, r->land, r->hi - r->lo);
    req_finish(r, rc);
}

static int overlaps(const rmx_request_t *r, rmx_win_t *win, size_t lo, size_t hi)
{
    return r->win == win && r->lo < hi && lo < r->hi;
}

int rmx_nb_before_write(rmx_win_t *win, int target, size_t disp, size_t len)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_request_t *next;
    for (rmx_request_t *r = ctx->tracker->nb.outstanding; r != NULL; r = next) {
        next = r->next;
        if (r->kind != NB_PUT_UCP && r->target == target && overlaps(r, win, disp, disp + len)) {
            ctx->stats.nb_write_waits++;
            req_wait(r); /* its result is its own: the write goes on */
        }
    }
    return RMX_OK;
}

int rmx_nb_before_read(rmx_win_t *win, int target, size_t disp, size_t len)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_request_t *next;
    for (rmx_request_t *r = ctx->tracker->nb.outstanding; r != NULL; r = next) {
        next = r->next;
        if (r->updates && r->target == target && overlaps(r, win, disp, disp + len)) {
            ctx->stats.nb_write_waits++;
            req_wait(r);
        }
    }
    return RMX_OK;
}

/* Outstanding requests to target (-1: all) of the given kinds complete. */
static void complete_where(rmx_ctx_t *ctx, int target, int puts_only)
{
    rmx_request_t *next;
    for (rmx_request_t *r = ctx->tracker->nb.outstanding; r != NULL; r = next) {
        next = r->next;
        if ((target < 0 || r->target == target) && (!puts_only || r->kind == NB_PUT_UCP))
            req_wait(r);
    }
}

int rmx_nb_complete(rmx_ctx_t *ctx, int target)
{
    complete_where(ctx, target, 0);
    return RMX_OK; /* each request keeps its own result */
}

void rmx_nb_destroy(rmx_tracker_t *t)
{
    rmx_nb_t *nb = &t->nb;
    /* Segment ends have completed every request; one left over is abandoned, not freed. */
    for (rmx_request_t *r = nb->outstanding, *next; r != NULL; r = next) {
        next = r->next;
        if (r->ucp != NULL)
            rmx_ucx_abandon_req(&r->ctx->ucx, r->ucp);
        if (r->token != 0)
            rmx_am_abandon(&r->ctx->ucx, r->token);
        if (r->getv != NULL)
            rmx_sub_getv_free(r->getv); /* gives up its packed gets */
        rmx_ucx_abandon_mem(&r->ctx->ucx, r->land);
        r->land = NULL;
        free(r);
    }
    rmx_request_t *lists[] = {nb->done, nb->free};
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
        for (rmx_request_t *r = lists[i], *next; r != NULL; r = next) {
            next = r->next;
            free(r->land);
            free(r);
        }
    memset(nb, 0, sizeof(*nb));
}

/* ---------------------------------------------------------------- issuing */

/* The request's own landing buffer, at least len bytes (nothing is in flight into it). */
static unsigned char *req_landing(rmx_request_t *r, size_t len)
{
    if (r->land_cap < len) {
        unsigned char *p = realloc(r->land, len);
        if (p == NULL)
            return NULL;
        r->land = p;
        r->land_cap = len;
    }
    return r->land;
}

/* A get that needs UCP, after the flow-dependency check: left in flight. */
static int iget_issue(rmx_win_t *win, rmx_request_t *r, void *dst, size_t len, int target,
                      size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_ucx_t *u = &ctx->ucx;
    const rmx_remote_t *rem = &win->remote[target];
    ucp_ep_h ep = rmx_ep(ctx, target);
    if (ep == NULL)
        return RMX_ERR_PEER;
    r->win = win;
    r->target = target;
    r->lo = disp;
    r->hi = disp + len;
    r->dst = dst;
    ctx->stats.ucp_gets++;
    rmx_am_peer_t *am = rmx_am(ctx, target);
    if (am != NULL) {
        r->kind = NB_GET_AM;
        return rmx_am_get_start(u, am, dst, len, rem->addr + disp, &r->token);
    }
    r->kind = NB_GET_UCP;
    r->in_place = rem->ptr != NULL;
    void *to = dst;
    if (!r->in_place && (to = req_landing(r, len)) == NULL)
        return RMX_ERR_NOMEM;
    ucp_request_param_t prm = {.op_attr_mask = 0};
    ucs_status_ptr_t req = ucp_get_nbx(ep, to, len, rem->addr + disp, rem->rkey, &prm);
    if (UCS_PTR_IS_ERR(req))
        return rmx_ucx_failed(u, UCS_PTR_STATUS(req));
    r->ucp = req;
    return RMX_OK;
}

/* The checked get as a request: complete at once where it is a copy, else in flight. */
static int iget_checked(rmx_win_t *win, void *dst, size_t len, int target, size_t disp,
                        rmx_request_t **req)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_request_t *r = req_new(ctx);
    if (r == NULL)
        return RMX_ERR_NOMEM;
    int rc;
    if (len == 0 || target == ctx->rank || win->remote[target].direct != NULL) {
        rc = len == 0 ? RMX_OK : rmx_get_checked(win, dst, len, target, disp);
        if (rc != RMX_OK) {
            req_free(&ctx->tracker->nb, r);
            return rc;
        }
        *req = req_done_now(ctx, r, RMX_OK);
        return RMX_OK;
    }
    ctx->stats.gets++;
    rc = rmx_tracker_access(win, target, disp, len);
    if (rc == RMX_OK)
        rc = rmx_transfer_done(ctx, target, iget_issue(win, r, dst, len, target, disp));
    if (rc != RMX_OK) {
        req_free(&ctx->tracker->nb, r);
        return rc;
    }
    req_outstanding(ctx, r);
    if (r->kind == NB_GET_UCP && r->ucp == NULL) { /* completed at once (in place) */
        if (!r->in_place)
            memcpy(dst, r->land, len);
        req_finish(r, RMX_OK);
    } else {
        ctx->stats.nb_requests++;
    }
    *req = r;
    return RMX_OK;
}

int rmx_iget(rmx_win_t *win, void *dst, size_t len, int target, size_t disp,
             rmx_request_t **req)
{
    if (req == NULL)
        return RMX_ERR_ARG;
    *req = NULL;
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_iget(win, dst, len, target, disp, req));
    if (dst == NULL && len > 0)
        return RMX_ERR_ARG;
    if ((rc = rmx_check_target(win, target, disp, len)) != RMX_OK)
        return rc;
    return iget_checked(win, dst, len, target, disp, req);
}

/* A blocking call's result as a completed request (the call already ran). */
static int completed(rmx_ctx_t *ctx, int rc, rmx_request_t *r, rmx_request_t **req)
{
    if (rc != RMX_OK) {
        req_free(&ctx->tracker->nb, r);
        return rc;
    }
    *req = req_done_now(ctx, r, RMX_OK);
    return RMX_OK;
}

/* A checked section of several runs to a peer over rmx's active messages (tcp), as packed gets
 * left in flight (subarray.h rmx_sub_getv_t); *req NULL when the section does not go that way
 * (runs longer than a packed one): nothing was sent. */
static int iget_sub_packed(rmx_win_t *win, void *dst, const rmx_sub_layout_t *L,
                           const rmx_sub_layout_t *R, int target, size_t disp,
                           rmx_request_t **req)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_request_t *r = req_new(ctx);
    if (r == NULL)
        return RMX_ERR_NOMEM;
    int rc = rmx_tracker_access(win, target, disp + R->lo, R->hi - R->lo);
    if (rc == RMX_OK)
        rc = rmx_transfer_done(ctx, target,
                               rmx_sub_getv_start(win, dst, L, R, target, disp, &r->getv));
    if (rc != RMX_OK || r->getv == NULL) {
        req_free(&ctx->tracker->nb, r);
        return rc;
    }
    r->kind = NB_GET_SUB;
    r->win = win;
    r->target = target;
    r->lo = disp + R->lo;
    r->hi = disp + R->hi;
    r->dst = dst;
    req_outstanding(ctx, r);
    ctx->stats.nb_requests++;
    *req = r;
    return RMX_OK;
}

int rmx_iget_sub(rmx_win_t *win, void *dst, const rmx_sub_t *local, int target, size_t disp,
                 const rmx_sub_t *remote, rmx_request_t **req)
{
    if (req == NULL)
        return RMX_ERR_ARG;
    *req = NULL;
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx,
                            rmx_iget_sub(win, dst, local, target, disp, remote, req));
    rmx_ctx_t *ctx = win->ctx;
    rmx_sub_layout_t L, R;
    int valid = local != NULL && remote != NULL && dst != NULL &&
                rmx_sub_layout(local, &L) == RMX_OK && rmx_sub_layout(remote, &R) == RMX_OK &&
                rmx_sub_match(&L, &R) == RMX_OK && L.nelem > 0 &&
                rmx_check_target(win, target, disp, R.hi) == RMX_OK;
    /* One run on both sides: a contiguous get, left in flight as rmx_iget's (rmx_get_sub
     * makes the same decision). */
    if (valid && L.nruns == 1 && R.nruns == 1)
        return iget_checked(win, (unsigned char *)dst + L.base, L.run_bytes, target,
                            disp + R.base, req);
    /* Several runs to a peer reached over rmx's active messages: packed gets in flight. */
    if (valid && target != ctx->rank && win->remote[target].direct == NULL &&
        rmx_am(ctx, target) != NULL && rmx_ep(ctx, target) != NULL &&
        ((rc = iget_sub_packed(win, dst, &L, &R, target, disp, req)) != RMX_OK || *req != NULL))
        return rc;
    /* Anything else, bad input included, is read now by rmx_get_sub. */
    rmx_request_t *r = req_new(ctx);
    if (r == NULL)
        return RMX_ERR_NOMEM;
    return completed(ctx, rmx_get_sub(win, dst, local, target, disp, remote), r, req);
}

/* One native fetching atomic left in flight (rmx_amo_plan_t), after the same flow-dependency
 * checks as rmx_rmw's.  Its reply lands in the request's own buffer (UCP) or is written into
 * result by rmx's reply handler while the request is live (active messages), as a get's. */
static int irmw_issue(rmx_win_t *win, rmx_request_t *r, const rmx_amo_plan_t *p, void *result,
                      int target, size_t disp)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_ucx_t *u = &ctx->ucx;
    size_t size = p->size;
    int rc = rmx_tracker_update_access(win, target, disp, size); /* as rmx_rmw's */
    ucp_ep_h ep = rmx_ep(ctx, target);
    if (rc == RMX_OK && ep == NULL)
        rc = RMX_ERR_PEER;
    if (rc != RMX_OK)
        return rc;
    const rmx_remote_t *rem = &win->remote[target];
    r->win = win;
    r->target = target;
    r->lo = disp;
    r->hi = disp + size;
    r->dst = result;
    r->updates = 1;
    ctx->stats.atomics++;
    ctx->stats.ucp_amos++;
    uint32_t v32 = (uint32_t)p->value, n32 = (uint32_t)p->value2;
    const void *operand = size == 4 ? (const void *)&v32 : (const void *)&p->value;
    const void *newval = size == 4 ? (const void *)&n32 : (const void *)&p->value2;
    rmx_am_peer_t *am = rmx_am(ctx, target);
    if (am != NULL) {
        r->kind = NB_GET_AM;
        if (p->uop == UCP_ATOMIC_OP_CSWAP)
            memcpy(result, newval, size); /* read as the new value when the request is sent */
        return rmx_am_amo_start(u, am, p->uop, operand, result, size, rem->addr + disp,
                                &r->token);
    }
    r->kind = NB_GET_UCP;
    r->in_place = 0; /* the reply goes through the request's landing buffer */
    unsigned char *slot = req_landing(r, 8);
    if (slot == NULL)
        return RMX_ERR_NOMEM;
    memcpy(slot, newval, size); /* CSWAP: the new value in, the old value out */
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER,
        .datatype = ucp_dt_make_contig(size),
        .reply_buffer = slot,
    };
    ucs_status_ptr_t req = ucp_atomic_op_nbx(ep, p->uop, operand, 1, rem->addr + disp, rem->rkey,
                                             &prm);
    if (UCS_PTR_IS_ERR(req))
        return rmx_ucx_failed(u, UCS_PTR_STATUS(req));
    r->ucp = req;
    return RMX_OK;
}

/* A checked fetching atomic as a request: in flight when the plan allows, else run now. */
static int irmw_start(rmx_win_t *win, const rmx_amo_plan_t *p, void *result, int target,
                      size_t disp, int (*blocking)(void *arg), void *arg, rmx_request_t **req)
{
    rmx_ctx_t *ctx = win->ctx;
    rmx_request_t *r = req_new(ctx);
    if (r == NULL)
        return RMX_ERR_NOMEM;
    if (!p->native)
        return completed(ctx, blocking(arg), r, req);
    int rc = irmw_issue(win, r, p, result, target, disp);
    if (rc != RMX_OK) {
        if (r->token != 0)
            rmx_am_abandon(&ctx->ucx, r->token);
        req_free(&ctx->tracker->nb, r);
        return rc;
    }
    req_outstanding(ctx, r);
    if (r->kind == NB_GET_UCP && r->ucp == NULL) { /* answered at once */
        memcpy(result, r->land, p->size);
        req_finish(r, RMX_OK);
    } else {
        ctx->stats.nb_requests++;
    }
    *req = r;
    return RMX_OK;
}

typedef struct rmw_call {
    rmx_win_t *win;
    const void *operand, *operand2;
    int count;
    rmx_dtype_t dt;
    void *result;
    int target;
    size_t disp;
    int assert, op;
} rmw_call_t;

static int blocking_rmw(void *arg)
{
    const rmw_call_t *c = arg;
    return rmx_rmw(c->win, c->operand, c->count, c->dt, c->result, c->target, c->disp, c->assert,
                   (rmx_rmw_op_t)c->op);
}

static int blocking_rmw2(void *arg)
{
    const rmw_call_t *c = arg;
    return rmx_rmw2(c->win, c->operand, c->count, c->dt, c->operand2, c->result, c->target,
                    c->disp, c->assert, (rmx_rmw2_op_t)c->op);
}

int rmx_irmw(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt, void *result,
             int target, size_t disp, int assert, rmx_rmw_op_t op, rmx_request_t **req)
{
    if (req == NULL)
        return RMX_ERR_ARG;
    *req = NULL;
    if (result == NULL) /* nothing to fetch: complete at once, no request */
        return rmx_rmw(win, operand, count, dt, result, target, disp, assert, op);
    rmx_amo_plan_t plan;
    int rc = rmx_rmw_plan(win, operand, count, dt, target, disp, assert, op, &plan);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_irmw(win, operand, count, dt, result, target,
                                                   disp, assert, op, req));
    rmw_call_t c = {win, operand, NULL, count, dt, result, target, disp, assert, (int)op};
    return irmw_start(win, &plan, result, target, disp, blocking_rmw, &c, req);
}

int rmx_irmw2(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt,
              const void *operand2, void *result, int target, size_t disp, int assert,
              rmx_rmw2_op_t op, rmx_request_t **req)
{
    if (req == NULL)
        return RMX_ERR_ARG;
    *req = NULL;
    if (result == NULL)
        return rmx_rmw2(win, operand, count, dt, operand2, result, target, disp, assert, op);
    rmx_amo_plan_t plan;
    int rc = rmx_rmw2_plan(win, operand, count, dt, operand2, target, disp, assert, op, &plan);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_irmw2(win, operand, count, dt, operand2, result,
                                                    target, disp, assert, op, req));
    rmw_call_t c = {win, operand, operand2, count, dt, result, target, disp, assert, (int)op};
    return irmw_start(win, &plan, result, target, disp, blocking_rmw2, &c, req);
}

/* rmx_iput's UCP put, sent by rmx_tracker_put_span after its ordering decisions. */
typedef struct iput_send {
    rmx_request_t *r;
    const void *src;
    size_t len;
    uint64_t raddr;
    ucp_rkey_h rkey;
} iput_send_t;

static int send_iput(void *arg)
{
    iput_send_t *a = arg;
    rmx_request_t *r = a->r;
    ucp_ep_h ep = rmx_ep(r->ctx, r->target);
    if (ep == NULL)
        return RMX_ERR_PEER;
    r->ctx->stats.ucp_puts++;
    ucp_request_param_t prm = {.op_attr_mask = 0};
    ucs_status_ptr_t req = ucp_put_nbx(ep, a->src, a->len, a->raddr, a->rkey, &prm);
    if (UCS_PTR_IS_ERR(req))
        return rmx_ucx_failed(&r->ctx->ucx, UCS_PTR_STATUS(req));
    r->ucp = req;
    return RMX_OK;
}

/* Where rmx_put itself waits for its source: a large put over UCP RMA to a peer not mapped. */
static int iput_defers(rmx_win_t *win, size_t len, int target)
{
    rmx_ctx_t *ctx = win->ctx;
    return len > ctx->tracker->coalesce_max && target != ctx->rank &&
           win->remote[target].direct == NULL && rmx_am(ctx, target) == NULL;
}

int rmx_iput(rmx_win_t *win, const void *src, size_t len, int target, size_t disp,
             rmx_request_t **req)
{
    if (req == NULL)
        return RMX_ERR_ARG;
    *req = NULL;
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_iput(win, src, len, target, disp, req));
    if (src == NULL && len > 0)
        return RMX_ERR_ARG;
    if ((rc = rmx_check_target(win, target, disp, len)) != RMX_OK)
        return rc;
    rmx_ctx_t *ctx = win->ctx;
    rmx_request_t *r = req_new(ctx);
    if (r == NULL)
        return RMX_ERR_NOMEM;
    if (len == 0 || !iput_defers(win, len, target))
        return completed(ctx, len == 0 ? RMX_OK : rmx_put_checked(win, src, len, target, disp),
                         r, req);
    ctx->stats.puts++;
    r->kind = NB_PUT_UCP;
    r->win = win;
    r->target = target;
    r->lo = disp;
    r->hi = disp + len;
    iput_send_t a = {r, src, len, win->remote[target].addr + disp, win->remote[target].rkey};
    rc = rmx_tracker_put_span(win, target, disp, disp + len, 0, send_iput, &a);
    if (rc != RMX_OK) {
        req_free(&ctx->tracker->nb, r);
        return rc;
    }
    req_outstanding(ctx, r);
    if (r->ucp == NULL) /* the source was read at once */
        req_finish(r, RMX_OK);
    else
        ctx->stats.nb_requests++;
    *req = r;
    return RMX_OK;
}

/* ---------------------------------------------------------------- test and wait */

/* A live request handle whose context this thread may use. */
static int req_check(const rmx_request_t *r)
{
    if (r->magic != RMX_REQ_MAGIC)
        return RMX_ERR_ARG;
    return rmx_ctx_check(r->ctx);
}

/* r has completed: release it, return its result. */
static int req_release(rmx_request_t **req)
{
    rmx_request_t *r = *req;
    rmx_nb_t *nb = &r->ctx->tracker->nb;
    int rc = r->rc;
    list_remove(&nb->done, NULL, r);
    req_free(nb, r);
    *req = NULL;
    return rc;
}

int rmx_test(rmx_request_t **req, int *done)
{
    if (req == NULL || done == NULL)
        return RMX_ERR_ARG;
    *done = 0;
    rmx_request_t *r = *req;
    if (r == NULL) {
        *done = 1;
        return RMX_OK;
    }
    int rc = req_check(r);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, r->ctx, rmx_test(req, done));
    if (!r->done) {
        (void)rmx_ucx_progress(&r->ctx->ucx);
        req_poll(r);
        if (!r->done)
            return RMX_OK;
    }
    *done = 1;
    return req_release(req);
}

int rmx_wait(rmx_request_t **req)
{
    if (req == NULL)
        return RMX_ERR_ARG;
    rmx_request_t *r = *req;
    if (r == NULL)
        return RMX_OK;
    int rc = req_check(r);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, r->ctx, rmx_wait(req));
    req_wait(r);
    return req_release(req);
}

/* The context a request's context serves: itself, or a stream's parent. */
static rmx_ctx_t *job_of(const rmx_ctx_t *ctx)
{
    return ctx->parent != NULL ? ctx->parent : (rmx_ctx_t *)ctx;
}

/* Wait for and release the requests of reqs[0..n) issued on ctx (holding its lock at
 * RMX_THREAD_MULTIPLE); *first / *first_at: the error earliest in the array so far. */
static int wait_group(rmx_request_t **reqs, int n, rmx_ctx_t *ctx, int *first, int *first_at)
{
    int rc = rmx_ctx_check(ctx);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, ctx, wait_group(reqs, n, ctx, first, first_at));
    for (int i = 0; i < n; i++) {
        if (reqs[i] == NULL || reqs[i]->ctx != ctx)
            continue;
        req_wait(reqs[i]);
        int rc1 = req_release(&reqs[i]);
        if (rc1 != RMX_OK && i < *first_at) {
            *first = rc1;
            *first_at = i;
        }
    }
    return RMX_OK;
}

int rmx_wait_all(rmx_request_t **reqs, int n)
{
    if (n < 0 || (reqs == NULL && n > 0))
        return RMX_ERR_ARG;
    rmx_ctx_t *job = NULL, *parent_seen = NULL;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == NULL)
            continue;
        if (reqs[i]->magic != RMX_REQ_MAGIC ||
            (job != NULL && job_of(reqs[i]->ctx) != job))
            return RMX_ERR_ARG; /* released, or another job's context */
        job = job_of(reqs[i]->ctx);
        if (reqs[i]->ctx == job)
            parent_seen = job;
        for (int k = 0; k < i; k++) /* the same request twice would be released twice */
            if (reqs[k] == reqs[i])
                return RMX_ERR_ARG;
    }
    /* Streams' requests are this thread's or none are waited for (their check takes no lock). */
    for (int i = 0; i < n; i++) {
        int rc;
        if (reqs[i] != NULL && reqs[i]->ctx != job && (rc = rmx_ctx_check(reqs[i]->ctx)) != RMX_OK)
            return rc;
    }
    int first = RMX_OK, first_at = n;
    if (parent_seen != NULL) {
        int rc = wait_group(reqs, n, parent_seen, &first, &first_at);
        if (rc != RMX_OK)
            return rc; /* the context is gone or going: nothing was waited for */
    }
    for (int i = 0; i < n; i++) /* each stream's own, its requests in one pass */
        if (reqs[i] != NULL)
            (void)wait_group(reqs, n, reqs[i]->ctx, &first, &first_at);
    return first;
}

/* ---------------------------------------------------------------- per-target completion */

/* After rmx_win_check: the target is a rank or RMX_TARGET_ALL. */
static int check_flush_target(rmx_win_t *win, int target)
{
    rmx_ctx_t *ctx = win->ctx;
    if (target == RMX_TARGET_ALL)
        return RMX_OK;
    if (target < 0 || target >= ctx->size)
        return RMX_ERR_RANK;
    return ctx->peers[target].failed ? RMX_ERR_PEER : RMX_OK;
}

int rmx_flush(rmx_win_t *win, int target)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_flush(win, target));
    if ((rc = check_flush_target(win, target)) != RMX_OK)
        return rc;
    /* Direct puts are plain stores: ordered before whatever the caller sends next. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    rmx_ctx_t *ctx = win->ctx;
    if (rmx_tracker_end_if_idle(ctx)) {
        rmx_ucx_tick(&ctx->ucx); /* a loop of flushes still lets keepalive run */
        return RMX_OK;
    }
    return rmx_tracker_complete(ctx, target == RMX_TARGET_ALL ? -1 : target);
}

int rmx_flush_local(rmx_win_t *win, int target)
{
    int rc = rmx_win_check(win);
    if (rc != RMX_OK)
        return RMX_MT_RETRY(rc, win->ctx, rmx_flush_local(win, target));
    if ((rc = check_flush_target(win, target)) != RMX_OK)
        return rc;
    rmx_ctx_t *ctx = win->ctx;
    if (ctx->tracker->nb.noutstanding == 0) {
        rmx_ucx_tick(&ctx->ucx);
        return RMX_OK;
    }
    complete_where(ctx, target == RMX_TARGET_ALL ? -1 : target, 1);
    return RMX_OK;
}
