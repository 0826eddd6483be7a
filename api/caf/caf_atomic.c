/*
 * caf_atomic.c — atomic subroutines (ATOMIC_DEFINE, _REF, _CAS, _ADD/_AND/_OR/_XOR and their
 * FETCH_ forms), LOCK / UNLOCK, CRITICAL, and events (EVENT POST / WAIT / EVENT_QUERY), all as
 * rmx_rmw / rmx_rmw2 on the coarray's window, so no image other than the caller takes part.
 *
 * A lock variable is one 64-bit word: 0 when unlocked, else the 1-based number of the image
 * holding it (1 + its engine rank); LOCK is a compare-and-swap 0 -> me, UNLOCK a compare-and-swap
 * me -> 0; a lock held by a failed image is taken over (take_over_failed).  CRITICAL is gfortran's
 * lock on a variable of image 1, here image 1 of the initial team even inside teams
 * (critical_target).  An event variable is a 64-bit count.
 */
#include <sched.h>
#include "caf_internal.h"

/* No epoch: a Fortran atomic is no image control statement, and each element of an rmx_rmw is
 * atomic on its own (rmw.c: "without an assert the call is simply atomic"). */
#define CAF_ATOMIC_ASSERT 0

/* gfortran's atomic operation codes (libgfortran.h: GFC_CAF_ATOMIC_*) */
enum { CAF_ATOMIC_ADD = 1, CAF_ATOMIC_AND, CAF_ATOMIC_OR, CAF_ATOMIC_XOR };

static int atomic_dtype(const char *entry, int type, int kind, int *stat, rmx_dtype_t *dt)
{
    if ((type == CAF_BT_INTEGER || type == CAF_BT_LOGICAL) && (kind == 4 || kind == 8)) {
        *dt = kind == 4 ? RMX_INT32 : RMX_INT64;
        return 1;
    }
    caf_fail(entry, stat, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_DATATYPE,
             "atomic variable of type %d kind %d (integer or logical of kind 4 or 8 only)",
             type, kind);
    return 0;
}

/* Common prologue: image index, token and datatype valid.  Returns the 0-based target or -1. */
static int atomic_begin(const char *entry, caf_token_t *token, int image_index, int type,
                        int kind, int *stat, rmx_dtype_t *dt)
{
    int target = caf_target(entry, image_index, stat, NULL, 0);
    if (target < 0)
        return -1;
    if (token == NULL || token->win == NULL) {
        caf_fail(entry, stat, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_WIN, "coarray not allocated");
        return -1;
    }
    return atomic_dtype(entry, type, kind, stat, dt) ? target : -1;
}

void _gfortran_caf_atomic_define(caf_token_t *token, size_t offset, int image_index, void *value,
                                 int *stat, int type, int kind);
void _gfortran_caf_atomic_ref(caf_token_t *token, size_t offset, int image_index, void *value,
                              int *stat, int type, int kind);
void _gfortran_caf_atomic_cas(caf_token_t *token, size_t offset, int image_index, void *old,
                              void *compare, void *new_val, int *stat, int type, int kind);
void _gfortran_caf_atomic_op(int op, caf_token_t *token, size_t offset, int image_index,
                             void *value, void *old, int *stat, int type, int kind);

void _gfortran_caf_atomic_define(caf_token_t *token, size_t offset, int image_index, void *value,
                                 int *stat, int type, int kind)
{
    static const char entry[] = "_gfortran_caf_atomic_define";
    rmx_dtype_t dt;
    int target = atomic_begin(entry, token, image_index, type, kind, stat, &dt);
    if (target >= 0)
        caf_check(entry, rmx_rmw(token->win, value, 1, dt, NULL, target, offset + caf_token_disp(token, target),
                                 CAF_ATOMIC_ASSERT, RMX_OP_SWAP), stat, NULL, 0);
}

void _gfortran_caf_atomic_ref(caf_token_t *token, size_t offset, int image_index, void *value,
                              int *stat, int type, int kind)
{
    static const char entry[] = "_gfortran_caf_atomic_ref";
    rmx_dtype_t dt;
    int target = atomic_begin(entry, token, image_index, type, kind, stat, &dt);
    int64_t unused = 0;
    if (target >= 0)
        caf_check(entry, rmx_rmw(token->win, &unused, 1, dt, value, target, offset + caf_token_disp(token, target),
                                 CAF_ATOMIC_ASSERT, RMX_OP_NO_OP), stat, NULL, 0);
}

void _gfortran_caf_atomic_cas(caf_token_t *token, size_t offset, int image_index, void *old,
                              void *compare, void *new_val, int *stat, int type, int kind)
{
    static const char entry[] = "_gfortran_caf_atomic_cas";
    rmx_dtype_t dt;
    int target = atomic_begin(entry, token, image_index, type, kind, stat, &dt);
    if (target >= 0)
        caf_check(entry, rmx_rmw2(token->win, compare, 1, dt, new_val, old, target, offset + caf_token_disp(token, target),
                                  CAF_ATOMIC_ASSERT, RMX_OP2_COMP_SWAP), stat, NULL, 0);
}

