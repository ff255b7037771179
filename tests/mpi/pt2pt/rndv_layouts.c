/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rendezvous messages between two ranks with every pairing of a contiguous and a strided
 * (vector) buffer on each side: rank 0 sends 2 MiB of data four times, contiguous or as
 * every other 8-byte block of a 4 MiB buffer, and rank 1 receives each into a contiguous
 * or a strided buffer of its own; every byte is checked, and the gaps of a strided receive
 * are left untouched. On two nodes the testlist checks with TANDEM_PROTO_STATS which
 * protocol moved them: by RDMA only when both sides are contiguous (the pipeline packs
 * and unpacks the others).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS (1 << 18) /* 8-byte blocks: 2 MiB of data */

static unsigned char val(int msg, size_t i) {
    return (unsigned char)(i * 13 + (i >> 11) + (size_t)msg * 29 + 1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "rndv_layouts needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Datatype strided;
    MPI_Type_vector(BLOCKS, 1, 2, MPI_DOUBLE, &strided); /* every other 8 bytes */
    MPI_Type_commit(&strided);
    size_t data = (size_t)BLOCKS * 8;
    unsigned char *buf = malloc(2 * data);
    for (int msg = 0; msg < 4; msg++) {
        int send_strided = msg & 1, recv_strided = (msg >> 1) & 1;
        if (rank == 0) {
            memset(buf, 0xee, 2 * data);
            for (size_t i = 0; i < data; i++) {
                size_t at = send_strided ? (i / 8) * 16 + i % 8 : i;
                buf[at] = val(msg, i);
            }
            if (send_strided)
                MPI_Send(buf, 1, strided, 1, msg, MPI_COMM_WORLD);
            else
                MPI_Send(buf, (int)data, MPI_BYTE, 1, msg, MPI_COMM_WORLD);
        } else {
            memset(buf, 0x5a, 2 * data);
            MPI_Status st;
            if (recv_strided)
                MPI_Recv(buf, 1, strided, 0, msg, MPI_COMM_WORLD, &st);
            else
                MPI_Recv(buf, (int)data, MPI_BYTE, 0, msg, MPI_COMM_WORLD, &st);
            int count;
            MPI_Get_count(&st, MPI_BYTE, &count);
            if ((size_t)count != data) {
                fprintf(stderr, "message %d: %d bytes, expected %zu\n", msg, count, data);
                errs++;
            }
            size_t bad = 0;
            for (size_t i = 0; i < data; i++) {
                size_t at = recv_strided ? (i / 8) * 16 + i % 8 : i;
                bad += buf[at] != val(msg, i);
                if (recv_strided)
                    bad += buf[at + 8] != 0x5a; /* the gap after it */
            }
            if (!recv_strided)
                for (size_t i = data; i < 2 * data; i++)
                    bad += buf[i] != 0x5a;
            if (bad) {
                fprintf(stderr, "message %d (send %s, receive %s): %zu bytes wrong\n", msg,
                        send_strided ? "strided" : "contiguous",
                        recv_strided ? "strided" : "contiguous", bad);
                errs++;
            }
        }
    }
    MPI_Type_free(&strided);
    free(buf);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
