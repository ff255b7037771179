/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one place where protocol decisions are made. Today every rendezvous uses
 * the two-copy pipeline; the CMA family (RGET, RPUT, COOP, RTR) will be chosen
 * here from the send and receive call types, the copy load and the size.
 */
#include "proto.h"

static const char *const names[TDM_PROTO_COUNT] = {
    [TDM_PROTO_PIPELINE] = "rndv/pipeline/shm",
};

const char *tdm_proto_name(tdm_proto_id_t id) {
    return id < TDM_PROTO_COUNT ? names[id] : "unknown";
}

tdm_proto_id_t tdm_p2p_select(uint8_t send_mode, uint64_t size, int peer_world) {
    (void)send_mode;
    (void)size;
    (void)peer_world;
    return TDM_PROTO_PIPELINE;
}
