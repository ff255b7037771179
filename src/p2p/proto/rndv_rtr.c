/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RTR, receiver-initiated rendezvous (seed 000 Table II, Rsend row): a posted
 * receive announces its buffer to the sender, which then writes the message
 * straight into it with process_vm_writev and sends RTR_FIN, with no RTS/CTS
 * round trip.
 *
 * The rule that keeps MPI's matching order. A receive R from source S with tag
 * T is announced only when
 *   - it names S and T exactly (no wildcards), and no earlier posted receive
 *     could match a message of S with tag T (so R is the first match);
 *   - it carries rx_count, the number of envelope packets the receiver had
 *     taken from S's ring when R was posted.
 * The sender uses the announcement for a send only when
 *   - nothing waits in its transmit queue toward the receiver, and
 *   - none of the envelope packets it wrote toward the receiver after the
 *     first rx_count carried R's context and tag (the sender logs the keys of
 *     its last TDM_TXLOG envelopes per peer; an older gap counts as stale): no
 *     message of S that R could match was in flight when R was posted, so the
 *     next message of S with tag T on that communicator is R's, by
 *     non-overtaking (messages on other communicators or tags, e.g. the
 *     barrier between MPI_Irecv and MPI_Rsend, do not spoil it);
 *   - the message fits R's buffer.
 * Any other envelope packet makes the announcements of that moment stale; the
 * sender drops them and R is matched by the ordinary path (RTS/eager). While
 * the sender writes, later sends to the same receiver queue behind the RTR_FIN.
 *
 * Cancelling an announced receive needs the sender's word: the receiver sends
 * RTR_CANCEL; the sender withdraws the announcement (or has already used it,
 * and its RTR_FIN arrives first on the same ring) and answers; R is cancelled
 * if it is still unmatched when the answer arrives.
 *
 * Sender: WRITE --copied--> FIN --RTR_FIN written--> done
 *         WRITE --copy failed (fallback)--> FIN --RTR_FIN written--> the pipeline
 *               streams the rest (select.c's fallback; RTR_FIN says how much was written)
 * Receiver: posted --RTR_FIN--> done, or the pipeline's DATA stage for the rest
 */
#include "../p2p_impl.h"
#include "../../base/sigfmt.h"
#include "../../net/net.h"

#include <stdlib.h>
#include <string.h>

enum { RTR_S_WRITE = 0, RTR_S_FIN };

typedef struct rtr_entry {
    tdm_list_t link;
    tdm_pkt_rtr_t a;
} rtr_entry_t;

static bool could_match_earlier(const tdm_req_t *r) {
    tdm_list_t *it, *tmp;
    tdm_list_for_each_safe(it, tmp, &tdm_p2p_bucket(r->ctx)->posted) {
        tdm_req_t *o = TDM_CONTAINER_OF(it, tdm_req_t, link);
        if (o == r)
            break;
        if (o->ctx == r->ctx && (o->peer == TDM_ANY_SOURCE || o->peer == r->peer) &&
            (o->tag == TDM_ANY_TAG || o->tag == r->tag))
            return true;
    }
    return false;
}

void tdm_rtr_maybe_announce(tdm_req_t *r) {
    /* threaded, r is posted and another thread may be matching it: read nothing of it
     * before select says no (it does under MPI_THREAD_MULTIPLE) */
    if (!tdm_p2p_select_announces(r->mode & TDM_MODE_BLOCKING, r->bytes))
        return;
    int src = r->peer_world;
    if (r->peer == TDM_ANY_SOURCE || r->tag == TDM_ANY_TAG || src < 0 || src == tdm_p2p.rank ||
        !tdm_net_cma(src) || !tdm_layout_describable(r->dt) || could_match_earlier(r) ||
        !tdm_p2p_select_announce(&tdm_p2p.rx[src].rtr))
        return;
    tdm_pkt_rtr_t a = {.type = TDM_PKT_RTR,
                       .ctx = r->ctx,
                       .src = r->peer,
                       .tag = r->tag,
                       .rreq = r->id,
                       .rx_count = tdm_p2p.rx_count[src],
                       .bytes = r->bytes,
                       .pid = tdm_shm_self()->pid};
    tdm_layout_t mine;
    tdm_layout_local(&mine, r->buf, r->count, r->dt);
    tdm_layout_to_wire(&mine, &a.buf);
    tdm_p2p_send_ctrl(src, &a, sizeof(a));
    tdm_rndv(r)->announced = 1;
    TDM_COUNTER_ADD(&tdm_p2p_stats.rtr_announced, 1);
}

void tdm_rtr_on_announce(int peer, const void *body) {
    const tdm_pkt_rtr_t *a = body;
    rtr_entry_t *e = malloc(sizeof(*e));
    if (!e)
        return; /* an unused announcement only costs the receiver an RTS round trip */
    e->a = *a;
    tdm_list_push_back(&tdm_p2p.rtrq[peer], &e->link);
}

/* Did an envelope that could match the announced receive leave after the
 * receiver had taken rx_count envelopes from us? Only the same context and tag
 * can (the announcement names both exactly); beyond the log's depth, assume so. */
static bool stale(int peer, const tdm_pkt_rtr_t *a) {
    uint32_t sent = tdm_p2p.tx_count[peer];
    uint32_t gap = sent - a->rx_count;
    if (gap > TDM_TXLOG)
        return true;
    for (uint32_t n = a->rx_count; n != sent; n++) {
        const tdm_txlog_ent_t *e = &tdm_p2p.txlog[(size_t)peer * TDM_TXLOG + (n % TDM_TXLOG)];
        if (e->ctx == a->ctx && e->tag == a->tag)
            return true;
    }
    return false;
}

bool tdm_rtr_try_send(tdm_req_t *s) {
    int peer = s->peer_world;
    tdm_list_t *q = &tdm_p2p.rtrq[peer];
    if (tdm_list_empty(q) || !tdm_list_empty(&tdm_p2p.txq[peer]))
        return false;
    rtr_entry_t *use = NULL;
    tdm_list_t *it, *tmp;
    tdm_list_for_each_safe(it, tmp, q) {
        rtr_entry_t *e = TDM_CONTAINER_OF(it, rtr_entry_t, link);
        if (stale(peer, &e->a)) {
            tdm_list_remove(&e->link); /* a message that could match it went out first */
            free(e);
            continue;
        }
        if (!use && e->a.ctx == s->ctx && e->a.src == s->self_rank && e->a.tag == s->tag)
            use = e;
    }
    if (!use || s->bytes > use->a.bytes || !tdm_net_cma(peer) || !tdm_layout_describable(s->dt))
        return false;
    tdm_select_in_t in = {
        .send_mode = s->mode,
        .load_send = atomic_load_explicit(&tdm_shm_self()->copies_pending, memory_order_relaxed),
        .load_recv =
            atomic_load_explicit(&tdm_shm_proc(peer)->copies_pending, memory_order_relaxed),
    };
    if (!tdm_p2p_select_rtr(&in))
        return false; /* the RTS path; the announcement goes stale with it */
    tdm_rndv_t *st = tdm_rndv(s);
    memset(st, 0, sizeof(*st));
    if (tdm_layout_remote(&st->remote, &use->a.buf, peer, use->a.pid) < 0)
        return false;
    st->pid = use->a.pid;
    tdm_rndv_load_add(tdm_p2p.rank, 1); /* the sender owes the whole copy */
    st->load_counted = 1;
    st->cur = 0;
    st->hi = s->bytes;
    s->remote_id = use->a.rreq;
    s->proto = TDM_PROTO_RTR;
    s->stage = RTR_S_WRITE;
    tdm_list_remove(&use->link);
    free(use);
    TDM_COUNTER_ADD(&tdm_p2p_stats.rtr_used, 1);
    TDM_COUNTER_ADD(&tdm_p2p_stats.proto_msgs[TDM_PROTO_RTR], 1);
    TDM_COUNTER_ADD(&tdm_p2p_stats.proto_bytes[TDM_PROTO_RTR], s->bytes);
    TDM_EVENT_RAISE(RNDV_PROTOCOL, peer, (int64_t)s->bytes, TDM_PROTO_RTR);
    return true;
}

/* A write failed: CMA goes off for the pair; RTR_FIN says how much was
 * written and the pipeline moves the rest. */
static void rtr_fallback(tdm_req_t *s, int err) {
    tdm_rndv_copy_failed(s, err); /* the peer may have exited: the DATA then go nowhere */
    s->stage = RTR_S_FIN;
}

/* WRITE: a chunk of the write per call (later sends wait behind us). */
static bool rtr_push_write(tdm_req_t *s);
/* FIN: RTR_FIN with the bytes written, then done or the pipeline for the rest. */
static bool rtr_push_fin(tdm_req_t *s);

static const tdm_proto_push_fn rtr_push[] = {
    [RTR_S_WRITE] = rtr_push_write,
    [RTR_S_FIN] = rtr_push_fin,
};

static bool rtr_push_write(tdm_req_t *s) {
    tdm_rndv_t *st = tdm_rndv(s);
    if (st->cur < st->hi) {
        int rc = tdm_rndv_copy_chunk(s, true);
        if (rc < 0) {
            tdm_proto_rtr.fallback(s, -rc);
            return rtr_push_fin(s);
        }
        if (st->cur < st->hi)
            return false; /* stay at the head: later sends wait behind us */
        TDM_COUNTER_ADD(&tdm_p2p_stats.copies, 1);
    }
    if (st->load_counted) {
        tdm_rndv_load_add(tdm_p2p.rank, -1);
        st->load_counted = 0;
    }
    s->stage = RTR_S_FIN;
    return rtr_push_fin(s);
}

static bool rtr_push_fin(tdm_req_t *s) {
    tdm_rndv_t *st = tdm_rndv(s);
    tdm_pkt_rtr_fin_t *f = tdm_net_send_reserve(s->peer_world);
    if (!f)
        return false;
    f->env.type = TDM_PKT_RTR_FIN;
    f->env.flags = 0;
    f->env.mode = s->mode;
    f->env.pad = 0;
    f->env.ctx = s->ctx;
    f->env.src = s->self_rank;
    f->env.tag = s->tag;
    f->env.sreq = s->id;
    f->env.frag = 0;
    f->env.size = s->bytes;
    f->rreq = s->remote_id;
    f->rsvd = 0;
    f->written = st->cur;
    tdm_net_send_commit(s->peer_world, sizeof(*f));
    tdm_p2p_tx_envelope(s->peer_world, s->ctx, s->tag);
    tdm_layout_clear(&st->remote);
    if (st->cur < st->hi) {
        /* CMA failed midway: the rest streams into the matched receive */
        const tdm_proto_t *next = tdm_protos[tdm_p2p_select_fallback(TDM_PROTO_RTR)];
        next->adopt(s, st->cur, st->hi, 0);
        return next->push[s->stage](s);
    }
    tdm_p2p_complete(s);
    return true;
}

void tdm_rtr_on_fin(int peer, const void *body) {
    const tdm_pkt_rtr_fin_t *f = body;
    tdm_p2p.rx_count[peer]++; /* an envelope packet (RTR ordering rule) */
    tdm_req_t *r = tdm_req_lookup(f->rreq);
    if (!r || r->kind != TDM_REQ_RECV || r->proto != TDM_PROTO_NONE || r->done) {
        tdm_error(P2P, "rtr_fin from rank %d for receive %#x, which is not posted", peer, f->rreq);
        abort();
    }
    tdm_p2p_posted_remove(r); /* the first match, by the announcement rule */
    tdm_p2p.rx[peer].rtr.used++;
    tdm_p2p_recv_set_envelope(r, f->env.src, f->env.tag, peer, f->env.size);
    tdm_rndv_t *st = tdm_rndv(r);
    memset(st, 0, sizeof(*st)); /* announced: 0 */
    st->total = f->env.size;
    r->remote_id = f->env.sreq;
    r->proto = TDM_PROTO_RTR;
    if (f->written < f->env.size) {
        /* the sender's write failed midway: the rest comes as DATA cells */
        tdm_protos[tdm_p2p_select_fallback(TDM_PROTO_RTR)]->adopt(r, f->written, f->env.size, 0);
        return;
    }
    tdm_rndv_complete(r);
}

bool tdm_rtr_cancel(tdm_req_t *r) {
    tdm_rndv_t *st = tdm_rndv(r);
    if (!st->announced)
        return false;
    if (!st->cancel_asked) {
        tdm_pkt_rtr_cancel_t c = {.type = TDM_PKT_RTR_CANCEL, .rreq = r->id};
        tdm_p2p_send_ctrl(r->peer_world, &c, sizeof(c));
        st->cancel_asked = 1;
    }
    return true;
}

void tdm_rtr_on_cancel(int peer, const void *body) {
    const tdm_pkt_rtr_cancel_t *c = body;
    tdm_list_t *it, *tmp;
    tdm_pkt_rtr_cancel_t ack = {.type = TDM_PKT_RTR_CANCEL_ACK, .cancelled = 0, .rreq = c->rreq};
    tdm_list_for_each_safe(it, tmp, &tdm_p2p.rtrq[peer]) {
        rtr_entry_t *e = TDM_CONTAINER_OF(it, rtr_entry_t, link);
        if (e->a.rreq == c->rreq) {
            tdm_list_remove(&e->link);
            free(e);
            ack.cancelled = 1;
        }
    }
    /* behind any RTR write in progress: its RTR_FIN reaches the receiver first */
    tdm_p2p_send_ctrl(peer, &ack, sizeof(ack));
}

void tdm_rtr_on_cancel_ack(int peer, const void *body) {
    const tdm_pkt_rtr_cancel_t *c = body;
    (void)peer;
    tdm_req_t *r = tdm_req_lookup(c->rreq);
    if (!r || r->kind != TDM_REQ_RECV)
        return; /* completed (and freed) by the message meanwhile */
    tdm_rndv(r)->announced = 0;
    /* (RTR is unthreaded only, select.c: the bucket's lock costs nothing here) */
    tdm_p2p_bucket_t *b = tdm_p2p_bucket(r->ctx);
    tdm_lock_acquire(&b->lock);
    if (r->proto == TDM_PROTO_NONE && !r->done)
        tdm_p2p_recv_cancelled(r);
    tdm_lock_release(&b->lock);
}

static void rtr_show(tdm_sfmt_t *f, tdm_req_t *s, int peer) {
    tdm_rndv_t *st = tdm_rndv(s);
    (void)peer;
    if (s->stage == RTR_S_WRITE) {
        tdm_sfmt_str(f, "rtr, writing into the receiver's announced buffer: ");
        tdm_p2p_dump_range(f, st->cur, st->hi);
    } else {
        tdm_sfmt_str(f, "rtr, written; RTR_FIN not written yet: the ring to the receiver is full");
    }
}

/* Never chosen at match time: an RTR send carries no RTS (see tdm_rtr_try_send). */
const tdm_proto_t tdm_proto_rtr = {
    .name = "rndv/rtr/cma",
    .desc = "a posted receive announces its buffer; a send that finds the announcement valid "
            "writes into it with process_vm_writev, then RTR_FIN (no RTS/CTS)",
    .caps = TDM_CAP_CMA,
    .push = rtr_push,
    .show = rtr_show,
    .fallback = rtr_fallback,
};
