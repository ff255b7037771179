/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_split against a serial reference: for several (color, key) rules,
 * each rank computes from every rank's inputs which ranks must share its new
 * communicator and in which order, then checks size, rank, the world ranks of
 * the members (through the group), and that messages on the new communicator
 * reach the expected processes. Also splits of splits and MPI_UNDEFINED. */
#include "tutil.h"

typedef struct {
    const char *name;
    void (*rule)(int rank, int size, int *color, int *key);
} rule_t;

static void r_same(int rank, int size, int *c, int *k) {
    (void)size;
    *c = 0;
    *k = rank;
}
static void r_reverse(int rank, int size, int *c, int *k) {
    (void)size;
    *c = 3;
    *k = -rank;
}
static void r_mod2(int rank, int size, int *c, int *k) {
    (void)size;
    *c = rank % 2;
    *k = 0;
}
static void r_mod3_rev(int rank, int size, int *c, int *k) {
    (void)size;
    *c = rank % 3;
    *k = size - rank;
}
static void r_undef(int rank, int size, int *c, int *k) {
    (void)size;
    *c = rank % 3 == 1 ? MPI_UNDEFINED : 7;
    *k = (rank * 7) % 5; /* ties broken by parent rank */
}
static void r_singletons(int rank, int size, int *c, int *k) {
    (void)size;
    *c = rank;
    *k = 0;
}
static void r_big_color(int rank, int size, int *c, int *k) {
    (void)size;
    *c = rank < 2 ? 0x7fffffff : 1;
    *k = rank % 2;
}

static const rule_t rules[] = {
    {"same", r_same},           {"reverse", r_reverse}, {"mod2", r_mod2},
    {"mod3_rev", r_mod3_rev},   {"undefined", r_undef}, {"singletons", r_singletons},
    {"big_color", r_big_color},
};

/* The reference: members (parent ranks) of my color ordered by (key, parent rank). */
static int reference(const int *ck, int size, int me, int *members) {
    int color = ck[2 * me], n = 0;
    if (color == MPI_UNDEFINED)
        return -1;
    for (int i = 0; i < size; i++)
        if (ck[2 * i] == color)
            members[n++] = i;
    for (int i = 1; i < n; i++) { /* insertion sort, stable */
        int m = members[i], j = i - 1;
        while (j >= 0 && (ck[2 * members[j] + 1] > ck[2 * m + 1])) {
            members[j + 1] = members[j];
            j--;
        }
        members[j + 1] = m;
    }
    return n;
}

/* Check newcomm (split of parent by ck) against the reference. */
static void check_split(MPI_Comm parent, MPI_Comm newcomm, const int *ck, const char *what) {
    int psize, prank;
    MPI_Comm_size(parent, &psize);
    MPI_Comm_rank(parent, &prank);
    int *members = malloc(sizeof(int) * (size_t)psize);
    int n = reference(ck, psize, prank, members);
    if (n < 0) {
        T_CHECK(newcomm == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL", what);
        free(members);
        return;
    }
    T_CHECK(newcomm != MPI_COMM_NULL, "%s: got MPI_COMM_NULL", what);
    if (newcomm == MPI_COMM_NULL) {
        free(members);
        return;
    }
    int size, rank;
    MPI_Comm_size(newcomm, &size);
    MPI_Comm_rank(newcomm, &rank);
    T_CHECK(size == n, "%s: size %d, expected %d", what, size, n);
    int myidx = -1;
    for (int i = 0; i < n; i++)
        if (members[i] == prank)
            myidx = i;
    T_CHECK(rank == myidx, "%s: rank %d, expected %d", what, rank, myidx);
    if (size != n) {
        free(members);
        return;
    }
    /* members' parent ranks through the groups */
    MPI_Group pg, ng;
    MPI_Comm_group(parent, &pg);
    MPI_Comm_group(newcomm, &ng);
    int *idx = malloc(sizeof(int) * (size_t)n), *tr = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(ng, n, idx, pg, tr);
    for (int i = 0; i < n; i++)
        T_CHECK(tr[i] == members[i], "%s: new rank %d is parent rank %d, expected %d", what, i,
                tr[i], members[i]);
    MPI_Group_free(&ng);
    MPI_Group_free(&pg);
    /* traffic: everyone sends its parent rank to everyone in the new communicator */
    int *got = malloc(sizeof(int) * (size_t)n);
    t_allgather_ints(newcomm, &prank, 1, got);
    for (int i = 0; i < n; i++)
        T_CHECK(got[i] == members[i],
                "%s: rank %d of the new communicator says it is parent "
                "rank %d, expected %d",
                what, i, got[i], members[i]);
    free(got);
    free(idx);
    free(tr);
    free(members);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *ck = malloc(sizeof(int) * 2 * (size_t)size);
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        int mine[2];
        rules[i].rule(t_rank, size, &mine[0], &mine[1]);
        t_allgather_ints(MPI_COMM_WORLD, mine, 2, ck);
        MPI_Comm nc;
        T_OK(MPI_Comm_split(MPI_COMM_WORLD, mine[0], mine[1], &nc));
        check_split(MPI_COMM_WORLD, nc, ck, rules[i].name);
        if (nc == MPI_COMM_NULL)
            continue;
        /* split the result again with every rule */
        int nsize, nrank;
        MPI_Comm_size(nc, &nsize);
        MPI_Comm_rank(nc, &nrank);
        int *ck2 = malloc(sizeof(int) * 2 * (size_t)nsize);
        for (size_t j = 0; j < sizeof(rules) / sizeof(rules[0]); j++) {
            char what[64];
            snprintf(what, sizeof(what), "%s/%s", rules[i].name, rules[j].name);
            rules[j].rule(nrank, nsize, &mine[0], &mine[1]);
            t_allgather_ints(nc, mine, 2, ck2);
            MPI_Comm nc2;
            T_OK(MPI_Comm_split(nc, mine[0], mine[1], &nc2));
            check_split(nc, nc2, ck2, what);
            if (nc2 != MPI_COMM_NULL)
                MPI_Comm_free(&nc2);
        }
        free(ck2);
        MPI_Comm_free(&nc);
    }
    /* many live splits at once, freed in another order than created */
    MPI_Comm keep[16];
    for (int i = 0; i < 16; i++)
        T_OK(MPI_Comm_split(MPI_COMM_WORLD, (t_rank + i) % 2, t_rank, &keep[i]));
    for (int i = 0; i < 16; i += 2)
        MPI_Comm_free(&keep[i]);
    for (int i = 0; i < 16; i += 2) {
        int mine[2] = {(t_rank + i) % 2, t_rank};
        t_allgather_ints(MPI_COMM_WORLD, mine, 2, ck);
        T_OK(MPI_Comm_split(MPI_COMM_WORLD, mine[0], mine[1], &keep[i]));
        check_split(MPI_COMM_WORLD, keep[i], ck, "refill");
    }
    for (int i = 0; i < 16; i++)
        MPI_Comm_free(&keep[i]);
    free(ck);
    return t_finish();
}
