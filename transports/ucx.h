/*
 * ucx.h — the only data path of rmx: UCP context/worker/endpoints, memory mapping, rkeys, and the
 * RMA / atomic / flush calls.  The calls on the hot path are static inline so that rmx_put compiles
 * down to the engine's checks plus ucp_put_nbx, with no indirection (the SOS transport pattern).
 * Peers over tcp take one well-predicted branch away from UCP's RMA to rmx's active messages
 * (am_rma.c: where UCX's own emulation of RMA aborts a survivor that answers a dead rank).
 *
 * Waiting: every blocking wait progresses the worker (over tcp, and for registered rather than
 * UCP-allocated memory, the peer's progress is what completes our operations) and gives up at a
 * deadline so a silent peer cannot hang the caller.
 */
#ifndef RMX_UCX_H
#define RMX_UCX_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include "../api/rmx.h"

/* RMA over rmx's own active messages, for peers UCX would serve in software (am_rma.c). */
struct rmx_am;
struct rmx_logger; /* engine/log.h */
typedef struct rmx_am_peer rmx_am_peer_t;

typedef struct rmx_ucx {
    ucp_context_h context;          /* the owner's: `worker` */
    ucp_context_h service_context;  /* `service`, and every mapping peers reach (ucx.c) */
    /* Two workers, each of its own UCP context.  `worker` belongs to the owner thread and issues
     * every operation of this rank.  `service` is the worker peers' endpoints are connected to:
     * where their operations are served in software (tcp: rmx's active messages, am_rma.c;
     * atomics on registered memory: UCX), the request arrives there and is answered by whoever
     * progresses it: the progress agent while it runs (transports/agent.c), else the owner
     * thread inside its rmx calls.  Answers come back to `worker`. */
    ucp_worker_h worker;
    ucp_worker_h service;
    double timeout_s;   /* deadline for any single wait */
    int alloc_zeroed;   /* UCP allocates only fresh (zeroed) mappings: UCX_ALLOC_PRIO, ucx.c */
    unsigned since_progress; /* operations completed in place since `worker` was last progressed */
    int agent_running;  /* written by the owner thread only: the agent owns `service` */
    /* No agent, and peers' operations need this rank's progress (RMX_PROGRESS=none with tcp or
     * registered windows): serve them at every progress call.  Otherwise peers reach this rank
     * one-sidedly, the service worker carries only UCX's own traffic (wire-up, keepalive), and
     * is progressed now and then: every interface of it is polled, which in a spin of 4 ranks
     * on 2 cores made sync_all 15x slower. */
    int serve_every_progress;
    unsigned service_turn;
    struct rmx_agent *agent;
    /* Fetches land here, not in the caller's buffer, where they need the target's progress: a
     * timed-out one may still be answered later, and must not write into the caller's memory. */
    unsigned char *landing;
    size_t landing_len;
    uint64_t *reply;    /* the reply slot of fetching atomics (8 bytes, rmx-owned) */
    /* Requests that timed out while they could still write, and the rmx memory they land in:
     * kept until UCX is done with every one of them (rmx_ucx_reap_abandoned). */
    ucs_status_ptr_t *abandoned_reqs;
    int n_abandoned, cap_abandoned;
    void **abandoned_mem;
    int n_abandoned_mem, cap_abandoned_mem;
    struct rmx_am *am;  /* am_rma.c: handlers' state, operations in flight, its peers */
    const struct rmx_logger *log; /* the context's (engine/log.h): where UCX failures are told */
    int borrowed_context; /* a stream's: `context` is its parent's, `service` NULL */
} rmx_ucx_t;

/* Where operations to one peer go: its endpoint, and the active-message route when UCX would
 * serve RMA to it in software (tcp: am_rma.c), else NULL (UCP RMA: shared memory, self). */
typedef struct rmx_ucx_dest {
    ucp_ep_h ep;
    rmx_am_peer_t *am;
} rmx_ucx_dest_t;

