/*
 * topo.c — hwloc topology, binding and NUMA placement.  The topology is process-wide and
 * reference counted because loading it (with I/O devices) costs milliseconds and every context
 * needs the same one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwloc.h>
#include "topo.h"
#include "../engine/log.h"

/* The topology is loaded once and kept until the process ends: loading it (with the I/O devices)
 * reads sysfs for about 20 ms here, which every rmx_init and every rmx_topology_print without a
 * context paid again while it was reference counted, and two threads printing in a loop could
 * starve a third creating contexts behind the lock the loads held.  Once loaded it is never
 * modified, and hwloc allows concurrent reads of a loaded topology, so only the load is under the
 * lock.  It is not destroyed at exit: a thread of the process (an agent, a printer) may still read
 * it then, and memory checkers see it reachable from here. */
static pthread_mutex_t topo_lock = PTHREAD_MUTEX_INITIALIZER;
static hwloc_topology_t topology;
static _Atomic int topology_loaded;

int rmx_topo_load(void)
{
    if (atomic_load_explicit(&topology_loaded, memory_order_acquire))
        return RMX_OK;
    int rc = RMX_OK;
    pthread_mutex_lock(&topo_lock);
    if (!atomic_load_explicit(&topology_loaded, memory_order_relaxed)) {
        hwloc_topology_t t;
        if (hwloc_topology_init(&t) != 0)
            rc = RMX_ERR_NOMEM;
        else {
            /* Keep network and block devices so rmx_topology_print can name the NICs. */
            hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
            if (hwloc_topology_load(t) != 0) {
                hwloc_topology_destroy(t);
                rc = RMX_ERR_NOMEM;
            } else {
                topology = t;
                atomic_store_explicit(&topology_loaded, 1, memory_order_release);
            }
        }
    }
    pthread_mutex_unlock(&topo_lock);
    return rc;
}

static int parse_bind_env(rmx_bind_t *how, const rmx_logger_t *lg)
{
    const char *s = getenv("RMX_BIND");
    if (s == NULL || *s == '\0' || strcmp(s, "none") == 0)
        *how = RMX_BIND_NONE;
    else if (strcmp(s, "core") == 0)
        *how = RMX_BIND_CORE;
    else if (strcmp(s, "numa") == 0)
        *how = RMX_BIND_NUMA;
    else {
        rmx_logf(lg, RMX_LOG_ERROR, "RMX_BIND=%s is not one of none core numa", s);
        return RMX_ERR_ARG;
    }
    return RMX_OK;
}

int rmx_topo_bind(rmx_bind_t *howp, int local_rank, const rmx_logger_t *lg)
{
    if (*howp == RMX_BIND_ENV && parse_bind_env(howp, lg) != RMX_OK)
        return RMX_ERR_ARG;
    rmx_bind_t how = *howp;
    if (how == RMX_BIND_NONE)
        return RMX_OK;
    if (how != RMX_BIND_CORE && how != RMX_BIND_NUMA)
        return RMX_ERR_ARG;
    hwloc_obj_type_t type = how == RMX_BIND_CORE ? HWLOC_OBJ_CORE : HWLOC_OBJ_NUMANODE;
    int n = hwloc_get_nbobjs_by_type(topology, type);
    if (n <= 0) {
        rmx_logf(lg, RMX_LOG_ERROR, "binding to a %s: hwloc finds none on this machine; run "
                 "with RMX_BIND=none", how == RMX_BIND_CORE ? "core" : "NUMA node");
        return RMX_ERR_UNSUPPORTED;
    }
    hwloc_obj_t obj = hwloc_get_obj_by_type(topology, type, (unsigned)(local_rank % n));
    hwloc_bitmap_t set = hwloc_bitmap_dup(obj->cpuset);
    if (how == RMX_BIND_CORE)
        hwloc_bitmap_singlify(set); /* one hardware thread: no migration between siblings */
    int rc = hwloc_set_cpubind(topology, set, HWLOC_CPUBIND_PROCESS);
    if (rc != 0) {
        char cpus[256];
        hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), set);
        rmx_logf(lg, RMX_LOG_ERROR, "binding to cpus %s (hwloc_set_cpubind): %s; the launcher "
                 "or a container may forbid it: run with RMX_BIND=none", cpus, strerror(errno));
    }
    hwloc_bitmap_free(set);
    return rc == 0 ? RMX_OK : RMX_ERR_UNSUPPORTED;
}

