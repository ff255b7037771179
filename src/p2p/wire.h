/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every packet that crosses a ring. Each is a packed struct whose first byte is
 * the packet type; payload (if any) follows the header in the same cell.
 * Requests are named by identifiers (index and generation, see req.h), never
 * by pointers.
 */
#ifndef TDM_P2P_WIRE_H
#define TDM_P2P_WIRE_H

#include <stdint.h>

/* Packet types, by their wire ids in proto/registry.def (which names each one's
 * handler):
 *   EAGER        envelope + first fragment of an eager message
 *   EAGER_CONT   next fragment of the eager message before it (same ring)
 *   EAGER_SHORT  a whole small message that wants no answer, in one cache line
 *   ACK          a synchronous-mode eager message was matched
 *   RTS          rendezvous request to send: envelope, size, how it was sent; the
 *                sender's buffer by pid and layout (CMA) or address and key (RDMA)
 *   CTS          receiver matched an RTS: protocol chosen, receive request id (and
 *                the receive buffer: layout for CMA, address and key for RDMA)
 *   DATA         rendezvous fragment through the ring (pipeline, CMA fallback)
 *   FIN          a side finished its part of a rendezvous copy
 *   PULL         a side whose CMA copy failed asks the peer to stream a range
 *   RTR          receiver announces a posted receive buffer (RTR protocol)
 *   RTR_FIN      sender wrote a message into an announced buffer: envelope + ids
 *   RTR_CANCEL   receiver asks to withdraw an announcement (MPI_Cancel)
 *   RTR_CANCEL_ACK  sender's answer: withdrawn, or already used
 *   PART         partitioned communication's control (part.c, tdm_pkt_part_t) */
typedef enum {
#define TDM_PKT(_name, _wire, _handler) TDM_PKT_##_name = _wire,
#include "proto/registry.def"
#undef TDM_PKT
} tdm_pkt_type_t;
#define TDM_PKT_TYPES 16 /* every wire id is below this */

/* flags of EAGER and RTS */
#define TDM_PKTF_SYNC 0x01 /* sender waits for ACK (eager) or CTS (rendezvous) to complete */
/* RTS of a message at or below the eager limit (the adaptive eager range): if
 * it comes unexpected the receiver reads it at once, so the send completes
 * without its receive, as the eager one it stands for would */
#define TDM_PKTF_PULL 0x02
/* RTS to a peer of another node whose buffer is contiguous: it carries that buffer's
 * address and, when it could be registered, its packed key (tdm_pkt_rts_rdma_t) */
#define TDM_PKTF_RDMA 0x04
/* RTS to a peer of another node with the message attached (tdm_pkt_rts_data_t): the
 * receiver fetches it into its buffer at the match (net/rdma.h commit_data) */
#define TDM_PKTF_DATA 0x08

/* Send modes as recorded in the RTS (seed 000 Table II rows). */
typedef enum {
    TDM_MODE_STD = 0,
    TDM_MODE_BUFFERED,
    TDM_MODE_SYNC,
    TDM_MODE_READY,
} tdm_send_mode_t;
#define TDM_MODE_BLOCKING 0x80 /* or-ed into mode: the call was a blocking one */
/* or-ed into a receive's mode: the receiver combines the data as soon as it has
 * it (a collective's reduction), so it should copy it itself (select.c) */
#define TDM_MODE_CONSUMES 0x40

typedef struct __attribute__((packed)) tdm_pkt_eager {
    uint8_t type;
    uint8_t flags;
    uint8_t mode;
    uint8_t pad;  /* payload starts pad bytes after the header (tdm_pkt_pad) */
    uint32_t ctx; /* context id of the communicator */
    int32_t src;  /* sender's rank in that communicator */
    int32_t tag;
    uint32_t sreq; /* sender request id (0 unless it needs an answer) */
    uint32_t frag; /* payload bytes in this cell */
    uint64_t size; /* total message size in bytes */
} tdm_pkt_eager_t;
_Static_assert(sizeof(tdm_pkt_eager_t) == 32, "eager header is 32 bytes");

/* EAGER_SHORT: a message of at most TDM_PKT_SHORT_MAX bytes sent in standard,
 * buffered or ready mode (no ACK, so no sender request id), in one cell, with
 * no pad: with the cell's 8-byte prefix, header and payload fill at most the
 * cell's first cache line, so the receiver reads one line per message. */
typedef struct __attribute__((packed)) tdm_pkt_short {
    uint8_t type;
    uint8_t mode;
    uint8_t size; /* payload bytes */
    uint8_t rsvd;
    uint32_t ctx;
    int32_t src;
    int32_t tag;
} tdm_pkt_short_t;
_Static_assert(sizeof(tdm_pkt_short_t) == 16, "short eager header is 16 bytes");
#define TDM_PKT_SHORT_MAX 40 /* 64 - 8 (cell prefix) - 16 */

