/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Struct types whose first block (or others) has length zero: such a block adds nothing
 * to the type map (MPI-4.1 5.1.2), so the type commits and behaves exactly as the struct
 * without it: size, bounds, true bounds, packed bytes of three items, element counts,
 * a message into it. Zero-length blocks of every kind of old type (predefined, pair,
 * derived with many segments, resized, MPI_LB/MPI_UB markers) at every kind of
 * displacement (0, negative, far, the largest), first, in the middle and last; struct
 * blocks of empty derived types; MPICH's struct-empty-el case; and chains of nested
 * structs with zero first blocks, up to and past the deepest layout Tandem nests.
 */
#include "dtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cls(int err) {
    int c = -1;
    MPI_Error_class(err, &c);
    return c;
}

static unsigned char src[1 << 16], pa[1 << 14], pb[1 << 14];

/* t and u must describe the same data */
static void same_as(const char *what, MPI_Datatype t, MPI_Datatype u) {
    int st = -1, su = -2;
    MPI_Aint lt, et, lu, eu, tlt, tet, tlu, teu;
    MPI_Type_size(t, &st);
    MPI_Type_size(u, &su);
    MPI_Type_get_extent(t, &lt, &et);
    MPI_Type_get_extent(u, &lu, &eu);
    MPI_Type_get_true_extent(t, &tlt, &tet);
    MPI_Type_get_true_extent(u, &tlu, &teu);
    CHECK(st == su && lt == lu && et == eu && (st == 0 || (tlt == tlu && tet == teu)),
          "%s: size %d/%d lb %ld/%ld extent %ld/%ld true %ld+%ld/%ld+%ld", what, st, su, (long)lt,
          (long)lu, (long)et, (long)eu, (long)tlt, (long)tet, (long)tlu, (long)teu);
    if (st != su || st > 4096 || et < 0 || et > 4096 || lt < -4096 || lt > 4096)
        return;
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (unsigned char)(i * 13 + 5);
    int pt = 0, pu = 0;
    const unsigned char *base = src + 20000;
    MPI_Pack(base, 3, t, pa, sizeof(pa), &pt, MPI_COMM_WORLD);
    MPI_Pack(base, 3, u, pb, sizeof(pb), &pu, MPI_COMM_WORLD);
    CHECK(pt == pu && memcmp(pa, pb, (size_t)pt) == 0, "%s: packed bytes differ (%d, %d)", what, pt,
          pu);
    MPI_Status s;
    MPI_Request r;
    static unsigned char dst[1 << 16];
    memset(dst, 0, sizeof(dst));
    MPI_Irecv(dst + 20000, 3, t, 0, 1, MPI_COMM_SELF, &r);
    MPI_Send(base, 3, u, 0, 1, MPI_COMM_SELF);
    MPI_Wait(&r, &s);
    int n = -1, e = -1, eu2 = -1;
    MPI_Get_count(&s, t, &n);
    MPI_Get_elements(&s, t, &e);
    MPI_Get_elements(&s, u, &eu2);
    CHECK(n == (st ? 3 : 0) && e == eu2, "%s: count %d, elements %d/%d", what, n, e, eu2);
}

