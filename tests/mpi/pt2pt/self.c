/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages from a rank to itself, on MPI_COMM_WORLD and MPI_COMM_SELF: MPI_Send
 * then MPI_Recv for small messages; MPI_Isend then MPI_Recv, and MPI_Irecv then
 * MPI_Send, for large ones; MPI_Rsend into a posted receive; MPI_Sendrecv and
 * MPI_Sendrecv_replace with oneself; wildcards; many messages in order; the
 * value+int pair type (not contiguous). Every rank does it at once.
 * Send-then-Recv to oneself relies on Tandem buffering messages to self (the
 * standard lets MPI_Send block until matched; MPICH's ch4 does, even for 0 bytes).
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

static const int small[] = {0, 1, 8, 24, 1000, 8152, 8153, 20000};
static const int large[] = {32768, 32769, 100000, 1 << 20, 16 << 20};
#define NSMALL (int)(sizeof(small) / sizeof(small[0]))
#define NLARGE (int)(sizeof(large) / sizeof(large[0]))
#define NORDER 200

typedef struct {
    double v;
    int i;
} double_int_t;

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsigned char *sbuf = malloc(16 << 20), *rbuf = malloc(16 << 20);
    MPI_Status st;
    MPI_Request req;
    char what[80];

    for (int ci = 0; ci < 2; ci++) {
        MPI_Comm comm = ci ? MPI_COMM_SELF : MPI_COMM_WORLD;
        int me = ci ? 0 : rank;
        const char *cname = ci ? "MPI_COMM_SELF" : "MPI_COMM_WORLD";
        for (int k = 0; k < NSMALL; k++) {
            int n = small[k];
            snprintf(what, sizeof(what), "%s: Send then Recv of %d bytes", cname, n);
            fill(sbuf, (size_t)n, k);
            MPI_Send(sbuf, n, MPI_BYTE, me, k, comm);
            memset(sbuf, 0, (size_t)n); /* the message was taken at the send */
            memset(rbuf, 0, (size_t)n);
            MPI_Recv(rbuf, n, MPI_BYTE, me, k, comm, &st);
            check_status(&st, me, k, (size_t)n, what);
            check_data(rbuf, (size_t)n, k, what);
        }
        for (int k = 0; k < NLARGE; k++) {
            int n = large[k];
            snprintf(what, sizeof(what), "%s: Isend then Recv of %d bytes", cname, n);
            fill(sbuf, (size_t)n, k + 10);
            MPI_Isend(sbuf, n, MPI_BYTE, me, 100 + k, comm, &req);
            memset(rbuf, 0, (size_t)n);
            MPI_Recv(rbuf, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            check_status(&st, me, 100 + k, (size_t)n, what);
            check_data(rbuf, (size_t)n, k + 10, what);

            snprintf(what, sizeof(what), "%s: Irecv then Send of %d bytes", cname, n);
            fill(sbuf, (size_t)n, k + 20);
            memset(rbuf, 0, (size_t)n);
            MPI_Irecv(rbuf, n, MPI_BYTE, me, 200 + k, comm, &req);
            MPI_Send(sbuf, n, MPI_BYTE, me, 200 + k, comm);
            MPI_Wait(&req, &st);
            check_status(&st, me, 200 + k, (size_t)n, what);
            check_data(rbuf, (size_t)n, k + 20, what);

            snprintf(what, sizeof(what), "%s: Irecv then Rsend of %d bytes", cname, n);
            fill(sbuf, (size_t)n, k + 30);
            memset(rbuf, 0, (size_t)n);
            MPI_Irecv(rbuf, n, MPI_BYTE, me, 300 + k, comm, &req);
            MPI_Rsend(sbuf, n, MPI_BYTE, me, 300 + k, comm);
            MPI_Wait(&req, &st);
            check_status(&st, me, 300 + k, (size_t)n, what);
            check_data(rbuf, (size_t)n, k + 30, what);

            snprintf(what, sizeof(what), "%s: Sendrecv of %d bytes", cname, n);
            fill(sbuf, (size_t)n, k + 40);
            memset(rbuf, 0, (size_t)n);
            MPI_Sendrecv(sbuf, n, MPI_BYTE, me, 400 + k, rbuf, n, MPI_BYTE, me, 400 + k, comm, &st);
            check_status(&st, me, 400 + k, (size_t)n, what);
            check_data(rbuf, (size_t)n, k + 40, what);

            snprintf(what, sizeof(what), "%s: Sendrecv_replace of %d bytes", cname, n);
            fill(rbuf, (size_t)n, k + 50);
            MPI_Sendrecv_replace(rbuf, n, MPI_BYTE, me, 500 + k, me, 500 + k, comm, &st);
            check_status(&st, me, 500 + k, (size_t)n, what);
            check_data(rbuf, (size_t)n, k + 50, what);
        }
        /* many small messages, one envelope: in order */
        {
            MPI_Request reqs[NORDER];
            int v[NORDER], r[NORDER];
            for (int i = 0; i < NORDER; i++) {
                v[i] = i * 3 + 1;
                MPI_Isend(&v[i], 1, MPI_INT, me, 600, comm, &reqs[i]);
            }
            for (int i = 0; i < NORDER; i++) {
                r[i] = -1;
                MPI_Recv(&r[i], 1, MPI_INT, MPI_ANY_SOURCE, 600, comm, MPI_STATUS_IGNORE);
                CHECK(r[i] == i * 3 + 1, "%s: message %d to self out of order (%d)", cname, i,
                      r[i]);
            }
            MPI_Waitall(NORDER, reqs, MPI_STATUSES_IGNORE);
        }
        /* a type with a gap */
        {
            double_int_t s[100], r[100];
            for (int i = 0; i < 100; i++) {
                s[i].v = i * 0.5;
                s[i].i = -i;
            }
            memset(r, 0, sizeof(r));
            MPI_Sendrecv(s, 100, MPI_DOUBLE_INT, me, 700, r, 100, MPI_DOUBLE_INT, me, 700, comm,
                         &st);
            int bad = 0;
            for (int i = 0; i < 100; i++)
                bad += r[i].v != s[i].v || r[i].i != s[i].i;
            CHECK(!bad, "%s: MPI_DOUBLE_INT to self: %d pairs differ", cname, bad);
        }
    }
    /* the two communicators do not match each other's messages */
    {
        int a = 1, b = 2, x = 0, y = 0;
        MPI_Request r2[2];
        MPI_Isend(&a, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &r2[0]);
        MPI_Isend(&b, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &r2[1]);
        MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st);
        /* source named: another rank's message to us on MPI_COMM_WORLD (finish()'s) may
         * already be queued when progress runs in the background (TANDEM_ASYNC_PROGRESS),
         * and MPI_ANY_SOURCE would rightly take it */
        MPI_Recv(&x, 1, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Waitall(2, r2, MPI_STATUSES_IGNORE);
        CHECK(x == 1 && y == 2, "MPI_COMM_WORLD got %d, MPI_COMM_SELF got %d", x, y);
    }
    free(sbuf);
    free(rbuf);
    return finish();
}
