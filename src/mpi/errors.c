/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error classes, codes, strings and handlers.
 *
 * A returned error code is its class in the low 7 bits; when the library has a
 * detailed message for it, bits 7..29 hold the message's sequence number. The last
 * DETAIL_SLOTS messages are kept in a ring, each with its number, so
 * MPI_Error_string gives the detail (which call, argument, rank) while it is
 * there and the class's text once it has been overwritten (never another error's
 * message), and MPI_Error_class gives the class. Classes and codes added by the
 * user have bit 30 set and index a table. Built-in classes are below 128 (MPICH's
 * values).
 *
 * The tables of user classes, codes and error handlers live as long as the process:
 * MPI_Error_class, MPI_Error_string, MPI_Errhandler_free and
 * MPI_Session_create_errhandler may be called when MPI is not initialised
 * (MPI-4.1 §11.4.1), on codes and handlers made while it was.
 */
#include "bind.h"
#include "win.h"
#include "../base/htab.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DETAIL_SLOTS 256
#define DYN_BIT 0x40000000
#define ERRH_USER_BASE 0x94000000u

typedef struct {
    int errclass;
    const char *text;
} class_text_t;

static const class_text_t class_texts[] = {
    {MPI_SUCCESS, "no error"},
    {MPI_ERR_BUFFER, "invalid buffer pointer"},
    {MPI_ERR_COUNT, "invalid count argument"},
    {MPI_ERR_TYPE, "invalid datatype"},
    {MPI_ERR_TAG, "invalid tag"},
    {MPI_ERR_COMM, "invalid communicator"},
    {MPI_ERR_RANK, "invalid rank"},
    {MPI_ERR_ROOT, "invalid root"},
    {MPI_ERR_GROUP, "invalid group"},
    {MPI_ERR_OP, "invalid operation"},
    {MPI_ERR_TOPOLOGY, "invalid topology"},
    {MPI_ERR_DIMS, "invalid dimension argument"},
    {MPI_ERR_ARG, "invalid argument of some other kind"},
    {MPI_ERR_UNKNOWN, "unknown error"},
    {MPI_ERR_TRUNCATE, "message truncated"},
    {MPI_ERR_OTHER, "known error not in this list"},
    {MPI_ERR_INTERN, "internal error"},
    {MPI_ERR_IN_STATUS, "error code is in status"},
    {MPI_ERR_PENDING, "pending request"},
    {MPI_ERR_REQUEST, "invalid request"},
    {MPI_ERR_ACCESS, "permission denied"},
    {MPI_ERR_AMODE, "invalid access mode"},
    {MPI_ERR_BAD_FILE, "invalid file name"},
    {MPI_ERR_CONVERSION, "error in data conversion"},
    {MPI_ERR_DUP_DATAREP, "data representation already defined"},
    {MPI_ERR_FILE_EXISTS, "file exists"},
    {MPI_ERR_FILE_IN_USE, "file in use"},
    {MPI_ERR_FILE, "invalid file handle"},
    {MPI_ERR_INFO, "invalid info object"},
    {MPI_ERR_INFO_KEY, "info key too long"},
    {MPI_ERR_INFO_VALUE, "info value too long"},
    {MPI_ERR_INFO_NOKEY, "info key not defined"},
    {MPI_ERR_IO, "i/o error"},
    {MPI_ERR_NAME, "invalid service name"},
    {MPI_ERR_NO_MEM, "out of memory"},
    {MPI_ERR_NOT_SAME, "arguments not identical across processes"},
    {MPI_ERR_NO_SPACE, "no space left"},
    {MPI_ERR_NO_SUCH_FILE, "no such file"},
    {MPI_ERR_PORT, "invalid port name"},
    {MPI_ERR_QUOTA, "quota exceeded"},
    {MPI_ERR_READ_ONLY, "read-only file or file system"},
    {MPI_ERR_SERVICE, "invalid service"},
    {MPI_ERR_SPAWN, "error spawning processes"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "unsupported data representation"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "operation not supported"},
    {MPI_ERR_WIN, "invalid window"},
    {MPI_ERR_BASE, "invalid base address"},
    {MPI_ERR_LOCKTYPE, "invalid lock type"},
    {MPI_ERR_KEYVAL, "invalid keyval"},
    {MPI_ERR_RMA_CONFLICT, "conflicting accesses to window"},
    {MPI_ERR_RMA_SYNC, "wrong synchronization of rma calls"},
    {MPI_ERR_SIZE, "invalid size"},
    {MPI_ERR_DISP, "invalid displacement"},
    {MPI_ERR_ASSERT, "invalid assert"},
    {MPI_ERR_RMA_RANGE, "target memory outside the window"},
    {MPI_ERR_RMA_ATTACH, "memory cannot be attached"},
    {MPI_ERR_RMA_SHARED, "memory cannot be shared"},
    {MPI_ERR_RMA_FLAVOR, "wrong window flavor"},
    {MPI_T_ERR_MEMORY, "mpi_t: out of memory"},
    {MPI_T_ERR_NOT_INITIALIZED, "mpi_t: interface not initialized"},
    {MPI_T_ERR_CANNOT_INIT, "mpi_t: interface cannot be initialized"},
    {MPI_T_ERR_INVALID_INDEX, "mpi_t: invalid index"},
    {MPI_T_ERR_INVALID_ITEM, "mpi_t: invalid item"},
    {MPI_T_ERR_INVALID_HANDLE, "mpi_t: invalid handle"},
    {MPI_T_ERR_OUT_OF_HANDLES, "mpi_t: out of handles"},
    {MPI_T_ERR_OUT_OF_SESSIONS, "mpi_t: out of sessions"},
    {MPI_T_ERR_INVALID_SESSION, "mpi_t: invalid session"},
    {MPI_T_ERR_CVAR_SET_NOT_NOW, "mpi_t: control variable cannot be set now"},
    {MPI_T_ERR_CVAR_SET_NEVER, "mpi_t: control variable cannot be set"},
    {MPI_T_ERR_PVAR_NO_STARTSTOP, "mpi_t: performance variable cannot be started or stopped"},
    {MPI_T_ERR_PVAR_NO_WRITE, "mpi_t: performance variable cannot be written"},
    {MPI_T_ERR_PVAR_NO_ATOMIC, "mpi_t: performance variable cannot be read and written atomically"},
    {MPI_T_ERR_INVALID_NAME, "mpi_t: invalid name"},
    {MPI_T_ERR_INVALID, "mpi_t: invalid use of the interface"},
    {MPI_ERR_SESSION, "invalid session"},
    {MPI_ERR_PROC_ABORTED, "process aborted"},
    {MPI_ERR_VALUE_TOO_LARGE, "value too large"},
    {MPI_T_ERR_NOT_SUPPORTED, "mpi_t: not supported"},
    /* classes of newer MPICH releases (tools/dev/mpich_handles.txt): programs built
     * against them, such as mpi4py's wheel, ask for their class and string */
    {MPI_T_ERR_NOT_ACCESSIBLE, "mpi_t: not accessible"},
    {MPI_ERR_ERRHANDLER, "invalid error handler"},
    {MPI_ERR_ABI, "the Fortran ABI is already set"},
    {MPIX_ERR_PROC_FAILED, "process failed"},
    {MPIX_ERR_PROC_FAILED_PENDING, "process failed with a pending operation"},
    {MPIX_ERR_REVOKED, "communicator revoked"},
    {MPIX_ERR_EAGAIN, "operation could not be issued, try again"},
    {MPIX_ERR_NOREQ, "cannot allocate request"},
    {MPIX_ERR_STREAM, "invalid stream"},
    {MPIX_ERR_TIMEOUT, "operation timed out"},
};

