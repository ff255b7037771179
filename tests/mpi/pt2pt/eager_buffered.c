/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages at or below the eager limit are buffered by the receiver, whichever
 * way they travel: a standard-mode send of the adaptive eager range
 * (p2p/select.c) that went by rendezvous is read at once by a receiver that has
 * not posted its receive yet, so the send completes without it, as the eager
 * one it stands for would (many programs count on that, though the standard
 * does not promise it). A synchronous send still waits for its receive.
 *
 * Rank 0 sends, by MPI_Send, MPI_Isend + MPI_Wait and from two strided
 * datatypes, messages of 8-16 KiB, and only then the message rank 1 waits for
 * before posting any of their receives: without the buffering this deadlocks.
 * Rank 1 then probes one, receives one into a buffer too small (MPI_ERR_TRUNCATE,
 * the part that fits delivered) and the rest into exact buffers; every byte
 * checked. Last, an MPI_Issend of 12 KiB must stay incomplete while rank 1
 * serves packets in a receive of another message. With TANDEM_TEST_EAGER_ADAPTIVE_RNDV
 * every message of the range goes by rendezvous (the testlist checks the counters);
 * with TANDEM_TEST_CMA_FAIL_AFTER as well, a pull whose read fails has the
 * sender move the message as DATA cells, still before any receive is posted.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int sizes[] = {8193, 12288, 16000, 16384};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))
/* 0: MPI_Send, 1: MPI_Isend, 2: MPI_Send of a strided type a peer can address
 * (blocks of 1 KiB), 3: one it cannot (blocks of 96 bytes: eager, never by
 * rendezvous in the adaptive range) */
#define NKIND 4
#define NMSG (NSIZES * NKIND)
#define MAXB 16384
#define TAG_GO 999
#define TAG_SYNC 500
#define TAG_GO2 998

static unsigned char byte_of(int m, int i) {
    return (unsigned char)(m * 37 + i * 11 + 5);
}

static int check(const unsigned char *b, int n, int m, const char *what) {
    for (int i = 0; i < n; i++) {
        if (b[i] != byte_of(m, i)) {
            printf("rank 1 message %d (%s): byte %d is %d, expected %d\n", m, what, i, b[i],
                   byte_of(m, i));
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char *buf = malloc((size_t)NMSG * 2 * MAXB);
    if (rank == 0 && size >= 2) {
        MPI_Request rq;
        for (int m = 0; m < NMSG; m++) {
            int n = sizes[m % NSIZES], kind = m / NSIZES;
            unsigned char *b = buf + (size_t)m * 2 * MAXB;
            if (kind < 2) {
                for (int i = 0; i < n; i++)
                    b[i] = byte_of(m, i);
                if (kind == 0)
                    MPI_Send(b, n, MPI_BYTE, 1, m, MPI_COMM_WORLD);
                else {
                    MPI_Isend(b, n, MPI_BYTE, 1, m, MPI_COMM_WORLD, &rq);
                    MPI_Wait(&rq, MPI_STATUS_IGNORE);
                }
                memset(b, 0xee, (size_t)n); /* reused at once: the receiver must have a copy */
            } else {
                /* n bytes as blocks of bl every st (the tail block shorter) */
                int blk = kind == 2 ? 1024 : 96, st = kind == 2 ? 1536 : 128;
                MPI_Datatype v, both;
                int full = n / blk, rest = n % blk;
                MPI_Type_vector(full, blk, st, MPI_BYTE, &v);
                int bl[2] = {1, rest};
                MPI_Aint disp[2] = {0, (MPI_Aint)full * st};
                MPI_Datatype ty[2] = {v, MPI_BYTE};
                MPI_Type_create_struct(rest ? 2 : 1, bl, disp, ty, &both);
                MPI_Type_commit(&both);
                for (int i = 0; i < n; i++)
                    b[(i / blk) * st + i % blk] = byte_of(m, i);
                MPI_Send(b, 1, both, 1, m, MPI_COMM_WORLD);
                memset(b, 0xee, 2 * MAXB);
                MPI_Type_free(&both);
                MPI_Type_free(&v);
            }
        }
        MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD);

        /* synchronous mode: not complete before rank 1 posts the receive */
        unsigned char *s = buf;
        for (int i = 0; i < 12288; i++)
            s[i] = byte_of(NMSG, i);
        MPI_Issend(s, 12288, MPI_BYTE, 1, TAG_SYNC, MPI_COMM_WORLD, &rq);
        int flag = 0;
        for (int k = 0; k < 200 && !flag; k++) {
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
            usleep(200);
        }
        if (flag) {
            printf("rank 0: MPI_Issend completed before its receive was posted\n");
            errs++;
        }
        MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_GO2, MPI_COMM_WORLD);
        if (!flag)
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Status st;
        int count;
        MPI_Probe(0, 1, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (count != sizes[1]) {
            printf("rank 1: probe of message 1 gives %d bytes, expected %d\n", count, sizes[1]);
            errs++;
        }
        for (int m = 0; m < NMSG; m++) {
            int n = sizes[m % NSIZES];
            unsigned char *b = buf + (size_t)m * 2 * MAXB;
            memset(b, 0, (size_t)n + 64);
            if (m == 2) {
                /* too small a buffer: the part that fits arrives, the rest is an error */
                int rc = MPI_Recv(b, 4000, MPI_BYTE, 0, m, MPI_COMM_WORLD, &st);
                int cls = MPI_SUCCESS;
                if (rc != MPI_SUCCESS)
                    MPI_Error_class(rc, &cls);
                if (cls != MPI_ERR_TRUNCATE) {
                    printf("rank 1: a 4000-byte receive of %d bytes returned class %d, expected "
                           "MPI_ERR_TRUNCATE\n",
                           n, cls);
                    errs++;
                }
                errs += check(b, 4000, m, "truncated");
                if (b[4000] != 0) {
                    printf("rank 1: a truncated receive wrote past its buffer\n");
                    errs++;
                }
                continue;
            }
            MPI_Recv(b, n, MPI_BYTE, 0, m, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (count != n) {
                printf("rank 1: message %d has %d bytes, expected %d\n", m, count, n);
                errs++;
            }
            errs += check(b, n, m,
                          (const char *[]){"send", "isend", "vector", "fine vector"}[m / NSIZES]);
        }
        MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(buf, 12288, MPI_BYTE, 0, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        errs += check(buf, 12288, NMSG, "issend");
    }
    free(buf);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
