/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdm_copy_large against memcpy: sizes around the streaming threshold and the
 * 64-byte loop, every source and destination misalignment mod 16, with guard
 * bytes on both sides of the destination that must stay untouched; tdm_copy
 * at every distance mod 4 KiB (its backward loop for 1 to 63 bytes), and
 * tdm_copy_near on overlapping buffers.
 */
#include "base/copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64

int main(void) {
    int passed = 0, failed = 0;
    const size_t sizes[] = {0,
                            1,
                            63,
                            64,
                            65,
                            4096,
                            TDM_COPY_STREAM_MIN - 1,
                            TDM_COPY_STREAM_MIN,
                            TDM_COPY_STREAM_MIN + 1,
                            TDM_COPY_STREAM_MIN + 63,
                            3 * TDM_COPY_STREAM_MIN + 17};
    size_t max = 3 * TDM_COPY_STREAM_MIN + 17 + 2 * GUARD + 32;
    unsigned char *src = malloc(max), *dst = malloc(max);
    if (!src || !dst)
        return 1;
    for (size_t i = 0; i < max; i++)
        src[i] = (unsigned char)(i * 131 + (i >> 9) + 7);
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        for (int so = 0; so < 16; so += 5) {
            for (int dof = 0; dof < 16; dof += 3) {
                memset(dst, 0xee, max);
                unsigned char *d = dst + GUARD + dof;
                tdm_copy_large(d, src + so, n);
                int ok = memcmp(d, src + so, n) == 0;
                for (int g = 0; g < GUARD && ok; g++)
                    ok = d[-1 - g] == 0xee && d[n + (size_t)g] == 0xee;
                if (ok) {
                    passed++;
                } else {
                    failed++;
                    printf("FAIL size %zu, source offset %d, destination offset %d\n", n, so, dof);
                }
            }
        }
    }

    /* tdm_copy at every distance mod 4 KiB, sizes on both sides of the loop's
     * 128-byte step and of TDM_COPY_NEAR_MIN */
    const size_t nsizes[] = {TDM_COPY_NEAR_MIN - 1, TDM_COPY_NEAR_MIN, 4096 + 77, 3 * 8192 + 5};
    unsigned char *pg_src = aligned_alloc(4096, 2 * 4096 + 3 * 8192 + 4096);
    unsigned char *pg_dst = aligned_alloc(4096, 4 * 4096 + 3 * 8192 + 4096);
    if (!pg_src || !pg_dst)
        return 1;
    for (size_t i = 0; i < 2 * 4096 + 3 * 8192 + 4096; i++)
        pg_src[i] = (unsigned char)(i * 29 + (i >> 8) + 3);
    /* which copies take the backward loop: 1-63 bytes past the source mod 4 KiB,
     * from TDM_COPY_NEAR_MIN bytes (a malloc'ed block 16 bytes into a page sent
     * as an eager payload 40 bytes into a cell is the case that met it) */
    static const struct {
        size_t doff, soff, n;
        int near;
    } kinds[] = {{40, 16, 4096, 1},
                 {40, 16, TDM_COPY_NEAR_MIN, 1},
                 {40, 16, TDM_COPY_NEAR_MIN - 1, 0},
                 {16, 40, 4096, 0},
                 {16, 16, 4096, 0},
                 {16 + 63, 16, 4096, 1},
                 {16 + 64, 16, 4096, 0},
                 {4096 + 17, 16, 4096, 1},
                 {4095, 0, 1 << 20, 0}};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        int got =
            tdm_copy_is_near(pg_dst + 4096 + kinds[k].doff, pg_src + kinds[k].soff, kinds[k].n);
        if (got == kinds[k].near) {
            passed++;
        } else {
            failed++;
            printf("FAIL kind: destination offset %zu, source offset %zu, %zu bytes: near %d, "
                   "expected %d\n",
                   kinds[k].doff, kinds[k].soff, kinds[k].n, got, kinds[k].near);
        }
    }

    int dist_failed = 0;
    for (size_t k = 0; k < sizeof(nsizes) / sizeof(nsizes[0]); k++) {
        size_t n = nsizes[k];
        for (size_t dist = 0; dist < 4096; dist++) {
            const unsigned char *s = pg_src + 16;
            unsigned char *d = pg_dst + 4096 + 16 + dist;
            memset(d - GUARD, 0xee, n + 2 * GUARD);
            tdm_copy(d, s, n);
            int ok = memcmp(d, s, n) == 0;
            for (int g = 0; g < GUARD && ok; g++)
                ok = d[-1 - g] == 0xee && d[n + (size_t)g] == 0xee;
            if (!ok && dist_failed++ < 10)
                printf("FAIL tdm_copy of %zu bytes at distance %zu\n", n, dist);
        }
    }
    if (dist_failed)
        failed++;
    else
        passed++;

    /* tdm_copy_near is a memmove for a destination above an overlapping source */
    for (size_t dist = 1; dist < 200; dist += 7) {
        size_t n = 4096 + 33;
        unsigned char *buf = pg_dst, *ref = malloc(n);
        if (!ref)
            return 1;
        memcpy(buf, pg_src, n + dist);
        memcpy(ref, pg_src, n);
        tdm_copy_near(buf + dist, buf, n);
        if (memcmp(buf + dist, ref, n) == 0 && memcmp(buf, pg_src, dist) == 0) {
            passed++;
        } else {
            failed++;
            printf("FAIL tdm_copy_near overlapping, distance %zu\n", dist);
        }
        free(ref);
    }
    free(pg_src);
    free(pg_dst);
    free(src);
    free(dst);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
