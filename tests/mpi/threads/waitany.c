/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests completed by a thread other than the one that started them (arg 1: T worker
 * threads, default 4; arg 2: rounds, default 6). In each round every worker starts K
 * receives and K sends with its peer (rank ^ 1) and publishes them; the main thread then
 * completes all of them, a third with MPI_Waitany, a third with MPI_Testsome polled, a
 * third with MPI_Waitall, while the workers go on with traffic of their own on their own
 * communicators (Sendrecv ping-pongs, so the engine is driven from several threads while
 * the main thread waits). Statuses, indices and every byte are checked; each request is
 * completed exactly once.
 */
#include "thrtest.h"

#define K 6
static const int lens[] = {8, 3000, 40000, 200000};
#define NLENS 4

static int nt, rounds, peer;
static MPI_Comm pub, own[THR_MAX];
static MPI_Request *reqs;
static unsigned char **bufs;
static int *is_recv;
static pthread_barrier_t bar;

static int len_of(int i) {
    return lens[i % NLENS];
}

static unsigned seed_of(int src, int rnd, int idx) {
    return (unsigned)((src * 1000 + rnd) * 257 + idx);
}

static void worker(int t, void *arg) {
    (void)arg;
    unsigned char *a = malloc(65536), *b = malloc(65536);
    for (int rnd = 0; rnd < rounds; rnd++) {
        for (int k = 0; k < 2 * K; k++) {
            int idx = t * 2 * K + k, len = len_of(idx);
            int tag = idx; /* both ranks number their requests alike */
            if (k % 2 == 0) {
                is_recv[idx] = 1;
                memset(bufs[idx], 0, (size_t)len);
                MPI_OK(MPI_Irecv(bufs[idx], len, MPI_BYTE, peer, tag, pub, &reqs[idx]));
            } else {
                is_recv[idx] = 0;
                /* the send with tag idx - 1 feeds the peer's receive idx - 1 */
                thr_fill(bufs[idx], (size_t)len_of(idx - 1), seed_of(rank, rnd, idx - 1));
                MPI_OK(MPI_Isend(bufs[idx], len_of(idx - 1), MPI_BYTE, peer, idx - 1, pub,
                                 &reqs[idx]));
            }
            (void)tag;
        }
        pthread_barrier_wait(&bar); /* published: the main thread completes them */
        /* traffic of this thread's own meanwhile, until the main thread is done */
        for (int i = 0; i < 20; i++) {
            size_t n = (size_t)(i % 3 == 2 ? 65536 : 64);
            thr_fill(a, n, seed_of(rank, rnd, 10000 + t * 100 + i));
            memset(b, 0, n);
            MPI_OK(MPI_Sendrecv(a, (int)n, MPI_BYTE, peer, i, b, (int)n, MPI_BYTE, peer, i, own[t],
                                MPI_STATUS_IGNORE));
            thr_check(b, n, seed_of(peer, rnd, 10000 + t * 100 + i), "own traffic");
        }
        pthread_barrier_wait(&bar); /* the main thread has completed the round */
    }
    free(a);
    free(b);
}

static void check_done(int idx, const MPI_Status *st, int rnd, atomic_int *done) {
    CHECK(idx >= 0 && idx < nt * 2 * K, "index %d out of range", idx);
    if (idx < 0 || idx >= nt * 2 * K)
        return;
    CHECK(atomic_fetch_add(&done[idx], 1) == 0, "request %d completed twice", idx);
    if (is_recv[idx]) {
        int count = -1;
        MPI_Get_count(st, MPI_BYTE, &count);
        CHECK(st->MPI_SOURCE == peer && st->MPI_TAG == idx && count == len_of(idx),
              "request %d: status source %d tag %d count %d", idx, st->MPI_SOURCE, st->MPI_TAG,
              count);
        thr_check(bufs[idx], (size_t)len_of(idx), seed_of(peer, rnd, idx), "published receive");
    }
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    nt = thr_arg_int(argc, argv, 1, 4);
    rounds = thr_arg_int(argc, argv, 2, 6);
    if (nprocs % 2) {
        fprintf(stderr, "waitany needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    peer = rank ^ 1;
    int n = nt * 2 * K;
    reqs = malloc(sizeof(MPI_Request) * (size_t)n);
    bufs = malloc(sizeof(unsigned char *) * (size_t)n);
    is_recv = calloc((size_t)n, sizeof(int));
    atomic_int *done = malloc(sizeof(atomic_int) * (size_t)n);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * (size_t)n);
    int *idx = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        bufs[i] = malloc((size_t)lens[NLENS - 1]);
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &pub));
    for (int t = 0; t < nt; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &own[t]));
    pthread_barrier_init(&bar, NULL, (unsigned)nt + 1);

    pthread_t th[THR_MAX];
    thr_job_t job[THR_MAX];
    for (int t = 0; t < nt; t++) {
        job[t] = (thr_job_t){worker, NULL, t};
        pthread_create(&th[t], NULL, thr_main, &job[t]);
    }
    for (int rnd = 0; rnd < rounds; rnd++) {
        pthread_barrier_wait(&bar);
        for (int i = 0; i < n; i++)
            atomic_init(&done[i], 0);
        /* a third by Waitany, over the whole array: completed ones are MPI_REQUEST_NULL */
        int third = n / 3;
        for (int c = 0; c < third; c++) {
            int i = -1;
            MPI_Status st;
            MPI_OK(MPI_Waitany(n, reqs, &i, &st));
            CHECK(i != MPI_UNDEFINED, "MPI_Waitany found no active request");
            if (i == MPI_UNDEFINED)
                break;
            CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not freed by MPI_Waitany", i);
            check_done(i, &st, rnd, done);
        }
        /* the next third by Testsome, polled */
        int got = 0;
        while (got < third) {
            int outc = 0;
            MPI_OK(MPI_Testsome(n, reqs, &outc, idx, sts));
            CHECK(outc != MPI_UNDEFINED, "MPI_Testsome found no active request");
            if (outc == MPI_UNDEFINED)
                break;
            for (int j = 0; j < outc; j++) {
                CHECK(reqs[idx[j]] == MPI_REQUEST_NULL, "request %d not freed by MPI_Testsome",
                      idx[j]);
                check_done(idx[j], &sts[j], rnd, done);
            }
            got += outc;
        }
        /* the rest by Waitall */
        MPI_OK(MPI_Waitall(n, reqs, sts));
        for (int i = 0; i < n; i++) {
            if (atomic_load(&done[i]) == 0)
                check_done(i, &sts[i], rnd, done);
            CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d active after MPI_Waitall", i);
        }
        int outc = 0;
        MPI_OK(MPI_Waitany(n, reqs, &outc, MPI_STATUS_IGNORE));
        CHECK(outc == MPI_UNDEFINED, "MPI_Waitany over completed requests gave index %d", outc);
        pthread_barrier_wait(&bar);
    }
    for (int t = 0; t < nt; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&bar);
    MPI_Comm_free(&pub);
    for (int t = 0; t < nt; t++)
        MPI_Comm_free(&own[t]);
    for (int i = 0; i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    free(is_recv);
    free((void *)done);
    free(sts);
    free(idx);
    return thr_finish();
}
