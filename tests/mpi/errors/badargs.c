/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad arguments with MPI_ERRORS_RETURN on MPI_COMM_WORLD: each call returns an
 * error whose class (MPI_Error_class) is the right one and whose message
 * (MPI_Error_string) names the call, the argument and the calling rank. Covers
 * invalid communicators, ranks out of range, negative counts, invalid tags (also
 * above MPI_TAG_UB when that is below INT_MAX), NULL buffers, invalid datatypes,
 * invalid requests and MPI_STATUS_IGNORE where a status is read, on blocking,
 * nonblocking, persistent, probe and combined calls. Nothing is sent by a failed call, and
 * communication works normally afterwards.
 */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 20) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static const char *class_name(int c) {
    switch (c) {
    case MPI_SUCCESS:
        return "MPI_SUCCESS";
    case MPI_ERR_BUFFER:
        return "MPI_ERR_BUFFER";
    case MPI_ERR_COUNT:
        return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE:
        return "MPI_ERR_TYPE";
    case MPI_ERR_TAG:
        return "MPI_ERR_TAG";
    case MPI_ERR_COMM:
        return "MPI_ERR_COMM";
    case MPI_ERR_RANK:
        return "MPI_ERR_RANK";
    case MPI_ERR_REQUEST:
        return "MPI_ERR_REQUEST";
    case MPI_ERR_ARG:
        return "MPI_ERR_ARG";
    default:
        return "another class";
    }
}

