/*
 * boot_fork.c — N local ranks as children of one launcher process, with OOB collectives over a
 * shared segment created before the fork.  Two ways:
 *  rmx_fork_run   forked children run a C function, handed an rmx_config_t with OOB callbacks;
 *  rmx_fork_exec  forked children exec any program; its rmx_init (AUTO bootstrap) finds the
 *                 segment through RMX_FORK_FD / RMX_FORK_RANK / RMX_FORK_SIZE (rmx_boot_fork_open).
 * The collectives are a sense-reversing barrier on two C11 atomic words and an allgather through
 * per-rank slots (chunked, so any length works).  The launcher watches its children: when one dies
 * abnormally it raises `aborted`, which makes the survivors' collectives fail instead of waiting
 * for a rank that will never arrive (rmx_fork_exec also terminates them, as mpirun does).  One
 * that ends normally raises `departed`: a collective still waiting then can never complete either
 * (a rank inside one cannot have exited), so it fails too, but nobody is terminated.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../api/rmx_fork.h"
#include "boot.h"
#include "../engine/log.h"

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
#define FORK_MAX_RANKS 4096
#define FORK_MAGIC 0x726d78666f726b32ull /* "rmxfork2": RMX_FORK_FD names such a segment */
#define FORK_GRACE_S 2.0                 /* SIGTERM, then SIGKILL after this long */

typedef struct {
    uint64_t magic;
    _Atomic uint64_t arrived;
    _Atomic uint64_t generation;
    _Atomic int aborted;
    _Atomic int departed; /* a rank exited with status 0 */
    int nranks;
    char slots[]; /* nranks * FORK_SLOT_BYTES */
} fork_shm_t;

typedef struct {
    fork_shm_t *shm;
    int rank;
} fork_rank_t;

static size_t shm_bytes(int nranks)
{
    return sizeof(fork_shm_t) + (size_t)nranks * FORK_SLOT_BYTES;
}

/* shm: zero-filled memory of shm_bytes(nranks). */
static void shm_setup(fork_shm_t *shm, int nranks)
{
    shm->magic = FORK_MAGIC;
    atomic_init(&shm->arrived, 0);
    atomic_init(&shm->generation, 0);
    atomic_init(&shm->aborted, 0);
    atomic_init(&shm->departed, 0);
    shm->nranks = nranks;
}

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
    /* Spin briefly, then yield, then sleep: with more ranks than cores (4 images on 2 busy cores)
     * waiting ranks must leave the CPU to the ones still on their way (UCX's init is slow). */
    unsigned spins = 0;
    while (atomic_load(&shm->generation) == gen) {
        if (atomic_load(&shm->aborted) || atomic_load(&shm->departed))
            return -1;
        if (++spins > 4096) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        } else if (spins > 64) {
            sched_yield();
        }
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

/* ---------------------------------------------------------------- the launcher's side */
typedef struct {
    fork_shm_t *shm;
    int nranks;
    pid_t *pids;   /* 0: never started */
    int *st;       /* -1 while running */
    int live;
    int first_failed;
} fork_kids_t;

static int kids_alloc(fork_kids_t *k, fork_shm_t *shm, int nranks)
{
    k->shm = shm;
    k->nranks = nranks;
    k->pids = calloc((size_t)nranks, sizeof(*k->pids));
    k->st = calloc((size_t)nranks, sizeof(*k->st));
    k->live = 0;
    k->first_failed = -1;
    if (k->pids != NULL && k->st != NULL)
        return RMX_OK;
    free(k->pids);
    free(k->st);
    return RMX_ERR_NOMEM;
}

static void kids_started(fork_kids_t *k, int r, pid_t pid)
{
    k->pids[r] = pid;
    k->st[r] = -1;
    k->live++;
}

static void signal_live(fork_kids_t *k, int sig)
{
    for (int r = 0; r < k->nranks; r++)
        if (k->pids[r] > 0 && k->st[r] == -1)
            kill(k->pids[r], sig);
}

