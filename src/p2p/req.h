/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests. They live in chunks that never move, named by a 32-bit id: the low
 * TDM_REQ_INDEX_BITS are the index, the rest a generation that changes each time
 * the slot is reused, so a stale id in a packet is detected, not followed.
 */
#ifndef TDM_P2P_REQ_H
#define TDM_P2P_REQ_H

#include "../base/util.h"
#include "../dtype/dtype.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TDM_REQ_INDEX_BITS 22
#define TDM_REQ_INDEX_MASK ((1u << TDM_REQ_INDEX_BITS) - 1)
#define TDM_REQ_CHUNK 1024

typedef enum {
    TDM_REQ_FREE = 0,
    TDM_REQ_SEND,
    TDM_REQ_RECV,
    TDM_REQ_GREQ,  /* generalized request */
    TDM_REQ_OTHER, /* completes through `done` set by an upper layer (e.g. collectives) */
    TDM_REQ_PSEND, /* partitioned send (part.c): persistent; each start's round is `inner` */
    TDM_REQ_PRECV, /* partitioned receive (part.c), the same */
} tdm_req_kind_t;

typedef struct tdm_status {
    int source;
    int tag;
    int error; /* internal error code, TDM_OK when fine (see p2p.h) */
    int cancelled;
    size_t bytes; /* bytes received (or sent) */
} tdm_status_t;

/* Items of a peer's transmit queue: requests with cells left to write, or a
 * control packet that did not fit because the ring was full. */
typedef struct tdm_txitem {
    tdm_list_t link;
    uint8_t is_ctrl;
} tdm_txitem_t;

struct tdm_unexp;

/* Who may touch a request (MPI_THREAD_MULTIPLE; p2p_impl.h has the locks):
 * - its starter, until the call that started it returns;
 * - a receive waiting in a posted queue: that queue's bucket lock; once matched, and a
 *   send from its start: the lock of its peer (tdm_p2p.peers[peer_world].lock), which
 *   every packet handler of that peer, the transmit queue and the copy queue hold;
 * - `done` is set once, last (tdm_req_done reads it with acquire): after it the request
 *   is its waiter's, who reads the status and releases it. Threaded, it holds the bits
 *   TDM_REQ_C_*, set with one atomic fetch_or each, which decide who releases a request
 *   that several threads may finish at once: its completion, MPI_Request_free
 *   (tdm_p2p_req_free_user) and an upper layer attaching a hook (tdm_p2p_req_hook);
 * - the dump reads every field from a signal handler, without locks. */
typedef struct tdm_req {
    tdm_txitem_t tx; /* transmit queue link (sends) */
    tdm_list_t link; /* posted queue link (receives) */
    uint32_t id;
    uint8_t kind;
    uint8_t stage; /* the protocol's stage (its enum, in its file in proto/) */
    uint8_t mode;  /* tdm_send_mode_t | TDM_MODE_BLOCKING */
    uint8_t proto; /* the protocol moving it (tdm_proto_id_t); receives: NONE until matched */
    volatile unsigned done; /* set once when the operation completed (tdm_req_done); threaded,
                               TDM_REQ_C_* bits: completion, hook and free, atomically */
    uint8_t inline_hook;    /* the engine's own hook, run under the pair lock (TDM_REQ_C_*) */
    uint8_t persistent;     /* created by *_init; survives completion */
    uint8_t active;         /* persistent: started and not yet completed */
    uint8_t user_freed;     /* MPI_Request_free while active: release on completion */
    uint8_t cancel_pending;
    uint8_t hdr_done;    /* send: the first packet (EAGER or RTS) is in the ring */
    uint8_t acked;       /* send: the receiver's ACK/CTS has arrived */
    uint8_t out_counted; /* send: counted in tdm_p2p.rndv_out until it completes */
    uint8_t owned;       /* a blocking call's own request (tdm_req_set_comm_owned) */
    pthread_t owner;     /* owned: the thread of the blocking call */
    uint32_t t_sent;     /* adaptive eager range (p2p/select.c), send: when it was called;
                            receive matched while posted: the sender's stamp; else 0 */
    void *comm;          /* the upper layer's communicator (for error handlers) */
    uint32_t ctx;
    int peer;       /* comm rank of the peer (or ANY_SOURCE for receives) */
    int peer_world; /* world rank of the peer (sends), or of the matched sender */
    int self_rank;  /* our rank in the communicator (sends) */
    int tag;
    void *buf;
    size_t count;
    tdm_dtype_t *dt;
    size_t bytes;         /* count * dt->size */
    size_t offset;        /* bytes moved so far */
    size_t msg_size;      /* receive: size of the matched message */
    tdm_list_t copy_link; /* in the copy queue while a CMA part is pending */
    uint32_t remote_id;   /* the peer's request id in a rendezvous */
    tdm_status_t status;
    void *bsend_block;                     /* buffered send: block in the attached buffer */
    struct tdm_unexp *unexp;               /* receive that claimed a message still arriving */
    void (*on_complete)(struct tdm_req *); /* upper-layer hook (tdm_p2p_req_hook) */
    struct tdm_req *hook_next;             /* in the list of hooks to run (threaded) */
    struct tdm_req *inner; /* persistent request: the operation of the current Start */
    void *cb_arg;
    /* generalized requests */
    void *greq_query, *greq_free, *greq_cancel, *greq_state;
    unsigned char proto_state[192]; /* per-protocol state, sized by _Static_assert there */
} tdm_req_t;

