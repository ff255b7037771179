/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatype objects: the predefined ones (built once from the MPICH ABI handle
 * values), the table of user types, reference counts, names and descriptions.
 * Layouts live in layout.c, constructors in create.c, signatures in typesig.c.
 */
#include "dtype_impl.h"
#include "../base/log.h"
#include "../base/htab.h"
#include "../base/ref.h"
#include "../base/util.h"
#include "../base/abi.h"

#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* Builtin handles are 0x4c00SSII: SS the size, II an index below 0x100. */
#define BUILTIN_BASE 0x4c000000
#define PAIR_BASE 0x8c000000 /* MPICH encodes five pair types as direct handles */
#define USER_BASE 0xcc000000u
#define USER_MASK 0x03ffffffu

static tdm_dtype_t builtin[256];
static tdm_dtype_ext_t builtin_ext[256];
static tdm_dtype_t pairs[8];
static tdm_dtype_ext_t pairs_ext[8];
/* User types. Slots are never reused, so a freed handle stays invalid; lookups
 * take no lock (htab.h). */
static tdm_htab_t user = TDM_HTAB_INIT((int)USER_MASK + 1, true);

#define PAIR_ALIGN(_T)                                                                             \
    alignof(struct {                                                                               \
        _T v;                                                                                      \
        int i;                                                                                     \
    })
#define PAIR_SIZE(_T)                                                                              \
    (offsetof(                                                                                     \
         struct {                                                                                  \
             _T v;                                                                                 \
             int i;                                                                                \
         },                                                                                        \
         i) +                                                                                      \
     sizeof(int))
#define B(_h, _name, _size, _ext, _conv, _align)                                                   \
    {                                                                                              \
        _h, _name, _size, _ext, _conv, _align, {                                                   \
            0, 0                                                                                   \
        }                                                                                          \
    }
#define P(_h, _name, _size, _ext, _align, _a, _b)                                                  \
    {                                                                                              \
        _h, _name, _size, _ext, TDM_CV_NONE, _align, {                                             \
            _a, _b                                                                                 \
        }                                                                                          \
    }

/* Every predefined type: native and external32 sizes (MPI-4.1 §13.5.2), how
 * external32 converts it, and its alignment. The pairs of MINLOC/MAXLOC are two
 * elements each (MPI_2INT too, as in MPICH). */
