/*
 * subarray.c — the descriptor arithmetic under rmx_put_sub / rmx_get_sub: validation of
 * rmx_sub_t, the layout (byte offsets, contiguous length, the dimensions left to walk) and the
 * joint walk of a local and a remote section (see subarray.h and DESIGN.md "Subarrays and
 * contiguity").
 *
 * Pure computation with no UCX underneath, so the unit tests and the libFuzzer target
 * (tests/fuzz_subarray.c) link this file alone.
 */
#include <string.h>
#include "subarray.h"

/* ---------------------------------------------------------------- descriptor arithmetic */

static int mul_overflows(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

static int add_overflows(size_t a, size_t b, size_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

/* Dimension i counted from the fastest one. */
static const rmx_sub_dim_t *fastest_dim(const rmx_sub_t *s, int i)
{
    return s->order == RMX_ORDER_FORTRAN ? &s->dim[i] : &s->dim[s->rank - 1 - i];
}

static int header_ok(const rmx_sub_t *s)
{
    return s != NULL && s->elem_size > 0 && s->rank >= 1 && s->rank <= RMX_SUB_MAX_RANK &&
           (s->order == RMX_ORDER_C || s->order == RMX_ORDER_FORTRAN);
}

/* The section fits in its dimension: first + (count-1)*stride < extent, without wrapping. */
static int dim_ok(const rmx_sub_dim_t *d)
{
    if (d->stride == 0)
        return 0;
    if (d->count == 0)
        return 1;
    size_t reach, last;
    if (mul_overflows(d->count - 1, d->stride, &reach) || add_overflows(d->first, reach, &last))
        return 0;
    return last < d->extent;
}

/* A dimension joins the contiguous run if it is covered whole with stride 1 (a count of 1
 * makes the stride irrelevant). */
static int dim_whole(const rmx_sub_dim_t *d)
{
    return d->count == d->extent && (d->stride == 1 || d->count == 1);
}

static int dim_unit(const rmx_sub_dim_t *d)
{
    return d->stride == 1 || d->count == 1;
}

int rmx_sub_layout(const rmx_sub_t *s, rmx_sub_layout_t *out)
{
    if (!header_ok(s) || out == NULL)
        return RMX_ERR_ARG;
    /* Field by field, not a memset: count[] and step[] are read only below nouter, and clearing
     * the whole struct was a visible part of a one-element put_sub. */
    out->elem_size = s->elem_size;
    out->nelem = out->run_elems = out->run_bytes = out->nruns = 0;
    out->base = out->lo = out->hi = 0;
    out->nouter = 0;
    /* pitch[i]: bytes between neighbours along fastest dimension i; the last product is the
     * whole array, so every offset computed below fits once this loop passed */
    size_t pitch[RMX_SUB_MAX_RANK], bytes = s->elem_size, nelem = 1;
    for (int i = 0; i < s->rank; i++) {
        const rmx_sub_dim_t *d = fastest_dim(s, i);
        if (!dim_ok(d))
            return RMX_ERR_ARG;
        pitch[i] = bytes;
        if (mul_overflows(bytes, d->extent, &bytes))
            return RMX_ERR_ARG;
        nelem *= d->count; /* <= product of extents, which fits */
    }
    if (nelem == 0)
        return RMX_OK; /* empty section: nothing to walk */
    out->nelem = nelem;

    size_t base = 0, reach = 0;
    for (int i = 0; i < s->rank; i++) {
        const rmx_sub_dim_t *d = fastest_dim(s, i);
        base += d->first * pitch[i];
        reach += (d->count - 1) * d->stride * pitch[i];
    }
    out->base = out->lo = base;
    out->hi = base + reach + s->elem_size;

    int i = 0;
    size_t run = 1;
    while (i < s->rank && dim_whole(fastest_dim(s, i)))
        run *= fastest_dim(s, i++)->count;
    if (i < s->rank && dim_unit(fastest_dim(s, i)))
        run *= fastest_dim(s, i++)->count;
    out->run_elems = run;
    out->run_bytes = run * s->elem_size;
    size_t nruns = 1; /* nelem / run, without a 64-bit division per call */
    for (; i < s->rank; i++) {
        const rmx_sub_dim_t *d = fastest_dim(s, i);
        if (d->count == 1)
            continue; /* walks nowhere */
        nruns *= d->count;
        out->count[out->nouter] = d->count;
        out->step[out->nouter] = d->stride * pitch[i];
        out->nouter++;
    }
    out->nruns = nruns;
    return RMX_OK;
}

/* The fields a layout defines (count and step only below nouter). */
static void layout_copy(rmx_sub_layout_t *to, const rmx_sub_layout_t *from)
{
    to->elem_size = from->elem_size;
    to->nelem = from->nelem;
    to->run_elems = from->run_elems;
    to->run_bytes = from->run_bytes;
    to->nruns = from->nruns;
    to->base = from->base;
    to->lo = from->lo;
    to->hi = from->hi;
    to->nouter = from->nouter;
    for (int d = 0; d < from->nouter; d++) {
        to->count[d] = from->count[d];
        to->step[d] = from->step[d];
    }
}

static int same_descriptor(const rmx_sub_t *a, const rmx_sub_t *b)
{
    return a->elem_size == b->elem_size && a->rank == b->rank && a->order == b->order &&
           memcmp(a->dim, b->dim, (size_t)a->rank * sizeof(a->dim[0])) == 0;
}

int rmx_sub_layout_memo(rmx_sub_memo_t *m, const rmx_sub_t *s, rmx_sub_layout_t *out)
{
    if (m->valid && header_ok(s) && out != NULL && same_descriptor(s, &m->sub)) {
        layout_copy(out, &m->layout);
        return RMX_OK;
    }
    int rc = rmx_sub_layout(s, out);
    if (rc == RMX_OK) {
        m->sub.elem_size = s->elem_size;
        m->sub.rank = s->rank;
        m->sub.order = s->order;
        memcpy(m->sub.dim, s->dim, (size_t)s->rank * sizeof(s->dim[0]));
        layout_copy(&m->layout, out);
        m->valid = 1;
    }
    return rc;
}

int rmx_sub_match(const rmx_sub_layout_t *local, const rmx_sub_layout_t *remote)
{
    if (local->elem_size != remote->elem_size || local->nelem != remote->nelem)
        return RMX_ERR_ARG;
    return RMX_OK;
}

size_t rmx_sub_contig_elems(const rmx_sub_t *s)
{
    rmx_sub_layout_t l;
    if (rmx_sub_layout(s, &l) != RMX_OK)
        return 0;
    return l.run_elems;
}

/* ---------------------------------------------------------------- walking */

void rmx_sub_cursor_init(rmx_sub_cursor_t *c, const rmx_sub_layout_t *l)
{
    c->l = l;
    c->left = l->nruns;
    c->off = l->base;
    for (int d = 0; d < l->nouter; d++) /* the odometer reads no digit above nouter */
        c->idx[d] = 0;
}

size_t rmx_sub_count_runs(const rmx_sub_layout_t *l)
{
    rmx_sub_cursor_t c;
    size_t n = 0, off, len;
    rmx_sub_cursor_init(&c, l);
    while (rmx_sub_cursor_next(&c, &off, &len))
        n++;
    return n;
}

size_t rmx_sub_longest_run(const rmx_sub_layout_t *l)
{
    rmx_sub_cursor_t c;
    size_t most = 0, off, len;
    rmx_sub_cursor_init(&c, l);
    while (rmx_sub_cursor_next(&c, &off, &len))
        if (len > most)
            most = len;
    return most;
}

void rmx_sub_walk_init(rmx_sub_walk_t *w, const rmx_sub_layout_t *local,
                       const rmx_sub_layout_t *remote)
{
    w->loc_off = w->loc_left = w->rem_left = 0;
    rmx_sub_cursor_init(&w->loc, local);
    rmx_sub_cursor_init(&w->rem, remote);
}

