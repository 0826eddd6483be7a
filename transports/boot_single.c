/* boot_single.c — the one-process bootstrap: the collectives are a copy and a no-op. */
#include <string.h>
#include "boot.h"

static int single_allgather(rmx_boot_t *b, const void *send, void *recv, size_t len)
{
    (void)b;
    memcpy(recv, send, len);
    return RMX_OK;
}

static int single_barrier(rmx_boot_t *b)
{
    (void)b;
    return RMX_OK;
}

static void single_fini(rmx_boot_t *b)
{
    (void)b;
}

int rmx_boot_single_open(rmx_boot_t *b)
{
    memset(b, 0, sizeof(*b));
    b->name = "single";
    b->rank = 0;
    b->size = 1;
    b->local_rank = 0;
    b->local_size = 1;
    b->allgather = single_allgather;
    b->barrier = single_barrier;
    b->fini = single_fini;
    return RMX_OK;
}