/* Progress the worker once every this many in-place completions: UCX notices a dead peer
 * (keepalive, a reset socket) only inside ucp_worker_progress, and over shared memory puts, gets
 * and atomics complete in place without ever progressing, so a loop of them would otherwise go on
 * writing to a dead rank's memory forever. */
#define RMX_UCX_QUIET_PROGRESS 1024
/* Without the agent and without a need (rmx_ucx_t.serve_every_progress), the owner progresses the
 * service worker at one progress call in this many. */
#define RMX_UCX_SERVICE_PROGRESS 64

/* ---- set-up (ucx.c) */
/* log: the context's logger (engine/log.h), kept for the life of u. */
/* shared_workers: streams' workers will use the owner's context from other threads. */
int rmx_ucx_open(rmx_ucx_t *u, double timeout_s, int shared_workers,
                 const struct rmx_logger *log);
/* A stream's (engine/stream.c): a worker of parent's owner context, its own landing memory,
 * reply slot and active-message state; no service worker (peers are served by the parent). */
int rmx_ucx_open_stream(rmx_ucx_t *u, const rmx_ucx_t *parent);
void rmx_ucx_close(rmx_ucx_t *u);
/* The address peers connect to (the service worker's); own: the owner worker's (self). */
int rmx_ucx_worker_address(rmx_ucx_t *u, int own, void **addr, size_t *len);
void rmx_ucx_worker_address_release(rmx_ucx_t *u, int own, void *addr);
int rmx_ucx_ep_create(rmx_ucx_t *u, const void *addr, ucp_err_handler_cb_t on_error, void *arg,
                      ucp_ep_h *ep);
/* flush_first: complete outstanding operations (graceful); otherwise force-close (failed peer).
 * A force-close purges the endpoint's requests: none of them touches memory afterwards. */
void rmx_ucx_ep_close(rmx_ucx_t *u, ucp_ep_h ep, int flush_first);
/* addr NULL: UCP allocates (reachable one-sidedly over shared memory); *out_addr gets the address. */
int rmx_ucx_mem_map(rmx_ucx_t *u, void *addr, size_t len, ucp_mem_h *memh, void **out_addr);
void rmx_ucx_mem_unmap(rmx_ucx_t *u, ucp_mem_h memh);
int rmx_ucx_rkey_pack(rmx_ucx_t *u, ucp_mem_h memh, void **buf, size_t *len);
void rmx_ucx_rkey_buffer_release(void *buf);
int rmx_ucx_rkey_unpack(ucp_ep_h ep, const void *buf, ucp_rkey_h *rkey);
/* The local address of remote memory [raddr...] when this process can load and store it directly
 * (UCX shared memory), else NULL.  Operations on such memory complete in place. */
void *rmx_ucx_rkey_ptr(ucp_rkey_h rkey, uint64_t raddr);
int rmx_ucx_status(ucs_status_t st);
/* rmx_ucx_status(st) for a request that ended in st != UCS_OK, with UCX's own words on stderr:
 * at debug level when the peer failed or the request was cancelled (expected after a failure),
 * at error level otherwise.  Out of line: the failure path only. */
int rmx_ucx_failed(rmx_ucx_t *u, ucs_status_t st);
/* Flush n peers at once (one round trip, not n): every operation issued to them completes at
 * the target.  The first error, or RMX_ERR_TIMEOUT. */
int rmx_ucx_flush_eps(rmx_ucx_t *u, const rmx_ucx_dest_t *dests, int n);
/* Which transports an endpoint uses for RMA/AMO, into buf (for diagnostics and tests). */
int rmx_ucx_ep_describe(ucp_ep_h ep, char *buf, size_t len);
/* The same in short, from rmx_ucx_ep_describe: the transport names (distinct, space separated,
 * "-" for none) of the lanes that carry puts and gets (rma), atomics (amo) and active messages
 * (am).  Each buffer at least 2 bytes. */
int rmx_ucx_ep_transports(ucp_ep_h ep, char *rma, char *amo, char *am, size_t len);
/* 1 when some lane of ep is not shared memory (sysv, posix, self, cma, xpmem, knem): operations
 * on it may need the target's progress. */
