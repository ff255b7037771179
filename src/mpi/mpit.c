/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI tool information interface (MPI_T_*): argument checks and the
 * mapping of MPI's constants, handles and return codes onto src/mpit. These
 * functions work before MPI_Init and after MPI_Finalize, return an MPI_T_ERR_*
 * class and never call an error handler (MPI-4.1 16.3.10); a refused call is
 * logged at info level (TANDEM_LOG=mpit:info) with the argument named.
 */
#include "bind.h"
#include "../comm/info.h"
#include "../mpit/mpit.h"

#include <stdarg.h>
#include <stdio.h>

_Static_assert(MPI_T_PVAR_CLASS_STATE + TDM_PVC_GENERIC == MPI_T_PVAR_CLASS_GENERIC,
               "pvar classes in MPI's order");
_Static_assert(MPI_T_SCOPE_CONSTANT + TDM_MPIT_SCOPE_ALL_EQ == MPI_T_SCOPE_ALL_EQ,
               "scopes in MPI's order");
_Static_assert(MPI_T_CB_REQUIRE_NONE == 0 && MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE == 3,
               "safety levels as src/mpit numbers them");

static int rc_of(tdm_mpit_rc_t rc) {
    static const int codes[] = {
        [TDM_MPIT_OK] = MPI_SUCCESS,
        [TDM_MPIT_ERR_INVALID] = MPI_T_ERR_INVALID,
        [TDM_MPIT_ERR_MEMORY] = MPI_T_ERR_MEMORY,
        [TDM_MPIT_ERR_NOT_INITIALIZED] = MPI_T_ERR_NOT_INITIALIZED,
        [TDM_MPIT_ERR_INVALID_INDEX] = MPI_T_ERR_INVALID_INDEX,
        [TDM_MPIT_ERR_INVALID_NAME] = MPI_T_ERR_INVALID_NAME,
        [TDM_MPIT_ERR_INVALID_HANDLE] = MPI_T_ERR_INVALID_HANDLE,
        [TDM_MPIT_ERR_INVALID_SESSION] = MPI_T_ERR_INVALID_SESSION,
        [TDM_MPIT_ERR_OUT_OF_HANDLES] = MPI_T_ERR_OUT_OF_HANDLES,
        [TDM_MPIT_ERR_SET_NOT_NOW] = MPI_T_ERR_CVAR_SET_NOT_NOW,
        [TDM_MPIT_ERR_SET_NEVER] = MPI_T_ERR_CVAR_SET_NEVER,
        [TDM_MPIT_ERR_NO_STARTSTOP] = MPI_T_ERR_PVAR_NO_STARTSTOP,
        [TDM_MPIT_ERR_NO_WRITE] = MPI_T_ERR_PVAR_NO_WRITE,
        [TDM_MPIT_ERR_NO_ATOMIC] = MPI_T_ERR_PVAR_NO_ATOMIC,
        [TDM_MPIT_ERR_NOT_SUPPORTED] = MPI_T_ERR_NOT_SUPPORTED,
    };
    return codes[rc];
}

