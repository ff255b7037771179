/* SPDX-License-Identifier: BSD-3-Clause */
/* The communicator-bound performance variables (pvars.def) as a table for src/mpit. */
#include "comm.h"
#include "../base/params.h"

enum {
#define TDM_PVAR(_id, ...) TDM_COMM_PV_##_id,
#include "pvars.def"
#undef TDM_PVAR
    TDM_COMM_PV_COUNT
};

const tdm_pvar_desc_t tdm_comm_pvars[TDM_COMM_PV_COUNT] = {
#define TDM_PVAR(_id, ...) TDM_PVAR_DESC(TDM_COMM_PV_##_id, _id, __VA_ARGS__)
#include "pvars.def"
#undef TDM_PVAR
};
const int tdm_comm_npvars = TDM_COMM_PV_COUNT;
