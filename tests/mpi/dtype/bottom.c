/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_BOTTOM (a NULL buffer) with datatypes whose displacements are absolute addresses
 * (MPI_Get_address), in every kind of call that takes a buffer: Pack/Unpack (and _c,
 * external32), sends and receives of every mode, Sendrecv(_replace), Isendrecv,
 * persistent requests, matched receives, the collectives (blocking, non-blocking,
 * persistent, the v and w forms, reductions, scans, neighbourhood ones) and
 * Reduce_local; and the refusals: a NULL buffer whose data would lie at address zero
 * or in the first page (a relative datatype), which no process can map.
 */
#include "dtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cls(int err) {
    int c = -1;
    MPI_Error_class(err, &c);
    return c;
}

/* the data one "item" of the absolute type describes: three separate variables */
typedef struct {
    int i;
    double d[3];
    char c[5];
} vals_t;

static vals_t *va, *vb; /* heap, so that their addresses are anything but small */

static void fill(vals_t *v, int seed) {
    v->i = seed * 7 + 1;
    for (int k = 0; k < 3; k++)
        v->d[k] = seed + 0.25 * k;
    for (int k = 0; k < 5; k++)
        v->c[k] = (char)('a' + (seed + k) % 26);
}

/* A buffer argument for an absolute type made at q that reaches p instead: the operations
 * with one datatype for two buffers (reductions) take MPI_BOTTOM for one of them only. */
static void *at(const void *p, const void *q) {
    return (void *)((uintptr_t)p - (uintptr_t)q);
}

static int same(const vals_t *a, const vals_t *b) {
    return a->i == b->i && memcmp(a->d, b->d, sizeof(a->d)) == 0 &&
           memcmp(a->c, b->c, sizeof(a->c)) == 0;
}

