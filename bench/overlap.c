/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Computation/communication overlap, after Sur et al. 2006 §5.1 (seed 001).
 *
 * Sender overlap (-a send): rank 0 posts MPI_Isend, computes for W
 * microseconds without calling MPI, then MPI_Wait; rank 1 blocks in
 * MPI_Recv. Receiver overlap (-a recv): rank 0 posts MPI_Irecv, computes W,
 * MPI_Wait; rank 1 blocks in MPI_Send. With both sides non-blocking (-a
 * send_nb, recv_nb; rows overlap_send_nb, overlap_recv_nb) rank 1 posts
 * MPI_Irecv (MPI_Isend) and waits at once in MPI_Wait: a library may then
 * tell a peer that waits from one that computes. -a both runs send and recv,
 * -a nb send_nb and recv_nb, -a all the four. Rank 0 times the whole operation: T.
 * Before each operation rank 1 and rank 0 exchange a zero-byte "ready"
 * message so that both sides start together.
 *
 * W is a multiple (-W factors) of T0, the time of the operation with no
 * computation (factor 0). T is the median over iterations, not the mean: a
 * single preemption on a shared machine would otherwise swamp the figure.
 * For each W the rows are
 *     T_us    median T
 *     W_us    measured time of the computation alone (the loop is calibrated
 *             at start-up, but a busy core makes it longer)
 *     ratio   W/T, the figure of the paper: 1 means fully overlapped
 *     hidden  (T0 + W - T) / T0, the share of the transfer hidden behind
 *             the computation: 1 all of it, 0 none (serialized), negative
 *             when computing made the transfer slower still
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OVL_SEND, OVL_RECV, OVL_SEND_NB, OVL_RECV_NB, OVL_N };
static const char *const ovl_names[OVL_N] = {"overlap_send", "overlap_recv", "overlap_send_nb",
                                             "overlap_recv_nb"};

/* Is mode in the -a variant? */
static int ovl_selected(const char *variant, int mode) {
    const char *name = ovl_names[mode] + 8; /* after "overlap_" */
    if (!strcmp(variant, "all") || !strcmp(variant, name))
        return 1;
    if (!strcmp(variant, "both"))
        return mode == OVL_SEND || mode == OVL_RECV;
    return !strcmp(variant, "nb") && (mode == OVL_SEND_NB || mode == OVL_RECV_NB);
}