static const char *class_text(int errclass) {
    for (size_t i = 0; i < sizeof(class_texts) / sizeof(class_texts[0]); i++) {
        if (class_texts[i].errclass == errclass)
            return class_texts[i].text;
    }
    return NULL;
}

/* ---- detailed messages ---- */
static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
#define DETAIL_SEQ_MASK 0x7fffffu /* bits 7..29 of a code */
static struct {
    unsigned seq;
    char text[MPI_MAX_ERROR_STRING];
} details[DETAIL_SLOTS];
static unsigned last_seq;

/* ---- user classes and codes ---- */
typedef struct {
    int errclass; /* for a class: itself */
    char *text;
} dyn_t;
static dyn_t *dyn; /* under err_lock (it moves as it grows) */
static int ndyn;

/* ---- user error handlers ----
 * A slot is never reused, and a handler's record stays (with fn NULL once its last
 * reference goes), so a stale handle is refused, never followed. Lookups take no
 * lock (base/htab.h); the references are atomic when threaded. The functions of
 * every kind take (int *handle, int *code, ...): MPI_Comm and MPI_Session are ints. */
typedef struct {
    MPI_Comm_errhandler_function *fn; /* NULL once freed and unused */
    int refs;
    int kind; /* TDM_ERRH_COMM, TDM_ERRH_SESSION */
} errh_t;
static tdm_htab_t errhs = TDM_HTAB_INIT(0x04000000, true);

