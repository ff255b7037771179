/* SPDX-License-Identifier: BSD-3-Clause */
/* The description of every constructor in both forms (MPI-4.1 §5.1.13): the int
 * form files counts as integers and displacements in bytes as addresses, the
 * large-count (_c) form files both as large counts, and the integers that are not
 * counts (ndims, order, distribs, dargs, psizes, size, rank) stay integers. Each
 * pair must also build the same type (size, extent, true extent). */
#include "dtest.h"

#include <string.h>

/* What get_envelope_c and get_contents_c report. */
typedef struct want {
    int combiner, ni, na, nc, nt;
    int ints[32];
    MPI_Aint aints[16];
    MPI_Count counts[32];
    MPI_Datatype types[4];
} want_t;

static void check(const char *what, MPI_Datatype t, const want_t *w) {
    MPI_Count ni, na, nc, nt;
    int comb;
    MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nt, &comb);
    CHECK(comb == w->combiner && ni == w->ni && na == w->na && nc == w->nc && nt == w->nt,
          "%s: envelope combiner %d, %lld ints, %lld addresses, %lld large counts, %lld types "
          "(want %d, %d, %d, %d, %d)",
          what, comb, (long long)ni, (long long)na, (long long)nc, (long long)nt, w->combiner,
          w->ni, w->na, w->nc, w->nt);
    if (comb != w->combiner || ni != w->ni || na != w->na || nc != w->nc || nt != w->nt)
        return;
    int ints[32];
    MPI_Aint aints[16];
    MPI_Count counts[32];
    MPI_Datatype types[4];
    MPI_Type_get_contents_c(t, ni, na, nc, nt, ints, aints, counts, types);
    for (int i = 0; i < w->ni; i++)
        CHECK(ints[i] == w->ints[i], "%s: integers[%d] = %d (want %d)", what, i, ints[i],
              w->ints[i]);
    for (int i = 0; i < w->na; i++)
        CHECK(aints[i] == w->aints[i], "%s: addresses[%d] = %ld (want %ld)", what, i,
              (long)aints[i], (long)w->aints[i]);
    for (int i = 0; i < w->nc; i++)
        CHECK(counts[i] == w->counts[i], "%s: large_counts[%d] = %lld (want %lld)", what, i,
              (long long)counts[i], (long long)w->counts[i]);
    for (int i = 0; i < w->nt; i++) {
        /* a predefined type comes back as itself, a derived one as a new type described
         * as the one it stands for (contents_free checks the rest) */
        int nni, nna, nnt, c, wni, wna, wnt, wc;
        MPI_Type_get_envelope(types[i], &nni, &nna, &nnt, &c);
        MPI_Type_get_envelope(w->types[i], &wni, &wna, &wnt, &wc);
        if (wc == MPI_COMBINER_NAMED)
            CHECK(types[i] == w->types[i], "%s: datatypes[%d] = %#x (want %#x)", what, i,
                  (unsigned)types[i], (unsigned)w->types[i]);
        else
            CHECK(types[i] != w->types[i] && c == wc && nni == wni && nna == wna && nnt == wnt,
                  "%s: datatypes[%d] = %#x, combiner %d (want a new type like %#x, combiner %d)",
                  what, i, (unsigned)types[i], c, (unsigned)w->types[i], wc);
        if (c != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
    if (!w->nc) {
        /* the int query says the same of an int-form type */
        int ii[32], nni, nna, nnt, c;
        MPI_Aint aa[16];
        MPI_Datatype tt[4];
        MPI_Type_get_envelope(t, &nni, &nna, &nnt, &c);
        CHECK(nni == w->ni && nna == w->na && nnt == w->nt && c == w->combiner,
              "%s: int envelope %d %d %d %d", what, nni, nna, nnt, c);
        MPI_Type_get_contents(t, nni, nna, nnt, ii, aa, tt);
        CHECK(!memcmp(ii, w->ints, (size_t)nni * sizeof(int)) &&
                  !memcmp(aa, w->aints, (size_t)nna * sizeof(MPI_Aint)),
              "%s: int contents differ", what);
        for (int i = 0; i < nnt; i++) {
            MPI_Type_get_envelope(tt[i], &nni, &nna, &nnt, &c);
            if (c != MPI_COMBINER_NAMED)
                MPI_Type_free(&tt[i]);
        }
    }
}

/* Both forms built the same type; frees both. */
static void same(const char *what, MPI_Datatype a, MPI_Datatype b) {
    MPI_Count sa, sb, la, lb, ea, eb, tla, tlb, tea, teb;
    MPI_Type_size_c(a, &sa);
    MPI_Type_size_c(b, &sb);
    MPI_Type_get_extent_c(a, &la, &ea);
    MPI_Type_get_extent_c(b, &lb, &eb);
    MPI_Type_get_true_extent_c(a, &tla, &tea);
    MPI_Type_get_true_extent_c(b, &tlb, &teb);
    CHECK(sa == sb && la == lb && ea == eb && tla == tlb && tea == teb,
          "%s: the forms differ: size %lld/%lld, lb %lld/%lld, extent %lld/%lld, true lb "
          "%lld/%lld, true extent %lld/%lld",
          what, (long long)sa, (long long)sb, (long long)la, (long long)lb, (long long)ea,
          (long long)eb, (long long)tla, (long long)tlb, (long long)tea, (long long)teb);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
}

int main(int argc, char **argv) {
    dtest_init(&argc, &argv);
    MPI_Datatype a, b, c;
    const MPI_Datatype I = MPI_INT, D = MPI_DOUBLE;

    MPI_Type_contiguous(5, I, &a);
    check("contiguous", a, &(want_t){MPI_COMBINER_CONTIGUOUS, 1, 0, 0, 1, {5}, {0}, {0}, {I}});
    MPI_Type_contiguous_c(5, I, &b);
    check("contiguous_c", b, &(want_t){MPI_COMBINER_CONTIGUOUS, 0, 0, 1, 1, {0}, {0}, {5}, {I}});
    same("contiguous", a, b);

    MPI_Type_vector(3, 2, 5, I, &a);
    check("vector", a, &(want_t){MPI_COMBINER_VECTOR, 3, 0, 0, 1, {3, 2, 5}, {0}, {0}, {I}});
    MPI_Type_vector_c(3, 2, 5, I, &b);
    check("vector_c", b, &(want_t){MPI_COMBINER_VECTOR, 0, 0, 3, 1, {0}, {0}, {3, 2, 5}, {I}});
    same("vector", a, b);

    MPI_Type_create_hvector(3, 2, 40, I, &a);
    check("hvector", a, &(want_t){MPI_COMBINER_HVECTOR, 2, 1, 0, 1, {3, 2}, {40}, {0}, {I}});
    MPI_Type_hvector(3, 2, 40, I, &c);
    check("MPI-1 hvector", c, &(want_t){MPI_COMBINER_HVECTOR, 2, 1, 0, 1, {3, 2}, {40}, {0}, {I}});
    MPI_Type_free(&c);
    MPI_Type_create_hvector_c(3, 2, 40, I, &b);
    check("hvector_c", b, &(want_t){MPI_COMBINER_HVECTOR, 0, 0, 3, 1, {0}, {0}, {3, 2, 40}, {I}});
    same("hvector", a, b);

    MPI_Type_indexed(3, (int[]){1, 0, 2}, (int[]){4, 2, 0}, D, &a);
    check("indexed", a,
          &(want_t){MPI_COMBINER_INDEXED, 7, 0, 0, 1, {3, 1, 0, 2, 4, 2, 0}, {0}, {0}, {D}});
    MPI_Type_indexed_c(3, (MPI_Count[]){1, 0, 2}, (MPI_Count[]){4, 2, 0}, D, &b);
    check("indexed_c", b,
          &(want_t){MPI_COMBINER_INDEXED, 0, 0, 7, 1, {0}, {0}, {3, 1, 0, 2, 4, 2, 0}, {D}});
    same("indexed", a, b);

    MPI_Type_create_hindexed(2, (int[]){2, 1}, (MPI_Aint[]){16, -8}, D, &a);
    check("hindexed", a,
          &(want_t){MPI_COMBINER_HINDEXED, 3, 2, 0, 1, {2, 2, 1}, {16, -8}, {0}, {D}});
    MPI_Type_hindexed(2, (int[]){2, 1}, (MPI_Aint[]){16, -8}, D, &c);
    check("MPI-1 hindexed", c,
          &(want_t){MPI_COMBINER_HINDEXED, 3, 2, 0, 1, {2, 2, 1}, {16, -8}, {0}, {D}});
    MPI_Type_free(&c);
    MPI_Type_create_hindexed_c(2, (MPI_Count[]){2, 1}, (MPI_Count[]){16, -8}, D, &b);
    check("hindexed_c", b,
          &(want_t){MPI_COMBINER_HINDEXED, 0, 0, 5, 1, {0}, {0}, {2, 2, 1, 16, -8}, {D}});
    same("hindexed", a, b);

    MPI_Type_create_indexed_block(3, 2, (int[]){6, 0, 3}, I, &a);
    check("indexed_block", a,
          &(want_t){MPI_COMBINER_INDEXED_BLOCK, 5, 0, 0, 1, {3, 2, 6, 0, 3}, {0}, {0}, {I}});
    MPI_Type_create_indexed_block_c(3, 2, (MPI_Count[]){6, 0, 3}, I, &b);
    check("indexed_block_c", b,
          &(want_t){MPI_COMBINER_INDEXED_BLOCK, 0, 0, 5, 1, {0}, {0}, {3, 2, 6, 0, 3}, {I}});
    same("indexed_block", a, b);

    MPI_Type_create_hindexed_block(2, 3, (MPI_Aint[]){24, 0}, I, &a);
    check("hindexed_block", a,
          &(want_t){MPI_COMBINER_HINDEXED_BLOCK, 2, 2, 0, 1, {2, 3}, {24, 0}, {0}, {I}});
    MPI_Type_create_hindexed_block_c(2, 3, (MPI_Count[]){24, 0}, I, &b);
    check("hindexed_block_c", b,
          &(want_t){MPI_COMBINER_HINDEXED_BLOCK, 0, 0, 4, 1, {0}, {0}, {2, 3, 24, 0}, {I}});
    same("hindexed_block", a, b);

    MPI_Type_create_struct(2, (int[]){1, 3}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){D, I}, &a);
    check("struct", a, &(want_t){MPI_COMBINER_STRUCT, 3, 2, 0, 2, {2, 1, 3}, {0, 8}, {0}, {D, I}});
    MPI_Type_struct(2, (int[]){1, 3}, (MPI_Aint[]){0, 8}, (MPI_Datatype[]){D, I}, &c);
    check("MPI-1 struct", c,
          &(want_t){MPI_COMBINER_STRUCT, 3, 2, 0, 2, {2, 1, 3}, {0, 8}, {0}, {D, I}});
    MPI_Type_free(&c);
    MPI_Type_create_struct_c(2, (MPI_Count[]){1, 3}, (MPI_Count[]){0, 8}, (MPI_Datatype[]){D, I},
                             &b);
    check("struct_c", b,
          &(want_t){MPI_COMBINER_STRUCT, 0, 0, 5, 2, {0}, {0}, {2, 1, 3, 0, 8}, {D, I}});
    same("struct", a, b);

    MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){1, 2}, MPI_ORDER_FORTRAN, I,
                             &a);
    check("subarray", a,
          &(want_t){MPI_COMBINER_SUBARRAY,
                    8,
                    0,
                    0,
                    1,
                    {2, 4, 5, 2, 3, 1, 2, MPI_ORDER_FORTRAN},
                    {0},
                    {0},
                    {I}});
    MPI_Type_create_subarray_c(2, (MPI_Count[]){4, 5}, (MPI_Count[]){2, 3}, (MPI_Count[]){1, 2},
                               MPI_ORDER_FORTRAN, I, &b);
    check("subarray_c", b,
          &(want_t){MPI_COMBINER_SUBARRAY,
                    2,
                    0,
                    6,
                    1,
                    {2, MPI_ORDER_FORTRAN},
                    {0},
                    {4, 5, 2, 3, 1, 2},
                    {I}});
    same("subarray", a, b);

    /* rank 1 of a 2 x 3 grid over an 8 x 9 array: block rows, cyclic(2) columns */
    int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {2, 3};
    MPI_Type_create_darray(6, 1, 2, (int[]){8, 9}, distribs, dargs, psizes, MPI_ORDER_C, D, &a);
    check("darray", a,
          &(want_t){MPI_COMBINER_DARRAY,
                    12,
                    0,
                    0,
                    1,
                    {6, 1, 2, 8, 9, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC,
                     MPI_DISTRIBUTE_DFLT_DARG, 2, 2, 3, MPI_ORDER_C},
                    {0},
                    {0},
                    {D}});
    MPI_Type_create_darray_c(6, 1, 2, (MPI_Count[]){8, 9}, distribs, dargs, psizes, MPI_ORDER_C, D,
                             &b);
    check("darray_c", b,
          &(want_t){MPI_COMBINER_DARRAY,
                    10,
                    0,
                    2,
                    1,
                    {6, 1, 2, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_DFLT_DARG,
                     2, 2, 3, MPI_ORDER_C},
                    {0},
                    {8, 9},
                    {D}});
    same("darray", a, b);

    MPI_Type_create_resized(I, -4, 12, &a);
    check("resized", a, &(want_t){MPI_COMBINER_RESIZED, 0, 2, 0, 1, {0}, {-4, 12}, {0}, {I}});
    MPI_Type_create_resized_c(I, -4, 12, &b);
    check("resized_c", b, &(want_t){MPI_COMBINER_RESIZED, 0, 0, 2, 1, {0}, {0}, {-4, 12}, {I}});
    same("resized", a, b);

    /* a derived old type comes back as a new handle of the same type */
    MPI_Type_contiguous(2, I, &c);
    MPI_Type_dup(c, &a);
    check("dup", a, &(want_t){MPI_COMBINER_DUP, 0, 0, 0, 1, {0}, {0}, {0}, {c}});
    MPI_Type_free(&a);
    MPI_Type_free(&c);

    return dtest_finish();
}
