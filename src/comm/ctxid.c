/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Context ids.
 *
 * Each process keeps a bitmap of the ids its live communicators use (bit i =
 * ids 2i and 2i+1), grown on demand. To create a communicator, the
 * participants OR their bitmaps together up a binomial tree rooted at
 * participant 0, which takes the lowest bit clear in the union and sends it
 * back down the tree. So:
 *  - the id is free at every participant, hence no two communicators sharing
 *    a process ever share an id (disjoint children of one split may share one,
 *    which is harmless: no process sees both);
 *  - one reduction and one broadcast over the parent's members, O(log n)
 *    steps; nothing global, nothing shared between unrelated creations;
 *  - the space is the whole uint32 range (2^31 communicators alive at once),
 *    the bitmap grows with the ids in use, so the count of communicators is
 *    bounded by memory; freed ids are reused lowest first, so the bitmap stays
 *    as small as the peak number of live communicators.
 * A reduction message carries only the words up to the last used bit; up to
 * INLINE_WORDS ride in the first message, the rest follow in a second one.
 */
#include "comm.h"
#include "../base/log.h"
#include "../p2p/p2p.h"
#include "mpi.h"

#include <stdlib.h>
#include <string.h>

#define INLINE_WORDS 32
#define MAX_BITS 0x7fffffffu

static uint64_t *used;
static size_t nwords;
static int nused;

static int grow(size_t words) {
    if (words <= nwords)
        return 0;
    size_t nw = nwords ? nwords : 4;
    while (nw < words)
        nw *= 2;
    uint64_t *u = realloc(used, nw * sizeof(uint64_t));
    if (!u) {
        tdm_error(COMM, "out of memory for the context id bitmap (%zu words)", nw);
        return -1;
    }
    memset(u + nwords, 0, (nw - nwords) * sizeof(uint64_t));
    used = u;
    nwords = nw;
    return 0;
}

static int mark(uint32_t bit) {
    if (grow(bit / 64 + 1))
        return -1;
    used[bit / 64] |= 1ull << (bit % 64);
    nused++;
    return 0;
}

int tdm_comm_ctxid_init(void) {
    /* MPI_COMM_WORLD (0, 1), MPI_COMM_SELF (2, 3) and the boot communicator (4, 5) */
    if (mark(0) || mark(1) || mark(2))
        return -1;
    return 0;
}

void tdm_comm_ctxid_release(uint32_t ctx) {
    uint32_t bit = ctx / 2;
    if (bit / 64 < nwords && (used[bit / 64] & (1ull << (bit % 64)))) {
        used[bit / 64] &= ~(1ull << (bit % 64));
        nused--;
    }
}

void tdm_comm_ctxid_fini(void) {
    free(used);
    used = NULL;
    nwords = 0;
    nused = 0;
}

int tdm_comm_ctxid_in_use(void) {
    return nused;
}

/* Words up to and including the last non-zero one. */
static size_t trimmed(const uint64_t *w, size_t n) {
    while (n > 0 && w[n - 1] == 0)
        n--;
    return n;
}

static uint32_t lowest_clear(const uint64_t *w, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (w[i] != ~0ull)
            return (uint32_t)(i * 64 + (size_t)__builtin_ctzll(~w[i]));
    }
    return (uint32_t)(n * 64);
}

static tdm_dtype_t *bytes_type(void) {
    return tdm_dtype_get(MPI_BYTE);
}

static int peer_rank(const tdm_comm_peers_t *p, int i) {
    return p->prank ? p->prank[i] : i;
}

