/* SPDX-License-Identifier: BSD-3-Clause */
#include "handle.h"

#include <stdlib.h>
#include <string.h>

int tdm_htab_alloc(tdm_htab_t *t, void *obj) {
    int index;
    if (t->nfree > 0) {
        index = t->freel[--t->nfree];
    } else {
        index = t->count;
        if (index >= t->max)
            return -1;
        if (index / TDM_HTAB_CHUNK >= t->ndir) {
            int nd = t->ndir ? 2 * t->ndir : 4;
            void ***d = realloc(t->dir, (size_t)nd * sizeof(*d));
            if (!d)
                return -1;
            memset(d + t->ndir, 0, (size_t)(nd - t->ndir) * sizeof(*d));
            t->dir = d;
            t->ndir = nd;
        }
        if (!t->dir[index / TDM_HTAB_CHUNK]) {
            t->dir[index / TDM_HTAB_CHUNK] = calloc(TDM_HTAB_CHUNK, sizeof(void *));
            if (!t->dir[index / TDM_HTAB_CHUNK])
                return -1;
        }
        /* make room in the free stack now, so that freeing never fails */
        if (t->count + 1 > t->capfree) {
            int nc = t->capfree ? 2 * t->capfree : 64;
            int *f = realloc(t->freel, (size_t)nc * sizeof(int));
            if (!f)
                return -1;
            t->freel = f;
            t->capfree = nc;
        }
        t->count++;
    }
    t->dir[index / TDM_HTAB_CHUNK][index % TDM_HTAB_CHUNK] = obj;
    return index;
}

void tdm_htab_free(tdm_htab_t *t, int index) {
    t->dir[index / TDM_HTAB_CHUNK][index % TDM_HTAB_CHUNK] = NULL;
    t->freel[t->nfree++] = index;
}

void tdm_htab_fini(tdm_htab_t *t) {
    for (int i = 0; i < t->ndir; i++)
        free(t->dir[i]);
    free(t->dir);
    free(t->freel);
    int max = t->max;
    memset(t, 0, sizeof(*t));
    t->max = max;
}
