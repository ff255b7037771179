/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicator attributes: keyvals, set/get/delete, the predefined attributes
 * of MPI-4.1 §11.2 (MPI_TAG_UB ...), and the deprecated MPI-1 names
 * (MPI_Keyval_create, MPI_Attr_put ...) which are the same functions.
 * The machinery is src/comm/attr.c, shared with datatypes and windows.
 */
#include "bind.h"
#include "../comm/attr.h"

int tdm_mpi_last_used_code(void);

_Static_assert(MPI_KEYVAL_INVALID == 0x24000000, "MPICH's MPI_KEYVAL_INVALID");
_Static_assert(((unsigned)MPI_TAG_UB & ~TDM_ATTR_KEYVAL_INDEX_MASK) ==
                   (TDM_ATTR_KEYVAL_BUILTIN | (TDM_ATTR_COMM << TDM_ATTR_KEYVAL_KIND_SHIFT)),
               "builtin comm keyvals are encoded as attr.h says");
_Static_assert(((unsigned)MPI_WIN_BASE & ~TDM_ATTR_KEYVAL_INDEX_MASK) ==
                   (TDM_ATTR_KEYVAL_BUILTIN | (TDM_ATTR_WIN << TDM_ATTR_KEYVAL_KIND_SHIFT)),
               "builtin win keyvals are encoded as attr.h says");

/* Values of the predefined attributes. The standard hands out a pointer to
 * each, so they live here for the whole run. */
static int attr_tag_ub = TDM_TAG_UB;
static int attr_host = MPI_PROC_NULL; /* no host process */
static int attr_io = MPI_ANY_SOURCE;  /* every process can do I/O */
static int attr_wtime_is_global = 0;  /* clocks of different nodes are not synchronised */
static int attr_universe_size;
static int attr_appnum = 0; /* one application (no MPMD launch yet) */
static int attr_lastusedcode;

/* Predefined attribute: *val_p gets a pointer to its value; false if unknown. */
static bool builtin_get(int keyval, void **val_p) {
    switch (keyval) {
    case MPI_TAG_UB:
        *val_p = &attr_tag_ub;
        return true;
    case MPI_HOST:
        *val_p = &attr_host;
        return true;
    case MPI_IO:
        *val_p = &attr_io;
        return true;
    case MPI_WTIME_IS_GLOBAL:
        *val_p = &attr_wtime_is_global;
        return true;
    case MPI_UNIVERSE_SIZE:
        /* no spawning: the universe is the job */
        attr_universe_size = tdm_mpi.boot.size;
        *val_p = &attr_universe_size;
        return true;
    case MPI_APPNUM:
        *val_p = &attr_appnum;
        return true;
    case MPI_LASTUSEDCODE:
        attr_lastusedcode = tdm_mpi_last_used_code();
        *val_p = &attr_lastusedcode;
        return true;
    default:
        return false;
    }
}

/* Map an attr.c result to an MPI error code for `fn`. */
static int attr_error(tdm_comm_t *c, int rc, int keyval, const char *fn) {
    if (rc > 0)
        return tdm_mpi_err_code(c, rc, fn); /* a callback's own code */
    switch (rc) {
    case TDM_ATTR_EKEYVAL:
        return tdm_mpi_err(c, MPI_ERR_KEYVAL, fn,
                           "invalid keyval %#x (not a communicator keyval, or freed and no "
                           "longer usable for this)",
                           (unsigned)keyval);
    case TDM_ATTR_ENOMEM:
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory");
    default:
        return tdm_mpi_err(c, MPI_ERR_OTHER, fn,
                           "an attribute callback returned %d, not an MPI error code", rc);
    }
}

int tdm_mpi_keyval_create(const char *fn, tdm_attr_kind_t kind, tdm_attr_copy_fn_t *copy,
                          tdm_attr_delete_fn_t *del, void *extra_state, int *keyval,
                          const char *name, tdm_mpi_attr_fail_fn_t *fail) {
    TDM_CHECK_INIT(fn);
    TDM_CHECK_PTR(fn, NULL, keyval, name);
    int rc = tdm_attr_keyval_create(kind, copy, del, extra_state, TDM_ATTR_PTR, keyval);
    return rc ? fail(rc, 0, fn) : MPI_SUCCESS;
}

