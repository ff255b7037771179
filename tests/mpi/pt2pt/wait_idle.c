/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How a rank waits for a message that takes long: rank 1 sleeps 30 ms before each of
 * five sends while rank 0 waits in MPI_Recv. When ranks do not outnumber cores a
 * waiting rank polls and then blocks on its doorbell, and never yields its core to
 * whatever else runs there; when they do, it yields before it blocks. The testlist
 * checks rank 0's counters (TANDEM_PROTO_STATS): yields and blocks.
 *
 * arg "colocate": both ranks move to rank 0's CPU and ping-pong. A rank that polled for
 * its peer would keep that peer off the one CPU until its time slice ends; it must see
 * that the peer last ran on its CPU and block instead (run with a polling time far
 * beyond the test's, so that only that rule makes it block).
 */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "colocate")) {
        int cpu = sched_getcpu();
        MPI_Bcast(&cpu, 1, MPI_INT, 0, MPI_COMM_WORLD);
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) != 0) {
            perror("sched_setaffinity");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        int x = 0, peer = 1 - rank;
        for (int i = 0; i < 2000 && size == 2; i++) {
            if (rank == 0) {
                MPI_Send(&i, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
                MPI_Recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
            }
            if (x != i && errs++ < 5)
                fprintf(stderr, "[%d] ping-pong %d: got %d\n", rank, i, x);
        }
    }
    for (int i = 0; i < 5 && size >= 2 && argc == 1; i++) {
        int x = i;
        if (rank == 1) {
            struct timespec ts = {0, 30 * 1000000L};
            nanosleep(&ts, NULL);
            MPI_Send(&x, 1, MPI_INT, 0, i, MPI_COMM_WORLD);
        } else if (rank == 0) {
            x = -1;
            MPI_Recv(&x, 1, MPI_INT, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (x != i && errs++ < 5)
                fprintf(stderr, "message %d: got %d\n", i, x);
        }
    }
    if (rank == 0 && errs == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return errs != 0;
}
