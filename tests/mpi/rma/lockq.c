/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queued passive-target locks under contention (seed 003 §3.4): every rank locks rank
 * 0 over and over.
 * 1. exclusive in turn: a read-modify-write by Get, flush, Put under the exclusive lock
 *    (not atomic by itself) must never lose an increment;
 * 2. mixed: odd ranks write a pair of words (a flush between them) under exclusive
 *    locks, even ranks read the pair under shared locks and must find it equal; the
 *    readers keep locking until every writer is done, so a writer that waited behind
 *    readers for ever would hang the test (no writer starvation);
 * 3. FIFO hand-off in sequences made deterministic (MPI_Win_lock queues the request
 *    and returns; the grant comes from the release before), and the counters: each
 *    request that had to wait was handed the lock by a release (tandem_rma lock
 *    hand-offs >= lock waits, summed over the ranks), and a release woke no more
 *    processes than it handed the lock to.
 * KIND: allocate (load/store) or create (CMA, or messages with TANDEM_CMA=off).
 */
#include "rmatest.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A started handle of a counter (counting from now on). */
static MPI_T_pvar_handle pvar_start(MPI_T_pvar_session s, const char *name) {
    int i, count, continuous, nlen = 0, dlen = 0, verb, cls, bind, ro, atomic;
    MPI_Datatype dt;
    MPI_T_enum et;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &i) != MPI_SUCCESS) {
        CHECK(0, "no counter %s", name);
        return h;
    }
    MPI_T_pvar_get_info(i, NULL, &nlen, &verb, &cls, &dt, &et, NULL, &dlen, &bind, &ro, &continuous,
                        &atomic);
    MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count);
    if (!continuous)
        MPI_T_pvar_start(s, h);
    return h;
}

static unsigned long long pvar_read(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
    unsigned long long v = 0;
    if (h != MPI_T_PVAR_HANDLE_NULL)
        MPI_T_pvar_read(s, h, &v);
    return v;
}

