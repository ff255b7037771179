/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wildcard receives in several threads at once (arg 1: T threads, default 4; arg 2:
 * messages per sending thread and destination, default 40). Every thread of every rank
 * sends to every other rank, then receives its exact share:
 *   phase 1  MPI_ANY_SOURCE + MPI_ANY_TAG on one shared communicator,
 *   phase 2  MPI_ANY_SOURCE with the receiving thread's own tag (a second communicator),
 *   phase 3  MPI_ANY_TAG from each source in turn, on the thread's own communicator.
 * Each message carries its envelope and sequence number; a table counts each one, which
 * must be received exactly once, with the status and every byte right, and nothing left
 * over (MPI_Iprobe after a barrier). Sizes mix eager, multi-cell and rendezvous.
 */
#include "thrtest.h"

static const int lens[] = {16, 100, 5000, 70000, 24, 1500};
#define NLENS (int)(sizeof lens / sizeof lens[0])
#define HDR 4 /* ints: source, tag, sequence, phase */

static int nt, per;
static MPI_Comm shared1, shared2, own[THR_MAX];
static atomic_int *seen; /* [phase][src][sender thread][k] */

static atomic_int *seen_at(int phase, int src, int st, int k) {
    return &seen[((phase * nprocs + src) * nt + st) * per + k];
}

static int len_of(int st, int k) {
    return lens[(st + k) % NLENS];
}

static void make_msg(int *m, int len, int src, int tag, int k, int phase) {
    m[0] = src;
    m[1] = tag;
    m[2] = k;
    m[3] = phase;
    thr_fill(m + HDR, (size_t)len - HDR * sizeof(int),
             (unsigned)(((phase * 64 + src) * 1000 + tag) * 7 + k));
}

/* Check one received message against its status and count it. */
static void take(const int *m, const MPI_Status *st, int phase, int want_tag, int want_src) {
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (count < HDR * (int)sizeof(int)) {
        CHECK(0, "phase %d: a message of %d bytes (source %d tag %d)", phase, count, st->MPI_SOURCE,
              st->MPI_TAG);
        return;
    }
    int src = m[0], tag = m[1], k = m[2];
    int stt = phase == 1 ? tag / per : phase == 2 ? k / per : tag; /* sender thread */
    int kk = phase == 1 ? tag % per : phase == 2 ? k % per : k;
    if (m[3] != phase || src < 0 || src >= nprocs || src == rank || stt < 0 || stt >= nt ||
        kk < 0 || kk >= per) {
        CHECK(0, "phase %d: a message with header %d %d %d %d", phase, m[0], m[1], m[2], m[3]);
        return;
    }
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag &&
              count == len_of(stt, kk + (phase == 2 ? stt : 0)),
          "phase %d: status source %d tag %d count %d for message from %d tag %d", phase,
          st->MPI_SOURCE, st->MPI_TAG, count, src, tag);
    CHECK(want_tag < 0 || tag == want_tag, "phase %d: tag %d received, asked for %d", phase, tag,
          want_tag);
    CHECK(want_src < 0 || src == want_src, "phase %d: source %d received, asked for %d", phase, src,
          want_src);
    thr_check(m + HDR, (size_t)count - HDR * sizeof(int),
              (unsigned)(((phase * 64 + src) * 1000 + tag) * 7 + k), "payload");
    int before = atomic_fetch_add(seen_at(phase - 1, src, stt, kk), 1);
    CHECK(before == 0, "phase %d: message %d of thread %d of rank %d received %d times", phase, kk,
          stt, src, before + 1);
}

