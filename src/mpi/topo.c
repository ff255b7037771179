/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Process topology bindings (MPI 3.1 chapter 7): Cartesian, graph and
 * distributed graph communicators, their queries, and the neighbourhood
 * collectives (blocking, I- and MPI-4 _init forms, one check for all three).
 * Topology objects live in src/topo; the exchanges in src/coll.
 *
 * reorder is ignored (the standard allows the identity mapping): a new
 * topology communicator is a split of the old one with key = old rank, so
 * every process keeps its rank and the processes beyond the grid get
 * MPI_COMM_NULL. Error classes: a communicator without the topology a call
 * needs is MPI_ERR_TOPOLOGY, as is a grid or graph larger than the group;
 * bad dimension sizes are MPI_ERR_DIMS; neighbour ranks out of range
 * MPI_ERR_RANK; other bad values MPI_ERR_ARG.
 */
#include "bind.h"

#include "../coll/coll.h"
#include "../comm/info.h"
#include "../topo/topo.h"
#include "coll_persist.h"

#include <stdlib.h>

_Static_assert((int)MPI_CART == (int)TDM_TOPO_CART && (int)MPI_GRAPH == (int)TDM_TOPO_GRAPH &&
                   (int)MPI_DIST_GRAPH == (int)TDM_TOPO_DIST_GRAPH,
               "topo kinds are the MPI_Topo_test values");
_Static_assert(MPI_PROC_NULL == TDM_TOPO_PROC_NULL, "topo/ writes MPI_PROC_NULL as -1");
_Static_assert(sizeof(MPI_Aint) == sizeof(ptrdiff_t), "Neighbor_alltoallw displacements");

static const char *kind_name(const tdm_topo_t *t) {
    if (!t)
        return "no topology";
    return t->kind == TDM_TOPO_CART    ? "a Cartesian topology"
           : t->kind == TDM_TOPO_GRAPH ? "a graph topology"
                                       : "a distributed graph topology";
}

/* The communicator's topology, which must be of `kind` (0: any). */
#define GET_TOPO(_fn, _c, _kind, _var)                                                             \
    do {                                                                                           \
        (_var) = tdm_topo_of(_c);                                                                  \
        if (TDM_UNLIKELY(!(_var) || ((_kind) && (_var)->kind != (_kind))))                         \
            return tdm_mpi_err(_c, MPI_ERR_TOPOLOGY, _fn, "communicator %#x has %s (needs %s)",    \
                               (unsigned)(_c)->handle, kind_name(_var),                            \
                               (_kind) == TDM_TOPO_CART    ? "a Cartesian topology"                \
                               : (_kind) == TDM_TOPO_GRAPH ? "a graph topology"                    \
                               : (_kind)                   ? "a distributed graph topology"        \
                                                           : "a topology");                                          \
    } while (0)

/* ---- creating topology communicators ---- */

/* Topologies are defined on intracommunicators only (MPI 3.1 §7.2). */
#define NO_INTER(_fn, _c)                                                                          \
    do {                                                                                           \
        if (TDM_UNLIKELY((_c)->inter))                                                             \
            return tdm_mpi_err(_c, MPI_ERR_COMM, _fn,                                              \
                               "communicator %#x is an intercommunicator (topologies need an "     \
                               "intracommunicator)",                                               \
                               (unsigned)(_c)->handle);                                            \
    } while (0)

static int create_error(tdm_comm_t *c, int rc, const char *fn) {
    if (rc > 0)
        return tdm_mpi_err_code(c, rc, fn);
    return tdm_mpi_err(c, MPI_ERR_OTHER, fn,
                       "cannot create the communicator (out of memory or a failed exchange "
                       "with the other ranks; see the log)");
}

/* The caller's part of the new communicators: those of the same color, ranked
 * by key; *nc_p NULL for color MPI_UNDEFINED. */
static int split_for(const char *fn, tdm_comm_t *c, int color, int key, tdm_comm_t **nc_p) {
    int rc = tdm_comm_split(c, color, key, nc_p);
    return rc ? create_error(c, rc, fn) : MPI_SUCCESS;
}

/* Hang t (NULL: out of memory) on nc and hand it out with the parent's error
 * handler (the reference is taken as in Comm_split; Comm_free gives it back). */
