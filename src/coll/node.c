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

/* ---- Gather(v) and Scatter(v): one skeleton, the data flowing to or from the root ---- */

/* Send when the data flows this way (`out`), else receive. */
static void xfer(tdm_sched_t *s, bool out, void *buf, size_t count, tdm_dtype_t *dt, int peer,
                 int flags) {
    if (out)
        tdm_sched_send(s, buf, count, dt, peer, flags);
    else
        tdm_sched_recv(s, buf, count, dt, peer, flags);
}

/* Copy a into b when `out`, else b into a. */
static void copy_dir(tdm_sched_t *s, bool out, void *a, size_t an, tdm_dtype_t *adt, void *b,
                     size_t bn, tdm_dtype_t *bdt) {
    if (out)
        tdm_sched_copy(s, a, an, adt, b, bn, bdt);
    else
        tdm_sched_copy(s, b, bn, bdt, a, an, adt);
}

static size_t blk_count(const tdm_coll_rooted_t *c, int r) {
    return tdm_coll_count_of(c->counts, c->count, r);
}

static void *blk_at(const tdm_coll_rooted_t *c, int r) {
    return tdm_coll_at(c->buf, tdm_coll_disp_of(c->displs, c->count, r), c->dt);
}

/* Do node k's blocks follow one another in node order in the root's buffer (its run one
 * piece of it, sent or received as such)? Its items into *items_p. */
static bool run_direct(const tdm_comm_nodes_t *nm, const tdm_coll_rooted_t *c, int k,
                       size_t *items_p) {
    size_t at = tdm_coll_disp_of(c->displs, c->count, nm->order[nm->first[k]]), items = 0;
    bool direct = true;
    for (int j = nm->first[k]; j < nm->first[k + 1]; j++) {
        int r = nm->order[j];
        direct = direct && tdm_coll_disp_of(c->displs, c->count, r) == at + items;
        items += blk_count(c, r);
    }
    *items_p = items;
    return direct;
}

/* Node k's blocks between their places in the root's buffer and a packed run at t. */
static void run_copy(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const tdm_coll_rooted_t *c, int k,
                     char *t) {
    tdm_dtype_t *byte = tdm_coll_byte_type();
    for (int j = nm->first[k]; j < nm->first[k + 1]; j++) {
        int r = nm->order[j];
        size_t n = blk_count(c, r), b = n * c->dt->size;
        copy_dir(s, c->scatter, blk_at(c, r), n, c->dt, t, b, byte);
        t += b;
    }
}

/* The root: every other node's run to (from) its leader in one message, from its place
 * in the buffer where the node's blocks follow one another, else packed in a temporary;
 * the blocks of its own node to (from) their ranks directly. */
static void rooted_root(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const int *lead,
                        const tdm_coll_rooted_t *c) {
    bool out = c->scatter;
    tdm_dtype_t *byte = tdm_coll_byte_type();
    size_t items, tbytes = 0;
    for (int k = 0; k < nm->n; k++)
        if (k != nm->node && !run_direct(nm, c, k, &items))
            tbytes += items * c->dt->size;
    char *t = tbytes ? tdm_sched_tmp(s, tbytes) : NULL;
    if (tbytes && !t)
        return;
    size_t off = 0;
    tdm_sched_view(s, lead, nm->n, nm->node);
    for (int k = 0; k < nm->n; k++) {
        if (k == nm->node)
            continue;
        if (run_direct(nm, c, k, &items)) {
            xfer(s, out, blk_at(c, nm->order[nm->first[k]]), items, c->dt, k, TDM_SCHED_AHEAD);
            continue;
        }
        size_t b = items * c->dt->size;
        if (out)
            run_copy(s, nm, c, k, t + off);
        xfer(s, out, t + off, b, byte, k, TDM_SCHED_AHEAD);
        off += b;
    }
    view_locals(s, nm);
    for (int i = 0; i < nm->nlocal; i++)
        if (i != nm->local)
            xfer(s, out, blk_at(c, nm->locals[i]), blk_count(c, nm->locals[i]), c->dt, i,
                 TDM_SCHED_AHEAD);
    if (c->own != TDM_COLL_IN_PLACE)
        copy_dir(s, out, blk_at(c, c->root), blk_count(c, c->root), c->dt, c->own, c->own_count,
                 c->own_dt);
    tdm_sched_round(s);
    off = 0;
    for (int k = 0; !out && t && k < nm->n; k++)
        if (k != nm->node && !run_direct(nm, c, k, &items)) {
            run_copy(s, nm, c, k, t + off);
            off += items * c->dt->size;
        }
}

/* A leader of a node without the root, once it knows each of its ranks' bytes: the
 * node's blocks packed in node order, one message to (from) the root, the blocks handed
 * to (taken from) the node's ranks. */
