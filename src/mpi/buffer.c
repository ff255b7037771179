/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffered sends: the bindings of Buffer_attach/detach and the start of a Bsend;
 * the attached buffer and its blocks are src/p2p/bsend.c's.
 */
#include "bind.h"
#include "../p2p/bsend.h"

_Static_assert(MPI_BSEND_OVERHEAD == TDM_P2P_BSEND_OVERHEAD, "p2p/bsend.h's overhead");

int tdm_mpi_bsend_start(const void *buf, MPI_Count count, tdm_dtype_t *dt, int dst_world,
                        int self_rank, int tag, tdm_comm_t *comm, bool blocking, tdm_req_t **req_p,
                        const char *fn) {
    size_t bytes = (size_t)count * dt->size;
    tdm_rc_t rc =
        tdm_p2p_bsend(buf, (size_t)count, dt, dst_world, self_rank, tag, comm->ctx, blocking, comm);
    if (rc == TDM_ERR_BUFFER) {
        size_t bsize;
        bool attached = tdm_p2p_bsend_buffer(&bsize) != NULL;
        return tdm_mpi_err(comm, MPI_ERR_BUFFER, fn,
                           "no room for %zu bytes (+%d overhead) in the attached buffer of %zu "
                           "bytes%s",
                           bytes, MPI_BSEND_OVERHEAD, bsize,
                           attached ? "" : " (no buffer attached: call MPI_Buffer_attach)");
    }
    if (rc != TDM_OK)
        return tdm_mpi_err(comm, tdm_mpi_class_of(rc), fn, "cannot send %zu bytes", bytes);
    /* the user's operation is complete: the data is in the attached buffer */
    tdm_req_t *u = NULL;
    if (!blocking) {
        u = tdm_req_alloc(TDM_REQ_OTHER);
        if (!u)
            return tdm_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
        tdm_req_set_comm(u, comm);
        u->status.source = MPI_ANY_SOURCE;
        u->status.tag = MPI_ANY_TAG;
        u->done = 1;
    }
    *req_p = u;
    return MPI_SUCCESS;
}

/* Buffer_attach and Buffer_attach_c */
static int attach_common(const char *fn, void *buffer, MPI_Count size) {
    TDM_CHECK_INIT(fn);
    if (size < 0)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid size %lld", (long long)size);
    if (!buffer && size > 0)
        return tdm_mpi_err(NULL, MPI_ERR_BUFFER, fn, "buffer is NULL");
    if (!tdm_p2p_bsend_attach(buffer, (size_t)size))
        return tdm_mpi_err(NULL, MPI_ERR_BUFFER, fn,
                           "a buffer is already attached (detach it first)");
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size) {
    return attach_common("MPI_Buffer_attach", buffer, size);
}
TDM_WEAK(MPI_Buffer_attach)

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size) {
    return attach_common("MPI_Buffer_attach_c", buffer, size);
}
TDM_WEAK(MPI_Buffer_attach_c)

/* Buffer_detach (`narrow`: its size is an int) and Buffer_detach_c */
static int detach_common(const char *fn, void *buffer_addr, MPI_Count *size_p, bool narrow) {
    TDM_CHECK_INIT(fn);
    if (!buffer_addr || !size_p)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "%s is NULL", size_p ? "buffer_addr" : "size");
    size_t bsize;
    void *battached = tdm_p2p_bsend_buffer(&bsize);
    /* attached by Buffer_attach_c: the buffer stays attached, nothing is lost */
    if (narrow && bsize > 0x7fffffff)
        return tdm_mpi_err(NULL, MPI_ERR_VALUE_TOO_LARGE, fn,
                           "the attached buffer of %zu bytes does not fit the int size argument "
                           "(use MPI_Buffer_detach_c)",
                           bsize);
    tdm_p2p_bsend_detach();
    *(void **)buffer_addr = battached;
    *size_p = (MPI_Count)bsize;
    return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void *buffer_addr, int *size) {
    MPI_Count n;
    int err = detach_common("MPI_Buffer_detach", buffer_addr, size ? &n : NULL, true);
    if (!err)
        *size = (int)n;
    return err;
}
TDM_WEAK(MPI_Buffer_detach)

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size) {
    return detach_common("MPI_Buffer_detach_c", buffer_addr, size, false);
}
TDM_WEAK(MPI_Buffer_detach_c)
