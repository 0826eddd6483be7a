/*
 * rmx_fork.h — run N ranks on this machine without a launcher (rmx_fork_run), or be one for any
 * program (rmx_fork_exec; build/rmxrun --launcher fork uses it).
 *
 * rmx_fork_run: the calling process forks N children; each receives an rmx_config_t whose OOB
 * collectives work over a shared-memory segment made before the fork, so rmx_init(cfg) in the
 * child exercises the same OOB path an embedding runtime uses.  Used by the multi-process tests
 * and by rmx_perf when no PMIx launcher started it.
 */
#ifndef RMX_FORK_H
#define RMX_FORK_H

#include "rmx.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The body of one rank.  Its return value (0..255) becomes the child's exit status. */
typedef int (*rmx_fork_main_t)(const rmx_config_t *cfg, void *arg);

/*
 * Fork nranks children running fn(cfg, arg) and wait for all of them.
 * base_cfg (may be NULL) supplies every field but bootstrap/oob.
 * status[i] (may be NULL) receives child i's exit status, or 128+signal if it was killed.
 * When a child dies abnormally, or exits while the others still need it in an OOB collective,
 * those collectives fail instead of waiting for it.
 * After timeout_s seconds (0: none) the remaining children are killed with SIGKILL.
 * Returns RMX_OK when every child exited 0, RMX_ERR_PEER when one failed,
 * RMX_ERR_TIMEOUT on timeout, RMX_ERR_ARG / RMX_ERR_NOMEM on bad input or no resources.
 */
RMX_API int rmx_fork_run(int nranks, rmx_fork_main_t fn, void *arg, const rmx_config_t *base_cfg,
                         double timeout_s, int *status);

/*
 * A launcher for any program: fork nranks children that exec argv (argv[0] searched in PATH) and
 * wait for all of them.  Each child's environment is the caller's plus RMX_FORK_FD (a descriptor
 * of the shared segment, open in that child only), RMX_FORK_RANK (0..nranks-1) and RMX_FORK_SIZE;
 * rmx_init with the AUTO bootstrap recognises them and runs its OOB collectives over the segment,
 * exactly as rmx_fork_run's ranks do.  Standard output and error are the caller's; standard input
 * goes to rank 0 only (the others read /dev/null), as under mpirun.
 * When a child fails (non-zero exit status, or killed by a signal) the others' collectives fail,
 * and they get SIGTERM, then SIGKILL 2 s later: the job ends, as under mpirun.  A child that
 * exits with status 0 is not a failure, but a collective the others are in or begin later (one
 * it never took part in: rmx_init, a second context) fails at once instead of waiting for it;
 * they are not terminated.  A child that
 * cannot exec argv exits with 127.  After timeout_s seconds (0: none) the children left get
 * SIGKILL.  A child gets SIGKILL if the calling process dies.
 * status[i] (may be NULL) receives child i's exit status, or 128+signal if it was killed;
 * *first_failed (may be NULL) the rank whose failure ended the job, -1 if none failed.
 * Returns RMX_OK when every child exited 0, RMX_ERR_PEER when one failed, RMX_ERR_TIMEOUT on
 * timeout, RMX_ERR_ARG / RMX_ERR_NOMEM on bad input or no resources.
 */
RMX_API int rmx_fork_exec(int nranks, char *const argv[], double timeout_s, int *status,
                          int *first_failed);

#ifdef __cplusplus
}
#endif
#endif /* RMX_FORK_H */
