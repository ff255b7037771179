/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's core, below every protocol: completing and releasing requests,
 * control packets and the per-peer transmit queues, delivering bytes into a
 * matched receive. Protocols (proto/, part.c) call down into it; it calls no
 * protocol, so the engine's files form no cycle: engine.c (progress, dispatch)
 * -> send.c/recv.c (entry points) -> proto/ -> core.c -> match.c, req.c.
 */
#include "p2p_impl.h"
#include "../base/copy.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(tdm_pkt_cts_cma_t) <= TDM_CTRL_MAX, "cts fits a queued control packet");
_Static_assert(sizeof(tdm_pkt_rtr_t) <= TDM_CTRL_MAX, "rtr fits a queued control packet");
_Static_assert(sizeof(tdm_pkt_pull_t) <= TDM_CTRL_MAX, "pull fits a queued control packet");

/* Wake this process's threads blocked on its doorbell (threaded): a completion or a hook
 * another thread waits for happened here, not in a ring. The fence orders what they wait
 * for before the read of `sleeping`, which they raise before their last look (engine.c). */
void tdm_p2p_wake_threads(void) {
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&tdm_shm_self()->sleeping, memory_order_relaxed))
        tdm_shm_wake(tdm_p2p.rank);
}

/*
 * Completion under MPI_THREAD_MULTIPLE. Three parties may finish a request at once:
 * its completion (here, under its pair lock), MPI_Request_free (tdm_p2p_req_free_user)
 * and an upper layer attaching a hook (tdm_p2p_req_hook). Each sets its bit in `done`
 * with one atomic fetch_or and acts on the bits it finds, so exactly one releases it.
 * The completion's fetch_or is its last access to a request someone waits for, and, a
 * full barrier, orders it before the read of `sleeping` (tdm_p2p_wake_threads' fence is
 * then not needed). A hook's request goes to the hooks list and runs at the end of
 * progress, with no engine lock held (tdm_p2p_hooks_run).
 */
static void complete_threaded(tdm_req_t *req) {
    if (req->inline_hook) {
        /* the engine's own request with an engine hook: runs here, under its pair lock */
        req->done = TDM_REQ_C_DONE;
        req->on_complete(req);
        tdm_p2p_release(req);
        return;
    }
    if (req->owned && pthread_equal(req->owner, pthread_self())) {
        /* a blocking call's own request, completed by the thread that waits for it: no one
         * else sets a bit of it (no hook, free or arming) and its waiter is awake here, so
         * a release store replaces the fetch_or and no wake is due */
        __atomic_store_n(&req->done, TDM_REQ_C_DONE, __ATOMIC_RELEASE);
        return;
    }
    unsigned old = __atomic_fetch_or(&req->done, TDM_REQ_C_DONE, __ATOMIC_SEQ_CST);
    if (old & TDM_REQ_C_ARMED)
        tdm_p2p_async_disarm();
    if (old & TDM_REQ_C_HOOKED) {
        req->hook_next = NULL;
        tdm_lock_acquire(&tdm_p2p.hooks_lock);
        if (tdm_p2p.hooks_tail)
            tdm_p2p.hooks_tail->hook_next = req;
        else
            TDM_STORE_RELAXED(&tdm_p2p.hooks_head, req);
        tdm_p2p.hooks_tail = req;
        tdm_lock_release(&tdm_p2p.hooks_lock);
        return;
    }
    if (old & TDM_REQ_C_FREED) {
        /* freed first: ours to release (a thread that erroneously waits on it too is
         * refused the claim, FREED being set) */
        if (tdm_p2p_req_claim_freed(req))
            tdm_p2p_release(req);
        return;
    }
    if (atomic_load_explicit(&tdm_shm_self()->sleeping, memory_order_seq_cst))
        tdm_shm_wake(tdm_p2p.rank);
}

