/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bidirectional bandwidth (OSU osu_bibw): ranks 0 and 1 each post a window
 * of non-blocking receives, then a window of non-blocking sends to the
 * other, and wait for all of them. Bandwidth counts the payload of both
 * directions. Buffers as in bw.c (-b single or multi).
 */
#include "common.h"

int main(int argc, char **argv) {
    bench_t b;
    bench_buf_t sbuf, rbuf;
    MPI_Request req[2 * BENCH_MAX_WINDOW];
    const bench_defaults_t d = {
        .sizes = "1:16M:2", .iters = 1000, .iters_min = 5, .warmup = 20, .budget_s = 0.5};

    bench_init(&b, "bibw", &d, &argc, &argv);
    if (b.nprocs < 2)
        bench_fail("bibw needs at least 2 ranks, got %d", b.nprocs);
    if (b.rank < 2) {
        bench_buf_alloc(&b, &sbuf, bench_size_max(&b), b.window);
        bench_buf_alloc(&b, &rbuf, bench_size_max(&b), b.window);
    }
    int peer = 1 - b.rank;

    for (int si = 0; si < b.nsizes; si++) {
        size_t size = b.sizes[si];
        bench_loop_t l;
        double c2c = bench_c2c_probe(&b);
        for (int phase = 0; phase < 2; phase++) {
            long n;
            if (phase == 0)
                bench_loop_warm(&b, &l, size);
            else
                bench_loop_start(&b, &l, size);
            while ((n = bench_batch(&b, &l)) > 0) {
                double t0 = bench_now();
                for (long k = 0; k < n && b.rank < 2; k++) {
                    long it = l.done + k;
                    int single = sbuf.nslots == 1;
                    for (int j = 0; j < b.window; j++) {
                        char *r = bench_buf_slot(&rbuf, j);
                        if (!single || j == 0)
                            bench_poison(&b, r, size, bench_seed(it, single ? 0 : j, peer));
                        MPI_Irecv(r, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &req[j]);
                    }
                    for (int j = 0; j < b.window; j++) {
                        char *s = bench_buf_slot(&sbuf, j);
                        if (!single || j == 0)
                            bench_stamp(&b, s, size, bench_seed(it, single ? 0 : j, b.rank));
                        MPI_Isend(s, (int)size, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
                                  &req[b.window + j]);
                    }
                    MPI_Waitall(2 * b.window, req, MPI_STATUSES_IGNORE);
                    for (int j = 0; j < (single ? 1 : b.window); j++)
                        bench_check(&b, bench_buf_slot(&rbuf, j), size,
                                    bench_seed(it, single ? 0 : j, peer), "bibw", peer);
                }
                l.elapsed += bench_now() - t0;
            }
        }
        double bytes = 2.0 * (double)size * b.window * (double)l.done;
        bench_row(&b, "bibw", "-", size, "bw_MBps", bytes / l.elapsed / 1e6);
        bench_row_c2c(&b, "bibw", "-", size, c2c, bench_c2c_probe(&b));
    }
    if (b.rank < 2) {
        bench_buf_free(&sbuf);
        bench_buf_free(&rbuf);
    }
    bench_finalize(&b);
    return 0;
}
