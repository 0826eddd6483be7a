/*
 * am_rma.c — put, get, atomics and flush over UCP active messages, for the peers UCX would serve
 * in software: those reached over tcp (every off-node peer without an RDMA NIC).
 *
 * Why rmx does it itself: over tcp UCX 1.13 emulates RMA with active messages of its own, and the
 * target answers every request (a put's completion, a get's bytes, an atomic's old value).  When
 * the requester has died meanwhile the answer cannot be sent, and UCX aborts the *target*
 * (ucp_request_try_send: "Fatal: unexpected error: Endpoint timeout", from ucp_put_handler,
 * ucp_progress_get_reply or ucp_progress_atomic_reply): one rank's death killed survivors.  UCP's
 * active-message API instead completes a send that failed with its error
 * (ucp_am_bcopy_handle_status_from_pending, ucp_am_zcopy_single_handle_status), so here rmx sends
 * the requests and the answers, and an answer to a dead requester just fails.  Shared memory and
 * self keep UCP's RMA: nothing of this runs there.
 *
 * The protocol.  Requests go from this rank's worker to the peer's service worker (ucx.h), where
 * the progress agent (or the owner) runs their handlers; answers go back on UCP's reply endpoint
 * to the requester's worker, where its owner thread handles them inside its waits.
 *   PUT    {raddr} + bytes            copied to raddr, then acknowledged (ACK)
 *   AMO    {raddr, operands, op, ...} applied with a CPU atomic (coherent with shared-memory
 *                                     peers' in-place atomics and UCX's); answered with the old
 *                                     value (REPLY) when fetching, else acknowledged (ACK)
 *   GET    {token, raddr, len}        answered with the bytes (REPLY), in chunks of AM_CHUNK
 *   PUTV   {window, first, nrecs} + records (runs' header, bytes)...  a packed put (ucx.h
 *                                     rmx_am_pack_t): checked whole, then every run copied and
 *                                     acknowledged once (ACK), or refused whole (NACK)
 *   GETV   {token, window, first, nrecs, bytes} + runs' headers  a packed get: answered with
 *                                     the runs' bytes back to back in one REPLY (at most
 *                                     RMX_AM_PACK_MAX), or refused (REPLY at offset REJECTED)
 *   DEAD   {rank}                     the sender has seen `rank` fail (announce); not answered
 *   REPLY  {token, offset} + bytes    to the requester
 *   ACK    {rank}                     to the requester: one more of its writes applied at `rank`
 *   NACK   {rank}                     to the requester: its packed put was malformed or reached
 *                                     outside the window it named; nothing of it was written
 * Every request names its origin's rank: a target drops what comes from a rank it knows to have
 * failed (dead_from).  Every handler applies its request completely before it returns (memcpy,
 * the atomic): nothing of a request is left for later, so draining the service worker
 * (rmx_ucx_drain, before a window is unmapped) still leaves nothing behind, and answers hold
 * their bytes in memory of their own.
 *
 * Completion: a flush waits until every write (put chunk, non-fetching atomic) sent to the peer
 * is acknowledged, as UCX's own emulation does.  The acknowledgement leaves from the handler
 * that applied the write: a target that sees a write and then stops serving (RMX_PROGRESS=none,
 * into a bootstrap barrier or a computation) has already answered it.  A flush request answered
 * later instead left the origin waiting for a target that had seen its notification and moved
 * on (progress/created_windows_create_free_and_sync_without_agent over tcp hung 1 run in 8).
 *
 * Ordering, which fences rely on: UCP delivers one endpoint's active messages in the order they
 * were sent, and the handlers run in that order.  That holds because (UCX 1.13)
 *  - every message goes over the endpoint's AM lane: only eager protocols are used
 *    (UCP_AM_SEND_FLAG_EAGER: no rendezvous), single-fragment messages use the AM lane, and the
 *    fragments of longer ones the "am_bw" lanes, which are the AM lane alone with one eager rail
 *    (MAX_EAGER_RAILS=1, UCX's default, forced on the owner's context in rmx_ucx_open);
 *  - UCT tcp puts one lane on one socket, and while a message is partly sent every later send is
 *    refused and queued behind it, in order (uct_tcp_ep_check_tx_res, its pending queue);
 *  - a message of several fragments is handled when its last one arrives, before anything sent
 *    after it.
 * UCP's tag matching relies on the same in-order delivery of eager messages.  So overlapping puts
 * of one segment land in issue order with no fence between them (rmx_ucx_fence does nothing to
 * active messages), and a DEAD notice is handled before anything its sender sent after it.
 * tests/test_am_rma.c checks the first.
 *
 * Waiting: gets and atomics are operations with a token (am_op_t).  The answer is accepted only
 * while its operation still waits; a wait that ends early (RMX_ERR_TIMEOUT after timeout_s,
 * RMX_ERR_PEER once the peer's endpoint failed) gives the token up, and a later answer is
 * dropped.  So a get's or a fetching atomic's bytes are copied into the caller's memory by rmx's
 * reply handler only while the call that asked for them still runs (the reply handler runs in
 * the owner's progress only); they never land there later.
 */
#include <stdlib.h>
#include <string.h>
#include "ucx.h"

/* Active-message ids: requests on the service worker, answers on the owner's. */
enum { AM_PUT = 1, AM_AMO, AM_GET, AM_DEAD, AM_REPLY, AM_ACK, AM_PUTV, AM_GETV, AM_NACK };

/* Puts and get answers go in messages of at most this many bytes of data: no message is large
 * enough for UCP to want rendezvous were it allowed, and a huge transfer never needs one huge
 * reassembly buffer at its receiver. */
#define AM_CHUNK (32u << 10)
/* A large put leaves this many chunks in flight before it waits for them. */
#define PUTS_IN_FLIGHT 16

/* ---------------------------------------------------------------- wire headers */

/* No implicit padding in any header: a compound literal zeroes members, not padding, and the
 * padding would go on the wire uninitialized (valgrind: sendmsg points to uninitialised bytes). */
