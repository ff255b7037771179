/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every test that calls MPI from several threads shares: MPI_Init_thread asking
 * for MPI_THREAD_MULTIPLE, and running a function in N threads at once. Included by
 * tests/mpi/threads/thrtest.h, comm/tutil.h (the thread_* programs of comm, coll, dtype,
 * attr and errors), pt2pt/threads_engine and rma/threads. It uses nothing but MPI and
 * pthreads, so the programs still build with the anchors' mpicc (tests/mpi/anchors.py).
 */
#ifndef TANDEM_TESTS_THREAD_RUN_H
#define TANDEM_TESTS_THREAD_RUN_H

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TR_MAX 64 /* threads tr_run starts at most */

static inline const char *tr_level_name(int l) {
    switch (l) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
        return "MPI_THREAD_MULTIPLE";
    default:
        return "an unknown level";
    }
}

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE. When the library provides less: with
 * `required` (the testlist asked for it, so less is a bug) the job aborts naming the
 * level; otherwise the program is skipped (exit 77). */
static inline void tr_init(int *argc, char ***argv, int required) {
    int provided = -1, rank = -1;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided != MPI_THREAD_MULTIPLE) {
        if (required) {
            fprintf(stderr,
                    "rank %d: this test needs MPI_THREAD_MULTIPLE and the library provides %s "
                    "(Tandem: TANDEM_THREAD_LEVEL=multiple)\n",
                    rank, tr_level_name(provided));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (rank == 0)
            printf("skipped: MPI_THREAD_MULTIPLE not provided (%s)\n", tr_level_name(provided));
        MPI_Finalize();
        exit(77);
    }
}

/* An integer argument argv[i], or dflt when absent. */
static inline int tr_arg_int(int argc, char **argv, int i, int dflt) {
    return argc > i ? atoi(argv[i]) : dflt;
}

/* What each thread of tr_run runs: t is its index (0..n-1), arg tr_run's argument. */
typedef void *(*tr_fn_t)(int t, void *arg);

typedef struct tr_job {
    tr_fn_t fn;
    void *arg;
    int t;
    void *ret;
} tr_job_t;

static inline void *tr_main(void *p) {
    tr_job_t *j = p;
    j->ret = j->fn(j->t, j->arg);
    return NULL;
}

/* n threads, of at most max: anything else ends the job. */
static inline void tr_check_count(int n, int max) {
    if (n < 1 || n > max) {
        int rank = -1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "rank %d: %d threads: 1 to %d allowed\n", rank, n, max);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Run fn(t, arg) in n threads at once (t = 0..n-1) and join them; ret_p, unless NULL,
 * receives what each returned. A count out of range or a thread that cannot be created
 * ends the job: fewer threads would test less than the program claims. */
static inline void tr_run(int n, tr_fn_t fn, void *arg, void **ret_p) {
    pthread_t th[TR_MAX];
    tr_job_t job[TR_MAX];
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tr_check_count(n, TR_MAX);
    for (int t = 0; t < n; t++) {
        job[t] = (tr_job_t){fn, arg, t, NULL};
        int rc = pthread_create(&th[t], NULL, tr_main, &job[t]);
        if (rc != 0) {
            fprintf(stderr, "rank %d: pthread_create of thread %d failed: %s\n", rank, t,
                    strerror(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int t = 0; t < n; t++) {
        pthread_join(th[t], NULL);
        if (ret_p)
            ret_p[t] = job[t].ret;
    }
}

#endif
