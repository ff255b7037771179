/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Abort(MPI_COMM_WORLD, 7) from rank 1 (the last rank) ends the job with exit
 * status 7, although rank 0 waits in a receive that nothing will satisfy. Listed
 * with exit=7.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == size - 1)
        MPI_Abort(MPI_COMM_WORLD, 7);
    else
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d: MPI_Abort did not end the job\n", rank);
    MPI_Finalize();
    return 0;
}
