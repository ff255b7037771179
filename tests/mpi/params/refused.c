/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tunables refused or taken, seen from a job: rank 0 sends N_MSGS messages of
 * the argument's size (64 KiB) to rank 1 by Isend, rank 1 receives them by
 * Recv, and every rank checks the data. The testlist sets tunables inside and
 * outside their ranges on several ranks and checks (lines=) that each refusal
 * is told once per job, and with TANDEM_PROTO_STATS which eager limit the
 * messages went by (a refused limit leaves the default, 16 KiB: RGET).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N_MSGS 5

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bytes = argc > 1 ? atoi(argv[1]) : 64 << 10;
    unsigned char *buf = malloc((size_t)bytes);
    if (!buf || size < 2) {
        fprintf(stderr, "needs 2 ranks or more and %d bytes\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int m = 0; m < N_MSGS; m++) {
        if (rank == 0) {
            MPI_Request req;
            for (int i = 0; i < bytes; i++)
                buf[i] = (unsigned char)(i * 7 + m);
            MPI_Isend(buf, bytes, MPI_BYTE, 1, m, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < bytes && errs < 10; i++) {
                if (buf[i] != (unsigned char)(i * 7 + m)) {
                    fprintf(stderr, "message %d: byte %d is %u, expected %u\n", m, i, buf[i],
                            (unsigned char)(i * 7 + m));
                    errs++;
                }
            }
        }
    }
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    free(buf);
    MPI_Finalize();
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    return 0;
}
