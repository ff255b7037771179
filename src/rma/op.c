/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Posting and issuing operations, and moving their data.
 *
 * The way is chosen per window and target, the way p2p chooses per message:
 * - memory the library allocated is mapped here: load/store (memcpy, pack/unpack),
 *   and accumulates by CPU atomics element by element, for every predefined type of
 *   1, 2, 4 or 8 bytes at an aligned address (a native fetch-and-op for integer
 *   sums and bitwise ops, a compare-and-swap loop around the reduction otherwise);
 * - other types (long double, 16-byte complex and pairs) and misaligned elements
 *   take the target's accumulate lock, a word in its slot: per target, never global;
 * - user memory (MPI_Win_create, dynamic windows) is read and written by CMA, and
 *   accumulates to it are read-reduce-write under the same per-target lock (the
 *   target's own accumulates to itself too), so whichever origins meet there, an
 *   element is updated by one at a time, as MPI-4.1 12.7.1 asks of accumulates with
 *   the same predefined type;
 * - where CMA is denied, messages served by the target (am.c).
 * The path depends only on the window, the target and the element's type and address,
 * so accumulates on the same element always meet on the same path.
 */
#include "rma_impl.h"
#include "../net/cma.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Staging for pack/reduce when layouts are not contiguous, per thread (threads issue on
 * different windows at once); the message path's service has its own (it runs from
 * progress, inside a wait of the caller's). */
#define SCRATCH (64 * 1024)
static _Thread_local unsigned char scratch_a[SCRATCH], scratch_b[SCRATCH];

enum { TM_DIRECT, TM_CMA };

typedef struct tmem {
    int mode;
    unsigned char *addr; /* the target buffer (displacement applied): here, or in the target */
    int world;
    int pid;
} tmem_t;

static void resolve(tdm_win_t *w, int target, int64_t disp, tmem_t *tm) {
    tdm_rma_slot_t *s = tdm_rma_slot(w, target);
    tm->world = s->world;
    tm->pid = s->pid;
    switch (w->flavor) {
    case TDM_WIN_ALLOCATE:
    case TDM_WIN_SHARED:
        tm->mode = TM_DIRECT;
        tm->addr = w->data + s->base + disp * s->disp_unit;
        return;
    case TDM_WIN_CREATE:
        tm->addr = (unsigned char *)(uintptr_t)s->base + disp * s->disp_unit;
        break;
    case TDM_WIN_DYNAMIC:
        tm->addr = (unsigned char *)(uintptr_t)disp;
        break;
    }
    tm->mode = target == w->rank ? TM_DIRECT : TM_CMA;
}

/* Move len bytes between buf and stream bytes [off, off+len) of the target layout in
 * another process, a batch of its pieces per system call. */
static tdm_rma_rc_t cma_move(const tmem_t *tm, tdm_dtype_t *tdt, size_t tcount, size_t off,
                             unsigned char *buf, size_t len, bool write) {
    struct iovec riov[64];
    while (len) {
        size_t cons = 0;
        int n = tdm_dtype_iov(tm->addr, tcount, tdt, off, len, riov, 64, &cons);
        int first = 0;
        size_t done = 0;
        while (done < cons) {
            struct iovec l = {buf + done, cons - done};
            ssize_t got = tdm_cma_copy(tm->world, tm->pid, write, &l, 1, riov + first, n - first);
            if (got <= 0)
                return tdm_rma_fail(TDM_RMA_EOTHER,
                                    "process_vm_%sv of %zu bytes with world rank %d failed: %s",
                                    write ? "write" : "read", cons - done, tm->world,
                                    got < 0 ? strerror((int)-got) : "no progress");
            done += (size_t)got;
            size_t g = (size_t)got;
            while (g && first < n) {
                if (riov[first].iov_len <= g) {
                    g -= riov[first].iov_len;
                    first++;
                } else {
                    riov[first].iov_base = (char *)riov[first].iov_base + g;
                    riov[first].iov_len -= g;
                    g = 0;
                }
            }
        }
        off += cons;
        buf += cons;
        len -= cons;
    }
    return TDM_RMA_OK;
}

static tdm_rma_rc_t tm_write(const tmem_t *tm, tdm_dtype_t *tdt, size_t tcount, size_t off,
                             const void *src, size_t len) {
    if (tm->mode == TM_DIRECT) {
        tdm_dtype_unpack(tm->addr, tcount, tdt, off, src, len);
        return TDM_RMA_OK;
    }
    return cma_move(tm, tdt, tcount, off, (unsigned char *)(uintptr_t)src, len, true);
}

static tdm_rma_rc_t tm_read(const tmem_t *tm, tdm_dtype_t *tdt, size_t tcount, size_t off,
                            void *dst, size_t len) {
    if (tm->mode == TM_DIRECT) {
        tdm_dtype_pack(tm->addr, tcount, tdt, off, dst, len);
        return TDM_RMA_OK;
    }
    return cma_move(tm, tdt, tcount, off, dst, len, false);
}

