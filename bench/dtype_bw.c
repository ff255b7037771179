/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Derived datatype cost: a ping-pong between ranks 0 and 1 of 1 MB of data
 * (-s to change) described three ways, and the time of each as a ratio to
 * the same number of bytes sent contiguously:
 *   contig    MPI_DOUBLE x n                                  (the reference)
 *   vector    every other double: MPI_Type_vector(n, 1, 2)    (2 MB span, 8-byte pieces)
 *   subarray  a struct of arrays: 8 fields, each a 2-d grid with a one-cell
 *             halo; the 3-d subarray {8, m, m} of {8, m+2, m+2} selects every
 *             field's interior (runs of m doubles)
 * Both sides use the same type; every byte of the first message of each case
 * is checked, and the first and last element of every message.
 *
 * Plain MPI, point-to-point only (it runs on a library that has no collectives
 * yet), so it does not use common.c; its output follows common.h's schema:
 *     bench,param,size,metric,value
 * with metric lat_us (one-way time of one message, microseconds: half the
 * best round-trip mean over several batches), bw_MBps, and ratio (time of the
 * case / time of contig of the same bytes; 1.0 is the ideal).
 *
 *   dtype_bw [-s BYTES] [-i ITERS] [-r BATCHES]
 * BYTES takes K and M suffixes. -T and -t (the time budget and MPI_T tags that
 * bench/compare passes to every benchmark) are accepted and ignored: the
 * iteration count is fixed so that all libraries run the same work.
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, nprocs;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static size_t parse_size(const char *s) {
    char *end;
    size_t v = strtoull(s, &end, 0);
    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    return v;
}

