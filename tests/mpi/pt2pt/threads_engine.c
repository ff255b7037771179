/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The point-to-point engine under MPI_THREAD_MULTIPLE (TANDEM_THREAD_LEVEL=multiple):
 * T threads per rank (argument 1, default 4) at once, every byte checked, in phases:
 *   tags     each thread exchanges with every other rank on MPI_COMM_WORLD with its own
 *            tag, sizes from 0 B through the eager cells to rendezvous (Isend + Recv);
 *   comms    each thread on its own duplicate of MPI_COMM_WORLD, receiving with
 *            MPI_ANY_SOURCE and MPI_ANY_TAG (Irecv + Send), sizes as above;
 *   anysrc   every thread receives MPI_ANY_SOURCE / MPI_ANY_TAG on one communicator while
 *            the others' threads send to it: each message arrives exactly once, whole;
 *   mprobe   every thread Mprobes MPI_ANY_SOURCE / MPI_ANY_TAG on one communicator and
 *            Mrecvs what it got: the size the probe saw is the message's, none is lost
 *            or taken twice (a plain Probe + Recv could receive another thread's);
 *   handoff  thread 0 starts Isend/Irecv requests, the others complete them with
 *            MPI_Waitany and MPI_Testsome, and MPI_Request_free of active sends;
 *   selfs    each thread sends to itself (its rank) with its own tag, while the others run.
 * Rendezvous protocols are forced by the testlist (TANDEM_RNDV_PROTOCOL, TANDEM_CMA=off);
 * 4 ranks on 2 cores oversubscribe (waits yield and block).
 */
#include "../thread_run.h"

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 8
static int rank, nprocs, nthreads = 4, errs;
static pthread_mutex_t errs_lock = PTHREAD_MUTEX_INITIALIZER;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond)) {                                                                            \
            pthread_mutex_lock(&errs_lock);                                                        \
            if (++errs <= 10) {                                                                    \
                fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                              \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
            pthread_mutex_unlock(&errs_lock);                                                      \
        }                                                                                          \
    } while (0)

static const size_t sizes[] = {0, 1, 8, 40, 41, 1000, 8000, 12000, 20000, 70000, 300000};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static unsigned char pat(size_t i, unsigned seed) {
    return (unsigned char)((i ^ (i >> 8) ^ (i >> 16)) * 131u + seed * 17u + 1u);
}
static void fill(unsigned char *b, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        b[i] = pat(i, seed);
}
static void check_data(const unsigned char *b, size_t n, unsigned seed, const char *what, int t) {
    for (size_t i = 0; i < n; i++) {
        if (b[i] != pat(i, seed)) {
            CHECK(0, "%s, thread %d: %zu-byte message differs at byte %zu (got %u, want %u)", what,
                  t, n, i, b[i], pat(i, seed));
            return;
        }
    }
}
static unsigned seed_of(int src, int dst, int t, int k) {
    return (unsigned)(src * 7919 + dst * 104729 + t * 31 + k * 1009);
}

static MPI_Comm dups[MAXT], shared;