static inline void count(int kind, int path, size_t bytes) {
    TDM_COUNTER_ADD(&tdm_rma_ops[kind][path], 1);
    TDM_COUNTER_ADD(&tdm_rma_bytes[path], bytes);
}

static tdm_rma_rc_t do_put(const tdm_rma_args_t *a, const tmem_t *tm, size_t total) {
    tdm_dtype_t *o = a->odt;
    if (o->contig)
        return tm_write(tm, a->tdt, a->tcount, 0, (const char *)a->obuf + o->true_lb, total);
    if (tm->mode == TM_DIRECT && a->tdt->contig) {
        tdm_dtype_pack(a->obuf, a->ocount, o, 0, tm->addr + a->tdt->true_lb, total);
        return TDM_RMA_OK;
    }
    for (size_t off = 0; off < total; off += SCRATCH) {
        size_t len = TDM_MIN(SCRATCH, total - off);
        tdm_dtype_pack(a->obuf, a->ocount, o, off, scratch_a, len);
        tdm_rma_rc_t rc = tm_write(tm, a->tdt, a->tcount, off, scratch_a, len);
        if (rc != TDM_RMA_OK)
            return rc;
    }
    return TDM_RMA_OK;
}

static tdm_rma_rc_t do_get(const tdm_rma_args_t *a, const tmem_t *tm, size_t total) {
    tdm_dtype_t *r = a->rdt;
    if (r->contig)
        return tm_read(tm, a->tdt, a->tcount, 0, (char *)a->rbuf + r->true_lb, total);
    if (tm->mode == TM_DIRECT && a->tdt->contig) {
        tdm_dtype_unpack(a->rbuf, a->rcount, r, 0, tm->addr + a->tdt->true_lb, total);
        return TDM_RMA_OK;
    }
    for (size_t off = 0; off < total; off += SCRATCH) {
        size_t len = TDM_MIN(SCRATCH, total - off);
        tdm_rma_rc_t rc = tm_read(tm, a->tdt, a->tcount, off, scratch_b, len);
        if (rc != TDM_RMA_OK)
            return rc;
        tdm_dtype_unpack(a->rbuf, a->rcount, r, off, scratch_b, len);
    }
    return TDM_RMA_OK;
}

void tdm_rma_reduce(int op, tdm_dtype_t *dt, const void *o, void *t, size_t n) {
    if (op == TDM_RMA_OP_NO_OP)
        return;
    if (op == TDM_RMA_OP_REPLACE) {
        memcpy(t, o, n * dt->basic_size);
        return;
    }
    tdm_op_reduce_basic(op, dt->basic, o, t, n);
}

/* ---- CPU atomics on one element ---- */

#define ATOMIC_ELEM(_T)                                                                            \
    do {                                                                                           \
        _T *p_ = (_T *)t, ov_ = 0, v_;                                                             \
        if (o)                                                                                     \
            memcpy(&ov_, o, sizeof(_T));                                                           \
        if (op == TDM_RMA_OP_REPLACE)                                                              \
            v_ = __atomic_exchange_n(p_, ov_, __ATOMIC_SEQ_CST);                                   \
        else if (op == TDM_RMA_OP_NO_OP)                                                           \
            v_ = __atomic_load_n(p_, __ATOMIC_SEQ_CST);                                            \
        else if (integer && op == TDM_RMA_OP_SUM)                                                  \
            v_ = __atomic_fetch_add(p_, ov_, __ATOMIC_SEQ_CST);                                    \
        else if (integer && op == TDM_RMA_OP_BAND)                                                 \
            v_ = __atomic_fetch_and(p_, ov_, __ATOMIC_SEQ_CST);                                    \
        else if (integer && op == TDM_RMA_OP_BOR)                                                  \
            v_ = __atomic_fetch_or(p_, ov_, __ATOMIC_SEQ_CST);                                     \
        else if (integer && op == TDM_RMA_OP_BXOR)                                                 \
            v_ = __atomic_fetch_xor(p_, ov_, __ATOMIC_SEQ_CST);                                    \
        else {                                                                                     \
            v_ = __atomic_load_n(p_, __ATOMIC_RELAXED);                                            \
            _T nv_;                                                                                \
            do {                                                                                   \
                nv_ = v_;                                                                          \
                tdm_op_reduce_basic(op, basic, &ov_, &nv_, 1);                                     \
            } while (!__atomic_compare_exchange_n(p_, &v_, nv_, true, __ATOMIC_SEQ_CST,            \
                                                  __ATOMIC_RELAXED));                              \
        }                                                                                          \
        if (old)                                                                                   \
            memcpy(old, &v_, sizeof(_T));                                                          \
    } while (0)

static void atomic_elem(int op, int basic, bool integer, size_t bs, void *t, const void *o,
                        void *old) {
    switch (bs) {
    case 1:
        ATOMIC_ELEM(uint8_t);
        break;
    case 2:
        ATOMIC_ELEM(uint16_t);
        break;
    case 4:
        ATOMIC_ELEM(uint32_t);
        break;
    default:
        ATOMIC_ELEM(uint64_t);
        break;
    }
}

