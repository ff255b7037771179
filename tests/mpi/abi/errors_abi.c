/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ABI (built with MPICH's mpi.h, run on Tandem): error classes come back with
 * MPICH's values through MPI_ERRORS_RETURN (MPICH's handle for it), the error
 * handler handles compare equal to MPICH's predefined ones, a user handler is
 * called through MPICH's function-pointer type, and added classes/codes work.
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

static int calls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...) {
    calls++;
    last_code = *code;
    last_comm = *comm;
}

static void want(int line, int err, int cls_want, int value_want) {
    int cls = -1;
    MPI_Error_class(err, &cls);
    /* both the symbolic value of this header and the number MPICH 4.0.2 assigns */
    CHECK(cls == cls_want && cls == value_want, "line %d: class %d, want %d", line, cls,
          value_want);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int buf[4] = {0};
    MPI_Request req = (MPI_Request)0x12345;
    MPI_Errhandler eh;

    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler %#x, want %#x", (unsigned)eh,
          (unsigned)MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "handler %#x, want MPI_ERRORS_RETURN %#x", (unsigned)eh,
          (unsigned)MPI_ERRORS_RETURN);

    want(__LINE__, MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, 1);
    want(__LINE__, MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, 2);
    want(__LINE__, MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, 3);
    want(__LINE__, MPI_Send(buf, 1, MPI_INT, 0, -1, MPI_COMM_WORLD), MPI_ERR_TAG, 4);
    want(__LINE__, MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM, 5);
    want(__LINE__, MPI_Send(buf, 1, MPI_INT, nprocs, 0, MPI_COMM_WORLD), MPI_ERR_RANK, 6);
    want(__LINE__, MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, 19);
    {
        int big[4] = {1, 2, 3, 4}, small[1];
        want(__LINE__,
             MPI_Sendrecv(big, 4, MPI_INT, rank, 1, small, 1, MPI_INT, rank, 1, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE),
             MPI_ERR_TRUNCATE, 14);
    }
    {
        MPI_File fh;
        want(__LINE__, MPI_File_open(MPI_COMM_WORLD, "x", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
             MPI_ERR_UNSUPPORTED_OPERATION, 44);
    }
    {
        MPI_Request arr[2];
        int big[4] = {1, 2, 3, 4}, small[1], zero = 0;
        MPI_Irecv(small, 1, MPI_INT, rank, 2, MPI_COMM_WORLD, &arr[0]);
        MPI_Irecv(&zero, 1, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &arr[1]);
        MPI_Send(big, 4, MPI_INT, rank, 2, MPI_COMM_WORLD);
        MPI_Status sts[2];
        int err = MPI_Waitall(2, arr, sts);
        CHECK(err == MPI_ERR_IN_STATUS && MPI_ERR_IN_STATUS == 17, "Waitall: %d", err);
        want(__LINE__, sts[0].MPI_ERROR, MPI_ERR_TRUNCATE, 14);
    }

    /* a user handler */
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    int err = MPI_Send(buf, 1, MPI_INT, 0, -7, MPI_COMM_WORLD);
    CHECK(calls == 1 && last_code == err && last_comm == MPI_COMM_WORLD,
          "user handler: calls %d code %d/%d comm %#x", calls, last_code, err, (unsigned)last_comm);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free: %#x", (unsigned)eh);

    /* added classes */
    int cls, code, c = -1, len;
    char s[MPI_MAX_ERROR_STRING];
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    MPI_Add_error_string(code, "abi test error");
    MPI_Error_class(code, &c);
    MPI_Error_string(code, s, &len);
    CHECK(c == cls && !strcmp(s, "abi test error"), "added code: class %d string %s", c, s);

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
