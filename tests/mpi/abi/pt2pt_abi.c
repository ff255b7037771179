/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ABI (built with MPICH's mpi.h, run on Tandem): point-to-point through MPICH's
 * handles and constants. A ring exchange of sizes from 0 to 4 MB, persistent
 * requests over iterations (Send_init/Recv_init/Startall/Waitall), a buffered
 * send sized with MPICH's MPI_BSEND_OVERHEAD, Iprobe/Probe, MPI_MESSAGE_NO_PROC
 * from a matched probe of MPI_PROC_NULL, MPI_ANY_SOURCE/MPI_ANY_TAG, and Testany
 * over MPI_REQUEST_NULL entries giving MPI_UNDEFINED.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 20) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static unsigned char pat(size_t i, int seed) {
    return (unsigned char)((i ^ (i >> 9)) * 29u + (unsigned)seed * 7u);
}

static const int sizes[] = {0, 1, 64, 8000, 8200, 32768, 32769, 250000, 4 << 20};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int peer = (rank + 1) % nprocs, from = (rank + nprocs - 1) % nprocs;
    unsigned char *s = malloc(4 << 20), *r = malloc(4 << 20);
    MPI_Status st;
    MPI_Request reqs[2];
    int count, flag, idx;

    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        for (int i = 0; i < n; i++)
            s[i] = pat((size_t)i, rank * 10 + k);
        memset(r, 0, (size_t)n);
        MPI_Irecv(r, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(s, n, MPI_BYTE, peer, k, MPI_COMM_WORLD, &reqs[1]);
        MPI_Status sts[2];
        MPI_Waitall(2, reqs, sts);
        MPI_Get_count(&sts[0], MPI_BYTE, &count);
        CHECK(count == n && sts[0].MPI_SOURCE == from && sts[0].MPI_TAG == k,
              "%d bytes: count %d source %d tag %d", n, count, sts[0].MPI_SOURCE, sts[0].MPI_TAG);
        for (int i = 0; i < n; i++) {
            if (r[i] != pat((size_t)i, from * 10 + k)) {
                CHECK(0, "%d bytes: differ at %d", n, i);
                break;
            }
        }
    }

    /* persistent */
    int sv = 0, rv = -1;
    MPI_Send_init(&sv, 1, MPI_INT, peer, 50, MPI_COMM_WORLD, &reqs[0]);
    MPI_Recv_init(&rv, 1, MPI_INT, from, 50, MPI_COMM_WORLD, &reqs[1]);
    for (int it = 0; it < 10; it++) {
        sv = rank * 100 + it;
        MPI_Startall(2, reqs);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        CHECK(rv == from * 100 + it, "persistent iteration %d: got %d", it, rv);
        CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
              "Waitall freed a persistent request");
    }
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);

    /* buffered, sized with MPICH's overhead constant */
    {
        int bsize = 3 * (1000 + MPI_BSEND_OVERHEAD);
        void *b = malloc((size_t)bsize), *a;
        MPI_Buffer_attach(b, bsize);
        for (int i = 0; i < 3; i++) {
            memset(s, i + 1, 1000);
            int err = MPI_Bsend(s, 1000, MPI_BYTE, peer, 60 + i, MPI_COMM_WORLD);
            CHECK(err == MPI_SUCCESS, "Bsend %d: %d", i, err);
        }
        for (int i = 0; i < 3; i++) {
            MPI_Recv(r, 1000, MPI_BYTE, from, 60 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(r[0] == i + 1 && r[999] == i + 1, "buffered message %d: %d", i, r[0]);
        }
        MPI_Buffer_detach(&a, &bsize);
        CHECK(a == b, "Buffer_detach gave another address");
        free(b);
    }

    /* probes and matched probes */
    sv = 7;
    MPI_Isend(&sv, 1, MPI_INT, peer, 70, MPI_COMM_WORLD, &reqs[0]);
    MPI_Probe(from, 70, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 1 && st.MPI_SOURCE == from, "Probe: count %d source %d", count, st.MPI_SOURCE);
    flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, 70, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(flag, "Iprobe after Probe: 0");
    MPI_Message msg;
    MPI_Mprobe(from, 70, MPI_COMM_WORLD, &msg, &st);
    MPI_Mrecv(&rv, 1, MPI_INT, &msg, &st);
    CHECK(rv == 7 && msg == MPI_MESSAGE_NULL, "Mrecv: %d", rv);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL,
          "Mprobe(MPI_PROC_NULL): message %#x source %d", (unsigned)msg, st.MPI_SOURCE);
    MPI_Mrecv(&rv, 1, MPI_INT, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) left %#x", (unsigned)msg);

    /* MPI_UNDEFINED from Testany over null requests */
    reqs[0] = reqs[1] = MPI_REQUEST_NULL;
    flag = 0;
    MPI_Testany(2, reqs, &idx, &flag, &st);
    CHECK(flag && idx == MPI_UNDEFINED, "Testany over nulls: flag %d index %d", flag, idx);

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
    free(s);
    free(r);
    MPI_Finalize();
    return errs ? 1 : 0;
}
