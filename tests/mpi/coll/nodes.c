/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node-aware collectives and the node map (issue 27). The node of each rank is known
 * here independently of the library: from TANDEM_NODE_SPLIT (N ranks per node,
 * odd-even, nolocal) when set, else from the processor names (the namespace cluster's
 * nodes have host names of their own). Checks:
 * - MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives exactly this rank's node, in rank
 *   order, and MPI_COMM_TYPE_HW_UNGUIDED never crosses a node;
 * - Barrier, Bcast (every root: leaders and not), Reduce (every root, in place at the
 *   root), Allreduce (in place too) and Allgather (in place too) at sizes below and above
 *   the switch points, blocking or not ("nb"), against serial references, on
 *   MPI_COMM_WORLD, on a copy whose ranks are reversed (the nodes then come in the
 *   other order) and on one without rank 0 (uneven nodes);
 * - Gather and Scatter (every root, in place at the root, contiguous and strided types on
 *   either side, mixed between ranks), Gatherv and Scatterv (the same, with counts with
 *   zeros and displacements in rank order or reversed with gaps) and Allgatherv (counts
 *   with zeros, displacements in rank order and reversed with gaps, a strided receive
 *   type, in place), blocking, not ("nb") or persistent ("persist", each request started
 *   twice);
 * - a non-commutative (associative) op keeps rank order: 2x2 matrix products;
 * - the node-aware algorithm ran when the library should choose it (performance
 *   variables tandem_coll_<kind>_node): on a communicator of several nodes with two ranks
 *   or more on one (TANDEM_COLL_NODE_AWARE unset or auto, no TANDEM_<COLL>_ALGORITHM
 *   forced; any several nodes with =on), never with =off, and never for a
 *   non-commutative op on ranks that are not node by node.
 */
#include "../mpit/mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int size, nb, persist;
static int *node_of; /* by world rank */

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
        M_CHECK(rc_ == MPI_SUCCESS, "%s failed: %d", #_blocking, rc_);                             \
    } while (0)
#define RQ &rq_
/* The same with a persistent form (started twice, then freed) when "persist". */
#define COLL3(_blocking, _nonblocking, _init)                                                      \
    do {                                                                                           \
        int rc_;                                                                                   \
        if (persist) {                                                                             \
            MPI_Request rq_;                                                                       \
            rc_ = _init;                                                                           \
            for (int st_ = 0; st_ < 2 && rc_ == MPI_SUCCESS; st_++) {                              \
                rc_ = MPI_Start(&rq_);                                                             \
                if (rc_ == MPI_SUCCESS)                                                            \
                    rc_ = MPI_Wait(&rq_, MPI_STATUS_IGNORE);                                       \
            }                                                                                      \
            if (rc_ == MPI_SUCCESS)                                                                \
                rc_ = MPI_Request_free(&rq_);                                                      \
            M_CHECK(rc_ == MPI_SUCCESS, "%s failed: %d", #_init, rc_);                             \
        } else {                                                                                   \
            COLL(_blocking, _nonblocking);                                                         \
        }                                                                                          \
    } while (0)
/* node-aware runs of one COLL3 call */
#define RUNS (persist ? 2 : 1)

/* ---- the expected node map ---- */
static void expected_nodes(void) {
    node_of = malloc(sizeof(int) * (size_t)size);
    const char *split = getenv("TANDEM_NODE_SPLIT");
    if (split && *split) {
        for (int r = 0; r < size; r++)
            node_of[r] = !strcmp(split, "odd-even")  ? r % 2
                         : !strcmp(split, "nolocal") ? r
                                                     : r / atoi(split);
        return;
    }
    char name[MPI_MAX_PROCESSOR_NAME] = "";
    int len;
    MPI_Get_processor_name(name, &len);
    char *all = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        node_of[r] = r;
        for (int q = 0; q < r; q++)
            if (!strcmp(all + (size_t)q * MPI_MAX_PROCESSOR_NAME,
                        all + (size_t)r * MPI_MAX_PROCESSOR_NAME)) {
                node_of[r] = node_of[q];
                break;
            }
    }
    free(all);
}

