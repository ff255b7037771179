/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rank killed during window creation (TANDEM_TEST_RMA_DIE_IN_CREATE names it: it
 * dies after rank 0 made the window's memory and before the others mapped it) ends
 * the job instead of hanging it; the memory has no name anywhere, so nothing is left
 * behind (target_computes checks that it is a memfd). The testlist expects failure.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int *mem;
    MPI_Win win;
    MPI_Win_allocate_shared(1024, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    /* not reached by every rank: one was killed */
    MPI_Win_free(&win);
    MPI_Finalize();
    printf(" No Errors\n");
    return 0;
}
