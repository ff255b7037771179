/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sends to this process itself: no ring. A posted receive that matches takes
 * the data at once (one copy, through a bounce buffer for non-contiguous
 * types); otherwise the message is kept as an unexpected eager one.
 * Send: (start) --> done, or for synchronous mode (start) --> WAIT_MATCH
 * --matched by a receive (tdm_eager_ack_sync)--> done.
 */
#include "eager.h"
#include "../../base/sigfmt.h"

enum { SELF_S_WAIT_MATCH = 0 };

tdm_rc_t tdm_self_send(tdm_req_t *s) {
    tdm_p2p_bucket_t *b = tdm_p2p_bucket(s->ctx);
    tdm_lock_acquire(&b->lock);
    tdm_req_t *r = tdm_p2p_match_posted(s->ctx, s->self_rank, s->tag);
    if (r) {
        tdm_lock_release(&b->lock);
        tdm_p2p_recv_set_envelope(r, s->self_rank, s->tag, tdm_p2p.rank, s->bytes);
        size_t n = TDM_MIN(s->bytes, r->bytes);
        if (s->dt->contig && r->dt->contig) {
            if (n)
                tdm_copy((char *)r->buf + r->dt->true_lb, (char *)s->buf + s->dt->true_lb, n);
        } else {
            unsigned char bounce[4096];
            for (size_t off = 0; off < n; off += sizeof(bounce)) {
                size_t len = TDM_MIN(sizeof(bounce), n - off);
                tdm_dtype_pack(s->buf, s->count, s->dt, off, bounce, len);
                tdm_dtype_unpack(r->buf, r->count, r->dt, off, bounce, len);
            }
        }
        tdm_p2p_complete(r);
        tdm_p2p_complete(s);
        return TDM_OK;
    }
    tdm_unexp_t *ue = tdm_p2p_unexp_new(s->ctx, s->self_rank, s->tag, s->bytes, true);
    if (!ue) {
        tdm_lock_release(&b->lock);
        tdm_error(P2P, "out of memory buffering a %zu-byte message to self", s->bytes);
        return TDM_ERR_NOMEM;
    }
    ue->type = TDM_PKT_EAGER;
    ue->flags = (s->mode & ~TDM_MODE_BLOCKING) == TDM_MODE_SYNC ? TDM_PKTF_SYNC : 0;
    ue->src_world = tdm_p2p.rank;
    ue->received = s->bytes;
    tdm_dtype_pack(s->buf, s->count, s->dt, 0, ue->data, s->bytes);
    bool sync = (s->mode & ~TDM_MODE_BLOCKING) == TDM_MODE_SYNC;
    if (sync) {
        ue->self_sreq = s;         /* completes when a receive matches */
        s->proto = TDM_PROTO_SELF; /* only a send that waits needs it named (the dump) */
        s->stage = SELF_S_WAIT_MATCH;
    }
    tdm_p2p_unexp_push(ue); /* whole before another thread's receive can see it */
    tdm_lock_release(&b->lock);
    if (!sync)
        tdm_p2p_complete(s);
    return TDM_OK;
}

void tdm_self_matched(tdm_req_t *s) {
    s->acked = 1;
    tdm_p2p_complete(s);
}

static void self_show(tdm_sfmt_t *f, tdm_req_t *s, int peer) {
    tdm_sfmt_str(f, "synchronous, data sent; waiting for rank ");
    tdm_sfmt_int(f, peer);
    tdm_sfmt_str(f, " to match it (ACK)");
}

static const tdm_proto_push_fn self_push[] = {[SELF_S_WAIT_MATCH] = NULL};

/* Nothing to write and nothing that can fail midway: no fallback. */
const tdm_proto_t tdm_proto_self = {
    .name = "self",
    .desc = "a send to this process: copied into the matching posted receive at once, or kept "
            "as an unexpected eager message (no ring)",
    .push = self_push,
    .show = self_show,
};
