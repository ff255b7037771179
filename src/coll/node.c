/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node-aware collectives: a step among the ranks of each node (shared memory), a step
 * among one leader per node (the network), a step within each node again, so that the
 * network is crossed once per node where the collective allows it (MPICH's node_comm /
 * node_roots_comm, Open MPI's han). Each step is one of the flat algorithms run over a
 * view of the schedule (tdm_sched_view: the node's ranks or the leaders, as indices),
 * chosen by the same rules for that many ranks, all on the communicator's collective
 * context and one tag: a pair that talks in two steps does so in two rounds, in order.
 *
 * The leader of a node is its lowest rank; a rooted collective makes the root its
 * node's leader instead, so the data never takes an extra hop on the root's node.
 * Reductions combine within each node in rank order, then node by node in node order:
 * rank order, for a non-commutative op, only when each node's ranks are consecutive
 * (select.c keeps the others flat).
 */
#include "select.h"

#include <stdint.h>
#include <string.h>

/* The leaders, the root's node led by the root. */
static const int *leaders_with(tdm_sched_t *s, const tdm_comm_nodes_t *nm, int root) {
    int rn = nm->node_of[root];
    if (nm->leaders[rn] == root)
        return nm->leaders;
    int *l = tdm_sched_tmp(s, (size_t)nm->n * sizeof(int));
    if (!l)
        return NULL;
    memcpy(l, nm->leaders, (size_t)nm->n * sizeof(int));
    l[rn] = root;
    return l;
}

/* The index among this node's ranks of communicator rank r (one of them). */
static int local_index(const tdm_comm_nodes_t *nm, int r) {
    int i = 0;
    while (i < nm->nlocal - 1 && nm->locals[i] != r)
        i++;
    return i;
}

static void view_locals(tdm_sched_t *s, const tdm_comm_nodes_t *nm) {
    tdm_sched_view(s, nm->locals, nm->nlocal, nm->local);
}

/* ---- one step over the current view, by the flat chooser's rules for its size ---- */

static void bcast_step(tdm_sched_t *s, void *buf, size_t count, tdm_dtype_t *dt, int root) {
    int p;
    tdm_sched_rank(s, &p);
    if (p < 2)
        return;
    int algo = tdm_coll_decide(TDM_COLL_BCAST, count * dt->size, p, true);
    if (algo == TDM_BCAST_SCATTER_RING)
        tdm_coll_bcast_scatter_ring(s, buf, count, dt, root);
    else if (algo == TDM_BCAST_LINEAR)
        tdm_coll_bcast_linear(s, buf, count, dt, root);
    else
        tdm_coll_bcast_binomial(s, buf, count, dt, root);
}

/* sbuf may be TDM_COLL_IN_PLACE at the root only. */
static void reduce_step(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt,
                        tdm_op_t *op, int root) {
    int p;
    tdm_sched_rank(s, &p);
    int algo = p < 2 ? TDM_REDUCE_BINOMIAL /* a copy at most */
                     : tdm_coll_decide(TDM_COLL_REDUCE, count * dt->size, p, op->commute);
    if (algo == TDM_REDUCE_SCATTER_GATHER)
        tdm_coll_reduce_scatter_gather(s, sbuf, rbuf, count, dt, op, root);
    else if (algo == TDM_REDUCE_LINEAR)
        tdm_coll_reduce_linear(s, sbuf, rbuf, count, dt, op, root);
    else
        tdm_coll_reduce_binomial(s, sbuf, rbuf, count, dt, op, root);
}

/* In place in buf. */
static void allreduce_step(tdm_sched_t *s, void *buf, size_t count, tdm_dtype_t *dt, tdm_op_t *op) {
    int p;
    tdm_sched_rank(s, &p);
    if (p < 2)
        return;
    int algo = tdm_coll_decide(TDM_COLL_ALLREDUCE, count * dt->size, p, op->commute);
    if (algo == TDM_ALLREDUCE_RING)
        tdm_coll_allreduce_ring(s, TDM_COLL_IN_PLACE, buf, count, dt, op);
    else if (algo == TDM_ALLREDUCE_LINEAR)
        tdm_coll_allreduce_linear(s, TDM_COLL_IN_PLACE, buf, count, dt, op);
    else
        tdm_coll_allreduce_recdbl(s, TDM_COLL_IN_PLACE, buf, count, dt, op);
}

/* ---- the collectives ---- */

void tdm_coll_barrier_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm) {
    tdm_dtype_t *byte = tdm_coll_byte_type();
    view_locals(s, nm);
    if (nm->local != 0) {
        tdm_sched_send(s, NULL, 0, byte, 0, 0);
        tdm_sched_recv(s, NULL, 0, byte, 0, 0);
        tdm_sched_round(s);
        tdm_sched_view(s, NULL, 0, 0);
        return;
    }
    for (int i = 1; i < nm->nlocal; i++)
        tdm_sched_recv(s, NULL, 0, byte, i, TDM_SCHED_AHEAD);
    tdm_sched_round(s);
    tdm_sched_view(s, nm->leaders, nm->n, nm->node);
    if (tdm_coll_decide(TDM_COLL_BARRIER, 0, nm->n, true) == TDM_BARRIER_LINEAR)
        tdm_coll_barrier_linear(s);
    else
        tdm_coll_barrier_dissemination(s);
    view_locals(s, nm);
    for (int i = 1; i < nm->nlocal; i++)
        tdm_sched_send(s, NULL, 0, byte, i, TDM_SCHED_AHEAD);
    tdm_sched_round(s);
    tdm_sched_view(s, NULL, 0, 0);
}

void tdm_coll_bcast_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, void *buf, size_t count,
                         tdm_dtype_t *dt, int root) {
    int p, me = tdm_sched_rank(s, &p);
    const int *lead = leaders_with(s, nm, root);
    if (!lead)
        return;
    if (lead[nm->node] == me) {
        tdm_sched_view(s, lead, nm->n, nm->node);
        bcast_step(s, buf, count, dt, nm->node_of[root]);
    }
    view_locals(s, nm);
    bcast_step(s, buf, count, dt, local_index(nm, lead[nm->node]));
    tdm_sched_view(s, NULL, 0, 0);
}

