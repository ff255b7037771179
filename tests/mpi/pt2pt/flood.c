/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ordering under load: every rank other than 0 sends thousands of small messages
 * with distinct tags (and a few larger ones) to rank 0 before rank 0 posts any
 * receive, then a marker; rank 0 takes the marker from each sender (so every
 * message is already queued as unexpected), then receives everything in reverse
 * tag order, alternating specific and MPI_ANY_SOURCE receives. Then the same
 * messages again with a repeated tag, received with MPI_ANY_TAG, which must come
 * in send order.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 10) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* total of every rank's error count at rank 0, which gives the verdict */
static int finish(void) {
    if (rank == 0) {
        for (int i = 1; i < nprocs; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, 32766, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
        if (errs)
            printf(" Found %d errors\n", errs);
        else
            printf(" No Errors\n");
        fflush(stdout);
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 32766, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return errs ? 1 : 0;
}

#define NMSG 2000

/* message i from rank r: a few ints, every 250th one bigger than the eager limit */
static int msg_ints(int i) {
    return i % 250 == 7 ? 10000 : 1 + i % 5;
}

static void make(int *m, int r, int i) {
    int n = msg_ints(i);
    for (int j = 0; j < n; j++)
        m[j] = r * 1000003 + i * 31 + j;
}

static int bad(const int *m, int r, int i) {
    int n = msg_ints(i);
    for (int j = 0; j < n; j++)
        if (m[j] != r * 1000003 + i * 31 + j)
            return 1;
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int *m = malloc(10000 * sizeof(int));
    MPI_Status st;

    for (int phase = 0; phase < 2; phase++) {
        if (rank > 0) {
            /* nonblocking: a blocking send may wait for its receive, which comes later */
            MPI_Request *reqs = malloc(NMSG * sizeof(MPI_Request));
            int **bufs = malloc(NMSG * sizeof(int *));
            for (int i = 0; i < NMSG; i++) {
                bufs[i] = malloc((size_t)msg_ints(i) * sizeof(int));
                make(bufs[i], rank, i);
                MPI_Isend(bufs[i], msg_ints(i), MPI_INT, 0, phase == 0 ? i : 5, MPI_COMM_WORLD,
                          &reqs[i]);
            }
            MPI_Send(NULL, 0, MPI_BYTE, 0, NMSG + 1, MPI_COMM_WORLD); /* marker */
            MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
            for (int i = 0; i < NMSG; i++)
                free(bufs[i]);
            free(bufs);
            free(reqs);
            /* rank 0 is done with this phase */
            MPI_Recv(NULL, 0, MPI_BYTE, 0, NMSG + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            continue;
        }
        for (int r = 1; r < nprocs; r++)
            MPI_Recv(NULL, 0, MPI_BYTE, r, NMSG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (phase == 0) {
            /* reverse tag order; specific source and ANY_SOURCE in turn */
            for (int i = NMSG - 1; i >= 0; i--) {
                for (int r = 1; r < nprocs; r++) {
                    int count = -1;
                    memset(m, 0, (size_t)msg_ints(i) * sizeof(int));
                    int src = i % 2 ? r : MPI_ANY_SOURCE;
                    MPI_Recv(m, msg_ints(i), MPI_INT, src, i, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_INT, &count);
                    int from = st.MPI_SOURCE;
                    CHECK(st.MPI_TAG == i && count == msg_ints(i) && from > 0 && from < nprocs,
                          "reverse order, tag %d: got tag %d count %d from %d", i, st.MPI_TAG,
                          count, from);
                    CHECK(src == MPI_ANY_SOURCE || from == r, "asked for %d, got %d", r, from);
                    CHECK(!bad(m, from, i), "reverse order: message %d from %d corrupted", i, from);
                }
            }
        } else {
            /* one tag: per sender, ANY_TAG receives see the send order */
            for (int r = 1; r < nprocs; r++) {
                for (int i = 0; i < NMSG; i++) {
                    int count = -1;
                    MPI_Recv(m, 10000, MPI_INT, r, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_INT, &count);
                    CHECK(count == msg_ints(i) && !bad(m, r, i),
                          "send order from %d: message %d has %d ints or wrong data", r, i, count);
                    if (count != msg_ints(i))
                        break;
                }
            }
        }
        int flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        CHECK(!flag, "phase %d: a message is left over (source %d tag %d)", phase, st.MPI_SOURCE,
              st.MPI_TAG);
        /* let the senders start the next phase only now */
        for (int r = 1; r < nprocs; r++)
            MPI_Send(NULL, 0, MPI_BYTE, r, NMSG + 2, MPI_COMM_WORLD);
    }
    free(m);
    return finish();
}
