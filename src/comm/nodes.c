/* SPDX-License-Identifier: BSD-3-Clause */
/* A communicator's ranks by node (comm.h, tdm_comm_nodes_t). */
#include "comm.h"

#include "../base/log.h"
#include "../net/net.h"

#include <stdlib.h>
#include <string.h>

void tdm_comm_nodes_free(tdm_comm_t *c) {
    free(c->nodes);
    c->nodes = NULL;
}

/* Built from the job's node map alone, the same at every member: nodes numbered by
 * their lowest rank here, so node order follows rank order wherever it can. */
static tdm_comm_nodes_t *nodes_build(const tdm_comm_t *c) {
    int p = c->size, jobnodes = tdm_net.nodes > 0 ? tdm_net.nodes : 1;
    /* one block: the struct, then node_of, order (p each), leaders, first (p + 1 each),
     * and the job node -> communicator node table */
    size_t ints = (size_t)p * 4 + 2 + (size_t)jobnodes;
    tdm_comm_nodes_t *m = malloc(sizeof(*m) + ints * sizeof(int));
    if (!m) {
        tdm_error(COMM, "out of memory for the node map of a communicator of %d ranks", p);
        return NULL;
    }
    memset(m, 0, sizeof(*m));
    int *ints_at = (int *)(m + 1);
    m->node_of = ints_at;
    m->order = m->node_of + p;
    m->leaders = m->order + p;
    m->first = m->leaders + p + 1;
    int *renum = m->first + p + 1;
    for (int k = 0; k < jobnodes; k++)
        renum[k] = -1;
    for (int r = 0; r < p; r++) {
        int w = tdm_comm_world_rank(c, r);
        int jn = tdm_net.peer ? tdm_net.peer[w].node : 0;
        if (jn < 0 || jn >= jobnodes)
            jn = 0;
        if (renum[jn] < 0) {
            renum[jn] = m->n;
            m->leaders[m->n++] = r;
        }
        m->node_of[r] = renum[jn];
    }
    /* counting sort by node: `first` holds each node's start in `order` */
    memset(m->first, 0, (size_t)(m->n + 1) * sizeof(int));
    for (int r = 0; r < p; r++)
        m->first[m->node_of[r] + 1]++;
    for (int k = 0; k < m->n; k++) {
        int cnt = m->first[k + 1];
        if (cnt > m->max_local)
            m->max_local = cnt;
        m->first[k + 1] += m->first[k];
    }
    int *fill = renum; /* no longer needed: reused as each node's fill position */
    for (int k = 0; k < m->n; k++)
        fill[k] = m->first[k];
    m->blocks = true;
    for (int r = 0; r < p; r++) {
        m->order[fill[m->node_of[r]]++] = r;
        /* nodes are numbered by first appearance: one run each iff never decreasing */
        if (r > 0 && m->node_of[r] < m->node_of[r - 1])
            m->blocks = false;
    }
    m->node = m->node_of[c->rank];
    m->nlocal = m->first[m->node + 1] - m->first[m->node];
    m->locals = m->order + m->first[m->node];
    m->local = 0;
    while (m->locals[m->local] != c->rank)
        m->local++;
    m->leader = m->leaders[m->node] == c->rank ? m->node : -1;
    return m;
}

const tdm_comm_nodes_t *tdm_comm_nodes(tdm_comm_t *c) {
    if (TDM_LIKELY(c->nodes))
        return c->nodes;
    if (c->inter)
        return NULL;
    c->nodes = nodes_build(c);
    return c->nodes;
}
