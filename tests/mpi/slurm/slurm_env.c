/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Under Slurm's srun (--mpi=pmi2 or --mpi=pmix): MPI_COMM_WORLD is the step's tasks, each
 * rank the task Slurm says it is (SLURM_PROCID of SLURM_NTASKS), and the library's node map
 * is Slurm's: the ranks of MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) are exactly those with
 * this task's SLURM_NODEID, in rank order, and the processor name is SLURMD_NODENAME. Once
 * MPI_Init returns, the launcher's connection variables (PMI_FD, PMIX_NAMESPACE, ...) are
 * gone, so a program the rank starts is not a second client on its connection; data
 * crosses the nodes both ways.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int env_int(const char *name) {
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return -1;
    long n = strtol(v, &end, 10);
    return *end ? -1 : (int)n;
}

int main(int argc, char **argv) {
    int rank, size, errs = 0;
    int procid = env_int("SLURM_PROCID"), ntasks = env_int("SLURM_NTASKS");
    int nodeid = env_int("SLURM_NODEID");
    const char *nodename = getenv("SLURMD_NODENAME");
    if (procid < 0 || ntasks < 1 || nodeid < 0 || !nodename) {
        printf("not a task of srun (SLURM_PROCID, SLURM_NTASKS, SLURM_NODEID, SLURMD_NODENAME)\n");
        return 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != procid || size != ntasks) {
        printf("rank %d of %d: Slurm says task %d of %d\n", rank, size, procid, ntasks);
        errs++;
    }
    static const char *gone[] = {"PMI_FD", "PMI_PORT", "PMI_ID", "PMIX_NAMESPACE", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
        if (getenv(gone[i])) {
            printf("rank %d: %s=%s is still set after MPI_Init\n", rank, gone[i], getenv(gone[i]));
            errs++;
        }

    char name[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(name, &len);
    if (strcmp(name, nodename) != 0) {
        printf("rank %d: processor name '%s', Slurm's node '%s'\n", rank, name, nodename);
        errs++;
    }

    /* the node of every rank as Slurm tells it, against the library's shared communicator */
    int *nodes = malloc((size_t)size * sizeof(int));
    MPI_Allgather(&nodeid, 1, MPI_INT, nodes, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm shared;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    int ssize, srank;
    MPI_Comm_size(shared, &ssize);
    MPI_Comm_rank(shared, &srank);
    int *members = malloc((size_t)ssize * sizeof(int));
    MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, shared);
    int k = 0;
    for (int r = 0; r < size; r++) {
        if (nodes[r] != nodeid)
            continue;
        if (k >= ssize || members[k] != r) {
            printf("rank %d (node %d): shared-memory rank %d is world rank %d, Slurm puts world "
                   "rank %d on this node\n",
                   rank, nodeid, k, k < ssize ? members[k] : -1, r);
            errs++;
            break;
        }
        k++;
    }
    if (k != ssize) {
        printf("rank %d (node %d): %d ranks share memory with it, Slurm puts %d on its node\n",
               rank, nodeid, ssize, k);
        errs++;
    }

    /* a ring across the nodes, both ways */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got[2] = {-1, -1};
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &got[0], 1, MPI_INT, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&rank, 1, MPI_INT, left, 2, &got[1], 1, MPI_INT, right, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (got[0] != left || got[1] != right) {
        printf("rank %d: the ring gave %d and %d, expected %d and %d\n", rank, got[0], got[1], left,
               right);
        errs++;
    }

    MPI_Comm_free(&shared);
    free(members);
    free(nodes);
    int all;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
