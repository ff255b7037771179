/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-sided operations: Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
 * Compare_and_swap, their request forms and their large-count (_c) forms. One
 * check for all of them (rma_call), then tdm_rma_post; src/rma checks what needs the
 * target's window (the epoch, the range, attached memory).
 */
#include "win.h"
#include "../coll/coll.h"

#include <stdatomic.h>
#include <string.h>

_Static_assert((int)TDM_RMA_OP_SUM == (int)TDM_OP_SUM && (int)TDM_RMA_OP_BAND == (int)TDM_OP_BAND &&
                   (int)TDM_RMA_OP_BOR == (int)TDM_OP_BOR &&
                   (int)TDM_RMA_OP_BXOR == (int)TDM_OP_BXOR &&
                   (int)TDM_RMA_OP_REPLACE == (int)TDM_OP_REPLACE &&
                   (int)TDM_RMA_OP_NO_OP == (int)TDM_OP_NO_OP,
               "op codes shared with src/rma");

typedef struct call {
    tdm_rma_kind_t kind;
    const void *obuf;
    MPI_Count ocount;
    MPI_Datatype otype;
    void *rbuf;
    MPI_Count rcount;
    MPI_Datatype rtype;
    const void *cbuf;
    int target;
    MPI_Aint disp;
    MPI_Count tcount;
    MPI_Datatype ttype;
    MPI_Op op;
} call_t;

#define GET_DT(_fn, _mw, _handle, _what, _var)                                                     \
    do {                                                                                           \
        (_var) = tdm_dtype_get(_handle);                                                           \
        if (TDM_UNLIKELY(!(_var)))                                                                 \
            return tdm_mpi_win_err(_mw, MPI_ERR_TYPE, _fn, "invalid %s (handle %#x)", _what,       \
                                   (unsigned)(_handle));                                           \
        if (TDM_UNLIKELY(!(_var)->committed))                                                      \
            return tdm_mpi_win_err(_mw, MPI_ERR_TYPE, _fn,                                         \
                                   "%s %#x is not committed (call MPI_Type_commit)", _what,        \
                                   (unsigned)(_handle));                                           \
    } while (0)

#define CHECK_CNT(_fn, _mw, _count, _what)                                                         \
    TDM_CHECK_NONNEG_BY(tdm_mpi_win_err, _mw, _fn, MPI_ERR_COUNT, _count, _what, "")

static bool is_acc(tdm_rma_kind_t k) {
    return k == TDM_RMA_ACC || k == TDM_RMA_GACC || k == TDM_RMA_FOP;
}

/* Is predefined `op` defined on dt's predefined type (dt not empty)? tdm_op_valid_for asks
 * the reduction kernels, tens of instructions; the last answer is kept, its question and
 * answer in one word so that threads see them whole (0 is right too: no basic type). */
static bool op_valid(const tdm_op_t *op, const tdm_dtype_t *dt) {
    static _Atomic uint64_t last;
    uint64_t key = (uint64_t)(uint32_t)dt->basic << 9 | (uint64_t)(op->code & 0xff) << 1;
    uint64_t v = atomic_load_explicit(&last, memory_order_relaxed);
    if ((v & ~(uint64_t)1) == key)
        return v & 1;
    bool ok = tdm_op_valid_for(op, dt);
    atomic_store_explicit(&last, key | ok, memory_order_relaxed);
    return ok;
}

