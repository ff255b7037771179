/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Why streaming: a 2-rank Alltoall of 4 MiB blocks spent 30% of its time in
 * the own block's memcpy (the rest in the CMA read of the peer's block), and
 * on this host a 4 MiB copy out of cache took 216 us with glibc's memcpy
 * against 168 us with non-temporal stores. From 1 MiB it made 2-rank
 * Alltoall and Allgather of 1 MiB blocks 40% slower (their buffers fit the
 * last-level cache, and streaming sends every line to memory), hence 4 MiB:
 * bench/coll, 2 ranks, medians of 8 interleaved runs, memcpy -> streaming:
 * Alltoall 4 MiB 1000 -> 835 us, 8 MiB 2850 -> 2180; Allgather 4 MiB 770 ->
 * 737; Gather 4 MiB 389 -> 377, 8 MiB 1300 -> 1080 (Open MPI 1020, 2630,
 * 808, 610, 1810); 1-2 MiB unchanged.
 */
#include "copy.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>

static void copy_stream(char *d, const char *s, size_t n) {
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 48));
        _mm_stream_si128((__m128i *)(void *)(d + i), a);
        _mm_stream_si128((__m128i *)(void *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + i + 48), e);
    }
    _mm_sfence(); /* the streamed lines are visible before anything after the copy */
    memcpy(d + i, s + i, n - i);
}
#endif

void tdm_copy_large(void *dst, const void *src, size_t n) {
#if defined(__x86_64__)
    if (n >= TDM_COPY_STREAM_MIN) {
        copy_stream(dst, src, n);
        return;
    }
#endif
    memcpy(dst, src, n);
}
