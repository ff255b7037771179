/* SPDX-License-Identifier: BSD-3-Clause */
/* Receives: the entry points (posting, the immediate path, Mrecv, cancel);
 * delivery is the matched message's protocol's (proto/eager.c, proto/rndv_cma.c). */
#include "proto/eager.h"

#include <stdlib.h>
#include <string.h>

/* A receive matched an unexpected message (from the queue or from Mprobe). */
void tdm_p2p_recv_matched_unexp(tdm_req_t *r, tdm_unexp_t *ue) {
    tdm_p2p_recv_set_envelope(r, ue->src, ue->tag, ue->src_world, ue->size);
    if (ue->type == TDM_PKT_RTS) {
        tdm_rts_info_t rts = {.sreq = ue->sreq, .mode = ue->mode, .pid = ue->pid, .buf = ue->rbuf};
        tdm_p2p_unexp_free(ue);
        tdm_p2p_rndv_matched(r, &rts);
        return;
    }
    tdm_eager_matched_unexp(r, ue);
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
    r->proto = TDM_PROTO_NONE;
    tdm_rndv_t *st = tdm_rndv(r); /* the slot's last use may have left them set */
    st->announced = st->cancel_asked = 0;
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
            tdm_eager_ack_sync(ue->src_world, ue->sreq, ue->self_sreq);
        tdm_p2p_copy_in(buf, count, dt, 0, ue->data, ue->size);
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
        r->peer_world = src_world;
        tdm_p2p_posted_push(r);
        tdm_rtr_maybe_announce(r);
    }
    return TDM_OK;
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
    bool posted = req->kind == TDM_REQ_RECV && req->proto == TDM_PROTO_NONE && !req->done;
    if (posted && tdm_rtr_cancel(req))
        return true; /* announced: completes when the sender has withdrawn it */
    if (posted) {
        tdm_p2p_recv_cancelled(req);
        return true;
    }
    /* Sends are not cancelled: once the envelope is in the peer's ring it may be
     * matched at any moment, and withdrawing it would need a round trip. The send
     * completes normally and MPI_Test_cancelled reports false. */
    return false;
}
