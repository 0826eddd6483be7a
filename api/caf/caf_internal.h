/*
 * caf_internal.h — libcaf_rmx: gfortran's -fcoarray=lib runtime (the `_gfortran_caf_*` entry
 * points of GCC 12's libgfortran/caf/libcaf.h) on the rmx engine.  Shared by the files of
 * api/caf/: the image's rmx context, the coarray token, gfortran's array descriptor, and the
 * error path every entry point uses.
 *
 * Files: caf_image.c (init, finalize, images, register, sync, stop, status), caf_team.c (teams),
 * caf_heap.c (the heap window), caf_rma.c (send, get, sendget: descriptors onto rmx_sub_t),
 * caf_ref.c (the *_by_ref calls: reference chains, components), caf_atomic.c (atomics,
 * lock/unlock, critical, events), caf_coll.c (co_sum, co_min, co_max, co_broadcast, co_reduce),
 * and the error path every entry point uses.
 *
 * The ABI is gfortran's, fixed by the compiler: image indices are 1-based, the byte offset passed
 * with a token is measured from the start of this image's copy of the coarray (every image's copy
 * has the same layout, so it is also the displacement in the remote window), descriptor strides
 * count elements (times `span` bytes).
 */
#ifndef CAF_INTERNAL_H
#define CAF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../rmx.h"

/* ---- gfortran's array descriptor (GCC >= 8 layout) */
#define CAF_MAX_DIMS 15

typedef struct caf_dtype {
    size_t elem_len;
    int version;
    signed char rank;
    signed char type;
    signed short attribute;
} caf_dtype_t;

typedef struct caf_dim {
    ptrdiff_t stride; /* in elements of `span` bytes */
    ptrdiff_t lbound;
    ptrdiff_t ubound;
} caf_dim_t;

typedef struct caf_desc {
    void *base_addr;
    size_t offset;
    caf_dtype_t dtype;
    ptrdiff_t span;
    caf_dim_t dim[];
} caf_desc_t;

/* A caf_desc_t with room for every dimension, to hold a descriptor read from another image (same
 * layout; caf_desc_of_max gives the caf_desc_t view). */
typedef struct caf_desc_max {
    void *base_addr;
    size_t offset;
    caf_dtype_t dtype;
    ptrdiff_t span;
    caf_dim_t dim[CAF_MAX_DIMS];
} caf_desc_max_t;

static inline caf_desc_t *caf_desc_of_max(caf_desc_max_t *m) { return (caf_desc_t *)(void *)m; }

/* gfortran's basic types (gcc/fortran/libgfortran.h bt) */
enum { CAF_BT_UNKNOWN = 0, CAF_BT_INTEGER, CAF_BT_LOGICAL, CAF_BT_REAL, CAF_BT_COMPLEX,
       CAF_BT_DERIVED, CAF_BT_CHARACTER, CAF_BT_CLASS };

/* What _gfortran_caf_register is asked for (gcc/fortran/trans.h) */
enum { CAF_REG_COARRAY_STATIC = 0, CAF_REG_COARRAY_ALLOC, CAF_REG_LOCK_STATIC,
       CAF_REG_LOCK_ALLOC, CAF_REG_CRITICAL, CAF_REG_EVENT_STATIC, CAF_REG_EVENT_ALLOC,
       CAF_REG_ALLOC_REGISTER_ONLY, CAF_REG_ALLOC_ALLOCATE_ONLY };

/* STAT= values of ISO_FORTRAN_ENV as gfortran defines them */
enum { CAF_STAT_UNLOCKED = 0, CAF_STAT_LOCKED = 1, CAF_STAT_LOCKED_OTHER_IMAGE = 2,
       CAF_STAT_DUP_SYNC_IMAGES = 3, CAF_STAT_STOPPED_IMAGE = 6000,
       CAF_STAT_FAILED_IMAGE = 6001 };
/* Any other rmx failure is reported as STAT = CAF_STAT_RMX_BASE - rc (rc < 0 an RMX_ERR_*), so the
 * number names the engine's error; CAF_STAT_UNSUPPORTED marks an entry point not served here. */
#define CAF_STAT_RMX_BASE   1000
#define CAF_STAT_UNSUPPORTED 1100

