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
 * go through a packed temporary on this image; only the local side is ever copied.  Vector
 * subscripts (caf_vector_t) list the remote elements instead of the descriptor: they go through
 * a packed temporary too, one rmx operation per run of adjacent elements.
 *
 * A transfer to or from this image itself is in program order (Fortran requires it of
 * `a(i)[this_image()] = x`): the engine copies it at once (rmx.h "Self").
 */
#include <stdio.h>
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
/* Intrinsic assignment between numeric types and kinds, as gfortran does it in one image: integer
 * and logical kinds 1, 2, 4, 8, 16; real and complex kinds 4, 8, 10 (x87 extended, 16 bytes of
 * storage) and 16 (IEEE binary128, __float128 on x86_64).  A value goes through the widest type of
 * its class: __int128 for integers, __float128 for reals (every float, double and long double is
 * exact in it, so a real is rounded once, to the destination kind).  Real to integer truncates
 * toward zero (INT); complex to real or integer takes the real part; logical takes any nonzero
 * as .true. and stores 1. */
typedef struct value {
    int is_int;
    __int128 i;
    __float128 re, im; /* reals and complexes (im 0 for reals) */
} value_t;

/* Elements may sit at any byte offset of a derived type or a packed buffer: copy, never cast. */
#define LOAD(T, p, out) do { T v_; memcpy(&v_, (p), sizeof(T)); *(out) = v_; } while (0)
#define STORE(T, p, x) do { T v_ = (T)(x); memcpy((p), &v_, sizeof(T)); } while (0)

static int load_int(const void *p, int kind, __int128 *i)
{
    switch (kind) {
    case 1: LOAD(int8_t, p, i); return 1;
    case 2: LOAD(int16_t, p, i); return 1;
    case 4: LOAD(int32_t, p, i); return 1;
    case 8: LOAD(int64_t, p, i); return 1;
    case 16: LOAD(__int128, p, i); return 1;
    }
    return 0;
}

/* One real of the given kind at p (p + the real's storage size: the imaginary part). */
static int load_real(const void *p, int kind, __float128 *x)
{
    switch (kind) {
    case 4: LOAD(float, p, x); return 1;
    case 8: LOAD(double, p, x); return 1;
    case 10: LOAD(long double, p, x); return 1;
    case 16: LOAD(__float128, p, x); return 1;
    }
    return 0;
}

static int store_real(void *p, int kind, __float128 x)
{
    switch (kind) {
    case 4: STORE(float, p, x); return 1;
    case 8: STORE(double, p, x); return 1;
    case 10: STORE(long double, p, x); return 1;
    case 16: STORE(__float128, p, x); return 1;
    }
    return 0;
}

/* An integer into a real kind, rounded once (through __float128 an __int128 beyond 2^113 would be
 * rounded twice). */
static int store_real_int(void *p, int kind, __int128 i)
{
    switch (kind) {
    case 4: STORE(float, p, i); return 1;
    case 8: STORE(double, p, i); return 1;
    case 10: STORE(long double, p, i); return 1;
    case 16: STORE(__float128, p, i); return 1;
    }
    return 0;
}

/* Bytes of one real part of a complex of this kind (kind 10 is padded to 16). */
static size_t real_part_size(int kind)
{
    return kind == 10 ? sizeof(long double) : (size_t)kind;
}

static int load_value(const void *p, int type, int kind, value_t *v)
{
    memset(v, 0, sizeof(*v));
    switch (type) {
    case CAF_BT_INTEGER:
    case CAF_BT_LOGICAL:
        v->is_int = 1;
        return load_int(p, kind, &v->i);
    case CAF_BT_REAL:
        return load_real(p, kind, &v->re);
    case CAF_BT_COMPLEX:
        return load_real(p, kind, &v->re) &&
               load_real((const char *)p + real_part_size(kind), kind, &v->im);
    }
    return 0;
}

