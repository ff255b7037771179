/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Finalize deletes the attributes of MPI_COMM_SELF first, last set first
 * (MPI-4.1 §11.2.4), while MPI is still usable (MPI_Finalized is false in the
 * callbacks). Checked after MPI_Finalize: each rank exits 1 on a wrong order,
 * rank 0 prints No Errors. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 5
static int order[N + 1], norder, bad;

static int del(MPI_Comm c, int kv, void *val, void *extra) {
    (void)kv;
    (void)extra;
    int fin = 1, rank = -1;
    MPI_Finalized(&fin);
    if (fin)
        bad++; /* must still be usable */
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || rank < 0)
        bad++;
    if (c != MPI_COMM_SELF)
        bad++;
    if (norder < N + 1)
        order[norder++] = (int)(long)val;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, kv[N];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < N; i++)
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del, &kv[i], NULL);
    /* set in the order 2 0 4 1 3, then replace 0 (keeps its place) */
    int set_order[N] = {2, 0, 4, 1, 3};
    for (int i = 0; i < N; i++)
        MPI_Comm_set_attr(MPI_COMM_SELF, kv[set_order[i]], (void *)(long)set_order[i]);
    MPI_Comm_set_attr(MPI_COMM_SELF, kv[0], (void *)0L);
    /* a freed keyval's attribute is still deleted */
    MPI_Comm_free_keyval(&kv[4]);
    int before = norder;
    MPI_Finalize();
    int errs = bad + (before != 1); /* the replace deleted the old value of 0 */
    int expect[N] = {3, 1, 4, 0, 2};
    if (norder != N + 1)
        errs++;
    for (int i = 0; i < N && i + 1 < norder; i++)
        if (order[i + 1] != expect[i])
            errs++;
    if (errs) {
        fprintf(stderr, "rank %d: delete order:", rank);
        for (int i = 0; i < norder; i++)
            fprintf(stderr, " %d", order[i]);
        fprintf(stderr, " (expected 0 then 3 1 4 0 2), %d errors\n", errs);
        return 1;
    }
    if (rank == 0)
        printf(" No Errors\n");
    return 0;
}