static bool cas_elem(size_t bs, void *t, const void *cmp, const void *o, void *old) {
#define CAS_ELEM(_T)                                                                               \
    do {                                                                                           \
        _T e_, d_;                                                                                 \
        memcpy(&e_, cmp, sizeof(_T));                                                              \
        memcpy(&d_, o, sizeof(_T));                                                                \
        __atomic_compare_exchange_n((_T *)t, &e_, d_, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);  \
        memcpy(old, &e_, sizeof(_T));                                                              \
    } while (0)
    switch (bs) {
    case 1:
        CAS_ELEM(uint8_t);
        return true;
    case 2:
        CAS_ELEM(uint16_t);
        return true;
    case 4:
        CAS_ELEM(uint32_t);
        return true;
    case 8:
        CAS_ELEM(uint64_t);
        return true;
    default:
        return false;
    }
#undef CAS_ELEM
}

/* May elements of this type at the target be updated by CPU atomics? */
static bool atomic_capable(const tdm_win_t *w, const tmem_t *tm, const tdm_dtype_t *dt) {
    size_t bs = dt->basic_size;
    return tm->mode == TM_DIRECT &&
           (w->flavor == TDM_WIN_ALLOCATE || w->flavor == TDM_WIN_SHARED) && dt->basic &&
           (bs == 1 || bs == 2 || bs == 4 || bs == 8);
}

/* Accumulate, Get_accumulate and Fetch_and_op by atomics: the origin's elements packed a
 * chunk at a time, the target's found by walking its layout. */
static void acc_atomic(tdm_win_t *w, const tdm_rma_args_t *a, const tmem_t *tm, size_t total) {
    tdm_dtype_t *t = a->tdt;
    size_t bs = t->basic_size, chunk = SCRATCH / bs * bs;
    bool integer = tdm_op_basic_class(t->basic) == 1;
    bool fetch = a->rbuf != NULL, noop = a->op == TDM_RMA_OP_NO_OP;
    struct iovec iov[64];
    for (size_t off = 0; off < total; off += chunk) {
        size_t len = TDM_MIN(chunk, total - off);
        if (!noop)
            tdm_dtype_pack(a->obuf, a->ocount, a->odt, off, scratch_a, len);
        size_t at = 0;
        while (at < len) {
            size_t cons = 0;
            int n = tdm_dtype_iov(tm->addr, a->tcount, t, off + at, len - at, iov, 64, &cons);
            for (int i = 0; i < n; i++) {
                unsigned char *p = iov[i].iov_base;
                for (size_t k = 0; k < iov[i].iov_len; k += bs, at += bs) {
                    const void *o = noop ? NULL : scratch_a + at;
                    void *old = fetch ? scratch_b + at : NULL;
                    if (((uintptr_t)(p + k) & (bs - 1)) == 0) {
                        atomic_elem(a->op, t->basic, integer, bs, p + k, o, old);
                        continue;
                    }
                    /* misaligned: every accumulate at this address comes here */
                    tdm_rma_acc_lock(w, a->target);
                    if (old)
                        memcpy(old, p + k, bs);
                    if (o)
                        tdm_rma_reduce(a->op, t, o, p + k, 1);
                    tdm_rma_acc_unlock(w, a->target);
                }
            }
        }
        if (fetch)
            tdm_dtype_unpack(a->rbuf, a->rcount, a->rdt, off, scratch_b, len);
    }
}

/* The same under the target's accumulate lock: read, reduce, write back. */
static tdm_rma_rc_t acc_locked(tdm_win_t *w, const tdm_rma_args_t *a, const tmem_t *tm,
                               size_t total) {
    tdm_dtype_t *t = a->tdt;
    size_t bs = t->basic_size ? t->basic_size : 1, chunk = SCRATCH / bs * bs;
    bool fetch = a->rbuf != NULL, noop = a->op == TDM_RMA_OP_NO_OP;
    tdm_rma_rc_t rc = TDM_RMA_OK;
    tdm_rma_acc_lock(w, a->target);
    for (size_t off = 0; off < total && rc == TDM_RMA_OK; off += chunk) {
        size_t len = TDM_MIN(chunk, total - off);
        if (!noop)
            tdm_dtype_pack(a->obuf, a->ocount, a->odt, off, scratch_a, len);
        if (fetch || (!noop && a->op != TDM_RMA_OP_REPLACE)) {
            rc = tm_read(tm, t, a->tcount, off, scratch_b, len);
            if (rc != TDM_RMA_OK)
                break;
        }
        if (fetch)
            tdm_dtype_unpack(a->rbuf, a->rcount, a->rdt, off, scratch_b, len);
        if (noop)
            continue;
        if (a->op == TDM_RMA_OP_REPLACE) {
            rc = tm_write(tm, t, a->tcount, off, scratch_a, len);
        } else {
            tdm_rma_reduce(a->op, t, scratch_a, scratch_b, len / bs);
            rc = tm_write(tm, t, a->tcount, off, scratch_b, len);
        }
    }
    tdm_rma_acc_unlock(w, a->target);
    return rc;
}

