/*
 * ucx.c — set-up and tear-down of the UCP objects rmx uses: one context and one worker per rmx
 * context, endpoints with peer error handling, memory maps and rkeys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ucx.h"
#include "../engine/log.h"

int rmx_ucx_status(ucs_status_t st)
{
    switch (st) {
    case UCS_OK:
        return RMX_OK;
    case UCS_ERR_NO_MEMORY:
    case UCS_ERR_NO_RESOURCE:
        return RMX_ERR_NOMEM;
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_REJECTED:
    case UCS_ERR_CANCELED:
    case UCS_ERR_NOT_CONNECTED:
        return RMX_ERR_PEER;
    case UCS_ERR_TIMED_OUT:
        return RMX_ERR_TIMEOUT;
    case UCS_ERR_UNSUPPORTED:
        return RMX_ERR_UNSUPPORTED;
    default:
        return RMX_ERR_TRANSPORT;
    }
}

/* A peer that failed, a request cancelled by a force-close or one that timed out: expected
 * after a failure, which the caller reports (RMX_ERR_PEER, RMX_ERR_TIMEOUT). */
static int peer_class(ucs_status_t st)
{
    int rc = rmx_ucx_status(st);
    return rc == RMX_ERR_PEER || rc == RMX_ERR_TIMEOUT;
}

int rmx_ucx_failed(rmx_ucx_t *u, ucs_status_t st)
{
    rmx_logf(u->log, peer_class(st) ? RMX_LOG_DEBUG : RMX_LOG_ERROR,
             "a UCX request failed: %s (%s)", ucs_status_string(st),
             rmx_strerror(rmx_ucx_status(st)));
    return rmx_ucx_status(st);
}

/* A UCX set-up call failed: its own status string and what to try, then the rmx code. */
static int setup_failed(const rmx_ucx_t *u, const char *call, ucs_status_t st, const char *hint)
{
    rmx_logf(u->log, RMX_LOG_ERROR, "%s: %s%s%s", call, ucs_status_string(st),
             hint[0] ? "; " : "", hint);
    return rmx_ucx_status(st);
}

#define UCX_TLS_HINT                                                                          \
    "check UCX_TLS and UCX_NET_DEVICES (`ucx_info -d` lists the transports and devices of "  \
    "this machine)"

/* UCX_TLS unset, "all", an exclusion list ("^..."), or naming a shared-memory transport. */
static int shared_memory_may_be_used(void)
{
    const char *tls = getenv("UCX_TLS");
    if (tls == NULL || *tls == '\0' || *tls == '^')
        return 1;
    static const char *const shm_names[] = {"all", "sm", "shm", "posix", "sysv", "mm"};
    for (size_t i = 0; i < sizeof(shm_names) / sizeof(shm_names[0]); i++)
        if (strstr(tls, shm_names[i]) != NULL)
            return 1;
    return 0;
}

static int open_issuer(rmx_ucx_t *u);

