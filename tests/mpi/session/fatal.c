/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Errors that end the job, on every rank (the testlist expects the job to fail and
 * counts the messages):
 *   arg session: a session with MPI_ERRORS_ARE_FATAL (the handler given to
 *                MPI_Session_init) asked for an unknown process set;
 *   arg world:   MPI_COMM_WORLD used while only a session is open (no MPI_Init):
 *                an error of no session goes to the default handler, fatal.
 * Each rank then waits forever, so only the abort ends the job.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Session s;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s);
    if (argc > 1 && strcmp(argv[1], "world") == 0) {
        int size;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    } else {
        MPI_Group g;
        MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g);
    }
    fprintf(stderr, "the error returned\n");
    for (;;)
        pause();
}
