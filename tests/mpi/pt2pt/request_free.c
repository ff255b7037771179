/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Request_free of active operations: a send freed at once still delivers its
 * data intact (eager, multi-cell, rendezvous sizes; to the peer and to oneself); a
 * receive freed while posted still receives; freeing completed, buffered and
 * persistent requests; a thousand freed sends in a row. The handle becomes
 * MPI_REQUEST_NULL. The sender learns from the receiver's reply when its buffer
 * is free again.
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

static const int sizes[] = {0, 8, 8153, 32769, 1 << 20};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))
#define NFREED 1000

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsigned char *buf = malloc(1 << 20), *rbuf = malloc(1 << 20);
    MPI_Request req;
    MPI_Status st;
    char what[64];

    /* sends to oneself, freed at once */
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        snprintf(what, sizeof(what), "freed send to self of %d bytes", n);
        fill(buf, (size_t)n, k);
        MPI_Isend(buf, n, MPI_BYTE, rank, k, MPI_COMM_WORLD, &req);
        MPI_Request_free(&req);
        CHECK(req == MPI_REQUEST_NULL, "%s: handle not MPI_REQUEST_NULL", what);
        memset(rbuf, 0, (size_t)n);
        MPI_Recv(rbuf, n, MPI_BYTE, rank, k, MPI_COMM_WORLD, &st);
        check_status(&st, rank, k, (size_t)n, what);
        check_data(rbuf, (size_t)n, k, what);
    }
    /* a completed request, freed instead of waited for */
    {
        int x = 0, v = 5, flag = 0;
        MPI_Irecv(&x, 1, MPI_INT, rank, 50, MPI_COMM_WORLD, &req);
        MPI_Send(&v, 1, MPI_INT, rank, 50, MPI_COMM_WORLD);
        while (!flag)
            MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
        CHECK(req == MPI_REQUEST_NULL && x == 5, "freed completed receive: x %d", x);
    }
    /* persistent: free while inactive, and while active */
    {
        int x = 0, v = 6;
        MPI_Recv_init(&x, 1, MPI_INT, rank, 51, MPI_COMM_WORLD, &req);
        MPI_Request_free(&req);
        CHECK(req == MPI_REQUEST_NULL, "freed inactive persistent request: handle not null");
        MPI_Send_init(&v, 1, MPI_INT, rank, 52, MPI_COMM_WORLD, &req);
        MPI_Start(&req);
        MPI_Request_free(&req);
        CHECK(req == MPI_REQUEST_NULL, "freed active persistent send: handle not null");
        MPI_Recv(&x, 1, MPI_INT, rank, 52, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(x == 6, "freed active persistent send delivered %d", x);
    }
    /* buffered */
    {
        int bsize = 1000 + MPI_BSEND_OVERHEAD, x = 0, v = 7;
        void *b = malloc((size_t)bsize);
        MPI_Buffer_attach(b, bsize);
        MPI_Ibsend(&v, 1, MPI_INT, rank, 53, MPI_COMM_WORLD, &req);
        MPI_Request_free(&req);
        MPI_Recv(&x, 1, MPI_INT, rank, 53, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(x == 7 && req == MPI_REQUEST_NULL, "freed buffered send delivered %d", x);
        void *a;
        MPI_Buffer_detach(&a, &bsize);
        free(b);
    }

    if (nprocs >= 2 && rank < 2) {
        int peer = 1 - rank;
        for (int k = 0; k < NSIZES; k++) {
            int n = sizes[k];
            snprintf(what, sizeof(what), "freed send of %d bytes", n);
            if (rank == 0) {
                fill(buf, (size_t)n, k + 10);
                MPI_Isend(buf, n, MPI_BYTE, peer, k, MPI_COMM_WORLD, &req);
                MPI_Request_free(&req);
                CHECK(req == MPI_REQUEST_NULL, "%s: handle not MPI_REQUEST_NULL", what);
                /* the reply says the data arrived: only then is buf ours again */
                MPI_Recv(NULL, 0, MPI_BYTE, peer, 100 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                memset(buf, 0, (size_t)n);
            } else {
                memset(rbuf, 0, (size_t)n);
                MPI_Recv(rbuf, n, MPI_BYTE, peer, k, MPI_COMM_WORLD, &st);
                check_status(&st, peer, k, (size_t)n, what);
                check_data(rbuf, (size_t)n, k + 10, what);
                MPI_Send(NULL, 0, MPI_BYTE, peer, 100 + k, MPI_COMM_WORLD);
            }
            /* a receive freed while posted: a synchronous send and a later message
             * on the same path tell the receiver its data is in */
            snprintf(what, sizeof(what), "freed receive of %d bytes", n);
            if (rank == 1) {
                memset(rbuf, 0, (size_t)n);
                MPI_Irecv(rbuf, n, MPI_BYTE, peer, 200 + k, MPI_COMM_WORLD, &req);
                MPI_Request_free(&req);
                CHECK(req == MPI_REQUEST_NULL, "%s: handle not MPI_REQUEST_NULL", what);
                MPI_Send(NULL, 0, MPI_BYTE, peer, 300 + k, MPI_COMM_WORLD);
                MPI_Recv(NULL, 0, MPI_BYTE, peer, 400 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check_data(rbuf, (size_t)n, k + 20, what);
            } else {
                MPI_Recv(NULL, 0, MPI_BYTE, peer, 300 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                fill(buf, (size_t)n, k + 20);
                MPI_Ssend(buf, n, MPI_BYTE, peer, 200 + k, MPI_COMM_WORLD);
                MPI_Send(NULL, 0, MPI_BYTE, peer, 400 + k, MPI_COMM_WORLD);
            }
        }
        /* many freed sends: every one arrives, in order */
        if (rank == 0) {
            int *v = malloc(NFREED * sizeof(int));
            for (int i = 0; i < NFREED; i++) {
                v[i] = i;
                MPI_Isend(&v[i], 1, MPI_INT, peer, 500, MPI_COMM_WORLD, &req);
                MPI_Request_free(&req);
            }
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 501, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            free(v);
        } else {
            for (int i = 0; i < NFREED; i++) {
                int x = -1;
                MPI_Recv(&x, 1, MPI_INT, peer, 500, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(x == i, "freed send %d delivered %d", i, x);
                if (x != i)
                    break;
            }
            MPI_Send(NULL, 0, MPI_BYTE, peer, 501, MPI_COMM_WORLD);
        }
    }
    free(buf);
    free(rbuf);
    return finish();
}
