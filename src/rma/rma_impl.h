/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside src/rma only: the window's shared object, op and target objects, and the
 * helpers the files share.
 */
#ifndef TDM_RMA_IMPL_H
#define TDM_RMA_IMPL_H

#include "rma.h"
#include "../base/log.h"
#include "../base/params.h"
#include "../coll/coll.h"
#include "../net/shm.h"

#include <stdatomic.h>
#include <sys/types.h>
#include <sys/uio.h>

#define TDM_RMA_MAGIC 0x746e64726d61ull /* "tndrma" */

/* The window's shared object starts with this header. */
typedef struct tdm_rma_shared {
    uint64_t magic;
    uint32_t nranks;
    uint32_t slot_stride; /* bytes between slots (a multiple of a cache line) */
    uint64_t slots_off;   /* where slot 0 is */
    uint64_t data_off;    /* allocate / shared: where the members' memory starts */
    uint32_t lockq_off;   /* in a slot: its lock queue (nranks words), then its grants */
    unsigned char pad0[TDM_CACHELINE - 36];
    /* the fence barrier: arrivals of this generation, and the generation */
    _Atomic uint32_t bar_count;
    _Atomic uint32_t bar_gen;
    _Atomic uint32_t am; /* a member cannot reach another by CMA: messages (am.c) */
    unsigned char pad1[TDM_CACHELINE - 12];
} tdm_rma_shared_t;

/* The lock word: this bit while held exclusively, else the number of shared holders. */
#define TDM_RMA_LOCK_X 0x80000000u

/* One member's slot. The first line is written at creation only; the others by the
 * origins that lock, accumulate and synchronize with this member. */
struct tdm_rma_slot {
    uint64_t base;  /* create: the address in its owner; allocate/shared: offset from data */
    uint64_t bytes; /* size of its memory */
    int64_t disp_unit;
    int32_t pid;
    int32_t world; /* its rank in MPI_COMM_WORLD (doorbells) */
    unsigned char pad0[TDM_CACHELINE - 32];
    /* passive target */
    _Atomic uint32_t lock;   /* TDM_RMA_LOCK_X, or shared holders */
    _Atomic uint32_t qmutex; /* guards lock changes, qhead, qtail and the queue (sync.c) */
    uint32_t qhead, qtail;   /* the lock's FIFO of waiting requests, a ring of nranks words */
    _Atomic uint32_t acc;    /* the accumulate lock, for what the CPU cannot do atomically */
    _Atomic int32_t owner;   /* window rank holding the lock exclusively, -1 */
    unsigned char pad1[TDM_CACHELINE - 24];
    /* PSCW: posts naming this member as an origin, completes naming it as a target */
    _Atomic uint32_t posts;
    _Atomic uint32_t completes;
    unsigned char pad2[TDM_CACHELINE - 8];
    /* dynamic windows: the regions attached, under a sequence lock (odd: changing) */
    _Atomic uint32_t dyn_seq;
    uint32_t ndyn;
    struct {
        uint64_t base, bytes;
    } dyn[];
};

static inline tdm_rma_slot_t *tdm_rma_slot(const tdm_win_t *w, int rank) {
    return (tdm_rma_slot_t *)(void *)((unsigned char *)w->sh + w->sh->slots_off +
                                      (size_t)rank * w->sh->slot_stride);
}

/* A queued operation (a fixed pool shared by every window). */
typedef struct tdm_rma_op {
    tdm_list_t link;
    tdm_rma_args_t a; /* the datatypes are retained while queued */
} tdm_rma_op_t;

/* A target this process has a lock on (or asks for one), in the window's RMA table. */
typedef struct tdm_rma_target {
    tdm_list_t link;
    int rank;
    uint8_t type;    /* TDM_RMA_LOCK_*, 0: none yet */
    uint8_t granted; /* the lock is held */
    uint8_t all;     /* part of MPI_Win_lock_all */
    uint8_t nocheck; /* MPI_MODE_NOCHECK: no lock taken */
} tdm_rma_target_t;

