/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages nobody receives (an erroneous program, but a common one): every rank
 * sends its right neighbour one message of each size class with MPI_Isend and
 * frees the request, the neighbour never posts a receive for them, and all ranks
 * call MPI_Finalize. The job must end, not hang: at finalize the receiver forgets
 * what arrived whole and lets a sender whose rendezvous waits for its data go
 * (between nodes, the data attached to an RTS is taken and dropped). A message
 * that is received after the unreceived ones shows the rest of the traffic is
 * unharmed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {8, 8153, 40000, 1 << 20};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

int main(int argc, char **argv) {
    int rank, nprocs, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;

    char *bufs[NSIZES];
    for (int i = 0; i < NSIZES; i++) {
        bufs[i] = malloc((size_t)sizes[i]);
        memset(bufs[i], 'a' + i, (size_t)sizes[i]);
        MPI_Request r;
        MPI_Isend(bufs[i], sizes[i], MPI_BYTE, right, 100 + i, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
    }

    /* tag 7 comes after the unreceived ones; matching skips them */
    int token = rank, got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (got != left) {
        fprintf(stderr, "rank %d: token %d from rank %d, want %d\n", rank, got, left, left);
        errs++;
    }
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    fflush(stdout);
    /* the buffers stay valid: a freed send may still read them until the job ends */
    MPI_Finalize();
    for (int i = 0; i < NSIZES; i++)
        free(bufs[i]);
    return errs ? 1 : 0;
}
