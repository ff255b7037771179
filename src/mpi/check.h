/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The argument checks the bindings share (included by bind.h). Each check
 * returns the error from the calling binding when it fails, through the error
 * handler of the communicator (or session) it is given; NULL is the World
 * Model's, or MPI_ERRORS_ARE_FATAL before it. `_fn` names the MPI call and
 * `_name` or `_what` the argument, as the message says them.
 */
#ifndef TDM_MPI_CHECK_H
#define TDM_MPI_CHECK_H

#include "../coll/coll.h"
#include "../comm/group.h"
#include "../comm/info.h"

#define TDM_CHECK_INIT(_fn)                                                                        \
    do {                                                                                           \
        if (TDM_UNLIKELY(tdm_mpi.users == 0))                                                      \
            return tdm_mpi_err(NULL, MPI_ERR_OTHER, _fn, "called %s", tdm_mpi_state_why());        \
    } while (0)

/* An object handle into `_var` through `_get`; an unknown one is `_class` on `_comm`'s
 * handler, "invalid <_what> (handle <_handle><_suffix>)". */
#define TDM_GET_OBJ(_fn, _comm, _get, _handle, _var, _class, _what, _suffix)                       \
    do {                                                                                           \
        (_var) = _get(_handle);                                                                    \
        if (TDM_UNLIKELY(!(_var)))                                                                 \
            return tdm_mpi_err(_comm, _class, _fn, "invalid " _what " (handle %#x%s)",             \
                               (unsigned)(_handle), _suffix);                                      \
    } while (0)

/* A count-like argument `_v` (named `_name`) below 0: `_class` through `_err` on `_obj`,
 * "invalid <_name> <_v>" and `_tail`. */
#define TDM_CHECK_NONNEG_BY(_err, _obj, _fn, _class, _v, _name, _tail)                             \
    do {                                                                                           \
        if (TDM_UNLIKELY((_v) < 0))                                                                \
            return _err(_obj, _class, _fn, "invalid %s %lld" _tail, _name, (long long)(_v));       \
    } while (0)

/* A communicator handle tdm_comm_get refused: the error, saying why. */
int tdm_mpi_bad_comm(const char *fn, int handle);

/* Look up a communicator handle into `_var`. */
#define TDM_GET_COMM(_fn, _handle, _var)                                                           \
    do {                                                                                           \
        TDM_CHECK_INIT(_fn);                                                                       \
        (_var) = tdm_comm_get(_handle);                                                            \
        if (TDM_UNLIKELY(!(_var)))                                                                 \
            return tdm_mpi_bad_comm(_fn, _handle);                                                 \
    } while (0)

#define TDM_CHECK_COUNT(_fn, _comm, _count)                                                        \
    do {                                                                                           \
        if (TDM_UNLIKELY((_count) < 0))                                                            \
            return tdm_mpi_err(_comm, MPI_ERR_COUNT, _fn, "invalid count argument: count=%lld",    \
                               (long long)(_count));                                               \
    } while (0)

/* A datatype usable for communication: valid and committed. */
#define TDM_GET_DTYPE(_fn, _comm, _handle, _var)                                                   \
    do {                                                                                           \
        TDM_GET_OBJ(_fn, _comm, tdm_dtype_get, _handle, _var, MPI_ERR_TYPE, "datatype", "");       \
        if (TDM_UNLIKELY(!(_var)->committed))                                                      \
            return tdm_mpi_err(_comm, MPI_ERR_TYPE, _fn,                                           \
                               "datatype %#x is not committed (call MPI_Type_commit)",             \
                               (unsigned)(_handle));                                               \
    } while (0)

/* A NULL buffer is MPI_BOTTOM: the datatype's displacements are then addresses, which is
 * how programs use types built with MPI_Get_address (MPI-4.1 5.1.12). It is refused only
 * when the data of `count` items would start below the lowest address a process can
 * map (vm.mmap_min_addr; address 0 at least), which no legal program's data can do:
 * a relative datatype with a NULL buffer. MPICH refuses only a true lower bound of 0,
 * and an int at displacement 8 with a NULL buffer reached memcpy. */
