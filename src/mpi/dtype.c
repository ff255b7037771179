/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatype bindings: constructors (with their MPI-4 large-count _c forms and
 * the deprecated MPI-1 names), commit/free, size and extent queries, envelope
 * and contents, names, attributes, MPI_Type_match_size, addresses, and
 * MPI_Pack/Unpack (native and external32). The work is in src/dtype/.
 */
#include "bind.h"
#include "../comm/attr.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

/* Any datatype (committed or not) into `_var`. */
#define GET_TYPE(_fn, _handle, _var)                                                               \
    do {                                                                                           \
        TDM_CHECK_INIT(_fn);                                                                       \
        TDM_GET_OBJ(_fn, NULL, tdm_dtype_get, _handle, _var, MPI_ERR_TYPE, "datatype", "");        \
    } while (0)

/* The description (tdm_dtype_record) reads the user's MPI_Count and MPI_Aint arrays in place. */
_Static_assert(_Generic((MPI_Count *)0, int64_t * : 1, default : 0) &&
                   _Generic((MPI_Aint *)0, int64_t * : 1, default : 0),
               "MPI_Count and MPI_Aint are int64_t");

/* Is _C the count type of the large-count (_c) form? (TDM_MPI_COUNT_FORMS) */
#define LARGE(_C) (sizeof(_C) > sizeof(int))

static int err_rc(const char *fn, int rc) {
    if (rc == -EOVERFLOW)
        return tdm_mpi_err(NULL, MPI_ERR_VALUE_TOO_LARGE, fn,
                           "the datatype's size or bounds do not fit in MPI_Aint");
    if (rc == -E2BIG)
        return tdm_mpi_err(NULL, MPI_ERR_TYPE, fn,
                           "the datatype nests types more than %d levels deep, the most Tandem "
                           "can lay out",
                           TDM_DTYPE_MAX_DEPTH);
    return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory building the datatype");
}

/* Give a constructed type (rc: how building it went) its description and handle. */
static int publish(const char *fn, int rc, tdm_dtype_t *dt, int combiner, bool large,
                   const tdm_dtype_arg_t *args, size_t nargs, size_t nt, const MPI_Datatype *types,
                   MPI_Datatype *newtype) {
    if (rc)
        return err_rc(fn, rc);
    rc = tdm_dtype_record(dt, combiner, large, args, nargs, nt, types);
    if (!rc)
        rc = tdm_dtype_register(dt);
    if (rc) {
        tdm_dtype_release(dt);
        return err_rc(fn, rc);
    }
    *newtype = dt->handle;
    return MPI_SUCCESS;
}
/* publish() with the constructor's arguments listed (TDM_DTYPE_INTS, _COUNTS, _ADDRS). */
#define PUBLISH(_fn, _rc, _dt, _combiner, _C, _nt, _types, _newtype, ...)                          \
    publish(_fn, _rc, _dt, _combiner, LARGE(_C), (const tdm_dtype_arg_t[]){__VA_ARGS__},           \
            sizeof((tdm_dtype_arg_t[]){__VA_ARGS__}) / sizeof(tdm_dtype_arg_t), _nt, _types,       \
            _newtype)

/* An old type for a constructor. */
static int old_type(const char *fn, MPI_Datatype h, tdm_dtype_t **dt_p) {
    tdm_dtype_t *dt = tdm_dtype_get(h);
    if (!dt)
        return tdm_mpi_err(NULL, MPI_ERR_TYPE, fn, "invalid oldtype (handle %#x)", (unsigned)h);
    *dt_p = dt;
    return MPI_SUCCESS;
}

/* Block lengths from the int or MPI_Count forms, checked >= 0. */
static int to_sizes(const char *fn, tdm_dtype_arg_t a, size_t *out, const char *what) {
    for (size_t i = 0; i < a.n; i++) {
        int64_t v = tdm_dtype_arg_at(&a, i);
        if (v < 0)
            return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid %s[%zu] = %lld (must be >= 0)", what,
                               i, (long long)v);
        out[i] = (size_t)v;
    }
    return MPI_SUCCESS;
}

#define CHECK_COUNT_ARG(_fn, _v, _name, _class)                                                    \
    TDM_CHECK_NONNEG_BY(tdm_mpi_err, NULL, _fn, _class, _v, _name, " (must be >= 0)")

/* The checks every constructor of `count` items of one old type starts with. */
static int ctor_checks(const char *fn, MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype,
                       tdm_dtype_t **old_p) {
    TDM_CHECK_INIT(fn);
    CHECK_COUNT_ARG(fn, count, "count", MPI_ERR_COUNT);
    TDM_CHECK_PTR(fn, NULL, newtype, "newtype");
    return old_type(fn, oldtype, old_p);
}

/* Every constructor below is written once for its int form (MPI_Type_x) and its
 * large-count one (MPI_Type_x_c) through TDM_MPI_COUNT_FORMS: _C is the count type.
 * Addresses are MPI_Aint in both: the _c forms' MPI_Count is the same type. */

/* ---- contiguous, vector, hvector ---- */

#define CONTIGUOUS_FORMS(_s, _C, _D)                                                               \
    int PMPI_Type_contiguous##_s(_C count, MPI_Datatype oldtype, MPI_Datatype *newtype) {          \
        static const char fn[] = "MPI_Type_contiguous" #_s;                                        \
        tdm_dtype_t *old = NULL, *dt = NULL;                                                       \
        int err = ctor_checks(fn, count, oldtype, newtype, &old);                                  \
        if (err)                                                                                   \
            return err;                                                                            \
        int rc = tdm_dtype_create_contig((size_t)count, old, &dt);                                 \
        return PUBLISH(fn, rc, dt, MPI_COMBINER_CONTIGUOUS, _C, 1, &oldtype, newtype,              \
                       TDM_DTYPE_COUNTS(1, &count));                                               \
    }                                                                                              \
    TDM_WEAK(MPI_Type_contiguous##_s)
TDM_MPI_COUNT_FORMS(CONTIGUOUS_FORMS)

/* A vector (stride in items) or hvector (in bytes) of blocks of `bl` items. */
static int mk_hvector(const char *fn, MPI_Count count, MPI_Count bl, MPI_Count stride,
                      bool stride_in_items, MPI_Datatype oldtype, MPI_Datatype *newtype,
                      tdm_dtype_t **dt_p) {
    tdm_dtype_t *old = NULL;
    TDM_CHECK_INIT(fn);
    CHECK_COUNT_ARG(fn, count, "count", MPI_ERR_COUNT);
    CHECK_COUNT_ARG(fn, bl, "blocklength", MPI_ERR_ARG);
    TDM_CHECK_PTR(fn, NULL, newtype, "newtype");
    int err = old_type(fn, oldtype, &old);
    if (err)
        return err;
    ptrdiff_t s = stride_in_items ? (ptrdiff_t)stride * tdm_dtype_extent(old) : (ptrdiff_t)stride;
    int rc = tdm_dtype_create_hvector((size_t)count, (size_t)bl, s, old, dt_p);
    return rc ? err_rc(fn, rc) : MPI_SUCCESS;
}

/* hvector and hvector_c back MPI_Type_create_hvector(_c) and the MPI-1 MPI_Type_hvector. */
#define VECTOR_FORMS(_s, _C, _D)                                                                   \
    int PMPI_Type_vector##_s(_C count, _C blocklength, _C stride, MPI_Datatype oldtype,            \
                             MPI_Datatype *newtype) {                                              \
        static const char fn[] = "MPI_Type_vector" #_s;                                            \
        tdm_dtype_t *dt;                                                                           \
        int err = mk_hvector(fn, count, blocklength, stride, true, oldtype, newtype, &dt);         \
        if (err)                                                                                   \
            return err;                                                                            \
        return PUBLISH(fn, 0, dt, MPI_COMBINER_VECTOR, _C, 1, &oldtype, newtype,                   \
                       TDM_DTYPE_COUNTS(1, &count), TDM_DTYPE_COUNTS(1, &blocklength),             \
                       TDM_DTYPE_COUNTS(1, &stride));                                              \
    }                                                                                              \
    TDM_WEAK(MPI_Type_vector##_s)                                                                  \
                                                                                                   \
    static int hvector##_s(const char *fn, _C count, _C blocklength, MPI_Aint stride,              \
                           MPI_Datatype oldtype, MPI_Datatype *newtype) {                          \
        tdm_dtype_t *dt;                                                                           \
        int err = mk_hvector(fn, count, blocklength, stride, false, oldtype, newtype, &dt);        \
        if (err)                                                                                   \
            return err;                                                                            \
        return PUBLISH(fn, 0, dt, MPI_COMBINER_HVECTOR, _C, 1, &oldtype, newtype,                  \
                       TDM_DTYPE_COUNTS(1, &count), TDM_DTYPE_COUNTS(1, &blocklength),             \
                       TDM_DTYPE_ADDRS(1, &stride));                                               \
    }                                                                                              \
    int PMPI_Type_create_hvector##_s(_C count, _C blocklength, MPI_Aint stride,                    \
                                     MPI_Datatype oldtype, MPI_Datatype *newtype) {                \
        return hvector##_s("MPI_Type_create_hvector" #_s, count, blocklength, stride, oldtype,     \
                           newtype);                                                               \
    }                                                                                              \
    TDM_WEAK(MPI_Type_create_hvector##_s)
TDM_MPI_COUNT_FORMS(VECTOR_FORMS)

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype) {
    return hvector("MPI_Type_hvector", count, blocklength, stride, oldtype, newtype);
}
TDM_WEAK(MPI_Type_hvector)

