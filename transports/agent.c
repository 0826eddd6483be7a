/*
 * agent.c — the progress agent: a thread of rmx's that serves the requests peers send to this
 * rank, so that a rank computing, sleeping or blocked outside rmx never stalls them.
 *
 * Where UCX has a hardware or shared-memory path (UCP-allocated memory over posix/sysv) the
 * origin's CPU or NIC does all the work and nobody needs to run here.  Everywhere else puts, gets
 * and atomics are served in software (tcp: by rmx's active-message handlers, am_rma.c; atomics on
 * registered memory: by UCX): the request is an active message that the worker it arrives at
 * must progress.  Peers' endpoints are connected to
 * the service worker (ucx.h), and this thread progresses it.  It sleeps in poll() on the worker's
 * event fd (ucp_worker_get_efd / ucp_worker_arm: UCX's wakeup protocol, as used by MPICH's and
 * OSHMEM's asynchronous progress), so it costs nothing while no request comes; a long poll
 * timeout only guards against a transport that cannot signal.
 *
 * The owner thread's data path takes no lock: it never touches the service worker while the agent
 * runs (u->agent_running, written by the owner only, before the thread starts and after it ends).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "ucx.h"
#include "../engine/log.h"

/* Longest sleep without an event (ms): only matters where a transport cannot wake us. */
#define AGENT_SAFETY_POLL_MS 100

/* A pass over the service worker: progress until a call finds nothing, or this many calls, so
 * that a drain or a stop is seen between passes.  Under peers' constant streams a call always
 * finds something, and an unbounded pass never ended: rmx_win_free's drain waited as long as
 * the streams lasted (progress/a_window_free_is_not_held_by_traffic_to_another_window_tcp:
 * 7-20 s, now 0.03-0.04 s; one call there served a 64 KiB read of small puts, ~1 ms).  What a
 * drain is for, a timed-out request still on its way (window.c), is best effort anyway (it may
 * come later still); a live peer's requests to a window it frees were served before its part
 * of the free's barrier (one endpoint's messages are handled in order; a stream's are complete
 * before it unbinds).  16 calls empty a shared-memory FIFO (UCX_*_FIFO_SIZE 64, MAX_POLL 16)
 * and read 1 MiB from each ready socket. */
#define AGENT_PASS_CALLS 16

static void progress_pass(ucp_worker_h w)
{
    for (int i = 0; i < AGENT_PASS_CALLS && ucp_worker_progress(w) != 0; i++)
        ;
}

struct rmx_agent {
    pthread_t thread;
    ucp_worker_h service;
    int efd;                    /* the service worker's event fd; -1: none, poll briefly */
    int wake_fd;                /* eventfd that wakes the agent: to stop, or to drain */
    atomic_int stop;
    atomic_uint_fast64_t wakeups;
    /* rmx_ucx_drain: requests numbered 1, 2, ..., and the newest request a pass that began
     * after it has served (a pass snapshots drain_req before it progresses). */
    atomic_uint_fast64_t drain_req, drain_done;
    clockid_t cpu_clock;
    _Atomic double cpu_s_final; /* the thread's CPU time, recorded by itself as it ends */
    double cpu_s_before;        /* of agents that ran before this one in this context */
    uint64_t wakeups_before;
};

