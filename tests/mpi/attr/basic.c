/* SPDX-License-Identifier: BSD-3-Clause */
/* Communicator attributes against a reference model: set/get/delete, replace
 * (old value deleted), copy callbacks on dup (custom, MPI_COMM_DUP_FN,
 * MPI_COMM_NULL_COPY_FN, flag = 0), delete callbacks on free (each value
 * exactly once), keyvals freed while attributes still use them, the MPI-1
 * names on the same keyvals, and the predefined attributes. */
#include "../comm/tutil.h"

#define MAXLOG 256
typedef struct {
    int keyval_idx; /* which of our keyvals (extra_state) */
    long val;
} event_t;
static event_t dels[MAXLOG], copies[MAXLOG];
static int ndels, ncopies;

/* extra_state carries our index of the keyval */
static int copy_plus1(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)kv;
    copies[ncopies++] = (event_t){(int)(long)extra, (long)in};
    *(void **)out = (void *)((long)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}
static int copy_refuse(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)kv;
    (void)out;
    copies[ncopies++] = (event_t){(int)(long)extra, (long)in};
    *flag = 0;
    return MPI_SUCCESS;
}
static int del_log(MPI_Comm c, int kv, void *val, void *extra) {
    (void)c;
    (void)kv;
    dels[ndels++] = (event_t){(int)(long)extra, (long)val};
    return MPI_SUCCESS;
}

static int count(const event_t *log, int n, int idx, long val) {
    int k = 0;
    for (int i = 0; i < n; i++)
        k += log[i].keyval_idx == idx && log[i].val == val;
    return k;
}

