/* SPDX-License-Identifier: BSD-3-Clause */
/* Failing callbacks and invalid keyvals: a delete callback's error is returned
 * by delete_attr / set_attr (replace) / Comm_free and the attribute (and the
 * communicator) stay; a copy callback's error makes Comm_dup fail; predefined
 * keyvals cannot be set, deleted or freed; invalid keyvals give MPI_ERR_KEYVAL. */
#include "../comm/tutil.h"

static int fail_delete = 1, fail_copy = 1, deletes;

static int copy_maybe_fail(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)kv;
    (void)extra;
    if (fail_copy)
        return MPI_ERR_OTHER;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int del_maybe_fail(MPI_Comm c, int kv, void *val, void *extra) {
    (void)c;
    (void)kv;
    (void)val;
    (void)extra;
    if (fail_delete)
        return MPI_ERR_ACCESS;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int kv, kv2, flag;
    void *v;
    MPI_Comm c, d;
    T_OK(MPI_Comm_create_keyval(copy_maybe_fail, del_maybe_fail, &kv, NULL));
    T_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c)); /* inherits MPI_ERRORS_RETURN */
    T_OK(MPI_Comm_set_attr(c, kv, (void *)1L));

    T_FAILS(MPI_ERR_ACCESS, MPI_Comm_delete_attr(c, kv));
    T_OK(MPI_Comm_get_attr(c, kv, &v, &flag));
    T_CHECK(flag && (long)v == 1, "attribute kept after a failed delete");
    T_FAILS(MPI_ERR_ACCESS, MPI_Comm_set_attr(c, kv, (void *)2L));
    T_OK(MPI_Comm_get_attr(c, kv, &v, &flag));
    T_CHECK(flag && (long)v == 1, "attribute kept after a failed replace");

    d = MPI_COMM_NULL;
    T_FAILS(MPI_ERR_OTHER, MPI_Comm_dup(c, &d));
    fail_copy = 0;
    T_OK(MPI_Comm_dup(c, &d));
    T_OK(MPI_Comm_get_attr(d, kv, &v, &flag));
    T_CHECK(flag && (long)v == 1, "copied after the copy callback recovered");

    MPI_Comm cc = c;
    T_FAILS(MPI_ERR_ACCESS, MPI_Comm_free(&c));
    T_CHECK(c == cc, "handle changed by a failed free");
    int rank;
    T_OK(MPI_Comm_rank(c, &rank)); /* still valid */
    fail_delete = 0;
    T_OK(MPI_Comm_free(&c));
    T_OK(MPI_Comm_free(&d));
    T_CHECK(deletes == 2, "%d deletes", deletes);

    /* invalid and predefined keyvals */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(c, MPI_KEYVAL_INVALID, NULL));
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(c, 0x12345, &v, &flag));
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(c, MPI_TAG_UB, NULL));
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_delete_attr(c, MPI_TAG_UB));
    int builtin = MPI_TAG_UB;
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&builtin));
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(c, MPI_WIN_BASE, &v, &flag));
    kv2 = kv;
    T_OK(MPI_Comm_free_keyval(&kv));
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(c, kv2, NULL));
    T_FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&kv2));
    T_FAILS(MPI_ERR_KEYVAL, MPI_Attr_put(c, MPI_KEYVAL_INVALID, NULL));
    MPI_Comm_free(&c);
    return t_finish();
}
