/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rank that dies while holding a lock ends the job, as a dying rank does
 * anywhere else, and leaves nothing behind (the runner checks /dev/shm and the
 * processes). usage: die KIND abort|kill
 * The last rank locks rank 0's window exclusively, puts into it, flushes, tells
 * rank 0 by a message, and then calls MPI_Abort(MPI_COMM_WORLD, 5) (listed with
 * exit=5) or kills itself with SIGKILL (listed with expect=fail). Every other rank
 * meanwhile asks for the same exclusive lock, which can never be granted: only
 * the job's end ends them.
 */
#include "rmatest.h"
#include <signal.h>

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    if (argc < 3 || (strcmp(argv[2], "abort") && strcmp(argv[2], "kill")) || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: die KIND abort|kill (2 ranks or more)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int kind = rt_parse_kind(argv[1]);
    rt_win_t W;
    rt_win_make(kind, 4096, 8, MPI_COMM_WORLD, &W);
    int last = size - 1, token = 0;
    long long v[64];
    for (int i = 0; i < 64; i++)
        v[i] = i;
    if (rank == last) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, W.win));
        OK(MPI_Put(v, 64, MPI_LONG_LONG, 0, rt_disp(&W, 0, 0), 64, MPI_LONG_LONG, W.win));
        OK(MPI_Win_flush(0, W.win));
        for (int p = 0; p < last; p++)
            MPI_Send(&token, 1, MPI_INT, p, 0, MPI_COMM_WORLD);
        if (!strcmp(argv[2], "abort"))
            MPI_Abort(MPI_COMM_WORLD, 5);
        raise(SIGKILL);
    } else {
        MPI_Recv(&token, 1, MPI_INT, last, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, W.win));
        OK(MPI_Put(v, 1, MPI_LONG_LONG, 0, rt_disp(&W, 0, 0), 1, MPI_LONG_LONG, W.win));
        OK(MPI_Win_unlock(0, W.win));
    }
    printf("rank %d: the lock was granted although its holder died\n", rank);
    rt_win_free(&W);
    MPI_Finalize();
    return 0;
}