/* The record of a user handler's handle, or NULL. */
static errh_t *errh_at(int eh) {
    return tdm_htab_get(&errhs, (unsigned)eh - ERRH_USER_BASE);
}

static int make_code(int errclass, const char *msg) {
    pthread_mutex_lock(&err_lock);
    unsigned seq = last_seq = last_seq % DETAIL_SEQ_MASK + 1; /* 1..mask: 0 is "no detail" */
    details[seq % DETAIL_SLOTS].seq = seq;
    snprintf(details[seq % DETAIL_SLOTS].text, sizeof(details[0].text), "%s", msg);
    pthread_mutex_unlock(&err_lock);
    return errclass | (int)(seq << 7);
}

int tdm_mpi_class_of(tdm_rc_t rc) {
    switch (rc) {
    case TDM_OK:
        return MPI_SUCCESS;
    case TDM_ERR_NOMEM:
        return MPI_ERR_NO_MEM;
    case TDM_ERR_TRUNCATE:
        return MPI_ERR_TRUNCATE;
    case TDM_ERR_BUFFER:
        return MPI_ERR_BUFFER;
    case TDM_ERR_PENDING:
        return MPI_ERR_PENDING;
    case TDM_ERR_INTERN:
        return MPI_ERR_INTERN;
    default:
        return MPI_ERR_OTHER;
    }
}

/* `kind` tells mpirun why: "A" the program called MPI_Abort, "E" a fatal error. */
static _Noreturn void end_job(const char *kind, int code, const char *why) {
    char line[32];
    snprintf(line, sizeof(line), "%s %d", kind, code);
    if (why)
        tdm_log_emit(TDM_LOG_COMP_MPI, TDM_LOG_ERROR, "%s", why);
    tdm_boot_report(&tdm_mpi.boot, line);
    _exit(code ? code : 1);
}

_Noreturn void tdm_mpi_abort_job(int code, const char *why) {
    end_job("E", code, why);
}

_Noreturn void tdm_mpi_abort_call(int code, const char *why) {
    end_job("A", code, why);
}

/* Call handler `eh` of the object `handle` (named `what` in a fatal message). */
static void raise_on(int eh, int handle, const char *what, int *code, const char *msg) {
    if (eh == MPI_ERRORS_RETURN)
        return;
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT) {
        char why[MPI_MAX_ERROR_STRING + 64];
        snprintf(why, sizeof(why), "fatal error: %s (errors are fatal on %s)", msg, what);
        /* MPI_ERRORS_ABORT aborts the processes of the communicator (of a session:
         * this process); on one node mpirun ends them all either way */
        tdm_mpi_abort_job(1, why);
    }
    errh_t *e = errh_at(eh);
    MPI_Comm_errhandler_function *fn = e ? TDM_LOAD_ACQUIRE(&e->fn) : NULL;
    if (fn) {
        int h = handle;
        fn(&h, code);
    }
}

