/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Type signatures: counting basic elements in a byte count (MPI_Get_elements,
 * partial items included) and the external32 representation, both by walking
 * the signature tree (dtype_impl.h) rather than the typemap.
 */
#include "dtype_impl.h"
#include "../base/util.h"
#include "../base/abi.h"

#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

/* ---- element counts ---- */

/* One item of t in the unit converted from (bytes when counting elements) and in the one
 * converted to. */
static size_t unit_from(const tdm_dtype_t *t, bool to_elems) {
    return to_elems ? t->size : t->nelems;
}
static size_t unit_to(const tdm_dtype_t *t, bool to_elems) {
    return to_elems ? t->nelems : t->size;
}

static long long convert(const tdm_dtype_t *dt, size_t amount, bool to_elems);

/* The first `amount` of one item (amount < unit_from(dt)) in the other unit: the elements
 * in that many stream bytes (to_elems) or the bytes of that many elements; -1 when the
 * bytes end inside an element. */
static long long partial(const tdm_dtype_t *dt, size_t amount, bool to_elems) {
    const tdm_dtype_ext_t *x = tdm_dtype_ext(dt);
    if (amount == 0)
        return 0;
    if (x->elem_size && !to_elems)
        return (long long)(amount * x->elem_size);
    if (x->elem_size)
        return amount % x->elem_size ? -1 : (long long)(amount / x->elem_size);
    switch (x->sig_kind) {
    case TDM_SIG_BASIC: {
        const tdm_basic_info_t *bi = x->binfo;
        if (!bi->comp[0])
            return -1;
        size_t first = tdm_dtype_basic_info(bi->comp[0])->size;
        if (!to_elems)
            return (long long)first;
        return amount == first ? 1 : -1;
    }
    case TDM_SIG_REPEAT:
        return convert(x->sig_child, amount, to_elems);
    default: {
        long long done = 0;
        for (size_t i = 0; i < x->sig_n; i++) {
            const tdm_dtype_t *t = x->sig_types[i];
            size_t chunk = x->sig_bl[i] * unit_from(t, to_elems);
            if (amount >= chunk) {
                done += (long long)(x->sig_bl[i] * unit_to(t, to_elems));
                amount -= chunk;
                continue;
            }
            long long rest = convert(t, amount, to_elems);
            return rest < 0 ? -1 : done + rest;
        }
        return amount ? -1 : done;
    }
    }
}

/* `amount` of items of dt (bytes, or elements when !to_elems) in the other unit. */
static long long convert(const tdm_dtype_t *dt, size_t amount, bool to_elems) {
    size_t from = unit_from(dt, to_elems);
    if (from == 0)
        return amount ? -1 : 0;
    long long part = partial(dt, amount % from, to_elems);
    return part < 0 ? -1 : (long long)((amount / from) * unit_to(dt, to_elems)) + part;
}

long long tdm_dtype_elements(const tdm_dtype_t *dt, size_t bytes) {
    return convert(dt, bytes, true);
}

long long tdm_dtype_elements_bytes(const tdm_dtype_t *dt, size_t elements) {
    return convert(dt, elements, false);
}

/* ---- external32 ---- */

size_t tdm_dtype_ext32_size(const tdm_dtype_t *dt) {
    return tdm_dtype_ext(dt)->ext32_size;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_LE 1
#else
#define HOST_LE 0
#endif

/* Copy n bytes, reversing them on a little-endian host. */
static void to_be(unsigned char *dst, const unsigned char *src, size_t n) {
    if (HOST_LE)
        for (size_t i = 0; i < n; i++)
            dst[i] = src[n - 1 - i];
    else
        memcpy(dst, src, n);
}

static void int_native_to_ext(unsigned char *dst, size_t m, const unsigned char *src, size_t n) {
    /* value of the native integer as 64 bits, then its low m bytes big-endian */
    unsigned char be[8];
    to_be(be, src, n);
    memcpy(dst, be + (n - TDM_MIN(n, m)), TDM_MIN(n, m));
    if (m > n) { /* wider on the wire: extend (only for sizes we never have) */
        memmove(dst + (m - n), dst, n);
        memset(dst, (be[0] & 0x80) ? 0xff : 0, m - n);
    }
}

static void int_ext_to_native(unsigned char *dst, size_t n, const unsigned char *src, size_t m,
                              int is_signed) {
    unsigned char be[16];
    if (n >= m) {
        memset(be, is_signed && (src[0] & 0x80) ? 0xff : 0, n - m);
        memcpy(be + (n - m), src, m);
    } else {
        memcpy(be, src + (m - n), n);
    }
    to_be(dst, be, n); /* big-endian -> native is the same reversal */
}

/* x87 80-bit extended (in 16 bytes) <-> IEEE binary128, both as the values of
 * the standard's 16-byte MPI_LONG_DOUBLE. Sign and 15-bit exponent are the
 * same; the 64-bit significand has an explicit integer bit that binary128
 * leaves implicit, so the fraction is its low 63 bits. */
static void ldbl_native_to_ext(unsigned char *dst, const unsigned char *src) {
#if LDBL_MANT_DIG == 64 && HOST_LE
    uint64_t mant;
    uint16_t se;
    memcpy(&mant, src, 8);
    memcpy(&se, src + 8, 2);
    uint64_t hi = (uint64_t)se << 48 | ((mant & 0x7fffffffffffffffull) >> 15);
    uint64_t lo = mant << 49;
    for (int i = 0; i < 8; i++) {
        dst[i] = (unsigned char)(hi >> (56 - 8 * i));
        dst[8 + i] = (unsigned char)(lo >> (56 - 8 * i));
    }
#else
    to_be(dst, src, 16);
#endif
}

static void ldbl_ext_to_native(unsigned char *dst, const unsigned char *src) {
#if LDBL_MANT_DIG == 64 && HOST_LE
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++) {
        hi = hi << 8 | src[i];
        lo = lo << 8 | src[8 + i];
    }
    uint16_t se = (uint16_t)(hi >> 48);
    uint64_t frac = (hi & 0xffffffffffffull) << 15 | lo >> 49;
    uint64_t mant = frac | ((se & 0x7fff) ? 0x8000000000000000ull : 0);
    memset(dst, 0, 16);
    memcpy(dst, &mant, 8);
    memcpy(dst + 8, &se, 2);
#else
    to_be(dst, src, 16);
#endif
}