int main(int argc, char **argv) {
    int provided;
    rt_init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    int create = argc > 1 && strcmp(argv[1], "create") == 0;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    enum { COUNTER, PAIR0, PAIR1, DONE, NW };
    long *mem = NULL;
    MPI_Win win;
    if (create) {
        mem = calloc(NW, sizeof(long));
        MPI_Win_create(mem, NW * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate(NW * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                         &win);
        memset(mem, 0, NW * sizeof(long));
    }
    MPI_T_pvar_session s;
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle h[3] = {pvar_start(s, "tandem_rma_lock_waits"),
                              pvar_start(s, "tandem_rma_lock_handoffs"),
                              pvar_start(s, "tandem_rma_lock_wakeups")};
    MPI_Barrier(MPI_COMM_WORLD);

    /* 1: exclusive in turn */
    for (int i = 0; i < iters; i++) {
        long v = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&v, 1, MPI_LONG, 0, COUNTER, 1, MPI_LONG, win);
        MPI_Win_flush(0, win);
        v++;
        MPI_Put(&v, 1, MPI_LONG, 0, COUNTER, 1, MPI_LONG, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long v;
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Get(&v, 1, MPI_LONG, 0, COUNTER, 1, MPI_LONG, win);
        MPI_Win_unlock(0, win);
        CHECK(v == (long)size * iters, "exclusive in turn: counter %ld, want %ld", v,
              (long)size * iters);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2: readers and writers; with one rank it writes and reads */
    int writer = size == 1 || rank % 2 == 1, reader = size == 1 || rank % 2 == 0;
    long nwriters = size == 1 ? 1 : size / 2;
    if (writer) {
        for (int i = 1; i <= iters; i++) {
            long v = 1000L * rank + i;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Put(&v, 1, MPI_LONG, 0, PAIR0, 1, MPI_LONG, win);
            MPI_Win_flush(0, win);
            MPI_Put(&v, 1, MPI_LONG, 0, PAIR1, 1, MPI_LONG, win);
            MPI_Win_unlock(0, win);
        }
        long one = 1, old;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, DONE, MPI_SUM, win);
        MPI_Win_unlock(0, win);
    }
    if (reader) {
        long done = 0, reads = 0;
        while (done < nwriters) {
            long pair[2] = {-1, -2};
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Get(pair, 2, MPI_LONG, 0, PAIR0, 2, MPI_LONG, win);
            MPI_Get(&done, 1, MPI_LONG, 0, DONE, 1, MPI_LONG, win);
            MPI_Win_unlock(0, win);
            CHECK(pair[0] == pair[1], "a reader saw a half-done write: %ld %ld", pair[0], pair[1]);
            reads++;
        }
        CHECK(reads > 0, "no reads");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 3: FIFO hand-off. Rank 0 holds the lock (type t0); ranks 1.. ask in turn, each
     * after the previous one's MPI_Win_lock returned (it does not wait for the grant:
     * the request is queued at the target), with the types of `seq`; rank 0's release
     * starts the chain. The order of the grants is the order of the requests, but for
     * a run of shared ones; a shared request behind a queued exclusive one waits even
     * while the lock is held shared (no writer starvation). */
    static const struct {
        int t0, type[3];
        long want[3]; /* the ticket each rank 1..3 must get (-1: that or the next) */
    } seqs[] = {
        {MPI_LOCK_EXCLUSIVE,
         {MPI_LOCK_EXCLUSIVE, MPI_LOCK_EXCLUSIVE, MPI_LOCK_EXCLUSIVE},
         {0, 1, 2}},
        {MPI_LOCK_EXCLUSIVE, {MPI_LOCK_EXCLUSIVE, MPI_LOCK_SHARED, MPI_LOCK_SHARED}, {0, -1, -1}},
        {MPI_LOCK_SHARED, {MPI_LOCK_SHARED, MPI_LOCK_EXCLUSIVE, MPI_LOCK_SHARED}, {0, 1, 2}},
    };
    for (int q = 0; q < 3 && size > 1; q++) {
        long zero = 0, ticket = -1, one = 1;
        if (rank == 0) {
            MPI_Win_lock(seqs[q].t0, 0, 0, win);
            MPI_Put(&zero, 1, MPI_LONG, 0, DONE, 1, MPI_LONG, win);
            MPI_Win_flush(0, win); /* held from here on */
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int r = 1; r < size && r <= 3; r++) {
            if (rank == r)
                MPI_Win_lock(seqs[q].type[r - 1], 0, 0, win);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (rank == 0)
            MPI_Win_unlock(0, win);
        if (rank >= 1 && rank <= 3) {
            MPI_Fetch_and_op(&one, &ticket, MPI_LONG, 0, DONE, MPI_SUM, win);
            MPI_Win_unlock(0, win);
            long want = seqs[q].want[rank - 1];
            int last = rank == size - 1 || rank == 3;
            if (want >= 0)
                CHECK(ticket == want,
                      "sequence %d: rank %d was granted the lock %ld-th, want %ld-th", q, rank,
                      ticket, want);
            else
                CHECK(ticket == rank - 1 || ticket == (last ? rank - 2 : rank),
                      "sequence %d: rank %d (shared) was granted the lock %ld-th", q, rank, ticket);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
    free(create ? mem : NULL);

    /* 3: the counters */
    unsigned long long c[3] = {pvar_read(s, h[0]), pvar_read(s, h[1]), pvar_read(s, h[2])};
    for (int i = 0; i < 3; i++)
        if (h[i] != MPI_T_PVAR_HANDLE_NULL)
            MPI_T_pvar_handle_free(s, &h[i]);
    MPI_T_pvar_session_free(&s);
    MPI_Allreduce(MPI_IN_PLACE, c, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(c[1] >= c[0], "lock hand-offs %llu < lock waits %llu", c[1], c[0]);
    CHECK(c[2] <= c[1], "lock wake-ups %llu > lock hand-offs %llu", c[2], c[1]);
    /* part 3 alone hands over 3m-1 times for m requesters: m in sequences 1 and 2, m-1 in 3 */
    int m = (size < 4 ? size : 4) - 1;
    if (size > 1)
        CHECK(c[1] >= (unsigned long long)(3 * m - 1),
              "lock hand-offs %llu, want at least %d: queued requests were not handed the lock",
              c[1], 3 * m - 1);

    MPI_T_finalize();
    return rt_finish();
}
