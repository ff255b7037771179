/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generalized requests: MPI_Grequest_start/MPI_Grequest_complete. The query
 * callback fills the status returned by Wait/Test (and by MPI_Request_get_status,
 * which frees nothing); the free callback runs once, after the query, when the
 * request is completed and waited for, or at MPI_Grequest_complete if the user
 * freed it before; the cancel callback gets complete=0/1 as appropriate; an error
 * from the query becomes the call's error (MPI_ERR_IN_STATUS in Waitall); mixed
 * arrays with point-to-point requests.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs, errs, clock_;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 10) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

typedef struct {
    int id;
    int queries, frees, cancels;
    int last_query, last_free; /* clock_ value when last called */
    int cancel_complete;       /* the `complete` argument of the last cancel */
    int query_error;           /* what the query returns */
} greq_state_t;

static int query_fn(void *extra, MPI_Status *st) {
    greq_state_t *g = extra;
    g->queries++;
    g->last_query = ++clock_;
    MPI_Status_set_elements(st, MPI_INT, g->id);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = 1000 + g->id;
    st->MPI_TAG = 2000 + g->id;
    return g->query_error;
}

static int free_fn(void *extra) {
    greq_state_t *g = extra;
    g->frees++;
    g->last_free = ++clock_;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete) {
    greq_state_t *g = extra;
    g->cancels++;
    g->cancel_complete = complete;
    return MPI_SUCCESS;
}

static MPI_Request start(greq_state_t *g, int id) {
    MPI_Request req = MPI_REQUEST_NULL;
    memset(g, 0, sizeof(*g));
    g->id = id;
    int err = MPI_Grequest_start(query_fn, free_fn, cancel_fn, g, &req);
    CHECK(err == MPI_SUCCESS && req != MPI_REQUEST_NULL, "Grequest_start: %d", err);
    return req;
}

