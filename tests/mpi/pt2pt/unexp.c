/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unexpected messages, many at once: rank 0 sends 300 messages whose sizes
 * straddle the bytes an unexpected entry keeps inside itself (256) and the
 * number of entries kept for reuse (64), before rank 1 posts a single receive;
 * rank 1 then receives them in reverse tag order, from its own sends too
 * (self messages take the same queue). Three passes, so recycled entries
 * carry earlier messages' data. Every byte checked. Last, an arrived message
 * is received into a strided type.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NMSG 300
#define MAXB 4000

static const int sizes[] = {0, 1, 255, 256, 257, 600, 1000, 4000};
#define NSIZES 8

static unsigned char byte_of(int pass, int m, int i) {
    return (unsigned char)(pass * 31 + m * 7 + i * 13 + 1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = malloc(MAXB);
    for (int pass = 0; pass < 3 && size >= 2; pass++) {
        if (rank == 0 || rank == 1) {
            int to = 1;
            MPI_Request *rq = malloc(NMSG * sizeof(*rq));
            unsigned char *out = malloc((size_t)NMSG * MAXB);
            /* rank 1 sends to itself, rank 0 to rank 1 */
            for (int m = 0; m < NMSG; m++) {
                int n = sizes[m % NSIZES];
                for (int i = 0; i < n; i++)
                    out[(size_t)m * MAXB + (size_t)i] = byte_of(pass + 3 * rank, m, i);
                MPI_Isend(out + (size_t)m * MAXB, n, MPI_BYTE, to, m, MPI_COMM_WORLD, &rq[m]);
            }
            if (rank == 0)
                MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD); /* every message of rank 0 is unexpected at 1 */
            if (rank == 1) {
                for (int from = 0; from < 2; from++)
                    for (int m = NMSG - 1; m >= 0; m--) {
                        int n = sizes[m % NSIZES], got = -1;
                        MPI_Status st;
                        MPI_Recv(buf, MAXB, MPI_BYTE, from, m, MPI_COMM_WORLD, &st);
                        MPI_Get_count(&st, MPI_BYTE, &got);
                        if (got != n && errs++ < 5)
                            fprintf(stderr, "pass %d from %d msg %d: %d bytes, want %d\n", pass,
                                    from, m, got, n);
                        for (int i = 0; i < n && i < got; i++)
                            if (buf[i] != byte_of(pass + 3 * from, m, i) && errs++ < 5) {
                                fprintf(stderr, "pass %d from %d msg %d byte %d\n", pass, from, m,
                                        i);
                                break;
                            }
                    }
                MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE);
            }
            free(rq);
            free(out);
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    /* an arrived message received into a strided type: unpacked at once */
    int vals[4] = {10, 20, 30, 40}, got[8];
    for (int i = 0; i < 8; i++)
        got[i] = -1;
    if (rank == 0 && size >= 2)
        MPI_Send(vals, 4, MPI_INT, 1, 7, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Datatype v;
        MPI_Type_vector(4, 1, 2, MPI_INT, &v);
        MPI_Type_commit(&v);
        MPI_Recv(got, 1, v, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 8; i++)
            if (got[i] != (i % 2 ? -1 : vals[i / 2]) && errs++ < 5)
                fprintf(stderr, "strided receive: element %d is %d\n", i, got[i]);
        MPI_Type_free(&v);
    }
    free(buf);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
