/*
 * caf_ref.c — the *_by_ref entry points: gfortran's reference chains (caf_reference_t of
 * libcaf.h: component, array and static-array references, one after the other) for coindexed
 * objects that plain descriptors cannot describe: `x = c(...)[i]` with x allocatable (reshaped to
 * the result), references through derived-type components (x[i]%comp(:)), and the registration
 * of allocatable components of derived-type coarrays.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "caf_internal.h"

/* gfortran's reference chain (libcaf.h caf_reference_t), for what *_by_ref can be asked. */
enum { CAF_REF_COMPONENT = 0, CAF_REF_ARRAY, CAF_REF_STATIC_ARRAY };
enum { ARR_NONE = 0, ARR_VECTOR, ARR_FULL, ARR_RANGE, ARR_SINGLE, ARR_OPEN_END, ARR_OPEN_START };

typedef struct caf_ref {
    struct caf_ref *next;
    int type;
    size_t item_size;
    union {
        struct {
            ptrdiff_t offset, caf_token_offset;
        } c;
        struct {
            unsigned char mode[CAF_MAX_DIMS];
            int static_array_type;
            union {
                struct {
                    ptrdiff_t start, end, stride;
                } s;
                struct {
                    void *vector;
                    size_t nvec;
                    int kind;
                } v;
            } dim[CAF_MAX_DIMS];
        } a;
    } u;
} caf_ref_t;

/* Where a reference chain leads on one image: the window (the coarray's, or the heap's once an
 * allocatable component was followed), the displacement of the designated object's first
 * element in the target's copy (without caf_token_disp), and the section it spans. */
typedef struct ref_walk {
    caf_token_t *tok;
    caf_token_t heap;        /* stands for the heap window once a component pointer is followed */
    ptrdiff_t disp;
    caf_section_t rs;
    const caf_desc_t *desc;  /* bounds for a following array reference (NULL: none known) */
    caf_desc_max_t rdesc;    /* the last component descriptor read */
    int static_type;         /* element type of a static array reference, or -1 */
    /* An array reference with vector subscripts (the chain's last): the array, its subscripts
     * in gfortran's caf_vector_t form, and the displacement of its first element. */
    int vector;
    caf_desc_max_t vdesc;
    struct caf_vector vvec[CAF_MAX_DIMS];
    ptrdiff_t vdisp;
    int unallocated;         /* the chain reached an unallocated allocatable component */
} ref_walk_t;

static size_t desc_bytes(int rank)
{
    return sizeof(caf_desc_t) + (size_t)rank * sizeof(caf_dim_t);
}

/* Read `len` bytes at displacement `disp` of the walk's current window on target. */
static int walk_read(ref_walk_t *w, int target, ptrdiff_t disp, void *buf, size_t len)
{
    if (disp < 0)
        return RMX_ERR_RANGE;
    return rmx_get(w->tok->win, buf, len, target,
                   (size_t)disp + caf_token_disp(w->tok, target));
}

/* Follow the allocatable (or pointer) component at w->disp: an array descriptor when an array
 * reference follows, else the data pointer of a scalar.  Its data lives in the target's heap. */
static int follow_component(ref_walk_t *w, int target, int array, const char **why)
{
    uintptr_t addr = 0;
    int rc;
    if (array) {
        caf_desc_t *d = caf_desc_of_max(&w->rdesc);
        rc = walk_read(w, target, w->disp, d, sizeof(caf_desc_t));
        int rank = d->dtype.rank;
        if (rc == RMX_OK && (rank < 0 || rank > CAF_MAX_DIMS))
            return RMX_ERR_ARG;
        if (rc == RMX_OK && rank > 0)
            rc = walk_read(w, target, w->disp, d, desc_bytes(rank));
        addr = (uintptr_t)d->base_addr;
        w->desc = d;
    } else {
        void *p = NULL;
        rc = walk_read(w, target, w->disp, &p, sizeof(p));
        addr = (uintptr_t)p;
        w->desc = NULL;
    }
    if (rc != RMX_OK)
        return rc;
    if (addr == 0) {
        w->unallocated = 1;
        return RMX_OK;
    }
    size_t disp = caf_heap_remote_disp(target, addr, 1);
    if (disp == (size_t)-1) {
        *why = "a component whose memory was not allocated by libcaf_rmx (a pointer component "
               "pointing outside the image's coarray heap)";
        return RMX_OK;
    }
    w->heap = (caf_token_t){.win = caf_heap_win(), .kind = CAF_REG_ALLOC_ALLOCATE_ONLY};
    w->tok = &w->heap;
    w->disp = (ptrdiff_t)disp;
    return RMX_OK;
}

