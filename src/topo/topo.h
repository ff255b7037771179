/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Process topologies (MPI 3.1 chapter 7) as the bindings see them.
 *
 * A topology is a plain object hung on a communicator's `topo` field by
 * tdm_topo_attach(); comm/ copies it on dup and frees it on destruction
 * through the ops tdm_topo_attach() installs (tdm_comm_topo_ops). Every
 * kind also carries the caller's neighbour lists (`in`, `out`) in the order
 * the neighbourhood collectives use (MPI 3.1 §7.6):
 *   Cartesian:  for each dimension d, the source then the destination of a
 *               shift by +1 in d (MPI_PROC_NULL, -1 here too, at an open
 *               border); in == out.
 *   graph:      the caller's row of `edges`; in == out.
 *   dist graph: sources and destinations as given (adjacent) or as learnt
 *               from the edge exchange (dist.c).
 * Ranks are the communicator's. Nothing here communicates except
 * tdm_topo_dist_exchange().
 */
#ifndef TDM_TOPO_H
#define TDM_TOPO_H

#include "../comm/comm.h"

#include <stdbool.h>

/* Kinds: the MPI_Topo_test values of mpi.h. */
enum { TDM_TOPO_GRAPH = 1, TDM_TOPO_CART = 2, TDM_TOPO_DIST_GRAPH = 3 };

#define TDM_TOPO_PROC_NULL (-1) /* MPI_PROC_NULL */

typedef struct tdm_topo {
    int kind;
    /* Cartesian: ndims entries each (coords: the caller's) */
    int ndims;
    int *dims, *periods, *coords;
    /* graph: index[nnodes], edges[nedges] as given to MPI_Graph_create */
    int nnodes, nedges;
    int *index, *edges;
    /* neighbours of the caller (all kinds); weights only for a weighted dist graph */
    int indeg, outdeg;
    int *in, *out;
    int *inw, *outw;
    bool weighted;
} tdm_topo_t;

/* The topology of a communicator, or NULL. */
static inline tdm_topo_t *tdm_topo_of(const tdm_comm_t *c) {
    return (tdm_topo_t *)c->topo;
}

/* Constructors: NULL when out of memory (logged). Arrays are copied. */
/* Cartesian grid; `rank` (< product of dims) gives the caller's coordinates. */
tdm_topo_t *tdm_topo_cart_new(int ndims, const int *dims, const int *periods, int rank);
/* Graph of nnodes nodes; the caller is node `rank` (< nnodes). */
tdm_topo_t *tdm_topo_graph_new(int nnodes, const int *index, const int *edges, int rank);
/* Distributed graph; weights NULL when unweighted (then `weighted` is false). */
tdm_topo_t *tdm_topo_dist_new(int indeg, const int *in, const int *inw, int outdeg, const int *out,
                              const int *outw, bool weighted);
tdm_topo_t *tdm_topo_dup(const tdm_topo_t *t);
void tdm_topo_free(tdm_topo_t *t);
/* Hang t on c (which must have none); c owns it from here. */
void tdm_topo_attach(tdm_comm_t *c, tdm_topo_t *t);

/* ---- Cartesian arithmetic (row-major: the last dimension varies fastest) ---- */
int tdm_topo_cart_size(int ndims, const int *dims);
void tdm_topo_cart_coords(const tdm_topo_t *t, int rank, int *coords);
/* Rank of coords, periodic dimensions wrapped; -1 if a coordinate of a
 * non-periodic dimension is outside the grid. */
int tdm_topo_cart_rank(const tdm_topo_t *t, const int *coords);
/* MPI_Cart_shift for the caller: ranks or -1 (MPI_PROC_NULL). */
void tdm_topo_cart_shift(const tdm_topo_t *t, int dir, int disp, int *src_p, int *dst_p);

/* MPI_Dims_create: fill the zero entries of dims, nonincreasing, with the smallest
 * difference between the largest and the smallest of them (ties: the smallest from
 * the left). 0, or -1 when nnodes is not a multiple of the product of the preset ones
 * (or is not that product when none is zero). */
int tdm_topo_dims_create(int nnodes, int ndims, int *dims);

/* ---- distributed graph edge exchange (dist.c) ----
 * MPI_Dist_graph_create: the caller names n sources, each with degrees[i]
 * destinations (and weights when `weighted`); collectively over c, every
 * process learns the edges that leave and enter it. Ordered by the rank that
 * named the edge, then by its position there, so the result is deterministic.
 * Returns 0 and the new topology, or an internal error code (tdm_rc_t). */
int tdm_topo_dist_exchange(tdm_comm_t *c, int n, const int *sources, const int *degrees,
                           const int *dests, const int *weights, bool weighted,
                           tdm_topo_t **topo_p);

#endif
