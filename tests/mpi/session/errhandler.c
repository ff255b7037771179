/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error handlers on sessions, without MPI_Init: made and freed when MPI is not
 * initialised, given to MPI_Session_init (which reports its own errors to it),
 * called by errors in the session's calls and by MPI_Session_call_errhandler with
 * the session's handle, got and set with reference counting, predefined ones set
 * and got back, and handlers of the wrong kind refused on sessions and
 * communicators.
 */
#include "stest.h"

static int calls, last_code;
static MPI_Session last_session;

static void on_error(MPI_Session *s, int *code, ...) {
    calls++;
    last_code = *code;
    last_session = *s;
}

static void comm_handler(MPI_Comm *c, int *code, ...) {
    (void)c;
    (void)code;
}

static int class_of(int code) {
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

int main(void) {
    /* MPI is not initialised: handlers may be made and freed all the same */
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, spare = MPI_ERRHANDLER_NULL,
                   late = MPI_ERRHANDLER_NULL;
    T_OK(MPI_Session_create_errhandler(on_error, &eh));
    T_OK(MPI_Session_create_errhandler(on_error, &spare));
    T_OK(MPI_Session_create_errhandler(on_error, &late));
    T_OK(MPI_Errhandler_free(&spare));
    T_CHECK(spare == MPI_ERRHANDLER_NULL, "free left %#x", (unsigned)spare);

    /* MPI_Session_init's own errors go to its errhandler argument */
    MPI_Session s = MPI_SESSION_NULL;
    int rc = MPI_Session_init((MPI_Info)0x9c00dead, eh, &s);
    T_CHECK(class_of(rc) == MPI_ERR_INFO && calls == 1 && last_code == rc &&
                last_session == MPI_SESSION_NULL,
            "bad info: rc %d (class %d), %d calls, code %d, session %#x", rc, class_of(rc), calls,
            last_code, (unsigned)last_session);
    T_CHECK(s == MPI_SESSION_NULL, "a failed MPI_Session_init set the session to %#x", (unsigned)s);

    T_OK(MPI_Session_init(MPI_INFO_NULL, eh, &s));
    MPI_Comm world = t_world_comm(s, "org.tandem.test.errhandler");

    /* errors of the session's calls: the handler gets the session and the code */
    calls = 0;
    char name[64];
    int len = (int)sizeof(name);
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 7, &len, name);
    T_CHECK(class_of(rc) == MPI_ERR_ARG && calls == 1 && last_code == rc && last_session == s,
            "get_nth_pset(7): rc class %d, %d calls, session %#x", class_of(rc), calls,
            (unsigned)last_session);
    MPI_Group g = MPI_GROUP_NULL;
    rc = MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g);
    T_CHECK(class_of(rc) == MPI_ERR_ARG && calls == 2 && last_code == rc,
            "unknown pset: class %d, %d calls", class_of(rc), calls);
    T_CHECK(t_msg_has(rc, "mpi://NOWHERE") && t_msg_has(rc, "MPI_Group_from_session_pset"),
            "the message does not name the pset and the call");

    /* MPI_Session_call_errhandler */
    calls = 0;
    T_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    T_CHECK(calls == 1 && last_code == MPI_ERR_OTHER && last_session == s,
            "call_errhandler: %d calls, code %d", calls, last_code);

    /* get gives a reference of its own; the session keeps the handler after the
     * user frees both of theirs */
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    T_OK(MPI_Session_get_errhandler(s, &got));
    T_CHECK(got == eh, "get_errhandler gave %#x, want %#x", (unsigned)got, (unsigned)eh);
    T_OK(MPI_Errhandler_free(&got));
    MPI_Errhandler mine = eh;
    T_OK(MPI_Errhandler_free(&mine));
    calls = 0;
    T_OK(MPI_Session_call_errhandler(s, MPI_ERR_ARG));
    T_CHECK(calls == 1 && last_code == MPI_ERR_ARG, "after the user's frees: %d calls", calls);

    /* predefined handlers */
    MPI_Errhandler pre[] = {MPI_ERRORS_RETURN, MPI_ERRORS_ARE_FATAL, MPI_ERRORS_ABORT};
    for (int i = 0; i < 3; i++) {
        T_OK(MPI_Session_set_errhandler(s, pre[i]));
        T_OK(MPI_Session_get_errhandler(s, &got));
        T_CHECK(got == pre[i], "set %#x, got %#x", (unsigned)pre[i], (unsigned)got);
        T_OK(MPI_Errhandler_free(&got));
    }
    T_OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    /* with MPI_ERRORS_RETURN the call returns, nobody is called */
    calls = 0;
    T_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    T_CHECK(calls == 0, "%d calls under MPI_ERRORS_RETURN", calls);

    /* handlers of the wrong kind */
    MPI_Errhandler ceh;
    T_OK(MPI_Comm_create_errhandler(comm_handler, &ceh));
    T_FAILS(MPI_ERR_ARG, "MPI_Session_set_errhandler", MPI_Session_set_errhandler(s, ceh));
    T_FAILS(MPI_ERR_ARG, "MPI_Session_set_errhandler",
            MPI_Session_set_errhandler(s, MPI_ERRHANDLER_NULL));
    T_FAILS(MPI_ERR_ARG, "MPI_Comm_set_errhandler", MPI_Comm_set_errhandler(world, late));
    T_OK(MPI_Comm_set_errhandler(world, ceh));
    T_OK(MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN));
    T_OK(MPI_Errhandler_free(&ceh));
    /* a session handler given to a communicator's creation is refused, on the session
     * of the group (MPI_ERRORS_RETURN now) */
    MPI_Group wg;
    MPI_Comm c = MPI_COMM_NULL;
    T_OK(MPI_Group_from_session_pset(s, "mpi://SELF", &wg));
    T_FAILS(MPI_ERR_ARG, "MPI_Comm_create_from_group",
            MPI_Comm_create_from_group(wg, "t", MPI_INFO_NULL, late, &c));
    MPI_Group_free(&wg);

    t_verdict(world);
    MPI_Comm_free(&world);
    T_OK(MPI_Session_finalize(&s));
    /* MPI is no longer initialised: handlers may still be freed */
    T_OK(MPI_Errhandler_free(&late));
    return 0;
}
