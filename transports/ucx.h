/*
 * ucx.h — the only data path of rmx: UCP context/worker/endpoints, memory mapping, rkeys, and the
 * RMA / atomic / flush calls.  The calls on the hot path are static inline so that rmx_put compiles
 * down to the engine's checks plus ucp_put_nbx, with no indirection (the SOS transport pattern).
 *
 * Waiting: every blocking wait progresses the worker (over tcp, and for registered rather than
 * UCP-allocated memory, the peer's progress is what completes our operations) and gives up at a
 * deadline so a silent peer cannot hang the caller.
 */
#ifndef RMX_UCX_H
#define RMX_UCX_H

#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include "../api/rmx.h"

typedef struct rmx_ucx {
    ucp_context_h context;
    ucp_worker_h worker;
    double timeout_s;   /* deadline for any single wait */
    unsigned quiet;     /* operations completed in place since the worker was last progressed */
} rmx_ucx_t;

/* Progress the worker once every this many in-place completions: UCX notices a dead peer
 * (keepalive, a reset socket) only inside ucp_worker_progress, and over shared memory puts, gets
 * and atomics complete in place without ever progressing, so a loop of them would otherwise go on
 * writing to a dead rank's memory forever. */
#define RMX_UCX_QUIET_PROGRESS 64

/* ---- set-up (ucx.c) */
int rmx_ucx_open(rmx_ucx_t *u, double timeout_s);
void rmx_ucx_close(rmx_ucx_t *u);
int rmx_ucx_worker_address(rmx_ucx_t *u, void **addr, size_t *len);
void rmx_ucx_worker_address_release(rmx_ucx_t *u, void *addr);
int rmx_ucx_ep_create(rmx_ucx_t *u, const void *addr, ucp_err_handler_cb_t on_error, void *arg,
                      ucp_ep_h *ep);
/* flush_first: complete outstanding operations (graceful); otherwise force-close (failed peer). */
void rmx_ucx_ep_close(rmx_ucx_t *u, ucp_ep_h ep, int flush_first);
/* addr NULL: UCP allocates (reachable one-sidedly over shared memory); *out_addr gets the address. */
int rmx_ucx_mem_map(rmx_ucx_t *u, void *addr, size_t len, ucp_mem_h *memh, void **out_addr);
void rmx_ucx_mem_unmap(rmx_ucx_t *u, ucp_mem_h memh);
int rmx_ucx_rkey_pack(rmx_ucx_t *u, ucp_mem_h memh, void **buf, size_t *len);
void rmx_ucx_rkey_buffer_release(void *buf);
int rmx_ucx_rkey_unpack(ucp_ep_h ep, const void *buf, ucp_rkey_h *rkey);
int rmx_ucx_status(ucs_status_t st);
/* Flush n endpoints at once (one round trip, not n): every operation issued on them completes
 * at the target.  The first error, or RMX_ERR_TIMEOUT. */
int rmx_ucx_flush_eps(rmx_ucx_t *u, ucp_ep_h *eps, int n);
/* Which transports an endpoint uses for RMA/AMO, into buf (for diagnostics and tests). */
int rmx_ucx_ep_describe(ucp_ep_h ep, char *buf, size_t len);

/* ---- hot path */
static inline double rmx_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline unsigned rmx_ucx_progress(rmx_ucx_t *u)
{
    return ucp_worker_progress(u->worker);
}

/* One operation completed without waiting (in place, or staged by the tracker): progress the
 * worker once in a while (RMX_UCX_QUIET_PROGRESS). */
static inline void rmx_ucx_tick(rmx_ucx_t *u)
{
    if (++u->quiet >= RMX_UCX_QUIET_PROGRESS) {
        u->quiet = 0;
        (void)rmx_ucx_progress(u);
    }
}

/* Progress until req completes; RMX_OK, the mapped UCP error, or RMX_ERR_TIMEOUT (the request is
 * then released to UCP, which frees it whenever the endpoint finally completes or fails it). */