typedef struct { uint64_t raddr; uint32_t origin, pad; } put_req_t;
typedef struct { uint64_t token, raddr, len; uint32_t origin, pad; } get_req_t;
typedef struct { uint32_t origin, rank; } dead_req_t; /* "rank has failed" */
typedef struct {
    uint64_t raddr;
    uint64_t operand;   /* CSWAP: the comparand */
    uint64_t value;     /* CSWAP: the new value */
    uint64_t token;     /* fetching: where the old value goes */
    uint32_t origin;
    uint8_t op;         /* ucp_atomic_op_t */
    uint8_t size;       /* 4 or 8 */
    uint8_t fetch;
    uint8_t pad;
} amo_req_t;
/* Packed runs (ucx.h rmx_am_pack_t): the window's address and size, and the offset the runs'
 * offsets count from; the runs are the message's data. */
typedef struct { uint64_t base, span, first; uint32_t origin, nrecs; } putv_req_t;
typedef struct { uint64_t token, base, span, first, bytes; uint32_t origin, nrecs; } getv_req_t;
typedef struct { uint64_t token, offset; } reply_t;
/* reply_t.offset of the answer to a packed get the target rejected: no operation's offset, so
 * the requester's wait ends with RMX_ERR_TRANSPORT (on_reply). */
#define REJECTED UINT64_MAX
typedef struct { uint32_t rank; } ack_t;

_Static_assert(sizeof(put_req_t) == 16 && sizeof(get_req_t) == 32 && sizeof(amo_req_t) == 40 &&
                   sizeof(putv_req_t) == 32 && sizeof(getv_req_t) == 48,
               "an active-message header has implicit padding");

/* ---------------------------------------------------------------- state */

struct rmx_am_peer {
    ucp_ep_h ep;        /* NULL once force-closed (a put timed out) */
    int rank;
    int failed;         /* its endpoint failed (rmx_am_peer_failed), or was force-closed */
    int announced;      /* the other peers have been told (announce) */
    dead_req_t notice;  /* what they are told: UCP reads it until those sends end */
    uint64_t writes;    /* requests to be acknowledged: put chunks, non-fetching atomics */
    uint64_t acked;     /* acknowledgements received (or given up: the peer failed) */
    int rejected;       /* a packed put was refused (NACK) since the last flush reported it */
};

typedef enum { OP_GET, OP_FETCH, OP_POST } op_kind_t;

/* One operation in flight.  Its header is what UCP sends, read until the send completes. */
typedef struct am_op {
    uint64_t token;         /* sequence << 32 | slot; 0: the slot is free */
    op_kind_t kind;         /* POST: a non-fetching atomic, over once sent (its ACK counts) */
    int ended, rc;          /* answered (or failed to send), and how */
    rmx_am_peer_t *peer;
    ucs_status_ptr_t req;   /* the request's send while UCP still has it */
    unsigned char *dst;     /* GET: the caller's buffer; FETCH: the caller's reply */
    size_t len, got;
    union {
        get_req_t get;
        getv_req_t getv;
        amo_req_t amo;
    } hdr;
} am_op_t;

struct rmx_am {
    uint32_t me;            /* this rank, named in every request */
    int size;
    /* [size]: the ranks this one knows to have failed (dead_from).  Written by the owner (its
     * endpoints' error callbacks) and by on_dead (another rank's notice), read by the handlers:
     * by whoever serves the service worker (the agent). */
    int *dead;
    int unannounced;        /* failures the other peers have not been told of yet */
    am_op_t **ops;          /* by slot; NULL: allocated at next use (its op was abandoned) */
    uint32_t *free_slots;
    uint32_t nops, nfree, cap;
    uint32_t seq;
    rmx_am_peer_t **peers;  /* every active-message route, for flush_all */
    int npeers, cap_peers;
    rmx_am_peer_t **by_rank; /* [size]: the route to each rank, NULL for UCP's */
    /* [RMX_AM_PACK_MAX]: where on_getv gathers its answer.  The service worker's handlers run
     * one at a time (the agent's, or the owner's while no agent runs). */
    unsigned char *gather;
};

#define OP_PENDING 1 /* op_poll: neither answered nor given up (RMX_* codes are <= 0) */

/* ---------------------------------------------------------------- operations and tokens */

static am_op_t *op_find(struct rmx_am *am, uint64_t token)
{
    uint32_t slot = (uint32_t)token;
    if (token == 0 || slot >= am->nops)
        return NULL;
    am_op_t *o = am->ops[slot];
    return o != NULL && o->token == token ? o : NULL;
}

static am_op_t *op_new(rmx_ucx_t *u, rmx_am_peer_t *p, op_kind_t kind)
{
    struct rmx_am *am = u->am;
    if (am->nfree == 0 && am->nops == am->cap) {
        uint32_t cap = am->cap ? 2 * am->cap : 64;
        am_op_t **ops = realloc(am->ops, cap * sizeof(*ops));
        if (ops == NULL)
            return NULL;
        am->ops = ops;
        uint32_t *fs = realloc(am->free_slots, cap * sizeof(*fs));
        if (fs == NULL)
            return NULL;
        am->free_slots = fs;
        am->cap = cap;
    }
    uint32_t slot;
    if (am->nfree > 0) {
        slot = am->free_slots[--am->nfree];
    } else {
        slot = am->nops++;
        am->ops[slot] = NULL;
    }
    am_op_t *o = am->ops[slot];
    if (o == NULL && (o = am->ops[slot] = malloc(sizeof(*o))) == NULL) {
        am->free_slots[am->nfree++] = slot;
        return NULL;
    }
    memset(o, 0, sizeof(*o));
    if (++am->seq == 0)
        am->seq = 1;
    o->token = (uint64_t)am->seq << 32 | slot;
    o->kind = kind;
    o->peer = p;
    return o;
}

/* The operation is over for its caller: its token is dead from here on.  A send UCP still has
 * keeps the operation's memory (its header) until it ends (rmx_ucx_abandon_req/_mem). */
