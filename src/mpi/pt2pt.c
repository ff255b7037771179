/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point bindings: argument checks, then one call into src/p2p. */
#include "bind.h"
#include "coll_persist.h"
#include "part.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(MPI_ANY_SOURCE == TDM_ANY_SOURCE, "ANY_SOURCE value shared with p2p");
_Static_assert(MPI_ANY_TAG == TDM_ANY_TAG, "ANY_TAG value shared with p2p");
_Static_assert(MPI_PROC_NULL == TDM_PROC_NULL, "PROC_NULL value shared with p2p");

/* A request that is complete from the start (operations with MPI_PROC_NULL). */
static tdm_req_t *procnull_req(tdm_comm_t *c) {
    tdm_req_t *r = tdm_req_alloc(TDM_REQ_OTHER);
    if (!r)
        return NULL;
    tdm_req_set_comm(r, c);
    r->status.source = MPI_PROC_NULL;
    r->status.tag = MPI_ANY_TAG;
    r->done = 1;
    return r;
}

/* Every send, with an int count or an MPI_Count one (the _c forms). */
static int send_common(const char *fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                       int dest, int tag, MPI_Comm comm, uint8_t mode, MPI_Request *request) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    bool blocking = (mode & TDM_MODE_BLOCKING) != 0;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_COUNT(fn, c, count);
    TDM_GET_DTYPE(fn, c, datatype, dt);
    TDM_CHECK_BUF(fn, c, buf, count, dt);
    TDM_CHECK_RANK(fn, c, dest, "destination", false);
    TDM_CHECK_TAG(fn, c, tag, false);
    TDM_CHECK_REQ(fn, c, request, !blocking);
    if (TDM_UNLIKELY(dest == MPI_PROC_NULL)) {
        if (blocking)
            return MPI_SUCCESS;
        tdm_req_t *r = procnull_req(c);
        if (!r)
            return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a request");
        *request = tdm_req_handle(r);
        return MPI_SUCCESS;
    }
    int world = tdm_comm_peer_world(c, dest);
    tdm_req_t *r = NULL;
    if ((mode & ~TDM_MODE_BLOCKING) == TDM_MODE_BUFFERED) {
        int err = tdm_mpi_bsend_start(buf, count, dt, world, c->rank, tag, c, blocking, &r, fn);
        if (err != MPI_SUCCESS)
            return err;
    } else {
        /* a blocking send waits in the engine, with a request of its own if it needs one */
        tdm_rc_t rc =
            blocking ? tdm_p2p_send(buf, (size_t)count, dt, world, c->rank, tag, c->ctx, mode, c)
                     : tdm_p2p_isend(buf, (size_t)count, dt, world, c->rank, tag, c->ctx, mode, c,
                                     true, &r);
        if (TDM_UNLIKELY(rc != TDM_OK))
            return tdm_mpi_err(c, tdm_mpi_class_of(rc), fn, "cannot send %lld items to rank %d",
                               (long long)count, dest);
    }
    TDM_COUNTER_ADD2(&c->pv.sent_msgs, 1, &c->pv.sent_bytes, (uint64_t)count * dt->size);
    if (!blocking) {
        *request = tdm_req_handle(r);
        return MPI_SUCCESS;
    }
    if (r) { /* a blocking Bsend's */
        tdm_p2p_wait(r);
        tdm_p2p_release(r);
    }
    return MPI_SUCCESS;
}

