/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Broadcast. Binomial tree for small messages (log p rounds, the whole message
 * each). For large ones (van de Geijn) the root scatters p pieces and a ring
 * allgather assembles them: every rank sends about 2 * n bytes whatever p.
 * The scatter/ring works on bytes, so a non-contiguous type is packed at the
 * root and unpacked at the others. Linear (every size when ranks outnumber
 * cores; figures in select.c): the root sends to every rank, so each waits for
 * the root alone and no rank must be scheduled to forward.
 */
#include "select.h"

void tdm_coll_bcast_binomial(tdm_sched_t *s, void *buf, size_t count, tdm_dtype_t *dt, int root) {
    int p, r = tdm_sched_rank(s, &p);
    int vr = tdm_coll_wrap(r - root, p);
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            tdm_sched_recv(s, buf, count, dt, tdm_coll_wrap(vr - mask + root, p), 0);
            tdm_sched_round(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            tdm_sched_send(s, buf, count, dt, tdm_coll_wrap(vr + mask + root, p), TDM_SCHED_AHEAD);
    tdm_sched_round(s);
}

void tdm_coll_bcast_linear(tdm_sched_t *s, void *buf, size_t count, tdm_dtype_t *dt, int root) {
    int p, r = tdm_sched_rank(s, &p);
    if (r == root) {
        for (int i = 1; i < p; i++)
            tdm_sched_send(s, buf, count, dt, tdm_coll_wrap(root + i, p), TDM_SCHED_AHEAD);
    } else {
        tdm_sched_recv(s, buf, count, dt, root, 0);
    }
    tdm_sched_round(s);
}

void tdm_coll_bcast_scatter_ring(tdm_sched_t *s, void *buf, size_t count, tdm_dtype_t *dt,
                                 int root) {
    int p, r = tdm_sched_rank(s, &p);
    int vr = (r - root + p) % p;
    tdm_dtype_t *byte = tdm_coll_byte_type();
    size_t n = count * dt->size;
    char *b;
    if (dt->contig) {
        b = (char *)buf + dt->true_lb;
    } else {
        b = tdm_sched_tmp(s, n);
        if (!b)
            return;
        if (vr == 0)
            tdm_sched_copy(s, buf, count, dt, b, n, byte);
    }
    /* scatter: block i of the byte stream goes to relative rank i */
    if (vr == 0) {
        for (int i = 1; i < p; i++)
            tdm_sched_send(s, b + tdm_coll_blk_start(n, p, i), tdm_coll_blk_len(n, p, i), byte,
                           (i + root) % p, TDM_SCHED_AHEAD);
    } else {
        tdm_sched_recv(s, b + tdm_coll_blk_start(n, p, vr), tdm_coll_blk_len(n, p, vr), byte, root,
                       0);
    }
    tdm_sched_round(s);
    /* ring allgather of the blocks */
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (vr - i + p) % p, rb = (vr - i - 1 + p) % p;
        tdm_sched_recv(s, b + tdm_coll_blk_start(n, p, rb), tdm_coll_blk_len(n, p, rb), byte, left,
                       0);
        tdm_sched_send(s, b + tdm_coll_blk_start(n, p, sb), tdm_coll_blk_len(n, p, sb), byte, right,
                       0);
        tdm_sched_round(s);
    }
    if (!dt->contig && vr != 0)
        tdm_sched_copy(s, b, n, byte, buf, count, dt);
    tdm_sched_round(s);
}

int tdm_coll_bcast(void *buf, size_t count, tdm_dtype_t *dt, int root, tdm_comm_t *comm,
                   tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    tdm_sched_immediate(s, count * dt->size);
    const tdm_comm_nodes_t *nm;
    if (comm->size > 1 &&
        (nm = tdm_coll_node_choose(TDM_COLL_BCAST, comm, count * dt->size, true)) != NULL) {
        tdm_coll_bcast_node(s, nm, buf, count, dt, root);
    } else if (comm->size > 1) {
        int algo = tdm_coll_choose(TDM_COLL_BCAST, count * dt->size, comm->size, true);
        if (algo == TDM_BCAST_SCATTER_RING)
            tdm_coll_bcast_scatter_ring(s, buf, count, dt, root);
        else if (algo == TDM_BCAST_LINEAR)
            tdm_coll_bcast_linear(s, buf, count, dt, root);
        else
            tdm_coll_bcast_binomial(s, buf, count, dt, root);
    }
    return tdm_sched_run(s, req_p);
}
