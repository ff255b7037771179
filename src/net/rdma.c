/* SPDX-License-Identifier: BSD-3-Clause */
/* Remote memory access over the bound remote transport (rdma.h). */
#include "rdma.h"
#include "net.h"
#include "ucx.h"

#include <string.h>

/* Written before the engine's first rendezvous toward another node and cleared after
 * its last (start-up and finalize, one thread): read unlocked. */
static tdm_ucx_t *rdma_ux;

void tdm_net_rdma_bind(struct tdm_ucx *ux) {
    rdma_ux = ux;
}

bool tdm_net_rdma_usable(int peer) {
    return rdma_ux && !tdm_net_local(peer) && (tdm_net_caps(peer) & TDM_NET_CAP_RDMA);
}

/* The transport's handles are the ones rdma.h names: only the type differs. */
int tdm_net_rdma_reg(void *base, size_t len, tdm_net_mem_t **mem_p) {
    if (!rdma_ux)
        return TDM_NET_RDMA_ERR_NONE;
    tdm_ucx_mem_t *m;
    int rc = tdm_ucx_mem_reg(rdma_ux, base, len, &m);
    if (rc == 0)
        *mem_p = (tdm_net_mem_t *)m;
    return rc;
}

void tdm_net_rdma_dereg(tdm_net_mem_t *mem) {
    if (rdma_ux && mem)
        tdm_ucx_mem_dereg(rdma_ux, (tdm_ucx_mem_t *)mem);
}

void tdm_net_rdma_key(const tdm_net_mem_t *mem, const void **key_p, size_t *len_p) {
    tdm_ucx_mem_rkey((const tdm_ucx_mem_t *)mem, key_p, len_p);
}

int tdm_net_rdma_unpack(int peer, const void *key, size_t len, tdm_net_rkey_t **rkey_p) {
    if (!rdma_ux)
        return TDM_NET_RDMA_ERR_NONE;
    tdm_ucx_rkey_t *k;
    int rc = tdm_ucx_rkey_unpack(rdma_ux, peer, key, len, &k);
    if (rc == 0)
        *rkey_p = (tdm_net_rkey_t *)k;
    return rc;
}

void tdm_net_rdma_release(tdm_net_rkey_t *rkey) {
    if (rdma_ux && rkey)
        tdm_ucx_rkey_release(rdma_ux, (tdm_ucx_rkey_t *)rkey);
}

int tdm_net_rdma_get(int peer, void *local, size_t len, uint64_t remote, tdm_net_rkey_t *rkey,
                     tdm_net_rdma_done_fn_t done, void *arg) {
    if (!rdma_ux)
        return TDM_NET_RDMA_ERR_NONE;
    return tdm_ucx_get(rdma_ux, peer, local, len, remote, (tdm_ucx_rkey_t *)rkey, done, arg);
}

int tdm_net_rdma_put(int peer, const void *local, size_t len, uint64_t remote, tdm_net_rkey_t *rkey,
                     tdm_net_rdma_done_fn_t done, void *arg) {
    if (!rdma_ux)
        return TDM_NET_RDMA_ERR_NONE;
    return tdm_ucx_put(rdma_ux, peer, local, len, remote, (tdm_ucx_rkey_t *)rkey, done, arg);
}

int tdm_net_rdma_flush(int peer, tdm_net_rdma_done_fn_t done, void *arg) {
    if (!rdma_ux)
        return TDM_NET_RDMA_ERR_NONE;
    return tdm_ucx_flush(rdma_ux, peer, done, arg);
}

/* The transport's payload handle is the one rdma.h names: only the type differs. */
int tdm_net_rdma_fetch(tdm_net_data_t *d, void *buf, tdm_net_rdma_done_fn_t done, void *arg) {
    if (!rdma_ux)
        return TDM_NET_RDMA_ERR_NONE;
    return tdm_ucx_fetch(rdma_ux, (tdm_ucx_data_t *)d, buf, done, arg);
}

void tdm_net_rdma_drop(tdm_net_data_t *d) {
    if (rdma_ux && d)
        tdm_ucx_data_drop(rdma_ux, (tdm_ucx_data_t *)d);
}

const char *tdm_net_rdma_errmsg(void) {
    return rdma_ux ? tdm_ucx_errmsg(rdma_ux) : "no transport between nodes";
}

void tdm_net_rdma_stats(tdm_net_rdma_stats_t *st_p) {
    memset(st_p, 0, sizeof(*st_p));
    if (!rdma_ux)
        return;
    tdm_ucx_stats_t u;
    tdm_ucx_stats(rdma_ux, &u);
    st_p->reads = u.reads;
    st_p->reads_queued = u.reads_queued;
    st_p->writes = u.writes;
    st_p->data_sent = u.rndv_sent;
    st_p->fetches = u.fetches;
    st_p->streams = u.streams;
    st_p->streams_fetched = u.streams_fetched;
    st_p->reg_hits = u.reg_hits;
    st_p->reg_misses = u.reg_misses;
}