typedef struct __attribute__((packed)) tdm_pkt_cont {
    uint8_t type;
    uint8_t pad; /* as in tdm_pkt_eager_t */
    uint8_t rsvd[2];
    uint32_t frag;
} tdm_pkt_cont_t;
_Static_assert(sizeof(tdm_pkt_cont_t) == 8, "continuation header is 8 bytes");

/* A contiguous eager message of at least TDM_PKT_ALIGN_MIN bytes that fits
 * one cell starts at the same offset within a cache line as the sender's
 * data: the sender skips pad (0-63) bytes after the header, so both copies
 * run aligned alike (docs/performance.md: why one cell, and why from 2 KiB). */
#define TDM_PKT_ALIGN_MIN 2048
static inline uint8_t tdm_pkt_pad(const void *payload, const void *data) {
    return (uint8_t)(((uintptr_t)data - (uintptr_t)payload) & 63);
}

/* An RTS is an eager header without payload (frag = 0), sreq always set. */
typedef tdm_pkt_eager_t tdm_pkt_rts_t;

typedef struct __attribute__((packed)) tdm_pkt_cts {
    uint8_t type;
    uint8_t proto; /* protocol chosen by the receiver (tdm_proto_id_t) */
    uint8_t rsvd[2];
    uint32_t sreq;
    uint32_t rreq;
    uint32_t rsvd2;
} tdm_pkt_cts_t;
_Static_assert(sizeof(tdm_pkt_cts_t) == 16, "cts header is 16 bytes");

#define TDM_DATAF_PULLED 0x01 /* DATA for the receiver's own range (pipeline, PULL) */

typedef struct __attribute__((packed)) tdm_pkt_data {
    uint8_t type;
    uint8_t flags; /* TDM_DATAF_* */
    uint8_t rsvd[2];
    uint32_t rreq;
    uint32_t frag;
    uint32_t rsvd2;
    uint64_t offset;
} tdm_pkt_data_t;
_Static_assert(sizeof(tdm_pkt_data_t) == 24, "data header is 24 bytes");

typedef struct __attribute__((packed)) tdm_pkt_ack {
    uint8_t type;
    uint8_t flags; /* FIN: TDM_FINF_* */
    uint8_t rsvd[2];
    uint32_t req; /* request of the side receiving the packet */
} tdm_pkt_ack_t;
/* FIN of a side whose part failed (an RDMA get, put or flush): the message did not move,
 * the request that takes it completes with an error */
#define TDM_FINF_FAILED 0x01
_Static_assert(sizeof(tdm_pkt_ack_t) == 8, "ack/fin header is 8 bytes");
typedef tdm_pkt_ack_t tdm_pkt_fin_t;

/*
 * A buffer as another process sees it, for CMA: `count` items of `extent`
 * bytes from `base`; each item is `nsegs` (offset, length) segments found at
 * `segs_addr` in the owner's memory (read with process_vm_readv: the owner keeps
 * the datatype alive until the operation completes), or, when `contig`, the
 * bytes from base + true_lb on.
 */
typedef struct __attribute__((packed)) tdm_rlayout {
    uint64_t base;
    uint64_t count;
    int64_t extent;
    int64_t true_lb;
    uint64_t item_size; /* data bytes per item */
    uint64_t segs_addr;
    uint32_t nsegs;
    uint8_t contig;
    uint8_t rsvd[3];
} tdm_rlayout_t;
_Static_assert(sizeof(tdm_rlayout_t) == 56, "rlayout is 56 bytes");

/* RTS for the CMA protocols: the envelope, then the sender's pid and buffer. */
typedef struct __attribute__((packed)) tdm_pkt_rts_cma {
    tdm_pkt_eager_t env;
    int32_t pid;
    uint32_t rsvd;
    tdm_rlayout_t buf;
} tdm_pkt_rts_cma_t;
_Static_assert(sizeof(tdm_pkt_rts_cma_t) == 96, "cma rts is 96 bytes");

/* Every CTS: the protocol, the receiver's buffer (when the sender copies) and
 * the byte range [split, total) the sender must write. */
typedef struct __attribute__((packed)) tdm_pkt_cts_cma {
    tdm_pkt_cts_t cts;
    int32_t pid;
    uint32_t rsvd;
    uint64_t split; /* the receiver copies [0, split) */
    uint64_t total; /* bytes that move: min(message size, receive buffer) */
    tdm_rlayout_t buf;
} tdm_pkt_cts_cma_t;
_Static_assert(sizeof(tdm_pkt_cts_cma_t) == 96, "cma cts is 96 bytes");

/* A packed memory key (net/rdma.h) in an RTS or CTS is at most this long: a key that
 * does not fit is not sent (the rendezvous then takes another form). */
#define TDM_RDMA_KEY_MAX 184

/* RTS to a peer of another node (TDM_PKTF_RDMA): the envelope, the sender's contiguous
 * buffer (`size` bytes at `addr`) and, when key_len > 0, the packed key of its
 * registration (RGET: the receiver reads it), key_len bytes right after the header. */
