/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The multi-threaded benchmarks (latency_mt, mr_mt): T threads on each of ranks 0 and 1,
 * thread t of rank 0 paired with thread t of rank 1 (tag t), the library initialised with
 * MPI_THREAD_MULTIPLE. The iteration count of a size is decided on the main threads before
 * the threads start (bench_batch's control messages cannot run beside them): a probe run of
 * a few iterations gives the cost of one, and the count fills the time budget, between -n
 * and -i. Each thread warms up, meets the others of its rank at a barrier, then times its
 * own loop.
 */
#ifndef TANDEM_BENCH_MT_H
#define TANDEM_BENCH_MT_H

#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MT_MAX_THREADS 64

typedef struct mt_run mt_run_t;
/* One thread's loop: iterations [first, first + n) of a size; returns nothing, reports
 * errors through bench_fail. */
typedef void (*mt_loop_fn_t)(mt_run_t *r, int t, long first, long n);

struct mt_run {
    const bench_t *b;
    int nthreads;
    size_t size;
    long warm, iters;
    mt_loop_fn_t loop;
    void *user;                  /* the benchmark's per-thread state */
    double secs[MT_MAX_THREADS]; /* each thread's timed seconds */
    pthread_barrier_t bar;
};

typedef struct {
    mt_run_t *r;
    int t;
} mt_arg_t;

static void *mt_thread(void *p) {
    mt_arg_t *a = p;
    mt_run_t *r = a->r;
    if (r->warm > 0)
        r->loop(r, a->t, 0, r->warm);
    pthread_barrier_wait(&r->bar);
    double t0 = bench_now();
    r->loop(r, a->t, r->warm, r->iters);
    r->secs[a->t] = bench_now() - t0;
    return NULL;
}

/* Run the loop in r->nthreads threads on ranks 0 and 1 (other ranks wait). */
static void mt_go(mt_run_t *r) {
    pthread_t th[MT_MAX_THREADS];
    mt_arg_t arg[MT_MAX_THREADS];
    bench_barrier();
    if (r->b->rank < 2) {
        pthread_barrier_init(&r->bar, NULL, (unsigned)r->nthreads);
        for (int t = 0; t < r->nthreads; t++) {
            arg[t] = (mt_arg_t){r, t};
            r->secs[t] = 0;
            if (pthread_create(&th[t], NULL, mt_thread, &arg[t]) != 0)
                bench_fail("cannot create thread %d", t);
        }
        for (int t = 0; t < r->nthreads; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&r->bar);
    }
    bench_barrier();
}

/* Rank 0's iteration and warm-up counts for this size, from a probe run of a few
 * iterations: the budget's worth, between -n and -i (a tenth of -i for large sizes), and
 * at most a fifth of the budget of warm-up (a library whose threads spin on a shared core
 * can take a scheduler time slice per message). */
static void mt_plan(mt_run_t *r) {
    const bench_t *b = r->b;
    long cap = r->size <= 8192 ? b->iters : b->iters / 10;
    if (cap < b->iters_min)
        cap = b->iters_min;
    r->warm = 0;
    r->iters = cap < 4 ? cap : 4;
    mt_go(r);
    double slowest = 0;
    for (int t = 0; t < r->nthreads; t++)
        slowest = r->secs[t] > slowest ? r->secs[t] : slowest;
    double per = slowest / (double)r->iters, plan[2] = {(double)cap, 0};
    if (per > 0 && b->budget_s / per < plan[0])
        plan[0] = b->budget_s / per;
    if (plan[0] < (double)b->iters_min)
        plan[0] = (double)b->iters_min;
    plan[1] = (double)(r->size <= 8192 ? b->warmup : b->warmup / 10);
    if (per > 0 && b->budget_s / 5 / per < plan[1])
        plan[1] = b->budget_s / 5 / per;
    if (plan[1] < 1 && b->warmup > 0)
        plan[1] = 1;
    bench_bcast_double(&plan[0]);
    bench_bcast_double(&plan[1]);
    r->iters = (long)plan[0];
    r->warm = (long)plan[1];
}

/* The thread counts of -c (a list like 1,2,4), into counts; returns how many. */
static int mt_threads_parse(const bench_t *b, int *counts, int max) {
    const char *p = b->list;
    int n = 0;
    while (p && *p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > MT_MAX_THREADS || n >= max)
            bench_fail("-c wants thread counts from 1 to %d, like 1,2,4; got '%s'", MT_MAX_THREADS,
                       b->list);
        counts[n++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            bench_fail("-c wants thread counts like 1,2,4; got '%s'", b->list);
    }
    if (!n)
        bench_fail("-c names no thread count");
    return n;
}

#endif
