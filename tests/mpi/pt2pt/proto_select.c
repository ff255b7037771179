/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One row of the rendezvous selection table at a time: rank 0 sends five
 * 1 MiB messages to rank 1 with the call named by the argument, rank 1
 * receives them with the other call named, and the data are checked. The
 * testlist runs it with TANDEM_PROTO_STATS=1 and checks (lines=) that the
 * protocol counters printed at finalize show the protocol Table II gives:
 *
 *   send-recv     Send  x Recv    COOP
 *   send-irecv    Send  x Irecv   RPUT  (the receive is posted after Probe, so no RTR)
 *   isend-recv    Isend x Recv    RGET
 *   isend-irecv   Isend x Irecv   COOP  (equal loads)
 *   bsend-recv    Bsend x Recv    RGET
 *   rsend-irecv   Rsend x Irecv   RTR   (the receive is posted first: counted by the sender)
 *   isend-xchg    both ranks Isend two messages to each other, then receive:
 *                 an exchange, RGET for at least the first of each pair (each
 *                 reads what it receives; COOP would split both copies), or
 *                 with a second argument (bytes per message) above the eager
 *                 limit and at most TANDEM_EXCHANGE_PIPELINE_MAX the two-copy
 *                 pipeline for at least the first of each pair
 *   isend-turns   an exchange at every match, whatever the scheduling: the ranks
 *                 take turns to receive, each with one Isend of its own to the
 *                 other in flight that the other cannot have matched yet (an
 *                 adaptive exchange: the lower rank times and chooses, the higher
 *                 follows its word); a second argument: bytes per message, a
 *                 third: turns of each rank (5)
 *
 * Without the counters (any other environment) it is a plain data test.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_MSGS 5
static int BYTES = 1 << 20; /* the second argument, when given; a third: xchg rounds (5) */

static int errs;

static void fill(unsigned char *b, int k) {
    for (int i = 0; i < BYTES; i++)
        b[i] = (unsigned char)(i * 7 + k);
}

