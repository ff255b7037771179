/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent requests: MPI_Send_init, MPI_Bsend_init, MPI_Ssend_init,
 * MPI_Rsend_init and MPI_Recv_init, started with MPI_Start and MPI_Startall and
 * reused over iterations with new data each time; completed by Wait, Test,
 * Waitall and Waitany; inactive requests (Wait returns an empty status, the
 * handle survives); MPI_PROC_NULL and wildcard persistent receives; freed at the
 * end. Eager, multi-cell and rendezvous sizes.
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

static const int sizes[] = {0, 8, 8153, 32769, 300000};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))
#define ITERS 5

enum { P_SEND, P_BSEND, P_SSEND, P_RSEND, P_COUNT };
static const char *const names[P_COUNT] = {"Send_init", "Bsend_init", "Ssend_init", "Rsend_init"};

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsigned char *buf = malloc(300000), *buf2 = malloc(300000);
    int bsize = 2 * (300000 + MPI_BSEND_OVERHEAD);
    void *battach = malloc((size_t)bsize);
    MPI_Buffer_attach(battach, bsize);
    MPI_Request req, reqs[4];
    MPI_Status st, sts[4];
    char what[80];

    /* inactive: Wait returns at once with an empty status and keeps the handle */
    {
        int x = 0, count = -1;
        MPI_Recv_init(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
        CHECK(req != MPI_REQUEST_NULL, "Recv_init gave MPI_REQUEST_NULL");
        memset(&st, 0x55, sizeof(st));
        MPI_Wait(&req, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(req != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE &&
                  st.MPI_TAG == MPI_ANY_TAG && count == 0,
              "Wait on an inactive request: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG,
              count);
        /* wildcard persistent receive, fed from oneself, three times */
        for (int i = 0; i < 3; i++) {
            int v = 100 + i;
            MPI_Start(&req);
            MPI_Send(&v, 1, MPI_INT, rank, 40 + i, MPI_COMM_WORLD);
            MPI_Wait(&req, &st);
            CHECK(x == v && st.MPI_SOURCE == rank && st.MPI_TAG == 40 + i,
                  "wildcard persistent receive %d: x %d source %d tag %d", i, x, st.MPI_SOURCE,
                  st.MPI_TAG);
        }
        MPI_Request_free(&req);
        CHECK(req == MPI_REQUEST_NULL, "Request_free left the handle");
    }
    /* MPI_PROC_NULL */
    {
        int x = 77, count = -1;
        MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[0]);
        MPI_Recv_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[1]);
        for (int i = 0; i < 2; i++) {
            MPI_Startall(2, reqs);
            MPI_Waitall(2, reqs, sts);
            MPI_Get_count(&sts[1], MPI_INT, &count);
            CHECK(sts[1].MPI_SOURCE == MPI_PROC_NULL && sts[1].MPI_TAG == MPI_ANY_TAG &&
                      count == 0 && x == 77,
                  "persistent receive from MPI_PROC_NULL: source %d tag %d count %d x %d",
                  sts[1].MPI_SOURCE, sts[1].MPI_TAG, count, x);
        }
        MPI_Request_free(&reqs[0]);
        MPI_Request_free(&reqs[1]);
    }

    if (nprocs >= 2 && rank < 2) {
        int peer = 1 - rank;
        for (int mode = 0; mode < P_COUNT; mode++) {
            for (int k = 0; k < NSIZES; k++) {
                int n = sizes[k], tag = mode * 10 + k;
                snprintf(what, sizeof(what), "%s of %d bytes", names[mode], n);
                if (rank == 0) {
                    switch (mode) {
                    case P_SEND:
                        MPI_Send_init(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                        break;
                    case P_BSEND:
                        MPI_Bsend_init(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                        break;
                    case P_SSEND:
                        MPI_Ssend_init(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                        break;
                    case P_RSEND:
                        MPI_Rsend_init(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                        break;
                    }
                    for (int it = 0; it < ITERS; it++) {
                        fill(buf, (size_t)n, tag * ITERS + it); /* new data each time */
                        /* the receiver's request is started before it says go */
                        MPI_Recv(NULL, 0, MPI_BYTE, peer, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        MPI_Start(&req);
                        if (it % 2) {
                            int flag = 0;
                            while (!flag)
                                MPI_Test(&req, &flag, &st);
                        } else {
                            MPI_Wait(&req, &st);
                        }
                        CHECK(req != MPI_REQUEST_NULL, "%s: completion freed the request", what);
                    }
                    MPI_Request_free(&req);
                } else {
                    MPI_Recv_init(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                    for (int it = 0; it < ITERS; it++) {
                        memset(buf, 0, (size_t)n);
                        MPI_Start(&req);
                        MPI_Send(NULL, 0, MPI_BYTE, peer, 999, MPI_COMM_WORLD);
                        MPI_Wait(&req, &st);
                        check_status(&st, peer, tag, (size_t)n, what);
                        check_data(buf, (size_t)n, tag * ITERS + it, what);
                    }
                    MPI_Request_free(&req);
                }
            }
        }
        /* Startall of sends and receives both ways, Waitany/Waitall */
        int n = 40000;
        MPI_Send_init(buf, n, MPI_BYTE, peer, 60, MPI_COMM_WORLD, &reqs[0]);
        MPI_Recv_init(buf2, n, MPI_BYTE, peer, 60, MPI_COMM_WORLD, &reqs[1]);
        MPI_Send_init(buf, 10, MPI_BYTE, peer, 61, MPI_COMM_WORLD, &reqs[2]);
        MPI_Recv_init(buf2 + n, 10, MPI_BYTE, peer, 61, MPI_COMM_WORLD, &reqs[3]);
        for (int it = 0; it < ITERS; it++) {
            fill(buf, (size_t)n, rank * 100 + it);
            memset(buf2, 0, (size_t)n + 10);
            MPI_Startall(4, reqs);
            if (it % 2) {
                for (int j = 0; j < 4; j++) {
                    int idx = -1;
                    MPI_Waitany(4, reqs, &idx, &st);
                    CHECK(idx >= 0 && idx < 4, "Waitany on persistent requests: index %d", idx);
                    if (idx == 1)
                        check_status(&st, peer, 60, (size_t)n, "persistent Waitany");
                }
                int idx = -1;
                MPI_Waitany(4, reqs, &idx, &st);
                CHECK(idx == MPI_UNDEFINED, "Waitany on inactive requests: index %d", idx);
            } else {
                MPI_Waitall(4, reqs, sts);
                check_status(&sts[1], peer, 60, (size_t)n, "persistent Waitall");
                check_status(&sts[3], peer, 61, 10, "persistent Waitall");
            }
            check_data(buf2, (size_t)n, peer * 100 + it, "Startall exchange");
            check_data(buf2 + n, 10, peer * 100 + it, "Startall exchange (small)");
        }
        for (int j = 0; j < 4; j++)
            MPI_Request_free(&reqs[j]);
    }
    void *a;
    MPI_Buffer_detach(&a, &bsize);
    free(battach);
    free(buf);
    free(buf2);
    return finish();
}
