/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every RMA operation under one window kind and one synchronization, with exact
 * results. usage: ops KIND SYNC [N [PHASE]]
 *   KIND  create | allocate | shared | shared_noncontig | dynamic
 *   SYNC  fence (NOPRECEDE/NOPUT/NOSTORE/NOSUCCEED asserts) | fence0 (no asserts) |
 *         pscw | pscw_test (the target ends with MPI_Win_test) | pscw_nocheck |
 *         lock (shared) | lock_excl | lock_all | flush | flush_all | flush_local |
 *         flush_local_all (all in a Lock_all epoch) | win_sync (the target reads its
 *         memory inside the epoch after Flush_all, Barrier and Win_sync)
 *   N     elements per transfer (a multiple of 4, default 64); PHASE runs only the phases whose
 *         name contains it (for debugging)
 *
 * Every rank is an origin and targets every rank (itself too). Each rank's window
 * has one region per origin and a common region. A phase initialises the windows,
 * opens an epoch, issues one kind of operation to every target, closes it, and
 * checks the fetched values at the origin and the whole window at the target (the
 * parts no operation touched must keep their values). Phases: Put and Get (long
 * long, int, double), Accumulate with every predefined op (all origins into the
 * common region: the result does not depend on their order), MPI_REPLACE,
 * Get_accumulate (SUM, NO_OP, REPLACE, MAX, BXOR), Fetch_and_op with every op
 * twice on one element (the second fetch sees the first: accumulate ordering),
 * Compare_and_swap (a swap, a refused swap, a second swap), and in passive epochs
 * Rput/Rget/Raccumulate/Rget_accumulate completed by Wait/Test/Waitall/Waitany
 * (Rget's data is checked right after its Wait, inside the epoch; an Rput's buffer
 * is overwritten right after its Wait, before the epoch ends). Every phase runs
 * with contiguous buffers and with derived datatypes: the origin a vector of
 * stride 2, the target a vector of blocks of 2 with stride 3, the result an
 * indexed block of stride 3; the gaps must stay untouched on both sides.
 * After a flush (or the local flushes), origin buffers are overwritten before the
 * epoch ends: the target must still see what was there at the call.
 */
#include "rmatest.h"

enum sync_mode {
    S_FENCE,
    S_FENCE0,
    S_PSCW,
    S_PSCW_TEST,
    S_PSCW_NOCHECK,
    S_LOCK,
    S_LOCK_EXCL,
    S_LOCK_ALL,
    S_FLUSH,
    S_FLUSH_ALL,
    S_FLUSH_LOCAL,
    S_FLUSH_LOCAL_ALL,
    S_WIN_SYNC,
    S_NMODES
};
static const char *const sync_names[] = {
    "fence",    "fence0", "pscw",      "pscw_test",   "pscw_nocheck",    "lock",    "lock_excl",
    "lock_all", "flush",  "flush_all", "flush_local", "flush_local_all", "win_sync"};

enum base_type { T_LL, T_DBL, T_INT, T_2INT };
static const char *const bt_names[] = {"long long", "double", "int", "2int"};
static const int bt_size[] = {8, 8, 4, 8};

enum op_kind { P_PUT, P_GET, P_ACC, P_GACC, P_FOP, P_CAS, P_RPUT, P_RGET, P_RACC, P_RGACC };
static const char *const pk_names[] = {"put", "get",  "acc",  "gacc", "fop",
                                       "cas", "rput", "rget", "racc", "rgacc"};

typedef struct {
    int kind;
    int bt;
    MPI_Op op;  /* accumulates; MPI_OP_NULL otherwise */
    int common; /* every origin accumulates into the common region */
} phase_t;

typedef struct {
    long long a; /* the value (double: an integer value, exact) */
    int b;       /* the index of a 2int pair */
} val_t;

static int sync_mode, N;
static rt_win_t W;
static MPI_Aint REGB; /* bytes of one region */
static MPI_Group world_group;

static MPI_Datatype mpi_type(int bt) {
    switch (bt) {
    case T_LL:
        return MPI_LONG_LONG;
    case T_DBL:
        return MPI_DOUBLE;
    case T_INT:
        return MPI_INT;
    default:
        return MPI_2INT;
    }
}