int rmx_topo_binding(char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return RMX_ERR_ARG;
    buf[0] = '\0';
    int rc = rmx_topo_load();
    if (rc == RMX_OK) {
        hwloc_bitmap_t bound = hwloc_bitmap_alloc();
        if (bound != NULL && hwloc_get_cpubind(topology, bound, HWLOC_CPUBIND_PROCESS) == 0)
            hwloc_bitmap_list_snprintf(buf, len, bound);
        else
            rc = RMX_ERR_UNSUPPORTED;
        hwloc_bitmap_free(bound);
    }
    return rc;
}

void rmx_topo_place_local(void *addr, size_t len)
{
    if (!atomic_load_explicit(&topology_loaded, memory_order_acquire) || addr == NULL || len == 0)
        return;
    hwloc_bitmap_t cpu = hwloc_bitmap_alloc();
    if (cpu == NULL)
        return;
    if (hwloc_get_last_cpu_location(topology, cpu, HWLOC_CPUBIND_THREAD) == 0) {
        hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
        if (nodes != NULL) {
            hwloc_cpuset_to_nodeset(topology, cpu, nodes);
            /* Best effort: containers often forbid mbind; the memory then stays first-touch. */
            (void)hwloc_set_area_membind(topology, addr, len, nodes, HWLOC_MEMBIND_BIND,
                                         HWLOC_MEMBIND_BYNODESET);
            hwloc_bitmap_free(nodes);
        }
    }
    hwloc_bitmap_free(cpu);
}

static void print_topology(FILE *out);

int rmx_topology_print(FILE *out)
{
    if (out == NULL)
        return RMX_ERR_ARG;
    int rc = rmx_topo_load();
    if (rc == RMX_OK)
        print_topology(out);
    return rc;
}

static void print_topology(FILE *out)
{
    int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    int pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
    int numa = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
    fprintf(out, "cores: %d  hardware threads: %d  NUMA nodes: %d\n", cores, pus, numa);
    for (int i = 0; i < numa; i++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, (unsigned)i);
        char cpus[256];
        hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), node->cpuset);
        fprintf(out, "  numa %u: cpus %s, %llu MiB\n", node->os_index, cpus,
                (unsigned long long)(node->attr ? node->attr->numanode.local_memory >> 20 : 0));
    }
    int ndev = 0;
    for (hwloc_obj_t os = hwloc_get_next_osdev(topology, NULL); os != NULL;
         os = hwloc_get_next_osdev(topology, os)) {
        if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK &&
            os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS)
            continue;
        hwloc_obj_t parent = hwloc_get_non_io_ancestor_obj(topology, os);
        char near[256];
        hwloc_bitmap_list_snprintf(near, sizeof(near), parent ? parent->cpuset : NULL);
        fprintf(out, "  net %s (%s), near cpus %s\n", os->name,
                os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ? "network" : "openfabrics", near);
        ndev++;
    }
    if (ndev == 0)
        fprintf(out, "  net: no devices reported by hwloc (virtual NICs have no PCI parent)\n");
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    if (bound != NULL && hwloc_get_cpubind(topology, bound, HWLOC_CPUBIND_PROCESS) == 0) {
        char cpus[256];
        hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), bound);
        fprintf(out, "binding: cpus %s\n", cpus);
    }
    hwloc_bitmap_free(bound);
}
