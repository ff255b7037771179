/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective bindings: argument checks, then one call into src/coll. Each
 * blocking collective and its I-variant share one function (request NULL:
 * blocking). */
#include "bind.h"

#include "../coll/coll.h"
#include "coll_inter.h"

#include <stdlib.h>

#define GET_DT(_fn, _c, _h, _v) TDM_GET_DTYPE(_fn, _c, _h, _v)

#define CHECK_ROOT(_fn, _c, _root)                                                                 \
    do {                                                                                           \
        if (TDM_UNLIKELY((_root) < 0 || (_root) >= (_c)->size))                                    \
            return tdm_mpi_err(_c, MPI_ERR_ROOT, _fn, "invalid root %d (communicator of size %d)", \
                               (int)(_root), (_c)->size);                                          \
    } while (0)

#define CHECK_REQ(_fn, _c, _req, _blocking)                                                        \
    do {                                                                                           \
        if (!(_blocking) && !(_req))                                                               \
            return tdm_mpi_err(_c, MPI_ERR_REQUEST, _fn, "request argument is NULL");              \
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

/* MPI_IN_PLACE where it is not allowed, or the same buffer passed twice. */
#define CHECK_ALIAS(_fn, _c, _sbuf, _rbuf, _nonempty)                                              \
    do {                                                                                           \
        if (TDM_UNLIKELY((_sbuf) == (_rbuf) && (_sbuf) != MPI_IN_PLACE && (_sbuf) != NULL &&       \
                         (_nonempty)))                                                             \
            return tdm_mpi_err(_c, MPI_ERR_BUFFER, _fn,                                            \
                               "send and receive buffers are the same (use MPI_IN_PLACE)");        \
    } while (0)

#define NO_IN_PLACE(_fn, _c, _buf, _what)                                                          \
    do {                                                                                           \
        if (TDM_UNLIKELY((_buf) == MPI_IN_PLACE))                                                  \
            return tdm_mpi_err(_c, MPI_ERR_BUFFER, _fn, "MPI_IN_PLACE is not allowed as %s",       \
                               _what);                                                             \
    } while (0)

static int finish(tdm_comm_t *c, const char *fn, int rc, tdm_req_t *r, MPI_Request *request) {
    if (TDM_UNLIKELY(rc != TDM_OK)) {
        if (rc == TDM_ERR_TRUNCATE)
            return tdm_mpi_err(c, MPI_ERR_TRUNCATE, fn,
                               "a message of the collective is longer than its receive buffer "
                               "(counts or types do not match across ranks)");
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

/* ---- Barrier ---- */

static int barrier(MPI_Comm comm, MPI_Request *request, const char *fn, bool blocking) {
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_barrier(c, request, fn, blocking);
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c, tdm_coll_barrier(c, rp_));
}
int PMPI_Barrier(MPI_Comm comm) {
    return barrier(comm, NULL, "MPI_Barrier", true);
}
TDM_WEAK(MPI_Barrier)
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    return barrier(comm, request, "MPI_Ibarrier", false);
}
TDM_WEAK(MPI_Ibarrier)

/* ---- Bcast ---- */

static int bcast(void *buf, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                 MPI_Request *request, const char *fn, bool blocking) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_bcast(c, buf, count, datatype, root, request, fn, blocking);
    TDM_CHECK_COUNT(fn, c, count);
    GET_DT(fn, c, datatype, dt);
    TDM_CHECK_BUF(fn, c, buf, count, dt);
    NO_IN_PLACE(fn, c, buf, "the buffer of a broadcast");
    CHECK_ROOT(fn, c, root);
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c, tdm_coll_bcast(buf, (size_t)count, dt, root, c, rp_));
}
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    return bcast(buffer, count, datatype, root, comm, NULL, "MPI_Bcast", true);
}
TDM_WEAK(MPI_Bcast)
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request) {
    return bcast(buffer, count, datatype, root, comm, request, "MPI_Ibcast", false);
}
TDM_WEAK(MPI_Ibcast)

/* ---- reductions ---- */