static const char *op_name(MPI_Op op) {
    static const struct {
        MPI_Op op;
        const char *name;
    } t[] = {{MPI_SUM, "SUM"},         {MPI_PROD, "PROD"},     {MPI_MAX, "MAX"},
             {MPI_MIN, "MIN"},         {MPI_LAND, "LAND"},     {MPI_LOR, "LOR"},
             {MPI_LXOR, "LXOR"},       {MPI_BAND, "BAND"},     {MPI_BOR, "BOR"},
             {MPI_BXOR, "BXOR"},       {MPI_MAXLOC, "MAXLOC"}, {MPI_MINLOC, "MINLOC"},
             {MPI_REPLACE, "REPLACE"}, {MPI_NO_OP, "NO_OP"}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (t[i].op == op)
            return t[i].name;
    return "-";
}

static int is_logical(MPI_Op op) {
    return op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR;
}
static int is_bitwise(MPI_Op op) {
    return op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
}
static int is_loc(MPI_Op op) {
    return op == MPI_MAXLOC || op == MPI_MINLOC;
}

/* What the target holds at element `idx` of region `reg` before the phase. */
static val_t vinit(MPI_Op op, int t, int reg, long idx) {
    long g = (long)reg * 1000003L + idx;
    val_t v = {0, 0};
    if (op == MPI_PROD)
        v.a = 1 + (t + g) % 3;
    else if (is_logical(op))
        v.a = (t + g) % 3;
    else if (is_bitwise(op))
        v.a = (((long long)(t + 1) * 40503LL) ^ (g * 2654435761LL)) & 0xffffff;
    else if (is_loc(op))
        v.a = (t + g) % 5, v.b = 1000 + t;
    else
        v.a = ((long long)t * 7919 + g * 13) % 1000 - 300;
    return v;
}

/* What origin `o` sends to target `t` as its element `k`. */
static val_t vorig(MPI_Op op, int o, int t, long k) {
    val_t v = {0, 0};
    if (op == MPI_PROD)
        v.a = 1 + (o + 2 * k + t) % 3;
    else if (is_logical(op))
        v.a = (o + k + 2 * t) % 3;
    else if (is_bitwise(op))
        v.a = (((long long)(o + 3) * 2654435761LL) ^ (k * 40503LL) ^ t) & 0xffffff;
    else if (is_loc(op))
        v.a = (o * 3 + k + t) % 5, v.b = o;
    else
        v.a = (o + 1) * 1000 + (k % 1000) * 7 + (long long)t * 100;
    return v;
}

/* x op y (x at the target, y from the origin), as MPI defines it for the type. */
static val_t apply(MPI_Op op, int bt, val_t x, val_t y) {
    val_t r = x;
    if (op == MPI_REPLACE)
        return y;
    if (op == MPI_NO_OP)
        return x;
    if (op == MPI_SUM)
        r.a = x.a + y.a;
    else if (op == MPI_PROD)
        r.a = x.a * y.a;
    else if (op == MPI_MAX)
        r.a = x.a > y.a ? x.a : y.a;
    else if (op == MPI_MIN)
        r.a = x.a < y.a ? x.a : y.a;
    else if (op == MPI_LAND)
        r.a = (x.a != 0) && (y.a != 0);
    else if (op == MPI_LOR)
        r.a = (x.a != 0) || (y.a != 0);
    else if (op == MPI_LXOR)
        r.a = (x.a != 0) != (y.a != 0);
    else if (op == MPI_BAND)
        r.a = x.a & y.a;
    else if (op == MPI_BOR)
        r.a = x.a | y.a;
    else if (op == MPI_BXOR)
        r.a = x.a ^ y.a;
    else if (op == MPI_MAXLOC || op == MPI_MINLOC) {
        int better = op == MPI_MAXLOC ? y.a > x.a : y.a < x.a;
        if (better)
            r = y;
        else if (y.a == x.a)
            r.b = x.b < y.b ? x.b : y.b;
    }
    if (bt == T_INT || bt == T_2INT)
        r.a = (int)r.a;
    return r;
}

static void put_el(int bt, void *buf, long idx, val_t v) {
    char *p = (char *)buf + idx * bt_size[bt];
    switch (bt) {
    case T_LL: {
        long long x = v.a;
        memcpy(p, &x, 8);
        break;
    }
    case T_DBL: {
        double x = (double)v.a;
        memcpy(p, &x, 8);
        break;
    }
    case T_INT: {
        int x = (int)v.a;
        memcpy(p, &x, 4);
        break;
    }
    default: {
        int x[2] = {(int)v.a, v.b};
        memcpy(p, x, 8);
        break;
    }
    }
}

static val_t get_el(int bt, const void *buf, long idx) {
    const char *p = (const char *)buf + idx * bt_size[bt];
    val_t v = {0, 0};
    switch (bt) {
    case T_LL:
        memcpy(&v.a, p, 8);
        break;
    case T_DBL: {
        double x;
        memcpy(&x, p, 8);
        v.a = (long long)x;
        if ((double)v.a != x)
            v.a = 0x7eadbeefLL; /* not an integer: cannot be right */
        break;
    }
    case T_INT: {
        int x;
        memcpy(&x, p, 4);
        v.a = x;
        break;
    }
    default: {
        int x[2];
        memcpy(x, p, 8);
        v.a = x[0], v.b = x[1];
        break;
    }
    }
    return v;
}

static int val_eq(int bt, val_t x, val_t y) {
    return x.a == y.a && (bt != T_2INT || x.b == y.b);
}

/* ---- layouts: contiguous, or derived on each side --------------------------------------- */
static int derived;
static long oidx(long k) {
    return derived ? 2 * k : k;
}
static long tidx(long k) {
    return derived ? (k / 2) * 3 + k % 2 : k;
}
static long ridx(long k) {
    return derived ? 3 * k + 1 : k;
}

/* ---- synchronization ----------------------------------------------------------------- */
static int passive(void) {
    return sync_mode >= S_LOCK;
}

/* Local stores into the own window, then every origin may start. */
static void local_access_begin(void) {
    if (passive())
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, W.win));
}
static void local_access_end(void) {
    if (passive()) {
        OK(MPI_Win_unlock(rank, W.win));
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void epoch_open(int get_only) {
    switch (sync_mode) {
    case S_FENCE:
        OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | (get_only ? MPI_MODE_NOPUT : 0), W.win));
        break;
    case S_FENCE0:
        OK(MPI_Win_fence(0, W.win));
        break;
    case S_PSCW:
    case S_PSCW_TEST:
        OK(MPI_Win_post(world_group, get_only ? MPI_MODE_NOPUT : 0, W.win));
        OK(MPI_Win_start(world_group, 0, W.win));
        break;
    case S_PSCW_NOCHECK:
        /* NOCHECK on Start: every matching Post has completed (the barrier) */
        OK(MPI_Win_post(world_group, MPI_MODE_NOCHECK, W.win));
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_Win_start(world_group, MPI_MODE_NOCHECK, W.win));
        break;
    case S_LOCK:
    case S_LOCK_EXCL:
        break;
    default:
        OK(MPI_Win_lock_all(0, W.win));
        break;
    }
}

