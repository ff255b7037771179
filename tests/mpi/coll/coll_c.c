/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI-4 large-count (_c) collectives: every one, blocking, as its I-form
 * and as its persistent _init form, at counts 0, 1, 5 and 3000 ints, roots 0
 * and size-1, the MPI_IN_PLACE forms, the v/w forms with MPI_Count counts and
 * MPI_Aint displacements (blocks in reverse rank order, uneven counts), the
 * neighbourhood forms on a periodic ring (Cartesian) and a distributed graph,
 * and a few on an intercommunicator, each checked against a serial reference
 * on every rank. Negative counts, also ones whose low 32 bits are zero (an
 * int truncation would take them for 0), must fail with MPI_ERR_COUNT naming
 * the _c function. Argument "large" (2 ranks): MPI_Bcast_c of 2^31 + 64 bytes
 * and an MPI_Gatherv_c into a displacement past INT_MAX.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errs, mode;
static const char *const mode_name[3] = {"blocking", "I-form", "_init form"};

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && errs++ < 20) {                                                             \
            fprintf(stderr, "[%d] %s: ", rank, mode_name[mode]);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* Run MPI_<_B>_c in the form `mode` selects: blocking, MPI_<_I>_c then Wait,
 * or MPI_<_B>_init_c then Start, Wait and Request_free. */
#define RUN(_B, _I, ...)                                                                           \
    do {                                                                                           \
        MPI_Request rq_ = MPI_REQUEST_NULL;                                                        \
        int rc_;                                                                                   \
        if (mode == 0) {                                                                           \
            rc_ = MPI_##_B##_c(__VA_ARGS__);                                                       \
        } else if (mode == 1) {                                                                    \
            rc_ = MPI_##_I##_c(__VA_ARGS__, &rq_);                                                 \
            if (rc_ == MPI_SUCCESS)                                                                \
                rc_ = MPI_Wait(&rq_, MPI_STATUS_IGNORE);                                           \
        } else {                                                                                   \
            rc_ = MPI_##_B##_init_c(__VA_ARGS__, MPI_INFO_NULL, &rq_);                             \
            if (rc_ == MPI_SUCCESS)                                                                \
                rc_ = MPI_Start(&rq_);                                                             \
            if (rc_ == MPI_SUCCESS)                                                                \
                rc_ = MPI_Wait(&rq_, MPI_STATUS_IGNORE);                                           \
            if (rc_ == MPI_SUCCESS)                                                                \
                rc_ = MPI_Request_free(&rq_);                                                      \
        }                                                                                          \
        CHECK(rc_ == MPI_SUCCESS, "MPI_%s_c failed: %d", #_B, rc_);                                \
    } while (0)

/* item k of what rank `from` contributes (for rank `to`, where that matters) */
static int v(int from, int to, int k) {
    return from * 1000003 + to * 10007 + k + 1;
}

static int *ints(size_t n) {
    int *p = malloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; i++)
        p[i] = -7;
    return p;
}

/* Per-rank counts n + (r % 2) packed in reverse rank order: the displacements
 * of the v forms (in items), and the total. */
static MPI_Count layout(int n, MPI_Count *cnt, MPI_Aint *dsp) {
    MPI_Count total = 0;
    for (int r = size - 1; r >= 0; r--) {
        cnt[r] = n + r % 2;
        dsp[r] = total;
        total += cnt[r];
    }
    return total;
}

static void t_bcast_reduce(int n) {
    int *a = ints((size_t)n), *b = ints((size_t)n);
    for (int root = 0; root<size; root += size> 1 ? size - 1 : 1) {
        for (int k = 0; k < n; k++)
            a[k] = rank == root ? v(root, 0, k) : -1;
        RUN(Bcast, Ibcast, a, (MPI_Count)n, MPI_INT, root, MPI_COMM_WORLD);
        for (int k = 0; k < n; k++)
            CHECK(a[k] == v(root, 0, k), "bcast n=%d root=%d a[%d]=%d", n, root, k, a[k]);

        long long sum0 = 0;
        for (int q = 0; q < size; q++)
            sum0 += v(q, 0, 0) - 1;
        for (int k = 0; k < n; k++)
            a[k] = v(rank, 0, k), b[k] = -1;
        RUN(Reduce, Ireduce, a, b, (MPI_Count)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int k = 0; k < n; k++)
                CHECK(b[k] == sum0 + size * (k + 1), "reduce n=%d root=%d b[%d]=%d", n, root, k,
                      b[k]);
        /* in place at the root */
        RUN(Reduce, Ireduce, rank == root ? MPI_IN_PLACE : a, a, (MPI_Count)n, MPI_INT, MPI_SUM,
            root, MPI_COMM_WORLD);
        if (rank == root)
            for (int k = 0; k < n; k++)
                CHECK(a[k] == sum0 + size * (k + 1), "reduce in place n=%d a[%d]=%d", n, k, a[k]);
    }
    long long sum0 = 0;
    for (int q = 0; q < size; q++)
        sum0 += v(q, 0, 0) - 1;
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int k = 0; k < n; k++)
            a[k] = v(rank, 0, k), b[k] = inplace ? a[k] : -1;
        RUN(Allreduce, Iallreduce, inplace ? MPI_IN_PLACE : a, b, (MPI_Count)n, MPI_INT, MPI_SUM,
            MPI_COMM_WORLD);
        for (int k = 0; k < n; k++)
            CHECK(b[k] == sum0 + size * (k + 1), "allreduce%s n=%d b[%d]=%d",
                  inplace ? " in place" : "", n, k, b[k]);
    }
    /* Scan and Exscan */
    for (int k = 0; k < n; k++)
        a[k] = v(rank, 0, k), b[k] = -1;
    RUN(Scan, Iscan, a, b, (MPI_Count)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < n; k++) {
        long long e = 0;
        for (int q = 0; q <= rank; q++)
            e += v(q, 0, k);
        CHECK(b[k] == e, "scan n=%d b[%d]=%d (want %lld)", n, k, b[k], e);
    }
    RUN(Exscan, Iexscan, a, b, (MPI_Count)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank > 0)
        for (int k = 0; k < n; k++) {
            long long e = 0;
            for (int q = 0; q < rank; q++)
                e += v(q, 0, k);
            CHECK(b[k] == e, "exscan n=%d b[%d]=%d (want %lld)", n, k, b[k], e);
        }
    free(a);
    free(b);
}

