/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Send and receive every constructor between layouts that differ but whose
 * type signatures match: each rank sends to the next one in a ring, with the
 * send side in one layout and the receive side in another, and checks what
 * arrived against a serial reference: the receive buffer as it must look
 * (computed locally from the element values and the receive layout). Every case
 * is run at a small and a large size so that, with TANDEM_EAGER_LIMIT set in the
 * testlist, derived types go through both the eager and the rendezvous paths.
 * Also: derived types on both sides with MPI_ANY_SOURCE, Isend/Irecv with many
 * in flight, Sendrecv, and self-sends.
 */
#include "dtest.h"

#include <stdlib.h>
#include <string.h>

/* A layout of n doubles in a buffer of `cap` doubles: where element k lives.
 * `dt` with count `count` describes exactly those positions, in that order. */
typedef struct layout {
    const char *name;
    MPI_Datatype dt;
    int count;
    size_t cap;
    size_t *pos; /* n positions, in typemap order */
} layout_t;

static size_t *positions(size_t n) {
    return malloc((n ? n : 1) * sizeof(size_t));
}

/* The layouts all hold n doubles (n a multiple of 24). */
static layout_t make_layout(int kind, size_t n) {
    layout_t l = {0};
    l.pos = positions(n);
    MPI_Datatype t, u;
    switch (kind) {
    case 0: /* contiguous */
        l.name = "contiguous";
        MPI_Type_contiguous((int)n, MPI_DOUBLE, &l.dt);
        l.count = 1;
        l.cap = n;
        for (size_t k = 0; k < n; k++)
            l.pos[k] = k;
        break;
    case 1: /* vector: every other double */
        l.name = "vector";
        MPI_Type_vector((int)n, 1, 2, MPI_DOUBLE, &l.dt);
        l.count = 1;
        l.cap = 2 * n;
        for (size_t k = 0; k < n; k++)
            l.pos[k] = 2 * k;
        break;
    case 2: /* hvector of 3-blocks, stride 5 doubles, 2 items of half each */
        l.name = "hvector x2";
        MPI_Type_create_hvector((int)(n / 6), 3, 5 * sizeof(double), MPI_DOUBLE, &l.dt);
        l.count = 2;
        {
            size_t per = n / 2, ext = ((n / 6 - 1) * 5 + 3);
            l.cap = ext + per / 3 * 5 + 8;
            for (size_t k = 0; k < n; k++) {
                size_t item = k / per, j = k % per;
                l.pos[k] = item * ext + (j / 3) * 5 + j % 3;
            }
        }
        break;
    case 3: /* indexed, blocks of varying length in reverse order */
        l.name = "indexed";
        {
            size_t nb = n / 3; /* blocks of 1,2,3,1,2,3..., mean 2 */
            int *bl = malloc(nb * sizeof(int)), *d = malloc(nb * sizeof(int));
            size_t k = 0, at = 4 * n; /* blocks placed backwards from the end */
            for (size_t b = 0; b < nb; b++) {
                bl[b] = (int)(1 + b % 3);
                at -= (size_t)bl[b] + 1 + b % 2;
                d[b] = (int)at;
                for (int j = 0; j < bl[b]; j++)
                    l.pos[k++] = at + (size_t)j;
            }
            /* remaining elements (n - 2*nb) go into one more block at the start */
            int rest = (int)(n - k);
            int *bl2 = malloc((nb + 1) * sizeof(int)), *d2 = malloc((nb + 1) * sizeof(int));
            memcpy(bl2, bl, nb * sizeof(int));
            memcpy(d2, d, nb * sizeof(int));
            bl2[nb] = rest;
            d2[nb] = 0;
            for (int j = 0; j < rest; j++)
                l.pos[k++] = (size_t)j;
            MPI_Type_indexed((int)nb + 1, bl2, d2, MPI_DOUBLE, &l.dt);
            l.count = 1;
            l.cap = 4 * n;
            free(bl);
            free(d);
            free(bl2);
            free(d2);
        }
        break;
    case 4: /* hindexed_block of pairs, shuffled */
        l.name = "hindexed_block";
        {
            size_t nb = n / 2;
            MPI_Aint *d = malloc(nb * sizeof(MPI_Aint));
            for (size_t b = 0; b < nb; b++) {
                size_t slot =
                    (b * 7) % nb; /* 7 is prime to nb (n multiple of 24 -> nb even, 7 odd) */
                d[b] = (MPI_Aint)(slot * 3 * sizeof(double));
                l.pos[2 * b] = slot * 3;
                l.pos[2 * b + 1] = slot * 3 + 1;
            }
            MPI_Type_create_hindexed_block((int)nb, 2, d, MPI_DOUBLE, &l.dt);
            l.count = 1;
            l.cap = 3 * nb;
            free(d);
        }
        break;
    case 5: /* struct of {double; gap; double[2]} resized, n/3 items */
        l.name = "struct";
        MPI_Type_create_struct(2, (int[]){1, 2}, (MPI_Aint[]){0, 2 * sizeof(double)},
                               (MPI_Datatype[]){MPI_DOUBLE, MPI_DOUBLE}, &t);
        MPI_Type_create_resized(t, 0, 5 * sizeof(double), &l.dt);
        MPI_Type_free(&t);
        l.count = (int)(n / 3);
        l.cap = 5 * (n / 3);
        for (size_t k = 0; k < n; k++)
            l.pos[k] = (k / 3) * 5 + (k % 3 == 0 ? 0 : 1 + k % 3);
        break;
    case 6: /* subarray: an (n/4) x 4 block inside (n/4 + 2) x 6, C order */
        l.name = "subarray";
        {
            int rows = (int)(n / 4);
            MPI_Type_create_subarray(2, (int[]){rows + 2, 6}, (int[]){rows, 4}, (int[]){1, 2},
                                     MPI_ORDER_C, MPI_DOUBLE, &l.dt);
            l.count = 1;
            l.cap = (size_t)(rows + 2) * 6;
            for (size_t k = 0; k < n; k++)
                l.pos[k] = (1 + k / 4) * 6 + 2 + k % 4;
        }
        break;
    case 7: /* darray: this layout is what process 1 of 3 owns of 3n cyclic(4) */
        l.name = "darray";
        {
            int g = (int)(3 * n);
            MPI_Type_create_darray(3, 1, 1, &g, (int[]){MPI_DISTRIBUTE_CYCLIC}, (int[]){4},
                                   (int[]){3}, MPI_ORDER_C, MPI_DOUBLE, &l.dt);
            l.count = 1;
            l.cap = 3 * n;
            for (size_t k = 0; k < n; k++)
                l.pos[k] = (k / 4) * 12 + 4 + k % 4;
        }
        break;
    case 8: /* vector of a resized contiguous (nested repeat) */
        l.name = "vector of contiguous";
        MPI_Type_contiguous(2, MPI_DOUBLE, &t);
        MPI_Type_create_resized(t, 0, 3 * sizeof(double), &u);
        MPI_Type_vector((int)(n / 4), 2, 7, u, &l.dt);
        MPI_Type_free(&t);
        MPI_Type_free(&u);
        l.count = 1;
        l.cap = (n / 4) * 21;
        for (size_t k = 0; k < n; k++) {
            size_t blk = k / 4, in = k % 4;
            l.pos[k] = blk * 21 + (in / 2) * 3 + in % 2;
        }
        break;
    default: /* dup of a vector of stride 3 */
        l.name = "dup";
        MPI_Type_vector((int)n, 1, 3, MPI_DOUBLE, &t);
        MPI_Type_dup(t, &l.dt);
        MPI_Type_free(&t);
        l.count = 1;
        l.cap = 3 * n;
        for (size_t k = 0; k < n; k++)
            l.pos[k] = 3 * k;
        break;
    }
    MPI_Type_commit(&l.dt);
    return l;
}
#define NKINDS 10

