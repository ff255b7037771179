/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Cancel. A posted receive that nothing matched is cancelled: it completes,
 * MPI_Test_cancelled says so, and the message sent afterwards goes to the next
 * receive (ANY_SOURCE and persistent receives too). A send may or may not be
 * cancellable; the test only demands honesty: if MPI_Test_cancelled says the send
 * was cancelled the receiver must never get it, otherwise it must get it intact.
 * Cancelling a completed operation changes nothing.
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

static void cancel_recv(int src, int tag, const char *what) {
    int x = 0, flag = 0, c = 0;
    MPI_Request req;
    MPI_Status st;
    MPI_Irecv(&x, 1, MPI_INT, src, tag, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    CHECK(req != MPI_REQUEST_NULL, "%s: MPI_Cancel freed the request", what);
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 5.0)
        MPI_Test(&req, &flag, &st);
    CHECK(flag, "%s: a cancelled receive does not complete", what);
    if (!flag)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Test_cancelled(&st, &c);
    CHECK(c, "%s: MPI_Test_cancelled false for a receive nothing could match", what);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsigned char *buf = malloc(1 << 20);
    MPI_Status st;
    MPI_Request req;
    int flag, c;
    char what[80];

    /* receives nothing can match: from oneself, with a tag nobody uses */
    cancel_recv(rank, 1, "receive from self");
    cancel_recv(MPI_ANY_SOURCE, 1, "ANY_SOURCE receive");
    /* then the message sent to oneself goes to the next receive */
    {
        int x = 0, v = 17;
        MPI_Irecv(&x, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &c);
        CHECK(c, "cancelled receive from self: not cancelled");
        MPI_Send(&v, 1, MPI_INT, rank, 2, MPI_COMM_WORLD);
        CHECK(x == 0, "the cancelled receive's buffer was written (%d)", x);
        MPI_Recv(&x, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, &st);
        MPI_Test_cancelled(&st, &c);
        CHECK(x == 17 && !c, "message after a cancelled receive: got %d cancelled %d", x, c);
    }
    /* cancelling a completed receive changes nothing */
    {
        int x = 0, v = 23;
        MPI_Irecv(&x, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &req);
        MPI_Send(&v, 1, MPI_INT, rank, 3, MPI_COMM_WORLD);
        flag = 0;
        while (!flag)
            MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &c);
        CHECK(!c && x == 23 && st.MPI_TAG == 3, "cancel after completion: cancelled %d x %d", c, x);
    }
    /* persistent receive: cancel one activation, the next still works */
    {
        int x = 0, v = 31;
        MPI_Recv_init(&x, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, &req);
        MPI_Start(&req);
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &c);
        CHECK(c && req != MPI_REQUEST_NULL, "persistent receive: cancelled %d", c);
        MPI_Start(&req);
        MPI_Send(&v, 1, MPI_INT, rank, 4, MPI_COMM_WORLD);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &c);
        CHECK(!c && x == 31, "persistent receive after a cancel: cancelled %d x %d", c, x);
        MPI_Request_free(&req);
    }

    if (nprocs >= 2 && rank < 2) {
        int peer = 1 - rank;
        /* a receive from the peer is cancelled; the peer's message then goes to the next one */
        if (rank == 1) {
            cancel_recv(0, 5, "receive from the peer");
            MPI_Send(NULL, 0, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
            int x = 0;
            MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
            CHECK(x == 55, "message after a cancelled receive from the peer: %d", x);
        } else {
            int v = 55;
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
        }

        /* sends: rank 0 cancels, rank 1 checks the outcome is consistent */
        for (int k = 0; k < NSIZES; k++) {
            int n = sizes[k];
            snprintf(what, sizeof(what), "cancelled send of %d bytes", n);
            if (rank == 0) {
                fill(buf, (size_t)n, k);
                MPI_Isend(buf, n, MPI_BYTE, peer, 100 + k, MPI_COMM_WORLD, &req);
                MPI_Cancel(&req);
                /* tell the receiver to start looking, then learn the outcome */
                MPI_Send(NULL, 0, MPI_BYTE, peer, 200 + k, MPI_COMM_WORLD);
                MPI_Wait(&req, &st);
                c = -1;
                MPI_Test_cancelled(&st, &c);
                CHECK(c == 0 || c == 1, "%s: Test_cancelled gave %d", what, c);
                MPI_Send(&c, 1, MPI_INT, peer, 300 + k, MPI_COMM_WORLD);
            } else {
                MPI_Request rreq;
                int verdict = -1, got = 0;
                memset(buf, 0, (size_t)n);
                MPI_Recv(NULL, 0, MPI_BYTE, peer, 200 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Irecv(buf, n, MPI_BYTE, peer, 100 + k, MPI_COMM_WORLD, &rreq);
                /* progress both until the verdict is in */
                flag = 0;
                while (!flag) {
                    if (!got)
                        MPI_Test(&rreq, &got, &st);
                    MPI_Iprobe(peer, 300 + k, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                }
                MPI_Recv(&verdict, 1, MPI_INT, peer, 300 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (verdict == 1) {
                    /* cancelled: it must never arrive */
                    if (!got) {
                        MPI_Cancel(&rreq);
                        MPI_Wait(&rreq, &st);
                        MPI_Test_cancelled(&st, &c);
                        got = !c;
                    }
                    CHECK(!got,
                          "%s: the sender was told it was cancelled, but the receiver "
                          "got it",
                          what);
                } else {
                    if (!got)
                        MPI_Wait(&rreq, &st);
                    check_status(&st, peer, 100 + k, (size_t)n, what);
                    check_data(buf, (size_t)n, k, what);
                }
            }
        }
    }
    free(buf);
    return finish();
}