/* a struct type of v's fields at their addresses (so its buffer is MPI_BOTTOM) */
static MPI_Datatype absolute_type(vals_t *v) {
    int bl[3] = {1, 3, 5};
    MPI_Aint d[3];
    MPI_Datatype t[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, nt;
    MPI_Get_address(&v->i, &d[0]);
    MPI_Get_address(v->d, &d[1]);
    MPI_Get_address(v->c, &d[2]);
    MPI_Type_create_struct(3, bl, d, t, &nt);
    MPI_Type_commit(&nt);
    return nt;
}

/* n ints at p, absolute, with extent `stride` ints (item k of a count is at p + k*stride) */
static MPI_Datatype absolute_ints(int *p, int n, int stride) {
    MPI_Aint d;
    MPI_Datatype h, nt;
    MPI_Get_address(p, &d);
    MPI_Type_create_hindexed_block(1, n, &d, MPI_INT, &h);
    MPI_Type_create_resized(h, d, (MPI_Aint)stride * (MPI_Aint)sizeof(int), &nt);
    MPI_Type_free(&h);
    MPI_Type_commit(&nt);
    return nt;
}

static void check_pack(void) {
    MPI_Datatype ta = absolute_type(va), tb = absolute_type(vb);
    char packed[256];
    int pos = 0, size = 0;
    fill(va, 3);
    memset(vb, 0, sizeof(*vb));
    MPI_Pack_size(1, ta, MPI_COMM_WORLD, &size);
    int err = MPI_Pack(MPI_BOTTOM, 1, ta, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
    CHECK(err == MPI_SUCCESS && pos == size, "Pack from MPI_BOTTOM: class %d, %d bytes", cls(err),
          pos);
    int upos = 0;
    err = MPI_Unpack(packed, pos, &upos, MPI_BOTTOM, 1, tb, MPI_COMM_WORLD);
    CHECK(err == MPI_SUCCESS && same(va, vb), "Unpack to MPI_BOTTOM: class %d", cls(err));

    MPI_Count cpos = 0, cupos = 0;
    memset(vb, 0, sizeof(*vb));
    MPI_Pack_c(MPI_BOTTOM, 1, ta, packed, sizeof(packed), &cpos, MPI_COMM_WORLD);
    err = MPI_Unpack_c(packed, cpos, &cupos, MPI_BOTTOM, 1, tb, MPI_COMM_WORLD);
    CHECK(err == MPI_SUCCESS && same(va, vb), "Pack_c/Unpack_c with MPI_BOTTOM: class %d",
          cls(err));

    MPI_Aint epos = 0, eupos = 0;
    memset(vb, 0, sizeof(*vb));
    err = MPI_Pack_external("external32", MPI_BOTTOM, 1, ta, packed, sizeof(packed), &epos);
    CHECK(err == MPI_SUCCESS, "Pack_external from MPI_BOTTOM: class %d", cls(err));
    err = MPI_Unpack_external("external32", packed, epos, &eupos, MPI_BOTTOM, 1, tb);
    CHECK(err == MPI_SUCCESS && same(va, vb), "Unpack_external to MPI_BOTTOM: class %d", cls(err));

    /* Reduce_local on absolute ints */
    int x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
    MPI_Datatype tx = absolute_ints(x, 4, 4), ty = absolute_ints(y, 4, 4);
    err = MPI_Reduce_local(at(x, y), MPI_BOTTOM, 1, ty, MPI_SUM);
    CHECK(err == MPI_SUCCESS && y[0] == 11 && y[3] == 44, "Reduce_local into MPI_BOTTOM: %d",
          cls(err));
    err = MPI_Reduce_local(MPI_BOTTOM, at(y, x), 1, tx, MPI_SUM);
    CHECK(err == MPI_SUCCESS && y[0] == 12 && y[3] == 48, "Reduce_local from MPI_BOTTOM: %d",
          cls(err));
    MPI_Type_free(&tx);
    MPI_Type_free(&ty);
    MPI_Type_free(&ta);
    MPI_Type_free(&tb);
}

/* point-to-point between ring neighbours (or to itself) */
static void check_p2p(void) {
    MPI_Datatype ta = absolute_type(va), tb = absolute_type(vb);
    int to = (rank + 1) % size, from = (rank + size - 1) % size, err;
    vals_t want;
    fill(&want, from);
    MPI_Request rq[2];
    MPI_Status st;
    const char *names[] = {"Send", "Ssend", "Bsend", "Rsend", "Isend", "Send_c", "Issend"};
    int bufsize = 4096;
    void *bbuf = malloc((size_t)bufsize);
    MPI_Buffer_attach(bbuf, bufsize);
    for (int mode = 0; mode < 7; mode++) {
        fill(va, rank);
        memset(vb, 0, sizeof(*vb));
        err = MPI_Irecv(MPI_BOTTOM, 1, tb, from, 40 + mode, MPI_COMM_WORLD, &rq[0]);
        CHECK(err == MPI_SUCCESS, "Irecv into MPI_BOTTOM: class %d", cls(err));
        MPI_Barrier(MPI_COMM_WORLD); /* Rsend: the receive is posted */
        switch (mode) {
        case 0:
            err = MPI_Send(MPI_BOTTOM, 1, ta, to, 40, MPI_COMM_WORLD);
            break;
        case 1:
            err = MPI_Ssend(MPI_BOTTOM, 1, ta, to, 41, MPI_COMM_WORLD);
            break;
        case 2:
            err = MPI_Bsend(MPI_BOTTOM, 1, ta, to, 42, MPI_COMM_WORLD);
            break;
        case 3:
            err = MPI_Rsend(MPI_BOTTOM, 1, ta, to, 43, MPI_COMM_WORLD);
            break;
        case 4:
            err = MPI_Isend(MPI_BOTTOM, 1, ta, to, 44, MPI_COMM_WORLD, &rq[1]);
            MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
            break;
        case 5:
            err = MPI_Send_c(MPI_BOTTOM, 1, ta, to, 45, MPI_COMM_WORLD);
            break;
        default:
            err = MPI_Issend(MPI_BOTTOM, 1, ta, to, 46, MPI_COMM_WORLD, &rq[1]);
            MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
            break;
        }
        CHECK(err == MPI_SUCCESS, "%s from MPI_BOTTOM: class %d", names[mode], cls(err));
        MPI_Wait(&rq[0], &st);
        CHECK(same(vb, &want), "%s from MPI_BOTTOM: wrong data", names[mode]);
    }
    MPI_Buffer_detach(&bbuf, &bufsize);
    free(bbuf);

    /* blocking receive, Sendrecv, Sendrecv_replace, Isendrecv */
    fill(va, rank);
    memset(vb, 0, sizeof(*vb));
    err = MPI_Sendrecv(MPI_BOTTOM, 1, ta, to, 50, MPI_BOTTOM, 1, tb, from, 50, MPI_COMM_WORLD, &st);
    CHECK(err == MPI_SUCCESS && same(vb, &want), "Sendrecv with MPI_BOTTOM: class %d", cls(err));
    fill(va, rank);
    err = MPI_Sendrecv_replace(MPI_BOTTOM, 1, ta, to, 51, from, 51, MPI_COMM_WORLD, &st);
    CHECK(err == MPI_SUCCESS && same(va, &want), "Sendrecv_replace of MPI_BOTTOM: class %d",
          cls(err));
    fill(va, rank);
    memset(vb, 0, sizeof(*vb));
    err = MPI_Isendrecv(MPI_BOTTOM, 1, ta, to, 52, MPI_BOTTOM, 1, tb, from, 52, MPI_COMM_WORLD,
                        &rq[0]);
    MPI_Wait(&rq[0], &st);
    CHECK(err == MPI_SUCCESS && same(vb, &want), "Isendrecv with MPI_BOTTOM: class %d", cls(err));
    fill(va, rank);
    err = MPI_Isendrecv_replace(MPI_BOTTOM, 1, ta, to, 53, from, 53, MPI_COMM_WORLD, &rq[0]);
    MPI_Wait(&rq[0], &st);
    CHECK(err == MPI_SUCCESS && same(va, &want), "Isendrecv_replace of MPI_BOTTOM: class %d",
          cls(err));

    /* persistent, matched, large-count receive */
    fill(va, rank);
    memset(vb, 0, sizeof(*vb));
    MPI_Send_init(MPI_BOTTOM, 1, ta, to, 54, MPI_COMM_WORLD, &rq[1]);
    err = MPI_Recv_init(MPI_BOTTOM, 1, tb, from, 54, MPI_COMM_WORLD, &rq[0]);
    MPI_Startall(2, rq);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    CHECK(err == MPI_SUCCESS && same(vb, &want), "Send_init/Recv_init with MPI_BOTTOM");
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    memset(vb, 0, sizeof(*vb));
    MPI_Isend(MPI_BOTTOM, 1, ta, to, 55, MPI_COMM_WORLD, &rq[1]);
    MPI_Message msg;
    MPI_Mprobe(from, 55, MPI_COMM_WORLD, &msg, &st);
    err = MPI_Mrecv(MPI_BOTTOM, 1, tb, &msg, &st);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    CHECK(err == MPI_SUCCESS && same(vb, &want), "Mrecv into MPI_BOTTOM: class %d", cls(err));
    memset(vb, 0, sizeof(*vb));
    MPI_Isend(MPI_BOTTOM, 1, ta, to, 56, MPI_COMM_WORLD, &rq[1]);
    err = MPI_Recv_c(MPI_BOTTOM, 1, tb, from, 56, MPI_COMM_WORLD, &st);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    CHECK(err == MPI_SUCCESS && same(vb, &want), "Recv_c into MPI_BOTTOM: class %d", cls(err));
    MPI_Type_free(&ta);
    MPI_Type_free(&tb);

    /* a large message (rendezvous: copied from and to the buffers' addresses) */
    int n = 40000, *big = malloc((size_t)n * sizeof(int)), *got = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        big[i] = rank * n + i;
        got[i] = -1;
    }
    MPI_Datatype tbig = absolute_ints(big, n, n), tgot = absolute_ints(got, n, n);
    err = MPI_Sendrecv(MPI_BOTTOM, 1, tbig, to, 57, MPI_BOTTOM, 1, tgot, from, 57, MPI_COMM_WORLD,
                       &st);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += got[i] != from * n + i;
    CHECK(err == MPI_SUCCESS && !bad, "a %d-int Sendrecv with MPI_BOTTOM: class %d, %d wrong", n,
          cls(err), bad);
    MPI_Type_free(&tbig);
    MPI_Type_free(&tgot);
    free(big);
    free(got);
}

/* collectives: each rank's data at absolute addresses */
static void check_coll(void) {
    int n = size, err;
    int *s = calloc((size_t)n * 2, sizeof(int)), *r = calloc((size_t)n * 2, sizeof(int));
    int *ref = calloc((size_t)n * 2, sizeof(int));
    /* one int per item, stride 1: item k is s[k] (r[k]) */
    MPI_Datatype ts = absolute_ints(s, 1, 1), tr = absolute_ints(r, 1, 1);
    int *counts = malloc((size_t)n * sizeof(int)), *displs = malloc((size_t)n * sizeof(int));
    MPI_Datatype *types = malloc((size_t)n * sizeof(MPI_Datatype));
    int *wdispls = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        counts[i] = 1;
        displs[i] = i;
        wdispls[i] = 0;
    }
#define RESET(_v)                                                                                  \
    do {                                                                                           \
        for (int i_ = 0; i_ < 2 * n; i_++) {                                                       \
            s[i_] = (_v) + i_;                                                                     \
            r[i_] = -1;                                                                            \
        }                                                                                          \
    } while (0)
#define OK(_what) CHECK(err == MPI_SUCCESS, "%s with MPI_BOTTOM: class %d", _what, cls(err))

    RESET(100 * rank);
    err = MPI_Bcast(MPI_BOTTOM, 2, ts, 0, MPI_COMM_WORLD);
    OK("Bcast");
    CHECK(s[0] == 0 && s[1] == 1, "Bcast data %d %d", s[0], s[1]);

    RESET(100 * rank);
    err = MPI_Allreduce(MPI_BOTTOM, MPI_BOTTOM, 0, ts, MPI_SUM, MPI_COMM_WORLD);
    OK("Allreduce of nothing");
    err = MPI_Allreduce(at(s, r), MPI_BOTTOM, 2, tr, MPI_SUM, MPI_COMM_WORLD);
    OK("Allreduce into MPI_BOTTOM");
    CHECK(r[0] == 100 * n * (n - 1) / 2 && r[1] == r[0] + n, "Allreduce data %d", r[0]);
    RESET(100 * rank);
    err = MPI_Reduce(MPI_BOTTOM, rank == 0 ? at(r, s) : NULL, 2, ts, MPI_SUM, 0, MPI_COMM_WORLD);
    OK("Reduce from MPI_BOTTOM");
    CHECK(rank || r[0] == 100 * n * (n - 1) / 2, "Reduce data %d", r[0]);
    RESET(100 * rank);
    err = MPI_Scan(MPI_BOTTOM, at(r, s), 1, ts, MPI_SUM, MPI_COMM_WORLD);
    OK("Scan");
    CHECK(r[0] == 100 * rank * (rank + 1) / 2, "Scan data %d", r[0]);
    RESET(100 * rank);
    err = MPI_Exscan(at(s, r), MPI_BOTTOM, 1, tr, MPI_SUM, MPI_COMM_WORLD);
    OK("Exscan");
    CHECK(rank == 0 || r[0] == 100 * rank * (rank - 1) / 2, "Exscan data %d", r[0]);
    RESET(100 * rank);
    err = MPI_Reduce_scatter_block(MPI_BOTTOM, at(r, s), 1, ts, MPI_SUM, MPI_COMM_WORLD);
    OK("Reduce_scatter_block");
    CHECK(r[0] == 100 * n * (n - 1) / 2 + n * rank, "Reduce_scatter_block data %d", r[0]);
    RESET(100 * rank);
    err = MPI_Reduce_scatter(at(s, r), MPI_BOTTOM, counts, tr, MPI_SUM, MPI_COMM_WORLD);
    OK("Reduce_scatter");

    RESET(100 * rank);
    err = MPI_Gather(MPI_BOTTOM, 1, ts, r, 1, MPI_INT, 0, MPI_COMM_WORLD);
    OK("Gather from MPI_BOTTOM");
    for (int i = 0; rank == 0 && i < n; i++)
        CHECK(r[i] == 100 * i, "Gather data [%d] = %d", i, r[i]);
    RESET(100 * rank);
    err = MPI_Gatherv(s, 1, MPI_INT, MPI_BOTTOM, counts, displs, tr, 0, MPI_COMM_WORLD);
    OK("Gatherv into MPI_BOTTOM");
    for (int i = 0; rank == 0 && i < n; i++)
        CHECK(r[i] == 100 * i, "Gatherv data [%d] = %d", i, r[i]);
    RESET(100 * rank);
    err = MPI_Scatter(MPI_BOTTOM, 1, ts, r, 1, MPI_INT, 0, MPI_COMM_WORLD);
    OK("Scatter");
    CHECK(r[0] == rank, "Scatter data %d", r[0]);
    RESET(100 * rank);
    err = MPI_Scatterv(s, counts, displs, MPI_INT, MPI_BOTTOM, 1, tr, 0, MPI_COMM_WORLD);
    OK("Scatterv");
    CHECK(r[0] == rank, "Scatterv data %d", r[0]);
    RESET(100 * rank);
    err = MPI_Allgather(MPI_BOTTOM, 1, ts, MPI_BOTTOM, 1, tr, MPI_COMM_WORLD);
    OK("Allgather");
    for (int i = 0; i < n; i++)
        CHECK(r[i] == 100 * i, "Allgather data [%d] = %d", i, r[i]);
    RESET(100 * rank);
    err = MPI_Allgatherv(MPI_BOTTOM, 1, ts, MPI_BOTTOM, counts, displs, tr, MPI_COMM_WORLD);
    OK("Allgatherv");
    for (int i = 0; i < n; i++)
        CHECK(r[i] == 100 * i, "Allgatherv data [%d] = %d", i, r[i]);
    RESET(100 * rank);
    err = MPI_Alltoall(MPI_BOTTOM, 1, ts, MPI_BOTTOM, 1, tr, MPI_COMM_WORLD);
    OK("Alltoall");
    for (int i = 0; i < n; i++)
        CHECK(r[i] == 100 * i + rank, "Alltoall data [%d] = %d", i, r[i]);
    RESET(100 * rank);
    err = MPI_Alltoallv(MPI_BOTTOM, counts, displs, ts, MPI_BOTTOM, counts, displs, tr,
                        MPI_COMM_WORLD);
    OK("Alltoallv");
    for (int i = 0; i < n; i++)
        CHECK(r[i] == 100 * i + rank, "Alltoallv data [%d] = %d", i, r[i]);
    /* Alltoallw: a type per peer, the block of peer i at its own absolute address */
    RESET(100 * rank);
    MPI_Datatype *stypes = malloc((size_t)n * sizeof(MPI_Datatype));
    for (int i = 0; i < n; i++) {
        stypes[i] = absolute_ints(&s[i], 1, 1);
        types[i] = absolute_ints(&r[i], 1, 1);
    }
    err = MPI_Alltoallw(MPI_BOTTOM, counts, wdispls, stypes, MPI_BOTTOM, counts, wdispls, types,
                        MPI_COMM_WORLD);
    OK("Alltoallw");
    for (int i = 0; i < n; i++)
        CHECK(r[i] == 100 * i + rank, "Alltoallw data [%d] = %d", i, r[i]);
    for (int i = 0; i < n; i++) {
        MPI_Type_free(&stypes[i]);
        MPI_Type_free(&types[i]);
    }
    free(stypes);

    /* non-blocking and persistent */
    MPI_Request rq;
    RESET(100 * rank);
    err = MPI_Ibcast(MPI_BOTTOM, 2, ts, 0, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    OK("Ibcast");
    CHECK(s[0] == 0 && s[1] == 1, "Ibcast data %d %d", s[0], s[1]);
    RESET(100 * rank);
    err = MPI_Iallreduce(at(s, r), MPI_BOTTOM, 1, tr, MPI_MAX, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    OK("Iallreduce");
    CHECK(r[0] == 100 * (n - 1), "Iallreduce data %d", r[0]);
    RESET(100 * rank);
    err = MPI_Allgather_init(MPI_BOTTOM, 1, ts, MPI_BOTTOM, 1, tr, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &rq);
    MPI_Start(&rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Request_free(&rq);
    OK("Allgather_init");
    for (int i = 0; i < n; i++)
        CHECK(r[i] == 100 * i, "Allgather_init data [%d] = %d", i, r[i]);
    RESET(100 * rank);
    err = MPI_Bcast_c(MPI_BOTTOM, 2, ts, 0, MPI_COMM_WORLD);
    OK("Bcast_c");

    /* a ring: neighbour allgather */
    MPI_Comm ring;
    int dims = n, period = 1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &period, 0, &ring);
    RESET(100 * rank);
    err = MPI_Neighbor_allgather(MPI_BOTTOM, 1, ts, MPI_BOTTOM, 1, tr, ring);
    OK("Neighbor_allgather");
    CHECK(r[0] == 100 * ((rank + n - 1) % n) && r[1] == 100 * ((rank + 1) % n),
          "Neighbor_allgather data %d %d", r[0], r[1]);
    MPI_Comm_free(&ring);

    MPI_Type_free(&ts);
    MPI_Type_free(&tr);
    free(s);
    free(r);
    free(ref);
    free(counts);
    free(displs);
    free(types);
    free(wdispls);
#undef RESET
#undef OK
}

/* a NULL buffer of a relative type: its data would be at address 0, or 8 */
static void check_refusals(void) {
    char packed[64];
    int pos = 0, err;
    MPI_Comm self = MPI_COMM_SELF;
    err = MPI_Send(NULL, 1, MPI_INT, 0, 1, self);
    CHECK(cls(err) == MPI_ERR_BUFFER, "Send(NULL, 1, MPI_INT): class %d", cls(err));
    err = MPI_Recv(NULL, 1, MPI_INT, 0, 1, self, MPI_STATUS_IGNORE);
    CHECK(cls(err) == MPI_ERR_BUFFER, "Recv(NULL, 1, MPI_INT): class %d", cls(err));
    err = MPI_Pack(NULL, 1, MPI_INT, packed, sizeof(packed), &pos, self);
    CHECK(cls(err) == MPI_ERR_BUFFER, "Pack(NULL, 1, MPI_INT): class %d", cls(err));
    pos = 0;
    err = MPI_Unpack(packed, sizeof(packed), &pos, NULL, 1, MPI_INT, self);
    CHECK(cls(err) == MPI_ERR_BUFFER, "Unpack to NULL: class %d", cls(err));
    /* the packed buffer is bytes, never MPI_BOTTOM */
    pos = 0;
    err = MPI_Pack(packed, 1, MPI_INT, NULL, 64, &pos, self);
    CHECK(cls(err) == MPI_ERR_BUFFER, "Pack to a NULL outbuf: class %d", cls(err));
    /* an int 8 bytes in, relative: address 8 is in the page no process maps */
    MPI_Aint d = 8;
    int one = 1;
    MPI_Datatype t8, up;
    MPI_Type_create_hindexed(1, &one, &d, MPI_INT, &t8);
    MPI_Type_commit(&t8);
    err = MPI_Send(NULL, 1, t8, 0, 2, self);
    CHECK(cls(err) == MPI_ERR_BUFFER, "Send(NULL) of an int at displacement 8: class %d", cls(err));
    err = MPI_Bcast(NULL, 1, t8, 0, self);
    CHECK(cls(err) == MPI_ERR_BUFFER, "Bcast(NULL) of an int at displacement 8: class %d",
          cls(err));
    /* ... and an absolute type whose later items step down to address 0 */
    MPI_Aint a;
    MPI_Get_address(&va->i, &a);
    MPI_Type_create_hindexed(1, &one, &a, MPI_INT, &up);
    MPI_Datatype down;
    MPI_Type_create_resized(up, a, -a, &down);
    MPI_Type_commit(&down);
    err = MPI_Send(NULL, 2, down, 0, 3, self);
    CHECK(cls(err) == MPI_ERR_BUFFER, "Send(NULL) of items down to address 0: class %d", cls(err));
    MPI_Type_free(&down);
    MPI_Type_free(&up);
    MPI_Type_free(&t8);
    /* nothing to move: NULL is fine */
    err = MPI_Send(NULL, 0, MPI_INT, 0, 4, self);
    CHECK(err == MPI_SUCCESS, "Send(NULL, 0): class %d", cls(err));
    err = MPI_Recv(NULL, 0, MPI_INT, 0, 4, self, MPI_STATUS_IGNORE);
    CHECK(err == MPI_SUCCESS, "Recv(NULL, 0): class %d", cls(err));
    pos = 0;
    err = MPI_Pack(NULL, 0, MPI_INT, NULL, 0, &pos, self);
    CHECK(err == MPI_SUCCESS, "Pack(NULL, 0): class %d", cls(err));
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    va = malloc(sizeof(*va));
    vb = malloc(sizeof(*vb));
    check_pack();
    check_p2p();
    check_coll();
    check_refusals();
    free(va);
    free(vb);
    return dtest_finish();
}
