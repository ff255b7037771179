/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which rendezvous protocol the rooted collectives get (seed 000 §II-B1), read
 * from TANDEM_PROTO_STATS by the testlist. On 2 ranks the root's one transfer
 * is all it waits for (its own block is local work), so it is posted as a
 * blocking call and both sides copy half (COOP) in Bcast, Scatter and Gather.
 * On 3 ranks a Scatter's root posts its sends ahead, so each receiver copies
 * (RGET); a Gather's root receives ahead, so each sender copies (RPUT).
 * 5 calls each of 1 MiB per rank, data checked.
 *
 * "reduce": 5 Reduces of 64 KiB of floats on 2 ranks, the root combining what
 * it receives at once: both copy half (COOP), unless the pair's adaptive eager
 * range goes by rendezvous (the cores share no cache; forced here with
 * TANDEM_TEST_EAGER_ADAPTIVE_RNDV), when the root reads it all itself (RGET),
 * so the op finds the data in its own cache.
 *
 * "small": 64 Bcasts of 8 bytes, which rank 1 joins only after every one has
 * arrived (rank 0 sends it a message on another communicator after them): the
 * root's sends leave with no request and rank 1's receives complete at once,
 * with no request either (the counters "sent at once", "received at once").
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1 << 20)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *which = argc > 1 ? argv[1] : "bcast";
    if (strcmp(which, "small") == 0) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        double v[64];
        if (rank == 1)
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int it = 0; it < 64; it++) {
            v[it] = rank == 0 ? it * 1.5 : -1;
            MPI_Bcast(&v[it], 1, MPI_DOUBLE, 0, c);
            if (v[it] != it * 1.5 && errs++ < 5)
                fprintf(stderr, "[%d] bcast %d: %g\n", rank, it, v[it]);
        }
        if (rank == 0)
            MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Comm_free(&c);
    }
    if (strcmp(which, "reduce") == 0) {
        enum { NF = 16384 };
        float *x = malloc(NF * sizeof(float)), *y = malloc(NF * sizeof(float));
        for (int it = 0; it < 5; it++) {
            for (int i = 0; i < NF; i++)
                x[i] = (float)(i % 1000 + rank * 1000 + it), y[i] = -1;
            MPI_Reduce(x, y, NF, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
            for (int i = 0; rank == 0 && i < NF; i++) {
                float want = 0;
                for (int r = 0; r < size; r++)
                    want += (float)(i % 1000 + r * 1000 + it);
                if (y[i] != want && errs++ < 5)
                    fprintf(stderr, "[0] reduce %d: %g, want %g\n", i, y[i], want);
            }
        }
        free(x);
        free(y);
    }
    unsigned char *a = malloc((size_t)N * (size_t)size), *b = malloc((size_t)N * (size_t)size);
    for (int it = 0; it < 5; it++) {
        for (size_t i = 0; i < (size_t)N * (size_t)size; i++)
            a[i] = (unsigned char)(i * 7 + (size_t)rank * 13 + (size_t)it), b[i] = 0;
        if (strcmp(which, "small") == 0 || strcmp(which, "reduce") == 0) {
            break;
        } else if (strcmp(which, "bcast") == 0) {
            MPI_Bcast(a, N, MPI_BYTE, 0, MPI_COMM_WORLD);
            for (size_t i = 0; i < N; i++)
                if (a[i] != (unsigned char)(i * 7 + (size_t)it) && errs++ < 5)
                    fprintf(stderr, "[%d] bcast byte %zu\n", rank, i);
        } else if (strcmp(which, "scatter") == 0) {
            MPI_Scatter(a, N, MPI_BYTE, b, N, MPI_BYTE, 0, MPI_COMM_WORLD);
            for (size_t i = 0; i < N; i++)
                if (b[i] != (unsigned char)(((size_t)rank * N + i) * 7 + (size_t)it) && errs++ < 5)
                    fprintf(stderr, "[%d] scatter byte %zu\n", rank, i);
        } else {
            MPI_Gather(a, N, MPI_BYTE, b, N, MPI_BYTE, 0, MPI_COMM_WORLD);
            for (size_t i = 0; rank == 0 && i < (size_t)N * (size_t)size; i++) {
                size_t r = i / N, j = i % N;
                if (b[i] != (unsigned char)(j * 7 + r * 13 + (size_t)it) && errs++ < 5)
                    fprintf(stderr, "[0] gather byte %zu\n", i);
            }
        }
    }
    free(a);
    free(b);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
