/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduce_scatter(_block): a binomial reduce of the whole vector to rank 0
 * (rank order, so any op) and a linear scatterv of the blocks.
 */
#include "select.h"

#include <stdlib.h>

int tdm_coll_reduce_scatter(const void *sbuf, void *rbuf, tdm_coll_arr_t rcounts, size_t rcount,
                            tdm_dtype_t *dt, tdm_op_t *op, tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    int p = comm->size, r = comm->rank;
    /* 64-bit: the sum of int counts may pass INT_MAX */
    int64_t *displs = tdm_sched_tmp(s, (size_t)p * sizeof(*displs));
    if (!displs)
        return tdm_sched_run(s, req_p);
    size_t total = 0;
    for (int i = 0; i < p; i++) {
        displs[i] = (int64_t)total;
        total += tdm_coll_count_of(rcounts, rcount, i);
    }
    const void *src = sbuf == TDM_COLL_IN_PLACE ? rbuf : sbuf;
    void *full = r == 0 ? tdm_sched_tmp_items(s, total, dt) : NULL;
    if (r == 0 && !full)
        return tdm_sched_run(s, req_p);
    tdm_coll_reduce_binomial(s, src, full, total, dt, op, 0);
    tdm_coll_scatterv_linear(s, full, rcounts, (tdm_coll_arr_t){.p = displs, .wide = true}, rcount,
                             dt, rbuf, tdm_coll_count_of(rcounts, rcount, r), dt, 0);
    return tdm_sched_run(s, req_p);
}