/* ---- indexed family ---- */

/* Checks shared by every indexed constructor; on success *old_p is set. */
static int idx_checks(const char *fn, MPI_Count count, const void *bls, bool need_bls,
                      const void *disps, MPI_Datatype oldtype, MPI_Datatype *newtype,
                      tdm_dtype_t **old_p) {
    TDM_CHECK_INIT(fn);
    CHECK_COUNT_ARG(fn, count, "count", MPI_ERR_COUNT);
    TDM_CHECK_PTR(fn, NULL, newtype, "newtype");
    if (count > 0 && need_bls)
        TDM_CHECK_PTR(fn, NULL, bls, "array_of_blocklengths");
    if (count > 0)
        TDM_CHECK_PTR(fn, NULL, disps, "array_of_displacements");
    return old_type(fn, oldtype, old_p);
}

/* An hindexed layout: block lengths `bls` (NULL: all `bl`), displacements `disps` in
 * items of old (in_items) or in bytes. */
static int mk_hindexed(const char *fn, const tdm_dtype_arg_t *bls, size_t bl,
                       const tdm_dtype_arg_t *disps, bool in_items, tdm_dtype_t *old,
                       tdm_dtype_t **dt_p) {
    size_t n = disps->n;
    size_t *b = bls ? malloc((n ? n : 1) * sizeof(size_t)) : NULL;
    ptrdiff_t *d = malloc((n ? n : 1) * sizeof(ptrdiff_t));
    int err = MPI_SUCCESS;
    if ((bls && !b) || !d)
        err = tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory for %zu blocks", n);
    if (!err && bls)
        err = to_sizes(fn, *bls, b, "array_of_blocklengths");
    if (!err) {
        ptrdiff_t unit = in_items ? tdm_dtype_extent(old) : 1;
        for (size_t i = 0; i < n; i++)
            d[i] = (ptrdiff_t)tdm_dtype_arg_at(disps, i) * unit;
        int rc = tdm_dtype_create_hindexed(n, b, bl, d, old, dt_p);
        if (rc)
            err = err_rc(fn, rc);
    }
    free(b);
    free(d);
    return err;
}

/* Every indexed constructor: `count` blocks of `bls` items each (NULL: all of `bl`,
 * the block forms), at displacements in items of the old type (in_items) or in
 * bytes. count, bls or bl and disps are the user's arguments, which the
 * description lists in that order; a wide count means the _c form. */
static int indexed(const char *fn, int combiner, tdm_dtype_arg_t count, const tdm_dtype_arg_t *bls,
                   const tdm_dtype_arg_t *bl, tdm_dtype_arg_t disps, bool in_items,
                   MPI_Datatype oldtype, MPI_Datatype *newtype) {
    tdm_dtype_t *old = NULL, *dt = NULL;
    int err = idx_checks(fn, tdm_dtype_arg_at(&count, 0), bls ? bls->v : NULL, bls != NULL, disps.v,
                         oldtype, newtype, &old);
    if (err)
        return err;
    if (bl)
        CHECK_COUNT_ARG(fn, tdm_dtype_arg_at(bl, 0), "blocklength", MPI_ERR_ARG);
    if ((err = mk_hindexed(fn, bls, bl ? (size_t)tdm_dtype_arg_at(bl, 0) : 0, &disps, in_items, old,
                           &dt)))
        return err;
    const tdm_dtype_arg_t args[] = {count, bls ? *bls : *bl, disps};
    return publish(fn, 0, dt, combiner, count.wide, args, 3, 1, &oldtype, newtype);
}

#define INDEXED_FORMS(_s, _C, _D)                                                                  \
    int PMPI_Type_indexed##_s(_C count, const _C array_of_blocklengths[],                          \
                              const _C array_of_displacements[], MPI_Datatype oldtype,             \
                              MPI_Datatype *newtype) {                                             \
        return indexed("MPI_Type_indexed" #_s, MPI_COMBINER_INDEXED, TDM_DTYPE_COUNTS(1, &count),  \
                       &TDM_DTYPE_COUNTS(count, array_of_blocklengths), NULL,                      \
                       TDM_DTYPE_COUNTS(count, array_of_displacements), true, oldtype, newtype);   \
    }                                                                                              \
    TDM_WEAK(MPI_Type_indexed##_s)                                                                 \
                                                                                                   \
    int PMPI_Type_create_hindexed##_s(_C count, const _C array_of_blocklengths[],                  \
                                      const MPI_Aint array_of_displacements[],                     \
                                      MPI_Datatype oldtype, MPI_Datatype *newtype) {               \
        return indexed("MPI_Type_create_hindexed" #_s, MPI_COMBINER_HINDEXED,                      \
                       TDM_DTYPE_COUNTS(1, &count),                                                \
                       &TDM_DTYPE_COUNTS(count, array_of_blocklengths), NULL,                      \
                       TDM_DTYPE_ADDRS(count, array_of_displacements), false, oldtype, newtype);   \
    }                                                                                              \
    TDM_WEAK(MPI_Type_create_hindexed##_s)                                                         \
                                                                                                   \
    int PMPI_Type_create_indexed_block##_s(_C count, _C blocklength,                               \
                                           const _C array_of_displacements[],                      \
                                           MPI_Datatype oldtype, MPI_Datatype *newtype) {          \
        return indexed("MPI_Type_create_indexed_block" #_s, MPI_COMBINER_INDEXED_BLOCK,            \
                       TDM_DTYPE_COUNTS(1, &count), NULL, &TDM_DTYPE_COUNTS(1, &blocklength),      \
                       TDM_DTYPE_COUNTS(count, array_of_displacements), true, oldtype, newtype);   \
    }                                                                                              \
    TDM_WEAK(MPI_Type_create_indexed_block##_s)                                                    \
                                                                                                   \
    int PMPI_Type_create_hindexed_block##_s(_C count, _C blocklength,                              \
                                            const MPI_Aint array_of_displacements[],               \
                                            MPI_Datatype oldtype, MPI_Datatype *newtype) {         \
        return indexed("MPI_Type_create_hindexed_block" #_s, MPI_COMBINER_HINDEXED_BLOCK,          \
                       TDM_DTYPE_COUNTS(1, &count), NULL, &TDM_DTYPE_COUNTS(1, &blocklength),      \
                       TDM_DTYPE_ADDRS(count, array_of_displacements), false, oldtype, newtype);   \
    }                                                                                              \
    TDM_WEAK(MPI_Type_create_hindexed_block##_s)
TDM_MPI_COUNT_FORMS(INDEXED_FORMS)

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return indexed("MPI_Type_hindexed", MPI_COMBINER_HINDEXED, TDM_DTYPE_COUNTS(1, &count),
                   &TDM_DTYPE_COUNTS(count, array_of_blocklengths), NULL,
                   TDM_DTYPE_ADDRS(count, array_of_displacements), false, oldtype, newtype);
}
TDM_WEAK(MPI_Type_hindexed)

