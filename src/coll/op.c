/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduction operations: the predefined ops on every type MPI-4.1 §6.9.2 allows,
 * and user ops (MPI_Op_create / _c).
 *
 * Predefined ops work on the packed stream of the basic type a datatype is made
 * of: `count` items of a derived type of MPI_INT are count * nelems ints. When
 * the type is contiguous the user buffer is that stream; otherwise both buffers
 * are packed, reduced and the result unpacked. A value+index pair (MPI_DOUBLE_INT)
 * is one element: the value at offset 0, the int right after it (no padding in
 * the packed stream), read and written with memcpy as it is unaligned there.
 * The 2-byte floating types (binary16, bfloat16) are reduced through double
 * (src/base/fp16.h), the 16-byte integers as __int128; MPI_REAL16 and MPI_COMPLEX32
 * are not reduced (MPI_ERR_OP): clang has no binary128 arithmetic on x86-64.
 */
#include "coll.h"

#include "../base/fp16.h"
#include "../base/log.h"
#include "../base/htab.h"
#include "../base/ref.h"
#include "../base/abi.h"

#include <complex.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(long) == 8, "MPI_LONG reduced as a 64-bit integer");
__extension__ typedef __int128 tdm_i128_t;
__extension__ typedef unsigned __int128 tdm_u128_t;

/* How the elements of a basic type are reduced. */
typedef enum {
    K_NONE = 0,
    K_I8,
    K_U8,
    K_I16,
    K_U16,
    K_I32,
    K_U32,
    K_I64,
    K_U64,
    K_I128, /* C and Fortran integers */
    K_F16,
    K_BF16, /* 2-byte floating point, reduced through double */
    K_F32,
    K_F64,
    K_LD,   /* floating point */
    K_BOOL, /* C _Bool, C++ bool */
    K_FLOG, /* Fortran LOGICAL (4-byte int) */
    K_FLOG1,
    K_FLOG2,
    K_FLOG8,
    K_FLOG16, /* Fortran LOGICAL*n */
    K_BYTE,
    K_CF,
    K_CD,
    K_CLD,
    K_C16, /* complex */
    K_P_FI,
    K_P_DI,
    K_P_LI,
    K_P_II,
    K_P_SI,
    K_P_LDI,
    K_P_FF,
    K_P_DD, /* MINLOC/MAXLOC pairs */
} kind_t;

