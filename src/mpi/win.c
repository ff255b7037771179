/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Window bindings: creation of every kind, free, groups, info, names, attributes,
 * shared_query, attach/detach, and the synchronization calls. Arguments are checked
 * here; src/rma does the work and says why it refused (tdm_rma_why). Errors go
 * through the window's handler (MPI_ERRORS_ARE_FATAL until changed); creation errors
 * through the communicator's.
 */
#include "win.h"
#include "../base/htab.h"
#include "../comm/attr.h"
#include "../comm/group.h"
#include "../comm/info.h"
#include "../coll/coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)MPI_WIN_FLAVOR_CREATE == (int)TDM_WIN_CREATE &&
                   (int)MPI_WIN_FLAVOR_ALLOCATE == (int)TDM_WIN_ALLOCATE &&
                   (int)MPI_WIN_FLAVOR_DYNAMIC == (int)TDM_WIN_DYNAMIC &&
                   (int)MPI_WIN_FLAVOR_SHARED == (int)TDM_WIN_SHARED,
               "window flavors shared with src/rma");
_Static_assert(MPI_MODE_NOCHECK == TDM_RMA_MODE_NOCHECK &&
                   MPI_MODE_NOSTORE == TDM_RMA_MODE_NOSTORE &&
                   MPI_MODE_NOPUT == TDM_RMA_MODE_NOPUT &&
                   MPI_MODE_NOPRECEDE == TDM_RMA_MODE_NOPRECEDE &&
                   MPI_MODE_NOSUCCEED == TDM_RMA_MODE_NOSUCCEED,
               "assert bits shared with src/rma");

/* ---- handles ---- */

/* Windows' handles: a lock to add or remove, none to look up (base/htab.h). */
static tdm_htab_t wins = TDM_HTAB_INIT((int)TDM_WIN_INDEX_MASK + 1, false);

tdm_mpi_win_t *tdm_mpi_win_get(MPI_Win handle) {
    unsigned h = (unsigned)handle;
    if ((h & ~TDM_WIN_INDEX_MASK) != TDM_WIN_USER_BASE)
        return NULL;
    return tdm_htab_get(&wins, h & TDM_WIN_INDEX_MASK);
}

static int handle_new(tdm_mpi_win_t *mw) {
    int i = tdm_htab_alloc(&wins, mw);
    if (i < 0)
        return -1;
    mw->handle = (int)(TDM_WIN_USER_BASE | (unsigned)i);
    return 0;
}

static void handle_drop(tdm_mpi_win_t *mw) {
    tdm_htab_free(&wins, (int)((unsigned)mw->handle & TDM_WIN_INDEX_MASK));
}

int tdm_mpi_win_rma_err(tdm_mpi_win_t *mw, tdm_rma_rc_t rc, const char *fn) {
    static const int cls[] = {
        [TDM_RMA_OK] = MPI_SUCCESS,
        [TDM_RMA_ENOMEM] = MPI_ERR_NO_MEM,
        [TDM_RMA_ESYNC] = MPI_ERR_RMA_SYNC,
        [TDM_RMA_ERANGE] = MPI_ERR_RMA_RANGE,
        [TDM_RMA_EATTACH] = MPI_ERR_RMA_ATTACH,
        [TDM_RMA_ECONFLICT] = MPI_ERR_RMA_CONFLICT,
        [TDM_RMA_ESHARED] = MPI_ERR_RMA_SHARED,
        [TDM_RMA_ETYPE] = MPI_ERR_TYPE,
        [TDM_RMA_EOTHER] = MPI_ERR_OTHER,
    };
    return tdm_mpi_win_err(mw, cls[rc], fn, "%s", tdm_rma_why());
}

/* ---- creation ---- */

static const char *hint(const tdm_info_t *in, const char *key) {
    return in ? tdm_info_find(in, key) : NULL;
}

