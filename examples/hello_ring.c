/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hello_ring: a token goes once around the ring of ranks. Rank 0 starts it with 0;
 * every rank adds its own rank number and passes it on; rank 0 prints the final value,
 * which is 0 + 1 + ... + (size-1).
 *
 *   mpicc -o hello_ring hello_ring.c && mpirun -n 4 ./hello_ring
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size, token, len;
    char name[MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* each rank prints before it passes the token on, so the lines come out in ring order */
    if (rank == 0) {
        token = 0;
        printf("rank 0 of %d on %s: starts the token at %d\n", size, name, token);
        fflush(stdout);
        if (size > 1) {
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        int want = size * (size - 1) / 2;
        printf("final token %d after a trip around %d ranks (%s)\n", token, size,
               token == want ? "correct" : "WRONG");
    } else {
        MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token += rank;
        printf("rank %d of %d on %s: got the token, passes on %d\n", rank, size, name, token);
        fflush(stdout);
        MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
