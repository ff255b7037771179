/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Background work for `bench/compare --load`: an MPI job that broadcasts SIZE bytes
 * (default 1 KiB) in a loop until it is killed, started with more ranks than cores
 * and at the lowest priority beside the measured runs. Not a benchmark: it prints
 * nothing.
 */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    char *buf = calloc((size_t)(n > 0 ? n : 1), 1);
    for (;;)
        MPI_Bcast(buf, n, MPI_CHAR, 0, MPI_COMM_WORLD);
}