static int publish(const char *fn, tdm_comm_t *c, tdm_comm_t *nc, tdm_topo_t *t,
                   MPI_Comm *newcomm) {
    if (!t) {
        tdm_comm_free(nc);
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for the topology");
    }
    tdm_topo_attach(nc, t);
    MPI_Errhandler eh;
    if (PMPI_Comm_get_errhandler(c->handle, &eh) == MPI_SUCCESS)
        nc->errhandler = eh;
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

/* The split of Cart_create and Graph_create: ranks 0..n-1 keep their rank in
 * *nc_p, the others get NULL and MPI_COMM_NULL in *newcomm. */
static int split_first(const char *fn, tdm_comm_t *c, int n, MPI_Comm *newcomm, tdm_comm_t **nc_p) {
    int err = split_for(fn, c, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, nc_p);
    if (!err && !*nc_p)
        *newcomm = MPI_COMM_NULL;
    return err;
}

/* ndims, dims, periods of Cart_create / Cart_map; the grid's size into *n_p. */
static int cart_args(const char *fn, tdm_comm_t *c, int ndims, const int *dims, const int *periods,
                     int *n_p) {
    if (ndims < 0)
        return tdm_mpi_err(c, MPI_ERR_DIMS, fn, "invalid ndims %d (must be >= 0)", ndims);
    if (ndims > 0) {
        TDM_CHECK_PTR(fn, c, dims, "dims");
        TDM_CHECK_PTR(fn, c, periods, "periods");
    }
    for (int i = 0; i < ndims; i++)
        if (dims[i] <= 0)
            return tdm_mpi_err(c, MPI_ERR_DIMS, fn, "invalid dims[%d]=%d (must be > 0)", i,
                               dims[i]);
    int n = tdm_topo_cart_size(ndims, dims);
    if (n < 0 || n > c->size)
        return tdm_mpi_err(c, MPI_ERR_TOPOLOGY, fn,
                           "the grid has more processes (%s%d) than the communicator (%d)",
                           n < 0 ? "more than " : "", n < 0 ? 0x7fffffff : n, c->size);
    *n_p = n;
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart) {
    static const char fn[] = "MPI_Cart_create";
    tdm_comm_t *c, *nc;
    int n;
    (void)reorder;
    TDM_GET_COMM(fn, comm_old, c);
    NO_INTER(fn, c);
    TDM_CHECK_PTR(fn, c, comm_cart, "comm_cart");
    int err = cart_args(fn, c, ndims, dims, periods, &n);
    if (err)
        return err;
    if ((err = split_first(fn, c, n, comm_cart, &nc)) || !nc)
        return err;
    return publish(fn, c, nc, tdm_topo_cart_new(ndims, dims, periods, nc->rank), comm_cart);
}
TDM_WEAK(MPI_Cart_create)

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank) {
    static const char fn[] = "MPI_Cart_map";
    tdm_comm_t *c;
    int n;
    TDM_GET_COMM(fn, comm, c);
    NO_INTER(fn, c);
    TDM_CHECK_PTR(fn, c, newrank, "newrank");
    int err = cart_args(fn, c, ndims, dims, periods, &n);
    if (err)
        return err;
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Cart_map)

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Cart_sub";
    tdm_comm_t *c, *nc;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_CART, t);
    TDM_CHECK_PTR(fn, c, newcomm, "newcomm");
    if (t->ndims > 0)
        TDM_CHECK_PTR(fn, c, remain_dims, "remain_dims");
    /* color: the position in the dropped dimensions; key: in the kept ones */
    int color = 0, key = 0, nkeep = 0;
    int *kdims = malloc((size_t)(2 * t->ndims + 1) * sizeof(int)), *kper = kdims + t->ndims;
    if (!kdims)
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            key = key * t->dims[i] + t->coords[i];
            kdims[nkeep] = t->dims[i];
            kper[nkeep++] = t->periods[i];
        } else {
            color = color * t->dims[i] + t->coords[i];
        }
    }
    int err = split_for(fn, c, color, key, &nc);
    if (!err)
        err = publish(fn, c, nc, tdm_topo_cart_new(nkeep, kdims, kper, nc->rank), newcomm);
    free(kdims);
    return err;
}
TDM_WEAK(MPI_Cart_sub)

