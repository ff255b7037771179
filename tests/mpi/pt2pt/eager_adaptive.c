/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adaptive eager range (TANDEM_EAGER_ADAPTIVE_MIN to the eager limit,
 * p2p/select.c): a message there goes eagerly or by rendezvous as its receiver
 * timed lately. Two ranks take turns sending 200 messages of the size given
 * (12 KiB by default) into receives posted before the send (a barrier between),
 * so every receive is timed; with PROTO_STATS the testlist checks which ways the
 * senders took. Every byte checked, whichever way a message came.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 200 /* the first 42-64 of each sender go untimed: a fresh ring is cold */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 12288;
    unsigned char *out = malloc((size_t)n), *in = malloc((size_t)n);
    for (int k = 0; k < ROUNDS && size >= 2 && rank < 2; k++) {
        int from = k % 2;
        MPI_Request rq = MPI_REQUEST_NULL;
        if (rank != from) {
            memset(in, 0, (size_t)n);
            MPI_Irecv(in, n, MPI_BYTE, from, k, MPI_COMM_WORLD, &rq);
        }
        MPI_Send(NULL, 0, MPI_BYTE, 1 - rank, 1000 + k, MPI_COMM_WORLD); /* posted: go */
        MPI_Recv(NULL, 0, MPI_BYTE, 1 - rank, 1000 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == from) {
            for (int i = 0; i < n; i++)
                out[i] = (unsigned char)(k * 13 + i * 7 + 1);
            MPI_Send(out, n, MPI_BYTE, 1 - rank, k, MPI_COMM_WORLD);
        } else {
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++) {
                if (in[i] != (unsigned char)(k * 13 + i * 7 + 1)) {
                    if (errs++ < 10)
                        printf("rank %d message %d: byte %d is %d, expected %d\n", rank, k, i,
                               in[i], (unsigned char)(k * 13 + i * 7 + 1));
                    break;
                }
            }
        }
    }
    free(out);
    free(in);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
