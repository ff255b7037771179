/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking MPI_Send/MPI_Recv between pairs of ranks (0-1, 2-3, ...), for sizes at
 * every cell, eager-limit and rendezvous boundary, with the receive posted before
 * the message arrives (expected) and after (unexpected, found by MPI_Probe).
 * Checks contents, MPI_SOURCE/MPI_TAG, MPI_Get_count, wildcards, MPI_STATUS_IGNORE,
 * zero-byte messages with a NULL buffer and counts of a multi-byte datatype.
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

static const size_t sizes[] = {0,     1,     8,     24,     215,    216,     217,    456,   457,
                               8151,  8152,  8153,  8160,   8200,   16328,   16329,  32767, 32768,
                               32769, 65536, 99999, 131072, 131073, 1 << 20, 3 << 20};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int peer = rank ^ 1;
    if (peer >= nprocs)
        return finish(); /* odd rank out */
    int sender = rank % 2 == 0;
    unsigned char *buf = malloc(sizes[NSIZES - 1] + 64);
    MPI_Status st;
    char what[64];

    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k];
        int tag = (int)k;
        /* expected: the receive is posted before the message leaves */
        snprintf(what, sizeof(what), "expected %zu", n);
        if (sender) {
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fill(buf, n, (int)k);
            MPI_Send(buf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
        } else {
            MPI_Request req;
            memset(buf, 0xee, n + 64);
            MPI_Irecv(buf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
            MPI_Send(NULL, 0, MPI_BYTE, peer, 1000, MPI_COMM_WORLD);
            MPI_Wait(&req, &st);
            check_status(&st, peer, tag, n, what);
            check_data(buf, n, (int)k, what);
            for (int i = 0; i < 64; i++)
                CHECK(buf[n + i] == 0xee, "%s: byte %zu past the message was written", what, n + i);
        }
        /* unexpected: the envelope is here before the receive is posted */
        snprintf(what, sizeof(what), "unexpected %zu", n);
        if (sender) {
            fill(buf, n, (int)k + 1);
            MPI_Send(buf, (int)n, MPI_BYTE, peer, tag + 100, MPI_COMM_WORLD);
        } else {
            MPI_Probe(peer, tag + 100, MPI_COMM_WORLD, &st);
            check_status(&st, peer, tag + 100, n, "probe");
            memset(buf, 0, n);
            /* a bigger buffer than the message: the status gives the real size */
            MPI_Recv(buf, (int)n + 10, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            check_status(&st, peer, tag + 100, n, what);
            check_data(buf, n, (int)k + 1, what);
        }
    }

    /* MPI_STATUS_IGNORE, counts of MPI_INT, source given and tag wildcard */
    if (sender) {
        int v[100];
        for (int i = 0; i < 100; i++)
            v[i] = i * i - 7;
        MPI_Send(v, 100, MPI_INT, peer, 5, MPI_COMM_WORLD);
        MPI_Send(v, 3, MPI_INT, peer, 6, MPI_COMM_WORLD);
        MPI_Send(NULL, 0, MPI_INT, peer, 7, MPI_COMM_WORLD);
        MPI_Send(v, 1, MPI_INT, peer, 8, MPI_COMM_WORLD);
    } else {
        int v[100];
        memset(v, 0, sizeof(v));
        MPI_Recv(v, 100, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 100; i++)
            CHECK(v[i] == i * i - 7, "int message: v[%d]=%d", i, v[i]);
        MPI_Recv(v, 100, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int count = -1;
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == 3 && st.MPI_TAG == 6, "3 ints: count %d tag %d", count, st.MPI_TAG);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == 3 * (int)sizeof(int), "3 ints as bytes: count %d", count);
        MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == 0 && st.MPI_SOURCE == peer && st.MPI_TAG == 7,
              "zero ints: count %d source %d tag %d", count, st.MPI_SOURCE, st.MPI_TAG);
        /* a zero-count receive of a non-empty message is truncation, so give room */
        MPI_Recv(v, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &st);
        CHECK(v[0] == -7, "1 int: %d", v[0]);
    }

    /* a conversation: the roles swap each round, sizes grow */
    for (int round = 0; round < 6; round++) {
        size_t n = (size_t)1 << (round * 4); /* 1 .. 1M */
        int i_send = (round % 2 == 0) == sender;
        if (i_send) {
            fill(buf, n, round + 50);
            MPI_Send(buf, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD);
        } else {
            memset(buf, 0, n);
            MPI_Recv(buf, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &st);
            snprintf(what, sizeof(what), "round %d", round);
            check_status(&st, peer, 9, n, what);
            check_data(buf, n, round + 50, what);
        }
    }
    free(buf);
    return finish();
}