static kind_t kind_of(int h) {
    switch (h) {
    case TDM_MPI_CHAR:
    case TDM_MPI_SIGNED_CHAR:
    case TDM_MPI_INT8_T:
    case TDM_MPI_INTEGER1:
        return K_I8;
    case TDM_MPI_UNSIGNED_CHAR:
    case TDM_MPI_UINT8_T:
        return K_U8;
    case TDM_MPI_SHORT:
    case TDM_MPI_INT16_T:
    case TDM_MPI_INTEGER2:
        return K_I16;
    case TDM_MPI_UNSIGNED_SHORT:
    case TDM_MPI_UINT16_T:
        return K_U16;
    case TDM_MPI_INT:
    case TDM_MPI_INT32_T:
    case TDM_MPI_INTEGER:
    case TDM_MPI_INTEGER4:
        return K_I32;
    case TDM_MPI_UNSIGNED:
    case TDM_MPI_UINT32_T:
        return K_U32;
    case TDM_MPI_LONG:
    case TDM_MPI_LONG_LONG_INT:
    case TDM_MPI_INT64_T:
    case TDM_MPI_INTEGER8:
    case TDM_MPI_AINT:
    case TDM_MPI_OFFSET:
    case TDM_MPI_COUNT:
        return K_I64;
    case TDM_MPI_UNSIGNED_LONG:
    case TDM_MPI_UNSIGNED_LONG_LONG:
    case TDM_MPI_UINT64_T:
        return K_U64;
    case TDM_MPI_INTEGER16:
        return K_I128;
    case TDM_MPIX_C_FLOAT16:
    case TDM_MPI_REAL2:
        return K_F16;
    case TDM_MPIX_BFLOAT16:
        return K_BF16;
    case TDM_MPI_FLOAT:
    case TDM_MPI_REAL:
    case TDM_MPI_REAL4:
        return K_F32;
    case TDM_MPI_DOUBLE:
    case TDM_MPI_DOUBLE_PRECISION:
    case TDM_MPI_REAL8:
        return K_F64;
    case TDM_MPI_LONG_DOUBLE:
        return K_LD;
    case TDM_MPI_C_BOOL:
    case TDM_MPI_CXX_BOOL:
        return K_BOOL;
    case TDM_MPI_LOGICAL:
    case TDM_MPI_LOGICAL4:
        return K_FLOG;
    case TDM_MPI_LOGICAL1:
        return K_FLOG1;
    case TDM_MPI_LOGICAL2:
        return K_FLOG2;
    case TDM_MPI_LOGICAL8:
        return K_FLOG8;
    case TDM_MPI_LOGICAL16:
        return K_FLOG16;
    case TDM_MPI_BYTE:
        return K_BYTE;
    case TDM_MPI_C_FLOAT_COMPLEX:
    case TDM_MPI_COMPLEX:
    case TDM_MPI_COMPLEX8:
    case TDM_MPI_CXX_FLOAT_COMPLEX:
        return K_CF;
    case TDM_MPI_C_DOUBLE_COMPLEX:
    case TDM_MPI_DOUBLE_COMPLEX:
    case TDM_MPI_COMPLEX16:
    case TDM_MPI_CXX_DOUBLE_COMPLEX:
        return K_CD;
    case TDM_MPI_C_LONG_DOUBLE_COMPLEX:
    case TDM_MPI_CXX_LONG_DOUBLE_COMPLEX:
        return K_CLD;
    case TDM_MPI_COMPLEX4:
        return K_C16;
    case TDM_MPI_FLOAT_INT:
        return K_P_FI;
    case TDM_MPI_DOUBLE_INT:
        return K_P_DI;
    case TDM_MPI_LONG_INT:
        return K_P_LI;
    case TDM_MPI_2INT:
    case TDM_MPI_2INTEGER:
        return K_P_II;
    case TDM_MPI_SHORT_INT:
        return K_P_SI;
    case TDM_MPI_LONG_DOUBLE_INT:
        return K_P_LDI;
    case TDM_MPI_2REAL:
        return K_P_FF;
    case TDM_MPI_2DOUBLE_PRECISION:
        return K_P_DD;
    default:
        return K_NONE;
    }
}

#define LOOP(_T, _expr)                                                                            \
    do {                                                                                           \
        const _T *restrict a_ = in; /* MPI: the buffers do not overlap */                          \
        _T *restrict b_ = inout;                                                                   \
        for (size_t i_ = 0; i_ < n; i_++) {                                                        \
            _T x = a_[i_], y = b_[i_];                                                             \
            b_[i_] = (_expr);                                                                      \
        }                                                                                          \
    } while (0)

/* Signed sums and products wrap through the unsigned type (no UB on overflow). */
#define INT_OPS(_T, _UT)                                                                           \
    switch (code) {                                                                                \
    case TDM_OP_MAX:                                                                               \
        LOOP(_T, x > y ? x : y);                                                                   \
        return true;                                                                               \
    case TDM_OP_MIN:                                                                               \
        LOOP(_T, x < y ? x : y);                                                                   \
        return true;                                                                               \
    case TDM_OP_SUM:                                                                               \
        LOOP(_T, (_T)((_UT)x + (_UT)y));                                                           \
        return true;                                                                               \
    case TDM_OP_PROD:                                                                              \
        LOOP(_T, (_T)((_UT)x * (_UT)y));                                                           \
        return true;                                                                               \
    case TDM_OP_LAND:                                                                              \
        LOOP(_T, (_T)(x && y));                                                                    \
        return true;                                                                               \
    case TDM_OP_LOR:                                                                               \
        LOOP(_T, (_T)(x || y));                                                                    \
        return true;                                                                               \
    case TDM_OP_LXOR:                                                                              \
        LOOP(_T, (_T)(!x != !y));                                                                  \
        return true;                                                                               \
    case TDM_OP_BAND:                                                                              \
        LOOP(_T, (_T)(x & y));                                                                     \
        return true;                                                                               \
    case TDM_OP_BOR:                                                                               \
        LOOP(_T, (_T)(x | y));                                                                     \
        return true;                                                                               \
    case TDM_OP_BXOR:                                                                              \
        LOOP(_T, (_T)(x ^ y));                                                                     \
        return true;                                                                               \
    default:                                                                                       \
        return false;                                                                              \
    }