/* `done` bits: the operation completed; a hook is attached; nobody waits (release it).
 * Unthreaded, `done` is 0 or 1 (hooks and frees use on_complete and user_freed). A request
 * the engine makes for itself with a hook of its own (on_complete, user_freed set at
 * creation) sets inline_hook: that hook runs at completion, under the pair lock. */
#define TDM_REQ_C_DONE 1u
#define TDM_REQ_C_HOOKED 2u
#define TDM_REQ_C_FREED 4u
#define TDM_REQ_C_ARMED 8u /* counted by the progress thread until it completes (async.c) */
/* Its one release is taken (tdm_p2p_req_claim): by its waiter, by MPI_Request_free, or by
 * its completion after a free; a second thread finishing it at once sees the bit. */
#define TDM_REQ_C_CLAIMED 16u

/* Has the operation completed? An acquire load: what the completer wrote before is seen. */
static inline bool tdm_req_done(const tdm_req_t *req) {
    return (__atomic_load_n(&req->done, __ATOMIC_ACQUIRE) & TDM_REQ_C_DONE) != 0;
}

tdm_req_t *tdm_req_alloc(tdm_req_kind_t kind);
/* Attach the upper layer's communicator: a request holds a reference to it until
 * freed, so MPI_Comm_free is safe while operations are pending. */
void tdm_req_set_comm(tdm_req_t *req, void *comm);
/* The same for a blocking call's own request (MPI_Send's, MPI_Recv's), which is never
 * handed out, hooked, freed by the user or armed: its caller holds the communicator for
 * the whole call (MPI forbids freeing it meanwhile), so it takes no reference. */
static inline void tdm_req_set_comm_owned(tdm_req_t *req, void *comm) {
    req->comm = comm;
    req->owned = 1;
    req->owner = pthread_self();
}
/* The upper layer's retain/release, set once by comm/ at start-up. */
void tdm_req_set_comm_hooks(void (*retain)(void *), void (*release)(void *));
void tdm_req_free(tdm_req_t *req);
/* The request an id names, or NULL if the id is stale or invalid. */
tdm_req_t *tdm_req_lookup(uint32_t id);
/* Index of a request (for handles), and back. */
static inline uint32_t tdm_req_index(const tdm_req_t *req) {
    return req->id & TDM_REQ_INDEX_MASK;
}
tdm_req_t *tdm_req_by_index(uint32_t index);
/* The slot of an index whatever its state (kind TDM_REQ_FREE included), or NULL past the
 * last chunk: for walking every request (dump.c); safe in a signal handler. */
tdm_req_t *tdm_req_slot(uint32_t index);
/* Requests currently allocated (for leak checks at finalize). */
size_t tdm_req_in_use(void);
/* Is an operation on `comm` under way: a request attached to it and not yet
 * complete (persistent ones count through the operation of their round)?
 * Scans every request (MPI_Comm_disconnect). */
bool tdm_req_busy_on(const void *comm);

#endif
