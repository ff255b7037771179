/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every send mode, blocking and nonblocking (Send, Ssend, Rsend, Bsend, Isend,
 * Issend, Irsend, Ibsend), for eager (around the one-line limit of 40 bytes
 * too), multi-cell and rendezvous sizes, between
 * pairs of ranks. The receive is posted first (required for the ready modes) and
 * then, for the other modes, after the message arrived. Checks data and status.
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

enum { M_SEND, M_SSEND, M_RSEND, M_BSEND, M_ISEND, M_ISSEND, M_IRSEND, M_IBSEND, M_COUNT };
static const char *const mode_names[M_COUNT] = {"MPI_Send",   "MPI_Ssend", "MPI_Rsend",
                                                "MPI_Bsend",  "MPI_Isend", "MPI_Issend",
                                                "MPI_Irsend", "MPI_Ibsend"};

static void do_send(int mode, const void *buf, int n, int dest, int tag) {
    MPI_Request req = MPI_REQUEST_NULL;
    int err = MPI_SUCCESS;
    switch (mode) {
    case M_SEND:
        err = MPI_Send(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
        break;
    case M_SSEND:
        err = MPI_Ssend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
        break;
    case M_RSEND:
        err = MPI_Rsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
        break;
    case M_BSEND:
        err = MPI_Bsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
        break;
    case M_ISEND:
        err = MPI_Isend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req);
        break;
    case M_ISSEND:
        err = MPI_Issend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req);
        break;
    case M_IRSEND:
        err = MPI_Irsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req);
        break;
    case M_IBSEND:
        err = MPI_Ibsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req);
        break;
    }
    CHECK(err == MPI_SUCCESS, "%s of %d bytes returned %d", mode_names[mode], n, err);
    if (mode >= M_ISEND) {
        CHECK(req != MPI_REQUEST_NULL, "%s gave MPI_REQUEST_NULL", mode_names[mode]);
        MPI_Status st;
        st.MPI_ERROR = 4242;
        err = MPI_Wait(&req, &st);
        CHECK(err == MPI_SUCCESS && req == MPI_REQUEST_NULL, "%s: MPI_Wait returned %d",
              mode_names[mode], err);
        int cancelled = 1;
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(!cancelled, "%s: status says cancelled", mode_names[mode]);
        CHECK(st.MPI_ERROR == 4242, "%s: MPI_Wait modified MPI_ERROR (%d)", mode_names[mode],
              st.MPI_ERROR);
    }
}

static const int sizes[] = {0, 1, 24, 25, 40, 41, 100, 8152, 8153, 20000, 32768, 32769, 300000};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))
#define MAXSIZE 300000

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int peer = rank ^ 1;
    if (peer >= nprocs)
        return finish();
    int sender = rank % 2 == 0;
    unsigned char *buf = malloc(MAXSIZE);
    /* room for two messages: a buffered rendezvous may still be in flight when the
     * next buffered send starts */
    int bsize = 2 * (MAXSIZE + MPI_BSEND_OVERHEAD);
    void *battach = malloc((size_t)bsize);
    MPI_Buffer_attach(battach, bsize);
    char what[80];

    for (int mode = 0; mode < M_COUNT; mode++) {
        int ready = mode == M_RSEND || mode == M_IRSEND;
        for (int k = 0; k < NSIZES; k++) {
            int n = sizes[k], tag = mode * 100 + k;
            /* receive posted first */
            snprintf(what, sizeof(what), "%s %d bytes, receive posted", mode_names[mode], n);
            if (sender) {
                MPI_Recv(NULL, 0, MPI_BYTE, peer, 9999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                fill(buf, (size_t)n, tag);
                do_send(mode, buf, n, peer, tag);
                /* buffered and completed sends: the buffer is the user's again */
                memset(buf, 0, (size_t)n);
            } else {
                MPI_Request req;
                MPI_Status st;
                memset(buf, 0, (size_t)n);
                MPI_Irecv(buf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                MPI_Send(NULL, 0, MPI_BYTE, peer, 9999, MPI_COMM_WORLD);
                MPI_Wait(&req, &st);
                check_status(&st, peer, tag, (size_t)n, what);
                check_data(buf, (size_t)n, tag, what);
            }
            if (ready)
                continue;
            /* receive posted late: the message (or its envelope) waits */
            snprintf(what, sizeof(what), "%s %d bytes, unexpected", mode_names[mode], n);
            if (sender) {
                fill(buf, (size_t)n, tag + 50);
                do_send(mode, buf, n, peer, tag + 50);
                memset(buf, 0, (size_t)n);
            } else {
                MPI_Status st;
                int flag = 0;
                while (!flag)
                    MPI_Iprobe(peer, tag + 50, MPI_COMM_WORLD, &flag, &st);
                memset(buf, 0, (size_t)n);
                MPI_Recv(buf, n, MPI_BYTE, peer, tag + 50, MPI_COMM_WORLD, &st);
                check_status(&st, peer, tag + 50, (size_t)n, what);
                check_data(buf, (size_t)n, tag + 50, what);
            }
        }
    }
    void *addr;
    int size;
    MPI_Buffer_detach(&addr, &size);
    CHECK(addr == battach && size == bsize, "detach gave %p/%d, want %p/%d", addr, size, battach,
          bsize);
    free(battach);
    free(buf);
    return finish();
}