static void check(const unsigned char *b, int k) {
    for (int i = 0; i < BYTES; i++) {
        if (b[i] != (unsigned char)(i * 7 + k)) {
            fprintf(stderr, "message %d: byte %d is %u, expected %u\n", k, i, b[i],
                    (unsigned char)(i * 7 + k));
            errs++;
            return;
        }
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "send-recv";
    const char *dash = strchr(mode, '-');
    if (size != 2 || !dash) {
        if (rank == 0)
            fprintf(stderr, "usage: 2 ranks, argument SEND-RECV (e.g. isend-irecv)\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (argc > 2)
        BYTES = atoi(argv[2]);
    int rounds = argc > 3 ? atoi(argv[3]) : N_MSGS; /* xchg only */
    const char *rmode = dash + 1;
    size_t slen = (size_t)(dash - mode);
    unsigned char *buf = malloc(BYTES);
    void *attach = NULL;
    if (!strncmp(mode, "bsend", slen)) {
        int asz = N_MSGS * (BYTES + MPI_BSEND_OVERHEAD);
        attach = malloc((size_t)asz);
        MPI_Buffer_attach(attach, asz);
    }
    if (!strcmp(rmode, "xchg")) {
        /* Two messages each way: when the first one from the peer is matched, my
         * second send is surely still in flight (the peer posts the receive for
         * it only after the barrier between the two receives, which I reach only
         * after my first receive completed), so the first match is an exchange.
         * My first send gives no such guarantee: the peer may have read it
         * already. The second match may or may not be an exchange. */
        unsigned char *out = malloc(2 * BYTES);
        for (int k = 0; k < rounds; k++) {
            MPI_Request rq[3];
            fill(out, k + rank);
            fill(out + BYTES, k + 7 + rank);
            memset(buf, 0, BYTES);
            MPI_Isend(out, BYTES, MPI_BYTE, 1 - rank, 2 * k, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(out + BYTES, BYTES, MPI_BYTE, 1 - rank, 2 * k + 1, MPI_COMM_WORLD, &rq[1]);
            MPI_Barrier(MPI_COMM_WORLD); /* every RTS is out before any receive */
            MPI_Irecv(buf, BYTES, MPI_BYTE, 1 - rank, 2 * k, MPI_COMM_WORLD, &rq[2]);
            MPI_Wait(&rq[2], MPI_STATUS_IGNORE); /* Isend x Irecv: COOP unless an exchange */
            check(buf, k + 1 - rank);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Irecv(buf, BYTES, MPI_BYTE, 1 - rank, 2 * k + 1, MPI_COMM_WORLD, &rq[2]);
            MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
            check(buf, k + 7 + 1 - rank);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        free(out);
    }
    if (!strcmp(rmode, "turns")) {
        /* Rank 0 receives message k while its own message k is in flight, then rank 1
         * receives it while its message k + 1 is: each match finds exactly one send
         * of its own to the peer out and unmatched, since the peer, held in the
         * barrier, posts the receive for it only in its next turn. So every match is
         * an exchange, and rank 1's k-th match reads the word rank 0's k-th decision
         * wrote (the barrier orders them), however the two ranks are scheduled.
         * Message j each way has tag j; rank 1's last receive has no send out. */
        unsigned char *out = malloc(BYTES);
        MPI_Request sreq = MPI_REQUEST_NULL, rreq;
        int k = 0, turns = 2 * rounds;
        if (rank == 1) {
            fill(out, 100);
            MPI_Isend(out, BYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &sreq);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* rank 1's first RTS is in before rank 0's turn */
        for (int t = 0; t < turns; t++) {
            if (t % 2 == rank) {
                /* my previous message was received in the peer's last turn */
                MPI_Wait(&sreq, MPI_STATUS_IGNORE);
                if (rank == 0 || t + 1 < turns) {
                    fill(out, 100 + k + rank);
                    MPI_Isend(out, BYTES, MPI_BYTE, 1 - rank, k + rank, MPI_COMM_WORLD, &sreq);
                }
                memset(buf, 0, BYTES);
                MPI_Irecv(buf, BYTES, MPI_BYTE, 1 - rank, k, MPI_COMM_WORLD, &rreq);
                MPI_Wait(&rreq, MPI_STATUS_IGNORE);
                check(buf, 100 + k);
            }
            if (t % 2 == 1)
                k++;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        free(out);
    }
    for (int k = 0; k < N_MSGS && strcmp(rmode, "xchg") != 0 && strcmp(rmode, "turns") != 0; k++) {
        if (rank == 0) {
            fill(buf, k);
            if (!strncmp(mode, "rsend", slen)) {
                MPI_Barrier(MPI_COMM_WORLD); /* the receive is posted */
                MPI_Rsend(buf, BYTES, MPI_BYTE, 1, k, MPI_COMM_WORLD);
            } else if (!strncmp(mode, "isend", slen)) {
                MPI_Request r;
                MPI_Isend(buf, BYTES, MPI_BYTE, 1, k, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else if (!strncmp(mode, "bsend", slen)) {
                MPI_Bsend(buf, BYTES, MPI_BYTE, 1, k, MPI_COMM_WORLD);
            } else {
                MPI_Send(buf, BYTES, MPI_BYTE, 1, k, MPI_COMM_WORLD);
            }
            MPI_Barrier(MPI_COMM_WORLD); /* one message at a time: loads stay equal */
        } else {
            memset(buf, 0, BYTES);
            if (!strcmp(rmode, "irecv")) {
                MPI_Request r;
                if (!strncmp(mode, "rsend", slen)) {
                    MPI_Irecv(buf, BYTES, MPI_BYTE, 0, k, MPI_COMM_WORLD, &r);
                    MPI_Barrier(MPI_COMM_WORLD);
                } else {
                    MPI_Probe(0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Irecv(buf, BYTES, MPI_BYTE, 0, k, MPI_COMM_WORLD, &r);
                }
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else {
                if (!strncmp(mode, "rsend", slen))
                    MPI_Barrier(MPI_COMM_WORLD);
                MPI_Recv(buf, BYTES, MPI_BYTE, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            check(buf, k);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    if (attach) {
        int asz;
        MPI_Buffer_detach(&attach, &asz);
        free(attach);
    }
    free(buf);
    int all;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
