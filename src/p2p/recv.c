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
        if (ue->flags & TDM_PKTF_DATA) {
            rts.data = 1;
            rts.addr = ue->raddr;
        } else if (ue->flags & TDM_PKTF_RDMA) {
            rts.rdma = 1;
            rts.addr = ue->raddr;
            rts.key_len = ue->key_len;
            memcpy(rts.key, ue->inline_data, ue->key_len);
        }
        tdm_p2p_unexp_free(ue);
        tdm_p2p_rndv_matched(r, &rts);
        return;
    }
    tdm_eager_matched_unexp(r, ue);
}

/* `how` bit of tdm_p2p_recv's own receive (see tdm_req_set_comm_owned) */
#define RECV_OWNED 0x100u

static tdm_req_t *recv_new(void *buf, size_t count, tdm_dtype_t *dt, int src, int tag, uint32_t ctx,
                           void *comm, unsigned how) {
    tdm_req_t *r = tdm_req_alloc(TDM_REQ_RECV);
    if (!r) {
        tdm_error(P2P, "out of memory for a receive request");
        return NULL;
    }
    if (how & RECV_OWNED)
        tdm_req_set_comm_owned(r, comm);
    else
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

/* A receive took unexpected message ue out of its queue (ue is this call's now, but
 * for its arrival, which is its sender's pair's): deliver it at once if it is here whole
 * and fits, else through a new request. */
static tdm_rc_t recv_unexp(tdm_unexp_t *ue, void *buf, size_t count, tdm_dtype_t *dt, int src,
                           int tag, uint32_t ctx, void *comm, unsigned how, tdm_status_t *now,
                           tdm_req_t **req_p) {
    int peer = ue->src_world;
    tdm_p2p_peer_lock(peer);
    if (now && ue->type == TDM_PKT_EAGER && ue->received == ue->size &&
        ue->size <= count * dt->size) {
        /* here whole and fitting: delivered with no request (rendezvous, still
         * arriving or truncated messages take the request path below) */
        if (ue->flags & TDM_PKTF_SYNC)
            tdm_eager_ack_sync(ue->src_world, ue->sreq, ue->self_sreq);
        tdm_p2p_peer_unlock(peer);
        tdm_p2p_copy_in(buf, count, dt, 0, ue->data, ue->size);
        *now = (tdm_status_t){.source = ue->src, .tag = ue->tag, .bytes = ue->size};
        tdm_p2p_unexp_free(ue);
        TDM_P2P_STAT_ADD(&tdm_p2p_stats.received_at_once, 1);
        *req_p = NULL;
        return TDM_OK;
    }
    tdm_req_t *r = recv_new(buf, count, dt, src, tag, ctx, comm, how);
    if (!r) {
        /* back where a later receive finds it (at the head of its bucket: the program
         * gets MPI_ERR_NO_MEM for this one) */
        tdm_p2p_bucket_t *b = tdm_p2p_bucket(ue->ctx);
        tdm_lock_acquire(&b->lock);
        tdm_list_push_back(b->unexp.next, &ue->link);
        tdm_p2p_level_up(&tdm_p2p_stats.unexp_len, &tdm_p2p_stats.unexp_high, 1);
        TDM_COUNTER_ADD(&tdm_p2p_stats.unexp_bytes, ue->held);
        tdm_lock_release(&b->lock);
        tdm_p2p_peer_unlock(peer);
        return TDM_ERR_NOMEM;
    }
    if (how & TDM_RECV_BLOCKING)
        r->mode = TDM_MODE_BLOCKING; /* Table II's Recv column */
    if (how & TDM_RECV_CONSUMES)
        r->mode |= TDM_MODE_CONSUMES;
    *req_p = r;
    tdm_p2p_recv_matched_unexp(r, ue);
    tdm_p2p_peer_unlock(peer);
    if (TDM_UNLIKELY(tdm_p2p_async_on) && !(how & TDM_RECV_BLOCKING))
        tdm_p2p_async_arm(r);
    return TDM_OK;
}

tdm_rc_t tdm_p2p_irecv_ex(void *buf, size_t count, tdm_dtype_t *dt, int src, int src_world, int tag,
                          uint32_t ctx, void *comm, unsigned how, tdm_status_t *now,
                          tdm_req_t **req_p) {
    /* looked for among the unexpected, or posted, under one hold of the bucket: a
     * message another thread takes from a ring meanwhile meets one or the other */
    tdm_p2p_bucket_t *b = tdm_p2p_bucket(ctx);
    tdm_lock_acquire(&b->lock);
    tdm_unexp_t *ue = tdm_p2p_match_unexp(ctx, src, tag);
    if (ue) {
        tdm_p2p_unexp_remove(ue);
        tdm_lock_release(&b->lock);
        return recv_unexp(ue, buf, count, dt, src, tag, ctx, comm, how, now, req_p);
    }
    tdm_req_t *r = recv_new(buf, count, dt, src, tag, ctx, comm, how);
    if (!r) {
        tdm_lock_release(&b->lock);
        return TDM_ERR_NOMEM;
    }
    if (how & TDM_RECV_BLOCKING)
        r->mode = TDM_MODE_BLOCKING; /* Table II's Recv column */
    if (how & TDM_RECV_CONSUMES)
        r->mode |= TDM_MODE_CONSUMES;
    *req_p = r;
    r->peer_world = src_world;
    tdm_p2p_posted_push(r);
    tdm_lock_release(&b->lock);
    tdm_rtr_maybe_announce(r); /* unthreaded only (select.c): r may be matched already */
    if (TDM_UNLIKELY(tdm_p2p_async_on) && !(how & TDM_RECV_BLOCKING))
        tdm_p2p_async_arm(r);
    return TDM_OK;
}

tdm_rc_t tdm_p2p_recv(void *buf, size_t count, tdm_dtype_t *dt, int src, int src_world, int tag,
                      uint32_t ctx, void *comm, tdm_status_t *status) {
    tdm_req_t *r;
    tdm_rc_t rc = tdm_p2p_irecv_ex(buf, count, dt, src, src_world, tag, ctx, comm,
                                   TDM_RECV_BLOCKING | RECV_OWNED, status, &r);
    if (rc != TDM_OK || !r)
        return rc;
    tdm_p2p_wait(r);
    *status = r->status;
    tdm_p2p_release(r);
    return TDM_OK;
}

tdm_rc_t tdm_p2p_imrecv(void *buf, size_t count, tdm_dtype_t *dt, tdm_unexp_t *msg, void *comm,
                        tdm_req_t **req_p) {
    int peer = msg->src_world;
    tdm_p2p_peer_lock(peer); /* its arrival may still be under way */
    tdm_req_t *r = recv_new(buf, count, dt, msg->src, msg->tag, msg->ctx, comm, 0);
    if (!r) {
        tdm_p2p_peer_unlock(peer);
        return TDM_ERR_NOMEM;
    }
    *req_p = r;
    tdm_p2p_recv_matched_unexp(r, msg);
    tdm_p2p_peer_unlock(peer);
    if (TDM_UNLIKELY(tdm_p2p_async_on))
        tdm_p2p_async_arm(r);
    return TDM_OK;
}

bool tdm_p2p_cancel(tdm_req_t *req) {
    if (req->kind != TDM_REQ_RECV)
        return false;
    /* Still in its posted queue (the bucket's lock says; a match takes it out under the
     * same lock), it is cancelled; once matched it completes normally. */
    tdm_p2p_bucket_t *b = tdm_p2p_bucket(req->ctx);
    tdm_lock_acquire(&b->lock);
    bool posted = !tdm_list_empty(&req->link);
    if (posted && !tdm_threaded && tdm_rtr_cancel(req)) {
        tdm_lock_release(&b->lock);
        return true; /* announced: completes when the sender has withdrawn it */
    }
    if (posted)
        tdm_p2p_recv_cancelled(req);
    tdm_lock_release(&b->lock);
    /* Sends are not cancelled: once the envelope is in the peer's ring it may be
     * matched at any moment, and withdrawing it would need a round trip. The send
     * completes normally and MPI_Test_cancelled reports false. */
    return posted;
}
