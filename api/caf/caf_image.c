/*
 * caf_image.c — the image and its coarrays: init/finalize, this_image/num_images, register and
 * deregister (each coarray, lock or critical construct is one rmx window), sync all / images /
 * memory, STOP and ERROR STOP, image status queries, RANDOM_INIT; and the error path shared by
 * every entry point of libcaf_rmx.
 *
 * Initialisation is lazy: gfortran registers static coarrays from ELF constructors, before main()
 * calls _gfortran_caf_init, so whichever entry point comes first creates the context.
 *
 * Failed images (Fortran 2018): FAIL IMAGE leaves through rmx_fail, which marks the image failed
 * in every other image's control block.  From then on every statement involving it reports
 * STAT_FAILED_IMAGE (caf_target for coindexed access, LOCK, EVENT POST; caf_team_sync for SYNC
 * ALL, ALLOCATE and the collectives; rmx_sync_images for SYNC IMAGES), or terminates the program
 * without STAT=; the survivors keep synchronizing among themselves and terminate normally.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "caf_internal.h"

static rmx_ctx_t *ctx;
static int finalized;

/* Every token ever registered and not deregistered, so finalize can free them. */
typedef struct token_node {
    struct token_node *next;
    caf_token_t *token;
} token_node_t;
static token_node_t *live_tokens;

static void die(const char *entry, const char *msg) __attribute__((noreturn));
static void die(const char *entry, const char *msg)
{
    fprintf(stderr, "libcaf_rmx: %s: %s\n", entry, msg);
    fflush(stderr);
    exit(1);
}

rmx_ctx_t *caf_ctx(void)
{
    if (ctx != NULL)
        return ctx;
    if (finalized)
        die("libcaf_rmx", "coarray operation after the image was finalized");
    int rc = rmx_init(NULL, &ctx);
    if (rc != RMX_OK) {
        ctx = NULL;
        die("_gfortran_caf_init", rmx_strerror(rc));
    }
    rc = caf_heap_init(ctx); /* collective: every image comes here first */
    if (rc != RMX_OK)
        die("_gfortran_caf_init", rmx_strerror(rc));
    return ctx;
}

int caf_me(void) { return rmx_rank(caf_ctx()); }
int caf_nimages(void) { return rmx_size(caf_ctx()); }

static void set_errmsg(char *errmsg, size_t errmsg_len, const char *msg)
{
    if (errmsg == NULL || errmsg_len == 0)
        return;
    size_t n = strlen(msg);
    if (n > errmsg_len)
        n = errmsg_len;
    memcpy(errmsg, msg, n);
    memset(errmsg + n, ' ', errmsg_len - n); /* Fortran strings are blank padded */
}

void caf_fail(const char *entry, int *stat, char *errmsg, size_t errmsg_len, int statval,
              const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (stat == NULL)
        die(entry, msg);
    *stat = statval;
    set_errmsg(errmsg, errmsg_len, msg);
}

static int stat_of(int rc)
{
    if (rc == RMX_ERR_PEER)
        return CAF_STAT_FAILED_IMAGE;
    if (rc == RMX_ERR_STOPPED)
        return CAF_STAT_STOPPED_IMAGE;
    return CAF_STAT_RMX_BASE - rc;
}

int caf_check(const char *entry, int rc, int *stat, char *errmsg, size_t errmsg_len)
{
    if (rc == RMX_OK)
        caf_ok(stat);
    else
        caf_fail(entry, stat, errmsg, errmsg_len, stat_of(rc), "%s", rmx_strerror(rc));
    return rc;
}

void caf_unsupported(const char *entry, int *stat, char *errmsg, size_t errmsg_len,
                     const char *why)
{
    /* Printed even with STAT=: a program that checks stat should still learn why. */
    fprintf(stderr, "libcaf_rmx: %s: not supported: %s\n", entry, why);
    fflush(stderr);
    caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_UNSUPPORTED, "not supported: %s", why);
}

