/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency of the blocking collectives, OSU style (osu_bcast, osu_allreduce,
 * ...): each rank times each call on its own, with an untimed barrier
 * between calls. lat_us is the mean over ranks of each rank's mean time (as
 * OSU's "Avg Latency"), max_us the slowest rank's.
 *
 * Sizes are bytes per rank: the Bcast message, the Reduce/Allreduce vector
 * (MPI_FLOAT, MPI_SUM; sizes below 4 bytes are skipped), the block each rank
 * contributes to Gather/Allgather, receives from Scatter, exchanges with
 * each peer in Alltoall. Barrier runs once, at size 0. Gatherv and Scatterv
 * move the same blocks as Gather and Scatter, with counts and displacements
 * given per rank (only when named: not in the default list).
 *
 * -c selects: bcast,reduce,allreduce,gather,scatter,allgather,alltoall,barrier,
 *             gatherv,scatterv
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const coll_names[] = {"bcast",   "reduce",    "allreduce", "gather",
                                         "scatter", "allgather", "alltoall",  "barrier",
                                         "gatherv", "scatterv"};
enum {
    C_BCAST,
    C_REDUCE,
    C_ALLREDUCE,
    C_GATHER,
    C_SCATTER,
    C_ALLGATHER,
    C_ALLTOALL,
    C_BARRIER,
    C_GATHERV,
    C_SCATTERV,
    C_N
};

/* Gatherv and Scatterv: every rank's count and displacement, set before each call */
static int *vcounts, *vdispls;

static int coll_selected(const char *list, const char *name) {
    char buf[256];
    if (!strcmp(list, "all"))
        return 1;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (!strcmp(tok, name))
            return 1;
    return 0;
}

/* Float value rank r contributes at element i in iteration it (exact sums). */
static float coll_val(int r, long it, size_t i) {
    return (float)((r + 1) + (int)((it + (long)i) % 7));
}

static void coll_prepare(bench_t *b, int c, size_t size, long it, char *s, char *r) {
    int n = b->nprocs, me = b->rank;
    size_t cnt = size / sizeof(float);
    if (c == C_GATHERV || c == C_SCATTERV) {
        for (int p = 0; p < n; p++)
            vcounts[p] = (int)size, vdispls[p] = p * (int)size;
        c = c == C_GATHERV ? C_GATHER : C_SCATTER;
    }
    switch (c) {
    case C_BCAST:
        if (me == 0)
            bench_stamp(b, s, size, bench_seed(it, 0, 0));
        else
            bench_poison(b, s, size, bench_seed(it, 0, 0));
        break;
    case C_REDUCE:
    case C_ALLREDUCE: {
        float *f = (float *)s, *g = (float *)r;
        if (b->validate) {
            for (size_t i = 0; i < cnt; i++)
                f[i] = coll_val(me, it, i);
            memset(r, 0xff, cnt * sizeof(float));
        } else {
            f[0] = coll_val(me, it, 0);
            f[cnt - 1] = coll_val(me, it, cnt - 1);
            g[0] = g[cnt - 1] = -1;
        }
        break;
    }
    case C_GATHER:
    case C_ALLGATHER:
        bench_stamp(b, s, size, bench_seed(it, 0, me));
        if (c == C_ALLGATHER || me == 0)
            for (int p = 0; p < n; p++)
                bench_poison(b, r + (size_t)p * size, size, bench_seed(it, 0, p));
        break;
    case C_SCATTER:
        if (me == 0)
            for (int p = 0; p < n; p++)
                bench_stamp(b, s + (size_t)p * size, size, bench_seed(it, p, 0));
        bench_poison(b, r, size, bench_seed(it, me, 0));
        break;
    case C_ALLTOALL:
        for (int p = 0; p < n; p++) {
            bench_stamp(b, s + (size_t)p * size, size, bench_seed(it, p, me));
            bench_poison(b, r + (size_t)p * size, size, bench_seed(it, me, p));
        }
        break;
    default:
        break;
    }
}

static void coll_check(bench_t *b, int c, size_t size, long it, char *s, char *r) {
    int n = b->nprocs, me = b->rank;
    size_t cnt = size / sizeof(float);
    if (c == C_GATHERV || c == C_SCATTERV)
        c = c == C_GATHERV ? C_GATHER : C_SCATTER;
    switch (c) {
    case C_BCAST:
        if (me != 0)
            bench_check(b, s, size, bench_seed(it, 0, 0), "bcast", 0);
        break;
    case C_REDUCE:
    case C_ALLREDUCE: {
        if (c == C_REDUCE && me != 0)
            break;
        const float *g = (const float *)r;
        for (size_t i = 0; i < cnt; i++) {
            if (!b->validate && i != 0 && i != cnt - 1)
                continue;
            float want = 0;
            for (int p = 0; p < n; p++)
                want += coll_val(p, it, i);
            if (g[i] != want)
                bench_fail("%s: wrong sum at element %zu of %zu: %g, expected %g", coll_names[c], i,
                           cnt, g[i], want);
        }
        break;
    }
    case C_GATHER:
    case C_ALLGATHER:
        if (c == C_ALLGATHER || me == 0)
            for (int p = 0; p < n; p++)
                bench_check(b, r + (size_t)p * size, size, bench_seed(it, 0, p), coll_names[c], p);
        break;
    case C_SCATTER:
        bench_check(b, r, size, bench_seed(it, me, 0), "scatter", 0);
        break;
    case C_ALLTOALL:
        for (int p = 0; p < n; p++)
            bench_check(b, r + (size_t)p * size, size, bench_seed(it, me, p), "alltoall", p);
        break;
    default:
        break;
    }
}

