/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective bindings on intercommunicators (MPI-3.1 §5.2.2): the argument
 * checks of the two-group forms, then src/coll/inter.c. Rooted collectives
 * take MPI_ROOT, MPI_PROC_NULL or a rank of the remote group as root, and only
 * the arguments significant at the caller are checked. Per-peer arrays have an
 * entry per remote rank (Reduce_scatter's recvcounts: per local rank).
 * MPI_IN_PLACE is not defined on intercommunicators. The checks end in a
 * tdm_coll_call_t, as coll.c's do, so the blocking, I- and _init forms share
 * one path (tdm_mpi_ccall_submit, which dispatches to src/coll/inter.c).
 */
#include "coll_inter.h"

#include "../coll/inter.h"

#include <stdlib.h>

_Static_assert(MPI_ROOT == TDM_COLL_ROOT, "MPI_ROOT value shared with coll/");

static int check_root(tdm_comm_t *c, const char *fn, int root) {
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->remote.n))
        return MPI_SUCCESS;
    return tdm_mpi_err(c, MPI_ERR_ROOT, fn,
                       "invalid root %d (on an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a "
                       "rank of the remote group, of size %d)",
                       root, c->remote.n);
}

/* n counts (and displacements, if displs_too) of a per-peer array argument. */
static int check_counts(tdm_comm_t *c, const char *fn, tdm_coll_arr_t counts, tdm_coll_arr_t displs,
                        bool displs_too, int n, const char *what) {
    if (!counts.p || (displs_too && !displs.p))
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s or its displacements are NULL", what);
    for (int i = 0; i < n; i++)
        if (tdm_coll_arr_get(counts, i) < 0)
            return tdm_mpi_err(c, MPI_ERR_COUNT, fn, "invalid %s[%d]=%lld", what, i,
                               (long long)tdm_coll_arr_get(counts, i));
    return MPI_SUCCESS;
}

int tdm_mpi_inter_barrier(tdm_comm_t *c, MPI_Request *request, const char *fn,
                          tdm_mpi_call_mode_t mode) {
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_BARRIER});
}

int tdm_mpi_inter_bcast(tdm_comm_t *c, void *buf, MPI_Count count, MPI_Datatype datatype, int root,
                        MPI_Request *request, const char *fn, tdm_mpi_call_mode_t mode) {
    tdm_dtype_t *dt = NULL;
    int err = check_root(c, fn, root);
    if (err)
        return err;
    if (root != MPI_PROC_NULL) {
        TDM_CHECK_COUNT(fn, c, count);
        TDM_GET_DTYPE(fn, c, datatype, dt);
        TDM_CHECK_BUF(fn, c, buf, count, dt);
        TDM_CHECK_NOT_IN_PLACE(fn, c, buf, "the buffer");
    }
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_BCAST,
                                                   .rbuf = buf,
                                                   .rcount = (size_t)(count > 0 ? count : 0),
                                                   .rdt = dt,
                                                   .root = root});
}

/* The significant buffer of a reduction at this process: count, type, op, buffer. */
static int red_checks(tdm_comm_t *c, const char *fn, const void *buf, MPI_Count count,
                      MPI_Datatype datatype, MPI_Op op, const char *what, tdm_dtype_t **dt_p,
                      tdm_op_t **op_p) {
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_CHECK_COUNT(fn, c, count);
    TDM_GET_DTYPE(fn, c, datatype, dt);
    TDM_GET_OP(fn, c, op, dt, o);
    TDM_CHECK_NOT_IN_PLACE(fn, c, buf, what);
    TDM_CHECK_BUF(fn, c, buf, count, dt);
    *dt_p = dt;
    *op_p = o;
    return MPI_SUCCESS;
}

int tdm_mpi_inter_reduce(tdm_comm_t *c, const void *sbuf, void *rbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, int root, MPI_Request *request,
                         const char *fn, tdm_mpi_call_mode_t mode) {
    tdm_dtype_t *dt = NULL;
    tdm_op_t *o = NULL;
    int err = check_root(c, fn, root);
    if (!err && root == MPI_ROOT)
        err = red_checks(c, fn, rbuf, count, datatype, op, "the receive buffer", &dt, &o);
    else if (!err && root != MPI_PROC_NULL)
        err = red_checks(c, fn, sbuf, count, datatype, op, "the send buffer", &dt, &o);
    if (err)
        return err;
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_REDUCE,
                                                   .sbuf = sbuf,
                                                   .rbuf = rbuf,
                                                   .rcount = (size_t)(count > 0 ? count : 0),
                                                   .rdt = dt,
                                                   .op = o,
                                                   .root = root});
}