static void op_end(rmx_ucx_t *u, am_op_t *o)
{
    struct rmx_am *am = u->am;
    uint32_t slot = (uint32_t)o->token;
    if (o->req != NULL) {
        rmx_ucx_abandon_req(u, o->req);
        rmx_ucx_abandon_mem(u, o);
        am->ops[slot] = NULL;
    } else {
        o->token = 0;
    }
    am->free_slots[am->nfree++] = slot;
}

static void announce(rmx_ucx_t *u);

/* Every request goes out here; a failure this rank has learned of is announced first. */
static ucs_status_ptr_t am_send(rmx_ucx_t *u, ucp_ep_h ep, unsigned id, const void *hdr,
                                size_t hlen, const void *data, size_t len, uint32_t flags)
{
    if (__builtin_expect(u->am->unannounced, 0))
        announce(u);
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
        .flags = UCP_AM_SEND_FLAG_EAGER | flags,
    };
    return ucp_am_send_nbx(ep, id, hdr, hlen, data, len, &prm);
}

/* Send the operation's request (its header, no data). */
static int op_send(rmx_ucx_t *u, am_op_t *o, unsigned id, size_t hlen, uint32_t flags)
{
    ucs_status_ptr_t r = am_send(u, o->peer->ep, id, &o->hdr, hlen, NULL, 0, flags);
    if (UCS_PTR_IS_ERR(r))
        return rmx_ucx_failed(u, UCS_PTR_STATUS(r));
    o->req = r;
    o->ended = r == NULL && o->kind == OP_POST;
    return RMX_OK;
}

/* RMX_OK or an error once the operation is over, else OP_PENDING. */
static int op_poll(am_op_t *o)
{
    if (o->req != NULL) {
        ucs_status_t st = ucp_request_check_status(o->req);
        if (st != UCS_INPROGRESS) {
            ucp_request_free(o->req);
            o->req = NULL;
            if (!o->ended && (st != UCS_OK || o->kind == OP_POST)) {
                o->ended = 1;
                o->rc = rmx_ucx_status(st);
            }
        }
    }
    if (o->ended)
        return o->rc;
    if (o->peer->failed)
        return RMX_ERR_PEER; /* its answer will never come */
    return OP_PENDING;
}

int rmx_am_wait(rmx_ucx_t *u, uint64_t token)
{
    if (token == 0)
        return RMX_OK;
    am_op_t *o = op_find(u->am, token);
    if (o == NULL)
        return RMX_ERR_TRANSPORT; /* not a live token: a bug of the caller's */
    double deadline = 0;
    unsigned work = 0;
    int rc = op_poll(o);
    if (rc != OP_PENDING)
        rmx_ucx_tick(u); /* never progressed: keepalive's turn now and then, as rmx_ucx_wait */
    else
        u->since_progress = 0;
    while (rc == OP_PENDING) {
        unsigned events = rmx_ucx_progress(u);
        if (rmx_ucx_round_expired(u, &work, events, &deadline)) {
            rc = RMX_ERR_TIMEOUT;
            break;
        }
        rc = op_poll(o);
    }
    op_end(u, o);
    return rc;
}

int rmx_am_test(rmx_ucx_t *u, uint64_t token)
{
    if (token == 0)
        return RMX_OK;
    am_op_t *o = op_find(u->am, token);
    if (o == NULL)
        return RMX_ERR_TRANSPORT; /* not a live token: a bug of the caller's */
    int rc = op_poll(o);
    if (rc != OP_PENDING)
        op_end(u, o);
    return rc;
}

void rmx_am_abandon(rmx_ucx_t *u, uint64_t token)
{
    am_op_t *o = op_find(u->am, token);
    if (o != NULL)
        op_end(u, o);
}

/* ---------------------------------------------------------------- the requester's side */

static int reachable(const rmx_am_peer_t *p)
{
    return p->ep != NULL && !p->failed;
}

void rmx_am_peer_failed(rmx_ucx_t *u, rmx_am_peer_t *am)
{
    am->failed = 1;
    __atomic_store_n(&u->am->dead[am->rank], 1, __ATOMIC_RELEASE);
    u->am->unannounced = 1;
}

/* Tell every live peer of the failures learned since, before anything else is sent to it
 * (am_send): each then drops what the dead rank still has on its way (dead_from). */
static void announce(rmx_ucx_t *u)
{
    struct rmx_am *am = u->am;
    if (!am->unannounced)
        return;
    am->unannounced = 0;
    for (int f = 0; f < am->npeers; f++) {
        rmx_am_peer_t *gone = am->peers[f];
        if (!gone->failed || gone->announced)
            continue;
        gone->announced = 1;
        gone->notice = (dead_req_t){.origin = am->me, .rank = (uint32_t)gone->rank};
        for (int i = 0; i < am->npeers; i++) {
            if (!reachable(am->peers[i]))
                continue;
            ucs_status_ptr_t r = am_send(u, am->peers[i]->ep, AM_DEAD, &gone->notice,
                                         sizeof(gone->notice), NULL, 0, 0);
            if (r != NULL && !UCS_PTR_IS_ERR(r))
                ucp_request_free(r); /* UCP releases it when sent; nobody waits for it */
        }
    }
}

/* Wait for the chunks of a put UCP still reads.  One that cannot leave this rank in timeout_s
 * has the endpoint force-closed, so that UCP lets go of src (as rmx_ucx_wait_or_purge). */
static int puts_complete(rmx_ucx_t *u, rmx_am_peer_t *p, ucs_status_ptr_t *req, int *n)
{
    int rc = RMX_OK;
    if (*n == 0)
        rmx_ucx_tick(u);
    for (int i = 0; i < *n; i++) {
        int rc1 = rmx_ucx_wait_req(u, req[i], RMX_UCX_KEEP);
        if (rc1 == RMX_ERR_TIMEOUT) {
            rmx_ucx_purge(u, p->ep, req + i, *n - i);
            p->ep = NULL; /* the caller forgets it too (rmx_transfer_done) */
            p->failed = 1;
            p->acked = p->writes; /* this call reports the loss */
            rc = rc1;
            break;
        }
        rc = rc != RMX_OK ? rc : rc1;
    }
    *n = 0;
    return rc;
}

