/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The schedule engine (sched.h). A round's sends and receives are posted
 * together; each one that does not complete at once gets the completion hook
 * below and is marked user_freed, so the engine releases it right after the
 * hook (the path MPI_Request_free takes). The hook runs inside progress and
 * starts the next round from there.
 *
 * Threads (MPI_THREAD_MULTIPLE). A schedule belongs to the collective call that
 * built it, on one communicator, whose collectives the user orders (MPI-4.1
 * §6.14), so building needs no lock. Once it runs, its hooks may fire in any
 * thread that progresses, several at once, and the engine may run a hook inside
 * a post (base/lock.h). `pending` is atomic, and a step is run by one thread
 * only: advance() holds a guard count on `pending` while it posts a round, so no
 * hook can take it to zero meanwhile; the hook that takes it to zero owns the
 * next round. The first error is set by compare-and-swap; `done` is published
 * with a release store. The cache of freed schedules, the temporaries' cache and
 * the copy chooser are process-wide, under `cache_lock`.
 *
 * A blocking schedule is its caller's from start to end (the caller waits, then
 * frees it), and the user orders the collectives of one communicator, so it
 * takes no lock and no atomic of its own: it is kept for the next blocking call
 * in the communicator's `spare` slot, holds no reference to the communicator
 * (the caller's call does), and an immediate one waits for its requests itself
 * (`held`) instead of attaching hooks that complete through the engine's list.
 */
#include "sched.h"

#include "../base/copy.h"
#include "../base/adapt.h"
#include "../base/log.h"
#include "../base/params.h"
#include "../base/abi.h"
#include "../base/lock.h"

#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>

typedef enum { STEP_SEND, STEP_RECV, STEP_COPY, STEP_REDUCE, STEP_ROUND, STEP_THEN } step_kind_t;

typedef struct step {
    uint8_t kind;
    uint8_t flags;
    int peer;
    const void *sbuf;
    void *rbuf;
    size_t scount, rcount;
    tdm_dtype_t *sdt, *rdt;
    union {                        /* a step record stays 64 bytes */
        tdm_op_t *op;              /* STEP_REDUCE */
        tdm_sched_then_fn_t *then; /* STEP_THEN (its argument in sbuf) */
    };
} step_t;

typedef struct tmp {
    void *p;
    size_t n;
} tmp_t;

/* Small schedules live without malloc: the first steps, temporaries and
 * temporary bytes are inside the object, and freed objects are kept for reuse.
 * (A 4-byte Allreduce on 2 ranks spent a third of its time in malloc/free.) */
#define SCHED_INLINE_STEPS 16
#define SCHED_INLINE_TMPS 4
#define SCHED_SCRATCH 512
#define SCHED_FREE_MAX 8
/* Requests an immediate schedule waits for itself; beyond, they get the hook. */
#define SCHED_HELD 8

struct tdm_sched {
    tdm_comm_t *comm;
    int tag;
    bool blocking;
    bool immediate; /* steps run as they are added (tdm_sched_immediate) */
    bool done;
    int error;    /* tdm_rc_t */
    int pending;  /* requests in flight, + 1 while advance() posts a round */
    bool guarded; /* advance() holds its guard count in `pending` */
    int nheld;    /* immediate: requests in flight the caller waits for (no hook), in held */
    step_t *steps;
    size_t n, cap, cur;
    tmp_t *tmps;
    size_t ntmps, tmpcap;
    tdm_req_t *ureq;
    size_t scratch_used;
    const int *view; /* tdm_sched_view: the ranks steps name, by index; NULL: comm ranks */
    int vrank, vsize;
    struct tdm_sched *next_free;
    step_t inline_steps[SCHED_INLINE_STEPS];
    tmp_t inline_tmps[SCHED_INLINE_TMPS];
    tdm_req_t *held[SCHED_HELD];
    _Alignas(64) unsigned char scratch[SCHED_SCRATCH];
};

/* cache_lock: sched_free_list, sched_free_count, tmp_cache, tmp_cache_bytes, copy_cells. */
static tdm_lock_t cache_lock = TDM_LOCK_INITIALIZER;
static tdm_sched_t *sched_free_list;
static int sched_free_count;

/* `pending` (see the top of the file): atomic when threaded. */
static inline void pend_add(tdm_sched_t *s, int v) {
    if (TDM_UNLIKELY(tdm_threaded))
        __atomic_fetch_add(&s->pending, v, __ATOMIC_RELAXED);
    else
        s->pending += v;
}
/* Drop one; the count left. */
static inline int pend_drop(tdm_sched_t *s) {
    if (TDM_UNLIKELY(tdm_threaded))
        return __atomic_sub_fetch(&s->pending, 1, __ATOMIC_ACQ_REL);
    return --s->pending;
}
static inline int pend_load(const tdm_sched_t *s) {
    return TDM_LOAD_ACQUIRE(&s->pending);
}
/* The first error wins. */
static void set_error(tdm_sched_t *s, int rc) {
    int ok = TDM_OK;
    __atomic_compare_exchange_n(&s->error, &ok, rc, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static void note_status(tdm_sched_t *s, const tdm_req_t *r) {
    if (TDM_UNLIKELY(r->status.error != TDM_OK))
        set_error(s, r->status.error);
}

/* ---- per-communicator state: the collective sequence numbers ---- */

/* Blocking collectives take tags from `seq` in call order, which is the same on
 * every rank, and non-blocking ones from `nseq`, in a quarter of the tag space
 * of their own: the two kinds never match each other (MPI-4.1 6.12), and a
 * program that calls them in different orders on different ranks (mpi4py's
 * agreement fallback, an Iallreduce on one rank issued before a Barrier that
 * the others call first) keeps working, as it does on MPICH and Open MPI,
 * whose non-blocking collectives have tags of their own too. A persistent
 * collective is matched by the order of its init call instead (MPI-4.1 6.13:
 * once initialized, persistent collectives may be started in any order, which
 * may differ between ranks, and never match blocking or non-blocking ones):
 * init takes a tag of its own from `pseq`, in the upper half of the tag space,
 * and every start's schedule uses it (`bound`). Successive starts of one
 * request share the tag: a rank starts round k + 1 only after its round k
 * completed locally, so each pair's messages of round k leave and are received
 * before those of round k + 1. */
#define COLL_TAG_MASK 0x1fffffffu
#define COLL_TAG_NONBLOCKING 0x20000000u
#define COLL_TAG_PERSIST 0x40000000u

typedef struct coll_state {
    uint32_t seq;            /* next blocking collective's tag */
    uint32_t nseq;           /* next non-blocking collective's tag (without COLL_TAG_NONBLOCKING) */
    uint32_t pseq;           /* next persistent collective's tag (without COLL_TAG_PERSIST) */
    int bound;               /* the tag the next schedule takes, or -1: take one from seq or nseq */
    struct tdm_sched *spare; /* a freed blocking schedule, for the next blocking call */
} coll_state_t;

static void (*prev_destroy_hook)(tdm_comm_t *c);

static void coll_destroy(tdm_comm_t *c) {
    if (c->coll)
        free(((coll_state_t *)c->coll)->spare);
    free(c->coll);
    c->coll = NULL;
    if (prev_destroy_hook)
        prev_destroy_hook(c);
}

static coll_state_t *coll_state(tdm_comm_t *comm) {
    if (TDM_UNLIKELY(!comm->coll)) {
        /* first collectives on two communicators may come from two threads */
        if (TDM_LOAD_ACQUIRE(&tdm_comm_destroy_hook) != coll_destroy) {
            tdm_lock_acquire(&cache_lock);
            if (tdm_comm_destroy_hook != coll_destroy) {
                prev_destroy_hook = tdm_comm_destroy_hook;
                TDM_STORE_RELEASE(&tdm_comm_destroy_hook, coll_destroy);
            }
            tdm_lock_release(&cache_lock);
        }
        coll_state_t *st = calloc(1, sizeof(coll_state_t));
        if (!st)
            return NULL;
        st->bound = -1;
        comm->coll = st;
    }
    return comm->coll;
}

static int next_tag(coll_state_t *st, bool blocking) {
    if (!st)
        return -1;
    if (st->bound >= 0) {
        int tag = st->bound;
        st->bound = -1;
        return tag;
    }
    if (!blocking)
        return (int)(COLL_TAG_NONBLOCKING | (st->nseq++ & COLL_TAG_MASK));
    return (int)(st->seq++ & COLL_TAG_MASK);
}

int tdm_coll_next_tag(tdm_comm_t *comm, bool blocking) {
    return next_tag(coll_state(comm), blocking);
}

int tdm_coll_persist_tag(tdm_comm_t *comm) {
    coll_state_t *st = coll_state(comm);
    if (!st)
        return -1;
    return (int)(COLL_TAG_PERSIST | (st->pseq++ & COLL_TAG_MASK));
}

int tdm_coll_bind_tag(tdm_comm_t *comm, int tag) {
    coll_state_t *st = coll_state(comm);
    if (!st)
        return -1;
    st->bound = tag;
    return 0;
}

tdm_dtype_t *tdm_coll_byte_type(void) {
    return tdm_dtype_byte();
}

/* ---- building ---- */

static void post(tdm_sched_t *s, bool send, bool ahead, int peer, int flags, void *buf,
                 size_t count, tdm_dtype_t *dt);
static void copy_data(const void *sbuf, size_t scount, const tdm_dtype_t *sdt, void *rbuf,
                      size_t rcount, const tdm_dtype_t *rdt);
static bool nothing_pending(void *arg);

/* Up to this many bytes per message a blocking schedule runs each step as it
 * is added: what it sends, to whom, on which tag and in which rounds is the
 * same, but no step is recorded, replayed and released, and every send and
 * receive is posted as a blocking call (a send that fits the ring leaves with
 * no request; a send added before its round's last step cannot be told it is
 * alone in the round, which for messages that go eagerly changes nothing).
 * 2 ranks, medians of 6 interleaved runs against recorded schedules:
 * Allreduce 4 B 0.373 -> 0.287 us, 1 KiB 0.565 -> 0.501, Alltoall 1 KiB
 * 0.525 -> 0.465, Reduce 4 B 0.226 -> 0.203; Bcast and Scatter unchanged
 * (Open MPI 0.333, 0.689, 0.574, 0.232). Raised to 16 KiB with the eager
 * limit, it made the rooted collectives slower with the CPUs near (12-16 KiB,
 * medians of 6 runs: Bcast 12 KiB 1.67 -> 2.03 us, Reduce 16 KiB 1.89 -> 2.07,
 * Gather 16 KiB 1.44 -> 1.59) and nothing faster beyond noise, so it stays. */
#define SCHED_IMMEDIATE_MAX 8192

void tdm_sched_immediate(tdm_sched_t *s, size_t bytes) {
    if (s->blocking && bytes <= SCHED_IMMEDIATE_MAX && s->n == 0)
        s->immediate = true;
}

int tdm_sched_rank(const tdm_sched_t *s, int *size_p) {
    if (s->view) {
        *size_p = s->vsize;
        return s->vrank;
    }
    *size_p = s->comm->size;
    return s->comm->rank;
}

void tdm_sched_view(tdm_sched_t *s, const int *ranks, int n, int me) {
    s->view = ranks;
    s->vsize = n;
    s->vrank = me;
}

tdm_sched_t *tdm_sched_new(tdm_comm_t *comm, bool blocking) {
    coll_state_t *st = coll_state(comm);
    tdm_sched_t *s = NULL;
    if (blocking && st && st->spare) {
        s = st->spare;
        st->spare = NULL;
    } else {
        tdm_lock_acquire(&cache_lock);
        s = sched_free_list;
        if (s) {
            sched_free_list = s->next_free;
            sched_free_count--;
        }
        tdm_lock_release(&cache_lock);
    }
    if (!s && !(s = malloc(sizeof(*s))))
        return NULL;
    /* everything before the inline arrays starts zeroed */
    memset(s, 0, offsetof(tdm_sched_t, inline_steps));
    s->steps = s->inline_steps;
    s->cap = SCHED_INLINE_STEPS;
    s->tmps = s->inline_tmps;
    s->tmpcap = SCHED_INLINE_TMPS;
    s->comm = comm;
    s->blocking = blocking;
    /* started by the user's call, which the user orders with the communicator's other
     * collectives: a load and a store */
    TDM_COUNTER_ADD_LOOSE(&comm->pv.coll_ops, 1);
    s->tag = next_tag(st, blocking);
    if (s->tag < 0)
        s->error = TDM_ERR_NOMEM;
    if (!blocking) /* it may outlive the call that started it */
        tdm_comm_retain(comm);
    return s;
}

/* Temporaries of 64 KiB and more are kept for the next collective (up to 8
 * blocks, 64 MiB): a fresh malloc of a large block is a fresh mmap, and first
 * touching its pages, then having the peer's process_vm_readv/writev fault
 * them in again, made a 1 MiB recursive-doubling Allreduce on 2 ranks take
 * 1.5 ms. From 256 KiB they are 2 MiB-aligned and advised for huge pages:
 * 1 MiB Allreduce, 2 ranks, recursive doubling 1.5 ms -> 0.26 ms (cached) ->
 * 0.18 ms (cached, huge pages); ring 0.22 ms -> 0.18 ms. */
#define TMP_CACHE_SLOTS 8
#define TMP_CACHE_MIN ((size_t)64 << 10)
#define TMP_CACHE_MAX ((size_t)64 << 20)
#define TMP_HUGE_MIN ((size_t)256 << 10)
#define TMP_HUGE ((size_t)2 << 20)
static tmp_t tmp_cache[TMP_CACHE_SLOTS];
static size_t tmp_cache_bytes;

static void *tmp_get(size_t *bytes_p) {
    size_t want = *bytes_p;
    if (want >= TMP_CACHE_MIN) {
        tdm_lock_acquire(&cache_lock);
        int best = -1;
        for (int i = 0; i < TMP_CACHE_SLOTS; i++)
            if (tmp_cache[i].p && tmp_cache[i].n >= want &&
                (best < 0 || tmp_cache[i].n < tmp_cache[best].n))
                best = i;
        if (best >= 0) {
            void *p = tmp_cache[best].p;
            *bytes_p = tmp_cache[best].n;
            tmp_cache_bytes -= tmp_cache[best].n;
            tmp_cache[best].p = NULL;
            tdm_lock_release(&cache_lock);
            return p;
        }
        tdm_lock_release(&cache_lock);
    }
    if (want >= TMP_HUGE_MIN) {
        /* whole 2 MiB pages, offered to transparent huge pages: the peer's
         * process_vm_readv/writev then pins one page where it pinned 512 */
        size_t n = (want + TMP_HUGE - 1) & ~(TMP_HUGE - 1);
        void *p = NULL;
        if (posix_memalign(&p, TMP_HUGE, n) != 0)
            return NULL;
        (void)madvise(p, n, MADV_HUGEPAGE); /* a hint: failure only costs speed */
        *bytes_p = n;
        return p;
    }
    return malloc(want ? want : 1);
}

static void tmp_put(void *p, size_t n) {
    if (n >= TMP_CACHE_MIN && n <= TMP_CACHE_MAX) {
        void *evict = NULL;
        tdm_lock_acquire(&cache_lock);
        int slot = -1;
        for (int i = 0; i < TMP_CACHE_SLOTS; i++) {
            if (!tmp_cache[i].p) {
                slot = i;
                break;
            }
            if (tmp_cache[i].n < n && (slot < 0 || tmp_cache[i].n < tmp_cache[slot].n))
                slot = i; /* full: replace the smallest block smaller than this one */
        }
        if (slot >= 0 && tmp_cache[slot].p) {
            tmp_cache_bytes -= tmp_cache[slot].n;
            evict = tmp_cache[slot].p;
            tmp_cache[slot].p = NULL;
        }
        if (slot >= 0 && tmp_cache_bytes + n <= TMP_CACHE_MAX) {
            tmp_cache[slot].p = p;
            tmp_cache[slot].n = n;
            tmp_cache_bytes += n;
            p = NULL;
        }
        tdm_lock_release(&cache_lock);
        free(evict);
    }
    free(p);
}

double tdm_sched_cache_use(int i) {
    (void)i;
    return (double)TDM_LOAD_RELAXED(&tmp_cache_bytes) / (double)TMP_CACHE_MAX;
}

void tdm_sched_cache_fini(void) {
    while (sched_free_list) {
        tdm_sched_t *n = sched_free_list->next_free;
        free(sched_free_list);
        sched_free_list = n;
    }
    sched_free_count = 0;
    for (int i = 0; i < TMP_CACHE_SLOTS; i++) {
        free(tmp_cache[i].p);
        tmp_cache[i].p = NULL;
    }
    tmp_cache_bytes = 0;
}

void *tdm_sched_tmp(tdm_sched_t *s, size_t bytes) {
    if (bytes <= SCHED_SCRATCH - s->scratch_used) { /* small: inside the object */
        void *p = s->scratch + s->scratch_used;
        s->scratch_used += (bytes + 63) & ~(size_t)63;
        if (s->scratch_used > SCHED_SCRATCH)
            s->scratch_used = SCHED_SCRATCH;
        return p;
    }
    if (s->ntmps == s->tmpcap) {
        size_t ncap = 2 * s->tmpcap;
        tmp_t *n = s->tmps == s->inline_tmps ? malloc(ncap * sizeof(*n))
                                             : realloc(s->tmps, ncap * sizeof(*n));
        if (!n) {
            s->error = TDM_ERR_NOMEM;
            return NULL;
        }
        if (s->tmps == s->inline_tmps)
            memcpy(n, s->inline_tmps, sizeof(s->inline_tmps));
        s->tmps = n;
        s->tmpcap = ncap;
    }
    size_t got = bytes;
    void *p = tmp_get(&got);
    if (!p) {
        tdm_error(COLL, "out of memory for a %zu-byte collective buffer", bytes);
        s->error = TDM_ERR_NOMEM;
        return NULL;
    }
    s->tmps[s->ntmps++] = (tmp_t){p, got};
    return p;
}

void *tdm_sched_tmp_items(tdm_sched_t *s, size_t count, tdm_dtype_t *dt) {
    size_t span =
        count ? (count - 1) * (size_t)tdm_dtype_extent(dt) + (size_t)(dt->true_ub - dt->true_lb)
              : 0;
    char *p = tdm_sched_tmp(s, span);
    return p ? p - dt->true_lb : NULL;
}

/* Record a step (retaining its datatypes and op) for advance() to run. */
static void record(tdm_sched_t *s, const step_t *step) {
    if (s->n == s->cap) {
        size_t ncap = 2 * s->cap;
        step_t *n = s->steps == s->inline_steps ? malloc(ncap * sizeof(*n))
                                                : realloc(s->steps, ncap * sizeof(*n));
        if (!n) {
            s->error = TDM_ERR_NOMEM;
            return;
        }
        if (s->steps == s->inline_steps)
            memcpy(n, s->inline_steps, sizeof(s->inline_steps));
        s->steps = n;
        s->cap = ncap;
    }
    step_t *st = &s->steps[s->n++];
    *st = *step;
    if (st->sdt)
        tdm_dtype_retain(st->sdt);
    if (st->rdt)
        tdm_dtype_retain(st->rdt);
    if (st->kind != STEP_THEN && st->op)
        tdm_op_retain(st->op);
}

/*
 * In immediate mode a step runs at once, straight from its arguments: no step
 * record is built. (Built as a compound literal and passed on, the record was
 * written byte by byte and read back 16 bytes at a time, a store-forwarding
 * stall the 2-rank 8-byte Allreduce spent 4% of its samples in.) Otherwise
 * the step is recorded for advance() to run.
 */
void tdm_sched_send(tdm_sched_t *s, const void *buf, size_t count, tdm_dtype_t *dt, int peer,
                    int flags) {
    if (s->view)
        peer = s->view[peer];
    if (s->immediate) {
        post(s, true, (flags & TDM_SCHED_AHEAD) != 0, peer, flags, (void *)buf, count, dt);
        return;
    }
    record(s, &(step_t){.kind = STEP_SEND,
                        .flags = (uint8_t)flags,
                        .peer = peer,
                        .sbuf = buf,
                        .scount = count,
                        .sdt = dt});
}

void tdm_sched_recv(tdm_sched_t *s, void *buf, size_t count, tdm_dtype_t *dt, int peer, int flags) {
    if (s->view)
        peer = s->view[peer];
    if (s->immediate) {
        post(s, false, (flags & TDM_SCHED_AHEAD) != 0, peer, flags, buf, count, dt);
        return;
    }
    record(s, &(step_t){.kind = STEP_RECV,
                        .flags = (uint8_t)flags,
                        .peer = peer,
                        .rbuf = buf,
                        .rcount = count,
                        .rdt = dt});
}

void tdm_sched_copy(tdm_sched_t *s, const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                    size_t rcount, tdm_dtype_t *rdt) {
    if (s->immediate) {
        copy_data(sbuf, scount, sdt, rbuf, rcount, rdt);
        return;
    }
    record(s, &(step_t){.kind = STEP_COPY,
                        .sbuf = sbuf,
                        .scount = scount,
                        .sdt = sdt,
                        .rbuf = rbuf,
                        .rcount = rcount,
                        .rdt = rdt});
}

void tdm_sched_reduce(tdm_sched_t *s, const void *in, void *inout, size_t count, tdm_dtype_t *dt,
                      tdm_op_t *op) {
    if (s->immediate) {
        tdm_op_apply(op, in, inout, count, dt);
        return;
    }
    /* the receives of the last round that bring its operands */
    size_t i = s->n;
    while (i > 0 && s->steps[i - 1].kind == STEP_ROUND)
        i--;
    for (; i > 0 && s->steps[i - 1].kind != STEP_ROUND; i--) {
        step_t *st = &s->steps[i - 1];
        if (st->kind == STEP_RECV && (st->rbuf == in || st->rbuf == inout))
            st->flags |= TDM_SCHED_CONSUMED;
    }
    record(
        s,
        &(step_t){
            .kind = STEP_REDUCE, .sbuf = in, .rbuf = inout, .scount = count, .sdt = dt, .op = op});
}

void tdm_sched_round(tdm_sched_t *s) {
    if (s->immediate) {
        if (s->nheld || pend_load(s))
            tdm_p2p_wait_until(nothing_pending, s);
        for (int i = 0; i < s->nheld; i++) {
            note_status(s, s->held[i]);
            tdm_p2p_release(s->held[i]);
        }
        s->nheld = 0;
        return;
    }
    if (s->n && s->steps[s->n - 1].kind == STEP_ROUND)
        return;
    record(s, &(step_t){.kind = STEP_ROUND});
}

void tdm_sched_then(tdm_sched_t *s, tdm_sched_then_fn_t *fn, void *arg, tdm_dtype_t *keep) {
    tdm_sched_round(s);
    if (s->immediate) { /* the round waited: what fn sizes by is here */
        fn(s, arg);
        return;
    }
    record(s, &(step_t){.kind = STEP_THEN, .sbuf = arg, .sdt = keep, .then = fn});
}

void tdm_sched_free(tdm_sched_t *s) {
    if (TDM_UNLIKELY(s->nheld))
        tdm_sched_round(s);
    for (size_t i = 0; i < s->n; i++) {
        step_t *st = &s->steps[i];
        tdm_coll_refs_release(st->sdt, st->rdt, st->kind != STEP_THEN ? st->op : NULL);
    }
    for (size_t i = 0; i < s->ntmps; i++)
        tmp_put(s->tmps[i].p, s->tmps[i].n);
    if (s->tmps != s->inline_tmps)
        free(s->tmps);
    if (s->steps != s->inline_steps)
        free(s->steps);
    if (s->blocking) {
        coll_state_t *st = s->comm->coll;
        if (st && !st->spare) {
            st->spare = s;
            return;
        }
    } else {
        tdm_comm_release(s->comm);
    }
    tdm_lock_acquire(&cache_lock);
    if (sched_free_count < SCHED_FREE_MAX) {
        s->next_free = sched_free_list;
        sched_free_list = s;
        sched_free_count++;
        s = NULL;
    }
    tdm_lock_release(&cache_lock);
    free(s);
}

/* ---- running ---- */

/* A local copy of a large contiguous block (the caller's own block in Gather,
 * Allgather, Alltoall, ...): memcpy or non-temporal stores (tdm_copy_large),
 * chosen at run time as exchanges choose their protocol (base/adapt.h,
 * tdm_adapt_cell_t): this process times each copy per size class, takes the
 * faster way and looks at the other now and then. Which wins depends on the
 * host. On the first development host streaming won (copy.c: 2-rank Alltoall
 * 4 MiB 1000 -> 835 us); on the host of 25 November it lost everywhere
 * (2-rank, 4 MiB, medians of 10 interleaved runs, streaming -> memcpy:
 * Allgather 704 -> 591 us, Alltoall 841 -> 751, Gather 329 -> 312, Scatter
 * 328 -> 306, Reduce 298 -> 275; Open MPI 541, 739, 439, 449, 446), where
 * perf put 42% of a 4 MiB Allgather in the streaming copy, twice the kernel's
 * CMA read of the peer's block. */
enum { COPY_AUTO, COPY_MEMCPY, COPY_STREAM };
static tdm_adapt_cell_t copy_cells[TDM_ADAPT_CLASSES];
unsigned long long tdm_coll_copies[2]; /* [0] memcpy, [1] streamed: blocks of 4 MiB and up */

static int copy_mode(void) {
    static int parsed = -1; /* threads that parse it at once find the same */
    int mode = TDM_LOAD_RELAXED(&parsed);
    if (TDM_LIKELY(mode >= 0))
        return mode;
    const char *want = TDM_PARAM_S(COPY_STREAM);
    mode = COPY_AUTO;
    if (want && !strcmp(want, "memcpy"))
        mode = COPY_MEMCPY;
    else if (want && !strcmp(want, "stream"))
        mode = COPY_STREAM;
    else if (want && *want && strcmp(want, "auto") != 0)
        tdm_warn(COLL, "unknown TANDEM_COPY_STREAM '%s' (known: auto, memcpy, stream); using auto",
                 want);
    TDM_STORE_RELAXED(&parsed, mode);
    return mode;
}

static uint64_t copy_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void copy_block(char *d, const char *src, size_t bytes) {
    if (bytes < TDM_COPY_STREAM_MIN) {
        tdm_copy(d, src, bytes);
        return;
    }
    int mode = copy_mode();
    tdm_adapt_cell_t *c = mode == COPY_AUTO ? &copy_cells[tdm_adapt_class(bytes)] : NULL;
    bool stream = mode == COPY_STREAM;
    if (c) {
        tdm_lock_acquire(&cache_lock);
        stream = tdm_adapt_choose(c, 1, 1);
        tdm_lock_release(&cache_lock);
    }
    uint64_t t0 = c ? copy_now_ns() : 0;
    if (stream)
        tdm_copy_large(d, src, bytes);
    else
        tdm_copy(d, src, bytes);
    if (c) {
        uint64_t ns = copy_now_ns() - t0;
        tdm_lock_acquire(&cache_lock);
        tdm_adapt_record(c, stream, ns, bytes);
        tdm_lock_release(&cache_lock);
    }
    TDM_COUNTER_ADD(&tdm_coll_copies[stream], 1);
}

static void copy_data(const void *sbuf, size_t scount, const tdm_dtype_t *sdt, void *rbuf,
                      size_t rcount, const tdm_dtype_t *rdt) {
    size_t sb = scount * sdt->size, rb = rcount * rdt->size;
    size_t bytes = TDM_MIN(sb, rb);
    if (!bytes)
        return;
    if (sdt->contig && rdt->contig) {
        char *d = (char *)rbuf + rdt->true_lb;
        const char *src = (const char *)sbuf + sdt->true_lb;
        if (d + bytes <= src || src + bytes <= d)
            copy_block(d, src, bytes);
        else
            memmove(d, src, bytes);
        return;
    }
    char chunk[16384];
    for (size_t off = 0; off < bytes; off += sizeof(chunk)) {
        size_t len = TDM_MIN(sizeof(chunk), bytes - off);
        tdm_dtype_pack(sbuf, scount, sdt, off, chunk, len);
        tdm_dtype_unpack(rbuf, rcount, rdt, off, chunk, len);
    }
}

static void advance(tdm_sched_t *s);

static void on_p2p_complete(tdm_req_t *r) {
    tdm_sched_t *s = r->cb_arg;
    note_status(s, r);
    bool immediate = s->immediate; /* read first: at zero, a blocking caller frees s */
    if (pend_drop(s) == 0 && !immediate)
        advance(s);
}

static void finish(tdm_sched_t *s) {
    tdm_req_t *u = s->ureq;
    if (!u) { /* the blocking caller frees it */
        TDM_STORE_RELEASE(&s->done, true);
        return;
    }
    s->done = true;
    u->status.error = s->error;
    tdm_sched_free(s);
    tdm_p2p_complete(u);
}

/* A root's fan-out (fan-in) step that turns out to be alone in its round
 * (nothing in flight, only local copies and reductions after it before the
 * round ends) is waited for at once: it is then a blocking call, and the
 * selection may share the copy (COOP). On 2 ranks a Bcast, Scatter or Gather
 * was otherwise an Isend x Recv (Send x Irecv), copied by one side alone:
 * Bcast 4 MiB 501 -> 175 us; with the root's own block after the post,
 * Gather 1 MiB 105 -> 65 us, 4 MiB 487 -> 324; Scatter 1 MiB 83 -> 65 us
 * (medians of 5 interleaved runs; Open MPI 98, 447, 106). */
static bool alone_in_round(const tdm_sched_t *s, const step_t *st) {
    if (pend_load(s) > (int)s->guarded)
        return false;
    const step_t *next = st + 1, *end = s->steps + s->n;
    /* the root's copy of its own block may follow: local work, which it does
     * before it waits either way */
    while (next != end && (next->kind == STEP_COPY || next->kind == STEP_REDUCE))
        next++;
    return next == end || next->kind == STEP_ROUND;
}

/* `ahead`: the step may go ahead of a blocking peer (a recorded step:
 * TDM_SCHED_AHEAD and not alone in its round; immediate: TDM_SCHED_AHEAD). */
static void post(tdm_sched_t *s, bool send, bool ahead, int peer, int flags, void *buf,
                 size_t count, tdm_dtype_t *dt) {
    tdm_comm_t *c = s->comm;
    ahead = ahead || !s->blocking;
    int world;
    uint32_t ctx = c->ctx + 1;
    if (TDM_UNLIKELY(c->inter)) {
        /* intercomm: REMOTE steps cross to the other group on the intercomm's
         * context; the others stay in the local group, on the context of its
         * hidden intracomm (local and remote rank numbers overlap) */
        if (flags & TDM_SCHED_REMOTE) {
            world = tdm_rankmap_world(&c->remote, peer);
        } else {
            world = tdm_comm_world_rank(c, peer);
            ctx = c->local->ctx + 1;
        }
    } else {
        world = tdm_comm_world_rank(c, peer);
    }
    tdm_req_t *r = NULL;
    tdm_rc_t rc;
    /* A send that fits one cell leaves at once, and a receive whose message is
     * here already completes at once, both with no request: whether the peer
     * sees a blocking or a non-blocking call matters to rendezvous messages only.
     * With the MPI layer's direct blocking calls and the builders' division-free
     * peers (bench/coll, 2 ranks, medians of 7 interleaved runs): Bcast 4 B
     * 0.273 -> 0.195 us, Scatter 4 B 0.271 -> 0.185, Allreduce 8 B 0.410 ->
     * 0.322, Allgather 8 B 0.411 -> 0.296 (Open MPI 0.232, 0.244, 0.340, 0.308). */
    tdm_status_t now; /* a receive done at once: it fitted, so nothing to note */
    if (send)
        rc = tdm_p2p_isend(buf, count, dt, world, c->rank, s->tag, ctx,
                           ahead ? TDM_MODE_STD : TDM_MODE_STD | TDM_MODE_BLOCKING, c, false, &r);
    else
        rc = tdm_p2p_irecv_ex(buf, count, dt, peer, world, s->tag, ctx, c,
                              (ahead ? 0u : TDM_RECV_BLOCKING) |
                                  (flags & TDM_SCHED_CONSUMED ? TDM_RECV_CONSUMES : 0u),
                              &now, &r);
    if (rc == TDM_OK && !r)
        return;
    if (rc != TDM_OK || !r) {
        tdm_error(COLL, "cannot %s %zu bytes %s rank %d", send ? "send" : "receive",
                  count * dt->size, send ? "to" : "from", peer);
        set_error(s, rc != TDM_OK ? rc : TDM_ERR_INTERN);
        return;
    }
    if (s->immediate && s->nheld < SCHED_HELD) { /* the round's end waits for it */
        s->held[s->nheld++] = r;
        return;
    }
    pend_add(s, 1);                                 /* before the hook can run */
    if (!tdm_p2p_req_hook(r, on_p2p_complete, s)) { /* done already */
        pend_drop(s);
        note_status(s, r);
        tdm_p2p_release(r);
    }
}

/* Send, receive, copy or reduce (a round is the caller's to wait for). */
static void run_step(tdm_sched_t *s, step_t *st) {
    switch ((step_kind_t)st->kind) {
    case STEP_SEND:
        post(s, true, (st->flags & TDM_SCHED_AHEAD) && !alone_in_round(s, st), st->peer, st->flags,
             (void *)st->sbuf, st->scount, st->sdt);
        break;
    case STEP_RECV:
        post(s, false, (st->flags & TDM_SCHED_AHEAD) && !alone_in_round(s, st), st->peer, st->flags,
             st->rbuf, st->rcount, st->rdt);
        break;
    case STEP_COPY:
        copy_data(st->sbuf, st->scount, st->sdt, st->rbuf, st->rcount, st->rdt);
        break;
    case STEP_REDUCE:
        tdm_op_apply(st->op, st->sbuf, st->rbuf, st->scount, st->sdt);
        break;
    case STEP_THEN:
        /* appends steps, which may move s->steps: st is not used after */
        st->then(s, (void *)st->sbuf);
        break;
    case STEP_ROUND:
        break;
    }
}

/* Run steps until a round must wait. Called by the one thread that owns the
 * schedule's next step: the starter, or the hook that took `pending` to zero. */
static void advance(tdm_sched_t *s) {
    for (;;) {
        pend_add(s, 1); /* the guard (see the top of the file) */
        s->guarded = true;
        while (s->cur < s->n) {
            step_t *st = &s->steps[s->cur++];
            if (st->kind == STEP_ROUND && pend_load(s) > 1)
                break;
            run_step(s, st);
        }
        s->guarded = false;
        if (pend_drop(s) != 0)
            return; /* the hook that completes the round goes on */
        if (s->cur >= s->n) {
            finish(s);
            return;
        }
    }
}

static bool sched_done(void *arg) {
    return TDM_LOAD_ACQUIRE(&((tdm_sched_t *)arg)->done);
}

static bool nothing_pending(void *arg) {
    tdm_sched_t *s = arg;
    for (int i = 0; i < s->nheld; i++)
        if (!tdm_req_done(s->held[i]))
            return false;
    return pend_load(s) == 0;
}

int tdm_sched_run(tdm_sched_t *s, tdm_req_t **req_p) {
    if (s->immediate) { /* blocking; every step ran already: wait for the last round */
        tdm_sched_round(s);
        int rc = s->error;
        tdm_sched_free(s);
        return rc;
    }
    if (s->error != TDM_OK) {
        int rc = s->error;
        tdm_sched_free(s);
        return rc;
    }
    if (req_p) {
        tdm_req_t *u = tdm_req_alloc(TDM_REQ_OTHER);
        if (!u) {
            tdm_sched_free(s);
            return TDM_ERR_NOMEM;
        }
        tdm_req_set_comm(u, s->comm);
        u->status.source = TDM_ANY_SOURCE;
        u->status.tag = TDM_ANY_TAG;
        u->status.error = TDM_OK;
        u->status.bytes = 0;
        s->ureq = u;
        *req_p = u;
        advance(s);
        return TDM_OK;
    }
    advance(s);
    if (!sched_done(s))
        tdm_p2p_wait_until(sched_done, s);
    int rc = s->error;
    tdm_sched_free(s);
    return rc;
}
