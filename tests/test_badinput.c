/*
 * test_badinput.c — a table of bad inputs: each row is one call that must fail with one exact
 * code, send nothing and write nothing.  Every rank runs the rows in lockstep; after each row a
 * sync_all ends the segment and each rank checks that its own window (the target of its left
 * neighbour's bad calls) and the local buffers are byte for byte what they were.
 *
 * Windows differ in size per rank, so range checks must use the target's size, not the caller's.
 */
#include <limits.h>
#include "harness.h"

#define WIN_UNIT 256
#define FILL_WIN 0xAB
#define FILL_BUF 0x11

typedef struct env {
    rmx_ctx_t *ctx;
    rmx_win_t *win;
    unsigned char *base;       /* my window */
    size_t my_size;
    int me, n, right;
    size_t rsize;              /* right neighbour's window size */
    unsigned char buf[4 * WIN_UNIT];
    rmx_ctx_t *dead_ctx;       /* a finalized context */
    rmx_win_t *dead_win;       /* a freed window */
    rmx_win_t *null_win;
    uint64_t fake_win[64];     /* all zeros: not a window (nor a context) */
    size_t len_out;
    void *ptr_out;
    rmx_win_t *win_out;
    rmx_ctx_t *ctx_out;
    int images[2];
    rmx_config_t cfg;          /* a valid config to corrupt, one field per row */
    rmx_sub_t sub;             /* a valid section (sub_valid) */
} env_t;

static size_t window_bytes(int rank) { return WIN_UNIT * (size_t)(rank + 1); }

static rmx_config_t single_cfg(void)
{
    rmx_config_t c;
    rmx_config_init(&c);
    c.bootstrap = RMX_BOOT_SINGLE;
    return c;
}

static int init_with(rmx_config_t c, rmx_ctx_t **out) { return rmx_init(&c, out); }

static int images_dup(env_t *e)
{
    e->images[0] = e->images[1] = e->right;
    return rmx_sync_images(e->ctx, e->images, 2);
}

static int images_bad(env_t *e, int rank)
{
    e->images[0] = rank;
    return rmx_sync_images(e->ctx, e->images, 1);
}

/* A valid 1-d section: 4 of 16 eight-byte elements, every other one (so 64 bytes of reach). */
static rmx_sub_t sub_valid(void)
{
    rmx_sub_t s;
    memset(&s, 0, sizeof(s));
    s.elem_size = 8;
    s.rank = 1;
    s.order = RMX_ORDER_C;
    s.dim[0] = (rmx_sub_dim_t){.extent = 16, .first = 1, .count = 4, .stride = 2};
    return s;
}

typedef enum {
    SUB_RANK_ZERO, SUB_RANK_16, SUB_ELEM_ZERO, SUB_STRIDE_ZERO, SUB_PAST_EXTENT, SUB_STRIDE_WRAPS,
    SUB_BAD_ORDER, SUB_COUNT_MISMATCH, SUB_ELEM_MISMATCH,
} sub_fault_t;

/* put_sub with a valid local section and a remote one broken in one way. */
static int put_sub_with(env_t *e, sub_fault_t fault)
{
    rmx_sub_t bad = sub_valid();
    switch (fault) {
    case SUB_RANK_ZERO:      bad.rank = 0; break;
    case SUB_RANK_16:        bad.rank = RMX_SUB_MAX_RANK + 1; break;
    case SUB_ELEM_ZERO:      bad.elem_size = 0; break;
    case SUB_STRIDE_ZERO:    bad.dim[0].stride = 0; break;
    case SUB_PAST_EXTENT:    bad.dim[0].first = 10; break;           /* 10 + 3*2 = 16: one past */
    case SUB_STRIDE_WRAPS:   bad.dim[0].stride = SIZE_MAX / 2; break;
    case SUB_BAD_ORDER:      bad.order = (rmx_order_t)7; break;
    case SUB_COUNT_MISMATCH: bad.dim[0].count = 3; break;
    case SUB_ELEM_MISMATCH:  bad.elem_size = 4; break;
    }
    return rmx_put_sub(e->win, e->buf, &e->sub, e->right, 0, &bad);
}

/* A one-operand rmw at the right neighbour; operand and result are the local buffer. */
static int rmw(env_t *e, int count, rmx_dtype_t dt, size_t disp, int assert, rmx_rmw_op_t op)
{
    return rmx_rmw(e->win, e->buf, count, dt, e->buf, e->right, disp, assert, op);
}

