/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every blocking collective and its I-variant (argument "nb" selects those)
 * at counts 0, 1, 7, 1000 and 40000 ints (the last is past every default
 * switch point), roots 0 and size-1, contiguous and strided (vector) types,
 * MPI_IN_PLACE, and a non-commutative user op (2x2 matrix product), each
 * checked against a serial reference computed on every rank. The testlist
 * runs it with every algorithm forced. The barrier is checked by time: in each
 * round one rank arrives 20 ms late, and no rank may leave before it arrived.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size, errs, nb;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && errs++ < 10) {                                                             \
            fprintf(stderr, "[%d] ", rank);                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static int val(int r, int i) {
    return r * 1000 + i + 1;
}

/* Run a collective: blocking, or its I-variant followed by Wait. */
#define COLL(_blocking, _nonblocking)                                                              \
    do {                                                                                           \
        int rc_;                                                                                   \
        if (nb) {                                                                                  \
            MPI_Request rq_;                                                                       \
            rc_ = _nonblocking;                                                                    \
            if (rc_ == MPI_SUCCESS)                                                                \
                rc_ = MPI_Wait(&rq_, MPI_STATUS_IGNORE);                                           \
        } else {                                                                                   \
            rc_ = _blocking;                                                                       \
        }                                                                                          \
        CHECK(rc_ == MPI_SUCCESS, "%s failed: %d", #_blocking, rc_);                               \
    } while (0)
#define RQ &rq_

static const int counts[] = {0, 1, 7, 1000, 40000};
#define NCOUNTS (int)(sizeof(counts) / sizeof(counts[0]))

/* ---- non-commutative op: 2x2 unsigned matrix product ---- */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    unsigned *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                         a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof(c));
    }
}
static void mat_of(int r, int k, unsigned *m) {
    m[0] = (unsigned)(r + 2 + k);
    m[1] = (unsigned)(r + 1);
    m[2] = (unsigned)(3 * r + k);
    m[3] = 1;
}
/* product of the matrices of ranks lo..hi-1, item k */
static void mat_ref(int lo, int hi, int k, unsigned *out) {
    unsigned acc[4] = {1, 0, 0, 1};
    for (int r = lo; r < hi; r++) {
        unsigned m[4];
        mat_of(r, k, m);
        int one = 1;
        matmul(acc, m, &one, NULL); /* m = acc * m */
        memcpy(acc, m, sizeof(acc));
    }
    memcpy(out, acc, sizeof(acc));
}