static int ovl_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the timed iterations on rank 0, in microseconds. */
static double ovl_run(bench_t *b, int mode, size_t size, double w_us, char *s, char *r) {
    bench_loop_t l;
    int nb = mode == OVL_SEND_NB || mode == OVL_RECV_NB; /* rank 1 non-blocking */
    if (nb)
        mode -= OVL_SEND_NB;
    double *times = malloc((size_t)b->iters * sizeof *times);
    if (!times)
        bench_fail("cannot allocate %ld timings", b->iters);
    for (int phase = 0; phase < 2; phase++) {
        long n;
        if (phase == 0)
            bench_loop_warm(b, &l, size);
        else
            bench_loop_start(b, &l, size);
        while ((n = bench_batch(b, &l)) > 0) {
            for (long k = 0; k < n && b->rank < 2; k++) {
                long it = l.done + k;
                MPI_Request req;
                if (mode == OVL_SEND && b->rank == 0) {
                    bench_stamp(b, s, size, bench_seed(it, 0, 0));
                    MPI_Recv(NULL, 0, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    double t0 = bench_now();
                    MPI_Isend(s, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req);
                    bench_compute_us(w_us);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                    double dt = bench_now() - t0;
                    l.elapsed += dt;
                    if (phase == 1)
                        times[it] = dt;
                } else if (mode == OVL_SEND) {
                    bench_poison(b, r, size, bench_seed(it, 0, 0));
                    MPI_Send(NULL, 0, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
                    if (nb) {
                        MPI_Irecv(r, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &req);
                        MPI_Wait(&req, MPI_STATUS_IGNORE);
                    } else {
                        MPI_Recv(r, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    }
                    bench_check(b, r, size, bench_seed(it, 0, 0), "overlap_send", 0);
                } else if (b->rank == 0) {
                    bench_poison(b, r, size, bench_seed(it, 0, 1));
                    double t0 = bench_now();
                    MPI_Irecv(r, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req);
                    MPI_Send(NULL, 0, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
                    bench_compute_us(w_us);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                    double dt = bench_now() - t0;
                    l.elapsed += dt;
                    if (phase == 1)
                        times[it] = dt;
                    bench_check(b, r, size, bench_seed(it, 0, 1), "overlap_recv", 1);
                } else {
                    bench_stamp(b, s, size, bench_seed(it, 0, 1));
                    MPI_Recv(NULL, 0, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    if (nb) {
                        MPI_Isend(s, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &req);
                        MPI_Wait(&req, MPI_STATUS_IGNORE);
                    } else {
                        MPI_Send(s, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
                    }
                }
            }
        }
    }
    double med = 0;
    if (b->rank == 0 && l.done > 0) {
        qsort(times, (size_t)l.done, sizeof *times, ovl_cmp);
        med = l.done % 2 ? times[l.done / 2] : (times[l.done / 2 - 1] + times[l.done / 2]) / 2;
    }
    free(times);
    return med * 1e6;
}

int main(int argc, char **argv) {
    bench_t b;
    bench_buf_t sbuf, rbuf;
    const bench_defaults_t d = {.sizes = "64K,1M,4M",
                                .iters = 1000,
                                .iters_min = 5,
                                .warmup = 20,
                                .budget_s = 0.5,
                                .variant = "both",
                                .factors = "0,0.25,0.5,0.75,1,1.5,2,3,4",
                                .usage =
                                    "  -a MODE    send, recv, both (the two), send_nb, recv_nb,\n"
                                    "             nb (the two) or all [both]\n"
                                    "  -W LIST    W as multiples of T0 [0,0.25,...,4]\n"};

    bench_init(&b, "overlap", &d, &argc, &argv);
    if (b.nprocs < 2)
        bench_fail("overlap needs at least 2 ranks, got %d", b.nprocs);
    int any = 0;
    for (int mode = 0; mode < OVL_N; mode++)
        any |= ovl_selected(b.variant, mode);
    if (!any)
        bench_fail("-a must be send, recv, both, send_nb, recv_nb, nb or all, not '%s'", b.variant);
    bench_compute_calibrate();
    bench_buf_alloc(&b, &sbuf, bench_size_max(&b), 1);
    bench_buf_alloc(&b, &rbuf, bench_size_max(&b), 1);

    for (int mode = 0; mode < OVL_N; mode++) {
        const char *name = ovl_names[mode];
        if (!ovl_selected(b.variant, mode))
            continue;
        for (int si = 0; si < b.nsizes; si++) {
            size_t size = b.sizes[si];
            double t0_us = ovl_run(&b, mode, size, 0, sbuf.base, rbuf.base);
            bench_bcast_double(&t0_us);
            for (int fi = 0; fi < b.nfactors; fi++) {
                double f = b.factors[fi], w_us = f * t0_us, t_us = t0_us, w_meas = 0;
                char param[32];
                snprintf(param, sizeof param, "%g", f);
                if (f > 0) {
                    /* The computation alone, on this core, right before the runs. */
                    int reps = w_us > 0 ? (int)(20000.0 / w_us) : 1;
                    reps = reps < 5 ? 5 : (reps > 200 ? 200 : reps);
                    w_meas = bench_compute_measure(w_us, reps);
                    t_us = ovl_run(&b, mode, size, w_us, sbuf.base, rbuf.base);
                }
                bench_row(&b, name, param, size, "T_us", t_us);
                bench_row(&b, name, param, size, "W_us", w_meas);
                bench_row(&b, name, param, size, "ratio", t_us > 0 ? w_meas / t_us : 0);
                if (f > 0)
                    bench_row(&b, name, param, size, "hidden", (t0_us + w_meas - t_us) / t0_us);
            }
        }
    }
    bench_buf_free(&sbuf);
    bench_buf_free(&rbuf);
    bench_finalize(&b);
    return 0;
}
