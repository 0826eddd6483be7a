/*
 * counter.c — a distributed counter guarded by a passive-target lock: every rank adds 1 to a
 * counter in rank 0's memory N times by reading it, adding and writing it back.  Without the
 * lock two ranks could read the same value and one increment would be lost; inside an
 * exclusive lock no other rank can come between the read and the write.  (A single fetch-add,
 * as in hello.c, would do for a counter; the lock is how to make any read-modify-write safe.)
 *
 * Build (make tests builds it as build/tests/examples/counter), by hand from the checkout:
 *     cc -std=c11 -Iapi tests/examples/counter.c build/librmx.a \
 *        $(pkg-config --libs ucx hwloc pmix) -lpthread -lm -o counter
 * Run on 2 (or more) ranks:
 *     mpirun -np 2 ./counter  [N]       or    build/rmx_forkrun -n 2 ./counter [N]
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

int main(int argc, char **argv)
{
    int times = argc > 1 ? atoi(argv[1]) : 1000;
    if (times < 1) {
        fprintf(stderr, "usage: counter [N > 0]\n");
        return 2;
    }
    rmx_ctx_t *ctx;
    CHECK(rmx_init(NULL, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);

    /* The counter: one 64-bit word at offset 0 of rank 0's part of the window (every rank
     * allocates the same window; only rank 0's word is used). */
    uint64_t *counter;
    rmx_win_t *win;
    CHECK(rmx_win_allocate(ctx, sizeof(uint64_t), (void **)&counter, &win));

    for (int i = 0; i < times; i++) {
        uint64_t value;
        /* Exclusive lock on rank 0: until we unlock, no other rank holds a lock on it. */
        CHECK(rmx_win_lock(win, RMX_LOCK_EXCLUSIVE, 0, 0));
        CHECK(rmx_get(win, &value, sizeof(value), 0, 0));   /* blocking: value is here now */
        value += 1;
        CHECK(rmx_put(win, &value, sizeof(value), 0, 0));
        /* Unlock completes the put at rank 0 before it releases the lock, so the next holder
         * reads our value. */
        CHECK(rmx_win_unlock(win, 0));
    }

    CHECK(rmx_sync_all(ctx));               /* every rank is done */
    if (me == 0) {
        uint64_t want = (uint64_t)n * (uint64_t)times;
        printf("counter: %d ranks x %d increments = %llu (want %llu)\n", n, times,
               (unsigned long long)*counter, (unsigned long long)want);
        if (*counter != want) {
            fprintf(stderr, "counter: increments were lost\n");
            return 1;
        }
    }
    CHECK(rmx_win_free(&win));
    CHECK(rmx_finalize(ctx));
    return 0;
}
