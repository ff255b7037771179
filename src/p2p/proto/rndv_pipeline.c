/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-copy pipeline, for pairs where CMA is not permitted (or not wanted), and
 * the protocol a CMA protocol hands the rest of a transfer to when its copy
 * fails (select.c's fallback): the sender packs the bytes into DATA cells of
 * the ring and the receiver unpacks them as they arrive; the ring's cells are
 * the pipeline's buffers, so both copies run concurrently.
 *
 * Sender:   STREAM --range written--> (the next waiting range: STREAM)
 *                  --all written, FIN after my own part if the peer waits--> done,
 *                    or WAIT_FIN when the peer still copies a part of its own
 *           WAIT_FIN --peer's FIN--> done;  --PULL--> STREAM
 * Receiver: DATA --every counted byte in, FIN if the peer waits--> done, or WAIT_FIN
 *           WAIT_FIN --peer's FIN--> done
 * DATA cells of a range the receiver counts carry TDM_DATAF_PULLED; a sender's
 * own part taken over from a CMA protocol does not (its FIN follows instead).
 */
#include "../p2p_impl.h"
#include "../../base/sigfmt.h"

#include <stdlib.h>

enum { PIPE_S_STREAM = 0, PIPE_WAIT_FIN, PIPE_R_DATA };

static bool is_send(const tdm_req_t *req) {
    return req->kind == TDM_REQ_SEND;
}

static void pipe_recv_start(tdm_req_t *r, const tdm_rts_info_t *rts) {
    tdm_rndv_t *st = tdm_rndv(r);
    st->total = TDM_MIN((uint64_t)r->msg_size, (uint64_t)r->bytes);
    st->expect_data = st->total;
    st->hi = st->total;
    r->stage = PIPE_R_DATA;
    tdm_pkt_cts_cma_t cts = {
        .cts = {.type = TDM_PKT_CTS, .proto = TDM_PROTO_PIPELINE, .sreq = rts->sreq, .rreq = r->id},
        .split = 0,
        .total = st->total};
    tdm_p2p_send_ctrl(r->peer_world, &cts, sizeof(cts));
    if (st->total == 0)
        tdm_rndv_part_done(r, PIPE_WAIT_FIN);
}

static void pipe_send_cts(tdm_req_t *s, const tdm_pkt_cts_t *cts) {
    const tdm_pkt_cts_cma_t *c = (const tdm_pkt_cts_cma_t *)cts;
    tdm_rndv_t *st = tdm_rndv(s);
    st->total = c->total;
    st->cur = 0;
    st->hi = c->total;
    st->stream_own = 0;
    s->stage = PIPE_S_STREAM;
    tdm_p2p_txq_push(s->peer_world, &s->tx);
}

/* STREAM: DATA cells of the current range, then of the waiting one. */
static bool pipe_push_stream(tdm_req_t *s) {
    tdm_rndv_t *st = tdm_rndv(s);
    size_t body = tdm_net_body_size(s->peer_world);
    for (;;) {
        while (st->cur < st->hi) {
            tdm_pkt_data_t *d = tdm_net_send_reserve(s->peer_world);
            if (!d)
                return false;
            size_t frag = TDM_MIN(st->hi - st->cur, body - sizeof(*d));
            d->type = TDM_PKT_DATA;
            d->flags = st->stream_own ? 0 : TDM_DATAF_PULLED;
            d->rreq = s->remote_id;
            d->frag = (uint32_t)frag;
            d->offset = st->cur;
            tdm_dtype_pack(s->buf, s->count, s->dt, (size_t)st->cur, d + 1, frag);
            tdm_net_send_commit(s->peer_world, sizeof(*d) + frag);
            st->cur += frag;
        }
        if (st->stream_own) {
            st->stream_own = 0;
            if (st->fin_out) { /* after the DATA cells: same ring, in order */
                tdm_rndv_send_fin(s->peer_world, s->remote_id);
                st->fin_out = 0;
            }
        }
        if (st->wait_off >= st->wait_end)
            break;
        st->cur = st->wait_off;
        st->hi = st->wait_end;
        st->stream_own = st->wait_own;
        st->wait_off = st->wait_end = 0;
        st->wait_own = 0;
    }
    if (st->peer_part && !st->peer_done) {
        s->stage = PIPE_WAIT_FIN;
        return true;
    }
    tdm_rndv_complete(s);
    return true;
}

static void pipe_on_fin(tdm_req_t *req) {
    if (req->stage == PIPE_WAIT_FIN) {
        tdm_rndv_complete(req);
        return;
    }
    tdm_rndv(req)->peer_done = 1;
}

/* The receiver's read failed too (COOP): its range streams after mine. */
static void pipe_on_pull(tdm_req_t *s, uint64_t off, uint64_t len) {
    tdm_rndv_t *st = tdm_rndv(s);
    if (s->stage == PIPE_S_STREAM) {
        if (st->wait_off < st->wait_end) {
            tdm_error(P2P, "a second pull from rank %d while one waits", s->peer_world);
            abort();
        }
        st->wait_off = off;
        st->wait_end = off + len;
        st->wait_own = 0;
        return;
    }
    st->cur = off;
    st->hi = off + len;
    st->stream_own = 0;
    s->stage = PIPE_S_STREAM;
    tdm_p2p_txq_push(s->peer_world, &s->tx);
}

static void pipe_on_data(tdm_req_t *r, uint64_t len) {
    tdm_rndv_t *st = tdm_rndv(r);
    st->got_data += len;
    if (r->stage == PIPE_R_DATA && st->got_data >= st->expect_data)
        tdm_rndv_part_done(r, PIPE_WAIT_FIN);
}

/* Take over [lo, hi) from a protocol whose copy failed: the sender writes it as
 * DATA cells (the caller queues it), a receiver counts it in (asking with PULL). */
static void pipe_adopt(tdm_req_t *req, uint64_t lo, uint64_t hi, unsigned how) {
    tdm_rndv_t *st = tdm_rndv(req);
    req->proto = TDM_PROTO_PIPELINE;
    if (is_send(req)) {
        st->cur = lo;
        st->hi = hi;
        st->stream_own = (how & TDM_ADOPT_OWN) != 0;
        if (st->pull_off < st->pull_end) { /* a PULL that waited for my own part */
            st->wait_off = st->pull_off;
            st->wait_end = st->pull_end;
            st->wait_own = 0;
            st->pull_off = st->pull_end = 0;
        }
        req->stage = PIPE_S_STREAM;
        return;
    }
    st->expect_data += hi - lo;
    req->stage = PIPE_R_DATA;
    if (how & TDM_ADOPT_PULL) {
        tdm_pkt_pull_t p = {.type = TDM_PKT_PULL,
                            .req = req->remote_id,
                            .dst_req = req->id,
                            .offset = lo,
                            .len = hi - lo};
        tdm_p2p_send_ctrl(req->peer_world, &p, sizeof(p));
    }
    if (st->got_data >= st->expect_data)
        tdm_rndv_part_done(req, PIPE_WAIT_FIN);
}

static void pipe_show(tdm_sfmt_t *f, tdm_req_t *req, int peer) {
    tdm_rndv_t *st = tdm_rndv(req);
    (void)peer;
    if (!is_send(req))
        tdm_sfmt_str(f, "matched a rendezvous, ");
    tdm_sfmt_str(f, tdm_proto_pipeline.name);
    switch (req->stage) {
    case PIPE_S_STREAM:
        tdm_sfmt_str(f, ", sending data cells: ");
        tdm_p2p_dump_range(f, st->cur, st->hi);
        return;
    case PIPE_R_DATA:
        tdm_sfmt_str(f, ", data cells: ");
        tdm_p2p_dump_range(f, st->got_data, st->expect_data);
        return;
    default:
        tdm_sfmt_str(f, is_send(req) ? ", waiting for the receiver to finish its copy (FIN)"
                                     : ", waiting for the sender to finish its copy (FIN)");
    }
}

static const tdm_proto_push_fn pipe_push[] = {
    [PIPE_S_STREAM] = pipe_push_stream,
    [PIPE_WAIT_FIN] = NULL,
    [PIPE_R_DATA] = NULL,
};

const tdm_proto_t tdm_proto_pipeline = {
    .name = "rndv/pipeline/shm",
    .desc = "after the CTS the sender packs the message into DATA cells of the ring, the "
            "receiver unpacks them as they come (two copies, concurrent); takes over the rest "
            "of a transfer whose CMA copy failed",
    .caps = 0,
    .push = pipe_push,
    .show = pipe_show,
    .recv_start = pipe_recv_start,
    .send_cts = pipe_send_cts,
    .on_fin = pipe_on_fin,
    .on_pull = pipe_on_pull,
    .on_data = pipe_on_data,
    .fallback = NULL, /* the rings cannot fail midway */
    .adopt = pipe_adopt,
};