/* The hints the window goes by, as MPI_Win_get_info reports them. */
static tdm_info_t *hints_used(const tdm_win_t *w, const char *ordering, const char *ops,
                              const tdm_info_t *in) {
    tdm_info_t *h = tdm_info_new(false);
    if (!h)
        return NULL;
    const char *nl = hint(in, "no_locks");
    int bad = tdm_info_set(h, "no_locks", nl && !strcmp(nl, "true") ? "true" : "false");
    bad |= tdm_info_set(h, "accumulate_ordering", ordering);
    bad |= tdm_info_set(h, "accumulate_ops", ops);
    const char *ss = hint(in, "same_size"), *su = hint(in, "same_disp_unit");
    bad |= tdm_info_set(h, "same_size", ss && !strcmp(ss, "true") ? "true" : "false");
    bad |= tdm_info_set(h, "same_disp_unit", su && !strcmp(su, "true") ? "true" : "false");
    if (w->flavor == TDM_WIN_SHARED)
        bad |= tdm_info_set(h, "alloc_shared_noncontig", w->noncontig ? "true" : "false");
    if (bad) {
        tdm_info_free(h);
        return NULL;
    }
    return h;
}

static int win_create(const char *fn, tdm_win_flavor_t flavor, void *base, MPI_Aint size,
                      MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win) {
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    if (c->inter)
        return tdm_mpi_err(c, MPI_ERR_COMM, fn,
                           "comm is an intercommunicator (a window is "
                           "created over an intracommunicator)");
    if (size < 0)
        return tdm_mpi_err(c, MPI_ERR_SIZE, fn, "invalid size %lld (negative)", (long long)size);
    if (disp_unit <= 0)
        return tdm_mpi_err(c, MPI_ERR_DISP, fn, "invalid disp_unit %lld (must be positive)",
                           (long long)disp_unit);
    tdm_info_t *in;
    TDM_GET_INFO_OR_NULL(fn, c, info, in);
    TDM_CHECK_PTR(fn, c, win, "win");
    bool alloc = flavor == TDM_WIN_ALLOCATE || flavor == TDM_WIN_SHARED;
    if (alloc)
        TDM_CHECK_PTR(fn, c, baseptr, "baseptr");
    if (flavor == TDM_WIN_CREATE && !base && size > 0)
        return tdm_mpi_err(c, MPI_ERR_BASE, fn, "base is NULL with size %lld", (long long)size);

    const char *nc = hint(in, "alloc_shared_noncontig");
    const char *ord = hint(in, "accumulate_ordering");
    const char *ops = hint(in, "accumulate_ops");
    if (!ord)
        ord = "rar,raw,war,waw";
    if (!ops || (strcmp(ops, "same_op") && strcmp(ops, "same_op_no_op")))
        ops = "same_op_no_op";
    tdm_mpi_win_t *mw = calloc(1, sizeof(*mw));
    if (!mw)
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for the window");
    tdm_win_t *w = NULL;
    tdm_rma_rc_t rc = tdm_rma_win_create(flavor, base, (size_t)size, (ptrdiff_t)disp_unit,
                                         nc && !strcmp(nc, "true"), c, &w);
    if (rc != TDM_RMA_OK) {
        free(mw);
        return tdm_mpi_err(c, rc == TDM_RMA_ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER, fn, "%s",
                           tdm_rma_why());
    }
    w->acc_ops = !strcmp(ops, "same_op");
    w->acc_ordered = strcmp(ord, "none") != 0;
    mw->w = w;
    mw->errhandler = MPI_ERRORS_ARE_FATAL;
    mw->hints = hints_used(w, ord, ops, in);
    mw->attr_size = size;
    mw->attr_disp_unit = (int)disp_unit;
    mw->attr_flavor = (int)flavor;
    mw->attr_model = MPI_WIN_UNIFIED;
    if (!mw->hints || handle_new(mw)) {
        /* the others have their window: free ours with them, then report */
        tdm_rma_win_free(w);
        tdm_info_free(mw->hints);
        free(mw);
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for the window's handle");
    }
    w->mpi = mw;
    w->handle = mw->handle;
    snprintf(mw->name, sizeof(mw->name), "%s", "");
    if (alloc)
        *(void **)baseptr = w->base;
    *win = mw->handle;
    return MPI_SUCCESS;
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win) {
    return win_create("MPI_Win_create", TDM_WIN_CREATE, base, size, disp_unit, info, comm, NULL,
                      win);
}
TDM_WEAK(MPI_Win_create)