void tdm_coll_reduce_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const void *sbuf, void *rbuf,
                          size_t count, tdm_dtype_t *dt, tdm_op_t *op, int root) {
    int p, me = tdm_sched_rank(s, &p);
    const int *lead = leaders_with(s, nm, root);
    if (!lead)
        return;
    int mine = lead[nm->node], lroot = local_index(nm, mine);
    view_locals(s, nm);
    if (me == root) {
        reduce_step(s, sbuf, rbuf, count, dt, op, lroot);
        tdm_sched_view(s, lead, nm->n, nm->node);
        reduce_step(s, TDM_COLL_IN_PLACE, rbuf, count, dt, op, nm->node_of[root]);
    } else if (me == mine) {
        /* the node's partial result goes on from a temporary (rbuf means nothing here) */
        const void *part = sbuf;
        if (nm->nlocal > 1) {
            void *t = tdm_sched_tmp_items(s, count, dt);
            if (!t)
                return;
            reduce_step(s, sbuf, t, count, dt, op, lroot);
            part = t;
        }
        tdm_sched_view(s, lead, nm->n, nm->node);
        reduce_step(s, part, rbuf, count, dt, op, nm->node_of[root]);
    } else {
        reduce_step(s, sbuf, rbuf, count, dt, op, lroot);
    }
    tdm_sched_view(s, NULL, 0, 0);
}

void tdm_coll_allreduce_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const void *sbuf,
                             void *rbuf, size_t count, tdm_dtype_t *dt, tdm_op_t *op) {
    view_locals(s, nm);
    if (nm->local == 0) {
        /* the node's result lands in rbuf, combined with the other nodes' there */
        reduce_step(s, sbuf, rbuf, count, dt, op, 0);
        tdm_sched_view(s, nm->leaders, nm->n, nm->node);
        allreduce_step(s, rbuf, count, dt, op);
        view_locals(s, nm);
    } else {
        /* in place, a non-leader's data is in rbuf, which the result overwrites after it
         * left (the reduce ends with its round) */
        reduce_step(s, sbuf == TDM_COLL_IN_PLACE ? rbuf : sbuf, rbuf, count, dt, op, 0);
    }
    bcast_step(s, rbuf, count, dt, 0);
    tdm_sched_view(s, NULL, 0, 0);
}

/* The blocks are gathered node by node: into rbuf itself when each node's ranks are
 * consecutive, else into a temporary in node order, copied into rank order at the end. */