#define FLOAT_OPS(_T)                                                                              \
    switch (code) {                                                                                \
    case TDM_OP_MAX:                                                                               \
        LOOP(_T, x > y ? x : y);                                                                   \
        return true;                                                                               \
    case TDM_OP_MIN:                                                                               \
        LOOP(_T, x < y ? x : y);                                                                   \
        return true;                                                                               \
    case TDM_OP_SUM:                                                                               \
        LOOP(_T, x + y);                                                                           \
        return true;                                                                               \
    case TDM_OP_PROD:                                                                              \
        LOOP(_T, x *y);                                                                            \
        return true;                                                                               \
    default:                                                                                       \
        return false;                                                                              \
    }

#define LOGICAL_OPS(_T)                                                                            \
    switch (code) {                                                                                \
    case TDM_OP_LAND:                                                                              \
        LOOP(_T, (_T)(x && y));                                                                    \
        return true;                                                                               \
    case TDM_OP_LOR:                                                                               \
        LOOP(_T, (_T)(x || y));                                                                    \
        return true;                                                                               \
    case TDM_OP_LXOR:                                                                              \
        LOOP(_T, (_T)(!x != !y));                                                                  \
        return true;                                                                               \
    default:                                                                                       \
        return false;                                                                              \
    }

#define COMPLEX_OPS(_T)                                                                            \
    switch (code) {                                                                                \
    case TDM_OP_SUM:                                                                               \
        LOOP(_T, x + y);                                                                           \
        return true;                                                                               \
    case TDM_OP_PROD:                                                                              \
        LOOP(_T, x *y);                                                                            \
        return true;                                                                               \
    default:                                                                                       \
        return false;                                                                              \
    }

/* binary16 or bfloat16 (bit patterns) through double: MAX and MIN keep the chosen
 * operand's bits, SUM and PROD round once (exact in double, see fp16.h) */
#define HALF_OPS(_to, _from)                                                                       \
    switch (code) {                                                                                \
    case TDM_OP_MAX:                                                                               \
        LOOP(uint16_t, _to(x) > _to(y) ? x : y);                                                   \
        return true;                                                                               \
    case TDM_OP_MIN:                                                                               \
        LOOP(uint16_t, _to(x) < _to(y) ? x : y);                                                   \
        return true;                                                                               \
    case TDM_OP_SUM:                                                                               \
        LOOP(uint16_t, _from(_to(x) + _to(y)));                                                    \
        return true;                                                                               \
    case TDM_OP_PROD:                                                                              \
        LOOP(uint16_t, _from(_to(x) * _to(y)));                                                    \
        return true;                                                                               \
    default:                                                                                       \
        return false;                                                                              \
    }

/* MPI_COMPLEX4: two binary16 (real, imaginary), the product through double */
static bool complex_half_ops(int code, const uint16_t *restrict a, uint16_t *restrict b, size_t n) {
    if (code != TDM_OP_SUM && code != TDM_OP_PROD)
        return false;
    for (size_t i = 0; i < n; i++) {
        double ar = tdm_f16_to_double(a[2 * i]), ai = tdm_f16_to_double(a[2 * i + 1]);
        double br = tdm_f16_to_double(b[2 * i]), bi = tdm_f16_to_double(b[2 * i + 1]);
        double re = code == TDM_OP_SUM ? ar + br : ar * br - ai * bi;
        double im = code == TDM_OP_SUM ? ai + bi : ar * bi + ai * br;
        b[2 * i] = tdm_f16_from_double(re);
        b[2 * i + 1] = tdm_f16_from_double(im);
    }
    return true;
}