static tdm_rma_rc_t do_cas(tdm_win_t *w, const tdm_rma_args_t *a, const tmem_t *tm) {
    tdm_dtype_t *t = a->tdt;
    size_t bs = t->size;
    unsigned char *p = tm->addr + t->true_lb;
    if (atomic_capable(w, tm, t) && ((uintptr_t)p & (bs - 1)) == 0) {
        unsigned char old[8];
        cas_elem(bs, p, a->cbuf, a->obuf, old);
        memcpy(a->rbuf, old, bs);
        count(TDM_RMA_CAS, TDM_RMA_PATH_ATOMIC, bs);
        return TDM_RMA_OK;
    }
    unsigned char cur[64];
    tdm_rma_rc_t rc;
    tdm_rma_acc_lock(w, a->target);
    rc = tm_read(tm, t, 1, 0, cur, bs);
    if (rc == TDM_RMA_OK && memcmp(cur, a->cbuf, bs) == 0)
        rc = tm_write(tm, t, 1, 0, a->obuf, bs);
    tdm_rma_acc_unlock(w, a->target);
    memcpy(a->rbuf, cur, bs);
    count(TDM_RMA_CAS, tm->mode == TM_CMA ? TDM_RMA_PATH_CMA : TDM_RMA_PATH_LOCKED, bs);
    return rc;
}

/* ---- combining (seed 003 §4.2: delayed issuing merges what it queued) ----
 *
 * A Put of 8 bytes to user memory in another process costs a system call, many
 * times its copy. Consecutive small Puts (or Gets) to one target are therefore
 * gathered in the window's batch and go as one process_vm_writev (readv), one remote
 * iovec per piece, adjacent pieces merged: Put payloads are packed into the batch's
 * staging when posted (the origin buffer is free at once), Gets read straight into
 * the pieces of their result buffers. The batch is issued at the closing
 * synchronization, a flush, MPI_Win_sync, when it is full, and before any other
 * operation of the window (a Get after Puts, an accumulate, another target, a
 * request), so every operation reaches its target in posting order.
 * The delay is allowed: MPI-4.1 §12.7.3 lets an RMA operation become enabled at the
 * origin "as late as when the ensuing synchronization call is issued", and in a
 * passive target epoch completion is promised only by a flush or the unlock, both of
 * which issue the batch. */

/* Drop the first g bytes of the iovecs *v (*n of them). */
static void iov_advance(struct iovec **v, int *n, size_t g) {
    while (g && *n) {
        if ((*v)->iov_len <= g) {
            g -= (*v)->iov_len;
            (*v)++;
            (*n)--;
        } else {
            (*v)->iov_base = (char *)(*v)->iov_base + g;
            (*v)->iov_len -= g;
            g = 0;
        }
    }
}

tdm_rma_rc_t tdm_rma_batch_issue(tdm_win_t *w, int rank) {
    if (!tdm_rma_batch_pending(w, rank))
        return TDM_RMA_OK;
    tdm_rma_batch_t *b = w->batch;
    bool write = b->kind == TDM_RMA_PUT;
    struct iovec stage = {b->stage, b->used}, *l = write ? &stage : b->liov, *r = b->riov;
    int nl = write ? 1 : b->nl, nr = b->nr;
    uint64_t calls = 0;
    tdm_rma_rc_t rc = TDM_RMA_OK;
    for (size_t done = 0; done < b->used;) {
        ssize_t got = tdm_cma_copy(b->world, b->pid, write, l, nl, r, nr);
        calls++;
        if (got <= 0) {
            rc = tdm_rma_fail(TDM_RMA_EOTHER,
                              "process_vm_%sv of %u combined operations (%zu bytes) with world "
                              "rank %d failed: %s",
                              write ? "write" : "read", b->nops, b->used - done, b->world,
                              got < 0 ? strerror((int)-got) : "no progress");
            break;
        }
        done += (size_t)got;
        iov_advance(&l, &nl, (size_t)got);
        iov_advance(&r, &nr, (size_t)got);
    }
    TDM_COUNTER_ADD(&tdm_rma_ops[b->kind][TDM_RMA_PATH_CMA], b->nops);
    TDM_COUNTER_ADD(&tdm_rma_bytes[TDM_RMA_PATH_CMA], b->used);
    if (b->nops > 1) {
        TDM_COUNTER_ADD(&tdm_rma_combined_ops, b->nops);
        TDM_COUNTER_ADD(&tdm_rma_combined_calls, calls);
    }
    b->nops = 0;
    b->nl = b->nr = 0;
    b->used = 0;
    return rc;
}

void tdm_rma_batch_free(tdm_win_t *w) {
    free(w->batch);
    w->batch = NULL;
}

/* Describe stream bytes [0, bytes) of count items of dt at buf as iovecs at v[n..max).
 * Returns how many, or -1 when they do not fit. */
static int iov_fill(const void *buf, size_t count, tdm_dtype_t *dt, size_t bytes, struct iovec *v,
                    int n, int max) {
    size_t cons = 0;
    int k = tdm_dtype_iov(buf, count, dt, 0, bytes, v + n, max - n, &cons);
    return cons < bytes ? -1 : k;
}