int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win *win) {
    return win_create("MPI_Win_create_c", TDM_WIN_CREATE, base, size, disp_unit, info, comm, NULL,
                      win);
}
TDM_WEAK(MPI_Win_create_c)

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win) {
    return win_create("MPI_Win_allocate", TDM_WIN_ALLOCATE, NULL, size, disp_unit, info, comm,
                      baseptr, win);
}
TDM_WEAK(MPI_Win_allocate)

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win) {
    return win_create("MPI_Win_allocate_c", TDM_WIN_ALLOCATE, NULL, size, disp_unit, info, comm,
                      baseptr, win);
}
TDM_WEAK(MPI_Win_allocate_c)

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win) {
    return win_create("MPI_Win_allocate_shared", TDM_WIN_SHARED, NULL, size, disp_unit, info, comm,
                      baseptr, win);
}
TDM_WEAK(MPI_Win_allocate_shared)

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win) {
    return win_create("MPI_Win_allocate_shared_c", TDM_WIN_SHARED, NULL, size, disp_unit, info,
                      comm, baseptr, win);
}
TDM_WEAK(MPI_Win_allocate_shared_c)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    return win_create("MPI_Win_create_dynamic", TDM_WIN_DYNAMIC, NULL, 0, 1, info, comm, NULL, win);
}
TDM_WEAK(MPI_Win_create_dynamic)

int PMPI_Win_free(MPI_Win *win) {
    static const char fn[] = "MPI_Win_free";
    TDM_CHECK_INIT(fn);
    if (!win)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "win is NULL");
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, *win, mw);
    tdm_rma_rc_t rc = tdm_rma_free_check(mw->w);
    if (rc != TDM_RMA_OK)
        return tdm_mpi_win_rma_err(mw, rc, fn);
    int arc = tdm_attr_delete_all(TDM_ATTR_WIN, &mw->attrs, mw->handle);
    if (arc > 0)
        return tdm_mpi_win_err(mw, arc & 0x7f, fn, "an attribute's delete callback failed");
    rc = tdm_rma_win_free(mw->w);
    if (rc != TDM_RMA_OK)
        return tdm_mpi_win_rma_err(mw, rc, fn);
    tdm_mpi_errh_release(mw->errhandler);
    tdm_info_free(mw->hints);
    handle_drop(mw);
    free(mw);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_free)

/* ---- queries ---- */

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group) {
    static const char fn[] = "MPI_Win_get_group";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    TDM_CHECK_PTR_WIN(fn, mw, group, "group");
    tdm_comm_t *c = mw->w->comm;
    tdm_group_t *g = tdm_group_new(tdm_rankmap_share(&c->map), c->rank);
    if (!g)
        return tdm_mpi_win_err(mw, MPI_ERR_NO_MEM, fn, "out of memory for a group");
    g->session = c->session;
    *group = g->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_get_group)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
    static const char fn[] = "MPI_Win_set_info";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    tdm_info_t *in;
    TDM_GET_INFO_OR_NULL_WIN(fn, mw, info, in);
    for (int i = 0; in && i < in->n; i++) {
        const char *k = in->e[i].key, *v = in->e[i].val;
        /* what the window was created with stays; the hints it can change take effect */
        if (!strcmp(k, "accumulate_ordering")) {
            mw->w->acc_ordered = strcmp(v, "none") != 0;
        } else if (!strcmp(k, "accumulate_ops")) {
            if (strcmp(v, "same_op") && strcmp(v, "same_op_no_op"))
                continue;
            mw->w->acc_ops = !strcmp(v, "same_op");
        } else if (strcmp(k, "no_locks") && strcmp(k, "same_size") && strcmp(k, "same_disp_unit")) {
            continue;
        }
        if (tdm_info_set(mw->hints, k, v))
            return tdm_mpi_win_err(mw, MPI_ERR_NO_MEM, fn, "out of memory for the hints");
    }
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used) {
    static const char fn[] = "MPI_Win_get_info";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    TDM_CHECK_PTR_WIN(fn, mw, info_used, "info_used");
    tdm_info_t *out = tdm_info_dup(mw->hints, true);
    if (!out)
        return tdm_mpi_win_err(mw, MPI_ERR_NO_MEM, fn, "out of memory for an info object");
    *info_used = out->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_get_info)

