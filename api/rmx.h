/*
 * rmx.h — the public C API of rmx, a UCX-native one-sided communication engine.
 *
 * A program (or an embedding runtime) creates one context per process, allocates or registers
 * windows collectively, then reads, writes and atomically updates the windows of other ranks
 * without their involvement.  Completion follows the Fortran-coarray segment rules: a put is
 * complete at its target by the end of the segment it was issued in (the next image-control
 * call: rmx_sync_all, rmx_sync_images, rmx_sync_memory, rmx_win_lock, rmx_win_unlock).
 *
 * Conventions
 *  - Every function returns RMX_OK (0) or a negative RMX_ERR_* code; rmx_strerror() explains it.
 *    No function aborts the process on bad input; a call that fails its checks sends nothing.
 *  - Ranks are 0 .. rmx_size()-1.  Displacements ("disp") are byte offsets into the target's window.
 *  - Thread safety: rmx_config_t.threads chooses (rmx_thread_level_t below).  RMX_THREAD_SINGLE,
 *    the default: a context and its windows belong to the thread that called rmx_init(); calls
 *    from any other thread fail with RMX_ERR_THREAD (checked on every call).  RMX_THREAD_MULTIPLE:
 *    every call may come from any thread, concurrently; the rules per call are under "Threads"
 *    beside rmx_thread_level_t.  Several contexts may live in one process, each with its own
 *    level.  rmx may run one thread of its own per context, the progress agent (rmx_progress_t
 *    below), which blocks every signal and touches none of the program's memory outside the
 *    windows.
 *  - Peer failure: when a rank dies, every call that needs it returns RMX_ERR_PEER once the
 *    transport has noticed (UCX keepalive every peer_timeout_s/4 over shared memory, the reset
 *    socket at once over tcp), including calls already waiting on it; so do the collectives
 *    (sync_all, window creation and free), which need every rank.  Calls among the survivors go
 *    on working, and rmx_finalize still releases everything and returns.  A merely slow peer is
 *    never declared dead: waits on other ranks (syncs, locks, the notifications behind them)
 *    have no deadline; only a single transfer that needs the target's progress times out
 *    (RMX_ERR_TIMEOUT after peer_timeout_s), which with the progress agent (rmx_progress_t)
 *    means a target that cannot serve at all (RMX_PROGRESS=none and busy, or stopped).  A call
 *    made of several such transfers in turn (an unlock: completing the epoch's operations, then
 *    the release) may take a few times peer_timeout_s before it returns RMX_ERR_TIMEOUT.
 *  - Ownership: a call that returned, with any code, has let go of the caller's memory.  A get or
 *    fetching atomic that timed out may still be answered later; the answer lands in memory rmx
 *    owns (kept until UCX is done with the request) or is dropped, never in the caller's buffer
 *    or stack.  A transfer that timed out while UCX could still read or write the caller's memory
 *    directly (a put that could not leave this rank; a get from shared memory) has its endpoint
 *    closed before the call returns: that target is then unreachable for this rank
 *    (RMX_ERR_PEER).
 *    A collective that failed this way did not synchronize the survivors: after a failed
 *    rmx_win_free, another survivor may still reach this rank's part of the window, so rmx keeps
 *    it mapped until rmx_finalize (a window from rmx_win_create: keep its memory valid until then).
 *    rmx_finalize waits (up to peer_timeout_s) until every request this rank sent to a live
 *    peer has been answered before it closes its endpoints.
 *    Over tcp, where UCX would emulate puts, gets and atomics in software and UCX 1.13 aborts
 *    the target whose answer to a request cannot be sent because the requester has died
 *    (ucp_request_try_send: "Fatal: unexpected error"), rmx sends the requests and the answers
 *    itself as UCP active messages: an answer to a dead rank just fails.  A survivor drops what
 *    a dead rank still had on its way from the moment it knows of the failure, and it knows
 *    before it handles anything another survivor sent after learning of it; so the survivors'
 *    later writes to each other are never overwritten by the dead rank's
 *    (tests/test_peer_failure.c kills ranks streaming puts, gets and atomics at survivors:
 *    with UCX's emulation a survivor aborted in 9 runs of 30).
 *    Known limit (UCX 1.13, not rmx): over shared memory UCX still serves atomics on registered
 *    memory (rmx_win_create, RMX_WIN_MEMORY=user) in software, and the same abort could hit a
 *    survivor answering a rank killed with such an atomic in flight (not seen).
 *    Known limit (UCX 1.13's shared-memory FIFOs, not rmx): with windows of registered memory
 *    (rmx_win_create) over shared memory, UCX serves puts, gets and atomics in software, and the
 *    ranks write active messages into each other's FIFOs.  A rank killed in the middle of
 *    writing one leaves a FIFO slot that is never completed; its receiver reads slots in order,
 *    so it never reads anything behind it again, live peers' answers included, and transfers
 *    between survivors then fail with RMX_ERR_TIMEOUT (tests/test_peer_failure.c: 1 suite run
 *    in 6 under RMX_WIN_MEMORY=user).  Windows from rmx_win_allocate are reached with loads,
 *    stores and CPU atomics, no message crosses a FIFO, and survivors are not affected; nor
 *    over tcp.
 *  - Collectives agree (rmx_win_allocate, rmx_win_create, rmx_win_free, rmx_sync_all): a rank
 *    whose own part fails (a bad argument that still names the context, no memory, no file
 *    descriptor, an open epoch, an operation that did not complete) still takes part, and every
 *    rank returns an error from the same call: that rank its own code, the others
 *    RMX_ERR_COLLECTIVE.  Nothing is created or freed then, and every rank can go on (a refused
 *    free leaves the window valid everywhere; a sync_all still synchronized).  A handle that names
 *    no context cannot take part: the others wait for the rank's next call, as for a slow rank.
 *  - Resources: rmx_win_allocate refuses a size beyond what the system can back (available
 *    memory and swap, RLIMIT_AS, RLIMIT_DATA) and every window creation refuses to start with
 *    fewer than a few file descriptors left (RLIMIT_NOFILE): RMX_ERR_NOMEM, with a line on stderr
 *    naming the limit, before UCX is asked (which would fill memory or /dev/shm, or crash).
 *  - Zero elements: a put, get, put_sub/get_sub of an empty section, or rmw/rmw2 of count 0 is a
 *    valid no-op returning RMX_OK (as MPI's count 0): its buffers may be NULL, but every other
 *    check (window, rank, failed peer, disp within the window, datatype, operation, assert,
 *    alignment) still applies and reports as for a real transfer; nothing is sent, no lock is
 *    taken.  A negative count is RMX_ERR_ARG.
 *  - Self: a put, get, put_sub or get_sub whose target is the calling rank is a local copy done
 *    before the call returns (after every earlier operation of this rank on those bytes): its
 *    effect is in program order with the caller's own loads and stores, as Fortran requires of
 *    `a(i)[this_image()] = x`, and nothing of it is left to land at the end of the segment.
 *    When its two sides share bytes it behaves as if the source were read whole before the
 *    destination is written (memmove; Fortran's `a(2:n)[this_image()] = a(1:n-1)`), contiguous
 *    or sectioned.
 *  - Handles stay recognisable after release: a freed window or finalized context passed again
 *    yields RMX_ERR_WIN / RMX_ERR_CTX rather than undefined behaviour (rmx keeps a few bytes of
 *    tombstone per released handle for this).
 */
