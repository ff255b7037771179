/* SPDX-License-Identifier: BSD-3-Clause */
/* Group bindings: argument checks, then rank-map arithmetic in src/comm/group.c. */
#include "bind.h"
#include "../comm/group.h"

#include <stdlib.h>
#include <string.h>

/* A new group handle for world ranks w[0..n-1] (MPI_GROUP_EMPTY when n == 0), derived
 * from `session` (comm.h). */
static int group_from_list(const char *fn, const int *w, int n, uint32_t session, MPI_Group *out) {
    if (n == 0) {
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    tdm_rankmap_t m;
    if (tdm_rankmap_from_list(w, n, &m))
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory for a group of %d ranks", n);
    tdm_group_t *g = tdm_group_new(m, -1);
    if (!g)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory for a group of %d ranks", n);
    g->session = session;
    *out = g->handle;
    return MPI_SUCCESS;
}

/* Groups of two sessions, or of a session and the World Model, do not mix (MPI-4.1
 * §11.3); MPI_GROUP_EMPTY goes with any. */
#define CHECK_SAME_ORIGIN(_fn, _g1, _g2)                                                           \
    do {                                                                                           \
        if (TDM_UNLIKELY(!tdm_session_compatible((_g1)->session, (_g2)->session)))                 \
            return tdm_mpi_err(NULL, MPI_ERR_GROUP, _fn,                                           \
                               "group1 and group2 were derived from different sessions (or one "   \
                               "from the World Model)");                                           \
    } while (0)

static int *alloc_ranks(int n) {
    return malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
}

/* A group handle, its errors on the World Model's handler. */
#define GET_GROUP(_fn, _handle, _var) TDM_GET_GROUP(_fn, NULL, _handle, _var)

TDM_MPI_PROPERTY(MPI_Group_size, MPI_Group, tdm_group_t, g, GET_GROUP, NULL, int, size, g->map.n)
TDM_MPI_PROPERTY(MPI_Group_rank, MPI_Group, tdm_group_t, g, GET_GROUP, NULL, int, rank, g->rank)

int PMPI_Group_free(MPI_Group *group) {
    tdm_group_t *g;
    TDM_CHECK_PTR("MPI_Group_free", NULL, group, "group");
    TDM_GET_GROUP("MPI_Group_free", NULL, *group, g);
    /* freeing MPI_GROUP_EMPTY is accepted (as MPICH does): it is a no-op */
    tdm_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Group_free)

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]) {
    static const char fn[] = "MPI_Group_translate_ranks";
    tdm_group_t *g1, *g2;
    TDM_GET_GROUP(fn, NULL, group1, g1);
    TDM_GET_GROUP(fn, NULL, group2, g2);
    CHECK_SAME_ORIGIN(fn, g1, g2);
    if (n < 0)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid n=%d", n);
    if (n > 0) {
        TDM_CHECK_PTR(fn, NULL, ranks1, "ranks1");
        TDM_CHECK_PTR(fn, NULL, ranks2, "ranks2");
    }
    for (int i = 0; i < n; i++) {
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->map.n))
            return tdm_mpi_err(NULL, MPI_ERR_RANK, fn,
                               "ranks1[%d]=%d is not a rank of group1 (size %d)", i, ranks1[i],
                               g1->map.n);
    }
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int r = tdm_rankmap_find(&g2->map, tdm_rankmap_world(&g1->map, ranks1[i]));
        ranks2[i] = r >= 0 ? r : MPI_UNDEFINED;
    }
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Group_translate_ranks)

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result) {
    tdm_group_t *g1, *g2;
    TDM_GET_GROUP("MPI_Group_compare", NULL, group1, g1);
    TDM_GET_GROUP("MPI_Group_compare", NULL, group2, g2);
    CHECK_SAME_ORIGIN("MPI_Group_compare", g1, g2);
    TDM_CHECK_PTR("MPI_Group_compare", NULL, result, "result");
    if (tdm_rankmap_equal(&g1->map, &g2->map))
        *result = MPI_IDENT;
    else if (tdm_rankmap_same_set(&g1->map, &g2->map))
        *result = MPI_SIMILAR;
    else
        *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Group_compare)

typedef enum { OP_UNION, OP_INTERSECTION, OP_DIFFERENCE } setop_t;

static int setop(const char *fn, setop_t op, MPI_Group group1, MPI_Group group2,
                 MPI_Group *newgroup) {
    tdm_group_t *g1, *g2;
    TDM_GET_GROUP(fn, NULL, group1, g1);
    TDM_GET_GROUP(fn, NULL, group2, g2);
    CHECK_SAME_ORIGIN(fn, g1, g2);
    TDM_CHECK_PTR(fn, NULL, newgroup, "newgroup");
    int n1 = g1->map.n, n2 = g2->map.n;
    int *w = alloc_ranks(n1 + n2);
    if (!w)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory for %d ranks", n1 + n2);
    int n = 0;
    /* the result is ordered by group1, then (union) by group2 */
    for (int i = 0; i < n1; i++) {
        int x = tdm_rankmap_world(&g1->map, i);
        bool in2 = tdm_rankmap_find(&g2->map, x) >= 0;
        if (op == OP_UNION || (op == OP_INTERSECTION) == in2)
            w[n++] = x;
    }
    if (op == OP_UNION) {
        for (int i = 0; i < n2; i++) {
            int x = tdm_rankmap_world(&g2->map, i);
            if (tdm_rankmap_find(&g1->map, x) < 0)
                w[n++] = x;
        }
    }
    int err = group_from_list(fn, w, n, g1->session != TDM_SESSION_ANY ? g1->session : g2->session,
                              newgroup);
    free(w);
    return err;
}

