/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion calls: MPI_Wait/Test and the all/any/some forms, with
 * MPI_REQUEST_NULL entries and inactive persistent requests (which count as
 * null), the MPI_UNDEFINED outcomes when nothing is active, flag 0 while nothing
 * can have completed, MPI_STATUS(ES)_IGNORE, empty statuses, every request
 * completed exactly once, statuses matched to indices, and mixed send/receive
 * arrays with eager and rendezvous sizes.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 10) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static unsigned char pat(size_t i, int seed) {
    return (unsigned char)((i ^ (i >> 8) ^ (i >> 16)) * 131u + (unsigned)seed * 17u + 1u);
}

static void fill(unsigned char *b, size_t n, int seed) {
    for (size_t i = 0; i < n; i++)
        b[i] = pat(i, seed);
}

static void check_data(const unsigned char *b, size_t n, int seed, const char *what) {
    for (size_t i = 0; i < n; i++) {
        if (b[i] != pat(i, seed)) {
            CHECK(0, "%s: %zu-byte message differs at byte %zu (got %u, want %u)", what, n, i, b[i],
                  pat(i, seed));
            return;
        }
    }
}

static void check_status(const MPI_Status *st, int src, int tag, size_t bytes, const char *what) {
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(st->MPI_SOURCE == src, "%s: MPI_SOURCE %d, want %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "%s: MPI_TAG %d, want %d", what, st->MPI_TAG, tag);
    CHECK(count == (int)bytes, "%s: count %d, want %zu", what, count, bytes);
}

/* total of every rank's error count at rank 0, which gives the verdict */
static int finish(void) {
    if (rank == 0) {
        for (int i = 1; i < nprocs; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, 32766, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
        if (errs)
            printf(" Found %d errors\n", errs);
        else
            printf(" No Errors\n");
        fflush(stdout);
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 32766, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return errs ? 1 : 0;
}

#define N 12
#define BIG 70000

static void check_empty(const MPI_Status *st, const char *what) {
    int count = -1, cancelled = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    MPI_Test_cancelled(st, &cancelled);
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0 &&
              !cancelled,
          "%s: not an empty status (source %d tag %d count %d cancelled %d)", what, st->MPI_SOURCE,
          st->MPI_TAG, count, cancelled);
}

/* message i: size and content */
static int msg_size(int i) {
    return i % 3 == 2 ? BIG + i : 4 * (i + 1);
}

/* rank 0 posts receives for tags 0..N-1 in reqs[0..N-1] with nulls around them;
 * rank 1 sends once told to go */
static void post(MPI_Request *reqs, int nreq, unsigned char **bufs) {
    for (int i = 0; i < nreq; i++)
        reqs[i] = MPI_REQUEST_NULL;
    for (int i = 0; i < N; i++)
        MPI_Irecv(bufs[i], BIG + N, MPI_BYTE, 1, i, MPI_COMM_WORLD, &reqs[2 * i + 1]);
}

static void go_and_send(unsigned char **bufs) {
    if (rank == 0) {
        MPI_Send(NULL, 0, MPI_BYTE, 1, 999, MPI_COMM_WORLD);
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Request sreq[N];
        for (int i = N - 1; i >= 0; i--) {
            fill(bufs[i], (size_t)msg_size(i), i);
            MPI_Isend(bufs[i], msg_size(i), MPI_BYTE, 0, i, MPI_COMM_WORLD, &sreq[i]);
        }
        /* some send statuses too: a send's status is not cancelled */
        MPI_Status sst[N];
        int err = MPI_Waitall(N, sreq, sst);
        CHECK(err == MPI_SUCCESS, "Waitall of sends: %d", err);
        for (int i = 0; i < N; i++) {
            int c = 1;
            MPI_Test_cancelled(&sst[i], &c);
            CHECK(!c && sreq[i] == MPI_REQUEST_NULL, "send %d: cancelled %d", i, c);
        }
    }
}

static void check_msg(int i, const MPI_Status *st, unsigned char **bufs, const char *what) {
    char w[80];
    snprintf(w, sizeof(w), "%s, message %d", what, i);
    check_status(st, 1, i, (size_t)msg_size(i), w);
    check_data(bufs[i], (size_t)msg_size(i), i, w);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsigned char *bufs[N];
    for (int i = 0; i < N; i++)
        bufs[i] = malloc(BIG + N);
    MPI_Request reqs[2 * N + 1], pers = MPI_REQUEST_NULL;
    MPI_Status st, sts[2 * N + 1];
    int flag, index, outcount, indices[2 * N + 1], err;

    /* ---- nothing active: null handles and an inactive persistent request ---- */
    MPI_Recv_init(bufs[0], 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &pers);
    MPI_Request nulls[3] = {MPI_REQUEST_NULL, pers, MPI_REQUEST_NULL};
    memset(&st, 0x55, sizeof(st));
    MPI_Wait(&nulls[0], &st);
    check_empty(&st, "Wait(MPI_REQUEST_NULL)");
    memset(&st, 0x55, sizeof(st));
    flag = 0;
    MPI_Test(&nulls[0], &flag, &st);
    CHECK(flag, "Test(MPI_REQUEST_NULL): flag 0");
    check_empty(&st, "Test(MPI_REQUEST_NULL)");
    memset(&st, 0x55, sizeof(st));
    flag = 0;
    MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
    CHECK(flag, "Request_get_status(MPI_REQUEST_NULL): flag 0");
    check_empty(&st, "Request_get_status(MPI_REQUEST_NULL)");
    memset(&st, 0x55, sizeof(st));
    MPI_Wait(&nulls[1], &st);
    check_empty(&st, "Wait(inactive persistent)");
    CHECK(nulls[1] == pers, "Wait freed an inactive persistent request");
    index = 0;
    memset(&st, 0x55, sizeof(st));
    MPI_Waitany(3, nulls, &index, &st);
    CHECK(index == MPI_UNDEFINED, "Waitany(nothing active): index %d", index);
    check_empty(&st, "Waitany(nothing active)");
    flag = 0;
    index = 0;
    MPI_Testany(3, nulls, &index, &flag, &st);
    CHECK(flag && index == MPI_UNDEFINED, "Testany(nothing active): flag %d index %d", flag, index);
    outcount = 0;
    MPI_Waitsome(3, nulls, &outcount, indices, sts);
    CHECK(outcount == MPI_UNDEFINED, "Waitsome(nothing active): outcount %d", outcount);
    outcount = 0;
    MPI_Testsome(3, nulls, &outcount, indices, MPI_STATUSES_IGNORE);
    CHECK(outcount == MPI_UNDEFINED, "Testsome(nothing active): outcount %d", outcount);
    memset(sts, 0x55, sizeof(sts));
    err = MPI_Waitall(3, nulls, sts);
    CHECK(err == MPI_SUCCESS, "Waitall(nothing active): %d", err);
    for (int i = 0; i < 3; i++)
        check_empty(&sts[i], "Waitall(nothing active)");
    flag = 0;
    MPI_Testall(3, nulls, &flag, MPI_STATUSES_IGNORE);
    CHECK(flag, "Testall(nothing active): flag 0");
    CHECK(nulls[1] == pers, "an inactive persistent request was freed");
    MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE);
    MPI_Request_free(&pers);

    if (nprocs < 2 || rank > 1)
        goto out;

    /* ---- Waitall with nulls in between ---- */
    if (rank == 0) {
        post(reqs, 2 * N + 1, bufs);
        flag = 1;
        MPI_Testall(2 * N + 1, reqs, &flag, sts);
        CHECK(!flag, "Testall: flag 1 before anything was sent");
        go_and_send(bufs);
        memset(sts, 0x55, sizeof(sts));
        for (int i = 0; i < 2 * N + 1; i++)
            sts[i].MPI_ERROR = 4242;
        err = MPI_Waitall(2 * N + 1, reqs, sts);
        CHECK(err == MPI_SUCCESS, "Waitall: %d", err);
        for (int i = 0; i < 2 * N + 1; i++) {
            CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
            CHECK(sts[i].MPI_ERROR == 4242, "Waitall without error changed MPI_ERROR of %d", i);
            if (i % 2)
                check_msg(i / 2, &sts[i], bufs, "Waitall");
            else
                check_empty(&sts[i], "Waitall null entry");
        }
    } else {
        go_and_send(bufs);
    }

    /* ---- Testall until done, MPI_STATUSES_IGNORE ---- */
    if (rank == 0) {
        post(reqs, 2 * N + 1, bufs);
        go_and_send(bufs);
        flag = 0;
        while (!flag)
            MPI_Testall(2 * N + 1, reqs, &flag, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 2 * N + 1; i++)
            CHECK(reqs[i] == MPI_REQUEST_NULL, "Testall left request %d", i);
        for (int i = 0; i < N; i++)
            check_data(bufs[i], (size_t)msg_size(i), i, "Testall");
    } else {
        go_and_send(bufs);
    }

    /* ---- Waitany / Testany: each request exactly once, then MPI_UNDEFINED ---- */
    for (int variant = 0; variant < 2; variant++) {
        const char *name = variant ? "Testany" : "Waitany";
        if (rank == 0) {
            int seen[N] = {0};
            post(reqs, 2 * N + 1, bufs);
            flag = 1;
            index = 0;
            MPI_Testany(2 * N + 1, reqs, &index, &flag, &st);
            CHECK(!flag && index == MPI_UNDEFINED, "Testany before sending: flag %d index %d", flag,
                  index);
            go_and_send(bufs);
            for (int k = 0; k < N; k++) {
                if (variant) {
                    flag = 0;
                    while (!flag)
                        MPI_Testany(2 * N + 1, reqs, &index, &flag, &st);
                } else {
                    MPI_Waitany(2 * N + 1, reqs, &index, &st);
                }
                CHECK(index >= 0 && index < 2 * N + 1 && index % 2 == 1, "%s gave index %d", name,
                      index);
                if (index < 0 || index >= 2 * N + 1 || index % 2 == 0)
                    break;
                CHECK(reqs[index] == MPI_REQUEST_NULL, "%s did not free request %d", name, index);
                CHECK(!seen[index / 2]++, "%s returned request %d twice", name, index);
                check_msg(index / 2, &st, bufs, name);
            }
            index = 0;
            if (variant) {
                flag = 0;
                MPI_Testany(2 * N + 1, reqs, &index, &flag, &st);
                CHECK(flag, "Testany with everything done: flag 0");
            } else {
                MPI_Waitany(2 * N + 1, reqs, &index, &st);
            }
            CHECK(index == MPI_UNDEFINED, "%s with everything done: index %d", name, index);
        } else {
            go_and_send(bufs);
        }
    }

    /* ---- Waitsome / Testsome ---- */
    for (int variant = 0; variant < 2; variant++) {
        const char *name = variant ? "Testsome" : "Waitsome";
        if (rank == 0) {
            int seen[N] = {0}, done = 0;
            post(reqs, 2 * N + 1, bufs);
            outcount = -1;
            MPI_Testsome(2 * N + 1, reqs, &outcount, indices, sts);
            CHECK(outcount == 0, "Testsome before sending: outcount %d", outcount);
            go_and_send(bufs);
            while (done < N) {
                outcount = -1;
                if (variant)
                    MPI_Testsome(2 * N + 1, reqs, &outcount, indices, sts);
                else
                    MPI_Waitsome(2 * N + 1, reqs, &outcount, indices, sts);
                CHECK(outcount >= (variant ? 0 : 1) && outcount <= N - done, "%s: outcount %d",
                      name, outcount);
                if (outcount < 0 || outcount > N - done)
                    break;
                for (int j = 0; j < outcount; j++) {
                    int i = indices[j];
                    CHECK(i % 2 == 1 && reqs[i] == MPI_REQUEST_NULL, "%s: index %d", name, i);
                    if (i % 2 == 0)
                        continue;
                    CHECK(!seen[i / 2]++, "%s returned request %d twice", name, i);
                    check_msg(i / 2, &sts[j], bufs, name);
                }
                done += outcount;
            }
            outcount = 0;
            if (variant)
                MPI_Testsome(2 * N + 1, reqs, &outcount, indices, sts);
            else
                MPI_Waitsome(2 * N + 1, reqs, &outcount, indices, sts);
            CHECK(outcount == MPI_UNDEFINED, "%s with everything done: outcount %d", name,
                  outcount);
        } else {
            go_and_send(bufs);
        }
    }

    /* ---- Wait and Test on one request; Test gives flag 0 until it arrives ---- */
    if (rank == 0) {
        MPI_Request r;
        MPI_Irecv(bufs[0], BIG + N, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &r);
        flag = 1;
        MPI_Test(&r, &flag, &st);
        CHECK(!flag && r != MPI_REQUEST_NULL, "Test before sending: flag %d", flag);
        go_and_send(bufs);
        flag = 0;
        while (!flag)
            MPI_Test(&r, &flag, &st);
        CHECK(r == MPI_REQUEST_NULL, "Test did not free the request");
        check_msg(0, &st, bufs, "Test");
        for (int i = 1; i < N; i++) {
            MPI_Irecv(bufs[i], BIG + N, MPI_BYTE, 1, i, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, &st);
            CHECK(r == MPI_REQUEST_NULL, "Wait did not free the request");
            check_msg(i, &st, bufs, "Wait");
        }
    } else {
        go_and_send(bufs);
    }
out:
    for (int i = 0; i < N; i++)
        free(bufs[i]);
    return finish();
}
