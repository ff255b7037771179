/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives over Tandem's point-to-point engine, as the bindings see them.
 *
 * Every collective is built as a schedule (sched.c): a list of rounds, each a
 * set of p2p sends/receives and local copy/reduce steps that all complete
 * before the next round starts. A blocking collective builds the schedule,
 * runs it and waits (its receives are posted as blocking ones and its sends
 * in blocking mode, except sends a root posts ahead to many peers, so the
 * rendezvous selection sees the call types MPI_Bcast/MPI_Scatter would have);
 * a non-blocking one returns a TDM_REQ_OTHER request that completes when the
 * last round does, advanced from the completion hooks of its p2p requests.
 *
 * Messages go on the collective context (comm->ctx + 1) with a tag >= 0 taken
 * from a per-communicator sequence number, so consecutive collectives on one
 * communicator never match each other's messages.
 *
 * Algorithms are chosen in one place (select.c) by size and message bytes,
 * overridable per collective with TANDEM_<COLL>_ALGORITHM.
 *
 * Arguments are checked by the bindings; the builders here assume them valid.
 * Buffers follow MPI conventions; `in_place` flags stand for MPI_IN_PLACE.
 */
#ifndef TDM_COLL_H
#define TDM_COLL_H

#include "../comm/comm.h"
#include "../dtype/dtype.h"
#include "../p2p/p2p.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* MPI_IN_PLACE: the same value as in mpi.h (bindings pass it through) */
#define TDM_COLL_IN_PLACE ((void *)-1)

/* ---- reduction operations (op.c) ---- */

typedef struct tdm_op {
    int handle;
    int refs;        /* user handle + operations in flight */
    uint8_t commute; /* commutative */
    uint8_t predefined;
    uint8_t large; /* user function takes MPI_Count *len (MPI_Op_create_c) */
    uint8_t freed; /* MPI_Op_free was called */
    int code;      /* predefined: 1..14 (low bits of the handle) */
    void *fn;      /* user function */
} tdm_op_t;

/* Predefined op codes (the low byte of their MPICH handles). */
enum {
    TDM_OP_MAX = 1,
    TDM_OP_MIN,
    TDM_OP_SUM,
    TDM_OP_PROD,
    TDM_OP_LAND,
    TDM_OP_BAND,
    TDM_OP_LOR,
    TDM_OP_BOR,
    TDM_OP_LXOR,
    TDM_OP_BXOR,
    TDM_OP_MINLOC,
    TDM_OP_MAXLOC,
    TDM_OP_REPLACE,
    TDM_OP_NO_OP,
    TDM_OP_LAST = TDM_OP_NO_OP
};

/* The op a handle names, or NULL. */
tdm_op_t *tdm_op_get(int handle);
/* New user op with one reference; handle 0x98000000|index. NULL on ENOMEM. */
tdm_op_t *tdm_op_create(void *fn, int commute, int large);
/* Drop the user's reference. */
void tdm_op_free(tdm_op_t *op);
void tdm_op_retain(tdm_op_t *op);
void tdm_op_release(tdm_op_t *op);
/* The references a schedule step or a bound call holds on its datatypes and op (each may
 * be NULL). */
static inline void tdm_coll_refs_release(tdm_dtype_t *sdt, tdm_dtype_t *rdt, tdm_op_t *op) {
    if (sdt)
        tdm_dtype_release(sdt);
    if (rdt)
        tdm_dtype_release(rdt);
    if (op)
        tdm_op_release(op);
}
/* Can `op` reduce data of type dt (predefined ops: dt made of one basic type
 * the op is defined on)? User ops accept every type. */
bool tdm_op_valid_for(const tdm_op_t *op, const tdm_dtype_t *dt);
/* inout[i] = in[i] op inout[i] for `count` items of dt laid out as in a user
 * buffer (both buffers). */
void tdm_op_apply(const tdm_op_t *op, const void *in, void *inout, size_t count, tdm_dtype_t *dt);
const char *tdm_op_name(const tdm_op_t *op);
/* inout[i] = in[i] op inout[i] for n packed elements of predefined type `basic` and
 * predefined op `code` (1..12); false when the op is not defined on the type
 * (one-sided accumulates, element by element). */
bool tdm_op_reduce_basic(int code, int basic, const void *in, void *inout, size_t n);
/* 1: `basic` is a two's-complement integer type; 2: floating point; 0: anything else. */
int tdm_op_basic_class(int basic);

/* ---- per-rank count and displacement arrays ---- */

/* An array of counts or displacements as the user passed it, read in place:
 * int elements (the classic bindings) or 64-bit ones (MPI_Count counts and
 * MPI_Aint displacements of the MPI-4 large-count _c bindings), so neither
 * form converts or copies an array per call. `p` NULL: no array (the
 * fixed-count forms). The owner is the caller, with the lifetime MPI gives
 * the user's array (a schedule reads it while it is built). */
typedef struct tdm_coll_arr {
    const void *p;
    bool wide; /* int64_t-sized elements, else int */
} tdm_coll_arr_t;

#define TDM_COLL_ARR_NONE ((tdm_coll_arr_t){.p = NULL, .wide = false})
/* An int array (internal callers). */
#define TDM_COLL_INTS(_a) ((tdm_coll_arr_t){.p = (const int *)(_a), .wide = false})

