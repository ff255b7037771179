/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unidirectional bandwidth (OSU osu_bw): rank 0 posts a window of
 * non-blocking sends, rank 1 a window of non-blocking receives; after both
 * complete rank 1 sends a 4-byte acknowledgement. Bandwidth counts the
 * payload only. With -b single every slot of the window is the same buffer
 * (in cache, as OSU does), with -b multi each slot has its own.
 */
#include "common.h"

int main(int argc, char **argv) {
    bench_t b;
    bench_buf_t buf;
    char ack[4] = {0};
    MPI_Request req[BENCH_MAX_WINDOW];
    const bench_defaults_t d = {
        .sizes = "1:16M:2", .iters = 1000, .iters_min = 5, .warmup = 20, .budget_s = 0.5};

    bench_init(&b, "bw", &d, &argc, &argv);
    if (b.nprocs < 2)
        bench_fail("bw needs at least 2 ranks, got %d", b.nprocs);
    if (b.rank < 2)
        bench_buf_alloc(&b, &buf, bench_size_max(&b), b.window);

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
                    int single = buf.nslots == 1;
                    if (b.rank == 0) {
                        for (int j = 0; j < b.window; j++) {
                            char *s = bench_buf_slot(&buf, j);
                            if (!single || j == 0)
                                bench_stamp(&b, s, size, bench_seed(it, single ? 0 : j, 0));
                            MPI_Isend(s, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req[j]);
                        }
                        MPI_Waitall(b.window, req, MPI_STATUSES_IGNORE);
                        MPI_Recv(ack, 4, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    } else {
                        for (int j = 0; j < b.window; j++) {
                            char *r = bench_buf_slot(&buf, j);
                            if (!single || j == 0)
                                bench_poison(&b, r, size, bench_seed(it, single ? 0 : j, 0));
                            MPI_Irecv(r, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &req[j]);
                        }
                        MPI_Waitall(b.window, req, MPI_STATUSES_IGNORE);
                        for (int j = 0; j < (single ? 1 : b.window); j++)
                            bench_check(&b, bench_buf_slot(&buf, j), size,
                                        bench_seed(it, single ? 0 : j, 0), "bw", 0);
                        MPI_Send(ack, 4, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
                    }
                }
                l.elapsed += bench_now() - t0;
            }
        }
        double bytes = (double)size * b.window * (double)l.done;
        bench_row(&b, "bw", "-", size, "bw_MBps", bytes / l.elapsed / 1e6);
        bench_row_c2c(&b, "bw", "-", size, c2c, bench_c2c_probe(&b));
    }
    if (b.rank < 2)
        bench_buf_free(&buf);
    bench_finalize(&b);
    return 0;
}
