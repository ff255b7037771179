/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbourhood collectives, blocking and non-blocking (I-form + Wait):
 * allgather, allgatherv, alltoall, alltoallv, alltoallw on a periodic and a
 * non-periodic 2D Cartesian grid (with 2 or 4 ranks a periodic dimension of
 * size 1 or 2 makes one process both neighbours) and on distributed graphs
 * with a self loop and a repeated edge. Every block carries (sender, block,
 * element); the receiver computes which of its neighbour's blocks each slot
 * must hold (Cartesian: slot i gets block i^1; graphs: the k-th edge from q
 * gets q's k-th block to the receiver), and gaps and MPI_PROC_NULL slots must
 * stay untouched.
 */
#include "ttopo.h"

#define GAP 6 /* slot stride in ints for the v/w forms: counts are at most 4 */
#define UNSET (-1)

static int val(int sender, int block, int e) {
    return sender * 10000 + block * 100 + e;
}
/* items in block j of rank q (v/w forms): 1..4 */
static int cnt(int q, int j) {
    return 1 + (q * 3 + j) % 4;
}

typedef struct nbrs {
    int indeg, outdeg, in[64], out[64];
    int src_block[64]; /* slot i holds block src_block[i] of in[i] */
} nbrs_t;

static MPI_Datatype int2;

enum { AG, AGV, AA, AAV, AAW, NFORMS };
static const char *names[] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};

static void run(MPI_Comm comm, const nbrs_t *nb, int form, int nonblocking, const char *where) {
    int n = 3; /* fixed count */
    int sbuf[64 * GAP], rbuf[64 * GAP];
    int scounts[64], sdispls[64], rcounts[64], rdispls[64];
    MPI_Aint sbd[64], rbd[64];
    MPI_Datatype stypes[64], rtypes[64];
    bool v = form == AGV || form == AAV || form == AAW;
    for (int i = 0; i < 64 * GAP; i++)
        sbuf[i] = rbuf[i] = UNSET;
    /* send side */
    if (form == AG || form == AGV) {
        for (int e = 0; e < n; e++)
            sbuf[e] = val(t_rank, 0, e);
    } else {
        for (int j = 0; j < nb->outdeg; j++) {
            int c = v ? cnt(t_rank, j) : n, at = v ? j * GAP + 1 : j * n;
            scounts[j] = c;
            sdispls[j] = at;
            sbd[j] = (MPI_Aint)at * (MPI_Aint)sizeof(int);
            stypes[j] = MPI_INT;
            for (int e = 0; e < c; e++)
                sbuf[at + e] = val(t_rank, j, e);
        }
    }
    /* receive side: what slot i will hold */
    for (int i = 0; i < nb->indeg; i++) {
        int q = nb->in[i], j = nb->src_block[i];
        int c = form == AGV ? n : v ? cnt(q < 0 ? 0 : q, j) : n;
        rcounts[i] = c;
        rdispls[i] = v ? i * GAP + 2 : i * n;
        rbd[i] = (MPI_Aint)rdispls[i] * (MPI_Aint)sizeof(int);
        rtypes[i] = MPI_INT;
        if (form == AAW && i % 2 && c % 2 == 0) { /* received as pairs */
            rtypes[i] = int2;
            rcounts[i] = c / 2;
        }
    }
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Request *rq = nonblocking ? &req : NULL;
    int rc = MPI_ERR_OTHER;
    switch (form) {
    case AG:
        rc = rq ? MPI_Ineighbor_allgather(sbuf, n, MPI_INT, rbuf, n, MPI_INT, comm, rq)
                : MPI_Neighbor_allgather(sbuf, n, MPI_INT, rbuf, n, MPI_INT, comm);
        break;
    case AGV:
        rc = rq ? MPI_Ineighbor_allgatherv(sbuf, n, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, comm,
                                           rq)
                : MPI_Neighbor_allgatherv(sbuf, n, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, comm);
        break;
    case AA:
        rc = rq ? MPI_Ineighbor_alltoall(sbuf, n, MPI_INT, rbuf, n, MPI_INT, comm, rq)
                : MPI_Neighbor_alltoall(sbuf, n, MPI_INT, rbuf, n, MPI_INT, comm);
        break;
    case AAV:
        rc = rq ? MPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls,
                                          MPI_INT, comm, rq)
                : MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls,
                                         MPI_INT, comm);
        break;
    case AAW:
        rc = rq ? MPI_Ineighbor_alltoallw(sbuf, scounts, sbd, stypes, rbuf, rcounts, rbd, rtypes,
                                          comm, rq)
                : MPI_Neighbor_alltoallw(sbuf, scounts, sbd, stypes, rbuf, rcounts, rbd, rtypes,
                                         comm);
        break;
    }
    T_CHECK(rc == MPI_SUCCESS, "%s %s%s failed (%d)", where, nonblocking ? "I" : "", names[form],
            rc);
    if (rq)
        T_OK(MPI_Wait(rq, MPI_STATUS_IGNORE));
    /* check every int of the receive buffer */
    int expect[64 * GAP];
    for (int i = 0; i < 64 * GAP; i++)
        expect[i] = UNSET;
    for (int i = 0; i < nb->indeg; i++) {
        int q = nb->in[i];
        if (q == MPI_PROC_NULL)
            continue;
        int block = form == AG || form == AGV ? 0 : nb->src_block[i];
        int c = form == AGV || !v ? n : cnt(q, block);
        for (int e = 0; e < c; e++)
            expect[rdispls[i] + e] = val(q, block, e);
    }
    int bad = 0;
    for (int i = 0; i < 64 * GAP; i++)
        if (rbuf[i] != expect[i] && bad++ < 3)
            T_CHECK(rbuf[i] == expect[i], "%s %s%s: rbuf[%d]=%d, expected %d", where,
                    nonblocking ? "I" : "", names[form], i, rbuf[i], expect[i]);
}