static void coll_call(bench_t *b, int c, size_t size, char *s, char *r) {
    int cnt = (int)size;
    MPI_Comm w = MPI_COMM_WORLD;
    switch (c) {
    case C_BCAST:
        MPI_Bcast(s, cnt, MPI_CHAR, 0, w);
        break;
    case C_REDUCE:
        MPI_Reduce(s, r, cnt / 4, MPI_FLOAT, MPI_SUM, 0, w);
        break;
    case C_ALLREDUCE:
        MPI_Allreduce(s, r, cnt / 4, MPI_FLOAT, MPI_SUM, w);
        break;
    case C_GATHER:
        MPI_Gather(s, cnt, MPI_CHAR, r, cnt, MPI_CHAR, 0, w);
        break;
    case C_SCATTER:
        MPI_Scatter(s, cnt, MPI_CHAR, r, cnt, MPI_CHAR, 0, w);
        break;
    case C_ALLGATHER:
        MPI_Allgather(s, cnt, MPI_CHAR, r, cnt, MPI_CHAR, w);
        break;
    case C_ALLTOALL:
        MPI_Alltoall(s, cnt, MPI_CHAR, r, cnt, MPI_CHAR, w);
        break;
    case C_BARRIER:
        MPI_Barrier(w);
        break;
    case C_GATHERV:
        MPI_Gatherv(s, cnt, MPI_CHAR, r, vcounts, vdispls, MPI_CHAR, 0, w);
        break;
    case C_SCATTERV:
        MPI_Scatterv(s, vcounts, vdispls, MPI_CHAR, r, cnt, MPI_CHAR, 0, w);
        break;
    default:
        break;
    }
    (void)b;
}

int main(int argc, char **argv) {
    bench_t b;
    bench_buf_t sbuf, rbuf;
    const bench_defaults_t d = {
        .sizes = "1:1M:2",
        .iters = 1000,
        .iters_min = 5,
        .warmup = 20,
        .budget_s = 0.3,
        .list = "bcast,reduce,allreduce,gather,scatter,allgather,alltoall,barrier",
        .usage = "  -c LIST    collectives: bcast,reduce,allreduce,gather,scatter,allgather,\n"
                 "             alltoall,barrier,gatherv,scatterv or all\n"
                 "             [all but gatherv,scatterv]\n"};

    bench_init(&b, "coll", &d, &argc, &argv);
    size_t max = bench_size_max(&b);
    bench_buf_alloc(&b, &sbuf, max * (size_t)b.nprocs, 1);
    bench_buf_alloc(&b, &rbuf, max * (size_t)b.nprocs, 1);
    vcounts = malloc(sizeof(int) * 2 * (size_t)b.nprocs);
    vdispls = vcounts + b.nprocs;

    for (int c = 0; c < C_N; c++) {
        if (!coll_selected(b.list, coll_names[c]))
            continue;
        for (int si = 0; si < b.nsizes; si++) {
            size_t size = b.sizes[si];
            if (c == C_BARRIER && si > 0)
                break;
            if (c == C_BARRIER)
                size = 0;
            if ((c == C_REDUCE || c == C_ALLREDUCE) && size < sizeof(float))
                continue;
            if (c == C_REDUCE || c == C_ALLREDUCE)
                size -= size % sizeof(float);
            bench_loop_t l;
            double mine = 0, c2c = bench_c2c_probe(&b);
            for (int phase = 0; phase < 2; phase++) {
                long n;
                if (phase == 0)
                    bench_loop_warm(&b, &l, size);
                else
                    bench_loop_start(&b, &l, size);
                while ((n = bench_batch(&b, &l)) > 0) {
                    double dt = 0;
                    for (long k = 0; k < n; k++) {
                        long it = l.done + k;
                        coll_prepare(&b, c, size, it, sbuf.base, rbuf.base);
                        double t0 = bench_now();
                        coll_call(&b, c, size, sbuf.base, rbuf.base);
                        dt += bench_now() - t0;
                        coll_check(&b, c, size, it, sbuf.base, rbuf.base);
                        MPI_Barrier(MPI_COMM_WORLD);
                    }
                    l.elapsed += dt;
                    if (phase == 1)
                        mine += dt;
                }
            }
            double us = mine * 1e6 / (double)l.done;
            double mean = bench_allmean(us), slowest = bench_allmax(us);
            bench_row(&b, coll_names[c], "-", size, "lat_us", mean);
            bench_row(&b, coll_names[c], "-", size, "max_us", slowest);
            bench_row_c2c(&b, coll_names[c], "-", size, c2c, bench_c2c_probe(&b));
        }
    }
    bench_buf_free(&sbuf);
    bench_buf_free(&rbuf);
    free(vcounts);
    bench_finalize(&b);
    return 0;
}