void tdm_coll_allgather_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const void *sbuf,
                             size_t scount, tdm_dtype_t *sdt, void *rbuf, size_t rcount,
                             tdm_dtype_t *rdt) {
    int p, me = tdm_sched_rank(s, &p);
    char *t = nm->blocks ? rbuf : tdm_sched_tmp_items(s, (size_t)p * rcount, rdt);
    if (!t)
        return;
    size_t base = (size_t)nm->first[nm->node];
    void *mine = tdm_coll_at(rbuf, (size_t)me * rcount, rdt);
    view_locals(s, nm);
    if (nm->local == 0) {
        for (int i = 1; i < nm->nlocal; i++)
            tdm_sched_recv(s, tdm_coll_at(t, (base + (size_t)i) * rcount, rdt), rcount, rdt, i,
                           TDM_SCHED_AHEAD);
        void *slot = tdm_coll_at(t, base * rcount, rdt);
        if (sbuf != TDM_COLL_IN_PLACE)
            tdm_sched_copy(s, sbuf, scount, sdt, slot, rcount, rdt);
        else if (slot != mine)
            tdm_sched_copy(s, mine, rcount, rdt, slot, rcount, rdt);
        tdm_sched_round(s);
        /* the nodes' runs of blocks, of different lengths: a ring of variable blocks */
        int64_t *cd = tdm_sched_tmp(s, 2 * (size_t)nm->n * sizeof(int64_t));
        if (!cd)
            return;
        for (int k = 0; k < nm->n; k++) {
            cd[k] = (int64_t)(nm->first[k + 1] - nm->first[k]) * (int64_t)rcount;
            cd[nm->n + k] = (int64_t)nm->first[k] * (int64_t)rcount;
        }
        tdm_sched_view(s, nm->leaders, nm->n, nm->node);
        tdm_coll_allgatherv_ring_inplace(s, t, (tdm_coll_arr_t){.p = cd, .wide = true},
                                         (tdm_coll_arr_t){.p = cd + nm->n, .wide = true}, rcount,
                                         rdt);
        view_locals(s, nm);
    } else {
        if (sbuf != TDM_COLL_IN_PLACE)
            tdm_sched_send(s, sbuf, scount, sdt, 0, 0);
        else
            tdm_sched_send(s, mine, rcount, rdt, 0, 0);
        tdm_sched_round(s);
    }
    bcast_step(s, t, (size_t)p * rcount, rdt, 0);
    tdm_sched_view(s, NULL, 0, 0);
    if (t != (char *)rbuf)
        for (int i = 0; i < p; i++)
            tdm_sched_copy(s, tdm_coll_at(t, (size_t)i * rcount, rdt), rcount, rdt,
                           tdm_coll_at(rbuf, (size_t)nm->order[i] * rcount, rdt), rcount, rdt);
}

/* Are node k's ranks consecutive in the communicator (its run of blocks one piece of the
 * root's buffer)? */
static bool node_consecutive(const tdm_comm_nodes_t *nm, int k) {
    return nm->order[nm->first[k + 1] - 1] - nm->order[nm->first[k]] ==
           nm->first[k + 1] - nm->first[k] - 1;
}

/* Each node's blocks gather at its leader (in node order, packed), then every leader's run
 * goes to the root in one message, straight into rbuf where the node's ranks are
 * consecutive, else through a temporary unpacked block by block into rank order. The
 * root's own node sends to it directly. */