/* Each send call twice: with an int count and, as <name>_c, with an MPI_Count one. */
#define SEND_FN_T(_name, _count_t, _mode)                                                          \
    int PMPI_##_name(const void *buf, _count_t count, MPI_Datatype datatype, int dest, int tag,    \
                     MPI_Comm comm) {                                                              \
        return send_common("MPI_" #_name, buf, count, datatype, dest, tag, comm,                   \
                           (_mode) | TDM_MODE_BLOCKING, NULL);                                     \
    }                                                                                              \
    TDM_WEAK(MPI_##_name)
#define SEND_FN(_name, _mode)                                                                      \
    SEND_FN_T(_name, int, _mode)                                                                   \
    SEND_FN_T(_name##_c, MPI_Count, _mode)

#define ISEND_FN_T(_name, _count_t, _mode)                                                         \
    int PMPI_##_name(const void *buf, _count_t count, MPI_Datatype datatype, int dest, int tag,    \
                     MPI_Comm comm, MPI_Request *request) {                                        \
        return send_common("MPI_" #_name, buf, count, datatype, dest, tag, comm, (_mode),          \
                           request);                                                               \
    }                                                                                              \
    TDM_WEAK(MPI_##_name)
#define ISEND_FN(_name, _mode)                                                                     \
    ISEND_FN_T(_name, int, _mode)                                                                  \
    ISEND_FN_T(_name##_c, MPI_Count, _mode)

SEND_FN(Send, TDM_MODE_STD)
SEND_FN(Ssend, TDM_MODE_SYNC)
SEND_FN(Rsend, TDM_MODE_READY)
SEND_FN(Bsend, TDM_MODE_BUFFERED)
ISEND_FN(Isend, TDM_MODE_STD)
ISEND_FN(Issend, TDM_MODE_SYNC)
ISEND_FN(Irsend, TDM_MODE_READY)
ISEND_FN(Ibsend, TDM_MODE_BUFFERED)

/* Checks shared by receives; sets *c and *dt. */
static int recv_checks(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                       int source, int tag, MPI_Comm comm, tdm_comm_t **c_p, tdm_dtype_t **dt_p) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_COUNT(fn, c, count);
    TDM_GET_DTYPE(fn, c, datatype, dt);
    TDM_CHECK_BUF(fn, c, buf, count, dt);
    TDM_CHECK_RANK(fn, c, source, "source", true);
    TDM_CHECK_TAG(fn, c, tag, true);
    *c_p = c;
    *dt_p = dt;
    return MPI_SUCCESS;
}

/* Report truncation (or another receive error) held in a status. */
static int recv_status_error(tdm_comm_t *c, const char *fn, const tdm_status_t *s, size_t want) {
    if (s->error == TDM_ERR_TRUNCATE)
        return tdm_mpi_err(c, MPI_ERR_TRUNCATE, fn,
                           "message from rank %d with tag %d is longer than the receive buffer "
                           "(%zu bytes)",
                           s->source, s->tag, want);
    return tdm_mpi_err(c, tdm_mpi_class_of((tdm_rc_t)s->error), fn, "receive failed");
}

/* Wait for a receive started by `fn` itself (Sendrecv, Mrecv), release it and report
 * its outcome as `fn`'s: the status (MPI_ERROR untouched) and the error. */
static int recv_finish(tdm_comm_t *c, tdm_req_t *r, MPI_Status *status, const char *fn) {
    tdm_p2p_wait(r);
    tdm_status_t s = r->status;
    size_t want = r->bytes;
    tdm_p2p_release(r);
    int err = MPI_SUCCESS;
    if (TDM_UNLIKELY(s.error != TDM_OK)) {
        err = recv_status_error(c, fn, &s, want);
        s.error = TDM_OK;
    }
    tdm_mpi_status_set(status, &s);
    return err;
}

/* Recv and Recv_c; inlined, so that the int form costs what it did before it had a twin
 * (called, it made 2-rank 0-byte ping-pong 0.191 -> 0.196 us, 20 interleaved runs) */
static inline __attribute__((always_inline)) int recv_common(const char *fn, void *buf,
                                                             MPI_Count count, MPI_Datatype datatype,
                                                             int source, int tag, MPI_Comm comm,
                                                             MPI_Status *status) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    int err = recv_checks(fn, buf, count, datatype, source, tag, comm, &c, &dt);
    if (TDM_UNLIKELY(err))
        return err;
    if (TDM_UNLIKELY(source == MPI_PROC_NULL)) {
        tdm_mpi_status_procnull(status);
        return MPI_SUCCESS;
    }
    tdm_status_t s;
    int src_world = source == MPI_ANY_SOURCE ? -1 : tdm_comm_peer_world(c, source);
    TDM_COUNTER_ADD(&c->pv.recvs, 1);
    tdm_rc_t rc = tdm_p2p_recv(buf, (size_t)count, dt, source, src_world, tag, c->ctx, c, &s);
    if (TDM_UNLIKELY(rc != TDM_OK))
        return tdm_mpi_err(c, tdm_mpi_class_of(rc), fn, "cannot post the receive");
    if (TDM_UNLIKELY(s.error != TDM_OK)) {
        err = recv_status_error(c, fn, &s, (size_t)count * dt->size);
        s.error = TDM_OK;
        /* the status tells what was received; the error is the return value (a
         * single-status call does not set MPI_ERROR, MPI-3.1 3.2.5) */
        tdm_mpi_status_set(status, &s);
        return err;
    }
    tdm_mpi_status_set(status, &s);
    return MPI_SUCCESS;
}

#define RECV_FORMS(_s, _C, _D)                                                                     \
    int PMPI_Recv##_s(void *buf, _C count, MPI_Datatype datatype, int source, int tag,             \
                      MPI_Comm comm, MPI_Status *status) {                                         \
        return recv_common("MPI_Recv" #_s, buf, count, datatype, source, tag, comm, status);       \
    }                                                                                              \
    TDM_WEAK(MPI_Recv##_s)
TDM_MPI_COUNT_FORMS(RECV_FORMS)

/* Irecv and Irecv_c (and the receives that Sendrecv and a persistent receive start);
 * inlined as recv_common is */
static inline __attribute__((always_inline)) int
irecv_common(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Request *request) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    int err = recv_checks(fn, buf, count, datatype, source, tag, comm, &c, &dt);
    if (err)
        return err;
    TDM_CHECK_REQ(fn, c, request, true);
    tdm_req_t *r;
    if (source == MPI_PROC_NULL) {
        r = procnull_req(c);
        if (!r)
            return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a request");
    } else {
        int src_world = source == MPI_ANY_SOURCE ? -1 : tdm_comm_peer_world(c, source);
        TDM_COUNTER_ADD(&c->pv.recvs, 1);
        tdm_rc_t rc = tdm_p2p_irecv_ex(buf, (size_t)count, dt, source, src_world, tag, c->ctx, c, 0,
                                       NULL, &r);
        if (rc != TDM_OK)
            return tdm_mpi_err(c, tdm_mpi_class_of(rc), fn, "cannot post the receive");
    }
    *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}

#define IRECV_FORMS(_s, _C, _D)                                                                    \
    int PMPI_Irecv##_s(void *buf, _C count, MPI_Datatype datatype, int source, int tag,            \
                       MPI_Comm comm, MPI_Request *request) {                                      \
        return irecv_common("MPI_Irecv" #_s, buf, count, datatype, source, tag, comm, request);    \
    }                                                                                              \
    TDM_WEAK(MPI_Irecv##_s)
TDM_MPI_COUNT_FORMS(IRECV_FORMS)

/* Sendrecv and Sendrecv_replace: every argument checked (and reported) as `fn`'s. */
static int sendrecv_common(const char *fn, const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                           MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                           MPI_Comm comm, MPI_Status *status) {
    tdm_comm_t *c;
    tdm_dtype_t *rdt, *sdt;
    int err = recv_checks(fn, recvbuf, recvcount, recvtype, source, recvtag, comm, &c, &rdt);
    if (err)
        return err;
    TDM_CHECK_COUNT(fn, c, sendcount);
    TDM_GET_DTYPE(fn, c, sendtype, sdt);
    TDM_CHECK_BUF(fn, c, sendbuf, sendcount, sdt);
    TDM_CHECK_RANK(fn, c, dest, "destination", false);
    TDM_CHECK_TAG(fn, c, sendtag, false);
    MPI_Request rreq, sreq;
    err = irecv_common(fn, recvbuf, recvcount, recvtype, source, recvtag, comm, &rreq);
    if (err)
        return err;
    err = send_common(fn, sendbuf, sendcount, sendtype, dest, sendtag, comm, TDM_MODE_STD, &sreq);
    if (err) {
        PMPI_Cancel(&rreq);
        PMPI_Request_free(&rreq);
        return err;
    }
    err = PMPI_Wait(&sreq, MPI_STATUS_IGNORE);
    int rerr = recv_finish(c, tdm_mpi_req_get(rreq), status, fn);
    return err ? err : rerr;
}

#define SENDRECV_FORMS(_s, _C, _D)                                                                 \
    int PMPI_Sendrecv##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype, int dest,      \
                          int sendtag, void *recvbuf, _C recvcount, MPI_Datatype recvtype,         \
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status) {            \
        return sendrecv_common("MPI_Sendrecv" #_s, sendbuf, sendcount, sendtype, dest, sendtag,    \
                               recvbuf, recvcount, recvtype, source, recvtag, comm, status);       \
    }                                                                                              \
    TDM_WEAK(MPI_Sendrecv##_s)
TDM_MPI_COUNT_FORMS(SENDRECV_FORMS)

/* The (I)Sendrecv_replace forms' checks, and the packed copy of buf they send from so
 * that the receive can land in place (*tmp_p: the caller frees it). */
static int replace_copy(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                        int sendtag, int source, int recvtag, MPI_Comm comm, void **tmp_p,
                        size_t *bytes_p) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    int err = recv_checks(fn, buf, count, datatype, source, recvtag, comm, &c, &dt);
    if (err)
        return err;
    TDM_CHECK_RANK(fn, c, dest, "destination", false);
    TDM_CHECK_TAG(fn, c, sendtag, false);
    size_t bytes = (size_t)count * dt->size;
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "cannot allocate %zu bytes for the outgoing copy",
                           bytes);
    tdm_dtype_pack(buf, (size_t)count, dt, 0, tmp, bytes);
    *tmp_p = tmp;
    *bytes_p = bytes;
    return MPI_SUCCESS;
}