void tdm_p2p_hooks_run(void) {
    if (!TDM_LOAD_RELAXED(&tdm_p2p.hooks_head))
        return;
    tdm_lock_acquire(&tdm_p2p.hooks_lock);
    tdm_req_t *r = tdm_p2p.hooks_head;
    TDM_STORE_RELAXED(&tdm_p2p.hooks_head, NULL); /* read without the lock above */
    tdm_p2p.hooks_tail = NULL;
    tdm_lock_release(&tdm_p2p.hooks_lock);
    while (r) {
        tdm_req_t *next = r->hook_next;
        if (r->on_complete) /* an upper layer may detach its hook before cancelling */
            r->on_complete(r);
        tdm_p2p_release(r);
        r = next;
    }
    tdm_p2p_wake_threads(); /* a hook moved an upper layer's state another thread may wait on */
}

void tdm_p2p_complete(tdm_req_t *req) {
    if (TDM_UNLIKELY(req->out_counted)) {
        if (--tdm_p2p.rndv_out[req->peer_world] == 0)
            tdm_p2p_adapt_sends_done(req->peer_world);
        req->out_counted = 0;
    }
    if (TDM_UNLIKELY(tdm_threaded)) {
        complete_threaded(req);
        return;
    }
    req->done = 1;
    if (req->on_complete)
        req->on_complete(req);
    /* MPI_Request_free on an active request: nobody will wait for it */
    if (req->user_freed)
        tdm_p2p_release(req);
}

bool tdm_p2p_req_hook(tdm_req_t *req, void (*fn)(tdm_req_t *), void *arg) {
    req->on_complete = fn;
    req->cb_arg = arg;
    if (TDM_LIKELY(!tdm_threaded)) {
        if (req->done) {
            req->on_complete = NULL;
            return false;
        }
        req->user_freed = 1;
        return true;
    }
    unsigned old = __atomic_fetch_or(&req->done, TDM_REQ_C_HOOKED, __ATOMIC_ACQ_REL);
    if (old & TDM_REQ_C_DONE) {
        req->on_complete = NULL; /* completed first: it is the caller's, with no hook */
        return false;
    }
    return true;
}

