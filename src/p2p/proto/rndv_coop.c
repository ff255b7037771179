/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * COOP (seed 000 §II-A1): after the CTS the receiver reads the first part while
 * the sender writes the rest, on two cores at once; each sends FIN, and a side
 * completes when its part is done and the peer's FIN has come. The split is
 * select.c's (TANDEM_COOP_RATIO percent to the receiver, page-aligned).
 */
#include "../p2p_impl.h"

/* Stages: the split machinery's (rndv_cma.c): COPY, then WAIT_FIN when the peer
 * still copies; a failed copy hands the rest to the pipeline. */

const tdm_proto_t tdm_proto_coop = TDM_RNDV_SPLIT_PROTO(
    "rndv/coop/cma", tdm_p2p_select_coop_split, tdm_rndv_split_send_cts,
    "the receiver reads the first part while the sender writes the rest, on two cores at "
    "once; each sends FIN");
