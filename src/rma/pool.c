/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ScalaRMA's constant resources (seed 003 §3.4.4): op objects come from one pool of
 * TANDEM_RMA_OPS shared by every window, target objects from one of TANDEM_RMA_TARGETS.
 * When the op pool is empty the oldest window with queued operations issues them
 * (waiting for their synchronization): an aggressive clean-up, counted. A target
 * object lives while its lock is held or asked for; one asked for by MPI_Win_lock_all
 * can be cleaned up by waiting for the grant (the lock is then recorded by the epoch
 * itself), one of MPI_Win_lock only when the user unlocks, so the target pool grows
 * past its size only by the locks the program holds at once (logged).
 */
#include "rma_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tdm_list_t win_list = {&win_list, &win_list};
/* the pools, tgt_extra and win_list (rma_impl.h: taken inside a window's lock) */
static tdm_lock_t pool_lock = TDM_LOCK_INITIALIZER;

uint64_t tdm_rma_ops[TDM_RMA_NKINDS][TDM_RMA_NPATHS];
uint64_t tdm_rma_bytes[TDM_RMA_NPATHS];
uint64_t tdm_rma_to_eager, tdm_rma_queued, tdm_rma_direct, tdm_rma_cleanups, tdm_rma_lock_waits;
uint64_t tdm_rma_lock_handoffs, tdm_rma_lock_wakeups;
uint64_t tdm_rma_am_served;
uint64_t tdm_rma_combined_ops, tdm_rma_combined_calls;
uint64_t tdm_rma_windows;

static _Thread_local char why[512];

const char *tdm_rma_why(void) {
    return why;
}

tdm_rma_rc_t tdm_rma_fail(tdm_rma_rc_t rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return rc;
}

static tdm_rma_op_t *op_pool;
static tdm_list_t op_free = {&op_free, &op_free};
static tdm_list_t tgt_free = {&tgt_free, &tgt_free};
static tdm_rma_target_t *tgt_pool;
static int tgt_extra; /* targets allocated past the pool (locks held at once) */

static int pools_init(void) {
    if (op_pool)
        return 0;
    size_t nops = (size_t)TDM_PARAM_I(RMA_OPS), ntg = (size_t)TDM_PARAM_I(RMA_TARGETS);
    op_pool = calloc(nops, sizeof(*op_pool));
    tgt_pool = calloc(ntg, sizeof(*tgt_pool));
    if (!op_pool || !tgt_pool) {
        tdm_error(RMA, "out of memory for the pools of %zu operations and %zu targets", nops, ntg);
        free(op_pool);
        free(tgt_pool);
        op_pool = NULL;
        tgt_pool = NULL;
        return -1;
    }
    for (size_t i = 0; i < nops; i++)
        tdm_list_push_back(&op_free, &op_pool[i].link);
    for (size_t i = 0; i < ntg; i++)
        tdm_list_push_back(&tgt_free, &tgt_pool[i].link);
    return 0;
}

static tdm_list_t *pop(tdm_list_t *h) {
    if (tdm_list_empty(h))
        return NULL;
    tdm_list_t *e = h->next;
    tdm_list_remove(e);
    return e;
}

/* An op object from the pool, or NULL. */
static tdm_rma_op_t *op_pop(void) {
    tdm_lock_acquire(&pool_lock);
    tdm_list_t *e = pools_init() ? NULL : pop(&op_free);
    tdm_lock_release(&pool_lock);
    return e ? TDM_CONTAINER_OF(e, tdm_rma_op_t, link) : NULL;
}

tdm_rma_op_t *tdm_rma_op_alloc(tdm_win_t *w) {
    tdm_rma_op_t *op = op_pop();
    if (op)
        return op;
    /* clean-up: this window's queue first (its synchronization is the one the caller
     * is in), else, unthreaded, the first other window with queued operations (when
     * threaded its lock would be taken inside ours: the caller issues at once instead) */
    tdm_win_t *v = w->nqueued ? w : NULL;
    if (!v && !tdm_threaded) {
        for (tdm_list_t *it = win_list.next; it != &win_list; it = it->next) {
            tdm_win_t *x = TDM_CONTAINER_OF(it, tdm_win_t, link);
            if (x->nqueued) {
                v = x;
                break;
            }
        }
    }
    if (!v)
        return NULL;
    TDM_COUNTER_ADD(&tdm_rma_cleanups, 1);
    if (tdm_rma_drain(v, -1) != TDM_RMA_OK)
        return NULL;
    return op_pop();
}

