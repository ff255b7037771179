/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Pack_external / Unpack_external / Pack_external_size with "external32":
 * big-endian, the standard's sizes (MPI_LONG is 4 bytes, MPI_LONG_DOUBLE is
 * IEEE binary128), compared with bytes written out by hand, and round trips.
 */
#include "dtest.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static void expect(const char *what, const void *inbuf, int count, MPI_Datatype dt,
                   const unsigned char *want, int nwant) {
    unsigned char buf[256];
    MPI_Aint pos = 0, size;
    memset(buf, 0xee, sizeof(buf));
    MPI_Pack_external_size("external32", count, dt, &size);
    CHECK(size == nwant, "%s: external32 size %ld, want %d", what, (long)size, nwant);
    MPI_Pack_external("external32", inbuf, count, dt, buf, sizeof(buf), &pos);
    CHECK(pos == nwant, "%s: position %ld, want %d", what, (long)pos, nwant);
    for (int i = 0; i < nwant; i++) {
        if (buf[i] != want[i]) {
            CHECK(0, "%s: byte %d is %02x, want %02x", what, i, buf[i], want[i]);
            break;
        }
    }
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    int i = 0x01020304;
    expect("int", &i, 1, MPI_INT, (unsigned char[]){1, 2, 3, 4}, 4);
    long l[2] = {-2, 0x12345678};
    expect("long", l, 2, MPI_LONG,
           (unsigned char[]){0xff, 0xff, 0xff, 0xfe, 0x12, 0x34, 0x56, 0x78}, 8);
    short s = -1;
    expect("short", &s, 1, MPI_SHORT, (unsigned char[]){0xff, 0xff}, 2);
    double d = 1.0;
    expect("double", &d, 1, MPI_DOUBLE, (unsigned char[]){0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, 8);
    float f = 1.5f;
    expect("float", &f, 1, MPI_FLOAT, (unsigned char[]){0x3f, 0xc0, 0, 0}, 4);
    wchar_t w = L'A';
    expect("wchar", &w, 1, MPI_WCHAR, (unsigned char[]){0, 0x41}, 2);
    _Bool b = 1;
    expect("bool", &b, 1, MPI_C_BOOL, (unsigned char[]){1}, 1);
    long double ld[2] = {1.0L, -2.5L};
    unsigned char ldw[32] = {0x3f, 0xff, [16] = 0xc0, 0x00, 0x40};
    expect("long double", ld, 2, MPI_LONG_DOUBLE, ldw, 32);
    float fc2[2] = {1.0f, 2.0f};
    expect("float complex", fc2, 1, MPI_C_FLOAT_COMPLEX,
           (unsigned char[]){0x3f, 0x80, 0, 0, 0x40, 0, 0, 0}, 8);
    struct {
        double v;
        int i;
    } di = {1.0, 7};
    expect("double_int", &di, 1, MPI_DOUBLE_INT,
           (unsigned char[]){0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}, 12);
    int64_t i64 = -3;
    expect("int64", &i64, 1, MPI_INT64_T,
           (unsigned char[]){0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd}, 8);

    /* a derived type: vector of shorts with a struct around it */
    struct {
        short a[4];
        long x;
    } sv = {{1, 2, 3, 4}, 5};
    MPI_Datatype v, st;
    MPI_Type_vector(2, 1, 2, MPI_SHORT, &v);
    MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, offsetof(__typeof__(sv), x)},
                           (MPI_Datatype[]){v, MPI_LONG}, &st);
    MPI_Type_commit(&st);
    expect("struct{vector of short, long}", &sv, 1, st, (unsigned char[]){0, 1, 0, 3, 0, 0, 0, 5},
           8);

    /* round trips */
    unsigned char buf[256];
    MPI_Aint pos = 0;
    MPI_Pack_external("external32", l, 2, MPI_LONG, buf, sizeof(buf), &pos);
    MPI_Pack_external("external32", ld, 2, MPI_LONG_DOUBLE, buf, sizeof(buf), &pos);
    MPI_Pack_external("external32", &sv, 1, st, buf, sizeof(buf), &pos);
    long l2[2];
    long double ld2[2];
    __typeof__(sv) sv2;
    memset(&sv2, 0, sizeof(sv2));
    MPI_Aint in = pos;
    pos = 0;
    MPI_Unpack_external("external32", buf, in, &pos, l2, 2, MPI_LONG);
    MPI_Unpack_external("external32", buf, in, &pos, ld2, 2, MPI_LONG_DOUBLE);
    MPI_Unpack_external("external32", buf, in, &pos, &sv2, 1, st);
    CHECK(pos == in, "round trip consumed %ld of %ld", (long)pos, (long)in);
    CHECK(l2[0] == -2 && l2[1] == 0x12345678, "long round trip: %ld %ld", l2[0], l2[1]);
    CHECK(ld2[0] == 1.0L && ld2[1] == -2.5L, "long double round trip");
    CHECK(sv2.a[0] == 1 && sv2.a[1] == 0 && sv2.a[2] == 3 && sv2.x == 5, "struct round trip");
    MPI_Type_free(&st);
    MPI_Type_free(&v);

    MPI_Aint sz;
    MPI_Pack_external_size("external32", 3, MPI_LONG_DOUBLE_INT, &sz);
    CHECK(sz == 60, "long_double_int external32 size %ld", (long)sz);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Pack_external_size("native", 1, MPI_INT, &sz) != MPI_SUCCESS,
          "datarep 'native' must be refused");
    return dtest_finish();
}