int PMPI_Win_set_name(MPI_Win win, const char *win_name) {
    static const char fn[] = "MPI_Win_set_name";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    TDM_CHECK_PTR_WIN(fn, mw, win_name, "win_name");
    snprintf(mw->name, sizeof(mw->name), "%s", win_name);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen) {
    static const char fn[] = "MPI_Win_get_name";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    if (!win_name || !resultlen)
        return tdm_mpi_win_err(mw, MPI_ERR_ARG, fn, "%s is NULL",
                               win_name ? "resultlen" : "win_name");
    snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", mw->name);
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_get_name)

static int shared_query(const char *fn, MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *unit,
                        void *baseptr) {
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= mw->w->size))
        return tdm_mpi_win_err(mw, MPI_ERR_RANK, fn, "invalid rank %d (window of size %d)", rank,
                               mw->w->size);
    if (!size || !unit || !baseptr)
        return tdm_mpi_win_err(mw, MPI_ERR_ARG, fn, "%s is NULL",
                               !size   ? "size"
                               : !unit ? "disp_unit"
                                       : "baseptr");
    size_t b;
    ptrdiff_t u;
    void *p;
    tdm_rma_rc_t rc = tdm_rma_shared_query(mw->w, rank == MPI_PROC_NULL ? -1 : rank, &b, &u, &p);
    if (rc != TDM_RMA_OK)
        return tdm_mpi_win_rma_err(mw, rc, fn);
    *size = (MPI_Aint)b;
    *unit = (MPI_Aint)u;
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr) {
    MPI_Aint u = 0;
    int err = shared_query("MPI_Win_shared_query", win, rank, size, disp_unit ? &u : NULL, baseptr);
    if (err == MPI_SUCCESS)
        *disp_unit = (int)u;
    return err;
}
TDM_WEAK(MPI_Win_shared_query)

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                            void *baseptr) {
    return shared_query("MPI_Win_shared_query_c", win, rank, size, disp_unit, baseptr);
}
TDM_WEAK(MPI_Win_shared_query_c)

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) {
    static const char fn[] = "MPI_Win_attach";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    if (mw->w->flavor != TDM_WIN_DYNAMIC)
        return tdm_mpi_win_err(mw, MPI_ERR_RMA_FLAVOR, fn,
                               "the window was not made by MPI_Win_create_dynamic");
    if (size < 0)
        return tdm_mpi_win_err(mw, MPI_ERR_SIZE, fn, "invalid size %lld", (long long)size);
    if (!base && size > 0)
        return tdm_mpi_win_err(mw, MPI_ERR_RMA_ATTACH, fn, "base is NULL");
    if (size == 0)
        return MPI_SUCCESS;
    tdm_rma_rc_t rc = tdm_rma_attach(mw->w, base, (size_t)size);
    return rc == TDM_RMA_OK ? MPI_SUCCESS : tdm_mpi_win_rma_err(mw, rc, fn);
}
TDM_WEAK(MPI_Win_attach)

int PMPI_Win_detach(MPI_Win win, const void *base) {
    static const char fn[] = "MPI_Win_detach";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    if (mw->w->flavor != TDM_WIN_DYNAMIC)
        return tdm_mpi_win_err(mw, MPI_ERR_RMA_FLAVOR, fn,
                               "the window was not made by MPI_Win_create_dynamic");
    tdm_rma_rc_t rc = tdm_rma_detach(mw->w, base);
    return rc == TDM_RMA_OK ? MPI_SUCCESS : tdm_mpi_win_rma_err(mw, rc, fn);
}
TDM_WEAK(MPI_Win_detach)

/* ---- attributes ---- */

/* An attr.c result as an MPI error (on the window when there is one). */
static int attr_error(tdm_mpi_win_t *mw, int rc, int keyval, const char *fn) {
    if (rc > 0) /* a callback's own code goes back as it is */
        return mw ? tdm_mpi_win_err(mw, rc & 0x7f, fn, "an attribute callback returned %d", rc)
                  : rc;
    int cls = rc == TDM_ATTR_EKEYVAL  ? MPI_ERR_KEYVAL
              : rc == TDM_ATTR_ENOMEM ? MPI_ERR_NO_MEM
                                      : MPI_ERR_OTHER;
    const char *why = rc == TDM_ATTR_EKEYVAL  ? "not a window keyval, or freed"
                      : rc == TDM_ATTR_ENOMEM ? "out of memory"
                                              : "a callback returned a negative code";
    if (mw)
        return tdm_mpi_win_err(mw, cls, fn, "keyval %#x: %s", (unsigned)keyval, why);
    return tdm_mpi_err(NULL, cls, fn, "keyval %#x: %s", (unsigned)keyval, why);
}

