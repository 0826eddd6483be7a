/*
 * boot_fork.c — rmx_fork_run: N local ranks as forked children, with OOB collectives over a
 * MAP_SHARED segment created before the fork.  The collectives are a sense-reversing barrier on two
 * C11 atomic words and an allgather through per-rank slots (chunked, so any length works).
 * The parent watches its children: when one dies abnormally it raises `aborted`, which makes the
 * survivors' collectives fail instead of waiting for a rank that will never arrive.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../api/rmx_fork.h"

/* Ranks end with _exit (no atexit handlers: the parent's Criterion state must not run twice), which
 * also skips LeakSanitizer's exit-time check; under ASan run it explicitly, so every rank's leaks
 * are found and fail the rank. */
#if defined(__SANITIZE_ADDRESS__)
#define RMX_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RMX_LSAN 1
#endif
#endif
#ifdef RMX_LSAN
#include <sanitizer/lsan_interface.h>
static int rank_leaked(void) { return __lsan_do_recoverable_leak_check(); }
#else
static int rank_leaked(void) { return 0; }
#endif

#define FORK_SLOT_BYTES (256u * 1024u)

typedef struct {
    _Atomic uint64_t arrived;
    _Atomic uint64_t generation;
    _Atomic int aborted;
    int nranks;
    char slots[]; /* nranks * FORK_SLOT_BYTES */
} fork_shm_t;

typedef struct {
    fork_shm_t *shm;
    int rank;
} fork_rank_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fork_barrier(void *coll_ctx)
{
    fork_shm_t *shm = ((fork_rank_t *)coll_ctx)->shm;
    uint64_t gen = atomic_load(&shm->generation);
    if (atomic_fetch_add(&shm->arrived, 1) + 1 == (uint64_t)shm->nranks) {
        atomic_store(&shm->arrived, 0);
        atomic_fetch_add(&shm->generation, 1);
        return 0;
    }
    unsigned spins = 0;
    while (atomic_load(&shm->generation) == gen) {
        if (atomic_load(&shm->aborted))
            return -1;
        if (++spins > 64)
            sched_yield();
    }
    return 0;
}

static int fork_allgather(const void *sendbuf, void *recvbuf, size_t len, void *coll_ctx)
{
    fork_rank_t *me = coll_ctx;
    fork_shm_t *shm = me->shm;
    for (size_t off = 0; off == 0 || off < len; off += FORK_SLOT_BYTES) {
        size_t chunk = len - off < FORK_SLOT_BYTES ? len - off : FORK_SLOT_BYTES;
        memcpy(shm->slots + (size_t)me->rank * FORK_SLOT_BYTES, (const char *)sendbuf + off, chunk);
        if (fork_barrier(coll_ctx) != 0)
            return -1;
        for (int r = 0; r < shm->nranks; r++)
            memcpy((char *)recvbuf + (size_t)r * len + off,
                   shm->slots + (size_t)r * FORK_SLOT_BYTES, chunk);
        if (fork_barrier(coll_ctx) != 0)  /* slots are reused by the next chunk */
            return -1;
        if (len == 0)
            break;
    }
    return 0;
}

static int decode_status(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return 255;
}

int rmx_fork_run(int nranks, rmx_fork_main_t fn, void *arg, const rmx_config_t *base_cfg,
                 double timeout_s, int *status)
{
    if (nranks < 1 || nranks > 4096 || fn == NULL || timeout_s < 0)
        return RMX_ERR_ARG;
    size_t shm_len = sizeof(fork_shm_t) + (size_t)nranks * FORK_SLOT_BYTES;
    fork_shm_t *shm = mmap(NULL, shm_len, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (shm == MAP_FAILED)
        return RMX_ERR_NOMEM;
    atomic_init(&shm->arrived, 0);
    atomic_init(&shm->generation, 0);
    atomic_init(&shm->aborted, 0);
    shm->nranks = nranks;

    pid_t *pids = calloc((size_t)nranks, sizeof(*pids));
    int *st = calloc((size_t)nranks, sizeof(*st));
    if (pids == NULL || st == NULL) {
        free(pids);
        free(st);
        munmap(shm, shm_len);
        return RMX_ERR_NOMEM;
    }
    fflush(NULL); /* children must not re-emit the parent's buffered output */

    int rc = RMX_OK, live = 0;
    pid_t parent = getpid();
    for (int r = 0; r < nranks; r++) {
        pid_t pid = fork();
        if (pid == 0) {
            free(pids); /* the parent's bookkeeping: a leak in every rank otherwise */
            free(st);
            static fork_rank_t me;
            me.shm = shm;
            me.rank = r;
            /* A rank must not outlive its launcher (a test runner that timed out and killed
             * the parent would otherwise leave ranks spinning in barriers). */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(255);
            rmx_config_t cfg;
            if (base_cfg != NULL)
                cfg = *base_cfg;
            else
                rmx_config_init(&cfg);
            cfg.bootstrap = RMX_BOOT_OOB;
            cfg.oob.allgather = fork_allgather;
            cfg.oob.barrier = fork_barrier;
            cfg.oob.coll_ctx = &me;
            cfg.oob.rank = r;
            cfg.oob.size = nranks;
            int code = fn(&cfg, arg);
            if (code == 0 && rank_leaked())
                code = 23; /* LeakSanitizer printed the report */
            fflush(NULL);
            _exit(code & 0xff);
        }
        if (pid < 0) {
            atomic_store(&shm->aborted, 1);
            rc = RMX_ERR_NOMEM;
            break;
        }
        pids[r] = pid;
        st[r] = -1;
        live++;
    }

    double deadline = timeout_s > 0 ? now_s() + timeout_s : 0;
    while (live > 0) {
        int progressed = 0;
        for (int r = 0; r < nranks; r++) {
            int ws;
            if (pids[r] <= 0 || st[r] != -1)
                continue;
            pid_t got = waitpid(pids[r], &ws, WNOHANG);
            if (got == pids[r]) {
                st[r] = decode_status(ws);
                live--;
                progressed = 1;
                if (st[r] != 0) {
                    atomic_store(&shm->aborted, 1);
                    if (rc == RMX_OK)
                        rc = RMX_ERR_PEER;
                }
            }
        }
        if (live > 0 && deadline > 0 && now_s() > deadline) {
            for (int r = 0; r < nranks; r++)
                if (pids[r] > 0 && st[r] == -1)
                    kill(pids[r], SIGKILL);
            atomic_store(&shm->aborted, 1);
            rc = RMX_ERR_TIMEOUT;
            deadline = 0; /* now reap them */
        }
        if (!progressed && live > 0) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    if (status != NULL)
        for (int r = 0; r < nranks; r++)
            status[r] = pids[r] > 0 ? st[r] : 255;
    free(pids);
    free(st);
    munmap(shm, shm_len);
    return rc;
}
