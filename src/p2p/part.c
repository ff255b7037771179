/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned communication, the engine side (part.h).
 *
 * Matching. MPI_Psend_init sends INIT (envelope, request id, partitions, total
 * bytes) to the receiver, which matches it against its partitioned receives in
 * init order, or keeps it until MPI_Precv_init comes. These two queues are the
 * only ones INIT meets, so partitioned and ordinary messages never match each
 * other. Matching is all an init does: no buffer is touched before a start.
 *
 * A round. The receive's start sends CTS (with its request id); its buffer is
 * the engine's from then on. The sender moves data of its round k once it has
 * had k CTSs: a receiver starts round k only after its round k - 1 received
 * everything, so a CTS never runs ahead of the data. Partitions marked ready
 * before that wait; later ones go as they are marked. Each run of consecutive
 * ready partitions is one PIECE packet (which partitions) followed, unless it
 * holds no bytes, by one ordinary send of its bytes on the data context with
 * the receive's tag; the receiver posts a receive into the piece's place when
 * the PIECE packet comes, ahead of the data in the same ring, and the pieces of
 * one request match their receives in order. So each piece moves eagerly or by
 * rendezvous (CMA, pipeline) as any message of its size would: straight into
 * the user's buffer when the datatype is contiguous, through a packed copy
 * otherwise (a piece is a range of the packed stream, which a partition of the
 * other side may cut anywhere).
 *
 * Completion. The sender's round completes when every partition was sent and
 * every piece's send completed; the receiver's when every sender partition's
 * bytes are in its buffer. A receive partition has arrived when all of its
 * bytes have (one with none, of a message without bytes or past a shorter
 * sender's end, when the round completes). A sender with more bytes than the
 * receive holds is a truncation: what fits is delivered and the receive's round
 * fails with TDM_ERR_TRUNCATE, as an ordinary receive does.
 *
 * Requests of one process talk to each other by direct calls instead of
 * packets (there is no ring to self); their data goes through the engine's
 * sends to self.
 */
#include "part.h"

#include "p2p_impl.h"

#include <stdlib.h>
#include <string.h>

enum { PART_NOT_READY = 0, PART_READY, PART_SENT }; /* send partition states */

typedef struct part {
    tdm_list_t link; /* receive: in `posted` until matched */
    tdm_req_t *req;  /* the request this is the state of */
    int partitions;
    size_t pbytes; /* bytes per partition on this side */
    uint32_t ctx, data_ctx;
    int peer, peer_world, self_rank;
    uint32_t rounds; /* starts so far */
    int pending;     /* pieces in flight this round */
    int error;       /* receive: first failure of the round (tdm_rc_t) */
    /* send side */
    uint8_t *state; /* per partition, this round: PART_* */
    int sent;       /* partitions sent this round */
    uint32_t cts;   /* CTSs received: rounds the receiver has started */
    uint32_t rreq;  /* the matched receive's id (from its CTS) */
    /* receive side */
    bool matched;
    uint32_t sreq;   /* the matched send's id */
    int sparts;      /* its partitions */
    size_t sbytes;   /* its total bytes */
    size_t *arrived; /* per receive partition: bytes arrived this round */
    int sarrived;    /* sender partitions arrived this round */
} part_t;

/* A piece in flight: one send or receive of the engine. */
typedef struct piece {
    tdm_req_t *owner; /* the partitioned request */
    size_t off, len;  /* bytes of the packed stream it carries (receive: those that fit) */
    int parts;        /* sender partitions in it */
    void *stage;      /* packed copy (non-contiguous datatypes), or NULL */
} piece_t;

/* An INIT no partitioned receive matched yet. */
typedef struct unexp_init {
    tdm_list_t link;
    tdm_pkt_part_t pkt;
} unexp_init_t;

/* Every partitioned request's state, the queues below and the deferred packets are under
 * part_lock (MPI_THREAD_MULTIPLE). It is taken by the entry points and by the hooks and
 * packets, which run with no engine lock held (threaded, a PART packet is copied and
 * handled at the end of progress): so it comes before the engine's locks, and this file
 * may call the engine's sends and receives while holding it. */
static tdm_lock_t part_lock = TDM_LOCK_INITIALIZER;
typedef struct part_deferred {
    struct part_deferred *next;
    int from;
    tdm_pkt_part_t pkt;
} part_deferred_t;
static tdm_lock_t deferred_lock = TDM_LOCK_INITIALIZER; /* a leaf: the list only */
static part_deferred_t *deferred_head, **deferred_tail = &deferred_head;

static tdm_list_t posted = {&posted, &posted}; /* partitioned receives not matched yet */
static tdm_list_t unexp = {&unexp, &unexp};    /* INITs not matched yet, in arrival order */

static part_t *part_of(const tdm_req_t *r) {
    return r->cb_arg;
}

static _Noreturn void out_of_memory(const char *what, int peer) {
    /* a transfer half done cannot be dropped: its peer would wait forever */
    tdm_error(P2P, "out of memory %s (partitioned communication with rank %d); aborting", what,
              peer);
    abort();
}

static void on_packet(int from_world, const tdm_pkt_part_t *pk);

/* A control packet to the peer: through the ring, or to ourselves directly. */
static void send_pkt(const part_t *p, const tdm_pkt_part_t *pk) {
    if (p->peer_world == tdm_p2p.rank) {
        on_packet(tdm_p2p.rank, pk);
        return;
    }
    tdm_p2p_peer_lock(p->peer_world); /* the ring and transmit queue are the pair's */
    tdm_p2p_send_ctrl(p->peer_world, pk, sizeof(*pk));
    tdm_p2p_peer_unlock(p->peer_world);
}

/* ---- completion of a round ---- */

static void round_complete(tdm_req_t *r, const part_t *p) {
    tdm_req_t *in = r->inner;
    if (r->kind == TDM_REQ_PSEND) {
        in->status = (tdm_status_t){.source = TDM_ANY_SOURCE, .tag = TDM_ANY_TAG};
    } else {
        int err = p->sbytes > r->bytes ? TDM_ERR_TRUNCATE : p->error;
        in->status = (tdm_status_t){.source = r->peer,
                                    .tag = p->peer < 0 ? TDM_ANY_TAG : r->tag,
                                    .error = err,
                                    .bytes = TDM_MIN(p->sbytes, r->bytes)};
        in->bytes = r->bytes; /* a truncation's message names it */
    }
    tdm_p2p_complete(in);
}

static void send_check_done(tdm_req_t *r, const part_t *p) {
    if (p->sent == p->partitions && p->pending == 0 && !r->inner->done)
        round_complete(r, p);
}

static void recv_check_done(tdm_req_t *r, const part_t *p) {
    if (p->sarrived == p->sparts && p->pending == 0 && !r->inner->done)
        round_complete(r, p);
}

/* ---- send side ---- */

static void piece_sent(tdm_req_t *s) {
    piece_t *pc = s->cb_arg;
    tdm_req_t *r = pc->owner;
    part_t *p = part_of(r);
    free(pc->stage);
    free(pc);
    p->pending--;
    send_check_done(r, p);
}

static void piece_sent_hook(tdm_req_t *s) {
    tdm_lock_acquire(&part_lock);
    piece_sent(s);
    tdm_lock_release(&part_lock);
}

/* Send partitions [first, first + n): the PIECE packet, then their bytes. */
static void send_run(tdm_req_t *r, part_t *p, int first, int n) {
    memset(p->state + first, PART_SENT, (size_t)n);
    p->sent += n;
    if (p->peer < 0) /* MPI_PROC_NULL: nothing moves */
        return;
    size_t off = (size_t)first * p->pbytes, len = (size_t)n * p->pbytes;
    tdm_pkt_part_t pk = {.type = TDM_PKT_PART,
                         .op = TDM_PART_PIECE,
                         .rreq = p->rreq,
                         .first = (uint32_t)first,
                         .parts = (uint32_t)n};
    send_pkt(p, &pk);
    if (len == 0)
        return;
    piece_t *pc = calloc(1, sizeof(*pc));
    if (!pc)
        out_of_memory("for a piece", p->peer_world);
    pc->owner = r;
    pc->off = off;
    pc->len = len;
    pc->parts = n;
    const void *data = (const char *)r->buf + r->dt->true_lb + off;
    if (!r->dt->contig) {
        if (!(pc->stage = malloc(len)))
            out_of_memory("packing a piece", p->peer_world);
        tdm_dtype_pack(r->buf, r->count, r->dt, off, pc->stage, len);
        data = pc->stage;
    }
    tdm_req_t *s = NULL;
    p->pending++;
    tdm_rc_t rc =
        tdm_p2p_isend(data, len, tdm_dtype_byte(), p->peer_world, p->self_rank,
                      TDM_P2P_PART_TAG(p->rreq), p->data_ctx, TDM_MODE_STD, r->comm, true, &s);
    if (rc != TDM_OK)
        out_of_memory("sending a piece", p->peer_world);
    /* the engine releases it after the hook; done already if it fitted the ring or went
     * to ourselves */
    if (!tdm_p2p_req_hook(s, piece_sent_hook, pc)) {
        piece_sent(s);
        tdm_p2p_release(s);
    }
}

/* Has the receiver started the round the sender is in? */
static bool cleared(const part_t *p) {
    return p->peer < 0 || p->cts >= p->rounds;
}

/* Send the run of ready, unsent partitions around i. */
static void send_around(tdm_req_t *r, part_t *p, int i) {
    if (p->state[i] != PART_READY)
        return;
    int lo = i, hi = i;
    while (lo > 0 && p->state[lo - 1] == PART_READY)
        lo--;
    while (hi + 1 < p->partitions && p->state[hi + 1] == PART_READY)
        hi++;
    send_run(r, p, lo, hi - lo + 1);
}

static void part_ready_range_locked(tdm_req_t *r, int lo, int hi) {
    part_t *p = part_of(r);
    memset(p->state + lo, PART_READY, (size_t)(hi - lo + 1));
    if (!cleared(p))
        return;
    send_around(r, p, lo);
    send_check_done(r, p);
}

static void part_ready_list_locked(tdm_req_t *r, const int *list, int n) {
    part_t *p = part_of(r);
    for (int k = 0; k < n; k++)
        p->state[list[k]] = PART_READY;
    if (!cleared(p))
        return;
    for (int k = 0; k < n; k++)
        send_around(r, p, list[k]);
    send_check_done(r, p);
}

static bool part_is_ready_locked(const tdm_req_t *r, int i) {
    return part_of(r)->state[i] != PART_NOT_READY;
}

static void on_cts(const tdm_pkt_part_t *pk) {
    tdm_req_t *r = tdm_req_lookup(pk->sreq);
    if (!r || r->kind != TDM_REQ_PSEND) {
        /* the send was freed: only an erroneous program starts its receive then */
        tdm_warn(P2P, "partitioned cts names send request %#x, which no longer exists", pk->sreq);
        return;
    }
    part_t *p = part_of(r);
    p->rreq = pk->rreq;
    p->cts++;
    if (!r->active || r->inner->done || !cleared(p))
        return;
    /* the partitions marked ready before the receiver started */
    for (int i = 0; i < p->partitions; i++)
        send_around(r, p, i);
    send_check_done(r, p);
}

/* ---- receive side ---- */

/* Bytes [off, off + len) of the packed stream are in the receive buffer. */
static void account(part_t *p, size_t off, size_t len) {
    if (p->pbytes == 0)
        return;
    for (size_t i = off / p->pbytes; i < (size_t)p->partitions && i * p->pbytes < off + len; i++) {
        size_t a = TDM_MAX(off, i * p->pbytes), b = TDM_MIN(off + len, (i + 1) * p->pbytes);
        p->arrived[i] += b - a;
    }
}

static void piece_received(tdm_req_t *q) {
    piece_t *pc = q->cb_arg;
    tdm_req_t *r = pc->owner;
    part_t *p = part_of(r);
    /* a truncated piece is reported as the whole message's truncation */
    if (q->status.error != TDM_OK && q->status.error != TDM_ERR_TRUNCATE && p->error == TDM_OK)
        p->error = q->status.error;
    if (pc->stage) {
        tdm_dtype_unpack(r->buf, r->count, r->dt, pc->off, pc->stage, pc->len);
        free(pc->stage);
    }
    account(p, pc->off, pc->len);
    p->sarrived += pc->parts;
    p->pending--;
    free(pc);
    recv_check_done(r, p);
}

static void piece_received_hook(tdm_req_t *q) {
    tdm_lock_acquire(&part_lock);
    piece_received(q);
    tdm_lock_release(&part_lock);
}

static void on_piece(const tdm_pkt_part_t *pk) {
    tdm_req_t *r = tdm_req_lookup(pk->rreq);
    if (!r || r->kind != TDM_REQ_PRECV || !r->active || r->inner->done) {
        tdm_error(P2P, "partitioned data for receive request %#x, which is not receiving; aborting",
                  pk->rreq);
        abort();
    }
    part_t *p = part_of(r);
    size_t spb = p->sbytes / (size_t)p->sparts;
    size_t off = (size_t)pk->first * spb, len = (size_t)pk->parts * spb;
    if (len == 0) {
        p->sarrived += (int)pk->parts;
        recv_check_done(r, p);
        return;
    }
    piece_t *pc = calloc(1, sizeof(*pc));
    if (!pc)
        out_of_memory("for a piece", p->peer_world);
    pc->owner = r;
    pc->off = off;
    pc->len = off >= r->bytes ? 0 : TDM_MIN(len, r->bytes - off); /* the rest is truncated */
    pc->parts = (int)pk->parts;
    void *dst = (char *)r->buf + r->dt->true_lb + off;
    if (!r->dt->contig && pc->len) {
        if (!(pc->stage = malloc(pc->len)))
            out_of_memory("for a piece's packed copy", p->peer_world);
        dst = pc->stage;
    }
    tdm_req_t *q = NULL;
    p->pending++;
    tdm_rc_t rc = tdm_p2p_irecv_ex(dst, pc->len, tdm_dtype_byte(), p->peer, p->peer_world,
                                   TDM_P2P_PART_TAG(r->id), p->data_ctx, r->comm, 0, NULL, &q);
    if (rc != TDM_OK)
        out_of_memory("receiving a piece", p->peer_world);
    if (!tdm_p2p_req_hook(q, piece_received_hook, pc)) {
        q->cb_arg = pc;
        piece_received(q);
        tdm_p2p_release(q);
    }
}

static void send_cts(tdm_req_t *r, const part_t *p) {
    tdm_pkt_part_t pk = {.type = TDM_PKT_PART, .op = TDM_PART_CTS, .sreq = p->sreq, .rreq = r->id};
    send_pkt(p, &pk);
}

/* Receive r, not matched yet, matches the send INIT `pk` announced. */
static void match(tdm_req_t *r, const tdm_pkt_part_t *pk) {
    part_t *p = part_of(r);
    tdm_list_remove(&p->link);
    p->matched = true;
    p->sreq = pk->sreq;
    p->sparts = (int)pk->parts;
    p->sbytes = pk->bytes;
    if (p->sbytes != r->bytes)
        tdm_debug(P2P,
                  "partitioned send of %zu bytes from rank %d tag %d matched a %zu-byte "
                  "receive",
                  p->sbytes, r->peer, r->tag, r->bytes);
    if (r->active)
        send_cts(r, p); /* it started before the send's INIT came */
}

static bool same_envelope(const tdm_req_t *r, const tdm_pkt_part_t *pk) {
    return part_of(r)->ctx == pk->ctx && r->peer == pk->src && r->tag == pk->tag;
}

static void on_init(int from_world, const tdm_pkt_part_t *pk) {
    tdm_list_t *it, *tmp;
    tdm_list_for_each_safe(it, tmp, &posted) {
        part_t *p = TDM_CONTAINER_OF(it, part_t, link);
        if (same_envelope(p->req, pk)) {
            match(p->req, pk);
            return;
        }
    }
    unexp_init_t *u = malloc(sizeof(*u));
    if (!u)
        out_of_memory("keeping a partitioned send's announcement", from_world);
    u->pkt = *pk;
    tdm_list_push_back(&unexp, &u->link);
}

static void on_packet(int from_world, const tdm_pkt_part_t *pk) {
    switch (pk->op) {
    case TDM_PART_INIT:
        on_init(from_world, pk);
        break;
    case TDM_PART_CTS:
        on_cts(pk);
        break;
    case TDM_PART_PIECE:
        on_piece(pk);
        break;
    default:
        tdm_error(P2P, "partitioned packet of unknown kind %u from rank %d; aborting", pk->op,
                  from_world);
        abort();
    }
}

void tdm_p2p_part_on_packet(int peer, const void *body) {
    if (TDM_UNLIKELY(tdm_threaded)) {
        /* under the pair's lock: handled at the end of progress, under part_lock */
        part_deferred_t *d = malloc(sizeof(*d));
        if (!d)
            out_of_memory("keeping a packet", peer);
        d->next = NULL;
        d->from = peer;
        memcpy(&d->pkt, body, sizeof(d->pkt));
        tdm_lock_acquire(&deferred_lock);
        if (deferred_tail == &deferred_head)
            TDM_STORE_RELAXED(&deferred_head, d); /* the head is read unlocked */
        else
            *deferred_tail = d;
        deferred_tail = &d->next;
        tdm_lock_release(&deferred_lock);
        return;
    }
    tdm_pkt_part_t pk;
    memcpy(&pk, body, sizeof(pk)); /* packed in the cell; read once */
    on_packet(peer, &pk);
}

void tdm_p2p_part_deferred_run(void) {
    if (!TDM_LOAD_RELAXED(&deferred_head))
        return;
    tdm_lock_acquire(&part_lock);
    tdm_lock_acquire(&deferred_lock);
    part_deferred_t *d = deferred_head;
    TDM_STORE_RELAXED(&deferred_head, NULL);
    deferred_tail = &deferred_head;
    tdm_lock_release(&deferred_lock);
    while (d) { /* in arrival order: a peer's packets keep their ring's order */
        part_deferred_t *next = d->next;
        on_packet(d->from, &d->pkt);
        free(d);
        d = next;
    }
    tdm_lock_release(&part_lock);
}

/* ---- requests ---- */

static tdm_req_t *part_new(const tdm_part_args_t *a, bool send) {
    tdm_req_t *r = tdm_req_alloc(send ? TDM_REQ_PSEND : TDM_REQ_PRECV);
    part_t *p = r ? calloc(1, sizeof(*p)) : NULL;
    size_t n = (size_t)a->partitions;
    if (p && send)
        p->state = calloc(n, 1);
    else if (p)
        p->arrived = calloc(n, sizeof(size_t));
    if (!p || (send ? !p->state : !p->arrived)) {
        if (p) {
            free(p->state);
            free(p->arrived);
            free(p);
        }
        if (r)
            tdm_req_free(r);
        return NULL;
    }
    tdm_list_init(&p->link);
    p->req = r;
    p->partitions = a->partitions;
    p->pbytes = a->count * a->dt->size;
    p->ctx = a->ctx;
    p->data_ctx = a->data_ctx;
    p->peer = a->peer;
    p->peer_world = a->peer_world;
    p->self_rank = a->self_rank;
    r->persistent = 1;
    r->active = 0;
    r->done = 1; /* an inactive persistent request completes at once */
    tdm_req_set_comm(r, a->comm);
    r->ctx = a->ctx;
    r->peer = a->peer;
    r->peer_world = a->peer_world;
    r->self_rank = a->self_rank;
    r->tag = a->tag;
    r->buf = a->buf;
    r->count = n * a->count;
    r->dt = a->dt;
    tdm_dtype_retain(a->dt);
    r->bytes = r->count * a->dt->size;
    r->status.source = TDM_ANY_SOURCE;
    r->status.tag = TDM_ANY_TAG;
    r->cb_arg = p;
    return r;
}

static tdm_rc_t psend_init_locked(const tdm_part_args_t *a, tdm_req_t **req_p) {
    tdm_req_t *r = part_new(a, true);
    if (!r) {
        tdm_error(P2P, "out of memory for a partitioned send to rank %d", a->peer);
        return TDM_ERR_NOMEM;
    }
    *req_p = r;
    if (a->peer < 0)
        return TDM_OK;
    tdm_pkt_part_t pk = {.type = TDM_PKT_PART,
                         .op = TDM_PART_INIT,
                         .ctx = a->ctx,
                         .src = a->self_rank,
                         .tag = a->tag,
                         .sreq = r->id,
                         .parts = (uint32_t)a->partitions,
                         .bytes = r->bytes};
    send_pkt(part_of(r), &pk);
    return TDM_OK;
}

static tdm_rc_t precv_init_locked(const tdm_part_args_t *a, tdm_req_t **req_p) {
    tdm_req_t *r = part_new(a, false);
    if (!r) {
        tdm_error(P2P, "out of memory for a partitioned receive from rank %d", a->peer);
        return TDM_ERR_NOMEM;
    }
    *req_p = r;
    if (a->peer < 0)
        return TDM_OK;
    tdm_list_t *it, *tmp;
    tdm_list_for_each_safe(it, tmp, &unexp) {
        unexp_init_t *u = TDM_CONTAINER_OF(it, unexp_init_t, link);
        if (same_envelope(r, &u->pkt)) {
            tdm_list_remove(&u->link);
            match(r, &u->pkt);
            free(u);
            return TDM_OK;
        }
    }
    tdm_list_push_back(&posted, &part_of(r)->link);
    return TDM_OK;
}

static tdm_rc_t part_start_locked(tdm_req_t *r) {
    part_t *p = part_of(r);
    tdm_req_t *in = tdm_req_alloc(TDM_REQ_OTHER);
    if (!in) {
        tdm_error(P2P, "out of memory starting a partitioned request");
        return TDM_ERR_NOMEM;
    }
    tdm_req_set_comm(in, r->comm);
    r->inner = in;
    r->active = 1;
    r->done = 0;
    p->rounds++;
    p->pending = 0;
    p->error = TDM_OK;
    if (r->kind == TDM_REQ_PSEND) {
        memset(p->state, PART_NOT_READY, (size_t)p->partitions);
        p->sent = 0;
        return TDM_OK;
    }
    memset(p->arrived, 0, (size_t)p->partitions * sizeof(size_t));
    p->sarrived = 0;
    if (p->peer < 0) /* MPI_PROC_NULL: nothing comes */
        round_complete(r, p);
    else if (p->matched)
        send_cts(r, p); /* the buffer is the engine's now: the sender may write */
    return TDM_OK;
}

int tdm_p2p_part_partitions(const tdm_req_t *r) {
    return part_of(r)->partitions;
}

static bool part_arrived_locked(const tdm_req_t *r, int i) {
    const part_t *p = part_of(r);
    if (r->inner->done)
        return true;
    /* the bytes of partition i that come (a shorter sender sends fewer) */
    size_t lo = (size_t)i * p->pbytes, hi = lo + p->pbytes;
    size_t end = p->matched ? TDM_MIN(p->sbytes, r->bytes) : r->bytes;
    size_t want = hi <= end ? p->pbytes : lo < end ? end - lo : 0;
    return want > 0 && p->arrived[i] == want;
}

static void part_free_locked(tdm_req_t *r) {
    part_t *p = part_of(r);
    tdm_list_remove(&p->link); /* a receive never matched */
    free(p->state);
    free(p->arrived);
    free(p);
    r->cb_arg = NULL;
    tdm_p2p_release(r);
}

void tdm_p2p_part_fini(void) {
    tdm_list_t *it, *tmp;
    tdm_list_for_each_safe(it, tmp, &unexp) {
        tdm_list_remove(it);
        free(TDM_CONTAINER_OF(it, unexp_init_t, link));
    }
}

void tdm_p2p_part_ready_range(tdm_req_t *r, int lo, int hi) {
    tdm_lock_acquire(&part_lock);
    part_ready_range_locked(r, lo, hi);
    tdm_lock_release(&part_lock);
}

void tdm_p2p_part_ready_list(tdm_req_t *r, const int *list, int n) {
    tdm_lock_acquire(&part_lock);
    part_ready_list_locked(r, list, n);
    tdm_lock_release(&part_lock);
}

bool tdm_p2p_part_is_ready(const tdm_req_t *r, int i) {
    tdm_lock_acquire(&part_lock);
    bool v = part_is_ready_locked(r, i);
    tdm_lock_release(&part_lock);
    return v;
}

tdm_rc_t tdm_p2p_psend_init(const tdm_part_args_t *a, tdm_req_t **req_p) {
    tdm_lock_acquire(&part_lock);
    tdm_rc_t v = psend_init_locked(a, req_p);
    tdm_lock_release(&part_lock);
    return v;
}

tdm_rc_t tdm_p2p_precv_init(const tdm_part_args_t *a, tdm_req_t **req_p) {
    tdm_lock_acquire(&part_lock);
    tdm_rc_t v = precv_init_locked(a, req_p);
    tdm_lock_release(&part_lock);
    return v;
}

tdm_rc_t tdm_p2p_part_start(tdm_req_t *r) {
    tdm_lock_acquire(&part_lock);
    tdm_rc_t v = part_start_locked(r);
    tdm_lock_release(&part_lock);
    return v;
}

bool tdm_p2p_part_arrived(const tdm_req_t *r, int i) {
    tdm_lock_acquire(&part_lock);
    bool v = part_arrived_locked(r, i);
    tdm_lock_release(&part_lock);
    return v;
}

void tdm_p2p_part_free(tdm_req_t *r) {
    tdm_lock_acquire(&part_lock);
    part_free_locked(r);
    tdm_lock_release(&part_lock);
}
