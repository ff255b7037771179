/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicators made from a group alone (MPI_Comm_create_from_group; the
 * intercommunicator form is in intercomm.c). There is no parent communicator,
 * so the members talk over the boot communicator (comm.h), which spans the job:
 * participant i is group rank i, reached at its world rank.
 *
 * Tags. Creations on overlapping groups can be under way at the same time (a
 * process in two groups does one after the other while the other members of
 * the second group have already started it), so each creation's messages carry
 * a tag hashed from its string tag, and a message of one creation cannot
 * complete a receive of another unless the hashes collide. In a correct program
 * a collision does no harm either: a receive names its source, and two
 * creations meeting at two processes come in the same order at both. A program
 * that passes different string tags (or groups) for one creation, or orders two
 * creations differently, must not get a communicator built from another
 * creation's messages, so the members first compare the full string tag and the
 * group (tdm_comm_verify, the text, not the hash) and fail with an error naming
 * the difference.
 */
#include "comm.h"
#include "../base/log.h"
#include "comm_impl.h"
#include "../base/abi.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(uint64_t h, const void *data, size_t len) {
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

int tdm_comm_from_group_tag(const char *stringtag) {
    uint64_t h = fnv1a(0xcbf29ce484222325ull, stringtag, strlen(stringtag));
    return TDM_COMM_TAG_FROM_GROUP_BASE + (int)((h ^ (h >> 32)) & TDM_COMM_TAG_FROM_GROUP_MASK);
}

uint64_t tdm_comm_rankmap_digest(const tdm_rankmap_t *m) {
    uint64_t h = fnv1a(0xcbf29ce484222325ull, &m->n, sizeof(m->n));
    for (int i = 0; i < m->n; i++) {
        int w = tdm_rankmap_world(m, i);
        h = fnv1a(h, &w, sizeof(w));
    }
    return h;
}

int *tdm_comm_group_boot_ranks(const tdm_group_t *g, int first) {
    int n = g->map.n;
    int *prank = malloc((size_t)n * sizeof(int));
    if (!prank) {
        tdm_error(COMM, "out of memory for a group of %d ranks", n);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        prank[i] = tdm_rankmap_world(&g->map, (first + i) % n);
    return prank;
}

void tdm_comm_stringtag_copy(char dst[TDM_COMM_STRINGTAG_BYTES], const char *stringtag) {
    /* zero-filled, so that two keys holding the same text compare equal byte for byte */
    memset(dst, 0, TDM_COMM_STRINGTAG_BYTES);
    strncpy(dst, stringtag, TDM_COMM_STRINGTAG_BYTES - 1);
}

int tdm_comm_verify(const tdm_comm_peers_t *p, const void *key, size_t len,
                    tdm_comm_verify_fn_t cmp) {
    int me = p->me, n = p->n;
    int32_t verdict = 0;
    /* [verdict of the sender's subtree, padded to 8 bytes][its key]: the key stays
     * aligned for cmp */
    const size_t hdr = 8;
    char *msg = malloc(hdr + len);
    if (!msg) {
        tdm_error(COMM, "out of memory for a %zu-byte creation check", len);
        return -1;
    }
    int err = 0;
    /* up: each participant compares its children's keys with its own, so all
     * equal participant 0's when every comparison holds */
    for (int mask = 1; mask < n; mask <<= 1) {
        if (me & mask) {
            memset(msg, 0, hdr);
            memcpy(msg, &verdict, sizeof(verdict));
            memcpy(msg + hdr, key, len);
            err = tdm_comm_peer_send(p, me - mask, msg, hdr + len, p->tag_up);
            break;
        }
        if (me + mask >= n)
            continue;
        if ((err = tdm_comm_peer_recv(p, me + mask, msg, hdr + len, p->tag_up)) != 0)
            break;
        int32_t theirs;
        memcpy(&theirs, msg, sizeof(theirs));
        int c = theirs ? theirs : cmp(key, msg + hdr);
        if (c > verdict)
            verdict = c;
    }
    free(msg);
    if (err)
        return -1;
    if (tdm_comm_bcast(p, &verdict, sizeof(verdict)))
        return -1;
    return verdict;
}

/* What the members of one MPI_Comm_create_from_group must agree on. */
typedef struct key {
    uint64_t group; /* digest of the members, in order */
    char tag[TDM_COMM_STRINGTAG_BYTES];
} create_key_t;

static int key_cmp(const void *mine, const void *theirs) {
    const create_key_t *a = mine, *b = theirs;
    if (memcmp(a->tag, b->tag, sizeof(a->tag)) != 0)
        return TDM_VERIFY_TAG;
    return a->group != b->group ? TDM_VERIFY_GROUP : 0;
}

tdm_comm_bad_t tdm_comm_verify_class(int verdict, const char **why_p) {
    switch (verdict) {
    case TDM_VERIFY_TAG:
        *why_p = "the members passed different string tags";
        return TDM_COMM_BAD_ARG;
    case TDM_VERIFY_LEADER:
        *why_p = "the members passed different leaders";
        return TDM_COMM_BAD_RANK;
    default:
        *why_p = "the members passed different groups";
        return TDM_COMM_BAD_GROUP;
    }
}

int tdm_comm_from_group(const tdm_group_t *g, const char *stringtag, const char **why_p,
                        tdm_comm_t **new_p) {
    int n = g->map.n;
    int *prank = tdm_comm_group_boot_ranks(g, 0);
    if (!prank)
        return -1;
    int tag = tdm_comm_from_group_tag(stringtag);
    tdm_comm_peers_t p = tdm_comm_peers(tdm_comm_boot, prank, n, g->rank, tag, tag);
    create_key_t key;
    key.group = tdm_comm_rankmap_digest(&g->map);
    tdm_comm_stringtag_copy(key.tag, stringtag);
    int verdict = tdm_comm_verify(&p, &key, sizeof(key), key_cmp);
    uint32_t ctx;
    int err = verdict != 0 ? verdict : tdm_comm_ctxid_agree(&p, &ctx);
    free(prank);
    if (err > 0)
        return tdm_comm_verify_class(err, why_p);
    if (err)
        return -1;
    tdm_comm_t *c = tdm_comm_new(tdm_comm_boot, tdm_rankmap_share(&g->map), g->rank, ctx);
    if (!c)
        return -1;
    c->session = g->session;
    tdm_trace(COMM, "communicator %#x from a group of %d under tag '%s': ctx %u",
              (unsigned)c->handle, n, stringtag, ctx);
    *new_p = c;
    return 0;
}
