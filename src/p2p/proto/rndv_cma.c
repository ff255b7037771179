/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rendezvous machinery: the start every rendezvous send shares (the RTS,
 * then the receiver's choice: the local protocol RNDV), the choice at match
 * (select.c, adapt.c), the packets RTS, CTS, DATA, FIN and PULL, and the state
 * machine the split protocols RGET, RPUT and COOP share.
 *
 * RNDV (sender): RTS --written--> WAIT_CTS --CTS--> the chosen protocol, stage 0
 *                                          --FIN--> done (RGET: the receiver read it all)
 *                                          --PULL--> pipeline (RGET whose read failed)
 * Split (each side owns a part of [0, total): the receiver [0, split) read with
 * process_vm_readv, the sender [split, total) written with process_vm_writev;
 * a chunk per progress call from the copy queue, so packets from other peers
 * are served between chunks):
 *   COPY --part copied, FIN sent if the peer waits for it--> WAIT_FIN --peer's FIN--> done
 *   COPY --part copied, no peer part or its FIN came--> done
 *   COPY --copy failed--> fallback: the rest of the part goes to the protocol
 *        select.c names (the pipeline: the sender streams it, a receiver PULLs it)
 *   sender, PULL (the receiver's read failed): in COPY it waits for the part's
 *        end; then, or in WAIT_FIN at once, the pipeline streams the range
 * A copy that failed because the peer has exited (ESRCH) leaves the request as
 * it is: nothing can complete it, and the job is ending.
 */
#include "../p2p_impl.h"
#include "../../base/sigfmt.h"
#include "../../net/net.h"
#include "../../net/rdma.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Split protocols' stages (RGET, RPUT, COOP: both sides). */
enum { SPLIT_COPY = 0, SPLIT_WAIT_FIN };
/* The rendezvous start's stages (sender). */
enum { RNDV_S_RTS = 0, RNDV_S_WAIT_CTS };

void tdm_rndv_load_add(int world_rank, int64_t delta) {
    atomic_fetch_add_explicit(&tdm_shm_proc(world_rank)->copies_pending, delta,
                              memory_order_relaxed);
}

static bool is_send(const tdm_req_t *req) {
    return req->kind == TDM_REQ_SEND;
}

static void load_release(tdm_rndv_t *st) {
    if (st->load_counted) {
        tdm_rndv_load_add(tdm_p2p.rank, -1);
        st->load_counted = 0;
    }
}

void tdm_rndv_send_fin(int peer, uint32_t req) {
    tdm_pkt_fin_t f = {.type = TDM_PKT_FIN, .req = req};
    tdm_p2p_send_ctrl(peer, &f, sizeof(f));
}

void tdm_rndv_complete(tdm_req_t *req) {
    tdm_rndv_t *st = tdm_rndv(req);
    tdm_layout_clear(&st->remote);
    if (st->mem || st->rkey)
        tdm_rndv_rdma_release(req);
    if (st->adapt)
        tdm_p2p_adapt_done(req);
    if (req->t_sent && !is_send(req))
        tdm_p2p_eager_adapt_done(req, true);
    tdm_p2p_complete(req);
}

void tdm_rndv_part_done(tdm_req_t *req, uint8_t wait_fin) {
    tdm_rndv_t *st = tdm_rndv(req);
    load_release(st);
    if (st->fin_out) {
        tdm_rndv_send_fin(req->peer_world, req->remote_id);
        st->fin_out = 0;
    }
    if (st->peer_part && !st->peer_done) {
        req->stage = wait_fin;
        return;
    }
    tdm_rndv_complete(req);
}

bool tdm_rndv_copy_failed(tdm_req_t *req, int err) {
    tdm_rndv_t *st = tdm_rndv(req);
    tdm_cma_disable(req->peer_world, st->pid, err);
    load_release(st);
    if (err == ESRCH)
        return false;
    TDM_COUNTER_ADD(&tdm_p2p_stats.cma_fallbacks, 1);
    tdm_info(P2P, "cma with rank %d failed at byte %llu of [%llu, %llu); the rest moves as data",
             req->peer_world, (unsigned long long)st->cur, (unsigned long long)st->cur,
             (unsigned long long)st->hi);
    return true;
}

/* Hand [lo, hi) of req to the protocol selection names after `req->proto`
 * gave it up; a send then has cells to write. */
static void hand_over(tdm_req_t *req, uint64_t lo, uint64_t hi, unsigned how) {
    tdm_proto_id_t next = tdm_p2p_select_fallback((tdm_proto_id_t)req->proto);
    tdm_trace(P2P, "%s hands bytes [%llu, %llu) of a message with rank %d to %s",
              tdm_proto_name((tdm_proto_id_t)req->proto), (unsigned long long)lo,
              (unsigned long long)hi, req->peer_world, tdm_proto_name(next));
    tdm_protos[next]->adopt(req, lo, hi, how);
    if (is_send(req))
        tdm_p2p_txq_push(req->peer_world, &req->tx);
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
        TDM_COUNTER_ADD(&tdm_p2p_stats.bytes_written, n);
    else
        TDM_COUNTER_ADD(&tdm_p2p_stats.bytes_read, n);
    st->cur += n;
    return 0;
}

/* ---- split protocols (RGET, RPUT, COOP) ---- */

static void split_part_finished(tdm_req_t *req) {
    tdm_rndv_t *st = tdm_rndv(req);
    if (is_send(req) && st->pull_off < st->pull_end) {
        /* the receiver's read failed meanwhile: my part is over, its range streams now */
        uint64_t lo = st->pull_off, hi = st->pull_end;
        st->pull_off = st->pull_end = 0;
        load_release(st);
        if (st->fin_out) {
            tdm_rndv_send_fin(req->peer_world, req->remote_id);
            st->fin_out = 0;
        }
        hand_over(req, lo, hi, 0);
        return;
    }
    tdm_rndv_part_done(req, SPLIT_WAIT_FIN);
}

/* The copy queue (copy_lock; the requests in it are their pair's). */
static void copyq_push(tdm_req_t *req) {
    tdm_lock_acquire(&tdm_p2p.copy_lock);
    tdm_list_push_back(&tdm_p2p.copyq, &req->copy_link);
    TDM_STORE_RELAXED(&tdm_p2p.copy_len, tdm_p2p.copy_len + 1);
    tdm_lock_release(&tdm_p2p.copy_lock);
}

static tdm_req_t *copyq_pop(void) {
    tdm_req_t *req = NULL;
    tdm_lock_acquire(&tdm_p2p.copy_lock);
    if (!tdm_list_empty(&tdm_p2p.copyq)) {
        req = TDM_CONTAINER_OF(tdm_p2p.copyq.next, tdm_req_t, copy_link);
        tdm_list_remove(&req->copy_link);
        TDM_STORE_RELAXED(&tdm_p2p.copy_len, tdm_p2p.copy_len - 1);
    }
    tdm_lock_release(&tdm_p2p.copy_lock);
    return req;
}

/* Start copying my part [lo, hi); an empty part is finished at once. */
static void split_part_start(tdm_req_t *req, uint64_t lo, uint64_t hi) {
    tdm_rndv_t *st = tdm_rndv(req);
    st->cur = lo;
    st->hi = hi;
    req->stage = SPLIT_COPY;
    if (lo >= hi) {
        split_part_finished(req);
        return;
    }
    copyq_push(req);
}

/* One chunk of the request at the head of the copy queue (its pair lock held). */
static void copy_one(tdm_req_t *req) {
    tdm_rndv_t *st = tdm_rndv(req);
    int rc = tdm_rndv_copy_chunk(req, is_send(req));
    if (rc < 0) {
        tdm_protos[req->proto]->fallback(req, -rc);
        return;
    }
    if (st->cur < st->hi) {
        copyq_push(req); /* round-robin */
        return;
    }
    TDM_COUNTER_ADD(&tdm_p2p_stats.copies, 1);
    split_part_finished(req);
}

int tdm_rndv_copy_progress(void) {
    if (!TDM_LOAD_RELAXED(&tdm_p2p.copy_len))
        return 0;
    tdm_req_t *req = copyq_pop();
    if (!req)
        return 0;
    if (!tdm_threaded) {
        copy_one(req);
        return 1;
    }
    /* nothing else moves a request while it is out of the queue with its part unfinished
     * (only this copy finishes it); a pair another thread holds waits for a later turn */
    int peer = req->peer_world; /* req may be complete and gone after its copy */
    if (!tdm_lock_try(&tdm_p2p.peers[peer].lock)) {
        copyq_push(req);
        return 0;
    }
    copy_one(req);
    tdm_p2p_peer_unlock(peer);
    return 1;
}

/* My part's copy failed: the rest of it moves as DATA cells (the sender
 * streams it; a receiver asks the sender for it with PULL). */
void tdm_rndv_split_fallback(tdm_req_t *req, int err) {
    if (!tdm_rndv_copy_failed(req, err))
        return; /* the peer has exited: there is nobody to move the rest */
    tdm_rndv_t *st = tdm_rndv(req);
    hand_over(req, st->cur, st->hi, is_send(req) ? TDM_ADOPT_OWN : TDM_ADOPT_PULL);
}

void tdm_rndv_split_on_fin(tdm_req_t *req) {
    if (req->stage == SPLIT_WAIT_FIN) {
        tdm_rndv_complete(req);
        return;
    }
    tdm_rndv(req)->peer_done = 1; /* it finished first; my part is still copying */
}

void tdm_rndv_split_on_pull(tdm_req_t *s, uint64_t off, uint64_t len) {
    tdm_rndv_t *st = tdm_rndv(s);
    if (s->stage == SPLIT_COPY) {
        st->pull_off = off; /* streamed once my own part is over */
        st->pull_end = off + len;
        return;
    }
    hand_over(s, off, off + len, 0);
}

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
            .pid = (int32_t)tdm_shm_self()->pid,
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
            r->stage = SPLIT_COPY;
            p->fallback(r, -rc);
            return;
        }
    }
    split_part_start(r, 0, split);
}

