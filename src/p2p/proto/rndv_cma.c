/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state machine shared by the rendezvous protocols.
 *
 * Each side may own a CMA part of the byte range [0, total): the receiver
 * [0, split) read with process_vm_readv, the sender [split, total) written with
 * process_vm_writev. Parts are copied a chunk per progress call from the copy
 * queue, so packets from other peers are served between chunks (COOP-chunked).
 * A side that finishes its part sends FIN if the protocol makes the peer wait
 * for it (fin_out); a request completes when its part is done, the peer's FIN
 * has come (peer_part), and every DATA cell it owes or expects has moved.
 *
 * When a CMA call fails mid-transfer the pair stops using CMA (one warning per
 * job) and the rest of that part moves as DATA cells through the ring instead:
 * the sender streams its own remainder; a receiver asks the sender with PULL.
 * Except when the call failed because the peer has exited (ESRCH): then the
 * request stays as it is, since nothing can complete it, and the job is ending.
 */
#include "../p2p_impl.h"
#include "../../net/cma.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void tdm_rndv_load_add(int world_rank, int64_t delta) {
    atomic_fetch_add_explicit(&tdm_shm.procs[world_rank].copies_pending, delta,
                              memory_order_relaxed);
}

static bool is_send(const tdm_req_t *req) {
    return req->kind == TDM_REQ_SEND;
}

static void send_fin(int peer, uint32_t req) {
    tdm_pkt_fin_t f = {.type = TDM_PKT_FIN, .req = req};
    tdm_p2p_send_ctrl(peer, &f, sizeof(f));
}

void tdm_rndv_try_complete(tdm_req_t *req) {
    tdm_rndv_t *st = tdm_rndv(req);
    if (req->done || !st->part_done || (st->peer_part && !st->fin_in))
        return;
    if (is_send(req) ? st->stream_off < st->stream_end || st->own_off < st->own_end ||
                           st->pull_off < st->pull_end
                     : st->got_data < st->expect_data)
        return;
    tdm_layout_clear(&st->remote);
    if (st->adapt)
        tdm_p2p_adapt_done(req);
    if (req->t_sent && !is_send(req))
        tdm_p2p_eager_adapt_done(req, true);
    req->stage = is_send(req) ? TDM_SSTAGE_DONE : TDM_RSTAGE_DONE;
    tdm_p2p_complete(req);
}

static void part_finished(tdm_req_t *req) {
    tdm_rndv_t *st = tdm_rndv(req);
    st->part_done = 1;
    if (st->load_counted) {
        tdm_rndv_load_add(tdm_p2p.rank, -1);
        st->load_counted = 0;
    }
    if (st->fin_out)
        send_fin(req->peer_world, req->remote_id);
    tdm_rndv_try_complete(req);
}

/* Start copying my part [lo, hi); an empty part is finished at once. */
static void part_start(tdm_req_t *req, uint64_t lo, uint64_t hi) {
    tdm_rndv_t *st = tdm_rndv(req);
    st->cur = lo;
    st->hi = hi;
    if (lo >= hi) {
        part_finished(req);
        return;
    }
    tdm_list_push_back(&tdm_p2p.copyq, &req->copy_link);
}

/* The sender streams [off, end) as DATA cells (from the transmit queue). */
static void stream_start(tdm_req_t *s, uint64_t off, uint64_t end, bool own) {
    tdm_rndv_t *st = tdm_rndv(s);
    if (st->stream_off < st->stream_end) {
        /* a stream is running: this range waits behind it (both of a COOP's
         * sides can fail: my remainder and the reader's PULL are kept apart) */
        if (own) {
            st->own_off = off;
            st->own_end = end;
        } else {
            st->pull_off = off;
            st->pull_end = end;
        }
        return;
    }
    st->stream_off = off;
    st->stream_end = end;
    st->stream_own = own;
    s->stage = TDM_SSTAGE_STREAM;
    tdm_p2p_txq_push(s->peer_world, &s->tx);
}