void _gfortran_caf_atomic_op(int op, caf_token_t *token, size_t offset, int image_index,
                             void *value, void *old, int *stat, int type, int kind)
{
    static const char entry[] = "_gfortran_caf_atomic_op";
    rmx_rmw_op_t rop;
    switch (op) {
    case CAF_ATOMIC_ADD: rop = RMX_OP_SUM; break;
    case CAF_ATOMIC_AND: rop = RMX_OP_BAND; break;
    case CAF_ATOMIC_OR: rop = RMX_OP_BOR; break;
    case CAF_ATOMIC_XOR: rop = RMX_OP_BXOR; break;
    default:
        caf_fail(entry, stat, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_OP, "unknown atomic op %d", op);
        return;
    }
    rmx_dtype_t dt;
    int target = atomic_begin(entry, token, image_index, type, kind, stat, &dt);
    if (target >= 0)
        caf_check(entry, rmx_rmw(token->win, value, 1, dt, old, target, offset + caf_token_disp(token, target),
                                 CAF_ATOMIC_ASSERT, rop), stat, NULL, 0);
}

/* ---------------------------------------------------------------- LOCK / UNLOCK / CRITICAL */
void _gfortran_caf_lock(caf_token_t *token, size_t index, int image_index, int *acquired_lock,
                        int *stat, char *errmsg, size_t errmsg_len);
void _gfortran_caf_unlock(caf_token_t *token, size_t index, int image_index, int *stat,
                          char *errmsg, size_t errmsg_len);

/* Compare-and-swap on lock word `index` of target: returns the rmx code, *old the prior value. */
static int lock_cas(caf_token_t *t, size_t index, int target, int64_t expect, int64_t desired,
                    int64_t *old)
{
    return rmx_rmw2(t->win, &expect, 1, RMX_INT64, &desired, old, target,
                    index * sizeof(int64_t) + caf_token_disp(t, target), CAF_ATOMIC_ASSERT, RMX_OP2_COMP_SWAP);
}

/* gfortran locks a CRITICAL construct's variable on image 1 of the current team.  Inside teams
 * that would let one image of each team in at a time; the construct's lock lives on image 1 of
 * the initial team instead (libcaf.h lets the library choose the image), so one image of the
 * whole program executes it at a time, as outside teams. */
static int critical_target(const char *entry, int *stat, char *errmsg, size_t errmsg_len)
{
    if (rmx_peer_status(caf_ctx(), 0) == RMX_ERR_PEER) {
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_FAILED_IMAGE,
                 "image 1, which holds the CRITICAL construct's lock, has failed");
        return -1;
    }
    return 0;
}

static int lock_begin(const char *entry, caf_token_t *token, size_t index, int image_index,
                      int *stat, char *errmsg, size_t errmsg_len)
{
    int target = token != NULL && token->kind == CAF_REG_CRITICAL
                     ? critical_target(entry, stat, errmsg, errmsg_len)
                     : caf_target(entry, image_index, stat, errmsg, errmsg_len);
    if (target < 0)
        return -1;
    if (token == NULL || token->win == NULL || (index + 1) * sizeof(int64_t) > token->size) {
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                 "no lock variable %zu here", index);
        return -1;
    }
    /* An image control statement: this image's segment is complete before the lock changes. */
    int rc = rmx_sync_memory(caf_ctx());
    if (rc != RMX_OK) {
        caf_check(entry, rc, stat, errmsg, errmsg_len);
        return -1;
    }
    return target;
}

/* The lock is held by `holder` (engine rank + 1).  When that image has failed, the lock would
 * stay locked for ever: this image takes it over (Fortran 2018's STAT_UNLOCKED_FAILED_IMAGE
 * case; gfortran 12 has no such constant, so STAT_FAILED_IMAGE reports it, and without STAT= it
 * is error termination as for any failed image).  1 when done (stat set), 0 when the holder is
 * alive or another image took the lock over first (try again). */
static int take_over_failed(const char *entry, caf_token_t *token, size_t index, int target,
                            int64_t holder, int *acquired_lock, int *stat, char *errmsg,
                            size_t errmsg_len)
{
    rmx_ctx_t *c = caf_ctx();
    if (holder < 1 || holder > rmx_size(c) || rmx_peer_status(c, (int)holder - 1) != RMX_ERR_PEER)
        return 0;
    int64_t old = 0;
    int rc = lock_cas(token, index, target, holder, caf_me() + 1, &old);
    if (rc != RMX_OK) {
        caf_check(entry, rc, stat, errmsg, errmsg_len);
        return 1;
    }
    if (old != holder)
        return 0;
    if (acquired_lock != NULL)
        *acquired_lock = 1;
    caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_FAILED_IMAGE,
             "lock variable was held by image %lld, which has failed; this image holds it now",
             (long long)holder);
    return 1;
}

