/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective bindings on intercommunicators (MPI-3.1 §5.2.2): the argument
 * checks of the two-group forms, then src/coll/inter.c. Rooted collectives
 * take MPI_ROOT, MPI_PROC_NULL or a rank of the remote group as root, and only
 * the arguments significant at the caller are checked. Per-peer arrays have an
 * entry per remote rank (Reduce_scatter's recvcounts: per local rank).
 * MPI_IN_PLACE is not defined on intercommunicators.
 */
#include "coll_inter.h"

#include "../coll/inter.h"

#include <stdlib.h>

_Static_assert(MPI_ROOT == TDM_COLL_ROOT, "MPI_ROOT value shared with coll/");

#define CHECK_REQ(_fn, _c, _req, _blocking)                                                        \
    do {                                                                                           \
        if (!(_blocking) && !(_req))                                                               \
            return tdm_mpi_err(_c, MPI_ERR_REQUEST, _fn, "request argument is NULL");              \
    } while (0)

#define NO_IN_PLACE(_fn, _c, _buf, _what)                                                          \
    do {                                                                                           \
        if (TDM_UNLIKELY((_buf) == MPI_IN_PLACE))                                                  \
            return tdm_mpi_err(_c, MPI_ERR_BUFFER, _fn,                                            \
                               "MPI_IN_PLACE is not allowed as %s on an intercommunicator",        \
                               _what);                                                             \
    } while (0)

#define GET_OP(_fn, _c, _h, _dt, _v)                                                               \
    do {                                                                                           \
        (_v) = tdm_op_get(_h);                                                                     \
        if (TDM_UNLIKELY(!(_v)))                                                                   \
            return tdm_mpi_err(_c, MPI_ERR_OP, _fn, "invalid op (handle %#x)", (unsigned)(_h));    \
        if (TDM_UNLIKELY(!tdm_op_valid_for(_v, _dt)))                                              \
            return tdm_mpi_err(_c, MPI_ERR_OP, _fn, "op %s is not defined on datatype %s",         \
                               tdm_op_name(_v), tdm_dtype_name(_dt));                              \
    } while (0)

static int check_root(tdm_comm_t *c, const char *fn, int root) {
    if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->remote.n))
        return MPI_SUCCESS;
    return tdm_mpi_err(c, MPI_ERR_ROOT, fn,
                       "invalid root %d (on an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a "
                       "rank of the remote group, of size %d)",
                       root, c->remote.n);
}

/* n counts (and displacements, if displs_too) of a per-peer array argument. */
static int check_counts(tdm_comm_t *c, const char *fn, const int *counts, const int *displs,
                        bool displs_too, int n, const char *what) {
    if (!counts || (displs_too && !displs))
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s or its displacements are NULL", what);
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return tdm_mpi_err(c, MPI_ERR_COUNT, fn, "invalid %s[%d]=%d", what, i, counts[i]);
    return MPI_SUCCESS;
}

static int finish(tdm_comm_t *c, const char *fn, int rc, tdm_req_t *r, MPI_Request *request) {
    if (TDM_UNLIKELY(rc != TDM_OK)) {
        if (rc == TDM_ERR_TRUNCATE)
            return tdm_mpi_err(c, MPI_ERR_TRUNCATE, fn,
                               "a message of the collective is longer than its receive buffer "
                               "(counts or types do not match across the groups)");
        return tdm_mpi_err(c, tdm_mpi_class_of((tdm_rc_t)rc), fn, "collective failed");
    }
    if (request)
        *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}

#define RUN(_fn, _c, _call)                                                                        \
    do {                                                                                           \
        tdm_req_t *r_ = NULL;                                                                      \
        tdm_req_t **rp_ = request ? &r_ : NULL;                                                    \
        int rc_ = (_call);                                                                         \
        return finish(_c, _fn, rc_, r_, request);                                                  \
    } while (0)

int tdm_mpi_inter_barrier(tdm_comm_t *c, MPI_Request *request, const char *fn, bool blocking) {
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c, tdm_coll_inter_barrier(c, rp_));
}

