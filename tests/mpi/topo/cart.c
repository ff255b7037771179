/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cartesian topologies: Dims_create over a table of cases (preset entries,
 * impossible ones), then for every grid of 1 to 3 dimensions that fits the
 * job (periodic and not, smaller than the job so that some ranks get
 * MPI_COMM_NULL) Cart_create, Topo_test, Cartdim_get, Cart_get, Cart_coords
 * and Cart_rank of every rank, Cart_shift by -2..2 in every dimension, Cart_map
 * and Cart_sub of every remain_dims mask, each checked against a serial
 * reference; Comm_dup keeps the topology; creating and freeing a Cartesian
 * communicator many times leaks no memory.
 */
#include "ttopo.h"

#include <malloc.h>

static void dims_case(int nnodes, int ndims, const int *in, const int *want) {
    int d[8];
    memcpy(d, in, sizeof(int) * (size_t)ndims);
    if (!want) {
        T_FAILS(MPI_ERR_DIMS, MPI_Dims_create(nnodes, ndims, d));
        return;
    }
    T_OK(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        T_CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d]=%d, expected %d", nnodes, ndims, i,
                d[i], want[i]);
}

static void test_dims(void) {
#define D(...) ((const int[]){__VA_ARGS__})
    dims_case(6, 2, D(0, 0), D(3, 2));
    dims_case(7, 2, D(0, 0), D(7, 1));
    dims_case(6, 3, D(0, 3, 0), D(2, 3, 1));
    dims_case(7, 3, D(0, 3, 0), NULL);
    dims_case(12, 2, D(0, 0), D(4, 3));
    dims_case(16, 3, D(0, 0, 0), D(4, 2, 2));
    dims_case(36, 2, D(0, 0), D(6, 6));
    dims_case(64, 4, D(0, 0, 0, 0), D(4, 4, 2, 2));
    dims_case(30, 2, D(0, 0), D(6, 5));
    dims_case(1, 3, D(0, 0, 0), D(1, 1, 1));
    dims_case(24, 3, D(0, 2, 0), D(4, 2, 3));
    dims_case(8, 2, D(2, 4), D(2, 4));
    dims_case(8, 2, D(2, 3), NULL);
    dims_case(5, 1, D(0), D(5));
    dims_case(1, 0, D(0), D(0));
    dims_case(9, 3, D(3, 0, 0), D(3, 3, 1));
    /* as close as possible, not greedy (12 x 6 for 72 before) */
    dims_case(72, 2, D(0, 0), D(9, 8));
    dims_case(360, 2, D(0, 0), D(20, 18));
    dims_case(360, 3, D(0, 0, 0), D(9, 8, 5));
    dims_case(360, 3, D(0, 2, 0), D(15, 2, 12));
    int d[2] = {-1, 0};
    T_FAILS(MPI_ERR_DIMS, MPI_Dims_create(4, 2, d));
    T_FAILS(MPI_ERR_DIMS, MPI_Dims_create(4, -1, d));
#undef D
}

/* reference: rank -> coordinates, row-major */
static void ref_coords(int ndims, const int *dims, int rank, int *coords) {
    for (int i = ndims - 1; i >= 0; i--) {
        coords[i] = rank % dims[i];
        rank /= dims[i];
    }
}
static int ref_rank(int ndims, const int *dims, const int *periods, const int *coords) {
    int r = 0;
    for (int i = 0; i < ndims; i++) {
        int c = coords[i];
        if (c < 0 || c >= dims[i]) {
            if (!periods[i])
                return MPI_PROC_NULL;
            c = ((c % dims[i]) + dims[i]) % dims[i];
        }
        r = r * dims[i] + c;
    }
    return r;
}