/* Child r's status if it has ended (reaped now), else -1. */
static int kid_reap(fork_kids_t *k, int r)
{
    int ws;
    if (k->pids[r] <= 0 || k->st[r] != -1 || waitpid(k->pids[r], &ws, WNOHANG) != k->pids[r])
        return -1;
    k->st[r] = decode_status(ws);
    k->live--;
    return k->st[r];
}

/* Reap every child.  A child that ends normally raises `departed`, one that fails (non-zero
 * status) `aborted`: either way the others' collectives waiting for it fail.  On a failure, with
 * terminate_on_failure, they also get SIGTERM, and SIGKILL FORK_GRACE_S later.  After timeout_s
 * (0: none) every child left gets SIGKILL.  rc is the result so far; returns it, or
 * RMX_ERR_PEER / RMX_ERR_TIMEOUT. */
static int kids_watch(fork_kids_t *k, double timeout_s, int terminate_on_failure, int rc)
{
    double deadline = timeout_s > 0 ? now_s() + timeout_s : 0, kill_at = 0;
    int terminating = 0;
    long nap_ns = 1000000;
    while (k->live > 0) {
        int progressed = 0;
        for (int r = 0; r < k->nranks; r++) {
            int st = kid_reap(k, r);
            if (st < 0)
                continue;
            progressed = 1;
            if (st == 0) {
                atomic_store(&k->shm->departed, 1);
                continue;
            }
            atomic_store(&k->shm->aborted, 1);
            if (k->first_failed < 0)
                k->first_failed = r;
            if (rc == RMX_OK)
                rc = RMX_ERR_PEER;
            if (terminate_on_failure && !terminating) {
                terminating = 1;
                signal_live(k, SIGTERM);
                kill_at = now_s() + FORK_GRACE_S;
            }
        }
        double t = now_s();
        if (k->live > 0 && ((deadline > 0 && t > deadline) || (kill_at > 0 && t > kill_at))) {
            if (deadline > 0 && t > deadline) {
                rc = RMX_ERR_TIMEOUT;
                deadline = 0;
            }
            atomic_store(&k->shm->aborted, 1);
            signal_live(k, SIGKILL);
            kill_at = 0; /* now reap them */
        }
        /* 1 ms after an event, up to 16 ms while nothing happens: a long job costs the launcher
         * next to no CPU, and a failure is still noticed within 16 ms. */
        nap_ns = progressed ? 1000000 : (nap_ns < 16000000 ? nap_ns * 2 : nap_ns);
        if (!progressed && k->live > 0) {
            struct timespec ts = {0, nap_ns};
            nanosleep(&ts, NULL);
        }
    }
    return rc;
}

static void kids_free(fork_kids_t *k, int *status, int *first_failed)
{
    if (status != NULL)
        for (int r = 0; r < k->nranks; r++)
            status[r] = k->pids[r] > 0 ? k->st[r] : 255;
    if (first_failed != NULL)
        *first_failed = k->first_failed;
    free(k->pids);
    free(k->st);
}

/* In a child: a rank must not outlive its launcher (a test runner that timed out and killed the
 * parent would otherwise leave ranks spinning in barriers).  PR_SET_PDEATHSIG survives exec. */
static void die_with_parent(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(255);
}