/* ---- struct ---- */

static int mk_struct(const char *fn, const tdm_dtype_arg_t *bls, const MPI_Aint *disps,
                     const MPI_Datatype *types, tdm_dtype_t **dt_p) {
    size_t count = bls->n;
    size_t *b = malloc((count ? count : 1) * sizeof(size_t));
    tdm_dtype_t **t = malloc((count ? count : 1) * sizeof(*t));
    int err = MPI_SUCCESS;
    if (!b || !t)
        err = tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    if (!err)
        err = to_sizes(fn, *bls, b, "array_of_blocklengths");
    for (size_t i = 0; !err && i < count; i++) {
        t[i] = tdm_dtype_get(types[i]);
        if (!t[i])
            err = tdm_mpi_err(NULL, MPI_ERR_TYPE, fn, "invalid array_of_types[%zu] (handle %#x)", i,
                              (unsigned)types[i]);
    }
    if (!err) {
        int rc = tdm_dtype_create_struct(count, b, (const ptrdiff_t *)disps, t, dt_p);
        if (rc)
            err = err_rc(fn, rc);
    }
    free(b);
    free(t);
    return err;
}

/* type_struct and type_struct_c back MPI_Type_create_struct(_c) and the MPI-1 MPI_Type_struct. */
#define STRUCT_FORMS(_s, _C, _D)                                                                   \
    static int type_struct##_s(const char *fn, _C count, const _C bls[], const MPI_Aint disps[],   \
                               const MPI_Datatype types[], MPI_Datatype *newtype) {                \
        tdm_dtype_t *dt;                                                                           \
        TDM_CHECK_INIT(fn);                                                                        \
        CHECK_COUNT_ARG(fn, count, "count", MPI_ERR_COUNT);                                        \
        TDM_CHECK_PTR(fn, NULL, newtype, "newtype");                                               \
        if (count > 0) {                                                                           \
            TDM_CHECK_PTR(fn, NULL, bls, "array_of_blocklengths");                                 \
            TDM_CHECK_PTR(fn, NULL, disps, "array_of_displacements");                              \
            TDM_CHECK_PTR(fn, NULL, types, "array_of_types");                                      \
        }                                                                                          \
        tdm_dtype_arg_t b = TDM_DTYPE_COUNTS(count, bls);                                          \
        int err = mk_struct(fn, &b, disps, types, &dt);                                            \
        if (err)                                                                                   \
            return err;                                                                            \
        return PUBLISH(fn, 0, dt, MPI_COMBINER_STRUCT, _C, (size_t)count, types, newtype,          \
                       TDM_DTYPE_COUNTS(1, &count), b, TDM_DTYPE_ADDRS(count, disps));             \
    }                                                                                              \
    int PMPI_Type_create_struct##_s(_C count, const _C array_of_blocklengths[],                    \
                                    const MPI_Aint array_of_displacements[],                       \
                                    const MPI_Datatype array_of_types[], MPI_Datatype *newtype) {  \
        return type_struct##_s("MPI_Type_create_struct" #_s, count, array_of_blocklengths,         \
                               array_of_displacements, array_of_types, newtype);                   \
    }                                                                                              \
    TDM_WEAK(MPI_Type_create_struct##_s)
TDM_MPI_COUNT_FORMS(STRUCT_FORMS)

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype) {
    return type_struct("MPI_Type_struct", count, array_of_blocklengths, array_of_displacements,
                       array_of_types, newtype);
}
TDM_WEAK(MPI_Type_struct)

/* ---- subarray, darray ---- */

static int check_order(const char *fn, int order) {
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                           "invalid order %d (MPI_ORDER_C or MPI_ORDER_FORTRAN)", order);
    return MPI_SUCCESS;
}

/* sizes, subs, starts: the ndims values of the user's arrays (int or MPI_Count). */
static int mk_subarray(const char *fn, int ndims, const tdm_dtype_arg_t *sizes,
                       const tdm_dtype_arg_t *subs, const tdm_dtype_arg_t *starts, int order,
                       MPI_Datatype oldtype, MPI_Datatype *newtype, tdm_dtype_t **dt_p) {
    tdm_dtype_t *old = NULL;
    TDM_CHECK_INIT(fn);
    TDM_CHECK_PTR(fn, NULL, newtype, "newtype");
    if (ndims <= 0)
        return tdm_mpi_err(NULL, MPI_ERR_DIMS, fn, "invalid ndims %d (must be > 0)", ndims);
    TDM_CHECK_PTR(fn, NULL, sizes->v, "array_of_sizes");
    TDM_CHECK_PTR(fn, NULL, subs->v, "array_of_subsizes");
    TDM_CHECK_PTR(fn, NULL, starts->v, "array_of_starts");
    int err = check_order(fn, order);
    if (err || (err = old_type(fn, oldtype, &old)))
        return err;
    size_t *v = malloc(3 * (size_t)ndims * sizeof(size_t));
    if (!v)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < ndims; i++) {
        long long size = tdm_dtype_arg_at(sizes, (size_t)i),
                  sub = tdm_dtype_arg_at(subs, (size_t)i),
                  start = tdm_dtype_arg_at(starts, (size_t)i);
        if (size <= 0)
            err = tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid array_of_sizes[%d] = %lld", i, size);
        else if (sub <= 0 || sub > size)
            err = tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                              "invalid array_of_subsizes[%d] = %lld (size %lld)", i, sub, size);
        else if (start < 0 || start > size - sub)
            err = tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                              "invalid array_of_starts[%d] = %lld (size %lld, subsize %lld)", i,
                              start, size, sub);
        if (err) {
            free(v);
            return err;
        }
        v[i] = (size_t)size;
        v[ndims + i] = (size_t)sub;
        v[2 * ndims + i] = (size_t)start;
    }
    int rc = tdm_dtype_create_subarray(ndims, v, v + ndims, v + 2 * ndims, order == MPI_ORDER_C,
                                       old, dt_p);
    free(v);
    return rc ? err_rc(fn, rc) : MPI_SUCCESS;
}

