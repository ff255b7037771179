/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduce. Binomial tree: a rank receives its children's partial results and
 * combines them with its own, then sends up. For a non-commutative op the tree
 * is rooted at rank 0 in rank order, where a child's subtree always holds
 * higher ranks than its parent's part, so acc = acc op child keeps rank order;
 * rank 0 then forwards the result to the root. For large messages with a
 * commutative op: ring reduce-scatter (each rank ends with one fully reduced
 * block, moving about n bytes in all) and a gather of the blocks at the root.
 * Linear (when ranks outnumber cores, up to TANDEM_COLL_LINEAR_TMP_MAX held at
 * the root; figures in select.c): every rank sends to the root, which combines
 * the contributions in rank order (any op).
 */
#include "select.h"

void tdm_coll_reduce_binomial(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                              tdm_dtype_t *dt, tdm_op_t *op, int root) {
    int p, r = tdm_sched_rank(s, &p);
    bool commute = op->commute;
    const void *acc = sbuf == TDM_COLL_IN_PLACE ? rbuf : sbuf;
    int vr = commute ? tdm_coll_wrap(r - root, p) : r;
    int base = commute ? root : 0;
    void *spare = NULL, *owned = NULL;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            tdm_sched_send(s, acc, count, dt, tdm_coll_wrap((vr & ~mask) + base, p), 0);
            tdm_sched_round(s);
            break;
        }
        int child = vr | mask;
        if (child < p && r == root && acc == sbuf) {
            /* the root's first child lands in rbuf: rbuf = sbuf op child, no
             * temporary and no copy at the end */
            tdm_sched_recv(s, rbuf, count, dt, tdm_coll_wrap(child + base, p), 0);
            tdm_sched_round(s);
            tdm_sched_reduce(s, acc, rbuf, count, dt, op);
            acc = rbuf;
        } else if (child < p && acc == rbuf && commute) {
            /* rbuf (the root's) stays the accumulator: rbuf = child op rbuf */
            void *b = spare ? spare : tdm_sched_tmp_items(s, count, dt);
            if (!b)
                return;
            spare = b;
            tdm_sched_recv(s, b, count, dt, tdm_coll_wrap(child + base, p), 0);
            tdm_sched_round(s);
            tdm_sched_reduce(s, b, rbuf, count, dt, op);
        } else if (child < p) {
            void *b = spare ? spare : tdm_sched_tmp_items(s, count, dt);
            if (!b)
                return;
            tdm_sched_recv(s, b, count, dt, tdm_coll_wrap(child + base, p), 0);
            tdm_sched_round(s);
            tdm_sched_reduce(s, acc, b, count, dt, op);
            spare = owned;
            acc = owned = b;
        }
    }
    if (vr == 0) {
        if (r == root) {
            if (acc != rbuf)
                tdm_sched_copy(s, acc, count, dt, rbuf, count, dt);
        } else {
            tdm_sched_send(s, acc, count, dt, root, 0);
        }
    } else if (r == root) {
        tdm_sched_recv(s, rbuf, count, dt, 0, 0);
    }
    tdm_sched_round(s);
}

void tdm_coll_reduce_linear(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                            tdm_dtype_t *dt, tdm_op_t *op, int root) {
    int p, r = tdm_sched_rank(s, &p);
    if (r != root) {
        tdm_sched_send(s, sbuf, count, dt, root, 0);
        tdm_sched_round(s);
        return;
    }
    /* block i of t holds rank i's data, the root's own copied in; folded left,
     * t[i] = t[i-1] op t[i], as the binomial tree does in rank order */
    char *t = tdm_sched_tmp_items(s, (size_t)p * count, dt);
    if (!t)
        return;
    for (int i = 0; i < p; i++)
        if (i != r)
            tdm_sched_recv(s, tdm_coll_at(t, (size_t)i * count, dt), count, dt, i, TDM_SCHED_AHEAD);
    tdm_sched_copy(s, sbuf == TDM_COLL_IN_PLACE ? rbuf : sbuf, count, dt,
                   tdm_coll_at(t, (size_t)r * count, dt), count, dt);
    tdm_sched_round(s);
    for (int i = 1; i < p; i++)
        tdm_sched_reduce(s, tdm_coll_at(t, (size_t)(i - 1) * count, dt),
                         tdm_coll_at(t, (size_t)i * count, dt), count, dt, op);
    tdm_sched_copy(s, tdm_coll_at(t, (size_t)(p - 1) * count, dt), count, dt, rbuf, count, dt);
    tdm_sched_round(s);
}