/* Convert n elements of one predefined one-element type. */
static void conv_run(const tdm_basic_info_t *bi, size_t n, unsigned char *nat, unsigned char *ext,
                     int to_ext) {
    size_t ns = bi->size, es = bi->ext32;
    for (size_t k = 0; k < n; k++, nat += ns, ext += es) {
        /* the conversions that read as they write, whichever the direction */
        unsigned char *dst = to_ext ? ext : nat;
        const unsigned char *src = to_ext ? nat : ext;
        size_t dhalf = (to_ext ? es : ns) / 2, shalf = (to_ext ? ns : es) / 2;
        switch (bi->conv) {
        case TDM_CV_COPY:
            memcpy(dst, src, ns);
            break;
        case TDM_CV_SWAP:
            to_be(dst, src, ns);
            break;
        case TDM_CV_SINT:
        case TDM_CV_UINT:
            if (to_ext)
                int_native_to_ext(ext, es, nat, ns);
            else
                int_ext_to_native(nat, ns, ext, es, bi->conv == TDM_CV_SINT);
            break;
        case TDM_CV_LDBL:
            if (to_ext)
                ldbl_native_to_ext(ext, nat);
            else
                ldbl_ext_to_native(nat, ext);
            break;
        case TDM_CV_CSWAP:
            for (int h = 0; h < 2; h++)
                to_be(dst + h * dhalf, src + h * shalf, ns / 2);
            break;
        case TDM_CV_CLDBL:
            for (int h = 0; h < 2; h++) {
                if (to_ext)
                    ldbl_native_to_ext(ext + h * 16, nat + h * ns / 2);
                else
                    ldbl_ext_to_native(nat + h * ns / 2, ext + h * 16);
            }
            break;
        default:
            break;
        }
    }
}

typedef struct conv {
    unsigned char *nat, *ext; /* cursors in the native packed stream and the external one */
    int to_ext;
} conv_t;

static void conv_basic(conv_t *c, const tdm_basic_info_t *bi, size_t n) {
    if (!bi->comp[0]) {
        conv_run(bi, n, c->nat, c->ext, c->to_ext);
        c->nat += n * bi->size;
        c->ext += n * bi->ext32;
        return;
    }
    const tdm_basic_info_t *a = tdm_dtype_basic_info(bi->comp[0]);
    const tdm_basic_info_t *b = tdm_dtype_basic_info(bi->comp[1]);
    for (size_t k = 0; k < n; k++) {
        conv_basic(c, a, 1);
        conv_basic(c, b, 1);
    }
}

/* Convert `reps` items of dt along its signature. */
static void conv_walk(conv_t *c, const tdm_dtype_t *dt, size_t reps) {
    const tdm_dtype_ext_t *x = tdm_dtype_ext(dt);
    if (x->elem_basic) {
        conv_basic(c, tdm_dtype_basic_info(x->elem_basic), reps * dt->nelems);
        return;
    }
    switch (x->sig_kind) {
    case TDM_SIG_BASIC:
        conv_basic(c, x->binfo, reps);
        return;
    case TDM_SIG_REPEAT:
        for (size_t r = 0; r < reps; r++)
            conv_walk(c, x->sig_child, x->sig_n);
        return;
    default:
        for (size_t r = 0; r < reps; r++)
            for (size_t i = 0; i < x->sig_n; i++)
                conv_walk(c, x->sig_types[i], x->sig_bl[i]);
        return;
    }
}

int tdm_dtype_pack_ext32(const void *buf, size_t count, const tdm_dtype_t *dt, void *dst) {
    size_t bytes = count * dt->size;
    unsigned char *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return -ENOMEM;
    tdm_dtype_pack(buf, count, dt, 0, tmp, bytes);
    conv_t c = {.nat = tmp, .ext = dst, .to_ext = 1};
    conv_walk(&c, dt, count);
    free(tmp);
    return 0;
}

int tdm_dtype_unpack_ext32(const void *src, void *buf, size_t count, const tdm_dtype_t *dt) {
    size_t bytes = count * dt->size;
    unsigned char *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return -ENOMEM;
    conv_t c = {.nat = tmp, .ext = (unsigned char *)src, .to_ext = 0};
    conv_walk(&c, dt, count);
    tdm_dtype_unpack(buf, count, dt, 0, tmp, bytes);
    free(tmp);
    return 0;
}