int tdm_mpi_inter_bcast(tdm_comm_t *c, void *buf, int count, MPI_Datatype datatype, int root,
                        MPI_Request *request, const char *fn, bool blocking) {
    tdm_dtype_t *dt = NULL;
    int err = check_root(c, fn, root);
    if (err)
        return err;
    if (root != MPI_PROC_NULL) {
        TDM_CHECK_COUNT(fn, c, count);
        TDM_GET_DTYPE(fn, c, datatype, dt);
        TDM_CHECK_BUF(fn, c, buf, count, dt);
        NO_IN_PLACE(fn, c, buf, "the buffer");
    }
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c, tdm_coll_inter_bcast(buf, (size_t)(count > 0 ? count : 0), dt, root, c, rp_));
}

/* The significant buffer of a reduction at this process: count, type, op, buffer. */
static int red_checks(tdm_comm_t *c, const char *fn, const void *buf, int count,
                      MPI_Datatype datatype, MPI_Op op, const char *what, tdm_dtype_t **dt_p,
                      tdm_op_t **op_p) {
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_CHECK_COUNT(fn, c, count);
    TDM_GET_DTYPE(fn, c, datatype, dt);
    GET_OP(fn, c, op, dt, o);
    NO_IN_PLACE(fn, c, buf, what);
    TDM_CHECK_BUF(fn, c, buf, count, dt);
    *dt_p = dt;
    *op_p = o;
    return MPI_SUCCESS;
}

int tdm_mpi_inter_reduce(tdm_comm_t *c, const void *sbuf, void *rbuf, int count,
                         MPI_Datatype datatype, MPI_Op op, int root, MPI_Request *request,
                         const char *fn, bool blocking) {
    tdm_dtype_t *dt = NULL;
    tdm_op_t *o = NULL;
    int err = check_root(c, fn, root);
    if (!err && root == MPI_ROOT)
        err = red_checks(c, fn, rbuf, count, datatype, op, "the receive buffer", &dt, &o);
    else if (!err && root != MPI_PROC_NULL)
        err = red_checks(c, fn, sbuf, count, datatype, op, "the send buffer", &dt, &o);
    if (err)
        return err;
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c,
        tdm_coll_inter_reduce(sbuf, rbuf, (size_t)(count > 0 ? count : 0), dt, o, root, c, rp_));
}

int tdm_mpi_inter_allreduce(tdm_comm_t *c, const void *sbuf, void *rbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Request *request, const char *fn,
                            bool blocking) {
    tdm_dtype_t *dt;
    tdm_op_t *o;
    int err = red_checks(c, fn, sbuf, count, datatype, op, "the send buffer", &dt, &o);
    if (err)
        return err;
    NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
    TDM_CHECK_BUF(fn, c, rbuf, count, dt);
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c, tdm_coll_inter_allreduce(sbuf, rbuf, (size_t)count, dt, o, c, rp_));
}

int tdm_mpi_inter_red_scatter(tdm_comm_t *c, const void *sbuf, void *rbuf, const int *rcounts,
                              int rcount, MPI_Datatype datatype, MPI_Op op, MPI_Request *request,
                              const char *fn, bool blocking) {
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_GET_DTYPE(fn, c, datatype, dt);
    GET_OP(fn, c, op, dt, o);
    if (rcounts) {
        int err = check_counts(c, fn, rcounts, NULL, false, c->size, "recvcounts");
        if (err)
            return err;
    } else {
        TDM_CHECK_COUNT(fn, c, rcount);
    }
    NO_IN_PLACE(fn, c, sbuf, "the send buffer");
    NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c,
        tdm_coll_inter_reduce_scatter(sbuf, rbuf, rcounts, (size_t)(rcount > 0 ? rcount : 0), dt, o,
                                      c, rp_));
}

