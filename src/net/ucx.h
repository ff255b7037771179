/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UCX transport: Tandem's packets between nodes as UCX active messages, and
 * one-sided get/put on registered memory for the rendezvous protocols (seed 001).
 * Matching, ordering and the protocol choice stay the engine's: to this file a
 * packet is a header (at most TDM_UCX_HDR_MAX bytes) and a payload, both opaque.
 *
 * Ownership and threads:
 * - One tdm_ucx_t per process (one UCP context, one worker). With `multi_thread`
 *   the worker is UCS_THREAD_MODE_MULTI and, once `tdm_threaded` is raised
 *   (base/lock.h: ucx.c's own locks are tdm_lock_t), every call may come from any
 *   thread; otherwise the caller serializes all calls (UCS_THREAD_MODE_SINGLE).
 * - Callbacks (receive, completion, peer error) run only inside tdm_ucx_progress
 *   (and tdm_ucx_fini, which fails what is still pending), never inside the call that
 *   started an operation. They may start new operations; they must not call
 *   tdm_ucx_progress or tdm_ucx_fini.
 * - Peers are numbered 0..nranks-1 (world ranks). A peer's address (its blob) is
 *   given once with tdm_ucx_peer_set; its endpoint is made at first use or by
 *   tdm_ucx_connect.
 *
 * Return values: TDM_UCX_DONE (0) the operation completed inside the call (its
 * callback will not run), TDM_UCX_PENDING (1) it completes later and its callback runs
 * from tdm_ucx_progress, a negative tdm_ucx_status_t on failure, with a message
 * (what, where: the peer's rank and host, UCX's status text) logged and kept for
 * tdm_ucx_errmsg.
 *
 * Built without UCX (TDM_HAVE_UCX 0) every call fails with TDM_UCX_ERR_UNSUPPORTED
 * and tdm_ucx_built() is false.
 */
#ifndef TDM_NET_UCX_H
#define TDM_NET_UCX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* The largest packet header: the engine's packets start with a header of at most
 * this many bytes (net/ adds its own 8-byte prefix in front). */
#define TDM_UCX_HDR_MAX 64

enum { TDM_UCX_DONE = 0, TDM_UCX_PENDING = 1 };

typedef enum {
    TDM_UCX_ERR_UNSUPPORTED = -1,  /* built without UCX */
    TDM_UCX_ERR_NO_TRANSPORT = -2, /* UCX found no usable transport or device */
    TDM_UCX_ERR_CONNECT = -3,      /* an endpoint to the peer could not be made */
    TDM_UCX_ERR_PEER = -4,         /* the peer failed (UCX's error handler) */
    TDM_UCX_ERR_INVALID = -5,      /* bad argument: peer out of range, bad blob, header too long */
    TDM_UCX_ERR_TOO_BIG = -6,      /* packet larger than TANDEM_UCX_AM_MAX */
    TDM_UCX_ERR_NOMEM = -7,
    TDM_UCX_ERR_IO = -8,     /* any other UCX failure (the message says which) */
    TDM_UCX_ERR_TIMEOUT = -9 /* shutdown gave up waiting for a peer */
} tdm_ucx_status_t;

typedef struct tdm_ucx tdm_ucx_t;
typedef struct tdm_ucx_mem tdm_ucx_mem_t;   /* a registration (cached) */
typedef struct tdm_ucx_rkey tdm_ucx_rkey_t; /* a peer's memory key, unpacked */
/* The payload of a packet sent by tdm_ucx_send_rndv, still at its sender (or, if UCX
 * brought it along, held here) until the receiver fetches or drops it. */
typedef struct tdm_ucx_data tdm_ucx_data_t;

/* Every packet from `peer`, in the order that peer sent them. `hdr` and `data` are
 * valid for the call only. */
typedef void (*tdm_ucx_recv_fn_t)(void *arg, int peer, const void *hdr, size_t hdr_len,
                                  const void *data, size_t len);
/* A packet of tdm_ucx_send_rndv from `peer`, in the same order as recv's packets: its
 * header, and its `len`-byte payload as a handle to pass to tdm_ucx_fetch or
 * tdm_ucx_data_drop, exactly once, from any thread, later. */
typedef void (*tdm_ucx_recv_data_fn_t)(void *arg, int peer, const void *hdr, size_t hdr_len,
                                       tdm_ucx_data_t *data, size_t len);
/* An operation finished: status 0, or a negative tdm_ucx_status_t (the peer failed). */
typedef void (*tdm_ucx_done_fn_t)(void *arg, int status);
/* `peer` failed (once per peer); `msg` names it, its host and UCX's reason. Operations
 * pending toward it complete with TDM_UCX_ERR_PEER; later ones fail at once. Both are
 * promised with TANDEM_UCX_PEER_ERRORS=1 (UCX's peer error mode, with keepalive); by
 * default (the zero-copy rendezvous over tcp) a broken connection is reported, but a
 * peer dead on a transport with no connection may go unseen and operations pending
 * toward it may never complete: the remote transport ends the job at the report, and
 * the launcher ends it when a process dies. */
typedef void (*tdm_ucx_peer_error_fn_t)(void *arg, int peer, const char *msg);

typedef struct tdm_ucx_config {
    int rank;          /* this process */
    int nranks;        /* peers are 0..nranks-1 */
    bool multi_thread; /* MPI_THREAD_MULTIPLE (or a progress thread): UCS_THREAD_MODE_MULTI */
    tdm_ucx_recv_fn_t recv;
    void *recv_arg;
    tdm_ucx_recv_data_fn_t recv_data;   /* optional: without it such packets are dropped */
    tdm_ucx_peer_error_fn_t peer_error; /* optional */
    void *peer_error_arg;
} tdm_ucx_config_t;

/* Counters, for tests and tandem's statistics. */
typedef struct tdm_ucx_stats {
    uint64_t am_sent, am_sent_pending; /* packets sent; of them, completed later */
    uint64_t am_recv, am_recv_rndv;    /* packets delivered; of them, fetched by rendezvous */
    uint64_t rndv_sent, fetches;       /* tdm_ucx_send_rndv packets; payloads fetched */
    uint64_t fetches_am;               /* of them, from UCX's active-message rendezvous */
    uint64_t streams;                  /* tdm_ucx_send_rndv payloads sent as a stream */
    uint64_t streams_fetched;          /* payloads fetched as a stream */
    uint64_t reads;                    /* gets issued to UCX */
    uint64_t reads_queued;             /* gets that waited in the FIFO for a token */
    uint64_t reads_max_outstanding;    /* most gets in flight at once */
    uint64_t writes;                   /* puts issued */
    uint64_t reg_hits, reg_misses;     /* registration cache */
    uint64_t reg_dropped;              /* cached registrations dropped: their memory was unmapped */
} tdm_ucx_stats_t;

bool tdm_ucx_built(void);

/* A context and a worker (with wake-up support, for tdm_ucx_efd). Fails with
 * TDM_UCX_ERR_NO_TRANSPORT when UCX finds nothing to use (UCX_TLS naming nothing
 * present, no device). */
int tdm_ucx_init(const tdm_ucx_config_t *cfg, tdm_ucx_t **ux_p);
/* Flush and close every endpoint, then destroy the worker and context. Waits at most
 * TANDEM_UCX_CLOSE_TIMEOUT_MS for peers (a dead peer is closed by force), so it never
 * hangs; TDM_UCX_ERR_TIMEOUT when a close gave up (everything is freed anyway).
 * Pending operations' callbacks run with an error. */
int tdm_ucx_fini(tdm_ucx_t *ux);

/* This process's address as a blob for an out-of-band exchange (the PMI key-value
 * space, a pipe): UCX's worker address plus the rank and host name, for messages.
 * Owned by ux. */
int tdm_ucx_address(tdm_ucx_t *ux, const void **blob_p, size_t *len_p);
/* Record `peer`'s blob (copied); checked for form and rank. */
int tdm_ucx_peer_set(tdm_ucx_t *ux, int peer, const void *blob, size_t len);
/* Make the endpoint to `peer` now (otherwise made at its first use). */
int tdm_ucx_connect(tdm_ucx_t *ux, int peer);
/* The host name in `peer`'s blob ("?" before tdm_ucx_peer_set). */
const char *tdm_ucx_peer_host(tdm_ucx_t *ux, int peer);
/* UCX's description of the endpoint toward `peer` (its lanes, and its thresholds between
 * short, zero-copy and rendezvous per operation) on `f`. */
int tdm_ucx_ep_print(tdm_ucx_t *ux, int peer, FILE *f);

/* One packet: `hdr` (copied) and `data` as one active message. `data` stays the
 * caller's until done runs (or TDM_UCX_DONE is returned). Packets to one peer arrive
 * in the order of these calls. */
int tdm_ucx_send(tdm_ucx_t *ux, int peer, const void *hdr, size_t hdr_len, const void *data,
                 size_t len, tdm_ucx_done_fn_t done, void *arg);

/* The bytes in front of a framed packet that tdm_ucx_send_framed writes. */
#define TDM_UCX_FRAME 40
/* One packet of `len` bytes at `pkt` (8-byte aligned), no header: as tdm_ucx_send(ux,
 * peer, NULL, 0, pkt, len, done, arg), but the TDM_UCX_FRAME bytes before `pkt` are the
 * call's to write (the completion and this file's prefix go there, so a small packet
 * leaves as one contiguous buffer and needs no operation of its own). Both stay the
 * caller's until done runs (or TDM_UCX_DONE is returned). */
int tdm_ucx_send_framed(tdm_ucx_t *ux, int peer, void *pkt, size_t len, tdm_ucx_done_fn_t done,
                        void *arg);

/* A packet whose payload stays at this process until the receiver, handed it by
 * recv_data, fetches it into a buffer of its choosing: the header as an active message
 * naming a unique UCX tag, the payload as a synchronous tagged send under it
 * (TANDEM_UCX_RNDV=am: one active message by UCX's rendezvous, the header in its
 * announcement, the payload fetched by ucp_am_recv_data_nbx). done runs once the
 * payload was fetched (or dropped: the receiver's drop completes it too) or the peer
 * failed; `data` stays the caller's until then. Ordered with tdm_ucx_send's packets. */
int tdm_ucx_send_rndv(tdm_ucx_t *ux, int peer, const void *hdr, size_t hdr_len, const void *data,
                      size_t len, tdm_ucx_done_fn_t done, void *arg);
/* Move the whole payload of `data` (the len given to recv_data) into `buf`; `data` is
 * consumed whatever the result. TDM_UCX_DONE when it came with the packet (copied now). */
int tdm_ucx_fetch(tdm_ucx_t *ux, tdm_ucx_data_t *data, void *buf, tdm_ucx_done_fn_t done,
                  void *arg);
/* Give the payload up unread (consumes `data`). */
void tdm_ucx_data_drop(tdm_ucx_t *ux, tdm_ucx_data_t *data);

/* Run UCX's progress and deliver what arrived; returns the number of events (0: idle). */
int tdm_ucx_progress(tdm_ucx_t *ux);
/* Blocking: a descriptor that becomes readable when the worker has work. Before
 * sleeping on it call tdm_ucx_arm: 0 armed (sleep), 1 events are pending (progress
 * first, then arm again), or a negative status. */
int tdm_ucx_efd(tdm_ucx_t *ux);
int tdm_ucx_arm(tdm_ucx_t *ux);

/* Register [base, base+len) for remote access (the cache returns the same
 * registration for the same range while it is in use, or recently used: up to
 * TANDEM_UCX_REG_CACHE idle entries are kept). Each reg is paired with a dereg. */
int tdm_ucx_mem_reg(tdm_ucx_t *ux, void *base, size_t len, tdm_ucx_mem_t **mem_p);
void tdm_ucx_mem_dereg(tdm_ucx_t *ux, tdm_ucx_mem_t *mem);
/* The packed remote key of a registration, to carry in an RTS or CTS (owned by mem). */
void tdm_ucx_mem_rkey(const tdm_ucx_mem_t *mem, const void **rkey_p, size_t *len_p);
/* A peer's packed key (from a packet) made usable toward that peer; release it after. */
int tdm_ucx_rkey_unpack(tdm_ucx_t *ux, int peer, const void *packed, size_t len,
                        tdm_ucx_rkey_t **rkey_p);
void tdm_ucx_rkey_release(tdm_ucx_t *ux, tdm_ucx_rkey_t *rkey);

/* Read `len` bytes at the peer's address `remote` (covered by rkey) into `local`.
 * At most TANDEM_UCX_MAX_READS gets are in flight at once per process (seed 001
 * §4.2: a token bucket); others wait in a FIFO and are issued, oldest first, as
 * reads complete. */
int tdm_ucx_get(tdm_ucx_t *ux, int peer, void *local, size_t len, uint64_t remote,
                tdm_ucx_rkey_t *rkey, tdm_ucx_done_fn_t done, void *arg);
/* Write `len` bytes from `local` to the peer's `remote`. Complete means the data
 * has left `local`; call tdm_ucx_flush before telling the peer (FIN). */
int tdm_ucx_put(tdm_ucx_t *ux, int peer, const void *local, size_t len, uint64_t remote,
                tdm_ucx_rkey_t *rkey, tdm_ucx_done_fn_t done, void *arg);
/* Complete when every put and get to `peer` issued before is complete at the peer. */
int tdm_ucx_flush(tdm_ucx_t *ux, int peer, tdm_ucx_done_fn_t done, void *arg);

/* The message of the last failure (empty if none). */
const char *tdm_ucx_errmsg(tdm_ucx_t *ux);
void tdm_ucx_stats(tdm_ucx_t *ux, tdm_ucx_stats_t *st_p);

#endif