/* Checks shared by Reduce, Allreduce, Scan, Exscan. */
static int red_checks(const char *fn, const void *sbuf, void *rbuf, int count,
                      MPI_Datatype datatype, MPI_Op op, tdm_comm_t *c, bool recv_significant,
                      tdm_dtype_t **dt_p, tdm_op_t **op_p) {
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_CHECK_COUNT(fn, c, count);
    GET_DT(fn, c, datatype, dt);
    GET_OP(fn, c, op, dt, o);
    if (sbuf != MPI_IN_PLACE)
        TDM_CHECK_BUF(fn, c, sbuf, count, dt);
    if (recv_significant) {
        NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
        TDM_CHECK_BUF(fn, c, rbuf, count, dt);
        CHECK_ALIAS(fn, c, sbuf, rbuf, count > 0 && dt->size > 0);
    }
    *dt_p = dt;
    *op_p = o;
    return MPI_SUCCESS;
}

static int reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  int root, MPI_Comm comm, MPI_Request *request, const char *fn, bool blocking) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_reduce(c, sbuf, rbuf, count, datatype, op, root, request, fn,
                                    blocking);
    CHECK_ROOT(fn, c, root);
    int err = red_checks(fn, sbuf, rbuf, count, datatype, op, c, c->rank == root, &dt, &o);
    if (err)
        return err;
    if (c->rank != root)
        NO_IN_PLACE(fn, c, sbuf, "the send buffer at a non-root rank");
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c, tdm_coll_reduce(sbuf, rbuf, (size_t)count, dt, o, root, c, rp_));
}
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL, "MPI_Reduce", true);
}
TDM_WEAK(MPI_Reduce)
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request) {
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, "MPI_Ireduce", false);
}
TDM_WEAK(MPI_Ireduce)

static int allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm, MPI_Request *request, const char *fn, bool blocking) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_allreduce(c, sbuf, rbuf, count, datatype, op, request, fn, blocking);
    int err = red_checks(fn, sbuf, rbuf, count, datatype, op, c, true, &dt, &o);
    if (err)
        return err;
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c, tdm_coll_allreduce(sbuf, rbuf, (size_t)count, dt, o, c, rp_));
}
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL, "MPI_Allreduce", true);
}
TDM_WEAK(MPI_Allreduce)
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request) {
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, request, "MPI_Iallreduce", false);
}
TDM_WEAK(MPI_Iallreduce)

static int scan(const void *sbuf, void *rbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request *request, const char *fn, bool blocking,
                bool exclusive) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_err(c, MPI_ERR_COMM, fn, "not defined on an intercommunicator");
    int err = red_checks(fn, sbuf, rbuf, count, datatype, op, c, true, &dt, &o);
    if (err)
        return err;
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c, tdm_coll_scan(sbuf, rbuf, (size_t)count, dt, o, exclusive, c, rp_));
}
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm) {
    return scan(sendbuf, recvbuf, count, datatype, op, comm, NULL, "MPI_Scan", true, false);
}
TDM_WEAK(MPI_Scan)
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request) {
    return scan(sendbuf, recvbuf, count, datatype, op, comm, request, "MPI_Iscan", false, false);
}
TDM_WEAK(MPI_Iscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
    return scan(sendbuf, recvbuf, count, datatype, op, comm, NULL, "MPI_Exscan", true, true);
}
TDM_WEAK(MPI_Exscan)
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request) {
    return scan(sendbuf, recvbuf, count, datatype, op, comm, request, "MPI_Iexscan", false, true);
}
TDM_WEAK(MPI_Iexscan)

