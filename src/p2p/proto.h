/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protocols. A protocol is one file in proto/ defining one `tdm_proto_t`: its
 * stage enum (the request's `stage` while it is the request's protocol), a
 * progress function per send stage, its handlers for the packets it receives,
 * a `fallback` that hands a request whose copy failed back to selection, and a
 * one-line description (TANDEM_PROTO_INFO). proto/registry.def lists them.
 *
 * The rendezvous protocols: the receiver chooses one at match time (select.c)
 * from how the message was sent (recorded in the RTS), how it is received, the
 * copy load of both processes and the size, and names it in the CTS, so both
 * sides agree without extra messages. RGET, RPUT and COOP are the same state
 * machine with a different split of the byte range [0, total): the receiver
 * copies [0, split) with process_vm_readv, the sender [split, total) with
 * process_vm_writev (rndv_cma.c). RTR (receiver-initiated) and the two-copy
 * pipeline have their own flows.
 */
#ifndef TDM_P2P_PROTO_H
#define TDM_P2P_PROTO_H

#include "layout.h"
#include "req.h"
#include "wire.h"
#include "../net/net.h"

#include <stdint.h>

typedef enum {
#define TDM_PROTO(_id, _wire, _sym, _word, _pv) TDM_PROTO_##_id = _wire,
#include "proto/registry.def"
#undef TDM_PROTO
    /* how many rendezvous protocols there are (their ids are dense from 0) */
    TDM_PROTO_COUNT = 0
#define TDM_PROTO(_id, _wire, _sym, _word, _pv) +1
#include "proto/registry.def"
#undef TDM_PROTO
    ,
    TDM_PROTO_AUTO = TDM_PROTO_COUNT, /* selection setting only */
    TDM_PROTO_NONE = TDM_PROTO_AUTO,  /* a receive not matched yet */
#define TDM_PROTO_LOCAL(_id, _sym) TDM_PROTO_##_id,
#include "proto/registry.def"
#undef TDM_PROTO_LOCAL
    TDM_PROTO_ALL /* size of tdm_protos */
} tdm_proto_id_t;

#define TDM_CAP_CMA TDM_NET_CAP_CMA   /* needs single-copy access to the peer's memory */
#define TDM_CAP_RDMA TDM_NET_CAP_RDMA /* needs get/put of the peer's registered memory */

/* What the receiver knows of a matched RTS. */
typedef struct tdm_rts_info {
    uint32_t sreq;
    uint8_t mode; /* tdm_send_mode_t | TDM_MODE_BLOCKING */
    int32_t pid;
    tdm_rlayout_t buf;
    /* RDMA (a sender of another node, TDM_PKTF_RDMA): its contiguous buffer's address
     * and the packed key of its registration (key_len 0: none) */
    uint8_t rdma;
    uint16_t key_len;
    uint64_t addr;
    unsigned char key[TDM_RDMA_KEY_MAX];
    /* TDM_PKTF_DATA: the message came attached to the RTS; `addr` is its handle
     * (a tdm_net_data_t *), fetched or dropped exactly once */
    uint8_t data;
} tdm_rts_info_t;

/* A send stage's progress: write what the stage has to write while the ring
 * has room; false when it is full (the request stays at the head of the
 * peer's transmit queue), true otherwise. */
typedef bool (*tdm_proto_push_fn)(tdm_req_t *s);

/* How a protocol takes over a byte range of a request (`adopt`). */
#define TDM_ADOPT_OWN 0x1  /* send: the range is my own part (FIN after it if the peer waits) */
#define TDM_ADOPT_PULL 0x2 /* receive: ask the sender for the range (PULL) */

struct tdm_sfmt;