static void t_rooted(int n) {
    MPI_Count *cnt = malloc(sizeof(MPI_Count) * size);
    MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * size);
    MPI_Count total = layout(n, cnt, dsp);
    int *a = ints((size_t)n + 1), *b = ints((size_t)total + (size_t)n * size);
    for (int root = 0; root<size; root += size> 1 ? size - 1 : 1) {
        /* Gather, then in place at the root */
        for (int k = 0; k < n; k++)
            a[k] = v(rank, 0, k);
        for (int inplace = 0; inplace < 2; inplace++) {
            if (inplace && rank == root)
                for (int k = 0; k < n; k++)
                    b[root * n + k] = v(root, 0, k);
            RUN(Gather, Igather, inplace && rank == root ? MPI_IN_PLACE : a, (MPI_Count)n, MPI_INT,
                b, (MPI_Count)n, MPI_INT, root, MPI_COMM_WORLD);
            if (rank == root)
                for (int r = 0; r < size; r++)
                    for (int k = 0; k < n; k++)
                        CHECK(b[r * n + k] == v(r, 0, k), "gather%s n=%d root=%d b[%d][%d]",
                              inplace ? " in place" : "", n, root, r, k);
        }
        /* Gatherv: rank r sends n + r%2 items, stored in reverse rank order */
        for (int k = 0; k < n + 1; k++)
            a[k] = v(rank, 1, k);
        RUN(Gatherv, Igatherv, a, cnt[rank], MPI_INT, b, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int k = 0; k < cnt[r]; k++)
                    CHECK(b[dsp[r] + k] == v(r, 1, k), "gatherv n=%d root=%d from %d item %d", n,
                          root, r, k);
        /* Scatter, then in place at the root */
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int k = 0; k < n; k++)
                    b[r * n + k] = v(root, r, k);
        for (int inplace = 0; inplace < 2; inplace++) {
            for (int k = 0; k < n; k++)
                a[k] = -1;
            RUN(Scatter, Iscatter, b, (MPI_Count)n, MPI_INT,
                inplace && rank == root ? MPI_IN_PLACE : a, (MPI_Count)n, MPI_INT, root,
                MPI_COMM_WORLD);
            if (!(inplace && rank == root))
                for (int k = 0; k < n; k++)
                    CHECK(a[k] == v(root, rank, k), "scatter%s n=%d root=%d a[%d]=%d",
                          inplace ? " in place" : "", n, root, k, a[k]);
        }
        /* Scatterv */
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (int k = 0; k < cnt[r]; k++)
                    b[dsp[r] + k] = v(root, r, k + 5);
        RUN(Scatterv, Iscatterv, b, cnt, dsp, MPI_INT, a, cnt[rank], MPI_INT, root, MPI_COMM_WORLD);
        for (int k = 0; k < cnt[rank]; k++)
            CHECK(a[k] == v(root, rank, k + 5), "scatterv n=%d root=%d a[%d]=%d", n, root, k, a[k]);
    }
    free(a);
    free(b);
    free(cnt);
    free(dsp);
}

