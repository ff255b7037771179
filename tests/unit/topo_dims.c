/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Dims_create's search (src/topo/topo.c, tdm_topo_dims_create) against an exhaustive
 * reference: every nondecreasing factorization of what the free dimensions must hold,
 * the best by the rule the search implements (smallest largest-minus-smallest, then the
 * nonincreasing dims smallest from the left). Every n up to 1500 in 1-6 dimensions, with
 * and without fixed entries; the cases the standard and issue 22 name (72 in 2 is 9 x 8);
 * large n (primes, powers of two, the int with the most divisors) in many dimensions;
 * and refusals.
 */
#include "topo/topo.h"

#include <stdio.h>
#include <string.h>

static int errs;
#define CHECK(_c, ...)                                                                             \
    do {                                                                                           \
        if (!(_c) && ++errs <= 20) {                                                               \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

#define MAXD 8

typedef struct ref {
    int k, cur[MAXD], best[MAXD];
    long long best_range;
} ref_t;

/* every nonincreasing sequence of k factors of m, each at most upper */
static void ref_walk(ref_t *r, int i, int m, int upper) {
    if (i == r->k) {
        if (m != 1)
            return;
        long long range = r->cur[0] - r->cur[r->k - 1];
        int better = range < r->best_range;
        if (range == r->best_range) {
            for (int j = 0; j < r->k; j++) {
                if (r->cur[j] != r->best[j]) {
                    better = r->cur[j] < r->best[j];
                    break;
                }
            }
        }
        if (better) {
            r->best_range = range;
            memcpy(r->best, r->cur, sizeof(r->best));
        }
        return;
    }
    for (int v = 1; v <= upper && v <= m; v++) {
        if (m % v)
            continue;
        r->cur[i] = v;
        ref_walk(r, i + 1, m / v, v);
    }
}

/* the reference answer for dims[] with its fixed entries */
static int reference(int n, int nd, const int *in, int *out) {
    long long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < nd; i++) {
        if (in[i])
            fixed *= in[i];
        else
            nfree++;
    }
    if (n % fixed)
        return -1;
    int rest = (int)(n / fixed);
    if (nfree == 0)
        return rest == 1 ? 0 : -1;
    ref_t r = {.k = nfree, .best_range = -1};
    r.best_range = 1LL << 62;
    ref_walk(&r, 0, rest, rest);
    for (int i = 0, b = 0; i < nd; i++)
        out[i] = in[i] ? in[i] : r.best[b++];
    return 0;
}

static void check_one(int n, int nd, const int *in) {
    int want[MAXD], got[MAXD];
    memcpy(got, in, (size_t)nd * sizeof(int));
    int wrc = reference(n, nd, in, want);
    int grc = tdm_topo_dims_create(n, nd, got);
    CHECK((wrc == 0) == (grc == 0), "n=%d nd=%d: rc %d, reference %d", n, nd, grc, wrc);
    if (wrc || grc)
        return;
    int same = 1;
    for (int i = 0; i < nd; i++)
        same = same && got[i] == want[i];
    if (!same) {
        char g[128] = "", w[128] = "", f[128] = "";
        for (int i = 0; i < nd; i++) {
            snprintf(g + strlen(g), sizeof(g) - strlen(g), " %d", got[i]);
            snprintf(w + strlen(w), sizeof(w) - strlen(w), " %d", want[i]);
            snprintf(f + strlen(f), sizeof(f) - strlen(f), " %d", in[i]);
        }
        CHECK(0, "n=%d dims in [%s ]: got [%s ], want [%s ]", n, f, g, w);
    }
}

static void expect(int n, int nd, const int *in, const int *want) {
    int got[64];
    memcpy(got, in, (size_t)nd * sizeof(int));
    int rc = tdm_topo_dims_create(n, nd, got);
    CHECK(rc == 0, "n=%d nd=%d refused", n, nd);
    for (int i = 0; rc == 0 && i < nd; i++)
        CHECK(got[i] == want[i], "n=%d nd=%d: dims[%d] = %d, want %d", n, nd, i, got[i], want[i]);
}

int main(void) {
    /* exhaustive: all free, then with fixed entries in every position */
    for (int n = 1; n <= 1500; n++) {
        for (int nd = 1; nd <= 6; nd++) {
            int in[MAXD] = {0};
            if (nd <= 4 || n <= 400)
                check_one(n, nd, in);
            for (int pos = 0; pos < nd && nd <= 4; pos++) {
                for (int f = 2; f <= 6; f++) {
                    memset(in, 0, sizeof(in));
                    in[pos] = f;
                    check_one(n, nd, in);
                }
            }
        }
    }
    { /* two fixed entries */
        int in[5] = {0, 3, 0, 2, 0};
        for (int n = 1; n <= 3000; n++)
            check_one(n, 5, in);
    }

    /* the standard's examples and the issue's */
    expect(6, 2, (int[]){0, 0}, (int[]){3, 2});
    expect(7, 2, (int[]){0, 0}, (int[]){7, 1});
    expect(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1});
    expect(72, 2, (int[]){0, 0}, (int[]){9, 8});
    expect(72, 3, (int[]){0, 0, 0}, (int[]){6, 4, 3});
    expect(100, 3, (int[]){0, 0, 0}, (int[]){5, 5, 4});
    CHECK(tdm_topo_dims_create(7, 3, (int[]){0, 3, 0}) != 0, "7 with a fixed 3 accepted");
    CHECK(tdm_topo_dims_create(12, 2, (int[]){2, 3}) != 0, "12 as 2 x 3 accepted");

    /* large: a prime, powers of two, the int with the most divisors (1600), many dims */
    expect(2147483647, 3, (int[]){0, 0, 0}, (int[]){2147483647, 1, 1});
    expect(1 << 30, 3, (int[]){0, 0, 0}, (int[]){1024, 1024, 1024});
    expect(1 << 30, 4, (int[]){0, 0, 0, 0}, (int[]){256, 256, 128, 128});
    int big[64] = {0}, want[64];
    for (int i = 0; i < 64; i++)
        want[i] = i < 30 ? 2 : 1;
    expect(1 << 30, 64, big, want);
    /* 2095133040 = 2^4 3^2 5 7 11 13 17 19 23 */
    int d3[3] = {0, 0, 0};
    CHECK(tdm_topo_dims_create(2095133040, 3, d3) == 0, "2095133040 in 3");
    CHECK((long long)d3[0] * d3[1] * d3[2] == 2095133040 && d3[0] - d3[2] < 100,
          "2095133040 in 3: %d %d %d", d3[0], d3[1], d3[2]);
    for (int nd = 2; nd <= 12; nd++) {
        int d[12] = {0};
        CHECK(tdm_topo_dims_create(2095133040, nd, d) == 0, "2095133040 in %d", nd);
        long long p = 1;
        for (int i = 0; i < nd; i++) {
            p *= d[i];
            CHECK(i == 0 || d[i] <= d[i - 1], "2095133040 in %d: not nonincreasing", nd);
        }
        CHECK(p == 2095133040, "2095133040 in %d: product %lld", nd, p);
    }
    if (errs) {
        fprintf(stderr, "%d errors\n", errs);
        return 1;
    }
    return 0;
}