typedef struct rooted_leader {
    const tdm_comm_nodes_t *nm;
    const int *lead;
    const uint64_t *bytes; /* by local index */
    void *own;
    size_t own_count;
    tdm_dtype_t *own_dt;
    int rnode;
    bool scatter;
} rooted_leader_t;

static void rooted_leader(tdm_sched_t *s, void *arg) {
    const rooted_leader_t *l = arg;
    const tdm_comm_nodes_t *nm = l->nm;
    tdm_dtype_t *byte = tdm_coll_byte_type();
    size_t total = 0;
    for (int i = 0; i < nm->nlocal; i++)
        total += l->bytes[i];
    char *run = tdm_sched_tmp(s, total), *mine = run;
    if (!run)
        return;
    if (l->scatter) {
        tdm_sched_view(s, l->lead, nm->n, nm->node);
        tdm_sched_recv(s, run, total, byte, l->rnode, 0);
        tdm_sched_round(s);
    }
    view_locals(s, nm);
    size_t off = 0;
    for (int i = 0; i < nm->nlocal; off += l->bytes[i], i++)
        if (i != nm->local)
            xfer(s, l->scatter, run + off, l->bytes[i], byte, i, TDM_SCHED_AHEAD);
        else
            mine = run + off;
    copy_dir(s, !l->scatter, l->own, l->own_count, l->own_dt, mine, l->bytes[nm->local], byte);
    tdm_sched_round(s);
    if (!l->scatter) {
        tdm_sched_view(s, l->lead, nm->n, nm->node);
        tdm_sched_send(s, run, total, byte, l->rnode, 0);
        tdm_sched_round(s);
    }
    tdm_sched_view(s, NULL, 0, 0);
}

/*
 * The root sends (receives) each other node's run of blocks to (from) its leader in one
 * message and its own node's blocks directly; each leader hands out (gathers) its
 * node's blocks. Blocks travel between ranks as bytes: away from the root only the own
 * block's type is significant, so the leaders cannot use the root's.
 *
 * A v form's counts are the root's alone, yet a leader must size its node's run. Each
 * rank of a node without the root sends its byte count to its leader first, over
 * shared memory, and the leader builds the rest of the schedule once they are in
 * (tdm_sched_then): no message crosses the network for them. (The root sending each
 * leader its node's counts would add one network message per node, and a round trip's
 * latency before the data.) The fixed forms skip that step: every block is as large as
 * the leader's own.
 */
void tdm_coll_rooted_node(tdm_sched_t *s, const tdm_comm_nodes_t *nm, const tdm_coll_rooted_t *c) {
    int p, me = tdm_sched_rank(s, &p);
    const int *lead = leaders_with(s, nm, c->root);
    if (!lead)
        return;
    tdm_dtype_t *byte = tdm_coll_byte_type();
    int mine = lead[nm->node], rnode = nm->node_of[c->root];
    bool far = nm->node != rnode; /* the counts step, for a v form */
    size_t own = me == c->root && c->own == TDM_COLL_IN_PLACE ? blk_count(c, me) * c->dt->size
                                                              : c->own_count * c->own_dt->size;
    /* a fixed form's largest message is a leader's run; a v form's leader and root do
     * not know theirs yet (rooted_leader sizes it) */
    tdm_sched_immediate(s, c->fixed                               ? (size_t)nm->max_local * own
                           : me == c->root || (me == mine && far) ? SIZE_MAX
                                                                  : own);
    if (me == c->root) {
        rooted_root(s, nm, lead, c);
    } else if (me == mine && far) {
        uint64_t *bytes = tdm_sched_tmp(s, (size_t)nm->nlocal * sizeof(uint64_t));
        rooted_leader_t *l = tdm_sched_tmp(s, sizeof(*l));
        if (!bytes || !l)
            return;
        *l = (rooted_leader_t){.nm = nm,
                               .lead = lead,
                               .bytes = bytes,
                               .own = c->own,
                               .own_count = c->own_count,
                               .own_dt = c->own_dt,
                               .rnode = rnode,
                               .scatter = c->scatter};
        for (int i = 0; i < nm->nlocal; i++)
            bytes[i] = own;
        if (c->fixed) {
            rooted_leader(s, l);
            return;
        }
        view_locals(s, nm);
        for (int i = 0; i < nm->nlocal; i++)
            if (i != nm->local)
                tdm_sched_recv(s, &bytes[i], sizeof(uint64_t), byte, i, TDM_SCHED_AHEAD);
        tdm_sched_then(s, rooted_leader, l, c->own_dt);
    } else {
        view_locals(s, nm);
        int to = local_index(nm, mine);
        if (!c->fixed && far) {
            uint64_t *b = tdm_sched_tmp(s, sizeof(uint64_t));
            if (!b)
                return;
            *b = own;
            tdm_sched_send(s, b, sizeof(uint64_t), byte, to, 0);
            tdm_sched_round(s);
        }
        xfer(s, !c->scatter, c->own, c->own_count, c->own_dt, to, 0);
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
