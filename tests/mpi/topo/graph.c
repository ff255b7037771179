/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph and distributed graph topologies, each process's neighbours checked
 * against a serial reference every rank computes from the same inputs:
 * Graph_create (a ring with chords, some ranks outside the graph),
 * Graphdims_get, Graph_get, Graph_neighbors(_count) of every node,
 * Graph_map, Topo_test; Dist_graph_create_adjacent and Dist_graph_create
 * (edges named by processes other than their ends, weighted and
 * MPI_UNWEIGHTED, a process naming no edge with MPI_WEIGHTS_EMPTY), whose
 * edge sets must equal the reference; Comm_dup keeps both kinds.
 */
#include "ttopo.h"

/* the reference graph on n nodes: i -> i+1, i -> i+2 (mod n), and 0 -> every node */
static int ref_graph(int n, int *index, int *edges) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (n > 1)
            edges[k++] = (i + 1) % n;
        if (n > 2)
            edges[k++] = (i + 2) % n;
        if (i == 0)
            for (int j = 0; j < n; j++)
                edges[k++] = j;
        index[i] = k;
    }
    return k;
}

static void test_graph(void) {
    for (int nn = 0; nn <= t_size; nn++) {
        int index[8], edges[64], ne = ref_graph(nn, index, edges), newrank;
        T_OK(MPI_Graph_map(MPI_COMM_WORLD, nn, index, edges, &newrank));
        T_CHECK(newrank == (t_rank < nn ? t_rank : MPI_UNDEFINED), "Graph_map %d", newrank);
        MPI_Comm g;
        T_OK(MPI_Graph_create(MPI_COMM_WORLD, nn, index, edges, 0, &g));
        T_CHECK((t_rank < nn) == (g != MPI_COMM_NULL), "rank %d, %d nodes: comm %#x", t_rank, nn,
                (unsigned)g);
        if (g == MPI_COMM_NULL)
            continue;
        for (int pass = 0; pass < 2; pass++) {
            int st, gn, ge, gi[8], gedges[64], r;
            MPI_Comm_rank(g, &r);
            T_CHECK(r == t_rank, "rank changed %d -> %d", t_rank, r);
            T_OK(MPI_Topo_test(g, &st));
            T_CHECK(st == MPI_GRAPH, "Topo_test %d", st);
            T_OK(MPI_Graphdims_get(g, &gn, &ge));
            T_CHECK(gn == nn && ge == ne, "Graphdims_get %d %d, expected %d %d", gn, ge, nn, ne);
            T_OK(MPI_Graph_get(g, 8, 64, gi, gedges));
            for (int i = 0; i < nn; i++)
                T_CHECK(gi[i] == index[i], "index[%d]=%d, expected %d", i, gi[i], index[i]);
            for (int i = 0; i < ne; i++)
                T_CHECK(gedges[i] == edges[i], "edges[%d]=%d, expected %d", i, gedges[i], edges[i]);
            for (int node = 0; node < nn; node++) {
                int cnt, nb[64], first = node ? index[node - 1] : 0;
                T_OK(MPI_Graph_neighbors_count(g, node, &cnt));
                T_CHECK(cnt == index[node] - first, "node %d: %d neighbours", node, cnt);
                T_OK(MPI_Graph_neighbors(g, node, 64, nb));
                for (int i = 0; i < cnt && i < 64; i++)
                    T_CHECK(nb[i] == edges[first + i], "node %d neighbour %d: %d", node, i, nb[i]);
            }
            if (pass == 0) { /* again on a duplicate */
                MPI_Comm d;
                T_OK(MPI_Comm_dup(g, &d));
                MPI_Comm_free(&g);
                g = d;
            }
        }
        MPI_Comm_free(&g);
    }
}

/* Reference distributed graph over n processes: edge i -> (i*3 + k) % n for
 * k = 1..(i % 3)+1 with weight 100*i + k, plus a self loop at rank 1. */
typedef struct edge {
    int s, d, w;
} edge_t;
static int ref_edges(int n, edge_t *e) {
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 1; j <= i % 3 + 1; j++)
            e[k++] = (edge_t){i, (i * 3 + j) % n, 100 * i + j};
    if (n > 1)
        e[k++] = (edge_t){1, 1, 7};
    return k;
}