static inline int rmx_ucx_wait(rmx_ucx_t *u, ucs_status_ptr_t req)
{
    if (req == NULL) {
        rmx_ucx_tick(u);
        return RMX_OK;
    }
    u->quiet = 0;
    if (UCS_PTR_IS_ERR(req))
        return rmx_ucx_status(UCS_PTR_STATUS(req));
    double deadline = 0;
    unsigned idle = 0;
    ucs_status_t st;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        if (rmx_ucx_progress(u) != 0)
            continue;
        if ((++idle & 1023) == 0) {
            double t = rmx_now_s();
            if (deadline == 0)
                deadline = t + u->timeout_s;
            else if (t > deadline) {
                ucp_request_free(req);
                return RMX_ERR_TIMEOUT;
            }
            sched_yield(); /* 2 cores, often more ranks: let the peer run */
        }
    }
    ucp_request_free(req);
    return rmx_ucx_status(st);
}

/* Returns once src may be reused (local completion); the target sees the data after a flush.
 * Only op_attr_mask is set: UCP reads no field the mask does not name, and zeroing the whole
 * 72-byte struct (a rep stos) cost more than the 8-byte put itself over shared memory. */
static inline int rmx_ucx_put(rmx_ucx_t *u, ucp_ep_h ep, const void *src, size_t len,
                              uint64_t raddr, ucp_rkey_h rkey)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = 0;
    if (ep == NULL)
        return RMX_ERR_PEER; /* closed after its peer failed (rmx_peers_reap) */
    return rmx_ucx_wait(u, ucp_put_nbx(ep, src, len, raddr, rkey, &prm));
}

/* Blocking: dst holds the remote bytes on return. */
static inline int rmx_ucx_get(rmx_ucx_t *u, ucp_ep_h ep, void *dst, size_t len, uint64_t raddr,
                              ucp_rkey_h rkey)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = 0; /* as in rmx_ucx_put */
    if (ep == NULL)
        return RMX_ERR_PEER; /* closed after its peer failed (rmx_peers_reap) */
    return rmx_ucx_wait(u, ucp_get_nbx(ep, dst, len, raddr, rkey, &prm));
}

/* One native atomic of 4 or 8 bytes.  reply NULL: no fetch (never for SWAP/CSWAP).
 * CSWAP: *operand is the comparand, *reply the new value in and the old value out. */
static inline int rmx_ucx_amo(rmx_ucx_t *u, ucp_ep_h ep, ucp_atomic_op_t op, const void *operand,
                              void *reply, size_t size, uint64_t raddr, ucp_rkey_h rkey)
{
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
        .datatype = ucp_dt_make_contig(size),
    };
    if (reply != NULL) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        prm.reply_buffer = reply;
    }
    if (ep == NULL)
        return RMX_ERR_PEER; /* closed after its peer failed (rmx_peers_reap) */
    return rmx_ucx_wait(u, ucp_atomic_op_nbx(ep, op, operand, 1, raddr, rkey, &prm));
}

/* Complete everything issued on ep, at origin and target. */
static inline int rmx_ucx_flush_ep(rmx_ucx_t *u, ucp_ep_h ep)
{
    ucp_request_param_t prm = {.op_attr_mask = 0};
    if (ep == NULL)
        return RMX_ERR_PEER; /* closed after its peer failed (rmx_peers_reap) */
    return rmx_ucx_wait(u, ucp_ep_flush_nbx(ep, &prm));
}

static inline int rmx_ucx_flush_worker(rmx_ucx_t *u)
{
    ucp_request_param_t prm = {.op_attr_mask = 0};
    return rmx_ucx_wait(u, ucp_worker_flush_nbx(u->worker, &prm));
}

/* Orders later operations after earlier ones; completes nothing. */
static inline int rmx_ucx_fence(rmx_ucx_t *u)
{
    return rmx_ucx_status(ucp_worker_fence(u->worker));
}

#endif