int rmx_ucx_ep_needs_target_progress(ucp_ep_h ep);
/* 1 when some lane of ep is tcp: UCX would emulate RMA and atomics to that peer in software. */
int rmx_ucx_ep_uses_tcp(ucp_ep_h ep);
/* 1 when every lane that carries ep's puts and gets is one of UCX's memory-mapping transports
 * (sysv, posix, xpmem: uct_mm; self): their put is a copy into the target's memory, mapped in
 * this process, done when the put returns (uct_sm_ep_put_short/bcopy), so a put to memory UCX
 * maps here (rmx_ucx_rkey_ptr) is complete at the target without a flush.  0 when any lane is
 * another transport or ep cannot be described. */
int rmx_ucx_ep_rma_mapped(ucp_ep_h ep);
/* Timed-out requests that may still write into rmx memory: the requests are kept until they end,
 * the memory (malloc'd) until none of them is left. */
void rmx_ucx_abandon_req(rmx_ucx_t *u, ucs_status_ptr_t req);
void rmx_ucx_abandon_mem(rmx_ucx_t *u, void *mem);
/* Free the abandoned requests that have ended, and their memory once all have. */
void rmx_ucx_reap_abandoned(rmx_ucx_t *u);
/* The landing buffer for fetches, at least len bytes (NULL: out of memory). */
unsigned char *rmx_ucx_landing(rmx_ucx_t *u, size_t len);
/* The landing buffer may still be written by the abandoned requests: give it up. */
void rmx_ucx_landing_abandon(rmx_ucx_t *u);
/* Requests that may still touch the caller's memory timed out on ep: force-close ep (UCX purges
 * its requests: none of them touches memory afterwards), then release them.  The caller must
 * forget ep. */
void rmx_ucx_purge(rmx_ucx_t *u, ucp_ep_h ep, ucs_status_ptr_t *reqs, int n);

/* ---- RMA over active messages (am_rma.c) */
/* Its handlers on both workers (rmx_ucx_open), and their state freed (rmx_ucx_close). */
int rmx_am_open(rmx_ucx_t *u);
void rmx_am_close(rmx_ucx_t *u);
/* This rank's place in the job, before any route. */
int rmx_am_join(rmx_ucx_t *u, int rank, int size);
/* The route to rank's endpoint ep (not this rank's own): *am NULL where UCP RMA serves it. */
int rmx_am_route(rmx_ucx_t *u, ucp_ep_h ep, int rank, rmx_am_peer_t **am);
/* The peer failed (its endpoint's error callback): waits on it end with RMX_ERR_PEER, and what
 * it sent that has not been applied yet never will be, here or at the peers this rank tells
 * before it sends them anything more. */
void rmx_am_peer_failed(rmx_ucx_t *u, rmx_am_peer_t *am);
/* The data path, with rmx_ucx_put/get/amo/flush's contracts; reached through them. */
int rmx_am_put(rmx_ucx_t *u, rmx_am_peer_t *am, const void *src, size_t len, uint64_t raddr);
int rmx_am_get(rmx_ucx_t *u, rmx_am_peer_t *am, void *dst, size_t len, uint64_t raddr);
int rmx_am_amo(rmx_ucx_t *u, rmx_am_peer_t *am, ucp_atomic_op_t op, const void *operand,
               void *reply, size_t size, uint64_t raddr);
/* rmx_am_amo left in flight (reply, if any, written only while it is: its CSWAP new value is
 * read from it now); ended by exactly one rmx_am_wait, rmx_am_test or rmx_am_abandon. */
int rmx_am_amo_start(rmx_ucx_t *u, rmx_am_peer_t *am, ucp_atomic_op_t op, const void *operand,
                     void *reply, size_t size, uint64_t raddr, uint64_t *token);
/* A get left in flight, its bytes going to dst; ended by exactly one rmx_am_wait or
 * rmx_am_abandon. */
