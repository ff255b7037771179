/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Truncation with MPI_ERRORS_RETURN: a message longer than the receive buffer
 * gives MPI_ERR_TRUNCATE (class; the message names the call) from MPI_Recv,
 * MPI_Wait, MPI_Mrecv and MPI_Sendrecv, and MPI_ERR_IN_STATUS from MPI_Waitall
 * with MPI_ERROR = MPI_ERR_TRUNCATE in that status only. For eager, multi-cell and
 * rendezvous sizes, with the receive posted before and after the message arrived:
 * the status names the sender and tag, nothing past the buffer is written, the
 * sender sees success, and the next message on the same path arrives intact.
 * What fits is the start of the message: the standard leaves the buffer's contents
 * open on overflow, Tandem documents this (src/p2p/recv.c) and the test holds it
 * to it, since a wrong prefix means a wrong offset somewhere in a protocol.
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

/* message size, receive buffer size */
static const int cases[][2] = {{1, 0},
                               {100, 50},
                               {300, 217},
                               {8153, 8152},
                               {20000, 10000},
                               {32768, 32767},
                               {32769, 100},
                               {40000, 32769},
                               {100000, 50000},
                               {1 << 20, 8192},
                               {1 << 20, (1 << 20) - 1}};
#define NCASES (int)(sizeof(cases) / sizeof(cases[0]))
#define GUARD 64

static void check_trunc(int err, const char *call, const char *what) {
    int cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    if (err != MPI_SUCCESS) {
        MPI_Error_class(err, &cls);
        MPI_Error_string(err, msg, &len);
    }
    CHECK(cls == MPI_ERR_TRUNCATE, "%s: %s returned class %d, want MPI_ERR_TRUNCATE (%s)", what,
          call, cls, msg);
    CHECK(err == MPI_SUCCESS || strstr(msg, call), "%s: the message does not name %s: %s", what,
          call, msg);
}

