/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of the tests in tests/mpi/topo: checks that count errors, calls
 * that must succeed or fail with a given class. */
#ifndef TANDEM_TESTS_TTOPO_H
#define TANDEM_TESTS_TTOPO_H

#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_errs, t_rank, t_size;

#define T_CHECK(_cond, ...)                                                                        \
    do {                                                                                           \
        if (!(_cond) && t_errs++ < 20) {                                                           \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", t_rank, __FILE__, __LINE__,      \
                    #_cond);                                                                       \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define T_OK(_call)                                                                                \
    do {                                                                                           \
        int _rc = (_call);                                                                         \
        if (_rc != MPI_SUCCESS && t_errs++ < 20) {                                                 \
            char _s[MPI_MAX_ERROR_STRING];                                                         \
            int _l;                                                                                \
            MPI_Error_string(_rc, _s, &_l);                                                        \
            fprintf(stderr, "rank %d: %s:%d: %s failed: %s\n", t_rank, __FILE__, __LINE__, #_call, \
                    _s);                                                                           \
        }                                                                                          \
    } while (0)

/* An MPI call that must fail with error class _class (errors must return). */
#define T_FAILS(_class, _call)                                                                     \
    do {                                                                                           \
        int _rc = (_call), _cls = -1;                                                              \
        if (_rc != MPI_SUCCESS)                                                                    \
            MPI_Error_class(_rc, &_cls);                                                           \
        if (_cls != (_class) && t_errs++ < 20)                                                     \
            fprintf(stderr, "rank %d: %s:%d: %s returned class %d, expected %s (%d)\n", t_rank,    \
                    __FILE__, __LINE__, #_call, _cls, #_class, (_class));                          \
    } while (0)

static inline void t_init(int *argc, char ***argv) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
    /* errors come back as codes (and new communicators inherit this) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/* Sum the errors over every rank; rank 0 says "No Errors" if there were none. */
static inline int t_finish(void) {
    int total = 0;
    MPI_Allreduce(&t_errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (t_rank == 0) {
        if (total)
            printf("Found %d errors\n", total);
        else
            printf("No Errors\n");
    }
    MPI_Finalize();
    return total != 0;
}

#endif
