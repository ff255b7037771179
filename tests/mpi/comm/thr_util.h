/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the tests that call MPI from several threads at once (comm, coll,
 * dtype, attr, errors): MPI_Init_thread asking for MPI_THREAD_MULTIPLE (exit 77,
 * skipped, when it is not provided), a failure count several threads may add to,
 * and running a function in N threads.
 */
#ifndef TANDEM_TESTS_THR_UTIL_H
#define TANDEM_TESTS_THR_UTIL_H

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int thr_errs; /* atomic: every thread adds to it */
static int thr_rank = -1;

#define THR_CHECK(_cond, ...)                                                                      \
    do {                                                                                           \
        if (!(_cond)) {                                                                            \
            if (__atomic_fetch_add(&thr_errs, 1, __ATOMIC_RELAXED) < 20) {                         \
                char _m[1280];                                                                     \
                snprintf(_m, sizeof(_m), __VA_ARGS__);                                             \
                fprintf(stderr, "rank %d: %s:%d: check failed: %s: %s\n", thr_rank, __FILE__,      \
                        __LINE__, #_cond, _m);                                                     \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* An MPI call that must succeed. */
#define THR_OK(_call)                                                                              \
    do {                                                                                           \
        int _rc = (_call);                                                                         \
        if (_rc != MPI_SUCCESS) {                                                                  \
            char _s[MPI_MAX_ERROR_STRING];                                                         \
            int _l;                                                                                \
            MPI_Error_string(_rc, _s, &_l);                                                        \
            if (__atomic_fetch_add(&thr_errs, 1, __ATOMIC_RELAXED) < 20)                           \
                fprintf(stderr, "rank %d: %s:%d: %s failed: %s\n", thr_rank, __FILE__, __LINE__,   \
                        #_call, _s);                                                               \
        }                                                                                          \
    } while (0)

/* MPI_THREAD_MULTIPLE or exit 77; errors return on MPI_COMM_WORLD. */
static inline void thr_init(int *argc, char ***argv) {
    int provided = -1;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &thr_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided != MPI_THREAD_MULTIPLE) {
        if (thr_rank == 0)
            printf("skipped: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
        MPI_Finalize();
        exit(77);
    }
}

typedef struct thr_arg {
    int id, n;
    void *data;
} thr_arg_t;

/* Run fn in n threads (ids 0..n-1) and wait for them. */
static inline void thr_run(int n, void *(*fn)(void *), void *data) {
    pthread_t t[64];
    thr_arg_t a[64];
    for (int i = 0; i < n && i < 64; i++) {
        a[i] = (thr_arg_t){.id = i, .n = n, .data = data};
        if (pthread_create(&t[i], NULL, fn, &a[i]) != 0) {
            fprintf(stderr, "rank %d: pthread_create failed\n", thr_rank);
            exit(1);
        }
    }
    for (int i = 0; i < n && i < 64; i++)
        pthread_join(t[i], NULL);
}

/* Every rank's failures summed; "No Errors" on rank 0 when there were none. */
static inline int thr_finalize(void) {
    int total = 0, mine = __atomic_load_n(&thr_errs, __ATOMIC_RELAXED);
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (thr_rank == 0) {
        if (total == 0)
            printf("No Errors\n");
        else
            printf("Found %d errors\n", total);
    }
    MPI_Finalize();
    return total != 0;
}

#endif