static void target_begin(int t) {
    if (sync_mode == S_LOCK)
        OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, W.win));
    else if (sync_mode == S_LOCK_EXCL)
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, W.win));
}

static void target_end(int t) {
    if (sync_mode == S_LOCK || sync_mode == S_LOCK_EXCL)
        OK(MPI_Win_unlock(t, W.win));
    else if (sync_mode == S_FLUSH)
        OK(MPI_Win_flush(t, W.win));
    else if (sync_mode == S_FLUSH_LOCAL)
        OK(MPI_Win_flush_local(t, W.win));
}

/* After the operations to every target; true when fetched values are there now. */
static int after_all_targets(void) {
    switch (sync_mode) {
    case S_FLUSH_ALL:
    case S_WIN_SYNC:
        OK(MPI_Win_flush_all(W.win));
        return 1;
    case S_FLUSH_LOCAL_ALL:
        OK(MPI_Win_flush_local_all(W.win));
        return 1;
    case S_LOCK:
    case S_LOCK_EXCL:
    case S_FLUSH:
    case S_FLUSH_LOCAL:
        return 1;
    default:
        return 0;
    }
}

static void check_window(const phase_t *ph);

static void epoch_close(const phase_t *ph) {
    switch (sync_mode) {
    case S_FENCE:
        OK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, W.win));
        break;
    case S_FENCE0:
        OK(MPI_Win_fence(0, W.win));
        break;
    case S_PSCW:
    case S_PSCW_NOCHECK:
        OK(MPI_Win_complete(W.win));
        OK(MPI_Win_wait(W.win));
        break;
    case S_PSCW_TEST: {
        OK(MPI_Win_complete(W.win));
        int flag = 0;
        while (!flag)
            OK(MPI_Win_test(W.win, &flag));
        break;
    }
    case S_LOCK:
    case S_LOCK_EXCL:
        break;
    case S_WIN_SYNC:
        /* the unified model: after the origins' Flush_all and a barrier, Win_sync
         * makes their updates visible to the target's loads inside the epoch */
        OK(MPI_Win_sync(W.win));
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_Win_sync(W.win));
        check_window(ph);
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_Win_unlock_all(W.win));
        break;
    default:
        OK(MPI_Win_unlock_all(W.win));
        break;
    }
}