int rmx_fork_run(int nranks, rmx_fork_main_t fn, void *arg, const rmx_config_t *base_cfg,
                 double timeout_s, int *status)
{
    if (nranks < 1 || nranks > FORK_MAX_RANKS || fn == NULL || !(timeout_s >= 0)) /* NaN too */
        return RMX_ERR_ARG;
    size_t shm_len = shm_bytes(nranks);
    fork_shm_t *shm = mmap(NULL, shm_len, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (shm == MAP_FAILED)
        return RMX_ERR_NOMEM;
    shm_setup(shm, nranks);
    fork_kids_t k;
    if (kids_alloc(&k, shm, nranks) != RMX_OK) {
        munmap(shm, shm_len);
        return RMX_ERR_NOMEM;
    }
    fflush(NULL); /* children must not re-emit the parent's buffered output */

    int rc = RMX_OK;
    pid_t parent = getpid();
    for (int r = 0; r < nranks; r++) {
        pid_t pid = fork();
        if (pid == 0) {
            free(k.pids); /* the parent's bookkeeping: a leak in every rank otherwise */
            free(k.st);
            static fork_rank_t me;
            me.shm = shm;
            me.rank = r;
            die_with_parent(parent);
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
        kids_started(&k, r, pid);
    }
    rc = kids_watch(&k, timeout_s, 0, rc);
    kids_free(&k, status, NULL);
    munmap(shm, shm_len);
    return rc;
}

/* The launcher's environment without any RMX_FORK_* (an outer launcher's), plus this rank's: one
 * allocation, the three strings after the pointers, so free() releases it. */
static char **rank_environment(int fd, int rank, int nranks)
{
    enum { VAR = 40 };
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    char **env = malloc((n + 4) * sizeof(*env) + 3 * VAR);
    if (env == NULL)
        return NULL;
    char *mine = (char *)(env + n + 4);
    size_t e = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "RMX_FORK_", 9) != 0)
            env[e++] = environ[i];
    snprintf(mine, VAR, "RMX_FORK_FD=%d", fd);
    snprintf(mine + VAR, VAR, "RMX_FORK_RANK=%d", rank);
    snprintf(mine + 2 * VAR, VAR, "RMX_FORK_SIZE=%d", nranks);
    for (int i = 0; i < 3; i++)
        env[e++] = mine + i * VAR;
    env[e] = NULL;
    return env;
}

static void exec_rank(char *const argv[], char **env, int fd, int rank, pid_t parent)
    __attribute__((noreturn));
