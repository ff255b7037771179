/* SPDX-License-Identifier: BSD-3-Clause */
/* The collectives' performance variables (pvars.def) as a table for src/mpit and the printer. */
#include "select.h"
#include "../base/params.h"

const tdm_pvar_desc_t tdm_coll_pvars[TDM_COLL_PV_COUNT] = {
#define TDM_PVAR(_id, _cls, _verb, _cat, _desc, ...)                                               \
    [TDM_COLL_PV_##_id] = {.name = "tandem_" #_id,                                                 \
                           .desc = _desc,                                                          \
                           .category = _cat,                                                       \
                           .cls = TDM_PVC_##_cls,                                                  \
                           .verbosity = TDM_PVERB_##_verb,                                         \
                           __VA_ARGS__},
#include "pvars.def"
#undef TDM_PVAR
};
const int tdm_coll_npvars = TDM_COLL_PV_COUNT;