void tdm_coll_gather_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const void *sbuf,
                          size_t scount, tdm_dtype_t *sdt, void *rbuf, size_t rcount,
                          tdm_dtype_t *rdt, int root) {
    int p, me = tdm_sched_rank(s, &p);
    const int *lead = leaders_with(s, nm, root);
    if (!lead)
        return;
    tdm_dtype_t *byte = tdm_coll_byte_type();
    int mine = lead[nm->node], rnode = nm->node_of[root];
    view_locals(s, nm);
    if (me == root) {
        size_t blk = rcount * rdt->size;
        char *t = NULL;
        for (int i = 0; i < nm->nlocal; i++)
            if (i != nm->local)
                tdm_sched_recv(s, tdm_coll_at(rbuf, (size_t)nm->locals[i] * rcount, rdt), rcount,
                               rdt, i, TDM_SCHED_AHEAD);
        tdm_sched_view(s, lead, nm->n, nm->node);
        for (int k = 0; k < nm->n; k++) {
            if (k == nm->node)
                continue;
            size_t cnt = (size_t)(nm->first[k + 1] - nm->first[k]);
            if (node_consecutive(nm, k)) {
                tdm_sched_recv(s, tdm_coll_at(rbuf, (size_t)nm->order[nm->first[k]] * rcount, rdt),
                               cnt * rcount, rdt, k, TDM_SCHED_AHEAD);
                continue;
            }
            if (!t && !(t = tdm_sched_tmp(s, (size_t)p * blk)))
                return;
            tdm_sched_recv(s, t + (size_t)nm->first[k] * blk, cnt * blk, byte, k, TDM_SCHED_AHEAD);
        }
        if (sbuf != TDM_COLL_IN_PLACE)
            tdm_sched_copy(s, sbuf, scount, sdt, tdm_coll_at(rbuf, (size_t)root * rcount, rdt),
                           rcount, rdt);
        tdm_sched_round(s);
        for (int k = 0; t && k < nm->n; k++)
            if (k != nm->node && !node_consecutive(nm, k))
                for (int j = nm->first[k]; j < nm->first[k + 1]; j++)
                    tdm_sched_copy(s, t + (size_t)j * blk, blk, byte,
                                   tdm_coll_at(rbuf, (size_t)nm->order[j] * rcount, rdt), rcount,
                                   rdt);
    } else if (me == mine && nm->node != rnode) {
        size_t blk = scount * sdt->size;
        char *t = tdm_sched_tmp(s, (size_t)nm->nlocal * blk);
        if (!t)
            return;
        for (int i = 0; i < nm->nlocal; i++)
            if (i != nm->local)
                tdm_sched_recv(s, t + (size_t)i * blk, blk, byte, i, TDM_SCHED_AHEAD);
        tdm_sched_copy(s, sbuf, scount, sdt, t + (size_t)nm->local * blk, blk, byte);
        tdm_sched_round(s);
        tdm_sched_view(s, lead, nm->n, nm->node);
        tdm_sched_send(s, t, (size_t)nm->nlocal * blk, byte, rnode, 0);
        tdm_sched_round(s);
    } else {
        tdm_sched_send(s, sbuf, scount, sdt, local_index(nm, mine), 0);
        tdm_sched_round(s);
    }
    tdm_sched_view(s, NULL, 0, 0);
}

/* The reverse of the Gather: the root sends each other node's run of blocks to its leader
 * (straight from sbuf where the node's ranks are consecutive, else packed into a
 * temporary first) and the blocks of its own node directly; each leader hands out its
 * node's blocks. */
void tdm_coll_scatter_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const void *sbuf,
                           size_t scount, tdm_dtype_t *sdt, void *rbuf, size_t rcount,
                           tdm_dtype_t *rdt, int root) {
    int p, me = tdm_sched_rank(s, &p);
    const int *lead = leaders_with(s, nm, root);
    if (!lead)
        return;
    tdm_dtype_t *byte = tdm_coll_byte_type();
    int mine = lead[nm->node], rnode = nm->node_of[root];
    if (me == root) {
        size_t blk = scount * sdt->size;
        char *t = NULL;
        tdm_sched_view(s, lead, nm->n, nm->node);
        for (int k = 0; k < nm->n; k++) {
            if (k == nm->node)
                continue;
            size_t cnt = (size_t)(nm->first[k + 1] - nm->first[k]);
            if (node_consecutive(nm, k)) {
                tdm_sched_send(s, tdm_coll_at(sbuf, (size_t)nm->order[nm->first[k]] * scount, sdt),
                               cnt * scount, sdt, k, TDM_SCHED_AHEAD);
                continue;
            }
            if (!t && !(t = tdm_sched_tmp(s, (size_t)p * blk)))
                return;
            for (int j = nm->first[k]; j < nm->first[k + 1]; j++)
                tdm_sched_copy(s, tdm_coll_at(sbuf, (size_t)nm->order[j] * scount, sdt), scount,
                               sdt, t + (size_t)j * blk, blk, byte);
            tdm_sched_send(s, t + (size_t)nm->first[k] * blk, cnt * blk, byte, k, TDM_SCHED_AHEAD);
        }
        view_locals(s, nm);
        for (int i = 0; i < nm->nlocal; i++)
            if (i != nm->local)
                tdm_sched_send(s, tdm_coll_at(sbuf, (size_t)nm->locals[i] * scount, sdt), scount,
                               sdt, i, TDM_SCHED_AHEAD);
        if (rbuf != TDM_COLL_IN_PLACE)
            tdm_sched_copy(s, tdm_coll_at(sbuf, (size_t)root * scount, sdt), scount, sdt, rbuf,
                           rcount, rdt);
        tdm_sched_round(s);
    } else if (me == mine && nm->node != rnode) {
        size_t blk = rcount * rdt->size;
        char *t = tdm_sched_tmp(s, (size_t)nm->nlocal * blk);
        if (!t)
            return;
        tdm_sched_view(s, lead, nm->n, nm->node);
        tdm_sched_recv(s, t, (size_t)nm->nlocal * blk, byte, rnode, 0);
        tdm_sched_round(s);
        view_locals(s, nm);
        for (int i = 0; i < nm->nlocal; i++)
            if (i != nm->local)
                tdm_sched_send(s, t + (size_t)i * blk, blk, byte, i, TDM_SCHED_AHEAD);
        tdm_sched_copy(s, t + (size_t)nm->local * blk, blk, byte, rbuf, rcount, rdt);
        tdm_sched_round(s);
    } else {
        view_locals(s, nm);
        tdm_sched_recv(s, rbuf, rcount, rdt, local_index(nm, mine), 0);
        tdm_sched_round(s);
    }
    tdm_sched_view(s, NULL, 0, 0);
}

