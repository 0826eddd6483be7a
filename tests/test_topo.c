/* test_topo.c — hwloc: topology report, RMX_BIND, NUMA placement of windows. */
#include <sched.h>
#include "harness.h"

Test(topo, topology_print_names_cores_numa_and_binding)
{
    char buf[8192] = {0};
    FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
    cr_assert_not_null(f);
    cr_assert_eq(rmx_topology_print(f), RMX_OK);
    fclose(f);
    cr_expect_not_null(strstr(buf, "cores: "), "%s", buf);
    cr_expect_not_null(strstr(buf, "NUMA nodes: "), "%s", buf);
    cr_expect_not_null(strstr(buf, "numa 0"), "%s", buf);
    cr_expect_not_null(strstr(buf, "net"), "%s", buf);
    cr_expect_not_null(strstr(buf, "binding: "), "%s", buf);
    cr_expect_eq(rmx_topology_print(NULL), RMX_ERR_ARG);
}

static int rank_bound_to_core(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    setenv("RMX_BIND", "core", 1);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(cfg, &ctx));
    cpu_set_t set;
    RANK_ASSERT(sched_getaffinity(0, sizeof(set), &set) == 0);
    RANK_ASSERT(CPU_COUNT(&set) == 1, "bound to %d cpus", CPU_COUNT(&set));
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(topo, rmx_bind_core_binds_each_rank_to_one_cpu, .timeout = RMX_T(60))
{
    run_ranks(2, rank_bound_to_core, NULL);
}

static int rank_bound_by_config(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    rmx_config_t c = *cfg;
    c.bind = RMX_BIND_NUMA;
    cpu_set_t before, after;
    RANK_ASSERT(sched_getaffinity(0, sizeof(before), &before) == 0);
    rmx_ctx_t *ctx;
    RANK_OK(rmx_init(&c, &ctx));
    RANK_ASSERT(sched_getaffinity(0, sizeof(after), &after) == 0);
    /* one NUMA node here holds every cpu; the binding must at least be a subset */
    CPU_AND(&after, &after, &before);
    RANK_ASSERT(CPU_COUNT(&after) >= 1);
    RANK_OK(rmx_finalize(ctx));
    return 0;
}

Test(topo, bind_numa_from_config, .timeout = RMX_T(60)) { run_ranks(1, rank_bound_by_config, NULL); }

Test(topo, bad_rmx_bind_value_is_an_argument_error)
{
    setenv("RMX_BIND", "sideways", 1);
    rmx_ctx_t *ctx = NULL;
    cr_expect_eq(rmx_init(NULL, &ctx), RMX_ERR_ARG);
    cr_expect_null(ctx);
    unsetenv("RMX_BIND");
}
