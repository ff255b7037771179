/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Get_elements / Get_count for partial receives: messages that end inside
 * an item of the receive type (mixed basic types, pairs, vectors), truncation,
 * and MPI_Status_set_elements. The counts are worked out by hand.
 */
#include "dtest.h"

#include <stddef.h>
#include <string.h>

struct s {
    int i;
    double d[2];
    char c[3];
};

static MPI_Datatype struct_type(void) {
    MPI_Datatype t;
    MPI_Type_create_struct(
        3, (int[]){1, 2, 3},
        (MPI_Aint[]){offsetof(struct s, i), offsetof(struct s, d), offsetof(struct s, c)},
        (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_CHAR}, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Rank 1 sends k structs followed by the first fields of one more (none, the
 * int, or the int and m doubles: a prefix of the receive type's signature, as
 * type matching requires); rank 0 receives them as up to 10 structs. */
static void partial_struct(int k, int with_int, int m, int want_count, int want_elems) {
    MPI_Datatype t = struct_type();
    struct s v[10];
    MPI_Aint ext = sizeof(struct s);
    if (rank == 1) {
        for (int j = 0; j < 10; j++) {
            v[j].i = j;
            v[j].d[0] = j + 0.5;
            v[j].d[1] = j + 0.75;
            memcpy(v[j].c, "xyz", 3);
        }
        MPI_Datatype st;
        MPI_Type_create_struct(3, (int[]){k, with_int, m},
                               (MPI_Aint[]){0, k * ext + (MPI_Aint)offsetof(struct s, i),
                                            k * ext + (MPI_Aint)offsetof(struct s, d)},
                               (MPI_Datatype[]){t, MPI_INT, MPI_DOUBLE}, &st);
        MPI_Type_commit(&st);
        MPI_Send(v, 1, st, 0, 1, MPI_COMM_WORLD);
        MPI_Type_free(&st);
    } else if (rank == 0) {
        MPI_Status st;
        memset(v, 0, sizeof(v));
        MPI_Recv(v, 10, t, 1, 1, MPI_COMM_WORLD, &st);
        int count, elems;
        MPI_Count ex;
        MPI_Get_count(&st, t, &count);
        MPI_Get_elements(&st, t, &elems);
        MPI_Get_elements_x(&st, t, &ex);
        CHECK(count == want_count, "%d+%d+%d: count %d, want %d", k, with_int, m, count,
              want_count);
        CHECK(elems == want_elems && ex == want_elems, "%d+%d+%d: elements %d, want %d", k,
              with_int, m, elems, want_elems);
        for (int j = 0; j < k; j++)
            CHECK(v[j].i == j && v[j].d[1] == j + 0.75 && v[j].c[2] == 'z', "item %d", j);
        if (with_int)
            CHECK(v[k].i == k, "partial item: int");
        if (m)
            CHECK(v[k].d[0] == k + 0.5 && v[k].d[1] == (m > 1 ? k + 0.75 : 0), "partial doubles");
    }
    MPI_Type_free(&t);
}

static void partial_other(void) {
    MPI_Status st;
    int n;
    if (rank == 1) {
        double d[6] = {1, 2, 3, 4, 5, 6};
        MPI_Send(d, 6, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
        struct {
            double v;
            int i;
        } di[2] = {{1.5, 1}, {2.5, 2}};
        MPI_Send(di, 1, MPI_DOUBLE_INT, 0, 3, MPI_COMM_WORLD);
        MPI_Send(&di[1].v, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
        int two[6] = {1, 2, 3, 4, 5, 6};
        MPI_Send(two, 5, MPI_INT, 0, 4, MPI_COMM_WORLD);
        MPI_Send(d, 6, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
    } else if (rank == 0) {
        /* vector items of 4 doubles: 6 doubles = 1.5 items */
        MPI_Datatype v;
        MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &v);
        MPI_Type_commit(&v);
        double r[16];
        for (int i = 0; i < 16; i++)
            r[i] = 0;
        MPI_Recv(r, 2, v, 1, 2, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, v, &n);
        CHECK(n == MPI_UNDEFINED, "vector: count %d, want MPI_UNDEFINED", n);
        MPI_Get_elements(&st, v, &n);
        CHECK(n == 6, "vector: elements %d, want 6", n);
        /* item 2 starts one extent (7 doubles) later */
        CHECK(r[0] == 1 && r[6] == 4 && r[7] == 5 && r[9] == 6 && r[11] == 0, "vector data");
        MPI_Type_free(&v);
        /* DOUBLE_INT: a whole pair, then a lone double (a prefix of the next pair) */
        struct {
            double v;
            int i;
        } p[4];
        MPI_Recv(p, 4, MPI_DOUBLE_INT, 1, 3, MPI_COMM_WORLD, &st);
        MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
        CHECK(n == 2, "double_int: elements %d, want 2", n);
        MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
        CHECK(n == 1 && p[0].v == 1.5 && p[0].i == 1, "double_int: count %d", n);
        MPI_Recv(p, 4, MPI_DOUBLE_INT, 1, 3, MPI_COMM_WORLD, &st);
        MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
        CHECK(n == 1, "double_int: elements %d of a lone double, want 1", n);
        MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
        CHECK(n == MPI_UNDEFINED && p[0].v == 2.5, "double_int: count %d", n);
        /* MPI_2INT counts two ints per item */
        int q[6];
        MPI_Recv(q, 3, MPI_2INT, 1, 4, MPI_COMM_WORLD, &st);
        MPI_Get_elements(&st, MPI_2INT, &n);
        CHECK(n == 5, "2int: elements %d, want 5", n);
        /* truncation: 6 doubles into room for 4 */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        double t4[4];
        int err = MPI_Recv(t4, 4, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, &st);
        int cls;
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "truncation: class %d", cls);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
}

static void set_elements(void) {
    MPI_Datatype t = struct_type();
    MPI_Status st;
    int n;
    MPI_Status_set_elements(&st, t, 20); /* 3 items and int, double */
    MPI_Get_elements(&st, t, &n);
    CHECK(n == 20, "set_elements: %d", n);
    MPI_Get_count(&st, t, &n);
    CHECK(n == MPI_UNDEFINED, "set_elements count %d", n);
    MPI_Get_elements(&st, MPI_BYTE, &n);
    CHECK(n == 3 * 23 + 12, "set_elements: %d bytes", n);
    MPI_Status_set_elements(&st, t, 12);
    MPI_Get_count(&st, t, &n);
    CHECK(n == 2, "set_elements: count %d", n);
    MPI_Type_free(&t);
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    if (size >= 2) {
        partial_struct(3, 1, 1, MPI_UNDEFINED, 20);
        partial_struct(2, 0, 0, 2, 12);
        partial_struct(4, 1, 0, MPI_UNDEFINED, 25);
        partial_struct(0, 1, 2, MPI_UNDEFINED, 3);
        partial_other();
    }
    set_elements();
    return dtest_finish();
}
