/* SPDX-License-Identifier: BSD-3-Clause */
/* Invalid arguments to the group functions: the right error class, nothing
 * created, the inputs still usable. */
#include "../comm/tutil.h"

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Group wg, g;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int sz, rk, res;
    int dup2[2] = {0, 0}, out1[1] = {size}, neg[1] = {-1};
    T_FAILS(MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, &sz));
    T_FAILS(MPI_ERR_GROUP, MPI_Group_rank((MPI_Group)0x88765432, &rk));
    T_FAILS(MPI_ERR_GROUP, MPI_Group_union(wg, MPI_GROUP_NULL, &g));
    T_FAILS(MPI_ERR_GROUP, MPI_Group_compare(MPI_GROUP_NULL, wg, &res));
    T_FAILS(MPI_ERR_RANK, MPI_Group_incl(wg, 2 > size ? 1 : 2, size >= 2 ? dup2 : out1, &g));
    T_FAILS(MPI_ERR_RANK, MPI_Group_incl(wg, 1, out1, &g));
    T_FAILS(MPI_ERR_RANK, MPI_Group_excl(wg, 1, neg, &g));
    T_FAILS(MPI_ERR_ARG, MPI_Group_incl(wg, -1, out1, &g));
    T_FAILS(MPI_ERR_ARG, MPI_Group_excl(wg, size + 1, out1, &g));
    int r0[1][3] = {{0, 0, 0}};                   /* stride 0 */
    int r1[1][3] = {{0, size, 1}};                /* past the end */
    int r2[2][3] = {{0, size - 1, 1}, {0, 0, 1}}; /* rank 0 twice */
    T_FAILS(MPI_ERR_ARG, MPI_Group_range_incl(wg, 1, r0, &g));
    T_FAILS(MPI_ERR_RANK, MPI_Group_range_incl(wg, 1, r1, &g));
    T_FAILS(MPI_ERR_RANK, MPI_Group_range_excl(wg, 2, r2, &g));
    if (size > 1) {
        int r3[1][3] = {{0, size - 1, -1}}; /* never reaches last */
        T_FAILS(MPI_ERR_ARG, MPI_Group_range_incl(wg, 1, r3, &g));
    }
    int bad[1] = {size}, tr[1];
    T_FAILS(MPI_ERR_RANK, MPI_Group_translate_ranks(wg, 1, bad, wg, tr));
    g = MPI_GROUP_NULL;
    T_FAILS(MPI_ERR_GROUP, MPI_Group_free(&g));
    /* a freed group handle is dead */
    MPI_Group g2;
    T_OK(MPI_Group_incl(wg, 1, &t_rank, &g2));
    g = g2;
    T_OK(MPI_Group_free(&g2));
    /* (its slot may be reused only by a later group, none was made) */
    T_FAILS(MPI_ERR_GROUP, MPI_Group_size(g, &sz));
    /* the world group still works */
    MPI_Group_size(wg, &sz);
    MPI_Group_rank(wg, &rk);
    T_CHECK(sz == size && rk == t_rank, "world group %d/%d", rk, sz);
    MPI_Group_free(&wg);
    return t_finish();
}
