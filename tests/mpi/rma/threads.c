/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-sided communication from several threads at once (MPI_THREAD_MULTIPLE): every
 * thread of every rank does Put, Get, Accumulate and Fetch_and_op, with flushes, on one
 * window all threads share and on a window of its own, inside one lock_all epoch each
 * that the main thread opened. Exact results: the accumulated sums of every rank, the
 * values Fetch_and_op fetched from one counter (each of 0..n-1 exactly once), each
 * thread's own slots read back after its Puts.
 *   threads KIND [ITERS]   KIND create|allocate|dynamic
 * Exits 77 (skipped) when the library does not provide MPI_THREAD_MULTIPLE.
 */
#include "../thread_run.h"
#include "rmatest.h"

#define NT 4 /* threads per rank */

static int kind, iters = 300;
static rt_win_t shared_w, own_w[NT];
static int64_t *fetched; /* [NT][iters]: what thread k's Fetch_and_op i returned */

/* Element layout of the shared window: 0 the accumulated count, 1 rank 0's counter for
 * Fetch_and_op, 2.. one slot per (origin, thread). Of a thread's own window: 0 its sum,
 * 1.. one slot per origin. */
static int nslots_shared(void) {
    return 2 + size * NT;
}

static int target_of(int origin, int i) {
    return (origin + 1 + i) % size;
}

static int64_t put_value(int origin, int k, int i) {
    return ((int64_t)origin * NT + k) * 1000000 + i + 1;
}

static void *worker(int k, void *arg) {
    MPI_Win ws = shared_w.win, wo = own_w[k].win;
    int64_t one = 1, mine = k + 1, v, got;
    for (int i = 0; i < iters; i++) {
        int t = target_of(rank, i);
        OK(MPI_Accumulate(&one, 1, MPI_INT64_T, t, rt_disp(&shared_w, t, 0), 1, MPI_INT64_T,
                          MPI_SUM, ws));
        OK(MPI_Fetch_and_op(&one, &fetched[(size_t)k * iters + i], MPI_INT64_T, 0,
                            rt_disp(&shared_w, 0, 8), MPI_SUM, ws));
        v = put_value(rank, k, i);
        MPI_Aint slot = rt_disp(&shared_w, t, 8 * (MPI_Aint)(2 + rank * NT + k));
        OK(MPI_Put(&v, 1, MPI_INT64_T, t, slot, 1, MPI_INT64_T, ws));
        OK(MPI_Win_flush(t, ws));
        got = -1;
        OK(MPI_Get(&got, 1, MPI_INT64_T, t, slot, 1, MPI_INT64_T, ws));
        OK(MPI_Win_flush_local(t, ws));
        CHECK(got == v, "thread %d iteration %d: Get of its slot at rank %d read %lld, put %lld", k,
              i, t, (long long)got, (long long)v);

        /* the thread's own window */
        OK(MPI_Accumulate(&mine, 1, MPI_INT64_T, t, rt_disp(&own_w[k], t, 0), 1, MPI_INT64_T,
                          MPI_SUM, wo));
        MPI_Aint oslot = rt_disp(&own_w[k], t, 8 * (MPI_Aint)(1 + rank));
        OK(MPI_Put(&v, 1, MPI_INT64_T, t, oslot, 1, MPI_INT64_T, wo));
        OK(MPI_Win_flush(t, wo));
        got = -1;
        OK(MPI_Get(&got, 1, MPI_INT64_T, t, oslot, 1, MPI_INT64_T, wo));
        OK(MPI_Win_flush(t, wo));
        CHECK(got == v, "thread %d iteration %d: Get of its own window's slot read %lld, put %lld",
              k, i, (long long)got, (long long)v);
        if (i % 64 == 63)
            OK(MPI_Win_flush_all(ws));
    }
    return NULL;
}

int main(int argc, char **argv) {
    tr_init(&argc, &argv, 0);
    rt_setup();
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: threads create|allocate|dynamic [ITERS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    kind = rt_parse_kind(argv[1]);
    if (argc > 2)
        iters = atoi(argv[2]);

    rt_win_make(kind, 8 * nslots_shared(), 8, MPI_COMM_WORLD, &shared_w);
    for (int k = 0; k < NT; k++)
        rt_win_make(kind, 8 * (1 + size), 8, MPI_COMM_WORLD, &own_w[k]);
    memset(shared_w.base, 0, (size_t)(8 * nslots_shared()));
    for (int k = 0; k < NT; k++)
        memset(own_w[k].base, 0, (size_t)(8 * (1 + size)));
    fetched = calloc((size_t)NT * iters, sizeof(*fetched));
    MPI_Barrier(MPI_COMM_WORLD);

    OK(MPI_Win_lock_all(0, shared_w.win));
    for (int k = 0; k < NT; k++)
        OK(MPI_Win_lock_all(0, own_w[k].win));
    tr_run(NT, worker, NULL, NULL);
    for (int k = 0; k < NT; k++)
        OK(MPI_Win_unlock_all(own_w[k].win));
    OK(MPI_Win_unlock_all(shared_w.win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* every rank's memory, now that every origin has unlocked */
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, shared_w.win));
    int64_t *m = (int64_t *)(void *)shared_w.base;
    int64_t want = 0;
    for (int o = 0; o < size; o++)
        for (int i = 0; i < iters; i++)
            want += target_of(o, i) == rank ? NT : 0;
    CHECK(m[0] == want, "the shared window's sum is %lld, expected %lld", (long long)m[0],
          (long long)want);
    if (rank == 0)
        CHECK(m[1] == (int64_t)size * NT * iters, "the Fetch_and_op counter is %lld, expected %lld",
              (long long)m[1], (long long)size * NT * iters);
    for (int o = 0; o < size; o++)
        for (int k = 0; k < NT; k++) {
            int last = -1; /* the last iteration of o that targeted this rank */
            for (int i = 0; i < iters; i++)
                if (target_of(o, i) == rank)
                    last = i;
            int64_t w = last < 0 ? 0 : put_value(o, k, last);
            CHECK(m[2 + o * NT + k] == w, "slot of rank %d thread %d is %lld, expected %lld", o, k,
                  (long long)m[2 + o * NT + k], (long long)w);
        }
    OK(MPI_Win_unlock(rank, shared_w.win));
    for (int k = 0; k < NT; k++) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, own_w[k].win));
        int64_t *mo = (int64_t *)(void *)own_w[k].base;
        CHECK(mo[0] == want / NT * (k + 1), "thread %d's window sum is %lld, expected %lld", k,
              (long long)mo[0], (long long)(want / NT * (k + 1)));
        OK(MPI_Win_unlock(rank, own_w[k].win));
    }

    /* every value of rank 0's counter was fetched exactly once */
    int n = NT * iters;
    int64_t *all = rank == 0 ? malloc(sizeof(int64_t) * (size_t)n * size) : NULL;
    MPI_Gather(fetched, n, MPI_INT64_T, all, n, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        size_t total = (size_t)n * size;
        unsigned char *seen = calloc(total, 1);
        for (size_t j = 0; j < total; j++) {
            int64_t f = all[j];
            if (f < 0 || (size_t)f >= total) {
                CHECK(0, "Fetch_and_op fetched %lld, outside 0..%zu", (long long)f, total - 1);
                continue;
            }
            CHECK(!seen[f], "Fetch_and_op fetched %lld twice", (long long)f);
            seen[f] = 1;
        }
        free(seen);
        free(all);
    }

    free(fetched);
    for (int k = 0; k < NT; k++)
        rt_win_free(&own_w[k]);
    rt_win_free(&shared_w);
    return rt_finish();
}
