/*
 * fail_malloc.c — linked into caf_oom alone: a Fortran program arms a one-shot failure of the
 * next malloc of a given size (fail_next_malloc, BIND(C)) to reach libcaf_rmx's out-of-memory
 * paths, and asks whether it fired (malloc_failed).  Every other malloc goes on to the next
 * definition (libc's, or a sanitizer's).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);

void fail_next_malloc(size_t n);
int malloc_failed(void);

static void *(*next_malloc)(size_t);
static _Thread_local int resolving;
static _Atomic size_t armed;
static _Atomic int fired;

void *malloc(size_t n)
{
    size_t want = atomic_load_explicit(&armed, memory_order_relaxed);
    if (want != 0 && n == want && atomic_compare_exchange_strong(&armed, &want, 0)) {
        atomic_store(&fired, 1);
        errno = ENOMEM;
        return NULL;
    }
    if (next_malloc == NULL) {
        if (resolving) /* dlsym allocating while it resolves: it frees this itself */
            return __libc_malloc(n);
        resolving = 1;
        next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
        resolving = 0;
    }
    return next_malloc(n);
}

void fail_next_malloc(size_t n)
{
    atomic_store(&fired, 0);
    atomic_store(&armed, n);
}

int malloc_failed(void)
{
    return atomic_load(&fired);
}