static void test_noncommutative(void) {
    MPI_Op op;
    MPI_Datatype mat;
    MPI_Op_create(matmul, 0, &op);
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mat);
    MPI_Type_commit(&mat);
    int commute = 1;
    MPI_Op_commutative(op, &commute);
    CHECK(commute == 0, "Op_commutative says %d", commute);
    for (int n = 1; n <= 300; n += 299) {
        unsigned *in = malloc(n * 16), *out = malloc(n * 16 * size), ref[4];
        for (int k = 0; k < n; k++)
            mat_of(rank, k, in + 4 * k);
        COLL(MPI_Allreduce(in, out, n, mat, op, MPI_COMM_WORLD),
             MPI_Iallreduce(in, out, n, mat, op, MPI_COMM_WORLD, RQ));
        for (int k = 0; k < n; k++) {
            mat_ref(0, size, k, ref);
            CHECK(!memcmp(ref, out + 4 * k, 16), "noncommutative allreduce n=%d item %d", n, k);
        }
        /* every root kind of the rank-0 tree: rank 0, an inner node, a leaf;
         * at the root also in place */
        int roots[3] = {0, size / 2, size - 1};
        for (int ri = 0; ri < 3; ri++) {
            int root = roots[ri];
            for (int inplace = 0; inplace < 2; inplace++) {
                if (inplace && rank == root)
                    memcpy(out, in, (size_t)n * 16);
                const void *sb = inplace && rank == root ? MPI_IN_PLACE : in;
                COLL(MPI_Reduce(sb, out, n, mat, op, root, MPI_COMM_WORLD),
                     MPI_Ireduce(sb, out, n, mat, op, root, MPI_COMM_WORLD, RQ));
                if (rank == root)
                    for (int k = 0; k < n; k++) {
                        mat_ref(0, size, k, ref);
                        CHECK(!memcmp(ref, out + 4 * k, 16),
                              "noncommutative reduce n=%d root %d%s item %d", n, root,
                              inplace ? " in place" : "", k);
                    }
            }
        }
        COLL(MPI_Scan(in, out, n, mat, op, MPI_COMM_WORLD),
             MPI_Iscan(in, out, n, mat, op, MPI_COMM_WORLD, RQ));
        for (int k = 0; k < n; k++) {
            mat_ref(0, rank + 1, k, ref);
            CHECK(!memcmp(ref, out + 4 * k, 16), "noncommutative scan n=%d item %d", n, k);
        }
        COLL(MPI_Exscan(in, out, n, mat, op, MPI_COMM_WORLD),
             MPI_Iexscan(in, out, n, mat, op, MPI_COMM_WORLD, RQ));
        if (rank > 0)
            for (int k = 0; k < n; k++) {
                mat_ref(0, rank, k, ref);
                CHECK(!memcmp(ref, out + 4 * k, 16), "noncommutative exscan n=%d item %d", n, k);
            }
        /* reduce_scatter_block: every rank's n-item block of a size*n vector */
        unsigned *big = malloc(n * 16 * size);
        for (int k = 0; k < n * size; k++)
            mat_of(rank, k, big + 4 * k);
        COLL(MPI_Reduce_scatter_block(big, out, n, mat, op, MPI_COMM_WORLD),
             MPI_Ireduce_scatter_block(big, out, n, mat, op, MPI_COMM_WORLD, RQ));
        for (int k = 0; k < n; k++) {
            mat_ref(0, size, rank * n + k, ref);
            CHECK(!memcmp(ref, out + 4 * k, 16), "noncommutative reduce_scatter_block n=%d", n);
        }
        free(big);
        free(in);
        free(out);
    }
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL, "Op_free did not reset the handle");
    MPI_Type_free(&mat);
}

