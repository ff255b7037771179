/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_T with MPI-4 sessions and no MPI_Init (2 ranks): tandem_library_state
 * follows the first session's init and the last one's finalize; a performance
 * variable binds to a communicator made from the session's mpi://WORLD, counts
 * its messages and keeps them once the session is gone; a tunable read when the
 * transport is set up can be written before the first session only, a run-time
 * one after the last too (the transport stays).
 */
#include "mtest.h"

static int state(void) {
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count, v = -1;
    M_OK(MPI_T_pvar_session_create(&s));
    M_OK(MPI_T_pvar_handle_alloc(s, m_pvar("tandem_library_state", MPI_T_PVAR_CLASS_STATE), NULL,
                                 &h, &count));
    M_OK(MPI_T_pvar_read(s, h, &v));
    M_OK(MPI_T_pvar_session_free(&s));
    return v;
}

int main(void) {
    int provided;
    M_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    M_CHECK(state() == 0, "state %d before any session", state());
    m_cvar_write_int("TANDEM_COOP_RATIO", 50, MPI_SUCCESS); /* before: allowed */

    MPI_Session ses = MPI_SESSION_NULL;
    MPI_Group world = MPI_GROUP_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    M_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ses));
    M_CHECK(state() == 1, "state %d with a session open", state());
    M_OK(MPI_Group_from_session_pset(ses, "mpi://WORLD", &world));
    M_OK(MPI_Comm_create_from_group(world, "org.tandem.test.mpit", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                    &comm));
    MPI_Comm_rank(comm, &m_rank);
    m_cvar_write_int("TANDEM_COOP_RATIO", 50, MPI_T_ERR_CVAR_SET_NOT_NOW);

    MPI_T_pvar_session s;
    M_OK(MPI_T_pvar_session_create(&s));
    const char *what = m_rank == 0 ? "tandem_comm_p2p_sent_msgs" : "tandem_comm_p2p_recvs";
    MPI_T_pvar_handle h = m_handle(s, what, MPI_T_PVAR_CLASS_COUNTER, &comm, 1);
    char buf[16] = {0};
    for (int i = 0; i < 2; i++) {
        if (m_rank == 0)
            MPI_Send(buf, 16, MPI_BYTE, 1, i, comm);
        else
            MPI_Recv(buf, 16, MPI_BYTE, 0, i, comm, MPI_STATUS_IGNORE);
    }
    M_CHECK(m_read(s, h) == 2, "%s on the session's communicator: %llu", what, m_read(s, h));
    int errs = 0;
    MPI_Allreduce(&m_errs, &errs, 1, MPI_INT, MPI_SUM, comm);
    MPI_Comm_free(&comm);
    MPI_Group_free(&world);
    M_OK(MPI_Session_finalize(&ses));

    M_CHECK(state() == 2, "state %d after the last session", state());
    M_CHECK(m_read(s, h) == 2, "%s after MPI_Session_finalize: %llu", what, m_read(s, h));
    m_cvar_write_int("TANDEM_COOP_RATIO", 50, MPI_T_ERR_CVAR_SET_NOT_NOW);
    m_cvar_write_ull("TANDEM_EAGER_LIMIT", 8192, MPI_SUCCESS);
    M_CHECK(m_cvar_read_ull("TANDEM_EAGER_LIMIT") == 8192, "eager limit %llu",
            m_cvar_read_ull("TANDEM_EAGER_LIMIT"));
    M_OK(MPI_T_pvar_session_free(&s));
    M_OK(MPI_T_finalize());
    if (m_rank == 0 && errs + m_errs == 0)
        printf(" No Errors\n");
    return m_errs ? 1 : 0;
}