void tdm_rma_op_free(tdm_rma_op_t *op) {
    tdm_lock_acquire(&pool_lock);
    tdm_list_push_back(&op_free, &op->link);
    tdm_lock_release(&pool_lock);
}

static tdm_list_t *bucket(tdm_win_t *w, int rank) {
    return &w->targets[(unsigned)rank % TDM_RMA_TARGET_BUCKETS];
}

/* Wait for the grant of one of x's lock_all targets and free its object (clean-up). */
static bool cleanup_target_of(tdm_win_t *x) {
    if (!x->ntargets || x->epoch != TDM_EPOCH_LOCK_ALL)
        return false;
    for (size_t b = 0; b < sizeof(x->targets) / sizeof(x->targets[0]); b++) {
        if (tdm_list_empty(&x->targets[b]))
            continue;
        tdm_rma_target_t *t = TDM_CONTAINER_OF(x->targets[b].next, tdm_rma_target_t, link);
        if (tdm_rma_drain(x, t->rank) != TDM_RMA_OK)
            return false;
        TDM_COUNTER_ADD(&tdm_rma_cleanups, 1);
        tdm_rma_target_free(x, t);
        return true;
    }
    return false;
}

/* Of the caller's window, or unthreaded of any (see tdm_rma_op_alloc). */
static bool cleanup_target(tdm_win_t *w) {
    if (tdm_threaded)
        return cleanup_target_of(w);
    for (tdm_list_t *it = win_list.next; it != &win_list; it = it->next)
        if (cleanup_target_of(TDM_CONTAINER_OF(it, tdm_win_t, link)))
            return true;
    return false;
}

static tdm_rma_target_t *target_pop(void) {
    tdm_lock_acquire(&pool_lock);
    tdm_list_t *e = pools_init() ? NULL : pop(&tgt_free);
    tdm_lock_release(&pool_lock);
    return e ? TDM_CONTAINER_OF(e, tdm_rma_target_t, link) : NULL;
}

tdm_rma_target_t *tdm_rma_target_new(tdm_win_t *w, int rank) {
    tdm_rma_target_t *t = target_pop();
    if (!t && cleanup_target(w))
        t = target_pop();
    if (!t) {
        t = malloc(sizeof(*t));
        if (!t)
            return NULL;
        tdm_lock_acquire(&pool_lock);
        int first = tgt_extra++ == 0;
        tdm_lock_release(&pool_lock);
        if (first)
            tdm_debug(RMA,
                      "more than TANDEM_RMA_TARGETS=%d locks held at once: target objects "
                      "allocated past the pool",
                      (int)TDM_PARAM_I(RMA_TARGETS));
    }
    memset(t, 0, sizeof(*t));
    t->rank = rank;
    tdm_list_push_back(bucket(w, rank), &t->link);
    w->ntargets++;
    return t;
}

void tdm_rma_target_free(tdm_win_t *w, tdm_rma_target_t *t) {
    tdm_list_remove(&t->link);
    w->ntargets--;
    size_t ntg = (size_t)TDM_PARAM_I(RMA_TARGETS);
    tdm_lock_acquire(&pool_lock);
    if (tgt_pool && t >= tgt_pool && t < tgt_pool + ntg) {
        tdm_list_push_back(&tgt_free, &t->link);
        t = NULL;
    } else {
        tgt_extra--;
    }
    tdm_lock_release(&pool_lock);
    free(t);
}

void tdm_rma_win_register(tdm_win_t *w) {
    tdm_lock_acquire(&pool_lock);
    tdm_list_push_back(&win_list, &w->link);
    tdm_lock_release(&pool_lock);
}

void tdm_rma_win_unregister(tdm_win_t *w) {
    tdm_lock_acquire(&pool_lock);
    tdm_list_remove(&w->link);
    if (tdm_list_empty(&win_list)) {
        /* windows the program never freed keep theirs */
        free(op_pool);
        free(tgt_pool);
        op_pool = NULL;
        tgt_pool = NULL;
        tdm_list_init(&op_free);
        tdm_list_init(&tgt_free);
    }
    tdm_lock_release(&pool_lock);
}
