/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rendezvous protocols. The receiver chooses one at match time (select.c) and
 * names it in the CTS, so both sides agree without extra messages.
 */
#ifndef TDM_P2P_PROTO_H
#define TDM_P2P_PROTO_H

#include <stdint.h>

typedef enum {
    TDM_PROTO_PIPELINE = 0, /* two copies through the rings (DATA cells) */
    TDM_PROTO_COUNT
} tdm_proto_id_t;

/* Pick the protocol for a matched rendezvous; see select.c for the rules. */
tdm_proto_id_t tdm_p2p_select(uint8_t send_mode, uint64_t size, int peer_world);
const char *tdm_proto_name(tdm_proto_id_t id);

#endif
