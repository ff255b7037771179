/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective bindings: argument checks, then one call into src/coll. Each
 * blocking collective, its I-variant and its persistent _init form
 * (coll_persist.c) share one function (request NULL: blocking), which ends in
 * a tdm_coll_call_t run now or bound to a persistent request
 * (tdm_mpi_ccall_submit). On an intercommunicator it hands over to
 * coll_inter.c's checks, which end the same way. The large-count forms
 * (MPI_<Coll>_c) are the same functions: counts are MPI_Count and count and
 * displacement arrays tdm_coll_arr_t, and each family's bindings are one
 * macro instantiated for both (TDM_MPI_COUNT_FORMS). */
#include "bind.h"

#include "../coll/coll.h"
#include "../coll/inter.h"
#include "coll_inter.h"
#include "coll_persist.h"

#include <stdlib.h>

#define CHECK_ROOT(_fn, _c, _root)                                                                 \
    do {                                                                                           \
        if (TDM_UNLIKELY((_root) < 0 || (_root) >= (_c)->size))                                    \
            return tdm_mpi_err(_c, MPI_ERR_ROOT, _fn, "invalid root %d (communicator of size %d)", \
                               (int)(_root), (_c)->size);                                          \
    } while (0)

/* MPI_IN_PLACE where it is not allowed, or the same buffer passed twice. */
#define CHECK_ALIAS(_fn, _c, _sbuf, _rbuf, _nonempty)                                              \
    do {                                                                                           \
        if (TDM_UNLIKELY((_sbuf) == (_rbuf) && (_sbuf) != MPI_IN_PLACE && (_sbuf) != NULL &&       \
                         (_nonempty)))                                                             \
            return tdm_mpi_err(_c, MPI_ERR_BUFFER, _fn,                                            \
                               "send and receive buffers are the same (use MPI_IN_PLACE)");        \
    } while (0)

int tdm_mpi_coll_error(tdm_comm_t *c, const char *fn, int rc) {
    if (rc == TDM_ERR_TRUNCATE)
        return tdm_mpi_err(c, MPI_ERR_TRUNCATE, fn,
                           "a message of the collective is longer than its receive buffer "
                           "(counts or types do not match across %s)",
                           c->inter ? "the groups" : "ranks");
    return tdm_mpi_err(c, tdm_mpi_class_of((tdm_rc_t)rc), fn, "collective failed");
}

/* The blocking forms of the most frequent small collectives call the algorithm
 * at once: building the 288-byte call record and dispatching on it was a
 * tenth of a 2-rank 4-byte Bcast's root. */
static inline int blocking_done(tdm_comm_t *c, const char *fn, int rc) {
    return TDM_UNLIKELY(rc != TDM_OK) ? tdm_mpi_coll_error(c, fn, rc) : MPI_SUCCESS;
}

int tdm_mpi_ccall_submit(tdm_comm_t *c, const char *fn, tdm_mpi_call_mode_t mode,
                         MPI_Request *request, const tdm_coll_call_t *cc) {
    if (mode == TDM_CALL_PERSISTENT)
        return tdm_mpi_coll_persist_init(c, fn, cc, request);
    tdm_req_t *r = NULL;
    int rc = tdm_coll_call_run(c, cc, mode == TDM_CALL_NONBLOCKING ? &r : NULL);
    if (TDM_UNLIKELY(rc != TDM_OK))
        return tdm_mpi_coll_error(c, fn, rc);
    if (request)
        *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}

/* ---- Barrier ---- */

int tdm_mpi_coll_barrier(MPI_Comm comm, MPI_Request *request, const char *fn,
                         tdm_mpi_call_mode_t mode) {
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_barrier(c, request, fn, mode);
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    if (mode == TDM_CALL_BLOCKING)
        return blocking_done(c, fn, tdm_coll_barrier(c, NULL));
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_BARRIER});
}
int PMPI_Barrier(MPI_Comm comm) {
    return tdm_mpi_coll_barrier(comm, NULL, "MPI_Barrier", TDM_CALL_BLOCKING);
}
TDM_WEAK(MPI_Barrier)
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    return tdm_mpi_coll_barrier(comm, request, "MPI_Ibarrier", TDM_CALL_NONBLOCKING);
}
TDM_WEAK(MPI_Ibarrier)

/* ---- Bcast ---- */

int tdm_mpi_coll_bcast(void *buf, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                       MPI_Request *request, const char *fn, tdm_mpi_call_mode_t mode) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_bcast(c, buf, count, datatype, root, request, fn, mode);
    TDM_CHECK_COUNT(fn, c, count);
    TDM_GET_DTYPE(fn, c, datatype, dt);
    TDM_CHECK_BUF(fn, c, buf, count, dt);
    TDM_CHECK_NOT_IN_PLACE(fn, c, buf, "the buffer of a broadcast");
    CHECK_ROOT(fn, c, root);
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    if (mode == TDM_CALL_BLOCKING)
        return blocking_done(c, fn, tdm_coll_bcast(buf, (size_t)count, dt, root, c, NULL));
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_BCAST,
                                                   .rbuf = buf,
                                                   .rcount = (size_t)count,
                                                   .rdt = dt,
                                                   .root = root});
}

