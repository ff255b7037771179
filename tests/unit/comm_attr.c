/* SPDX-License-Identifier: BSD-3-Clause */
/* The attribute machinery (src/comm/attr.c) on its own: keyval kinds and
 * handles, set/get/replace/delete, copy_all (flags, failures rolled back),
 * delete_all in reverse order of setting, keyvals outliving their handle (of
 * communicators and windows: read, copied and deleted through the freed
 * handle), callbacks that change the list they are called for, slot recycling. */
#include "comm/attr.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int errs;
#define CHECK(_c, ...)                                                                             \
    do {                                                                                           \
        if (!(_c)) {                                                                               \
            errs++;                                                                                \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #_c);                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

static long log_[64];
static int nlog;
static int fail_copy_of = -1, fail_delete_of = -1;
static tdm_attr_list_t **nested_list;
static int nested_kv;

static int copy_fn(int obj, int kv, void *extra, void *in, void *out, int *flag) {
    (void)obj;
    (void)kv;
    (void)extra;
    if ((long)in == fail_copy_of)
        return 15;
    *(void **)out = (void *)((long)in + 1000);
    *flag = (long)in != 10; /* value 10 is not copied */
    return 0;
}
static int del_fn(int obj, int kv, void *val, void *extra) {
    (void)obj;
    (void)kv;
    (void)extra;
    if ((long)val == fail_delete_of)
        return 16;
    log_[nlog++] = (long)val;
    /* a callback that deletes another attribute of the same object */
    if (nested_list && (long)val == 42) {
        tdm_attr_list_t **l = nested_list;
        nested_list = NULL;
        tdm_attr_delete(TDM_ATTR_COMM, l, 0, nested_kv);
    }
    return 0;
}

int main(void) {
    int k[6], kt, flag;
    void *v;
    for (int i = 0; i < 6; i++)
        CHECK(tdm_attr_keyval_create(TDM_ATTR_COMM, copy_fn, del_fn, NULL, TDM_ATTR_PTR, &k[i]) ==
                  0,
              "create");
    CHECK(tdm_attr_keyval_create(TDM_ATTR_TYPE, copy_fn, del_fn, NULL, TDM_ATTR_PTR, &kt) == 0,
          "create type keyval");
    CHECK(((unsigned)k[0] & 0xffc00000u) == 0xa4400000u, "comm keyval handle %#x", (unsigned)k[0]);
    CHECK(((unsigned)kt & 0xffc00000u) == 0xa4c00000u, "type keyval handle %#x", (unsigned)kt);
    CHECK(tdm_attr_keyval_builtin(TDM_ATTR_COMM, 0x64400001), "MPI_TAG_UB is builtin");
    CHECK(tdm_attr_keyval_builtin(TDM_ATTR_WIN, 0x66000001), "MPI_WIN_BASE is builtin");
    CHECK(!tdm_attr_keyval_builtin(TDM_ATTR_COMM, 0x66000001), "MPI_WIN_BASE not a comm keyval");
    CHECK(!tdm_attr_keyval_valid(TDM_ATTR_COMM, kt), "kinds are not mixed");

    tdm_attr_list_t *a = NULL, *b = NULL;
    CHECK(tdm_attr_set(TDM_ATTR_COMM, &a, 0, kt, NULL, TDM_ATTR_PTR) == TDM_ATTR_EKEYVAL, "kind");
    CHECK(tdm_attr_get(TDM_ATTR_COMM, &a, k[0], &v, &flag, TDM_ATTR_PTR) == 0 && !flag, "unset");
    /* set in the order k3 k1 k5 k0 k4 k2 with values 10 + index */
    int order[6] = {3, 1, 5, 0, 4, 2};
    for (int i = 0; i < 6; i++)
        CHECK(tdm_attr_set(TDM_ATTR_COMM, &a, 0, k[order[i]], (void *)(10L + order[i]),
                           TDM_ATTR_PTR) == 0,
              "set");
    CHECK(tdm_attr_count(&a) == 6, "count");
    /* replace keeps the position, deletes the old value */
    nlog = 0;
    CHECK(tdm_attr_set(TDM_ATTR_COMM, &a, 0, k[5], (void *)24L, TDM_ATTR_PTR) == 0, "replace");
    CHECK(nlog == 1 && log_[0] == 15, "replace deleted %ld", nlog ? log_[0] : -1);
    CHECK(tdm_attr_get(TDM_ATTR_COMM, &a, k[5], &v, &flag, TDM_ATTR_PTR) == 0 && flag &&
              (long)v == 24,
          "replaced value");
    int fint;
    CHECK(tdm_attr_get(TDM_ATTR_COMM, &a, k[5], &fint, &flag, TDM_ATTR_FINT) == 0 && fint == 24,
          "as a Fortran integer");

    /* copy: 10 (k0) is not copied */
    CHECK(tdm_attr_copy_all(TDM_ATTR_COMM, &a, 0, 1, &b) == 0, "copy_all");
    CHECK(tdm_attr_count(&b) == 5, "copied %d", tdm_attr_count(&b));
    CHECK(tdm_attr_get(TDM_ATTR_COMM, &b, k[1], &v, &flag, TDM_ATTR_PTR) == 0 && flag &&
              (long)v == 1011,
          "copied value");
    CHECK(tdm_attr_get(TDM_ATTR_COMM, &b, k[0], &v, &flag, TDM_ATTR_PTR) == 0 && !flag,
          "flag 0 not copied");
    /* a failing copy rolls back what was copied */
    tdm_attr_list_t *c = NULL;
    fail_copy_of = 14; /* k4, fifth in order */
    nlog = 0;
    CHECK(tdm_attr_copy_all(TDM_ATTR_COMM, &a, 0, 2, &c) == 15, "failing copy");
    CHECK(c == NULL && nlog == 3, "rolled back: %d deletes", nlog);
    fail_copy_of = -1;

    /* delete_all: reverse order of setting: k2 k4 k0 k5 k1 k3 */
    nlog = 0;
    CHECK(tdm_attr_delete_all(TDM_ATTR_COMM, &a, 0) == 0 && a == NULL, "delete_all");
    long want[6] = {12, 14, 10, 24, 11, 13};
    CHECK(nlog == 6, "deletes %d", nlog);
    for (int i = 0; i < 6 && i < nlog; i++)
        CHECK(log_[i] == want[i], "delete %d: %ld, expected %ld", i, log_[i], want[i]);

    /* a failing delete stops delete_all and keeps the rest */
    fail_delete_of = 1013; /* k3's copy: the last to be deleted */
    nlog = 0;
    CHECK(tdm_attr_delete_all(TDM_ATTR_COMM, &b, 1) == 16, "failing delete_all");
    CHECK(tdm_attr_count(&b) == 1, "kept %d", tdm_attr_count(&b));
    fail_delete_of = -1;
    CHECK(tdm_attr_delete_all(TDM_ATTR_COMM, &b, 1) == 0 && b == NULL, "second delete_all");

    /* a keyval freed while in use keeps working for its attributes */
    CHECK(tdm_attr_set(TDM_ATTR_COMM, &a, 0, k[0], (void *)50L, TDM_ATTR_PTR) == 0, "set");
    CHECK(tdm_attr_keyval_free(TDM_ATTR_COMM, k[0]) == 0, "free keyval");
    CHECK(tdm_attr_keyval_free(TDM_ATTR_COMM, k[0]) == TDM_ATTR_EKEYVAL, "double free");
    CHECK(!tdm_attr_keyval_valid(TDM_ATTR_COMM, k[0]), "freed keyval invalid");
    int knew;
    tdm_attr_keyval_create(TDM_ATTR_COMM, NULL, NULL, NULL, TDM_ATTR_PTR, &knew);
    CHECK(knew != k[0], "slot of a keyval still in use was recycled");
    CHECK(tdm_attr_copy_all(TDM_ATTR_COMM, &a, 0, 1, &b) == 0 && tdm_attr_count(&b) == 1,
          "copy through a freed keyval");
    nlog = 0;
    tdm_attr_delete_all(TDM_ATTR_COMM, &a, 0);
    tdm_attr_delete_all(TDM_ATTR_COMM, &b, 1);
    CHECK(nlog == 2, "deletes through a freed keyval: %d", nlog);
    int kre;
    tdm_attr_keyval_create(TDM_ATTR_COMM, NULL, NULL, NULL, TDM_ATTR_PTR, &kre);
    CHECK(kre == k[0], "slot recycled once unused (%#x vs %#x)", (unsigned)kre, (unsigned)k[0]);

    /* a delete callback deleting another attribute of the same object */
    tdm_attr_set(TDM_ATTR_COMM, &a, 0, k[1], (void *)41L, TDM_ATTR_PTR);
    tdm_attr_set(TDM_ATTR_COMM, &a, 0, k[2], (void *)42L, TDM_ATTR_PTR);
    nested_list = &a;
    nested_kv = k[1];
    nlog = 0;
    CHECK(tdm_attr_delete_all(TDM_ATTR_COMM, &a, 0) == 0 && a == NULL, "nested delete");
    CHECK(nlog == 2 && log_[0] == 42 && log_[1] == 41, "nested order");

    /* NULL callbacks: nothing copied, nothing to delete */
    tdm_attr_set(TDM_ATTR_COMM, &a, 0, knew, (void *)1L, TDM_ATTR_PTR);
    CHECK(tdm_attr_copy_all(TDM_ATTR_COMM, &a, 0, 1, &b) == 0 && b == NULL, "null copy fn");
    CHECK(tdm_attr_delete(TDM_ATTR_COMM, &a, 0, knew) == 0 && a == NULL, "null delete fn");
    CHECK(tdm_attr_delete(TDM_ATTR_COMM, &a, 0, knew) == 0, "deleting an unset key");

    /* a window keyval freed while in use (MPI-4.1 §7.7.2, the same for every kind):
     * its attribute can still be read, copied and deleted with the old handle, the
     * callbacks run, only a new value is refused; gone once the last one is */
    int kw;
    tdm_attr_list_t *w = NULL, *w2 = NULL;
    CHECK(tdm_attr_keyval_create(TDM_ATTR_WIN, copy_fn, del_fn, NULL, TDM_ATTR_PTR, &kw) == 0,
          "create win keyval");
    CHECK(((unsigned)kw & 0xffc00000u) == 0xa6000000u, "win keyval handle %#x", (unsigned)kw);
    CHECK(tdm_attr_set(TDM_ATTR_WIN, &w, 7, kw, (void *)60L, TDM_ATTR_PTR) == 0, "set on a win");
    CHECK(tdm_attr_keyval_free(TDM_ATTR_WIN, kw) == 0, "free win keyval");
    CHECK(tdm_attr_get(TDM_ATTR_WIN, &w, kw, &v, &flag, TDM_ATTR_PTR) == 0 && flag && (long)v == 60,
          "get through a freed win keyval");
    CHECK(tdm_attr_set(TDM_ATTR_WIN, &w, 7, kw, (void *)61L, TDM_ATTR_PTR) == TDM_ATTR_EKEYVAL,
          "set through a freed win keyval");
    CHECK(tdm_attr_copy_all(TDM_ATTR_WIN, &w, 7, 8, &w2) == 0 && tdm_attr_count(&w2) == 1,
          "copy through a freed win keyval");
    nlog = 0;
    CHECK(tdm_attr_delete(TDM_ATTR_WIN, &w, 7, kw) == 0 && w == NULL && nlog == 1 && log_[0] == 60,
          "delete through a freed win keyval: %d callbacks", nlog);
    CHECK(tdm_attr_delete_all(TDM_ATTR_WIN, &w2, 8) == 0 && nlog == 2 && log_[1] == 1060,
          "delete_all of the copy: %d callbacks", nlog);
    CHECK(tdm_attr_delete(TDM_ATTR_WIN, &w, 7, kw) == TDM_ATTR_EKEYVAL,
          "a freed win keyval is gone with its last attribute");

    /* many keyvals */
    for (int i = 0; i < 100000; i++) {
        int kk;
        if (tdm_attr_keyval_create(TDM_ATTR_WIN, NULL, NULL, NULL, TDM_ATTR_PTR, &kk) ||
            tdm_attr_keyval_free(TDM_ATTR_WIN, kk)) {
            CHECK(0, "keyval %d", i);
            break;
        }
    }
    tdm_attr_fini();
    if (errs == 0)
        printf("No Errors\n");
    return errs ? 1 : 0;
}
