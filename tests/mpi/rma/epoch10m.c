/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ten million 8-byte Puts to one target in one lock epoch run in bounded memory
 * (ScalaRMA: operation objects come from a fixed pool, cleaned up when it runs out).
 * usage: epoch10m KIND [PUTS (default 10000000) [LIMIT_MIB (default 256)]]
 *
 * Rank 0 locks its target (rank 1, or itself alone) exclusively and puts value
 * f(i) into element i of the target's window, PUTS distinct elements (overlapping
 * Puts in one epoch would be undefined), from a 4096-entry table that stays valid
 * until the Unlock. Then the target checks every element, and every rank checks
 * its peak resident size (VmHWM in /proc/self/status) against LIMIT_MIB: a
 * resource check, not a timing one (the target's window itself is PUTS x 8 bytes,
 * 76 MiB by default; a library that keeps an object per queued Put needs several
 * hundred MiB more). Other ranks only take part in creating and freeing the window.
 */
#include "rmatest.h"

#define TABLE 4096

static long long f(long long i) {
    return i * 2654435761LL + 12345;
}

static long vmhwm_kib(void) {
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    if (!fp)
        return -1;
    while (fgets(line, sizeof(line), fp))
        if (!strncmp(line, "VmHWM:", 6))
            kib = atol(line + 6);
    fclose(fp);
    return kib;
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: epoch10m KIND [PUTS [LIMIT_MIB]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int kind = rt_parse_kind(argv[1]);
    long long puts = argc > 2 ? atoll(argv[2]) : 10000000LL;
    long limit_mib = argc > 3 ? atol(argv[3]) : 256;
    int target = size > 1 ? 1 : 0;
    MPI_Aint bytes = rank == target ? (MPI_Aint)puts * 8 : 0;
    rt_win_t W;
    rt_win_make(kind, bytes, 8, MPI_COMM_WORLD, &W);
    MPI_Win_set_errhandler(W.win, MPI_ERRORS_RETURN);
    long long *mem = (long long *)W.base;
    if (rank == target) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, W.win));
        for (long long i = 0; i < puts; i++)
            mem[i] = -1;
        OK(MPI_Win_unlock(rank, W.win));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        long long *table = malloc(sizeof(long long) * TABLE);
        /* element i gets table[i % TABLE]: no buffer per Put */
        for (int j = 0; j < TABLE; j++)
            table[j] = f(j);
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, W.win));
        for (long long i = 0; i < puts; i++) {
            int rc = MPI_Put(&table[i % TABLE], 1, MPI_LONG_LONG, target,
                             rt_disp(&W, target, i * 8), 1, MPI_LONG_LONG, W.win);
            if (rc != MPI_SUCCESS) {
                OK(rc);
                CHECK(0, "Put %lld of %lld refused", i, puts);
                break;
            }
        }
        OK(MPI_Win_unlock(target, W.win));
        free(table);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, W.win));
        long long bad = 0, first = -1;
        for (long long i = 0; i < puts; i++)
            if (mem[i] != f(i % TABLE) && bad++ == 0)
                first = i;
        CHECK(bad == 0, "%lld of %lld elements wrong, the first %lld: %lld, expected %lld", bad,
              puts, first, first >= 0 ? mem[first] : 0, first >= 0 ? f(first % TABLE) : 0);
        /* the last ones in particular: the end of the epoch must have issued them */
        for (long long i = puts > 4 ? puts - 4 : 0; i < puts; i++)
            CHECK(mem[i] == f(i % TABLE), "element %lld of the last Puts: %lld", i, mem[i]);
        OK(MPI_Win_unlock(rank, W.win));
    }
    long hwm = vmhwm_kib();
    CHECK(hwm >= 0 && hwm <= limit_mib * 1024,
          "peak resident size %ld KiB is over the limit of %ld MiB (%lld Puts in one epoch)", hwm,
          limit_mib, puts);
    if (getenv("RMATEST_VERBOSE"))
        fprintf(stderr, "rank %d: VmHWM %ld KiB\n", rank, hwm);
    rt_win_free(&W);
    return rt_finish();
}
