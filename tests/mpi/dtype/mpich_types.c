/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The datatypes newer MPICH ABIs added (tools/dev/mpich_handles.txt): MPIX_C_FLOAT16,
 * MPIX_BFLOAT16, MPI_REAL2, MPI_COMPLEX4, MPI_INTEGER16, MPI_LOGICAL1..16. For each: size,
 * extent, name, envelope, a message between ranks (also as a derived type), external32
 * bytes; MPI_Type_match_size; and the reductions MPI defines for their class: MAX, MIN,
 * SUM, PROD on the 2-byte floating types (through double, one rounding to nearest even),
 * SUM and PROD on COMPLEX4, every integer op on INTEGER16 (carries across 64 bits), the
 * logical ops on the logicals; others refused with MPI_ERR_OP.
 */
#include "dtest.h"

#include <stdint.h>
#include <string.h>

__extension__ typedef __int128 i128_t;

static int cls(int err) {
    int c = -1;
    MPI_Error_class(err, &c);
    return c;
}

typedef struct {
    MPI_Datatype type;
    const char *name;
    int size;
} newtype_t;

static const newtype_t types[] = {
    {MPIX_C_FLOAT16, "MPIX_C_FLOAT16", 2}, {MPIX_BFLOAT16, "MPIX_BFLOAT16", 2},
    {MPI_REAL2, "MPI_REAL2", 2},           {MPI_COMPLEX4, "MPI_COMPLEX4", 4},
    {MPI_INTEGER16, "MPI_INTEGER16", 16},  {MPI_LOGICAL1, "MPI_LOGICAL1", 1},
    {MPI_LOGICAL2, "MPI_LOGICAL2", 2},     {MPI_LOGICAL4, "MPI_LOGICAL4", 4},
    {MPI_LOGICAL8, "MPI_LOGICAL8", 8},     {MPI_LOGICAL16, "MPI_LOGICAL16", 16},
};
#define NTYPES (int)(sizeof(types) / sizeof(types[0]))

/* binary16 and bfloat16 bit patterns used below */
enum {
    H_ONE = 0x3c00,  /* 1.0 */
    H_MTWO = 0xc000, /* -2.0 */
    H_2048 = 0x6800, /* 2048: the ulp there is 2 */
    H_2050 = 0x6801,
    H_2052 = 0x6802,
    H_ONE_ULP = 0x3c01,  /* 1 + 2^-10 */
    H_ONE_2ULP = 0x3c02, /* 1 + 2^-9 */
    H_HALF = 0x3800,     /* 0.5 */
    B_ONE = 0x3f80,
    B_MTWO = 0xc000,
    B_256 = 0x4380, /* 256: the ulp there is 2 */
    B_260 = 0x4382,
    B_THREE = 0x4040,
};

static void check_basics(const newtype_t *t) {
    int sz = -1, len = 0, ni, na, nd, comb = -1;
    MPI_Aint lb = -1, ext = -1;
    char name[MPI_MAX_OBJECT_NAME] = "";
    CHECK(MPI_Type_size(t->type, &sz) == MPI_SUCCESS && sz == t->size, "%s: size %d", t->name, sz);
    MPI_Type_get_extent(t->type, &lb, &ext);
    CHECK(lb == 0 && ext == t->size, "%s: lb %ld extent %ld", t->name, (long)lb, (long)ext);
    MPI_Type_get_name(t->type, name, &len);
    CHECK(strcmp(name, t->name) == 0, "%s: named \"%s\"", t->name, name);
    MPI_Type_get_envelope(t->type, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_NAMED, "%s: combiner %d", t->name, comb);
}

/* n items of t between ranks 0 and 1 (or to itself), as t and as a vector of t */
static void check_message(const newtype_t *t) {
    unsigned char a[64], b[64];
    int peer = size > 1 ? 1 - rank : rank, n = -1;
    if (rank > 1)
        return;
    for (int i = 0; i < 64; i++)
        a[i] = (unsigned char)(i * 7 + rank + 1);
    memset(b, 0, sizeof(b));
    int count = 32 / t->size;
    MPI_Status st;
    MPI_Sendrecv(a, count, t->type, peer, 5, b, count, t->type, peer, 5, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, t->type, &n);
    for (int i = 0; i < 32; i++)
        CHECK(b[i] == (unsigned char)(i * 7 + peer + 1), "%s: byte %d is %d", t->name, i, b[i]);
    CHECK(n == count, "%s: count %d, want %d", t->name, n, count);

    /* every other item */
    MPI_Datatype v;
    MPI_Type_vector(count / 2, 1, 2, t->type, &v);
    MPI_Type_commit(&v);
    memset(b, 0, sizeof(b));
    MPI_Sendrecv(a, 1, v, peer, 6, b, count / 2, t->type, peer, 6, MPI_COMM_WORLD, &st);
    for (int i = 0; i < count / 2; i++)
        for (int k = 0; k < t->size; k++)
            CHECK(b[i * t->size + k] == (unsigned char)((2 * i * t->size + k) * 7 + peer + 1),
                  "%s: vector item %d byte %d", t->name, i, k);
    MPI_Type_free(&v);
}

