/*
 * boot_pmix.c — the PMIx bootstrap (mpirun, srun --mpi=pmix, prterun).
 * allgather = PMIx_Put of a byte object under a per-call key, Commit, Fence with data collection,
 * then one PMIx_Get per rank.  Only used at init and window creation; sync_all runs over UCP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pmix.h>
#include "boot.h"
#include "../engine/log.h"

typedef struct {
    pmix_proc_t self;
    unsigned long seq;   /* allgather calls so far: each uses a fresh key */
} pmix_state_t;

static pmix_state_t pmix_state;
static int pmix_open_count;

int rmx_boot_pmix_launched(void)
{
    return getenv("PMIX_NAMESPACE") != NULL && getenv("PMIX_RANK") != NULL;
}

/* A PMIx call failed: its own status string and what to do, then RMX_ERR_BOOTSTRAP.  No
 * context exists yet (or it is not at hand): the line has no rank. */
static int pmix_failed(const char *call, pmix_status_t st, const char *hint)
{
    rmx_logf(NULL, RMX_LOG_ERROR, "%s failed: %s%s%s", call, PMIx_Error_string(st),
             hint[0] ? "; " : "", hint);
    return RMX_ERR_BOOTSTRAP;
}

#define PMIX_PEERS_HINT                                                                       \
    "did a rank die or leave, or does the launcher not collect data (PMIX_COLLECT_DATA)?"

static int pmix_get_u32(const pmix_proc_t *proc, const char *key, uint32_t *out)
{
    pmix_value_t *val = NULL;
    pmix_status_t pst = PMIx_Get(proc, key, NULL, 0, &val);
    if (pst != PMIX_SUCCESS || val == NULL) {
        /* optional keys are asked for quietly; their absence is no error */
        rmx_logf(NULL, RMX_LOG_DEBUG, "PMIx_Get(%s): %s", key, PMIx_Error_string(pst));
        return RMX_ERR_BOOTSTRAP;
    }
    int rc = RMX_OK;
    switch (val->type) {
    case PMIX_UINT32: *out = val->data.uint32; break;
    case PMIX_UINT16: *out = val->data.uint16; break;
    case PMIX_INT:    *out = (uint32_t)val->data.integer; break;
    case PMIX_PROC_RANK: *out = val->data.rank; break;
    default: rc = RMX_ERR_BOOTSTRAP;
    }
    PMIX_VALUE_RELEASE(val);
    return rc;
}

static int pmix_fence(int collect)
{
    pmix_info_t info;
    bool flag = collect ? true : false;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    pmix_status_t st = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    return st == PMIX_SUCCESS ? RMX_OK : pmix_failed("PMIx_Fence", st, PMIX_PEERS_HINT);
}

static int pmix_allgather(rmx_boot_t *b, const void *send, void *recv, size_t len)
{
    pmix_state_t *st = b->state;
    char key[PMIX_MAX_KEYLEN];
    snprintf(key, sizeof(key), "rmx.ag.%lu", st->seq++);

    pmix_value_t val;
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)send;
    val.data.bo.size = len;
    pmix_status_t pst = PMIx_Put(PMIX_GLOBAL, key, &val);
    if (pst != PMIX_SUCCESS)
        return pmix_failed("PMIx_Put", pst, "");
    if ((pst = PMIx_Commit()) != PMIX_SUCCESS)
        return pmix_failed("PMIx_Commit", pst, "");
    if (pmix_fence(1) != RMX_OK)
        return RMX_ERR_BOOTSTRAP;

    pmix_proc_t peer;
    PMIX_PROC_CONSTRUCT(&peer);
    PMIX_LOAD_NSPACE(peer.nspace, st->self.nspace);
    for (int r = 0; r < b->size; r++) {
        pmix_value_t *got = NULL;
        peer.rank = (pmix_rank_t)r;
        if ((pst = PMIx_Get(&peer, key, NULL, 0, &got)) != PMIX_SUCCESS || got == NULL)
            return pmix_failed("PMIx_Get of a rank's exchange data", pst, PMIX_PEERS_HINT);
        int ok = got->type == PMIX_BYTE_OBJECT && got->data.bo.size == len;
        if (ok)
            memcpy((char *)recv + (size_t)r * len, got->data.bo.bytes, len);
        PMIX_VALUE_RELEASE(got);
        if (!ok) {
            rmx_logf(NULL, RMX_LOG_ERROR, "PMIx_Get: rank %d's exchange data is not the %zu "
                     "bytes every rank sends: are all ranks the same program and rmx?", r, len);
            return RMX_ERR_BOOTSTRAP;
        }
    }
    return RMX_OK;
}

static int pmix_barrier(rmx_boot_t *b)
{
    (void)b;
    return pmix_fence(0);
}

static void pmix_fini(rmx_boot_t *b)
{
    (void)b;
    if (--pmix_open_count == 0)
        PMIx_Finalize(NULL, 0);
}

int rmx_boot_pmix_open(rmx_boot_t *b)
{
    pmix_state_t *st = &pmix_state;
    if (pmix_open_count == 0) {
        pmix_status_t pst = PMIx_Init(&st->self, NULL, 0);
        if (pst != PMIX_SUCCESS)
            return pmix_failed("PMIx_Init", pst,
                               "not launched by a PMIx launcher? use mpirun or srun --mpi=pmix "
                               "(or rmx_config_t.bootstrap RMX_BOOT_OOB / RMX_BOOT_SINGLE)");
        st->seq = 0;
    }
    pmix_open_count++;

    pmix_proc_t job;
    PMIX_PROC_CONSTRUCT(&job);
    PMIX_LOAD_NSPACE(job.nspace, st->self.nspace);
    job.rank = PMIX_RANK_WILDCARD;
    uint32_t size = 0, local_size = 0, local_rank = 0;
    if (pmix_get_u32(&job, PMIX_JOB_SIZE, &size) != RMX_OK || size == 0) {
        rmx_logf(NULL, RMX_LOG_ERROR, "PMIx_Get(%s): the PMIx server does not say how many "
                 "ranks the job has; is the launcher's PMIx server too old or not a launcher's?",
                 PMIX_JOB_SIZE);
        pmix_fini(b);
        return RMX_ERR_BOOTSTRAP;
    }
    /* Node-local facts are optional: binding falls back to the global rank without them. */
    if (pmix_get_u32(&job, PMIX_LOCAL_SIZE, &local_size) != RMX_OK)
        local_size = size;
    if (pmix_get_u32(&st->self, PMIX_LOCAL_RANK, &local_rank) != RMX_OK)
        local_rank = st->self.rank;

    memset(b, 0, sizeof(*b));
    b->name = "pmix";
    b->rank = (int)st->self.rank;
    b->size = (int)size;
    b->local_rank = (int)local_rank;
    b->local_size = (int)local_size;
    b->allgather = pmix_allgather;
    b->barrier = pmix_barrier;
    b->fini = pmix_fini;
    b->state = st;
    return RMX_OK;
}