static const tdm_basic_info_t basics[] = {
    B(TDM_MPI_CHAR, "MPI_CHAR", 1, 1, TDM_CV_COPY, 1),
    B(TDM_MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1, TDM_CV_COPY, 1),
    B(TDM_MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1, TDM_CV_COPY, 1),
    B(TDM_MPI_BYTE, "MPI_BYTE", 1, 1, TDM_CV_COPY, 1),
    B(TDM_MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t), 2, TDM_CV_UINT, alignof(wchar_t)),
    B(TDM_MPI_SHORT, "MPI_SHORT", sizeof(short), 2, TDM_CV_SINT, alignof(short)),
    B(TDM_MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(short), 2, TDM_CV_UINT, alignof(short)),
    B(TDM_MPI_INT, "MPI_INT", sizeof(int), 4, TDM_CV_SINT, alignof(int)),
    B(TDM_MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(int), 4, TDM_CV_UINT, alignof(int)),
    B(TDM_MPI_LONG, "MPI_LONG", sizeof(long), 4, TDM_CV_SINT, alignof(long)),
    B(TDM_MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(long), 4, TDM_CV_UINT, alignof(long)),
    B(TDM_MPI_FLOAT, "MPI_FLOAT", sizeof(float), 4, TDM_CV_SWAP, alignof(float)),
    B(TDM_MPI_DOUBLE, "MPI_DOUBLE", sizeof(double), 8, TDM_CV_SWAP, alignof(double)),
    B(TDM_MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double), 16, TDM_CV_LDBL,
      alignof(long double)),
    B(TDM_MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", sizeof(long long), 8, TDM_CV_SINT,
      alignof(long long)),
    B(TDM_MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(long long), 8, TDM_CV_UINT,
      alignof(long long)),
    B(TDM_MPI_PACKED, "MPI_PACKED", 1, 1, TDM_CV_COPY, 1),
    B(TDM_MPI_LB, "MPI_LB", 0, 0, TDM_CV_NONE, 1),
    B(TDM_MPI_UB, "MPI_UB", 0, 0, TDM_CV_NONE, 1),
    P(TDM_MPI_2INT, "MPI_2INT", 2 * sizeof(int), 8, alignof(int), TDM_MPI_INT, TDM_MPI_INT),
    B(TDM_MPI_INT8_T, "MPI_INT8_T", 1, 1, TDM_CV_COPY, 1),
    B(TDM_MPI_INT16_T, "MPI_INT16_T", 2, 2, TDM_CV_SINT, 2),
    B(TDM_MPI_INT32_T, "MPI_INT32_T", 4, 4, TDM_CV_SINT, 4),
    B(TDM_MPI_INT64_T, "MPI_INT64_T", 8, 8, TDM_CV_SINT, alignof(int64_t)),
    B(TDM_MPI_UINT8_T, "MPI_UINT8_T", 1, 1, TDM_CV_COPY, 1),
    B(TDM_MPI_UINT16_T, "MPI_UINT16_T", 2, 2, TDM_CV_UINT, 2),
    B(TDM_MPI_UINT32_T, "MPI_UINT32_T", 4, 4, TDM_CV_UINT, 4),
    B(TDM_MPI_UINT64_T, "MPI_UINT64_T", 8, 8, TDM_CV_UINT, alignof(uint64_t)),
    B(TDM_MPI_C_BOOL, "MPI_C_BOOL", sizeof(_Bool), 1, TDM_CV_COPY, alignof(_Bool)),
    B(TDM_MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", 2 * sizeof(float), 8, TDM_CV_CSWAP, alignof(float)),
    B(TDM_MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 2 * sizeof(double), 16, TDM_CV_CSWAP,
      alignof(double)),
    B(TDM_MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double), 32,
      TDM_CV_CLDBL, alignof(long double)),
    B(TDM_MPI_AINT, "MPI_AINT", sizeof(tdm_mpi_aint_t), 8, TDM_CV_SINT, alignof(tdm_mpi_aint_t)),
    B(TDM_MPI_OFFSET, "MPI_OFFSET", sizeof(tdm_mpi_offset_t), 8, TDM_CV_SINT,
      alignof(tdm_mpi_offset_t)),
    B(TDM_MPI_COUNT, "MPI_COUNT", sizeof(tdm_mpi_count_t), 8, TDM_CV_SINT,
      alignof(tdm_mpi_count_t)),
    B(TDM_MPI_CXX_BOOL, "MPI_CXX_BOOL", sizeof(_Bool), 1, TDM_CV_COPY, alignof(_Bool)),
    B(TDM_MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 2 * sizeof(float), 8, TDM_CV_CSWAP,
      alignof(float)),
    B(TDM_MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 2 * sizeof(double), 16, TDM_CV_CSWAP,
      alignof(double)),
    B(TDM_MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double), 32,
      TDM_CV_CLDBL, alignof(long double)),
    /* Fortran types, with the sizes the MPICH ABI encodes in their handles */
    B(TDM_MPI_CHARACTER, "MPI_CHARACTER", 1, 1, TDM_CV_COPY, 1),
    B(TDM_MPI_INTEGER, "MPI_INTEGER", 4, 4, TDM_CV_SINT, 4),
    B(TDM_MPI_REAL, "MPI_REAL", 4, 4, TDM_CV_SWAP, 4),
    B(TDM_MPI_LOGICAL, "MPI_LOGICAL", 4, 4, TDM_CV_SINT, 4),
    B(TDM_MPI_COMPLEX, "MPI_COMPLEX", 8, 8, TDM_CV_CSWAP, 4),
    B(TDM_MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8, TDM_CV_SWAP, 8),
    P(TDM_MPI_2INTEGER, "MPI_2INTEGER", 8, 8, 4, TDM_MPI_INTEGER, TDM_MPI_INTEGER),
    P(TDM_MPI_2REAL, "MPI_2REAL", 8, 8, 4, TDM_MPI_REAL, TDM_MPI_REAL),
    B(TDM_MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 16, TDM_CV_CSWAP, 8),
    P(TDM_MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16, 16, 8, TDM_MPI_DOUBLE_PRECISION,
      TDM_MPI_DOUBLE_PRECISION),
    B(TDM_MPI_INTEGER1, "MPI_INTEGER1", 1, 1, TDM_CV_COPY, 1),
    B(TDM_MPI_INTEGER2, "MPI_INTEGER2", 2, 2, TDM_CV_SINT, 2),
    B(TDM_MPI_INTEGER4, "MPI_INTEGER4", 4, 4, TDM_CV_SINT, 4),
    B(TDM_MPI_INTEGER8, "MPI_INTEGER8", 8, 8, TDM_CV_SINT, 8),
    B(TDM_MPI_REAL4, "MPI_REAL4", 4, 4, TDM_CV_SWAP, 4),
    B(TDM_MPI_REAL8, "MPI_REAL8", 8, 8, TDM_CV_SWAP, 8),
    B(TDM_MPI_REAL16, "MPI_REAL16", 16, 16, TDM_CV_SWAP, 16), /* binary128 */
    B(TDM_MPI_COMPLEX8, "MPI_COMPLEX8", 8, 8, TDM_CV_CSWAP, 4),
    B(TDM_MPI_COMPLEX16, "MPI_COMPLEX16", 16, 16, TDM_CV_CSWAP, 8),
    B(TDM_MPI_COMPLEX32, "MPI_COMPLEX32", 32, 32, TDM_CV_CSWAP, 16),
    B(TDM_MPI_INTEGER16, "MPI_INTEGER16", 16, 16, TDM_CV_SWAP, 16),
    B(TDM_MPI_REAL2, "MPI_REAL2", 2, 2, TDM_CV_SWAP, 2), /* binary16 */
    B(TDM_MPI_COMPLEX4, "MPI_COMPLEX4", 4, 4, TDM_CV_CSWAP, 2),
    B(TDM_MPI_LOGICAL1, "MPI_LOGICAL1", 1, 1, TDM_CV_COPY, 1),
    B(TDM_MPI_LOGICAL2, "MPI_LOGICAL2", 2, 2, TDM_CV_SWAP, 2),
    B(TDM_MPI_LOGICAL4, "MPI_LOGICAL4", 4, 4, TDM_CV_SWAP, 4),
    B(TDM_MPI_LOGICAL8, "MPI_LOGICAL8", 8, 8, TDM_CV_SWAP, 8),
    B(TDM_MPI_LOGICAL16, "MPI_LOGICAL16", 16, 16, TDM_CV_SWAP, 16),
    /* 2-byte floating types of the MPICH ABI (MPI defines no external32 for them:
     * big-endian, as for every other IEEE type) */
    B(TDM_MPIX_C_FLOAT16, "MPIX_C_FLOAT16", 2, 2, TDM_CV_SWAP, 2),
    B(TDM_MPIX_BFLOAT16, "MPIX_BFLOAT16", 2, 2, TDM_CV_SWAP, 2),
    /* value+int pairs for MINLOC/MAXLOC: layout as the C struct {T v; int i;} */
    P(TDM_MPI_FLOAT_INT, "MPI_FLOAT_INT", sizeof(float) + sizeof(int), 8, PAIR_ALIGN(float),
      TDM_MPI_FLOAT, TDM_MPI_INT),
    P(TDM_MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(double) + sizeof(int), 12, PAIR_ALIGN(double),
      TDM_MPI_DOUBLE, TDM_MPI_INT),
    P(TDM_MPI_LONG_INT, "MPI_LONG_INT", sizeof(long) + sizeof(int), 8, PAIR_ALIGN(long),
      TDM_MPI_LONG, TDM_MPI_INT),
    P(TDM_MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(short) + sizeof(int), 6, PAIR_ALIGN(short),
      TDM_MPI_SHORT, TDM_MPI_INT),
    P(TDM_MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long double) + sizeof(int), 20,
      PAIR_ALIGN(long double), TDM_MPI_LONG_DOUBLE, TDM_MPI_INT),
};