#ifndef RMX_H
#define RMX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- version and export */
/*
 * The version of this header.  The Makefile reads these three lines (the one place the version
 * is written); the shared library's SONAME is librmx.so.RMX_VERSION_MAJOR.  MINOR and PATCH stay
 * below 100, so RMX_VERSION orders versions as numbers:
 *   #if RMX_VERSION >= RMX_VERSION_NUM(0, 2, 0)   ... use a call 0.2.0 added ...
 * rmx_version() returns the same number for the library actually loaded, which may be newer than
 * the header a program was compiled with (same MAJOR: same ABI).
 */
#define RMX_VERSION_MAJOR 0
#define RMX_VERSION_MINOR 1
#define RMX_VERSION_PATCH 0
#define RMX_VERSION_NUM(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define RMX_VERSION RMX_VERSION_NUM(RMX_VERSION_MAJOR, RMX_VERSION_MINOR, RMX_VERSION_PATCH)
#define RMX_VERSION_STR_(x) #x
#define RMX_VERSION_XSTR_(x) RMX_VERSION_STR_(x)
/* "MAJOR.MINOR.PATCH" */
#define RMX_VERSION_STRING RMX_VERSION_XSTR_(RMX_VERSION_MAJOR) "." \
    RMX_VERSION_XSTR_(RMX_VERSION_MINOR) "." RMX_VERSION_XSTR_(RMX_VERSION_PATCH)

/* Marks the public API: librmx.so is built with -fvisibility=hidden and exports exactly the
 * functions declared with RMX_API (tests/abi/librmx.symbols lists them; make check compares). */
#if defined(__GNUC__) && __GNUC__ >= 4
#define RMX_API __attribute__((visibility("default")))
#else
#define RMX_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the rmx library loaded at run time (compare with RMX_VERSION, the header's a
 * program was compiled with): rmx_version() as RMX_VERSION_NUM(major, minor, patch), e.g. 100
 * for 0.1.0; rmx_version_string() as "MAJOR.MINOR.PATCH" (static, never NULL).  Both need no
 * context and are safe from any thread at any time. */
RMX_API unsigned rmx_version(void);
RMX_API const char *rmx_version_string(void);

/* ---------------------------------------------------------------- status codes */
enum {
    RMX_OK              = 0,
    RMX_ERR_ARG         = -1,  /* invalid argument: NULL buffer, bad length, bad descriptor     */
    RMX_ERR_RANK        = -2,  /* target rank outside 0..size-1                                   */
    RMX_ERR_RANGE       = -3,  /* disp+len beyond the target's window                             */
    RMX_ERR_ALIGN       = -4,  /* atomic target not naturally aligned: disp, or the target's      */
                               /* address (its window's base + disp), not a multiple of the size  */
    RMX_ERR_DATATYPE    = -5,  /* unknown datatype, or op undefined for it (bitwise on float)     */
    RMX_ERR_OP          = -6,  /* unknown operation                                               */
    RMX_ERR_EPOCH       = -7,  /* epoch misuse: nested epoch, unlock without lock                 */
    RMX_ERR_WIN         = -8,  /* NULL, freed or foreign window handle                            */
    RMX_ERR_CTX         = -9,  /* NULL or finalized context, or no context yet                    */
    RMX_ERR_NOMEM       = -10, /* out of memory (host or registration)                            */
    RMX_ERR_PEER        = -11, /* the peer failed or became unreachable                           */
    RMX_ERR_TIMEOUT     = -12, /* an operation did not complete within the configured timeout     */
    RMX_ERR_BOOTSTRAP   = -13, /* out-of-band exchange (PMIx / OOB callbacks) failed              */
    RMX_ERR_TRANSPORT   = -14, /* UCX reported an error                                           */
    RMX_ERR_UNSUPPORTED = -15, /* valid request this build cannot serve                           */
    RMX_ERR_THREAD      = -16, /* a thread the context's thread level does not let in (above)    */
    RMX_ERR_STOPPED     = -17, /* a rank this sync needs has begun rmx_finalize (it stopped)       */
    RMX_ERR_COLLECTIVE  = -18, /* another rank failed its part of this collective call (below)    */
};

/* A human-readable sentence for any value returned by rmx (never NULL). */
RMX_API const char *rmx_strerror(int err);

/* ---------------------------------------------------------------- configuration */
typedef struct rmx_ctx rmx_ctx_t;
typedef struct rmx_win rmx_win_t;

/*
 * Out-of-band collectives supplied by an embedding runtime (the way UCC takes ucc_oob_coll_t).
 * allgather: every rank contributes `len` bytes (same len everywhere); recvbuf receives
 *            size*len bytes ordered by rank (rank i's at recvbuf + i * len, i as oob.rank
 *            numbers the ranks).  Return 0 on success.  rmx_init checks the first exchange:
 *            ranks out of that order (two with the same oob.rank, a runtime numbering them
 *            otherwise) or a recvbuf not filled fail it with RMX_ERR_BOOTSTRAP on every rank,
 *            with a message saying which.
 * barrier:   returns 0 once every rank has entered it.
 */
typedef struct rmx_oob {
    int (*allgather)(const void *sendbuf, void *recvbuf, size_t len, void *coll_ctx);
    int (*barrier)(void *coll_ctx);
    void *coll_ctx;
    int rank;
    int size;
} rmx_oob_t;

typedef enum {
    RMX_BOOT_AUTO = 0, /* the launcher's segment when started by rmx_fork_exec (RMX_FORK_FD,
                        * RMX_FORK_RANK, RMX_FORK_SIZE: api/rmx_fork.h); else
                        * PMIx when launched by a PMIx launcher; RMX_ERR_BOOTSTRAP when launched
                        * as one of several ranks by a launcher rmx recognises without PMIx (srun
                        * without --mpi=pmix, PMI_SIZE, OMPI_COMM_WORLD_SIZE, MV2_COMM_WORLD_SIZE
                        * > 1, each beside its rank variable: SLURM_PROCID, PMI_RANK, ..._RANK);
                        * otherwise single */
    RMX_BOOT_PMIX,
    RMX_BOOT_OOB,      /* use rmx_config_t.oob */
    RMX_BOOT_SINGLE,   /* one process; puts and gets are local copies ("Self" above), atomics
                        * go through UCX's self transport */
} rmx_boot_kind_t;