int caf_target(const char *entry, int image_index, int *stat, char *errmsg, size_t errmsg_len)
{
    caf_team_t *t = caf_team();
    if (image_index == 0) /* gfortran's "no image selector": LOCK(l), ATOMIC_REF(v, a) */
        return caf_me();
    if (image_index < 1 || image_index > t->size) {
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_RMX_BASE - RMX_ERR_RANK,
                 "image index %d outside 1..%d", image_index, t->size);
        return -1;
    }
    int rank = t->ranks[image_index - 1];
    /* A failed image's memory may still be mapped here (shared memory outlives the process), so
     * the engine could serve a stale copy: its failure is looked up first, in this image's own
     * control block (rmx_fail's mark), which costs a load. */
    if (rmx_peer_status(caf_ctx(), rank) == RMX_ERR_PEER) {
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_FAILED_IMAGE,
                 "image %d has failed", image_index);
        return -1;
    }
    return rank;
}

int caf_team_failures(const caf_team_t *t)
{
    int n = 0;
    for (int i = 0; i < t->size; i++)
        n += i != t->me && rmx_peer_status(caf_ctx(), t->ranks[i]) == RMX_ERR_PEER;
    return n;
}

/* ---------------------------------------------------------------- init / finalize */
void _gfortran_caf_init(int *argc, char ***argv);
void _gfortran_caf_finalize(void);
int _gfortran_caf_this_image(int distance);
int _gfortran_caf_num_images(int distance, int failed);

void _gfortran_caf_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    (void)caf_ctx();
}

void _gfortran_caf_finalize(void)
{
    if (ctx == NULL)
        return;
    /* An image that has failed (FAIL IMAGE, or a crash) does not stop the survivors from
     * terminating normally: the engine then reports RMX_ERR_PEER, which is no error here. */
    int rc = rmx_finalize(ctx); /* collective: completes everything, frees every window */
    if (rc == RMX_ERR_PEER)
        rc = RMX_OK;
    ctx = NULL;
    finalized = 1;
    caf_heap_fini();
    caf_team_reset();
    while (live_tokens != NULL) {
        token_node_t *n = live_tokens;
        live_tokens = n->next;
        free(n->token);
        free(n);
    }
    if (rc != RMX_OK)
        die("_gfortran_caf_finalize", rmx_strerror(rc));
}

/* The team `distance` levels above the current one (the initial team at most). */
static caf_team_t *team_above(int distance)
{
    caf_team_t *t = caf_team();
    for (; distance > 0 && t->parent != NULL; distance--)
        t = t->parent;
    return t;
}

int _gfortran_caf_this_image(int distance)
{
    return team_above(distance)->me + 1;
}

int _gfortran_caf_num_images(int distance, int failed)
{
    caf_team_t *t = team_above(distance);
    /* failed: 1 FAILED=.true. (count the failed images), 0 FAILED=.false. (the others), else
     * absent.  A failed image is one that executed FAIL IMAGE or whose process died. */
    if (failed < 0)
        return t->size;
    int nfailed = caf_team_failures(t);
    return failed > 0 ? nfailed : t->size - nfailed;
}

/* ---------------------------------------------------------------- register / deregister */
void _gfortran_caf_register(size_t size, int type, caf_token_t **token, caf_desc_t *desc,
                            int *stat, char *errmsg, size_t errmsg_len);
void _gfortran_caf_deregister(caf_token_t **token, int type, int *stat, char *errmsg,
                              size_t errmsg_len);

static int track_token(caf_token_t *t)
{
    token_node_t *n = malloc(sizeof(*n));
    if (n == NULL)
        return RMX_ERR_NOMEM;
    n->token = t;
    n->next = live_tokens;
    live_tokens = n;
    return RMX_OK;
}

static void untrack_token(caf_token_t *t)
{
    for (token_node_t **p = &live_tokens; *p != NULL; p = &(*p)->next)
        if ((*p)->token == t) {
            token_node_t *n = *p;
            *p = n->next;
            free(n);
            return;
        }
}