/* Subscript j of an array reference through a descriptor, as the triplet start:end:stride in the
 * array's bounds lb:ub (FULL keeps its stride: gfortran passes a(::2) and a(::-1) as FULL).
 * NULL, or why not.  Vector subscripts are the caller's. */
static const char *dim_triplet(const caf_ref_t *ref, int j, ptrdiff_t lb, ptrdiff_t ub,
                               ptrdiff_t *start, ptrdiff_t *end, ptrdiff_t *stride)
{
    *start = ref->u.a.dim[j].s.start, *end = ref->u.a.dim[j].s.end;
    *stride = ref->u.a.dim[j].s.stride;
    switch (ref->u.a.mode[j]) {
    case ARR_FULL: *start = *stride < 0 ? ub : lb, *end = *stride < 0 ? lb : ub; break;
    case ARR_RANGE: break;
    case ARR_SINGLE: *end = *start, *stride = 1; break;
    case ARR_OPEN_END: *end = ub; break;
    case ARR_OPEN_START: *start = lb; break;
    default: return "an array reference of fewer subscripts than the array's rank";
    }
    return *stride == 0 ? "a zero stride" : NULL;
}

/* Subscript `mode` selected `count` elements `sm` bytes apart: a dimension of the result, unless
 * it was a single subscript. */
static const char *add_dim(ref_walk_t *w, unsigned char mode, size_t count, ptrdiff_t sm)
{
    if (mode != ARR_SINGLE) {
        if (w->rs.rank >= CAF_MAX_DIMS)
            return "more than 15 dimensions";
        w->rs.n[w->rs.rank] = count;
        w->rs.sm[w->rs.rank] = sm;
        w->rs.rank++;
    }
    w->rs.count *= count;
    return NULL;
}

/* An array reference with a vector subscript in some dimension: kept as caf_vector_t entries
 * (the form _gfortran_caf_get/send receive) for caf_get_vector / caf_send_vector, which read the
 * elements run by run.  w->rs gets the result's shape (for reallocating a destination). */
static const char *walk_vector(ref_walk_t *w, const caf_ref_t *ref, const caf_desc_t *d)
{
    int rank = caf_desc_rank(d);
    memcpy(&w->vdesc, d, sizeof(caf_desc_t) + (size_t)rank * sizeof(caf_dim_t));
    for (int j = 0; j < rank; j++) {
        struct caf_vector *v = &w->vvec[j];
        memset(v, 0, sizeof(*v));
        size_t count;
        const char *why;
        if (ref->u.a.mode[j] == ARR_VECTOR) {
            v->nvec = ref->u.a.dim[j].v.nvec;
            v->u.v.vector = ref->u.a.dim[j].v.vector;
            v->u.v.kind = ref->u.a.dim[j].v.kind;
            count = v->nvec;
            if (count == 0)
                return "an empty vector subscript";
        } else {
            ptrdiff_t start, end, stride;
            if ((why = dim_triplet(ref, j, d->dim[j].lbound, d->dim[j].ubound, &start, &end,
                                   &stride)) != NULL)
                return why;
            v->u.triplet.lower_bound = start;
            v->u.triplet.upper_bound = end;
            v->u.triplet.stride = stride;
            count = caf_triplet_len(start, end, stride);
        }
        /* sm not used: the elements go through caf_*_vector */
        if ((why = add_dim(w, ref->u.a.mode[j], count, 0)) != NULL)
            return why;
    }
    w->vector = 1;
    w->vdisp = w->disp;
    return NULL;
}

