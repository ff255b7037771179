/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rank maps and groups.
 *
 * A rank map says which MPI_COMM_WORLD rank each of its n ranks is. Most maps
 * met in practice are affine (world = base + i * stride: MPI_COMM_WORLD and its
 * duplicates, MPI_COMM_SELF, even/odd splits, range_incl of one range) and cost
 * O(1) memory; any other order is an array of world ranks, shared by reference
 * count between the groups and communicators that use it (MPI_Comm_group does
 * not copy, MPI_Comm_create of a group does not copy). The reverse lookup
 * (world rank -> index), needed by translate_ranks, compare and set operations,
 * is O(1) for affine maps and a binary search over an index built on first use
 * for arrays.
 *
 * Groups are the MPI_Group objects: a rank map plus the caller's rank in it.
 */
#ifndef TDM_COMM_GROUP_H
#define TDM_COMM_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A shared array of world ranks. */
typedef struct tdm_ranks {
    int refs;
    int n;
    int *order; /* indices sorted by world rank, built on first reverse lookup */
    int r[];    /* r[i] = world rank of index i */
} tdm_ranks_t;

typedef struct tdm_rankmap {
    int n;
    int base, stride; /* affine when arr == NULL */
    tdm_ranks_t *arr; /* owned reference, or NULL */
} tdm_rankmap_t;

static inline int tdm_rankmap_world(const tdm_rankmap_t *m, int i) {
    return m->arr ? m->arr->r[i] : m->base + i * m->stride;
}

/* Build a map of n world ranks (copied; an affine list stores no array). 0 or -1 (no memory). */
int tdm_rankmap_from_list(const int *world, int n, tdm_rankmap_t *m_p);
static inline tdm_rankmap_t tdm_rankmap_affine(int n, int base, int stride) {
    return (tdm_rankmap_t){.n = n, .base = base, .stride = n > 1 ? stride : 1, .arr = NULL};
}
/* Share: a copy of the map holding its own reference to the array. */
tdm_rankmap_t tdm_rankmap_share(const tdm_rankmap_t *m);
void tdm_rankmap_release(tdm_rankmap_t *m);
/* Index of world rank w in the map, or -1. May build the reverse index (-1 also
 * when that allocation fails, which is logged). */
int tdm_rankmap_find(const tdm_rankmap_t *m, int w);
/* Same ranks in the same order? */
bool tdm_rankmap_equal(const tdm_rankmap_t *a, const tdm_rankmap_t *b);
/* Same set of ranks (any order)? */
bool tdm_rankmap_same_set(const tdm_rankmap_t *a, const tdm_rankmap_t *b);

/* ---- groups ---- */

typedef struct tdm_group {
    int handle;
    int refs;         /* user handles (each Comm_group etc. gives one) */
    int rank;         /* the caller's rank in the group, or -32766 (MPI_UNDEFINED) */
    uint32_t session; /* origin (see comm.h): 0 World Model, a session's serial, or
                         TDM_SESSION_ANY for MPI_GROUP_EMPTY, which mixes with any */
    tdm_rankmap_t map;
} tdm_group_t;

#define TDM_SESSION_ANY 0xffffffffu
/* May objects of origins a and b meet in one call? */
static inline bool tdm_session_compatible(uint32_t a, uint32_t b) {
    return a == b || a == TDM_SESSION_ANY || b == TDM_SESSION_ANY;
}

#define TDM_GROUP_USER_BASE 0x88000000u
#define TDM_GROUP_INDEX_MASK 0x03ffffffu

/* New group owning `map` (taken over, not copied) in which the caller has
 * `rank` (-1: look it up), of origin 0 (the caller sets `session` otherwise);
 * NULL if out of memory (the map is released then). */
tdm_group_t *tdm_group_new(tdm_rankmap_t map, int rank);
/* The group a handle names (MPI_GROUP_EMPTY included), or NULL. */
tdm_group_t *tdm_group_get(int handle);
/* Drop a user reference (MPI_Group_free). */
void tdm_group_release(tdm_group_t *g);
extern tdm_group_t *tdm_group_empty;

int tdm_group_init(int world_rank);
void tdm_group_fini(void);

#endif