/* Errors that no object of the call names go to MPI_COMM_WORLD's handler while
 * the World Model is initialised, else to the default, MPI_ERRORS_ARE_FATAL. */
static void invoke_handler(tdm_comm_t *comm, int *code, const char *msg) {
    if (!comm && tdm_mpi.users > 0 && tdm_comm_world_active())
        comm = tdm_comm_world;
    if (comm)
        raise_on(TDM_LOAD_RELAXED(&comm->errhandler), comm->handle, comm->name, code, msg);
    else
        raise_on(MPI_ERRORS_ARE_FATAL, MPI_COMM_NULL, "this process", code, msg);
}

/* The message of an error of class `errclass` found in `fn`, and its code. */
static int vmake(int errclass, const char *fn, char msg[MPI_MAX_ERROR_STRING], const char *fmt,
                 va_list ap) {
    char detail[MPI_MAX_ERROR_STRING - 96];
    vsnprintf(detail, sizeof(detail), fmt, ap);
    snprintf(msg, MPI_MAX_ERROR_STRING, "%s on rank %d: %s (%s)", fn, tdm_mpi.boot.rank, detail,
             class_text(errclass) ? class_text(errclass) : "error");
    tdm_debug(MPI, "%s", msg);
    return make_code(errclass, msg);
}

int tdm_mpi_err(tdm_comm_t *comm, int errclass, const char *fn, const char *fmt, ...) {
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    int code = vmake(errclass, fn, msg, fmt, ap);
    va_end(ap);
    invoke_handler(comm, &code, msg);
    return code;
}

int tdm_mpi_err_eh(int eh, int handle, const char *what, int errclass, const char *fn,
                   const char *fmt, ...) {
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    int code = vmake(errclass, fn, msg, fmt, ap);
    va_end(ap);
    raise_on(eh, handle, what, &code, msg);
    return code;
}

int tdm_mpi_err_session(const tdm_mpi_session_t *s, int errclass, const char *fn, const char *fmt,
                        ...) {
    char msg[MPI_MAX_ERROR_STRING], what[64];
    va_list ap;
    va_start(ap, fmt);
    int code = vmake(errclass, fn, msg, fmt, ap);
    va_end(ap);
    snprintf(what, sizeof(what), "session %#x", (unsigned)s->handle);
    raise_on(TDM_LOAD_RELAXED(&s->errhandler), s->handle, what, &code, msg);
    return code;
}

int tdm_mpi_err_code(tdm_comm_t *comm, int code, const char *fn) {
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    PMPI_Error_string(code, msg, &len);
    (void)fn;
    invoke_handler(comm, &code, msg);
    return code;
}

int tdm_mpi_bad_comm(const char *fn, int handle) {
    const char *why = "";
    if (handle == MPI_COMM_WORLD || handle == MPI_COMM_SELF)
        why = tdm_mpi.finalized ? ": the World Model was finalized (MPI_Finalize)"
                                : ": the World Model is not initialised (MPI_Init; only "
                                  "sessions are open)";
    else if (tdm_comm_get_orphan(handle))
        why = ": the session (or World Model) it was derived from was finalized; only "
              "MPI_Comm_free may still be called on it";
    else if (handle == MPI_COMM_NULL)
        return tdm_mpi_err(NULL, MPI_ERR_COMM, fn, "invalid communicator MPI_COMM_NULL");
    return tdm_mpi_err(NULL, MPI_ERR_COMM, fn, "invalid communicator (handle %#x)%s",
                       (unsigned)handle, why);
}

int tdm_mpi_unsupported(MPI_Comm comm, const char *fn) {
    if (strncmp(fn, "MPI_File_", 9) == 0) {
        /* MPI-IO raises errors on the file's handler, or MPI_FILE_NULL's when there is
         * no file yet: MPI_ERRORS_RETURN unless changed (MPI-3.1 13.7), and changing
         * it is itself unsupported. So the error returns, whatever the communicator's
         * handler: a program that checks MPI_File_open's result can carry on. */
        char msg[MPI_MAX_ERROR_STRING];
        snprintf(msg, sizeof(msg),
                 "%s on rank %d: %s is not implemented in this version of Tandem MPI (%s)", fn,
                 tdm_mpi.boot.rank, fn, class_text(MPI_ERR_UNSUPPORTED_OPERATION));
        tdm_debug(MPI, "%s", msg);
        return make_code(MPI_ERR_UNSUPPORTED_OPERATION, msg);
    }
    tdm_comm_t *c = tdm_mpi.users > 0 ? tdm_comm_get(comm) : NULL;
    return tdm_mpi_err(c, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                       "%s is not implemented in this version of Tandem MPI", fn);
}

