/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_PROC_NULL as source or destination of every point-to-point call: sends of
 * every mode complete at once (buffered ones need no attached buffer); receives
 * complete at once with source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0 and the
 * buffer untouched; nonblocking, persistent, Sendrecv(_replace) and probe forms.
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

static void check_pn(const MPI_Status *st, const char *what) {
    int count = -1, c = -1;
    MPI_Get_count(st, MPI_INT, &count);
    MPI_Test_cancelled(st, &c);
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && count == 0 && !c,
          "%s: source %d tag %d count %d cancelled %d", what, st->MPI_SOURCE, st->MPI_TAG, count,
          c);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int v[4] = {1, 2, 3, 4}, r[4] = {7, 7, 7, 7}, err, flag;
    MPI_Status st;
    MPI_Request req, reqs[8];

    err = MPI_Send(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    CHECK(err == MPI_SUCCESS, "Send: %d", err);
    err = MPI_Ssend(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    CHECK(err == MPI_SUCCESS, "Ssend: %d", err);
    err = MPI_Rsend(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    CHECK(err == MPI_SUCCESS, "Rsend: %d", err);
    err = MPI_Bsend(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    CHECK(err == MPI_SUCCESS, "Bsend without a buffer attached: %d", err);
    memset(&st, 0x55, sizeof(st));
    err = MPI_Recv(r, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    CHECK(err == MPI_SUCCESS, "Recv: %d", err);
    check_pn(&st, "Recv");
    err = MPI_Recv(r, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(err == MPI_SUCCESS, "Recv with MPI_STATUS_IGNORE: %d", err);

    /* nonblocking: complete at the first test */
    err = MPI_Isend(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[0]);
    err |= MPI_Issend(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[1]);
    err |= MPI_Irsend(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[2]);
    err |= MPI_Ibsend(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[3]);
    err |= MPI_Irecv(r, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[4]);
    CHECK(err == MPI_SUCCESS, "nonblocking calls: %d", err);
    flag = 0;
    MPI_Status sts[5];
    MPI_Testall(5, reqs, &flag, sts);
    CHECK(flag, "nonblocking MPI_PROC_NULL operations not complete at the first Testall");
    if (!flag)
        MPI_Waitall(5, reqs, sts);
    check_pn(&sts[4], "Irecv");
    for (int i = 0; i < 5; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not freed", i);

    /* persistent */
    MPI_Send_init(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[0]);
    MPI_Ssend_init(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[1]);
    MPI_Rsend_init(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[2]);
    MPI_Bsend_init(v, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[3]);
    MPI_Recv_init(r, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &reqs[4]);
    for (int it = 0; it < 2; it++) {
        err = MPI_Startall(5, reqs);
        CHECK(err == MPI_SUCCESS, "Startall: %d", err);
        err = MPI_Waitall(5, reqs, sts);
        CHECK(err == MPI_SUCCESS, "Waitall: %d", err);
        check_pn(&sts[4], "Recv_init");
    }
    for (int i = 0; i < 5; i++)
        MPI_Request_free(&reqs[i]);

    /* Sendrecv with one or both sides MPI_PROC_NULL */
    memset(&st, 0x55, sizeof(st));
    err = MPI_Sendrecv(v, 4, MPI_INT, MPI_PROC_NULL, 1, r, 4, MPI_INT, MPI_PROC_NULL, 1,
                       MPI_COMM_WORLD, &st);
    CHECK(err == MPI_SUCCESS, "Sendrecv: %d", err);
    check_pn(&st, "Sendrecv");
    err =
        MPI_Sendrecv(v, 4, MPI_INT, rank, 2, r, 4, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &st);
    check_pn(&st, "Sendrecv from MPI_PROC_NULL, to self");
    err = MPI_Recv(r, 4, MPI_INT, rank, 2, MPI_COMM_WORLD, &st);
    CHECK(err == MPI_SUCCESS && r[3] == 4, "the message Sendrecv sent to self: %d", r[3]);
    MPI_Isend(v, 4, MPI_INT, rank, 3, MPI_COMM_WORLD, &req);
    err =
        MPI_Sendrecv(v, 4, MPI_INT, MPI_PROC_NULL, 3, r, 4, MPI_INT, rank, 3, MPI_COMM_WORLD, &st);
    CHECK(err == MPI_SUCCESS && st.MPI_SOURCE == rank && r[3] == 4,
          "Sendrecv to MPI_PROC_NULL, from self: err %d source %d r[3] %d", err, st.MPI_SOURCE,
          r[3]);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    r[0] = r[1] = r[2] = r[3] = 7;
    err = MPI_Sendrecv_replace(r, 4, MPI_INT, MPI_PROC_NULL, 4, MPI_PROC_NULL, 4, MPI_COMM_WORLD,
                               &st);
    CHECK(err == MPI_SUCCESS, "Sendrecv_replace: %d", err);
    check_pn(&st, "Sendrecv_replace");

    /* probes */
    MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st);
    check_pn(&st, "Probe");
    flag = 0;
    MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CHECK(flag, "Iprobe: flag 0");
    check_pn(&st, "Iprobe");

    for (int i = 0; i < 4; i++)
        CHECK(r[i] == 7, "a receive from MPI_PROC_NULL wrote r[%d]=%d", i, r[i]);
    return finish();
}