/* Bytes of window behind `size` as gfortran means it: bytes for coarrays, a count of lock or event
 * variables otherwise (each one 8-byte word, operated on by remote atomics). */
static size_t window_bytes(size_t size, int type)
{
    switch (type) {
    case CAF_REG_LOCK_STATIC:
    case CAF_REG_LOCK_ALLOC:
    case CAF_REG_CRITICAL:
    case CAF_REG_EVENT_STATIC:
    case CAF_REG_EVENT_ALLOC:
        return size * sizeof(int64_t);
    default:
        return size;
    }
}

/* Inside a team a coarray cannot have a window of its own (window creation is collective over
 * every image): each member allocates its copy in its heap and the members exchange where. */
typedef struct heap_rec {
    uint64_t disp;
    int64_t ok;
} heap_rec_t;

/* *heap_full: this image's copy did not fit in its heap window (the caller says so, through
 * ERRMSG= when the program gave STAT=). */
static int register_in_team(caf_team_t *team, caf_token_t *t, int *heap_full)
{
    size_t d = caf_heap_alloc(t->size);
    heap_rec_t mine = {.disp = d, .ok = d != (size_t)-1};
    heap_rec_t *all = malloc((size_t)team->size * sizeof(*all));
    t->disp = calloc((size_t)caf_nimages(), sizeof(size_t));
    if (all == NULL || t->disp == NULL)
        mine.ok = 0;
    if (mine.ok) /* zeroed, as a fresh window is: lock and event variables start unlocked/0 */
        memset(caf_heap_base() + d, 0, t->size);
    int rc = caf_team_allgather(team, &mine, sizeof(mine), all); /* all == NULL: mine.ok is 0 */
    int others_failed = 0; /* this image's own failure is what it reports, wherever it stands */
    for (int i = 0; rc == RMX_OK && mine.ok && i < team->size; i++)
        others_failed |= i != team->me && !all[i].ok;
    if (rc == RMX_OK && (!mine.ok || others_failed))
        rc = !mine.ok ? RMX_ERR_NOMEM : RMX_ERR_COLLECTIVE;
    *heap_full = d == (size_t)-1;
    if (rc != RMX_OK) {
        caf_heap_free(d);
        free(all);
        free(t->disp);
        t->disp = NULL;
        return rc;
    }
    for (int i = 0; i < team->size; i++)
        t->disp[team->ranks[i]] = (size_t)all[i].disp;
    free(all);
    t->win = caf_heap_win();
    t->base = caf_heap_base() + d;
    t->team = team;
    return RMX_OK;
}

/* Deallocate a coarray: collective over the team it was allocated in, and complete (the others
 * may still be accessing it until everyone is here). */
static int release_coarray(caf_token_t *t)
{
    int rc;
    if (t->disp != NULL) {
        rc = caf_team_sync(t->team);
        caf_heap_free(t->disp[rmx_rank(caf_ctx())]);
        free(t->disp);
        t->disp = NULL;
        t->win = NULL;
    } else {
        rc = rmx_win_free(&t->win); /* collective: completes, then every image lets go */
    }
    untrack_token(t);
    free(t);
    return rc;
}

int caf_release_team_coarrays(caf_team_t *team)
{
    int rc = RMX_OK;
    /* Most recent first: every member registered them in the same order. */
    for (token_node_t *n = live_tokens, *next; n != NULL; n = next) {
        next = n->next;
        if (n->token->team == team) {
            /* gfortran's descriptor is the program's variable: ALLOCATED() reads its address. */
            if (n->token->desc != NULL)
                ((caf_desc_t *)n->token->desc)->base_addr = NULL;
            int r = release_coarray(n->token);
            if (rc == RMX_OK)
                rc = r;
            next = live_tokens; /* the list changed */
        }
    }
    return rc;
}

/* gfortran 12 follows every ALLOCATE of a coarray with a SYNC ALL of its own, without STAT= even
 * when the ALLOCATE has one.  After an ALLOCATE (STAT=) that reported STAT_FAILED_IMAGE, that
 * SYNC ALL would be error termination for the same failure the program was just told of and
 * chose to survive: set here, it lets that one call synchronize the survivors and return. */
