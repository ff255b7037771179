/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point from T threads per rank at once (arg 1: T, default 4): ranks form a
 * ring (to rank+1, from rank-1); thread t talks to thread t of the neighbours on
 * communicator comm[t / 2] (a duplicate of MPI_COMM_WORLD per pair of threads) with
 * tag t, so threads are told apart by communicator and by tag. Every size from empty
 * through eager and multi-cell to rendezvous (1 MiB + 5) goes by Isend/Irecv/Waitall,
 * Sendrecv, blocking Send/Recv (Ssend every other time) and a Test loop, and every byte
 * and every status is checked.
 */
#include "thrtest.h"

static const size_t sizes[] = {0, 1, 8, 40, 1000, 4103, 16384, 65539, 262144, (1 << 20) + 5};
#define NSIZES (sizeof sizes / sizeof sizes[0])
/* scripts/test.sh runs every line under ThreadSanitizer too, where checking each byte
 * costs 20 times more: one round there keeps its run to minutes */
#if defined(__SANITIZE_THREAD__)
#define ITERS 1
#else
#define ITERS 4
#endif

static MPI_Comm comms[THR_MAX];

static unsigned seed_of(int src, int t, int it, int si, int kind) {
    return (unsigned)((((src * THR_MAX + t) * ITERS + it) * (int)NSIZES + si) * 4 + kind);
}

static void check_status(const MPI_Status *st, int src, int tag, size_t n, const char *what) {
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && count == (int)n,
          "%s: status source %d tag %d count %d, want %d %d %zu", what, st->MPI_SOURCE, st->MPI_TAG,
          count, src, tag, n);
}

static void worker(int t, void *arg) {
    (void)arg;
    MPI_Comm c = comms[t / 2];
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs, tag = t;
    size_t max = sizes[NSIZES - 1];
    unsigned char *sb = malloc(max), *rb = malloc(max + 64);
    char what[96];
    for (int it = 0; it < ITERS; it++) {
        for (int si = 0; si < (int)NSIZES; si++) {
            size_t n = sizes[si];
            int big = n >= 65536;
            if (big && it >= 2)
                continue; /* large sizes twice: enough bytes for every protocol */
            for (int kind = 0; kind < 4; kind++) {
                MPI_Status st[2];
                MPI_Request rq[2];
                snprintf(what, sizeof what, "size %zu iteration %d kind %d", n, it, kind);
                thr_fill(sb, n, seed_of(rank, t, it, si, kind));
                memset(rb, 0xee, n + 64);
                switch (kind) {
                case 0: /* nonblocking both ways */
                    MPI_OK(MPI_Irecv(rb, (int)n + 64, MPI_BYTE, left, tag, c, &rq[0]));
                    MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, right, tag, c, &rq[1]));
                    MPI_OK(MPI_Waitall(2, rq, st));
                    break;
                case 1:
                    MPI_OK(MPI_Sendrecv(sb, (int)n, MPI_BYTE, right, tag, rb, (int)n + 64, MPI_BYTE,
                                        left, tag, c, &st[0]));
                    break;
                case 2: /* blocking, even ranks send first (the ring has an even size) */
                    if (rank % 2 == 0) {
                        if (it % 2)
                            MPI_OK(MPI_Ssend(sb, (int)n, MPI_BYTE, right, tag, c));
                        else
                            MPI_OK(MPI_Send(sb, (int)n, MPI_BYTE, right, tag, c));
                        MPI_OK(MPI_Recv(rb, (int)n + 64, MPI_BYTE, left, tag, c, &st[0]));
                    } else {
                        MPI_OK(MPI_Recv(rb, (int)n + 64, MPI_BYTE, left, tag, c, &st[0]));
                        if (it % 2)
                            MPI_OK(MPI_Ssend(sb, (int)n, MPI_BYTE, right, tag, c));
                        else
                            MPI_OK(MPI_Send(sb, (int)n, MPI_BYTE, right, tag, c));
                    }
                    break;
                default: { /* polled with MPI_Test from every thread at once */
                    int done[2] = {0, 0};
                    MPI_OK(MPI_Isend(sb, (int)n, MPI_BYTE, right, tag, c, &rq[1]));
                    MPI_OK(MPI_Irecv(rb, (int)n + 64, MPI_BYTE, left, tag, c, &rq[0]));
                    while (!done[0] || !done[1]) {
                        for (int k = 0; k < 2; k++)
                            if (!done[k])
                                MPI_OK(MPI_Test(&rq[k], &done[k], &st[k]));
                    }
                    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL,
                          "%s: a completed request is not MPI_REQUEST_NULL", what);
                    break;
                }
                }
                check_status(&st[0], left, tag, n, what);
                thr_check(rb, n, seed_of(left, t, it, si, kind), what);
                for (size_t i = n; i < n + 64; i++)
                    if (rb[i] != 0xee) {
                        CHECK(0, "%s: byte %zu past the message was written", what, i);
                        break;
                    }
            }
        }
    }
    free(sb);
    free(rb);
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    int nt = thr_arg_int(argc, argv, 1, 4);
    if (nprocs % 2) {
        fprintf(stderr, "sendrecv needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < (nt + 1) / 2; i++) {
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]));
        MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
    }
    thr_run(nt, worker, NULL);
    for (int i = 0; i < (nt + 1) / 2; i++)
        MPI_Comm_free(&comms[i]);
    return thr_finish();
}
