/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_INFO_ENV: readable, dup-able, not modifiable; the keys we fill have the
 * values the process can check itself (maxprocs = world size, command = the
 * program, wdir = the working directory, host = the host name). */
#include "../comm/tutil.h"

#include <unistd.h>

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int size, n, flag;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char v[MPI_MAX_INFO_VAL + 1], ref[4096];
    T_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    T_OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, v, &flag));
    T_CHECK(flag && atoi(v) == size, "maxprocs '%s'", flag ? v : "");
    T_OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, v, &flag));
    T_CHECK(flag && strcmp(v, argv[0]) == 0, "command '%s', argv[0] '%s'", flag ? v : "", argv[0]);
    T_OK(MPI_Info_get(MPI_INFO_ENV, "wdir", MPI_MAX_INFO_VAL, v, &flag));
    T_CHECK(flag && getcwd(ref, sizeof(ref)) && strcmp(v, ref) == 0, "wdir '%s'", v);
    T_OK(MPI_Info_get(MPI_INFO_ENV, "host", MPI_MAX_INFO_VAL, v, &flag));
    gethostname(ref, sizeof(ref));
    T_CHECK(flag && strcmp(v, ref) == 0, "host '%s'", v);
    T_OK(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, v, &flag));
    T_CHECK(flag && strncmp(v, "MPI_THREAD_", 11) == 0, "thread_level '%s'", v);
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        T_OK(MPI_Info_get_nthkey(MPI_INFO_ENV, i, key));
    }
    MPI_Info d;
    T_OK(MPI_Info_dup(MPI_INFO_ENV, &d));
    int nd;
    MPI_Info_get_nkeys(d, &nd);
    T_CHECK(nd == n, "dup of MPI_INFO_ENV has %d keys, not %d", nd, n);
    T_OK(MPI_Info_set(d, "maxprocs", "1000"));
    MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, v, &flag);
    T_CHECK(atoi(v) == size, "MPI_INFO_ENV changed through its dup");
    MPI_Info_free(&d);
    T_FAILS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_ENV, "maxprocs", "3"));
    T_FAILS(MPI_ERR_INFO, MPI_Info_delete(MPI_INFO_ENV, "maxprocs"));
    MPI_Info e = MPI_INFO_ENV;
    T_FAILS(MPI_ERR_INFO, MPI_Info_free(&e));
    return t_finish();
}
