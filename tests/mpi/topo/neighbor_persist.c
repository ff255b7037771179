/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent neighbourhood collectives (MPI-4.0 7.8): MPI_Neighbor_<form>_init
 * for allgather, allgatherv, alltoall, alltoallv and alltoallw on a periodic
 * and a non-periodic 2D Cartesian grid and on a distributed graph with a self
 * loop and a repeated edge. All five are bound at once, then started four
 * times (one by one, then with MPI_Startall) with new send data each time,
 * and every receive buffer is checked against a serial reference: slot i
 * holds block i^1 of the Cartesian neighbour, the k-th edge from q holds q's
 * k-th block to this rank, and gaps and MPI_PROC_NULL slots stay untouched.
 * After init the count, displacement and type arrays are overwritten and the
 * receive datatypes freed: the requests must have kept their own copies.
 * Also: freeing an active request is MPI_ERR_REQUEST, and the _init forms
 * reject what the blocking forms reject.
 */
#include "ttopo.h"

#define GAP 6 /* slot stride in ints for the v/w forms: counts are at most 4 */
#define UNSET (-1)
#define STARTS 4
#define MAXN 64

static int val(int sender, int block, int e, int iter) {
    return iter * 1000000 + sender * 10000 + block * 100 + e;
}
/* items in block j of rank q (v/w forms): 1..4 */
static int cnt(int q, int j) {
    return 1 + (q * 3 + j) % 4;
}

typedef struct nbrs {
    int indeg, outdeg, in[MAXN], out[MAXN];
    int src_block[MAXN]; /* slot i holds block src_block[i] of in[i] */
} nbrs_t;

enum { AG, AGV, AA, AAV, AAW, NFORMS };
static const char *names[] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};
enum { N = 3 }; /* the fixed count */

/* One bound collective and the buffers it owns. */
typedef struct pcoll {
    int form;
    int sbuf[MAXN * GAP], rbuf[MAXN * GAP];
    int scounts[MAXN], sdispls[MAXN], rcounts[MAXN], rdispls[MAXN];
    MPI_Aint sbd[MAXN], rbd[MAXN];
    MPI_Datatype stypes[MAXN], rtypes[MAXN];
    MPI_Request req;
} pcoll_t;

static bool is_v(int form) {
    return form == AGV || form == AAV || form == AAW;
}
static int send_at(int form, int j) {
    return form == AG || form == AGV ? 0 : is_v(form) ? j * GAP + 1 : j * N;
}
static int send_cnt(int form, int j) {
    return form == AG || form == AGV || !is_v(form) ? N : cnt(t_rank, j);
}
static int recv_at(int form, int i) {
    return is_v(form) ? i * GAP + 2 : i * N;
}
/* items slot i receives from q (block j of q) */
static int recv_cnt(int form, int q, int j) {
    return form == AGV || !is_v(form) ? N : cnt(q < 0 ? 0 : q, j);
}

/* Bind form f of pc on comm; the receive types are freed and every array
 * overwritten right after. */
static void bind(pcoll_t *pc, MPI_Comm comm, const nbrs_t *nb, int form, const char *where) {
    MPI_Datatype int1, int2;
    MPI_Type_contiguous(1, MPI_INT, &int1);
    MPI_Type_commit(&int1);
    MPI_Type_contiguous(2, MPI_INT, &int2);
    MPI_Type_commit(&int2);
    pc->form = form;
    pc->req = MPI_REQUEST_NULL;
    for (int j = 0; j < nb->outdeg; j++) {
        pc->scounts[j] = send_cnt(form, j);
        pc->sdispls[j] = send_at(form, j);
        pc->sbd[j] = (MPI_Aint)pc->sdispls[j] * (MPI_Aint)sizeof(int);
        pc->stypes[j] = MPI_INT;
    }
    for (int i = 0; i < nb->indeg; i++) {
        int c = recv_cnt(form, nb->in[i], nb->src_block[i]);
        pc->rcounts[i] = c;
        pc->rdispls[i] = recv_at(form, i);
        pc->rbd[i] = (MPI_Aint)pc->rdispls[i] * (MPI_Aint)sizeof(int);
        pc->rtypes[i] = int1;
        if (form == AAW && i % 2 && c % 2 == 0) { /* received as pairs */
            pc->rtypes[i] = int2;
            pc->rcounts[i] = c / 2;
        }
    }
    int rc = MPI_ERR_OTHER;
    MPI_Request *rq = &pc->req;
    switch (form) {
    case AG:
        rc = MPI_Neighbor_allgather_init(pc->sbuf, N, MPI_INT, pc->rbuf, N, int1, comm,
                                         MPI_INFO_NULL, rq);
        break;
    case AGV:
        rc = MPI_Neighbor_allgatherv_init(pc->sbuf, N, MPI_INT, pc->rbuf, pc->rcounts, pc->rdispls,
                                          int1, comm, MPI_INFO_NULL, rq);
        break;
    case AA:
        rc = MPI_Neighbor_alltoall_init(pc->sbuf, N, MPI_INT, pc->rbuf, N, int1, comm,
                                        MPI_INFO_NULL, rq);
        break;
    case AAV:
        rc = MPI_Neighbor_alltoallv_init(pc->sbuf, pc->scounts, pc->sdispls, MPI_INT, pc->rbuf,
                                         pc->rcounts, pc->rdispls, int1, comm, MPI_INFO_NULL, rq);
        break;
    case AAW:
        rc = MPI_Neighbor_alltoallw_init(pc->sbuf, pc->scounts, pc->sbd, pc->stypes, pc->rbuf,
                                         pc->rcounts, pc->rbd, pc->rtypes, comm, MPI_INFO_NULL, rq);
        break;
    }
    T_CHECK(rc == MPI_SUCCESS, "%s %s_init failed (%d)", where, names[form], rc);
    MPI_Type_free(&int1);
    MPI_Type_free(&int2);
    for (int i = 0; i < MAXN; i++) {
        pc->scounts[i] = pc->rcounts[i] = -7;
        pc->sdispls[i] = pc->rdispls[i] = 1 << 20;
        pc->sbd[i] = pc->rbd[i] = (MPI_Aint)1 << 30;
        pc->stypes[i] = pc->rtypes[i] = MPI_DATATYPE_NULL;
    }
}

