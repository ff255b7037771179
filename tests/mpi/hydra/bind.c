/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where MPI_Init leaves each rank (TANDEM_BIND, src/boot/bind.c), every rank of the job on
 * this machine. The argument says what must happen to the mask the launcher gave:
 *   tandem    the launcher left it unbound: rank r runs on the r-th of `size` equal
 *             blocks of it, in order (one CPU each when the ranks fill the machine)
 *   kept      unchanged (TANDEM_BIND=none, Tandem's mpirun --bind-to none)
 *   launcher  the launcher bound it to one CPU (skipped when it did not): unchanged
 *   over      more ranks than its CPUs (skipped when not): unchanged
 * Skipped (77) where the host has fewer CPUs than the case needs.
 */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

static void show(const cpu_set_t *set, char *out, size_t len) {
    size_t o = 0;
    out[0] = 0;
    for (int c = 0; c < CPU_SETSIZE && o + 16 < len; c++)
        if (CPU_ISSET(c, set))
            o += (size_t)snprintf(out + o, len - o, "%s%d", o ? "," : "", c);
}

int main(int argc, char **argv) {
    cpu_set_t given, now;
    int rank, size, errs = 0, skip = 0;
    const char *want = argc > 1 ? argv[1] : "tandem";
    sched_getaffinity(0, sizeof(given), &given);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sched_getaffinity(0, sizeof(now), &now);
    char a[256], b[256];
    show(&given, a, sizeof(a));
    show(&now, b, sizeof(b));
    int ncpus = CPU_COUNT(&given);
    if (!strcmp(want, "tandem")) {
        if (ncpus < size) {
            skip = 1; /* fewer CPUs than ranks: the library must not bind */
        } else {
            /* every rank of the job runs on this machine here */
            int k = ncpus / size;
            cpu_set_t want_set;
            CPU_ZERO(&want_set);
            for (int c = 0, seen = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &given) && seen++ / k == rank)
                    CPU_SET(c, &want_set);
            if (!CPU_EQUAL(&now, &want_set)) {
                char w[256];
                show(&want_set, w, sizeof(w));
                printf("rank %d: started on cpus %s, runs on %s after MPI_Init, not on %s\n", rank,
                       a, b, w);
                errs++;
            }
        }
    } else if (!strcmp(want, "kept") || !strcmp(want, "launcher") || !strcmp(want, "over")) {
        if (!strcmp(want, "launcher") && ncpus != 1)
            skip = 1; /* the launcher could not bind here */
        if (!strcmp(want, "over") && ncpus >= size)
            skip = 1; /* enough CPUs: not oversubscribed */
        if (!skip && !CPU_EQUAL(&given, &now)) {
            printf("rank %d: started on cpus %s, runs on %s after MPI_Init (expected the "
                   "launcher's placement kept)\n",
                   rank, a, b);
            errs++;
        }
    } else {
        printf("rank %d: unknown case '%s' (tandem, kept, launcher, over)\n", rank, want);
        errs++;
    }
    int all_errs = 0, any_skip = 0;
    MPI_Allreduce(&errs, &all_errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&skip, &any_skip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_skip && !all_errs) {
        if (rank == 0)
            printf("SKIP: case %s does not apply with %d ranks started on cpus %s\n", want, size,
                   a);
        MPI_Finalize();
        return 77;
    }
    if (rank == 0 && !all_errs)
        printf("No Errors\n");
    MPI_Finalize();
    return all_errs ? 1 : 0;
}