int rmx_am_get_start(rmx_ucx_t *u, rmx_am_peer_t *am, void *dst, size_t len, uint64_t raddr,
                     uint64_t *token);
/* Until it is answered; RMX_ERR_PEER once its peer failed, RMX_ERR_TIMEOUT after timeout_s.
 * Either way it has let go: a later answer is dropped. */
int rmx_am_wait(rmx_ucx_t *u, uint64_t token);
void rmx_am_abandon(rmx_ucx_t *u, uint64_t token);
/* Without waiting or progressing: 1 while it is neither answered nor failed, else what
 * rmx_am_wait would return, and then it has ended (the token is dead). */
int rmx_am_test(rmx_ucx_t *u, uint64_t token);
/* Packed runs: many short runs of one window at one peer in one message each way (a strided
 * section's small runs; engine/subarray_rma.c fills the pack, am_rma.c sends it and its handlers
 * apply it at the target).  The body is a sequence of records, each a header (rmx_am_run_t:
 * `count` runs of `len` bytes, the i-th at offset off + i * pitch from the window's offset
 * `first`: one record for a whole column) followed, for a put, by the runs' bytes; a packed
 * get's body holds the headers alone, and its answer is the runs' bytes back to back.  The
 * target checks the whole body before it writes or reads anything: every record inside the body,
 * exactly nrecs of them, each with at least one run, every run inside the window [0, span) the
 * origin names, a get's bytes as declared; it refuses anything else (a put: RMX_ERR_TRANSPORT
 * at the origin's next flush; a get: from its wait).  Bounded: body and a get's answer at most
 * RMX_AM_PACK_MAX bytes (AM_CHUNK, am_rma.c: no message is larger). */
#define RMX_AM_PACK_MAX (32u << 10)
typedef struct rmx_am_run {
    uint32_t off, len, count, pitch;
} rmx_am_run_t;
typedef struct rmx_am_pack {
    uint64_t base, span;    /* the window at the target: its address and size */
    uint64_t first;         /* window offset the records' offsets count from (the first run's) */
    uint32_t nrecs, nruns;  /* records in the body, runs they describe */
    size_t last;            /* body offset of the last record's header */
    rmx_am_run_t cur;       /* that header (the body's copy is kept up to date) */
    uint64_t next;          /* cur.count > 1: the offset from `first` that continues it */
    size_t len;             /* body bytes used */
    size_t bytes;           /* run bytes (a get's answer) */
    unsigned char body[RMX_AM_PACK_MAX];
} rmx_am_pack_t;

/* An empty pack for the window [base, base+span) at the target. */
static inline void rmx_am_pack_reset(rmx_am_pack_t *pk, uint64_t base, uint64_t span)
{
    pk->base = base;
    pk->span = span;
    pk->nrecs = 0;
    pk->nruns = 0;
    pk->len = 0;
    pk->bytes = 0;
}

/* Add the run [off, off+len) of the window (ascending: after the pack's last run), with room for
 * its bytes when `data` (a put): where they go in the body, or NULL when the pack has no room
 * for it (send it, reset, add again).  A run of the same length as the last record's, at the
 * next step of its progression, extends that record (a record of one run takes its pitch from
 * the second); any other starts a record.  A run longer than
 * RMX_AM_PACK_MAX - sizeof(rmx_am_run_t) never fits. */
