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
 *
 * The bias. Most programs that ask for MULTIPLE call MPI from one thread, and an atomic
 * read-modify-write costs about 20 cycles whether or not another thread is there. So the
 * thread that raised `tdm_threaded` (the owner) takes every lock with plain loads and
 * stores while no other thread has taken one: it counts its open sections in a word only
 * it writes and checks, with no fence, that the bias still holds. The first other thread
 * that takes a lock revokes the bias for good (tdm_lock_revoke_): it marks it revoking,
 * makes every running thread of the process execute a full fence (membarrier(2),
 * PRIVATE_EXPEDITED) so that the owner either has published its count or will see the
 * mark, then waits for the owner to close its open sections. From then on every thread
 * locks as above. The owner never waits inside a section (waiting holds no lock) but for
 * the MPI_T lock, which other threads take only after tdm_lock_bias_revoke, so the revoker
 * waits a bounded time. Without membarrier (or TANDEM_LOCK_BIAS=0) there is no bias.
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

/* Raise `tdm_threaded` (MPI initialisation, the progress thread's start), with the calling
 * thread as the owner of the bias if membarrier is available. No other thread may be inside
 * the library. */
void tdm_lock_threaded_on(void);

/* The bias (above): its state, the owner (its thread pointer: unique among live threads; a
 * thread that reuses an exited owner's is the owner then, and the old one holds nothing),
 * and the owner's open biased sections (written by the owner only). */
enum { TDM_BIAS_OFF = 0, TDM_BIAS_ON = 1, TDM_BIAS_REVOKING = 2 };
extern unsigned tdm_lock_bias;
extern uintptr_t tdm_lock_owner;
extern unsigned tdm_lock_owner_depth;
/* A thread other than the owner found the bias not yet off: revoke it, or wait until the
 * thread revoking it is done. */
__attribute__((cold)) void tdm_lock_revoke_(void);

static inline uintptr_t tdm_lock_self_(void) {
    return (uintptr_t)__builtin_thread_pointer();
}

/* A thread about to take a lock of its own that the owner may wait for inside a section
 * (the MPI_T lock: events are delivered under engine locks) calls this first: not the
 * owner, it revokes the bias now, so it never waits for the owner while holding that lock. */
static inline void tdm_lock_bias_revoke(void) {
    if (TDM_UNLIKELY(tdm_threaded) && tdm_lock_self_() != tdm_lock_owner &&
        TDM_UNLIKELY(__atomic_load_n(&tdm_lock_bias, __ATOMIC_ACQUIRE) != TDM_BIAS_OFF))
        tdm_lock_revoke_();
}

/* Threaded: open a section. True when the owner holds the bias (nothing to take); false when
 * the caller must synchronise for real (and, not the owner, the bias is off by now). */
static inline bool tdm_bias_enter_(void) {
    if (TDM_UNLIKELY(tdm_lock_self_() != tdm_lock_owner)) {
        if (TDM_UNLIKELY(__atomic_load_n(&tdm_lock_bias, __ATOMIC_ACQUIRE) != TDM_BIAS_OFF))
            tdm_lock_revoke_();
        return false;
    }
    unsigned d = __atomic_load_n(&tdm_lock_owner_depth, __ATOMIC_RELAXED);
    if (d) { /* inside a biased section: so is this one */
        __atomic_store_n(&tdm_lock_owner_depth, d + 1, __ATOMIC_RELAXED);
        return true;
    }
    __atomic_store_n(&tdm_lock_owner_depth, 1, __ATOMIC_RELAXED);
    /* the store before the load: the compiler keeps the order, a revoker's membarrier
     * makes the CPU keep it (lock.c) */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (TDM_LIKELY(__atomic_load_n(&tdm_lock_bias, __ATOMIC_ACQUIRE) == TDM_BIAS_ON))
        return true;
    __atomic_store_n(&tdm_lock_owner_depth, 0, __ATOMIC_RELEASE);
    return false;
}
/* Threaded: close a section; true when it was a biased one. */
static inline bool tdm_bias_exit_(void) {
    if (TDM_LIKELY(tdm_lock_self_() == tdm_lock_owner)) {
        unsigned d = __atomic_load_n(&tdm_lock_owner_depth, __ATOMIC_RELAXED);
        if (TDM_LIKELY(d)) { /* release: a revoker that reads 0 sees the section's writes */
            __atomic_store_n(&tdm_lock_owner_depth, d - 1, __ATOMIC_RELEASE);
            return true;
        }
    }
    return false;
}

static inline void tdm_lock_init(tdm_lock_t *l) {
    l->v = 0;
}
static inline void tdm_lock_fini(tdm_lock_t *l) {
    (void)l;
}
/* Under the bias the owner still marks the lock word held (a plain store: no other thread
 * reads it until the bias is revoked), so a try on a lock it holds fails as it would
 * unbiased: code that runs hooks with a lock held relies on that (comm/ctxid.c). */
