/*
 * mpi_embed.c — an MPI program that embeds rmx: MPI starts the job and lends rmx its collectives
 * (rmx_config_t.oob: an allgather and a barrier over an MPI communicator, as UCC's
 * ucc_oob_coll_t), and rmx moves the data one-sided.  rmx uses the callbacks only while it
 * connects (rmx_init, and creating a window whose keys do not fit rmx's own exchange); all of
 * its traffic after that goes over its own UCX endpoints.  The two libraries live side by side:
 * MPI calls and rmx calls may alternate freely on the thread that called rmx_init.
 *
 * Build (make tests builds it as build/tests/examples/mpi_embed), by hand from the checkout:
 *     mpicc -std=c11 -Iapi tests/examples/mpi_embed.c build/librmx.a \
 *           $(pkg-config --libs ucx hwloc pmix) -lpthread -lm -o mpi_embed
 * Run:
 *     mpirun -np 2 ./mpi_embed
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include <rmx.h>

#define WORDS 1024 /* doubles each rank sends its right neighbour */

/* rmx's out-of-band allgather: every rank gives len bytes, recv gets them all in rank order.
 * It returns 0 on success, as rmx_oob_t asks. */
static int mpi_allgather(const void *send, void *recv, size_t len, void *coll_ctx)
{
    MPI_Comm comm = *(MPI_Comm *)coll_ctx;
    if (len > INT_MAX)
        return -1;
    return MPI_Allgather(send, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, comm) != MPI_SUCCESS;
}

static int mpi_barrier(void *coll_ctx)
{
    return MPI_Barrier(*(MPI_Comm *)coll_ctx) != MPI_SUCCESS;
}

/* Every rmx call returns RMX_OK (0) or a negative RMX_ERR_* code that rmx_strerror explains. */
#define CHECK(call)                                                                    \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != RMX_OK) {                                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                    rmx_strerror(rc_));                                                \
            MPI_Abort(MPI_COMM_WORLD, 1);                                              \
        }                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);

    /* A communicator of rmx's own, so its collectives never match the program's. */
    MPI_Comm rmx_comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &rmx_comm);

    rmx_config_t cfg;
    rmx_config_init(&cfg);                  /* the defaults for every other field */
    cfg.bootstrap = RMX_BOOT_OOB;
    cfg.oob = (rmx_oob_t){.allgather = mpi_allgather, .barrier = mpi_barrier,
                          .coll_ctx = &rmx_comm, .rank = me, .size = n};
    rmx_ctx_t *ctx;
    CHECK(rmx_init(&cfg, &ctx));            /* rmx's ranks are MPI's ranks */

    double *inbox;
    rmx_win_t *win;
    CHECK(rmx_win_allocate(ctx, WORDS * sizeof(double), (void **)&inbox, &win));

    /* rmx moves the data: one put of the whole block into the right neighbour's window. */
    double block[WORDS];
    for (int i = 0; i < WORDS; i++)
        block[i] = me * 1e6 + i;
    CHECK(rmx_put(win, block, sizeof(block), (me + 1) % n, 0));
    CHECK(rmx_sync_all(ctx));               /* the puts are complete: read the inbox */

    int left = (me + n - 1) % n, wrong = 0;
    for (int i = 0; i < WORDS; i++)
        wrong += inbox[i] != left * 1e6 + i;

    /* MPI does what it is good at: add up the errors of every rank. */
    int total;
    MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("mpi_embed: %d ranks, %d doubles each put by rmx, %d wrong\n", n, WORDS, total);

    CHECK(rmx_win_free(&win));
    CHECK(rmx_finalize(ctx));               /* before MPI_Finalize, which ends the callbacks */
    MPI_Comm_free(&rmx_comm);
    MPI_Finalize();
    return total != 0;
}
