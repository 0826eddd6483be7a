/*
 * caf_coll.c — collective subroutines: CO_SUM, CO_MIN, CO_MAX, CO_BROADCAST, CO_REDUCE, among the
 * images of the current team, built on the collective scratch area of the heap window
 * (caf_heap.c), rmx_put and the team barrier caf_team_sync.  No engine collective is called:
 * those span every image and would hang inside a team.
 *
 * A round: every image that has something to say copies it into its own slot (indexed by its
 * engine rank) of one bank of its scratch area and puts it into the same slot at each image that
 * needs it, then the team synchronizes (which completes the puts).  Reduction: every image sends
 * to every result image (all of them, or RESULT_IMAGE), and each result image folds the slots in
 * team image order 1..n, so every image computes the bit-identical result.  Broadcast: the source
 * sends, the others copy out.  An argument larger than a slot moves in several rounds of at most
 * a slot each (whole elements for a reduction).
 *
 * Each round takes the next bank by the parity of the team's own counter coll_seq (the same on
 * every member; a per-image counter would differ between members that were in different teams).
 * A writer fills bank b again only two rounds later, after the barrier of the round in between,
 * which the reader enters only once it has read bank b; caf_team.c explains why collectives of a
 * parent and a child team cannot meet in one slot.
 *
 * What gfortran 12 passes (read in its -fdump-tree-original and assembly):
 *  - A's descriptor.  For an allocatable component of a derived-type argument of CO_BROADCAST it
 *    builds a rank-1 descriptor ("cdesc") setting only dtype, base_addr and dim[0] (lbound 1,
 *    stride 1): span and offset are stack garbage.  Everywhere else that it sets span it sets
 *    offset too, and a pointer array's span really differs from elem_len (p => a%i), so span is
 *    believed only when offset agrees with the bounds (offset = -sum lbound*stride, true of every
 *    descriptor whose base_addr is its first element) — otherwise elements are elem_len apart.
 *  - ERRMSG=: the CHARACTER variable *by value* (an aggregate argument of the x86-64 ABI: in one
 *    or two argument registers when it has at most 16 bytes and enough registers remain, else a
 *    copy on the stack).  Nothing written here can reach the caller, so ERRMSG= is never
 *    written, and the arguments after it are shifted: the `errmsg`, `a_len` and `errmsg_len`
 *    parameters hold whichever of the string's bytes, A's character length or ERRMSG's length
 *    landed there (char_kind sorts it out).  STAT= works.
 *
 * gfortran 12 bugs no runtime can repair (seen in its generated code): CO_BROADCAST of a
 * non-allocatable (explicit- or assumed-shape) array of a derived type with allocatable
 * components walks a descriptor it never initialized; of a derived-type component that itself
 * has allocatable components, it broadcasts that component whole after its allocatable parts,
 * so the receivers get the source's pointers; of a deferred-length character component, it
 * passes elem_len 0 (nothing moves but the length); and it drops STAT= for any derived type with
 * allocatable components.  CO_SUM(x%c) and the like pass all of x (a derived type is refused
 * here; z%re of a complex z sums both parts).  An unallocated component comes with base_addr NULL
 * and stale bounds: CO_BROADCAST moves nothing for it (the source's size travels with the data).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "caf_internal.h"

/* See the top of the file: what arrives in errmsg/errmsg_len of a CO_* call is not usable. */
#define IGNORE_ERRMSG() ((void)errmsg, (void)errmsg_len)

/* ---------------------------------------------------------------- the argument A */
/* Element distance of A in bytes: span only where gfortran set it (see the top of the file). */
static ptrdiff_t trusted_span(const caf_desc_t *a)
{
    ptrdiff_t elem = (ptrdiff_t)caf_desc_elem(a), off = 0;
    if (caf_desc_rank(a) == 0 || a->span < elem)
        return elem;
    for (int j = 0; j < caf_desc_rank(a); j++)
        off -= a->dim[j].lbound * a->dim[j].stride;
    return (ptrdiff_t)a->offset == off ? a->span : elem;
}

