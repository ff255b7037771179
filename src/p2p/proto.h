/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rendezvous protocols. The receiver chooses one at match time (select.c) from
 * how the message was sent (recorded in the RTS), how it is received, the copy
 * load of both processes and the size, and names it in the CTS, so both sides
 * agree without extra messages.
 *
 * A protocol is one file in proto/ defining one `tdm_proto_t`. RGET, RPUT and
 * COOP are the same state machine with a different split of the byte range
 * [0, total): the receiver copies [0, split) with process_vm_readv, the sender
 * [split, total) with process_vm_writev (rndv_cma.c). RTR (receiver-initiated)
 * and the two-copy pipeline have their own flows.
 */
#ifndef TDM_P2P_PROTO_H
#define TDM_P2P_PROTO_H

#include "layout.h"
#include "../base/adapt.h"
#include "req.h"
#include "wire.h"

#include <stdint.h>

typedef enum {
#define TDM_PROTO(_id, _sym, _opt) TDM_PROTO_##_id,
#include "proto/registry.def"
#undef TDM_PROTO
    TDM_PROTO_COUNT,
    TDM_PROTO_AUTO = TDM_PROTO_COUNT /* selection setting only */
} tdm_proto_id_t;

#define TDM_CAP_CMA 0x1 /* needs single-copy access to the peer's memory */

/* What the receiver knows of a matched RTS. */
typedef struct tdm_rts_info {
    uint32_t sreq;
    uint8_t mode; /* tdm_send_mode_t | TDM_MODE_BLOCKING */
    int32_t pid;
    tdm_rlayout_t buf;
} tdm_rts_info_t;

typedef struct tdm_proto {
    const char *name; /* e.g. "rndv/coop/cma" */
    unsigned caps;    /* TDM_CAP_*: a protocol whose caps the pair lacks never qualifies */
    /* Split protocols: bytes of `total` the receiver copies (the sender copies the rest). */
    uint64_t (*split)(uint64_t total);
    /* Receiver: a receive matched an RTS and this protocol was chosen. */
    void (*recv_start)(tdm_req_t *r, const tdm_rts_info_t *rts);
    /* Sender: the CTS naming this protocol arrived. */
    void (*send_cts)(tdm_req_t *s, const tdm_pkt_cts_t *cts);
} tdm_proto_t;

extern const tdm_proto_t *const tdm_protos[TDM_PROTO_COUNT];
#define TDM_PROTO(_id, _sym, _opt) extern const tdm_proto_t _sym;
#include "proto/registry.def"
#undef TDM_PROTO

/* Rendezvous state of a request (in req->proto_state). */
typedef struct tdm_rndv {
    tdm_layout_t remote;  /* the peer's buffer (CMA protocols) */
    int32_t pid;          /* the peer's pid */
    uint8_t part_done;    /* my CMA part (or its DATA replacement) is complete */
    uint8_t fin_out;      /* the peer waits for my FIN once my part is done */
    uint8_t peer_part;    /* I wait for the peer's FIN (it copies a part) */
    uint8_t stream_own;   /* send: the current stream replaces my own CMA part */
    uint8_t fin_in;       /* the peer's FIN arrived */
    uint8_t via_data;     /* my part moves as DATA cells instead (fallback) */
    uint8_t load_counted; /* I hold one count in my copies_pending */
    uint8_t rtr;          /* send: writing into an RTR-announced buffer */
    uint8_t announced;    /* recv: an RTR announcement is outstanding */
    uint8_t cancel_asked; /* recv: RTR_CANCEL sent, waiting for the answer */
    uint8_t adapt;        /* recv: an adaptive exchange or one-way message, timed (select.c):
                             size class + 1 */
    uint8_t adapt_oneway; /* recv: `adapt` is a one-way message's (RNDV_ADAPTIVE_MAX) */
    uint64_t cur, hi;     /* my CMA range: next byte, end */
    uint64_t total;       /* bytes that move: min(message, receive buffer) */
    uint64_t expect_data; /* recv: bytes that come as DATA cells */
    uint64_t got_data;
    uint64_t stream_off; /* send: DATA cells still to write, [stream_off, stream_end) */
    uint64_t stream_end;
    uint64_t own_off; /* send: my own remainder waiting behind the current stream */
    uint64_t own_end;
    uint64_t pull_off; /* send: a PULLed range waiting behind the current stream */
    uint64_t pull_end;
    uint64_t t0; /* recv, adaptive exchange: when it was matched (ns) */
} tdm_rndv_t;
_Static_assert(sizeof(tdm_rndv_t) <= sizeof(((tdm_req_t *)0)->proto_state),
               "rendezvous state fits the request's protocol area");

