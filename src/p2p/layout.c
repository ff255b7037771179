/* SPDX-License-Identifier: BSD-3-Clause */
#include "layout.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../net/net.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define TDM_IOV_BATCH 1024 /* IOV_MAX on Linux */

bool tdm_layout_describable(const tdm_dtype_t *dt) {
    return dt->contig || (dt->segs != NULL && dt->nsegs > 0);
}

void tdm_layout_local(tdm_layout_t *l, void *buf, size_t count, const tdm_dtype_t *dt) {
    l->base = (uintptr_t)buf;
    l->count = count;
    l->extent = tdm_dtype_extent(dt);
    l->true_lb = dt->true_lb;
    l->item_size = dt->size;
    l->contig = dt->contig;
    l->segs = dt->segs;
    l->nsegs = dt->nsegs;
    l->owned = NULL;
}

void tdm_layout_to_wire(const tdm_layout_t *l, tdm_rlayout_t *w) {
    memset(w, 0, sizeof(*w));
    w->base = l->base;
    w->count = l->count;
    w->extent = l->extent;
    w->true_lb = l->true_lb;
    w->item_size = l->item_size;
    w->contig = l->contig;
    w->nsegs = l->contig ? 0 : (uint32_t)l->nsegs;
    w->segs_addr = l->contig ? 0 : (uint64_t)(uintptr_t)l->segs;
}

int tdm_layout_remote(tdm_layout_t *l, const tdm_rlayout_t *w, int peer, int pid) {
    l->base = (uintptr_t)w->base;
    l->count = w->count;
    l->extent = w->extent;
    l->true_lb = w->true_lb;
    l->item_size = w->item_size;
    l->contig = w->contig;
    l->nsegs = w->nsegs;
    l->segs = NULL;
    l->owned = NULL;
    if (l->contig)
        return 0;
    size_t bytes = (size_t)w->nsegs * sizeof(tdm_seg_t);
    tdm_seg_t *segs = malloc(bytes);
    if (!segs)
        return -ENOMEM;
    struct iovec li = {segs, bytes}, ri = {(void *)(uintptr_t)w->segs_addr, bytes};
    size_t got = 0;
    while (got < bytes) {
        ssize_t rc = tdm_cma_copy(peer, pid, false, &li, 1, &ri, 1);
        if (rc <= 0) {
            free(segs);
            return rc < 0 ? (int)rc : -EIO;
        }
        got += (size_t)rc;
        li.iov_base = (char *)segs + got;
        li.iov_len = bytes - got;
        ri.iov_base = (char *)(uintptr_t)w->segs_addr + got;
        ri.iov_len = bytes - got;
    }
    l->segs = l->owned = segs;
    return 0;
}

void tdm_layout_clear(tdm_layout_t *l) {
    free(l->owned);
    l->owned = NULL;
    l->segs = NULL;
}

/* iovecs for stream bytes [off, off+len), at most `max`; returns bytes covered. */
static size_t layout_iov(const tdm_layout_t *l, size_t off, size_t len, struct iovec *iov, int max,
                         int *n_p) {
    int n = 0;
    size_t done = 0;
    if (l->contig) {
        iov[0].iov_base = (char *)l->base + l->true_lb + off;
        iov[0].iov_len = len;
        *n_p = len ? 1 : 0;
        return len;
    }
    size_t item = off / l->item_size, in_item = off % l->item_size, seg = 0;
    while (in_item >= l->segs[seg].len) {
        in_item -= l->segs[seg].len;
        seg++;
    }
    while (done < len && n < max && item < l->count) {
        const tdm_seg_t *s = &l->segs[seg];
        size_t take = TDM_MIN(s->len - in_item, len - done);
        char *p = (char *)l->base + (ptrdiff_t)item * l->extent + s->off + (ptrdiff_t)in_item;
        if (n > 0 && (char *)iov[n - 1].iov_base + iov[n - 1].iov_len == p) {
            iov[n - 1].iov_len += take; /* adjacent across items: one iovec */
        } else {
            iov[n].iov_base = p;
            iov[n].iov_len = take;
            n++;
        }
        done += take;
        in_item = 0;
        if (++seg == l->nsegs) {
            seg = 0;
            item++;
        }
    }
    *n_p = n;
    return done;
}

/* Cut an iovec list down to `bytes`. */
static int iov_trim(struct iovec *iov, int n, size_t bytes) {
    size_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (sum + iov[i].iov_len >= bytes) {
            iov[i].iov_len = bytes - sum;
            return iov[i].iov_len ? i + 1 : i;
        }
        sum += iov[i].iov_len;
    }
    return n;
}

int tdm_layout_cma_copy(int peer, int pid, bool write, const tdm_layout_t *local,
                        const tdm_layout_t *remote, size_t off, size_t len) {
    /* per thread: two threads copying for different pairs at once each build their own
     * lists (shared ones sent one thread's data into another's buffer) */
    static _Thread_local struct iovec liov[TDM_IOV_BATCH], riov[TDM_IOV_BATCH];
    size_t done = 0;
    while (done < len) {
        int nl, nr;
        size_t a = layout_iov(local, off + done, len - done, liov, TDM_IOV_BATCH, &nl);
        size_t b = layout_iov(remote, off + done, len - done, riov, TDM_IOV_BATCH, &nr);
        size_t n = TDM_MIN(a, b);
        /* one call moves at most SSIZE_MAX bytes */
        n = TDM_MIN(n, (size_t)SSIZE_MAX & ~(size_t)4095);
        nl = iov_trim(liov, nl, n);
        nr = iov_trim(riov, nr, n);
        ssize_t rc = tdm_cma_copy(peer, pid, write, liov, nl, riov, nr);
        if (rc < 0)
            return (int)rc;
        if (rc == 0)
            return -EFAULT; /* no progress: the remote range is not mapped */
        done += (size_t)rc;
    }
    return 0;
}
