/* boot_oob.c — the bootstrap of an embedding runtime: its allgather/barrier callbacks, as given. */
#include <string.h>
#include "boot.h"

static int oob_allgather(rmx_boot_t *b, const void *send, void *recv, size_t len)
{
    return b->oob.allgather(send, recv, len, b->oob.coll_ctx) == 0 ? RMX_OK : RMX_ERR_BOOTSTRAP;
}

static int oob_barrier(rmx_boot_t *b)
{
    return b->oob.barrier(b->oob.coll_ctx) == 0 ? RMX_OK : RMX_ERR_BOOTSTRAP;
}

static void oob_fini(rmx_boot_t *b)
{
    (void)b;
}

int rmx_boot_oob_open(rmx_boot_t *b, const rmx_oob_t *oob)
{
    /* rmx_init checked the callbacks, rank and size (context.c resolve_config). */
    memset(b, 0, sizeof(*b));
    b->name = "oob";
    b->oob = *oob;
    b->rank = oob->rank;
    b->size = oob->size;
    /* The runtime tells us nothing about nodes; assume one node, which is what binding needs. */
    b->local_rank = oob->rank;
    b->local_size = oob->size;
    b->allgather = oob_allgather;
    b->barrier = oob_barrier;
    b->fini = oob_fini;
    return RMX_OK;
}
