/*
 * subarray.h — the internal subarray API: turn an rmx_sub_t into a checked layout (byte offsets,
 * contiguous run length, the dimensions left to walk), and walk a local and a remote section
 * together in element order.  rmx_put_sub / rmx_get_sub (subarray_rma.c) are built on it, and so
 * is the Fortran-coarray layer, which maps gfortran array descriptors onto rmx_sub_t.
 *
 * Everything here is pure computation on descriptors (no context, no wire), so it is unit-tested
 * and fuzzed on its own.
 *
 * Typical use:
 *     rmx_sub_layout_t L, R;
 *     if (rmx_sub_layout(local, &L) || rmx_sub_layout(remote, &R) || rmx_sub_match(&L, &R)) -> ARG
 *     rmx_sub_walk_t w;  rmx_sub_walk_init(&w, &L, &R);
 *     size_t roff, rlen, loff, len;
 *     while (rmx_sub_walk_next_run(&w, &roff, &rlen))       one remote run = one UCP operation
 *         while (rmx_sub_walk_next_piece(&w, &loff, &len))  the local pieces that cover it
 *             ...
 */
#ifndef RMX_SUBARRAY_H
#define RMX_SUBARRAY_H

#include <stddef.h>
#include "../api/rmx.h"

/*
 * A validated section, dimensions reordered fastest first.  The dimensions that form one
 * contiguous run are folded into run_bytes; the remaining ("outer") ones are walked by an
 * odometer.  All offsets are bytes from the array's first element.
 */
typedef struct rmx_sub_layout {
    size_t elem_size;
    size_t nelem;                       /* elements in the section (0: empty section)   */
    size_t run_elems;                   /* contiguous length by the design's rule       */
    size_t run_bytes;                   /* run_elems * elem_size                        */
    size_t nruns;                       /* nelem / run_elems (before merging touching runs) */
    size_t base;                        /* offset of the section's first element        */
    size_t lo, hi;                      /* bytes touched: [lo, hi) (lo == hi when empty) */
    int nouter;                         /* dimensions walked outside a run              */
    size_t count[RMX_SUB_MAX_RANK];     /* outer dimension d: number of runs along it   */
    size_t step[RMX_SUB_MAX_RANK];      /* outer dimension d: bytes between those runs  */
} rmx_sub_layout_t;

/* Check a descriptor and compute its layout.  RMX_ERR_ARG for: NULL, elem_size 0, rank outside
 * 1..RMX_SUB_MAX_RANK, unknown order, stride 0, a section outside the array
 * (first + (count-1)*stride >= extent), or an array whose byte size overflows size_t. */
int rmx_sub_layout(const rmx_sub_t *s, rmx_sub_layout_t *out);

/* rmx_sub_layout remembering the last valid descriptor it was given: the same descriptor again
 * (a loop moving one section shape, the common case) costs a compare and a copy instead of the
 * arithmetic and the checks.  A memo starts zeroed. */
typedef struct rmx_sub_memo {
    int valid;
    rmx_sub_t sub;          /* header and dim[0..rank) are what is compared */
    rmx_sub_layout_t layout;
} rmx_sub_memo_t;
int rmx_sub_layout_memo(rmx_sub_memo_t *m, const rmx_sub_t *s, rmx_sub_layout_t *out);

/* The two sides of one transfer agree: same element size and element count (RMX_ERR_ARG). */
int rmx_sub_match(const rmx_sub_layout_t *local, const rmx_sub_layout_t *remote);

/* Contiguous length in elements of a descriptor (DESIGN.md "Subarrays and contiguity"): from the
 * fastest dimension outwards, multiply while a dimension is covered whole with stride 1; the first
 * partial dimension multiplies its count if its stride is 1 (or its count is 1), then stop.
 * 0 for an invalid descriptor or an empty section. */
size_t rmx_sub_contig_elems(const rmx_sub_t *s);

/*
 * The runs of one section, in element order.  Runs of the layout that happen to touch (the last
 * element of one row adjacent to the first of the next, as in a(1:39:2,:) of a(39,n)) are merged,
 * so the cursor returns maximal runs: run lengths are multiples of run_bytes and may vary.
 */
typedef struct rmx_sub_cursor {
    const rmx_sub_layout_t *l;
    size_t left;                        /* layout runs not yet returned                 */
    size_t off;                         /* offset of the next layout run                */
    size_t idx[RMX_SUB_MAX_RANK];       /* odometer over the outer dimensions           */
} rmx_sub_cursor_t;

void rmx_sub_cursor_init(rmx_sub_cursor_t *c, const rmx_sub_layout_t *l);

/* Step the odometer to the next layout run (left > 0 on entry). */
static inline void rmx_sub_cursor_step(rmx_sub_cursor_t *c)
{
    if (--c->left == 0)
        return;
    const rmx_sub_layout_t *l = c->l;
    for (int d = 0; d < l->nouter; d++) {
        if (++c->idx[d] < l->count[d]) {
            c->off += l->step[d];
            return;
        }
        c->idx[d] = 0;
        c->off -= (l->count[d] - 1) * l->step[d];
    }
}