static int alloc_failed_image;

/* An ALLOCATE statement (static coarrays are registered before the program starts). */
static int is_allocate(int type)
{
    return type == CAF_REG_COARRAY_ALLOC || type == CAF_REG_LOCK_ALLOC ||
           type == CAF_REG_EVENT_ALLOC;
}

void _gfortran_caf_register(size_t size, int type, caf_token_t **token, caf_desc_t *desc,
                            int *stat, char *errmsg, size_t errmsg_len)
{
    static const char entry[] = "_gfortran_caf_register";
    if (type == CAF_REG_ALLOC_REGISTER_ONLY || type == CAF_REG_ALLOC_ALLOCATE_ONLY) {
        caf_register_component(size, type, token, desc, stat, errmsg, errmsg_len);
        return;
    }
    if (type < CAF_REG_COARRAY_STATIC || type > CAF_REG_EVENT_ALLOC || token == NULL) {
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                 "unknown registration type %d", type);
        return;
    }
    rmx_ctx_t *c = caf_ctx();
    caf_token_t *t = calloc(1, sizeof(*t));
    if (t == NULL || track_token(t) != RMX_OK) {
        free(t);
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_RMX_BASE - RMX_ERR_NOMEM,
                 "out of memory");
        return;
    }
    t->kind = type;
    t->size = window_bytes(size, type);
    caf_team_t *team = caf_team();
    int rc, heap_full = 0;
    if (team->parent != NULL) {
        rc = register_in_team(team, t, &heap_full);
    } else {
        /* ALLOCATE of a coarray synchronizes all images: this image's segment ends here, and
         * the window creation below is collective.  A zero-size coarray still gets a non-NULL
         * base, since gfortran reads base_addr != NULL as "allocated".  The synchronization is a
         * barrier: once an image has failed it fails on every survivor alike (STAT_FAILED_IMAGE,
         * nothing allocated), where the window's creation would wait for the failed image. */
        rc = is_allocate(type) ? caf_team_sync(team) : RMX_OK;
        if (rc == RMX_OK)
            rc = rmx_win_allocate(c, t->size > 0 ? t->size : 1, &t->base, &t->win);
    }
    if (rc != RMX_OK) {
        size_t bytes = t->size;
        untrack_token(t);
        free(t);
        alloc_failed_image = is_allocate(type) && rc == RMX_ERR_PEER && stat != NULL;
        if (heap_full && rc == RMX_ERR_NOMEM) /* in ERRMSG= under STAT=, else the message */
            caf_fail(entry, stat, errmsg, errmsg_len, stat_of(rc),
                     "%zu bytes do not fit in the heap window (RMX_CAF_HEAP, default %zu MiB)",
                     bytes, CAF_HEAP_DEFAULT >> 20);
        else
            caf_check(entry, rc, stat, errmsg, errmsg_len);
        return;
    }
    *token = t;
    if (desc != NULL)
        desc->base_addr = t->base;
    if (type == CAF_REG_COARRAY_ALLOC)
        t->desc = desc;
    caf_ok(stat);
}

void _gfortran_caf_deregister(caf_token_t **token, int type, int *stat, char *errmsg,
                              size_t errmsg_len)
{
    static const char entry[] = "_gfortran_caf_deregister";
    if (token == NULL || *token == NULL) {
        caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                 "coarray is not registered");
        return;
    }
    if (type != 0 || caf_component_token(token)) {
        /* CAF_DEREGTYPE_COARRAY_DEALLOCATE_ONLY, or the token of a component */
        caf_deregister_component(token, type, stat, errmsg, errmsg_len);
        return;
    }
    caf_desc_t *desc = (caf_desc_t *)(*token)->desc;
    int rc = release_coarray(*token);
    *token = NULL;
    /* With a failed image the coarray is deallocated here all the same (Fortran 2018: on the
     * active images, STAT_FAILED_IMAGE), but gfortran clears the descriptor only when STAT= is 0:
     * clear it here, so ALLOCATED() says so and a later ALLOCATE works. */
    if (rc == RMX_ERR_PEER && desc != NULL)
        desc->base_addr = NULL;
    caf_check(entry, rc, stat, errmsg, errmsg_len);
}

