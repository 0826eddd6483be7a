/*
 * prog_sub_bench.c — the measurement behind issue 5 point 3: should rmx_put_sub pack many short
 * remote runs into one message that the target scatters (a UCP active message), instead of one
 * UCP put per run?  Two ranks (forked, OOB bootstrap); rank 0 writes a section of M runs of L
 * bytes each into rank 1's window, K times, and the time until the data is known to be in place
 * at the target is divided by K.  Variants, side by side in one process pair:
 *
 *   put_sub     rmx_put_sub: one UCP put per remote run, then rmx_sync_memory (one flush)
 *   raw_puts    the same puts issued straight with ucp_put_nbx (rmx overhead = put_sub - this)
 *   am_packed   gather M*L bytes, one eager ucp_am_send_nbx; the target's handler scatters;
 *               completion = an acknowledgement AM back (the target sits in a progress loop —
 *               the best case for packing)
 *   am_busy     am_packed while the target computes for BUSY_MS before progressing (what a
 *               one-sided library must expect); put_sub is timed against the same busy target
 *   contig_put  one put of M*L contiguous bytes + flush: the floor a packed form could reach
 *
 * Measured 2026-12-02 on the 2-core VM shared with other builds (load average 7 to 11), UCX
 * 1.13.1, rma and am both over sysv/posix shared memory, K=200; six runs of the whole program.
 * Microseconds per section, the range of the six medians-of-5 (the load makes it wide):
 *
 *   runs bytes  put_sub     raw_puts   am_packed    am_busy        put_sub_busy  contig_put
 *   64   8      0.90-1.95   0.38-0.80   0.30-40.5   2000-28500     1.2-13.2      0.02-0.03
 *   256  8      3.60-7.42   1.58-3.15   0.65-50.9   5000-31000     4.5-15.4      0.03-0.06
 *   1024 8      24.5-190    7.42-27.7   2.68-268    4850-34900     16-34         0.07-0.13
 *   256  64     3.88-21.6   1.76-3.24   1.70-146    4900-31700     4.3-14.9      0.13-0.21
 *   256  512    7.85-52.1   5.38-29.2   188-936     4660-24200     14-35         1.27-1.54
 *   64   4096   4.73-14.6   4.34-25.9   201-2213    2400-22600     24-63         2.73-3.16
 *
 * Reading: packing into one AM wins for runs of 8-64 B when the target's progress loop happens
 * to have a CPU (up to ~6x, e.g. 256 x 8 B: 0.65 vs 4.28), and loses by 10-30x when it does not;
 * for runs of 512 B and more it always loses (two extra copies and a multi-fragment eager AM).
 * With the target computing (am_busy: BUSY_MS of busy loop, stretched by the load) the packed
 * data waits for the target, milliseconds, while per-run puts complete with the target busy
 * (put_sub_busy).  A put of the packed bytes to a scratch area plus a small AM has the same
 * target dependence and one more operation, so it was not pursued.
 * Decision: rmx_put_sub keeps one UCP put per remote run (one-sided, never waits on the target).
 *
 * Usage: prog_sub_bench [K]   (prints one line per (M, L); timings are medians of 5 trials).
 * Not a test: nothing here asserts on time.  It includes engine/internal.h to reach the UCP
 * worker and endpoints rmx already has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../api/rmx.h"
#include "../api/rmx_fork.h"
#include "../engine/internal.h"

#define AM_SCATTER 7
#define AM_ACK 8
#define TRIALS 5
#define BUSY_MS 2.0

#define CHECK(expr)                                                                  \
    do {                                                                             \
        int rc_ = (expr);                                                            \
        if (rc_ != RMX_OK) {                                                         \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #expr,             \
                    rmx_strerror(rc_));                                              \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

typedef struct scatter_hdr {
    uint64_t disp, nruns, run_len, pitch;
} scatter_hdr_t;

typedef struct bench {
    rmx_ctx_t *ctx;
    rmx_win_t *win;
    unsigned char *base;
    volatile uint64_t handled, acks;
} bench_t;

static bench_t B;

static ucs_status_t on_scatter(void *arg, const void *header, size_t hlen, void *data,
                               size_t len, const ucp_am_recv_param_t *param)
{
    (void)arg;
    (void)hlen;
    (void)len;
    (void)param;
    scatter_hdr_t h;
    memcpy(&h, header, sizeof(h));
    const unsigned char *from = data;
    for (uint64_t i = 0; i < h.nruns; i++)
        memcpy(B.base + h.disp + i * h.pitch, from + i * h.run_len, h.run_len);
    B.handled++;
    return UCS_OK;
}

static ucs_status_t on_ack(void *arg, const void *header, size_t hlen, void *data, size_t len,
                           const ucp_am_recv_param_t *param)
{
    (void)arg;
    (void)header;
    (void)hlen;
    (void)data;
    (void)len;
    (void)param;
    B.acks++;
    return UCS_OK;
}

static void set_handler(unsigned id, ucp_am_recv_callback_t cb)
{
    ucp_am_handler_param_t p = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
        .id = id,
        .flags = UCP_AM_FLAG_WHOLE_MSG,
        .cb = cb,
    };
    if (ucp_worker_set_am_recv_handler(B.ctx->ucx.service, &p) != UCS_OK) {
        fprintf(stderr, "set_am_recv_handler failed\n");
        exit(1);
    }
}

static void am_send(int target, unsigned id, const void *hdr, size_t hlen, const void *data,
                    size_t len)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = UCP_AM_SEND_FLAG_EAGER};
    CHECK(rmx_ucx_wait(&B.ctx->ucx, ucp_am_send_nbx(rmx_ep(B.ctx, target), id, hdr, hlen, data,
                                                    len, &p)));
}

static void progress_until(volatile uint64_t *word, uint64_t value)
{
    while (*word < value)
        rmx_ucx_progress(&B.ctx->ucx);
}

static void busy_ms(double ms)
{
    double end = rmx_now_s() + ms * 1e-3;
    while (rmx_now_s() < end)
        ;
}

/* Remote section: M rows of a C array [M][2*L/8] of doubles, first L/8 columns: M runs of L
 * bytes, pitch 2L.  Local side: M*L contiguous bytes. */
