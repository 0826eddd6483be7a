/*
 * caf_coll.c — collective subroutines: CO_SUM, CO_MIN, CO_MAX, CO_BROADCAST, CO_REDUCE, built on
 * one scratch window plus rmx_put and rmx_sync_all.
 *
 * Reduction: every image puts its packed contribution into its own slot at each image that wants
 * the result (all of them, or RESULT_IMAGE), one sync all, then each such image reduces the
 * slots in image order 1..n, so every image computes the bit-identical result.  Broadcast: the
 * source puts into slot 0 of every other image, sync all, copy out.
 *
 * The scratch window holds two banks of n slots and successive collectives alternate banks: an
 * image can only write bank b again after the sync all of the collective in between, which every
 * image enters only once it has finished reading bank b.  So one sync all per collective.  The
 * window grows (collectively: every image calls collectives in the same order with the same
 * sizes, as the standard requires) when a larger argument comes.
 *
 * ERRMSG= is never written here: gfortran 12.2 passes the CO_* errmsg string *by value* (a copy
 * of the whole CHARACTER on the stack, seen in its generated code), so the `char *errmsg` slot
 * holds the length instead and nothing written could reach the caller.  STAT= works.
 */
#include <stdlib.h>
#include <string.h>
#include "caf_internal.h"

/* See the top of the file: what arrives in errmsg/errmsg_len of a CO_* call is not usable. */
#define DROP_ERRMSG() (errmsg = NULL, errmsg_len = 0)

static struct {
    rmx_win_t *win;
    char *base;
    size_t slot;       /* bytes per image slot */
    unsigned long seq; /* collectives so far: its parity picks the bank */
} scratch;

static int scratch_reserve(size_t bytes)
{
    if (scratch.win != NULL && bytes <= scratch.slot)
        return RMX_OK;
    rmx_ctx_t *c = caf_ctx();
    int rc = RMX_OK;
    if (scratch.win != NULL && (rc = rmx_win_free(&scratch.win)) != RMX_OK)
        return rc;
    size_t slot = scratch.slot * 2 > bytes ? scratch.slot * 2 : bytes;
    if (slot < 4096)
        slot = 4096;
    size_t n = (size_t)rmx_size(c);
    void *base;
    rc = rmx_win_allocate(c, 2 * n * slot, &base, &scratch.win);
    if (rc != RMX_OK)
        return rc;
    scratch.base = base;
    scratch.slot = slot;
    return RMX_OK;
}

static size_t slot_disp(unsigned bank, int image)
{
    return ((size_t)bank * (size_t)rmx_size(caf_ctx()) + (size_t)image) * scratch.slot;
}

/* ---- the reductions: acc[i] = acc[i] OP in[i] for count elements of one type */
typedef enum { RED_SUM, RED_MIN, RED_MAX } red_op_t;

#define RED_LOOP(T)                                                                         \
    do {                                                                                    \
        T *a = acc;                                                                         \
        const T *b = in;                                                                    \
        for (size_t i = 0; i < count; i++)                                                  \
            a[i] = op == RED_SUM ? a[i] + b[i]                                              \
                 : op == RED_MIN ? (b[i] < a[i] ? b[i] : a[i])                              \
                                 : (b[i] > a[i] ? b[i] : a[i]);                             \
    } while (0)

#define SUM_LOOP(T)                                                                         \
    do {                                                                                    \
        T *a = acc;                                                                         \
        const T *b = in;                                                                    \
        for (size_t i = 0; i < count; i++)                                                  \
            a[i] += b[i];                                                                   \
    } while (0)