static void t_allgather_alltoall(int n) {
    MPI_Count *cnt = malloc(sizeof(MPI_Count) * size), *sc = malloc(sizeof(MPI_Count) * size);
    MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * size), *sd = malloc(sizeof(MPI_Aint) * size);
    MPI_Aint *sdb = malloc(sizeof(MPI_Aint) * size), *rdb = malloc(sizeof(MPI_Aint) * size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * size);
    MPI_Count total = layout(n, cnt, dsp);
    size_t big = (size_t)(n + 1) * size;
    int *a = ints(big), *b = ints(big);
    /* Allgather, then in place */
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int k = 0; k < n; k++)
            a[k] = v(rank, 0, k), b[rank * n + k] = inplace ? a[k] : -1;
        RUN(Allgather, Iallgather, inplace ? MPI_IN_PLACE : a, (MPI_Count)n, MPI_INT, b,
            (MPI_Count)n, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            for (int k = 0; k < n; k++)
                CHECK(b[r * n + k] == v(r, 0, k), "allgather%s n=%d b[%d][%d]=%d",
                      inplace ? " in place" : "", n, r, k, b[r * n + k]);
    }
    /* Allgatherv (reverse order, uneven), then in place */
    for (int inplace = 0; inplace < 2; inplace++) {
        for (MPI_Count i = 0; i < total; i++)
            b[i] = -1;
        for (int k = 0; k < cnt[rank]; k++)
            a[k] = v(rank, 2, k), b[dsp[rank] + k] = inplace ? a[k] : -1;
        RUN(Allgatherv, Iallgatherv, inplace ? MPI_IN_PLACE : a, cnt[rank], MPI_INT, b, cnt, dsp,
            MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            for (int k = 0; k < cnt[r]; k++)
                CHECK(b[dsp[r] + k] == v(r, 2, k), "allgatherv%s n=%d from %d item %d",
                      inplace ? " in place" : "", n, r, k);
    }
    /* Alltoall, then in place */
    for (int inplace = 0; inplace < 2; inplace++) {
        int *src = inplace ? b : a;
        for (int j = 0; j < size; j++)
            for (int k = 0; k < n; k++)
                src[j * n + k] = v(rank, j, k);
        RUN(Alltoall, Ialltoall, inplace ? MPI_IN_PLACE : a, (MPI_Count)n, MPI_INT, b, (MPI_Count)n,
            MPI_INT, MPI_COMM_WORLD);
        for (int j = 0; j < size; j++)
            for (int k = 0; k < n; k++)
                CHECK(b[j * n + k] == v(j, rank, k), "alltoall%s n=%d from %d item %d",
                      inplace ? " in place" : "", n, j, k);
    }
    /* Alltoallv and Alltoallw: i sends n + (i+j)%2 items to j, packed in reverse order */
    MPI_Count st = 0, rt = 0;
    for (int j = size - 1; j >= 0; j--) {
        sc[j] = n + (rank + j) % 2;
        sd[j] = st, st += sc[j];
        cnt[j] = n + (rank + j) % 2;
        dsp[j] = rt, rt += cnt[j];
        sdb[j] = sd[j] * (MPI_Aint)sizeof(int), rdb[j] = dsp[j] * (MPI_Aint)sizeof(int);
        types[j] = MPI_INT;
    }
    for (int w = 0; w < 2; w++) {
        for (int j = 0; j < size; j++)
            for (int k = 0; k < sc[j]; k++)
                a[sd[j] + k] = v(rank, j, k + w);
        for (MPI_Count i = 0; i < rt; i++)
            b[i] = -1;
        if (w)
            RUN(Alltoallw, Ialltoallw, a, sc, sdb, types, b, cnt, rdb, types, MPI_COMM_WORLD);
        else
            RUN(Alltoallv, Ialltoallv, a, sc, sd, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
        for (int j = 0; j < size; j++)
            for (int k = 0; k < cnt[j]; k++)
                CHECK(b[dsp[j] + k] == v(j, rank, k + w), "alltoall%c n=%d from %d item %d",
                      w ? 'w' : 'v', n, j, k);
    }
    free(a);
    free(b);
    free(cnt);
    free(sc);
    free(dsp);
    free(sd);
    free(sdb);
    free(rdb);
    free(types);
}

static void t_reduce_scatter(int n) {
    MPI_Count *cnt = malloc(sizeof(MPI_Count) * size);
    size_t big = (size_t)(n + 1) * size;
    int *a = ints(big), *b = ints(big);
    /* _block, then in place */
    for (int inplace = 0; inplace < 2; inplace++) {
        int *src = inplace ? b : a;
        for (int j = 0; j < size; j++)
            for (int k = 0; k < n; k++)
                src[j * n + k] = v(rank, j, k);
        RUN(Reduce_scatter_block, Ireduce_scatter_block, inplace ? MPI_IN_PLACE : a, b,
            (MPI_Count)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int k = 0; k < n; k++) {
            long long e = 0;
            for (int q = 0; q < size; q++)
                e += v(q, rank, k);
            CHECK(b[k] == e, "reduce_scatter_block%s n=%d b[%d]=%d (want %lld)",
                  inplace ? " in place" : "", n, k, b[k], e);
        }
    }
    /* uneven counts: block j has n + j%2 items, in rank order */
    size_t off = 0;
    for (int j = 0; j < size; j++) {
        cnt[j] = n + j % 2;
        for (int k = 0; k < cnt[j]; k++)
            a[off + k] = v(rank, j, k);
        off += (size_t)cnt[j];
    }
    RUN(Reduce_scatter, Ireduce_scatter, a, b, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < cnt[rank]; k++) {
        long long e = 0;
        for (int q = 0; q < size; q++)
            e += v(q, rank, k);
        CHECK(b[k] == e, "reduce_scatter n=%d b[%d]=%d (want %lld)", n, k, b[k], e);
    }
    free(a);
    free(b);
    free(cnt);
}

/* Neighbourhood forms on a periodic ring: in and out lists are (left, right);
 * block 0 goes left and block 1 right, so slot 0 holds left's block 1 and
 * slot 1 right's block 0. */
static void t_neighbor_cart(MPI_Comm ring, int n) {
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int *a = ints(2 * (size_t)n + 2), *b = ints(2 * (size_t)n + 2);
    for (int k = 0; k < n; k++)
        a[k] = v(rank, 0, k);
    RUN(Neighbor_allgather, Ineighbor_allgather, a, (MPI_Count)n, MPI_INT, b, (MPI_Count)n, MPI_INT,
        ring);
    for (int k = 0; k < n; k++) {
        CHECK(b[k] == v(left, 0, k), "neighbor_allgather n=%d slot 0 item %d", n, k);
        CHECK(b[n + k] == v(right, 0, k), "neighbor_allgather n=%d slot 1 item %d", n, k);
    }
    /* allgatherv: slot 1 first in memory */
    MPI_Count rc[2] = {n, n};
    MPI_Aint rd[2] = {n, 0};
    RUN(Neighbor_allgatherv, Ineighbor_allgatherv, a, (MPI_Count)n, MPI_INT, b, rc, rd, MPI_INT,
        ring);
    for (int k = 0; k < n; k++) {
        CHECK(b[n + k] == v(left, 0, k), "neighbor_allgatherv n=%d slot 0 item %d", n, k);
        CHECK(b[k] == v(right, 0, k), "neighbor_allgatherv n=%d slot 1 item %d", n, k);
    }
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < n; k++)
            a[d * n + k] = v(rank, d, k);
    RUN(Neighbor_alltoall, Ineighbor_alltoall, a, (MPI_Count)n, MPI_INT, b, (MPI_Count)n, MPI_INT,
        ring);
    for (int k = 0; k < n; k++) {
        CHECK(b[k] == v(left, 1, k), "neighbor_alltoall n=%d slot 0 item %d", n, k);
        CHECK(b[n + k] == v(right, 0, k), "neighbor_alltoall n=%d slot 1 item %d", n, k);
    }
    /* alltoallv and w: one more item to the right, blocks swapped in memory */
    MPI_Count sc[2] = {n, n + 1}, rcv[2] = {n + 1, n};
    MPI_Aint sd[2] = {n + 1, 0}, rdv[2] = {n, 0};
    MPI_Aint sdb[2] = {(n + 1) * 4, 0}, rdb[2] = {n * 4, 0};
    MPI_Datatype t2[2] = {MPI_INT, MPI_INT};
    for (int w = 0; w < 2; w++) {
        for (int d = 0; d < 2; d++)
            for (int k = 0; k < sc[d]; k++)
                a[sd[d] + k] = v(rank, d + 2 * w, k);
        for (int k = 0; k < 2 * n + 1; k++)
            b[k] = -1;
        if (w)
            RUN(Neighbor_alltoallw, Ineighbor_alltoallw, a, sc, sdb, t2, b, rcv, rdb, t2, ring);
        else
            RUN(Neighbor_alltoallv, Ineighbor_alltoallv, a, sc, sd, MPI_INT, b, rcv, rdv, MPI_INT,
                ring);
        for (int k = 0; k < n + 1; k++)
            CHECK(b[rdv[0] + k] == v(left, 1 + 2 * w, k), "neighbor_alltoall%c n=%d slot 0 [%d]",
                  w ? 'w' : 'v', n, k);
        for (int k = 0; k < n; k++)
            CHECK(b[rdv[1] + k] == v(right, 2 * w, k), "neighbor_alltoall%c n=%d slot 1 [%d]",
                  w ? 'w' : 'v', n, k);
    }
    free(a);
    free(b);
}

