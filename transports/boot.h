/*
 * boot.h — the out-of-band exchange rmx needs before UCP can talk: an allgather (worker addresses,
 * window rkeys) and a barrier.  Several bootstraps exist (PMIx, an embedding runtime's OOB callbacks,
 * single process), so this is the one place with a small function table; the data path has none.
 */
#ifndef RMX_BOOT_H
#define RMX_BOOT_H

#include <stddef.h>
#include "../api/rmx.h"

typedef struct rmx_boot {
    const char *name;
    int rank;
    int size;
    int local_rank;   /* rank among the processes of this node (for binding) */
    int local_size;
    /* every rank sends len bytes; recv gets size*len bytes by rank. */
    int (*allgather)(struct rmx_boot *b, const void *send, void *recv, size_t len);
    int (*barrier)(struct rmx_boot *b);
    void (*fini)(struct rmx_boot *b);
    void *state;
    rmx_oob_t oob;    /* copy of the callbacks for the OOB bootstrap */
} rmx_boot_t;

/* Each returns RMX_OK or RMX_ERR_BOOTSTRAP (with b untouched on failure). */
int rmx_boot_pmix_open(rmx_boot_t *b);
int rmx_boot_oob_open(rmx_boot_t *b, const rmx_oob_t *oob);
int rmx_boot_single_open(rmx_boot_t *b);
/* A rank of rmx_fork_exec: the launcher's segment named by RMX_FORK_FD/RANK/SIZE (boot_fork.c). */
int rmx_boot_fork_open(rmx_boot_t *b);
/* True when any RMX_FORK_* variable is set (rmx_boot_fork_open then says what is wrong). */
int rmx_boot_fork_launched(void);
/* True when the environment says a PMIx launcher started this process. */
int rmx_boot_pmix_launched(void);

#endif