/* ---- MPI functions ---- */

int PMPI_Error_class(int errorcode, int *errorclass) {
    if (!errorclass)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_class", "errorclass is NULL");
    if (errorcode & DYN_BIT) {
        int idx = errorcode & ~DYN_BIT, cls = -1;
        pthread_mutex_lock(&err_lock);
        if (idx >= 0 && idx < ndyn)
            cls = dyn[idx].errclass;
        pthread_mutex_unlock(&err_lock);
        if (cls < 0)
            return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_class", "unknown error code %d",
                               errorcode);
        *errorclass = cls;
        return MPI_SUCCESS;
    }
    if (errorcode < 0 || !class_text(errorcode & 0x7f))
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_class", "unknown error code %d",
                           errorcode);
    *errorclass = errorcode & 0x7f;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Error_class)

int PMPI_Error_string(int errorcode, char *string, int *resultlen) {
    const char *text = NULL;
    char buf[MPI_MAX_ERROR_STRING];
    if (!string || !resultlen)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_string", "%s is NULL",
                           string ? "resultlen" : "string");
    if (errorcode & DYN_BIT) {
        int idx = errorcode & ~DYN_BIT;
        pthread_mutex_lock(&err_lock);
        if (idx >= 0 && idx < ndyn) {
            snprintf(buf, sizeof(buf), "%s", dyn[idx].text ? dyn[idx].text : "");
            text = buf;
        }
        pthread_mutex_unlock(&err_lock);
    } else if (errorcode >= 0) {
        unsigned seq = (unsigned)errorcode >> 7;
        const char *ct = class_text(errorcode & 0x7f);
        text = ct;
        if (ct && seq != 0) {
            pthread_mutex_lock(&err_lock);
            if (details[seq % DETAIL_SLOTS].seq == seq) {
                snprintf(buf, sizeof(buf), "%s", details[seq % DETAIL_SLOTS].text);
                text = buf;
            }
            pthread_mutex_unlock(&err_lock);
        }
    }
    if (!text)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Error_string", "unknown error code %d",
                           errorcode);
    snprintf(string, MPI_MAX_ERROR_STRING, "%s", text);
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Error_string)

/* A new class (errclass < 0) or a code of `errclass`; -1 out of memory, -2 when
 * errclass is not a class (checked under the lock, as the table may grow). */
static int dyn_add(int errclass, int *out) {
    pthread_mutex_lock(&err_lock);
    int rc = -1;
    if (errclass >= 0 && (errclass & DYN_BIT) &&
        !((errclass & ~DYN_BIT) < ndyn && dyn[errclass & ~DYN_BIT].errclass == errclass)) {
        rc = -2;
        goto out;
    }
    dyn_t *nd = realloc(dyn, (size_t)(ndyn + 1) * sizeof(*nd));
    if (!nd)
        goto out;
    dyn = nd;
    int code = DYN_BIT | ndyn;
    dyn[ndyn].errclass = errclass < 0 ? code : errclass;
    dyn[ndyn].text = NULL;
    ndyn++;
    *out = code;
    rc = 0;
out:
    pthread_mutex_unlock(&err_lock);
    return rc;
}

/* Classes and codes added so far. */
static int dyn_count(void) {
    pthread_mutex_lock(&err_lock);
    int n = ndyn;
    pthread_mutex_unlock(&err_lock);
    return n;
}

/* MPI_LASTUSEDCODE: never below MPI_ERR_LASTCODE (MPI-3.1 8.5); added classes and
 * codes lie above it. */
