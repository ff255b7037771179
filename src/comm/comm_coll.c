/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The collectives comm/ needs besides the context id agreement: an allgather
 * of fixed-size items (Comm_split's colors and keys), as a binomial gather to
 * participant 0 followed by a binomial broadcast, and that broadcast alone
 * (what an intercomm's leader learnt from the other group). In a binomial tree
 * rooted at 0, participant i's subtree is the contiguous range [i, i + lowbit(i)),
 * so every message is one contiguous block of `out`.
 */
#include "comm_impl.h"

#include "../base/util.h"

#include <string.h>

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
    if (me != 0 && tdm_comm_peer_recv(p, me & (me - 1), o, (size_t)n * len, p->tag_down))
        return -1;
    int low = 1;
    if (me)
        low = me & -me;
    else
        while (low < n)
            low <<= 1;
    for (int m = low >> 1; m >= 1; m >>= 1) {
        if (me + m < n && tdm_comm_peer_send(p, me + m, o, (size_t)n * len, p->tag_down))
            return -1;
    }
    return 0;
}

int tdm_comm_bcast(const tdm_comm_peers_t *p, void *buf, size_t len) {
    int me = p->me, n = p->n;
    if (me != 0 && tdm_comm_peer_recv(p, me & (me - 1), buf, len, p->tag_down))
        return -1;
    int low = 1;
    if (me)
        low = me & -me;
    else
        while (low < n)
            low <<= 1;
    for (int m = low >> 1; m >= 1; m >>= 1) {
        if (me + m < n && tdm_comm_peer_send(p, me + m, buf, len, p->tag_down))
            return -1;
    }
    return 0;
}