int rmx_am_put(rmx_ucx_t *u, rmx_am_peer_t *p, const void *src, size_t len, uint64_t raddr)
{
    if (!reachable(p))
        return RMX_ERR_PEER;
    const unsigned char *from = src;
    put_req_t hdr[PUTS_IN_FLIGHT]; /* each read by UCP until its chunk's send completes */
    ucs_status_ptr_t req[PUTS_IN_FLIGHT];
    int n = 0, rc = RMX_OK;
    size_t off = 0;
    do {
        size_t chunk = len - off < AM_CHUNK ? len - off : AM_CHUNK;
        hdr[n] = (put_req_t){.raddr = raddr + off, .origin = u->am->me};
        ucs_status_ptr_t r = am_send(u, p->ep, AM_PUT, &hdr[n], sizeof(hdr[n]), from + off,
                                     chunk, UCP_AM_SEND_FLAG_REPLY);
        if (UCS_PTR_IS_ERR(r)) {
            rc = rmx_ucx_failed(u, UCS_PTR_STATUS(r));
            break;
        }
        p->writes++;
        if (r != NULL)
            req[n++] = r;
        off += chunk;
        if (n == PUTS_IN_FLIGHT && (rc = puts_complete(u, p, req, &n)) != RMX_OK)
            return rc;
    } while (off < len);
    int rc2 = puts_complete(u, p, req, &n);
    return rc != RMX_OK ? rc : rc2;
}

/* A get's bookkeeping: the op its answer will find (by token), landing len bytes at dst. */
static am_op_t *get_op(rmx_ucx_t *u, rmx_am_peer_t *p, void *dst, size_t len, uint64_t *token,
                       int *rc)
{
    *token = 0;
    *rc = RMX_ERR_PEER;
    if (!reachable(p))
        return NULL;
    *rc = RMX_ERR_NOMEM;
    am_op_t *o = op_new(u, p, OP_GET);
    if (o == NULL)
        return NULL;
    *rc = RMX_OK;
    o->dst = dst;
    o->len = len;
    return o;
}

int rmx_am_get_start(rmx_ucx_t *u, rmx_am_peer_t *p, void *dst, size_t len, uint64_t raddr,
                     uint64_t *token)
{
    int rc;
    am_op_t *o = get_op(u, p, dst, len, token, &rc);
    if (o == NULL)
        return rc;
    o->hdr.get = (get_req_t){.token = o->token, .raddr = raddr, .len = len, .origin = u->am->me};
    rc = op_send(u, o, AM_GET, sizeof(o->hdr.get), UCP_AM_SEND_FLAG_REPLY);
    if (rc != RMX_OK) {
        op_end(u, o);
        return rc;
    }
    *token = o->token;
    return RMX_OK;
}

int rmx_am_get(rmx_ucx_t *u, rmx_am_peer_t *p, void *dst, size_t len, uint64_t raddr)
{
    uint64_t token;
    int rc = rmx_am_get_start(u, p, dst, len, raddr, &token);
    return rc != RMX_OK ? rc : rmx_am_wait(u, token);
}

int rmx_am_put_packed(rmx_ucx_t *u, rmx_am_peer_t *p, const rmx_am_pack_t *pk)
{
    if (!reachable(p))
        return RMX_ERR_PEER;
    putv_req_t h = {.base = pk->base, .span = pk->span, .first = pk->first,
                    .origin = u->am->me, .nrecs = pk->nrecs};
    ucs_status_ptr_t r = am_send(u, p->ep, AM_PUTV, &h, sizeof(h), pk->body, pk->len,
                                 UCP_AM_SEND_FLAG_REPLY);
    if (UCS_PTR_IS_ERR(r))
        return rmx_ucx_failed(u, UCS_PTR_STATUS(r));
    p->writes++; /* one acknowledgement (or refusal) for the whole message */
    int n = r != NULL;
    return puts_complete(u, p, &r, &n); /* the header and body are the caller's */
}

int rmx_am_get_packed_start(rmx_ucx_t *u, rmx_am_peer_t *p, const rmx_am_pack_t *pk, void *dst,
                            uint64_t *token)
{
    int rc;
    am_op_t *o = get_op(u, p, dst, pk->bytes, token, &rc);
    if (o == NULL)
        return rc;
    o->hdr.getv = (getv_req_t){.token = o->token, .base = pk->base, .span = pk->span,
                               .first = pk->first, .bytes = pk->bytes, .origin = u->am->me,
                               .nrecs = pk->nrecs};
    ucs_status_ptr_t r = am_send(u, p->ep, AM_GETV, &o->hdr.getv, sizeof(o->hdr.getv), pk->body,
                                 pk->len, UCP_AM_SEND_FLAG_REPLY);
    rc = UCS_PTR_IS_ERR(r) ? rmx_ucx_failed(u, UCS_PTR_STATUS(r)) : RMX_OK;
    if (rc == RMX_OK) { /* the body is the caller's: UCP must be done with it */
        int n = r != NULL;
        rc = puts_complete(u, p, &r, &n);
    }
    if (rc != RMX_OK) {
        op_end(u, o);
        return rc;
    }
    *token = o->token;
    return RMX_OK;
}

