/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's performance variables (pvars.def) as a table for src/mpit and the printer. */
#include "p2p_impl.h"
#include "../base/params.h"

static uint64_t tdm_p2p_pv_eager_long_msgs(int i) {
    (void)i;
    return tdm_p2p_stats.eager_msgs - tdm_p2p_stats.short_msgs;
}
static uint64_t tdm_p2p_pv_eager_long_bytes(int i) {
    (void)i;
    return tdm_p2p_stats.eager_bytes - tdm_p2p_stats.short_bytes;
}
static uint64_t tdm_p2p_pv_ring_bytes(int i) {
    (void)i;
    return tdm_shm.ring_bytes;
}
static uint64_t tdm_p2p_pv_requests_in_use(int i) {
    (void)i;
    return tdm_req_in_use();
}

const tdm_pvar_desc_t tdm_p2p_pvars[TDM_P2P_PV_COUNT] = {
#define TDM_PVAR(_id, _cls, _verb, _cat, _desc, ...)                                               \
    [TDM_P2P_PV_##_id] = {.name = "tandem_" #_id,                                                  \
                          .desc = _desc,                                                           \
                          .category = _cat,                                                        \
                          .cls = TDM_PVC_##_cls,                                                   \
                          .verbosity = TDM_PVERB_##_verb,                                          \
                          __VA_ARGS__},
#include "pvars.def"
#undef TDM_PVAR
};
const int tdm_p2p_npvars = TDM_P2P_PV_COUNT;
