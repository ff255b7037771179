/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous progress (TANDEM_ASYNC_PROGRESS=1): rank 1 starts a non-blocking
 * operation of 1 MiB and then computes with no MPI call at all, until every other rank
 * has finished its side (a flag each in an MPI_Win_allocate_shared window, written
 * after its blocking call or Wait returned). Only the progress thread can move rank 1's
 * side meanwhile, so without it the others never finish and rank 1 gives up after the
 * time limit (argument 2, seconds; far above a loaded machine's time). Every byte is
 * checked afterwards.
 *   recv:       rank 1 Irecv, rank 0 a blocking Send (rendezvous: CTS, FIN need rank 1)
 *   iallreduce: everyone Iallreduce(SUM) of 256 Ki ints, the others Wait at once
 *   ibcast:     Ibcast from rank 0, the others Wait at once
 * Skipped (77) unless TANDEM_ASYNC_PROGRESS is on: without the thread it cannot pass.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define N (256 * 1024) /* ints: 1 MiB */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int async_on(void) {
    const char *v = getenv("TANDEM_ASYNC_PROGRESS");
    return v && (!strcmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes") ||
                 !strcasecmp(v, "true"));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *op = argc > 1 ? argv[1] : "recv";
    double limit = argc > 2 ? atof(argv[2]) : 300.0;
    if (!async_on()) {
        if (rank == 0)
            printf("async_overlap: needs TANDEM_ASYNC_PROGRESS=1 (skipped)\n");
        MPI_Finalize();
        return 77;
    }
    if (size < 2 || (strcmp(op, "recv") && strcmp(op, "iallreduce") && strcmp(op, "ibcast"))) {
        if (rank == 0)
            fprintf(stderr, "usage: async_overlap recv|iallreduce|ibcast [seconds], 2+ ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *flag;
    MPI_Win win;
    MPI_Win_allocate_shared((MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &flag, &win);
    *flag = 0;
    int **flags = malloc((size_t)size * sizeof(int *));
    for (int r = 0; r < size; r++) {
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(win, r, &sz, &du, &flags[r]);
    }
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) {
        a[i] = i * 7 + rank * 13 + 1;
        b[i] = -1;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the flags are zero everywhere */

    MPI_Request req = MPI_REQUEST_NULL;
    int recv_only = !strcmp(op, "recv");
    if (recv_only && rank > 1) {
        /* no part in it */
    } else if (recv_only && rank == 0) {
        MPI_Send(a, N, MPI_INT, 1, 5, MPI_COMM_WORLD);
    } else if (recv_only) {
        MPI_Irecv(b, N, MPI_INT, 0, 5, MPI_COMM_WORLD, &req);
    } else if (!strcmp(op, "iallreduce")) {
        MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    } else {
        if (rank == 0)
            memcpy(b, a, N * sizeof(int));
        MPI_Ibcast(b, N, MPI_INT, 0, MPI_COMM_WORLD, &req);
    }

    if (rank == 1) {
        /* compute with no MPI call until every other rank is done with its side */
        double t0 = now(), x = 1.0;
        int others_done = 0;
        while (!others_done) {
            for (int k = 0; k < 100000; k++)
                x = x * 1.0000001 + 1e-9;
            others_done = 1;
            for (int r = 0; r < size; r++)
                if (r != 1 && !__atomic_load_n(flags[r], __ATOMIC_ACQUIRE))
                    others_done = 0;
            if (!others_done && now() - t0 > limit) {
                fprintf(stderr,
                        "[1] %s: the other ranks did not finish in %.0f s while rank 1 "
                        "computed outside MPI (no asynchronous progress)\n",
                        op, limit);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        if (x < 0)
            printf("%g\n", x); /* keeps the loop */
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    }

    /* every byte */
    if (recv_only) {
        if (rank == 1)
            for (int i = 0; i < N; i++)
                if (b[i] != i * 7 + 1 && errs++ < 5)
                    fprintf(stderr, "[1] recv: b[%d] = %d, expected %d\n", i, b[i], i * 7 + 1);
    } else {
        for (int i = 0; i < N; i++) {
            int want = 0;
            if (!strcmp(op, "iallreduce"))
                for (int r = 0; r < size; r++)
                    want += i * 7 + r * 13 + 1;
            else
                want = i * 7 + 1;
            if (b[i] != want && errs++ < 5)
                fprintf(stderr, "[%d] %s: b[%d] = %d, expected %d\n", rank, op, i, b[i], want);
        }
    }
    MPI_Win_free(&win);
    int all;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    free(a);
    free(b);
    free(flags);
    MPI_Finalize();
    return 0;
}