/* A CMA call failed: move the rest of my part as DATA cells. */
static void fallback(tdm_req_t *req, int err) {
    tdm_rndv_t *st = tdm_rndv(req);
    tdm_cma_disable(req->peer_world, st->pid, err);
    if (err == ESRCH)
        return; /* the peer has exited: there is nobody to move the rest; the job is ending */
    tdm_p2p_stats.cma_fallbacks++;
    tdm_info(P2P, "cma with rank %d failed at byte %llu of [%llu, %llu); the rest moves as data",
             req->peer_world, (unsigned long long)st->cur, (unsigned long long)st->cur,
             (unsigned long long)st->hi);
    st->via_data = 1;
    if (is_send(req)) {
        stream_start(req, st->cur, st->hi, true);
        return;
    }
    st->expect_data += st->hi - st->cur;
    tdm_pkt_pull_t p = {.type = TDM_PKT_PULL,
                        .req = req->remote_id,
                        .dst_req = req->id,
                        .offset = st->cur,
                        .len = st->hi - st->cur};
    tdm_p2p_send_ctrl(req->peer_world, &p, sizeof(p));
}

int tdm_rndv_copy_chunk(tdm_req_t *req, bool write) {
    tdm_rndv_t *st = tdm_rndv(req);
    uint64_t n = TDM_MIN(st->hi - st->cur, (uint64_t)tdm_p2p.copy_chunk);
    tdm_layout_t local;
    tdm_layout_local(&local, req->buf, req->count, req->dt);
    int rc = tdm_layout_cma_copy(req->peer_world, st->pid, write, &local, &st->remote,
                                 (size_t)st->cur, (size_t)n);
    if (rc < 0)
        return rc;
    if (write)
        tdm_p2p_stats.bytes_written += n;
    else
        tdm_p2p_stats.bytes_read += n;
    st->cur += n;
    return 0;
}

int tdm_rndv_copy_progress(void) {
    if (tdm_list_empty(&tdm_p2p.copyq))
        return 0;
    tdm_req_t *req = TDM_CONTAINER_OF(tdm_p2p.copyq.next, tdm_req_t, copy_link);
    tdm_list_remove(&req->copy_link);
    tdm_rndv_t *st = tdm_rndv(req);
    int rc = tdm_rndv_copy_chunk(req, is_send(req));
    if (rc < 0) {
        fallback(req, -rc);
        return 1;
    }
    if (st->cur < st->hi) {
        tdm_list_push_back(&tdm_p2p.copyq, &req->copy_link); /* round-robin */
        return 1;
    }
    tdm_p2p_stats.copies++;
    part_finished(req);
    return 1;
}

bool tdm_rndv_stream_push(tdm_req_t *s) {
    tdm_rndv_t *st = tdm_rndv(s);
    size_t body = tdm_shm_body_size();
    for (;;) {
        while (st->stream_off < st->stream_end) {
            tdm_pkt_data_t *d = tdm_shm_send_reserve(s->peer_world);
            if (!d)
                return false;
            size_t frag = TDM_MIN(st->stream_end - st->stream_off, body - sizeof(*d));
            d->type = TDM_PKT_DATA;
            d->flags = st->stream_own ? 0 : TDM_DATAF_PULLED;
            d->rreq = s->remote_id;
            d->frag = (uint32_t)frag;
            d->offset = st->stream_off;
            tdm_dtype_pack(s->buf, s->count, s->dt, (size_t)st->stream_off, d + 1, frag);
            tdm_shm_send_commit(s->peer_world);
            st->stream_off += frag;
        }
        if (st->stream_own) {
            st->stream_own = 0;
            part_finished(s); /* FIN goes after the DATA cells: same ring, in order */
            if (s->done)
                return true;
        }
        if (st->own_off < st->own_end) {
            st->stream_off = st->own_off;
            st->stream_end = st->own_end;
            st->stream_own = 1;
            st->own_off = st->own_end = 0;
        } else if (st->pull_off < st->pull_end) {
            st->stream_off = st->pull_off;
            st->stream_end = st->pull_end;
            st->pull_off = st->pull_end = 0;
        } else {
            break;
        }
    }
    s->stage = TDM_SSTAGE_WAIT_FIN; /* nothing to write; waiting for the peer */
    tdm_rndv_try_complete(s);
    return true;
}

static void data_in(tdm_req_t *r, const tdm_pkt_data_t *d) {
    tdm_rndv_t *st = tdm_rndv(r);
    tdm_p2p_recv_copy(r, (size_t)d->offset, d + 1, d->frag);
    if (!(d->flags & TDM_DATAF_PULLED))
        return; /* the sender's own part: its FIN follows */
    st->got_data += d->frag;
    if (st->via_data && !st->part_done && st->got_data >= st->expect_data)
        part_finished(r);
    else
        tdm_rndv_try_complete(r);
}

