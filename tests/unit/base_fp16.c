/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/base/fp16.h: every binary16 and bfloat16 value widens to double and narrows back
 * to itself; every midpoint between neighbours narrows to the even one, and the doubles
 * next to it to the nearer one; overflow, underflow, signed zeros and NaNs.
 */
#include "base/fp16.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int errs;

#define CHECK(_c, ...)                                                                             \
    do {                                                                                           \
        if (!(_c) && ++errs <= 20) {                                                               \
            fprintf(stderr, "line %d: ", __LINE__);                                                \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* The double next to d towards zero or away from it (d finite and positive). */
static double step(double d, int up) {
    uint64_t b;
    memcpy(&b, &d, sizeof(b));
    b = up ? b + 1 : b - 1;
    memcpy(&d, &b, sizeof(d));
    return d;
}

typedef struct fmt {
    const char *name;
    int ebits, fbits;
    double max; /* largest finite value */
} fmt_t;

static void check_format(const fmt_t *f) {
    uint32_t n = 1u << (1 + f->ebits + f->fbits), inf = ((1u << f->ebits) - 1) << f->fbits;
    for (uint32_t v = 0; v < n; v++) {
        double d = tdm_fp_to_double(v, f->ebits, f->fbits);
        uint32_t mag = v & (n / 2 - 1);
        if (mag > inf) { /* NaN: stays a (quiet) NaN of the same sign */
            uint32_t back = tdm_fp_from_double(d, f->ebits, f->fbits);
            CHECK(isnan(d) && (back & (n / 2 - 1)) > inf &&
                      (back >> (f->ebits + f->fbits)) == (v >> (f->ebits + f->fbits)),
                  "%s %#x: NaN -> %g -> %#x", f->name, v, d, back);
            continue;
        }
        uint32_t back = tdm_fp_from_double(d, f->ebits, f->fbits);
        CHECK(back == v, "%s %#x -> %g -> %#x", f->name, v, d, back);
        if (mag + 1 >= inf || v >= n / 2) /* the top value: see the overflow checks */
            continue;
        /* between v and its successor (positive side; the sign is symmetric) */
        double next = tdm_fp_to_double(v + 1, f->ebits, f->fbits);
        double mid = d + (next - d) / 2; /* exact: the formats are far narrower than double */
        uint32_t even = (v & 1) ? v + 1 : v;
        CHECK(tdm_fp_from_double(mid, f->ebits, f->fbits) == even, "%s: midpoint %g of %#x",
              f->name, mid, v);
        CHECK(tdm_fp_from_double(-mid, f->ebits, f->fbits) == (even | n / 2),
              "%s: midpoint %g of %#x", f->name, -mid, v);
        CHECK(tdm_fp_from_double(step(mid, 0), f->ebits, f->fbits) == v, "%s: below %g", f->name,
              mid);
        CHECK(tdm_fp_from_double(step(mid, 1), f->ebits, f->fbits) == v + 1, "%s: above %g",
              f->name, mid);
    }
    /* overflow: from half an ulp above the largest finite value on, infinity */
    uint32_t maxv = inf - 1;
    double ulp = f->max - tdm_fp_to_double(maxv - 1, f->ebits, f->fbits);
    CHECK(tdm_fp_to_double(maxv, f->ebits, f->fbits) == f->max, "%s: max", f->name);
    CHECK(tdm_fp_from_double(f->max + ulp / 2, f->ebits, f->fbits) == inf, "%s: max + ulp/2",
          f->name);
    CHECK(tdm_fp_from_double(step(f->max + ulp / 2, 0), f->ebits, f->fbits) == maxv,
          "%s: just below max + ulp/2", f->name);
    CHECK(tdm_fp_from_double(1e300, f->ebits, f->fbits) == inf, "%s: 1e300", f->name);
    CHECK(tdm_fp_from_double(-INFINITY, f->ebits, f->fbits) == (inf | n / 2), "%s: -inf", f->name);
    /* underflow: below half the smallest subnormal, a zero of the same sign */
    double tiny = tdm_fp_to_double(1, f->ebits, f->fbits);
    CHECK(tdm_fp_from_double(tiny / 2, f->ebits, f->fbits) == 0, "%s: tiny/2", f->name);
    CHECK(tdm_fp_from_double(step(tiny / 2, 1), f->ebits, f->fbits) == 1, "%s: > tiny/2", f->name);
    CHECK(tdm_fp_from_double(-1e-300, f->ebits, f->fbits) == n / 2, "%s: -1e-300", f->name);
    CHECK(tdm_fp_from_double(4.9e-324, f->ebits, f->fbits) == 0, "%s: double subnormal", f->name);
}

int main(void) {
    static const fmt_t fmts[] = {{"binary16", 5, 10, 65504.0},
                                 {"bfloat16", 8, 7, 3.3895313892515355e38}};
    for (int i = 0; i < 2; i++)
        check_format(&fmts[i]);
    /* the named helpers are the two formats */
    CHECK(tdm_f16_from_double(1.0) == 0x3c00 && tdm_f16_to_double(0xc000) == -2.0, "f16 helpers");
    CHECK(tdm_bf16_from_double(1.0) == 0x3f80 && tdm_bf16_to_double(0x4049) == 3.140625,
          "bf16 helpers");
    if (errs) {
        fprintf(stderr, "%d errors\n", errs);
        return 1;
    }
    return 0;
}