/* Out of line, so that the fast paths before it do not pay for its frame. */
static __attribute__((noinline)) int rma_call(const char *fn, call_t *c, MPI_Win win,
                                              MPI_Request *request, bool want_req) {
    tdm_mpi_win_t *mw;
    TDM_GET_WIN(fn, win, mw);
    tdm_win_t *w = mw->w;
    tdm_dtype_t *odt = NULL, *rdt = NULL, *tdt;
    tdm_op_t *op = NULL;
    bool uses_origin = c->kind != TDM_RMA_GET,
         uses_result = c->rbuf != NULL || c->kind == TDM_RMA_GET;
    if (is_acc(c->kind) || c->kind == TDM_RMA_CAS) {
        if (c->kind != TDM_RMA_CAS) {
            op = tdm_op_get(c->op);
            if (!op)
                return tdm_mpi_win_err(mw, MPI_ERR_OP, fn, "invalid op (handle %#x)",
                                       (unsigned)c->op);
            if (!op->predefined)
                return tdm_mpi_win_err(mw, MPI_ERR_OP, fn,
                                       "op %#x is user-defined: one-sided accumulates take "
                                       "predefined ops only (MPI-4.1 12.3.4)",
                                       (unsigned)c->op);
            if (op->code == TDM_OP_NO_OP && c->kind == TDM_RMA_ACC)
                return tdm_mpi_win_err(mw, MPI_ERR_OP, fn,
                                       "op MPI_NO_OP is for the fetching accumulates; "
                                       "%s takes a predefined op or MPI_REPLACE (MPI-4.1 12.3.4)",
                                       fn);
            if (op->code == TDM_OP_NO_OP)
                uses_origin = false; /* the origin buffer is ignored */
        }
    }
    if (uses_origin) {
        CHECK_CNT(fn, mw, c->ocount, "origin_count");
        GET_DT(fn, mw, c->otype, "origin_datatype", odt);
    }
    /* a handle given twice names one type: it is looked up and checked once */
    if (uses_result) {
        CHECK_CNT(fn, mw, c->rcount, "result_count");
        if (odt && c->rtype == c->otype)
            rdt = odt;
        else
            GET_DT(fn, mw, c->rtype, c->kind == TDM_RMA_GET ? "origin_datatype" : "result_datatype",
                   rdt);
    }
    CHECK_CNT(fn, mw, c->tcount, "target_count");
    if (odt && c->ttype == c->otype)
        tdt = odt;
    else if (rdt && c->ttype == c->rtype)
        tdt = rdt;
    else
        GET_DT(fn, mw, c->ttype, "target_datatype", tdt);
    if (TDM_UNLIKELY((c->target < 0 || c->target >= w->size) && c->target != MPI_PROC_NULL))
        return tdm_mpi_win_err(mw, MPI_ERR_RANK, fn, "invalid target_rank %d (window of size %d)",
                               c->target, w->size);
    if (TDM_UNLIKELY(c->disp < 0))
        return tdm_mpi_win_err(mw, MPI_ERR_DISP, fn, "invalid target_disp %lld (negative)",
                               (long long)c->disp);
    if (want_req && !request)
        return tdm_mpi_win_err(mw, MPI_ERR_REQUEST, fn, "request argument is NULL");
    size_t tbytes = (size_t)c->tcount * tdt->size;
    if (is_acc(c->kind) || c->kind == TDM_RMA_CAS) {
        /* MPI-4.1 12.3.4: every datatype of an accumulate is made of one predefined type,
         * the same on each side; Fetch_and_op and Compare_and_swap take one element */
        if (!tdt->basic)
            return tdm_mpi_win_err(mw, MPI_ERR_TYPE, fn,
                                   "target_datatype %#x is made of more than one predefined type",
                                   (unsigned)c->ttype);
        if ((odt && odt->basic != tdt->basic) || (rdt && rdt->basic != tdt->basic))
            return tdm_mpi_win_err(
                mw, MPI_ERR_TYPE, fn,
                "the %s datatype is not made of target_datatype's predefined type",
                odt && odt->basic != tdt->basic ? "origin" : "result");
        if ((c->kind == TDM_RMA_FOP || c->kind == TDM_RMA_CAS) && !tdt->predefined)
            return tdm_mpi_win_err(mw, MPI_ERR_TYPE, fn, "datatype %#x is not predefined",
                                   (unsigned)c->ttype);
        if (c->kind == TDM_RMA_CAS &&
            (tdm_op_basic_class(tdt->basic) == 2 || tdt->nelems != 1 || tdt->size > 8))
            return tdm_mpi_win_err(mw, MPI_ERR_TYPE, fn,
                                   "datatype %#x is not an integer, logical or byte type",
                                   (unsigned)c->ttype);
        /* an empty accumulate applies nothing (MPICH takes MPI_SUM on MPI_BYTE then) */
        if (tbytes && op && op->code != TDM_OP_REPLACE && op->code != TDM_OP_NO_OP &&
            !op_valid(op, tdt))
            return tdm_mpi_win_err(mw, MPI_ERR_OP, fn, "op %s is not defined on datatype %#x",
                                   tdm_op_name(op), (unsigned)c->ttype);
    }
    if (odt && (size_t)c->ocount * odt->size != tbytes)
        return tdm_mpi_win_err(mw, MPI_ERR_TYPE, fn,
                               "the origin's %lld bytes do not match the target's %zu "
                               "(origin_count x origin_datatype against target_count x "
                               "target_datatype)",
                               (long long)((size_t)c->ocount * odt->size), tbytes);
    if (rdt && (size_t)c->rcount * rdt->size != tbytes)
        return tdm_mpi_win_err(mw, MPI_ERR_TYPE, fn,
                               "the result buffer's %lld bytes do not match the target's %zu",
                               (long long)((size_t)c->rcount * rdt->size), tbytes);
    if (TDM_UNLIKELY(c->target == MPI_PROC_NULL)) {
        if (!want_req)
            return MPI_SUCCESS;
        tdm_req_t *r = tdm_req_alloc(TDM_REQ_OTHER);
        if (!r)
            return tdm_mpi_win_err(mw, MPI_ERR_NO_MEM, fn, "out of requests");
        r->status.source = MPI_PROC_NULL;
        r->status.tag = MPI_ANY_TAG;
        r->done = 1;
        *request = tdm_req_handle(r);
        return MPI_SUCCESS;
    }
    tdm_rma_args_t a = {.kind = (uint8_t)c->kind,
                        .op = op ? op->code : 0,
                        .obuf = uses_origin ? c->obuf : NULL,
                        .ocount = uses_origin ? (size_t)c->ocount : 0,
                        .odt = odt,
                        .rbuf = uses_result ? c->rbuf : NULL,
                        .rcount = uses_result ? (size_t)c->rcount : 0,
                        .rdt = rdt,
                        .cbuf = c->cbuf,
                        .target = c->target,
                        .disp = (int64_t)c->disp,
                        .tcount = (size_t)c->tcount,
                        .tdt = tdt};
    tdm_req_t *r = NULL;
    tdm_rma_rc_t rc = tdm_rma_post(w, &a, want_req ? &r : NULL);
    if (TDM_UNLIKELY(rc != TDM_RMA_OK))
        return tdm_mpi_win_rma_err(mw, rc, fn);
    if (want_req)
        *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}