static void fail(const char *msg) {
    fprintf(stderr, "dtype_bw[%d]: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

typedef struct bcase {
    const char *name;
    MPI_Datatype dt;
    int count;
    size_t span;   /* doubles the buffer holds */
    size_t n;      /* doubles of data */
    size_t *where; /* first and last data position (doubles), for the cheap check */
    size_t first, last;
} bcase_t;

/* Positions of data element k for the full check. */
static size_t position(const bcase_t *c, size_t k, size_t m) {
    if (strcmp(c->name, "vector") == 0)
        return 2 * k;
    if (strcmp(c->name, "subarray") == 0) {
        size_t f = k / (m * m), r = (k / m) % m, col = k % m;
        return (f * (m + 2) + r + 1) * (m + 2) + col + 1;
    }
    return k;
}

static void fill(const bcase_t *c, double *buf, size_t m, double seed) {
    for (size_t i = 0; i < c->span; i++)
        buf[i] = -1.0;
    for (size_t k = 0; k < c->n; k++)
        buf[position(c, k, m)] = seed + (double)k;
}

static int check_all(const bcase_t *c, const double *buf, size_t m, double seed) {
    for (size_t k = 0; k < c->n; k++)
        if (buf[position(c, k, m)] != seed + (double)k)
            return 0;
    return 1;
}

/* Round trips of case c; returns the best per-batch mean one-way time (s). */
static double run(const bcase_t *c, double *sbuf, double *rbuf, size_t m, long iters, int batches) {
    int peer = 1 - rank;
    MPI_Status st;
    /* first message: full check both ways */
    fill(c, sbuf, m, 1000.0);
    for (size_t i = 0; i < c->span; i++)
        rbuf[i] = -2.0;
    if (rank == 0) {
        MPI_Send(sbuf, c->count, c->dt, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, c->count, c->dt, peer, 1, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(rbuf, c->count, c->dt, peer, 1, MPI_COMM_WORLD, &st);
        MPI_Send(rbuf, c->count, c->dt, peer, 1, MPI_COMM_WORLD);
    }
    if (!check_all(c, rbuf, m, 1000.0))
        fail("received data differ from what was sent");
    double best = INFINITY;
    for (int b = -1; b < batches; b++) { /* batch -1 warms up */
        double t0 = now();
        for (long it = 0; it < iters; it++) {
            if (rank == 0) {
                sbuf[c->first] = (double)it;
                MPI_Send(sbuf, c->count, c->dt, peer, 2, MPI_COMM_WORLD);
                MPI_Recv(rbuf, c->count, c->dt, peer, 2, MPI_COMM_WORLD, &st);
                if (rbuf[c->first] != (double)it || rbuf[c->last] != sbuf[c->last])
                    fail("echoed data differ");
            } else {
                MPI_Recv(rbuf, c->count, c->dt, peer, 2, MPI_COMM_WORLD, &st);
                MPI_Send(rbuf, c->count, c->dt, peer, 2, MPI_COMM_WORLD);
            }
        }
        double t = (now() - t0) / (double)iters / 2.0;
        if (b >= 0 && t < best)
            best = t;
    }
    return best;
}

int main(int argc, char **argv) {
    size_t bytes = 1 << 20;
    long iters = 0;
    int batches = 7;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc)
            bytes = parse_size(argv[++i]);
        else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            batches = atoi(argv[++i]);
        else if ((!strcmp(argv[i], "-T") || !strcmp(argv[i], "-t")) && i + 1 < argc)
            i++;
        else if (!strcmp(argv[i], "-h")) {
            if (rank == 0)
                printf("usage: dtype_bw [-s BYTES] [-i ITERS] [-r BATCHES]\n");
            MPI_Finalize();
            return 0;
        }
    }
    if (nprocs < 2)
        fail("needs 2 ranks");
    /* the subarray case needs 8 * m * m doubles: round the size to that */
    size_t m = (size_t)sqrt((double)(bytes / 8 / 8));
    if (m < 2)
        m = 2;
    size_t n = 8 * m * m;
    if (!iters)
        iters = n * 8 >= (1 << 20) ? 50 : 200;

    bcase_t cases[3] = {{.name = "contig"}, {.name = "vector"}, {.name = "subarray"}};
    MPI_Type_contiguous((int)n, MPI_DOUBLE, &cases[0].dt);
    cases[0].span = n;
    MPI_Type_vector((int)n, 1, 2, MPI_DOUBLE, &cases[1].dt);
    cases[1].span = 2 * n;
    int sizes[3] = {8, (int)m + 2, (int)m + 2}, subs[3] = {8, (int)m, (int)m},
        starts[3] = {0, 1, 1};
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &cases[2].dt);
    cases[2].span = 8 * (m + 2) * (m + 2);
    size_t maxspan = 0;
    for (int c = 0; c < 3; c++) {
        MPI_Type_commit(&cases[c].dt);
        cases[c].count = 1;
        cases[c].n = n;
        cases[c].first = position(&cases[c], 0, m);
        cases[c].last = position(&cases[c], n - 1, m);
        if (cases[c].span > maxspan)
            maxspan = cases[c].span;
    }
    double *sbuf = malloc(maxspan * sizeof(double)), *rbuf = malloc(maxspan * sizeof(double));
    if (!sbuf || !rbuf)
        fail("out of memory");
    memset(sbuf, 0, maxspan * sizeof(double));
    memset(rbuf, 0, maxspan * sizeof(double));

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = '\0';
        printf("# dtype_bw: %zu bytes of doubles per message, ping-pong, %ld iterations x %d "
               "batches, best batch\n# library=%s\n",
               n * 8, iters, batches, lib);
        printf("bench,param,size,metric,value\n");
    }
    double t[3] = {0};
    for (int c = 0; c < 3; c++) {
        if (rank < 2)
            t[c] = run(&cases[c], sbuf, rbuf, m, iters, batches);
        if (rank == 0) {
            printf("dtype_bw,%s,%zu,lat_us,%.2f\n", cases[c].name, n * 8, t[c] * 1e6);
            printf("dtype_bw,%s,%zu,bw_MBps,%.1f\n", cases[c].name, n * 8,
                   (double)(n * 8) / t[c] / 1e6);
            printf("dtype_bw,%s,%zu,ratio,%.3f\n", cases[c].name, n * 8, t[c] / t[0]);
            fflush(stdout);
        }
    }
    for (int c = 0; c < 3; c++)
        MPI_Type_free(&cases[c].dt);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