/* gfortran's caf_vector_t (libgfortran/caf/libcaf.h), one per dimension of the coarray: nvec > 0
 * names the vector subscript's nvec indices (integers of `kind`), nvec == 0 a triplet (a section
 * subscript, or lower == upper for a scalar subscript).  Indices are the Fortran subscripts
 * themselves, in the declared bounds.  gfortran 12 builds the remote descriptor of such a
 * reference with the coarray's full rank, base at the array's first element, dim[d].lbound the
 * declared lower bound and dim[d].stride the element stride of dimension d, but extents that do
 * not match the subscripts (a scalar subscript gets extent 0, the others shift to the front): so
 * only lbound, stride and span are read from it, the shape comes from the vector. */
struct caf_vector {
    size_t nvec;
    union {
        struct {
            void *vector;
            int kind;
        } v;
        struct {
            ptrdiff_t lower_bound, upper_bound, stride;
        } triplet;
    } u;
};
/* gfortran steps through the array of them 32 bytes at a time (-fdump-tree-original). */
_Static_assert(sizeof(struct caf_vector) == 32, "caf_vector_t is 32 bytes in gfortran's ABI");
typedef struct caf_vector caf_vector_t;

/* ---- teams (caf_team.c): Fortran 2018 teams.  The initial team holds every image; FORM TEAM
 * makes a child of the current team, CHANGE TEAM makes it current, END TEAM returns to its parent.
 * Image indices in every entry point are relative to the current team (caf_target maps them to
 * the engine's ranks). */
struct caf_alloc;
typedef struct caf_team {
    struct caf_team *parent;   /* NULL: the initial team */
    int64_t number;            /* TEAM_NUMBER; -1 for the initial team */
    int size;                  /* images in the team */
    int me;                    /* this image's 0-based index in it */
    int *ranks;                /* engine rank of each team image, in team index order */
    int level;                 /* 0: the initial team */
    /* Collective sequence numbers: the same on every member, since every member takes part in
     * the team's collectives in the same order.  Their parity picks a bank of the exchange and
     * collective scratch areas (caf_heap.c). */
    unsigned long exch_seq, coll_seq;
    int active;                /* between its CHANGE TEAM and END TEAM */
} caf_team_t;

caf_team_t *caf_team(void);    /* the current team; never NULL */
caf_team_t *caf_team_initial(void);
/* A barrier among the team's images that also ends this image's segment (SYNC ALL in a team,
 * SYNC TEAM).  Returns an rmx code. */
int caf_team_sync(caf_team_t *t);
/* SYNC IMAGES with every other image of the team (rmx_sync_images: pairwise, matched per pair). */
int caf_team_sync_others(caf_team_t *t);
/* Every member contributes `len` (<= CAF_EXCHANGE_MAX) bytes; all[i * len] receives team image
 * i's.  Collective over the team; ends with caf_team_sync.  all may be NULL: a member that could
 * not allocate it still takes part (the others would wait for it), and receives nothing.  Returns
 * an rmx code. */
#define CAF_EXCHANGE_MAX 16
int caf_team_allgather(caf_team_t *t, const void *mine, size_t len, void *all);

/* ---- the token gfortran keeps for every coarray: our window and where its local copy is */
typedef struct caf_token {
    rmx_win_t *win;
    void *base;
    size_t size;
    int kind; /* CAF_REG_* it was registered as */
    /* An allocatable coarray's own descriptor (gfortran's variable, alive while allocated): its
     * bounds are every image's bounds, which the *_by_ref entry points need.  NULL otherwise. */
    const caf_desc_t *desc;
    /* Coarrays allocated inside a team live in the heap window (caf_heap.c), each image's copy at
     * its own displacement: disp[rank] for engine rank `rank` (members of `team` only).  NULL for a
     * coarray with a window of its own, where every copy starts at displacement 0. */
    size_t *disp;
    caf_team_t *team; /* the team current at allocation (NULL: the initial team) */
    struct caf_token **home; /* a component's: the field gfortran keeps it in (caf_ref.c) */
} caf_token_t;

/* Where engine rank `rank`'s copy of the coarray starts in t->win. */
static inline size_t caf_token_disp(const caf_token_t *t, int rank)
{
    return t->disp != NULL ? t->disp[rank] : 0;
}