static int send_to(const tdm_comm_peers_t *p, int i, const void *buf, size_t len, int tag) {
    tdm_comm_t *c = p->parent;
    tdm_req_t *r = NULL;
    tdm_rc_t rc =
        tdm_p2p_isend(buf, len, bytes_type(), tdm_comm_world_rank(c, peer_rank(p, i)), c->rank, tag,
                      c->ctx + 1, TDM_MODE_STD | TDM_MODE_BLOCKING, c, false, &r);
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

static int recv_from(const tdm_comm_peers_t *p, int i, void *buf, size_t len, int tag,
                     size_t *got_p) {
    tdm_comm_t *c = p->parent;
    tdm_status_t st;
    int src = peer_rank(p, i);
    tdm_rc_t rc = tdm_p2p_recv(buf, len, bytes_type(), src, tdm_comm_world_rank(c, src), tag,
                               c->ctx + 1, c, &st);
    if (rc != TDM_OK || st.error != TDM_OK) {
        tdm_error(COMM, "internal receive of up to %zu bytes from rank %d failed (%d/%d)", len,
                  peer_rank(p, i), (int)rc, st.error);
        return -1;
    }
    if (got_p)
        *got_p = st.bytes;
    return 0;
}

/* Exported for comm_coll.c. */
int tdm_comm_peer_send(const tdm_comm_peers_t *p, int i, const void *buf, size_t len, int tag) {
    return send_to(p, i, buf, len, tag);
}
int tdm_comm_peer_recv(const tdm_comm_peers_t *p, int i, void *buf, size_t len, int tag) {
    return recv_from(p, i, buf, len, tag, NULL);
}

/* Send a bitmap of n words: [n, first words...] then the rest if any. */
static int send_bitmap(const tdm_comm_peers_t *p, int i, const uint64_t *w, size_t n) {
    uint64_t msg[INLINE_WORDS];
    size_t first = n < INLINE_WORDS - 1 ? n : INLINE_WORDS - 1;
    msg[0] = n;
    memcpy(msg + 1, w, first * sizeof(uint64_t));
    if (send_to(p, i, msg, (first + 1) * sizeof(uint64_t), p->tag_up))
        return -1;
    if (n > first)
        return send_to(p, i, w + first, (n - first) * sizeof(uint64_t), p->tag_up);
    return 0;
}

/* Receive a bitmap and OR it into *acc (length *nacc, grown as needed). */
static int recv_bitmap_or(const tdm_comm_peers_t *p, int i, uint64_t **acc, size_t *nacc) {
    uint64_t msg[INLINE_WORDS];
    if (recv_from(p, i, msg, sizeof(msg), p->tag_up, NULL))
        return -1;
    size_t n = (size_t)msg[0];
    if (n > *nacc) {
        uint64_t *a = realloc(*acc, n * sizeof(uint64_t));
        if (!a) {
            tdm_error(COMM, "out of memory for a context id bitmap of %zu words", n);
            return -1;
        }
        memset(a + *nacc, 0, (n - *nacc) * sizeof(uint64_t));
        *acc = a;
        *nacc = n;
    }
    size_t first = n < INLINE_WORDS - 1 ? n : INLINE_WORDS - 1;
    for (size_t k = 0; k < first; k++)
        (*acc)[k] |= msg[1 + k];
    if (n > first) {
        uint64_t *rest = malloc((n - first) * sizeof(uint64_t));
        if (!rest) {
            tdm_error(COMM, "out of memory for a context id bitmap of %zu words", n);
            return -1;
        }
        if (recv_from(p, i, rest, (n - first) * sizeof(uint64_t), p->tag_up, NULL)) {
            free(rest);
            return -1;
        }
        for (size_t k = first; k < n; k++)
            (*acc)[k] |= rest[k - first];
        free(rest);
    }
    return 0;
}

/* Sent down the tree instead of an id when participant 0's merge failed. */
#define FAILED_BIT 0xffffffffu

int tdm_comm_ctxid_agree(const tdm_comm_peers_t *p, uint32_t *ctx_p) {
    return tdm_comm_ctxid_agree_with(p, NULL, NULL, ctx_p);
}

int tdm_comm_ctxid_agree_with(const tdm_comm_peers_t *p, tdm_comm_ctxid_merge_fn_t merge, void *arg,
                              uint32_t *ctx_p) {
    size_t nacc = trimmed(used, nwords);
    uint64_t *acc = malloc((nacc ? nacc : 1) * sizeof(uint64_t));
    if (!acc) {
        tdm_error(COMM, "out of memory for a context id bitmap of %zu words", nacc);
        return -1;
    }
    memcpy(acc, used, nacc * sizeof(uint64_t));
    int me = p->me, n = p->n;
    uint32_t bit = 0;
    int err = 0;

    /* reduce (OR) towards participant 0 */
    int mask;
    for (mask = 1; mask < n; mask <<= 1) {
        if (me & mask) {
            err = send_bitmap(p, me - mask, acc, trimmed(acc, nacc));
            break;
        }
        if (me + mask < n && (err = recv_bitmap_or(p, me + mask, &acc, &nacc)) != 0)
            break;
    }
    if (!err && me == 0)
        bit = merge && merge(arg, &acc, &nacc) ? FAILED_BIT : lowest_clear(acc, nacc);
    free(acc);

    /* broadcast the choice back down the same tree */
    if (!err && me != 0)
        err = recv_from(p, me & (me - 1), &bit, sizeof(bit), p->tag_down, NULL);
    if (!err) {
        int low = me ? (me & -me) : 1;
        if (me == 0)
            while (low < n)
                low <<= 1;
        for (int m = low >> 1; m >= 1 && !err; m >>= 1) {
            if (me + m < n)
                err = send_to(p, me + m, &bit, sizeof(bit), p->tag_down);
        }
    }
    if (err || bit == FAILED_BIT)
        return -1;
    if (bit >= MAX_BITS) {
        tdm_error(COMM, "context ids exhausted (%u communicators alive)", bit);
        return -1;
    }
    if (mark(bit))
        return -1;
    *ctx_p = bit * 2;
    return 0;
}