/* A's elements: 0 when its rank is not one gfortran can pass (then nothing is touched). */
static int arg_section(const caf_desc_t *a, caf_section_t *s)
{
    int rank = caf_desc_rank(a);
    if (rank < 0 || rank > CAF_MAX_DIMS)
        return 0;
    ptrdiff_t span = trusted_span(a);
    s->elem = caf_desc_elem(a);
    s->rank = rank;
    s->count = 1;
    for (int j = 0; j < rank; j++) {
        ptrdiff_t n = a->dim[j].ubound - a->dim[j].lbound + 1;
        s->n[j] = n > 0 ? (size_t)n : 0;
        s->sm[j] = a->dim[j].stride * span;
        s->count *= s->n[j];
    }
    return 1;
}

/* A with elements but no storage: an unallocated allocatable (not a valid argument of a
 * reduction).  Reported before any communication rather than a crash in memcpy. */
static int arg_missing(const char *entry, const caf_desc_t *a, const caf_section_t *s, int *stat)
{
    if (a->base_addr != NULL || s->count == 0 || s->elem == 0)
        return 0;
    caf_fail(entry, stat, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
             "A has no storage (an unallocated allocatable?)");
    return 1;
}

/* Elements laid out one after the other from base_addr: element e at e * elem. */
static int section_contiguous(const caf_section_t *s)
{
    ptrdiff_t want = (ptrdiff_t)s->elem;
    for (int j = 0; j < s->rank; j++) {
        if (s->n[j] != 1 && s->sm[j] != want)
            return 0;
        want *= (ptrdiff_t)s->n[j];
    }
    return 1;
}

/* An odometer over the elements of a section, in array element order. */
typedef struct cursor {
    const caf_section_t *s;
    size_t idx[CAF_MAX_DIMS];
    ptrdiff_t off; /* bytes from base_addr */
} cursor_t;

static void cursor_at(cursor_t *c, const caf_section_t *s, size_t e)
{
    c->s = s;
    c->off = 0;
    for (int j = 0; j < s->rank; j++) {
        c->idx[j] = e % s->n[j];
        e /= s->n[j];
        c->off += (ptrdiff_t)c->idx[j] * s->sm[j];
    }
}

static void cursor_next(cursor_t *c)
{
    const caf_section_t *s = c->s;
    for (int j = 0; j < s->rank; j++) {
        c->off += s->sm[j];
        if (++c->idx[j] < s->n[j])
            return;
        c->off -= (ptrdiff_t)s->n[j] * s->sm[j];
        c->idx[j] = 0;
    }
}

/* Copy bytes [off, off + len) of A's elements, laid end to end, to (pack) or from buf.  Bytes,
 * not elements: an element larger than a scratch slot (a big derived type) moves in pieces. */
static void copy_bytes(const caf_desc_t *a, const caf_section_t *s, size_t off, size_t len,
                       char *buf, int pack)
{
    char *base = a->base_addr;
    if (len == 0)
        return;
    if (section_contiguous(s)) {
        if (pack)
            memcpy(buf, base + off, len);
        else
            memcpy(base + off, buf, len);
        return;
    }
    size_t within = off % s->elem;
    cursor_t c;
    cursor_at(&c, s, off / s->elem);
    while (len > 0) {
        size_t n = s->elem - within < len ? s->elem - within : len;
        char *p = base + c.off + (ptrdiff_t)within;
        if (pack)
            memcpy(buf, p, n);
        else
            memcpy(p, buf, n);
        buf += n;
        len -= n;
        within = 0;
        cursor_next(&c);
    }
}

/* ---------------------------------------------------------------- rounds in the team */
/* One collective call.  No ERRMSG= here: what arrives in its place is not the caller's variable
 * (top of the file). */
typedef struct coll {
    const char *entry;
    caf_team_t *t;
    int *stat;
    size_t slot; /* bytes per scratch slot */
} coll_t;

static void coll_begin(coll_t *c, const char *entry, int *stat)
{
    *c = (coll_t){.entry = entry, .t = caf_team(), .stat = stat};
    caf_heap_scratch_disp(0, 0, &c->slot);
}

/* Where team image i's slot of `bank` is in this image's scratch area. */
static char *slot_of(const coll_t *c, unsigned bank, int i)
{
    return caf_heap_base() + caf_heap_scratch_disp(bank, c->t->ranks[i], NULL);
}

/* One round in `bank`: when `send`, the first len bytes of this image's slot, already filled, go
 * into the same slot at team image `to` (at every other member when to < 0); then the team
 * barrier, which every member reaches even when a put failed so that none waits forever.  An rmx
 * code. */
