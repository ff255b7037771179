/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_split_type: MPI_COMM_TYPE_SHARED groups the processes of one node
 * (reference: the host names, exchanged by point-to-point), ordered by key;
 * MPI_COMM_TYPE_HW_GUIDED with "mpi_hw_resource_type" = "mpi_shared_memory"
 * does the same, unknown resource types and a missing key give MPI_COMM_NULL;
 * MPI_UNDEFINED gives MPI_COMM_NULL; ranks passing MPI_UNDEFINED may be mixed
 * with ranks passing SHARED. (split_hw tests the hardware levels.) */
#include "tutil.h"

#include <unistd.h>

#define HOSTLEN 64

static int size;
static char (*hosts)[HOSTLEN];

/* Expected members: same host, and ordered by key then world rank; -1 = undefined. */
static void check(MPI_Comm c, const int *keys, const int *defined, const char *what) {
    if (!defined[t_rank]) {
        T_CHECK(c == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL", what);
        return;
    }
    T_CHECK(c != MPI_COMM_NULL, "%s: got MPI_COMM_NULL", what);
    if (c == MPI_COMM_NULL)
        return;
    int *m = malloc(sizeof(int) * (size_t)size), n = 0;
    for (int i = 0; i < size; i++)
        if (defined[i] && strcmp(hosts[i], hosts[t_rank]) == 0)
            m[n++] = i;
    for (int i = 1; i < n; i++) {
        int x = m[i], j = i - 1;
        while (j >= 0 && keys[m[j]] > keys[x]) {
            m[j + 1] = m[j];
            j--;
        }
        m[j + 1] = x;
    }
    int csize, crank, me = -1;
    MPI_Comm_size(c, &csize);
    MPI_Comm_rank(c, &crank);
    for (int i = 0; i < n; i++)
        if (m[i] == t_rank)
            me = i;
    T_CHECK(csize == n && crank == me, "%s: rank %d of %d, expected %d of %d", what, crank, csize,
            me, n);
    if (csize == n) {
        int *got = malloc(sizeof(int) * (size_t)n);
        t_allgather_ints(c, &t_rank, 1, got);
        for (int i = 0; i < n; i++)
            T_CHECK(got[i] == m[i], "%s: rank %d is world %d, expected %d", what, i, got[i], m[i]);
        free(got);
    }
    MPI_Info used;
    char v[64];
    int flag;
    MPI_Comm_get_info(c, &used);
    MPI_Info_get(used, "mpi_hw_resource_type", 63, v, &flag);
    T_CHECK(flag && strcmp(v, "mpi_shared_memory") == 0, "%s: mpi_hw_resource_type hint", what);
    MPI_Info_free(&used);
    free(m);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    hosts = calloc((size_t)size, HOSTLEN);
    char me[HOSTLEN] = "";
    gethostname(me, HOSTLEN - 1);
    t_allgather_ints(MPI_COMM_WORLD, (int *)me, HOSTLEN / (int)sizeof(int), (int *)hosts);
    int *keys = malloc(sizeof(int) * (size_t)size), *defined = malloc(sizeof(int) * (size_t)size);
    int *none = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; i++) {
        keys[i] = (i * 5) % 3 - i; /* some ties, not monotonic */
        defined[i] = 1;
    }
    MPI_Comm c;
    T_OK(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, keys[t_rank], MPI_INFO_NULL, &c));
    check(c, keys, defined, "shared");
    /* split the node communicator again: still one node */
    if (c != MPI_COMM_NULL) {
        MPI_Comm c2;
        T_OK(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c2));
        int r1, r2;
        MPI_Comm_compare(c, c2, &r1);
        T_CHECK(r1 == MPI_CONGRUENT, "shared split of a node communicator: compare %d", r1);
        MPI_Comm_rank(c, &r1);
        MPI_Comm_rank(c2, &r2);
        T_CHECK(r1 == r2, "rank %d -> %d", r1, r2);
        MPI_Comm_free(&c2);
        MPI_Comm_free(&c);
    }

    /* some ranks MPI_UNDEFINED */
    for (int i = 0; i < size; i++)
        defined[i] = i % 2 == 0;
    T_OK(MPI_Comm_split_type(MPI_COMM_WORLD, defined[t_rank] ? MPI_COMM_TYPE_SHARED : MPI_UNDEFINED,
                             keys[t_rank], MPI_INFO_NULL, &c));
    check(c, keys, defined, "shared with undefined");
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    for (int i = 0; i < size; i++)
        defined[i] = 1;

    /* HW_GUIDED */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    T_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, keys[t_rank], info, &c));
    check(c, keys, defined, "hw_guided mpi_shared_memory");
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    MPI_Info_set(info, "mpi_hw_resource_type", "@dont-thread-on-me@");
    T_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    T_CHECK(c == MPI_COMM_NULL, "hw_guided with an unknown resource type");
    T_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    T_CHECK(c == MPI_COMM_NULL, "hw_guided without the info key");
    T_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    check(c, keys, none, "all undefined");
    MPI_Info_free(&info);

    /* an invalid split type is an error */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    T_FAILS(MPI_ERR_ARG, MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c));
    free(keys);
    free(defined);
    free(none);
    free(hosts);
    return t_finish();
}
