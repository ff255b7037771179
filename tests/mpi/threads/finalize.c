/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Finalize on the main thread after the threads that used MPI have been joined
 * (arg 1: T threads, default 4). Each thread exchanges messages with its peer thread
 * (rank ^ 1) and leaves behind sends it freed with MPI_Request_free while still active,
 * which MPI_Finalize must complete (their receives are posted by the peer's threads);
 * MPI_Is_thread_main is false in the threads and true on the main thread. After
 * MPI_Finalize, MPI_Finalized is true in new threads and on the main thread, and the
 * job ends cleanly.
 */
#include "thrtest.h"

#define NMSG 8
static int peer;
static MPI_Comm comms[THR_MAX];
static int inbox[THR_MAX][NMSG];
static MPI_Request rin[THR_MAX][NMSG];
static int outbox[THR_MAX][NMSG];
static atomic_int fin_flags;

static void worker(int t, void *arg) {
    (void)arg;
    MPI_Comm c = comms[t];
    for (int k = 0; k < NMSG; k++) {
        inbox[t][k] = -1;
        MPI_OK(MPI_Irecv(&inbox[t][k], 1, MPI_INT, peer, k, c, &rin[t][k]));
    }
    int x = rank * 100 + t, y = -1;
    MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, peer, 99, &y, 1, MPI_INT, peer, 99, c, MPI_STATUS_IGNORE));
    CHECK(y == peer * 100 + t, "exchange: %d, want %d", y, peer * 100 + t);
    for (int k = 0; k < NMSG; k++) {
        MPI_Request r;
        outbox[t][k] = rank * 1000 + t * 10 + k;
        MPI_OK(MPI_Isend(&outbox[t][k], 1, MPI_INT, peer, k, c, &r));
        MPI_OK(MPI_Request_free(&r)); /* completed by MPI_Finalize at the latest */
    }
    MPI_OK(MPI_Waitall(NMSG, rin[t], MPI_STATUSES_IGNORE));
    for (int k = 0; k < NMSG; k++)
        CHECK(inbox[t][k] == peer * 1000 + t * 10 + k, "message %d: %d", k, inbox[t][k]);
}

static void *after(void *arg) {
    (void)arg;
    int flag = 0;
    MPI_Finalized(&flag);
    if (flag)
        atomic_fetch_add(&fin_flags, 1);
    return NULL;
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    int nt = thr_arg_int(argc, argv, 1, 4);
    if (nprocs % 2) {
        fprintf(stderr, "finalize needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    peer = rank ^ 1;
    for (int t = 0; t < nt; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    thr_run(nt, worker, NULL);
    for (int t = 0; t < nt; t++)
        MPI_Comm_free(&comms[t]);
    int main_flag = 0;
    MPI_Is_thread_main(&main_flag);
    CHECK(main_flag, "MPI_Is_thread_main is false on the thread that called MPI_Init_thread");
    int e = atomic_load(&errs), total = 0;
    MPI_Reduce(&e, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, after, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    int flag = 0;
    MPI_Finalized(&flag);
    if (!flag || atomic_load(&fin_flags) != 4) {
        fprintf(stderr,
                "rank %d: after MPI_Finalize, MPI_Finalized is %d on the main thread, "
                "true in %d of 4 threads\n",
                rank, flag, atomic_load(&fin_flags));
        return 1;
    }
    if (rank == 0) {
        if (total)
            printf("Found %d errors\n", total);
        else
            printf(" No Errors\n");
    }
    return 0;
}
