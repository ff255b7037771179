/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Allgather(v). Ring: p - 1 rounds, each rank passes on the block it received
 * last (any counts, large blocks). Bruck (fixed counts, small blocks):
 * ceil(log2 p) rounds into a temporary in which block i belongs to rank r + i,
 * rotated into place at the end. Recursive doubling replaces Bruck on
 * power-of-two sizes unless Bruck is forced.
 */
#include "select.h"

static void allgather_ring(tdm_sched_t *s, void *rbuf, const int *rcounts, const int *displs,
                           size_t rcount, tdm_dtype_t *rdt) {
    int p, r = tdm_sched_rank(s, &p);
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
        size_t sd = displs ? (size_t)displs[sb] : (size_t)sb * rcount;
        size_t rd = displs ? (size_t)displs[rb] : (size_t)rb * rcount;
        tdm_sched_recv(s, tdm_coll_at(rbuf, rd, rdt), rcounts ? (size_t)rcounts[rb] : rcount, rdt,
                       left, 0);
        tdm_sched_send(s, tdm_coll_at(rbuf, sd, rdt), rcounts ? (size_t)rcounts[sb] : rcount, rdt,
                       right, 0);
        tdm_sched_round(s);
    }
}

static void allgather_bruck(tdm_sched_t *s, const void *own, void *rbuf, size_t rcount,
                            tdm_dtype_t *rdt) {
    int p, r = tdm_sched_rank(s, &p);
    char *t = tdm_sched_tmp_items(s, (size_t)p * rcount, rdt);
    if (!t)
        return;
    tdm_sched_copy(s, own, rcount, rdt, t, rcount, rdt);
    for (int k = 1; k < p; k <<= 1) {
        int n = TDM_MIN(k, p - k);
        tdm_sched_recv(s, tdm_coll_at(t, (size_t)k * rcount, rdt), (size_t)n * rcount, rdt,
                       (r + k) % p, 0);
        tdm_sched_send(s, t, (size_t)n * rcount, rdt, (r - k + p) % p, 0);
        tdm_sched_round(s);
    }
    for (int i = 0; i < p; i++)
        tdm_sched_copy(s, tdm_coll_at(t, (size_t)i * rcount, rdt), rcount, rdt,
                       tdm_coll_at(rbuf, (size_t)((r + i) % p) * rcount, rdt), rcount, rdt);
}

/* Recursive doubling (power-of-two sizes): at step k each rank swaps the k
 * blocks it holds with rank r ^ k, in place in rbuf, so there is no temporary
 * and no final rotation (2 ranks: one exchange; Bruck needed three copies). */
static void allgather_recdbl(tdm_sched_t *s, void *rbuf, size_t rcount, tdm_dtype_t *rdt) {
    int p, r = tdm_sched_rank(s, &p);
    for (int k = 1; k < p; k <<= 1) {
        int peer = r ^ k;
        size_t mine = (size_t)(r & ~(k - 1)), theirs = (size_t)(peer & ~(k - 1));
        tdm_sched_recv(s, tdm_coll_at(rbuf, theirs * rcount, rdt), (size_t)k * rcount, rdt, peer,
                       0);
        tdm_sched_send(s, tdm_coll_at(rbuf, mine * rcount, rdt), (size_t)k * rcount, rdt, peer, 0);
        tdm_sched_round(s);
    }
}

int tdm_coll_allgatherv(const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                        const int *rcounts, const int *displs, size_t rcount, tdm_dtype_t *rdt,
                        tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    int r = comm->rank;
    size_t myd = displs ? (size_t)displs[r] : (size_t)r * rcount;
    size_t myn = rcounts ? (size_t)rcounts[r] : rcount;
    void *mine = tdm_coll_at(rbuf, myd, rdt);
    if (!rcounts && tdm_coll_choose(TDM_COLL_ALLGATHER, rcount * rdt->size, comm->size, true) ==
                        TDM_ALLGATHER_BRUCK) {
        if (sbuf != TDM_COLL_IN_PLACE) {
            tdm_sched_copy(s, sbuf, scount, sdt, mine, myn, rdt);
            tdm_sched_round(s);
        }
        int p = comm->size;
        if ((p & (p - 1)) == 0 && tdm_coll_forced(TDM_COLL_ALLGATHER) < 0)
            allgather_recdbl(s, rbuf, rcount, rdt);
        else
            allgather_bruck(s, mine, rbuf, rcount, rdt);
    } else {
        if (sbuf != TDM_COLL_IN_PLACE)
            tdm_sched_copy(s, sbuf, scount, sdt, mine, myn, rdt);
        allgather_ring(s, rbuf, rcounts, displs, rcount, rdt);
    }
    return tdm_sched_run(s, req_p);
}
