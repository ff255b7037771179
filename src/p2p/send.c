/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sends: the entry point. select.c says how the message goes (eager,
 * rendezvous, the eager range as timed); the protocol's object writes it
 * (proto/eager.c, proto/self.c, proto/rndv_*.c), a progress function per stage. Sends to one peer
 * leave in call order: once anything waits in the peer's transmit queue, later sends queue behind
 * it.
 */
#include "proto/eager.h"

#include <stdlib.h>
#include <string.h>

bool tdm_p2p_send_push(tdm_req_t *s) {
    tdm_proto_push_fn push = tdm_protos[s->proto]->push[s->stage];
    return push ? push(s) : true; /* NULL: waiting for the peer, nothing to write */
}

/* tdm_p2p_isend, and tdm_p2p_send's start with `owned` (see tdm_req_set_comm_owned) */
static inline __attribute__((always_inline)) tdm_rc_t
send_start(const void *buf, size_t count, tdm_dtype_t *dt, int dst_world, int self_rank, int tag,
           uint32_t ctx, uint8_t mode, void *comm, bool want_req, bool owned, tdm_req_t **req_p) {
    size_t bytes = count * dt->size;
    int sync = (mode & ~TDM_MODE_BLOCKING) == TDM_MODE_SYNC;
    /* the whole start under the pair's lock: the ring's producer end, the transmit queue
     * and the new request are the pair's (p2p_impl.h) */
    tdm_p2p_peer_lock(dst_world);

    /* Fast path: a blocking, non-synchronous message that fits one cell goes
     * straight into the ring with no request at all. */
    if (tdm_p2p_select_at_once(want_req, sync, dst_world == tdm_p2p.rank, bytes,
                               tdm_net_body_size(dst_world) - sizeof(tdm_pkt_eager_t),
                               &tdm_p2p.txq[dst_world])) {
        tdm_pkt_eager_t *h = tdm_net_send_reserve(dst_world);
        const char *data = (const char *)buf + dt->true_lb;
        if (TDM_LIKELY(h != NULL)) {
            unsigned char *payload;
            if (bytes <= TDM_PKT_SHORT_MAX) {
                payload = tdm_eager_fill_short(h, mode, ctx, self_rank, tag, bytes);
            } else {
                uint8_t pad = tdm_eager_pad(dt, data, bytes, h + 1,
                                            tdm_net_body_size(dst_world) - sizeof(*h));
                payload = (unsigned char *)(h + 1) + pad;
                tdm_net_set_stamp(dst_world, h, 0);
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
            tdm_net_send_commit(dst_world, (size_t)(payload - (unsigned char *)h) + bytes);
            tdm_p2p_tx_envelope(dst_world, ctx, tag);
            tdm_p2p_peer_unlock(dst_world);
            TDM_P2P_STAT_ADD(&tdm_p2p_stats.eager_msgs, 1);
            TDM_P2P_STAT_ADD(&tdm_p2p_stats.eager_bytes, bytes);
            TDM_P2P_STAT_ADD(&tdm_p2p_stats.sent_at_once, 1);
            *req_p = NULL;
            return TDM_OK;
        }
    }

    tdm_req_t *s = tdm_req_alloc(TDM_REQ_SEND);
    if (!s) {
        tdm_p2p_peer_unlock(dst_world);
        tdm_error(P2P, "out of memory for a send request to rank %d", dst_world);
        return TDM_ERR_NOMEM;
    }
    s->mode = mode;
    if (owned)
        tdm_req_set_comm_owned(s, comm);
    else
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

    if (dst_world == tdm_p2p.rank) {
        tdm_rc_t rc = tdm_self_send(s);
        tdm_p2p_peer_unlock(dst_world);
        return rc;
    }

    tdm_send_way_t way = tdm_p2p_select_send(bytes, !tdm_net_local(dst_world));
    bool rndv = way == TDM_SEND_RNDV;
    if (way == TDM_SEND_RANGE)
        s->t_sent = tdm_p2p_adapt_eager_send(dst_world, bytes, dt, &rndv);
    /* every protocol starts in its stage 0 */
    if (!rndv) {
        s->proto = sync                         ? TDM_PROTO_EAGER_SYNC
                   : bytes <= TDM_PKT_SHORT_MAX ? TDM_PROTO_EAGER_SHORT
                                                : TDM_PROTO_EAGER;
        TDM_P2P_STAT_ADD(&tdm_p2p_stats.eager_msgs, 1);
        TDM_P2P_STAT_ADD(&tdm_p2p_stats.eager_bytes, bytes);
    } else if (!tdm_rtr_try_send(s)) {
        s->proto = TDM_PROTO_RNDV;
        memset(tdm_rndv(s), 0, sizeof(tdm_rndv_t));
    }
    if (!tdm_list_empty(&tdm_p2p.txq[dst_world]) || !tdm_p2p_send_push(s))
        tdm_p2p_txq_push(dst_world, &s->tx);
    tdm_p2p_peer_unlock(dst_world);
    if (TDM_UNLIKELY(tdm_p2p_async_on) && !(mode & TDM_MODE_BLOCKING))
        tdm_p2p_async_arm(s);
    return TDM_OK;
}

tdm_rc_t tdm_p2p_isend(const void *buf, size_t count, tdm_dtype_t *dt, int dst_world, int self_rank,
                       int tag, uint32_t ctx, uint8_t mode, void *comm, bool want_req,
                       tdm_req_t **req_p) {
    return send_start(buf, count, dt, dst_world, self_rank, tag, ctx, mode, comm, want_req, false,
                      req_p);
}

tdm_rc_t tdm_p2p_send(const void *buf, size_t count, tdm_dtype_t *dt, int dst_world, int self_rank,
                      int tag, uint32_t ctx, uint8_t mode, void *comm) {
    tdm_req_t *s;
    tdm_rc_t rc = send_start(buf, count, dt, dst_world, self_rank, tag, ctx,
                             mode | TDM_MODE_BLOCKING, comm, false, true, &s);
    if (rc != TDM_OK || !s)
        return rc;
    tdm_p2p_wait(s);
    tdm_p2p_release(s);
    return TDM_OK;
}
