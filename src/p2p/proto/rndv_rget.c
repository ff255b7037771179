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

const tdm_proto_t tdm_proto_rget = TDM_RNDV_SPLIT_PROTO(
    "rndv/rget/cma", rget_split, NULL,
    "the receiver reads the whole message with process_vm_readv, then sends FIN; the "
    "sender's CPU stays free");