static MPI_Datatype made(int n, const int *bl, const MPI_Aint *d, const MPI_Datatype *ty,
                         const char *what) {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int err = MPI_Type_create_struct(n, bl, d, ty, &t);
    CHECK(err == MPI_SUCCESS, "%s: create: class %d", what, cls(err));
    if (err)
        return MPI_DATATYPE_NULL;
    err = MPI_Type_commit(&t);
    CHECK(err == MPI_SUCCESS, "%s: commit: class %d", what, cls(err));
    return t;
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Datatype vec, rs, e1, e2;
    MPI_Type_vector(100, 1, 2, MPI_INT, &vec); /* 100 segments: not flattened into one */
    MPI_Type_create_resized(MPI_INT, -4, 16, &rs);
    MPI_Type_contiguous(0, MPI_DOUBLE, &e1); /* empty */
    MPI_Type_vector(3, 0, 4, MPI_INT, &e2);  /* empty, with bounds of its own */
    MPI_Datatype olds[] = {MPI_INT, MPI_DOUBLE, MPI_LONG_DOUBLE_INT, MPI_CHAR, vec, rs, e1, e2,
                           MPI_LB,  MPI_UB,     MPI_SHORT,           MPI_2INT};
    const char *onames[] = {"int",
                            "double",
                            "long double+int",
                            "char",
                            "vector",
                            "resized",
                            "empty contiguous",
                            "empty vector",
                            "MPI_LB",
                            "MPI_UB",
                            "short",
                            "2int"};
    MPI_Aint disps[] = {0, 8, -24, 1 << 20, -(1 << 20), INT64_MAX, INT64_MIN, 12345};
    /* the rest of the struct: a few real blocks */
    MPI_Datatype rest[3] = {MPI_DOUBLE, vec, MPI_CHAR};
    int rbl[3] = {2, 1, 3};
    MPI_Aint rd[3] = {0, 16, 900};
    MPI_Datatype ref = made(3, rbl, rd, rest, "reference");
    char what[160];
    for (size_t o = 0; o < sizeof(olds) / sizeof(olds[0]); o++) {
        for (size_t k = 0; k < sizeof(disps) / sizeof(disps[0]); k++) {
            for (int pos = 0; pos < 4; pos++) { /* the zero block first, 2nd, 3rd, last */
                MPI_Datatype ty[4];
                int bl[4];
                MPI_Aint d[4];
                for (int i = 0, j = 0; i < 4; i++) {
                    if (i == pos) {
                        ty[i] = olds[o];
                        bl[i] = 0;
                        d[i] = disps[k];
                    } else {
                        ty[i] = rest[j];
                        bl[i] = rbl[j];
                        d[i] = rd[j++];
                    }
                }
                snprintf(what, sizeof(what), "zero block of %s at %ld in position %d", onames[o],
                         (long)disps[k], pos);
                MPI_Datatype t = made(4, bl, d, ty, what);
                if (t != MPI_DATATYPE_NULL) {
                    same_as(what, t, ref);
                    MPI_Type_free(&t);
                }
            }
        }
    }
    /* several zero blocks, and only zero blocks */
    {
        MPI_Datatype ty[5] = {MPI_INT, MPI_DOUBLE, vec, MPI_UB, MPI_CHAR};
        int bl[5] = {0, 2, 0, 0, 3};
        MPI_Aint d[5] = {-100, 0, 40, 4000, 900};
        MPI_Datatype ty2[2] = {MPI_DOUBLE, MPI_CHAR};
        int bl2[2] = {2, 3};
        MPI_Aint d2[2] = {0, 900};
        MPI_Datatype t = made(5, bl, d, ty, "three zero blocks");
        MPI_Datatype u = made(2, bl2, d2, ty2, "without them");
        same_as("three zero blocks", t, u);
        MPI_Type_free(&t);
        MPI_Type_free(&u);
        int z[2] = {0, 0};
        t = made(2, z, d, ty, "only zero blocks");
        MPI_Type_contiguous(0, MPI_INT, &u);
        MPI_Type_commit(&u);
        same_as("only zero blocks", t, u);
        MPI_Type_free(&t);
        MPI_Type_free(&u);
    }
    /* MPICH's struct-empty-el: {0 x float at 8, 1 x int at 0, 2 x int at 8}; 6 ints into
     * 2 items skip the second int of each 16-byte item */
    {
        MPI_Datatype ty[3] = {MPI_FLOAT, MPI_INT, MPI_INT};
        int bl[3] = {0, 1, 2};
        MPI_Aint d[3] = {8, 0, 8};
        MPI_Datatype t = made(3, bl, d, ty, "struct-empty-el");
        int sendbuf[6] = {1, 2, 3, 4, 5, 6}, got[8];
        for (int i = 0; i < 8; i++)
            got[i] = -1;
        MPI_Request r;
        MPI_Status s;
        MPI_Irecv(got, 2, t, 0, 2, MPI_COMM_SELF, &r);
        MPI_Send(sendbuf, 6, MPI_INT, 0, 2, MPI_COMM_SELF);
        MPI_Wait(&r, &s);
        static const int want[8] = {1, -1, 2, 3, 4, -1, 5, 6};
        CHECK(memcmp(got, want, sizeof(want)) == 0, "struct-empty-el data");
        int n = -1, e = -1;
        MPI_Get_count(&s, t, &n);
        MPI_Get_elements(&s, t, &e);
        CHECK(n == 2 && e == 6, "struct-empty-el: count %d, elements %d", n, e);
        MPI_Type_free(&t);
    }
    /* structs nested deep, each with a zero first block, the type before and an int: the
     * same ints as one indexed type; deeper than the layout can nest, a clear refusal
     * (MPI_ERR_TYPE, not the MPI_ERR_VALUE_TOO_LARGE it was) */
    {
        enum { DEEP = 180, TOO_DEEP = 600 };
        MPI_Datatype prev = MPI_INT, chain[TOO_DEEP + 1];
        MPI_Aint id[DEEP + 1];
        int ones[DEEP + 1], refused = 0, err = MPI_SUCCESS;
        id[0] = 0;
        ones[0] = 1;
        for (int lvl = 1; lvl <= TOO_DEEP; lvl++) {
            MPI_Datatype ty[3] = {MPI_DOUBLE, prev, MPI_INT};
            int bl[3] = {0, 1, 1};
            MPI_Aint d[3] = {-8, 0, 8 * (MPI_Aint)lvl + 8};
            MPI_Type_create_struct(3, bl, d, ty, &chain[lvl]);
            MPI_Datatype c = chain[lvl];
            err = MPI_Type_commit(&c);
            if (lvl <= DEEP) {
                id[lvl] = d[2];
                ones[lvl] = 1;
                CHECK(err == MPI_SUCCESS, "%d nested structs: commit class %d", lvl, cls(err));
            } else if (err) {
                refused = lvl;
                break;
            }
            prev = chain[lvl];
        }
        CHECK(refused && cls(err) == MPI_ERR_TYPE, "%d nested structs: class %d", refused,
              cls(err));
        MPI_Datatype flat;
        MPI_Type_create_hindexed(DEEP + 1, ones, id, MPI_INT, &flat);
        MPI_Type_commit(&flat);
        int pt = 0, pu = 0;
        for (size_t i = 0; i < sizeof(src); i++)
            src[i] = (unsigned char)(i * 7 + 3);
        MPI_Pack(src, 1, chain[DEEP], pa, sizeof(pa), &pt, MPI_COMM_WORLD);
        MPI_Pack(src, 1, flat, pb, sizeof(pb), &pu, MPI_COMM_WORLD);
        CHECK(pt == pu && pt == 4 * (DEEP + 1) && memcmp(pa, pb, (size_t)pt) == 0,
              "%d nested structs pack %d bytes, not as the flat type's %d", DEEP, pt, pu);
        MPI_Type_free(&flat);
        for (int lvl = 1; lvl <= (refused ? refused : TOO_DEEP); lvl++)
            MPI_Type_free(&chain[lvl]);
    }
    MPI_Type_free(&ref);
    MPI_Type_free(&vec);
    MPI_Type_free(&rs);
    MPI_Type_free(&e1);
    MPI_Type_free(&e2);
    return dtest_finish();
}