static int coll_round(const coll_t *c, unsigned bank, int send, size_t len, int to)
{
    caf_team_t *t = c->t;
    int rc = RMX_OK;
    if (send && len > 0) {
        size_t disp = caf_heap_scratch_disp(bank, t->ranks[t->me], NULL);
        for (int i = 0; i < t->size && rc == RMX_OK; i++)
            if (i != t->me && (to < 0 || i == to))
                rc = rmx_put(caf_heap_win(), caf_heap_base() + disp, len, t->ranks[i], disp);
    }
    int sync_rc = caf_team_sync(t);
    return rc != RMX_OK ? rc : sync_rc;
}

static unsigned next_bank(const coll_t *c)
{
    return (unsigned)(c->t->coll_seq++ & 1);
}

/* ---------------------------------------------------------------- folding: acc = acc OP in */
typedef enum { RED_SUM, RED_MIN, RED_MAX, RED_USER } red_op_t;

typedef struct fold fold_t;
struct fold {
    red_op_t op;
    int type;       /* CAF_BT_* */
    size_t elem;    /* bytes per element */
    int kind4;      /* character of kind 4 */
    size_t clen;    /* characters per element (character only) */
    /* CO_REDUCE: the user's OPERATION and the adapter that calls it on one element */
    void (*opr)(void);
    void (*apply)(const fold_t *f, void *acc, const void *in);
    char *tmp;      /* elem bytes for a result returned through memory */
};

#define RED_LOOP(T)                                                                         \
    do {                                                                                    \
        T *x = acc;                                                                         \
        const T *y = in;                                                                    \
        for (size_t i = 0; i < count; i++)                                                  \
            x[i] = f->op == RED_SUM ? x[i] + y[i]                                           \
                 : f->op == RED_MIN ? (y[i] < x[i] ? y[i] : x[i])                           \
                                    : (y[i] > x[i] ? y[i] : x[i]);                          \
    } while (0)