#define SUBARRAY_FORMS(_s, _C, _D)                                                                 \
    int PMPI_Type_create_subarray##_s(int ndims, const _C array_of_sizes[],                        \
                                      const _C array_of_subsizes[], const _C array_of_starts[],    \
                                      int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {    \
        static const char fn[] = "MPI_Type_create_subarray" #_s;                                   \
        tdm_dtype_t *dt;                                                                           \
        tdm_dtype_arg_t sizes = TDM_DTYPE_COUNTS(ndims, array_of_sizes),                           \
                        subs = TDM_DTYPE_COUNTS(ndims, array_of_subsizes),                         \
                        starts = TDM_DTYPE_COUNTS(ndims, array_of_starts);                         \
        int err = mk_subarray(fn, ndims, &sizes, &subs, &starts, order, oldtype, newtype, &dt);    \
        if (err)                                                                                   \
            return err;                                                                            \
        return PUBLISH(fn, 0, dt, MPI_COMBINER_SUBARRAY, _C, 1, &oldtype, newtype,                 \
                       TDM_DTYPE_INTS(1, &ndims), sizes, subs, starts, TDM_DTYPE_INTS(1, &order)); \
    }                                                                                              \
    TDM_WEAK(MPI_Type_create_subarray##_s)
TDM_MPI_COUNT_FORMS(SUBARRAY_FORMS)

/* gsizes: the ndims values of the user's array (int or MPI_Count). */
static int mk_darray(const char *fn, int size, int rank, int ndims, const tdm_dtype_arg_t *gsizes,
                     const int *distribs, const int *dargs, const int *psizes, int order,
                     MPI_Datatype oldtype, MPI_Datatype *newtype, tdm_dtype_t **dt_p) {
    tdm_dtype_t *old = NULL;
    TDM_CHECK_INIT(fn);
    TDM_CHECK_PTR(fn, NULL, newtype, "newtype");
    if (size <= 0)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid size %d (must be > 0)", size);
    if (rank < 0 || rank >= size)
        return tdm_mpi_err(NULL, MPI_ERR_RANK, fn, "invalid rank %d (size %d)", rank, size);
    if (ndims <= 0)
        return tdm_mpi_err(NULL, MPI_ERR_DIMS, fn, "invalid ndims %d (must be > 0)", ndims);
    TDM_CHECK_PTR(fn, NULL, gsizes->v, "array_of_gsizes");
    TDM_CHECK_PTR(fn, NULL, distribs, "array_of_distribs");
    TDM_CHECK_PTR(fn, NULL, dargs, "array_of_dargs");
    TDM_CHECK_PTR(fn, NULL, psizes, "array_of_psizes");
    int err = check_order(fn, order);
    if (err || (err = old_type(fn, oldtype, &old)))
        return err;
    long long procs = 1;
    for (int i = 0; i < ndims; i++) {
        long long gsize = tdm_dtype_arg_at(gsizes, (size_t)i);
        if (gsize <= 0)
            return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid array_of_gsizes[%d] = %lld", i,
                               gsize);
        if (psizes[i] <= 0)
            return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid array_of_psizes[%d] = %d", i,
                               psizes[i]);
        procs *= psizes[i];
        switch (distribs[i]) {
        case MPI_DISTRIBUTE_NONE:
            if (psizes[i] != 1)
                return tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                                   "array_of_psizes[%d] = %d with MPI_DISTRIBUTE_NONE (must be 1)",
                                   i, psizes[i]);
            break;
        case MPI_DISTRIBUTE_BLOCK:
            if (dargs[i] != MPI_DISTRIBUTE_DFLT_DARG &&
                (dargs[i] <= 0 || (long long)dargs[i] * psizes[i] < gsize))
                return tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                                   "invalid array_of_dargs[%d] = %d: BLOCK needs darg * psize "
                                   ">= gsize (%d * %d < %lld)",
                                   i, dargs[i], dargs[i], psizes[i], gsize);
            break;
        case MPI_DISTRIBUTE_CYCLIC:
            if (dargs[i] != MPI_DISTRIBUTE_DFLT_DARG && dargs[i] <= 0)
                return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid array_of_dargs[%d] = %d", i,
                                   dargs[i]);
            break;
        default:
            return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid array_of_distribs[%d] = %d", i,
                               distribs[i]);
        }
    }
    if (procs != size)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                           "the process grid (product of array_of_psizes = %lld) does not match "
                           "size %d",
                           procs, size);
    size_t *g = malloc((size_t)ndims * sizeof(size_t));
    if (!g)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < ndims; i++)
        g[i] = (size_t)tdm_dtype_arg_at(gsizes, (size_t)i);
    int rc = tdm_dtype_create_darray(size, rank, ndims, g, distribs, dargs, psizes,
                                     order == MPI_ORDER_C, old, dt_p);
    free(g);
    return rc ? err_rc(fn, rc) : MPI_SUCCESS;
}