int tdm_mpi_last_used_code(void) {
    pthread_mutex_lock(&err_lock);
    int n = ndyn;
    pthread_mutex_unlock(&err_lock);
    return n ? (DYN_BIT | (n - 1)) : MPI_ERR_LASTCODE;
}

int PMPI_Add_error_class(int *errorclass) {
    TDM_CHECK_INIT("MPI_Add_error_class");
    if (!errorclass)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Add_error_class", "errorclass is NULL");
    if (dyn_add(-1, errorclass))
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_class", "out of memory");
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Add_error_class)

int PMPI_Add_error_code(int errorclass, int *errorcode) {
    TDM_CHECK_INIT("MPI_Add_error_code");
    /* a user class is checked by dyn_add, under its lock */
    int valid = (errorclass & DYN_BIT) ||
                (errorclass >= 0 && errorclass < 128 && class_text(errorclass) != NULL);
    if (!valid)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Add_error_code", "invalid error class %d",
                           errorclass);
    if (!errorcode)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Add_error_code", "errorcode is NULL");
    int rc = dyn_add(errorclass, errorcode);
    if (rc == -2)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Add_error_code", "invalid error class %d",
                           errorclass);
    if (rc)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_code", "out of memory");
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Add_error_code)

int PMPI_Add_error_string(int errorcode, const char *string) {
    TDM_CHECK_INIT("MPI_Add_error_string");
    int idx = errorcode & ~DYN_BIT;
    if (!(errorcode & DYN_BIT) || idx >= dyn_count())
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Add_error_string",
                           "error code %d was not added by MPI_Add_error_class/code", errorcode);
    if (!string || strlen(string) >= MPI_MAX_ERROR_STRING)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Add_error_string",
                           "string is NULL or longer than MPI_MAX_ERROR_STRING-1");
    char *copy = strdup(string);
    if (!copy)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Add_error_string", "out of memory");
    pthread_mutex_lock(&err_lock);
    char *old = dyn[idx].text;
    dyn[idx].text = copy;
    pthread_mutex_unlock(&err_lock);
    free(old);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Add_error_string)

static bool errh_predefined(MPI_Errhandler eh) {
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT;
}

/* Valid errhandler handle, of any kind (kind 0) or of `kind`? */
static int errh_valid(MPI_Errhandler eh, int kind) {
    if (errh_predefined(eh))
        return 1;
    errh_t *e = errh_at(eh);
    return e && TDM_LOAD_ACQUIRE(&e->fn) != NULL && (!kind || e->kind == kind);
}

bool tdm_mpi_errh_valid(MPI_Errhandler eh, int kind) {
    return errh_valid(eh, kind);
}

/* Why `eh` cannot go on an object of `kind`: for messages. */
static const char *errh_why(MPI_Errhandler eh, int kind) {
    if (errh_valid(eh, 0))
        return kind == TDM_ERRH_SESSION ? "it was not made by MPI_Session_create_errhandler"
               : kind == TDM_ERRH_WIN   ? "it was not made by MPI_Win_create_errhandler"
                                        : "it was not made by MPI_Comm_create_errhandler";
    return eh == MPI_ERRHANDLER_NULL ? "MPI_ERRHANDLER_NULL" : "no such error handler";
}

static int errh_create(const char *fn, int kind, MPI_Comm_errhandler_function *efn,
                       MPI_Errhandler *errhandler) {
    if (!efn || !errhandler)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "%s is NULL",
                           efn ? "errhandler" : "the handler function");
    errh_t *e = malloc(sizeof(*e));
    if (e)
        *e = (errh_t){.fn = efn, .refs = 1, .kind = kind};
    int idx = e ? tdm_htab_alloc(&errhs, e) : -1;
    if (idx < 0) {
        free(e);
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, fn, "out of memory for an error handler");
    }
    *errhandler = (MPI_Errhandler)(ERRH_USER_BASE + (unsigned)idx);
    return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler) {
    TDM_CHECK_INIT("MPI_Comm_create_errhandler");
    return errh_create("MPI_Comm_create_errhandler", TDM_ERRH_COMM, fn, errhandler);
}
TDM_WEAK(MPI_Comm_create_errhandler)