int tdm_mpi_keyval_free(const char *fn, tdm_attr_kind_t kind, int *keyval, const char *name,
                        tdm_mpi_attr_fail_fn_t *fail) {
    TDM_CHECK_INIT(fn);
    TDM_CHECK_PTR(fn, NULL, keyval, name);
    if (tdm_attr_keyval_builtin(kind, *keyval))
        return tdm_mpi_err(NULL, MPI_ERR_KEYVAL, fn, "predefined keyval %#x cannot be freed",
                           (unsigned)*keyval);
    int rc = tdm_attr_keyval_free(kind, *keyval);
    if (rc)
        return fail(rc, *keyval, fn);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* A keyval's error: no object, so the World Model's handler. */
static int keyval_error(int rc, int keyval, const char *fn) {
    return attr_error(NULL, rc, keyval, fn);
}

static int keyval_create(const char *fn, tdm_attr_copy_fn_t *copy, tdm_attr_delete_fn_t *del,
                         int *keyval, void *extra_state) {
    return tdm_mpi_keyval_create(fn, TDM_ATTR_COMM, copy, del, extra_state, keyval, "keyval",
                                 keyval_error);
}

static int keyval_free(const char *fn, int *keyval) {
    return tdm_mpi_keyval_free(fn, TDM_ATTR_COMM, keyval, "keyval", keyval_error);
}

static int set_attr(const char *fn, MPI_Comm comm, int keyval, void *val) {
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    if (tdm_attr_keyval_builtin(TDM_ATTR_COMM, keyval))
        return tdm_mpi_err(c, MPI_ERR_KEYVAL, fn, "predefined attribute %#x cannot be set",
                           (unsigned)keyval);
    int rc = tdm_attr_set(TDM_ATTR_COMM, &c->attrs, c->handle, keyval, val, TDM_ATTR_PTR);
    return rc ? attr_error(c, rc, keyval, fn) : MPI_SUCCESS;
}

static int get_attr(const char *fn, MPI_Comm comm, int keyval, void *val, int *flag) {
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    if (!val || !flag)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "%s is NULL", val ? "flag" : "attribute_val");
    if (tdm_attr_keyval_builtin(TDM_ATTR_COMM, keyval)) {
        void *p;
        if (!builtin_get(keyval, &p))
            return tdm_mpi_err(c, MPI_ERR_KEYVAL, fn, "invalid keyval %#x", (unsigned)keyval);
        *(void **)val = p;
        *flag = 1;
        return MPI_SUCCESS;
    }
    int rc = tdm_attr_get(TDM_ATTR_COMM, &c->attrs, keyval, val, flag, TDM_ATTR_PTR);
    return rc ? attr_error(c, rc, keyval, fn) : MPI_SUCCESS;
}

static int delete_attr(const char *fn, MPI_Comm comm, int keyval) {
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    if (tdm_attr_keyval_builtin(TDM_ATTR_COMM, keyval))
        return tdm_mpi_err(c, MPI_ERR_KEYVAL, fn, "predefined attribute %#x cannot be deleted",
                           (unsigned)keyval);
    int rc = tdm_attr_delete(TDM_ATTR_COMM, &c->attrs, c->handle, keyval);
    return rc ? attr_error(c, rc, keyval, fn) : MPI_SUCCESS;
}

/* The communicator attribute calls under one generation's names: MPI-2's, and MPI-1's
 * (deprecated, same behaviour). */
#define COMM_ATTR_CALLS(_create, _Copy, _Delete, _free, _set, _get, _delete)                       \
    int P##_create(_Copy *copy_fn, _Delete *delete_fn, int *keyval, void *extra_state) {           \
        return keyval_create(#_create, (tdm_attr_copy_fn_t *)copy_fn,                              \
                             (tdm_attr_delete_fn_t *)delete_fn, keyval, extra_state);              \
    }                                                                                              \
    TDM_WEAK(_create)                                                                              \
    int P##_free(int *keyval) {                                                                    \
        return keyval_free(#_free, keyval);                                                        \
    }                                                                                              \
    TDM_WEAK(_free)                                                                                \
    int P##_set(MPI_Comm comm, int keyval, void *attribute_val) {                                  \
        return set_attr(#_set, comm, keyval, attribute_val);                                       \
    }                                                                                              \
    TDM_WEAK(_set)                                                                                 \
    int P##_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag) {                       \
        return get_attr(#_get, comm, keyval, attribute_val, flag);                                 \
    }                                                                                              \
    TDM_WEAK(_get)                                                                                 \
    int P##_delete(MPI_Comm comm, int keyval) {                                                    \
        return delete_attr(#_delete, comm, keyval);                                                \
    }                                                                                              \
    TDM_WEAK(_delete)

COMM_ATTR_CALLS(MPI_Comm_create_keyval, MPI_Comm_copy_attr_function, MPI_Comm_delete_attr_function,
                MPI_Comm_free_keyval, MPI_Comm_set_attr, MPI_Comm_get_attr, MPI_Comm_delete_attr)
COMM_ATTR_CALLS(MPI_Keyval_create, MPI_Copy_function, MPI_Delete_function, MPI_Keyval_free,
                MPI_Attr_put, MPI_Attr_get, MPI_Attr_delete)
