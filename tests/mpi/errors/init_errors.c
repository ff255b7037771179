/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Start-up and shut-down: MPI_Initialized/MPI_Finalized before, during and after;
 * MPI_Get_version and MPI_Get_library_version before MPI_Init (allowed);
 * MPI_Init_thread gives a level between MPI_THREAD_SINGLE and the one asked for
 * that MPI_Query_thread repeats; a second MPI_Init(_thread) fails with an error
 * (MPI_ERRORS_RETURN) that names the call, and MPI keeps working.
 */
#include <mpi.h>
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

int main(int argc, char **argv) {
    int flag = -1, v = 0, sv = 0, len = 0, provided = -1, err;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";

    MPI_Initialized(&flag);
    CHECK(flag == 0, "MPI_Initialized before MPI_Init: %d", flag);
    MPI_Finalized(&flag);
    CHECK(flag == 0, "MPI_Finalized before MPI_Init: %d", flag);
    err = MPI_Get_version(&v, &sv);
    CHECK(err == MPI_SUCCESS && v == MPI_VERSION && sv == MPI_SUBVERSION,
          "MPI_Get_version before MPI_Init: %d (%d.%d; the header says %d.%d)", err, v, sv,
          MPI_VERSION, MPI_SUBVERSION);
    err = MPI_Get_library_version(lib, &len);
    CHECK(err == MPI_SUCCESS && len > 0, "MPI_Get_library_version before MPI_Init: %d", err);

    err = MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(err == MPI_SUCCESS && provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_SERIALIZED,
          "MPI_Init_thread(SERIALIZED): err %d provided %d", err, provided);
    int q = -1;
    MPI_Query_thread(&q);
    CHECK(q == provided, "MPI_Query_thread %d, MPI_Init_thread gave %d", q, provided);
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Initialized after MPI_Init: %d", flag);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    err = MPI_Init(&argc, &argv);
    CHECK(err != MPI_SUCCESS, "a second MPI_Init succeeded");
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        MPI_Error_string(err, msg, &len);
        CHECK(strstr(msg, "MPI_Init") != NULL, "second MPI_Init: message \"%s\"", msg);
    }
    err = MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    CHECK(err != MPI_SUCCESS, "MPI_Init_thread after MPI_Init succeeded");

    /* still working */
    int x = rank, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, (rank + 1) % nprocs, 0, &y, 1, MPI_INT,
                 (rank + nprocs - 1) % nprocs, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(y == (rank + nprocs - 1) % nprocs, "ring after the failed calls: %d", y);

    if (rank == 0) {
        for (int i = 1; i < nprocs; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, 32766, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 32766, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    MPI_Finalized(&flag);
    int ini = -1;
    MPI_Initialized(&ini);
    CHECK(flag == 1 && ini == 1, "after MPI_Finalize: Finalized %d Initialized %d", flag, ini);
    if (rank == 0) {
        if (errs)
            printf(" Found %d errors\n", errs);
        else
            printf(" No Errors\n");
        fflush(stdout);
    }
    return errs ? 1 : 0;
}