/* ---- Put, Get ---- */

/* The common case first: one committed contiguous type, the same on both sides, to a
 * window whose direct path takes it (src/rma). Every check of rma_call holds then (an
 * initialized library, a known window, counts > 0, committed types of equal size, a rank
 * of the window, disp >= 0); anything else, errors included, goes through rma_call. */
static inline bool put_get_fast(bool put, const void *buf, MPI_Count ocount, MPI_Datatype otype,
                                int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                                MPI_Win win) {
    if (otype != ttype || ocount != tcount || ocount <= 0 || disp < 0 ||
        TDM_UNLIKELY(tdm_mpi.users == 0))
        return false;
    tdm_mpi_win_t *mw = tdm_mpi_win_get(win);
    tdm_dtype_t *dt = tdm_dtype_get(otype);
    size_t bytes;
    if (!mw || !dt || !dt->committed || !dt->contig ||
        __builtin_mul_overflow((size_t)ocount, dt->size, &bytes))
        return false;
    return tdm_rma_put_get_direct(mw->w, put, (char *)(uintptr_t)buf + dt->true_lb, bytes, target,
                                  (int64_t)disp);
}

/* Every Put, Get and accumulate form once its fast path declined: the binding's arguments
 * as one call for rma_call (a buffer the form does not have is NULL, its count 0). */
static inline int rma_start(const char *fn, tdm_rma_kind_t kind, const void *obuf, MPI_Count ocount,
                            MPI_Datatype otype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                            int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                            MPI_Op op, MPI_Win win, MPI_Request *request, bool want_req) {
    call_t c = {.kind = kind,
                .obuf = obuf,
                .ocount = ocount,
                .otype = otype,
                .rbuf = rbuf,
                .rcount = rcount,
                .rtype = rtype,
                .target = target,
                .disp = disp,
                .tcount = tcount,
                .ttype = ttype,
                .op = op};
    return rma_call(fn, &c, win, request, want_req);
}

/* The target side, named alike by every form. */
#define TARGET_ARGS target_rank, target_disp, target_count, target_datatype

