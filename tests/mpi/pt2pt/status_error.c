/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI_ERROR field of a status (MPI-4.1 3.2.5 and 3.7.5): a call that completes or
 * reports one request leaves it as it was, whatever the outcome (a message, an empty
 * status, MPI_PROC_NULL, a truncation, a generalized request); the calls that complete
 * several set it in every status only when they return MPI_ERR_IN_STATUS. Every
 * single-status call is checked with a marker in MPI_ERROR: Recv (and _c), Irecv with
 * Wait and Test, Wait and Test on MPI_REQUEST_NULL and on an inactive persistent
 * request, Sendrecv, Sendrecv_replace, Isendrecv, Probe, Iprobe, Mprobe/Mrecv,
 * Improbe/Imrecv, Mrecv of MPI_MESSAGE_NO_PROC, Request_get_status, Waitany, Testany,
 * Start/Wait of persistent requests, generalized requests; then Waitall, Testall,
 * Waitsome and Testsome without and with a failing request.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define MARK 0x5eed /* not an error code Tandem makes */

static int rank, nprocs, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 20) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static MPI_Status marked(void) {
    MPI_Status st;
    memset(&st, 0x11, sizeof(st));
    st.MPI_ERROR = MARK;
    return st;
}

#define UNTOUCHED(_st, _what)                                                                      \
    CHECK((_st).MPI_ERROR == MARK, "%s wrote MPI_ERROR (%d)", _what, (_st).MPI_ERROR)

static int cls(int err) {
    int c = -1;
    MPI_Error_class(err, &c);
    return c;
}

/* generalized request callbacks: the query fills a status without MPI_ERROR */
static int q_fn(void *state, MPI_Status *st) {
    (void)state;
    st->MPI_SOURCE = 3;
    st->MPI_TAG = 4;
    MPI_Status_set_elements(st, MPI_BYTE, 5);
    MPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}
static int f_fn(void *state) {
    (void)state;
    return MPI_SUCCESS;
}
static int c_fn(void *state, int complete) {
    (void)state;
    (void)complete;
    return MPI_SUCCESS;
}