/* Where the int of each C pair type lies and how far apart items are. */
static void pair_layout(int handle, size_t *int_off, size_t *extent) {
#define PAIR_CASE(_h, _T)                                                                          \
    case _h:                                                                                       \
        *int_off = offsetof(                                                                       \
            struct {                                                                               \
                _T v;                                                                              \
                int i;                                                                             \
            },                                                                                     \
            i);                                                                                    \
        *extent = sizeof(struct {                                                                  \
            _T v;                                                                                  \
            int i;                                                                                 \
        });                                                                                        \
        return;
    switch (handle) {
        PAIR_CASE(TDM_MPI_FLOAT_INT, float)
        PAIR_CASE(TDM_MPI_DOUBLE_INT, double)
        PAIR_CASE(TDM_MPI_LONG_INT, long)
        PAIR_CASE(TDM_MPI_SHORT_INT, short)
        PAIR_CASE(TDM_MPI_LONG_DOUBLE_INT, long double)
    default:
        *int_off = 0;
        *extent = 0;
    }
#undef PAIR_CASE
}

static tdm_dtype_t *slot_of(int handle, tdm_dtype_ext_t **ext_p) {
    unsigned h = (unsigned)handle;
    if ((h & 0xffff0000u) == BUILTIN_BASE) {
        *ext_p = &builtin_ext[h & 0xff];
        return &builtin[h & 0xff];
    }
    if ((h & 0xfffffff8u) == PAIR_BASE) {
        *ext_p = &pairs_ext[h & 7];
        return &pairs[h & 7];
    }
    return NULL;
}

