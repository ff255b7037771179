/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node's shared segment: per-process blocks (doorbell, copy-load
 * counters), and one single-producer/single-consumer ring of fixed-size cells
 * for every ordered pair of local ranks. The segment is sized by the node's
 * ranks and indexed by local index (a rank's place among them); every call
 * below names a peer by its world rank, which `tdm_shm.port` maps.
 *
 * A cell's first word `seq` is its hand-off: for lap L of the ring (L = position
 * / ncells) the value 2L means "free for the producer", 2L+1 "full for the
 * consumer". The producer publishes, then reads the consumer's `sleeping` flag;
 * that load must not pass the store, or a consumer about to block could miss the
 * cell and the producer miss the flag. The fence that forbids it is asymmetric
 * when the kernel offers membarrier(2): the producer, on every message, only
 * keeps the compiler from reordering, and a rank about to block runs
 * membarrier(GLOBAL_EXPEDITED) after setting `sleeping`, which fences every
 * running rank (tdm_shm_block_fence). Without it the producer's store is
 * seq_cst. The consumer consumes with an acquire load and frees with a release
 * store. A zero-filled
 * segment is a valid empty state, so no rank has to initialise another's rings.
 *
 * The segment lives in an inherited memfd (see boot.h): nothing is ever named in
 * /dev/shm and the memory disappears with the last process of the job.
 */
#ifndef TDM_NET_SHM_H
#define TDM_NET_SHM_H

#include "../base/util.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Bytes at the start of a cell owned by the transport; the body follows. */
#define TDM_SHM_CELL_PREFIX 8

typedef struct tdm_shm_cell {
    _Atomic uint32_t seq;
    uint32_t rsvd;
    unsigned char body[]; /* packet: a wire.h header, then payload */
} tdm_shm_cell_t;

/* Per-process block in the segment, two cache lines. Written by its process only;
 * peers read it (and bump `doorbell` to wake it). `sleeping` is 1 while the process is
 * blocked, or with several threads (MPI_THREAD_MULTIPLE) the number of its threads
 * blocked: non-zero means ring the doorbell, whose wake reaches them all. */
typedef struct tdm_shm_proc {
    _Atomic uint32_t doorbell; /* futex word: bumped by whoever wakes us */
    _Atomic uint32_t sleeping; /* 1 while blocked (or about to block) on the doorbell */
    int32_t pid;
    uint32_t rsvd;
    uint64_t probe_addr; /* address of a word holding probe_val, for the CMA probe */
    uint64_t probe_val;
    unsigned char pad0[TDM_CACHELINE - 32];
    _Atomic int64_t copies_pending; /* COOP-load: copies this process must do */
    _Atomic int64_t bytes_pending;  /* bytes of those copies */
    /* Written by the owner while it waits in the library (every few dozen polls, and when
     * it sends an RTS), read by peers choosing a protocol: a peer whose beat is old and
     * that is not `sleeping` is not running (preempted, or computing outside MPI). Kept
     * off the first line, which producers read on every publish. */
    _Atomic uint32_t beat; /* the owner's CLOCK_MONOTONIC in units of 1024 ns, low 32 bits */
    _Atomic int32_t cpu;   /* the CPU it last polled on (-1: not known yet) */
    /* Threads of the owner inside a wait of the library, kept only while its progress
     * thread runs (p2p/async.c), read by peers choosing who copies a message. Off the
     * first line too: written at every wait, it would make the line producers read on
     * every publish bounce between the cores. */
    _Atomic uint32_t app_waiting;
    unsigned char pad1[TDM_CACHELINE - 28];
} tdm_shm_proc_t;

/* Per ordered pair (producer -> consumer), one cache line: `producer_waiting` is
 * written by both ends (set by the producer, cleared when it drains), `cma_off` by
 * the first process, each `upper` word by the one side the layer above names. */
#define TDM_SHM_PAIR_UPPER 2
typedef struct tdm_shm_pair {
    _Atomic uint32_t producer_waiting; /* producer found the ring full and may block */
    _Atomic uint32_t cma_off;          /* the first process of the pair stopped using CMA with the
                                          second (cma.c): both sides read it, so the pair agrees */
    /* Words the layer above owns and names (its adaptive choices); the transport only
     * keeps them in the pair's line, zero at start-up. */
    _Atomic uint32_t upper[TDM_SHM_PAIR_UPPER];
    unsigned char pad[TDM_CACHELINE - 8 - 4 * TDM_SHM_PAIR_UPPER];
} tdm_shm_pair_t;
_Static_assert(sizeof(tdm_shm_pair_t) == TDM_CACHELINE, "a pair's slot is one cache line");