static void free_layout(layout_t *l) {
    MPI_Type_free(&l->dt);
    free(l->pos);
}

static double value(int from, size_t k) {
    return from * 1000000.0 + (double)k + 0.25;
}

/* Ring: send in layout `s`, receive in layout `r`; check against the reference. */
static void ring(size_t n, int skind, int rkind, int mode) {
    layout_t s = make_layout(skind, n), r = make_layout(rkind, n);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    double *sb = malloc(s.cap * sizeof(double)), *rb = malloc(r.cap * sizeof(double));
    for (size_t i = 0; i < s.cap; i++)
        sb[i] = -1.0;
    for (size_t k = 0; k < n; k++)
        sb[s.pos[k]] = value(rank, k);
    for (size_t i = 0; i < r.cap; i++)
        rb[i] = -2.0;
    MPI_Status st;
    if (mode == 0) {
        MPI_Request req[2];
        MPI_Status sts[2];
        MPI_Irecv(rb, r.count, r.dt, from, 7, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(sb, s.count, s.dt, to, 7, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, sts);
        st.MPI_SOURCE = from;
    } else {
        MPI_Sendrecv(sb, s.count, s.dt, to, 8, rb, r.count, r.dt, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD,
                     &st);
        int cnt;
        MPI_Get_count(&st, r.dt, &cnt);
        CHECK(cnt == r.count, "%s->%s n=%zu: count %d, want %d", s.name, r.name, n, cnt, r.count);
        MPI_Get_count(&st, MPI_DOUBLE, &cnt);
        CHECK(cnt == (int)n, "%s->%s: %d doubles", s.name, r.name, cnt);
    }
    /* serial reference: the whole receive buffer as it must be */
    double *ref = malloc(r.cap * sizeof(double));
    for (size_t i = 0; i < r.cap; i++)
        ref[i] = -2.0;
    for (size_t k = 0; k < n; k++)
        ref[r.pos[k]] = value(st.MPI_SOURCE, k);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < r.cap; i++)
        if (rb[i] != ref[i] && !bad++)
            first = i;
    CHECK(!bad, "%s -> %s, n=%zu, mode %d: %zu doubles wrong, first at %zu (%g, want %g)", s.name,
          r.name, n, mode, bad, first, rb[first], ref[first]);
    free(ref);
    free(sb);
    free(rb);
    free_layout(&s);
    free_layout(&r);
}

