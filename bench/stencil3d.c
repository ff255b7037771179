/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 3D 7-point stencil halo exchange (seed 000 §IV-C): the ranks form a
 * periodic 3D grid (balanced as MPI_Dims_create would, ranks in row-major
 * order; computed here so that only point-to-point calls are needed); every
 * iteration each rank posts
 * MPI_Irecv for the six faces, MPI_Isend of its six faces, and waits for
 * all. A neighbour that is the rank itself (a dimension of extent 1) is
 * skipped; with extent 2 both neighbours in that dimension are the same
 * rank and it gets two messages, told apart by the tag. size is the bytes
 * of one face (-s 1M for the 1 MB faces of the paper). No barrier between
 * iterations: neighbours pace each other, as in an application. lat_us is
 * the mean over ranks of the time per iteration, max_us the slowest rank;
 * param is the grid.
 */
#include "common.h"

#include <stdio.h>

/* Balanced factors of n, largest first (what MPI_Dims_create gives). */
static void st_dims(int n, int dims[3]) {
    int primes[32], np = 0;
    dims[0] = dims[1] = dims[2] = 1;
    for (int p = 2; n > 1 && np < 32; p++)
        while (n % p == 0 && np < 32) {
            primes[np++] = p;
            n /= p;
        }
    for (int i = np - 1; i >= 0; i--) { /* largest prime to the smallest dimension */
        int k = 0;
        for (int j = 1; j < 3; j++)
            if (dims[j] < dims[k])
                k = j;
        dims[k] *= primes[i];
    }
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (dims[j] > dims[i]) {
                int t = dims[i];
                dims[i] = dims[j];
                dims[j] = t;
            }
}

/* The rank at displacement disp along dimension k from rank r, periodic, row-major. */
static int st_shift(const int dims[3], int r, int k, int disp) {
    int c[3] = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
    c[k] = ((c[k] + disp) % dims[k] + dims[k]) % dims[k];
    return (c[0] * dims[1] + c[1]) * dims[2] + c[2];
}

int main(int argc, char **argv) {
    bench_t b;
    bench_buf_t sbuf, rbuf;
    MPI_Comm cart = MPI_COMM_WORLD;
    int dims[3], src[6], dst[6];
    char grid[32];
    const bench_defaults_t d = {
        .sizes = "1K:1M:4", .iters = 1000, .iters_min = 5, .warmup = 10, .budget_s = 0.3};

    bench_init(&b, "stencil3d", &d, &argc, &argv);
    st_dims(b.nprocs, dims);
    snprintf(grid, sizeof grid, "%dx%dx%d", dims[0], dims[1], dims[2]);
    for (int dir = 0; dir < 6; dir++) {
        int disp = dir % 2 ? 1 : -1;
        dst[dir] = st_shift(dims, b.rank, dir / 2, disp);
        src[dir] = st_shift(dims, b.rank, dir / 2, -disp);
    }
    bench_t multi = b;
    multi.buf_mode = BENCH_BUF_MULTI;
    bench_buf_alloc(&multi, &sbuf, bench_size_max(&b), 6);
    bench_buf_alloc(&multi, &rbuf, bench_size_max(&b), 6);

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
                    MPI_Request req[12];
                    int nr = 0;
                    for (int dir = 0; dir < 6; dir++) {
                        if (dst[dir] == b.rank)
                            continue;
                        bench_stamp(&b, bench_buf_slot(&sbuf, dir), size,
                                    bench_seed(it, dir, b.rank));
                        bench_poison(&b, bench_buf_slot(&rbuf, dir), size,
                                     bench_seed(it, dir, src[dir]));
                    }
                    double t0 = bench_now();
                    for (int dir = 0; dir < 6; dir++)
                        if (src[dir] != b.rank)
                            MPI_Irecv(bench_buf_slot(&rbuf, dir), (int)size, MPI_CHAR, src[dir],
                                      dir, cart, &req[nr++]);
                    for (int dir = 0; dir < 6; dir++)
                        if (dst[dir] != b.rank)
                            MPI_Isend(bench_buf_slot(&sbuf, dir), (int)size, MPI_CHAR, dst[dir],
                                      dir, cart, &req[nr++]);
                    MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
                    dt += bench_now() - t0;
                    for (int dir = 0; dir < 6; dir++)
                        if (src[dir] != b.rank)
                            bench_check(&b, bench_buf_slot(&rbuf, dir), size,
                                        bench_seed(it, dir, src[dir]), "stencil3d", src[dir]);
                }
                l.elapsed += dt;
                if (phase == 1)
                    mine += dt;
            }
        }
        double us = mine * 1e6 / (double)l.done;
        double mean = bench_allmean(us), slowest = bench_allmax(us);
        bench_row(&b, "stencil3d", grid, size, "lat_us", mean);
        bench_row(&b, "stencil3d", grid, size, "max_us", slowest);
    }
    bench_buf_free(&sbuf);
    bench_buf_free(&rbuf);
    bench_finalize(&b);
    return 0;
}