static int rmw2(env_t *e, rmx_dtype_t dt, size_t disp, rmx_rmw2_op_t op)
{
    return rmx_rmw2(e->win, e->buf, 1, dt, e->buf, e->buf, e->right, disp, 0, op);
}

/* Rows that need an open epoch open it, make the bad call, and close it again. */
static int nested_lock(env_t *e)
{
    RANK_OK(rmx_win_lock(e->win, RMX_LOCK_SHARED, e->right, 0));
    int rc = rmx_win_lock(e->win, RMX_LOCK_SHARED, e->right, 0);
    RANK_OK(rmx_win_unlock(e->win, e->right));
    return rc;
}

static int implicit_inside_lock(env_t *e)
{
    RANK_OK(rmx_win_lock(e->win, RMX_LOCK_EXCLUSIVE, e->right, 0));
    int rc = rmw(e, 1, RMX_INT64, 8, RMX_MODE_PASSIVE_EPOCH_IMPLICIT, RMX_OP_SUM);
    RANK_OK(rmx_win_unlock(e->win, e->right));
    return rc;
}

static int free_inside_epoch(env_t *e)
{
    RANK_OK(rmx_win_lock(e->win, RMX_LOCK_SHARED, e->right, 0));
    rmx_win_t *w = e->win;
    int rc = rmx_win_free(&w);
    RANK_ASSERT(w == e->win, "a refused win_free cleared the handle");
    RANK_OK(rmx_win_unlock(e->win, e->right));
    return rc;
}

static int unlock_twice(env_t *e)
{
    RANK_OK(rmx_win_lock(e->win, RMX_LOCK_SHARED, e->right, 0));
    RANK_OK(rmx_win_unlock(e->win, e->right));
    return rmx_win_unlock(e->win, e->right);
}

