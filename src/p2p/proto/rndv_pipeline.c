/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-copy pipeline: after the CTS the sender packs the message into DATA cells
 * of the ring and the receiver unpacks them as they arrive; the ring's cells are
 * the pipeline's buffers, so sender and receiver copy concurrently. Used where
 * CMA is not available (and, until the CMA protocols exist, for every rendezvous).
 */
#include "../p2p_impl.h"
#include "../proto.h"

void tdm_p2p_rndv_matched(tdm_req_t *r, uint32_t sreq, uint8_t mode) {
    tdm_proto_id_t proto = tdm_p2p_select(mode, r->msg_size, r->peer_world);
    r->stage = TDM_RSTAGE_RNDV;
    r->proto = (uint8_t)proto;
    r->remote_id = sreq;
    r->offset = 0;
    tdm_pkt_cts_t cts = {.type = TDM_PKT_CTS, .proto = (uint8_t)proto, .sreq = sreq, .rreq = r->id};
    tdm_p2p_send_ctrl(r->peer_world, &cts, sizeof(cts));
}

void tdm_p2p_rndv_data(tdm_req_t *r, const tdm_pkt_data_t *d) {
    tdm_p2p_recv_copy(r, d->offset, d + 1, d->frag);
    r->offset += d->frag;
    if (r->offset == r->msg_size) {
        r->stage = TDM_RSTAGE_DONE;
        tdm_p2p_complete(r);
    }
}