/* ---------------------------------------------------------------- image control */
/* libcaf.h declares ERRMSG= of the SYNC statements as char *, but gfortran 12.2 passes the address
 * of a pointer to the string there (seen in its generated code; LOCK, CO_* and ALLOCATE pass the
 * string itself).  So these three take char ** and look through it. */
void _gfortran_caf_sync_all(int *stat, char **errmsg, size_t errmsg_len);
void _gfortran_caf_sync_memory(int *stat, char **errmsg, size_t errmsg_len);
void _gfortran_caf_sync_images(int count, int images[], int *stat, char **errmsg,
                               size_t errmsg_len);

static char *sync_errmsg(char **errmsg)
{
    return errmsg != NULL ? *errmsg : NULL;
}

void _gfortran_caf_sync_all(int *stat, char **errmsg_p, size_t errmsg_len)
{
    int rc = caf_team_sync(caf_team());
    if (alloc_failed_image && stat == NULL && rc == RMX_ERR_PEER)
        rc = RMX_OK; /* the ALLOCATE's own SYNC ALL: its STAT= reported the failure already */
    alloc_failed_image = 0;
    caf_check("_gfortran_caf_sync_all", rc, stat, sync_errmsg(errmsg_p), errmsg_len);
}

void _gfortran_caf_sync_memory(int *stat, char **errmsg_p, size_t errmsg_len)
{
    caf_check("_gfortran_caf_sync_memory", rmx_sync_memory(caf_ctx()), stat,
              sync_errmsg(errmsg_p), errmsg_len);
}

void _gfortran_caf_sync_images(int count, int images[], int *stat, char **errmsg_p,
                               size_t errmsg_len)
{
    static const char entry[] = "_gfortran_caf_sync_images";
    char *errmsg = sync_errmsg(errmsg_p);
    rmx_ctx_t *c = caf_ctx();
    caf_team_t *t = caf_team();
    if (count < 0 && t->parent == NULL) { /* SYNC IMAGES (*) in the initial team */
        caf_check(entry, rmx_sync_images(c, NULL, 0), stat, errmsg, errmsg_len);
        return;
    }
    int n = t->size;
    if (count < 0) { /* SYNC IMAGES (*) in a team: every other image of it */
        caf_check(entry, caf_team_sync_others(t), stat, errmsg, errmsg_len);
        return;
    }
    int *ranks = malloc((size_t)(count > 0 ? count : 1) * sizeof(int));
    uint8_t *seen = calloc((size_t)n, 1);
    if (ranks == NULL || seen == NULL) {
        free(ranks);
        free(seen);
        caf_check(entry, RMX_ERR_NOMEM, stat, errmsg, errmsg_len);
        return;
    }
    int bad = 0;
    for (int i = 0; i < count && !bad; i++) {
        if (images[i] < 1 || images[i] > n) {
            caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_RMX_BASE - RMX_ERR_RANK,
                     "image index %d outside 1..%d", images[i], n);
            bad = 1;
        } else if (seen[images[i] - 1]++) {
            caf_fail(entry, stat, errmsg, errmsg_len, CAF_STAT_DUP_SYNC_IMAGES,
                     "image %d listed twice", images[i]);
            bad = 1;
        }
        ranks[i] = bad ? 0 : t->ranks[images[i] - 1];
    }
    if (!bad)
        caf_check(entry, rmx_sync_images(c, ranks, count), stat, errmsg, errmsg_len);
    free(ranks);
    free(seen);
}