/* A keyval's error: no window, so the World Model's handler. */
static int keyval_error(int rc, int keyval, const char *fn) {
    return attr_error(NULL, rc, keyval, fn);
}

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state) {
    return tdm_mpi_keyval_create("MPI_Win_create_keyval", TDM_ATTR_WIN,
                                 (tdm_attr_copy_fn_t *)win_copy_attr_fn,
                                 (tdm_attr_delete_fn_t *)win_delete_attr_fn, extra_state,
                                 win_keyval, "win_keyval", keyval_error);
}
TDM_WEAK(MPI_Win_create_keyval)

int PMPI_Win_free_keyval(int *win_keyval) {
    return tdm_mpi_keyval_free("MPI_Win_free_keyval", TDM_ATTR_WIN, win_keyval, "win_keyval",
                               keyval_error);
}
TDM_WEAK(MPI_Win_free_keyval)

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val) {
    static const char fn[] = "MPI_Win_set_attr";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    if (tdm_attr_keyval_builtin(TDM_ATTR_WIN, win_keyval))
        return tdm_mpi_win_err(mw, MPI_ERR_KEYVAL, fn, "predefined attribute %#x cannot be set",
                               (unsigned)win_keyval);
    int rc =
        tdm_attr_set(TDM_ATTR_WIN, &mw->attrs, mw->handle, win_keyval, attribute_val, TDM_ATTR_PTR);
    return rc ? attr_error(mw, rc, win_keyval, fn) : MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_set_attr)

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag) {
    static const char fn[] = "MPI_Win_get_attr";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    if (!attribute_val || !flag)
        return tdm_mpi_win_err(mw, MPI_ERR_ARG, fn, "%s is NULL",
                               attribute_val ? "flag" : "attribute_val");
    if (tdm_attr_keyval_builtin(TDM_ATTR_WIN, win_keyval)) {
        void *p;
        switch (win_keyval) {
        case MPI_WIN_BASE: /* the base itself, not a pointer to it (MPI-4.1 12.2.6) */
            p = mw->w->flavor == TDM_WIN_DYNAMIC ? MPI_BOTTOM : mw->w->base;
            break;
        case MPI_WIN_SIZE:
            p = &mw->attr_size;
            break;
        case MPI_WIN_DISP_UNIT:
            p = &mw->attr_disp_unit;
            break;
        case MPI_WIN_CREATE_FLAVOR:
            p = &mw->attr_flavor;
            break;
        case MPI_WIN_MODEL:
            p = &mw->attr_model;
            break;
        default:
            return tdm_mpi_win_err(mw, MPI_ERR_KEYVAL, fn, "invalid keyval %#x",
                                   (unsigned)win_keyval);
        }
        *(void **)attribute_val = p;
        *flag = 1;
        return MPI_SUCCESS;
    }
    int rc = tdm_attr_get(TDM_ATTR_WIN, &mw->attrs, win_keyval, attribute_val, flag, TDM_ATTR_PTR);
    return rc ? attr_error(mw, rc, win_keyval, fn) : MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_get_attr)

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
    static const char fn[] = "MPI_Win_delete_attr";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    if (tdm_attr_keyval_builtin(TDM_ATTR_WIN, win_keyval))
        return tdm_mpi_win_err(mw, MPI_ERR_KEYVAL, fn, "predefined attribute %#x cannot be deleted",
                               (unsigned)win_keyval);
    int rc = tdm_attr_delete(TDM_ATTR_WIN, &mw->attrs, mw->handle, win_keyval);
    return rc ? attr_error(mw, rc, win_keyval, fn) : MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_delete_attr)

/* ---- synchronization ---- */

