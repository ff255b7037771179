/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The persistent collectives' bindings (MPI-4.1 6.13): MPI_<Coll>_init checks its
 * arguments with the same code as MPI_I<coll> (coll.c, coll_inter.c; topo.c for
 * the neighbourhood forms) and binds them to an inactive persistent request;
 * src/coll/persist.c keeps the copy, takes the tag and builds a schedule at each
 * MPI_Start.
 */
#include "coll_persist.h"

int tdm_mpi_coll_persist_init(tdm_comm_t *c, const char *fn, const tdm_coll_call_t *cc,
                              MPI_Request *request) {
    tdm_req_t *r;
    if (tdm_coll_persist_init(c, cc, &r) != TDM_OK)
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
    *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}

int tdm_mpi_coll_persist_start(tdm_req_t *p, const char *fn) {
    tdm_rc_t rc = tdm_coll_persist_start(p);
    return TDM_UNLIKELY(rc != TDM_OK) ? tdm_mpi_coll_error(p->comm, fn, rc) : MPI_SUCCESS;
}

/* ---- bindings ---- */

int tdm_mpi_coll_check_info(const char *fn, MPI_Comm comm, MPI_Info info) {
    TDM_CHECK_INIT(fn);
    if (info != MPI_INFO_NULL && !tdm_info_get(info))
        return tdm_mpi_err(tdm_comm_get(comm), MPI_ERR_INFO, fn, "invalid info (handle %#x)",
                           (unsigned)info);
    return MPI_SUCCESS;
}

#define P TDM_CALL_PERSISTENT
#define INFO(_fn)                                                                                  \
    do {                                                                                           \
        int err_ = tdm_mpi_coll_check_info(_fn, comm, info);                                       \
        if (err_)                                                                                  \
            return err_;                                                                           \
    } while (0)

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    INFO("MPI_Barrier_init");
    return tdm_mpi_coll_barrier(comm, request, "MPI_Barrier_init", P);
}
TDM_WEAK(MPI_Barrier_init)

/* The int form (MPI_X_init) and the large-count one (MPI_X_init_c) of each
 * collective (TDM_MPI_COUNT_FORMS): _C the count type, _D the displacements'. */