/* ---------------------------------------------------------------- termination */
void _gfortran_caf_stop_numeric(int code, bool quiet) __attribute__((noreturn));
void _gfortran_caf_stop_str(const char *str, size_t len, bool quiet) __attribute__((noreturn));
void _gfortran_caf_error_stop(int code, bool quiet) __attribute__((noreturn));
void _gfortran_caf_error_stop_str(const char *str, size_t len, bool quiet)
    __attribute__((noreturn));
void _gfortran_caf_fail_image(void) __attribute__((noreturn));

/* Normal termination: this image takes part in the collective finalize, so images still running
 * can finish accessing its coarrays; then the process ends with the stop code. */
void _gfortran_caf_stop_numeric(int code, bool quiet)
{
    if (!quiet)
        fprintf(stderr, "STOP %d\n", code);
    _gfortran_caf_finalize();
    exit(code);
}

void _gfortran_caf_stop_str(const char *str, size_t len, bool quiet)
{
    if (!quiet && len > 0) /* a bare STOP arrives here with no string: silent, as without coarrays */
        fprintf(stderr, "STOP %.*s\n", (int)len, str);
    _gfortran_caf_finalize();
    exit(0);
}

/* Error termination: end at once with a failure status; the launcher (mpirun) takes the other
 * images down.  Fortran units are flushed by libgfortran's exit handler. */
void _gfortran_caf_error_stop(int code, bool quiet)
{
    if (!quiet)
        fprintf(stderr, "ERROR STOP %d\n", code);
    fflush(stderr);
    exit(code != 0 ? code : 1);
}

void _gfortran_caf_error_stop_str(const char *str, size_t len, bool quiet)
{
    if (!quiet)
        fprintf(stderr, "ERROR STOP %.*s\n", (int)len, str);
    fflush(stderr);
    exit(1);
}

/* FAIL IMAGE: this image stops taking part without terminating the others, which from then on
 * see it as failed (IMAGE_STATUS, FAILED_IMAGES, STAT_FAILED_IMAGE from statements involving it).
 * rmx_fail marks it failed in every live image's control block, so they need not wait for the
 * transport to notice the process is gone, and leaves the launcher as a finished process would:
 * mpirun counts it as a normal exit, and the job's status is the survivors'.  Output written so
 * far is flushed; nothing else runs (no finalize: the survivors do not wait for this image). */
void _gfortran_flush_i4(int32_t *unit);

void _gfortran_caf_fail_image(void)
{
    _gfortran_flush_i4(NULL); /* every Fortran unit */
    fflush(NULL);
    int rc = rmx_fail(caf_ctx());
    if (rc != RMX_OK)
        die("_gfortran_caf_fail_image", rmx_strerror(rc));
    _exit(0);
}

/* ---------------------------------------------------------------- image status */
int _gfortran_caf_image_status(int image, void *team);
void _gfortran_caf_failed_images(caf_desc_t *array, void *team, int *kind);
void _gfortran_caf_stopped_images(caf_desc_t *array, void *team, int *kind);

/* The TEAM argument of the status intrinsics.  gfortran 12 accepts none ("not yet supported")
 * and passes -1 (IMAGE_STATUS) or NULL (FAILED_IMAGES, STOPPED_IMAGES): the current team.
 * Anything else is taken for a team variable's value, a caf_team_t * (caf_team.c). */
static caf_team_t *status_team(void *team)
{
    uintptr_t v = (uintptr_t)team;
    if (team == NULL || v == UINTPTR_MAX || v == UINT32_MAX)
        return caf_team();
    return team;
}

/* IMAGE_STATUS's value for engine rank r. */
static int status_of_rank(int r)
{
    int rc = rmx_peer_status(caf_ctx(), r);
    return rc == RMX_ERR_STOPPED ? CAF_STAT_STOPPED_IMAGE
         : rc == RMX_ERR_PEER    ? CAF_STAT_FAILED_IMAGE
                                 : 0;
}

int _gfortran_caf_image_status(int image, void *team)
{
    caf_team_t *t = status_team(team);
    if (image < 1 || image > t->size)
        caf_fail("_gfortran_caf_image_status", NULL, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_RANK,
                 "image index %d outside 1..%d", image, t->size);
    return status_of_rank(t->ranks[image - 1]);
}

