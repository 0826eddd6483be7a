/*
 * caf_rma.c — coindexed reads and writes: _gfortran_caf_send (x(...)[i] = y), _gfortran_caf_get
 * (y = x(...)[i]) and _gfortran_caf_sendget (x(...)[i] = z(...)[j]), for scalars and array
 * sections of any rank.
 *
 * gfortran describes each side with an array descriptor; the remote one describes the section in
 * *this* image's copy of the coarray, and the token offset locates its first element, which is
 * the remote displacement too.  A descriptor becomes a caf_section_t (counts and byte strides).
 * When both sides map onto rmx_sub_t (positive strides nested like the dimensions of one array)
 * the transfer is one rmx_put_sub / rmx_get_sub, so the engine's contiguity analysis decides the
 * UCP operations; a contiguous pair is one rmx_put / rmx_get; anything else (negative or
 * transposed strides) is walked here, one rmx operation per run that is contiguous on both sides.
 *
 * Type or kind conversion, scalar-to-array broadcast and may_require_tmp (overlap on this image)
 * go through a packed temporary on this image; only the local side is ever copied.
 */
#include <complex.h>
#include <stdlib.h>
#include <string.h>
#include "caf_internal.h"

void caf_section_of(const caf_desc_t *d, caf_section_t *s)
{
    s->elem = caf_desc_elem(d);
    s->rank = caf_desc_rank(d);
    s->count = 1;
    ptrdiff_t span = d->span > 0 ? d->span : (ptrdiff_t)s->elem;
    for (int j = 0; j < s->rank; j++) {
        ptrdiff_t n = d->dim[j].ubound - d->dim[j].lbound + 1;
        s->n[j] = n > 0 ? (size_t)n : 0;
        s->sm[j] = d->dim[j].stride * span;
        s->count *= s->n[j];
    }
}

void caf_section_packed(caf_section_t *s, size_t elem, size_t count)
{
    s->elem = elem;
    s->rank = 1;
    s->count = count;
    s->n[0] = count;
    s->sm[0] = (ptrdiff_t)elem;
}

size_t caf_desc_count(const caf_desc_t *d)
{
    caf_section_t s;
    caf_section_of(d, &s);
    return s.count;
}

/* Byte offset of element i (array element order, first dimension fastest). */
static ptrdiff_t section_offset(const caf_section_t *s, size_t i)
{
    ptrdiff_t off = 0;
    for (int j = 0; j < s->rank; j++) {
        off += (ptrdiff_t)(i % s->n[j]) * s->sm[j];
        i /= s->n[j];
    }
    return off;
}

ptrdiff_t caf_desc_elem_offset(const caf_desc_t *d, size_t i)
{
    caf_section_t s;
    caf_section_of(d, &s);
    return section_offset(&s, i);
}

static int section_contiguous(const caf_section_t *s)
{
    ptrdiff_t want = (ptrdiff_t)s->elem;
    for (int j = 0; j < s->rank; j++) {
        if (s->n[j] == 1)
            continue; /* its stride is never used */
        if (s->sm[j] != want)
            return 0;
        want *= (ptrdiff_t)s->n[j];
    }
    return 1;
}

/* Walk the elements of a section with an odometer: offset of the current element. */
typedef struct walker {
    const caf_section_t *s;
    size_t idx[CAF_MAX_DIMS];
    ptrdiff_t off;
} walker_t;

static void walker_init(walker_t *w, const caf_section_t *s)
{
    memset(w, 0, sizeof(*w));
    w->s = s;
}

static void walker_next(walker_t *w)
{
    const caf_section_t *s = w->s;
    for (int j = 0; j < s->rank; j++) {
        w->off += s->sm[j];
        if (++w->idx[j] < s->n[j])
            return;
        w->off -= (ptrdiff_t)s->n[j] * s->sm[j];
        w->idx[j] = 0;
    }
}

