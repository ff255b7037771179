/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ABI (built with MPICH's mpi.h, run on Tandem): predefined handles and the
 * environment. Every predefined C datatype carries data of its C type's size
 * (checked with MPI_Get_count in bytes and contents), including the value+int
 * pair types laid out as C structs; MPI_COMM_WORLD/MPI_COMM_SELF; MPI_Wtime,
 * MPI_Wtick, MPI_Get_version, MPI_Get_library_version, MPI_Get_processor_name,
 * MPI_Initialized, MPI_Query_thread, MPI_Is_thread_main.
 */
#include <complex.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int rank, nprocs, errs;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 20) {                                                            \
            fprintf(stderr, "rank %d line %d: ", rank, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

struct float_int {
    float v;
    int i;
};
struct double_int {
    double v;
    int i;
};
struct long_int {
    long v;
    int i;
};
struct short_int {
    short v;
    int i;
};
struct long_double_int {
    long double v;
    int i;
};

typedef struct {
    MPI_Datatype type;
    const char *name;
    size_t size;   /* bytes of one item on the wire */
    size_t extent; /* bytes of one item in memory */
    size_t ioff;   /* pairs: offset of the int in the struct (0 otherwise) */
} type_t;

#define T(_t, _c)                                                                                  \
    { _t, #_t, sizeof(_c), sizeof(_c), 0 }
static const type_t types[] = {
    T(MPI_CHAR, char),
    T(MPI_SIGNED_CHAR, signed char),
    T(MPI_UNSIGNED_CHAR, unsigned char),
    T(MPI_BYTE, char),
    T(MPI_WCHAR, wchar_t),
    T(MPI_SHORT, short),
    T(MPI_UNSIGNED_SHORT, unsigned short),
    T(MPI_INT, int),
    T(MPI_UNSIGNED, unsigned),
    T(MPI_LONG, long),
    T(MPI_UNSIGNED_LONG, unsigned long),
    T(MPI_LONG_LONG_INT, long long),
    T(MPI_LONG_LONG, long long),
    T(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    T(MPI_FLOAT, float),
    T(MPI_DOUBLE, double),
    T(MPI_INT8_T, int8_t),
    T(MPI_INT16_T, int16_t),
    T(MPI_INT32_T, int32_t),
    T(MPI_INT64_T, int64_t),
    T(MPI_UINT8_T, uint8_t),
    T(MPI_UINT16_T, uint16_t),
    T(MPI_UINT32_T, uint32_t),
    T(MPI_UINT64_T, uint64_t),
    T(MPI_C_BOOL, bool),
    T(MPI_C_FLOAT_COMPLEX, float _Complex),
    T(MPI_C_DOUBLE_COMPLEX, double _Complex),
    T(MPI_AINT, MPI_Aint),
    T(MPI_OFFSET, MPI_Offset),
    T(MPI_COUNT, MPI_Count),
    T(MPI_PACKED, char),
    T(MPI_2INT, int[2]),
    /* long double: 10 data bytes in 16 on x86-64; sent whole */
    T(MPI_LONG_DOUBLE, long double),
/* pairs: the wire carries value and int, the memory the struct with its padding */
#define P(_t, _s, _v)                                                                              \
    { _t, #_t, sizeof(_v) + sizeof(int), sizeof(struct _s), offsetof(struct _s, i) }
    P(MPI_FLOAT_INT, float_int, float),
    P(MPI_DOUBLE_INT, double_int, double),
    P(MPI_LONG_INT, long_int, long),
    P(MPI_SHORT_INT, short_int, short),
};
#define NTYPES (int)(sizeof(types) / sizeof(types[0]))
#define COUNT 5

static unsigned char pat(int t, size_t i) {
    return (unsigned char)(t * 37 + i * 11 + 3);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int peer = (rank + 1) % nprocs, from = (rank + nprocs - 1) % nprocs, n;

    /* datatypes: COUNT items around the ring */
    for (int t = 0; t < NTYPES; t++) {
        unsigned char s[COUNT * 32], r[COUNT * 32];
        size_t bytes = COUNT * types[t].extent;
        for (size_t i = 0; i < bytes; i++)
            s[i] = pat(t, i);
        memset(r, 0, sizeof(r));
        MPI_Status st;
        int err = MPI_Sendrecv(s, COUNT, types[t].type, peer, t, r, COUNT, types[t].type, from, t,
                               MPI_COMM_WORLD, &st);
        int nbytes = -1, nitems = -1;
        MPI_Get_count(&st, MPI_BYTE, &nbytes);
        MPI_Get_count(&st, types[t].type, &nitems);
        CHECK(err == MPI_SUCCESS && nitems == COUNT && nbytes == (int)(COUNT * types[t].size),
              "%s: err %d, %d items in %d bytes, want %d in %zu", types[t].name, err, nitems,
              nbytes, COUNT, COUNT * types[t].size);
        if (types[t].ioff) {
            /* pairs: the value and the int of each item, not the padding */
            size_t vsz = types[t].size - sizeof(int), ioff = types[t].ioff;
            for (int k = 0; k < COUNT; k++) {
                const unsigned char *a = s + k * types[t].extent, *b = r + k * types[t].extent;
                CHECK(!memcmp(a, b, vsz) && !memcmp(a + ioff, b + ioff, sizeof(int)),
                      "%s: item %d differs", types[t].name, k);
            }
        } else if (types[t].type != MPI_LONG_DOUBLE) {
            CHECK(!memcmp(s, r, bytes), "%s: data differ", types[t].name);
        }
    }
    /* long double and its pair with real values */
    {
        long double a[3] = {1.5L, -2.25L, 3.0e300L}, b[3] = {0};
        MPI_Sendrecv(a, 3, MPI_LONG_DOUBLE, peer, 100, b, 3, MPI_LONG_DOUBLE, from, 100,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(b[0] == 1.5L && b[1] == -2.25L && b[2] == 3.0e300L, "MPI_LONG_DOUBLE values");
        struct long_double_int p[2] = {{0.5L, 7}, {-1.0L, 8}}, q[2];
        memset(q, 0, sizeof(q));
        MPI_Sendrecv(p, 2, MPI_LONG_DOUBLE_INT, peer, 101, q, 2, MPI_LONG_DOUBLE_INT, from, 101,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(q[0].v == 0.5L && q[0].i == 7 && q[1].v == -1.0L && q[1].i == 8,
              "MPI_LONG_DOUBLE_INT values");
    }

    /* communicators */
    MPI_Comm_size(MPI_COMM_SELF, &n);
    CHECK(n == 1, "MPI_COMM_SELF size %d", n);
    MPI_Comm_rank(MPI_COMM_SELF, &n);
    CHECK(n == 0, "MPI_COMM_SELF rank %d", n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Comm_size(MPI_COMM_NULL, &n) != MPI_SUCCESS, "MPI_COMM_NULL accepted");

    /* environment */
    int flag = 0, v = 0, sv = -1, len = -1, prov = -1;
    MPI_Initialized(&flag);
    CHECK(flag, "MPI_Initialized: 0");
    MPI_Finalized(&flag);
    CHECK(!flag, "MPI_Finalized: 1 before MPI_Finalize");
    MPI_Get_version(&v, &sv);
    /* what the header this program was built with (MPICH's) says */
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "MPI_Get_version %d.%d, the header says %d.%d",
          v, sv, MPI_VERSION, MPI_SUBVERSION);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], want[32];
    MPI_Get_library_version(lib, &len);
    snprintf(want, sizeof(want), "MPI %d.%d", MPI_VERSION, MPI_SUBVERSION);
    CHECK(len > 0 && len == (int)strlen(lib) && strstr(lib, "Tandem") && strstr(lib, want),
          "MPI_Get_library_version: \"%s\" (%d): not Tandem's library of %s", lib, len, want);
    char host[MPI_MAX_PROCESSOR_NAME];
    MPI_Get_processor_name(host, &len);
    CHECK(len > 0 && len == (int)strlen(host), "MPI_Get_processor_name: \"%s\" (%d)", host, len);
    MPI_Query_thread(&prov);
    CHECK(prov == MPI_THREAD_SINGLE, "MPI_Query_thread after MPI_Init: %d", prov);
    MPI_Is_thread_main(&flag);
    CHECK(flag, "MPI_Is_thread_main: 0 on the main thread");
    double tick = MPI_Wtick(), t0 = MPI_Wtime();
    CHECK(tick > 0 && tick < 0.01, "MPI_Wtick %g", tick);
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double t1 = MPI_Wtime();
    CHECK(t1 - t0 >= 0.019 && t1 - t0 < 5, "MPI_Wtime: 20 ms measured as %g s", t1 - t0);

    if (rank == 0) {
        for (int i = 1; i < nprocs; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, 32766, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += e;
        }
        if (errs)
            printf(" Found %d errors\n", errs);
        else
            printf(" No Errors\n");
        fflush(stdout);
    } else {
        MPI_Send(&errs, 1, MPI_INT, 0, 32766, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    MPI_Finalized(&flag);
    if (!flag) {
        printf("MPI_Finalized: 0 after MPI_Finalize\n");
        return 1;
    }
    return errs ? 1 : 0;
}
