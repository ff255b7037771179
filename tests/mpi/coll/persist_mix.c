/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several different persistent collectives (and neighbourhood ones on a
 * periodic Cartesian communicator, whose left and right neighbours coincide on
 * 1 and 2 ranks) started together and completed by one MPI_Waitall, for many
 * rounds with new data in every round and every result checked. Rounds cycle
 * through: MPI_Startall in init order; MPI_Start one at a time in init order;
 * MPI_Start in an order that differs between ranks (a rotation by rank); and
 * MPI_Startall over a rank-dependent permutation with a blocking MPI_Allreduce
 * called at a different point of the starts on each rank. MPI-4.1 6.13
 * allows all of these: persistent collectives match by the order of their
 * init calls, never with blocking or non-blocking collectives. The operations
 * move different amounts, so a message taken by the wrong operation shows up
 * as a truncation or as wrong data (or a hang). Argument: the base count in
 * ints (testlist runs eager and rendezvous sizes).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && errs++ < 10) {                                                             \
            fprintf(stderr, "[%d] ", rank);                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* what rank r contributes at index j of operation k in round it (to rank d) */
static int val(int r, int d, int j, int k, int it) {
    return (r + 1) * 1000003 + d * 10007 + j * 3 + k * 101 + it * 7;
}

enum {
    BCAST,
    ALLREDUCE,
    REDUCE,
    ALLGATHER,
    ALLTOALL,
    ALLTOALLV,
    GATHER,
    SCATTER,
    BARRIER,
    SCAN,
    NB_ALLTOALLV,
    NB_ALLGATHER,
    NKINDS
};

typedef struct {
    int kind;
    int n;                  /* per-block count */
    int *s, *r;             /* buffers */
    int *sc, *sd, *rc, *rd; /* v forms: counts and displacements */
    MPI_Request req;
} op_t;

static MPI_Comm cart;
static int left, right; /* cart neighbours */

/* Counts of the neighbourhood Alltoallv: to the left and to the right differ. */
static int nb_count(const op_t *o, int to_right) {
    return to_right ? o->n + 3 : o->n;
}

/* Alltoallv: what rank r sends to rank d. */
static int a2av_count(const op_t *o, int r, int d) {
    return o->n + (r * 3 + d * 5) % 7;
}

static void setup(op_t *o, int kind, int n) {
    memset(o, 0, sizeof(*o));
    o->kind = kind;
    o->n = n;
    size_t big = (size_t)(n + 8) * (size_t)size * 2 + 16;
    o->s = calloc(big, sizeof(int));
    o->r = calloc(big, sizeof(int));
    o->sc = calloc((size_t)size + 2, sizeof(int));
    o->sd = calloc((size_t)size + 2, sizeof(int));
    o->rc = calloc((size_t)size + 2, sizeof(int));
    o->rd = calloc((size_t)size + 2, sizeof(int));
    int rc = MPI_SUCCESS;
    switch (kind) {
    case BCAST:
        rc = MPI_Bcast_init(o->r, n, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &o->req);
        break;
    case ALLREDUCE:
        rc = MPI_Allreduce_init(o->s, o->r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &o->req);
        break;
    case REDUCE:
        rc = MPI_Reduce_init(o->s, o->r, n, MPI_INT, MPI_SUM, size / 2, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &o->req);
        break;
    case ALLGATHER:
        rc = MPI_Allgather_init(o->s, n, MPI_INT, o->r, n, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &o->req);
        break;
    case ALLTOALL:
        rc = MPI_Alltoall_init(o->s, n, MPI_INT, o->r, n, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &o->req);
        break;
    case ALLTOALLV: {
        int sd = 0, rd = 0;
        for (int p = 0; p < size; p++) {
            o->sc[p] = a2av_count(o, rank, p);
            o->sd[p] = sd;
            sd += o->sc[p] + 1;
            o->rc[p] = a2av_count(o, p, rank);
            o->rd[p] = rd;
            rd += o->rc[p] + 2;
        }
        rc = MPI_Alltoallv_init(o->s, o->sc, o->sd, MPI_INT, o->r, o->rc, o->rd, MPI_INT,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &o->req);
        break;
    }
    case GATHER:
        rc = MPI_Gather_init(o->s, n, MPI_INT, o->r, n, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &o->req);
        break;
    case SCATTER:
        rc = MPI_Scatter_init(o->s, n, MPI_INT, o->r, n, MPI_INT, size - 1, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &o->req);
        break;
    case BARRIER:
        rc = MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &o->req);
        break;
    case SCAN:
        rc = MPI_Scan_init(o->s, o->r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &o->req);
        break;
    case NB_ALLTOALLV:
        /* block 0 goes to (comes from) the left neighbour, block 1 the right */
        o->sc[0] = nb_count(o, 0);
        o->sc[1] = nb_count(o, 1);
        o->sd[0] = 0;
        o->sd[1] = o->sc[0] + 1;
        o->rc[0] = nb_count(o, 1); /* the left neighbour sends right */
        o->rc[1] = nb_count(o, 0);
        o->rd[0] = 0;
        o->rd[1] = o->rc[0] + 1;
        rc = MPI_Neighbor_alltoallv_init(o->s, o->sc, o->sd, MPI_INT, o->r, o->rc, o->rd, MPI_INT,
                                         cart, MPI_INFO_NULL, &o->req);
        break;
    case NB_ALLGATHER:
        rc = MPI_Neighbor_allgather_init(o->s, n, MPI_INT, o->r, n, MPI_INT, cart, MPI_INFO_NULL,
                                         &o->req);
        break;
    }
    CHECK(rc == MPI_SUCCESS, "init of operation %d failed: %d", kind, rc);
}