static void expect_attr(MPI_Comm c, int kv, int want_flag, long want, const char *what) {
    void *v = (void *)-1;
    int flag = -1;
    T_OK(MPI_Comm_get_attr(c, kv, &v, &flag));
    T_CHECK(flag == want_flag, "%s: flag %d", what, flag);
    if (flag && want_flag)
        T_CHECK((long)v == want, "%s: value %ld, expected %ld", what, (long)v, want);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    int kv[4];
    /* 0: custom copy (+1), 1: DUP_FN, 2: NULL_COPY_FN, 3: refuses (flag 0) */
    T_OK(MPI_Comm_create_keyval(copy_plus1, del_log, &kv[0], (void *)0L));
    T_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, del_log, &kv[1], (void *)1L));
    T_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_log, &kv[2], (void *)2L));
    T_OK(MPI_Comm_create_keyval(copy_refuse, MPI_COMM_NULL_DELETE_FN, &kv[3], (void *)3L));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            T_CHECK(kv[i] != kv[j], "keyvals %d and %d equal", i, j);

    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    for (int i = 0; i < 4; i++)
        expect_attr(c, kv[i], 0, 0, "unset");
    for (int i = 0; i < 4; i++)
        T_OK(MPI_Comm_set_attr(c, kv[i], (void *)(100L + i)));
    for (int i = 0; i < 4; i++)
        expect_attr(c, kv[i], 1, 100 + i, "set");
    T_CHECK(ndels == 0, "no delete yet (%d)", ndels);

    /* replace: the old value is deleted */
    T_OK(MPI_Comm_set_attr(c, kv[0], (void *)200L));
    T_CHECK(ndels == 1 && count(dels, ndels, 0, 100) == 1, "replace deleted the old value");
    expect_attr(c, kv[0], 1, 200, "replaced");

    /* dup: the copy callbacks decide */
    MPI_Comm d;
    T_OK(MPI_Comm_dup(c, &d));
    T_CHECK(count(copies, ncopies, 0, 200) == 1 && count(copies, ncopies, 3, 103) == 1 &&
                ncopies == 2,
            "copy callbacks: %d calls", ncopies);
    expect_attr(d, kv[0], 1, 201, "dup custom");
    expect_attr(d, kv[1], 1, 101, "dup DUP_FN");
    expect_attr(d, kv[2], 0, 0, "dup NULL_COPY_FN");
    expect_attr(d, kv[3], 0, 0, "dup flag=0");
    /* the original is unchanged */
    expect_attr(c, kv[0], 1, 200, "original after dup");
    /* attributes are per communicator */
    T_OK(MPI_Comm_set_attr(d, kv[1], (void *)301L));
    expect_attr(c, kv[1], 1, 101, "original after setting the dup");

    /* delete */
    T_OK(MPI_Comm_delete_attr(c, kv[2]));
    T_CHECK(count(dels, ndels, 2, 102) == 1, "delete_attr ran the callback");
    expect_attr(c, kv[2], 0, 0, "deleted");

    /* free: each remaining value deleted once */
    ndels = 0;
    MPI_Comm_free(&c);
    T_CHECK(ndels == 2 && count(dels, ndels, 0, 200) == 1 && count(dels, ndels, 1, 101) == 1,
            "free of c: %d deletes", ndels);

    /* keyval freed while attributes use it: callbacks still run */
    int kv0 = kv[0];
    T_OK(MPI_Comm_free_keyval(&kv[0]));
    T_CHECK(kv[0] == MPI_KEYVAL_INVALID, "freed keyval handle %#x", (unsigned)kv[0]);
    ncopies = 0;
    MPI_Comm e;
    T_OK(MPI_Comm_dup(d, &e));
    T_CHECK(count(copies, ncopies, 0, 201) == 1, "copy of a freed keyval's attribute");
    ndels = 0;
    MPI_Comm_free(&e);
    T_CHECK(count(dels, ndels, 0, 202) == 1 && count(dels, ndels, 1, 301) == 1,
            "free of e: %d deletes", ndels);
    ndels = 0;
    MPI_Comm_free(&d);
    T_CHECK(count(dels, ndels, 0, 201) == 1 && ndels == 2, "free of d: %d deletes", ndels);
    (void)kv0;

    /* MPI-1 names on the same machinery */
    int k1;
    T_OK(MPI_Keyval_create(MPI_DUP_FN, del_log, &k1, (void *)9L));
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    T_OK(MPI_Attr_put(c, k1, (void *)900L));
    void *v;
    int flag;
    T_OK(MPI_Attr_get(c, k1, &v, &flag));
    T_CHECK(flag && (long)v == 900, "Attr_get %d %ld", flag, (long)v);
    expect_attr(c, k1, 1, 900, "Comm_get_attr of an Attr_put value");
    T_OK(MPI_Comm_set_attr(c, k1, (void *)901L));
    T_OK(MPI_Attr_get(c, k1, &v, &flag));
    T_CHECK(flag && (long)v == 901, "Attr_get after Comm_set_attr");
    ndels = 0;
    T_OK(MPI_Attr_delete(c, k1));
    T_CHECK(count(dels, ndels, 9, 901) == 1, "Attr_delete ran the callback");
    T_OK(MPI_Attr_put(c, k1, (void *)902L));
    MPI_Comm_dup(c, &d);
    T_OK(MPI_Attr_get(d, k1, &v, &flag));
    T_CHECK(flag && (long)v == 902, "MPI_DUP_FN copy %ld", (long)v);
    MPI_Comm_free(&d);
    MPI_Comm_free(&c);
    T_OK(MPI_Keyval_free(&k1));
    T_CHECK(k1 == MPI_KEYVAL_INVALID, "Keyval_free handle");

    /* attributes on the predefined communicators */
    T_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kv[1], (void *)77L));
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    expect_attr(c, kv[1], 1, 77, "copied from world");
    MPI_Comm_free(&c);
    T_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kv[1]));

    /* predefined attributes */
    int *p, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    T_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
    T_CHECK(flag && *p >= 32767, "MPI_TAG_UB %d", flag ? *p : -1);
    T_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &p, &flag));
    T_CHECK(flag && (*p == MPI_PROC_NULL || (*p >= 0 && *p < size)), "MPI_HOST");
    T_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &p, &flag));
    T_CHECK(flag && (*p == MPI_ANY_SOURCE || *p == MPI_PROC_NULL || (*p >= 0 && *p < size)),
            "MPI_IO");
    T_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &p, &flag));
    T_CHECK(!flag || *p == 0 || *p == 1, "MPI_WTIME_IS_GLOBAL");
    T_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag));
    T_CHECK(!flag || *p >= size, "MPI_UNIVERSE_SIZE %d", *p);
    T_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag));
    T_CHECK(!flag || *p >= 0, "MPI_APPNUM");
    int cls, code;
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    T_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag));
    T_CHECK(flag && *p >= code && *p >= cls, "MPI_LASTUSEDCODE %d, last code %d", *p, code);
    T_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
    T_CHECK(flag && *p >= 32767, "MPI_TAG_UB through Attr_get");
    /* also on other communicators */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    T_OK(MPI_Comm_get_attr(c, MPI_TAG_UB, &p, &flag));
    T_CHECK(flag && *p >= 32767, "MPI_TAG_UB on a dup");
    MPI_Comm_free(&c);

    for (int i = 1; i < 4; i++)
        T_OK(MPI_Comm_free_keyval(&kv[i]));
    /* many keyvals, created and freed in a loop: slots are recycled */
    for (int i = 0; i < 10000; i++) {
        int k;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL);
        MPI_Comm_set_attr(MPI_COMM_SELF, k, NULL);
        MPI_Comm_delete_attr(MPI_COMM_SELF, k);
        MPI_Comm_free_keyval(&k);
    }
    return t_finish();
}