int rmx_ucx_open(rmx_ucx_t *u, double timeout_s, int shared_workers,
                 const struct rmx_logger *log)
{
    memset(u, 0, sizeof(*u));
    u->timeout_s = timeout_s;
    u->log = log;
    /* Endpoints use peer error handling (a dead rank must not hang the others).  UCX 1.13 then
     * silently drops the shared-memory transports unless they are told to support it; without
     * this, local ranks would talk over tcp.  These are transport (UCT) settings, which
     * ucp_config_modify rejects, so they go through the environment; a user's explicit
     * UCX_*_ERROR_HANDLING wins (setenv does not overwrite). */
    if (shared_memory_may_be_used()) { /* else UCX warns about unused variables */
        setenv("UCX_POSIX_ERROR_HANDLING", "y", 0);
        setenv("UCX_SYSV_ERROR_HANDLING", "y", 0);
    }
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK)
        return setup_failed(u, "ucp_config_read", st,
                            "check the UCX_* variables of the environment (`ucx_info -c` lists "
                            "them)");

    /* Keepalive is how UCX notices a peer that died without closing (kill -9) on shared memory
     * and tcp; its default (20 s) is longer than our whole timeout. */
    if (getenv("UCX_KEEPALIVE_INTERVAL") == NULL && timeout_s > 0) {
        char interval[32];
        snprintf(interval, sizeof(interval), "%.3fs", timeout_s / 4);
        (void)ucp_config_modify(config, "KEEPALIVE_INTERVAL", interval);
    }

    /* The owner's context: every operation this rank issues.  One lane for a message's eager
     * fragments (UCX's default, whatever the environment says): rmx's active messages to one
     * peer must arrive in the order they were sent (am_rma.c), which several would not keep. */
    (void)ucp_config_modify(config, "MAX_EAGER_RAILS", "1");

    /* Windows are allocated by UCP.  Its default methods end with thp and heap, which hand out
     * recycled memory; without them every allocation is a fresh mapping (shared memory segments,
     * huge pages, mmap), which the kernel gives zeroed, so rmx_win_allocate need not write every
     * page to zero it: a large window costs neither the time nor the memory until it is used (the
     * coarray heap, libcaf_rmx, is 256 MiB per image).  A user's UCX_ALLOC_PRIO wins, and then
     * windows are zeroed by hand. */
    if (getenv("UCX_ALLOC_PRIO") == NULL &&
        ucp_config_modify(config, "ALLOC_PRIO", "md:sysv,md:posix,huge,mmap") == UCS_OK)
        u->alloc_zeroed = 1;
    /* shared_workers (RMX_THREAD_MULTIPLE): streams' workers of this context run in their own
     * threads, and UCP then guards the context's shared state (registration cache, memory
     * domains) itself; their data paths take no lock of UCP's. */
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM,
        .mt_workers_shared = shared_workers != 0,
    };
    st = ucp_init(&params, config, &u->context);

    /* The service context: windows are mapped here, and its worker is where peers' operations
     * arrive.  WAKEUP: the agent sleeps on the worker's event fd.  Adaptive progress off: it
     * deactivates an interface no endpoint of the worker uses and re-activates it on its next
     * event, and in UCX 1.13 that goes wrong for a worker whose endpoints UCX made itself (for
     * peers' requests) once a failed peer's are discarded: the shared-memory interface was left
     * inactive with live peers on it, and the agent never saw their requests again
     * (tests/test_peer_failure.c under RMX_WIN_MEMORY=user, 1 run in 2).  Its own context,
     * because every interface active costs each progress call a poll of each (tcp's is a
     * system call): on the owner's worker that made a 4-rank sync_all 15x slower.  The
     * registrations of this context are what peers' rkeys name; the owner's endpoints reach
     * the service workers, so they unpack them.  Its structures are touched by the owner
     * (mapping) and the agent (serving): UCP's context lock. */
    if (st == UCS_OK) {
        if (getenv("UCX_ADAPTIVE_PROGRESS") == NULL)
            (void)ucp_config_modify(config, "ADAPTIVE_PROGRESS", "n");
        params.features |= UCP_FEATURE_WAKEUP;
        params.mt_workers_shared = 1;
        st = ucp_init(&params, config, &u->service_context);
    }
    ucp_config_release(config);
    if (st != UCS_OK) {
        rmx_ucx_close(u);
        return setup_failed(u, "ucp_init", st, UCX_TLS_HINT);
    }

    /* Served by one thread at a time: the owner's until the agent starts, then the agent's. */
    ucp_worker_params_t sp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE | UCP_WORKER_PARAM_FIELD_EVENTS,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,
        .events = UCP_WAKEUP_RMA | UCP_WAKEUP_AMO | UCP_WAKEUP_RX | UCP_WAKEUP_TX,
    };
    st = ucp_worker_create(u->service_context, &sp, &u->service);
    if (st != UCS_OK) {
        rmx_ucx_close(u);
        return setup_failed(u, "ucp_worker_create", st, UCX_TLS_HINT);
    }
    return open_issuer(u);
}

/* The issuing side: `worker` in `context` (one thread's: the owner's or a stream's), its reply
 * slot, and the active-message handlers (on `service` too when there is one: before any peer
 * can address this rank).  On failure u is closed. */
