/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests finished by two threads at once, which MPI-4.1 11.6.2 makes erroneous (two
 * threads may not wait on one request; a request is completed once): the library must
 * give one thread the request and the other a clear error, never release it twice (a
 * crash or a hang later). Ranks pair up (rank ^ 1); arg 1: rounds (default 200).
 *  e. Two threads call MPI_Wait on one receive, each with its own copy of the handle:
 *     exactly one returns MPI_SUCCESS with the message; the other MPI_ERR_REQUEST, with
 *     a message naming MPI_Wait and the rank. 4 B (eager) and 100 kB (rendezvous).
 *  f. One thread waits on a receive while another frees it with MPI_Request_free: the
 *     free succeeds, the wait returns MPI_ERR_REQUEST, and the message still arrives in
 *     the buffer (a fence message sent after it says when).
 * With index-only request handles (the MPICH ABI's int) a library cannot tell a handle
 * whose request was released and reused from a live one, so the message is sent only
 * once the racing threads are inside their calls: the sending thread reads MPI_T's
 * tandem_threads_waiting until it counts them, then tells the peer to send (no timing).
 * Libraries without that variable skip (77).
 */
#include "thrtest.h"

static int rounds, peer;
static MPI_Comm comm;
static pthread_barrier_t bar;

static MPI_Request shared; /* the request under test; each thread waits on a copy */
static int rc_of[2];
static MPI_Status st_of[2];
static char msg_of[2][MPI_MAX_ERROR_STRING];
static unsigned char *rbuf, *sbuf;
static int len, rnd;

static const int lens[] = {4, 100000};

static MPI_T_pvar_session session;
static MPI_T_pvar_handle waiting_h;
static atomic_int freed;

/* Until `n` threads of this process are blocked in MPI calls; then tell the peer's
 * sending thread to send, and wait for the peer to say the same. */
static void gate(int n, int tag) {
    unsigned long long w = 0;
    for (;;) {
        MPI_OK(MPI_T_pvar_read(session, waiting_h, &w));
        if (w >= (unsigned long long)n)
            break;
        sched_yield();
    }
    int go = rnd, got = -1;
    MPI_OK(MPI_Sendrecv(&go, 1, MPI_INT, peer, tag, &got, 1, MPI_INT, peer, tag, comm,
                        MPI_STATUS_IGNORE));
    CHECK(got == rnd, "round %d: go %d", rnd, got);
}

static void keep_error(int t, int rc) {
    rc_of[t] = rc;
    msg_of[t][0] = '\0';
    if (rc != MPI_SUCCESS) {
        int l = 0;
        MPI_Error_string(rc, msg_of[t], &l);
    }
}

static int class_of(int rc) {
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

/* e: threads 0 and 1 wait on the same receive; thread 2 sends the peer's */
static void part_e(int t, void *arg) {
    (void)arg;
    pthread_barrier_wait(&bar);
    if (t < 2) {
        MPI_Request mine = shared;
        keep_error(t, MPI_Wait(&mine, &st_of[t]));
    } else {
        gate(2, 30);
        MPI_OK(MPI_Send(sbuf, len, MPI_BYTE, peer, 10 + rnd % 2, comm));
    }
}

/* f: thread 0 waits, thread 1 frees, thread 2 sends the message and then the fence */
static void part_f(int t, void *arg) {
    (void)arg;
    pthread_barrier_wait(&bar);
    MPI_Request mine = shared;
    if (t == 0) {
        keep_error(0, MPI_Wait(&mine, &st_of[0]));
    } else if (t == 1) {
        unsigned long long w = 0;
        while (w < 1) { /* thread 0 is in MPI_Wait */
            MPI_OK(MPI_T_pvar_read(session, waiting_h, &w));
            if (!w)
                sched_yield();
        }
        keep_error(1, MPI_Request_free(&mine));
        CHECK(rc_of[1] != MPI_SUCCESS || mine == MPI_REQUEST_NULL,
              "MPI_Request_free succeeded and left the handle set");
        atomic_store(&freed, 1);
    } else {
        while (!atomic_load(&freed))
            sched_yield();
        gate(1, 31);
        MPI_OK(MPI_Send(sbuf, len, MPI_BYTE, peer, 20, comm));
        MPI_OK(MPI_Send(&rnd, 1, MPI_INT, peer, 21, comm));
    }
}

static void check_loser(int t, const char *call) {
    char want[64];
    snprintf(want, sizeof want, "rank %d", rank);
    CHECK(class_of(rc_of[t]) == MPI_ERR_REQUEST,
          "round %d: %s in the thread that lost the request returned class %d, want "
          "MPI_ERR_REQUEST (%d): %s",
          rnd, call, class_of(rc_of[t]), MPI_ERR_REQUEST, msg_of[t]);
    CHECK(strstr(msg_of[t], call) && strstr(msg_of[t], want),
          "round %d: the error does not name %s and %s: '%s'", rnd, call, want, msg_of[t]);
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    rounds = thr_arg_int(argc, argv, 1, 200);
    if (nprocs % 2) {
        fprintf(stderr, "reqrace needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    peer = rank ^ 1;
    int provided = -1, idx = -1, n = 0;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    if (MPI_T_pvar_get_index("tandem_threads_waiting", MPI_T_PVAR_CLASS_LEVEL, &idx) !=
        MPI_SUCCESS) {
        MPI_T_finalize();
        MPI_Finalize();
        return 77;
    }
    MPI_OK(MPI_T_pvar_session_create(&session));
    MPI_OK(MPI_T_pvar_handle_alloc(session, idx, NULL, &waiting_h, &n));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    pthread_barrier_init(&bar, NULL, 3);
    rbuf = malloc(100000);
    sbuf = malloc(100000);
    for (rnd = 0; rnd < rounds; rnd++) {
        /* e */
        len = lens[rnd % 2];
        thr_fill(sbuf, (size_t)len, (unsigned)(rank * 7 + rnd));
        memset(rbuf, 0, (size_t)len);
        MPI_OK(MPI_Irecv(rbuf, len, MPI_BYTE, peer, 10 + rnd % 2, comm, &shared));
        thr_run(3, part_e, NULL);
        int won = (rc_of[0] == MPI_SUCCESS) + (rc_of[1] == MPI_SUCCESS);
        CHECK(won == 1, "round %d: two threads waited on one request and %d returned MPI_SUCCESS",
              rnd, won);
        if (won == 1) {
            int w = rc_of[0] == MPI_SUCCESS ? 0 : 1, count = -1;
            MPI_Get_count(&st_of[w], MPI_BYTE, &count);
            CHECK(count == len && st_of[w].MPI_SOURCE == peer && st_of[w].MPI_TAG == 10 + rnd % 2,
                  "round %d: the winner's status: count %d source %d tag %d", rnd, count,
                  st_of[w].MPI_SOURCE, st_of[w].MPI_TAG);
            thr_check(rbuf, (size_t)len, (unsigned)(peer * 7 + rnd), "waited by two threads");
            check_loser(1 - w, "MPI_Wait");
        }

        /* f (eager sizes: the fence behind the message then says it has landed) */
        len = rnd % 2 ? 1000 : 4;
        thr_fill(sbuf, (size_t)len, (unsigned)(rank * 11 + rnd));
        memset(rbuf, 0, (size_t)len);
        MPI_OK(MPI_Irecv(rbuf, len, MPI_BYTE, peer, 20, comm, &shared));
        atomic_store(&freed, 0);
        thr_run(3, part_f, NULL);
        CHECK(rc_of[1] == MPI_SUCCESS, "round %d: MPI_Request_free of a waited request: %.200s",
              rnd, msg_of[1]);
        check_loser(0, "MPI_Wait");
        int fence = -1;
        MPI_OK(MPI_Recv(&fence, 1, MPI_INT, peer, 21, comm, MPI_STATUS_IGNORE));
        CHECK(fence == rnd, "round %d: fence %d", rnd, fence);
        thr_check(rbuf, (size_t)len, (unsigned)(peer * 11 + rnd), "freed while waited on");
    }
    free(rbuf);
    free(sbuf);
    pthread_barrier_destroy(&bar);
    MPI_Comm_free(&comm);
    MPI_OK(MPI_T_pvar_handle_free(session, &waiting_h));
    MPI_OK(MPI_T_pvar_session_free(&session));
    MPI_OK(MPI_T_finalize());
    return thr_finish();
}
