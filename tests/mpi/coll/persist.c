/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-4 persistent collectives: every MPI_<Coll>_init form, each started six
 * times with new buffer contents before every start and checked against a
 * serial reference after every completion. The starts go one at a time
 * (Start + Wait), all at once on two communicators (Startall + Waitall,
 * Testall polling, Waitsome, Waitany) and one at a time polled with Test and
 * MPI_Request_get_status, and in reverse order with blocking collectives
 * between the starts. Also: MPI_IN_PLACE forms, derived datatypes freed
 * by the user right after init, MPI_Request_free of an active request
 * (MPI_ERR_REQUEST, nothing harmed) and of inactive ones, and the
 * MPI_ERR_COMM of MPI_Scan_init on an intercommunicator. Argument: the count
 * (default 50).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errs, n;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && errs++ < 10) {                                                             \
            fprintf(stderr, "[%d] ", rank);                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define OK(_call)                                                                                  \
    do {                                                                                           \
        int rc_ = (_call);                                                                         \
        CHECK(rc_ == MPI_SUCCESS, "%s failed: %d", #_call, rc_);                                   \
    } while (0)

/* what rank r contributes at index j in start `it` */
static int val(int r, int j, int it) {
    return (r + 1) * 100000 + j * 3 + it * 7;
}

enum {
    BARRIER,
    BCAST, /* vector type (every other int), freed after init */
    REDUCE,
    REDUCE_INPLACE,
    ALLREDUCE,
    ALLREDUCE_INPLACE,
    GATHER,
    GATHERV,
    SCATTER,
    SCATTERV,
    ALLGATHER,
    ALLGATHER_INPLACE,
    ALLGATHERV,
    ALLTOALL,
    ALLTOALLV,
    ALLTOALLW, /* contiguous type, freed after init */
    REDUCE_SCATTER,
    REDUCE_SCATTER_BLOCK,
    SCAN,
    EXSCAN,
    NKINDS
};
static const char *names[NKINDS] = {"barrier",        "bcast",          "reduce",
                                    "reduce_inplace", "allreduce",      "allreduce_inplace",
                                    "gather",         "gatherv",        "scatter",
                                    "scatterv",       "allgather",      "allgather_inplace",
                                    "allgatherv",     "alltoall",       "alltoallv",
                                    "alltoallw",      "reduce_scatter", "reduce_scatter_block",
                                    "scan",           "exscan"};

typedef struct {
    int kind;
    MPI_Comm comm;
    int *s, *r;
    MPI_Request req;
} pcoll_t;

static size_t bufn;            /* ints per buffer */
static int *vcounts, *vdispls; /* Gatherv/Scatterv/Allgatherv: n - r ints at r * (n + 1) */
static int *a2a_sc, *a2a_sd, *a2a_rc, *a2a_rd, *a2a_sdb, *a2a_rdb; /* Alltoallv/w */
static int *rs_counts;                                             /* Reduce_scatter */

static int a2a_count(int s, int d) {
    return n / 2 + (s + 2 * d) % 3;
}
static int rs_count(int r) {
    return n / 2 + r;
}
static int rs_offset(int r) {
    int o = 0;
    for (int i = 0; i < r; i++)
        o += rs_count(i);
    return o;
}
static int root_of(int kind) {
    switch (kind) {
    case BCAST:
    case SCATTERV:
        return size - 1;
    case GATHERV:
        return size > 1 ? 1 : 0;
    default:
        return 0;
    }
}

static void init_one(pcoll_t *p, int kind, MPI_Comm comm) {
    p->kind = kind;
    p->comm = comm;
    p->s = calloc(bufn, sizeof(int));
    p->r = calloc(bufn, sizeof(int));
    int root = root_of(kind);
    int *s = p->s, *r = p->r;
    MPI_Request *q = &p->req;
    MPI_Datatype t;
    switch (kind) {
    case BARRIER:
        OK(MPI_Barrier_init(comm, MPI_INFO_NULL, q));
        break;
    case BCAST:
        MPI_Type_vector(n, 1, 2, MPI_INT, &t);
        MPI_Type_commit(&t);
        OK(MPI_Bcast_init(r, 1, t, root, comm, MPI_INFO_NULL, q));
        MPI_Type_free(&t);
        break;
    case REDUCE:
        OK(MPI_Reduce_init(s, r, n, MPI_INT, MPI_SUM, root, comm, MPI_INFO_NULL, q));
        break;
    case REDUCE_INPLACE:
        OK(MPI_Reduce_init(rank == root ? MPI_IN_PLACE : s, r, n, MPI_INT, MPI_SUM, root, comm,
                           MPI_INFO_NULL, q));
        break;
    case ALLREDUCE:
        OK(MPI_Allreduce_init(s, r, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
        break;
    case ALLREDUCE_INPLACE:
        OK(MPI_Allreduce_init(MPI_IN_PLACE, r, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
        break;
    case GATHER:
        OK(MPI_Gather_init(s, n, MPI_INT, r, n, MPI_INT, root, comm, MPI_INFO_NULL, q));
        break;
    case GATHERV:
        OK(MPI_Gatherv_init(s, vcounts[rank], MPI_INT, r, vcounts, vdispls, MPI_INT, root, comm,
                            MPI_INFO_NULL, q));
        break;
    case SCATTER:
        OK(MPI_Scatter_init(s, n, MPI_INT, r, n, MPI_INT, root, comm, MPI_INFO_NULL, q));
        break;
    case SCATTERV:
        OK(MPI_Scatterv_init(s, vcounts, vdispls, MPI_INT, r, vcounts[rank], MPI_INT, root, comm,
                             MPI_INFO_NULL, q));
        break;
    case ALLGATHER:
        OK(MPI_Allgather_init(s, n, MPI_INT, r, n, MPI_INT, comm, MPI_INFO_NULL, q));
        break;
    case ALLGATHER_INPLACE:
        OK(MPI_Allgather_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, comm,
                              MPI_INFO_NULL, q));
        break;
    case ALLGATHERV:
        OK(MPI_Allgatherv_init(s, vcounts[rank], MPI_INT, r, vcounts, vdispls, MPI_INT, comm,
                               MPI_INFO_NULL, q));
        break;
    case ALLTOALL:
        OK(MPI_Alltoall_init(s, n, MPI_INT, r, n, MPI_INT, comm, MPI_INFO_NULL, q));
        break;
    case ALLTOALLV:
        OK(MPI_Alltoallv_init(s, a2a_sc, a2a_sd, MPI_INT, r, a2a_rc, a2a_rd, MPI_INT, comm,
                              MPI_INFO_NULL, q));
        break;
    case ALLTOALLW: {
        MPI_Type_contiguous(1, MPI_INT, &t);
        MPI_Type_commit(&t);
        MPI_Datatype *ts = malloc((size_t)size * sizeof(*ts));
        for (int i = 0; i < size; i++)
            ts[i] = t;
        OK(MPI_Alltoallw_init(s, a2a_sc, a2a_sdb, ts, r, a2a_rc, a2a_rdb, ts, comm, MPI_INFO_NULL,
                              q));
        MPI_Type_free(&t);
        free(ts);
        break;
    }
    case REDUCE_SCATTER:
        OK(MPI_Reduce_scatter_init(s, r, rs_counts, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
        break;
    case REDUCE_SCATTER_BLOCK:
        OK(MPI_Reduce_scatter_block_init(s, r, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
        break;
    case SCAN:
        OK(MPI_Scan_init(s, r, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
        break;
    case EXSCAN:
        OK(MPI_Exscan_init(s, r, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, q));
        break;
    }
}

/* New contents before a start: send buffers from val(), receive buffers -1
 * (in-place ones hold this rank's contribution). */
static void fill(pcoll_t *p, int it) {
    int *s = p->s, *r = p->r;
    for (size_t j = 0; j < bufn; j++) {
        s[j] = val(rank, (int)j, it);
        r[j] = -1;
    }
    int root = root_of(p->kind);
    if (p->kind == BCAST && rank == root)
        for (int j = 0; j < n; j++)
            r[2 * j] = val(root, j, it);
    if ((p->kind == REDUCE_INPLACE && rank == root) || p->kind == ALLREDUCE_INPLACE)
        for (int j = 0; j < n; j++)
            r[j] = val(rank, j, it);
    if (p->kind == ALLGATHER_INPLACE)
        for (int j = 0; j < n; j++)
            r[rank * n + j] = val(rank, j, it);
}

static int sum_upto(int hi, int j, int it) { /* sum of val(s, j, it) for s < hi */
    int t = 0;
    for (int s = 0; s < hi; s++)
        t += val(s, j, it);
    return t;
}

static void check(pcoll_t *p, int it) {
    const int *r = p->r;
    int root = root_of(p->kind), bad = -1, got = 0, want = 0;
#define EXPECT(_idx, _want)                                                                        \
    do {                                                                                           \
        int i_ = (_idx), w_ = (_want);                                                             \
        if (bad < 0 && r[i_] != w_) {                                                              \
            bad = i_;                                                                              \
            got = r[i_];                                                                           \
            want = w_;                                                                             \
        }                                                                                          \
    } while (0)
    switch (p->kind) {
    case BARRIER:
        break;
    case BCAST:
        for (int j = 0; j < n; j++) {
            EXPECT(2 * j, val(root, j, it));
            EXPECT(2 * j + 1, -1);
        }
        break;
    case REDUCE:
    case REDUCE_INPLACE:
        if (rank == root)
            for (int j = 0; j < n; j++)
                EXPECT(j, sum_upto(size, j, it));
        break;
    case ALLREDUCE:
    case ALLREDUCE_INPLACE:
        for (int j = 0; j < n; j++)
            EXPECT(j, sum_upto(size, j, it));
        break;
    case GATHER:
        if (rank == root)
            for (int s = 0; s < size; s++)
                for (int j = 0; j < n; j++)
                    EXPECT(s * n + j, val(s, j, it));
        break;
    case GATHERV:
        if (rank != root)
            break;
        /* fall through */
    case ALLGATHERV:
        for (int s = 0; s < size; s++)
            for (int j = 0; j <= n; j++)
                EXPECT(vdispls[s] + j, j < vcounts[s] ? val(s, j, it) : -1);
        break;
    case SCATTER:
        for (int j = 0; j < n; j++)
            EXPECT(j, val(root, rank * n + j, it));
        break;
    case SCATTERV:
        for (int j = 0; j <= n; j++)
            EXPECT(j, j < vcounts[rank] ? val(root, vdispls[rank] + j, it) : -1);
        break;
    case ALLGATHER:
    case ALLGATHER_INPLACE:
        for (int s = 0; s < size; s++)
            for (int j = 0; j < n; j++)
                EXPECT(s * n + j, val(s, j, it));
        break;
    case ALLTOALL:
        for (int s = 0; s < size; s++)
            for (int j = 0; j < n; j++)
                EXPECT(s * n + j, val(s, rank * n + j, it));
        break;
    case ALLTOALLV:
    case ALLTOALLW:
        for (int s = 0; s < size; s++)
            for (int j = 0; j < n; j++)
                EXPECT(s * n + j, j < a2a_count(s, rank) ? val(s, rank * n + j, it) : -1);
        break;
    case REDUCE_SCATTER:
        for (int j = 0; j <= rs_count(rank); j++)
            EXPECT(j, j < rs_count(rank) ? sum_upto(size, rs_offset(rank) + j, it) : -1);
        break;
    case REDUCE_SCATTER_BLOCK:
        for (int j = 0; j < n; j++)
            EXPECT(j, sum_upto(size, rank * n + j, it));
        break;
    case SCAN:
        for (int j = 0; j < n; j++)
            EXPECT(j, sum_upto(rank + 1, j, it));
        break;
    case EXSCAN:
        if (rank > 0)
            for (int j = 0; j < n; j++)
                EXPECT(j, sum_upto(rank, j, it));
        break;
    }
#undef EXPECT
    CHECK(bad < 0, "%s (start %d, %s): index %d is %d, expected %d", names[p->kind], it,
          p->comm == MPI_COMM_WORLD ? "world" : "dup", bad, got, want);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    n = argc > 1 ? atoi(argv[1]) : 50;
    if (n < 8)
        n = 8;
    bufn = 2 * (size_t)(n + 2) * (size_t)size;

    vcounts = malloc(9 * (size_t)size * sizeof(int));
    vdispls = vcounts + size;
    a2a_sc = vdispls + size;
    a2a_sd = a2a_sc + size;
    a2a_rc = a2a_sd + size;
    a2a_rd = a2a_rc + size;
    a2a_sdb = a2a_rd + size;
    a2a_rdb = a2a_sdb + size;
    rs_counts = a2a_rdb + size;
    for (int i = 0; i < size; i++) {
        vcounts[i] = n - i;
        vdispls[i] = i * (n + 1);
        a2a_sc[i] = a2a_count(rank, i);
        a2a_rc[i] = a2a_count(i, rank);
        a2a_sd[i] = a2a_rd[i] = i * n;
        a2a_sdb[i] = a2a_rdb[i] = i * n * (int)sizeof(int);
        rs_counts[i] = rs_count(i);
    }

    /* every kind on MPI_COMM_WORLD, and a few on a duplicate, in one array */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    static const int on_dup[] = {ALLREDUCE, BCAST, ALLTOALL, SCAN};
    enum { NDUP = sizeof(on_dup) / sizeof(on_dup[0]), NP = NKINDS + NDUP };
    pcoll_t pc[NP];
    MPI_Request reqs[NP];
    for (int k = 0; k < NKINDS; k++)
        init_one(&pc[k], k, MPI_COMM_WORLD);
    for (int k = 0; k < NDUP; k++)
        init_one(&pc[NKINDS + k], on_dup[k], dup);
    /* the arrays bound at init are copied: scribbling on them changes nothing */
    for (int i = 0; i < size; i++)
        vcounts[i] = a2a_sc[i] = a2a_rc[i] = rs_counts[i] = -7;
    for (int i = 0; i < size; i++) {
        vcounts[i] = n - i;
        a2a_sc[i] = a2a_count(rank, i);
        a2a_rc[i] = a2a_count(i, rank);
        rs_counts[i] = rs_count(i);
    }
    for (int k = 0; k < NP; k++)
        reqs[k] = pc[k].req;

    /* an inactive persistent request: complete at once, empty status */
    int flag = 0;
    OK(MPI_Request_get_status(reqs[ALLREDUCE], &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "Request_get_status of an inactive request: flag 0");
    OK(MPI_Wait(&reqs[ALLREDUCE], MPI_STATUS_IGNORE));
    CHECK(reqs[ALLREDUCE] != MPI_REQUEST_NULL, "Wait on an inactive request freed it");

    for (int it = 0; it < 6; it++) {
        for (int k = 0; k < NP; k++)
            fill(&pc[k], it);
        switch (it) {
        case 0: /* one at a time */
            for (int k = 0; k < NP; k++) {
                OK(MPI_Start(&reqs[k]));
                OK(MPI_Wait(&reqs[k], MPI_STATUS_IGNORE));
            }
            break;
        case 1: /* all at once, on two communicators */
            OK(MPI_Startall(NP, reqs));
            OK(MPI_Waitall(NP, reqs, MPI_STATUSES_IGNORE));
            break;
        case 2: /* all at once, polled */
            OK(MPI_Startall(NP, reqs));
            for (flag = 0; !flag;)
                OK(MPI_Testall(NP, reqs, &flag, MPI_STATUSES_IGNORE));
            break;
        case 3: /* one at a time, polled with Request_get_status and Test */
            for (int k = 0; k < NP; k++) {
                OK(MPI_Start(&reqs[k]));
                for (flag = 0; !flag;)
                    OK(MPI_Request_get_status(reqs[k], &flag, MPI_STATUS_IGNORE));
                for (flag = 0; !flag;)
                    OK(MPI_Test(&reqs[k], &flag, MPI_STATUS_IGNORE));
            }
            break;
        case 5: /* in reverse order, with blocking collectives taking tags in between */
            for (int k = NP - 1; k >= 0; k--) {
                int one = 1, sum = 0;
                MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, pc[k].comm);
                OK(MPI_Start(&reqs[k]));
                MPI_Bcast(&one, 1, MPI_INT, 0, pc[k].comm);
                CHECK(sum == size, "blocking Allreduce between starts: %d", sum);
            }
            OK(MPI_Waitall(NP, reqs, MPI_STATUSES_IGNORE));
            break;
        case 4: { /* Waitsome for half, Waitany for the rest */
            OK(MPI_Startall(NP, reqs));
            int done = 0, outcount, idx[NP];
            while (done < NP / 2) {
                OK(MPI_Waitsome(NP, reqs, &outcount, idx, MPI_STATUSES_IGNORE));
                CHECK(outcount != MPI_UNDEFINED && outcount > 0, "Waitsome: outcount %d", outcount);
                done += outcount > 0 ? outcount : NP;
            }
            for (;;) {
                int i;
                OK(MPI_Waitany(NP, reqs, &i, MPI_STATUS_IGNORE));
                if (i == MPI_UNDEFINED)
                    break;
            }
            break;
        }
        }
        for (int k = 0; k < NP; k++) {
            CHECK(reqs[k] == pc[k].req, "%s: handle changed by completion", names[pc[k].kind]);
            check(&pc[k], it);
        }
    }

    /* freeing an active persistent collective is erroneous: MPI_ERR_REQUEST, and
     * the request still completes with the right result */
    fill(&pc[ALLREDUCE], 6);
    OK(MPI_Start(&reqs[ALLREDUCE]));
    MPI_Request h = reqs[ALLREDUCE];
    int rc = MPI_Request_free(&reqs[ALLREDUCE]), cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "Request_free of an active request: class %d", cls);
    CHECK(reqs[ALLREDUCE] == h, "Request_free of an active request changed the handle");
    OK(MPI_Wait(&reqs[ALLREDUCE], MPI_STATUS_IGNORE));
    check(&pc[ALLREDUCE], 6);
    /* the other requests still work after it */
    fill(&pc[ALLTOALLW], 7);
    fill(&pc[BCAST], 7);
    OK(MPI_Start(&reqs[ALLTOALLW]));
    OK(MPI_Start(&reqs[BCAST]));
    OK(MPI_Waitall(2, (MPI_Request[]){reqs[ALLTOALLW], reqs[BCAST]}, MPI_STATUSES_IGNORE));
    check(&pc[ALLTOALLW], 7);
    check(&pc[BCAST], 7);

    /* inactive: free */
    for (int k = 0; k < NP; k++) {
        OK(MPI_Request_free(&reqs[k]));
        CHECK(reqs[k] == MPI_REQUEST_NULL, "Request_free left handle %d", k);
        free(pc[k].s);
        free(pc[k].r);
    }
    MPI_Comm_free(&dup);
    free(vcounts);

    /* intercommunicators (comm/inter_persist tests the _init forms there): Scan
     * and Exscan are not defined on them, and the error names the call */
    if (size >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        MPI_Request q = MPI_REQUEST_NULL;
        int one = 1, sum = 0;
        rc = MPI_Scan_init(&one, &sum, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &q);
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
        CHECK(cls == MPI_ERR_COMM && strstr(msg, "MPI_Scan_init"),
              "Scan_init on an intercommunicator: class %d (%s)", cls, msg);
        CHECK(q == MPI_REQUEST_NULL, "failed Scan_init set the request");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }

    int total;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