static int world_of(MPI_Comm c, int r) {
    MPI_Group g, w;
    int wr;
    MPI_Comm_group(c, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_translate_ranks(g, 1, &r, w, &wr);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    return wr;
}

/* How comm's ranks lie on the nodes: nodes spanned, most ranks on one, node by node. */
static void layout(MPI_Comm c, int *nodes_p, int *maxl_p, int *blocks_p) {
    int n, *cnt = calloc((size_t)size, sizeof(int)), nodes = 0, maxl = 0, blocks = 1, prev = -1;
    MPI_Comm_size(c, &n);
    for (int r = 0; r < n; r++) {
        int nd = node_of[world_of(c, r)];
        if (cnt[nd]++ == 0)
            nodes++;
        else if (nd != prev)
            blocks = 0; /* the node came back after another */
        if (cnt[nd] > maxl)
            maxl = cnt[nd];
        prev = nd;
    }
    free(cnt);
    *nodes_p = nodes;
    *maxl_p = maxl;
    *blocks_p = blocks;
}

static const char *mode(void) {
    const char *m = getenv("TANDEM_COLL_NODE_AWARE");
    return m && *m ? m : "auto";
}

/* Should `coll` (BCAST, ...) run node-aware on c, for an op commutative or not? */
static int expect_node(MPI_Comm c, const char *coll, int commute) {
    int nodes, maxl, blocks;
    layout(c, &nodes, &maxl, &blocks);
    if (!strcmp(mode(), "off") || nodes < 2 || (!commute && !blocks))
        return 0;
    if (!strcmp(mode(), "on"))
        return 1;
    char var[64];
    snprintf(var, sizeof(var), "TANDEM_%s_ALGORITHM", coll);
    const char *forced = getenv(var);
    return maxl >= 2 && !(forced && *forced && strcmp(forced, "auto"));
}

/* ---- the node map in communicators ---- */
static void test_split_type(void) {
    MPI_Comm shm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    int n, me, want = 0, wme = 0;
    MPI_Comm_size(shm, &n);
    MPI_Comm_rank(shm, &me);
    for (int r = 0; r < size; r++)
        if (node_of[r] == node_of[m_rank])
            wme += r < m_rank, want++;
    M_CHECK(n == want && me == wme, "split_type shared: rank %d of %d, expected %d of %d", me, n,
            wme, want);
    for (int r = 0; r < n; r++)
        M_CHECK(node_of[world_of(shm, r)] == node_of[m_rank],
                "split_type shared: rank %d is world rank %d, of another node", r,
                world_of(shm, r));
    MPI_Comm_free(&shm);
    MPI_Comm hw;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &hw);
    if (hw != MPI_COMM_NULL) {
        MPI_Comm_size(hw, &n);
        for (int r = 0; r < n; r++)
            M_CHECK(node_of[world_of(hw, r)] == node_of[m_rank],
                    "split_type hw_unguided: world rank %d of another node", world_of(hw, r));
        MPI_Comm_free(&hw);
    }
}

/* ---- the collectives ---- */

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
/* product over the ranks 0..n-1 of c (each by its world rank's matrix), item k */
static void mat_ref(const int *wr, int n, int k, unsigned *out) {
    unsigned acc[4] = {1, 0, 0, 1};
    for (int r = 0; r < n; r++) {
        unsigned m[4];
        mat_of(wr[r], k, m);
        int one = 1;
        matmul(acc, m, &one, NULL);
        memcpy(acc, m, sizeof(acc));
    }
    memcpy(out, acc, sizeof(acc));
}

static int val(int wr, int i) {
    return wr * 1000 + i + 1;
}

#define NKINDS 10
typedef struct counters {
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[NKINDS];
} counters_t;
static const char *const kinds[NKINDS] = {"barrier",   "bcast",   "reduce",  "allreduce",
                                          "allgather", "gather",  "scatter", "allgatherv",
                                          "gatherv",   "scatterv"};
/* the TANDEM_<COLL>_ALGORITHM that keeps each flat in auto (Allgatherv: Allgather's) */
static const char *const envs[NKINDS] = {"BARRIER",   "BCAST",   "REDUCE",  "ALLREDUCE",
                                         "ALLGATHER", "GATHER",  "SCATTER", "ALLGATHER",
                                         "GATHERV",   "SCATTERV"};