/* An array reference through descriptor d (Fortran subscripts, relative to its bounds). */
static const char *walk_array(ref_walk_t *w, const caf_ref_t *ref, const caf_desc_t *d)
{
    int rank = caf_desc_rank(d);
    for (int j = 0; j < rank; j++)
        if (ref->u.a.mode[j] == ARR_VECTOR)
            return walk_vector(w, ref, d);
    ptrdiff_t span = d->span > 0 ? d->span : (ptrdiff_t)caf_desc_elem(d);
    for (int j = 0; j < rank; j++) {
        ptrdiff_t lb = d->dim[j].lbound, ub = d->dim[j].ubound, start, end, stride;
        const char *why = dim_triplet(ref, j, lb, ub, &start, &end, &stride);
        if (why != NULL)
            return why;
        size_t count = caf_triplet_len(start, end, stride);
        if (count > 0 && (start < lb || start > ub ||
                          start + (ptrdiff_t)(count - 1) * stride > ub ||
                          start + (ptrdiff_t)(count - 1) * stride < lb))
            return "a subscript outside the array's bounds";
        w->disp += (start - lb) * d->dim[j].stride * span;
        if ((why = add_dim(w, ref->u.a.mode[j], count, stride * d->dim[j].stride * span)) != NULL)
            return why;
    }
    return NULL;
}

/* A reference into an array component of fixed shape: gfortran gives each subscript as an
 * element offset (index from 0 times the dimension's element stride), the stride likewise. */
static const char *walk_static_array(ref_walk_t *w, const caf_ref_t *ref)
{
    ptrdiff_t item = (ptrdiff_t)ref->item_size;
    for (int j = 0; j < CAF_MAX_DIMS && ref->u.a.mode[j] != ARR_NONE; j++) {
        ptrdiff_t start = ref->u.a.dim[j].s.start, end = ref->u.a.dim[j].s.end;
        ptrdiff_t stride = ref->u.a.dim[j].s.stride;
        size_t count = 1;
        switch (ref->u.a.mode[j]) {
        case ARR_FULL:
        case ARR_RANGE:
            if (stride == 0)
                return "a zero stride";
            count = caf_triplet_len(start, end, stride);
            break;
        case ARR_SINGLE: stride = 1; break; /* gfortran leaves it unset: garbage, unused */
        case ARR_VECTOR: return "a vector subscript on an array component of fixed shape";
        default: return "an open-ended reference to an array of fixed shape";
        }
        w->disp += start * item;
        const char *why = add_dim(w, ref->u.a.mode[j], count, stride * item);
        if (why != NULL)
            return why;
    }
    w->static_type = ref->u.a.static_array_type;
    return NULL;
}

/* Walk gfortran's reference chain on image `target` from coarray t.  Returns an rmx code; *why
 * is set (and the code RMX_OK) for a chain this library cannot serve; w->unallocated when it
 * ends at an unallocated component. */
static int walk_refs(caf_token_t *t, int target, const caf_ref_t *ref, ref_walk_t *w,
                     const char **why)
{
    memset(w, 0, sizeof(*w));
    w->tok = t;
    w->desc = t->desc;
    w->static_type = -1;
    w->rs.count = 1;
    *why = NULL;
    if (ref == NULL) {
        *why = "an empty reference chain";
        return RMX_OK;
    }
    for (; ref != NULL && *why == NULL && !w->unallocated; ref = ref->next) {
        if (w->vector) {
            *why = "a component of elements chosen by a vector subscript";
            break;
        }
        w->rs.elem = ref->item_size;
        switch (ref->type) {
        case CAF_REF_COMPONENT:
            w->disp += ref->u.c.offset;
            w->static_type = -1;
            if (ref->u.c.caf_token_offset > 0) {
                /* Each element of a section would have its own allocation. */
                if (w->rs.rank > 0) {
                    *why = "an allocatable component of the elements of an array section";
                    break;
                }
                int array = ref->next != NULL && ref->next->type == CAF_REF_ARRAY;
                int rc = follow_component(w, target, array, why);
                if (rc != RMX_OK)
                    return rc;
            } else {
                w->desc = NULL; /* a component of fixed shape: static array references follow */
            }
            break;
        case CAF_REF_ARRAY:
            if (w->desc == NULL)
                *why = "an array reference without the array's descriptor";
            else if (w->rs.rank > 0)
                *why = "two array sections in one reference";
            else
                *why = walk_array(w, ref, w->desc);
            break;
        case CAF_REF_STATIC_ARRAY:
            *why = walk_static_array(w, ref);
            break;
        default:
            *why = "an unknown reference type";
        }
    }
    return RMX_OK;
}