/* Small Puts or Gets to one target in another process, combined into one
 * process_vm_writev/readv (op.c). Made at a window's first such operation. */
#define TDM_RMA_BATCH_IOV 1024          /* IOV_MAX on Linux: iovecs a call takes per side */
#define TDM_RMA_BATCH_STAGE (64 * 1024) /* Put payloads, copied when posted */
#define TDM_RMA_BATCH_OP_MAX 4096       /* larger operations go alone */
typedef struct tdm_rma_batch {
    uint32_t nops; /* 0: empty */
    uint8_t kind;  /* TDM_RMA_PUT or TDM_RMA_GET */
    int target, world, pid;
    int nl, nr;  /* iovecs: local (Gets: the result buffers; Puts: the staging), remote */
    size_t used; /* bytes */
    struct iovec liov[TDM_RMA_BATCH_IOV], riov[TDM_RMA_BATCH_IOV];
    unsigned char stage[TDM_RMA_BATCH_STAGE];
} tdm_rma_batch_t;

static inline bool tdm_rma_batch_pending(const tdm_win_t *w, int rank) {
    return w->batch && w->batch->nops && (rank < 0 || w->batch->target == rank);
}

/*
 * Threads (MPI_THREAD_MULTIPLE; base/lock.h). Who protects what:
 * - A window's own state (tdm_win_t: epoch, exposure, fence and PSCW bookkeeping,
 *   issuing mode and counts, the queue of op objects, the batch, the RMA table of
 *   target objects and their `granted`, the message path's origin side: am_dirty,
 *   am_seq) is under w->lock. Every entry point of rma.h takes it (sync.c's and
 *   op.c's wrappers, win.c's attach/detach/free) and holds it for the whole call but
 *   its waits: tdm_rma_wait_for drops it while it waits and evaluates the condition
 *   under it, so operations, flushes and lock/unlock from other threads go on
 *   meanwhile, and whoever waited looks at the state again afterwards (the drain
 *   restarts from the head of the queue). tdm_p2p_wait_until calls the condition with
 *   none of p2p's locks held (base/lock.h's rule for hooks), so taking w->lock there
 *   keeps the order rma -> p2p. Constants after creation: flavor, comm,
 *   rank, size, base, bytes, disp_unit, sh, data, am.
 * - Creation and free are collective: one thread per window at a time (MPI-4.1
 *   §12.2), so creation needs no lock; free takes w->lock for its completion.
 * - The op and target pools, tgt_extra and the list of windows are under pool.c's
 *   pool lock, taken inside a window's lock and never across a wait. The clean-up of
 *   an empty pool drains only the caller's window when threaded (draining another
 *   would take its lock inside ours); if that frees nothing, the operation is issued
 *   at once instead of queued.
 * - The shared object's words (locks, queues, grants, PSCW counters, the fence
 *   barrier, dynamic regions) are atomics or under their own spin locks (qmutex,
 *   acc): they serve threads as they serve processes.
 * - The message path's target side (am_req, am_buf) belongs to the posted service
 *   receive: its completion hook runs once per message, serves it before it posts the
 *   next, and takes no lock, so rma may call p2p with w->lock held. Sends in flight
 *   (am.c's `inflight`) and every counter (pvars.def) are relaxed atomics
 *   (TDM_COUNTER_ADD) when threaded.
 * - Staging buffers (op.c's scratch) are per thread; the failure message too.
 */

