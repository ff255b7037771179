/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rendezvous between nodes (seed 001 §4): get and put of registered memory named by
 * keys carried in the RTS and CTS (net/rdma.h). Chosen by select.c for a sender of
 * another node when the buffers allow it; the pipeline otherwise.
 *
 * RGET (rget_rdma), the default: the sender registers its contiguous buffer and puts
 * its address and packed key in the RTS (tdm_rndv_rdma_fill_rts); the receiver reads
 * the whole message with one get (the transport's token bucket and FIFO bound the reads
 * in flight, §4.2), then sends FIN. The sender completes at FIN (its RNDV stage).
 *   receiver: GET --get completed--> FIN sent, done
 * RPUT (rput_rdma): the receiver registers its contiguous buffer and answers with a CTS
 * carrying address and key; the sender puts the message, flushes (the data is at the
 * receiver, not only gone from here), then sends FIN.
 *   receiver: WAIT_FIN --FIN--> done
 *   sender:   PUT --put completed--> FLUSH --flush completed--> FIN sent, done
 * AM (am), the default (select.c tdm_p2p_select_data): the RTS goes with the message
 * attached (a non-contiguous one packed into a buffer first) (net/rdma.h commit_data); the receiver
 * fetches it at the match straight into its buffer (or into a bounce buffer it then unpacks, for a
 * non-contiguous or truncated receive). The transport moves it as its own rendezvous
 * does; the sender completes when it has been fetched. No CTS, no FIN.
 *   receiver: DATA_FETCH --fetched--> done        sender: DATA_SEND --fetched--> done
 * Non-contiguous buffers take the pipeline instead (select.c's inputs, rndv_matched): it
 * packs and unpacks packet by packet, where a bounce buffer would add a whole copy and
 * a fresh registration per message.
 *
 * Completions come from the transport's progress (inside tdm_net_poll) as callbacks,
 * possibly with no pair lock held: a callback only records the status and queues the
 * request (rdmaq); tdm_rndv_rdma_progress moves it on under its pair's lock. A get, put or
 * flush that fails (the peer died, a key that does not unpack) completes the request with
 * an error and sends FIN flagged failed, so a living peer completes with an error too,
 * never waits.
 */
#include "../p2p_impl.h"
#include "../../base/sigfmt.h"
#include "../../net/rdma.h"

#include <stdlib.h>
#include <string.h>

enum { RDMA_GET = 0, RDMA_PUT, RDMA_FLUSH, RDMA_WAIT_FIN, RDMA_DATA_SEND, RDMA_DATA_FETCH };

static const char *const stage_what[] = {
    [RDMA_GET] = "get",      [RDMA_PUT] = "put",        [RDMA_FLUSH] = "flush",
    [RDMA_WAIT_FIN] = "fin", [RDMA_DATA_SEND] = "send", [RDMA_DATA_FETCH] = "fetch"};

/* The contiguous buffer of a request (select.c chose RDMA only for one). */
static void *contig_base(const tdm_req_t *req) {
    tdm_layout_t l;
    tdm_layout_local(&l, req->buf, req->count, req->dt);
    return (char *)l.base + l.true_lb;
}

void tdm_rndv_rdma_release(tdm_req_t *req) {
    tdm_rndv_t *st = tdm_rndv(req);
    if (st->rkey) {
        tdm_net_rdma_release(st->rkey);
        st->rkey = NULL;
    }
    if (st->mem) {
        tdm_net_rdma_dereg(st->mem);
        st->mem = NULL;
    }
}

size_t tdm_rndv_rdma_fill_rts(tdm_req_t *s, tdm_pkt_rts_rdma_t *h, size_t room) {
    h->addr = 0;
    h->key_len = 0;
    memset(h->rsvd, 0, sizeof(h->rsvd));
    if (!s->bytes || !tdm_net_rdma_usable(s->peer_world))
        return sizeof(*h);
    tdm_layout_t mine;
    tdm_layout_local(&mine, s->buf, s->count, s->dt);
    if (!mine.contig)
        return sizeof(*h);
    void *base = (char *)mine.base + mine.true_lb;
    h->env.flags |= TDM_PKTF_RDMA;
    h->addr = (uint64_t)(uintptr_t)base;
    tdm_net_mem_t *m;
    int rc = tdm_net_rdma_reg(base, s->bytes, &m);
    if (rc != 0) {
        /* no key: the receiver writes into its own buffer (RPUT) or takes the pipeline */
        tdm_info(P2P, "registering %zu bytes at %p for a rendezvous to rank %d failed: %s",
                 s->bytes, base, s->peer_world, tdm_net_rdma_errmsg());
        return sizeof(*h);
    }
    const void *key;
    size_t klen;
    tdm_net_rdma_key(m, &key, &klen);
    if (klen > TDM_RDMA_KEY_MAX || klen > room) {
        tdm_info(P2P, "a %zu-byte memory key does not fit an rts to rank %d (at most %zu)", klen,
                 s->peer_world, TDM_MIN(room, (size_t)TDM_RDMA_KEY_MAX));
        tdm_net_rdma_dereg(m);
        return sizeof(*h);
    }
    memcpy(h + 1, key, klen);
    h->key_len = (uint16_t)klen;
    tdm_rndv(s)->mem = m;
    return sizeof(*h) + klen;
}

bool tdm_rndv_rdma_parse_rts(int peer, const tdm_pkt_rts_rdma_t *h, tdm_rts_info_t *rts) {
    if (h->key_len > TDM_RDMA_KEY_MAX) {
        tdm_error(P2P, "rts from rank %d carries a %u-byte memory key, more than %d; ignored", peer,
                  (unsigned)h->key_len, TDM_RDMA_KEY_MAX);
        return false;
    }
    rts->rdma = 1;
    rts->addr = h->addr;
    rts->key_len = h->key_len;
    memcpy(rts->key, h + 1, h->key_len);
    return true;
}

/* ---- completions ---- */

static void on_done(void *arg, int status) {
    tdm_req_t *req = arg;
    tdm_rndv(req)->rdma_status = status;
    tdm_lock_acquire(&tdm_p2p.copy_lock);
    tdm_list_push_back(&tdm_p2p.rdmaq, &req->copy_link);
    TDM_STORE_RELAXED(&tdm_p2p.rdma_len, tdm_p2p.rdma_len + 1);
    tdm_lock_release(&tdm_p2p.copy_lock);
}

static void send_fin(int peer, uint32_t req, bool failed) {
    tdm_pkt_fin_t f = {.type = TDM_PKT_FIN, .flags = failed ? TDM_FINF_FAILED : 0, .req = req};
    tdm_p2p_send_ctrl(peer, &f, sizeof(f));
}

static void rdma_failed(tdm_req_t *req, int status) {
    tdm_error(P2P, "rendezvous with rank %d: the %s of %llu bytes failed (%d): %s", req->peer_world,
              stage_what[req->stage], (unsigned long long)tdm_rndv(req)->total, status,
              tdm_net_rdma_errmsg());
    req->status.error = TDM_ERR_OTHER;
    free(tdm_rndv(req)->bounce);
    tdm_rndv(req)->bounce = NULL;
    /* (AM has no FIN: its sender's send completes with the fetch, failed or not) */
    if (req->stage < RDMA_WAIT_FIN)
        send_fin(req->peer_world, req->remote_id, true);
    tdm_rndv_complete(req);
}

static void issued(tdm_req_t *req, int rc);

/* The operation of the request's stage completed with `status` (pair lock held). */
static void step(tdm_req_t *req, int status) {
    if (status < 0) {
        rdma_failed(req, status);
        return;
    }
    switch (req->stage) {
    case RDMA_PUT:
        req->stage = RDMA_FLUSH;
        issued(req, tdm_net_rdma_flush(req->peer_world, on_done, req));
        return;
    case RDMA_GET:
    case RDMA_FLUSH:
        send_fin(req->peer_world, req->remote_id, false);
        tdm_rndv_complete(req);
        return;
    case RDMA_DATA_FETCH: {
        tdm_rndv_t *st = tdm_rndv(req);
        if (st->bounce) {
            tdm_p2p_recv_copy(req, 0, st->bounce, req->msg_size); /* drops what does not fit */
            free(st->bounce);
            st->bounce = NULL;
        }
        tdm_rndv_complete(req);
        return;
    }
    case RDMA_DATA_SEND:
        free(tdm_rndv(req)->bounce);
        tdm_rndv(req)->bounce = NULL;
        tdm_rndv_complete(req);
        return;
    default:
        return;
    }
}

static void issued(tdm_req_t *req, int rc) {
    if (rc != TDM_NET_RDMA_PENDING)
        step(req, rc); /* done in the call (0), or refused (< 0) */
}

int tdm_rndv_rdma_progress(void) {
    int events = 0;
    for (;;) {
        tdm_req_t *req = NULL;
        tdm_lock_acquire(&tdm_p2p.copy_lock);
        if (!tdm_list_empty(&tdm_p2p.rdmaq)) {
            req = TDM_CONTAINER_OF(tdm_p2p.rdmaq.next, tdm_req_t, copy_link);
            tdm_list_remove(&req->copy_link);
            TDM_STORE_RELAXED(&tdm_p2p.rdma_len, tdm_p2p.rdma_len - 1);
        }
        tdm_lock_release(&tdm_p2p.copy_lock);
        if (!req)
            break;
        int peer = req->peer_world; /* req may be complete and gone after its step */
        if (tdm_threaded) {
            if (!tdm_lock_try(&tdm_p2p.peers[peer].lock)) {
                /* its pair is another thread's now: a later progress takes it */
                tdm_lock_acquire(&tdm_p2p.copy_lock);
                tdm_list_push_back(&tdm_p2p.rdmaq, &req->copy_link);
                TDM_STORE_RELAXED(&tdm_p2p.rdma_len, tdm_p2p.rdma_len + 1);
                tdm_lock_release(&tdm_p2p.copy_lock);
                break;
            }
            step(req, tdm_rndv(req)->rdma_status);
            tdm_p2p_peer_unlock(peer);
        } else {
            step(req, tdm_rndv(req)->rdma_status);
        }
        events++;
    }
    return events;
}

/* ---- RGET ---- */

static void rget_recv_start(tdm_req_t *r, const tdm_rts_info_t *rts) {
    tdm_rndv_t *st = tdm_rndv(r);
    st->total = TDM_MIN((uint64_t)r->msg_size, (uint64_t)r->bytes);
    r->stage = RDMA_GET;
    tdm_net_rkey_t *rk;
    int rc = tdm_net_rdma_unpack(r->peer_world, rts->key, rts->key_len, &rk);
    if (rc != 0) {
        step(r, rc);
        return;
    }
    st->rkey = rk;
    issued(r, tdm_net_rdma_get(r->peer_world, contig_base(r), (size_t)st->total, rts->addr, rk,
                               on_done, r));
}

/* ---- RPUT ---- */

static void rput_recv_start(tdm_req_t *r, const tdm_rts_info_t *rts) {
    tdm_rndv_t *st = tdm_rndv(r);
    st->total = TDM_MIN((uint64_t)r->msg_size, (uint64_t)r->bytes);
    void *base = contig_base(r);
    tdm_net_mem_t *m = NULL;
    const void *key = NULL;
    size_t klen = 0;
    int rc = st->total ? tdm_net_rdma_reg(base, (size_t)st->total, &m) : -1;
    if (rc == 0) {
        tdm_net_rdma_key(m, &key, &klen);
        if (klen > TDM_RDMA_KEY_MAX) {
            tdm_net_rdma_dereg(m);
            rc = -1;
        }
    }
    if (rc != 0) {
        /* nothing to write into: a fresh choice, the one that needs no key */
        tdm_info(P2P, "rput from rank %d: the receive buffer could not be keyed (%s); pipeline",
                 r->peer_world, st->total ? tdm_net_rdma_errmsg() : "no bytes");
        r->proto = TDM_PROTO_PIPELINE;
        tdm_protos[TDM_PROTO_PIPELINE]->recv_start(r, rts);
        return;
    }
    st->mem = m;
    r->stage = RDMA_WAIT_FIN;
    unsigned char pkt[sizeof(tdm_pkt_cts_rdma_t) + TDM_RDMA_KEY_MAX];
    tdm_pkt_cts_rdma_t c = {
        .cts = {.type = TDM_PKT_CTS, .proto = r->proto, .sreq = rts->sreq, .rreq = r->id},
        .total = st->total,
        .addr = (uint64_t)(uintptr_t)base,
        .key_len = (uint16_t)klen};
    memcpy(pkt, &c, sizeof(c));
    memcpy(pkt + sizeof(c), key, klen);
    tdm_p2p_send_ctrl(r->peer_world, pkt, sizeof(c) + klen);
}

static void rput_send_cts(tdm_req_t *s, const tdm_pkt_cts_t *cts) {
    tdm_pkt_cts_rdma_t c;
    memcpy(&c, cts, sizeof(c));
    tdm_rndv_t *st = tdm_rndv(s);
    st->total = TDM_MIN(c.total, (uint64_t)s->bytes);
    s->stage = RDMA_PUT;
    if (c.key_len > TDM_RDMA_KEY_MAX) {
        tdm_error(P2P, "cts from rank %d carries a %u-byte memory key, more than %d", s->peer_world,
                  (unsigned)c.key_len, TDM_RDMA_KEY_MAX);
        step(s, TDM_NET_RDMA_ERR_NONE);
        return;
    }
    tdm_net_rkey_t *rk;
    int rc =
        tdm_net_rdma_unpack(s->peer_world, (const tdm_pkt_cts_rdma_t *)cts + 1, c.key_len, &rk);
    if (rc != 0) {
        step(s, rc);
        return;
    }
    st->rkey = rk;
    issued(s, tdm_net_rdma_put(s->peer_world, contig_base(s), (size_t)st->total, c.addr, rk,
                               on_done, s));
}

/* ---- AM: the message attached to the RTS ---- */

bool tdm_rndv_data_send(tdm_req_t *s, void *h) {
    if (!s->bytes || !tdm_net_rdma_usable(s->peer_world))
        return false;
    tdm_layout_t mine;
    tdm_layout_local(&mine, s->buf, s->count, s->dt);
    if (!tdm_p2p_select_data(mine.contig, s->bytes))
        return false;
    const void *src = (char *)mine.base + mine.true_lb;
    if (!mine.contig) {
        /* packed once here, where the pipeline packs, sends and copies packet by packet */
        void *packed = malloc(s->bytes);
        if (!packed)
            return false; /* the pipeline needs no more memory than its packets */
        tdm_dtype_pack(s->buf, s->count, s->dt, 0, packed, s->bytes);
        tdm_rndv(s)->bounce = packed;
        src = packed;
    }
    tdm_pkt_rts_data_t *d = h;
    d->env.flags |= TDM_PKTF_DATA;
    d->handle = 0;
    s->proto = TDM_PROTO_AM;
    s->stage = RDMA_DATA_SEND;
    int rc = tdm_net_rdma_commit_data(s->peer_world, sizeof(*d), src, s->bytes, on_done, s);
    /* the caller still counts the RTS as sent: a send finished or refused in the call
     * completes from the queue, after it */
    if (rc != TDM_NET_RDMA_PENDING)
        on_done(s, rc);
    return true;
}

static void am_recv_start(tdm_req_t *r, const tdm_rts_info_t *rts) {
    tdm_rndv_t *st = tdm_rndv(r);
    tdm_net_data_t *d = (tdm_net_data_t *)(uintptr_t)rts->addr;
    st->total = TDM_MIN((uint64_t)r->msg_size, (uint64_t)r->bytes);
    r->stage = RDMA_DATA_FETCH;
    tdm_layout_t mine;
    tdm_layout_local(&mine, r->buf, r->count, r->dt);
    void *dst = (char *)mine.base + mine.true_lb;
    if (!mine.contig || r->msg_size > r->bytes) {
        /* the transport writes the whole message in one place: here, then unpacked */
        st->bounce = malloc(r->msg_size);
        if (!st->bounce) {
            tdm_net_rdma_drop(d);
            step(r, TDM_NET_RDMA_ERR_NONE);
            return;
        }
        dst = st->bounce;
    }
    issued(r, tdm_net_rdma_fetch(d, dst, on_done, r));
}

/* ---- both ---- */

static void rdma_on_fin(tdm_req_t *req) {
    if (req->stage == RDMA_WAIT_FIN)
        tdm_rndv_complete(req);
}

static void rdma_show(tdm_sfmt_t *f, tdm_req_t *req, int peer) {
    if (req->kind != TDM_REQ_SEND)
        tdm_sfmt_str(f, "matched a rendezvous, ");
    tdm_sfmt_str(f, tdm_protos[req->proto]->name);
    switch (req->stage) {
    case RDMA_GET:
        tdm_sfmt_str(f, ", reading the message from rank ");
        break;
    case RDMA_PUT:
        tdm_sfmt_str(f, ", writing the message into rank ");
        break;
    case RDMA_FLUSH:
        tdm_sfmt_str(f, ", flushing its writes to rank ");
        break;
    case RDMA_DATA_SEND:
        tdm_sfmt_str(f, ", the message attached to the RTS, waiting for its fetch by rank ");
        break;
    case RDMA_DATA_FETCH:
        tdm_sfmt_str(f, ", fetching the message attached to the RTS from rank ");
        break;
    default:
        tdm_sfmt_str(f, ", waiting for FIN from rank ");
        break;
    }
    tdm_sfmt_int(f, peer);
}

static const tdm_proto_push_fn rdma_push[] = {
    [RDMA_GET] = NULL, /* the transport moves it, not the transmit queue */
    [RDMA_PUT] = NULL,       [RDMA_FLUSH] = NULL,      [RDMA_WAIT_FIN] = NULL,
    [RDMA_DATA_SEND] = NULL, [RDMA_DATA_FETCH] = NULL,
};

const tdm_proto_t tdm_proto_rget_rdma = {
    .name = "rndv/rget/rdma",
    .desc = "another node's sender puts its buffer's address and key in the RTS; the receiver "
            "reads the whole message with one get (reads in flight bounded), then sends FIN",
    .caps = TDM_CAP_RDMA,
    .push = rdma_push,
    .show = rdma_show,
    .recv_start = rget_recv_start,
    .on_fin = rdma_on_fin,
};

const tdm_proto_t tdm_proto_rput_rdma = {
    .name = "rndv/rput/rdma",
    .desc = "the receiver answers another node's RTS with a CTS carrying its buffer's address "
            "and key; the sender puts the whole message, flushes, then sends FIN",
    .caps = TDM_CAP_RDMA,
    .push = rdma_push,
    .show = rdma_show,
    .recv_start = rput_recv_start,
    .send_cts = rput_send_cts,
    .on_fin = rdma_on_fin,
};

const tdm_proto_t tdm_proto_am = {
    .name = "rndv/am",
    .desc = "another node's sender attaches a contiguous message to its RTS; the receiver "
            "fetches it into its buffer at the match (the transport's rendezvous; over UCX's tcp "
            "from TANDEM_UCX_STREAM_MIN, eager chunks after the receiver's go), no FIN",
    .caps = TDM_CAP_RDMA,
    .push = rdma_push,
    .show = rdma_show,
    .recv_start = am_recv_start,
};