/* calls on one process: each completes or reports one request */
static void single_local(void) {
    MPI_Comm self = MPI_COMM_SELF;
    int buf[4] = {1, 2, 3, 4}, in[4], flag, idx;
    MPI_Request req = MPI_REQUEST_NULL, reqs[2];
    MPI_Message msg;
    MPI_Status st;

    st = marked();
    MPI_Recv(in, 4, MPI_INT, MPI_PROC_NULL, 0, self, &st);
    UNTOUCHED(st, "Recv from MPI_PROC_NULL");
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "PROC_NULL status");
    st = marked();
    MPI_Recv_c(in, 4, MPI_INT, MPI_PROC_NULL, 0, self, &st);
    UNTOUCHED(st, "Recv_c from MPI_PROC_NULL");

    st = marked();
    MPI_Wait(&req, &st);
    UNTOUCHED(st, "Wait on MPI_REQUEST_NULL");
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "empty status");
    st = marked();
    MPI_Test(&req, &flag, &st);
    UNTOUCHED(st, "Test on MPI_REQUEST_NULL");
    st = marked();
    MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
    UNTOUCHED(st, "Request_get_status of MPI_REQUEST_NULL");
    reqs[0] = reqs[1] = MPI_REQUEST_NULL;
    st = marked();
    MPI_Waitany(2, reqs, &idx, &st);
    UNTOUCHED(st, "Waitany of null requests");
    st = marked();
    MPI_Testany(2, reqs, &idx, &flag, &st);
    UNTOUCHED(st, "Testany of null requests");

    /* a message to itself */
    st = marked();
    MPI_Sendrecv(buf, 4, MPI_INT, 0, 1, in, 4, MPI_INT, 0, 1, self, &st);
    UNTOUCHED(st, "Sendrecv");
    st = marked();
    MPI_Sendrecv_replace(in, 4, MPI_INT, 0, 2, 0, 2, self, &st);
    UNTOUCHED(st, "Sendrecv_replace");
    st = marked();
    MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, in, 4, MPI_INT, MPI_PROC_NULL, 1, self, &st);
    UNTOUCHED(st, "Sendrecv with MPI_PROC_NULL");
    st = marked();
    MPI_Isendrecv(buf, 4, MPI_INT, 0, 3, in, 4, MPI_INT, 0, 3, self, &req);
    MPI_Wait(&req, &st);
    UNTOUCHED(st, "Isendrecv and Wait");

    MPI_Send(buf, 4, MPI_INT, 0, 5, self);
    st = marked();
    MPI_Probe(0, 5, self, &st);
    UNTOUCHED(st, "Probe");
    st = marked();
    MPI_Iprobe(0, 5, self, &flag, &st);
    UNTOUCHED(st, "Iprobe");
    st = marked();
    MPI_Iprobe(MPI_PROC_NULL, 5, self, &flag, &st);
    UNTOUCHED(st, "Iprobe of MPI_PROC_NULL");
    st = marked();
    MPI_Probe(MPI_PROC_NULL, 5, self, &st);
    UNTOUCHED(st, "Probe of MPI_PROC_NULL");
    st = marked();
    MPI_Mprobe(0, 5, self, &msg, &st);
    UNTOUCHED(st, "Mprobe");
    st = marked();
    MPI_Mrecv(in, 4, MPI_INT, &msg, &st);
    UNTOUCHED(st, "Mrecv");
    MPI_Send(buf, 4, MPI_INT, 0, 6, self);
    st = marked();
    MPI_Improbe(0, 6, self, &flag, &msg, &st);
    UNTOUCHED(st, "Improbe");
    st = marked();
    MPI_Imrecv(in, 4, MPI_INT, &msg, &req);
    MPI_Wait(&req, &st);
    UNTOUCHED(st, "Imrecv and Wait");
    st = marked();
    MPI_Mprobe(MPI_PROC_NULL, 6, self, &msg, &st);
    UNTOUCHED(st, "Mprobe of MPI_PROC_NULL");
    st = marked();
    MPI_Mrecv(in, 4, MPI_INT, &msg, &st);
    UNTOUCHED(st, "Mrecv of MPI_MESSAGE_NO_PROC");

    /* a truncated receive: the call fails, the status still keeps MPI_ERROR */
    MPI_Send(buf, 4, MPI_INT, 0, 7, self);
    st = marked();
    int err = MPI_Recv(in, 2, MPI_INT, 0, 7, self, &st);
    CHECK(cls(err) == MPI_ERR_TRUNCATE, "truncated Recv: class %d", cls(err));
    UNTOUCHED(st, "a truncated Recv");
    MPI_Send(buf, 4, MPI_INT, 0, 8, self);
    MPI_Irecv(in, 2, MPI_INT, 0, 8, self, &req);
    st = marked();
    err = MPI_Wait(&req, &st);
    CHECK(cls(err) == MPI_ERR_TRUNCATE, "truncated Wait: class %d", cls(err));
    UNTOUCHED(st, "Wait of a truncated receive");

    /* persistent requests, active and inactive */
    MPI_Request ps, pr;
    MPI_Send_init(buf, 4, MPI_INT, 0, 9, self, &ps);
    MPI_Recv_init(in, 4, MPI_INT, 0, 9, self, &pr);
    st = marked();
    MPI_Wait(&pr, &st);
    UNTOUCHED(st, "Wait on an inactive persistent request");
    MPI_Start(&pr);
    MPI_Start(&ps);
    st = marked();
    MPI_Wait(&ps, &st);
    UNTOUCHED(st, "Wait on a persistent send");
    st = marked();
    do {
        MPI_Test(&pr, &flag, &st);
    } while (!flag);
    UNTOUCHED(st, "Test of a persistent receive");
    st = marked();
    MPI_Request_get_status(pr, &flag, &st);
    UNTOUCHED(st, "Request_get_status of an inactive persistent request");
    MPI_Request_free(&ps);
    MPI_Request_free(&pr);

    /* Waitany/Testany of real requests, Request_get_status of a complete one */
    MPI_Irecv(in, 4, MPI_INT, 0, 10, self, &reqs[0]);
    reqs[1] = MPI_REQUEST_NULL;
    MPI_Send(buf, 4, MPI_INT, 0, 10, self);
    st = marked();
    MPI_Request_get_status(reqs[0], &flag, &st);
    UNTOUCHED(st, "Request_get_status");
    st = marked();
    MPI_Waitany(2, reqs, &idx, &st);
    UNTOUCHED(st, "Waitany");
    MPI_Irecv(in, 4, MPI_INT, 0, 11, self, &reqs[1]);
    MPI_Send(buf, 4, MPI_INT, 0, 11, self);
    st = marked();
    do {
        MPI_Testany(2, reqs, &idx, &flag, &st);
    } while (!flag);
    UNTOUCHED(st, "Testany");

    /* generalized requests */
    MPI_Grequest_start(q_fn, f_fn, c_fn, NULL, &req);
    MPI_Grequest_complete(req);
    st = marked();
    MPI_Request_get_status(req, &flag, &st);
    UNTOUCHED(st, "Request_get_status of a generalized request");
    st = marked();
    MPI_Wait(&req, &st);
    UNTOUCHED(st, "Wait on a generalized request");
    CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 4, "generalized request status %d %d", st.MPI_SOURCE,
          st.MPI_TAG);
}

