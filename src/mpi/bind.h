/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every binding in src/mpi/ uses: the library's run state, handle lookup,
 * argument checks that report through the error handler, and the weak-alias
 * macro. PMPI_x is the real symbol; MPI_x is a weak alias made by TDM_WEAK.
 */
#ifndef TDM_MPI_BIND_H
#define TDM_MPI_BIND_H

#include "mpi.h"
#include "../base/abi.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../boot/boot.h"
#include "../comm/attr.h"
#include "../comm/comm.h"
#include "../dtype/dtype.h"
#include "../p2p/p2p.h"

#include <stdbool.h>

/* An attribute alias, not #pragma weak: clang gives a pragma alias the
 * -fvisibility=hidden default and would not export MPI_x. */
#define TDM_WEAK(_name)                                                                            \
    extern __typeof__(P##_name) _name __attribute__((weak, alias(TDM_STR(P##_name))));

/* Define a family's bindings twice through _M(_sfx, _Count, _Displ): the int
 * forms (MPI_X: int counts and displacements) and the MPI-4 large-count ones
 * (MPI_X_c: MPI_Count counts, MPI_Aint displacements), which share every
 * check and call below them (taking MPI_Count). */
#define TDM_MPI_COUNT_FORMS(_M) _M(, int, int) _M(_c, MPI_Count, MPI_Aint)

/* A binding that reads one property of an object, MPI_x(handle, *_out): the handle looked
 * up into `_var` by `_GET(fn, handle, _var)`, a NULL `_out` refused on `_errobj`'s handler
 * (NULL: the World Model's), then `*_out = _value`. */
#define TDM_MPI_PROPERTY(_name, _htype, _vtype, _var, _GET, _errobj, _otype, _out, _value)         \
    int P##_name(_htype handle, _otype *_out) {                                                    \
        _vtype *_var;                                                                              \
        _GET(#_name, handle, _var);                                                                \
        TDM_CHECK_PTR(#_name, _errobj, _out, #_out);                                               \
        *(_out) = (_value);                                                                        \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    TDM_WEAK(_name)

/* The library has users: the World Model (MPI_Init to MPI_Finalize) and every open
 * session. The first user sets everything up, the last one tears it down but for
 * the transport (init.c). */
typedef struct tdm_mpi_state {
    int initialized; /* MPI_Init done (stays set after MPI_Finalize, as MPI_Initialized says) */
    int finalized;   /* MPI_Finalize done */
    int users;       /* the World Model while initialised, plus the open sessions */
    int transport;   /* boot, shared memory and the p2p engine are up (once per process) */
    int thread_level;
    unsigned long main_thread;
    tdm_boot_info_t boot;
} tdm_mpi_state_t;

extern tdm_mpi_state_t tdm_mpi;

/* A new user (MPI_Init, MPI_Session_init): sets the library up when it has none.
 * A failure to set up is fatal (as MPI_Init's always was). */
void tdm_mpi_users_add(void);
/* A user is gone; the last one tears the library down (init.c). */
void tdm_mpi_users_drop(void);
/* The thread level a user asking for `required` gets: at most TANDEM_THREAD_LEVEL. Granting
 * MPI_THREAD_MULTIPLE raises tdm_threaded (base/lock.h), before the grant is returned.
 * Call after tdm_mpi_users_add (the tunables are read then). */
int tdm_mpi_thread_grant(int required);
/* Why MPI calls cannot be made now: "before MPI_Init or MPI_Session_init", ... */
const char *tdm_mpi_state_why(void);

/* ---- errors (errors.c) ---- */

/* The MPI error class of an argument error that src/comm found in a creation. */
static inline int tdm_mpi_comm_bad_class(int bad) {
    switch (bad) {
    case TDM_COMM_BAD_ARG:
        return MPI_ERR_ARG;
    case TDM_COMM_BAD_RANK:
        return MPI_ERR_RANK;
    case TDM_COMM_BAD_GROUP:
        return MPI_ERR_GROUP;
    case TDM_COMM_BAD_COMM:
        return MPI_ERR_COMM;
    case TDM_COMM_BAD_TAG:
        return MPI_ERR_TAG;
    default:
        return MPI_ERR_OTHER;
    }
}

/* Report an error of class `errclass` detected in `fn` through the error handler
 * of `comm` (NULL: MPI_COMM_WORLD's while the World Model is initialised, else the
 * default, MPI_ERRORS_ARE_FATAL).
 * The message (printf format) names the argument; the rank is added here.
 * Returns the error code the binding must return. */
int tdm_mpi_err(tdm_comm_t *comm, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same, for a code already made (e.g. from a request's status). */
int tdm_mpi_err_code(tdm_comm_t *comm, int code, const char *fn);
/* Report an error through the error handler `eh` of an object that is not a
 * communicator: a session, or a communicator still being created (handle
 * MPI_COMM_NULL). `what` names the object in the message of a fatal handler. */
int tdm_mpi_err_eh(int eh, int handle, const char *what, int errclass, const char *fn,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* An MPI function that Tandem does not implement yet. */
int tdm_mpi_unsupported(MPI_Comm comm, const char *fn);
/* Internal result code -> MPI error class. */
int tdm_mpi_class_of(tdm_rc_t rc);
/* Take the job down after a fatal error: log `why`, report to mpirun, exit with `code`. */
_Noreturn void tdm_mpi_abort_job(int code, const char *why);
/* The same for MPI_Abort (mpirun says the program called it). */
_Noreturn void tdm_mpi_abort_call(int code, const char *why);

/* ---- error handlers (errors.c) ---- */

/* The object kinds an error handler is made for (MPI_<Kind>_create_errhandler). */
enum { TDM_ERRH_COMM = 1, TDM_ERRH_SESSION = 2, TDM_ERRH_WIN = 3 };
/* A predefined handler or a live one made for `kind`? */
bool tdm_mpi_errh_valid(MPI_Errhandler eh, int kind);
/* An object's reference to a handler (no-ops on predefined ones). */
void tdm_mpi_errh_retain(MPI_Errhandler eh);
void tdm_mpi_errh_release(MPI_Errhandler eh);

/* ---- keyvals (attr.c) ---- */

/* How a kind of object words an error of src/comm's attributes (a callback's code,
 * an unknown keyval, no memory) in call `fn`. */
typedef int tdm_mpi_attr_fail_fn_t(int rc, int keyval, const char *fn);
/* MPI_<Kind>_create_keyval and MPI_<Kind>_free_keyval of keyval kind `kind` (TDM_ATTR_*):
 * `keyval` is the argument named `name`; errors on the World Model's handler. */
int tdm_mpi_keyval_create(const char *fn, tdm_attr_kind_t kind, tdm_attr_copy_fn_t *copy,
                          tdm_attr_delete_fn_t *del, void *extra_state, int *keyval,
                          const char *name, tdm_mpi_attr_fail_fn_t *fail);
int tdm_mpi_keyval_free(const char *fn, tdm_attr_kind_t kind, int *keyval, const char *name,
                        tdm_mpi_attr_fail_fn_t *fail);

/* ---- sessions (session.c) ---- */

typedef struct tdm_mpi_session {
    int handle;       /* 0xb8000000 | index (MPICH's direct session kind) */
    uint32_t serial;  /* the origin of the objects derived from it (comm.h), never 0 */
    int errhandler;   /* the session holds a reference */
    int thread_level; /* provided: what the "thread_level" hint asked, at most SERIALIZED */
} tdm_mpi_session_t;

/* The open session a handle names, or NULL. */
tdm_mpi_session_t *tdm_mpi_session_get(MPI_Session handle);
/* Is the origin `serial` still open (0: the World Model)? */
bool tdm_mpi_origin_open(uint32_t serial);
/* Report an error on session s. */
int tdm_mpi_err_session(const tdm_mpi_session_t *s, int errclass, const char *fn, const char *fmt,
                        ...) __attribute__((format(printf, 4, 5)));

/* ---- requests (request.c) ---- */

#define TDM_REQ_HANDLE_BASE 0xac000000u
static inline MPI_Request tdm_req_handle(const tdm_req_t *r) {
    return (MPI_Request)(TDM_REQ_HANDLE_BASE | tdm_req_index(r));
}
/* The request a handle names, or NULL. */
tdm_req_t *tdm_mpi_req_get(MPI_Request h);
/* Status of a completed request into the user's status (may be IGNORE). */
void tdm_mpi_status_set(MPI_Status *st, const tdm_status_t *s);

/* The empty status (MPI-4.1 3.7.3) and the status of a receive from MPI_PROC_NULL.
 * Neither writes MPI_ERROR: a call that completes one request leaves it alone, and
 * the ones that complete several set it only when they return MPI_ERR_IN_STATUS
 * (MPI-4.1 3.2.5), as MPICH does. */
static inline void tdm_mpi_status_nothing(MPI_Status *st, int source) {
    if (st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = source;
        st->MPI_TAG = MPI_ANY_TAG;
        st->count_lo = 0;
        st->count_hi_and_cancelled = 0;
    }
}
static inline void tdm_mpi_status_empty(MPI_Status *st) {
    tdm_mpi_status_nothing(st, MPI_ANY_SOURCE);
}
static inline void tdm_mpi_status_procnull(MPI_Status *st) {
    tdm_mpi_status_nothing(st, MPI_PROC_NULL);
}
/* Bytes in a status (count_lo + 31 bits of count_hi_and_cancelled). */
static inline MPI_Count tdm_mpi_status_bytes(const MPI_Status *st) {
    return (MPI_Count)(unsigned)st->count_lo |
           ((MPI_Count)((unsigned)st->count_hi_and_cancelled >> 1) << 32);
}
static inline void tdm_mpi_status_set_bytes(MPI_Status *st, MPI_Count bytes) {
    st->count_lo = (int)(unsigned)(bytes & 0xffffffff);
    st->count_hi_and_cancelled =
        (int)(((unsigned)(bytes >> 32) << 1) | ((unsigned)st->count_hi_and_cancelled & 1));
}

/* ---- buffered sends (buffer.c) ---- */
int tdm_mpi_bsend_start(const void *buf, MPI_Count count, tdm_dtype_t *dt, int dst_world,
                        int self_rank, int tag, tdm_comm_t *comm, bool blocking, tdm_req_t **req_p,
                        const char *fn);

#include "check.h"

#endif