#define BCAST_FORMS(_s, _C, _D)                                                                    \
    int PMPI_Bcast##_s(void *buffer, _C count, MPI_Datatype datatype, int root, MPI_Comm comm) {   \
        return tdm_mpi_coll_bcast(buffer, count, datatype, root, comm, NULL, "MPI_Bcast" #_s,      \
                                  TDM_CALL_BLOCKING);                                              \
    }                                                                                              \
    TDM_WEAK(MPI_Bcast##_s)                                                                        \
    int PMPI_Ibcast##_s(void *buffer, _C count, MPI_Datatype datatype, int root, MPI_Comm comm,    \
                        MPI_Request *request) {                                                    \
        return tdm_mpi_coll_bcast(buffer, count, datatype, root, comm, request, "MPI_Ibcast" #_s,  \
                                  TDM_CALL_NONBLOCKING);                                           \
    }                                                                                              \
    TDM_WEAK(MPI_Ibcast##_s)
TDM_MPI_COUNT_FORMS(BCAST_FORMS)

/* ---- reductions ---- */

/* Checks shared by Reduce, Allreduce, Scan, Exscan. */
static int red_checks(const char *fn, const void *sbuf, void *rbuf, MPI_Count count,
                      MPI_Datatype datatype, MPI_Op op, tdm_comm_t *c, bool recv_significant,
                      tdm_dtype_t **dt_p, tdm_op_t **op_p) {
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_CHECK_COUNT(fn, c, count);
    TDM_GET_DTYPE(fn, c, datatype, dt);
    TDM_GET_OP(fn, c, op, dt, o);
    if (sbuf != MPI_IN_PLACE)
        TDM_CHECK_BUF(fn, c, sbuf, count, dt);
    if (recv_significant) {
        TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
        TDM_CHECK_BUF(fn, c, rbuf, count, dt);
        CHECK_ALIAS(fn, c, sbuf, rbuf, count > 0 && dt->size > 0);
    }
    *dt_p = dt;
    *op_p = o;
    return MPI_SUCCESS;
}

int tdm_mpi_coll_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op, int root, MPI_Comm comm, MPI_Request *request, const char *fn,
                        tdm_mpi_call_mode_t mode) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_reduce(c, sbuf, rbuf, count, datatype, op, root, request, fn, mode);
    CHECK_ROOT(fn, c, root);
    int err = red_checks(fn, sbuf, rbuf, count, datatype, op, c, c->rank == root, &dt, &o);
    if (err)
        return err;
    if (c->rank != root)
        TDM_CHECK_NOT_IN_PLACE(fn, c, sbuf, "the send buffer at a non-root rank");
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    if (mode == TDM_CALL_BLOCKING)
        return blocking_done(c, fn,
                             tdm_coll_reduce(sbuf, rbuf, (size_t)count, dt, o, root, c, NULL));
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_REDUCE,
                                                   .sbuf = sbuf,
                                                   .rbuf = rbuf,
                                                   .rcount = (size_t)count,
                                                   .rdt = dt,
                                                   .op = o,
                                                   .root = root});
}

#define REDUCE_FORMS(_s, _C, _D)                                                                   \
    int PMPI_Reduce##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,       \
                        MPI_Op op, int root, MPI_Comm comm) {                                      \
        return tdm_mpi_coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL,        \
                                   "MPI_Reduce" #_s, TDM_CALL_BLOCKING);                           \
    }                                                                                              \
    TDM_WEAK(MPI_Reduce##_s)                                                                       \
    int PMPI_Ireduce##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,      \
                         MPI_Op op, int root, MPI_Comm comm, MPI_Request *request) {               \
        return tdm_mpi_coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request,     \
                                   "MPI_Ireduce" #_s, TDM_CALL_NONBLOCKING);                       \
    }                                                                                              \
    TDM_WEAK(MPI_Ireduce##_s)
TDM_MPI_COUNT_FORMS(REDUCE_FORMS)

int tdm_mpi_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request, const char *fn,
                           tdm_mpi_call_mode_t mode) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_allreduce(c, sbuf, rbuf, count, datatype, op, request, fn, mode);
    int err = red_checks(fn, sbuf, rbuf, count, datatype, op, c, true, &dt, &o);
    if (err)
        return err;
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    if (mode == TDM_CALL_BLOCKING)
        return blocking_done(c, fn, tdm_coll_allreduce(sbuf, rbuf, (size_t)count, dt, o, c, NULL));
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_ALLREDUCE,
                                                   .sbuf = sbuf,
                                                   .rbuf = rbuf,
                                                   .rcount = (size_t)count,
                                                   .rdt = dt,
                                                   .op = o});
}