/* name, exact code wanted, the call (e is the env) */
#define BAD_INPUTS(X)                                                                        \
    /* ranks */                                                                              \
    X(put_rank_negative,        RMX_ERR_RANK,  rmx_put(e->win, e->buf, 8, -1, 0))           \
    X(put_rank_size,            RMX_ERR_RANK,  rmx_put(e->win, e->buf, 8, e->n, 0))         \
    X(put_rank_int_max,         RMX_ERR_RANK,  rmx_put(e->win, e->buf, 8, INT_MAX, 0))      \
    X(get_rank_far,             RMX_ERR_RANK,  rmx_get(e->win, e->buf, 8, e->n + 100, 0))   \
    X(get_rank_int_min,         RMX_ERR_RANK,  rmx_get(e->win, e->buf, 8, INT_MIN, 0))      \
    X(win_size_rank,            RMX_ERR_RANK,  rmx_win_size(e->win, e->n, &e->len_out))     \
    X(win_size_rank_negative,   RMX_ERR_RANK,  rmx_win_size(e->win, -1, &e->len_out))       \
    /* ranges, against the target's own window size */                                      \
    X(put_longer_than_window,   RMX_ERR_RANGE, rmx_put(e->win, e->buf, e->rsize + 1, e->right, 0)) \
    X(put_at_end,               RMX_ERR_RANGE, rmx_put(e->win, e->buf, 1, e->right, e->rsize))     \
    X(put_straddles_end,        RMX_ERR_RANGE, rmx_put(e->win, e->buf, 8, e->right, e->rsize - 4)) \
    X(put_disp_wraps,           RMX_ERR_RANGE, rmx_put(e->win, e->buf, 8, e->right, SIZE_MAX - 2)) \
    X(put_len_size_max,         RMX_ERR_RANGE, rmx_put(e->win, e->buf, SIZE_MAX, e->right, 8))     \
    X(put_my_size_not_theirs,   RMX_ERR_RANGE, rmx_put(e->win, e->buf, window_bytes(e->right) + 1, e->right, 0)) \
    X(get_longer_than_window,   RMX_ERR_RANGE, rmx_get(e->win, e->buf, e->rsize + 1, e->right, 0)) \
    X(get_straddles_end,        RMX_ERR_RANGE, rmx_get(e->win, e->buf, 2, e->right, e->rsize - 1)) \
    X(get_disp_size_max,        RMX_ERR_RANGE, rmx_get(e->win, e->buf, 1, e->right, SIZE_MAX))     \
    /* NULL buffers and out-parameters */                                                    \
    X(put_null_src,             RMX_ERR_ARG,   rmx_put(e->win, NULL, 8, e->right, 0))       \
    X(get_null_dst,             RMX_ERR_ARG,   rmx_get(e->win, NULL, 8, e->right, 0))       \
    X(win_size_null_len,        RMX_ERR_ARG,   rmx_win_size(e->win, 0, NULL))               \
    X(stats_null,               RMX_ERR_ARG,   rmx_stats(e->ctx, NULL))                     \
    X(allocate_null_base,       RMX_ERR_ARG,   rmx_win_allocate(e->ctx, 8, NULL, &e->win_out)) \
    X(allocate_null_win,        RMX_ERR_ARG,   rmx_win_allocate(e->ctx, 8, &e->ptr_out, NULL)) \
    X(create_null_base,         RMX_ERR_ARG,   rmx_win_create(e->ctx, NULL, 8, &e->win_out)) \
    X(create_null_win,          RMX_ERR_ARG,   rmx_win_create(e->ctx, e->buf, 8, NULL))     \
    X(win_free_null,            RMX_ERR_ARG,   rmx_win_free(NULL))                          \
    X(init_null_out,            RMX_ERR_ARG,   rmx_init(NULL, NULL))                        \
    /* bad configurations (single bootstrap otherwise, so a mistake would not hang) */       \
    X(init_negative_timeout,    RMX_ERR_ARG,   (e->cfg = single_cfg(), e->cfg.peer_timeout_s = -1, init_with(e->cfg, &e->ctx_out))) \
    X(init_bad_bootstrap,       RMX_ERR_ARG,   (e->cfg = single_cfg(), e->cfg.bootstrap = (rmx_boot_kind_t)99, init_with(e->cfg, &e->ctx_out))) \
    X(init_bad_bind,            RMX_ERR_ARG,   (e->cfg = single_cfg(), e->cfg.bind = (rmx_bind_t)99, init_with(e->cfg, &e->ctx_out))) \
    X(init_oob_without_callbacks, RMX_ERR_ARG, (e->cfg = single_cfg(), e->cfg.bootstrap = RMX_BOOT_OOB, init_with(e->cfg, &e->ctx_out))) \
    /* windows: NULL, not a window, freed (use after free, double free) */                   \
    X(put_null_win,             RMX_ERR_WIN,   rmx_put(e->null_win, e->buf, 8, e->right, 0)) \
    X(get_null_win,             RMX_ERR_WIN,   rmx_get(e->null_win, e->buf, 8, e->right, 0)) \
    X(put_fake_win,             RMX_ERR_WIN,   rmx_put((rmx_win_t *)(void *)e->fake_win, e->buf, 8, e->right, 0)) \
    X(put_ctx_as_win,           RMX_ERR_WIN,   rmx_put((rmx_win_t *)(void *)e->ctx, e->buf, 8, e->right, 0)) \
    X(put_freed_win,            RMX_ERR_WIN,   rmx_put(e->dead_win, e->buf, 8, e->right, 0)) \
    X(get_freed_win,            RMX_ERR_WIN,   rmx_get(e->dead_win, e->buf, 8, e->right, 0)) \
    X(win_size_freed_win,       RMX_ERR_WIN,   rmx_win_size(e->dead_win, 0, &e->len_out))   \
    X(win_free_twice,           RMX_ERR_WIN,   rmx_win_free(&e->dead_win))                  \
    X(win_free_null_handle,     RMX_ERR_WIN,   rmx_win_free(&e->null_win))                  \
    /* contexts: NULL, finalized (calls after finalize, double finalize) */                  \
    X(rank_null_ctx,            RMX_ERR_CTX,   rmx_rank(NULL))                              \
    X(size_dead_ctx,            RMX_ERR_CTX,   rmx_size(e->dead_ctx))                       \
    X(sync_all_null_ctx,        RMX_ERR_CTX,   rmx_sync_all(NULL))                          \
    X(sync_all_dead_ctx,        RMX_ERR_CTX,   rmx_sync_all(e->dead_ctx))                   \
    X(sync_memory_dead_ctx,     RMX_ERR_CTX,   rmx_sync_memory(e->dead_ctx))                \
    X(sync_images_dead_ctx,     RMX_ERR_CTX,   rmx_sync_images(e->dead_ctx, NULL, 0))       \
    X(allocate_dead_ctx,        RMX_ERR_CTX,   rmx_win_allocate(e->dead_ctx, 8, &e->ptr_out, &e->win_out)) \
    X(create_dead_ctx,          RMX_ERR_CTX,   rmx_win_create(e->dead_ctx, e->buf, 8, &e->win_out)) \
    X(stats_dead_ctx,           RMX_ERR_CTX,   rmx_stats(e->dead_ctx, NULL))                \
    X(stats_reset_null_ctx,     RMX_ERR_CTX,   rmx_stats_reset(NULL))                       \
    X(finalize_twice,           RMX_ERR_CTX,   rmx_finalize(e->dead_ctx))                   \
    X(finalize_null,            RMX_ERR_CTX,   rmx_finalize(NULL))                          \
    X(ctx_as_win_ctx,           RMX_ERR_CTX,   rmx_sync_all((rmx_ctx_t *)(void *)e->win))   \
    /* sync_images lists */                                                                  \
    X(sync_images_duplicate,    RMX_ERR_ARG,   images_dup(e))                               \
    X(sync_images_rank_size,    RMX_ERR_RANK,  images_bad(e, e->n))                         \
    X(sync_images_rank_negative, RMX_ERR_RANK, images_bad(e, -1))                           \
    X(sync_images_count_negative, RMX_ERR_ARG, rmx_sync_images(e->ctx, e->images, -1))     \
    /* subarray descriptors */                                                                \
    X(sub_rank_zero,            RMX_ERR_ARG,   put_sub_with(e, SUB_RANK_ZERO))                    \
    X(sub_rank_16,              RMX_ERR_ARG,   put_sub_with(e, SUB_RANK_16))                      \
    X(sub_elem_size_zero,       RMX_ERR_ARG,   put_sub_with(e, SUB_ELEM_ZERO))                    \
    X(sub_stride_zero,          RMX_ERR_ARG,   put_sub_with(e, SUB_STRIDE_ZERO))                  \
    X(sub_past_extent,          RMX_ERR_ARG,   put_sub_with(e, SUB_PAST_EXTENT))                  \
    X(sub_stride_wraps,         RMX_ERR_ARG,   put_sub_with(e, SUB_STRIDE_WRAPS))                 \
    X(sub_bad_order,            RMX_ERR_ARG,   put_sub_with(e, SUB_BAD_ORDER))                    \
    X(sub_count_mismatch,       RMX_ERR_ARG,   put_sub_with(e, SUB_COUNT_MISMATCH))               \
    X(sub_elem_size_mismatch,   RMX_ERR_ARG,   put_sub_with(e, SUB_ELEM_MISMATCH))                \
    X(sub_null_local,           RMX_ERR_ARG,   rmx_put_sub(e->win, e->buf, NULL, e->right, 0, &e->sub)) \
    X(sub_null_remote,          RMX_ERR_ARG,   rmx_get_sub(e->win, e->buf, &e->sub, e->right, 0, NULL)) \
    X(sub_null_src,             RMX_ERR_ARG,   rmx_put_sub(e->win, NULL, &e->sub, e->right, 0, &e->sub)) \
    X(sub_remote_past_window,   RMX_ERR_RANGE, rmx_put_sub(e->win, e->buf, &e->sub, e->right, e->rsize - 8, &e->sub)) \
    X(sub_get_past_window,      RMX_ERR_RANGE, rmx_get_sub(e->win, e->buf, &e->sub, e->right, e->rsize, &e->sub)) \
    X(sub_rank,                 RMX_ERR_RANK,  rmx_put_sub(e->win, e->buf, &e->sub, e->n, 0, &e->sub)) \
    X(sub_freed_win,            RMX_ERR_WIN,   rmx_get_sub(e->dead_win, e->buf, &e->sub, e->right, 0, &e->sub)) \
    /* read-modify-write: ops, datatypes, op/datatype mismatches, alignment, counts */          \
    X(rmw_op_count,             RMX_ERR_OP,       rmw(e, 1, RMX_INT64, 8, 0, RMX_OP_COUNT))       \
    X(rmw_op_negative,          RMX_ERR_OP,       rmw(e, 1, RMX_INT64, 8, 0, (rmx_rmw_op_t)-1))   \
    X(rmw_dtype_count,          RMX_ERR_DATATYPE, rmw(e, 1, RMX_DTYPE_COUNT, 8, 0, RMX_OP_SUM))   \
    X(rmw_dtype_negative,       RMX_ERR_DATATYPE, rmw(e, 1, (rmx_dtype_t)-1, 8, 0, RMX_OP_SUM))   \
    X(rmw_bxor_on_float,        RMX_ERR_DATATYPE, rmw(e, 1, RMX_FLOAT, 8, 0, RMX_OP_BXOR))        \
    X(rmw_band_on_double,       RMX_ERR_DATATYPE, rmw(e, 1, RMX_DOUBLE, 8, 0, RMX_OP_BAND))       \
    X(rmw_lor_on_double,        RMX_ERR_DATATYPE, rmw(e, 1, RMX_DOUBLE, 8, 0, RMX_OP_LOR))        \
    X(rmw_count_negative,       RMX_ERR_ARG,      rmw(e, -3, RMX_INT64, 8, 0, RMX_OP_SUM))        \
    X(rmw_null_operand,         RMX_ERR_ARG,      rmx_rmw(e->win, NULL, 1, RMX_INT64, e->buf, e->right, 8, 0, RMX_OP_SUM)) \
    X(rmw_bad_assert,           RMX_ERR_ARG,      rmw(e, 1, RMX_INT64, 8, 0x40, RMX_OP_SUM))      \
    X(rmw_misaligned_int64,     RMX_ERR_ALIGN,    rmw(e, 1, RMX_INT64, 4, 0, RMX_OP_SUM))         \
    X(rmw_misaligned_int32,     RMX_ERR_ALIGN,    rmw(e, 1, RMX_INT32, 2, 0, RMX_OP_INC))         \
    X(rmw_past_window,          RMX_ERR_RANGE,    rmw(e, 1, RMX_INT64, e->rsize, 0, RMX_OP_SUM))  \
    X(rmw_count_past_window,    RMX_ERR_RANGE,    rmw(e, (int)(e->rsize / 8), RMX_INT64, 8, 0, RMX_OP_SUM)) \
    X(rmw_rank,                 RMX_ERR_RANK,     rmx_rmw(e->win, e->buf, 1, RMX_INT64, e->buf, e->n, 8, 0, RMX_OP_SUM)) \
    X(rmw_freed_win,            RMX_ERR_WIN,      rmx_rmw(e->dead_win, e->buf, 1, RMX_INT64, e->buf, e->right, 8, 0, RMX_OP_SUM)) \
    X(rmw2_op_count,            RMX_ERR_OP,       rmw2(e, RMX_INT64, 8, RMX_OP2_COUNT))           \
    X(rmw2_mask_swap_on_double, RMX_ERR_DATATYPE, rmw2(e, RMX_DOUBLE, 8, RMX_OP2_MASK_SWAP))      \
    X(rmw2_null_operand2,       RMX_ERR_ARG,      rmx_rmw2(e->win, e->buf, 1, RMX_INT64, NULL, e->buf, e->right, 8, 0, RMX_OP2_COMP_SWAP)) \
    X(rmw2_misaligned,          RMX_ERR_ALIGN,    rmw2(e, RMX_UINT32, 6, RMX_OP2_COMP_SWAP))      \
    /* passive-target epochs: nesting, unlock without lock, a freed window */                   \
    X(lock_type_zero,           RMX_ERR_ARG,      rmx_win_lock(e->win, (rmx_lock_t)0, e->right, 0)) \
    X(lock_assert_implicit,     RMX_ERR_ARG,      rmx_win_lock(e->win, RMX_LOCK_SHARED, e->right, RMX_MODE_PASSIVE_EPOCH_IMPLICIT)) \
    X(lock_rank,                RMX_ERR_RANK,     rmx_win_lock(e->win, RMX_LOCK_EXCLUSIVE, e->n, 0)) \
    X(unlock_rank,              RMX_ERR_RANK,     rmx_win_unlock(e->win, -1))                     \
    X(unlock_without_lock,      RMX_ERR_EPOCH,    rmx_win_unlock(e->win, e->right))               \
    X(lock_freed_win,           RMX_ERR_WIN,      rmx_win_lock(e->dead_win, RMX_LOCK_SHARED, e->right, 0)) \
    X(unlock_freed_win,         RMX_ERR_WIN,      rmx_win_unlock(e->dead_win, e->right))          \
    X(lock_nested_same_target,  RMX_ERR_EPOCH,    nested_lock(e))                                 \
    X(rmw_implicit_inside_lock, RMX_ERR_EPOCH,    implicit_inside_lock(e))                        \
    X(win_free_inside_epoch,    RMX_ERR_EPOCH,    free_inside_epoch(e))                           \
    X(unlock_twice,             RMX_ERR_EPOCH,    unlock_twice(e))

