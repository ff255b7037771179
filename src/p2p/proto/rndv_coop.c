/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * COOP (seed 000 §II-A1): after the CTS the receiver reads the first part while
 * the sender writes the rest, on two cores at once; each sends FIN, and a side
 * completes when its part is done and the peer's FIN has come. The receiver's
 * share is TANDEM_COOP_RATIO percent (default 50: both cores copy at the same
 * speed here, so equal halves finish together).
 */
#include "../p2p_impl.h"
#include "../../base/params.h"

static uint64_t coop_split(uint64_t total) {
    long long pct = TDM_PARAM_I(COOP_RATIO);
    pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
    /* page-align the boundary so neither side copies a shared page */
    uint64_t split = total * (uint64_t)pct / 100;
    if (split > 4096 && split < total - 4096)
        split &= ~(uint64_t)4095;
    return split;
}

static void coop_recv_start(tdm_req_t *r, const tdm_rts_info_t *rts) {
    tdm_rndv_split_recv_start(r, rts, &tdm_proto_coop);
}

const tdm_proto_t tdm_proto_coop = {
    .name = "rndv/coop/cma",
    .caps = TDM_CAP_CMA,
    .split = coop_split,
    .recv_start = coop_recv_start,
    .send_cts = tdm_rndv_split_send_cts,
};
