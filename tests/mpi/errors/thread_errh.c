/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error handlers and error classes from several threads at once
 * (MPI_THREAD_MULTIPLE): T threads each create handlers, set them on a
 * communicator of their own, raise errors on it (a bad rank, and
 * MPI_Comm_call_errhandler) and get them back, while they all add error classes,
 * codes and strings. Each call of a handler must come once, on the thread's own
 * communicator, with the code raised; every added code must keep its class and
 * string. Arguments: threads (4), iterations (300).
 */
#include "../comm/tutil.h"

static int iters = 300;
static MPI_Comm mine[TR_MAX];
static int calls[TR_MAX], last_class[TR_MAX]; /* per thread: only that thread raises on its comm */
static int tid_keyval;

static void handler(MPI_Comm *c, int *code, ...) {
    void *v = NULL;
    int flag = 0;
    MPI_Comm_get_attr(*c, tid_keyval, &v, &flag); /* which thread's communicator */
    T_CHECK(flag, "handler called on a communicator of no thread");
    if (!flag)
        return;
    int t = (int)(long)v;
    int cls = -1;
    MPI_Error_class(*code, &cls);
    calls[t]++;
    last_class[t] = cls;
}

static void *worker(int id, void *arg) {
    MPI_Comm c = mine[id];
    int size, want_calls = 0;
    T_OK(MPI_Comm_set_attr(c, tid_keyval, (void *)(long)id)); /* before any error is raised */
    MPI_Comm_size(c, &size);
    for (int it = 0; it < iters; it++) {
        MPI_Errhandler eh, got;
        T_OK(MPI_Comm_create_errhandler(handler, &eh));
        T_OK(MPI_Comm_set_errhandler(c, eh));
        MPI_Errhandler made = eh;
        T_OK(MPI_Errhandler_free(&eh));
        /* a bad rank: the handler runs once, with MPI_ERR_RANK */
        int x = 0;
        int rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, c);
        want_calls++;
        int cls = -1;
        MPI_Error_class(rc, &cls);
        T_CHECK(cls == MPI_ERR_RANK, "thread %d: bad rank gave class %d", id, cls);
        T_CHECK(calls[id] == want_calls && last_class[id] == MPI_ERR_RANK,
                "thread %d: %d handler calls (expected %d), last class %d", id, calls[id],
                want_calls, last_class[id]);
        /* a class, a code and a string of our own, raised through the handler */
        int ucls, ucode;
        char text[64], back[MPI_MAX_ERROR_STRING];
        int len;
        T_OK(MPI_Add_error_class(&ucls));
        T_OK(MPI_Add_error_code(ucls, &ucode));
        snprintf(text, sizeof(text), "thread %d iteration %d", id, it);
        T_OK(MPI_Add_error_string(ucode, text));
        T_OK(MPI_Comm_call_errhandler(c, ucode));
        want_calls++;
        T_CHECK(calls[id] == want_calls && last_class[id] == ucls,
                "thread %d: call_errhandler: %d calls, class %d (expected %d)", id, calls[id],
                last_class[id], ucls);
        T_OK(MPI_Error_string(ucode, back, &len));
        T_CHECK(strcmp(back, text) == 0, "thread %d: string '%s', expected '%s'", id, back, text);
        /* get gives the handler set (a reference of its own) */
        T_OK(MPI_Comm_get_errhandler(c, &got));
        T_CHECK(got == made, "thread %d: get_errhandler %#x, set %#x", id, (unsigned)got,
                (unsigned)made);
        T_OK(MPI_Errhandler_free(&got));
        /* back to returning errors: the handler's last reference goes */
        T_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, c);
        T_CHECK(rc != MPI_SUCCESS && calls[id] == want_calls,
                "thread %d: MPI_ERRORS_RETURN still called the handler", id);
    }
    return NULL;
}

int main(int argc, char **argv) {
    t_init_threads(&argc, &argv);
    iters = tr_arg_int(argc, argv, 2, iters);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &tid_keyval, NULL);
    t_run_on_dups(tr_arg_int(argc, argv, 1, 4), worker, mine);
    MPI_Comm_free_keyval(&tid_keyval);
    return t_finish();
}
