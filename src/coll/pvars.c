/* SPDX-License-Identifier: BSD-3-Clause */
/* The collectives' performance variables (pvars.def) as a table for src/mpit and the printer. */
#include "select.h"
#include "../base/params.h"

const tdm_pvar_desc_t tdm_coll_pvars[TDM_COLL_PV_COUNT] = {
#define TDM_PVAR(_id, ...) TDM_PVAR_DESC(TDM_COLL_PV_##_id, _id, __VA_ARGS__)
#include "pvars.def"
#undef TDM_PVAR
};
const int tdm_coll_npvars = TDM_COLL_PV_COUNT;