/* external32 is big-endian for all of them (COMPLEX4: each half) */
static void check_external32(void) {
    uint16_t h[2] = {H_ONE, H_MTWO};
    unsigned char out[32];
    MPI_Aint pos = 0, size32 = 0;
    MPI_Pack_external_size("external32", 2, MPIX_C_FLOAT16, &size32);
    CHECK(size32 == 4, "external32 size of 2 MPIX_C_FLOAT16: %ld", (long)size32);
    MPI_Pack_external("external32", h, 2, MPIX_C_FLOAT16, out, sizeof(out), &pos);
    CHECK(pos == 4 && out[0] == 0x3c && out[1] == 0 && out[2] == 0xc0 && out[3] == 0,
          "MPIX_C_FLOAT16 external32: %02x %02x %02x %02x", out[0], out[1], out[2], out[3]);
    pos = 0;
    MPI_Pack_external("external32", h, 1, MPI_COMPLEX4, out, sizeof(out), &pos);
    CHECK(pos == 4 && out[0] == 0x3c && out[1] == 0 && out[2] == 0xc0 && out[3] == 0,
          "MPI_COMPLEX4 external32: %02x %02x %02x %02x", out[0], out[1], out[2], out[3]);
    i128_t v = ((i128_t)0x0102030405060708 << 64) | (i128_t)0x090a0b0c0d0e0f10, back = 0;
    pos = 0;
    MPI_Pack_external("external32", &v, 1, MPI_INTEGER16, out, sizeof(out), &pos);
    int ok = pos == 16;
    for (int i = 0; i < 16; i++)
        ok = ok && out[i] == i + 1;
    CHECK(ok, "MPI_INTEGER16 external32 is not big-endian");
    pos = 0;
    MPI_Unpack_external("external32", out, 16, &pos, &back, 1, MPI_INTEGER16);
    CHECK(back == v, "MPI_INTEGER16 external32 round trip");
    int64_t l8 = 1;
    pos = 0;
    MPI_Pack_external("external32", &l8, 1, MPI_LOGICAL8, out, sizeof(out), &pos);
    CHECK(pos == 8 && out[7] == 1 && out[0] == 0, "MPI_LOGICAL8 external32");
}

static void check_match_size(void) {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &t);
    CHECK(t == MPI_REAL2, "match_size(REAL, 2) = %#x", (unsigned)t);
    MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 4, &t);
    CHECK(t == MPI_COMPLEX4, "match_size(COMPLEX, 4) = %#x", (unsigned)t);
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &t);
    CHECK(t == MPI_INTEGER16, "match_size(INTEGER, 16) = %#x", (unsigned)t);
}

/* inout = in op inout for one pair of 2-byte values */
static uint16_t local2(MPI_Datatype t, MPI_Op op, uint16_t in, uint16_t inout) {
    int rc = MPI_Reduce_local(&in, &inout, 1, t, op);
    CHECK(rc == MPI_SUCCESS, "Reduce_local on a 2-byte type: class %d", cls(rc));
    return inout;
}

