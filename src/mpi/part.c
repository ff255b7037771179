/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned point-to-point communication (MPI-4.1 chapter 4): the bindings
 * check their arguments and call src/p2p/part.h. The requests are persistent
 * (MPI_Start/Startall in pt2pt.c open a round, the Wait/Test family of
 * request.c completes it through `inner`); freeing or cancelling one whose
 * round is under way is refused here (MPI-4.1 4.2.1 calls it erroneous).
 */
#include "part.h"

#include "../comm/info.h"
#include "../p2p/part.h"

#include <limits.h>
#include <stdlib.h>

/* The data travels on the communicator's internal context (ctx + 1) with
 * negative tags; those comm/ uses for its own exchanges lie outside them. */
_Static_assert(TDM_COMM_TAG_INTER > -64 && TDM_COMM_TAG_GATHER > -64 &&
                   TDM_COMM_TAG_GROUP_BASE + TDM_COMM_TAG_GROUP_MASK < TDM_P2P_PART_TAG_MIN,
               "partitioned data tags are disjoint from the communicator's internal ones");

static int part_init(const char *fn, bool send, const void *buf, int partitions, MPI_Count count,
                     MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    TDM_GET_COMM(fn, comm, c);
    if (partitions < 1)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn,
                           "invalid partitions argument %d (must be at least 1)", partitions);
    TDM_CHECK_COUNT(fn, c, count);
    TDM_GET_DTYPE(fn, c, datatype, dt);
    /* the whole buffer, partitions x count items, must be describable in bytes */
    MPI_Count items;
    size_t bytes;
    if (__builtin_mul_overflow((MPI_Count)partitions, count, &items) ||
        __builtin_mul_overflow((size_t)items, dt->size, &bytes) || bytes > (size_t)LLONG_MAX)
        return tdm_mpi_err(c, MPI_ERR_COUNT, fn,
                           "partitions x count = %d x %lld items of %zu bytes overflows",
                           partitions, (long long)count, dt->size);
    TDM_CHECK_BUF(fn, c, buf, items, dt);
    if (!send && peer == MPI_ANY_SOURCE)
        return tdm_mpi_err(c, MPI_ERR_RANK, fn,
                           "source is MPI_ANY_SOURCE (a partitioned receive names its sender)");
    if (!send && tag == MPI_ANY_TAG)
        return tdm_mpi_err(c, MPI_ERR_TAG, fn,
                           "tag is MPI_ANY_TAG (a partitioned receive names its tag)");
    TDM_CHECK_RANK(fn, c, peer, send ? "destination" : "source", false);
    TDM_CHECK_TAG(fn, c, tag, false);
    TDM_CHECK_INFO(fn, c, info);
    TDM_CHECK_REQ(fn, c, request, true);
    tdm_part_args_t a = {.buf = (void *)buf,
                         .partitions = partitions,
                         .count = (size_t)count,
                         .dt = dt,
                         .peer = peer,
                         .peer_world = peer == MPI_PROC_NULL ? -1 : tdm_comm_peer_world(c, peer),
                         .self_rank = c->rank,
                         .tag = tag,
                         .ctx = c->ctx,
                         .data_ctx = c->ctx + 1,
                         .comm = c};
    tdm_req_t *r;
    tdm_rc_t rc = send ? tdm_p2p_psend_init(&a, &r) : tdm_p2p_precv_init(&a, &r);
    if (rc != TDM_OK)
        return tdm_mpi_err(c, tdm_mpi_class_of(rc), fn, "cannot create the request");
    *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return part_init("MPI_Psend_init", true, buf, partitions, count, datatype, dest, tag, comm,
                     info, request);
}
TDM_WEAK(MPI_Psend_init)

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                    int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return part_init("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag, comm,
                     info, request);
}
TDM_WEAK(MPI_Precv_init)

/* The active partitioned send a Pready call names (made while the library is in use), or
 * an error in *err. */
static tdm_req_t *pready_req(const char *fn, MPI_Request request, int *err) {
    if (TDM_UNLIKELY(tdm_mpi.users == 0)) {
        *err = tdm_mpi_err(NULL, MPI_ERR_OTHER, fn, "called %s", tdm_mpi_state_why());
        return NULL;
    }
    tdm_req_t *r = request == MPI_REQUEST_NULL ? NULL : tdm_mpi_req_get(request);
    *err = MPI_SUCCESS;
    if (!r || r->kind != TDM_REQ_PSEND) {
        *err = tdm_mpi_err(r ? r->comm : NULL, MPI_ERR_REQUEST, fn,
                           "request %#x is not a partitioned send (MPI_Psend_init)",
                           (unsigned)request);
        return NULL;
    }
    if (!r->active) {
        *err = tdm_mpi_err(r->comm, MPI_ERR_REQUEST, fn,
                           "partitioned send %#x is inactive (call MPI_Start first)",
                           (unsigned)request);
        return NULL;
    }
    return r;
}

/* Partition i of r may be marked ready now. */
static int check_partition(const char *fn, tdm_req_t *r, const char *what, int i) {
    int n = tdm_p2p_part_partitions(r);
    if (i < 0 || i >= n)
        return tdm_mpi_err(r->comm, MPI_ERR_ARG, fn,
                           "%s %d is out of range (the request has partitions 0..%d)", what, i,
                           n - 1);
    if (tdm_p2p_part_is_ready(r, i))
        return tdm_mpi_err(r->comm, MPI_ERR_ARG, fn,
                           "partition %d is already marked ready in this round", i);
    return MPI_SUCCESS;
}