/* Give an allocatable destination the section's shape (bounds 1..n), reallocating if needed. */
static int reshape_destination(caf_desc_t *dst, const caf_section_t *rs)
{
    /* An unallocated destination's bounds and strides are whatever was on the stack: only an
     * allocated one has a shape to compare (UBSan caught the multiplication of garbage). */
    if (dst->base_addr != NULL) {
        caf_section_t ls;
        caf_section_of(dst, &ls);
        int same = ls.rank == rs->rank;
        for (int j = 0; same && j < rs->rank; j++)
            same = ls.n[j] == rs->n[j];
        if (same)
            return RMX_OK;
    }
    size_t elem = caf_desc_elem(dst);
    free(dst->base_addr);
    dst->base_addr = malloc(rs->count * elem + 1);
    if (dst->base_addr == NULL)
        return RMX_ERR_NOMEM;
    dst->dtype.rank = (signed char)rs->rank;
    dst->span = (ptrdiff_t)elem;
    ptrdiff_t stride = 1, offset = 0;
    for (int j = 0; j < rs->rank; j++) {
        dst->dim[j] = (caf_dim_t){.stride = stride, .lbound = 1, .ubound = (ptrdiff_t)rs->n[j]};
        offset -= stride;
        stride *= (ptrdiff_t)rs->n[j];
    }
    dst->offset = (size_t)offset;
    return RMX_OK;
}

void _gfortran_caf_get_by_ref(caf_token_t *token, int image_index, caf_desc_t *dst,
                              caf_ref_t *refs, int dst_kind, int src_kind, bool may_require_tmp,
                              bool dst_reallocatable, int *stat, int src_type);
void _gfortran_caf_send_by_ref(caf_token_t *token, int image_index, caf_desc_t *src,
                               caf_ref_t *refs, int dst_kind, int src_kind, bool may_require_tmp,
                               bool dst_reallocatable, int *stat, int dst_type);

/* gfortran 12 describes a deferred-length character component with length 0 in the reference
 * and, in an assignment like x[i]%str = 'a' // b, the source with length 0 as well: no length
 * is left to move. */
static const char no_length[] = "a deferred-length character component with no length on "
                                "either side (gfortran 12 passes none; assign from a variable "
                                "of declared length)";

/* Walk a chain for an entry point: the engine rank, or -1 once the failure is reported. */
static int walk_for(const char *entry, caf_token_t *token, int image_index, const caf_ref_t *refs,
                    ref_walk_t *w, int *stat)
{
    int target = caf_target(entry, image_index, stat, NULL, 0);
    if (target < 0 || !caf_valid_token(entry, token, stat))
        return -1;
    const char *why;
    int rc = walk_refs(token, target, refs, w, &why);
    if (rc != RMX_OK) {
        caf_check(entry, rc, stat, NULL, 0);
        return -1;
    }
    if (why != NULL) {
        caf_unsupported(entry, stat, NULL, 0, why);
        return -1;
    }
    if (w->unallocated) {
        caf_fail(entry, stat, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                 "allocatable component not allocated on image %d", image_index);
        return -1;
    }
    return target;
}

/* A deferred-length character component arrives with length 0: the local side's length is the
 * one to move.  0 (reported) when neither side has one. */
static int element_length_known(const char *entry, ref_walk_t *w, const caf_desc_t *local,
                                int *stat)
{
    if (w->rs.elem == 0)
        w->rs.elem = caf_desc_elem(local);
    if (w->rs.elem != 0)
        return 1;
    caf_unsupported(entry, stat, NULL, 0, no_length);
    return 0;
}

