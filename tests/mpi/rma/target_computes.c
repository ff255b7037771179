/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A target that computes does not stall its origins (issue 25, point 5): rank 0 sits in
 * a loop that makes no MPI call, reading its window until every origin's Put has
 * landed, while the origins Lock/Put/Unlock, Lock/Get/Unlock and Fetch_and_op on it.
 * Allocated memory is reached by load/store, user memory (MPI_Win_create) by CMA; the
 * message path (CMA off) needs the target's progress, so that run checks allocated
 * windows only. The loop gives up after 120 s (a failure, not a timing assert).
 * Also: the window's memory is a memfd, never a name in /dev/shm.
 */
#include "rmatest.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Is the page at p mapped from a memfd (no name in any file system)? */
static int from_memfd(const void *p) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    unsigned long a = (unsigned long)p;
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi) {
            found = strstr(line, "/memfd:") != NULL && !strstr(line, "/dev/shm");
            if (!found)
                fprintf(stderr, "rank %d: the window's memory is mapped from: %s", rank, line);
        }
    }
    if (f)
        fclose(f);
    return found;
}

static void run(int allocate) {
    long *mem, *own = NULL;
    MPI_Win win;
    const int n = 2 * size + 2; /* slot r: rank r's put; slot size+1: the counter */
    if (allocate) {
        MPI_Win_allocate(n * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        CHECK(from_memfd(mem), "Win_allocate's memory is not a memfd");
    } else {
        mem = own = malloc(n * sizeof(long));
        MPI_Win_create(mem, n * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    for (int i = 0; i < n; i++)
        mem[i] = -1;
    mem[size + 1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* compute: no MPI call until every origin's value is here */
        volatile long *v = mem;
        double t0 = rt_now();
        int missing = size - 1;
        while (missing && rt_now() - t0 < 120) {
            missing = 0;
            for (int r = 1; r < size; r++)
                missing += v[r] != 1000 + r || v[size + 1] != size - 1;
        }
        CHECK(!missing, "%s: after 120 s of computing, %d origins' values are missing",
              allocate ? "allocate" : "create", missing);
    } else {
        long val = 1000 + rank, got = -1, one = 1, old = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&val, 1, MPI_LONG, 0, rank, 1, MPI_LONG, win);
        MPI_Win_unlock(0, win);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Get(&got, 1, MPI_LONG, 0, rank, 1, MPI_LONG, win);
        MPI_Win_unlock(0, win);
        CHECK(got == val, "get back %ld, want %ld", got, val);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, size + 1, MPI_SUM, win);
        MPI_Win_unlock(0, win);
        CHECK(old >= 0 && old < size - 1, "fetch_and_op old %ld", old);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(own);
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    const char *cma = getenv("TANDEM_CMA");
    run(1);
    if (!cma || strcmp(cma, "off"))
        run(0);
    return rt_finish();
}
