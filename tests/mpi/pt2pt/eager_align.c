/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eager payloads placed at the sender's offset within a cache line (wire.h,
 * TDM_PKT_ALIGN_MIN): messages around 2 KiB and around the largest that fits
 * one ring cell, from send buffers at every offset 0-63 into receive buffers
 * at other offsets, by MPI_Send (no request), MPI_Isend and MPI_Ssend, into
 * posted and into unexpected receives. Messages go back to back, so a payload
 * that spilled past its cell would corrupt the next one; guard bytes around
 * each receive buffer catch a receive that wrote too much. Every byte checked.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {2047, 2048, 2049, 3000, 4096, 6000, 8100, 8120,
                            8128, 8136, 8144, 8152, 8153, 8200, 16000};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define NOFF 64
#define GUARD 64
#define MAXB 16000
#define SLOT (MAXB + 2 * GUARD + 64)

static unsigned char byte_of(int mode, int s, int off, int i) {
    return (unsigned char)(mode * 101 + s * 31 + off * 7 + i * 13 + 1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        MPI_Finalize();
        return 0;
    }
    unsigned char *mem = aligned_alloc(4096, (size_t)NOFF * SLOT);
    MPI_Request *rq = malloc(NOFF * sizeof(*rq));
    /* mode 0: MPI_Send, 1: MPI_Isend, 2: MPI_Ssend (posted receives only),
     * 3: MPI_Isend into unexpected receives */
    for (int mode = 0; mode < 4; mode++) {
        for (int s = 0; s < NSIZES; s++) {
            int n = sizes[s];
            if (rank == 0) {
                for (int off = 0; off < NOFF; off++) {
                    unsigned char *b = mem + (size_t)off * SLOT + off;
                    for (int i = 0; i < n; i++)
                        b[i] = byte_of(mode, s, off, i);
                }
                if (mode != 3)
                    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 has posted every receive */
                for (int off = 0; off < NOFF; off++) {
                    unsigned char *b = mem + (size_t)off * SLOT + off;
                    if (mode == 0)
                        MPI_Send(b, n, MPI_BYTE, 1, off, MPI_COMM_WORLD);
                    else if (mode == 2)
                        MPI_Ssend(b, n, MPI_BYTE, 1, off, MPI_COMM_WORLD);
                    else
                        MPI_Isend(b, n, MPI_BYTE, 1, off, MPI_COMM_WORLD, &rq[off]);
                }
                if (mode == 1 || mode == 3)
                    MPI_Waitall(NOFF, rq, MPI_STATUSES_IGNORE);
                if (mode == 3)
                    MPI_Barrier(MPI_COMM_WORLD); /* every message sent before a receive */
            } else if (rank == 1) {
                memset(mem, 0xA5, (size_t)NOFF * SLOT);
                /* receive buffers at another offset than their message's */
                for (int off = 0; off < NOFF && mode != 3; off++) {
                    unsigned char *b = mem + (size_t)off * SLOT + GUARD + (off * 37 + 5) % 64;
                    MPI_Irecv(b, n, MPI_BYTE, 0, off, MPI_COMM_WORLD, &rq[off]);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                for (int off = 0; off < NOFF && mode == 3; off++) {
                    unsigned char *b = mem + (size_t)off * SLOT + GUARD + (off * 37 + 5) % 64;
                    MPI_Irecv(b, n, MPI_BYTE, 0, off, MPI_COMM_WORLD, &rq[off]);
                }
                MPI_Waitall(NOFF, rq, MPI_STATUSES_IGNORE);
                for (int off = 0; off < NOFF; off++) {
                    unsigned char *slot = mem + (size_t)off * SLOT;
                    int at = GUARD + (off * 37 + 5) % 64;
                    for (int i = 0; i < SLOT; i++) {
                        unsigned char want =
                            (i >= at && i < at + n) ? byte_of(mode, s, off, i - at) : 0xA5;
                        if (slot[i] != want) {
                            if (errs++ < 10)
                                printf("mode %d size %d send offset %d: byte %d of the slot is "
                                       "%d, expected %d\n",
                                       mode, n, off, i - at, slot[i], want);
                            break;
                        }
                    }
                }
            } else {
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    }
    free(rq);
    free(mem);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