void _gfortran_caf_get_by_ref(caf_token_t *token, int image_index, caf_desc_t *dst,
                              caf_ref_t *refs, int dst_kind, int src_kind, bool may_require_tmp,
                              bool dst_reallocatable, int *stat, int src_type)
{
    static const char entry[] = "_gfortran_caf_get_by_ref";
    ref_walk_t w;
    int target = walk_for(entry, token, image_index, refs, &w, stat);
    if (target < 0)
        return;
    if (!element_length_known(entry, &w, dst, stat))
        return;
    int rc = dst_reallocatable ? reshape_destination(dst, &w.rs) : RMX_OK;
    elem_type_t st = {.type = w.static_type >= 0 ? w.static_type : src_type, .kind = src_kind,
                      .size = w.rs.elem};
    elem_type_t dt = caf_elem_type_of(dst, dst_kind);
    if (rc == RMX_OK && w.vector)
        rc = caf_get_vector(entry, w.tok, target, (size_t)w.vdisp, caf_desc_of_max(&w.vdesc),
                            w.vvec, &st, dst, &dt, 0, NULL, NULL, stat);
    else if (rc == RMX_OK)
        rc = caf_get_desc(entry, w.tok, target, w.disp, &w.rs, &st, dst, &dt, may_require_tmp,
                          stat);
    if (rc != CAF_REPORTED)
        caf_check(entry, rc, stat, NULL, 0);
}

void _gfortran_caf_send_by_ref(caf_token_t *token, int image_index, caf_desc_t *src,
                               caf_ref_t *refs, int dst_kind, int src_kind, bool may_require_tmp,
                               bool dst_reallocatable, int *stat, int dst_type)
{
    static const char entry[] = "_gfortran_caf_send_by_ref";
    /* Never reallocated here: a coindexed variable in an intrinsic assignment shall not be
     * allocatable with a different shape (F2018 10.2.1.2), and an unallocated component on
     * another image is an error reported by walk_for. */
    (void)dst_reallocatable;
    ref_walk_t w;
    int target = walk_for(entry, token, image_index, refs, &w, stat);
    if (target < 0)
        return;
    if (!element_length_known(entry, &w, src, stat))
        return;
    elem_type_t dt = {.type = w.static_type >= 0 ? w.static_type : dst_type, .kind = dst_kind,
                      .size = w.rs.elem};
    elem_type_t st = caf_elem_type_of(src, src_kind);
    int rc = w.vector ? caf_send_vector(entry, w.tok, target, (size_t)w.vdisp,
                                        caf_desc_of_max(&w.vdesc), w.vvec, &dt, src, &st, stat)
                      : caf_send_desc(entry, w.tok, target, (size_t)w.disp, &w.rs, &dt, src, &st,
                                      may_require_tmp, stat);
    if (rc != CAF_REPORTED)
        caf_check(entry, rc, stat, NULL, 0);
}

/* ---------------------------------------------------------------- component registration */
/* gfortran registers each allocatable component of a derived-type coarray twice: once when the
 * object is initialized (CAF_REG_ALLOC_REGISTER_ONLY: a token, no memory; gfortran keeps it in a
 * hidden field of the object), and at each ALLOCATE of the component (ALLOCATE_ONLY, on this
 * image alone).  The memory comes from this image's heap window, so other images reach it by
 * reading the component's descriptor and translating its address (follow_component). */

/* The component tokens this image made, by address: an open-addressing set (linear probing,
 * tombstones), since an array of derived type has a token per element and component.  A token
 * field gfortran 12 never initialized holds stack garbage: an allocatable component inside a
 * component that is not allocatable (x%in%arr) gets no REGISTER_ONLY at start-up, and the
 * object's initializer copies a stack temporary over the field.  Only a pointer found here, made
 * for that same field, is dereferenced. */
#define COMP_GONE ((caf_token_t *)1)
static caf_token_t **comp_set;
static unsigned comp_bits;     /* capacity 2^comp_bits, 0 while there is none */
static size_t comp_used;       /* live entries and tombstones */