void tdm_rndv_split_send_cts(tdm_req_t *s, const tdm_pkt_cts_t *cts) {
    const tdm_pkt_cts_cma_t *c = (const tdm_pkt_cts_cma_t *)cts;
    tdm_rndv_t *st = tdm_rndv(s);
    st->total = c->total;
    st->pid = c->pid;
    st->fin_out = 1;
    st->peer_part = cts->proto == TDM_PROTO_COOP;
    st->load_counted = c->split < c->total; /* the receiver counted us */
    if (c->split < c->total) {
        int rc = tdm_layout_remote(&st->remote, &c->buf, s->peer_world, c->pid);
        if (rc < 0) {
            st->cur = c->split;
            st->hi = c->total;
            s->stage = SPLIT_COPY;
            tdm_protos[s->proto]->fallback(s, -rc);
            return;
        }
    }
    split_part_start(s, c->split, c->total);
}

const tdm_proto_push_fn tdm_rndv_split_push[] = {
    [SPLIT_COPY] = NULL, /* the copy queue moves it, not the transmit queue */
    [SPLIT_WAIT_FIN] = NULL,
};

void tdm_rndv_split_show(tdm_sfmt_t *f, tdm_req_t *req, int peer) {
    tdm_rndv_t *st = tdm_rndv(req);
    (void)peer;
    if (!is_send(req))
        tdm_sfmt_str(f, "matched a rendezvous, ");
    tdm_sfmt_str(f, tdm_protos[req->proto]->name);
    if (req->stage == SPLIT_COPY && st->hi > st->cur) {
        tdm_sfmt_str(f, is_send(req) ? ", writing its part: " : ", reading its part: ");
        tdm_p2p_dump_range(f, st->cur, st->hi);
    } else if (req->stage == SPLIT_WAIT_FIN) {
        tdm_sfmt_str(f, is_send(req) ? ", waiting for the receiver to finish its copy (FIN)"
                                     : ", waiting for the sender to finish its copy (FIN)");
    }
}

