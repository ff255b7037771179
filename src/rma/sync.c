/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Synchronization: fence, PSCW, passive target locks, flushes, and when queued
 * operations are issued.
 *
 * Everything a synchronization needs is in the window's shared object, so no
 * synchronization waits for another process to make an MPI call:
 * - a lock is a word in the target's slot (exclusive bit, or a count of shared
 *   holders) and a FIFO of waiting requests beside it (seed 003 §3.4: queued locks
 *   at the target), a ring of one word per member, since a member waits for one lock
 *   of a target at a time. MPI_Win_lock asks at once (no piggy-backing on the first
 *   operation) and returns: the lock is taken, or the request queued. A release hands
 *   the lock over: it grants the head of the queue (one exclusive request, or the run
 *   of shared ones), sets their grant bytes and rings only their doorbells. A waiter
 *   looks at its grant byte and blocks on its doorbell: it never retries the lock.
 *   New requests queue behind waiting ones, so writers are not starved. The target
 *   itself does nothing: it may compute outside MPI.
 * - PSCW: MPI_Win_post adds one to each origin's `posts`, MPI_Win_complete one to
 *   each target's `completes`; start and wait count them.
 * - Fence: a barrier on the object's header. A fence that opens an epoch with
 *   MPI_MODE_NOPRECEDE only arrives (ScalaRMA's non-blocking opening barrier): the
 *   operations that follow queue until every member has arrived.
 * Waits go through tdm_p2p_wait_until: they poll, then block on the doorbell, and
 * serve the window's messages meanwhile (am.c).
 */
#include "rma_impl.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

bool tdm_rma_poke(int world) {
    if (!atomic_load_explicit(&tdm_shm_proc(world)->sleeping, memory_order_seq_cst))
        return false;
    tdm_shm_wake(world);
    return true;
}

void tdm_rma_poke_all(tdm_win_t *w) {
    for (int i = 0; i < w->size; i++)
        if (i != w->rank)
            tdm_rma_poke(tdm_rma_slot(w, i)->world);
}

typedef struct {
    tdm_win_t *w;
    bool (*cond)(void *);
    void *arg;
} locked_cond_t;

/* The condition under the window's lock: the wait itself holds none (base/lock.h). */
static bool locked_cond(void *arg) {
    locked_cond_t *c = arg;
    tdm_lock_acquire(&c->w->lock);
    bool r = c->cond(c->arg);
    tdm_lock_release(&c->w->lock);
    return r;
}

void tdm_rma_wait_for(tdm_win_t *w, bool (*cond)(void *), void *arg) {
    if (cond(arg))
        return;
    if (!tdm_threaded) {
        tdm_p2p_wait_until(cond, arg);
        return;
    }
    locked_cond_t c = {w, cond, arg};
    tdm_lock_release(&w->lock);
    tdm_p2p_wait_until(locked_cond, &c);
    tdm_lock_acquire(&w->lock);
}

/* ---- the fence barrier ---- */

static void barrier_arrive(tdm_win_t *w) {
    tdm_rma_shared_t *sh = w->sh;
    uint32_t gen = atomic_load_explicit(&sh->bar_gen, memory_order_acquire);
    w->fence_gen = gen;
    w->fence_pending = true;
    if (atomic_fetch_add_explicit(&sh->bar_count, 1, memory_order_acq_rel) + 1 ==
        (uint32_t)w->size) {
        atomic_store_explicit(&sh->bar_count, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&sh->bar_gen, 1, memory_order_seq_cst);
        tdm_rma_poke_all(w);
        w->fence_pending = false;
    }
}

static bool barrier_done(void *arg) {
    tdm_win_t *w = arg;
    if (w->fence_pending &&
        atomic_load_explicit(&w->sh->bar_gen, memory_order_acquire) != w->fence_gen)
        w->fence_pending = false;
    return !w->fence_pending;
}

void tdm_rma_barrier(tdm_win_t *w) {
    tdm_rma_wait_for(w, barrier_done, w); /* a pending non-blocking arrival first */
    barrier_arrive(w);
    tdm_rma_wait_for(w, barrier_done, w);
}

/* ---- locks ---- */

/* The queue's guard: held for a few loads and stores by a process that waits for
 * nothing meanwhile, so a contender spins, then yields. */
static void q_lock(tdm_rma_slot_t *s) {
    for (unsigned k = 0;; k++) {
        uint32_t z = 0;
        if (atomic_load_explicit(&s->qmutex, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&s->qmutex, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        if (k >= 64)
            sched_yield();
    }
}

static void q_unlock(tdm_rma_slot_t *s) {
    atomic_store_explicit(&s->qmutex, 0, memory_order_release);
}

/* A queued request: the origin's window rank and the lock type. */
static uint32_t *q_ring(const tdm_win_t *w, tdm_rma_slot_t *s) {
    return (uint32_t *)(void *)((unsigned char *)s + w->sh->lockq_off);
}

/* grant[origin]: set by the releaser that hands the lock to origin, cleared by it. */
static _Atomic uint8_t *q_grants(const tdm_win_t *w, tdm_rma_slot_t *s) {
    return (_Atomic uint8_t *)(void *)(q_ring(w, s) + w->size);
}

/* Ask for t's lock: taken now when nobody holds it incompatibly and nobody waits
 * before us (a shared request queues behind a waiting exclusive one: no writer
 * starves), else queued at the tail; the releaser hands it over (lock_release). */
static void lock_request(tdm_win_t *w, tdm_rma_target_t *t) {
    if (t->nocheck) {
        t->granted = 1;
        return;
    }
    tdm_rma_slot_t *s = tdm_rma_slot(w, t->rank);
    bool excl = t->type == TDM_RMA_LOCK_EXCLUSIVE;
    q_lock(s);
    uint32_t v = atomic_load_explicit(&s->lock, memory_order_relaxed);
    bool now = s->qhead == s->qtail && (excl ? v == 0 : !(v & TDM_RMA_LOCK_X));
    if (now) {
        atomic_store_explicit(&s->lock, excl ? TDM_RMA_LOCK_X : v + 1, memory_order_relaxed);
        if (excl)
            atomic_store_explicit(&s->owner, w->rank, memory_order_relaxed);
    } else {
        q_ring(w, s)[s->qtail % (uint32_t)w->size] = (uint32_t)w->rank << 2 | t->type;
        s->qtail++;
    }
    q_unlock(s);
    t->granted = now;
}

/* Grant the queued request e (under the guard) and ring the doorbell of its origin
 * only: nobody else is woken. */
static void lock_hand(tdm_win_t *w, tdm_rma_slot_t *s, uint32_t e) {
    int origin = (int)(e >> 2);
    atomic_store_explicit(&q_grants(w, s)[origin], 1, memory_order_seq_cst);
    TDM_COUNTER_ADD(&tdm_rma_lock_handoffs, 1);
    if (origin != w->rank && tdm_rma_poke(tdm_rma_slot(w, origin)->world))
        TDM_COUNTER_ADD(&tdm_rma_lock_wakeups, 1);
}

static void lock_release(tdm_win_t *w, int rank, int type) {
    tdm_rma_slot_t *s = tdm_rma_slot(w, rank);
    uint32_t n = (uint32_t)w->size, *ring = q_ring(w, s);
    q_lock(s);
    uint32_t v = type == TDM_RMA_LOCK_EXCLUSIVE
                     ? 0
                     : atomic_load_explicit(&s->lock, memory_order_relaxed) - 1;
    if (type == TDM_RMA_LOCK_EXCLUSIVE)
        atomic_store_explicit(&s->owner, -1, memory_order_relaxed);
    /* the next waiter: one exclusive request, or the run of shared ones at the head */
    if (v == 0 && s->qhead != s->qtail) {
        uint32_t e = ring[s->qhead % n];
        if ((e & 3) == TDM_RMA_LOCK_EXCLUSIVE) {
            s->qhead++;
            v = TDM_RMA_LOCK_X;
            atomic_store_explicit(&s->owner, (int32_t)(e >> 2), memory_order_relaxed);
            lock_hand(w, s, e);
        } else {
            while (s->qhead != s->qtail && (ring[s->qhead % n] & 3) == TDM_RMA_LOCK_SHARED) {
                lock_hand(w, s, ring[s->qhead % n]);
                s->qhead++;
                v++;
            }
        }
    }
    atomic_store_explicit(&s->lock, v, memory_order_release);
    q_unlock(s);
}

typedef struct {
    tdm_win_t *w;
    tdm_rma_target_t *t;
} lock_wait_t;

/* A queued request is granted when its grant byte is set: one load, no retry. */
static bool lock_granted(void *arg) {
    lock_wait_t *l = arg;
    if (!l->t->granted) {
        _Atomic uint8_t *g = &q_grants(l->w, tdm_rma_slot(l->w, l->t->rank))[l->w->rank];
        if (atomic_load_explicit(g, memory_order_acquire)) {
            atomic_store_explicit(g, 0, memory_order_relaxed);
            l->t->granted = 1;
        }
    }
    return l->t->granted;
}

static void lock_wait(tdm_win_t *w, tdm_rma_target_t *t) {
    lock_wait_t l = {w, t};
    if (lock_granted(&l))
        return;
    TDM_COUNTER_ADD(&tdm_rma_lock_waits, 1);
    tdm_rma_wait_for(w, lock_granted, &l);
}

/* The accumulate lock: held for the few copies of one operation, by a process that
 * never waits for anything while it holds it, so a waiter only yields. */
void tdm_rma_acc_lock(tdm_win_t *w, int rank) {
    _Atomic uint32_t *a = &tdm_rma_slot(w, rank)->acc;
    for (unsigned k = 0;; k++) {
        uint32_t z = 0;
        if (atomic_load_explicit(a, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(a, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        if (k >= 64)
            sched_yield();
    }
}

void tdm_rma_acc_unlock(tdm_win_t *w, int rank) {
    atomic_store_explicit(&tdm_rma_slot(w, rank)->acc, 0, memory_order_release);
}

/* ---- readiness ---- */

static bool start_ready(tdm_win_t *w) {
    if (w->start_nocheck)
        return true;
    uint32_t got = atomic_load_explicit(&tdm_rma_slot(w, w->rank)->posts, memory_order_acquire);
    if (got - w->posts_seen < (uint32_t)w->start_n)
        return false;
    w->posts_seen += (uint32_t)w->start_n;
    w->start_nocheck = true; /* consumed: ready until MPI_Win_complete */
    return true;
}

bool tdm_rma_ready(tdm_win_t *w, int rank) {
    switch (w->epoch) {
    case TDM_EPOCH_FENCE:
        return barrier_done(w);
    case TDM_EPOCH_START:
        return start_ready(w);
    case TDM_EPOCH_LOCK:
    case TDM_EPOCH_LOCK_ALL: {
        tdm_rma_target_t *t = tdm_rma_target_find(w, rank);
        if (!t)
            return w->epoch == TDM_EPOCH_LOCK_ALL; /* granted at lock_all */
        lock_wait_t l = {w, t};
        return lock_granted(&l);
    }
    default:
        return true;
    }
}

typedef struct {
    tdm_win_t *w;
    int rank;
} ready_t;

static bool ready_cb(void *arg) {
    ready_t *r = arg;
    return tdm_rma_ready(r->w, r->rank);
}

void tdm_rma_ready_wait(tdm_win_t *w, int rank) {
    if (w->epoch == TDM_EPOCH_LOCK || w->epoch == TDM_EPOCH_LOCK_ALL) {
        tdm_rma_target_t *t = tdm_rma_target_find(w, rank);
        if (t)
            lock_wait(w, t);
        return;
    }
    ready_t r = {w, rank};
    tdm_rma_wait_for(w, ready_cb, &r);
}

tdm_rma_rc_t tdm_rma_drain(tdm_win_t *w, int rank) {
    tdm_rma_rc_t rc = TDM_RMA_OK;
    for (;;) {
        tdm_rma_op_t *op = NULL;
        for (tdm_list_t *it = w->queue.next; it != &w->queue; it = it->next) {
            tdm_rma_op_t *o = TDM_CONTAINER_OF(it, tdm_rma_op_t, link);
            if (rank < 0 || o->a.target == rank) {
                op = o;
                break;
            }
        }
        if (!op)
            break;
        if (!tdm_rma_ready(w, op->a.target)) {
            /* the wait drops the window's lock: look again from the head after it */
            tdm_rma_ready_wait(w, op->a.target);
            continue;
        }
        tdm_list_remove(&op->link);
        w->nqueued--;
        tdm_rma_rc_t r = tdm_rma_issue(w, &op->a, true);
        if (r != TDM_RMA_OK && rc == TDM_RMA_OK)
            rc = r;
        if (op->a.odt)
            tdm_dtype_release(op->a.odt);
        if (op->a.rdt)
            tdm_dtype_release(op->a.rdt);
        tdm_dtype_release(op->a.tdt);
        tdm_rma_op_free(op);
    }
    /* and what was combined (queued operations just joined it) */
    tdm_rma_rc_t r = tdm_rma_batch_issue(w, rank);
    return rc == TDM_RMA_OK ? r : rc;
}

tdm_rma_rc_t tdm_rma_drain_ready(tdm_win_t *w) {
    tdm_list_t *it, *tmp;
    tdm_rma_rc_t rc = TDM_RMA_OK;
    tdm_list_for_each_safe(it, tmp, &w->queue) {
        tdm_rma_op_t *op = TDM_CONTAINER_OF(it, tdm_rma_op_t, link);
        if (!tdm_rma_ready(w, op->a.target))
            continue; /* later ones to this target stay behind it: drain keeps order */
        tdm_rma_rc_t r = tdm_rma_drain(w, op->a.target);
        if (r != TDM_RMA_OK && rc == TDM_RMA_OK)
            rc = r;
        return rc == TDM_RMA_OK ? tdm_rma_drain_ready(w) : rc; /* the list changed */
    }
    return rc;
}

/* ---- epochs ---- */

bool tdm_rma_passive(tdm_win_t *w) {
    return w->epoch == TDM_EPOCH_LOCK || w->epoch == TDM_EPOCH_LOCK_ALL;
}

bool tdm_rma_may_access(tdm_win_t *w, int rank) {
    switch (w->epoch) {
    case TDM_EPOCH_FENCE:
    case TDM_EPOCH_LOCK_ALL:
        return true;
    case TDM_EPOCH_LOCK:
        return tdm_rma_target_find(w, rank) != NULL;
    case TDM_EPOCH_START:
        for (int i = 0; i < w->start_n; i++)
            if (w->start_ranks[i] == rank)
                return true;
        return false;
    default:
        return false;
    }
}

/* A new access epoch: delayed, unless the thresholds say eager from the start. */
static void epoch_open(tdm_win_t *w) {
    w->epoch_nops = 0;
    w->epoch_bytes = 0;
    w->eager = TDM_PARAM_I(RMA_EAGER_OPS) == 0;
}

/* A fence epoch in which nothing was done may give way to another kind. */
static tdm_rma_rc_t leave_idle_fence(tdm_win_t *w, const char *what) {
    if (w->epoch != TDM_EPOCH_FENCE)
        return TDM_RMA_OK;
    if (w->fence_ops)
        return tdm_rma_fail(TDM_RMA_ESYNC,
                            "%s inside a fence epoch in which operations were "
                            "posted (close it with MPI_MODE_NOSUCCEED)",
                            what);
    tdm_rma_wait_for(w, barrier_done, w);
    w->epoch = TDM_EPOCH_NONE;
    return TDM_RMA_OK;
}

/* Errors of epoch order are ESYNC (a call out of sequence: MPICH and Open MPI say so too).
 * ECONFLICT is kept for a second claim on memory this process holds already: a lock
 * of a target it has an access epoch to (locked, lock_all, or in its Start group),
 * a Start naming a target it has locked, and its own window locked and exposed at
 * once (MPI-4.1 12.5.3 calls that erroneous); Open MPI's osc pt2pt answers a repeated
 * lock so. */
static bool locked_by_me(tdm_win_t *w, int rank) {
    return w->epoch == TDM_EPOCH_LOCK_ALL ||
           (w->epoch == TDM_EPOCH_LOCK && tdm_rma_target_find(w, rank) != NULL);
}

static bool in_start_group(const tdm_win_t *w, int rank) {
    if (w->epoch != TDM_EPOCH_START)
        return false;
    for (int i = 0; i < w->start_n; i++)
        if (w->start_ranks[i] == rank)
            return true;
    return false;
}

static tdm_rma_rc_t fence_impl(tdm_win_t *w, int assert) {
    if (w->epoch != TDM_EPOCH_NONE && w->epoch != TDM_EPOCH_FENCE)
        return tdm_rma_fail(TDM_RMA_ESYNC, "a %s epoch is open",
                            w->epoch == TDM_EPOCH_START ? "PSCW access (MPI_Win_start)"
                                                        : "passive target (lock)");
    if (w->exposed)
        return tdm_rma_fail(TDM_RMA_ESYNC, "an exposure epoch (MPI_Win_post) is open");
    tdm_rma_rc_t rc = tdm_rma_drain(w, -1);
    if (rc == TDM_RMA_OK && w->am)
        rc = tdm_rma_am_flush(w, -1);
    if (rc != TDM_RMA_OK)
        return rc;
    atomic_thread_fence(memory_order_seq_cst);
    tdm_rma_wait_for(w, barrier_done, w);
    barrier_arrive(w);
    bool opening_only = (assert &TDM_RMA_MODE_NOPRECEDE) && !(assert &TDM_RMA_MODE_NOSUCCEED);
    if (!opening_only || TDM_PARAM_I(RMA_EAGER_OPS) == 0)
        tdm_rma_wait_for(w, barrier_done, w);
    w->fence_ops = 0;
    if (assert & TDM_RMA_MODE_NOSUCCEED) {
        w->epoch = TDM_EPOCH_NONE;
    } else {
        w->epoch = TDM_EPOCH_FENCE;
        epoch_open(w);
    }
    return TDM_RMA_OK;
}

static tdm_rma_rc_t lock_impl(tdm_win_t *w, int type, int rank, int assert) {
    tdm_rma_rc_t rc = leave_idle_fence(w, "MPI_Win_lock");
    if (rc != TDM_RMA_OK)
        return rc;
    if (locked_by_me(w, rank))
        return tdm_rma_fail(TDM_RMA_ECONFLICT, "rank %d is locked already by this process (%s)",
                            rank,
                            w->epoch == TDM_EPOCH_LOCK_ALL ? "MPI_Win_lock_all" : "MPI_Win_lock");
    if (in_start_group(w, rank))
        return tdm_rma_fail(TDM_RMA_ECONFLICT,
                            "rank %d is in the group of this process's open MPI_Win_start epoch",
                            rank);
    if (rank == w->rank && w->exposed)
        return tdm_rma_fail(TDM_RMA_ECONFLICT,
                            "rank %d is this process, whose window is exposed (MPI_Win_post "
                            "without MPI_Win_wait): it may not be locked as well",
                            rank);
    if (w->epoch != TDM_EPOCH_NONE && w->epoch != TDM_EPOCH_LOCK)
        return tdm_rma_fail(TDM_RMA_ESYNC, "a %s epoch is open",
                            w->epoch == TDM_EPOCH_START ? "PSCW access (MPI_Win_start)" : "fence");
    tdm_rma_target_t *t = tdm_rma_target_new(w, rank);
    if (!t)
        return tdm_rma_fail(TDM_RMA_ENOMEM, "out of memory for a target object");
    t->type = (uint8_t)type;
    t->nocheck = (assert &TDM_RMA_MODE_NOCHECK) != 0;
    if (w->nlocks++ == 0) {
        w->epoch = TDM_EPOCH_LOCK;
        epoch_open(w);
    }
    lock_request(w, t);
    if (w->eager)
        lock_wait(w, t);
    return TDM_RMA_OK;
}

static tdm_rma_rc_t unlock_impl(tdm_win_t *w, int rank) {
    tdm_rma_target_t *t = w->epoch == TDM_EPOCH_LOCK ? tdm_rma_target_find(w, rank) : NULL;
    if (!t)
        return tdm_rma_fail(TDM_RMA_ESYNC,
                            "rank %d is not locked by this process (no "
                            "MPI_Win_lock before)",
                            rank);
    tdm_rma_rc_t rc = tdm_rma_drain(w, rank);
    if (rc == TDM_RMA_OK && w->am)
        rc = tdm_rma_am_flush(w, rank);
    /* the lock is held once, even without operations: a program may use it as a mutex */
    lock_wait(w, t);
    atomic_thread_fence(memory_order_seq_cst);
    if (!t->nocheck)
        lock_release(w, rank, t->type);
    tdm_rma_target_free(w, t);
    if (--w->nlocks == 0)
        w->epoch = TDM_EPOCH_NONE;
    return rc;
}

static tdm_rma_rc_t lock_all_impl(tdm_win_t *w, int assert) {
    tdm_rma_rc_t rc = leave_idle_fence(w, "MPI_Win_lock_all");
    if (rc != TDM_RMA_OK)
        return rc;
    if (tdm_rma_passive(w))
        return tdm_rma_fail(TDM_RMA_ECONFLICT, "this process holds %s on this window already",
                            w->epoch == TDM_EPOCH_LOCK ? "a lock (MPI_Win_lock)"
                                                       : "every lock (MPI_Win_lock_all)");
    if (w->epoch == TDM_EPOCH_START && w->start_n > 0)
        return tdm_rma_fail(TDM_RMA_ECONFLICT,
                            "an MPI_Win_start epoch to %d rank(s) is open: they would be locked "
                            "as well",
                            w->start_n);
    if (w->exposed)
        return tdm_rma_fail(TDM_RMA_ECONFLICT,
                            "this process's window is exposed (MPI_Win_post without "
                            "MPI_Win_wait): it may not be locked as well");
    if (w->epoch != TDM_EPOCH_NONE)
        return tdm_rma_fail(TDM_RMA_ESYNC, "an empty PSCW access epoch (MPI_Win_start) is open");
    w->epoch = TDM_EPOCH_LOCK_ALL;
    epoch_open(w);
    w->lock_all_nocheck = (assert &TDM_RMA_MODE_NOCHECK) != 0;
    if (w->lock_all_nocheck)
        return TDM_RMA_OK;
    /* every request now; only the ones not granted keep an object */
    for (int r = 0; r < w->size; r++) {
        tdm_rma_target_t probe = {.rank = r, .type = TDM_RMA_LOCK_SHARED};
        lock_request(w, &probe);
        if (probe.granted)
            continue;
        tdm_rma_target_t *t = tdm_rma_target_new(w, r);
        if (!t) {
            /* cannot remember it: wait for it instead */
            lock_wait(w, &probe);
            continue;
        }
        t->type = TDM_RMA_LOCK_SHARED;
        t->all = 1;
        if (w->eager)
            lock_wait(w, t);
    }
    return TDM_RMA_OK;
}

static tdm_rma_rc_t unlock_all_impl(tdm_win_t *w) {
    if (w->epoch != TDM_EPOCH_LOCK_ALL)
        return tdm_rma_fail(TDM_RMA_ESYNC, "no MPI_Win_lock_all epoch is open");
    tdm_rma_rc_t rc = tdm_rma_drain(w, -1);
    if (rc == TDM_RMA_OK && w->am)
        rc = tdm_rma_am_flush(w, -1);
    atomic_thread_fence(memory_order_seq_cst);
    if (!w->lock_all_nocheck) {
        for (int r = 0; r < w->size; r++) {
            tdm_rma_target_t *t = tdm_rma_target_find(w, r);
            if (t) {
                lock_wait(w, t);
                tdm_rma_target_free(w, t);
            }
            lock_release(w, r, TDM_RMA_LOCK_SHARED);
        }
    }
    w->epoch = TDM_EPOCH_NONE;
    return rc;
}

static bool flush_direct(tdm_win_t *w, int rank) {
    if (w->nqueued || w->am || (unsigned)rank >= (unsigned)w->size ||
        tdm_rma_batch_pending(w, rank))
        return false;
    if (w->epoch == TDM_EPOCH_LOCK ? !tdm_rma_target_find(w, rank) : w->epoch != TDM_EPOCH_LOCK_ALL)
        return false;
    /* what was issued by load/store, atomics or CMA is complete once ordered */
    tdm_rma_full_fence();
    return true;
}

static __attribute__((noinline)) bool flush_direct_locked(tdm_win_t *w, int rank) {
    tdm_lock_acquire(&w->lock);
    bool done = flush_direct(w, rank);
    tdm_lock_release(&w->lock);
    return done;
}

bool tdm_rma_flush_direct(tdm_win_t *w, int rank) {
    if (TDM_UNLIKELY(tdm_threaded))
        return flush_direct_locked(w, rank);
    return flush_direct(w, rank);
}

static tdm_rma_rc_t flush_impl(tdm_win_t *w, int rank, bool local) {
    (void)local; /* operations complete at the target when issued (messages: flushed) */
    if (!tdm_rma_passive(w))
        return tdm_rma_fail(TDM_RMA_ESYNC, "no passive target epoch (MPI_Win_lock or "
                                           "MPI_Win_lock_all) is open");
    if (rank >= 0 && w->epoch == TDM_EPOCH_LOCK && !tdm_rma_target_find(w, rank))
        return tdm_rma_fail(TDM_RMA_ESYNC, "rank %d is not locked by this process", rank);
    tdm_rma_rc_t rc = TDM_RMA_OK;
    if (w->nqueued) {
        /* what waited for other targets' synchronization and may go now goes too */
        rc = tdm_rma_drain_ready(w);
        if (rc == TDM_RMA_OK)
            rc = tdm_rma_drain(w, rank);
    } else if (tdm_rma_batch_pending(w, rank)) {
        rc = tdm_rma_batch_issue(w, rank);
    }
    if (rc == TDM_RMA_OK && w->am)
        rc = tdm_rma_am_flush(w, rank);
    /* what was issued by load/store and atomics is complete once ordered */
    atomic_thread_fence(memory_order_seq_cst);
    return rc;
}

static tdm_rma_rc_t post_group_impl(tdm_win_t *w, const int *ranks, int n, int assert) {
    if (w->exposed)
        return tdm_rma_fail(TDM_RMA_ESYNC, "an exposure epoch is open already (MPI_Win_post "
                                           "without MPI_Win_wait)");
    tdm_rma_rc_t rc = leave_idle_fence(w, "MPI_Win_post");
    if (rc != TDM_RMA_OK)
        return rc;
    /* locks of other targets may stay: an access epoch and an exposure epoch overlap */
    if (locked_by_me(w, w->rank))
        return tdm_rma_fail(TDM_RMA_ECONFLICT,
                            "this process holds a lock on its own window (%s): it may not be "
                            "exposed as well",
                            w->epoch == TDM_EPOCH_LOCK_ALL ? "MPI_Win_lock_all" : "MPI_Win_lock");
    /* local stores before the post are seen by the origins' accesses after start */
    atomic_thread_fence(memory_order_seq_cst);
    w->post_n = n;
    w->exposed = true;
    if (assert & TDM_RMA_MODE_NOCHECK)
        return TDM_RMA_OK;
    for (int i = 0; i < n; i++) {
        tdm_rma_slot_t *s = tdm_rma_slot(w, ranks[i]);
        atomic_fetch_add_explicit(&s->posts, 1, memory_order_seq_cst);
        if (ranks[i] != w->rank)
            tdm_rma_poke(s->world);
    }
    return TDM_RMA_OK;
}

static tdm_rma_rc_t start_impl(tdm_win_t *w, const int *ranks, int n, int assert) {
    tdm_rma_rc_t rc = leave_idle_fence(w, "MPI_Win_start");
    if (rc != TDM_RMA_OK)
        return rc;
    for (int i = 0; i < n && tdm_rma_passive(w); i++)
        if (locked_by_me(w, ranks[i]))
            return tdm_rma_fail(
                TDM_RMA_ECONFLICT, "rank %d of the group is locked by this process (%s)", ranks[i],
                w->epoch == TDM_EPOCH_LOCK_ALL ? "MPI_Win_lock_all" : "MPI_Win_lock");
    if (w->epoch != TDM_EPOCH_NONE)
        return tdm_rma_fail(TDM_RMA_ESYNC, "an access epoch is open already");
    int *copy = n ? malloc((size_t)n * sizeof(int)) : NULL;
    if (n && !copy)
        return tdm_rma_fail(TDM_RMA_ENOMEM, "out of memory for the start group");
    if (n)
        memcpy(copy, ranks, (size_t)n * sizeof(int));
    free(w->start_ranks);
    w->start_ranks = copy;
    w->start_n = n;
    w->start_nocheck = (assert &TDM_RMA_MODE_NOCHECK) != 0;
    w->epoch = TDM_EPOCH_START;
    epoch_open(w);
    if (w->eager) {
        ready_t r = {w, -1};
        tdm_rma_wait_for(w, ready_cb, &r);
    }
    return TDM_RMA_OK;
}

static tdm_rma_rc_t complete_impl(tdm_win_t *w) {
    if (w->epoch != TDM_EPOCH_START)
        return tdm_rma_fail(TDM_RMA_ESYNC, "no MPI_Win_start epoch is open");
    tdm_rma_rc_t rc = tdm_rma_drain(w, -1);
    if (rc == TDM_RMA_OK && w->am)
        rc = tdm_rma_am_flush(w, -1);
    /* the posts of this epoch are counted even when nothing was accessed */
    ready_t r = {w, -1};
    tdm_rma_wait_for(w, ready_cb, &r);
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < w->start_n; i++) {
        tdm_rma_slot_t *s = tdm_rma_slot(w, w->start_ranks[i]);
        atomic_fetch_add_explicit(&s->completes, 1, memory_order_seq_cst);
        if (w->start_ranks[i] != w->rank)
            tdm_rma_poke(s->world);
    }
    w->epoch = TDM_EPOCH_NONE;
    w->start_n = 0;
    return rc;
}

static bool exposure_done(void *arg) {
    tdm_win_t *w = arg;
    uint32_t got = atomic_load_explicit(&tdm_rma_slot(w, w->rank)->completes, memory_order_acquire);
    return got - w->completes_seen >= (uint32_t)w->post_n;
}

static tdm_rma_rc_t wait_impl(tdm_win_t *w, bool test, bool *flag_p) {
    if (!w->exposed)
        return tdm_rma_fail(TDM_RMA_ESYNC, "no exposure epoch is open (MPI_Win_post)");
    if (test) {
        if (!exposure_done(w)) {
            tdm_p2p_progress();
            if (!exposure_done(w)) {
                *flag_p = false;
                return TDM_RMA_OK;
            }
        }
        *flag_p = true;
    } else {
        tdm_rma_wait_for(w, exposure_done, w);
    }
    w->completes_seen += (uint32_t)w->post_n;
    w->exposed = false;
    atomic_thread_fence(memory_order_seq_cst);
    return TDM_RMA_OK;
}

static void sync_impl(tdm_win_t *w) {
    /* a program that polls its window with MPI_Win_sync waits for others' operations,
     * which may wait for this process's queued ones */
    if (w->nqueued)
        tdm_rma_drain_ready(w);
    tdm_rma_batch_issue(w, -1);
    atomic_thread_fence(memory_order_seq_cst);
}

/* ---- the entry points: each holds the window's lock (rma_impl.h) ---- */

#define LOCKED(_name, _params, _args)                                                              \
    tdm_rma_rc_t tdm_rma_##_name _params {                                                         \
        tdm_lock_acquire(&w->lock);                                                                \
        tdm_rma_rc_t rc_ = _name##_impl _args;                                                     \
        tdm_lock_release(&w->lock);                                                                \
        return rc_;                                                                                \
    }
LOCKED(fence, (tdm_win_t * w, int assert), (w, assert))
LOCKED(lock, (tdm_win_t * w, int type, int rank, int assert), (w, type, rank, assert))
LOCKED(unlock, (tdm_win_t * w, int rank), (w, rank))
LOCKED(lock_all, (tdm_win_t * w, int assert), (w, assert))
LOCKED(unlock_all, (tdm_win_t * w), (w))
LOCKED(flush, (tdm_win_t * w, int rank, bool local), (w, rank, local))
LOCKED(post_group, (tdm_win_t * w, const int *ranks, int n, int assert), (w, ranks, n, assert))
LOCKED(start, (tdm_win_t * w, const int *ranks, int n, int assert), (w, ranks, n, assert))
LOCKED(complete, (tdm_win_t * w), (w))
LOCKED(wait, (tdm_win_t * w, bool test, bool *flag_p), (w, test, flag_p))
#undef LOCKED

void tdm_rma_sync(tdm_win_t *w) {
    tdm_lock_acquire(&w->lock);
    sync_impl(w);
    tdm_lock_release(&w->lock);
}