const tdm_basic_info_t *tdm_dtype_basic_info(int handle) {
    tdm_dtype_t *dt = tdm_dtype_get(handle);
    return dt && dt->predefined ? tdm_dtype_ext(dt)->binfo : NULL;
}

static int init_predefined(const tdm_basic_info_t *bi) {
    tdm_dtype_ext_t *x;
    tdm_dtype_t *dt = slot_of(bi->handle, &x);
    if (!dt)
        return -EINVAL;
    memset(dt, 0, sizeof(*dt));
    memset(x, 0, sizeof(*x));
    dt->handle = bi->handle;
    dt->refs = 1;
    dt->committed = 1;
    dt->predefined = 1;
    dt->size = bi->size;
    dt->ub = dt->true_ub = (ptrdiff_t)bi->size;
    dt->basic = bi->size ? bi->handle : 0;
    dt->basic_size = bi->size;
    dt->ext = x;
    x->sig_kind = TDM_SIG_BASIC;
    x->binfo = bi;
    x->ext32_size = bi->ext32;
    x->align = bi->align;
    strcpy(x->name, bi->name);
    x->lb_marked = bi->handle == TDM_MPI_LB;
    x->ub_marked = bi->handle == TDM_MPI_UB;

    tdm_seg_t segs[2] = {{0, bi->size}, {0, 0}};
    size_t n = bi->size ? 1 : 0;
    if (bi->comp[0]) {
        const tdm_basic_info_t *a = tdm_dtype_basic_info(bi->comp[0]);
        size_t int_off, extent;
        pair_layout(bi->handle, &int_off, &extent);
        dt->nelems = 2;
        if (extent) { /* C pair: {T v; int i;} with the padding the compiler puts */
            dt->ub = (ptrdiff_t)extent;
            dt->true_ub = (ptrdiff_t)(int_off + sizeof(int));
            segs[0].len = a->size;
            segs[1].off = (ptrdiff_t)int_off;
            segs[1].len = sizeof(int);
            n = 2;
        }
        const tdm_basic_info_t *b = tdm_dtype_basic_info(bi->comp[1]);
        x->elem_size = a->size == b->size ? a->size : 0;
        x->elem_basic = bi->comp[0] == bi->comp[1] ? bi->comp[0] : 0;
    } else {
        dt->nelems = bi->size ? 1 : 0;
        x->elem_size = bi->size;
        x->elem_basic = bi->size ? bi->handle : 0;
    }
    dt->layout = tdm_dn_segs(segs, n);
    if (!dt->layout)
        return -ENOMEM;
    void *flat;
    if (tdm_dn_flatten_program(dt->layout, &flat, &dt->flat_len))
        return -ENOMEM;
    dt->flat = flat;
    if (dt->layout->kind == TDM_DN_SEGS && dt->layout->u.s.n == 1) {
        dt->one_seg = dt->layout->u.s.seg[0];
        dt->segs = &dt->one_seg;
        dt->nsegs = 1;
        dt->contig = dt->one_seg.len == (size_t)tdm_dtype_extent(dt);
    } else {
        dt->segs = dt->layout->u.s.seg; /* the node outlives the type: never freed */
        dt->nsegs = dt->layout->u.s.n;
    }
    return 0;
}

