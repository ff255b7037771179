/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-4 partitioned communication (MPI_Psend_init, MPI_Precv_init, MPI_Pready,
 * MPI_Pready_range, MPI_Pready_list, MPI_Parrived) on a ring (each rank sends
 * to rank + 1 and receives from rank - 1; on one rank, to itself):
 *  - rounds: sender and receiver partition counts that differ (1..24 on
 *    either side), partitions marked ready in ascending order, from the last
 *    partition down, in a random order, by halves with Pready_range and in
 *    random lists with Pready_list; the receiver polls MPI_Parrived in a random
 *    order until all have arrived, then MPI_Waitall; new data every round;
 *  - progress: a receive partition is reported arrived as soon as the sender
 *    partitions it covers are ready, while the others are not (the sender
 *    waits for the receiver's word before marking the rest), and only then;
 *  - derived datatypes: a strided vector on the sending side, an indexed type
 *    on the receiving side, the same signature cut into different partitions;
 *  - matching at init in init order for one (source, tag), whether the
 *    receive is initialized before or after the send's announcement arrives;
 *  - separation from ordinary messages: a receive with MPI_ANY_SOURCE and
 *    MPI_ANY_TAG posted first, and MPI_Iprobe, never see partitioned data, and
 *    an ordinary message with the same tag goes to the ordinary receive;
 *  - a longer sender (MPI_ERR_TRUNCATE, what fits delivered) and a shorter one
 *    (the count says so); MPI_PROC_NULL on both sides;
 *  - MPI_Startall over partitioned and ordinary persistent requests, MPI_Test,
 *    MPI_Testall, MPI_Waitany, MPI_Waitsome and MPI_Request_get_status on
 *    partitioned requests, many rounds, MPI_Request_free afterwards;
 *  - an intercommunicator (even and odd ranks, on an even number of ranks).
 * Argument: ints per sender partition in the rounds (default 16; testlist runs
 * rendezvous sizes too).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errs, dest, src;
static unsigned seed;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && errs++ < 10) {                                                             \
            fprintf(stderr, "[%d] ", rank);                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define OK(_call)                                                                                  \
    do {                                                                                           \
        int rc_ = (_call);                                                                         \
        CHECK(rc_ == MPI_SUCCESS, "line %d: %s failed: %d", __LINE__, #_call, rc_);                \
    } while (0)

static int rnd(int n) {
    seed = seed * 1103515245u + 12345u;
    return (int)((seed >> 8) % (unsigned)n);
}

static void shuffle(int *a, int n) {
    for (int i = 0; i < n; i++)
        a[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = rnd(i + 1), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* value at stream index i of a message from rank r in round it of case k */
static int val(int r, long i, int it, int k) {
    return (int)((r + 1) * 1000003L + i * 7 + it * 131 + k * 9973);
}

/* Mark every partition of an active send ready, the way `how` says. */
static void mark_all(MPI_Request sreq, int parts, int how) {
    int *order = malloc((size_t)parts * sizeof(int));
    switch (how % 5) {
    case 0:
        for (int i = 0; i < parts; i++)
            OK(MPI_Pready(i, sreq));
        break;
    case 1: /* from the last partition down */
        for (int i = parts - 1; i >= 0; i--)
            OK(MPI_Pready(i, sreq));
        break;
    case 2:
        shuffle(order, parts);
        for (int i = 0; i < parts; i++)
            OK(MPI_Pready(order[i], sreq));
        break;
    case 3: /* the upper half, then the lower one */
        OK(MPI_Pready_range(parts / 2, parts - 1, sreq));
        if (parts / 2 > 0)
            OK(MPI_Pready_range(0, parts / 2 - 1, sreq));
        break;
    case 4: { /* random lists of random lengths */
        shuffle(order, parts);
        for (int at = 0; at < parts;) {
            int n = 1 + rnd(parts - at);
            OK(MPI_Pready_list(n, order + at, sreq));
            at += n;
        }
        break;
    }
    }
    free(order);
}

/* Poll every receive partition, in a random order, until all have arrived. */
static void poll_arrived(MPI_Request rreq, int parts) {
    int *order = malloc((size_t)parts * sizeof(int));
    shuffle(order, parts);
    for (int k = 0; k < parts; k++) {
        int flag = 0;
        while (!flag)
            OK(MPI_Parrived(rreq, order[k], &flag));
    }
    free(order);
}

/* Rounds with ps sender and pr receiver partitions over total ints. */
static void rounds(int ps, int pr, long total, int nrounds, int k) {
    int *sbuf = malloc((size_t)total * sizeof(int)), *rbuf = malloc((size_t)total * sizeof(int));
    MPI_Request req[2];
    OK(MPI_Precv_init(rbuf, pr, total / pr, MPI_INT, src, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                      &req[0]));
    OK(MPI_Psend_init(sbuf, ps, total / ps, MPI_INT, dest, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                      &req[1]));
    for (int it = 0; it < nrounds; it++) {
        for (long i = 0; i < total; i++) {
            sbuf[i] = val(rank, i, it, k);
            rbuf[i] = -1;
        }
        if (it % 3 == 0) {
            OK(MPI_Startall(2, req));
        } else if (it % 3 == 1) {
            OK(MPI_Start(&req[1])); /* the send first: its partitions wait for the receiver */
            mark_all(req[1], ps, it + k);
            OK(MPI_Start(&req[0]));
        } else {
            OK(MPI_Start(&req[0]));
            OK(MPI_Start(&req[1]));
        }
        if (it % 3 != 1)
            mark_all(req[1], ps, it + k);
        poll_arrived(req[0], pr);
        MPI_Status st[2];
        OK(MPI_Waitall(2, req, st));
        int count = -1;
        MPI_Get_count(&st[0], MPI_INT, &count);
        CHECK(st[0].MPI_SOURCE == src && st[0].MPI_TAG == 7 && count == total,
              "case %d round %d: status source %d tag %d count %d", k, it, st[0].MPI_SOURCE,
              st[0].MPI_TAG, count);
        long bad = -1;
        for (long i = 0; i < total && bad < 0; i++)
            if (rbuf[i] != val(src, i, it, k))
                bad = i;
        CHECK(bad < 0, "case %d (%d -> %d partitions, %ld ints) round %d: item %ld is %d, not %d",
              k, ps, pr, total, it, bad, bad < 0 ? 0 : rbuf[bad], val(src, bad, it, k));
        CHECK(req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL,
              "persistent handles were nulled by MPI_Waitall");
    }
    OK(MPI_Request_free(&req[0]));
    OK(MPI_Request_free(&req[1]));
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL, "freed handles not null");
    free(sbuf);
    free(rbuf);
}

/* The receiver's partitions arrive as the sender's are marked, not all at once. */
static void progress_case(int cnt) {
    enum { PS = 8, PR = 4 };
    long total = (long)PS * cnt;
    int *sbuf = malloc((size_t)total * sizeof(int)), *rbuf = malloc((size_t)total * sizeof(int));
    MPI_Request sreq, rreq;
    OK(MPI_Psend_init(sbuf, PS, cnt, MPI_INT, dest, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq));
    OK(MPI_Precv_init(rbuf, PR, total / PR, MPI_INT, src, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq));
    for (int it = 0; it < 4; it++) {
        for (long i = 0; i < total; i++) {
            sbuf[i] = val(rank, i, it, 50);
            rbuf[i] = -1;
        }
        OK(MPI_Start(&rreq));
        OK(MPI_Start(&sreq));
        int flag = 1;
        for (int j = 0; j < PR; j++) {
            OK(MPI_Parrived(rreq, j, &flag));
            CHECK(!flag, "round %d: receive partition %d arrived before any was ready", it, j);
        }
        int note = it;
        if (size > 1) { /* my sender marks its partitions only after this check */
            OK(MPI_Send(&note, 1, MPI_INT, src, 97, MPI_COMM_WORLD));
            OK(MPI_Recv(&note, 1, MPI_INT, dest, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        /* sender partitions 4..7 (receive partitions 2 and 3), from the last down */
        for (int i = PS - 1; i >= PS / 2; i--)
            OK(MPI_Pready(i, sreq));
        if (size > 1) {
            OK(MPI_Send(&note, 1, MPI_INT, dest, 99, MPI_COMM_WORLD));
            OK(MPI_Recv(&note, 1, MPI_INT, src, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        for (int j = PR / 2; j < PR; j++) {
            for (flag = 0; !flag;)
                OK(MPI_Parrived(rreq, j, &flag));
            for (long i = j * (total / PR); i < (j + 1) * (total / PR); i++)
                if (rbuf[i] != val(src, i, it, 50)) {
                    CHECK(0, "round %d: partition %d arrived with item %ld wrong", it, j, i);
                    break;
                }
        }
        for (int j = 0; j < PR / 2; j++) {
            OK(MPI_Parrived(rreq, j, &flag));
            CHECK(!flag, "round %d: receive partition %d arrived before its data was ready", it, j);
        }
        if (size > 1) { /* the sender marks the rest only after this */
            OK(MPI_Send(&note, 1, MPI_INT, src, 98, MPI_COMM_WORLD));
            OK(MPI_Recv(&note, 1, MPI_INT, dest, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        OK(MPI_Pready_range(0, PS / 2 - 1, sreq));
        MPI_Status st;
        OK(MPI_Wait(&rreq, &st));
        OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        for (long i = 0; i < total; i++)
            if (rbuf[i] != val(src, i, it, 50)) {
                CHECK(0, "progress round %d: item %ld is %d", it, i, rbuf[i]);
                break;
            }
    }
    OK(MPI_Request_free(&sreq));
    OK(MPI_Request_free(&rreq));
    free(sbuf);
    free(rbuf);
}

/* A strided vector on the sending side, an indexed type on the receiving one. */
static void dtype_case(int cnt) {
    long total = 24L * cnt; /* ints moved */
    MPI_Datatype vec, idx;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec)); /* 2 ints in an extent of 3 */
    int bl[2] = {2, 1}, dis[2] = {0, 3};
    OK(MPI_Type_indexed(2, bl, dis, MPI_INT, &idx)); /* 3 ints in an extent of 4 */
    OK(MPI_Type_commit(&vec));
    OK(MPI_Type_commit(&idx));
    long nvec = total / 2, nidx = total / 3;
    int *sbuf = malloc((size_t)nvec * 3 * sizeof(int)),
        *rbuf = malloc((size_t)nidx * 4 * sizeof(int));
    MPI_Request req[2];
    OK(MPI_Psend_init(sbuf, 4, nvec / 4, vec, dest, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
    OK(MPI_Precv_init(rbuf, 8, nidx / 8, idx, src, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
    MPI_Type_free(&vec); /* the requests keep them */
    MPI_Type_free(&idx);
    for (int it = 0; it < 5; it++) {
        for (long e = 0; e < nvec; e++) {
            sbuf[3 * e] = val(rank, 2 * e, it, 60);
            sbuf[3 * e + 1] = -7; /* the gap: never sent */
            sbuf[3 * e + 2] = val(rank, 2 * e + 1, it, 60);
        }
        for (long i = 0; i < nidx * 4; i++)
            rbuf[i] = -1;
        OK(MPI_Startall(2, req));
        mark_all(req[0], 4, it);
        poll_arrived(req[1], 8);
        OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        long bad = -1;
        for (long e = 0; e < nidx && bad < 0; e++) {
            if (rbuf[4 * e] != val(src, 3 * e, it, 60) ||
                rbuf[4 * e + 1] != val(src, 3 * e + 1, it, 60) || rbuf[4 * e + 2] != -1 ||
                rbuf[4 * e + 3] != val(src, 3 * e + 2, it, 60))
                bad = e;
        }
        CHECK(bad < 0, "derived datatypes, round %d: receive element %ld wrong", it, bad);
    }
    OK(MPI_Request_free(&req[0]));
    OK(MPI_Request_free(&req[1]));
    free(sbuf);
    free(rbuf);
}

/* Two sends with one (destination, tag) match the receives in init order,
 * whether the receives come before or after the sends' announcements. */
static void order_case(int recv_first) {
    int a[10], b[30], ra[10], rb[30];
    MPI_Request r[4];
    if (recv_first) {
        OK(MPI_Precv_init(ra, 2, 5, MPI_INT, src, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]));
        OK(MPI_Precv_init(rb, 3, 10, MPI_INT, src, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]));
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    OK(MPI_Psend_init(a, 5, 2, MPI_INT, dest, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    OK(MPI_Psend_init(b, 1, 30, MPI_INT, dest, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    if (!recv_first) {
        /* the announcements are here before the receives: an ordinary round trip
         * with the sender behind them (same pair, FIFO) makes sure */
        int x = 0;
        OK(MPI_Sendrecv_replace(&x, 1, MPI_INT, dest, 12, src, 12, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
        OK(MPI_Precv_init(ra, 2, 5, MPI_INT, src, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]));
        OK(MPI_Precv_init(rb, 3, 10, MPI_INT, src, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]));
    }
    for (int i = 0; i < 10; i++)
        a[i] = val(rank, i, recv_first, 70), ra[i] = -1;
    for (int i = 0; i < 30; i++)
        b[i] = val(rank, i, recv_first, 71), rb[i] = -1;
    /* started in the other order: matching was decided at init */
    OK(MPI_Start(&r[3]));
    OK(MPI_Start(&r[1]));
    OK(MPI_Pready_range(0, 0, r[1]));
    OK(MPI_Start(&r[2]));
    OK(MPI_Start(&r[0]));
    OK(MPI_Pready_range(0, 4, r[0]));
    MPI_Status st[4];
    OK(MPI_Waitall(4, r, st));
    int ca = -1, cb = -1;
    MPI_Get_count(&st[2], MPI_INT, &ca);
    MPI_Get_count(&st[3], MPI_INT, &cb);
    CHECK(ca == 10 && cb == 30, "order case %d: counts %d and %d", recv_first, ca, cb);
    for (int i = 0; i < 10; i++)
        CHECK(ra[i] == val(src, i, recv_first, 70), "order case %d: ra[%d] = %d", recv_first, i,
              ra[i]);
    for (int i = 0; i < 30; i++)
        CHECK(rb[i] == val(src, i, recv_first, 71), "order case %d: rb[%d] = %d", recv_first, i,
              rb[i]);
    for (int i = 0; i < 4; i++)
        OK(MPI_Request_free(&r[i]));
}

/* Ordinary receives and probes never see partitioned data, nor the reverse. */
static void separation_case(void) {
    int any = -5, sb[64], rb[64], ord = 1234 + rank, flag = 1;
    MPI_Request anyreq, r[2];
    MPI_Status st;
    OK(MPI_Irecv(&any, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &anyreq));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Psend_init(sb, 4, 16, MPI_INT, dest, 13, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    OK(MPI_Precv_init(rb, 2, 32, MPI_INT, src, 13, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    for (int i = 0; i < 64; i++)
        sb[i] = val(rank, i, 0, 80), rb[i] = -1;
    OK(MPI_Startall(2, r));
    OK(MPI_Pready_range(0, 3, r[0]));
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    OK(MPI_Test(&anyreq, &flag, &st));
    CHECK(!flag, "an MPI_ANY_SOURCE/MPI_ANY_TAG receive took partitioned data");
    OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "MPI_Iprobe saw a message (source %d tag %d) with only partitioned traffic",
          st.MPI_SOURCE, st.MPI_TAG);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* now an ordinary message with the partitioned tag */
    OK(MPI_Send(&ord, 1, MPI_INT, dest, 13, MPI_COMM_WORLD));
    OK(MPI_Wait(&anyreq, &st));
    CHECK(any == 1234 + src && st.MPI_SOURCE == src && st.MPI_TAG == 13,
          "the ordinary receive got %d from %d tag %d", any, st.MPI_SOURCE, st.MPI_TAG);
    for (int i = 0; i < 64; i++)
        CHECK(rb[i] == val(src, i, 0, 80), "separation: rb[%d] = %d", i, rb[i]);
    OK(MPI_Request_free(&r[0]));
    OK(MPI_Request_free(&r[1]));
}

/* A longer sender truncates; a shorter one says how much it sent. */
static void length_case(void) {
    int sb[40], rb[40];
    MPI_Request r[2];
    MPI_Status st[2];
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int i = 0; i < 40; i++)
        sb[i] = val(rank, i, 0, 90), rb[i] = -1;
    /* 40 ints sent, 24 expected */
    OK(MPI_Psend_init(sb, 4, 10, MPI_INT, dest, 14, comm, MPI_INFO_NULL, &r[0]));
    OK(MPI_Precv_init(rb, 3, 8, MPI_INT, src, 14, comm, MPI_INFO_NULL, &r[1]));
    OK(MPI_Startall(2, r));
    OK(MPI_Pready_list(4, (int[]){3, 1, 0, 2}, r[0]));
    int err = MPI_Waitall(2, r, st);
    int cls = -1;
    MPI_Error_class(st[1].MPI_ERROR, &cls);
    CHECK(err == MPI_ERR_IN_STATUS && cls == MPI_ERR_TRUNCATE && st[0].MPI_ERROR == MPI_SUCCESS,
          "a longer partitioned send: Waitall %d, receive's class %d", err, cls);
    for (int i = 0; i < 24; i++)
        CHECK(rb[i] == val(src, i, 0, 90), "truncated: rb[%d] = %d", i, rb[i]);
    for (int i = 24; i < 40; i++)
        CHECK(rb[i] == -1, "truncated: rb[%d] = %d was written", i, rb[i]);
    OK(MPI_Request_free(&r[0]));
    OK(MPI_Request_free(&r[1]));
    /* 12 ints sent, 40 expected */
    for (int i = 0; i < 40; i++)
        rb[i] = -1;
    OK(MPI_Psend_init(sb, 2, 6, MPI_INT, dest, 15, comm, MPI_INFO_NULL, &r[0]));
    OK(MPI_Precv_init(rb, 4, 10, MPI_INT, src, 15, comm, MPI_INFO_NULL, &r[1]));
    OK(MPI_Startall(2, r));
    OK(MPI_Pready(1, r[0]));
    OK(MPI_Pready(0, r[0]));
    OK(MPI_Waitall(2, r, st));
    int count = -1;
    MPI_Get_count(&st[1], MPI_INT, &count);
    CHECK(count == 12, "a shorter partitioned send: count %d, not 12", count);
    for (int i = 0; i < 40; i++)
        CHECK(rb[i] == (i < 12 ? val(src, i, 0, 90) : -1), "shorter: rb[%d] = %d", i, rb[i]);
    OK(MPI_Request_free(&r[0]));
    OK(MPI_Request_free(&r[1]));
    MPI_Comm_free(&comm);
}

/* MPI_PROC_NULL, Test, Testall, Request_get_status, mixed Startall. */
static void misc_case(void) {
    int b[8] = {0}, x = 5, y = -1, flag = 0;
    MPI_Request r[4];
    MPI_Status st;
    OK(MPI_Psend_init(b, 2, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    OK(MPI_Precv_init(b, 2, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    OK(MPI_Startall(2, r));
    OK(MPI_Parrived(r[1], 1, &flag));
    CHECK(flag, "a receive from MPI_PROC_NULL has not arrived");
    OK(MPI_Pready_range(0, 1, r[0]));
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    OK(MPI_Start(&r[1]));
    OK(MPI_Wait(&r[1], &st));
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
          "MPI_PROC_NULL receive status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG,
          count);
    OK(MPI_Request_free(&r[0]));
    OK(MPI_Request_free(&r[1]));

    int sb[6], rb[6];
    OK(MPI_Psend_init(sb, 3, 2, MPI_INT, dest, 16, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    OK(MPI_Precv_init(rb, 6, 1, MPI_INT, src, 16, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    OK(MPI_Send_init(&x, 1, MPI_INT, dest, 17, MPI_COMM_WORLD, &r[2]));
    OK(MPI_Recv_init(&y, 1, MPI_INT, src, 17, MPI_COMM_WORLD, &r[3]));
    for (int it = 0; it < 30; it++) {
        for (int i = 0; i < 6; i++)
            sb[i] = val(rank, i, it, 95), rb[i] = -1;
        x = it * 10 + rank;
        OK(MPI_Startall(4, r));
        OK(MPI_Request_get_status(r[0], &flag, &st));
        CHECK(!flag, "round %d: a partitioned send is complete before any partition is ready", it);
        OK(MPI_Pready_list(3, (int[]){2, 0, 1}, r[0]));
        for (flag = 0; !flag;)
            OK(MPI_Request_get_status(r[1], &flag, &st));
        CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 16, "round %d: get_status %d %d", it,
              st.MPI_SOURCE, st.MPI_TAG);
        for (flag = 0; !flag;)
            OK(MPI_Testall(4, r, &flag, MPI_STATUSES_IGNORE));
        CHECK(y == ((it * 10 + src)), "round %d: ordinary persistent receive got %d", it, y);
        for (int i = 0; i < 6; i++)
            CHECK(rb[i] == val(src, i, it, 95), "round %d: rb[%d] = %d", it, i, rb[i]);
        flag = 0;
        OK(MPI_Parrived(r[1], 5, &flag));
        CHECK(flag, "an inactive partitioned receive has not arrived");
    }
    OK(MPI_Start(&r[1]));
    OK(MPI_Start(&r[0]));
    OK(MPI_Pready_range(0, 2, r[0]));
    for (flag = 0; !flag;)
        OK(MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        OK(MPI_Request_free(&r[i]));
}

/* On an intercommunicator (even and odd ranks), completed by Waitany and Waitsome. */
static void inter_case(void) {
    if (size % 2)
        return;
    MPI_Comm local, inter;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - rank % 2, 5, &inter));
    int peer, sb[100], rb[100], idx, out, ind[2];
    MPI_Comm_rank(local, &peer); /* same local rank in the other group */
    int from = 2 * peer + 1 - rank % 2;
    MPI_Request r[2];
    OK(MPI_Psend_init(sb, 4, 25, MPI_INT, peer, 3, inter, MPI_INFO_NULL, &r[0]));
    OK(MPI_Precv_init(rb, 5, 20, MPI_INT, peer, 3, inter, MPI_INFO_NULL, &r[1]));
    for (int it = 0; it < 4; it++) {
        for (int i = 0; i < 100; i++)
            sb[i] = val(rank, i, it, 99), rb[i] = -1;
        OK(MPI_Startall(2, r));
        OK(MPI_Pready_range(0, 3, r[0]));
        OK(MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE));
        OK(MPI_Waitsome(2, r, &out, ind, MPI_STATUSES_IGNORE)); /* the other one */
        CHECK(out == 1 && ind[0] == 1 - idx, "intercomm round %d: Waitany %d, Waitsome %d (%d)", it,
              idx, out, ind[0]);
        for (int i = 0; i < 100; i++)
            CHECK(rb[i] == val(from, i, it, 99), "intercomm round %d: rb[%d] = %d", it, i, rb[i]);
    }
    OK(MPI_Request_free(&r[0]));
    OK(MPI_Request_free(&r[1]));
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dest = (rank + 1) % size;
    src = (rank + size - 1) % size;
    seed = 12345u + (unsigned)rank * 7919u;
    int cnt = argc > 1 ? atoi(argv[1]) : 16;
    static const int pp[][2] = {{1, 1}, {4, 4}, {8, 3}, {3, 8}, {6, 4}, {24, 1}, {1, 24}, {24, 24}};
    int k = 0;
    for (size_t c = 0; c < sizeof(pp) / sizeof(pp[0]); c++, k++)
        rounds(pp[c][0], pp[c][1], 24L * cnt, 6, k);
    rounds(6, 8, 24L * cnt, 40, k++); /* many rounds */
    rounds(2, 3, 0, 4, k++);          /* no bytes at all */
    progress_case(cnt);
    dtype_case(cnt);
    order_case(0);
    order_case(1);
    separation_case();
    length_case();
    misc_case();
    inter_case();
    int all;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return all != 0;
}
