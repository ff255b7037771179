/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handle tables for the objects comm/ owns (communicators, groups, info):
 * handle = kind bits | index, index into a table of chunks that never move,
 * so an object pointer found by lookup stays valid while the table grows. A
 * slot is reused (last freed, first reused) only once the owner frees it,
 * which owners do when the object is destroyed, not when the user's handle
 * dies, so a live object never shares its handle with another.
 * Not thread safe: the library provides at most MPI_THREAD_SERIALIZED.
 */
#ifndef TDM_COMM_HANDLE_H
#define TDM_COMM_HANDLE_H

#include <stddef.h>

#define TDM_HTAB_CHUNK 1024

typedef struct tdm_htab {
    void ***dir; /* chunks of TDM_HTAB_CHUNK object pointers */
    int ndir;
    int count;  /* slots handed out so far */
    int *freel; /* freed slot indices (stack) */
    int nfree, capfree;
    int max; /* indices must stay below this (handle encoding) */
} tdm_htab_t;

/* Store obj in a free slot; its index, or -1 when out of memory or indices. */
int tdm_htab_alloc(tdm_htab_t *t, void *obj);
/* Give the slot back (the object it held is gone). */
void tdm_htab_free(tdm_htab_t *t, int index);
static inline void *tdm_htab_get(const tdm_htab_t *t, unsigned index) {
    if (index >= (unsigned)t->count)
        return NULL;
    return t->dir[index / TDM_HTAB_CHUNK][index % TDM_HTAB_CHUNK];
}
/* Live objects. */
static inline int tdm_htab_live(const tdm_htab_t *t) {
    return t->count - t->nfree;
}
void tdm_htab_fini(tdm_htab_t *t);

#endif