#define DARRAY_FORMS(_s, _C, _D)                                                                   \
    int PMPI_Type_create_darray##_s(int size, int rank, int ndims, const _C array_of_gsizes[],     \
                                    const int array_of_distribs[], const int array_of_dargs[],     \
                                    const int array_of_psizes[], int order, MPI_Datatype oldtype,  \
                                    MPI_Datatype *newtype) {                                       \
        static const char fn[] = "MPI_Type_create_darray" #_s;                                     \
        tdm_dtype_t *dt;                                                                           \
        tdm_dtype_arg_t gsizes = TDM_DTYPE_COUNTS(ndims, array_of_gsizes);                         \
        int err = mk_darray(fn, size, rank, ndims, &gsizes, array_of_distribs, array_of_dargs,     \
                            array_of_psizes, order, oldtype, newtype, &dt);                        \
        if (err)                                                                                   \
            return err;                                                                            \
        return PUBLISH(                                                                            \
            fn, 0, dt, MPI_COMBINER_DARRAY, _C, 1, &oldtype, newtype, TDM_DTYPE_INTS(1, &size),    \
            TDM_DTYPE_INTS(1, &rank), TDM_DTYPE_INTS(1, &ndims), gsizes,                           \
            TDM_DTYPE_INTS(ndims, array_of_distribs), TDM_DTYPE_INTS(ndims, array_of_dargs),       \
            TDM_DTYPE_INTS(ndims, array_of_psizes), TDM_DTYPE_INTS(1, &order));                    \
    }                                                                                              \
    TDM_WEAK(MPI_Type_create_darray##_s)
TDM_MPI_COUNT_FORMS(DARRAY_FORMS)

/* ---- resized ---- */

#define RESIZED_FORMS(_s, _C, _D)                                                                  \
    int PMPI_Type_create_resized##_s(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,           \
                                     MPI_Datatype *newtype) {                                      \
        static const char fn[] = "MPI_Type_create_resized" #_s;                                    \
        tdm_dtype_t *old = NULL, *dt = NULL;                                                       \
        TDM_CHECK_INIT(fn);                                                                        \
        TDM_CHECK_PTR(fn, NULL, newtype, "newtype");                                               \
        int err = old_type(fn, oldtype, &old);                                                     \
        if (err)                                                                                   \
            return err;                                                                            \
        int rc = tdm_dtype_create_resized(old, lb, extent, &dt);                                   \
        return PUBLISH(fn, rc, dt, MPI_COMBINER_RESIZED, _C, 1, &oldtype, newtype,                 \
                       TDM_DTYPE_ADDRS(1, &lb), TDM_DTYPE_ADDRS(1, &extent));                      \
    }                                                                                              \
    TDM_WEAK(MPI_Type_create_resized##_s)
TDM_MPI_COUNT_FORMS(RESIZED_FORMS)

/* ---- Fortran 90 parameterized types (MPI-3.1 17.2.5) ----
 * The type for a precision p and decimal exponent range r (MPI_UNDEFINED: any) is
 * the smallest Fortran kind that holds them, as SELECTED_INT_KIND / SELECTED_REAL_KIND
 * choose with gfortran: a duplicate of MPI_INTEGERn, MPI_REALn or MPI_COMPLEXn whose
 * envelope says MPI_COMBINER_F90_* with (r) or (p, r). It is predefined for the user:
 * the same handle for the same arguments, never freed (the table below keeps it, one
 * entry per distinct (p, r) asked for, as many as there are). */
enum { F90_INTEGER, F90_REAL, F90_COMPLEX, F90_KINDS };
typedef struct f90_ent {
    int p, r;
    MPI_Datatype type;
} f90_ent_t;
static struct {
    f90_ent_t *ent;
    size_t n, cap;
} f90_cache[F90_KINDS];
/* The cache is shared: two threads asking for one (p, r) get one handle. */
static tdm_lock_t f90_lock = TDM_LOCK_INITIALIZER;

static bool type_is_f90(const tdm_dtype_t *dt) {
    const tdm_dtype_contents_t *c = tdm_dtype_contents(dt);
    return c && (c->combiner == MPI_COMBINER_F90_INTEGER || c->combiner == MPI_COMBINER_F90_REAL ||
                 c->combiner == MPI_COMBINER_F90_COMPLEX);
}

static int f90_type(const char *fn, int kind, int p, int r, MPI_Datatype *newtype) {
    static const int combiners[F90_KINDS] = {MPI_COMBINER_F90_INTEGER, MPI_COMBINER_F90_REAL,
                                             MPI_COMBINER_F90_COMPLEX};
    TDM_CHECK_INIT(fn);
    TDM_CHECK_PTR(fn, NULL, newtype, "newtype");
    if ((p < 0 && p != MPI_UNDEFINED) || (r < 0 && r != MPI_UNDEFINED))
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid %s %d (must be >= 0 or MPI_UNDEFINED)",
                           p < 0 && p != MPI_UNDEFINED ? "p" : "r",
                           p < 0 && p != MPI_UNDEFINED ? p : r);
    MPI_Datatype base = MPI_DATATYPE_NULL;
    if (kind == F90_INTEGER) {
        /* kinds 1, 2, 4, 8, 16 hold 2, 4, 9, 18, 38 decimal digits */
        int want = r == MPI_UNDEFINED ? 9 : r;
        base = want <= 2    ? MPI_INTEGER1
               : want <= 4  ? MPI_INTEGER2
               : want <= 9  ? MPI_INTEGER4
               : want <= 18 ? MPI_INTEGER8
               : want <= 38 ? MPI_INTEGER16
                            : MPI_DATATYPE_NULL;
    } else {
        /* binary32, binary64, binary128: precision 6, 15, 33; range 37, 307, 4931 */
        int pp = p == MPI_UNDEFINED ? 0 : p, rr = r == MPI_UNDEFINED ? 0 : r;
        int k = pp <= 6 && rr <= 37      ? 0
                : pp <= 15 && rr <= 307  ? 1
                : pp <= 33 && rr <= 4931 ? 2
                                         : -1;
        static const MPI_Datatype reals[3] = {MPI_REAL4, MPI_REAL8, MPI_REAL16},
                                  complexes[3] = {MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
        if (k >= 0)
            base = kind == F90_REAL ? reals[k] : complexes[k];
    }
    if (base == MPI_DATATYPE_NULL)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                           "no Fortran %s kind with precision %d and range %d",
                           kind == F90_INTEGER ? "integer"
                           : kind == F90_REAL  ? "real"
                                               : "complex",
                           p, r);
    if (kind == F90_INTEGER)
        p = MPI_UNDEFINED; /* not an argument: one entry per r */
    tdm_lock_acquire(&f90_lock);
    for (size_t i = 0; i < f90_cache[kind].n; i++) {
        if (f90_cache[kind].ent[i].p == p && f90_cache[kind].ent[i].r == r) {
            *newtype = f90_cache[kind].ent[i].type;
            tdm_lock_release(&f90_lock);
            return MPI_SUCCESS;
        }
    }
    if (f90_cache[kind].n == f90_cache[kind].cap) {
        size_t ncap = f90_cache[kind].cap ? 2 * f90_cache[kind].cap : 16;
        f90_ent_t *ne = realloc(f90_cache[kind].ent, ncap * sizeof(*ne));
        if (!ne) {
            tdm_lock_release(&f90_lock);
            return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory for the table of types");
        }
        f90_cache[kind].ent = ne;
        f90_cache[kind].cap = ncap;
    }
    tdm_dtype_t *dt = NULL;
    int rc = tdm_dtype_create_dup(tdm_dtype_get(base), &dt);
    int ints[2] = {kind == F90_INTEGER ? r : p, r};
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    int err = PUBLISH(fn, rc, dt, combiners[kind], int, 0, NULL, &nt,
                      TDM_DTYPE_INTS(kind == F90_INTEGER ? 1 : 2, ints));
    if (err) {
        tdm_lock_release(&f90_lock);
        return err;
    }
    tdm_dtype_commit(dt);
    f90_cache[kind].ent[f90_cache[kind].n++] = (f90_ent_t){.p = p, .r = r, .type = nt};
    tdm_lock_release(&f90_lock);
    *newtype = nt;
    return MPI_SUCCESS;
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype) {
    return f90_type("MPI_Type_create_f90_integer", F90_INTEGER, MPI_UNDEFINED, r, newtype);
}
TDM_WEAK(MPI_Type_create_f90_integer)

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype) {
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_real",
                           "p and r are both MPI_UNDEFINED");
    return f90_type("MPI_Type_create_f90_real", F90_REAL, p, r, newtype);
}
TDM_WEAK(MPI_Type_create_f90_real)

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype) {
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Type_create_f90_complex",
                           "p and r are both MPI_UNDEFINED");
    return f90_type("MPI_Type_create_f90_complex", F90_COMPLEX, p, r, newtype);
}
TDM_WEAK(MPI_Type_create_f90_complex)

static int attr_error(int rc, int keyval, const char *fn);

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype) {
    static const char fn[] = "MPI_Type_dup";
    tdm_dtype_t *old = NULL, *dt = NULL;
    GET_TYPE(fn, oldtype, old);
    TDM_CHECK_PTR(fn, NULL, newtype, "newtype");
    int rc = tdm_dtype_create_dup(old, &dt);
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    int err = publish(fn, rc, dt, MPI_COMBINER_DUP, false, NULL, 0, 1, &oldtype, &nt);
    if (err)
        return err;
    rc = tdm_attr_copy_all(TDM_ATTR_TYPE, (tdm_attr_list_t *const *)tdm_dtype_attrs(old), oldtype,
                           nt, (tdm_attr_list_t **)tdm_dtype_attrs(dt));
    if (rc) {
        tdm_dtype_release(dt);
        return attr_error(rc, 0, fn);
    }
    *newtype = nt;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Type_dup)

/* ---- commit, free ---- */

int PMPI_Type_commit(MPI_Datatype *datatype) {
    static const char fn[] = "MPI_Type_commit";
    tdm_dtype_t *dt;
    TDM_CHECK_INIT(fn);
    TDM_CHECK_PTR(fn, NULL, datatype, "datatype");
    GET_TYPE(fn, *datatype, dt);
    int rc = tdm_dtype_commit(dt);
    return rc ? err_rc(fn, rc) : MPI_SUCCESS;
}
TDM_WEAK(MPI_Type_commit)

int PMPI_Type_free(MPI_Datatype *datatype) {
    static const char fn[] = "MPI_Type_free";
    tdm_dtype_t *dt;
    TDM_CHECK_INIT(fn);
    TDM_CHECK_PTR(fn, NULL, datatype, "datatype");
    GET_TYPE(fn, *datatype, dt);
    if (dt->predefined)
        return tdm_mpi_err(NULL, MPI_ERR_TYPE, fn, "cannot free the predefined datatype %s",
                           tdm_dtype_name(dt));
    if (type_is_f90(dt))
        return tdm_mpi_err(NULL, MPI_ERR_TYPE, fn,
                           "cannot free a type from MPI_Type_create_f90_* (it is predefined)");
    int rc =
        tdm_attr_delete_all(TDM_ATTR_TYPE, (tdm_attr_list_t **)tdm_dtype_attrs(dt), dt->handle);
    if (rc)
        return attr_error(rc, 0, fn);
    /* messages in flight and types built from this one keep their references */
    tdm_dtype_release(dt);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Type_free)

/* ---- size and extent ---- */

