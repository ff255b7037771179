/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scan and Exscan by recursive doubling over partner rank ^ 2^k: `partial`
 * holds the reduction of the block of ranks exchanged so far; data from a
 * lower partner is always the left operand, so non-commutative ops reduce in
 * rank order.
 */
#include "select.h"

int tdm_coll_scan(const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt, tdm_op_t *op,
                  bool exclusive, tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    int p = comm->size, r = comm->rank;
    const void *src = sbuf == TDM_COLL_IN_PLACE ? rbuf : sbuf;
    void *partial = tdm_sched_tmp_items(s, count, dt), *t = tdm_sched_tmp_items(s, count, dt);
    if (!partial || !t)
        return tdm_sched_run(s, req_p);
    tdm_sched_copy(s, src, count, dt, partial, count, dt);
    if (!exclusive && sbuf != TDM_COLL_IN_PLACE)
        tdm_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    bool have = false; /* exscan: rbuf holds a value */
    for (int mask = 1; mask < p; mask <<= 1) {
        int dst = r ^ mask;
        if (dst >= p)
            continue;
        tdm_sched_recv(s, t, count, dt, dst, 0);
        tdm_sched_send(s, partial, count, dt, dst, 0);
        tdm_sched_round(s);
        if (r > dst) {
            tdm_sched_reduce(s, t, partial, count, dt, op);
            if (!exclusive) {
                tdm_sched_reduce(s, t, rbuf, count, dt, op);
            } else if (!have) {
                tdm_sched_copy(s, t, count, dt, rbuf, count, dt);
                have = true;
            } else {
                tdm_sched_reduce(s, t, rbuf, count, dt, op);
            }
        } else if (op->commute) {
            tdm_sched_reduce(s, t, partial, count, dt, op);
        } else {
            tdm_sched_reduce(s, partial, t, count, dt, op);
            TDM_SWAP(void *, partial, t);
        }
    }
    tdm_sched_round(s);
    return tdm_sched_run(s, req_p);
}