static uint64_t load_operand(const void *p, size_t size)
{
    if (size == 4) {
        uint32_t v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

int rmx_am_amo(rmx_ucx_t *u, rmx_am_peer_t *p, ucp_atomic_op_t op, const void *operand,
               void *reply, size_t size, uint64_t raddr)
{
    uint64_t token;
    int rc = rmx_am_amo_start(u, p, op, operand, reply, size, raddr, &token);
    return rc != RMX_OK ? rc : rmx_am_wait(u, token);
}

int rmx_am_amo_start(rmx_ucx_t *u, rmx_am_peer_t *p, ucp_atomic_op_t op, const void *operand,
                     void *reply, size_t size, uint64_t raddr, uint64_t *token)
{
    *token = 0;
    if (!reachable(p))
        return RMX_ERR_PEER;
    if (size != 4 && size != 8)
        return RMX_ERR_UNSUPPORTED;
    am_op_t *o = op_new(u, p, reply != NULL ? OP_FETCH : OP_POST);
    if (o == NULL)
        return RMX_ERR_NOMEM;
    o->dst = reply;
    o->len = size;
    o->hdr.amo = (amo_req_t){
        .raddr = raddr,
        .operand = load_operand(operand, size),
        .value = op == UCP_ATOMIC_OP_CSWAP && reply != NULL ? load_operand(reply, size) : 0,
        .token = o->token,
        .origin = u->am->me,
        .op = (uint8_t)op,
        .size = (uint8_t)size,
        .fetch = reply != NULL,
    };
    int rc = op_send(u, o, AM_AMO, sizeof(o->hdr.amo), UCP_AM_SEND_FLAG_REPLY);
    if (rc != RMX_OK) {
        op_end(u, o);
        return rc;
    }
    if (reply == NULL)
        p->writes++; /* complete at the target once acknowledged (a flush), as UCP's */
    *token = o->token;
    return RMX_OK;
}

/* Every write sent to p acknowledged, or p unreachable (its writes lost: reported once, unless
 * quiet). */
static int flushed(rmx_am_peer_t *p, int quiet, int *rc)
{
    if (p->rejected && p->acked >= p->writes) {
        p->rejected = 0;
        if (*rc == RMX_OK)
            *rc = RMX_ERR_TRANSPORT; /* the target refused a packed put: nothing of it written */
    }
    if (!reachable(p)) {
        p->acked = p->writes;
        if (!quiet && *rc == RMX_OK)
            *rc = RMX_ERR_PEER;
        return 1;
    }
    return p->acked >= p->writes;
}

/* No write is issued while a flush waits (the thread in it holds the context: at
 * RMX_THREAD_MULTIPLE a transfer's wait keeps the context's lock, rmx.h): `writes` stays put. */
static int flush_peers(rmx_ucx_t *u, rmx_am_peer_t *const *peers, int n, int quiet)
{
    int rc = RMX_OK, i = 0;
    double deadline = 0;
    unsigned work = 0;
    while (i < n && flushed(peers[i], quiet, &rc))
        i++;
    if (i == n)
        return rc;
    u->since_progress = 0;
    for (;;) {
        unsigned events = rmx_ucx_progress(u);
        if (rmx_ucx_round_expired(u, &work, events, &deadline))
            return rc != RMX_OK ? rc : RMX_ERR_TIMEOUT;
        while (i < n && flushed(peers[i], quiet, &rc))
            i++;
        if (i == n)
            return rc;
    }
}

int rmx_am_flush(rmx_ucx_t *u, rmx_am_peer_t *const *peers, int n)
{
    return flush_peers(u, peers, n, 0);
}

/* Like UCP's worker flush, it passes over peers that failed: calls that need them say so. */
int rmx_am_flush_all(rmx_ucx_t *u)
{
    struct rmx_am *am = u->am;
    return am == NULL ? RMX_OK : flush_peers(u, am->peers, am->npeers, 1);
}

/* An answer, on the owner's worker: accepted only for an operation still waiting for it. */
static ucs_status_t on_reply(void *arg, const void *header, size_t hlen, void *data, size_t len,
                             const ucp_am_recv_param_t *param)
{
    (void)param;
    rmx_ucx_t *u = arg;
    reply_t h;
    if (hlen != sizeof(h))
        return UCS_OK;
    memcpy(&h, header, sizeof(h));
    am_op_t *o = op_find(u->am, h.token);
    if (o == NULL || o->ended)
        return UCS_OK; /* given up (timed out, peer failed): dropped */
    if (o->kind == OP_GET && h.offset <= o->len && len <= o->len - h.offset) {
        memcpy(o->dst + h.offset, data, len);
        o->got += len;
        o->ended = o->got >= o->len;
    } else if (o->kind == OP_FETCH && len == o->len) {
        memcpy(o->dst, data, len);
        o->ended = 1;
    } else {
        o->ended = 1;
        o->rc = RMX_ERR_TRANSPORT; /* not what was asked */
    }
    return UCS_OK;
}

/* The peer an acknowledgement comes from (h.rank), or NULL for a malformed one. */
static rmx_am_peer_t *acked_by(void *arg, const void *header, size_t hlen)
{
    struct rmx_am *am = ((rmx_ucx_t *)arg)->am;
    ack_t h;
    if (hlen != sizeof(h))
        return NULL;
    memcpy(&h, header, sizeof(h));
    return h.rank < (uint32_t)am->size ? am->by_rank[h.rank] : NULL;
}

/* One more write applied at h.rank, on the owner's worker. */
static ucs_status_t on_ack(void *arg, const void *header, size_t hlen, void *data, size_t len,
                           const ucp_am_recv_param_t *param)
{
    (void)data;
    (void)len;
    (void)param;
    rmx_am_peer_t *p = acked_by(arg, header, hlen);
    if (p != NULL)
        p->acked++;
    return UCS_OK;
}

/* A packed put the target refused (on_putv), on the owner's worker: it counts as answered, and
 * the next flush reports it. */
static ucs_status_t on_nack(void *arg, const void *header, size_t hlen, void *data, size_t len,
                            const ucp_am_recv_param_t *param)
{
    (void)data;
    (void)len;
    (void)param;
    rmx_am_peer_t *p = acked_by(arg, header, hlen);
    if (p != NULL) {
        p->rejected = 1;
        p->acked++;
    }
    return UCS_OK;
}

/* ---------------------------------------------------------------- the target's side */

/* A send of ours that UCP kept: it owned `user_data`, the answer's header and bytes. */
static void answer_sent(void *req, ucs_status_t status, void *user_data)
{
    (void)status; /* failed: the requester is gone, and nobody waits for this */
    free(user_data);
    ucp_request_free(req);
}

/* Answer a request (message id, its header and bytes).  Where the message fits in UCP's inline
 * path it is copied out at once; otherwise header and bytes go to a buffer of ours that the send
 * owns until it ends: UCP reads them until then, and the bytes are window memory, which may be
 * unmapped meanwhile.  A requester that has died makes the send fail, and that is all that
 * happens. */
static void answer(ucp_ep_h ep, unsigned id, const void *hdr, size_t hlen, const void *data,
                   size_t len)
{
    if (ep == NULL)
        return; /* sent without UCP_AM_SEND_FLAG_REPLY: cannot be answered */
    ucp_request_param_t now = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL,
        .flags = UCP_AM_SEND_FLAG_EAGER,
    };
    ucs_status_ptr_t r = ucp_am_send_nbx(ep, id, hdr, hlen, data, len, &now);
    if (!UCS_PTR_IS_ERR(r) || UCS_PTR_STATUS(r) != UCS_ERR_NO_RESOURCE) {
        if (r != NULL && !UCS_PTR_IS_ERR(r))
            ucp_request_free(r); /* not in UCX 1.13: FORCE_IMM_CMPL returns no request */
        return;
    }
    unsigned char *copy = malloc(hlen + len);
    if (copy == NULL)
        return; /* the requester's wait times out */
    memcpy(copy, hdr, hlen);
    if (len > 0)
        memcpy(copy + hlen, data, len);
    ucp_request_param_t later = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK |
                        UCP_OP_ATTR_FIELD_USER_DATA,
        .flags = UCP_AM_SEND_FLAG_EAGER,
        .cb.send = answer_sent,
        .user_data = copy,
    };
    r = ucp_am_send_nbx(ep, id, copy, hlen, copy + hlen, len, &later);
    if (r == NULL || UCS_PTR_IS_ERR(r))
        free(copy); /* sent at once, or failed */
}