static void fill(op_t *o, int k, int it) {
    int n = o->n;
    switch (o->kind) {
    case BCAST:
        for (int j = 0; j < n; j++)
            o->r[j] = rank == size - 1 ? val(rank, 0, j, k, it) : -1;
        break;
    case ALLREDUCE:
    case REDUCE:
    case SCAN:
    case ALLGATHER:
    case GATHER:
    case NB_ALLGATHER:
        for (int j = 0; j < n; j++)
            o->s[j] = val(rank, 0, j, k, it);
        break;
    case ALLTOALL:
    case SCATTER:
        for (int d = 0; d < size; d++)
            for (int j = 0; j < n; j++)
                o->s[d * n + j] = val(rank, d, j, k, it);
        break;
    case ALLTOALLV:
        for (int d = 0; d < size; d++)
            for (int j = 0; j < o->sc[d]; j++)
                o->s[o->sd[d] + j] = val(rank, d, j, k, it);
        break;
    case NB_ALLTOALLV:
        for (int b = 0; b < 2; b++)
            for (int j = 0; j < o->sc[b]; j++)
                o->s[o->sd[b] + j] = val(rank, b, j, k, it);
        break;
    default:
        break;
    }
    if (o->kind != BCAST)
        for (int j = 0; j < (n + 8) * size * 2; j++)
            o->r[j] = -1;
}