/* ---- the heap window (caf_heap.c): one window per image, allocated at start-up, for what must
 * be remotely accessible but cannot be a collective window of its own: coarrays allocated inside
 * a team (a window is collective over every image), allocatable components of derived-type
 * coarrays (allocated by one image alone).  Its size is RMX_CAF_HEAP (bytes; K, M, G suffixes),
 * default CAF_HEAP_DEFAULT.  Layout: a header (this image's base address, so others can translate
 * its pointers), the exchange area (caf_team_allgather), the collective scratch area (caf_coll.c),
 * then the arena that caf_heap_alloc serves. */
#define CAF_HEAP_DEFAULT ((size_t)256 << 20)
int caf_heap_init(rmx_ctx_t *c);       /* collective, from caf_ctx */
/* Where the header holds the image's run value: a random nonzero number drawn at start-up, which
 * image 1's RANDOM_INIT(REPEATABLE=.false., IMAGE_DISTINCT=.false.) seeds every image from. */
#define CAF_HEAP_RUN_VALUE_DISP 8
uint64_t caf_run_value(void);           /* this image's (caf_image.c) */
void caf_heap_fini(void);
rmx_win_t *caf_heap_win(void);
char *caf_heap_base(void);             /* this image's copy */
/* Allocate / free `len` bytes of this image's arena (not collective): the displacement of the
 * block in the heap window, or (size_t)-1 when the arena is exhausted. */
size_t caf_heap_alloc(size_t len);
void caf_heap_free(size_t disp);
/* The exchange area: bank b, slot of engine rank r (CAF_EXCHANGE_MAX bytes). */
size_t caf_heap_exchange_disp(unsigned bank, int rank);
/* The collective scratch area: bank b, slot of engine rank r, each *slot bytes. */
size_t caf_heap_scratch_disp(unsigned bank, int rank, size_t *slot);
/* Translate an address in engine rank r's heap (a pointer read from its memory) to a displacement
 * in the heap window; (size_t)-1 when it is not inside r's heap or [addr, addr+len) leaves it. */
size_t caf_heap_remote_disp(int rank, uintptr_t addr, size_t len);

/* ---- the image (caf_image.c) */
/* The context, created on first use: gfortran registers static coarrays from constructors that
 * run before main() calls _gfortran_caf_init.  Never NULL on return (fails loudly instead). */
rmx_ctx_t *caf_ctx(void);
int caf_me(void);     /* 0-based rank */
int caf_nimages(void);

/* Report a failure of `entry`: with a STAT= variable, set it and ERRMSG= and return; without
 * one, print and terminate the program with error status (Fortran error termination). */
