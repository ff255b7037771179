/* SPDX-License-Identifier: BSD-3-Clause */
/* Barrier by dissemination: ceil(log2 p) rounds, in round k every rank signals
 * rank + 2^k and hears from rank - 2^k (works for any p, no fold step). */
#include "select.h"

int tdm_coll_barrier(tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    int p = comm->size, r = comm->rank;
    tdm_dtype_t *byte = tdm_coll_byte_type();
    for (int k = 1; k < p; k <<= 1) {
        tdm_sched_recv(s, NULL, 0, byte, (r - k + p) % p, 0);
        tdm_sched_send(s, NULL, 0, byte, (r + k) % p, 0);
        tdm_sched_round(s);
    }
    return tdm_sched_run(s, req_p);
}