#define INIT_FORMS(_s, _C, _D)                                                                     \
    int PMPI_Bcast_init##_s(void *buffer, _C count, MPI_Datatype datatype, int root,               \
                            MPI_Comm comm, MPI_Info info, MPI_Request *request) {                  \
        INFO("MPI_Bcast_init" #_s);                                                                \
        return tdm_mpi_coll_bcast(buffer, count, datatype, root, comm, request,                    \
                                  "MPI_Bcast_init" #_s, P);                                        \
    }                                                                                              \
    TDM_WEAK(MPI_Bcast_init##_s)                                                                   \
                                                                                                   \
    int PMPI_Reduce_init##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,  \
                             MPI_Op op, int root, MPI_Comm comm, MPI_Info info,                    \
                             MPI_Request *request) {                                               \
        INFO("MPI_Reduce_init" #_s);                                                               \
        return tdm_mpi_coll_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request,     \
                                   "MPI_Reduce_init" #_s, P);                                      \
    }                                                                                              \
    TDM_WEAK(MPI_Reduce_init##_s)                                                                  \
                                                                                                   \
    int PMPI_Allreduce_init##_s(const void *sendbuf, void *recvbuf, _C count,                      \
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,    \
                                MPI_Request *request) {                                            \
        INFO("MPI_Allreduce_init" #_s);                                                            \
        return tdm_mpi_coll_allreduce(sendbuf, recvbuf, count, datatype, op, comm, request,        \
                                      "MPI_Allreduce_init" #_s, P);                                \
    }                                                                                              \
    TDM_WEAK(MPI_Allreduce_init##_s)                                                               \
                                                                                                   \
    int PMPI_Scan_init##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,    \
                           MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {        \
        INFO("MPI_Scan_init" #_s);                                                                 \
        return tdm_mpi_coll_scan(sendbuf, recvbuf, count, datatype, op, comm, request,             \
                                 "MPI_Scan_init" #_s, P, false);                                   \
    }                                                                                              \
    TDM_WEAK(MPI_Scan_init##_s)                                                                    \
                                                                                                   \
    int PMPI_Exscan_init##_s(const void *sendbuf, void *recvbuf, _C count, MPI_Datatype datatype,  \
                             MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {      \
        INFO("MPI_Exscan_init" #_s);                                                               \
        return tdm_mpi_coll_scan(sendbuf, recvbuf, count, datatype, op, comm, request,             \
                                 "MPI_Exscan_init" #_s, P, true);                                  \
    }                                                                                              \
    TDM_WEAK(MPI_Exscan_init##_s)                                                                  \
                                                                                                   \
    int PMPI_Reduce_scatter_init##_s(const void *sendbuf, void *recvbuf, const _C recvcounts[],    \
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,              \
                                     MPI_Info info, MPI_Request *request) {                        \
        INFO("MPI_Reduce_scatter_init" #_s);                                                       \
        if (!recvcounts)                                                                           \
            return tdm_mpi_err(tdm_comm_get(comm), MPI_ERR_ARG, "MPI_Reduce_scatter_init" #_s,     \
                               "recvcounts is NULL");                                              \
        return tdm_mpi_coll_red_scatter(sendbuf, recvbuf, TDM_MPI_ARR(recvcounts), 0, datatype,    \
                                        op, comm, request, "MPI_Reduce_scatter_init" #_s, P);      \
    }                                                                                              \
    TDM_WEAK(MPI_Reduce_scatter_init##_s)                                                          \
                                                                                                   \
    int PMPI_Reduce_scatter_block_init##_s(const void *sendbuf, void *recvbuf, _C recvcount,       \
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,        \
                                           MPI_Info info, MPI_Request *request) {                  \
        INFO("MPI_Reduce_scatter_block_init" #_s);                                                 \
        return tdm_mpi_coll_red_scatter(sendbuf, recvbuf, TDM_COLL_ARR_NONE, recvcount, datatype,  \
                                        op, comm, request, "MPI_Reduce_scatter_block_init" #_s,    \
                                        P);                                                        \
    }                                                                                              \
    TDM_WEAK(MPI_Reduce_scatter_block_init##_s)                                                    \
                                                                                                   \
    int PMPI_Gather_init##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,             \
                             void *recvbuf, _C recvcount, MPI_Datatype recvtype, int root,         \
                             MPI_Comm comm, MPI_Info info, MPI_Request *request) {                 \
        INFO("MPI_Gather_init" #_s);                                                               \
        return tdm_mpi_coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,               \
                                   TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE, recvtype, root, comm,     \
                                   request, "MPI_Gather_init" #_s, P, false);                      \
    }                                                                                              \
    TDM_WEAK(MPI_Gather_init##_s)                                                                  \
                                                                                                   \
    int PMPI_Gatherv_init##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,            \
                              void *recvbuf, const _C recvcounts[], const _D displs[],             \
                              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,       \
                              MPI_Request *request) {                                              \
        INFO("MPI_Gatherv_init" #_s);                                                              \
        return tdm_mpi_coll_gather(sendbuf, sendcount, sendtype, recvbuf, 0,                       \
                                   TDM_MPI_ARR(recvcounts), TDM_MPI_ARR(displs), recvtype, root,   \
                                   comm, request, "MPI_Gatherv_init" #_s, P, true);                \
    }                                                                                              \
    TDM_WEAK(MPI_Gatherv_init##_s)                                                                 \
                                                                                                   \
    int PMPI_Scatter_init##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,            \
                              void *recvbuf, _C recvcount, MPI_Datatype recvtype, int root,        \
                              MPI_Comm comm, MPI_Info info, MPI_Request *request) {                \
        INFO("MPI_Scatter_init" #_s);                                                              \
        return tdm_mpi_coll_scatter(sendbuf, sendcount, TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE,      \
                                    sendtype, recvbuf, recvcount, recvtype, root, comm, request,   \
                                    "MPI_Scatter_init" #_s, P, false);                             \
    }                                                                                              \
    TDM_WEAK(MPI_Scatter_init##_s)                                                                 \
                                                                                                   \
    int PMPI_Scatterv_init##_s(const void *sendbuf, const _C sendcounts[], const _D displs[],      \
                               MPI_Datatype sendtype, void *recvbuf, _C recvcount,                 \
                               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,      \
                               MPI_Request *request) {                                             \
        INFO("MPI_Scatterv_init" #_s);                                                             \
        return tdm_mpi_coll_scatter(sendbuf, 0, TDM_MPI_ARR(sendcounts), TDM_MPI_ARR(displs),      \
                                    sendtype, recvbuf, recvcount, recvtype, root, comm, request,   \
                                    "MPI_Scatterv_init" #_s, P, true);                             \
    }                                                                                              \
    TDM_WEAK(MPI_Scatterv_init##_s)                                                                \
                                                                                                   \
    int PMPI_Allgather_init##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,          \
                                void *recvbuf, _C recvcount, MPI_Datatype recvtype, MPI_Comm comm, \
                                MPI_Info info, MPI_Request *request) {                             \
        INFO("MPI_Allgather_init" #_s);                                                            \
        return tdm_mpi_coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,            \
                                      TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE, recvtype, comm,        \
                                      request, "MPI_Allgather_init" #_s, P, false);                \
    }                                                                                              \
    TDM_WEAK(MPI_Allgather_init##_s)                                                               \
                                                                                                   \
    int PMPI_Allgatherv_init##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,         \
                                 void *recvbuf, const _C recvcounts[], const _D displs[],          \
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,              \
                                 MPI_Request *request) {                                           \
        INFO("MPI_Allgatherv_init" #_s);                                                           \
        return tdm_mpi_coll_allgather(sendbuf, sendcount, sendtype, recvbuf, 0,                    \
                                      TDM_MPI_ARR(recvcounts), TDM_MPI_ARR(displs), recvtype,      \
                                      comm, request, "MPI_Allgatherv_init" #_s, P, true);          \
    }                                                                                              \
    TDM_WEAK(MPI_Allgatherv_init##_s)                                                              \
                                                                                                   \
    int PMPI_Alltoall_init##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype,           \
                               void *recvbuf, _C recvcount, MPI_Datatype recvtype, MPI_Comm comm,  \
                               MPI_Info info, MPI_Request *request) {                              \
        INFO("MPI_Alltoall_init" #_s);                                                             \
        return tdm_mpi_coll_alltoall(sendbuf, sendcount, TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE,     \
                                     sendtype, NULL, recvbuf, recvcount, TDM_COLL_ARR_NONE,        \
                                     TDM_COLL_ARR_NONE, recvtype, NULL, comm, request,             \
                                     "MPI_Alltoall_init" #_s, P, 0);                               \
    }                                                                                              \
    TDM_WEAK(MPI_Alltoall_init##_s)                                                                \
                                                                                                   \
    int PMPI_Alltoallv_init##_s(const void *sendbuf, const _C sendcounts[], const _D sdispls[],    \
                                MPI_Datatype sendtype, void *recvbuf, const _C recvcounts[],       \
                                const _D rdispls[], MPI_Datatype recvtype, MPI_Comm comm,          \
                                MPI_Info info, MPI_Request *request) {                             \
        INFO("MPI_Alltoallv_init" #_s);                                                            \
        return tdm_mpi_coll_alltoall(sendbuf, 0, TDM_MPI_ARR(sendcounts), TDM_MPI_ARR(sdispls),    \
                                     sendtype, NULL, recvbuf, 0, TDM_MPI_ARR(recvcounts),          \
                                     TDM_MPI_ARR(rdispls), recvtype, NULL, comm, request,          \
                                     "MPI_Alltoallv_init" #_s, P, 1);                              \
    }                                                                                              \
    TDM_WEAK(MPI_Alltoallv_init##_s)                                                               \
                                                                                                   \
    int PMPI_Alltoallw_init##_s(                                                                   \
        const void *sendbuf, const _C sendcounts[], const _D sdispls[],                            \
        const MPI_Datatype sendtypes[], void *recvbuf, const _C recvcounts[], const _D rdispls[],  \
        const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request) {      \
        INFO("MPI_Alltoallw_init" #_s);                                                            \
        return tdm_mpi_coll_alltoall(                                                              \
            sendbuf, 0, TDM_MPI_ARR(sendcounts), TDM_MPI_ARR(sdispls), MPI_DATATYPE_NULL,          \
            sendtypes, recvbuf, 0, TDM_MPI_ARR(recvcounts), TDM_MPI_ARR(rdispls),                  \
            MPI_DATATYPE_NULL, recvtypes, comm, request, "MPI_Alltoallw_init" #_s, P, 2);          \
    }                                                                                              \
    TDM_WEAK(MPI_Alltoallw_init##_s)

TDM_MPI_COUNT_FORMS(INIT_FORMS)