/* ---- an unexpected RTS of the adaptive eager range ---- */

/* The pulled message has come as DATA cells: the entry now holds it all. */
static void pulled_by_data(tdm_req_t *r) {
    tdm_unexp_t *ue = r->cb_arg;
    ue->received = ue->size;
    tdm_p2p_unexp_arrived(ue);
}

/* The pull's read failed (err): the entry's buffer becomes the receive of an
 * RGET of the library's own whose read failed, so RGET's fallback has the
 * sender stream the message into it as DATA cells; the message stays
 * buffered, and the send still completes before any receive is posted. */
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
    r->proto = TDM_PROTO_RGET;
    r->stage = SPLIT_COPY;
    r->on_complete = pulled_by_data;
    r->cb_arg = ue;
    r->user_freed = 1; /* nobody waits for it: released when the data is in */
    r->inline_hook = 1;
    tdm_rndv_t *st = tdm_rndv(r);
    memset(st, 0, sizeof(*st));
    st->total = st->hi = ue->size;
    st->pid = pid;
    st->fin_out = 1; /* RGET: the sender waits for our FIN */
    ue->received = 0;
    tdm_proto_rget.fallback(r, err);
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
    TDM_COUNTER_ADD(&tdm_p2p_stats.bytes_read, ue->size);
    TDM_COUNTER_ADD(&tdm_p2p_stats.adapt_pulled, 1);
    ue->received = ue->size;
    tdm_rndv_send_fin(peer, sreq); /* the sender takes it as an RGET's FIN */
}

