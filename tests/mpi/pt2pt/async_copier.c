/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Under the progress thread (TANDEM_ASYNC_PROGRESS=1) a rendezvous whose side computes
 * outside MPI is copied by the side that does not (or, both computing, by the receiver
 * alone), never by the two-copy pipeline, whose every ring of cells needs both threads
 * woken again. Two ranks, 1 MiB, every byte checked; MPI_T counters of this process:
 *   waiter:   rank 0 Isend and computes (no MPI call) until rank 1, which Irecv and
 *             Wait, has its data; rank 0 must have copied nothing (the receiver did:
 *             COOP would have taken half of the copy from the computing rank).
 *   exchange: both Isend and Irecv, then compute until the first element of their
 *             receive buffer arrives; no pipeline (the testlist line makes exchanges of
 *             1 MiB go by pipeline otherwise): the two ranks copied 2 MiB by CMA in all
 *             (each receiver its own, or a sender whose rank already waits in MPI).
 * The computing rank gives up after argument 2 seconds (far above a loaded machine's
 * time). Skipped (77) unless TANDEM_ASYNC_PROGRESS is on.
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

static MPI_T_pvar_session pv_s;

/* A started handle of a Tandem counter: what it counted since now. */
static MPI_T_pvar_handle pv_start(const char *name, int cls) {
    int idx, count;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    if (MPI_T_pvar_get_index(name, cls, &idx) != MPI_SUCCESS ||
        MPI_T_pvar_handle_alloc(pv_s, idx, NULL, &h, &count) != MPI_SUCCESS || count != 1) {
        fprintf(stderr, "no performance variable %s\n", name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_pvar_start(pv_s, h); /* (continuous ones refuse it and count anyway) */
    return h;
}

static unsigned long long pv_read(MPI_T_pvar_handle h) {
    unsigned long long v = 0;
    if (MPI_T_pvar_read(pv_s, h, &v) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return v;
}

/* Burn CPU with no MPI call until *word != poison, or give up. */
static void compute_until(volatile int *word, int poison, double limit, const char *what) {
    double t0 = now(), x = 1.0;
    while (*word == poison) {
        for (int k = 0; k < 10000; k++)
            x = x * 1.0000001 + 1e-9;
        if (now() - t0 > limit) {
            fprintf(stderr, "%s: nothing moved in %.0f s while this rank computed outside MPI\n",
                    what, limit);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    if (x < 0)
        printf("%g\n", x); /* keeps the loop */
}

int main(int argc, char **argv) {
    int provided, rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "waiter";
    double limit = argc > 2 ? atof(argv[2]) : 300.0;
    if (!async_on()) {
        if (rank == 0)
            printf("async_copier: needs TANDEM_ASYNC_PROGRESS=1 (skipped)\n");
        MPI_Finalize();
        return 77;
    }
    int exchange = !strcmp(mode, "exchange");
    if (size != 2 || (!exchange && strcmp(mode, "waiter"))) {
        if (rank == 0)
            fprintf(stderr, "usage: async_copier waiter|exchange [seconds], 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&pv_s);
    MPI_T_pvar_handle h_read = pv_start("tandem_cma_bytes_read", MPI_T_PVAR_CLASS_AGGREGATE);
    MPI_T_pvar_handle h_written = pv_start("tandem_cma_bytes_written", MPI_T_PVAR_CLASS_AGGREGATE);
    MPI_T_pvar_handle h_pipe = pv_start("tandem_rndv_pipeline_msgs", MPI_T_PVAR_CLASS_COUNTER);

    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) {
        a[i] = i * 7 + rank * 13 + 1;
        b[i] = -1;
    }
    int *flag;
    MPI_Win win;
    MPI_Win_allocate_shared((MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                            &flag, &win);
    *flag = 0;
    MPI_Aint sz;
    int du, *peer_flag;
    MPI_Win_shared_query(win, 1, &sz, &du, &peer_flag);
    MPI_Barrier(MPI_COMM_WORLD); /* the flag is zero */

    int peer = 1 - rank;
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (exchange) {
        MPI_Isend(a, N, MPI_INT, peer, 5, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(b, N, MPI_INT, peer, 5, MPI_COMM_WORLD, &req[1]);
        compute_until(&b[0], -1, limit, "exchange");
    } else if (rank == 0) {
        MPI_Isend(a, N, MPI_INT, 1, 5, MPI_COMM_WORLD, &req[0]);
        compute_until(peer_flag, 0, limit, "waiter");
    } else {
        MPI_Irecv(b, N, MPI_INT, 0, 5, MPI_COMM_WORLD, &req[1]);
        MPI_Wait(&req[1], MPI_STATUS_IGNORE);
        __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
    }
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);

    if (exchange || rank == 1)
        for (int i = 0; i < N; i++)
            if (b[i] != i * 7 + peer * 13 + 1 && errs++ < 5)
                fprintf(stderr, "[%d] %s: b[%d] = %d, expected %d\n", rank, mode, i, b[i],
                        i * 7 + peer * 13 + 1);
    unsigned long long rd = pv_read(h_read), wr = pv_read(h_written), pipe = pv_read(h_pipe);
    unsigned long long moved = rd + wr, all_moved;
    MPI_Allreduce(&moved, &all_moved, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (exchange && (pipe != 0 || all_moved != 2 * N * sizeof(int))) {
        fprintf(stderr,
                "[%d] exchange while both compute: %llu pipeline messages, %llu bytes copied "
                "by CMA by both ranks (expected 0 and %zu: one copy per message)\n",
                rank, pipe, all_moved, 2 * N * sizeof(int));
        errs++;
    }
    if (!exchange && rank == 0 && wr != 0) {
        fprintf(stderr,
                "[0] waiter: the computing sender wrote %llu bytes (expected 0: the receiver, "
                "waiting in MPI, copies)\n",
                wr);
        errs++;
    }
    MPI_Win_free(&win);
    MPI_T_pvar_session_free(&pv_s);
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
