/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives on intercommunicators (MPI-3.1 §5.2.2, inter.c), as the bindings
 * call them when comm->inter is set. Same conventions as coll.h (0 or a
 * tdm_rc_t; req_p NULL blocks), with the two-group meanings:
 *  - rooted ones: `root` is TDM_COLL_ROOT at the root, TDM_PROC_NULL at the
 *    other processes of the root's group, and the root's rank in the remote
 *    group at every process of the other group; arguments not significant at a
 *    process may be NULL there;
 *  - the others: every process sends to and receives from the remote group;
 *    per-peer counts/displacements/types index remote ranks, except
 *    Reduce_scatter's recvcounts, which index the local group.
 * MPI_IN_PLACE is never allowed (the bindings refuse it).
 */
#ifndef TDM_COLL_INTER_H
#define TDM_COLL_INTER_H

#include "coll.h"

#define TDM_COLL_ROOT (-3) /* MPI_ROOT */

int tdm_coll_inter_barrier(TDM_COLL_ARGS);
int tdm_coll_inter_bcast(void *buf, size_t count, tdm_dtype_t *dt, int root, TDM_COLL_ARGS);
int tdm_coll_inter_reduce(const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt, tdm_op_t *op,
                          int root, TDM_COLL_ARGS);
int tdm_coll_inter_allreduce(const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt,
                             tdm_op_t *op, TDM_COLL_ARGS);
int tdm_coll_inter_gatherv(const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                           tdm_coll_arr_t rcounts, tdm_coll_arr_t displs, size_t rcount,
                           tdm_dtype_t *rdt, int root, TDM_COLL_ARGS);
int tdm_coll_inter_scatterv(const void *sbuf, tdm_coll_arr_t scounts, tdm_coll_arr_t displs,
                            size_t scount, tdm_dtype_t *sdt, void *rbuf, size_t rcount,
                            tdm_dtype_t *rdt, int root, TDM_COLL_ARGS);
int tdm_coll_inter_allgatherv(const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                              tdm_coll_arr_t rcounts, tdm_coll_arr_t displs, size_t rcount,
                              tdm_dtype_t *rdt, TDM_COLL_ARGS);
int tdm_coll_inter_alltoallw(const void *sbuf, tdm_coll_arr_t scounts, tdm_coll_arr_t sdispls,
                             tdm_dtype_t *const *sdts, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                             tdm_coll_arr_t rcounts, tdm_coll_arr_t rdispls,
                             tdm_dtype_t *const *rdts, size_t rcount, tdm_dtype_t *rdt,
                             TDM_COLL_ARGS);
int tdm_coll_inter_reduce_scatter(const void *sbuf, void *rbuf, tdm_coll_arr_t rcounts,
                                  size_t rcount, tdm_dtype_t *dt, tdm_op_t *op, TDM_COLL_ARGS);

#endif