static void read_all(counters_t *ct, unsigned long long *v) {
    for (int k = 0; k < NKINDS; k++)
        v[k] = m_read(ct->s, ct->h[k]);
}

/* cnt ints one every other int (a vector with gaps), extent 2 * cnt ints */
static MPI_Datatype strided(int cnt) {
    MPI_Datatype v, t;
    MPI_Type_vector(cnt, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * sizeof(int) * (size_t)(cnt > 0 ? cnt : 1)), &t);
    MPI_Type_free(&v);
    MPI_Type_commit(&t);
    return t;
}

static void check_counts(counters_t *ct, const unsigned long long *before, const int *calls,
                         int from, int to, MPI_Comm c, const char *what) {
    unsigned long long after[NKINDS];
    read_all(ct, after);
    for (int k = from; k < to; k++) {
        unsigned long long want = expect_node(c, envs[k], 1) ? (unsigned long long)calls[k] : 0;
        M_CHECK(after[k] - before[k] == want, "%s: %d %s runs, %llu node-aware, expected %llu",
                what, calls[k], kinds[k], after[k] - before[k], want);
    }
}

/* Gatherv and Scatterv at one root: rank r's block is cnt + r ints, none when r % 3 == 1;
 * the root's displacements in rank order packed, or from the last rank down with a gap
 * of one item; the root's buffer an int every other int or not, in place or not; odd
 * ranks send or receive their own block strided too. */
static void test_v(MPI_Comm c, const char *what, const int *wr, int cnt, int root, int *calls) {
    int n, me;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    int *vc = malloc(sizeof(int) * (size_t)n), *vd = malloc(sizeof(int) * (size_t)n);
    int total = 0;
    for (int r = 0; r < n; r++)
        vc[r] = r % 3 == 1 ? 0 : cnt + r, total += vc[r] + 1;
    int *g = malloc(sizeof(int) * 2 * (size_t)total),
        *want = malloc(sizeof(int) * 2 * (size_t)total);
    int *a = malloc(sizeof(int) * 2 * (size_t)(cnt + n));
    MPI_Datatype every2; /* an int every other int */
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every2);
    MPI_Type_commit(&every2);
    MPI_Datatype mytype = me % 2 ? every2 : MPI_INT;
    int sd = me % 2 ? 2 : 1, mine = vc[me];
    for (int v = 0; v < 8; v++) {
        if (cnt > 1000 && v != 0 && v != 7) /* large: the plainest case and every twist at once */
            continue;
        int inplace = v & 1, rstrided = (v >> 1) & 1, reversed = v >> 2;
        MPI_Datatype rt = rstrided ? every2 : MPI_INT;
        int stride = rstrided ? 2 : 1, ip = inplace && me == root;
        for (int r = 0, at = 0; r < n; r++) {
            int q = reversed ? n - 1 - r : r;
            vd[q] = at;
            at += vc[q] + reversed;
        }
        /* the root's buffer as it should end (Gatherv) or start (Scatterv, + 7) */
        for (int i = 0; i < 2 * total; i++)
            want[i] = -1;
        for (int r = 0; r < n; r++)
            for (int i = 0; i < vc[r]; i++)
                want[(size_t)(vd[r] + i) * stride] = val(wr[r], i);
        /* Gatherv */
        for (int i = 0; i < 2 * (cnt + n); i++)
            a[i] = i % sd || i / sd >= mine ? -7 : val(wr[me], i / sd);
        for (int i = 0; i < 2 * total; i++)
            g[i] = -1;
        if (ip)
            for (int i = 0; i < mine; i++)
                g[(size_t)(vd[me] + i) * stride] = val(wr[me], i);
        const void *sb = ip ? MPI_IN_PLACE : a;
        const int *rc = me == root ? vc : NULL, *rd = me == root ? vd : NULL;
        COLL3(MPI_Gatherv(sb, mine, mytype, g, rc, rd, rt, root, c),
              MPI_Igatherv(sb, mine, mytype, g, rc, rd, rt, root, c, RQ),
              MPI_Gatherv_init(sb, mine, mytype, g, rc, rd, rt, root, c, MPI_INFO_NULL, &rq_));
        calls[8] += RUNS;
        if (me == root)
            for (int i = 0; i < 2 * total; i++)
                M_CHECK(g[i] == want[i], "%s: gatherv n=%d root %d%s%s%s: [%d] = %d, want %d", what,
                        cnt, root, inplace ? " in place" : "", rstrided ? " strided" : "",
                        reversed ? " reversed" : "", i, g[i], want[i]);
        /* Scatterv */
        for (int i = 0; i < 2 * total; i++)
            g[i] = me == root && want[i] != -1 ? want[i] + 7 : -1;
        for (int i = 0; i < 2 * (cnt + n); i++)
            a[i] = -3;
        void *rb = ip ? MPI_IN_PLACE : a;
        COLL3(MPI_Scatterv(g, rc, rd, rt, rb, mine, mytype, root, c),
              MPI_Iscatterv(g, rc, rd, rt, rb, mine, mytype, root, c, RQ),
              MPI_Scatterv_init(g, rc, rd, rt, rb, mine, mytype, root, c, MPI_INFO_NULL, &rq_));
        calls[9] += RUNS;
        if (!ip)
            for (int i = 0; i < 2 * (cnt + n); i++) {
                int w = i % sd || i / sd >= mine ? -3 : val(wr[me], i / sd) + 7;
                M_CHECK(a[i] == w, "%s: scatterv n=%d root %d%s%s: [%d] = %d, want %d", what, cnt,
                        root, rstrided ? " strided" : "", reversed ? " reversed" : "", i, a[i], w);
            }
    }
    MPI_Type_free(&every2);
    free(vc);
    free(vd);
    free(g);
    free(want);
    free(a);
}

