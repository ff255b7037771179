/* SPDX-License-Identifier: BSD-3-Clause */
/* Topology objects: construction, copy, Cartesian arithmetic, Dims_create. */
#include "topo.h"

#include "../base/log.h"

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
    tdm_comm_topo_ops = &topo_ops;
    c->topo = t;
}

/* ---- Dims_create ---- */

static int cmp_desc(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
}

int tdm_topo_dims_create(int nnodes, int ndims, int *dims) {
    int preset = 1, nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] > 0)
            preset *= dims[i];
        else
            nfree++;
    }
    if (preset <= 0 || nnodes % preset != 0)
        return -1;
    int rest = nnodes / preset;
    if (nfree == 0)
        return rest == 1 ? 0 : -1;
    /* Prime factors of what the free dimensions must hold, largest first, each
     * given to the dimension with the smallest product so far: balanced for
     * the sizes MPI programs use (12 -> 4x3, 36 -> 6x6, 64 in 4 -> 4x4x2x2). */
    int f[32], nf = 0;
    for (int p = 2; (long long)p * p <= rest; p++)
        while (rest % p == 0) {
            f[nf++] = p;
            rest /= p;
        }
    if (rest > 1)
        f[nf++] = rest;
    int bins[64]; /* more free dimensions than factors: the extra ones stay 1 */
    int nb = nfree < 64 ? nfree : 64;
    for (int i = 0; i < nb; i++)
        bins[i] = 1;
    for (int k = nf - 1; k >= 0; k--) {
        int small = 0;
        for (int i = 1; i < nb; i++)
            if (bins[i] < bins[small])
                small = i;
        bins[small] *= f[k];
    }
    qsort(bins, (size_t)nb, sizeof(int), cmp_desc);
    for (int i = 0, b = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = b < nb ? bins[b++] : 1;
    return 0;
}