void caf_desc_pack(const caf_desc_t *d, void *packed)
{
    caf_section_t s;
    caf_section_of(d, &s);
    walker_t w;
    walker_init(&w, &s);
    for (size_t i = 0; i < s.count; i++, walker_next(&w))
        memcpy((char *)packed + i * s.elem, (const char *)d->base_addr + w.off, s.elem);
}

void caf_desc_unpack(const caf_desc_t *d, const void *packed)
{
    caf_section_t s;
    caf_section_of(d, &s);
    walker_t w;
    walker_init(&w, &s);
    for (size_t i = 0; i < s.count; i++, walker_next(&w))
        memcpy((char *)d->base_addr + w.off, (const char *)packed + i * s.elem, s.elem);
}

/* A section as an rmx_sub_t of one Fortran-order array whose first element is the section's: each
 * dimension's extent is the next dimension's element stride divided by the product of the extents
 * before it.  Fails (0) when strides are not positive multiples nested that way. */
static int section_to_sub(const caf_section_t *s, rmx_sub_t *sub)
{
    memset(sub, 0, sizeof(*sub));
    sub->elem_size = s->elem;
    sub->order = RMX_ORDER_FORTRAN;
    sub->rank = s->rank > 0 ? s->rank : 1;
    if (s->rank == 0) {
        sub->dim[0] = (rmx_sub_dim_t){.extent = 1, .first = 0, .count = 1, .stride = 1};
        return 1;
    }
    size_t below = 1; /* product of the extents of the faster dimensions, in elements */
    for (int j = 0; j < s->rank; j++) {
        size_t stride = 1;
        if (s->n[j] > 1) {
            if (s->sm[j] <= 0 || (size_t)s->sm[j] % s->elem != 0)
                return 0;
            size_t e = (size_t)s->sm[j] / s->elem;
            if (e % below != 0)
                return 0;
            stride = e / below;
        }
        size_t need = (s->n[j] - 1) * stride + 1, extent = need;
        if (j + 1 < s->rank) {
            if (s->sm[j + 1] <= 0 || (size_t)s->sm[j + 1] % s->elem != 0)
                return 0;
            size_t next = (size_t)s->sm[j + 1] / s->elem;
            if (next % below != 0 || next / below < need)
                return 0;
            extent = next / below;
        }
        sub->dim[j] = (rmx_sub_dim_t){.extent = extent, .first = 0, .count = s->n[j],
                                      .stride = stride};
        below *= extent;
    }
    return 1;
}

/* The lowest byte offset a section touches (negative strides reach below its first element). */
static ptrdiff_t section_low(const caf_section_t *s)
{
    ptrdiff_t low = 0;
    for (int j = 0; j < s->rank; j++)
        if (s->sm[j] < 0 && s->n[j] > 0)
            low += (ptrdiff_t)(s->n[j] - 1) * s->sm[j];
    return low;
}

/* Move the elements of remote section `rs` (first element at byte `disp` of target's window) from
 * (put) or to (get) local section `ls` at `local`.  Same element count and size on both sides. */
int caf_transfer(caf_token_t *t, int put, void *local, const caf_section_t *ls, int target,
                 ptrdiff_t disp, const caf_section_t *rs)
{
    if (rs->count == 0)
        return RMX_OK;
    if (disp + section_low(rs) < 0)
        return RMX_ERR_RANGE;
    disp += (ptrdiff_t)caf_token_disp(t, target);
    if (section_contiguous(rs) && section_contiguous(ls)) {
        size_t len = rs->count * rs->elem;
        return put ? rmx_put(t->win, local, len, target, (size_t)disp)
                   : rmx_get(t->win, local, len, target, (size_t)disp);
    }
    rmx_sub_t lsub, rsub;
    if (section_to_sub(ls, &lsub) && section_to_sub(rs, &rsub))
        return put ? rmx_put_sub(t->win, local, &lsub, target, (size_t)disp, &rsub)
                   : rmx_get_sub(t->win, local, &lsub, target, (size_t)disp, &rsub);
    /* Negative or non-nesting strides: one rmx call per run contiguous on both sides. */
    walker_t lw, rw;
    walker_init(&lw, ls);
    walker_init(&rw, rs);
    size_t elem = rs->elem;
    int rc = RMX_OK;
    size_t i = 0;
    while (i < rs->count && rc == RMX_OK) {
        ptrdiff_t l0 = lw.off, r0 = rw.off;
        size_t run = 1;
        for (walker_next(&lw), walker_next(&rw), i++; i < rs->count; walker_next(&lw),
             walker_next(&rw), i++, run++)
            if (lw.off != l0 + (ptrdiff_t)(run * elem) || rw.off != r0 + (ptrdiff_t)(run * elem))
                break;
        char *lp = (char *)local + l0;
        size_t rd = (size_t)(disp + r0);
        rc = put ? rmx_put(t->win, lp, run * elem, target, rd)
                 : rmx_get(t->win, lp, run * elem, target, rd);
    }
    return rc;
}

