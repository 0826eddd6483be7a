/*
 * harness_run.c — run a command as a user would (through sh) and keep what it printed: the
 * tests that launch programs (mpirun, rmx_forkrun, rmxrun, srun) all go through here.
 */
#include <sys/wait.h>
#include "harness.h"

char *rmx_test_slurp(const char *path)
{
    char *text = NULL;
    size_t cap = 0;
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        if (getdelim(&text, &cap, '\0', f) < 0) {
            free(text);
            text = NULL;
        }
        fclose(f);
    }
    if (text == NULL)
        text = strdup("");
    cr_assert_not_null(text);
    return text;
}

int rmx_test_run(const char *cmd, char **out)
{
    /* A file, not a pipe: a command that writes more than a pipe holds never blocks on us, and
     * output is kept whole whatever its size. */
    char log[] = "/tmp/rmx_run_XXXXXX";
    int fd = mkstemp(log);
    cr_assert(fd >= 0, "mkstemp: cannot keep the output of `%s`", cmd);
    close(fd);
    size_t len = strlen(cmd) + sizeof(log) + 32;
    char *full = malloc(len);
    cr_assert_not_null(full);
    snprintf(full, len, "{ %s ; } > %s 2>&1", cmd, log);
    int ws = system(full);
    free(full);
    int rc = ws == -1 ? -1 : WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    char *text = rmx_test_slurp(log);
    unlink(log);
    if (out != NULL)
        *out = text;
    else
        free(text);
    return rc;
}
