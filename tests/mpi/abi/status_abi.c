/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ABI (built with MPICH's mpi.h, run on Tandem): the MPI_Status layout. Fields
 * MPI_SOURCE, MPI_TAG, MPI_ERROR sit where MPICH's header puts them, the count is
 * count_lo plus the high bits of count_hi_and_cancelled above the cancelled bit,
 * MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are accepted, and successful
 * single-status calls leave MPI_ERROR alone.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
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

_Static_assert(sizeof(MPI_Status) == 5 * sizeof(int), "MPICH status is five ints");
_Static_assert(offsetof(MPI_Status, MPI_SOURCE) == 2 * sizeof(int), "MPI_SOURCE at 8");
_Static_assert(offsetof(MPI_Status, MPI_TAG) == 3 * sizeof(int), "MPI_TAG at 12");
_Static_assert(offsetof(MPI_Status, MPI_ERROR) == 4 * sizeof(int), "MPI_ERROR at 16");

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int peer = (rank + 1) % nprocs, from = (rank + nprocs - 1) % nprocs;
    int sbuf[100], rbuf[100], count;
    MPI_Status st;
    MPI_Request reqs[2];

    for (int i = 0; i < 100; i++)
        sbuf[i] = rank * 1000 + i;
    memset(&st, 0x5a, sizeof(st));
    st.MPI_ERROR = 4242;
    MPI_Sendrecv(sbuf, 37, MPI_INT, peer, 12, rbuf, 100, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD,
                 &st);
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 12, "status fields: source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
    CHECK(st.MPI_ERROR == 4242, "MPI_ERROR changed by a successful call: %d", st.MPI_ERROR);
    CHECK(st.count_lo == 37 * (int)sizeof(int) && st.count_hi_and_cancelled == 0,
          "count fields: lo %d hi_and_cancelled %d", st.count_lo, st.count_hi_and_cancelled);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 37 && rbuf[36] == from * 1000 + 36, "count %d, last %d", count, rbuf[36]);

    /* the count encoding */
    memset(&st, 0, sizeof(st));
    MPI_Status_set_elements_x(&st, MPI_BYTE, ((MPI_Count)5 << 32) + 3);
    CHECK(st.count_lo == 3 && st.count_hi_and_cancelled == 5 << 1,
          "count of 5*2^32+3 bytes: lo %d hi_and_cancelled %d", st.count_lo,
          st.count_hi_and_cancelled);
    MPI_Status_set_cancelled(&st, 1);
    CHECK(st.count_hi_and_cancelled == ((5 << 1) | 1), "cancelled bit: hi_and_cancelled %d",
          st.count_hi_and_cancelled);
    /* a status written by hand reads back */
    st.count_lo = 12;
    st.count_hi_and_cancelled = 0;
    MPI_Get_count(&st, MPI_INT, &count);
    int c = 1;
    MPI_Test_cancelled(&st, &c);
    CHECK(count == 3 && !c, "hand-made status: count %d cancelled %d", count, c);

    /* the ignore values */
    MPI_Irecv(rbuf, 100, MPI_INT, from, 13, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(sbuf, 5, MPI_INT, peer, 13, MPI_COMM_WORLD, &reqs[1]);
    int err = MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    CHECK(err == MPI_SUCCESS && reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL,
          "Waitall(MPI_STATUSES_IGNORE): %d", err);
    err = MPI_Sendrecv(sbuf, 1, MPI_INT, peer, 14, rbuf, 1, MPI_INT, from, 14, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE);
    CHECK(err == MPI_SUCCESS && rbuf[0] == from * 1000, "Sendrecv(MPI_STATUS_IGNORE): %d", err);
    /* MPI_PROC_NULL status */
    MPI_Recv(rbuf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && st.count_lo == 0,
          "MPI_PROC_NULL status: source %d tag %d count_lo %d", st.MPI_SOURCE, st.MPI_TAG,
          st.count_lo);

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