void _gfortran_caf_lock(caf_token_t *token, size_t index, int image_index, int *acquired_lock,
                        int *stat, char *errmsg, size_t errmsg_len)
{
    static const char entry[] = "_gfortran_caf_lock";
    int target = lock_begin(entry, token, index, image_index, stat, errmsg, errmsg_len);
    if (target < 0)
        return;
    int64_t me = caf_me() + 1, old = 0;
    for (unsigned tries = 0;; tries++) {
        int rc = lock_cas(token, index, target, 0, me, &old);
        if (rc != RMX_OK) {
            caf_check(entry, rc, stat, errmsg, errmsg_len);
            return;
        }
        if (old == 0)
            break;
        if (old == me) {
            caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_LOCKED,
                     "lock variable already locked by this image");
            return;
        }
        if (take_over_failed(entry, token, index, target, old, acquired_lock, stat, errmsg,
                             errmsg_len))
            return;
        if (acquired_lock != NULL) {
            *acquired_lock = 0;
            caf_ok(stat);
            return;
        }
        if (tries > 4)
            sched_yield(); /* the holder may need this core to get to its UNLOCK */
    }
    if (acquired_lock != NULL)
        *acquired_lock = 1;
    caf_ok(stat);
}

void _gfortran_caf_unlock(caf_token_t *token, size_t index, int image_index, int *stat,
                          char *errmsg, size_t errmsg_len)
{
    static const char entry[] = "_gfortran_caf_unlock";
    int target = lock_begin(entry, token, index, image_index, stat, errmsg, errmsg_len);
    if (target < 0)
        return;
    int64_t me = caf_me() + 1, old = 0;
    int rc = lock_cas(token, index, target, me, 0, &old);
    if (rc != RMX_OK)
        caf_check(entry, rc, stat, errmsg, errmsg_len);
    else if (old == 0)
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_UNLOCKED, "lock variable not locked");
    else if (old != me)
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_LOCKED_OTHER_IMAGE,
                 "lock variable locked by image %lld", (long long)old);
    else
        caf_ok(stat);
}

/* ---------------------------------------------------------------- events */
void _gfortran_caf_event_post(caf_token_t *token, size_t index, int image_index, int *stat,
                              char *errmsg, size_t errmsg_len);
void _gfortran_caf_event_wait(caf_token_t *token, size_t index, int until_count, int *stat,
                              char *errmsg, size_t errmsg_len);
void _gfortran_caf_event_query(caf_token_t *token, size_t index, int image_index, int *count,
                               int *stat);

void _gfortran_caf_event_post(caf_token_t *token, size_t index, int image_index, int *stat,
                              char *errmsg, size_t errmsg_len)
{
    static const char entry[] = "_gfortran_caf_event_post";
    int target = lock_begin(entry, token, index, image_index, stat, errmsg, errmsg_len);
    if (target < 0)
        return;
    int64_t one = 1;
    caf_check(entry, rmx_rmw(token->win, &one, 1, RMX_INT64, NULL, target,
                             index * sizeof(int64_t) + caf_token_disp(token, target),
                             CAF_ATOMIC_ASSERT, RMX_OP_SUM),
              stat, errmsg, errmsg_len);
}

void _gfortran_caf_event_wait(caf_token_t *token, size_t index, int until_count, int *stat,
                              char *errmsg, size_t errmsg_len)
{
    static const char entry[] = "_gfortran_caf_event_wait";
    int me = caf_me();
    /* Image index 0: this image, whatever its index in the current team (me + 1 is its engine
     * rank's, which inside a team names another image or none). */
    if (lock_begin(entry, token, index, 0, stat, errmsg, errmsg_len) < 0)
        return;
    int64_t want = until_count > 0 ? until_count : 1, count = 0, zero = 0;
    size_t disp = index * sizeof(int64_t) + caf_token_disp(token, me);
    /* Atomic reads of our own word progress the worker, so posts over any transport land. */
    for (unsigned tries = 0;; tries++) {
        int rc = rmx_rmw(token->win, &zero, 1, RMX_INT64, &count, me, disp, CAF_ATOMIC_ASSERT,
                         RMX_OP_NO_OP);
        if (rc != RMX_OK) {
            caf_check(entry, rc, stat, errmsg, errmsg_len);
            return;
        }
        if (count >= want)
            break;
        if (tries > 4)
            sched_yield();
    }
    int64_t minus = -want;
    caf_check(entry, rmx_rmw(token->win, &minus, 1, RMX_INT64, NULL, me, disp, CAF_ATOMIC_ASSERT,
                             RMX_OP_SUM), stat, errmsg, errmsg_len);
}

void _gfortran_caf_event_query(caf_token_t *token, size_t index, int image_index, int *count,
                               int *stat)
{
    static const char entry[] = "_gfortran_caf_event_query";
    int target = caf_target(entry, image_index, stat, NULL, 0);
    if (target < 0)
        return;
    if (token == NULL || token->win == NULL || (index + 1) * sizeof(int64_t) > token->size) {
        caf_fail(entry, stat, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG, "no event variable");
        return;
    }
    int64_t zero = 0, value = 0;
    int rc = rmx_rmw(token->win, &zero, 1, RMX_INT64, &value, target,
                     index * sizeof(int64_t) + caf_token_disp(token, target), CAF_ATOMIC_ASSERT, RMX_OP_NO_OP);
    if (rc == RMX_OK && count != NULL)
        *count = (int)value;
    caf_check(entry, rc, stat, NULL, 0);
}