/* ---------------------------------------------------------------- type conversion */
typedef long double _Complex caf_cplx_t;

typedef struct value {
    int is_int;
    __int128 i;
    caf_cplx_t z; /* reals and complexes (imaginary part 0 for reals) */
} value_t;

static int load_value(const void *p, int type, int kind, value_t *v)
{
    memset(v, 0, sizeof(*v));
    switch (type) {
    case CAF_BT_INTEGER:
    case CAF_BT_LOGICAL:
        v->is_int = 1;
        switch (kind) {
        case 1: v->i = *(const int8_t *)p; return 1;
        case 2: v->i = *(const int16_t *)p; return 1;
        case 4: v->i = *(const int32_t *)p; return 1;
        case 8: v->i = *(const int64_t *)p; return 1;
        case 16: memcpy(&v->i, p, 16); return 1;
        }
        return 0;
    case CAF_BT_REAL:
        switch (kind) {
        case 4: v->z = *(const float *)p; return 1;
        case 8: v->z = *(const double *)p; return 1;
        case 10: v->z = *(const long double *)p; return 1;
        }
        return 0;
    case CAF_BT_COMPLEX:
        switch (kind) {
        case 4: v->z = *(const float _Complex *)p; return 1;
        case 8: v->z = *(const double _Complex *)p; return 1;
        case 10: v->z = *(const long double _Complex *)p; return 1;
        }
        return 0;
    }
    return 0;
}

static int store_value(void *p, int type, int kind, const value_t *v)
{
    __int128 i = v->is_int ? v->i : (__int128)creall(v->z);
    long double _Complex z = v->is_int ? (long double)v->i : v->z;
    if (type == CAF_BT_LOGICAL)
        i = i != 0;
    switch (type) {
    case CAF_BT_INTEGER:
    case CAF_BT_LOGICAL:
        switch (kind) {
        case 1: *(int8_t *)p = (int8_t)i; return 1;
        case 2: *(int16_t *)p = (int16_t)i; return 1;
        case 4: *(int32_t *)p = (int32_t)i; return 1;
        case 8: *(int64_t *)p = (int64_t)i; return 1;
        case 16: memcpy(p, &i, 16); return 1;
        }
        return 0;
    case CAF_BT_REAL:
        switch (kind) {
        case 4: *(float *)p = (float)creall(z); return 1;
        case 8: *(double *)p = (double)creall(z); return 1;
        case 10: *(long double *)p = creall(z); return 1;
        }
        return 0;
    case CAF_BT_COMPLEX:
        switch (kind) {
        case 4: *(float _Complex *)p = (float _Complex)z; return 1;
        case 8: *(double _Complex *)p = (double _Complex)z; return 1;
        case 10: *(long double _Complex *)p = z; return 1;
        }
        return 0;
    }
    return 0;
}

elem_type_t caf_elem_type_of(const caf_desc_t *d, int kind)
{
    return (elem_type_t){.type = d->dtype.type, .kind = kind, .size = caf_desc_elem(d)};
}

