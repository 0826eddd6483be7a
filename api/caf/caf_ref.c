/*
 * caf_ref.c — the *_by_ref entry points: gfortran's reference chains (caf_reference_t of
 * libcaf.h: component, array and static-array references, one after the other) for coindexed
 * objects that plain descriptors cannot describe: `x = c(...)[i]` with x allocatable (reshaped to
 * the result), references through derived-type components (x[i]%comp(:)), and the registration
 * of allocatable components of derived-type coarrays.
 */
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

static size_t triplet_count(ptrdiff_t start, ptrdiff_t end, ptrdiff_t stride)
{
    if (stride > 0)
        return end >= start ? (size_t)((end - start) / stride) + 1 : 0;
    return start >= end ? (size_t)((start - end) / -stride) + 1 : 0;
}

/* The remote section a reference chain designates.  gfortran uses *_by_ref for, among others,
 * `x = c(...)[i]` with x allocatable (reallocated to the result's shape); served here: one array
 * reference on an allocatable coarray (its bounds are the registered descriptor's, the same on
 * every image).  Returns NULL, or why the chain is not served. */
static const char *ref_section(const caf_token_t *t, const caf_ref_t *ref, ptrdiff_t *disp,
                               caf_section_t *rs)
{
    if (ref == NULL || ref->next != NULL || ref->type != CAF_REF_ARRAY || t->desc == NULL)
        return "references through derived-type components or static arrays";
    const caf_desc_t *d = t->desc;
    int rank = caf_desc_rank(d);
    ptrdiff_t span = d->span > 0 ? d->span : (ptrdiff_t)caf_desc_elem(d);
    rs->elem = caf_desc_elem(d);
    rs->rank = 0;
    rs->count = 1;
    *disp = 0;
    for (int j = 0; j < rank; j++) {
        ptrdiff_t lb = d->dim[j].lbound, ub = d->dim[j].ubound;
        ptrdiff_t start = ref->u.a.dim[j].s.start, end = ref->u.a.dim[j].s.end;
        ptrdiff_t stride = ref->u.a.dim[j].s.stride;
        switch (ref->u.a.mode[j]) {
        case ARR_FULL: start = lb, end = ub, stride = 1; break;
        case ARR_RANGE: break;
        case ARR_SINGLE: end = start, stride = 1; break;
        case ARR_OPEN_END: end = ub; break;
        case ARR_OPEN_START: start = lb; break;
        case ARR_VECTOR: return "vector subscripts on a coindexed object";
        default: return "an array reference of fewer subscripts than the array's rank";
        }
        if (stride == 0)
            return "a zero stride";
        size_t count = triplet_count(start, end, stride);
        if (count > 0 && (start < lb || start > ub ||
                          start + (ptrdiff_t)(count - 1) * stride > ub ||
                          start + (ptrdiff_t)(count - 1) * stride < lb))
            return "a subscript outside the coarray's bounds";
        *disp += (start - lb) * d->dim[j].stride * span;
        if (ref->u.a.mode[j] != ARR_SINGLE) {
            rs->n[rs->rank] = count;
            rs->sm[rs->rank] = stride * d->dim[j].stride * span;
            rs->rank++;
        }
        rs->count *= count;
    }
    return NULL;
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

void _gfortran_caf_get_by_ref(caf_token_t *token, int image_index, caf_desc_t *dst,
                              caf_ref_t *refs, int dst_kind, int src_kind, bool may_require_tmp,
                              bool dst_reallocatable, int *stat, int src_type)
{
    static const char entry[] = "_gfortran_caf_get_by_ref";
    int target = caf_target(entry, image_index, stat, NULL, 0);
    if (target < 0 || !caf_valid_token(entry, token, stat))
        return;
    ptrdiff_t disp;
    caf_section_t rs;
    const char *why = ref_section(token, refs, &disp, &rs);
    if (why != NULL) {
        caf_unsupported(entry, stat, NULL, 0, why);
        return;
    }
    int rc = dst_reallocatable ? reshape_destination(dst, &rs) : RMX_OK;
    elem_type_t st = {.type = src_type, .kind = src_kind, .size = rs.elem};
    elem_type_t dt = caf_elem_type_of(dst, dst_kind);
    if (rc == RMX_OK)
        rc = caf_get_desc(entry, token, target, disp, &rs, &st, dst, &dt, may_require_tmp, stat);
    if (rc != CAF_REPORTED)
        caf_check(entry, rc, stat, NULL, 0);
}

void _gfortran_caf_send_by_ref(caf_token_t *token, int image_index, caf_desc_t *src,
                               caf_ref_t *refs, int dst_kind, int src_kind, bool may_require_tmp,
                               bool dst_reallocatable, int *stat, int dst_type)
{
    static const char entry[] = "_gfortran_caf_send_by_ref";
    (void)dst_reallocatable; /* a coarray is never reallocated by assignment */
    int target = caf_target(entry, image_index, stat, NULL, 0);
    if (target < 0 || !caf_valid_token(entry, token, stat))
        return;
    ptrdiff_t disp;
    caf_section_t rs;
    const char *why = ref_section(token, refs, &disp, &rs);
    if (why != NULL) {
        caf_unsupported(entry, stat, NULL, 0, why);
        return;
    }
    elem_type_t dt = {.type = dst_type, .kind = dst_kind, .size = rs.elem};
    elem_type_t st = caf_elem_type_of(src, src_kind);
    int rc = caf_send_desc(entry, token, target, (size_t)disp, &rs, &dt, src, &st, may_require_tmp,
                       stat);
    if (rc != CAF_REPORTED)
        caf_check(entry, rc, stat, NULL, 0);
}

/* ---------------------------------------------------------------- component registration */
static const char by_ref[] = "coindexed references through allocatable or pointer components "
                             "of derived types";

void caf_register_component(size_t size, int type, caf_token_t **token, caf_desc_t *desc,
                            int *stat, char *errmsg, size_t errmsg_len)
{
    (void)size, (void)type, (void)token, (void)desc;
    caf_unsupported("_gfortran_caf_register", stat, errmsg, errmsg_len,
                    "allocatable coarray components of derived types");
}

void caf_deregister_component(caf_token_t **token, int type, int *stat, char *errmsg,
                              size_t errmsg_len)
{
    (void)token, (void)type;
    caf_unsupported("_gfortran_caf_deregister", stat, errmsg, errmsg_len,
                    "deallocating coarray components of derived types");
}

void _gfortran_caf_sendget_by_ref(caf_token_t *dst_token, int dst_image_index, void *dst_refs,
                                  caf_token_t *src_token, int src_image_index, void *src_refs,
                                  int dst_kind, int src_kind, bool may_require_tmp,
                                  int *dst_stat, int *src_stat, int dst_type, int src_type);
int _gfortran_caf_is_present(caf_token_t *token, int image_index, void *refs);


void _gfortran_caf_sendget_by_ref(caf_token_t *dst_token, int dst_image_index, void *dst_refs,
                                  caf_token_t *src_token, int src_image_index, void *src_refs,
                                  int dst_kind, int src_kind, bool may_require_tmp,
                                  int *dst_stat, int *src_stat, int dst_type, int src_type)
{
    (void)dst_token, (void)dst_image_index, (void)dst_refs, (void)src_token;
    (void)src_image_index, (void)src_refs, (void)dst_kind, (void)src_kind;
    (void)may_require_tmp, (void)dst_type, (void)src_type;
    if (src_stat != NULL)
        *src_stat = CAF_STAT_UNSUPPORTED;
    caf_unsupported("_gfortran_caf_sendget_by_ref", dst_stat, NULL, 0, by_ref);
}

int _gfortran_caf_is_present(caf_token_t *token, int image_index, void *refs)
{
    (void)token, (void)image_index, (void)refs;
    caf_unsupported("_gfortran_caf_is_present", NULL, NULL, 0, by_ref);
    return 0; /* not reached: without STAT= caf_unsupported terminates */
}
