/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking and non-blocking collectives never match each other (MPI-4.1 6.12), so
 * each kind keeps its own order. Programs that MPICH and Open MPI run call them in
 * different orders on different ranks: mpi4py's agreement (Comm.Iagree without
 * ULFM) is an Iallreduce that one rank starts before a Barrier the others call
 * first. Here the root of each round starts Iallreduce(BAND) and an Ibcast, then
 * joins a Barrier and a Bcast; the others do the blocking ones first. The root's
 * Iallreduce must not complete before the others have started theirs, and every
 * result must be right.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int root = 0; root < size; root++) {
        int flag = rank == root ? 0xb : 0xd, bval = rank == root ? 100 + root : -1;
        int word = rank == root ? 7 * root : -1, flag_done = 0;
        MPI_Request r[2];
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == root) {
            MPI_Iallreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &r[0]);
            MPI_Ibcast(&bval, 1, MPI_INT, root, MPI_COMM_WORLD, &r[1]);
            if (size > 1) {
                MPI_Test(&r[0], &flag_done, MPI_STATUS_IGNORE);
                if (flag_done && errs++ < 5)
                    fprintf(stderr, "root %d: Iallreduce done before the others started it\n",
                            root);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Bcast(&word, 1, MPI_INT, root, MPI_COMM_WORLD);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Bcast(&word, 1, MPI_INT, root, MPI_COMM_WORLD);
            MPI_Iallreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &r[0]);
            MPI_Ibcast(&bval, 1, MPI_INT, root, MPI_COMM_WORLD, &r[1]);
        }
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        int want = size > 1 ? 0x9 : 0xb;
        if ((flag != want || bval != 100 + root || word != 7 * root) && errs++ < 5)
            fprintf(stderr, "[%d] root %d: flag %#x (want %#x), Ibcast %d, Bcast %d\n", rank, root,
                    flag, want, bval, word);
    }
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
