/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A function Tandem does not implement yet exists (the ABI has every symbol) and
 * returns MPI_ERR_UNSUPPORTED_OPERATION through the error handler, with a message
 * naming the function; the process carries on normally afterwards. MPI-IO calls
 * return their errors even under MPI_ERRORS_ARE_FATAL on the communicator (files
 * have MPI_ERRORS_RETURN by default).
 * MPI_File_open (MPI-IO) and MPI_Comm_accept (dynamic processes) are the examples;
 * when one becomes implemented, pick another.
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

static int handler_calls, handler_code;

static void handler(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

static void expect_unsupported(int err, const char *fn) {
    int cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    if (err != MPI_SUCCESS) {
        MPI_Error_class(err, &cls);
        MPI_Error_string(err, msg, &len);
    }
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION,
          "%s: class %d, want MPI_ERR_UNSUPPORTED_OPERATION (%d); message: %s", fn, cls,
          MPI_ERR_UNSUPPORTED_OPERATION, msg);
    CHECK(strstr(msg, fn) != NULL, "%s: the message does not name it: %s", fn, msg);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    /* MPI-IO errors go to MPI_FILE_NULL's handler, MPI_ERRORS_RETURN by default:
     * this returns although MPI_COMM_WORLD still has MPI_ERRORS_ARE_FATAL */
    MPI_File fh = MPI_FILE_NULL;
    int err = MPI_File_open(MPI_COMM_WORLD, "/tmp/tandem-unsupported-test", MPI_MODE_RDONLY,
                            MPI_INFO_NULL, &fh);
    expect_unsupported(err, "MPI_File_open");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    err = MPI_File_open(MPI_COMM_WORLD, "/tmp/tandem-unsupported-test", MPI_MODE_RDONLY,
                        MPI_INFO_NULL, &fh);
    expect_unsupported(err, "MPI_File_open");

    char port[MPI_MAX_PORT_NAME] = "tandem-test-port";
    MPI_Comm inter = MPI_COMM_NULL;
    err = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    expect_unsupported(err, "MPI_Comm_accept");

    /* through a user handler on the communicator of the call */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    err = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    CHECK(handler_calls == 1 && handler_code == err,
          "MPI_Comm_accept with a user handler: %d calls, code %d, returned %d", handler_calls,
          handler_code, err);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);

    /* still fine */
    int v = rank, w = -1;
    MPI_Sendrecv(&v, 1, MPI_INT, rank, 0, &w, 1, MPI_INT, rank, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(w == rank, "message to self after the unsupported calls: %d", w);

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