int PMPI_Pready(int partition, MPI_Request request) {
    int err;
    tdm_req_t *r = pready_req("MPI_Pready", request, &err);
    if (!r)
        return err;
    if ((err = check_partition("MPI_Pready", r, "partition", partition)))
        return err;
    tdm_p2p_part_ready_range(r, partition, partition);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Pready)

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
    int err;
    const char *fn = "MPI_Pready_range";
    tdm_req_t *r = pready_req(fn, request, &err);
    if (!r)
        return err;
    if (partition_low > partition_high)
        return tdm_mpi_err(r->comm, MPI_ERR_ARG, fn, "partition_low %d is above partition_high %d",
                           partition_low, partition_high);
    /* every partition checked before any is marked: a refused call changes nothing */
    if ((err = check_partition(fn, r, "partition_low", partition_low)) ||
        (err = check_partition(fn, r, "partition_high", partition_high)))
        return err;
    for (int i = partition_low + 1; i < partition_high; i++)
        if ((err = check_partition(fn, r, "partition", i)))
            return err;
    tdm_p2p_part_ready_range(r, partition_low, partition_high);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Pready_range)

int PMPI_Pready_list(int length, int array_of_partitions[], MPI_Request request) {
    int err;
    const char *fn = "MPI_Pready_list";
    tdm_req_t *r = pready_req(fn, request, &err);
    if (!r)
        return err;
    if (length < 0)
        return tdm_mpi_err(r->comm, MPI_ERR_ARG, fn, "invalid length %d", length);
    if (length > 0 && !array_of_partitions)
        return tdm_mpi_err(r->comm, MPI_ERR_ARG, fn, "array_of_partitions is NULL");
    /* every entry checked before any is marked: a refused call changes nothing */
    int n = tdm_p2p_part_partitions(r);
    unsigned char *seen = length > 1 ? calloc((size_t)n / 8 + 1, 1) : NULL;
    if (length > 1 && !seen)
        return tdm_mpi_err(r->comm, MPI_ERR_NO_MEM, fn, "out of memory checking %d partitions",
                           length);
    for (int k = 0; k < length && !err; k++) {
        int i = array_of_partitions[k];
        err = check_partition(fn, r, "partition", i);
        if (!err && seen && (seen[i / 8] & (1u << (i % 8))))
            err = tdm_mpi_err(r->comm, MPI_ERR_ARG, fn,
                              "partition %d is listed twice in array_of_partitions", i);
        else if (!err && seen)
            seen[i / 8] |= (unsigned char)(1u << (i % 8));
    }
    free(seen);
    if (err)
        return err;
    tdm_p2p_part_ready_list(r, array_of_partitions, length);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Pready_list)

int PMPI_Parrived(MPI_Request request, int partition, int *flag) {
    const char *fn = "MPI_Parrived";
    TDM_CHECK_INIT(fn);
    if (!flag)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "flag is NULL");
    if (request == MPI_REQUEST_NULL) {
        *flag = 1; /* MPI-4.1 4.2.2: a null or inactive request has arrived */
        return MPI_SUCCESS;
    }
    tdm_req_t *r = tdm_mpi_req_get(request);
    if (!r || r->kind != TDM_REQ_PRECV)
        return tdm_mpi_err(r ? r->comm : NULL, MPI_ERR_REQUEST, fn,
                           "request %#x is not a partitioned receive (MPI_Precv_init)",
                           (unsigned)request);
    int n = tdm_p2p_part_partitions(r);
    if (partition < 0 || partition >= n)
        return tdm_mpi_err(r->comm, MPI_ERR_ARG, fn,
                           "partition %d is out of range (the request has partitions 0..%d)",
                           partition, n - 1);
    if (!r->active) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!tdm_p2p_part_arrived(r, partition))
        tdm_p2p_progress();
    *flag = tdm_p2p_part_arrived(r, partition);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Parrived)

int tdm_mpi_part_start(tdm_req_t *r, const char *fn) {
    tdm_rc_t rc = tdm_p2p_part_start(r);
    if (rc != TDM_OK)
        return tdm_mpi_err(r->comm, tdm_mpi_class_of(rc), fn, "cannot start the request");
    return MPI_SUCCESS;
}

int tdm_mpi_part_free(tdm_req_t *r, MPI_Request *request, const char *fn) {
    if (r->active && !r->inner->done)
        return tdm_mpi_err(r->comm, MPI_ERR_REQUEST, fn,
                           "partitioned %s %#x is active (complete it first)",
                           r->kind == TDM_REQ_PSEND ? "send" : "receive", (unsigned)*request);
    if (r->active) /* complete, not yet waited for */
        tdm_p2p_release(r->inner);
    r->inner = NULL;
    tdm_p2p_part_free(r);
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int tdm_mpi_part_cancel(tdm_req_t *r, MPI_Request request, const char *fn) {
    if (r->active && !r->inner->done)
        return tdm_mpi_err(r->comm, MPI_ERR_REQUEST, fn,
                           "partitioned %s %#x is active: it cannot be cancelled",
                           r->kind == TDM_REQ_PSEND ? "send" : "receive", (unsigned)request);
    return MPI_SUCCESS; /* inactive or complete: nothing to cancel */
}