static inline tdm_rndv_t *tdm_rndv(tdm_req_t *req) {
    return (tdm_rndv_t *)(void *)req->proto_state;
}

/* Count (+1) or uncount (-1) a copy this process owes in the node-shared
 * copies_pending table that COOP-load reads (rndv_cma.c). */
void tdm_rndv_load_add(int world_rank, int64_t delta);

/* select.c */
/* Per peer: RTR announcements made to it and how many it used (decayed). */
typedef struct tdm_rtr_history {
    uint32_t sent, used, skipped;
} tdm_rtr_history_t;

typedef struct tdm_select_in {
    uint8_t send_mode; /* tdm_send_mode_t | TDM_MODE_BLOCKING */
    int recv_blocking;
    int consume_far; /* the receiver combines the data at once (TDM_MODE_CONSUMES) and the
                        pair's adaptive eager range prefers CMA (tdm_p2p_range_cma) */
    uint64_t size;
    int cma;                      /* the pair may use CMA and both buffers are describable */
    int64_t load_send, load_recv; /* copies pending at each side */
    int exchange;       /* the receiver has rendezvous sends of its own to the sender in flight */
    int sender_stalled; /* the sender is not running: neither polling lately nor blocked in a
                           wait (shm.h `beat`, TANDEM_PEER_STALL_US); a protocol that needs its
                           copy or its stream would wait for the scheduler */
} tdm_select_in_t;

tdm_proto_id_t tdm_p2p_select(const tdm_select_in_t *in);
/* A send found a usable RTR announcement (the receive was posted first, as an
 * Irecv): may the sender write into it? Only `send_mode`, `load_send` and
 * `load_recv` of `in` are read. */
bool tdm_p2p_select_rtr(const tdm_select_in_t *in);
/* May an Irecv be announced to its sender (RTR)? Decides from the peer's
 * history and updates it. Announcements cost both sides a packet; a sender that
 * keeps choosing the RTS path (Isend x Irecv under COOP-load) lets them go
 * stale, so after 16 announcements of which fewer than a quarter were used, only
 * one Irecv in 16 is announced, as a probe, until the peer uses them again. */
bool tdm_p2p_select_announce(tdm_rtr_history_t *h);
/* Adaptive exchanges. Whether the two-copy pipeline beats a CMA read for an
 * exchange depends on where the host puts the two processes: through a shared
 * cache the ring's copies are cheap, across caches they cost twice a CMA read
 * (select.c has the figures). So for an exchange between
 * TANDEM_EXCHANGE_PIPELINE_MAX and TANDEM_EXCHANGE_ADAPTIVE_MAX bytes the
 * receiver keeps, per peer and power-of-two size class, what each way cost it
 * lately (ns per KiB from match to completion), takes the cheaper and looks at
 * the other now and then, the more rarely the further apart the two costs
 * (tdm_p2p_adapt_period). A pipeline exchange is cheap only when both sides
 * stream at once (while one side reads by CMA, the other's cells wait), so the
 * pair must agree: the lower rank decides, times and publishes its choice in
 * the pair's shared slot; the higher rank follows. The first exchanges after a
 * change of way are not timed: the peer may still be on the old way, and the
 * pipeline runs cold until it has cycled its ring once. */
/* An adaptive receive completed (rndv_cma.c): record its time, from match to
 * the completion of the receive and of my rendezvous send to the peer,
 * whichever is later: an exchange is over only when both are. Timing the
 * receive alone, the pipeline looked as fast as RGET at 1-4 MiB on a host
 * where it made 2-rank Allgather 4 MiB 586 -> 657 us and Alltoall 748 -> 819
 * (medians of 12 interleaved runs; Open MPI 597, 742). */
