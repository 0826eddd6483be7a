/*
 * resources.h — what this process can still get from the system, checked before UCX is asked
 * for it: UCX fills /dev/shm or memory until the OOM killer strikes when asked for more than
 * there is, and crashes when it runs out of file descriptors in the middle of an rkey unpack.
 * Each check returns RMX_OK, or RMX_ERR_NOMEM after one line on stderr naming the limit (through
 * the context's logger, engine/log.h).
 */
#ifndef RMX_RESOURCES_H
#define RMX_RESOURCES_H

#include <stddef.h>
#include "../api/rmx.h"

struct rmx_logger;

/* `len` more bytes of memory this process will touch (a window rmx allocates and zeroes): at
 * most what the system has available (MemAvailable + free swap) and what RLIMIT_AS and
 * RLIMIT_DATA leave.  `what` names the call in the message. */
int rmx_res_check_memory(size_t len, const char *what, const struct rmx_logger *lg);
/* At least `n` more file descriptors can be opened now (RLIMIT_NOFILE): every window takes
 * some (UCX's shared-memory segments and their peers' mappings). */
int rmx_res_check_fds(int n, const char *what, const struct rmx_logger *lg);

#endif
