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

#include <pthread.h>
#include <stdbool.h>

/* MPI_THREAD_MULTIPLE is in force (see above). Defined in lock.c. */
extern bool tdm_threaded;

/* A mutex that is a no-op unless the process is threaded. Sleeping, not spinning:
 * on a machine where ranks and threads outnumber cores a spinning waiter would keep
 * the holder off its core. */
typedef struct tdm_lock {
    pthread_mutex_t m;
} tdm_lock_t;

#define TDM_LOCK_INITIALIZER                                                                       \
    { PTHREAD_MUTEX_INITIALIZER }

static inline void tdm_lock_init(tdm_lock_t *l) {
    pthread_mutex_init(&l->m, NULL);
}
static inline void tdm_lock_fini(tdm_lock_t *l) {
    pthread_mutex_destroy(&l->m);
}
static inline void tdm_lock_acquire(tdm_lock_t *l) {
    if (TDM_UNLIKELY(tdm_threaded))
        pthread_mutex_lock(&l->m);
}
/* True when the lock is now held (always, unthreaded); false when another thread holds it. */
static inline bool tdm_lock_try(tdm_lock_t *l) {
    if (TDM_UNLIKELY(tdm_threaded))
        return pthread_mutex_trylock(&l->m) == 0;
    return true;
}
static inline void tdm_lock_release(tdm_lock_t *l) {
    if (TDM_UNLIKELY(tdm_threaded))
        pthread_mutex_unlock(&l->m);
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
