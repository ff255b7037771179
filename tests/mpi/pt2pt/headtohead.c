/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Both directions at once. Pairs of ranks exchange runs of messages of mixed sizes
 * (eager to rendezvous, one tag, so order matters) with MPI_Isend/MPI_Irecv,
 * receives posted first and then sends first (every message unexpected on both
 * sides); head-to-head MPI_Sendrecv; and with more ranks every rank exchanges with
 * every other at the same time. Each message's data and size are checked.
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

static const int sizes[] = {0, 1, 100, 8152, 8153, 20000, 32768, 32769, 100000, 1 << 20};
#define K (int)(sizeof(sizes) / sizeof(sizes[0]))
#define ROUNDS 3

/* exchange the run of K messages with `peer`; recv_first: post receives first */
static void exchange(int peer, int recv_first, int seed, unsigned char **sb, unsigned char **rb) {
    MPI_Request reqs[2 * K];
    MPI_Status sts[2 * K];
    char what[64];
    for (int i = 0; i < K; i++) {
        fill(sb[i], (size_t)sizes[i], seed * 1000 + rank * 100 + i);
        memset(rb[i], 0, (size_t)sizes[i]);
    }
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0) == (recv_first != 0)) {
            for (int i = 0; i < K; i++)
                MPI_Irecv(rb[i], sizes[i], MPI_BYTE, peer, 3, MPI_COMM_WORLD, &reqs[K + i]);
        } else {
            for (int i = 0; i < K; i++)
                MPI_Isend(sb[i], sizes[i], MPI_BYTE, peer, 3, MPI_COMM_WORLD, &reqs[i]);
        }
    }
    int err = MPI_Waitall(2 * K, reqs, sts);
    CHECK(err == MPI_SUCCESS, "Waitall: %d", err);
    for (int i = 0; i < K; i++) {
        snprintf(what, sizeof(what), "from %d, message %d (%s first)", peer, i,
                 recv_first ? "receives" : "sends");
        check_status(&sts[K + i], peer, 3, (size_t)sizes[i], what);
        check_data(rb[i], (size_t)sizes[i], seed * 1000 + peer * 100 + i, what);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char *sb[K], *rb[K];
    for (int i = 0; i < K; i++) {
        sb[i] = malloc((size_t)sizes[i] + 1);
        rb[i] = malloc((size_t)sizes[i] + 1);
    }
    int peer = rank ^ 1;
    if (peer < nprocs) {
        for (int round = 0; round < ROUNDS; round++) {
            exchange(peer, 1, round, sb, rb);
            exchange(peer, 0, round + 10, sb, rb);
        }
        /* head-to-head Sendrecv */
        for (int i = 0; i < K; i++) {
            MPI_Status st;
            char what[64];
            fill(sb[i], (size_t)sizes[i], 50 + rank * 100 + i);
            MPI_Sendrecv(sb[i], sizes[i], MPI_BYTE, peer, 4, rb[i], sizes[i], MPI_BYTE, peer, 4,
                         MPI_COMM_WORLD, &st);
            snprintf(what, sizeof(what), "Sendrecv of %d bytes", sizes[i]);
            check_status(&st, peer, 4, (size_t)sizes[i], what);
            check_data(rb[i], (size_t)sizes[i], 50 + peer * 100 + i, what);
        }
    }
    /* everyone with everyone at once: one size per peer */
    if (nprocs > 2) {
        int n = nprocs;
        MPI_Request *reqs = malloc(2 * (size_t)n * sizeof(MPI_Request));
        MPI_Status *sts = malloc(2 * (size_t)n * sizeof(MPI_Status));
        unsigned char **s = malloc((size_t)n * sizeof(*s)), **r = malloc((size_t)n * sizeof(*r));
        for (int round = 0; round < ROUNDS; round++) {
            for (int p = 0; p < n; p++) {
                int sz = sizes[(p + rank + round) % K];
                s[p] = malloc((size_t)sz + 1);
                r[p] = malloc((size_t)sz + 1);
                fill(s[p], (size_t)sz, round * 1000 + rank * 10 + p);
                MPI_Irecv(r[p], sz, MPI_BYTE, p, 5, MPI_COMM_WORLD, &reqs[p]);
            }
            for (int p = 0; p < n; p++)
                MPI_Isend(s[p], sizes[(p + rank + round) % K], MPI_BYTE, p, 5, MPI_COMM_WORLD,
                          &reqs[n + p]);
            int err = MPI_Waitall(2 * n, reqs, sts);
            CHECK(err == MPI_SUCCESS, "all-to-all Waitall: %d", err);
            for (int p = 0; p < n; p++) {
                int sz = sizes[(p + rank + round) % K];
                char what[64];
                snprintf(what, sizeof(what), "all-to-all round %d from %d", round, p);
                check_status(&sts[p], p, 5, (size_t)sz, what);
                check_data(r[p], (size_t)sz, round * 1000 + p * 10 + rank, what);
                free(s[p]);
                free(r[p]);
            }
        }
        free(reqs);
        free(sts);
        free(s);
        free(r);
    }
    for (int i = 0; i < K; i++) {
        free(sb[i]);
        free(rb[i]);
    }
    return finish();
}