typedef struct __attribute__((packed)) tdm_pkt_rts_rdma {
    tdm_pkt_eager_t env;
    uint64_t addr;
    uint16_t key_len;
    uint8_t rsvd[6];
} tdm_pkt_rts_rdma_t;
_Static_assert(sizeof(tdm_pkt_rts_rdma_t) == 48, "rdma rts is 48 bytes");

/* RTS with the message attached (TDM_PKTF_DATA): the envelope, then the slot where the
 * receiving transport writes the attached message's handle (net/rdma.h), 0 as sent. */
typedef struct __attribute__((packed)) tdm_pkt_rts_data {
    tdm_pkt_eager_t env;
    uint64_t handle;
} tdm_pkt_rts_data_t;
_Static_assert(sizeof(tdm_pkt_rts_data_t) == 40, "data rts is 40 bytes");

/* CTS of RPUT over RDMA: the receiver's registered contiguous buffer (`addr`, its packed
 * key of key_len bytes after the header); the sender puts `total` bytes, flushes, sends
 * FIN. */
typedef struct __attribute__((packed)) tdm_pkt_cts_rdma {
    tdm_pkt_cts_t cts;
    uint64_t total;
    uint64_t addr;
    uint16_t key_len;
    uint8_t rsvd[6];
} tdm_pkt_cts_rdma_t;
_Static_assert(sizeof(tdm_pkt_cts_rdma_t) == 40, "rdma cts is 40 bytes");

typedef struct __attribute__((packed)) tdm_pkt_rtr {
    uint8_t type;
    uint8_t rsvd[3];
    uint32_t ctx;
    int32_t src; /* the sender's rank in the communicator (as posted) */
    int32_t tag;
    uint32_t rreq;
    uint32_t rx_count; /* envelope packets the receiver had taken from this sender */
    uint64_t bytes;    /* capacity of the receive buffer */
    int32_t pid;
    uint32_t rsvd2;
    tdm_rlayout_t buf;
} tdm_pkt_rtr_t;
_Static_assert(sizeof(tdm_pkt_rtr_t) == 96, "rtr is 96 bytes");

/* RTR_FIN: an eager header (envelope; frag 0) for a message written into the
 * announced buffer, the receive request id, and how much CMA wrote (less than
 * `size` only if CMA failed midway: the rest then comes as DATA cells). */
typedef struct __attribute__((packed)) tdm_pkt_rtr_fin {
    tdm_pkt_eager_t env;
    uint32_t rreq;
    uint32_t rsvd;
    uint64_t written; /* bytes already written by CMA; the rest follows as DATA */
} tdm_pkt_rtr_fin_t;
_Static_assert(sizeof(tdm_pkt_rtr_fin_t) == 48, "rtr fin is 48 bytes");

typedef struct __attribute__((packed)) tdm_pkt_rtr_cancel {
    uint8_t type;
    uint8_t cancelled; /* in the ACK: 1 withdrawn, 0 already used */
    uint8_t rsvd[2];
    uint32_t rreq;
} tdm_pkt_rtr_cancel_t;
_Static_assert(sizeof(tdm_pkt_rtr_cancel_t) == 8, "rtr cancel is 8 bytes");

/* PULL: stream stream-bytes [offset, offset+len) as DATA to request `dst_req`
 * (the asker); `req` names the peer's own request. */
typedef struct __attribute__((packed)) tdm_pkt_pull {
    uint8_t type;
    uint8_t rsvd[3];
    uint32_t req;
    uint32_t dst_req;
    uint32_t rsvd2;
    uint64_t offset;
    uint64_t len;
} tdm_pkt_pull_t;
_Static_assert(sizeof(tdm_pkt_pull_t) == 32, "pull is 32 bytes");

/* Partitioned communication (part.c). INIT: a partitioned send was initialized
 * (its envelope, sender request, partitions and total bytes), matched by the
 * receiver against its partitioned receives, never against ordinary ones. CTS:
 * the matched receive started a round (the sender learns its id). PIECE:
 * sender partitions [first, first + parts) follow, as one ordinary message on
 * the data context with the receive's tag (none when they hold no bytes). */
enum { TDM_PART_INIT = 1, TDM_PART_CTS, TDM_PART_PIECE };
typedef struct __attribute__((packed)) tdm_pkt_part {
    uint8_t type; /* TDM_PKT_PART */
    uint8_t op;   /* TDM_PART_* */
    uint8_t rsvd[2];
    uint32_t ctx;   /* INIT: the communicator's context */
    int32_t src;    /* INIT: the sender's rank in it */
    int32_t tag;    /* INIT */
    uint32_t sreq;  /* INIT, CTS: the partitioned send's request id */
    uint32_t rreq;  /* CTS, PIECE: the partitioned receive's request id */
    uint32_t first; /* PIECE: first sender partition */
    uint32_t parts; /* INIT: the sender's partitions; PIECE: partitions in the piece */
    uint64_t bytes; /* INIT: the sender's total bytes */
} tdm_pkt_part_t;
_Static_assert(sizeof(tdm_pkt_part_t) == 40, "part packet is 40 bytes");

#endif
