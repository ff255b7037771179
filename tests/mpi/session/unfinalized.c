/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A session opened again after the library's last user had finalized, and never
 * finalized: mpirun must see that the rank exits without finalizing ("F" was sent
 * once, then "I" again). The testlist expects the job to fail with mpirun's message.
 */
#include <mpi.h>

int main(void) {
    MPI_Session s;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    MPI_Session_finalize(&s);
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    return 0;
}