void tdm_p2p_adapt_done(tdm_req_t *r);
/* Adaptive one-way rendezvous. A message that is not part of an exchange
 * gains from the pipeline too when the two processes share a cache: the
 * sender's copy into a cell and the receiver's copy out of the one before run
 * at once, in cache, with no page pinning, where COOP's two halves each pin
 * their pages and RGET's one copy does it all. Across caches the pipeline
 * costs two to three times a CMA copy. So for a message larger than the eager
 * limit and at most TANDEM_RNDV_ADAPTIVE_MAX bytes whose send and receive are
 * both blocking calls (both processes then progress it to the end; a
 * non-blocking side may be computing, and a pipeline would wait for it where
 * CMA would not), the receiver keeps a tdm_adapt_cell_t per sender and size
 * class, times each message from match to completion, and takes the CMA
 * protocol the table chose or the pipeline, whichever was cheaper lately.
 * Not when the pair's adaptive eager range goes by rendezvous
 * (tdm_p2p_range_cma: the cores share no cache), where the pipeline only
 * loses and its looks cost: 2-rank Reduce with the CPUs far, 64 KiB 13.6 ->
 * 15.1 us and 256 KiB 38.1 -> 46.0 with them, 14.3 -> 14.2 and 43.0 -> 41.9
 * without (12-14 interleaved runs split by the host probe).
 * Only the receiver decides: the sender of a rendezvous follows the
 * receiver's answer to its RTS whichever protocol it names. */
/* My last rendezvous send to `peer` completed (engine.c). */
void tdm_p2p_adapt_sends_done(int peer);
/* Adaptive eager range (on by default, from 8 KiB). Between TANDEM_EAGER_ADAPTIVE_MIN and
 * the eager limit (8-16 KiB with 8k) the ring wins while the two processes share a cache
 * and loses twice over across caches (16 KiB ping-pong, CPUs far apart: 7.5 us
 * eager, 3.9 by rendezvous; near: 1.9 and 2.5). So the sender stamps such a
 * message with its clock (the cell prefix's spare word); the receiver, when
 * its receive was posted before the message came, times stamp to completion
 * per sender and size class, keeps the cheaper way as tdm_adapt_cell_t does
 * for exchanges, and publishes it in the pair's slot (eager_rndv); the sender
 * follows. A stamp is the low 32 bits of CLOCK_MONOTONIC in ns, never 0.
 * First kept off: 2-rank, medians of 6-12 interleaved runs, 8k against off (Open MPI):
 * ping-pong far 10/12/16 KiB 3.1/4.1/4.4 us against 4.9/6.6/8.0 (3.1/3.0/3.3),
 * but near 1.65/1.81/2.09 against 1.27/1.64/1.95 (2.8-3.2), and near Bcast
 * 12 KiB 2.85 against 1.88 (2.89), Reduce 12 KiB 3.39 against 1.92 (3.13):
 * with the CPUs near, 5-40% of the messages still went by rendezvous. The
 * cause: an eager message after a stretch of rendezvous ones writes ring cells
 * whose lines are no longer the sender's; its copy of 8 KiB into a cell took
 * 4.2 us against 0.58 when all go eager, so every look at eager timed that.
 * Now a change to eager leaves the first two ring cycles' worth of messages
 * untimed (tdm_p2p_eager_adapt_done): near, 12 KiB Bcast 1.98 us against 1.81
 * off, Reduce 2.03 against 1.89, Allreduce 2.36 against 2.20, ping-pong 1.77
 * against 1.64 (12 interleaved runs; Open MPI 2.8-6.0); one cycle's worth gave
 * 2.11, 2.23, 2.40. Far, ping-pong 12 KiB 4.42 against 6.23 off and 16 KiB
 * 4.24 against 7.25 (7-8 runs; Open MPI 3.70, 4.02). It was on by default for
 * one commit (22f94d7), then off, since a message below the eager limit sent
 * by rendezvous waited for its receive, and programs that count on eager
 * buffering (erroneous, but common) hung now and then: pt2pt/eager_align's
 * Isend + Waitall before the receiver's Barrier, 2 hangs in 20 under load.
 * Now such an RTS carries TDM_PKTF_PULL and a receiver with no receive posted
 * reads the message at once into an unexpected entry (tdm_rndv_pull_unexp):
 * 0 hangs in 40 under load, and on by default again. */
uint32_t tdm_p2p_stamp(void);
/* Sender: 0 outside the range (or when it does not apply: a datatype whose
 * buffer a peer cannot address), else the stamp for the message; *rndv: go by
 * rendezvous. */