typedef enum {
    RMX_BIND_ENV = 0,  /* take RMX_BIND from the environment (none when unset) */
    RMX_BIND_NONE,
    RMX_BIND_CORE,     /* one core per local rank */
    RMX_BIND_NUMA,     /* the cores of one NUMA node per local rank */
} rmx_bind_t;

/*
 * Progress: who serves the operations peers aim at this rank where UCX cannot complete them
 * without the target (tcp, i.e. every peer off-node without an RDMA NIC; atomics on memory from
 * rmx_win_create).  UCP-allocated windows over shared memory need nobody in any mode.
 *  THREAD  a progress agent (a thread of rmx's, sleeping on the UCP worker's event fd, so it uses
 *          no CPU while no request comes) serves every put, get, atomic, lock word and
 *          synchronization notification aimed at this rank, whatever the program's threads do:
 *          one-sided on every transport.
 *  AUTO    the agent runs as soon as it may be needed: some peer is reached through a transport
 *          other than shared memory, or a window of registered memory exists (rmx_win_create,
 *          RMX_WIN_MEMORY=user).  Otherwise every path is one-sided without it.  The default.
 *  NONE    no agent: operations that need this rank are served only while it is inside an rmx
 *          call (every blocking call and rmx_progress progress it).  A peer's transfer to a rank
 *          busy outside rmx for longer than peer_timeout_s then fails with RMX_ERR_TIMEOUT.
 * Environment: RMX_PROGRESS=auto|thread|none, read when the field is RMX_PROGRESS_ENV.
 */
typedef enum {
    RMX_PROGRESS_ENV = 0,   /* take RMX_PROGRESS from the environment (auto when unset) */
    RMX_PROGRESS_AUTO,
    RMX_PROGRESS_THREAD,
    RMX_PROGRESS_NONE,
} rmx_progress_t;

/* Where rmx_win_allocate takes its memory.  UCP: UCP allocates it (ucp_mem_map ALLOCATE), which
 * shared-memory peers reach with loads, stores and CPU atomics.  USER: ordinary pages, registered
 * as rmx_win_create does (to run a program over that path, e.g. its tests).  Environment:
 * RMX_WIN_MEMORY=ucp|user, read when the field is RMX_WIN_MEMORY_ENV. */
typedef enum {
    RMX_WIN_MEMORY_ENV = 0, /* take RMX_WIN_MEMORY from the environment (ucp when unset) */
    RMX_WIN_MEMORY_UCP,
    RMX_WIN_MEMORY_USER,
} rmx_win_memory_t;

/*
 * Direct on-node access: where a peer's window part is mapped into this process (UCX's posix or
 * sysv shared memory, xpmem: ucp_rkey_ptr succeeds; that is every rmx_win_allocate window of a
 * rank on this node, not memory from rmx_win_create), rmx_put and rmx_get (and the subarray
 * calls) are plain copies into / out of that mapping and complete at once, with no UCP request.
 * Atomics (rmx_rmw, rmx_rmw2, locks, synchronization counters) are CPU atomics on the mapping
 * when every rank of the context has direct access on and maps every other rank's memory (all on
 * one node, shared memory transports): then every agent that can update a word uses the same
 * CPU atomics, which are coherent with one another; otherwise they stay UCP atomics (a NIC's
 * atomics are not atomic with the CPU's).  Segments, flow dependencies, locks and statistics keep
 * their meaning: such a put is simply complete when it returns (stats: direct_puts and friends,
 * not ucp_puts).  Environment: RMX_DIRECT=1|0, read when the field is RMX_DIRECT_ENV.
 */
typedef enum {
    RMX_DIRECT_ENV = 0, /* take RMX_DIRECT from the environment (on when unset) */
    RMX_DIRECT_ON,
    RMX_DIRECT_OFF,     /* every operation goes through UCP (for comparison) */
} rmx_direct_t;

/*
 * Diagnostics on stderr, one line each: "rmx[RANK +SECONDS] LEVEL: message" (RANK "-" before the
 * bootstrap has named it; SECONDS since rmx_init began).  ERROR: what made a call fail, with
 * UCX's or PMIx's own status string and what to do; WARN (the default) adds what rmx refused or
 * worked around; INFO adds, once per rmx_init, the bootstrap, the binding, the progress mode,
 * whether direct access is in use (and why not), and per peer the UCX transports that carry
 * puts, gets and atomics; DEBUG adds window creation and free, locks and peer failures.
 * Environment: RMX_LOG=error|warn|info|debug wins over the field when set (as UCX's UCX_*
 * variables do: a level can be raised without rebuilding the program); an unknown word is
 * RMX_ERR_ARG.
 */
typedef enum {
    RMX_LOG_DEFAULT = 0,    /* warn, unless RMX_LOG says otherwise */
    RMX_LOG_ERROR,
    RMX_LOG_WARN,
    RMX_LOG_INFO,
    RMX_LOG_DEBUG,
} rmx_log_level_t;

