/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control variables take effect as their scope says (2 ranks or more):
 *  - the environment's values are what they read (the testlist sets
 *    TANDEM_COOP_RATIO=40);
 *  - TANDEM_EAGER_LIMIT written before MPI_Init (4 KiB) applies from MPI_Init:
 *    an 8 KiB message goes by rendezvous; written at run time, between phases,
 *    by every rank (128 KiB, then 16 KiB), the next 64 KiB messages go eagerly,
 *    then by rendezvous again: the protocol counters show it;
 *  - TANDEM_BCAST_ALGORITHM written between phases changes the next
 *    broadcasts' algorithm (the collective counters show it);
 *  - TANDEM_LOG written at run time turns MPI_T's own messages on (the
 *    testlist counts them), TANDEM_PROTO_STATS at run time prints the
 *    counters at MPI_Finalize (the testlist counts the lines).
 */
#include "mtest.h"

static char buf[64 << 10];

static unsigned long long rndv_received(MPI_T_pvar_session s, MPI_T_pvar_handle *h) {
    unsigned long long n = 0;
    for (int p = 0; p < 5; p++)
        n += m_read(s, h[p]);
    return n;
}

/* Rank 0 sends one message of `bytes` to rank 1. */
static void one(int bytes, int tag) {
    if (m_rank == 0)
        MPI_Send(buf, bytes, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
    else if (m_rank == 1)
        MPI_Recv(buf, bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
    int provided;
    M_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    M_CHECK(m_cvar_read_int("TANDEM_COOP_RATIO") == 40, "TANDEM_COOP_RATIO reads %d",
            m_cvar_read_int("TANDEM_COOP_RATIO"));
    m_cvar_write_ull("TANDEM_EAGER_LIMIT", 4096, MPI_SUCCESS);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    M_CHECK(m_cvar_read_ull("TANDEM_EAGER_LIMIT") == 4096, "eager limit %llu",
            m_cvar_read_ull("TANDEM_EAGER_LIMIT"));

    MPI_T_pvar_session s;
    M_OK(MPI_T_pvar_session_create(&s));
    static const char *const protos[] = {"tandem_rndv_pipeline_msgs", "tandem_rndv_rget_msgs",
                                         "tandem_rndv_rput_msgs", "tandem_rndv_coop_msgs",
                                         "tandem_rndv_rtr_msgs"};
    MPI_T_pvar_handle rndv[5];
    for (int p = 0; p < 5; p++)
        rndv[p] = m_handle(s, protos[p], MPI_T_PVAR_CLASS_COUNTER, NULL, 1);
    MPI_T_pvar_handle eager =
        m_handle(s, "tandem_eager_long_msgs", MPI_T_PVAR_CLASS_COUNTER, NULL, 1);

    /* the limit written before MPI_Init: 8 KiB goes by rendezvous */
    one(8192, 1);
    if (m_rank == 1)
        M_CHECK(rndv_received(s, rndv) == 1, "8 KiB with a 4 KiB limit: %llu rendezvous",
                rndv_received(s, rndv));

    /* between phases, every rank alike: 64 KiB eagerly */
    MPI_Barrier(MPI_COMM_WORLD);
    m_cvar_write_ull("TANDEM_EAGER_LIMIT", 128 << 10, MPI_SUCCESS);
    M_OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    one(64 << 10, 2);
    one(64 << 10, 2);
    if (m_rank == 0)
        M_CHECK(m_read(s, eager) == 2, "64 KiB with a 128 KiB limit: %llu sent eagerly",
                m_read(s, eager));
    if (m_rank == 1)
        M_CHECK(rndv_received(s, rndv) == 0, "64 KiB with a 128 KiB limit: %llu rendezvous",
                rndv_received(s, rndv));
    MPI_Barrier(MPI_COMM_WORLD);
    m_cvar_write_ull("TANDEM_EAGER_LIMIT", 16 << 10, MPI_SUCCESS);
    M_OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    one(64 << 10, 3);
    if (m_rank == 0)
        M_CHECK(m_read(s, eager) == 0, "64 KiB with a 16 KiB limit: %llu eager", m_read(s, eager));
    if (m_rank == 1)
        M_CHECK(rndv_received(s, rndv) == 1, "64 KiB with a 16 KiB limit: %llu rendezvous",
                rndv_received(s, rndv));

    /* the broadcast's algorithm, between phases */
    MPI_T_pvar_handle lin =
        m_handle(s, "tandem_coll_bcast_linear", MPI_T_PVAR_CLASS_COUNTER, NULL, 1);
    MPI_T_pvar_handle bin =
        m_handle(s, "tandem_coll_bcast_binomial", MPI_T_PVAR_CLASS_COUNTER, NULL, 1);
    MPI_T_pvar_handle lin_b =
        m_handle(s, "tandem_coll_bcast_linear_bytes", MPI_T_PVAR_CLASS_AGGREGATE, NULL, 1);
    M_CHECK(m_cvar_read_int("TANDEM_BCAST_ALGORITHM") == 0, "bcast algorithm %d (auto: 0)",
            m_cvar_read_int("TANDEM_BCAST_ALGORITHM"));
    MPI_Barrier(MPI_COMM_WORLD);
    m_cvar_write_int("TANDEM_BCAST_ALGORITHM", 3, MPI_SUCCESS); /* linear */
    MPI_Bcast(buf, 100, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Bcast(buf, 100, MPI_BYTE, 0, MPI_COMM_WORLD);
    M_CHECK(m_read(s, lin) == 2 && m_read(s, bin) == 0 && m_read(s, lin_b) == 200,
            "linear %llu (%llu B), binomial %llu", m_read(s, lin), m_read(s, lin_b),
            m_read(s, bin));
    m_cvar_write_int("TANDEM_BCAST_ALGORITHM", 1, MPI_SUCCESS); /* binomial */
    MPI_Bcast(buf, 100, MPI_BYTE, 0, MPI_COMM_WORLD);
    M_CHECK(m_read(s, lin) == 2 && m_read(s, bin) == 1, "linear %llu, binomial %llu",
            m_read(s, lin), m_read(s, bin));
    m_cvar_write_int("TANDEM_BCAST_ALGORITHM", 0, MPI_SUCCESS);

    /* the log levels at run time: an MPI_T refusal is told at info level */
    MPI_T_cvar_handle log;
    int count;
    char level[256];
    M_OK(MPI_T_cvar_handle_alloc(m_cvar("TANDEM_LOG"), NULL, &log, &count));
    M_OK(MPI_T_cvar_read(log, level));
    M_CHECK(!strcmp(level, "warn") && count == 256, "TANDEM_LOG reads '%s' (count %d)", level,
            count);
    M_OK(MPI_T_cvar_write(log, "mpit:info"));
    m_cvar_write_int("TANDEM_RANK", 0, MPI_T_ERR_CVAR_SET_NEVER);
    M_OK(MPI_T_cvar_write(log, "warn"));
    m_cvar_write_int("TANDEM_SIZE", 0, MPI_T_ERR_CVAR_SET_NEVER); /* not told */
    M_OK(MPI_T_cvar_handle_free(&log));
    m_cvar_write_int("TANDEM_PROTO_STATS", 1, MPI_SUCCESS);

    M_OK(MPI_T_pvar_session_free(&s));
    int errs = m_finish();
    MPI_Finalize();
    M_OK(MPI_T_finalize());
    if (m_rank == 0 && errs + m_errs == 0)
        printf(" No Errors\n");
    return m_errs ? 1 : 0;
}