/* As the Allgather, with each rank's count: the blocks gather at each node's leader in
 * node order, the leaders' ring passes the nodes' runs, a bcast within each node hands
 * out all of them. In rbuf itself when the displacements put the blocks one after the
 * other in node order (rank order, on consecutive nodes), else in a temporary in node
 * order, copied to the displacements at the end. */
void tdm_coll_allgatherv_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const void *sbuf,
                              size_t scount, tdm_dtype_t *sdt, void *rbuf, tdm_coll_arr_t rcounts,
                              tdm_coll_arr_t displs, tdm_dtype_t *rdt) {
    int p, me = tdm_sched_rank(s, &p);
    /* off[j]: where the block at position j of the node order starts, in items */
    size_t *off = tdm_sched_tmp(s, ((size_t)p + 1) * sizeof(size_t));
    if (!off)
        return;
    bool direct = true;
    off[0] = 0;
    for (int j = 0; j < p; j++) {
        int r = nm->order[j];
        off[j + 1] = off[j] + tdm_coll_count_of(rcounts, 0, r);
        if (tdm_coll_disp_of(displs, 0, r) != off[j])
            direct = false;
    }
    size_t total = off[p];
    char *t = direct ? rbuf : tdm_sched_tmp_items(s, total, rdt);
    if (!t)
        return;
    void *mine = tdm_coll_at(rbuf, tdm_coll_disp_of(displs, 0, me), rdt);
    size_t myn = tdm_coll_count_of(rcounts, 0, me);
    int base = nm->first[nm->node];
    view_locals(s, nm);
    if (nm->local == 0) {
        for (int i = 1; i < nm->nlocal; i++)
            tdm_sched_recv(s, tdm_coll_at(t, off[base + i], rdt), off[base + i + 1] - off[base + i],
                           rdt, i, TDM_SCHED_AHEAD);
        void *slot = tdm_coll_at(t, off[base], rdt);
        if (sbuf != TDM_COLL_IN_PLACE)
            tdm_sched_copy(s, sbuf, scount, sdt, slot, myn, rdt);
        else if (slot != mine)
            tdm_sched_copy(s, mine, myn, rdt, slot, myn, rdt);
        tdm_sched_round(s);
        int64_t *cd = tdm_sched_tmp(s, 2 * (size_t)nm->n * sizeof(int64_t));
        if (!cd)
            return;
        for (int k = 0; k < nm->n; k++) {
            cd[k] = (int64_t)(off[nm->first[k + 1]] - off[nm->first[k]]);
            cd[nm->n + k] = (int64_t)off[nm->first[k]];
        }
        tdm_sched_view(s, nm->leaders, nm->n, nm->node);
        tdm_coll_allgatherv_ring_inplace(s, t, (tdm_coll_arr_t){.p = cd, .wide = true},
                                         (tdm_coll_arr_t){.p = cd + nm->n, .wide = true}, 0, rdt);
        view_locals(s, nm);
    } else {
        if (sbuf != TDM_COLL_IN_PLACE)
            tdm_sched_send(s, sbuf, scount, sdt, 0, 0);
        else
            tdm_sched_send(s, mine, myn, rdt, 0, 0);
        tdm_sched_round(s);
    }
    bcast_step(s, t, total, rdt, 0);
    tdm_sched_view(s, NULL, 0, 0);
    if (t != (char *)rbuf)
        for (int j = 0; j < p; j++)
            tdm_sched_copy(s, tdm_coll_at(t, off[j], rdt), off[j + 1] - off[j], rdt,
                           tdm_coll_at(rbuf, tdm_coll_disp_of(displs, 0, nm->order[j]), rdt),
                           off[j + 1] - off[j], rdt);
}
