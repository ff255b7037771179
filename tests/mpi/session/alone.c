/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Sessions Model without MPI_Init: a session, its process sets and their
 * info, groups from them, a communicator from the WORLD group (point-to-point,
 * eager and rendezvous sizes, collectives, dup and split of it), the session's
 * info, a second communicator from the SELF group, and the World Model staying
 * uninitialised throughout.
 */
#include "stest.h"

static void check_psets(MPI_Session s, int *world_size) {
    int n = -1;
    T_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    T_CHECK(n == 2, "%d process sets", n);
    const char *want[] = {"mpi://WORLD", "mpi://SELF"};
    for (int i = 0; i < n && i < 2; i++) {
        char name[MPI_MAX_PSET_NAME_LEN + 1];
        int len = 0;
        /* a length of 0 asks for the length only, NUL included, and leaves the name */
        strcpy(name, "untouched");
        T_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        T_CHECK(len == (int)strlen(want[i]) + 1 && strcmp(name, "untouched") == 0,
                "pset %d: length %d, name '%s'", i, len, name);
        len = (int)sizeof(name);
        T_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        T_CHECK(strcmp(name, want[i]) == 0 && len == (int)strlen(want[i]) + 1,
                "pset %d: '%s' (length %d)", i, name, len);
        /* a short buffer gets the name cut, NUL-terminated */
        len = 6;
        memset(name, 'x', sizeof(name));
        T_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        T_CHECK(strcmp(name, "mpi:/") == 0 && len == (int)strlen(want[i]) + 1,
                "pset %d truncated: '%.8s' (length %d)", i, name, len);
    }
    /* names are case-insensitive */
    MPI_Info info = MPI_INFO_NULL;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    T_OK(MPI_Session_get_pset_info(s, "MPI://world", &info));
    T_OK(MPI_Info_get_string(info, "mpi_size", &(int){sizeof(val)}, val, &flag));
    T_CHECK(flag && atoi(val) >= 1, "mpi://WORLD mpi_size '%s' (flag %d)", val, flag);
    *world_size = flag ? atoi(val) : -1;
    MPI_Info_free(&info);
    T_OK(MPI_Session_get_pset_info(s, "mpi://SELF", &info));
    T_OK(MPI_Info_get_string(info, "mpi_size", &(int){sizeof(val)}, val, &flag));
    T_CHECK(flag && strcmp(val, "1") == 0, "mpi://SELF mpi_size '%s'", val);
    MPI_Info_free(&info);
}

static void check_comm(MPI_Comm c, int rank, int size) {
    int r = -1, n = -1;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    T_CHECK(r == rank && n == size, "rank %d of %d, want %d of %d", r, n, rank, size);
    /* a ring, eager and rendezvous sizes */
    for (int bytes = 8; bytes <= (1 << 20); bytes *= 64) {
        char *out = malloc((size_t)bytes), *in = malloc((size_t)bytes);
        memset(out, 'a' + rank % 26, (size_t)bytes);
        memset(in, 0, (size_t)bytes);
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        T_OK(MPI_Sendrecv(out, bytes, MPI_BYTE, to, 5, in, bytes, MPI_BYTE, from, 5, c,
                          MPI_STATUS_IGNORE));
        T_CHECK(in[0] == 'a' + from % 26 && in[bytes - 1] == 'a' + from % 26,
                "%d bytes from %d: %c..%c", bytes, from, in[0], in[bytes - 1]);
        free(out);
        free(in);
    }
    int sum = -1, root_val = rank == 0 ? 42 : -1;
    T_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    T_CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);
    T_OK(MPI_Bcast(&root_val, 1, MPI_INT, 0, c));
    T_CHECK(root_val == 42, "bcast %d", root_val);
    int *all = malloc(sizeof(int) * (size_t)size);
    T_OK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, c));
    for (int i = 0; i < size; i++)
        T_CHECK(all[i] == i, "allgather[%d] = %d", i, all[i]);
    free(all);
    T_OK(MPI_Barrier(c));
    /* communicators derived from it work as any other */
    MPI_Comm d = MPI_COMM_NULL, e = MPI_COMM_NULL;
    T_OK(MPI_Comm_dup(c, &d));
    T_OK(MPI_Comm_split(d, rank % 2, -rank, &e));
    int esize = 0, erank = -1;
    MPI_Comm_size(e, &esize);
    MPI_Comm_rank(e, &erank);
    T_CHECK(esize == (size - rank % 2 + 1) / 2, "split size %d", esize);
    sum = -1;
    T_OK(MPI_Allreduce(&erank, &sum, 1, MPI_INT, MPI_SUM, e));
    T_CHECK(sum == esize * (esize - 1) / 2, "split allreduce %d", sum);
    MPI_Comm_free(&e);
    MPI_Comm_free(&d);
}

