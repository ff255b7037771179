/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-to-all pattern (seed 000 §IV, the shape of a Scatter): the root
 * (rank 0) posts MPI_Isend of a distinct buffer to every other rank and
 * waits for all; the others block in MPI_Recv. Each rank times its part of
 * each round; an untimed barrier separates rounds. lat_us is the mean over
 * ranks, max_us the slowest rank (the time until everyone has its data).
 */
#include "common.h"

#include <stdlib.h>

int main(int argc, char **argv) {
    bench_t b;
    bench_buf_t buf;
    const bench_defaults_t d = {
        .sizes = "1K:16M:4", .iters = 1000, .iters_min = 5, .warmup = 10, .budget_s = 0.3};

    bench_init(&b, "one_to_all", &d, &argc, &argv);
    if (b.nprocs < 2)
        bench_fail("one_to_all needs at least 2 ranks, got %d", b.nprocs);
    if (b.nprocs > BENCH_MAX_WINDOW)
        bench_fail("one_to_all supports at most %d ranks", BENCH_MAX_WINDOW);
    MPI_Request *req = calloc((size_t)b.nprocs, sizeof *req);
    /* One buffer per destination at the root: distinct data, as a Scatter. */
    bench_t multi = b;
    multi.buf_mode = BENCH_BUF_MULTI;
    bench_buf_alloc(&multi, &buf, bench_size_max(&b), b.rank == 0 ? b.nprocs : 1);

    for (int si = 0; si < b.nsizes; si++) {
        size_t size = b.sizes[si];
        bench_loop_t l;
        double mine = 0;
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
                    if (b.rank == 0) {
                        for (int p = 1; p < b.nprocs; p++)
                            bench_stamp(&b, bench_buf_slot(&buf, p), size, bench_seed(it, p, 0));
                        double t0 = bench_now();
                        for (int p = 1; p < b.nprocs; p++)
                            MPI_Isend(bench_buf_slot(&buf, p), (int)size, MPI_CHAR, p, 1,
                                      MPI_COMM_WORLD, &req[p - 1]);
                        MPI_Waitall(b.nprocs - 1, req, MPI_STATUSES_IGNORE);
                        dt += bench_now() - t0;
                    } else {
                        bench_poison(&b, buf.base, size, bench_seed(it, b.rank, 0));
                        double t0 = bench_now();
                        MPI_Recv(buf.base, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE);
                        dt += bench_now() - t0;
                        bench_check(&b, buf.base, size, bench_seed(it, b.rank, 0), "one_to_all", 0);
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
        bench_row(&b, "one_to_all", "-", size, "lat_us", mean);
        bench_row(&b, "one_to_all", "-", size, "max_us", slowest);
    }
    bench_buf_free(&buf);
    free(req);
    bench_finalize(&b);
    return 0;
}
