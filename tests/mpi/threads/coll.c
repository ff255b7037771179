/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives from several threads at once, each thread on its own duplicate of
 * MPI_COMM_WORLD (arg 1: T threads, default 4; arg 2: iterations, default 8): Barrier,
 * Bcast (root turning, 8 B and 100 KB), Reduce, Allreduce (1 and 20000 ints), Gather,
 * Scatter, Allgather, Alltoall, Reduce_scatter_block, Scan; then the non-blocking forms
 * (Ibarrier, Ibcast, Iallreduce, Iallgather, Ialltoall, Ireduce) started together and
 * completed with MPI_Waitall, and one Iallreduce polled with MPI_Test. Every result is
 * checked against its formula; a thread's values depend on the thread, so results that
 * crossed between communicators are found.
 */
#include "thrtest.h"

static MPI_Comm comms[THR_MAX];
static int iters;

static int val(int r, int t, int it, int i) {
    return (r + 1) * 1000 + t * 100 + it * 7 + i % 13;
}

static void worker(int t, void *arg) {
    (void)arg;
    MPI_Comm c = comms[t];
    int n = nprocs, big = 20000, bb = 100000;
    int *a = malloc(sizeof(int) * (size_t)big * n), *b = malloc(sizeof(int) * (size_t)big * n);
    unsigned char *bc = malloc((size_t)bb);
    for (int it = 0; it < iters; it++) {
        int root = (it + t) % n;
        MPI_OK(MPI_Barrier(c));
        /* Bcast, small and large */
        for (int sz = 8; sz <= bb; sz = sz == 8 ? bb : bb + 1) {
            if (rank == root)
                thr_fill(bc, (size_t)sz, (unsigned)(t * 1000 + it * 10 + root));
            else
                memset(bc, 0, (size_t)sz);
            MPI_OK(MPI_Bcast(bc, sz, MPI_BYTE, root, c));
            thr_check(bc, (size_t)sz, (unsigned)(t * 1000 + it * 10 + root), "bcast");
        }
        /* Allreduce and Reduce */
        for (int cnt = 1; cnt <= big; cnt = cnt == 1 ? big : big + 1) {
            for (int i = 0; i < cnt; i++)
                a[i] = val(rank, t, it, i);
            MPI_OK(MPI_Allreduce(a, b, cnt, MPI_INT, MPI_SUM, c));
            for (int i = 0; i < cnt; i++) {
                int want = 0;
                for (int r = 0; r < n; r++)
                    want += val(r, t, it, i);
                if (b[i] != want) {
                    CHECK(0, "allreduce count %d: element %d is %d, want %d", cnt, i, b[i], want);
                    break;
                }
            }
            memset(b, 0, sizeof(int) * (size_t)cnt);
            MPI_OK(MPI_Reduce(a, b, cnt, MPI_INT, MPI_MAX, root, c));
            if (rank == root)
                for (int i = 0; i < cnt; i++)
                    if (b[i] != val(n - 1, t, it, i)) {
                        CHECK(0, "reduce count %d: element %d is %d, want %d", cnt, i, b[i],
                              val(n - 1, t, it, i));
                        break;
                    }
        }
        /* Gather, Scatter, Allgather, Alltoall (100 ints a block) */
        int m = 100;
        for (int i = 0; i < m; i++)
            a[i] = val(rank, t, it, i);
        MPI_OK(MPI_Gather(a, m, MPI_INT, b, m, MPI_INT, root, c));
        if (rank == root)
            for (int r = 0; r < n; r++)
                for (int i = 0; i < m; i++)
                    if (b[r * m + i] != val(r, t, it, i)) {
                        CHECK(0, "gather: block %d element %d is %d", r, i, b[r * m + i]);
                        r = n;
                        break;
                    }
        if (rank == root)
            for (int r = 0; r < n; r++)
                for (int i = 0; i < m; i++)
                    a[r * m + i] = val(r, t, it, i + 1);
        MPI_OK(MPI_Scatter(a, m, MPI_INT, b, m, MPI_INT, root, c));
        for (int i = 0; i < m; i++)
            if (b[i] != val(rank, t, it, i + 1)) {
                CHECK(0, "scatter: element %d is %d", i, b[i]);
                break;
            }
        for (int i = 0; i < m; i++)
            a[i] = val(rank, t, it, i + 2);
        MPI_OK(MPI_Allgather(a, m, MPI_INT, b, m, MPI_INT, c));
        for (int r = 0; r < n; r++)
            for (int i = 0; i < m; i++)
                if (b[r * m + i] != val(r, t, it, i + 2)) {
                    CHECK(0, "allgather: block %d element %d is %d", r, i, b[r * m + i]);
                    r = n;
                    break;
                }
        for (int r = 0; r < n; r++)
            for (int i = 0; i < m; i++)
                a[r * m + i] = val(rank, t, it, r * m + i);
        MPI_OK(MPI_Alltoall(a, m, MPI_INT, b, m, MPI_INT, c));
        for (int r = 0; r < n; r++)
            for (int i = 0; i < m; i++)
                if (b[r * m + i] != val(r, t, it, rank * m + i)) {
                    CHECK(0, "alltoall: block %d element %d is %d", r, i, b[r * m + i]);
                    r = n;
                    break;
                }
        for (int i = 0; i < m * n; i++)
            a[i] = val(rank, t, it, i);
        MPI_OK(MPI_Reduce_scatter_block(a, b, m, MPI_INT, MPI_SUM, c));
        for (int i = 0; i < m; i++) {
            int want = 0;
            for (int r = 0; r < n; r++)
                want += val(r, t, it, rank * m + i);
            if (b[i] != want) {
                CHECK(0, "reduce_scatter_block: element %d is %d, want %d", i, b[i], want);
                break;
            }
        }
        int x = val(rank, t, it, 0), y = 0, want = 0;
        MPI_OK(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, c));
        for (int r = 0; r <= rank; r++)
            want += val(r, t, it, 0);
        CHECK(y == want, "scan: %d, want %d", y, want);

        /* non-blocking, several in flight on the communicator at once */
        MPI_Request rq[6];
        int s1 = val(rank, t, it, 3), r1 = 0, s2[4], r2[4 * 16], s3[16], r3[16], s4 = 0, r4 = 0;
        for (int i = 0; i < 4; i++)
            s2[i] = val(rank, t, it, 40 + i);
        for (int r = 0; r < n; r++)
            s3[r] = val(rank, t, it, 60 + r);
        s4 = rank + t;
        if (rank == root)
            thr_fill(bc, (size_t)bb, (unsigned)(t * 77 + it));
        else
            memset(bc, 0, (size_t)bb);
        MPI_OK(MPI_Ibarrier(c, &rq[0]));
        MPI_OK(MPI_Ibcast(bc, bb, MPI_BYTE, root, c, &rq[1]));
        MPI_OK(MPI_Iallreduce(&s1, &r1, 1, MPI_INT, MPI_SUM, c, &rq[2]));
        MPI_OK(MPI_Iallgather(s2, 4, MPI_INT, r2, 4, MPI_INT, c, &rq[3]));
        MPI_OK(MPI_Ialltoall(s3, 1, MPI_INT, r3, 1, MPI_INT, c, &rq[4]));
        MPI_OK(MPI_Ireduce(&s4, &r4, 1, MPI_INT, MPI_MIN, root, c, &rq[5]));
        MPI_OK(MPI_Waitall(6, rq, MPI_STATUSES_IGNORE));
        thr_check(bc, (size_t)bb, (unsigned)(t * 77 + it), "ibcast");
        want = 0;
        for (int r = 0; r < n; r++)
            want += val(r, t, it, 3);
        CHECK(r1 == want, "iallreduce: %d, want %d", r1, want);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < 4; i++)
                CHECK(r2[r * 4 + i] == val(r, t, it, 40 + i), "iallgather: block %d element %d", r,
                      i);
        for (int r = 0; r < n; r++)
            CHECK(r3[r] == val(r, t, it, 60 + rank), "ialltoall: element %d is %d", r, r3[r]);
        if (rank == root)
            CHECK(r4 == t, "ireduce: %d, want %d", r4, t);
        /* one polled */
        int done = 0;
        s1 = t + it;
        MPI_OK(MPI_Iallreduce(&s1, &r1, 1, MPI_INT, MPI_MAX, c, &rq[0]));
        while (!done)
            MPI_OK(MPI_Test(&rq[0], &done, MPI_STATUS_IGNORE));
        CHECK(r1 == t + it, "polled iallreduce: %d, want %d", r1, t + it);
    }
    free(a);
    free(b);
    free(bc);
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    int nt = thr_arg_int(argc, argv, 1, 4);
    iters = thr_arg_int(argc, argv, 2, 8);
    if (nprocs > 16) {
        fprintf(stderr, "coll: at most 16 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int t = 0; t < nt; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    thr_run(nt, worker, NULL);
    for (int t = 0; t < nt; t++)
        MPI_Comm_free(&comms[t]);
    return thr_finish();
}
