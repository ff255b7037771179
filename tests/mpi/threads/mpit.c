/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tool information interface from several threads at once (arg 1: T threads,
 * default 4; arg 2: iterations, default 400). MPI_T_init_thread grants
 * MPI_THREAD_MULTIPLE. Each thread, on its own duplicate of MPI_COMM_WORLD, nests
 * MPI_T_init_thread/MPI_T_finalize, creates a session, allocates handles of the
 * communicator-bound counters tandem_comm_p2p_sent_msgs and _sent_bytes and of the
 * process-wide tandem_eager_msgs, starts them, exchanges k messages with the same thread
 * of its peer (rank ^ 1), stops, reads and checks the exact counts (k, k x bytes; the
 * process-wide count at least k more), resets, frees the handles and the session; then
 * churns: CHURN sessions with a handle each, made and freed (every other one first), each
 * inside its own MPI_T_init_thread/MPI_T_finalize; then registers a callback for the
 * event tandem_unexp_enqueued, sends its peer messages it has not posted receives for
 * yet (so the receiving threads raise the event while other threads register and free
 * theirs), checks every delivered instance names the peer, and frees the registration.
 * A session or handle list, a registration list or the init count two threads change
 * at once loses entries or corrupts (MPI_T_ERR_INVALID_*, MPI_T_ERR_NOT_INITIALIZED,
 * wrong counts, a crash; under ThreadSanitizer a report). Libraries without the
 * variables skip (77).
 */
#include "thrtest.h"

#define CHURN 64

static MPI_Comm comms[THR_MAX];
static int iters, peer, i_msgs, i_bytes, i_eager, i_unexp = -1;
static int wrong_peer, delivered; /* atomics: callbacks run on any thread */

#if MPI_VERSION >= 4 /* MPI_T events; Open MPI 4.1 (an anchor) has none */

static void on_unexp(MPI_T_event_instance ev, MPI_T_event_registration r, MPI_T_cb_safety cs,
                     void *user) {
    (void)r, (void)cs, (void)user;
    int src = -1;
    if (MPI_T_event_read(ev, 0, &src) != MPI_SUCCESS || src != peer)
        __atomic_add_fetch(&wrong_peer, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&delivered, 1, __ATOMIC_RELAXED);
}

/* the peer's same thread sends EV_MSGS messages before either posts a receive */
#define EV_MSGS 4
static void event_churn(int t, MPI_Comm c) {
    if (i_unexp < 0)
        return;
    int provided = -1;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    MPI_T_event_registration reg;
    MPI_OK(MPI_T_event_handle_alloc(i_unexp, NULL, MPI_INFO_NULL, &reg));
    MPI_OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, NULL,
                                         on_unexp));
    int out[EV_MSGS], in[EV_MSGS];
    MPI_Request rq[EV_MSGS];
    for (int j = 0; j < EV_MSGS; j++) {
        out[j] = t * 100 + j;
        MPI_OK(MPI_Isend(&out[j], 1, MPI_INT, peer, 1000 + j, c, &rq[j]));
    }
    MPI_OK(MPI_Barrier(c)); /* both sides' sends are out: they arrive unexpected */
    for (int j = 0; j < EV_MSGS; j++) {
        MPI_OK(MPI_Recv(&in[j], 1, MPI_INT, peer, 1000 + j, c, MPI_STATUS_IGNORE));
        CHECK(in[j] == t * 100 + j, "event churn: message %d holds %d", j, in[j]);
    }
    MPI_OK(MPI_Waitall(EV_MSGS, rq, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_T_event_handle_free(reg, NULL, NULL));
    MPI_OK(MPI_T_finalize());
}
#else
static void event_churn(int t, MPI_Comm c) {
    (void)t, (void)c;
}
#endif

