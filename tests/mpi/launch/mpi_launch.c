/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The launch checks of check_launch.py with real MPI calls: how mpirun sees a job
 * that the library reports on. Needs at least 2 ranks for the failure modes.
 *
 * usage: mpi_launch MODE [ARG]
 *   hello        every rank prints "hello from rank R of N", also on stderr with 'err'
 *   exit N       every rank finalizes; rank 1 then exits with N, the others sleep
 *   kill         rank 1 is killed by SIGKILL while rank 0 waits for its message
 *   abort N      rank 1 calls MPI_Abort(MPI_COMM_WORLD, N) while rank 0 waits
 *   nofinalize   rank 1 returns from main without MPI_Finalize while rank 0 waits
 *   hang         every rank waits for a message that never comes
 *   trap         prints "ready from rank R", then waits; SIGTERM/SIGINT make it print
 *                "rank R got signal S" and exit 128+S
 *   stdin        every rank reads its standard input and prints how much it got
 */
#include <mpi.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank;

static void on_signal(int sig) {
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "rank %d got signal %d\n", rank, sig);
    if (write(1, buf, (size_t)n) < 0) {
        /* nothing to do */
    }
    _exit(128 + sig);
}

/* a barrier made of point-to-point messages only: the launch checks need no collectives */
static void sync_all(int size) {
    int x = 0;
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            MPI_Recv(&x, 1, MPI_INT, r, 4241, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int r = 1; r < size; r++)
            MPI_Send(&x, 1, MPI_INT, r, 4241, MPI_COMM_WORLD);
    } else {
        MPI_Send(&x, 1, MPI_INT, 0, 4241, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 0, 4241, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static void wait_forever(void) {
    int x;
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
    int size;
    const char *mode = argc > 1 ? argv[1] : "hello";
    int arg = argc > 2 ? atoi(argv[2]) : 0;

    if (!strcmp(mode, "trap")) {
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (!strcmp(mode, "hello")) {
        printf("hello from rank %d of %d\n", rank, size);
        fflush(stdout);
        fprintf(stderr, "err from rank %d\n", rank);
    } else if (!strcmp(mode, "exit")) {
        MPI_Finalize();
        if (rank == 1)
            return arg;
        sleep(30); /* mpirun must end us long before this */
        return 0;
    } else if (!strcmp(mode, "kill")) {
        sync_all(size);
        if (rank == 1)
            raise(SIGKILL);
        wait_forever();
    } else if (!strcmp(mode, "abort")) {
        sync_all(size);
        if (rank == 1)
            MPI_Abort(MPI_COMM_WORLD, arg);
        wait_forever();
    } else if (!strcmp(mode, "nofinalize")) {
        sync_all(size);
        if (rank == 1)
            return 0;
        wait_forever();
    } else if (!strcmp(mode, "hang")) {
        wait_forever();
    } else if (!strcmp(mode, "trap")) {
        sync_all(size);
        printf("ready from rank %d\n", rank);
        fflush(stdout);
        wait_forever();
    } else if (!strcmp(mode, "stdin")) {
        char buf[4096];
        size_t total = 0, n;
        char first[128] = "";
        while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
            if (total == 0) {
                size_t len = strcspn(buf, "\n");
                if (len >= sizeof(first))
                    len = sizeof(first) - 1;
                if (len > n)
                    len = n;
                memcpy(first, buf, len);
                first[len] = 0;
            }
            total += n;
        }
        printf("rank %d read %zu bytes: '%s'\n", rank, total, first);
        fflush(stdout);
    } else {
        fprintf(stderr, "mpi_launch: unknown mode '%s'\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 99);
    }
    MPI_Finalize();
    return 0;
}