/* New send data for start `iter`; the receive buffer reset. */
static void fill(pcoll_t *pc, const nbrs_t *nb, int iter) {
    for (int i = 0; i < MAXN * GAP; i++)
        pc->sbuf[i] = pc->rbuf[i] = UNSET;
    int blocks = pc->form == AG || pc->form == AGV ? 1 : nb->outdeg;
    for (int j = 0; j < blocks; j++)
        for (int e = 0; e < send_cnt(pc->form, j); e++)
            pc->sbuf[send_at(pc->form, j) + e] = val(t_rank, j, e, iter);
}

static void check(const pcoll_t *pc, const nbrs_t *nb, int iter, const char *where) {
    int form = pc->form, expect[MAXN * GAP];
    for (int i = 0; i < MAXN * GAP; i++)
        expect[i] = UNSET;
    for (int i = 0; i < nb->indeg; i++) {
        int q = nb->in[i];
        if (q == MPI_PROC_NULL)
            continue;
        int block = form == AG || form == AGV ? 0 : nb->src_block[i];
        for (int e = 0; e < recv_cnt(form, q, block); e++)
            expect[recv_at(form, i) + e] = val(q, block, e, iter);
    }
    int bad = 0;
    for (int i = 0; i < MAXN * GAP; i++)
        if (pc->rbuf[i] != expect[i] && bad++ < 3)
            T_CHECK(pc->rbuf[i] == expect[i], "%s %s_init start %d: rbuf[%d]=%d, expected %d",
                    where, names[form], iter, i, pc->rbuf[i], expect[i]);
}

static pcoll_t pcs[NFORMS];

static void run_all(MPI_Comm comm, const nbrs_t *nb, const char *where) {
    MPI_Request reqs[NFORMS];
    for (int f = 0; f < NFORMS; f++)
        bind(&pcs[f], comm, nb, f, where);
    for (int iter = 0; iter < STARTS; iter++) {
        for (int f = 0; f < NFORMS; f++) {
            fill(&pcs[f], nb, iter);
            reqs[f] = pcs[f].req;
        }
        if (iter == 0) {
            for (int f = 0; f < NFORMS; f++) {
                T_OK(MPI_Start(&pcs[f].req));
                T_OK(MPI_Wait(&pcs[f].req, MPI_STATUS_IGNORE));
            }
        } else {
            T_OK(MPI_Startall(NFORMS, reqs));
            T_OK(MPI_Waitall(NFORMS, reqs, MPI_STATUSES_IGNORE));
        }
        for (int f = 0; f < NFORMS; f++) {
            T_CHECK(pcs[f].req != MPI_REQUEST_NULL, "%s: a completed persistent request is freed",
                    where);
            check(&pcs[f], nb, iter, where);
        }
        /* a blocking neighbourhood collective between starts takes a tag too */
        int x = t_rank, y[MAXN];
        T_OK(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, comm));
    }

    /* freeing an active request is erroneous; it stays usable */
    fill(&pcs[AAW], nb, STARTS);
    T_OK(MPI_Start(&pcs[AAW].req));
    MPI_Request keep = pcs[AAW].req;
    T_FAILS(MPI_ERR_REQUEST, MPI_Request_free(&pcs[AAW].req));
    pcs[AAW].req = keep;
    T_OK(MPI_Wait(&pcs[AAW].req, MPI_STATUS_IGNORE));
    check(&pcs[AAW], nb, STARTS, where);
    for (int f = 0; f < NFORMS; f++) {
        T_OK(MPI_Request_free(&pcs[f].req));
        T_CHECK(pcs[f].req == MPI_REQUEST_NULL, "%s: Request_free left the handle", where);
    }
}

