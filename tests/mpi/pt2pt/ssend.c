/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Synchronous mode completes only once the receive has matched. Rank 0 starts an
 * MPI_Issend that rank 1 cannot have matched yet (rank 1 first waits for a "go" on
 * another tag), checks with MPI_Test for a while that it does not complete, then
 * sends the go and waits. Also: a blocking MPI_Ssend does not return while the
 * receiver delays its receive (the receiver watches for the sender's "returned"
 * message meanwhile); MPI_Issend to oneself completes only after the receive;
 * MPI_Request_get_status agrees with MPI_Test. Eager and rendezvous sizes.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static const int sizes[] = {0, 4, 8153, 40000, 1 << 20};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))
#define HOLD_MS 60 /* how long the unmatched Issend is watched */
#define DELAY_MS 100

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsigned char *buf = malloc(1 << 20);
    MPI_Status st;
    char what[64];

    for (int k = 0; k < NSIZES && nprocs >= 2; k++) {
        int n = sizes[k];
        snprintf(what, sizeof(what), "Issend of %d bytes", n);
        if (rank == 0) {
            MPI_Request req;
            int flag = 0, gflag = 0;
            fill(buf, (size_t)n, k);
            MPI_Issend(buf, n, MPI_BYTE, 1, k, MPI_COMM_WORLD, &req);
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < HOLD_MS * 1e-3) {
                MPI_Request_get_status(req, &gflag, MPI_STATUS_IGNORE);
                CHECK(!gflag, "%s: MPI_Request_get_status says complete before the match", what);
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                if (flag) {
                    CHECK(0, "%s completed before rank 1 posted its receive", what);
                    break;
                }
                sleep_ms(1);
            }
            MPI_Send(NULL, 0, MPI_BYTE, 1, 1000 + k, MPI_COMM_WORLD); /* go */
            if (!flag) {
                /* now it must complete; Request_get_status first, then Test frees it */
                while (!gflag)
                    MPI_Request_get_status(req, &gflag, &st);
                CHECK(req != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
                MPI_Test(&req, &flag, &st);
                CHECK(flag && req == MPI_REQUEST_NULL, "%s: Test after get_status: flag %d", what,
                      flag);
            }
        } else if (rank == 1) {
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 1000 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            memset(buf, 0, (size_t)n);
            MPI_Recv(buf, n, MPI_BYTE, 0, k, MPI_COMM_WORLD, &st);
            check_status(&st, 0, k, (size_t)n, what);
            check_data(buf, (size_t)n, k, what);
        }

        /* blocking Ssend: the receiver delays its receive, then looks whether the
         * sender has already reported that its Ssend returned (it must not have) */
        snprintf(what, sizeof(what), "Ssend of %d bytes", n);
        if (rank == 0) {
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 2000 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fill(buf, (size_t)n, k + 7);
            MPI_Ssend(buf, n, MPI_BYTE, 1, 3000 + k, MPI_COMM_WORLD);
            MPI_Send(NULL, 0, MPI_BYTE, 1, 4000 + k, MPI_COMM_WORLD); /* returned */
        } else if (rank == 1) {
            int early = 0;
            MPI_Send(NULL, 0, MPI_BYTE, 0, 2000 + k, MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            while (!early && MPI_Wtime() - t0 < DELAY_MS * 1e-3) {
                MPI_Iprobe(0, 4000 + k, MPI_COMM_WORLD, &early, MPI_STATUS_IGNORE);
                sleep_ms(1);
            }
            CHECK(!early, "%s returned before the receive was posted", what);
            memset(buf, 0, (size_t)n);
            MPI_Recv(buf, n, MPI_BYTE, 0, 3000 + k, MPI_COMM_WORLD, &st);
            check_status(&st, 0, 3000 + k, (size_t)n, what);
            check_data(buf, (size_t)n, k + 7, what);
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 4000 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }

    /* synchronous send to oneself: pending until the receive is posted */
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        unsigned char *rbuf = malloc((size_t)n + 1);
        MPI_Request req;
        int flag = 0;
        snprintf(what, sizeof(what), "Issend to self of %d bytes", n);
        fill(buf, (size_t)n, k + 20);
        MPI_Issend(buf, n, MPI_BYTE, rank, 40 + k, MPI_COMM_WORLD, &req);
        for (int i = 0; i < 10 && !flag; i++)
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "%s completed before the receive", what);
        MPI_Recv(rbuf, n, MPI_BYTE, rank, 40 + k, MPI_COMM_WORLD, &st);
        check_status(&st, rank, 40 + k, (size_t)n, what);
        check_data(rbuf, (size_t)n, k + 20, what);
        if (!flag) {
            double t0 = MPI_Wtime();
            while (!flag && MPI_Wtime() - t0 < 2.0)
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            CHECK(flag, "%s did not complete after the receive matched it", what);
            if (!flag) { /* cannot recover: do not hang in Finalize */
                fprintf(stderr, "rank %d: giving up\n", rank);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        free(rbuf);
    }
    free(buf);
    return finish();
}
