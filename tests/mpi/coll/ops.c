/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Reduce_local with the predefined ops on the types MPI allows (integers,
 * floating point, logical, byte, complex, MINLOC/MAXLOC pairs), against serial
 * reference values, on pairs and on long vectors; ops on types they are not
 * defined on fail with MPI_ERR_OP; a user op on Allreduce.
 */
#include <complex.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int errs, rank;
#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && errs++ < 10) {                                                             \
            fprintf(stderr, "[%d] ", rank);                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define INT_CASE(_T, _dt)                                                                          \
    do {                                                                                           \
        _T a[2] = {6, 0}, b[2] = {3, 5};                                                           \
        struct {                                                                                   \
            MPI_Op op;                                                                             \
            _T r0, r1;                                                                             \
        } t[] = {{MPI_MAX, 6, 5},  {MPI_MIN, 3, 0}, {MPI_SUM, 9, 5},  {MPI_PROD, 18, 0},           \
                 {MPI_LAND, 1, 0}, {MPI_LOR, 1, 1}, {MPI_LXOR, 0, 1}, {MPI_BAND, 2, 0},            \
                 {MPI_BOR, 7, 5},  {MPI_BXOR, 5, 5}};                                              \
        for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {                                    \
            _T c[2] = {b[0], b[1]};                                                                \
            int rc = MPI_Reduce_local(a, c, 2, _dt, t[k].op);                                      \
            CHECK(rc == MPI_SUCCESS && c[0] == t[k].r0 && c[1] == t[k].r1,                         \
                  "%s op %zu: rc=%d %lld %lld", #_dt, k, rc, (long long)c[0], (long long)c[1]);    \
        }                                                                                          \
    } while (0)

#define FLOAT_CASE(_T, _dt)                                                                        \
    do {                                                                                           \
        _T a[2] = {1.5, -2}, b[2] = {2, 4};                                                        \
        struct {                                                                                   \
            MPI_Op op;                                                                             \
            _T r0, r1;                                                                             \
        } t[] = {{MPI_MAX, 2, 4}, {MPI_MIN, 1.5, -2}, {MPI_SUM, 3.5, 2}, {MPI_PROD, 3, -8}};       \
        for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {                                    \
            _T c[2] = {b[0], b[1]};                                                                \
            int rc = MPI_Reduce_local(a, c, 2, _dt, t[k].op);                                      \
            CHECK(rc == MPI_SUCCESS && c[0] == t[k].r0 && c[1] == t[k].r1, "%s op %zu", #_dt, k);  \
        }                                                                                          \
        _T c[2];                                                                                   \
        CHECK(cls(MPI_Reduce_local(a, c, 2, _dt, MPI_BAND)) == MPI_ERR_OP, "BAND on %s accepted",  \
              #_dt);                                                                               \
    } while (0)

#define COMPLEX_CASE(_T, _dt)                                                                      \
    do {                                                                                           \
        _T a = 1 + 2 * I, b = 3 - 1 * I, c = b;                                                    \
        CHECK(MPI_Reduce_local(&a, &c, 1, _dt, MPI_SUM) == MPI_SUCCESS && c == a + b, "%s sum",    \
              #_dt);                                                                               \
        c = b;                                                                                     \
        CHECK(MPI_Reduce_local(&a, &c, 1, _dt, MPI_PROD) == MPI_SUCCESS && c == a * b, "%s prod",  \
              #_dt);                                                                               \
        CHECK(cls(MPI_Reduce_local(&a, &c, 1, _dt, MPI_MAX)) == MPI_ERR_OP, "MAX on %s accepted",  \
              #_dt);                                                                               \
    } while (0)

#define PAIR_CASE(_V, _dt)                                                                         \
    do {                                                                                           \
        struct {                                                                                   \
            _V v;                                                                                  \
            int i;                                                                                 \
        } a[3] = {{1, 4}, {5, 1}, {2, 0}}, b[3] = {{2, 3}, {5, 2}, {2, 1}}, c[3];                  \
        memcpy(c, b, sizeof(c));                                                                   \
        CHECK(MPI_Reduce_local(a, c, 3, _dt, MPI_MINLOC) == MPI_SUCCESS && c[0].v == 1 &&          \
                  c[0].i == 4 && c[1].i == 1 && c[2].v == 2 && c[2].i == 0,                        \
              "%s minloc", #_dt);                                                                  \
        memcpy(c, b, sizeof(c));                                                                   \
        CHECK(MPI_Reduce_local(a, c, 3, _dt, MPI_MAXLOC) == MPI_SUCCESS && c[0].v == 2 &&          \
                  c[0].i == 3 && c[1].i == 1 && c[2].i == 0,                                       \
              "%s maxloc", #_dt);                                                                  \
    } while (0)

static int cls(int err) {
    int c = err;
    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &c);
    return c;
}

static void sub3(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)in)[i] * 3 + ((int *)inout)[i]; /* not commutative */
}

/* Long vectors, at every alignment the element size allows and at lengths
 * around the vector widths (the reductions are built for SSE2, AVX2 and
 * AVX-512: a wrong tail or prologue shows here), against a serial loop. */
#define LONG_CASE(_T, _dt, _op, _expr)                                                             \
    do {                                                                                           \
        static _T a[4200], b[4200], c[4200];                                                       \
        static const int lens[] = {1,  3,  7,  8,  15,  16,  17,   31,  32,                        \
                                   33, 63, 64, 65, 127, 129, 1000, 4099};                          \
        for (int li = 0; li < (int)(sizeof(lens) / sizeof(lens[0])); li++) {                       \
            for (int off = 0; off < 3; off++) {                                                    \
                int n = lens[li];                                                                  \
                for (int i = 0; i < n + off; i++) {                                                \
                    a[i] = (_T)((i * 37 + 11) % 101 - 17);                                         \
                    b[i] = c[i] = (_T)((i * 53 + 5) % 89 - 40);                                    \
                }                                                                                  \
                int rc = MPI_Reduce_local(a + off, c + off, n, _dt, _op);                          \
                int bad = -1;                                                                      \
                for (int i = off; i < n + off && bad < 0; i++) {                                   \
                    _T x = a[i], y = b[i];                                                         \
                    if (c[i] != (_T)(_expr))                                                       \
                        bad = i;                                                                   \
                }                                                                                  \
                CHECK(rc == MPI_SUCCESS && bad < 0, "%s %s, %d elements at offset %d: element %d", \
                      #_dt, #_op, n, off, bad);                                                    \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static void long_vectors(void) {
    LONG_CASE(int8_t, MPI_INT8_T, MPI_SUM, x + y);
    LONG_CASE(int16_t, MPI_INT16_T, MPI_MIN, x < y ? x : y);
    LONG_CASE(int32_t, MPI_INT32_T, MPI_SUM, x + y);
    LONG_CASE(int32_t, MPI_INT32_T, MPI_MAX, x > y ? x : y);
    LONG_CASE(int32_t, MPI_INT32_T, MPI_PROD, x * y);
    LONG_CASE(int32_t, MPI_INT32_T, MPI_BXOR, x ^ y);
    LONG_CASE(uint64_t, MPI_UINT64_T, MPI_MAX, x > y ? x : y);
    LONG_CASE(int64_t, MPI_INT64_T, MPI_SUM, x + y);
    LONG_CASE(float, MPI_FLOAT, MPI_SUM, x + y);
    LONG_CASE(float, MPI_FLOAT, MPI_MIN, x < y ? x : y);
    LONG_CASE(double, MPI_DOUBLE, MPI_SUM, x + y);
    LONG_CASE(double, MPI_DOUBLE, MPI_PROD, x *y);
    LONG_CASE(double, MPI_DOUBLE, MPI_MAX, x > y ? x : y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long_vectors();
    INT_CASE(signed char, MPI_SIGNED_CHAR);
    INT_CASE(unsigned char, MPI_UNSIGNED_CHAR);
    INT_CASE(short, MPI_SHORT);
    INT_CASE(unsigned short, MPI_UNSIGNED_SHORT);
    INT_CASE(int, MPI_INT);
    INT_CASE(unsigned, MPI_UNSIGNED);
    INT_CASE(long, MPI_LONG);
    INT_CASE(unsigned long, MPI_UNSIGNED_LONG);
    INT_CASE(long long, MPI_LONG_LONG);
    INT_CASE(unsigned long long, MPI_UNSIGNED_LONG_LONG);
    INT_CASE(int8_t, MPI_INT8_T);
    INT_CASE(int16_t, MPI_INT16_T);
    INT_CASE(int32_t, MPI_INT32_T);
    INT_CASE(int64_t, MPI_INT64_T);
    INT_CASE(uint8_t, MPI_UINT8_T);
    INT_CASE(uint16_t, MPI_UINT16_T);
    INT_CASE(uint32_t, MPI_UINT32_T);
    INT_CASE(uint64_t, MPI_UINT64_T);
    INT_CASE(int, MPI_INTEGER);
    INT_CASE(MPI_Aint, MPI_AINT);
    INT_CASE(MPI_Offset, MPI_OFFSET);
    INT_CASE(MPI_Count, MPI_COUNT);
    FLOAT_CASE(float, MPI_FLOAT);
    FLOAT_CASE(double, MPI_DOUBLE);
    FLOAT_CASE(long double, MPI_LONG_DOUBLE);
    FLOAT_CASE(float, MPI_REAL);
    FLOAT_CASE(double, MPI_DOUBLE_PRECISION);
    COMPLEX_CASE(float _Complex, MPI_C_FLOAT_COMPLEX);
    COMPLEX_CASE(double _Complex, MPI_C_DOUBLE_COMPLEX);
    COMPLEX_CASE(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX);
    COMPLEX_CASE(float _Complex, MPI_COMPLEX);
    COMPLEX_CASE(double _Complex, MPI_DOUBLE_COMPLEX);
    PAIR_CASE(float, MPI_FLOAT_INT);
    PAIR_CASE(double, MPI_DOUBLE_INT);
    PAIR_CASE(long, MPI_LONG_INT);
    PAIR_CASE(int, MPI_2INT);
    PAIR_CASE(short, MPI_SHORT_INT);
    PAIR_CASE(long double, MPI_LONG_DOUBLE_INT);
    {
        bool a[3] = {true, false, true}, c[3] = {true, true, false};
        CHECK(MPI_Reduce_local(a, c, 3, MPI_C_BOOL, MPI_LXOR) == MPI_SUCCESS && !c[0] && c[1] &&
                  c[2],
              "C_BOOL lxor");
        CHECK(cls(MPI_Reduce_local(a, c, 3, MPI_C_BOOL, MPI_SUM)) == MPI_ERR_OP, "SUM on C_BOOL");
        unsigned char x[2] = {0xf0, 0x0f}, y[2] = {0x3c, 0x3c};
        CHECK(MPI_Reduce_local(x, y, 2, MPI_BYTE, MPI_BXOR) == MPI_SUCCESS && y[0] == 0xcc &&
                  y[1] == 0x33,
              "BYTE bxor");
        CHECK(cls(MPI_Reduce_local(x, y, 2, MPI_BYTE, MPI_SUM)) == MPI_ERR_OP, "SUM on BYTE");
        int i1 = 1, i2 = 2;
        CHECK(cls(MPI_Reduce_local(&i1, &i2, 1, MPI_INT, MPI_REPLACE)) == MPI_ERR_OP,
              "MPI_REPLACE accepted by Reduce_local");
        CHECK(cls(MPI_Allreduce(&i1, &i2, 1, MPI_INT, MPI_NO_OP, MPI_COMM_WORLD)) == MPI_ERR_OP,
              "MPI_NO_OP accepted by Allreduce");
        CHECK(cls(MPI_Reduce_local(&i1, &i2, 1, MPI_INT, (MPI_Op)0x98000fff)) == MPI_ERR_OP,
              "invalid op handle accepted");
        CHECK(cls(MPI_Op_free(&(MPI_Op){MPI_SUM})) == MPI_ERR_OP, "freeing MPI_SUM accepted");
        CHECK(cls(MPI_Bcast(&i1, 1, MPI_INT, size, MPI_COMM_WORLD)) == MPI_ERR_ROOT, "bad root");
        CHECK(cls(MPI_Allreduce(&i1, &i1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_BUFFER,
              "aliased buffers accepted");
        /* one buffer for both sides moves nothing when every count is 0 (mpi4py passes
         * one static address for every empty array): accepted, as MPICH does */
        int zc[64] = {0}, zd[64] = {0}, one[64], od[64];
        MPI_Datatype ts[64];
        int big = size < 64 ? size : 64;
        for (int i = 0; i < big; i++) {
            one[i] = 1;
            od[i] = i;
            ts[i] = MPI_INT;
        }
        int blk[64];
        CHECK(MPI_Alltoallv(blk, zc, zd, MPI_INT, blk, zc, zd, MPI_INT, MPI_COMM_WORLD) ==
                  MPI_SUCCESS,
              "Alltoallv with every count 0 and one buffer refused");
        CHECK(MPI_Alltoallw(blk, zc, zd, ts, blk, zc, zd, ts, MPI_COMM_WORLD) == MPI_SUCCESS,
              "Alltoallw with every count 0 and one buffer refused");
        CHECK(MPI_Alltoall(blk, 0, MPI_INT, blk, 0, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS,
              "Alltoall of 0 items with one buffer refused");
        CHECK(MPI_Reduce_scatter(blk, blk, zc, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS,
              "Reduce_scatter with every count 0 and one buffer refused");
        if (size <= 64) {
            CHECK(cls(MPI_Alltoallv(blk, one, od, MPI_INT, blk, one, od, MPI_INT,
                                    MPI_COMM_WORLD)) == MPI_ERR_BUFFER,
                  "aliased Alltoallv buffers accepted");
            CHECK(cls(MPI_Alltoall(blk, 1, MPI_INT, blk, 1, MPI_INT, MPI_COMM_WORLD)) ==
                      MPI_ERR_BUFFER,
                  "aliased Alltoall buffers accepted");
        }
        /* a class of newer MPICH ABIs (4.1+, which mpi4py's wheel is built with) */
        int ecls = -1, elen = 0;
        char estr[MPI_MAX_ERROR_STRING];
        CHECK(MPI_Error_class(80, &ecls) == MPI_SUCCESS && ecls == 80 &&
                  MPI_Error_string(80, estr, &elen) == MPI_SUCCESS && elen > 0,
              "error class 80 (MPI_ERR_ERRHANDLER): class %d", ecls);
    }
    /* user op, non-commutative: x0 op x1 op ... evaluated left to right, in rank order */
    MPI_Op op;
    MPI_Op_create(sub3, 0, &op);
    int in = rank + 1, out = -1, ref = 1;
    for (int r = 1; r < size; r++)
        ref = ref * 3 + r + 1;
    MPI_Allreduce(&in, &out, 1, MPI_INT, op, MPI_COMM_WORLD);
    CHECK(out == ref, "user op allreduce: %d, expected %d", out, ref);
    MPI_Op_free(&op);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
