/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Dist_graph_create's edge exchange. Each edge s -> d (weight w) named by
 * any process must reach s as an outgoing edge and d as an incoming one: the
 * namer sends every process the (kind, peer, weight) triples meant for it,
 * with one Alltoall of counts and one Alltoallv of triples over the old
 * communicator (the scalable form of MPI 3.1 §7.5.4: no process ever holds
 * the whole graph). Alltoallv delivers the blocks in rank order and each
 * block in the namer's order, which makes the neighbour order deterministic.
 */
#include "topo.h"

#include "../base/log.h"
#include "../coll/coll.h"
#include "../base/abi.h"

#include <stdlib.h>

enum { EDGE_OUT = 0, EDGE_IN = 1 };

int tdm_topo_dist_exchange(tdm_comm_t *c, int n, const int *sources, const int *degrees,
                           const int *dests, const int *weights, bool weighted,
                           tdm_topo_t **topo_p) {
    int p = c->size, rc = TDM_ERR_NOMEM;
    tdm_dtype_t *int_t = tdm_dtype_get(TDM_MPI_INT);
    long long nedges = 0;
    for (int i = 0; i < n; i++)
        nedges += degrees[i];
    /* per peer: counts and displacements (ints) going out and coming in */
    int *scnt = calloc(4 * (size_t)p, sizeof(int));
    int *sdsp = scnt + p, *rcnt = sdsp + p, *rdsp = rcnt + p;
    int *sbuf = malloc((size_t)(6 * nedges + 1) * sizeof(int)), *rbuf = NULL, *fill = NULL;
    int *lists = NULL;
    if (!scnt || !sbuf)
        goto free_bufs;
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            scnt[sources[i]] += 3;
            scnt[dests[k]] += 3;
        }
    for (int r = 0, off = 0; r < p; r++) {
        sdsp[r] = off;
        off += scnt[r];
    }
    fill = malloc((size_t)p * sizeof(int));
    if (!fill)
        goto free_bufs;
    for (int r = 0; r < p; r++)
        fill[r] = sdsp[r];
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            int s = sources[i], d = dests[k], w = weighted ? weights[k] : 0;
            int *o = &sbuf[fill[s]], *in = NULL;
            fill[s] += 3;
            o[0] = EDGE_OUT, o[1] = d, o[2] = w;
            in = &sbuf[fill[d]];
            fill[d] += 3;
            in[0] = EDGE_IN, in[1] = s, in[2] = w;
        }
    rc = tdm_coll_alltoallw(scnt, TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE, NULL, 1, int_t, rcnt,
                            TDM_COLL_ARR_NONE, TDM_COLL_ARR_NONE, NULL, 1, int_t, c, NULL);
    if (rc != TDM_OK)
        goto free_bufs;
    long long total = 0;
    for (int r = 0; r < p; r++) {
        rdsp[r] = (int)total;
        total += rcnt[r];
    }
    rbuf = malloc((size_t)(total + 1) * sizeof(int));
    if (!rbuf) {
        rc = TDM_ERR_NOMEM;
        goto free_bufs;
    }
    rc = tdm_coll_alltoallw(sbuf, TDM_COLL_INTS(scnt), TDM_COLL_INTS(sdsp), NULL, 0, int_t, rbuf,
                            TDM_COLL_INTS(rcnt), TDM_COLL_INTS(rdsp), NULL, 0, int_t, c, NULL);
    if (rc != TDM_OK)
        goto free_bufs;
    int indeg = 0, outdeg = 0;
    for (long long e = 0; e < total; e += 3)
        rbuf[e] == EDGE_IN ? indeg++ : outdeg++;
    lists = malloc((size_t)(2 * (indeg + outdeg) + 1) * sizeof(int));
    if (!lists) {
        rc = TDM_ERR_NOMEM;
        goto free_bufs;
    }
    int *in = lists, *inw = in + indeg, *out = inw + indeg, *outw = out + outdeg;
    for (long long e = 0, i = 0, o = 0; e < total; e += 3) {
        if (rbuf[e] == EDGE_IN) {
            in[i] = rbuf[e + 1];
            inw[i++] = rbuf[e + 2];
        } else {
            out[o] = rbuf[e + 1];
            outw[o++] = rbuf[e + 2];
        }
    }
    tdm_topo_t *t = tdm_topo_dist_new(indeg, in, inw, outdeg, out, outw, weighted);
    if (!t) {
        rc = TDM_ERR_NOMEM;
        goto free_bufs;
    }
    *topo_p = t;
    rc = TDM_OK;
free_bufs:
    if (rc == TDM_ERR_NOMEM)
        tdm_error(COMM, "out of memory for the edges of a distributed graph (%lld named here)",
                  nedges);
    free(lists);
    free(rbuf);
    free(fill);
    free(sbuf);
    free(scnt);
    return rc;
}