int tdm_dtype_init(void) {
    /* components first: the pairs look them up */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < sizeof(basics) / sizeof(basics[0]); i++) {
            const tdm_basic_info_t *bi = &basics[i];
            if (bi->handle == TDM_MPI_DATATYPE_NULL || (pass == 0) != (bi->comp[0] == 0))
                continue;
            int rc = init_predefined(bi);
            if (rc)
                return rc;
        }
    }
    return 0;
}

void tdm_dtype_fini(void) {
    for (size_t i = 0; i < sizeof(basics) / sizeof(basics[0]); i++) {
        tdm_dtype_ext_t *x;
        tdm_dtype_t *dt = slot_of(basics[i].handle, &x);
        if (dt && dt->layout) {
            tdm_dn_release(dt->layout);
            free((void *)dt->flat);
            dt->flat = NULL;
            dt->layout = NULL;
            dt->segs = NULL;
            dt->handle = 0;
        }
    }
    tdm_htab_fini(&user);
}

tdm_dtype_t *tdm_dtype_byte(void) {
    return tdm_dtype_get(TDM_MPI_BYTE);
}

tdm_dtype_t *tdm_dtype_get(int handle) {
    unsigned h = (unsigned)handle;
    if ((h & 0xffff0000u) == BUILTIN_BASE) {
        tdm_dtype_t *dt = &builtin[h & 0xff];
        return dt->handle == handle ? dt : NULL;
    }
    if ((h & 0xfffffff8u) == PAIR_BASE) {
        tdm_dtype_t *dt = &pairs[h & 7];
        return dt->handle == handle ? dt : NULL;
    }
    if ((h & ~USER_MASK) == USER_BASE) {
        return tdm_htab_get(&user, h & USER_MASK);
    }
    return NULL;
}

/* Give a new user type a handle; 0 or -ENOMEM. Slots are not reused while a
 * handle may still be in a user's variable, so lookups of a freed handle fail. */
int tdm_dtype_register(tdm_dtype_t *dt) {
    int i = tdm_htab_alloc(&user, dt);
    if (i < 0)
        return -ENOMEM;
    dt->handle = (int)(USER_BASE | (unsigned)i);
    return 0;
}

tdm_dtype_t *tdm_dtype_alloc(void) {
    tdm_dtype_t *dt = calloc(1, sizeof(*dt));
    tdm_dtype_ext_t *x = calloc(1, sizeof(*x));
    if (!dt || !x) {
        free(dt);
        free(x);
        return NULL;
    }
    dt->refs = 1;
    dt->ext = x;
    x->align = 1;
    return dt;
}