static void reply(ucp_ep_h ep, uint64_t token, uint64_t offset, const void *data, size_t len)
{
    reply_t h = {.token = token, .offset = offset};
    answer(ep, AM_REPLY, &h, sizeof(h), data, len);
}

/* The write is applied: tell its origin (the acknowledgement its flush waits for). */
static void ack(const rmx_ucx_t *u, ucp_ep_h ep)
{
    ack_t h = {.rank = u->am->me};
    answer(ep, AM_ACK, &h, sizeof(h), NULL, 0);
}

/* The packed put is refused: nothing of it was written. */
static void nack(const rmx_ucx_t *u, ucp_ep_h ep)
{
    ack_t h = {.rank = u->am->me};
    answer(ep, AM_NACK, &h, sizeof(h), NULL, 0);
}

/* Eager only (UCP_AM_SEND_FLAG_EAGER): the bytes are all here.  Anything else is not ours. */
static int well_formed(size_t hlen, size_t want, const ucp_am_recv_param_t *param)
{
    return hlen == want && !(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV);
}

/* A request from a rank this one knows to have failed is dropped, not applied.  A dead rank's
 * last requests may still be arriving long after it died: what its kernel had queued on the
 * socket is sent after the process is gone, and it may reach this rank after the survivors have
 * seen the failure and written the same bytes again (peer/killed_while_it_streams_puts_tcp,
 * 2 runs in 100 before this; UCP's own put handler dropped what came from a failed endpoint,
 * but its endpoint fails only at the end of that stream).  This rank knows of the failure once
 * its own endpoint to the dead rank has failed, or once another rank has told it so: every rank
 * tells every other before it sends them anything after learning of a failure
 * (announce), and one endpoint's messages are handled in order, so whatever a survivor
 * sends after the failure is applied after the last of the dead rank's (1 run in 100 with the
 * first alone: the target's owner had not yet noticed). */
static int dead_from(const rmx_ucx_t *u, uint32_t origin)
{
    const struct rmx_am *am = u->am;
    return origin < (uint32_t)am->size && __atomic_load_n(&am->dead[origin], __ATOMIC_ACQUIRE);
}

static ucs_status_t on_put(void *arg, const void *header, size_t hlen, void *data, size_t len,
                           const ucp_am_recv_param_t *param)
{
    put_req_t h;
    if (!well_formed(hlen, sizeof(h), param))
        return UCS_OK;
    memcpy(&h, header, sizeof(h));
    if (dead_from(arg, h.origin))
        return UCS_OK;
    if (len > 0)
        memcpy((void *)(uintptr_t)h.raddr, data, len); /* trusted, as UCP's own put handler */
    ack(arg, param->reply_ep);
    return UCS_OK;
}

/* The records of a packed body (ucx.h), checked before anything is touched: exactly nrecs of
 * them fill the body (with_data: each header followed by its runs' bytes), each has a run (of
 * at least one byte: the packer makes no empty ones, and a count of empty runs would only cost
 * the target time), and every run lies inside the window [base, base+span) from offset
 * `first`.  Their run bytes go to *bytes.  No sum below overflows: the fields are 32-bit, the
 * sums 64-bit. */
static int runs_check(const unsigned char *body, size_t len, uint32_t nrecs, uint64_t base,
                      uint64_t span, uint64_t first, int with_data, uint64_t *bytes)
{
    if (base > UINT64_MAX - span || first > span)
        return 0;
    uint64_t room = span - first, total = 0;
    size_t at = 0;
    for (uint32_t i = 0; i < nrecs; i++) {
        rmx_am_run_t r;
        if (len - at < sizeof(r))
            return 0;
        memcpy(&r, body + at, sizeof(r));
        at += sizeof(r);
        uint64_t end = (uint64_t)r.off + (uint64_t)(r.count - 1) * r.pitch + r.len;
        uint64_t n = (uint64_t)r.count * r.len;
        if (r.count == 0 || r.len == 0 || end > room || n > RMX_AM_PACK_MAX)
            return 0;
        if (with_data) {
            if (len - at < n)
                return 0;
            at += n;
        }
        total += n;
        if (total > RMX_AM_PACK_MAX)
            return 0;
    }
    *bytes = total;
    return at == len;
}