#define SUM_LOOP(T)                                                                         \
    do {                                                                                    \
        T *x = acc;                                                                         \
        const T *y = in;                                                                    \
        for (size_t i = 0; i < count; i++)                                                  \
            x[i] += y[i];                                                                   \
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

/* The intrinsic reductions; the combination must have passed intrinsic_supported. */
static void fold_intrinsic(const fold_t *f, void *acc, const void *in, size_t count)
{
    switch (f->type) {
    case CAF_BT_INTEGER:
        switch (f->elem) {
        case 1: RED_LOOP(int8_t); return;
        case 2: RED_LOOP(int16_t); return;
        case 4: RED_LOOP(int32_t); return;
        case 8: RED_LOOP(int64_t); return;
        case 16: RED_LOOP(__int128); return;
        }
        return;
    case CAF_BT_REAL:
        if (f->elem == 4)
            RED_LOOP(float);
        else
            RED_LOOP(double);
        return;
    case CAF_BT_COMPLEX:
        if (f->elem == 8)
            SUM_LOOP(float _Complex);
        else
            SUM_LOOP(double _Complex);
        return;
    case CAF_BT_CHARACTER:
        for (size_t i = 0; i < count; i++) {
            char *x = (char *)acc + i * f->elem;
            const char *y = (const char *)in + i * f->elem;
            int cmp = char_cmp(y, x, f->elem, f->kind4);
            if ((f->op == RED_MIN && cmp < 0) || (f->op == RED_MAX && cmp > 0))
                memcpy(x, y, f->elem);
        }
        return;
    }
}

static void fold(const fold_t *f, void *acc, const void *in, size_t count)
{
    if (f->op != RED_USER) {
        fold_intrinsic(f, acc, in, count);
        return;
    }
    for (size_t i = 0; i < count; i++)
        f->apply(f, (char *)acc + i * f->elem, (const char *)in + i * f->elem);
}

/* REAL(10) and REAL(16) both take 16 bytes and the descriptor does not say which (nor does
 * anything else gfortran passes), so 16-byte reals and 32-byte complexes are refused. */
static const char *intrinsic_supported(int type, size_t elem, red_op_t op)
{
    static const char why[] = "argument type: CO_SUM takes integer, real or complex of kind 4 or "
                              "8; CO_MIN and CO_MAX integer, real of kind 4 or 8, or character "
                              "(real and complex of kind 10 and 16 are not told apart in "
                              "gfortran's descriptor)";
    switch (type) {
    case CAF_BT_INTEGER:
        return elem == 1 || elem == 2 || elem == 4 || elem == 8 || elem == 16 ? NULL : why;
    case CAF_BT_REAL:
        return elem == 4 || elem == 8 ? NULL : why;
    case CAF_BT_COMPLEX:
        return op == RED_SUM && (elem == 8 || elem == 16) ? NULL : why;
    case CAF_BT_CHARACTER:
        return op != RED_SUM ? NULL : why;
    }
    return why;
}

/* The kind of a character A (1 or 4) and its length in characters.  A's length arrives in
 * whichever slot the by-value ERRMSG= pushed it to (top of the file): without ERRMSG= (errmsg
 * NULL) in a_len; with a long ERRMSG= in the errmsg slot; with one of at most 8 bytes in a_len;
 * with one of 9 to 16 in the errmsg slot (CO_REDUCE) or errmsg_len (CO_MIN, CO_MAX).  The other
 * slots then hold string bytes, which make absurd lengths.  The first candidate that matches
 * elem_len (as kind 1 or kind 4) wins; none matching means kind 1. */
static int char_kind(size_t elem, const char *errmsg, int a_len, size_t errmsg_len, size_t *clen)
{
    size_t cand[3] = {(size_t)(a_len > 0 ? a_len : 0), 0, 0};
    if (errmsg != NULL) {
        cand[0] = (uintptr_t)errmsg;
        cand[1] = (size_t)(a_len > 0 ? a_len : 0);
        cand[2] = errmsg_len;
    }
    for (int k = 0; k < 3; k++) {
        if (cand[k] == 0)
            continue;
        if (cand[k] == elem) {
            *clen = elem;
            return 1;
        }
        if (elem % 4 == 0 && cand[k] == elem / 4) {
            *clen = elem / 4;
            return 4;
        }
    }
    *clen = elem;
    return 1;
}

/* ---------------------------------------------------------------- reduction */
/* Every member sends A's elements, one slot-full at a time; the result images fold them into
 * their A.  The fold must be valid (checked before, identically on every image). */
static void reduce(coll_t *c, caf_desc_t *a, const caf_section_t *s, int result_image,
                   const fold_t *f)
{
    caf_team_t *t = c->t;
    int to = -1; /* team index of the result image; -1: all */
    if (result_image != 0) {
        if (caf_target(c->entry, result_image, c->stat, NULL, 0) < 0)
            return;
        to = result_image - 1;
    }
    size_t per = s->elem > 0 ? c->slot / s->elem : s->count;
    int contiguous = section_contiguous(s), rc = RMX_OK;
    size_t e0 = 0;
    do { /* one round even for no elements: STAT= still learns of stopped or failed images */
        size_t cnt = s->count - e0 < per ? s->count - e0 : per;
        unsigned bank = next_bank(c);
        char *mine = slot_of(c, bank, t->me);
        copy_bytes(a, s, e0 * s->elem, cnt * s->elem, mine, 1);
        rc = coll_round(c, bank, 1, cnt * s->elem, to);
        if (rc != RMX_OK)
            break;
        if (cnt == 0 || (to >= 0 && to != t->me)) {
            e0 += cnt;
            continue;
        }
        if (contiguous) {
            char *acc = (char *)a->base_addr + e0 * s->elem;
            memcpy(acc, slot_of(c, bank, 0), cnt * s->elem);
            for (int i = 1; i < t->size; i++)
                fold(f, acc, slot_of(c, bank, i), cnt);
        } else {
            cursor_t cur;
            cursor_at(&cur, s, e0);
            for (size_t k = 0; k < cnt; k++, cursor_next(&cur)) {
                char *acc = (char *)a->base_addr + cur.off;
                memcpy(acc, slot_of(c, bank, 0) + k * s->elem, s->elem);
                for (int i = 1; i < t->size; i++)
                    fold(f, acc, slot_of(c, bank, i) + k * s->elem, 1);
            }
        }
        e0 += cnt;
    } while (e0 < s->count);
    caf_check(c->entry, rc, c->stat, NULL, 0);
}

static void co_intrinsic(const char *entry, caf_desc_t *a, int result_image, int *stat,
                         char *errmsg, int a_len, size_t errmsg_len, red_op_t op)
{
    coll_t c;
    caf_section_t s;
    coll_begin(&c, entry, stat);
    fold_t f = {.op = op, .type = a->dtype.type, .elem = caf_desc_elem(a)};
    const char *why = arg_section(a, &s) ? intrinsic_supported(f.type, f.elem, op)
                                         : "argument rank outside 0..15";
    if (why == NULL && f.elem > c.slot)
        why = "a character element longer than a collective scratch slot";
    /* Refused before any communication, identically on every image. */
    if (why != NULL) {
        caf_unsupported(entry, stat, NULL, 0, why);
        return;
    }
    if (arg_missing(entry, a, &s, stat))
        return;
    if (f.type == CAF_BT_CHARACTER)
        f.kind4 = char_kind(f.elem, errmsg, a_len, errmsg_len, &f.clen) == 4;
    reduce(&c, a, &s, result_image, &f);
}

/* ---------------------------------------------------------------- CO_REDUCE */
/* gfortran's CO_REDUCE flags (libgfortran.h GFC_CAF_*) */
#define CAF_BYREF     (1 << 0) /* the result is returned through a hidden first argument */
#define CAF_HIDDENLEN (1 << 1) /* character lengths follow the arguments */
#define CAF_ARG_VALUE (1 << 2) /* the arguments are passed by value */
#define CAF_ARG_DESC  (1 << 3) /* the arguments are arrays (never valid for CO_REDUCE) */

/* One adapter per C type: OPERATION(a, b) with its arguments by reference or by value, the
 * result returned the way the C type is (gfortran follows the C ABI there). */
#define OPR_ADAPTERS(T, name)                                                               \
    static void name##_ref(const fold_t *f, void *acc, const void *in)                      \
    {                                                                                       \
        T (*op)(const T *, const T *) = (T (*)(const T *, const T *))f->opr;                \
        T x, y, r;                                                                          \
        memcpy(&x, acc, sizeof(T));                                                         \
        memcpy(&y, in, sizeof(T));                                                          \
        r = op(&x, &y);                                                                     \
        memcpy(acc, &r, sizeof(T));                                                         \
    }                                                                                       \
    static void name##_val(const fold_t *f, void *acc, const void *in)                      \
    {                                                                                       \
        T (*op)(T, T) = (T (*)(T, T))f->opr;                                                \
        T x, y, r;                                                                          \
        memcpy(&x, acc, sizeof(T));                                                         \
        memcpy(&y, in, sizeof(T));                                                          \
        r = op(x, y);                                                                       \
        memcpy(acc, &r, sizeof(T));                                                         \
    }

OPR_ADAPTERS(int8_t, opr_i1)
OPR_ADAPTERS(int16_t, opr_i2)
OPR_ADAPTERS(int32_t, opr_i4)
OPR_ADAPTERS(int64_t, opr_i8)
OPR_ADAPTERS(__int128, opr_i16)
OPR_ADAPTERS(float, opr_r4)
OPR_ADAPTERS(double, opr_r8)
OPR_ADAPTERS(float _Complex, opr_c4)
OPR_ADAPTERS(double _Complex, opr_c8)

/* A character function: result and its length first, then the arguments and their lengths (in
 * characters).  An OPERATION with fixed lengths ignores them; one with len=* needs them. */
static void opr_char(const fold_t *f, void *acc, const void *in)
{
    void (*op)(char *, size_t, const char *, const char *, size_t, size_t) =
        (void (*)(char *, size_t, const char *, const char *, size_t, size_t))f->opr;
    op(f->tmp, f->clen, acc, in, f->clen, f->clen);
    memcpy(acc, f->tmp, f->elem);
}

/* The same with VALUE arguments (CHARACTER(1) in practice): a character aggregate of at most 8
 * bytes travels in one integer register, as a uint64_t holding its bytes does. */
static void opr_char_val(const fold_t *f, void *acc, const void *in)
{
    void (*op)(char *, size_t, uint64_t, uint64_t, size_t, size_t) =
        (void (*)(char *, size_t, uint64_t, uint64_t, size_t, size_t))f->opr;
    uint64_t x = 0, y = 0;
    memcpy(&x, acc, f->elem);
    memcpy(&y, in, f->elem);
    op(f->tmp, f->clen, x, y, f->clen, f->clen);
    memcpy(acc, f->tmp, f->elem);
}

/* A derived type of more than 16 bytes is returned in memory (x86-64 SysV: class MEMORY), the
 * caller passing where as a hidden first argument. */
static void opr_sret(const fold_t *f, void *acc, const void *in)
{
    void *(*op)(void *, const void *, const void *) =
        (void *(*)(void *, const void *, const void *))f->opr;
    op(f->tmp, acc, in);
    memcpy(acc, f->tmp, f->elem);
}

typedef void (*apply_t)(const fold_t *, void *, const void *);

/* The adapter for an integer or logical (by size), real or complex of elem bytes. */
static apply_t scalar_adapter(int type, size_t elem, int byval)
{
#define PICK(name) return byval ? name##_val : name##_ref
    if (type == CAF_BT_INTEGER || type == CAF_BT_LOGICAL || type == CAF_BT_CHARACTER) {
        switch (elem) {
        case 1: PICK(opr_i1);
        case 2: PICK(opr_i2);
        case 4: PICK(opr_i4);
        case 8: PICK(opr_i8);
        case 16: PICK(opr_i16);
        }
    } else if (type == CAF_BT_REAL) {
        if (elem == 4)
            PICK(opr_r4);
        if (elem == 8)
            PICK(opr_r8);
    } else if (type == CAF_BT_COMPLEX) {
        if (elem == 8)
            PICK(opr_c4);
        if (elem == 16)
            PICK(opr_c8);
    }
#undef PICK
    return NULL;
}

/* Choose how to call OPERATION; NULL, or why it cannot be called. */
static const char *reduce_adapter(fold_t *f, int flags)
{
    int byval = (flags & CAF_ARG_VALUE) != 0, byref = (flags & CAF_BYREF) != 0;
    if (flags & ~(CAF_BYREF | CAF_HIDDENLEN | CAF_ARG_VALUE | CAF_ARG_DESC))
        return "unknown OPERATION flags from the compiler";
    if (flags & CAF_ARG_DESC)
        return "OPERATION with array arguments";
    switch (f->type) {
    case CAF_BT_INTEGER:
    case CAF_BT_LOGICAL:
    case CAF_BT_REAL:
    case CAF_BT_COMPLEX:
        f->apply = byref ? NULL : scalar_adapter(f->type, f->elem, byval);
        return f->apply != NULL ? NULL
                                : "argument type: integer or logical of kind 1 to 16, real or "
                                  "complex of kind 4 or 8 (kinds 10 and 16 are not told apart "
                                  "in gfortran's descriptor)";
    case CAF_BT_CHARACTER:
        if (byref) {
            f->apply = !byval ? opr_char : f->elem <= 8 ? opr_char_val : NULL;
            return f->apply != NULL ? NULL : "character OPERATION with VALUE arguments of more "
                                             "than 8 bytes";
        }
        /* BIND(C) with CHARACTER(1): the character comes back by value, like an integer */
        f->apply = !byref && f->elem == 1 ? scalar_adapter(f->type, 1, byval) : NULL;
        return f->apply != NULL ? NULL : "character OPERATION returning its result by value";
    case CAF_BT_DERIVED:
        if (byval || byref)
            return "derived-type OPERATION with VALUE arguments";
        if (f->elem <= 16)
            return "derived type of 16 bytes or less: the registers OPERATION returns it in "
                   "depend on its components, which the descriptor does not describe";
        f->apply = opr_sret;
        return NULL;
    }
    return "argument type";
}

/* ---------------------------------------------------------------- entry points */
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
    IGNORE_ERRMSG();
    co_intrinsic("_gfortran_caf_co_sum", a, result_image, stat, NULL, 0, 0, RED_SUM);
}