void tdm_p2p_req_free_user(tdm_req_t *req) {
    if (TDM_LIKELY(!tdm_threaded)) {
        if (req->done)
            tdm_p2p_release(req);
        else
            req->user_freed = 1;
        return;
    }
    /* FREED, and CLAIMED with it when already complete, in one step: a thread waiting on
     * the same request (erroneous, MPI-4.1 11.6.2) that claimed it first releases it */
    unsigned d = __atomic_load_n(&req->done, __ATOMIC_ACQUIRE), want;
    do {
        if (d & TDM_REQ_C_CLAIMED)
            return;
        want = d | TDM_REQ_C_FREED | (d & TDM_REQ_C_DONE ? TDM_REQ_C_CLAIMED : 0);
    } while (!__atomic_compare_exchange_n(&req->done, &d, want, false, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    if (d & TDM_REQ_C_DONE)
        tdm_p2p_release(req);
}

bool tdm_p2p_req_claim_freed(tdm_req_t *req) {
    if (TDM_LIKELY(!tdm_threaded))
        return true;
    unsigned d = __atomic_load_n(&req->done, __ATOMIC_ACQUIRE);
    do {
        if (d & TDM_REQ_C_CLAIMED)
            return false;
    } while (!__atomic_compare_exchange_n(&req->done, &d, d | TDM_REQ_C_CLAIMED, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return true;
}

bool tdm_p2p_req_claim_threaded(tdm_req_t *req, uint32_t id) {
    /* a compare-and-swap, not a fetch_or: a slot released and reused since must not get
     * the bit (its done was cleared, or its id moved on); a freed request is not a
     * waiter's (its completion or the free releases it) */
    unsigned d = __atomic_load_n(&req->done, __ATOMIC_ACQUIRE);
    do {
        if ((d & (TDM_REQ_C_DONE | TDM_REQ_C_CLAIMED | TDM_REQ_C_FREED)) != TDM_REQ_C_DONE ||
            TDM_LOAD_RELAXED(&req->id) != id)
            return false;
    } while (!__atomic_compare_exchange_n(&req->done, &d, d | TDM_REQ_C_CLAIMED, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
    return true;
}

void tdm_p2p_release(tdm_req_t *req) {
    if (req->dt)
        tdm_dtype_release(req->dt);
    tdm_req_free(req);
}

void tdm_p2p_txq_push(int peer, tdm_txitem_t *item) {
    TDM_COUNTER_ADD(&tdm_p2p_stats.ring_full, 1);
    if (tdm_list_empty(&tdm_p2p.txq[peer]))
        TDM_COUNTER_ADD(&tdm_p2p.tx_busy, 1);
    tdm_list_push_back(&tdm_p2p.txq[peer], &item->link);
    /* ask the consumer to ring our doorbell when it frees a cell */
    tdm_net_send_blocked(peer, true);
}

void tdm_p2p_send_ctrl(int peer, const void *pkt, size_t len) {
    if (tdm_list_empty(&tdm_p2p.txq[peer])) {
        if (tdm_net_send_copy(peer, pkt, len, NULL, 0) == 0)
            return;
    }
    tdm_ctrl_t *c = malloc(sizeof(*c));
    if (!c) {
        /* cannot drop a control packet: its peer would wait forever */
        tdm_error(P2P, "out of memory queueing a control packet to rank %d; aborting", peer);
        abort();
    }
    c->tx.is_ctrl = 1;
    c->len = (uint8_t)len;
    memcpy(c->pkt, pkt, len);
    tdm_p2p_txq_push(peer, &c->tx);
}

void tdm_p2p_recv_set_envelope(tdm_req_t *r, int src, int tag, int src_world, size_t size) {
    r->status.source = src;
    r->status.tag = tag;
    r->peer_world = src_world;
    r->msg_size = size;
    if (size > r->bytes) {
        /* MPI: the status reports the truncation; the buffer gets what fits */
        r->status.error = TDM_ERR_TRUNCATE;
        r->status.bytes = r->bytes;
        tdm_debug(P2P, "message of %zu bytes from rank %d tag %d truncated to %zu", size, src, tag,
                  r->bytes);
    } else {
        r->status.bytes = size;
    }
}

/* Copy stream bytes [off, off+len) of the message into the receive buffer,
 * dropping what lies past its end. */
void tdm_p2p_recv_copy(tdm_req_t *r, size_t off, const void *data, size_t len) {
    if (off >= r->bytes)
        return;
    if (len > r->bytes - off)
        len = r->bytes - off;
    tdm_p2p_copy_in(r->buf, r->count, r->dt, off, data, len);
}

void tdm_p2p_recv_cancelled(tdm_req_t *r) {
    tdm_p2p_posted_remove(r);
    r->status.cancelled = 1;
    r->status.bytes = 0;
    tdm_p2p_complete(r);
}

void tdm_p2p_unexp_arrived(tdm_unexp_t *ue) {
    if (ue->claimed) {
        /* a receive (or Mrecv) took it while it was arriving */
        tdm_req_t *r = ue->claimed;
        r->unexp = NULL;
        tdm_p2p_recv_copy(r, 0, ue->data, ue->size);
        tdm_p2p_unexp_free(ue);
        tdm_p2p_complete(r);
    }
}

void tdm_p2p_fill_envelope(tdm_pkt_eager_t *h, uint8_t type, const tdm_req_t *s, size_t bytes) {
    h->type = type;
    h->flags = ((s->mode & ~TDM_MODE_BLOCKING) == TDM_MODE_SYNC) ? TDM_PKTF_SYNC : 0;
    h->mode = s->mode;
    h->pad = 0;
    h->ctx = s->ctx;
    h->src = s->self_rank;
    h->tag = s->tag;
    h->sreq = s->id;
    h->size = bytes;
}

tdm_req_t *tdm_p2p_req_of_packet(uint32_t id, int peer, const char *what) {
    tdm_req_t *r = tdm_req_lookup(id);
    if (!r) {
        tdm_error(P2P, "%s from rank %d names request %#x, which does not exist", what, peer, id);
        abort();
    }
    return r;
}
