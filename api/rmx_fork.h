/*
 * rmx_fork.h — run N ranks on this machine without a launcher.
 *
 * The calling process forks N children; each receives an rmx_config_t whose OOB collectives work
 * over a shared-memory segment made before the fork, so rmx_init(cfg) in the child exercises the
 * same OOB path an embedding runtime uses.  Used by the multi-process tests and by rmx_perf when
 * no PMIx launcher started it.
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
 * When a child dies abnormally the others' OOB collectives fail instead of waiting for it.
 * After timeout_s seconds (0: none) the remaining children are killed with SIGKILL.
 * Returns RMX_OK when every child exited 0, RMX_ERR_PEER when one failed,
 * RMX_ERR_TIMEOUT on timeout, RMX_ERR_ARG / RMX_ERR_NOMEM on bad input or no resources.
 */
int rmx_fork_run(int nranks, rmx_fork_main_t fn, void *arg, const rmx_config_t *base_cfg,
                 double timeout_s, int *status);

#ifdef __cplusplus
}
#endif
#endif /* RMX_FORK_H */
