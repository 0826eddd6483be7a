/*
 * interrupt.c — SIGINT and SIGTERM: the rows measured so far are printed, every rank ends, and
 * rmx_perf exits with 128 + the signal.
 *
 * Rank 0 holds the rows, so rank 0 prints them.  In every rank the two signals are blocked
 * before rmx_init starts any thread (UCX's async thread, the progress agent inherit the mask)
 * and one watcher thread takes them with sigwait: no async-signal-safety limits on what it
 * does, and no signal lands in a thread in the middle of UCX.  The watcher of rank 0 calls the
 * reporter (rmx_perf.c: the rows so far, with a note saying so), every watcher then _exits:
 * nothing is finalized.  UCX unlinks (or IPC_RMIDs) its shared memory as soon as it is mapped,
 * so what a rank leaves behind is only a POSIX segment UCX has opened and not yet unlinked (it
 * sizes and maps it in between: milliseconds for its receive FIFOs at rmx_init, and a signal
 * then left a /dev/shm file in most runs).  Such a segment is still open in the rank, so the
 * watcher stops the rank's other threads, then unlinks every /dev/shm file the rank has open
 * by name, then _exits.
 *
 * Without a launcher the signal may reach the forking parent only (kill PID), or the whole
 * process group (^C).  The parent forwards it as SIGTERM to every rank, whose pids the ranks
 * write into a board shared over fork (with the signal itself, which the note names), and
 * SIGKILLs any rank still there PERF_GRACE_S later; a rank that starts after the signal sees it
 * on the board and leaves at once.  Under a PMIx
 * launcher, the launcher forwards it (mpirun sends SIGTERM to every rank).
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "perf.h"
#include "interrupt.h"

#define PERF_GRACE_S 5      /* SIGTERM to the ranks, then SIGKILL this much later */
#define BOARD_RANKS 64      /* --ranks' largest */

typedef struct {
    atomic_int signo;                 /* the launcher's signal; 0: none */
    atomic_int pids[BOARD_RANKS];     /* each forked rank's pid, 0 until it starts */
} board_t;

static board_t *board;                /* shared over fork; NULL under a launcher */
static pid_t launcher_pid;
static atomic_int claimed, reported;  /* the report: who prints it, and that it is out */
static perf_reporter_t reporter;      /* set in rank 0 only */
static void *reporter_arg;

/* ---------------------------------------------------------------- the forking launcher */
static void forward(int sig)
{
    for (int r = 0; r < BOARD_RANKS; r++) {
        int pid = atomic_load(&board->pids[r]);
        if (pid > 0)
            kill((pid_t)pid, sig);
    }
}

/* Async-signal-safe: atomics, getpid, kill, alarm, _exit. */
static void launcher_handler(int sig)
{
    if (getpid() != launcher_pid)  /* a rank between fork and blocking the signals */
        _exit(128 + sig);
    if (sig == SIGALRM) {          /* the grace period is over */
        forward(SIGKILL);
        return;
    }
    int expected = 0;
    if (!atomic_compare_exchange_strong(&board->signo, &expected, sig))
        return;                    /* a second ^C: the first one is being served */
    forward(SIGTERM);
    alarm(PERF_GRACE_S);
}

int perf_launcher_signals(void)
{
    board = mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (board == MAP_FAILED) {
        board = NULL;
        return -1;
    }
    launcher_pid = getpid();
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = launcher_handler;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGALRM);
    int rc = sigaction(SIGINT, &sa, NULL);
    rc |= sigaction(SIGTERM, &sa, NULL);
    rc |= sigaction(SIGALRM, &sa, NULL);
    return rc;
}

int perf_launcher_signal(void)
{
    if (board == NULL)
        return 0;
    alarm(0); /* the ranks are reaped: no SIGKILL to pids that may be reused by now */
    return atomic_load(&board->signo);
}

/* ---------------------------------------------------------------- a rank */
/* Each numeric entry of the /proc directory dir (fd or task numbers), through getdents64 into a
 * stack buffer: no malloc, which a frozen thread may hold the lock of (freeze_others). */