typedef struct tdm_shm_hdr {
    uint64_t magic;
    uint32_t nranks;
    uint32_t ncells;
    uint32_t cell_size;
    uint32_t rsvd;
    _Atomic uint32_t barrier_count;
    _Atomic uint32_t barrier_epoch;
    _Atomic uint32_t aborting;   /* a rank is taking the job down */
    _Atomic uint32_t cma_warned; /* the job's one CMA warning has been printed (cma.c) */
} tdm_shm_hdr_t;

/* This process's view of one peer of its node, by world rank: where its rings and slots
 * are, and the positions of this process's ends. tx_head and rx_tail are written only
 * under the pair's lock of the engine above (p2p_impl.h: one producing and one consuming
 * thread at a time); rx_tail is read without it (tdm_shm_recv_peek, to see whether a
 * ring is worth locking), so it is loaded and stored as a relaxed atomic (plain moves).
 * A peer on another node has local -1 and NULL pointers: no call here may name it. */
typedef struct tdm_shm_port {
    uint64_t tx_head;        /* next position we produce */
    uint64_t rx_tail;        /* next position we consume */
    unsigned char *tx_ring;  /* our ring toward the peer */
    unsigned char *rx_ring;  /* the peer's ring toward us */
    tdm_shm_proc_t *proc;    /* the peer's block */
    tdm_shm_pair_t *rx_pair; /* slot (peer, us) */
    int32_t local;           /* the peer's local index, -1 when it is on another node */
    uint32_t rsvd[3];
} tdm_shm_port_t;
_Static_assert(sizeof(tdm_shm_port_t) == 64, "a port is one cache line");

typedef struct tdm_shm {
    void *base;
    size_t bytes;
    int rank, nranks; /* this process's local index, and the node's ranks */
    int world_size;
    uint32_t ncells, cell_mask, cell_size;
    uint32_t lap_shift; /* log2(ncells) */
    tdm_shm_hdr_t *hdr;
    tdm_shm_proc_t *procs; /* by local index */
    tdm_shm_pair_t *pairs; /* by local index: (src, dst) at src * nranks + dst */
    unsigned char *rings;
    size_t ring_bytes;
    tdm_shm_port_t *port; /* by world rank */
    int membarrier;       /* registered for membarrier(GLOBAL_EXPEDITED): light publishes */
} tdm_shm_t;

extern tdm_shm_t tdm_shm;

/* Bytes of the segment of a node of `nlocal` ranks with the tunables' ring sizes. */
size_t tdm_shm_bytes(int nlocal);
/* Map the segment from fd at `offset` (grown to tdm_shm_bytes(nlocal), never shrunk),
 * publish our pid, and wait for every local rank to arrive. `locals` lists the world
 * ranks of the node in local-index order, `me` is this process's local index, `world`
 * the job's size. 0 or -errno (logged). */
int tdm_shm_init(int fd, size_t offset, const int *locals, int nlocal, int me, int world);
void tdm_shm_fini(void);

/* Barrier over the local ranks; `progress` (may be NULL) runs while waiting. */
void tdm_shm_barrier(void (*progress)(void));

/* Wake `peer` if it sleeps on its doorbell. */
void tdm_shm_wake(int peer);
/* Block on our doorbell until woken or `timeout_us` passes. Call with
 * procs[rank].sleeping already set and `seen` = doorbell read after setting it. */
void tdm_shm_sleep(uint32_t seen, long timeout_us);
/* The heavy side of the publish/`sleeping` fence: call after setting `sleeping`
 * and before looking at the rings a last time. */
void tdm_shm_block_fence(void);

/* The clock of `beat` (units of 1024 ns): comparable between the processes of a node. */
static inline uint32_t tdm_shm_clock(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)(((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) >> 10);
}

/* Usable bytes in a cell body. */
static inline size_t tdm_shm_body_size(void) {
    return tdm_shm.cell_size - TDM_SHM_CELL_PREFIX;
}

/* Does `peer` (world rank) share this node's segment? */
static inline int tdm_shm_is_local(int peer) {
    return tdm_shm.port[peer].local >= 0;
}

/* The block of `peer` (world rank, on this node). */
static inline tdm_shm_proc_t *tdm_shm_proc(int peer) {
    return tdm_shm.port[peer].proc;
}

/* This process's own block. */
static inline tdm_shm_proc_t *tdm_shm_self(void) {
    return &tdm_shm.procs[tdm_shm.rank];
}

