/* SPDX-License-Identifier: BSD-3-Clause */
/* Receives: posting, delivery of matched messages, truncation, cancellation. */
#include "p2p_impl.h"
#include "../base/copy.h"

#include <stdlib.h>
#include <string.h>

void tdm_p2p_recv_set_envelope(tdm_req_t *r, int src, int tag, int src_world, size_t size) {
    r->status.source = src;
    r->status.tag = tag;
    r->peer_world = src_world;
    r->msg_size = size;
    if (size > r->bytes) {
        /* MPI: the status reports the truncation; the buffer gets what fits */
        r->status.error = TDM_ERR_TRUNCATE;
        r->status.bytes = r->bytes;
        tdm_debug(P2P, "message of %zu bytes from rank %d tag %d truncated to %zu", size, src, tag,
                  r->bytes);
    } else {
        r->status.bytes = size;
    }
}

static void copy_in(void *buf, size_t count, tdm_dtype_t *dt, size_t off, const void *data,
                    size_t len) {
    if (dt->contig)
        tdm_copy((char *)buf + dt->true_lb + off, data, len);
    else
        tdm_dtype_unpack(buf, count, dt, off, data, len);
}

/* Copy stream bytes [off, off+len) of the message into the receive buffer,
 * dropping what lies past its end. */
void tdm_p2p_recv_copy(tdm_req_t *r, size_t off, const void *data, size_t len) {
    if (off >= r->bytes)
        return;
    if (len > r->bytes - off)
        len = r->bytes - off;
    copy_in(r->buf, r->count, r->dt, off, data, len);
}

static void ack_sync(int src_world, uint32_t sreq, tdm_req_t *self_sreq) {
    if (self_sreq) {
        tdm_p2p_send_on_ack(self_sreq);
        return;
    }
    tdm_pkt_ack_t ack = {.type = TDM_PKT_ACK, .req = sreq};
    tdm_p2p_send_ctrl(src_world, &ack, sizeof(ack));
}

/* A receive matched an unexpected message (from the queue or from Mprobe). */
void tdm_p2p_recv_matched_unexp(tdm_req_t *r, tdm_unexp_t *ue) {
    tdm_p2p_recv_set_envelope(r, ue->src, ue->tag, ue->src_world, ue->size);
    if (ue->type == TDM_PKT_RTS) {
        tdm_rts_info_t rts = {.sreq = ue->sreq, .mode = ue->mode, .pid = ue->pid, .buf = ue->rbuf};
        tdm_p2p_unexp_free(ue);
        tdm_p2p_rndv_matched(r, &rts);
        return;
    }
    if (ue->flags & TDM_PKTF_SYNC)
        ack_sync(ue->src_world, ue->sreq, ue->self_sreq);
    if (ue->received < ue->size) {
        /* the rest is still arriving: engine.c finishes it when the last cell lands */
        ue->claimed = r;
        r->unexp = ue;
        r->stage = TDM_RSTAGE_EAGER;
        return;
    }
    tdm_p2p_recv_copy(r, 0, ue->data, ue->size);
    tdm_p2p_unexp_free(ue);
    r->stage = TDM_RSTAGE_DONE;
    tdm_p2p_complete(r);
}

static tdm_req_t *recv_new(void *buf, size_t count, tdm_dtype_t *dt, int src, int tag, uint32_t ctx,
                           void *comm) {
    tdm_req_t *r = tdm_req_alloc(TDM_REQ_RECV);
    if (!r) {
        tdm_error(P2P, "out of memory for a receive request");
        return NULL;
    }
    tdm_req_set_comm(r, comm);
    r->ctx = ctx;
    r->peer = src;
    r->peer_world = -1;
    r->tag = tag;
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    r->bytes = count * dt->size;
    tdm_dtype_retain(dt);
    return r;
}