/* MINLOC/MAXLOC on packed {V value; int index} pairs (MPI-4.1 §6.9.4: ties keep
 * the smaller index). */
#define PAIR_OPS(_V, _I)                                                                           \
    do {                                                                                           \
        if (code != TDM_OP_MINLOC && code != TDM_OP_MAXLOC)                                        \
            return false;                                                                          \
        const size_t esz_ = sizeof(_V) + sizeof(_I);                                               \
        const char *a_ = in;                                                                       \
        char *b_ = inout;                                                                          \
        for (size_t i_ = 0; i_ < n; i_++, a_ += esz_, b_ += esz_) {                                \
            _V av, bv;                                                                             \
            _I ai, bi;                                                                             \
            memcpy(&av, a_, sizeof(_V));                                                           \
            memcpy(&bv, b_, sizeof(_V));                                                           \
            memcpy(&ai, a_ + sizeof(_V), sizeof(_I));                                              \
            memcpy(&bi, b_ + sizeof(_V), sizeof(_I));                                              \
            bool take = code == TDM_OP_MINLOC ? av < bv : av > bv;                                 \
            if (take || (av == bv && ai < bi)) {                                                   \
                if (take)                                                                          \
                    memcpy(b_, &av, sizeof(_V));                                                   \
                memcpy(b_ + sizeof(_V), &ai, sizeof(_I));                                          \
            }                                                                                      \
        }                                                                                          \
        return true;                                                                               \
    } while (0)

/* inout = in op inout on n packed elements; false if op is not defined on kind
 * (n = 0 asks only that). Built for the baseline and for AVX2 and AVX-512, the
 * loader picks the widest the CPU has (ifunc): the SSE2 baseline alone summed
 * 1 MiB of MPI_FLOAT in 66 us, the AVX-512 clone in 27 us (memcpy: 24 us), and
 * a 2-rank Allreduce of 4 MiB went from 872 to 588 us (Open MPI 862). */
/* Not under ThreadSanitizer: the ifunc resolvers run before its runtime is set up and
 * crash in its function-entry hook, and a race report then lacks its callers. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TDM_REDUCE_NO_CLONES 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TDM_REDUCE_NO_CLONES 1
#endif
#if defined(__x86_64__) && defined(__has_attribute) && !defined(TDM_REDUCE_NO_CLONES)
#if __has_attribute(target_clones)
#define TDM_REDUCE_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#endif
#endif
#ifndef TDM_REDUCE_CLONES
#define TDM_REDUCE_CLONES
#endif
TDM_REDUCE_CLONES static bool reduce_packed(int code, kind_t k, const void *in, void *inout,
                                            size_t n) {
    switch (k) {
    case K_I8:
        INT_OPS(int8_t, uint8_t)
    case K_U8:
        INT_OPS(uint8_t, uint8_t)
    case K_I16:
        INT_OPS(int16_t, uint16_t)
    case K_U16:
        INT_OPS(uint16_t, uint16_t)
    case K_I32:
        INT_OPS(int32_t, uint32_t)
    case K_U32:
        INT_OPS(uint32_t, uint32_t)
    case K_I64:
        INT_OPS(int64_t, uint64_t)
    case K_U64:
        INT_OPS(uint64_t, uint64_t)
    case K_I128:
        INT_OPS(tdm_i128_t, tdm_u128_t)
    case K_F16:
        HALF_OPS(tdm_f16_to_double, tdm_f16_from_double)
    case K_BF16:
        HALF_OPS(tdm_bf16_to_double, tdm_bf16_from_double)
    case K_F32:
        FLOAT_OPS(float)
    case K_F64:
        FLOAT_OPS(double)
    case K_LD:
        FLOAT_OPS(long double)
    case K_BOOL:
        LOGICAL_OPS(_Bool)
    case K_FLOG:
        LOGICAL_OPS(int32_t)
    case K_FLOG1:
        LOGICAL_OPS(int8_t)
    case K_FLOG2:
        LOGICAL_OPS(int16_t)
    case K_FLOG8:
        LOGICAL_OPS(int64_t)
    case K_FLOG16:
        LOGICAL_OPS(tdm_i128_t)
    case K_BYTE:
        switch (code) {
        case TDM_OP_BAND:
            LOOP(uint8_t, (uint8_t)(x & y));
            return true;
        case TDM_OP_BOR:
            LOOP(uint8_t, (uint8_t)(x | y));
            return true;
        case TDM_OP_BXOR:
            LOOP(uint8_t, (uint8_t)(x ^ y));
            return true;
        default:
            return false;
        }
    case K_CF:
        COMPLEX_OPS(float _Complex)
    case K_CD:
        COMPLEX_OPS(double _Complex)
    case K_CLD:
        COMPLEX_OPS(long double _Complex)
    case K_C16:
        return n == 0 ? code == TDM_OP_SUM || code == TDM_OP_PROD
                      : complex_half_ops(code, in, inout, n);
    case K_P_FI:
        PAIR_OPS(float, int);
    case K_P_DI:
        PAIR_OPS(double, int);
    case K_P_LI:
        PAIR_OPS(long, int);
    case K_P_II:
        PAIR_OPS(int, int);
    case K_P_SI:
        PAIR_OPS(short, int);
    case K_P_LDI:
        PAIR_OPS(long double, int);
    /* Fortran 2REAL / 2DOUBLE_PRECISION: the index is stored as a real */
    case K_P_FF:
        PAIR_OPS(float, float);
    case K_P_DD:
        PAIR_OPS(double, double);
    case K_NONE:
        return false;
    }
    return false;
}

