/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matched probes under threads (arg 1: T threads, default 4; arg 2: messages per sending
 * thread and destination, default 40). Every thread of every rank sends to every other
 * rank on one shared communicator, then T threads of each rank take their share with
 * MPI_ANY_SOURCE/MPI_ANY_TAG matched probes: MPI_Mprobe + MPI_Mrecv, MPI_Improbe (polled)
 * + MPI_Imrecv + MPI_Wait, by turns. MPI_Probe + MPI_Recv would let another thread take
 * the probed message; a matched probe must not: the message received is the one the
 * thread probed (its header, status and size match the probe's), each message is
 * received exactly once, every byte is right, and nothing is left over. Sizes mix eager,
 * multi-cell and rendezvous (the probe sees a rendezvous message before its data moved).
 */
#include "thrtest.h"

static const int lens[] = {16, 100, 5000, 70000, 24, 300000, 1500};
#define NLENS (int)(sizeof lens / sizeof lens[0])
#define HDR 3

static int nt, per;
static MPI_Comm comm;
static atomic_int *seen; /* [src][sender thread][k] */

static int len_of(int t, int k) {
    return lens[(t * 3 + k) % NLENS];
}

static unsigned seed_of(int src, int tag) {
    return (unsigned)(src * 100003 + tag * 7 + 11);
}

static void worker(int t, void *arg) {
    (void)arg;
    int nmsg = (nprocs - 1) * per;
    int **out = malloc(sizeof(int *) * (size_t)nmsg);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)nmsg);
    int n = 0;
    for (int d = 1; d < nprocs; d++) {
        int dst = (rank + d) % nprocs;
        for (int k = 0; k < per; k++, n++) {
            int len = len_of(t, k), tag = t * per + k;
            out[n] = malloc((size_t)len);
            out[n][0] = rank;
            out[n][1] = tag;
            out[n][2] = len;
            thr_fill(out[n] + HDR, (size_t)len - HDR * sizeof(int), seed_of(rank, tag));
            MPI_OK(MPI_Isend(out[n], len, MPI_BYTE, dst, tag, comm, &rq[n]));
        }
    }
    for (int i = 0; i < nmsg; i++) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status pst, rst;
        int count = -1, flag = 0;
        if (i % 2 == 0) {
            MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &msg, &pst));
        } else {
            while (!flag)
                MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &msg, &pst));
        }
        CHECK(msg != MPI_MESSAGE_NULL, "the matched probe gave MPI_MESSAGE_NULL");
        MPI_Get_count(&pst, MPI_BYTE, &count);
        if (count < HDR * (int)sizeof(int) || count > lens[5]) {
            CHECK(0, "probed a message of %d bytes from %d tag %d", count, pst.MPI_SOURCE,
                  pst.MPI_TAG);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        int *in = malloc((size_t)count);
        memset(in, 0, (size_t)count);
        if (i % 2 == 0) {
            MPI_OK(MPI_Mrecv(in, count, MPI_BYTE, &msg, &rst));
        } else {
            MPI_Request r;
            MPI_OK(MPI_Imrecv(in, count, MPI_BYTE, &msg, &r));
            MPI_OK(MPI_Wait(&r, &rst));
        }
        CHECK(msg == MPI_MESSAGE_NULL,
              "the message handle is not MPI_MESSAGE_NULL after receiving");
        int rcount = -1;
        MPI_Get_count(&rst, MPI_BYTE, &rcount);
        /* the message this thread probed, and no other */
        CHECK(in[0] == pst.MPI_SOURCE && in[1] == pst.MPI_TAG && in[2] == count,
              "probed source %d tag %d size %d, received the message of source %d tag %d "
              "size %d",
              pst.MPI_SOURCE, pst.MPI_TAG, count, in[0], in[1], in[2]);
        CHECK(rst.MPI_SOURCE == pst.MPI_SOURCE && rst.MPI_TAG == pst.MPI_TAG && rcount == count,
              "receive status source %d tag %d count %d, probe's %d %d %d", rst.MPI_SOURCE,
              rst.MPI_TAG, rcount, pst.MPI_SOURCE, pst.MPI_TAG, count);
        int src = pst.MPI_SOURCE, st = pst.MPI_TAG / per, k = pst.MPI_TAG % per;
        if (src >= 0 && src < nprocs && src != rank && st >= 0 && st < nt) {
            CHECK(count == len_of(st, k),
                  "message %d of thread %d of rank %d has %d bytes, "
                  "sent %d",
                  k, st, src, count, len_of(st, k));
            thr_check(in + HDR, (size_t)count - HDR * sizeof(int), seed_of(src, pst.MPI_TAG),
                      "payload");
            int before = atomic_fetch_add(&seen[(src * nt + st) * per + k], 1);
            CHECK(before == 0, "message %d of thread %d of rank %d received %d times", k, st, src,
                  before + 1);
        } else {
            CHECK(0, "probe status source %d tag %d", src, pst.MPI_TAG);
        }
        free(in);
    }
    MPI_OK(MPI_Waitall(nmsg, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < nmsg; i++)
        free(out[i]);
    free(out);
    free(rq);
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    nt = thr_arg_int(argc, argv, 1, 4);
    per = thr_arg_int(argc, argv, 2, 40);
    if (nprocs < 2) {
        fprintf(stderr, "mprobe needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    seen = calloc((size_t)nprocs * nt * per, sizeof(atomic_int));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    thr_run(nt, worker, NULL);
    for (int src = 0; src < nprocs; src++)
        for (int st = 0; st < nt; st++)
            for (int k = 0; k < per; k++) {
                int n = atomic_load(&seen[(src * nt + st) * per + k]);
                CHECK(n == (src == rank ? 0 : 1),
                      "message %d of thread %d of rank %d received %d times", k, st, src, n);
            }
    MPI_Barrier(MPI_COMM_WORLD);
    int flag = 1;
    MPI_Status st;
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
    CHECK(!flag, "a message from %d tag %d is left over", st.MPI_SOURCE, st.MPI_TAG);
    MPI_Comm_free(&comm);
    free(seen);
    return thr_finish();
}