/* A refused call: the class it returns, and why (info level: tools probe). */
__attribute__((format(printf, 3, 4))) static int refuse(int code, const char *fn, const char *fmt,
                                                        ...) {
    if (tdm_log_levels[TDM_LOG_COMP_MPIT] >= TDM_LOG_INFO) {
        char why[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        tdm_log_emit(TDM_LOG_COMP_MPIT, TDM_LOG_INFO, "%s: %s", fn, why);
    }
    return code;
}

static int result(tdm_mpit_rc_t rc, const char *fn) {
    if (rc == TDM_MPIT_OK)
        return MPI_SUCCESS;
    static const char *const what[] = {
        [TDM_MPIT_ERR_INVALID] = "invalid argument",
        [TDM_MPIT_ERR_MEMORY] = "out of memory",
        [TDM_MPIT_ERR_NOT_INITIALIZED] = "MPI_T is not initialized",
        [TDM_MPIT_ERR_INVALID_INDEX] = "invalid index",
        [TDM_MPIT_ERR_INVALID_NAME] = "no such name",
        [TDM_MPIT_ERR_INVALID_HANDLE] = "invalid handle",
        [TDM_MPIT_ERR_INVALID_SESSION] = "invalid session",
        [TDM_MPIT_ERR_OUT_OF_HANDLES] = "out of handles",
        [TDM_MPIT_ERR_SET_NOT_NOW] = "cannot be written now",
        [TDM_MPIT_ERR_SET_NEVER] = "cannot be written",
        [TDM_MPIT_ERR_NO_STARTSTOP] = "the variable is continuous: no start or stop",
        [TDM_MPIT_ERR_NO_WRITE] = "the variable is read-only",
        [TDM_MPIT_ERR_NO_ATOMIC] = "no atomic read and reset",
        [TDM_MPIT_ERR_NOT_SUPPORTED] = "not supported",
    };
    return refuse(rc_of(rc), fn, "%s", what[rc]);
}

#define CHECK_READY(_fn)                                                                           \
    do {                                                                                           \
        if (TDM_UNLIKELY(!tdm_mpit_ready()))                                                       \
            return refuse(MPI_T_ERR_NOT_INITIALIZED, _fn, "called before MPI_T_init_thread");      \
    } while (0)
#define CHECK_ARG(_fn, _p)                                                                         \
    do {                                                                                           \
        if (TDM_UNLIKELY(!(_p)))                                                                   \
            return refuse(MPI_T_ERR_INVALID, _fn, "%s is NULL", #_p);                              \
    } while (0)

static MPI_Datatype type_of(tdm_mpit_type_t t) {
    switch (t) {
    case TDM_MPIT_INT:
        return MPI_INT;
    case TDM_MPIT_UNSIGNED_LONG_LONG:
        return MPI_UNSIGNED_LONG_LONG;
    case TDM_MPIT_COUNT:
        return MPI_COUNT;
    case TDM_MPIT_CHAR:
        return MPI_CHAR;
    case TDM_MPIT_DOUBLE:
        return MPI_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

/* ---- initialization ---- */

static const tdm_mpit_event_calls_t event_calls;

static int t_init_thread(int required, int *provided) {
    CHECK_ARG("MPI_T_init_thread", provided);
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return refuse(MPI_T_ERR_INVALID, "MPI_T_init_thread", "invalid thread level required=%d",
                      required);
    int rc = rc_of(tdm_mpit_init());
    if (rc != MPI_SUCCESS)
        return rc;
    tdm_mpit_event_set_calls(&event_calls);
    /* every MPI_T call but those on an event instance (a callback's own) holds
     * tdm_mpit_lock: any level is provided */
    *provided = required;
    return MPI_SUCCESS;
}
int PMPI_T_init_thread(int required, int *provided) {
    tdm_mpit_lock();
    int rc = t_init_thread(required, provided);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_init_thread)

static int t_finalize(void) {
    return result(tdm_mpit_fini(), "MPI_T_finalize");
}
int PMPI_T_finalize(void) {
    tdm_mpit_lock();
    int rc = t_finalize();
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_finalize)

/* ---- enumerations ---- */

static int t_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len) {
    CHECK_READY("MPI_T_enum_get_info");
    tdm_mpit_enum_t *e = (tdm_mpit_enum_t *)enumtype;
    if (!tdm_mpit_enum_valid(e))
        return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_enum_get_info", "invalid enumeration %p",
                      (void *)enumtype);
    CHECK_ARG("MPI_T_enum_get_info", num);
    const char *n;
    tdm_mpit_enum_info(e, num, &n);
    tdm_mpit_strout(name, name_len, n);
    return MPI_SUCCESS;
}
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len) {
    tdm_mpit_lock();
    int rc = t_enum_get_info(enumtype, num, name, name_len);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_enum_get_info)

static int t_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len) {
    CHECK_READY("MPI_T_enum_get_item");
    tdm_mpit_enum_t *e = (tdm_mpit_enum_t *)enumtype;
    if (!tdm_mpit_enum_valid(e))
        return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_enum_get_item", "invalid enumeration %p",
                      (void *)enumtype);
    CHECK_ARG("MPI_T_enum_get_item", value);
    const char *n;
    tdm_mpit_rc_t rc = tdm_mpit_enum_item(e, indx, value, &n);
    if (rc != TDM_MPIT_OK)
        return refuse(rc_of(rc), "MPI_T_enum_get_item", "item %d out of range", indx);
    tdm_mpit_strout(name, name_len, n);
    return MPI_SUCCESS;
}
int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len) {
    tdm_mpit_lock();
    int rc = t_enum_get_item(enumtype, indx, value, name, name_len);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_enum_get_item)

/* ---- control variables ---- */

static int t_cvar_get_num(int *num_cvar) {
    CHECK_READY("MPI_T_cvar_get_num");
    CHECK_ARG("MPI_T_cvar_get_num", num_cvar);
    *num_cvar = tdm_mpit_cvar_num();
    return MPI_SUCCESS;
}
int PMPI_T_cvar_get_num(int *num_cvar) {
    tdm_mpit_lock();
    int rc = t_cvar_get_num(num_cvar);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_cvar_get_num)

static int t_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                           MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                           int *bind, int *scope) {
    CHECK_READY("MPI_T_cvar_get_info");
    tdm_mpit_cvar_info_t ci;
    tdm_mpit_rc_t rc = tdm_mpit_cvar_info(cvar_index, &ci);
    if (rc != TDM_MPIT_OK)
        return refuse(rc_of(rc), "MPI_T_cvar_get_info", "invalid cvar_index %d (0..%d)", cvar_index,
                      tdm_mpit_cvar_num() - 1);
    tdm_mpit_strout(name, name_len, ci.name);
    tdm_mpit_strout(desc, desc_len, ci.desc);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC + ci.verbosity;
    if (datatype)
        *datatype = type_of(ci.type);
    if (enumtype)
        *enumtype = (MPI_T_enum)ci.enumtype;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = MPI_T_SCOPE_CONSTANT + (int)ci.scope;
    return MPI_SUCCESS;
}
int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope) {
    tdm_mpit_lock();
    int rc = t_cvar_get_info(cvar_index, name, name_len, verbosity, datatype, enumtype, desc,
                             desc_len, bind, scope);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_cvar_get_info)

