/*
 * fail_malloc.c — linked into caf_oom alone: a Fortran program arms a one-shot failure of the
 * next malloc of a given size (fail_next_malloc, BIND(C)) to reach libcaf_rmx's out-of-memory
 * paths, and asks whether it fired (malloc_failed).  Every other malloc goes on to libc's.
 * Under AddressSanitizer, whose allocator owns malloc, it replaces nothing: malloc_failing()
 * says so and the program skips its checks.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);

void fail_next_malloc(size_t n);
int malloc_failed(void);
int malloc_failing(void);

#if defined(__SANITIZE_ADDRESS__)
#define FAIL_MALLOC_ACTIVE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FAIL_MALLOC_ACTIVE 0
#endif
#endif
#ifndef FAIL_MALLOC_ACTIVE
#define FAIL_MALLOC_ACTIVE 1
#endif

int malloc_failing(void)
{
    return FAIL_MALLOC_ACTIVE;
}

static _Atomic size_t armed;
static _Atomic int fired;

#if FAIL_MALLOC_ACTIVE
static void *(*next_malloc)(size_t);
static _Thread_local int resolving;

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
#endif

void fail_next_malloc(size_t n)
{
    atomic_store(&fired, 0);
    atomic_store(&armed, n);
}

int malloc_failed(void)
{
    return atomic_load(&fired);
}
