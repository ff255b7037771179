/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rank whose rendezvous send still needs it polls its own window memory with
 * MPI_Win_flush (or MPI_Win_sync) and no other MPI call, while the receiver can signal
 * through the window only once that message has arrived: mpi4py.util.sync's spin loop.
 * MPI's progress rule makes the polling calls move the send. usage: flush_poll
 * flush|sync [BYTES (default 1 MiB)] [SECONDS (default 60)]
 *
 * Rank 0 sends BYTES to rank 1 with MPI_Isend and then polls; rank 1 receives, checks
 * the bytes, then puts 1 into rank 0's flag. The wall-time bound is a timeout, not a
 * timing assertion: rank 0 reports an error only when the flag never came while it
 * polled. A message that goes eagerly passes either way: the lines that matter move it
 * by a rendezvous that needs its sender (the attached form and the pipeline).
 */
#include "rmatest.h"

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    if (argc < 2 || (strcmp(argv[1], "flush") && strcmp(argv[1], "sync"))) {
        if (rank == 0)
            fprintf(stderr, "usage: flush_poll flush|sync [BYTES] [SECONDS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int by_flush = !strcmp(argv[1], "flush");
    size_t bytes = argc > 2 ? (size_t)atol(argv[2]) : (size_t)1 << 20;
    double limit = argc > 3 ? atof(argv[3]) : 60.0;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "flush_poll needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *flag;
    MPI_Win win;
    OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &flag, &win));
    *flag = 0;
    unsigned char *buf = malloc(bytes ? bytes : 1);
    OK(MPI_Win_lock_all(0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (size_t i = 0; i < bytes; i++)
            buf[i] = (unsigned char)(i * 7 + 3);
        MPI_Request req;
        OK(MPI_Isend(buf, (int)bytes, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &req));
        double t0 = rt_now();
        long polls = 0;
        while (*(volatile int *)flag == 0 && rt_now() - t0 < limit) {
            if (by_flush)
                OK(MPI_Win_flush(0, win));
            else
                OK(MPI_Win_sync(win));
            polls++;
        }
        CHECK(*(volatile int *)flag == 1,
              "the flag never came in %.0f s of %ld %s calls: the send was not moved", limit, polls,
              by_flush ? "MPI_Win_flush" : "MPI_Win_sync");
        if (*(volatile int *)flag == 1)
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        else
            MPI_Abort(MPI_COMM_WORLD, 1); /* rank 1 is still waiting for the message */
    } else {
        OK(MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        size_t bad = 0;
        for (size_t i = 0; i < bytes; i++)
            bad += buf[i] != (unsigned char)(i * 7 + 3);
        CHECK(bad == 0, "%zu of %zu bytes wrong", bad, bytes);
        int one = 1;
        OK(MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        OK(MPI_Win_flush(0, win));
    }
    OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_free(&win));
    free(buf);
    return rt_finish();
}