/* `err` came from `call`: class `want`, message naming the call, `arg` and our rank */
static void expect(int line, int err, int want, const char *call, const char *arg) {
    int cls = -1, len = -1;
    char msg[MPI_MAX_ERROR_STRING] = "", me[32];
    if (err == MPI_SUCCESS) {
        CHECK(0, "line %d: %s succeeded, want %s", line, call, class_name(want));
        return;
    }
    int e1 = MPI_Error_class(err, &cls);
    int e2 = MPI_Error_string(err, msg, &len);
    CHECK(e1 == MPI_SUCCESS && e2 == MPI_SUCCESS, "line %d: Error_class/string of %d failed", line,
          err);
    CHECK(cls == want, "line %d: %s: class %d (%s), want %s; message: %s", line, call, cls,
          class_name(cls), class_name(want), msg);
    CHECK(len == (int)strlen(msg) && len > 0 && len < MPI_MAX_ERROR_STRING,
          "line %d: resultlen %d for a %zu-character message", line, len, strlen(msg));
    snprintf(me, sizeof(me), "rank %d", rank);
    CHECK(strstr(msg, call) && strstr(msg, arg) && strstr(msg, me),
          "line %d: the message does not name the call (%s), the argument (%s) and the rank "
          "(%s): \"%s\"",
          line, call, arg, me, msg);
}
#define EXPECT(_err, _class, _call, _arg) expect(__LINE__, _err, _class, _call, _arg)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int buf[16] = {0}, flag, err;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;
    MPI_Message msg;
    const MPI_Comm bad_comm = (MPI_Comm)0x0badc0de;
    const MPI_Datatype bad_type = (MPI_Datatype)0x0badbeef;
    const MPI_Request bad_req = (MPI_Request)0x0badf00d;
    int peer = (rank + 1) % nprocs;

    /* communicators */
    EXPECT(MPI_Send(buf, 1, MPI_INT, peer, 0, bad_comm), MPI_ERR_COMM, "MPI_Send", "communicator");
    EXPECT(MPI_Send(buf, 1, MPI_INT, peer, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Send",
           "communicator");
    EXPECT(MPI_Recv(buf, 1, MPI_INT, peer, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM, "MPI_Recv",
           "communicator");
    EXPECT(MPI_Isend(buf, 1, MPI_INT, peer, 0, bad_comm, &req), MPI_ERR_COMM, "MPI_Isend",
           "communicator");
    EXPECT(MPI_Irecv(buf, 1, MPI_INT, peer, 0, bad_comm, &req), MPI_ERR_COMM, "MPI_Irecv",
           "communicator");
    EXPECT(MPI_Iprobe(peer, 0, MPI_COMM_NULL, &flag, &st), MPI_ERR_COMM, "MPI_Iprobe",
           "communicator");
    EXPECT(MPI_Comm_rank(bad_comm, &flag), MPI_ERR_COMM, "MPI_Comm_rank", "communicator");
    EXPECT(MPI_Comm_size(MPI_COMM_NULL, &flag), MPI_ERR_COMM, "MPI_Comm_size", "communicator");

    /* ranks */
    EXPECT(MPI_Send(buf, 1, MPI_INT, nprocs, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send",
           "destination");
    EXPECT(MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send",
           "destination");
    EXPECT(MPI_Ssend(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Ssend",
           "destination");
    EXPECT(MPI_Isend(buf, 1, MPI_INT, nprocs + 7, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK,
           "MPI_Isend", "destination");
    EXPECT(MPI_Recv(buf, 1, MPI_INT, nprocs, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Recv",
           "source");
    EXPECT(MPI_Irecv(buf, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK, "MPI_Irecv",
           "source");
    EXPECT(MPI_Probe(nprocs, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Probe", "source");
    EXPECT(MPI_Send_init(buf, 1, MPI_INT, nprocs, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK,
           "MPI_Send_init", "destination");
    EXPECT(MPI_Recv(buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF, &st), MPI_ERR_RANK, "MPI_Recv", "source");

    /* counts */
    EXPECT(MPI_Send(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Send", "count");
    EXPECT(MPI_Recv(buf, -3, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT, "MPI_Recv",
           "count");
    EXPECT(MPI_Irecv(buf, INT_MIN, MPI_INT, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT,
           "MPI_Irecv", "count");
    EXPECT(MPI_Bsend(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Bsend",
           "count");
    EXPECT(MPI_Recv_init(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT,
           "MPI_Recv_init", "count");

    /* tags */
    EXPECT(MPI_Send(buf, 1, MPI_INT, peer, -1, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send", "tag");
    EXPECT(MPI_Send(buf, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send",
           "tag");
    EXPECT(MPI_Isend(buf, 1, MPI_INT, peer, -100, MPI_COMM_WORLD, &req), MPI_ERR_TAG, "MPI_Isend",
           "tag");
    EXPECT(MPI_Recv(buf, 1, MPI_INT, peer, -2, MPI_COMM_WORLD, &st), MPI_ERR_TAG, "MPI_Recv",
           "tag");
    EXPECT(MPI_Iprobe(peer, -5, MPI_COMM_WORLD, &flag, &st), MPI_ERR_TAG, "MPI_Iprobe", "tag");
    {
        int *tag_ub = NULL;
        flag = 0;
        err = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
        CHECK(err == MPI_SUCCESS && flag && tag_ub && *tag_ub >= 32767,
              "MPI_TAG_UB attribute: err %d flag %d value %d", err, flag, tag_ub ? *tag_ub : -1);
        if (flag && tag_ub && *tag_ub < INT_MAX) {
            EXPECT(MPI_Send(buf, 1, MPI_INT, peer, *tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG,
                   "MPI_Send", "tag");
            EXPECT(MPI_Irecv(buf, 1, MPI_INT, peer, *tag_ub + 1, MPI_COMM_WORLD, &req), MPI_ERR_TAG,
                   "MPI_Irecv", "tag");
        }
        /* the largest valid tag works (to oneself) */
        if (flag && tag_ub) {
            int v = 5, w = 0;
            MPI_Isend(&v, 1, MPI_INT, rank, *tag_ub, MPI_COMM_WORLD, &req);
            err = MPI_Recv(&w, 1, MPI_INT, rank, *tag_ub, MPI_COMM_WORLD, &st);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            CHECK(err == MPI_SUCCESS && w == 5 && st.MPI_TAG == *tag_ub,
                  "message with tag MPI_TAG_UB (%d): err %d got %d tag %d", *tag_ub, err, w,
                  st.MPI_TAG);
        }
    }

    /* buffers */
    EXPECT(MPI_Send(NULL, 3, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Send",
           "buffer");
    EXPECT(MPI_Recv(NULL, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER, "MPI_Recv",
           "buffer");
    EXPECT(MPI_Isend(NULL, 1, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER, "MPI_Isend",
           "buffer");
    EXPECT(MPI_Sendrecv(NULL, 2, MPI_INT, peer, 0, buf, 2, MPI_INT, peer, 0, MPI_COMM_WORLD, &st),
           MPI_ERR_BUFFER, "MPI_Sendrecv", "buffer");

    /* datatypes */
    EXPECT(MPI_Send(buf, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send",
           "datatype");
    EXPECT(MPI_Send(buf, 1, bad_type, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send",
           "datatype");
    EXPECT(MPI_Irecv(buf, 1, bad_type, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE, "MPI_Irecv",
           "datatype");
    EXPECT(MPI_Sendrecv(buf, 1, MPI_INT, peer, 0, buf, 1, MPI_DATATYPE_NULL, peer, 0,
                        MPI_COMM_WORLD, &st),
           MPI_ERR_TYPE, "MPI_Sendrecv", "datatype");
    EXPECT(MPI_Get_count(&st, MPI_DATATYPE_NULL, &flag), MPI_ERR_TYPE, "MPI_Get_count", "datatype");

    /* requests */
    req = bad_req;
    EXPECT(MPI_Wait(&req, &st), MPI_ERR_REQUEST, "MPI_Wait", "request");
    EXPECT(MPI_Test(&req, &flag, &st), MPI_ERR_REQUEST, "MPI_Test", "request");
    EXPECT(MPI_Request_free(&req), MPI_ERR_REQUEST, "MPI_Request_free", "request");
    EXPECT(MPI_Cancel(&req), MPI_ERR_REQUEST, "MPI_Cancel", "request");
    {
        MPI_Request arr[3] = {MPI_REQUEST_NULL, bad_req, MPI_REQUEST_NULL};
        EXPECT(MPI_Waitall(3, arr, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST, "MPI_Waitall", "request");
        EXPECT(MPI_Testany(3, arr, &flag, &flag, &st), MPI_ERR_REQUEST, "MPI_Testany", "request");
    }
    req = MPI_REQUEST_NULL;
    EXPECT(MPI_Request_free(&req), MPI_ERR_REQUEST, "MPI_Request_free", "request");
    EXPECT(MPI_Start(&req), MPI_ERR_REQUEST, "MPI_Start", "request");
    {
        /* starting a request that is not persistent */
        int v = 1, w = 0;
        MPI_Irecv(&w, 1, MPI_INT, rank, 77, MPI_COMM_WORLD, &req);
        EXPECT(MPI_Start(&req), MPI_ERR_REQUEST, "MPI_Start", "request");
        MPI_Send(&v, 1, MPI_INT, rank, 77, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(w == 1, "the receive after a failed MPI_Start got %d", w);
    }
    /* statuses that are not there */
    EXPECT(MPI_Test_cancelled(MPI_STATUS_IGNORE, &flag), MPI_ERR_ARG, "MPI_Test_cancelled",
           "status");
    EXPECT(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &flag), MPI_ERR_ARG, "MPI_Get_count",
           "status");
    EXPECT(MPI_Status_set_cancelled(MPI_STATUS_IGNORE, 1), MPI_ERR_ARG, "MPI_Status_set_cancelled",
           "status");
    msg = (MPI_Message)bad_req;
    EXPECT(MPI_Mrecv(buf, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST, "MPI_Mrecv", "message");

    /* nothing above sent anything: a round of real messages, then no leftovers */
    {
        int v = rank, w = -1;
        err = MPI_Sendrecv(&v, 1, MPI_INT, peer, 1, &w, 1, MPI_INT, MPI_ANY_SOURCE, 1,
                           MPI_COMM_WORLD, &st);
        CHECK(err == MPI_SUCCESS && w == (rank + nprocs - 1) % nprocs,
              "communication after the errors: err %d got %d", err, w);
        /* everyone is past its failed calls once it has heard from everyone */
        for (int i = 0; i < nprocs; i++)
            if (i != rank)
                MPI_Send(NULL, 0, MPI_BYTE, i, 2, MPI_COMM_WORLD);
        for (int i = 0; i < nprocs; i++)
            if (i != rank)
                MPI_Recv(NULL, 0, MPI_BYTE, i, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, &st);
        CHECK(!flag, "a failed call sent a message (from %d)", st.MPI_SOURCE);
    }

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