/* ---- one phase ------------------------------------------------------------------------ */
static const MPI_Op fop_ops_int[] = {MPI_SUM,  MPI_PROD, MPI_MAX, MPI_MIN,  MPI_LAND,    MPI_LOR,
                                     MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE, MPI_NO_OP};
static const MPI_Op fop_ops_dbl[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_REPLACE, MPI_NO_OP};

static int fop_nops(int bt) {
    return bt == T_DBL ? 6 : 12;
}
static MPI_Op fop_op(int bt, int j) {
    return bt == T_DBL ? fop_ops_dbl[j] : fop_ops_int[j];
}

static char **obuf, **rbuf; /* per target: origin buffer, result buffer */
static size_t OBYTES, RBYTES;
static const unsigned char OPAT = 0x5a, RPAT = 0x77;
static MPI_Datatype ot, tt, rt;
static int oc, tc, rc;

/* CAS values: distinct from every initial value */
static val_t cas_val(int which, int o, int t) {
    val_t v = {100000LL * (which + 1) + o * 10 + t, 0};
    return v;
}

static MPI_Aint region_disp(int t, int reg) {
    return rt_disp(&W, t, (MPI_Aint)reg * REGB);
}

static void issue(const phase_t *ph, int t) {
    MPI_Datatype b = mpi_type(ph->bt);
    MPI_Aint dreg = region_disp(t, ph->common ? size : rank);
    MPI_Request req[64];
    int nreq = 0;
    switch (ph->kind) {
    case P_PUT:
        OK(MPI_Put(obuf[t], oc, ot, t, dreg, tc, tt, W.win));
        break;
    case P_GET:
        OK(MPI_Get(rbuf[t], rc, rt, t, dreg, tc, tt, W.win));
        break;
    case P_ACC:
        OK(MPI_Accumulate(obuf[t], oc, ot, t, dreg, tc, tt, ph->op, W.win));
        break;
    case P_GACC:
        OK(MPI_Get_accumulate(obuf[t], oc, ot, rbuf[t], rc, rt, t, dreg, tc, tt, ph->op, W.win));
        break;
    case P_FOP:
        /* element 2j gets op j twice (the 2 values at obuf 2j, 2j+1): separate
         * elements per op, since accumulate_ops defaults to same_op_no_op */
        for (int j = 0; j < fop_nops(ph->bt); j++)
            for (int r = 0; r < 2; r++)
                OK(MPI_Fetch_and_op(obuf[t] + (2 * j + r) * bt_size[ph->bt],
                                    rbuf[t] + (2 * j + r) * bt_size[ph->bt], b, t,
                                    dreg + (2 * j * bt_size[ph->bt]) / W.disp_unit,
                                    fop_op(ph->bt, j), W.win));
        break;
    case P_CAS: {
        /* element 0: init->X succeeds, init->Y is refused (holds X), X->Z succeeds;
         * element 2: a compare that does not match from the start */
        int es = bt_size[ph->bt];
        char *o = obuf[t], *r = rbuf[t];
        MPI_Aint d0 = dreg, d2 = dreg + (2 * es) / W.disp_unit;
        OK(MPI_Compare_and_swap(o + 0 * es, o + 1 * es, r + 0 * es, b, t, d0, W.win));
        OK(MPI_Compare_and_swap(o + 2 * es, o + 3 * es, r + 1 * es, b, t, d0, W.win));
        OK(MPI_Compare_and_swap(o + 4 * es, o + 5 * es, r + 2 * es, b, t, d0, W.win));
        OK(MPI_Compare_and_swap(o + 6 * es, o + 7 * es, r + 3 * es, b, t, d2, W.win));
        break;
    }
    case P_RPUT:
        OK(MPI_Rput(obuf[t], oc, ot, t, dreg, tc, tt, W.win, &req[nreq++]));
        OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
        CHECK(req[0] == MPI_REQUEST_NULL, "MPI_Wait left the Rput request");
        /* completed at the origin: the buffer may be reused at once */
        memset(obuf[t], 0xee, OBYTES);
        break;
    case P_RGET: {
        OK(MPI_Rget(rbuf[t], rc, rt, t, dreg, tc, tt, W.win, &req[nreq++]));
        int flag = 0;
        while (!flag)
            OK(MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE));
        break;
    }
    case P_RACC:
        /* in two halves (two requests), completed by Waitall */
        if (derived) {
            OK(MPI_Raccumulate(obuf[t], oc, ot, t, dreg, tc, tt, ph->op, W.win, &req[nreq++]));
        } else {
            int h = N / 2;
            MPI_Aint d2 = dreg + ((MPI_Aint)h * bt_size[ph->bt]) / W.disp_unit;
            OK(MPI_Raccumulate(obuf[t], h, b, t, dreg, h, b, ph->op, W.win, &req[nreq++]));
            OK(MPI_Raccumulate(obuf[t] + (size_t)h * bt_size[ph->bt], N - h, b, t, d2, N - h, b,
                               ph->op, W.win, &req[nreq++]));
        }
        OK(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
        break;
    case P_RGACC: {
        OK(MPI_Rget_accumulate(obuf[t], oc, ot, rbuf[t], rc, rt, t, dreg, tc, tt, ph->op, W.win,
                               &req[nreq++]));
        int idx = -1;
        OK(MPI_Waitany(1, req, &idx, MPI_STATUS_IGNORE));
        CHECK(idx == 0, "MPI_Waitany gave index %d", idx);
        break;
    }
    }
}

