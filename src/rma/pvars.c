/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided communication's performance variables (pvars.def), and their printer. */
#include "rma_impl.h"

#include <stdio.h>

enum {
#define TDM_PVAR(_id, ...) TDM_RMA_PV_##_id,
#include "pvars.def"
#undef TDM_PVAR
    TDM_RMA_PV_COUNT
};

const tdm_pvar_desc_t tdm_rma_pvars[TDM_RMA_PV_COUNT] = {
#define TDM_PVAR(_id, ...) TDM_PVAR_DESC(TDM_RMA_PV_##_id, _id, __VA_ARGS__)
#include "pvars.def"
#undef TDM_PVAR
};
const int tdm_rma_npvars = TDM_RMA_PV_COUNT;

void tdm_rma_stats_print(int rank) {
    static const char *const kinds[] = {"put", "get", "acc", "get_acc", "fop", "cas"};
    static const char *const paths[] = {"load/store", "atomic", "locked", "cma", "msg"};
    uint64_t any = 0;
    for (int k = 0; k < TDM_RMA_NKINDS; k++)
        for (int p = 0; p < TDM_RMA_NPATHS; p++)
            any += tdm_rma_ops[k][p];
    if (!any && !tdm_rma_queued)
        return;
    char line[768];
    int off = snprintf(line, sizeof(line), "tandem: rank %d rma operations:", rank);
    for (int k = 0; k < TDM_RMA_NKINDS; k++) {
        const tdm_pvar_desc_t *d = &tdm_rma_pvars[TDM_RMA_PV_rma_put + k];
        for (int p = 0; p < TDM_RMA_NPATHS && off < (int)sizeof(line); p++) {
            uint64_t v = tdm_pvar_u64(d, NULL, p);
            if (v)
                off += snprintf(line + off, sizeof(line) - (size_t)off, " %s/%s %llu", kinds[k],
                                paths[p], (unsigned long long)v);
        }
    }
    fprintf(stderr, "%s\n", line);
    fprintf(
        stderr,
        "tandem: rank %d rma issuing: direct %llu, queued %llu, combined %llu in %llu "
        "calls, delayed->eager %llu, pool clean-ups %llu, "
        "lock waits %llu, lock hand-offs %llu, lock wake-ups %llu, messages served %llu\n",
        rank, (unsigned long long)tdm_pvar_u64(&tdm_rma_pvars[TDM_RMA_PV_rma_direct], NULL, 0),
        (unsigned long long)tdm_pvar_u64(&tdm_rma_pvars[TDM_RMA_PV_rma_queued], NULL, 0),
        (unsigned long long)tdm_pvar_u64(&tdm_rma_pvars[TDM_RMA_PV_rma_combined], NULL, 0),
        (unsigned long long)tdm_pvar_u64(&tdm_rma_pvars[TDM_RMA_PV_rma_combined_calls], NULL, 0),
        (unsigned long long)tdm_pvar_u64(&tdm_rma_pvars[TDM_RMA_PV_rma_to_eager], NULL, 0),
        (unsigned long long)tdm_pvar_u64(&tdm_rma_pvars[TDM_RMA_PV_rma_cleanups], NULL, 0),
        (unsigned long long)tdm_pvar_u64(&tdm_rma_pvars[TDM_RMA_PV_rma_lock_waits], NULL, 0),
        (unsigned long long)tdm_pvar_u64(&tdm_rma_pvars[TDM_RMA_PV_rma_lock_handoffs], NULL, 0),
        (unsigned long long)tdm_pvar_u64(&tdm_rma_pvars[TDM_RMA_PV_rma_lock_wakeups], NULL, 0),
        (unsigned long long)tdm_pvar_u64(&tdm_rma_pvars[TDM_RMA_PV_rma_msg_served], NULL, 0));
}