/* The allocated rank-1 integer result of FAILED_IMAGES / STOPPED_IMAGES: the image indices in
 * the team, in increasing order, whose IMAGE_STATUS is `status`. */
static void image_list(const char *entry, caf_desc_t *array, void *team, int *kind, int status)
{
    int k = kind != NULL ? *kind : 4;
    if (array == NULL || (k != 1 && k != 2 && k != 4 && k != 8))
        die(entry, "bad result array or kind");
    caf_team_t *t = status_team(team);
    int n = t->size, count = 0;
    array->base_addr = malloc((size_t)k * (size_t)(n > 0 ? n : 1));
    if (array->base_addr == NULL)
        die(entry, "out of memory");
    for (int i = 0; i < n; i++) {
        if (status_of_rank(t->ranks[i]) != status)
            continue;
        int64_t image = i + 1;
        char *slot = (char *)array->base_addr + (size_t)count++ * (size_t)k;
        switch (k) {
        case 1: *(int8_t *)slot = (int8_t)image; break;
        case 2: *(int16_t *)slot = (int16_t)image; break;
        case 4: *(int32_t *)slot = (int32_t)image; break;
        default: *(int64_t *)slot = image; break;
        }
    }
    array->dtype.elem_len = (size_t)k;
    array->dtype.rank = 1;
    array->dtype.type = CAF_BT_INTEGER;
    array->span = k;
    /* Zero-based: gfortran rebases the result as ubound + 1 (-fdump-tree-original), so 1-based
     * bounds here made every list one element too long (an empty one had size 1). */
    array->dim[0].lbound = 0;
    array->dim[0].ubound = count - 1;
    array->dim[0].stride = 1;
    array->offset = 0;
}

void _gfortran_caf_failed_images(caf_desc_t *array, void *team, int *kind)
{
    image_list("_gfortran_caf_failed_images", array, team, kind, CAF_STAT_FAILED_IMAGE);
}

void _gfortran_caf_stopped_images(caf_desc_t *array, void *team, int *kind)
{
    image_list("_gfortran_caf_stopped_images", array, team, kind, CAF_STAT_STOPPED_IMAGE);
}

/* ---------------------------------------------------------------- RANDOM_INIT */
/* Fortran 2018 16.9.155.  REPEATABLE=.true.: the same seed each time RANDOM_INIT is called from
 * the same image (of the initial team), in every run; .false.: an unpredictably different seed on
 * each call.  IMAGE_DISTINCT=.true.: a seed distinct from every other image's; .false.: one that
 * does not depend on the calling image.  The one case that needs the images to agree on something
 * unpredictable (.false., .false.) takes image 1's run value, drawn at start-up and kept in its
 * heap window's header (caf_heap.c): a read, not a synchronization (RANDOM_INIT is no image control
 * statement).  The seed goes through libgfortran's RANDOM_SEED(PUT=), as a program would. */
void _gfortran_caf_random_init(bool repeatable, bool image_distinct);
void _gfortran_random_seed_i4(int32_t *size, caf_desc_t *put, caf_desc_t *get);

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t caf_run_value(void)
{
    static uint64_t value;
    if (value != 0)
        return value;
    uint64_t v = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f == NULL || fread(&v, sizeof(v), 1, f) != 1) {
        struct timespec ts; /* no /dev/urandom: time and pid still differ between runs */
        clock_gettime(CLOCK_REALTIME, &ts);
        v = (uint64_t)ts.tv_sec * UINT64_C(1000000007) ^ (uint64_t)ts.tv_nsec ^
            (uint64_t)getpid() << 32;
    }
    if (f != NULL)
        fclose(f);
    uint64_t mix = v;
    value = splitmix64(&mix) | 1; /* nonzero: "written" to whoever reads it (random_key) */
    return value;
}

/* Image 1's run value (the first image that has not failed, if image 1 has).  Image 1 writes it
 * into its heap header right after the heap window's collective creation, which every image has
 * passed; a reader that is quicker still finds 0 there and reads again. */