/* ---- tags: Isend + Recv with a tag per thread on MPI_COMM_WORLD ---- */
static void *tags(int t, void *arg) {
    unsigned char *sb = malloc(300000), *rb = malloc(300000);
    for (int k = 0; k < (int)NSIZES; k++) {
        size_t n = sizes[k];
        for (int d = 1; d < nprocs; d++) {
            int to = (rank + d) % nprocs, from = (rank - d + nprocs) % nprocs;
            fill(sb, n, seed_of(rank, to, t, k));
            MPI_Request r;
            MPI_Isend(sb, (int)n, MPI_BYTE, to, t, MPI_COMM_WORLD, &r);
            MPI_Status st;
            memset(rb, 0, n);
            MPI_Recv(rb, (int)n, MPI_BYTE, from, t, MPI_COMM_WORLD, &st);
            int cnt;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK(cnt == (int)n && st.MPI_SOURCE == from && st.MPI_TAG == t,
                  "tags: thread %d got count %d source %d tag %d, want %zu %d %d", t, cnt,
                  st.MPI_SOURCE, st.MPI_TAG, n, from, t);
            check_data(rb, n, seed_of(from, rank, t, k), "tags", t);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    }
    free(sb);
    free(rb);
    return NULL;
}

/* ---- comms: a communicator per thread, wildcard receives ---- */
static void *comms(int t, void *arg) {
    MPI_Comm c = dups[t];
    unsigned char *sb = malloc(300000), *rb = malloc(300000);
    /* any source, any tag: the tag (k * 64 + d) says which message came; per size, every
     * receive is posted before the sends, so a wildcard receive that takes a later
     * message never leaves a rendezvous send without a receive */
    unsigned char *rbs = malloc((size_t)nprocs * 300000);
    MPI_Request r[2 * 64];
    MPI_Status st[2 * 64];
    for (int k = (int)NSIZES - 1; k >= 0; k--) {
        size_t n = sizes[k];
        int m = nprocs - 1;
        for (int d = 1; d < nprocs; d++)
            MPI_Irecv(rbs + (size_t)(d - 1) * 300000, 300000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                      c, &r[d - 1]);
        for (int d = 1; d < nprocs; d++) {
            int to = (rank + d) % nprocs;
            fill(sb + (size_t)(d - 1) * 0, n, seed_of(rank, to, t, k) + 5);
            MPI_Send(sb, (int)n, MPI_BYTE, to, k * 64 + d, c);
        }
        MPI_Waitall(m, r, st);
        for (int j = 0; j < m; j++) {
            int cnt, kk = st[j].MPI_TAG / 64, dd = st[j].MPI_TAG % 64;
            MPI_Get_count(&st[j], MPI_BYTE, &cnt);
            if (kk < 0 || kk >= (int)NSIZES || dd < 1 || dd >= nprocs) {
                CHECK(0, "comms: thread %d got tag %d", t, st[j].MPI_TAG);
                continue;
            }
            int from = (rank - dd + nprocs) % nprocs;
            CHECK(cnt == (int)sizes[kk] && st[j].MPI_SOURCE == from,
                  "comms: thread %d got count %d source %d with tag %d, want %zu %d", t, cnt,
                  st[j].MPI_SOURCE, st[j].MPI_TAG, sizes[kk], from);
            check_data(rbs + (size_t)j * 300000, (size_t)cnt, seed_of(from, rank, t, kk) + 5,
                       "comms", t);
        }
    }
    free(rbs);
    free(sb);
    free(rb);
    return NULL;
}

/* ---- anysrc and mprobe: messages carry (source, thread, index) in their first bytes ---- */
#define PER_THREAD 24
static int seen[64][MAXT][PER_THREAD];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t msg_size(int k) {
    return 12 + sizes[k % NSIZES];
}

static void msg_fill(unsigned char *b, int src, int t, int k) {
    size_t n = msg_size(k);
    fill(b, n, seed_of(src, 0, t, k));
    int hdr[3] = {src, t, k};
    memcpy(b, hdr, sizeof(hdr));
}

static void msg_check(const unsigned char *b, size_t n, const char *what, int me) {
    int hdr[3];
    memcpy(hdr, b, sizeof(hdr));
    int src = hdr[0], t = hdr[1], k = hdr[2];
    if (src < 0 || src >= nprocs || t < 0 || t >= nthreads || k < 0 || k >= PER_THREAD) {
        CHECK(0, "%s: thread %d got a message with header %d %d %d", what, me, src, t, k);
        return;
    }
    CHECK(n == msg_size(k), "%s: message %d/%d/%d has %zu bytes, want %zu", what, src, t, k, n,
          msg_size(k));
    for (size_t i = sizeof(hdr); i < n; i++) {
        if (b[i] != pat(i, seed_of(src, 0, t, k))) {
            CHECK(0, "%s: message %d/%d/%d differs at byte %zu", what, src, t, k, i);
            break;
        }
    }
    pthread_mutex_lock(&seen_lock);
    seen[src][t][k]++;
    pthread_mutex_unlock(&seen_lock);
}

/* Every thread sends PER_THREAD messages to the next rank and receives as many from any. */
static void *anysrc(int t, void *arg) {
    int to = (rank + 1) % nprocs;
    unsigned char *rb = malloc(msg_size(NSIZES - 1));
    /* the sends are freed at once: their buffers are kept until the main thread's barrier,
     * when every receiver has everything */
    void **keep = malloc(sizeof(void *) * PER_THREAD);
    for (int k = 0; k < PER_THREAD; k++) {
        unsigned char *b = keep[k] = malloc(msg_size(k));
        msg_fill(b, rank, t, k);
        MPI_Request r;
        MPI_Isend(b, (int)msg_size(k), MPI_BYTE, to, t, shared, &r);
        MPI_Request_free(&r);
    }
    for (int k = 0; k < PER_THREAD; k++) {
        MPI_Status st;
        MPI_Recv(rb, (int)msg_size(NSIZES - 1), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, shared, &st);
        int cnt;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        msg_check(rb, (size_t)cnt, "anysrc", t);
    }
    free(rb);
    return keep;
}

static void *mprobe(int t, void *arg) {
    int to = (rank + 1) % nprocs;
    MPI_Request sr[PER_THREAD];
    unsigned char *sb[PER_THREAD];
    for (int k = 0; k < PER_THREAD; k++) {
        sb[k] = malloc(msg_size(k));
        msg_fill(sb[k], rank, t, k);
        MPI_Isend(sb[k], (int)msg_size(k), MPI_BYTE, to, k, shared, &sr[k]);
    }
    for (int k = 0; k < PER_THREAD; k++) {
        MPI_Message m;
        MPI_Status st;
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, shared, &m, &st);
        int cnt;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        unsigned char *rb = malloc((size_t)cnt + 1);
        MPI_Status st2;
        MPI_Mrecv(rb, cnt, MPI_BYTE, &m, &st2);
        int cnt2;
        MPI_Get_count(&st2, MPI_BYTE, &cnt2);
        CHECK(cnt2 == cnt && st2.MPI_TAG == st.MPI_TAG && st2.MPI_SOURCE == st.MPI_SOURCE,
              "mprobe: Mrecv got %d bytes tag %d source %d, the probe said %d %d %d", cnt2,
              st2.MPI_TAG, st2.MPI_SOURCE, cnt, st.MPI_TAG, st.MPI_SOURCE);
        msg_check(rb, (size_t)cnt2, "mprobe", t);
        free(rb);
    }
    MPI_Waitall(PER_THREAD, sr, MPI_STATUSES_IGNORE);
    for (int k = 0; k < PER_THREAD; k++)
        free(sb[k]);
    return NULL;
}