/* Waitall, Testall, Waitsome, Testsome: untouched on success; with one failure every
 * status says its request's code (MPI_SUCCESS for the others) */
static void multi_local(void) {
    MPI_Comm self = MPI_COMM_SELF;
    int buf[4] = {1, 2, 3, 4}, in[3][4], flag, n, idx[3];
    MPI_Request reqs[3];
    MPI_Status sts[3];
    for (int form = 0; form < 4; form++) {
        static const char *names[4] = {"Waitall", "Testall", "Waitsome", "Testsome"};
        for (int fail = 0; fail < 2; fail++) {
            for (int i = 0; i < 3; i++) {
                MPI_Irecv(in[i], i == 1 && fail ? 2 : 4, MPI_INT, 0, 20 + i, self, &reqs[i]);
                MPI_Send(buf, 4, MPI_INT, 0, 20 + i, self);
                sts[i] = marked();
            }
            int err = MPI_SUCCESS;
            switch (form) {
            case 0:
                err = MPI_Waitall(3, reqs, sts);
                break;
            case 1:
                do
                    err = MPI_Testall(3, reqs, &flag, sts);
                while (!flag && err == MPI_SUCCESS);
                break;
            case 2:
                err = MPI_Waitsome(3, reqs, &n, idx, sts);
                CHECK(n == 3, "Waitsome completed %d of 3 (all were complete)", n);
                break;
            default:
                err = MPI_Testsome(3, reqs, &n, idx, sts);
                CHECK(n == 3, "Testsome completed %d of 3 (all were complete)", n);
                break;
            }
            if (!fail) {
                CHECK(err == MPI_SUCCESS, "%s: %d", names[form], err);
                for (int i = 0; i < 3; i++)
                    UNTOUCHED(sts[i], names[form]);
            } else {
                CHECK(cls(err) == MPI_ERR_IN_STATUS, "%s with a truncation: class %d", names[form],
                      cls(err));
                for (int i = 0; i < 3; i++) {
                    int want = i == 1 ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
                    CHECK(cls(sts[i].MPI_ERROR) == want && (i == 1 || sts[i].MPI_ERROR == 0),
                          "%s with a truncation: status %d says %d", names[form], i,
                          sts[i].MPI_ERROR);
                }
            }
            for (int i = 0; i < 3; i++)
                if (reqs[i] != MPI_REQUEST_NULL)
                    MPI_Request_free(&reqs[i]);
        }
    }
}

/* across ranks: ANY_SOURCE receives and waits on messages still in flight */
static void between_ranks(void) {
    if (nprocs < 2)
        return;
    int v[64] = {0}, w[64];
    MPI_Status st;
    MPI_Request req;
    if (rank == 0) {
        for (int i = 1; i < nprocs; i++) {
            st = marked();
            MPI_Recv(w, 64, MPI_INT, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &st);
            UNTOUCHED(st, "Recv from MPI_ANY_SOURCE");
            MPI_Irecv(w, 64, MPI_INT, MPI_ANY_SOURCE, 31, MPI_COMM_WORLD, &req);
            st = marked();
            MPI_Wait(&req, &st);
            UNTOUCHED(st, "Irecv from MPI_ANY_SOURCE and Wait");
        }
    } else {
        MPI_Send(v, 64, MPI_INT, 0, 30, MPI_COMM_WORLD);
        MPI_Isend(v, 64, MPI_INT, 0, 31, MPI_COMM_WORLD, &req);
        st = marked();
        MPI_Wait(&req, &st);
        UNTOUCHED(st, "Wait on an Isend");
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    single_local();
    multi_local();
    between_ranks();
    int total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? " Found %d errors\n" : " No Errors\n", total);
    MPI_Finalize();
    return total != 0;
}
