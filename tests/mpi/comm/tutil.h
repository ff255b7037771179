/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the tests of tests/mpi/{comm,group,attr,info} and the thread_*
 * programs of other areas. Only point-to-point is used to exchange data (these tests
 * must not depend on collectives), and every result is checked against a reference
 * computed serially from the same inputs. The checks may be made from several threads
 * at once (with ../thread_run.h): the count is atomic and each report one write.
 */
#ifndef TANDEM_TESTS_TUTIL_H
#define TANDEM_TESTS_TUTIL_H

#include "../thread_run.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_errs; /* atomic: threads add to it */
static int t_rank = -1;

#define T_ERR() __atomic_fetch_add(&t_errs, 1, __ATOMIC_RELAXED)

#define T_CHECK(_cond, ...)                                                                        \
    do {                                                                                           \
        if (!(_cond) && T_ERR() < 20) {                                                            \
            char _m[1280];                                                                         \
            snprintf(_m, sizeof(_m), __VA_ARGS__);                                                 \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: %s\n", t_rank, __FILE__, __LINE__,  \
                    #_cond, _m);                                                                   \
        }                                                                                          \
    } while (0)

/* An MPI call that must succeed. */
#define T_OK(_call)                                                                                \
    do {                                                                                           \
        int _rc = (_call);                                                                         \
        if (_rc != MPI_SUCCESS) {                                                                  \
            char _s[MPI_MAX_ERROR_STRING];                                                         \
            int _l;                                                                                \
            MPI_Error_string(_rc, _s, &_l);                                                        \
            fprintf(stderr, "rank %d: %s:%d: %s failed: %s\n", t_rank, __FILE__, __LINE__, #_call, \
                    _s);                                                                           \
            T_ERR();                                                                               \
        }                                                                                          \
    } while (0)

/* An MPI call that must fail with error class _class (errors must return). */
#define T_FAILS(_class, _call)                                                                     \
    do {                                                                                           \
        int _rc = (_call), _cls = -1;                                                              \
        if (_rc != MPI_SUCCESS)                                                                    \
            MPI_Error_class(_rc, &_cls);                                                           \
        if (_cls != (_class)) {                                                                    \
            fprintf(stderr, "rank %d: %s:%d: %s returned class %d, expected %s (%d)\n", t_rank,    \
                    __FILE__, __LINE__, #_call, _cls, #_class, (_class));                          \
            T_ERR();                                                                               \
        }                                                                                          \
    } while (0)

static inline void t_init(int *argc, char ***argv) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
}

/* t_init of the thread_* programs: MPI_THREAD_MULTIPLE or skipped; errors return. */
static inline void t_init_threads(int *argc, char ***argv) {
    tr_init(argc, argv, 0);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/* Run fn(t, comms) in n threads (../thread_run.h), comms[t] a duplicate of MPI_COMM_WORLD
 * of thread t's own, made before they start and freed after they end. */
static inline void t_run_on_dups(int n, tr_fn_t fn, MPI_Comm *comms) {
    tr_check_count(n, TR_MAX);
    for (int i = 0; i < n; i++)
        T_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]));
    tr_run(n, fn, comms, NULL);
    for (int i = 0; i < n; i++)
        T_OK(MPI_Comm_free(&comms[i]));
}

/* out[i] = value of rank i of comm (point-to-point only). */
static inline void t_allgather_ints(MPI_Comm comm, const int *mine, int n, int *out) {
    int size, rank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * 2 * (size_t)size);
    int k = 0;
    for (int p = 0; p < size; p++) {
        if (p == rank)
            memcpy(out + (size_t)p * n, mine, sizeof(int) * (size_t)n);
        else
            MPI_Irecv(out + (size_t)p * n, n, MPI_INT, p, 7777, comm, &reqs[k++]);
    }
    for (int p = 0; p < size; p++) {
        if (p != rank)
            MPI_Isend(mine, n, MPI_INT, p, 7777, comm, &reqs[k++]);
    }
    MPI_Waitall(k, reqs, sts);
    free(reqs);
    free(sts);
}

/* A barrier made of point-to-point messages. */
static inline void t_barrier(MPI_Comm comm) {
    int size, dummy = 0;
    MPI_Comm_size(comm, &size);
    int *all = malloc(sizeof(int) * (size_t)size);
    t_allgather_ints(comm, &dummy, 1, all);
    free(all);
}

/* Sum the error counts on rank 0 of MPI_COMM_WORLD, print the verdict, finalize. */
static inline int t_finish(void) {
    int size, rank, total = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *all = malloc(sizeof(int) * (size_t)size);
    t_allgather_ints(MPI_COMM_WORLD, &t_errs, 1, all);
    for (int i = 0; i < size; i++)
        total += all[i];
    free(all);
    if (rank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

#endif
