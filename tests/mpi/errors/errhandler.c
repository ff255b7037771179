/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * User error handlers: MPI_Comm_create_errhandler, MPI_Comm_set/get_errhandler,
 * MPI_Comm_call_errhandler, MPI_Errhandler_free. The default on MPI_COMM_WORLD is
 * MPI_ERRORS_ARE_FATAL; a handler runs once per error, with the communicator the
 * error was raised on and the code the call then returns (argument errors,
 * truncation found by MPI_Wait, user codes through MPI_Comm_call_errhandler);
 * communicators keep their own handlers; a handler freed while set stays in use;
 * after MPI_ERRORS_RETURN is set the handler no longer runs.
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

static struct {
    int calls;
    MPI_Comm comm;
    int code;
} h1, h2;

static void handler1(MPI_Comm *comm, int *code, ...) {
    h1.calls++;
    h1.comm = *comm;
    h1.code = *code;
}

static void handler2(MPI_Comm *comm, int *code, ...) {
    h2.calls++;
    h2.comm = *comm;
    h2.code = *code;
}

static int class_of(int code) {
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Errhandler eh1, eh2, got;
    MPI_Status st;
    int err, buf[4] = {0};

    err = MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(err == MPI_SUCCESS && got == MPI_ERRORS_ARE_FATAL,
          "default handler of MPI_COMM_WORLD is %#x, want MPI_ERRORS_ARE_FATAL", (unsigned)got);
    MPI_Errhandler_free(&got);
    CHECK(got == MPI_ERRHANDLER_NULL, "Errhandler_free did not set MPI_ERRHANDLER_NULL");

    err = MPI_Comm_create_errhandler(handler1, &eh1);
    CHECK(err == MPI_SUCCESS && eh1 != MPI_ERRHANDLER_NULL, "create_errhandler: %d", err);
    MPI_Comm_create_errhandler(handler2, &eh2);
    CHECK(eh1 != eh2, "two handlers got the same handle");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh1);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh2);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(got == eh1, "get_errhandler gave %#x, want %#x", (unsigned)got, (unsigned)eh1);
    MPI_Errhandler_free(&got);

    /* an argument error on MPI_COMM_WORLD */
    err = MPI_Send(buf, 1, MPI_INT, 0, -1, MPI_COMM_WORLD);
    CHECK(h1.calls == 1 && h2.calls == 0, "bad tag: handler calls %d/%d, want 1/0", h1.calls,
          h2.calls);
    CHECK(h1.comm == MPI_COMM_WORLD, "handler got communicator %#x", (unsigned)h1.comm);
    CHECK(err != MPI_SUCCESS && h1.code == err && class_of(err) == MPI_ERR_TAG,
          "handler code %d, returned %d (class %d)", h1.code, err, class_of(err));

    /* one on MPI_COMM_SELF goes to its own handler */
    err = MPI_Recv(buf, 1, MPI_INT, 3, 0, MPI_COMM_SELF, &st);
    CHECK(h1.calls == 1 && h2.calls == 1, "bad rank on MPI_COMM_SELF: calls %d/%d", h1.calls,
          h2.calls);
    CHECK(h2.comm == MPI_COMM_SELF && h2.code == err && class_of(err) == MPI_ERR_RANK,
          "MPI_COMM_SELF handler: comm %#x code %d returned %d", (unsigned)h2.comm, h2.code, err);

    /* an error found at completion: truncation in MPI_Wait */
    {
        int big[4] = {1, 2, 3, 4}, small[2];
        MPI_Request req;
        MPI_Irecv(small, 2, MPI_INT, rank, 5, MPI_COMM_WORLD, &req);
        MPI_Send(big, 4, MPI_INT, rank, 5, MPI_COMM_WORLD);
        err = MPI_Wait(&req, &st);
        CHECK(h1.calls == 2 && h1.comm == MPI_COMM_WORLD && h1.code == err &&
                  class_of(err) == MPI_ERR_TRUNCATE,
              "truncation: calls %d code %d returned %d (class %d)", h1.calls, h1.code, err,
              class_of(err));
    }

    /* MPI_Comm_call_errhandler, with a built-in and a user code */
    err = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    CHECK(err == MPI_SUCCESS && h1.calls == 3 && h1.code == MPI_ERR_OTHER,
          "call_errhandler(MPI_ERR_OTHER): returned %d calls %d code %d", err, h1.calls, h1.code);
    {
        int cls, code;
        MPI_Add_error_class(&cls);
        MPI_Add_error_code(cls, &code);
        err = MPI_Comm_call_errhandler(MPI_COMM_SELF, code);
        CHECK(err == MPI_SUCCESS && h2.calls == 2 && h2.code == code && h2.comm == MPI_COMM_SELF,
              "call_errhandler(user code): calls %d code %d", h2.calls, h2.code);
    }

    /* freed while in use: still runs */
    MPI_Errhandler_free(&eh1);
    CHECK(eh1 == MPI_ERRHANDLER_NULL, "Errhandler_free left the handle");
    err = MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    CHECK(h1.calls == 4 && class_of(err) == MPI_ERR_COUNT,
          "freed handler still set: calls %d, class %d", h1.calls, class_of(err));
    /* the same handler on both communicators */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh2);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, got);
    MPI_Errhandler_free(&got);
    err = MPI_Send(buf, 1, MPI_INT, 5, 0, MPI_COMM_SELF);
    CHECK(h1.calls == 5 && h1.comm == MPI_COMM_SELF && class_of(err) == MPI_ERR_RANK,
          "shared handler on MPI_COMM_SELF: calls %d comm %#x", h1.calls, (unsigned)h1.comm);

    /* back to MPI_ERRORS_RETURN: no more calls */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(got == MPI_ERRORS_RETURN, "get_errhandler after setting MPI_ERRORS_RETURN: %#x",
          (unsigned)got);
    MPI_Errhandler_free(&got);
    err = MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    CHECK(h1.calls == 5 && class_of(err) == MPI_ERR_TYPE,
          "with MPI_ERRORS_RETURN: handler calls %d, class %d", h1.calls, class_of(err));
    err = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    CHECK(err == MPI_SUCCESS && h1.calls == 5, "call_errhandler with MPI_ERRORS_RETURN: %d", err);

    /* bad handler arguments */
    err = MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)0x0badbad0);
    CHECK(err != MPI_SUCCESS, "set_errhandler with an invalid handler succeeded");
    err = MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN);
    CHECK(class_of(err) == MPI_ERR_COMM, "set_errhandler(MPI_COMM_NULL): class %d", class_of(err));

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