static inline unsigned char *rmx_am_pack_add(rmx_am_pack_t *pk, uint64_t off, size_t len,
                                             int data)
{
    if (pk->nrecs == 0)
        pk->first = off;
    size_t bytes = data ? len : 0;
    if (len > RMX_AM_PACK_MAX || off < pk->first || off - pk->first > UINT32_MAX - len ||
        bytes > RMX_AM_PACK_MAX - pk->len || (!data && len > RMX_AM_PACK_MAX - pk->bytes))
        return NULL;
    uint64_t rel = off - pk->first;
    rmx_am_run_t *r = &pk->cur;
    if (pk->nrecs > 0 && r->len == len && r->count < UINT32_MAX &&
        (r->count > 1 ? rel == pk->next : rel >= (uint64_t)r->off + len)) {
        if (r->count == 1) {
            r->pitch = (uint32_t)(rel - r->off);
            pk->next = rel;
            memcpy(pk->body + pk->last + offsetof(rmx_am_run_t, pitch), &r->pitch,
                   sizeof(r->pitch));
        }
        r->count++;
        pk->next += r->pitch;
        /* the count alone: a copy of the whole header right after this store stalled (store
         * forwarding), at a quarter of the packing time of a long column */
        memcpy(pk->body + pk->last + offsetof(rmx_am_run_t, count), &r->count, sizeof(r->count));
    } else {
        if (sizeof(*r) + bytes > RMX_AM_PACK_MAX - pk->len)
            return NULL;
        *r = (rmx_am_run_t){.off = (uint32_t)rel, .len = (uint32_t)len, .count = 1, .pitch = 0};
        pk->last = pk->len;
        memcpy(pk->body + pk->len, r, sizeof(*r));
        pk->len += sizeof(*r);
        pk->nrecs++;
    }
    pk->len += bytes;
    pk->bytes += len;
    pk->nruns++;
    return pk->body + pk->len - bytes;
}

/* Send a packed put (its body holds the bytes): returns once the body may be reused; complete
 * at the target with the next flush, ordered with every other put to the peer as issued.
 * RMX_ERR_TIMEOUT: as rmx_ucx_put's (the endpoint was force-closed: the caller forgets it). */
int rmx_am_put_packed(rmx_ucx_t *u, rmx_am_peer_t *am, const rmx_am_pack_t *pk);
/* A packed get left in flight: its answer (pk->bytes, the runs back to back) goes to dst.  The
 * pack may be reused on return.  Ended by exactly one rmx_am_wait or rmx_am_abandon; timeouts
 * as rmx_am_put_packed's. */
int rmx_am_get_packed_start(rmx_ucx_t *u, rmx_am_peer_t *am, const rmx_am_pack_t *pk, void *dst,
                            uint64_t *token);
/* Every put and atomic sent to am[0..n) applied at its target; RMX_ERR_PEER for a peer that
 * failed, RMX_ERR_TIMEOUT after timeout_s, RMX_ERR_TRANSPORT when the target rejected a packed
 * put since the last flush. */
int rmx_am_flush(rmx_ucx_t *u, rmx_am_peer_t *const *am, int n);
/* The same for every peer, passing over those that failed (as UCP's worker flush). */
int rmx_am_flush_all(rmx_ucx_t *u);

/* ---- the progress agent (agent.c) */
/* Start the thread that serves `service` (sleeping on its event fd); idempotent. */
int rmx_ucx_agent_start(rmx_ucx_t *u);
/* Stop and join it; `service` is the owner thread's again. */
void rmx_ucx_agent_stop(rmx_ucx_t *u);
/* Serve the requests that have arrived for the service worker (by the agent, or here when it
 * does not run): one pass that began after this call, bounded (agent.c: peers streaming to
 * other windows do not hold it), before memory peers may have addressed is released. */
void rmx_ucx_drain(rmx_ucx_t *u);
/* CPU seconds the agent has used and the times it woke up (0 when it never ran). */
void rmx_ucx_agent_usage(rmx_ucx_t *u, double *cpu_s, uint64_t *wakeups);
/* Stop it and release what it holds (rmx_ucx_close). */
void rmx_ucx_agent_free(rmx_ucx_t *u);

/* ---- hot path */
static inline double rmx_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Progress this rank's operations, and serve peers' requests unless the agent does: at every
 * call where they need it (serve_every_progress), else now and then (RMX_UCX_SERVICE_PROGRESS). */
static inline unsigned rmx_ucx_progress(rmx_ucx_t *u)
{
    unsigned n = ucp_worker_progress(u->worker);
    if (!u->agent_running && u->service != NULL &&
        (u->serve_every_progress || ++u->service_turn % RMX_UCX_SERVICE_PROGRESS == 0))
        n += ucp_worker_progress(u->service);
    if (__builtin_expect(u->n_abandoned != 0, 0))
        rmx_ucx_reap_abandoned(u);
    return n;
}

