/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-pair bandwidth and message rate (OSU osu_mbw_mr): with N ranks,
 * rank i < N/2 streams windows to rank i + N/2 as in bw.c, all pairs at
 * once. The aggregate figures divide the payload (or message count) of all
 * pairs by the slowest sender's time. param is the number of pairs.
 */
#include "common.h"

#include <stdio.h>

int main(int argc, char **argv) {
    bench_t b;
    bench_buf_t buf;
    char ack[4] = {0};
    char param[16];
    MPI_Request req[BENCH_MAX_WINDOW];
    const bench_defaults_t d = {
        .sizes = "1:16M:2", .iters = 1000, .iters_min = 5, .warmup = 20, .budget_s = 0.5};

    bench_init(&b, "mbw_mr", &d, &argc, &argv);
    int pairs = b.nprocs / 2;
    if (pairs < 1)
        bench_fail("mbw_mr needs at least 2 ranks, got %d", b.nprocs);
    int sender = b.rank < pairs;
    int active = b.rank < 2 * pairs;
    int peer = sender ? b.rank + pairs : b.rank - pairs;
    snprintf(param, sizeof param, "%d", pairs);
    if (active)
        bench_buf_alloc(&b, &buf, bench_size_max(&b), b.window);

    for (int si = 0; si < b.nsizes; si++) {
        size_t size = b.sizes[si];
        bench_loop_t l;
        double mine = 0; /* this sender's timed seconds */
        double c2c = bench_c2c_probe(&b);
        for (int phase = 0; phase < 2; phase++) {
            long n;
            if (phase == 0)
                bench_loop_warm(&b, &l, size);
            else
                bench_loop_start(&b, &l, size);
            while ((n = bench_batch(&b, &l)) > 0) {
                double t0 = bench_now();
                for (long k = 0; k < n && active; k++) {
                    long it = l.done + k;
                    int single = buf.nslots == 1;
                    if (sender) {
                        for (int j = 0; j < b.window; j++) {
                            char *s = bench_buf_slot(&buf, j);
                            if (!single || j == 0)
                                bench_stamp(&b, s, size, bench_seed(it, single ? 0 : j, b.rank));
                            MPI_Isend(s, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &req[j]);
                        }
                        MPI_Waitall(b.window, req, MPI_STATUSES_IGNORE);
                        MPI_Recv(ack, 4, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    } else {
                        for (int j = 0; j < b.window; j++) {
                            char *r = bench_buf_slot(&buf, j);
                            if (!single || j == 0)
                                bench_poison(&b, r, size, bench_seed(it, single ? 0 : j, peer));
                            MPI_Irecv(r, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &req[j]);
                        }
                        MPI_Waitall(b.window, req, MPI_STATUSES_IGNORE);
                        for (int j = 0; j < (single ? 1 : b.window); j++)
                            bench_check(&b, bench_buf_slot(&buf, j), size,
                                        bench_seed(it, single ? 0 : j, peer), "mbw_mr", peer);
                        MPI_Send(ack, 4, MPI_CHAR, peer, 2, MPI_COMM_WORLD);
                    }
                }
                double dt = bench_now() - t0;
                l.elapsed += dt;
                if (phase == 1)
                    mine += dt;
            }
        }
        double slowest = bench_allmax(sender ? mine : 0);
        double msgs = (double)pairs * b.window * (double)l.done;
        bench_row(&b, "mbw_mr", param, size, "bw_MBps", msgs * (double)size / slowest / 1e6);
        bench_row(&b, "mbw_mr", param, size, "msg_rate", msgs / slowest);
        bench_row_c2c(&b, "mbw_mr", param, size, c2c, bench_c2c_probe(&b));
    }
    if (active)
        bench_buf_free(&buf);
    bench_finalize(&b);
    return 0;
}
