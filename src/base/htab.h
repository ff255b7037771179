/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handle tables (communicators, groups, info objects, sessions, user datatypes,
 * error handlers): handle = kind bits | index, the index into a table of chunks
 * that never move, so an object pointer found by lookup stays valid while the
 * table grows. A slot is reused (last freed, first reused) only once its owner
 * frees it, which owners do when the object is destroyed, not when the user's
 * handle dies, so a live object never shares its handle with another; a table
 * made with `noreuse` never reuses a slot, so a stale handle stays invalid.
 *
 * Threads: alloc, free and clear take the table's own lock; lookups take none.
 * A lookup loads `count` (acquire), then `dir`, then the slot: a writer publishes
 * a grown directory before the count that needs it, and a slot's pointer with a
 * release store after the object is ready, so a reader never follows a pointer
 * into freed memory. A directory that was replaced is kept until tdm_htab_fini,
 * because a reader may still be walking it (the old ones add up to less than the
 * current one). Walks over every slot (tdm_htab_get from 0 to count) see each
 * object that was in the table before the walk started.
 */
#ifndef TDM_BASE_HTAB_H
#define TDM_BASE_HTAB_H

#include "lock.h"

#include <stddef.h>

#define TDM_HTAB_CHUNK 1024
#define TDM_HTAB_RETIRED 32 /* directories replaced: it doubles, from 4 chunks */

typedef struct tdm_htab {
    void ***dir; /* chunks of TDM_HTAB_CHUNK object pointers (published with release) */
    int ndir;
    int count;  /* slots handed out so far (published with release) */
    int *freel; /* freed slot indices (stack) */
    int nfree, capfree;
    int max;      /* indices must stay below this (handle encoding) */
    bool noreuse; /* never hand a freed slot out again */
    void ***retired[TDM_HTAB_RETIRED];
    int nretired;
    tdm_lock_t lock; /* alloc, free, clear, fini */
} tdm_htab_t;

/* A table whose indices stay below _max (as a static initialiser). */
#define TDM_HTAB_INIT(_max, _noreuse)                                                              \
    { .max = (_max), .noreuse = (_noreuse), .lock = TDM_LOCK_INITIALIZER }

/* Store obj in a free slot; its index, or -1 when out of memory or indices. */
int tdm_htab_alloc(tdm_htab_t *t, void *obj);
/* Give the slot back (the object it held is gone). */
void tdm_htab_free(tdm_htab_t *t, int index);
static inline void *tdm_htab_get(const tdm_htab_t *t, unsigned index) {
    if (index >= (unsigned)TDM_LOAD_ACQUIRE(&t->count))
        return NULL;
    void ***dir = TDM_LOAD_ACQUIRE(&t->dir);
    return TDM_LOAD_ACQUIRE(&dir[index / TDM_HTAB_CHUNK][index % TDM_HTAB_CHUNK]);
}
/* Slots handed out so far: walks go from 0 to this. */
static inline int tdm_htab_count(const tdm_htab_t *t) {
    return TDM_LOAD_ACQUIRE(&t->count);
}
/* Live objects. */
int tdm_htab_live(tdm_htab_t *t);
void tdm_htab_fini(tdm_htab_t *t);

#endif