static void check_seen(const char *what) {
    int from = (rank - 1 + nprocs) % nprocs;
    for (int t = 0; t < nthreads; t++)
        for (int k = 0; k < PER_THREAD; k++) {
            CHECK(seen[from][t][k] == 1, "%s: message %d/%d/%d arrived %d times", what, from, t, k,
                  seen[from][t][k]);
            seen[from][t][k] = 0;
        }
}

/* ---- handoff: requests started by thread 0, completed by the others ---- */
#define HANDOFF 64
static MPI_Request hreq[HANDOFF]; /* written once by thread 0, under hlock */
static unsigned char *hbuf[HANDOFF];
static int hstarted; /* under hlock */
static pthread_mutex_t hlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hcond = PTHREAD_COND_INITIALIZER;

/* slot 2j receives what the peer's slot 2j + 1 sends */
static size_t hsize(int i) {
    return sizes[(i / 2) % NSIZES];
}

static void handoff_check(int i, const MPI_Status *st, int t) {
    if (i % 2)
        return;
    int from = (rank - 1 + nprocs) % nprocs, cnt;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    CHECK(cnt == (int)hsize(i), "handoff: receive %d got %d bytes, want %zu", i, cnt, hsize(i));
    check_data(hbuf[i], hsize(i), seed_of(from, rank, 99, i + 1), "handoff", t);
}

