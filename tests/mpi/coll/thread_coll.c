/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives from several threads at once (MPI_THREAD_MULTIPLE): T threads per
 * rank, each on a duplicate of MPI_COMM_WORLD of its own, run Allreduce, Bcast,
 * Allgather and Alltoall, blocking and non-blocking (two outstanding at once),
 * at sizes that run as immediate schedules (small), recorded schedules and the
 * large algorithms; every element of every result is checked against its
 * formula. Arguments: threads (4), iterations (6).
 */
#include "../comm/tutil.h"

static MPI_Comm comms[TR_MAX];
static int iters = 6;
static const int counts[] = {1, 7, 1000, 5000, 70000};
#define NCOUNTS (int)(sizeof(counts) / sizeof(counts[0]))

/* An element's value: who made it, for which thread, iteration and position. */
static int val(int rank, int tid, int it, int i) {
    return rank * 1000003 + tid * 7919 + it * 131 + i;
}

static void *worker(int id, void *arg) {
    MPI_Comm c = comms[id];
    int r, s;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &s);
    int maxc = counts[NCOUNTS - 1];
    int *in = malloc((size_t)maxc * sizeof(int)), *out = malloc((size_t)maxc * sizeof(int));
    int *big = malloc((size_t)maxc * (size_t)s * sizeof(int));
    int *in2 = malloc((size_t)maxc * sizeof(int)), *out2 = malloc((size_t)maxc * sizeof(int));
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < NCOUNTS; k++) {
            int n = counts[k], bad = 0;
            /* Allreduce */
            for (int i = 0; i < n; i++)
                in[i] = val(r, id, it, i);
            T_OK(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, c));
            for (int i = 0; i < n; i++) {
                long long want = 0;
                for (int q = 0; q < s; q++)
                    want += val(q, id, it, i);
                bad += out[i] != (int)want;
            }
            T_CHECK(!bad, "thread %d Allreduce of %d: %d wrong", id, n, bad);
            /* Bcast from a root that moves */
            int root = (it + k) % s;
            for (int i = 0; i < n; i++)
                out[i] = r == root ? val(root, id, it, i) : -1;
            T_OK(MPI_Bcast(out, n, MPI_INT, root, c));
            bad = 0;
            for (int i = 0; i < n; i++)
                bad += out[i] != val(root, id, it, i);
            T_CHECK(!bad, "thread %d Bcast of %d from %d: %d wrong", id, n, root, bad);
            /* Allgather and Alltoall of n / s per rank (at least 1) */
            int m = n / s > 0 ? n / s : 1;
            for (int i = 0; i < m; i++)
                in[i] = val(r, id, it, i);
            T_OK(MPI_Allgather(in, m, MPI_INT, big, m, MPI_INT, c));
            bad = 0;
            for (int q = 0; q < s; q++)
                for (int i = 0; i < m; i++)
                    bad += big[q * m + i] != val(q, id, it, i);
            T_CHECK(!bad, "thread %d Allgather of %d: %d wrong", id, m, bad);
            for (int q = 0; q < s; q++)
                for (int i = 0; i < m; i++)
                    big[q * m + i] = val(r, id, it, q * m + i);
            int *recv = malloc((size_t)m * (size_t)s * sizeof(int));
            T_OK(MPI_Alltoall(big, m, MPI_INT, recv, m, MPI_INT, c));
            bad = 0;
            for (int q = 0; q < s; q++)
                for (int i = 0; i < m; i++)
                    bad += recv[q * m + i] != val(q, id, it, r * m + i);
            T_CHECK(!bad, "thread %d Alltoall of %d: %d wrong", id, m, bad);
            free(recv);
            /* non-blocking: an Iallreduce and an Ibcast outstanding together */
            MPI_Request rq[2];
            for (int i = 0; i < n; i++) {
                in[i] = val(r, id, it + 1, i);
                in2[i] = r == root ? val(root, id, it + 2, i) : -1;
            }
            T_OK(MPI_Iallreduce(in, out2, n, MPI_INT, MPI_MAX, c, &rq[0]));
            T_OK(MPI_Ibcast(in2, n, MPI_INT, root, c, &rq[1]));
            T_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            bad = 0;
            for (int i = 0; i < n; i++) {
                bad += out2[i] != val(s - 1, id, it + 1, i);
                bad += in2[i] != val(root, id, it + 2, i);
            }
            T_CHECK(!bad, "thread %d Iallreduce + Ibcast of %d: %d wrong", id, n, bad);
        }
    }
    free(in);
    free(out);
    free(in2);
    free(out2);
    free(big);
    return NULL;
}

int main(int argc, char **argv) {
    t_init_threads(&argc, &argv);
    iters = tr_arg_int(argc, argv, 2, iters);
    t_run_on_dups(tr_arg_int(argc, argv, 1, 4), worker, comms);
    return t_finish();
}
