/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attributes from several threads at once (MPI_THREAD_MULTIPLE): T threads each
 * create keyvals and put, get, replace and delete attributes on MPI_COMM_WORLD
 * (one list all threads change) and on a duplicate of their own, which they dup
 * (copy callbacks) and free (delete callbacks). Every value read is checked, and
 * every callback is counted against what the thread did. Arguments: threads (4),
 * iterations (400).
 */
#include "../comm/thr_util.h"

static int iters = 400;
static MPI_Comm mine[64];

typedef struct counts {
    int copies, deletes;
    long last_deleted;
} counts_t;

static int copy_fn(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag) {
    counts_t *n = extra;
    n->copies++;
    *(void **)out = (void *)((long)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm c, int kv, void *val, void *extra) {
    counts_t *n = extra;
    n->deletes++;
    n->last_deleted = (long)val;
    return MPI_SUCCESS;
}

static void *worker(void *p) {
    thr_arg_t *a = p;
    counts_t n = {0};
    int kv, want_copies = 0, want_deletes = 0;
    THR_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &kv, &n));
    for (int it = 0; it < iters; it++) {
        long v = (long)a->id << 20 | it << 1;
        void *got = NULL;
        int flag = 0;
        /* on the world's list, which every thread changes */
        THR_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, (void *)v));
        THR_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, kv, &got, &flag));
        THR_CHECK(flag && (long)got == v, "thread %d: world attribute %ld, expected %ld", a->id,
                  (long)got, v);
        THR_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, (void *)(v + 1))); /* deletes v */
        want_deletes++;
        THR_CHECK(n.last_deleted == v, "thread %d: replace deleted %ld, expected %ld", a->id,
                  n.last_deleted, v);
        THR_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kv));
        want_deletes++;
        THR_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, kv, &got, &flag));
        THR_CHECK(!flag, "thread %d: world attribute still there after delete", a->id);
        /* on this thread's communicator, copied by a dup, deleted by its free */
        if (it % 8 == 0) {
            MPI_Comm d;
            THR_OK(MPI_Comm_set_attr(mine[a->id], kv, (void *)v));
            THR_OK(MPI_Comm_dup(mine[a->id], &d));
            want_copies++;
            THR_OK(MPI_Comm_get_attr(d, kv, &got, &flag));
            THR_CHECK(flag && (long)got == v + 1, "thread %d: copied attribute %ld, expected %ld",
                      a->id, (long)got, v + 1);
            THR_OK(MPI_Comm_free(&d));
            want_deletes++;
            THR_CHECK(n.last_deleted == v + 1, "thread %d: free deleted %ld", a->id,
                      n.last_deleted);
            THR_OK(MPI_Comm_delete_attr(mine[a->id], kv));
            want_deletes++;
        }
        /* keyvals come and go while others use theirs */
        int tmp;
        THR_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &tmp, NULL));
        THR_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, tmp, (void *)v));
        THR_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, tmp, &got, &flag));
        THR_CHECK(flag && (long)got == v, "thread %d: short-lived keyval's value %ld", a->id,
                  (long)got);
        THR_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, tmp));
        THR_OK(MPI_Comm_free_keyval(&tmp));
    }
    THR_CHECK(n.copies == want_copies && n.deletes == want_deletes,
              "thread %d: %d copy and %d delete callbacks, expected %d and %d", a->id, n.copies,
              n.deletes, want_copies, want_deletes);
    THR_OK(MPI_Comm_free_keyval(&kv));
    return NULL;
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    int nt = argc > 1 ? atoi(argv[1]) : 4;
    if (argc > 2)
        iters = atoi(argv[2]);
    if (nt < 1 || nt > 64)
        nt = 4;
    for (int i = 0; i < nt; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &mine[i]);
    thr_run(nt, worker, NULL);
    for (int i = 0; i < nt; i++)
        MPI_Comm_free(&mine[i]);
    return thr_finalize();
}