static int red_scatter(const void *sbuf, void *rbuf, const int *rcounts, int rcount,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request,
                       const char *fn, bool blocking) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_red_scatter(c, sbuf, rbuf, rcounts, rcount, datatype, op, request, fn,
                                         blocking);
    GET_DT(fn, c, datatype, dt);
    GET_OP(fn, c, op, dt, o);
    if (rcounts) {
        for (int i = 0; i < c->size; i++)
            if (rcounts[i] < 0)
                return tdm_mpi_err(c, MPI_ERR_COUNT, fn, "invalid recvcounts[%d]=%d", i,
                                   rcounts[i]);
    } else {
        TDM_CHECK_COUNT(fn, c, rcount);
    }
    NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
    CHECK_ALIAS(fn, c, sbuf, rbuf, dt->size > 0);
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c, tdm_coll_reduce_scatter(sbuf, rbuf, rcounts, (size_t)rcount, dt, o, c, rp_));
}
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    if (!recvcounts)
        return tdm_mpi_err(tdm_comm_get(comm), MPI_ERR_ARG, "MPI_Reduce_scatter",
                           "recvcounts is NULL");
    return red_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, NULL,
                       "MPI_Reduce_scatter", true);
}
TDM_WEAK(MPI_Reduce_scatter)
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    if (!recvcounts)
        return tdm_mpi_err(tdm_comm_get(comm), MPI_ERR_ARG, "MPI_Ireduce_scatter",
                           "recvcounts is NULL");
    return red_scatter(sendbuf, recvbuf, recvcounts, 0, datatype, op, comm, request,
                       "MPI_Ireduce_scatter", false);
}
TDM_WEAK(MPI_Ireduce_scatter)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    return red_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, NULL,
                       "MPI_Reduce_scatter_block", true);
}
TDM_WEAK(MPI_Reduce_scatter_block)
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request) {
    return red_scatter(sendbuf, recvbuf, NULL, recvcount, datatype, op, comm, request,
                       "MPI_Ireduce_scatter_block", false);
}
TDM_WEAK(MPI_Ireduce_scatter_block)

/* ---- Gather / Scatter ---- */

static int check_counts(const char *fn, tdm_comm_t *c, const int *counts, const int *displs,
                        const char *what) {
    if (!counts || !displs)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s or its displacements are NULL", what);
    for (int i = 0; i < c->size; i++)
        if (counts[i] < 0)
            return tdm_mpi_err(c, MPI_ERR_COUNT, fn, "invalid %s[%d]=%d", what, i, counts[i]);
    return MPI_SUCCESS;
}

static int gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                  MPI_Comm comm, MPI_Request *request, const char *fn, bool blocking, bool v) {
    tdm_comm_t *c;
    tdm_dtype_t *sdt = NULL, *rdt = NULL;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_gather(c, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype,
                                    root, request, fn, blocking, v);
    CHECK_ROOT(fn, c, root);
    bool am_root = c->rank == root;
    if (!(am_root && sbuf == MPI_IN_PLACE)) {
        NO_IN_PLACE(fn, c, sbuf, "the send buffer at a non-root rank");
        TDM_CHECK_COUNT(fn, c, scount);
        GET_DT(fn, c, stype, sdt);
    }
    if (am_root) {
        NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
        GET_DT(fn, c, rtype, rdt);
        if (v) {
            int err = check_counts(fn, c, rcounts, displs, "recvcounts");
            if (err)
                return err;
        } else {
            TDM_CHECK_COUNT(fn, c, rcount);
        }
        CHECK_ALIAS(fn, c, sbuf, rbuf, scount > 0);
    }
    CHECK_REQ(fn, c, request, blocking);
    if (!sdt)
        sdt = rdt;
    RUN(fn, c,
        tdm_coll_gatherv(sbuf, (size_t)scount, sdt, rbuf, v ? rcounts : NULL, v ? displs : NULL,
                         (size_t)(rcount > 0 ? rcount : 0), rdt ? rdt : sdt, root, c, rp_));
}
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype, root,
                  comm, NULL, "MPI_Gather", true, false);
}
TDM_WEAK(MPI_Gather)
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request) {
    return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype, root,
                  comm, request, "MPI_Igather", false, false);
}
TDM_WEAK(MPI_Igather)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
    return gather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root,
                  comm, NULL, "MPI_Gatherv", true, true);
}
TDM_WEAK(MPI_Gatherv)
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request) {
    return gather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root,
                  comm, request, "MPI_Igatherv", false, true);
}
TDM_WEAK(MPI_Igatherv)

