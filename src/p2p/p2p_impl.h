/* SPDX-License-Identifier: BSD-3-Clause */
/* State shared by the files of the engine; not for other layers. */
#ifndef TDM_P2P_IMPL_H
#define TDM_P2P_IMPL_H

#include "p2p.h"
#include "adapt.h"
#include "proto.h"
#include "select.h"
#include "stats.h"
#include "../base/copy.h"
#include "../base/event.h"
#include "../base/lock.h"
#include "../base/log.h"
#include "../base/pvar.h"
#include "../net/net.h"

#include <signal.h>

/* A message that arrived before its receive was posted (or was taken by
 * MPI_Mprobe). Eager messages carry their data here; an RTS carries none. */
/* Bytes of an unexpected eager message kept inside its entry. */
#define TDM_UNEXP_INLINE 256

struct tdm_unexp {
    tdm_list_t link;
    uint32_t ctx;
    int src; /* rank in the communicator */
    int tag;
    int src_world;
    uint8_t type;  /* TDM_PKT_EAGER or TDM_PKT_RTS */
    uint8_t flags; /* TDM_PKTF_* */
    uint8_t mode;
    uint32_t sreq;   /* sender's request id */
    size_t size;     /* message size */
    size_t received; /* eager bytes arrived so far */
    unsigned char *data;
    tdm_req_t *claimed;   /* receive matched while the data was still arriving */
    tdm_req_t *self_sreq; /* self-send waiting for its match (synchronous mode) */
    int32_t pid;          /* RTS: the sender's pid and buffer */
    tdm_rlayout_t rbuf;
    uint64_t raddr;   /* RTS with TDM_PKTF_RDMA: the sender's address; its key is kept;
                         with TDM_PKTF_DATA: the attached message's handle */
    uint16_t key_len; /* in inline_data (an RTS has no data) */
    size_t held;      /* bytes of data counted in the queue's unexp_bytes while it is queued */
    struct tdm_unexp *next_free;
    /* the data of a small eager message: no malloc for it */
    _Alignas(16) unsigned char inline_data[TDM_UNEXP_INLINE];
};

_Static_assert(TDM_RDMA_KEY_MAX <= TDM_UNEXP_INLINE, "an unexpected RTS keeps its key inline");

/* Where the continuation fragments from a peer go (eager messages span cells). */
typedef struct tdm_rx_cursor {
    tdm_req_t *req;
    tdm_unexp_t *ue;
    tdm_rtr_history_t rtr; /* how the peer used this process's RTR announcements */
} tdm_rx_cursor_t;

#define TDM_TXLOG 16
typedef struct tdm_txlog_ent {
    uint32_t ctx;
    int32_t tag;
} tdm_txlog_ent_t;

/*
 * Locking (MPI_THREAD_MULTIPLE; every lock is a no-op otherwise, base/lock.h).
 * - peers[p].lock, the pair's lock: both ends of the rings with p (tdm_shm.port[p]: tx_head,
 *   rx_tail), txq[p], rx[p], tx_count[p], txlog[p], rx_count[p], rndv_out[p], rtrq[p],
 *   the adaptive cells of p (adapt.c), and every request with p: a send from its start,
 *   a receive from its match (its protocol state, stage, offsets). Every packet handler
 *   of p runs under it. Progress takes it with a try and skips a pair another thread
 *   holds (that thread is draining or writing it), so threads talking to different
 *   peers never wait for each other.
 * - match[b].lock, a matching bucket's lock: the posted and unexpected queues of the
 *   contexts that hash to b (a communicator's two contexts share one). Matching order
 *   is per context, so ANY_SOURCE and ANY_TAG keep MPI's order; threads on different
 *   communicators meet only when their contexts hash alike. An unexpected message's
 *   arrival state (received, claimed, data) is its sender's pair lock's.
 * - copy_lock: the copy queue and the RDMA completions (the requests in them are their
 *   pair's); hooks_lock: the
 *   completed requests whose upper-layer hooks wait to run; alloc (req.c), the
 *   unexpected-entry cache (match.c), bsend.c's and part.c's locks: their own state.
 * Order: part.c's lock, then a pair lock, then a bucket lock, then any of the last group;
 *   never two pair locks or two buckets at once. A receive that matches an unexpected message takes
 * it out of the queue under the bucket, drops the bucket, then takes the sender's pair. Upper-layer
 * hooks (on_complete) and partitioned packets run with no engine lock held (collected, then run at
 * the end of progress); see tdm_p2p_complete. Counters (tdm_p2p_stats, tx_busy, waiting) are
 * TDM_COUNTER_* (atomic when threaded). Set at init only: rank, size, oversubscribed, eager_limit,
 * the waiting settings.
 */
