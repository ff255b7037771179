/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Locks and atomic helpers for MPI_THREAD_MULTIPLE.
 *
 * `tdm_threaded` is true only while the process runs MPI_THREAD_MULTIPLE. It is
 * written by MPI initialisation (src/mpi/init.c, session.c) before the call that
 * grants MULTIPLE returns, so before any second thread can be inside the library
 * (threads created later see it through pthread_create's ordering; a program that
 * promised SERIALIZED has no other thread inside while it is raised). It is never
 * lowered while the process lives. Every helper here costs one predictable branch
 * on it and nothing else when it is false: a single-threaded program pays no
 * atomic instruction and no call.
 *
 * Rules for every layer:
 * - Lock order follows the layers: a thread may hold locks of an upper layer
 *   (mpi, topo, rma, coll, comm) when it calls down (p2p, dtype, net, base), never
 *   the other way. Within a layer the order is written in its header (p2p: p2p_impl.h).
 * - A lower layer never calls an upper layer's hook with one of its own locks held:
 *   p2p runs completion hooks (collective schedules, bsend, rma) after it has
 *   dropped its locks, so a hook may post new operations or take its own layer's
 *   locks. An upper layer therefore must not hold a lock across a call into p2p
 *   that a completion hook of its own would take (the hook may run inside that call).
 * - Waiting (the doorbell, tdm_p2p_wait_until) happens with no lock held.
 * - Signal handlers (the hang dump) take no lock: they read structures that stay
 *   readable at every instruction, by design (src/p2p/README.md).
 * - A lock taken while `tdm_threaded` is false is not held; the flag only rises
 *   while no other thread is inside the library, so no critical section spans it.
 */
#ifndef TDM_BASE_LOCK_H
#define TDM_BASE_LOCK_H

#include "util.h"

#include <stdbool.h>
#include <stdint.h>

/* MPI_THREAD_MULTIPLE is in force (see above). Defined in lock.c. */
extern bool tdm_threaded;

/* A mutex that is a no-op unless the process is threaded. One word: 0 free, 1 held, 2 held
 * with a thread asleep on it (the futex mutex of Drepper's "Futexes Are Tricky"). Taking a
 * free lock is one inline compare-and-swap and releasing it one exchange: a thread alone in
 * the library pays those two instructions per critical section and no call (pthread_mutex_t
 * cost about 60 instructions per pair through the PLT, several pairs per message). A waiter
 * sleeps rather than spins: where ranks and threads outnumber cores a spinning waiter would
 * keep the holder off its core. */
typedef struct tdm_lock {
    uint32_t v;
} tdm_lock_t;

#define TDM_LOCK_INITIALIZER                                                                       \
    { 0 }

/* The contended paths (lock.c): sleep until the lock is taken; wake one sleeper. */
void tdm_lock_wait_(tdm_lock_t *l);
void tdm_lock_wake_(tdm_lock_t *l);

static inline void tdm_lock_init(tdm_lock_t *l) {
    l->v = 0;
}
static inline void tdm_lock_fini(tdm_lock_t *l) {
    (void)l;
}
static inline void tdm_lock_acquire(tdm_lock_t *l) {
    if (TDM_UNLIKELY(tdm_threaded)) {
        uint32_t free_ = 0;
        if (TDM_UNLIKELY(!__atomic_compare_exchange_n(&l->v, &free_, 1, false, __ATOMIC_ACQUIRE,
                                                      __ATOMIC_RELAXED)))
            tdm_lock_wait_(l);
    }
}
/* True when the lock is now held (always, unthreaded); false when another thread holds it. */
static inline bool tdm_lock_try(tdm_lock_t *l) {
    if (TDM_UNLIKELY(tdm_threaded)) {
        uint32_t free_ = 0;
        return __atomic_compare_exchange_n(&l->v, &free_, 1, false, __ATOMIC_ACQUIRE,
                                           __ATOMIC_RELAXED);
    }
    return true;
}
static inline void tdm_lock_release(tdm_lock_t *l) {
    if (TDM_UNLIKELY(tdm_threaded) &&
        TDM_UNLIKELY(__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2))
        tdm_lock_wake_(l);
}

/*
 * Counters (statistics, pvars) written by several threads: an atomic relaxed add when
 * threaded, a plain add otherwise; read with TDM_COUNTER_READ (a relaxed load, never
 * torn). They order nothing: use them for counts only. Integer types of any width.
 */
#define TDM_COUNTER_ADD(_p, _v)                                                                    \
    do {                                                                                           \
        if (TDM_UNLIKELY(tdm_threaded))                                                            \
            __atomic_fetch_add((_p), (_v), __ATOMIC_RELAXED);                                      \
        else                                                                                       \
            *(_p) += (_v);                                                                         \
    } while (0)
#define TDM_COUNTER_SUB(_p, _v)                                                                    \
    do {                                                                                           \
        if (TDM_UNLIKELY(tdm_threaded))                                                            \
            __atomic_fetch_sub((_p), (_v), __ATOMIC_RELAXED);                                      \
        else                                                                                       \
            *(_p) -= (_v);                                                                         \
    } while (0)
#define TDM_COUNTER_READ(_p) __atomic_load_n((_p), __ATOMIC_RELAXED)
/* A counter bumped on every message or collective call: threaded, a relaxed load and
 * store instead of an atomic add (free of data races, no locked instruction; an increment
 * two threads make at the same instant may count once). For statistics only. */
#define TDM_COUNTER_ADD_LOOSE(_p, _v)                                                              \
    do {                                                                                           \
        if (TDM_UNLIKELY(tdm_threaded))                                                            \
            __atomic_store_n((_p), __atomic_load_n((_p), __ATOMIC_RELAXED) + (_v),                 \
                             __ATOMIC_RELAXED);                                                    \
        else                                                                                       \
            *(_p) += (_v);                                                                         \
    } while (0)

/*
 * Flags and words handed between threads (a request's `done`, a published pointer):
 * the writer stores with release after everything the reader needs, the reader loads
 * with acquire before using it. On x86-64 and in the unthreaded case these are plain
 * moves; they only keep the compiler (and weaker CPUs) from reordering.
 */
#define TDM_STORE_RELEASE(_p, _v) __atomic_store_n((_p), (_v), __ATOMIC_RELEASE)
#define TDM_LOAD_ACQUIRE(_p) __atomic_load_n((_p), __ATOMIC_ACQUIRE)
#define TDM_STORE_RELAXED(_p, _v) __atomic_store_n((_p), (_v), __ATOMIC_RELAXED)
#define TDM_LOAD_RELAXED(_p) __atomic_load_n((_p), __ATOMIC_RELAXED)
/* Set bits in a word and return the old value (a request's done/freed state): atomic when
 * threaded, plain otherwise. */
#define TDM_FETCH_OR(_p, _v)                                                                       \
    (TDM_UNLIKELY(tdm_threaded) ? __atomic_fetch_or((_p), (_v), __ATOMIC_ACQ_REL)                  \
                                : tdm_fetch_or_plain_((_p), (_v)))
static inline unsigned tdm_fetch_or_plain_(unsigned *p, unsigned v) {
    unsigned old = *p;
    *p = old | v;
    return old;
}

#endif