static int same_representation(const elem_type_t *a, const elem_type_t *b)
{
    return a->type == b->type && a->kind == b->kind && a->size == b->size;
}

/* One element from src's representation into dst's; 0 when the pair is not supported. */
static int convert_elem(void *dst, const elem_type_t *dt, const void *src, const elem_type_t *st)
{
    if (same_representation(dt, st)) {
        memcpy(dst, src, dt->size);
        return 1;
    }
    if (dt->type == CAF_BT_CHARACTER && st->type == CAF_BT_CHARACTER && dt->kind == st->kind) {
        size_t n = dt->size < st->size ? dt->size : st->size;
        memcpy(dst, src, n);
        if (dt->kind == 1) {
            memset((char *)dst + n, ' ', dt->size - n);
        } else {
            uint32_t blank = ' ';
            for (size_t k = n; k + 4 <= dt->size; k += 4)
                memcpy((char *)dst + k, &blank, 4);
        }
        return 1;
    }
    if (dt->type == st->type && dt->type != CAF_BT_INTEGER && dt->type != CAF_BT_LOGICAL &&
        dt->type != CAF_BT_REAL && dt->type != CAF_BT_COMPLEX)
        return 0; /* derived types of different size: nothing sane to do */
    value_t v;
    return load_value(src, st->type, st->kind, &v) && store_value(dst, dt->type, dt->kind, &v);
}

/* Fill packed[count] (dst representation) from the local descriptor `src`, converting and
 * broadcasting a scalar.  Returns 0 for an unsupported conversion. */
static int pack_converted(void *packed, const elem_type_t *dt, size_t count, const caf_desc_t *src,
                          const elem_type_t *st)
{
    caf_section_t s;
    caf_section_of(src, &s);
    walker_t w;
    walker_init(&w, &s);
    for (size_t i = 0; i < count; i++) {
        const char *sp = (const char *)src->base_addr + (s.rank == 0 ? 0 : w.off);
        if (!convert_elem((char *)packed + i * dt->size, dt, sp, st))
            return 0;
        if (s.rank > 0)
            walker_next(&w);
    }
    return 1;
}

/* Scatter packed[count] (src representation) into local descriptor dst, converting; a packed
 * scalar (count 1) fills every element of dst. */
