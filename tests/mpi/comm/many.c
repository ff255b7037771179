/* SPDX-License-Identifier: BSD-3-Clause */
/* The number of communicators is bounded by memory only: create and free
 * 100,000 communicators in a loop, then keep 10,000 alive at once and check a
 * sample of them (and the first and the last) still carry their own messages.
 * Memory must not grow with the number of create/free cycles.
 * Arguments: [cycles [alive]] (defaults 100000 10000). */
#include "tutil.h"

#include <unistd.h>

static long rss_kb(void) {
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* One message around the ring on c, tagged 1, checked. */
static void ring(MPI_Comm c, int value, const char *what) {
    int rank, size, got = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    MPI_Request rq;
    MPI_Status st;
    MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 1, c, &rq);
    MPI_Send(&value, 1, MPI_INT, (rank + 1) % size, 1, c);
    MPI_Wait(&rq, &st);
    T_CHECK(got == value, "%s: got %d, expected %d", what, got, value);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int cycles = argc > 1 ? atoi(argv[1]) : 100000;
    int alive = argc > 2 ? atoi(argv[2]) : 10000;

    long rss0 = 0;
    for (int i = 0; i < cycles; i++) {
        MPI_Comm c;
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (rc != MPI_SUCCESS) {
            T_CHECK(0, "dup %d failed", i);
            break;
        }
        if (i % 4 == 1) { /* some splits too: other rank maps */
            MPI_Comm s;
            T_OK(MPI_Comm_split(c, 0, -t_rank, &s));
            MPI_Comm_free(&s);
        }
        MPI_Comm_free(&c);
        if (i == cycles / 10)
            rss0 = rss_kb();
    }
    long rss1 = rss_kb();
    /* the first 10% of the cycles warmed every pool up; the other 90% must not
     * have grown memory by more than noise */
    T_CHECK(rss1 - rss0 < 2048, "memory grew by %ld kB over %d create/free cycles", rss1 - rss0,
            cycles - cycles / 10);

    MPI_Comm *keep = malloc(sizeof(MPI_Comm) * (size_t)alive);
    MPI_Comm parent = MPI_COMM_WORLD;
    for (int i = 0; i < alive; i++) {
        /* alternate parents: world, and the previous communicator */
        if (MPI_Comm_dup(i % 2 ? parent : MPI_COMM_WORLD, &keep[i]) != MPI_SUCCESS) {
            T_CHECK(0, "dup %d of %d alive failed", i, alive);
            alive = i;
            break;
        }
        parent = keep[i];
    }
    /* messages on each communicator must stay there: send on a sample of
     * them in one order, receive in the opposite order */
    int step = alive > 200 ? alive / 200 : 1;
    int rank, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = t_rank;
    int nsample = 0;
    for (int i = 0; i < alive; i += step)
        nsample++;
    int *got = malloc(sizeof(int) * (size_t)(nsample + 1));
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)(nsample + 1));
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(nsample + 1));
    for (int k = nsample - 1; k >= 0; k--)
        MPI_Irecv(&got[k], 1, MPI_INT, (rank + size - 1) % size, 3, keep[k * step], &rq[k]);
    for (int k = 0; k < nsample; k++) {
        int v = k * step;
        MPI_Send(&v, 1, MPI_INT, (rank + 1) % size, 3, keep[k * step]);
    }
    MPI_Waitall(nsample, rq, st);
    for (int k = 0; k < nsample; k++)
        T_CHECK(got[k] == k * step, "communicator %d received %d", k * step, got[k]);
    ring(keep[0], 11, "first");
    ring(keep[alive - 1], 12, "last");
    for (int i = alive - 1; i >= 0; i--)
        MPI_Comm_free(&keep[i]);
    free(keep);
    free(got);
    free(rq);
    free(st);
    return t_finish();
}