/* Sendrecv_replace and Sendrecv_replace_c */
static int sendrecv_replace_common(const char *fn, void *buf, MPI_Count count,
                                   MPI_Datatype datatype, int dest, int sendtag, int source,
                                   int recvtag, MPI_Comm comm, MPI_Status *status) {
    void *tmp;
    size_t bytes;
    int err =
        replace_copy(fn, buf, count, datatype, dest, sendtag, source, recvtag, comm, &tmp, &bytes);
    if (err)
        return err;
    err = sendrecv_common(fn, tmp, (MPI_Count)bytes, MPI_BYTE, dest, sendtag, buf, count, datatype,
                          source, recvtag, comm, status);
    free(tmp);
    return err;
}

#define SENDRECV_REPLACE_FORMS(_s, _C, _D)                                                         \
    int PMPI_Sendrecv_replace##_s(void *buf, _C count, MPI_Datatype datatype, int dest,            \
                                  int sendtag, int source, int recvtag, MPI_Comm comm,             \
                                  MPI_Status *status) {                                            \
        return sendrecv_replace_common("MPI_Sendrecv_replace" #_s, buf, count, datatype, dest,     \
                                       sendtag, source, recvtag, comm, status);                    \
    }                                                                                              \
    TDM_WEAK(MPI_Sendrecv_replace##_s)
TDM_MPI_COUNT_FORMS(SENDRECV_REPLACE_FORMS)

/* ---- Isendrecv (MPI-4) ----
 * One request for a receive and a send: an OTHER request that completes when both
 * have, with the receive's status. Each part that is still running when the call
 * returns reports to it through on_complete and is released on completion; a
 * part's error becomes the request's unless the receive had one. Isendrecv_replace
 * sends from a packed copy, freed when the request completes. */

static void isendrecv_part_done(tdm_req_t *part) {
    tdm_req_t *r = part->cb_arg;
    if (part->kind == TDM_REQ_RECV) {
        int err = r->status.error;
        r->status = part->status;
        if (r->status.error == TDM_OK)
            r->status.error = err;
        r->bytes = part->bytes;
    } else if (part->status.error != TDM_OK && r->status.error == TDM_OK) {
        r->status.error = part->status.error;
    }
    if (--r->count == 0) {
        free(r->buf); /* Isendrecv_replace's packed copy (else NULL) */
        r->buf = NULL;
        tdm_p2p_complete(r);
    }
}

/* Hand the part behind handle h to r: done already, count it now. */
static void isendrecv_adopt(tdm_req_t *r, MPI_Request h) {
    tdm_req_t *part = tdm_mpi_req_get(h);
    if (!tdm_p2p_req_hook(part, isendrecv_part_done, r)) { /* done already */
        part->cb_arg = r;
        isendrecv_part_done(part);
        tdm_p2p_release(part);
    }
}

static int isendrecv_common(const char *fn, const void *sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                            MPI_Comm comm, MPI_Request *request, void *packed) {
    tdm_comm_t *c;
    tdm_dtype_t *rdt, *sdt;
    int err = recv_checks(fn, recvbuf, recvcount, recvtype, source, recvtag, comm, &c, &rdt);
    if (!err && !request)
        err = tdm_mpi_err(c, MPI_ERR_REQUEST, fn, "request argument is NULL");
    if (err) {
        free(packed);
        return err;
    }
    TDM_CHECK_COUNT(fn, c, sendcount);
    TDM_GET_DTYPE(fn, c, sendtype, sdt);
    TDM_CHECK_BUF(fn, c, sendbuf, sendcount, sdt);
    TDM_CHECK_RANK(fn, c, dest, "destination", false);
    TDM_CHECK_TAG(fn, c, sendtag, false);
    tdm_req_t *r = tdm_req_alloc(TDM_REQ_OTHER);
    if (!r) {
        free(packed);
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a request");
    }
    tdm_req_set_comm(r, c);
    r->status.source = source;
    r->status.tag = recvtag;
    r->buf = packed;
    r->count = 3; /* the two parts, and this call until both are posted */
    MPI_Request rreq, sreq;
    err = irecv_common(fn, recvbuf, recvcount, recvtype, source, recvtag, comm, &rreq);
    if (err) {
        free(packed);
        tdm_req_free(r);
        return err;
    }
    err = send_common(fn, sendbuf, sendcount, sendtype, dest, sendtag, comm, TDM_MODE_STD, &sreq);
    if (err) {
        PMPI_Cancel(&rreq);
        PMPI_Request_free(&rreq);
        free(packed);
        tdm_req_free(r);
        return err;
    }
    isendrecv_adopt(r, rreq);
    isendrecv_adopt(r, sreq);
    if (--r->count == 0) { /* both parts were done already */
        free(r->buf);
        r->buf = NULL;
        r->done = 1;
    }
    *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}

#define ISENDRECV_FORMS(_s, _C, _D)                                                                \
    int PMPI_Isendrecv##_s(const void *sendbuf, _C sendcount, MPI_Datatype sendtype, int dest,     \
                           int sendtag, void *recvbuf, _C recvcount, MPI_Datatype recvtype,        \
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request) {         \
        return isendrecv_common("MPI_Isendrecv" #_s, sendbuf, sendcount, sendtype, dest, sendtag,  \
                                recvbuf, recvcount, recvtype, source, recvtag, comm, request,      \
                                NULL);                                                             \
    }                                                                                              \
    TDM_WEAK(MPI_Isendrecv##_s)
TDM_MPI_COUNT_FORMS(ISENDRECV_FORMS)

static int isendrecv_replace_common(const char *fn, void *buf, MPI_Count count,
                                    MPI_Datatype datatype, int dest, int sendtag, int source,
                                    int recvtag, MPI_Comm comm, MPI_Request *request) {
    void *tmp;
    size_t bytes;
    int err =
        replace_copy(fn, buf, count, datatype, dest, sendtag, source, recvtag, comm, &tmp, &bytes);
    if (err)
        return err;
    return isendrecv_common(fn, tmp, (MPI_Count)bytes, MPI_BYTE, dest, sendtag, buf, count,
                            datatype, source, recvtag, comm, request, tmp);
}

#define ISENDRECV_REPLACE_FORMS(_s, _C, _D)                                                        \
    int PMPI_Isendrecv_replace##_s(void *buf, _C count, MPI_Datatype datatype, int dest,           \
                                   int sendtag, int source, int recvtag, MPI_Comm comm,            \
                                   MPI_Request *request) {                                         \
        return isendrecv_replace_common("MPI_Isendrecv_replace" #_s, buf, count, datatype, dest,   \
                                        sendtag, source, recvtag, comm, request);                  \
    }                                                                                              \
    TDM_WEAK(MPI_Isendrecv_replace##_s)
TDM_MPI_COUNT_FORMS(ISENDRECV_REPLACE_FORMS)

/* ---- probes ---- */

static void status_from_probe(MPI_Status *status, const tdm_status_t *s) {
    tdm_status_t t = *s;
    tdm_mpi_status_set(status, &t);
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    tdm_comm_t *c;
    TDM_GET_COMM("MPI_Iprobe", comm, c);
    TDM_CHECK_RANK("MPI_Iprobe", c, source, "source", true);
    TDM_CHECK_TAG("MPI_Iprobe", c, tag, true);
    if (!flag)
        return tdm_mpi_err(c, MPI_ERR_ARG, "MPI_Iprobe", "flag is NULL");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        tdm_mpi_status_procnull(status);
        return MPI_SUCCESS;
    }
    tdm_status_t s;
    *flag = tdm_p2p_iprobe(source, tag, c->ctx, &s);
    if (*flag)
        status_from_probe(status, &s);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Iprobe)