static size_t comp_hash(const caf_token_t *t)
{
    return (size_t)((((uintptr_t)t >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - comp_bits));
}

/* Index of t's slot, or of the empty slot where it would go (SIZE_MAX: no set yet). */
static size_t comp_probe(const caf_token_t *t)
{
    if (comp_bits == 0)
        return SIZE_MAX;
    size_t mask = ((size_t)1 << comp_bits) - 1;
    for (size_t i = comp_hash(t);; i = (i + 1) & mask)
        if (comp_set[i] == t || comp_set[i] == NULL)
            return i;
}

static int comp_add(caf_token_t *t)
{
    if ((comp_used + 1) * 2 > ((size_t)1 << comp_bits)) { /* at most half full: rebuild */
        caf_token_t **old = comp_set;
        size_t old_cap = comp_bits ? (size_t)1 << comp_bits : 0;
        unsigned bits = comp_bits ? comp_bits + 1 : 6;
        caf_token_t **set = calloc((size_t)1 << bits, sizeof(*set));
        if (set == NULL)
            return RMX_ERR_NOMEM;
        comp_set = set;
        comp_bits = bits;
        comp_used = 0;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i] != NULL && old[i] != COMP_GONE) {
                comp_set[comp_probe(old[i])] = old[i];
                comp_used++;
            }
        free(old);
    }
    comp_set[comp_probe(t)] = t;
    comp_used++;
    return RMX_OK;
}

static void comp_remove(caf_token_t *t)
{
    size_t i = comp_probe(t);
    if (i != SIZE_MAX && comp_set[i] == t)
        comp_set[i] = COMP_GONE; /* still counted in comp_used until the next rebuild */
}

int caf_component_token(caf_token_t **token)
{
    size_t i = comp_probe(*token);
    return *token != NULL && i != SIZE_MAX && comp_set[i] == *token && (*token)->home == token;
}

void caf_register_component(size_t size, int type, caf_token_t **token, caf_desc_t *desc,
                            int *stat, char *errmsg, size_t errmsg_len)
{
    static const char entry[] = "_gfortran_caf_register";
    (void)caf_ctx(); /* the heap exists once the context does */
    caf_token_t *t = caf_component_token(token) ? *token : NULL;
    if (type == CAF_REG_ALLOC_REGISTER_ONLY || t == NULL) {
        t = calloc(1, sizeof(*t));
        if (t == NULL || comp_add(t) != RMX_OK) {
            free(t);
            caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_RMX_BASE - RMX_ERR_NOMEM,
                     "out of memory");
            return;
        }
        t->kind = CAF_REG_ALLOC_REGISTER_ONLY;
        t->home = token;
        *token = t;
        if (type == CAF_REG_ALLOC_REGISTER_ONLY) {
            caf_ok(stat);
            return;
        }
    }
    if (t->base != NULL) {
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                 "component already allocated");
        return;
    }
    size_t disp = caf_heap_alloc(size);
    if (disp == (size_t)-1) {
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_RMX_BASE - RMX_ERR_NOMEM,
                 "%zu bytes do not fit in the coarray heap (RMX_CAF_HEAP, default %zu MiB)",
                 size, CAF_HEAP_DEFAULT >> 20);
        return;
    }
    t->win = caf_heap_win();
    t->base = caf_heap_base() + disp;
    t->size = size;
    if (desc != NULL)
        desc->base_addr = t->base;
    caf_ok(stat);
}

void caf_deregister_component(caf_token_t **token, int type, int *stat, char *errmsg,
                              size_t errmsg_len)
{
    (void)errmsg, (void)errmsg_len;
    if (!caf_component_token(token)) { /* never allocated here: nothing of ours to free */
        if (type == 0)
            *token = NULL;
        caf_ok(stat);
        return;
    }
    caf_token_t *t = *token;
    if (t->base != NULL)
        caf_heap_free((size_t)((char *)t->base - caf_heap_base()));
    t->base = NULL;
    t->win = NULL;
    t->size = 0;
    if (type == 0) { /* the whole component goes, token too */
        comp_remove(t);
        free(t);
        *token = NULL;
    }
    caf_ok(stat);
}

/* ---------------------------------------------------------------- sendget, is_present */
void _gfortran_caf_sendget_by_ref(caf_token_t *dst_token, int dst_image_index, caf_ref_t *dst_refs,
                                  caf_token_t *src_token, int src_image_index, caf_ref_t *src_refs,
                                  int dst_kind, int src_kind, bool may_require_tmp,
                                  int *dst_stat, int *src_stat, int dst_type, int src_type);