static uint64_t image1_run_value(void)
{
    static uint64_t value;
    rmx_ctx_t *c = caf_ctx();
    int from = 0;
    while (from < rmx_size(c) - 1 && rmx_peer_status(c, from) == RMX_ERR_PEER)
        from++;
    while (value == 0) {
        int rc = rmx_get(caf_heap_win(), &value, sizeof(value), from, CAF_HEAP_RUN_VALUE_DISP);
        if (rc != RMX_OK)
            caf_check("_gfortran_caf_random_init", rc, NULL, NULL, 0);
        if (value == 0)
            (void)rmx_progress(c);
    }
    return value;
}

/* The 64-bit key the seed is drawn from. */
static uint64_t random_key(bool repeatable, bool image_distinct)
{
    /* Calls so far with REPEATABLE=.false., per IMAGE_DISTINCT: with .false. every image that
     * calls as often gets the same key, and each call a new one. */
    static uint64_t calls[2];
    const uint64_t fixed = UINT64_C(0x5eed0f0f1eedc0de); /* REPEATABLE: the same in every run */
    uint64_t image = (uint64_t)caf_me() + 1;
    if (repeatable)
        return fixed ^ (image_distinct ? image * UINT64_C(0x9e3779b97f4a7c15) : 0);
    uint64_t n = ++calls[image_distinct];
    if (image_distinct)
        return caf_run_value() ^ image * UINT64_C(0x9e3779b97f4a7c15) ^
               n * UINT64_C(0xd1b54a32d192ed03);
    return image1_run_value() ^ n * UINT64_C(0xd1b54a32d192ed03);
}

void _gfortran_caf_random_init(bool repeatable, bool image_distinct)
{
    int32_t n = 0;
    _gfortran_random_seed_i4(&n, NULL, NULL); /* RANDOM_SEED(SIZE=n) */
    if (n <= 0 || n > 1024)
        die("_gfortran_caf_random_init", "unexpected RANDOM_SEED size");
    int32_t seed[1024];
    uint64_t x = random_key(repeatable, image_distinct);
    for (int32_t i = 0; i < n; i++)
        seed[i] = (int32_t)(uint32_t)splitmix64(&x);
    caf_desc_max_t put = {.base_addr = seed, .offset = 0,
                          .dtype = {.elem_len = sizeof(int32_t), .version = 0, .rank = 1,
                                    .type = CAF_BT_INTEGER, .attribute = 0},
                          .span = sizeof(int32_t),
                          .dim = {{.stride = 1, .lbound = 1, .ubound = n}}};
    _gfortran_random_seed_i4(NULL, caf_desc_of_max(&put), NULL); /* RANDOM_SEED(PUT=seed) */
}

/* ---------------------------------------------------------------- extension: engine counters */
/* Callable from Fortran (bind(C, name='caf_rmx_stats'), integer(c_int64_t) :: s(13)) so coarray
 * tests can check what the engine did, not only the data: s = puts, gets, atomics, ucp_puts,
 * ucp_gets, flushes_ep, flushes_worker, flow_waits, waits_avoided, barriers, direct_puts,
 * direct_gets, landed_puts (this image; the last three: copies to or from images whose memory
 * is mapped here, by rmx or by UCX). */
void caf_rmx_stats(int64_t s[13]);

void caf_rmx_stats(int64_t s[13])
{
    rmx_stats_t st;
    if (rmx_stats(caf_ctx(), &st) != RMX_OK)
        die("caf_rmx_stats", "rmx_stats failed");
    uint64_t v[13] = {st.puts, st.gets, st.atomics, st.ucp_puts, st.ucp_gets, st.flushes_ep,
                      st.flushes_worker, st.flow_waits, st.waits_avoided, st.barriers,
                      st.direct_puts, st.direct_gets, st.landed_puts};
    for (int i = 0; i < 13; i++)
        s[i] = (int64_t)v[i];
}