/* Keep the k iovecs filled at v[*n..], the first merged into v[*n-1] when adjacent. */
static void iov_keep(struct iovec *v, int *n, int k) {
    if (*n && k && (char *)v[*n - 1].iov_base + v[*n - 1].iov_len == v[*n].iov_base) {
        v[*n - 1].iov_len += v[*n].iov_len;
        memmove(v + *n, v + *n + 1, (size_t)(k - 1) * sizeof(*v));
        k--;
    }
    *n += k;
}

/* Add a (a Put or a Get of `bytes` to tm, in another process) to the batch, issuing
 * the batch first when it holds something else or a cannot fit. 1: added; 0: a
 * failure of the batch it issued (reported); -1: a goes alone. */
static int batch_add(tdm_win_t *w, const tdm_rma_args_t *a, const tmem_t *tm, size_t bytes,
                     tdm_rma_rc_t *rc_p) {
    tdm_rma_batch_t *b = w->batch;
    if (!b) {
        b = w->batch = malloc(sizeof(*b));
        if (!b)
            return -1; /* no memory for combining: issued alone */
        b->nops = 0;
        b->nl = b->nr = 0;
        b->used = 0;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        if (b->nops && (b->target != a->target || b->kind != a->kind ||
                        (a->kind == TDM_RMA_PUT && b->used + bytes > TDM_RMA_BATCH_STAGE))) {
            if ((*rc_p = tdm_rma_batch_issue(w, -1)) != TDM_RMA_OK)
                return 0;
        }
        int kr = iov_fill(tm->addr, a->tcount, a->tdt, bytes, b->riov, b->nr, TDM_RMA_BATCH_IOV);
        int kl = kr < 0 || a->kind == TDM_RMA_PUT ? 0
                                                  : iov_fill(a->rbuf, a->rcount, a->rdt, bytes,
                                                             b->liov, b->nl, TDM_RMA_BATCH_IOV);
        if (kr >= 0 && kl >= 0) {
            if (a->kind == TDM_RMA_PUT)
                tdm_dtype_pack(a->obuf, a->ocount, a->odt, 0, b->stage + b->used, bytes);
            iov_keep(b->riov, &b->nr, kr);
            iov_keep(b->liov, &b->nl, kl);
            b->kind = a->kind;
            b->target = a->target;
            b->world = tm->world;
            b->pid = tm->pid;
            b->used += bytes;
            b->nops++;
            /* eager still batches: the origin makes the CMA copy itself, so issuing earlier
             * overlaps nothing, and a call per Put costs several times more (rma_epoch) */
            if (w->eager && b->nops >= (uint32_t)TDM_PARAM_I(RMA_EAGER_BATCH) &&
                (*rc_p = tdm_rma_batch_issue(w, -1)) != TDM_RMA_OK)
                return 0;
            return 1;
        }
        if (!b->nops)
            return -1; /* more pieces than one call takes: alone */
        /* full: issue it and try again in an empty one */
        if ((*rc_p = tdm_rma_batch_issue(w, -1)) != TDM_RMA_OK)
            return 0;
    }
    return -1;
}

tdm_rma_rc_t tdm_rma_issue(tdm_win_t *w, const tdm_rma_args_t *a, bool combine) {
    size_t total = a->tcount * a->tdt->size;
    tdm_rma_rc_t rc = TDM_RMA_OK;
    bool am = w->am && a->target != w->rank && tdm_rma_am_target(w, a->target);
    tmem_t tm;
    if (!am) {
        resolve(w, a->target, a->disp, &tm);
        if (combine && tm.mode == TM_CMA && (a->kind == TDM_RMA_PUT || a->kind == TDM_RMA_GET) &&
            total <= TDM_RMA_BATCH_OP_MAX && (!w->eager || TDM_PARAM_I(RMA_EAGER_BATCH) > 1)) {
            int added = batch_add(w, a, &tm, total, &rc);
            if (added >= 0)
                return rc;
        }
    }
    /* anything else goes after what the batch holds */
    if (tdm_rma_batch_pending(w, -1) && (rc = tdm_rma_batch_issue(w, -1)) != TDM_RMA_OK)
        return rc;
    if (am)
        return tdm_rma_am_issue(w, a);
    int path = tm.mode == TM_CMA ? TDM_RMA_PATH_CMA : TDM_RMA_PATH_LOAD_STORE;
    switch (a->kind) {
    case TDM_RMA_PUT:
        rc = do_put(a, &tm, total);
        break;
    case TDM_RMA_GET:
        rc = do_get(a, &tm, total);
        break;
    case TDM_RMA_CAS:
        return do_cas(w, a, &tm);
    default: /* ACC, GACC, FOP */
        if (atomic_capable(w, &tm, a->tdt)) {
            acc_atomic(w, a, &tm, total);
            path = TDM_RMA_PATH_ATOMIC;
        } else {
            rc = acc_locked(w, a, &tm, total);
            if (tm.mode != TM_CMA)
                path = TDM_RMA_PATH_LOCKED;
        }
        break;
    }
    count(a->kind, path, total);
    return rc;
}