typedef struct {
    int source, tag;
    uint32_t ctx;
    tdm_status_t s;
    tdm_unexp_t *msg; /* for mprobe */
    bool matched;
} probe_wait_t;

static bool probe_done(void *arg) {
    probe_wait_t *p = arg;
    return (p->matched = tdm_p2p_iprobe(p->source, p->tag, p->ctx, &p->s));
}

static bool mprobe_done(void *arg) {
    probe_wait_t *p = arg;
    /* the wait may ask again after the message was taken: taking a second one would lose
     * the first (a hang: its sender waits for a receive nobody can post) */
    if (p->matched)
        return true;
    return (p->matched = tdm_p2p_improbe(p->source, p->tag, p->ctx, &p->s, &p->msg));
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    tdm_comm_t *c;
    TDM_GET_COMM("MPI_Probe", comm, c);
    TDM_CHECK_RANK("MPI_Probe", c, source, "source", true);
    TDM_CHECK_TAG("MPI_Probe", c, tag, true);
    if (source == MPI_PROC_NULL) {
        tdm_mpi_status_procnull(status);
        return MPI_SUCCESS;
    }
    probe_wait_t p = {.source = source, .tag = tag, .ctx = c->ctx};
    tdm_p2p_wait_until(probe_done, &p);
    status_from_probe(status, &p.s);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Probe)