typedef struct tdm_proto {
    const char *name; /* e.g. "rndv/coop/cma" */
    const char *desc; /* one line for TANDEM_PROTO_INFO */
    unsigned caps;    /* TDM_CAP_*: a protocol whose caps the pair lacks never qualifies */
    /* Send stages' progress, indexed by req->stage; NULL: the stage writes
     * nothing (it waits for a packet or for the copy queue). */
    const tdm_proto_push_fn *push;
    /* The pending-operations dump's words for a request in one of its stages
     * (signal-safe: reads only). */
    void (*show)(struct tdm_sfmt *f, tdm_req_t *req, int peer);
    /* Split protocols: bytes of `total` the receiver copies (the sender copies the rest). */
    uint64_t (*split)(uint64_t total);
    /* Receiver: a receive matched an RTS and this protocol was chosen. */
    void (*recv_start)(tdm_req_t *r, const tdm_rts_info_t *rts);
    /* Sender: the CTS naming this protocol arrived. */
    void (*send_cts)(tdm_req_t *s, const tdm_pkt_cts_t *cts);
    /* Rendezvous packets for a request of this protocol: the peer's FIN, a
     * PULL of [off, off+len) (sender), DATA counted toward a PULL (receiver). */
    void (*on_fin)(tdm_req_t *req);
    void (*on_pull)(tdm_req_t *s, uint64_t off, uint64_t len);
    void (*on_data)(tdm_req_t *r, uint64_t len);
    /* A copy of this protocol failed with errno `err`: stop it, reset the
     * request's part, and hand the rest to the protocol selection names
     * (tdm_p2p_select_fallback). NULL: nothing of it can fail midway. */
    void (*fallback)(tdm_req_t *req, int err);
    /* Take over [lo, hi) of a request another protocol gave up (TDM_ADOPT_*). */
    void (*adopt)(tdm_req_t *req, uint64_t lo, uint64_t hi, unsigned how);
} tdm_proto_t;

/* Every protocol by id (TDM_PROTO_NONE's slot is NULL). */
extern const tdm_proto_t *const tdm_protos[TDM_PROTO_ALL];
#define TDM_PROTO(_id, _wire, _sym, _word, _pv) extern const tdm_proto_t _sym;
#define TDM_PROTO_LOCAL(_id, _sym) extern const tdm_proto_t _sym;
#include "proto/registry.def"
#undef TDM_PROTO
#undef TDM_PROTO_LOCAL

/* Rendezvous state of a request (in req->proto_state), shared by the
 * rendezvous protocols since a request moves from one to another (fallback).
 * Owner: the request's. */
typedef struct tdm_rndv {
    tdm_layout_t remote;  /* the peer's buffer (CMA protocols) */
    int32_t pid;          /* the peer's pid */
    uint8_t fin_out;      /* the peer waits for my FIN once my part is done */
    uint8_t peer_part;    /* the peer copies a part and sends FIN when it is done */
    uint8_t peer_done;    /* that FIN has come */
    uint8_t load_counted; /* I hold one count in my copies_pending */
    uint8_t stream_own;   /* send, pipeline: the range being written is my own part */
    uint8_t wait_own;     /* send, pipeline: the waiting range is my own part */
    uint8_t announced;    /* recv: an RTR announcement is outstanding */
    uint8_t cancel_asked; /* recv: RTR_CANCEL sent, waiting for the answer */
    uint8_t adapt;        /* recv: an adaptive exchange or one-way message, timed (adapt.c):
                             size class + 1 */
    uint8_t adapt_oneway; /* recv: `adapt` is a one-way message's (RNDV_ADAPTIVE_MAX) */
    uint64_t cur, hi;     /* my part: next byte, end (copied by CMA, or written as DATA) */
    uint64_t total;       /* bytes that move: min(message, receive buffer) */
    uint64_t expect_data; /* recv, pipeline: bytes that come as counted DATA cells */
    uint64_t got_data;
    uint64_t wait_off; /* send, pipeline: a range waiting behind the one being written */
    uint64_t wait_end;
    uint64_t pull_off; /* send, split: a PULL that came while my own part was copying */
    uint64_t pull_end;
    uint64_t t0; /* recv, adaptive exchange: when it was matched (ns) */
    /* RDMA forms (rndv_rdma.c): my registration (RGET's sender, RPUT's receiver), the
     * peer's key unpacked (RGET's receiver, RPUT's sender), the status a completed get,
     * put or flush left for the progress that finishes it */
    union {
        struct tdm_net_mem *mem;
        /* AM: the sender's message packed, the receiver's fetched whole, for a buffer
         * the transport cannot read or write directly (freed, and NULL again, before the
         * request completes) */
        void *bounce;
    };
    struct tdm_net_rkey *rkey;
    int32_t rdma_status;
} tdm_rndv_t;
_Static_assert(sizeof(tdm_rndv_t) <= sizeof(((tdm_req_t *)0)->proto_state),
               "rendezvous state fits the request's protocol area");

static inline tdm_rndv_t *tdm_rndv(tdm_req_t *req) {
    return (tdm_rndv_t *)(void *)req->proto_state;
}

/* Count (+1) or uncount (-1) a copy this process owes in the node-shared
 * copies_pending table that COOP-load reads (rndv_cma.c). */
void tdm_rndv_load_add(int world_rank, int64_t delta);

/* The protocol's name (TANDEM_PROTO_INFO, traces), "auto" for TDM_PROTO_AUTO. */
const char *tdm_proto_name(tdm_proto_id_t id);