/* ---- Cartesian queries ---- */

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims) {
    static const char fn[] = "MPI_Cartdim_get";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_CART, t);
    TDM_CHECK_PTR(fn, c, ndims, "ndims");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Cartdim_get)

#define CHECK_MAXDIMS(_fn, _c, _t, _max)                                                           \
    do {                                                                                           \
        if (TDM_UNLIKELY((_max) < (_t)->ndims))                                                    \
            return tdm_mpi_err(_c, MPI_ERR_ARG, _fn,                                               \
                               "maxdims %d is smaller than the topology's %d dimensions",          \
                               (int)(_max), (_t)->ndims);                                          \
    } while (0)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
    static const char fn[] = "MPI_Cart_get";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_CART, t);
    CHECK_MAXDIMS(fn, c, t, maxdims);
    if (t->ndims > 0 && (!dims || !periods || !coords))
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s is NULL",
                           !dims      ? "dims"
                           : !periods ? "periods"
                                      : "coords");
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = t->coords[i];
    }
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Cart_get)

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank) {
    static const char fn[] = "MPI_Cart_rank";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_CART, t);
    TDM_CHECK_PTR(fn, c, rank, "rank");
    if (t->ndims > 0)
        TDM_CHECK_PTR(fn, c, coords, "coords");
    for (int i = 0; i < t->ndims; i++)
        if (!t->periods[i] && (coords[i] < 0 || coords[i] >= t->dims[i]))
            return tdm_mpi_err(c, MPI_ERR_ARG, fn,
                               "coords[%d]=%d is outside non-periodic dimension %d (0..%d)", i,
                               coords[i], i, t->dims[i] - 1);
    *rank = tdm_topo_cart_rank(t, coords);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Cart_rank)

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
    static const char fn[] = "MPI_Cart_coords";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_CART, t);
    if (rank < 0 || rank >= c->size)
        return tdm_mpi_err(c, MPI_ERR_RANK, fn, "invalid rank %d (communicator of size %d)", rank,
                           c->size);
    CHECK_MAXDIMS(fn, c, t, maxdims);
    if (t->ndims > 0)
        TDM_CHECK_PTR(fn, c, coords, "coords");
    tdm_topo_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Cart_coords)

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest) {
    static const char fn[] = "MPI_Cart_shift";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_CART, t);
    if (direction < 0 || direction >= t->ndims)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "invalid direction %d (the grid has %d dimensions)",
                           direction, t->ndims);
    if (!rank_source || !rank_dest)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s is NULL",
                           !rank_source ? "rank_source" : "rank_dest");
    tdm_topo_cart_shift(t, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Cart_shift)

int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
    static const char fn[] = "MPI_Dims_create";
    TDM_CHECK_INIT(fn);
    if (nnodes < 1)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid nnodes %d (must be > 0)", nnodes);
    if (ndims < 0)
        return tdm_mpi_err(NULL, MPI_ERR_DIMS, fn, "invalid ndims %d (must be >= 0)", ndims);
    if (ndims > 0 && !dims)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "dims is NULL");
    long long preset = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return tdm_mpi_err(NULL, MPI_ERR_DIMS, fn, "invalid dims[%d]=%d (must be >= 0)", i,
                               dims[i]);
        if (dims[i] > 0 && (preset *= dims[i]) > nnodes)
            break;
    }
    if (preset > nnodes || tdm_topo_dims_create(nnodes, ndims, dims) != 0)
        return tdm_mpi_err(NULL, MPI_ERR_DIMS, fn,
                           "nnodes %d is not a multiple of the product of the nonzero dims "
                           "(ndims %d)",
                           nnodes, ndims);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Dims_create)

/* ---- graphs ---- */