/* ---- state shared by the files ---- */
/* Set the thread's failure message (printf format); returns rc. */
tdm_rma_rc_t tdm_rma_fail(tdm_rma_rc_t rc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* pools (pool.c) */
tdm_rma_op_t *tdm_rma_op_alloc(tdm_win_t *w);
void tdm_rma_op_free(tdm_rma_op_t *op);
/* A full barrier for a flush: on x86-64 a locked add to the stack orders every earlier
 * load and store before every later one, as mfence does for ordinary memory, at about half
 * its cost (the Linux kernel's smp_mb()); elsewhere the C11 fence. */
static inline void tdm_rma_full_fence(void) {
#if defined(__x86_64__)
    __asm__ volatile("lock; addl $0,-8(%%rsp)" ::: "memory", "cc");
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

#define TDM_RMA_TARGET_BUCKETS (sizeof(((tdm_win_t *)0)->targets) / sizeof(tdm_list_t))
/* Inline: every operation and flush of a lock epoch looks its target up. */
static inline tdm_rma_target_t *tdm_rma_target_find(tdm_win_t *w, int rank) {
    if (!w->ntargets)
        return NULL;
    tdm_list_t *h = &w->targets[(unsigned)rank % TDM_RMA_TARGET_BUCKETS];
    for (tdm_list_t *it = h->next; it != h; it = it->next) {
        tdm_rma_target_t *t = TDM_CONTAINER_OF(it, tdm_rma_target_t, link);
        if (t->rank == rank)
            return t;
    }
    return NULL;
}
tdm_rma_target_t *tdm_rma_target_new(tdm_win_t *w, int rank);
void tdm_rma_target_free(tdm_win_t *w, tdm_rma_target_t *t);
/* The list of windows (clean-up): add at creation, remove at free (then the pools go
 * when it is empty). */
void tdm_rma_win_register(tdm_win_t *w);
void tdm_rma_win_unregister(tdm_win_t *w);

/* waiting (sync.c) */
bool tdm_rma_poke(int world);
void tdm_rma_poke_all(tdm_win_t *w);
/* Wait until cond(arg), which is evaluated under w->lock; the caller holds w->lock,
 * which the wait drops meanwhile. */
void tdm_rma_wait_for(tdm_win_t *w, bool (*cond)(void *), void *arg);
/* the accumulate lock of a target (never waits in progress: holders do not either) */
void tdm_rma_acc_lock(tdm_win_t *w, int rank);
void tdm_rma_acc_unlock(tdm_win_t *w, int rank);
/* Is the synchronization that lets operations reach `rank` complete (checks it)? */
bool tdm_rma_ready(tdm_win_t *w, int rank);
/* Wait until it is. */
void tdm_rma_ready_wait(tdm_win_t *w, int rank);
/* Issue queued operations: of `rank` (-1: all), waiting for their synchronization. */
tdm_rma_rc_t tdm_rma_drain(tdm_win_t *w, int rank);
/* Issue the queued operations whose synchronization is ready, waiting for nothing. */
tdm_rma_rc_t tdm_rma_drain_ready(tdm_win_t *w);
/* The shared barrier of the window's members, blocking. */
void tdm_rma_barrier(tdm_win_t *w);

/* data movement (op.c) */
/* Issue a: combined with the window's batch when it may be (combine: no request waits
 * for it; a small Put or Get to user memory in another process), else alone, after
 * the batch. */
tdm_rma_rc_t tdm_rma_issue(tdm_win_t *w, const tdm_rma_args_t *a, bool combine);
/* Issue the window's batch if it holds operations to `rank` (-1: any). */
tdm_rma_rc_t tdm_rma_batch_issue(tdm_win_t *w, int rank);
void tdm_rma_batch_free(tdm_win_t *w);
/* Check the target range of a (ERANGE, naming what was asked). */
tdm_rma_rc_t tdm_rma_check_range(tdm_win_t *w, const tdm_rma_args_t *a);
/* Apply accumulate `op` to n packed elements at `t` from `o` (locked path). */
void tdm_rma_reduce(int op, tdm_dtype_t *dt, const void *o, void *t, size_t n);

/* message path (am.c) */
tdm_rma_rc_t tdm_rma_am_start(tdm_win_t *w);
void tdm_rma_am_stop(tdm_win_t *w);
bool tdm_rma_am_target(tdm_win_t *w, int rank);
tdm_rma_rc_t tdm_rma_am_issue(tdm_win_t *w, const tdm_rma_args_t *a);
/* Wait until every message sent to `rank` (-1: all) has been applied there. */
tdm_rma_rc_t tdm_rma_am_flush(tdm_win_t *w, int rank);

#endif