void tdm_dtype_retain(tdm_dtype_t *dt) {
    if (!dt->predefined)
        tdm_ref_inc(&dt->refs);
}

static void contents_clear(tdm_dtype_contents_t *c) {
    for (size_t i = 0; i < c->nt; i++) {
        tdm_dtype_t *t = tdm_dtype_get(c->types[i]);
        if (t)
            tdm_dtype_release(t);
    }
    free(c->ints);
    free(c->aints);
    free(c->counts);
    free(c->types);
    memset(c, 0, sizeof(*c));
}

void tdm_dtype_release(tdm_dtype_t *dt) {
    if (dt->predefined || !tdm_ref_dec(&dt->refs))
        return;
    unsigned i = (unsigned)dt->handle & USER_MASK;
    if (dt->handle && tdm_htab_get(&user, i) == dt)
        tdm_htab_free(&user, (int)i);
    tdm_dtype_ext_t *x = dt->ext;
    /* the contents' handles first: they may name types we also hold below */
    contents_clear(&x->contents);
    if (x->sig_child)
        tdm_dtype_release(x->sig_child);
    for (size_t k = 0; x->sig_types && k < x->sig_n; k++)
        tdm_dtype_release(x->sig_types[k]);
    free(x->sig_types);
    free(x->sig_bl);
    if (dt->segs != &dt->one_seg)
        free(dt->segs);
    if (dt->layout)
        tdm_dn_release(dt->layout);
    free((void *)dt->flat);
    free(x);
    free(dt);
}

int tdm_dtype_commit(tdm_dtype_t *dt) {
    if (dt->committed)
        return 0;
    const tdm_dnode_t *d = dt->layout;
    void *flat;
    int rc = tdm_dn_flatten_program(d, &flat, &dt->flat_len);
    if (rc)
        return rc;
    free((void *)dt->flat); /* a commit that failed half-way before */
    dt->flat = flat;
    if (d->nsegs <= TDM_DTYPE_SMALL_SEGS ||
        (d->nsegs <= TDM_DTYPE_LIST_SEGS && dt->size / d->nsegs >= TDM_DTYPE_LIST_MINLEN)) {
        tdm_seg_t *tmp = malloc((d->nsegs ? d->nsegs : 1) * sizeof(tdm_seg_t));
        if (!tmp)
            return -ENOMEM;
        size_t n = tdm_dn_flatten(d, tmp, d->nsegs);
        if (n == 1) {
            dt->one_seg = tmp[0];
            dt->segs = &dt->one_seg;
        } else if (n > 1) {
            tdm_seg_t *fit = realloc(tmp, n * sizeof(tdm_seg_t));
            dt->segs = fit ? fit : tmp;
            tmp = NULL;
        }
        free(tmp);
        dt->nsegs = n;
        dt->contig = n == 1 && dt->one_seg.len == (size_t)tdm_dtype_extent(dt) &&
                     dt->one_seg.off == dt->true_lb;
    }
    dt->committed = 1;
    tdm_debug(DTYPE,
              "commit %#x: size %zu extent %td, %zu segments per item, %zu layout nodes, "
              "%zu-byte flat program",
              (unsigned)dt->handle, dt->size, tdm_dtype_extent(dt), d->nsegs, tdm_dn_count(d),
              dt->flat_len);
    return 0;
}

/* ---- description, names, attributes ---- */

/* Which array of the description an argument goes to. */
enum { TO_INTS, TO_ADDRS, TO_COUNTS };
static int arg_array(const tdm_dtype_arg_t *a, bool large) {
    if (a->kind == TDM_DTYPE_ARG_INT)
        return TO_INTS;
    if (large)
        return TO_COUNTS;
    return a->kind == TDM_DTYPE_ARG_COUNT ? TO_INTS : TO_ADDRS;
}

