/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Overlap of the non-blocking collectives, OSU style (osu_ibcast, ...).
 * For each collective and size:
 *   pure_us     time of MPI_I<coll> + MPI_Wait with nothing in between
 *   W           the slowest rank's pure_us: every rank then runs
 *               MPI_I<coll>; compute W (no MPI calls); MPI_Wait
 *   total_us    time of that sequence
 *   W_us        measured time of the computation alone
 *   overlap_pct 100 * (1 - (total - W_us) / pure), clamped to 0..100:
 *               the share of the collective hidden behind the computation
 * Figures are means over ranks. Sizes and -c names as in coll.c, with an
 * i in front: ibcast,ireduce,iallreduce,igather,iscatter,iallgather,
 * ialltoall,ibarrier. Data is checked as in coll.c (first/last bytes).
 */
#include "common.h"

#include <stdio.h>
#include <string.h>

static const char *const ic_names[] = {"ibcast",   "ireduce",    "iallreduce", "igather",
                                       "iscatter", "iallgather", "ialltoall",  "ibarrier"};
enum {
    C_BCAST,
    C_REDUCE,
    C_ALLREDUCE,
    C_GATHER,
    C_SCATTER,
    C_ALLGATHER,
    C_ALLTOALL,
    C_BARRIER,
    C_N
};

static int ic_selected(const char *list, const char *name) {
    char buf[256];
    if (!strcmp(list, "all"))
        return 1;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (!strcmp(tok, name))
            return 1;
    return 0;
}

static float ic_val(int r, long it, size_t i) {
    return (float)((r + 1) + (int)((it + (long)i) % 7));
}

static void ic_start(int c, size_t size, char *s, char *r, MPI_Request *req) {
    int cnt = (int)size;
    MPI_Comm w = MPI_COMM_WORLD;
    switch (c) {
    case C_BCAST:
        MPI_Ibcast(s, cnt, MPI_CHAR, 0, w, req);
        break;
    case C_REDUCE:
        MPI_Ireduce(s, r, cnt / 4, MPI_FLOAT, MPI_SUM, 0, w, req);
        break;
    case C_ALLREDUCE:
        MPI_Iallreduce(s, r, cnt / 4, MPI_FLOAT, MPI_SUM, w, req);
        break;
    case C_GATHER:
        MPI_Igather(s, cnt, MPI_CHAR, r, cnt, MPI_CHAR, 0, w, req);
        break;
    case C_SCATTER:
        MPI_Iscatter(s, cnt, MPI_CHAR, r, cnt, MPI_CHAR, 0, w, req);
        break;
    case C_ALLGATHER:
        MPI_Iallgather(s, cnt, MPI_CHAR, r, cnt, MPI_CHAR, w, req);
        break;
    case C_ALLTOALL:
        MPI_Ialltoall(s, cnt, MPI_CHAR, r, cnt, MPI_CHAR, w, req);
        break;
    default:
        MPI_Ibarrier(w, req);
        break;
    }
}

/* Stamp (before) or check (after) the first/last bytes, or every byte with -v. */
static void ic_data(bench_t *b, int c, size_t size, long it, char *s, char *r, int check) {
    int n = b->nprocs, me = b->rank;
    size_t cnt = size / 4;
    switch (c) {
    case C_BCAST:
        if (me == 0 && !check)
            bench_stamp(b, s, size, bench_seed(it, 0, 0));
        else if (me != 0 && !check)
            bench_poison(b, s, size, bench_seed(it, 0, 0));
        else if (me != 0)
            bench_check(b, s, size, bench_seed(it, 0, 0), "ibcast", 0);
        break;
    case C_REDUCE:
    case C_ALLREDUCE: {
        float *f = (float *)s, *g = (float *)r;
        for (size_t i = 0; i < cnt; i++) {
            if (!b->validate && i != 0 && i != cnt - 1)
                continue;
            if (!check) {
                f[i] = ic_val(me, it, i);
                g[i] = -1;
            } else if (c == C_ALLREDUCE || me == 0) {
                float want = 0;
                for (int p = 0; p < n; p++)
                    want += ic_val(p, it, i);
                if (g[i] != want)
                    bench_fail("%s: wrong sum at element %zu of %zu: %g, expected %g", ic_names[c],
                               i, cnt, g[i], want);
            }
        }
        break;
    }
    case C_GATHER:
    case C_ALLGATHER:
        if (!check)
            bench_stamp(b, s, size, bench_seed(it, 0, me));
        if (c == C_ALLGATHER || me == 0)
            for (int p = 0; p < n; p++) {
                if (check)
                    bench_check(b, r + (size_t)p * size, size, bench_seed(it, 0, p), ic_names[c],
                                p);
                else
                    bench_poison(b, r + (size_t)p * size, size, bench_seed(it, 0, p));
            }
        break;
    case C_SCATTER:
        if (!check && me == 0)
            for (int p = 0; p < n; p++)
                bench_stamp(b, s + (size_t)p * size, size, bench_seed(it, p, 0));
        if (check)
            bench_check(b, r, size, bench_seed(it, me, 0), "iscatter", 0);
        else
            bench_poison(b, r, size, bench_seed(it, me, 0));
        break;
    case C_ALLTOALL:
        for (int p = 0; p < n; p++) {
            if (check) {
                bench_check(b, r + (size_t)p * size, size, bench_seed(it, me, p), "ialltoall", p);
            } else {
                bench_stamp(b, s + (size_t)p * size, size, bench_seed(it, p, me));
                bench_poison(b, r + (size_t)p * size, size, bench_seed(it, me, p));
            }
        }
        break;
    default:
        break;
    }
}

