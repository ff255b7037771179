/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_get_parent in a job not started by MPI_Comm_spawn: MPI_COMM_NULL on
 * every rank, every time (MPI-4.1 §11.8.2), and a NULL argument is MPI_ERR_ARG. */
#include "tutil.h"

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < 2; i++) {
        MPI_Comm parent = MPI_COMM_WORLD;
        T_OK(MPI_Comm_get_parent(&parent));
        T_CHECK(parent == MPI_COMM_NULL, "parent %#x, not MPI_COMM_NULL", (unsigned)parent);
    }
    T_FAILS(MPI_ERR_ARG, MPI_Comm_get_parent(NULL));
    return t_finish();
}
