/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The remote transport (net.h's tdm_net_remote): the ranks of other nodes over UCX
 * (ucx.h). A packet is one active message: the engine writes it into a bounce buffer
 * (send_reserve) and commit sends its first `len` bytes. Received packets are copied
 * into a queue by ucx.c's callback and handed to the engine's handler after
 * tdm_ucx_progress has returned, so that the handler (which takes the pair's lock and
 * may send) never runs inside UCX's progress, where the worker's lock is held.
 *
 * Waiting: a watcher thread sleeps in poll() on UCX's event descriptor while a thread of
 * ours sleeps on the doorbell with the worker armed, and rings the doorbell when UCX has
 * events; local producers ring it as before. Addresses are exchanged once at start-up
 * (net.c): through the PMI key-value space, or through the job's one memfd when the nodes
 * are one host's (TANDEM_NODE_SPLIT under mpirun).
 */
#include "net_impl.h"
#include "rdma.h"
#include "../base/log.h"
#include "../base/params.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef TDM_NET_HAVE_REMOTE

/* A packet toward a peer of another node: large, since each one costs a message on the
 * network (the engine cuts eager messages and pipeline streams into bodies of this size).
 * 64 KiB + 128 carries a 64 KiB eager message whole (its 32-byte header and up to 63
 * bytes of alignment pad), so 64 and 128 KiB messages go in one and two packets. */
#define REMOTE_BODY (64u * 1024u + 128u)
/* Bounce buffers in flight before send_reserve says "not now" (the engine queues). */
#define REMOTE_TX_MAX 1024
/* Idle buffers kept for reuse, each way. */
#define REMOTE_KEEP 64
/* A barrier message's header (hdr_len 4); the engine's packets have none (hdr_len 0). */
#define REMOTE_BARRIER_MAGIC 0x42u

typedef struct rbuf {
    struct rbuf *next;
    int peer;
    uint32_t len;
    uint64_t pad[6]; /* the body starts on a cache line, as a ring cell's does; its last
                      * TDM_UCX_FRAME bytes are tdm_ucx_send_framed's */
    unsigned char body[];
} rbuf_t;
_Static_assert(sizeof(rbuf_t) == 64, "a bounce buffer's head is one cache line");
_Static_assert(sizeof(((rbuf_t *)0)->pad) >= TDM_UCX_FRAME, "room for the frame");

static struct {
    tdm_ucx_t *ux;
    void (*fatal)(const char *why);
    /* sending: buffers reserved per peer, the free list, how many are in flight */
    rbuf_t **resv;
    tdm_lock_t tx_lock;
    rbuf_t *tx_free;
    int tx_nfree;
    int tx_out; /* TDM_COUNTER_*: no locked instruction unthreaded */
    /* receiving: one poller at a time owns the queue (filled inside tdm_ucx_progress) */
    _Atomic int busy;
    rbuf_t *rx_head, *rx_tail, *rx_free;
    int rx_nfree;
    /* unthreaded, the poller's handler takes packets straight from UCX's buffer */
    void (*inline_handler)(int peer, const void *body);
    int inline_n;
    /* the job-wide barrier between node leaders: arrivals per epoch parity */
    uint32_t epoch;
    _Atomic uint32_t arrived[2];
    /* waiting */
    pthread_t watcher;
    bool watching;
    _Atomic uint32_t armed; /* futex word: 1 while a thread of ours may sleep armed */
    _Atomic int stop;
    int stop_fd;
    _Atomic int quiet;      /* the job ends normally: peers may go */
    _Atomic int in_barrier; /* inside the job-wide barrier: peers that passed it may go */
} rm = {.stop_fd = -1};

static long futex(_Atomic uint32_t *addr, int op, uint32_t val) {
    return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

static rbuf_t *rbuf_new(void) {
    rbuf_t *b = aligned_alloc(64, sizeof(rbuf_t) + REMOTE_BODY);
    if (!b)
        tdm_error(NET, "rank %d: out of memory for a %u-byte packet buffer", tdm_net.rank,
                  REMOTE_BODY);
    return b;
}

/* ---- sending ---- */

static size_t remote_body_size(void) {
    return REMOTE_BODY;
}

static void *remote_send_reserve(int peer) {
    if (TDM_COUNTER_READ(&rm.tx_out) >= REMOTE_TX_MAX)
        return NULL;
    tdm_lock_acquire(&rm.tx_lock);
    rbuf_t *b = rm.tx_free;
    if (b) {
        rm.tx_free = b->next;
        rm.tx_nfree--;
    }
    tdm_lock_release(&rm.tx_lock);
    if (!b && !(b = rbuf_new()))
        return NULL;
    TDM_COUNTER_ADD(&rm.tx_out, 1);
    b->peer = peer;
    rm.resv[peer] = b; /* the pair's lock is held from reserve to commit */
    return b->body;
}

static void tx_release(rbuf_t *b) {
    TDM_COUNTER_SUB(&rm.tx_out, 1);
    tdm_lock_acquire(&rm.tx_lock);
    if (rm.tx_nfree < REMOTE_KEEP) {
        b->next = rm.tx_free;
        rm.tx_free = b;
        rm.tx_nfree++;
        b = NULL;
    }
    tdm_lock_release(&rm.tx_lock);
    free(b);
}

static void tx_done(void *arg, int status) {
    /* a failed peer is reported once by peer_error, which ends the job */
    (void)status;
    tx_release(arg);
}

static void remote_send_commit(int peer, size_t len) {
    rbuf_t *b = rm.resv[peer];
    rm.resv[peer] = NULL;
    int rc = tdm_ucx_send_framed(rm.ux, peer, b->body, len, tx_done, b);
    if (rc != TDM_UCX_PENDING)
        tx_release(b);
    if (rc < 0 && !atomic_load(&rm.quiet)) {
        char why[600];
        snprintf(why, sizeof(why), "rank %d cannot send to rank %d (host %s): %s", tdm_net.rank,
                 peer, tdm_ucx_peer_host(rm.ux, peer), tdm_ucx_errmsg(rm.ux));
        rm.fatal(why);
    }
}

int tdm_net_rdma_commit_data(int peer, size_t len, const void *data, size_t dlen,
                             tdm_net_rdma_done_fn_t done, void *arg) {
    rbuf_t *b = rm.resv[peer];
    rm.resv[peer] = NULL;
    /* the header is copied into the transport's operation: the bounce buffer goes back now */
    int rc = len >= 8 && len <= TDM_NET_DATA_PKT_MAX
                 ? tdm_ucx_send_rndv(rm.ux, peer, b->body, len, data, dlen, done, arg)
                 : TDM_UCX_ERR_INVALID;
    tx_release(b);
    if (rc < 0 && !atomic_load(&rm.quiet)) {
        char why[600];
        snprintf(why, sizeof(why), "rank %d cannot send %zu bytes to rank %d (host %s): %s",
                 tdm_net.rank, dlen, peer, tdm_ucx_peer_host(rm.ux, peer), tdm_ucx_errmsg(rm.ux));
        rm.fatal(why);
    }
    return rc;
}

/* ---- receiving ---- */

static rbuf_t *rx_buf(int peer) {
    rbuf_t *b = rm.rx_free;
    if (b) {
        rm.rx_free = b->next;
        rm.rx_nfree--;
    } else if (!(b = rbuf_new())) {
        char why[200];
        snprintf(why, sizeof(why), "rank %d: out of memory for a packet from rank %d", tdm_net.rank,
                 peer);
        rm.fatal(why);
        return NULL;
    }
    b->peer = peer;
    b->next = NULL;
    return b;
}

static void rx_queue(rbuf_t *b) {
    if (rm.rx_tail)
        rm.rx_tail->next = b;
    else
        rm.rx_head = b;
    rm.rx_tail = b;
}

/* ucx.c's callback for a packet with a payload to fetch (commit_data): the packet is
 * queued as any other, its last 8 bytes now the payload's handle (rdma.h). */
static void remote_recv_data(void *arg, int peer, const void *hdr, size_t hdr_len,
                             tdm_ucx_data_t *d, size_t len) {
    (void)arg;
    (void)len;
    if (hdr_len < 8 || hdr_len > TDM_NET_DATA_PKT_MAX) {
        tdm_error(NET, "rank %d: dropped a %zu-byte packet with a payload from rank %d",
                  tdm_net.rank, hdr_len, peer);
        tdm_ucx_data_drop(rm.ux, d);
        return;
    }
    rbuf_t *b = rx_buf(peer);
    if (!b) {
        tdm_ucx_data_drop(rm.ux, d);
        return;
    }
    b->len = (uint32_t)hdr_len;
    memcpy(b->body, hdr, hdr_len - 8);
    memcpy(b->body + hdr_len - 8, &d, sizeof(d));
    rx_queue(b);
}

/* ucx.c's callback, inside tdm_ucx_progress (the poller owns the queue). */
static void remote_recv(void *arg, int peer, const void *hdr, size_t hdr_len, const void *data,
                        size_t len) {
    (void)arg;
    if (hdr_len == 4) {
        uint32_t h;
        memcpy(&h, hdr, 4);
        if ((h >> 24) == REMOTE_BARRIER_MAGIC) {
            atomic_fetch_add(&rm.arrived[h & 1u], 1);
            return;
        }
    }
    if (hdr_len != 0 || len > REMOTE_BODY || len == 0) {
        tdm_error(NET, "rank %d: dropped a packet of %zu+%zu bytes from rank %d (not the engine's)",
                  tdm_net.rank, hdr_len, len, peer);
        return;
    }
    if (rm.inline_handler && !rm.rx_head) {
        /* one thread: no pair lock can be held against the worker's, and UCX lets a
         * callback send, so the engine reads the packet where it is (one copy fewer) */
        rm.inline_handler(peer, data);
        rm.inline_n++;
        return;
    }
    rbuf_t *b = rx_buf(peer);
    if (!b)
        return;
    b->len = (uint32_t)len;
    memcpy(b->body, data, len);
    rx_queue(b);
}

/* Every packet that came, in each peer's order (one poller at a time: another thread
 * polling meanwhile finds the flag taken and leaves, as a busy pair's lock is skipped). */
static int remote_poll(void (*handler)(int peer, const void *body), int max) {
    (void)max; /* a batch is what one UCX progress brought */
    if (TDM_UNLIKELY(tdm_threaded)) {
        if (atomic_exchange_explicit(&rm.busy, 1, memory_order_acquire))
            return 0;
    } else {
        /* one thread: the flag only keeps a handler's own poll out (no locked exchange) */
        if (atomic_load_explicit(&rm.busy, memory_order_relaxed))
            return 0;
        atomic_store_explicit(&rm.busy, 1, memory_order_relaxed);
    }
    rm.inline_handler = tdm_threaded ? NULL : handler;
    rm.inline_n = 0;
    int events = tdm_ucx_progress(rm.ux);
    rm.inline_handler = NULL;
    int n = rm.inline_n;
    while (rm.rx_head) {
        rbuf_t *b = rm.rx_head;
        rm.rx_head = b->next;
        if (!rm.rx_head)
            rm.rx_tail = NULL;
        handler(b->peer, b->body);
        n++;
        if (rm.rx_nfree < REMOTE_KEEP) {
            b->next = rm.rx_free;
            rm.rx_free = b;
            rm.rx_nfree++;
        } else {
            free(b);
        }
    }
    atomic_store_explicit(&rm.busy, 0, memory_order_release);
    return events > n ? events : n;
}

/* ---- failures ---- */

static void remote_peer_error(void *arg, int peer, const char *msg) {
    (void)arg;
    (void)peer;
    if (atomic_load(&rm.quiet)) {
        tdm_debug(NET, "after the job's last barrier: %s", msg);
        return;
    }
    /* a peer that left the barrier before us exits normally; one that died in it did not,
     * and its launcher ends the job for that */
    if (atomic_load(&rm.in_barrier)) {
        tdm_debug(NET, "in the job-wide barrier: %s", msg);
        return;
    }
    char why[600];
    snprintf(why, sizeof(why), "%s: ending the job", msg);
    rm.fatal(why);
}

static void remote_quiet(void) {
    atomic_store(&rm.quiet, 1);
}

/* ---- waiting ---- */

/* Sleeps in poll() on UCX's descriptor while a thread of ours sleeps armed, and rings our
 * doorbell when it becomes readable. It makes no UCX call (the worker may be
 * single-threaded); the armed flag keeps it from spinning on a descriptor left readable
 * until the next arm. */
static void *watcher_main(void *arg) {
    (void)arg;
    int efd = tdm_ucx_efd(rm.ux);
    while (!atomic_load(&rm.stop)) {
        if (!atomic_load(&rm.armed)) {
            futex(&rm.armed, FUTEX_WAIT_PRIVATE, 0);
            continue;
        }
        struct pollfd p[2] = {{.fd = efd, .events = POLLIN}, {.fd = rm.stop_fd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (atomic_load(&rm.stop))
            break;
        if (p[0].revents) {
            atomic_store(&rm.armed, 0);
            tdm_shm_wake(tdm_net.rank);
        }
    }
    return NULL;
}

static bool remote_arm(void) {
    /* the receive queue is the poller's: a thread polling now has work in hand, so the
     * caller polls again instead of sleeping */
    if (atomic_exchange_explicit(&rm.busy, 1, memory_order_acquire))
        return false;
    bool idle = !rm.rx_head && tdm_ucx_arm(rm.ux) == 0;
    atomic_store_explicit(&rm.busy, 0, memory_order_release);
    if (!idle)
        return false;
    if (!rm.watching)
        return true; /* no watcher (it could not start): the doorbell's timeout bounds the sleep */
    if (!atomic_exchange(&rm.armed, 1))
        futex(&rm.armed, FUTEX_WAKE_PRIVATE, 1);
    return true;
}

/* ---- the job-wide barrier ---- */

static void barrier_sent(void *arg, int status) {
    (void)status;
    atomic_fetch_sub((_Atomic int *)arg, 1);
}

/* The node's barrier, then the node leaders (each node's lowest rank) tell each other they
 * arrived, then the node's barrier again: nobody leaves before every process arrived.
 * What this process sent has left it before it arrives, and a leader's own messages have
 * left before it leaves (a process may exit right after). */
static void remote_barrier(void (*progress)(void)) {
    while (TDM_COUNTER_READ(&rm.tx_out) > 0)
        progress();
    atomic_store(&rm.in_barrier, 1);
    tdm_shm_barrier(progress);
    if (tdm_net.locals[0] == tdm_net.rank) {
        uint32_t e = rm.epoch++;
        uint32_t h = (REMOTE_BARRIER_MAGIC << 24) | (e & 1u);
        int leaders = 0;
        _Atomic int unsent = 0;
        for (int r = 0; r < tdm_net.size; r++) {
            if (tdm_net.peer[r].tp != TDM_NET_REMOTE)
                continue;
            /* a node's lowest rank is the first of its node in world order */
            bool first = true;
            for (int q = 0; q < r && first; q++)
                first = tdm_net.peer[q].node != tdm_net.peer[r].node;
            if (!first)
                continue;
            leaders++;
            atomic_fetch_add(&unsent, 1);
            int rc = tdm_ucx_send(rm.ux, r, &h, sizeof(h), NULL, 0, barrier_sent, &unsent);
            if (rc == TDM_UCX_DONE)
                atomic_fetch_sub(&unsent, 1);
            if (rc < 0) {
                char why[600];
                snprintf(why, sizeof(why), "rank %d: the job-wide barrier cannot reach rank %d: %s",
                         tdm_net.rank, r, tdm_ucx_errmsg(rm.ux));
                rm.fatal(why);
            }
        }
        while (atomic_load(&rm.arrived[e & 1u]) < (uint32_t)leaders || atomic_load(&unsent) > 0) {
            progress();
            sched_yield(); /* other ranks of this node may need the core meanwhile */
        }
        atomic_fetch_sub(&rm.arrived[e & 1u], (uint32_t)leaders);
    }
    tdm_shm_barrier(progress);
    atomic_store(&rm.in_barrier, 0);
}

/* ---- start-up and shut-down ---- */

static void remote_fini(void) {
    if (rm.watching) {
        atomic_store(&rm.stop, 1);
        uint64_t one = 1;
        if (write(rm.stop_fd, &one, sizeof(one)) < 0)
            tdm_debug(NET, "waking the UCX watcher: %m");
        atomic_store(&rm.armed, 1);
        futex(&rm.armed, FUTEX_WAKE_PRIVATE, 1);
        pthread_join(rm.watcher, NULL);
        rm.watching = false;
    }
    if (rm.stop_fd >= 0)
        close(rm.stop_fd);
    rm.stop_fd = -1;
    atomic_store(&rm.quiet, 1);
    tdm_net_rdma_bind(NULL);
    if (rm.ux)
        tdm_ucx_fini(rm.ux);
    rm.ux = NULL;
    for (rbuf_t *b = rm.rx_head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    for (rbuf_t *b = rm.rx_free, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    for (rbuf_t *b = rm.tx_free, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(rm.resv);
    rm.resv = NULL;
    rm.rx_head = rm.rx_tail = rm.rx_free = rm.tx_free = NULL;
}

static const tdm_net_ops_t remote_ops = {
    .name = "ucx",
    .caps = TDM_NET_CAP_AM | TDM_NET_CAP_RDMA,
    .body_size = remote_body_size,
    .send_reserve = remote_send_reserve,
    .send_commit = remote_send_commit,
    .poll = remote_poll,
    .arm = remote_arm,
    .barrier = remote_barrier,
    .quiet = remote_quiet,
    .fini = remote_fini,
};

static void connected(void *arg, int status) {
    (void)status; /* a peer that failed meanwhile is reported by peer_error */
    atomic_fetch_sub((_Atomic int *)arg, 1);
}

/* An endpoint to every rank of another node, wired up before MPI_Init returns: the death of
 * any of them is then seen by every rank (its connection closes), and no wire-up is in
 * progress when a peer dies (UCX 1.13 asserts on that). */
static int connect_all(const tdm_net_config_t *cfg) {
    _Atomic int left = 0;
    for (int r = 0; r < cfg->size; r++) {
        if (tdm_net.peer[r].tp != TDM_NET_REMOTE)
            continue;
        atomic_fetch_add(&left, 1);
        int rc = tdm_ucx_connect(rm.ux, r);
        if (rc == 0)
            rc = tdm_ucx_flush(rm.ux, r, connected, &left);
        if (rc != TDM_UCX_PENDING)
            atomic_fetch_sub(&left, 1);
        if (rc < 0)
            return -1;
    }
    while (atomic_load(&left) > 0) {
        if (!tdm_ucx_progress(rm.ux))
            sched_yield(); /* the peers are starting too: leave them the core */
    }
    return 0;
}

static void fatal_exit(const char *why) {
    tdm_error(NET, "%s", why);
    exit(1);
}

int tdm_net_remote_init(const tdm_net_config_t *cfg, const char **what_p) {
    rm.fatal = cfg->fatal ? cfg->fatal : fatal_exit;
    rm.resv = calloc((size_t)cfg->size, sizeof(rbuf_t *));
    if (!rm.resv) {
        *what_p = "out of memory for the remote transport";
        return -1;
    }
    tdm_lock_init(&rm.tx_lock);
    /* any thread may call in (MPI_THREAD_MULTIPLE, the progress thread): the level is not
     * known yet here, and an uncontended worker lock costs little next to the network */
    tdm_ucx_config_t uc = {.rank = cfg->rank,
                           .nranks = cfg->size,
                           .multi_thread = true,
                           .recv = remote_recv,
                           .recv_data = remote_recv_data,
                           .peer_error = remote_peer_error};
    if (tdm_ucx_init(&uc, &rm.ux) != 0) {
        tdm_error(NET,
                  "rank %d: the job spans %d nodes, but UCX cannot start here (see the message "
                  "above)",
                  cfg->rank, cfg->nodes);
        *what_p = "UCX, the transport between nodes, cannot start";
        remote_fini();
        return -1;
    }
    const void *blob;
    size_t len;
    tdm_ucx_address(rm.ux, &blob, &len);
    if (tdm_net_exchange(cfg, blob, len, what_p) != 0) {
        remote_fini();
        return -1;
    }
    if (connect_all(cfg) != 0) {
        tdm_error(NET, "rank %d: cannot connect to the ranks of other nodes: %s", cfg->rank,
                  tdm_ucx_errmsg(rm.ux));
        *what_p = "UCX cannot connect to the ranks of other nodes";
        remote_fini();
        return -1;
    }
    rm.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = rm.stop_fd >= 0 ? pthread_create(&rm.watcher, NULL, watcher_main, NULL) : errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        rm.watching = true;
    else
        tdm_warn(NET, "rank %d: no UCX watcher thread (%s): waits poll UCX by timeout", cfg->rank,
                 strerror(rc));
    tdm_net_remote = &remote_ops;
    tdm_net_rdma_bind(rm.ux);
    return 0;
}

/* Record a peer's blob (from the exchange). */
int tdm_net_remote_peer(int peer, const void *blob, size_t len) {
    return tdm_ucx_peer_set(rm.ux, peer, blob, len);
}

tdm_ucx_t *tdm_net_ucx(void) {
    return tdm_net_remote ? rm.ux : NULL;
}

#else

tdm_ucx_t *tdm_net_ucx(void) {
    return NULL;
}

int tdm_net_rdma_commit_data(int peer, size_t len, const void *data, size_t dlen,
                             tdm_net_rdma_done_fn_t done, void *arg) {
    (void)peer, (void)len, (void)data, (void)dlen, (void)done, (void)arg;
    return TDM_NET_RDMA_ERR_NONE;
}

#endif
