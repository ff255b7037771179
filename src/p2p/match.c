/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matching. Posted receives and unexpected messages are each kept in one list in
 * order; a message matches the first posted receive with the same context whose
 * source and tag are equal or wildcards, and a receive the first such message.
 * With per-pair FIFO rings this gives MPI's non-overtaking order. The queues are
 * split by context into buckets (p2p_impl.h): the callers of the match functions hold
 * the bucket's lock of the context they match in.
 */
#include "p2p_impl.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static inline bool env_match(uint32_t ctx, int src, int tag, uint32_t want_ctx, int want_src,
                             int want_tag) {
    return ctx == want_ctx && (want_src == TDM_ANY_SOURCE || want_src == src) &&
           (want_tag == TDM_ANY_TAG || want_tag == tag);
}

static inline tdm_req_t *match_posted(uint32_t ctx, int src, int tag) {
    tdm_list_t *it, *tmp;
    tdm_list_for_each_safe(it, tmp, &tdm_p2p_bucket(ctx)->posted) {
        tdm_req_t *r = TDM_CONTAINER_OF(it, tdm_req_t, link);
        if (env_match(ctx, src, tag, r->ctx, r->peer, r->tag)) {
            tdm_p2p_posted_remove(r);
            return r;
        }
    }
    return NULL;
}

static inline tdm_unexp_t *match_unexp(uint32_t ctx, int src, int tag) {
    tdm_list_t *it, *tmp;
    tdm_list_for_each_safe(it, tmp, &tdm_p2p_bucket(ctx)->unexp) {
        tdm_unexp_t *ue = TDM_CONTAINER_OF(it, tdm_unexp_t, link);
        if (env_match(ue->ctx, ue->src, ue->tag, ctx, src, tag))
            return ue;
    }
    return NULL;
}

/* tandem_match_time: the clock is read only while a started MPI_T handle
 * times matching (match_timing); otherwise one predictable branch. The timed
 * forms are out of line: inlined, their clock reads made every match save and
 * restore five registers (callgrind: 18 more instructions per match). */
/* Threads of several buckets add to one total. */
static tdm_lock_t match_time_lock = TDM_LOCK_INITIALIZER;
static void match_time_add(uint64_t t0) {
    double d = (double)(tdm_event_clock_ns() - t0) * 1e-9;
    tdm_lock_acquire(&match_time_lock);
    tdm_p2p_stats.match_time += d;
    tdm_lock_release(&match_time_lock);
}

__attribute__((noinline, cold)) static tdm_req_t *match_posted_timed(uint32_t ctx, int src,
                                                                     int tag) {
    uint64_t t0 = tdm_event_clock_ns();
    tdm_req_t *r = match_posted(ctx, src, tag);
    match_time_add(t0);
    return r;
}

__attribute__((noinline, cold)) static tdm_unexp_t *match_unexp_timed(uint32_t ctx, int src,
                                                                      int tag) {
    uint64_t t0 = tdm_event_clock_ns();
    tdm_unexp_t *ue = match_unexp(ctx, src, tag);
    match_time_add(t0);
    return ue;
}

tdm_req_t *tdm_p2p_match_posted(uint32_t ctx, int src, int tag) {
    if (TDM_UNLIKELY(TDM_LOAD_RELAXED(&tdm_p2p_stats.match_timing)))
        return match_posted_timed(ctx, src, tag);
    return match_posted(ctx, src, tag);
}

tdm_unexp_t *tdm_p2p_match_unexp(uint32_t ctx, int src, int tag) {
    if (TDM_UNLIKELY(TDM_LOAD_RELAXED(&tdm_p2p_stats.match_timing)))
        return match_unexp_timed(ctx, src, tag);
    return match_unexp(ctx, src, tag);
}

/* Entries are kept for reuse, and a small message's data lives inside its
 * entry: a receiver that is behind (the non-roots of back-to-back small Bcasts)
 * took an entry and a buffer from malloc and gave both back for every message,
 * 12% of its time with calloc's zeroing. */
#define UNEXP_FREE_MAX 64
static tdm_lock_t unexp_free_lock = TDM_LOCK_INITIALIZER; /* the cache, from any bucket */
static tdm_unexp_t *unexp_free_list;
static int unexp_free_count;

tdm_unexp_t *tdm_p2p_unexp_new(uint32_t ctx, int src, int tag, size_t size, bool data) {
    tdm_lock_acquire(&unexp_free_lock);
    tdm_unexp_t *ue = unexp_free_list;
    if (ue) {
        unexp_free_list = ue->next_free;
        unexp_free_count--;
    }
    tdm_lock_release(&unexp_free_lock);
    if (!ue && !(ue = malloc(sizeof(*ue)))) {
        return NULL;
    }
    memset(ue, 0, offsetof(tdm_unexp_t, inline_data));
    tdm_list_init(&ue->link);
    ue->ctx = ctx;
    ue->src = src;
    ue->tag = tag;
    ue->size = size;
    if (data) {
        ue->data = size <= TDM_UNEXP_INLINE ? ue->inline_data : malloc(size);
        if (!ue->data) {
            free(ue);
            return NULL;
        }
    }
    return ue;
}

void tdm_p2p_unexp_free(tdm_unexp_t *ue) {
    if (ue->data != ue->inline_data)
        free(ue->data);
    tdm_lock_acquire(&unexp_free_lock);
    if (unexp_free_count < UNEXP_FREE_MAX) {
        ue->next_free = unexp_free_list;
        unexp_free_list = ue;
        unexp_free_count++;
        ue = NULL;
    }
    tdm_lock_release(&unexp_free_lock);
    free(ue);
}

void tdm_p2p_unexp_cache_fini(void) {
    while (unexp_free_list) {
        tdm_unexp_t *n = unexp_free_list->next_free;
        free(unexp_free_list);
        unexp_free_list = n;
    }
    unexp_free_count = 0;
}

bool tdm_p2p_iprobe(int src, int tag, uint32_t ctx, tdm_status_t *status) {
    tdm_p2p_progress();
    tdm_p2p_bucket_t *b = tdm_p2p_bucket(ctx);
    tdm_lock_acquire(&b->lock);
    tdm_unexp_t *ue = tdm_p2p_match_unexp(ctx, src, tag);
    if (ue)
        *status = (tdm_status_t){.source = ue->src, .tag = ue->tag, .bytes = ue->size};
    tdm_lock_release(&b->lock);
    return ue != NULL;
}

bool tdm_p2p_improbe(int src, int tag, uint32_t ctx, tdm_status_t *status, tdm_unexp_t **msg_p) {
    tdm_p2p_progress();
    /* found and taken out under one hold of the bucket: no other thread's probe or
     * receive can take the same message (MPI_Mprobe's point) */
    tdm_p2p_bucket_t *b = tdm_p2p_bucket(ctx);
    tdm_lock_acquire(&b->lock);
    tdm_unexp_t *ue = tdm_p2p_match_unexp(ctx, src, tag);
    if (ue) {
        *status = (tdm_status_t){.source = ue->src, .tag = ue->tag, .bytes = ue->size};
        tdm_p2p_unexp_remove(ue);
    }
    tdm_lock_release(&b->lock);
    if (!ue)
        return false;
    *msg_p = ue;
    return true;
}