/* ---- a receive matched an RTS: choose (select.c) and start the protocol ---- */

/* The peer is neither polling (its beat is older than PEER_STALL_US) nor blocked in a
 * wait: preempted, or computing outside the library. */
static bool peer_stalled(int peer) {
    if (!tdm_p2p.stall_units || peer == tdm_p2p.rank)
        return false;
    const tdm_shm_proc_t *o = tdm_shm_proc(peer);
    if (atomic_load_explicit(&o->sleeping, memory_order_relaxed))
        return false;
    uint32_t beat = atomic_load_explicit(&o->beat, memory_order_relaxed);
    return (int32_t)(tdm_shm_clock() - beat) > (int32_t)tdm_p2p.stall_units;
}

/* Start protocol p for receive r (its state fresh, counted, traced). */
static void rndv_start(tdm_req_t *r, const tdm_rts_info_t *rts, tdm_proto_id_t p) {
    r->proto = (uint8_t)p;
    r->remote_id = rts->sreq;
    r->offset = 0;
    TDM_COUNTER_ADD(&tdm_p2p_stats.proto_msgs[p], 1);
    TDM_COUNTER_ADD(&tdm_p2p_stats.proto_bytes[p], r->msg_size);
    TDM_EVENT_RAISE(RNDV_PROTOCOL, r->peer_world, (int64_t)r->msg_size, p);
    tdm_trace(P2P, "rendezvous of %zu bytes from rank %d: %s", r->msg_size, r->peer_world,
              tdm_proto_name(p));
    tdm_protos[p]->recv_start(r, rts);
}

void tdm_p2p_rndv_matched(tdm_req_t *r, const tdm_rts_info_t *rts) {
    int peer = r->peer_world;
    if (rts->data) {
        /* the sender chose: the message came attached, and only fetching it moves it */
        memset(tdm_rndv(r), 0, sizeof(tdm_rndv_t));
        rndv_start(r, rts, TDM_PROTO_AM);
        return;
    }
    bool range_cma = tdm_p2p_range_cma(peer);
    tdm_select_in_t in = {
        .send_mode = rts->mode,
        .recv_blocking = (r->mode & TDM_MODE_BLOCKING) != 0,
        .consume_far = (r->mode & TDM_MODE_CONSUMES) && range_cma,
        .size = r->msg_size,
        .cma = peer != tdm_p2p.rank && tdm_net_cma(peer) &&
               (rts->buf.contig || rts->buf.nsegs > 0) && tdm_layout_describable(r->dt),
        /* (a peer of another node publishes no load: only this node's share a segment) */
        .load_send = tdm_net_local(peer) ? atomic_load_explicit(&tdm_shm_proc(peer)->copies_pending,
                                                                memory_order_relaxed)
                                         : 0,
        .load_recv = atomic_load_explicit(&tdm_shm_self()->copies_pending, memory_order_relaxed),
        .exchange = tdm_p2p.rndv_out[peer] > 0,
        .one_out = tdm_p2p.rndv_out[peer] == 1,
        .range_cma = range_cma,
        .remote = !tdm_net_local(peer),
    };
    if (in.remote && rts->rdma && tdm_net_rdma_usable(peer)) {
        /* a non-contiguous receive takes the pipeline: it unpacks each packet as it comes,
         * where a bounce buffer would add a whole copy and a registration per message */
        tdm_layout_t mine;
        tdm_layout_local(&mine, r->buf, r->count, r->dt);
        in.rdma_put = mine.contig;
        in.rdma_get = mine.contig && rts->key_len > 0;
    }
    if (TDM_UNLIKELY(tdm_p2p_async_on) && in.cma &&
        (!in.recv_blocking || !(rts->mode & TDM_MODE_BLOCKING))) {
        in.async = 1;
        in.recv_idle = in.recv_blocking || TDM_LOAD_RELAXED(&tdm_p2p.waiting) > 0;
        in.send_idle =
            (rts->mode & TDM_MODE_BLOCKING) ||
            atomic_load_explicit(&tdm_shm_proc(peer)->app_waiting, memory_order_relaxed) > 0;
    }
    /* (a computing sender's progress thread is counted in its `sleeping`: `async` decides) */
    in.sender_stalled =
        in.cma && tdm_p2p_select_forced() == TDM_PROTO_AUTO && !in.async && peer_stalled(peer);
    tdm_proto_id_t p = tdm_p2p_select(&in);
    if (in.sender_stalled)
        TDM_COUNTER_ADD(&tdm_p2p_stats.stalled_rget, 1);
    tdm_rndv_t *st = tdm_rndv(r);
    memset(st, 0, sizeof(*st));
    int kind = tdm_p2p_select_adaptive(&in, p);
    if (kind >= 0 && tdm_p2p_adapt_rndv(r, kind, in.size))
        p = TDM_PROTO_PIPELINE;
    rndv_start(r, rts, p);
}