/* the prefix that fits, untouched guard bytes after it */
static void check_prefix(const unsigned char *b, int cap, int seed, const char *what) {
    check_data(b, (size_t)cap, seed, what);
    for (int i = 0; i < GUARD; i++) {
        if (b[cap + i] != 0xee) {
            CHECK(0, "%s: byte %d past the %d-byte buffer was written", what, i, cap);
            break;
        }
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char *sbuf = malloc(1 << 20), *rbuf = malloc((1 << 20) + GUARD);
    MPI_Status st, sts[3];
    MPI_Request req, reqs[3];
    char what[96];
    int err = MPI_SUCCESS;
    if (nprocs < 2 || rank > 1)
        goto out;
    int peer = 1 - rank;

    for (int k = 0; k < NCASES; k++) {
        int n = cases[k][0], cap = cases[k][1];
        for (int variant = 0; variant < 5; variant++) {
            static const char *const vnames[] = {"Recv, posted first", "Recv, unexpected",
                                                 "Irecv+Wait", "Waitall", "Mrecv"};
            int tag = k * 10 + variant, seed = k * 10 + variant;
            snprintf(what, sizeof(what), "%d bytes into %d (%s)", n, cap, vnames[variant]);
            if (rank == 0) {
                fill(sbuf, (size_t)n, seed);
                if (variant == 0 || variant == 2 || variant == 3)
                    MPI_Recv(NULL, 0, MPI_BYTE, peer, 9999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                err = MPI_Send(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
                CHECK(err == MPI_SUCCESS, "%s: the sender got error %d", what, err);
                /* the next message on the path */
                fill(sbuf, 1000, seed + 1);
                MPI_Send(sbuf, 1000, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
                continue;
            }
            memset(rbuf, 0xee, (size_t)cap + GUARD);
            switch (variant) {
            case 0:
            case 2:
                MPI_Irecv(rbuf, cap, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
                MPI_Send(NULL, 0, MPI_BYTE, peer, 9999, MPI_COMM_WORLD);
                if (variant == 0) {
                    /* a blocking receive cannot be posted before the go; wait with Wait */
                    st.MPI_ERROR = 4242;
                    err = MPI_Wait(&req, &st);
                    check_trunc(err, "MPI_Wait", what);
                    CHECK(req == MPI_REQUEST_NULL, "%s: Wait left the request", what);
                } else {
                    int flag = 0;
                    while (!flag) {
                        err = MPI_Test(&req, &flag, &st);
                        if (err != MPI_SUCCESS)
                            break;
                    }
                    check_trunc(err, "MPI_Test", what);
                }
                break;
            case 1:
                MPI_Probe(peer, tag, MPI_COMM_WORLD, &st);
                st.MPI_ERROR = 4242;
                err = MPI_Recv(rbuf, cap, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
                check_trunc(err, "MPI_Recv", what);
                break;
            case 3:
                MPI_Irecv(rbuf + cap + GUARD, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                          &reqs[0]);
                MPI_Irecv(rbuf, cap, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &reqs[1]);
                reqs[2] = MPI_REQUEST_NULL;
                MPI_Send(NULL, 0, MPI_BYTE, peer, 9999, MPI_COMM_WORLD);
                err = MPI_Waitall(3, reqs, sts);
                CHECK(err == MPI_ERR_IN_STATUS, "%s: Waitall returned %d, want MPI_ERR_IN_STATUS",
                      what, err);
                {
                    int cls = -1;
                    MPI_Error_class(sts[1].MPI_ERROR, &cls);
                    CHECK(cls == MPI_ERR_TRUNCATE, "%s: status MPI_ERROR class %d", what, cls);
                    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[2].MPI_ERROR == MPI_SUCCESS,
                          "%s: the other statuses have MPI_ERROR %d and %d", what, sts[0].MPI_ERROR,
                          sts[2].MPI_ERROR);
                }
                st = sts[1];
                break;
            case 4: {
                MPI_Message msg;
                MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &msg, &st);
                err = MPI_Mrecv(rbuf, cap, MPI_BYTE, &msg, &st);
                check_trunc(err, "MPI_Mrecv", what);
                CHECK(msg == MPI_MESSAGE_NULL, "%s: Mrecv left the message handle", what);
                break;
            }
            }
            CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag, "%s: status source %d tag %d", what,
                  st.MPI_SOURCE, st.MPI_TAG);
            if (variant != 3)
                CHECK(st.MPI_ERROR == 4242 || variant == 2 || variant == 4,
                      "%s: a single-status call set MPI_ERROR to %d", what, st.MPI_ERROR);
            check_prefix(rbuf, cap, seed, what);
            /* the path is still in step */
            memset(rbuf, 0, 1000);
            err = MPI_Recv(rbuf, 1000, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
            CHECK(err == MPI_SUCCESS, "%s: the next message failed (%d)", what, err);
            check_status(&st, peer, tag, 1000, what);
            check_data(rbuf, 1000, seed + 1, what);
        }
    }
    /* Sendrecv and a message to oneself */
    {
        int x[4] = {1, 2, 3, 4}, y[3] = {0, 0, 0};
        err = MPI_Sendrecv(x, 4, MPI_INT, peer, 1, y, 2, MPI_INT, peer, 1, MPI_COMM_WORLD, &st);
        check_trunc(err, "MPI_Sendrecv", "Sendrecv of 4 ints into 2");
        CHECK(y[0] == 1 && y[1] == 2 && y[2] == 0, "Sendrecv truncated: %d %d %d", y[0], y[1],
              y[2]);
        memset(rbuf, 0xee, 100 + GUARD);
        fill(sbuf, 70000, 3);
        MPI_Isend(sbuf, 70000, MPI_BYTE, rank, 2, MPI_COMM_WORLD, &req);
        err = MPI_Recv(rbuf, 100, MPI_BYTE, rank, 2, MPI_COMM_WORLD, &st);
        check_trunc(err, "MPI_Recv", "70000 bytes to self into 100");
        check_prefix(rbuf, 100, 3, "70000 bytes to self into 100");
        err = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(err == MPI_SUCCESS, "the truncated self-send's Wait: %d", err);
    }
out:
    free(sbuf);
    free(rbuf);
    return finish();
}
