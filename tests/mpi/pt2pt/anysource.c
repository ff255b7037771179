/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_ANY_SOURCE with several senders: every rank other than 0 sends a numbered
 * run of messages of mixed sizes (eager to rendezvous) to rank 0, which receives
 * them with MPI_ANY_SOURCE (blocking, then with preposted nonblocking receives),
 * checking each sender's messages arrive in order and intact. Matching order
 * among posted receives: an earlier ANY_SOURCE receive takes a message before a
 * later receive naming the source. Written for 3-4 ranks; works with 2.
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

static unsigned char pat(size_t i, int seed) {
    return (unsigned char)((i ^ (i >> 8) ^ (i >> 16)) * 131u + (unsigned)seed * 17u + 1u);
}

static void fill(unsigned char *b, size_t n, int seed) {
    for (size_t i = 0; i < n; i++)
        b[i] = pat(i, seed);
}

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

#define PER_RANK 30
#define MAXMSG 70000

static int msg_size(int src, int i) {
    static const int s[] = {4, 100, 8153, 40000, 0, 70000, 16};
    return s[(src + i) % 7];
}

/* a message carries (source, index) in its first 8 bytes when it has room */
static void make(unsigned char *b, int src, int i) {
    int n = msg_size(src, i);
    fill(b, (size_t)n, src * 1000 + i);
    if (n >= 8) {
        memcpy(b, &src, 4);
        memcpy(b + 4, &i, 4);
    }
}

static void verify(const unsigned char *b, int n, const MPI_Status *st, int *next,
                   const char *how) {
    int src = st->MPI_SOURCE, count = -1;
    char what[80];
    CHECK(src > 0 && src < nprocs, "%s: source %d", how, src);
    if (src <= 0 || src >= nprocs)
        return;
    int i = next[src]++;
    MPI_Get_count(st, MPI_BYTE, &count);
    snprintf(what, sizeof(what), "%s: message %d from %d", how, i, src);
    CHECK(count == msg_size(src, i) && n >= count, "%s: %d bytes, want %d", what, count,
          msg_size(src, i));
    if (count != msg_size(src, i))
        return;
    unsigned char *want = malloc(MAXMSG);
    make(want, src, i);
    CHECK(!memcmp(b, want, (size_t)count), "%s: wrong data (out of order?)", what);
    free(want);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsigned char *b = malloc(MAXMSG);
    MPI_Status st;
    int total = (nprocs - 1) * PER_RANK;

    for (int phase = 0; phase < 2; phase++) {
        if (rank > 0) {
            MPI_Request reqs[PER_RANK];
            unsigned char *bufs[PER_RANK];
            if (phase == 1) /* rank 0 has posted its receives */
                MPI_Recv(NULL, 0, MPI_BYTE, 0, 900, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < PER_RANK; i++) {
                bufs[i] = malloc(MAXMSG);
                make(bufs[i], rank, i);
                MPI_Isend(bufs[i], msg_size(rank, i), MPI_BYTE, 0, 10 + phase, MPI_COMM_WORLD,
                          &reqs[i]);
            }
            MPI_Waitall(PER_RANK, reqs, MPI_STATUSES_IGNORE);
            for (int i = 0; i < PER_RANK; i++)
                free(bufs[i]);
            continue;
        }
        int *next = calloc((size_t)nprocs, sizeof(int));
        if (phase == 0) {
            for (int k = 0; k < total; k++) {
                MPI_Recv(b, MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, k % 2 ? MPI_ANY_TAG : 10,
                         MPI_COMM_WORLD, &st);
                CHECK(st.MPI_TAG == 10, "phase 0: tag %d", st.MPI_TAG);
                verify(b, MAXMSG, &st, next, "ANY_SOURCE Recv");
            }
        } else {
            MPI_Request *reqs = malloc((size_t)total * sizeof(MPI_Request));
            MPI_Status *sts = malloc((size_t)total * sizeof(MPI_Status));
            unsigned char **bufs = malloc((size_t)total * sizeof(*bufs));
            for (int k = 0; k < total; k++) {
                bufs[k] = malloc(MAXMSG);
                MPI_Irecv(bufs[k], MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &reqs[k]);
            }
            for (int r = 1; r < nprocs; r++)
                MPI_Send(NULL, 0, MPI_BYTE, r, 900, MPI_COMM_WORLD);
            MPI_Waitall(total, reqs, sts);
            /* receives were matched in posting order: per source, indices ascend */
            for (int k = 0; k < total; k++) {
                verify(bufs[k], MAXMSG, &sts[k], next, "preposted ANY_SOURCE Irecv");
                free(bufs[k]);
            }
            free(reqs);
            free(sts);
            free(bufs);
        }
        for (int r = 1; r < nprocs; r++)
            CHECK(next[r] == PER_RANK, "phase %d: %d messages from %d, want %d", phase, next[r], r,
                  PER_RANK);
        free(next);
    }

    /* posted-receive order: ANY_SOURCE first, then one naming rank 1 */
    if (nprocs >= 2 && rank < 2) {
        if (rank == 0) {
            int a = -1, c = -1;
            MPI_Request r2[2];
            MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &r2[0]);
            MPI_Irecv(&c, 1, MPI_INT, 1, 20, MPI_COMM_WORLD, &r2[1]);
            MPI_Send(NULL, 0, MPI_BYTE, 1, 901, MPI_COMM_WORLD);
            MPI_Waitall(2, r2, MPI_STATUSES_IGNORE);
            CHECK(a == 1 && c == 2, "posted order: ANY_SOURCE receive got %d, specific got %d", a,
                  c);
        } else {
            int v1 = 1, v2 = 2;
            MPI_Recv(NULL, 0, MPI_BYTE, 0, 901, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&v1, 1, MPI_INT, 0, 20, MPI_COMM_WORLD);
            MPI_Send(&v2, 1, MPI_INT, 0, 20, MPI_COMM_WORLD);
        }
    }
    free(b);
    return finish();
}