/* ---- the rendezvous start (sender) ---- */

static bool push_rts(tdm_req_t *s) {
    tdm_pkt_rts_cma_t *h = tdm_net_send_reserve(s->peer_world);
    if (!h)
        return false;
    tdm_p2p_fill_envelope(&h->env, TDM_PKT_RTS, s, s->bytes);
    tdm_net_set_stamp(s->peer_world, h, s->t_sent);
    h->env.frag = 0;
    size_t len;
    if (!tdm_net_local(s->peer_world)) {
        /* another node: the message may go attached (sent, its own protocol now); else no
         * pid or layout means anything there, an address and key may */
        if (tdm_rndv_data_send(s, h))
            goto sent;
        len = tdm_rndv_rdma_fill_rts(s, (tdm_pkt_rts_rdma_t *)h,
                                     tdm_net_body_size(s->peer_world) - sizeof(tdm_pkt_rts_rdma_t));
        goto written;
    }
    h->pid = tdm_shm_self()->pid;
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
    atomic_store_explicit(&tdm_shm_self()->beat, tdm_shm_clock(), memory_order_relaxed);
    len = sizeof(*h);
written:
    tdm_net_send_commit(s->peer_world, len);
    s->stage = RNDV_S_WAIT_CTS;
sent:
    tdm_p2p_tx_envelope(s->peer_world, s->ctx, s->tag);
    tdm_p2p.rndv_out[s->peer_world]++;
    s->out_counted = 1;
    s->hdr_done = 1;
    return true;
}

/* RGET's FIN: the receiver read the whole message; no CTS came. */
static void rndv_on_fin(tdm_req_t *s) {
    tdm_rndv_complete(s);
}

/* An RGET whose read failed asks for the rest: the sender streams it and
 * waits for the reader's FIN, which it sends when it has the data. */
static void rndv_on_pull(tdm_req_t *s, uint64_t off, uint64_t len) {
    tdm_rndv_t *st = tdm_rndv(s);
    s->proto = TDM_PROTO_RGET;
    st->peer_part = 1;
    hand_over(s, off, off + len, 0);
}

static void rndv_show(tdm_sfmt_t *f, tdm_req_t *s, int peer) {
    if (s->stage == RNDV_S_RTS) {
        tdm_sfmt_str(f, "rendezvous, RTS not written yet; the ring to the receiver is full");
        return;
    }
    tdm_sfmt_str(f, "rendezvous, RTS sent; waiting for rank ");
    tdm_sfmt_int(f, peer);
    tdm_sfmt_str(f, " to post a matching receive (CTS)");
}

static const tdm_proto_push_fn rndv_push[] = {
    [RNDV_S_RTS] = push_rts,
    [RNDV_S_WAIT_CTS] = NULL,
};

const tdm_proto_t tdm_proto_rndv = {
    .name = "rndv",
    .desc = "a send above the eager limit: RTS with the sender's buffer, then the protocol "
            "the receiver chooses at match (named in its CTS, or RGET's FIN)",
    .push = rndv_push,
    .show = rndv_show,
    .on_fin = rndv_on_fin,
    .on_pull = rndv_on_pull,
};

/* ---- packets (registry.def) ---- */

/* A packet came for a request whose protocol has no handler for it. */
static void no_handler(const char *what, int peer, const tdm_req_t *req) {
    tdm_error(P2P, "%s from rank %d for a request of protocol %s, which takes none", what, peer,
              tdm_proto_name((tdm_proto_id_t)req->proto));
    abort();
}