static void check_cart(MPI_Comm cart, int ndims, const int *dims, const int *periods) {
    int n = 1, size, rank, st, nd;
    for (int i = 0; i < ndims; i++)
        n *= dims[i];
    MPI_Comm_size(cart, &size);
    MPI_Comm_rank(cart, &rank);
    T_CHECK(size == n, "cart size %d, expected %d", size, n);
    T_OK(MPI_Topo_test(cart, &st));
    T_CHECK(st == MPI_CART, "Topo_test %d", st);
    T_OK(MPI_Cartdim_get(cart, &nd));
    T_CHECK(nd == ndims, "Cartdim_get %d, expected %d", nd, ndims);
    int gd[4], gp[4], gc[4], rc[4], c[4];
    T_OK(MPI_Cart_get(cart, 4, gd, gp, gc));
    ref_coords(ndims, dims, rank, rc);
    for (int i = 0; i < ndims; i++) {
        T_CHECK(gd[i] == dims[i] && !!gp[i] == !!periods[i] && gc[i] == rc[i],
                "Cart_get dim %d: %d %d %d, expected %d %d %d", i, gd[i], gp[i], gc[i], dims[i],
                periods[i], rc[i]);
    }
    for (int r = 0; r < n; r++) {
        int back;
        T_OK(MPI_Cart_coords(cart, r, ndims, c));
        ref_coords(ndims, dims, r, rc);
        for (int i = 0; i < ndims; i++)
            T_CHECK(c[i] == rc[i], "Cart_coords(%d)[%d]=%d, expected %d", r, i, c[i], rc[i]);
        T_OK(MPI_Cart_rank(cart, c, &back));
        T_CHECK(back == r, "Cart_rank of coords of %d gave %d", r, back);
    }
    /* periodic dimensions wrap in Cart_rank */
    ref_coords(ndims, dims, rank, c);
    for (int i = 0; i < ndims; i++) {
        if (!periods[i])
            continue;
        int w[4], r2;
        memcpy(w, c, sizeof(w));
        w[i] += 3 * dims[i];
        T_OK(MPI_Cart_rank(cart, w, &r2));
        T_CHECK(r2 == rank, "Cart_rank wrapped dim %d: %d, expected %d", i, r2, rank);
        w[i] = c[i] - 2 * dims[i];
        T_OK(MPI_Cart_rank(cart, w, &r2));
        T_CHECK(r2 == rank, "Cart_rank wrapped (negative) dim %d: %d, expected %d", i, r2, rank);
    }
    for (int dir = 0; dir < ndims; dir++)
        for (int disp = -2; disp <= 2; disp++) {
            int src, dst, w[4];
            T_OK(MPI_Cart_shift(cart, dir, disp, &src, &dst));
            memcpy(w, c, sizeof(w));
            w[dir] = c[dir] + disp;
            int rdst = ref_rank(ndims, dims, periods, w);
            w[dir] = c[dir] - disp;
            int rsrc = ref_rank(ndims, dims, periods, w);
            T_CHECK(src == rsrc && dst == rdst,
                    "Cart_shift(dir %d, disp %d) at %d: src %d dst %d, expected %d %d", dir, disp,
                    rank, src, dst, rsrc, rdst);
        }
    /* Cart_sub with every mask: members share the dropped coordinates, ranked by the kept */
    for (int mask = 0; mask < (1 << ndims); mask++) {
        int remain[4], sub_n = 1, sub_rank = 0, sub_nd = 0;
        for (int i = 0; i < ndims; i++) {
            remain[i] = (mask >> i) & 1;
            if (remain[i]) {
                sub_n *= dims[i];
                sub_rank = sub_rank * dims[i] + c[i];
                sub_nd++;
            }
        }
        MPI_Comm sub;
        T_OK(MPI_Cart_sub(cart, remain, &sub));
        int ss, sr, snd;
        MPI_Comm_size(sub, &ss);
        MPI_Comm_rank(sub, &sr);
        T_CHECK(ss == sub_n && sr == sub_rank, "Cart_sub mask %d: rank %d of %d, expected %d of %d",
                mask, sr, ss, sub_rank, sub_n);
        T_OK(MPI_Cartdim_get(sub, &snd));
        T_CHECK(snd == sub_nd, "Cart_sub mask %d: %d dims, expected %d", mask, snd, sub_nd);
        int sd[4], sp[4], sc[4];
        T_OK(MPI_Cart_get(sub, 4, sd, sp, sc));
        for (int i = 0, k = 0; i < ndims; i++)
            if (remain[i]) {
                T_CHECK(sd[k] == dims[i] && !!sp[k] == !!periods[i] && sc[k] == c[i],
                        "Cart_sub mask %d dim %d: %d %d %d", mask, k, sd[k], sp[k], sc[k]);
                k++;
            }
        /* the members really are those with the same dropped coordinates */
        int mine[4], *all = malloc(sizeof(int) * 4 * (size_t)ss);
        memcpy(mine, c, sizeof(mine));
        MPI_Allgather(mine, 4, MPI_INT, all, 4, MPI_INT, sub);
        for (int p = 0; p < ss; p++)
            for (int i = 0; i < ndims; i++)
                if (!remain[i])
                    T_CHECK(all[p * 4 + i] == c[i], "Cart_sub mask %d: member %d has coord %d",
                            mask, p, all[p * 4 + i]);
        free(all);
        MPI_Comm_free(&sub);
    }
    /* Comm_dup keeps the topology */
    MPI_Comm dup;
    T_OK(MPI_Comm_dup(cart, &dup));
    T_OK(MPI_Topo_test(dup, &st));
    T_CHECK(st == MPI_CART, "Topo_test of a dup %d", st);
    int dd[4], dp[4], dc[4];
    T_OK(MPI_Cart_get(dup, 4, dd, dp, dc));
    for (int i = 0; i < ndims; i++)
        T_CHECK(dd[i] == dims[i] && !!dp[i] == !!periods[i] && dc[i] == c[i], "dup dim %d", i);
    MPI_Comm_free(&dup);
}

