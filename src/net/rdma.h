/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Remote memory access between nodes for the engine's rendezvous (seed 001): register
 * a buffer and pack its key for an RTS or CTS, make a peer's packed key usable, read
 * (get) and write (put) registered memory of a peer of another node, and flush. Thin
 * calls over the remote transport (UCX, ucx.h) so that p2p never includes ucx.h.
 *
 * Ownership and threads: as the transport's (ucx.h). Completion callbacks run only
 * inside the transport's progress (reached through tdm_net_poll), never inside the
 * call that started the operation; they may start new operations.
 *
 * Return values: TDM_NET_RDMA_DONE (0) the operation completed inside the call (its
 * callback will not run), TDM_NET_RDMA_PENDING (1) its callback runs later, or a
 * negative status (the transport's, ucx.h tdm_ucx_status_t) with a message naming
 * what failed and where, kept for tdm_net_rdma_errmsg.
 *
 * The transport is bound by whoever brings it up (net.c, once the UCX worker exists:
 * tdm_net_rdma_bind(ux); tdm_net_rdma_bind(NULL) before it is shut down). Unbound,
 * tdm_net_rdma_usable is false and every call fails with TDM_NET_RDMA_ERR_NONE.
 */
#ifndef TDM_NET_RDMA_H
#define TDM_NET_RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { TDM_NET_RDMA_DONE = 0, TDM_NET_RDMA_PENDING = 1 };
#define TDM_NET_RDMA_ERR_NONE (-1) /* no remote transport bound (ucx.h's UNSUPPORTED) */

struct tdm_ucx;
typedef struct tdm_net_mem tdm_net_mem_t;   /* a registration of this process's memory */
typedef struct tdm_net_rkey tdm_net_rkey_t; /* a peer's key, unpacked toward it */

/* An operation finished: status 0, or a negative status (the peer failed). */
typedef void (*tdm_net_rdma_done_fn_t)(void *arg, int status);

/* Counters (TANDEM_PROTO_STATS): the transport's. */
typedef struct tdm_net_rdma_stats {
    uint64_t reads;           /* gets issued */
    uint64_t reads_queued;    /* gets that waited for a read token (TANDEM_UCX_MAX_READS) */
    uint64_t writes;          /* puts issued */
    uint64_t data_sent;       /* packets sent with a payload to fetch (commit_data) */
    uint64_t fetches;         /* payloads fetched */
    uint64_t streams;         /* of data_sent, payloads sent as a stream of chunks (ucx.c) */
    uint64_t streams_fetched; /* of fetches, payloads fetched as a stream */
    uint64_t reg_hits;        /* registrations served by the cache */
    uint64_t reg_misses;      /* registrations made */
} tdm_net_rdma_stats_t;

/* The transport the calls below use (NULL: none). */
void tdm_net_rdma_bind(struct tdm_ucx *ux);
/* May the engine read and write `peer`'s registered memory? A peer of another node
 * whose transport offers TDM_NET_CAP_RDMA, with a transport bound. */
bool tdm_net_rdma_usable(int peer);

/* Register [base, base + len) (cached: the same range again is a hit); pair with
 * tdm_net_rdma_dereg. */
int tdm_net_rdma_reg(void *base, size_t len, tdm_net_mem_t **mem_p);
void tdm_net_rdma_dereg(tdm_net_mem_t *mem);
/* The registration's packed key, to carry in a packet (owned by mem). */
void tdm_net_rdma_key(const tdm_net_mem_t *mem, const void **key_p, size_t *len_p);
/* A packed key from `peer` made usable toward it; release it when done. */
int tdm_net_rdma_unpack(int peer, const void *key, size_t len, tdm_net_rkey_t **rkey_p);
void tdm_net_rdma_release(tdm_net_rkey_t *rkey);

/* Read `len` bytes at `peer`'s address `remote` (under rkey) into `local`. Reads are
 * limited per process (a token bucket and FIFO: ucx.h tdm_ucx_get). */
int tdm_net_rdma_get(int peer, void *local, size_t len, uint64_t remote, tdm_net_rkey_t *rkey,
                     tdm_net_rdma_done_fn_t done, void *arg);
/* Write `len` bytes from `local` to `peer`'s `remote`; complete means `local` may be
 * reused, not that the peer sees the data: flush before telling it. */
int tdm_net_rdma_put(int peer, const void *local, size_t len, uint64_t remote, tdm_net_rkey_t *rkey,
                     tdm_net_rdma_done_fn_t done, void *arg);
/* Complete when every put and get to `peer` issued before is complete at the peer. */
int tdm_net_rdma_flush(int peer, tdm_net_rdma_done_fn_t done, void *arg);

/* A rendezvous packet with its payload attached (UCX's tag rendezvous under a unique tag:
 * the payload moves when the receiver asks, straight into the buffer it names, by
 * whatever the transport does best; over TCP far faster than an emulated get).
 *
 * Sender: instead of tdm_net_send_commit, send the packet reserved by
 * tdm_net_send_reserve(peer) (its first `len` bytes, at most TDM_NET_DATA_PKT_MAX) with
 * `dlen` bytes at `data`, which stay the caller's until done runs: when the receiver has
 * fetched or dropped them, or the peer failed. A failure to send ends the job, as a
 * packet's does. The packet's last 8 bytes are a slot: the receiving side's transport
 * writes there the payload's handle (a tdm_net_data_t *), which the receiver passes to
 * tdm_net_rdma_fetch or tdm_net_rdma_drop exactly once. */
#define TDM_NET_DATA_PKT_MAX 64
typedef struct tdm_net_data tdm_net_data_t;
int tdm_net_rdma_commit_data(int peer, size_t len, const void *data, size_t dlen,
                             tdm_net_rdma_done_fn_t done, void *arg);
/* Move the whole payload (dlen bytes) into `buf`; consumes the handle. */
int tdm_net_rdma_fetch(tdm_net_data_t *d, void *buf, tdm_net_rdma_done_fn_t done, void *arg);
void tdm_net_rdma_drop(tdm_net_data_t *d);

/* The message of the last failure ("" if none). */
const char *tdm_net_rdma_errmsg(void);
/* The transport's counters (zeros without one). */
void tdm_net_rdma_stats(tdm_net_rdma_stats_t *st_p);

#endif