static inline int64_t tdm_coll_arr_get(tdm_coll_arr_t a, int i) {
    if (a.wide) {
        /* memcpy: one load, whatever 64-bit type the caller's elements
         * have (MPI_Count, MPI_Aint, int64_t), without breaking aliasing rules */
        int64_t v;
        memcpy(&v, (const char *)a.p + (size_t)i * sizeof(v), sizeof(v));
        return v;
    }
    return ((const int *)a.p)[i];
}
/* Count i of `counts`, or `fixed` without the array. */
static inline size_t tdm_coll_count_of(tdm_coll_arr_t counts, size_t fixed, int i) {
    return counts.p ? (size_t)tdm_coll_arr_get(counts, i) : fixed;
}
/* Displacement i of `displs` in items, or i * fixed without the array (a
 * negative one wraps and comes back negative in tdm_coll_at's arithmetic). */
static inline size_t tdm_coll_disp_of(tdm_coll_arr_t displs, size_t fixed, int i) {
    return displs.p ? (size_t)tdm_coll_arr_get(displs, i) : (size_t)i * fixed;
}

/* ---- collectives (each file of coll/ builds one family) ---- */

typedef struct tdm_sched tdm_sched_t;

/* Result of starting a collective: 0 or an internal tdm_rc_t. With req_p NULL
 * the call blocks until done; otherwise *req_p receives a TDM_REQ_OTHER
 * request that completes with the collective. */
#define TDM_COLL_ARGS tdm_comm_t *comm, tdm_req_t **req_p

int tdm_coll_barrier(TDM_COLL_ARGS);
int tdm_coll_bcast(void *buf, size_t count, tdm_dtype_t *dt, int root, TDM_COLL_ARGS);
int tdm_coll_reduce(const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt, tdm_op_t *op,
                    int root, TDM_COLL_ARGS);
int tdm_coll_allreduce(const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt, tdm_op_t *op,
                       TDM_COLL_ARGS);
/* Gather/Scatter: rcounts/displs absent (.p NULL) for the fixed-count forms (rcount used);
 * `fixed` says which form it is at every rank (only the fixed one may run node-aware). */
int tdm_coll_gatherv(const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                     tdm_coll_arr_t rcounts, tdm_coll_arr_t displs, size_t rcount, tdm_dtype_t *rdt,
                     int root, bool fixed, TDM_COLL_ARGS);
int tdm_coll_scatterv(const void *sbuf, tdm_coll_arr_t scounts, tdm_coll_arr_t displs,
                      size_t scount, tdm_dtype_t *sdt, void *rbuf, size_t rcount, tdm_dtype_t *rdt,
                      int root, bool fixed, TDM_COLL_ARGS);
int tdm_coll_allgatherv(const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                        tdm_coll_arr_t rcounts, tdm_coll_arr_t displs, size_t rcount,
                        tdm_dtype_t *rdt, TDM_COLL_ARGS);
/* Alltoall(v/w): counts/displs absent for the fixed form; sdts/rdts non-NULL for
 * Alltoallw (displacements then in bytes). */
int tdm_coll_alltoallw(const void *sbuf, tdm_coll_arr_t scounts, tdm_coll_arr_t sdispls,
                       tdm_dtype_t *const *sdts, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                       tdm_coll_arr_t rcounts, tdm_coll_arr_t rdispls, tdm_dtype_t *const *rdts,
                       size_t rcount, tdm_dtype_t *rdt, TDM_COLL_ARGS);
/* Reduce_scatter: rcounts absent for the _block form (rcount each). */
int tdm_coll_reduce_scatter(const void *sbuf, void *rbuf, tdm_coll_arr_t rcounts, size_t rcount,
                            tdm_dtype_t *dt, tdm_op_t *op, TDM_COLL_ARGS);
int tdm_coll_scan(const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt, tdm_op_t *op,
                  bool exclusive, TDM_COLL_ARGS);

/* Neighbourhood collectives (neighbor.c). The caller receives from in[0..indeg-1]
 * and sends to out[0..outdeg-1], in the topology's order; a -1 (MPI_PROC_NULL)
 * neighbour keeps its buffer slot but moves no data. `cart` says the lists are
 * Cartesian (-1 then +1 neighbour of each dimension): the receives of a pair
 * are then posted +1 first, so that when both neighbours are one process (a
 * periodic dimension of size 1 or 2) block 2d it sends, meant for the
 * neighbour's slot 2d+1, lands there. Block i of a side: counts[i] (absent:
 * `count`) items of dts[i] (NULL: `dt`) at bdispls[i] bytes (NULL: displs[i]
 * extents, absent: i * count extents) from buf; `whole` sends the same buffer
 * to every neighbour (Neighbor_allgather(v)). */
typedef struct tdm_coll_nside {
    const int *peers;
    int n;
    void *buf;
    tdm_coll_arr_t counts;
    tdm_coll_arr_t displs;
    const ptrdiff_t *bdispls;
    tdm_dtype_t *const *dts;
    size_t count;
    tdm_dtype_t *dt;
    bool whole;
} tdm_coll_nside_t;
int tdm_coll_neighbor(const tdm_coll_nside_t *send, const tdm_coll_nside_t *recv, bool cart,
                      TDM_COLL_ARGS);

/* The communicator's next collective tag (tags >= 0 on ctx + 1): the bound
 * one if tdm_coll_bind_tag set it, else the next of the blocking or of the
 * non-blocking collectives' sequence (the two never match each other).
 * -1 when out of memory. */
int tdm_coll_next_tag(tdm_comm_t *comm, bool blocking);
/* Persistent collectives (sched.c says why): a tag of their own, taken by the
 * init call in init order on every rank (-1 when out of memory) ... */
int tdm_coll_persist_tag(tdm_comm_t *comm);
/* ... and given to the schedule each start builds: the next schedule built on
 * comm takes `tag`. 0, or -1 when out of memory. */
int tdm_coll_bind_tag(tdm_comm_t *comm, int tag);

#endif