static int open_issuer(rmx_ucx_t *u)
{
    ucp_worker_params_t wp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SINGLE, /* one thread's only (see rmx.h) */
    };
    ucs_status_t st = ucp_worker_create(u->context, &wp, &u->worker);
    u->reply = malloc(sizeof(*u->reply));
    if (st != UCS_OK || u->reply == NULL) {
        rmx_ucx_close(u);
        return st != UCS_OK ? setup_failed(u, "ucp_worker_create", st, UCX_TLS_HINT)
                            : RMX_ERR_NOMEM;
    }
    int rc = rmx_am_open(u);
    if (rc != RMX_OK)
        rmx_ucx_close(u);
    return rc;
}

int rmx_ucx_open_stream(rmx_ucx_t *u, const rmx_ucx_t *parent)
{
    memset(u, 0, sizeof(*u));
    u->timeout_s = parent->timeout_s;
    u->log = parent->log;
    u->alloc_zeroed = parent->alloc_zeroed;
    u->context = parent->context;
    u->borrowed_context = 1;
    return open_issuer(u);
}

void rmx_ucx_close(rmx_ucx_t *u)
{
    rmx_ucx_agent_free(u);
    /* Every endpoint is closed by now, which ended (purged) every abandoned request. */
    for (int i = 0; i < 1000 && u->n_abandoned > 0 && u->worker != NULL; i++)
        (void)rmx_ucx_progress(u);
    rmx_ucx_reap_abandoned(u);
    if (u->service != NULL)
        ucp_worker_destroy(u->service);
    if (u->worker != NULL)
        ucp_worker_destroy(u->worker);
    if (u->service_context != NULL)
        ucp_cleanup(u->service_context);
    if (u->context != NULL && !u->borrowed_context)
        ucp_cleanup(u->context);
    rmx_am_close(u);
    u->service = u->worker = NULL;
    u->context = u->service_context = NULL;
    if (u->n_abandoned == 0) { /* else a request might still write there: keep it */
        for (int i = 0; i < u->n_abandoned_mem; i++)
            free(u->abandoned_mem[i]);
        free(u->abandoned_reqs);
        free(u->abandoned_mem);
        u->abandoned_reqs = NULL;
        u->abandoned_mem = NULL;
        u->n_abandoned_mem = u->cap_abandoned = u->cap_abandoned_mem = 0;
    }
    free(u->landing);
    free(u->reply);
    u->landing = NULL;
    u->reply = NULL;
    u->landing_len = 0;
}

int rmx_ucx_worker_address(rmx_ucx_t *u, int own, void **addr, size_t *len)
{
    ucp_address_t *a;
    ucs_status_t st = ucp_worker_get_address(own ? u->worker : u->service, &a, len);
    *addr = a;
    return st == UCS_OK ? RMX_OK : setup_failed(u, "ucp_worker_get_address", st, "");
}

void rmx_ucx_worker_address_release(rmx_ucx_t *u, int own, void *addr)
{
    ucp_worker_release_address(own ? u->worker : u->service, addr);
}

int rmx_ucx_ep_create(rmx_ucx_t *u, const void *addr, ucp_err_handler_cb_t on_error, void *arg,
                      ucp_ep_h *ep)
{
    ucp_ep_params_t ep_params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = addr,
        .err_mode = UCP_ERR_HANDLING_MODE_PEER,
        .err_handler = {.cb = on_error, .arg = arg},
    };
    ucs_status_t st = ucp_ep_create(u->worker, &ep_params, ep);
    return st == UCS_OK ? RMX_OK
                        : setup_failed(u, "ucp_ep_create", st,
                                       "no transport reaches that peer: " UCX_TLS_HINT
                                       ", on every node alike");
}