/* nnodes, index, edges of Graph_create / Graph_map. */
static int graph_args(const char *fn, tdm_comm_t *c, int nnodes, const int *index,
                      const int *edges) {
    if (nnodes < 0)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "invalid nnodes %d (must be >= 0)", nnodes);
    if (nnodes > c->size)
        return tdm_mpi_err(c, MPI_ERR_TOPOLOGY, fn,
                           "the graph has more nodes (%d) than the communicator (%d)", nnodes,
                           c->size);
    if (nnodes == 0)
        return MPI_SUCCESS;
    TDM_CHECK_PTR(fn, c, index, "index");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return tdm_mpi_err(c, MPI_ERR_ARG, fn,
                               "index[%d]=%d is below index[%d] (index must not decrease)", i,
                               index[i], i - 1);
    if (index[nnodes - 1] > 0)
        TDM_CHECK_PTR(fn, c, edges, "edges");
    for (int k = 0; k < index[nnodes - 1]; k++)
        if (edges[k] < 0 || edges[k] >= nnodes)
            return tdm_mpi_err(c, MPI_ERR_ARG, fn, "invalid edges[%d]=%d (nodes are 0..%d)", k,
                               edges[k], nnodes - 1);
    return MPI_SUCCESS;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph) {
    static const char fn[] = "MPI_Graph_create";
    tdm_comm_t *c, *nc;
    (void)reorder;
    TDM_GET_COMM(fn, comm_old, c);
    NO_INTER(fn, c);
    TDM_CHECK_PTR(fn, c, comm_graph, "comm_graph");
    int err = graph_args(fn, c, nnodes, index, edges);
    if (err)
        return err;
    if ((err = split_first(fn, c, nnodes, comm_graph, &nc)) || !nc)
        return err;
    return publish(fn, c, nc, tdm_topo_graph_new(nnodes, index, edges, nc->rank), comm_graph);
}
TDM_WEAK(MPI_Graph_create)

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank) {
    static const char fn[] = "MPI_Graph_map";
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    NO_INTER(fn, c);
    TDM_CHECK_PTR(fn, c, newrank, "newrank");
    int err = graph_args(fn, c, nnodes, index, edges);
    if (err)
        return err;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Graph_map)

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges) {
    static const char fn[] = "MPI_Graphdims_get";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_GRAPH, t);
    TDM_CHECK_PTR(fn, c, nnodes, "nnodes");
    TDM_CHECK_PTR(fn, c, nedges, "nedges");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Graphdims_get)

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
    static const char fn[] = "MPI_Graph_get";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_GRAPH, t);
    if (maxindex < 0 || maxedges < 0)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "invalid %s %d (must be >= 0)",
                           maxindex < 0 ? "maxindex" : "maxedges",
                           maxindex < 0 ? maxindex : maxedges);
    int ni = TDM_MIN(maxindex, t->nnodes), ne = TDM_MIN(maxedges, t->nedges);
    if ((ni > 0 && !index) || (ne > 0 && !edges))
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s is NULL", ni > 0 && !index ? "index" : "edges");
    for (int i = 0; i < ni; i++)
        index[i] = t->index[i];
    for (int i = 0; i < ne; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Graph_get)

static int graph_rank(const char *fn, tdm_comm_t *c, const tdm_topo_t *t, int rank) {
    if (rank < 0 || rank >= t->nnodes)
        return tdm_mpi_err(c, MPI_ERR_RANK, fn, "invalid rank %d (the graph has %d nodes)", rank,
                           t->nnodes);
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors) {
    static const char fn[] = "MPI_Graph_neighbors_count";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_GRAPH, t);
    int err = graph_rank(fn, c, t, rank);
    if (err)
        return err;
    TDM_CHECK_PTR(fn, c, nneighbors, "nneighbors");
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Graph_neighbors_count)

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
    static const char fn[] = "MPI_Graph_neighbors";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_GRAPH, t);
    int err = graph_rank(fn, c, t, rank);
    if (err)
        return err;
    int first = rank ? t->index[rank - 1] : 0, n = t->index[rank] - first;
    if (maxneighbors < n)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "maxneighbors %d is below rank %d's %d neighbours",
                           maxneighbors, rank, n);
    if (n > 0)
        TDM_CHECK_PTR(fn, c, neighbors, "neighbors");
    for (int i = 0; i < n; i++)
        neighbors[i] = t->edges[first + i];
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Graph_neighbors)

/* ---- distributed graphs ---- */