static int fetches(const phase_t *ph) {
    return ph->kind == P_GET || ph->kind == P_GACC || ph->kind == P_FOP || ph->kind == P_CAS ||
           ph->kind == P_RGET || ph->kind == P_RGACC;
}

static void fill_origin(const phase_t *ph) {
    int bt = ph->bt;
    for (int t = 0; t < size; t++) {
        memset(obuf[t], OPAT, OBYTES);
        memset(rbuf[t], RPAT, RBYTES);
        if (ph->kind == P_FOP) {
            for (int j = 0; j < fop_nops(bt); j++)
                for (int r = 0; r < 2; r++)
                    put_el(bt, obuf[t], 2 * j + r, vorig(fop_op(bt, j), rank, t, 2 * j + r));
        } else if (ph->kind == P_CAS) {
            val_t init0 = vinit(MPI_OP_NULL, t, rank, 0), init2 = vinit(MPI_OP_NULL, t, rank, 2);
            val_t X = cas_val(0, rank, t), Y = cas_val(1, rank, t), Z = cas_val(2, rank, t);
            val_t wrong = {init2.a + 1, 0};
            /* (new, compare) pairs: the origin buffer, then the compare buffer */
            put_el(bt, obuf[t], 0, X), put_el(bt, obuf[t], 1, init0);
            put_el(bt, obuf[t], 2, Y), put_el(bt, obuf[t], 3, init0);
            put_el(bt, obuf[t], 4, Z), put_el(bt, obuf[t], 5, X);
            put_el(bt, obuf[t], 6, Y), put_el(bt, obuf[t], 7, wrong);
        } else {
            for (long k = 0; k < N; k++)
                put_el(bt, obuf[t], oidx(k), vorig(ph->op, rank, t, k));
        }
    }
}

static void fill_window(const phase_t *ph) {
    long per = (long)(REGB / bt_size[ph->bt]);
    local_access_begin();
    for (int reg = 0; reg <= size; reg++)
        for (long i = 0; i < per; i++)
            put_el(ph->bt, W.base + reg * REGB, i, vinit(ph->op, rank, reg, i));
    local_access_end();
}

