/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Local copies of large contiguous blocks (a collective's own block): from
 * TDM_COPY_STREAM_MIN bytes (4 MiB, where a collective's buffers no longer
 * fit the last-level cache; copy.c has the figures) the destination is
 * written with non-temporal stores, which do not read the destination lines
 * first and do not push the caller's working set out of the caches. Whether
 * that beats memcpy depends on the host: the collectives time both and take
 * the faster (coll/sched.c, copy_block).
 */
#ifndef TDM_BASE_COPY_H
#define TDM_BASE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TDM_COPY_STREAM_MIN ((size_t)4 << 20)

/*
 * Short-distance copies. When the destination lies 1 to 31 bytes past the
 * source modulo 4 KiB, glibc 2.36's memcpy (rep movsb from about 2 KiB) runs
 * 13-28x slower on this AMD host: each load waits for the store just before
 * it, whose address matches in its low 12 bits. malloc puts large blocks 16
 * bytes past a page and an eager payload sits 40 bytes into its cell, so a
 * send from a malloc'ed buffer met it on every message (copy.c has figures).
 * Such copies run backward instead, where no load follows a store to the
 * same low address bits. The backward range goes to 63 bytes, one 64-byte
 * vector, for CPUs whose memcpy stores wider than this host's.
 */
#define TDM_COPY_NEAR_MIN ((size_t)2048)
#define TDM_COPY_NEAR_DIST 64

/* Does tdm_copy(dst, src, n) take the backward loop? */
static inline int tdm_copy_is_near(const void *dst, const void *src, size_t n) {
    size_t d = (size_t)(((uintptr_t)dst - (uintptr_t)src) & 4095);
    return n >= TDM_COPY_NEAR_MIN && d - 1 < TDM_COPY_NEAR_DIST - 1;
}

/* memcpy(dst, src, n) for the backward case; also correct when the buffers
 * overlap with dst above src. */
void tdm_copy_near(void *dst, const void *src, size_t n);

/* memcpy(dst, src, n) for non-overlapping buffers, without the short-distance
 * slowdown: the copy every message payload and local block goes through. */
static inline void tdm_copy(void *dst, const void *src, size_t n) {
    if (__builtin_expect(tdm_copy_is_near(dst, src, n), 0))
        tdm_copy_near(dst, src, n);
    else
        memcpy(dst, src, n);
}

/* tdm_copy(dst, src, n), streaming from TDM_COPY_STREAM_MIN bytes (x86-64;
 * elsewhere tdm_copy). */
void tdm_copy_large(void *dst, const void *src, size_t n);

#endif
