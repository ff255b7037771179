/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matched probes: MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv. A matched
 * message is invisible to later probes and receives, and a second message of the
 * same envelope is found behind it; MPI_Improbe without a message leaves flag 0;
 * the message handle becomes MPI_MESSAGE_NULL once received; MPI_PROC_NULL gives
 * MPI_MESSAGE_NO_PROC whose receive is empty; eager, multi-cell (possibly still
 * arriving) and rendezvous sizes; messages to oneself; MPI_ANY_SOURCE with more
 * ranks.
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

static const int sizes[] = {0, 1, 8153, 30000, 32769, 1 << 20};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))
#define PER_RANK 10

static void check_procnull(const MPI_Status *st, const char *what) {
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: source %d tag %d count %d", what, st->MPI_SOURCE, st->MPI_TAG, count);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsigned char *buf = malloc(1 << 20), *buf2 = malloc(1 << 20);
    MPI_Status st;
    MPI_Message msg, msg2;
    MPI_Request req;
    int flag, count;
    char what[64];

    /* MPI_PROC_NULL */
    MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) gave message %#x", (unsigned)msg);
    check_procnull(&st, "Mprobe(MPI_PROC_NULL)");
    memset(&st, 0x33, sizeof(st));
    MPI_Mrecv(buf, 10, MPI_BYTE, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) left message %#x", (unsigned)msg);
    check_procnull(&st, "Mrecv(MPI_MESSAGE_NO_PROC)");
    flag = 0;
    MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL): flag %d message %#x", flag,
          (unsigned)msg);
    check_procnull(&st, "Improbe(MPI_PROC_NULL)");
    MPI_Imrecv(buf, 10, MPI_BYTE, &msg, &req);
    CHECK(msg == MPI_MESSAGE_NULL, "Imrecv(MPI_MESSAGE_NO_PROC) left message %#x", (unsigned)msg);
    memset(&st, 0x33, sizeof(st));
    MPI_Wait(&req, &st);
    check_procnull(&st, "Imrecv(MPI_MESSAGE_NO_PROC)");

    /* nothing sent with this tag */
    flag = 1;
    msg = (MPI_Message)12345;
    MPI_Improbe(MPI_ANY_SOURCE, 7777, MPI_COMM_WORLD, &flag, &msg, &st);
    CHECK(!flag, "Improbe found a message nobody sent");

    if (nprocs >= 2 && rank < 2) {
        int peer = 1 - rank;
        for (int k = 0; k < NSIZES; k++) {
            int n = sizes[k];
            snprintf(what, sizeof(what), "matched probe of %d bytes", n);
            if (rank == 0) {
                /* two messages of the same envelope, then a go-ahead */
                MPI_Request r2[2];
                fill(buf, (size_t)n, k);
                fill(buf2, (size_t)n, k + 100);
                MPI_Isend(buf, n, MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD, &r2[0]);
                MPI_Isend(buf2, n, MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD, &r2[1]);
                MPI_Waitall(2, r2, MPI_STATUSES_IGNORE);
            } else {
                if (k % 2 == 0) {
                    MPI_Mprobe(peer, 10 + k, MPI_COMM_WORLD, &msg, &st);
                } else {
                    flag = 0;
                    while (!flag)
                        MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
                }
                check_status(&st, peer, 10 + k, (size_t)n, what);
                CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "%s: message %#x",
                      what, (unsigned)msg);
                /* the second one is what probes see now */
                MPI_Mprobe(peer, 10 + k, MPI_COMM_WORLD, &msg2, &st);
                check_status(&st, peer, 10 + k, (size_t)n, what);
                flag = 1;
                MPI_Iprobe(peer, 10 + k, MPI_COMM_WORLD, &flag, &st);
                CHECK(!flag, "%s: a third message is visible", what);
                /* receive them in reverse order: each handle holds its own message */
                memset(buf2, 0, (size_t)n);
                MPI_Imrecv(buf2, n, MPI_BYTE, &msg2, &req);
                CHECK(msg2 == MPI_MESSAGE_NULL, "%s: Imrecv left the handle", what);
                MPI_Wait(&req, &st);
                check_status(&st, peer, 10 + k, (size_t)n, what);
                check_data(buf2, (size_t)n, k + 100, what);
                memset(buf, 0, (size_t)n);
                MPI_Mrecv(buf, n, MPI_BYTE, &msg, &st);
                CHECK(msg == MPI_MESSAGE_NULL, "%s: Mrecv left the handle", what);
                check_status(&st, peer, 10 + k, (size_t)n, what);
                check_data(buf, (size_t)n, k, what);
            }
        }
        /* a matched message cannot be taken by a receive posted afterwards */
        if (rank == 0) {
            int v = 1;
            MPI_Send(&v, 1, MPI_INT, peer, 50, MPI_COMM_WORLD);
            v = 2;
            MPI_Send(&v, 1, MPI_INT, peer, 50, MPI_COMM_WORLD);
        } else {
            int v1 = 0, v2 = 0;
            MPI_Mprobe(peer, 50, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
            MPI_Recv(&v2, 1, MPI_INT, peer, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Mrecv(&v1, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
            CHECK(v1 == 1 && v2 == 2, "Mprobe then Recv: Mrecv got %d, Recv got %d", v1, v2);
        }
    }

    /* to oneself: small and large */
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        snprintf(what, sizeof(what), "matched probe of %d bytes to self", n);
        fill(buf, (size_t)n, k + 200);
        MPI_Isend(buf, n, MPI_BYTE, rank, 60, MPI_COMM_WORLD, &req);
        MPI_Mprobe(rank, 60, MPI_COMM_WORLD, &msg, &st);
        check_status(&st, rank, 60, (size_t)n, what);
        memset(buf2, 0, (size_t)n);
        MPI_Mrecv(buf2, n, MPI_BYTE, &msg, &st);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        check_data(buf2, (size_t)n, k + 200, what);
    }

    /* rank 0 serves the others with ANY_SOURCE matched probes */
    if (rank == 0) {
        int *next = calloc((size_t)nprocs, sizeof(int));
        for (int i = 0; i < (nprocs - 1) * PER_RANK; i++) {
            int v[2] = {-1, -1};
            MPI_Mprobe(MPI_ANY_SOURCE, 70, MPI_COMM_WORLD, &msg, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == 2, "ANY_SOURCE Mprobe: count %d", count);
            MPI_Mrecv(v, 2, MPI_INT, &msg, &st);
            int src = st.MPI_SOURCE;
            CHECK(src > 0 && src < nprocs && v[0] == src && v[1] == next[src],
                  "ANY_SOURCE Mrecv: source %d got (%d,%d)", src, v[0], v[1]);
            if (src > 0 && src < nprocs)
                next[src]++;
        }
        free(next);
    } else {
        for (int i = 0; i < PER_RANK; i++) {
            int v[2] = {rank, i};
            MPI_Send(v, 2, MPI_INT, 0, 70, MPI_COMM_WORLD);
        }
    }
    free(buf);
    free(buf2);
    return finish();
}