/* ---- op objects ---- */

#define OP_USER_BASE 0x98000000u
#define OP_PREDEF_BASE 0x58000000u

/* Written once here, so lookups from several threads only read them. */
#define PREDEF(_c)                                                                                 \
    [_c] = {.handle = (int)(OP_PREDEF_BASE | (_c)),                                                \
            .refs = 1,                                                                             \
            .commute = 1,                                                                          \
            .predefined = 1,                                                                       \
            .code = (_c)}
static tdm_op_t predef[TDM_OP_LAST + 1] = {
    PREDEF(1), PREDEF(2), PREDEF(3),  PREDEF(4),  PREDEF(5),  PREDEF(6),  PREDEF(7),
    PREDEF(8), PREDEF(9), PREDEF(10), PREDEF(11), PREDEF(12), PREDEF(13), PREDEF(14)};
_Static_assert(TDM_OP_LAST == 14, "every predefined op has its entry above");
/* User ops: slots are reused once an op is destroyed (its last operation done). */
static tdm_htab_t user_ops = TDM_HTAB_INIT(0x04000000, false);

static const char *const predef_names[TDM_OP_LAST + 1] = {
    "MPI_OP_NULL", "MPI_MAX",    "MPI_MIN",    "MPI_SUM",     "MPI_PROD",
    "MPI_LAND",    "MPI_BAND",   "MPI_LOR",    "MPI_BOR",     "MPI_LXOR",
    "MPI_BXOR",    "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"};

tdm_op_t *tdm_op_get(int handle) {
    unsigned h = (unsigned)handle;
    if ((h & 0xffffff00u) == OP_PREDEF_BASE) {
        unsigned code = h & 0xff;
        if (code < 1 || code > TDM_OP_LAST)
            return NULL;
        return &predef[code];
    }
    if ((h & 0xfc000000u) == OP_USER_BASE) {
        tdm_op_t *op = tdm_htab_get(&user_ops, h & 0x03ffffffu);
        if (op && !TDM_LOAD_RELAXED(&op->freed))
            return op;
    }
    return NULL;
}

const char *tdm_op_name(const tdm_op_t *op) {
    return op->predefined ? predef_names[op->code] : "user-defined op";
}

tdm_op_t *tdm_op_create(void *fn, int commute, int large) {
    tdm_op_t *op = calloc(1, sizeof(*op));
    if (!op)
        return NULL;
    op->refs = 1;
    op->commute = commute != 0;
    op->large = large != 0;
    op->fn = fn;
    int i = tdm_htab_alloc(&user_ops, op);
    if (i < 0) {
        free(op);
        return NULL;
    }
    op->handle = (int)(OP_USER_BASE | (unsigned)i);
    return op;
}