/* One operation completed without waiting (in place, or staged by the tracker), or an idle
 * rmx_sync_memory: progress once in a while (RMX_UCX_QUIET_PROGRESS), for keepalive, and, without
 * the agent, to serve peers' requests: a rank that waits for a flag by calling rmx_sync_memory
 * in a loop is where the flag's put over tcp or to registered memory is served (before, only the
 * owner's worker was progressed here, and such a wait never ended: progress/flag_wait_*). */
static inline void rmx_ucx_tick(rmx_ucx_t *u)
{
    if (__builtin_expect(++u->since_progress >= RMX_UCX_QUIET_PROGRESS, 0)) {
        u->since_progress = 0;
        (void)rmx_ucx_progress(u);
    }
}

/* Whether the next rmx_ucx_tick progresses: a fast path that calls nothing leaves that call to
 * its general path, and otherwise counts the operation itself (++since_progress). */
static inline int rmx_ucx_tick_due(const rmx_ucx_t *u)
{
    return u->since_progress + 1 >= RMX_UCX_QUIET_PROGRESS;
}

/* From here until rmx_ucx_serve_end, a stream's waits (u) also serve peers through its parent's
 * service worker, when no agent does (RMX_PROGRESS=none): rmx_stream_create is a call of the
 * context, and peers wiring up their own streams at the same time wait for its answers while
 * it waits for theirs.  The owner thread holds the parent meanwhile (its lock, at MULTIPLE). */
static inline void rmx_ucx_serve_for(rmx_ucx_t *u, const rmx_ucx_t *parent)
{
    if (parent->agent_running)
        return;
    u->service = parent->service;
    u->serve_every_progress = 1;
}

/* The stream issues only again (before anything closes it: the service worker is the parent's). */
static inline void rmx_ucx_serve_end(rmx_ucx_t *u)
{
    u->service = NULL;
    u->serve_every_progress = 0;
}

/* The clock part of rmx_ucx_round_expired; out of line, as it runs once in 1024 rounds or
 * events.  An idle round also yields the core (2 cores, often more ranks: let the peer run). */
int rmx_ucx_deadline_passed(rmx_ucx_t *u, double *deadline, int busy);

/* Whether a wait's periodic check is due: `work` counts its rounds and the events their progress
 * handled, and the check comes every `every` of them.  Counted in rounds alone, a wait whose
 * rounds each served hundreds of a peer's messages (a stream of puts over tcp, ~2.5 ms a round)
 * read the clock once in 2.5 s, and a get with peer_timeout_s 0.5 s took 5-6 s, 2 runs in 3
 * (progress/a_wait_whose_worker_is_never_idle_...); counted on idle rounds alone, never. */
static inline int rmx_ucx_work_due(unsigned *work, unsigned events, unsigned every)
{
    *work += 1 + events;
    if (__builtin_expect(*work < every, 1))
        return 0;
    *work = 0;
    return 1;
}

/* A wait's round, whose progress handled `events`: 1 once the wait has lasted timeout_s.  The
 * clock is read once in 1024 rounds or events (rmx_ucx_work_due), busy or idle. */
static inline int rmx_ucx_round_expired(rmx_ucx_t *u, unsigned *work, unsigned events,
                                        double *deadline)
{
    return rmx_ucx_work_due(work, events, 1024) &&
           rmx_ucx_deadline_passed(u, deadline, events != 0);
}

/* What a wait does with a request that timed out. */
typedef enum {
    RMX_UCX_RELEASE,  /* it references no memory of the caller's (flush, close, a non-fetching
                         atomic): hand it to UCP, which frees it when it ends */
    RMX_UCX_KEEP,     /* it may still read or write memory: leave it to the caller, in flight */
} rmx_ucx_on_timeout_t;

/* rmx_ucx_wait_req for a request that did not complete when issued (ucx.c). */
int rmx_ucx_wait_issued(rmx_ucx_t *u, ucs_status_ptr_t req, rmx_ucx_on_timeout_t on_timeout);

