/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intercommunicator collectives (inter.h). One schedule on the intercomm:
 * steps flagged TDM_SCHED_REMOTE cross to the other group, the others stay in
 * the local group, so the intracomm builders (binomial bcast and reduce,
 * linear scatterv) make the local phases unchanged.
 *  - Bcast: root -> remote rank 0, then a binomial bcast in that group.
 *  - Reduce: binomial reduce to local rank 0 (rank order, so non-commutative
 *    ops are right), which sends the result to the root.
 *  - Allreduce, Reduce_scatter: each group reduces to its rank 0, the two
 *    leaders swap results, and each leader broadcasts (scatters) what it got.
 *  - Barrier: fan-in to rank 0, leaders swap a zero-byte message, fan-out.
 *  - Gather(v), Scatter(v), Allgather(v), Alltoall(v,w): direct messages
 *    between the groups, all posted in one round (the counts of the tests and
 *    uses we know are modest; no local phase means no extra copy).
 */
#include "inter.h"

#include "select.h"

/* Block i of buf (counts and displs, or `fixed` items each where they are NULL)
 * to or from remote rank i, for each of the m remote ranks, all in one round. */
static void remote_blocks(tdm_sched_t *s, int m, bool send, const void *buf, tdm_coll_arr_t counts,
                          tdm_coll_arr_t displs, size_t fixed, tdm_dtype_t *dt) {
    for (int i = 0; i < m; i++) {
        void *b = tdm_coll_at(buf, tdm_coll_disp_of(displs, fixed, i), dt);
        size_t n = tdm_coll_count_of(counts, fixed, i);
        if (send)
            tdm_sched_send(s, b, n, dt, i, TDM_SCHED_REMOTE | TDM_SCHED_AHEAD);
        else
            tdm_sched_recv(s, b, n, dt, i, TDM_SCHED_REMOTE | TDM_SCHED_AHEAD);
    }
}

/* Binomial fan-in of zero-byte messages to local rank 0. */
static void fan_in(tdm_sched_t *s) {
    int p, r = tdm_sched_rank(s, &p);
    tdm_dtype_t *byte = tdm_coll_byte_type();
    for (int mask = 1; mask < p; mask <<= 1) {
        if (r & mask) {
            tdm_sched_send(s, NULL, 0, byte, r - mask, 0);
            tdm_sched_round(s);
            break;
        }
        if (r + mask < p) {
            tdm_sched_recv(s, NULL, 0, byte, r + mask, 0);
            tdm_sched_round(s);
        }
    }
}

/* Leaders: send (sbuf, n) to remote rank 0 and receive (rbuf, n) from it. */
static void leaders_swap(tdm_sched_t *s, const void *sbuf, void *rbuf, size_t n, tdm_dtype_t *dt) {
    int p;
    if (tdm_sched_rank(s, &p) == 0) {
        tdm_sched_recv(s, rbuf, n, dt, 0, TDM_SCHED_REMOTE);
        tdm_sched_send(s, sbuf, n, dt, 0, TDM_SCHED_REMOTE);
    }
    tdm_sched_round(s);
}

int tdm_coll_inter_barrier(tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    tdm_dtype_t *byte = tdm_coll_byte_type();
    fan_in(s);
    leaders_swap(s, NULL, NULL, 0, byte);
    tdm_coll_bcast_binomial(s, NULL, 0, byte, 0);
    return tdm_sched_run(s, req_p);
}

int tdm_coll_inter_bcast(void *buf, size_t count, tdm_dtype_t *dt, int root, tdm_comm_t *comm,
                         tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    if (root == TDM_COLL_ROOT) {
        tdm_sched_send(s, buf, count, dt, 0, TDM_SCHED_REMOTE);
    } else if (root != TDM_PROC_NULL) {
        if (comm->rank == 0)
            tdm_sched_recv(s, buf, count, dt, root, TDM_SCHED_REMOTE);
        tdm_sched_round(s);
        tdm_coll_bcast_binomial(s, buf, count, dt, 0);
    }
    return tdm_sched_run(s, req_p);
}

int tdm_coll_inter_reduce(const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt, tdm_op_t *op,
                          int root, tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    if (root == TDM_COLL_ROOT) {
        tdm_sched_recv(s, rbuf, count, dt, 0, TDM_SCHED_REMOTE);
    } else if (root != TDM_PROC_NULL) {
        void *acc = comm->rank == 0 ? tdm_sched_tmp_items(s, count, dt) : NULL;
        tdm_coll_reduce_binomial(s, sbuf, acc, count, dt, op, 0);
        if (comm->rank == 0)
            tdm_sched_send(s, acc, count, dt, root, TDM_SCHED_REMOTE);
    }
    return tdm_sched_run(s, req_p);
}

int tdm_coll_inter_allreduce(const void *sbuf, void *rbuf, size_t count, tdm_dtype_t *dt,
                             tdm_op_t *op, tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    void *acc = comm->rank == 0 ? tdm_sched_tmp_items(s, count, dt) : NULL;
    tdm_coll_reduce_binomial(s, sbuf, acc, count, dt, op, 0);
    leaders_swap(s, acc, rbuf, count, dt);
    tdm_coll_bcast_binomial(s, rbuf, count, dt, 0);
    return tdm_sched_run(s, req_p);
}

/* Gatherv and its mirror scatterv (`scatter`): the root's blocks from or to every remote
 * rank, and one message to or from the root from each rank of the other group. */
