/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The message path: user memory (MPI_Win_create, dynamic windows) of a process that
 * CMA cannot reach (ptrace scope, TANDEM_CMA=off). Operations go as ordinary p2p
 * messages on the window's own communicator; the target serves them from the
 * completion hook of a receive it keeps posted (ANY_SOURCE on the window's context),
 * so they are applied whenever the target's engine progresses: in any MPI call, not
 * while it computes outside MPI. Locks and PSCW never need it (they live in the
 * shared object).
 *
 * A request is one message: a header, the target's pieces as (address, length)
 * pairs that the origin computed from the target datatype (addresses relative to the
 * window's base, or absolute for a dynamic window), and the data. The target checks
 * every piece against its window (or attached memory) before touching it. Large
 * operations go in pieces of TANDEM_RMA_AM_CHUNK bytes, so the target's buffer is
 * fixed (seed 003 §3.4.3: streaming accumulates). Replies (Get's data, the old values
 * of Get_accumulate, Fetch_and_op and Compare_and_swap, the answer to a flush) come
 * back on the next context, tagged by the origin's sequence number. Puts and
 * accumulates are not acknowledged one by one: a flush sends a FLUSH behind them and
 * waits for its answer; messages of one pair are served in order, so the answer means
 * every earlier one was applied.
 */
#include "rma_impl.h"
#include "../net/cma.h"

#include <stdlib.h>
#include <string.h>

enum { AM_PUT, AM_GET, AM_ACC, AM_GACC, AM_CAS, AM_FLUSH };

typedef struct am_hdr {
    uint8_t kind;
    uint8_t op;
    uint16_t rsvd;
    uint32_t niov;
    int32_t basic;
    uint32_t bs;
    int32_t reply_tag;
    uint32_t rsvd2;
    uint64_t len; /* bytes of the target's pieces */
} am_hdr_t;
_Static_assert(sizeof(am_hdr_t) == 32, "am header size");

typedef struct am_iov {
    uint64_t addr, len;
} am_iov_t;

#define AM_MAX_IOV 256

static size_t am_buf_bytes(void) {
    return sizeof(am_hdr_t) + AM_MAX_IOV * sizeof(am_iov_t) + 2 * (size_t)TDM_PARAM_I(RMA_AM_CHUNK);
}

bool tdm_rma_am_target(tdm_win_t *w, int rank) {
    return !tdm_cma_usable(tdm_rma_slot(w, rank)->world);
}

/* ---- the target's side ---- */

static bool piece_ok(tdm_win_t *w, uint64_t addr, uint64_t len, unsigned char **p_p) {
    if (w->flavor == TDM_WIN_DYNAMIC) {
        tdm_rma_slot_t *s = tdm_rma_slot(w, w->rank);
        for (uint32_t i = 0; i < s->ndyn; i++) {
            if (addr >= s->dyn[i].base && addr + len <= s->dyn[i].base + s->dyn[i].bytes &&
                addr + len >= addr) {
                *p_p = (unsigned char *)(uintptr_t)addr;
                return true;
            }
        }
        return false;
    }
    if (addr > w->bytes || len > w->bytes - addr)
        return false;
    *p_p = (unsigned char *)w->base + addr;
    return true;
}

static void am_sent(tdm_req_t *r) {
    free(r->cb_arg);
}

static void reply(tdm_win_t *w, int src, int tag, void *data, size_t len) {
    tdm_req_t *r = NULL;
    tdm_rc_t rc = tdm_p2p_isend(data, len, tdm_dtype_byte(), tdm_comm_world_rank(w->comm, src),
                                w->rank, tag, w->comm->ctx + 1, TDM_MODE_STD, w->comm, false, &r);
    if (rc != TDM_OK) {
        tdm_error(RMA, "message path: reply of %zu bytes to rank %d failed (%d)", len, src,
                  (int)rc);
        free(data);
        return;
    }
    if (!r || !tdm_p2p_req_hook(r, am_sent, data)) { /* data freed when the send completes */
        if (r)
            tdm_p2p_release(r);
        free(data);
    }
}

static void am_reduce(int op, int basic, size_t bs, const void *o, void *t, size_t len) {
    if (op == TDM_RMA_OP_NO_OP)
        return;
    if (op == TDM_RMA_OP_REPLACE)
        memcpy(t, o, len);
    else
        tdm_op_reduce_basic(op, basic, o, t, len / bs);
}

static void serve(tdm_win_t *w, int src, const unsigned char *msg, size_t bytes) {
    const am_hdr_t *h = (const am_hdr_t *)msg;
    TDM_COUNTER_ADD(&tdm_rma_am_served, 1);
    if (bytes < sizeof(*h) || bytes < sizeof(*h) + (size_t)h->niov * sizeof(am_iov_t)) {
        tdm_error(RMA, "message path: a malformed request of %zu bytes from rank %d ignored", bytes,
                  src);
        return;
    }
    if (h->kind == AM_FLUSH) {
        reply(w, src, h->reply_tag, NULL, 0);
        return;
    }
    const am_iov_t *iov = (const am_iov_t *)(msg + sizeof(*h));
    const unsigned char *data = (const unsigned char *)(iov + h->niov);
    size_t have = bytes - (size_t)(data - msg);
    unsigned char *out = NULL;
    bool fetch = h->kind == AM_GET || h->kind == AM_GACC || h->kind == AM_CAS;
    if (fetch && !(out = malloc(h->len ? h->len : 1))) {
        tdm_error(RMA, "message path: out of memory for a %llu-byte reply",
                  (unsigned long long)h->len);
        return;
    }
    bool acc = h->kind == AM_ACC || h->kind == AM_GACC || h->kind == AM_CAS;
    if (acc)
        tdm_rma_acc_lock(w, w->rank);
    size_t at = 0;
    for (uint32_t i = 0; i < h->niov; i++) {
        unsigned char *p;
        if (!piece_ok(w, iov[i].addr, iov[i].len, &p) || at + iov[i].len > h->len) {
            tdm_error(RMA,
                      "message path: rank %d asked for %llu bytes at %#llx, outside this "
                      "window: ignored",
                      src, (unsigned long long)iov[i].len, (unsigned long long)iov[i].addr);
            break;
        }
        size_t len = (size_t)iov[i].len;
        if (fetch)
            memcpy(out + at, p, len);
        switch (h->kind) {
        case AM_PUT:
            if (at + len <= have)
                memcpy(p, data + at, len);
            break;
        case AM_ACC:
        case AM_GACC:
            if (at + len <= have && h->bs)
                am_reduce(h->op, h->basic, h->bs, data + at, p, len);
            break;
        case AM_CAS:
            if (have >= 2 * len && memcmp(p, data, len) == 0)
                memcpy(p, data + len, len);
            break;
        default:
            break;
        }
        at += len;
    }
    if (acc)
        tdm_rma_acc_unlock(w, w->rank);
    if (fetch)
        reply(w, src, h->reply_tag, out, h->len);
}

static void am_post(tdm_win_t *w);

static void am_serve(tdm_req_t *r) {
    tdm_win_t *w = r->cb_arg;
    if (r->status.cancelled)
        return;
    serve(w, r->status.source, w->am_buf, r->status.bytes);
    am_post(w);
}

static void am_post(tdm_win_t *w) {
    for (;;) {
        tdm_req_t *r = NULL;
        tdm_rc_t rc = tdm_p2p_irecv_ex(w->am_buf, am_buf_bytes(), tdm_dtype_byte(), TDM_ANY_SOURCE,
                                       -1, TDM_ANY_TAG, w->comm->ctx, w->comm, 0, NULL, &r);
        if (rc != TDM_OK || !r) {
            tdm_error(RMA, "message path: cannot post the service receive (%d)", (int)rc);
            w->am_req = NULL;
            return;
        }
        w->am_req = r; /* before the hook can run */
        if (tdm_p2p_req_hook(r, am_serve, w))
            return;
        w->am_req = NULL;
        serve(w, r->status.source, w->am_buf, r->status.bytes);
        tdm_p2p_release(r);
    }
}

tdm_rma_rc_t tdm_rma_am_start(tdm_win_t *w) {
    w->am_buf = malloc(am_buf_bytes());
    w->am_dirty = calloc((size_t)w->size, sizeof(*w->am_dirty));
    if (!w->am_buf || !w->am_dirty) {
        free(w->am_buf);
        free(w->am_dirty);
        return tdm_rma_fail(TDM_RMA_ENOMEM, "out of memory for the message path's buffer");
    }
    am_post(w);
    return w->am_req ? TDM_RMA_OK : TDM_RMA_EOTHER;
}

void tdm_rma_am_stop(tdm_win_t *w) {
    if (w->am_req) {
        w->am_req->on_complete = NULL;
        tdm_p2p_cancel(w->am_req);
        w->am_req = NULL;
    }
    free(w->am_buf);
    free(w->am_dirty);
    w->am_buf = NULL;
    w->am_dirty = NULL;
}

/* ---- the origin's side ---- */

static int next_tag(tdm_win_t *w) {
    return (int)(w->am_seq++ & 0x3fffffffu);
}

/* Requests sent that the engine still holds (a ring was full): each holds its message.
 * An origin that issues faster than its target serves would queue without bound (10
 * million 8-byte Puts took 1 GB), so past TANDEM_RMA_OPS of them it waits for the
 * engine to drain half (seed 003 §3.4: constant resources whatever the epoch holds). */
static uint64_t inflight;

static void origin_sent(tdm_req_t *r) {
    TDM_COUNTER_SUB(&inflight, 1);
    free(r->cb_arg);
}

static bool inflight_low(void *arg) {
    (void)arg;
    return TDM_COUNTER_READ(&inflight) <= (uint64_t)TDM_PARAM_I(RMA_OPS) / 2;
}

/* Send msg (malloc'ed, taken over) to target. */
static tdm_rma_rc_t send_msg(tdm_win_t *w, int target, void *msg, size_t len) {
    if (TDM_COUNTER_READ(&inflight) >= (uint64_t)TDM_PARAM_I(RMA_OPS)) {
        TDM_COUNTER_ADD(&tdm_rma_cleanups, 1);
        tdm_lock_release(&w->lock); /* no lock across a wait (base/lock.h) */
        tdm_p2p_wait_until(inflight_low, NULL);
        tdm_lock_acquire(&w->lock);
    }
    tdm_req_t *r = NULL;
    tdm_rc_t rc = tdm_p2p_isend(msg, len, tdm_dtype_byte(), tdm_rma_slot(w, target)->world, w->rank,
                                0, w->comm->ctx, TDM_MODE_STD, w->comm, false, &r);
    if (rc != TDM_OK) {
        free(msg);
        return tdm_rma_fail(TDM_RMA_EOTHER, "message path: send of %zu bytes to rank %d failed",
                            len, target);
    }
    if (r)
        TDM_COUNTER_ADD(&inflight, 1); /* before the hook can run */
    if (!r || !tdm_p2p_req_hook(r, origin_sent, msg)) {
        if (r) {
            TDM_COUNTER_SUB(&inflight, 1);
            tdm_p2p_release(r);
        }
        free(msg);
    }
    return TDM_RMA_OK;
}

/* Wait for the reply r and release it, without the window's lock meanwhile (its
 * buffer is the caller's own). */
static void wait_reply(tdm_win_t *w, tdm_req_t *r) {
    tdm_lock_release(&w->lock);
    tdm_p2p_wait(r);
    tdm_lock_acquire(&w->lock);
    tdm_p2p_release(r);
}

/* Post the receive of a reply of len bytes into buf; the request to wait on. */
static tdm_req_t *post_reply(tdm_win_t *w, int target, int tag, void *buf, size_t len) {
    tdm_req_t *r = NULL;
    tdm_rc_t rc =
        tdm_p2p_irecv_ex(buf, len, tdm_dtype_byte(), target, tdm_rma_slot(w, target)->world, tag,
                         w->comm->ctx + 1, w->comm, 0, NULL, &r);
    return rc == TDM_OK ? r : NULL;
}

tdm_rma_rc_t tdm_rma_am_flush(tdm_win_t *w, int rank) {
    for (int t = rank < 0 ? 0 : rank; t < (rank < 0 ? w->size : rank + 1); t++) {
        if (!w->am_dirty || w->am_dirty[t].flushed == w->am_dirty[t].sent)
            continue;
        uint32_t upto = w->am_dirty[t].sent;
        am_hdr_t *h = calloc(1, sizeof(*h));
        if (!h)
            return tdm_rma_fail(TDM_RMA_ENOMEM, "out of memory for a flush message");
        int tag = next_tag(w);
        h->kind = AM_FLUSH;
        h->reply_tag = tag;
        tdm_req_t *r = post_reply(w, t, tag, NULL, 0);
        if (!r) {
            free(h);
            return tdm_rma_fail(TDM_RMA_EOTHER, "message path: cannot post a receive");
        }
        tdm_rma_rc_t rc = send_msg(w, t, h, sizeof(*h));
        wait_reply(w, r);
        if (rc != TDM_RMA_OK)
            return rc;
        /* what was sent up to the FLUSH is applied (more may have gone meanwhile) */
        if ((int32_t)(upto - w->am_dirty[t].flushed) > 0)
            w->am_dirty[t].flushed = upto;
    }
    return TDM_RMA_OK;
}

tdm_rma_rc_t tdm_rma_am_issue(tdm_win_t *w, const tdm_rma_args_t *a) {
    tdm_dtype_t *t = a->tdt;
    size_t total = a->tcount * t->size, chunk = (size_t)TDM_PARAM_I(RMA_AM_CHUNK);
    size_t bs = t->basic_size ? t->basic_size : 1;
    chunk = chunk / bs * bs;
    tdm_rma_slot_t *s = tdm_rma_slot(w, a->target);
    /* the target's pieces, relative to its base (absolute for dynamic windows) */
    uintptr_t tbase =
        w->flavor == TDM_WIN_DYNAMIC ? (uintptr_t)a->disp : (uintptr_t)(a->disp * s->disp_unit);
    uint8_t kind;
    switch (a->kind) {
    case TDM_RMA_PUT:
        kind = AM_PUT;
        break;
    case TDM_RMA_GET:
        kind = AM_GET;
        break;
    case TDM_RMA_ACC:
        kind = AM_ACC;
        break;
    case TDM_RMA_CAS:
        kind = AM_CAS;
        break;
    default:
        kind = AM_GACC;
        break;
    }
    bool sends_data =
        kind == AM_PUT || kind == AM_ACC || (kind == AM_GACC && a->op != TDM_RMA_OP_NO_OP);
    bool fetch = kind == AM_GET || kind == AM_GACC || kind == AM_CAS;
    struct iovec iov[AM_MAX_IOV];
    for (size_t off = 0; off < total;) {
        size_t cons = 0;
        int n = tdm_dtype_iov((void *)tbase, a->tcount, t, off, TDM_MIN(chunk, total - off), iov,
                              AM_MAX_IOV, &cons);
        size_t data = kind == AM_CAS ? 2 * cons : sends_data ? cons : 0;
        size_t len = sizeof(am_hdr_t) + (size_t)n * sizeof(am_iov_t) + data;
        unsigned char *msg = malloc(len);
        void *back = fetch ? malloc(cons) : NULL;
        if (!msg || (fetch && !back)) {
            free(msg);
            free(back);
            return tdm_rma_fail(TDM_RMA_ENOMEM, "out of memory for a %zu-byte message", len);
        }
        am_hdr_t *h = (am_hdr_t *)msg;
        memset(h, 0, sizeof(*h));
        h->kind = kind;
        h->op = (uint8_t)a->op;
        h->niov = (uint32_t)n;
        h->basic = t->basic;
        h->bs = (uint32_t)t->basic_size;
        h->len = cons;
        am_iov_t *pi = (am_iov_t *)(msg + sizeof(*h));
        for (int i = 0; i < n; i++) {
            pi[i].addr = (uint64_t)(uintptr_t)iov[i].iov_base;
            pi[i].len = iov[i].iov_len;
        }
        unsigned char *d = (unsigned char *)(pi + n);
        if (kind == AM_CAS) {
            memcpy(d, a->cbuf, cons);
            memcpy(d + cons, a->obuf, cons);
        } else if (sends_data) {
            tdm_dtype_pack(a->obuf, a->ocount, a->odt, off, d, cons);
        }
        tdm_req_t *rr = NULL;
        if (fetch) {
            h->reply_tag = next_tag(w);
            rr = post_reply(w, a->target, h->reply_tag, back, cons);
            if (!rr) {
                free(msg);
                free(back);
                return tdm_rma_fail(TDM_RMA_EOTHER, "message path: cannot post a receive");
            }
        }
        tdm_rma_rc_t rc = send_msg(w, a->target, msg, len);
        w->am_dirty[a->target].sent++;
        if (rr) {
            wait_reply(w, rr);
            if (rc == TDM_RMA_OK)
                tdm_dtype_unpack(a->rbuf, a->rcount, a->rdt, off, back, cons);
            free(back);
        }
        if (rc != TDM_RMA_OK)
            return rc;
        off += cons;
    }
    TDM_COUNTER_ADD(&tdm_rma_ops[a->kind][TDM_RMA_PATH_MSG], 1);
    TDM_COUNTER_ADD(&tdm_rma_bytes[TDM_RMA_PATH_MSG], total);
    return TDM_RMA_OK;
}
