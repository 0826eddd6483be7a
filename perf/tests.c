/*
 * tests.c — the test table of rmx_perf.  Each entry names one benchmark, the unit it reports,
 * the sizes it makes sense for, and its two bodies (bench_rmx.c, bench_ucp.c).  An iteration
 * means the same on both sides; "what" says what it is, and rmx_perf --list prints it.
 */
#include "perf.h"

static long bw_ops(const perf_env_t *e, size_t len)
{
    return perf_bw_ops(e, len);
}

static long rate_ops(const perf_env_t *e, size_t len)
{
    return perf_rate_ops(e, len);
}

/* Subarray arrays are PERF_SUB_WIDTH times the section; both must fit the data area. */
static int sub_fits(const perf_env_t *e, size_t len)
{
    return len % sizeof(double) == 0 && len * PERF_SUB_WIDTH <= e->data_len;
}


#define BODIES(name) .rmx = bench_rmx_##name, .ucp = bench_ucp_##name

/* A row with no raw-UCP counterpart: its baseline column prints n/a. */
static int no_baseline(perf_env_t *e, size_t len, long n)
{
    (void)e;
    (void)len;
    (void)n;
    return RMX_ERR_UNSUPPORTED;
}

const perf_test_t perf_tests[] = {
    {"put_lat", "put", METRIC_LAT, 1, MiB(4), 0, 0, NULL, NULL, BODIES(put_lat),
     "one put, then completion at the target (rmx_sync_memory | ucp_ep_flush)"},
    {"put_bw", "put", METRIC_BW, 1, MiB(4), 0, 0, bw_ops, NULL, BODIES(put_bw),
     "64 puts to separate, non-adjacent slots, then one completion"},
    {"put_rate", "put", METRIC_RATE, 1, KiB(64), 0, 0, rate_ops, NULL, BODIES(put_rate),
     "256 puts to adjacent bytes, then one completion (rmx may coalesce them)"},
    {"put_rate_nc", "put", METRIC_RATE, 1, KiB(64), 0, 1, rate_ops, NULL, BODIES(put_rate),
     "put_rate on a context with coalescing disabled (cfg.coalesce_disable)"},
    {"get_lat", "get", METRIC_LAT, 1, MiB(4), 0, 0, NULL, NULL, BODIES(get_lat),
     "one blocking get"},
    {"get_bw", "get", METRIC_BW, 1, MiB(4), 0, 0, bw_ops, NULL, BODIES(get_bw),
     "64 blocking gets from separate slots (rmx_get is blocking, so UCP's are too)"},
    {"get_rate", "get", METRIC_RATE, 1, KiB(64), 0, 0, rate_ops, NULL, BODIES(get_rate),
     "256 blocking gets from adjacent bytes"},
    {"fadd", "rmw", METRIC_LAT, 8, 8, 0, 0, NULL, NULL, BODIES(fadd),
     "fetch-and-add of one int64 (native UCP ADD), old value returned"},
    {"fadd_cpu", "rmw", METRIC_LAT, 8, 8, 0, 0, NULL, NULL,
     .rmx = bench_cpu_fadd, .ucp = no_baseline,
     "the floor under fadd: a bare CPU fetch-add on a word of rank 0's own window, no call "
     "(rmx column; raw UCP: n/a)"},
    {"fadd_call", "rmw", METRIC_LAT, 8, 8, 0, 0, NULL, NULL,
     .rmx = bench_ucp_fadd_call, .ucp = bench_ucp_fadd,
     "the floor under fadd on UCP's route: raw UCP's fetch-add behind an out-of-line call "
     "shaped like rmx_rmw that checks nothing (rmx column), beside raw UCP's inline loop"},
    {"swap", "rmw", METRIC_LAT, 8, 8, 0, 0, NULL, NULL, BODIES(swap),
     "atomic swap of one int64 (native UCP SWAP)"},
    {"cswap", "rmw", METRIC_LAT, 8, 8, 0, 0, NULL, NULL, BODIES(cswap),
     "compare-and-swap of one int64 that succeeds (native UCP CSWAP)"},
    {"max", "rmw", METRIC_LAT, 8, 8, 0, 0, NULL, NULL, BODIES(max),
     "fetching MAX of one int64, emulated (fetch + CSWAP loop on both sides)"},
    {"put_col", "sub", METRIC_LAT, 8, MiB(4), 0, 0, NULL, sub_fits, BODIES(put_col),
     "put of a column of a k x 16 double array (k runs of 8 B), then completion"},
    {"put_row", "sub", METRIC_LAT, 8, MiB(4), 0, 0, NULL, sub_fits, BODIES(put_row),
     "put of a row of a 16 x k double array (one run), then completion"},
    {"get_col", "sub", METRIC_LAT, 8, MiB(4), 0, 0, NULL, sub_fits, BODIES(get_col),
     "blocking get of a column section (k runs of 8 B)"},
    {"get_row", "sub", METRIC_LAT, 8, MiB(4), 0, 0, NULL, sub_fits, BODIES(get_row),
     "blocking get of a row section (one run)"},
    {"sync_all", "sync", METRIC_LAT, 0, 0, 1, 0, NULL, NULL, BODIES(sync),
     "rmx_sync_all on every rank | the same dissemination barrier on raw UCP atomics"},
    {"win_create", "win", METRIC_LAT, KiB(4), KiB(4), 1, 0, NULL, NULL,
     .rmx = bench_rmx_win_create, .ucp = no_baseline,
     "rmx_win_allocate + rmx_win_free of 4 KiB on every rank (raw UCP: n/a)"},
};

const int perf_ntests = (int)(sizeof(perf_tests) / sizeof(perf_tests[0]));