static inline void tdm_lock_acquire(tdm_lock_t *l) {
    if (TDM_UNLIKELY(tdm_threaded)) {
        if (tdm_bias_enter_()) {
            __atomic_store_n(&l->v, 1, __ATOMIC_RELAXED);
            return;
        }
        uint32_t free_ = 0;
        if (TDM_UNLIKELY(!__atomic_compare_exchange_n(&l->v, &free_, 1, false, __ATOMIC_ACQUIRE,
                                                      __ATOMIC_RELAXED)))
            tdm_lock_wait_(l);
    }
}
/* True when the lock is now held (always, unthreaded); false when a thread holds it. */
static inline bool tdm_lock_try(tdm_lock_t *l) {
    if (TDM_UNLIKELY(tdm_threaded)) {
        if (tdm_bias_enter_()) {
            if (__atomic_load_n(&l->v, __ATOMIC_RELAXED)) {
                tdm_bias_exit_();
                return false;
            }
            __atomic_store_n(&l->v, 1, __ATOMIC_RELAXED);
            return true;
        }
        uint32_t free_ = 0;
        return __atomic_compare_exchange_n(&l->v, &free_, 1, false, __ATOMIC_ACQUIRE,
                                           __ATOMIC_RELAXED);
    }
    return true;
}
static inline void tdm_lock_release(tdm_lock_t *l) {
    if (TDM_UNLIKELY(tdm_threaded)) {
        if (TDM_LIKELY(tdm_lock_self_() == tdm_lock_owner)) {
            unsigned d = __atomic_load_n(&tdm_lock_owner_depth, __ATOMIC_RELAXED);
            if (TDM_LIKELY(d)) { /* a biased hold: the word freed, then the section closed */
                __atomic_store_n(&l->v, 0, __ATOMIC_RELAXED);
                __atomic_store_n(&tdm_lock_owner_depth, d - 1, __ATOMIC_RELEASE);
                return;
            }
        }
        if (TDM_UNLIKELY(__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2))
            tdm_lock_wake_(l);
    }
}

/*
 * Counters (statistics, pvars) written by several threads: threaded, an atomic relaxed add,
 * or a relaxed load and store by the owner holding the bias (exact all the same: no other
 * thread adds while it holds it); unthreaded, a plain add. Read with TDM_COUNTER_READ (a
 * relaxed load, never torn). They order nothing: use them for counts only. Integer types of
 * any width.
 */
#define TDM_COUNTER_ADD(_p, _v)                                                                    \
    do {                                                                                           \
        if (TDM_UNLIKELY(tdm_threaded)) {                                                          \
            if (tdm_bias_enter_()) {                                                               \
                __atomic_store_n((_p), __atomic_load_n((_p), __ATOMIC_RELAXED) + (_v),             \
                                 __ATOMIC_RELAXED);                                                \
                tdm_bias_exit_();                                                                  \
            } else {                                                                               \
                __atomic_fetch_add((_p), (_v), __ATOMIC_RELAXED);                                  \
            }                                                                                      \
        } else {                                                                                   \
            *(_p) += (_v);                                                                         \
        }                                                                                          \
    } while (0)
/* Two counters bumped together: one section for both under the bias. */
#define TDM_COUNTER_ADD2(_p1, _v1, _p2, _v2)                                                       \
    do {                                                                                           \
        if (TDM_UNLIKELY(tdm_threaded)) {                                                          \
            if (tdm_bias_enter_()) {                                                               \
                __atomic_store_n((_p1), __atomic_load_n((_p1), __ATOMIC_RELAXED) + (_v1),          \
                                 __ATOMIC_RELAXED);                                                \
                __atomic_store_n((_p2), __atomic_load_n((_p2), __ATOMIC_RELAXED) + (_v2),          \
                                 __ATOMIC_RELAXED);                                                \
                tdm_bias_exit_();                                                                  \
            } else {                                                                               \
                __atomic_fetch_add((_p1), (_v1), __ATOMIC_RELAXED);                                \
                __atomic_fetch_add((_p2), (_v2), __ATOMIC_RELAXED);                                \
            }                                                                                      \
        } else {                                                                                   \
            *(_p1) += (_v1);                                                                       \
            *(_p2) += (_v2);                                                                       \
        }                                                                                          \
    } while (0)
#define TDM_COUNTER_SUB(_p, _v)                                                                    \
    do {                                                                                           \
        if (TDM_UNLIKELY(tdm_threaded)) {                                                          \
            if (tdm_bias_enter_()) {                                                               \
                __atomic_store_n((_p), __atomic_load_n((_p), __ATOMIC_RELAXED) - (_v),             \
                                 __ATOMIC_RELAXED);                                                \
                tdm_bias_exit_();                                                                  \
            } else {                                                                               \
                __atomic_fetch_sub((_p), (_v), __ATOMIC_RELAXED);                                  \
            }                                                                                      \
        } else {                                                                                   \
            *(_p) -= (_v);                                                                         \
        }                                                                                          \
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