static int cmp_pair(const void *a, const void *b) {
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The communicator's neighbours (and weights) equal the reference's, as sets. */
static void check_dist(MPI_Comm g, const edge_t *e, int ne, int weighted, bool ordered,
                       const char *what) {
    int st, in, out, w;
    T_OK(MPI_Topo_test(g, &st));
    T_CHECK(st == MPI_DIST_GRAPH, "%s: Topo_test %d", what, st);
    T_OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    T_CHECK(!!w == !!weighted, "%s: weighted %d", what, w);
    int rin[64][2], rout[64][2], nin = 0, nout = 0;
    for (int k = 0; k < ne; k++) {
        if (e[k].d == t_rank)
            rin[nin][0] = e[k].s, rin[nin++][1] = e[k].w;
        if (e[k].s == t_rank)
            rout[nout][0] = e[k].d, rout[nout++][1] = e[k].w;
    }
    T_CHECK(in == nin && out == nout, "%s: degrees %d %d, expected %d %d", what, in, out, nin,
            nout);
    if (in != nin || out != nout)
        return;
    int src[64], sw[64], dst[64], dw[64], gin[64][2], gout[64][2];
    T_OK(MPI_Dist_graph_neighbors(g, 64, src, weighted ? sw : MPI_UNWEIGHTED, 64, dst,
                                  weighted ? dw : MPI_UNWEIGHTED));
    for (int i = 0; i < in; i++)
        gin[i][0] = src[i], gin[i][1] = weighted ? sw[i] : 0;
    for (int i = 0; i < out; i++)
        gout[i][0] = dst[i], gout[i][1] = weighted ? dw[i] : 0;
    if (!weighted) {
        for (int i = 0; i < nin; i++)
            rin[i][1] = 0;
        for (int i = 0; i < nout; i++)
            rout[i][1] = 0;
    }
    if (!ordered) {
        qsort(gin, (size_t)in, sizeof(gin[0]), cmp_pair);
        qsort(rin, (size_t)in, sizeof(rin[0]), cmp_pair);
        qsort(gout, (size_t)out, sizeof(gout[0]), cmp_pair);
        qsort(rout, (size_t)out, sizeof(rout[0]), cmp_pair);
    }
    for (int i = 0; i < in; i++)
        T_CHECK(gin[i][0] == rin[i][0] && gin[i][1] == rin[i][1],
                "%s: source %d is %d (w %d), expected %d (w %d)", what, i, gin[i][0], gin[i][1],
                rin[i][0], rin[i][1]);
    for (int i = 0; i < out; i++)
        T_CHECK(gout[i][0] == rout[i][0] && gout[i][1] == rout[i][1],
                "%s: destination %d is %d (w %d), expected %d (w %d)", what, i, gout[i][0],
                gout[i][1], rout[i][0], rout[i][1]);
}

static void test_dist(void) {
    edge_t e[64];
    int ne = ref_edges(t_size, e);
    for (int weighted = 0; weighted < 2; weighted++) {
        /* adjacent: each process lists its own in and out edges, in reference order */
        int src[64], sw[64], dst[64], dw[64], nin = 0, nout = 0;
        for (int k = 0; k < ne; k++) {
            if (e[k].d == t_rank)
                src[nin] = e[k].s, sw[nin++] = e[k].w;
            if (e[k].s == t_rank)
                dst[nout] = e[k].d, dw[nout++] = e[k].w;
        }
        MPI_Comm g, d;
        T_OK(MPI_Dist_graph_create_adjacent(
            MPI_COMM_WORLD, nin, src, weighted ? (nin ? sw : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED,
            nout, dst, weighted ? (nout ? dw : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED, MPI_INFO_NULL,
            0, &g));
        check_dist(g, e, ne, weighted, true, weighted ? "adjacent weighted" : "adjacent");
        T_OK(MPI_Comm_dup(g, &d));
        check_dist(d, e, ne, weighted, true, "adjacent dup");
        MPI_Comm_free(&d);
        MPI_Comm_free(&g);

        /* general: edge k is named by process (k + 1) % size, grouped by source;
         * the last process names none (when there are several) */
        int n = 0, sources[64], degrees[64], dests[64], ws[64], nd = 0;
        for (int k = 0; k < ne; k++) {
            int namer = (k + 1) % t_size;
            if (namer != t_rank || (t_size > 1 && t_rank == t_size - 1))
                continue;
            if (n == 0 || sources[n - 1] != e[k].s) {
                sources[n] = e[k].s;
                degrees[n++] = 0;
            }
            degrees[n - 1]++;
            dests[nd] = e[k].d;
            ws[nd++] = e[k].w;
        }
        /* the edges the last process would have named are named by rank 0 instead */
        if (t_size > 1 && t_rank == 0)
            for (int k = 0; k < ne; k++)
                if ((k + 1) % t_size == t_size - 1) {
                    sources[n] = e[k].s;
                    degrees[n++] = 1;
                    dests[nd] = e[k].d;
                    ws[nd++] = e[k].w;
                }
        T_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests,
                                   weighted ? (nd ? ws : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &g));
        int r;
        MPI_Comm_rank(g, &r);
        T_CHECK(r == t_rank, "rank changed %d -> %d", t_rank, r);
        check_dist(g, e, ne, weighted, false, weighted ? "general weighted" : "general");
        T_OK(MPI_Comm_dup(g, &d));
        check_dist(d, e, ne, weighted, false, "general dup");
        /* asking twice gives the same order */
        int s1[64], s2[64], d1[64], d2[64], in, out, w;
        MPI_Dist_graph_neighbors_count(g, &in, &out, &w);
        MPI_Dist_graph_neighbors(g, 64, s1, MPI_UNWEIGHTED, 64, d1, MPI_UNWEIGHTED);
        MPI_Dist_graph_neighbors(d, 64, s2, MPI_UNWEIGHTED, 64, d2, MPI_UNWEIGHTED);
        T_CHECK(!memcmp(s1, s2, sizeof(int) * (size_t)in) &&
                    !memcmp(d1, d2, sizeof(int) * (size_t)out),
                "neighbour order differs between calls");
        MPI_Comm_free(&d);
        MPI_Comm_free(&g);
    }
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    test_graph();
    test_dist();
    return t_finish();
}