/* ---- range checks ---- */

static bool dyn_covers(tdm_rma_slot_t *s, __int128 lo, __int128 hi) {
    for (;;) {
        uint32_t seq = atomic_load_explicit(&s->dyn_seq, memory_order_acquire);
        if (seq & 1)
            continue; /* the owner is attaching or detaching */
        bool in = false;
        uint32_t n = s->ndyn;
        for (uint32_t i = 0; i < n && i < (uint32_t)TDM_PARAM_I(RMA_ATTACH_MAX); i++) {
            __int128 b = s->dyn[i].base, e = b + s->dyn[i].bytes;
            if (lo >= b && hi <= e) {
                in = true;
                break;
            }
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->dyn_seq, memory_order_relaxed) == seq)
            return in;
    }
}

tdm_rma_rc_t tdm_rma_check_range(tdm_win_t *w, const tdm_rma_args_t *a) {
    tdm_dtype_t *t = a->tdt;
    if (a->tcount == 0 || t->size == 0)
        return TDM_RMA_OK;
    tdm_rma_slot_t *s = tdm_rma_slot(w, a->target);
    __int128 ext = tdm_dtype_extent(t), last = (__int128)(a->tcount - 1) * ext;
    __int128 lo = t->true_lb + (last < 0 ? last : 0), hi = t->true_ub + (last > 0 ? last : 0);
    if (w->flavor == TDM_WIN_DYNAMIC) {
        lo += a->disp;
        hi += a->disp;
        if (!dyn_covers(s, lo, hi))
            return tdm_rma_fail(TDM_RMA_ERANGE,
                                "target_disp %#llx (an address: the window is dynamic) with "
                                "%zu items of the target datatype (bytes [%lld, %lld) from it) "
                                "is not within memory rank %d attached to the window",
                                (unsigned long long)a->disp, a->tcount, (long long)(lo - a->disp),
                                (long long)(hi - a->disp), a->target);
        return TDM_RMA_OK;
    }
    __int128 start = (__int128)a->disp * s->disp_unit;
    lo += start;
    hi += start;
    if (lo < 0 || hi > (__int128)s->bytes)
        return tdm_rma_fail(TDM_RMA_ERANGE,
                            "target_disp %lld (disp_unit %lld) with %zu items of the target "
                            "datatype covers bytes [%lld, %lld) of rank %d's window of %llu bytes",
                            (long long)a->disp, (long long)s->disp_unit, a->tcount, (long long)lo,
                            (long long)hi, a->target, (unsigned long long)s->bytes);
    return TDM_RMA_OK;
}

/* ---- posting ---- */

static tdm_req_t *done_req(void) {
    tdm_req_t *r = tdm_req_alloc(TDM_REQ_OTHER);
    if (!r)
        return NULL;
    r->status.source = TDM_ANY_SOURCE;
    r->status.tag = TDM_ANY_TAG;
    r->done = 1;
    return r;
}

static const char *epoch_name(const tdm_win_t *w) {
    switch (w->epoch) {
    case TDM_EPOCH_LOCK:
        return "the target is not locked by this process (MPI_Win_lock)";
    case TDM_EPOCH_START:
        return "the target is not in the group of MPI_Win_start";
    default:
        return "no access epoch is open (MPI_Win_fence, MPI_Win_start, MPI_Win_lock or "
               "MPI_Win_lock_all first)";
    }
}

/* The direct path: the common case of a passive target epoch on memory mapped here
 * (contiguous types, a granted lock, nothing queued), checked and done straight from the
 * caller's buffers: one target lookup for the epoch and the grant, the range in a few
 * instructions, memcpy or one atomic per element. Anything else (an error included)
 * changes nothing and goes to the general path, which decides and reports. */

/* The window's memory of `target` at unit displacement disp (plus lb bytes) for `bytes`
 * bytes, when the direct path may take it: the window is mapped here, nothing is queued,
 * the target is locked and granted, the range is inside its slot, and the epoch does not
 * turn eager with this operation. NULL otherwise. */
static inline unsigned char *direct_at(tdm_win_t *w, int target, int64_t disp, int64_t lb,
                                       size_t bytes) {
    if (w->nqueued || (w->epoch != TDM_EPOCH_LOCK && w->epoch != TDM_EPOCH_LOCK_ALL) ||
        !TDM_PARAM_I(RMA_DIRECT))
        return NULL;
    tdm_rma_target_t *tg = tdm_rma_target_find(w, target);
    if (tg ? !tg->granted : w->epoch != TDM_EPOCH_LOCK_ALL)
        return NULL; /* not locked (an error), or its grant is not seen yet */
    /* the same bounds as tdm_rma_check_range: contiguous items cover [lb, +bytes) */
    tdm_rma_slot_t *s = tdm_rma_slot(w, target);
    int64_t lo;
    if (__builtin_mul_overflow(disp, s->disp_unit, &lo) || __builtin_add_overflow(lo, lb, &lo) ||
        lo < 0 || (uint64_t)lo > s->bytes || bytes > s->bytes - (uint64_t)lo)
        return NULL;
    if (!w->eager && (w->epoch_nops + 1 >= (uint64_t)TDM_PARAM_I(RMA_EAGER_OPS) ||
                      w->epoch_bytes + bytes >= (uint64_t)TDM_PARAM_I(RMA_EAGER_BYTES)))
        return NULL; /* the epoch turns eager: counted there */
    return w->data + s->base + (size_t)lo;
}

