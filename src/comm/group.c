/* SPDX-License-Identifier: BSD-3-Clause */
#include "group.h"
#include "../base/htab.h"
#include "../base/log.h"
#include "../base/ref.h"

#include <stdlib.h>
#include <string.h>

#define UNDEFINED (-32766) /* MPI_UNDEFINED in the MPICH ABI (checked in src/mpi/group.c) */

/* ---- rank maps ---- */

int tdm_rankmap_from_list(const int *world, int n, tdm_rankmap_t *m_p) {
    if (n <= 1) {
        *m_p = tdm_rankmap_affine(n, n ? world[0] : 0, 1);
        return 0;
    }
    long long stride = (long long)world[1] - world[0];
    bool affine = stride != 0 && stride >= -0x7fffffffLL && stride <= 0x7fffffffLL;
    for (int i = 2; affine && i < n; i++)
        affine = (long long)world[i] - world[i - 1] == stride;
    if (affine) {
        *m_p = tdm_rankmap_affine(n, world[0], (int)stride);
        return 0;
    }
    tdm_ranks_t *a = malloc(sizeof(*a) + (size_t)n * sizeof(int));
    if (!a)
        return -1;
    a->refs = 1;
    a->n = n;
    a->order = NULL;
    memcpy(a->r, world, (size_t)n * sizeof(int));
    *m_p = (tdm_rankmap_t){.n = n, .base = 0, .stride = 1, .arr = a};
    return 0;
}

tdm_rankmap_t tdm_rankmap_share(const tdm_rankmap_t *m) {
    if (m->arr)
        tdm_ref_inc(&m->arr->refs);
    return *m;
}

void tdm_rankmap_release(tdm_rankmap_t *m) {
    if (m->arr && tdm_ref_dec(&m->arr->refs)) {
        free(m->arr->order);
        free(m->arr);
    }
    m->arr = NULL;
    m->n = 0;
}

static int cmp_by_world(const void *a, const void *b, void *keys) {
    const int *k = keys;
    int x = k[*(const int *)a], y = k[*(const int *)b];
    return (x > y) - (x < y);
}

static int *ranks_order(tdm_ranks_t *a) {
    int *have = TDM_LOAD_ACQUIRE(&a->order);
    if (have)
        return have;
    int *o = malloc((size_t)a->n * sizeof(int));
    if (!o) {
        tdm_error(COMM, "out of memory for the reverse index of a %d-rank map", a->n);
        return NULL;
    }
    for (int i = 0; i < a->n; i++)
        o[i] = i;
    qsort_r(o, (size_t)a->n, sizeof(int), cmp_by_world, a->r);
    /* two threads may build it at once (a map shared by communicators in use
     * by both): the first to publish wins, the other drops its copy */
    int *expected = NULL;
    if (!__atomic_compare_exchange_n(&a->order, &expected, o, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(o);
        return expected;
    }
    return o;
}

int tdm_rankmap_find(const tdm_rankmap_t *m, int w) {
    if (!m->arr) {
        long long d = (long long)w - m->base;
        if (m->n == 0)
            return -1;
        if (m->n == 1)
            return d == 0 ? 0 : -1;
        if (d % m->stride != 0)
            return -1;
        long long i = d / m->stride;
        return i >= 0 && i < m->n ? (int)i : -1;
    }
    const int *o = ranks_order(m->arr);
    if (!o)
        return -1;
    int lo = 0, hi = m->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int v = m->arr->r[o[mid]];
        if (v == w)
            return o[mid];
        if (v < w)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

bool tdm_rankmap_equal(const tdm_rankmap_t *a, const tdm_rankmap_t *b) {
    if (a->n != b->n)
        return false;
    if (a->n == 0 || (a->arr && a->arr == b->arr))
        return true;
    if (!a->arr && !b->arr)
        return a->base == b->base && (a->n == 1 || a->stride == b->stride);
    for (int i = 0; i < a->n; i++) {
        if (tdm_rankmap_world(a, i) != tdm_rankmap_world(b, i))
            return false;
    }
    return true;
}

bool tdm_rankmap_same_set(const tdm_rankmap_t *a, const tdm_rankmap_t *b) {
    if (a->n != b->n)
        return false;
    /* ranks in a map are distinct, so equal sizes and a in b means equal sets */
    for (int i = 0; i < a->n; i++) {
        if (tdm_rankmap_find(b, tdm_rankmap_world(a, i)) < 0)
            return false;
    }
    return true;
}

/* ---- groups ---- */

static tdm_htab_t groups = TDM_HTAB_INIT((int)TDM_GROUP_INDEX_MASK + 1, false);
static tdm_group_t empty_obj;
static int my_world_rank;
tdm_group_t *tdm_group_empty;

int tdm_group_init(int world_rank) {
    my_world_rank = world_rank;
    empty_obj = (tdm_group_t){
        .handle = 0x48000000, .refs = 1, .rank = UNDEFINED, .session = TDM_SESSION_ANY};
    tdm_group_empty = &empty_obj;
    return 0;
}

void tdm_group_fini(void) {
    for (int i = 0; i < tdm_htab_count(&groups); i++) {
        tdm_group_t *g = tdm_htab_get(&groups, (unsigned)i);
        if (g) {
            tdm_rankmap_release(&g->map);
            free(g);
        }
    }
    tdm_htab_fini(&groups);
    tdm_group_empty = NULL;
}

tdm_group_t *tdm_group_new(tdm_rankmap_t map, int rank) {
    tdm_group_t *g = malloc(sizeof(*g));
    if (!g) {
        tdm_rankmap_release(&map);
        return NULL;
    }
    int index = tdm_htab_alloc(&groups, g);
    if (index < 0) {
        free(g);
        tdm_rankmap_release(&map);
        return NULL;
    }
    int r = rank >= 0 ? rank : tdm_rankmap_find(&map, my_world_rank);
    *g = (tdm_group_t){.handle = (int)(TDM_GROUP_USER_BASE | (unsigned)index),
                       .refs = 1,
                       .rank = r >= 0 ? r : UNDEFINED,
                       .map = map};
    return g;
}

tdm_group_t *tdm_group_get(int handle) {
    if (handle == 0x48000000)
        return tdm_group_empty;
    if (((unsigned)handle & ~TDM_GROUP_INDEX_MASK) != TDM_GROUP_USER_BASE)
        return NULL;
    return tdm_htab_get(&groups, (unsigned)handle & TDM_GROUP_INDEX_MASK);
}

void tdm_group_release(tdm_group_t *g) {
    if (g == tdm_group_empty)
        return;
    if (!tdm_ref_dec(&g->refs))
        return;
    tdm_htab_free(&groups, (int)((unsigned)g->handle & TDM_GROUP_INDEX_MASK));
    tdm_rankmap_release(&g->map);
    free(g);
}