void rmx_ucx_ep_close(rmx_ucx_t *u, ucp_ep_h ep, int flush_first)
{
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
        .flags = flush_first ? 0 : UCP_EP_CLOSE_FLAG_FORCE,
    };
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &prm);
    if (rmx_ucx_wait(u, req) == RMX_ERR_TIMEOUT && flush_first) {
        /* The peer never answered the graceful close: release the endpoint's resources anyway. */
        prm.flags = UCP_EP_CLOSE_FLAG_FORCE;
        (void)rmx_ucx_wait(u, ucp_ep_close_nbx(ep, &prm));
    }
}

int rmx_ucx_flush_eps(rmx_ucx_t *u, const rmx_ucx_dest_t *dests, int n)
{
    ucs_status_ptr_t *reqs = calloc((size_t)n + 1, sizeof(*reqs));
    rmx_am_peer_t **ams = calloc((size_t)n + 1, sizeof(*ams));
    if (reqs == NULL || ams == NULL) {
        free(reqs);
        free(ams);
        return RMX_ERR_NOMEM;
    }
    ucp_request_param_t prm = {.op_attr_mask = 0};
    int nams = 0;
    for (int i = 0; i < n; i++) {
        if (dests[i].am != NULL)
            ams[nams++] = dests[i].am;
        else
            reqs[i] = ucp_ep_flush_nbx(dests[i].ep, &prm);
    }
    /* Each wait progresses the worker, which advances all of them; a later wait finds its request
     * done or nearly so, so the total time is that of the slowest peer. */
    int rc = nams > 0 ? rmx_am_flush(u, ams, nams) : RMX_OK;
    for (int i = 0; i < n; i++) {
        if (dests[i].am != NULL)
            continue;
        int rc1 = rmx_ucx_wait(u, reqs[i]);
        if (rc == RMX_OK)
            rc = rc1;
    }
    free(reqs);
    free(ams);
    return rc;
}

int rmx_ucx_mem_map(rmx_ucx_t *u, void *addr, size_t len, ucp_mem_h *memh, void **out_addr)
{
    ucp_mem_map_params_t mp = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS,
        .address = addr,
        .length = len,
        .flags = addr == NULL ? UCP_MEM_MAP_ALLOCATE : 0,
    };
    ucs_status_t st = ucp_mem_map(u->service_context, &mp, memh);
    if (st != UCS_OK) {
        rmx_logf(u->log, RMX_LOG_ERROR, "ucp_mem_map of %zu bytes%s: %s; %s", len,
                 addr == NULL ? " (UCP-allocated)" : " at the caller's address",
                 ucs_status_string(st),
                 st == UCS_ERR_INVALID_PARAM ? "is the range mapped memory of this process?"
                 : addr == NULL ? "/dev/shm or memory may be full (df /dev/shm)"
                                : "the memory could not be registered (ulimit -l?)");
        return st == UCS_ERR_INVALID_PARAM ? RMX_ERR_ARG : rmx_ucx_status(st);
    }
    ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
    st = ucp_mem_query(*memh, &attr);
    if (st != UCS_OK) {
        ucp_mem_unmap(u->service_context, *memh);
        return setup_failed(u, "ucp_mem_query", st, "");
    }
    *out_addr = attr.address;
    return RMX_OK;
}

void rmx_ucx_mem_unmap(rmx_ucx_t *u, ucp_mem_h memh)
{
    ucp_mem_unmap(u->service_context, memh);
}

int rmx_ucx_rkey_pack(rmx_ucx_t *u, ucp_mem_h memh, void **buf, size_t *len)
{
    ucs_status_t st = ucp_rkey_pack(u->service_context, memh, buf, len);
    return st == UCS_OK ? RMX_OK : setup_failed(u, "ucp_rkey_pack", st, "");
}

void rmx_ucx_rkey_buffer_release(void *buf)
{
    ucp_rkey_buffer_release(buf);
}

int rmx_ucx_rkey_unpack(ucp_ep_h ep, const void *buf, ucp_rkey_h *rkey)
{
    if (ep == NULL)
        return RMX_ERR_PEER; /* the peer failed and its endpoint is closed */
    ucs_status_t st = ucp_ep_rkey_unpack(ep, buf, rkey);
    if (st != UCS_OK)
        rmx_logf(NULL, peer_class(st) ? RMX_LOG_DEBUG : RMX_LOG_ERROR,
                 "ucp_ep_rkey_unpack: %s; a peer's memory cannot be reached: are all ranks "
                 "using the same UCX and UCX_TLS?", ucs_status_string(st));
    return rmx_ucx_status(st);
}

