/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prints the rendezvous decision table for the tunables in the environment,
 * exactly as TANDEM_PROTO_INFO=1 shows it at start-up. The golden test compares
 * the output with a checked-in file, so a change of selection policy shows up in
 * review (the .txt files beside this one).
 */
#include "base/params.h"
#include "p2p/p2p_impl.h"

#include <stdio.h>

int main(void) {
    tdm_params_init();
    tdm_p2p.eager_limit = tdm_p2p_eager_limit_param(TDM_PARAM_I(OVERSUBSCRIBED) != 0);
    tdm_p2p.eager_limit_remote = tdm_p2p_eager_limit_remote_param();
    tdm_p2p.copy_chunk = tdm_p2p_copy_chunk_param(TDM_PARAM_I(OVERSUBSCRIBED) != 0);
    if (tdm_p2p_select_init() != 0)
        return 1;
    tdm_p2p_select_print(stdout);
    return 0;
}