int tdm_dtype_record(tdm_dtype_t *dt, int combiner, bool large, const tdm_dtype_arg_t *args,
                     size_t nargs, size_t nt, const int *types) {
    tdm_dtype_contents_t c = {.combiner = combiner, .large = large};
    size_t *len[] = {[TO_INTS] = &c.ni, [TO_ADDRS] = &c.na, [TO_COUNTS] = &c.nc};
    for (size_t k = 0; k < nargs; k++)
        *len[arg_array(&args[k], large)] += args[k].n;
    c.ints = malloc((c.ni ? c.ni : 1) * sizeof(int));
    c.aints = malloc((c.na ? c.na : 1) * sizeof(ptrdiff_t));
    c.counts = malloc((c.nc ? c.nc : 1) * sizeof(long long));
    c.types = malloc((nt ? nt : 1) * sizeof(int));
    if (!c.ints || !c.aints || !c.counts || !c.types) {
        contents_clear(&c);
        return -ENOMEM;
    }
    size_t ni = 0, na = 0, nc = 0;
    for (size_t k = 0; k < nargs; k++) {
        const tdm_dtype_arg_t *a = &args[k];
        int to = arg_array(a, large);
        for (size_t i = 0; i < a->n; i++) {
            int64_t v = tdm_dtype_arg_at(a, i);
            if (to == TO_INTS)
                c.ints[ni++] = (int)v;
            else if (to == TO_ADDRS)
                c.aints[na++] = (ptrdiff_t)v;
            else
                c.counts[nc++] = (long long)v;
        }
    }
    for (size_t i = 0; i < nt; i++) {
        c.types[i] = types[i];
        tdm_dtype_t *t = tdm_dtype_get(types[i]);
        if (t)
            tdm_dtype_retain(t);
    }
    c.nt = nt;
    tdm_dtype_ext_t *x = dt->ext;
    contents_clear(&x->contents);
    x->contents = c;
    x->has_contents = 1;
    return 0;
}

int tdm_dtype_record_copy(tdm_dtype_t *dt, const tdm_dtype_t *from) {
    const tdm_dtype_contents_t *f = tdm_dtype_contents(from);
    if (!f)
        return 0;
    tdm_dtype_contents_t c = *f;
    c.ints = malloc((c.ni ? c.ni : 1) * sizeof(int));
    c.aints = malloc((c.na ? c.na : 1) * sizeof(ptrdiff_t));
    c.counts = malloc((c.nc ? c.nc : 1) * sizeof(long long));
    c.types = malloc((c.nt ? c.nt : 1) * sizeof(int));
    if (!c.ints || !c.aints || !c.counts || !c.types) {
        c.nt = 0; /* nothing retained yet */
        contents_clear(&c);
        return -ENOMEM;
    }
    memcpy(c.ints, f->ints, c.ni * sizeof(int));
    memcpy(c.aints, f->aints, c.na * sizeof(ptrdiff_t));
    memcpy(c.counts, f->counts, c.nc * sizeof(long long));
    memcpy(c.types, f->types, c.nt * sizeof(int));
    for (size_t i = 0; i < c.nt; i++) {
        tdm_dtype_t *t = tdm_dtype_get(c.types[i]);
        if (t)
            tdm_dtype_retain(t);
    }
    tdm_dtype_ext_t *x = dt->ext;
    contents_clear(&x->contents);
    x->contents = c;
    x->has_contents = 1;
    return 0;
}

const tdm_dtype_contents_t *tdm_dtype_contents(const tdm_dtype_t *dt) {
    const tdm_dtype_ext_t *x = dt->ext;
    return x->has_contents ? &x->contents : NULL;
}

const char *tdm_dtype_name(const tdm_dtype_t *dt) {
    return tdm_dtype_ext(dt)->name;
}

void tdm_dtype_set_name(tdm_dtype_t *dt, const char *name) {
    tdm_dtype_ext_t *x = dt->ext;
    size_t n = strnlen(name, sizeof(x->name) - 1);
    memcpy(x->name, name, n);
    x->name[n] = '\0';
}

struct tdm_attr_list **tdm_dtype_attrs(tdm_dtype_t *dt) {
    return &tdm_dtype_ext(dt)->attrs;
}
