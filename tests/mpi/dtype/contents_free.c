/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Type_get_contents gives a derived constituent type back as a new datatype the
 * user frees, a predefined one as itself (MPI-4.1 §5.1.13). So freeing what it returned
 * leaves the original whole: its attributes (no delete callback runs), its name, and
 * messages of it; the returned type is one of its own (its own handle, name and
 * attributes), equivalent to the original (the same description, size, extent, layout),
 * usable after the user freed the original. When the user has freed every handle
 * nothing of them is left: on Tandem a freed handle then names nothing.
 */
#include "dtest.h"

#include <string.h>

static int deletes; /* delete callbacks run */

static int count_delete(MPI_Datatype t, int kv, void *val, void *extra) {
    (void)t, (void)kv, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

/* A message of `t` to this process arrives as one of `u` (both: 3 blocks of 2 ints,
 * stride 4 ints): the 6 ints land where u says. */
static void check_message(const char *what, MPI_Datatype t, MPI_Datatype u) {
    int out[12], in[12];
    for (int i = 0; i < 12; i++) {
        out[i] = 100 + i;
        in[i] = -1;
    }
    int rc = MPI_Sendrecv(out, 1, t, 0, 7, in, 1, u, 0, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "%s: Sendrecv failed (%d)", what, rc);
    for (int i = 0; i < 12; i++) {
        int want = i % 4 < 2 && i < 10 ? 100 + i : -1;
        CHECK(in[i] == want, "%s: int %d is %d, want %d", what, i, in[i], want);
    }
}

static void check_name(const char *what, MPI_Datatype t, const char *want) {
    char name[MPI_MAX_OBJECT_NAME] = "?";
    int len = -1;
    int rc = MPI_Type_get_name(t, name, &len);
    CHECK(rc == MPI_SUCCESS && !strcmp(name, want), "%s: name '%s' (rc %d), want '%s'", what, name,
          rc, want);
}

/* The attribute of kv on t: *val_p and whether it is set. */
static int attr_of(MPI_Datatype t, int kv, long *val_p) {
    void *v = NULL;
    int flag = 0;
    MPI_Type_get_attr(t, kv, &v, &flag);
    *val_p = (long)v;
    return flag;
}

/* t's description is u's: a vector of 3 blocks of 2, stride 4, of MPI_INT. */
static void check_is_vector(const char *what, MPI_Datatype t) {
    int ni = -1, na = -1, nt = -1, comb = -1, ints[3] = {0};
    MPI_Datatype old = MPI_DATATYPE_NULL;
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nt == 1,
          "%s: envelope combiner %d, %d %d %d", what, comb, ni, na, nt);
    if (comb != MPI_COMBINER_VECTOR || ni != 3 || nt != 1)
        return;
    MPI_Type_get_contents(t, 3, 0, 1, ints, NULL, &old);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && old == MPI_INT,
          "%s: contents %d %d %d of %#x", what, ints[0], ints[1], ints[2], (unsigned)old);
    int size = -1;
    MPI_Aint lb = -1, ext = -1;
    MPI_Type_size(t, &size);
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK(size == 24 && lb == 0 && ext == 40, "%s: size %d lb %ld extent %ld", what, size, (long)lb,
          (long)ext);
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(ver, &len);
    int on_tandem = strstr(ver, "Tandem") != NULL;

    MPI_Datatype u, t, s;
    int kv;
    MPI_Type_vector(3, 2, 4, MPI_INT, &u);
    MPI_Type_commit(&u);
    MPI_Type_set_name(u, "u");
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, count_delete, &kv, NULL);
    MPI_Type_set_attr(u, kv, (void *)42L);
    MPI_Type_contiguous(2, u, &t);
    MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 64}, (MPI_Datatype[]){u, MPI_DOUBLE},
                           &s);

    /* a derived constituent: a new handle, equivalent, with nothing of u's own */
    MPI_Datatype r = MPI_DATATYPE_NULL;
    int ints[2];
    MPI_Type_get_contents(t, 1, 0, 1, ints, NULL, &r);
    CHECK(r != u && r != MPI_DATATYPE_NULL, "contiguous's old type came back as u itself");
    check_is_vector("returned", r);
    long v = 0;
    CHECK(!attr_of(r, kv, &v), "the returned type carries u's attribute");
    check_name("returned", r, "");
    MPI_Type_set_name(r, "r");
    check_name("u after naming the returned type", u, "u");
    check_message("returned, committed as u is", r, u);

    /* freeing it leaves u whole */
    CHECK(MPI_Type_free(&r) == MPI_SUCCESS && r == MPI_DATATYPE_NULL, "MPI_Type_free(returned)");
    CHECK(deletes == 0, "freeing the returned type ran %d delete callbacks of u's attribute",
          deletes);
    CHECK(attr_of(u, kv, &v) && v == 42, "u's attribute is gone after the returned type's free");
    check_name("u after the returned type's free", u, "u");
    check_message("u after the returned type's free", u, u);
    check_is_vector("u after the returned type's free", u);

    /* a struct: the derived field type is new, the predefined one itself */
    MPI_Datatype f[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    int sints[3];
    MPI_Aint sdisps[2];
    MPI_Type_get_contents(s, 3, 2, 2, sints, sdisps, f);
    CHECK(f[0] != u && f[0] != MPI_DATATYPE_NULL, "struct's derived field came back as u");
    CHECK(f[1] == MPI_DOUBLE, "struct's MPI_DOUBLE came back as %#x", (unsigned)f[1]);
    check_is_vector("struct's field", f[0]);
    MPI_Type_free(&f[0]);
    CHECK(attr_of(u, kv, &v) && v == 42 && deletes == 0, "u's attribute after the field's free");

    /* the user frees u: t still describes it, and a type get_contents returns now works */
    MPI_Datatype u_handle = u;
    MPI_Type_free(&u);
    CHECK(deletes == 1, "u's free ran %d delete callbacks, want 1", deletes);
    MPI_Type_get_contents(t, 1, 0, 1, ints, NULL, &r);
    check_is_vector("returned after u's free", r);
    MPI_Type_commit(&r);
    check_message("returned after u's free", r, r);
    MPI_Datatype r_handle = r;
    MPI_Type_free(&r);
    MPI_Type_free(&s);
    MPI_Type_free(&t);
    MPI_Type_free_keyval(&kv);
    /* every reference is gone: on Tandem a freed handle whose object died names nothing
     * (slots are never reused), so a returned type that kept u alive shows here */
    if (on_tandem) {
        int size = -1;
        CHECK(MPI_Type_size(u_handle, &size) != MPI_SUCCESS,
              "u is still there after every handle was freed");
        CHECK(MPI_Type_size(r_handle, &size) != MPI_SUCCESS,
              "a returned type is still there after its free");
    }
    return dtest_finish();
}