/* MPI_Message handles are request-kind handles (as in MPICH): a request of kind
 * OTHER whose `unexp` holds the matched message. */
static MPI_Message message_handle(tdm_comm_t *c, tdm_unexp_t *msg, int *err, const char *fn) {
    tdm_req_t *m = tdm_req_alloc(TDM_REQ_OTHER);
    if (!m) {
        *err = tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a message handle");
        return MPI_MESSAGE_NULL;
    }
    tdm_req_set_comm(m, c);
    m->unexp = msg;
    m->done = 1;
    return (MPI_Message)tdm_req_handle(m);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status) {
    tdm_comm_t *c;
    TDM_GET_COMM("MPI_Improbe", comm, c);
    TDM_CHECK_RANK("MPI_Improbe", c, source, "source", true);
    TDM_CHECK_TAG("MPI_Improbe", c, tag, true);
    if (!flag || !message)
        return tdm_mpi_err(c, MPI_ERR_ARG, "MPI_Improbe", "%s is NULL", flag ? "message" : "flag");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        tdm_mpi_status_procnull(status);
        return MPI_SUCCESS;
    }
    tdm_status_t s;
    tdm_unexp_t *msg;
    *flag = tdm_p2p_improbe(source, tag, c->ctx, &s, &msg);
    if (*flag) {
        int err = MPI_SUCCESS;
        *message = message_handle(c, msg, &err, "MPI_Improbe");
        if (err)
            return err;
        status_from_probe(status, &s);
    }
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Improbe)

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    tdm_comm_t *c;
    TDM_GET_COMM("MPI_Mprobe", comm, c);
    TDM_CHECK_RANK("MPI_Mprobe", c, source, "source", true);
    TDM_CHECK_TAG("MPI_Mprobe", c, tag, true);
    if (!message)
        return tdm_mpi_err(c, MPI_ERR_ARG, "MPI_Mprobe", "message is NULL");
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        tdm_mpi_status_procnull(status);
        return MPI_SUCCESS;
    }
    probe_wait_t p = {.source = source, .tag = tag, .ctx = c->ctx};
    tdm_p2p_wait_until(mprobe_done, &p);
    int err = MPI_SUCCESS;
    *message = message_handle(c, p.msg, &err, "MPI_Mprobe");
    if (err)
        return err;
    status_from_probe(status, &p.s);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Mprobe)