/* A list of n neighbour ranks and their weights (or MPI_UNWEIGHTED). */
static int dist_list(const char *fn, tdm_comm_t *c, int n, const int *ranks, const int *weights,
                     const char *what, const char *wwhat) {
    if (n < 0)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "invalid %s count %d (must be >= 0)", what, n);
    if (n == 0)
        return MPI_SUCCESS;
    TDM_CHECK_PTR(fn, c, ranks, what);
    for (int i = 0; i < n; i++)
        if (ranks[i] < 0 || ranks[i] >= c->size)
            return tdm_mpi_err(c, MPI_ERR_RANK, fn, "invalid %s[%d]=%d (communicator of size %d)",
                               what, i, ranks[i], c->size);
    if (weights == MPI_UNWEIGHTED)
        return MPI_SUCCESS;
    if (!weights || weights == MPI_WEIGHTS_EMPTY)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s is %s with %d edges", wwhat,
                           weights ? "MPI_WEIGHTS_EMPTY" : "NULL", n);
    for (int i = 0; i < n; i++)
        if (weights[i] < 0)
            return tdm_mpi_err(c, MPI_ERR_ARG, fn, "invalid %s[%d]=%d (must be >= 0)", wwhat, i,
                               weights[i]);
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph) {
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    tdm_comm_t *c, *nc;
    (void)reorder;
    TDM_GET_COMM(fn, comm_old, c);
    NO_INTER(fn, c);
    TDM_CHECK_PTR(fn, c, comm_dist_graph, "comm_dist_graph");
    TDM_CHECK_INFO(fn, c, info);
    int err = dist_list(fn, c, indegree, sources, sourceweights, "sources", "sourceweights");
    if (!err)
        err = dist_list(fn, c, outdegree, destinations, destweights, "destinations", "destweights");
    if (err)
        return err;
    if ((sourceweights == MPI_UNWEIGHTED) != (destweights == MPI_UNWEIGHTED))
        return tdm_mpi_err(c, MPI_ERR_ARG, fn,
                           "only one of sourceweights and destweights is MPI_UNWEIGHTED");
    bool weighted = sourceweights != MPI_UNWEIGHTED;
    if ((err = split_for(fn, c, 0, c->rank, &nc)))
        return err;
    return publish(fn, c, nc,
                   tdm_topo_dist_new(indegree, sources, weighted && indegree ? sourceweights : NULL,
                                     outdegree, destinations,
                                     weighted && outdegree ? destweights : NULL, weighted),
                   comm_dist_graph);
}
TDM_WEAK(MPI_Dist_graph_create_adjacent)

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph) {
    static const char fn[] = "MPI_Dist_graph_create";
    tdm_comm_t *c, *nc;
    tdm_topo_t *t;
    (void)reorder;
    TDM_GET_COMM(fn, comm_old, c);
    NO_INTER(fn, c);
    TDM_CHECK_PTR(fn, c, comm_dist_graph, "comm_dist_graph");
    TDM_CHECK_INFO(fn, c, info);
    if (n < 0)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "invalid n %d (must be >= 0)", n);
    long long total = 0;
    if (n > 0) {
        TDM_CHECK_PTR(fn, c, sources, "sources");
        TDM_CHECK_PTR(fn, c, degrees, "degrees");
    }
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= c->size)
            return tdm_mpi_err(c, MPI_ERR_RANK, fn,
                               "invalid sources[%d]=%d (communicator of size %d)", i, sources[i],
                               c->size);
        if (degrees[i] < 0)
            return tdm_mpi_err(c, MPI_ERR_ARG, fn, "invalid degrees[%d]=%d (must be >= 0)", i,
                               degrees[i]);
        total += degrees[i];
    }
    if (total > 0x7fffffff / 6)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "too many edges (%lld)", total);
    int err = dist_list(fn, c, (int)total, destinations, weights, "destinations", "weights");
    if (err)
        return err;
    bool weighted = weights != MPI_UNWEIGHTED;
    int rc = tdm_topo_dist_exchange(c, n, sources, degrees, destinations, weights, weighted, &t);
    if (rc != TDM_OK)
        return tdm_mpi_err(c, tdm_mpi_class_of((tdm_rc_t)rc), fn,
                           "the exchange of the graph's edges failed");
    if ((err = split_for(fn, c, 0, c->rank, &nc))) {
        tdm_topo_free(t);
        return err;
    }
    return publish(fn, c, nc, t, comm_dist_graph);
}
TDM_WEAK(MPI_Dist_graph_create)

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted) {
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_DIST_GRAPH, t);
    if (!indegree || !outdegree || !weighted)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s is NULL",
                           !indegree    ? "indegree"
                           : !outdegree ? "outdegree"
                                        : "weighted");
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Dist_graph_neighbors_count)