typedef struct row {
    const char *name;
    int want;
    int (*call)(env_t *e);
} row_t;

#define DEFINE_ROW(name, want, expr)                                                     \
    static int row_##name(env_t *e)                                                      \
    {                                                                                    \
        (void)e;                                                                         \
        return (expr);                                                                   \
    }
#define TABLE_ROW(name, want, expr) {#name, want, row_##name},
BAD_INPUTS(DEFINE_ROW)
static const row_t rows[] = {BAD_INPUTS(TABLE_ROW)};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

Test(badinput, table_has_at_least_30_rows) { cr_assert_geq(NROWS, 30); }

static void expect_untouched(const env_t *e, const char *row)
{
    for (size_t i = 0; i < e->my_size; i++)
        RANK_ASSERT(e->base[i] == FILL_WIN, "%s: byte %zu of rank %d's window became %#x", row, i,
                    e->me, e->base[i]);
    for (size_t i = 0; i < sizeof(e->buf); i++)
        RANK_ASSERT(e->buf[i] == FILL_BUF, "%s: local buffer byte %zu became %#x", row, i,
                    e->buf[i]);
}

static void make_dead_handles(env_t *e)
{
    rmx_config_t c = single_cfg();
    RANK_OK(rmx_init(&c, &e->dead_ctx));
    RANK_OK(rmx_finalize(e->dead_ctx));
    void *b;
    RANK_OK(rmx_win_allocate(e->ctx, 64, &b, &e->dead_win));
    rmx_win_t *w = e->dead_win;
    RANK_OK(rmx_win_free(&w));
    e->null_win = NULL;
    memset(e->fake_win, 0, sizeof(e->fake_win));
}

