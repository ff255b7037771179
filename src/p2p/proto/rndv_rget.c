/* SPDX-License-Identifier: BSD-3-Clause */
/* RGET: the receiver reads the whole message from the sender's buffer with
 * process_vm_readv, then sends FIN. Two control packets (RTS, FIN), and the
 * sender's CPU stays free: Table II's choice for Isend x Recv. */
#include "../p2p_impl.h"

/* Stages: the split machinery's (rndv_cma.c): COPY, then WAIT_FIN when the peer
 * still copies; a failed copy hands the rest to the pipeline. */

static uint64_t rget_split(uint64_t total) {
    return total;
}

const tdm_proto_t tdm_proto_rget = {
    .name = "rndv/rget/cma",
    .desc = "the receiver reads the whole message with process_vm_readv, then sends FIN; the "
            "sender's CPU stays free",
    .caps = TDM_CAP_CMA,
    .split = rget_split,
    .push = tdm_rndv_split_push,
    .show = tdm_rndv_split_show,
    .recv_start = tdm_rndv_split_recv_start,
    .send_cts = NULL, /* the sender never gets a CTS: FIN completes it */
    .on_fin = tdm_rndv_split_on_fin,
    .on_pull = tdm_rndv_split_on_pull,
    .fallback = tdm_rndv_split_fallback,
};