static void worker(int t, void *arg) {
    (void)arg;
    MPI_Comm c = comms[t];
    char buf[256], rbuf[256];
    for (int it = 0; it < iters; it++) {
        int provided = -1, n = 0, k = 1 + (it + t) % 5, m = 8 + 8 * t;
        MPI_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
        CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_T_init_thread provided %d", provided);
        MPI_T_pvar_session s;
        MPI_T_pvar_handle hm, hb, he;
        MPI_OK(MPI_T_pvar_session_create(&s));
        MPI_OK(MPI_T_pvar_handle_alloc(s, i_msgs, &c, &hm, &n));
        MPI_OK(MPI_T_pvar_handle_alloc(s, i_bytes, &c, &hb, &n));
        MPI_OK(MPI_T_pvar_handle_alloc(s, i_eager, NULL, &he, &n));
        MPI_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
        for (int j = 0; j < k; j++) {
            memset(buf, t + j, (size_t)m);
            MPI_OK(MPI_Sendrecv(buf, m, MPI_BYTE, peer, j, rbuf, m, MPI_BYTE, peer, j, c,
                                MPI_STATUS_IGNORE));
            CHECK(rbuf[0] == (char)(t + j) && rbuf[m - 1] == (char)(t + j),
                  "iteration %d: message %d differs", it, j);
        }
        MPI_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
        unsigned long long msgs = 0, bytes = 0, eager = 0;
        MPI_OK(MPI_T_pvar_read(s, hm, &msgs));
        MPI_OK(MPI_T_pvar_read(s, hb, &bytes));
        MPI_OK(MPI_T_pvar_read(s, he, &eager));
        CHECK(msgs == (unsigned long long)k && bytes == (unsigned long long)k * (unsigned)m,
              "iteration %d: sent_msgs %llu sent_bytes %llu, want %d and %d", it, msgs, bytes, k,
              k * m);
        CHECK(eager >= (unsigned long long)k, "iteration %d: eager_msgs grew by %llu, want >= %d",
              it, eager, k);
        MPI_OK(MPI_T_pvar_reset(s, hm));
        MPI_OK(MPI_T_pvar_read(s, hm, &msgs));
        CHECK(msgs == 0, "iteration %d: sent_msgs %llu after reset", it, msgs);
        MPI_OK(MPI_T_pvar_handle_free(s, &hm));
        MPI_OK(MPI_T_pvar_handle_free(s, &hb));
        MPI_OK(MPI_T_pvar_handle_free(s, &he));
        CHECK(hm == MPI_T_PVAR_HANDLE_NULL, "MPI_T_pvar_handle_free left the handle set");
        MPI_OK(MPI_T_pvar_session_free(&s));
        MPI_OK(MPI_T_finalize());

        MPI_T_pvar_session cs[CHURN];
        MPI_T_pvar_handle ch[CHURN];
        for (int j = 0; j < CHURN; j++) {
            MPI_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
            MPI_OK(MPI_T_pvar_session_create(&cs[j]));
            MPI_OK(MPI_T_pvar_handle_alloc(cs[j], j % 2 ? i_eager : i_msgs, j % 2 ? NULL : &c,
                                           &ch[j], &n));
        }
        for (int pass = 0; pass < 2; pass++)
            for (int j = pass; j < CHURN; j += 2) {
                MPI_OK(MPI_T_pvar_read(cs[j], ch[j], &msgs));
                MPI_OK(MPI_T_pvar_handle_free(cs[j], &ch[j]));
                MPI_OK(MPI_T_pvar_session_free(&cs[j]));
                MPI_OK(MPI_T_finalize());
            }
        event_churn(t, c);
    }
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    int nt = thr_arg_int(argc, argv, 1, 4), provided = -1;
    iters = thr_arg_int(argc, argv, 2, 400);
    if (nprocs % 2) {
        fprintf(stderr, "mpit needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    peer = rank ^ 1;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_T_init_thread provided %d, want %d", provided,
          MPI_THREAD_MULTIPLE);
    if (MPI_T_pvar_get_index("tandem_comm_p2p_sent_msgs", MPI_T_PVAR_CLASS_COUNTER, &i_msgs) ||
        MPI_T_pvar_get_index("tandem_comm_p2p_sent_bytes", MPI_T_PVAR_CLASS_AGGREGATE, &i_bytes) ||
        MPI_T_pvar_get_index("tandem_eager_msgs", MPI_T_PVAR_CLASS_COUNTER, &i_eager)) {
        MPI_T_finalize();
        MPI_Finalize();
        return 77;
    }
#if MPI_VERSION >= 4
    if (MPI_T_event_get_index("tandem_unexp_enqueued", &i_unexp) != MPI_SUCCESS)
        i_unexp = -1; /* another library: the event churn is skipped */
#endif
    for (int t = 0; t < nt; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    thr_run(nt, worker, NULL);
    CHECK(wrong_peer == 0, "%d tandem_unexp_enqueued instances named another rank than %d",
          wrong_peer, peer);
    CHECK(i_unexp < 0 || delivered > 0, "no tandem_unexp_enqueued instance was delivered");
    for (int t = 0; t < nt; t++)
        MPI_Comm_free(&comms[t]);
    MPI_OK(MPI_T_finalize());
    return thr_finish();
}
