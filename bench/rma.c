/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-sided communication between ranks 0 and 1, in the manner of the OSU
 * one-sided benchmarks (osu_put_latency, osu_get_latency, osu_put_bw,
 * osu_get_bw, osu_put_bibw, osu_acc_latency, osu_get_acc_latency,
 * osu_fop_latency, osu_cas_latency): what each times is the same, the code
 * is ours.
 *
 *   -c OPS    operations, comma list [put_latency]:
 *             put_latency get_latency   one Put/Get (MPI_BYTE) per synchronization
 *             put_bw get_bw             a window of -w operations per synchronization,
 *                                       each to its own target slot (payload / time)
 *             put_bibw                  both ranks put a window to each other at once
 *             acc_latency               MPI_Accumulate, MPI_SUM on size/8 MPI_INT64_T
 *             get_acc_latency           MPI_Get_accumulate, the same
 *             fop_latency cas_latency   MPI_Fetch_and_op (MPI_SUM) and
 *                                       MPI_Compare_and_swap of one MPI_INT64_T
 *   -a LIST   window kind and synchronization, comma list of KIND:SYNC
 *             [allocate:flush]; KIND create (MPI_Win_create on page-aligned
 *             memory), allocate (MPI_Win_allocate), dynamic (MPI_Win_create_dynamic
 *             with the memory attached); SYNC
 *               lock         Lock(shared)/ops/Unlock every iteration
 *               flush        one Lock for the whole loop, ops/Flush every iteration
 *               flush_local  one Lock, ops/Flush_local
 *               lock_all     Lock_all/ops/Unlock_all every iteration
 *               pscw         Start/ops/Complete against Post/Wait
 *               fence        Fence/ops/Fence
 *
 * Latency is rank 0's time per operation. With pscw and fence the latency
 * tests are a ping-pong, as OSU's: rank 0's epoch, then rank 1's, the time
 * halved. Bandwidth counts the payload only; a bandwidth window holds at most
 * 64 MiB (fewer operations per epoch for large sizes: the header says so).
 * With passive synchronization rank 1 sits in the benchmark's control
 * receive meanwhile (an MPI call, as OSU's target sits in MPI_Barrier),
 * except in put_bibw, where both ranks are origins and each batch ends with
 * a control barrier inside the timed region.
 *
 * Every figure checks its data: a Put's last stamp must be in the target
 * window at the end (every byte with -v, else the first and last), a Get's
 * buffer is poisoned before and checked after every operation, an
 * accumulate target must hold the exact count of accumulates, a fetched
 * value must be the count before the operation.
 *
 * A library without one-sided communication: every RMA call's error is
 * returned (MPI_ERRORS_RETURN on the windows' communicator and on each
 * window) and agreed between the ranks at the end of each batch. If every
 * failure is MPI_ERR_UNSUPPORTED_OPERATION the program prints, for that
 * operation and KIND:SYNC, the data row "OP,KIND:SYNC,0,unsupported,1" and a
 * comment "# unsupported OP KIND:SYNC: CALL: message", and goes on with the
 * next one; any other error ends the run (exit 1, the message on stderr).
 * Before each operation and KIND:SYNC it prints "# run OP KIND:SYNC", so
 * that a run that crashes or hangs says where.
 */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Largest window of a bandwidth test: OSU's 64 operations of 4 MiB would be 256 MiB a rank. */
#define RMA_BW_WINDOW_BYTES (64u << 20)
#define RMA_TAG 31999

typedef enum { K_CREATE, K_ALLOCATE, K_DYNAMIC } rma_kind_t;
typedef enum { S_LOCK, S_FLUSH, S_FLUSH_LOCAL, S_LOCK_ALL, S_PSCW, S_FENCE } rma_sync_t;
typedef enum {
    O_PUT_LAT,
    O_GET_LAT,
    O_PUT_BW,
    O_GET_BW,
    O_PUT_BIBW,
    O_ACC_LAT,
    O_GET_ACC_LAT,
    O_FOP_LAT,
    O_CAS_LAT,
    O_COUNT
} rma_op_t;

static const char *const kind_names[] = {"create", "allocate", "dynamic"};
static const char *const sync_names[] = {"lock",     "flush", "flush_local",
                                         "lock_all", "pscw",  "fence"};
static const char *const op_names[] = {"put_latency",     "get_latency", "put_bw",
                                       "get_bw",          "put_bibw",    "acc_latency",
                                       "get_acc_latency", "fop_latency", "cas_latency"};

/* The first RMA error of this rank in the current test, until the ranks agree on it. */
static struct {
    int failed, unsupported;
    char what[MPI_MAX_ERROR_STRING + 64];
} rma_err;

static int rma_check(int rc, const char *call) {
    if (rc == MPI_SUCCESS)
        return 0;
    if (!rma_err.failed) {
        char msg[MPI_MAX_ERROR_STRING];
        int cls = MPI_ERR_OTHER, len = 0;
        MPI_Error_class(rc, &cls);
        if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
            snprintf(msg, sizeof msg, "error code %d", rc);
        rma_err.failed = 1;
        rma_err.unsupported = cls == MPI_ERR_UNSUPPORTED_OPERATION;
        snprintf(rma_err.what, sizeof rma_err.what, "%s: %s", call, msg);
        /* one line, no commas: it goes into a comment and a CSV cell */
        for (char *p = rma_err.what; *p; p++)
            if (*p == '\n' || *p == '\r' || *p == ',')
                *p = ' ';
    }
    return 1;
}
#define RMA(fn, ...) rma_check(fn(__VA_ARGS__), #fn)

typedef struct {
    const bench_t *b;
    rma_op_t op;
    rma_kind_t kind;
    rma_sync_t sync;
    char param[32];
    MPI_Comm comm;
    MPI_Group peer_group;
    int me, peer;
    size_t size;  /* bytes of one operation */
    int slots;    /* operations per epoch */
    size_t count; /* MPI_INT64_T elements of one accumulate */
    MPI_Win win;
    int created;
    char *wbase, *wmem; /* window memory (wmem: ours to free) */
    size_t wbytes;
    MPI_Aint rdisp; /* the peer's window start: 0, or its address (dynamic) */
    char *obuf, *rbuf, *cbuf;
    long iter;    /* operations (epochs) this rank issued so far, warm-up included */
    long targets; /* epochs the peer ran against this rank */
} rma_t;

static int op_is_bw(rma_op_t op) {
    return op == O_PUT_BW || op == O_GET_BW || op == O_PUT_BIBW;
}
static int op_is_atomic(rma_op_t op) {
    return op == O_FOP_LAT || op == O_CAS_LAT;
}
static int op_is_acc(rma_op_t op) {
    return op == O_ACC_LAT || op == O_GET_ACC_LAT;
}
static int sync_active(rma_sync_t s) {
    return s == S_PSCW || s == S_FENCE;
}
/* Both ranks issue operations: the ping-pong latency tests and bibw. */
static int both_issue(const rma_t *r) {
    return r->op == O_PUT_BIBW || (sync_active(r->sync) && !op_is_bw(r->op));
}

/*
 * Agree on the errors of this test: 0 none, 1 every failure was "unsupported",
 * 2 another error (the run ends). The message of rank 0, else of rank 1, goes
 * to 'what' on rank 0.
 */
static int rma_agree(const rma_t *r, char *what, size_t len) {
    double code = rma_err.failed ? (rma_err.unsupported ? 1 : 2) : 0;
    double all = bench_allmax(code);
    if (all == 0)
        return 0;
    char peer_what[sizeof rma_err.what];
    MPI_Sendrecv(rma_err.what, (int)sizeof rma_err.what, MPI_CHAR, r->peer, RMA_TAG, peer_what,
                 (int)sizeof peer_what, MPI_CHAR, r->peer, RMA_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (all >= 2) {
        if (rma_err.failed)
            fprintf(stderr, "bench: rank %d: %s %s: %s\n", r->me, op_names[r->op], r->param,
                    rma_err.what);
        bench_fail("%s %s failed (an error other than MPI_ERR_UNSUPPORTED_OPERATION)",
                   op_names[r->op], r->param);
    }
    snprintf(what, len, "%s", rma_err.failed ? rma_err.what : peer_what);
    return 1;
}

static char *rma_alloc(size_t bytes) {
    void *p = NULL;
    long page = sysconf(_SC_PAGESIZE);
    if (posix_memalign(&p, (size_t)page, bytes ? bytes : 8))
        bench_fail("cannot allocate %zu bytes", bytes);
    memset(p, 0, bytes ? bytes : 8); /* first touch here, not in the timed loop */
    return p;
}

/* Window of this test: every rank exposes wbytes; dynamic windows trade addresses. */
static void rma_win_open(rma_t *r) {
    r->created = 0;
    r->wmem = NULL;
    r->rdisp = 0;
    switch (r->kind) {
    case K_CREATE:
        r->wbase = r->wmem = rma_alloc(r->wbytes);
        if (!RMA(MPI_Win_create, r->wbase, (MPI_Aint)r->wbytes, 1, MPI_INFO_NULL, r->comm, &r->win))
            r->created = 1;
        break;
    case K_ALLOCATE:
        if (!RMA(MPI_Win_allocate, (MPI_Aint)r->wbytes, 1, MPI_INFO_NULL, r->comm, &r->wbase,
                 &r->win)) {
            /* MPICH 4.0.2 (ch4:ucx) returns a base pointer (size mod 16) bytes past the
             * window for sizes not a multiple of 16: the standard's MPI_WIN_BASE is the
             * window (sizes here are whole pages, where the two agree, but check). */
            void *attr = NULL;
            int flag = 0;
            r->created = 1;
            if (!RMA(MPI_Win_get_attr, r->win, MPI_WIN_BASE, &attr, &flag) && flag &&
                attr != (void *)r->wbase) {
                static int noted;
                if (!noted++)
                    fprintf(stderr,
                            "bench: rank %d: MPI_Win_allocate's base pointer %p is not "
                            "MPI_WIN_BASE %p: using MPI_WIN_BASE\n",
                            r->me, (void *)r->wbase, attr);
                r->wbase = attr;
            }
        }
        break;
    case K_DYNAMIC:
        r->wbase = r->wmem = rma_alloc(r->wbytes);
        if (!RMA(MPI_Win_create_dynamic, MPI_INFO_NULL, r->comm, &r->win)) {
            r->created = 1;
            RMA(MPI_Win_attach, r->win, r->wbase, (MPI_Aint)r->wbytes);
        }
        break;
    }
    if (r->created)
        RMA(MPI_Win_set_errhandler, r->win, MPI_ERRORS_RETURN);
    if (r->kind == K_DYNAMIC) {
        MPI_Aint mine = 0;
        MPI_Get_address(r->wbase, &mine);
        MPI_Sendrecv(&mine, 1, MPI_AINT, r->peer, RMA_TAG, &r->rdisp, 1, MPI_AINT, r->peer, RMA_TAG,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static void rma_win_close(rma_t *r) {
    if (r->created) {
        if (r->kind == K_DYNAMIC)
            RMA(MPI_Win_detach, r->win, r->wbase);
        RMA(MPI_Win_free, &r->win);
    }
    r->created = 0;
    free(r->wmem);
    r->wmem = r->wbase = NULL;
}

/* The value every element of the peer's accumulate source holds. */
#define RMA_ACC_ONE 1

/* Local access to this rank's own window, outside any other epoch of the test. */
static void rma_local_begin(rma_t *r) {
    RMA(MPI_Win_lock, MPI_LOCK_EXCLUSIVE, r->me, 0, r->win);
}
static void rma_local_end(rma_t *r) {
    RMA(MPI_Win_unlock, r->me, r->win);
}

/* Window contents before the test: a Get finds stamps, an accumulate zeros. */
static void rma_win_fill(rma_t *r) {
    if (!r->created || rma_err.failed)
        return;
    rma_local_begin(r);
    memset(r->wbase, 0, r->wbytes);
    if (r->op == O_GET_LAT || r->op == O_GET_BW)
        for (int j = 0; j < r->slots; j++)
            bench_stamp(r->b, r->wbase + (size_t)j * r->size, r->size, bench_seed(0, j, r->me));
    rma_local_end(r);
}

/* One operation of slot j, issued by this rank to the peer. */
static void rma_issue(rma_t *r, int j) {
    MPI_Aint disp = r->rdisp + (MPI_Aint)((size_t)j * r->size);
    char *o = r->obuf + (size_t)j * r->size, *res = r->rbuf + (size_t)j * r->size;
    int n = (int)r->size, c = (int)r->count;
    const bench_t *b = r->b;
    switch (r->op) {
    case O_PUT_LAT:
    case O_PUT_BW:
    case O_PUT_BIBW:
        bench_stamp(b, o, r->size, bench_seed(r->iter, j, r->me));
        RMA(MPI_Put, o, n, MPI_BYTE, r->peer, disp, n, MPI_BYTE, r->win);
        break;
    case O_GET_LAT:
    case O_GET_BW:
        bench_poison(b, res, r->size, bench_seed(0, j, r->peer));
        RMA(MPI_Get, res, n, MPI_BYTE, r->peer, disp, n, MPI_BYTE, r->win);
        break;
    case O_ACC_LAT:
        RMA(MPI_Accumulate, o, c, MPI_INT64_T, r->peer, disp, c, MPI_INT64_T, MPI_SUM, r->win);
        break;
    case O_GET_ACC_LAT:
        ((int64_t *)res)[0] = -1;
        ((int64_t *)res)[c - 1] = -1;
        RMA(MPI_Get_accumulate, o, c, MPI_INT64_T, res, c, MPI_INT64_T, r->peer, disp, c,
            MPI_INT64_T, MPI_SUM, r->win);
        break;
    case O_FOP_LAT:
        *(int64_t *)res = -1;
        RMA(MPI_Fetch_and_op, o, res, MPI_INT64_T, r->peer, disp, MPI_SUM, r->win);
        break;
    case O_CAS_LAT:
        /* the peer's counter counts this rank's swaps: compare with it, put it + 1 */
        *(int64_t *)r->cbuf = r->iter;
        *(int64_t *)o = r->iter + 1;
        *(int64_t *)res = -1;
        RMA(MPI_Compare_and_swap, o, r->cbuf, res, MPI_INT64_T, r->peer, disp, r->win);
        break;
    default:
        break;
    }
}

/* After the epoch that completed them: the fetched data of this rank's operations. */
static void rma_check_fetched(rma_t *r) {
    if (rma_err.failed)
        return;
    const char *what = op_names[r->op];
    for (int j = 0; j < r->slots; j++) {
        char *res = r->rbuf + (size_t)j * r->size;
        switch (r->op) {
        case O_GET_LAT:
        case O_GET_BW:
            bench_check(r->b, res, r->size, bench_seed(0, j, r->peer), what, r->peer);
            break;
        case O_GET_ACC_LAT: {
            int64_t *v = (int64_t *)res;
            size_t last = r->count - 1;
            if (v[0] != r->iter || v[last] != r->iter)
                bench_fail("%s %s: fetched %lld and %lld, expected %ld (accumulates before)", what,
                           r->param, (long long)v[0], (long long)v[last], r->iter);
            if (r->b->validate)
                for (size_t i = 0; i < r->count; i++)
                    if (v[i] != r->iter)
                        bench_fail("%s %s: fetched element %zu is %lld, expected %ld", what,
                                   r->param, i, (long long)v[i], r->iter);
            break;
        }
        case O_FOP_LAT:
        case O_CAS_LAT:
            if (*(int64_t *)res != r->iter)
                bench_fail("%s %s: fetched %lld, expected %ld", what, r->param,
                           (long long)*(int64_t *)res, r->iter);
            break;
        default:
            break;
        }
    }
}

/* After the test: what the peer's operations left in this rank's window. */
static void rma_check_window(rma_t *r) {
    if (!r->created || rma_err.failed || r->targets == 0)
        return;
    const char *what = op_names[r->op];
    long n = r->targets;
    rma_local_begin(r);
    for (int j = 0; j < r->slots && !rma_err.failed; j++) {
        char *w = r->wbase + (size_t)j * r->size;
        switch (r->op) {
        case O_PUT_LAT:
        case O_PUT_BW:
        case O_PUT_BIBW:
            bench_check(r->b, w, r->size, bench_seed(n - 1, j, r->peer), what, r->peer);
            break;
        case O_ACC_LAT:
        case O_GET_ACC_LAT:
        case O_FOP_LAT:
        case O_CAS_LAT: {
            int64_t *v = (int64_t *)w;
            size_t c = op_is_atomic(r->op) ? 1 : r->count;
            for (size_t i = 0; i < c; i += (r->b->validate || i + 1 == c) ? 1 : c - 1)
                if (v[i] != n * RMA_ACC_ONE)
                    bench_fail("%s %s: window element %zu is %lld after %ld operations of "
                               "rank %d, expected %ld",
                               what, r->param, i, (long long)v[i], n, r->peer, n * RMA_ACC_ONE);
            break;
        }
        default:
            break;
        }
    }
    rma_local_end(r);
}

/* One epoch of this rank as an origin: synchronization, ops on every slot, closing call. */
static void rma_origin_epoch(rma_t *r) {
    switch (r->sync) {
    case S_LOCK:
        RMA(MPI_Win_lock, MPI_LOCK_SHARED, r->peer, 0, r->win);
        break;
    case S_LOCK_ALL:
        RMA(MPI_Win_lock_all, 0, r->win);
        break;
    case S_PSCW:
        RMA(MPI_Win_start, r->peer_group, 0, r->win);
        break;
    default:
        break;
    }
    for (int j = 0; j < r->slots; j++)
        rma_issue(r, j);
    switch (r->sync) {
    case S_LOCK:
        RMA(MPI_Win_unlock, r->peer, r->win);
        break;
    case S_FLUSH:
        RMA(MPI_Win_flush, r->peer, r->win);
        break;
    case S_FLUSH_LOCAL:
        RMA(MPI_Win_flush_local, r->peer, r->win);
        break;
    case S_LOCK_ALL:
        RMA(MPI_Win_unlock_all, r->win);
        break;
    case S_PSCW:
        RMA(MPI_Win_complete, r->win);
        break;
    default:
        break;
    }
}

/* One iteration of the test on this rank. */
static void rma_iteration(rma_t *r) {
    int origin = r->me == 0 || both_issue(r);
    if (r->sync == S_FENCE) {
        RMA(MPI_Win_fence, 0, r->win);
        if (r->op == O_PUT_BIBW || op_is_bw(r->op)) {
            if (origin)
                rma_origin_epoch(r);
            RMA(MPI_Win_fence, 0, r->win);
            r->targets += r->op == O_PUT_BIBW || r->me == 1;
        } else {
            /* ping-pong: rank 0's epoch, then rank 1's */
            if (r->me == 0)
                rma_origin_epoch(r);
            RMA(MPI_Win_fence, 0, r->win);
            if (r->me == 1)
                rma_origin_epoch(r);
            RMA(MPI_Win_fence, 0, r->win);
            r->targets++;
        }
    } else if (r->sync == S_PSCW) {
        if (r->op == O_PUT_BIBW) {
            RMA(MPI_Win_post, r->peer_group, 0, r->win);
            rma_origin_epoch(r);
            RMA(MPI_Win_wait, r->win);
            r->targets++;
        } else if (op_is_bw(r->op)) {
            if (r->me == 0) {
                rma_origin_epoch(r);
            } else {
                RMA(MPI_Win_post, r->peer_group, 0, r->win);
                RMA(MPI_Win_wait, r->win);
                r->targets++;
            }
        } else if (r->me == 0) {
            rma_origin_epoch(r);
            RMA(MPI_Win_post, r->peer_group, 0, r->win);
            RMA(MPI_Win_wait, r->win);
            r->targets++;
        } else {
            RMA(MPI_Win_post, r->peer_group, 0, r->win);
            RMA(MPI_Win_wait, r->win);
            rma_origin_epoch(r);
            r->targets++;
        }
    } else {
        if (origin)
            rma_origin_epoch(r);
        r->targets += r->op == O_PUT_BIBW || r->me == 1;
    }
    if (origin) {
        rma_check_fetched(r);
        r->iter++;
    }
}

/* Run one operation with one KIND:SYNC at one size; 0 done, 1 unsupported (what says why). */
static int rma_size(rma_t *r, char *what, size_t what_len) {
    const bench_t *b = r->b;
    size_t size = r->size;
    int passive = !sync_active(r->sync);
    int lock_held = r->sync == S_FLUSH || r->sync == S_FLUSH_LOCAL;
    int origin = r->me == 0 || both_issue(r);

    r->slots = 1;
    if (op_is_bw(r->op)) {
        r->slots = b->window;
        if (size && (size_t)r->slots * size > RMA_BW_WINDOW_BYTES)
            r->slots = (int)(RMA_BW_WINDOW_BYTES / size) ? (int)(RMA_BW_WINDOW_BYTES / size) : 1;
    }
    r->count = op_is_atomic(r->op) ? 1 : size / sizeof(int64_t);
    /* whole pages: page-aligned user memory for create and dynamic, and the same for allocate */
    r->wbytes = ((size ? size : 1) * (size_t)r->slots + 4095) / 4096 * 4096;
    r->iter = r->targets = 0;
    r->obuf = rma_alloc(r->wbytes);
    r->rbuf = rma_alloc(r->wbytes);
    r->cbuf = rma_alloc(sizeof(int64_t));
    if (op_is_acc(r->op) || r->op == O_FOP_LAT)
        for (size_t i = 0; i < r->count; i++)
            ((int64_t *)r->obuf)[i] = RMA_ACC_ONE;
    memset(&rma_err, 0, sizeof rma_err);

    rma_win_open(r);
    rma_win_fill(r);
    int rc = rma_agree(r, what, what_len);
    bench_loop_t l;
    double c2c = NAN;
    if (rc == 0) {
        c2c = bench_c2c_probe(b);
        bench_barrier();
        if (lock_held && origin)
            RMA(MPI_Win_lock, MPI_LOCK_SHARED, r->peer, 0, r->win);
        for (int phase = 0; phase < 2 && rc == 0; phase++) {
            long n;
            if (phase == 0)
                bench_loop_warm(b, &l, size);
            else
                bench_loop_start(b, &l, size);
            while (rc == 0 && (n = bench_batch(b, &l)) > 0) {
                double t0 = bench_now();
                for (long k = 0; k < n; k++)
                    rma_iteration(r);
                if (r->op == O_PUT_BIBW && passive)
                    bench_barrier(); /* rank 1's epochs are part of the figure */
                l.elapsed += bench_now() - t0;
                rc = rma_agree(r, what, what_len);
            }
        }
        if (lock_held && origin)
            RMA(MPI_Win_unlock, r->peer, r->win);
        if (r->sync == S_FENCE)
            RMA(MPI_Win_fence, MPI_MODE_NOSUCCEED, r->win);
        bench_barrier(); /* every origin's epochs are over */
        if (rc == 0)
            rma_check_window(r);
        if (rc == 0)
            rc = rma_agree(r, what, what_len);
    }
    rma_win_close(r);
    free(r->obuf);
    free(r->rbuf);
    free(r->cbuf);
    if (rc)
        return rc;

    const char *name = op_names[r->op];
    double done = (double)l.done;
    if (op_is_bw(r->op)) {
        double bytes = (double)size * r->slots * done * (r->op == O_PUT_BIBW ? 2 : 1);
        bench_row(b, name, r->param, size, "bw_MBps", bytes / l.elapsed / 1e6);
    } else {
        double per = sync_active(r->sync) ? 2.0 * done : done; /* ping-pong: two epochs */
        bench_row(b, name, r->param, size, "lat_us", l.elapsed * 1e6 / per);
        bench_row_c2c(b, name, r->param, size, c2c, bench_c2c_probe(b));
    }
    return 0;
}

static int parse_list(const char *spec, const char *const *names, int nnames, int *out, int max) {
    char buf[512];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < nnames; i++)
            if (!strcmp(tok, names[i]))
                found = i;
        if (found < 0 || n >= max)
            return -1;
        out[n++] = found;
    }
    return n;
}

int main(int argc, char **argv) {
    bench_t b;
    int ops[O_COUNT * 4], kinds[64], syncs[64], nops, ncombos = 0;
    const bench_defaults_t d = {
        .sizes = "1:4M:4",
        .iters = 10000,
        .iters_min = 10,
        .warmup = 100,
        .budget_s = 0.5,
        .list = "put_latency",
        .variant = "allocate:flush",
        .usage = "  -c OPS     put_latency,get_latency,put_bw,get_bw,put_bibw,acc_latency,\n"
                 "             get_acc_latency,fop_latency,cas_latency [put_latency]\n"
                 "  -a LIST    KIND:SYNC list, KIND create|allocate|dynamic, SYNC lock|flush|\n"
                 "             flush_local|lock_all|pscw|fence [allocate:flush]\n"};

    bench_init(&b, "rma", &d, &argc, &argv);
    if (b.nprocs != 2)
        bench_fail("rma needs exactly 2 ranks, got %d", b.nprocs);
    nops = parse_list(b.list, op_names, O_COUNT, ops, O_COUNT * 4);
    {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", b.variant);
        for (char *save, *tok = strtok_r(buf, ",", &save); tok && ncombos >= 0;
             tok = strtok_r(NULL, ",", &save)) {
            char *colon = strchr(tok, ':');
            int k, s;
            if (!colon || ncombos >= 64) {
                ncombos = -1;
                break;
            }
            *colon = 0;
            if (parse_list(tok, kind_names, 3, &k, 1) != 1 ||
                parse_list(colon + 1, sync_names, 6, &s, 1) != 1) {
                ncombos = -1;
                break;
            }
            kinds[ncombos] = k;
            syncs[ncombos++] = s;
        }
    }
    if (nops <= 0 || ncombos <= 0) {
        if (b.rank == 0)
            fprintf(stderr, "rma: -c wants operations from put_latency,get_latency,put_bw,get_bw,"
                            "put_bibw,acc_latency,get_acc_latency,fop_latency,cas_latency; -a a "
                            "list of KIND:SYNC (create|allocate|dynamic : lock|flush|flush_local|"
                            "lock_all|pscw|fence)\n");
        MPI_Finalize();
        return 2;
    }
    bench_note(&b,
               "rma: bandwidth windows of %d operations, at most %u MiB (fewer operations "
               "for larger sizes)",
               b.window, RMA_BW_WINDOW_BYTES >> 20);

    rma_t r;
    memset(&r, 0, sizeof r);
    r.b = &b;
    r.me = b.rank;
    r.peer = 1 - b.rank;
    /* Errors of window creation come back through this communicator's handler. */
    MPI_Comm_dup(MPI_COMM_WORLD, &r.comm);
    MPI_Comm_set_errhandler(r.comm, MPI_ERRORS_RETURN);
    {
        MPI_Group world;
        MPI_Comm_group(r.comm, &world);
        MPI_Group_incl(world, 1, &r.peer, &r.peer_group);
        MPI_Group_free(&world);
    }

    for (int oi = 0; oi < nops; oi++) {
        for (int ci = 0; ci < ncombos; ci++) {
            r.op = (rma_op_t)ops[oi];
            r.kind = (rma_kind_t)kinds[ci];
            r.sync = (rma_sync_t)syncs[ci];
            snprintf(r.param, sizeof r.param, "%s:%s", kind_names[r.kind], sync_names[r.sync]);
            /* tells bench/compare which test a run that crashes was in */
            bench_note(&b, "run %s %s", op_names[r.op], r.param);
            for (int si = 0; si < b.nsizes; si++) {
                char what[sizeof rma_err.what] = "";
                r.size = b.sizes[si];
                if (op_is_atomic(r.op) && r.size != sizeof(int64_t))
                    continue; /* one 8-byte element */
                if (op_is_acc(r.op) && (r.size < sizeof(int64_t) || r.size % sizeof(int64_t)))
                    continue; /* whole MPI_INT64_T elements */
                if (rma_size(&r, what, sizeof what)) {
                    bench_note(&b, "unsupported %s %s: %s", op_names[r.op], r.param, what);
                    bench_row(&b, op_names[r.op], r.param, 0, "unsupported", 1);
                    break;
                }
            }
        }
    }
    MPI_Group_free(&r.peer_group);
    MPI_Comm_free(&r.comm);
    bench_finalize(&b);
    return 0;
}