/* Gather(v) and Scatter(v) (every root), and Allgatherv, with the node-aware counters. */
static void test_gathers(MPI_Comm c, const char *what, counters_t *ct, const int *wr) {
    int n, me;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    static const int counts[] = {1, 7, 1000, 70000};
    int calls[NKINDS] = {0};
    unsigned long long before[NKINDS];
    read_all(ct, before);
    for (int ci = 0; ci < 4; ci++) {
        int cnt = counts[ci];
        size_t big = 2 * (size_t)cnt * (size_t)n; /* room for n strided blocks */
        int *a = malloc(sizeof(int) * 2 * (size_t)cnt), *b = malloc(sizeof(int) * big);
        MPI_Datatype st = strided(cnt);
        /* odd ranks send or receive their own block strided, even ones contiguous */
        MPI_Datatype mytype = me % 2 ? st : MPI_INT;
        int mycount = me % 2 ? 1 : cnt, sd = me % 2 ? 2 : 1;
        for (int root = 0; root < n; root++) {
            for (int v = 0; v < 4; v++) {
                int inplace = v & 1, rstrided = v >> 1; /* the root's buffer strided */
                MPI_Datatype rt = rstrided ? st : MPI_INT;
                int rc = rstrided ? 1 : cnt, stride = rstrided ? 2 : 1;
                size_t bext = (size_t)cnt * (size_t)stride; /* one block of the root's buffer */
                /* Gather */
                for (size_t i = 0; i < 2 * (size_t)cnt; i++)
                    a[i] = i % (size_t)sd || i / (size_t)sd >= (size_t)cnt
                               ? -7
                               : val(wr[me], (int)(i / (size_t)sd));
                for (size_t i = 0; i < big; i++)
                    b[i] = -1;
                int ip = inplace && me == root;
                if (ip)
                    for (int i = 0; i < cnt; i++)
                        b[(size_t)me * bext + (size_t)i * stride] = val(wr[me], i);
                const void *sb = ip ? MPI_IN_PLACE : a;
                COLL3(
                    MPI_Gather(sb, mycount, mytype, b, rc, rt, root, c),
                    MPI_Igather(sb, mycount, mytype, b, rc, rt, root, c, RQ),
                    MPI_Gather_init(sb, mycount, mytype, b, rc, rt, root, c, MPI_INFO_NULL, &rq_));
                calls[5] += RUNS;
                if (me == root)
                    for (int r = 0; r < n; r++)
                        for (size_t i = 0; i < bext; i++) {
                            int want = i % (size_t)stride ? -1 : val(wr[r], (int)(i / stride));
                            M_CHECK(b[(size_t)r * bext + i] == want,
                                    "%s: gather n=%d root %d%s%s: block %d [%zu] = %d, want %d",
                                    what, cnt, root, inplace ? " in place" : "",
                                    rstrided ? " strided" : "", r, i, b[(size_t)r * bext + i],
                                    want);
                        }
                /* Scatter: block r of the root's buffer to rank r */
                for (size_t i = 0; i < big; i++)
                    b[i] = -1;
                if (me == root)
                    for (int r = 0; r < n; r++)
                        for (int i = 0; i < cnt; i++)
                            b[(size_t)r * bext + (size_t)i * stride] = val(wr[r], i) + 7;
                for (size_t i = 0; i < 2 * (size_t)cnt; i++)
                    a[i] = -3;
                void *rb = ip ? MPI_IN_PLACE : a;
                COLL3(
                    MPI_Scatter(b, rc, rt, rb, mycount, mytype, root, c),
                    MPI_Iscatter(b, rc, rt, rb, mycount, mytype, root, c, RQ),
                    MPI_Scatter_init(b, rc, rt, rb, mycount, mytype, root, c, MPI_INFO_NULL, &rq_));
                calls[6] += RUNS;
                if (!ip)
                    for (size_t i = 0; i < 2 * (size_t)cnt; i++) {
                        int want = i % (size_t)sd || i / (size_t)sd >= (size_t)cnt
                                       ? -3
                                       : val(wr[me], (int)(i / (size_t)sd)) + 7;
                        M_CHECK(a[i] == want, "%s: scatter n=%d root %d%s: [%zu] = %d, want %d",
                                what, cnt, root, rstrided ? " strided" : "", i, a[i], want);
                    }
            }
            test_v(c, what, wr, cnt, root, calls);
        }
        /* Allgatherv: rank r brings cnt + r ints, none when r % 3 == 1 */
        int *rcounts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
        int total = 0;
        for (int r = 0; r < n; r++)
            rcounts[r] = r % 3 == 1 ? 0 : cnt + r, total += rcounts[r] + 1;
        int *g = malloc(sizeof(int) * 2 * (size_t)total),
            *src = malloc(sizeof(int) * (size_t)(cnt + n));
        MPI_Datatype every2; /* an int every other int */
        MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every2);
        MPI_Type_commit(&every2);
        for (int v = 0; v < 8; v++) {
            int inplace = v & 1, reversed = (v >> 1) & 1, spread = v >> 2;
            MPI_Datatype rt = spread ? every2 : MPI_INT;
            int stride = spread ? 2 : 1;
            /* in rank order, packed; or from the last rank down, one item apart */
            for (int r = 0, at = 0; r < n; r++) {
                int q = reversed ? n - 1 - r : r;
                displs[q] = at;
                at += rcounts[q] + reversed;
            }
            for (int i = 0; i < 2 * total; i++)
                g[i] = -1;
            for (int i = 0; i < rcounts[me]; i++)
                src[i] = val(wr[me], i);
            if (inplace)
                for (int i = 0; i < rcounts[me]; i++)
                    g[(size_t)(displs[me] + i) * stride] = src[i];
            COLL3(MPI_Allgatherv(inplace ? MPI_IN_PLACE : src, rcounts[me], MPI_INT, g, rcounts,
                                 displs, rt, c),
                  MPI_Iallgatherv(inplace ? MPI_IN_PLACE : src, rcounts[me], MPI_INT, g, rcounts,
                                  displs, rt, c, RQ),
                  MPI_Allgatherv_init(inplace ? MPI_IN_PLACE : src, rcounts[me], MPI_INT, g,
                                      rcounts, displs, rt, c, MPI_INFO_NULL, &rq_));
            calls[7] += RUNS;
            for (int i = 0; i < 2 * total; i++) {
                int want = -1;
                for (int r = 0; r < n; r++)
                    if (i % stride == 0 && i / stride >= displs[r] &&
                        i / stride < displs[r] + rcounts[r])
                        want = val(wr[r], i / stride - displs[r]);
                M_CHECK(g[i] == want, "%s: allgatherv n=%d%s%s%s: [%d] = %d, want %d", what, cnt,
                        inplace ? " in place" : "", reversed ? " reversed" : "",
                        spread ? " strided" : "", i, g[i], want);
            }
        }
        MPI_Type_free(&every2);
        MPI_Type_free(&st);
        free(rcounts);
        free(displs);
        free(g);
        free(src);
        free(a);
        free(b);
    }
    check_counts(ct, before, calls, 5, NKINDS, c, what);
}

