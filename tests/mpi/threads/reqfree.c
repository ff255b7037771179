/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests handed between threads, in the ways the standard defines (two threads
 * waiting on one request, or freeing a request another waits on, are erroneous and not
 * done here). Ranks pair up (rank ^ 1); arg 1: rounds (default 10).
 *  a. A generalized request completed by another thread (MPI_Grequest_complete) while
 *     the main thread blocks in MPI_Wait on it: Wait returns, with the query's status.
 *  b. An active send (eager and rendezvous) freed with MPI_Request_free by a thread
 *     other than the one that started it: the message still arrives whole; the sender
 *     learns it was received from the peer's answer.
 *  c. A persistent send and receive made by one thread, started and completed by
 *     another, freed by the main thread after the join.
 *  d. Two threads each blocked in MPI_Wait on a request the other started, completed in
 *     the reverse order of their start.
 */
#include "thrtest.h"

static int rounds, peer;
static MPI_Comm comm;

/* ---- a: generalized request ---- */
static int query_fn(void *extra, MPI_Status *st) {
    MPI_Status_set_elements(st, MPI_BYTE, *(int *)extra);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int free_fn(void *extra) {
    (void)extra;
    return MPI_SUCCESS;
}
static int cancel_fn(void *extra, int complete) {
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static MPI_Request greq, greq_copy; /* the completer's copy: Wait sets greq to NULL */
static atomic_int greq_go;

static void greq_completer(int t, void *arg) {
    (void)t;
    int *bytes = arg;
    while (!atomic_load(&greq_go))
        sched_yield();
    *bytes = 4242;
    MPI_OK(MPI_Grequest_complete(greq_copy));
}

static void *greq_thread(void *arg) {
    thr_self = 1;
    greq_completer(1, arg);
    return NULL;
}

static void part_a(int rnd) {
    int bytes = 0;
    pthread_t th;
    atomic_store(&greq_go, 0);
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &bytes, &greq));
    greq_copy = greq;
    pthread_create(&th, NULL, greq_thread, &bytes);
    int flag = 1;
    MPI_OK(MPI_Test(&greq, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "round %d: a generalized request is complete before MPI_Grequest_complete", rnd);
    atomic_store(&greq_go, 1);
    MPI_Status st;
    MPI_OK(MPI_Wait(&greq, &st)); /* returns once the other thread completes it */
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == 4242 && greq == MPI_REQUEST_NULL, "round %d: generalized request: count %d", rnd,
          count);
    pthread_join(th, NULL);
}

/* ---- b: an active request freed by another thread ---- */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    MPI_Request req;
    int state; /* 0 empty, 1 handed over, 2 freed */
} handoff_t;

static handoff_t ho = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, MPI_REQUEST_NULL, 0};
static const int blen[] = {64, 300000};
static int brnd;

