/*
 * caf_team.c — Fortran 2018 teams: FORM TEAM, CHANGE TEAM, END TEAM, SYNC TEAM, TEAM_NUMBER,
 * GET_TEAM, and the team-relative image numbering every other entry point uses (caf_team()).
 *
 * A team is a list of engine ranks.  Team-wide agreement needs no engine collective (those span
 * every image): caf_team_allgather puts each member's record into a slot of every other member's
 * exchange area (caf_heap.c), then the members synchronize pairwise (rmx_sync_images, which also
 * completes the puts).  Slots are indexed by the writer's engine rank and there are two banks,
 * chosen by the parity of the team's own collective count: a member can write bank b of a team
 * collective only after the synchronization of the team's previous collective, which the reader
 * enters only once it has read bank b; CHANGE TEAM and END TEAM synchronize the members too, so
 * collectives of a parent and of a child team never overlap at one reader.
 *
 * Coarrays allocated while a team is current belong to it and are deallocated at its END TEAM
 * (caf_image.c keeps that list; caf_team_end calls back through caf_team_release).
 */
#include <stdlib.h>
#include <string.h>
#include "caf_internal.h"

/* gfortran's TEAM_TYPE variable holds a pointer to one of these (libcaf.h: caf_team_t is void *). */
typedef void *caf_team_handle_t;

static caf_team_t initial;
static caf_team_t *current;

static void ensure_initial(void)
{
    if (current != NULL)
        return;
    rmx_ctx_t *c = caf_ctx();
    int n = rmx_size(c);
    static int *ranks;
    if (ranks == NULL) {
        ranks = malloc((size_t)n * sizeof(int));
        if (ranks == NULL) {
            caf_fail("libcaf_rmx", NULL, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_NOMEM,
                     "out of memory");
            return;
        }
        for (int r = 0; r < n; r++)
            ranks[r] = r;
    }
    initial = (caf_team_t){.parent = NULL, .number = -1, .size = n, .me = rmx_rank(c),
                           .ranks = ranks, .level = 0, .active = 1};
    current = &initial;
}

caf_team_t *caf_team(void)
{
    ensure_initial();
    return current;
}

caf_team_t *caf_team_initial(void)
{
    ensure_initial();
    return &initial;
}

void caf_team_reset(void)
{
    current = NULL;
}

int caf_team_sync(caf_team_t *t)
{
    rmx_ctx_t *c = caf_ctx();
    if (t->size == rmx_size(c)) {
        /* Once an image has failed the engine's barrier cannot complete: the survivors
         * synchronize pairwise instead (rmx_sync_images passes over failed ranks), and report
         * the failure.  Each survivor tries the barrier at most once after the failure (it
         * learns of it there), and every survivor's barrier of that round fails alike. */
        int rc = caf_team_failures(t) > 0 ? RMX_ERR_PEER : rmx_sync_all(c);
        if (rc != RMX_ERR_PEER)
            return rc;
        rc = rmx_sync_images(c, NULL, 0);
        return rc == RMX_OK ? RMX_ERR_PEER : rc;
    }
    if (t->size == 1)
        return rmx_sync_memory(c);
    return caf_team_sync_others(t);
}

int caf_team_sync_others(caf_team_t *t)
{
    /* Teams of up to 257 images need no allocation (which, failing, would leave the others
     * waiting for this image). */
    int few[256];
    int *others = t->size - 1 <= 256 ? few : malloc((size_t)(t->size - 1) * sizeof(int));
    if (others == NULL)
        return RMX_ERR_NOMEM;
    int k = 0;
    for (int i = 0; i < t->size; i++)
        if (i != t->me)
            others[k++] = t->ranks[i];
    int rc = rmx_sync_images(caf_ctx(), others, k);
    if (others != few)
        free(others);
    return rc;
}

