/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attributes from several threads at once (MPI_THREAD_MULTIPLE): T threads each
 * create keyvals and put, get, replace and delete attributes on MPI_COMM_WORLD
 * (one list all threads change) and on a duplicate of their own, which they dup
 * (copy callbacks) and free (delete callbacks). Every value read is checked, and
 * every callback is counted against what the thread did. Arguments: threads (4),
 * iterations (400).
 */
#include "../comm/tutil.h"

static int iters = 400;
static MPI_Comm mine[TR_MAX];

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

static void *worker(int id, void *arg) {
    counts_t n = {0};
    int kv, want_copies = 0, want_deletes = 0;
    T_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &kv, &n));
    for (int it = 0; it < iters; it++) {
        long v = (long)id << 20 | it << 1;
        void *got = NULL;
        int flag = 0;
        /* on the world's list, which every thread changes */
        T_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, (void *)v));
        T_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, kv, &got, &flag));
        T_CHECK(flag && (long)got == v, "thread %d: world attribute %ld, expected %ld", id,
                (long)got, v);
        T_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, (void *)(v + 1))); /* deletes v */
        want_deletes++;
        T_CHECK(n.last_deleted == v, "thread %d: replace deleted %ld, expected %ld", id,
                n.last_deleted, v);
        T_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kv));
        want_deletes++;
        T_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, kv, &got, &flag));
        T_CHECK(!flag, "thread %d: world attribute still there after delete", id);
        /* on this thread's communicator, copied by a dup, deleted by its free */
        if (it % 8 == 0) {
            MPI_Comm d;
            T_OK(MPI_Comm_set_attr(mine[id], kv, (void *)v));
            T_OK(MPI_Comm_dup(mine[id], &d));
            want_copies++;
            T_OK(MPI_Comm_get_attr(d, kv, &got, &flag));
            T_CHECK(flag && (long)got == v + 1, "thread %d: copied attribute %ld, expected %ld", id,
                    (long)got, v + 1);
            T_OK(MPI_Comm_free(&d));
            want_deletes++;
            T_CHECK(n.last_deleted == v + 1, "thread %d: free deleted %ld", id, n.last_deleted);
            T_OK(MPI_Comm_delete_attr(mine[id], kv));
            want_deletes++;
        }
        /* keyvals come and go while others use theirs */
        int tmp;
        T_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &tmp, NULL));
        T_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, tmp, (void *)v));
        T_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, tmp, &got, &flag));
        T_CHECK(flag && (long)got == v, "thread %d: short-lived keyval's value %ld", id, (long)got);
        T_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, tmp));
        T_OK(MPI_Comm_free_keyval(&tmp));
    }
    T_CHECK(n.copies == want_copies && n.deletes == want_deletes,
            "thread %d: %d copy and %d delete callbacks, expected %d and %d", id, n.copies,
            n.deletes, want_copies, want_deletes);
    T_OK(MPI_Comm_free_keyval(&kv));
    return NULL;
}

int main(int argc, char **argv) {
    t_init_threads(&argc, &argv);
    iters = tr_arg_int(argc, argv, 2, iters);
    t_run_on_dups(tr_arg_int(argc, argv, 1, 4), worker, mine);
    return t_finish();
}