int tdm_mpi_inter_gather(tdm_comm_t *c, const void *sbuf, int scount, MPI_Datatype stype,
                         void *rbuf, int rcount, const int *rcounts, const int *displs,
                         MPI_Datatype rtype, int root, MPI_Request *request, const char *fn,
                         bool blocking, bool v) {
    tdm_dtype_t *sdt = NULL, *rdt = NULL;
    int err = check_root(c, fn, root);
    if (err)
        return err;
    if (root == MPI_ROOT) {
        NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
        TDM_GET_DTYPE(fn, c, rtype, rdt);
        if (v && (err = check_counts(c, fn, rcounts, displs, true, c->remote.n, "recvcounts")))
            return err;
        if (!v)
            TDM_CHECK_COUNT(fn, c, rcount);
    } else if (root != MPI_PROC_NULL) {
        NO_IN_PLACE(fn, c, sbuf, "the send buffer");
        TDM_CHECK_COUNT(fn, c, scount);
        TDM_GET_DTYPE(fn, c, stype, sdt);
        TDM_CHECK_BUF(fn, c, sbuf, scount, sdt);
    }
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c,
        tdm_coll_inter_gatherv(sbuf, (size_t)(scount > 0 ? scount : 0), sdt, rbuf,
                               v ? rcounts : NULL, v ? displs : NULL,
                               (size_t)(rcount > 0 ? rcount : 0), rdt, root, c, rp_));
}

int tdm_mpi_inter_scatter(tdm_comm_t *c, const void *sbuf, int scount, const int *scounts,
                          const int *displs, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, int root, MPI_Request *request, const char *fn,
                          bool blocking, bool v) {
    tdm_dtype_t *sdt = NULL, *rdt = NULL;
    int err = check_root(c, fn, root);
    if (err)
        return err;
    if (root == MPI_ROOT) {
        NO_IN_PLACE(fn, c, sbuf, "the send buffer");
        TDM_GET_DTYPE(fn, c, stype, sdt);
        if (v && (err = check_counts(c, fn, scounts, displs, true, c->remote.n, "sendcounts")))
            return err;
        if (!v)
            TDM_CHECK_COUNT(fn, c, scount);
    } else if (root != MPI_PROC_NULL) {
        NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
        TDM_CHECK_COUNT(fn, c, rcount);
        TDM_GET_DTYPE(fn, c, rtype, rdt);
        TDM_CHECK_BUF(fn, c, rbuf, rcount, rdt);
    }
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c,
        tdm_coll_inter_scatterv(sbuf, v ? scounts : NULL, v ? displs : NULL,
                                (size_t)(scount > 0 ? scount : 0), sdt, rbuf,
                                (size_t)(rcount > 0 ? rcount : 0), rdt, root, c, rp_));
}

int tdm_mpi_inter_allgather(tdm_comm_t *c, const void *sbuf, int scount, MPI_Datatype stype,
                            void *rbuf, int rcount, const int *rcounts, const int *displs,
                            MPI_Datatype rtype, MPI_Request *request, const char *fn, bool blocking,
                            bool v) {
    tdm_dtype_t *sdt, *rdt;
    NO_IN_PLACE(fn, c, sbuf, "the send buffer");
    NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
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
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c,
        tdm_coll_inter_allgatherv(sbuf, (size_t)scount, sdt, rbuf, v ? rcounts : NULL,
                                  v ? displs : NULL, (size_t)(rcount > 0 ? rcount : 0), rdt, c,
                                  rp_));
}

int tdm_mpi_inter_alltoall(tdm_comm_t *c, const void *sbuf, int scount, const int *scounts,
                           const int *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes,
                           void *rbuf, int rcount, const int *rcounts, const int *rdispls,
                           MPI_Datatype rtype, const MPI_Datatype *rtypes, MPI_Request *request,
                           const char *fn, bool blocking, int form) {
    int m = c->remote.n;
    tdm_dtype_t *sdt = NULL, *rdt = NULL, **sdts = NULL, **rdts = NULL;
    NO_IN_PLACE(fn, c, sbuf, "the send buffer");
    NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
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
    if (!blocking && !request) {
        free(sdts);
        return tdm_mpi_err(c, MPI_ERR_REQUEST, fn, "request argument is NULL");
    }
    tdm_req_t *r = NULL;
    int rc = tdm_coll_inter_alltoallw(
        sbuf, form ? scounts : NULL, form ? sdispls : NULL, sdts, (size_t)(scount > 0 ? scount : 0),
        sdt, rbuf, form ? rcounts : NULL, form ? rdispls : NULL, rdts,
        (size_t)(rcount > 0 ? rcount : 0), rdt, c, request ? &r : NULL);
    free(sdts);
    return finish(c, fn, rc, r, request);
}