static int unpack_converted(const caf_desc_t *dst, const elem_type_t *dt, const void *packed,
                            size_t count, const elem_type_t *st)
{
    caf_section_t s;
    caf_section_of(dst, &s);
    walker_t w;
    walker_init(&w, &s);
    for (size_t i = 0; i < s.count; i++, walker_next(&w))
        if (!convert_elem((char *)dst->base_addr + w.off, dt, (const char *)packed +
                          (count == 1 ? 0 : i) * st->size, st))
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- entry points */

void _gfortran_caf_send(caf_token_t *token, size_t offset, int image_index, caf_desc_t *dest,
                        caf_vector_t *dst_vector, caf_desc_t *src, int dst_kind, int src_kind,
                        bool may_require_tmp, int *stat);
void _gfortran_caf_get(caf_token_t *token, size_t offset, int image_index, caf_desc_t *src,
                       caf_vector_t *src_vector, caf_desc_t *dest, int src_kind, int dst_kind,
                       bool may_require_tmp, int *stat);
void _gfortran_caf_sendget(caf_token_t *dst_token, size_t dst_offset, int dst_image_index,
                           caf_desc_t *dest, caf_vector_t *dst_vector, caf_token_t *src_token,
                           size_t src_offset, int src_image_index, caf_desc_t *src,
                           caf_vector_t *src_vector, int dst_kind, int src_kind,
                           bool may_require_tmp, int *stat);

int caf_check_shapes(const char *entry, const caf_section_t *to, const caf_section_t *from,
                        int *stat)
{
    if (from->rank == 0 || from->count == to->count)
        return 1;
    caf_fail(entry, stat, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
             "shapes differ: %zu elements to %zu", from->count, to->count);
    return 0;
}

int caf_valid_token(const char *entry, caf_token_t *t, int *stat)
{
    if (t != NULL && t->win != NULL)
        return 1;
    caf_fail(entry, stat, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_WIN, "coarray not allocated");
    return 0;
}

/* Put local descriptor `src` (any representation) into remote section `rs` of dst representation. */
int caf_send_desc(const char *entry, caf_token_t *t, int target, size_t offset,
                     const caf_section_t *rs, const elem_type_t *dt, caf_desc_t *src,
                     const elem_type_t *st, bool may_require_tmp, int *stat)
{
    caf_section_t ls;
    caf_section_of(src, &ls);
    if (!caf_check_shapes(entry, rs, &ls, stat))
        return CAF_REPORTED;
    /* Source and destination can only overlap when the destination image is this one. */
    int overlap = may_require_tmp && target == caf_me();
    if (same_representation(dt, st) && (ls.rank > 0 || rs->rank == 0) && !overlap)
        return caf_transfer(t, 1, src->base_addr, &ls, target, (ptrdiff_t)offset, rs);
    void *tmp = malloc(rs->count * dt->size);
    if (tmp == NULL)
        return RMX_ERR_NOMEM;
    int rc = RMX_OK;
    if (!pack_converted(tmp, dt, rs->count, src, st)) {
        caf_unsupported(entry, stat, NULL, 0, "this type/kind conversion");
        rc = CAF_REPORTED;
    } else {
        caf_section_packed(&ls, dt->size, rs->count);
        rc = caf_transfer(t, 1, tmp, &ls, target, (ptrdiff_t)offset, rs);
    }
    free(tmp); /* rmx_put: the source is reusable on return */
    return rc;
}

void _gfortran_caf_send(caf_token_t *token, size_t offset, int image_index, caf_desc_t *dest,
                        caf_vector_t *dst_vector, caf_desc_t *src, int dst_kind, int src_kind,
                        bool may_require_tmp, int *stat)
{
    static const char entry[] = "_gfortran_caf_send";
    if (dst_vector != NULL) {
        caf_unsupported(entry, stat, NULL, 0, "vector subscripts on a coindexed object");
        return;
    }
    int target = caf_target(entry, image_index, stat, NULL, 0);
    if (target < 0 || !caf_valid_token(entry, token, stat))
        return;
    caf_section_t rs;
    caf_section_of(dest, &rs);
    elem_type_t dt = caf_elem_type_of(dest, dst_kind), st = caf_elem_type_of(src, src_kind);
    int rc = caf_send_desc(entry, token, target, offset, &rs, &dt, src, &st, may_require_tmp, stat);
    if (rc != CAF_REPORTED)
        caf_check(entry, rc, stat, NULL, 0);
}

/* Get remote section `rs` (src representation) into local descriptor dest. */
int caf_get_desc(const char *entry, caf_token_t *t, int target, ptrdiff_t disp,
                    const caf_section_t *rs, const elem_type_t *st, caf_desc_t *dest,
                    const elem_type_t *dt, bool may_require_tmp, int *stat)
{
    caf_section_t ls;
    caf_section_of(dest, &ls);
    if (!caf_check_shapes(entry, &ls, rs, stat))
        return CAF_REPORTED;
    int overlap = may_require_tmp && target == caf_me();
    if (same_representation(dt, st) && (rs->rank > 0 || ls.rank == 0) && !overlap)
        return caf_transfer(t, 0, dest->base_addr, &ls, target, disp, rs);
    void *tmp = malloc(rs->count * st->size + 1);
    if (tmp == NULL)
        return RMX_ERR_NOMEM;
    caf_section_t packed;
    caf_section_packed(&packed, st->size, rs->count);
    int rc = caf_transfer(t, 0, tmp, &packed, target, disp, rs);
    if (rc == RMX_OK && !unpack_converted(dest, dt, tmp, rs->count, st)) {
        caf_unsupported(entry, stat, NULL, 0, "this type/kind conversion");
        rc = CAF_REPORTED;
    }
    free(tmp);
    return rc;
}

void _gfortran_caf_get(caf_token_t *token, size_t offset, int image_index, caf_desc_t *src,
                       caf_vector_t *src_vector, caf_desc_t *dest, int src_kind, int dst_kind,
                       bool may_require_tmp, int *stat)
{
    static const char entry[] = "_gfortran_caf_get";
    if (src_vector != NULL) {
        caf_unsupported(entry, stat, NULL, 0, "vector subscripts on a coindexed object");
        return;
    }
    int target = caf_target(entry, image_index, stat, NULL, 0);
    if (target < 0 || !caf_valid_token(entry, token, stat))
        return;
    caf_section_t rs;
    caf_section_of(src, &rs);
    elem_type_t st = caf_elem_type_of(src, src_kind), dt = caf_elem_type_of(dest, dst_kind);
    int rc = caf_get_desc(entry, token, target, (ptrdiff_t)offset, &rs, &st, dest, &dt,
                      may_require_tmp, stat);
    if (rc != CAF_REPORTED)
        caf_check(entry, rc, stat, NULL, 0);
}

void _gfortran_caf_sendget(caf_token_t *dst_token, size_t dst_offset, int dst_image_index,
                           caf_desc_t *dest, caf_vector_t *dst_vector, caf_token_t *src_token,
                           size_t src_offset, int src_image_index, caf_desc_t *src,
                           caf_vector_t *src_vector, int dst_kind, int src_kind,
                           bool may_require_tmp, int *stat)
{
    static const char entry[] = "_gfortran_caf_sendget";
    (void)may_require_tmp; /* the data always passes through a temporary here */
    if (dst_vector != NULL || src_vector != NULL) {
        caf_unsupported(entry, stat, NULL, 0, "vector subscripts on a coindexed object");
        return;
    }
    int dtarget = caf_target(entry, dst_image_index, stat, NULL, 0);
    if (dtarget < 0)
        return;
    int starget = caf_target(entry, src_image_index, stat, NULL, 0);
    if (starget < 0 || !caf_valid_token(entry, dst_token, stat) ||
        !caf_valid_token(entry, src_token, stat))
        return;
    caf_section_t rs_src, rs_dst;
    caf_section_of(src, &rs_src);
    caf_section_of(dest, &rs_dst);
    if (!caf_check_shapes(entry, &rs_dst, &rs_src, stat))
        return;
    elem_type_t st = caf_elem_type_of(src, src_kind), dt = caf_elem_type_of(dest, dst_kind);
    /* Get the source section packed into a temporary described like a local array, then send it. */
    size_t bytes = rs_src.count * st.size;
    void *tmp = malloc(bytes > 0 ? bytes : 1);
    caf_desc_t *tdesc = calloc(1, sizeof(caf_desc_t) + sizeof(caf_dim_t));
    if (tmp == NULL || tdesc == NULL) {
        free(tmp);
        free(tdesc);
        caf_check(entry, RMX_ERR_NOMEM, stat, NULL, 0);
        return;
    }
    caf_section_t packed;
    caf_section_packed(&packed, st.size, rs_src.count);
    int rc = caf_transfer(src_token, 0, tmp, &packed, starget, (ptrdiff_t)src_offset, &rs_src);
    if (rc == RMX_OK) {
        tdesc->base_addr = tmp;
        tdesc->dtype = src->dtype;
        tdesc->dtype.rank = rs_src.rank > 0 ? 1 : 0;
        tdesc->span = (ptrdiff_t)st.size;
        tdesc->dim[0] = (caf_dim_t){.stride = 1, .lbound = 1, .ubound = (ptrdiff_t)rs_src.count};
        rc = caf_send_desc(entry, dst_token, dtarget, dst_offset, &rs_dst, &dt, tdesc, &st, 0, stat);
    }
    free(tmp);
    free(tdesc);
    if (rc != CAF_REPORTED)
        caf_check(entry, rc, stat, NULL, 0);
}
