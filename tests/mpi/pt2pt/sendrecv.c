/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Sendrecv and MPI_Sendrecv_replace around a ring (each rank sends right and
 * receives from the left, all at once) for sizes from 0 to rendezvous, with
 * different send and receive sizes, MPI_ANY_SOURCE/MPI_ANY_TAG, and the value+int
 * pair type MPI_DOUBLE_INT whose items have a gap (packed and unpacked on the way).
 * arg "i": the same through MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4), completed
 * by Wait, or by Test polling every other time, with the same data and statuses.
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

static int nonblocking, calls;

static void sendrecv(const void *sb, int sn, MPI_Datatype st_, int dest, int stag, void *rb, int rn,
                     MPI_Datatype rt, int src, int rtag, MPI_Status *st) {
    if (!nonblocking) {
        MPI_Sendrecv(sb, sn, st_, dest, stag, rb, rn, rt, src, rtag, MPI_COMM_WORLD, st);
        return;
    }
    MPI_Request r;
    MPI_Isendrecv(sb, sn, st_, dest, stag, rb, rn, rt, src, rtag, MPI_COMM_WORLD, &r);
    if (++calls % 2) {
        MPI_Wait(&r, st);
    } else {
        int flag = 0;
        while (!flag)
            MPI_Test(&r, &flag, st);
        CHECK(r == MPI_REQUEST_NULL, "Isendrecv: the request is not MPI_REQUEST_NULL after Test");
    }
}

static void sendrecv_replace(void *b, int n, MPI_Datatype t, int dest, int stag, int src, int rtag,
                             MPI_Status *st) {
    if (!nonblocking) {
        MPI_Sendrecv_replace(b, n, t, dest, stag, src, rtag, MPI_COMM_WORLD, st);
        return;
    }
    MPI_Request r;
    MPI_Isendrecv_replace(b, n, t, dest, stag, src, rtag, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, st);
}

static const int sizes[] = {0, 1, 8, 1000, 8153, 32768, 32769, 200000, 1 << 20};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

typedef struct {
    double v;
    int i;
} double_int_t;

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    nonblocking = argc > 1 && strcmp(argv[1], "i") == 0;
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    unsigned char *sbuf = malloc(1 << 20), *rbuf = malloc((1 << 20) + 16);
    MPI_Status st;
    char what[80];

    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        /* the left neighbour sends sizes[k]; we send the size after ours */
        int nsend = sizes[(k + rank) % NSIZES], nrecv = sizes[(k + left) % NSIZES];
        snprintf(what, sizeof(what), "Sendrecv of %d bytes from %d", nrecv, left);
        fill(sbuf, (size_t)nsend, rank * 100 + k);
        memset(rbuf, 0, (size_t)nrecv + 16);
        sendrecv(sbuf, nsend, MPI_BYTE, right, k, rbuf, (1 << 20) + 16, MPI_BYTE,
                 k % 2 ? MPI_ANY_SOURCE : left, k % 3 ? k : MPI_ANY_TAG, &st);
        check_status(&st, left, k, (size_t)nrecv, what);
        check_data(rbuf, (size_t)nrecv, left * 100 + k, what);

        snprintf(what, sizeof(what), "Sendrecv_replace of %d bytes", n);
        fill(rbuf, (size_t)n, rank * 100 + k + 50);
        sendrecv_replace(rbuf, n, MPI_BYTE, right, 100 + k, left, 100 + k, &st);
        check_status(&st, left, 100 + k, (size_t)n, what);
        check_data(rbuf, (size_t)n, left * 100 + k + 50, what);
    }
    /* a type with gaps: 0, 1, some and many pairs */
    static const int npairs[] = {0, 1, 700, 5000, 70000};
    for (int k = 0; k < 5; k++) {
        int n = npairs[k];
        double_int_t *s = malloc((size_t)(n + 1) * sizeof(*s)),
                     *r = malloc((size_t)(n + 1) * sizeof(*r));
        for (int i = 0; i < n; i++) {
            s[i].v = rank + i * 0.25;
            s[i].i = rank * 1000000 + i;
        }
        memset(r, 0xff, (size_t)(n + 1) * sizeof(*r));
        sendrecv(s, n, MPI_DOUBLE_INT, right, 200 + k, r, n, MPI_DOUBLE_INT, left, 200 + k, &st);
        int count = -1, bad = 0;
        MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
        for (int i = 0; i < n; i++)
            bad += r[i].v != left + i * 0.25 || r[i].i != left * 1000000 + i;
        CHECK(count == n && !bad, "Sendrecv of %d MPI_DOUBLE_INT: count %d, %d pairs wrong", n,
              count, bad);
        /* in place: what we have (the left's) goes right, the left's left's comes in */
        sendrecv_replace(r, n, MPI_DOUBLE_INT, right, 300 + k, left, 300 + k, &st);
        int ll = (left + nprocs - 1) % nprocs;
        bad = 0;
        for (int i = 0; i < n; i++)
            bad += r[i].v != ll + i * 0.25 || r[i].i != ll * 1000000 + i;
        CHECK(!bad, "Sendrecv_replace of %d MPI_DOUBLE_INT: %d pairs wrong", n, bad);
        free(s);
        free(r);
    }
    if (nonblocking) {
        /* freed while active: it completes and is released on its own */
        MPI_Request r;
        static int x, y; /* outlive the request, which nobody waits for */
        x = rank;
        MPI_Isendrecv(&x, 1, MPI_INT, right, 400, &y, 1, MPI_INT, left, 400, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
        MPI_Barrier(MPI_COMM_WORLD);
        /* a truncated receive is the request's error, reported by Wait */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int big[4] = {1, 2, 3, 4}, small[2];
        MPI_Isendrecv(big, 4, MPI_INT, right, 402, small, 2, MPI_INT, left, 402, MPI_COMM_WORLD,
                      &r);
        int rc = MPI_Wait(&r, &st), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "Isendrecv into a short buffer: class %d", cls);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    free(sbuf);
    free(rbuf);
    return finish();
}
