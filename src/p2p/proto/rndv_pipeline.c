/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-copy pipeline, for pairs where CMA is not permitted (or not wanted):
 * after the CTS the sender packs the message into DATA cells of the ring and
 * the receiver unpacks them as they arrive; the ring's cells are the pipeline's
 * buffers, so both copies run concurrently.
 */
#include "../p2p_impl.h"

static void pipeline_recv_start(tdm_req_t *r, const tdm_rts_info_t *rts) {
    tdm_rndv_t *st = tdm_rndv(r);
    st->total = TDM_MIN((uint64_t)r->msg_size, (uint64_t)r->bytes);
    st->via_data = 1;
    st->expect_data = st->total;
    st->hi = st->total;
    st->part_done = st->total == 0;
    tdm_pkt_cts_cma_t cts = {
        .cts = {.type = TDM_PKT_CTS, .proto = TDM_PROTO_PIPELINE, .sreq = rts->sreq, .rreq = r->id},
        .split = 0,
        .total = st->total};
    tdm_p2p_send_ctrl(r->peer_world, &cts, sizeof(cts));
    tdm_rndv_try_complete(r);
}

static void pipeline_send_cts(tdm_req_t *s, const tdm_pkt_cts_t *cts) {
    const tdm_pkt_cts_cma_t *c = (const tdm_pkt_cts_cma_t *)cts;
    tdm_rndv_t *st = tdm_rndv(s);
    st->total = c->total;
    st->part_done = 1; /* no CMA part; the stream is the whole transfer */
    st->stream_off = 0;
    st->stream_end = c->total;
    st->stream_own = 0;
    s->stage = TDM_SSTAGE_STREAM;
    tdm_p2p_txq_push(s->peer_world, &s->tx);
}

const tdm_proto_t tdm_proto_pipeline = {
    .name = "rndv/pipeline/shm",
    .caps = 0,
    .split = NULL,
    .recv_start = pipeline_recv_start,
    .send_cts = pipeline_send_cts,
};