uint32_t tdm_p2p_eager_adaptive(int peer, size_t bytes, const tdm_dtype_t *dt, bool *rndv);
/* Receiver, an RTS stamped `stamp` matched now: the stamp to keep, moved back
 * by the RTS's travel time. A rendezvous send completes only when the FIN
 * gets back, one control message after the receive completed, and the
 * receiver cannot see that: it counts the RTS's travel once more instead.
 * Without it, ping-pong of 12 KiB with the CPUs near each other went by
 * rendezvous for 25-80% of the messages, and took 2.0-2.2 us against 1.6 eager. */
uint32_t tdm_p2p_rndv_stamp(uint32_t stamp);
/* Receiver: when a message stamped `stamp` (low 32 bits of the clock, in ns)
 * could start to cost: its stamp, or `prev_done`, the completion of the
 * previous timed one from that sender (0: none), if that is later. In a stream
 * the receiver could not have started on it before, and its wait behind the
 * others is not its way's cost: a window of 16 KiB messages with the CPUs far
 * timed from the send alone went eager 88% of the time, 2.7 GB/s against 5.6
 * by rendezvous. */
uint32_t tdm_p2p_adapt_start(uint32_t stamp, uint32_t prev_done);
/* Sender `me`, about to send the range to `peer`, whose last timed message of
 * the range reached me at `last_done` (0: none): true when my sends follow my
 * own timing of the peer's messages rather than the peer's timing of mine (I
 * am the lower rank of a pair that sent both ways within the last 200 us), so
 * that the pair's two ways turn together (select.c has the figures). */
bool tdm_p2p_range_paired(int me, int peer, uint32_t now, uint32_t last_done);
/* The adaptive eager range between me and `peer` sends some size class by
 * rendezvous, either way (or the test hook sends it all so): its receivers
 * timed a CMA read faster than the ring, as they do when the two cores share
 * no cache. A reduction's receive then reads its data itself (RGET) rather
 * than have the sender's core write half of it (COOP); figures in select.c. */
bool tdm_p2p_range_cma(int peer);
/* Receiver: a stamped receive completed, `rndv`: it came by rendezvous. */
void tdm_p2p_eager_adapt_done(tdm_req_t *r, bool rndv);
void tdm_p2p_select_fini(void);
/* The protocol chosen by TANDEM_RNDV_PROTOCOL (TDM_PROTO_AUTO when "auto"). */
tdm_proto_id_t tdm_p2p_select_forced(void);
int tdm_p2p_select_init(void);
/* The eager limit the tunables give (EAGER_LIMIT, or when ranks outnumber cores
 * EAGER_LIMIT_OVERSUBSCRIBED unless EAGER_LIMIT was set). */
size_t tdm_p2p_eager_limit_param(bool oversubscribed);
/* The CMA copy piece the tunables give (COPY_CHUNK, or when ranks outnumber
 * cores COPY_CHUNK_OVERSUBSCRIBED unless COPY_CHUNK was set), at least 4 KiB. */
size_t tdm_p2p_copy_chunk_param(bool oversubscribed);
/* Print the decision table (sizes x call types) to f. */
void tdm_p2p_select_print(void *f);
const char *tdm_proto_name(tdm_proto_id_t id);

/* Counters, kept by plain increments; pvars.def declares each one as a
 * performance variable (MPI_T) and TANDEM_PROTO_STATS=1 prints them through
 * the same declarations. Adaptive choices are kept per size class
 * (tdm_p2p_adapt_class) and way. */
