/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sends. Eager messages (up to the eager limit) are written into the ring
 * toward the peer: a header cell carrying the first fragment, then continuation
 * cells. Larger ones start a rendezvous with an RTS; the receiver picks the
 * protocol (select.c). Sends to one peer leave in call order: once anything waits
 * in the peer's transmit queue, later sends queue behind it.
 */
#include "p2p_impl.h"
#include "../base/copy.h"

#include <stdlib.h>
#include <string.h>

static void fill_envelope(tdm_pkt_eager_t *h, uint8_t type, const tdm_req_t *s, size_t bytes) {
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

/* A message of at most TDM_PKT_SHORT_MAX bytes that wants no answer: header
 * and payload in the cell's first cache line (wire.h). The cell's stamp is not
 * written: the adaptive eager range starts far above this size. Returns where
 * the payload goes. */
static inline unsigned char *fill_short(void *cell, uint8_t mode, uint32_t ctx, int self_rank,
                                        int tag, size_t bytes) {
    tdm_pkt_short_t *h = cell;
    tdm_p2p_stats.short_msgs++;
    tdm_p2p_stats.short_bytes += bytes;
    h->type = TDM_PKT_EAGER_SHORT;
    h->mode = mode;
    h->size = (uint8_t)bytes;
    h->rsvd = 0;
    h->ctx = ctx;
    h->src = self_rank;
    h->tag = tag;
    return (unsigned char *)(h + 1);
}
_Static_assert(TDM_SHM_CELL_PREFIX + sizeof(tdm_pkt_short_t) + TDM_PKT_SHORT_MAX == TDM_CACHELINE,
               "a short message fills at most the cell's first line");

/* Where the payload starts in its cell: right after the header, or for a
 * contiguous message of one cell above TDM_PKT_ALIGN_MIN at the data's offset
 * within a cache line (wire.h). */
static uint8_t eager_pad(const tdm_dtype_t *dt, const void *data, size_t bytes, const void *payload,
                         size_t room) {
    if (!dt->contig || bytes < TDM_PKT_ALIGN_MIN)
        return 0;
    uint8_t pad = tdm_pkt_pad(payload, data);
    return bytes + pad <= room ? pad : 0;
}

/* Eager stage: write cells while the ring has room. */
static bool push_eager(tdm_req_t *s) {
    int peer = s->peer_world;
    size_t body = tdm_shm_body_size();
    if (!s->hdr_done) {
        tdm_pkt_eager_t *h = tdm_shm_send_reserve(peer);
        if (!h)
            return false;
        if (s->bytes <= TDM_PKT_SHORT_MAX && (s->mode & ~TDM_MODE_BLOCKING) != TDM_MODE_SYNC) {
            unsigned char *payload = fill_short(h, s->mode, s->ctx, s->self_rank, s->tag, s->bytes);
            tdm_dtype_pack(s->buf, s->count, s->dt, 0, payload, s->bytes);
            tdm_shm_send_commit(peer);
            tdm_p2p_tx_envelope(peer, s->ctx, s->tag);
            s->hdr_done = 1;
            s->offset = s->bytes;
            return true;
        }
        uint8_t pad = eager_pad(s->dt, (const char *)s->buf + s->dt->true_lb, s->bytes, h + 1,
                                body - sizeof(*h));
        size_t frag = TDM_MIN(s->bytes, body - sizeof(*h) - pad);
        fill_envelope(h, TDM_PKT_EAGER, s, s->bytes);
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

static bool push_rts(tdm_req_t *s) {
    tdm_pkt_rts_cma_t *h = tdm_shm_send_reserve(s->peer_world);
    if (!h)
        return false;
    fill_envelope(&h->env, TDM_PKT_RTS, s, s->bytes);
    tdm_shm_cell_set_stamp(h, s->t_sent);
    h->env.frag = 0;
    h->pid = tdm_shm.procs[tdm_p2p.rank].pid;
    h->rsvd = 0;
    if (tdm_layout_describable(s->dt)) {
        tdm_layout_t mine;
        tdm_layout_local(&mine, s->buf, s->count, s->dt);
        tdm_layout_to_wire(&mine, &h->buf);
        if (tdm_p2p_select_pull(s->bytes, h->env.flags & TDM_PKTF_SYNC))
            h->env.flags |= TDM_PKTF_PULL;
    } else {
        memset(&h->buf, 0, sizeof(h->buf)); /* not addressable: the receiver picks pipeline */
    }
    /* the receiver may match at once: it must see this process as running (select.c) */
    atomic_store_explicit(&tdm_shm.procs[tdm_p2p.rank].beat, tdm_shm_clock(), memory_order_relaxed);
    tdm_shm_send_commit(s->peer_world);
    tdm_p2p_tx_envelope(s->peer_world, s->ctx, s->tag);
    tdm_p2p.rndv_out[s->peer_world]++;
    s->out_counted = 1;
    s->hdr_done = 1;
    s->stage = TDM_SSTAGE_WAIT_CTS;
    return true;
}

bool tdm_p2p_send_push(tdm_req_t *s) {
    switch (s->stage) {
    case TDM_SSTAGE_EAGER:
        if (!push_eager(s))
            return false;
        if ((s->mode & ~TDM_MODE_BLOCKING) == TDM_MODE_SYNC && !s->acked) {
            s->stage = TDM_SSTAGE_WAIT_ACK;
            return true;
        }
        s->stage = TDM_SSTAGE_DONE;
        tdm_p2p_complete(s);
        return true;
    case TDM_SSTAGE_RTS:
        return push_rts(s);
    case TDM_SSTAGE_STREAM:
        return tdm_rndv_stream_push(s);
    case TDM_SSTAGE_RTR:
        return tdm_rtr_push(s);
    default:
        return true; /* waiting for the peer: nothing to write */
    }
}

void tdm_p2p_send_on_ack(tdm_req_t *s) {
    s->acked = 1;
    if (s->stage == TDM_SSTAGE_WAIT_ACK) {
        s->stage = TDM_SSTAGE_DONE;
        tdm_p2p_complete(s);
    }
}

/* A send to ourselves: hand it to a posted receive or keep a copy as unexpected. */
static tdm_rc_t send_self(tdm_req_t *s) {
    tdm_req_t *r = tdm_p2p_match_posted(s->ctx, s->self_rank, s->tag);
    if (r) {
        tdm_p2p_recv_set_envelope(r, s->self_rank, s->tag, tdm_p2p.rank, s->bytes);
        size_t n = TDM_MIN(s->bytes, r->bytes);
        if (s->dt->contig && r->dt->contig) {
            if (n)
                tdm_copy((char *)r->buf + r->dt->true_lb, (char *)s->buf + s->dt->true_lb, n);
        } else {
            unsigned char bounce[4096];
            for (size_t off = 0; off < n; off += sizeof(bounce)) {
                size_t len = TDM_MIN(sizeof(bounce), n - off);
                tdm_dtype_pack(s->buf, s->count, s->dt, off, bounce, len);
                tdm_dtype_unpack(r->buf, r->count, r->dt, off, bounce, len);
            }
        }
        r->stage = TDM_RSTAGE_DONE;
        tdm_p2p_complete(r);
        s->stage = TDM_SSTAGE_DONE;
        tdm_p2p_complete(s);
        return TDM_OK;
    }
    tdm_unexp_t *ue = tdm_p2p_unexp_new(s->ctx, s->self_rank, s->tag, s->bytes, true);
    if (!ue) {
        tdm_error(P2P, "out of memory buffering a %zu-byte message to self", s->bytes);
        return TDM_ERR_NOMEM;
    }
    ue->type = TDM_PKT_EAGER;
    ue->flags = (s->mode & ~TDM_MODE_BLOCKING) == TDM_MODE_SYNC ? TDM_PKTF_SYNC : 0;
    ue->src_world = tdm_p2p.rank;
    ue->received = s->bytes;
    tdm_dtype_pack(s->buf, s->count, s->dt, 0, ue->data, s->bytes);
    tdm_p2p_unexp_push(ue);
    if ((s->mode & ~TDM_MODE_BLOCKING) == TDM_MODE_SYNC) {
        ue->self_sreq = s; /* completes when a receive matches */
        s->stage = TDM_SSTAGE_WAIT_ACK;
    } else {
        s->stage = TDM_SSTAGE_DONE;
        tdm_p2p_complete(s);
    }
    return TDM_OK;
}

tdm_rc_t tdm_p2p_isend(const void *buf, size_t count, tdm_dtype_t *dt, int dst_world, int self_rank,
                       int tag, uint32_t ctx, uint8_t mode, void *comm, bool want_req,
                       tdm_req_t **req_p) {
    size_t bytes = count * dt->size;
    int sync = (mode & ~TDM_MODE_BLOCKING) == TDM_MODE_SYNC;

    /* Fast path: a blocking, non-synchronous message that fits one cell goes
     * straight into the ring with no request at all. */
    if (tdm_p2p_select_at_once(want_req, sync, dst_world == tdm_p2p.rank, bytes,
                               tdm_shm_body_size() - sizeof(tdm_pkt_eager_t),
                               &tdm_p2p.txq[dst_world])) {
        tdm_pkt_eager_t *h = tdm_shm_send_reserve(dst_world);
        const char *data = (const char *)buf + dt->true_lb;
        if (TDM_LIKELY(h != NULL)) {
            unsigned char *payload;
            if (bytes <= TDM_PKT_SHORT_MAX) {
                payload = fill_short(h, mode, ctx, self_rank, tag, bytes);
            } else {
                uint8_t pad = eager_pad(dt, data, bytes, h + 1, tdm_shm_body_size() - sizeof(*h));
                payload = (unsigned char *)(h + 1) + pad;
                tdm_shm_cell_set_stamp(h, 0);
                h->type = TDM_PKT_EAGER;
                h->flags = 0;
                h->mode = mode;
                h->pad = pad;
                h->ctx = ctx;
                h->src = self_rank;
                h->tag = tag;
                h->sreq = 0;
                h->frag = (uint32_t)bytes;
                h->size = bytes;
            }
            if (dt->contig)
                tdm_copy(payload, data, bytes);
            else
                tdm_dtype_pack(buf, count, dt, 0, payload, bytes);
            tdm_shm_send_commit(dst_world);
            tdm_p2p_tx_envelope(dst_world, ctx, tag);
            tdm_p2p_stats.eager_msgs++;
            tdm_p2p_stats.eager_bytes += bytes;
            tdm_p2p_stats.sent_at_once++;
            *req_p = NULL;
            return TDM_OK;
        }
    }

    tdm_req_t *s = tdm_req_alloc(TDM_REQ_SEND);
    if (!s) {
        tdm_error(P2P, "out of memory for a send request to rank %d", dst_world);
        return TDM_ERR_NOMEM;
    }
    s->mode = mode;
    tdm_req_set_comm(s, comm);
    s->ctx = ctx;
    s->peer_world = dst_world;
    s->self_rank = self_rank;
    s->tag = tag;
    s->buf = (void *)buf;
    s->count = count;
    s->dt = dt;
    s->bytes = bytes;
    s->status.bytes = bytes;
    tdm_dtype_retain(dt);
    *req_p = s;

    if (dst_world == tdm_p2p.rank)
        return send_self(s);

    tdm_send_way_t way = tdm_p2p_select_send(bytes);
    bool rndv = way == TDM_SEND_RNDV;
    if (way == TDM_SEND_RANGE)
        s->t_sent = tdm_p2p_adapt_eager_send(dst_world, bytes, dt, &rndv);
    if (!rndv) {
        s->stage = TDM_SSTAGE_EAGER;
        tdm_p2p_stats.eager_msgs++;
        tdm_p2p_stats.eager_bytes += bytes;
    } else if (!tdm_rtr_try_send(s)) {
        s->stage = TDM_SSTAGE_RTS;
        memset(tdm_rndv(s), 0, sizeof(tdm_rndv_t));
    }
    if (!tdm_list_empty(&tdm_p2p.txq[dst_world]) || !tdm_p2p_send_push(s))
        tdm_p2p_txq_push(dst_world, &s->tx);
    return TDM_OK;
}
