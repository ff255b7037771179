/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_ERRORS_ARE_FATAL is the default: rank 1 makes a bad call (a negative tag)
 * without changing the error handler, so the whole job must end, with a non-zero
 * status and quickly, although rank 0 waits in a receive that nothing will
 * satisfy. Listed with expect=fail: "No Errors" is never printed.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        /* nobody to be left waiting: the bad call alone must end the job */
        MPI_Send(&x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Send(&x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* reached only if the error did not end the job */
    printf("rank %d: the job survived an error under MPI_ERRORS_ARE_FATAL\n", rank);
    MPI_Finalize();
    return 0;
}