/* n neighbour ranks into ranks_out, and their weights into w_out if the
 * topology has weights and the caller gave an array for them. */
static void copy_neighbors(const tdm_topo_t *t, int n, const int *ranks, const int *w,
                           int *ranks_out, int *w_out) {
    bool want_w = t->weighted && w_out && w_out != MPI_UNWEIGHTED && w_out != MPI_WEIGHTS_EMPTY;
    for (int i = 0; i < n; i++) {
        ranks_out[i] = ranks[i];
        if (want_w)
            w_out[i] = w[i];
    }
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[]) {
    static const char fn[] = "MPI_Dist_graph_neighbors";
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, TDM_TOPO_DIST_GRAPH, t);
    if (maxindegree < t->indeg || maxoutdegree < t->outdeg)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s %d is below the %s %d",
                           maxindegree < t->indeg ? "maxindegree" : "maxoutdegree",
                           maxindegree < t->indeg ? maxindegree : maxoutdegree,
                           maxindegree < t->indeg ? "indegree" : "outdegree",
                           maxindegree < t->indeg ? t->indeg : t->outdeg);
    if ((t->indeg > 0 && !sources) || (t->outdeg > 0 && !destinations))
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s is NULL", !sources ? "sources" : "destinations");
    copy_neighbors(t, t->indeg, t->in, t->inw, sources, sourceweights);
    copy_neighbors(t, t->outdeg, t->out, t->outw, destinations, destweights);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Dist_graph_neighbors)

int PMPI_Topo_test(MPI_Comm comm, int *status) {
    static const char fn[] = "MPI_Topo_test";
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_PTR(fn, c, status, "status");
    const tdm_topo_t *t = tdm_topo_of(c);
    *status = t ? t->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Topo_test)

/* ---- neighbourhood collectives ---- */

/* One side of a neighbourhood collective as the user gave it: a count and a
 * type (v false), counts and displacements (v), and with w, one type per
 * block and displacements in bytes. */
typedef struct nargs {
    const void *buf;
    MPI_Count count;
    tdm_coll_arr_t counts, displs;
    const MPI_Aint *bdispls;
    MPI_Datatype type;
    const MPI_Datatype *types;
    bool v, w, whole;
} nargs_t;

/* Check one side of n blocks and fill `out` (with w, dts has room for n types). */
static int nside(const char *fn, tdm_comm_t *c, const nargs_t *a, const int *peers, int n,
                 const char *what, tdm_dtype_t **dts, tdm_coll_nside_t *out) {
    if (a->buf == MPI_IN_PLACE)
        return tdm_mpi_err(c, MPI_ERR_BUFFER, fn,
                           "MPI_IN_PLACE is not allowed in a neighbourhood collective (%sbuf)",
                           what);
    *out = (tdm_coll_nside_t){.peers = peers, .n = n, .buf = (void *)a->buf, .whole = a->whole};
    if (a->w) {
        if (n > 0 && !a->types)
            return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%stypes is NULL", what);
        for (int i = 0; i < n; i++)
            TDM_GET_DTYPE(fn, c, a->types[i], dts[i]);
        out->dts = dts;
    } else {
        TDM_GET_DTYPE(fn, c, a->type, out->dt);
    }
    if (a->v) {
        if (n > 0 && (!a->counts.p || (a->w ? !a->bdispls : !a->displs.p)))
            return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%scounts or %sdispls is NULL", what, what);
        for (int i = 0; i < n; i++)
            if (tdm_coll_arr_get(a->counts, i) < 0)
                return tdm_mpi_err(c, MPI_ERR_COUNT, fn, "invalid %scounts[%d]=%lld", what, i,
                                   (long long)tdm_coll_arr_get(a->counts, i));
        out->counts = a->counts;
        out->displs = a->displs;
        out->bdispls = (const ptrdiff_t *)a->bdispls;
    } else {
        if (a->count < 0)
            return tdm_mpi_err(c, MPI_ERR_COUNT, fn, "invalid %scount %lld", what,
                               (long long)a->count);
        if (n > 0)
            TDM_CHECK_BUF(fn, c, a->buf, a->count, out->dt);
        out->count = (size_t)a->count;
    }
    return MPI_SUCCESS;
}

