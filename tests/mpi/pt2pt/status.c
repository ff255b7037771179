/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Statuses: MPI_Get_count, MPI_Get_elements and MPI_Get_elements_x on received
 * messages (partial items give MPI_UNDEFINED counts; a value+int pair type counts
 * two elements per item), MPI_Status_set_elements(_x) (including counts beyond
 * int), MPI_Status_set_cancelled and MPI_Test_cancelled (independent of the count),
 * and that successful single-status calls leave MPI_ERROR alone.
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

typedef struct {
    double v;
    int i;
} double_int_t;

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Status st;
    int count, c;
    MPI_Count xcount;

    /* 7 bytes received as bytes: not a whole number of ints */
    {
        char b[16] = "abcdefg";
        memset(&st, 0, sizeof(st));
        st.MPI_ERROR = 4242;
        MPI_Sendrecv(b, 7, MPI_BYTE, rank, 1, b + 8, 8, MPI_BYTE, rank, 1, MPI_COMM_WORLD, &st);
        CHECK(st.MPI_ERROR == 4242, "MPI_Sendrecv modified MPI_ERROR: %d", st.MPI_ERROR);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == 7, "Get_count(MPI_BYTE) %d, want 7", count);
        MPI_Get_count(&st, MPI_CHAR, &count);
        CHECK(count == 7, "Get_count(MPI_CHAR) %d, want 7", count);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == MPI_UNDEFINED, "Get_count(MPI_INT) of 7 bytes: %d, want MPI_UNDEFINED",
              count);
        MPI_Get_elements(&st, MPI_INT, &count);
        CHECK(count == MPI_UNDEFINED, "Get_elements(MPI_INT) of 7 bytes: %d", count);
        MPI_Get_elements_x(&st, MPI_BYTE, &xcount);
        CHECK(xcount == 7, "Get_elements_x(MPI_BYTE) %lld", (long long)xcount);
        MPI_Get_count(&st, MPI_SHORT, &count);
        CHECK(count == MPI_UNDEFINED, "Get_count(MPI_SHORT) of 7 bytes: %d", count);
        MPI_Test_cancelled(&st, &c);
        CHECK(!c, "received message reported cancelled");
    }
    /* ints and doubles */
    {
        double d[5] = {1, 2, 3, 4, 5}, r[5];
        MPI_Sendrecv(d, 5, MPI_DOUBLE, rank, 2, r, 5, MPI_DOUBLE, rank, 2, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        CHECK(count == 5, "Get_count(MPI_DOUBLE) %d", count);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == 10, "Get_count(MPI_INT) of 5 doubles: %d", count);
        MPI_Get_elements(&st, MPI_DOUBLE, &count);
        CHECK(count == 5, "Get_elements(MPI_DOUBLE) %d", count);
        CHECK(r[4] == 5.0, "doubles: %g", r[4]);
    }
    /* value+int pairs: two elements per item */
    {
        double_int_t s[3] = {{1.5, 1}, {2.5, 2}, {3.5, 3}}, r[3];
        memset(r, 0, sizeof(r));
        MPI_Sendrecv(s, 3, MPI_DOUBLE_INT, rank, 3, r, 3, MPI_DOUBLE_INT, rank, 3, MPI_COMM_WORLD,
                     &st);
        MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
        CHECK(count == 3, "Get_count(MPI_DOUBLE_INT) %d", count);
        MPI_Get_elements(&st, MPI_DOUBLE_INT, &count);
        CHECK(count == 6, "Get_elements(MPI_DOUBLE_INT) of 3 pairs: %d, want 6", count);
        MPI_Get_elements_x(&st, MPI_DOUBLE_INT, &xcount);
        CHECK(xcount == 6, "Get_elements_x(MPI_DOUBLE_INT) %lld", (long long)xcount);
        for (int i = 0; i < 3; i++)
            CHECK(r[i].v == s[i].v && r[i].i == s[i].i, "pair %d: (%g,%d)", i, r[i].v, r[i].i);
        /* 2 ints */
        int ii[4] = {1, 2, 3, 4}, ri[4];
        MPI_Sendrecv(ii, 2, MPI_2INT, rank, 4, ri, 2, MPI_2INT, rank, 4, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_2INT, &count);
        CHECK(count == 2 && ri[3] == 4, "Get_count(MPI_2INT) %d, last %d", count, ri[3]);
        MPI_Get_elements(&st, MPI_2INT, &count);
        CHECK(count == 4, "Get_elements(MPI_2INT) of 2 pairs: %d", count);
    }
    /* Status_set_elements / _x */
    {
        memset(&st, 0, sizeof(st));
        MPI_Status_set_elements(&st, MPI_INT, 5);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == 5, "set_elements(MPI_INT, 5): Get_count %d", count);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == 5 * (int)sizeof(int), "set_elements(MPI_INT, 5): bytes %d", count);
        MPI_Get_elements_x(&st, MPI_INT, &xcount);
        CHECK(xcount == 5, "set_elements(MPI_INT, 5): Get_elements_x %lld", (long long)xcount);
        MPI_Status_set_elements(&st, MPI_DOUBLE_INT, 3);
        MPI_Get_elements(&st, MPI_DOUBLE_INT, &count);
        CHECK(count == 3, "set_elements(MPI_DOUBLE_INT, 3): Get_elements %d", count);
        MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
        CHECK(count == MPI_UNDEFINED, "3 elements of MPI_DOUBLE_INT: Get_count %d", count);
        /* more than fits in an int */
        MPI_Count big = (MPI_Count)3 << 30; /* 3 Gi */
        MPI_Status_set_elements_x(&st, MPI_BYTE, big);
        MPI_Get_elements_x(&st, MPI_BYTE, &xcount);
        CHECK(xcount == big, "set_elements_x(3Gi bytes): Get_elements_x %lld", (long long)xcount);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == MPI_UNDEFINED, "3Gi bytes: Get_count %d, want MPI_UNDEFINED", count);
        MPI_Get_elements(&st, MPI_BYTE, &count);
        CHECK(count == MPI_UNDEFINED, "3Gi bytes: Get_elements %d, want MPI_UNDEFINED", count);
        MPI_Status_set_elements_x(&st, MPI_DOUBLE, (MPI_Count)1 << 32);
        MPI_Get_elements_x(&st, MPI_DOUBLE, &xcount);
        CHECK(xcount == (MPI_Count)1 << 32, "set_elements_x(4Gi doubles): %lld", (long long)xcount);
        MPI_Status_set_elements(&st, MPI_INT, 0);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == 0, "set_elements(0): Get_count %d", count);
    }
    /* the cancelled flag and the count do not disturb each other */
    {
        memset(&st, 0, sizeof(st));
        MPI_Status_set_elements_x(&st, MPI_BYTE, ((MPI_Count)5 << 32) + 3);
        MPI_Status_set_cancelled(&st, 1);
        MPI_Test_cancelled(&st, &c);
        CHECK(c == 1, "set_cancelled(1): Test_cancelled %d", c);
        MPI_Get_elements_x(&st, MPI_BYTE, &xcount);
        CHECK(xcount == ((MPI_Count)5 << 32) + 3, "set_cancelled changed the count: %lld",
              (long long)xcount);
        MPI_Status_set_elements(&st, MPI_BYTE, 9);
        MPI_Test_cancelled(&st, &c);
        CHECK(c == 1, "set_elements cleared the cancelled flag");
        MPI_Status_set_cancelled(&st, 0);
        MPI_Test_cancelled(&st, &c);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(c == 0 && count == 9, "set_cancelled(0): cancelled %d count %d", c, count);
    }
    /* single-status calls leave MPI_ERROR alone */
    if (nprocs >= 2 && rank < 2) {
        int peer = 1 - rank, x = rank, y = -1, flag = 0;
        MPI_Request req;
        st.MPI_ERROR = 4242;
        MPI_Sendrecv(&x, 1, MPI_INT, peer, 5, &y, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &st);
        CHECK(st.MPI_ERROR == 4242 && y == peer, "Sendrecv: MPI_ERROR %d y %d", st.MPI_ERROR, y);
        MPI_Irecv(&y, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &req);
        MPI_Send(&x, 1, MPI_INT, peer, 6, MPI_COMM_WORLD);
        st.MPI_ERROR = 4242;
        while (!flag)
            MPI_Test(&req, &flag, &st);
        CHECK(st.MPI_ERROR == 4242, "Test: MPI_ERROR %d", st.MPI_ERROR);
        MPI_Send(&x, 1, MPI_INT, peer, 7, MPI_COMM_WORLD);
        st.MPI_ERROR = 4242;
        MPI_Recv(&y, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &st);
        CHECK(st.MPI_ERROR == 4242, "Recv: MPI_ERROR %d", st.MPI_ERROR);
    }
    return finish();
}
