/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffered sends: the message is packed into a block of the user's attached
 * buffer and sent from there; the call completes at once. A block is given back
 * when its send completes. Blocks are kept in address order and placed first-fit;
 * each costs MPI_BSEND_OVERHEAD bytes of bookkeeping, as the standard lets the
 * user plan for.
 */
#include "bind.h"

#include <stdlib.h>
#include <string.h>

typedef struct bblock {
    struct bblock *next;
    size_t off, len; /* region of the attached buffer, overhead included */
} bblock_t;

static char *battached;
static size_t bsize;
static bblock_t *blocks; /* in use, sorted by offset */
static int bpending;

_Static_assert(MPI_BSEND_OVERHEAD >= 0, "overhead is a byte count");

static bblock_t *bblock_alloc(size_t need) {
    size_t pos = 0;
    bblock_t **link = &blocks;
    for (bblock_t *b = blocks;; b = b->next) {
        size_t end = b ? b->off : bsize;
        if (end >= pos && end - pos >= need) {
            bblock_t *nb = malloc(sizeof(*nb));
            if (!nb)
                return NULL;
            nb->off = pos;
            nb->len = need;
            nb->next = b;
            *link = nb;
            return nb;
        }
        if (!b)
            return NULL;
        pos = b->off + b->len;
        link = &b->next;
    }
}

static void bblock_free(bblock_t *blk) {
    for (bblock_t **link = &blocks; *link; link = &(*link)->next) {
        if (*link == blk) {
            *link = blk->next;
            free(blk);
            return;
        }
    }
}

static void bsend_done(tdm_req_t *s) {
    bblock_free(s->bsend_block);
    s->bsend_block = NULL;
    bpending--;
}

int tdm_mpi_bsend_start(const void *buf, MPI_Count count, tdm_dtype_t *dt, int dst_world,
                        int self_rank, int tag, tdm_comm_t *comm, bool blocking, tdm_req_t **req_p,
                        const char *fn) {
    size_t bytes = (size_t)count * dt->size;
    /* exactly size + overhead: the standard promises the user that a buffer of
     * sum(size + MPI_BSEND_OVERHEAD) holds those messages, so no rounding (the data
     * is a packed byte stream and needs no alignment) */
    size_t need = bytes + MPI_BSEND_OVERHEAD;
    bblock_t *blk = battached ? bblock_alloc(need) : NULL;
    if (!blk)
        return tdm_mpi_err(comm, MPI_ERR_BUFFER, fn,
                           "no room for %zu bytes (+%d overhead) in the attached buffer of %zu "
                           "bytes%s",
                           bytes, MPI_BSEND_OVERHEAD, bsize,
                           battached ? "" : " (no buffer attached: call MPI_Buffer_attach)");
    char *data = battached + blk->off + MPI_BSEND_OVERHEAD;
    tdm_dtype_pack(buf, (size_t)count, dt, 0, data, bytes);
    tdm_req_t *s;
    tdm_rc_t rc =
        tdm_p2p_isend(data, bytes, tdm_dtype_get(MPI_BYTE), dst_world, self_rank, tag, comm->ctx,
                      TDM_MODE_BUFFERED | (blocking ? TDM_MODE_BLOCKING : 0), comm, true, &s);
    if (rc != TDM_OK) {
        bblock_free(blk);
        return tdm_mpi_err(comm, tdm_mpi_class_of(rc), fn, "cannot send %zu bytes", bytes);
    }
    bpending++;
    s->bsend_block = blk;
    s->on_complete = bsend_done;
    if (s->done) {
        bsend_done(s);
        tdm_p2p_release(s);
    } else {
        s->user_freed = 1; /* nobody waits for it: released when it completes */
    }
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
    if (battached)
        return tdm_mpi_err(NULL, MPI_ERR_BUFFER, fn,
                           "a buffer is already attached (detach it first)");
    battached = buffer;
    bsize = (size_t)size;
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

static bool bsends_done(void *arg) {
    (void)arg;
    return bpending == 0;
}

/* Buffer_detach (`narrow`: its size is an int) and Buffer_detach_c */
static int detach_common(const char *fn, void *buffer_addr, MPI_Count *size_p, bool narrow) {
    TDM_CHECK_INIT(fn);
    if (!buffer_addr || !size_p)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "%s is NULL", size_p ? "buffer_addr" : "size");
    /* attached by Buffer_attach_c: the buffer stays attached, nothing is lost */
    if (narrow && bsize > 0x7fffffff)
        return tdm_mpi_err(NULL, MPI_ERR_VALUE_TOO_LARGE, fn,
                           "the attached buffer of %zu bytes does not fit the int size argument "
                           "(use MPI_Buffer_detach_c)",
                           bsize);
    /* the standard: detach waits until every buffered message has been sent */
    tdm_p2p_wait_until(bsends_done, NULL);
    *(void **)buffer_addr = battached;
    *size_p = (MPI_Count)bsize;
    battached = NULL;
    bsize = 0;
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