/* MPI-1's name (removed in MPI-3, still in the MPICH ABI): the same function. */
int PMPI_Errhandler_create(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler) {
    TDM_CHECK_INIT("MPI_Errhandler_create");
    return errh_create("MPI_Errhandler_create", TDM_ERRH_COMM, fn, errhandler);
}
TDM_WEAK(MPI_Errhandler_create)

static void errh_retain(MPI_Errhandler eh) {
    errh_t *e = errh_at(eh);
    if (e)
        tdm_ref_inc(&e->refs);
}

static void errh_release(MPI_Errhandler eh) {
    errh_t *e = errh_at(eh);
    if (e && tdm_ref_read(&e->refs) > 0 && tdm_ref_dec(&e->refs))
        TDM_STORE_RELEASE(&e->fn, NULL);
}

void tdm_mpi_errh_retain(MPI_Errhandler eh) {
    errh_retain(eh);
}

void tdm_mpi_errh_release(MPI_Errhandler eh) {
    errh_release(eh);
}

/* An object's handler `*slot` replaced by `eh` (valid for the object's kind). */
static void errh_replace(int *slot, MPI_Errhandler eh) {
    errh_retain(eh);
    /* an error raised on the object by another thread meanwhile sees the old or the new */
    errh_release(__atomic_exchange_n(slot, eh, __ATOMIC_ACQ_REL));
}

/* The handler of an object for a get call: the caller gets a new reference, released
 * by MPI_Errhandler_free. */
static MPI_Errhandler errh_share(MPI_Errhandler eh) {
    errh_retain(eh);
    return eh;
}

/* The message of error code `code` for a call_errhandler call, which takes any code. */
static void code_text(int code, char msg[MPI_MAX_ERROR_STRING]) {
    int len;
    if (PMPI_Error_string(code, msg, &len) != MPI_SUCCESS)
        snprintf(msg, MPI_MAX_ERROR_STRING, "error code %d", code);
}

/* The refusal of a set_errhandler call's handler: format and arguments. */
#define ERRH_BAD_FMT "invalid errhandler (handle %#x): %s"
#define ERRH_BAD_ARGS(_eh, _kind) (unsigned)(_eh), errh_why(_eh, _kind)

static int errh_set(const char *fn, MPI_Comm comm, MPI_Errhandler errhandler) {
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    if (!errh_valid(errhandler, TDM_ERRH_COMM))
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, ERRH_BAD_FMT,
                           ERRH_BAD_ARGS(errhandler, TDM_ERRH_COMM));
    errh_replace(&c->errhandler, errhandler);
    return MPI_SUCCESS;
}

static int errh_get(const char *fn, MPI_Comm comm, MPI_Errhandler *errhandler) {
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_PTR(fn, c, errhandler, "errhandler");
    *errhandler = errh_share(TDM_LOAD_RELAXED(&c->errhandler));
    return MPI_SUCCESS;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
    return errh_set("MPI_Comm_set_errhandler", comm, errhandler);
}
TDM_WEAK(MPI_Comm_set_errhandler)

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler) {
    return errh_get("MPI_Comm_get_errhandler", comm, errhandler);
}
TDM_WEAK(MPI_Comm_get_errhandler)

/* MPI-1's names (removed in MPI-3, still in the MPICH ABI). */
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
    return errh_set("MPI_Errhandler_set", comm, errhandler);
}
TDM_WEAK(MPI_Errhandler_set)

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler) {
    return errh_get("MPI_Errhandler_get", comm, errhandler);
}
TDM_WEAK(MPI_Errhandler_get)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
    tdm_comm_t *c;
    TDM_GET_COMM("MPI_Comm_call_errhandler", comm, c);
    char msg[MPI_MAX_ERROR_STRING];
    code_text(errorcode, msg);
    invoke_handler(c, &errorcode, msg);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_call_errhandler)

