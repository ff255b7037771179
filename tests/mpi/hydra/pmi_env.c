/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Under a PMI launcher: MPI_COMM_WORLD is the launcher's job (its PMI_RANK and PMI_SIZE,
 * when it sets them), not a singleton per process; after MPI_Init the socket variables
 * (PMI_FD, PMI_PORT, PMI_ID) are gone, so a program the rank starts cannot talk on the
 * rank's PMI connection; nothing named tandem* is in /dev/shm once every rank is in
 * (the /dev/shm fallback unlinks its name before MPI_Init returns); ranks exchange
 * data through the node's segment and the processor name is this host's.
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank, size, errs = 0;
    const char *env_rank = getenv("PMI_RANK"), *env_size = getenv("PMI_SIZE");
    if (!getenv("PMI_FD") && !getenv("PMI_PORT")) {
        printf("not started by a PMI launcher (no PMI_FD or PMI_PORT)\n");
        return 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (env_rank && atoi(env_rank) != rank) {
        printf("rank %d: PMI_RANK is %s\n", rank, env_rank);
        errs++;
    }
    if (env_size && atoi(env_size) != size) {
        printf("rank %d: size %d, PMI_SIZE is %s\n", rank, size, env_size);
        errs++;
    }
    if (size < 2) {
        printf("rank %d: a job of %d (run it with 2 or more ranks)\n", rank, size);
        errs++;
    }
    const char *gone[] = {"PMI_FD", "PMI_PORT", "PMI_ID"};
    for (int i = 0; i < 3; i++) {
        if (getenv(gone[i])) {
            printf("rank %d: %s=%s is still set after MPI_Init\n", rank, gone[i], getenv(gone[i]));
            errs++;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strncmp(e->d_name, "tandem", 6)) {
            printf("rank %d: /dev/shm/%s exists after MPI_Init\n", rank, e->d_name);
            errs++;
        }
    }
    if (d)
        closedir(d);
    /* a ring of messages through the shared segment */
    int token = rank == 0 ? 1000 : -1;
    if (rank == 0) {
        MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (token != 1000 + size - 1) {
            printf("rank 0: the token came back as %d, not %d\n", token, 1000 + size - 1);
            errs++;
        }
    } else {
        MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token++;
        MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
    }
    char name[MPI_MAX_PROCESSOR_NAME], host[256] = "";
    int len;
    MPI_Get_processor_name(name, &len);
    gethostname(host, sizeof(host) - 1);
    if (strcmp(name, host) != 0) {
        printf("rank %d: processor name %s, host %s\n", rank, name, host);
        errs++;
    }
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
