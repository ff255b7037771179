/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-overtaking order: a run of messages with one envelope and sizes spanning
 * every path (0, 1, 8, 24, 8160, 8200, 32767, 32768, 32769, 1 MB, 16 MB) must be
 * received in the order sent, each intact. Receives posted before (expected),
 * after (unexpected), half and half; nonblocking and blocking on both sides; and
 * MPI_ANY_TAG receives of distinct tags must see the tags in send order. Each
 * receive buffer has exactly the expected size, so a message out of order shows
 * up as a truncation or a wrong count (errors return).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 10) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static unsigned char pat(size_t i, int seed) {
    return (unsigned char)((i ^ (i >> 8) ^ (i >> 16)) * 131u + (unsigned)seed * 17u + 1u);
}

static void fill(unsigned char *b, size_t n, int seed) {
    for (size_t i = 0; i < n; i++)
        b[i] = pat(i, seed);
}

static void check_data(const unsigned char *b, size_t n, int seed, const char *what) {
    for (size_t i = 0; i < n; i++) {
        if (b[i] != pat(i, seed)) {
            CHECK(0, "%s: %zu-byte message differs at byte %zu (got %u, want %u)", what, n, i, b[i],
                  pat(i, seed));
            return;
        }
    }
}

static void check_status(const MPI_Status *st, int src, int tag, size_t bytes, const char *what) {
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(st->MPI_SOURCE == src, "%s: MPI_SOURCE %d, want %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "%s: MPI_TAG %d, want %d", what, st->MPI_TAG, tag);
    CHECK(count == (int)bytes, "%s: count %d, want %zu", what, count, bytes);
}

/* total of every rank's error count at rank 0, which gives the verdict */
static int finish(void) {
    if (rank == 0) {
        for (int i = 1; i < nprocs; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, 32766, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
        if (errs)
            printf(" Found %d errors\n", errs);
        else
            printf(" No Errors\n");
        fflush(stdout);
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 32766, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return errs ? 1 : 0;
}

static const int sizes[] = {0, 1, 8, 24, 8160, 8200, 32767, 32768, 32769, 1 << 20, 16 << 20};
#define N (int)(sizeof(sizes) / sizeof(sizes[0]))
#define ROUNDS 2

static unsigned char *bufs[N];

static void sender(int peer, int phase) {
    MPI_Request reqs[N];
    int tag = phase == 4 ? -1 : 7;
    for (int i = 0; i < N; i++)
        fill(bufs[i], (size_t)sizes[i], phase * 100 + i);
    if (phase == 0 || phase == 3) /* the receiver posts (some) receives first */
        MPI_Recv(NULL, 0, MPI_BYTE, peer, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (phase == 2) {
        for (int i = 0; i < N; i++)
            MPI_Send(bufs[i], sizes[i], MPI_BYTE, peer, 7, MPI_COMM_WORLD);
        return;
    }
    for (int i = 0; i < N; i++)
        MPI_Isend(bufs[i], sizes[i], MPI_BYTE, peer, tag < 0 ? i : tag, MPI_COMM_WORLD, &reqs[i]);
    if (phase == 1) /* every envelope is ahead of this one */
        MPI_Send(NULL, 0, MPI_BYTE, peer, 1001, MPI_COMM_WORLD);
    int err = MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
    CHECK(err == MPI_SUCCESS, "phase %d: Waitall of the sends: %d", phase, err);
}

static void receiver(int peer, int phase) {
    MPI_Request reqs[N];
    MPI_Status sts[N];
    char what[64];
    for (int i = 0; i < N; i++)
        memset(bufs[i], 0, (size_t)sizes[i]);
    if (phase == 2 || phase == 4) {
        /* blocking receives; with ANY_TAG the tags must come in order */
        for (int i = 0; i < N; i++) {
            int err = MPI_Recv(bufs[i], sizes[i], MPI_BYTE, peer, phase == 4 ? MPI_ANY_TAG : 7,
                               MPI_COMM_WORLD, &sts[i]);
            CHECK(err == MPI_SUCCESS, "phase %d: receive %d failed (%d)", phase, i, err);
        }
    } else {
        int first = phase == 1 ? 0 : phase == 3 ? N / 2 : N;
        if (phase == 1)
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 1001, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < first; i++)
            MPI_Irecv(bufs[i], sizes[i], MPI_BYTE, peer, 7, MPI_COMM_WORLD, &reqs[i]);
        if (phase != 1)
            MPI_Send(NULL, 0, MPI_BYTE, peer, 1000, MPI_COMM_WORLD);
        for (int i = first; i < N; i++)
            MPI_Irecv(bufs[i], sizes[i], MPI_BYTE, peer, 7, MPI_COMM_WORLD, &reqs[i]);
        int err = MPI_Waitall(N, reqs, sts);
        CHECK(err == MPI_SUCCESS, "phase %d: Waitall of the receives: %d", phase, err);
    }
    for (int i = 0; i < N; i++) {
        snprintf(what, sizeof(what), "phase %d, message %d", phase, i);
        check_status(&sts[i], peer, phase == 4 ? i : 7, (size_t)sizes[i], what);
        check_data(bufs[i], (size_t)sizes[i], phase * 100 + i, what);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (nprocs >= 2 && rank < 2) {
        for (int i = 0; i < N; i++)
            bufs[i] = malloc((size_t)sizes[i] + 1);
        for (int round = 0; round < ROUNDS; round++) {
            for (int phase = 0; phase < 5; phase++) {
                /* the roles swap every round */
                if ((rank == 0) == (round % 2 == 0))
                    sender(1 - rank, phase);
                else
                    receiver(1 - rank, phase);
            }
        }
        for (int i = 0; i < N; i++)
            free(bufs[i]);
    }
    return finish();
}