static void test_cart(int periodic) {
    int dims[2] = {0, 0}, periods[2] = {periodic, periodic};
    MPI_Dims_create(t_size, 2, dims);
    MPI_Comm cart;
    T_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    nbrs_t nb = {.indeg = 4, .outdeg = 4};
    for (int d = 0; d < 2; d++)
        MPI_Cart_shift(cart, d, 1, &nb.in[2 * d], &nb.in[2 * d + 1]);
    for (int i = 0; i < 4; i++) {
        nb.out[i] = nb.in[i];
        nb.src_block[i] = i ^ 1; /* my -1 neighbour sent me its +1 block */
    }
    run_all(cart, &nb, periodic ? "periodic cart" : "open cart");
    MPI_Comm_free(&cart);
}

/* edges: i -> (i*3 + j) % n for j = 1..(i%3)+1, a self loop at 1, 0 -> 1 again */
static int ref_edges(int n, int (*e)[2]) {
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 1; j <= i % 3 + 1; j++) {
            e[k][0] = i;
            e[k++][1] = (i * 3 + j) % n;
        }
    if (n > 1) {
        e[k][0] = 1, e[k++][1] = 1;
        e[k][0] = 0, e[k++][1] = 1;
    }
    return k;
}

static void test_dist(void) {
    int e[MAXN][2], ne = ref_edges(t_size, e);
    nbrs_t nb = {0};
    int seen[MAXN] = {0}; /* per source: edges to me seen so far */
    for (int k = 0; k < ne; k++) {
        if (e[k][1] == t_rank) {
            int q = e[k][0], occ = seen[q]++, j = -1;
            /* q's block to me: the occ-th edge from q to me, counted in q's out list */
            for (int m = 0, pos = 0; m < ne; m++)
                if (e[m][0] == q) {
                    if (e[m][1] == t_rank && occ-- == 0) {
                        j = pos;
                        break;
                    }
                    pos++;
                }
            nb.in[nb.indeg] = q;
            nb.src_block[nb.indeg++] = j;
        }
        if (e[k][0] == t_rank)
            nb.out[nb.outdeg++] = e[k][1];
    }
    MPI_Comm g;
    T_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nb.indeg, nb.in, MPI_UNWEIGHTED, nb.outdeg,
                                        nb.out, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    run_all(g, &nb, "dist graph");
    MPI_Comm_free(&g);
}

/* The _init forms share the blocking forms' checks (and check info). */
static void test_errors(void) {
    int dims[2] = {0, 0}, periods[2] = {1, 1}, buf[4 * N], counts[4] = {N, N, N, N}, displs[4];
    MPI_Dims_create(t_size, 2, dims);
    MPI_Comm cart;
    T_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    MPI_Request req = MPI_REQUEST_NULL;
    for (int i = 0; i < 4; i++)
        displs[i] = i * N;
    T_FAILS(MPI_ERR_COUNT, MPI_Neighbor_allgather_init(buf, -1, MPI_INT, buf, N, MPI_INT, cart,
                                                       MPI_INFO_NULL, &req));
    T_FAILS(MPI_ERR_REQUEST, MPI_Neighbor_alltoall_init(buf, N, MPI_INT, buf, N, MPI_INT, cart,
                                                        MPI_INFO_NULL, NULL));
    T_FAILS(MPI_ERR_TYPE,
            MPI_Neighbor_allgatherv_init(buf, N, MPI_INT, buf, counts, displs, MPI_DATATYPE_NULL,
                                         cart, MPI_INFO_NULL, &req));
    T_FAILS(MPI_ERR_BUFFER,
            MPI_Neighbor_alltoallv_init(MPI_IN_PLACE, counts, displs, MPI_INT, buf, counts, displs,
                                        MPI_INT, cart, MPI_INFO_NULL, &req));
    T_FAILS(MPI_ERR_INFO, MPI_Neighbor_alltoall_init(buf, N, MPI_INT, buf, N, MPI_INT, cart,
                                                     (MPI_Info)0x1c000077, &req));
    T_FAILS(MPI_ERR_TOPOLOGY, MPI_Neighbor_alltoall_init(buf, N, MPI_INT, buf, N, MPI_INT,
                                                         MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    T_CHECK(req == MPI_REQUEST_NULL, "a failed _init set the request");
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    test_cart(1);
    test_cart(0);
    test_dist();
    test_errors();
    return t_finish();
}
