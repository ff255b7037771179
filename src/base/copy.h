/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Local copies of large contiguous blocks (a collective's own block): from
 * TDM_COPY_STREAM_MIN bytes (4 MiB, where a collective's buffers no longer
 * fit the last-level cache; copy.c has the figures) the destination is
 * written with non-temporal stores, which do not read the destination lines
 * first and do not push the caller's working set out of the caches.
 */
#ifndef TDM_BASE_COPY_H
#define TDM_BASE_COPY_H

#include <stddef.h>

#define TDM_COPY_STREAM_MIN ((size_t)4 << 20)

/* memcpy(dst, src, n) for non-overlapping buffers, streaming from
 * TDM_COPY_STREAM_MIN bytes (x86-64; elsewhere plain memcpy). */
void tdm_copy_large(void *dst, const void *src, size_t n);

#endif
