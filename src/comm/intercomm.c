/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Intercommunicators (MPI-3.1 §6.6): creation from two intracommunicators,
 * merge, split, and the context agreement of dup.
 *
 * Every creation runs the same way. Within each group the processes talk over
 * an intracommunicator (the user's local_comm for Intercomm_create, the
 * intercomm's hidden `local` otherwise) with the group's leader as participant
 * 0; only the two leaders talk across, over a "bridge": the peer communicator
 * with the user's tag for Intercomm_create (that is what the tag is for), the
 * intercomm itself otherwise (local rank 0 with remote rank 0 on its collective
 * context, tag TDM_COMM_TAG_INTER, which no collective uses; a context id
 * agreement's leaders use the intercomm's next TDM_COMM_TAG_AGREE tag, so that
 * several MPI_Comm_idup can run at once). A context id both groups can use is
 * agreed as for an intracomm, with the two leaders joining their groups' rounds
 * (tdm_comm_ctxid_agree_bridged, ctxid.c): the id is free at every process of
 * both groups.
 *
 * The hidden local intracommunicator has a context of its own (agreed in the
 * local group only) so that its messages never meet the intercomm's, where
 * local and remote rank numbers overlap. It has no user handle.
 */
#include "comm.h"
#include "../base/log.h"
#include "../p2p/p2p.h"
#include "comm_impl.h"
#include "../base/abi.h"

#include <stdlib.h>
#include <string.h>

typedef tdm_comm_bridge_t bridge_t;

/* Leaders only: send olen bytes to the other leader and receive exactly ilen. */
static int bridge_xchg(const bridge_t *b, const void *out, size_t olen, void *in, size_t ilen) {
    tdm_comm_t *c = b->via;
    tdm_dtype_t *byte = tdm_dtype_get(TDM_MPI_BYTE);
    int world = tdm_comm_peer_world(c, b->peer);
    tdm_req_t *r = NULL;
    tdm_rc_t rc =
        tdm_p2p_isend(out, olen, byte, world, c->rank, b->tag, b->ctx, TDM_MODE_STD, c, true, &r);
    if (rc != TDM_OK) {
        tdm_error(COMM, "intercomm leader: send of %zu bytes to rank %d (world %d) failed (%d)",
                  olen, b->peer, world, (int)rc);
        return -1;
    }
    tdm_status_t st;
    rc = tdm_p2p_recv(in, ilen, byte, b->peer, world, b->tag, b->ctx, c, &st);
    tdm_p2p_wait(r);
    tdm_p2p_release(r);
    if (rc != TDM_OK || st.error != TDM_OK || st.bytes != ilen) {
        tdm_error(COMM,
                  "intercomm leader: receive of %zu bytes from rank %d (world %d, tag %d) failed "
                  "(%d/%d, got %zu bytes)",
                  ilen, b->peer, world, b->tag, (int)rc, st.error, (size_t)st.bytes);
        return -1;
    }
    return 0;
}

/* The two context ids of a new intercomm: ctx agreed by both groups (the
 * leaders talk over b), lctx by the local group alone for its hidden local
 * comm. Nonzero if either fails; then neither is held. */
static int ctx_pair_agree(const tdm_comm_peers_t *p, bridge_t *b, uint32_t *ctx_p,
                          uint32_t *lctx_p) {
    uint32_t ctx, lctx;
    if (tdm_comm_ctxid_agree_bridged(p, b, &ctx))
        return -1;
    if (tdm_comm_ctxid_agree(p, &lctx)) {
        tdm_comm_ctxid_release(ctx);
        return -1;
    }
    *ctx_p = ctx;
    *lctx_p = lctx;
    return 0;
}

/* The local group of an existing intercomm, leader = local rank 0, exchanging
 * with tags tag_up and tag_down. */
static tdm_comm_peers_t local_peers(tdm_comm_t *c, int tag_up, int tag_down) {
    return tdm_comm_peers(c->local, NULL, c->size, c->rank, tag_up, tag_down);
}

/* The local group as the participants of its next context id agreement. */
static tdm_comm_peers_t local_agree_peers(tdm_comm_t *c) {
    int tag = TDM_COMM_TAG_AGREE(c->local->agree_seq++);
    return local_peers(c, tag, tag);
}

/* The leaders' link over the intercomm itself, for its next agreement. */
static bridge_t inter_bridge(tdm_comm_t *c) {
    return (bridge_t){
        .via = c, .peer = 0, .tag = TDM_COMM_TAG_AGREE(c->agree_seq++), .ctx = c->ctx + 1};
}

/* A communicator over `map` (shared) without a user handle. */
static tdm_comm_t *hidden_new(const tdm_rankmap_t *map, int rank, uint32_t ctx) {
    tdm_comm_t *c = calloc(1, sizeof(*c));
    if (!c) {
        tdm_error(COMM, "out of memory for the local communicator of an intercomm");
        tdm_comm_ctxid_release(ctx);
        return NULL;
    }
    c->handle = TDM_MPI_COMM_NULL; /* destroy() knows it is in no handle table */
    c->refs = 1;
    c->ctx = ctx;
    c->rank = rank;
    c->map = tdm_rankmap_share(map);
    c->size = c->map.n;
    c->world = c->map.arr ? c->map.arr->r : NULL;
    c->errhandler = TDM_MPI_ERRORS_RETURN;
    strcpy(c->name, "(local group of an intercommunicator)");
    return c;
}

/* The intercomm (local group `map` with the caller at `rank`, remote group
 * `rmap`, both taken over) on ctx, with a hidden local comm on lctx. */
static int inter_new(tdm_comm_t *parent, tdm_rankmap_t map, int rank, tdm_rankmap_t rmap,
                     uint32_t ctx, uint32_t lctx, tdm_comm_t **new_p) {
    tdm_comm_t *local = hidden_new(&map, rank, lctx);
    if (!local) {
        tdm_rankmap_release(&map);
        tdm_rankmap_release(&rmap);
        tdm_comm_ctxid_release(ctx);
        return -1;
    }
    tdm_comm_t *c = tdm_comm_new(parent, map, rank, ctx);
    if (!c) {
        tdm_rankmap_release(&rmap);
        tdm_comm_release(local);
        return -1;
    }
    c->inter = 1;
    c->remote = rmap;
    c->local = local;
    tdm_trace(COMM, "intercomm %#x: ctx %u (local ctx %u), local %d of %d, remote size %d",
              (unsigned)c->handle, ctx, lctx, rank, c->size, rmap.n);
    *new_p = c;
    return 0;
}

int tdm_comm_intercomm_create(tdm_comm_t *local, int leader, tdm_comm_t *peer, int remote_leader,
                              int tag, tdm_comm_bad_t leader_err, const char **why_p,
                              tdm_comm_t **new_p) {
    int n = local->size;
    int *prank = malloc((size_t)n * sizeof(int));
    if (!prank) {
        tdm_error(COMM, "out of memory for a group of %d ranks", n);
        return -1;
    }
    for (int i = 0; i < n; i++)
        prank[i] = (leader + i) % n;
    tdm_comm_peers_t p = tdm_comm_peers(local, prank, n, (local->rank - leader + n) % n,
                                        TDM_COMM_TAG_BCAST, TDM_COMM_TAG_BCAST);
    bridge_t b = {.via = peer, .peer = remote_leader, .tag = tag, .ctx = peer ? peer->ctx : 0};
    int *lworld = NULL, *rworld = NULL;
    int rc = -1;
    /* the leader learns the remote group and tells its own: hdr = {status, remote size} */
    int hdr[2] = {leader_err, 0};
    if (p.me == 0 && !leader_err) {
        int mine = n, theirs = 0;
        hdr[0] = -1;
        lworld = malloc((size_t)n * sizeof(int));
        if (lworld && !bridge_xchg(&b, &mine, sizeof(mine), &theirs, sizeof(theirs)) &&
            theirs > 0 && (rworld = malloc((size_t)theirs * sizeof(int)))) {
            for (int i = 0; i < n; i++)
                lworld[i] = tdm_comm_world_rank(local, i);
            if (!bridge_xchg(&b, lworld, (size_t)n * sizeof(int), rworld,
                             (size_t)theirs * sizeof(int))) {
                hdr[0] = 0;
                hdr[1] = theirs;
            }
        }
    }
    if (tdm_comm_bcast(&p, hdr, sizeof(hdr)))
        goto out;
    if (hdr[0] != 0) {
        rc = hdr[0]; /* the leader's error class, or -1 */
        *why_p = "the local leader found an error in its arguments";
        goto out;
    }
    int m = hdr[1];
    if (p.me != 0 && !(rworld = malloc((size_t)m * sizeof(int)))) {
        tdm_error(COMM, "out of memory for a remote group of %d ranks", m);
        goto out; /* the others wait forever; out of memory is fatal in practice */
    }
    if (tdm_comm_bcast(&p, rworld, (size_t)m * sizeof(int)))
        goto out;
    /* the groups must be disjoint (§6.6.2); both sides see the same lists */
    for (int i = 0; i < m; i++) {
        if (tdm_rankmap_find(&local->map, rworld[i]) >= 0) {
            tdm_warn(COMM, "intercomm create: world rank %d is in both groups", rworld[i]);
            rc = TDM_COMM_BAD_COMM;
            *why_p = "the local and remote groups overlap";
            goto out;
        }
    }
    uint32_t ctx, lctx;
    p.tag_up = p.tag_down = TDM_COMM_TAG_AGREE(local->agree_seq++);
    if (ctx_pair_agree(&p, &b, &ctx, &lctx))
        goto out;
    tdm_rankmap_t rmap;
    if (tdm_rankmap_from_list(rworld, m, &rmap)) {
        tdm_error(COMM, "out of memory for the rank map of a %d-rank group", m);
        tdm_comm_ctxid_release(ctx);
        tdm_comm_ctxid_release(lctx);
        goto out;
    }
    rc = inter_new(local, tdm_rankmap_share(&local->map), local->rank, rmap, ctx, lctx, new_p);
out:
    free(prank);
    free(lworld);
    free(rworld);
    return rc;
}

int tdm_comm_inter_dup(tdm_comm_t *parent, uint32_t *ctx_p, tdm_comm_t **local_p) {
    tdm_comm_peers_t p = local_agree_peers(parent);
    bridge_t b = inter_bridge(parent);
    uint32_t ctx, lctx;
    if (ctx_pair_agree(&p, &b, &ctx, &lctx))
        return -1;
    tdm_comm_t *local = hidden_new(&parent->map, parent->rank, lctx);
    if (!local) {
        tdm_comm_ctxid_release(ctx);
        return -1;
    }
    *ctx_p = ctx;
    *local_p = local;
    return 0;
}

/* ---- the non-blocking dup: the bridged agreement, then the local one ---- */

typedef struct inter_idup {
    tdm_comm_t *parent;
    tdm_comm_peers_t p; /* the local group's participants, for both agreements */
    uint32_t ctx;
    tdm_comm_inter_dup_done_fn_t done;
    void *arg;
} inter_idup_t;

static void inter_idup_end(inter_idup_t *op, int rc, uint32_t ctx, tdm_comm_t *local) {
    tdm_comm_inter_dup_done_fn_t done = op->done;
    void *arg = op->arg;
    tdm_comm_release(op->parent);
    free(op);
    done(arg, rc, ctx, local);
}

static void inter_idup_local_done(void *arg, int rc, uint32_t lctx) {
    inter_idup_t *op = arg;
    if (rc) {
        tdm_comm_ctxid_release(op->ctx);
        inter_idup_end(op, -1, TDM_COMM_CTX_NONE, NULL);
        return;
    }
    tdm_comm_t *local = hidden_new(&op->parent->map, op->parent->rank, lctx);
    if (!local) {
        tdm_comm_ctxid_release(op->ctx);
        inter_idup_end(op, -1, TDM_COMM_CTX_NONE, NULL);
        return;
    }
    inter_idup_end(op, 0, op->ctx, local);
}

static void inter_idup_ctx_done(void *arg, int rc, uint32_t ctx) {
    inter_idup_t *op = arg;
    if (rc) {
        inter_idup_end(op, -1, TDM_COMM_CTX_NONE, NULL);
        return;
    }
    /* the same participants and tags: this agreement starts after the last one
     * ended here, and it ended at a participant's parent before it did here */
    op->ctx = ctx;
    if (tdm_comm_ctxid_start(&op->p, NULL, inter_idup_local_done, op)) {
        tdm_comm_ctxid_release(ctx);
        inter_idup_end(op, -1, TDM_COMM_CTX_NONE, NULL);
    }
}

int tdm_comm_inter_idup(tdm_comm_t *parent, tdm_comm_inter_dup_done_fn_t done, void *arg) {
    inter_idup_t *op = malloc(sizeof(*op));
    if (!op) {
        tdm_error(COMM, "out of memory for MPI_Comm_idup");
        return -1;
    }
    *op =
        (inter_idup_t){.parent = parent, .p = local_agree_peers(parent), .done = done, .arg = arg};
    tdm_comm_retain(parent);
    bridge_t b = inter_bridge(parent);
    if (tdm_comm_ctxid_start(&op->p, &b, inter_idup_ctx_done, op)) {
        tdm_comm_release(parent);
        free(op);
        return -1;
    }
    return 0;
}

int tdm_comm_intercomm_merge(tdm_comm_t *c, bool high, tdm_comm_t **new_p) {
    tdm_comm_peers_t p = local_peers(c, TDM_COMM_TAG_BCAST, TDM_COMM_TAG_BCAST);
    bridge_t b = {.via = c, .peer = 0, .tag = TDM_COMM_TAG_INTER, .ctx = c->ctx + 1};
    /* the leaders' high flags: {ours, theirs}, theirs = -1 if the exchange failed */
    int hi[2] = {high, -1};
    if (p.me == 0 && bridge_xchg(&b, &hi[0], sizeof(int), &hi[1], sizeof(int)))
        hi[1] = -1;
    if (tdm_comm_bcast(&p, hi, sizeof(hi)) || hi[1] < 0)
        return -1;
    bool local_first =
        hi[0] != hi[1] ? !hi[0] : tdm_rankmap_world(&c->map, 0) < tdm_rankmap_world(&c->remote, 0);
    uint32_t ctx;
    p = local_agree_peers(c);
    b = inter_bridge(c);
    if (tdm_comm_ctxid_agree_bridged(&p, &b, &ctx))
        return -1;
    int n = c->size, m = c->remote.n;
    int *w = malloc((size_t)(n + m) * sizeof(int));
    if (!w) {
        tdm_error(COMM, "out of memory for a merged group of %d ranks", n + m);
        tdm_comm_ctxid_release(ctx);
        return -1;
    }
    int loff = local_first ? 0 : m, roff = local_first ? n : 0;
    for (int i = 0; i < n; i++)
        w[loff + i] = tdm_rankmap_world(&c->map, i);
    for (int i = 0; i < m; i++)
        w[roff + i] = tdm_rankmap_world(&c->remote, i);
    tdm_rankmap_t map;
    int err = tdm_rankmap_from_list(w, n + m, &map);
    free(w);
    if (err) {
        tdm_error(COMM, "out of memory for the rank map of a %d-rank communicator", n + m);
        tdm_comm_ctxid_release(ctx);
        return -1;
    }
    tdm_comm_t *nc = tdm_comm_new(c, map, loff + c->rank, ctx);
    if (!nc)
        return -1;
    *new_p = nc;
    return 0;
}

/* The members of `color` among n split items, ordered by key then index, as
 * world ranks of `map` into w (n entries); their count. *pos_p: the position of
 * index `me` (-1 if absent or me < 0). */
static int members(const tdm_comm_split_item_t *it, int n, uint64_t color, const tdm_rankmap_t *map,
                   int me, int *w, int *pos_p) {
    int *idx = w, k = 0; /* indices first, sorted by insertion (stable), then mapped */
    for (int i = 0; i < n; i++) {
        if (!it[i].defined || it[i].color != color)
            continue;
        int j = k++;
        while (j > 0 && it[idx[j - 1]].key > it[i].key) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    *pos_p = -1;
    for (int j = 0; j < k; j++) {
        if (idx[j] == me)
            *pos_p = j;
        w[j] = tdm_rankmap_world(map, idx[j]);
    }
    return k;
}

int tdm_comm_inter_allgather(tdm_comm_t *c, const void *in, size_t len, void *lout, void *rout) {
    int n = c->size, m = c->remote.n;
    tdm_comm_peers_t p = local_peers(c, TDM_COMM_TAG_GATHER, TDM_COMM_TAG_BCAST);
    if (tdm_comm_allgather(&p, in, len, lout))
        return -1;
    /* the leader learns the remote group's items and tells its own: [status, items] */
    char *rall = malloc(sizeof(int) + (size_t)m * len);
    if (!rall) {
        tdm_error(COMM, "out of memory for the items of a %d-rank group", m);
        return -1;
    }
    int status = 0;
    if (p.me == 0) {
        bridge_t b = {.via = c, .peer = 0, .tag = TDM_COMM_TAG_INTER, .ctx = c->ctx + 1};
        if (bridge_xchg(&b, lout, (size_t)n * len, rall + sizeof(int), (size_t)m * len))
            status = -1;
        memcpy(rall, &status, sizeof(int));
    }
    int rc = tdm_comm_bcast(&p, rall, sizeof(int) + (size_t)m * len);
    memcpy(&status, rall, sizeof(int));
    if (rc == 0 && status == 0)
        memcpy(rout, rall + sizeof(int), (size_t)m * len);
    free(rall);
    return rc || status ? -1 : 0;
}

int tdm_comm_inter_split_items(tdm_comm_t *c, const tdm_comm_split_item_t *local,
                               const tdm_comm_split_item_t *remote, tdm_comm_t **new_p) {
    int n = c->size, m = c->remote.n;
    const tdm_comm_split_item_t *mine = &local[c->rank];
    tdm_comm_peers_t p = local_agree_peers(c);
    bridge_t b = inter_bridge(c);
    uint32_t ctx, lctx;
    if (ctx_pair_agree(&p, &b, &ctx, &lctx))
        return -1;
    int *lw = malloc((size_t)(n + m) * sizeof(int)), *rw = lw + n;
    if (!lw) {
        tdm_error(COMM, "out of memory for a split of %d + %d ranks", n, m);
        tdm_comm_ctxid_release(ctx);
        tdm_comm_ctxid_release(lctx);
        return -1;
    }
    int rank, unused, rc = -1;
    int ln = members(local, n, mine->color, &c->map, c->rank, lw, &rank);
    int rn = members(remote, m, mine->color, &c->remote, -1, rw, &unused);
    if (!mine->defined || rn == 0) {
        tdm_comm_ctxid_release(ctx);
        tdm_comm_ctxid_release(lctx);
        *new_p = NULL;
        rc = 0;
        goto out;
    }
    tdm_rankmap_t map, rmap;
    if (tdm_rankmap_from_list(lw, ln, &map)) {
        tdm_comm_ctxid_release(ctx);
        tdm_comm_ctxid_release(lctx);
        goto out;
    }
    if (tdm_rankmap_from_list(rw, rn, &rmap)) {
        tdm_rankmap_release(&map);
        tdm_comm_ctxid_release(ctx);
        tdm_comm_ctxid_release(lctx);
        goto out;
    }
    rc = inter_new(c, map, rank, rmap, ctx, lctx, new_p);
out:
    free(lw);
    return rc;
}

int tdm_comm_inter_split_color(tdm_comm_t *c, uint64_t color, bool defined, int key,
                               tdm_comm_t **new_p) {
    int n = c->size, m = c->remote.n;
    tdm_comm_split_item_t mine = {.color = color, .key = key, .defined = defined};
    tdm_comm_split_item_t *all = malloc((size_t)(n + m) * sizeof(*all));
    if (!all) {
        tdm_error(COMM, "out of memory for a split of %d + %d ranks", n, m);
        return -1;
    }
    int rc = tdm_comm_inter_allgather(c, &mine, sizeof(mine), all, all + n);
    if (rc == 0)
        rc = tdm_comm_inter_split_items(c, all, all + n, new_p);
    free(all);
    return rc;
}

int tdm_comm_inter_split(tdm_comm_t *c, int color, int key, tdm_comm_t **new_p) {
    return tdm_comm_inter_split_color(c, (uint64_t)(uint32_t)color, color != TDM_MPI_UNDEFINED, key,
                                      new_p);
}

/* ---- MPI_Intercomm_create_from_groups ---- */

/* What the members of one group must agree on, and the leaders across. */
typedef struct inter_key {
    uint64_t local, remote; /* digests of the two groups, as this side names them */
    int32_t lleader, rleader;
    char tag[TDM_COMM_STRINGTAG_BYTES];
} inter_key_t;

static int inter_key_cmp(const void *mine, const void *theirs) {
    const inter_key_t *a = mine, *b = theirs;
    if (memcmp(a->tag, b->tag, sizeof(a->tag)) != 0)
        return TDM_VERIFY_TAG;
    if (a->lleader != b->lleader || a->rleader != b->rleader)
        return TDM_VERIFY_LEADER;
    return a->local != b->local || a->remote != b->remote ? TDM_VERIFY_GROUP : 0;
}

/* The leaders' check: the other side's local group must be our remote one and the
 * other way round (the leaders already found each other: messages went through). */
static int inter_key_cross(const inter_key_t *mine, const inter_key_t *theirs) {
    if (memcmp(mine->tag, theirs->tag, sizeof(mine->tag)) != 0)
        return TDM_VERIFY_TAG;
    return mine->local != theirs->remote || mine->remote != theirs->local ? TDM_VERIFY_GROUP : 0;
}

int tdm_comm_inter_from_groups(const tdm_group_t *lg, int lleader, const tdm_group_t *rg,
                               int rleader, const char *stringtag, const char **why_p,
                               tdm_comm_t **new_p) {
    int n = lg->map.n;
    int *prank = tdm_comm_group_boot_ranks(lg, lleader);
    if (!prank)
        return -1;
    int tag = tdm_comm_from_group_tag(stringtag);
    tdm_comm_peers_t p =
        tdm_comm_peers(tdm_comm_boot, prank, n, (lg->rank - lleader + n) % n, tag, tag);
    bridge_t b = {.via = tdm_comm_boot,
                  .peer = tdm_rankmap_world(&rg->map, rleader),
                  .tag = tag,
                  .ctx = tdm_comm_boot->ctx + 1};
    inter_key_t key;
    key.local = tdm_comm_rankmap_digest(&lg->map);
    key.remote = tdm_comm_rankmap_digest(&rg->map);
    key.lleader = lleader;
    key.rleader = rleader;
    tdm_comm_stringtag_copy(key.tag, stringtag);
    int32_t verdict = tdm_comm_verify(&p, &key, sizeof(key), inter_key_cmp);
    int rc = -1;
    if (p.me == 0) {
        /* the leaders exchange even when their group disagreed, so that the other
         * group learns it and fails too rather than waiting for the exchange */
        struct {
            int32_t verdict;
            inter_key_t key;
        } out = {.verdict = verdict, .key = key}, in;
        if (bridge_xchg(&b, &out, sizeof(out), &in, sizeof(in)))
            verdict = -1;
        else if (verdict == 0)
            verdict = in.verdict ? in.verdict : inter_key_cross(&key, &in.key);
    }
    if (tdm_comm_bcast(&p, &verdict, sizeof(verdict)))
        goto out;
    if (verdict != 0) {
        rc = verdict > 0 ? (int)tdm_comm_verify_class(verdict, why_p) : -1;
        goto out;
    }
    uint32_t ctx, lctx;
    if (ctx_pair_agree(&p, &b, &ctx, &lctx))
        goto out;
    rc = inter_new(tdm_comm_boot, tdm_rankmap_share(&lg->map), lg->rank,
                   tdm_rankmap_share(&rg->map), ctx, lctx, new_p);
    if (rc == 0)
        (*new_p)->session = lg->session;
out:
    free(prank);
    return rc;
}