/* A distributed graph: each rank receives from the two ranks before it and
 * sends to the two after it (repeated neighbours on 1 and 2 ranks). */
static void t_neighbor_graph(MPI_Comm g, int n) {
    int src[2] = {(rank - 1 + size) % size, (rank - 2 + 2 * size) % size};
    int *a = ints(2 * (size_t)n + 2), *b = ints(2 * (size_t)n + 2);
    for (int k = 0; k < n; k++)
        a[k] = v(rank, 0, k);
    MPI_Count rc[2] = {n, n};
    MPI_Aint rd[2] = {n, 0};
    RUN(Neighbor_allgatherv, Ineighbor_allgatherv, a, (MPI_Count)n, MPI_INT, b, rc, rd, MPI_INT, g);
    for (int k = 0; k < n; k++) {
        CHECK(b[n + k] == v(src[0], 0, k), "graph allgatherv n=%d in 0 item %d", n, k);
        CHECK(b[k] == v(src[1], 0, k), "graph allgatherv n=%d in 1 item %d", n, k);
    }
    /* out-neighbour i (rank+1+i) gets block i, which it files as in-neighbour i */
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < n; k++)
            a[d * n + k] = v(rank, d, k);
    MPI_Count c2[2] = {n, n};
    MPI_Aint db[2] = {0, (MPI_Aint)n * 4};
    MPI_Datatype t2[2] = {MPI_INT, MPI_INT};
    RUN(Neighbor_alltoallw, Ineighbor_alltoallw, a, c2, db, t2, b, c2, db, t2, g);
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < n; k++)
            CHECK(b[d * n + k] == v(src[d], d, k), "graph alltoallw n=%d in %d item %d", n, d, k);
    free(a);
    free(b);
}

