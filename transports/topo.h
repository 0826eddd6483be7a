/*
 * topo.h — hwloc: the machine's topology (loaded once per process), process binding and
 * NUMA-local placement of window memory.
 */
#ifndef RMX_TOPO_H
#define RMX_TOPO_H

#include <stddef.h>
#include <stdio.h>
#include "../api/rmx.h"

/* Load the topology if no call has yet (it is then kept until the process ends; any thread). */
int rmx_topo_load(void);
struct rmx_logger;
/* RMX_BIND_ENV reads RMX_BIND=none|core|numa (*how then becomes what it named).  Must run before
 * the UCP worker is created, because UCX chooses its devices by the process's affinity.  Returns
 * RMX_ERR_ARG on a bad RMX_BIND value; failures are logged through lg (engine/log.h). */
int rmx_topo_bind(rmx_bind_t *how, int local_rank, const struct rmx_logger *lg);
/* The CPUs this process is bound to, as a list ("0-3,8"), into buf. */
int rmx_topo_binding(char *buf, size_t len);
/* Bind [addr, addr+len) to the NUMA node of the CPU this thread runs on (best effort). */
void rmx_topo_place_local(void *addr, size_t len);

#endif