/* The blocking, I- and _init forms of every neighbourhood collective: check,
 * then run now or bind to a persistent request (coll_persist.c, which copies
 * the neighbour lists and arrays: dts and the user's arrays can go at once). */
static int neighbor(const char *fn, MPI_Comm comm, const nargs_t *sa, const nargs_t *ra,
                    MPI_Request *request, tdm_mpi_call_mode_t mode) {
    tdm_comm_t *c;
    tdm_topo_t *t;
    TDM_GET_COMM(fn, comm, c);
    GET_TOPO(fn, c, 0, t);
    if (mode != TDM_CALL_BLOCKING && !request)
        return tdm_mpi_err(c, MPI_ERR_REQUEST, fn, "request argument is NULL");
    tdm_dtype_t **dts = NULL;
    if (sa->w && t->indeg + t->outdeg > 0 &&
        !(dts = malloc((size_t)(t->indeg + t->outdeg) * sizeof(*dts))))
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
    tdm_coll_nside_t s, r;
    int err = nside(fn, c, sa, t->out, t->outdeg, "send", dts, &s);
    if (!err)
        err = nside(fn, c, ra, t->in, t->indeg, "recv", dts ? dts + t->outdeg : NULL, &r);
    if (err) {
        free(dts);
        return err;
    }
    tdm_coll_call_t cc = {
        .kind = TDM_COLL_CALL_NEIGHBOR, .nsend = s, .nrecv = r, .cart = t->kind == TDM_TOPO_CART};
    if (mode == TDM_CALL_PERSISTENT) {
        err = tdm_mpi_coll_persist_init(c, fn, &cc, request);
        free(dts);
        return err;
    }
    tdm_req_t *req = NULL;
    /* the schedule holds its own references to the types: dts can go at once */
    int rc = tdm_coll_call_run(c, &cc, mode == TDM_CALL_NONBLOCKING ? &req : NULL);
    free(dts);
    if (TDM_UNLIKELY(rc != TDM_OK)) {
        if (rc == TDM_ERR_TRUNCATE)
            return tdm_mpi_err(c, MPI_ERR_TRUNCATE, fn,
                               "a neighbour's message is longer than its receive block "
                               "(counts or types do not match across ranks)");
        return tdm_mpi_err(c, tdm_mpi_class_of((tdm_rc_t)rc), fn, "collective failed");
    }
    if (request)
        *request = tdm_req_handle(req);
    return MPI_SUCCESS;
}

/* Each collective's blocking, non-blocking and persistent bindings, for the
 * int and the large-count forms (TDM_MPI_COUNT_FORMS: _s empty or _c, _C int
 * or MPI_Count, _D int or MPI_Aint): _SIG its parameters, _S and _R the two
 * sides it describes. */