static int t_cvar_get_index(const char *name, int *cvar_index) {
    CHECK_READY("MPI_T_cvar_get_index");
    CHECK_ARG("MPI_T_cvar_get_index", name);
    CHECK_ARG("MPI_T_cvar_get_index", cvar_index);
    tdm_mpit_rc_t rc = tdm_mpit_cvar_index(name, cvar_index);
    if (rc != TDM_MPIT_OK)
        return refuse(rc_of(rc), "MPI_T_cvar_get_index", "no control variable '%s'", name);
    return MPI_SUCCESS;
}
int PMPI_T_cvar_get_index(const char *name, int *cvar_index) {
    tdm_mpit_lock();
    int rc = t_cvar_get_index(name, cvar_index);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_cvar_get_index)

static int t_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                               int *count) {
    (void)obj_handle; /* every control variable is bound to no object */
    CHECK_READY("MPI_T_cvar_handle_alloc");
    CHECK_ARG("MPI_T_cvar_handle_alloc", handle);
    CHECK_ARG("MPI_T_cvar_handle_alloc", count);
    tdm_mpit_cvar_handle_t *h;
    tdm_mpit_rc_t rc = tdm_mpit_cvar_alloc(cvar_index, &h, count);
    if (rc != TDM_MPIT_OK)
        return refuse(rc_of(rc), "MPI_T_cvar_handle_alloc", "cvar_index %d: %s", cvar_index,
                      rc == TDM_MPIT_ERR_MEMORY ? "out of memory" : "invalid index");
    *handle = (MPI_T_cvar_handle)h;
    return MPI_SUCCESS;
}
int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count) {
    tdm_mpit_lock();
    int rc = t_cvar_handle_alloc(cvar_index, obj_handle, handle, count);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_cvar_handle_alloc)

static int t_cvar_handle_free(MPI_T_cvar_handle *handle) {
    CHECK_READY("MPI_T_cvar_handle_free");
    CHECK_ARG("MPI_T_cvar_handle_free", handle);
    int rc =
        result(tdm_mpit_cvar_free((tdm_mpit_cvar_handle_t *)*handle), "MPI_T_cvar_handle_free");
    if (rc == MPI_SUCCESS)
        *handle = MPI_T_CVAR_HANDLE_NULL;
    return rc;
}
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle) {
    tdm_mpit_lock();
    int rc = t_cvar_handle_free(handle);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_cvar_handle_free)

static int t_cvar_read(MPI_T_cvar_handle handle, void *buf) {
    CHECK_READY("MPI_T_cvar_read");
    CHECK_ARG("MPI_T_cvar_read", buf);
    return result(tdm_mpit_cvar_read((tdm_mpit_cvar_handle_t *)handle, buf), "MPI_T_cvar_read");
}
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf) {
    tdm_mpit_lock();
    int rc = t_cvar_read(handle, buf);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_cvar_read)

static int t_cvar_write(MPI_T_cvar_handle handle, const void *buf) {
    CHECK_READY("MPI_T_cvar_write");
    CHECK_ARG("MPI_T_cvar_write", buf);
    return result(tdm_mpit_cvar_write((tdm_mpit_cvar_handle_t *)handle, buf), "MPI_T_cvar_write");
}
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf) {
    tdm_mpit_lock();
    int rc = t_cvar_write(handle, buf);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_cvar_write)

/* ---- performance variables ---- */

static int t_pvar_get_num(int *num_pvar) {
    CHECK_READY("MPI_T_pvar_get_num");
    CHECK_ARG("MPI_T_pvar_get_num", num_pvar);
    *num_pvar = tdm_mpit_pvar_num();
    return MPI_SUCCESS;
}
int PMPI_T_pvar_get_num(int *num_pvar) {
    tdm_mpit_lock();
    int rc = t_pvar_get_num(num_pvar);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_get_num)

static int t_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                           int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                           int *desc_len, int *bind, int *readonly, int *continuous, int *atomic) {
    CHECK_READY("MPI_T_pvar_get_info");
    tdm_mpit_pvar_info_t pi;
    tdm_mpit_rc_t rc = tdm_mpit_pvar_info(pvar_index, &pi);
    if (rc != TDM_MPIT_OK)
        return refuse(rc_of(rc), "MPI_T_pvar_get_info", "invalid pvar_index %d (0..%d)", pvar_index,
                      tdm_mpit_pvar_num() - 1);
    tdm_mpit_strout(name, name_len, pi.name);
    tdm_mpit_strout(desc, desc_len, pi.desc);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC + pi.verbosity;
    if (var_class)
        *var_class = MPI_T_PVAR_CLASS_STATE + pi.var_class;
    if (datatype)
        *datatype = type_of(pi.type);
    if (enumtype)
        *enumtype = (MPI_T_enum)pi.enumtype;
    if (bind)
        *bind = pi.bind == TDM_PVB_COMM ? MPI_T_BIND_MPI_COMM : MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = pi.readonly;
    if (continuous)
        *continuous = pi.continuous;
    if (atomic)
        *atomic = pi.atomic;
    return MPI_SUCCESS;
}
int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *readonly, int *continuous, int *atomic) {
    tdm_mpit_lock();
    int rc = t_pvar_get_info(pvar_index, name, name_len, verbosity, var_class, datatype, enumtype,
                             desc, desc_len, bind, readonly, continuous, atomic);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_get_info)

