/* SPDX-License-Identifier: BSD-3-Clause */
/* A keyval freed while attributes use it stays alive until the last of them is
 * deleted (MPI-4.1 §7.7.2): with the handle the program kept, those attributes
 * can still be read and deleted (the delete callback runs, once), a dup still
 * calls the copy callback, and freeing the object deletes them; only setting a
 * new value with it fails. For communicator keyvals (MPI-2 and MPI-1 names) and
 * datatype keyvals. Once the last attribute is gone the keyval is invalid. */
#include "../comm/tutil.h"

static int ndel[3], ncopy[3];
static long last_del[3];

/* extra_state: which of the three keyvals */
static int copy_cb(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)kv;
    ncopy[(long)extra]++;
    *(void **)out = (void *)((long)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}
static int del_cb(MPI_Comm c, int kv, void *val, void *extra) {
    (void)c;
    (void)kv;
    ndel[(long)extra]++;
    last_del[(long)extra] = (long)val;
    return MPI_SUCCESS;
}
static int type_copy_cb(MPI_Datatype old, int kv, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)kv;
    ncopy[(long)extra]++;
    *(void **)out = (void *)((long)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}
static int type_del_cb(MPI_Datatype t, int kv, void *val, void *extra) {
    (void)t;
    (void)kv;
    ndel[(long)extra]++;
    last_del[(long)extra] = (long)val;
    return MPI_SUCCESS;
}

static void expect_comm_attr(MPI_Comm c, int kv, int want_flag, long want, const char *what) {
    void *v = NULL;
    int flag = -1;
    T_OK(MPI_Comm_get_attr(c, kv, &v, &flag));
    T_CHECK(flag == want_flag && (!flag || (long)v == want), "%s: flag %d value %ld", what, flag,
            (long)v);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);

    /* MPI-2 names: set, free the keyval, then read, dup, delete with the kept handle */
    int kv, kept;
    T_OK(MPI_Comm_create_keyval(copy_cb, del_cb, &kv, (void *)0L));
    T_OK(MPI_Comm_set_attr(a, kv, (void *)100L));
    kept = kv;
    T_OK(MPI_Comm_free_keyval(&kv));
    T_CHECK(kv == MPI_KEYVAL_INVALID, "freed keyval handle %#x", (unsigned)kv);
    expect_comm_attr(a, kept, 1, 100, "get after the keyval was freed");
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(a, kept, (void *)5L));
    expect_comm_attr(a, kept, 1, 100, "value after a refused set");
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&kept));
    T_OK(MPI_Comm_dup(a, &b));
    T_CHECK(ncopy[0] == 1, "copy callback of a freed keyval ran %d times", ncopy[0]);
    expect_comm_attr(b, kept, 1, 101, "copied attribute of a freed keyval");
    T_OK(MPI_Comm_delete_attr(a, kept));
    T_CHECK(ndel[0] == 1 && last_del[0] == 100, "delete on a: %d calls, value %ld", ndel[0],
            last_del[0]);
    expect_comm_attr(b, kept, 1, 101, "b's attribute after a's was deleted");
    /* deleting a key a does not have is no error while the keyval lives (b uses it) */
    T_OK(MPI_Comm_delete_attr(a, kept));
    T_CHECK(ndel[0] == 1, "deleting an absent attribute ran the callback");
    T_OK(MPI_Comm_free(&b));
    T_CHECK(ndel[0] == 2 && last_del[0] == 101, "delete on free: %d calls, value %ld", ndel[0],
            last_del[0]);
    /* the last attribute is gone: so is the keyval */
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_delete_attr(a, kept));
    void *v;
    int flag;
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(a, kept, &v, &flag));

    /* MPI-1 names */
    int k1;
    T_OK(MPI_Keyval_create(copy_cb, del_cb, &k1, (void *)1L));
    T_OK(MPI_Attr_put(a, k1, (void *)200L));
    kept = k1;
    T_OK(MPI_Keyval_free(&k1));
    void *got = NULL;
    T_OK(MPI_Attr_get(a, kept, &got, &flag));
    T_CHECK(flag && (long)got == 200, "MPI_Attr_get after MPI_Keyval_free: flag %d value %ld", flag,
            (long)got);
    T_OK(MPI_Attr_delete(a, kept));
    T_CHECK(ndel[1] == 1 && last_del[1] == 200, "MPI_Attr_delete: %d calls, value %ld", ndel[1],
            last_del[1]);
    T_FAILS(MPI_ERR_KEYVAL, MPI_Attr_delete(a, kept));

    /* datatype keyvals */
    int tk;
    MPI_Datatype t, t2;
    MPI_Type_contiguous(2, MPI_INT, &t);
    T_OK(MPI_Type_create_keyval(type_copy_cb, type_del_cb, &tk, (void *)2L));
    T_OK(MPI_Type_set_attr(t, tk, (void *)300L));
    kept = tk;
    T_OK(MPI_Type_free_keyval(&tk));
    T_CHECK(tk == MPI_KEYVAL_INVALID, "freed type keyval handle %#x", (unsigned)tk);
    T_OK(MPI_Type_get_attr(t, kept, &got, &flag));
    T_CHECK(flag && (long)got == 300, "MPI_Type_get_attr after free_keyval: flag %d value %ld",
            flag, (long)got);
    T_OK(MPI_Type_dup(t, &t2));
    T_CHECK(ncopy[2] == 1, "type copy callback of a freed keyval ran %d times", ncopy[2]);
    T_OK(MPI_Type_delete_attr(t, kept));
    T_CHECK(ndel[2] == 1 && last_del[2] == 300, "MPI_Type_delete_attr: %d calls, value %ld",
            ndel[2], last_del[2]);
    T_OK(MPI_Type_free(&t2));
    T_CHECK(ndel[2] == 2 && last_del[2] == 301, "delete on MPI_Type_free: %d calls, value %ld",
            ndel[2], last_del[2]);
    T_FAILS(MPI_ERR_KEYVAL, MPI_Type_delete_attr(t, kept));
    MPI_Type_free(&t);

    MPI_Comm_free(&a);
    return t_finish();
}
