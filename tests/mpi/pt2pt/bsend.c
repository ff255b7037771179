/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffered mode: MPI_Buffer_attach/detach, MPI_Bsend and MPI_Ibsend. A buffer of
 * exactly sum(size + MPI_BSEND_OVERHEAD) holds that many pending messages (the
 * standard's sizing rule); one more fails with MPI_ERR_BUFFER (MPI_ERRORS_RETURN);
 * the user's buffer may be reused as soon as the call returns; detach waits until
 * the buffered messages are gone and gives back the attached address and size.
 * Messages of 2 MB + 1 stay pending until received under every eager limit and
 * ring size used by the test lists.
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

#define BIG ((2 << 20) + 1)
#define SMALL 100
#define NSMALL 10

static void expect_class(int err, int want, const char *call) {
    int cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    if (err != MPI_SUCCESS) {
        MPI_Error_class(err, &cls);
        MPI_Error_string(err, msg, &len);
    }
    CHECK(cls == want, "%s: error class %d, want %d (%s)", call, cls, want, msg);
    CHECK(err == MPI_SUCCESS || strstr(msg, call), "%s: message does not name the call: %s", call,
          msg);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char *buf = malloc(BIG);
    int err;

    if (rank == 0 && nprocs > 1) {
        /* two pending rendezvous-size messages fill the buffer exactly */
        int bsize = 2 * (BIG + MPI_BSEND_OVERHEAD);
        char *battach = malloc((size_t)bsize);
        MPI_Buffer_attach(battach, bsize);
        for (int i = 0; i < 2; i++) {
            fill(buf, BIG, i);
            err = MPI_Bsend(buf, BIG, MPI_BYTE, 1, i, MPI_COMM_WORLD);
            CHECK(err == MPI_SUCCESS, "Bsend %d of %d bytes into a buffer sized for two: %d", i,
                  BIG, err);
            memset(buf, 0xa5, BIG); /* ours again at once */
        }
        err = MPI_Bsend(buf, BIG, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        expect_class(err, MPI_ERR_BUFFER, "MPI_Bsend");
        MPI_Request req = MPI_REQUEST_NULL;
        err = MPI_Ibsend(buf, 1000, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req);
        expect_class(err, MPI_ERR_BUFFER, "MPI_Ibsend");
        /* a message bigger than the whole buffer never fits */
        err = MPI_Bsend(buf, bsize, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
        expect_class(err, MPI_ERR_BUFFER, "MPI_Bsend");
        err = MPI_Buffer_attach(buf, 1000);
        CHECK(err != MPI_SUCCESS, "a second MPI_Buffer_attach succeeded");

        MPI_Send(NULL, 0, MPI_BYTE, 1, 100, MPI_COMM_WORLD); /* go */
        void *addr = NULL;
        int size = 0;
        err = MPI_Buffer_detach(&addr, &size); /* waits for both messages */
        CHECK(err == MPI_SUCCESS && addr == battach && size == bsize,
              "detach: err %d, %p/%d, want %p/%d", err, addr, size, (void *)battach, bsize);
        memset(battach, 0x5a, (size_t)bsize); /* nothing may read it any more */
        free(battach);
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

        /* nothing attached */
        err = MPI_Bsend(buf, 10, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
        expect_class(err, MPI_ERR_BUFFER, "MPI_Bsend");

        /* NSMALL nonblocking buffered sends in a buffer sized for them exactly */
        bsize = NSMALL * (SMALL + MPI_BSEND_OVERHEAD);
        battach = malloc((size_t)bsize);
        MPI_Buffer_attach(battach, bsize);
        for (int i = 0; i < NSMALL; i++) {
            fill(buf, SMALL, 10 + i);
            err = MPI_Ibsend(buf, SMALL, MPI_BYTE, 1, 10 + i, MPI_COMM_WORLD, &req);
            CHECK(err == MPI_SUCCESS, "Ibsend %d of %d: %d", i, NSMALL, err);
            if (err == MPI_SUCCESS)
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            memset(buf, 0, SMALL);
        }
        MPI_Send(NULL, 0, MPI_BYTE, 1, 102, MPI_COMM_WORLD); /* go */
        MPI_Buffer_detach(&addr, &size);
        CHECK(addr == battach && size == bsize, "second detach: %p/%d", addr, size);
        free(battach);
        /* a persistent buffered send started with no buffer attached */
        err = MPI_Bsend_init(buf, 10, MPI_BYTE, 1, 4, MPI_COMM_WORLD, &req);
        CHECK(err == MPI_SUCCESS, "Bsend_init: %d", err);
        err = MPI_Start(&req);
        expect_class(err, MPI_ERR_BUFFER, "MPI_Start");
        MPI_Request_free(&req);
    } else if (rank == 1) {
        MPI_Status st;
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 2; i++) {
            memset(buf, 0, BIG);
            MPI_Recv(buf, BIG, MPI_BYTE, 0, i, MPI_COMM_WORLD, &st);
            check_status(&st, 0, i, BIG, "buffered 2MB+1");
            check_data(buf, BIG, i, "buffered 2MB+1");
        }
        MPI_Send(NULL, 0, MPI_BYTE, 0, 101, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 102, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < NSMALL; i++) {
            memset(buf, 0, SMALL);
            MPI_Recv(buf, SMALL, MPI_BYTE, 0, 10 + i, MPI_COMM_WORLD, &st);
            check_status(&st, 0, 10 + i, SMALL, "buffered small");
            check_data(buf, SMALL, 10 + i, "buffered small");
        }
        /* no stray message: the failed sends of tags 2 and 3 must not have gone out */
        int flag = 1;
        MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "a message arrived from a failed buffered send");
    }

    /* buffered send to oneself (every rank) */
    {
        int bsize = 2 * (70000 + MPI_BSEND_OVERHEAD);
        char *battach = malloc((size_t)bsize);
        MPI_Buffer_attach(battach, bsize);
        fill(buf, 70000, 77);
        MPI_Bsend(buf, 70000, MPI_BYTE, rank, 77, MPI_COMM_WORLD);
        fill(buf, 5, 78);
        MPI_Bsend(buf, 5, MPI_BYTE, rank, 78, MPI_COMM_WORLD);
        memset(buf, 0, 70000);
        MPI_Status st;
        MPI_Recv(buf, 70000, MPI_BYTE, rank, 77, MPI_COMM_WORLD, &st);
        check_status(&st, rank, 77, 70000, "self buffered");
        check_data(buf, 70000, 77, "self buffered");
        MPI_Recv(buf, 5, MPI_BYTE, rank, 78, MPI_COMM_WORLD, &st);
        check_data(buf, 5, 78, "self buffered small");
        void *addr;
        int size;
        MPI_Buffer_detach(&addr, &size);
        free(battach);
    }
    free(buf);
    return finish();
}