static void exec_rank(char *const argv[], char **env, int fd, int rank, pid_t parent)
{
    die_with_parent(parent);
    if (fcntl(fd, F_SETFD, 0) != 0) /* the segment is inherited by this exec only */
        _exit(127);
    if (rank > 0) { /* as under mpirun, standard input goes to the first rank only */
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0 && null != STDIN_FILENO) {
            dup2(null, STDIN_FILENO);
            close(null);
        }
    }
    execvpe(argv[0], argv, env);
    dprintf(STDERR_FILENO, "rmx_fork_exec: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

int rmx_fork_exec(int nranks, char *const argv[], double timeout_s, int *status,
                  int *first_failed)
{
    if (nranks < 1 || nranks > FORK_MAX_RANKS || argv == NULL || argv[0] == NULL ||
        !(timeout_s >= 0))
        return RMX_ERR_ARG;
    size_t shm_len = shm_bytes(nranks);
    int fd = memfd_create("rmx_fork", MFD_CLOEXEC);
    if (fd < 0)
        return RMX_ERR_NOMEM;
    fork_shm_t *shm = MAP_FAILED;
    if (ftruncate(fd, (off_t)shm_len) == 0)
        shm = mmap(NULL, shm_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    fork_kids_t k;
    if (shm == MAP_FAILED || kids_alloc(&k, shm, nranks) != RMX_OK) {
        if (shm != MAP_FAILED)
            munmap(shm, shm_len);
        close(fd);
        return RMX_ERR_NOMEM;
    }
    shm_setup(shm, nranks);
    fflush(NULL);

    int rc = RMX_OK;
    pid_t parent = getpid();
    for (int r = 0; r < nranks && rc == RMX_OK; r++) {
        char **env = rank_environment(fd, r, nranks);
        pid_t pid = env != NULL ? fork() : -1;
        if (pid == 0)
            exec_rank(argv, env, fd, r, parent);
        free(env);
        if (pid < 0) {
            atomic_store(&shm->aborted, 1);
            signal_live(&k, SIGTERM);
            rc = RMX_ERR_NOMEM;
        } else {
            kids_started(&k, r, pid);
        }
    }
    rc = kids_watch(&k, timeout_s, 1, rc);
    kids_free(&k, status, first_failed);
    munmap(shm, shm_len);
    close(fd);
    return rc;
}

/* ---------------------------------------------------------------- a rank's side */
int rmx_boot_fork_launched(void)
{
    return getenv("RMX_FORK_FD") != NULL || getenv("RMX_FORK_RANK") != NULL ||
           getenv("RMX_FORK_SIZE") != NULL;
}

static int env_int(const char *var, long lo, long hi, int *out)
{
    const char *s = getenv(var);
    if (s == NULL) {
        rmx_logf(NULL, RMX_LOG_ERROR, "rmx_init: %s is not set (rmx_fork_exec sets "
                 "RMX_FORK_FD, RMX_FORK_RANK and RMX_FORK_SIZE together)", var);
        return -1;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        rmx_logf(NULL, RMX_LOG_ERROR, "rmx_init: %s=%s is not an integer in [%ld, %ld]", var, s,
                 lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

typedef struct {
    fork_rank_t me;
    size_t len;
} fork_env_t;

static int env_allgather(rmx_boot_t *b, const void *send, void *recv, size_t len)
{
    fork_env_t *st = b->state;
    return fork_allgather(send, recv, len, &st->me) == 0 ? RMX_OK : RMX_ERR_BOOTSTRAP;
}

static int env_barrier(rmx_boot_t *b)
{
    fork_env_t *st = b->state;
    return fork_barrier(&st->me) == 0 ? RMX_OK : RMX_ERR_BOOTSTRAP;
}

static void env_fini(rmx_boot_t *b)
{
    fork_env_t *st = b->state;
    munmap(st->me.shm, st->len);
    free(st);
}

/* The launcher's segment, mapped: checked to be one (size, magic) for `size` ranks. */
static fork_shm_t *map_launcher_segment(int fd, int size)
{
    struct stat sb;
    size_t len = shm_bytes(size);
    if (fstat(fd, &sb) != 0) {
        rmx_logf(NULL, RMX_LOG_ERROR, "rmx_init: RMX_FORK_FD=%d: %s (the launcher's segment "
                 "must be open in this process: start it with rmx_fork_exec, e.g. rmxrun)",
                 fd, strerror(errno));
        return NULL;
    }
    fork_shm_t *shm = MAP_FAILED;
    if (S_ISREG(sb.st_mode) && (size_t)sb.st_size == len)
        shm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (shm != MAP_FAILED && shm->magic == FORK_MAGIC && shm->nranks == size)
        return shm;
    if (shm != MAP_FAILED)
        munmap(shm, len);
    rmx_logf(NULL, RMX_LOG_ERROR, "rmx_init: RMX_FORK_FD=%d is not the segment of an "
             "rmx_fork_exec launcher of RMX_FORK_SIZE=%d ranks", fd, size);
    return NULL;
}

int rmx_boot_fork_open(rmx_boot_t *b)
{
    int size, rank, fd;
    if (env_int("RMX_FORK_SIZE", 1, FORK_MAX_RANKS, &size) != 0 ||
        env_int("RMX_FORK_RANK", 0, size - 1, &rank) != 0 ||
        env_int("RMX_FORK_FD", 0, INT_MAX, &fd) != 0)
        return RMX_ERR_BOOTSTRAP;
    fork_shm_t *shm = map_launcher_segment(fd, size);
    if (shm == NULL)
        return RMX_ERR_BOOTSTRAP;
    fork_env_t *st = calloc(1, sizeof(*st));
    if (st == NULL) {
        munmap(shm, shm_bytes(size));
        return RMX_ERR_BOOTSTRAP;
    }
    /* Programs this rank runs are not ranks; the descriptor stays open so a later rmx_init (after
     * rmx_finalize) finds it again. */
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    st->me.shm = shm;
    st->me.rank = rank;
    st->len = shm_bytes(size);
    memset(b, 0, sizeof(*b));
    b->name = "fork";
    b->rank = rank;
    b->size = size;
    b->local_rank = rank; /* every rank is a child of one launcher: one node */
    b->local_size = size;
    b->allgather = env_allgather;
    b->barrier = env_barrier;
    b->fini = env_fini;
    b->state = st;
    return RMX_OK;
}