static int t_pvar_get_index(const char *name, int var_class, int *pvar_index) {
    CHECK_READY("MPI_T_pvar_get_index");
    CHECK_ARG("MPI_T_pvar_get_index", name);
    CHECK_ARG("MPI_T_pvar_get_index", pvar_index);
    tdm_mpit_rc_t rc = tdm_mpit_pvar_index(name, var_class - MPI_T_PVAR_CLASS_STATE, pvar_index);
    if (rc != TDM_MPIT_OK)
        return refuse(rc_of(rc), "MPI_T_pvar_get_index", "no performance variable '%s' of class %d",
                      name, var_class);
    return MPI_SUCCESS;
}
int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index) {
    tdm_mpit_lock();
    int rc = t_pvar_get_index(name, var_class, pvar_index);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_get_index)

static int t_pvar_session_create(MPI_T_pvar_session *session) {
    CHECK_READY("MPI_T_pvar_session_create");
    CHECK_ARG("MPI_T_pvar_session_create", session);
    tdm_mpit_session_t *s;
    int rc = result(tdm_mpit_session_create(&s), "MPI_T_pvar_session_create");
    if (rc == MPI_SUCCESS)
        *session = (MPI_T_pvar_session)s;
    return rc;
}
int PMPI_T_pvar_session_create(MPI_T_pvar_session *session) {
    tdm_mpit_lock();
    int rc = t_pvar_session_create(session);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_session_create)

static int t_pvar_session_free(MPI_T_pvar_session *session) {
    CHECK_READY("MPI_T_pvar_session_free");
    CHECK_ARG("MPI_T_pvar_session_free", session);
    int rc =
        result(tdm_mpit_session_free((tdm_mpit_session_t *)*session), "MPI_T_pvar_session_free");
    if (rc == MPI_SUCCESS)
        *session = MPI_T_PVAR_SESSION_NULL;
    return rc;
}
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session) {
    tdm_mpit_lock();
    int rc = t_pvar_session_free(session);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_session_free)

static int t_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                               MPI_T_pvar_handle *handle, int *count) {
    const char *fn = "MPI_T_pvar_handle_alloc";
    CHECK_READY(fn);
    CHECK_ARG(fn, handle);
    CHECK_ARG(fn, count);
    tdm_mpit_pvar_info_t pi;
    if (tdm_mpit_pvar_info(pvar_index, &pi) != TDM_MPIT_OK)
        return refuse(MPI_T_ERR_INVALID_INDEX, fn, "invalid pvar_index %d (0..%d)", pvar_index,
                      tdm_mpit_pvar_num() - 1);
    tdm_comm_t *c = NULL;
    if (pi.bind == TDM_PVB_COMM) {
        /* a communicator exists only while MPI has a user (MPI_Init or a session) */
        if (!obj_handle)
            return refuse(MPI_T_ERR_INVALID_HANDLE, fn,
                          "%s is bound to a communicator: "
                          "obj_handle is NULL",
                          pi.name);
        MPI_Comm comm = *(const MPI_Comm *)obj_handle;
        c = tdm_mpi.users > 0 ? tdm_comm_get(comm) : NULL;
        if (!c)
            return refuse(MPI_T_ERR_INVALID_HANDLE, fn, "invalid communicator %#x for %s",
                          (unsigned)comm, pi.name);
    }
    tdm_mpit_pvar_handle_t *h;
    tdm_mpit_rc_t rc = tdm_mpit_pvar_alloc((tdm_mpit_session_t *)session, pvar_index, c, &h, count);
    if (rc != TDM_MPIT_OK)
        return result(rc, fn);
    *handle = (MPI_T_pvar_handle)h;
    return MPI_SUCCESS;
}
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count) {
    tdm_mpit_lock();
    int rc = t_pvar_handle_alloc(session, pvar_index, obj_handle, handle, count);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_handle_alloc)

static int t_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle) {
    CHECK_READY("MPI_T_pvar_handle_free");
    CHECK_ARG("MPI_T_pvar_handle_free", handle);
    int rc =
        result(tdm_mpit_pvar_free((tdm_mpit_session_t *)session, (tdm_mpit_pvar_handle_t *)*handle),
               "MPI_T_pvar_handle_free");
    if (rc == MPI_SUCCESS)
        *handle = MPI_T_PVAR_HANDLE_NULL;
    return rc;
}
int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle) {
    tdm_mpit_lock();
    int rc = t_pvar_handle_free(session, handle);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_handle_free)

#define PVAR_ALL(_h) ((_h) == MPI_T_PVAR_ALL_HANDLES)

static int t_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    CHECK_READY("MPI_T_pvar_start");
    return result(tdm_mpit_pvar_start((tdm_mpit_session_t *)session,
                                      (tdm_mpit_pvar_handle_t *)handle, PVAR_ALL(handle)),
                  "MPI_T_pvar_start");
}
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    tdm_mpit_lock();
    int rc = t_pvar_start(session, handle);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_start)

static int t_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    CHECK_READY("MPI_T_pvar_stop");
    return result(tdm_mpit_pvar_stop((tdm_mpit_session_t *)session,
                                     (tdm_mpit_pvar_handle_t *)handle, PVAR_ALL(handle)),
                  "MPI_T_pvar_stop");
}
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    tdm_mpit_lock();
    int rc = t_pvar_stop(session, handle);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_stop)

