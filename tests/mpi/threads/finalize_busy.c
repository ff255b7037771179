/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Finalize called while another thread is still blocked in an MPI call, which
 * MPI-4.1 11.6.2 makes erroneous (finalize only after every thread has completed its
 * MPI calls): the library must refuse with a clear error and take nothing down, never
 * leave the blocked thread running on a finalized library (a crash or a hang).
 * A thread blocks in MPI_Wait on a generalized request; the main thread reads MPI_T's
 * tandem_threads_waiting until it counts that thread (no timing), calls MPI_Finalize
 * (MPI_ERR_OTHER, a message naming MPI_Finalize and the rank), completes the request,
 * joins the thread, exchanges a message with its peer (MPI still works) and finalizes.
 * Libraries without that variable skip (77).
 */
#include "thrtest.h"

#include <unistd.h>

static MPI_Request greq;
static int wait_rc = -1;

static int query_fn(void *extra, MPI_Status *st) {
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
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

static void *waiter(void *arg) {
    MPI_Request r = *(MPI_Request *)arg;
    thr_self = 0;
    wait_rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    int provided = -1, idx = -1;
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    if (MPI_T_pvar_get_index("tandem_threads_waiting", MPI_T_PVAR_CLASS_LEVEL, &idx) !=
        MPI_SUCCESS) {
        MPI_T_finalize();
        MPI_Finalize();
        return 77;
    }
    MPI_T_pvar_session session;
    MPI_T_pvar_handle h;
    int n = 0;
    MPI_OK(MPI_T_pvar_session_create(&session));
    MPI_OK(MPI_T_pvar_handle_alloc(session, idx, NULL, &h, &n));

    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &greq));
    MPI_Request copy = greq;
    pthread_t th;
    pthread_create(&th, NULL, waiter, &copy);
    unsigned long long waiting = 0;
    while (waiting < 1) {
        MPI_OK(MPI_T_pvar_read(session, h, &waiting));
        if (!waiting)
            sched_yield();
    }
    int rc = MPI_Finalize();
    int cls = rc;
    char msg[MPI_MAX_ERROR_STRING] = "", want[64];
    if (rc != MPI_SUCCESS) {
        int l = 0;
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &l);
    }
    snprintf(want, sizeof want, "rank %d", rank);
    CHECK(cls == MPI_ERR_OTHER,
          "MPI_Finalize with a thread blocked in MPI_Wait returned class %d, "
          "want MPI_ERR_OTHER",
          cls);
    CHECK(rc == MPI_SUCCESS || (strstr(msg, "MPI_Finalize") && strstr(msg, want)),
          "the error does not name MPI_Finalize and %s: '%s'", want, msg);
    int fl = 1;
    MPI_Finalized(&fl);
    CHECK(!fl, "MPI_Finalized is true after the refused MPI_Finalize");
    if (rc == MPI_SUCCESS) { /* the library went down under the thread: nothing more works */
        fprintf(stderr, "rank %d: MPI_Finalize did not refuse\n", rank);
        _exit(1);
    }

    MPI_OK(MPI_Grequest_complete(greq));
    pthread_join(th, NULL);
    CHECK(wait_rc == MPI_SUCCESS, "the blocked MPI_Wait returned %d", wait_rc);
    MPI_OK(MPI_T_pvar_read(session, h, &waiting));
    CHECK(waiting == 0, "tandem_threads_waiting is %llu with no thread blocked", waiting);
    MPI_OK(MPI_T_pvar_handle_free(session, &h));
    MPI_OK(MPI_T_pvar_session_free(&session));
    MPI_T_finalize();

    int peer = rank ^ 1, x = rank, y = -1;
    if (peer < nprocs) {
        MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, peer, 5, &y, 1, MPI_INT, peer, 5, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        CHECK(y == peer, "exchange after the refused MPI_Finalize: %d, want %d", y, peer);
    }
    return thr_finish();
}