int _gfortran_caf_is_present(caf_token_t *token, int image_index, caf_ref_t *refs);

void _gfortran_caf_sendget_by_ref(caf_token_t *dst_token, int dst_image_index, caf_ref_t *dst_refs,
                                  caf_token_t *src_token, int src_image_index, caf_ref_t *src_refs,
                                  int dst_kind, int src_kind, bool may_require_tmp,
                                  int *dst_stat, int *src_stat, int dst_type, int src_type)
{
    static const char entry[] = "_gfortran_caf_sendget_by_ref";
    (void)may_require_tmp; /* the data always passes through a temporary here */
    ref_walk_t sw, dw;
    int starget = walk_for(entry, src_token, src_image_index, src_refs, &sw, src_stat);
    if (starget < 0)
        return;
    int dtarget = walk_for(entry, dst_token, dst_image_index, dst_refs, &dw, dst_stat);
    if (dtarget < 0)
        return;
    elem_type_t st = {.type = sw.static_type >= 0 ? sw.static_type : src_type, .kind = src_kind,
                      .size = sw.rs.elem};
    elem_type_t dt = {.type = dw.static_type >= 0 ? dw.static_type : dst_type, .kind = dst_kind,
                      .size = dw.rs.elem};
    size_t bytes = sw.rs.count * st.size;
    char *tmp = NULL;
    caf_desc_t *tdesc = calloc(1, sizeof(caf_desc_t) + sizeof(caf_dim_t));
    int rc = tdesc != NULL ? RMX_OK : RMX_ERR_NOMEM;
    if (rc == RMX_OK && sw.vector) {
        size_t got = 0;
        rc = caf_get_vector(entry, sw.tok, starget, (size_t)sw.vdisp, caf_desc_of_max(&sw.vdesc),
                            sw.vvec, &st, NULL, NULL, dw.rs.count, &tmp, &got, src_stat);
    } else if (rc == RMX_OK) {
        tmp = malloc(bytes > 0 ? bytes : 1);
        caf_section_t packed;
        caf_section_packed(&packed, st.size, sw.rs.count);
        rc = tmp == NULL ? RMX_ERR_NOMEM
                         : caf_transfer(sw.tok, 0, tmp, &packed, starget, sw.disp, &sw.rs);
    }
    if (rc == RMX_OK) {
        caf_ok(src_stat);
        tdesc->base_addr = tmp;
        tdesc->dtype = (caf_dtype_t){.elem_len = st.size, .rank = sw.rs.rank > 0 ? 1 : 0,
                                     .type = (signed char)st.type};
        tdesc->span = (ptrdiff_t)st.size;
        tdesc->dim[0] = (caf_dim_t){.stride = 1, .lbound = 1, .ubound = (ptrdiff_t)sw.rs.count};
        rc = dw.vector ? caf_send_vector(entry, dw.tok, dtarget, (size_t)dw.vdisp,
                                         caf_desc_of_max(&dw.vdesc), dw.vvec, &dt, tdesc, &st,
                                         dst_stat)
                       : caf_send_desc(entry, dw.tok, dtarget, (size_t)dw.disp, &dw.rs, &dt,
                                       tdesc, &st, 0, dst_stat);
        if (rc != CAF_REPORTED)
            caf_check(entry, rc, dst_stat, NULL, 0);
    } else if (rc != CAF_REPORTED) {
        caf_check(entry, rc, src_stat != NULL ? src_stat : dst_stat, NULL, 0);
    }
    free(tmp);
    free(tdesc);
}

/* ALLOCATED(x[i]%comp): whether the chain's last allocatable component is allocated there. */
int _gfortran_caf_is_present(caf_token_t *token, int image_index, caf_ref_t *refs)
{
    static const char entry[] = "_gfortran_caf_is_present";
    int target = caf_target(entry, image_index, NULL, NULL, 0);
    ref_walk_t w;
    const char *why;
    int rc = walk_refs(token, target, refs, &w, &why);
    if (rc != RMX_OK)
        caf_check(entry, rc, NULL, NULL, 0);
    if (why != NULL)
        caf_unsupported(entry, NULL, NULL, 0, why);
    return !w.unallocated;
}
