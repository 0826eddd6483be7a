/* prog_launch.c — a job for a real launcher (srun --mpi=pmix, mpirun; tests/test_launch.c,
 * tests/slurm_run.sh): rmx_init(NULL) must find the launcher's PMIx server, agree with the
 * launcher on this process's rank, and move data between the ranks: a put ring, a get back, and
 * an atomic counter on rank 0 that every rank adds to.  Prints "rank R of N: OK" on success; on
 * failure says what went wrong on stderr and exits 1.
 *
 * Usage: prog_launch N   (N: the number of ranks the launcher was asked for) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "../api/rmx.h"

#define CHECK(expr)                                                                          \
    do {                                                                                     \
        int rc_ = (expr);                                                                    \
        if (rc_ != RMX_OK) {                                                                 \
            fprintf(stderr, "prog_launch: %s: %s\n", #expr, rmx_strerror(rc_));              \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

#define EXPECT(cond, ...)                                                                    \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "prog_launch: rank %d: ", me);                                   \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

enum { SLOT_RING, SLOT_COUNTER, SLOT_COUNT };

/* The launcher's own idea of this process's rank, when it publishes one: rmx's rank must be the
 * same, or output and data placement would not follow the user's numbering.  -1: none known. */
static int launcher_rank(const char **var)
{
    static const char *const vars[] = {"SLURM_PROCID", "OMPI_COMM_WORLD_RANK"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL) {
            *var = vars[i];
            return atoi(v);
        }
    }
    return -1;
}

/* Every rank puts its tag to its right neighbour and adds rank+1 to rank 0's counter; after
 * sync_all the ring slot holds the left neighbour's tag and the counter n(n+1)/2. */
static int exchange(rmx_ctx_t *ctx, uint64_t *slot, rmx_win_t *win)
{
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    uint64_t tag = 1000 + (uint64_t)me, add = (uint64_t)me + 1, before = UINT64_MAX;
    CHECK(rmx_put(win, &tag, sizeof(tag), (me + 1) % n, SLOT_RING * sizeof(uint64_t)));
    CHECK(rmx_rmw(win, &add, 1, RMX_UINT64, &before, 0, SLOT_COUNTER * sizeof(uint64_t), 0,
                  RMX_OP_SUM));
    CHECK(rmx_sync_all(ctx));
    uint64_t sum = (uint64_t)n * (uint64_t)(n + 1) / 2;
    EXPECT(before < sum, "fetched counter %llu, beyond the final %llu",
           (unsigned long long)before, (unsigned long long)sum);
    EXPECT(slot[SLOT_RING] == 1000 + (uint64_t)((me + n - 1) % n),
           "ring slot holds %llu, not the left neighbour's tag", (unsigned long long)slot[SLOT_RING]);
    uint64_t got = 0, counter = 0;
    CHECK(rmx_get(win, &got, sizeof(got), (me + 1) % n, SLOT_RING * sizeof(uint64_t)));
    CHECK(rmx_get(win, &counter, sizeof(counter), 0, SLOT_COUNTER * sizeof(uint64_t)));
    CHECK(rmx_sync_all(ctx)); /* gets complete by the segment's end */
    EXPECT(got == tag, "got back %llu from the right neighbour, put %llu",
           (unsigned long long)got, (unsigned long long)tag);
    EXPECT(counter == sum, "counter on rank 0 is %llu, expected %llu",
           (unsigned long long)counter, (unsigned long long)sum);
    return 0;
}

int main(int argc, char **argv)
{
    int want = argc > 1 ? atoi(argv[1]) : 2;
    rmx_ctx_t *ctx;
    CHECK(rmx_init(NULL, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    EXPECT(n == want, "rmx_size is %d, the launcher was asked for %d ranks", n, want);
    const char *var = NULL;
    int theirs = launcher_rank(&var);
    EXPECT(theirs < 0 || theirs == me, "rmx_rank is %d but %s=%d", me, var, theirs);
    uint64_t *slot;
    rmx_win_t *win;
    CHECK(rmx_win_allocate(ctx, SLOT_COUNT * sizeof(uint64_t), (void **)&slot, &win));
    slot[SLOT_RING] = 0;
    slot[SLOT_COUNTER] = 0;
    CHECK(rmx_sync_all(ctx)); /* the counter is zero everywhere before anyone adds to it */
    if (exchange(ctx, slot, win) != 0)
        return 1;
    CHECK(rmx_win_free(&win));
    CHECK(rmx_finalize(ctx));
    printf("rank %d of %d: OK\n", me, n);
    return 0;
}
