/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective bindings on intercommunicators (coll_inter.c): coll.c's bindings
 * call these, with their own arguments and call mode (blocking, I- or _init
 * form), once they see comm->inter. */
#ifndef TDM_MPI_COLL_INTER_H
#define TDM_MPI_COLL_INTER_H

#include "bind.h"
#include "coll_persist.h"

int tdm_mpi_inter_barrier(tdm_comm_t *c, MPI_Request *request, const char *fn,
                          tdm_mpi_call_mode_t mode);
int tdm_mpi_inter_bcast(tdm_comm_t *c, void *buf, MPI_Count count, MPI_Datatype datatype, int root,
                        MPI_Request *request, const char *fn, tdm_mpi_call_mode_t mode);
int tdm_mpi_inter_reduce(tdm_comm_t *c, const void *sbuf, void *rbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, int root, MPI_Request *request,
                         const char *fn, tdm_mpi_call_mode_t mode);
int tdm_mpi_inter_allreduce(tdm_comm_t *c, const void *sbuf, void *rbuf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Request *request, const char *fn,
                            tdm_mpi_call_mode_t mode);
int tdm_mpi_inter_red_scatter(tdm_comm_t *c, const void *sbuf, void *rbuf, tdm_coll_arr_t rcounts,
                              MPI_Count rcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Request *request, const char *fn, tdm_mpi_call_mode_t mode);
int tdm_mpi_inter_gather(tdm_comm_t *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                         void *rbuf, MPI_Count rcount, tdm_coll_arr_t rcounts,
                         tdm_coll_arr_t displs, MPI_Datatype rtype, int root, MPI_Request *request,
                         const char *fn, tdm_mpi_call_mode_t mode, bool v);
int tdm_mpi_inter_scatter(tdm_comm_t *c, const void *sbuf, MPI_Count scount, tdm_coll_arr_t scounts,
                          tdm_coll_arr_t displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                          MPI_Datatype rtype, int root, MPI_Request *request, const char *fn,
                          tdm_mpi_call_mode_t mode, bool v);
int tdm_mpi_inter_allgather(tdm_comm_t *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                            void *rbuf, MPI_Count rcount, tdm_coll_arr_t rcounts,
                            tdm_coll_arr_t displs, MPI_Datatype rtype, MPI_Request *request,
                            const char *fn, tdm_mpi_call_mode_t mode, bool v);
int tdm_mpi_inter_alltoall(tdm_comm_t *c, const void *sbuf, MPI_Count scount,
                           tdm_coll_arr_t scounts, tdm_coll_arr_t sdispls, MPI_Datatype stype,
                           const MPI_Datatype *stypes, void *rbuf, MPI_Count rcount,
                           tdm_coll_arr_t rcounts, tdm_coll_arr_t rdispls, MPI_Datatype rtype,
                           const MPI_Datatype *rtypes, MPI_Request *request, const char *fn,
                           tdm_mpi_call_mode_t mode, int form);

#endif