static void part_b_thread(int t, void *arg) {
    (void)arg;
    int len = blen[brnd % 2];
    if (t == 0) { /* starts the send and hands it over */
        unsigned char *buf = malloc((size_t)len);
        int ack = -1;
        thr_fill(buf, (size_t)len, (unsigned)(rank * 31 + brnd));
        MPI_Request r;
        MPI_OK(MPI_Isend(buf, len, MPI_BYTE, peer, 100 + brnd, comm, &r));
        pthread_mutex_lock(&ho.mu);
        ho.req = r;
        ho.state = 1;
        pthread_cond_broadcast(&ho.cv);
        while (ho.state != 2)
            pthread_cond_wait(&ho.cv, &ho.mu);
        pthread_mutex_unlock(&ho.mu);
        /* the peer's answer says the data arrived: only then is the buffer free */
        MPI_OK(MPI_Recv(&ack, 1, MPI_INT, peer, 200 + brnd, comm, MPI_STATUS_IGNORE));
        CHECK(ack == len, "round %d: the peer received %d bytes of %d", brnd, ack, len);
        free(buf);
    } else if (t == 1) { /* frees it while it is active */
        pthread_mutex_lock(&ho.mu);
        while (ho.state != 1)
            pthread_cond_wait(&ho.cv, &ho.mu);
        MPI_OK(MPI_Request_free(&ho.req));
        CHECK(ho.req == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
        ho.state = 2;
        pthread_cond_broadcast(&ho.cv);
        pthread_mutex_unlock(&ho.mu);
    } else { /* receives the peer's freed send, checks it, answers */
        unsigned char *buf = malloc((size_t)len);
        MPI_Status st;
        memset(buf, 0, (size_t)len);
        MPI_OK(MPI_Recv(buf, len, MPI_BYTE, peer, 100 + brnd, comm, &st));
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        int ok = thr_check(buf, (size_t)len, (unsigned)(peer * 31 + brnd), "freed send");
        MPI_OK(MPI_Send(&count, 1, MPI_INT, peer, 200 + brnd, comm));
        CHECK(ok && count == len, "round %d: freed send: count %d", brnd, count);
        free(buf);
    }
}

/* ---- c: persistent requests made by one thread, used by another ---- */
static MPI_Request prq[2];
static int pbuf_s[1000], pbuf_r[1000];

static void part_c_make(int t, void *arg) {
    (void)t;
    (void)arg;
    MPI_OK(MPI_Send_init(pbuf_s, 1000, MPI_INT, peer, 300, comm, &prq[0]));
    MPI_OK(MPI_Recv_init(pbuf_r, 1000, MPI_INT, peer, 300, comm, &prq[1]));
}

static void part_c_use(int t, void *arg) {
    (void)t;
    (void)arg;
    for (int k = 0; k < 5; k++) {
        for (int i = 0; i < 1000; i++) {
            pbuf_s[i] = rank * 100000 + k * 1000 + i;
            pbuf_r[i] = -1;
        }
        MPI_OK(MPI_Startall(2, prq));
        MPI_OK(MPI_Waitall(2, prq, MPI_STATUSES_IGNORE));
        CHECK(prq[0] != MPI_REQUEST_NULL && prq[1] != MPI_REQUEST_NULL,
              "a completed persistent request became MPI_REQUEST_NULL");
        for (int i = 0; i < 1000; i++)
            if (pbuf_r[i] != peer * 100000 + k * 1000 + i) {
                CHECK(0, "persistent receive %d: element %d is %d", k, i, pbuf_r[i]);
                break;
            }
    }
}

/* ---- d: each of two threads waits on the request the other started ---- */
static MPI_Request drq[2];
static int dval[2];
static pthread_barrier_t dbar;

static void part_d(int t, void *arg) {
    int rnd = *(int *)arg;
    dval[t] = -1;
    MPI_OK(MPI_Irecv(&dval[t], 1, MPI_INT, peer, 400 + t, comm, &drq[t]));
    pthread_barrier_wait(&dbar); /* both started: swap */
    MPI_Status st;
    MPI_OK(MPI_Wait(&drq[1 - t], &st));
    CHECK(dval[1 - t] == peer * 10 + (1 - t) + rnd * 100 && st.MPI_TAG == 400 + 1 - t,
          "waited request of the other thread: value %d tag %d", dval[1 - t], st.MPI_TAG);
}

static void part_d_send(int rnd) {
    /* the second started is sent first */
    for (int t = 1; t >= 0; t--) {
        int v = rank * 10 + t + rnd * 100;
        MPI_OK(MPI_Send(&v, 1, MPI_INT, peer, 400 + t, comm));
    }
}

static void part_d_all(int t, void *arg) {
    if (t < 2)
        part_d(t, arg);
    else
        part_d_send(*(int *)arg);
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    rounds = thr_arg_int(argc, argv, 1, 10);
    if (nprocs % 2) {
        fprintf(stderr, "reqfree needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    peer = rank ^ 1;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    pthread_barrier_init(&dbar, NULL, 2);
    for (int rnd = 0; rnd < rounds; rnd++) {
        part_a(rnd);
        brnd = rnd;
        ho.state = 0;
        thr_run(3, part_b_thread, NULL);
        thr_run(1, part_c_make, NULL);
        thr_run(1, part_c_use, NULL);
        MPI_OK(MPI_Request_free(&prq[0]));
        MPI_OK(MPI_Request_free(&prq[1]));
        thr_run(3, part_d_all, &rnd);
    }
    pthread_barrier_destroy(&dbar);
    MPI_Comm_free(&comm);
    return thr_finish();
}
