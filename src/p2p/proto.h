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
#include "req.h"
#include "wire.h"

#include <stdint.h>

typedef enum {
#define TDM_PROTO(_id, _wire, _sym, _opt) TDM_PROTO_##_id = _wire,
#include "proto/registry.def"
#undef TDM_PROTO
    /* how many there are (registry.def's TDM_PROTO lines; ids are dense from 0) */
    TDM_PROTO_COUNT = 0
#define TDM_PROTO(_id, _wire, _sym, _opt) +1
#include "proto/registry.def"
#undef TDM_PROTO
    ,
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
#define TDM_PROTO(_id, _wire, _sym, _opt) extern const tdm_proto_t _sym;
#include "proto/registry.def"
#undef TDM_PROTO

/* Rendezvous state of a request (in req->proto_state). Owner: the request's. */
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

/* The protocol's name (TANDEM_PROTO_INFO, traces), "auto" for TDM_PROTO_AUTO. */
const char *tdm_proto_name(tdm_proto_id_t id);

/* rndv_cma.c: the machinery shared by the protocols */
/* The split protocols' receiver start and sender CTS handler (r->proto names which). */
void tdm_rndv_split_recv_start(tdm_req_t *r, const tdm_rts_info_t *rts);
void tdm_rndv_split_send_cts(tdm_req_t *s, const tdm_pkt_cts_t *cts);
/* Sender: the RTS stage (writes the RTS; then waits for CTS or FIN). */
bool tdm_rndv_push_rts(tdm_req_t *s);
/* An RTS flagged TDM_PKTF_PULL that came unexpected: read the message into the
 * unexpected entry's buffer now and send FIN, so that the send completes as an
 * eager one would. If the read fails (CMA is then off for the pair), the sender
 * moves the message as DATA cells into the entry, which holds it once
 * ue->received reaches ue->size. */
void tdm_rndv_pull_unexp(int peer, int pid, const tdm_rlayout_t *buf, uint32_t sreq,
                         tdm_unexp_t *ue);
/* One chunk (TANDEM_COPY_CHUNK) of req's CMA range [cur, hi) by CMA, reading
 * or writing; cur moves on. 0 or -errno (nothing counted). */
int tdm_rndv_copy_chunk(tdm_req_t *req, bool write);
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
bool tdm_rtr_push(tdm_req_t *s); /* txq stage: copy, then RTR_FIN */
bool tdm_rtr_cancel(tdm_req_t *r);

#endif
