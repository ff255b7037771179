/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The eager protocol's hot parts, inline: writing a one-cell message (the
 * blocking send's no-request path, send.c) and receiving the first cell of a
 * message (engine.c's dispatch calls these directly, not through the packet
 * table: an indirect call there cost the smallest messages). The rest of the
 * protocol is proto/eager.c.
 */
#ifndef TDM_P2P_PROTO_EAGER_H
#define TDM_P2P_PROTO_EAGER_H

#include "../p2p_impl.h"

#include <stdlib.h>

/* Stages of the eager protocols (EAGER_SHORT, EAGER, EAGER_SYNC; proto/eager.c). */
enum {
    TDM_EAGER_S_CELLS = 0, /* send: cells still to write */
    TDM_EAGER_S_WAIT_ACK,  /* send, synchronous: written, waiting for the ACK */
    TDM_EAGER_R_CELLS,     /* receive: matched, continuation cells still arriving */
};

/* A message of at most TDM_PKT_SHORT_MAX bytes that wants no answer: header
 * and payload in the cell's first cache line (wire.h). The cell's stamp is not
 * written: the adaptive eager range starts far above this size. Returns where
 * the payload goes. */
static inline unsigned char *tdm_eager_fill_short(void *cell, uint8_t mode, uint32_t ctx,
                                                  int self_rank, int tag, size_t bytes) {
    tdm_pkt_short_t *h = cell;
    TDM_P2P_STAT_ADD(&tdm_p2p_stats.short_msgs, 1);
    TDM_P2P_STAT_ADD(&tdm_p2p_stats.short_bytes, bytes);
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
static inline uint8_t tdm_eager_pad(const tdm_dtype_t *dt, const void *data, size_t bytes,
                                    const void *payload, size_t room) {
    if (!dt->contig || bytes < TDM_PKT_ALIGN_MIN)
        return 0;
    uint8_t pad = tdm_pkt_pad(payload, data);
    return bytes + pad <= room ? pad : 0;
}

/* The first cell of an eager message (EAGER or EAGER_SHORT, whose fields come
 * here as arguments: each caller's are constants or loads of its own header).
 * `h` is the cell's body, for its stamp; a short message has none (stamped 0). */
static inline __attribute__((always_inline)) void
tdm_eager_rx_msg(int peer, const void *h, bool stamped, uint32_t ctx, int src, int tag,
                 uint8_t flags, uint8_t mode, uint32_t sreq, size_t size, size_t frag,
                 const unsigned char *payload) {
    tdm_p2p.rx_count[peer]++;
    /* matched, or queued as unexpected, under one hold of the bucket: a receive posted
     * meanwhile by another thread finds it in one queue or the other */
    tdm_p2p_bucket_t *b = tdm_p2p_bucket(ctx);
    tdm_lock_acquire(&b->lock);
    tdm_req_t *r = tdm_p2p_match_posted(ctx, src, tag);
    if (r) {
        tdm_lock_release(&b->lock);
        tdm_p2p_recv_set_envelope(r, src, tag, peer, size);
        /* posted before it came: its time counts */
        r->t_sent = stamped ? tdm_net_stamp(peer, h) : 0;
        if (flags & TDM_PKTF_SYNC) {
            tdm_pkt_ack_t ack = {.type = TDM_PKT_ACK, .req = sreq};
            tdm_p2p_send_ctrl(peer, &ack, sizeof(ack));
        }
        tdm_p2p_recv_copy(r, 0, payload, frag);
        if (frag == size) {
            if (r->t_sent)
                tdm_p2p_eager_adapt_done(r, false);
            tdm_p2p_complete(r);
        } else {
            r->proto = TDM_PROTO_EAGER;
            r->stage = TDM_EAGER_R_CELLS;
            r->offset = frag;
            tdm_p2p.rx[peer].req = r;
        }
        return;
    }
    tdm_unexp_t *ue = tdm_p2p_unexp_new(ctx, src, tag, size, true);
    if (!ue) {
        tdm_error(P2P, "out of memory keeping an unexpected %llu-byte message from rank %d",
                  (unsigned long long)size, peer);
        abort();
    }
    ue->type = TDM_PKT_EAGER;
    ue->flags = flags;
    ue->mode = mode;
    ue->sreq = sreq;
    ue->src_world = peer;
    tdm_copy(ue->data, payload, frag);
    ue->received = frag;
    if (ue->received < ue->size)
        tdm_p2p.rx[peer].ue = ue;
    tdm_p2p_unexp_push(ue);
    tdm_lock_release(&b->lock);
}

static inline __attribute__((always_inline)) void tdm_eager_rx(int peer, const tdm_pkt_eager_t *h) {
    /* Below TDM_PKT_ALIGN_MIN the pad is always 0: not reading it there keeps the
     * payload's address independent of a load from the cell (docs/performance.md). */
    const unsigned char *payload = (const unsigned char *)(h + 1);
    if (TDM_UNLIKELY(h->size >= TDM_PKT_ALIGN_MIN))
        payload += h->pad;
    tdm_eager_rx_msg(peer, h, true, h->ctx, h->src, h->tag, h->flags, h->mode, h->sreq, h->size,
                     h->frag, payload);
}

static inline __attribute__((always_inline)) void tdm_eager_rx_short(int peer,
                                                                     const tdm_pkt_short_t *h) {
    tdm_eager_rx_msg(peer, h, false, h->ctx, h->src, h->tag, 0, h->mode, 0, h->size, h->size,
                     (const unsigned char *)(h + 1));
}

/* proto/eager.c */
/* A synchronous eager message was matched: answer its sender (ACK, or the
 * waiting send itself when it is ours). */
void tdm_eager_ack_sync(int src_world, uint32_t sreq, tdm_req_t *self_sreq);
/* A receive matched an unexpected eager message (whole, or still arriving). */
void tdm_eager_matched_unexp(tdm_req_t *r, tdm_unexp_t *ue);
/* The ACK of a synchronous send arrived (or its self match happened). */
void tdm_eager_acked(tdm_req_t *s);

/* proto/self.c: a send to this process itself */
tdm_rc_t tdm_self_send(tdm_req_t *s);
/* A receive matched a synchronous send to self (kept as unexpected): it completes. */
void tdm_self_matched(tdm_req_t *s);

#endif