static void fin_in(tdm_req_t *req) {
    tdm_rndv_t *st = tdm_rndv(req);
    if (is_send(req) && !st->fin_out && !st->peer_part) {
        /* RGET: the receiver copied everything; no CTS came */
        st->peer_part = 1;
        st->part_done = 1;
    }
    st->fin_in = 1;
    tdm_rndv_try_complete(req);
}

static void pull_in(tdm_req_t *s, const tdm_pkt_pull_t *pull) {
    tdm_rndv_t *st = tdm_rndv(s);
    if (!st->peer_part && !st->fin_out) {
        /* RGET whose reader fell back: it still sends FIN when it has the data */
        st->peer_part = 1;
        st->part_done = 1;
    }
    s->remote_id = pull->dst_req;
    stream_start(s, pull->offset, pull->offset + pull->len, false);
}

/* ---- split protocols (RGET, RPUT, COOP) ---- */

void tdm_rndv_split_recv_start(tdm_req_t *r, const tdm_rts_info_t *rts) {
    const tdm_proto_t *p = tdm_protos[r->proto];
    tdm_rndv_t *st = tdm_rndv(r);
    uint64_t total = TDM_MIN((uint64_t)r->msg_size, (uint64_t)r->bytes);
    uint64_t split = p->split(total);
    bool sender_copies = p != &tdm_proto_rget;
    st->total = total;
    st->pid = rts->pid;
    st->fin_out = p != &tdm_proto_rput; /* RGET, COOP: the sender waits for us */
    st->peer_part = sender_copies;      /* RPUT, COOP: we wait for the sender */
    /* COOP-load: count the copies at decision time, for both sides */
    if (split > 0) {
        tdm_rndv_load_add(tdm_p2p.rank, 1);
        st->load_counted = 1;
    }
    if (sender_copies && split < total)
        tdm_rndv_load_add(r->peer_world, 1);
    if (sender_copies) {
        tdm_pkt_cts_cma_t cts = {
            .cts = {.type = TDM_PKT_CTS, .proto = r->proto, .sreq = rts->sreq, .rreq = r->id},
            .pid = (int32_t)tdm_shm.procs[tdm_p2p.rank].pid,
            .split = split,
            .total = total};
        tdm_layout_t mine;
        tdm_layout_local(&mine, r->buf, r->count, r->dt);
        tdm_layout_to_wire(&mine, &cts.buf);
        tdm_p2p_send_ctrl(r->peer_world, &cts, sizeof(cts));
    }
    if (split > 0) {
        int rc = tdm_layout_remote(&st->remote, &rts->buf, r->peer_world, rts->pid);
        if (rc < 0) {
            st->cur = 0;
            st->hi = split;
            fallback(r, -rc);
            return;
        }
    }
    part_start(r, 0, split);
}

void tdm_rndv_split_send_cts(tdm_req_t *s, const tdm_pkt_cts_t *cts) {
    const tdm_pkt_cts_cma_t *c = (const tdm_pkt_cts_cma_t *)cts;
    tdm_rndv_t *st = tdm_rndv(s);
    st->total = c->total;
    st->pid = c->pid;
    st->fin_out = 1;
    st->peer_part = cts->proto == TDM_PROTO_COOP;
    st->load_counted = c->split < c->total; /* the receiver counted us */
    s->stage = TDM_SSTAGE_WAIT_FIN;
    if (c->split < c->total) {
        int rc = tdm_layout_remote(&st->remote, &c->buf, s->peer_world, c->pid);
        if (rc < 0) {
            st->cur = c->split;
            st->hi = c->total;
            fallback(s, -rc);
            return;
        }
    }
    part_start(s, c->split, c->total);
}

/* ---- an unexpected RTS of the adaptive eager range ---- */

/* The pulled message has come as DATA cells: the entry now holds it all. */
static void pulled_by_data(tdm_req_t *r) {
    tdm_unexp_t *ue = r->cb_arg;
    ue->received = ue->size;
    tdm_p2p_unexp_arrived(ue);
}

/* The pull's read failed (err): the entry's buffer becomes the receive of an
 * RGET of the library's own whose read failed, so fallback() has the sender
 * stream the message into it as DATA cells; the message stays buffered, and
 * the send still completes before any receive is posted. */
