/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Probe and MPI_Iprobe: the status of a message not yet received (source,
 * tag, size) for eager and rendezvous sizes; probing does not consume; a probe for
 * one tag skips earlier messages of other tags while MPI_ANY_TAG finds the first;
 * MPI_PROC_NULL; MPI_STATUS_IGNORE; messages to oneself; with more ranks, rank 0
 * serves every other rank by MPI_ANY_SOURCE probes and receives from the source
 * the status names.
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

/* no collectives needed: gather to rank 0 and release, on a tag of its own */
static void barrier(void) {
    if (rank == 0) {
        for (int i = 1; i < nprocs; i++)
            MPI_Recv(NULL, 0, MPI_BYTE, i, 32765, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 1; i < nprocs; i++)
            MPI_Send(NULL, 0, MPI_BYTE, i, 32765, MPI_COMM_WORLD);
    } else {
        MPI_Send(NULL, 0, MPI_BYTE, 0, 32765, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 32765, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static const int sizes[] = {0, 1, 8152, 8153, 32768, 32769, 200000};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))
#define PER_RANK 20

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsigned char *buf = malloc(200000);
    MPI_Status st;
    int flag, count;
    char what[64];

    /* MPI_PROC_NULL: found at once, empty */
    flag = 0;
    MPI_Iprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
          "Iprobe(MPI_PROC_NULL): flag %d source %d tag %d count %d", flag, st.MPI_SOURCE,
          st.MPI_TAG, count);
    MPI_Probe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
          "Probe(MPI_PROC_NULL): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);

    /* nothing is sent with this tag */
    flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, 7777, MPI_COMM_WORLD, &flag, &st);
    CHECK(!flag, "Iprobe found a message nobody sent (source %d tag %d)", st.MPI_SOURCE,
          st.MPI_TAG);
    barrier();

    if (nprocs >= 2 && rank < 2) {
        int peer = 1 - rank;
        for (int k = 0; k < NSIZES; k++) {
            int n = sizes[k];
            snprintf(what, sizeof(what), "probe of %d bytes", n);
            if (rank == 0) {
                fill(buf, (size_t)n, k);
                MPI_Send(buf, n, MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD);
            } else {
                st.MPI_ERROR = 4242;
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                check_status(&st, peer, 10 + k, (size_t)n, what);
                CHECK(st.MPI_ERROR == 4242, "%s: MPI_Probe modified MPI_ERROR", what);
                /* still there */
                flag = 0;
                MPI_Iprobe(peer, 10 + k, MPI_COMM_WORLD, &flag, &st);
                CHECK(flag, "%s: a second probe did not find it", what);
                check_status(&st, peer, 10 + k, (size_t)n, what);
                MPI_Probe(peer, 10 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Get_count(&st, MPI_BYTE, &count);
                memset(buf, 0, (size_t)n);
                MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
                check_status(&st, peer, 10 + k, (size_t)n, what);
                check_data(buf, (size_t)n, k, what);
            }
        }
        /* tag selection: A (tag 1, 100 bytes) then B (tag 2, 50000 bytes) */
        if (rank == 0) {
            fill(buf, 100, 1);
            MPI_Send(buf, 100, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            fill(buf, 50000, 2);
            MPI_Request req;
            MPI_Isend(buf, 50000, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Probe(peer, 2, MPI_COMM_WORLD, &st);
            check_status(&st, peer, 2, 50000, "probe of tag 2 behind tag 1");
            MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            check_status(&st, peer, 1, 100, "ANY_TAG probe finds the first message");
            MPI_Recv(buf, 50000, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st);
            check_status(&st, peer, 2, 50000, "receive of tag 2 first");
            check_data(buf, 50000, 2, "receive of tag 2 first");
            MPI_Iprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            CHECK(flag, "tag 1 message gone");
            check_status(&st, peer, 1, 100, "tag 1 after tag 2 was received");
            MPI_Recv(buf, 100, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
            check_data(buf, 100, 1, "tag 1");
        }
    }

    /* to oneself */
    {
        MPI_Request req;
        fill(buf, 100000, 99);
        MPI_Isend(buf, 100000, MPI_BYTE, rank, 99, MPI_COMM_WORLD, &req);
        MPI_Probe(rank, 99, MPI_COMM_WORLD, &st);
        check_status(&st, rank, 99, 100000, "probe of a message to self");
        unsigned char *rbuf = malloc(100000);
        MPI_Recv(rbuf, 100000, MPI_BYTE, rank, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        check_data(rbuf, 100000, 99, "message to self");
        free(rbuf);
    }

    /* rank 0 serves everyone by ANY_SOURCE probes; each message says who sent it */
    if (rank == 0) {
        int *got = calloc((size_t)nprocs, sizeof(int));
        for (int i = 0; i < (nprocs - 1) * PER_RANK; i++) {
            MPI_Probe(MPI_ANY_SOURCE, 500, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            int src = st.MPI_SOURCE;
            CHECK(src > 0 && src < nprocs, "probe gave source %d", src);
            if (src <= 0 || src >= nprocs)
                break;
            int msg[2 + 3000];
            CHECK(count == 2 + (got[src] % 4) * 1000, "from %d: %d ints, want %d", src, count,
                  2 + (got[src] % 4) * 1000);
            MPI_Recv(msg, count, MPI_INT, src, 500, MPI_COMM_WORLD, &st);
            CHECK(msg[0] == src && msg[1] == got[src], "from %d: message (%d,%d), want (%d,%d)",
                  src, msg[0], msg[1], src, got[src]);
            got[src]++;
        }
        free(got);
    } else {
        int msg[2 + 3000];
        for (int i = 0; i < PER_RANK; i++) {
            msg[0] = rank;
            msg[1] = i;
            MPI_Send(msg, 2 + (i % 4) * 1000, MPI_INT, 0, 500, MPI_COMM_WORLD);
        }
    }
    if (rank > 0) {
        /* everything sent to ranks other than 0 has been received */
        flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        CHECK(!flag, "Iprobe found a message nobody sent (source %d tag %d)", st.MPI_SOURCE,
              st.MPI_TAG);
    }
    free(buf);
    return finish();
}
