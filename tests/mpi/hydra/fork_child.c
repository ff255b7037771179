/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rank forks a child that exits at once (as Python's multiprocessing or a daemonising
 * helper would): the child shares the rank's PMI socket but is not the rank, so its exit
 * must not say PMI's finalize for it (the launcher would then close the rank's connection:
 * the rank died of SIGPIPE at its own finalize, or an abort went unheard). With an
 * argument the last rank then calls MPI_Abort(7), which must still end the job with 7.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        exit(0); /* runs the atexit handlers, as a normal exit does */
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("rank %d: the forked child did not exit cleanly\n", rank);
        errs++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (argc > 1 && rank == size - 1)
        MPI_Abort(MPI_COMM_WORLD, 7);
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