/* The shared slot of the ordered pair (src, dst), world ranks of this node. */
static inline tdm_shm_pair_t *tdm_shm_pair(int src, int dst) {
    return &tdm_shm.pairs[(size_t)tdm_shm.port[src].local * (size_t)tdm_shm.nranks +
                          (size_t)tdm_shm.port[dst].local];
}

static inline tdm_shm_cell_t *tdm_shm_ring_cell(unsigned char *ring, uint64_t pos) {
    return (tdm_shm_cell_t *)(ring + (size_t)(pos & tdm_shm.cell_mask) * tdm_shm.cell_size);
}

/* Next free cell body toward `peer`, or NULL when the ring is full. */
static inline void *tdm_shm_send_reserve(int peer) {
    tdm_shm_port_t *pt = &tdm_shm.port[peer];
    uint64_t pos = pt->tx_head;
    tdm_shm_cell_t *c = tdm_shm_ring_cell(pt->tx_ring, pos);
    uint32_t want = (uint32_t)(pos >> tdm_shm.lap_shift) << 1;
    if (atomic_load_explicit(&c->seq, memory_order_acquire) != want)
        return NULL;
    return c->body;
}

/* The spare word of a reserved cell's prefix (`body` from tdm_shm_send_reserve),
 * and of a received one: the sender's clock for a timed message (p2p/select.c),
 * 0 for any other. */
static inline void tdm_shm_cell_set_stamp(void *body, uint32_t v) {
    ((tdm_shm_cell_t *)(void *)((unsigned char *)body - TDM_SHM_CELL_PREFIX))->rsvd = v;
}
static inline uint32_t tdm_shm_cell_stamp(const void *body) {
    return ((const tdm_shm_cell_t *)(const void *)((const unsigned char *)body -
                                                   TDM_SHM_CELL_PREFIX))
        ->rsvd;
}

/* Publish the cell returned by the last reserve toward `peer`. */
static inline void tdm_shm_send_commit(int peer) {
    tdm_shm_port_t *pt = &tdm_shm.port[peer];
    uint64_t pos = pt->tx_head++;
    tdm_shm_cell_t *c = tdm_shm_ring_cell(pt->tx_ring, pos);
    uint32_t full = ((uint32_t)(pos >> tdm_shm.lap_shift) << 1) | 1;
    if (TDM_LIKELY(tdm_shm.membarrier)) {
        /* a plain store: the core goes on while the line travels to the consumer
         * (the seq_cst xchg stalled here for 88% of a 2-rank Sendrecv's send path) */
        atomic_store_explicit(&c->seq, full, memory_order_release);
        atomic_signal_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&pt->proc->sleeping, memory_order_relaxed))
            tdm_shm_wake(peer);
        return;
    }
    atomic_store_explicit(&c->seq, full, memory_order_seq_cst);
    if (atomic_load_explicit(&pt->proc->sleeping, memory_order_seq_cst))
        tdm_shm_wake(peer);
}

/* Next full cell body from `peer`, or NULL. */
static inline void *tdm_shm_recv_peek(int peer) {
    tdm_shm_port_t *pt = &tdm_shm.port[peer];
    uint64_t pos = __atomic_load_n(&pt->rx_tail, __ATOMIC_RELAXED);
    tdm_shm_cell_t *c = tdm_shm_ring_cell(pt->rx_ring, pos);
    uint32_t want = ((uint32_t)(pos >> tdm_shm.lap_shift) << 1) | 1;
    if (atomic_load_explicit(&c->seq, memory_order_acquire) != want)
        return NULL;
    return c->body;
}

/* Hand the cell returned by the last peek from `peer` back to its producer. */
static inline void tdm_shm_recv_release(int peer) {
    tdm_shm_port_t *pt = &tdm_shm.port[peer];
    uint64_t pos = pt->rx_tail;
    __atomic_store_n(&pt->rx_tail, pos + 1, __ATOMIC_RELAXED);
    tdm_shm_cell_t *c = tdm_shm_ring_cell(pt->rx_ring, pos);
    atomic_store_explicit(&c->seq, (uint32_t)((pos >> tdm_shm.lap_shift) + 1) << 1,
                          memory_order_release);
    tdm_shm_pair_t *p = pt->rx_pair;
    /* The producer found the ring full. Wake it only if it really sleeps: while it
     * still polls, a futex call per released cell cost a back-to-back 4-byte
     * MPI_Bcast 0.4 us. The fence orders our release of the cell before the
     * read of `sleeping` (the producer sets `sleeping`, then looks at the ring). */
    if (TDM_UNLIKELY(atomic_load_explicit(&p->producer_waiting, memory_order_relaxed))) {
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&pt->proc->sleeping, memory_order_relaxed))
            tdm_shm_wake(peer);
    }
}

#endif