static void run_all(MPI_Comm comm, const nbrs_t *nb, const char *where, int forms) {
    for (int f = 0; f < forms; f++)
        for (int nbk = 0; nbk < 2; nbk++)
            run(comm, nb, f, nbk, where);
}

static void test_cart(int periodic) {
    int dims[2] = {0, 0}, periods[2] = {periodic, periodic};
    MPI_Dims_create(t_size, 2, dims);
    MPI_Comm cart;
    T_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    nbrs_t nb = {.indeg = 4, .outdeg = 4};
    for (int d = 0; d < 2; d++)
        MPI_Cart_shift(cart, d, 1, &nb.in[2 * d], &nb.in[2 * d + 1]);
    for (int i = 0; i < 4; i++) {
        nb.out[i] = nb.in[i];
        nb.src_block[i] = i ^ 1; /* my -1 neighbour sent me its +1 block */
    }
    run_all(cart, &nb, periodic ? "periodic cart" : "open cart", NFORMS);
    /* and on a duplicate */
    MPI_Comm dup;
    MPI_Comm_dup(cart, &dup);
    run_all(dup, &nb, "cart dup", NFORMS);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&cart);
}

/* edges: i -> (i*3 + j) % n for j = 1..(i%3)+1, a self loop at 1, 0 -> 1 again */
static int ref_edges(int n, int (*e)[2]) {
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 1; j <= i % 3 + 1; j++) {
            e[k][0] = i;
            e[k++][1] = (i * 3 + j) % n;
        }
    if (n > 1) {
        e[k][0] = 1, e[k++][1] = 1;
        e[k][0] = 0, e[k++][1] = 1;
    }
    return k;
}

static void test_dist(void) {
    int e[64][2], ne = ref_edges(t_size, e);
    nbrs_t nb = {0};
    int seen[64] = {0}; /* per source: edges to me seen so far */
    for (int k = 0; k < ne; k++) {
        if (e[k][1] == t_rank) {
            int q = e[k][0], occ = seen[q]++, j = -1;
            /* q's block to me: the occ-th edge from q to me, counted in q's out list */
            for (int m = 0, pos = 0; m < ne; m++)
                if (e[m][0] == q) {
                    if (e[m][1] == t_rank && occ-- == 0) {
                        j = pos;
                        break;
                    }
                    pos++;
                }
            nb.in[nb.indeg] = q;
            nb.src_block[nb.indeg++] = j;
        }
        if (e[k][0] == t_rank)
            nb.out[nb.outdeg++] = e[k][1];
    }
    MPI_Comm g;
    T_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nb.indeg, nb.in, MPI_UNWEIGHTED, nb.outdeg,
                                        nb.out, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    run_all(g, &nb, "dist graph", NFORMS);
    MPI_Comm_free(&g);

    /* the same graph through Dist_graph_create (rank 0 names every edge):
     * neighbour order is the library's, so only the allgathers are checked,
     * in the order Dist_graph_neighbors reports */
    int sources[64], degrees[64], dests[64], n = 0;
    if (t_rank == 0)
        for (int k = 0; k < ne; k++) {
            sources[n] = e[k][0];
            degrees[n] = 1;
            dests[n++] = e[k][1];
        }
    T_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, MPI_UNWEIGHTED,
                               MPI_INFO_NULL, 0, &g));
    nbrs_t nb2 = {0};
    int w;
    MPI_Dist_graph_neighbors_count(g, &nb2.indeg, &nb2.outdeg, &w);
    MPI_Dist_graph_neighbors(g, 64, nb2.in, MPI_UNWEIGHTED, 64, nb2.out, MPI_UNWEIGHTED);
    run_all(g, &nb2, "general dist graph", AGV + 1);
    MPI_Comm_free(&g);
}

/* a graph topology: ring neighbours (each rank's -1 and +1), allgather only
 * (a graph's in and out lists are the same list) */
static void test_graph(void) {
    int index[8], edges[16], k = 0;
    for (int i = 0; i < t_size; i++) {
        edges[k++] = (i + t_size - 1) % t_size;
        edges[k++] = (i + 1) % t_size;
        index[i] = k;
    }
    MPI_Comm g;
    T_OK(MPI_Graph_create(MPI_COMM_WORLD, t_size, index, edges, 0, &g));
    nbrs_t nb = {.indeg = 2, .outdeg = 2};
    nb.in[0] = nb.out[0] = edges[2 * t_rank];
    nb.in[1] = nb.out[1] = edges[2 * t_rank + 1];
    run_all(g, &nb, "graph", AGV + 1);
    MPI_Comm_free(&g);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Type_contiguous(2, MPI_INT, &int2);
    MPI_Type_commit(&int2);
    test_cart(1);
    test_cart(0);
    test_dist();
    test_graph();
    MPI_Type_free(&int2);
    return t_finish();
}