/* count runs of len bytes, pitch apart from w, written from the packed bytes at p (put) or
 * gathered there; the common element sizes as constant-size moves, not calls. */
#define PROGRESSION_COPY(n)                                                                   \
    for (uint32_t i = 0; i < count; i++, w += pitch, p += (n)) {                              \
        if (put)                                                                              \
            memcpy(w, p, (n));                                                                \
        else                                                                                  \
            memcpy(p, w, (n));                                                                \
    }
static void progression_copy(unsigned char *w, size_t pitch, unsigned char *p, size_t len,
                             uint32_t count, int put)
{
    switch (len) {
    case 4:  PROGRESSION_COPY(4);  break;
    case 8:  PROGRESSION_COPY(8);  break;
    case 16: PROGRESSION_COPY(16); break;
    default: PROGRESSION_COPY(len); break;
    }
}

/* The runs of a checked packed body, window side `win` (the address of offset `first`): written
 * from the body (put) or gathered into out (get). */
static void runs_copy(unsigned char *win, const unsigned char *body, size_t len, int put,
                      unsigned char *out)
{
    size_t at = 0;
    while (at < len) {
        rmx_am_run_t r;
        memcpy(&r, body + at, sizeof(r));
        at += sizeof(r);
        unsigned char *w = win + r.off;
        if (put) {
            progression_copy(w, r.pitch, (unsigned char *)body + at, r.len, r.count, 1);
            at += (size_t)r.count * r.len;
        } else {
            progression_copy(w, r.pitch, out, r.len, r.count, 0);
            out += (size_t)r.count * r.len;
        }
    }
}

static ucs_status_t on_putv(void *arg, const void *header, size_t hlen, void *data, size_t len,
                            const ucp_am_recv_param_t *param)
{
    putv_req_t h;
    uint64_t bytes;
    if (!well_formed(hlen, sizeof(h), param))
        return UCS_OK;
    memcpy(&h, header, sizeof(h));
    if (dead_from(arg, h.origin))
        return UCS_OK;
    if (!runs_check(data, len, h.nrecs, h.base, h.span, h.first, 1, &bytes)) {
        nack(arg, param->reply_ep);
        return UCS_OK;
    }
    runs_copy((unsigned char *)(uintptr_t)(h.base + h.first), data, len, 1, NULL);
    ack(arg, param->reply_ep);
    return UCS_OK;
}

static ucs_status_t on_getv(void *arg, const void *header, size_t hlen, void *data, size_t len,
                            const ucp_am_recv_param_t *param)
{
    rmx_ucx_t *u = arg;
    getv_req_t h;
    uint64_t bytes;
    if (!well_formed(hlen, sizeof(h), param))
        return UCS_OK;
    memcpy(&h, header, sizeof(h));
    if (dead_from(u, h.origin))
        return UCS_OK;
    if (!runs_check(data, len, h.nrecs, h.base, h.span, h.first, 0, &bytes) ||
        bytes != h.bytes) {
        reply(param->reply_ep, h.token, REJECTED, NULL, 0);
        return UCS_OK;
    }
    runs_copy((unsigned char *)(uintptr_t)(h.base + h.first), data, len, 0, u->am->gather);
    reply(param->reply_ep, h.token, 0, u->am->gather, bytes);
    return UCS_OK;
}

/* CPU atomics: coherent with what shared-memory peers and UCX's self and shm transports do to
 * the same words in place. */