static inline void direct_done(tdm_win_t *w, int kind, int path, size_t bytes) {
    w->fence_ops++;
    w->epoch_nops++;
    w->epoch_bytes += bytes;
    TDM_COUNTER_ADD(&tdm_rma_direct, 1);
    count(kind, path, bytes);
}

static inline bool put_get_direct(tdm_win_t *w, bool put, void *buf, size_t bytes, int target,
                                  int64_t disp) {
    if (!w->direct || (unsigned)target >= (unsigned)w->size || bytes == 0)
        return false;
    unsigned char *p = direct_at(w, target, disp, 0, bytes);
    if (!p)
        return false;
    unsigned char *dst = put ? p : buf, *src = put ? buf : p;
    if (bytes == 8) /* the commonest small size, without a call */
        __builtin_memcpy(dst, src, 8);
    else
        memcpy(dst, src, bytes);
    direct_done(w, put ? TDM_RMA_PUT : TDM_RMA_GET, TDM_RMA_PATH_LOAD_STORE, bytes);
    return true;
}

static inline bool atomic_direct(tdm_win_t *w, bool cas, int op, const tdm_dtype_t *t,
                                 const void *o, const void *cmp, void *r, int target,
                                 int64_t disp) {
    size_t bs = t->size;
    if (!w->direct || (unsigned)target >= (unsigned)w->size || !t->basic || bs != t->basic_size ||
        (bs != 1 && bs != 2 && bs != 4 && bs != 8))
        return false;
    unsigned char *p = direct_at(w, target, disp, 0, bs);
    if (!p || ((uintptr_t)p & (bs - 1)) != 0)
        return false;
    if (cas) {
        if (!cas_elem(bs, p, cmp, o, r))
            return false;
    } else {
        atomic_elem(op, t->basic, tdm_op_basic_class(t->basic) == 1, bs, p,
                    op == TDM_RMA_OP_NO_OP ? NULL : o, r);
    }
    direct_done(w, cas ? TDM_RMA_CAS : TDM_RMA_FOP, TDM_RMA_PATH_ATOMIC, bs);
    return true;
}

/* The bindings' shortcuts hold the window's lock like every entry point (rma_impl.h). */
static __attribute__((noinline)) bool
put_get_direct_locked(tdm_win_t *w, bool put, void *buf, size_t bytes, int target, int64_t disp) {
    tdm_lock_acquire(&w->lock);
    bool done = put_get_direct(w, put, buf, bytes, target, disp);
    tdm_lock_release(&w->lock);
    return done;
}

/* Unthreaded, the lock calls are not even in the function: it saves no registers for them. */
bool tdm_rma_put_get_direct(tdm_win_t *w, bool put, void *buf, size_t bytes, int target,
                            int64_t disp) {
    if (TDM_UNLIKELY(tdm_threaded))
        return put_get_direct_locked(w, put, buf, bytes, target, disp);
    return put_get_direct(w, put, buf, bytes, target, disp);
}

bool tdm_rma_atomic_direct(tdm_win_t *w, bool cas, int op, const tdm_dtype_t *t, const void *o,
                           const void *cmp, void *r, int target, int64_t disp) {
    tdm_lock_acquire(&w->lock);
    bool done = atomic_direct(w, cas, op, t, o, cmp, r, target, disp);
    tdm_lock_release(&w->lock);
    return done;
}

static int post_direct(tdm_win_t *w, const tdm_rma_args_t *a) {
    tdm_dtype_t *t = a->tdt;
    size_t bytes;
    if (!t->contig || a->tcount == 0 || __builtin_mul_overflow(a->tcount, t->size, &bytes) ||
        bytes == 0)
        return -1;
    unsigned char *p = direct_at(w, a->target, a->disp, (int64_t)t->true_lb, bytes);
    if (!p)
        return -1;
    int path = TDM_RMA_PATH_ATOMIC;
    switch (a->kind) {
    case TDM_RMA_PUT:
        if (!a->odt->contig)
            return -1;
        memcpy(p, (const char *)a->obuf + a->odt->true_lb, bytes);
        path = TDM_RMA_PATH_LOAD_STORE;
        break;
    case TDM_RMA_GET:
        if (!a->rdt->contig)
            return -1;
        memcpy((char *)a->rbuf + a->rdt->true_lb, p, bytes);
        path = TDM_RMA_PATH_LOAD_STORE;
        break;
    case TDM_RMA_CAS:
        if (((uintptr_t)p & (bytes - 1)) != 0 || !cas_elem(bytes, p, a->cbuf, a->obuf, a->rbuf))
            return -1;
        break;
    default: { /* ACC, GACC, FOP: CPU atomics on every element, as acc_atomic */
        size_t bs = t->basic_size;
        bool noop = a->op == TDM_RMA_OP_NO_OP;
        if (!t->basic || (bs != 1 && bs != 2 && bs != 4 && bs != 8) ||
            ((uintptr_t)p & (bs - 1)) != 0 || (!noop && !a->odt->contig) ||
            (a->rbuf && !a->rdt->contig))
            return -1;
        /* MPI-4.1 12.3.4: the origin and result buffers are disjoint, so each element
         * may be read and its old value written back before the next */
        const unsigned char *o = noop ? NULL : (const unsigned char *)a->obuf + a->odt->true_lb;
        unsigned char *r = a->rbuf ? (unsigned char *)a->rbuf + a->rdt->true_lb : NULL;
        bool integer = tdm_op_basic_class(t->basic) == 1;
        for (size_t k = 0; k < bytes; k += bs)
            atomic_elem(a->op, t->basic, integer, bs, p + k, o ? o + k : NULL, r ? r + k : NULL);
        break;
    }
    }
    direct_done(w, a->kind, path, bytes);
    return TDM_RMA_OK;
}