/* Many in flight: 8 Isends of a vector type, received as contiguous, types freed early. */
static void many_in_flight(size_t n) {
    enum { M = 8 };
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    double *sb = malloc(M * 2 * n * sizeof(double)), *rb = malloc(M * n * sizeof(double));
    MPI_Request req[2 * M];
    MPI_Status sts[2 * M];
    MPI_Datatype v, c;
    for (size_t i = 0; i < M * 2 * n; i++)
        sb[i] = (i % 2) ? -1.0 : value(rank, i / 2);
    MPI_Type_vector((int)n, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    MPI_Type_contiguous((int)n, MPI_DOUBLE, &c);
    MPI_Type_commit(&c);
    for (int m = 0; m < M; m++)
        MPI_Irecv(rb + (size_t)m * n, 1, c, from, 100 + m, MPI_COMM_WORLD, &req[m]);
    for (int m = 0; m < M; m++)
        MPI_Isend(sb + (size_t)m * 2 * n, 1, v, to, 100 + m, MPI_COMM_WORLD, &req[M + m]);
    MPI_Type_free(&v); /* still in flight: the requests hold the types */
    MPI_Type_free(&c);
    MPI_Waitall(2 * M, req, sts);
    size_t bad = 0;
    for (size_t i = 0; i < M * n; i++)
        bad += rb[i] != value(from, i);
    CHECK(!bad, "many in flight n=%zu: %zu wrong", n, bad);
    free(sb);
    free(rb);
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    size_t sizes[2] = {48, 24 * 1024}; /* 384 bytes and 192 KiB of doubles */
    for (int si = 0; si < 2; si++) {
        for (int a = 0; a < NKINDS; a++) {
            /* each layout against itself, contiguous, and the next one */
            int bs[3] = {a, 0, (a + 1) % NKINDS};
            for (int j = 0; j < 3; j++) {
                ring(sizes[si], a, bs[j], 0);
                ring(sizes[si], bs[j], a, 1);
            }
        }
        many_in_flight(sizes[si] / 8);
    }
    return dtest_finish();
}