tdm_rc_t tdm_p2p_irecv_ex(void *buf, size_t count, tdm_dtype_t *dt, int src, int src_world, int tag,
                          uint32_t ctx, void *comm, unsigned how, tdm_status_t *now,
                          tdm_req_t **req_p) {
    tdm_unexp_t *ue = tdm_p2p_match_unexp(ctx, src, tag);
    if (ue && now && ue->type == TDM_PKT_EAGER && ue->received == ue->size &&
        ue->size <= count * dt->size) {
        /* here whole and fitting: delivered with no request (rendezvous, still
         * arriving or truncated messages take the request path below) */
        tdm_p2p_unexp_remove(ue);
        if (ue->flags & TDM_PKTF_SYNC)
            ack_sync(ue->src_world, ue->sreq, ue->self_sreq);
        copy_in(buf, count, dt, 0, ue->data, ue->size);
        *now = (tdm_status_t){.source = ue->src, .tag = ue->tag, .bytes = ue->size};
        tdm_p2p_unexp_free(ue);
        tdm_p2p_stats.received_at_once++;
        *req_p = NULL;
        return TDM_OK;
    }
    tdm_req_t *r = recv_new(buf, count, dt, src, tag, ctx, comm);
    if (!r)
        return TDM_ERR_NOMEM;
    if (how & TDM_RECV_BLOCKING)
        r->mode = TDM_MODE_BLOCKING; /* Table II's Recv column */
    if (how & TDM_RECV_CONSUMES)
        r->mode |= TDM_MODE_CONSUMES;
    *req_p = r;
    if (ue) {
        tdm_p2p_unexp_remove(ue);
        tdm_p2p_recv_matched_unexp(r, ue);
    } else {
        r->stage = TDM_RSTAGE_POSTED;
        r->peer_world = src_world;
        tdm_p2p_posted_push(r);
        tdm_rtr_maybe_announce(r);
    }
    return TDM_OK;
}

tdm_rc_t tdm_p2p_irecv(void *buf, size_t count, tdm_dtype_t *dt, int src, int tag, uint32_t ctx,
                       void *comm, tdm_req_t **req_p) {
    return tdm_p2p_irecv_ex(buf, count, dt, src, -1, tag, ctx, comm, 0, NULL, req_p);
}

tdm_rc_t tdm_p2p_recv(void *buf, size_t count, tdm_dtype_t *dt, int src, int src_world, int tag,
                      uint32_t ctx, void *comm, tdm_status_t *status) {
    tdm_req_t *r;
    tdm_rc_t rc = tdm_p2p_irecv_ex(buf, count, dt, src, src_world, tag, ctx, comm,
                                   TDM_RECV_BLOCKING, status, &r);
    if (rc != TDM_OK || !r)
        return rc;
    tdm_p2p_wait(r);
    *status = r->status;
    tdm_p2p_release(r);
    return TDM_OK;
}

tdm_rc_t tdm_p2p_imrecv(void *buf, size_t count, tdm_dtype_t *dt, tdm_unexp_t *msg, void *comm,
                        tdm_req_t **req_p) {
    tdm_req_t *r = recv_new(buf, count, dt, msg->src, msg->tag, msg->ctx, comm);
    if (!r)
        return TDM_ERR_NOMEM;
    *req_p = r;
    tdm_p2p_recv_matched_unexp(r, msg);
    return TDM_OK;
}

bool tdm_p2p_cancel(tdm_req_t *req) {
    if (req->kind == TDM_REQ_RECV && req->stage == TDM_RSTAGE_POSTED && !req->done &&
        tdm_rtr_cancel(req))
        return true; /* announced: completes when the sender has withdrawn it */
    if (req->kind == TDM_REQ_RECV && req->stage == TDM_RSTAGE_POSTED && !req->done) {
        tdm_p2p_posted_remove(req);
        req->status.cancelled = 1;
        req->status.bytes = 0;
        req->stage = TDM_RSTAGE_DONE;
        tdm_p2p_complete(req);
        return true;
    }
    /* Sends are not cancelled: once the envelope is in the peer's ring it may be
     * matched at any moment, and withdrawing it would need a round trip. The send
     * completes normally and MPI_Test_cancelled reports false. */
    return false;
}
