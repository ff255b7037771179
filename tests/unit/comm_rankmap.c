/* SPDX-License-Identifier: BSD-3-Clause */
/* Rank maps (src/comm/group.c): affine lists are stored without an array
 * (O(1) memory: identity, shifts, strides, negative strides, singletons),
 * irregular ones as a shared array; the reverse lookup and the comparisons
 * agree with a brute-force reference on random lists. */
#include "comm/group.h"

#include <stdio.h>
#include <stdlib.h>

static int errs;
#define CHECK(_c, ...)                                                                             \
    do {                                                                                           \
        if (!(_c)) {                                                                               \
            errs++;                                                                                \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #_c);                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

static unsigned long long seed = 1;
static int rnd(int n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((seed >> 33) % (unsigned long long)n);
}

static void check_map(const int *w, int n, int want_affine, const char *what) {
    tdm_rankmap_t m;
    CHECK(tdm_rankmap_from_list(w, n, &m) == 0, "%s: from_list", what);
    CHECK(m.n == n, "%s: n %d", what, m.n);
    CHECK((m.arr == NULL) == want_affine, "%s: affine %d, expected %d", what, m.arr == NULL,
          want_affine);
    for (int i = 0; i < n; i++)
        CHECK(tdm_rankmap_world(&m, i) == w[i], "%s: world(%d) = %d, expected %d", what, i,
              tdm_rankmap_world(&m, i), w[i]);
    /* reverse lookup of everything in [-2, max + 2] */
    int max = 0;
    for (int i = 0; i < n; i++)
        max = w[i] > max ? w[i] : max;
    for (int x = -2; x <= max + 2; x++) {
        int ref = -1;
        for (int i = 0; i < n; i++)
            if (w[i] == x)
                ref = i;
        CHECK(tdm_rankmap_find(&m, x) == ref, "%s: find(%d) = %d, expected %d", what, x,
              tdm_rankmap_find(&m, x), ref);
    }
    tdm_rankmap_t s = tdm_rankmap_share(&m);
    CHECK(tdm_rankmap_equal(&m, &s) && tdm_rankmap_same_set(&m, &s), "%s: shared copy", what);
    tdm_rankmap_release(&s);
    for (int i = 0; i < n; i++) /* still valid after releasing the share */
        CHECK(tdm_rankmap_world(&m, i) == w[i], "%s: after release", what);
    tdm_rankmap_release(&m);
}

int main(void) {
    int w[64];
    for (int i = 0; i < 64; i++)
        w[i] = i;
    check_map(w, 0, 1, "empty");
    check_map(w, 1, 1, "one");
    check_map(w, 64, 1, "identity");
    check_map(w + 5, 20, 1, "shifted");
    for (int i = 0; i < 20; i++)
        w[i] = 3 + 4 * i;
    check_map(w, 20, 1, "stride 4");
    for (int i = 0; i < 20; i++)
        w[i] = 60 - 3 * i;
    check_map(w, 20, 1, "stride -3");
    w[0] = 17;
    check_map(w, 1, 1, "singleton 17");
    w[0] = 0, w[1] = 2, w[2] = 3;
    check_map(w, 3, 0, "irregular");

    /* random permutations of random subsets: compare with the reference */
    for (int iter = 0; iter < 2000; iter++) {
        int n = 1 + rnd(40), a[64], b[64];
        int pool[100];
        for (int i = 0; i < 100; i++)
            pool[i] = i;
        for (int i = 0; i < n; i++) {
            int j = i + rnd(100 - i), t = pool[i];
            pool[i] = pool[j];
            pool[j] = t;
            a[i] = pool[i];
        }
        int affine = 1;
        for (int i = 2; i < n; i++)
            affine &= a[i] - a[i - 1] == a[1] - a[0];
        check_map(a, n, affine, "random");
        /* b: a permutation of a (same set), or a with one element changed */
        for (int i = 0; i < n; i++)
            b[i] = a[i];
        int kind = rnd(3);
        if (kind == 0 && n > 1) {
            int i = rnd(n), j = rnd(n), t = b[i];
            b[i] = b[j];
            b[j] = t;
        } else if (kind == 1) {
            b[rnd(n)] = 100 + rnd(10);
        }
        tdm_rankmap_t ma, mb;
        tdm_rankmap_from_list(a, n, &ma);
        tdm_rankmap_from_list(b, n, &mb);
        int eq = 1, set = 1;
        for (int i = 0; i < n; i++) {
            eq &= a[i] == b[i];
            int f = 0;
            for (int j = 0; j < n; j++)
                f |= a[i] == b[j];
            set &= f;
        }
        CHECK(tdm_rankmap_equal(&ma, &mb) == eq, "equal");
        CHECK(tdm_rankmap_same_set(&ma, &mb) == set, "same_set");
        tdm_rankmap_release(&ma);
        tdm_rankmap_release(&mb);
    }
    /* affine maps compare with array maps of the same ranks */
    for (int i = 0; i < 10; i++)
        w[i] = i;
    tdm_rankmap_t id = tdm_rankmap_affine(10, 0, 1), arr;
    w[9] = 9;
    int perm[10] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 8};
    tdm_rankmap_from_list(perm, 10, &arr);
    CHECK(!tdm_rankmap_equal(&id, &arr) && tdm_rankmap_same_set(&id, &arr), "identity vs perm");
    tdm_rankmap_release(&arr);
    if (errs == 0)
        printf("No Errors\n");
    return errs ? 1 : 0;
}