void tdm_coll_reduce_scatter_gather(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                                    tdm_dtype_t *dt, tdm_op_t *op, int root) {
    int p, r = tdm_sched_rank(s, &p);
    const void *src = sbuf == TDM_COLL_IN_PLACE ? rbuf : sbuf;
    char *work = tdm_sched_tmp_items(s, count, dt);
    if (!work)
        return;
    /* each block of work is received once and then combined with our own block
     * of src (the op commutes); the first block sent leaves from src: src is
     * never copied (as in the ring Allreduce) */
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
        size_t rs = tdm_coll_blk_start(count, p, rb), rl = tdm_coll_blk_len(count, p, rb);
        tdm_sched_recv(s, tdm_coll_at(work, rs, dt), rl, dt, left, 0);
        tdm_sched_send(s, tdm_coll_at(i == 0 ? src : work, tdm_coll_blk_start(count, p, sb), dt),
                       tdm_coll_blk_len(count, p, sb), dt, right, 0);
        tdm_sched_round(s);
        tdm_sched_reduce(s, tdm_coll_at(src, rs, dt), tdm_coll_at(work, rs, dt), rl, dt, op);
    }
    if (p == 1)
        tdm_sched_copy(s, src, count, dt, work, count, dt);
    /* rank j now holds block (j + 1) % p */
    if (r == root) {
        for (int j = 0; j < p; j++) {
            int b = (j + 1) % p;
            size_t st = tdm_coll_blk_start(count, p, b), len = tdm_coll_blk_len(count, p, b);
            if (j == r)
                tdm_sched_copy(s, tdm_coll_at(work, st, dt), len, dt, tdm_coll_at(rbuf, st, dt),
                               len, dt);
            else
                tdm_sched_recv(s, tdm_coll_at(rbuf, st, dt), len, dt, j, TDM_SCHED_AHEAD);
        }
    } else {
        int b = (r + 1) % p;
        tdm_sched_send(s, tdm_coll_at(work, tdm_coll_blk_start(count, p, b), dt),
                       tdm_coll_blk_len(count, p, b), dt, root, 0);
    }
    tdm_sched_round(s);
}

int tdm_coll_reduce(const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt, tdm_op_t *op,
                    int root, tdm_comm_t *comm, tdm_req_t **req_p) {
    const tdm_comm_nodes_t *nm =
        comm->size > 1 ? tdm_coll_node_choose(TDM_COLL_REDUCE, comm, count * dt->size, op->commute)
                       : NULL;
    int algo =
        nm ? -1 : tdm_coll_choose(TDM_COLL_REDUCE, count * dt->size, comm->size, op->commute);
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    tdm_sched_immediate(s, count * dt->size);
    if (nm)
        tdm_coll_reduce_node(s, nm, sbuf, rbuf, count, dt, op, root);
    else if (algo == TDM_REDUCE_SCATTER_GATHER)
        tdm_coll_reduce_scatter_gather(s, sbuf, rbuf, count, dt, op, root);
    else if (algo == TDM_REDUCE_LINEAR)
        tdm_coll_reduce_linear(s, sbuf, rbuf, count, dt, op, root);
    else
        tdm_coll_reduce_binomial(s, sbuf, rbuf, count, dt, op, root);
    return tdm_sched_run(s, req_p);
}
