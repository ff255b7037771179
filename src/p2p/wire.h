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

typedef enum {
    TDM_PKT_EAGER = 1, /* envelope + first fragment of an eager message */
    TDM_PKT_EAGER_CONT, /* next fragment of the eager message before it (same ring) */
    TDM_PKT_RTS,       /* rendezvous request to send: envelope, size, how it was sent */
    TDM_PKT_CTS,       /* receiver matched an RTS: protocol chosen, receive request id */
    TDM_PKT_DATA,      /* rendezvous fragment through the ring (two-copy pipeline) */
    TDM_PKT_FIN,       /* a side finished its part of a rendezvous copy */
    TDM_PKT_ACK,       /* a synchronous-mode eager message was matched */
} tdm_pkt_type_t;

/* flags of EAGER and RTS */
#define TDM_PKTF_SYNC 0x01 /* sender waits for ACK (eager) or CTS (rendezvous) to complete */

/* Send modes as recorded in the RTS (seed 000 Table II rows). */
typedef enum {
    TDM_MODE_STD = 0,
    TDM_MODE_BUFFERED,
    TDM_MODE_SYNC,
    TDM_MODE_READY,
} tdm_send_mode_t;
#define TDM_MODE_BLOCKING 0x80 /* or-ed into mode: the call was a blocking one */

typedef struct __attribute__((packed)) tdm_pkt_eager {
    uint8_t type;
    uint8_t flags;
    uint8_t mode;
    uint8_t rsvd;
    uint32_t ctx;   /* context id of the communicator */
    int32_t src;    /* sender's rank in that communicator */
    int32_t tag;
    uint32_t sreq;  /* sender request id (0 unless it needs an answer) */
    uint32_t frag;  /* payload bytes in this cell */
    uint64_t size;  /* total message size in bytes */
} tdm_pkt_eager_t;
_Static_assert(sizeof(tdm_pkt_eager_t) == 32, "eager header is 32 bytes");

typedef struct __attribute__((packed)) tdm_pkt_cont {
    uint8_t type;
    uint8_t rsvd[3];
    uint32_t frag;
} tdm_pkt_cont_t;
_Static_assert(sizeof(tdm_pkt_cont_t) == 8, "continuation header is 8 bytes");

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

typedef struct __attribute__((packed)) tdm_pkt_data {
    uint8_t type;
    uint8_t rsvd[3];
    uint32_t rreq;
    uint32_t frag;
    uint32_t rsvd2;
    uint64_t offset;
} tdm_pkt_data_t;
_Static_assert(sizeof(tdm_pkt_data_t) == 24, "data header is 24 bytes");

typedef struct __attribute__((packed)) tdm_pkt_ack {
    uint8_t type;
    uint8_t rsvd[3];
    uint32_t req; /* request of the side receiving the packet */
} tdm_pkt_ack_t;
_Static_assert(sizeof(tdm_pkt_ack_t) == 8, "ack/fin header is 8 bytes");
typedef tdm_pkt_ack_t tdm_pkt_fin_t;

#endif