static int scatter(const void *sbuf, int scount, const int *scounts, const int *displs,
                   MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                   MPI_Comm comm, MPI_Request *request, const char *fn, bool blocking, bool v) {
    tdm_comm_t *c;
    tdm_dtype_t *sdt = NULL, *rdt = NULL;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_scatter(c, sbuf, scount, scounts, displs, stype, rbuf, rcount, rtype,
                                     root, request, fn, blocking, v);
    CHECK_ROOT(fn, c, root);
    bool am_root = c->rank == root;
    if (!(am_root && rbuf == MPI_IN_PLACE)) {
        NO_IN_PLACE(fn, c, rbuf, "the receive buffer at a non-root rank");
        TDM_CHECK_COUNT(fn, c, rcount);
        GET_DT(fn, c, rtype, rdt);
    }
    if (am_root) {
        NO_IN_PLACE(fn, c, sbuf, "the send buffer");
        GET_DT(fn, c, stype, sdt);
        if (v) {
            int err = check_counts(fn, c, scounts, displs, "sendcounts");
            if (err)
                return err;
        } else {
            TDM_CHECK_COUNT(fn, c, scount);
        }
        CHECK_ALIAS(fn, c, sbuf, rbuf, rcount > 0);
    }
    CHECK_REQ(fn, c, request, blocking);
    if (!rdt)
        rdt = sdt;
    RUN(fn, c,
        tdm_coll_scatterv(sbuf, v ? scounts : NULL, v ? displs : NULL,
                          (size_t)(scount > 0 ? scount : 0), sdt ? sdt : rdt, rbuf,
                          (size_t)(rcount > 0 ? rcount : 0), rdt, root, c, rp_));
}
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return scatter(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, recvtype, root,
                   comm, NULL, "MPI_Scatter", true, false);
}
TDM_WEAK(MPI_Scatter)
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request) {
    return scatter(sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, recvtype, root,
                   comm, request, "MPI_Iscatter", false, false);
}
TDM_WEAK(MPI_Iscatter)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm) {
    return scatter(sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                   comm, NULL, "MPI_Scatterv", true, true);
}
TDM_WEAK(MPI_Scatterv)
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request) {
    return scatter(sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                   comm, request, "MPI_Iscatterv", false, true);
}
TDM_WEAK(MPI_Iscatterv)

/* ---- Allgather ---- */

static int allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm,
                     MPI_Request *request, const char *fn, bool blocking, bool v) {
    tdm_comm_t *c;
    tdm_dtype_t *sdt = NULL, *rdt;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_allgather(c, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype,
                                       request, fn, blocking, v);
    if (sbuf != MPI_IN_PLACE) {
        TDM_CHECK_COUNT(fn, c, scount);
        GET_DT(fn, c, stype, sdt);
    }
    NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
    GET_DT(fn, c, rtype, rdt);
    if (v) {
        int err = check_counts(fn, c, rcounts, displs, "recvcounts");
        if (err)
            return err;
    } else {
        TDM_CHECK_COUNT(fn, c, rcount);
    }
    CHECK_ALIAS(fn, c, sbuf, rbuf, scount > 0);
    CHECK_REQ(fn, c, request, blocking);
    RUN(fn, c,
        tdm_coll_allgatherv(sbuf, (size_t)(scount > 0 ? scount : 0), sdt ? sdt : rdt, rbuf,
                            v ? rcounts : NULL, v ? displs : NULL,
                            (size_t)(rcount > 0 ? rcount : 0), rdt, c, rp_));
}
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype, comm,
                     NULL, "MPI_Allgather", true, false);
}
TDM_WEAK(MPI_Allgather)
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL, recvtype, comm,
                     request, "MPI_Iallgather", false, false);
}
TDM_WEAK(MPI_Iallgather)
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm) {
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm,
                     NULL, "MPI_Allgatherv", true, true);
}
TDM_WEAK(MPI_Allgatherv)
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request) {
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm,
                     request, "MPI_Iallgatherv", false, true);
}
TDM_WEAK(MPI_Iallgatherv)

/* ---- Alltoall(v,w) ---- */

