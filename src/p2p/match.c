/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matching. Posted receives and unexpected messages are each kept in one list in
 * order; a message matches the first posted receive with the same context whose
 * source and tag are equal or wildcards, and a receive the first such message.
 * With per-pair FIFO rings this gives MPI's non-overtaking order.
 */
#include "p2p_impl.h"

#include <stdlib.h>

static inline bool env_match(uint32_t ctx, int src, int tag, uint32_t want_ctx, int want_src,
                             int want_tag) {
    return ctx == want_ctx && (want_src == TDM_ANY_SOURCE || want_src == src) &&
           (want_tag == TDM_ANY_TAG || want_tag == tag);
}

tdm_req_t *tdm_p2p_match_posted(uint32_t ctx, int src, int tag) {
    tdm_list_t *it, *tmp;
    tdm_list_for_each_safe(it, tmp, &tdm_p2p.posted) {
        tdm_req_t *r = TDM_CONTAINER_OF(it, tdm_req_t, link);
        if (env_match(ctx, src, tag, r->ctx, r->peer, r->tag)) {
            tdm_list_remove(&r->link);
            return r;
        }
    }
    return NULL;
}

tdm_unexp_t *tdm_p2p_match_unexp(uint32_t ctx, int src, int tag) {
    tdm_list_t *it, *tmp;
    tdm_list_for_each_safe(it, tmp, &tdm_p2p.unexp) {
        tdm_unexp_t *ue = TDM_CONTAINER_OF(it, tdm_unexp_t, link);
        if (env_match(ue->ctx, ue->src, ue->tag, ctx, src, tag))
            return ue;
    }
    return NULL;
}

tdm_unexp_t *tdm_p2p_unexp_new(uint32_t ctx, int src, int tag, size_t size) {
    tdm_unexp_t *ue = calloc(1, sizeof(*ue));
    if (!ue)
        return NULL;
    tdm_list_init(&ue->link);
    ue->ctx = ctx;
    ue->src = src;
    ue->tag = tag;
    ue->size = size;
    return ue;
}

void tdm_p2p_unexp_free(tdm_unexp_t *ue) {
    free(ue->data);
    free(ue);
}

bool tdm_p2p_iprobe(int src, int tag, uint32_t ctx, tdm_status_t *status) {
    tdm_p2p_progress();
    tdm_unexp_t *ue = tdm_p2p_match_unexp(ctx, src, tag);
    if (!ue)
        return false;
    status->source = ue->src;
    status->tag = ue->tag;
    status->bytes = ue->size;
    status->error = TDM_OK;
    status->cancelled = 0;
    return true;
}

bool tdm_p2p_improbe(int src, int tag, uint32_t ctx, tdm_status_t *status, tdm_unexp_t **msg_p) {
    if (!tdm_p2p_iprobe(src, tag, ctx, status))
        return false;
    tdm_unexp_t *ue = tdm_p2p_match_unexp(ctx, src, tag);
    tdm_list_remove(&ue->link);
    *msg_p = ue;
    return true;
}
