/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Allreduce. Recursive doubling (small messages, any op): with p = 2^k + rem,
 * the first 2 * rem ranks fold in pairs (the odd one keeps lower-op-higher),
 * 2^k ranks exchange and combine in log p rounds, the folded ranks get the
 * result back. New ranks keep the old order and the lower partner's data is
 * always the left operand, so non-commutative ops reduce in rank order.
 * Ring (large messages, commutative ops): ring reduce-scatter then ring
 * allgather in the receive buffer, 2 (p-1)/p n bytes sent per rank.
 * Linear (small messages when ranks outnumber cores, select.c): linear reduce to rank 0,
 * linear broadcast from it; each rank is scheduled twice whatever p.
 */
#include "select.h"

void tdm_coll_allreduce_recdbl(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                               tdm_dtype_t *dt, tdm_op_t *op) {
    int p, r = tdm_sched_rank(s, &p);
    /* the receive buffer is the accumulator (no copy in or out) until a
     * non-commutative combination swaps it with the temporary */
    void *acc = rbuf, *b = tdm_sched_tmp_items(s, count, dt);
    if (!b)
        return;
    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    int rem = p - pof2, newrank;
    /* With no ranks to fold, the first exchange can leave from sbuf and land in
     * rbuf, combined as sbuf op rbuf when our data is the left operand: no
     * copy of sbuf. 2 ranks, medians of 6 interleaved runs: 1 KiB 0.56 -> 0.52 us,
     * 16 KiB 4.75 -> 4.13 us (Open MPI 0.63, 9.95). Every exchange posts its
     * send before its receive: the partner's wait ends sooner, and a small
     * message that arrived meanwhile completes at once (medians of 10-12
     * interleaved runs, 8 B: 2 ranks 0.232 -> 0.195 us, 4 ranks on 2 cores
     * 4.57 -> 4.10). */
    int first = -1;
    if (sbuf != TDM_COLL_IN_PLACE && rem == 0 && p > 1 && (op->commute || (r ^ 1) > r)) {
        first = r ^ 1;
        tdm_sched_send(s, sbuf, count, dt, first, 0);
        tdm_sched_recv(s, rbuf, count, dt, first, 0);
        tdm_sched_round(s);
        tdm_sched_reduce(s, sbuf, rbuf, count, dt, op);
    } else if (sbuf != TDM_COLL_IN_PLACE) {
        tdm_sched_copy(s, sbuf, count, dt, acc, count, dt);
    }
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            tdm_sched_send(s, acc, count, dt, r + 1, 0);
            newrank = -1;
        } else {
            tdm_sched_recv(s, b, count, dt, r - 1, 0);
            tdm_sched_round(s);
            tdm_sched_reduce(s, b, acc, count, dt, op);
            newrank = r / 2;
        }
    } else {
        newrank = r - rem;
    }
    tdm_sched_round(s);
    if (newrank >= 0) {
        for (int mask = first < 0 ? 1 : 2; mask < pof2; mask <<= 1) {
            int nd = newrank ^ mask;
            int dst = nd < rem ? nd * 2 + 1 : nd + rem;
            tdm_sched_send(s, acc, count, dt, dst, 0);
            tdm_sched_recv(s, b, count, dt, dst, 0);
            tdm_sched_round(s);
            if (dst < r || op->commute) {
                tdm_sched_reduce(s, b, acc, count, dt, op);
            } else {
                tdm_sched_reduce(s, acc, b, count, dt, op);
                TDM_SWAP(void *, acc, b);
            }
        }
    }
    if (r < 2 * rem) {
        if (r % 2)
            tdm_sched_send(s, acc, count, dt, r - 1, 0);
        else
            tdm_sched_recv(s, rbuf, count, dt, r + 1, 0);
    }
    if (!(r < 2 * rem && r % 2 == 0) && acc != rbuf)
        tdm_sched_copy(s, acc, count, dt, rbuf, count, dt);
    tdm_sched_round(s);
}