void _gfortran_caf_co_min(caf_desc_t *a, int result_image, int *stat, char *errmsg, int a_len,
                          size_t errmsg_len)
{
    /* errmsg and errmsg_len only to find A's character length (char_kind), never written */
    co_intrinsic("_gfortran_caf_co_min", a, result_image, stat, errmsg, a_len, errmsg_len,
                 RED_MIN);
}

void _gfortran_caf_co_max(caf_desc_t *a, int result_image, int *stat, char *errmsg, int a_len,
                          size_t errmsg_len)
{
    co_intrinsic("_gfortran_caf_co_max", a, result_image, stat, errmsg, a_len, errmsg_len,
                 RED_MAX);
}

/* Each round's slot starts with the source's size of A, so that every image takes part in as
 * many rounds as the source needs even where its own A differs (non-conforming, but an
 * allocatable component left unallocated is easily done): reported then, never written. */
#define BCAST_HEADER ((size_t)64)

void _gfortran_caf_co_broadcast(caf_desc_t *a, int source_image, int *stat, char *errmsg,
                                size_t errmsg_len)
{
    IGNORE_ERRMSG();
    static const char entry[] = "_gfortran_caf_co_broadcast";
    coll_t c;
    caf_section_t s;
    coll_begin(&c, entry, stat);
    if (!arg_section(a, &s)) {
        caf_unsupported(entry, stat, NULL, 0, "argument rank outside 0..15");
        return;
    }
    if (caf_target(entry, source_image, stat, NULL, 0) < 0)
        return;
    caf_team_t *t = c.t;
    int src = source_image - 1, rc = RMX_OK;
    /* An unallocated allocatable component comes with base_addr NULL (and stale bounds) */
    size_t mine = a->base_addr != NULL ? s.count * s.elem : 0;
    size_t total = t->me == src ? mine : 0, done = 0, payload = c.slot - BCAST_HEADER;
    do { /* one round even for no bytes: STAT= still learns of stopped or failed images */
        size_t len = total - done < payload ? total - done : payload;
        unsigned bank = next_bank(&c);
        char *slot = slot_of(&c, bank, src);
        if (t->me == src) {
            uint64_t h = total;
            memcpy(slot, &h, sizeof(h));
            copy_bytes(a, &s, done, len, slot + BCAST_HEADER, 1);
        }
        rc = coll_round(&c, bank, t->me == src, BCAST_HEADER + len, -1);
        if (rc != RMX_OK)
            break;
        if (t->me != src) {
            uint64_t h;
            memcpy(&h, slot, sizeof(h));
            total = (size_t)h;
            len = total - done < payload ? total - done : payload;
            if (total == mine)
                copy_bytes(a, &s, done, len, slot + BCAST_HEADER, 0);
        }
        done += len;
    } while (done < total);
    if (rc == RMX_OK && total != mine) {
        caf_fail(entry, stat, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                 "A has %zu bytes here but %zu on SOURCE_IMAGE %d (an allocatable component "
                 "not allocated alike, or another shape); left unchanged",
                 mine, total, source_image);
        return;
    }
    caf_check(entry, rc, stat, NULL, 0);
}

