/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared code of the MPI_THREAD_MULTIPLE tests: initialisation that insists on
 * MPI_THREAD_MULTIPLE (a library that provides less fails the test loudly: the
 * testlist sets TANDEM_THREAD_LEVEL=multiple, so a lower level is a bug, not a
 * reason to skip), a thread pool run (both over ../thread_run.h, which the tests of
 * other areas share), error counting from any thread, byte patterns, and the verdict
 * on rank 0. Built as-is with the anchors' mpicc too.
 */
#ifndef TANDEM_THRTEST_H
#define TANDEM_THRTEST_H

#include "../thread_run.h"

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THR_MAX 16

static int rank, nprocs;
static atomic_int errs;
static _Thread_local int thr_self = -1; /* the test's thread index, -1 on the main thread */

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && atomic_fetch_add(&errs, 1) < 20) {                                         \
            char _m[400];                                                                          \
            snprintf(_m, sizeof _m, __VA_ARGS__);                                                  \
            fprintf(stderr, "rank %d thread %d line %d: %s\n", rank, thr_self, __LINE__, _m);      \
        }                                                                                          \
    } while (0)

/* An MPI call that must succeed (the error handler is MPI_ERRORS_RETURN). */
#define MPI_OK(_call)                                                                              \
    do {                                                                                           \
        int _rc = (_call);                                                                         \
        if (_rc != MPI_SUCCESS) {                                                                  \
            char _s[MPI_MAX_ERROR_STRING];                                                         \
            int _l = 0;                                                                            \
            MPI_Error_string(_rc, _s, &_l);                                                        \
            fprintf(stderr, "rank %d thread %d line %d: %s failed: %s\n", rank, thr_self,          \
                    __LINE__, #_call, _s);                                                         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

/* MPI_THREAD_MULTIPLE or the job aborts (tr_init), and the calling thread is the main one. */
static inline void thr_init(int *argc, char ***argv) {
    int provided = -1, flag = 0;
    tr_init(argc, argv, 1);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Query_thread(&provided);
    MPI_Is_thread_main(&flag);
    if (provided != MPI_THREAD_MULTIPLE || !flag) {
        fprintf(stderr, "rank %d: MPI_Query_thread gives %s, MPI_Is_thread_main %d\n", rank,
                tr_level_name(provided), flag);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

#define thr_arg_int tr_arg_int /* the programs' name for it */

typedef void (*thr_fn_t)(int t, void *arg);
typedef struct {
    thr_fn_t fn;
    void *arg;
    int t;
} thr_job_t;

static inline void *thr_main(void *p) {
    thr_job_t *j = p;
    int flag = 1;
    thr_self = j->t;
    MPI_Is_thread_main(&flag);
    CHECK(!flag, "MPI_Is_thread_main is true in a thread the program created");
    j->fn(j->t, j->arg);
    return NULL;
}

static inline void *thr_run_one(int t, void *p) {
    thr_job_t job = *(thr_job_t *)p;
    job.t = t;
    return thr_main(&job);
}

/* Run fn(t, arg) in n threads at once (t = 0..n-1) and join them. */
static inline void thr_run(int n, thr_fn_t fn, void *arg) {
    thr_job_t all = {fn, arg, -1};
    tr_check_count(n, THR_MAX);
    tr_run(n, thr_run_one, &all, NULL);
}

static inline unsigned char thr_pat(size_t i, unsigned seed) {
    return (unsigned char)((i ^ (i >> 8) ^ (i >> 16)) * 131u + seed * 17u + (seed >> 8) + 1u);
}

static inline void thr_fill(void *buf, size_t n, unsigned seed) {
    unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        b[i] = thr_pat(i, seed);
}

/* Every byte of a message; 0 when one differs (reported once). */
static inline int thr_check(const void *buf, size_t n, unsigned seed, const char *what) {
    const unsigned char *b = buf;
    for (size_t i = 0; i < n; i++) {
        if (b[i] != thr_pat(i, seed)) {
            CHECK(0, "%s: %zu-byte message differs at byte %zu (got %u, want %u)", what, n, i, b[i],
                  thr_pat(i, seed));
            return 0;
        }
    }
    return 1;
}

/* Total every rank's error count, print the verdict on rank 0 and finalize, on the main
 * thread, after the program's threads have been joined. */
static inline int thr_finish(void) {
    int mine = atomic_load(&errs), total = 0;
    MPI_Reduce(&mine, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total)
            printf("Found %d errors\n", total);
        else
            printf(" No Errors\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

#endif