static void test_count(int n, MPI_Datatype vec2 /* every other int */) {
    int *a = malloc(sizeof(int) * (2 * (size_t)n * size + 2));
    int *b = malloc(sizeof(int) * (2 * (size_t)n * size + 2));
    for (int root = 0; root < size; root += (size > 1 ? size - 1 : 1)) {
        /* Bcast, contiguous */
        for (int i = 0; i < n; i++)
            a[i] = rank == root ? val(root, i) : -1;
        COLL(MPI_Bcast(a, n, MPI_INT, root, MPI_COMM_WORLD),
             MPI_Ibcast(a, n, MPI_INT, root, MPI_COMM_WORLD, RQ));
        for (int i = 0; i < n; i++)
            CHECK(a[i] == val(root, i), "bcast n=%d root=%d a[%d]=%d", n, root, i, a[i]);
        /* Bcast, strided: the gaps stay untouched */
        for (int i = 0; i < 2 * n; i++)
            a[i] = rank == root && i % 2 == 0 ? val(root, i) : -1;
        COLL(MPI_Bcast(a, n, vec2, root, MPI_COMM_WORLD),
             MPI_Ibcast(a, n, vec2, root, MPI_COMM_WORLD, RQ));
        for (int i = 0; i < 2 * n; i++)
            CHECK(a[i] == (i % 2 ? -1 : val(root, i)), "strided bcast n=%d root=%d a[%d]=%d", n,
                  root, i, a[i]);
        /* Reduce, contiguous and in place at the root */
        for (int i = 0; i < n; i++)
            a[i] = val(rank, i), b[i] = -1;
        COLL(MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
             MPI_Ireduce(a, b, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, RQ));
        int sumr = size * (size - 1) / 2 * 1000;
        if (rank == root)
            for (int i = 0; i < n; i++)
                CHECK(b[i] == sumr + size * (i + 1), "reduce n=%d root=%d b[%d]=%d", n, root, i,
                      b[i]);
        COLL(MPI_Reduce(rank == root ? MPI_IN_PLACE : a, a, n, MPI_INT, MPI_MAX, root,
                        MPI_COMM_WORLD),
             MPI_Ireduce(rank == root ? MPI_IN_PLACE : a, a, n, MPI_INT, MPI_MAX, root,
                         MPI_COMM_WORLD, RQ));
        if (rank == root)
            for (int i = 0; i < n; i++)
                CHECK(a[i] == val(size - 1, i), "reduce in place n=%d a[%d]=%d", n, i, a[i]);
        /* Gather / Gatherv (reversed blocks) / Scatter / Scatterv */
        for (int i = 0; i < n; i++)
            a[i] = val(rank, i);
        COLL(MPI_Gather(a, n, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD),
             MPI_Igather(a, n, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD, RQ));
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++)
                    CHECK(b[r * n + i] == val(r, i), "gather n=%d root=%d", n, root);
        int *rc = malloc(sizeof(int) * size), *dp = malloc(sizeof(int) * size);
        for (int r = 0; r < size; r++)
            rc[r] = n, dp[r] = (size - 1 - r) * n;
        if (rank == root)
            for (int i = 0; i < n * size; i++)
                b[i] = i < n * (size - 1 - rank) || i >= n * (size - rank) ? -1 : val(rank, i % n);
        COLL(MPI_Gatherv(rank == root ? MPI_IN_PLACE : a, n, MPI_INT, b, rc, dp, MPI_INT, root,
                         MPI_COMM_WORLD),
             MPI_Igatherv(rank == root ? MPI_IN_PLACE : a, n, MPI_INT, b, rc, dp, MPI_INT, root,
                          MPI_COMM_WORLD, RQ));
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++)
                    CHECK(b[dp[r] + i] == val(r, i), "gatherv in place n=%d root=%d", n, root);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++)
                    b[r * n + i] = val(r, i);
        for (int i = 0; i < n; i++)
            a[i] = -1;
        COLL(MPI_Scatter(b, n, MPI_INT, a, n, MPI_INT, root, MPI_COMM_WORLD),
             MPI_Iscatter(b, n, MPI_INT, a, n, MPI_INT, root, MPI_COMM_WORLD, RQ));
        for (int i = 0; i < n; i++)
            CHECK(a[i] == val(rank, i), "scatter n=%d root=%d a[%d]=%d", n, root, i, a[i]);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++)
                    b[dp[r] + i] = val(r, i);
        for (int i = 0; i < n; i++)
            a[i] = -1;
        COLL(MPI_Scatterv(b, rc, dp, MPI_INT, a, n, MPI_INT, root, MPI_COMM_WORLD),
             MPI_Iscatterv(b, rc, dp, MPI_INT, a, n, MPI_INT, root, MPI_COMM_WORLD, RQ));
        for (int i = 0; i < n; i++)
            CHECK(a[i] == val(rank, i), "scatterv n=%d root=%d", n, root);
        free(rc);
        free(dp);
    }
    /* Allreduce: contiguous, in place, strided type, MINLOC on a pair */
    for (int i = 0; i < n; i++)
        a[i] = val(rank, i);
    COLL(MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, RQ));
    int sum = size * (size - 1) / 2 * 1000;
    for (int i = 0; i < n; i++)
        CHECK(b[i] == sum + size * (i + 1), "allreduce n=%d b[%d]=%d", n, i, b[i]);
    COLL(MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD),
         MPI_Iallreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD, RQ));
    for (int i = 0; i < n; i++)
        CHECK(a[i] == val(0, i), "allreduce in place n=%d a[%d]=%d", n, i, a[i]);
    for (int i = 0; i < 2 * n; i++)
        a[i] = val(rank, i), b[i] = -7;
    COLL(MPI_Allreduce(a, b, n, vec2, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iallreduce(a, b, n, vec2, MPI_SUM, MPI_COMM_WORLD, RQ));
    for (int i = 0; i < 2 * n; i++)
        CHECK(b[i] == (i % 2 ? -7 : sum + size * (i + 1)), "strided allreduce n=%d b[%d]=%d", n, i,
              b[i]);
    struct {
        double v;
        int i;
    } *pa = malloc(sizeof(*pa) * (n + 1)), *pb = malloc(sizeof(*pb) * (n + 1));
    for (int i = 0; i < n; i++)
        pa[i].v = (double)((rank + i) % size), pa[i].i = rank;
    COLL(MPI_Allreduce(pa, pb, n, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD),
         MPI_Iallreduce(pa, pb, n, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD, RQ));
    for (int i = 0; i < n; i++)
        CHECK(pb[i].v == 0 && pb[i].i == (size - i % size) % size, "minloc n=%d i=%d: %g,%d", n, i,
              pb[i].v, pb[i].i);
    free(pa);
    free(pb);
    /* Allgather, Allgatherv (in place), Alltoall (and in place), Alltoallv, Alltoallw */
    for (int i = 0; i < n; i++)
        a[i] = val(rank, i);
    COLL(MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD),
         MPI_Iallgather(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD, RQ));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            CHECK(b[r * n + i] == val(r, i), "allgather n=%d from %d", n, r);
    /* a strided send type against a contiguous receive: each block leaves from sbuf */
    int *sv = malloc(sizeof(int) * (2 * (size_t)n + 1));
    for (int i = 0; i < n; i++)
        sv[2 * i] = val(rank, i), sv[2 * i + 1] = -7;
    COLL(MPI_Allgather(sv, n, vec2, b, n, MPI_INT, MPI_COMM_WORLD),
         MPI_Iallgather(sv, n, vec2, b, n, MPI_INT, MPI_COMM_WORLD, RQ));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            CHECK(b[r * n + i] == val(r, i), "allgather strided n=%d from %d", n, r);
    free(sv);
    for (int i = 0; i < n * size; i++)
        b[i] = i / (n ? n : 1) == rank ? val(rank, i % n) : -1;
    COLL(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, MPI_COMM_WORLD),
         MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, MPI_COMM_WORLD, RQ));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            CHECK(b[r * n + i] == val(r, i), "allgather in place n=%d from %d", n, r);
    int *rc = malloc(sizeof(int) * size), *dp = malloc(sizeof(int) * size);
    int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
    int tot = 0;
    for (int r = 0; r < size; r++)
        rc[r] = (n + r) % (n + 1), dp[r] = tot, tot += rc[r];
    for (int i = 0; i < rc[rank]; i++)
        a[i] = val(rank, i);
    COLL(MPI_Allgatherv(a, rc[rank], MPI_INT, b, rc, dp, MPI_INT, MPI_COMM_WORLD),
         MPI_Iallgatherv(a, rc[rank], MPI_INT, b, rc, dp, MPI_INT, MPI_COMM_WORLD, RQ));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < rc[r]; i++)
            CHECK(b[dp[r] + i] == val(r, i), "allgatherv n=%d from %d", n, r);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            a[r * n + i] = val(rank, r * n + i);
    COLL(MPI_Alltoall(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD),
         MPI_Ialltoall(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD, RQ));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            CHECK(b[r * n + i] == val(r, rank * n + i), "alltoall n=%d from %d", n, r);
    COLL(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, n, MPI_INT, MPI_COMM_WORLD),
         MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, n, MPI_INT, MPI_COMM_WORLD, RQ));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            CHECK(a[r * n + i] == val(r, rank * n + i), "alltoall in place n=%d from %d", n, r);
    /* v: rank s sends (s + d) % (n + 1) ints to rank d, blocks packed in order */
    int st = 0, rt = 0;
    for (int r = 0; r < size; r++) {
        sc[r] = (rank + r) % (n + 1), sd[r] = st, st += sc[r];
        rc[r] = (r + rank) % (n + 1), dp[r] = rt, rt += rc[r];
    }
    for (int r = 0; r < size; r++)
        for (int i = 0; i < sc[r]; i++)
            a[sd[r] + i] = val(rank, r * 100 + i);
    COLL(MPI_Alltoallv(a, sc, sd, MPI_INT, b, rc, dp, MPI_INT, MPI_COMM_WORLD),
         MPI_Ialltoallv(a, sc, sd, MPI_INT, b, rc, dp, MPI_INT, MPI_COMM_WORLD, RQ));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < rc[r]; i++)
            CHECK(b[dp[r] + i] == val(r, rank * 100 + i), "alltoallv n=%d from %d", n, r);
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * size);
    for (int r = 0; r < size; r++)
        ty[r] = MPI_INT, sd[r] *= (int)sizeof(int), dp[r] *= (int)sizeof(int);
    COLL(MPI_Alltoallw(a, sc, sd, ty, b, rc, dp, ty, MPI_COMM_WORLD),
         MPI_Ialltoallw(a, sc, sd, ty, b, rc, dp, ty, MPI_COMM_WORLD, RQ));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < rc[r]; i++)
            CHECK(b[dp[r] / (int)sizeof(int) + i] == val(r, rank * 100 + i),
                  "alltoallw n=%d from %d", n, r);
    free(ty);
    /* Scan, Exscan, Reduce_scatter(_block) with MPI_SUM */
    for (int i = 0; i < n; i++)
        a[i] = val(rank, i);
    COLL(MPI_Scan(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iscan(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, RQ));
    for (int i = 0; i < n; i++)
        CHECK(b[i] == rank * (rank + 1) / 2 * 1000 + (rank + 1) * (i + 1), "scan n=%d", n);
    COLL(MPI_Exscan(MPI_IN_PLACE, a, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Iexscan(MPI_IN_PLACE, a, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, RQ));
    if (rank > 0)
        for (int i = 0; i < n; i++)
            CHECK(a[i] == (rank - 1) * rank / 2 * 1000 + rank * (i + 1), "exscan n=%d a[%d]=%d", n,
                  i, a[i]);
    tot = 0;
    for (int r = 0; r < size; r++)
        rc[r] = (n + r) % (n + 1), tot += rc[r];
    for (int i = 0; i < tot; i++)
        a[i] = val(rank, i);
    int off = 0;
    for (int r = 0; r < rank; r++)
        off += rc[r];
    COLL(MPI_Reduce_scatter(a, b, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Ireduce_scatter(a, b, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, RQ));
    for (int i = 0; i < rc[rank]; i++)
        CHECK(b[i] == sum + size * (off + i + 1), "reduce_scatter n=%d", n);
    for (int i = 0; i < n * size; i++)
        a[i] = val(rank, i);
    COLL(MPI_Reduce_scatter_block(MPI_IN_PLACE, a, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_Ireduce_scatter_block(MPI_IN_PLACE, a, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, RQ));
    for (int i = 0; i < n; i++)
        CHECK(a[i] == sum + size * (rank * n + i + 1), "reduce_scatter_block in place n=%d", n);
    free(rc);
    free(dp);
    free(sc);
    free(sd);
    free(a);
    free(b);
}

static double now(void) { /* CLOCK_MONOTONIC: one clock for every process of the node */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Round k: rank k % size arrives late; every rank must leave after the last
 * arrival (the arrivals are compared afterwards, by Allgather). */
static void test_barrier(void) {
    int rounds = size < 3 ? 3 : size;
    double *arrive = malloc(sizeof(double) * (size_t)size * (size_t)rounds);
    double *leave = malloc(sizeof(double) * (size_t)rounds);
    double *mine = malloc(sizeof(double) * (size_t)rounds);
    for (int k = 0; k < rounds; k++) {
        if (rank == k % size)
            usleep(20000);
        mine[k] = now();
        COLL(MPI_Barrier(MPI_COMM_WORLD), MPI_Ibarrier(MPI_COMM_WORLD, RQ));
        leave[k] = now();
    }
    MPI_Allgather(mine, rounds, MPI_DOUBLE, arrive, rounds, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int k = 0; k < rounds; k++) {
        double last = arrive[(size_t)(k % size) * (size_t)rounds + (size_t)k];
        CHECK(leave[k] >= last, "barrier round %d: left %.6f s before rank %d arrived", k,
              last - leave[k], k % size);
    }
    free(arrive);
    free(leave);
    free(mine);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nb = argc > 1 && strcmp(argv[1], "nb") == 0;
    MPI_Datatype vec2;
    MPI_Type_vector(1, 1, 2, MPI_INT, &vec2); /* one int, extent of two */
    MPI_Datatype v2;
    MPI_Type_create_resized(vec2, 0, 2 * sizeof(int), &v2);
    MPI_Type_commit(&v2);
    COLL(MPI_Barrier(MPI_COMM_WORLD), MPI_Ibarrier(MPI_COMM_WORLD, RQ));
    test_barrier();
    for (int c = 0; c < NCOUNTS; c++)
        test_count(counts[c], v2);
    test_noncommutative();
    COLL(MPI_Barrier(MPI_COMM_WORLD), MPI_Ibarrier(MPI_COMM_WORLD, RQ));
    MPI_Type_free(&vec2);
    MPI_Type_free(&v2);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