/* The next maximal run: offset and length in bytes.  0 when every run was returned. */
static inline int rmx_sub_cursor_next(rmx_sub_cursor_t *c, size_t *off, size_t *len)
{
    if (c->left == 0)
        return 0;
    size_t run = c->l->run_bytes, start = c->off, n = run;
    rmx_sub_cursor_step(c);
    while (c->left > 0 && c->off == start + n) {
        n += run;
        rmx_sub_cursor_step(c);
    }
    *off = start;
    *len = n;
    return 1;
}

/* Number of maximal runs (= UCP operations a transfer to this section takes).  O(nruns). */
size_t rmx_sub_count_runs(const rmx_sub_layout_t *l);
/* Length in bytes of the longest maximal run.  O(nruns). */
size_t rmx_sub_longest_run(const rmx_sub_layout_t *l);

/*
 * The joint walk.  Pieces are cut at every local and remote run boundary: a piece is the
 * minimum of what remains of the current local run and of the current remote run (not the
 * minimum of the two run lengths, which is only right when one divides the other).
 */
typedef struct rmx_sub_walk {
    rmx_sub_cursor_t loc, rem;
    size_t loc_off, loc_left;           /* current local run: next byte, bytes remaining  */
    size_t rem_left;                    /* bytes of the current remote run not yet pieced */
} rmx_sub_walk_t;

/* local and remote must have passed rmx_sub_match. */
void rmx_sub_walk_init(rmx_sub_walk_t *w, const rmx_sub_layout_t *local,
                       const rmx_sub_layout_t *remote);
/* The next remote run: its offset and length in bytes; 0 at the end.  Any pieces of the previous
 * run not yet taken are skipped.
 * rmx_sub_walk_next_piece: the next local piece covering the current remote run (local offset
 * and length in bytes); 0 once the remote run is covered.
 * rmx_sub_walk_run_is_one_piece, after next_run: 1 if a single local piece covers the whole
 * remote run (no staging needed: the transfer goes straight from/to local memory at *loff).
 * Inline: they run once per remote run on the put_sub/get_sub path. */
/* Make sure a local run is current (the element counts match, so one exists while remote bytes
 * remain). */
static inline int rmx_sub_walk_load_local_run(rmx_sub_walk_t *w)
{
    return w->loc_left > 0 || rmx_sub_cursor_next(&w->loc, &w->loc_off, &w->loc_left);
}

static inline int rmx_sub_walk_next_piece(rmx_sub_walk_t *w, size_t *loff, size_t *len)
{
    if (w->rem_left == 0 || !rmx_sub_walk_load_local_run(w))
        return 0;
    size_t n = w->loc_left < w->rem_left ? w->loc_left : w->rem_left;
    *loff = w->loc_off;
    *len = n;
    w->loc_off += n;
    w->loc_left -= n;
    w->rem_left -= n;
    return 1;
}

static inline int rmx_sub_walk_next_run(rmx_sub_walk_t *w, size_t *roff, size_t *rlen)
{
    size_t loff, len;
    while (rmx_sub_walk_next_piece(w, &loff, &len))
        ;
    if (!rmx_sub_cursor_next(&w->rem, roff, rlen))
        return 0;
    w->rem_left = *rlen;
    return rmx_sub_walk_load_local_run(w);
}

static inline int rmx_sub_walk_run_is_one_piece(const rmx_sub_walk_t *w, size_t *loff)
{
    *loff = w->loc_off;
    return w->loc_left >= w->rem_left;
}

/* ---- subarray_rma.c: a section's gets left in flight (rmx_iget_sub, engine/nb.c).  Where rmx's
 * active messages reach the target (tcp) and no remote run is longer than a packed one, the
 * section goes out as packed gets (the last ones in flight; earlier ones complete inside the
 * call when there are many) and *out holds them; otherwise *out is NULL and nothing was sent.
 * The answers are scattered into dst only inside rmx_sub_getv_test (once every one has come:
 * RMX_OK or the first error; 1 while some has not) and rmx_sub_getv_wait (at most timeout_s a
 * get); rmx_sub_getv_free gives up what is still in flight (its answers are dropped) and frees.
 * win's checks, the flow-dependency check and dst's are the caller's. */
typedef struct rmx_sub_getv rmx_sub_getv_t;
int rmx_sub_getv_start(rmx_win_t *win, void *dst, const rmx_sub_layout_t *L,
                       const rmx_sub_layout_t *R, int target, size_t disp, rmx_sub_getv_t **out);
int rmx_sub_getv_test(rmx_sub_getv_t *v);
int rmx_sub_getv_wait(rmx_sub_getv_t *v);
void rmx_sub_getv_free(rmx_sub_getv_t *v);

#endif
