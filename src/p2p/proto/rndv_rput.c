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

const tdm_proto_t tdm_proto_rput = TDM_RNDV_SPLIT_PROTO(
    "rndv/rput/cma", rput_split, tdm_rndv_split_send_cts,
    "the receiver answers with a CTS naming its buffer; the sender writes the whole "
    "message with process_vm_writev, then sends FIN");
