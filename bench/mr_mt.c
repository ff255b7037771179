/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Message rate with threads (mbw_mr with threads in place of rank pairs): T threads on
 * rank 0 each stream windows of -w messages to their partner thread on rank 1 (tag t,
 * MPI_COMM_WORLD), which answers each window with a 4-byte acknowledgement, all pairs at
 * once. The aggregate figures divide the messages (or bytes) of all threads by the
 * slowest sending thread's time. -c lists the thread counts [1,2,4]; param is the thread
 * count. Needs MPI_THREAD_MULTIPLE. The first window slot's first and last bytes are
 * checked (every byte of every slot with -v).
 */
#include "common.h"

static void mr_loop(bench_mt_t *run, int t, long first, long n) {
    const bench_t *b = run->b;
    bench_buf_t *buf = bench_mt_buf(run, t, 0);
    size_t size = run->size;
    int peer = 1 - b->rank, single = buf->nslots == 1;
    MPI_Request req[BENCH_MAX_WINDOW];
    char ack[4] = {0};
    for (long it = first; it < first + n; it++) {
        if (b->rank == 0) {
            for (int j = 0; j < b->window; j++) {
                char *s = bench_buf_slot(buf, j);
                if (!single || j == 0)
                    bench_stamp(b, s, size, bench_seed(it, single ? t : j, t));
                MPI_Isend(s, (int)size, MPI_CHAR, peer, t, MPI_COMM_WORLD, &req[j]);
            }
            MPI_Waitall(b->window, req, MPI_STATUSES_IGNORE);
            MPI_Recv(ack, 4, MPI_CHAR, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < b->window; j++) {
                char *r = bench_buf_slot(buf, j);
                if (!single || j == 0)
                    bench_poison(b, r, size, bench_seed(it, single ? t : j, t));
                MPI_Irecv(r, (int)size, MPI_CHAR, peer, t, MPI_COMM_WORLD, &req[j]);
            }
            MPI_Waitall(b->window, req, MPI_STATUSES_IGNORE);
            for (int j = 0; j < (single ? 1 : b->window); j++)
                bench_check(b, bench_buf_slot(buf, j), size, bench_seed(it, single ? t : j, t),
                            "mr_mt", peer);
            MPI_Send(ack, 4, MPI_CHAR, peer, t, MPI_COMM_WORLD);
        }
    }
}

static void mr_report(const bench_mt_t *run, const char *param) {
    const bench_t *b = run->b;
    double slowest = 0;
    for (int t = 0; t < run->nthreads; t++)
        slowest = run->secs[t] > slowest ? run->secs[t] : slowest;
    slowest = bench_allmax(b->rank == 0 ? slowest : 0);
    double msgs = (double)run->nthreads * b->window * (double)run->iters;
    bench_row(b, "mr_mt", param, run->size, "bw_MBps", msgs * (double)run->size / slowest / 1e6);
    bench_row(b, "mr_mt", param, run->size, "msg_rate", msgs / slowest);
}

int main(int argc, char **argv) {
    bench_t b;
    const bench_defaults_t d = {.sizes = "1:64K:8",
                                .iters = 1000,
                                .iters_min = 5,
                                .warmup = 20,
                                .budget_s = 0.5,
                                .list = "1,2,4",
                                .thread_multiple = 1,
                                .usage = "  -c LIST    thread counts per rank [1,2,4]\n"};

    bench_init(&b, "mr_mt", &d, &argc, &argv);
    bench_mt_run(&b, 1, b.window, mr_loop, mr_report);
    bench_finalize(&b);
    return 0;
}
