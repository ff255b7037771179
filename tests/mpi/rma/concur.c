/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Concurrency: results that are exact only if the library's atomicity and locks
 * hold. usage: concur KIND [ITERS (default 200)]
 *  1. Every rank accumulates into rank 0, ITERS epochs of Lock(shared)/Unlock: four
 *     counters (long long and double) and a vector of 1000 elements (element-wise
 *     atomicity of a bulk accumulate: a lost update shows as a short sum), and in a
 *     Lock_all epoch with a flush after each.
 *  2. Exclusive locks taken in turn: inside Lock(exclusive, 0) a rank reads the owner
 *     word (must be free), writes its id, increments a counter by Get + Put (not
 *     atomic: a second holder would lose increments), reads the owner again (must
 *     still be its own) and frees it. The counter must end at ITERS x size.
 *  3. Fetch_and_op counters, one per rank: every rank increments counter i % size
 *     ITERS times; the values fetched from each counter, over all ranks, must be
 *     exactly 0 .. n-1, each once, and the counter must end at n.
 *  4. A mutex made of Compare_and_swap in a Lock_all epoch (spinning with flushes)
 *     guards a Get + Put increment of a counter on the last rank.
 *  5. Readers and writers: under Lock(exclusive, 0) a rank writes one value into two
 *     words, with a flush between them; under Lock(shared, 0) a rank reads both and
 *     must find them equal (a shared lock granted while an exclusive one is held
 *     would see them differ).
 */
#include "rmatest.h"

enum {
    E_ACC = 0,   /* 4 long long: +1, +rank, +iteration, +1 (by Lock_all) */
    E_DACC = 4,  /* double: +0.5 */
    E_OWNER = 5, /* exclusive-lock owner, 0 when free */
    E_XCNT = 6,  /* counter under the exclusive lock */
    E_FOP = 7,   /* this rank's Fetch_and_op counter */
    E_MUTEX = 8, /* CAS mutex (on rank 0), 0 when free */
    E_MCNT = 9,  /* counter under the CAS mutex (on the last rank) */
    E_RWA = 10,  /* two words always written together under an exclusive lock */
    E_RWB = 11,
    E_VEC = 16, /* 1000 long long, each +1 per accumulate */
    NVEC = 1000,
    NELEM = E_VEC + NVEC
};

static rt_win_t W;