/* Callable at any time (MPI-4.1 Table 11.1), like MPI_Session_create_errhandler. */
int PMPI_Errhandler_free(MPI_Errhandler *errhandler) {
    if (!errhandler || !errh_valid(*errhandler, 0))
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Errhandler_free", "invalid errhandler");
    errh_release(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Errhandler_free)

/* ---- sessions' error handlers ---- */

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler) {
    return errh_create("MPI_Session_create_errhandler", TDM_ERRH_SESSION, session_errhandler_fn,
                       errhandler);
}
TDM_WEAK(MPI_Session_create_errhandler)

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler) {
    static const char fn[] = "MPI_Session_set_errhandler";
    tdm_mpi_session_t *s;
    TDM_GET_SESSION(fn, session, s);
    if (!errh_valid(errhandler, TDM_ERRH_SESSION))
        return tdm_mpi_err_session(s, MPI_ERR_ARG, fn, ERRH_BAD_FMT,
                                   ERRH_BAD_ARGS(errhandler, TDM_ERRH_SESSION));
    errh_replace(&s->errhandler, errhandler);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Session_set_errhandler)

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler) {
    static const char fn[] = "MPI_Session_get_errhandler";
    tdm_mpi_session_t *s;
    TDM_GET_SESSION(fn, session, s);
    TDM_CHECK_PTR_SESSION(fn, s, errhandler, "errhandler");
    *errhandler = errh_share(TDM_LOAD_RELAXED(&s->errhandler));
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Session_get_errhandler)

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode) {
    tdm_mpi_session_t *s;
    TDM_GET_SESSION("MPI_Session_call_errhandler", session, s);
    char msg[MPI_MAX_ERROR_STRING], what[64];
    code_text(errorcode, msg);
    snprintf(what, sizeof(what), "session %#x", (unsigned)s->handle);
    raise_on(TDM_LOAD_RELAXED(&s->errhandler), s->handle, what, &errorcode, msg);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Session_call_errhandler)

/* ---- windows' error handlers ---- */

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler) {
    TDM_CHECK_INIT("MPI_Win_create_errhandler");
    return errh_create("MPI_Win_create_errhandler", TDM_ERRH_WIN,
                       (MPI_Comm_errhandler_function *)win_errhandler_fn, errhandler);
}
TDM_WEAK(MPI_Win_create_errhandler)

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
    static const char fn[] = "MPI_Win_set_errhandler";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    if (!errh_valid(errhandler, TDM_ERRH_WIN))
        return tdm_mpi_win_err(mw, MPI_ERR_ARG, fn, ERRH_BAD_FMT,
                               ERRH_BAD_ARGS(errhandler, TDM_ERRH_WIN));
    errh_replace(&mw->errhandler, errhandler);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler) {
    static const char fn[] = "MPI_Win_get_errhandler";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    TDM_CHECK_PTR_WIN(fn, mw, errhandler, "errhandler");
    *errhandler = errh_share(TDM_LOAD_RELAXED(&mw->errhandler));
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
    tdm_mpi_win_t *mw;
    TDM_GET_WIN("MPI_Win_call_errhandler", win, mw);
    char msg[MPI_MAX_ERROR_STRING], what[MPI_MAX_OBJECT_NAME + 16];
    code_text(errorcode, msg);
    snprintf(what, sizeof(what), "window %s", mw->name);
    raise_on(TDM_LOAD_RELAXED(&mw->errhandler), mw->handle, what, &errorcode, msg);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_call_errhandler)

int tdm_mpi_win_err(tdm_mpi_win_t *mw, int errclass, const char *fn, const char *fmt, ...) {
    char msg[MPI_MAX_ERROR_STRING], what[MPI_MAX_OBJECT_NAME + 16];
    va_list ap;
    va_start(ap, fmt);
    int code = vmake(errclass, fn, msg, fmt, ap);
    va_end(ap);
    snprintf(what, sizeof(what), "window %s", mw->name);
    raise_on(TDM_LOAD_RELAXED(&mw->errhandler), mw->handle, what, &code, msg);
    return code;
}