/* Mean time per call of start; compute w_us; wait on this rank, in microseconds. */
static double ic_run(bench_t *b, int c, size_t size, double w_us, char *s, char *r) {
    bench_loop_t l;
    double mine = 0;
    for (int phase = 0; phase < 2; phase++) {
        long n;
        if (phase == 0)
            bench_loop_warm(b, &l, size);
        else
            bench_loop_start(b, &l, size);
        while ((n = bench_batch(b, &l)) > 0) {
            double dt = 0;
            for (long k = 0; k < n; k++) {
                long it = l.done + k;
                MPI_Request req;
                ic_data(b, c, size, it, s, r, 0);
                double t0 = bench_now();
                ic_start(c, size, s, r, &req);
                bench_compute_us(w_us);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                dt += bench_now() - t0;
                ic_data(b, c, size, it, s, r, 1);
                MPI_Barrier(MPI_COMM_WORLD);
            }
            l.elapsed += dt;
            if (phase == 1)
                mine += dt;
        }
    }
    return mine * 1e6 / (double)l.done;
}

int main(int argc, char **argv) {
    bench_t b;
    bench_buf_t sbuf, rbuf;
    const bench_defaults_t d = {
        .sizes = "1:1M:4",
        .iters = 1000,
        .iters_min = 5,
        .warmup = 20,
        .budget_s = 0.3,
        .list = "ibcast,ireduce,iallreduce,igather,iscatter,iallgather,ialltoall,ibarrier",
        .usage = "  -c LIST    ibcast,ireduce,iallreduce,igather,iscatter,iallgather,\n"
                 "             ialltoall,ibarrier or all [all]\n"};

    bench_init(&b, "icoll", &d, &argc, &argv);
    bench_compute_calibrate();
    size_t max = bench_size_max(&b);
    bench_buf_alloc(&b, &sbuf, max * (size_t)b.nprocs, 1);
    bench_buf_alloc(&b, &rbuf, max * (size_t)b.nprocs, 1);

    for (int c = 0; c < C_N; c++) {
        if (!ic_selected(b.list, ic_names[c]))
            continue;
        for (int si = 0; si < b.nsizes; si++) {
            size_t size = b.sizes[si];
            if (c == C_BARRIER && si > 0)
                break;
            if (c == C_BARRIER)
                size = 0;
            if ((c == C_REDUCE || c == C_ALLREDUCE) && size < 4)
                continue;
            if (c == C_REDUCE || c == C_ALLREDUCE)
                size -= size % 4;
            double pure = ic_run(&b, c, size, 0, sbuf.base, rbuf.base);
            double w_us = bench_allmax(pure);
            int reps = w_us > 0 ? (int)(20000.0 / w_us) : 1;
            reps = reps < 5 ? 5 : (reps > 200 ? 200 : reps);
            double w_meas = bench_compute_measure(w_us, reps);
            double total = ic_run(&b, c, size, w_us, sbuf.base, rbuf.base);
            double ovl = 100.0 * (1.0 - (total - w_meas) / pure);
            ovl = ovl < 0 ? 0 : (ovl > 100 ? 100 : ovl);
            bench_row(&b, ic_names[c], "-", size, "pure_us", bench_allmean(pure));
            bench_row(&b, ic_names[c], "-", size, "total_us", bench_allmean(total));
            bench_row(&b, ic_names[c], "-", size, "W_us", bench_allmean(w_meas));
            bench_row(&b, ic_names[c], "-", size, "overlap_pct", bench_allmean(ovl));
        }
    }
    bench_buf_free(&sbuf);
    bench_buf_free(&rbuf);
    bench_finalize(&b);
    return 0;
}