static void pull_by_data(int peer, int pid, uint32_t sreq, tdm_unexp_t *ue, int err) {
    tdm_req_t *r = tdm_req_alloc(TDM_REQ_RECV);
    if (!r) {
        tdm_error(P2P, "out of memory for the receive of a %zu-byte message from rank %d", ue->size,
                  peer);
        abort();
    }
    r->buf = ue->data;
    r->dt = tdm_dtype_byte();
    r->count = r->bytes = r->msg_size = ue->size;
    r->peer = ue->src;
    r->peer_world = peer;
    r->remote_id = sreq;
    r->stage = TDM_RSTAGE_RNDV;
    r->on_complete = pulled_by_data;
    r->cb_arg = ue;
    r->user_freed = 1; /* nobody waits for it: released when the data is in */
    tdm_rndv_t *st = tdm_rndv(r);
    memset(st, 0, sizeof(*st));
    st->total = st->hi = ue->size;
    st->pid = pid;
    st->fin_out = 1; /* RGET: the sender waits for our FIN */
    ue->received = 0;
    fallback(r, err);
}

void tdm_rndv_pull_unexp(int peer, int pid, const tdm_rlayout_t *buf, uint32_t sreq,
                         tdm_unexp_t *ue) {
    tdm_layout_t remote, local = {.base = (uintptr_t)ue->data,
                                  .count = ue->size,
                                  .extent = 1,
                                  .item_size = 1,
                                  .contig = true};
    int rc = tdm_layout_remote(&remote, buf, peer, pid);
    if (rc == 0) {
        rc = tdm_layout_cma_copy(peer, pid, false, &local, &remote, 0, ue->size);
        tdm_layout_clear(&remote);
    }
    if (rc < 0) {
        pull_by_data(peer, pid, sreq, ue, -rc);
        return;
    }
    tdm_p2p_stats.bytes_read += ue->size;
    tdm_p2p_stats.adapt_pulled++;
    ue->received = ue->size;
    send_fin(peer, sreq); /* the sender takes it as an RGET's FIN */
}

/* ---- a receive matched an RTS: choose (select.c) and start the protocol ---- */

/* The peer is neither polling (its beat is older than PEER_STALL_US) nor blocked in a
 * wait: preempted, or computing outside the library. */
static bool peer_stalled(int peer) {
    if (!tdm_p2p.stall_units || peer == tdm_p2p.rank)
        return false;
    const tdm_shm_proc_t *o = &tdm_shm.procs[peer];
    if (atomic_load_explicit(&o->sleeping, memory_order_relaxed))
        return false;
    uint32_t beat = atomic_load_explicit(&o->beat, memory_order_relaxed);
    return (int32_t)(tdm_shm_clock() - beat) > (int32_t)tdm_p2p.stall_units;
}

void tdm_p2p_rndv_matched(tdm_req_t *r, const tdm_rts_info_t *rts) {
    int peer = r->peer_world;
    bool range_cma = tdm_p2p_range_cma(peer);
    tdm_select_in_t in = {
        .send_mode = rts->mode,
        .recv_blocking = (r->mode & TDM_MODE_BLOCKING) != 0,
        .consume_far = (r->mode & TDM_MODE_CONSUMES) && range_cma,
        .size = r->msg_size,
        .cma = peer != tdm_p2p.rank && tdm_cma_usable(peer) &&
               (rts->buf.contig || rts->buf.nsegs > 0) && tdm_layout_describable(r->dt),
        .load_send =
            atomic_load_explicit(&tdm_shm.procs[peer].copies_pending, memory_order_relaxed),
        .load_recv =
            atomic_load_explicit(&tdm_shm.procs[tdm_p2p.rank].copies_pending, memory_order_relaxed),
        .exchange = tdm_p2p.rndv_out[peer] > 0,
        .one_out = tdm_p2p.rndv_out[peer] == 1,
        .range_cma = range_cma,
    };
    in.sender_stalled = in.cma && tdm_p2p_select_forced() == TDM_PROTO_AUTO && peer_stalled(peer);
    tdm_proto_id_t p = tdm_p2p_select(&in);
    if (in.sender_stalled)
        tdm_p2p_stats.stalled_rget++;
    tdm_rndv_t *st = tdm_rndv(r);
    memset(st, 0, sizeof(*st));
    int kind = tdm_p2p_select_adaptive(&in, p);
    if (kind >= 0 && tdm_p2p_adapt_rndv(r, kind, in.size))
        p = TDM_PROTO_PIPELINE;
    r->stage = TDM_RSTAGE_RNDV;
    r->proto = (uint8_t)p;
    r->remote_id = rts->sreq;
    r->offset = 0;
    tdm_p2p_stats.proto_msgs[p]++;
    tdm_p2p_stats.proto_bytes[p] += r->msg_size;
    TDM_EVENT_RAISE(RNDV_PROTOCOL, peer, (int64_t)r->msg_size, p);
    tdm_trace(P2P, "rendezvous of %zu bytes from rank %d: %s", r->msg_size, peer,
              tdm_proto_name(p));
    tdm_protos[p]->recv_start(r, rts);
}