static void check_fetched(const phase_t *ph) {
    int bt = ph->bt;
    for (int t = 0; t < size; t++) {
        int bad = 0;
        const unsigned char *r = (const unsigned char *)rbuf[t];
        if (ph->kind == P_FOP) {
            for (int j = 0; j < fop_nops(bt) && !bad; j++) {
                MPI_Op op = fop_op(bt, j);
                val_t init = vinit(MPI_OP_NULL, t, rank, 2 * j);
                val_t a1 = vorig(op, rank, t, 2 * j);
                val_t e0 = init, e1 = apply(op, bt, init, a1);
                val_t g0 = get_el(bt, r, 2 * j), g1 = get_el(bt, r, 2 * j + 1);
                if (!val_eq(bt, g0, e0) || !val_eq(bt, g1, e1)) {
                    CHECK(0, "fop %s %s from target %d: fetched %lld, %lld; expected %lld, %lld",
                          op_name(op), bt_names[bt], t, g0.a, g1.a, e0.a, e1.a);
                    bad = 1;
                }
            }
            continue;
        }
        if (ph->kind == P_CAS) {
            val_t init0 = vinit(MPI_OP_NULL, t, rank, 0), init2 = vinit(MPI_OP_NULL, t, rank, 2);
            val_t X = cas_val(0, rank, t);
            val_t want[4] = {init0, X, X, init2};
            for (int i = 0; i < 4; i++) {
                val_t g = get_el(bt, r, i);
                CHECK(val_eq(bt, g, want[i]),
                      "cas %s #%d from target %d: fetched %lld, expected %lld", bt_names[bt], i, t,
                      g.a, want[i].a);
            }
            continue;
        }
        for (long k = 0; k < N && !bad; k++) {
            val_t e = vinit(ph->op, t, rank, tidx(k));
            val_t g = get_el(bt, r, ridx(k));
            if (!val_eq(bt, g, e)) {
                CHECK(0, "%s %s %s from target %d: element %ld fetched %lld/%d, expected %lld/%d",
                      pk_names[ph->kind], op_name(ph->op), bt_names[bt], t, k, g.a, g.b, e.a, e.b);
                bad = 1;
            }
        }
        /* the gaps of a derived result buffer, and what lies past it */
        long end = derived ? 3 * N * bt_size[bt] : (long)N * bt_size[bt];
        for (long i = 0; i < end + 8 && !bad; i++) {
            int in_el = 0;
            if (i < end) {
                long el = i / bt_size[bt];
                in_el = !derived || el % 3 == 1;
            }
            if (!in_el && r[i] != RPAT) {
                CHECK(0, "%s %s from target %d: result buffer byte %ld outside the data written",
                      pk_names[ph->kind], bt_names[bt], t, i);
                bad = 1;
            }
        }
    }
}

/* This rank's whole window against what the phase must have left there. */
static void check_window(const phase_t *ph) {
    int bt = ph->bt;
    long per = (long)(REGB / bt_size[bt]);
    val_t *want = malloc(sizeof(val_t) * (size_t)per);
    for (int reg = 0; reg <= size; reg++) {
        MPI_Op iop = (ph->kind == P_FOP || ph->kind == P_CAS) ? MPI_OP_NULL : ph->op;
        for (long i = 0; i < per; i++)
            want[i] = vinit(iop, rank, reg, i);
        int o = reg; /* the origin whose region this is */
        switch (ph->kind) {
        case P_PUT:
        case P_RPUT:
            if (reg < size)
                for (long k = 0; k < N; k++)
                    want[tidx(k)] = vorig(ph->op, o, rank, k);
            break;
        case P_ACC:
        case P_RACC:
            if (ph->common && reg == size) {
                for (int oo = 0; oo < size; oo++)
                    for (long k = 0; k < N; k++)
                        want[tidx(k)] =
                            apply(ph->op, bt, want[tidx(k)], vorig(ph->op, oo, rank, k));
            } else if (!ph->common && reg < size) {
                for (long k = 0; k < N; k++)
                    want[tidx(k)] = apply(ph->op, bt, want[tidx(k)], vorig(ph->op, o, rank, k));
            }
            break;
        case P_GACC:
        case P_RGACC:
            if (reg < size)
                for (long k = 0; k < N; k++)
                    want[tidx(k)] = apply(ph->op, bt, want[tidx(k)], vorig(ph->op, o, rank, k));
            break;
        case P_FOP:
            if (reg < size)
                for (int j = 0; j < fop_nops(bt); j++) {
                    MPI_Op op = fop_op(bt, j);
                    val_t v = apply(op, bt, want[2 * j], vorig(op, o, rank, 2 * j));
                    want[2 * j] = apply(op, bt, v, vorig(op, o, rank, 2 * j + 1));
                }
            break;
        case P_CAS:
            if (reg < size)
                want[0] = cas_val(2, o, rank);
            break;
        default:
            break;
        }
        for (long i = 0; i < per; i++) {
            val_t g = get_el(bt, W.base + reg * REGB, i);
            if (!val_eq(bt, g, want[i])) {
                CHECK(0, "%s %s %s%s: window region %d element %ld is %lld/%d, expected %lld/%d",
                      pk_names[ph->kind], op_name(ph->op), bt_names[bt],
                      derived ? " (derived)" : "", reg, i, g.a, g.b, want[i].a, want[i].b);
                break;
            }
        }
    }
    free(want);
}

