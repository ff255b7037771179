/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ping-pong latency between ranks 0 and 1 (OSU osu_latency): rank 0 sends,
 * rank 1 receives and sends back; one-way latency is half the round trip.
 * Other ranks idle. With -b multi, iteration i uses buffer i mod window on
 * both sides (out of cache for large messages).
 */
#include "common.h"

int main(int argc, char **argv) {
    bench_t b;
    bench_buf_t sbuf, rbuf;
    const bench_defaults_t d = {
        .sizes = "0:16M:2", .iters = 10000, .iters_min = 20, .warmup = 200, .budget_s = 0.5};

    bench_init(&b, "latency", &d, &argc, &argv);
    if (b.nprocs < 2)
        bench_fail("latency needs at least 2 ranks, got %d", b.nprocs);
    bench_buf_alloc(&b, &sbuf, bench_size_max(&b), b.window);
    bench_buf_alloc(&b, &rbuf, bench_size_max(&b), b.window);

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
                for (long k = 0; k < n; k++) {
                    long it = l.done + k;
                    char *s = bench_buf_slot(&sbuf, (int)(it % b.window));
                    char *r = bench_buf_slot(&rbuf, (int)(it % b.window));
                    if (b.rank == 0) {
                        bench_stamp(&b, s, size, bench_seed(it, 0, 0));
                        bench_poison(&b, r, size, bench_seed(it, 0, 1));
                        MPI_Send(s, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                        MPI_Recv(r, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        bench_check(&b, r, size, bench_seed(it, 0, 1), "latency", 1);
                    } else if (b.rank == 1) {
                        bench_poison(&b, r, size, bench_seed(it, 0, 0));
                        MPI_Recv(r, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        bench_check(&b, r, size, bench_seed(it, 0, 0), "latency", 0);
                        bench_stamp(&b, s, size, bench_seed(it, 0, 1));
                        MPI_Send(s, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
                    }
                }
                l.elapsed += bench_now() - t0;
            }
        }
        bench_row(&b, "latency", "-", size, "lat_us", l.elapsed * 1e6 / (2.0 * (double)l.done));
        bench_row_c2c(&b, "latency", "-", size, c2c, bench_c2c_probe(&b));
    }
    bench_buf_free(&sbuf);
    bench_buf_free(&rbuf);
    bench_finalize(&b);
    return 0;
}