/* MPI_Type_size says MPI_UNDEFINED for a size its int cannot hold. */
#define SIZE_FORMS(_s, _C, _D)                                                                     \
    int PMPI_Type_size##_s(MPI_Datatype datatype, _C *size) {                                      \
        static const char fn[] = "MPI_Type_size" #_s;                                              \
        tdm_dtype_t *dt;                                                                           \
        GET_TYPE(fn, datatype, dt);                                                                \
        TDM_CHECK_PTR(fn, NULL, size, "size");                                                     \
        *size = LARGE(_C) || dt->size <= INT_MAX ? (_C)dt->size : MPI_UNDEFINED;                   \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    TDM_WEAK(MPI_Type_size##_s)
TDM_MPI_COUNT_FORMS(SIZE_FORMS)

TDM_MPI_PROPERTY(MPI_Type_size_x, MPI_Datatype, tdm_dtype_t, dt, GET_TYPE, NULL, MPI_Count, size,
                 (MPI_Count)dt->size)

/* lb/extent (true_ false) or true_lb/true_extent of a type; MPI_Aint and MPI_Count
 * are one type, so this serves the MPI_Aint, _x and _c forms alike. */
static int bounds_of(const char *fn, MPI_Datatype datatype, bool true_, MPI_Count *lb,
                     MPI_Count *extent) {
    tdm_dtype_t *dt;
    GET_TYPE(fn, datatype, dt);
    TDM_CHECK_PTR(fn, NULL, lb, true_ ? "true_lb" : "lb");
    TDM_CHECK_PTR(fn, NULL, extent, true_ ? "true_extent" : "extent");
    if (true_) {
        *lb = dt->true_lb;
        *extent = dt->true_ub - dt->true_lb;
    } else {
        *lb = dt->lb;
        *extent = tdm_dtype_extent(dt);
    }
    return MPI_SUCCESS;
}

#define EXTENT_FORMS(_s, _C, _D)                                                                   \
    int PMPI_Type_get_extent##_s(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent) {          \
        return bounds_of("MPI_Type_get_extent" #_s, datatype, false, lb, extent);                  \
    }                                                                                              \
    TDM_WEAK(MPI_Type_get_extent##_s)                                                              \
                                                                                                   \
    int PMPI_Type_get_true_extent##_s(MPI_Datatype datatype, MPI_Aint *true_lb,                    \
                                      MPI_Aint *true_extent) {                                     \
        return bounds_of("MPI_Type_get_true_extent" #_s, datatype, true, true_lb, true_extent);    \
    }                                                                                              \
    TDM_WEAK(MPI_Type_get_true_extent##_s)
TDM_MPI_COUNT_FORMS(EXTENT_FORMS)
EXTENT_FORMS(_x, MPI_Count, MPI_Aint)

/* MPI-1 forms, removed in MPI-3 but still in the MPICH ABI: one bound each */
#define MPI1_BOUND(_name, _arg, _value)                                                            \
    int PMPI_Type_##_name(MPI_Datatype datatype, MPI_Aint *_arg) {                                 \
        tdm_dtype_t *dt;                                                                           \
        GET_TYPE("MPI_Type_" #_name, datatype, dt);                                                \
        TDM_CHECK_PTR("MPI_Type_" #_name, NULL, _arg, #_arg);                                      \
        *_arg = (_value);                                                                          \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    TDM_WEAK(MPI_Type_##_name)
MPI1_BOUND(extent, extent, tdm_dtype_extent(dt))
MPI1_BOUND(lb, displacement, dt->lb)
MPI1_BOUND(ub, displacement, dt->ub)

/* ---- envelope and contents ---- */

static int envelope(const char *fn, MPI_Datatype datatype, int want_large, MPI_Count *ni,
                    MPI_Count *na, MPI_Count *nc, MPI_Count *nt, int *combiner) {
    tdm_dtype_t *dt;
    GET_TYPE(fn, datatype, dt);
    if (!ni || !na || !nt || !combiner || (want_large && !nc))
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "an output argument is NULL");
    const tdm_dtype_contents_t *c = tdm_dtype_contents(dt);
    if (!c) {
        *ni = *na = *nt = 0;
        if (nc)
            *nc = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    if (c->nc && !want_large)
        return tdm_mpi_err(NULL, MPI_ERR_TYPE, fn,
                           "datatype %#x was made by a large-count constructor: use "
                           "MPI_Type_get_envelope_c",
                           (unsigned)datatype);
    *ni = (MPI_Count)c->ni;
    *na = (MPI_Count)c->na;
    *nt = (MPI_Count)c->nt;
    if (nc)
        *nc = (MPI_Count)c->nc;
    *combiner = c->combiner;
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner) {
    MPI_Count ni, na, nt;
    int err = envelope("MPI_Type_get_envelope", datatype, 0, num_integers ? &ni : NULL,
                       num_addresses ? &na : NULL, NULL, num_datatypes ? &nt : NULL, combiner);
    if (!err) {
        *num_integers = (int)ni;
        *num_addresses = (int)na;
        *num_datatypes = (int)nt;
    }
    return err;
}
TDM_WEAK(MPI_Type_get_envelope)

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner) {
    return envelope("MPI_Type_get_envelope_c", datatype, 1, num_integers, num_addresses,
                    num_large_counts, num_datatypes, combiner);
}
TDM_WEAK(MPI_Type_get_envelope_c)

static int contents(const char *fn, MPI_Datatype datatype, int want_large, MPI_Count max_i,
                    MPI_Count max_a, MPI_Count max_c, MPI_Count max_t, int *ints, MPI_Aint *aints,
                    MPI_Count *counts, MPI_Datatype *types) {
    tdm_dtype_t *dt;
    GET_TYPE(fn, datatype, dt);
    const tdm_dtype_contents_t *c = tdm_dtype_contents(dt);
    if (!c)
        return tdm_mpi_err(NULL, MPI_ERR_TYPE, fn,
                           "%s is a predefined datatype (combiner MPI_COMBINER_NAMED)",
                           tdm_dtype_name(dt));
    if (c->nc && !want_large)
        return tdm_mpi_err(NULL, MPI_ERR_TYPE, fn,
                           "datatype %#x was made by a large-count constructor: use "
                           "MPI_Type_get_contents_c",
                           (unsigned)datatype);
    if ((MPI_Count)c->ni > max_i || (MPI_Count)c->na > max_a || (MPI_Count)c->nt > max_t ||
        (MPI_Count)c->nc > max_c)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                           "arrays too small: need %zu integers, %zu addresses, %zu large counts "
                           "and %zu datatypes",
                           c->ni, c->na, c->nc, c->nt);
    if ((c->ni && !ints) || (c->na && !aints) || (c->nt && !types) || (c->nc && !counts))
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "an output array is NULL");
    if (c->ni)
        memcpy(ints, c->ints, c->ni * sizeof(int));
    for (size_t i = 0; i < c->na; i++)
        aints[i] = (MPI_Aint)c->aints[i];
    for (size_t i = 0; i < c->nc; i++)
        counts[i] = (MPI_Count)c->counts[i];
    /* a derived type comes back as a new type the user frees (MPI-4.1 5.1.13), so that
     * freeing it leaves the original's handle, name and attributes alone; a predefined
     * one (f90 ones are predefined to the user) as itself */
    for (size_t i = 0; i < c->nt; i++) {
        tdm_dtype_t *t = tdm_dtype_get(c->types[i]), *n = NULL;
        if (!t || t->predefined || type_is_f90(t)) {
            types[i] = c->types[i];
            continue;
        }
        int rc = tdm_dtype_create_equiv(t, &n);
        if (!rc && (rc = tdm_dtype_register(n)) != 0)
            tdm_dtype_release(n);
        if (rc) {
            while (i-- > 0) /* the ones made before: nothing is left to the user */
                if (types[i] != c->types[i])
                    tdm_dtype_release(tdm_dtype_get(types[i]));
            return err_rc(fn, rc);
        }
        types[i] = n->handle;
    }
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
    return contents("MPI_Type_get_contents", datatype, 0, max_integers, max_addresses, 0,
                    max_datatypes, array_of_integers, array_of_addresses, NULL, array_of_datatypes);
}
TDM_WEAK(MPI_Type_get_contents)

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes,
                             int array_of_integers[], MPI_Aint array_of_addresses[],
                             MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]) {
    return contents("MPI_Type_get_contents_c", datatype, 1, max_integers, max_addresses,
                    max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
                    array_of_large_counts, array_of_datatypes);
}
TDM_WEAK(MPI_Type_get_contents_c)

/* ---- names ---- */

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name) {
    tdm_dtype_t *dt;
    GET_TYPE("MPI_Type_set_name", datatype, dt);
    TDM_CHECK_PTR("MPI_Type_set_name", NULL, type_name, "type_name");
    tdm_dtype_set_name(dt, type_name);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Type_set_name)

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen) {
    tdm_dtype_t *dt;
    GET_TYPE("MPI_Type_get_name", datatype, dt);
    TDM_CHECK_PTR("MPI_Type_get_name", NULL, type_name, "type_name");
    TDM_CHECK_PTR("MPI_Type_get_name", NULL, resultlen, "resultlen");
    const char *n = tdm_dtype_name(dt);
    size_t len = strlen(n);
    memcpy(type_name, n, len + 1);
    *resultlen = (int)len;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Type_get_name)

