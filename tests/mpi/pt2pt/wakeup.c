/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lost wake-ups. Run with TANDEM_WAIT_SPIN_US/YIELDS=0 (every wait blocks on the
 * doorbell at once) and a blocking timeout far beyond the test's: a producer
 * that misses a consumer's `sleeping` flag while the consumer misses its cell
 * then hangs the job instead of costing 2 ms. Ping-pong, an exchange in which
 * both ranks block at once, and bursts that fill a 4-cell ring (the producer
 * blocks and the consumer must wake it).
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "wakeup needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank, x = 0, y = -1;
    for (int i = 0; i < 20000; i++) {
        if (rank == 0) {
            x = i;
            MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(&y, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&y, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&y, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
        }
        if (y != i && errs++ < 5)
            fprintf(stderr, "[%d] ping-pong %d: got %d\n", rank, i, y);
    }
    for (int i = 0; i < 20000; i++) {
        x = i * 2 + rank;
        MPI_Sendrecv(&x, 1, MPI_INT, peer, 1, &y, 1, MPI_INT, peer, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (y != i * 2 + peer && errs++ < 5)
            fprintf(stderr, "[%d] exchange %d: got %d\n", rank, i, y);
    }
    int burst[64];
    for (int i = 0; i < 400; i++) {
        if (rank == 0) {
            for (int k = 0; k < 64; k++) {
                burst[k] = i * 64 + k;
                MPI_Send(&burst[k], 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
            }
        } else {
            for (int k = 0; k < 64; k++) {
                MPI_Recv(&y, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (y != i * 64 + k && errs++ < 5)
                    fprintf(stderr, "[1] burst %d/%d: got %d\n", i, k, y);
            }
        }
    }
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