/* Imrecv and Mrecv: start the receive of a matched message; errors named as `fn`'s.
 * Sets *c_p to the message's communicator. */
static int imrecv_common(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Message *message, tdm_req_t **req_p, tdm_comm_t **c_p) {
    tdm_dtype_t *dt;
    TDM_CHECK_INIT(fn);
    if (!message)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "message is NULL");
    if (*message == MPI_MESSAGE_NO_PROC) {
        tdm_req_t *r = procnull_req(tdm_comm_world);
        if (!r)
            return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
        *req_p = r;
        *c_p = tdm_comm_world;
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    tdm_req_t *m = tdm_mpi_req_get((MPI_Request)*message);
    if (!m || m->kind != TDM_REQ_OTHER || !m->unexp)
        return tdm_mpi_err(NULL, MPI_ERR_REQUEST, fn, "invalid message handle %#x",
                           (unsigned)*message);
    tdm_comm_t *c = m->comm;
    TDM_CHECK_COUNT(fn, c, count);
    TDM_GET_DTYPE(fn, c, datatype, dt);
    TDM_CHECK_BUF(fn, c, buf, count, dt);
    tdm_req_t *r;
    TDM_COUNTER_ADD(&c->pv.recvs, 1);
    tdm_rc_t rc = tdm_p2p_imrecv(buf, (size_t)count, dt, m->unexp, c, &r);
    if (rc != TDM_OK)
        return tdm_mpi_err(c, tdm_mpi_class_of(rc), fn, "cannot receive the message");
    tdm_req_free(m);
    *message = MPI_MESSAGE_NULL;
    *req_p = r;
    *c_p = c;
    return MPI_SUCCESS;
}

