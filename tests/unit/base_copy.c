/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdm_copy_large against memcpy: sizes around the streaming threshold and the
 * 64-byte loop, every source and destination misalignment mod 16, with guard
 * bytes on both sides of the destination that must stay untouched.
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
    free(src);
    free(dst);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