static void test_grid(int ndims, const int *dims, const int *periods) {
    int n = 1, newrank;
    for (int i = 0; i < ndims; i++)
        n *= dims[i];
    if (n > t_size)
        return;
    T_OK(MPI_Cart_map(MPI_COMM_WORLD, ndims, dims, periods, &newrank));
    T_CHECK(newrank == (t_rank < n ? t_rank : MPI_UNDEFINED), "Cart_map %d", newrank);
    MPI_Comm cart;
    T_OK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart));
    if (t_rank >= n) {
        T_CHECK(cart == MPI_COMM_NULL, "rank %d outside a grid of %d got a communicator", t_rank,
                n);
        return;
    }
    T_CHECK(cart != MPI_COMM_NULL, "rank %d inside a grid of %d got MPI_COMM_NULL", t_rank, n);
    if (cart == MPI_COMM_NULL)
        return;
    int r;
    MPI_Comm_rank(cart, &r);
    T_CHECK(r == t_rank, "reorder=false changed rank %d to %d", t_rank, r);
    check_cart(cart, ndims, dims, periods);
    MPI_Comm_free(&cart);
}

static void test_grids(void) {
    static const int grids[][4] = {
        /* ndims, d0, d1, d2 */
        {1, 1, 0, 0}, {1, 2, 0, 0}, {1, 3, 0, 0}, {1, 5, 0, 0}, {2, 1, 1, 0}, {2, 2, 1, 0},
        {2, 1, 2, 0}, {2, 2, 2, 0}, {2, 3, 1, 0}, {2, 1, 3, 0}, {2, 2, 3, 0}, {3, 2, 2, 1},
        {3, 1, 2, 2}, {3, 1, 1, 1}, {3, 1, 5, 1}, {2, 5, 1, 0},
    };
    for (size_t g = 0; g < sizeof(grids) / sizeof(grids[0]); g++)
        for (int per = 0; per < 4; per++) {
            int periods[3] = {per & 1, (per >> 1) & 1, per & 1};
            test_grid(grids[g][0], &grids[g][1], periods);
        }
    /* the whole job in a Dims_create grid */
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(t_size, 2, dims);
    test_grid(2, dims, periods);
    /* a zero-dimensional grid: rank 0 alone */
    MPI_Comm z;
    T_OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &z));
    T_CHECK((t_rank == 0) == (z != MPI_COMM_NULL), "0-d grid at rank %d", t_rank);
    if (z != MPI_COMM_NULL) {
        int nd = -1, zs;
        MPI_Comm_size(z, &zs);
        T_OK(MPI_Cartdim_get(z, &nd));
        T_CHECK(nd == 0 && zs == 1, "0-d grid: %d dims, size %d", nd, zs);
        MPI_Comm_free(&z);
    }
}

/* Creating and freeing a topology communicator (and its dup) leaves the heap
 * as it found it. */
static void test_leak(void) {
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(t_size, 2, dims);
    size_t before = 0;
    for (int it = 0; it < 210; it++) {
        if (it == 10)
            before = mallinfo2().uordblks;
        MPI_Comm cart, dup, sub;
        int remain[2] = {1, 0};
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
        MPI_Comm_dup(cart, &dup);
        MPI_Cart_sub(dup, remain, &sub);
        MPI_Comm_free(&sub);
        MPI_Comm_free(&dup);
        MPI_Comm_free(&cart);
    }
    size_t after = mallinfo2().uordblks;
    T_CHECK(after <= before + 2048, "200 cart create/dup/sub/free grew the heap by %zu bytes",
            after - before);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    test_dims();
    test_grids();
    test_leak();
    return t_finish();
}