/* ---- attributes ---- */

static int attr_error(int rc, int keyval, const char *fn) {
    if (rc > 0)
        return tdm_mpi_err_code(NULL, rc, fn); /* the callback's own code */
    switch (rc) {
    case TDM_ATTR_EKEYVAL:
        return tdm_mpi_err(NULL, MPI_ERR_KEYVAL, fn,
                           "invalid keyval %#x (not a live datatype keyval)", (unsigned)keyval);
    case TDM_ATTR_ENOMEM:
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    default:
        return tdm_mpi_err(NULL, MPI_ERR_OTHER, fn,
                           "an attribute callback returned %d, not an MPI error code", rc);
    }
}

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state) {
    static const char fn[] = "MPI_Type_create_keyval";
    TDM_CHECK_INIT(fn);
    TDM_CHECK_PTR(fn, NULL, type_keyval, "type_keyval");
    int rc = tdm_attr_keyval_create(TDM_ATTR_TYPE, (tdm_attr_copy_fn_t *)type_copy_attr_fn,
                                    (tdm_attr_delete_fn_t *)type_delete_attr_fn, extra_state,
                                    TDM_ATTR_PTR, type_keyval);
    return rc ? attr_error(rc, 0, fn) : MPI_SUCCESS;
}
TDM_WEAK(MPI_Type_create_keyval)

int PMPI_Type_free_keyval(int *type_keyval) {
    static const char fn[] = "MPI_Type_free_keyval";
    TDM_CHECK_INIT(fn);
    TDM_CHECK_PTR(fn, NULL, type_keyval, "type_keyval");
    int rc = tdm_attr_keyval_free(TDM_ATTR_TYPE, *type_keyval);
    if (rc)
        return attr_error(rc, *type_keyval, fn);
    *type_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Type_free_keyval)

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val) {
    static const char fn[] = "MPI_Type_set_attr";
    tdm_dtype_t *dt;
    GET_TYPE(fn, datatype, dt);
    int rc = tdm_attr_set(TDM_ATTR_TYPE, (tdm_attr_list_t **)tdm_dtype_attrs(dt), datatype,
                          type_keyval, attribute_val, TDM_ATTR_PTR);
    return rc ? attr_error(rc, type_keyval, fn) : MPI_SUCCESS;
}
TDM_WEAK(MPI_Type_set_attr)

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag) {
    static const char fn[] = "MPI_Type_get_attr";
    tdm_dtype_t *dt;
    GET_TYPE(fn, datatype, dt);
    TDM_CHECK_PTR(fn, NULL, attribute_val, "attribute_val");
    TDM_CHECK_PTR(fn, NULL, flag, "flag");
    int rc = tdm_attr_get(TDM_ATTR_TYPE, (tdm_attr_list_t *const *)tdm_dtype_attrs(dt), type_keyval,
                          attribute_val, flag, TDM_ATTR_PTR);
    return rc ? attr_error(rc, type_keyval, fn) : MPI_SUCCESS;
}
TDM_WEAK(MPI_Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
    static const char fn[] = "MPI_Type_delete_attr";
    tdm_dtype_t *dt;
    GET_TYPE(fn, datatype, dt);
    int rc = tdm_attr_delete(TDM_ATTR_TYPE, (tdm_attr_list_t **)tdm_dtype_attrs(dt), datatype,
                             type_keyval);
    return rc ? attr_error(rc, type_keyval, fn) : MPI_SUCCESS;
}
TDM_WEAK(MPI_Type_delete_attr)

/* ---- Type_match_size ---- */

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype) {
    static const char fn[] = "MPI_Type_match_size";
    TDM_CHECK_INIT(fn);
    TDM_CHECK_PTR(fn, NULL, datatype, "datatype");
    /* MPICH's answers: the Fortran sized types */
    static const MPI_Datatype reals[] = {MPI_REAL2, MPI_REAL4, MPI_REAL8, MPI_REAL16};
    static const MPI_Datatype ints[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8,
                                        MPI_INTEGER16};
    static const MPI_Datatype cplx[] = {MPI_COMPLEX4, MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
    const MPI_Datatype *list;
    size_t n;
    switch (typeclass) {
    case MPI_TYPECLASS_REAL:
        list = reals;
        n = sizeof(reals) / sizeof(reals[0]);
        break;
    case MPI_TYPECLASS_INTEGER:
        list = ints;
        n = sizeof(ints) / sizeof(ints[0]);
        break;
    case MPI_TYPECLASS_COMPLEX:
        list = cplx;
        n = sizeof(cplx) / sizeof(cplx[0]);
        break;
    default:
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                           "invalid typeclass %d (MPI_TYPECLASS_REAL, _INTEGER or _COMPLEX)",
                           typeclass);
    }
    for (size_t i = 0; i < n; i++) {
        tdm_dtype_t *dt = tdm_dtype_get(list[i]);
        if (dt && (int)dt->size == size) {
            *datatype = list[i];
            return MPI_SUCCESS;
        }
    }
    return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "no predefined type of typeclass %d has size %d",
                       typeclass, size);
}
TDM_WEAK(MPI_Type_match_size)

/* ---- addresses ---- */