void tdm_coll_allreduce_ring(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                             tdm_dtype_t *dt, tdm_op_t *op) {
    int p, r = tdm_sched_rank(s, &p);
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    if (sbuf != TDM_COLL_IN_PLACE) {
        /* Each block of rbuf is received once in the reduce-scatter and then
         * combined with the caller's own block from sbuf (the op commutes), and
         * the first block sent leaves from sbuf: no copy of sbuf into rbuf.
         * 2 ranks, medians of 4 interleaved runs: 4 MiB 676 -> 507 us, 256 KiB
         * 61.6 -> 41 us. */
        for (int i = 0; i < p - 1; i++) {
            int sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
            size_t rs = tdm_coll_blk_start(count, p, rb), rl = tdm_coll_blk_len(count, p, rb);
            tdm_sched_recv(s, tdm_coll_at(rbuf, rs, dt), rl, dt, left, 0);
            tdm_sched_send(s,
                           tdm_coll_at(i == 0 ? sbuf : rbuf, tdm_coll_blk_start(count, p, sb), dt),
                           tdm_coll_blk_len(count, p, sb), dt, right, 0);
            tdm_sched_round(s);
            tdm_sched_reduce(s, tdm_coll_at(sbuf, rs, dt), tdm_coll_at(rbuf, rs, dt), rl, dt, op);
        }
        if (p == 1)
            tdm_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    } else {
        void *rt = tdm_sched_tmp_items(s, tdm_coll_blk_len(count, p, 0), dt);
        if (!rt)
            return;
        for (int i = 0; i < p - 1; i++) {
            int sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
            tdm_sched_recv(s, rt, tdm_coll_blk_len(count, p, rb), dt, left, 0);
            tdm_sched_send(s, tdm_coll_at(rbuf, tdm_coll_blk_start(count, p, sb), dt),
                           tdm_coll_blk_len(count, p, sb), dt, right, 0);
            tdm_sched_round(s);
            tdm_sched_reduce(s, rt, tdm_coll_at(rbuf, tdm_coll_blk_start(count, p, rb), dt),
                             tdm_coll_blk_len(count, p, rb), dt, op);
        }
    }
    /* rank j holds block (j + 1) % p; pass the blocks around the ring */
    for (int i = 0; i < p - 1; i++) {
        int sb = (r + 1 - i + p) % p, rb = (r - i + p) % p;
        tdm_sched_recv(s, tdm_coll_at(rbuf, tdm_coll_blk_start(count, p, rb), dt),
                       tdm_coll_blk_len(count, p, rb), dt, left, 0);
        tdm_sched_send(s, tdm_coll_at(rbuf, tdm_coll_blk_start(count, p, sb), dt),
                       tdm_coll_blk_len(count, p, sb), dt, right, 0);
        tdm_sched_round(s);
    }
}

void tdm_coll_allreduce_linear(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                               tdm_dtype_t *dt, tdm_op_t *op) {
    int p, r = tdm_sched_rank(s, &p);
    if (r == 0) {
        tdm_coll_reduce_linear(s, sbuf, rbuf, count, dt, op, 0);
    } else {
        tdm_sched_send(s, sbuf == TDM_COLL_IN_PLACE ? rbuf : sbuf, count, dt, 0, 0);
        tdm_sched_round(s); /* in place, the send leaves rbuf before the result lands */
    }
    tdm_coll_bcast_linear(s, rbuf, count, dt, 0);
}

int tdm_coll_allreduce(const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt, tdm_op_t *op,
                       tdm_comm_t *comm, tdm_req_t **req_p) {
    const tdm_comm_nodes_t *nm =
        comm->size > 1
            ? tdm_coll_node_choose(TDM_COLL_ALLREDUCE, comm, count * dt->size, op->commute)
            : NULL;
    int algo =
        nm ? -1 : tdm_coll_choose(TDM_COLL_ALLREDUCE, count * dt->size, comm->size, op->commute);
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    tdm_sched_immediate(s, count * dt->size);
    if (nm)
        tdm_coll_allreduce_node(s, nm, sbuf, rbuf, count, dt, op);
    else if (algo == TDM_ALLREDUCE_RING)
        tdm_coll_allreduce_ring(s, sbuf, rbuf, count, dt, op);
    else if (algo == TDM_ALLREDUCE_LINEAR && comm->size > 1)
        tdm_coll_allreduce_linear(s, sbuf, rbuf, count, dt, op);
    else
        tdm_coll_allreduce_recdbl(s, sbuf, rbuf, count, dt, op);
    return tdm_sched_run(s, req_p);
}