int caf_team_allgather(caf_team_t *t, const void *mine, size_t len, void *all)
{
    if (len > CAF_EXCHANGE_MAX)
        return RMX_ERR_ARG;
    unsigned bank = (unsigned)(t->exch_seq++ & 1);
    rmx_win_t *w = caf_heap_win();
    int my_rank = t->ranks[t->me];
    size_t slot = caf_heap_exchange_disp(bank, my_rank);
    char rec[CAF_EXCHANGE_MAX] = {0};
    memcpy(rec, mine, len);
    memcpy(caf_heap_base() + slot, rec, sizeof(rec));
    int rc = RMX_OK;
    for (int i = 0; i < t->size && rc == RMX_OK; i++)
        if (i != t->me)
            rc = rmx_put(w, rec, sizeof(rec), t->ranks[i], slot);
    int src = caf_team_sync(t);
    if (rc == RMX_OK)
        rc = src;
    if (rc != RMX_OK || all == NULL)
        return rc;
    for (int i = 0; i < t->size; i++)
        memcpy((char *)all + (size_t)i * len,
               caf_heap_base() + caf_heap_exchange_disp(bank, t->ranks[i]), len);
    return RMX_OK;
}

/* ---------------------------------------------------------------- the entry points */
void _gfortran_caf_form_team(int team_id, caf_team_handle_t *team, int index);
void _gfortran_caf_change_team(caf_team_handle_t *team, int coselector);
void _gfortran_caf_end_team(caf_team_handle_t *team);
void _gfortran_caf_sync_team(caf_team_handle_t *team, int unused);
int _gfortran_caf_team_number(caf_team_handle_t team);
caf_team_handle_t _gfortran_caf_get_team(int32_t *level);

/* What each member of the current team says in FORM TEAM. */
typedef struct form_rec {
    int64_t number;
    int64_t new_index; /* 0: none given */
} form_rec_t;

void _gfortran_caf_form_team(int team_id, caf_team_handle_t *team, int index)
{
    static const char entry[] = "_gfortran_caf_form_team";
    caf_team_t *cur = caf_team();
    form_rec_t mine = {.number = team_id, .new_index = index}, *all;
    all = malloc((size_t)cur->size * sizeof(*all));
    caf_team_t *t = calloc(1, sizeof(*t));
    int *ranks = malloc((size_t)cur->size * sizeof(int));
    /* Every member takes part in the exchange even when this one is out of memory or its
     * arguments are bad: the others would wait for it otherwise. */
    int bad = all == NULL || t == NULL || ranks == NULL ? RMX_ERR_NOMEM
            : team_id <= 0                               ? RMX_ERR_ARG
                                                         : RMX_OK;
    if (bad != RMX_OK)
        mine.number = 0;
    int rc = caf_team_allgather(cur, &mine, sizeof(mine), all);
    if (rc == RMX_OK && bad == RMX_OK) {
        for (int i = 0; i < cur->size && rc == RMX_OK; i++)
            if (all[i].number <= 0)
                rc = RMX_ERR_COLLECTIVE;
    }
    if (bad != RMX_OK || rc != RMX_OK) {
        free(all);
        free(t);
        free(ranks);
        if (bad == RMX_ERR_ARG)
            caf_fail(entry, NULL, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                     "team number %d is not positive", team_id);
        caf_check(entry, bad != RMX_OK ? bad : rc, NULL, NULL, 0);
        return;
    }
    /* Members in parent-team order, or by NEW_INDEX where given. */
    int n = 0, me = -1;
    for (int i = 0; i < cur->size; i++)
        if (all[i].number == team_id) {
            if (i == cur->me)
                me = n;
            ranks[n++] = i; /* parent index for now */
        }
    if (index > 0) {
        int *by_index = calloc((size_t)n, sizeof(int));
        int ok = by_index != NULL;
        for (int k = 0; ok && k < n; k++) {
            int64_t ni = all[ranks[k]].new_index;
            ok = ni >= 1 && ni <= n && by_index[ni - 1] == 0;
            if (ok)
                by_index[ni - 1] = ranks[k] + 1;
        }
        if (!ok) {
            free(by_index), free(all), free(t), free(ranks);
            caf_fail(entry, NULL, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                     "NEW_INDEX values of team %d are not a permutation of 1..%d", team_id, n);
            return;
        }
        for (int k = 0; k < n; k++)
            ranks[k] = by_index[k] - 1;
        me = index - 1;
        free(by_index);
    }
    for (int k = 0; k < n; k++)
        ranks[k] = cur->ranks[ranks[k]];
    free(all);
    *t = (caf_team_t){.parent = cur, .number = team_id, .size = n, .me = me, .ranks = ranks,
                      .level = cur->level + 1};
    *team = t;
}