/*
 * Thread levels (rmx_config_t.threads), as MPI's MPI_THREAD_SINGLE / MPI_THREAD_MULTIPLE.
 *  SINGLE    the context belongs to the thread that called rmx_init: any other thread's call
 *            returns RMX_ERR_THREAD and touches nothing.  No lock is taken anywhere.
 *  MULTIPLE  any thread may call, concurrently.  A call holds the context's lock while it runs,
 *            so calls on one context are serialized (issue 18's streams will give threads
 *            paths that share no lock); a call that waits for other ranks (rmx_sync_all,
 *            rmx_sync_images, a contended rmx_win_lock, window creation and free, and the
 *            termination wait of rmx_finalize) lets the other threads of its rank in between
 *            its polls, so their puts, gets and atomics go on and complete while it waits
 *            (and can be what the other ranks are waiting for).  A single transfer's wait
 *            (a get, a fetching atomic, a flush at a segment's end) keeps the lock: it needs no
 *            other thread of this rank, only the target, and is bounded by peer_timeout_s.
 * Threads (RMX_THREAD_MULTIPLE), per call:
 *  - rmx_put, rmx_get, rmx_put_sub, rmx_get_sub, rmx_rmw, rmx_rmw2, rmx_win_size, rmx_progress,
 *    rmx_rank, rmx_size, rmx_peer_status, rmx_stats, rmx_stats_reset: safe concurrently with
 *    every call, on the same window or others.  Segments are the rank's, not a thread's: an
 *    image-control call on one thread (rmx_sync_memory, rmx_sync_all, rmx_sync_images, lock,
 *    unlock) completes the operations every thread of the rank issued before it.  Two
 *    threads' accesses to the same bytes are ordered only by the program's own synchronization
 *    (as two processes' would be).  An rmw with RMX_MODE_PASSIVE_EPOCH_IMPLICIT waits while
 *    another thread's implicit epoch holds the same target of the same window.
 *  - rmx_sync_memory, rmx_sync_images: safe concurrently (each thread's sync_images counts as one
 *    call naming each listed image: the k-th call of this rank naming Q, whichever thread made
 *    it, matches Q's k-th call naming this rank).
 *  - rmx_win_lock / rmx_win_unlock: the epoch on (window, target) is the rank's, as in MPI: one
 *    thread may unlock what another locked.  A second lock of the same target and window while
 *    one is held or being acquired by any thread of the rank is RMX_ERR_EPOCH, and so is an
 *    unlock while it is still being acquired.  Locks of other targets or windows are
 *    independent.
 *  - Collectives (rmx_win_allocate, rmx_win_create, rmx_win_free, rmx_sync_all, rmx_finalize):
 *    one at a time per rank, in the same order on every rank, as MPI requires of a
 *    communicator's collectives: one called while another thread of the rank is inside one
 *    returns RMX_ERR_THREAD at once (it does not take part: the other ranks would wait for it,
 *    so this is the program's error, reported rather than hung).  Other threads may do RMA on
 *    other windows meanwhile.
 *  - Using a window while another thread frees it, or a context while another finalizes it, is
 *    the program's error (MPI's too).  rmx reports what it can: a call that finds its window
 *    being freed or freed returns RMX_ERR_WIN, a call on a context being finalized or
 *    finalized RMX_ERR_CTX, and rmx_finalize while another thread is inside a call on the
 *    context returns RMX_ERR_THREAD and finalizes nothing.
 *  - rmx_init, rmx_config_init, rmx_strerror, rmx_version*, rmx_topology_print: any thread, any
 *    time, at every level.
 */
typedef enum {
    RMX_THREAD_SINGLE = 0,  /* the default: the thread that called rmx_init only */
    RMX_THREAD_MULTIPLE,    /* any thread, concurrently */
} rmx_thread_level_t;

/* The largest rmx_config_t.coalesce_max. */
#define RMX_COALESCE_MAX_LIMIT 65536

/* rmx_init checks every field and rejects a bad one with RMX_ERR_ARG and a line on stderr naming
 * the field (or the environment variable it was read from). */
typedef struct rmx_config {
    rmx_boot_kind_t bootstrap;
    rmx_oob_t oob;              /* used when bootstrap == RMX_BOOT_OOB: both callbacks, 0 <= rank < size */
    rmx_bind_t bind;
    double peer_timeout_s;      /* how long a blocking call waits on a silent peer, finite, in
                                 * [0, 1e6] s; 0: default 10 s */
    size_t coalesce_max;        /* puts up to this size are combined per segment; 0: default
                                 * (4096), at most RMX_COALESCE_MAX_LIMIT */
    int coalesce_disable;       /* 1: never combine puts; 0 or 1                                    */
    rmx_progress_t progress;    /* who serves peers' operations (above); a bad value: RMX_ERR_ARG   */
    rmx_win_memory_t window_memory; /* backing of rmx_win_allocate (above)                          */
    rmx_direct_t direct;        /* loads, stores and CPU atomics on mapped peers (above)            */
    rmx_log_level_t log_level;  /* what rmx writes on stderr (above); RMX_LOG wins when set      */
    rmx_thread_level_t threads; /* which threads may call (above); a bad value: RMX_ERR_ARG       */
} rmx_config_t;

/* Fill *cfg with the defaults (AUTO bootstrap, bind, progress, window memory and direct access
 * from the environment, 10 s timeout, coalescing on). */
RMX_API void rmx_config_init(rmx_config_t *cfg);

/* ---------------------------------------------------------------- context */
/* Create the context (collective over all ranks).  cfg NULL: defaults. */
RMX_API int rmx_init(const rmx_config_t *cfg, rmx_ctx_t **ctx);
/* Complete all outstanding operations, release every lock this rank still holds (with a warning:
 * a rank waiting for one would otherwise never come to its own rmx_finalize), free every window
 * still open, release UCX. Collective,
 * as Fortran's normal termination: the rank first tells every other rank it has stopped, then
 * waits until all ranks have called rmx_finalize (its windows stay reachable meanwhile).  A rank
 * waiting in rmx_sync_all, or in rmx_sync_images naming a stopped rank, gets RMX_ERR_STOPPED
 * instead of being matched by the finalize.  The ranks wait for each other over UCX only, never
 * through the bootstrap (a PMIx fence or an embedding runtime's barrier would wait for a dead
 * rank for ever): after a rank failed, every survivor's rmx_finalize returns within about
 * peer_timeout_s (RMX_ERR_PEER; RMX_ERR_STOPPED; RMX_ERR_TIMEOUT when a live rank did not
 * reach the end of its own finalize within peer_timeout_s), and the context is released in
 * every case. */
RMX_API int rmx_finalize(rmx_ctx_t *ctx);
/* RMX_OK while `rank` runs, RMX_ERR_STOPPED once it has begun rmx_finalize, RMX_ERR_PEER once it
 * has failed (Fortran IMAGE_STATUS); RMX_ERR_RANK / RMX_ERR_CTX for bad arguments. */
RMX_API int rmx_peer_status(rmx_ctx_t *ctx, int rank);
/* This rank fails on purpose (Fortran's FAIL IMAGE): it tells every live rank that it has
 * failed, waits until they have been told, and leaves the bootstrap as a finished process does
 * (so a launcher such as mpirun sees a normal exit, not a crash).  Nothing else is completed or
 * released: the caller then ends the process at once, without rmx_finalize, and the context may
 * not be used again (every call returns RMX_ERR_CTX).  The other ranks treat it as a
 * rank that died: their waits on it, rmx_peer_status, and from then on every call that needs it
 * return RMX_ERR_PEER, without waiting for the transport to notice that the process is gone; a
 * transfer to it issued before a rank has looked (a wait or rmx_peer_status) may still reach its
 * memory.  Survivors' rmx_finalize returns RMX_ERR_PEER as after any failure, once every live
 * rank has begun its own. */
RMX_API int rmx_fail(rmx_ctx_t *ctx);
/* Progress: serve what peers sent to this rank (where the agent does not) and advance this rank's
 * own operations; nothing else.  Every blocking call does this too, and so does rmx_sync_memory
 * (with nothing outstanding, once in 1024 calls). */