static int rooted_v(bool scatter, const void *blocks, tdm_coll_arr_t counts, tdm_coll_arr_t displs,
                    size_t fixed, tdm_dtype_t *bdt, const void *one, size_t count, tdm_dtype_t *dt,
                    int root, tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    if (root == TDM_COLL_ROOT) {
        remote_blocks(s, comm->remote.n, scatter, blocks, counts, displs, fixed, bdt);
    } else if (root != TDM_PROC_NULL) {
        if (scatter) /* `one` is the receive buffer then */
            tdm_sched_recv(s, (void *)one, count, dt, root, TDM_SCHED_REMOTE);
        else
            tdm_sched_send(s, one, count, dt, root, TDM_SCHED_REMOTE);
    }
    return tdm_sched_run(s, req_p);
}

int tdm_coll_inter_gatherv(const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                           tdm_coll_arr_t rcounts, tdm_coll_arr_t displs, size_t rcount,
                           tdm_dtype_t *rdt, int root, tdm_comm_t *comm, tdm_req_t **req_p) {
    return rooted_v(false, rbuf, rcounts, displs, rcount, rdt, sbuf, scount, sdt, root, comm,
                    req_p);
}

int tdm_coll_inter_scatterv(const void *sbuf, tdm_coll_arr_t scounts, tdm_coll_arr_t displs,
                            size_t scount, tdm_dtype_t *sdt, void *rbuf, size_t rcount,
                            tdm_dtype_t *rdt, int root, tdm_comm_t *comm, tdm_req_t **req_p) {
    return rooted_v(true, sbuf, scounts, displs, scount, sdt, rbuf, rcount, rdt, root, comm, req_p);
}

int tdm_coll_inter_allgatherv(const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                              tdm_coll_arr_t rcounts, tdm_coll_arr_t displs, size_t rcount,
                              tdm_dtype_t *rdt, tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    int m = comm->remote.n;
    remote_blocks(s, m, false, rbuf, rcounts, displs, rcount, rdt);
    /* start with the remote rank of the same number so the senders spread out */
    for (int k = 0; k < m; k++)
        tdm_sched_send(s, sbuf, scount, sdt, (comm->rank + k) % m,
                       TDM_SCHED_REMOTE | TDM_SCHED_AHEAD);
    return tdm_sched_run(s, req_p);
}

int tdm_coll_inter_alltoallw(const void *sbuf, tdm_coll_arr_t scounts, tdm_coll_arr_t sdispls,
                             tdm_dtype_t *const *sdts, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                             tdm_coll_arr_t rcounts, tdm_coll_arr_t rdispls,
                             tdm_dtype_t *const *rdts, size_t rcount, tdm_dtype_t *rdt,
                             tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    int m = comm->remote.n;
    for (int k = 0; k < m; k++) {
        int i = (comm->rank + k) % m;
        const char *sa;
        char *ra;
        tdm_dtype_t *st = sdts ? sdts[i] : sdt, *rt = rdts ? rdts[i] : rdt;
        if (sdts) { /* Alltoallw: displacements in bytes */
            sa = (const char *)sbuf + tdm_coll_arr_get(sdispls, i);
            ra = (char *)rbuf + tdm_coll_arr_get(rdispls, i);
        } else {
            sa = tdm_coll_at(sbuf, tdm_coll_disp_of(sdispls, scount, i), sdt);
            ra = tdm_coll_at(rbuf, tdm_coll_disp_of(rdispls, rcount, i), rdt);
        }
        tdm_sched_recv(s, ra, tdm_coll_count_of(rcounts, rcount, i), rt, i,
                       TDM_SCHED_REMOTE | TDM_SCHED_AHEAD);
        tdm_sched_send(s, sa, tdm_coll_count_of(scounts, scount, i), st, i,
                       TDM_SCHED_REMOTE | TDM_SCHED_AHEAD);
    }
    return tdm_sched_run(s, req_p);
}

int tdm_coll_inter_reduce_scatter(const void *sbuf, void *rbuf, tdm_coll_arr_t rcounts,
                                  size_t rcount, tdm_dtype_t *dt, tdm_op_t *op, tdm_comm_t *comm,
                                  tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    int p = comm->size, r = comm->rank;
    /* every process of both groups holds `total` items: the sum of its own
     * group's counts, which the standard requires to equal the other group's */
    size_t total = 0;
    /* 64-bit: the sum of int counts may pass INT_MAX */
    int64_t *displs = NULL;
    if (rcounts.p) {
        displs = tdm_sched_tmp(s, (size_t)p * sizeof(*displs));
        if (!displs)
            return tdm_sched_run(s, req_p); /* reports the NOMEM */
        for (int i = 0; i < p; i++) {
            displs[i] = (int64_t)total;
            total += (size_t)tdm_coll_arr_get(rcounts, i);
        }
    } else {
        total = rcount * (size_t)p;
    }
    void *acc = NULL, *got = NULL;
    if (r == 0) {
        acc = tdm_sched_tmp_items(s, total, dt);
        got = tdm_sched_tmp_items(s, total, dt);
    }
    tdm_coll_reduce_binomial(s, sbuf, acc, total, dt, op, 0);
    leaders_swap(s, acc, got, total, dt);
    tdm_coll_scatterv_linear(s, got, rcounts, (tdm_coll_arr_t){.p = displs, .wide = true}, rcount,
                             dt, rbuf, tdm_coll_count_of(rcounts, rcount, r), dt, 0);
    return tdm_sched_run(s, req_p);
}