int PMPI_Get_address(const void *location, MPI_Aint *address) {
    TDM_CHECK_PTR("MPI_Get_address", NULL, address, "address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Get_address)

int PMPI_Address(void *location, MPI_Aint *address) {
    TDM_CHECK_PTR("MPI_Address", NULL, address, "address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Address)

/* MPI_Aint_add and MPI_Aint_diff are in abi.c (functions without an error code). */

/* ---- Pack / Unpack ---- */

/* The part of a pack (`packing`) or unpack that both representations share: `count`
 * items of dt, `item` bytes each packed, at *position of the packed buffer of `size`
 * bytes; `user` is the typed buffer. *bytes_p: the bytes to move. */
static int pack_window(const char *fn, tdm_comm_t *c, bool packing, MPI_Count count,
                       const tdm_dtype_t *dt, size_t item, const void *user, const void *packed,
                       MPI_Count size, MPI_Count position, size_t *bytes_p) {
    size_t bytes = (size_t)count * item;
    if (position < 0 || size < 0 || (MPI_Count)bytes > size - position)
        return tdm_mpi_err(c, MPI_ERR_TRUNCATE, fn,
                           "%zu bytes %s at position %lld of a %lld-byte buffer", bytes,
                           packing ? "do not fit" : "wanted", (long long)position, (long long)size);
    TDM_CHECK_BUF_NAMED(fn, c, user, packing ? "inbuf" : "outbuf", count, dt);
    if (bytes && !packed)
        return tdm_mpi_err(c, MPI_ERR_BUFFER, fn, "%s is NULL with %zu bytes to %s",
                           packing ? "outbuf" : "inbuf", bytes, packing ? "pack" : "unpack");
    *bytes_p = bytes;
    return MPI_SUCCESS;
}

/* MPI_Pack (`packing`) or MPI_Unpack: `count` items of datatype at `user`, to or from
 * *position of the packed buffer of `size` bytes. */
static int pack_native(const char *fn, bool packing, const void *user, MPI_Count count,
                       MPI_Datatype datatype, const void *packed, MPI_Count size,
                       MPI_Count *position, MPI_Comm comm) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    TDM_GET_COMM(fn, comm, c);
    if (count < 0)
        return tdm_mpi_err(c, MPI_ERR_COUNT, fn, "invalid %s %lld",
                           packing ? "incount" : "outcount", (long long)count);
    if (!position)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "position is NULL");
    TDM_GET_DTYPE(fn, c, datatype, dt);
    size_t bytes;
    int err =
        pack_window(fn, c, packing, count, dt, dt->size, user, packed, size, *position, &bytes);
    if (err)
        return err;
    if (packing)
        tdm_dtype_pack(user, (size_t)count, dt, 0, (char *)packed + *position, bytes);
    else
        tdm_dtype_unpack((void *)user, (size_t)count, dt, 0, (const char *)packed + *position,
                         bytes);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

/* The int forms' position and size are ints: each call works on an MPI_Count copy. */
#define PACK_FORMS(_s, _C, _D)                                                                     \
    int PMPI_Pack##_s(const void *inbuf, _C incount, MPI_Datatype datatype, void *outbuf,          \
                      _C outsize, _C *position, MPI_Comm comm) {                                   \
        MPI_Count pos = position ? *position : 0;                                                  \
        int err = pack_native("MPI_Pack" #_s, true, inbuf, incount, datatype, outbuf, outsize,     \
                              position ? &pos : NULL, comm);                                       \
        if (!err)                                                                                  \
            *position = (_C)pos;                                                                   \
        return err;                                                                                \
    }                                                                                              \
    TDM_WEAK(MPI_Pack##_s)                                                                         \
                                                                                                   \
    int PMPI_Unpack##_s(const void *inbuf, _C insize, _C *position, void *outbuf, _C outcount,     \
                        MPI_Datatype datatype, MPI_Comm comm) {                                    \
        MPI_Count pos = position ? *position : 0;                                                  \
        int err = pack_native("MPI_Unpack" #_s, false, outbuf, outcount, datatype, inbuf, insize,  \
                              position ? &pos : NULL, comm);                                       \
        if (!err)                                                                                  \
            *position = (_C)pos;                                                                   \
        return err;                                                                                \
    }                                                                                              \
    TDM_WEAK(MPI_Unpack##_s)                                                                       \
                                                                                                   \
    int PMPI_Pack_size##_s(_C incount, MPI_Datatype datatype, MPI_Comm comm, _C *size) {           \
        static const char fn[] = "MPI_Pack_size" #_s;                                              \
        MPI_Count sz;                                                                              \
        int err = pack_size_common(fn, incount, datatype, comm, size ? &sz : NULL);                \
        if (err)                                                                                   \
            return err;                                                                            \
        if (!LARGE(_C) && sz > INT_MAX)                                                            \
            return tdm_mpi_err(tdm_comm_get(comm), MPI_ERR_VALUE_TOO_LARGE, fn,                    \
                               "packed size %lld does not fit in an int (use MPI_Pack_size_c)",    \
                               (long long)sz);                                                     \
        *size = (_C)sz;                                                                            \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    TDM_WEAK(MPI_Pack_size##_s)

static int pack_size_common(const char *fn, MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                            MPI_Count *size) {
    tdm_comm_t *c;
    tdm_dtype_t *dt;
    TDM_GET_COMM(fn, comm, c);
    if (incount < 0)
        return tdm_mpi_err(c, MPI_ERR_COUNT, fn, "invalid incount %lld", (long long)incount);
    if (!size)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "size is NULL");
    TDM_GET_DTYPE(fn, c, datatype, dt);
    *size = incount * (MPI_Count)dt->size; /* the packed form is the bytes, nothing more */
    return MPI_SUCCESS;
}

TDM_MPI_COUNT_FORMS(PACK_FORMS)

/* ---- external32 ---- */

static int check_datarep(const char *fn, const char *datarep) {
    TDM_CHECK_PTR(fn, NULL, datarep, "datarep");
    if (strcmp(datarep, "external32") != 0)
        return tdm_mpi_err(NULL, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                           "unsupported data representation \"%s\" (only \"external32\")", datarep);
    return MPI_SUCCESS;
}

/* MPI_Pack_external (`packing`) or MPI_Unpack_external: as pack_native, in external32. */
static int pack_ext(const char *fn, bool packing, const char *datarep, const void *user,
                    MPI_Count count, MPI_Datatype datatype, const void *packed, MPI_Count size,
                    MPI_Count *position) {
    tdm_dtype_t *dt;
    TDM_CHECK_INIT(fn);
    int err = check_datarep(fn, datarep);
    if (err)
        return err;
    CHECK_COUNT_ARG(fn, count, packing ? "incount" : "outcount", MPI_ERR_COUNT);
    TDM_CHECK_PTR(fn, NULL, position, "position");
    TDM_GET_DTYPE(fn, NULL, datatype, dt);
    size_t bytes;
    if ((err = pack_window(fn, NULL, packing, count, dt, tdm_dtype_ext32_size(dt), user, packed,
                           size, *position, &bytes)))
        return err;
    int rc = packing ? tdm_dtype_pack_ext32(user, (size_t)count, dt, (char *)packed + *position)
                     : tdm_dtype_unpack_ext32((const char *)packed + *position, (void *)user,
                                              (size_t)count, dt);
    if (rc)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory converting %zu bytes", bytes);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

static int pack_ext_size(const char *fn, const char *datarep, MPI_Count incount,
                         MPI_Datatype datatype, MPI_Count *size) {
    tdm_dtype_t *dt;
    TDM_CHECK_INIT(fn);
    int err = check_datarep(fn, datarep);
    if (err)
        return err;
    CHECK_COUNT_ARG(fn, incount, "incount", MPI_ERR_COUNT);
    TDM_CHECK_PTR(fn, NULL, size, "size");
    TDM_GET_DTYPE(fn, NULL, datatype, dt);
    *size = incount * (MPI_Count)tdm_dtype_ext32_size(dt);
    return MPI_SUCCESS;
}

/* Positions and sizes are MPI_Aint in both forms (MPI_Count in the _c one: the same type). */
#define PACK_EXTERNAL_FORMS(_s, _C, _D)                                                            \
    int PMPI_Pack_external##_s(const char *datarep, const void *inbuf, _C incount,                 \
                               MPI_Datatype datatype, void *outbuf, MPI_Aint outsize,              \
                               MPI_Aint *position) {                                               \
        return pack_ext("MPI_Pack_external" #_s, true, datarep, inbuf, incount, datatype, outbuf,  \
                        outsize, position);                                                        \
    }                                                                                              \
    TDM_WEAK(MPI_Pack_external##_s)                                                                \
                                                                                                   \
    int PMPI_Unpack_external##_s(const char datarep[], const void *inbuf, MPI_Aint insize,         \
                                 MPI_Aint *position, void *outbuf, _C outcount,                    \
                                 MPI_Datatype datatype) {                                          \
        return pack_ext("MPI_Unpack_external" #_s, false, datarep, outbuf, outcount, datatype,     \
                        inbuf, insize, position);                                                  \
    }                                                                                              \
    TDM_WEAK(MPI_Unpack_external##_s)                                                              \
                                                                                                   \
    int PMPI_Pack_external_size##_s(const char *datarep, _C incount, MPI_Datatype datatype,        \
                                    MPI_Aint *size) {                                              \
        return pack_ext_size("MPI_Pack_external_size" #_s, datarep, incount, datatype, size);      \
    }                                                                                              \
    TDM_WEAK(MPI_Pack_external_size##_s)
TDM_MPI_COUNT_FORMS(PACK_EXTERNAL_FORMS)
