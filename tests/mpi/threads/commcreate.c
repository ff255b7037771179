/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Object creation from several threads at once (arg 1: T threads, default 4; arg 2:
 * iterations, default 10). Each thread has a parent communicator of its own (collective
 * calls on one communicator from two threads at once are erroneous) and makes from it,
 * concurrently with the other threads: MPI_Comm_dup, MPI_Comm_idup, MPI_Comm_split,
 * MPI_Comm_create, MPI_Comm_create_group (a tag per thread), with attributes on a keyval
 * the thread creates, a name and an error handler of its own; a derived datatype built,
 * committed, used and freed. Each new communicator must be congruent or as split, carry
 * traffic that stays on it (the payload names the thread: context ids given twice would
 * cross it), and be freed; the attributes' delete callbacks run once each.
 */
#include "thrtest.h"

static MPI_Comm parents[THR_MAX];
static int iters;
static atomic_int deleted;

static int del_fn(MPI_Comm c, int key, void *val, void *extra) {
    (void)c;
    (void)key;
    (void)extra;
    CHECK(*(int *)val >= 0, "delete callback with a bad value");
    free(val);
    atomic_fetch_add(&deleted, 1);
    return MPI_SUCCESS;
}

static void errh_fn(MPI_Comm *c, int *code, ...) {
    (void)c;
    (void)code;
}

/* traffic on c that must stay on it: a ring exchange of (thread, iteration, what) */
static void exercise(MPI_Comm c, int t, int it, int what, const char *name) {
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    int out[3] = {t, it, what}, in[3] = {-1, -1, -1};
    MPI_OK(MPI_Sendrecv(out, 3, MPI_INT, (r + 1) % n, 5, in, 3, MPI_INT, (r + n - 1) % n, 5, c,
                        MPI_STATUS_IGNORE));
    CHECK(in[0] == t && in[1] == it && in[2] == what,
          "%s: received (%d %d %d), want (%d %d %d): messages crossed communicators", name, in[0],
          in[1], in[2], t, it, what);
    int sum = 0;
    MPI_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "%s: allreduce of ranks %d, want %d", name, sum, n * (n - 1) / 2);
}

static void worker(int t, void *arg) {
    (void)arg;
    MPI_Comm p = parents[t];
    int key = MPI_KEYVAL_INVALID;
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &key, NULL));
    MPI_OK(MPI_Comm_create_errhandler(errh_fn, &eh));
    MPI_Group world_g, even_g;
    MPI_Comm_group(p, &world_g);
    int nev = (nprocs + 1) / 2, ev[16];
    for (int i = 0; i < nev; i++)
        ev[i] = 2 * i;
    MPI_Group_incl(world_g, nev, ev, &even_g);
    for (int it = 0; it < iters; it++) {
        MPI_Comm d, id, s, cr, cg;
        MPI_Request rq;
        int res, flag;
        char name[MPI_MAX_OBJECT_NAME], got[MPI_MAX_OBJECT_NAME];
        MPI_OK(MPI_Comm_dup(p, &d));
        MPI_Comm_compare(p, d, &res);
        CHECK(res == MPI_CONGRUENT, "dup: compare gives %d", res);
        int *v = malloc(sizeof(int));
        *v = t * 1000 + it;
        MPI_OK(MPI_Comm_set_attr(d, key, v));
        snprintf(name, sizeof name, "thread %d iteration %d", t, it);
        MPI_OK(MPI_Comm_set_name(d, name));
        MPI_OK(MPI_Comm_set_errhandler(d, eh));
        MPI_OK(MPI_Comm_idup(p, &id, &rq));
        exercise(d, t, it, 1, "dup");
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        exercise(id, t, it, 2, "idup");
        MPI_OK(MPI_Comm_split(p, rank % 2, nprocs - rank, &s));
        int sr, ss;
        MPI_Comm_rank(s, &sr);
        MPI_Comm_size(s, &ss);
        CHECK(ss == (nprocs + 1 - rank % 2) / 2 && sr == ss - 1 - rank / 2, "split: rank %d of %d",
              sr, ss);
        exercise(s, t, it, 3, "split");
        MPI_OK(MPI_Comm_create(p, even_g, &cr));
        CHECK((cr == MPI_COMM_NULL) == (rank % 2 == 1), "create: %s on rank %d",
              cr == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator", rank);
        if (cr != MPI_COMM_NULL) {
            exercise(cr, t, it, 4, "create");
            MPI_Comm_free(&cr);
        }
        if (rank % 2 == 0) {
            MPI_OK(MPI_Comm_create_group(p, even_g, t, &cg));
            exercise(cg, t, it, 5, "create_group");
            MPI_Comm_free(&cg);
        }
        /* a derived datatype, made and used while other threads make theirs */
        MPI_Datatype vt;
        MPI_OK(MPI_Type_vector(8, 2, 3 + t, MPI_INT, &vt));
        MPI_OK(MPI_Type_commit(&vt));
        int src[160], dst[160];
        for (int i = 0; i < 160; i++) {
            src[i] = t * 100 + i;
            dst[i] = -1;
        }
        MPI_OK(MPI_Sendrecv(src, 1, vt, rank, 9, dst, 1, vt, rank, 9, d, MPI_STATUS_IGNORE));
        for (int b = 0; b < 8; b++)
            for (int e = 0; e < 2; e++) {
                int i = b * (3 + t) + e;
                CHECK(dst[i] == src[i], "vector type: element %d is %d", i, dst[i]);
            }
        MPI_Type_free(&vt);
        /* attribute and name read back */
        int *back = NULL;
        MPI_OK(MPI_Comm_get_attr(d, key, &back, &flag));
        CHECK(flag && back && *back == t * 1000 + it, "attribute: flag %d value %d", flag,
              back ? *back : -1);
        int len = 0;
        MPI_Comm_get_name(d, got, &len);
        CHECK(strcmp(got, name) == 0, "name '%s', want '%s'", got, name);
        MPI_Errhandler e2;
        MPI_Comm_get_errhandler(d, &e2);
        CHECK(e2 == eh, "errhandler not the one set");
        MPI_Errhandler_free(&e2);
        int before = atomic_load(&deleted);
        MPI_OK(MPI_Comm_free(&d));
        CHECK(atomic_load(&deleted) > before, "delete callback did not run on free");
        MPI_Comm_free(&id);
        MPI_Comm_free(&s);
    }
    MPI_Group_free(&even_g);
    MPI_Group_free(&world_g);
    MPI_Comm_free_keyval(&key);
    MPI_Errhandler_free(&eh);
}

int main(int argc, char **argv) {
    thr_init(&argc, &argv);
    int nt = thr_arg_int(argc, argv, 1, 4);
    iters = thr_arg_int(argc, argv, 2, 10);
    if (nprocs > 32) {
        fprintf(stderr, "commcreate: at most 32 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int t = 0; t < nt; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]));
    thr_run(nt, worker, NULL);
    int d = atomic_load(&deleted);
    CHECK(d == nt * iters, "%d delete callbacks, want %d", d, nt * iters);
    for (int t = 0; t < nt; t++)
        MPI_Comm_free(&parents[t]);
    return thr_finish();
}
