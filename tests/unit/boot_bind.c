/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CPUs a rank its launcher left unbound takes (src/boot/bind.c, tdm_boot_bind_domain):
 * equal blocks of the mask in order, so that a rank's own threads keep CPUs of their own
 * (2 ranks on 64 CPUs: 32 each, not 1) and no two ranks share a CPU; a mask with holes
 * (a cpuset) is walked in order; more ranks than CPUs give no domain.
 */
#include "boot/boot.h"

#include <stdio.h>

static int errs;
#define CHECK(_c, ...)                                                                             \
    do {                                                                                           \
        if (!(_c) && ++errs <= 20) {                                                               \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

/* every rank's domain of `mask`: sizes n/size, disjoint, in order, inside the mask */
static void check_all(const cpu_set_t *mask, int size) {
    int n = CPU_COUNT(mask), k = n / size, last = -1;
    cpu_set_t seen;
    CPU_ZERO(&seen);
    for (int r = 0; r < size; r++) {
        cpu_set_t d, both;
        int got = tdm_boot_bind_domain(mask, r, size, &d);
        CHECK(got == k && CPU_COUNT(&d) == k, "%d cpus, %d ranks: rank %d got %d (%d set), not %d",
              n, size, r, got, CPU_COUNT(&d), k);
        CPU_AND(&both, &d, &seen);
        CHECK(CPU_COUNT(&both) == 0, "%d cpus, %d ranks: rank %d shares a cpu", n, size, r);
        CPU_AND(&both, &d, mask);
        CHECK(CPU_EQUAL(&both, &d), "%d cpus, %d ranks: rank %d has a cpu outside the mask", n,
              size, r);
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &d)) {
                CHECK(c > last, "%d cpus, %d ranks: rank %d's cpu %d is not after %d", n, size, r,
                      c, last);
                last = c;
            }
        CPU_OR(&seen, &seen, &d);
    }
}

/* *m = {lo, lo + step, ..., up to hi} */
static void cpus(cpu_set_t *m, int lo, int hi, int step) {
    CPU_ZERO(m);
    for (int c = lo; c <= hi; c += step)
        CPU_SET(c, m);
}

int main(void) {
    cpu_set_t m, d;
    for (int n = 1; n <= 128; n++) {
        cpus(&m, 0, n - 1, 1);
        for (int size = 1; size <= n; size++)
            check_all(&m, size);
        CHECK(tdm_boot_bind_domain(&m, 0, n + 1, &d) == 0 && CPU_COUNT(&d) == 0,
              "%d cpus, %d ranks: a domain", n, n + 1);
    }
    /* 2 ranks on 64 CPUs: 0-31 and 32-63 */
    cpus(&m, 0, 63, 1);
    CHECK(tdm_boot_bind_domain(&m, 1, 2, &d) == 32 && CPU_ISSET(32, &d) && CPU_ISSET(63, &d) &&
              !CPU_ISSET(31, &d),
          "2 ranks on 64 cpus: rank 1 is not on 32-63");
    /* a cpuset with holes: 3,5,7,9,11,13 for 3 ranks gives {3,5} {7,9} {11,13} */
    cpus(&m, 3, 13, 2);
    check_all(&m, 3);
    CHECK(tdm_boot_bind_domain(&m, 2, 3, &d) == 2 && CPU_ISSET(11, &d) && CPU_ISSET(13, &d),
          "cpus 3,5,..,13 for 3 ranks: rank 2 is not on 11,13");
    /* 7 CPUs, 3 ranks: blocks of 2, cpu 6 left to nobody */
    cpus(&m, 0, 6, 1);
    CHECK(tdm_boot_bind_domain(&m, 2, 3, &d) == 2 && CPU_ISSET(4, &d) && CPU_ISSET(5, &d) &&
              !CPU_ISSET(6, &d),
          "7 cpus, 3 ranks: rank 2 is not on 4,5");
    CHECK(tdm_boot_bind_domain(&m, 3, 3, &d) == 0 && tdm_boot_bind_domain(&m, -1, 3, &d) == 0,
          "a rank outside 0..size-1 got a domain");
    if (errs) {
        fprintf(stderr, "%d checks failed\n", errs);
        return 1;
    }
    printf("No Errors\n");
    return 0;
}
