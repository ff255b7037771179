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
 * 808, 610, 1810); 1-2 MiB unchanged. Those figures are from the first
 * development host; on a later one memcpy won at 4 MiB, so the collectives
 * now choose at run time (coll/sched.c, copy_block).
 *
 * Why backward when the destination is just past the source (copy.h): glibc
 * 2.36 memcpy of 4 KiB from a page + 16 to a page + 40 took 2150 ns against
 * 84 at equal offsets (8 KiB 4350/154, 64 KiB 32500/1440, 256 KiB
 * 105000/7950; 1 MiB and up, non-temporal, unaffected), for every distance
 * from 1 to 31 bytes mod 4 KiB. The backward AVX2 loop took 88, 170, 1740
 * and 6940 ns at that distance. Point-to-point, 2 ranks, buffers 16 bytes
 * past a page: 4 KiB ping-pong 2.44 us against 0.44 page-aligned, and
 * MPICH 0.67.
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

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2"))) static void copy_back_avx2(char *d, const char *s, size_t n) {
    size_t i = n;
    while (i >= 128) {
        i -= 128;
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + 96));
        _mm256_storeu_si256((__m256i *)(void *)(d + i), a);
        _mm256_storeu_si256((__m256i *)(void *)(d + i + 32), b);
        _mm256_storeu_si256((__m256i *)(void *)(d + i + 64), c);
        _mm256_storeu_si256((__m256i *)(void *)(d + i + 96), e);
    }
    memmove(d, s, i); /* the head, under 128 bytes: no rep movsb */
}

static void copy_back_sse2(char *d, const char *s, size_t n) {
    size_t i = n;
    while (i >= 64) {
        i -= 64;
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 48));
        _mm_storeu_si128((__m128i *)(void *)(d + i), a);
        _mm_storeu_si128((__m128i *)(void *)(d + i + 16), b);
        _mm_storeu_si128((__m128i *)(void *)(d + i + 32), c);
        _mm_storeu_si128((__m128i *)(void *)(d + i + 48), e);
    }
    memmove(d, s, i);
}
#endif

void tdm_copy_near(void *dst, const void *src, size_t n) {
#if defined(__x86_64__)
    static int avx2 = -1;
    if (__builtin_expect(avx2 < 0, 0))
        avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (avx2)
        copy_back_avx2(dst, src, n);
    else
        copy_back_sse2(dst, src, n);
#else
    memmove(dst, src, n);
#endif
}

void tdm_copy_large(void *dst, const void *src, size_t n) {
#if defined(__x86_64__)
    if (n >= TDM_COPY_STREAM_MIN) {
        copy_stream(dst, src, n);
        return;
    }
#endif
    tdm_copy(dst, src, n);
}