static tdm_rma_rc_t post_general(tdm_win_t *w, const tdm_rma_args_t *a, tdm_req_t **req_p);

tdm_rma_rc_t tdm_rma_post(tdm_win_t *w, const tdm_rma_args_t *a, tdm_req_t **req_p) {
    tdm_lock_acquire(&w->lock);
    int rc = -1;
    if (TDM_LIKELY(!req_p && w->direct))
        rc = post_direct(w, a);
    if (rc < 0)
        rc = (int)post_general(w, a, req_p);
    tdm_lock_release(&w->lock);
    return (tdm_rma_rc_t)rc;
}

/* Out of line, so that the direct path does not pay for its registers. */
static __attribute__((noinline)) tdm_rma_rc_t post_general(tdm_win_t *w, const tdm_rma_args_t *a,
                                                           tdm_req_t **req_p) {
    if (TDM_UNLIKELY(!tdm_rma_may_access(w, a->target)))
        return tdm_rma_fail(TDM_RMA_ESYNC, "operation to rank %d outside an epoch: %s", a->target,
                            epoch_name(w));
    if (req_p && !tdm_rma_passive(w))
        return tdm_rma_fail(TDM_RMA_ESYNC, "request-based operations need a passive target "
                                           "epoch (MPI_Win_lock or MPI_Win_lock_all)");
    tdm_rma_rc_t rc = tdm_rma_check_range(w, a);
    if (TDM_UNLIKELY(rc != TDM_RMA_OK))
        return rc;
    size_t bytes = a->tcount * a->tdt->size;
    w->fence_ops++;
    if (TDM_UNLIKELY(bytes == 0)) {
        if (req_p && !(*req_p = done_req()))
            return tdm_rma_fail(TDM_RMA_ENOMEM, "out of requests");
        return TDM_RMA_OK;
    }
    w->epoch_nops++;
    w->epoch_bytes += bytes;
    if (!w->eager && (w->epoch_nops >= (uint64_t)TDM_PARAM_I(RMA_EAGER_OPS) ||
                      w->epoch_bytes >= (uint64_t)TDM_PARAM_I(RMA_EAGER_BYTES))) {
        /* seed 003 §4.2: enough queued work that the synchronization is worth completing */
        w->eager = true;
        TDM_COUNTER_ADD(&tdm_rma_to_eager, 1);
        rc = tdm_rma_drain(w, -1);
        if (rc != TDM_RMA_OK)
            return rc;
    }
    /* What waits for its synchronization (a lock not yet granted, posts not yet
     * arrived, a fence's barrier not yet passed) is queued in an op object; an
     * operation whose target is ready is issued now, or, a small Put or Get to user
     * memory, combined with the ones before it (the batch, above). */
    bool ready = tdm_rma_ready(w, a->target);
    if (ready || w->eager || req_p) {
        if (w->nqueued) {
            rc = tdm_rma_drain(w, a->target); /* in order after what was queued */
            if (rc != TDM_RMA_OK)
                return rc;
        }
        if (!ready)
            tdm_rma_ready_wait(w, a->target);
        rc = tdm_rma_issue(w, a, !req_p);
        if (rc == TDM_RMA_OK && req_p && !(*req_p = done_req()))
            return tdm_rma_fail(TDM_RMA_ENOMEM, "out of requests");
        return rc;
    }
    tdm_rma_op_t *op = tdm_rma_op_alloc(w);
    if (!op) { /* nothing to clean up and no memory: issue it now */
        tdm_rma_ready_wait(w, a->target);
        return tdm_rma_issue(w, a, true);
    }
    op->a = *a;
    if (a->odt)
        tdm_dtype_retain(a->odt);
    if (a->rdt)
        tdm_dtype_retain(a->rdt);
    tdm_dtype_retain(a->tdt);
    tdm_list_push_back(&w->queue, &op->link);
    w->nqueued++;
    TDM_COUNTER_ADD(&tdm_rma_queued, 1);
    return TDM_RMA_OK;
}