static int rank_bad_input_table(const rmx_config_t *cfg, void *arg)
{
    (void)arg;
    static env_t env;
    env_t *e = &env;
    RANK_OK(rmx_init(cfg, &e->ctx));
    e->me = rmx_rank(e->ctx);
    e->n = rmx_size(e->ctx);
    e->right = (e->me + 1) % e->n;
    e->rsize = window_bytes(e->right);
    e->my_size = window_bytes(e->me);
    RANK_OK(rmx_win_allocate(e->ctx, e->my_size, (void **)&e->base, &e->win));
    make_dead_handles(e);
    e->sub = sub_valid();
    memset(e->base, FILL_WIN, e->my_size);
    memset(e->buf, FILL_BUF, sizeof(e->buf));
    RANK_OK(rmx_sync_all(e->ctx));

    for (size_t i = 0; i < NROWS; i++) {
        e->win_out = (rmx_win_t *)(void *)e->fake_win;
        e->ctx_out = (rmx_ctx_t *)(void *)e->fake_win;
        int rc = rows[i].call(e);
        if (rc != rows[i].want)
            RANK_FAIL("row %s returned %d (%s), wanted %d (%s)", rows[i].name, rc,
                      rmx_strerror(rc), rows[i].want, rmx_strerror(rows[i].want));
        RANK_OK(rmx_sync_all(e->ctx)); /* anything a bad call sent would now have landed */
        expect_untouched(e, rows[i].name);
        RANK_OK(rmx_sync_all(e->ctx)); /* everyone checked before anyone goes on */
    }
    /* a real access still works after all that */
    unsigned char one = 0x42;
    RANK_OK(rmx_put(e->win, &one, 1, e->right, 0));
    RANK_OK(rmx_sync_all(e->ctx));
    RANK_ASSERT(e->base[0] == 0x42);
    RANK_OK(rmx_finalize(e->ctx));
    return 0;
}

Test(badinput, every_row_exact_code_nothing_written_2_ranks, .timeout = RMX_T(60))
{
    run_ranks(2, rank_bad_input_table, NULL);
}

Test(badinput, every_row_exact_code_nothing_written_3_ranks, .timeout = RMX_T(60))
{
    run_ranks(3, rank_bad_input_table, NULL);
}