static void check_greq_status(const MPI_Status *st, int id, const char *what) {
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == 1000 + id && st->MPI_TAG == 2000 + id && count == id,
          "%s: status from the query: source %d tag %d count %d (want %d/%d/%d)", what,
          st->MPI_SOURCE, st->MPI_TAG, count, 1000 + id, 2000 + id, id);
}

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

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    greq_state_t g[4];
    MPI_Request req, reqs[4];
    MPI_Status st, sts[4];
    int flag, idx, err;

    /* Test before and after completion; query then free, once each */
    req = start(&g[0], 3);
    flag = 1;
    MPI_Test(&req, &flag, &st);
    CHECK(!flag && g[0].queries == 0 && g[0].frees == 0,
          "Test before Grequest_complete: flag %d queries %d frees %d", flag, g[0].queries,
          g[0].frees);
    flag = 1;
    MPI_Request_get_status(req, &flag, &st);
    CHECK(!flag, "Request_get_status before Grequest_complete: flag 1");
    MPI_Grequest_complete(req);
    CHECK(g[0].frees == 0, "free_fn ran at Grequest_complete of a request not yet waited for");
    flag = 0;
    MPI_Request_get_status(req, &flag, &st);
    CHECK(flag && g[0].frees == 0 && req != MPI_REQUEST_NULL,
          "Request_get_status after completion: flag %d frees %d", flag, g[0].frees);
    check_greq_status(&st, 3, "Request_get_status");
    int q0 = g[0].queries;
    CHECK(q0 >= 1, "Request_get_status did not call the query");
    flag = 0;
    MPI_Test(&req, &flag, &st);
    CHECK(flag && req == MPI_REQUEST_NULL, "Test after completion: flag %d", flag);
    check_greq_status(&st, 3, "Test");
    CHECK(g[0].queries == q0 + 1 && g[0].frees == 1 && g[0].last_query < g[0].last_free,
          "Test: queries %d frees %d (query at %d, free at %d)", g[0].queries - q0, g[0].frees,
          g[0].last_query, g[0].last_free);

    /* Wait after completion */
    req = start(&g[0], 4);
    MPI_Grequest_complete(req);
    MPI_Wait(&req, &st);
    check_greq_status(&st, 4, "Wait");
    CHECK(req == MPI_REQUEST_NULL && g[0].queries == 1 && g[0].frees == 1,
          "Wait: queries %d frees %d", g[0].queries, g[0].frees);
    MPI_Wait(&req, MPI_STATUS_IGNORE); /* now MPI_REQUEST_NULL */

    /* freed before completion: free_fn at Grequest_complete, query never */
    req = start(&g[0], 5);
    MPI_Request keep = req;
    MPI_Request_free(&req);
    CHECK(req == MPI_REQUEST_NULL && g[0].frees == 0,
          "Request_free of an incomplete "
          "generalized request: frees %d",
          g[0].frees);
    MPI_Grequest_complete(keep);
    CHECK(g[0].frees == 1 && g[0].queries == 0,
          "after Grequest_complete of a freed request: "
          "frees %d queries %d",
          g[0].frees, g[0].queries);

    /* cancel: complete=0 before, complete=1 after Grequest_complete */
    req = start(&g[0], 6);
    MPI_Cancel(&req);
    CHECK(g[0].cancels == 1 && g[0].cancel_complete == 0,
          "cancel before completion: calls %d "
          "complete %d",
          g[0].cancels, g[0].cancel_complete);
    MPI_Grequest_complete(req);
    MPI_Cancel(&req);
    CHECK(g[0].cancels == 2 && g[0].cancel_complete == 1,
          "cancel after completion: calls %d "
          "complete %d",
          g[0].cancels, g[0].cancel_complete);
    MPI_Wait(&req, &st);
    check_greq_status(&st, 6, "Wait after cancel");
    CHECK(g[0].frees == 1, "free after cancel: %d", g[0].frees);

    /* the query's error is the call's */
    req = start(&g[0], 7);
    g[0].query_error = MPI_ERR_OTHER;
    MPI_Grequest_complete(req);
    err = MPI_Wait(&req, &st);
    int cls = -1;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_OTHER, "Wait of a request whose query fails: class %d", cls);
    CHECK(g[0].frees == 1 && req == MPI_REQUEST_NULL, "failed query: frees %d", g[0].frees);

    /* arrays: Waitall with a failing query gives MPI_ERR_IN_STATUS */
    for (int i = 0; i < 3; i++)
        reqs[i] = start(&g[i], 10 + i);
    g[1].query_error = MPI_ERR_OTHER;
    reqs[3] = MPI_REQUEST_NULL;
    for (int i = 2; i >= 0; i--)
        MPI_Grequest_complete(reqs[i]);
    for (int i = 0; i < 4; i++)
        sts[i].MPI_ERROR = 4242;
    err = MPI_Waitall(4, reqs, sts);
    CHECK(err == MPI_ERR_IN_STATUS, "Waitall with a failing query: %d", err);
    MPI_Error_class(sts[1].MPI_ERROR, &cls);
    CHECK(cls == MPI_ERR_OTHER, "failing query: status MPI_ERROR class %d", cls);
    /* the others completed (MPI_SUCCESS) or, as the standard allows once one failed,
     * were left pending (MPI_ERR_PENDING) and are completed now */
    for (int i = 0; i < 3; i += 2) {
        CHECK(sts[i].MPI_ERROR == MPI_SUCCESS || sts[i].MPI_ERROR == MPI_ERR_PENDING,
              "Waitall: request %d has MPI_ERROR %d", i, sts[i].MPI_ERROR);
        if (sts[i].MPI_ERROR == MPI_ERR_PENDING)
            MPI_Wait(&reqs[i], &sts[i]);
        check_greq_status(&sts[i], 10 + i, "Waitall");
    }
    for (int i = 0; i < 3; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL && g[i].frees == 1, "Waitall: request %d frees %d", i,
              g[i].frees);

    /* Waitany/Testany/Waitsome over generalized and point-to-point requests */
    {
        int x = 0, v = 99;
        reqs[0] = start(&g[0], 20);
        reqs[1] = start(&g[1], 21);
        MPI_Irecv(&x, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &reqs[2]);
        reqs[3] = MPI_REQUEST_NULL;
        flag = 1;
        MPI_Testany(4, reqs, &idx, &flag, &st);
        CHECK(!flag, "Testany before any completion: flag 1 (index %d)", idx);
        MPI_Grequest_complete(reqs[1]);
        MPI_Waitany(4, reqs, &idx, &st);
        CHECK(idx == 1, "Waitany: index %d, want 1", idx);
        check_greq_status(&st, 21, "Waitany");
        MPI_Send(&v, 1, MPI_INT, rank, 5, MPI_COMM_WORLD);
        MPI_Waitany(4, reqs, &idx, &st);
        CHECK(idx == 2 && x == 99 && st.MPI_TAG == 5, "Waitany: index %d x %d tag %d", idx, x,
              st.MPI_TAG);
        MPI_Grequest_complete(reqs[0]);
        int out = 0, ind[4];
        MPI_Waitsome(4, reqs, &out, ind, sts);
        CHECK(out == 1 && ind[0] == 0, "Waitsome: outcount %d index %d", out, ind[0]);
        check_greq_status(&sts[0], 20, "Waitsome");
        CHECK(g[0].frees == 1 && g[1].frees == 1, "frees %d %d", g[0].frees, g[1].frees);
    }
    return finish();
}
