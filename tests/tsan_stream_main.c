/*
 * tsan_stream_main.c — the threaded stream scenarios of test_stream.c without Criterion, for
 * ThreadSanitizer (Criterion's runner cannot start under TSan: see tsan_mt_main.c, which also
 * gives the build and run commands; replace tsan_mt_main by tsan_stream_main).  Two or three
 * ranks, each with several threads on streams of their own beside the context's main thread.
 */
#include "test_stream.c"

typedef struct {
    const char *name;
    int ranks;
    rmx_fork_main_t fn;
    setup_t setup;
} tsan_case_t;

int main(void)
{
    static const tsan_case_t cases[] = {
        {"two_threads_disjoint_halves_3_ranks", 3, rank_halves, {0, MEM_ALLOCATE, 0}},
        {"two_threads_disjoint_halves_direct_off", 2, rank_halves, {0, MEM_ALLOCATE, 1}},
        {"tcp_two_threads_disjoint_halves_created", 2, rank_halves, {1, MEM_MALLOC, 0}},
        {"fetch_adds_from_streams_3_ranks", 3, rank_fadd, {0, MEM_ALLOCATE, 1}},
        {"locks_through_bound_handles", 2, rank_locks, {0, MEM_ALLOCATE, 0}},
        {"flush_then_flag_tcp", 3, rank_flush_then_flag, {1, MEM_ALLOCATE, 0}},
        {"streams_beside_window_collectives", 2, rank_beside_collectives, {0, MEM_ALLOCATE, 0}},
        {"many_streams", 2, rank_many_streams, {0, MEM_ALLOCATE, 0}},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int status[8];
        int rc = rmx_fork_run(cases[i].ranks, cases[i].fn, (void *)&cases[i].setup, NULL, 300,
                              status);
        int ok = rc == RMX_OK;
        for (int r = 0; r < cases[i].ranks; r++)
            ok = ok && status[r] == 0;
        printf("%s %s\n", ok ? "PASS" : "FAIL", cases[i].name);
        fflush(stdout);
        bad += !ok;
    }
    return bad != 0;
}
