/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The legacy names the MPICH ABI still exports, as old programs call them:
 * MPI-1's error handler calls (MPI_Errhandler_create/set/get, removed in MPI-3),
 * attribute caching (MPI_Keyval_create/free, MPI_Attr_put/get/delete with
 * MPI_DUP_FN, MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN), datatype calls (MPI_Address,
 * MPI_Type_hvector/hindexed/struct with the MPI_LB/MPI_UB markers,
 * MPI_Type_extent/lb/ub) and MPI-4's deprecated MPI_Info_get/get_valuelen. Each
 * is checked against what its modern twin gives, and data moves through the
 * legacy types between ranks. Built with MPICH's mpicc.mpich (this directory)
 * and with Tandem's header (tests/mpi/errors/legacy.c includes this file).
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int rank, nprocs, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 20) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static int class_of(int err) {
    int cls = -1;
    if (err == MPI_SUCCESS)
        return MPI_SUCCESS;
    MPI_Error_class(err, &cls);
    return cls;
}

static int calls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...) {
    calls++;
    last_code = *code;
    last_comm = *comm;
}

static int deletes;
static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra) {
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void errhandlers(void) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    CHECK(MPI_Errhandler_create(handler, &eh) == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL,
          "MPI_Errhandler_create");
    CHECK(MPI_Errhandler_set(c, eh) == MPI_SUCCESS, "MPI_Errhandler_set");
    CHECK(MPI_Errhandler_get(c, &got) == MPI_SUCCESS && got == eh,
          "MPI_Errhandler_get gave %#x, set %#x", (unsigned)got, (unsigned)eh);
    MPI_Errhandler_free(&got);
    MPI_Errhandler modern = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(c, &modern);
    CHECK(modern == eh, "MPI_Comm_get_errhandler after MPI_Errhandler_set: %#x", (unsigned)modern);
    MPI_Errhandler_free(&modern);
    int x = 0;
    int err = MPI_Send(&x, 1, MPI_INT, nprocs + 5, 0, c);
    CHECK(calls == 1 && last_code == err && last_comm == c && class_of(err) == MPI_ERR_RANK,
          "handler from MPI_Errhandler_create: %d calls, code %d (returned %d, class %d)", calls,
          last_code, err, class_of(err));
    MPI_Errhandler_free(&eh); /* c still holds it */
    err = MPI_Send(&x, 1, MPI_INT, -7, 0, c);
    CHECK(calls == 2, "handler after MPI_Errhandler_free while in use: %d calls", calls);
    CHECK(MPI_Errhandler_set(c, MPI_ERRORS_RETURN) == MPI_SUCCESS, "set MPI_ERRORS_RETURN");
    MPI_Errhandler_get(c, &got);
    CHECK(got == MPI_ERRORS_RETURN, "MPI_Errhandler_get: %#x, not MPI_ERRORS_RETURN",
          (unsigned)got);
    MPI_Errhandler_free(&got);
    CHECK(class_of(MPI_Errhandler_set(c, (MPI_Errhandler)0x12345)) == MPI_ERR_ARG,
          "MPI_Errhandler_set with an invalid handler");
    CHECK(calls == 2, "MPI_ERRORS_RETURN still called the user handler");
    MPI_Comm_free(&c);
}

