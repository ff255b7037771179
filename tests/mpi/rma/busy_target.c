/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A target that computes, making no MPI call, must not stall its origins during a
 * passive epoch (the idea of mpi4py's test_util_sync, whose Mutex and Counter live
 * in a window). usage: busy_target KIND put|fop [SECONDS (default 60)]
 *
 * Rank 0 is the target. After a barrier it loops on plain loads of its own window
 * (the unified model: updates become visible without further calls) with some
 * arithmetic, and makes no MPI call until every origin has said it is done, or
 * until SECONDS of wall time have passed. Each origin meanwhile takes an exclusive
 * lock on rank 0, puts 512 values into its slot, flushes, gets them back and
 * compares, accumulates into a shared sum, unlocks; then takes a shared lock and
 * says it is done: by a Put of 1 into its flag (put), or by a Fetch_and_op on a
 * counter (fop). The wall-time bound is a timeout, not a timing assertion: the
 * target reports an error only when the origins did not finish at all while it
 * computed.
 *
 * Expected to fail on MPICH 4.0.2 (its passive target needs the target's progress
 * for the lock and the get: the origins finish only after the target gives up and
 * calls MPI again). For Tandem, required of windows in shared memory (allocate,
 * shared); windows of user memory (create, dynamic) may need the target for a lock
 * grant and are not listed.
 */
#include "rmatest.h"

enum { SLOT = 512, E_COUNT = 0, E_SUM = 1, E_FLAG = 8 /* + origin */, E_SLOT = 1024 };

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    if (argc < 3 || (strcmp(argv[2], "put") && strcmp(argv[2], "fop"))) {
        if (rank == 0)
            fprintf(stderr, "usage: busy_target KIND put|fop [SECONDS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int kind = rt_parse_kind(argv[1]);
    int by_put = !strcmp(argv[2], "put");
    double limit = argc > 3 ? atof(argv[3]) : 60.0;
    if (size < 2) {
        if (rank == 0)
            printf("busy_target needs an origin and a target\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Aint bytes = (MPI_Aint)(E_SLOT + SLOT * size) * 8;
    rt_win_t W;
    rt_win_make(kind, bytes, 8, MPI_COMM_WORLD, &W);
    MPI_Win_set_errhandler(W.win, MPI_ERRORS_RETURN);
    long long *mem = (long long *)W.base;
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, W.win));
    memset(mem, 0, (size_t)bytes);
    OK(MPI_Win_unlock(rank, W.win));
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        volatile long long *vm = mem;
        double t0 = rt_now(), x = 1.0;
        int done = 0;
        long spins = 0;
        while (!done) {
            for (int i = 0; i < 1000; i++)
                x = x * 0.999 + 1.0; /* the computation */
            if (by_put) {
                done = 1;
                for (int o = 1; o < size; o++)
                    done &= vm[E_FLAG + o] == 1;
            } else {
                done = __atomic_load_n(&mem[E_COUNT], __ATOMIC_ACQUIRE) == size - 1;
            }
            if (!done && (++spins & 63) == 0 && rt_now() - t0 > limit)
                break;
        }
        CHECK(done,
              "the origins did not finish in %.0f s while the target computed without MPI calls "
              "(x %g)",
              limit, x);
    } else {
        long long *out = malloc(sizeof(long long) * SLOT), *back = malloc(sizeof(long long) * SLOT);
        for (int i = 0; i < SLOT; i++)
            out[i] = (long long)rank * 1000000 + i, back[i] = -1;
        MPI_Aint slot = rt_disp(&W, 0, (MPI_Aint)(E_SLOT + SLOT * rank) * 8);
        long long mine = rank;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, W.win));
        OK(MPI_Put(out, SLOT, MPI_LONG_LONG, 0, slot, SLOT, MPI_LONG_LONG, W.win));
        OK(MPI_Win_flush(0, W.win));
        OK(MPI_Get(back, SLOT, MPI_LONG_LONG, 0, slot, SLOT, MPI_LONG_LONG, W.win));
        OK(MPI_Accumulate(&mine, 1, MPI_LONG_LONG, 0, rt_disp(&W, 0, E_SUM * 8), 1, MPI_LONG_LONG,
                          MPI_SUM, W.win));
        OK(MPI_Win_unlock(0, W.win));
        for (int i = 0; i < SLOT; i++)
            if (back[i] != out[i]) {
                CHECK(0, "got back %lld at %d, expected %lld", back[i], i, out[i]);
                break;
            }
        long long one = 1, old = -1;
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, W.win));
        if (by_put)
            OK(MPI_Put(&one, 1, MPI_LONG_LONG, 0, rt_disp(&W, 0, (E_FLAG + rank) * 8), 1,
                       MPI_LONG_LONG, W.win));
        else
            OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, rt_disp(&W, 0, E_COUNT * 8), MPI_SUM,
                                W.win));
        OK(MPI_Win_unlock(0, W.win));
        if (!by_put)
            CHECK(old >= 0 && old < size - 1, "the counter was %lld", old);
        free(out);
        free(back);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, W.win));
        long long want = (long long)size * (size - 1) / 2;
        CHECK(mem[E_SUM] == want, "sum of the origins: %lld, expected %lld", mem[E_SUM], want);
        for (int o = 1; o < size; o++)
            for (int i = 0; i < SLOT; i++)
                if (mem[E_SLOT + SLOT * o + i] != (long long)o * 1000000 + i) {
                    CHECK(0, "slot of origin %d, element %d: %lld", o, i,
                          mem[E_SLOT + SLOT * o + i]);
                    break;
                }
        OK(MPI_Win_unlock(0, W.win));
    }
    rt_win_free(&W);
    return rt_finish();
}
