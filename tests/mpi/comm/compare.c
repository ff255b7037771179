/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Comm_compare for every relation (reference: the world ranks of both
 * communicators, compared as sequences and as sets), MPI_Comm_group of each,
 * names (set, get, truncation, per communicator, not inherited). */
#include "tutil.h"

static int ref_compare(MPI_Comm a, MPI_Comm b) {
    if (a == b)
        return MPI_IDENT;
    int na, nb;
    MPI_Comm_size(a, &na);
    MPI_Comm_size(b, &nb);
    int *wa = malloc(sizeof(int) * (size_t)na), *wb = malloc(sizeof(int) * (size_t)nb);
    t_allgather_ints(a, &t_rank, 1, wa);
    t_allgather_ints(b, &t_rank, 1, wb);
    int same_order = na == nb, same_set = na == nb;
    for (int i = 0; same_order && i < na; i++)
        same_order = wa[i] == wb[i];
    for (int i = 0; same_set && i < na; i++) {
        int found = 0;
        for (int j = 0; j < nb; j++)
            found |= wa[i] == wb[j];
        same_set = found;
    }
    free(wa);
    free(wb);
    return same_order ? MPI_CONGRUENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c[6];
    int n = 0;
    c[n++] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &c[n++]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, -t_rank, &c[n++]);             /* reversed */
    MPI_Comm_split(MPI_COMM_WORLD, 0, (t_rank + 1) % size, &c[n++]); /* rotated */
    MPI_Comm_split(MPI_COMM_WORLD, 0, -t_rank, &c[n++]);             /* reversed again */
    MPI_Comm_dup(MPI_COMM_SELF, &c[n++]);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            int res = -1, ref;
            T_OK(MPI_Comm_compare(c[i], c[j], &res));
            if (i == 5 || j == 5) { /* self vs others: sizes differ unless size 1 */
                ref = i == j ? MPI_IDENT : (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL);
            } else {
                ref = ref_compare(c[i], c[j]);
            }
            T_CHECK(res == ref, "compare(c%d, c%d) = %d, expected %d", i, j, res, ref);
            MPI_Group gi, gj;
            MPI_Comm_group(c[i], &gi);
            MPI_Comm_group(c[j], &gj);
            MPI_Group_compare(gi, gj, &res);
            int gref = ref == MPI_CONGRUENT ? MPI_IDENT : ref;
            T_CHECK(res == gref, "group compare(c%d, c%d) = %d, expected %d", i, j, res, gref);
            MPI_Group_free(&gi);
            MPI_Group_free(&gj);
        }
    }

    /* names */
    char name[MPI_MAX_OBJECT_NAME], longname[400];
    int len;
    MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
    T_CHECK(strcmp(name, "MPI_COMM_SELF") == 0 && len == 13, "self name '%s'", name);
    MPI_Comm_set_name(c[1], "first dup");
    MPI_Comm_set_name(c[2], "reversed");
    MPI_Comm_get_name(c[1], name, &len);
    T_CHECK(strcmp(name, "first dup") == 0 && len == 9, "name '%s' len %d", name, len);
    MPI_Comm_get_name(c[2], name, &len);
    T_CHECK(strcmp(name, "reversed") == 0, "name '%s'", name);
    MPI_Comm_set_name(c[1], "renamed");
    MPI_Comm_get_name(c[1], name, &len);
    T_CHECK(strcmp(name, "renamed") == 0 && len == 7, "rename: '%s'", name);
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = 0;
    MPI_Comm_set_name(c[3], longname);
    MPI_Comm_get_name(c[3], name, &len);
    T_CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len &&
                strncmp(name, longname, (size_t)len) == 0,
            "long name truncated to %d", len);
    MPI_Comm d;
    MPI_Comm_dup(c[1], &d);
    MPI_Comm_get_name(d, name, &len);
    T_CHECK(len == 0, "a dup inherited the name '%s'", name);
    MPI_Comm_free(&d);
    MPI_Comm_set_name(MPI_COMM_WORLD, "my world");
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    T_CHECK(strcmp(name, "my world") == 0, "world renamed '%s'", name);
    MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD");

    for (int i = 1; i < n; i++)
        MPI_Comm_free(&c[i]);
    return t_finish();
}