static caf_team_t *team_of(const char *entry, caf_team_handle_t *team)
{
    if (team == NULL || *team == NULL)
        caf_fail(entry, NULL, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                 "team variable not defined by FORM TEAM");
    return *team;
}

void _gfortran_caf_change_team(caf_team_handle_t *team, int coselector)
{
    static const char entry[] = "_gfortran_caf_change_team";
    (void)coselector; /* gfortran 12 accepts no coarray association in CHANGE TEAM */
    caf_team_t *t = team_of(entry, team);
    if (t->parent != caf_team())
        caf_fail(entry, NULL, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                 "CHANGE TEAM to a team not formed by the current team");
    if (t->active)
        caf_fail(entry, NULL, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG, "team already active");
    /* Completes this image's segment and synchronizes the new team's images. */
    t->active = 1;
    current = t;
    caf_check(entry, caf_team_sync(t), NULL, NULL, 0);
}

void _gfortran_caf_end_team(caf_team_handle_t *team)
{
    static const char entry[] = "_gfortran_caf_end_team";
    caf_team_t *t = caf_team();
    if (team != NULL && *team != NULL && *team != t)
        caf_fail(entry, NULL, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                 "END TEAM of a team that is not the current one");
    if (t->parent == NULL)
        caf_fail(entry, NULL, NULL, 0, CAF_STAT_RMX_BASE - RMX_ERR_ARG,
                 "END TEAM without CHANGE TEAM");
    /* Coarrays allocated in the team and still allocated go away with it (F2018 11.1.5.2). */
    int rc = caf_release_team_coarrays(t);
    int src = caf_team_sync(t);
    t->active = 0;
    current = t->parent;
    caf_check(entry, rc != RMX_OK ? rc : src, NULL, NULL, 0);
}

void _gfortran_caf_sync_team(caf_team_handle_t *team, int unused)
{
    (void)unused;
    caf_check("_gfortran_caf_sync_team",
              caf_team_sync(team_of("_gfortran_caf_sync_team", team)), NULL, NULL, 0);
}

/* Unlike the other team entry points, gfortran passes the team variable's value here (NULL: the
 * current team). */
int _gfortran_caf_team_number(caf_team_handle_t team)
{
    caf_team_t *t = team != NULL ? team : caf_team();
    return (int)t->number;
}

/* GET_TEAM(level): CURRENT_TEAM (0 or absent), PARENT_TEAM, INITIAL_TEAM as ISO_FORTRAN_ENV
 * numbers them in gfortran (-1, -2, -3 would be as good: the compiler passes its constants). */
caf_team_handle_t _gfortran_caf_get_team(int32_t *level)
{
    enum { GF_INITIAL_TEAM = -1, GF_PARENT_TEAM = -2, GF_CURRENT_TEAM = -3 };
    caf_team_t *t = caf_team();
    int l = level != NULL ? *level : GF_CURRENT_TEAM;
    if (l == GF_INITIAL_TEAM)
        return caf_team_initial();
    if (l == GF_PARENT_TEAM)
        return t->parent != NULL ? t->parent : t;
    return t;
}
