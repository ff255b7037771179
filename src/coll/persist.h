/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One collective as a value: the bindings build it after their argument checks
 * (src/mpi/coll.c, coll_inter.c, topo.c), so the same checked arguments run now
 * (blocking and I-forms) or are bound to a persistent request and run at every
 * MPI_Start (the _init forms), on intra- and intercommunicators alike.
 */
#ifndef TDM_COLL_PERSIST_H
#define TDM_COLL_PERSIST_H

#include "coll.h"
#include "inter.h"

typedef enum {
    TDM_COLL_CALL_BARRIER,
    TDM_COLL_CALL_BCAST,          /* rbuf, rcount, rdt, root */
    TDM_COLL_CALL_REDUCE,         /* sbuf, rbuf, rcount, rdt, op, root */
    TDM_COLL_CALL_ALLREDUCE,      /* sbuf, rbuf, rcount, rdt, op */
    TDM_COLL_CALL_SCAN,           /* sbuf, rbuf, rcount, rdt, op, exclusive */
    TDM_COLL_CALL_GATHERV,        /* sbuf, scount, sdt, rbuf, rcounts, rdispls, rcount, rdt, root */
    TDM_COLL_CALL_SCATTERV,       /* sbuf, scounts, sdispls, scount, sdt, rbuf, rcount, rdt, root */
    TDM_COLL_CALL_ALLGATHERV,     /* sbuf, scount, sdt, rbuf, rcounts, rdispls, rcount, rdt */
    TDM_COLL_CALL_ALLTOALLW,      /* everything but op and root */
    TDM_COLL_CALL_REDUCE_SCATTER, /* sbuf, rbuf, rcounts, rcount, rdt, op */
    TDM_COLL_CALL_NEIGHBOR,       /* nsend, nrecv, cart: all five Neighbor_* forms */
} tdm_coll_call_kind_t;

/* The arguments of the tdm_coll_* entry point of `kind` (coll.h), as coll.c
 * passes them, or on an intercommunicator (the communicator says which) of its
 * tdm_coll_inter_* entry point (coll/inter.h), as coll_inter.c passes them.
 * Arrays have the communicator's size; on an intercommunicator the remote
 * group's, except Reduce_scatter's rcounts (the local group's). They are absent
 * where coll.h says so (fixed-count forms) or where they are not significant
 * at this rank (an intercommunicator's root is then MPI_ROOT, MPI_PROC_NULL or
 * a remote rank, as inter.h says, and the datatypes not significant may be
 * NULL). SCAN and NEIGHBOR exist on intracommunicators only. The
 * neighbourhood kind uses only nsend, nrecv and cart (tdm_coll_neighbor's
 * arguments): their arrays have nsend.n (out-degree) and nrecv.n (in-degree)
 * entries, and the datatypes of the other fields stay NULL. */
typedef struct tdm_mpi_ccall {
    tdm_coll_call_kind_t kind;
    const void *sbuf;
    void *rbuf;
    size_t scount, rcount;
    tdm_dtype_t *sdt, *rdt;
    tdm_coll_arr_t scounts, sdispls, rcounts, rdispls;
    tdm_dtype_t *const *sdts;
    tdm_dtype_t *const *rdts;
    tdm_op_t *op;
    int root;
    bool fixed; /* GATHERV, SCATTERV: the fixed-count form (a v form's arrays may be absent
                   away from the root, so their absence does not tell) */
    bool exclusive;
    tdm_coll_nside_t nsend, nrecv;
    bool cart;
} tdm_coll_call_t;

/* Start the collective on c (the intercomm builders if c->inter): blocking
 * with req_p NULL, else *req_p receives a request that completes with it. */
int tdm_coll_call_run(tdm_comm_t *c, const tdm_coll_call_t *cc, tdm_req_t **req_p);

/* _init forms: bind a copy of cc (arrays copied, datatypes and op retained) and
 * the communicator's next persistent collective tag to a new inactive persistent
 * request of kind TDM_REQ_OTHER, *req_p. Arguments are checked already. */
tdm_rc_t tdm_coll_persist_init(tdm_comm_t *c, const tdm_coll_call_t *cc, tdm_req_t **req_p);
/* MPI_Start of a persistent collective p (inactive): build a fresh schedule on
 * the tag p took at init, and make it p->inner. */
tdm_rc_t tdm_coll_persist_start(tdm_req_t *p);
/* MPI_Request_free of an inactive persistent collective: release everything. */
void tdm_coll_persist_free(tdm_req_t *p);

#endif
