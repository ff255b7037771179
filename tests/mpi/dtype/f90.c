/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Type_create_f90_integer/real/complex: the kind each (p, r) selects (its size),
 * the envelope and contents they report (MPI_COMBINER_F90_*, (r) or (p, r)), the
 * same handle for the same arguments (for as many distinct arguments as a program
 * asks for: every r and hundreds of (p, r)), no freeing, ranges no kind holds refused,
 * and a message of such a type between two ranks.
 */
#include "dtest.h"

#include <string.h>

static int cls(int err) {
    int c = -1;
    MPI_Error_class(err, &c);
    return c;
}

static void check_kind(const char *what, int rc, MPI_Datatype t, int want_size, int combiner,
                       int ni, int i0, int i1) {
    int sz = -1, nint = -1, na = -1, nd = -1, comb = -1, ints[2] = {-1, -1};
    CHECK(rc == MPI_SUCCESS, "%s: rc %d", what, rc);
    if (rc != MPI_SUCCESS)
        return;
    MPI_Type_size(t, &sz);
    MPI_Type_get_envelope(t, &nint, &na, &nd, &comb);
    CHECK(sz == want_size, "%s: size %d, want %d", what, sz, want_size);
    CHECK(comb == combiner && nint == ni && na == 0 && nd == 0,
          "%s: envelope combiner %d ni %d na %d nd %d", what, comb, nint, na, nd);
    if (comb == combiner && nint == ni) {
        MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL);
        CHECK(ints[0] == i0 && (ni == 1 || ints[1] == i1), "%s: contents %d %d", what, ints[0],
              ints[1]);
    }
    CHECK(MPI_Type_commit(&t) == MPI_SUCCESS, "%s: commit", what);
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t = MPI_DATATYPE_NULL, t2 = MPI_DATATYPE_NULL;
    int rc; /* each call before its check: arguments are evaluated in no set order */
    static const int ranges[][2] = {{1, 1}, {2, 1}, {4, 2}, {9, 4}, {18, 8}, {19, 16}, {38, 16}};
    for (int i = 0; i < 7; i++) {
        int r = ranges[i][0];
        char what[64];
        snprintf(what, sizeof(what), "f90_integer(%d)", r);
        rc = MPI_Type_create_f90_integer(r, &t);
        check_kind(what, rc, t, ranges[i][1], MPI_COMBINER_F90_INTEGER, 1, r, 0);
    }
    rc = MPI_Type_create_f90_real(6, 30, &t);
    check_kind("f90_real(6, 30)", rc, t, 4, MPI_COMBINER_F90_REAL, 2, 6, 30);
    rc = MPI_Type_create_f90_real(15, 300, &t);
    check_kind("f90_real(15, 300)", rc, t, 8, MPI_COMBINER_F90_REAL, 2, 15, 300);
    rc = MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &t);
    check_kind("f90_real(UNDEFINED, 300)", rc, t, 8, MPI_COMBINER_F90_REAL, 2, MPI_UNDEFINED, 300);
    rc = MPI_Type_create_f90_real(30, MPI_UNDEFINED, &t);
    check_kind("f90_real(30, UNDEFINED)", rc, t, 16, MPI_COMBINER_F90_REAL, 2, 30, MPI_UNDEFINED);
    rc = MPI_Type_create_f90_complex(6, 30, &t);
    check_kind("f90_complex(6, 30)", rc, t, 8, MPI_COMBINER_F90_COMPLEX, 2, 6, 30);
    rc = MPI_Type_create_f90_complex(15, 300, &t);
    check_kind("f90_complex(15, 300)", rc, t, 16, MPI_COMBINER_F90_COMPLEX, 2, 15, 300);

    /* the same arguments, the same handle; never freed */
    MPI_Type_create_f90_real(15, 300, &t);
    MPI_Type_create_f90_real(15, 300, &t2);
    CHECK(t == t2, "f90_real(15, 300) twice: %#x and %#x", (unsigned)t, (unsigned)t2);
    CHECK(cls(MPI_Type_free(&t2)) == MPI_ERR_TYPE && t2 == t, "an f90 type was freed");

    /* every range and many (p, r): each is one type, the same again on the second ask
     * (the table of them used to stop at 16 per kind with MPI_ERR_INTERN) */
    static MPI_Datatype ints_r[39], reals_pr[34][40];
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r <= 38; r++) {
            rc = MPI_Type_create_f90_integer(r, &t2);
            CHECK(rc == MPI_SUCCESS && (pass == 0 || t2 == ints_r[r]),
                  "f90_integer(%d) pass %d: rc %d class %d", r, pass, rc, cls(rc));
            ints_r[r] = t2;
        }
        for (int p = 0; p <= 33; p++) {
            for (int r = 0; r < 40; r++) {
                rc = MPI_Type_create_f90_real(p, r * 100, &t2);
                CHECK(rc == MPI_SUCCESS && (pass == 0 || t2 == reals_pr[p][r]),
                      "f90_real(%d, %d) pass %d: rc %d class %d", p, r * 100, pass, rc, cls(rc));
                reals_pr[p][r] = t2;
            }
        }
    }
    int sz = 0;
    MPI_Type_size(ints_r[38], &sz);
    CHECK(sz == 16, "f90_integer(38): size %d", sz);

    /* no kind holds these */
    CHECK(cls(MPI_Type_create_f90_integer(39, &t2)) == MPI_ERR_ARG, "f90_integer(39) accepted");
    CHECK(cls(MPI_Type_create_f90_real(34, 30, &t2)) == MPI_ERR_ARG, "f90_real(34, 30) accepted");
    CHECK(cls(MPI_Type_create_f90_complex(MPI_UNDEFINED, MPI_UNDEFINED, &t2)) == MPI_ERR_ARG,
          "f90_complex(UNDEFINED, UNDEFINED) accepted");
    CHECK(cls(MPI_Type_create_f90_integer(-3, &t2)) == MPI_ERR_ARG, "f90_integer(-3) accepted");

    /* a message of doubles as f90_real(15, 300) */
    if (size >= 2 && rank < 2) {
        double a[3] = {1.5, -2.25, 1e300}, b[3] = {0, 0, 0};
        if (rank == 0) {
            MPI_Send(a, 3, t, 1, 7, MPI_COMM_WORLD);
        } else {
            MPI_Status st;
            int n = -1;
            MPI_Recv(b, 3, t, 0, 7, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, t, &n);
            CHECK(n == 3 && memcmp(a, b, sizeof(a)) == 0, "f90 real message: count %d", n);
        }
    }
    return dtest_finish();
}
