/*
 * resources.c — the system limits behind rmx's windows (resources.h).  Read at each window
 * creation: what is available changes while the job runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "resources.h"
#include "../engine/log.h"

#define GIB(x) ((double)(x) / (double)(1ull << 30))

/* A "Name:  <n> kB" line of /proc/meminfo, in bytes; 0 when absent. */
static unsigned long long meminfo_bytes(const char *text, const char *name)
{
    const char *p = strstr(text, name);
    unsigned long long kb = 0;
    if (p != NULL && sscanf(p + strlen(name), " %llu", &kb) != 1)
        kb = 0;
    return kb * 1024ull;
}

/* Memory the kernel can still give without swapping out others, plus free swap; 0: unknown. */
static unsigned long long available_memory(void)
{
    char text[4096];
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL)
        return 0;
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    unsigned long long avail = meminfo_bytes(text, "MemAvailable:");
    return avail == 0 ? 0 : avail + meminfo_bytes(text, "SwapFree:");
}

/* Field `field` (0: all mappings, 5: data and stack) of /proc/self/statm, in bytes; 0: unknown. */
static unsigned long long statm_bytes(int field)
{
    unsigned long long v[7] = {0};
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return 0;
    int n = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6]);
    fclose(f);
    return n == 7 ? v[field] * (unsigned long long)sysconf(_SC_PAGESIZE) : 0;
}

static int refuse(const rmx_logger_t *lg, const char *what, size_t len, const char *limit,
                  unsigned long long left)
{
    rmx_logf(lg, RMX_LOG_ERROR, "%s: %zu bytes (%.2f GiB) is more than %s leaves (%.2f GiB): "
             "RMX_ERR_NOMEM", what, len, GIB(len), limit, GIB(left));
    return RMX_ERR_NOMEM;
}

/* A soft resource limit, with what the process already uses of it (statm field). */
static int within_rlimit(const rmx_logger_t *lg, int resource, int field, const char *name,
                         size_t len, const char *what)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return RMX_OK;
    unsigned long long used = statm_bytes(field), cap = (unsigned long long)rl.rlim_cur;
    unsigned long long left = cap > used ? cap - used : 0;
    return len > left ? refuse(lg, what, len, name, left) : RMX_OK;
}

int rmx_res_check_memory(size_t len, const char *what, const rmx_logger_t *lg)
{
    if (len == 0)
        return RMX_OK;
    unsigned long long avail = available_memory();
    if (avail != 0 && len > avail)
        return refuse(lg, what, len, "the memory available (MemAvailable + free swap)", avail);
    int rc = within_rlimit(lg, RLIMIT_AS, 0, "RLIMIT_AS (ulimit -v)", len, what);
    if (rc == RMX_OK)
        rc = within_rlimit(lg, RLIMIT_DATA, 5, "RLIMIT_DATA (ulimit -d)", len, what);
    return rc;
}

int rmx_res_check_fds(int n, const char *what, const rmx_logger_t *lg)
{
    /* Open them, rather than count /proc/self/fd against the limit: exact, and n system calls
     * however many descriptors the process holds. */
    int fds[256], got = 0, rc = RMX_OK;
    if (n > (int)(sizeof(fds) / sizeof(fds[0])))
        n = (int)(sizeof(fds) / sizeof(fds[0]));
    while (got < n) {
        int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
        if (fd < 0 && (errno == EBADF || errno == EINVAL))
            fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* no stderr to duplicate */
        if (fd < 0) {
            rc = errno == EMFILE || errno == ENFILE ? RMX_ERR_NOMEM : RMX_OK;
            break;
        }
        fds[got++] = fd;
    }
    for (int i = 0; i < got; i++)
        close(fds[i]);
    if (rc != RMX_OK) {
        struct rlimit rl;
        getrlimit(RLIMIT_NOFILE, &rl);
        rmx_logf(lg, RMX_LOG_ERROR, "%s: fewer than %d file descriptors left under "
                 "RLIMIT_NOFILE (ulimit -n %llu): free windows or raise the limit: RMX_ERR_NOMEM",
                 what, n, (unsigned long long)rl.rlim_cur);
    }
    return rc;
}