static void worker(int t, void *arg) {
    (void)arg;
    int maxlen = 0;
    for (int i = 0; i < NLENS; i++)
        maxlen = lens[i] > maxlen ? lens[i] : maxlen;
    int nmsg = (nprocs - 1) * per;
    int **out = malloc(sizeof(int *) * (size_t)nmsg);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)nmsg);
    int *in = malloc((size_t)maxlen + 64);
    MPI_Status st;
    for (int phase = 1; phase <= 3; phase++) {
        int n = 0;
        for (int d = 1; d < nprocs; d++) {
            int dst = (rank + d) % nprocs;
            for (int k = 0; k < per; k++, n++) {
                int tag, kk = k, len;
                MPI_Comm c;
                if (phase == 1) { /* tag says sender thread and sequence */
                    tag = t * per + k;
                    c = shared1;
                    len = len_of(t, k);
                } else if (phase == 2) { /* to receiving thread k % nt, tag k % nt */
                    tag = k % nt;
                    kk = t * per + k;
                    c = shared2;
                    len = len_of(t, k + t);
                } else { /* to the same thread index, its own communicator */
                    tag = t;
                    c = own[t];
                    len = len_of(t, k);
                }
                out[n] = malloc((size_t)len);
                make_msg(out[n], len, rank, tag, kk, phase);
                MPI_OK(MPI_Isend(out[n], len, MPI_BYTE, dst, tag, c, &rq[n]));
            }
        }
        if (phase == 1) {
            for (int i = 0; i < nmsg; i++) {
                memset(in, 0, (size_t)maxlen);
                MPI_OK(
                    MPI_Recv(in, maxlen + 64, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, shared1, &st));
                take(in, &st, 1, -1, -1);
            }
        } else if (phase == 2) {
            /* messages with tag t: per/nt from each sending thread of each other rank,
             * give or take the remainder */
            int mine = 0;
            for (int k = 0; k < per; k++)
                mine += k % nt == t;
            mine *= nt * (nprocs - 1);
            for (int i = 0; i < mine; i++) {
                MPI_Request r;
                memset(in, 0, (size_t)maxlen);
                MPI_OK(MPI_Irecv(in, maxlen + 64, MPI_BYTE, MPI_ANY_SOURCE, t, shared2, &r));
                MPI_OK(MPI_Wait(&r, &st));
                take(in, &st, 2, t, -1);
            }
        } else {
            for (int d = 1; d < nprocs; d++) {
                int src = (rank + nprocs - d) % nprocs;
                for (int k = 0; k < per; k++) {
                    memset(in, 0, (size_t)maxlen);
                    MPI_OK(MPI_Recv(in, maxlen + 64, MPI_BYTE, src, MPI_ANY_TAG, own[t], &st));
                    take(in, &st, 3, -1, src);
                }
            }
        }
        MPI_OK(MPI_Waitall(nmsg, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < nmsg; i++)
            free(out[i]);
    }
    free(in);
    free(rq);
    free(out);
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    nt = thr_arg_int(argc, argv, 1, 4);
    per = thr_arg_int(argc, argv, 2, 40);
    if (nprocs < 2) {
        fprintf(stderr, "anysrc needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    seen = calloc((size_t)3 * nprocs * nt * per, sizeof(atomic_int));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &shared1));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &shared2));
    for (int t = 0; t < nt; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &own[t]));
    thr_run(nt, worker, NULL);
    /* every message counted once, and none left over */
    for (int ph = 0; ph < 3; ph++)
        for (int src = 0; src < nprocs; src++)
            for (int st = 0; st < nt; st++)
                for (int k = 0; k < per; k++) {
                    int n = atomic_load(seen_at(ph, src, st, k));
                    CHECK(n == (src == rank ? 0 : 1),
                          "phase %d: message %d of thread %d of rank %d received %d times", ph + 1,
                          k, st, src, n);
                }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm cs[2] = {shared1, shared2};
    for (int i = 0; i < 2; i++) {
        int flag = 1;
        MPI_Status st;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, cs[i], &flag, &st));
        CHECK(!flag, "a message from %d tag %d is left over", st.MPI_SOURCE, st.MPI_TAG);
    }
    MPI_Comm_free(&shared1);
    MPI_Comm_free(&shared2);
    for (int t = 0; t < nt; t++)
        MPI_Comm_free(&own[t]);
    free(seen);
    return thr_finish();
}