void _gfortran_caf_co_reduce(caf_desc_t *a, void *(*opr)(void *, void *), int opr_flags,
                             int result_image, int *stat, char *errmsg, int a_len,
                             size_t errmsg_len)
{
    static const char entry[] = "_gfortran_caf_co_reduce";
    coll_t c;
    caf_section_t s;
    coll_begin(&c, entry, stat);
    fold_t f = {.op = RED_USER, .type = a->dtype.type, .elem = caf_desc_elem(a),
                .opr = (void (*)(void))opr};
    const char *why = !arg_section(a, &s) ? "argument rank outside 0..15"
                    : opr == NULL         ? "no OPERATION"
                                          : reduce_adapter(&f, opr_flags);
    if (why == NULL && f.elem > c.slot)
        why = "an element larger than a collective scratch slot";
    if (why != NULL) { /* before any communication, identically on every image */
        caf_unsupported(entry, stat, NULL, 0, why);
        return;
    }
    if (arg_missing(entry, a, &s, stat))
        return;
    if (f.type == CAF_BT_CHARACTER)
        f.kind4 = char_kind(f.elem, errmsg, a_len, errmsg_len, &f.clen) == 4;
    if (f.apply == opr_char || f.apply == opr_char_val || f.apply == opr_sret) {
        f.tmp = malloc(f.elem > 0 ? f.elem : 1);
        if (f.tmp == NULL) {
            caf_check(entry, RMX_ERR_NOMEM, stat, NULL, 0);
            return;
        }
    }
    reduce(&c, a, &s, result_image, &f);
    free(f.tmp);
}
