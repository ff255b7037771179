/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Gather(v) and Scatter(v), linear: the root posts a non-blocking receive
 * (send) for every other rank at once and the others make one blocking call,
 * so the rendezvous selection sees Irecv x Send (RPUT: each sender writes into
 * the root's buffer in parallel) and Isend x Recv (RGET: each receiver reads).
 * The root copies its own block after posting the others, so the copy overlaps
 * the peers' transfers. On several nodes they run node-aware where the chooser says so
 * (node.c).
 */
#include "select.h"

#include <stdint.h>

int tdm_coll_gatherv(const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                     tdm_coll_arr_t rcounts, tdm_coll_arr_t displs, size_t rcount, tdm_dtype_t *rdt,
                     int root, bool fixed, tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    int p = comm->size, r = comm->rank;
    const tdm_comm_nodes_t *nm = NULL;
    if (p > 1 && tdm_coll_node_maybe()) {
        /* this rank's block: in a fixed form, the same at every rank */
        size_t blk = r != root || sbuf != TDM_COLL_IN_PLACE
                         ? scount * sdt->size
                         : tdm_coll_count_of(rcounts, rcount, r) * rdt->size;
        nm = tdm_coll_node_choose(fixed ? TDM_COLL_GATHER : TDM_COLL_GATHERV, comm, blk, true);
    }
    if (nm) {
        tdm_coll_rooted_node(s, nm,
                             &(tdm_coll_rooted_t){.buf = rbuf,
                                                  .counts = rcounts,
                                                  .displs = displs,
                                                  .count = rcount,
                                                  .dt = rdt,
                                                  .own = (void *)sbuf,
                                                  .own_count = scount,
                                                  .own_dt = sdt,
                                                  .root = root,
                                                  .fixed = fixed});
        return tdm_sched_run(s, req_p);
    }
    tdm_sched_immediate(s, r != root   ? scount * sdt->size
                           : rcounts.p ? SIZE_MAX
                                       : rcount * rdt->size);
    if (r == root) {
        for (int i = 0; i < p; i++) {
            size_t n = tdm_coll_count_of(rcounts, rcount, i);
            void *at = tdm_coll_at(rbuf, tdm_coll_disp_of(displs, rcount, i), rdt);
            if (i != r)
                tdm_sched_recv(s, at, n, rdt, i, TDM_SCHED_AHEAD);
        }
        if (sbuf != TDM_COLL_IN_PLACE)
            tdm_sched_copy(s, sbuf, scount, sdt,
                           tdm_coll_at(rbuf, tdm_coll_disp_of(displs, rcount, r), rdt),
                           tdm_coll_count_of(rcounts, rcount, r), rdt);
    } else {
        tdm_sched_send(s, sbuf, scount, sdt, root, 0);
    }
    return tdm_sched_run(s, req_p);
}

void tdm_coll_scatterv_linear(tdm_sched_t *s, const void *sbuf, tdm_coll_arr_t scounts,
                              tdm_coll_arr_t displs, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                              size_t rcount, tdm_dtype_t *rdt, int root) {
    int p, r = tdm_sched_rank(s, &p);
    if (r == root) {
        for (int i = 0; i < p; i++) {
            size_t n = tdm_coll_count_of(scounts, scount, i);
            const void *at = tdm_coll_at(sbuf, tdm_coll_disp_of(displs, scount, i), sdt);
            if (i != r)
                tdm_sched_send(s, at, n, sdt, i, TDM_SCHED_AHEAD);
        }
        if (rbuf != TDM_COLL_IN_PLACE)
            tdm_sched_copy(s, tdm_coll_at(sbuf, tdm_coll_disp_of(displs, scount, r), sdt),
                           tdm_coll_count_of(scounts, scount, r), sdt, rbuf, rcount, rdt);
    } else {
        tdm_sched_recv(s, rbuf, rcount, rdt, root, 0);
    }
    tdm_sched_round(s);
}

int tdm_coll_scatterv(const void *sbuf, tdm_coll_arr_t scounts, tdm_coll_arr_t displs,
                      size_t scount, tdm_dtype_t *sdt, void *rbuf, size_t rcount, tdm_dtype_t *rdt,
                      int root, bool fixed, tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    const tdm_comm_nodes_t *nm = NULL;
    if (comm->size > 1 && tdm_coll_node_maybe()) {
        size_t blk = comm->rank != root || rbuf != TDM_COLL_IN_PLACE
                         ? rcount * rdt->size
                         : tdm_coll_count_of(scounts, scount, root) * sdt->size;
        nm = tdm_coll_node_choose(fixed ? TDM_COLL_SCATTER : TDM_COLL_SCATTERV, comm, blk, true);
    }
    if (nm) {
        tdm_coll_rooted_node(s, nm,
                             &(tdm_coll_rooted_t){.buf = (void *)sbuf,
                                                  .counts = scounts,
                                                  .displs = displs,
                                                  .count = scount,
                                                  .dt = sdt,
                                                  .own = rbuf,
                                                  .own_count = rcount,
                                                  .own_dt = rdt,
                                                  .root = root,
                                                  .fixed = fixed,
                                                  .scatter = true});
        return tdm_sched_run(s, req_p);
    }
    tdm_sched_immediate(s, comm->rank != root ? rcount * rdt->size
                           : scounts.p        ? SIZE_MAX
                                              : scount * sdt->size);
    tdm_coll_scatterv_linear(s, sbuf, scounts, displs, scount, sdt, rbuf, rcount, rdt, root);
    return tdm_sched_run(s, req_p);
}
