/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two 2-byte floating formats of the MPICH ABI, as bit patterns: IEEE binary16
 * (MPIX_C_FLOAT16, MPI_REAL2, the halves of MPI_COMPLEX4) and bfloat16 (MPIX_BFLOAT16,
 * the top half of a binary32). Neither compiler the build uses has arithmetic on them
 * on every x86-64 (clang 14 has no _Float16 there), so values are widened to double,
 * which holds every value of both exactly, and narrowed back with round-to-nearest-even.
 *
 * Narrowing from double directly (not through float) keeps results correctly rounded:
 * double to float to binary16 can round twice. The sum of two binary16 values is exact
 * in double (their exponents span 40 bits, the significands 11), so a reduction that
 * adds in double and narrows once gives the correctly rounded sum; for bfloat16 the sum
 * may be inexact in double only when one operand is below the other's last double bit,
 * far from any bfloat16 midpoint, so the narrowed result is still the correct one.
 */
#ifndef TDM_BASE_FP16_H
#define TDM_BASE_FP16_H

#include <stdint.h>
#include <string.h>

/* A binary format of 1 sign bit, `ebits` exponent bits and `fbits` fraction bits. */
static inline double tdm_fp_to_double(uint32_t v, int ebits, int fbits) {
    uint32_t bias = (1u << (ebits - 1)) - 1, emax = (1u << ebits) - 1;
    uint32_t e = (v >> fbits) & emax, f = v & ((1u << fbits) - 1);
    uint64_t sign = (uint64_t)((v >> (ebits + fbits)) & 1) << 63, bits;
    if (e == emax) { /* infinity or NaN: keep the payload's top bits (and so quietness) */
        bits = sign | 0x7ff0000000000000ull | (uint64_t)f << (52 - fbits);
    } else if (e == 0) { /* zero or subnormal: f * 2^(1 - bias - fbits), exact */
        uint64_t sb = (uint64_t)(1023 - (bias - 1 + (uint32_t)fbits)) << 52;
        double scale, d;
        memcpy(&scale, &sb, sizeof(scale));
        d = (double)f * scale;
        memcpy(&bits, &d, sizeof(bits));
        bits |= sign;
    } else {
        bits = sign | (uint64_t)(e - bias + 1023) << 52 | (uint64_t)f << (52 - fbits);
    }
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

/* The nearest value of the format (ties to even), overflow to infinity. */
static inline uint32_t tdm_fp_from_double(double d, int ebits, int fbits) {
    uint64_t b;
    memcpy(&b, &d, sizeof(b));
    uint32_t sign = (uint32_t)(b >> 63) << (ebits + fbits);
    uint32_t emax = (1u << ebits) - 1;
    int bias = (1 << (ebits - 1)) - 1;
    uint64_t a = b & 0x7fffffffffffffffull;
    if (a >= 0x7ff0000000000000ull) /* infinity, or NaN kept quiet */
        return sign | emax << fbits |
               (a > 0x7ff0000000000000ull
                    ? (1u << (fbits - 1)) | (uint32_t)((a >> (52 - fbits)) & ((1u << fbits) - 1))
                    : 0);
    int e = (int)(a >> 52) - 1023;
    /* below half the smallest subnormal (2^(1 - bias - fbits)): zero; a double subnormal
     * (e = -1023) is far below that for both formats */
    if (e < -bias - fbits)
        return sign;
    uint64_t mant = (a & 0xfffffffffffffull) | 0x10000000000000ull;
    int normal = e >= 1 - bias;
    /* bits of the significand dropped: to fbits for a normal result, else to a multiple
     * of the smallest subnormal */
    int shift = normal ? 52 - fbits : 52 - fbits - (e - (1 - bias));
    uint64_t q = mant >> shift, rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    if (!normal) /* q == 2^fbits is the smallest normal number, which the encoding gives */
        return sign | (uint32_t)q;
    uint32_t field = (uint32_t)(e + bias);
    if (q >> (fbits + 1)) { /* rounded up to the next binade */
        q >>= 1;
        field++;
    }
    if (field >= emax)
        return sign | emax << fbits;
    return sign | field << fbits | (uint32_t)(q & ((1u << fbits) - 1));
}

static inline double tdm_f16_to_double(uint16_t h) {
    return tdm_fp_to_double(h, 5, 10);
}
static inline uint16_t tdm_f16_from_double(double d) {
    return (uint16_t)tdm_fp_from_double(d, 5, 10);
}
static inline double tdm_bf16_to_double(uint16_t h) {
    return tdm_fp_to_double(h, 8, 7);
}
static inline uint16_t tdm_bf16_from_double(double d) {
    return (uint16_t)tdm_fp_from_double(d, 8, 7);
}

#endif
