/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * All-to-one pattern (seed 000 §IV, the shape of a Gather): the root
 * (rank 0) posts MPI_Irecv from every other rank into distinct buffers and
 * waits for all; the others block in MPI_Send. Timing as in one_to_all.c.
 */
#include "common.h"

#include <stdlib.h>

int main(int argc, char **argv) {
    bench_t b;
    bench_buf_t buf;
    const bench_defaults_t d = {
        .sizes = "1K:16M:4", .iters = 1000, .iters_min = 5, .warmup = 10, .budget_s = 0.3};

    bench_init(&b, "all_to_one", &d, &argc, &argv);
    if (b.nprocs < 2)
        bench_fail("all_to_one needs at least 2 ranks, got %d", b.nprocs);
    if (b.nprocs > BENCH_MAX_WINDOW)
        bench_fail("all_to_one supports at most %d ranks", BENCH_MAX_WINDOW);
    MPI_Request *req = calloc((size_t)b.nprocs, sizeof *req);
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
                            bench_poison(&b, bench_buf_slot(&buf, p), size, bench_seed(it, 0, p));
                        double t0 = bench_now();
                        for (int p = 1; p < b.nprocs; p++)
                            MPI_Irecv(bench_buf_slot(&buf, p), (int)size, MPI_CHAR, p, 1,
                                      MPI_COMM_WORLD, &req[p - 1]);
                        MPI_Waitall(b.nprocs - 1, req, MPI_STATUSES_IGNORE);
                        dt += bench_now() - t0;
                        for (int p = 1; p < b.nprocs; p++)
                            bench_check(&b, bench_buf_slot(&buf, p), size, bench_seed(it, 0, p),
                                        "all_to_one", p);
                    } else {
                        bench_stamp(&b, buf.base, size, bench_seed(it, 0, b.rank));
                        double t0 = bench_now();
                        MPI_Send(buf.base, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
                        dt += bench_now() - t0;
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
        bench_row(&b, "all_to_one", "-", size, "lat_us", mean);
        bench_row(&b, "all_to_one", "-", size, "max_us", slowest);
    }
    bench_buf_free(&buf);
    free(req);
    bench_finalize(&b);
    return 0;
}