static void verify(const op_t *o, int k, int it) {
    int n = o->n, bad = -1, got = 0, want = 0;
#define EXPECT(_idx, _want)                                                                        \
    do {                                                                                           \
        int w_ = (_want);                                                                          \
        if (bad < 0 && o->r[_idx] != w_) {                                                         \
            bad = (_idx);                                                                          \
            got = o->r[_idx];                                                                      \
            want = w_;                                                                             \
        }                                                                                          \
    } while (0)
    switch (o->kind) {
    case BCAST:
        for (int j = 0; j < n; j++)
            EXPECT(j, val(size - 1, 0, j, k, it));
        break;
    case ALLREDUCE:
    case REDUCE:
    case SCAN:
        if (o->kind == REDUCE && rank != size / 2)
            break;
        for (int j = 0; j < n; j++) {
            int sum = 0;
            for (int p = 0; p < (o->kind == SCAN ? rank + 1 : size); p++)
                sum += val(p, 0, j, k, it);
            EXPECT(j, sum);
        }
        break;
    case ALLGATHER:
    case GATHER:
        if (o->kind == GATHER && rank != 0)
            break;
        for (int p = 0; p < size; p++)
            for (int j = 0; j < n; j++)
                EXPECT(p * n + j, val(p, 0, j, k, it));
        break;
    case ALLTOALL:
        for (int p = 0; p < size; p++)
            for (int j = 0; j < n; j++)
                EXPECT(p * n + j, val(p, rank, j, k, it));
        break;
    case SCATTER:
        for (int j = 0; j < n; j++)
            EXPECT(j, val(size - 1, rank, j, k, it));
        break;
    case ALLTOALLV:
        for (int p = 0; p < size; p++)
            for (int j = 0; j < o->rc[p]; j++)
                EXPECT(o->rd[p] + j, val(p, rank, j, k, it));
        break;
    case NB_ALLTOALLV:
        /* from the left: what it sent right (its block 1), and the reverse */
        for (int j = 0; j < o->rc[0]; j++)
            EXPECT(o->rd[0] + j, val(left, 1, j, k, it));
        for (int j = 0; j < o->rc[1]; j++)
            EXPECT(o->rd[1] + j, val(right, 0, j, k, it));
        break;
    case NB_ALLGATHER:
        for (int j = 0; j < n; j++) {
            EXPECT(j, val(left, 0, j, k, it));
            EXPECT(n + j, val(right, 0, j, k, it));
        }
        break;
    default:
        break;
    }
    CHECK(bad < 0, "round %d, operation %d (kind %d): item %d is %d, expected %d", it, k, o->kind,
          bad, got, want);
#undef EXPECT
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int base = argc > 1 ? atoi(argv[1]) : 100;
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    MPI_Cart_shift(cart, 0, 1, &left, &right);

    /* every kind twice, with different counts, in a mixed order */
    enum { NOPS = 2 * NKINDS };
    op_t ops[NOPS];
    for (int k = 0; k < NOPS; k++) {
        int kind = (k * 5) % NKINDS;
        int n = k < NKINDS ? base + k : base / 3 + 2 * k + 1;
        setup(&ops[k], kind, n);
    }
    MPI_Request reqs[NOPS];
    MPI_Status st[NOPS];
    for (int it = 0; it < 24; it++) {
        for (int k = 0; k < NOPS; k++) {
            fill(&ops[k], k, it);
            reqs[k] = ops[k].req;
        }
        int rc = MPI_SUCCESS, mode = it % 4;
        if (mode == 0) {
            rc = MPI_Startall(NOPS, reqs);
        } else if (mode == 1) {
            for (int k = 0; k < NOPS && rc == MPI_SUCCESS; k++)
                rc = MPI_Start(&reqs[k]);
        } else if (mode == 2) {
            for (int k = 0; k < NOPS && rc == MPI_SUCCESS; k++)
                rc = MPI_Start(&reqs[(k + rank * 5) % NOPS]);
        } else {
            /* a permutation that depends on the rank, started in two parts with a
             * blocking collective between them, after a rank-dependent number */
            MPI_Request perm[NOPS];
            for (int k = 0; k < NOPS; k++)
                perm[k] = reqs[(k * 7 + rank * 3 + it) % NOPS]; /* 7 is prime to NOPS */
            int first = (rank * 9 + it) % (NOPS + 1), in = rank + it, sum = -1;
            rc = MPI_Startall(first, perm);
            int rc2 = MPI_Allreduce(&in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            CHECK(rc2 == MPI_SUCCESS && sum == size * (size - 1) / 2 + size * it,
                  "round %d: the Allreduce between the starts gave %d (rc %d)", it, sum, rc2);
            if (rc == MPI_SUCCESS)
                rc = MPI_Startall(NOPS - first, perm + first);
        }
        CHECK(rc == MPI_SUCCESS, "round %d: starting failed: %d", it, rc);
        rc = MPI_Waitall(NOPS, reqs, st);
        if (rc != MPI_SUCCESS) {
            for (int k = 0; k < NOPS; k++) {
                char msg[MPI_MAX_ERROR_STRING];
                int len = 0;
                if (st[k].MPI_ERROR == MPI_SUCCESS)
                    continue;
                MPI_Error_string(st[k].MPI_ERROR, msg, &len);
                CHECK(0, "round %d, operation %d (kind %d): %s", it, k, ops[k].kind, msg);
            }
            break;
        }
        for (int k = 0; k < NOPS; k++)
            verify(&ops[k], k, it);
        if (errs)
            break;
    }
    for (int k = 0; k < NOPS; k++) {
        CHECK(MPI_Request_free(&ops[k].req) == MPI_SUCCESS, "freeing operation %d", k);
        free(ops[k].s);
        free(ops[k].r);
        free(ops[k].sc);
        free(ops[k].sd);
        free(ops[k].rc);
        free(ops[k].rd);
    }
    MPI_Comm_free(&cart);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return all != 0;
}
