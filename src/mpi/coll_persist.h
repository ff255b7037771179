/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the collective bindings share (coll.c, coll_inter.c, coll_persist.c,
 * topo.c): how a binding was called, the checks of each family, and the end of
 * every binding, which runs a tdm_coll_call_t (src/coll/persist.h) now or binds
 * it to a persistent request.
 */
#ifndef TDM_MPI_COLL_PERSIST_H
#define TDM_MPI_COLL_PERSIST_H

#include "../coll/persist.h"
#include "bind.h"

/* How a collective binding was called. */
typedef enum {
    TDM_CALL_BLOCKING,
    TDM_CALL_NONBLOCKING, /* I-form: *request receives an active request */
    TDM_CALL_PERSISTENT,  /* _init form: *request receives an inactive persistent one */
} tdm_mpi_call_mode_t;

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

/* The end of every binding's checks (coll.c, coll_inter.c): run cc now
 * (blocking, or *request receives the active request of the I-form) or bind it
 * to a new inactive persistent request (_init forms). An MPI error code,
 * reported through c's handler with fn. */
int tdm_mpi_ccall_submit(tdm_comm_t *c, const char *fn, tdm_mpi_call_mode_t mode,
                         MPI_Request *request, const tdm_coll_call_t *cc);

/* The MPI error (through c's handler) for a collective's failure rc != TDM_OK. */
int tdm_mpi_coll_error(tdm_comm_t *c, const char *fn, int rc);

/* _init forms: bind cc to a new inactive persistent request (src/coll/persist.c). */
int tdm_mpi_coll_persist_init(tdm_comm_t *c, const char *fn, const tdm_coll_call_t *cc,
                              MPI_Request *request);
/* MPI_Start of a persistent collective p (inactive). */
int tdm_mpi_coll_persist_start(tdm_req_t *p, const char *fn);

/* MPI_INFO_NULL or a valid info object (the _init forms' info argument; no
 * hints are used yet). */
int tdm_mpi_coll_check_info(const char *fn, MPI_Comm comm, MPI_Info info);

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