static int t_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    CHECK_READY("MPI_T_pvar_reset");
    return result(tdm_mpit_pvar_reset((tdm_mpit_session_t *)session,
                                      (tdm_mpit_pvar_handle_t *)handle, PVAR_ALL(handle)),
                  "MPI_T_pvar_reset");
}
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    tdm_mpit_lock();
    int rc = t_pvar_reset(session, handle);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_reset)

static int pvar_read(const char *fn, MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                     void *buf, bool reset) {
    CHECK_READY(fn);
    if (PVAR_ALL(handle))
        return refuse(MPI_T_ERR_INVALID_HANDLE, fn, "MPI_T_PVAR_ALL_HANDLES reads nothing");
    CHECK_ARG(fn, buf);
    return result(tdm_mpit_pvar_read((tdm_mpit_session_t *)session,
                                     (tdm_mpit_pvar_handle_t *)handle, buf, reset),
                  fn);
}

static int t_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
    return pvar_read("MPI_T_pvar_read", session, handle, buf, false);
}
int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
    tdm_mpit_lock();
    int rc = t_pvar_read(session, handle, buf);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_read)

static int t_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
    return pvar_read("MPI_T_pvar_readreset", session, handle, buf, true);
}
int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
    tdm_mpit_lock();
    int rc = t_pvar_readreset(session, handle, buf);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_readreset)

static int t_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf) {
    CHECK_READY("MPI_T_pvar_write");
    if (PVAR_ALL(handle))
        return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_pvar_write",
                      "MPI_T_PVAR_ALL_HANDLES writes nothing");
    CHECK_ARG("MPI_T_pvar_write", buf);
    return result(
        tdm_mpit_pvar_write((tdm_mpit_session_t *)session, (tdm_mpit_pvar_handle_t *)handle, buf),
        "MPI_T_pvar_write");
}
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf) {
    tdm_mpit_lock();
    int rc = t_pvar_write(session, handle, buf);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_pvar_write)

/* ---- categories ---- */

static int t_category_get_num(int *num_cat) {
    CHECK_READY("MPI_T_category_get_num");
    CHECK_ARG("MPI_T_category_get_num", num_cat);
    *num_cat = tdm_mpit_cat_num();
    return MPI_SUCCESS;
}
int PMPI_T_category_get_num(int *num_cat) {
    tdm_mpit_lock();
    int rc = t_category_get_num(num_cat);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_category_get_num)

static int t_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                               int *num_cvars, int *num_pvars, int *num_categories) {
    CHECK_READY("MPI_T_category_get_info");
    tdm_mpit_cat_info_t ci;
    if (tdm_mpit_cat_info(cat_index, &ci) != TDM_MPIT_OK)
        return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_info",
                      "invalid cat_index %d (0..%d)", cat_index, tdm_mpit_cat_num() - 1);
    tdm_mpit_strout(name, name_len, ci.name);
    tdm_mpit_strout(desc, desc_len, ci.desc);
    if (num_cvars)
        *num_cvars = ci.ncvars;
    if (num_pvars)
        *num_pvars = ci.npvars;
    if (num_categories)
        *num_categories = ci.ncats;
    return MPI_SUCCESS;
}
int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories) {
    tdm_mpit_lock();
    int rc = t_category_get_info(cat_index, name, name_len, desc, desc_len, num_cvars, num_pvars,
                                 num_categories);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_category_get_info)

static int t_category_get_num_events(int cat_index, int *num_events) {
    CHECK_READY("MPI_T_category_get_num_events");
    CHECK_ARG("MPI_T_category_get_num_events", num_events);
    tdm_mpit_cat_info_t ci;
    if (tdm_mpit_cat_info(cat_index, &ci) != TDM_MPIT_OK)
        return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_num_events",
                      "invalid cat_index %d (0..%d)", cat_index, tdm_mpit_cat_num() - 1);
    *num_events = ci.nevents;
    return MPI_SUCCESS;
}
int PMPI_T_category_get_num_events(int cat_index, int *num_events) {
    tdm_mpit_lock();
    int rc = t_category_get_num_events(cat_index, num_events);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_category_get_num_events)

static int t_category_get_index(const char *name, int *cat_index) {
    CHECK_READY("MPI_T_category_get_index");
    CHECK_ARG("MPI_T_category_get_index", name);
    CHECK_ARG("MPI_T_category_get_index", cat_index);
    tdm_mpit_rc_t rc = tdm_mpit_cat_index(name, cat_index);
    if (rc != TDM_MPIT_OK)
        return refuse(rc_of(rc), "MPI_T_category_get_index", "no category '%s'", name);
    return MPI_SUCCESS;
}
int PMPI_T_category_get_index(const char *name, int *cat_index) {
    tdm_mpit_lock();
    int rc = t_category_get_index(name, cat_index);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_category_get_index)