int rmx_ucx_ep_describe(ucp_ep_h ep, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return RMX_ERR_ARG;
    FILE *f = fmemopen(buf, len, "w");
    if (f == NULL)
        return RMX_ERR_NOMEM;
    ucp_ep_print_info(ep, f);
    fclose(f);
    buf[len - 1] = '\0';
    return RMX_OK;
}

/* Append word to the space-separated list in buf (len bytes) unless it is there already. */
static void add_word(char *buf, size_t len, const char *word, size_t wlen)
{
    size_t used = strlen(buf);
    for (const char *p = buf; *p != '\0';) {
        size_t n = strcspn(p, " ");
        if (n == wlen && strncmp(p, word, wlen) == 0)
            return;
        p += n + (p[n] == ' ');
    }
    if (used + (used > 0) + wlen + 1 > len)
        return;
    if (used > 0)
        buf[used++] = ' ';
    memcpy(buf + used, word, wlen);
    buf[used + wlen] = '\0';
}

int rmx_ucx_ep_transports(ucp_ep_h ep, char *rma, char *amo, char *am, size_t len)
{
    char info[8192];
    if (len < 2)
        return RMX_ERR_ARG;
    rma[0] = amo[0] = am[0] = '\0';
    int rc = ep == NULL ? RMX_ERR_PEER : rmx_ucx_ep_describe(ep, info, sizeof(info));
    if (rc != RMX_OK)
        return rc;
    /* Lanes: "lane[i]:  <n>:<tl>/<dev> md[..] -> md[..]/<tl>/... <flags: amo#k am am_bw#k ...>"
     * (indexes up to UCP_MAX_LANES, 16 in UCX 1.13); the RMA protocols name their lane:
     * "put[i]: 0..<short>..". */
    enum { MAX_LANES = 32 };
    char tl[MAX_LANES][32] = {{0}};
    for (const char *p = strstr(info, "lane["); p != NULL; p = strstr(p + 1, "lane[")) {
        int i = atoi(p + 5);
        const char *eol = strchr(p, '\n');
        const char *name = strchr(p, ':');
        if (i < 0 || i >= MAX_LANES || name == NULL || (name = strchr(name + 1, ':')) == NULL ||
            (eol != NULL && name > eol))
            continue;
        name++;
        size_t n = strcspn(name, "/ \n");
        snprintf(tl[i], sizeof(tl[i]), "%.*s", (int)n, name);
        size_t line = eol != NULL ? (size_t)(eol - p) : strlen(p);
        char flags[512];
        snprintf(flags, sizeof(flags), "%.*s ", (int)line, p);
        if (strstr(flags, " amo#") != NULL)
            add_word(amo, len, tl[i], strlen(tl[i]));
        if (strstr(flags, " am ") != NULL)
            add_word(am, len, tl[i], strlen(tl[i]));
    }
    static const char *const ops[] = {"put[", "get["};
    for (size_t k = 0; k < 2; k++)
        for (const char *p = strstr(info, ops[k]); p != NULL; p = strstr(p + 1, ops[k])) {
            int i = atoi(p + 4);
            if (i >= 0 && i < MAX_LANES && tl[i][0] != '\0')
                add_word(rma, len, tl[i], strlen(tl[i]));
        }
    char *lists[] = {rma, amo, am};
    for (size_t k = 0; k < 3; k++)
        if (lists[k][0] == '\0')
            strcpy(lists[k], "-");
    return RMX_OK;
}

/* 1 when some lane of ep runs over one of names[0..n) (want 1), or over none of them (want 0).
 * An endpoint that cannot be described counts as matching. */