void caf_fail(const char *entry, int *stat, char *errmsg, size_t errmsg_len, int statval,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* An rmx return code: RMX_OK clears stat; anything else goes to caf_fail.  Returns rc. */
int caf_check(const char *entry, int rc, int *stat, char *errmsg, size_t errmsg_len);
static inline void caf_ok(int *stat)
{
    if (stat != NULL)
        *stat = 0;
}
/* An entry point this library does not implement: message naming it, then stat or error stop. */
void caf_unsupported(const char *entry, int *stat, char *errmsg, size_t errmsg_len,
                     const char *why);

/* Deallocate every coarray allocated while `team` was current (END TEAM). */
int caf_release_team_coarrays(caf_team_t *team);
void caf_team_reset(void); /* at finalize */

/* Whether *token is a component token this image made for that very field (caf_ref.c): gfortran
 * may hand over a field it never initialized. */
int caf_component_token(caf_token_t **token);

/* ---- allocatable components of derived-type coarrays (caf_ref.c): CAF_REG_ALLOC_REGISTER_ONLY
 * makes a component's token, CAF_REG_ALLOC_ALLOCATE_ONLY allocates its memory in the heap. */
void caf_register_component(size_t size, int type, caf_token_t **token, caf_desc_t *desc,
                            int *stat, char *errmsg, size_t errmsg_len);
void caf_deregister_component(caf_token_t **token, int type, int *stat, char *errmsg,
                              size_t errmsg_len);

/* Validate a 1-based image index (relative to the current team); the engine rank, or -1 when it
 * is bad or the image has failed (STAT_FAILED_IMAGE) and caf_fail has run. */
int caf_target(const char *entry, int image_index, int *stat, char *errmsg, size_t errmsg_len);
/* How many images of team t other than this one have failed (FAIL IMAGE, or a crash). */
int caf_team_failures(const caf_team_t *t);

/* ---- descriptors (caf_rma.c) */
static inline int caf_desc_rank(const caf_desc_t *d) { return d->dtype.rank; }
static inline size_t caf_desc_elem(const caf_desc_t *d) { return d->dtype.elem_len; }
size_t caf_desc_count(const caf_desc_t *d);           /* number of elements */
/* Byte offset of the i-th element (array element order) from base_addr. */
ptrdiff_t caf_desc_elem_offset(const caf_desc_t *d, size_t i);
/* Copy the elements of a (possibly strided) local array to/from a packed buffer. */
void caf_desc_pack(const caf_desc_t *d, void *packed);
void caf_desc_unpack(const caf_desc_t *d, const void *packed);

/* ---- sections and transfers (caf_rma.c), shared with caf_ref.c */
/* Elements of lo:hi:st (st != 0), in unsigned arithmetic: a garbled triplet must not overflow. */
static inline size_t caf_triplet_len(ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t st)
{
    if (st > 0)
        return hi >= lo ? ((size_t)hi - (size_t)lo) / (size_t)st + 1 : 0;
    return lo >= hi ? ((size_t)lo - (size_t)hi) / ((size_t)0 - (size_t)st) + 1 : 0;
}

typedef struct caf_section {
    size_t elem;                 /* bytes per element */
    int rank;                    /* 0: scalar */
    size_t count;                /* elements in all */
    size_t n[CAF_MAX_DIMS];      /* elements per dimension */
    ptrdiff_t sm[CAF_MAX_DIMS];  /* byte stride per dimension */
} caf_section_t;

void caf_section_of(const caf_desc_t *d, caf_section_t *s);
void caf_section_packed(caf_section_t *s, size_t elem, size_t count); /* rank 1, contiguous */

/* An element's representation: gfortran type (CAF_BT_*), kind, bytes. */
typedef struct elem_type {
    int type, kind;
    size_t size;
} elem_type_t;

elem_type_t caf_elem_type_of(const caf_desc_t *d, int kind);

/* A failure already reported through caf_fail (positive: never an rmx code). */
#define CAF_REPORTED 1

/* Move the elements of remote section `rs` (first element at byte `disp` of target's copy of
 * the coarray) from (put) or to (get) local section `ls` at `local`. */
int caf_transfer(caf_token_t *t, int put, void *local, const caf_section_t *ls, int target,
                 ptrdiff_t disp, const caf_section_t *rs);
/* Put local descriptor `src` (any representation) into remote section `rs` (representation dt),
 * converting / broadcasting a scalar; get remote section `rs` (representation st) into local
 * descriptor dest.  An rmx code, or CAF_REPORTED. */
int caf_send_desc(const char *entry, caf_token_t *t, int target, size_t offset,
                  const caf_section_t *rs, const elem_type_t *dt, caf_desc_t *src,
                  const elem_type_t *st, bool may_require_tmp, int *stat);
int caf_get_desc(const char *entry, caf_token_t *t, int target, ptrdiff_t disp,
                 const caf_section_t *rs, const elem_type_t *st, caf_desc_t *dest,
                 const elem_type_t *dt, bool may_require_tmp, int *stat);
/* x(v...)[image] = src and dest = x(v...)[image] with vector subscripts vec (one per dimension of
 * desc, the remote reference: only its lbound, stride and span are read), converting; one rmx
 * operation per run of adjacent remote elements.  caf_get_vector with dest NULL hands the packed
 * elements back in *packed / *count (`want` of them) instead.  An rmx code, or CAF_REPORTED. */
int caf_send_vector(const char *entry, caf_token_t *t, int target, size_t offset,
                    const caf_desc_t *dest, const struct caf_vector *vec, const elem_type_t *dt,
                    const caf_desc_t *src, const elem_type_t *st, int *stat);
int caf_get_vector(const char *entry, caf_token_t *t, int target, size_t offset,
                   const caf_desc_t *src, const struct caf_vector *vec, const elem_type_t *st,
                   const caf_desc_t *dest, const elem_type_t *dt, size_t want, char **packed,
                   size_t *count, int *stat);
int caf_check_shapes(const char *entry, const caf_section_t *to, const caf_section_t *from,
                     int *stat);
int caf_valid_token(const char *entry, caf_token_t *t, int *stat);

#endif