int tdm_mpi_bottom_refused(tdm_comm_t *comm, const char *fn, const char *what, MPI_Count count,
                           const tdm_dtype_t *dt);
#define TDM_CHECK_BUF_NAMED(_fn, _comm, _buf, _what, _count, _dt)                                  \
    do {                                                                                           \
        if (TDM_UNLIKELY((_buf) == NULL && (_count) > 0 && (_dt)->size > 0)) {                     \
            int e_ = tdm_mpi_bottom_refused(_comm, _fn, _what, (MPI_Count)(_count), _dt);          \
            if (e_)                                                                                \
                return e_;                                                                         \
        }                                                                                          \
    } while (0)
#define TDM_CHECK_BUF(_fn, _comm, _buf, _count, _dt)                                               \
    TDM_CHECK_BUF_NAMED(_fn, _comm, _buf, #_buf, _count, _dt)

/* Destination / source rank: 0..size-1, MPI_PROC_NULL (and MPI_ANY_SOURCE if allowed).
 * On an intercommunicator the rank names the remote group. */
#define TDM_CHECK_RANK(_fn, _comm, _rank, _what, _any_ok)                                          \
    do {                                                                                           \
        if (TDM_UNLIKELY(((_rank) < 0 || (_rank) >= tdm_comm_peer_size(_comm)) &&                  \
                         (_rank) != MPI_PROC_NULL && !((_any_ok) && (_rank) == MPI_ANY_SOURCE)))   \
            return tdm_mpi_err(_comm, MPI_ERR_RANK, _fn, "invalid %s rank %d (%s of size %d)",     \
                               _what, (int)(_rank),                                                \
                               (_comm)->inter ? "remote group" : "communicator",                   \
                               tdm_comm_peer_size(_comm));                                         \
    } while (0)

#define TDM_CHECK_TAG(_fn, _comm, _tag, _any_ok)                                                   \
    do {                                                                                           \
        if (TDM_UNLIKELY(((_tag) < 0 || (_tag) > TDM_TAG_UB) &&                                    \
                         !((_any_ok) && (_tag) == MPI_ANY_TAG)))                                   \
            return tdm_mpi_err(_comm, MPI_ERR_TAG, _fn, "invalid tag %d (valid: 0..%d%s)",         \
                               (int)(_tag), TDM_TAG_UB, (_any_ok) ? " or MPI_ANY_TAG" : "");       \
    } while (0)

#define TDM_TAG_UB 0x7fffffff

/* A pointer argument that must not be NULL; the _SESSION form reports on session `_s`. */
#define TDM_CHECK_PTR_BY(_err, _obj, _fn, _ptr, _name)                                             \
    do {                                                                                           \
        if (TDM_UNLIKELY(!(_ptr)))                                                                 \
            return _err(_obj, MPI_ERR_ARG, _fn, "%s is NULL", _name);                              \
    } while (0)
#define TDM_CHECK_PTR(_fn, _comm, _ptr, _name)                                                     \
    TDM_CHECK_PTR_BY(tdm_mpi_err, _comm, _fn, _ptr, _name)
#define TDM_CHECK_PTR_SESSION(_fn, _s, _ptr, _name)                                                \
    TDM_CHECK_PTR_BY(tdm_mpi_err_session, _s, _fn, _ptr, _name)

/* The request argument of a call that makes one (`_wanted`: not a blocking call). */
#define TDM_CHECK_REQ(_fn, _comm, _req, _wanted)                                                   \
    do {                                                                                           \
        if ((_wanted) && !(_req))                                                                  \
            return tdm_mpi_err(_comm, MPI_ERR_REQUEST, _fn, "request argument is NULL");           \
    } while (0)

/* An info argument: MPI_INFO_NULL (`_var` = NULL) or a valid object. */
#define TDM_GET_INFO_OR_NULL_BY(_err, _obj, _fn, _handle, _var)                                    \
    do {                                                                                           \
        (_var) = NULL;                                                                             \
        if ((_handle) != MPI_INFO_NULL && !((_var) = tdm_info_get(_handle)))                       \
            return _err(_obj, MPI_ERR_INFO, _fn, "invalid info (handle %#x)",                      \
                        (unsigned)(_handle));                                                      \
    } while (0)
#define TDM_GET_INFO_OR_NULL(_fn, _comm, _handle, _var)                                            \
    TDM_GET_INFO_OR_NULL_BY(tdm_mpi_err, _comm, _fn, _handle, _var)
#define TDM_GET_INFO_OR_NULL_SESSION(_fn, _s, _handle, _var)                                       \
    TDM_GET_INFO_OR_NULL_BY(tdm_mpi_err_session, _s, _fn, _handle, _var)
/* The same where the hints are not used. */
#define TDM_CHECK_INFO(_fn, _comm, _handle)                                                        \
    do {                                                                                           \
        tdm_info_t *info_;                                                                         \
        TDM_GET_INFO_OR_NULL(_fn, _comm, _handle, info_);                                          \
        (void)info_;                                                                               \
    } while (0)

/* A group handle into `_var`. */
#define TDM_GET_GROUP(_fn, _comm, _handle, _var)                                                   \
    do {                                                                                           \
        TDM_CHECK_INIT(_fn);                                                                       \
        TDM_GET_OBJ(_fn, _comm, tdm_group_get, _handle, _var, MPI_ERR_GROUP, "group", "");         \
    } while (0)

/* A session handle into `_var`: an invalid one has no handler of its own to report to. */
#define TDM_GET_SESSION(_fn, _handle, _var)                                                        \
    TDM_GET_OBJ(_fn, NULL, tdm_mpi_session_get, _handle, _var, MPI_ERR_SESSION, "session",         \
                (_handle) == MPI_SESSION_NULL ? ", MPI_SESSION_NULL" : "")

/* A window handle into `_var` (tdm_mpi_win_get, win.h); an invalid one has no handler
 * of its own to report to. The _WIN forms report on window `_mw`. */
#define TDM_GET_WIN(_fn, _handle, _var)                                                            \
    do {                                                                                           \
        TDM_CHECK_INIT(_fn);                                                                       \
        TDM_GET_OBJ(_fn, NULL, tdm_mpi_win_get, _handle, _var, MPI_ERR_WIN, "window",              \
                    (_handle) == MPI_WIN_NULL ? ", MPI_WIN_NULL" : "");                            \
    } while (0)
#define TDM_CHECK_PTR_WIN(_fn, _mw, _ptr, _name)                                                   \
    TDM_CHECK_PTR_BY(tdm_mpi_win_err, _mw, _fn, _ptr, _name)
#define TDM_GET_INFO_OR_NULL_WIN(_fn, _mw, _handle, _var)                                          \
    TDM_GET_INFO_OR_NULL_BY(tdm_mpi_win_err, _mw, _fn, _handle, _var)

/* A reduction operation into `_v`, defined on datatype `_dt`. */
#define TDM_GET_OP(_fn, _c, _h, _dt, _v)                                                           \
    do {                                                                                           \
        TDM_GET_OBJ(_fn, _c, tdm_op_get, _h, _v, MPI_ERR_OP, "op", "");                            \
        if (TDM_UNLIKELY(!tdm_op_valid_for(_v, _dt)))                                              \
            return tdm_mpi_err(_c, MPI_ERR_OP, _fn, "op %s is not defined on datatype %s",         \
                               tdm_op_name(_v), tdm_dtype_name(_dt));                              \
    } while (0)

/* A buffer of a collective that may not be MPI_IN_PLACE (none may on an intercommunicator). */
#define TDM_CHECK_NOT_IN_PLACE(_fn, _c, _buf, _what)                                               \
    do {                                                                                           \
        if (TDM_UNLIKELY((_buf) == MPI_IN_PLACE))                                                  \
            return tdm_mpi_err(_c, MPI_ERR_BUFFER, _fn, "MPI_IN_PLACE is not allowed as %s%s",     \
                               _what, (_c)->inter ? " on an intercommunicator" : "");              \
    } while (0)

#endif
