/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport interface: how the engine above (p2p, and RMA's message path) reaches
 * every peer, whichever transport serves it. Modelled on Open MPI's smsc (a small
 * documented interface that compiles to direct calls when one implementation is
 * built) and MPICH's posix eager interface (send a packet, poll into the engine's
 * handler).
 *
 * Per peer (world rank) the table says which transport serves it and what that
 * transport can do for it (TDM_NET_CAP_*). The engine asks the capabilities before it
 * picks a protocol (p2p/select.c: a protocol declares what it needs and is never chosen
 * for a peer that lacks it) and otherwise only:
 *   - sends a packet: tdm_net_send_reserve gives a body of tdm_net_body_size() bytes (a
 *     cell of the ring for CELLS; a transport without cells gives a bounce buffer it
 *     sends at commit), or NULL when the peer cannot take one now (the engine queues
 *     and calls tdm_net_send_blocked so that it is woken when room comes), and
 *     tdm_net_send_commit hands it over; tdm_net_send_copy is the copy-in form;
 *   - receives: tdm_net_recv_peek / _release hand over a peer's packets one at a time
 *     (the engine feeds them to tdm_p2p_handle_packet under the pair's lock), and
 *     tdm_net_poll drains a transport whose packets do not come per peer;
 *   - wakes and blocks: tdm_net_wake rings a peer that sleeps, tdm_net_block_* block
 *     this process until a peer rings (the shm doorbell).
 *
 * Built: shared memory + CMA (shm.h, cma.h) for the ranks of this node and, when CMake
 * finds UCX, UCX for the ranks of other nodes (remote.c over ucx.h). With shm alone every
 * call below is an inline call into shm.h: no function pointer and no branch on the eager
 * path. With UCX, TDM_NET_HAVE_REMOTE is defined and tdm_net_remote is set when the job
 * spans nodes; each call then branches on the peer's transport id, a predictable branch.
 * Without UCX, a job whose ranks span nodes ends at start-up with the node map named
 * (src/boot, and tdm_net_init as a second guard).
 */
#ifndef TDM_NET_NET_H
#define TDM_NET_NET_H

#include "cma.h"
#include "shm.h"
#include "ucx.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* What a transport can do for a peer. */
enum {
    TDM_NET_CAP_CELLS = 1u << 0, /* packets written in place into a ring the peer reads */
    TDM_NET_CAP_CMA = 1u << 1,   /* single copy from or into the peer's memory (CMA) */
    TDM_NET_CAP_RDMA = 1u << 2,  /* remote get/put of registered memory named by keys */
    TDM_NET_CAP_AM = 1u << 3,    /* packets delivered to a handler (active messages) */
};

/* Which transport serves a peer. */
typedef enum {
    TDM_NET_SHM = 0, /* this node: the shared segment's rings, doorbells, CMA (this process too) */
    TDM_NET_REMOTE = 1, /* another node: the transport built for it */
} tdm_net_tp_t;

typedef struct tdm_net_peer {
    uint8_t tp;   /* tdm_net_tp_t */
    uint8_t caps; /* TDM_NET_CAP_*, as set up; CMA may be switched off later (tdm_net_cma) */
    uint16_t rsvd;
    int32_t node; /* the peer's node, 0 .. nodes - 1 */
} tdm_net_peer_t;

typedef struct tdm_net {
    int rank, size;       /* this process's world rank, the job's size */
    int node, nodes;      /* this process's node, and how many the job spans */
    int nlocal;           /* ranks on this node, this one included */
    int *locals;          /* their world ranks, by local index */
    int *shm_peers;       /* the other ranks of this node (world ranks), nlocal - 1 of them */
    tdm_net_peer_t *peer; /* by world rank */
} tdm_net_t;

extern tdm_net_t tdm_net;

/* One transport other than shm (the interface a second transport implements). Its
 * `poll` hands the packets that came to `handler`, returning how many events it saw;
 * `send_commit` sends the first `len` bytes of the body `send_reserve` gave; `arm` says
 * whether the process may sleep on its doorbell (true: the transport rings it when its
 * own events come; false: it has events now, poll first); `barrier` is job-wide. */
typedef struct tdm_net_ops {
    const char *name;
    unsigned caps;
    size_t (*body_size)(void);
    void *(*send_reserve)(int peer);
    void (*send_commit)(int peer, size_t len);
    int (*poll)(void (*handler)(int peer, const void *body), int max);
    bool (*arm)(void);
    void (*barrier)(void (*progress)(void));
    void (*quiet)(void);
    void (*fini)(void);
} tdm_net_ops_t;

#ifdef TDM_NET_HAVE_REMOTE
extern const tdm_net_ops_t *tdm_net_remote;
#define TDM_NET_IS_SHM(_peer) TDM_LIKELY(tdm_net.peer[_peer].tp == TDM_NET_SHM)
#endif

typedef struct tdm_net_config {
    int rank, size;
    const int *node_of; /* node of each world rank, 0 .. nodes - 1 */
    int nodes;
    int shm_fd;        /* the memfd holding the node segment (src/boot) */
    size_t shm_offset; /* where the first node's segment starts in it */
    int shm_shared;    /* the nodes' segments lie one after another in this one memfd (ranks
                          of one host told to be on several nodes, TANDEM_NODE_SPLIT) */
    /* ends the job (does not return): a peer of another node failed. NULL: exit(1) */
    void (*fatal)(const char *why);
} tdm_net_config_t;

/* Build the peer table, set up the transports (the node's segment, CMA; UCX and the
 * address exchange when the job spans nodes). 0, or -1 with *what_p naming what could not
 * be set up (the cause is logged). */
int tdm_net_init(const tdm_net_config_t *cfg, const char **what_p);
void tdm_net_fini(void);

/* The UCX transport serving the ranks of other nodes, for protocols that use its get and
 * put (rendezvous by RDMA); NULL when the job does not span nodes or UCX is not built. */
tdm_ucx_t *tdm_net_ucx(void);

/* Every process of the job arrives before any leaves, serving packets meanwhile through
 * `progress` (MPI_Finalize): the node's barrier, and between nodes the remote transport's. */
void tdm_net_barrier(void (*progress)(void));

/* The job is ending normally (after its last job-wide barrier): a peer of another node
 * that goes away from now on is not a failure. */
void tdm_net_quiet(void);

/* ---- what a peer offers ---- */

static inline unsigned tdm_net_caps(int peer) {
    return tdm_net.peer[peer].caps;
}

/* Is `peer` on this node (served by the shared segment)? */
static inline bool tdm_net_local(int peer) {
    return tdm_net.peer[peer].node == tdm_net.node;
}

/* May this process copy from or into `peer`'s memory at once (CMA)? Set up for local
 * peers only; a failed call turns it off for the pair (cma.c). */
static inline bool tdm_net_cma(int peer) {
    return (tdm_net.peer[peer].caps & TDM_NET_CAP_CMA) && tdm_cma_usable(peer);
}

/* ---- sending ---- */

/* Bytes a packet toward `peer` may have (header included). */
static inline size_t tdm_net_body_size(int peer) {
#ifdef TDM_NET_HAVE_REMOTE
    if (!TDM_NET_IS_SHM(peer))
        return tdm_net_remote->body_size();
#endif
    (void)peer;
    return tdm_shm_body_size();
}

/* A packet body toward `peer`, or NULL when it cannot take one now. */
static inline void *tdm_net_send_reserve(int peer) {
#ifdef TDM_NET_HAVE_REMOTE
    if (!TDM_NET_IS_SHM(peer))
        return tdm_net_remote->send_reserve(peer);
#endif
    return tdm_shm_send_reserve(peer);
}

/* Send the body the last reserve toward `peer` gave, of which the packet is the first
 * `len` bytes (a cell goes whole; a transport without cells sends `len`). */
static inline void tdm_net_send_commit(int peer, size_t len) {
#ifdef TDM_NET_HAVE_REMOTE
    if (!TDM_NET_IS_SHM(peer)) {
        tdm_net_remote->send_commit(peer, len);
        return;
    }
#endif
    (void)len;
    tdm_shm_send_commit(peer);
}

/* The copy-in form: a packet of `hlen` header bytes then `dlen` payload bytes
 * (hlen + dlen <= tdm_net_body_size). 0, or -1 when the peer cannot take it now. */
static inline int tdm_net_send_copy(int peer, const void *hdr, size_t hlen, const void *data,
                                    size_t dlen) {
    unsigned char *b = tdm_net_send_reserve(peer);
    if (!b)
        return -1;
    memcpy(b, hdr, hlen);
    if (dlen)
        memcpy(b + hlen, data, dlen);
    tdm_net_send_commit(peer, hlen + dlen);
    return 0;
}

/* The sender's clock in a reserved body's transport word (the adaptive eager range's
 * stamp, p2p/adapt.c), and the word of a received one; a transport without it gives 0. */
static inline void tdm_net_set_stamp(int peer, void *body, uint32_t v) {
#ifdef TDM_NET_HAVE_REMOTE
    if (!TDM_NET_IS_SHM(peer))
        return;
#endif
    (void)peer;
    tdm_shm_cell_set_stamp(body, v);
}
static inline uint32_t tdm_net_stamp(int peer, const void *body) {
#ifdef TDM_NET_HAVE_REMOTE
    if (!TDM_NET_IS_SHM(peer))
        return 0;
#endif
    (void)peer;
    return tdm_shm_cell_stamp(body);
}

/* The engine queued packets toward `peer` because it could take none (blocked: it
 * would like a wake when room comes), or has sent them all (unblocked). */
static inline void tdm_net_send_blocked(int peer, bool blocked) {
#ifdef TDM_NET_HAVE_REMOTE
    if (!TDM_NET_IS_SHM(peer))
        return;
#endif
    atomic_store_explicit(&tdm_shm_pair(tdm_net.rank, peer)->producer_waiting, blocked ? 1u : 0u,
                          memory_order_relaxed);
}

/* ---- receiving ---- */

/* The next packet from `peer` (a peer of this node; others come through tdm_net_poll),
 * or NULL. */
static inline void *tdm_net_recv_peek(int peer) {
    return tdm_shm_recv_peek(peer);
}

/* Done with the packet the last peek from `peer` gave. */
static inline void tdm_net_recv_release(int peer) {
    tdm_shm_recv_release(peer);
}

/* Hand up to `max` packets of the transports without per-peer rings to `handler`
 * (which takes the pair's lock itself if it needs one); how many. */
static inline int tdm_net_poll(void (*handler)(int peer, const void *body), int max) {
#ifdef TDM_NET_HAVE_REMOTE
    if (tdm_net_remote)
        return tdm_net_remote->poll(handler, max);
#endif
    (void)handler;
    (void)max;
    return 0;
}

/* ---- waking and blocking ---- */

/* Ring `peer` (any rank, this process too) if it sleeps. A peer of another node needs
 * no ring: the packet itself wakes it (its transport's event, remote.c). */
static inline void tdm_net_wake(int peer) {
#ifdef TDM_NET_HAVE_REMOTE
    if (!TDM_NET_IS_SHM(peer))
        return;
#endif
    if (atomic_load_explicit(&tdm_shm_proc(peer)->sleeping, memory_order_seq_cst))
        tdm_shm_wake(peer);
}

/* Announce that a thread of this process is about to block (counted: several may),
 * fence against producers' publishes, and return what tdm_net_block waits on. Look at
 * every source once more after it, then block unless something came. */
static inline uint32_t tdm_net_block_prepare(bool counted) {
    tdm_shm_proc_t *me = tdm_shm_self();
    if (counted)
        atomic_fetch_add_explicit(&me->sleeping, 1, memory_order_seq_cst);
    else
        atomic_store_explicit(&me->sleeping, 1, memory_order_seq_cst);
    tdm_shm_block_fence(); /* producers publish without a fence (shm.h) */
    return atomic_load_explicit(&me->doorbell, memory_order_seq_cst);
}

/* Sleep on the doorbell until a producer rings it (or `timeout_us`). With peers of other
 * nodes the remote transport is armed first: it rings the doorbell when its events come,
 * and when it has some already the call returns at once (the caller polls again). */
static inline void tdm_net_block(uint32_t seen, long timeout_us) {
#ifdef TDM_NET_HAVE_REMOTE
    if (tdm_net_remote && !tdm_net_remote->arm())
        return;
#endif
    tdm_shm_sleep(seen, timeout_us);
}

static inline void tdm_net_block_done(bool counted) {
    tdm_shm_proc_t *me = tdm_shm_self();
    if (counted)
        atomic_fetch_sub_explicit(&me->sleeping, 1, memory_order_relaxed);
    else
        atomic_store_explicit(&me->sleeping, 0, memory_order_relaxed);
}

#endif