static double thread_cpu_s(clockid_t clk)
{
    struct timespec ts;
    if (clock_gettime(clk, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *agent_main(void *arg)
{
    struct rmx_agent *a = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the program's, not ours */
    struct pollfd fds[2] = {{.fd = a->wake_fd, .events = POLLIN}, {.fd = a->efd, .events = POLLIN}};
    while (!atomic_load_explicit(&a->stop, memory_order_acquire)) {
        uint64_t req = atomic_load_explicit(&a->drain_req, memory_order_acquire);
        progress_pass(a->service);
        atomic_store_explicit(&a->drain_done, req, memory_order_release);
        /* A drain asked during this pass gets the next one now, not after a sleep (its kick
         * may already have been read). */
        if (atomic_load_explicit(&a->drain_req, memory_order_acquire) != req)
            continue;
        int nfds = 1, timeout_ms = 1;
        if (a->efd >= 0) {
            ucs_status_t st = ucp_worker_arm(a->service);
            if (st == UCS_ERR_BUSY)
                continue; /* events arrived meanwhile: progress again before sleeping */
            if (st == UCS_OK) {
                nfds = 2;
                timeout_ms = AGENT_SAFETY_POLL_MS;
            }
        }
        if (poll(fds, (nfds_t)nfds, timeout_ms) > 0) {
            atomic_fetch_add_explicit(&a->wakeups, 1, memory_order_relaxed);
            uint64_t kicks;
            if (fds[0].revents & POLLIN) /* a drain's kick (a stop is seen by the loop) */
                (void)!read(a->wake_fd, &kicks, sizeof(kicks));
        }
    }
    atomic_store(&a->cpu_s_final, thread_cpu_s(CLOCK_THREAD_CPUTIME_ID));
    return NULL;
}

int rmx_ucx_agent_start(rmx_ucx_t *u)
{
    if (u->agent_running)
        return RMX_OK;
    struct rmx_agent *a = u->agent;
    if (a == NULL) {
        a = calloc(1, sizeof(*a));
        if (a == NULL)
            return RMX_ERR_NOMEM;
        a->service = u->service;
        a->wake_fd = -1;
        u->agent = a;
    }
    if (a->wake_fd < 0 && (a->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        int err = errno;
        rmx_logf(u->log, RMX_LOG_ERROR, "progress agent: eventfd: %s", strerror(err));
        return err == EMFILE || err == ENFILE ? RMX_ERR_NOMEM : RMX_ERR_TRANSPORT;
    }
    if (ucp_worker_get_efd(u->service, &a->efd) != UCS_OK)
        a->efd = -1; /* a transport without wakeup support: the agent polls every 1 ms */
    atomic_store(&a->stop, 0);
    /* The owner stops progressing the service worker before the agent starts (thread creation
     * orders every write before it). */
    u->agent_running = 1;
    int err = pthread_create(&a->thread, NULL, agent_main, a);
    if (err != 0) {
        u->agent_running = 0;
        rmx_logf(u->log, RMX_LOG_ERROR, "progress agent: pthread_create: %s; RMX_PROGRESS=none "
                 "runs without it (peers are then served only inside rmx calls)", strerror(err));
        return RMX_ERR_NOMEM;
    }
    rmx_logf(u->log, RMX_LOG_DEBUG, "progress agent started (%s)",
             a->efd >= 0 ? "sleeping on the worker's event fd" : "polling every 1 ms");
    if (pthread_getcpuclockid(a->thread, &a->cpu_clock) != 0)
        a->cpu_clock = (clockid_t)-1;
    return RMX_OK;
}

void rmx_ucx_agent_stop(rmx_ucx_t *u)
{
    struct rmx_agent *a = u->agent;
    if (a == NULL)
        return;
    if (u->agent_running) {
        atomic_store_explicit(&a->stop, 1, memory_order_release);
        uint64_t one = 1;
        ssize_t w = write(a->wake_fd, &one, sizeof(one));
        (void)w; /* a full eventfd is still readable: the agent wakes either way */
        pthread_join(a->thread, NULL);
        a->cpu_s_before += atomic_load(&a->cpu_s_final);
        a->wakeups_before += atomic_load(&a->wakeups);
        atomic_store(&a->wakeups, 0);
        u->agent_running = 0; /* joined: the service worker is the owner's again */
    }
}

void rmx_ucx_drain(rmx_ucx_t *u)
{
    struct rmx_agent *a = u->agent;
    if (!u->agent_running) {
        progress_pass(u->service);
        return;
    }
    /* A whole pass that began after this request (the kick wakes the agent if it sleeps). */
    uint64_t want = atomic_fetch_add_explicit(&a->drain_req, 1, memory_order_acq_rel) + 1;
    uint64_t one = 1;
    (void)!write(a->wake_fd, &one, sizeof(one));
    while (atomic_load_explicit(&a->drain_done, memory_order_acquire) < want)
        sched_yield();
}

void rmx_ucx_agent_usage(rmx_ucx_t *u, double *cpu_s, uint64_t *wakeups)
{
    struct rmx_agent *a = u->agent;
    *cpu_s = 0;
    *wakeups = 0;
    if (a == NULL)
        return;
    *cpu_s = a->cpu_s_before;
    *wakeups = a->wakeups_before;
    if (u->agent_running) {
        if (a->cpu_clock != (clockid_t)-1)
            *cpu_s += thread_cpu_s(a->cpu_clock);
        *wakeups += atomic_load(&a->wakeups);
    }
}

/* Freed with the context (rmx_ucx_close calls rmx_ucx_agent_stop first). */
void rmx_ucx_agent_free(rmx_ucx_t *u)
{
    struct rmx_agent *a = u->agent;
    if (a == NULL)
        return;
    rmx_ucx_agent_stop(u);
    if (a->wake_fd >= 0)
        close(a->wake_fd);
    free(a);
    u->agent = NULL;
}
