/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The point-to-point engine as the layers above see it. Ranks passed here are
 * already resolved: `dst_world` is the destination's rank in MPI_COMM_WORLD,
 * `src` and `self_rank` are ranks in the communicator (which is what matching
 * compares), `ctx` the communicator's context id.
 */
#ifndef TDM_P2P_H
#define TDM_P2P_H

#include "req.h"
#include "wire.h"
#include "../base/lock.h"
#include "../base/pvar.h"

#include <stdbool.h>

/* Internal result codes; src/mpi/ turns them into MPI error classes. */
typedef enum {
    TDM_OK = 0,
    TDM_ERR_NOMEM,
    TDM_ERR_TRUNCATE, /* message longer than the receive buffer */
    TDM_ERR_BUFFER,   /* buffered send: attached buffer too small */
    TDM_ERR_INTERN,
    TDM_ERR_PENDING, /* a request in a *all/some set is not complete */
    TDM_ERR_OTHER,
} tdm_rc_t;

#define TDM_ANY_SOURCE (-2) /* same values as the MPICH ABI, checked in src/mpi */
#define TDM_ANY_TAG (-1)
#define TDM_PROC_NULL (-1)

/* A message found by probe and not yet received (MPI_Message). */
typedef struct tdm_unexp tdm_unexp_t;

typedef struct tdm_p2p_config {
    int rank, size;
    int oversubscribed;
    int shm_fd;         /* the node segment's memfd (src/boot) */
    size_t shm_offset;  /* where the segment starts in it */
    const int *node_of; /* node of each rank (src/boot), NULL: all on this one */
    int nodes;
    int shm_shared;                 /* the nodes' segments follow one another in shm_fd (boot.h) */
    void (*fatal)(const char *why); /* ends the job: a peer of another node failed */
} tdm_p2p_config_t;

/* Set up the transports (the node's shared segment, CMA) and the engine over them.
 * 0, or -1 with *what_p naming what could not be set up (the cause is logged). */
int tdm_p2p_init(const tdm_p2p_config_t *cfg, const char **what_p);
/* Finish every pending transmission, then synchronise with every other process
 * while still serving their packets; nothing in flight is lost (MPI_Finalize). */
void tdm_p2p_barrier(void);
/* Threads of this process blocked in tdm_p2p_wait_until now (a relaxed read). */
int tdm_p2p_waiters(void);
/* When the library's last user is gone: finish every pending transmission and
 * forget the messages and receives nobody will complete, but for the messages of
 * contexts keep_ctx and keep_ctx + 1, which may come early from a peer that has
 * already started anew (the creations of communicators from groups). The engine
 * is set up once per process and stays: peers that still run keep using the rings
 * with us at the positions both sides know, and a later MPI_Session_init goes on
 * with them. */
void tdm_p2p_drain(uint32_t keep_ctx);

/* Start a send. *req_p is set unless the send completed at once and
 * `want_req` is false (the blocking fast path), in which case it is NULL. */
tdm_rc_t tdm_p2p_isend(const void *buf, size_t count, tdm_dtype_t *dt, int dst_world, int self_rank,
                       int tag, uint32_t ctx, uint8_t mode, void *comm, bool want_req,
                       tdm_req_t **req_p);
/* Blocking send (MPI_Send, Ssend, Rsend; not Bsend): returns when the buffer is free
 * again; no request is left behind. The caller holds `comm` until it returns. */
tdm_rc_t tdm_p2p_send(const void *buf, size_t count, tdm_dtype_t *dt, int dst_world, int self_rank,
                      int tag, uint32_t ctx, uint8_t mode, void *comm);
/* `how` of tdm_p2p_irecv_ex: the caller blocks (MPI_Recv); the caller combines
 * the data as soon as it has it (TDM_MODE_CONSUMES) */
#define TDM_RECV_BLOCKING 1u
#define TDM_RECV_CONSUMES 2u
/* Start a receive (src may be TDM_ANY_SOURCE, tag TDM_ANY_TAG), knowing the
 * source's world rank (-1 for MPI_ANY_SOURCE) and how the caller receives
 * (TDM_RECV_*): this lets the receive announce itself (RTR).
 * With `now` non-NULL, a message already here whole (eager) that fits completes
 * at once with no request: *req_p is then NULL and *now its status. */
tdm_rc_t tdm_p2p_irecv_ex(void *buf, size_t count, tdm_dtype_t *dt, int src, int src_world, int tag,
                          uint32_t ctx, void *comm, unsigned how, tdm_status_t *now,
                          tdm_req_t **req_p);
/* Blocking receive: completes into *status; no request is left behind. The caller
 * holds `comm` until it returns. */
tdm_rc_t tdm_p2p_recv(void *buf, size_t count, tdm_dtype_t *dt, int src, int src_world, int tag,
                      uint32_t ctx, void *comm, tdm_status_t *status);

/* Probe: is a matching message here? Fills *status (bytes = message size). */
bool tdm_p2p_iprobe(int src, int tag, uint32_t ctx, tdm_status_t *status);
/* Matched probe: like iprobe, but removes the message; *msg_p receives it. */
bool tdm_p2p_improbe(int src, int tag, uint32_t ctx, tdm_status_t *status, tdm_unexp_t **msg_p);
/* Receive a message obtained from improbe into a new request. */
tdm_rc_t tdm_p2p_imrecv(void *buf, size_t count, tdm_dtype_t *dt, tdm_unexp_t *msg, void *comm,
                        tdm_req_t **req_p);

