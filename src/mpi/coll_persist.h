/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One collective as a value (coll.c and coll_inter.c build it after the
 * argument checks, topo.c for the neighbourhood collectives), so the same
 * checked arguments can run now (blocking and I-forms) or be bound to a
 * persistent request and run at every MPI_Start (the *_init forms,
 * coll_persist.c), on intra- and intercommunicators alike.
 */
#ifndef TDM_MPI_COLL_PERSIST_H
#define TDM_MPI_COLL_PERSIST_H

#include "../coll/coll.h"
#include "bind.h"

/* How a collective binding was called. */
typedef enum {
    TDM_CALL_BLOCKING,
    TDM_CALL_NONBLOCKING, /* I-form: *request receives an active request */
    TDM_CALL_PERSISTENT,  /* _init form: *request receives an inactive persistent one */
} tdm_mpi_call_mode_t;

typedef enum {
    TDM_CCALL_BARRIER,
    TDM_CCALL_BCAST,          /* rbuf, rcount, rdt, root */
    TDM_CCALL_REDUCE,         /* sbuf, rbuf, rcount, rdt, op, root */
    TDM_CCALL_ALLREDUCE,      /* sbuf, rbuf, rcount, rdt, op */
    TDM_CCALL_SCAN,           /* sbuf, rbuf, rcount, rdt, op, exclusive */
    TDM_CCALL_GATHERV,        /* sbuf, scount, sdt, rbuf, rcounts, rdispls, rcount, rdt, root */
    TDM_CCALL_SCATTERV,       /* sbuf, scounts, sdispls, scount, sdt, rbuf, rcount, rdt, root */
    TDM_CCALL_ALLGATHERV,     /* sbuf, scount, sdt, rbuf, rcounts, rdispls, rcount, rdt */
    TDM_CCALL_ALLTOALLW,      /* everything but op and root */
    TDM_CCALL_REDUCE_SCATTER, /* sbuf, rbuf, rcounts, rcount, rdt, op */
    TDM_CCALL_NEIGHBOR,       /* nsend, nrecv, cart: all five Neighbor_* forms */
} tdm_mpi_ccall_kind_t;

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
    tdm_mpi_ccall_kind_t kind;
    const void *sbuf;
    void *rbuf;
    size_t scount, rcount;
    tdm_dtype_t *sdt, *rdt;
    tdm_coll_arr_t scounts, sdispls, rcounts, rdispls;
    tdm_dtype_t *const *sdts;
    tdm_dtype_t *const *rdts;
    tdm_op_t *op;
    int root;
    bool exclusive;
    tdm_coll_nside_t nsend, nrecv;
    bool cart;
} tdm_mpi_ccall_t;

/* The user's count or displacement array as src/coll reads it (int in the
 * classic bindings, MPI_Count / MPI_Aint in the large-count _c ones); any
 * other element type does not compile. */
#define TDM_MPI_ARR(_a)                                                                            \
    ((tdm_coll_arr_t){.p = (_a),                                                                   \
                      .wide = _Generic((_a), const int *: false, const MPI_Count *: true)})
/* MPI_Count and MPI_Aint are one type (long) in the MPICH ABI, so the one
 * association serves the _c forms' counts and displacements */
_Static_assert(_Generic((const MPI_Aint *)0, const MPI_Count * : 1, default : 0) &&
                   sizeof(MPI_Count) == sizeof(int64_t),
               "tdm_coll_arr_t reads MPI_Count and MPI_Aint arrays as 64-bit");

/* Start the collective on c (the intercomm builders if c->inter): blocking
 * with req_p NULL, else *req_p receives a request that completes with it. An
 * internal tdm_rc_t. */
int tdm_mpi_ccall_run(tdm_comm_t *c, const tdm_mpi_ccall_t *cc, tdm_req_t **req_p);

/* The end of every binding's checks (coll.c, coll_inter.c): run cc now
 * (blocking, or *request receives the active request of the I-form) or bind it
 * to a new inactive persistent request (_init forms). An MPI error code,
 * reported through c's handler with fn. */
int tdm_mpi_ccall_submit(tdm_comm_t *c, const char *fn, tdm_mpi_call_mode_t mode,
                         MPI_Request *request, const tdm_mpi_ccall_t *cc);

/* The MPI error (through c's handler) for a collective's failure rc != TDM_OK. */
int tdm_mpi_coll_error(tdm_comm_t *c, const char *fn, int rc);

/* MPI_INFO_NULL or a valid info object (the _init forms' info argument; no
 * hints are used yet). */
int tdm_mpi_coll_check_info(const char *fn, MPI_Comm comm, MPI_Info info);

/* _init forms: bind a copy of cc (arrays copied, datatypes and op retained) and
 * the communicator's next persistent collective tag to a new inactive
 * persistent request. Arguments are checked already. */
int tdm_mpi_coll_persist_init(tdm_comm_t *c, const char *fn, const tdm_mpi_ccall_t *cc,
                              MPI_Request *request);
/* MPI_Start of a persistent collective p (inactive): build a fresh schedule on
 * the tag p took at init, and make it p->inner. */
int tdm_mpi_coll_persist_start(tdm_req_t *p, const char *fn);
/* MPI_Request_free of an inactive persistent collective: release everything. */
void tdm_mpi_coll_persist_free(tdm_req_t *p);

/* The shared checks of coll.c, one per family (fn names the call for errors). */
int tdm_mpi_coll_barrier(MPI_Comm comm, MPI_Request *request, const char *fn,
                         tdm_mpi_call_mode_t mode);
int tdm_mpi_coll_bcast(void *buf, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                       MPI_Request *request, const char *fn, tdm_mpi_call_mode_t mode);
int tdm_mpi_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op, int root, MPI_Comm comm, MPI_Request *request, const char *fn,
                        tdm_mpi_call_mode_t mode);
int tdm_mpi_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request, const char *fn,
                           tdm_mpi_call_mode_t mode);
int tdm_mpi_coll_scan(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Request *request, const char *fn,
                      tdm_mpi_call_mode_t mode, bool exclusive);
int tdm_mpi_coll_red_scatter(const void *sbuf, void *rbuf, tdm_coll_arr_t rcounts, MPI_Count rcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request,
                             const char *fn, tdm_mpi_call_mode_t mode);
int tdm_mpi_coll_gather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                        MPI_Count rcount, tdm_coll_arr_t rcounts, tdm_coll_arr_t displs,
                        MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request,
                        const char *fn, tdm_mpi_call_mode_t mode, bool v);
int tdm_mpi_coll_scatter(const void *sbuf, MPI_Count scount, tdm_coll_arr_t scounts,
                         tdm_coll_arr_t displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                         MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request,
                         const char *fn, tdm_mpi_call_mode_t mode, bool v);
int tdm_mpi_coll_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                           MPI_Count rcount, tdm_coll_arr_t rcounts, tdm_coll_arr_t displs,
                           MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request, const char *fn,
                           tdm_mpi_call_mode_t mode, bool v);
int tdm_mpi_coll_alltoall(const void *sbuf, MPI_Count scount, tdm_coll_arr_t scounts,
                          tdm_coll_arr_t sdispls, MPI_Datatype stype, const MPI_Datatype *stypes,
                          void *rbuf, MPI_Count rcount, tdm_coll_arr_t rcounts,
                          tdm_coll_arr_t rdispls, MPI_Datatype rtype, const MPI_Datatype *rtypes,
                          MPI_Comm comm, MPI_Request *request, const char *fn,
                          tdm_mpi_call_mode_t mode, int form);

#endif
