/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Pack / MPI_Unpack of every constructor and every predefined type,
 * compared with byte layouts worked out by hand; sizes, bounds and extents
 * (including MPICH's struct padding), envelopes and contents, names,
 * MPI_Type_match_size, addresses, MPI_Pack_size.
 */
#include "dtest.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Pack `count` of dt from an int array holding 0, 1, 2, ... and compare with
 * the expected indices; then unpack into a fresh array and check that exactly
 * those positions were written. */
static void check_ints(const char *what, MPI_Datatype dt, int count, const int *want, int nwant,
                       int base_off) {
    enum { N = 256 };
    int src[N], dst[N], packed[N];
    for (int i = 0; i < N; i++)
        src[i] = i;
    int size, pos = 0;
    MPI_Pack_size(count, dt, MPI_COMM_WORLD, &size);
    CHECK(size == nwant * (int)sizeof(int), "%s: pack size %d, want %d", what, size,
          nwant * (int)sizeof(int));
    MPI_Pack(src + base_off, count, dt, packed, (int)sizeof(packed), &pos, MPI_COMM_WORLD);
    CHECK(pos == nwant * (int)sizeof(int), "%s: position %d after pack", what, pos);
    for (int i = 0; i < nwant && i < N; i++)
        CHECK(packed[i] == want[i], "%s: packed[%d] = %d, want %d", what, i, packed[i], want[i]);
    for (int i = 0; i < N; i++)
        dst[i] = -1;
    pos = 0;
    MPI_Unpack(packed, (int)sizeof(packed), &pos, dst + base_off, count, dt, MPI_COMM_WORLD);
    CHECK(pos == nwant * (int)sizeof(int), "%s: position %d after unpack", what, pos);
    int written = 0;
    for (int i = 0; i < N; i++) {
        if (dst[i] == -1)
            continue;
        written++;
        CHECK(dst[i] == i, "%s: unpack wrote %d at index %d", what, dst[i], i);
    }
    CHECK(written == nwant, "%s: unpack wrote %d ints, want %d", what, written, nwant);
}

static void check_bounds(const char *what, MPI_Datatype dt, MPI_Aint size, MPI_Aint lb,
                         MPI_Aint extent, MPI_Aint tlb, MPI_Aint textent) {
    int s;
    MPI_Aint l, e, tl, te;
    MPI_Count sx, lx, ex;
    MPI_Type_size(dt, &s);
    MPI_Type_get_extent(dt, &l, &e);
    MPI_Type_get_true_extent(dt, &tl, &te);
    CHECK(s == size && l == lb && e == extent && tl == tlb && te == textent,
          "%s: size %d lb %ld extent %ld true %ld/%ld, want %ld %ld %ld %ld/%ld", what, s, (long)l,
          (long)e, (long)tl, (long)te, (long)size, (long)lb, (long)extent, (long)tlb,
          (long)textent);
    MPI_Type_size_x(dt, &sx);
    MPI_Type_get_extent_x(dt, &lx, &ex);
    CHECK(sx == size && lx == lb && ex == extent, "%s: _x forms disagree", what);
    MPI_Type_get_true_extent_x(dt, &lx, &ex);
    CHECK(lx == tlb && ex == textent, "%s: true _x forms disagree", what);
}

static void test_constructors(void) {
    MPI_Datatype t, u;

    MPI_Type_contiguous(5, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("contiguous", t, 2, (int[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10, 0);
    check_bounds("contiguous", t, 20, 0, 20, 0, 20);
    MPI_Type_free(&t);
    CHECK(t == MPI_DATATYPE_NULL, "Type_free sets the handle to MPI_DATATYPE_NULL");

    MPI_Type_vector(3, 2, 4, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("vector", t, 1, (int[]){0, 1, 4, 5, 8, 9}, 6, 0);
    check_bounds("vector", t, 24, 0, 40, 0, 40);
    /* two items: the second starts one extent (10 ints) later */
    check_ints("vector x2", t, 2, (int[]){0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19}, 12, 0);
    MPI_Type_free(&t);

    MPI_Type_vector(3, 1, -2, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("vector negative stride", t, 1, (int[]){10, 8, 6}, 3, 10);
    check_bounds("vector negative stride", t, 12, -16, 20, -16, 20);
    MPI_Type_free(&t);

    MPI_Type_create_hvector(2, 3, 20, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("hvector", t, 1, (int[]){0, 1, 2, 5, 6, 7}, 6, 0);
    check_bounds("hvector", t, 24, 0, 32, 0, 32);
    MPI_Type_free(&t);

    MPI_Type_indexed(3, (int[]){2, 1, 3}, (int[]){5, 0, 8}, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("indexed", t, 1, (int[]){5, 6, 0, 8, 9, 10}, 6, 0);
    check_bounds("indexed", t, 24, 0, 44, 0, 44);
    MPI_Type_free(&t);

    MPI_Type_create_hindexed(2, (int[]){1, 2}, (MPI_Aint[]){32, 4}, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("hindexed", t, 1, (int[]){8, 1, 2}, 3, 0);
    check_bounds("hindexed", t, 12, 4, 32, 4, 32);
    MPI_Type_free(&t);

    MPI_Type_create_indexed_block(3, 2, (int[]){4, 0, 8}, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("indexed_block", t, 1, (int[]){4, 5, 0, 1, 8, 9}, 6, 0);
    MPI_Type_free(&t);

    MPI_Type_create_hindexed_block(2, 1, (MPI_Aint[]){8, 0}, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("hindexed_block", t, 1, (int[]){2, 0}, 2, 0);
    MPI_Type_free(&t);

    /* resized: items one extent (3 ints) apart, lb before the data */
    MPI_Type_create_resized(MPI_INT, -4, 12, &u);
    MPI_Type_contiguous(3, u, &t);
    MPI_Type_commit(&t);
    check_ints("contiguous of resized", t, 1, (int[]){1, 4, 7}, 3, 1);
    check_bounds("resized", u, 4, -4, 12, 0, 4);
    check_bounds("contiguous of resized", t, 12, -4, 36, 0, 28);
    MPI_Type_free(&t);
    MPI_Type_free(&u);

    /* contiguous of a vector with gaps */
    MPI_Type_vector(2, 1, 2, MPI_INT, &u);
    MPI_Type_contiguous(3, u, &t);
    MPI_Type_commit(&t);
    check_ints("contiguous of vector", t, 1, (int[]){0, 2, 3, 5, 6, 8}, 6, 0);
    MPI_Type_free(&t);

    /* dup: same layout, committed when the original is */
    MPI_Type_commit(&u);
    MPI_Type_dup(u, &t);
    check_ints("dup", t, 2, (int[]){0, 2, 3, 5}, 4, 0);
    MPI_Type_free(&t);
    MPI_Type_free(&u);

    /* subarray 4x5 ints, 2x3 at (1,1): C order rows, Fortran order columns */
    MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 1}, MPI_ORDER_C, MPI_INT,
                             &t);
    MPI_Type_commit(&t);
    check_ints("subarray C", t, 1, (int[]){6, 7, 8, 11, 12, 13}, 6, 0);
    check_bounds("subarray C", t, 24, 0, 80, 24, 32);
    MPI_Type_free(&t);
    MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 1}, MPI_ORDER_FORTRAN,
                             MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("subarray Fortran", t, 1, (int[]){5, 6, 9, 10, 13, 14}, 6, 0);
    MPI_Type_free(&t);

    /* darray: 10 ints cyclic(2) over 3 processes, rank 1 owns blocks 1 and 4 */
    MPI_Type_create_darray(3, 1, 1, (int[]){10}, (int[]){MPI_DISTRIBUTE_CYCLIC}, (int[]){2},
                           (int[]){3}, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("darray cyclic(2)", t, 1, (int[]){2, 3, 8, 9}, 4, 0);
    check_bounds("darray cyclic(2)", t, 16, 0, 40, 8, 32);
    MPI_Type_free(&t);
    /* block over 3: blocks of 4, rank 2 gets the short last one */
    MPI_Type_create_darray(3, 2, 1, (int[]){10}, (int[]){MPI_DISTRIBUTE_BLOCK},
                           (int[]){MPI_DISTRIBUTE_DFLT_DARG}, (int[]){3}, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("darray block", t, 1, (int[]){8, 9}, 2, 0);
    MPI_Type_free(&t);
    /* 4x6, rows BLOCK over 2, columns CYCLIC over 2, rank 3 = coords (1,1) */
    MPI_Type_create_darray(
        4, 3, 2, (int[]){4, 6}, (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        (int[]){MPI_DISTRIBUTE_DFLT_DARG, 1}, (int[]){2, 2}, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("darray 2d C", t, 1, (int[]){13, 15, 17, 19, 21, 23}, 6, 0);
    check_bounds("darray 2d C", t, 24, 0, 96, 52, 44);
    MPI_Type_free(&t);
    /* the same in Fortran order: element (i,j) at i + 4j, i fastest */
    MPI_Type_create_darray(
        4, 3, 2, (int[]){4, 6}, (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        (int[]){MPI_DISTRIBUTE_DFLT_DARG, 1}, (int[]){2, 2}, MPI_ORDER_FORTRAN, MPI_INT, &t);
    MPI_Type_commit(&t);
    check_ints("darray 2d Fortran", t, 1, (int[]){6, 7, 14, 15, 22, 23}, 6, 0);
    MPI_Type_free(&t);
}

/* Structs: packed bytes are the fields without padding; extents as MPICH. */
static void test_struct(void) {
    struct s {
        int i;
        double d[2];
        char c[3];
    } v[2] = {{1, {2.5, 3.5}, {'a', 'b', 'c'}}, {4, {5.5, 6.5}, {'d', 'e', 'f'}}};
    MPI_Datatype t;
    MPI_Type_create_struct(
        3, (int[]){1, 2, 3},
        (MPI_Aint[]){offsetof(struct s, i), offsetof(struct s, d), offsetof(struct s, c)},
        (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_CHAR}, &t);
    MPI_Type_commit(&t);
    check_bounds("struct", t, 23, 0, sizeof(struct s), 0, 27);
    unsigned char buf[64], want[64];
    int pos = 0;
    MPI_Pack(v, 2, t, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
    CHECK(pos == 46, "struct: packed %d bytes, want 46", pos);
    for (int k = 0; k < 2; k++) {
        memcpy(want + 23 * k, &v[k].i, 4);
        memcpy(want + 23 * k + 4, v[k].d, 16);
        memcpy(want + 23 * k + 20, v[k].c, 3);
    }
    CHECK(memcmp(buf, want, 46) == 0, "struct: packed bytes differ");
    struct s w[2];
    memset(w, 0, sizeof(w));
    pos = 0;
    MPI_Unpack(buf, sizeof(buf), &pos, w, 2, t, MPI_COMM_WORLD);
    CHECK(w[1].i == 4 && w[1].d[1] == 6.5 && w[1].c[2] == 'f' && w[0].d[0] == 2.5,
          "struct: unpack");
    MPI_Type_free(&t);

    /* MPICH's epsilon: padded to the strictest alignment unless all types are one */
    struct {
        const char *what;
        MPI_Datatype a, b;
        MPI_Aint da, db, lb, extent;
    } cases[] = {
        {"double0 char8", MPI_DOUBLE, MPI_CHAR, 0, 8, 0, 16},
        {"char0 double1", MPI_CHAR, MPI_DOUBLE, 0, 1, 0, 16},
        {"int0 int5", MPI_INT, MPI_INT, 0, 5, 0, 9},
        {"int0 float5", MPI_INT, MPI_FLOAT, 0, 5, 0, 12},
        {"short0 char2", MPI_SHORT, MPI_CHAR, 0, 2, 0, 4},
        {"int0 char-3", MPI_INT, MPI_CHAR, 0, -3, -3, 8},
        {"long double0 char16", MPI_LONG_DOUBLE, MPI_CHAR, 0, 16, 0, 32},
        {"double_int0 char12", MPI_DOUBLE_INT, MPI_CHAR, 0, 12, 0, 16},
        {"2int0 char8", MPI_2INT, MPI_CHAR, 0, 8, 0, 12},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        MPI_Aint lb, ext;
        MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){cases[i].da, cases[i].db},
                               (MPI_Datatype[]){cases[i].a, cases[i].b}, &t);
        MPI_Type_get_extent(t, &lb, &ext);
        CHECK(lb == cases[i].lb && ext == cases[i].extent,
              "struct %s: lb %ld extent %ld, want %ld %ld", cases[i].what, (long)lb, (long)ext,
              (long)cases[i].lb, (long)cases[i].extent);
        MPI_Type_free(&t);
    }

    /* MPI-1 markers: sticky bounds */
    MPI_Datatype m, c;
    MPI_Type_struct(3, (int[]){1, 1, 1}, (MPI_Aint[]){-4, 0, 20},
                    (MPI_Datatype[]){MPI_LB, MPI_CHAR, MPI_INT}, &m);
    check_bounds("struct LB char int", m, 5, -4, 28, 0, 24);
    MPI_Type_contiguous(2, m, &c);
    check_bounds("contiguous of it", c, 10, -4, 56, 0, 52);
    MPI_Type_free(&c);
    MPI_Type_free(&m);
    MPI_Type_struct(3, (int[]){1, 1, 1}, (MPI_Aint[]){0, 4, 20},
                    (MPI_Datatype[]){MPI_DOUBLE, MPI_CHAR, MPI_UB}, &m);
    check_bounds("struct double char UB", m, 9, 0, 20, 0, 8);
    MPI_Type_free(&m);
}

/* Every predefined type: size, extent, and packing 3 items. */
static void test_predefined(void) {
    struct {
        MPI_Datatype t;
        const char *name;
        int size;
        MPI_Aint extent;
    } p[] = {
        {MPI_CHAR, "MPI_CHAR", 1, 1},
        {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1},
        {MPI_BYTE, "MPI_BYTE", 1, 1},
        {MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t), sizeof(wchar_t)},
        {MPI_SHORT, "MPI_SHORT", sizeof(short), sizeof(short)},
        {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(short), sizeof(short)},
        {MPI_INT, "MPI_INT", sizeof(int), sizeof(int)},
        {MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(int), sizeof(int)},
        {MPI_LONG, "MPI_LONG", sizeof(long), sizeof(long)},
        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(long), sizeof(long)},
        {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", sizeof(long long), sizeof(long long)},
        {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(long long), sizeof(long long)},
        {MPI_FLOAT, "MPI_FLOAT", sizeof(float), sizeof(float)},
        {MPI_DOUBLE, "MPI_DOUBLE", sizeof(double), sizeof(double)},
        {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double), sizeof(long double)},
        {MPI_PACKED, "MPI_PACKED", 1, 1},
        {MPI_INT8_T, "MPI_INT8_T", 1, 1},
        {MPI_INT16_T, "MPI_INT16_T", 2, 2},
        {MPI_INT32_T, "MPI_INT32_T", 4, 4},
        {MPI_INT64_T, "MPI_INT64_T", 8, 8},
        {MPI_UINT8_T, "MPI_UINT8_T", 1, 1},
        {MPI_UINT16_T, "MPI_UINT16_T", 2, 2},
        {MPI_UINT32_T, "MPI_UINT32_T", 4, 4},
        {MPI_UINT64_T, "MPI_UINT64_T", 8, 8},
        {MPI_C_BOOL, "MPI_C_BOOL", sizeof(_Bool), sizeof(_Bool)},
        {MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", 8, 8},
        {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16, 16},
        {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double),
         2 * sizeof(long double)},
        {MPI_AINT, "MPI_AINT", sizeof(MPI_Aint), sizeof(MPI_Aint)},
        {MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset), sizeof(MPI_Offset)},
        {MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count), sizeof(MPI_Count)},
        {MPI_2INT, "MPI_2INT", 8, 8},
        {MPI_FLOAT_INT, "MPI_FLOAT_INT", 8, 8},
        {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12, 16},
        {MPI_LONG_INT, "MPI_LONG_INT", 12, 16},
        {MPI_SHORT_INT, "MPI_SHORT_INT", 6, 8},
        {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long double) + 4,
         2 * sizeof(long double)},
    };
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        int size, len;
        MPI_Aint lb, extent;
        char name[MPI_MAX_OBJECT_NAME];
        MPI_Type_size(p[i].t, &size);
        MPI_Type_get_extent(p[i].t, &lb, &extent);
        MPI_Type_get_name(p[i].t, name, &len);
        CHECK(size == p[i].size && lb == 0 && extent == p[i].extent,
              "%s: size %d extent %ld, want %d %ld", p[i].name, size, (long)extent, p[i].size,
              (long)p[i].extent);
        CHECK(strcmp(name, p[i].name) == 0 && len == (int)strlen(p[i].name), "%s: name '%s'",
              p[i].name, name);
        int ni, na, nt, comb;
        MPI_Type_get_envelope(p[i].t, &ni, &na, &nt, &comb);
        CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nt == 0, "%s: combiner %d",
              p[i].name, comb);
        /* 3 items: the first `size` bytes of each extent-sized slot, except the
         * value+int pairs whose int sits after padding */
        unsigned char src[3 * 32], buf[3 * 32];
        for (size_t k = 0; k < sizeof(src); k++)
            src[k] = (unsigned char)k;
        int pos = 0;
        MPI_Pack(src, 3, p[i].t, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
        CHECK(pos == 3 * p[i].size, "%s: packed %d bytes", p[i].name, pos);
        size_t int_off = p[i].t == MPI_DOUBLE_INT ? offsetof(
                                                        struct {
                                                            double v;
                                                            int i;
                                                        },
                                                        i)
                         : p[i].t == MPI_LONG_INT ? offsetof(
                                                        struct {
                                                            long v;
                                                            int i;
                                                        },
                                                        i)
                         : p[i].t == MPI_SHORT_INT ? offsetof(
                                                         struct {
                                                             short v;
                                                             int i;
                                                         },
                                                         i)
                         : p[i].t == MPI_LONG_DOUBLE_INT ? offsetof(
                                                               struct {
                                                                   long double v;
                                                                   int i;
                                                               },
                                                               i)
                                                         : 0;
        for (int k = 0; k < 3; k++) {
            const unsigned char *item = src + k * p[i].extent, *got = buf + k * p[i].size;
            int ok;
            if (int_off)
                ok = memcmp(got, item, (size_t)p[i].size - 4) == 0 &&
                     memcmp(got + p[i].size - 4, item + int_off, 4) == 0;
            else
                ok = memcmp(got, item, (size_t)p[i].size) == 0;
            CHECK(ok, "%s: item %d packed wrong", p[i].name, k);
        }
    }
    MPI_Datatype t = MPI_INT;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Type_free(&t) != MPI_SUCCESS, "freeing MPI_INT must fail");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_envelope(void) {
    MPI_Datatype t, s, types[4];
    int ni, na, nt, comb, ints[16];
    MPI_Aint aints[8];

    MPI_Type_vector(3, 2, 4, MPI_INT, &t);
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nt == 1, "vector envelope");
    MPI_Type_get_contents(t, 16, 8, 4, ints, aints, types);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && types[0] == MPI_INT, "vector contents");

    MPI_Type_create_struct(2, (int[]){1, 3}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){MPI_INT, t}, &s);
    MPI_Type_get_envelope(s, &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nt == 2, "struct envelope");
    MPI_Type_get_contents(s, 16, 8, 4, ints, aints, types);
    CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 3 && aints[1] == 8 && types[0] == MPI_INT,
          "struct contents");
    /* a derived type comes back as a handle the user frees; it outlives t */
    MPI_Type_free(&t);
    MPI_Type_get_envelope(types[1], &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR, "type from get_contents is the vector");
    MPI_Type_free(&types[1]);
    MPI_Type_free(&s);

    MPI_Type_create_resized(MPI_DOUBLE, -8, 32, &t);
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    MPI_Type_get_contents(t, 16, 8, 4, ints, aints, types);
    CHECK(comb == MPI_COMBINER_RESIZED && na == 2 && aints[0] == -8 && aints[1] == 32,
          "resized contents");
    MPI_Type_dup(t, &s);
    MPI_Type_get_envelope(s, &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_DUP && nt == 1, "dup envelope");
    MPI_Type_free(&s);
    MPI_Type_free(&t);

    MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 1}, MPI_ORDER_C, MPI_INT,
                             &t);
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8, "subarray envelope (ni %d)", ni);
    MPI_Type_free(&t);

    /* large-count constructors */
    MPI_Count nc, ci, ca, ct, counts[4];
    MPI_Type_vector_c(3, 2, 4, MPI_INT, &t);
    MPI_Type_get_envelope_c(t, &ci, &ca, &nc, &ct, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR && ci == 0 && nc == 3, "vector_c envelope");
    MPI_Type_get_contents_c(t, 0, 0, 4, 1, ints, aints, counts, types);
    CHECK(counts[0] == 3 && counts[1] == 2 && counts[2] == 4, "vector_c contents");
    MPI_Type_commit(&t);
    check_ints("vector_c", t, 1, (int[]){0, 1, 4, 5, 8, 9}, 6, 0);
    MPI_Type_free(&t);

    /* a contiguous type larger than an int can count (mpi4py's testContiguousBigMPI): the
     * MPI-4 decode gives its combiner and count back as a large count (MPI-4.1 5.1.13);
     * the int forms cannot say it */
    MPI_Count big = (MPI_Count)INT_MAX + INT_MAX / 1024, bsize = -1;
    int isize = 0, err;
    MPI_Type_contiguous_c(big, MPI_BYTE, &t);
    MPI_Type_size_c(t, &bsize);
    MPI_Type_size(t, &isize);
    CHECK(bsize == big && isize == MPI_UNDEFINED, "contiguous_c(%lld): size %lld, int size %d",
          (long long)big, (long long)bsize, isize);
    MPI_Type_get_envelope_c(t, &ci, &ca, &nc, &ct, &comb);
    CHECK(comb == MPI_COMBINER_CONTIGUOUS && ci == 0 && ca == 0 && nc == 1 && ct == 1,
          "contiguous_c envelope: combiner %d, %lld %lld %lld %lld", comb, (long long)ci,
          (long long)ca, (long long)nc, (long long)ct);
    counts[0] = 0;
    types[0] = MPI_DATATYPE_NULL;
    MPI_Type_get_contents_c(t, 0, 0, 1, 1, ints, aints, counts, types);
    CHECK(counts[0] == big && types[0] == MPI_BYTE, "contiguous_c contents: %lld, %#x",
          (long long)counts[0], (unsigned)types[0]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    err = MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    int cls = -1;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_TYPE, "int envelope of a large-count type: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&t);
    /* the same decode through the int constructor: integers, no large counts */
    MPI_Type_contiguous(INT_MAX, MPI_BYTE, &t);
    MPI_Type_get_envelope_c(t, &ci, &ca, &nc, &ct, &comb);
    CHECK(comb == MPI_COMBINER_CONTIGUOUS && ci == 1 && nc == 0 && ct == 1,
          "contiguous envelope_c: %lld ints, %lld large counts", (long long)ci, (long long)nc);
    MPI_Type_get_contents(t, 1, 0, 1, ints, aints, types);
    CHECK(ints[0] == INT_MAX && types[0] == MPI_BYTE, "contiguous contents: %d", ints[0]);
    MPI_Type_free(&t);
}

