/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protocol selection: every choice of how a message moves, as functions of
 * their inputs (select.c; the golden tables print them). The rules, as a table:
 * docs/architecture.md ("Selection"); the measurements behind them:
 * docs/performance.md ("Why the code is as it is").
 *
 * Owner: the settings here are written at start-up and by tdm_p2p_reconfigure
 * (MPI_T writes), on the thread that progresses the engine.
 */
#ifndef TDM_P2P_SELECT_H
#define TDM_P2P_SELECT_H

#include "proto.h"
#include "../net/net.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per peer: RTR announcements made to it and how many it used (decayed). */
typedef struct tdm_rtr_history {
    uint32_t sent, used, skipped;
} tdm_rtr_history_t;

/* What the receiver knows when a receive matches an RTS. */
typedef struct tdm_select_in {
    uint8_t send_mode; /* tdm_send_mode_t | TDM_MODE_BLOCKING */
    int recv_blocking;
    int consume_far; /* the receiver combines the data at once (TDM_MODE_CONSUMES) and the
                        pair's eager range prefers CMA (tdm_p2p_range_cma) */
    uint64_t size;
    int cma;                      /* the pair may use CMA and both buffers are describable */
    int64_t load_send, load_recv; /* copies pending at each side */
    int exchange;       /* the receiver has rendezvous sends of its own to the sender in flight */
    int one_out;        /* ... exactly one of them (adaptive exchanges) */
    int range_cma;      /* the pair's eager range goes by rendezvous (tdm_p2p_range_cma) */
    int sender_stalled; /* the sender is not running: neither polling lately nor blocked in a
                           wait (shm.h `beat`, TANDEM_PEER_STALL_US) */
    /* The progress thread runs (TANDEM_ASYNC_PROGRESS) and a side is non-blocking: the
     * message may move while an application computes outside the library. */
    int async;
    /* (async) that side's application is in the library: a blocking call, or a thread
     * of it in a wait (the receiver's tdm_p2p.waiting, the sender's shm.h `app_waiting`) */
    int send_idle, recv_idle;
    /* The node dimension: the sender is on another node (no CMA, no shared load words);
     * it may be read from (its RTS carries a key, the receive buffer is contiguous) or
     * written to (its buffer is contiguous, so is the receive, which can be registered). */
    int remote;
    int rdma_get, rdma_put;
} tdm_select_in_t;

/* Receiver: the rendezvous protocol for a matched RTS. */
tdm_proto_id_t tdm_p2p_select(const tdm_select_in_t *in);
/* Receiver: the adaptive choice that may replace `p` by the pipeline
 * (TDM_ADAPT_XCHG, TDM_ADAPT_ONEWAY, adapt.h), or -1 for none. */
int tdm_p2p_select_adaptive(const tdm_select_in_t *in, tdm_proto_id_t p);
/* Sender: a send found a usable RTR announcement: may it write into it? Only
 * `send_mode`, `load_send` and `load_recv` of `in` are read. */
bool tdm_p2p_select_rtr(const tdm_select_in_t *in);
/* Receiver: may an Irecv be announced to its sender (RTR)? Decides from the
 * peer's history and updates it: after 16 announcements of which fewer than a
 * quarter were used, only one Irecv in 16 is announced, as a probe. */
bool tdm_p2p_select_announce(tdm_rtr_history_t *h);
/* Receiver: may a receive announce itself at all (RTR), by how it was posted? */
bool tdm_p2p_select_announces(bool recv_blocking, size_t bytes);

/* Sender: how a message of `bytes` (to another process) goes. */
typedef enum {
    TDM_SEND_EAGER,
    TDM_SEND_RNDV,
    TDM_SEND_RANGE, /* the adaptive eager range: as the receiver timed (adapt.c) */
} tdm_send_way_t;
tdm_send_way_t tdm_p2p_select_send(size_t bytes, bool remote);
/* A rendezvous to a peer of another node: attach the message to the RTS (am)? */
bool tdm_p2p_select_data(bool contig, size_t bytes);
/* The eager limit toward a peer of another node (EAGER_LIMIT_REMOTE). */
size_t tdm_p2p_eager_limit_remote_param(void);
/* Sender: an RTS of `bytes` whose buffer the receiver can read is flagged
 * TDM_PKTF_PULL (read at once if it comes unexpected, as the eager message of
 * the range it stands for would be buffered). */
bool tdm_p2p_select_pull(size_t bytes, bool sync);
/* Sender: a blocking send that needs no answer and fits one cell, with nothing
 * queued toward the peer, goes straight into the ring with no request. */
static inline bool tdm_p2p_select_at_once(bool want_req, bool sync, bool to_self, size_t bytes,
                                          size_t room, const tdm_list_t *queue) {
    return !want_req && !sync && !to_self && bytes <= room && tdm_list_empty(queue);
}
/* The eager range: may the lower rank of a pair that sent the range both ways
 * within the last 200 us make its sends follow its own timing of the peer's
 * messages, so that the pair's two ways turn together? */
bool tdm_p2p_range_paired(int me, int peer, uint32_t now, uint32_t last_done);
/* COOP's split of `total` bytes: what the receiver copies (TANDEM_COOP_RATIO,
 * page-aligned so neither side copies a shared page). */
uint64_t tdm_p2p_select_coop_split(uint64_t total);

/* A protocol's copy failed midway (CMA is then off for the pair): the protocol
 * that takes over the rest of the request (its `adopt`). */
tdm_proto_id_t tdm_p2p_select_fallback(tdm_proto_id_t failed);
/* The protocol TANDEM_RNDV_PROTOCOL forces (TDM_PROTO_AUTO when "auto"). */
tdm_proto_id_t tdm_p2p_select_forced(void);
int tdm_p2p_select_init(void);
/* The eager limit the tunables give (EAGER_LIMIT, or when ranks outnumber cores
 * EAGER_LIMIT_OVERSUBSCRIBED unless EAGER_LIMIT was set), at most a quarter ring. */
size_t tdm_p2p_eager_limit_param(bool oversubscribed);
/* The CMA copy piece the tunables give (COPY_CHUNK, or when ranks outnumber
 * cores COPY_CHUNK_OVERSUBSCRIBED unless COPY_CHUNK was set), at least 4 KiB. */
size_t tdm_p2p_copy_chunk_param(bool oversubscribed);
/* Print the decision table (sizes x call types) to f (TANDEM_PROTO_INFO). */
void tdm_p2p_select_print(void *f);

#endif
