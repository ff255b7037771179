/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous progress toward a peer of another node (TANDEM_ASYNC_PROGRESS=1, run with
 * nodes=2 or split=): rank 1 posts an Irecv of 1 MiB from rank 0 and then computes with no
 * MPI call at all until rank 0's blocking Send has returned. The message goes by
 * rendezvous over UCX, so rank 0's Send needs rank 1's answer: only rank 1's progress
 * thread, driving UCX, can give it. Rank 0 says it is done by creating a file (the nodes
 * share a file system, not memory); without the thread rank 1 gives up after the time
 * limit (argument 1, seconds; far above a loaded machine's time). Every byte is checked.
 * Skipped (77) unless TANDEM_ASYNC_PROGRESS is on.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define N (256 * 1024) /* ints: 1 MiB */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *on = getenv("TANDEM_ASYNC_PROGRESS");
    if (!on || strcmp(on, "1") != 0 || size < 2) {
        if (rank == 0)
            printf("async_remote: needs TANDEM_ASYNC_PROGRESS=1 and 2 ranks; skipped\n");
        MPI_Finalize();
        return 77;
    }
    double limit = argc > 1 ? atof(argv[1]) : 120.0;
    /* the flag file's name, from rank 0: unique to this job */
    char path[256] = "";
    if (rank == 0) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof(path), "%s/tandem-async-remote-%d-%ld", dir ? dir : "/tmp",
                 (int)getpid(), (long)time(NULL));
    }
    MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
    int *buf = malloc(N * sizeof(int));
    if (rank == 0) {
        for (int i = 0; i < N; i++)
            buf[i] = i * 7 + 1;
        MPI_Send(buf, N, MPI_INT, 1, 5, MPI_COMM_WORLD);
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "rank 0: cannot create %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fclose(f);
    } else if (rank == 1) {
        memset(buf, 0, N * sizeof(int));
        MPI_Request req;
        MPI_Irecv(buf, N, MPI_INT, 0, 5, MPI_COMM_WORLD, &req);
        /* compute, no MPI call, until rank 0's Send returned */
        double t0 = now();
        volatile double x = 0;
        struct stat st;
        while (stat(path, &st) != 0) {
            for (int i = 0; i < 100000; i++)
                x += i * 0.5;
            if (now() - t0 > limit) {
                fprintf(stderr,
                        "rank 1: rank 0's Send did not return in %g s while rank 1 computed: "
                        "no progress toward the other node without MPI calls\n",
                        limit);
                errs++;
                break;
            }
        }
        if (x < 0) /* the computation's result is used, so it is not optimised away */
            printf("rank 1: %g\n", x);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) {
            if (buf[i] != i * 7 + 1) {
                if (errs++ < 5)
                    fprintf(stderr, "rank 1: buf[%d] = %d, expected %d\n", i, buf[i], i * 7 + 1);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(path);
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    free(buf);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