RMX_API int rmx_progress(rmx_ctx_t *ctx);
/* Rank / number of ranks; negative RMX_ERR_CTX for a bad context. */
RMX_API int rmx_rank(rmx_ctx_t *ctx);
RMX_API int rmx_size(rmx_ctx_t *ctx);

/* Print cores, NUMA nodes, network devices and this process's binding (hwloc).  Like
 * rmx_strerror and rmx_config_init it needs no context and is safe from any thread at any time,
 * also while other threads create or finalize contexts. */
RMX_API int rmx_topology_print(FILE *out);

/* ---------------------------------------------------------------- windows */
/* Creation exchanges every rank's address, size and keys in one round over rmx's own endpoints
 * (never the bootstrap once rmx_init is done), then agrees in one barrier.  A key longer than
 * its slot (RMX_WIN_XCHG_SLOT bytes a rank, default 512; every rank must see the same value), or
 * a job of more than 4096 ranks, sends that creation through the bootstrap, on every rank. */
/* Collective.  Allocates len bytes (NUMA-local, UCP-mapped so shared-memory peers reach it with no
 * target involvement), zero-filled; *base receives the local address.  len may be 0. */
RMX_API int rmx_win_allocate(rmx_ctx_t *ctx, size_t len, void **base, rmx_win_t **win);
/* Collective.  Registers the caller's memory [base, base+len) as a window. */
RMX_API int rmx_win_create(rmx_ctx_t *ctx, void *base, size_t len, rmx_win_t **win);
/* Collective.  Completes the window's outstanding operations and releases it; *win becomes NULL,
 * except when the free was refused by agreement (an access epoch still open here: RMX_ERR_EPOCH,
 * or on another rank: RMX_ERR_COLLECTIVE), which leaves the window valid on every rank.
 * RMX_ERR_PEER: a rank has failed, so the free was not agreed by all (see Peer failure above: the
 * memory stays reachable until rmx_finalize). */
RMX_API int rmx_win_free(rmx_win_t **win);
/* Size in bytes of `rank`'s part of the window. */
RMX_API int rmx_win_size(rmx_win_t *win, int rank, size_t *len);

/* ---------------------------------------------------------------- contiguous RMA */
/* Write len bytes from src to [disp, disp+len) of target's window.  src is reusable on return;
 * completion at the target is deferred to the end of the segment (to the calling rank itself:
 * complete on return, see "Self" above). */
RMX_API int rmx_put(rmx_win_t *win, const void *src, size_t len, int target, size_t disp);
/* Read len bytes from target's window into dst.  Blocking: dst holds the data on return, and it
 * reflects every put this rank issued earlier in the segment to overlapping bytes. */
RMX_API int rmx_get(rmx_win_t *win, void *dst, size_t len, int target, size_t disp);

/* ---------------------------------------------------------------- subarrays */
#define RMX_SUB_MAX_RANK 15

typedef enum { RMX_ORDER_C = 0, RMX_ORDER_FORTRAN = 1 } rmx_order_t;

typedef struct rmx_sub_dim {
    size_t extent;  /* full extent of the array in this dimension (elements)   */
    size_t first;   /* first index of the section, 0-based                      */
    size_t count;   /* number of elements of the section in this dimension      */
    size_t stride;  /* step between section elements (>= 1)                     */
} rmx_sub_dim_t;

/* An N-d section of an array.  dim[0] is the first index as written: in C order the last
 * dimension varies fastest, in Fortran order the first one does. */
typedef struct rmx_sub {
    size_t elem_size;
    int rank;                   /* 1 .. RMX_SUB_MAX_RANK */
    rmx_order_t order;
    rmx_sub_dim_t dim[RMX_SUB_MAX_RANK];
} rmx_sub_t;

/* src/dst point at the local array's first element; disp is the byte offset of the remote array's
 * first element in target's window.  Both sections must hold the same number of elements of the
 * same size; shapes may differ.  Elements are matched in element order. */
RMX_API int rmx_put_sub(rmx_win_t *win, const void *src, const rmx_sub_t *local,
                        int target, size_t disp, const rmx_sub_t *remote);
RMX_API int rmx_get_sub(rmx_win_t *win, void *dst, const rmx_sub_t *local,
                        int target, size_t disp, const rmx_sub_t *remote);

/* ---------------------------------------------------------------- read-modify-write */
typedef enum {
    RMX_INT32 = 0, RMX_INT64, RMX_UINT32, RMX_UINT64, RMX_FLOAT, RMX_DOUBLE,
    RMX_DTYPE_COUNT
} rmx_dtype_t;

/* One-operand ops: target = target OP operand. */
typedef enum {
    RMX_OP_INC = 0, /* operand ignored: target + 1 */
    RMX_OP_PROD, RMX_OP_SUM,
    RMX_OP_LAND, RMX_OP_LOR, RMX_OP_LXOR,   /* logical: nonzero is true, result 0/1;
                                               integers only, as in MPI */
    RMX_OP_BAND, RMX_OP_BOR, RMX_OP_BXOR,   /* integers only */
    RMX_OP_SWAP,                            /* target = operand */
    RMX_OP_MIN, RMX_OP_MAX,
    RMX_OP_NO_OP,                           /* atomic fetch; target unchanged */
    RMX_OP_COUNT
} rmx_rmw_op_t;

/* Two-operand ops: operand = comparand or mask, operand2 = new value. */
typedef enum {
    RMX_OP2_COMP_SWAP = 0,  /* if (target == comparand) target = operand2             */
    RMX_OP2_MASK_SWAP,      /* target = (target & ~mask) | (operand2 & mask)          */
    RMX_OP2_COMP_SWAP_GT,   /* if (target >  comparand) target = operand2             */
    RMX_OP2_COMP_SWAP_GE,
    RMX_OP2_COMP_SWAP_LT,
    RMX_OP2_COMP_SWAP_LE,
    RMX_OP2_COMP_SWAP_NE,
    RMX_OP2_COUNT
} rmx_rmw2_op_t;

/* assert flags of rmx_rmw/rmx_rmw2/rmx_win_lock */
#define RMX_MODE_PASSIVE_EPOCH_IMPLICIT 0x1  /* exclusive lock(target); op; unlock(target)   */
#define RMX_MODE_NOCHECK                0x2  /* with the above: take no lock                  */

/* count elements of dt at disp of target: result[i] = old target[i]; target[i] updated.
 * Each element is atomic on its own.  result may be NULL (no fetch).  result may be the operand
 * buffer itself (each element's operand is read before its old value is written), but must not
 * otherwise overlap an operand (as in MPI): elements are done in order, one at a time.
 * RMX_MODE_PASSIVE_EPOCH_IMPLICIT (NOCHECK or not) while this rank holds a lock of (win,
 * target) from rmx_win_lock, in any of its threads: RMX_ERR_EPOCH (MPI: a nested lock). */
