/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eager messages (up to the eager limit, select.c): written into the ring
 * toward the peer, a header cell carrying the first fragment, then continuation
 * cells; the receiver copies them into the matched receive or keeps them as an
 * unexpected message. Four forms:
 *   short        EAGER_SHORT: at most TDM_PKT_SHORT_MAX bytes, no answer wanted,
 *                header and payload in the cell's first cache line
 *   one cell     EAGER whose payload fits the cell (the no-request path, send.c)
 *   multi-cell   EAGER + EAGER_CONT cells, in order on the same ring
 *   synchronous  EAGER flagged TDM_PKTF_SYNC; the receiver answers ACK on match
 *
 * Send stages (req->stage):
 *   EAGER --all cells written--> DONE                   (standard, buffered, ready)
 *   EAGER --all cells written--> WAIT_ACK --ACK--> DONE  (synchronous)
 * Receive stages:
 *   POSTED --EAGER, whole--> DONE
 *   POSTED --EAGER, first of several--> EAGER --last EAGER_CONT--> DONE
 * The hot parts (first-cell receive, one-cell send) are inline in eager.h.
 */
#include "eager.h"

/* Write cells while the ring has room; true when all are in. */
static bool push_cells(tdm_req_t *s) {
    int peer = s->peer_world;
    size_t body = tdm_shm_body_size();
    if (!s->hdr_done) {
        tdm_pkt_eager_t *h = tdm_shm_send_reserve(peer);
        if (!h)
            return false;
        if (s->bytes <= TDM_PKT_SHORT_MAX && (s->mode & ~TDM_MODE_BLOCKING) != TDM_MODE_SYNC) {
            unsigned char *payload =
                tdm_eager_fill_short(h, s->mode, s->ctx, s->self_rank, s->tag, s->bytes);
            tdm_dtype_pack(s->buf, s->count, s->dt, 0, payload, s->bytes);
            tdm_shm_send_commit(peer);
            tdm_p2p_tx_envelope(peer, s->ctx, s->tag);
            s->hdr_done = 1;
            s->offset = s->bytes;
            return true;
        }
        uint8_t pad = tdm_eager_pad(s->dt, (const char *)s->buf + s->dt->true_lb, s->bytes, h + 1,
                                    body - sizeof(*h));
        size_t frag = TDM_MIN(s->bytes, body - sizeof(*h) - pad);
        tdm_p2p_fill_envelope(h, TDM_PKT_EAGER, s, s->bytes);
        tdm_shm_cell_set_stamp(h, s->t_sent);
        h->pad = pad;
        h->frag = (uint32_t)frag;
        tdm_dtype_pack(s->buf, s->count, s->dt, 0, (unsigned char *)(h + 1) + pad, frag);
        tdm_shm_send_commit(peer);
        tdm_p2p_tx_envelope(peer, s->ctx, s->tag);
        s->hdr_done = 1;
        s->offset = frag;
    }
    while (s->offset < s->bytes) {
        tdm_pkt_cont_t *c = tdm_shm_send_reserve(peer);
        if (!c)
            return false;
        size_t frag = TDM_MIN(s->bytes - s->offset, body - sizeof(*c));
        c->type = TDM_PKT_EAGER_CONT;
        c->pad = 0;
        c->frag = (uint32_t)frag;
        tdm_dtype_pack(s->buf, s->count, s->dt, s->offset, c + 1, frag);
        tdm_shm_send_commit(peer);
        s->offset += frag;
    }
    return true;
}

bool tdm_eager_push(tdm_req_t *s) {
    if (!push_cells(s))
        return false;
    if ((s->mode & ~TDM_MODE_BLOCKING) == TDM_MODE_SYNC && !s->acked) {
        s->stage = TDM_SSTAGE_WAIT_ACK;
        return true;
    }
    s->stage = TDM_SSTAGE_DONE;
    tdm_p2p_complete(s);
    return true;
}

void tdm_eager_acked(tdm_req_t *s) {
    s->acked = 1;
    if (s->stage == TDM_SSTAGE_WAIT_ACK) {
        s->stage = TDM_SSTAGE_DONE;
        tdm_p2p_complete(s);
    }
}

void tdm_eager_ack_sync(int src_world, uint32_t sreq, tdm_req_t *self_sreq) {
    if (self_sreq) {
        tdm_eager_acked(self_sreq);
        return;
    }
    tdm_pkt_ack_t ack = {.type = TDM_PKT_ACK, .req = sreq};
    tdm_p2p_send_ctrl(src_world, &ack, sizeof(ack));
}

void tdm_eager_matched_unexp(tdm_req_t *r, tdm_unexp_t *ue) {
    if (ue->flags & TDM_PKTF_SYNC)
        tdm_eager_ack_sync(ue->src_world, ue->sreq, ue->self_sreq);
    if (ue->received < ue->size) {
        /* the rest is still arriving: tdm_p2p_unexp_arrived finishes it */
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

/* ---- packet handlers (registry.def); engine.c inlines the first two ---- */

void tdm_eager_on_eager(int peer, const void *body) {
    tdm_eager_rx(peer, body);
}

void tdm_eager_on_short(int peer, const void *body) {
    tdm_eager_rx_short(peer, body);
}

void tdm_eager_on_cont(int peer, const void *body) {
    const tdm_pkt_cont_t *c = body;
    tdm_rx_cursor_t *cur = &tdm_p2p.rx[peer];
    const unsigned char *payload = (const unsigned char *)(c + 1) + c->pad;
    if (cur->req) {
        tdm_req_t *r = cur->req;
        tdm_p2p_recv_copy(r, r->offset, payload, c->frag);
        r->offset += c->frag;
        if (r->offset == r->msg_size) {
            if (r->t_sent)
                tdm_p2p_eager_adapt_done(r, false);
            cur->req = NULL;
            r->stage = TDM_RSTAGE_DONE;
            tdm_p2p_complete(r);
        }
        return;
    }
    tdm_unexp_t *ue = cur->ue;
    if (!ue) {
        tdm_error(P2P, "continuation cell from rank %d with no message in progress", peer);
        abort();
    }
    tdm_copy(ue->data + ue->received, payload, c->frag);
    ue->received += c->frag;
    if (ue->received < ue->size)
        return;
    cur->ue = NULL;
    tdm_p2p_unexp_arrived(ue);
}

void tdm_eager_on_ack(int peer, const void *body) {
    const tdm_pkt_ack_t *a = body;
    tdm_eager_acked(tdm_p2p_req_of_packet(a->req, peer, "ack"));
}
