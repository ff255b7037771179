/* SPDX-License-Identifier: BSD-3-Clause */
/* Invalid arguments to the communicator functions return the right error
 * class (with MPI_ERRORS_RETURN) and leave everything usable. */
#include "tutil.h"

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm c = MPI_COMM_WORLD, n;
    int res;
    T_FAILS(MPI_ERR_COMM, MPI_Comm_free(&c));
    c = MPI_COMM_SELF;
    T_FAILS(MPI_ERR_COMM, MPI_Comm_free(&c));
    c = MPI_COMM_NULL;
    T_FAILS(MPI_ERR_COMM, MPI_Comm_free(&c));
    T_FAILS(MPI_ERR_COMM, MPI_Comm_dup(MPI_COMM_NULL, &n));
    T_FAILS(MPI_ERR_COMM, MPI_Comm_dup((MPI_Comm)0x84123456, &n));
    T_FAILS(MPI_ERR_COMM, MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &res));
    T_FAILS(MPI_ERR_ARG, MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &n));
    T_FAILS(MPI_ERR_GROUP, MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &n));
    T_FAILS(MPI_ERR_TAG, MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, -3, &n));
    T_FAILS(MPI_ERR_INFO, MPI_Comm_dup_with_info(MPI_COMM_WORLD, (MPI_Info)0x9c777777, &n));
    T_FAILS(MPI_ERR_ARG, MPI_Comm_set_name(MPI_COMM_WORLD, NULL));

    /* a freed handle is dead */
    MPI_Comm d, dd;
    T_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    dd = d;
    T_OK(MPI_Comm_free(&d));
    T_FAILS(MPI_ERR_COMM, MPI_Comm_rank(dd, &res));

    /* a group that is not a subgroup of the communicator */
    if (size > 1) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, t_rank == 0, 0, &half);
        MPI_Group wg;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
        T_FAILS(MPI_ERR_GROUP, MPI_Comm_create(half, wg, &n));
        MPI_Group_free(&wg);
        MPI_Comm_free(&half);
    }
    /* still usable */
    T_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Comm_compare(d, MPI_COMM_WORLD, &res);
    T_CHECK(res == MPI_CONGRUENT, "dup after errors: %d", res);
    MPI_Comm_free(&d);
    return t_finish();
}
