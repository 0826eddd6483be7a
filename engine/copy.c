/*
 * copy.c — downward copies (copy.h).
 *
 * A forward copy whose destination lies 16..127 bytes ahead of its source modulo 4 KiB (not a
 * multiple of 64) issues loads that look, by their low 12 address bits, like the stores it made
 * just before; the CPU takes them for possible store forwards and replays them.  On this
 * project's machines that costs a 4 KiB copy 120 ns instead of 22 at some physical placements
 * of the two sides (any loop of vector moves, glibc's memcpy and rep movsb alike; measured in
 * rmx_perf, where the local buffer is malloc'd at page + 16 and the window page-aligned).
 * Copied from the end down, every load lies below the stores before it, whose low bits it then
 * cannot match: 4 KiB in 33 ns (AVX-512; AVX2 32-43), 16 KiB 92-114 against 196-222, 64 KiB
 * 1.42 against 1.53-1.98 us.  Aligned stores: an unaligned one writes two cache lines.
 */
#include "copy.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define RMX_COPY_X86 1

/* Each width: the last vector and the first unaligned (loaded before any store), the aligned
 * vectors between from the top down, four at a time.  len >= 4 vectors: the aligned span is
 * then never empty and its bounds never pass the ends. */
#define COPY_DOWN_BODY(VEC, W, LOADU, STOREU, STORE)                                             \
    unsigned char *d = dst;                                                                      \
    const unsigned char *s = src;                                                                \
    size_t lo = (size_t)(-(uintptr_t)d & ((W) - 1)); /* first aligned offset */                  \
    size_t i = (size_t)((((uintptr_t)d + len - (W)) & ~(uintptr_t)((W) - 1)) - (uintptr_t)d);    \
    VEC first = LOADU((const void *)s), last = LOADU((const void *)(s + len - (W)));             \
    STOREU((void *)(d + len - (W)), last);                                                       \
    for (i += (W); i >= lo + 4 * (W); i -= 4 * (W)) {                                            \
        VEC a = LOADU((const void *)(s + i - (W))), b = LOADU((const void *)(s + i - 2 * (W)));  \
        VEC c = LOADU((const void *)(s + i - 3 * (W))), e = LOADU((const void *)(s + i - 4 * (W))); \
        STORE((void *)(d + i - (W)), a);                                                         \
        STORE((void *)(d + i - 2 * (W)), b);                                                     \
        STORE((void *)(d + i - 3 * (W)), c);                                                     \
        STORE((void *)(d + i - 4 * (W)), e);                                                     \
    }                                                                                            \
    for (; i > lo; i -= (W))                                                                     \
        STORE((void *)(d + i - (W)), LOADU((const void *)(s + i - (W))));                        \
    STOREU((void *)d, first);                                                                    \
    _mm256_zeroupper() /* no dirty upper halves left for SSE code after us */

__attribute__((target("avx2"))) static void copy_down_avx2(void *dst, const void *src,
                                                           size_t len)
{
    COPY_DOWN_BODY(__m256i, 32, _mm256_loadu_si256, _mm256_storeu_si256, _mm256_store_si256);
}

__attribute__((target("avx512f"))) static void copy_down_avx512(void *dst, const void *src,
                                                               size_t len)
{
    COPY_DOWN_BODY(__m512i, 64, _mm512_loadu_si512, _mm512_storeu_si512, _mm512_store_si512);
}
#endif

rmx_copy_isa_t rmx_copy_best_isa(void)
{
#ifdef RMX_COPY_X86
    /* libgcc / compiler-rt check the OS saves the registers (XCR0) too */
    if (__builtin_cpu_supports("avx512f"))
        return RMX_COPY_AVX512;
    if (__builtin_cpu_supports("avx2"))
        return RMX_COPY_AVX2;
#endif
    return RMX_COPY_PLAIN;
}

void rmx_copy_down_isa(rmx_copy_isa_t isa, void *dst, const void *src, size_t len)
{
#ifdef RMX_COPY_X86
    if (isa == RMX_COPY_AVX512 && len >= 4 * 64) {
        copy_down_avx512(dst, src, len);
        return;
    }
    if (isa >= RMX_COPY_AVX2 && len >= 4 * 32) {
        copy_down_avx2(dst, src, len);
        return;
    }
#endif
    (void)isa;
    memcpy(dst, src, len);
}

void rmx_copy_down(void *dst, const void *src, size_t len)
{
    rmx_copy_down_isa(rmx_copy_best_isa(), dst, src, len);
}