static void check_half_ops(void) {
    MPI_Datatype halves[2] = {MPIX_C_FLOAT16, MPI_REAL2};
    for (int i = 0; i < 2; i++) {
        MPI_Datatype t = halves[i];
        /* values, not bit patterns, are compared (-2 has the higher bits) */
        CHECK(local2(t, MPI_MAX, H_MTWO, H_ONE) == H_ONE, "f16 max");
        CHECK(local2(t, MPI_MIN, H_ONE, H_MTWO) == H_MTWO, "f16 min");
        CHECK(local2(t, MPI_SUM, H_ONE, H_ONE) == 0x4000, "f16 1 + 1");
        CHECK(local2(t, MPI_PROD, H_MTWO, H_HALF) == 0xbc00, "f16 -2 * 0.5");
        /* ties to even: 2048 + 1 = 2049 -> 2048; 2050 + 1 = 2051 -> 2052 */
        CHECK(local2(t, MPI_SUM, H_ONE, H_2048) == H_2048, "f16 2048 + 1");
        CHECK(local2(t, MPI_SUM, H_ONE, H_2050) == H_2052, "f16 2050 + 1");
        /* (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 -> 1 + 2^-9 */
        CHECK(local2(t, MPI_PROD, H_ONE_ULP, H_ONE_ULP) == H_ONE_2ULP, "f16 product");
        /* 65504 + 32 overflows to infinity */
        CHECK(local2(t, MPI_SUM, 0x5000, 0x7bff) == 0x7c00, "f16 overflow");
    }
    MPI_Datatype t = MPIX_BFLOAT16;
    CHECK(local2(t, MPI_MAX, B_MTWO, B_ONE) == B_ONE, "bf16 max");
    CHECK(local2(t, MPI_MIN, B_ONE, B_MTWO) == B_MTWO, "bf16 min");
    CHECK(local2(t, MPI_SUM, B_ONE, B_256) == B_256, "bf16 256 + 1");
    CHECK(local2(t, MPI_SUM, B_THREE, B_256) == B_260, "bf16 256 + 3");
    CHECK(local2(t, MPI_PROD, B_MTWO, B_THREE) == 0xc0c0, "bf16 -2 * 3");

    /* COMPLEX4: (1 + 2i) + (0.5 - 1i) = 1.5 + 1i; (1 + 2i)(0.5 - 1i) = 2.5 + 0i */
    uint16_t a[2] = {H_ONE, 0x4000}, b[2] = {H_HALF, 0xbc00};
    MPI_Reduce_local(a, b, 1, MPI_COMPLEX4, MPI_SUM);
    CHECK(b[0] == 0x3e00 && b[1] == H_ONE, "complex4 sum: %#x %#x", b[0], b[1]);
    b[0] = H_HALF;
    b[1] = 0xbc00;
    MPI_Reduce_local(a, b, 1, MPI_COMPLEX4, MPI_PROD);
    CHECK(b[0] == 0x4100 && (b[1] & 0x7fff) == 0, "complex4 product: %#x %#x", b[0], b[1]);

    /* across the ranks (at most 8): each gives 0.5 and rank r gives (r + 1) / 2, so the
     * sum is size / 2 and the maximum size / 2, all exact in both formats */
    for (int f = 0; f < 2 && size <= 8; f++) {
        MPI_Datatype ft = f ? MPIX_BFLOAT16 : MPIX_C_FLOAT16;
        static const uint16_t halves_of[2][8] = {
            /* 0.5, 1, 1.5, ..., 4 */
            {0x3800, 0x3c00, 0x3e00, 0x4000, 0x4100, 0x4200, 0x4300, 0x4400},
            {0x3f00, 0x3f80, 0x3fc0, 0x4000, 0x4020, 0x4040, 0x4060, 0x4080}};
        uint16_t mine[2] = {halves_of[f][0], halves_of[f][rank]}, all[2] = {0, 0};
        MPI_Allreduce(mine, all, 2, ft, MPI_SUM, MPI_COMM_WORLD);
        CHECK(all[0] == halves_of[f][size - 1], "%s Allreduce sum: %#x", f ? "bf16" : "f16",
              all[0]);
        MPI_Allreduce(mine + 1, all + 1, 1, ft, MPI_MAX, MPI_COMM_WORLD);
        CHECK(all[1] == halves_of[f][size - 1], "%s Allreduce max: %#x", f ? "bf16" : "f16",
              all[1]);
    }
}