static int alltoall(const void *sbuf, int scount, const int *scounts, const int *sdispls,
                    MPI_Datatype stype, const MPI_Datatype *stypes, void *rbuf, int rcount,
                    const int *rcounts, const int *rdispls, MPI_Datatype rtype,
                    const MPI_Datatype *rtypes, MPI_Comm comm, MPI_Request *request, const char *fn,
                    bool blocking, int form /* 0 plain, 1 v, 2 w */) {
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_alltoall(c, sbuf, scount, scounts, sdispls, stype, stypes, rbuf,
                                      rcount, rcounts, rdispls, rtype, rtypes, request, fn,
                                      blocking, form);
    int p = c->size;
    tdm_dtype_t *sdt = NULL, *rdt = NULL;
    tdm_dtype_t **sdts = NULL, **rdts = NULL;
    NO_IN_PLACE(fn, c, rbuf, "the receive buffer");
    if (form == 0) {
        TDM_CHECK_COUNT(fn, c, rcount);
        GET_DT(fn, c, rtype, rdt);
        if (sbuf != MPI_IN_PLACE) {
            TDM_CHECK_COUNT(fn, c, scount);
            GET_DT(fn, c, stype, sdt);
        }
    } else {
        int err = check_counts(fn, c, rcounts, rdispls, "recvcounts");
        if (err)
            return err;
        if (sbuf != MPI_IN_PLACE && (err = check_counts(fn, c, scounts, sdispls, "sendcounts")))
            return err;
        if (form == 1) {
            GET_DT(fn, c, rtype, rdt);
            if (sbuf != MPI_IN_PLACE)
                GET_DT(fn, c, stype, sdt);
        } else {
            if (!rtypes || (sbuf != MPI_IN_PLACE && !stypes))
                return tdm_mpi_err(c, MPI_ERR_ARG, fn, "datatype array is NULL");
            sdts = malloc(2 * (size_t)p * sizeof(*sdts));
            if (!sdts)
                return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
            rdts = sdts + p;
            for (int i = 0; i < p; i++) {
                rdts[i] = tdm_dtype_get(rtypes[i]);
                sdts[i] = sbuf != MPI_IN_PLACE ? tdm_dtype_get(stypes[i]) : rdts[i];
                if (!rdts[i] || !sdts[i] || !rdts[i]->committed || !sdts[i]->committed) {
                    free(sdts);
                    return tdm_mpi_err(c, MPI_ERR_TYPE, fn,
                                       "invalid or uncommitted datatype for rank %d", i);
                }
            }
        }
    }
    CHECK_ALIAS(fn, c, sbuf, rbuf, true);
    if (!blocking && !request) {
        free(sdts);
        return tdm_mpi_err(c, MPI_ERR_REQUEST, fn, "request argument is NULL");
    }
    tdm_req_t *r = NULL;
    int rc = tdm_coll_alltoallw(sbuf, form ? scounts : NULL, form ? sdispls : NULL, sdts,
                                (size_t)(scount > 0 ? scount : 0), sdt ? sdt : rdt, rbuf,
                                form ? rcounts : NULL, form ? rdispls : NULL, rdts,
                                (size_t)(rcount > 0 ? rcount : 0), rdt, c, request ? &r : NULL);
    free(sdts);
    return finish(c, fn, rc, r, request);
}
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoall(sendbuf, sendcount, NULL, NULL, sendtype, NULL, recvbuf, recvcount, NULL, NULL,
                    recvtype, NULL, comm, NULL, "MPI_Alltoall", true, 0);
}
TDM_WEAK(MPI_Alltoall)
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return alltoall(sendbuf, sendcount, NULL, NULL, sendtype, NULL, recvbuf, recvcount, NULL, NULL,
                    recvtype, NULL, comm, request, "MPI_Ialltoall", false, 0);
}
TDM_WEAK(MPI_Ialltoall)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoall(sendbuf, 0, sendcounts, sdispls, sendtype, NULL, recvbuf, 0, recvcounts,
                    rdispls, recvtype, NULL, comm, NULL, "MPI_Alltoallv", true, 1);
}
TDM_WEAK(MPI_Alltoallv)
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request) {
    return alltoall(sendbuf, 0, sendcounts, sdispls, sendtype, NULL, recvbuf, 0, recvcounts,
                    rdispls, recvtype, NULL, comm, request, "MPI_Ialltoallv", false, 1);
}
TDM_WEAK(MPI_Ialltoallv)
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    return alltoall(sendbuf, 0, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf, 0,
                    recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm, NULL, "MPI_Alltoallw",
                    true, 2);
}
TDM_WEAK(MPI_Alltoallw)
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request) {
    return alltoall(sendbuf, 0, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf, 0,
                    recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm, request,
                    "MPI_Ialltoallw", false, 2);
}
TDM_WEAK(MPI_Ialltoallw)
