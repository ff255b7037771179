/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The closing fence completes every operation at its target: in each of many fence
 * epochs, every rank but 0 issues many small Puts and Accumulates to rank 0's window
 * (user memory: with TANDEM_CMA=off they travel as messages that rank 0 serves), and
 * rank 0, which issues nothing and reaches the fence first, checks its memory right
 * after the fence returns, before it opens the next epoch: every Put's value and every
 * counter's sum, exactly. The next epoch's Gets read back the last one's Puts.
 * usage: fence_am [EPOCHS [OPS]] (defaults 30 and 400 operations of each kind per origin)
 */
#include "rmatest.h"

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    int epochs = argc > 1 ? atoi(argv[1]) : 30, nops = argc > 2 ? atoi(argv[2]) : 400;
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "fence_am needs 2 ranks or more\n");
        MPI_Finalize();
        return 77;
    }
    /* rank 0's window: nops slots per rank, then nops counters */
    size_t n = (size_t)nops * (size_t)(size + 1);
    long long *mem = calloc(n, sizeof(long long));
    MPI_Win win;
    OK(MPI_Win_create(mem, rank == 0 ? (MPI_Aint)(n * sizeof(long long)) : 0, sizeof(long long),
                      MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    long long *vals = malloc((size_t)nops * sizeof(long long)), got = 0, inc = rank;
    long long per_epoch = (long long)size * (size - 1) / 2; /* the origins' ranks, summed */

    for (int e = 0; e < epochs; e++) {
        /* rank 0 opens the next epoch only after its check: nothing lands meanwhile */
        OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        if (rank > 0) {
            if (e > 0) /* the last epoch's first Put, read back */
                OK(MPI_Get(&got, 1, MPI_LONG_LONG, 0, (MPI_Aint)rank * nops, 1, MPI_LONG_LONG,
                           win));
            for (int i = 0; i < nops; i++) {
                vals[i] = (long long)e * 1000000007LL + (long long)rank * nops + i;
                OK(MPI_Put(&vals[i], 1, MPI_LONG_LONG, 0, (MPI_Aint)rank * nops + i, 1,
                           MPI_LONG_LONG, win));
                OK(MPI_Accumulate(&inc, 1, MPI_LONG_LONG, 0, (MPI_Aint)size * nops + i, 1,
                                  MPI_LONG_LONG, MPI_SUM, win));
            }
        }
        OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        if (rank > 0 && e > 0)
            CHECK(got == (long long)(e - 1) * 1000000007LL + (long long)rank * nops,
                  "epoch %d: the Get read %lld", e, got);
        if (rank == 0) {
            int bad = 0;
            for (int r = 1; r < size; r++)
                for (int i = 0; i < nops; i++) {
                    long long want = (long long)e * 1000000007LL + (long long)r * nops + i;
                    long long have = mem[(size_t)r * nops + i];
                    if (have != want && bad++ < 5)
                        CHECK(0, "epoch %d: slot %d of rank %d is %lld after the fence, not %lld",
                              e, i, r, have, want);
                }
            for (int i = 0; i < nops; i++) {
                long long have = mem[(size_t)size * nops + i];
                if (have != per_epoch * (e + 1) && bad++ < 10)
                    CHECK(0, "epoch %d: counter %d is %lld after the fence, not %lld", e, i, have,
                          per_epoch * (e + 1));
            }
            if (bad)
                CHECK(0, "epoch %d: %d values not in place when the fence returned", e, bad);
        }
    }
    OK(MPI_Win_free(&win));
    free(vals);
    free(mem);
    return rt_finish();
}