#define TDM_MATCH_BUCKETS 64

typedef struct tdm_p2p_peer {
    tdm_lock_t lock;
} __attribute__((aligned(TDM_CACHELINE))) tdm_p2p_peer_t;

typedef struct tdm_p2p_bucket {
    tdm_lock_t lock;
    tdm_list_t posted; /* receives in posting order */
    tdm_list_t unexp;  /* unexpected messages in arrival order */
} __attribute__((aligned(TDM_CACHELINE))) tdm_p2p_bucket_t;

typedef struct tdm_p2p_state {
    int rank, size;
    int oversubscribed;
    size_t eager_limit;
    size_t eager_limit_remote;     /* toward ranks of other nodes */
    long spins, yields, block_us;  /* waiting: see tdm_p2p_wait_until */
    uint32_t stall_units;          /* PEER_STALL_US in units of the shm clock; 0: never */
    uint32_t spin_units;           /* WAIT_SPIN_US in units of the shm clock (ranks <= cores) */
    uint32_t spin_contended_units; /* WAIT_SPIN_CONTENDED_US, the same units */
    uint32_t contended_until;      /* shm clock: waits spin that little until then (relaxed) */
    uint32_t contended_len;        /* the last contended period's length (relaxed) */
    tdm_p2p_bucket_t match[TDM_MATCH_BUCKETS];
    tdm_p2p_peer_t *peers; /* per peer: the pair's lock */
    tdm_list_t *txq;       /* per peer: items waiting for ring space, in order */
    int tx_busy;           /* number of peers with a non-empty txq (a counter) */
    tdm_rx_cursor_t *rx;
    tdm_lock_t copy_lock;
    tdm_list_t copyq; /* requests with a CMA part to copy, served a chunk at a time */
    int copy_len;     /* requests in copyq (read without the lock: is there work?) */
    size_t copy_chunk;
    tdm_list_t rdmaq;       /* requests whose get, put or flush completed (copy_lock; copy_link) */
    int rdma_len;           /* requests in rdmaq (read without the lock) */
    uint32_t *tx_count;     /* per peer: envelope packets sent (EAGER, RTS, RTR_FIN) */
    tdm_txlog_ent_t *txlog; /* per peer, TDM_TXLOG entries: the (ctx, tag) of the last
                               envelopes sent, at index tx_count % TDM_TXLOG (RTR rule) */
    uint32_t *rx_count;     /* per peer: envelope packets taken from its ring */
    uint32_t *rndv_out;     /* per peer: my rendezvous sends to it not yet complete (select.c
                               reads it: an exchange, when the peer sends me one meanwhile) */
    tdm_list_t *rtrq;       /* per peer: RTR announcements received, oldest first */
    tdm_lock_t hooks_lock;
    tdm_req_t *hooks_head, *hooks_tail; /* completed, their hooks to run (threaded) */
    int waiting;    /* threads inside tdm_p2p_wait_until (what the dump says of the rank) */
    int finalizing; /* inside tdm_p2p_barrier (MPI_Finalize) */
} tdm_p2p_state_t;

extern tdm_p2p_state_t tdm_p2p;

/* The progress thread (async.c). `tdm_p2p_async_on` is set before it starts, never
 * cleared. A non-blocking request left incomplete by its start call is armed (counted
 * until it completes, TDM_REQ_C_ARMED); complete_threaded disarms it. Progress and the
 * end of a wait tell the thread of work that no peer will ring for. */
extern bool tdm_p2p_async_on;
void tdm_p2p_async_arm(tdm_req_t *req);
void tdm_p2p_async_disarm(void);
void tdm_p2p_async_after_progress(void);
void tdm_p2p_async_wait_begin(void);
void tdm_p2p_async_wait_end(void);
/* The calling thread is the progress thread. */
bool tdm_p2p_async_self(void);

/* An envelope packet (EAGER, RTS, RTR_FIN) toward `peer` was written: count it
 * and remember its matching key for the RTR ordering rule (rndv_rtr.c). */
static inline void tdm_p2p_tx_envelope(int peer, uint32_t ctx, int32_t tag) {
    uint32_t n = tdm_p2p.tx_count[peer]++;
    tdm_txlog_ent_t *e = &tdm_p2p.txlog[(size_t)peer * TDM_TXLOG + (n % TDM_TXLOG)];
    e->ctx = ctx;
    e->tag = tag;
}

/* The matching bucket of a context (a communicator's ctx and ctx + 1 share one). */
static inline tdm_p2p_bucket_t *tdm_p2p_bucket(uint32_t ctx) {
    return &tdm_p2p.match[(ctx >> 1) & (TDM_MATCH_BUCKETS - 1)];
}

