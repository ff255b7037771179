/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attribute caching for every object kind that has attributes: communicators,
 * datatypes and windows (MPI-4.1 §7.7). One implementation, used by
 * src/mpi/attr.c (communicators, MPI-1 Attr_*), the datatype bindings and,
 * later, the window bindings.
 *
 * Keyvals
 *   A keyval belongs to one object kind; its handle encodes the kind the way
 *   MPICH does (0x64400001 = MPI_TAG_UB is a builtin comm keyval):
 *       builtin  0x64000000 | kind << 22 | n   (predefined attributes)
 *       user     0xa4000000 | kind << 22 | index   (index < 2^22)
 *   with kind 1 = communicator, 3 = datatype, 8 = window. A keyval handle of
 *   one kind passed for another kind is invalid (MPI_ERR_KEYVAL).
 *   A freed keyval stays alive while attributes still use it (MPI-4.1 §7.7.2:
 *   they can still be read and deleted with it, are copied on dup, and their
 *   callbacks run); only setting new values with it is refused. Its slot is
 *   reused only once nothing refers to it.
 *
 * Attribute lists
 *   Each object holds a `tdm_attr_list_t *` (NULL = no attributes; no memory
 *   is spent on objects without attributes) in its own `ext` area and passes
 *   its address here. The list remembers the order in which attributes were
 *   set; replacing a value keeps its position.
 *
 * Callbacks
 *   Copy and delete callbacks get the object's handle as an int (in the MPICH
 *   ABI MPI_Comm, MPI_Datatype and MPI_Win are all int), so one signature fits
 *   the comm, type, win and MPI-1 (MPI_Copy_function) variants. A NULL copy
 *   callback is MPI_*_NULL_COPY_FN (do not copy), a NULL delete callback is
 *   MPI_*_NULL_DELETE_FN (nothing to do); MPI_*_DUP_FN is the real function
 *   MPIR_Dup_fn exported by src/mpi/attr.c. Callbacks run without any attribute
 *   lock held, so they may call attribute functions themselves (on other keyvals
 *   or objects, as the standard allows).
 *
 * Return values
 *   0 on success; a negative TDM_ATTR_E* for an error found here; a positive
 *   value is the non-MPI_SUCCESS code a user callback returned, which the
 *   binding returns to the user as is (the standard: "the error code returned
 *   by the callback is returned by the MPI call").
 *
 * Threads (MPI_THREAD_MULTIPLE): any call from any thread. The keyval table
 * has its lock and lock-free lookups; every object's list is under one list lock
 * (attribute calls are rare; the lock is not held while a callback runs). Two
 * threads changing the same keyval of the same object at once is the user's race
 * (both may see and delete the old value); different keyvals of one object are
 * safe.
 */
#ifndef TDM_COMM_ATTR_H
#define TDM_COMM_ATTR_H

#include <stdbool.h>

typedef enum tdm_attr_kind {
    TDM_ATTR_COMM = 1,
    TDM_ATTR_TYPE = 3,
    TDM_ATTR_WIN = 8,
} tdm_attr_kind_t;

#define TDM_ATTR_KEYVAL_BUILTIN 0x64000000u
#define TDM_ATTR_KEYVAL_USER 0xa4000000u
#define TDM_ATTR_KEYVAL_KIND_SHIFT 22
#define TDM_ATTR_KEYVAL_INDEX_MASK 0x003fffffu

enum {
    TDM_ATTR_EKEYVAL = -1, /* not a live keyval of this kind (or a builtin one where not allowed) */
    TDM_ATTR_ENOMEM = -2,
    TDM_ATTR_ECALLBACK = -3, /* a callback returned a negative (not an MPI) code */
};

/* How the value was stored, so an integer set from Fortran (MPI_ATTR_PUT) and
 * read from C, or the reverse, is converted as the standard §19.3.7 says.
 * C bindings always use TDM_ATTR_PTR. */
typedef enum tdm_attr_lang {
    TDM_ATTR_PTR = 0,   /* C: the value is a void * */
    TDM_ATTR_FINT = 1,  /* Fortran INTEGER (MPI-1 Fortran callbacks) */
    TDM_ATTR_FAINT = 2, /* Fortran INTEGER(KIND=MPI_ADDRESS_KIND) */
} tdm_attr_lang_t;

/* copy(old object handle, keyval, extra_state, value in, &value out, &flag):
 * return MPI_SUCCESS and set *flag = 0 (do not copy) or 1 (copy value out). */
typedef int tdm_attr_copy_fn_t(int obj, int keyval, void *extra_state, void *val_in,
                               void *val_out_p, int *flag);
/* delete(object handle, keyval, value, extra_state): MPI_SUCCESS or an error code. */
typedef int tdm_attr_delete_fn_t(int obj, int keyval, void *val, void *extra_state);

typedef struct tdm_attr_list tdm_attr_list_t; /* opaque */

/* ---- keyvals ---- */

/* New keyval of `kind` with callbacks (either may be NULL, see above). */
int tdm_attr_keyval_create(tdm_attr_kind_t kind, tdm_attr_copy_fn_t *copy,
                           tdm_attr_delete_fn_t *del, void *extra_state, tdm_attr_lang_t lang,
                           int *keyval_p);
/* The user frees a keyval: it becomes invalid for setting values; attributes
 * still using it can be read and deleted with it, and their callbacks keep
 * working. Builtin keyvals cannot be freed (TDM_ATTR_EKEYVAL). */
int tdm_attr_keyval_free(tdm_attr_kind_t kind, int keyval);
/* Is `keyval` a live user keyval of `kind`? */
bool tdm_attr_keyval_valid(tdm_attr_kind_t kind, int keyval);
/* Is `keyval` a builtin keyval of `kind` (MPI_TAG_UB, MPI_WIN_BASE ...)?
 * Builtin attributes are answered by the owner of the object, not stored here. */
static inline bool tdm_attr_keyval_builtin(tdm_attr_kind_t kind, int keyval) {
    return ((unsigned)keyval & ~TDM_ATTR_KEYVAL_INDEX_MASK) ==
           (TDM_ATTR_KEYVAL_BUILTIN | ((unsigned)kind << TDM_ATTR_KEYVAL_KIND_SHIFT));
}

/* ---- one object's attributes ---- */

/* Set (or replace) the value for `keyval`. Replacing calls the delete callback
 * on the old value first; if it fails, nothing changes and its code returns. */
int tdm_attr_set(tdm_attr_kind_t kind, tdm_attr_list_t **list, int obj, int keyval, void *val,
                 tdm_attr_lang_t lang);
/* Value for `keyval`: *flag_p = 1 and *val_p set if present, else *flag_p = 0.
 * `lang` is how the caller wants the value (C callers: TDM_ATTR_PTR). */
int tdm_attr_get(tdm_attr_kind_t kind, tdm_attr_list_t *const *list, int keyval, void *val_p,
                 int *flag_p, tdm_attr_lang_t lang);
/* Delete the attribute (delete callback runs; on its failure the attribute
 * stays). TDM_ATTR_EKEYVAL if the keyval does not exist (a freed one still in use
 * exists); deleting a key that is not set is not an error (MPICH behaviour). */
int tdm_attr_delete(tdm_attr_kind_t kind, tdm_attr_list_t **list, int obj, int keyval);

/* Object duplication (MPI_Comm_dup, MPI_Type_dup, MPI_Comm_idup): run each
 * attribute's copy callback in the order they were set and build *dst (which
 * must be NULL/empty) from the ones it asks to copy. On a callback failure the
 * attributes already copied to *dst are deleted again and the code returns. */
int tdm_attr_copy_all(tdm_attr_kind_t kind, tdm_attr_list_t *const *src, int old_obj, int new_obj,
                      tdm_attr_list_t **dst);
/* Object free (MPI_Comm_free, MPI_Type_free, MPI_Win_free, and MPI_Finalize
 * for MPI_COMM_SELF first, then MPI_COMM_WORLD): delete every attribute, in
 * the reverse of the order in which they were set (what MPI-4.1 §11.2.4
 * requires for MPI_COMM_SELF; used for every object so the order is one rule).
 * Stops at the first failing callback and returns its code, leaving the
 * remaining attributes in place so the free can fail cleanly; on success *list
 * is NULL afterwards. */
int tdm_attr_delete_all(tdm_attr_kind_t kind, tdm_attr_list_t **list, int obj);
/* Drop a list without running any callback (library shutdown, objects the
 * user never freed). Safe before and after tdm_attr_fini. */
void tdm_attr_list_drop(tdm_attr_list_t **list);
/* Number of attributes set (tests, debugging). */
int tdm_attr_count(tdm_attr_list_t *const *list);

/* Library shutdown: drop keyval table memory (called by tdm_comm_fini; lists
 * still held by objects must then only be dropped, see tdm_attr_list_drop). */
void tdm_attr_fini(void);

#endif
