/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduce by reduce-scatter plus gather (seed 000 §IV, Fig. 16), the large
 * message Reduce algorithm that mixes both copy directions: every rank
 * exchanges blocks with every other (MPI_Irecv/MPI_Isend, then sums its own
 * block: a reduce-scatter), then the root gathers the reduced blocks
 * (MPI_Irecv at the root, MPI_Send elsewhere). MPI_DOUBLE, MPI_SUM, root 0.
 *
 * -a picks the variants (comma list):
 *   p2p     the algorithm above written with point-to-point calls [default]
 *   coll    MPI_Reduce_scatter_block then MPI_Gather
 *   reduce  plain MPI_Reduce (the library's own choice), for reference
 * size is the vector length in bytes (rounded down to a multiple of
 * 8 x ranks). Timing as in one_to_all.c: lat_us mean over ranks, max_us the
 * slowest.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { V_P2P, V_COLL, V_REDUCE, V_N };
static const char *const v_names[] = {"p2p", "coll", "reduce"};

static double rsg_val(int r, long it, size_t i) {
    return (double)((r + 1) + (int)((it + (long)i) % 7));
}

static int rsg_selected(const char *list, const char *name) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (!strcmp(tok, name))
            return 1;
    return 0;
}

/* Elements stamped and checked: all with -v, else the first and last of each block. */
static int rsg_watched(const bench_t *b, size_t i, size_t block) {
    return b->validate || i % block == 0 || i % block == block - 1;
}

int main(int argc, char **argv) {
    bench_t b;
    const bench_defaults_t d = {.sizes = "1K:16M:4",
                                .iters = 1000,
                                .iters_min = 5,
                                .warmup = 10,
                                .budget_s = 0.3,
                                .variant = "p2p",
                                .usage = "  -a LIST    variants: p2p,coll,reduce [p2p]\n"};

    bench_init(&b, "reduce_rsg", &d, &argc, &argv);
    int n = b.nprocs, me = b.rank;
    size_t maxcnt = bench_size_max(&b) / sizeof(double) + (size_t)n;
    bench_buf_t sb, tb, rb;
    bench_buf_alloc(&b, &sb, maxcnt * sizeof(double), 1);
    bench_buf_alloc(&b, &tb, maxcnt * sizeof(double), 1);
    bench_buf_alloc(&b, &rb, maxcnt * sizeof(double), 1);
    double *sbuf = (double *)(void *)sb.base, *tmp = (double *)(void *)tb.base,
           *rbuf = (double *)(void *)rb.base;
    for (size_t i = 0; i < maxcnt; i++) {
        sbuf[i] = rsg_val(me, 0, i);
        tmp[i] = rbuf[i] = 0;
    }
    MPI_Request *req = calloc(2 * (size_t)n, sizeof *req);

    for (int v = 0; v < V_N; v++) {
        if (!rsg_selected(b.variant, v_names[v]))
            continue;
        for (int si = 0; si < b.nsizes; si++) {
            size_t cnt = b.sizes[si] / sizeof(double);
            cnt -= cnt % (size_t)n;
            if (cnt == 0)
                continue;
            size_t block = cnt / (size_t)n, size = cnt * sizeof(double);
            bench_loop_t l;
            double mine = 0;
            for (int phase = 0; phase < 2; phase++) {
                long nb;
                if (phase == 0)
                    bench_loop_warm(&b, &l, size);
                else
                    bench_loop_start(&b, &l, size);
                while ((nb = bench_batch(&b, &l)) > 0) {
                    double dt = 0;
                    for (long k = 0; k < nb; k++) {
                        long it = l.done + k;
                        for (size_t i = 0; i < cnt; i++)
                            if (rsg_watched(&b, i, block)) {
                                sbuf[i] = rsg_val(me, it, i);
                                rbuf[i] = -1;
                            }
                        double t0 = bench_now();
                        if (v == V_P2P) {
                            int nr = 0;
                            double *mine_blk = me == 0 ? rbuf : tmp + (size_t)me * block;
                            for (int p = 0; p < n; p++)
                                if (p != me)
                                    MPI_Irecv(tmp + (size_t)p * block, (int)block, MPI_DOUBLE, p, 1,
                                              MPI_COMM_WORLD, &req[nr++]);
                            for (int p = 0; p < n; p++)
                                if (p != me)
                                    MPI_Isend(sbuf + (size_t)p * block, (int)block, MPI_DOUBLE, p,
                                              1, MPI_COMM_WORLD, &req[nr++]);
                            MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
                            const double *own = sbuf + (size_t)me * block;
                            for (size_t i = 0; i < block; i++) {
                                double s = own[i];
                                for (int p = 0; p < n; p++)
                                    if (p != me)
                                        s += tmp[(size_t)p * block + i];
                                mine_blk[i] = s;
                            }
                            if (me == 0) {
                                for (int p = 1; p < n; p++)
                                    MPI_Irecv(rbuf + (size_t)p * block, (int)block, MPI_DOUBLE, p,
                                              2, MPI_COMM_WORLD, &req[p - 1]);
                                MPI_Waitall(n - 1, req, MPI_STATUSES_IGNORE);
                            } else {
                                MPI_Send(mine_blk, (int)block, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
                            }
                        } else if (v == V_COLL) {
                            double *mine_blk = tmp + (size_t)me * block;
                            MPI_Reduce_scatter_block(sbuf, mine_blk, (int)block, MPI_DOUBLE,
                                                     MPI_SUM, MPI_COMM_WORLD);
                            MPI_Gather(mine_blk, (int)block, MPI_DOUBLE, rbuf, (int)block,
                                       MPI_DOUBLE, 0, MPI_COMM_WORLD);
                        } else {
                            MPI_Reduce(sbuf, rbuf, (int)cnt, MPI_DOUBLE, MPI_SUM, 0,
                                       MPI_COMM_WORLD);
                        }
                        dt += bench_now() - t0;
                        if (me == 0)
                            for (size_t i = 0; i < cnt; i++) {
                                if (!rsg_watched(&b, i, block))
                                    continue;
                                double want = 0;
                                for (int p = 0; p < n; p++)
                                    want += rsg_val(p, it, i);
                                if (rbuf[i] != want)
                                    bench_fail("reduce_rsg/%s: wrong sum at element %zu of %zu: "
                                               "%g, expected %g",
                                               v_names[v], i, cnt, rbuf[i], want);
                            }
                        bench_barrier();
                    }
                    l.elapsed += dt;
                    if (phase == 1)
                        mine += dt;
                }
            }
            double us = mine * 1e6 / (double)l.done;
            double mean = bench_allmean(us), slowest = bench_allmax(us);
            bench_row(&b, "reduce_rsg", v_names[v], size, "lat_us", mean);
            bench_row(&b, "reduce_rsg", v_names[v], size, "max_us", slowest);
        }
    }
    free(req);
    bench_buf_free(&sb);
    bench_buf_free(&tb);
    bench_buf_free(&rb);
    bench_finalize(&b);
    return 0;
}