#define CHECK_ASSERT(_fn, _mw, _assert, _allowed, _what)                                           \
    do {                                                                                           \
        if (TDM_UNLIKELY((_assert) & ~(_allowed)))                                                 \
            return tdm_mpi_win_err(_mw, MPI_ERR_ASSERT, _fn,                                       \
                                   "invalid assert %#x (%s takes only %s)", (unsigned)(_assert),   \
                                   _fn, _what);                                                    \
    } while (0)

#define CHECK_TARGET(_fn, _mw, _rank)                                                              \
    do {                                                                                           \
        if (TDM_UNLIKELY(((_rank) < 0 || (_rank) >= (_mw)->w->size) && (_rank) != MPI_PROC_NULL))  \
            return tdm_mpi_win_err(_mw, MPI_ERR_RANK, _fn, "invalid rank %d (window of size %d)",  \
                                   (int)(_rank), (_mw)->w->size);                                  \
    } while (0)

#define RMA_CALL(_fn, _mw, _call)                                                                  \
    do {                                                                                           \
        tdm_rma_rc_t rc_ = (_call);                                                                \
        if (TDM_UNLIKELY(rc_ != TDM_RMA_OK))                                                       \
            return tdm_mpi_win_rma_err(_mw, rc_, _fn);                                             \
        return MPI_SUCCESS;                                                                        \
    } while (0)

int PMPI_Win_fence(int assert, MPI_Win win) {
    static const char fn[] = "MPI_Win_fence";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    CHECK_ASSERT(fn, mw, assert,
                 MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
                 "MPI_MODE_NOSTORE, NOPUT, NOPRECEDE and NOSUCCEED");
    RMA_CALL(fn, mw, tdm_rma_fence(mw->w, assert));
}
TDM_WEAK(MPI_Win_fence)

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
    static const char fn[] = "MPI_Win_lock";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return tdm_mpi_win_err(mw, MPI_ERR_LOCKTYPE, fn,
                               "invalid lock_type %d (MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE)",
                               lock_type);
    CHECK_TARGET(fn, mw, rank);
    CHECK_ASSERT(fn, mw, assert, MPI_MODE_NOCHECK, "MPI_MODE_NOCHECK");
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    RMA_CALL(fn, mw,
             tdm_rma_lock(
                 mw->w, lock_type == MPI_LOCK_SHARED ? TDM_RMA_LOCK_SHARED : TDM_RMA_LOCK_EXCLUSIVE,
                 rank, assert));
}
TDM_WEAK(MPI_Win_lock)

int PMPI_Win_unlock(int rank, MPI_Win win) {
    static const char fn[] = "MPI_Win_unlock";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    CHECK_TARGET(fn, mw, rank);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    RMA_CALL(fn, mw, tdm_rma_unlock(mw->w, rank));
}
TDM_WEAK(MPI_Win_unlock)

int PMPI_Win_lock_all(int assert, MPI_Win win) {
    static const char fn[] = "MPI_Win_lock_all";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    CHECK_ASSERT(fn, mw, assert, MPI_MODE_NOCHECK, "MPI_MODE_NOCHECK");
    RMA_CALL(fn, mw, tdm_rma_lock_all(mw->w, assert));
}
TDM_WEAK(MPI_Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win) {
    static const char fn[] = "MPI_Win_unlock_all";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    RMA_CALL(fn, mw, tdm_rma_unlock_all(mw->w));
}
TDM_WEAK(MPI_Win_unlock_all)

static __attribute__((noinline)) int flush_checked(const char *fn, MPI_Win win, int rank,
                                                   bool local) {
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    CHECK_TARGET(fn, mw, rank);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    RMA_CALL(fn, mw, tdm_rma_flush(mw->w, rank, local));
}

static inline int flush(const char *fn, MPI_Win win, int rank, bool local) {
    tdm_mpi_win_t *mw = tdm_mpi_win_get(win);
    if (TDM_LIKELY(mw && tdm_mpi.users && tdm_rma_flush_direct(mw->w, rank))) {
        tdm_p2p_poll_now_and_then(); /* the common case; anything else is checked in full */
        return MPI_SUCCESS;
    }
    return flush_checked(fn, win, rank, local);
}

int PMPI_Win_flush(int rank, MPI_Win win) {
    return flush("MPI_Win_flush", win, rank, false);
}
TDM_WEAK(MPI_Win_flush)