RMX_API int rmx_rmw(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt, void *result,
                    int target, size_t disp, int assert, rmx_rmw_op_t op);
RMX_API int rmx_rmw2(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt,
                     const void *operand2, void *result, int target, size_t disp, int assert,
                     rmx_rmw2_op_t op);

/* ---------------------------------------------------------------- passive-target locks */
typedef enum { RMX_LOCK_EXCLUSIVE = 1, RMX_LOCK_SHARED = 2 } rmx_lock_t;

/* Begin an access epoch on target (image control: ends the segment).  Remote atomics only; at
 * most 1 048 574 ranks (the holder's rank is kept in the lock word), RMX_ERR_UNSUPPORTED beyond.
 * RMX_ERR_TIMEOUT (the target silent for peer_timeout_s) opens no epoch, but the request may
 * still take effect when the target answers: this rank gives back whatever it took at its next
 * rmx_win_lock or rmx_win_unlock of that target (or implicit-epoch rmw), rmx_sync_all,
 * rmx_win_free or rmx_finalize (each RMX_ERR_TIMEOUT again while the target is still silent).
 * Until then other ranks may wait for that lock as for a holder: after a timed-out lock, call
 * rmx_win_unlock. */
RMX_API int rmx_win_lock(rmx_win_t *win, rmx_lock_t type, int target, int assert);
/* Complete the epoch's operations at target, then release the lock.  After a lock of target
 * that timed out: give back what it may have taken (RMX_OK once done, no epoch left). */
RMX_API int rmx_win_unlock(rmx_win_t *win, int target);

/* ---------------------------------------------------------------- synchronization */
/* Complete every outstanding operation of this rank, then barrier with all ranks.  When some
 * rank's operations did not complete, every rank learns it: that rank gets the cause, the others
 * RMX_ERR_COLLECTIVE (the barrier still synchronized). */
RMX_API int rmx_sync_all(rmx_ctx_t *ctx);
/* Complete this rank's outstanding operations (to every target: segment order is transitive),
 * then wait until each listed image has executed a matching rmx_sync_images naming this rank
 * (Fortran SYNC IMAGES: the k-th call naming Q matches Q's k-th call naming us).  images NULL:
 * all ranks (n ignored). */
RMX_API int rmx_sync_images(rmx_ctx_t *ctx, const int *images, int n);
/* End the segment: every outstanding operation of this rank is complete at its target. */
RMX_API int rmx_sync_memory(rmx_ctx_t *ctx);

/* ---------------------------------------------------------------- nonblocking operations */
/*
 * A nonblocking call starts an operation and returns a request; rmx_test or rmx_wait completes
 * it and releases the request.  (MPI-3's MPI_Rget / MPI_Rget_accumulate, OpenSHMEM's *_nbi.)
 *  - Issuing: *req is set on RMX_OK.  A call that returns an error has started nothing and
 *    sets *req to NULL (bad input is reported as by the blocking call; so is a target known to
 *    have failed).  req itself NULL: RMX_ERR_ARG.
 *  - Buffers: dst (and a rmw's result) belong to the request until it completes: rmx writes them
 *    only until then.  A request that fails (RMX_ERR_PEER: the target died; RMX_ERR_TIMEOUT:
 *    rmx_wait waited peer_timeout_s for it) completes with that error, dst may hold part of the
 *    data, and nothing is written into it afterwards: where the answer needs the target's
 *    progress it lands in memory rmx owns (or rmx's reply handler copies it only while the
 *    request is live), and a transfer still able to write dst after a timeout has its endpoint
 *    closed first (as for the blocking calls: the target is then unreachable, RMX_ERR_PEER).
 *  - Ordering, as the blocking calls: a nonblocking get sees every put this rank issued earlier
 *    to overlapping bytes; a later put or atomic of this rank to bytes an outstanding get reads
 *    waits for that get first (stats.nb_write_waits); later gets of those bytes do not wait
 *    (they do for an outstanding fetching atomic, which also writes its bytes).
 *  - Completion: rmx_test and rmx_wait complete requests; so does every segment end
 *    (rmx_sync_all, rmx_sync_images, rmx_sync_memory, rmx_win_lock/unlock, rmx_win_free,
 *    rmx_finalize) and rmx_flush of the target: each completes the outstanding requests (their
 *    data delivered) but does not release them; rmx_test/rmx_wait then return at once with the
 *    operation's result.  A request stays valid to test or wait on after its window is freed;
 *    rmx_finalize releases every request of the context, and the handles are invalid after it.
 *  - Progress: a request advances inside every rmx call of the context (rmx_progress too).
 *    rmx_test never times out; rmx_wait gives up after peer_timeout_s (RMX_ERR_TIMEOUT).
 *  - Direct paths complete at once: a get from this rank itself or from a peer mapped here
 *    (rmx_direct_t) is a copy done before the call returns, and the request is complete.
 *  - Release: rmx_test (done) and rmx_wait release the request and set *req to NULL.  Waiting on
 *    a NULL request returns RMX_OK at once (MPI_REQUEST_NULL); a handle already released (a
 *    copy of one that was waited on) is RMX_ERR_ARG while rmx has not reused its memory for a
 *    new request, undefined after that: keep one copy of a handle.
 *  - Threads (RMX_THREAD_MULTIPLE): every call here is safe concurrently with every call, as
 *    rmx_get is (they hold the context's lock; a wait keeps it, as a single transfer's wait
 *    does).  A request belongs to the rank, not to the thread that issued it: any thread may
 *    test or wait on it, one at a time (a second thread waiting on a handle the first has
 *    released is the released-handle case above).  A request issued on a stream is the
 *    stream's (its thread's alone: another thread's test or wait is RMX_ERR_THREAD).
 *    rmx_wait_all's requests must all be of one context and its streams (else RMX_ERR_ARG).
 *    rmx_flush and segment ends complete every thread's requests and operations to their
 *    targets (a stream's: rmx_flush on its bound handle, rmx_stream_flush).
 */
typedef struct rmx_request rmx_request_t;

/* rmx_flush / rmx_flush_local: every target of the window. */
#define RMX_TARGET_ALL (-1)

/* rmx_get, nonblocking: dst holds the data once the request has completed. */
RMX_API int rmx_iget(rmx_win_t *win, void *dst, size_t len, int target, size_t disp,
                     rmx_request_t **req);
