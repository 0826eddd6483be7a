/* test_stress.c — a short run of tests/prog_stress (random mixed operations, 4 ranks, verified at
 * every sync_all) inside make check; `make stress` runs the full 60 s. */
#include "harness.h"

Test(stress, random_mixed_ops_4_ranks_5_s_no_lost_or_corrupted_bytes, .timeout = RMX_T(120))
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s/prog_stress 5 4 %d", RMX_TEST_BIN_DIR, (int)getpid() % 1000);
    cr_expect_eq(system(cmd), 0, "%s failed", cmd);
}
