/*
 * hello.c — rmx in one page: each rank puts into, gets from and atomically adds to the memory
 * of another rank, which takes no part in it.
 *
 * Build (make tests builds it as build/tests/examples/hello), by hand from the checkout:
 *     cc -std=c11 -Iapi tests/examples/hello.c build/librmx.a \
 *        $(pkg-config --libs ucx hwloc pmix) -lpthread -lm -o hello
 * Run on 2 ranks, either way:
 *     mpirun -np 2 ./hello              Open MPI's mpirun (rmx finds its PMIx server)
 *     build/rmx_forkrun -n 2 ./hello    rmx's own launcher for one machine, no MPI needed
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <rmx.h>

/* Every rmx call returns RMX_OK (0) or a negative RMX_ERR_* code that rmx_strerror explains. */
#define CHECK(call)                                                                    \
    do {                                                                               \
        int rc_ = (call);                                                              \
        if (rc_ != RMX_OK) {                                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                    rmx_strerror(rc_));                                                \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* The check of a result: say what is wrong and fail the job. */
#define EXPECT(cond, ...)                                                              \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, __VA_ARGS__);                                              \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

int main(void)
{
    rmx_ctx_t *ctx;
    CHECK(rmx_init(NULL, &ctx));            /* collective: every rank of the job calls it */
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    EXPECT(n >= 2, "hello needs at least 2 ranks, got %d (mpirun -np 2 ./hello)\n", n);
    int right = (me + 1) % n, left = (me + n - 1) % n;

    /* A window: two 64-bit words on every rank, zero-filled, which the other ranks may read and
     * write.  word[0] receives a put, word[1] is a counter for the atomics. */
    uint64_t *word;
    rmx_win_t *win;
    CHECK(rmx_win_allocate(ctx, 2 * sizeof(uint64_t), (void **)&word, &win));

    /* put: write 100 + my rank into my right neighbour's word[0].  rmx_put returns at once;
     * the data is in place at the end of the segment, which rmx_sync_all ends on every rank
     * before it lets anyone continue. */
    uint64_t mine = 100 + (uint64_t)me;
    CHECK(rmx_put(win, &mine, sizeof(mine), right, 0));
    CHECK(rmx_sync_all(ctx));
    printf("rank %d: put: my word[0] is %llu (from rank %d)\n", me,
           (unsigned long long)word[0], left);
    EXPECT(word[0] == 100 + (uint64_t)left, "rank %d: wrong word[0]\n", me);

    /* get: read the word I wrote back from my right neighbour; blocking, so the data is here
     * when the call returns. */
    uint64_t got;
    CHECK(rmx_get(win, &got, sizeof(got), right, 0));
    printf("rank %d: get: rank %d's word[0] is %llu\n", me, right, (unsigned long long)got);
    EXPECT(got == mine, "rank %d: the get read %llu\n", me, (unsigned long long)got);

    /* atomic: every rank adds me + 1 to rank 0's counter (word[1], at byte offset 8) with a
     * fetch-and-add; `old` receives the value it had just before.  Each addition is atomic, so
     * none is lost however the ranks race. */
    uint64_t add = (uint64_t)me + 1, old;
    CHECK(rmx_rmw(win, &add, 1, RMX_UINT64, &old, 0, sizeof(uint64_t), 0, RMX_OP_SUM));
    printf("rank %d: fetch-add: rank 0's counter was %llu before my +%llu\n", me,
           (unsigned long long)old, (unsigned long long)add);
    CHECK(rmx_sync_all(ctx));               /* everyone has added */
    if (me == 0) {
        uint64_t want = (uint64_t)n * (uint64_t)(n + 1) / 2;
        printf("rank 0: counter is %llu (want %llu)\n", (unsigned long long)word[1],
               (unsigned long long)want);
        EXPECT(word[1] == want, "rank 0: counter wrong\n");
    }

    CHECK(rmx_win_free(&win));              /* collective, as is finalize */
    CHECK(rmx_finalize(ctx));
    printf("rank %d: hello ok\n", me);
    return 0;
}