int PMPI_Win_flush_local(int rank, MPI_Win win) {
    return flush("MPI_Win_flush_local", win, rank, true);
}
TDM_WEAK(MPI_Win_flush_local)

int PMPI_Win_flush_all(MPI_Win win) {
    static const char fn[] = "MPI_Win_flush_all";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    RMA_CALL(fn, mw, tdm_rma_flush(mw->w, -1, false));
}
TDM_WEAK(MPI_Win_flush_all)

int PMPI_Win_flush_local_all(MPI_Win win) {
    static const char fn[] = "MPI_Win_flush_local_all";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    RMA_CALL(fn, mw, tdm_rma_flush(mw->w, -1, true));
}
TDM_WEAK(MPI_Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win) {
    tdm_mpi_win_t *mw;
    TDM_GET_WIN("MPI_Win_sync", win, mw);
    tdm_rma_sync(mw->w);
    tdm_p2p_poll_now_and_then();
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_sync)

/* The window ranks of a group's members (malloc'ed); an error code on failure. */
static int group_ranks(const char *fn, tdm_mpi_win_t *mw, MPI_Group group, int **ranks_p,
                       int *n_p) {
    tdm_group_t *g = tdm_group_get(group);
    if (!g || group == MPI_GROUP_NULL)
        return tdm_mpi_win_err(mw, MPI_ERR_GROUP, fn, "invalid group (handle %#x)",
                               (unsigned)group);
    int n = g->map.n, *r = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!r)
        return tdm_mpi_win_err(mw, MPI_ERR_NO_MEM, fn, "out of memory for the group's ranks");
    for (int i = 0; i < n; i++) {
        int world = tdm_rankmap_world(&g->map, i);
        r[i] = tdm_rankmap_find(&mw->w->comm->map, world);
        if (r[i] < 0) {
            free(r);
            return tdm_mpi_win_err(mw, MPI_ERR_GROUP, fn,
                                   "member %d of the group (world rank %d) is not in the window", i,
                                   world);
        }
    }
    *ranks_p = r;
    *n_p = n;
    return MPI_SUCCESS;
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
    static const char fn[] = "MPI_Win_post";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    CHECK_ASSERT(fn, mw, assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT,
                 "MPI_MODE_NOCHECK, NOSTORE and NOPUT");
    int *r, n;
    int err = group_ranks(fn, mw, group, &r, &n);
    if (err)
        return err;
    tdm_rma_rc_t rc = tdm_rma_post_group(mw->w, r, n, assert);
    free(r);
    return rc == TDM_RMA_OK ? MPI_SUCCESS : tdm_mpi_win_rma_err(mw, rc, fn);
}
TDM_WEAK(MPI_Win_post)

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
    static const char fn[] = "MPI_Win_start";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    CHECK_ASSERT(fn, mw, assert, MPI_MODE_NOCHECK, "MPI_MODE_NOCHECK");
    int *r, n;
    int err = group_ranks(fn, mw, group, &r, &n);
    if (err)
        return err;
    tdm_rma_rc_t rc = tdm_rma_start(mw->w, r, n, assert);
    free(r);
    return rc == TDM_RMA_OK ? MPI_SUCCESS : tdm_mpi_win_rma_err(mw, rc, fn);
}
TDM_WEAK(MPI_Win_start)

int PMPI_Win_complete(MPI_Win win) {
    static const char fn[] = "MPI_Win_complete";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    RMA_CALL(fn, mw, tdm_rma_complete(mw->w));
}
TDM_WEAK(MPI_Win_complete)

int PMPI_Win_wait(MPI_Win win) {
    static const char fn[] = "MPI_Win_wait";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    RMA_CALL(fn, mw, tdm_rma_wait(mw->w, false, NULL));
}
TDM_WEAK(MPI_Win_wait)

int PMPI_Win_test(MPI_Win win, int *flag) {
    static const char fn[] = "MPI_Win_test";
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    TDM_CHECK_PTR_WIN(fn, mw, flag, "flag");
    bool done = false;
    tdm_rma_rc_t rc = tdm_rma_wait(mw->w, true, &done);
    if (rc != TDM_RMA_OK)
        return tdm_mpi_win_rma_err(mw, rc, fn);
    *flag = done;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Win_test)
