/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-blocking collectives moved by the progress thread (TANDEM_ASYNC_PROGRESS=1) while
 * every rank computes outside MPI: each rank starts MPI_Iallreduce (SUM) of 1 MiB of ints
 * (or MPI_Ibcast from rank 0) and computes, with no MPI call, until the last element of
 * its result holds the final value, so every step of the schedule (the exchange, the
 * reduction that follows it, the next round) ran in the thread; then Wait, and every
 * element is checked. Rounds: argument 1 (default 20). On 2 ranks the MPI_T counters
 * must show no pipeline rendezvous: the exchange of a computing pair goes by one copy
 * (the testlist line makes exchanges of 1 MiB go by pipeline otherwise). A rank gives up
 * after argument 2 seconds (far above a loaded machine's time). Skipped (77) unless
 * TANDEM_ASYNC_PROGRESS is on.
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

static int val(int r, int round, int i) {
    return (i % 1000) * 3 + r * 17 + round + 1;
}

int main(int argc, char **argv) {
    int provided, rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    double limit = argc > 2 ? atof(argv[2]) : 300.0;
    if (!async_on()) {
        if (rank == 0)
            printf("async_sched: needs TANDEM_ASYNC_PROGRESS=1 (skipped)\n");
        MPI_Finalize();
        return 77;
    }
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int idx, count;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&s);
    if (MPI_T_pvar_get_index("tandem_rndv_pipeline_msgs", MPI_T_PVAR_CLASS_COUNTER, &idx) !=
            MPI_SUCCESS ||
        MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count) != MPI_SUCCESS) {
        fprintf(stderr, "no performance variable tandem_rndv_pipeline_msgs\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_pvar_start(s, h);

    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    double x = 1.0;
    for (int round = 0; round < 2 * rounds; round++) {
        int bcast = round >= rounds;
        int want_last = 0;
        for (int i = 0; i < N; i++) {
            a[i] = val(rank, round, i);
            b[i] = bcast && rank == 0 ? val(0, round, i) : -1;
        }
        for (int r = 0; r < size; r++)
            want_last += bcast ? (r == 0 ? val(0, round, N - 1) : 0) : val(r, round, N - 1);
        MPI_Request req;
        MPI_Barrier(MPI_COMM_WORLD);
        if (bcast)
            MPI_Ibcast(b, N, MPI_INT, 0, MPI_COMM_WORLD, &req);
        else
            MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        double t0 = now();
        while (__atomic_load_n(&b[N - 1], __ATOMIC_ACQUIRE) != want_last) {
            for (int k = 0; k < 10000; k++)
                x = x * 1.0000001 + 1e-9;
            if (now() - t0 > limit) {
                fprintf(stderr,
                        "[%d] %s round %d: the result did not arrive in %.0f s while every "
                        "rank computed outside MPI\n",
                        rank, bcast ? "ibcast" : "iallreduce", round, limit);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += bcast ? (r == 0 ? val(0, round, i) : 0) : val(r, round, i);
            if (b[i] != want && errs++ < 5)
                fprintf(stderr, "[%d] round %d: b[%d] = %d, expected %d\n", rank, round, i, b[i],
                        want);
        }
    }
    if (x < 0)
        printf("%g\n", x); /* keeps the loop */
    unsigned long long pipe = 0;
    MPI_T_pvar_read(s, h, &pipe);
    if (size == 2 && pipe != 0) {
        fprintf(stderr,
                "[%d] %llu rendezvous went by the pipeline while both ranks computed (expected "
                "none: one side copies)\n",
                rank, pipe);
        errs++;
    }
    MPI_T_pvar_handle_free(s, &h);
    MPI_T_pvar_session_free(&s);
    MPI_T_finalize();
    int all;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
