/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatype attributes: keyvals, set/get/delete, copy callbacks on MPI_Type_dup,
 * delete callbacks on MPI_Type_free and MPI_Type_delete_attr, attributes on a
 * predefined type, and names.
 */
#include "dtest.h"

static int copies, deletes;

static int copy_fn(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)keyval;
    (void)extra;
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype t, int keyval, void *val, void *extra) {
    (void)t;
    (void)keyval;
    (void)val;
    (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    int key, nocopy, flag;
    void *val;
    static char base[16];
    MPI_Type_create_keyval(copy_fn, delete_fn, &key, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_fn, &nocopy, NULL);

    MPI_Datatype t, d;
    MPI_Type_contiguous(3, MPI_INT, &t);
    MPI_Type_get_attr(t, key, &val, &flag);
    CHECK(!flag, "attribute present before set");
    MPI_Type_set_attr(t, key, base);
    MPI_Type_set_attr(t, nocopy, base + 5);
    MPI_Type_get_attr(t, key, &val, &flag);
    CHECK(flag && val == base, "get after set");

    MPI_Type_dup(t, &d);
    CHECK(copies == 1, "dup ran %d copy callbacks", copies);
    MPI_Type_get_attr(d, key, &val, &flag);
    CHECK(flag && val == base + 1, "copied attribute");
    MPI_Type_get_attr(d, nocopy, &val, &flag);
    CHECK(!flag, "MPI_TYPE_NULL_COPY_FN attribute was copied");

    MPI_Type_free(&d);
    CHECK(deletes == 1, "free of the dup ran %d delete callbacks", deletes);
    MPI_Type_delete_attr(t, key);
    CHECK(deletes == 2, "delete_attr: %d", deletes);
    MPI_Type_get_attr(t, key, &val, &flag);
    CHECK(!flag, "attribute still there after delete");
    MPI_Type_free(&t);
    CHECK(deletes == 3, "free ran the remaining delete callback: %d", deletes);

    /* predefined types carry attributes too */
    MPI_Type_set_attr(MPI_DOUBLE, key, base + 2);
    MPI_Type_get_attr(MPI_DOUBLE, key, &val, &flag);
    CHECK(flag && val == base + 2, "attribute on MPI_DOUBLE");
    MPI_Type_delete_attr(MPI_DOUBLE, key);

    MPI_Type_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
    MPI_Type_free_keyval(&nocopy);

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_set_name(MPI_DOUBLE, "my double");
    MPI_Type_get_name(MPI_DOUBLE, name, &len);
    CHECK(len == 9, "renamed predefined type: '%s'", name);
    MPI_Type_set_name(MPI_DOUBLE, "MPI_DOUBLE");
    return dtest_finish();
}