static MPI_Aint D(int t, int el) {
    return rt_disp(&W, t, (MPI_Aint)el * 8);
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: concur KIND [ITERS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int kind = rt_parse_kind(argv[1]);
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    rt_win_make(kind, NELEM * 8, 8, MPI_COMM_WORLD, &W);
    MPI_Win_set_errhandler(W.win, MPI_ERRORS_RETURN);
    long long *mem = (long long *)W.base;
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, W.win));
    memset(mem, 0, NELEM * 8);
    OK(MPI_Win_unlock(rank, W.win));
    MPI_Barrier(MPI_COMM_WORLD);
    int last = size - 1;

    /* ---- 1. many origins accumulating into one target ---- */
    long long *ones = malloc(sizeof(long long) * NVEC);
    for (int i = 0; i < NVEC; i++)
        ones[i] = 1;
    for (int it = 0; it < iters; it++) {
        long long v[3] = {1, rank, it};
        double half = 0.5;
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, W.win));
        OK(MPI_Accumulate(v, 3, MPI_LONG_LONG, 0, D(0, E_ACC), 3, MPI_LONG_LONG, MPI_SUM, W.win));
        OK(MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, D(0, E_DACC), 1, MPI_DOUBLE, MPI_SUM, W.win));
        OK(MPI_Accumulate(ones, NVEC, MPI_LONG_LONG, 0, D(0, E_VEC), NVEC, MPI_LONG_LONG, MPI_SUM,
                          W.win));
        OK(MPI_Win_unlock(0, W.win));
    }
    OK(MPI_Win_lock_all(0, W.win));
    for (int it = 0; it < iters; it++) {
        long long one = 1;
        OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, D(0, E_ACC + 3), 1, MPI_LONG_LONG, MPI_SUM,
                          W.win));
        OK(MPI_Accumulate(ones, NVEC / 2, MPI_LONG_LONG, 0, D(0, E_VEC + NVEC / 4), NVEC / 2,
                          MPI_LONG_LONG, MPI_SUM, W.win));
        OK(MPI_Win_flush(0, W.win));
    }
    OK(MPI_Win_unlock_all(W.win));

    /* ---- 2. exclusive locks in turn ---- */
    for (int it = 0; it < iters; it++) {
        long long owner = -1, me = rank + 1, zero = 0, cnt = -1;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, W.win));
        OK(MPI_Get(&owner, 1, MPI_LONG_LONG, 0, D(0, E_OWNER), 1, MPI_LONG_LONG, W.win));
        OK(MPI_Win_flush(0, W.win));
        CHECK(owner == 0, "iteration %d: exclusive lock held, but rank %lld holds it too", it,
              owner - 1);
        OK(MPI_Put(&me, 1, MPI_LONG_LONG, 0, D(0, E_OWNER), 1, MPI_LONG_LONG, W.win));
        OK(MPI_Get(&cnt, 1, MPI_LONG_LONG, 0, D(0, E_XCNT), 1, MPI_LONG_LONG, W.win));
        OK(MPI_Win_flush(0, W.win));
        cnt++;
        OK(MPI_Put(&cnt, 1, MPI_LONG_LONG, 0, D(0, E_XCNT), 1, MPI_LONG_LONG, W.win));
        OK(MPI_Win_flush(0, W.win));
        OK(MPI_Get(&owner, 1, MPI_LONG_LONG, 0, D(0, E_OWNER), 1, MPI_LONG_LONG, W.win));
        OK(MPI_Win_flush(0, W.win));
        CHECK(owner == me, "iteration %d: rank %lld took the exclusive lock from this rank", it,
              owner - 1);
        OK(MPI_Put(&zero, 1, MPI_LONG_LONG, 0, D(0, E_OWNER), 1, MPI_LONG_LONG, W.win));
        OK(MPI_Win_unlock(0, W.win));
    }

    /* ---- 3. Fetch_and_op counters ---- */
    long long *got = malloc(sizeof(long long) * (size_t)iters);
    OK(MPI_Win_lock_all(0, W.win));
    for (int it = 0; it < iters; it++) {
        long long one = 1;
        int t = it % size;
        OK(MPI_Fetch_and_op(&one, &got[it], MPI_LONG_LONG, t, D(t, E_FOP), MPI_SUM, W.win));
        if (it % 7 == 6 || it == iters - 1)
            OK(MPI_Win_flush_all(W.win)); /* up to 7 fetches in flight */
    }
    OK(MPI_Win_unlock_all(W.win));

    /* ---- 4. a Compare_and_swap mutex ---- */
    OK(MPI_Win_lock_all(0, W.win));
    for (int it = 0; it < iters; it++) {
        long long zero = 0, me = rank + 1, prev = -1, cnt = -1;
        for (;;) {
            OK(MPI_Compare_and_swap(&me, &zero, &prev, MPI_LONG_LONG, 0, D(0, E_MUTEX), W.win));
            OK(MPI_Win_flush(0, W.win));
            if (prev == 0)
                break;
            if (prev < 0 || prev > size) {
                CHECK(0, "the mutex holds %lld", prev);
                break;
            }
        }
        OK(MPI_Get(&cnt, 1, MPI_LONG_LONG, last, D(last, E_MCNT), 1, MPI_LONG_LONG, W.win));
        OK(MPI_Win_flush(last, W.win));
        cnt++;
        OK(MPI_Put(&cnt, 1, MPI_LONG_LONG, last, D(last, E_MCNT), 1, MPI_LONG_LONG, W.win));
        OK(MPI_Win_flush(last, W.win));
        OK(MPI_Compare_and_swap(&zero, &me, &prev, MPI_LONG_LONG, 0, D(0, E_MUTEX), W.win));
        OK(MPI_Win_flush(0, W.win));
        CHECK(prev == me, "iteration %d: releasing the mutex found %lld", it, prev);
    }
    OK(MPI_Win_unlock_all(W.win));

    /* ---- 5. readers and writers ---- */
    for (int it = 0; it < iters; it++) {
        if ((it + rank) % 2) {
            long long val = (long long)rank * 1000000 + it;
            OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, W.win));
            OK(MPI_Put(&val, 1, MPI_LONG_LONG, 0, D(0, E_RWA), 1, MPI_LONG_LONG, W.win));
            OK(MPI_Win_flush(0, W.win));
            OK(MPI_Put(&val, 1, MPI_LONG_LONG, 0, D(0, E_RWB), 1, MPI_LONG_LONG, W.win));
            OK(MPI_Win_unlock(0, W.win));
        } else {
            long long a = -1, b = -2;
            OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, W.win));
            OK(MPI_Get(&a, 1, MPI_LONG_LONG, 0, D(0, E_RWA), 1, MPI_LONG_LONG, W.win));
            OK(MPI_Get(&b, 1, MPI_LONG_LONG, 0, D(0, E_RWB), 1, MPI_LONG_LONG, W.win));
            OK(MPI_Win_unlock(0, W.win));
            CHECK(a == b, "iteration %d: a shared lock saw a writer's words differ: %lld, %lld", it,
                  a, b);
        }
    }

    /* ---- the results ---- */
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, W.win));
    long long n = iters * (long long)size;
    if (rank == 0) {
        long long ranksum = (long long)size * (size - 1) / 2;
        long long itsum = (long long)iters * (iters - 1) / 2;
        CHECK(mem[E_ACC] == n, "accumulate +1: %lld, expected %lld", mem[E_ACC], n);
        CHECK(mem[E_ACC + 1] == iters * ranksum, "accumulate +rank: %lld, expected %lld",
              mem[E_ACC + 1], iters * ranksum);
        CHECK(mem[E_ACC + 2] == size * itsum, "accumulate +iteration: %lld, expected %lld",
              mem[E_ACC + 2], size * itsum);
        CHECK(mem[E_ACC + 3] == n, "accumulate +1 in Lock_all: %lld, expected %lld", mem[E_ACC + 3],
              n);
        double dsum;
        memcpy(&dsum, &mem[E_DACC], 8);
        CHECK(dsum == 0.5 * (double)n, "double accumulate: %g, expected %g", dsum, 0.5 * (double)n);
        for (int i = 0; i < NVEC; i++) {
            long long want = n + (i >= NVEC / 4 && i < NVEC / 4 + NVEC / 2 ? n : 0);
            if (mem[E_VEC + i] != want) {
                CHECK(0, "bulk accumulate: element %d is %lld, expected %lld (lost updates)", i,
                      mem[E_VEC + i], want);
                break;
            }
        }
        CHECK(mem[E_OWNER] == 0, "the owner word is %lld after every holder left", mem[E_OWNER]);
        CHECK(mem[E_XCNT] == n, "counter under the exclusive lock: %lld, expected %lld",
              mem[E_XCNT], n);
        CHECK(mem[E_MUTEX] == 0, "the mutex is %lld after every holder left", mem[E_MUTEX]);
    }
    if (rank == last)
        CHECK(mem[E_MCNT] == n, "counter under the CAS mutex: %lld, expected %lld", mem[E_MCNT], n);
    /* counter c was incremented by every rank for its iterations it with it % size == c */
    long long mine = 0;
    for (int it = 0; it < iters; it++)
        mine += it % size == rank;
    mine *= size;
    CHECK(mem[E_FOP] == mine, "Fetch_and_op counter: %lld, expected %lld", mem[E_FOP], mine);
    OK(MPI_Win_unlock(rank, W.win));

    /* every fetched value of each counter exactly once */
    long long *all = rank == 0 ? malloc(sizeof(long long) * (size_t)n) : NULL;
    MPI_Gather(got, iters, MPI_LONG_LONG, all, iters, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int c = 0; c < size; c++) {
            long long cn = 0;
            for (int it = 0; it < iters; it++)
                cn += it % size == c;
            cn *= size;
            char *seen = calloc((size_t)cn + 1, 1);
            for (int r = 0; r < size; r++)
                for (int it = c; it < iters; it += size) {
                    long long v = all[(size_t)r * iters + it];
                    if (v < 0 || v >= cn || seen[v]) {
                        CHECK(0, "counter %d: rank %d fetched %lld (of 0..%lld, %s)", c, r, v,
                              cn - 1, v >= 0 && v < cn ? "twice" : "out of range");
                        break;
                    }
                    seen[v] = 1;
                }
            free(seen);
        }
        free(all);
    }
    free(got);
    free(ones);
    rt_win_free(&W);
    return rt_finish();
}
