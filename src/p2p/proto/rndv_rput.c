/* SPDX-License-Identifier: BSD-3-Clause */
/* RPUT: the receiver answers the RTS with a CTS describing its buffer; the
 * sender writes the whole message with process_vm_writev, then sends FIN. The
 * receiver's CPU stays free: Table II's choice for Send x Irecv. */
#include "../p2p_impl.h"

static uint64_t rput_split(uint64_t total) {
    (void)total;
    return 0;
}

const tdm_proto_t tdm_proto_rput = {
    .name = "rndv/rput/cma",
    .caps = TDM_CAP_CMA,
    .split = rput_split,
    .recv_start = tdm_rndv_split_recv_start,
    .send_cts = tdm_rndv_split_send_cts,
};
