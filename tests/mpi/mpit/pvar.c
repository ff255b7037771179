/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Performance variables count exactly what a program does, per session and
 * handle (2 ranks):
 *  - counters: rank 0 sends 7 short (8 B), 3 long eager (1000 B) and 2
 *    rendezvous (64 KiB) messages; its eager counters and the bytes count
 *    exactly those, rank 1's rendezvous counters the 2 it chose a protocol
 *    for; a second session started later counts only what came after; stop,
 *    start, reset, readreset and write behave as MPI-4.1 16.3.7 says;
 *  - the queues: receives posted (level, high-water mark, reset), messages
 *    kept unexpected (level, bytes, high and low-water marks);
 *  - the matching timer runs only while a handle of it is started;
 *  - variables bound to two communicators each count their own messages and
 *    collectives, and keep their counts after MPI_Comm_free and MPI_Finalize;
 *  - unbound variables are read after MPI_Finalize (process-wide counters).
 */
#include "mtest.h"

#define C MPI_T_PVAR_CLASS_COUNTER
#define A MPI_T_PVAR_CLASS_AGGREGATE

static char big[64 << 10];

static void send_n(int n, int bytes, int tag) {
    for (int i = 0; i < n; i++)
        MPI_Send(big, bytes, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
}

static void recv_n(int n, int bytes, int tag) {
    for (int i = 0; i < n; i++)
        MPI_Recv(big, bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void counters(void) {
    MPI_T_pvar_session s, later;
    M_OK(MPI_T_pvar_session_create(&s));
    M_OK(MPI_T_pvar_session_create(&later));
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_T_pvar_handle eager = m_handle(s, "tandem_eager_msgs", C, NULL, 0);
    MPI_T_pvar_handle shrt = m_handle(s, "tandem_eager_short_msgs", C, NULL, 0);
    MPI_T_pvar_handle shrt_b = m_handle(s, "tandem_eager_short_bytes", A, NULL, 0);
    MPI_T_pvar_handle lng = m_handle(s, "tandem_eager_long_msgs", C, NULL, 0);
    MPI_T_pvar_handle lng_b = m_handle(s, "tandem_eager_long_bytes", A, NULL, 0);
    MPI_T_pvar_handle sent = m_handle(s, "tandem_comm_p2p_sent_msgs", C, &world, 0);
    MPI_T_pvar_handle sent_b = m_handle(s, "tandem_comm_p2p_sent_bytes", A, &world, 0);
    MPI_T_pvar_handle recvs = m_handle(s, "tandem_comm_p2p_recvs", C, &world, 0);
    static const char *const protos[] = {"tandem_rndv_pipeline_msgs", "tandem_rndv_rget_msgs",
                                         "tandem_rndv_rput_msgs", "tandem_rndv_coop_msgs",
                                         "tandem_rndv_rtr_msgs"};
    MPI_T_pvar_handle rndv[5];
    for (int p = 0; p < 5; p++)
        rndv[p] = m_handle(s, protos[p], C, NULL, 0);
    MPI_T_pvar_handle rndv_bytes = m_handle(s, "tandem_rndv_coop_bytes", A, NULL, 0);
    /* allocated, not started: reads the starting value, 0 */
    M_CHECK(m_read(s, eager) == 0, "an unstarted counter reads %llu", m_read(s, eager));
    MPI_Barrier(MPI_COMM_WORLD);

    M_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    MPI_T_pvar_handle later_eager = MPI_T_PVAR_HANDLE_NULL;
    if (m_rank == 0) {
        send_n(5, 8, 1);
        later_eager = m_handle(later, "tandem_eager_msgs", C, NULL, 1);
        send_n(2, 8, 1);
        send_n(3, 1000, 2);
        send_n(2, 64 << 10, 3);
    } else {
        recv_n(7, 8, 1);
        recv_n(3, 1000, 2);
        recv_n(2, 64 << 10, 3);
    }
    M_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    unsigned long long rndv_sum = 0;
    for (int p = 0; p < 5; p++)
        rndv_sum += m_read(s, rndv[p]);
    if (m_rank == 0) {
        M_CHECK(m_read(s, eager) == 10, "eager %llu, sent 10", m_read(s, eager));
        M_CHECK(m_read(s, shrt) == 7 && m_read(s, shrt_b) == 56, "short %llu (%llu B), sent 7",
                m_read(s, shrt), m_read(s, shrt_b));
        M_CHECK(m_read(s, lng) == 3 && m_read(s, lng_b) == 3000, "long %llu (%llu B), sent 3",
                m_read(s, lng), m_read(s, lng_b));
        M_CHECK(m_read(s, sent) == 12 && m_read(s, sent_b) == 56 + 3000 + 2 * (64 << 10),
                "sent on MPI_COMM_WORLD %llu (%llu B)", m_read(s, sent), m_read(s, sent_b));
        M_CHECK(m_read(later, later_eager) == 5, "the later session counted %llu, not 5",
                m_read(later, later_eager));
        M_CHECK(rndv_sum == 0, "the sender counted %llu rendezvous", rndv_sum);
    } else {
        M_CHECK(m_read(s, eager) == 0, "the receiver sent %llu eager messages", m_read(s, eager));
        M_CHECK(rndv_sum == 2, "rendezvous %llu, received 2", rndv_sum);
        M_CHECK(m_read(s, recvs) == 12, "receives on MPI_COMM_WORLD %llu", m_read(s, recvs));
        /* send x recv of 64 KiB: COOP, or the one-way adaptive choice's pipeline */
        M_CHECK(m_read(s, rndv_bytes) == (unsigned long long)(64 << 10) * m_read(s, rndv[3]),
                "coop bytes %llu for %llu messages", m_read(s, rndv_bytes), m_read(s, rndv[3]));
    }

    /* stopped: nothing counts; started again: counting goes on from the sum */
    if (m_rank == 0) {
        send_n(1, 8, 4);
        M_OK(MPI_T_pvar_start(s, eager));
        send_n(1, 8, 4);
        M_OK(MPI_T_pvar_stop(s, eager));
        M_CHECK(m_read(s, eager) == 11, "eager %llu after a stop and a start", m_read(s, eager));
        M_OK(MPI_T_pvar_reset(s, eager));
        M_CHECK(m_read(s, eager) == 0, "eager %llu after reset", m_read(s, eager));
        M_OK(MPI_T_pvar_start(s, eager));
        send_n(2, 8, 4);
        unsigned long long v = 0;
        M_OK(MPI_T_pvar_readreset(s, eager, &v));
        M_CHECK(v == 2 && m_read(s, eager) == 0, "readreset gave %llu, then %llu", v,
                m_read(s, eager));
        unsigned long long w = 100;
        M_OK(MPI_T_pvar_write(s, eager, &w));
        send_n(1, 8, 4);
        M_CHECK(m_read(s, eager) == 101, "eager %llu after writing 100 and a send",
                m_read(s, eager));
        M_OK(MPI_T_pvar_handle_free(later, &later_eager));
    } else {
        recv_n(5, 8, 4);
    }
    M_OK(MPI_T_pvar_session_free(&s));
    M_OK(MPI_T_pvar_session_free(&later));
}

static void queues(void) {
    MPI_T_pvar_session s;
    M_OK(MPI_T_pvar_session_create(&s));
    if (m_rank == 1) {
        MPI_T_pvar_handle len =
            m_handle(s, "tandem_posted_recvq_length", MPI_T_PVAR_CLASS_LEVEL, NULL, 0);
        MPI_T_pvar_handle hwm =
            m_handle(s, "tandem_posted_recvq_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, NULL, 1);
        M_CHECK(m_read(s, len) == 0 && m_read(s, hwm) == 0, "posted %llu, mark %llu at start",
                m_read(s, len), m_read(s, hwm));
        MPI_Request r[5];
        int go = 1;
        for (int i = 0; i < 5; i++)
            MPI_Irecv(big + i, 1, MPI_BYTE, 0, 10 + i, MPI_COMM_WORLD, &r[i]);
        M_CHECK(m_read(s, len) == 5 && m_read(s, hwm) == 5, "posted %llu, mark %llu after 5",
                m_read(s, len), m_read(s, hwm));
        MPI_Send(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
        MPI_Waitall(5, r, MPI_STATUSES_IGNORE);
        M_CHECK(m_read(s, len) == 0 && m_read(s, hwm) == 5, "posted %llu, mark %llu after all",
                m_read(s, len), m_read(s, hwm));
        M_OK(MPI_T_pvar_reset(s, hwm));
        M_CHECK(m_read(s, hwm) == 0, "mark %llu after reset", m_read(s, hwm));

        /* 4 messages of 100 bytes and an empty one arrive before their receives */
        MPI_T_pvar_handle ulen =
            m_handle(s, "tandem_unexpected_recvq_length", MPI_T_PVAR_CLASS_LEVEL, NULL, 0);
        MPI_T_pvar_handle ubytes =
            m_handle(s, "tandem_unexpected_recvq_bytes", MPI_T_PVAR_CLASS_LEVEL, NULL, 0);
        MPI_T_pvar_handle uhwm =
            m_handle(s, "tandem_unexpected_recvq_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, NULL, 1);
        MPI_T_pvar_handle bhwm = m_handle(s, "tandem_unexpected_recvq_bytes_hwm",
                                          MPI_T_PVAR_CLASS_HIGHWATERMARK, NULL, 1);
        MPI_Send(&go, 1, MPI_INT, 0, 19, MPI_COMM_WORLD);
        MPI_Probe(0, 29, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* the last one: all are here */
        M_CHECK(m_read(s, ulen) == 5 && m_read(s, ubytes) == 400, "unexpected %llu (%llu B)",
                m_read(s, ulen), m_read(s, ubytes));
        MPI_T_pvar_handle ulwm =
            m_handle(s, "tandem_unexpected_recvq_lwm", MPI_T_PVAR_CLASS_LOWWATERMARK, NULL, 1);
        M_CHECK(m_read(s, ulwm) == 5, "low mark %llu with 5 queued", m_read(s, ulwm));
        recv_n(3, 100, 20);
        M_CHECK(m_read(s, ulen) == 2 && m_read(s, ulwm) == 2, "unexpected %llu, low mark %llu",
                m_read(s, ulen), m_read(s, ulwm));
        recv_n(1, 100, 20);
        recv_n(1, 0, 29);
        M_CHECK(m_read(s, ulen) == 0 && m_read(s, ubytes) == 0 && m_read(s, ulwm) == 0,
                "unexpected %llu (%llu B), low mark %llu at the end", m_read(s, ulen),
                m_read(s, ubytes), m_read(s, ulwm));
        M_CHECK(m_read(s, uhwm) == 5 && m_read(s, bhwm) == 400, "high marks %llu, %llu B",
                m_read(s, uhwm), m_read(s, bhwm));
        /* stopped, a mark keeps its value */
        M_OK(MPI_T_pvar_stop(s, uhwm));
        M_CHECK(m_read(s, uhwm) == 5, "a stopped mark reads %llu", m_read(s, uhwm));
        MPI_Send(&go, 1, MPI_INT, 0, 39, MPI_COMM_WORLD);
    } else {
        int go;
        MPI_Recv(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 5; i++)
            MPI_Send(big, 1, MPI_BYTE, 1, 10 + i, MPI_COMM_WORLD);
        MPI_Recv(&go, 1, MPI_INT, 1, 19, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        send_n(4, 100, 20);
        send_n(1, 0, 29);
        /* nothing else may reach rank 1 (a collective's message) before it has looked */
        MPI_Recv(&go, 1, MPI_INT, 1, 39, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    M_OK(MPI_T_pvar_session_free(&s));
}

static void timer(void) {
    MPI_T_pvar_session s;
    M_OK(MPI_T_pvar_session_create(&s));
    int t = m_pvar("tandem_match_time", MPI_T_PVAR_CLASS_TIMER);
    MPI_T_pvar_handle on, off;
    int count;
    M_OK(MPI_T_pvar_handle_alloc(s, t, NULL, &on, &count));
    M_OK(MPI_T_pvar_handle_alloc(s, t, NULL, &off, &count));
    M_OK(MPI_T_pvar_start(s, on));
    if (m_rank == 0)
        send_n(50, 8, 30);
    else
        recv_n(50, 8, 30);
    M_OK(MPI_T_pvar_stop(s, on));
    double a = -1, b = -1, c = -1;
    M_OK(MPI_T_pvar_read(s, on, &a));
    M_OK(MPI_T_pvar_read(s, off, &b));
    if (m_rank == 0)
        send_n(50, 8, 30);
    else
        recv_n(50, 8, 30);
    M_OK(MPI_T_pvar_read(s, on, &c));
    M_CHECK(m_rank == 0 || a > 0, "matching 50 receives took %g s", a);
    M_CHECK(a < 1.0 && b == 0 && c == a, "timer %g, never started %g, stopped then %g", a, b, c);
    M_OK(MPI_T_pvar_session_free(&s));
}

static MPI_T_pvar_session bound_s;
static MPI_T_pvar_handle bound_sent[2], bound_coll[2], global_eager;

static void bound(void) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm world = MPI_COMM_WORLD;
    M_OK(MPI_T_pvar_session_create(&bound_s));
    const char *what = m_rank == 0 ? "tandem_comm_p2p_sent_msgs" : "tandem_comm_p2p_recvs";
    bound_sent[0] = m_handle(bound_s, what, C, &world, 1);
    bound_sent[1] = m_handle(bound_s, what, C, &dup, 1);
    bound_coll[0] = m_handle(bound_s, "tandem_comm_coll_ops", C, &world, 1);
    bound_coll[1] = m_handle(bound_s, "tandem_comm_coll_ops", C, &dup, 1);
    for (int i = 0; i < 8; i++) {
        MPI_Comm c = i < 3 ? MPI_COMM_WORLD : dup;
        if (m_rank == 0)
            MPI_Send(big, 4, MPI_BYTE, 1, 40, c);
        else
            MPI_Recv(big, 4, MPI_BYTE, 0, 40, c, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(dup);
    MPI_Barrier(dup);
    MPI_Bcast(big, 10, MPI_BYTE, 0, MPI_COMM_WORLD);
    M_CHECK(m_read(bound_s, bound_sent[0]) == 3 && m_read(bound_s, bound_sent[1]) == 5,
            "%s: %llu on MPI_COMM_WORLD, %llu on its duplicate", what,
            m_read(bound_s, bound_sent[0]), m_read(bound_s, bound_sent[1]));
    M_CHECK(m_read(bound_s, bound_coll[0]) == 1 && m_read(bound_s, bound_coll[1]) == 2,
            "collectives %llu on MPI_COMM_WORLD, %llu on its duplicate",
            m_read(bound_s, bound_coll[0]), m_read(bound_s, bound_coll[1]));
    /* the handle holds its communicator: still read after MPI_Comm_free */
    MPI_Comm_free(&dup);
    M_CHECK(m_read(bound_s, bound_sent[1]) == 5, "%llu on the freed duplicate",
            m_read(bound_s, bound_sent[1]));
}

int main(int argc, char **argv) {
    int provided;
    M_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    /* before MPI_Init: process-wide counters exist already */
    MPI_T_pvar_session early;
    M_OK(MPI_T_pvar_session_create(&early));
    global_eager = m_handle(early, "tandem_eager_msgs", C, NULL, 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "pvar needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    counters();
    MPI_Barrier(MPI_COMM_WORLD);
    queues();
    MPI_Barrier(MPI_COMM_WORLD);
    timer();
    MPI_Barrier(MPI_COMM_WORLD);
    bound();
    int errs = m_finish();
    unsigned long long before_fin = m_read(early, global_eager);
    MPI_Finalize();
    /* after MPI_Finalize: bound handles keep the final counts, unbound ones read on */
    M_CHECK(m_read(bound_s, bound_sent[0]) == 3 && m_read(bound_s, bound_sent[1]) == 5,
            "after MPI_Finalize: %llu and %llu", m_read(bound_s, bound_sent[0]),
            m_read(bound_s, bound_sent[1]));
    unsigned long long after_fin = m_read(early, global_eager);
    M_CHECK(after_fin >= before_fin && before_fin > 0, "eager messages %llu, then %llu", before_fin,
            after_fin);
    MPI_T_pvar_handle fresh = m_handle(early, "tandem_eager_msgs", C, NULL, 1);
    M_CHECK(m_read(early, fresh) == 0, "a handle started after MPI_Finalize counted %llu",
            m_read(early, fresh));
    M_OK(MPI_T_pvar_session_free(&bound_s));
    M_OK(MPI_T_pvar_session_free(&early));
    M_OK(MPI_T_finalize());
    if (m_rank == 0 && errs + m_errs == 0)
        printf(" No Errors\n");
    return m_errs ? 1 : 0;
}