static int some_lane(ucp_ep_h ep, const char *const *names, size_t n, int want)
{
    char info[8192];
    if (ep == NULL || rmx_ucx_ep_describe(ep, info, sizeof(info)) != RMX_OK)
        return 1;
    /* ucp_ep_print_info lists one lane a line: "lane[i]: <n>:<tl>/<dev>.<...> ..." */
    for (const char *p = strstr(info, "lane["); p != NULL; p = strstr(p + 1, "lane[")) {
        const char *colon = strchr(p, ':');
        if (colon == NULL)
            break;
        const char *tl = strchr(colon + 1, ':');
        const char *eol = strchr(p, '\n');
        if (tl == NULL || (eol != NULL && tl > eol))
            continue;
        tl++;
        int named = 0;
        for (size_t i = 0; i < n && !named; i++)
            named = strncmp(tl, names[i], strlen(names[i])) == 0;
        if (named == want)
            return 1;
    }
    return 0;
}

/* Lanes of an endpoint that need nothing of the target: the shared-memory transports. */
int rmx_ucx_ep_needs_target_progress(ucp_ep_h ep)
{
    static const char *const direct[] = {"sysv", "posix", "self", "cma", "xpmem", "knem"};
    return some_lane(ep, direct, sizeof(direct) / sizeof(direct[0]), 0);
}

int rmx_ucx_ep_uses_tcp(ucp_ep_h ep)
{
    static const char *const tcp[] = {"tcp"};
    return some_lane(ep, tcp, 1, 1);
}

int rmx_ucx_ep_rma_mapped(ucp_ep_h ep)
{
    char rma[256], amo[256], am[256];
    if (rmx_ucx_ep_transports(ep, rma, amo, am, sizeof(rma)) != RMX_OK || strcmp(rma, "-") == 0)
        return 0;
    static const char *const mapped[] = {"sysv", "posix", "xpmem", "self"};
    for (const char *p = rma; *p != '\0';) {
        size_t n = strcspn(p, " ");
        int known = 0;
        for (size_t i = 0; i < sizeof(mapped) / sizeof(mapped[0]) && !known; i++)
            known = strlen(mapped[i]) == n && strncmp(p, mapped[i], n) == 0;
        if (!known)
            return 0;
        p += n + (p[n] == ' ');
    }
    return 1;
}

void *rmx_ucx_rkey_ptr(ucp_rkey_h rkey, uint64_t raddr)
{
    void *ptr = NULL;
    if (rkey == NULL || ucp_rkey_ptr(rkey, raddr, &ptr) != UCS_OK)
        return NULL;
    return ptr;
}

int rmx_ucx_wait_issued(rmx_ucx_t *u, ucs_status_ptr_t req, rmx_ucx_on_timeout_t on_timeout)
{
    u->since_progress = 0;
    if (UCS_PTR_IS_ERR(req))
        return rmx_ucx_failed(u, UCS_PTR_STATUS(req));
    double deadline = 0;
    unsigned work = 0;
    ucs_status_t st;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        unsigned events = rmx_ucx_progress(u);
        if (rmx_ucx_round_expired(u, &work, events, &deadline)) {
            if (on_timeout == RMX_UCX_RELEASE)
                ucp_request_free(req);
            return RMX_ERR_TIMEOUT;
        }
    }
    ucp_request_free(req);
    return __builtin_expect(st == UCS_OK, 1) ? RMX_OK : rmx_ucx_failed(u, st);
}

int rmx_ucx_deadline_passed(rmx_ucx_t *u, double *deadline, int busy)
{
    double t = rmx_now_s();
    if (*deadline == 0)
        *deadline = t + u->timeout_s;
    else if (t > *deadline)
        return 1;
    if (!busy)
        sched_yield(); /* 2 cores, often more ranks: let the peer run */
    return 0;
}

/* ---------------------------------------------------------------- requests that timed out */

static int grow(void **arr, int *cap, int want, size_t elem)
{
    if (want <= *cap)
        return 1;
    int ncap = *cap ? 2 * *cap : 8;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (p == NULL)
        return 0;
    *arr = p;
    *cap = ncap;
    return 1;
}