/* Intercommunicator: even and odd world ranks (2 ranks and up). */
static void t_inter(MPI_Comm ic, int n) {
    int color = rank % 2, me = rank / 2, rsize;
    MPI_Comm_remote_size(ic, &rsize);
    /* world rank of remote rank i */
#define REMOTE(_i) (2 * (_i) + 1 - color)
    int *a = ints((size_t)(n + 1) * 4), *b = ints((size_t)(n + 1) * 4);
    /* Bcast from local rank 0 of the even group */
    int root = color == 0 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (int k = 0; k < n; k++)
        a[k] = rank == 0 ? v(0, 0, k) : -1;
    RUN(Bcast, Ibcast, a, (MPI_Count)n, MPI_INT, root, ic);
    if (color == 1)
        for (int k = 0; k < n; k++)
            CHECK(a[k] == v(0, 0, k), "inter bcast n=%d a[%d]=%d", n, k, a[k]);
    /* Allgatherv: remote rank i's n + i%2 items, in reverse order */
    MPI_Count rc[4];
    MPI_Aint rd[4];
    MPI_Count tot = 0;
    for (int i = rsize - 1; i >= 0; i--)
        rc[i] = n + i % 2, rd[i] = tot, tot += rc[i];
    for (int k = 0; k < n + 1; k++)
        a[k] = v(rank, 3, k);
    RUN(Allgatherv, Iallgatherv, a, (MPI_Count)(n + me % 2), MPI_INT, b, rc, rd, MPI_INT, ic);
    for (int i = 0; i < rsize; i++)
        for (int k = 0; k < rc[i]; k++)
            CHECK(b[rd[i] + k] == v(REMOTE(i), 3, k), "inter allgatherv n=%d from %d item %d", n, i,
                  k);
    /* Alltoall */
    for (int i = 0; i < rsize; i++)
        for (int k = 0; k < n; k++)
            a[i * n + k] = v(rank, REMOTE(i), k);
    RUN(Alltoall, Ialltoall, a, (MPI_Count)n, MPI_INT, b, (MPI_Count)n, MPI_INT, ic);
    for (int i = 0; i < rsize; i++)
        for (int k = 0; k < n; k++)
            CHECK(b[i * n + k] == v(REMOTE(i), rank, k), "inter alltoall n=%d from %d item %d", n,
                  i, k);
#undef REMOTE
    free(a);
    free(b);
}

