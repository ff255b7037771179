/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one place that picks a collective's algorithm (select.c), and the
 * algorithms it picks from. Each algorithm appends its steps to a schedule.
 */
#ifndef TDM_COLL_SELECT_H
#define TDM_COLL_SELECT_H

#include "sched.h"
#include "../base/pvar.h"

typedef enum {
    TDM_COLL_BCAST,
    TDM_COLL_REDUCE,
    TDM_COLL_ALLREDUCE,
    TDM_COLL_ALLGATHER,
    TDM_COLL_ALLTOALL,
    TDM_COLL_BARRIER,
    /* node-aware only: no flat chooser (Gather(v) and Scatter(v) are linear, Allgatherv
     * takes Allgather's algorithm), but a node-aware form and its counters */
    TDM_COLL_GATHER,
    TDM_COLL_SCATTER,
    TDM_COLL_ALLGATHERV,
    TDM_COLL_GATHERV,
    TDM_COLL_SCATTERV,
    TDM_COLL_NKINDS
} tdm_coll_kind_t;
/* The kinds before it have a flat algorithm chooser (tdm_coll_choose). */
#define TDM_COLL_NFLAT TDM_COLL_GATHER

/* Algorithm ids: 0 is each collective's small-message algorithm, 1 its large one,
 * 2 (where there is one) the linear one auto takes for small messages when ranks
 * outnumber cores. */
enum {
    TDM_BCAST_BINOMIAL = 0,
    TDM_BCAST_SCATTER_RING = 1,
    TDM_BCAST_LINEAR = 2,
    TDM_REDUCE_BINOMIAL = 0,
    TDM_REDUCE_SCATTER_GATHER = 1,
    TDM_REDUCE_LINEAR = 2,
    TDM_ALLREDUCE_RECDBL = 0,
    TDM_ALLREDUCE_RING = 1,
    TDM_ALLREDUCE_LINEAR = 2,
    TDM_ALLGATHER_BRUCK = 0,
    TDM_ALLGATHER_RING = 1,
    TDM_ALLGATHER_LINEAR = 2,
    TDM_ALLTOALL_LINEAR = 0,
    TDM_ALLTOALL_PAIRWISE = 1,
    TDM_BARRIER_DISSEMINATION = 0,
    TDM_BARRIER_LINEAR = 1,
};

/* bytes: the whole buffer (bcast, reduce, allreduce) or one rank's block
 * (allgather, alltoall); 0 for barrier. `commute`: the op is commutative
 * (reductions). */
int tdm_coll_choose(tdm_coll_kind_t kind, size_t bytes, int comm_size, bool commute);

/* The decision of tdm_coll_choose without counting it: the algorithm of one step of a
 * node-aware collective, over `comm_size` ranks of a node or leaders. */
int tdm_coll_decide(tdm_coll_kind_t kind, size_t bytes, int comm_size, bool commute);

/* Node-aware collectives (node.c): the node map when `kind` runs hierarchically on comm
 * (TANDEM_COLL_NODE_AWARE; the comm spans several nodes; a non-commutative op needs each
 * node's ranks consecutive), counted as a run of the node-aware algorithm; else NULL
 * and the caller picks a flat algorithm. One load and a branch on a job of one node. */
const tdm_comm_nodes_t *tdm_coll_node_choose(tdm_coll_kind_t kind, tdm_comm_t *comm, size_t bytes,
                                             bool commute);
/* False when no communicator can run node-aware (a job of one node): a caller may skip
 * preparing tdm_coll_node_choose's arguments. */
bool tdm_coll_node_maybe(void);
/* "tandem: MPI_COMM_WORLD spans N nodes ..." naming what runs node-aware on comm
 * (TANDEM_COLL_INFO=1 at MPI_Init, when the job spans several nodes). */
void tdm_coll_node_print(void *f, tdm_comm_t *comm, const char *name);

/* The algorithm TANDEM_<COLL>_ALGORITHM forces (0, 1 or 2), or -1 for auto. */
int tdm_coll_forced(tdm_coll_kind_t kind);

/* How often each algorithm ran in this process, and on how many bytes (as
 * tdm_coll_choose sees them); pvars.def declares them. */
#define TDM_COLL_MAX_ALGOS 3
extern unsigned long long tdm_coll_algo_runs[TDM_COLL_NFLAT][TDM_COLL_MAX_ALGOS];
extern unsigned long long tdm_coll_algo_bytes[TDM_COLL_NFLAT][TDM_COLL_MAX_ALGOS];
/* The same for the node-aware algorithm of each kind (never Alltoall). */
extern unsigned long long tdm_coll_node_runs[TDM_COLL_NKINDS];
extern unsigned long long tdm_coll_node_bytes[TDM_COLL_NKINDS];
/* The table of choices for communicator sizes 2..8 and sizes 4 B..4 MiB
 * (TANDEM_COLL_INFO=1 at MPI_Init; the golden test coll_select checks it). */