static int store_int(void *p, int kind, __int128 i)
{
    switch (kind) {
    case 1: STORE(int8_t, p, i); return 1;
    case 2: STORE(int16_t, p, i); return 1;
    case 4: STORE(int32_t, p, i); return 1;
    case 8: STORE(int64_t, p, i); return 1;
    case 16: STORE(__int128, p, i); return 1;
    }
    return 0;
}

static int store_value(void *p, int type, int kind, const value_t *v)
{
    switch (type) {
    case CAF_BT_LOGICAL: /* no logical = real in Fortran */
        return v->is_int && store_int(p, kind, v->i != 0);
    case CAF_BT_INTEGER:
        return store_int(p, kind, v->is_int ? v->i : (__int128)v->re);
    case CAF_BT_REAL:
        return v->is_int ? store_real_int(p, kind, v->i) : store_real(p, kind, v->re);
    case CAF_BT_COMPLEX: {
        char *im = (char *)p + real_part_size(kind);
        if (v->is_int)
            return store_real_int(p, kind, v->i) && store_real(im, kind, 0);
        return store_real(p, kind, v->re) && store_real(im, kind, v->im);
    }
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

/* Character assignment: the first min(lengths) characters, then blanks.  Between kinds, a kind-1
 * character becomes the kind-4 character of the same code, and a kind-4 character beyond 255
 * becomes '?' (gfortran's libcaf single.c and OpenCoarrays do the same). */
static int convert_char(void *dst, const elem_type_t *dt, const void *src, const elem_type_t *st)
{
    if ((dt->kind != 1 && dt->kind != 4) || (st->kind != 1 && st->kind != 4))
        return 0;
    size_t dlen = dt->size / (size_t)dt->kind, slen = st->size / (size_t)st->kind;
    size_t n = dlen < slen ? dlen : slen;
    if (dt->kind == st->kind) {
        memcpy(dst, src, n * (size_t)dt->kind);
    } else if (dt->kind == 4) {
        for (size_t k = 0; k < n; k++)
            STORE(uint32_t, (char *)dst + 4 * k, ((const unsigned char *)src)[k]);
    } else {
        for (size_t k = 0; k < n; k++) {
            uint32_t c;
            LOAD(uint32_t, (const char *)src + 4 * k, &c);
            ((unsigned char *)dst)[k] = c > 255 ? '?' : (unsigned char)c;
        }
    }
    if (dt->kind == 1)
        memset((char *)dst + n, ' ', dlen - n);
    else
        for (size_t k = n; k < dlen; k++)
            STORE(uint32_t, (char *)dst + 4 * k, ' ');
    return 1;
}

/* One element from src's representation into dst's; 0 when the pair is not supported. */
static int convert_elem(void *dst, const elem_type_t *dt, const void *src, const elem_type_t *st)
{
    if (same_representation(dt, st)) {
        memcpy(dst, src, dt->size);
        return 1;
    }
    if (dt->type == CAF_BT_CHARACTER || st->type == CAF_BT_CHARACTER)
        return dt->type == st->type && convert_char(dst, dt, src, st);
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

/* ---------------------------------------------------------------- vector subscripts */

/* The remote elements a vector-subscripted reference names: per dimension the byte offsets of its
 * subscripts from the array's first element; element order runs the first dimension fastest.
 * The first dimension's subscripts are cut into runs of adjacent elements once, and each run of
 * each combination of the other dimensions is one rmx operation. */
typedef struct vsec {
    int rank;
    size_t elem, count;
    size_t want;                /* the other side's element count (SIZE_MAX: any) */
    size_t n[CAF_MAX_DIMS];
    ptrdiff_t *off[CAF_MAX_DIMS];
    size_t nruns;
    ptrdiff_t *run_off;         /* first element of each run of dimension 0 */
    size_t *run_len;            /* its elements */
    void *mem;                  /* one allocation behind off, run_off, run_len */
} vsec_t;

#define CAF_VECTOR_MAX ((size_t)1 << 40) /* elements: more is a garbled reference */
/* vsec_of's answers that vsec_refused turns into an rmx code or a message with numbers */
static const char vsec_nomem[] = "no memory", vsec_mismatch[] = "counts differ";

static int vector_index(const struct caf_vector *v, size_t k, ptrdiff_t *idx)
{
    const char *p = v->u.v.vector;
    switch (v->u.v.kind) {
    case 1: { int8_t x; LOAD(int8_t, p + k, &x); *idx = x; return 1; }
    case 2: { int16_t x; LOAD(int16_t, p + 2 * k, &x); *idx = x; return 1; }
    case 4: { int32_t x; LOAD(int32_t, p + 4 * k, &x); *idx = x; return 1; }
    case 8: { int64_t x; LOAD(int64_t, p + 8 * k, &x); *idx = x; return 1; }
    case 16: { __int128 x; LOAD(__int128, p + 16 * k, &x); *idx = (ptrdiff_t)x; return 1; }
    }
    return 0;
}

static void vsec_free(vsec_t *v)
{
    free(v->mem);
    v->mem = NULL;
}

/* The shape of desc + vec (rank, elem, n, count); NULL, or why not (a message for caf_fail). */
static const char *vsec_shape(const caf_desc_t *d, const struct caf_vector *vec, vsec_t *v)
{
    memset(v, 0, sizeof(*v));
    v->rank = caf_desc_rank(d);
    v->elem = caf_desc_elem(d);
    if (v->rank < 1 || v->rank > CAF_MAX_DIMS)
        return "a vector subscript on a reference of no array rank";
    /* A component of a derived-type coarray (span: the type's size, not the component's):
     * gfortran 12 points such a reference at the array's first element, dropping the
     * component's offset (p(v)[i]%x reads p(v)%<first component>), so it cannot be served. */
    if (d->span > 0 && (size_t)d->span != v->elem)
        return "a derived-type component through a vector subscript (gfortran 12 passes the "
               "reference without the component's offset)";
    v->count = 1;
    for (int j = 0; j < v->rank; j++) {
        if (vec[j].nvec == 0 && vec[j].u.triplet.stride == 0)
            return "a zero stride (which is also how an empty vector subscript may look: gfortran "
                   "12 passes it as a triplet made of the vector's pointer)";
        v->n[j] = vec[j].nvec > 0 ? vec[j].nvec
                                  : caf_triplet_len(vec[j].u.triplet.lower_bound,
                                                vec[j].u.triplet.upper_bound,
                                                vec[j].u.triplet.stride);
        /* An element count no memory could hold is a reference gfortran passed wrongly (an
         * empty vector subscript has nvec 0 too, and its vector pointer read as a triplet);
         * also keeps the sizes below from wrapping. */
        if (v->n[j] > CAF_VECTOR_MAX || (v->n[j] > 0 && v->count > CAF_VECTOR_MAX / v->n[j]))
            return "a vector-subscripted reference of more than 2^40 elements (an empty vector "
                   "subscript, which gfortran 12 cannot tell from a triplet, reads as one)";
        v->count *= v->n[j];
    }
    return NULL;
}

/* The element offsets of desc + vec, after checking that they are `want` elements (SIZE_MAX:
 * any, e.g. a scalar broadcast) before anything is allocated; NULL, or why not. */
static const char *vsec_of(const caf_desc_t *d, const struct caf_vector *vec, size_t want,
                           vsec_t *v)
{
    const char *why = vsec_shape(d, vec, v);
    if (why != NULL)
        return why;
    v->want = want;
    if (want != SIZE_MAX && want != v->count)
        return vsec_mismatch;
    ptrdiff_t span = d->span > 0 ? d->span : (ptrdiff_t)v->elem;
    size_t total = 0;
    for (int j = 0; j < v->rank; j++)
        total += v->n[j];
    /* offsets of every dimension, then run starts and lengths of dimension 0 */
    v->mem = malloc(total * sizeof(ptrdiff_t) + v->n[0] * (sizeof(ptrdiff_t) + sizeof(size_t)) + 1);
    if (v->mem == NULL)
        return vsec_nomem;
    ptrdiff_t *at = v->mem;
    for (int j = 0; j < v->rank; j++) {
        v->off[j] = at;
        ptrdiff_t step = d->dim[j].stride * span, lb = d->dim[j].lbound;
        for (size_t k = 0; k < v->n[j]; k++) {
            ptrdiff_t idx;
            if (vec[j].nvec == 0)
                idx = vec[j].u.triplet.lower_bound + (ptrdiff_t)k * vec[j].u.triplet.stride;
            else if (!vector_index(&vec[j], k, &idx))
                return "a vector subscript of an unknown integer kind";
            at[k] = (idx - lb) * step;
        }
        at += v->n[j];
    }
    v->run_off = at;
    v->run_len = (size_t *)(at + v->n[0]);
    for (size_t k = 0; k < v->n[0]; k++) {
        if (v->nruns > 0) {
            size_t r = v->nruns - 1;
            if (v->off[0][k] == v->run_off[r] + (ptrdiff_t)(v->run_len[r] * v->elem)) {
                v->run_len[r]++;
                continue;
            }
        }
        v->run_off[v->nruns] = v->off[0][k];
        v->run_len[v->nruns++] = 1;
    }
    return NULL;
}

/* One pending remote run of a vector transfer: runs that turn out adjacent in the remote window
 * (the next column of m(1:n, [5, 6])) are merged before they are issued; the packed side is
 * always adjacent, since it is filled in element order. */
typedef struct vrun {
    caf_token_t *t;
    int put, target;
    char *packed;
    ptrdiff_t rd;       /* remote displacement of the pending run */
    size_t at, len;     /* its packed offset and bytes; len 0: none */
} vrun_t;

static int vrun_flush(vrun_t *r)
{
    if (r->len == 0)
        return RMX_OK;
    if (r->rd < 0)
        return RMX_ERR_RANGE;
    int rc = r->put ? rmx_put(r->t->win, r->packed + r->at, r->len, r->target, (size_t)r->rd)
                    : rmx_get(r->t->win, r->packed + r->at, r->len, r->target, (size_t)r->rd);
    r->at += r->len;
    r->len = 0;
    return rc;
}

static int vrun_add(vrun_t *r, ptrdiff_t rd, size_t len)
{
    if (r->len > 0 && rd == r->rd + (ptrdiff_t)r->len) {
        r->len += len;
        return RMX_OK;
    }
    int rc = vrun_flush(r);
    r->rd = rd;
    r->len = len;
    return rc;
}

/* Move the elements between packed[count] (element order) and the remote elements of v, whose
 * array starts at byte `disp` of target's copy.  One rmx_put / rmx_get per run of remote bytes
 * that are adjacent in element order. */
static int vsec_transfer(caf_token_t *t, int put, char *packed, int target, ptrdiff_t disp,
                         const vsec_t *v)
{
    if (v->count == 0)
        return RMX_OK;
    disp += (ptrdiff_t)caf_token_disp(t, target);
    vrun_t run = {.t = t, .put = put, .target = target, .packed = packed};
    size_t idx[CAF_MAX_DIMS] = {0};
    int rc = RMX_OK;
    for (;;) {
        ptrdiff_t outer = disp;
        for (int j = 1; j < v->rank; j++)
            outer += v->off[j][idx[j]];
        for (size_t r = 0; r < v->nruns && rc == RMX_OK; r++)
            rc = vrun_add(&run, outer + v->run_off[r], v->run_len[r] * v->elem);
        int j = 1;
        while (j < v->rank && ++idx[j] == v->n[j])
            idx[j++] = 0;
        if (j == v->rank || rc != RMX_OK)
            return rc != RMX_OK ? rc : vrun_flush(&run);
    }
}

/* What the other side of a vector-subscripted reference must hold: its element count, or
 * SIZE_MAX for a scalar (broadcast). */
static size_t other_side_count(const caf_desc_t *local)
{
    caf_section_t ls;
    caf_section_of(local, &ls);
    return ls.rank == 0 ? SIZE_MAX : ls.count;
}

/* gfortran 12 passes a vector subscript that is itself a strided section (a(v(1:n:2))[i]) with
 * nvec = its extent / 2 and the index array's base, as if contiguous, and an empty vector
 * subscript with nvec 0, which reads as a triplet made of the vector's pointer: either way the
 * counts no longer match, and the reference is refused rather than read wrong. */
static int vsec_refused(const char *entry, const char *why, const vsec_t *v, int *stat)
{
    if (why == vsec_nomem)
        return RMX_ERR_NOMEM;
    char msg[320];
    if (why == vsec_mismatch) {
        snprintf(msg, sizeof(msg), "a vector subscript naming %zu elements for %zu (gfortran 12 "
                 "passes an empty vector subscript, or one that is a strided section v(1:n:2), "
                 "so: use a contiguous, non-empty index array)", v->count, v->want);
        why = msg;
    }
    caf_unsupported(entry, stat, NULL, 0, why);
    return CAF_REPORTED;
}

/* x(v...)[image] = src: convert src into a packed temporary, then one put per run. */
int caf_send_vector(const char *entry, caf_token_t *t, int target, size_t offset,
                       const caf_desc_t *dest, const struct caf_vector *vec,
                       const elem_type_t *dt, const caf_desc_t *src, const elem_type_t *st,
                       int *stat)
{
    vsec_t v;
    const char *why = vsec_of(dest, vec, other_side_count(src), &v);
    int rc = RMX_OK;
    char *tmp = NULL;
    if (why != NULL) {
        rc = vsec_refused(entry, why, &v, stat);
    } else if ((tmp = malloc(v.count * dt->size + 1)) == NULL) {
        rc = RMX_ERR_NOMEM;
    } else if (!pack_converted(tmp, dt, v.count, src, st)) {
        caf_unsupported(entry, stat, NULL, 0, "this type/kind conversion");
        rc = CAF_REPORTED;
    } else {
        rc = vsec_transfer(t, 1, tmp, target, (ptrdiff_t)offset, &v);
    }
    free(tmp);
    vsec_free(&v);
    return rc;
}

/* dest = x(v...)[image]: one get per run into a packed temporary, then convert into dest.  With
 * dest NULL, the packed elements are handed back in *packed (source representation) instead, and
 * *count their number (which must be `want`): the first half of a sendget. */
int caf_get_vector(const char *entry, caf_token_t *t, int target, size_t offset,
                      const caf_desc_t *src, const struct caf_vector *vec, const elem_type_t *st,
                      const caf_desc_t *dest, const elem_type_t *dt, size_t want, char **packed,
                      size_t *count, int *stat)
{
    vsec_t v;
    const char *why = vsec_of(src, vec, dest != NULL ? other_side_count(dest) : want, &v);
    int rc = RMX_OK;
    char *tmp = NULL;
    if (why != NULL) {
        rc = vsec_refused(entry, why, &v, stat);
    } else if ((tmp = malloc(v.count * st->size + 1)) == NULL) {
        rc = RMX_ERR_NOMEM;
    } else if ((rc = vsec_transfer(t, 0, tmp, target, (ptrdiff_t)offset, &v)) == RMX_OK &&
               dest != NULL && !unpack_converted(dest, dt, tmp, v.count, st)) {
        caf_unsupported(entry, stat, NULL, 0, "this type/kind conversion");
        rc = CAF_REPORTED;
    }
    if (dest == NULL && rc == RMX_OK) {
        *packed = tmp;
        *count = v.count;
    } else {
        free(tmp);
    }
    vsec_free(&v);
    return rc;
}

/* ---------------------------------------------------------------- entry points */

/* gfortran 12 describes a character coarray array read into a character array whose length is
 * known only at run time (`character(len=n) :: c(3); c = x(:)[i]`) with elem_len 0 and the true
 * element size nowhere (span is the stride, which for a component is the whole derived type's
 * size).  Read as length 0, every element would silently become blanks: refused instead. */
static int remote_length_known(const char *entry, const caf_desc_t *d, int *stat)
{
    if (d->dtype.type != CAF_BT_CHARACTER || caf_desc_elem(d) != 0 || caf_desc_rank(d) == 0 ||
        d->span <= 0)
        return 1;
    caf_unsupported(entry, stat, NULL, 0, "a character coarray whose length gfortran passes as 0 "
                    "(gfortran 12 does so when the other side's length is known only at run "
                    "time: give it a constant length)");
    return 0;
}


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
    int target = caf_target(entry, image_index, stat, NULL, 0);
    if (target < 0 || !caf_valid_token(entry, token, stat) ||
        !remote_length_known(entry, dest, stat))
        return;
    elem_type_t dt = caf_elem_type_of(dest, dst_kind), st = caf_elem_type_of(src, src_kind);
    int rc;
    if (dst_vector != NULL) {
        rc = caf_send_vector(entry, token, target, offset, dest, dst_vector, &dt, src, &st, stat);
    } else {
        caf_section_t rs;
        caf_section_of(dest, &rs);
        rc = caf_send_desc(entry, token, target, offset, &rs, &dt, src, &st, may_require_tmp,
                           stat);
    }
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

/* gfortran 12 describes a substring of another image's character coarray (x[i](3:7)) by the
 * substring's offset and the whole variable's length.  Characters past what the destination
 * keeps are never used (assignment truncates), and for a scalar or the last element they lie past
 * the coarray's end: read min(source, destination) characters of each element, and of a scalar
 * no more than the coarray holds from the offset (`avail` bytes).  (A destination longer than
 * the substring then gets characters after it instead of blanks: gfortran passes nothing that
 * would tell; OpenCoarrays reads the same.) */
static void narrow_characters(elem_type_t *st, caf_section_t *rs, const elem_type_t *dt,
                              size_t avail)
{
    if (st->type != CAF_BT_CHARACTER || dt->type != CAF_BT_CHARACTER || st->kind <= 0 ||
        dt->kind <= 0)
        return;
    size_t k = (size_t)st->kind, n = st->size / k, dlen = dt->size / (size_t)dt->kind;
    if (dlen < n)
        n = dlen;
    if (rs->rank == 0 && n * k > avail)
        n = avail / k;
    if (n > 0)
        st->size = rs->elem = n * k; /* the elements' strides stay the variable's (span) */
}

void _gfortran_caf_get(caf_token_t *token, size_t offset, int image_index, caf_desc_t *src,
                       caf_vector_t *src_vector, caf_desc_t *dest, int src_kind, int dst_kind,
                       bool may_require_tmp, int *stat)
{
    static const char entry[] = "_gfortran_caf_get";
    int target = caf_target(entry, image_index, stat, NULL, 0);
    if (target < 0 || !caf_valid_token(entry, token, stat) ||
        !remote_length_known(entry, src, stat))
        return;
    elem_type_t st = caf_elem_type_of(src, src_kind), dt = caf_elem_type_of(dest, dst_kind);
    int rc;
    if (src_vector != NULL) {
        rc = caf_get_vector(entry, token, target, offset, src, src_vector, &st, dest, &dt, 0, NULL,
                        NULL, stat);
    } else {
        caf_section_t rs;
        caf_section_of(src, &rs);
        narrow_characters(&st, &rs, &dt, token->size > offset ? token->size - offset : 0);
        rc = caf_get_desc(entry, token, target, (ptrdiff_t)offset, &rs, &st, dest, &dt,
                          may_require_tmp, stat);
    }
    if (rc != CAF_REPORTED)
        caf_check(entry, rc, stat, NULL, 0);
}

/* The element count of a sendget's destination, for checking a vector-subscripted source against
 * before it is read (SIZE_MAX: not known here; the send checks it). */
static size_t sendget_dest_count(const caf_desc_t *dest, const struct caf_vector *dst_vector)
{
    vsec_t v;
    if (dst_vector == NULL)
        return other_side_count(dest);
    return vsec_shape(dest, dst_vector, &v) == NULL ? v.count : SIZE_MAX;
}

/* The source half of a sendget: the elements of src (with its vector subscripts, if any) on
 * image target, packed in element order into a new *packed of *count elements. */
static int sendget_fetch(const char *entry, caf_token_t *t, int target, size_t offset,
                         const caf_desc_t *src, const struct caf_vector *vec,
                         const elem_type_t *st, size_t want, char **packed, size_t *count,
                         int *stat)
{
    if (vec != NULL)
        return caf_get_vector(entry, t, target, offset, src, vec, st, NULL, NULL, want, packed, count,
                          stat);
    caf_section_t rs, ps;
    caf_section_of(src, &rs);
    char *tmp = malloc(rs.count * st->size + 1);
    if (tmp == NULL)
        return RMX_ERR_NOMEM;
    caf_section_packed(&ps, st->size, rs.count);
    int rc = caf_transfer(t, 0, tmp, &ps, target, (ptrdiff_t)offset, &rs);
    if (rc != RMX_OK) {
        free(tmp);
        return rc;
    }
    *packed = tmp;
    *count = rs.count;
    return RMX_OK;
}

void _gfortran_caf_sendget(caf_token_t *dst_token, size_t dst_offset, int dst_image_index,
                           caf_desc_t *dest, caf_vector_t *dst_vector, caf_token_t *src_token,
                           size_t src_offset, int src_image_index, caf_desc_t *src,
                           caf_vector_t *src_vector, int dst_kind, int src_kind,
                           bool may_require_tmp, int *stat)
{
    static const char entry[] = "_gfortran_caf_sendget";
    (void)may_require_tmp; /* the data always passes through a temporary here */
    int dtarget = caf_target(entry, dst_image_index, stat, NULL, 0);
    if (dtarget < 0)
        return;
    int starget = caf_target(entry, src_image_index, stat, NULL, 0);
    if (starget < 0 || !caf_valid_token(entry, dst_token, stat) ||
        !caf_valid_token(entry, src_token, stat) || !remote_length_known(entry, dest, stat) ||
        !remote_length_known(entry, src, stat))
        return;
    elem_type_t st = caf_elem_type_of(src, src_kind), dt = caf_elem_type_of(dest, dst_kind);
    /* Get the source packed into a temporary described like a local array, then send that. */
    char *tmp = NULL;
    size_t count = 0;
    int rc = sendget_fetch(entry, src_token, starget, src_offset, src, src_vector, &st,
                           sendget_dest_count(dest, dst_vector), &tmp, &count, stat);
    caf_desc_t *tdesc = NULL;
    if (rc == RMX_OK && (tdesc = calloc(1, sizeof(caf_desc_t) + sizeof(caf_dim_t))) == NULL)
        rc = RMX_ERR_NOMEM;
    if (rc == RMX_OK) {
        tdesc->base_addr = tmp;
        tdesc->dtype = src->dtype;
        tdesc->dtype.rank = src_vector != NULL || caf_desc_rank(src) > 0 ? 1 : 0;
        tdesc->span = (ptrdiff_t)st.size;
        tdesc->dim[0] = (caf_dim_t){.stride = 1, .lbound = 1, .ubound = (ptrdiff_t)count};
        if (dst_vector != NULL) {
            rc = caf_send_vector(entry, dst_token, dtarget, dst_offset, dest, dst_vector, &dt, tdesc,
                             &st, stat);
        } else {
            caf_section_t rs_dst;
            caf_section_of(dest, &rs_dst);
            rc = caf_send_desc(entry, dst_token, dtarget, dst_offset, &rs_dst, &dt, tdesc, &st, 0,
                               stat);
        }
    }
    free(tmp);
    free(tdesc);
    if (rc != CAF_REPORTED)
        caf_check(entry, rc, stat, NULL, 0);
}