static int members(const char *fn, int cat_index, char which, int len, int indices[]) {
    CHECK_READY(fn);
    if (len < 0)
        return refuse(MPI_T_ERR_INVALID, fn, "invalid len %d", len);
    if (len > 0 && !indices)
        return refuse(MPI_T_ERR_INVALID, fn, "indices is NULL with len %d", len);
    tdm_mpit_rc_t rc = tdm_mpit_cat_members(cat_index, which, len, indices);
    if (rc != TDM_MPIT_OK)
        return refuse(rc_of(rc), fn, "invalid cat_index %d (0..%d)", cat_index,
                      tdm_mpit_cat_num() - 1);
    return MPI_SUCCESS;
}

static int t_category_get_cvars(int cat_index, int len, int indices[]) {
    return members("MPI_T_category_get_cvars", cat_index, 'c', len, indices);
}
int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
    tdm_mpit_lock();
    int rc = t_category_get_cvars(cat_index, len, indices);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_category_get_cvars)

static int t_category_get_pvars(int cat_index, int len, int indices[]) {
    return members("MPI_T_category_get_pvars", cat_index, 'p', len, indices);
}
int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
    tdm_mpit_lock();
    int rc = t_category_get_pvars(cat_index, len, indices);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_category_get_pvars)

static int t_category_get_categories(int cat_index, int len, int indices[]) {
    return members("MPI_T_category_get_categories", cat_index, 's', len, indices);
}
int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
    tdm_mpit_lock();
    int rc = t_category_get_categories(cat_index, len, indices);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_category_get_categories)

static int t_category_get_events(int cat_index, int len, int indices[]) {
    return members("MPI_T_category_get_events", cat_index, 'e', len, indices);
}
int PMPI_T_category_get_events(int cat_index, int len, int indices[]) {
    tdm_mpit_lock();
    int rc = t_category_get_events(cat_index, len, indices);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_category_get_events)

static int t_category_changed(int *update_number) {
    CHECK_READY("MPI_T_category_changed");
    CHECK_ARG("MPI_T_category_changed", update_number);
    *update_number = 0; /* the variables and categories are fixed for the process's life */
    return MPI_SUCCESS;
}
int PMPI_T_category_changed(int *update_number) {
    tdm_mpit_lock();
    int rc = t_category_changed(update_number);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_category_changed)

/* ---- events ---- */

static void call_event(void *fn, tdm_mpit_event_inst_t *inst, tdm_mpit_event_reg_t *reg, int safety,
                       void *user) {
    ((MPI_T_event_cb_function *)fn)((MPI_T_event_instance)inst, (MPI_T_event_registration)reg,
                                    (MPI_T_cb_safety)safety, user);
}
static void call_freed(void *fn, tdm_mpit_event_reg_t *reg, int safety, void *user) {
    ((MPI_T_event_free_cb_function *)fn)((MPI_T_event_registration)reg, (MPI_T_cb_safety)safety,
                                         user);
}
static void call_dropped(void *fn, long long count, tdm_mpit_event_reg_t *reg, int source,
                         int safety, void *user) {
    ((MPI_T_event_dropped_cb_function *)fn)((MPI_Count)count, (MPI_T_event_registration)reg, source,
                                            (MPI_T_cb_safety)safety, user);
}
static const tdm_mpit_event_calls_t event_calls = {call_event, call_freed, call_dropped};

static int t_source_get_num(int *num_sources) {
    CHECK_READY("MPI_T_source_get_num");
    CHECK_ARG("MPI_T_source_get_num", num_sources);
    *num_sources = tdm_mpit_source_num();
    return MPI_SUCCESS;
}
int PMPI_T_source_get_num(int *num_sources) {
    tdm_mpit_lock();
    int rc = t_source_get_num(num_sources);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_source_get_num)

static int t_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                             MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                             MPI_Count *max_ticks, MPI_Info *info) {
    CHECK_READY("MPI_T_source_get_info");
    const char *n, *d;
    bool ordered;
    long long tps, max;
    if (tdm_mpit_source_info(source_index, &n, &d, &ordered, &tps, &max) != TDM_MPIT_OK)
        return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_source_get_info",
                      "invalid source_index %d (0..%d)", source_index, tdm_mpit_source_num() - 1);
    tdm_mpit_strout(name, name_len, n);
    tdm_mpit_strout(desc, desc_len, d);
    if (ordering)
        *ordering = ordered ? MPI_T_SOURCE_ORDERED : MPI_T_SOURCE_UNORDERED;
    if (ticks_per_second)
        *ticks_per_second = tps;
    if (max_ticks)
        *max_ticks = max;
    if (info)
        *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info) {
    tdm_mpit_lock();
    int rc = t_source_get_info(source_index, name, name_len, desc, desc_len, ordering,
                               ticks_per_second, max_ticks, info);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_source_get_info)

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp) {
    CHECK_READY("MPI_T_source_get_timestamp");
    CHECK_ARG("MPI_T_source_get_timestamp", timestamp);
    long long ts;
    if (tdm_mpit_source_timestamp(source_index, &ts) != TDM_MPIT_OK)
        return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_source_get_timestamp",
                      "invalid source_index %d", source_index);
    *timestamp = ts;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_T_source_get_timestamp)

static int t_event_get_num(int *num_events) {
    CHECK_READY("MPI_T_event_get_num");
    CHECK_ARG("MPI_T_event_get_num", num_events);
    *num_events = tdm_mpit_event_num();
    return MPI_SUCCESS;
}
int PMPI_T_event_get_num(int *num_events) {
    tdm_mpit_lock();
    int rc = t_event_get_num(num_events);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_get_num)