/* rmx_get_sub, nonblocking.  Left in flight: a section that is one contiguous run on both
 * sides (as rmx_iget's), and, to a peer reached over rmx's active messages (tcp), a section
 * whose runs are at most 8 KiB: its runs travel as packed gets (32 KiB answers), the last four
 * in flight (a larger section completes its earlier ones inside the call), and the answers are
 * scattered into dst by rmx_test / rmx_wait (or a flush, a segment end) once all have come.
 * Any other section (through UCP RMA, longer runs) is read before the call returns (as
 * rmx_get_sub, which keeps up to 64 gets of one section in flight) and the request comes back
 * complete. */
RMX_API int rmx_iget_sub(rmx_win_t *win, void *dst, const rmx_sub_t *local, int target,
                         size_t disp, const rmx_sub_t *remote, rmx_request_t **req);
/* rmx_rmw / rmx_rmw2, nonblocking: result holds the old values once the request has completed.
 * result NULL (no fetch): the call completes the operation as rmx_rmw does and sets *req to
 * NULL (nothing to wait for).  Left in flight: one element (count 1), an op UCP does natively
 * (INC, SUM on integers; SWAP; COMP_SWAP on integers), no lock to take, to a peer that is not
 * this rank and not mapped here (else CPU atomics: complete at once).  Every other call (count
 * > 1, emulated ops, implicit epochs) runs before the call returns and the request comes back
 * complete.  While one is outstanding, later puts, atomics and gets of its bytes wait for it
 * (it writes them). */
RMX_API int rmx_irmw(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt,
                     void *result, int target, size_t disp, int assert, rmx_rmw_op_t op,
                     rmx_request_t **req);
RMX_API int rmx_irmw2(rmx_win_t *win, const void *operand, int count, rmx_dtype_t dt,
                      const void *operand2, void *result, int target, size_t disp, int assert,
                      rmx_rmw2_op_t op, rmx_request_t **req);
/* rmx_put whose source is not yet reusable on return: src belongs to the request until it
 * completes (rmx_test/rmx_wait), or until rmx_flush_local (or rmx_flush, or a segment end) of
 * its target.  Completion at the target follows the segment rules of rmx_put (and rmx_flush).
 * Cheaper than rmx_put only where rmx_put would wait for the source: a put larger than
 * coalesce_max over UCP RMA; everywhere else (small puts, which rmx stages; self; mapped peers;
 * rmx's active messages over tcp) the source is reusable on return and the request complete. */
RMX_API int rmx_iput(rmx_win_t *win, const void *src, size_t len, int target, size_t disp,
                     rmx_request_t **req);
/* *done = 1 when the request has completed: it is released, *req becomes NULL and the return
 * value is the operation's result.  *done = 0: still running, RMX_OK.  Progresses once.
 * *req NULL: *done = 1, RMX_OK.  req or done NULL: RMX_ERR_ARG. */
RMX_API int rmx_test(rmx_request_t **req, int *done);
/* Until the request completes; then as rmx_test with *done = 1. */
RMX_API int rmx_wait(rmx_request_t **req);
/* rmx_wait on reqs[0..n): NULL entries are skipped; every request is completed and released
 * (each entry set to NULL) and the first error in array order is returned.  When some entry is
 * not a valid request (or the requests are of several contexts: one context and its streams
 * are one), RMX_ERR_ARG and nothing is waited for or released; a stream's request of another
 * thread: RMX_ERR_THREAD, likewise. n < 0, or reqs NULL with n > 0: RMX_ERR_ARG. */
RMX_API int rmx_wait_all(rmx_request_t **reqs, int n);

/* ---------------------------------------------------------------- per-target completion */
/* Complete at `target` every operation this rank issued to it in this window: puts (also
 * staged ones and rmx_iput's) are visible there on return, and outstanding nonblocking
 * requests to it are completed (not released).  May complete more (other windows' operations
 * to the same target).  Unlike rmx_sync_memory it is no image control: it ends no segment,
 * operations to other targets stay outstanding (stats: one endpoint flush, no worker flush),
 * and no peer is notified: to tell the target, send a notification after it (an atomic, a
 * sync_images).  RMX_TARGET_ALL: every target.  Errors: RMX_ERR_WIN, RMX_ERR_RANK (not a rank
 * nor RMX_TARGET_ALL), RMX_ERR_PEER (the target failed: its operations are lost). */
RMX_API int rmx_flush(rmx_win_t *win, int target);
/* Every rmx_iput of this rank to `target` (RMX_TARGET_ALL: to any target) has let go of its
 * source buffer: those requests complete (not released; a failed one keeps its error).  Nothing
 * is completed at the target.  Operations other than rmx_iput never hold a source on return. */
RMX_API int rmx_flush_local(rmx_win_t *win, int target);