static void attributes(void) {
    MPI_Comm c, d;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int kdup, knull;
    CHECK(MPI_Keyval_create(MPI_DUP_FN, count_delete, &kdup, NULL) == MPI_SUCCESS,
          "MPI_Keyval_create");
    CHECK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &knull, NULL) == MPI_SUCCESS,
          "MPI_Keyval_create (null functions)");
    static int a = 11, b = 22;
    MPI_Attr_put(c, kdup, &a);
    MPI_Attr_put(c, knull, &b);
    int *p = NULL, flag = 0;
    CHECK(MPI_Attr_get(c, kdup, &p, &flag) == MPI_SUCCESS && flag && p == &a, "MPI_Attr_get");
    void *q = NULL;
    MPI_Comm_get_attr(c, knull, &q, &flag);
    CHECK(flag && q == &b, "MPI_Comm_get_attr of an MPI_Attr_put value");
    MPI_Comm_dup(c, &d);
    CHECK(MPI_Attr_get(d, kdup, &p, &flag) == MPI_SUCCESS && flag && p == &a,
          "MPI_DUP_FN did not copy the value: flag %d", flag);
    MPI_Attr_get(d, knull, &p, &flag);
    CHECK(!flag, "MPI_NULL_COPY_FN copied the value");
    CHECK(MPI_Attr_delete(c, kdup) == MPI_SUCCESS && deletes == 1, "MPI_Attr_delete: %d deletes",
          deletes);
    MPI_Attr_get(c, kdup, &p, &flag);
    CHECK(!flag, "attribute still there after MPI_Attr_delete");
    CHECK(MPI_Keyval_free(&kdup) == MPI_SUCCESS && kdup == MPI_KEYVAL_INVALID, "MPI_Keyval_free");
    MPI_Comm_free(&d); /* deletes d's copy through the freed keyval */
    CHECK(deletes == 2, "delete callback of the freed keyval on MPI_Comm_free: %d", deletes);
    MPI_Keyval_free(&knull);
    int *tag_ub = NULL;
    CHECK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag) == MPI_SUCCESS && flag &&
              *tag_ub >= 32767,
          "MPI_TAG_UB through MPI_Attr_get");
    MPI_Comm_free(&c);
}

struct rec {
    char c;
    double d;
    int i[3];
};

