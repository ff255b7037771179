/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Under a PMIx server (Open MPI's mpirun): MPI_COMM_WORLD is the server's job, with the
 * rank PMIX_RANK names and the size Open MPI's launcher says (OMPI_COMM_WORLD_SIZE), not a
 * singleton per process; the node map puts the ranks the launcher calls local on one node
 * (MPI_COMM_TYPE_SHARED against OMPI_COMM_WORLD_LOCAL_SIZE); after MPI_Init the variables
 * that would make a child speak to the server as this rank are gone; nothing named tandem*
 * is in /dev/shm; ranks exchange data through the node's segment.
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    int rank, size, errs = 0;
    const char *env_rank = getenv("PMIX_RANK");
    const char *env_size = getenv("OMPI_COMM_WORLD_SIZE");
    const char *env_local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!env_rank || !getenv("PMIX_NAMESPACE")) {
        printf("not started by a PMIx server (no PMIX_RANK or PMIX_NAMESPACE)\n");
        return 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (atoi(env_rank) != rank) {
        printf("rank %d: PMIX_RANK is %s\n", rank, env_rank);
        errs++;
    }
    if (env_size && atoi(env_size) != size) {
        printf("rank %d: size %d, OMPI_COMM_WORLD_SIZE is %s\n", rank, size, env_size);
        errs++;
    }
    if (size < 2) {
        printf("rank %d: a job of %d (run it with 2 or more ranks)\n", rank, size);
        errs++;
    }
    for (char **e = environ; *e; e++) {
        if (!strncmp(*e, "PMIX_NAMESPACE=", 15) || !strncmp(*e, "PMIX_RANK=", 10) ||
            !strncmp(*e, "PMIX_SERVER_URI", 15)) {
            printf("rank %d: %.80s is still set after MPI_Init\n", rank, *e);
            errs++;
        }
    }
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    if (node_size != (env_local ? atoi(env_local) : size)) {
        printf("rank %d: %d ranks share its node, the launcher says %s\n", rank, node_size,
               env_local ? env_local : "all");
        errs++;
    }
    MPI_Comm_free(&node);
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
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