/* ---------------------------------------------------------------- streams
 * A stream is one thread's own path to the other ranks: OpenSHMEM's communication contexts,
 * UCX's worker per thread.  It has its own UCP worker and endpoints to every rank, its own
 * completion tracking (segments, staging, nonblocking requests) and its own statistics, so two
 * threads on two streams share no lock and no UCP object when they move data.
 *  - A stream belongs to the thread that created it: only that thread may use it, its bound
 *    windows and its requests (any other thread: RMX_ERR_THREAD).  Created and freed locally,
 *    on a context of any thread level (at RMX_THREAD_SINGLE only the owner thread can create
 *    one; it then only separates completion).  The first streams cost a UCP worker and an
 *    endpoint per rank each, wired up before the call returns (milliseconds); a freed stream's
 *    worker and endpoints are kept for the next rmx_stream_create (microseconds), until
 *    rmx_finalize.
 *  - rmx_win_bind gives a window handle bound to a stream: the same window (memory, ranks'
 *    parts, direct mappings, lock words) reached through the stream's endpoints.  Every call
 *    that takes a window takes a bound handle: rmx_put, rmx_get, the sections, rmx_rmw and
 *    rmx_rmw2, the nonblocking forms, rmx_flush, rmx_flush_local, rmx_win_size, rmx_win_lock
 *    and rmx_win_unlock.  The same segment and flow-dependency rules hold among one stream's
 *    operations; operations of different streams (or of a stream and the context) are ordered
 *    only by completion: rmx_flush / rmx_stream_flush on one, then the other.
 *  - Completion: rmx_flush(bound, target) completes the stream's operations to target in that
 *    window, rmx_stream_flush every operation of the stream (OpenSHMEM's shmem_ctx_quiet).
 *    Image control on the context (rmx_sync_all, rmx_sync_images, rmx_sync_memory) completes
 *    the context's own operations, not the streams' (as shmem_quiet and shmem_barrier_all
 *    cover OpenSHMEM's default context): flush a stream before a synchronization that must
 *    order its operations.
 *  - Locks are the rank's, as in MPI: rmx_win_lock and rmx_win_unlock on a bound handle first
 *    complete every operation of the stream (the lock ends the stream's segment too), then take
 *    or release the window's lock exactly as the window's own handle would (the same epoch: one
 *    thread may lock through a stream and unlock through the window, but an unlock through the
 *    window's own handle completes the context's operations only, not a stream's: flush the
 *    stream first); an rmw's implicit epoch (RMX_MODE_PASSIVE_EPOCH_IMPLICIT) on a bound handle
 *    likewise.  At RMX_THREAD_MULTIPLE these take the context's lock, like any call on the
 *    context: lock traffic is not the data path.
 *  - Direct on-node access (rmx_direct_t) holds on a stream as on the context: copies and CPU
 *    atomics, no worker involved.
 *  - Serving peers: a stream only issues.  Peers' operations on this rank's windows are served
 *    as before (rmx_progress_t): by the progress agent, or, under RMX_PROGRESS=none, inside the
 *    context's own calls (rmx_stream_create among them: ranks may create streams at once).
 *  - Freeing: rmx_win_free on a bound handle unbinds it (local, not collective: its operations
 *    complete first).  A window cannot be freed while a bound handle of it exists on this rank
 *    (rmx_win_free of the window returns RMX_ERR_ARG on this rank and RMX_ERR_COLLECTIVE on the
 *    others; nothing is freed).  rmx_stream_free completes the stream's operations, unbinds
 *    its windows and closes it; rmx_finalize frees the streams left (their threads must be done
 *    with them).  A stream's requests are released with it (their handles invalid after).
 *  - Peer failure reaches a stream as it reaches the context: its calls to that peer return
 *    RMX_ERR_PEER, and so do rmx_stream_flush, rmx_stream_free and the unbinding rmx_win_free
 *    when operations to a failed peer were outstanding (the stream, the unbinding, are done
 *    anyway).  A stream created after the context learned that a rank failed (or
 *    whose endpoint to a rank cannot be made) reaches every other rank, and that one never
 *    (RMX_ERR_PEER); otherwise a stream learns of a death as the context does (UCX's keepalive
 *    in its progress, an operation that fails).  Known limit (UCX before
 *    1.14, e.g. Debian's 1.13.1): over tcp, a rank that dies while another rank is creating a
 *    stream (its endpoints' connection handshake under way) can abort that rank inside UCX (an
 *    assertion removed upstream by openucx/ucx#8175); rmx_stream_create completes every
 *    handshake before it returns and reuses freed streams' endpoints, so only deaths during the
 *    creation of a new worker's endpoints are exposed.
 *  - Errors: a stream handle that is none (or freed) is RMX_ERR_ARG; a window of another
 *    context, or one bound to this stream already, RMX_ERR_ARG; a bound handle given to
 *    rmx_win_bind, RMX_ERR_WIN.  rmx_stream_create and rmx_win_bind set their output to NULL
 *    whenever they fail.
 */
typedef struct rmx_stream rmx_stream_t;

RMX_API int rmx_stream_create(rmx_ctx_t *ctx, rmx_stream_t **stream);
/* *stream NULL afterwards; a NULL *stream is RMX_OK (nothing to free). */
RMX_API int rmx_stream_free(rmx_stream_t **stream);
/* A handle of win bound to stream (*bound; free it with rmx_win_free).  A window may be bound to
 * any number of streams, once each (a second bind to the same stream: RMX_ERR_ARG); a bound
 * handle cannot be bound again (RMX_ERR_WIN). */
RMX_API int rmx_win_bind(rmx_win_t *win, rmx_stream_t *stream, rmx_win_t **bound);
/* Complete every operation of the stream at its target, and its outstanding requests (not
 * released), as rmx_flush(bound, RMX_TARGET_ALL) on each of its windows at once. */
RMX_API int rmx_stream_flush(rmx_stream_t *stream);

/* ---------------------------------------------------------------- statistics */
/* What rmx did, counted since init or the last rmx_stats_reset (this rank only). */
typedef struct rmx_stats {
    uint64_t puts, gets, atomics;          /* calls into rmx that moved data            */
    uint64_t ucp_puts, ucp_gets, ucp_amos; /* UCP operations actually issued             */
    uint64_t puts_coalesced;               /* rmx puts merged into another UCP put       */
    uint64_t puts_self;                    /* rmx puts to this rank: local copies ("Self") */
    uint64_t direct_puts, direct_gets;     /* copies to / from a mapped peer (rmx_direct_t) */
    uint64_t direct_amos;                  /* CPU atomics on a mapped peer's word         */
    uint64_t flushes_ep;                   /* ucp_ep_flush calls (one target each)       */
    uint64_t flushes_worker;               /* ucp_worker_flush calls (all targets)       */
    uint64_t fences;                       /* ucp_worker_fence calls                     */
    uint64_t flow_waits;                   /* flushes forced by a flow dependency        */
    uint64_t waits_avoided;                /* accesses that needed no wait (no overlap)  */
    uint64_t cas_retries;                  /* failed CAS attempts in emulated atomics    */
    uint64_t lock_retries;                 /* back-off rounds while a lock was contended */
    uint64_t barriers;                     /* rmx_sync_all barriers completed            */
    /* Strided sections over rmx's active messages (tcp): short runs carried many to a message,
     * each message also counted as one of ucp_puts / ucp_gets. */
    uint64_t packed_msgs;                  /* packed messages sent (puts and gets)        */
    uint64_t packed_runs;                  /* remote runs they carried                   */
    /* The progress agent (rmx_progress_t), since init (rmx_stats_reset leaves these): */
    uint64_t agent_wakeups;                /* times it woke up to serve requests         */
    uint64_t agent_cpu_ns;                 /* CPU time it used (ns)                      */
    int agent_running;                     /* 1 while it runs                            */
    /* Nonblocking operations (rmx_iget, rmx_iput, ...): */
    uint64_t nb_requests;                  /* requests left outstanding by the issuing call */
    uint64_t nb_write_waits;               /* outstanding requests a later access waited for */
    /* UCP puts complete at the target when issued: to a peer's window that UCX maps here and
     * reaches with copies (shared memory with RMX_DIRECT=0, or where rmx copies only through
     * UCX).  Counted in ucp_puts too; nothing waits for them: no flush, fence or flow wait. */
    uint64_t landed_puts;
} rmx_stats_t;

RMX_API int rmx_stats(rmx_ctx_t *ctx, rmx_stats_t *out);
RMX_API int rmx_stats_reset(rmx_ctx_t *ctx);
/* A stream's own counts (rmx_stream_t), since its creation: its agent fields are 0 (the agent
 * is the context's: rmx_stats).  rmx_stats of the context does not include its streams', and
 * rmx_stats_reset of the context leaves theirs. */
RMX_API int rmx_stream_stats(rmx_stream_t *stream, rmx_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif /* RMX_H */
