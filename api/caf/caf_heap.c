/*
 * caf_heap.c — the heap window: one rmx window per image, allocated once at start-up (window
 * creation is collective over every image, so it cannot happen inside a team or when one image
 * alone allocates a component), and carved up locally afterwards.
 *
 * Layout of each image's copy (the same offsets on every image):
 *   [0, 64)            header: this image's base address, read by others to translate the
 *                      pointers they find in its memory (component descriptors) into displacements;
 *                      at CAF_HEAP_RUN_VALUE_DISP its run value (RANDOM_INIT, caf_image.c)
 *   exchange area      2 banks x n slots of CAF_EXCHANGE_MAX bytes (caf_team_allgather)
 *   scratch area       2 banks x n slots of `slot` bytes (caf_coll.c)
 *   arena              blocks handed out by caf_heap_alloc, first fit, 64-byte aligned, each
 *                      preceded by a 64-byte header holding its length
 *
 * The arena is this image's own business: allocation is never collective here.  Whoever needs
 * every image's displacement of a block (coarrays allocated in a team) exchanges them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "caf_internal.h"

#define HEAP_ALIGN ((size_t)64)
#define SCRATCH_TOTAL ((size_t)4 << 20) /* per bank, divided among the images */
#define SCRATCH_MIN_SLOT ((size_t)4096)
#define NO_DISP ((size_t)-1)

typedef struct free_block {
    struct free_block *next;
    size_t disp, len;
} free_block_t;

static struct {
    rmx_win_t *win;
    char *base;
    size_t size;
    int nranks;
    size_t exchange, scratch, slot, arena;
    free_block_t *free; /* sorted by displacement, coalesced */
    uintptr_t *remote_base; /* per rank, 0 until read */
} heap;

static size_t align_up(size_t v) { return (v + HEAP_ALIGN - 1) & ~(HEAP_ALIGN - 1); }

/* RMX_CAF_HEAP: bytes, with an optional K/M/G suffix; 0 on a malformed value. */
static size_t heap_size_from_env(void)
{
    const char *s = getenv("RMX_CAF_HEAP");
    if (s == NULL || *s == '\0')
        return CAF_HEAP_DEFAULT;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end != '\0' || v == 0) {
        fprintf(stderr, "libcaf_rmx: RMX_CAF_HEAP=%s is not a size (bytes, K, M or G)\n", s);
        return 0;
    }
    return (size_t)v;
}

int caf_heap_init(rmx_ctx_t *c)
{
    size_t arena = heap_size_from_env();
    if (arena == 0)
        return RMX_ERR_ARG;
    heap.nranks = rmx_size(c);
    size_t n = (size_t)heap.nranks;
    heap.slot = align_up(SCRATCH_TOTAL / n > SCRATCH_MIN_SLOT ? SCRATCH_TOTAL / n
                                                              : SCRATCH_MIN_SLOT);
    heap.exchange = HEAP_ALIGN;
    heap.scratch = align_up(heap.exchange + 2 * n * CAF_EXCHANGE_MAX);
    heap.arena = heap.scratch + 2 * n * heap.slot;
    heap.size = heap.arena + align_up(arena);
    heap.remote_base = calloc(n, sizeof(uintptr_t));
    if (heap.remote_base == NULL)
        return RMX_ERR_NOMEM;
    void *base;
    int rc = rmx_win_allocate(c, heap.size, &base, &heap.win);
    if (rc != RMX_OK) {
        free(heap.remote_base);
        heap.remote_base = NULL;
        return rc;
    }
    heap.base = base;
    uintptr_t mine = (uintptr_t)base;
    memcpy(heap.base, &mine, sizeof(mine));
    uint64_t run = caf_run_value();
    memcpy(heap.base + CAF_HEAP_RUN_VALUE_DISP, &run, sizeof(run));
    heap.remote_base[rmx_rank(c)] = mine;
    heap.free = malloc(sizeof(*heap.free));
    if (heap.free == NULL)
        return RMX_ERR_NOMEM;
    *heap.free = (free_block_t){.next = NULL, .disp = heap.arena, .len = heap.size - heap.arena};
    return RMX_OK;
}

/* The window itself goes with the context (rmx_finalize frees every window). */
void caf_heap_fini(void)
{
    while (heap.free != NULL) {
        free_block_t *b = heap.free;
        heap.free = b->next;
        free(b);
    }
    free(heap.remote_base);
    memset(&heap, 0, sizeof(heap));
}

rmx_win_t *caf_heap_win(void) { return heap.win; }
char *caf_heap_base(void) { return heap.base; }

size_t caf_heap_alloc(size_t len)
{
    size_t need = HEAP_ALIGN + align_up(len > 0 ? len : 1); /* header + data */
    for (free_block_t **p = &heap.free; *p != NULL; p = &(*p)->next) {
        free_block_t *b = *p;
        if (b->len < need)
            continue;
        size_t disp = b->disp;
        if (b->len == need) {
            *p = b->next;
            free(b);
        } else {
            b->disp += need;
            b->len -= need;
        }
        memcpy(heap.base + disp, &need, sizeof(need));
        return disp + HEAP_ALIGN;
    }
    return NO_DISP;
}

void caf_heap_free(size_t disp)
{
    if (disp == NO_DISP || disp < heap.arena + HEAP_ALIGN || disp >= heap.size)
        return;
    size_t start = disp - HEAP_ALIGN, len;
    memcpy(&len, heap.base + start, sizeof(len));
    free_block_t **p = &heap.free;
    while (*p != NULL && (*p)->disp < start)
        p = &(*p)->next;
    free_block_t *next = *p;
    /* Merge with the block before (the one whose link is p) and after, where adjacent. */
    free_block_t *prev = NULL;
    for (free_block_t *b = heap.free; b != NULL && b != next; b = b->next)
        prev = b;
    if (prev != NULL && prev->disp + prev->len == start) {
        prev->len += len;
        if (next != NULL && prev->disp + prev->len == next->disp) {
            prev->len += next->len;
            prev->next = next->next;
            free(next);
        }
        return;
    }
    if (next != NULL && start + len == next->disp) {
        next->disp = start;
        next->len += len;
        return;
    }
    free_block_t *b = malloc(sizeof(*b));
    if (b == NULL)
        return; /* the block is lost to this image's arena, nothing worse */
    *b = (free_block_t){.next = next, .disp = start, .len = len};
    *p = b;
}

size_t caf_heap_exchange_disp(unsigned bank, int rank)
{
    return heap.exchange + ((size_t)(bank & 1) * (size_t)heap.nranks + (size_t)rank) *
                               CAF_EXCHANGE_MAX;
}

size_t caf_heap_scratch_disp(unsigned bank, int rank, size_t *slot)
{
    if (slot != NULL)
        *slot = heap.slot;
    return heap.scratch + ((size_t)(bank & 1) * (size_t)heap.nranks + (size_t)rank) * heap.slot;
}

size_t caf_heap_remote_disp(int rank, uintptr_t addr, size_t len)
{
    if (heap.win == NULL || rank < 0 || rank >= heap.nranks)
        return NO_DISP;
    if (heap.remote_base[rank] == 0) {
        uintptr_t b = 0;
        if (rmx_get(heap.win, &b, sizeof(b), rank, 0) != RMX_OK || b == 0)
            return NO_DISP;
        heap.remote_base[rank] = b;
    }
    uintptr_t b = heap.remote_base[rank];
    if (addr < b + heap.arena || addr - b > heap.size || len > heap.size - (addr - b))
        return NO_DISP;
    return (size_t)(addr - b);
}