/* Progress until req completes; RMX_OK, the mapped UCP error, or RMX_ERR_TIMEOUT (then what
 * happens to the request is `on_timeout`).  Completed at once (most operations over shared
 * memory) inline, the wait out of line. */
static inline int rmx_ucx_wait_req(rmx_ucx_t *u, ucs_status_ptr_t req,
                                   rmx_ucx_on_timeout_t on_timeout)
{
    if (__builtin_expect(req == NULL, 1)) {
        rmx_ucx_tick(u);
        return RMX_OK;
    }
    return rmx_ucx_wait_issued(u, req, on_timeout);
}

/* For requests that reference no caller memory once issued (flush, close). */
static inline int rmx_ucx_wait(rmx_ucx_t *u, ucs_status_ptr_t req)
{
    return rmx_ucx_wait_req(u, req, RMX_UCX_RELEASE);
}

/* For requests that may still read or write the caller's memory: on a timeout ep is force-closed
 * (rmx_ucx_purge) so that they no longer can; the caller must then forget ep. */
static inline int rmx_ucx_wait_or_purge(rmx_ucx_t *u, ucp_ep_h ep, ucs_status_ptr_t req)
{
    int rc = rmx_ucx_wait_req(u, req, RMX_UCX_KEEP);
    if (rc == RMX_ERR_TIMEOUT)
        rmx_ucx_purge(u, ep, &req, 1);
    return rc;
}

/* Returns once src may be reused (local completion); the target sees the data after a flush.
 * Only op_attr_mask is set: UCP reads no field the mask does not name, and zeroing the whole
 * 72-byte struct (a rep stos) cost more than the 8-byte put itself over shared memory.
 * RMX_ERR_TIMEOUT: the put could not even leave this rank (the target reads nothing); ep has
 * been force-closed so that UCX no longer reads src: the caller must forget it.
 * am: the peer's active-message route (tcp), else NULL; likewise below. */
static inline int rmx_ucx_put(rmx_ucx_t *u, ucp_ep_h ep, rmx_am_peer_t *am, const void *src,
                              size_t len, uint64_t raddr, ucp_rkey_h rkey)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = 0;
    if (ep == NULL)
        return RMX_ERR_PEER; /* closed after its peer failed (rmx_peers_reap) */
    if (__builtin_expect(am != NULL, 0))
        return rmx_am_put(u, am, src, len, raddr);
    return rmx_ucx_wait_or_purge(u, ep, ucp_put_nbx(ep, src, len, raddr, rkey, &prm));
}

/* Blocking: dst holds the remote bytes on return.  in_place: the route needs nothing of the target
 * (UCX shared memory, rmx_ucx_rkey_ptr), so the get writes dst directly; otherwise it lands in
 * rmx's landing buffer and is copied, so that an answer arriving after a timeout writes there
 * (over active messages rmx's reply handler copies it, only while the get still waits).
 * RMX_ERR_TIMEOUT with in_place: ep has been force-closed (as for rmx_ucx_put). */
static inline int rmx_ucx_get(rmx_ucx_t *u, ucp_ep_h ep, rmx_am_peer_t *am, void *dst,
                              size_t len, uint64_t raddr, ucp_rkey_h rkey, int in_place)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = 0; /* as in rmx_ucx_put */
    if (ep == NULL)
        return RMX_ERR_PEER; /* closed after its peer failed (rmx_peers_reap) */
    if (in_place) {
        return rmx_ucx_wait_or_purge(u, ep, ucp_get_nbx(ep, dst, len, raddr, rkey, &prm));
    }
    if (am != NULL)
        return rmx_am_get(u, am, dst, len, raddr);
    unsigned char *land = rmx_ucx_landing(u, len);
    if (land == NULL)
        return RMX_ERR_NOMEM;
    ucs_status_ptr_t req = ucp_get_nbx(ep, land, len, raddr, rkey, &prm);
    int rc = rmx_ucx_wait_req(u, req, RMX_UCX_KEEP);
    if (rc == RMX_OK)
        memcpy(dst, land, len);
    else if (rc == RMX_ERR_TIMEOUT) {
        rmx_ucx_abandon_req(u, req);
        rmx_ucx_landing_abandon(u);
    }
    return rc;
}