static void test_misc(void) {
    MPI_Datatype t;
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_get_name(t, name, &len);
    CHECK(len == 0 && name[0] == '\0', "unnamed type: '%s'", name);
    MPI_Type_set_name(t, "pair of ints");
    MPI_Type_get_name(t, name, &len);
    CHECK(strcmp(name, "pair of ints") == 0 && len == 12, "name '%s'", name);
    MPI_Type_free(&t);

    MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t);
    CHECK(t == MPI_REAL8, "match_size real 8");
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t);
    CHECK(t == MPI_INTEGER4, "match_size integer 4");
    MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t);
    CHECK(t == MPI_COMPLEX16, "match_size complex 16");

    double a[4];
    MPI_Aint p0, p2;
    MPI_Get_address(&a[0], &p0);
    MPI_Get_address(&a[2], &p2);
    CHECK(MPI_Aint_diff(p2, p0) == 16, "Aint_diff");
    CHECK(MPI_Aint_add(p0, 16) == p2, "Aint_add");

    /* pack into a buffer that is too small */
    int v[4] = {0}, pos = 0;
    char small[8];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Pack(v, 4, MPI_INT, small, sizeof(small), &pos, MPI_COMM_WORLD) != MPI_SUCCESS,
          "pack past the end must fail");
    CHECK(pos == 0, "failed pack leaves position alone");
    MPI_Type_contiguous(2, MPI_INT, &t);
    CHECK(MPI_Send(v, 1, t, 0, 0, MPI_COMM_WORLD) != MPI_SUCCESS, "uncommitted type must fail");
    MPI_Type_free(&t);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* pack two different types into one buffer, unpack them back */
    double d = 1.25;
    int i3[3] = {7, 8, 9}, j3[3];
    char buf[64];
    double e;
    pos = 0;
    MPI_Pack(&d, 1, MPI_DOUBLE, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
    MPI_Pack(i3, 3, MPI_INT, buf, sizeof(buf), &pos, MPI_COMM_WORLD);
    CHECK(pos == 20, "two packs: position %d", pos);
    pos = 0;
    MPI_Unpack(buf, 20, &pos, &e, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Unpack(buf, 20, &pos, j3, 3, MPI_INT, MPI_COMM_WORLD);
    CHECK(e == 1.25 && j3[2] == 9 && pos == 20, "two unpacks");
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    test_constructors();
    test_struct();
    test_predefined();
    test_envelope();
    test_misc();
    return dtest_finish();
}
