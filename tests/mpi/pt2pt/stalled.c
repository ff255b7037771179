/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rendezvous whose sender is not running is finished by the receiver alone.
 *
 * Rank 0 sends (blocking Send, or Isend + Wait) messages of the adaptive one-way
 * range and of COOP's range. Rank 1 waits until the RTS is there (Probe), stops
 * rank 0 with SIGSTOP, waits until rank 0's last poll is older than
 * TANDEM_PEER_STALL_US, and receives. A protocol that needs the sender's copy or
 * stream (COOP, the pipeline) would wait for a process that cannot run: the job
 * hangs until the runner's timeout. RGET completes the receive while rank 0 is
 * stopped; then rank 1 resumes it and rank 0's send completes on the FIN. Run with
 * a long TANDEM_WAIT_SPIN_US: a sender blocked on its doorbell is not stalled (the
 * CTS wakes it), and rank 0 must be polling, not blocked, when it is stopped.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "stalled needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *stall = getenv("TANDEM_PEER_STALL_US");
    long stall_ms = (stall ? atol(stall) : 100) / 1000 + 1;
    static const size_t sizes[] = {64 * 1024, 1024 * 1024, 4 * 1024 * 1024};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    size_t max = sizes[nsizes - 1];
    unsigned char *buf = malloc(max);
    int pid0 = (int)getpid();
    MPI_Bcast(&pid0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int nb = 0; nb < 2; nb++) {
        for (int i = 0; i < nsizes; i++) {
            size_t n = sizes[i];
            int tag = nb * 16 + i;
            if (rank == 0) {
                for (size_t k = 0; k < n; k++)
                    buf[k] = (unsigned char)(k * 7 + (size_t)tag);
                if (nb) {
                    MPI_Request r;
                    MPI_Isend(buf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r);
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
                } else {
                    MPI_Send(buf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
                }
            } else {
                memset(buf, 0, n);
                MPI_Probe(0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (kill(pid0, SIGSTOP) != 0) {
                    perror("kill SIGSTOP");
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                sleep_ms(10 * stall_ms); /* its last poll is now old */
                MPI_Recv(buf, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                kill(pid0, SIGCONT);
                for (size_t k = 0; k < n; k++) {
                    if (buf[k] != (unsigned char)(k * 7 + (size_t)tag)) {
                        if (errs++ < 5)
                            fprintf(stderr, "size %zu %s: byte %zu is %u\n", n,
                                    nb ? "Isend" : "Send", k, buf[k]);
                        break;
                    }
                }
            }
        }
    }
    free(buf);
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all != 0;
}