/* MPI_<_name>: the group of set operation _op on group1 and group2. */
#define GROUP_SETOP(_name, _op)                                                                    \
    int P##_name(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {                        \
        return setop(#_name, _op, group1, group2, newgroup);                                       \
    }                                                                                              \
    TDM_WEAK(_name)

GROUP_SETOP(MPI_Group_union, OP_UNION)
GROUP_SETOP(MPI_Group_intersection, OP_INTERSECTION)
GROUP_SETOP(MPI_Group_difference, OP_DIFFERENCE)

/* Mark ranks[0..n-1] in `seen` (size g->map.n), checking validity and uniqueness. */
static int check_rank_list(const char *fn, const tdm_group_t *g, int n, const int ranks[],
                           unsigned char *seen) {
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->map.n)
            return tdm_mpi_err(NULL, MPI_ERR_RANK, fn,
                               "ranks[%d]=%d is not a rank of the group (size %d)", i, ranks[i],
                               g->map.n);
        if (seen[ranks[i]])
            return tdm_mpi_err(NULL, MPI_ERR_RANK, fn, "ranks[%d]=%d appears twice", i, ranks[i]);
        seen[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

/* The group of g's `ranks` (incl) or of its other ranks (excl), once the list is checked. */
static int select_ranks(const char *fn, bool incl, const tdm_group_t *g, int n, const int ranks[],
                        MPI_Group *newgroup) {
    unsigned char *seen = calloc((size_t)g->map.n + 1, 1);
    int *w = alloc_ranks(g->map.n);
    if (!seen || !w) {
        free(seen);
        free(w);
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int err = check_rank_list(fn, g, n, ranks, seen);
    if (!err) {
        int m = 0;
        if (incl) {
            for (int i = 0; i < n; i++)
                w[m++] = tdm_rankmap_world(&g->map, ranks[i]);
        } else {
            for (int i = 0; i < g->map.n; i++) {
                if (!seen[i])
                    w[m++] = tdm_rankmap_world(&g->map, i);
            }
        }
        err = group_from_list(fn, w, m, g->session, newgroup);
    }
    free(seen);
    free(w);
    return err;
}

static int incl_excl(const char *fn, bool incl, MPI_Group group, int n, const int ranks[],
                     MPI_Group *newgroup) {
    tdm_group_t *g;
    TDM_GET_GROUP(fn, NULL, group, g);
    TDM_CHECK_PTR(fn, NULL, newgroup, "newgroup");
    if (n < 0 || n > g->map.n)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid n=%d (group of size %d)", n, g->map.n);
    if (n > 0)
        TDM_CHECK_PTR(fn, NULL, ranks, "ranks");
    return select_ranks(fn, incl, g, n, ranks, newgroup);
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    return incl_excl("MPI_Group_incl", true, group, n, ranks, newgroup);
}
TDM_WEAK(MPI_Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    return incl_excl("MPI_Group_excl", false, group, n, ranks, newgroup);
}
TDM_WEAK(MPI_Group_excl)

/* Expand (first, last, stride) triplets into a rank list, checking them. */
static int expand_ranges(const char *fn, const tdm_group_t *g, int n, int ranges[][3], int **list_p,
                         int *count_p) {
    if (n < 0)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid n=%d", n);
    if (n > 0 && !ranges)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "ranges is NULL");
    long long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (first < 0 || first >= g->map.n || last < 0 || last >= g->map.n)
            return tdm_mpi_err(NULL, MPI_ERR_RANK, fn,
                               "range %d (%d, %d, %d) names a rank outside the group (size %d)", i,
                               first, last, stride, g->map.n);
        if (stride == 0 || (first < last && stride < 0) || (first > last && stride > 0))
            return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "range %d (%d, %d, %d) has an invalid stride",
                               i, first, last, stride);
        total += ((long long)last - first) / stride + 1;
        if (total > g->map.n)
            return tdm_mpi_err(NULL, MPI_ERR_RANK, fn,
                               "the ranges name more ranks than the group has (%d): some twice",
                               g->map.n);
    }
    int *list = alloc_ranks((int)total);
    if (!list)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    int m = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        for (long long r = first; stride > 0 ? r <= last : r >= last; r += stride)
            list[m++] = (int)r;
    }
    *list_p = list;
    *count_p = m;
    return MPI_SUCCESS;
}

static int range_incl_excl(const char *fn, bool incl, MPI_Group group, int n, int ranges[][3],
                           MPI_Group *newgroup) {
    tdm_group_t *g;
    TDM_GET_GROUP(fn, NULL, group, g);
    TDM_CHECK_PTR(fn, NULL, newgroup, "newgroup");
    int *list = NULL, m = 0;
    int err = expand_ranges(fn, g, n, ranges, &list, &m);
    if (err)
        return err;
    err = select_ranks(fn, incl, g, m, list, newgroup);
    free(list);
    return err;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) {
    return range_incl_excl("MPI_Group_range_incl", true, group, n, ranges, newgroup);
}
TDM_WEAK(MPI_Group_range_incl)

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) {
    return range_incl_excl("MPI_Group_range_excl", false, group, n, ranges, newgroup);
}
TDM_WEAK(MPI_Group_range_excl)
