/* SPDX-License-Identifier: BSD-3-Clause */
/* RPUT: the receiver answers the RTS with a CTS describing its buffer; the
 * sender writes the whole message with process_vm_writev, then sends FIN. The
 * receiver's CPU stays free: Table II's choice for Send x Irecv. */
#include "../p2p_impl.h"

/* Stages: the split machinery's (rndv_cma.c): COPY, then WAIT_FIN when the peer
 * still copies; a failed copy hands the rest to the pipeline. */

static uint64_t rput_split(uint64_t total) {
    (void)total;
    return 0;
}

const tdm_proto_t tdm_proto_rput = {
    .name = "rndv/rput/cma",
    .desc = "the receiver answers with a CTS naming its buffer; the sender writes the whole "
            "message with process_vm_writev, then sends FIN",
    .caps = TDM_CAP_CMA,
    .split = rput_split,
    .push = tdm_rndv_split_push,
    .show = tdm_rndv_split_show,
    .recv_start = tdm_rndv_split_recv_start,
    .send_cts = tdm_rndv_split_send_cts,
    .on_fin = tdm_rndv_split_on_fin,
    .on_pull = tdm_rndv_split_on_pull,
    .fallback = tdm_rndv_split_fallback,
};