/* rndv_cma.c: the machinery shared by the rendezvous protocols */
/* The split protocols' object members (r->proto names which). */
void tdm_rndv_split_recv_start(tdm_req_t *r, const tdm_rts_info_t *rts);
void tdm_rndv_split_send_cts(tdm_req_t *s, const tdm_pkt_cts_t *cts);
void tdm_rndv_split_on_fin(tdm_req_t *req);
void tdm_rndv_split_on_pull(tdm_req_t *s, uint64_t off, uint64_t len);
void tdm_rndv_split_fallback(tdm_req_t *req, int err);
void tdm_rndv_split_show(struct tdm_sfmt *f, tdm_req_t *req, int peer);
extern const tdm_proto_push_fn tdm_rndv_split_push[];
/* A split protocol (RGET, RPUT, COOP): the split machinery's members, differing only
 * in the split and in whether the sender takes a CTS (RGET's never gets one). */
#define TDM_RNDV_SPLIT_PROTO(_name, _split, _send_cts, _desc)                                      \
    {                                                                                              \
        .name = (_name), .desc = (_desc), .caps = TDM_CAP_CMA, .split = (_split),                  \
        .push = tdm_rndv_split_push, .show = tdm_rndv_split_show,                                  \
        .recv_start = tdm_rndv_split_recv_start, .send_cts = (_send_cts),                          \
        .on_fin = tdm_rndv_split_on_fin, .on_pull = tdm_rndv_split_on_pull,                        \
        .fallback = tdm_rndv_split_fallback                                                        \
    }
/* An unexpected RTS flagged TDM_PKTF_PULL: read the message into the entry's
 * buffer now and send FIN, so that the send completes as an eager one would.
 * If the read fails (CMA is then off for the pair), the sender moves the
 * message as DATA cells into the entry, which holds it once ue->received
 * reaches ue->size. */
void tdm_rndv_pull_unexp(int peer, int pid, const tdm_rlayout_t *buf, uint32_t sreq,
                         tdm_unexp_t *ue);
/* One chunk (TANDEM_COPY_CHUNK) of req's CMA range [cur, hi) by CMA, reading
 * or writing; cur moves on. 0 or -errno (nothing counted). */
int tdm_rndv_copy_chunk(tdm_req_t *req, bool write);
/* Copy queue: one chunk of one pending CMA part per call; events done. */
int tdm_rndv_copy_progress(void);
/* Send the peer FIN for request id `req` (its side of a rendezvous). */
void tdm_rndv_send_fin(int peer, uint32_t req);
/* My part is done (copied or moved as DATA): FIN if the peer waits for it,
 * then complete, or wait in `wait_fin` (the protocol's stage) for the peer's. */
void tdm_rndv_part_done(tdm_req_t *req, uint8_t wait_fin);
/* Complete a rendezvous request (its adaptive timing ends here). */
void tdm_rndv_complete(tdm_req_t *req);
/* A CMA copy failed with err: CMA goes off for the pair (one warning per job);
 * false when the peer has exited (ESRCH: nobody can move the rest). */
bool tdm_rndv_copy_failed(tdm_req_t *req, int err);

/* rndv_rdma.c: the rendezvous between nodes over get/put of registered memory */
/* Sender: fill the RDMA part of an RTS toward a peer of another node (TDM_PKTF_RDMA set
 * when the buffer is contiguous; its key too when it could be registered and fits in
 * `room` bytes after the header); the packet's length. */
size_t tdm_rndv_rdma_fill_rts(tdm_req_t *s, tdm_pkt_rts_rdma_t *h, size_t room);
/* Receiver: the RDMA part of an RTS into `rts` (false: malformed, logged). */
bool tdm_rndv_rdma_parse_rts(int peer, const tdm_pkt_rts_rdma_t *h, tdm_rts_info_t *rts);
/* Sender: send the RTS reserved at `h` with the message attached (TDM_PKTF_DATA), when
 * selection says so (tdm_p2p_select_data); false: the RTS is still the caller's to fill. */
bool tdm_rndv_data_send(tdm_req_t *s, void *h);
/* Sender: a registration made for the RTS is released at completion. */
void tdm_rndv_rdma_release(tdm_req_t *req);
/* Finish the gets, puts and flushes that completed; events done. */
int tdm_rndv_rdma_progress(void);

/* rndv_rtr.c */
void tdm_rtr_maybe_announce(tdm_req_t *r);
/* Sender: use an announcement for this send if one is valid; true if used. */
bool tdm_rtr_try_send(tdm_req_t *s);
bool tdm_rtr_cancel(tdm_req_t *r);

#endif
