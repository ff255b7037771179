/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad arguments to the session calls, beside the World Model (MPI_COMM_WORLD's
 * handler is MPI_ERRORS_RETURN, so that errors with no session to report to come
 * back too): invalid and finalized sessions (MPI_ERR_SESSION), NULL pointers,
 * unknown process sets, out-of-range indices, bad info and thread levels, bad
 * error handlers. Every error has its class and a message that names the call and
 * the rank; nothing is left half done.
 */
#include "stest.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Session s, gone;
    T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &gone));
    MPI_Session dead = gone;
    T_OK(MPI_Session_finalize(&gone));

    /* sessions that are not */
    MPI_Session bad[] = {MPI_SESSION_NULL, dead, (MPI_Session)0xb8001234, (MPI_Session)0x12345678,
                         (MPI_Session)MPI_COMM_WORLD};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        MPI_Session b = bad[i];
        int n, len = 16;
        char name[16];
        MPI_Info info;
        MPI_Group g;
        MPI_Errhandler eh;
        T_FAILS(MPI_ERR_SESSION, "MPI_Session_get_num_psets",
                MPI_Session_get_num_psets(b, MPI_INFO_NULL, &n));
        T_FAILS(MPI_ERR_SESSION, "MPI_Session_get_nth_pset",
                MPI_Session_get_nth_pset(b, MPI_INFO_NULL, 0, &len, name));
        T_FAILS(MPI_ERR_SESSION, "MPI_Session_get_pset_info",
                MPI_Session_get_pset_info(b, "mpi://WORLD", &info));
        T_FAILS(MPI_ERR_SESSION, "MPI_Session_get_info", MPI_Session_get_info(b, &info));
        T_FAILS(MPI_ERR_SESSION, "MPI_Group_from_session_pset",
                MPI_Group_from_session_pset(b, "mpi://WORLD", &g));
        T_FAILS(MPI_ERR_SESSION, "MPI_Session_set_errhandler",
                MPI_Session_set_errhandler(b, MPI_ERRORS_RETURN));
        T_FAILS(MPI_ERR_SESSION, "MPI_Session_get_errhandler", MPI_Session_get_errhandler(b, &eh));
        T_FAILS(MPI_ERR_SESSION, "MPI_Session_call_errhandler",
                MPI_Session_call_errhandler(b, MPI_ERR_OTHER));
        MPI_Session copy = b;
        T_FAILS(MPI_ERR_SESSION, "MPI_Session_finalize", MPI_Session_finalize(&copy));
        T_CHECK(copy == b, "a failed finalize changed the handle to %#x", (unsigned)copy);
    }
    T_FAILS(MPI_ERR_ARG, "MPI_Session_finalize", MPI_Session_finalize(NULL));

    /* MPI_Session_init */
    MPI_Session t = MPI_SESSION_NULL;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_WHATEVER");
    T_FAILS(MPI_ERR_INFO_VALUE, "MPI_Session_init", MPI_Session_init(info, MPI_ERRORS_RETURN, &t));
    MPI_Info_free(&info);
    T_FAILS(MPI_ERR_INFO, "MPI_Session_init",
            MPI_Session_init((MPI_Info)0x9c00beef, MPI_ERRORS_RETURN, &t));
    T_FAILS(MPI_ERR_ARG, "MPI_Session_init",
            MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL));
    T_FAILS(MPI_ERR_ARG, "MPI_Session_init",
            MPI_Session_init(MPI_INFO_NULL, MPI_ERRHANDLER_NULL, &t));
    MPI_Errhandler ceh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &ceh); /* a predefined one: fine */
    T_OK(MPI_Session_init(MPI_INFO_NULL, ceh, &t));
    T_OK(MPI_Session_finalize(&t));
    T_CHECK(t == MPI_SESSION_NULL, "finalize left %#x", (unsigned)t);

    /* process sets */
    int n = -1, len;
    char name[64];
    T_FAILS(MPI_ERR_ARG, "MPI_Session_get_num_psets",
            MPI_Session_get_num_psets(s, MPI_INFO_NULL, NULL));
    T_FAILS(MPI_ERR_INFO, "MPI_Session_get_num_psets",
            MPI_Session_get_num_psets(s, (MPI_Info)0x9c00beef, &n));
    T_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    int idx[] = {-1, n, 1000};
    for (int i = 0; i < 3; i++) {
        len = (int)sizeof(name);
        int rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, idx[i], &len, name);
        T_FAILS(MPI_ERR_ARG, "MPI_Session_get_nth_pset", rc);
        T_CHECK(len == (int)sizeof(name), "a failed call changed pset_len to %d", len);
    }
    T_FAILS(MPI_ERR_ARG, "MPI_Session_get_nth_pset",
            MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, NULL, name));
    len = -3;
    T_FAILS(MPI_ERR_ARG, "MPI_Session_get_nth_pset",
            MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name));
    len = 8;
    T_FAILS(MPI_ERR_ARG, "MPI_Session_get_nth_pset",
            MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL));
    T_FAILS(MPI_ERR_INFO, "MPI_Session_get_nth_pset",
            MPI_Session_get_nth_pset(s, (MPI_Info)0x9c00beef, 0, &len, name));
    const char *unknown[] = {"mpi://WORLD ", "mpi://", "", "mpi://UNIVERSE", "@qerty!#$"};
    for (int i = 0; i < 5; i++) {
        MPI_Info pi = MPI_INFO_NULL;
        MPI_Group g = MPI_GROUP_NULL;
        int rc = MPI_Session_get_pset_info(s, unknown[i], &pi);
        T_FAILS(MPI_ERR_ARG, "MPI_Session_get_pset_info", rc);
        T_CHECK(rc == MPI_SUCCESS || t_msg_has(rc, unknown[i]), "the message does not name '%s'",
                unknown[i]);
        T_FAILS(MPI_ERR_ARG, "MPI_Group_from_session_pset",
                MPI_Group_from_session_pset(s, unknown[i], &g));
        T_CHECK(pi == MPI_INFO_NULL && g == MPI_GROUP_NULL, "a failed call set an output");
    }
    T_FAILS(MPI_ERR_ARG, "MPI_Session_get_pset_info", MPI_Session_get_pset_info(s, NULL, &info));
    T_FAILS(MPI_ERR_ARG, "MPI_Session_get_pset_info",
            MPI_Session_get_pset_info(s, "mpi://SELF", NULL));
    T_FAILS(MPI_ERR_ARG, "MPI_Group_from_session_pset",
            MPI_Group_from_session_pset(s, NULL, &(MPI_Group){0}));
    T_FAILS(MPI_ERR_ARG, "MPI_Group_from_session_pset",
            MPI_Group_from_session_pset(s, "mpi://SELF", NULL));
    T_FAILS(MPI_ERR_ARG, "MPI_Session_get_info", MPI_Session_get_info(s, NULL));

    /* error handlers */
    MPI_Errhandler user;
    T_OK(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))abort, &user));
    T_FAILS(MPI_ERR_ARG, "MPI_Session_set_errhandler", MPI_Session_set_errhandler(s, user));
    T_FAILS(MPI_ERR_ARG, "MPI_Session_init", MPI_Session_init(MPI_INFO_NULL, user, &t));
    T_FAILS(MPI_ERR_ARG, "MPI_Session_get_errhandler", MPI_Session_get_errhandler(s, NULL));
    MPI_Errhandler_free(&user);
    T_FAILS(MPI_ERR_ARG, "MPI_Session_create_errhandler",
            MPI_Session_create_errhandler(NULL, &user));

    /* the session still works */
    MPI_Comm c;
    MPI_Group g;
    T_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    T_OK(MPI_Comm_create_from_group(g, "org.tandem.test.badargs", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                    &c));
    T_OK(MPI_Barrier(c));
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
    T_OK(MPI_Session_finalize(&s));
    t_verdict(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