static int t_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                            MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                            int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                            int *desc_len, int *bind) {
    CHECK_READY("MPI_T_event_get_info");
    tdm_mpit_event_info_t ei;
    if (tdm_mpit_event_info(event_index, &ei) != TDM_MPIT_OK)
        return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_event_get_info",
                      "invalid event_index %d (0..%d)", event_index, tdm_mpit_event_num() - 1);
    tdm_mpit_strout(name, name_len, ei.name);
    tdm_mpit_strout(desc, desc_len, ei.desc);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC + ei.verbosity;
    if (num_elements) {
        /* as many elements as the arrays hold; *num_elements says how many there are */
        for (int i = 0; i < ei.nelems && i < *num_elements; i++) {
            if (array_of_datatypes)
                array_of_datatypes[i] = type_of(ei.types[i]);
            if (array_of_displacements)
                array_of_displacements[i] = (MPI_Aint)ei.displs[i];
        }
        *num_elements = ei.nelems;
    }
    if (enumtype)
        *enumtype = (MPI_T_enum)ei.enumtype;
    if (info)
        *info = MPI_INFO_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    return MPI_SUCCESS;
}
int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind) {
    tdm_mpit_lock();
    int rc = t_event_get_info(event_index, name, name_len, verbosity, array_of_datatypes,
                              array_of_displacements, num_elements, enumtype, info, desc, desc_len,
                              bind);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_get_info)

static int t_event_get_index(const char *name, int *event_index) {
    CHECK_READY("MPI_T_event_get_index");
    CHECK_ARG("MPI_T_event_get_index", name);
    CHECK_ARG("MPI_T_event_get_index", event_index);
    tdm_mpit_rc_t rc = tdm_mpit_event_index(name, event_index);
    if (rc != TDM_MPIT_OK)
        return refuse(rc_of(rc), "MPI_T_event_get_index", "no event '%s'", name);
    return MPI_SUCCESS;
}
int PMPI_T_event_get_index(const char *name, int *event_index) {
    tdm_mpit_lock();
    int rc = t_event_get_index(name, event_index);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_get_index)

/* Info arguments carry no hints Tandem knows; MPI_INFO_NULL or a valid info. */
static bool info_ok(MPI_Info info) {
    return info == MPI_INFO_NULL || tdm_info_get(info) != NULL;
}

/* A new, empty info: the hints in use (none) */
static int new_info(const char *fn, MPI_Info *out) {
    CHECK_ARG(fn, out);
    if (PMPI_Info_create(out) != MPI_SUCCESS)
        return refuse(MPI_T_ERR_MEMORY, fn, "cannot create an info object");
    return MPI_SUCCESS;
}

#define GET_REG(_fn, _handle, _var)                                                                \
    do {                                                                                           \
        CHECK_READY(_fn);                                                                          \
        (_var) = (tdm_mpit_event_reg_t *)(_handle);                                                \
        if (!tdm_mpit_event_reg_valid(_var))                                                       \
            return refuse(MPI_T_ERR_INVALID_HANDLE, _fn, "invalid event registration %p",          \
                          (void *)(_handle));                                                      \
    } while (0)

static int t_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                                MPI_T_event_registration *event_registration) {
    (void)obj_handle; /* every event is bound to no object */
    const char *fn = "MPI_T_event_handle_alloc";
    CHECK_READY(fn);
    CHECK_ARG(fn, event_registration);
    if (!info_ok(info))
        return refuse(MPI_T_ERR_INVALID, fn, "invalid info %#x", (unsigned)info);
    tdm_mpit_event_reg_t *reg;
    tdm_mpit_rc_t rc = tdm_mpit_event_alloc(event_index, &reg);
    if (rc != TDM_MPIT_OK)
        return refuse(rc_of(rc), fn, "event_index %d: %s", event_index,
                      rc == TDM_MPIT_ERR_MEMORY ? "out of memory" : "invalid index");
    *event_registration = (MPI_T_event_registration)reg;
    return MPI_SUCCESS;
}
int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration) {
    tdm_mpit_lock();
    int rc = t_event_handle_alloc(event_index, obj_handle, info, event_registration);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_handle_alloc)

static int t_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info) {
    tdm_mpit_event_reg_t *reg;
    GET_REG("MPI_T_event_handle_set_info", event_registration, reg);
    if (!info_ok(info))
        return refuse(MPI_T_ERR_INVALID, "MPI_T_event_handle_set_info", "invalid info %#x",
                      (unsigned)info);
    return MPI_SUCCESS;
}
int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info) {
    tdm_mpit_lock();
    int rc = t_event_handle_set_info(event_registration, info);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_handle_set_info)

static int t_event_handle_get_info(MPI_T_event_registration event_registration,
                                   MPI_Info *info_used) {
    tdm_mpit_event_reg_t *reg;
    GET_REG("MPI_T_event_handle_get_info", event_registration, reg);
    return new_info("MPI_T_event_handle_get_info", info_used);
}
int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used) {
    tdm_mpit_lock();
    int rc = t_event_handle_get_info(event_registration, info_used);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_handle_get_info)