/* A fetching atomic whose reply goes through rmx's own slot, or any atomic over active messages
 * (rmx_ucx_amo); out of line. */
int rmx_ucx_amo_via_slot(rmx_ucx_t *u, ucp_ep_h ep, rmx_am_peer_t *am, ucp_atomic_op_t op,
                         const void *operand, void *reply, size_t size, uint64_t raddr,
                         ucp_rkey_h rkey);

/* One native atomic of 4 or 8 bytes.  reply NULL: no fetch (never for SWAP/CSWAP).
 * CSWAP: *operand is the comparand, *reply the new value in and the old value out.
 * UCP copies the operand when the call is issued.  The reply: in place (as for rmx_ucx_get) UCX
 * writes it at once; otherwise it goes through rmx's own slot (u->reply), so that a late one
 * never lands in the caller's memory.  RMX_ERR_TIMEOUT in place: ep has been force-closed.
 * Always inlined: the callers' constant arguments fold the branches away (an out-of-line call
 * cost fetch-add ~50 instructions). */
static inline __attribute__((always_inline)) int
rmx_ucx_amo(rmx_ucx_t *u, ucp_ep_h ep, rmx_am_peer_t *am, ucp_atomic_op_t op,
            const void *operand, void *reply, size_t size, uint64_t raddr, ucp_rkey_h rkey,
            int in_place)
{
    if (ep == NULL)
        return RMX_ERR_PEER; /* closed after its peer failed (rmx_peers_reap) */
    if (__builtin_expect(am != NULL, 0) || (reply != NULL && !in_place))
        return rmx_ucx_amo_via_slot(u, ep, am, op, operand, reply, size, raddr, rkey);
    ucp_request_param_t prm; /* only the fields the mask names, as in rmx_ucx_put */
    prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
    prm.datatype = ucp_dt_make_contig(size);
    if (reply == NULL)
        return rmx_ucx_wait(u, ucp_atomic_op_nbx(ep, op, operand, 1, raddr, rkey, &prm));
    prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    prm.reply_buffer = reply;
    return rmx_ucx_wait_or_purge(u, ep, ucp_atomic_op_nbx(ep, op, operand, 1, raddr, rkey, &prm));
}

/* Complete everything issued on ep, at origin and target. */
static inline int rmx_ucx_flush_ep(rmx_ucx_t *u, ucp_ep_h ep, rmx_am_peer_t *am)
{
    ucp_request_param_t prm;
    prm.op_attr_mask = 0; /* as in rmx_ucx_put: no 72-byte clear per completion */
    if (ep == NULL)
        return RMX_ERR_PEER; /* closed after its peer failed (rmx_peers_reap) */
    if (am != NULL)
        return rmx_am_flush(u, &am, 1);
    return rmx_ucx_wait(u, ucp_ep_flush_nbx(ep, &prm));
}

/* Complete everything issued to every peer. */
static inline int rmx_ucx_flush_worker(rmx_ucx_t *u)
{
    ucp_request_param_t prm = {.op_attr_mask = 0};
    int rc = rmx_ucx_wait(u, ucp_worker_flush_nbx(u->worker, &prm));
    int rc2 = rmx_am_flush_all(u);
    return rc != RMX_OK ? rc : rc2;
}

/* Orders later operations after earlier ones; completes nothing.  Active messages need no fence:
 * one endpoint's are applied in the order they were sent (am_rma.c). */
static inline int rmx_ucx_fence(rmx_ucx_t *u)
{
    ucs_status_t st = ucp_worker_fence(u->worker);
    return __builtin_expect(st == UCS_OK, 1) ? RMX_OK : rmx_ucx_failed(u, st);
}

#endif