void rmx_ucx_abandon_req(rmx_ucx_t *u, ucs_status_ptr_t req)
{
    if (req == NULL || UCS_PTR_IS_ERR(req))
        return;
    if (!grow((void **)&u->abandoned_reqs, &u->cap_abandoned, u->n_abandoned + 1,
              sizeof(*u->abandoned_reqs))) {
        /* Cannot list it: memory abandoned from now on is never freed (it may write there). */
        u->n_abandoned_mem = -1;
        return;
    }
    u->abandoned_reqs[u->n_abandoned++] = req;
}

void rmx_ucx_abandon_mem(rmx_ucx_t *u, void *mem)
{
    if (mem == NULL || u->n_abandoned_mem < 0)
        return; /* leaked on purpose: an unlisted request may write there */
    if (!grow((void **)&u->abandoned_mem, &u->cap_abandoned_mem, u->n_abandoned_mem + 1,
              sizeof(*u->abandoned_mem)))
        return; /* leaked on purpose */
    u->abandoned_mem[u->n_abandoned_mem++] = mem;
}

void rmx_ucx_reap_abandoned(rmx_ucx_t *u)
{
    int keep = 0;
    for (int i = 0; i < u->n_abandoned; i++) {
        ucs_status_ptr_t req = u->abandoned_reqs[i];
        if (ucp_request_check_status(req) == UCS_INPROGRESS)
            u->abandoned_reqs[keep++] = req;
        else
            ucp_request_free(req);
    }
    u->n_abandoned = keep;
    if (keep == 0 && u->n_abandoned_mem > 0) {
        for (int i = 0; i < u->n_abandoned_mem; i++)
            free(u->abandoned_mem[i]);
        u->n_abandoned_mem = 0;
    }
}

unsigned char *rmx_ucx_landing(rmx_ucx_t *u, size_t len)
{
    if (len <= u->landing_len)
        return u->landing;
    unsigned char *p = realloc(u->landing, len); /* nothing is in flight into it here */
    if (p == NULL)
        return NULL;
    u->landing = p;
    u->landing_len = len;
    return p;
}

void rmx_ucx_landing_abandon(rmx_ucx_t *u)
{
    rmx_ucx_abandon_mem(u, u->landing);
    u->landing = NULL;
    u->landing_len = 0;
}

void rmx_ucx_purge(rmx_ucx_t *u, ucp_ep_h ep, ucs_status_ptr_t *reqs, int n)
{
    rmx_ucx_ep_close(u, ep, 0);
    /* The force-close completed them (UCS_ERR_CANCELED); if one somehow is not, UCP frees it
     * when it ends, and it can no longer reach memory through the closed endpoint. */
    for (int i = 0; i < n; i++)
        if (reqs[i] != NULL && !UCS_PTR_IS_ERR(reqs[i]))
            ucp_request_free(reqs[i]);
}

int rmx_ucx_amo_via_slot(rmx_ucx_t *u, ucp_ep_h ep, rmx_am_peer_t *am, ucp_atomic_op_t op,
                         const void *operand, void *reply, size_t size, uint64_t raddr,
                         ucp_rkey_h rkey)
{
    if (am != NULL) /* its reply handler writes `reply` only while the atomic waits */
        return rmx_am_amo(u, am, op, operand, reply, size, raddr);
    if (u->reply == NULL && (u->reply = malloc(sizeof(*u->reply))) == NULL)
        return RMX_ERR_NOMEM;
    memcpy(u->reply, reply, size); /* CSWAP: the new value */
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER,
        .datatype = ucp_dt_make_contig(size),
        .reply_buffer = u->reply,
    };
    ucs_status_ptr_t req = ucp_atomic_op_nbx(ep, op, operand, 1, raddr, rkey, &prm);
    int rc = rmx_ucx_wait_req(u, req, RMX_UCX_KEEP);
    if (rc == RMX_OK) {
        memcpy(reply, u->reply, size);
    } else if (rc == RMX_ERR_TIMEOUT) {
        rmx_ucx_abandon_req(u, req);
        rmx_ucx_abandon_mem(u, u->reply);
        u->reply = NULL;
    }
    return rc;
}