/* Try to cancel a pending request; true if it will complete as cancelled. */
bool tdm_p2p_cancel(tdm_req_t *req);

/* The engine's performance variables (pvars.def), for src/mpit. */
extern const tdm_pvar_desc_t tdm_p2p_pvars[];
extern const int tdm_p2p_npvars;
/* The rendezvous protocols by id (as events name them): their number, and each
 * one's TANDEM_RNDV_PROTOCOL word. */
int tdm_p2p_proto_count(void);
const char *tdm_p2p_proto_word(int id);
/* Take tunables written at run time (through MPI_T) that the engine caches:
 * the eager limits, the copy chunk and the selection's thresholds. */
void tdm_p2p_reconfigure(void);

/* Poll every transport once; returns the number of events handled. */
int tdm_p2p_progress(void);
/* For calls that complete without waiting (an RMA flush with nothing to send,
 * MPI_Win_sync): progress once when this process has requests in flight, else every
 * 16th call. MPI's progress rule: programs poll window memory with such calls while
 * their own sends, or RMA served by messages, wait for this process (mpi4py.util.sync). */
void tdm_p2p_poll_now_and_then(void);
/* The progress thread (TANDEM_ASYNC_PROGRESS, async.c): started by the library's first
 * user when the tunable is on (it makes the process threaded), stopped by
 * tdm_p2p_drain; its CPU seconds so far (or at its end). */
void tdm_p2p_async_start(void);
void tdm_p2p_async_stop(void);
double tdm_p2p_async_cpu_seconds(void);
/* Wait until done(arg) is true, progressing; spins, then yields, then blocks on
 * the doorbell (immediately so when the node is oversubscribed). */
void tdm_p2p_wait_until(bool (*done)(void *arg), void *arg);
void tdm_p2p_wait(tdm_req_t *req);
/* Mark a request complete (runs its completion hook; releases it if the user
 * already freed it). */
void tdm_p2p_complete(tdm_req_t *req);
/* Drop a completed request: its datatype reference and its slot. */
void tdm_p2p_release(tdm_req_t *req);
/* An upper layer will not wait for `req` (a step of a schedule, a buffered send): run
 * fn(req) when it completes (cb_arg = arg), then release it. The hook runs with no engine
 * lock held (under MPI_THREAD_MULTIPLE, at the end of a progress call of any thread), so
 * it may post new operations. False when req completed already: no hook will run, and
 * the caller handles the completion and releases req. Set hooks only through this: a
 * check of `done` followed by a store of on_complete loses a completion that another
 * thread makes in between. */
bool tdm_p2p_req_hook(tdm_req_t *req, void (*fn)(tdm_req_t *), void *arg);
/* MPI_Request_free of a request that is not persistent: released now if it completed,
 * else when it completes, whichever thread completes it. */
void tdm_p2p_req_free_user(tdm_req_t *req);
/* Threaded: take the one release of a complete request whose id was `id` when the caller
 * found it. False when it is not complete, another thread took it, or its slot was
 * released since (the id's generation moved), or MPI_Request_free marked it: the caller
 * must not touch it again.
 * Unthreaded: true, inline (every MPI_Wait passes here). */
bool tdm_p2p_req_claim_threaded(tdm_req_t *req, uint32_t id);
/* The same for the releaser of a request MPI_Request_free marked (FREED) before it
 * completed: its completion, or MPI_Grequest_complete. */
bool tdm_p2p_req_claim_freed(tdm_req_t *req);
static inline bool tdm_p2p_req_claim(tdm_req_t *req, uint32_t id) {
    return TDM_LIKELY(!tdm_threaded) || tdm_p2p_req_claim_threaded(req, id);
}

/* ---- the pending-operations dump (dump.c): SIGUSR1, sent by mpirun on --timeout ---- */

/* What the layer above knows of a communicator, filled from a signal handler (its hook
 * may only read fields). */
typedef struct tdm_p2p_dump_comm {
    const char *name; /* the communicator's name (NUL-terminated within 128 bytes) */
    uint32_t ctx;     /* its point-to-point context id (ctx + 1: its collectives') */
    int peer;         /* its rank of the world rank asked about, or -1 */
} tdm_p2p_dump_comm_t;

typedef struct tdm_p2p_dump_hooks {
    /* Describe `comm` (a request's), or the communicator of context `ctx` when comm is
     * NULL (leave name NULL if unknown); find world rank `world` in it (-1: do not). */
    void (*comm)(void *comm, uint32_t ctx, int world, tdm_p2p_dump_comm_t *out_p);
    /* Called after each dump, from the handler too (mpirun waits for it on a timeout). */
    void (*done)(void);
} tdm_p2p_dump_hooks_t;

/* Install the SIGUSR1 handler, unless the program has one (after tdm_p2p_init, on the
 * thread that initialises MPI). It stays for the life of the process, as the engine. */
void tdm_p2p_dump_init(const tdm_p2p_dump_hooks_t *hooks);
/* Print every pending operation and unexpected message to fd. Async-signal-safe. */
void tdm_p2p_dump(int fd);

#endif