static void each_number(const char *dir, void (*fn)(long n, void *arg), void *arg)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    _Alignas(uint64_t) char buf[4096];
    long got;
    while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
        for (long off = 0; off < got;) {
            struct {
                uint64_t ino;
                int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *e = (void *)(buf + off);
            char *end;
            long n = strtol(e->name, &end, 10);
            if (end != e->name && *end == '\0')
                fn(n, arg);
            off += e->reclen;
        }
    close(fd);
}

/* A POSIX shared memory file this process still has open by name (a mapped segment UCX has
 * unlinked reads "... (deleted)"): unlinked. */
static void unlink_if_shm(long fdno, void *arg)
{
    (void)arg;
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%ld", fdno);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0)
        return;
    target[n] = '\0';
    static const char deleted[] = " (deleted)";
    size_t dl = sizeof(deleted) - 1;
    if (strncmp(target, "/dev/shm/", 9) == 0 &&
        ((size_t)n < dl || strcmp(target + n - dl, deleted) != 0))
        (void)unlink(target);
}

/* The other threads stop where they stand (a handler that never returns) before the files are
 * looked at: none opens a new segment between the look and the exit, however long this thread
 * waits for a core (a busy machine made that window milliseconds). */
#define FREEZE_SIGNAL SIGRTMAX
static atomic_int frozen;

static void freeze_handler(int sig)
{
    (void)sig;
    atomic_fetch_add(&frozen, 1);
    for (;;)
        pause();
}

static void freeze_one(long tid, void *arg)
{
    int *sent = arg;
    if (tid != (long)syscall(SYS_gettid) &&
        syscall(SYS_tgkill, (long)getpid(), tid, FREEZE_SIGNAL) == 0)
        (*sent)++;
}

static void freeze_others(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = freeze_handler;
    sigfillset(&sa.sa_mask);
    if (sigaction(FREEZE_SIGNAL, &sa, NULL) != 0)
        return;
    int sent = 0;
    each_number("/proc/self/task", freeze_one, &sent);
    /* A thread that blocks the signal never comes: go on after 200 ms. */
    for (int i = 0; i < 2000 && atomic_load(&frozen) < sent; i++)
        nanosleep(&(struct timespec){0, 100 * 1000}, NULL);
}

static void *watcher(void *arg)
{
    sigset_t *set = arg;
    int sig = 0;
    while (sigwait(set, &sig) != 0)
        ;
    /* Under the forking launcher the signal the user sent is the launcher's: a kill -INT of
     * its pid reaches the ranks as the SIGTERM it forwards. */
    int launcher_sig = board != NULL ? atomic_load(&board->signo) : 0;
    if (launcher_sig != 0)
        sig = launcher_sig;
    perf_reporter_t fn = reporter;
    if (fn != NULL && perf_report_claim()) {
        fn(sig, reporter_arg);
    } else if (fn != NULL) {
        /* The main thread is printing the complete report: let it finish. */
        for (int i = 0; i < 200 && !atomic_load(&reported); i++)
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    fflush(NULL);
    freeze_others();
    each_number("/proc/self/fd", unlink_if_shm, NULL);
    _exit(128 + sig);
}

int perf_rank_signals(int fork_rank, perf_reporter_t fn, void *arg)
{
    reporter = fn;
    reporter_arg = arg;
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
        return -1;
    if (board != NULL && fork_rank >= 0 && fork_rank < BOARD_RANKS) {
        atomic_store(&board->pids[fork_rank], (int)getpid());
        int sig = atomic_load(&board->signo); /* after the pid: the launcher sees one or the */
        if (sig != 0)                          /* other (both seq_cst) */
            _exit(128 + sig);
    }
    pthread_t th;
    if (pthread_create(&th, NULL, watcher, &set) != 0)
        return -1;
    return pthread_detach(th);
}

int perf_report_claim(void)
{
    return atomic_exchange(&claimed, 1) == 0;
}

void perf_report_out(void)
{
    atomic_store(&reported, 1);
}
