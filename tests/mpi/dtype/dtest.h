/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the datatype tests: error counting and the closing line. Only
 * point-to-point calls, so the tests do not depend on the collectives. */
#ifndef DTEST_H
#define DTEST_H

#include <mpi.h>
#include <stdio.h>

static int errs, rank, size;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond)) {                                                                            \
            if (errs++ < 20) {                                                                     \
                printf("[%d] line %d: ", rank, __LINE__);                                          \
                printf(__VA_ARGS__);                                                               \
                printf("\n");                                                                      \
                fflush(stdout);                                                                    \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static void dtest_init(int *argc, char ***argv) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
}

/* Sum the error counts on rank 0, print " No Errors" there, finalize. */
static int dtest_finish(void) {
    int total = errs;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            int e;
            MPI_Recv(&e, 1, MPI_INT, r, 9999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            total += e;
        }
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 9999, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return total != 0;
}

#endif
