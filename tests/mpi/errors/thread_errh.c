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
#include "../comm/thr_util.h"

static int iters = 300;
static MPI_Comm mine[64];
static int calls[64], last_class[64]; /* per thread: only that thread raises on its comm */
static int tid_keyval;

static void handler(MPI_Comm *c, int *code, ...) {
    void *v = NULL;
    int flag = 0;
    MPI_Comm_get_attr(*c, tid_keyval, &v, &flag); /* which thread's communicator */
    if (!flag) {
        __atomic_fetch_add(&thr_errs, 1, __ATOMIC_RELAXED);
        fprintf(stderr, "rank %d: handler called on a communicator of no thread\n", thr_rank);
        return;
    }
    int t = (int)(long)v;
    int cls = -1;
    MPI_Error_class(*code, &cls);
    calls[t]++;
    last_class[t] = cls;
}

static void *worker(void *p) {
    thr_arg_t *a = p;
    MPI_Comm c = mine[a->id];
    int size, want_calls = 0;
    MPI_Comm_size(c, &size);
    for (int it = 0; it < iters; it++) {
        MPI_Errhandler eh, got;
        THR_OK(MPI_Comm_create_errhandler(handler, &eh));
        THR_OK(MPI_Comm_set_errhandler(c, eh));
        MPI_Errhandler made = eh;
        THR_OK(MPI_Errhandler_free(&eh));
        /* a bad rank: the handler runs once, with MPI_ERR_RANK */
        int x = 0;
        int rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, c);
        want_calls++;
        int cls = -1;
        MPI_Error_class(rc, &cls);
        THR_CHECK(cls == MPI_ERR_RANK, "thread %d: bad rank gave class %d", a->id, cls);
        THR_CHECK(calls[a->id] == want_calls && last_class[a->id] == MPI_ERR_RANK,
                  "thread %d: %d handler calls (expected %d), last class %d", a->id, calls[a->id],
                  want_calls, last_class[a->id]);
        /* a class, a code and a string of our own, raised through the handler */
        int ucls, ucode;
        char text[64], back[MPI_MAX_ERROR_STRING];
        int len;
        THR_OK(MPI_Add_error_class(&ucls));
        THR_OK(MPI_Add_error_code(ucls, &ucode));
        snprintf(text, sizeof(text), "thread %d iteration %d", a->id, it);
        THR_OK(MPI_Add_error_string(ucode, text));
        THR_OK(MPI_Comm_call_errhandler(c, ucode));
        want_calls++;
        THR_CHECK(calls[a->id] == want_calls && last_class[a->id] == ucls,
                  "thread %d: call_errhandler: %d calls, class %d (expected %d)", a->id,
                  calls[a->id], last_class[a->id], ucls);
        THR_OK(MPI_Error_string(ucode, back, &len));
        THR_CHECK(strcmp(back, text) == 0, "thread %d: string '%s', expected '%s'", a->id, back,
                  text);
        /* get gives the handler set (a reference of its own) */
        THR_OK(MPI_Comm_get_errhandler(c, &got));
        THR_CHECK(got == made, "thread %d: get_errhandler %#x, set %#x", a->id, (unsigned)got,
                  (unsigned)made);
        THR_OK(MPI_Errhandler_free(&got));
        /* back to returning errors: the handler's last reference goes */
        THR_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, c);
        THR_CHECK(rc != MPI_SUCCESS && calls[a->id] == want_calls,
                  "thread %d: MPI_ERRORS_RETURN still called the handler", a->id);
    }
    return NULL;
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    int nt = argc > 1 ? atoi(argv[1]) : 4;
    if (argc > 2)
        iters = atoi(argv[2]);
    if (nt < 1 || nt > 64)
        nt = 4;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &tid_keyval, NULL);
    for (int i = 0; i < nt; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &mine[i]);
        MPI_Comm_set_attr(mine[i], tid_keyval, (void *)(long)i);
    }
    thr_run(nt, worker, NULL);
    for (int i = 0; i < nt; i++)
        MPI_Comm_free(&mine[i]);
    MPI_Comm_free_keyval(&tid_keyval);
    return thr_finalize();
}
