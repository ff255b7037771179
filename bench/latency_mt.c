/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-threaded ping-pong latency (OSU osu_latency_mt): T threads on rank 0 and T on
 * rank 1, thread t of each pair ping-ponging with tag t on MPI_COMM_WORLD, all pairs at
 * once; one-way latency is half the round trip, averaged over the threads (as OSU).
 * -c lists the thread counts [1,2,4]; param is the thread count. Needs
 * MPI_THREAD_MULTIPLE. Every message is stamped and checked (every byte with -v).
 */
#include "mt.h"

typedef struct {
    bench_buf_t s[MT_MAX_THREADS], r[MT_MAX_THREADS];
} lat_bufs_t;

static void lat_loop(mt_run_t *run, int t, long first, long n) {
    const bench_t *b = run->b;
    lat_bufs_t *bufs = run->user;
    char *s = bufs->s[t].base, *r = bufs->r[t].base;
    size_t size = run->size;
    int peer = 1 - b->rank;
    for (long it = first; it < first + n; it++) {
        if (b->rank == 0) {
            bench_stamp(b, s, size, bench_seed(it, t, 0));
            bench_poison(b, r, size, bench_seed(it, t, 1));
            MPI_Send(s, (int)size, MPI_CHAR, peer, t, MPI_COMM_WORLD);
            MPI_Recv(r, (int)size, MPI_CHAR, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bench_check(b, r, size, bench_seed(it, t, 1), "latency_mt", peer);
        } else {
            bench_poison(b, r, size, bench_seed(it, t, 0));
            MPI_Recv(r, (int)size, MPI_CHAR, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bench_check(b, r, size, bench_seed(it, t, 0), "latency_mt", peer);
            bench_stamp(b, s, size, bench_seed(it, t, 1));
            MPI_Send(s, (int)size, MPI_CHAR, peer, t, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv) {
    bench_t b;
    static lat_bufs_t bufs;
    int counts[BENCH_MAX_LIST];
    const bench_defaults_t d = {.sizes = "0:1M:4",
                                .iters = 10000,
                                .iters_min = 20,
                                .warmup = 200,
                                .budget_s = 0.5,
                                .list = "1,2,4",
                                .thread_multiple = 1,
                                .usage = "  -c LIST    thread counts per rank [1,2,4]\n"};

    bench_init(&b, "latency_mt", &d, &argc, &argv);
    if (b.nprocs < 2)
        bench_fail("latency_mt needs at least 2 ranks, got %d", b.nprocs);
    int nc = mt_threads_parse(&b, counts, BENCH_MAX_LIST), maxt = 0;
    for (int i = 0; i < nc; i++)
        maxt = counts[i] > maxt ? counts[i] : maxt;
    if (b.rank < 2)
        for (int t = 0; t < maxt; t++) {
            bench_buf_alloc(&b, &bufs.s[t], bench_size_max(&b), 1);
            bench_buf_alloc(&b, &bufs.r[t], bench_size_max(&b), 1);
        }
    for (int ci = 0; ci < nc; ci++) {
        char param[16];
        snprintf(param, sizeof param, "%d", counts[ci]);
        for (int si = 0; si < b.nsizes; si++) {
            mt_run_t run = {.b = &b,
                            .nthreads = counts[ci],
                            .size = b.sizes[si],
                            .loop = lat_loop,
                            .user = &bufs};
            mt_plan(&run);
            mt_go(&run);
            double sum = 0;
            for (int t = 0; t < run.nthreads; t++)
                sum += run.secs[t];
            bench_row(&b, "latency_mt", param, run.size, "lat_us",
                      sum / run.nthreads * 1e6 / (2.0 * (double)run.iters));
        }
    }
    if (b.rank < 2)
        for (int t = 0; t < maxt; t++) {
            bench_buf_free(&bufs.s[t]);
            bench_buf_free(&bufs.r[t]);
        }
    bench_finalize(&b);
    return 0;
}
