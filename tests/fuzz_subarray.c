/*
 * fuzz_subarray.c — libFuzzer target for engine/subarray.c: any pair of descriptors must either
 * be rejected with RMX_ERR_ARG or walk without a crash, an overflow or a broken invariant (every
 * run and piece inside the section's touched bytes, offsets strictly increasing in element order,
 * pieces covering each remote run exactly).  `make fuzz` builds build/tests/fuzz_subarray
 * (clang, -fsanitize=fuzzer,address,undefined); the subarray suite runs it briefly when present.
 *
 * Input decoding favours small numbers (1 byte per field) so that many descriptors are valid and
 * walkable; a flag byte per dimension switches a field to a full 64-bit value to reach the
 * overflow checks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../engine/subarray.h"

#define WALK_BUDGET 20000 /* pieces per input: huge sections are walked partly */

typedef struct input {
    const uint8_t *p;
    size_t n;
} input_t;

static uint64_t take(input_t *in, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && in->n > 0; i++, in->p++, in->n--)
        v = (v << 8) | *in->p;
    return v;
}

static size_t take_field(input_t *in, int wide)
{
    return wide ? (size_t)take(in, 8) : (size_t)take(in, 1);
}

static void decode_sub(input_t *in, rmx_sub_t *s)
{
    memset(s, 0, sizeof(*s));
    uint8_t head = (uint8_t)take(in, 1);
    static const size_t elems[] = {1, 2, 4, 8, 16, 3, 0, SIZE_MAX};
    s->elem_size = elems[head & 7];
    s->order = (head & 8) ? RMX_ORDER_FORTRAN : RMX_ORDER_C;
    if (head & 0x80)
        s->order = (rmx_order_t)(head >> 4); /* sometimes an unknown order */
    s->rank = (int)(take(in, 1) % (RMX_SUB_MAX_RANK + 3)) - 1; /* -1 .. 16 */
    int dims = s->rank < 0 ? 0 : s->rank > RMX_SUB_MAX_RANK ? RMX_SUB_MAX_RANK : s->rank;
    for (int i = 0; i < dims; i++) {
        uint8_t wide = (uint8_t)take(in, 1);
        rmx_sub_dim_t *d = &s->dim[i];
        d->extent = take_field(in, wide & 1);
        d->first = take_field(in, wide & 2);
        d->count = take_field(in, wide & 4);
        d->stride = take_field(in, wide & 8);
        if (!(wide & 0x10)) { /* steer towards valid, non-empty sections */
            d->extent = d->extent % 16 + 1;
            d->stride = d->stride % 3 + 1;
            d->count = 1 + d->count % d->extent;
            d->first = d->first % d->extent;
        }
    }
}

static void fail(const char *why)
{
    (void)why;
    abort(); /* libFuzzer reports the input */
}

/* Byte offset of section element e, the slow way: decompose e over the counts, fastest first. */
static size_t naive_offset(const rmx_sub_t *s, size_t e)
{
    size_t off = 0, pitch = s->elem_size;
    for (int i = 0; i < s->rank; i++) {
        int k = s->order == RMX_ORDER_FORTRAN ? i : s->rank - 1 - i;
        const rmx_sub_dim_t *d = &s->dim[k];
        off += (d->first + (e % d->count) * d->stride) * pitch;
        e /= d->count;
        pitch *= d->extent;
    }
    return off;
}

#define ORACLE_MAX 2048 /* sections up to this many elements are checked element by element */

/* Every element the cursor's runs cover is the naive reference's element, in order, and runs
 * are maximal: consecutive runs never touch. */
static void check_against_reference(const rmx_sub_t *s, const rmx_sub_layout_t *l)
{
    if (l->nelem == 0 || l->nelem > ORACLE_MAX)
        return;
    rmx_sub_cursor_t c;
    rmx_sub_cursor_init(&c, l);
    size_t off, len, e = 0, prev_end = 0;
    while (rmx_sub_cursor_next(&c, &off, &len)) {
        if (e > 0 && off == prev_end)
            fail("touching runs not merged");
        for (size_t b = 0; b < len; b += l->elem_size, e++)
            if (e >= l->nelem || naive_offset(s, e) != off + b)
                fail("run differs from the reference");
        prev_end = off + len;
    }
    if (e != l->nelem)
        fail("runs miss elements");
}