static uint32_t amo32(uint32_t *w, unsigned op, uint32_t x, uint32_t value)
{
    switch (op) {
    case UCP_ATOMIC_OP_ADD:  return __atomic_fetch_add(w, x, __ATOMIC_SEQ_CST);
    case UCP_ATOMIC_OP_AND:  return __atomic_fetch_and(w, x, __ATOMIC_SEQ_CST);
    case UCP_ATOMIC_OP_OR:   return __atomic_fetch_or(w, x, __ATOMIC_SEQ_CST);
    case UCP_ATOMIC_OP_XOR:  return __atomic_fetch_xor(w, x, __ATOMIC_SEQ_CST);
    case UCP_ATOMIC_OP_SWAP: return __atomic_exchange_n(w, x, __ATOMIC_SEQ_CST);
    case UCP_ATOMIC_OP_CSWAP:
        __atomic_compare_exchange_n(w, &x, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return x; /* the old value, whether or not it matched */
    default:                 return 0; /* not one rmx sends */
    }
}

static uint64_t amo64(uint64_t *w, unsigned op, uint64_t x, uint64_t value)
{
    switch (op) {
    case UCP_ATOMIC_OP_ADD:  return __atomic_fetch_add(w, x, __ATOMIC_SEQ_CST);
    case UCP_ATOMIC_OP_AND:  return __atomic_fetch_and(w, x, __ATOMIC_SEQ_CST);
    case UCP_ATOMIC_OP_OR:   return __atomic_fetch_or(w, x, __ATOMIC_SEQ_CST);
    case UCP_ATOMIC_OP_XOR:  return __atomic_fetch_xor(w, x, __ATOMIC_SEQ_CST);
    case UCP_ATOMIC_OP_SWAP: return __atomic_exchange_n(w, x, __ATOMIC_SEQ_CST);
    case UCP_ATOMIC_OP_CSWAP:
        __atomic_compare_exchange_n(w, &x, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return x;
    default:                 return 0;
    }
}

static ucs_status_t on_amo(void *arg, const void *header, size_t hlen, void *data, size_t len,
                           const ucp_am_recv_param_t *param)
{
    (void)data;
    (void)len;
    amo_req_t h;
    if (!well_formed(hlen, sizeof(h), param))
        return UCS_OK;
    memcpy(&h, header, sizeof(h));
    if (dead_from(arg, h.origin))
        return UCS_OK;
    void *w = (void *)(uintptr_t)h.raddr;
    uint32_t old32 = 0;
    uint64_t old64 = 0;
    if (h.size == 4)
        old32 = amo32(w, h.op, (uint32_t)h.operand, (uint32_t)h.value);
    else if (h.size == 8)
        old64 = amo64(w, h.op, h.operand, h.value);
    if (!h.fetch)
        ack(arg, param->reply_ep);
    else if (h.size == 4)
        reply(param->reply_ep, h.token, 0, &old32, sizeof(old32));
    else
        reply(param->reply_ep, h.token, 0, &old64, sizeof(old64));
    return UCS_OK;
}

static ucs_status_t on_get(void *arg, const void *header, size_t hlen, void *data, size_t len,
                           const ucp_am_recv_param_t *param)
{
    (void)data;
    (void)len;
    get_req_t h;
    if (!well_formed(hlen, sizeof(h), param))
        return UCS_OK;
    memcpy(&h, header, sizeof(h));
    if (dead_from(arg, h.origin))
        return UCS_OK;
    const unsigned char *from = (const unsigned char *)(uintptr_t)h.raddr;
    uint64_t off = 0;
    do { /* at least one answer, even for no bytes */
        uint64_t n = h.len - off < AM_CHUNK ? h.len - off : AM_CHUNK;
        reply(param->reply_ep, h.token, off, from + off, n);
        off += n;
    } while (off < h.len);
    return UCS_OK;
}

/* Another rank tells this one that `rank` has failed (announce). */
static ucs_status_t on_dead(void *arg, const void *header, size_t hlen, void *data, size_t len,
                            const ucp_am_recv_param_t *param)
{
    (void)data;
    (void)len;
    rmx_ucx_t *u = arg;
    dead_req_t h;
    if (!well_formed(hlen, sizeof(h), param))
        return UCS_OK;
    memcpy(&h, header, sizeof(h));
    if (h.rank < (uint32_t)u->am->size)
        __atomic_store_n(&u->am->dead[h.rank], 1, __ATOMIC_RELEASE);
    return UCS_OK;
}

/* ---------------------------------------------------------------- set-up */

static int set_handler(ucp_worker_h worker, unsigned id, ucp_am_recv_callback_t cb, void *arg)
{
    ucp_am_handler_param_t prm = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
        .id = id,
        .flags = UCP_AM_FLAG_WHOLE_MSG,
        .cb = cb,
        .arg = arg,
    };
    return rmx_ucx_status(ucp_worker_set_am_recv_handler(worker, &prm));
}

int rmx_am_open(rmx_ucx_t *u)
{
    u->am = calloc(1, sizeof(*u->am));
    if (u->am == NULL || (u->am->gather = malloc(RMX_AM_PACK_MAX)) == NULL)
        return RMX_ERR_NOMEM;
    int rc = RMX_OK;
    if (u->service != NULL) { /* a stream's has none: it only issues (ucx.h) */
        rc = set_handler(u->service, AM_PUT, on_put, u);
        if (rc == RMX_OK)
            rc = set_handler(u->service, AM_PUTV, on_putv, u);
        if (rc == RMX_OK)
            rc = set_handler(u->service, AM_GETV, on_getv, u);
        if (rc == RMX_OK)
            rc = set_handler(u->service, AM_AMO, on_amo, u);
        if (rc == RMX_OK)
            rc = set_handler(u->service, AM_GET, on_get, u);
        if (rc == RMX_OK)
            rc = set_handler(u->service, AM_DEAD, on_dead, u);
    }
    if (rc == RMX_OK)
        rc = set_handler(u->worker, AM_REPLY, on_reply, u);
    if (rc == RMX_OK)
        rc = set_handler(u->worker, AM_ACK, on_ack, u);
    if (rc == RMX_OK)
        rc = set_handler(u->worker, AM_NACK, on_nack, u);
    return rc;
}

int rmx_am_join(rmx_ucx_t *u, int rank, int size)
{
    struct rmx_am *am = u->am;
    am->dead = calloc((size_t)size, sizeof(*am->dead));
    am->by_rank = calloc((size_t)size, sizeof(*am->by_rank));
    if (am->dead == NULL || am->by_rank == NULL)
        return RMX_ERR_NOMEM;
    am->me = (uint32_t)rank;
    am->size = size;
    return RMX_OK;
}

int rmx_am_route(rmx_ucx_t *u, ucp_ep_h ep, int rank, rmx_am_peer_t **out)
{
    struct rmx_am *am = u->am;
    *out = NULL;
    if (!rmx_ucx_ep_uses_tcp(ep))
        return RMX_OK;
    if (am->npeers == am->cap_peers) {
        int cap = am->cap_peers ? 2 * am->cap_peers : 8;
        rmx_am_peer_t **peers = realloc(am->peers, (size_t)cap * sizeof(*peers));
        if (peers == NULL)
            return RMX_ERR_NOMEM;
        am->peers = peers;
        am->cap_peers = cap;
    }
    rmx_am_peer_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return RMX_ERR_NOMEM;
    p->ep = ep;
    p->rank = rank;
    am->peers[am->npeers++] = p;
    am->by_rank[rank] = p;
    *out = p;
    return RMX_OK;
}

/* After the workers are gone: no handler runs and no send is left. */
void rmx_am_close(rmx_ucx_t *u)
{
    struct rmx_am *am = u->am;
    if (am == NULL)
        return;
    for (uint32_t i = 0; i < am->nops; i++)
        free(am->ops[i]);
    for (int i = 0; i < am->npeers; i++)
        free(am->peers[i]);
    free(am->ops);
    free(am->free_slots);
    free(am->dead);
    free(am->by_rank);
    free(am->peers);
    free(am->gather);
    free(am);
    u->am = NULL;
}
