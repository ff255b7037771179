/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The last rank is killed (SIGKILL) while the others wait in a receive that nothing will
 * satisfy: the launcher must end the whole job, naming the process (Hydra 4.0 names its
 * pid and host), instead of leaving the others waiting. On several nodes the ranks of the
 * other node see their connections to it close (net/remote.c) and end the job naming its
 * rank and host. Listed with expect=fail.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank, size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) {
        printf("rank %d (pid %d) kills itself\n", rank, (int)getpid());
        fflush(stdout);
        raise(SIGKILL);
    }
    MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d: the job went on after rank %d was killed\n", rank, size - 1);
    MPI_Finalize();
    return 0;
}