#define ALLREDUCE_FORMS(_s, _C, _D)                                                                \
    int PMPI_Allreduce##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,    \
                           MPI_Op op, MPI_Comm comm) {                                             \
        return tdm_mpi_coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL,           \
                                      "MPI_Allreduce" #_s, TDM_CALL_BLOCKING);                     \
    }                                                                                              \
    TDM_WEAK(MPI_Allreduce##_s)                                                                    \
    int PMPI_Iallreduce##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,   \
                            MPI_Op op, MPI_Comm comm, MPI_Request *request) {                      \
        return tdm_mpi_coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm, request,        \
                                      "MPI_Iallreduce" #_s, TDM_CALL_NONBLOCKING);                 \
    }                                                                                              \
    TDM_WEAK(MPI_Iallreduce##_s)
TDM_MPI_COUNT_FORMS(ALLREDUCE_FORMS)

int tdm_mpi_coll_scan(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Request *request, const char *fn,
                      tdm_mpi_call_mode_t mode, bool exclusive) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_err(c, MPI_ERR_COMM, fn, "not defined on an intercommunicator");
    int err = red_checks(fn, sbuf, rbuf, count, datatype, op, c, true, &dt, &o);
    if (err)
        return err;
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_SCAN,
                                                   .sbuf = sbuf,
                                                   .rbuf = rbuf,
                                                   .rcount = (size_t)count,
                                                   .rdt = dt,
                                                   .op = o,
                                                   .exclusive = exclusive});
}

