/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reference counts of objects several threads may hold (communicators, groups,
 * rank arrays, datatypes, error handlers, ops): atomic when the process is
 * threaded, a plain increment otherwise (one predictable branch, lock.h), and a
 * relaxed load and store by the owner of the lock bias (lock.h: no other thread
 * touches a count until the bias is revoked). The
 * decrement that reaches zero is acquire-release, so the thread that destroys the
 * object sees every write the other holders made before they let go.
 */
#ifndef TDM_BASE_REF_H
#define TDM_BASE_REF_H

#include "lock.h"

static inline void tdm_ref_inc(int *r) {
    if (TDM_UNLIKELY(tdm_threaded)) {
        if (tdm_bias_enter_()) {
            __atomic_store_n(r, __atomic_load_n(r, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
            tdm_bias_exit_();
        } else {
            __atomic_fetch_add(r, 1, __ATOMIC_RELAXED);
        }
    } else {
        ++*r;
    }
}

/* Drop one; true when it was the last. */
static inline bool tdm_ref_dec(int *r) {
    if (TDM_UNLIKELY(tdm_threaded)) {
        if (tdm_bias_enter_()) {
            int v = __atomic_load_n(r, __ATOMIC_RELAXED) - 1;
            __atomic_store_n(r, v, __ATOMIC_RELAXED);
            tdm_bias_exit_();
            return v == 0;
        }
        return __atomic_sub_fetch(r, 1, __ATOMIC_ACQ_REL) == 0;
    }
    return --*r == 0;
}

/* A count read without ordering (a decision no other thread can change: the
 * caller holds a reference, or the count is only read for a report). */
static inline int tdm_ref_read(const int *r) {
    return __atomic_load_n(r, __ATOMIC_RELAXED);
}

#endif