/* ---- packets (registry.def) and the sender's RTS stage ---- */

bool tdm_rndv_push_rts(tdm_req_t *s) {
    tdm_pkt_rts_cma_t *h = tdm_shm_send_reserve(s->peer_world);
    if (!h)
        return false;
    tdm_p2p_fill_envelope(&h->env, TDM_PKT_RTS, s, s->bytes);
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

void tdm_rndv_on_rts(int peer, const void *body) {
    const tdm_pkt_rts_cma_t *h = body;
    tdm_p2p.rx_count[peer]++;
    tdm_req_t *r = tdm_p2p_match_posted(h->env.ctx, h->env.src, h->env.tag);
    if (r) {
        tdm_rts_info_t rts = {
            .sreq = h->env.sreq, .mode = h->env.mode, .pid = h->pid, .buf = h->buf};
        tdm_p2p_recv_set_envelope(r, h->env.src, h->env.tag, peer, h->env.size);
        r->t_sent = tdm_p2p_rndv_stamp(tdm_shm_cell_stamp(h)); /* posted: its time counts */
        tdm_p2p_rndv_matched(r, &rts);
        return;
    }
    bool pull = (h->env.flags & TDM_PKTF_PULL) && tdm_cma_usable(peer);
    tdm_unexp_t *ue = tdm_p2p_unexp_new(h->env.ctx, h->env.src, h->env.tag, h->env.size, pull);
    if (!ue) {
        tdm_error(P2P, "out of memory keeping an unexpected rts from rank %d", peer);
        abort();
    }
    if (pull) {
        /* a message of the adaptive eager range: now kept as the eager one it stands for */
        ue->type = TDM_PKT_EAGER;
        ue->flags = h->env.flags & ~TDM_PKTF_PULL;
        ue->mode = h->env.mode;
        ue->src_world = peer;
        tdm_p2p_unexp_push(ue);
        tdm_rndv_pull_unexp(peer, h->pid, &h->buf, h->env.sreq, ue);
        return;
    }
    ue->type = TDM_PKT_RTS;
    ue->flags = h->env.flags;
    ue->mode = h->env.mode;
    ue->sreq = h->env.sreq;
    ue->src_world = peer;
    ue->pid = h->pid;
    ue->rbuf = h->buf;
    tdm_p2p_unexp_push(ue);
}

void tdm_rndv_on_cts(int peer, const void *body) {
    const tdm_pkt_cts_t *cts = body;
    tdm_req_t *sreq = tdm_p2p_req_of_packet(cts->sreq, peer, "cts");
    sreq->acked = 1; /* matched: a synchronous send may complete */
    sreq->remote_id = cts->rreq;
    sreq->proto = cts->proto;
    if (cts->proto >= TDM_PROTO_COUNT || !tdm_protos[cts->proto]->send_cts) {
        tdm_error(P2P, "cts from rank %d names protocol %u, which has no sender side", peer,
                  cts->proto);
        abort();
    }
    tdm_protos[cts->proto]->send_cts(sreq, cts);
}

void tdm_rndv_on_data(int peer, const void *body) {
    const tdm_pkt_data_t *d = body;
    data_in(tdm_p2p_req_of_packet(d->rreq, peer, "data"), d);
}

void tdm_rndv_on_fin(int peer, const void *body) {
    const tdm_pkt_fin_t *f = body;
    fin_in(tdm_p2p_req_of_packet(f->req, peer, "fin"));
}

void tdm_rndv_on_pull(int peer, const void *body) {
    const tdm_pkt_pull_t *pl = body;
    pull_in(tdm_p2p_req_of_packet(pl->req, peer, "pull"), pl);
}
