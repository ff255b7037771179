/* SPDX-License-Identifier: BSD-3-Clause */
/* Topology objects: construction, copy, Cartesian arithmetic, Dims_create. */
#include "topo.h"

#include "../base/log.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A copy of n ints (n may be 0: a valid, empty array); NULL src gives zeros.
 * Sets *fail on ENOMEM. */
static int *ints_dup(const int *src, int n, bool *fail) {
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (!p) {
        *fail = true;
        return NULL;
    }
    if (n > 0) {
        if (src)
            memcpy(p, src, (size_t)n * sizeof(int));
        else
            memset(p, 0, (size_t)n * sizeof(int));
    }
    return p;
}

void tdm_topo_free(tdm_topo_t *t) {
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->coords);
    free(t->index);
    free(t->edges);
    free(t->in);
    if (t->out != t->in)
        free(t->out);
    free(t->inw);
    free(t->outw);
    free(t);
}

static tdm_topo_t *fail_free(tdm_topo_t *t, const char *what) {
    tdm_error(COMM, "out of memory for a %s topology", what);
    tdm_topo_free(t);
    return NULL;
}

int tdm_topo_cart_size(int ndims, const int *dims) {
    long long n = 1;
    for (int i = 0; i < ndims; i++) {
        n *= dims[i];
        if (n > 0x7fffffff)
            return -1;
    }
    return (int)n;
}