static void section(size_t M, size_t L, rmx_sub_t *loc, rmx_sub_t *rem)
{
    memset(loc, 0, sizeof(*loc));
    memset(rem, 0, sizeof(*rem));
    loc->elem_size = rem->elem_size = 8;
    loc->rank = 1;
    loc->dim[0] = (rmx_sub_dim_t){M * L / 8, 0, M * L / 8, 1};
    rem->rank = 2;
    rem->order = RMX_ORDER_C;
    rem->dim[0] = (rmx_sub_dim_t){M, 0, M, 1};
    rem->dim[1] = (rmx_sub_dim_t){2 * L / 8, 0, L / 8, 1};
}

typedef enum { V_PUT_SUB, V_RAW, V_AM, V_AM_BUSY, V_PUT_SUB_BUSY, V_CONTIG, V_COUNT } variant_t;
static const char *vname[V_COUNT] = {"put_sub", "raw_puts", "am_packed", "am_busy",
                                     "put_sub_busy", "contig_put"};

/* One trial of one variant: seconds per section, as seen by rank 0 (broadcast to nobody). */
static double trial(variant_t v, size_t M, size_t L, int K, unsigned char *src,
                    unsigned char *stage)
{
    int me = rmx_rank(B.ctx);
    rmx_sub_t loc, rem;
    section(M, L, &loc, &rem);
    B.handled = B.acks = 0;
    CHECK(rmx_sync_all(B.ctx));
    double t0 = rmx_now_s(), t = 0;
    if (me == 1) {
        if (v == V_AM_BUSY || v == V_PUT_SUB_BUSY)
            busy_ms(BUSY_MS);
        if (v == V_AM || v == V_AM_BUSY) {
            progress_until(&B.handled, (uint64_t)K);
            am_send(0, AM_ACK, NULL, 0, NULL, 0);
        }
    } else {
        ucp_ep_h ep = rmx_ep(B.ctx, 1);
        rmx_remote_t *r = &B.win->remote[1];
        for (int k = 0; k < K; k++) {
            switch (v) {
            case V_PUT_SUB:
            case V_PUT_SUB_BUSY:
                CHECK(rmx_put_sub(B.win, src, &loc, 1, 0, &rem));
                break;
            case V_RAW:
                for (size_t i = 0; i < M; i++)
                    CHECK(rmx_ucx_put(&B.ctx->ucx, ep, rmx_am(B.ctx, 1), src + i * L, L,
                                      r->addr + i * 2 * L, r->rkey));
                break;
            case V_AM:
            case V_AM_BUSY: {
                memcpy(stage, src, M * L); /* the gather (src is already contiguous here) */
                scatter_hdr_t h = {0, M, L, 2 * L};
                am_send(1, AM_SCATTER, &h, sizeof(h), stage, M * L);
                break;
            }
            case V_CONTIG:
                CHECK(rmx_ucx_put(&B.ctx->ucx, ep, rmx_am(B.ctx, 1), src, M * L, r->addr, r->rkey));
                break;
            default:
                break;
            }
        }
        if (v == V_AM || v == V_AM_BUSY)
            progress_until(&B.acks, 1);
        else if (v == V_RAW || v == V_CONTIG)
            CHECK(rmx_ucx_flush_ep(&B.ctx->ucx, ep, rmx_am(B.ctx, 1)));
        else
            CHECK(rmx_sync_memory(B.ctx));
        t = (rmx_now_s() - t0) / K;
    }
    CHECK(rmx_sync_all(B.ctx));
    if (me == 1 && v != V_CONTIG) { /* the section arrived: row i holds src[i*L..] */
        for (size_t i = 0; i < M; i++)
            if (memcmp(B.base + i * 2 * L, src + i * L, L) != 0) {
                fprintf(stderr, "%s M=%zu L=%zu: row %zu wrong at the target\n", vname[v], M, L,
                        i);
                exit(1);
            }
        memset(B.base, 0, M * 2 * L);
    }
    CHECK(rmx_sync_all(B.ctx));
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench_main(const rmx_config_t *cfg, void *arg)
{
    int K = *(int *)arg;
    CHECK(rmx_init(cfg, &B.ctx));
    const size_t maxbytes = 1u << 20;
    CHECK(rmx_win_allocate(B.ctx, 2 * maxbytes, (void **)&B.base, &B.win));
    set_handler(AM_SCATTER, on_scatter);
    set_handler(AM_ACK, on_ack);
    unsigned char *src = malloc(maxbytes), *stage = malloc(maxbytes);
    for (size_t i = 0; i < maxbytes; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    static const size_t shapes[][2] = {{64, 8}, {256, 8}, {1024, 8}, {256, 64}, {256, 512},
                                       {64, 4096}};
    int me = rmx_rank(B.ctx);
    if (me == 0)
        printf("%-6s %-6s %12s %12s %12s %12s %14s %12s   (us per section, median of %d)\n", "runs",
               "bytes", vname[0], vname[1], vname[2], vname[3], vname[4], vname[5], TRIALS);
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        size_t M = shapes[s][0], L = shapes[s][1];
        double med[V_COUNT];
        for (int v = 0; v < V_COUNT; v++) {
            int k = (v == V_AM_BUSY || v == V_PUT_SUB_BUSY) ? 1 : K;
            double t[TRIALS];
            for (int i = 0; i < TRIALS; i++)
                t[i] = trial((variant_t)v, M, L, k, src, stage);
            qsort(t, TRIALS, sizeof(double), cmp_double);
            med[v] = t[TRIALS / 2];
        }
        if (me == 0)
            printf("%-6zu %-6zu %12.2f %12.2f %12.2f %12.2f %14.2f %12.2f\n", M, L, med[0] * 1e6,
                   med[1] * 1e6, med[2] * 1e6, med[3] * 1e6, med[4] * 1e6, med[5] * 1e6);
    }
    fflush(stdout);
    free(src);
    free(stage);
    CHECK(rmx_win_free(&B.win));
    CHECK(rmx_finalize(B.ctx));
    return 0;
}

int main(int argc, char **argv)
{
    int K = argc > 1 ? atoi(argv[1]) : 50;
    if (K < 1)
        K = 1;
    rmx_config_t cfg;
    rmx_config_init(&cfg);
    cfg.coalesce_disable = 1; /* one UCP put per run, as rmx_put_sub issues them */
    int status[2];
    int rc = rmx_fork_run(2, bench_main, &K, &cfg, 600, status);
    if (rc != RMX_OK)
        fprintf(stderr, "rmx_fork_run: %s (status %d %d)\n", rmx_strerror(rc), status[0],
                status[1]);
    return rc == RMX_OK ? 0 : 1;
}
