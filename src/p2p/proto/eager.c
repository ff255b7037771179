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
 * Three protocol objects (the no-request one-cell send is send.c's fast path):
 *   EAGER_SHORT  CELLS --the cell written--> done
 *   EAGER        CELLS --all cells written--> done         (standard, buffered, ready)
 *   EAGER_SYNC   CELLS --all cells written--> WAIT_ACK --ACK--> done
 * Receive (EAGER): posted --EAGER, whole--> done
 *                  posted --EAGER, first of several--> R_CELLS --last EAGER_CONT--> done
 * The stage enum and the hot parts (first-cell receive, one-cell send) are
 * inline in eager.h.
 */
#include "eager.h"
#include "../../base/sigfmt.h"

/* EAGER_SHORT's CELLS: header and payload in one cache line. */
static bool push_short(tdm_req_t *s) {
    int peer = s->peer_world;
    tdm_pkt_eager_t *h = tdm_net_send_reserve(peer);
    if (!h)
        return false;
    unsigned char *payload =
        tdm_eager_fill_short(h, s->mode, s->ctx, s->self_rank, s->tag, s->bytes);
    tdm_dtype_pack(s->buf, s->count, s->dt, 0, payload, s->bytes);
    tdm_net_send_commit(peer, (size_t)(payload - (unsigned char *)h) + s->bytes);
    tdm_p2p_tx_envelope(peer, s->ctx, s->tag);
    s->hdr_done = 1;
    s->offset = s->bytes;
    tdm_p2p_complete(s);
    return true;
}

/* Write cells while the ring has room; true when all are in. */
static bool push_cells(tdm_req_t *s) {
    int peer = s->peer_world;
    size_t body = tdm_net_body_size(peer);
    if (!s->hdr_done) {
        tdm_pkt_eager_t *h = tdm_net_send_reserve(peer);
        if (!h)
            return false;
        uint8_t pad = tdm_eager_pad(s->dt, (const char *)s->buf + s->dt->true_lb, s->bytes, h + 1,
                                    body - sizeof(*h));
        size_t frag = TDM_MIN(s->bytes, body - sizeof(*h) - pad);
        tdm_p2p_fill_envelope(h, TDM_PKT_EAGER, s, s->bytes);
        tdm_net_set_stamp(peer, h, s->t_sent);
        h->pad = pad;
        h->frag = (uint32_t)frag;
        tdm_dtype_pack(s->buf, s->count, s->dt, 0, (unsigned char *)(h + 1) + pad, frag);
        tdm_net_send_commit(peer, sizeof(*h) + pad + frag);
        tdm_p2p_tx_envelope(peer, s->ctx, s->tag);
        s->hdr_done = 1;
        s->offset = frag;
    }
    while (s->offset < s->bytes) {
        tdm_pkt_cont_t *c = tdm_net_send_reserve(peer);
        if (!c)
            return false;
        size_t frag = TDM_MIN(s->bytes - s->offset, body - sizeof(*c));
        c->type = TDM_PKT_EAGER_CONT;
        c->pad = 0;
        c->frag = (uint32_t)frag;
        tdm_dtype_pack(s->buf, s->count, s->dt, s->offset, c + 1, frag);
        tdm_net_send_commit(peer, sizeof(*c) + frag);
        s->offset += frag;
    }
    return true;
}

/* EAGER's CELLS. */
static bool push_eager(tdm_req_t *s) {
    if (!push_cells(s))
        return false;
    tdm_p2p_complete(s);
    return true;
}

/* EAGER_SYNC's CELLS: then wait for the ACK, unless it came already (self). */
static bool push_sync(tdm_req_t *s) {
    if (!push_cells(s))
        return false;
    if (!s->acked) {
        s->stage = TDM_EAGER_S_WAIT_ACK;
        return true;
    }
    tdm_p2p_complete(s);
    return true;
}

void tdm_eager_acked(tdm_req_t *s) {
    s->acked = 1;
    if (s->proto == TDM_PROTO_EAGER_SYNC && s->stage == TDM_EAGER_S_WAIT_ACK)
        tdm_p2p_complete(s);
}

void tdm_eager_ack_sync(int src_world, uint32_t sreq, tdm_req_t *self_sreq) {
    if (self_sreq) {
        tdm_self_matched(self_sreq);
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
        r->proto = TDM_PROTO_EAGER;
        r->stage = TDM_EAGER_R_CELLS;
        return;
    }
    tdm_p2p_recv_copy(r, 0, ue->data, ue->size);
    tdm_p2p_unexp_free(ue);
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

/* ---- the objects ---- */

static void eager_show(tdm_sfmt_t *f, tdm_req_t *req, int peer) {
    if (req->kind != TDM_REQ_SEND) {
        tdm_sfmt_str(f, "matched an eager message, ");
        tdm_p2p_dump_range(f, req->offset, req->msg_size);
        tdm_sfmt_str(f, " arrived");
        return;
    }
    if (req->stage == TDM_EAGER_S_WAIT_ACK) {
        tdm_sfmt_str(f, "synchronous, data sent; waiting for rank ");
        tdm_sfmt_int(f, peer);
        tdm_sfmt_str(f, " to match it (ACK)");
        return;
    }
    tdm_sfmt_str(f, "eager, ");
    tdm_p2p_dump_range(f, req->offset, req->bytes);
    tdm_sfmt_str(f, " written; the ring to the receiver is full (it is not receiving)");
}

static const tdm_proto_push_fn short_push[] = {[TDM_EAGER_S_CELLS] = push_short};
static const tdm_proto_push_fn eager_push[] = {[TDM_EAGER_S_CELLS] = push_eager};
static const tdm_proto_push_fn sync_push[] = {
    [TDM_EAGER_S_CELLS] = push_sync,
    [TDM_EAGER_S_WAIT_ACK] = NULL,
};

/* The eager forms differ only in their stages and description. Nothing of an eager
 * message can fail midway (the rings): no fallback. */
#define EAGER_PROTO(_name, _push, _desc)                                                           \
    { .name = (_name), .desc = (_desc), .push = (_push), .show = eager_show }

const tdm_proto_t tdm_proto_eager_short =
    EAGER_PROTO("eager/short", short_push,
                "at most 40 bytes wanting no answer: header and payload in the cell's first cache "
                "line (EAGER_SHORT)");

const tdm_proto_t tdm_proto_eager =
    EAGER_PROTO("eager", eager_push,
                "up to the eager limit: a header cell with the first fragment, then continuation "
                "cells (EAGER, EAGER_CONT); kept by the receiver if no receive is posted");

const tdm_proto_t tdm_proto_eager_sync =
    EAGER_PROTO("eager/sync", sync_push,
                "a synchronous send up to the eager limit: eager cells flagged SYNC; the receiver "
                "answers ACK when a receive matches");