static int imrecv_req(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Message *message, MPI_Request *request) {
    tdm_req_t *r;
    tdm_comm_t *c;
    TDM_CHECK_INIT(fn);
    if (!request)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "request is NULL");
    int err = imrecv_common(fn, buf, count, datatype, message, &r, &c);
    if (err)
        return err;
    *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}

static int mrecv_common(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Message *message, MPI_Status *status) {
    tdm_req_t *r;
    tdm_comm_t *c;
    int err = imrecv_common(fn, buf, count, datatype, message, &r, &c);
    if (err)
        return err;
    return recv_finish(c, r, status, fn);
}

#define IMRECV_FORMS(_s, _C, _D)                                                                   \
    int PMPI_Imrecv##_s(void *buf, _C count, MPI_Datatype datatype, MPI_Message *message,          \
                        MPI_Request *request) {                                                    \
        return imrecv_req("MPI_Imrecv" #_s, buf, count, datatype, message, request);               \
    }                                                                                              \
    TDM_WEAK(MPI_Imrecv##_s)
TDM_MPI_COUNT_FORMS(IMRECV_FORMS)

#define MRECV_FORMS(_s, _C, _D)                                                                    \
    int PMPI_Mrecv##_s(void *buf, _C count, MPI_Datatype datatype, MPI_Message *message,           \
                       MPI_Status *status) {                                                       \
        return mrecv_common("MPI_Mrecv" #_s, buf, count, datatype, message, status);               \
    }                                                                                              \
    TDM_WEAK(MPI_Mrecv##_s)
TDM_MPI_COUNT_FORMS(MRECV_FORMS)

/* ---- persistent requests ---- */

static int persistent_init(const char *fn, int is_send, const void *buf, MPI_Count count,
                           MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, uint8_t mode,
                           MPI_Request *request) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_COUNT(fn, c, count);
    TDM_GET_DTYPE(fn, c, datatype, dt);
    TDM_CHECK_BUF(fn, c, buf, count, dt);
    TDM_CHECK_RANK(fn, c, peer, is_send ? "destination" : "source", !is_send);
    TDM_CHECK_TAG(fn, c, tag, !is_send);
    TDM_CHECK_REQ(fn, c, request, true);
    tdm_req_t *r = tdm_req_alloc(is_send ? TDM_REQ_SEND : TDM_REQ_RECV);
    if (!r)
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a request");
    r->persistent = 1;
    r->active = 0;
    r->done = 1; /* an inactive persistent request completes at once */
    tdm_req_set_comm(r, c);
    r->buf = (void *)buf;
    r->count = (size_t)count;
    r->dt = dt;
    tdm_dtype_retain(dt);
    r->peer = peer;
    r->tag = tag;
    r->mode = mode;
    r->status.source = MPI_ANY_SOURCE;
    r->status.tag = MPI_ANY_TAG;
    *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}

#define SEND_INIT_FN_T(_name, _count_t, _mode)                                                     \
    int PMPI_##_name(const void *buf, _count_t count, MPI_Datatype datatype, int dest, int tag,    \
                     MPI_Comm comm, MPI_Request *request) {                                        \
        return persistent_init("MPI_" #_name, 1, buf, count, datatype, dest, tag, comm, (_mode),   \
                               request);                                                           \
    }                                                                                              \
    TDM_WEAK(MPI_##_name)
#define SEND_INIT_FN(_name, _mode)                                                                 \
    SEND_INIT_FN_T(_name, int, _mode)                                                              \
    SEND_INIT_FN_T(_name##_c, MPI_Count, _mode)

SEND_INIT_FN(Send_init, TDM_MODE_STD)
SEND_INIT_FN(Ssend_init, TDM_MODE_SYNC)
SEND_INIT_FN(Rsend_init, TDM_MODE_READY)
SEND_INIT_FN(Bsend_init, TDM_MODE_BUFFERED)

#define RECV_INIT_FORMS(_s, _C, _D)                                                                \
    int PMPI_Recv_init##_s(void *buf, _C count, MPI_Datatype datatype, int source, int tag,        \
                           MPI_Comm comm, MPI_Request *request) {                                  \
        return persistent_init("MPI_Recv_init" #_s, 0, buf, count, datatype, source, tag, comm, 0, \
                               request);                                                           \
    }                                                                                              \
    TDM_WEAK(MPI_Recv_init##_s)
TDM_MPI_COUNT_FORMS(RECV_INIT_FORMS)

static int start_one(MPI_Request *request, const char *fn) {
    tdm_req_t *p = request ? tdm_mpi_req_get(*request) : NULL;
    if (!p || !p->persistent)
        return tdm_mpi_err(NULL, MPI_ERR_REQUEST, fn, "not a persistent request (handle %#x)",
                           request ? (unsigned)*request : 0u);
    tdm_comm_t *c = p->comm;
    if (p->active)
        return tdm_mpi_err(c, MPI_ERR_REQUEST, fn, "request %#x is already active",
                           (unsigned)*request);
    if (p->kind == TDM_REQ_OTHER)
        return tdm_mpi_coll_persist_start(p, fn);
    if (tdm_mpi_is_part(p))
        return tdm_mpi_part_start(p, fn);
    MPI_Request inner;
    int err;
    if (p->kind == TDM_REQ_SEND)
        err = send_common(fn, p->buf, (MPI_Count)p->count, p->dt->handle, p->peer, p->tag,
                          c->handle, p->mode, &inner);
    else
        err = irecv_common(fn, p->buf, (MPI_Count)p->count, p->dt->handle, p->peer, p->tag,
                           c->handle, &inner);
    if (err)
        return err;
    p->inner = tdm_mpi_req_get(inner);
    p->active = 1;
    p->done = 0;
    return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *request) {
    TDM_CHECK_INIT("MPI_Start");
    return start_one(request, "MPI_Start");
}
TDM_WEAK(MPI_Start)

int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
    TDM_CHECK_INIT("MPI_Startall");
    if (count < 0)
        return tdm_mpi_err(NULL, MPI_ERR_COUNT, "MPI_Startall", "invalid count %d", count);
    if (count > 0 && !array_of_requests)
        return tdm_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Startall", "array_of_requests is NULL");
    for (int i = 0; i < count; i++) {
        int err = start_one(&array_of_requests[i], "MPI_Startall");
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Startall)