void tdm_coll_select_print(void *f);
/* "tandem: rank R collective algorithms: bcast binomial N scatter_ring N, ..." */
void tdm_coll_stats_print(int rank);
/* Local copies of 4 MiB and up (sched.c): [0] by memcpy, [1] streamed. */
extern unsigned long long tdm_coll_copies[2];
/* The share of the cache of large temporaries in use (sched.c), 0.0 .. 1.0. */
double tdm_sched_cache_use(int i);

/* The collectives' performance variables (pvars.def), for src/mpit. */
enum {
#define TDM_PVAR(_id, ...) TDM_COLL_PV_##_id,
#include "pvars.def"
#undef TDM_PVAR
    TDM_COLL_PV_COUNT
};
extern const tdm_pvar_desc_t tdm_coll_pvars[TDM_COLL_PV_COUNT];
extern const int tdm_coll_npvars;
/* Parse TANDEM_<COLL>_ALGORITHM again at the next collective (after an MPI_T write). */
void tdm_coll_reconfigure(void);

/* ---- algorithms (one family per file) ---- */
void tdm_coll_barrier_dissemination(tdm_sched_t *s);
void tdm_coll_barrier_linear(tdm_sched_t *s);
void tdm_coll_bcast_binomial(tdm_sched_t *s, void *buf, size_t count, tdm_dtype_t *dt, int root);
void tdm_coll_bcast_scatter_ring(tdm_sched_t *s, void *buf, size_t count, tdm_dtype_t *dt,
                                 int root);
void tdm_coll_bcast_linear(tdm_sched_t *s, void *buf, size_t count, tdm_dtype_t *dt, int root);
/* rbuf significant at root only; sbuf may be TDM_COLL_IN_PLACE at root. */
void tdm_coll_reduce_binomial(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                              tdm_dtype_t *dt, tdm_op_t *op, int root);
void tdm_coll_reduce_scatter_gather(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                                    tdm_dtype_t *dt, tdm_op_t *op, int root);
void tdm_coll_reduce_linear(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                            tdm_dtype_t *dt, tdm_op_t *op, int root);
void tdm_coll_allreduce_recdbl(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                               tdm_dtype_t *dt, tdm_op_t *op);
void tdm_coll_allreduce_ring(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                             tdm_dtype_t *dt, tdm_op_t *op);
void tdm_coll_allreduce_linear(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                               tdm_dtype_t *dt, tdm_op_t *op);
/* Allgatherv by the ring with every rank's block already in place in rbuf. */
void tdm_coll_allgatherv_ring_inplace(tdm_sched_t *s, void *rbuf, tdm_coll_arr_t rcounts,
                                      tdm_coll_arr_t displs, size_t rcount, tdm_dtype_t *rdt);
/* Node-aware forms (node.c): within each node, between the leaders, within each node. */
void tdm_coll_barrier_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm);
void tdm_coll_bcast_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, void *buf, size_t count,
                         tdm_dtype_t *dt, int root);
void tdm_coll_reduce_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const void *sbuf, void *rbuf,
                          size_t count, tdm_dtype_t *dt, tdm_op_t *op, int root);
void tdm_coll_allreduce_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const void *sbuf,
                             void *rbuf, size_t count, tdm_dtype_t *dt, tdm_op_t *op);
/* Fixed counts; sbuf may be TDM_COLL_IN_PLACE. */
void tdm_coll_allgather_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const void *sbuf,
                             size_t scount, tdm_dtype_t *sdt, void *rbuf, size_t rcount,
                             tdm_dtype_t *rdt);
/* A Gather(v) or Scatter(v) as its node-aware form takes it. At the root, rank r's block
 * is tdm_coll_count_of(counts, count, r) items of dt at tdm_coll_disp_of(displs, count, r)
 * in buf (read while the schedule is built); at every rank `own` is its own block (the
 * Gather's send buffer, the Scatter's receive buffer), TDM_COLL_IN_PLACE at a root whose
 * block is in place. Blocks cross between nodes packed (bytes), as only the own block's
 * signature is known away from the root. */
typedef struct tdm_coll_rooted {
    void *buf;
    tdm_coll_arr_t counts, displs; /* absent: `count` each, rank order */
    size_t count;
    tdm_dtype_t *dt;
    void *own;
    size_t own_count;
    tdm_dtype_t *own_dt;
    int root;
    bool fixed;   /* the fixed-count form at every rank: all blocks the size of one's own */
    bool scatter; /* the data leaves the root (Scatter(v)), else it comes to it */
} tdm_coll_rooted_t;
/* Calls tdm_sched_immediate itself (only it knows each rank's largest message). */
void tdm_coll_rooted_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const tdm_coll_rooted_t *c);
/* Any counts and displacements; sbuf may be TDM_COLL_IN_PLACE. */
void tdm_coll_allgatherv_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const void *sbuf,
                              size_t scount, tdm_dtype_t *sdt, void *rbuf, tdm_coll_arr_t rcounts,
                              tdm_coll_arr_t displs, tdm_dtype_t *rdt);
void tdm_coll_scatterv_linear(tdm_sched_t *s, const void *sbuf, tdm_coll_arr_t scounts,
                              tdm_coll_arr_t displs, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                              size_t rcount, tdm_dtype_t *rdt, int root);

#endif