static bool safety_ok(MPI_T_cb_safety s) {
    return (int)s >= MPI_T_CB_REQUIRE_NONE && (int)s <= MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE;
}

static int t_event_register_callback(MPI_T_event_registration event_registration,
                                     MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                     MPI_T_event_cb_function event_cb_function) {
    const char *fn = "MPI_T_event_register_callback";
    tdm_mpit_event_reg_t *reg;
    GET_REG(fn, event_registration, reg);
    if (!safety_ok(cb_safety))
        return refuse(MPI_T_ERR_INVALID, fn, "invalid cb_safety %d", (int)cb_safety);
    if (!info_ok(info))
        return refuse(MPI_T_ERR_INVALID, fn, "invalid info %#x", (unsigned)info);
    CHECK_ARG(fn, event_cb_function);
    return result(
        tdm_mpit_event_register(reg, (int)cb_safety, (void *)event_cb_function, user_data), fn);
}
int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function event_cb_function) {
    tdm_mpit_lock();
    int rc = t_event_register_callback(event_registration, cb_safety, info, user_data,
                                       event_cb_function);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_register_callback)

static int t_event_callback_set_info(MPI_T_event_registration event_registration,
                                     MPI_T_cb_safety cb_safety, MPI_Info info) {
    const char *fn = "MPI_T_event_callback_set_info";
    tdm_mpit_event_reg_t *reg;
    GET_REG(fn, event_registration, reg);
    if (!safety_ok(cb_safety))
        return refuse(MPI_T_ERR_INVALID, fn, "invalid cb_safety %d", (int)cb_safety);
    if (!info_ok(info))
        return refuse(MPI_T_ERR_INVALID, fn, "invalid info %#x", (unsigned)info);
    return MPI_SUCCESS;
}
int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info) {
    tdm_mpit_lock();
    int rc = t_event_callback_set_info(event_registration, cb_safety, info);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_callback_set_info)

static int t_event_callback_get_info(MPI_T_event_registration event_registration,
                                     MPI_T_cb_safety cb_safety, MPI_Info *info_used) {
    const char *fn = "MPI_T_event_callback_get_info";
    tdm_mpit_event_reg_t *reg;
    GET_REG(fn, event_registration, reg);
    if (!safety_ok(cb_safety))
        return refuse(MPI_T_ERR_INVALID, fn, "invalid cb_safety %d", (int)cb_safety);
    return new_info(fn, info_used);
}
int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used) {
    tdm_mpit_lock();
    int rc = t_event_callback_get_info(event_registration, cb_safety, info_used);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_callback_get_info)

static int t_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                       MPI_T_event_dropped_cb_function dropped_cb_function) {
    tdm_mpit_event_reg_t *reg;
    GET_REG("MPI_T_event_set_dropped_handler", event_registration, reg);
    return result(tdm_mpit_event_set_dropped(reg, (void *)dropped_cb_function),
                  "MPI_T_event_set_dropped_handler");
}
int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function) {
    tdm_mpit_lock();
    int rc = t_event_set_dropped_handler(event_registration, dropped_cb_function);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_set_dropped_handler)

static int t_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                               MPI_T_event_free_cb_function free_cb_function) {
    tdm_mpit_event_reg_t *reg;
    GET_REG("MPI_T_event_handle_free", event_registration, reg);
    return result(tdm_mpit_event_free(reg, (void *)free_cb_function, user_data),
                  "MPI_T_event_handle_free");
}
int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function) {
    tdm_mpit_lock();
    int rc = t_event_handle_free(event_registration, user_data, free_cb_function);
    tdm_mpit_unlock();
    return rc;
}
TDM_WEAK(MPI_T_event_handle_free)

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer) {
    CHECK_READY("MPI_T_event_read");
    CHECK_ARG("MPI_T_event_read", buffer);
    return result(
        tdm_mpit_event_read((tdm_mpit_event_inst_t *)event_instance, element_index, buffer),
        "MPI_T_event_read");
}
TDM_WEAK(MPI_T_event_read)

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer) {
    CHECK_READY("MPI_T_event_copy");
    CHECK_ARG("MPI_T_event_copy", buffer);
    return result(tdm_mpit_event_copy((tdm_mpit_event_inst_t *)event_instance, buffer),
                  "MPI_T_event_copy");
}
TDM_WEAK(MPI_T_event_copy)

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp) {
    CHECK_READY("MPI_T_event_get_timestamp");
    CHECK_ARG("MPI_T_event_get_timestamp", event_timestamp);
    long long ts;
    int rc = result(tdm_mpit_event_timestamp((tdm_mpit_event_inst_t *)event_instance, &ts),
                    "MPI_T_event_get_timestamp");
    if (rc == MPI_SUCCESS)
        *event_timestamp = ts;
    return rc;
}
TDM_WEAK(MPI_T_event_get_timestamp)

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index) {
    CHECK_READY("MPI_T_event_get_source");
    CHECK_ARG("MPI_T_event_get_source", source_index);
    return result(tdm_mpit_event_source((tdm_mpit_event_inst_t *)event_instance, source_index),
                  "MPI_T_event_get_source");
}
TDM_WEAK(MPI_T_event_get_source)