/* Put, Rput, Get, Rget, with an int count and, as <name>_c, with an MPI_Count one. */
#define PUT_GET_FORMS(_s, _C, _D)                                                                  \
    int PMPI_Put##_s(const void *origin_addr, _C origin_count, MPI_Datatype origin_datatype,       \
                     int target_rank, MPI_Aint target_disp, _C target_count,                       \
                     MPI_Datatype target_datatype, MPI_Win win) {                                  \
        if (put_get_fast(true, origin_addr, origin_count, origin_datatype, TARGET_ARGS, win))      \
            return MPI_SUCCESS;                                                                    \
        return rma_start("MPI_Put" #_s, TDM_RMA_PUT, origin_addr, origin_count, origin_datatype,   \
                         NULL, 0, MPI_DATATYPE_NULL, TARGET_ARGS, MPI_OP_NULL, win, NULL, false);  \
    }                                                                                              \
    TDM_WEAK(MPI_Put##_s)                                                                          \
    int PMPI_Rput##_s(const void *origin_addr, _C origin_count, MPI_Datatype origin_datatype,      \
                      int target_rank, MPI_Aint target_disp, _C target_count,                      \
                      MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request) {           \
        return rma_start("MPI_Rput" #_s, TDM_RMA_PUT, origin_addr, origin_count, origin_datatype,  \
                         NULL, 0, MPI_DATATYPE_NULL, TARGET_ARGS, MPI_OP_NULL, win, request,       \
                         true);                                                                    \
    }                                                                                              \
    TDM_WEAK(MPI_Rput##_s)                                                                         \
    int PMPI_Get##_s(void *origin_addr, _C origin_count, MPI_Datatype origin_datatype,             \
                     int target_rank, MPI_Aint target_disp, _C target_count,                       \
                     MPI_Datatype target_datatype, MPI_Win win) {                                  \
        if (put_get_fast(false, origin_addr, origin_count, origin_datatype, TARGET_ARGS, win))     \
            return MPI_SUCCESS;                                                                    \
        return rma_start("MPI_Get" #_s, TDM_RMA_GET, NULL, 0, MPI_DATATYPE_NULL, origin_addr,      \
                         origin_count, origin_datatype, TARGET_ARGS, MPI_OP_NULL, win, NULL,       \
                         false);                                                                   \
    }                                                                                              \
    TDM_WEAK(MPI_Get##_s)                                                                          \
    int PMPI_Rget##_s(void *origin_addr, _C origin_count, MPI_Datatype origin_datatype,            \
                      int target_rank, MPI_Aint target_disp, _C target_count,                      \
                      MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request) {           \
        return rma_start("MPI_Rget" #_s, TDM_RMA_GET, NULL, 0, MPI_DATATYPE_NULL, origin_addr,     \
                         origin_count, origin_datatype, TARGET_ARGS, MPI_OP_NULL, win, request,    \
                         true);                                                                    \
    }                                                                                              \
    TDM_WEAK(MPI_Rget##_s)
TDM_MPI_COUNT_FORMS(PUT_GET_FORMS)

/* ---- accumulates ---- */

/* Accumulate, Raccumulate, Get_accumulate, Rget_accumulate, and their _c forms. */
#define ACC_FORMS(_s, _C, _D)                                                                      \
    int PMPI_Accumulate##_s(const void *origin_addr, _C origin_count,                              \
                            MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,   \
                            _C target_count, MPI_Datatype target_datatype, MPI_Op op,              \
                            MPI_Win win) {                                                         \
        return rma_start("MPI_Accumulate" #_s, TDM_RMA_ACC, origin_addr, origin_count,             \
                         origin_datatype, NULL, 0, MPI_DATATYPE_NULL, TARGET_ARGS, op, win, NULL,  \
                         false);                                                                   \
    }                                                                                              \
    TDM_WEAK(MPI_Accumulate##_s)                                                                   \
    int PMPI_Raccumulate##_s(const void *origin_addr, _C origin_count,                             \
                             MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,  \
                             _C target_count, MPI_Datatype target_datatype, MPI_Op op,             \
                             MPI_Win win, MPI_Request *request) {                                  \
        return rma_start("MPI_Raccumulate" #_s, TDM_RMA_ACC, origin_addr, origin_count,            \
                         origin_datatype, NULL, 0, MPI_DATATYPE_NULL, TARGET_ARGS, op, win,        \
                         request, true);                                                           \
    }                                                                                              \
    TDM_WEAK(MPI_Raccumulate##_s)                                                                  \
    int PMPI_Get_accumulate##_s(                                                                   \
        const void *origin_addr, _C origin_count, MPI_Datatype origin_datatype, void *result_addr, \
        _C result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,      \
        _C target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {                   \
        return rma_start("MPI_Get_accumulate" #_s, TDM_RMA_GACC, origin_addr, origin_count,        \
                         origin_datatype, result_addr, result_count, result_datatype, TARGET_ARGS, \
                         op, win, NULL, false);                                                    \
    }                                                                                              \
    TDM_WEAK(MPI_Get_accumulate##_s)                                                               \
    int PMPI_Rget_accumulate##_s(                                                                  \
        const void *origin_addr, _C origin_count, MPI_Datatype origin_datatype, void *result_addr, \
        _C result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,      \
        _C target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,                     \
        MPI_Request *request) {                                                                    \
        return rma_start("MPI_Rget_accumulate" #_s, TDM_RMA_GACC, origin_addr, origin_count,       \
                         origin_datatype, result_addr, result_count, result_datatype, TARGET_ARGS, \
                         op, win, request, true);                                                  \
    }                                                                                              \
    TDM_WEAK(MPI_Rget_accumulate##_s)
TDM_MPI_COUNT_FORMS(ACC_FORMS)

/* Fetch_and_op and Compare_and_swap's common case, as put_get_fast: a predefined type and
 * op valid on it (the checks of rma_call), to a window whose direct path takes it. */
static inline bool atomic_fast(bool cas, const void *o, const void *cmp, void *r, MPI_Datatype type,
                               int target, MPI_Aint disp, MPI_Op mop, MPI_Win win) {
    if (disp < 0 || !r || TDM_UNLIKELY(tdm_mpi.users == 0))
        return false;
    tdm_mpi_win_t *mw = tdm_mpi_win_get(win);
    tdm_dtype_t *dt = tdm_dtype_get(type);
    if (!mw || !dt || !dt->predefined || !dt->basic)
        return false;
    int code = 0;
    if (cas) {
        if (tdm_op_basic_class(dt->basic) == 2 || dt->nelems != 1 || dt->size > 8)
            return false;
    } else {
        tdm_op_t *op = tdm_op_get(mop);
        if (!op || !op->predefined ||
            (op->code != TDM_OP_REPLACE && op->code != TDM_OP_NO_OP && !op_valid(op, dt)))
            return false;
        code = op->code;
    }
    return tdm_rma_atomic_direct(mw->w, cas, code, dt, o, cmp, r, target, (int64_t)disp);
}

/* Fetch_and_op and Compare_and_swap once their fast path declined: one element of
 * `datatype` on every side (cmp: Compare_and_swap's compare buffer, else NULL). */
static int atomic_start(const char *fn, tdm_rma_kind_t kind, const void *o, const void *cmp,
                        void *r, MPI_Datatype datatype, int target, MPI_Aint disp, MPI_Op op,
                        MPI_Win win) {
    call_t c = {.kind = kind,
                .obuf = o,
                .ocount = 1,
                .otype = datatype,
                .rbuf = r,
                .rcount = 1,
                .rtype = datatype,
                .cbuf = cmp,
                .target = target,
                .disp = disp,
                .tcount = 1,
                .ttype = datatype,
                .op = op};
    return rma_call(fn, &c, win, NULL, false);
}

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    if (atomic_fast(false, origin_addr, NULL, result_addr, datatype, target_rank, target_disp, op,
                    win))
        return MPI_SUCCESS;
    return atomic_start("MPI_Fetch_and_op", TDM_RMA_FOP, origin_addr, NULL, result_addr, datatype,
                        target_rank, target_disp, op, win);
}
TDM_WEAK(MPI_Fetch_and_op)

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Win win) {
    if (atomic_fast(true, origin_addr, compare_addr, result_addr, datatype, target_rank,
                    target_disp, MPI_OP_NULL, win))
        return MPI_SUCCESS;
    return atomic_start("MPI_Compare_and_swap", TDM_RMA_CAS, origin_addr, compare_addr, result_addr,
                        datatype, target_rank, target_disp, MPI_OP_NULL, win);
}
TDM_WEAK(MPI_Compare_and_swap)
