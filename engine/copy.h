/*
 * copy.h — copies to and from a peer's mapped window whose stores run downward (engine/copy.c),
 * for the placements where a forward copy's loads alias its own stores (rmx_direct_copy).
 */
#ifndef RMX_COPY_H
#define RMX_COPY_H

#include <stddef.h>

/* The vector width a downward copy uses: what the CPU (and the OS, for its registers) offers. */
typedef enum {
    RMX_COPY_PLAIN,  /* no wide vectors: memcpy */
    RMX_COPY_AVX2,   /* 32-byte moves */
    RMX_COPY_AVX512, /* 64-byte moves */
} rmx_copy_isa_t;

/* The widest this CPU runs (under valgrind, which has no AVX-512: AVX2). */
rmx_copy_isa_t rmx_copy_best_isa(void);

/* Copy len bytes from src to dst (which must not overlap), the stores from the end down, each
 * aligned to the vector width but the first and the last; `isa` no wider than rmx_copy_best_isa()
 * (the tests run every width).  rmx_copy_down uses the best. */
void rmx_copy_down_isa(rmx_copy_isa_t isa, void *dst, const void *src, size_t len);
void rmx_copy_down(void *dst, const void *src, size_t len);

#endif