static void check_int16_ops(void) {
    /* rank r gives 2^64 - 1 + r and -(r + 1) * 2^70 */
    const i128_t p70 = (i128_t)1 << 70;
    i128_t mine[2] = {(i128_t)UINT64_MAX + rank, -(i128_t)(rank + 1) * p70}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD);
    i128_t s0 = (i128_t)UINT64_MAX * size + (i128_t)size * (size - 1) / 2;
    i128_t s1 = -((i128_t)size * (size + 1) / 2) * p70;
    CHECK(all[0] == s0 && all[1] == s1, "INTEGER16 sum");
    MPI_Allreduce(mine, all, 2, MPI_INTEGER16, MPI_MIN, MPI_COMM_WORLD);
    CHECK(all[0] == (i128_t)UINT64_MAX && all[1] == -(i128_t)size * p70, "INTEGER16 min");
    MPI_Allreduce(mine, all, 2, MPI_INTEGER16, MPI_MAX, MPI_COMM_WORLD);
    CHECK(all[0] == (i128_t)UINT64_MAX + size - 1 && all[1] == -p70, "INTEGER16 max");
    i128_t x = (i128_t)1 << 100, y = 3;
    MPI_Reduce_local(&x, &y, 1, MPI_INTEGER16, MPI_PROD);
    CHECK(y == (i128_t)3 << 100, "INTEGER16 product");
    x = ((i128_t)0xf0 << 64) | 0xff;
    y = ((i128_t)0x3c << 64) | 0x0f;
    MPI_Reduce_local(&x, &y, 1, MPI_INTEGER16, MPI_BAND);
    CHECK(y == (((i128_t)0x30 << 64) | 0x0f), "INTEGER16 band");
}

static void check_logical_ops(void) {
    MPI_Datatype lt[5] = {MPI_LOGICAL1, MPI_LOGICAL2, MPI_LOGICAL4, MPI_LOGICAL8, MPI_LOGICAL16};
    int sizes[5] = {1, 2, 4, 8, 16};
    for (int i = 0; i < 5; i++) {
        /* items: {true everywhere, true on rank 0 only, false everywhere}, 16 bytes each */
        unsigned char mine[3][16], all[3][16];
        memset(mine, 0, sizeof(mine));
        mine[0][0] = 1;
        mine[1][0] = rank == 0;
        MPI_Datatype v;
        MPI_Type_create_resized(lt[i], 0, 16, &v);
        MPI_Type_commit(&v);
        memset(all, 0x55, sizeof(all));
        MPI_Allreduce(mine, all, 3, v, MPI_LAND, MPI_COMM_WORLD);
        CHECK(all[0][0] == 1 && all[1][0] == (size == 1) && all[2][0] == 0,
              "LOGICAL%d land: %d %d %d", sizes[i], all[0][0], all[1][0], all[2][0]);
        CHECK(all[0][sizes[i] % 16] == (sizes[i] == 16 ? 1 : 0x55), "LOGICAL%d land wrote past it",
              sizes[i]);
        MPI_Allreduce(mine, all, 3, v, MPI_LOR, MPI_COMM_WORLD);
        CHECK(all[0][0] == 1 && all[1][0] == 1 && all[2][0] == 0, "LOGICAL%d lor", sizes[i]);
        MPI_Allreduce(mine, all, 3, v, MPI_LXOR, MPI_COMM_WORLD);
        CHECK(all[0][0] == (size % 2) && all[1][0] == 1 && all[2][0] == 0, "LOGICAL%d lxor",
              sizes[i]);
        MPI_Type_free(&v);
        /* not arithmetic, not bitwise */
        CHECK(cls(MPI_Reduce_local(mine, all, 1, lt[i], MPI_SUM)) == MPI_ERR_OP,
              "LOGICAL%d sum accepted", sizes[i]);
        CHECK(cls(MPI_Reduce_local(mine, all, 1, lt[i], MPI_BAND)) == MPI_ERR_OP,
              "LOGICAL%d band accepted", sizes[i]);
    }
}

static void check_refused(void) {
    unsigned char a[64] = {0}, b[64] = {0};
    /* no bitwise or logical ops on floating types */
    CHECK(cls(MPI_Reduce_local(a, b, 1, MPIX_C_FLOAT16, MPI_BAND)) == MPI_ERR_OP,
          "f16 band accepted");
    CHECK(cls(MPI_Reduce_local(a, b, 1, MPIX_BFLOAT16, MPI_LAND)) == MPI_ERR_OP,
          "bf16 land accepted");
    CHECK(cls(MPI_Reduce_local(a, b, 1, MPI_COMPLEX4, MPI_MAX)) == MPI_ERR_OP,
          "complex4 max accepted");
    /* binary128 arithmetic is not there (src/coll/op.c) */
    CHECK(cls(MPI_Reduce_local(a, b, 1, MPI_REAL16, MPI_SUM)) == MPI_ERR_OP, "real16 sum accepted");
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < NTYPES; i++) {
        check_basics(&types[i]);
        check_message(&types[i]);
    }
    check_external32();
    check_match_size();
    check_half_ops();
    check_int16_ops();
    check_logical_ops();
    check_refused();
    return dtest_finish();
}