int tdm_mpi_inter_allreduce(tdm_comm_t *c, const void *sbuf, void *rbuf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Request *request, const char *fn,
                            tdm_mpi_call_mode_t mode) {
    tdm_dtype_t *dt;
    tdm_op_t *o;
    int err = red_checks(c, fn, sbuf, count, datatype, op, "the send buffer", &dt, &o);
    if (err)
        return err;
    TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
    TDM_CHECK_BUF(fn, c, rbuf, count, dt);
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_ALLREDUCE,
                                                   .sbuf = sbuf,
                                                   .rbuf = rbuf,
                                                   .rcount = (size_t)count,
                                                   .rdt = dt,
                                                   .op = o});
}

int tdm_mpi_inter_red_scatter(tdm_comm_t *c, const void *sbuf, void *rbuf, tdm_coll_arr_t rcounts,
                              MPI_Count rcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Request *request, const char *fn, tdm_mpi_call_mode_t mode) {
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_GET_DTYPE(fn, c, datatype, dt);
    TDM_GET_OP(fn, c, op, dt, o);
    if (rcounts.p) {
        int err = check_counts(c, fn, rcounts, TDM_COLL_ARR_NONE, false, c->size, "recvcounts");
        if (err)
            return err;
    } else {
        TDM_CHECK_COUNT(fn, c, rcount);
    }
    TDM_CHECK_NOT_IN_PLACE(fn, c, sbuf, "the send buffer");
    TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_REDUCE_SCATTER,
                                                   .sbuf = sbuf,
                                                   .rbuf = rbuf,
                                                   .rcounts = rcounts,
                                                   .rcount = (size_t)(rcount > 0 ? rcount : 0),
                                                   .rdt = dt,
                                                   .op = o});
}

int tdm_mpi_inter_gather(tdm_comm_t *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                         void *rbuf, MPI_Count rcount, tdm_coll_arr_t rcounts,
                         tdm_coll_arr_t displs, MPI_Datatype rtype, int root, MPI_Request *request,
                         const char *fn, tdm_mpi_call_mode_t mode, bool v) {
    tdm_dtype_t *sdt = NULL, *rdt = NULL;
    int err = check_root(c, fn, root);
    if (err)
        return err;
    if (root == MPI_ROOT) {
        TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
        TDM_GET_DTYPE(fn, c, rtype, rdt);
        if (v && (err = check_counts(c, fn, rcounts, displs, true, c->remote.n, "recvcounts")))
            return err;
        if (!v)
            TDM_CHECK_COUNT(fn, c, rcount);
    } else if (root != MPI_PROC_NULL) {
        TDM_CHECK_NOT_IN_PLACE(fn, c, sbuf, "the send buffer");
        TDM_CHECK_COUNT(fn, c, scount);
        TDM_GET_DTYPE(fn, c, stype, sdt);
        TDM_CHECK_BUF(fn, c, sbuf, scount, sdt);
    }
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_GATHERV,
                                                   .sbuf = sbuf,
                                                   .scount = (size_t)(scount > 0 ? scount : 0),
                                                   .sdt = sdt,
                                                   .rbuf = rbuf,
                                                   .rcounts = v ? rcounts : TDM_COLL_ARR_NONE,
                                                   .rdispls = v ? displs : TDM_COLL_ARR_NONE,
                                                   .rcount = (size_t)(rcount > 0 ? rcount : 0),
                                                   .rdt = rdt,
                                                   .root = root});
}

int tdm_mpi_inter_scatter(tdm_comm_t *c, const void *sbuf, MPI_Count scount, tdm_coll_arr_t scounts,
                          tdm_coll_arr_t displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                          MPI_Datatype rtype, int root, MPI_Request *request, const char *fn,
                          tdm_mpi_call_mode_t mode, bool v) {
    tdm_dtype_t *sdt = NULL, *rdt = NULL;
    int err = check_root(c, fn, root);
    if (err)
        return err;
    if (root == MPI_ROOT) {
        TDM_CHECK_NOT_IN_PLACE(fn, c, sbuf, "the send buffer");
        TDM_GET_DTYPE(fn, c, stype, sdt);
        if (v && (err = check_counts(c, fn, scounts, displs, true, c->remote.n, "sendcounts")))
            return err;
        if (!v)
            TDM_CHECK_COUNT(fn, c, scount);
    } else if (root != MPI_PROC_NULL) {
        TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
        TDM_CHECK_COUNT(fn, c, rcount);
        TDM_GET_DTYPE(fn, c, rtype, rdt);
        TDM_CHECK_BUF(fn, c, rbuf, rcount, rdt);
    }
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_SCATTERV,
                                                   .sbuf = sbuf,
                                                   .scounts = v ? scounts : TDM_COLL_ARR_NONE,
                                                   .sdispls = v ? displs : TDM_COLL_ARR_NONE,
                                                   .scount = (size_t)(scount > 0 ? scount : 0),
                                                   .sdt = sdt,
                                                   .rbuf = rbuf,
                                                   .rcount = (size_t)(rcount > 0 ? rcount : 0),
                                                   .rdt = rdt,
                                                   .root = root});
}

