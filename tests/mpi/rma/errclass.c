/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad input to the one-sided calls: each returns its class through the window's
 * handler (MPI_ERRORS_RETURN here; one check through a user handler), with a message
 * naming the call, and leaves the window usable; a range error writes nothing
 * outside the window.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 30) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static void expect(int err, int cls, const char *fn, int line) {
    int got = MPI_SUCCESS, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    if (err != MPI_SUCCESS) {
        MPI_Error_class(err, &got);
        MPI_Error_string(err, msg, &len);
    }
    if (got != cls && ++errs <= 30)
        fprintf(stderr, "rank %d line %d: %s: class %d, want %d (%s)\n", rank, line, fn, got, cls,
                msg);
    if (err != MPI_SUCCESS && !strstr(msg, fn) && ++errs <= 30)
        fprintf(stderr, "rank %d line %d: the message does not name %s: %s\n", rank, line, fn, msg);
}
#define EXPECT(_call, _cls, _fn) expect(_call, _cls, _fn, __LINE__)

static int handler_calls, handler_code;
static void handler(MPI_Win *win, int *code, ...) {
    (void)win;
    handler_calls++;
    handler_code = *code;
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)in, (void)inout, (void)len, (void)dt;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size;

    /* the window: 16 ints of which the user sees 8; the 8 after must stay untouched */
    int *mem;
    MPI_Win win;
    MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int *cw = calloc(16, sizeof(int));
    MPI_Win cwin;
    MPI_Win_create(cw, 8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &cwin);
    MPI_Win_set_errhandler(cwin, MPI_ERRORS_RETURN);
    int v[32] = {0};

    /* MPI_ERR_WIN */
    EXPECT(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Win_fence");
    EXPECT(MPI_Put(v, 1, MPI_INT, 0, 0, 1, MPI_INT, (MPI_Win)0xa0001234), MPI_ERR_WIN, "MPI_Put");

    /* MPI_ERR_RMA_SYNC: outside an epoch, unlock without lock, complete without start */
    EXPECT(MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Put");
    EXPECT(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock");
    EXPECT(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all");
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "MPI_Win_complete");
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "MPI_Win_wait");
    EXPECT(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC, "MPI_Win_flush");
    MPI_Request req;
    MPI_Win_fence(0, win);
    EXPECT(MPI_Rput(v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &req), MPI_ERR_RMA_SYNC, "MPI_Rput");
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_SUCCESS, "MPI_Win_lock");
    /* MPI_ERR_RMA_CONFLICT: a second lock of a target this process has locked */
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock");
    EXPECT(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC, "MPI_Win_fence");
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC, "MPI_Win_free");

    /* MPI_ERR_RMA_RANGE: displacement plus extent past the window, whatever the path */
    for (int i = 0; i < 32; i++)
        v[i] = 0x5a5a5a5a;
    EXPECT(MPI_Put(v, 2, MPI_INT, right, 7, 2, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put");
    EXPECT(MPI_Put(v, 1, MPI_INT, right, 8, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put");
    EXPECT(MPI_Accumulate(v, 9, MPI_INT, right, 0, 9, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_RANGE,
           "MPI_Accumulate");
    EXPECT(MPI_Get(v, 1, MPI_INT, right, 1L << 40, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Get");
    MPI_Datatype wide; /* 2 ints 8 apart: its second lands past the window */
    MPI_Type_vector(2, 1, 8, MPI_INT, &wide);
    MPI_Type_commit(&wide);
    EXPECT(MPI_Put(v, 2, MPI_INT, right, 0, 1, wide, win), MPI_ERR_RMA_RANGE, "MPI_Put");
    EXPECT(MPI_Win_unlock(right, win), MPI_SUCCESS, "MPI_Win_unlock");

    /* MPI_ERR_DISP, MPI_ERR_RANK, MPI_ERR_COUNT, MPI_ERR_LOCKTYPE, MPI_ERR_ASSERT */
    MPI_Win_lock_all(0, win);
    EXPECT(MPI_Put(v, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_DISP, "MPI_Put");
    EXPECT(MPI_Put(v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK, "MPI_Put");
    EXPECT(MPI_Get(v, -1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_COUNT, "MPI_Get");
    /* MPI_ERR_TYPE: sizes that differ, mixed types in an accumulate, float CAS */
    EXPECT(MPI_Put(v, 2, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE, "MPI_Put");
    EXPECT(MPI_Accumulate(v, 1, MPI_FLOAT, right, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_TYPE,
           "MPI_Accumulate");
    float f = 1, fc = 0, fr;
    EXPECT(MPI_Compare_and_swap(&f, &fc, &fr, MPI_FLOAT, right, 0, win), MPI_ERR_TYPE,
           "MPI_Compare_and_swap");
    EXPECT(MPI_Put(v, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE, "MPI_Put");
    /* MPI_ERR_OP: a user op, an op not defined on the type */
    MPI_Op uop;
    MPI_Op_create(user_sum, 1, &uop);
    EXPECT(MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, uop, win), MPI_ERR_OP,
           "MPI_Accumulate");
    EXPECT(MPI_Fetch_and_op(&f, &fr, MPI_FLOAT, right, 0, MPI_BAND, win), MPI_ERR_OP,
           "MPI_Fetch_and_op");
    MPI_Op_free(&uop);
    EXPECT(MPI_Win_unlock_all(win), MPI_SUCCESS, "MPI_Win_unlock_all");
    EXPECT(MPI_Win_lock(12345, right, 0, win), MPI_ERR_LOCKTYPE, "MPI_Win_lock");
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOPRECEDE, win), MPI_ERR_ASSERT,
           "MPI_Win_lock");
    EXPECT(MPI_Win_fence(1, win), MPI_ERR_ASSERT, "MPI_Win_fence");

    /* MPI_ERR_RMA_FLAVOR and MPI_ERR_RMA_ATTACH */
    EXPECT(MPI_Win_attach(win, v, sizeof(v)), MPI_ERR_RMA_FLAVOR, "MPI_Win_attach");
    MPI_Win dwin;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dwin);
    MPI_Win_set_errhandler(dwin, MPI_ERRORS_RETURN);
    EXPECT(MPI_Win_attach(dwin, v, 16 * sizeof(int)), MPI_SUCCESS, "MPI_Win_attach");
    EXPECT(MPI_Win_attach(dwin, v + 8, 16 * sizeof(int)), MPI_ERR_RMA_ATTACH, "MPI_Win_attach");
    EXPECT(MPI_Win_detach(dwin, v + 1), MPI_ERR_RMA_ATTACH, "MPI_Win_detach");
    /* memory not attached at the target is out of range */
    MPI_Aint addr;
    MPI_Get_address(v, &addr);
    MPI_Win_lock_all(0, dwin);
    EXPECT(MPI_Put(v, 1, MPI_INT, rank, addr + 16 * sizeof(int), 1, MPI_INT, dwin),
           MPI_ERR_RMA_RANGE, "MPI_Put");
    EXPECT(MPI_Put(v, 1, MPI_INT, rank, addr, 1, MPI_INT, dwin), MPI_SUCCESS, "MPI_Put");
    MPI_Win_unlock_all(dwin);
    EXPECT(MPI_Win_detach(dwin, v), MPI_SUCCESS, "MPI_Win_detach");
    MPI_Win_free(&dwin);

    /* the window's own handler is called, not the communicator's */
    MPI_Errhandler eh;
    MPI_Win_create_errhandler(handler, &eh);
    MPI_Win_set_errhandler(win, eh);
    int err = MPI_Put(v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    CHECK(handler_calls == 1 && handler_code == err && err != MPI_SUCCESS,
          "user handler: %d calls, code %d, returned %d", handler_calls, handler_code, err);
    MPI_Errhandler_free(&eh);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    /* nothing was written by the refused calls; the window still works */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        CHECK(mem[i] == 0, "window[%d] = %#x after refused calls", i, mem[i]);
    /* the memory right after this rank's part of the window is the next rank's */
    MPI_Win_fence(0, win);
    int one = 1;
    EXPECT(MPI_Put(&one, 1, MPI_INT, right, 7, 1, MPI_INT, win), MPI_SUCCESS, "MPI_Put");
    MPI_Win_fence(0, win);
    CHECK(mem[7] == 1, "put into the last element: %d", mem[7]);
    for (int i = 0; i < 7; i++)
        CHECK(mem[i] == 0, "window[%d] = %#x", i, mem[i]);
    for (int i = 8; i < 16; i++)
        CHECK(cw[i] == 0, "memory after a created window [%d] = %#x", i, cw[i]);
    MPI_Type_free(&wide);
    EXPECT(MPI_Win_free(&win), MPI_SUCCESS, "MPI_Win_free");
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not set MPI_WIN_NULL");
    MPI_Win_free(&cwin);
    free(cw);

    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    MPI_Finalize();
    return errs ? 1 : 0;
}
