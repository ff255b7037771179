/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_create and MPI_Comm_create_group against a serial reference: the
 * new communicator's ranks are the group's, in the group's order (including
 * orders that are not affine), non-members get MPI_COMM_NULL, disjoint groups
 * may be created concurrently (create_group, different tags, and create with
 * different disjoint groups), and messages go where the reference says. */
#include "tutil.h"

/* Check c against the world ranks it should have (n of them, in order). */
static void check_comm(MPI_Comm c, const int *world, int n, const char *what) {
    int me = -1;
    for (int i = 0; i < n; i++)
        if (world[i] == t_rank)
            me = i;
    if (me < 0) {
        T_CHECK(c == MPI_COMM_NULL, "%s: not a member but got a communicator", what);
        return;
    }
    T_CHECK(c != MPI_COMM_NULL, "%s: member %d got MPI_COMM_NULL", what, me);
    if (c == MPI_COMM_NULL)
        return;
    int size, rank;
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    T_CHECK(size == n && rank == me, "%s: rank %d of %d, expected %d of %d", what, rank, size, me,
            n);
    if (size != n)
        return;
    int *got = malloc(sizeof(int) * (size_t)n);
    t_allgather_ints(c, &t_rank, 1, got);
    for (int i = 0; i < n; i++)
        T_CHECK(got[i] == world[i], "%s: rank %d is world rank %d, expected %d", what, i, got[i],
                world[i]);
    free(got);
    /* a second exchange on a dup of it, to exercise a child of a non-world parent */
    MPI_Comm d;
    T_OK(MPI_Comm_dup(c, &d));
    int v = t_rank * 3;
    t_allgather_ints(d, &v, 1, got = malloc(sizeof(int) * (size_t)n));
    for (int i = 0; i < n; i++)
        T_CHECK(got[i] == world[i] * 3, "%s (dup): rank %d sent %d", what, i, got[i]);
    free(got);
    MPI_Comm_free(&d);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Group wg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *list = malloc(sizeof(int) * (size_t)size);
    int n;

    /* 1. reversed world (an order that is not affine for size > 2... and is for 2) */
    for (int i = 0; i < size; i++)
        list[i] = size - 1 - i;
    MPI_Group g;
    MPI_Group_incl(wg, size, list, &g);
    MPI_Comm c;
    T_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    check_comm(c, list, size, "create reversed");
    int res;
    if (c != MPI_COMM_NULL) {
        MPI_Comm_compare(c, MPI_COMM_WORLD, &res);
        T_CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare reversed/world %d", res);
        MPI_Comm_free(&c);
    }
    MPI_Group_free(&g);

    /* 2. a permutation that is not affine, and the even ranks */
    n = 0;
    for (int i = 0; i < size; i += 2)
        list[n++] = i;
    for (int i = 1; i < size; i += 2)
        list[n++] = i;
    MPI_Group_incl(wg, n, list, &g);
    T_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    check_comm(c, list, n, "create evens-then-odds");
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    MPI_Group_free(&g);

    n = 0;
    for (int i = 0; i < size; i += 2)
        list[n++] = i;
    MPI_Group_incl(wg, n, list, &g);
    T_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    check_comm(c, list, n, "create evens");
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    /* the same with create_group, called by members only */
    c = MPI_COMM_NULL;
    if (t_rank % 2 == 0)
        T_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 17, &c));
    check_comm(c, list, n, "create_group evens");
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    MPI_Group_free(&g);

    /* 3. MPI-2.2: create with disjoint groups, each process passing its own */
    n = 0;
    for (int i = t_rank % 2; i < size; i += 2)
        list[n++] = i;
    MPI_Group_incl(wg, n, list, &g);
    T_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    check_comm(c, list, n, "create disjoint");
    /* and create_group on the halves concurrently, with different tags, on the
     * result of the first as parent of nothing: parent is world */
    MPI_Comm c2;
    T_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 100 + t_rank % 2, &c2));
    check_comm(c2, list, n, "create_group disjoint");
    if (c2 != MPI_COMM_NULL)
        MPI_Comm_free(&c2);
    /* create_group from a non-world parent: the reversed group of c */
    if (c != MPI_COMM_NULL) {
        MPI_Group cg, rg;
        MPI_Comm_group(c, &cg);
        int *idx = malloc(sizeof(int) * (size_t)n), *rev = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++) {
            idx[i] = n - 1 - i;
            rev[i] = list[n - 1 - i];
        }
        MPI_Group_incl(cg, n, idx, &rg);
        T_OK(MPI_Comm_create_group(c, rg, 5, &c2));
        check_comm(c2, rev, n, "create_group reversed from a sub-communicator");
        MPI_Comm_free(&c2);
        MPI_Group_free(&rg);
        MPI_Group_free(&cg);
        free(idx);
        free(rev);
        MPI_Comm_free(&c);
    }
    MPI_Group_free(&g);

    /* 4. the empty group: everybody gets MPI_COMM_NULL */
    T_OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    T_CHECK(c == MPI_COMM_NULL, "create with MPI_GROUP_EMPTY");

    /* 5. only me, with create_group (no other process involved) */
    MPI_Group_incl(wg, 1, &t_rank, &g);
    T_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, &c));
    check_comm(c, &t_rank, 1, "create_group of myself");
    MPI_Comm_free(&c);
    MPI_Group_free(&g);

    MPI_Group_free(&wg);
    free(list);
    return t_finish();
}
