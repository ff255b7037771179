/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Allgather(v). Ring: p - 1 rounds, each rank passes on the block it received
 * last (any counts, large blocks). Bruck (fixed counts, small blocks):
 * ceil(log2 p) rounds into a temporary in which block i belongs to rank r + i,
 * rotated into place at the end. Recursive doubling replaces Bruck on
 * power-of-two sizes unless Bruck is forced. Linear (any counts, every size
 * when ranks outnumber cores): every block to and from every rank at once.
 */
#include "select.h"

/* The first round sends the caller's own block from sbuf (when not in place)
 * and copies it into rbuf only after posting: the peer then reads memory this
 * core has not just dirtied, and the copy overlaps the transfer. 2 ranks,
 * 256 KiB blocks: 64-68 us -> 35-40 us (Open MPI 33-39); copying first and
 * sending from rbuf took twice as long as the same exchange from sbuf. */
typedef struct own_blk {
    bool in_place;   /* the block is already in rbuf (MPI_IN_PLACE) */
    const void *buf; /* sbuf otherwise: NULL is MPI_BOTTOM, a buffer like any other */
    size_t count;
    tdm_dtype_t *dt;
} own_blk_t;

static void send_own(tdm_sched_t *s, const own_blk_t *own, void *mine, size_t myn, tdm_dtype_t *rdt,
                     int to) {
    if (!own->in_place)
        tdm_sched_send(s, own->buf, own->count, own->dt, to, 0);
    else
        tdm_sched_send(s, mine, myn, rdt, to, 0);
}

static void copy_own(tdm_sched_t *s, const own_blk_t *own, void *mine, size_t myn,
                     tdm_dtype_t *rdt) {
    if (!own->in_place)
        tdm_sched_copy(s, own->buf, own->count, own->dt, mine, myn, rdt);
}

static void allgather_ring(tdm_sched_t *s, const own_blk_t *own, void *rbuf, tdm_coll_arr_t rcounts,
                           tdm_coll_arr_t displs, size_t rcount, tdm_dtype_t *rdt) {
    int p, r = tdm_sched_rank(s, &p);
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    for (int i = 0; i < p - 1; i++) {
        int sb = (r - i + p) % p, rb = (r - i - 1 + p) % p;
        size_t sd = tdm_coll_disp_of(displs, rcount, sb);
        size_t rd = tdm_coll_disp_of(displs, rcount, rb);
        size_t sn = tdm_coll_count_of(rcounts, rcount, sb);
        tdm_sched_recv(s, tdm_coll_at(rbuf, rd, rdt), tdm_coll_count_of(rcounts, rcount, rb), rdt,
                       left, 0);
        if (i == 0) {
            send_own(s, own, tdm_coll_at(rbuf, sd, rdt), sn, rdt, right);
            copy_own(s, own, tdm_coll_at(rbuf, sd, rdt), sn, rdt);
        } else {
            tdm_sched_send(s, tdm_coll_at(rbuf, sd, rdt), sn, rdt, right, 0);
        }
        tdm_sched_round(s);
    }
    if (p == 1)
        copy_own(s, own, tdm_coll_at(rbuf, tdm_coll_disp_of(displs, rcount, r), rdt),
                 tdm_coll_count_of(rcounts, rcount, r), rdt);
}

