/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A collective's local copy of a block of 4 MiB or more goes by memcpy or by
 * non-temporal stores, chosen at run time (TANDEM_COPY_STREAM, coll/sched.c).
 * Allgather, Gather and Alltoall of blocks of 4 MiB + 3 bytes (a tail that is
 * not a whole vector), twelve times each, from buffers 16 bytes past a page
 * (as malloc places large blocks), every byte checked each time; the testlist
 * checks with TANDEM_COLL_STATS which copies ran.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLK ((4 << 20) + 3)
#define ROUNDS 12

static unsigned char byte_of(int it, int from, int to, size_t i) {
    return (unsigned char)(it * 29 + from * 7 + to * 3 + (int)(i % 251));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = (size_t)size * BLK;
    unsigned char *smem = aligned_alloc(4096, n + 4096), *rmem = aligned_alloc(4096, n + 4096);
    unsigned char *s = smem + 16, *r = rmem + 16;
    for (int it = 0; it < ROUNDS; it++) {
        for (int kind = 0; kind < 3; kind++) {
            /* kind 0: Allgather, 1: Gather at rank it % size, 2: Alltoall */
            for (int to = 0; to < size; to++)
                for (size_t i = 0; i < BLK; i++)
                    s[(size_t)to * BLK + i] = byte_of(it, rank, kind == 2 ? to : 0, i);
            memset(r, 0, n);
            int root = it % size;
            if (kind == 0)
                MPI_Allgather(s, BLK, MPI_BYTE, r, BLK, MPI_BYTE, MPI_COMM_WORLD);
            else if (kind == 1)
                MPI_Gather(s, BLK, MPI_BYTE, r, BLK, MPI_BYTE, root, MPI_COMM_WORLD);
            else
                MPI_Alltoall(s, BLK, MPI_BYTE, r, BLK, MPI_BYTE, MPI_COMM_WORLD);
            if (kind == 1 && rank != root)
                continue;
            for (int from = 0; from < size; from++) {
                const unsigned char *b = r + (size_t)from * BLK;
                for (size_t i = 0; i < BLK; i++) {
                    if (b[i] != byte_of(it, from, kind == 2 ? rank : 0, i)) {
                        if (errs++ < 10)
                            printf("rank %d round %d %s: byte %zu of rank %d's block is %d, "
                                   "expected %d\n",
                                   rank, it,
                                   kind == 0   ? "Allgather"
                                   : kind == 1 ? "Gather"
                                               : "Alltoall",
                                   i, from, b[i], byte_of(it, from, kind == 2 ? rank : 0, i));
                        break;
                    }
                }
            }
        }
    }
    free(smem);
    free(rmem);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
