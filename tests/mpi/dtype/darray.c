/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Distributed arrays: each rank builds the darray (and a subarray) type of its
 * part of a global 2-d array, checks by brute force which global elements the
 * type selects and in which order, then sends its part packed to rank 0, which
 * receives every part straight into the global array through that rank's
 * darray type and compares the result with the array it started from.
 */
#include "dtest.h"

#include <stdlib.h>

enum { GR = 13, GC = 10 };

/* Owner coordinate of global index g in a dimension of n over p processes. */
static int owner(int g, int n, int p, int distrib, int darg) {
    if (distrib == MPI_DISTRIBUTE_NONE)
        return 0;
    int b = darg != MPI_DISTRIBUTE_DFLT_DARG  ? darg
            : distrib == MPI_DISTRIBUTE_BLOCK ? (n + p - 1) / p
                                              : 1;
    return (g / b) % p;
}

static void grid(int n, int *p0, int *p1) {
    *p0 = n;
    *p1 = 1;
    for (int d = 2; d * d <= n; d++)
        if (n % d == 0) {
            *p0 = n / d;
            *p1 = d;
        }
}

static MPI_Datatype darray_of(int r, int order, const int *distribs, const int *dargs, int p0,
                              int p1) {
    MPI_Datatype t;
    int g[2] = {GR, GC}, ps[2] = {p0, p1};
    if (order == MPI_ORDER_FORTRAN) { /* same global array seen column-major: swap dims */
        g[0] = GC;
        g[1] = GR;
    }
    MPI_Type_create_darray(size, r, 2, g, distribs, dargs, ps, order, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static void run(int order, int d0, int a0, int d1, int a1) {
    int p0, p1;
    grid(size, &p0, &p1);
    int distribs[2] = {d0, d1}, dargs[2] = {a0, a1};
    int global[GR * GC], assembled[GR * GC];
    for (int i = 0; i < GR * GC; i++) {
        global[i] = i;
        assembled[i] = -1;
    }
    int n0 = order == MPI_ORDER_C ? GR : GC, n1 = order == MPI_ORDER_C ? GC : GR;
    /* brute force: my elements in local (row-major over my rows and columns) order */
    int c0 = rank / p1, c1 = rank % p1;
    int want[GR * GC], nw = 0;
    /* C: dimension 1 varies fastest in memory and in the typemap; Fortran: dimension 0 */
    for (int outer = 0; outer < (order == MPI_ORDER_C ? n0 : n1); outer++)
        for (int inner = 0; inner < (order == MPI_ORDER_C ? n1 : n0); inner++) {
            int x = order == MPI_ORDER_C ? outer : inner, y = order == MPI_ORDER_C ? inner : outer;
            if (owner(x, n0, p0, d0, a0) == c0 && owner(y, n1, p1, d1, a1) == c1)
                want[nw++] = order == MPI_ORDER_C ? x * n1 + y : y * n0 + x;
        }
    MPI_Datatype t = darray_of(rank, order, distribs, dargs, p0, p1);
    int sz;
    MPI_Type_size(t, &sz);
    CHECK(sz == nw * (int)sizeof(int), "order %d: darray size %d, want %d", order, sz,
          nw * (int)sizeof(int));
    int *packed = malloc((size_t)(nw ? nw : 1) * sizeof(int));
    int pos = 0;
    MPI_Pack(global, 1, t, packed, nw * (int)sizeof(int), &pos, MPI_COMM_WORLD);
    for (int k = 0; k < nw; k++)
        CHECK(packed[k] == want[k], "order %d distrib %d/%d: element %d is %d, want %d", order, d0,
              d1, k, packed[k], want[k]);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK(lb == 0 && ext == GR * GC * (MPI_Aint)sizeof(int), "darray extent %ld", (long)ext);
    MPI_Type_free(&t);

    /* everyone sends its part as plain ints; rank 0 receives through the darray types */
    MPI_Request req;
    MPI_Status st;
    MPI_Isend(packed, nw, MPI_INT, 0, 5, MPI_COMM_WORLD, &req);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            MPI_Datatype tr = darray_of(r, order, distribs, dargs, p0, p1);
            MPI_Recv(assembled, 1, tr, r, 5, MPI_COMM_WORLD, &st);
            MPI_Type_free(&tr);
        }
        int bad = 0;
        for (int i = 0; i < GR * GC; i++)
            bad += assembled[i] != global[i];
        CHECK(!bad, "order %d distrib %d/%d: %d elements wrong after assembly", order, d0, d1, bad);
    }
    MPI_Wait(&req, &st);
    free(packed);
}

/* The same assembly with subarrays of a block decomposition. */
static void run_subarray(void) {
    int p0, p1;
    grid(size, &p0, &p1);
    int global[GR * GC], assembled[GR * GC];
    for (int i = 0; i < GR * GC; i++) {
        global[i] = i * 3;
        assembled[i] = -1;
    }
    int sizes[2] = {GR, GC}, subs[2], starts[2];
#define PART(_r)                                                                                   \
    do {                                                                                           \
        int x_ = (_r) / p1, y_ = (_r) % p1;                                                        \
        starts[0] = GR * x_ / p0;                                                                  \
        subs[0] = GR * (x_ + 1) / p0 - starts[0];                                                  \
        starts[1] = GC * y_ / p1;                                                                  \
        subs[1] = GC * (y_ + 1) / p1 - starts[1];                                                  \
    } while (0)
    PART(rank);
    MPI_Datatype t;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Request req;
    MPI_Status st;
    MPI_Isend(global, 1, t, 0, 6, MPI_COMM_WORLD, &req);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            MPI_Datatype tr;
            PART(r);
            MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &tr);
            MPI_Type_commit(&tr);
            MPI_Recv(assembled, 1, tr, r, 6, MPI_COMM_WORLD, &st);
            MPI_Type_free(&tr);
        }
        int bad = 0;
        for (int i = 0; i < GR * GC; i++)
            bad += assembled[i] != global[i];
        CHECK(!bad, "subarray assembly: %d elements wrong", bad);
    }
    MPI_Wait(&req, &st);
    MPI_Type_free(&t);
#undef PART
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE;
    const int D = MPI_DISTRIBUTE_DFLT_DARG;
    for (int order = 0; order < 2; order++) {
        int o = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        run(o, B, D, B, D);
        run(o, C, D, C, D);
        run(o, C, 2, B, D);
        run(o, B, D, C, 3);
        run(o, C, 4, C, 1);
        int p0, p1;
        grid(size, &p0, &p1);
        if (p1 == 1)
            run(o, B, D, N, D);
    }
    run_subarray();
    return dtest_finish();
}
