/* SPDX-License-Identifier: BSD-3-Clause */
/* The peer table and the transports' start-up (net.h). */
#include "net.h"
#include "../base/log.h"
#include "../base/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

tdm_net_t tdm_net;

#ifdef TDM_NET_HAVE_REMOTE
const tdm_net_ops_t *tdm_net_remote;
#define REMOTE_OPS tdm_net_remote
#else
#define REMOTE_OPS ((const tdm_net_ops_t *)NULL)
#endif

static size_t page_up(size_t n) {
    long page = sysconf(_SC_PAGESIZE);
    size_t p = page > 0 ? (size_t)page : 4096;
    return (n + p - 1) / p * p;
}

int tdm_net_init(const tdm_net_config_t *cfg, const char **what_p) {
    tdm_net_t *n = &tdm_net;
    memset(n, 0, sizeof(*n));
    n->rank = cfg->rank;
    n->size = cfg->size;
    n->nodes = cfg->nodes > 0 ? cfg->nodes : 1;
    n->node = cfg->node_of ? cfg->node_of[cfg->rank] : 0;
    n->peer = calloc((size_t)cfg->size, sizeof(tdm_net_peer_t));
    n->locals = calloc((size_t)cfg->size, sizeof(int));
    n->shm_peers = calloc((size_t)cfg->size, sizeof(int));
    int *per_node = calloc((size_t)n->nodes, sizeof(int));
    if (!n->peer || !n->locals || !n->shm_peers || !per_node) {
        free(per_node);
        tdm_error(NET, "out of memory for the transport table of %d ranks", cfg->size);
        *what_p = "out of memory for the transport table";
        return -1;
    }
    int me = 0, remote = -1;
    for (int r = 0; r < cfg->size; r++) {
        int node = cfg->node_of ? cfg->node_of[r] : 0;
        per_node[node]++;
        n->peer[r].node = node;
        if (node == n->node) {
            if (r == cfg->rank)
                me = n->nlocal;
            n->locals[n->nlocal++] = r;
            n->peer[r].tp = TDM_NET_SHM;
            n->peer[r].caps = TDM_NET_CAP_CELLS | TDM_NET_CAP_CMA;
        } else {
            n->peer[r].tp = TDM_NET_REMOTE;
            n->peer[r].caps = REMOTE_OPS ? (uint8_t)REMOTE_OPS->caps : 0;
            if (remote < 0)
                remote = r;
        }
    }
    /* the ranks the engine polls rings of, in world order */
    for (int l = 0, k = 0; l < n->nlocal; l++)
        if (n->locals[l] != cfg->rank)
            n->shm_peers[k++] = n->locals[l];
    if (remote >= 0 && !REMOTE_OPS) {
        /* without a transport built for other nodes src/boot refuses such a job first,
         * with the whole node map */
        tdm_error(NET,
                  "rank %d is on node %d, this rank on node %d: this build has no "
                  "inter-node transport",
                  remote, n->peer[remote].node, n->node);
        free(per_node);
        *what_p = "no transport reaches the ranks of other nodes";
        return -1;
    }
    /* one memfd for every node (TANDEM_NODE_SPLIT under mpirun): each node's segment
     * follows the ones of the nodes before it */
    size_t offset = cfg->shm_offset;
    for (int k = 0; cfg->shm_shared && k < n->node; k++)
        offset += page_up(tdm_shm_bytes(per_node[k]));
    free(per_node);
    if (tdm_shm_init(cfg->shm_fd, offset, n->locals, n->nlocal, me, cfg->size) != 0) {
        *what_p = "cannot set up the shared-memory segment";
        return -1;
    }
    if (tdm_cma_init(cfg->rank, cfg->size) != 0) {
        *what_p = !strcmp(TDM_PARAM_S(CMA), "on")
                      ? "TANDEM_CMA=on, but single-copy transfers (CMA) are not available"
                      : "out of memory for the CMA state";
        return -1;
    }
    return 0;
}

void tdm_net_fini(void) {
    tdm_cma_fini();
    tdm_shm_fini();
    free(tdm_net.peer);
    free(tdm_net.locals);
    free(tdm_net.shm_peers);
    memset(&tdm_net, 0, sizeof(tdm_net));
}