static void test_comm(MPI_Comm c, const char *what, counters_t *ct) {
    int n, me;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    int *wr = malloc(sizeof(int) * (size_t)n);
    for (int r = 0; r < n; r++)
        wr[r] = world_of(c, r);
    static const int counts[] = {1, 7, 1000, 70000};
    const int ncounts = 4;
    int calls[NKINDS] = {0};
    unsigned long long before[NKINDS];
    read_all(ct, before);

    for (int ci = 0; ci < ncounts; ci++) {
        int cnt = counts[ci];
        int *a = malloc(sizeof(int) * (size_t)cnt), *b = malloc(sizeof(int) * (size_t)cnt * n);
        COLL(MPI_Barrier(c), MPI_Ibarrier(c, RQ));
        calls[0]++;
        for (int root = 0; root < n; root++) {
            for (int i = 0; i < cnt; i++)
                a[i] = me == root ? val(wr[root], i) : -1;
            COLL(MPI_Bcast(a, cnt, MPI_INT, root, c), MPI_Ibcast(a, cnt, MPI_INT, root, c, RQ));
            calls[1]++;
            for (int i = 0; i < cnt; i++)
                M_CHECK(a[i] == val(wr[root], i), "%s: bcast n=%d root %d: [%d] = %d", what, cnt,
                        root, i, a[i]);
            for (int inplace = 0; inplace < 2; inplace++) {
                for (int i = 0; i < cnt; i++)
                    a[i] = val(wr[me], i), b[i] = inplace && me == root ? a[i] : -1;
                const void *sb = inplace && me == root ? MPI_IN_PLACE : a;
                COLL(MPI_Reduce(sb, b, cnt, MPI_INT, MPI_SUM, root, c),
                     MPI_Ireduce(sb, b, cnt, MPI_INT, MPI_SUM, root, c, RQ));
                calls[2]++;
                if (me == root)
                    for (int i = 0; i < cnt; i++) {
                        int want = 0;
                        for (int r = 0; r < n; r++)
                            want += val(wr[r], i);
                        M_CHECK(b[i] == want, "%s: reduce n=%d root %d%s: [%d] = %d, want %d", what,
                                cnt, root, inplace ? " in place" : "", i, b[i], want);
                    }
            }
        }
        for (int inplace = 0; inplace < 2; inplace++) {
            for (int i = 0; i < cnt; i++)
                a[i] = val(wr[me], i), b[i] = inplace ? a[i] : -1;
            COLL(MPI_Allreduce(inplace ? MPI_IN_PLACE : a, b, cnt, MPI_INT, MPI_MAX, c),
                 MPI_Iallreduce(inplace ? MPI_IN_PLACE : a, b, cnt, MPI_INT, MPI_MAX, c, RQ));
            calls[3]++;
            int top = 0;
            for (int r = 0; r < n; r++)
                top = wr[r] > top ? wr[r] : top;
            for (int i = 0; i < cnt; i++)
                M_CHECK(b[i] == val(top, i), "%s: allreduce n=%d%s: [%d] = %d", what, cnt,
                        inplace ? " in place" : "", i, b[i]);
            for (int i = 0; i < cnt * n; i++)
                b[i] = -1;
            if (inplace)
                memcpy(b + (size_t)me * cnt, a, sizeof(int) * (size_t)cnt);
            COLL(MPI_Allgather(inplace ? MPI_IN_PLACE : a, cnt, MPI_INT, b, cnt, MPI_INT, c),
                 MPI_Iallgather(inplace ? MPI_IN_PLACE : a, cnt, MPI_INT, b, cnt, MPI_INT, c, RQ));
            calls[4]++;
            for (int r = 0; r < n; r++)
                for (int i = 0; i < cnt; i++)
                    M_CHECK(b[(size_t)r * cnt + i] == val(wr[r], i),
                            "%s: allgather n=%d%s: block %d [%d] = %d", what, cnt,
                            inplace ? " in place" : "", r, i, b[(size_t)r * cnt + i]);
        }
        free(a);
        free(b);
    }
    check_counts(ct, before, calls, 0, 5, c, what);
    test_gathers(c, what, ct, wr);

    /* a non-commutative op: rank order whatever the layout */
    MPI_Op op;
    MPI_Datatype mat;
    MPI_Op_create(matmul, 0, &op);
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mat);
    MPI_Type_commit(&mat);
    int ncalls = 0;
    unsigned long long after[NKINDS];
    read_all(ct, before);
    for (int cnt = 1; cnt <= 3000; cnt += 2999) {
        unsigned *in = malloc((size_t)cnt * 16), *out = malloc((size_t)cnt * 16), ref[4];
        for (int k = 0; k < cnt; k++)
            mat_of(wr[me], k, in + 4 * k);
        for (int inplace = 0; inplace < 2; inplace++) {
            if (inplace)
                memcpy(out, in, (size_t)cnt * 16);
            COLL(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, cnt, mat, op, c),
                 MPI_Iallreduce(inplace ? MPI_IN_PLACE : in, out, cnt, mat, op, c, RQ));
            ncalls++;
            for (int k = 0; k < cnt; k++) {
                mat_ref(wr, n, k, ref);
                M_CHECK(!memcmp(ref, out + 4 * k, 16),
                        "%s: non-commutative allreduce n=%d%s item %d", what, cnt,
                        inplace ? " in place" : "", k);
            }
        }
        for (int root = 0; root < n; root++) {
            for (int inplace = 0; inplace < 2; inplace++) {
                if (inplace && me == root)
                    memcpy(out, in, (size_t)cnt * 16);
                const void *sb = inplace && me == root ? MPI_IN_PLACE : in;
                COLL(MPI_Reduce(sb, out, cnt, mat, op, root, c),
                     MPI_Ireduce(sb, out, cnt, mat, op, root, c, RQ));
                if (me == root)
                    for (int k = 0; k < cnt; k++) {
                        mat_ref(wr, n, k, ref);
                        M_CHECK(!memcmp(ref, out + 4 * k, 16),
                                "%s: non-commutative reduce n=%d root %d%s item %d", what, cnt,
                                root, inplace ? " in place" : "", k);
                    }
            }
        }
        free(in);
        free(out);
    }
    read_all(ct, after);
    unsigned long long want = expect_node(c, "ALLREDUCE", 0) ? (unsigned long long)ncalls : 0;
    M_CHECK(after[3] - before[3] == want,
            "%s: %d non-commutative allreduce calls, %llu node-aware, expected %llu", what, ncalls,
            after[3] - before[3], want);
    MPI_Op_free(&op);
    MPI_Type_free(&mat);
    free(wr);
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init(&argc, &argv);
    M_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nb = argc > 1 && !strcmp(argv[1], "nb");
    persist = argc > 1 && !strcmp(argv[1], "persist");
    expected_nodes();
    test_split_type();

    counters_t ct;
    M_OK(MPI_T_pvar_session_create(&ct.s));
    for (int k = 0; k < NKINDS; k++) {
        char name[64];
        snprintf(name, sizeof(name), "tandem_coll_%s_node", kinds[k]);
        ct.h[k] = m_handle(ct.s, name, MPI_T_PVAR_CLASS_COUNTER, NULL, 1);
    }
    if (m_errs == 0) {
        test_comm(MPI_COMM_WORLD, "world", &ct);
        MPI_Comm rev, drop;
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - m_rank, &rev);
        test_comm(rev, "reversed", &ct);
        MPI_Comm_free(&rev);
        MPI_Comm_split(MPI_COMM_WORLD, m_rank == 0 ? MPI_UNDEFINED : 0, m_rank, &drop);
        if (drop != MPI_COMM_NULL) {
            test_comm(drop, "without rank 0", &ct);
            MPI_Comm_free(&drop);
        }
    }
    M_OK(MPI_T_pvar_session_free(&ct.s));
    free(node_of);
    int errs = m_finish();
    MPI_Finalize();
    M_OK(MPI_T_finalize());
    if (m_rank == 0 && errs + m_errs == 0)
        printf(" No Errors\n");
    return m_errs ? 1 : 0;
}
