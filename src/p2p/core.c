/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's core, below every protocol: completing and releasing requests,
 * control packets and the per-peer transmit queues, delivering bytes into a
 * matched receive. Protocols (proto/, part.c) call down into it; it calls no
 * protocol, so the engine's files form no cycle: engine.c (progress, dispatch)
 * -> send.c/recv.c (entry points) -> proto/ -> core.c -> match.c, req.c.
 */
#include "p2p_impl.h"
#include "../base/copy.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(tdm_pkt_cts_cma_t) <= TDM_CTRL_MAX, "cts fits a queued control packet");
_Static_assert(sizeof(tdm_pkt_rtr_t) <= TDM_CTRL_MAX, "rtr fits a queued control packet");
_Static_assert(sizeof(tdm_pkt_pull_t) <= TDM_CTRL_MAX, "pull fits a queued control packet");

void tdm_p2p_complete(tdm_req_t *req) {
    req->done = 1;
    if (TDM_UNLIKELY(req->out_counted)) {
        if (--tdm_p2p.rndv_out[req->peer_world] == 0)
            tdm_p2p_adapt_sends_done(req->peer_world);
        req->out_counted = 0;
    }
    if (req->on_complete)
        req->on_complete(req);
    /* MPI_Request_free on an active request: nobody will wait for it */
    if (req->user_freed)
        tdm_p2p_release(req);
}

void tdm_p2p_release(tdm_req_t *req) {
    if (req->dt)
        tdm_dtype_release(req->dt);
    tdm_req_free(req);
}

void tdm_p2p_txq_push(int peer, tdm_txitem_t *item) {
    tdm_p2p_stats.ring_full++;
    if (tdm_list_empty(&tdm_p2p.txq[peer]))
        tdm_p2p.tx_busy++;
    tdm_list_push_back(&tdm_p2p.txq[peer], &item->link);
    /* ask the consumer to ring our doorbell when it frees a cell */
    atomic_store_explicit(&tdm_shm_pair(tdm_p2p.rank, peer)->producer_waiting, 1,
                          memory_order_relaxed);
}

void tdm_p2p_send_ctrl(int peer, const void *pkt, size_t len) {
    if (tdm_list_empty(&tdm_p2p.txq[peer])) {
        void *cell = tdm_shm_send_reserve(peer);
        if (cell) {
            memcpy(cell, pkt, len);
            tdm_shm_send_commit(peer);
            return;
        }
    }
    tdm_ctrl_t *c = malloc(sizeof(*c));
    if (!c) {
        /* cannot drop a control packet: its peer would wait forever */
        tdm_error(P2P, "out of memory queueing a control packet to rank %d; aborting", peer);
        abort();
    }
    c->tx.is_ctrl = 1;
    c->len = (uint8_t)len;
    memcpy(c->pkt, pkt, len);
    tdm_p2p_txq_push(peer, &c->tx);
}

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

/* Copy stream bytes [off, off+len) of the message into the receive buffer,
 * dropping what lies past its end. */
void tdm_p2p_recv_copy(tdm_req_t *r, size_t off, const void *data, size_t len) {
    if (off >= r->bytes)
        return;
    if (len > r->bytes - off)
        len = r->bytes - off;
    tdm_p2p_copy_in(r->buf, r->count, r->dt, off, data, len);
}

void tdm_p2p_recv_cancelled(tdm_req_t *r) {
    tdm_p2p_posted_remove(r);
    r->status.cancelled = 1;
    r->status.bytes = 0;
    tdm_p2p_complete(r);
}

void tdm_p2p_unexp_arrived(tdm_unexp_t *ue) {
    if (ue->claimed) {
        /* a receive (or Mrecv) took it while it was arriving */
        tdm_req_t *r = ue->claimed;
        r->unexp = NULL;
        tdm_p2p_recv_copy(r, 0, ue->data, ue->size);
        tdm_p2p_unexp_free(ue);
        tdm_p2p_complete(r);
    }
}

void tdm_p2p_fill_envelope(tdm_pkt_eager_t *h, uint8_t type, const tdm_req_t *s, size_t bytes) {
    h->type = type;
    h->flags = ((s->mode & ~TDM_MODE_BLOCKING) == TDM_MODE_SYNC) ? TDM_PKTF_SYNC : 0;
    h->mode = s->mode;
    h->pad = 0;
    h->ctx = s->ctx;
    h->src = s->self_rank;
    h->tag = s->tag;
    h->sreq = s->id;
    h->size = bytes;
}

tdm_req_t *tdm_p2p_req_of_packet(uint32_t id, int peer, const char *what) {
    tdm_req_t *r = tdm_req_lookup(id);
    if (!r) {
        tdm_error(P2P, "%s from rank %d names request %#x, which does not exist", what, peer, id);
        abort();
    }
    return r;
}