static void *handoff(int t, void *arg) {
    int to = (rank + 1) % nprocs, from = (rank - 1 + nprocs) % nprocs;
    if (t == 0) {
        for (int i = 0; i < HANDOFF; i++) {
            MPI_Request r;
            hbuf[i] = calloc(1, hsize(i) + 1);
            if (i % 2 == 0) {
                MPI_Irecv(hbuf[i], (int)hsize(i), MPI_BYTE, from, 1000 + i, shared, &r);
            } else {
                fill(hbuf[i], hsize(i), seed_of(rank, to, 99, i));
                MPI_Isend(hbuf[i], (int)hsize(i), MPI_BYTE, to, 1000 + i - 1, shared, &r);
            }
            pthread_mutex_lock(&hlock);
            hreq[i] = r;
            hstarted = i + 1;
            pthread_cond_broadcast(&hcond);
            pthread_mutex_unlock(&hlock);
        }
        return NULL;
    }
    /* completer t owns the slots i with i % (T - 1) == t - 1 (a request is completed by one
     * thread), waiting on them with no lock of the test's held: odd threads by Waitany,
     * even ones by Testsome */
    int ncomp = nthreads - 1, mine = 0, done = 0;
    for (int i = t - 1; i < HANDOFF; i += ncomp)
        mine++;
    MPI_Request local[HANDOFF];
    int slot[HANDOFF];
    bool finished[HANDOFF] = {false};
    while (done < mine) {
        pthread_mutex_lock(&hlock);
        int n = 0;
        for (int i = t - 1; i < HANDOFF; i += ncomp) {
            if (i < hstarted && !finished[i]) {
                local[n] = hreq[i];
                slot[n++] = i;
            }
        }
        if (n == 0) {
            pthread_cond_wait(&hcond, &hlock);
            pthread_mutex_unlock(&hlock);
            continue;
        }
        pthread_mutex_unlock(&hlock);
        if (t % 2) {
            int idx;
            MPI_Status st;
            MPI_Waitany(n, local, &idx, &st);
            CHECK(idx >= 0 && idx < n, "handoff: Waitany gave index %d of %d", idx, n);
            if (idx >= 0 && idx < n) {
                handoff_check(slot[idx], &st, t);
                finished[slot[idx]] = true;
                done++;
            }
        } else {
            int outc = 0, outs[HANDOFF];
            MPI_Status sts[HANDOFF];
            MPI_Testsome(n, local, &outc, outs, sts);
            for (int j = 0; j < outc; j++) {
                handoff_check(slot[outs[j]], &sts[j], t);
                finished[slot[outs[j]]] = true;
                done++;
            }
            if (outc == 0)
                sched_yield();
        }
    }
    return NULL;
}

/* ---- selfs: messages to oneself ---- */
static void *selfs(int t, void *arg) {
    unsigned char *sb = malloc(300000), *rb = malloc(300000);
    for (int k = 0; k < (int)NSIZES; k++) {
        size_t n = sizes[k];
        fill(sb, n, seed_of(rank, rank, t, k) + 3);
        MPI_Request r;
        MPI_Issend(sb, (int)n, MPI_BYTE, rank, 500 + t, shared, &r);
        MPI_Status st;
        MPI_Recv(rb, (int)n, MPI_BYTE, rank, 500 + t, shared, &st);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        check_data(rb, n, seed_of(rank, rank, t, k) + 3, "selfs", t);
    }
    free(sb);
    free(rb);
    return NULL;
}

static void run(const char *name, tr_fn_t fn, int nt) {
    void *ret[MAXT];
    tr_run(nt, fn, NULL, ret);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < nt; t++) {
        if (ret[t]) { /* anysrc's freed sends: their buffers, safe to free after the barrier */
            void **keep = ret[t];
            for (int k = 0; k < PER_THREAD; k++)
                free(keep[k]);
            free(keep);
        }
    }
    (void)name;
}

int main(int argc, char **argv) {
    tr_init(&argc, &argv, 0);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (nthreads < 2 || nthreads > MAXT || nprocs > 64) {
        fprintf(stderr, "usage: threads_engine [threads 2..%d], at most 64 ranks\n", MAXT);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int t = 0; t < nthreads; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &dups[t]);
    MPI_Comm_dup(MPI_COMM_WORLD, &shared);

    run("tags", tags, nthreads);
    run("comms", comms, nthreads);
    run("anysrc", anysrc, nthreads);
    check_seen("anysrc");
    run("mprobe", mprobe, nthreads);
    check_seen("mprobe");
    run("handoff", handoff, nthreads);
    for (int i = 0; i < HANDOFF; i++)
        free(hbuf[i]);
    run("selfs", selfs, nthreads);

    for (int t = 0; t < nthreads; t++)
        MPI_Comm_free(&dups[t]);
    MPI_Comm_free(&shared);
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return all != 0;
}
