/* SPDX-License-Identifier: BSD-3-Clause */
#include "htab.h"

#include <stdlib.h>
#include <string.h>

/* Room for chunk `ci` in the directory: a new one is published, the old one kept
 * (see htab.h). Lock held. */
static int dir_grow(tdm_htab_t *t, int ci) {
    if (ci < t->ndir)
        return 0;
    if (t->nretired == TDM_HTAB_RETIRED)
        return -1;
    int nd = t->ndir ? 2 * t->ndir : 4;
    void ***d = calloc((size_t)nd, sizeof(*d));
    if (!d)
        return -1;
    if (t->ndir)
        memcpy(d, t->dir, (size_t)t->ndir * sizeof(*d));
    if (t->dir)
        t->retired[t->nretired++] = t->dir;
    TDM_STORE_RELEASE(&t->dir, d);
    t->ndir = nd;
    return 0;
}

int tdm_htab_alloc(tdm_htab_t *t, void *obj) {
    int index = -1;
    tdm_lock_acquire(&t->lock);
    if (t->nfree > 0) {
        index = t->freel[--t->nfree];
    } else if (t->count < t->max) {
        int ci = t->count / TDM_HTAB_CHUNK;
        if (dir_grow(t, ci))
            goto out;
        if (!t->dir[ci]) {
            void **chunk = calloc(TDM_HTAB_CHUNK, sizeof(void *));
            if (!chunk)
                goto out;
            TDM_STORE_RELEASE(&t->dir[ci], chunk);
        }
        /* make room in the free stack now, so that freeing never fails */
        if (!t->noreuse && t->count + 1 > t->capfree) {
            int nc = t->capfree ? 2 * t->capfree : 64;
            int *f = realloc(t->freel, (size_t)nc * sizeof(int));
            if (!f)
                goto out;
            t->freel = f;
            t->capfree = nc;
        }
        index = t->count;
        /* the slot before the count: a reader that sees the index sees the object */
        TDM_STORE_RELEASE(&t->dir[ci][index % TDM_HTAB_CHUNK], obj);
        TDM_STORE_RELEASE(&t->count, index + 1);
        goto out;
    }
    if (index >= 0)
        TDM_STORE_RELEASE(&t->dir[index / TDM_HTAB_CHUNK][index % TDM_HTAB_CHUNK], obj);
out:
    tdm_lock_release(&t->lock);
    return index;
}

void tdm_htab_free(tdm_htab_t *t, int index) {
    tdm_lock_acquire(&t->lock);
    TDM_STORE_RELEASE(&t->dir[index / TDM_HTAB_CHUNK][index % TDM_HTAB_CHUNK], NULL);
    if (!t->noreuse)
        t->freel[t->nfree++] = index;
    tdm_lock_release(&t->lock);
}

int tdm_htab_live(tdm_htab_t *t) {
    tdm_lock_acquire(&t->lock);
    int live = t->count - t->nfree;
    if (t->noreuse) {
        live = 0;
        for (int i = 0; i < t->count; i++)
            live += tdm_htab_get(t, (unsigned)i) != NULL;
    }
    tdm_lock_release(&t->lock);
    return live;
}

void tdm_htab_fini(tdm_htab_t *t) {
    tdm_lock_acquire(&t->lock);
    for (int i = 0; i < t->ndir; i++)
        free(t->dir[i]);
    free(t->dir);
    for (int i = 0; i < t->nretired; i++)
        free(t->retired[i]);
    free(t->freel);
    t->dir = NULL;
    t->freel = NULL;
    t->ndir = t->count = t->nfree = t->capfree = t->nretired = 0;
    tdm_lock_release(&t->lock);
}