static void run_phase(const phase_t *ph) {
    MPI_Datatype b = mpi_type(ph->bt);
    int use_derived = derived && ph->kind != P_FOP && ph->kind != P_CAS;
    int save = derived;
    derived = use_derived;
    if (derived) {
        MPI_Type_vector(N, 1, 2, b, &ot);
        MPI_Type_vector(N / 2, 2, 3, b, &tt);
        int *d = malloc(sizeof(int) * (size_t)N);
        for (int k = 0; k < N; k++)
            d[k] = 3 * k + 1;
        MPI_Type_create_indexed_block(N, 1, d, b, &rt);
        free(d);
        MPI_Type_commit(&ot);
        MPI_Type_commit(&tt);
        MPI_Type_commit(&rt);
        oc = tc = rc = 1;
    } else {
        ot = tt = rt = b;
        oc = tc = rc = N;
    }
    fill_window(ph);
    fill_origin(ph);
    int get_only = ph->kind == P_GET;
    epoch_open(get_only);
    for (int j = 0; j < size; j++) {
        int t = (rank + j) % size;
        target_begin(t);
        issue(ph, t);
        target_end(t);
    }
    int ready = after_all_targets();
    if (ready) {
        if (fetches(ph))
            check_fetched(ph);
        /* complete at the origin: the buffers are free, the target must not see this */
        for (int t = 0; t < size; t++)
            memset(obuf[t], 0xab, OBYTES);
    }
    epoch_close(ph);
    if (!ready && fetches(ph))
        check_fetched(ph);
    if (sync_mode != S_WIN_SYNC) {
        if (passive()) {
            MPI_Barrier(MPI_COMM_WORLD);
            OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, W.win));
        }
        check_window(ph);
        if (passive())
            OK(MPI_Win_unlock(rank, W.win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (derived) {
        MPI_Type_free(&ot);
        MPI_Type_free(&tt);
        MPI_Type_free(&rt);
    }
    derived = save;
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: ops KIND SYNC [N [PHASE]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int kind = rt_parse_kind(argv[1]);
    sync_mode = -1;
    for (int s = 0; s < S_NMODES; s++)
        if (!strcmp(argv[2], sync_names[s]))
            sync_mode = s;
    N = argc > 3 ? atoi(argv[3]) : 64;
    const char *only = argc > 4 ? argv[4] : NULL;
    if (sync_mode < 0 || N < 4 || N % 4) {
        if (rank == 0)
            fprintf(stderr, "bad synchronization '%s' or N %d (a multiple of 4)\n", argv[2], N);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* the target vector spans 3N/2 elements; FOP and CAS use 24 */
    REGB = (MPI_Aint)(2 * N > 24 ? 2 * N : 24) * 8;
    rt_win_make(kind, REGB * (size + 1), 8, MPI_COMM_WORLD, &W);
    MPI_Win_get_group(W.win, &world_group);
    MPI_Win_set_errhandler(W.win, MPI_ERRORS_RETURN);
    OBYTES = (size_t)(2 * N + 32) * 8;
    RBYTES = (size_t)(3 * N + 32) * 8;
    obuf = malloc(sizeof(char *) * (size_t)size);
    rbuf = malloc(sizeof(char *) * (size_t)size);
    for (int t = 0; t < size; t++) {
        obuf[t] = malloc(OBYTES);
        rbuf[t] = malloc(RBYTES);
    }

    const MPI_Op acc_ll[] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
                             MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    const MPI_Op acc_dbl[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
    phase_t ph[64];
    int np = 0;
    ph[np++] = (phase_t){P_PUT, T_LL, MPI_OP_NULL, 0};
    ph[np++] = (phase_t){P_PUT, T_INT, MPI_OP_NULL, 0};
    ph[np++] = (phase_t){P_PUT, T_DBL, MPI_OP_NULL, 0};
    ph[np++] = (phase_t){P_GET, T_LL, MPI_OP_NULL, 0};
    ph[np++] = (phase_t){P_GET, T_INT, MPI_OP_NULL, 0};
    for (size_t i = 0; i < sizeof(acc_ll) / sizeof(acc_ll[0]); i++)
        ph[np++] = (phase_t){P_ACC, T_LL, acc_ll[i], 1};
    for (size_t i = 0; i < sizeof(acc_dbl) / sizeof(acc_dbl[0]); i++)
        ph[np++] = (phase_t){P_ACC, T_DBL, acc_dbl[i], 1};
    ph[np++] = (phase_t){P_ACC, T_INT, MPI_SUM, 1};
    ph[np++] = (phase_t){P_ACC, T_INT, MPI_BXOR, 1};
    ph[np++] = (phase_t){P_ACC, T_2INT, MPI_MAXLOC, 1};
    ph[np++] = (phase_t){P_ACC, T_2INT, MPI_MINLOC, 1};
    ph[np++] = (phase_t){P_ACC, T_LL, MPI_REPLACE, 0};
    ph[np++] = (phase_t){P_ACC, T_DBL, MPI_REPLACE, 0};
    ph[np++] = (phase_t){P_GACC, T_LL, MPI_SUM, 0};
    ph[np++] = (phase_t){P_GACC, T_LL, MPI_NO_OP, 0};
    ph[np++] = (phase_t){P_GACC, T_LL, MPI_REPLACE, 0};
    ph[np++] = (phase_t){P_GACC, T_DBL, MPI_MAX, 0};
    ph[np++] = (phase_t){P_GACC, T_INT, MPI_BXOR, 0};
    ph[np++] = (phase_t){P_FOP, T_LL, MPI_OP_NULL, 0};
    ph[np++] = (phase_t){P_FOP, T_INT, MPI_OP_NULL, 0};
    ph[np++] = (phase_t){P_FOP, T_DBL, MPI_OP_NULL, 0};
    ph[np++] = (phase_t){P_CAS, T_LL, MPI_OP_NULL, 0};
    ph[np++] = (phase_t){P_CAS, T_INT, MPI_OP_NULL, 0};
    if (passive()) {
        /* request-based operations belong to passive-target epochs */
        ph[np++] = (phase_t){P_RPUT, T_LL, MPI_OP_NULL, 0};
        ph[np++] = (phase_t){P_RGET, T_DBL, MPI_OP_NULL, 0};
        ph[np++] = (phase_t){P_RACC, T_LL, MPI_SUM, 1};
        ph[np++] = (phase_t){P_RACC, T_INT, MPI_REPLACE, 0};
        ph[np++] = (phase_t){P_RGACC, T_LL, MPI_SUM, 0};
        ph[np++] = (phase_t){P_RGACC, T_DBL, MPI_NO_OP, 0};
    }

    for (derived = 0; derived < 2; derived++) {
        for (int i = 0; i < np; i++) {
            char name[96];
            snprintf(name, sizeof(name), "%s %s %s%s", pk_names[ph[i].kind], op_name(ph[i].op),
                     bt_names[ph[i].bt], derived ? " derived" : "");
            if (only && !strstr(name, only))
                continue;
            if (derived && (ph[i].kind == P_FOP || ph[i].kind == P_CAS))
                continue; /* predefined types only */
            run_phase(&ph[i]);
        }
    }

    MPI_Group_free(&world_group);
    rt_win_free(&W);
    for (int t = 0; t < size; t++) {
        free(obuf[t]);
        free(rbuf[t]);
    }
    free(obuf);
    free(rbuf);
    return rt_finish();
}