#define SCAN_FORMS(_s, _C, _D)                                                                     \
    int PMPI_Scan##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,         \
                      MPI_Op op, MPI_Comm comm) {                                                  \
        return tdm_mpi_coll_scan(sendbuf, recvbuf, count, datatype, op, comm, NULL,                \
                                 "MPI_Scan" #_s, TDM_CALL_BLOCKING, false);                        \
    }                                                                                              \
    TDM_WEAK(MPI_Scan##_s)                                                                         \
    int PMPI_Iscan##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,        \
                       MPI_Op op, MPI_Comm comm, MPI_Request *request) {                           \
        return tdm_mpi_coll_scan(sendbuf, recvbuf, count, datatype, op, comm, request,             \
                                 "MPI_Iscan" #_s, TDM_CALL_NONBLOCKING, false);                    \
    }                                                                                              \
    TDM_WEAK(MPI_Iscan##_s)                                                                        \
    int PMPI_Exscan##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,       \
                        MPI_Op op, MPI_Comm comm) {                                                \
        return tdm_mpi_coll_scan(sendbuf, recvbuf, count, datatype, op, comm, NULL,                \
                                 "MPI_Exscan" #_s, TDM_CALL_BLOCKING, true);                       \
    }                                                                                              \
    TDM_WEAK(MPI_Exscan##_s)                                                                       \
    int PMPI_Iexscan##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,      \
                         MPI_Op op, MPI_Comm comm, MPI_Request *request) {                         \
        return tdm_mpi_coll_scan(sendbuf, recvbuf, count, datatype, op, comm, request,             \
                                 "MPI_Iexscan" #_s, TDM_CALL_NONBLOCKING, true);                   \
    }                                                                                              \
    TDM_WEAK(MPI_Iexscan##_s)
TDM_MPI_COUNT_FORMS(SCAN_FORMS)

/* Some of the n counts is positive: a buffer given for them holds data (the alias
 * checks: MPI forbids aliased buffers that move data, and a program whose counts are
 * all 0 may well pass one empty buffer twice, as mpi4py does with empty arrays) */
static bool any_positive(tdm_coll_arr_t counts, int n) {
    for (int i = 0; i < n; i++)
        if (tdm_coll_arr_get(counts, i) > 0)
            return true;
    return false;
}

int tdm_mpi_coll_red_scatter(const void *sbuf, void *rbuf, tdm_coll_arr_t rcounts, MPI_Count rcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request,
                             const char *fn, tdm_mpi_call_mode_t mode) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    tdm_op_t *o;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_red_scatter(c, sbuf, rbuf, rcounts, rcount, datatype, op, request, fn,
                                         mode);
    TDM_GET_DTYPE(fn, c, datatype, dt);
    TDM_GET_OP(fn, c, op, dt, o);
    if (rcounts.p) {
        for (int i = 0; i < c->size; i++)
            if (tdm_coll_arr_get(rcounts, i) < 0)
                return tdm_mpi_err(c, MPI_ERR_COUNT, fn, "invalid recvcounts[%d]=%lld", i,
                                   (long long)tdm_coll_arr_get(rcounts, i));
    } else {
        TDM_CHECK_COUNT(fn, c, rcount);
    }
    TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
    CHECK_ALIAS(fn, c, sbuf, rbuf,
                dt->size > 0 && (rcounts.p ? any_positive(rcounts, c->size) : rcount > 0));
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_REDUCE_SCATTER,
                                                   .sbuf = sbuf,
                                                   .rbuf = rbuf,
                                                   .rcounts = rcounts,
                                                   .rcount = (size_t)rcount,
                                                   .rdt = dt,
                                                   .op = o});
}

#define RED_SCATTER_FORMS(_s, _C, _D)                                                              \
    int PMPI_Reduce_scatter##_s(const void *sendbuf, void *recvbuf, const _C recvcounts[],         \
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {                 \
        if (!recvcounts)                                                                           \
            return tdm_mpi_err(tdm_comm_get(comm), MPI_ERR_ARG, "MPI_Reduce_scatter" #_s,          \
                               "recvcounts is NULL");                                              \
        return tdm_mpi_coll_red_scatter(sendbuf, recvbuf, TDM_MPI_ARR(recvcounts), 0, datatype,    \
                                        op, comm, NULL, "MPI_Reduce_scatter" #_s,                  \
                                        TDM_CALL_BLOCKING);                                        \
    }                                                                                              \
    TDM_WEAK(MPI_Reduce_scatter##_s)                                                               \
    int PMPI_Ireduce_scatter##_s(const void *sendbuf, void *recvbuf, const _C recvcounts[],        \
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,                  \
                                 MPI_Request *request) {                                           \
        if (!recvcounts)                                                                           \
            return tdm_mpi_err(tdm_comm_get(comm), MPI_ERR_ARG, "MPI_Ireduce_scatter" #_s,         \
                               "recvcounts is NULL");                                              \
        return tdm_mpi_coll_red_scatter(sendbuf, recvbuf, TDM_MPI_ARR(recvcounts), 0, datatype,    \
                                        op, comm, request, "MPI_Ireduce_scatter" #_s,              \
                                        TDM_CALL_NONBLOCKING);                                     \
    }                                                                                              \
    TDM_WEAK(MPI_Ireduce_scatter##_s)                                                              \
    int PMPI_Reduce_scatter_block##_s(const void *sendbuf, void *recvbuf, _C recvcount,            \
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {           \
        return tdm_mpi_coll_red_scatter(sendbuf, recvbuf, TDM_COLL_ARR_NONE, recvcount, datatype,  \
                                        op, comm, NULL, "MPI_Reduce_scatter_block" #_s,            \
                                        TDM_CALL_BLOCKING);                                        \
    }                                                                                              \
    TDM_WEAK(MPI_Reduce_scatter_block##_s)                                                         \
    int PMPI_Ireduce_scatter_block##_s(const void *sendbuf, void *recvbuf, _C recvcount,           \
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,            \
                                       MPI_Request *request) {                                     \
        return tdm_mpi_coll_red_scatter(sendbuf, recvbuf, TDM_COLL_ARR_NONE, recvcount, datatype,  \
                                        op, comm, request, "MPI_Ireduce_scatter_block" #_s,        \
                                        TDM_CALL_NONBLOCKING);                                     \
    }                                                                                              \
    TDM_WEAK(MPI_Ireduce_scatter_block##_s)
TDM_MPI_COUNT_FORMS(RED_SCATTER_FORMS)

/* ---- Gather / Scatter ---- */

static int check_counts(const char *fn, tdm_comm_t *c, tdm_coll_arr_t counts, tdm_coll_arr_t displs,
                        const char *what) {
    if (!counts.p || !displs.p)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s or its displacements are NULL", what);
    for (int i = 0; i < c->size; i++)
        if (tdm_coll_arr_get(counts, i) < 0)
            return tdm_mpi_err(c, MPI_ERR_COUNT, fn, "invalid %s[%d]=%lld", what, i,
                               (long long)tdm_coll_arr_get(counts, i));
    return MPI_SUCCESS;
}

int tdm_mpi_coll_gather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                        MPI_Count rcount, tdm_coll_arr_t rcounts, tdm_coll_arr_t displs,
                        MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request,
                        const char *fn, tdm_mpi_call_mode_t mode, bool v) {
    tdm_comm_t *c;
    tdm_dtype_t *sdt = NULL, *rdt = NULL;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_gather(c, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype,
                                    root, request, fn, mode, v);
    CHECK_ROOT(fn, c, root);
    bool am_root = c->rank == root;
    if (!(am_root && sbuf == MPI_IN_PLACE)) {
        TDM_CHECK_NOT_IN_PLACE(fn, c, sbuf, "the send buffer at a non-root rank");
        TDM_CHECK_COUNT(fn, c, scount);
        TDM_GET_DTYPE(fn, c, stype, sdt);
    }
    if (am_root) {
        TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
        TDM_GET_DTYPE(fn, c, rtype, rdt);
        if (v) {
            int err = check_counts(fn, c, rcounts, displs, "recvcounts");
            if (err)
                return err;
        } else {
            TDM_CHECK_COUNT(fn, c, rcount);
        }
        CHECK_ALIAS(fn, c, sbuf, rbuf, scount > 0);
    }
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    if (!sdt)
        sdt = rdt;
    if (mode == TDM_CALL_BLOCKING)
        return blocking_done(c, fn,
                             tdm_coll_gatherv(sbuf, (size_t)(scount > 0 ? scount : 0), sdt, rbuf,
                                              v ? rcounts : TDM_COLL_ARR_NONE,
                                              v ? displs : TDM_COLL_ARR_NONE,
                                              (size_t)(rcount > 0 ? rcount : 0), rdt ? rdt : sdt,
                                              root, !v, c, NULL));
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_GATHERV,
                                                   .sbuf = sbuf,
                                                   .scount = (size_t)scount,
                                                   .sdt = sdt,
                                                   .rbuf = rbuf,
                                                   .rcounts = v ? rcounts : TDM_COLL_ARR_NONE,
                                                   .rdispls = v ? displs : TDM_COLL_ARR_NONE,
                                                   .rcount = (size_t)(rcount > 0 ? rcount : 0),
                                                   .rdt = rdt ? rdt : sdt,
                                                   .root = root,
                                                   .fixed = !v});
}

#define GATHER_FORMS(_s, _C, _D)                                                                   \
    int PMPI_Gather##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype, void *recvbuf,   \
                        _C recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {            \
        return tdm_mpi_coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,               \
                                   TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE, recvtype, root, comm,     \
                                   NULL, "MPI_Gather" #_s, TDM_CALL_BLOCKING, false);              \
    }                                                                                              \
    TDM_WEAK(MPI_Gather##_s)                                                                       \
    int PMPI_Igather##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype, void *recvbuf,  \
                         _C recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,             \
                         MPI_Request *request) {                                                   \
        return tdm_mpi_coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,               \
                                   TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE, recvtype, root, comm,     \
                                   request, "MPI_Igather" #_s, TDM_CALL_NONBLOCKING, false);       \
    }                                                                                              \
    TDM_WEAK(MPI_Igather##_s)                                                                      \
    int PMPI_Gatherv##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype, void *recvbuf,  \
                         const _C recvcounts[], const _D displs[], MPI_Datatype recvtype,          \
                         int root, MPI_Comm comm) {                                                \
        return tdm_mpi_coll_gather(sendbuf, sendcount, sendtype, recvbuf, 0,                       \
                                   TDM_MPI_ARR(recvcounts), TDM_MPI_ARR(displs), recvtype, root,   \
                                   comm, NULL, "MPI_Gatherv" #_s, TDM_CALL_BLOCKING, true);        \
    }                                                                                              \
    TDM_WEAK(MPI_Gatherv##_s)                                                                      \
    int PMPI_Igatherv##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype, void *recvbuf, \
                          const _C recvcounts[], const _D displs[], MPI_Datatype recvtype,         \
                          int root, MPI_Comm comm, MPI_Request *request) {                         \
        return tdm_mpi_coll_gather(sendbuf, sendcount, sendtype, recvbuf, 0,                       \
                                   TDM_MPI_ARR(recvcounts), TDM_MPI_ARR(displs), recvtype, root,   \
                                   comm, request, "MPI_Igatherv" #_s, TDM_CALL_NONBLOCKING, true); \
    }                                                                                              \
    TDM_WEAK(MPI_Igatherv##_s)
TDM_MPI_COUNT_FORMS(GATHER_FORMS)

int tdm_mpi_coll_scatter(const void *sbuf, MPI_Count scount, tdm_coll_arr_t scounts,
                         tdm_coll_arr_t displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                         MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request,
                         const char *fn, tdm_mpi_call_mode_t mode, bool v) {
    tdm_comm_t *c;
    tdm_dtype_t *sdt = NULL, *rdt = NULL;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_scatter(c, sbuf, scount, scounts, displs, stype, rbuf, rcount, rtype,
                                     root, request, fn, mode, v);
    CHECK_ROOT(fn, c, root);
    bool am_root = c->rank == root;
    if (!(am_root && rbuf == MPI_IN_PLACE)) {
        TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer at a non-root rank");
        TDM_CHECK_COUNT(fn, c, rcount);
        TDM_GET_DTYPE(fn, c, rtype, rdt);
    }
    if (am_root) {
        TDM_CHECK_NOT_IN_PLACE(fn, c, sbuf, "the send buffer");
        TDM_GET_DTYPE(fn, c, stype, sdt);
        if (v) {
            int err = check_counts(fn, c, scounts, displs, "sendcounts");
            if (err)
                return err;
        } else {
            TDM_CHECK_COUNT(fn, c, scount);
        }
        CHECK_ALIAS(fn, c, sbuf, rbuf, rcount > 0);
    }
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    if (!rdt)
        rdt = sdt;
    if (mode == TDM_CALL_BLOCKING)
        return blocking_done(
            c, fn,
            tdm_coll_scatterv(sbuf, v ? scounts : TDM_COLL_ARR_NONE, v ? displs : TDM_COLL_ARR_NONE,
                              (size_t)(scount > 0 ? scount : 0), sdt ? sdt : rdt, rbuf,
                              (size_t)(rcount > 0 ? rcount : 0), rdt, root, !v, c, NULL));
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_SCATTERV,
                                                   .sbuf = sbuf,
                                                   .scounts = v ? scounts : TDM_COLL_ARR_NONE,
                                                   .sdispls = v ? displs : TDM_COLL_ARR_NONE,
                                                   .scount = (size_t)(scount > 0 ? scount : 0),
                                                   .sdt = sdt ? sdt : rdt,
                                                   .rbuf = rbuf,
                                                   .rcount = (size_t)(rcount > 0 ? rcount : 0),
                                                   .rdt = rdt,
                                                   .root = root,
                                                   .fixed = !v});
}

#define SCATTER_FORMS(_s, _C, _D)                                                                  \
    int PMPI_Scatter##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype, void *recvbuf,  \
                         _C recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {           \
        return tdm_mpi_coll_scatter(sendbuf, sendcount, TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE,      \
                                    sendtype, recvbuf, recvcount, recvtype, root, comm, NULL,      \
                                    "MPI_Scatter" #_s, TDM_CALL_BLOCKING, false);                  \
    }                                                                                              \
    TDM_WEAK(MPI_Scatter##_s)                                                                      \
    int PMPI_Iscatter##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype, void *recvbuf, \
                          _C recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,            \
                          MPI_Request *request) {                                                  \
        return tdm_mpi_coll_scatter(sendbuf, sendcount, TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE,      \
                                    sendtype, recvbuf, recvcount, recvtype, root, comm, request,   \
                                    "MPI_Iscatter" #_s, TDM_CALL_NONBLOCKING, false);              \
    }                                                                                              \
    TDM_WEAK(MPI_Iscatter##_s)                                                                     \
    int PMPI_Scatterv##_s(const void *sendbuf, const _C sendcounts[], const _D displs[],           \
                          MPI_Datatype sendtype, void *recvbuf, _C recvcount,                      \
                          MPI_Datatype recvtype, int root, MPI_Comm comm) {                        \
        return tdm_mpi_coll_scatter(sendbuf, 0, TDM_MPI_ARR(sendcounts), TDM_MPI_ARR(displs),      \
                                    sendtype, recvbuf, recvcount, recvtype, root, comm, NULL,      \
                                    "MPI_Scatterv" #_s, TDM_CALL_BLOCKING, true);                  \
    }                                                                                              \
    TDM_WEAK(MPI_Scatterv##_s)                                                                     \
    int PMPI_Iscatterv##_s(const void *sendbuf, const _C sendcounts[], const _D displs[],          \
                           MPI_Datatype sendtype, void *recvbuf, _C recvcount,                     \
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) { \
        return tdm_mpi_coll_scatter(sendbuf, 0, TDM_MPI_ARR(sendcounts), TDM_MPI_ARR(displs),      \
                                    sendtype, recvbuf, recvcount, recvtype, root, comm, request,   \
                                    "MPI_Iscatterv" #_s, TDM_CALL_NONBLOCKING, true);              \
    }                                                                                              \
    TDM_WEAK(MPI_Iscatterv##_s)
TDM_MPI_COUNT_FORMS(SCATTER_FORMS)

/* ---- Allgather ---- */

int tdm_mpi_coll_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                           MPI_Count rcount, tdm_coll_arr_t rcounts, tdm_coll_arr_t displs,
                           MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request, const char *fn,
                           tdm_mpi_call_mode_t mode, bool v) {
    tdm_comm_t *c;
    tdm_dtype_t *sdt = NULL, *rdt;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_allgather(c, sbuf, scount, stype, rbuf, rcount, rcounts, displs, rtype,
                                       request, fn, mode, v);
    if (sbuf != MPI_IN_PLACE) {
        TDM_CHECK_COUNT(fn, c, scount);
        TDM_GET_DTYPE(fn, c, stype, sdt);
    }
    TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
    TDM_GET_DTYPE(fn, c, rtype, rdt);
    if (v) {
        int err = check_counts(fn, c, rcounts, displs, "recvcounts");
        if (err)
            return err;
    } else {
        TDM_CHECK_COUNT(fn, c, rcount);
    }
    CHECK_ALIAS(fn, c, sbuf, rbuf, scount > 0);
    TDM_CHECK_REQ(fn, c, request, mode != TDM_CALL_BLOCKING);
    if (mode == TDM_CALL_BLOCKING)
        return blocking_done(
            c, fn,
            tdm_coll_allgatherv(sbuf, (size_t)(scount > 0 ? scount : 0), sdt ? sdt : rdt, rbuf,
                                v ? rcounts : TDM_COLL_ARR_NONE, v ? displs : TDM_COLL_ARR_NONE,
                                (size_t)(rcount > 0 ? rcount : 0), rdt, c, NULL));
    return tdm_mpi_ccall_submit(c, fn, mode, request,
                                &(tdm_coll_call_t){.kind = TDM_COLL_CALL_ALLGATHERV,
                                                   .sbuf = sbuf,
                                                   .scount = (size_t)(scount > 0 ? scount : 0),
                                                   .sdt = sdt ? sdt : rdt,
                                                   .rbuf = rbuf,
                                                   .rcounts = v ? rcounts : TDM_COLL_ARR_NONE,
                                                   .rdispls = v ? displs : TDM_COLL_ARR_NONE,
                                                   .rcount = (size_t)(rcount > 0 ? rcount : 0),
                                                   .rdt = rdt});
}

#define ALLGATHER_FORMS(_s, _C, _D)                                                                \
    int PMPI_Allgather##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,               \
                           void *recvbuf, _C recvcount, MPI_Datatype recvtype, MPI_Comm comm) {    \
        return tdm_mpi_coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,            \
                                      TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE, recvtype, comm, NULL,  \
                                      "MPI_Allgather" #_s, TDM_CALL_BLOCKING, false);              \
    }                                                                                              \
    TDM_WEAK(MPI_Allgather##_s)                                                                    \
    int PMPI_Iallgather##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,              \
                            void *recvbuf, _C recvcount, MPI_Datatype recvtype, MPI_Comm comm,     \
                            MPI_Request *request) {                                                \
        return tdm_mpi_coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,            \
                                      TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE, recvtype, comm,        \
                                      request, "MPI_Iallgather" #_s, TDM_CALL_NONBLOCKING, false); \
    }                                                                                              \
    TDM_WEAK(MPI_Iallgather##_s)                                                                   \
    int PMPI_Allgatherv##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,              \
                            void *recvbuf, const _C recvcounts[], const _D displs[],               \
                            MPI_Datatype recvtype, MPI_Comm comm) {                                \
        return tdm_mpi_coll_allgather(sendbuf, sendcount, sendtype, recvbuf, 0,                    \
                                      TDM_MPI_ARR(recvcounts), TDM_MPI_ARR(displs), recvtype,      \
                                      comm, NULL, "MPI_Allgatherv" #_s, TDM_CALL_BLOCKING, true);  \
    }                                                                                              \
    TDM_WEAK(MPI_Allgatherv##_s)                                                                   \
    int PMPI_Iallgatherv##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,             \
                             void *recvbuf, const _C recvcounts[], const _D displs[],              \
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {         \
        return tdm_mpi_coll_allgather(sendbuf, sendcount, sendtype, recvbuf, 0,                    \
                                      TDM_MPI_ARR(recvcounts), TDM_MPI_ARR(displs), recvtype,      \
                                      comm, request, "MPI_Iallgatherv" #_s, TDM_CALL_NONBLOCKING,  \
                                      true);                                                       \
    }                                                                                              \
    TDM_WEAK(MPI_Iallgatherv##_s)
TDM_MPI_COUNT_FORMS(ALLGATHER_FORMS)

/* ---- Alltoall(v,w) ---- */

int tdm_mpi_coll_alltoall(const void *sbuf, MPI_Count scount, tdm_coll_arr_t scounts,
                          tdm_coll_arr_t sdispls, MPI_Datatype stype, const MPI_Datatype *stypes,
                          void *rbuf, MPI_Count rcount, tdm_coll_arr_t rcounts,
                          tdm_coll_arr_t rdispls, MPI_Datatype rtype, const MPI_Datatype *rtypes,
                          MPI_Comm comm, MPI_Request *request, const char *fn,
                          tdm_mpi_call_mode_t mode, int form /* 0 plain, 1 v, 2 w */) {
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    if (TDM_UNLIKELY(c->inter))
        return tdm_mpi_inter_alltoall(c, sbuf, scount, scounts, sdispls, stype, stypes, rbuf,
                                      rcount, rcounts, rdispls, rtype, rtypes, request, fn, mode,
                                      form);
    int p = c->size;
    tdm_dtype_t *sdt = NULL, *rdt = NULL;
    tdm_dtype_t **sdts = NULL, **rdts = NULL;
    TDM_CHECK_NOT_IN_PLACE(fn, c, rbuf, "the receive buffer");
    if (form == 0) {
        TDM_CHECK_COUNT(fn, c, rcount);
        TDM_GET_DTYPE(fn, c, rtype, rdt);
        if (sbuf != MPI_IN_PLACE) {
            TDM_CHECK_COUNT(fn, c, scount);
            TDM_GET_DTYPE(fn, c, stype, sdt);
        }
    } else {
        int err = check_counts(fn, c, rcounts, rdispls, "recvcounts");
        if (err)
            return err;
        if (sbuf != MPI_IN_PLACE && (err = check_counts(fn, c, scounts, sdispls, "sendcounts")))
            return err;
        if (form == 1) {
            TDM_GET_DTYPE(fn, c, rtype, rdt);
            if (sbuf != MPI_IN_PLACE)
                TDM_GET_DTYPE(fn, c, stype, sdt);
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
    if (TDM_UNLIKELY(sbuf == rbuf && sbuf != NULL) &&
        (form == 0 ? scount > 0 && rcount > 0 : any_positive(scounts, p))) {
        free(sdts);
        CHECK_ALIAS(fn, c, sbuf, rbuf, true);
    }
    if (mode != TDM_CALL_BLOCKING && !request) {
        free(sdts);
        return tdm_mpi_err(c, MPI_ERR_REQUEST, fn, "request argument is NULL");
    }
    if (mode == TDM_CALL_BLOCKING) {
        int err =
            blocking_done(c, fn,
                          tdm_coll_alltoallw(sbuf, form ? scounts : TDM_COLL_ARR_NONE,
                                             form ? sdispls : TDM_COLL_ARR_NONE, sdts,
                                             (size_t)(scount > 0 ? scount : 0), sdt ? sdt : rdt,
                                             rbuf, form ? rcounts : TDM_COLL_ARR_NONE,
                                             form ? rdispls : TDM_COLL_ARR_NONE, rdts,
                                             (size_t)(rcount > 0 ? rcount : 0), rdt, c, NULL));
        free(sdts);
        return err;
    }
    int err = tdm_mpi_ccall_submit(c, fn, mode, request,
                                   &(tdm_coll_call_t){.kind = TDM_COLL_CALL_ALLTOALLW,
                                                      .sbuf = sbuf,
                                                      .scounts = form ? scounts : TDM_COLL_ARR_NONE,
                                                      .sdispls = form ? sdispls : TDM_COLL_ARR_NONE,
                                                      .sdts = sdts,
                                                      .scount = (size_t)(scount > 0 ? scount : 0),
                                                      .sdt = sdt ? sdt : rdt,
                                                      .rbuf = rbuf,
                                                      .rcounts = form ? rcounts : TDM_COLL_ARR_NONE,
                                                      .rdispls = form ? rdispls : TDM_COLL_ARR_NONE,
                                                      .rdts = rdts,
                                                      .rcount = (size_t)(rcount > 0 ? rcount : 0),
                                                      .rdt = rdt});
    free(sdts);
    return err;
}

#define ALLTOALL_FORMS(_s, _C, _D)                                                                 \
    int PMPI_Alltoall##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype, void *recvbuf, \
                          _C recvcount, MPI_Datatype recvtype, MPI_Comm comm) {                    \
        return tdm_mpi_coll_alltoall(sendbuf, sendcount, TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE,     \
                                     sendtype, NULL, recvbuf, recvcount, TDM_COLL_ARR_NONE,        \
                                     TDM_COLL_ARR_NONE, recvtype, NULL, comm, NULL,                \
                                     "MPI_Alltoall" #_s, TDM_CALL_BLOCKING, 0);                    \
    }                                                                                              \
    TDM_WEAK(MPI_Alltoall##_s)                                                                     \
    int PMPI_Ialltoall##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,               \
                           void *recvbuf, _C recvcount, MPI_Datatype recvtype, MPI_Comm comm,      \
                           MPI_Request *request) {                                                 \
        return tdm_mpi_coll_alltoall(sendbuf, sendcount, TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE,     \
                                     sendtype, NULL, recvbuf, recvcount, TDM_COLL_ARR_NONE,        \
                                     TDM_COLL_ARR_NONE, recvtype, NULL, comm, request,             \
                                     "MPI_Ialltoall" #_s, TDM_CALL_NONBLOCKING, 0);                \
    }                                                                                              \
    TDM_WEAK(MPI_Ialltoall##_s)                                                                    \
    int PMPI_Alltoallv##_s(const void *sendbuf, const _C sendcounts[], const _D sdispls[],         \
                           MPI_Datatype sendtype, void *recvbuf, const _C recvcounts[],            \
                           const _D rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {             \
        return tdm_mpi_coll_alltoall(sendbuf, 0, TDM_MPI_ARR(sendcounts), TDM_MPI_ARR(sdispls),    \
                                     sendtype, NULL, recvbuf, 0, TDM_MPI_ARR(recvcounts),          \
                                     TDM_MPI_ARR(rdispls), recvtype, NULL, comm, NULL,             \
                                     "MPI_Alltoallv" #_s, TDM_CALL_BLOCKING, 1);                   \
    }                                                                                              \
    TDM_WEAK(MPI_Alltoallv##_s)                                                                    \
    int PMPI_Ialltoallv##_s(const void *sendbuf, const _C sendcounts[], const _D sdispls[],        \
                            MPI_Datatype sendtype, void *recvbuf, const _C recvcounts[],           \
                            const _D rdispls[], MPI_Datatype recvtype, MPI_Comm comm,              \
                            MPI_Request *request) {                                                \
        return tdm_mpi_coll_alltoall(sendbuf, 0, TDM_MPI_ARR(sendcounts), TDM_MPI_ARR(sdispls),    \
                                     sendtype, NULL, recvbuf, 0, TDM_MPI_ARR(recvcounts),          \
                                     TDM_MPI_ARR(rdispls), recvtype, NULL, comm, request,          \
                                     "MPI_Ialltoallv" #_s, TDM_CALL_NONBLOCKING, 1);               \
    }                                                                                              \
    TDM_WEAK(MPI_Ialltoallv##_s)                                                                   \
    int PMPI_Alltoallw##_s(const void *sendbuf, const _C sendcounts[], const _D sdispls[],         \
                           const MPI_Datatype sendtypes[], void *recvbuf, const _C recvcounts[],   \
                           const _D rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {    \
        return tdm_mpi_coll_alltoall(                                                              \
            sendbuf, 0, TDM_MPI_ARR(sendcounts), TDM_MPI_ARR(sdispls), MPI_DATATYPE_NULL,          \
            sendtypes, recvbuf, 0, TDM_MPI_ARR(recvcounts), TDM_MPI_ARR(rdispls),                  \
            MPI_DATATYPE_NULL, recvtypes, comm, NULL, "MPI_Alltoallw" #_s, TDM_CALL_BLOCKING, 2);  \
    }                                                                                              \
    TDM_WEAK(MPI_Alltoallw##_s)                                                                    \
    int PMPI_Ialltoallw##_s(const void *sendbuf, const _C sendcounts[], const _D sdispls[],        \
                            const MPI_Datatype sendtypes[], void *recvbuf, const _C recvcounts[],  \
                            const _D rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,     \
                            MPI_Request *request) {                                                \
        return tdm_mpi_coll_alltoall(sendbuf, 0, TDM_MPI_ARR(sendcounts), TDM_MPI_ARR(sdispls),    \
                                     MPI_DATATYPE_NULL, sendtypes, recvbuf, 0,                     \
                                     TDM_MPI_ARR(recvcounts), TDM_MPI_ARR(rdispls),                \
                                     MPI_DATATYPE_NULL, recvtypes, comm, request,                  \
                                     "MPI_Ialltoallw" #_s, TDM_CALL_NONBLOCKING, 2);               \
    }                                                                                              \
    TDM_WEAK(MPI_Ialltoallw##_s)
TDM_MPI_COUNT_FORMS(ALLTOALL_FORMS)