/* A queue length and its watermark, from several threads at once when threaded (the owner
 * of the lock bias alone: relaxed loads and stores, as no other thread writes them). */
static inline void tdm_p2p_level_up(uint64_t *level, uint64_t *high, uint64_t by) {
    if (TDM_LIKELY(!tdm_threaded)) {
        tdm_pvar_level_up(level, high, by);
        return;
    }
    if (tdm_bias_enter_()) {
        uint64_t v = __atomic_load_n(level, __ATOMIC_RELAXED) + by;
        __atomic_store_n(level, v, __ATOMIC_RELAXED);
        if (v > __atomic_load_n(high, __ATOMIC_RELAXED))
            __atomic_store_n(high, v, __ATOMIC_RELAXED);
        tdm_bias_exit_();
        return;
    }
    uint64_t v = __atomic_add_fetch(level, by, __ATOMIC_RELAXED);
    uint64_t h = __atomic_load_n(high, __ATOMIC_RELAXED);
    while (v > h &&
           !__atomic_compare_exchange_n(high, &h, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}
static inline void tdm_p2p_level_down(uint64_t *level, uint64_t *low, uint64_t by) {
    if (TDM_LIKELY(!tdm_threaded)) {
        tdm_pvar_level_down(level, low, by);
        return;
    }
    if (tdm_bias_enter_()) {
        uint64_t v = __atomic_load_n(level, __ATOMIC_RELAXED) - by;
        __atomic_store_n(level, v, __ATOMIC_RELAXED);
        if (v < __atomic_load_n(low, __ATOMIC_RELAXED))
            __atomic_store_n(low, v, __ATOMIC_RELAXED);
        tdm_bias_exit_();
        return;
    }
    uint64_t v = __atomic_sub_fetch(level, by, __ATOMIC_RELAXED);
    uint64_t l = __atomic_load_n(low, __ATOMIC_RELAXED);
    while (v < l &&
           !__atomic_compare_exchange_n(low, &l, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* The posted and unexpected queues: every entry in or out goes through these (under the
 * bucket's lock), which keep the queues' pvars (lengths, watermarks, bytes held) and
 * raise the unexpected queue's events. */
static inline void tdm_p2p_posted_push(tdm_req_t *r) {
    tdm_list_push_back(&tdm_p2p_bucket(r->ctx)->posted, &r->link);
    tdm_p2p_level_up(&tdm_p2p_stats.posted_len, &tdm_p2p_stats.posted_high, 1);
}
static inline void tdm_p2p_posted_remove(tdm_req_t *r) {
    tdm_list_remove(&r->link);
    TDM_COUNTER_SUB(&tdm_p2p_stats.posted_len, 1);
}
static inline void tdm_p2p_unexp_push(tdm_unexp_t *ue) {
    tdm_list_push_back(&tdm_p2p_bucket(ue->ctx)->unexp, &ue->link);
    tdm_p2p_level_up(&tdm_p2p_stats.unexp_len, &tdm_p2p_stats.unexp_high, 1);
    ue->held = ue->data ? ue->size : 0;
    tdm_p2p_level_up(&tdm_p2p_stats.unexp_bytes, &tdm_p2p_stats.unexp_bytes_high, ue->held);
    TDM_EVENT_RAISE(UNEXP_ENQUEUED, ue->src_world, ue->tag, (int64_t)ue->size,
                    (int64_t)TDM_COUNTER_READ(&tdm_p2p_stats.unexp_len));
}
static inline void tdm_p2p_unexp_remove(tdm_unexp_t *ue) {
    tdm_list_remove(&ue->link);
    tdm_p2p_level_down(&tdm_p2p_stats.unexp_len, &tdm_p2p_stats.unexp_low, 1);
    TDM_COUNTER_SUB(&tdm_p2p_stats.unexp_bytes, ue->held);
    TDM_EVENT_RAISE(UNEXP_DEQUEUED, ue->src_world, ue->tag, (int64_t)ue->size,
                    (int64_t)TDM_COUNTER_READ(&tdm_p2p_stats.unexp_len));
}

/* The pair lock of `peer` (see Locking above). */
static inline void tdm_p2p_peer_lock(int peer) {
    tdm_lock_acquire(&tdm_p2p.peers[peer].lock);
}
static inline void tdm_p2p_peer_unlock(int peer) {
    tdm_lock_release(&tdm_p2p.peers[peer].lock);
}

/* match.c */
tdm_req_t *tdm_p2p_match_posted(uint32_t ctx, int src, int tag);
tdm_unexp_t *tdm_p2p_match_unexp(uint32_t ctx, int src, int tag);
/* An unexpected-message entry; with `data` set, room for `size` bytes of it in
 * ue->data. NULL when out of memory. */
tdm_unexp_t *tdm_p2p_unexp_new(uint32_t ctx, int src, int tag, size_t size, bool data);
void tdm_p2p_unexp_free(tdm_unexp_t *ue);
/* Free the entries kept for reuse (finalize). */
void tdm_p2p_unexp_cache_fini(void);

/* ---- core.c: below every protocol ---- */

/* Control packets are at most this long (CTS and RTR carry a buffer layout). */
#define TDM_CTRL_MAX 232 /* an RDMA CTS with its key (wire.h); `len` is a byte */
_Static_assert(sizeof(tdm_pkt_cts_rdma_t) + TDM_RDMA_KEY_MAX <= TDM_CTRL_MAX,
               "an rdma cts fits a queued control packet");

/* A control packet waiting in a peer's transmit queue for ring space. */
typedef struct tdm_ctrl {
    tdm_txitem_t tx;
    uint8_t len;
    unsigned char pkt[TDM_CTRL_MAX];
} tdm_ctrl_t;

/* Send a small control packet to peer, queueing it if the ring is full. */
void tdm_p2p_send_ctrl(int peer, const void *pkt, size_t len);
void tdm_p2p_txq_push(int peer, tdm_txitem_t *item);
/* The envelope of an EAGER or RTS packet from send request s. */
void tdm_p2p_fill_envelope(tdm_pkt_eager_t *h, uint8_t type, const tdm_req_t *s, size_t bytes);
/* A receive matched a message of `size` bytes: its status (truncation too). */
void tdm_p2p_recv_set_envelope(tdm_req_t *r, int src, int tag, int src_world, size_t size);
/* Copy stream bytes [off, off+len) of the message into the receive buffer,
 * dropping what lies past its end. */
void tdm_p2p_recv_copy(tdm_req_t *r, size_t off, const void *data, size_t len);
/* The request a packet from peer names; a stale or unknown id aborts (a peer
 * that names a request it does not have is broken). */
tdm_req_t *tdm_p2p_req_of_packet(uint32_t id, int peer, const char *what);
/* Threaded: wake this process's threads blocked on the doorbell. */
void tdm_p2p_wake_threads(void);
/* Threaded: run the hooks of requests completed meanwhile (no engine lock held). */
void tdm_p2p_hooks_run(void);
/* A posted receive leaves the queue and completes as cancelled. */
void tdm_p2p_recv_cancelled(tdm_req_t *r);
/* The last byte of an unexpected message is in (ue->received == ue->size): a
 * receive that claimed it while it was arriving completes. */
void tdm_p2p_unexp_arrived(tdm_unexp_t *ue);

static inline void tdm_p2p_copy_in(void *buf, size_t count, tdm_dtype_t *dt, size_t off,
                                   const void *data, size_t len) {
    if (dt->contig)
        tdm_copy((char *)buf + dt->true_lb + off, data, len);
    else
        tdm_dtype_unpack(buf, count, dt, off, data, len);
}

/* ---- the protocols (proto/, part.c): packet handlers are registry.def's ---- */

#define TDM_PKT(_name, _wire, _handler) void _handler(int peer, const void *body);
#include "proto/registry.def"
#undef TDM_PKT

/* recv.c: a receive matched an unexpected message (from the queue or Mprobe) */
void tdm_p2p_recv_matched_unexp(tdm_req_t *r, tdm_unexp_t *ue);

/* dump.c: a dump asked for on another thread than the MPI one (printed when idle) */
extern volatile sig_atomic_t tdm_p2p_dump_pending;
void tdm_p2p_dump_deferred(void);
/* dump.c: "<done> of <total> bytes", for the protocols' `show` (signal-safe) */
void tdm_p2p_dump_range(struct tdm_sfmt *f, uint64_t done, uint64_t total);

/* engine.c: one packet from peer, by its type (registry.def) */
void tdm_p2p_handle_packet(int peer, const void *body);

/* send.c: write as much of a send as the ring takes; true when nothing is left */
bool tdm_p2p_send_push(tdm_req_t *s);

/* part.c: the announcements nobody matched (finalize) */
void tdm_p2p_part_fini(void);
/* part.c: threaded, the PART packets kept by their handler, handled under part.c's lock
 * (called at the end of progress, with no engine lock held) */
void tdm_p2p_part_deferred_run(void);

/* proto/rndv_cma.c: a receive matched an RTS; choose (select.c) and start a protocol */
void tdm_p2p_rndv_matched(tdm_req_t *r, const tdm_rts_info_t *rts);

#endif
