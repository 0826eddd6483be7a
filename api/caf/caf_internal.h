/*
 * caf_internal.h — libcaf_rmx: gfortran's -fcoarray=lib runtime (the `_gfortran_caf_*` entry
 * points of GCC 12's libgfortran/caf/libcaf.h) on the rmx engine.  Shared by the files of
 * api/caf/: the image's rmx context, the coarray token, gfortran's array descriptor, and the
 * error path every entry point uses.
 *
 * Files: caf_image.c (init, finalize, images, register, sync, stop, status), caf_rma.c (send,
 * get, sendget, get_by_ref/send_by_ref: descriptors onto rmx_sub_t), caf_atomic.c (atomics,
 * lock/unlock, critical, events), caf_coll.c (co_sum, co_min, co_max, co_broadcast, co_reduce),
 * caf_unsupported.c (the entry points this library does not serve, each failing loudly).
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

/* Vector subscripts (gfortran's caf_vector_t); only their presence is looked at. */
typedef struct caf_vector caf_vector_t;

/* ---- the token gfortran keeps for every coarray: our window and where its local copy is */
typedef struct caf_token {
    rmx_win_t *win;
    void *base;
    size_t size;
    int kind; /* CAF_REG_* it was registered as */
    /* An allocatable coarray's own descriptor (gfortran's variable, alive while allocated): its
     * bounds are every image's bounds, which the *_by_ref entry points need.  NULL otherwise. */
    const caf_desc_t *desc;
} caf_token_t;

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

/* Validate a 1-based image index; on failure caf_fail has run and -1 is returned. */
int caf_target(const char *entry, int image_index, int *stat, char *errmsg, size_t errmsg_len);

/* ---- descriptors (caf_rma.c) */
static inline int caf_desc_rank(const caf_desc_t *d) { return d->dtype.rank; }
static inline size_t caf_desc_elem(const caf_desc_t *d) { return d->dtype.elem_len; }
size_t caf_desc_count(const caf_desc_t *d);           /* number of elements */
/* Byte offset of the i-th element (array element order) from base_addr. */
ptrdiff_t caf_desc_elem_offset(const caf_desc_t *d, size_t i);
/* Copy the elements of a (possibly strided) local array to/from a packed buffer. */
void caf_desc_pack(const caf_desc_t *d, void *packed);
void caf_desc_unpack(const caf_desc_t *d, const void *packed);

#endif
