/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The blocking collectives comm/ needs besides the context id agreement, and the
 * point-to-point they are made of: an allgather
 * of fixed-size items (Comm_split's colors and keys), as a binomial gather to
 * participant 0 followed by a binomial broadcast, and that broadcast alone
 * (what an intercomm's leader learnt from the other group). In a binomial tree
 * rooted at 0, participant i's subtree is the contiguous range [i, i + lowbit(i)),
 * so every message is one contiguous block of `out`.
 */
#include "comm_impl.h"

#include "../base/log.h"
#include "../base/util.h"
#include "../p2p/p2p.h"
#include "../base/abi.h"

#include <string.h>

static int peer_rank(const tdm_comm_peers_t *p, int i) {
    return p->prank ? p->prank[i] : i;
}

int tdm_comm_peer_send(const tdm_comm_peers_t *p, int i, const void *buf, size_t len, int tag) {
    tdm_comm_t *c = p->parent;
    tdm_req_t *r = NULL;
    tdm_rc_t rc = tdm_p2p_isend(buf, len, tdm_dtype_get(TDM_MPI_BYTE),
                                tdm_comm_world_rank(c, peer_rank(p, i)), c->rank, tag, c->ctx + 1,
                                TDM_MODE_STD | TDM_MODE_BLOCKING, c, false, &r);
    if (rc != TDM_OK) {
        tdm_error(COMM, "internal send of %zu bytes to rank %d failed (%d)", len, peer_rank(p, i),
                  (int)rc);
        return -1;
    }
    if (r) {
        tdm_p2p_wait(r);
        tdm_p2p_release(r);
    }
    return 0;
}

int tdm_comm_peer_recv(const tdm_comm_peers_t *p, int i, void *buf, size_t len, int tag) {
    tdm_comm_t *c = p->parent;
    tdm_status_t st;
    int src = peer_rank(p, i);
    tdm_rc_t rc = tdm_p2p_recv(buf, len, tdm_dtype_get(TDM_MPI_BYTE), src,
                               tdm_comm_world_rank(c, src), tag, c->ctx + 1, c, &st);
    if (rc != TDM_OK || st.error != TDM_OK) {
        tdm_error(COMM, "internal receive of up to %zu bytes from rank %d failed (%d/%d)", len, src,
                  (int)rc, st.error);
        return -1;
    }
    return 0;
}

int tdm_comm_allgather(const tdm_comm_peers_t *p, const void *in, size_t len, void *out) {
    int me = p->me, n = p->n;
    char *o = out;
    memcpy(o + (size_t)me * len, in, len);
    int mask;
    for (mask = 1; mask < n; mask <<= 1) {
        if (me & mask) {
            int have = TDM_MIN(mask, n - me);
            if (tdm_comm_peer_send(p, me - mask, o + (size_t)me * len, (size_t)have * len,
                                   p->tag_up))
                return -1;
            break;
        }
        if (me + mask < n) {
            int want = TDM_MIN(mask, n - me - mask);
            if (tdm_comm_peer_recv(p, me + mask, o + (size_t)(me + mask) * len, (size_t)want * len,
                                   p->tag_up))
                return -1;
        }
    }
    return tdm_comm_bcast(p, o, (size_t)n * len);
}

int tdm_comm_bcast(const tdm_comm_peers_t *p, void *buf, size_t len) {
    int me = p->me, n = p->n;
    if (me != 0 && tdm_comm_peer_recv(p, me & (me - 1), buf, len, p->tag_down))
        return -1;
    for (int m = tdm_comm_tree_bound(me, n) >> 1; m >= 1; m >>= 1) {
        if (me + m < n && tdm_comm_peer_send(p, me + m, buf, len, p->tag_down))
            return -1;
    }
    return 0;
}