void tdm_rndv_on_rts(int peer, const void *body) {
    const tdm_pkt_rts_cma_t *h = body;
    const tdm_pkt_rts_rdma_t *hr = body;
    bool rdma = (h->env.flags & TDM_PKTF_RDMA) != 0;
    bool data = (h->env.flags & TDM_PKTF_DATA) != 0;
    uint64_t handle = data ? ((const tdm_pkt_rts_data_t *)body)->handle : 0;
    tdm_p2p.rx_count[peer]++;
    tdm_p2p_bucket_t *b = tdm_p2p_bucket(h->env.ctx);
    tdm_lock_acquire(&b->lock);
    tdm_req_t *r = tdm_p2p_match_posted(h->env.ctx, h->env.src, h->env.tag);
    if (r) {
        tdm_lock_release(&b->lock);
        tdm_rts_info_t rts = {.sreq = h->env.sreq, .mode = h->env.mode};
        if (data)
            rts.data = 1, rts.addr = handle;
        else if (rdma)
            tdm_rndv_rdma_parse_rts(peer, hr, &rts);
        else if (tdm_net_local(peer))
            rts.pid = h->pid, rts.buf = h->buf;
        tdm_p2p_recv_set_envelope(r, h->env.src, h->env.tag, peer, h->env.size);
        r->t_sent = tdm_p2p_rndv_stamp(tdm_net_stamp(peer, h)); /* posted: its time counts */
        tdm_p2p_rndv_matched(r, &rts);
        return;
    }
    bool pull = (h->env.flags & TDM_PKTF_PULL) && !rdma && tdm_net_cma(peer);
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
        tdm_lock_release(&b->lock);
        /* still ours to fill: a receive that takes it meanwhile waits for our pair lock */
        tdm_rndv_pull_unexp(peer, h->pid, &h->buf, h->env.sreq, ue);
        return;
    }
    ue->type = TDM_PKT_RTS;
    ue->flags = h->env.flags;
    ue->mode = h->env.mode;
    ue->sreq = h->env.sreq;
    ue->src_world = peer;
    if (data) {
        ue->raddr = handle;
    } else if (rdma) {
        tdm_rts_info_t rts = {0};
        if (tdm_rndv_rdma_parse_rts(peer, hr, &rts)) {
            ue->raddr = rts.addr;
            ue->key_len = rts.key_len;
            memcpy(ue->inline_data, rts.key, rts.key_len);
        } else {
            ue->flags &= (uint8_t)~TDM_PKTF_RDMA;
        }
    } else if (tdm_net_local(peer)) {
        ue->pid = h->pid;
        ue->rbuf = h->buf;
    }
    tdm_p2p_unexp_push(ue);
    tdm_lock_release(&b->lock);
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
    tdm_req_t *r = tdm_p2p_req_of_packet(d->rreq, peer, "data");
    tdm_p2p_recv_copy(r, (size_t)d->offset, d + 1, d->frag);
    if (!(d->flags & TDM_DATAF_PULLED))
        return; /* the sender's own part, streamed after its copy failed: its FIN follows */
    const tdm_proto_t *p = tdm_protos[r->proto];
    if (TDM_UNLIKELY(!p->on_data))
        no_handler("data", peer, r);
    p->on_data(r, d->frag);
}

void tdm_rndv_on_fin(int peer, const void *body) {
    const tdm_pkt_fin_t *f = body;
    tdm_req_t *req = tdm_p2p_req_of_packet(f->req, peer, "fin");
    if (TDM_UNLIKELY(f->flags & TDM_FINF_FAILED)) {
        tdm_error(P2P, "rendezvous with rank %d: its side failed; the message did not move", peer);
        req->status.error = TDM_ERR_OTHER;
    }
    const tdm_proto_t *p = tdm_protos[req->proto];
    if (TDM_UNLIKELY(!p->on_fin))
        no_handler("fin", peer, req);
    p->on_fin(req);
}

void tdm_rndv_on_pull(int peer, const void *body) {
    const tdm_pkt_pull_t *pl = body;
    tdm_req_t *s = tdm_p2p_req_of_packet(pl->req, peer, "pull");
    const tdm_proto_t *p = tdm_protos[s->proto];
    if (TDM_UNLIKELY(!p->on_pull))
        no_handler("pull", peer, s);
    s->remote_id = pl->dst_req;
    p->on_pull(s, pl->offset, pl->len);
}
