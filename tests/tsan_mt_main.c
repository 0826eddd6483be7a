/*
 * tsan_mt_main.c — runs the multi-threaded tests of test_mt.c without Criterion, for
 * ThreadSanitizer: Criterion's runner cannot start under TSan ("Could not initialize inheritable
 * arena"), so this main runs the same rank functions through rmx_fork_run itself.  Not built by
 * `make`; build and run it after a TSan build of the library:
 *   make BUILD=build-tsan "CFLAGS=-fsanitize=thread -Wno-tsan" LDFLAGS=-fsanitize=thread lib
 *   cc -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=thread $(pkg-config --cflags ucx) \
 *      tests/tsan_mt_main.c build-tsan/librmx.a -o build-tsan/tsan_mt \
 *      $(pkg-config --libs ucx hwloc pmix) -lcriterion -lpthread -lm
 *   UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none \
 *      TSAN_OPTIONS="history_size=7 suppressions=tests/tsan.supp" build-tsan/tsan_mt
 * (UCX's own hooks into malloc and mmap do not work under TSan's interceptors.)
 */
#include "test_mt.c"

typedef struct {
    const char *name;
    int ranks;
    rmx_fork_main_t fn;
    int arg;
} tsan_case_t;

int main(void)
{
    static const tsan_case_t cases[] = {
        {"puts_gets_atomics_locks_4_threads_3_ranks", 3, rank_mixed, 0},
        {"window_create_free_beside_rma_on_another_window", 2, rank_windows_come_and_go, 0},
        {"blocked_sync_images_lets_other_threads_put", 2, rank_wait_lets_others_in, 0},
        {"contended_win_lock_lets_other_threads_put", 2, rank_wait_lets_others_in, 1},
        {"second_collective_and_finalize_beside_a_call_are_refused", 2, rank_second_collective,
         0},
        /* its `awake` flag is the rank's own copy here: the refusals run, the timing check not */
        {"second_collective_is_refused_at_once_while_the_peer_sleeps", 2,
         rank_second_collective_peer_asleep, 0},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int status[8], arg = cases[i].arg;
        int rc = rmx_fork_run(cases[i].ranks, cases[i].fn, &arg, NULL, 300, status);
        int ok = rc == RMX_OK;
        for (int r = 0; r < cases[i].ranks; r++)
            ok = ok && status[r] == 0;
        printf("%s %s\n", ok ? "PASS" : "FAIL", cases[i].name);
        bad += !ok;
    }
    return bad != 0;
}