int tdm_mpi_inter_allgather(tdm_comm_t *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                            void *rbuf, MPI_Count rcount, tdm_coll_arr_t rcounts,
                            tdm_coll_arr_t displs, MPI_Datatype rtype, MPI_Request *request,
                            const char *fn, tdm_mpi_call_mode_t mode, bool v) {
    tdm_dtype_t *sdt, *rdt;
    TDM_CHECK_NOT_IN_PLACE(fn, c, sbuf, "the send buffer");
    TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
    TDM_CHECK_COUNT(fn, c, scount);
    TDM_GET_DTYPE(fn, c, stype, sdt);
    TDM_CHECK_BUF(fn, c, sbuf, scount, sdt);
    TDM_GET_DTYPE(fn, c, rtype, rdt);
    if (v) {
        int err = check_counts(c, fn, rcounts, displs, true, c->remote.n, "recvcounts");
        if (err)
            return err;
    } else {
        TDM_CHECK_COUNT(fn, c, rcount);
    }
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_ALLGATHERV,
                                                   .sbuf = sbuf,
                                                   .scount = (size_t)scount,
                                                   .sdt = sdt,
                                                   .rbuf = rbuf,
                                                   .rcounts = v ? rcounts : TDM_COLL_ARR_NONE,
                                                   .rdispls = v ? displs : TDM_COLL_ARR_NONE,
                                                   .rcount = (size_t)(rcount > 0 ? rcount : 0),
                                                   .rdt = rdt});
}

int tdm_mpi_inter_alltoall(tdm_comm_t *c, const void *sbuf, MPI_Count scount,
                           tdm_coll_arr_t scounts, tdm_coll_arr_t sdispls, MPI_Datatype stype,
                           const MPI_Datatype *stypes, void *rbuf, MPI_Count rcount,
                           tdm_coll_arr_t rcounts, tdm_coll_arr_t rdispls, MPI_Datatype rtype,
                           const MPI_Datatype *rtypes, MPI_Request *request, const char *fn,
                           tdm_mpi_call_mode_t mode, int form) {
    int m = c->remote.n;
    tdm_dtype_t *sdt = NULL, *rdt = NULL, **sdts = NULL, **rdts = NULL;
    TDM_CHECK_NOT_IN_PLACE(fn, c, sbuf, "the send buffer");
    TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
    if (form == 0) {
        TDM_CHECK_COUNT(fn, c, scount);
        TDM_CHECK_COUNT(fn, c, rcount);
    } else {
        int err = check_counts(c, fn, scounts, sdispls, true, m, "sendcounts");
        if (!err)
            err = check_counts(c, fn, rcounts, rdispls, true, m, "recvcounts");
        if (err)
            return err;
    }
    if (form < 2) {
        TDM_GET_DTYPE(fn, c, stype, sdt);
        TDM_GET_DTYPE(fn, c, rtype, rdt);
    } else {
        if (!stypes || !rtypes)
            return tdm_mpi_err(c, MPI_ERR_ARG, fn, "datatype array is NULL");
        sdts = malloc(2 * (size_t)(m > 0 ? m : 1) * sizeof(*sdts));
        if (!sdts)
            return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
        rdts = sdts + m;
        for (int i = 0; i < m; i++) {
            sdts[i] = tdm_dtype_get(stypes[i]);
            rdts[i] = tdm_dtype_get(rtypes[i]);
            if (!sdts[i] || !rdts[i] || !sdts[i]->committed || !rdts[i]->committed) {
                free(sdts);
                return tdm_mpi_err(c, MPI_ERR_TYPE, fn,
                                   "invalid or uncommitted datatype for remote rank %d", i);
            }
        }
    }
    if (mode != TDM_CALL_BLOCKING && !request) {
        free(sdts);
        return tdm_mpi_err(c, MPI_ERR_REQUEST, fn, "request argument is NULL");
    }
    /* a schedule or a persistent request keeps what it needs of sdts: it can go */
    int err = tdm_mpi_ccall_submit(c, fn, mode, request,
                                   &(tdm_coll_call_t){.kind = TDM_COLL_CALL_ALLTOALLW,
                                                      .sbuf = sbuf,
                                                      .scounts = form ? scounts : TDM_COLL_ARR_NONE,
                                                      .sdispls = form ? sdispls : TDM_COLL_ARR_NONE,
                                                      .sdts = sdts,
                                                      .scount = (size_t)(scount > 0 ? scount : 0),
                                                      .sdt = sdt,
                                                      .rbuf = rbuf,
                                                      .rcounts = form ? rcounts : TDM_COLL_ARR_NONE,
                                                      .rdispls = form ? rdispls : TDM_COLL_ARR_NONE,
                                                      .rdts = rdts,
                                                      .rcount = (size_t)(rcount > 0 ? rcount : 0),
                                                      .rdt = rdt});
    free(sdts);
    return err;
}