void tdm_coll_allgatherv_ring_inplace(tdm_sched_t *s, void *rbuf, tdm_coll_arr_t rcounts,
                                      tdm_coll_arr_t displs, size_t rcount, tdm_dtype_t *rdt) {
    own_blk_t own = {.in_place = true};
    allgather_ring(s, &own, rbuf, rcounts, displs, rcount, rdt);
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
 * and no final rotation (2 ranks: one exchange; Bruck needed three copies).
 * The first step sends from sbuf and copies after posting, as the ring does.
 * Each step posts its send before its receive (as Allreduce does): 2 ranks,
 * medians of 12 interleaved runs, 8 B 0.210 -> 0.189 us, 1 KiB 0.343 ->
 * 0.282; 16 KiB and up unchanged. (The linear form keeps its receives first:
 * sends first made 4 ranks on 2 cores slower, 1 KiB 4.26 -> 4.94 us.) */
static void allgather_recdbl(tdm_sched_t *s, const own_blk_t *own, void *rbuf, size_t rcount,
                             tdm_dtype_t *rdt) {
    int p, r = tdm_sched_rank(s, &p);
    void *mine = tdm_coll_at(rbuf, (size_t)r * rcount, rdt);
    for (int k = 1; k < p; k <<= 1) {
        int peer = r ^ k;
        size_t first = (size_t)(r & ~(k - 1)), theirs = (size_t)(peer & ~(k - 1));
        if (k == 1) {
            send_own(s, own, mine, rcount, rdt, peer);
            copy_own(s, own, mine, rcount, rdt);
        } else {
            tdm_sched_send(s, tdm_coll_at(rbuf, first * rcount, rdt), (size_t)k * rcount, rdt, peer,
                           0);
        }
        tdm_sched_recv(s, tdm_coll_at(rbuf, theirs * rcount, rdt), (size_t)k * rcount, rdt, peer,
                       0);
        tdm_sched_round(s);
    }
    if (p == 1)
        copy_own(s, own, mine, rcount, rdt);
}

/* Linear: every block to and from every rank in one round, so ranks that share
 * cores wait once, not once per step. Auto when oversubscribed: 4 ranks on 2
 * cores, medians of 4 interleaved runs, 64 KiB blocks 84/69 -> 61 us, 1 MiB
 * 1.12/1.38 -> 0.88 ms (ring/Bruck -> linear; Open MPI 132 us, 1.63 ms). */
static void allgather_linear(tdm_sched_t *s, const own_blk_t *own, void *rbuf,
                             tdm_coll_arr_t rcounts, tdm_coll_arr_t displs, size_t rcount,
                             tdm_dtype_t *rdt) {
    int p, r = tdm_sched_rank(s, &p);
    void *mine = tdm_coll_at(rbuf, tdm_coll_disp_of(displs, rcount, r), rdt);
    size_t myn = tdm_coll_count_of(rcounts, rcount, r);
    for (int i = 1; i < p; i++) {
        int from = (r - i + p) % p;
        tdm_sched_recv(s, tdm_coll_at(rbuf, tdm_coll_disp_of(displs, rcount, from), rdt),
                       tdm_coll_count_of(rcounts, rcount, from), rdt, from, 0);
    }
    for (int i = 1; i < p; i++)
        send_own(s, own, mine, myn, rdt, (r + i) % p);
    copy_own(s, own, mine, myn, rdt);
    tdm_sched_round(s);
}

static size_t allgatherv_bytes(tdm_coll_arr_t rcounts, int p) {
    size_t n = 0;
    for (int i = 0; i < p; i++)
        n += tdm_coll_count_of(rcounts, 0, i);
    return n;
}

int tdm_coll_allgatherv(const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                        tdm_coll_arr_t rcounts, tdm_coll_arr_t displs, size_t rcount,
                        tdm_dtype_t *rdt, tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    if (!rcounts.p) /* recursive doubling and Bruck send up to p blocks at once */
        tdm_sched_immediate(s, (size_t)comm->size * rcount * rdt->size);
    int r = comm->rank;
    size_t myd = tdm_coll_disp_of(displs, rcount, r);
    size_t myn = tdm_coll_count_of(rcounts, rcount, r);
    void *mine = tdm_coll_at(rbuf, myd, rdt);
    own_blk_t own = {sbuf == TDM_COLL_IN_PLACE, sbuf, scount, sdt};
    int p = comm->size;
    const tdm_comm_nodes_t *nm = NULL;
    if (p > 1 && !rcounts.p)
        nm = tdm_coll_node_choose(TDM_COLL_ALLGATHER, comm, rcount * rdt->size, true);
    else if (p > 1 && tdm_coll_node_maybe()) /* counted by all the blocks' bytes */
        nm = tdm_coll_node_choose(TDM_COLL_ALLGATHERV, comm,
                                  allgatherv_bytes(rcounts, p) * rdt->size, true);
    int algo = nm ? -1 : tdm_coll_choose(TDM_COLL_ALLGATHER, rcount * rdt->size, comm->size, true);
    if (nm && !rcounts.p) {
        tdm_coll_allgather_node(s, nm, sbuf, scount, sdt, rbuf, rcount, rdt);
    } else if (nm) {
        tdm_coll_allgatherv_node(s, nm, sbuf, scount, sdt, rbuf, rcounts, displs, rdt);
    } else if (algo == TDM_ALLGATHER_LINEAR) {
        allgather_linear(s, &own, rbuf, rcounts, displs, rcount, rdt);
    } else if (!rcounts.p && algo == TDM_ALLGATHER_BRUCK) {
        if ((p & (p - 1)) == 0 && tdm_coll_forced(TDM_COLL_ALLGATHER) < 0) {
            allgather_recdbl(s, &own, rbuf, rcount, rdt);
        } else {
            if (!own.in_place) {
                tdm_sched_copy(s, sbuf, scount, sdt, mine, myn, rdt);
                tdm_sched_round(s);
            }
            allgather_bruck(s, mine, rbuf, rcount, rdt);
        }
    } else {
        allgather_ring(s, &own, rbuf, rcounts, displs, rcount, rdt);
    }
    return tdm_sched_run(s, req_p);
}
