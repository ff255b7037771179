/* SPDX-License-Identifier: BSD-3-Clause */
/* Buffered sends: the attached buffer's blocks (bsend.h). */
#include "bsend.h"

#include "../base/abi.h"
#include "../base/lock.h"

#include <stdlib.h>

typedef struct bblock {
    struct bblock *next;
    size_t off, len; /* region of the attached buffer, overhead included */
} bblock_t;

/* The attached buffer, its blocks and the count of sends in flight: under bsend_lock
 * (a leaf: held for the block bookkeeping only, never across a call into the engine). */
static tdm_lock_t bsend_lock = TDM_LOCK_INITIALIZER;
static char *battached;
static size_t bsize;
static bblock_t *blocks; /* in use, sorted by offset */
static int bpending;

static bblock_t *bblock_alloc(size_t need) {
    size_t pos = 0;
    bblock_t **link = &blocks;
    for (bblock_t *b = blocks;; b = b->next) {
        size_t end = b ? b->off : bsize;
        if (end >= pos && end - pos >= need) {
            bblock_t *nb = malloc(sizeof(*nb));
            if (!nb)
                return NULL;
            nb->off = pos;
            nb->len = need;
            nb->next = b;
            *link = nb;
            return nb;
        }
        if (!b)
            return NULL;
        pos = b->off + b->len;
        link = &b->next;
    }
}

static void bblock_free(bblock_t *blk) {
    for (bblock_t **link = &blocks; *link; link = &(*link)->next) {
        if (*link == blk) {
            *link = blk->next;
            free(blk);
            return;
        }
    }
}

static void bsend_done(tdm_req_t *s) {
    tdm_lock_acquire(&bsend_lock);
    bblock_free(s->bsend_block);
    s->bsend_block = NULL;
    TDM_STORE_RELAXED(&bpending, bpending - 1);
    tdm_lock_release(&bsend_lock);
}

tdm_rc_t tdm_p2p_bsend(const void *buf, size_t count, tdm_dtype_t *dt, int dst_world, int self_rank,
                       int tag, uint32_t ctx, bool blocking, void *comm) {
    size_t bytes = count * dt->size;
    /* exactly size + overhead: the standard promises the user that a buffer of
     * sum(size + MPI_BSEND_OVERHEAD) holds those messages, so no rounding (the data
     * is a packed byte stream and needs no alignment) */
    tdm_lock_acquire(&bsend_lock);
    bblock_t *blk = battached ? bblock_alloc(bytes + TDM_P2P_BSEND_OVERHEAD) : NULL;
    if (!blk) {
        tdm_lock_release(&bsend_lock);
        return TDM_ERR_BUFFER;
    }
    char *data = battached + blk->off + TDM_P2P_BSEND_OVERHEAD;
    TDM_STORE_RELAXED(
        &bpending, bpending + 1); /* before the lock goes: a detach meanwhile waits for this one */
    tdm_lock_release(&bsend_lock);
    tdm_dtype_pack(buf, count, dt, 0, data, bytes);
    tdm_req_t *s;
    tdm_rc_t rc =
        tdm_p2p_isend(data, bytes, tdm_dtype_get(TDM_MPI_BYTE), dst_world, self_rank, tag, ctx,
                      TDM_MODE_BUFFERED | (blocking ? TDM_MODE_BLOCKING : 0), comm, true, &s);
    if (rc != TDM_OK) {
        tdm_lock_acquire(&bsend_lock);
        bblock_free(blk);
        TDM_STORE_RELAXED(&bpending, bpending - 1);
        tdm_lock_release(&bsend_lock);
        return rc;
    }
    s->bsend_block = blk;
    /* nobody waits for it: released when it completes */
    if (!tdm_p2p_req_hook(s, bsend_done, NULL)) {
        bsend_done(s);
        tdm_p2p_release(s);
    }
    return TDM_OK;
}

bool tdm_p2p_bsend_attach(void *buf, size_t size) {
    tdm_lock_acquire(&bsend_lock);
    bool ok = !battached;
    if (ok) {
        battached = buf;
        bsize = size;
    }
    tdm_lock_release(&bsend_lock);
    return ok;
}

void *tdm_p2p_bsend_buffer(size_t *size_p) {
    tdm_lock_acquire(&bsend_lock);
    *size_p = bsize;
    void *b = battached;
    tdm_lock_release(&bsend_lock);
    return b;
}

static bool bsends_done(void *arg) {
    (void)arg;
    return TDM_LOAD_RELAXED(&bpending) == 0;
}

void tdm_p2p_bsend_detach(void) {
    /* the standard: detach waits until every buffered message has been sent */
    tdm_p2p_wait_until(bsends_done, NULL);
    tdm_lock_acquire(&bsend_lock);
    battached = NULL;
    bsize = 0;
    tdm_lock_release(&bsend_lock);
}