/* A call that must fail with MPI_ERR_COUNT and name `fn` in its message. */
#define FAILS_COUNT(_fn, _call)                                                                    \
    do {                                                                                           \
        int rc_ = (_call), cls_ = -1, len_;                                                        \
        char msg_[MPI_MAX_ERROR_STRING] = "";                                                      \
        MPI_Error_class(rc_, &cls_);                                                               \
        MPI_Error_string(rc_, msg_, &len_);                                                        \
        CHECK(cls_ == MPI_ERR_COUNT, "%s: class %d, not MPI_ERR_COUNT (%s)", #_call, cls_, msg_);  \
        CHECK(strstr(msg_, _fn " on") != NULL, "%s: message does not name %s: %s", #_call, _fn,    \
              msg_);                                                                               \
    } while (0)

static void t_errors(MPI_Comm ring) {
    int buf[8] = {0}, out[64];
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Count cnt[4] = {1, 1, 1, 1};
    MPI_Aint dsp[4] = {0, 1, 2, 3};
    /* -2^32 and -2^40: low 32 bits zero, a count cut to int would read 0 */
    const MPI_Count neg[3] = {-1, -((MPI_Count)1 << 32), -((MPI_Count)1 << 40)};
    for (int i = 0; i < 3; i++) {
        FAILS_COUNT("MPI_Bcast_c", MPI_Bcast_c(buf, neg[i], MPI_INT, 0, MPI_COMM_WORLD));
        FAILS_COUNT("MPI_Iallreduce_c",
                    MPI_Iallreduce_c(buf, out, neg[i], MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
        FAILS_COUNT("MPI_Allgather_init_c",
                    MPI_Allgather_init_c(buf, 1, MPI_INT, out, neg[i], MPI_INT, MPI_COMM_WORLD,
                                         MPI_INFO_NULL, &rq));
        FAILS_COUNT("MPI_Neighbor_alltoall_c",
                    MPI_Neighbor_alltoall_c(buf, neg[i], MPI_INT, out, 1, MPI_INT, ring));
        cnt[size - 1] = neg[i];
        FAILS_COUNT("MPI_Allgatherv_c",
                    MPI_Allgatherv_c(buf, 1, MPI_INT, out, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
        FAILS_COUNT("MPI_Ialltoallv_c", MPI_Ialltoallv_c(buf, cnt, dsp, MPI_INT, out, cnt, dsp,
                                                         MPI_INT, MPI_COMM_WORLD, &rq));
        FAILS_COUNT("MPI_Reduce_scatter_init_c",
                    MPI_Reduce_scatter_init_c(buf, out, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                              MPI_INFO_NULL, &rq));
        MPI_Count nc[2] = {1, neg[i]};
        MPI_Aint nd[2] = {0, 4};
        MPI_Datatype t2[2] = {MPI_INT, MPI_INT};
        FAILS_COUNT("MPI_Neighbor_alltoallw_c",
                    MPI_Neighbor_alltoallw_c(buf, nc, nd, t2, out, nc, nd, t2, ring));
        cnt[size - 1] = 1;
    }
    CHECK(rq == MPI_REQUEST_NULL, "a failed call set its request");
    /* the message names the array and the index */
    cnt[size - 1] = -3;
    int rc = MPI_Allgatherv_c(buf, 1, MPI_INT, out, cnt, dsp, MPI_INT, MPI_COMM_WORLD), len;
    char msg[MPI_MAX_ERROR_STRING], want[64];
    MPI_Error_string(rc, msg, &len);
    snprintf(want, sizeof(want), "recvcounts[%d]=-3", size - 1);
    CHECK(strstr(msg, want) != NULL, "allgatherv_c error does not say %s: %s", want, msg);
}

/* 2 ranks: counts and displacements past INT_MAX. */
static int t_large(void) {
    const size_t n = ((size_t)1 << 31) + 64;
    char *buf = malloc(n);
    if (!buf) {
        fprintf(stderr, "[%d] cannot allocate %zu bytes\n", rank, n);
        return 1;
    }
    const size_t at[6] = {0, 1, n / 2, n / 2 + 1, n - 2, n - 1};
    if (rank == 0) {
        memset(buf, 0x5a, n);
        for (int i = 0; i < 6; i++)
            buf[at[i]] = (char)(i + 1);
    }
    mode = 0;
    RUN(Bcast, Ibcast, buf, (MPI_Count)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 6; i++)
        CHECK(buf[at[i]] == (char)(i + 1), "bcast of %zu bytes: byte %zu is %d", n, at[i],
              buf[at[i]]);
    CHECK(buf[12345] == 0x5a && buf[n - 3] == 0x5a, "bcast of %zu bytes: filler", n);
    /* Gatherv into a displacement past INT_MAX (the pages between stay untouched) */
    char mine[16];
    memset(mine, 'a' + rank, sizeof(mine));
    MPI_Count cnt[2] = {16, 16};
    MPI_Aint dsp[2] = {0, (MPI_Aint)n - 32};
    RUN(Gatherv, Igatherv, mine, 16, MPI_BYTE, buf, cnt, dsp, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 16; k++)
                CHECK(buf[dsp[r] + k] == 'a' + r, "gatherv at displacement %ld: byte %d",
                      (long)dsp[r], k);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "large")) {
        if (size != 2) {
            if (rank == 0)
                fprintf(stderr, "large: needs 2 ranks\n");
            MPI_Finalize();
            return 77;
        }
        errs += t_large();
    } else {
        int dims[1] = {size}, periods[1] = {1};
        MPI_Comm ring, graph, ic = MPI_COMM_NULL;
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        int src[2] = {(rank - 1 + size) % size, (rank - 2 + 2 * size) % size};
        int dst[2] = {(rank + 1) % size, (rank + 2) % size};
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
        if (size > 1) {
            MPI_Comm half;
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
            MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &ic);
            MPI_Comm_free(&half);
        }
        static const int counts[] = {0, 1, 5, 3000};
        for (mode = 0; mode < 3; mode++)
            for (int c = 0; c < 4; c++) {
                int n = counts[c];
                t_bcast_reduce(n);
                t_rooted(n);
                t_allgather_alltoall(n);
                t_reduce_scatter(n);
                t_neighbor_cart(ring, n);
                t_neighbor_graph(graph, n);
                if (ic != MPI_COMM_NULL)
                    t_inter(ic, n);
            }
        mode = 0;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
        t_errors(ring);
        if (ic != MPI_COMM_NULL)
            MPI_Comm_free(&ic);
        MPI_Comm_free(&graph);
        MPI_Comm_free(&ring);
    }
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return all != 0;
}