static void datatypes(void) {
    struct rec r[2];
    MPI_Aint base, ad, ai, ar1, modern;
    CHECK(MPI_Address(&r[0], &base) == MPI_SUCCESS, "MPI_Address");
    MPI_Address(&r[0].d, &ad);
    MPI_Address(r[0].i, &ai);
    MPI_Address(&r[1], &ar1);
    MPI_Get_address(&r[0].d, &modern);
    CHECK(ad == modern, "MPI_Address %ld, MPI_Get_address %ld", (long)ad, (long)modern);
    CHECK(ad - base == (MPI_Aint)offsetof(struct rec, d) &&
              ai - base == (MPI_Aint)offsetof(struct rec, i) &&
              ar1 - base == (MPI_Aint)sizeof(struct rec),
          "MPI_Address differences %ld %ld %ld", (long)(ad - base), (long)(ai - base),
          (long)(ar1 - base));

    /* MPI-1's struct with explicit bounds: lb at 0, ub at sizeof(struct rec) */
    int bl[5] = {1, 1, 1, 3, 1};
    MPI_Aint disp[5] = {0, 0, ad - base, ai - base, sizeof(struct rec)};
    MPI_Datatype types[5] = {MPI_LB, MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_UB};
    MPI_Datatype st;
    CHECK(MPI_Type_struct(5, bl, disp, types, &st) == MPI_SUCCESS, "MPI_Type_struct");
    MPI_Type_commit(&st);
    MPI_Aint ext = -1, lb = -1, ub = -1, mlb, mext;
    CHECK(MPI_Type_extent(st, &ext) == MPI_SUCCESS && ext == (MPI_Aint)sizeof(struct rec),
          "MPI_Type_extent %ld", (long)ext);
    CHECK(MPI_Type_lb(st, &lb) == MPI_SUCCESS && lb == 0, "MPI_Type_lb %ld", (long)lb);
    CHECK(MPI_Type_ub(st, &ub) == MPI_SUCCESS && ub == (MPI_Aint)sizeof(struct rec),
          "MPI_Type_ub %ld", (long)ub);
    MPI_Type_get_extent(st, &mlb, &mext);
    CHECK(mlb == lb && mext == ext, "MPI_Type_get_extent %ld %ld", (long)mlb, (long)mext);
    int sz = 0;
    MPI_Type_size(st, &sz);
    CHECK(sz == 1 + 8 + 12, "size of the struct type %d", sz);

    /* hvector of 3 blocks of 2 ints, 5 ints apart; hindexed of the same blocks */
    MPI_Datatype hv, hi;
    CHECK(MPI_Type_hvector(3, 2, 5 * sizeof(int), MPI_INT, &hv) == MPI_SUCCESS, "hvector");
    int hbl[3] = {2, 2, 2};
    MPI_Aint hd[3] = {0, 5 * sizeof(int), 10 * sizeof(int)};
    CHECK(MPI_Type_hindexed(3, hbl, hd, MPI_INT, &hi) == MPI_SUCCESS, "hindexed");
    MPI_Type_commit(&hv);
    MPI_Type_commit(&hi);
    MPI_Type_extent(hv, &ext);
    CHECK(ext == (MPI_Aint)(12 * sizeof(int)), "hvector extent %ld", (long)ext);
    MPI_Type_extent(hi, &ext);
    CHECK(ext == (MPI_Aint)(12 * sizeof(int)), "hindexed extent %ld", (long)ext);

    /* the legacy types carry data: hvector out, hindexed in; struct both ways */
    int to = (rank + 1) % nprocs, from = (rank + nprocs - 1) % nprocs;
    int out[15], in[15];
    for (int k = 0; k < 15; k++) {
        out[k] = rank * 100 + k;
        in[k] = -1;
    }
    MPI_Sendrecv(out, 1, hv, to, 5, in, 1, hi, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < 15; k++) {
        int want = (k % 5 < 2 && k < 12) ? from * 100 + k : -1;
        CHECK(in[k] == want, "hvector -> hindexed: in[%d] = %d, want %d", k, in[k], want);
    }
    struct rec sr[2], rr[2];
    memset(rr, 0, sizeof(rr));
    for (int k = 0; k < 2; k++) {
        sr[k].c = (char)('a' + rank + k);
        sr[k].d = rank + k * 0.5;
        for (int j = 0; j < 3; j++)
            sr[k].i[j] = rank * 10 + k * 3 + j;
    }
    MPI_Sendrecv(sr, 2, st, to, 6, rr, 2, st, from, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < 2; k++) {
        CHECK(rr[k].c == (char)('a' + from + k) && rr[k].d == from + k * 0.5 &&
                  rr[k].i[2] == from * 10 + k * 3 + 2,
              "struct record %d received wrong", k);
    }
    CHECK(class_of(MPI_Type_extent((MPI_Datatype)0x12345, &ext)) == MPI_ERR_TYPE,
          "MPI_Type_extent of an invalid type");
    MPI_Type_free(&st);
    MPI_Type_free(&hv);
    MPI_Type_free(&hi);
}

static void info(void) {
    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, "legacy", "value");
    char v[16] = "";
    int flag = 0, len = -1;
    CHECK(MPI_Info_get(in, "legacy", 15, v, &flag) == MPI_SUCCESS && flag &&
              strcmp(v, "value") == 0,
          "MPI_Info_get: flag %d '%s'", flag, v);
    CHECK(MPI_Info_get_valuelen(in, "legacy", &len, &flag) == MPI_SUCCESS && flag && len == 5,
          "MPI_Info_get_valuelen: flag %d len %d", flag, len);
    MPI_Info_get(in, "absent", 15, v, &flag);
    CHECK(!flag, "MPI_Info_get of an absent key");
    MPI_Info_free(&in);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errhandlers();
    attributes();
    datatypes();
    info();
    if (rank == 0) {
        for (int i = 1; i < nprocs; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, 32766, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
        if (errs)
            printf(" Found %d errors\n", errs);
        else
            printf(" No Errors\n");
        fflush(stdout);
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 32766, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return errs ? 1 : 0;
}
