/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-threaded ping-pong latency (OSU osu_latency_mt): T threads on rank 0 and T on
 * rank 1, thread t of each pair ping-ponging with tag t on MPI_COMM_WORLD, all pairs at
 * once; one-way latency is half the round trip, averaged over the threads (as OSU).
 * -c lists the thread counts [1,2,4]; param is the thread count. Needs
 * MPI_THREAD_MULTIPLE. Every message is stamped and checked (every byte with -v).
 */
#include "common.h"

/* buffers per thread: 0 sends, 1 receives */
static void lat_loop(bench_mt_t *run, int t, long first, long n) {
    const bench_t *b = run->b;
    char *s = bench_mt_buf(run, t, 0)->base, *r = bench_mt_buf(run, t, 1)->base;
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

static void lat_report(const bench_mt_t *run, const char *param) {
    double sum = 0;
    for (int t = 0; t < run->nthreads; t++)
        sum += run->secs[t];
    bench_row(run->b, "latency_mt", param, run->size, "lat_us",
              sum / run->nthreads * 1e6 / (2.0 * (double)run->iters));
}

int main(int argc, char **argv) {
    bench_t b;
    const bench_defaults_t d = {.sizes = "0:1M:4",
                                .iters = 10000,
                                .iters_min = 20,
                                .warmup = 200,
                                .budget_s = 0.5,
                                .list = "1,2,4",
                                .thread_multiple = 1,
                                .usage = "  -c LIST    thread counts per rank [1,2,4]\n"};

    bench_init(&b, "latency_mt", &d, &argc, &argv);
    bench_mt_run(&b, 2, 1, lat_loop, lat_report);
    bench_finalize(&b);
    return 0;
}