static void check_cursor(const rmx_sub_layout_t *l)
{
    rmx_sub_cursor_t c;
    rmx_sub_cursor_init(&c, l);
    size_t off, len, end = 0, total = 0;
    int first = 1;
    for (int k = 0; k < WALK_BUDGET && rmx_sub_cursor_next(&c, &off, &len); k++) {
        if (len == 0 || len % l->elem_size != 0 || off < l->lo || off + len > l->hi)
            fail("run outside the section");
        if (!first && off <= end)
            fail("runs not increasing");
        first = 0;
        end = off + len - 1;
        total += len / l->elem_size;
    }
    if (c.left == 0 && total != l->nelem)
        fail("runs do not hold every element");
}

static void check_walk(const rmx_sub_layout_t *L, const rmx_sub_layout_t *R)
{
    rmx_sub_walk_t w;
    rmx_sub_walk_init(&w, L, R);
    size_t roff, rlen, loff, len, elems = 0;
    int budget = WALK_BUDGET;
    while (budget > 0 && rmx_sub_walk_next_run(&w, &roff, &rlen)) {
        size_t one_off, at = 0;
        int one = rmx_sub_walk_run_is_one_piece(&w, &one_off);
        if (roff < R->lo || roff + rlen > R->hi)
            fail("remote run outside the section");
        while (budget-- > 0 && rmx_sub_walk_next_piece(&w, &loff, &len)) {
            if (len == 0 || len % L->elem_size || loff < L->lo || loff + len > L->hi)
                fail("local piece outside the section");
            if (one && loff != one_off)
                fail("one-piece run moved");
            at += len;
            elems += len / L->elem_size;
        }
        if (budget > 0 && at != rlen)
            fail("pieces do not cover the run");
    }
    if (budget > 0 && elems != R->nelem)
        fail("walk lost elements");
}

/* The memo (kept across inputs, as a context keeps it across calls) answers as a fresh layout. */
static void check_memo(const rmx_sub_t *s, int rc, const rmx_sub_layout_t *want)
{
    static rmx_sub_memo_t memo;
    rmx_sub_layout_t got;
    if (rmx_sub_layout_memo(&memo, s, &got) != rc)
        fail("memo: another code than rmx_sub_layout");
    if (rc != RMX_OK)
        return;
    if (got.elem_size != want->elem_size || got.nelem != want->nelem ||
        got.run_elems != want->run_elems || got.run_bytes != want->run_bytes ||
        got.nruns != want->nruns || got.base != want->base || got.lo != want->lo ||
        got.hi != want->hi || got.nouter != want->nouter)
        fail("memo: another layout");
    for (int d = 0; d < got.nouter; d++)
        if (got.count[d] != want->count[d] || got.step[d] != want->step[d])
            fail("memo: another outer dimension");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input_t in = {data, size};
    rmx_sub_t a, b;
    decode_sub(&in, &a);
    decode_sub(&in, &b);
    rmx_sub_layout_t L, R;
    int ra = rmx_sub_layout(&a, &L), rb = rmx_sub_layout(&b, &R);
    if ((ra != RMX_OK && ra != RMX_ERR_ARG) || (rb != RMX_OK && rb != RMX_ERR_ARG))
        fail("unexpected code");
    check_memo(&a, ra, &L);
    check_memo(&b, rb, &R);
    check_memo(&a, ra, &L); /* a hit when a was valid and b is a */
    size_t contig = rmx_sub_contig_elems(&a);
    if (ra != RMX_OK) {
        if (contig != 0)
            fail("contiguous length of an invalid descriptor");
        return 0;
    }
    if (L.nelem > 0 && (contig == 0 || L.nelem % contig != 0 || L.nruns * contig != L.nelem))
        fail("contiguous length does not divide the section");
    check_cursor(&L);
    check_against_reference(&a, &L);
    if (rb == RMX_OK && rmx_sub_match(&L, &R) == RMX_OK)
        check_walk(&L, &R);
    /* the same section on both sides always matches */
    check_walk(&L, &L);
    return 0;
}