enum { TDM_ADAPT_XCHG, TDM_ADAPT_ONEWAY, TDM_ADAPT_EAGER, TDM_ADAPT_KINDS };
typedef struct tdm_p2p_stats {
    uint64_t eager_msgs, eager_bytes;      /* every eager send, short ones included */
    uint64_t sent_at_once;                 /* eager sends that left with no request */
    uint64_t short_msgs, short_bytes;      /* eager sends in one cache line (EAGER_SHORT) */
    uint64_t received_at_once;             /* receives of an arrived message, with no request */
    uint64_t proto_msgs[TDM_PROTO_COUNT];  /* rendezvous, by the side that chose the protocol */
    uint64_t proto_bytes[TDM_PROTO_COUNT]; /* their sizes */
    uint64_t bytes_read;                   /* copied by this rank with process_vm_readv */
    uint64_t bytes_written;                /* copied by this rank with process_vm_writev */
    uint64_t copies;                       /* CMA copy parts performed by this rank */
    uint64_t cma_fallbacks; /* rendezvous switched to DATA cells after a CMA failure */
    uint64_t rtr_announced, rtr_used;
    /* adaptive choices made, [kind][way][size class]: an exchange (0 RGET, 1 the
     * pipeline), a one-way rendezvous (0 CMA, 1 the pipeline), the eager range as
     * sent (0 eager, 1 rendezvous); and looks at the way not taken, [kind][class] */
    uint64_t adapt[TDM_ADAPT_KINDS][2][TDM_ADAPT_CLASSES];
    uint64_t adapt_looks[TDM_ADAPT_KINDS][TDM_ADAPT_CLASSES];
    uint64_t adapt_pulled; /* the eager range's rendezvous messages that came unexpected */
    /* queues (match.c): lengths, their watermarks, bytes the unexpected ones hold */
    uint64_t posted_len, posted_high;
    uint64_t unexp_len, unexp_high, unexp_low;
    uint64_t unexp_bytes, unexp_bytes_high;
    double match_time; /* seconds matching, kept while match_timing is non-zero */
    unsigned match_timing;
    uint64_t ring_full;    /* sends and control packets that waited for ring space */
    uint64_t stalled_rget; /* rendezvous read alone since their sender was not running */
    uint64_t wait_yields, wait_blocks; /* sched_yield calls and doorbell blocks of waits */
} tdm_p2p_stats_t;
extern tdm_p2p_stats_t tdm_p2p_stats;
void tdm_p2p_stats_print(void);
/* Indices into tdm_p2p_pvars (p2p.h), one per line of pvars.def. */
enum {
#define TDM_PVAR(_id, ...) TDM_P2P_PV_##_id,
#include "pvars.def"
#undef TDM_PVAR
    TDM_P2P_PV_COUNT
};

/* rndv_cma.c: the machinery shared by the protocols */
void tdm_rndv_split_recv_start(tdm_req_t *r, const tdm_rts_info_t *rts, const tdm_proto_t *p);
void tdm_rndv_split_send_cts(tdm_req_t *s, const tdm_pkt_cts_t *cts);
void tdm_rndv_on_fin(tdm_req_t *req);
void tdm_rndv_on_pull(tdm_req_t *s, const tdm_pkt_pull_t *pull);
void tdm_rndv_on_data(tdm_req_t *r, const tdm_pkt_data_t *d);
/* An RTS flagged TDM_PKTF_PULL that came unexpected: read the message into the
 * unexpected entry's buffer now and send FIN, so that the send completes as an
 * eager one would. If the read fails (CMA is then off for the pair), the sender
 * moves the message as DATA cells into the entry, which holds it once
 * ue->received reaches ue->size. */
void tdm_rndv_pull_unexp(int peer, int pid, const tdm_rlayout_t *buf, uint32_t sreq,
                         tdm_unexp_t *ue);
/* Copy queue: one chunk of one pending CMA part per call; events done. */
int tdm_rndv_copy_progress(void);
/* Sender: write DATA cells of the stream range; true when none are left. */
bool tdm_rndv_stream_push(tdm_req_t *s);
/* Complete the request if every part of it is done. */
void tdm_rndv_try_complete(tdm_req_t *req);

/* rndv_rtr.c */
void tdm_rtr_maybe_announce(tdm_req_t *r);
/* Sender: use an announcement for this send if one is valid; true if used. */
bool tdm_rtr_try_send(tdm_req_t *s);
void tdm_rtr_on_announce(int peer, const tdm_pkt_rtr_t *a);
void tdm_rtr_on_fin(int peer, const tdm_pkt_rtr_fin_t *f);
void tdm_rtr_on_cancel(int peer, const tdm_pkt_rtr_cancel_t *c);
void tdm_rtr_on_cancel_ack(int peer, const tdm_pkt_rtr_cancel_t *c);
bool tdm_rtr_push(tdm_req_t *s); /* txq stage: copy, then RTR_FIN */
bool tdm_rtr_cancel(tdm_req_t *r);
void tdm_rtr_fini(void);

#endif