#define NEIGHBOR_PAIR(_Name, _s, _SIG, _S, _R)                                                     \
    int PMPI_Neighbor_##_Name##_s _SIG {                                                           \
        nargs_t sa = _S, ra = _R;                                                                  \
        return neighbor("MPI_Neighbor_" #_Name #_s, comm, &sa, &ra, NULL, TDM_CALL_BLOCKING);      \
    }                                                                                              \
    TDM_WEAK(MPI_Neighbor_##_Name##_s)

#define INEIGHBOR(_Name, _s, _SIG, _S, _R)                                                         \
    int PMPI_Ineighbor_##_Name##_s _SIG {                                                          \
        nargs_t sa = _S, ra = _R;                                                                  \
        return neighbor("MPI_Ineighbor_" #_Name #_s, comm, &sa, &ra, request,                      \
                        TDM_CALL_NONBLOCKING);                                                     \
    }                                                                                              \
    TDM_WEAK(MPI_Ineighbor_##_Name##_s)

#define NEIGHBOR_INIT(_Name, _s, _SIG, _S, _R)                                                     \
    int PMPI_Neighbor_##_Name##_init##_s _SIG {                                                    \
        static const char fn_[] = "MPI_Neighbor_" #_Name "_init" #_s;                              \
        int err_ = tdm_mpi_coll_check_info(fn_, comm, info);                                       \
        if (err_)                                                                                  \
            return err_;                                                                           \
        nargs_t sa = _S, ra = _R;                                                                  \
        return neighbor(fn_, comm, &sa, &ra, request, TDM_CALL_PERSISTENT);                        \
    }                                                                                              \
    TDM_WEAK(MPI_Neighbor_##_Name##_init##_s)

#define NEIGHBOR_FORMS(_Name, _s, _SIG, _S, _R)                                                    \
    NEIGHBOR_PAIR(_Name, _s, (_SIG), P(_S), P(_R))                                                 \
    INEIGHBOR(_Name, _s, (_SIG, MPI_Request * request), P(_S), P(_R))                              \
    NEIGHBOR_INIT(_Name, _s, (_SIG, MPI_Info info, MPI_Request * request), P(_S), P(_R))

#define P(...) __VA_ARGS__

#define AG_S                                                                                       \
    { .buf = sendbuf, .count = sendcount, .type = sendtype, .whole = true }
#define AG_R                                                                                       \
    { .buf = recvbuf, .count = recvcount, .type = recvtype }
#define AG_SIG(_C)                                                                                 \
    const void *sendbuf, _C sendcount, MPI_Datatype sendtype, void *recvbuf, _C recvcount,         \
        MPI_Datatype recvtype, MPI_Comm comm

#define AGV_R                                                                                      \
    {                                                                                              \
        .buf = recvbuf, .counts = TDM_MPI_ARR(recvcounts), .displs = TDM_MPI_ARR(displs),          \
        .type = recvtype, .v = true                                                                \
    }
#define AGV_SIG(_C, _D)                                                                            \
    const void *sendbuf, _C sendcount, MPI_Datatype sendtype, void *recvbuf,                       \
        const _C recvcounts[], const _D displs[], MPI_Datatype recvtype, MPI_Comm comm

#define AA_S                                                                                       \
    { .buf = sendbuf, .count = sendcount, .type = sendtype }

#define AAV_S                                                                                      \
    {                                                                                              \
        .buf = sendbuf, .counts = TDM_MPI_ARR(sendcounts), .displs = TDM_MPI_ARR(sdispls),         \
        .type = sendtype, .v = true                                                                \
    }
#define AAV_R                                                                                      \
    {                                                                                              \
        .buf = recvbuf, .counts = TDM_MPI_ARR(recvcounts), .displs = TDM_MPI_ARR(rdispls),         \
        .type = recvtype, .v = true                                                                \
    }
#define AAV_SIG(_C, _D)                                                                            \
    const void *sendbuf, const _C sendcounts[], const _D sdispls[], MPI_Datatype sendtype,         \
        void *recvbuf, const _C recvcounts[], const _D rdispls[], MPI_Datatype recvtype,           \
        MPI_Comm comm

/* Neighbor_alltoallw's displacements are MPI_Aint in both forms */
#define AAW_S                                                                                      \
    {                                                                                              \
        .buf = sendbuf, .counts = TDM_MPI_ARR(sendcounts), .bdispls = sdispls, .types = sendtypes, \
        .v = true, .w = true                                                                       \
    }
#define AAW_R                                                                                      \
    {                                                                                              \
        .buf = recvbuf, .counts = TDM_MPI_ARR(recvcounts), .bdispls = rdispls, .types = recvtypes, \
        .v = true, .w = true                                                                       \
    }
#define AAW_SIG(_C)                                                                                \
    const void *sendbuf, const _C sendcounts[], const MPI_Aint sdispls[],                          \
        const MPI_Datatype sendtypes[], void *recvbuf, const _C recvcounts[],                      \
        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm

#define ALL_NEIGHBOR_FORMS(_s, _C, _D)                                                             \
    NEIGHBOR_FORMS(allgather, _s, P(AG_SIG(_C)), P(AG_S), P(AG_R))                                 \
    NEIGHBOR_FORMS(allgatherv, _s, P(AGV_SIG(_C, _D)), P(AG_S), P(AGV_R))                          \
    NEIGHBOR_FORMS(alltoall, _s, P(AG_SIG(_C)), P(AA_S), P(AG_R))                                  \
    NEIGHBOR_FORMS(alltoallv, _s, P(AAV_SIG(_C, _D)), P(AAV_S), P(AAV_R))                          \
    NEIGHBOR_FORMS(alltoallw, _s, P(AAW_SIG(_C)), P(AAW_S), P(AAW_R))
TDM_MPI_COUNT_FORMS(ALL_NEIGHBOR_FORMS)
