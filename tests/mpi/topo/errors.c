/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad arguments to the topology calls and neighbourhood collectives return
 * the right error class (MPI_ERRORS_RETURN, inherited by the topology
 * communicators), with a message naming the call and the argument, and
 * leave the communicator usable; topology creation on an intercommunicator
 * is MPI_ERR_COMM. Every rank passes the same bad arguments,
 * so no collective call is left half-entered.
 */
#include "ttopo.h"

/* The message of the last error names `call` and `what`. */
static void check_msg(int code, const char *call, const char *what) {
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(code, s, &len);
    T_CHECK(strstr(s, call) && strstr(s, what), "message \"%s\" should name %s and %s", s, call,
            what);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int dims[2] = {t_size, 1}, periods[2] = {0, 1}, big[2] = {t_size, 2}, zero[2] = {0, 1};
    int st, r, c[2];
    MPI_Comm cart, g, null = MPI_COMM_NULL;

    /* creation */
    T_FAILS(MPI_ERR_DIMS, MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &cart));
    T_FAILS(MPI_ERR_DIMS, MPI_Cart_create(MPI_COMM_WORLD, 2, zero, periods, 0, &cart));
    T_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &cart));
    T_FAILS(MPI_ERR_ARG, MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, NULL));
    T_FAILS(MPI_ERR_COMM, MPI_Cart_create(null, 2, dims, periods, 0, &cart));
    T_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_map(MPI_COMM_WORLD, 2, big, periods, &r));
    int rc = MPI_Cart_create(MPI_COMM_WORLD, 2, zero, periods, 0, &cart);
    check_msg(rc, "MPI_Cart_create", "dims[0]");

    /* Cartesian queries */
    T_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    T_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c));
    T_FAILS(MPI_ERR_TOPOLOGY, MPI_Cartdim_get(MPI_COMM_WORLD, &r));
    T_FAILS(MPI_ERR_RANK, MPI_Cart_coords(cart, t_size, 2, c));
    T_FAILS(MPI_ERR_RANK, MPI_Cart_coords(cart, -1, 2, c));
    T_FAILS(MPI_ERR_ARG, MPI_Cart_coords(cart, 0, 1, c));
    T_FAILS(MPI_ERR_ARG, MPI_Cart_get(cart, 1, c, c, c));
    int out[2] = {t_size, 0}; /* non-periodic dimension 0 */
    T_FAILS(MPI_ERR_ARG, MPI_Cart_rank(cart, out, &r));
    int wrap[2] = {0, 5}; /* periodic dimension 1: fine */
    T_OK(MPI_Cart_rank(cart, wrap, &r));
    T_FAILS(MPI_ERR_ARG, MPI_Cart_shift(cart, 2, 1, &r, &st));
    T_FAILS(MPI_ERR_ARG, MPI_Cart_shift(cart, -1, 1, &r, &st));
    rc = MPI_Cart_shift(cart, 2, 1, &r, &st);
    check_msg(rc, "MPI_Cart_shift", "direction");
    check_msg(rc, "MPI_Cart_shift", "rank");
    int remain[2] = {1, 0};
    T_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_sub(MPI_COMM_WORLD, remain, &g));
    T_FAILS(MPI_ERR_TOPOLOGY, MPI_Graph_neighbors_count(cart, 0, &r));
    T_FAILS(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(cart, &r, &r, &r));
    rc = MPI_Graphdims_get(cart, &r, &r);
    check_msg(rc, "MPI_Graphdims_get", "Cartesian");

    /* graphs */
    int index[1] = {1}, edges[1] = {1}, e0[1] = {0};
    T_FAILS(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &g));
    T_FAILS(MPI_ERR_ARG, MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &g));
    int bigidx[8];
    for (int i = 0; i < 8; i++)
        bigidx[i] = 0;
    T_FAILS(MPI_ERR_TOPOLOGY, MPI_Graph_create(MPI_COMM_WORLD, t_size + 1, bigidx, e0, 0, &g));
    T_OK(MPI_Graph_create(MPI_COMM_WORLD, 1, index, e0, 0, &g));
    if (g != MPI_COMM_NULL) {
        T_FAILS(MPI_ERR_RANK, MPI_Graph_neighbors_count(g, 1, &r));
        T_FAILS(MPI_ERR_RANK, MPI_Graph_neighbors(g, -1, 4, c));
        T_FAILS(MPI_ERR_ARG, MPI_Graph_neighbors(g, 0, 0, c));
        T_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_shift(g, 0, 1, &r, &st));
        MPI_Comm_free(&g);
    }

    /* distributed graphs */
    int src[1] = {t_size}, ok[1] = {0}, w[1] = {1}, negw[1] = {-1};
    T_FAILS(MPI_ERR_RANK,
            MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 0, NULL,
                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    T_FAILS(MPI_ERR_ARG,
            MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, ok, MPI_UNWEIGHTED, 0, NULL,
                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    T_FAILS(MPI_ERR_ARG, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, ok, w, 1, ok,
                                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    T_FAILS(MPI_ERR_ARG, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, ok, negw, 1, ok, w,
                                                        MPI_INFO_NULL, 0, &g));
    int deg[1] = {1}, negdeg[1] = {-1};
    T_FAILS(MPI_ERR_RANK, MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, deg, src, MPI_UNWEIGHTED,
                                                MPI_INFO_NULL, 0, &g));
    T_FAILS(MPI_ERR_RANK, MPI_Dist_graph_create(MPI_COMM_WORLD, 1, src, deg, ok, MPI_UNWEIGHTED,
                                                MPI_INFO_NULL, 0, &g));
    T_FAILS(MPI_ERR_ARG, MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, negdeg, ok, MPI_UNWEIGHTED,
                                               MPI_INFO_NULL, 0, &g));
    T_FAILS(MPI_ERR_ARG, MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, deg, ok, MPI_WEIGHTS_EMPTY,
                                               MPI_INFO_NULL, 0, &g));
    int me[1] = {t_rank}; /* a self loop: a consistent graph at every size */
    T_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, me, w, 1, me, w, MPI_INFO_NULL, 0, &g));
    int s2[1], sw2[1];
    T_FAILS(MPI_ERR_ARG, MPI_Dist_graph_neighbors(g, 0, s2, sw2, 1, s2, sw2));

    /* neighbourhood collectives */
    int sb[8] = {0}, rb[8];
    MPI_Request req;
    T_FAILS(MPI_ERR_TOPOLOGY,
            MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD));
    T_FAILS(MPI_ERR_COUNT, MPI_Neighbor_alltoall(sb, -1, MPI_INT, rb, 1, MPI_INT, cart));
    T_FAILS(MPI_ERR_TYPE, MPI_Neighbor_alltoall(sb, 1, MPI_DATATYPE_NULL, rb, 1, MPI_INT, cart));
    T_FAILS(MPI_ERR_BUFFER, MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, rb, 1, MPI_INT, cart));
    T_FAILS(MPI_ERR_REQUEST, MPI_Ineighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, cart, NULL));
    int negc[4] = {1, -1, 1, 1}, dsp[4] = {0, 1, 2, 3};
    T_FAILS(MPI_ERR_COUNT,
            MPI_Neighbor_alltoallv(sb, negc, dsp, MPI_INT, rb, negc, dsp, MPI_INT, cart));
    T_FAILS(MPI_ERR_ARG, MPI_Neighbor_allgatherv(sb, 1, MPI_INT, rb, NULL, dsp, MPI_INT, cart));
    rc = MPI_Neighbor_alltoall(sb, -1, MPI_INT, rb, 1, MPI_INT, cart);
    check_msg(rc, "MPI_Neighbor_alltoall", "sendcount");

    /* still usable after all that */
    T_OK(MPI_Ineighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, g, &req));
    T_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    T_OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
    T_CHECK(st == MPI_UNDEFINED, "Topo_test of MPI_COMM_WORLD %d", st);
    T_FAILS(MPI_ERR_COMM, MPI_Topo_test(null, &st));
    MPI_Comm_free(&g);
    MPI_Comm_free(&cart);

    /* topologies need an intracommunicator */
    if (t_size > 1) {
        MPI_Comm half, inter;
        int lo = t_rank < t_size / 2;
        MPI_Comm_split(MPI_COMM_WORLD, lo, t_rank, &half);
        T_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lo ? t_size / 2 : 0, 77, &inter));
        int one[1] = {1}, p0[1] = {0};
        T_FAILS(MPI_ERR_COMM, MPI_Cart_create(inter, 1, one, p0, 0, &cart));
        T_FAILS(MPI_ERR_COMM, MPI_Graph_create(inter, 1, one, p0, 0, &g));
        T_FAILS(MPI_ERR_COMM,
                MPI_Dist_graph_create_adjacent(inter, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
        T_FAILS(MPI_ERR_TOPOLOGY, MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, inter));
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    return t_finish();
}