/* Kind 4 strings compare by code point, which is not byte order on a little-endian machine. */
static int char_cmp(const void *x, const void *y, size_t len, int kind4)
{
    if (!kind4)
        return memcmp(x, y, len);
    const uint32_t *a = x, *b = y;
    for (size_t k = 0; k < len / 4; k++)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

/* REAL(10) and REAL(16) both take 16 bytes and the descriptor does not say which: refused. */
static int reduction_supported(int type, size_t elem, red_op_t op)
{
    switch (type) {
    case CAF_BT_INTEGER:
        return elem == 1 || elem == 2 || elem == 4 || elem == 8 || elem == 16;
    case CAF_BT_REAL:
        return elem == 4 || elem == 8;
    case CAF_BT_COMPLEX:
        return op == RED_SUM && (elem == 8 || elem == 16);
    case CAF_BT_CHARACTER:
        return op != RED_SUM;
    }
    return 0;
}

/* acc[i] = acc[i] OP in[i]; the combination must pass reduction_supported. */
static void reduce_into(void *acc, const void *in, size_t count, int type, size_t elem,
                        int kind4, red_op_t op)
{
    switch (type) {
    case CAF_BT_INTEGER:
        switch (elem) {
        case 1: RED_LOOP(int8_t); return;
        case 2: RED_LOOP(int16_t); return;
        case 4: RED_LOOP(int32_t); return;
        case 8: RED_LOOP(int64_t); return;
        case 16: RED_LOOP(__int128); return;
        }
        return;
    case CAF_BT_REAL:
        if (elem == 4)
            RED_LOOP(float);
        else
            RED_LOOP(double);
        return;
    case CAF_BT_COMPLEX:
        if (elem == 8)
            SUM_LOOP(float _Complex);
        else
            SUM_LOOP(double _Complex);
        return;
    case CAF_BT_CHARACTER:
        for (size_t i = 0; i < count; i++) {
            char *a = (char *)acc + i * elem;
            const char *b = (const char *)in + i * elem;
            int c = char_cmp(b, a, elem, kind4);
            if ((op == RED_MIN && c < 0) || (op == RED_MAX && c > 0))
                memcpy(a, b, elem);
        }
        return;
    }
}

/* Pack a into this image's contribution, put it where it is wanted, sync all.  Returns the bank. */
static int contribute(const char *entry, caf_desc_t *a, int result_image, unsigned *bank,
                      size_t *bytes, int *stat, char *errmsg, size_t errmsg_len)
{
    rmx_ctx_t *c = caf_ctx();
    int n = rmx_size(c), me = rmx_rank(c);
    if (result_image != 0 && caf_target(entry, result_image, stat, errmsg, errmsg_len) < 0)
        return -1;
    *bytes = caf_desc_count(a) * caf_desc_elem(a);
    int rc = scratch_reserve(*bytes);
    if (rc != RMX_OK)
        return caf_check(entry, rc, stat, errmsg, errmsg_len), -1;
    *bank = (unsigned)(scratch.seq++ & 1);
    char *mine = scratch.base + slot_disp(*bank, me);
    caf_desc_pack(a, mine);
    for (int r = 0; r < n && rc == RMX_OK; r++)
        if (r != me && (result_image == 0 || r == result_image - 1))
            rc = rmx_put(scratch.win, mine, *bytes, r, slot_disp(*bank, me));
    if (rc == RMX_OK)
        rc = rmx_sync_all(c);
    if (rc != RMX_OK)
        return caf_check(entry, rc, stat, errmsg, errmsg_len), -1;
    return 0;
}

/* Every image contributes a; on the image(s) that receive the result, return a copy of image 1's
 * contribution to fold the others into (slot r of *bank holds image r+1's).  NULL: nothing more
 * to do here — not a result image (stat set to success) or an error already reported. */
static char *gather_for_reduction(const char *entry, caf_desc_t *a, int result_image,
                                  unsigned *bank, int *n, int *stat, char *errmsg,
                                  size_t errmsg_len)
{
    size_t bytes;
    if (contribute(entry, a, result_image, bank, &bytes, stat, errmsg, errmsg_len) < 0)
        return NULL;
    rmx_ctx_t *c = caf_ctx();
    *n = rmx_size(c);
    if (result_image != 0 && rmx_rank(c) != result_image - 1) {
        caf_ok(stat);
        return NULL;
    }
    char *acc = malloc(bytes > 0 ? bytes : 1);
    if (acc == NULL) {
        caf_check(entry, RMX_ERR_NOMEM, stat, errmsg, errmsg_len);
        return NULL;
    }
    memcpy(acc, scratch.base + slot_disp(*bank, 0), bytes);
    return acc;
}

static void finish_reduction(caf_desc_t *a, char *acc, int *stat)
{
    caf_desc_unpack(a, acc);
    free(acc);
    caf_ok(stat);
}

static void co_reduction(const char *entry, caf_desc_t *a, int result_image, int *stat,
                         char *errmsg, size_t errmsg_len, int a_len, red_op_t op)
{
    int type = a->dtype.type;
    size_t elem = caf_desc_elem(a), count = caf_desc_count(a);
    int kind4 = type == CAF_BT_CHARACTER && a_len > 0 && elem == 4 * (size_t)a_len;
    /* Refused before any communication, identically on every image. */
    if (!reduction_supported(type, elem, op)) {
        caf_unsupported(entry, stat, errmsg, errmsg_len,
                        "argument type (integer; real or complex of kind 4 or 8; character for "
                        "CO_MIN/CO_MAX)");
        return;
    }
    unsigned bank;
    int n;
    char *acc = gather_for_reduction(entry, a, result_image, &bank, &n, stat, errmsg, errmsg_len);
    if (acc == NULL)
        return;
    for (int r = 1; r < n; r++)
        reduce_into(acc, scratch.base + slot_disp(bank, r), count, type, elem, kind4, op);
    finish_reduction(a, acc, stat);
}

void _gfortran_caf_co_sum(caf_desc_t *a, int result_image, int *stat, char *errmsg,
                          size_t errmsg_len);
void _gfortran_caf_co_min(caf_desc_t *a, int result_image, int *stat, char *errmsg, int a_len,
                          size_t errmsg_len);
void _gfortran_caf_co_max(caf_desc_t *a, int result_image, int *stat, char *errmsg, int a_len,
                          size_t errmsg_len);
void _gfortran_caf_co_broadcast(caf_desc_t *a, int source_image, int *stat, char *errmsg,
                                size_t errmsg_len);
void _gfortran_caf_co_reduce(caf_desc_t *a, void *(*opr)(void *, void *), int opr_flags,
                             int result_image, int *stat, char *errmsg, int a_len,
                             size_t errmsg_len);

void _gfortran_caf_co_sum(caf_desc_t *a, int result_image, int *stat, char *errmsg,
                          size_t errmsg_len)
{
    DROP_ERRMSG();
    co_reduction("_gfortran_caf_co_sum", a, result_image, stat, errmsg, errmsg_len, 0, RED_SUM);
}

void _gfortran_caf_co_min(caf_desc_t *a, int result_image, int *stat, char *errmsg, int a_len,
                          size_t errmsg_len)
{
    DROP_ERRMSG();
    co_reduction("_gfortran_caf_co_min", a, result_image, stat, errmsg, errmsg_len, a_len,
                 RED_MIN);
}

void _gfortran_caf_co_max(caf_desc_t *a, int result_image, int *stat, char *errmsg, int a_len,
                          size_t errmsg_len)
{
    DROP_ERRMSG();
    co_reduction("_gfortran_caf_co_max", a, result_image, stat, errmsg, errmsg_len, a_len,
                 RED_MAX);
}

void _gfortran_caf_co_broadcast(caf_desc_t *a, int source_image, int *stat, char *errmsg,
                                size_t errmsg_len)
{
    DROP_ERRMSG();
    static const char entry[] = "_gfortran_caf_co_broadcast";
    int src = caf_target(entry, source_image, stat, errmsg, errmsg_len);
    if (src < 0)
        return;
    rmx_ctx_t *c = caf_ctx();
    int n = rmx_size(c), me = rmx_rank(c);
    size_t bytes = caf_desc_count(a) * caf_desc_elem(a);
    int rc = scratch_reserve(bytes);
    if (rc != RMX_OK) {
        caf_check(entry, rc, stat, errmsg, errmsg_len);
        return;
    }
    unsigned bank = (unsigned)(scratch.seq++ & 1);
    char *slot0 = scratch.base + slot_disp(bank, 0);
    if (me == src) {
        caf_desc_pack(a, slot0);
        for (int r = 0; r < n && rc == RMX_OK; r++)
            if (r != me)
                rc = rmx_put(scratch.win, slot0, bytes, r, slot_disp(bank, 0));
    }
    if (rc == RMX_OK)
        rc = rmx_sync_all(c);
    if (rc == RMX_OK && me != src)
        caf_desc_unpack(a, slot0);
    caf_check(entry, rc, stat, errmsg, errmsg_len);
}

/* gfortran's CO_REDUCE flags (libgfortran.h GFC_CAF_*) */
#define CAF_BYREF     (1 << 0)
#define CAF_HIDDENLEN (1 << 1)
#define CAF_ARG_VALUE (1 << 2)
#define CAF_ARG_DESC  (1 << 3)

/* CO_REDUCE with OPERATION a function of two scalars passed by reference returning a scalar of the
 * same type: integer/logical of 4 or 8 bytes, real of 4 or 8.  Others are refused. */
static int apply_opr(void *(*opr)(void *, void *), void *acc, void *in, int type, size_t elem)
{
    if ((type == CAF_BT_INTEGER || type == CAF_BT_LOGICAL) && elem == 4) {
        int32_t (*f)(void *, void *) = (int32_t (*)(void *, void *))(void (*)(void))opr;
        *(int32_t *)acc = f(acc, in);
    } else if ((type == CAF_BT_INTEGER || type == CAF_BT_LOGICAL) && elem == 8) {
        int64_t (*f)(void *, void *) = (int64_t (*)(void *, void *))(void (*)(void))opr;
        *(int64_t *)acc = f(acc, in);
    } else if (type == CAF_BT_REAL && elem == 4) {
        float (*f)(void *, void *) = (float (*)(void *, void *))(void (*)(void))opr;
        *(float *)acc = f(acc, in);
    } else if (type == CAF_BT_REAL && elem == 8) {
        double (*f)(void *, void *) = (double (*)(void *, void *))(void (*)(void))opr;
        *(double *)acc = f(acc, in);
    } else {
        return 0;
    }
    return 1;
}

void _gfortran_caf_co_reduce(caf_desc_t *a, void *(*opr)(void *, void *), int opr_flags,
                             int result_image, int *stat, char *errmsg, int a_len,
                             size_t errmsg_len)
{
    DROP_ERRMSG();
    static const char entry[] = "_gfortran_caf_co_reduce";
    (void)a_len;
    int type = a->dtype.type;
    size_t elem = caf_desc_elem(a), count = caf_desc_count(a);
    int scalar_ok = (type == CAF_BT_INTEGER || type == CAF_BT_LOGICAL || type == CAF_BT_REAL) &&
                    (elem == 4 || elem == 8);
    if (opr == NULL || opr_flags != 0 || !scalar_ok) {
        caf_unsupported(entry, stat, errmsg, errmsg_len,
                        "OPERATION must be a function of two integer, logical or real (kind 4 or "
                        "8) scalars without VALUE, returning the result");
        return;
    }
    unsigned bank;
    int n;
    char *acc = gather_for_reduction(entry, a, result_image, &bank, &n, stat, errmsg, errmsg_len);
    if (acc == NULL)
        return;
    for (int r = 1; r < n; r++)
        for (size_t i = 0; i < count; i++)
            apply_opr(opr, acc + i * elem, scratch.base + slot_disp(bank, r) + i * elem, type,
                      elem);
    finish_reduction(a, acc, stat);
}
