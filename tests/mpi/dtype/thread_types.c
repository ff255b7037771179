/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatypes from several threads at once (MPI_THREAD_MULTIPLE): T threads build,
 * commit, duplicate, name, inspect and free derived types over the same old types
 * (whose reference counts and layout nodes they all share), pack and unpack with
 * them, send with them to themselves, and set attributes of their own keyvals on
 * one shared type. Sizes, extents, contents, names and every packed byte are
 * checked. Arguments: threads (4), iterations (300).
 */
#include "../comm/tutil.h"

static MPI_Datatype tri; /* 3 ints, shared by every thread */
static int iters = 300;

static void *worker(int id, void *arg) {
    int kv;
    T_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &kv, NULL));
    int src[64], back[64];
    char packed[512];
    for (int it = 0; it < iters; it++) {
        MPI_Datatype v, st, ix, d;
        /* vector of 4 blocks of 2 tri, stride 3 tri: 24 ints of data, extent 11 tri */
        T_OK(MPI_Type_vector(4, 2, 3, tri, &v));
        T_OK(MPI_Type_commit(&v));
        int size;
        MPI_Aint lb, ext;
        MPI_Type_size(v, &size);
        MPI_Type_get_extent(v, &lb, &ext);
        T_CHECK(size == 96 && lb == 0 && ext == 132, "vector: size %d lb %ld extent %ld", size,
                (long)lb, (long)ext);
        /* struct {tri at 0, tri vector at 16 bytes}, indexed over tri */
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {0, 16};
        MPI_Datatype types[2] = {tri, v};
        T_OK(MPI_Type_create_struct(2, bl, disp, types, &st));
        T_OK(MPI_Type_commit(&st));
        MPI_Type_size(st, &size);
        T_CHECK(size == 108, "struct: size %d", size);
        int ibl[3] = {1, 2, 1}, idisp[3] = {0, 2, 4};
        T_OK(MPI_Type_indexed(3, ibl, idisp, tri, &ix));
        T_OK(MPI_Type_commit(&ix));
        /* pack and unpack through the indexed type: tri 0, 2, 3, 4 of the buffer */
        for (int i = 0; i < 64; i++) {
            src[i] = id * 100000 + it * 64 + i;
            back[i] = -1;
        }
        int pos = 0;
        T_OK(MPI_Pack(src, 1, ix, packed, sizeof(packed), &pos, MPI_COMM_SELF));
        T_CHECK(pos == 48, "indexed: packed %d bytes", pos);
        const int *pk = (const int *)packed;
        int want_tri[4] = {0, 2, 3, 4}, bad = 0;
        for (int t = 0; t < 4; t++)
            for (int e = 0; e < 3; e++)
                bad += pk[t * 3 + e] != src[want_tri[t] * 3 + e];
        pos = 0;
        T_OK(MPI_Unpack(packed, sizeof(packed), &pos, back, 1, ix, MPI_COMM_SELF));
        for (int t = 0; t < 4; t++)
            for (int e = 0; e < 3; e++)
                bad += back[want_tri[t] * 3 + e] != src[want_tri[t] * 3 + e];
        T_CHECK(!bad, "indexed pack/unpack: %d wrong", bad);
        /* through the engine: to ourselves on MPI_COMM_SELF, the thread as the tag */
        for (int i = 0; i < 64; i++)
            back[i] = -1;
        MPI_Status stt;
        T_OK(MPI_Sendrecv(src, 1, v, 0, id, back, 1, v, 0, id, MPI_COMM_SELF, &stt));
        bad = 0;
        for (int b = 0; b < 4; b++)
            for (int i = 0; i < 6; i++)
                bad += back[b * 9 + i] != src[b * 9 + i];
        T_CHECK(!bad, "vector to self: %d wrong", bad);
        /* contents give a type of their own equivalent to the shared old type */
        int ni, na, nd, comb;
        MPI_Type_get_envelope(v, &ni, &na, &nd, &comb);
        T_CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && nd == 1, "vector envelope %d %d %d", comb,
                ni, nd);
        int ints[3];
        MPI_Datatype old;
        T_OK(MPI_Type_get_contents(v, 3, 0, 1, ints, NULL, &old));
        T_CHECK(ints[0] == 4 && ints[1] == 2 && ints[2] == 3, "vector contents %d %d %d", ints[0],
                ints[1], ints[2]);
        MPI_Type_get_envelope(old, &ni, &na, &nd, &comb);
        MPI_Type_size(old, &size);
        T_CHECK(old != tri && comb == MPI_COMBINER_CONTIGUOUS && size == 12,
                "vector's old type: %#x (the shared one %#x), combiner %d, size %d", (unsigned)old,
                (unsigned)tri, comb, size);
        /* freeing it leaves tri's attributes, which other threads are using, alone */
        T_OK(MPI_Type_free(&old));
        /* a named duplicate */
        T_OK(MPI_Type_dup(st, &d));
        char name[MPI_MAX_OBJECT_NAME], got[MPI_MAX_OBJECT_NAME];
        int len;
        snprintf(name, sizeof(name), "t%d-i%d", id, it);
        T_OK(MPI_Type_set_name(d, name));
        T_OK(MPI_Type_get_name(d, got, &len));
        T_CHECK(strcmp(name, got) == 0, "name '%s', expected '%s'", got, name);
        /* an attribute of this thread's keyval on the shared type */
        int flag = 0;
        void *val = NULL;
        T_OK(MPI_Type_set_attr(tri, kv, (void *)(long)(id * 1000 + it)));
        T_OK(MPI_Type_get_attr(tri, kv, &val, &flag));
        T_CHECK(flag && (long)val == id * 1000 + it, "attribute on the shared type: %ld",
                (long)val);
        MPI_Type_free(&d);
        MPI_Type_free(&ix);
        MPI_Type_free(&st);
        MPI_Type_free(&v);
    }
    T_OK(MPI_Type_delete_attr(tri, kv));
    MPI_Type_free_keyval(&kv);
    return NULL;
}

int main(int argc, char **argv) {
    t_init_threads(&argc, &argv);
    int nt = tr_arg_int(argc, argv, 1, 4);
    iters = tr_arg_int(argc, argv, 2, iters);
    MPI_Type_contiguous(3, MPI_INT, &tri);
    MPI_Type_commit(&tri);
    tr_run(nt, worker, NULL, NULL);
    /* the shared type is whole: a message of it arrives intact */
    int x[3] = {1, 2, 3}, y[3] = {0, 0, 0};
    MPI_Sendrecv(x, 1, tri, 0, 0, y, 1, tri, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    T_CHECK(y[0] == 1 && y[1] == 2 && y[2] == 3, "shared type after the threads: %d %d %d", y[0],
            y[1], y[2]);
    MPI_Type_free(&tri);
    return t_finish();
}