void tdm_topo_cart_coords(const tdm_topo_t *t, int rank, int *coords) {
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

int tdm_topo_cart_rank(const tdm_topo_t *t, const int *coords) {
    int rank = 0;
    for (int i = 0; i < t->ndims; i++) {
        int c = coords[i], n = t->dims[i];
        if (c < 0 || c >= n) {
            if (!t->periods[i])
                return -1;
            c %= n;
            if (c < 0)
                c += n;
        }
        rank = rank * n + c;
    }
    return rank;
}

void tdm_topo_cart_shift(const tdm_topo_t *t, int dir, int disp, int *src_p, int *dst_p) {
    int save = t->coords[dir], n = t->dims[dir];
    /* coords is the caller's own, moved and put back: no allocation here */
    int *c = t->coords;
    /* disp may be any int: reduce it first so save +- disp cannot overflow */
    long long d = disp;
    if (t->periods[dir])
        d %= n;
    else if (d > n || d < -n)
        d = d > 0 ? n : -n;
    c[dir] = (int)(save + d);
    *dst_p = tdm_topo_cart_rank(t, c);
    c[dir] = (int)(save - d);
    *src_p = tdm_topo_cart_rank(t, c);
    c[dir] = save;
}

tdm_topo_t *tdm_topo_cart_new(int ndims, const int *dims, const int *periods, int rank) {
    tdm_topo_t *t = calloc(1, sizeof(*t));
    if (!t)
        return fail_free(t, "Cartesian");
    bool fail = false;
    t->kind = TDM_TOPO_CART;
    t->ndims = ndims;
    t->dims = ints_dup(dims, ndims, &fail);
    t->periods = ints_dup(NULL, ndims, &fail);
    t->coords = ints_dup(NULL, ndims, &fail);
    t->indeg = t->outdeg = 2 * ndims;
    t->in = ints_dup(NULL, 2 * ndims, &fail);
    if (fail)
        return fail_free(t, "Cartesian");
    t->out = t->in;
    for (int i = 0; i < ndims; i++)
        t->periods[i] = periods[i] != 0;
    tdm_topo_cart_coords(t, rank, t->coords);
    for (int i = 0; i < ndims; i++)
        tdm_topo_cart_shift(t, i, 1, &t->in[2 * i], &t->in[2 * i + 1]);
    return t;
}

tdm_topo_t *tdm_topo_graph_new(int nnodes, const int *index, const int *edges, int rank) {
    tdm_topo_t *t = calloc(1, sizeof(*t));
    if (!t)
        return fail_free(t, "graph");
    bool fail = false;
    t->kind = TDM_TOPO_GRAPH;
    t->nnodes = nnodes;
    t->nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    t->index = ints_dup(index, nnodes, &fail);
    t->edges = ints_dup(edges, t->nedges, &fail);
    int first = rank > 0 ? index[rank - 1] : 0;
    t->indeg = t->outdeg = index[rank] - first;
    t->in = ints_dup(edges + first, t->indeg, &fail);
    if (fail)
        return fail_free(t, "graph");
    t->out = t->in;
    return t;
}

tdm_topo_t *tdm_topo_dist_new(int indeg, const int *in, const int *inw, int outdeg, const int *out,
                              const int *outw, bool weighted) {
    tdm_topo_t *t = calloc(1, sizeof(*t));
    if (!t)
        return fail_free(t, "distributed graph");
    bool fail = false;
    t->kind = TDM_TOPO_DIST_GRAPH;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->weighted = weighted;
    t->in = ints_dup(in, indeg, &fail);
    t->out = ints_dup(out, outdeg, &fail);
    if (weighted) {
        t->inw = ints_dup(inw, indeg, &fail);
        t->outw = ints_dup(outw, outdeg, &fail);
    }
    if (fail)
        return fail_free(t, "distributed graph");
    return t;
}

tdm_topo_t *tdm_topo_dup(const tdm_topo_t *t) {
    tdm_topo_t *n = calloc(1, sizeof(*n));
    if (!n)
        return fail_free(n, "copied");
    bool fail = false;
    *n = *t;
    n->dims = n->periods = n->coords = n->index = n->edges = NULL;
    n->in = n->out = n->inw = n->outw = NULL;
    if (t->kind == TDM_TOPO_CART) {
        n->dims = ints_dup(t->dims, t->ndims, &fail);
        n->periods = ints_dup(t->periods, t->ndims, &fail);
        n->coords = ints_dup(t->coords, t->ndims, &fail);
    }
    if (t->kind == TDM_TOPO_GRAPH) {
        n->index = ints_dup(t->index, t->nnodes, &fail);
        n->edges = ints_dup(t->edges, t->nedges, &fail);
    }
    n->in = ints_dup(t->in, t->indeg, &fail);
    if (fail)
        return fail_free(n, "copied");
    n->out = t->out == t->in ? n->in : ints_dup(t->out, t->outdeg, &fail);
    if (t->inw)
        n->inw = ints_dup(t->inw, t->indeg, &fail);
    if (t->outw)
        n->outw = ints_dup(t->outw, t->outdeg, &fail);
    if (fail)
        return fail_free(n, "copied");
    return n;
}

static void *ops_dup(const void *t) {
    return tdm_topo_dup(t);
}
static void ops_free(void *t) {
    tdm_topo_free(t);
}
static const tdm_comm_topo_ops_t topo_ops = {.dup = ops_dup, .free = ops_free};

void tdm_topo_attach(tdm_comm_t *c, tdm_topo_t *t) {
    /* threads making topologies on different communicators store the same pointer */
    TDM_STORE_RELEASE(&tdm_comm_topo_ops, &topo_ops);
    c->topo = t;
}

/* ---- Dims_create ----
 * MPI asks for dimensions "as close to each other as possible". Tandem takes that as:
 * the free dimensions' largest minus smallest is as small as it can be, ties going to
 * the smallest largest, then the smallest second, and so on (the dims in nonincreasing
 * order, compared left to right). The search is exact: a depth-first walk over the
 * divisors, each dimension no larger than the one before, cut where even the best
 * completion cannot beat the best found (greedy prime packing gave 72 in 2 as 12 x 6
 * where 9 x 8 exists). At most as many dimensions as n has prime factors exceed 1. */

typedef struct dims_search {
    const int *divs; /* divisors of the number to split, ascending */
    int ndivs;
    int k;        /* dimensions the search fills (the others are 1) */
    bool ones;    /* some free dimension is 1 whatever the split */
    int cur[32];  /* the dimensions chosen so far, nonincreasing */
    int best[32]; /* the best complete choice */
    long long best_range;
} dims_search_t;

static int cmp_asc(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The largest r with r^e <= m (e >= 1). */
static int iroot(int m, int e) {
    int lo = 1, hi = m;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        long long p = 1;
        for (int i = 0; i < e && p <= m; i++)
            p *= mid;
        if (p <= m)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Does a beat the best so far: smaller range, or the same and smaller left to right? */
static bool dims_better(const dims_search_t *s, long long range) {
    if (range != s->best_range)
        return range < s->best_range;
    for (int i = 0; i < s->k; i++)
        if (s->cur[i] != s->best[i])
            return s->cur[i] < s->best[i];
    return false;
}

/* Fill dimension i onwards with m, each at most `upper`. */
static void dims_walk(dims_search_t *s, int i, int m, int upper) {
    int left = s->k - i; /* dimensions still to fill, this one included */
    if (left == 1) {
        if (m > upper)
            return;
        s->cur[i] = m;
        long long range = (long long)s->cur[0] - (s->ones ? 1 : m);
        if (dims_better(s, range)) {
            s->best_range = range;
            for (int j = 0; j < s->k; j++)
                s->best[j] = s->cur[j];
        }
        return;
    }
    /* this dimension is at least the left-th root of m (the others are no larger) */
    int lowest = iroot(m, left);
    long long p = 1;
    for (int e = 0; e < left && p < m; e++)
        p *= lowest;
    if (p < m)
        lowest++;
    for (int d = 0; d < s->ndivs; d++) {
        int v = s->divs[d];
        if (v < lowest || m % v)
            continue;
        if (v > upper)
            break;
        int first = i == 0 ? v : s->cur[0];
        /* the smallest dimension of any completion is at most the (left-1)-th root of
         * what remains: the range cannot get below first minus that */
        long long floor_range = (long long)first - (s->ones ? 1 : iroot(m / v, left - 1));
        if (floor_range > s->best_range) {
            if (i == 0)
                break; /* larger first dimensions only make it worse */
            continue;
        }
        s->cur[i] = v;
        dims_walk(s, i + 1, m / v, v);
    }
}

int tdm_topo_dims_create(int nnodes, int ndims, int *dims) {
    long long preset = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] > 0)
            preset *= dims[i];
        else
            nfree++;
        if (preset > nnodes)
            return -1;
    }
    if (preset <= 0 || nnodes % preset != 0)
        return -1;
    int rest = (int)(nnodes / preset);
    if (nfree == 0)
        return rest == 1 ? 0 : -1;
    /* prime factors (at most 31 for an int) and divisors (at most 1536) of rest */
    int nprime = 0;
    for (int m = rest, p = 2; m > 1; p++) {
        if ((long long)p * p > m)
            p = m;
        while (m % p == 0) {
            m /= p;
            nprime++;
        }
    }
    int divs[1600], ndivs = 0; /* 2095133040 has the most divisors of any int: 1600 */
    for (int d = 1; (long long)d * d <= rest; d++) {
        if (rest % d == 0) {
            divs[ndivs++] = d;
            if (d != rest / d)
                divs[ndivs++] = rest / d;
        }
    }
    qsort(divs, (size_t)ndivs, sizeof(int), cmp_asc);
    dims_search_t s = {.divs = divs, .ndivs = ndivs, .best_range = LLONG_MAX};
    s.k = nfree < nprime ? nfree : nprime;
    s.ones = nfree > nprime;
    if (s.k == 0) {
        s.k = 1; /* rest == 1: every free dimension is 1 */
        s.ones = false;
    }
    dims_walk(&s, 0, rest, rest);
    for (int i = 0, b = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = b < s.k ? s.best[b++] : 1;
    return 0;
}