void tdm_op_retain(tdm_op_t *op) {
    if (!op->predefined)
        tdm_ref_inc(&op->refs);
}

void tdm_op_release(tdm_op_t *op) {
    if (op->predefined || !tdm_ref_dec(&op->refs))
        return;
    tdm_htab_free(&user_ops, (int)((unsigned)op->handle & 0x03ffffffu));
    free(op);
}

void tdm_op_free(tdm_op_t *op) {
    TDM_STORE_RELAXED(&op->freed, 1);
    tdm_op_release(op);
}

bool tdm_op_valid_for(const tdm_op_t *op, const tdm_dtype_t *dt) {
    if (!op->predefined)
        return true;
    if (op->code == TDM_OP_REPLACE || op->code == TDM_OP_NO_OP)
        return false; /* one-sided accumulate only */
    if (dt->size == 0)
        return true; /* nothing to reduce (e.g. an empty struct) */
    return dt->basic && reduce_packed(op->code, kind_of(dt->basic), NULL, NULL, 0);
}

bool tdm_op_reduce_basic(int code, int basic, const void *in, void *inout, size_t n) {
    return reduce_packed(code, kind_of(basic), in, inout, n);
}

int tdm_op_basic_class(int basic) {
    switch (kind_of(basic)) {
    case K_I8:
    case K_U8:
    case K_I16:
    case K_U16:
    case K_I32:
    case K_U32:
    case K_I64:
    case K_U64:
        return 1;
    case K_F16:
    case K_BF16:
    case K_F32:
    case K_F64:
    case K_LD:
        return 2;
    default:
        return 0;
    }
}

typedef void(user_fn_t)(void *, void *, int *, int *);
typedef void(user_fn_c_t)(void *, void *, tdm_mpi_count_t *, int *);

void tdm_op_apply(const tdm_op_t *op, const void *in, void *inout, size_t count, tdm_dtype_t *dt) {
    if (count == 0 || dt->size == 0)
        return;
    if (!op->predefined) {
        int h = dt->handle;
        if (op->large) {
            tdm_mpi_count_t len = (tdm_mpi_count_t)count;
            ((user_fn_c_t *)op->fn)((void *)in, inout, &len, &h);
            return;
        }
        ptrdiff_t ext = tdm_dtype_extent(dt);
        while (count > 0) {
            int len = count > INT_MAX ? INT_MAX : (int)count;
            ((user_fn_t *)op->fn)((void *)in, inout, &len, &h);
            in = (const char *)in + (ptrdiff_t)len * ext;
            inout = (char *)inout + (ptrdiff_t)len * ext;
            count -= (size_t)len;
        }
        return;
    }
    if (op->code == TDM_OP_NO_OP)
        return;
    size_t bytes = count * dt->size;
    if (op->code == TDM_OP_REPLACE) {
        void *t = malloc(bytes);
        if (!t) {
            tdm_error(COLL, "out of memory for a %zu-byte reduction buffer", bytes);
            abort();
        }
        tdm_dtype_pack(in, count, dt, 0, t, bytes);
        tdm_dtype_unpack(inout, count, dt, 0, t, bytes);
        free(t);
        return;
    }
    size_t n = bytes / dt->basic_size;
    kind_t k = kind_of(dt->basic);
    if (dt->contig) {
        reduce_packed(op->code, k, (const char *)in + dt->true_lb, (char *)inout + dt->true_lb, n);
        return;
    }
    char *a = malloc(2 * bytes);
    if (!a) {
        tdm_error(COLL, "out of memory for 2 x %zu-byte reduction buffers", bytes);
        abort();
    }
    tdm_dtype_pack(in, count, dt, 0, a, bytes);
    tdm_dtype_pack(inout, count, dt, 0, a + bytes, bytes);
    reduce_packed(op->code, k, a, a + bytes, n);
    tdm_dtype_unpack(inout, count, dt, 0, a + bytes, bytes);
    free(a);
}
