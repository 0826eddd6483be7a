/*
 * rmx_forkrun — rmx's own launcher: N copies of a program on this machine, bootstrapped through
 * rmx_fork_exec's shared segment (no mpirun, no PMIx).  build/rmxrun --launcher fork runs it.
 *   rmx_forkrun [--timeout SECONDS] -n N program [args...]
 * Exit status: 0 when every rank exited 0; else the status of the rank whose failure ended the job
 * (128+signal if it was killed), 124 on timeout (as timeout(1)), 2 for a bad command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../api/rmx_fork.h"

static int usage(const char *why)
{
    fprintf(stderr, "rmx_forkrun: %s\n"
                    "usage: rmx_forkrun [--timeout SECONDS] -n N [--] program [args...]\n", why);
    return 2;
}

/* A whole-string number in [lo, hi]. */
static int parse_number(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    double n = 0, timeout_s = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i += 2) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: rmx_forkrun [--timeout SECONDS] -n N [--] program [args...]\n"
                   "Start N ranks of program on this host (rmx_fork_exec, rmx_fork.h).\n");
            return 0;
        }
        if (strcmp(argv[i], "--") == 0) { /* the program follows, whatever its name */
            i++;
            break;
        }
        if (i + 1 >= argc)
            return usage("an option needs a value");
        if (strcmp(argv[i], "-n") == 0 || strcmp(argv[i], "-np") == 0) {
            if (parse_number(argv[i + 1], 1, 4096, &n) != 0 || n != (int)n)
                return usage("-n needs a number of ranks, 1..4096");
        } else if (strcmp(argv[i], "--timeout") == 0) {
            if (parse_number(argv[i + 1], 0, 1e6, &timeout_s) != 0)
                return usage("--timeout needs seconds, 0..1e6 (0: none)");
        } else {
            return usage("unknown option");
        }
    }
    if (n == 0)
        return usage("-n N is required");
    if (i >= argc)
        return usage("no program to run");

    int nranks = (int)n, first = -1;
    int *status = calloc((size_t)nranks, sizeof(*status));
    if (status == NULL)
        return usage("out of memory");
    int rc = rmx_fork_exec(nranks, argv + i, timeout_s, status, &first);
    int code = 0;
    if (rc == RMX_ERR_TIMEOUT) {
        fprintf(stderr, "rmx_forkrun: %s: timed out after %g s; every rank was killed\n", argv[i],
                timeout_s);
        code = 124;
    } else if (rc == RMX_ERR_PEER && first >= 0) {
        code = status[first];
        int others = 0;
        for (int r = 0; r < nranks; r++)
            others += r != first && status[r] != 0;
        fprintf(stderr, "rmx_forkrun: %s: rank %d (image %d) %s %d%s\n", argv[i], first, first + 1,
                code > 128 ? "was killed by signal" : "exited with status",
                code > 128 ? code - 128 : code,
                others > 0 ? "; the other ranks were terminated" : "");
    } else if (rc != RMX_OK) {
        fprintf(stderr, "rmx_forkrun: %s: %s\n", argv[i], rmx_strerror(rc));
        code = 1;
    }
    free(status);
    return code;
}
