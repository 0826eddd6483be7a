/* prog_pmix.c — launched by `mpirun -np N`: rmx_init(NULL) must find PMIx, then a put/get ring. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../api/rmx.h"

#define CHECK(expr)                                                                  \
    do {                                                                             \
        int rc_ = (expr);                                                            \
        if (rc_ != RMX_OK) {                                                         \
            fprintf(stderr, "%s: %s\n", #expr, rmx_strerror(rc_));                   \
            return 1;                                                                \
        }                                                                            \
    } while (0)

int main(int argc, char **argv)
{
    int want = argc > 1 ? atoi(argv[1]) : 2;
    rmx_ctx_t *ctx;
    CHECK(rmx_init(NULL, &ctx));
    int me = rmx_rank(ctx), n = rmx_size(ctx);
    if (n != want) {
        fprintf(stderr, "size %d, launched with %d\n", n, want);
        return 1;
    }
    uint64_t *slot;
    rmx_win_t *win;
    CHECK(rmx_win_allocate(ctx, 2 * sizeof(uint64_t), (void **)&slot, &win));
    uint64_t v = 1000 + (uint64_t)me;
    CHECK(rmx_put(win, &v, sizeof(v), (me + 1) % n, 0));
    CHECK(rmx_sync_all(ctx));
    if (slot[0] != 1000 + (uint64_t)((me + n - 1) % n)) {
        fprintf(stderr, "rank %d: got %llu\n", me, (unsigned long long)slot[0]);
        return 1;
    }
    uint64_t got;
    CHECK(rmx_get(win, &got, sizeof(got), (me + 1) % n, 0));
    if (got != 1000 + (uint64_t)me)
        return 1;
    CHECK(rmx_win_free(&win));
    CHECK(rmx_finalize(ctx));
    printf("pmix rank %d of %d ok\n", me, n);
    return 0;
}
