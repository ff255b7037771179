/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-4 persistent collectives on an intercommunicator (MPI-4.0 6.13 with the
 * two-group meanings of 6.2.2): every MPI_<Coll>_init form that is defined
 * there, rooted ones with the root in either group (MPI_ROOT, MPI_PROC_NULL,
 * a remote rank), initialised once and started six times with new data before
 * every start, each result checked against a reference computed from the
 * world ranks of both groups. Starts go one at a time (Start + Wait, or Start
 * + Test polling), all at once over two communicators (Startall + Waitall) and
 * in reverse order with a blocking collective between the starts (Testall
 * polling). The user's count, displacement and type arrays are overwritten
 * and derived datatypes freed right after init (the request keeps copies);
 * the arrays have the remote group's size, except Reduce_scatter's
 * recvcounts (the local group's), and the groups differ in size at 3 and 5
 * ranks. Also: MPI_Request_free of inactive and of active requests, and the
 * errors of the _init forms on an intercommunicator (Scan/Exscan are not
 * defined there: MPI_ERR_COMM). Groups: even and odd world ranks.
 */
#include "tutil.h"

#define K 7     /* items of the reductions */
#define NB 5    /* ints of the broadcast (vector type: every other int of 2 * NB) */
#define BUFN 64 /* ints of the gather/scatter/alltoall buffers (up to 8 ranks a group) */
#define NIT 6   /* starts of every request */

static int n, m, me, color;
static int mine[8], other[8];

/* what world rank w contributes at index i in start `it` */
static int val(int w, int i, int it) {
    return w * 100000 + i * 3 + it * 7;
}

/* root argument for a rooted collective whose root is local rank `r` of group `g` */
static int root_arg(int g, int r) {
    if (color == g)
        return me == r ? MPI_ROOT : MPI_PROC_NULL;
    return r;
}

enum {
    BARRIER,
    BCAST, /* vector type, freed after init */
    REDUCE,
    ALLREDUCE,
    GATHER, /* the senders send one contiguous pair, the root receives 2 ints */
    GATHERV,
    SCATTER,
    SCATTERV,
    ALLGATHER,
    ALLGATHERV,
    ALLTOALL,
    ALLTOALLV,
    ALLTOALLW, /* send type array of a contiguous type, freed after init */
    REDUCE_SCATTER,
    REDUCE_SCATTER_BLOCK,
    NKINDS
};
static const char *names[NKINDS] = {
    "barrier",  "bcast",     "reduce",    "allreduce",      "gather",
    "gatherv",  "scatter",   "scatterv",  "allgather",      "allgatherv",
    "alltoall", "alltoallv", "alltoallw", "reduce_scatter", "reduce_scatter_block"};

typedef struct {
    int kind;
    int g, r; /* rooted: the root is local rank r of group g */
    MPI_Comm comm;
    int *s, *o; /* send and receive buffers */
    int sc[8], sd[8], rc[8], rd[8];
    MPI_Datatype ty[8];
    MPI_Request req;
} pcoll_t;

/* The layout of the blocks of the (all)gather(v) and scatter(v) tests: remote
 * rank j's block has j+1 items after a one-item gap (v), or 2 items back to
 * back. */
static void layout(int v, int *counts, int *displs) {
    int tot = 0;
    for (int j = 0; j < 8; j++) {
        counts[j] = v ? j + 1 : 2;
        displs[j] = tot + (v ? 1 : 0);
        tot = displs[j] + counts[j];
    }
}

/* Alltoall(v,w): sender i sends (i + j) % 3 + 1 items to remote rank j (v, w)
 * or 2; blocks after a one-item gap (v, w). In ints (w: the caller converts). */
static void a2a_layout(int form, int *sc, int *sd, int *rc, int *rd) {
    int st = 0, rt = 0;
    for (int j = 0; j < m; j++) {
        sc[j] = form ? (me + j) % 3 + 1 : 2;
        rc[j] = form ? (j + me) % 3 + 1 : 2;
        sd[j] = form ? st + 1 : st;
        rd[j] = form ? rt + 1 : rt;
        st = sd[j] + sc[j];
        rt = rd[j] + rc[j];
    }
}

/* Reduce_scatter: every process holds 2 * n * m items; local rank i gets
 * rc[i] of them (2 * m, unevenly for v), starting at *off_p for the caller. */
static void rs_layout(int v, int *rc, int *off_p) {
    int off = 0;
    for (int i = 0; i < n; i++) {
        rc[i] = 2 * m;
        if (v && n > 1)
            rc[i] += i == 0 ? 1 : i == n - 1 ? -1 : 0;
        if (i == me)
            *off_p = off;
        off += rc[i];
    }
}

static MPI_Datatype make_vec(void) {
    MPI_Datatype t;
    MPI_Type_vector(NB, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

static MPI_Datatype make_contig(int k) {
    MPI_Datatype t;
    MPI_Type_contiguous(k, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

/* MPI_<Coll>_init for p; derived types are freed and the user's arrays
 * overwritten at once (the request must hold its own copies). */
static void init(pcoll_t *p) {
    MPI_Comm c = p->comm;
    MPI_Info in = MPI_INFO_NULL;
    MPI_Request *q = &p->req;
    int root = root_arg(p->g, p->r);
    int T = 2 * n * m, off = 0;
    p->s = malloc(sizeof(int) * (size_t)(T > BUFN ? T : BUFN));
    p->o = malloc(sizeof(int) * BUFN);
    switch (p->kind) {
    case BARRIER:
        T_OK(MPI_Barrier_init(c, in, q));
        break;
    case BCAST: {
        MPI_Datatype vec = make_vec();
        T_OK(MPI_Bcast_init(p->s, 1, vec, root, c, in, q));
        MPI_Type_free(&vec);
        break;
    }
    case REDUCE:
        T_OK(MPI_Reduce_init(p->s, p->o, K, MPI_INT, MPI_SUM, root, c, in, q));
        break;
    case ALLREDUCE:
        T_OK(MPI_Allreduce_init(p->s, p->o, K, MPI_INT, MPI_SUM, c, in, q));
        break;
    case GATHER: {
        MPI_Datatype pair = make_contig(2);
        T_OK(MPI_Gather_init(p->s, 1, pair, p->o, 2, MPI_INT, root, c, in, q));
        MPI_Type_free(&pair);
        break;
    }
    case GATHERV:
        layout(1, p->rc, p->rd);
        T_OK(MPI_Gatherv_init(p->s, me + 1, MPI_INT, p->o, p->rc, p->rd, MPI_INT, root, c, in, q));
        break;
    case SCATTER:
        T_OK(MPI_Scatter_init(p->s, 2, MPI_INT, p->o, 2, MPI_INT, root, c, in, q));
        break;
    case SCATTERV:
        layout(1, p->sc, p->sd);
        T_OK(MPI_Scatterv_init(p->s, p->sc, p->sd, MPI_INT, p->o, me + 1, MPI_INT, root, c, in, q));
        break;
    case ALLGATHER:
        T_OK(MPI_Allgather_init(p->s, 2, MPI_INT, p->o, 2, MPI_INT, c, in, q));
        break;
    case ALLGATHERV:
        layout(1, p->rc, p->rd);
        T_OK(MPI_Allgatherv_init(p->s, me + 1, MPI_INT, p->o, p->rc, p->rd, MPI_INT, c, in, q));
        break;
    case ALLTOALL:
        T_OK(MPI_Alltoall_init(p->s, 2, MPI_INT, p->o, 2, MPI_INT, c, in, q));
        break;
    case ALLTOALLV:
        a2a_layout(1, p->sc, p->sd, p->rc, p->rd);
        T_OK(
            MPI_Alltoallv_init(p->s, p->sc, p->sd, MPI_INT, p->o, p->rc, p->rd, MPI_INT, c, in, q));
        break;
    case ALLTOALLW: {
        int sdb[8], rdb[8];
        MPI_Datatype rty[8], one = make_contig(1);
        a2a_layout(2, p->sc, p->sd, p->rc, p->rd);
        for (int j = 0; j < m; j++) {
            sdb[j] = p->sd[j] * (int)sizeof(int);
            rdb[j] = p->rd[j] * (int)sizeof(int);
            p->ty[j] = one;
            rty[j] = MPI_INT;
        }
        T_OK(MPI_Alltoallw_init(p->s, p->sc, sdb, p->ty, p->o, p->rc, rdb, rty, c, in, q));
        MPI_Type_free(&one);
        for (int j = 0; j < m; j++) {
            sdb[j] = rdb[j] = -1000;
            p->ty[j] = rty[j] = MPI_DATATYPE_NULL;
        }
        break;
    }
    case REDUCE_SCATTER:
        rs_layout(1, p->rc, &off);
        T_OK(MPI_Reduce_scatter_init(p->s, p->o, p->rc, MPI_INT, MPI_SUM, c, in, q));
        break;
    case REDUCE_SCATTER_BLOCK:
        T_OK(MPI_Reduce_scatter_block_init(p->s, p->o, 2 * m, MPI_INT, MPI_SUM, c, in, q));
        break;
    }
    for (int j = 0; j < 8; j++)
        p->sc[j] = p->sd[j] = p->rc[j] = p->rd[j] = 0;
}

/* New data before start `it`: the send buffer from this process's world rank
 * (a root's from its own), the receive buffer poisoned. */
static void fill(pcoll_t *p, int it) {
    int w = mine[me], root_here = color == p->g && me == p->r;
    int T = 2 * n * m;
    for (int i = 0; i < BUFN; i++) {
        p->s[i] = val(w, i, it);
        p->o[i] = -7;
    }
    for (int i = BUFN; i < T; i++)
        p->s[i] = val(w, i, it);
    if (p->kind == BCAST)
        for (int i = 0; i < 2 * NB; i++)
            p->s[i] = root_here ? (i % 2 ? -9 : val(w, i / 2, it)) : -1;
    if (p->kind == ALLTOALL || p->kind == ALLTOALLV || p->kind == ALLTOALLW) {
        int sc[8], sd[8], rc[8], rd[8];
        a2a_layout(p->kind - ALLTOALL, sc, sd, rc, rd);
        for (int j = 0; j < m; j++)
            for (int k = 0; k < sc[j]; k++)
                p->s[sd[j] + k] = val(w, j * 10 + k, it);
    }
}

static void check(pcoll_t *p, int it) {
    const char *nm = names[p->kind];
    int root_here = color == p->g && me == p->r, remote_root = color != p->g;
    int rw = p->g == color ? mine[p->r] : other[p->r]; /* the root's world rank */
    int bad = 0;
    switch (p->kind) {
    case BARRIER:
        break;
    case BCAST:
        for (int i = 0; i < 2 * NB; i++) {
            int exp = -1;
            if (root_here)
                exp = i % 2 ? -9 : val(rw, i / 2, it);
            else if (remote_root && i % 2 == 0)
                exp = val(rw, i / 2, it);
            bad += p->s[i] != exp;
        }
        break;
    case REDUCE:
        for (int i = 0; i < K; i++) {
            int exp = -7;
            if (root_here)
                for (int j = exp = 0; j < m; j++)
                    exp += val(other[j], i, it);
            bad += p->o[i] != exp;
        }
        break;
    case ALLREDUCE:
        for (int i = 0; i < K; i++) {
            int exp = 0;
            for (int j = 0; j < m; j++)
                exp += val(other[j], i, it);
            bad += p->o[i] != exp;
        }
        bad += p->o[K] != -7;
        break;
    case GATHER:
    case GATHERV:
    case ALLGATHER:
    case ALLGATHERV: {
        int v = p->kind == GATHERV || p->kind == ALLGATHERV, rc[8], rd[8];
        int gets = p->kind == ALLGATHER || p->kind == ALLGATHERV || root_here;
        layout(v, rc, rd);
        int exp[BUFN];
        for (int i = 0; i < BUFN; i++)
            exp[i] = -7;
        for (int j = 0; gets && j < m; j++)
            for (int k = 0; k < rc[j]; k++)
                exp[rd[j] + k] = val(other[j], k, it);
        for (int i = 0; i < BUFN; i++)
            bad += p->o[i] != exp[i];
        break;
    }
    case SCATTER:
    case SCATTERV: {
        int v = p->kind == SCATTERV, sc[8], sd[8];
        layout(v, sc, sd);
        for (int i = 0; i < 8; i++) {
            int exp = -7;
            if (remote_root && i < sc[me])
                exp = val(rw, sd[me] + i, it);
            bad += p->o[i] != exp;
        }
        break;
    }
    case ALLTOALL:
    case ALLTOALLV:
    case ALLTOALLW: {
        int sc[8], sd[8], rc[8], rd[8], exp[BUFN];
        a2a_layout(p->kind - ALLTOALL, sc, sd, rc, rd);
        for (int i = 0; i < BUFN; i++)
            exp[i] = -7;
        for (int j = 0; j < m; j++)
            for (int k = 0; k < rc[j]; k++)
                exp[rd[j] + k] = val(other[j], me * 10 + k, it);
        for (int i = 0; i < BUFN; i++)
            bad += p->o[i] != exp[i];
        break;
    }
    case REDUCE_SCATTER:
    case REDUCE_SCATTER_BLOCK: {
        int rc[8], off = 0;
        rs_layout(p->kind == REDUCE_SCATTER, rc, &off);
        for (int i = 0; i < BUFN; i++) {
            int exp = -7;
            if (i < rc[me])
                for (int j = exp = 0; j < m; j++)
                    exp += val(other[j], off + i, it);
            bad += p->o[i] != exp;
        }
        break;
    }
    }
    T_CHECK(bad == 0, "%s (root %d/%d) start %d: %d wrong items", nm, p->g, p->r, it, bad);
}

static void wait_polling(MPI_Request *q) {
    int done = 0;
    while (!done)
        T_OK(MPI_Test(q, &done, MPI_STATUS_IGNORE));
}

/* The _init forms' errors on an intercommunicator: the class, the call named,
 * the request left alone. */
static void errors(MPI_Comm ic) {
    int s[K] = {0}, o[K];
    char msg[MPI_MAX_ERROR_STRING];
    int len, rc;
    MPI_Request q = MPI_REQUEST_NULL;
    T_FAILS(MPI_ERR_COMM, rc = MPI_Scan_init(s, o, K, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &q));
    MPI_Error_string(rc, msg, &len);
    T_CHECK(strstr(msg, "MPI_Scan_init") != NULL, "Scan_init error does not name it: %s", msg);
    T_FAILS(MPI_ERR_COMM, rc = MPI_Exscan_init(s, o, K, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &q));
    MPI_Error_string(rc, msg, &len);
    T_CHECK(strstr(msg, "MPI_Exscan_init") != NULL, "Exscan_init error does not name it: %s", msg);
    T_FAILS(MPI_ERR_ROOT, rc = MPI_Bcast_init(s, 1, MPI_INT, m, ic, MPI_INFO_NULL, &q));
    MPI_Error_string(rc, msg, &len);
    T_CHECK(strstr(msg, "MPI_Bcast_init") != NULL, "Bcast_init error does not name it: %s", msg);
    T_FAILS(MPI_ERR_BUFFER,
            MPI_Allreduce_init(MPI_IN_PLACE, o, K, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &q));
    T_FAILS(MPI_ERR_COUNT,
            MPI_Reduce_init(s, o, -1, MPI_INT, MPI_SUM, MPI_ROOT, ic, MPI_INFO_NULL, &q));
    T_FAILS(MPI_ERR_REQUEST, MPI_Barrier_init(ic, MPI_INFO_NULL, NULL));
    T_CHECK(q == MPI_REQUEST_NULL, "a failed _init set the request");
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int ws;
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    if (ws < 2 || ws > 16) {
        MPI_Finalize();
        return 77;
    }
    color = t_rank % 2;
    n = m = 0;
    for (int r = 0; r < ws; r++) {
        if (r % 2 == color)
            mine[n++] = r;
        else
            other[m++] = r;
    }
    MPI_Comm local, ic, dup;
    MPI_Comm_split(MPI_COMM_WORLD, color, t_rank, &local);
    MPI_Comm_rank(local, &me);
    T_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 42, &ic));
    T_OK(MPI_Comm_dup(ic, &dup));
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);

    errors(ic);

    /* every kind once on ic, rooted ones with the root in each group (the last
     * local rank of group 0, rank 0 of group 1), and three more on dup */
    pcoll_t pc[2 * NKINDS + 3];
    int np = 0;
    for (int k = 0; k < NKINDS; k++) {
        int rooted = k == BCAST || k == REDUCE || (k >= GATHER && k <= SCATTERV);
        int n0 = color == 0 ? n : m;
        pc[np++] = (pcoll_t){.kind = k, .g = 0, .r = n0 - 1, .comm = ic};
        if (rooted)
            pc[np++] = (pcoll_t){.kind = k, .g = 1, .r = 0, .comm = ic};
    }
    pc[np++] = (pcoll_t){.kind = ALLREDUCE, .comm = dup};
    pc[np++] = (pcoll_t){.kind = BCAST, .g = 1, .r = 0, .comm = dup};
    pc[np++] = (pcoll_t){.kind = ALLTOALLV, .comm = dup};
    for (int k = 0; k < np; k++)
        init(&pc[k]);

    MPI_Request reqs[2 * NKINDS + 3];
    int it = 0;
    /* one at a time: Start + Wait, or Start + Test polling */
    for (; it < 2; it++) {
        for (int k = 0; k < np; k++) {
            fill(&pc[k], it);
            T_OK(MPI_Start(&pc[k].req));
            if (k % 2)
                wait_polling(&pc[k].req);
            else
                T_OK(MPI_Wait(&pc[k].req, MPI_STATUS_IGNORE));
            T_CHECK(pc[k].req != MPI_REQUEST_NULL, "%s: the persistent request went away",
                    names[pc[k].kind]);
            check(&pc[k], it);
        }
    }
    /* all at once over both communicators */
    for (; it < 4; it++) {
        for (int k = 0; k < np; k++) {
            fill(&pc[k], it);
            reqs[k] = pc[k].req;
        }
        T_OK(MPI_Startall(np, reqs));
        T_OK(MPI_Waitall(np, reqs, MPI_STATUSES_IGNORE));
        for (int k = 0; k < np; k++)
            check(&pc[k], it);
    }
    /* reverse order, a blocking collective between the starts, Testall polling */
    for (; it < NIT; it++) {
        for (int k = 0; k < np; k++)
            fill(&pc[k], it);
        for (int k = np - 1; k >= 0; k--) {
            T_OK(MPI_Start(&pc[k].req));
            reqs[k] = pc[k].req;
            if (k % 5 == 0) {
                int x = 1, y = 0;
                T_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, ic));
                T_CHECK(y == m, "blocking allreduce between starts: %d", y);
            }
        }
        int done = 0;
        while (!done)
            T_OK(MPI_Testall(np, reqs, &done, MPI_STATUSES_IGNORE));
        for (int k = 0; k < np; k++)
            check(&pc[k], it);
    }

    /* Request_free of an active persistent collective is erroneous and harms nothing */
    pcoll_t *ar = &pc[0];
    while (ar->kind != ALLREDUCE)
        ar++;
    fill(ar, NIT);
    T_OK(MPI_Start(&ar->req));
    MPI_Request h = ar->req;
    T_FAILS(MPI_ERR_REQUEST, MPI_Request_free(&ar->req));
    T_CHECK(ar->req == h, "Request_free of an active request changed the handle");
    T_OK(MPI_Wait(&ar->req, MPI_STATUS_IGNORE));
    check(ar, NIT);

    /* inactive ones: after their starts, and one never started */
    for (int k = 0; k < np; k++) {
        T_OK(MPI_Request_free(&pc[k].req));
        T_CHECK(pc[k].req == MPI_REQUEST_NULL, "Request_free left the %s handle",
                names[pc[k].kind]);
        free(pc[k].s);
        free(pc[k].o);
    }
    MPI_Request q;
    int buf[32] = {0};
    T_OK(MPI_Alltoall_init(buf, 2, MPI_INT, buf + 16, 2, MPI_INT, ic, MPI_INFO_NULL, &q));
    T_OK(MPI_Request_free(&q));
    T_CHECK(q == MPI_REQUEST_NULL, "Request_free of a never started request left the handle");

    MPI_Comm_free(&dup);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    return t_finish();
}