int main(void) {
    int flag = -1;
    MPI_Session s = MPI_SESSION_NULL;
    T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    T_CHECK(s != MPI_SESSION_NULL, "no session");
    MPI_Initialized(&flag);
    T_CHECK(flag == 0, "MPI_Initialized says %d with a session open", flag);

    int size = -1;
    check_psets(s, &size);

    MPI_Group world = MPI_GROUP_NULL, self = MPI_GROUP_NULL;
    T_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    T_OK(MPI_Group_from_session_pset(s, "mpi://SELF", &self));
    int gsize = -1, grank = -1;
    MPI_Group_size(world, &gsize);
    MPI_Group_rank(world, &grank);
    T_CHECK(gsize == size && grank >= 0 && grank < gsize, "WORLD group: rank %d of %d (size %d)",
            grank, gsize, size);
    t_rank = grank;
    MPI_Group_size(self, &gsize);
    MPI_Group_rank(self, &flag);
    T_CHECK(gsize == 1 && flag == 0, "SELF group: rank %d of %d", flag, gsize);
    int same = -1;
    MPI_Group_translate_ranks(self, 1, &(int){0}, world, &same);
    T_CHECK(same == grank, "SELF's rank in WORLD: %d, want %d", same, grank);

    MPI_Comm comm = MPI_COMM_NULL, selfcomm = MPI_COMM_NULL;
    MPI_Info hints;
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "tandem_test_hint", "yes");
    T_OK(MPI_Comm_create_from_group(world, "org.tandem.test.alone", hints, MPI_ERRORS_RETURN,
                                    &comm));
    MPI_Info_free(&hints);
    T_OK(MPI_Comm_create_from_group(self, "org.tandem.test.alone.self", MPI_INFO_NULL,
                                    MPI_ERRORS_RETURN, &selfcomm));
    if (comm != MPI_COMM_NULL) {
        check_comm(comm, grank, size);
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        MPI_Comm_get_errhandler(comm, &eh);
        T_CHECK(eh == MPI_ERRORS_RETURN, "errhandler %#x", (unsigned)eh);
        MPI_Errhandler_free(&eh);
        MPI_Info used = MPI_INFO_NULL;
        char val[16] = "";
        flag = 0;
        T_OK(MPI_Comm_get_info(comm, &used));
        MPI_Info_get_string(used, "tandem_test_hint", &(int){sizeof(val)}, val, &flag);
        T_CHECK(flag && strcmp(val, "yes") == 0, "the info hint came back as '%s'", val);
        MPI_Info_free(&used);
    }
    if (selfcomm != MPI_COMM_NULL)
        check_comm(selfcomm, 0, 1);

    /* the session's info: the thread level provided */
    MPI_Info used = MPI_INFO_NULL;
    char level[64] = "";
    flag = 0;
    T_OK(MPI_Session_get_info(s, &used));
    MPI_Info_get_string(used, "thread_level", &(int){sizeof(level)}, level, &flag);
    T_CHECK(flag && strcmp(level, "MPI_THREAD_SERIALIZED") == 0, "thread_level '%s'", level);
    MPI_Info_free(&used);
    MPI_Session s2 = MPI_SESSION_NULL;
    MPI_Info ask;
    MPI_Info_create(&ask);
    MPI_Info_set(ask, "thread_level", "MPI_THREAD_FUNNELED");
    T_OK(MPI_Session_init(ask, MPI_ERRORS_RETURN, &s2));
    MPI_Info_free(&ask);
    T_OK(MPI_Session_get_info(s2, &used));
    MPI_Info_get_string(used, "thread_level", &(int){sizeof(level)}, level, &flag);
    T_CHECK(flag && strcmp(level, "MPI_THREAD_FUNNELED") == 0, "asked FUNNELED, got '%s'", level);
    MPI_Info_free(&used);
    T_OK(MPI_Session_finalize(&s2));
    T_CHECK(s2 == MPI_SESSION_NULL, "finalize left the handle %#x", (unsigned)s2);

    MPI_Initialized(&flag);
    T_CHECK(flag == 0, "MPI_Initialized says %d", flag);
    MPI_Finalized(&flag);
    T_CHECK(flag == 0, "MPI_Finalized says %d", flag);

    if (comm != MPI_COMM_NULL)
        t_verdict(comm);
    MPI_Comm_free(&comm);
    MPI_Comm_free(&selfcomm);
    MPI_Group_free(&world);
    MPI_Group_free(&self);
    T_OK(MPI_Session_finalize(&s));
    return 0;
}
