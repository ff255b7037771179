/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UCX transport (ucx.h): packets as UCX active messages, get/put with a
 * token bucket on reads, a registration cache, and a shutdown that never waits
 * on a dead peer for longer than its timeout.
 */
#include "ucx.h"

#include "base/lock.h"
#include "base/log.h"
#include "base/params.h"

#include <stdio.h>
#include <string.h>

#if TDM_HAVE_UCX

#include <dlfcn.h>
#include <net/if.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <ucm/api/ucm.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

/* UCX is loaded by tdm_ucx_init (dlopen), not linked: loading libucs runs its
 * constructors, which install signal handlers and read UCX_* variables, and a job on
 * one node should pay none of that, nor need UCX installed where it runs. */
/* clang-format off */
#define TDM_UCX_FUNCS(_X)                                                                          \
    _X(ucp_init_version) _X(ucp_cleanup) _X(ucp_config_read) _X(ucp_config_release)              \
    _X(ucp_config_modify) _X(ucp_ep_print_info)                                                  \
    _X(ucp_get_version_string) _X(ucp_worker_create) _X(ucp_worker_destroy)                      \
    _X(ucp_worker_query) _X(ucp_worker_get_address) _X(ucp_worker_release_address)               \
    _X(ucp_worker_set_am_recv_handler) _X(ucp_worker_get_efd) _X(ucp_worker_arm)                 \
    _X(ucp_worker_progress) _X(ucp_ep_create) _X(ucp_ep_close_nbx) _X(ucp_ep_flush_nbx)          \
    _X(ucp_am_send_nbx) _X(ucp_am_recv_data_nbx) _X(ucp_am_data_release) _X(ucp_request_free)    \
    _X(ucp_request_check_status) _X(ucp_mem_map) _X(ucp_mem_unmap) _X(ucp_rkey_pack)             \
    _X(ucp_rkey_buffer_release) _X(ucp_ep_rkey_unpack) _X(ucp_rkey_destroy) _X(ucp_get_nbx)      \
    _X(ucp_put_nbx) _X(ucp_tag_send_sync_nbx) _X(ucp_tag_send_nbx) _X(ucp_tag_recv_nbx)            \
    _X(ucs_status_string)                                                                        \
    _X(ucm_set_event_handler) _X(ucm_unset_event_handler)
/* clang-format on */

static struct {
#define TDM_UCX_FN_PTR(_f) __typeof__(_f) *p_##_f;
    TDM_UCX_FUNCS(TDM_UCX_FN_PTR)
#undef TDM_UCX_FN_PTR
} ucx_fn;

/* From here on every UCX call goes through the loaded pointer. */
#define ucp_init_version (*ucx_fn.p_ucp_init_version)
#define ucp_cleanup (*ucx_fn.p_ucp_cleanup)
#define ucp_config_read (*ucx_fn.p_ucp_config_read)
#define ucp_config_release (*ucx_fn.p_ucp_config_release)
#define ucp_config_modify (*ucx_fn.p_ucp_config_modify)
#define ucp_ep_print_info (*ucx_fn.p_ucp_ep_print_info)
#define ucp_get_version_string (*ucx_fn.p_ucp_get_version_string)
#define ucp_worker_create (*ucx_fn.p_ucp_worker_create)
#define ucp_worker_destroy (*ucx_fn.p_ucp_worker_destroy)
#define ucp_worker_query (*ucx_fn.p_ucp_worker_query)
#define ucp_worker_get_address (*ucx_fn.p_ucp_worker_get_address)
#define ucp_worker_release_address (*ucx_fn.p_ucp_worker_release_address)
#define ucp_worker_set_am_recv_handler (*ucx_fn.p_ucp_worker_set_am_recv_handler)
#define ucp_worker_get_efd (*ucx_fn.p_ucp_worker_get_efd)
#define ucp_worker_arm (*ucx_fn.p_ucp_worker_arm)
#define ucp_worker_progress (*ucx_fn.p_ucp_worker_progress)
#define ucp_ep_create (*ucx_fn.p_ucp_ep_create)
#define ucp_ep_close_nbx (*ucx_fn.p_ucp_ep_close_nbx)
#define ucp_ep_flush_nbx (*ucx_fn.p_ucp_ep_flush_nbx)
#define ucp_am_send_nbx (*ucx_fn.p_ucp_am_send_nbx)
#define ucp_tag_send_sync_nbx (*ucx_fn.p_ucp_tag_send_sync_nbx)
#define ucp_tag_recv_nbx (*ucx_fn.p_ucp_tag_recv_nbx)
#define ucp_tag_send_nbx (*ucx_fn.p_ucp_tag_send_nbx)
#define ucp_am_recv_data_nbx (*ucx_fn.p_ucp_am_recv_data_nbx)
#define ucp_am_data_release (*ucx_fn.p_ucp_am_data_release)
#define ucp_request_free (*ucx_fn.p_ucp_request_free)
#define ucp_request_check_status (*ucx_fn.p_ucp_request_check_status)
#define ucp_mem_map (*ucx_fn.p_ucp_mem_map)
#define ucp_mem_unmap (*ucx_fn.p_ucp_mem_unmap)
#define ucp_rkey_pack (*ucx_fn.p_ucp_rkey_pack)
#define ucp_rkey_buffer_release (*ucx_fn.p_ucp_rkey_buffer_release)
#define ucp_ep_rkey_unpack (*ucx_fn.p_ucp_ep_rkey_unpack)
#define ucp_rkey_destroy (*ucx_fn.p_ucp_rkey_destroy)
#define ucp_get_nbx (*ucx_fn.p_ucp_get_nbx)
#define ucp_put_nbx (*ucx_fn.p_ucp_put_nbx)
#define ucs_status_string (*ucx_fn.p_ucs_status_string)
#define ucm_set_event_handler (*ucx_fn.p_ucm_set_event_handler)
#define ucm_unset_event_handler (*ucx_fn.p_ucm_unset_event_handler)

/* Load libucp (and with it libucs, uct, ucm) once per process; never unloaded, UCX
 * does not support it. 0, or -1 with the reason in why. */
static int ucx_load(char *why, size_t n) {
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static int state; /* 0 not tried, 1 loaded, -1 failed */
    static char reason[400];
    pthread_mutex_lock(&mu);
    if (state == 0) {
        void *h = dlopen(TDM_UCX_LIBUCP, RTLD_NOW | RTLD_LOCAL);
        state = 1;
        if (!h) {
            snprintf(reason, sizeof(reason), "cannot load %s (UCX, Debian package libucx0): %s",
                     TDM_UCX_LIBUCP, dlerror());
            state = -1;
        }
#define TDM_UCX_FN_LOAD(_f)                                                                        \
    if (state == 1 && !(*(void **)&ucx_fn.p_##_f = dlsym(h, #_f))) {                               \
        snprintf(reason, sizeof(reason), "%s has no %s (UCX older than 1.13?)", TDM_UCX_LIBUCP,    \
                 #_f);                                                                             \
        state = -1;                                                                                \
    }
        TDM_UCX_FUNCS(TDM_UCX_FN_LOAD)
#undef TDM_UCX_FN_LOAD
    }
    int rc = state == 1 ? 0 : -1;
    if (rc)
        snprintf(why, n, "%s", reason);
    pthread_mutex_unlock(&mu);
    return rc;
}

/* The one active-message id Tandem uses: every packet goes to one handler, which
 * delivers it by its source rank (carried in the prefix). */
#define TDM_UCX_AM_ID 7

/* In front of the engine's header on the wire: who sent it, and how long the
 * engine's header is. */
typedef struct tdm_ucx_prefix {
    uint32_t src;
    uint32_t hdr_len; /* | PREFIX_FETCH: a tdm_ucx_send_rndv packet; | PREFIX_CTS: a stream's go */
} tdm_ucx_prefix_t;
#define PREFIX_FETCH 0x80000000u
#define PREFIX_CTS 0x40000000u
/* What tdm_ucx_send_framed writes in front of the packet: its completion, and the prefix,
 * the first bytes on the wire. */
typedef struct tdm_ucx_frame {
    tdm_ucx_t *ux;
    tdm_ucx_done_fn_t done;
    void *arg;
    uint32_t to;
    uint32_t pad;
    tdm_ucx_prefix_t pre;
} tdm_ucx_frame_t;
_Static_assert(sizeof(tdm_ucx_frame_t) == TDM_UCX_FRAME, "the frame fills TDM_UCX_FRAME");
/* A framed packet (tdm_ucx_send_framed) goes as UCX's payload alone, the prefix at its
 * start, when it is this small: UCX 1.13 reads a separate header until the send completes,
 * so that one needs an operation from the free list to live in, where a frame lives in the
 * caller's buffer. Forced eager, so the receiver always finds the prefix in the data;
 * larger packets keep the prefix as UCX's header, free to go by UCX's rendezvous. */
#define FRAMED_MAX 8192u

/* A tdm_ucx_send_rndv packet's active-message payload: the UCX tag its data is sent
 * under (the sender's rank, then a sequence number of its own: unique in the job), and
 * `chunk` 0 (the data is one synchronous tagged send) or the chunk size of a stream: the
 * data waits for the receiver's go (a PREFIX_CTS message carrying this struct back, chunk
 * 0 there for a dropped payload) and then goes as tagged sends of `chunk` bytes. */
typedef struct tdm_ucx_tagmsg {
    uint64_t tag;
    uint64_t len;
    uint64_t chunk;
} tdm_ucx_tagmsg_t;
#define TAG_SEQ_BITS 40

struct tdm_ucx_data {
    uint64_t tag;
    void *desc; /* UCX's handle of an active-message rendezvous; NULL: the data has `tag` */
    size_t len;
    size_t chunk; /* a stream's chunk size (tdm_ucx_tagmsg_t); 0: one tagged send */
    int peer;
};

/* The blob another process hands to tdm_ucx_peer_set. */
#define TDM_UCX_BLOB_MAGIC 0x5544d54u /* "TDMU" */
typedef struct tdm_ucx_blob {
    uint32_t magic;
    int32_t rank;
    uint32_t addr_len;
    uint32_t pad;
    char host[64];
    /* UCX worker address follows */
} tdm_ucx_blob_t;

typedef enum { RX_READY, RX_FETCH, RX_FETCHING, RX_FAILED } tdm_ucx_rx_state_t;

/* A packet that could not be delivered inside UCX's callback: an earlier one from
 * the same peer is still being fetched (rendezvous), so this one waits behind it. */
typedef struct tdm_ucx_rx {
    struct tdm_ucx_rx *next;
    struct tdm_ucx_rx *next_fetch;
    struct tdm_ucx *ux;
    int peer;
    tdm_ucx_rx_state_t state;
    void *desc;            /* UCX's descriptor: rendezvous (to fetch) or held data */
    bool held;             /* desc is data UCX keeps for us: ucp_am_data_release */
    void *buf;             /* malloc'd payload (a copy, or the fetch's target) */
    const void *data;      /* what is delivered */
    tdm_ucx_data_t *fdata; /* a tdm_ucx_send_rndv packet's payload: delivered by recv_data */
    size_t len;
    size_t hdr_len;
    unsigned char hdr[TDM_UCX_HDR_MAX];
} tdm_ucx_rx_t;

typedef struct tdm_ucx_peer {
    struct tdm_ucx *ux;
    int rank;
    char host[64];
    void *addr;
    size_t addr_len;
    ucp_ep_h ep;
    int failed;  /* 0, or the status operations toward it fail with */
    bool stream; /* large payloads to it go as a stream (stream_lanes) */
    tdm_ucx_rx_t *rx_head, *rx_tail;
    bool rx_active; /* on ux->rx_active */
    struct tdm_ucx_peer *next_active;
} tdm_ucx_peer_t;

typedef enum { OP_SEND, OP_GET, OP_PUT, OP_FLUSH, OP_FETCH, OP_DROP } tdm_ucx_op_kind_t;

/* One operation in flight (or, a get, waiting for a token). */
typedef struct tdm_ucx_op {
    struct tdm_ucx_op *next;
    struct tdm_ucx *ux;
    tdm_ucx_op_kind_t kind;
    int peer;
    tdm_ucx_done_fn_t done;
    void *arg;
    void *local;
    size_t len;
    uint64_t remote;
    tdm_ucx_rkey_t *rkey;
    /* a stream (its chunks' requests, counted down; the first error) */
    unsigned left;
    int err;
    size_t got;
    /* a send's wire header: UCX 1.13 reads it until the send completes */
    unsigned char hdr[sizeof(tdm_ucx_prefix_t) + TDM_UCX_HDR_MAX];
    tdm_ucx_tagmsg_t tagmsg; /* tdm_ucx_send_rndv's announcement, read until sent too */
} tdm_ucx_op_t;

struct tdm_ucx_mem {
    struct tdm_ucx_mem *prev, *next; /* most recently used first */
    void *base;
    size_t len;
    ucp_mem_h memh;
    void *rkey_buf;
    size_t rkey_len;
    int refs;
    bool stale; /* its memory was unmapped: out of the cache, released at its last use */
};

/* Ranges unmapped since the registration cache last looked, up to this many (beyond it the
 * whole cache is dropped). */
#define UNMAPPED_MAX 32

struct tdm_ucx_rkey {
    ucp_rkey_h rkey;
    int peer;
};

struct tdm_ucx {
    int rank, nranks;
    bool mt;
    tdm_ucx_recv_fn_t recv;
    void *recv_arg;
    tdm_ucx_recv_data_fn_t recv_data;
    tdm_ucx_peer_error_fn_t peer_error;
    void *peer_error_arg;
    ucp_context_h ctx;
    ucp_worker_h worker;
    int efd;
    void *blob;
    size_t blob_len;
    char host[64];
    size_t am_max;
    bool peer_errors; /* UCP_ERR_HANDLING_MODE_PEER */
    bool rndv_am;     /* TANDEM_UCX_RNDV=am: tdm_ucx_send_rndv as one active message */
    size_t stream_min, stream_chunk; /* TANDEM_UCX_STREAM_MIN, _CHUNK */
    tdm_ucx_peer_t *peers;

    /* `lock` (under mt) guards the op free list, the read bucket and FIFO, and the
     * registration cache; it is never held across a UCX call that can run a callback,
     * nor while a callback of the caller runs. `progress_lock` makes one thread at a
     * time the progress thread: the receive queues and the fetch list are its alone.
     * `ep_lock` makes endpoints one at a time: ucp_ep_create takes the worker's lock, under
     * which UCX runs callbacks that take `lock`, so `lock` cannot be held across it.
     * `lock` and `progress_lock` are tdm_lock_t: a process not running MPI_THREAD_MULTIPLE
     * has one thread in here and pays a branch, where pthread mutexes cost two calls per
     * op and per poll. */
    tdm_lock_t lock;
    tdm_lock_t progress_lock;
    pthread_mutex_t ep_lock;
    tdm_ucx_op_t *op_free;
    int read_tokens;
    int read_limit;
    tdm_ucx_op_t *read_head, *read_tail;
    /* streams (under `lock`): sends waiting for their receiver's go, and those that got it
     * and wait for progress to send their chunks (not inside UCX's callback) */
    tdm_ucx_op_t *stream_wait, *stream_go;
    long reads_waiting; /* in the FIFO: changed under `lock`, read unlocked by progress */
    tdm_ucx_rx_t *fetch_head, *fetch_tail;
    tdm_ucx_peer_t *rx_active;
    /* work seen by this progress call; under mt completions also run inside a receive
     * another thread posts (UCX finishes an unexpected message there): UX_EVENTS_ADD */
    unsigned events;
    long pending;     /* ops UCX still holds */
    uint64_t tag_seq; /* tdm_ucx_send_rndv's sequence numbers */

    tdm_ucx_mem_t *reg_head, *reg_tail;
    int reg_idle, reg_cap;
    /* A registration pins the pages behind its addresses (on RDMA hardware): one kept in
     * the cache after its buffer was unmapped would reach the old pages when the address
     * comes back. UCX's memory hook (UCM) reports each unmapping into `unmapped`, from any
     * thread, inside munmap or free, so it takes only `unmapped_mu` and never allocates;
     * the cache drops what overlaps at its next look. `reg_lo`..`reg_hi` spans the cached
     * ranges: the hook ignores the rest. Without the hook the cache keeps nothing idle. */
    bool reg_hook_tried, reg_hooked;
    _Atomic uintptr_t reg_lo, reg_hi;
    pthread_mutex_t unmapped_mu;
    int unmapped_n;
    bool unmapped_all;
    struct {
        uintptr_t lo, hi;
    } unmapped[UNMAPPED_MAX];

    tdm_ucx_stats_t st;
    char err[512];
};

#define UX_LOCK(_ux)                                                                               \
    do {                                                                                           \
        if ((_ux)->mt)                                                                             \
            tdm_lock_acquire(&(_ux)->lock);                                                        \
    } while (0)
#define UX_UNLOCK(_ux)                                                                             \
    do {                                                                                           \
        if ((_ux)->mt)                                                                             \
            tdm_lock_release(&(_ux)->lock);                                                        \
    } while (0)
#define UX_COUNT(_ux, _field, _n) TDM_COUNTER_ADD(&(_ux)->st._field, (_n))
/* One thread: a plain count (every packet passes here); several: completions also run
 * inside a receive another thread posts, so an atomic one. */
#define UX_EVENTS_ADD(_ux, _n)                                                                     \
    do {                                                                                           \
        if ((_ux)->mt)                                                                             \
            __atomic_fetch_add(&(_ux)->events, (unsigned)(_n), __ATOMIC_RELAXED);                  \
        else                                                                                       \
            (_ux)->events += (unsigned)(_n);                                                       \
    } while (0)
#define UX_EVENT(_ux) UX_EVENTS_ADD(_ux, 1)

bool tdm_ucx_built(void) {
    return true;
}

static int map_status(ucs_status_t s) {
    switch (s) {
    case UCS_OK:
        return 0;
    case UCS_ERR_NO_MEMORY:
        return TDM_UCX_ERR_NOMEM;
    case UCS_ERR_NO_DEVICE:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_UNSUPPORTED:
        return TDM_UCX_ERR_NO_TRANSPORT;
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CANCELED:
    case UCS_ERR_REJECTED:
        return TDM_UCX_ERR_PEER;
    case UCS_ERR_TIMED_OUT:
        return TDM_UCX_ERR_TIMEOUT;
    default:
        return TDM_UCX_ERR_IO;
    }
}

/* Record and log a failure; returns `status` so callers `return fail(...)`. */
__attribute__((format(printf, 3, 4))) static int fail(tdm_ucx_t *ux, int status, const char *fmt,
                                                      ...) {
    char msg[sizeof(ux->err)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (ux) {
        UX_LOCK(ux);
        memcpy(ux->err, msg, sizeof(msg));
        UX_UNLOCK(ux);
    }
    tdm_error(UCX, "%s", msg);
    return status;
}

const char *tdm_ucx_errmsg(tdm_ucx_t *ux) {
    return ux->err;
}

void tdm_ucx_stats(tdm_ucx_t *ux, tdm_ucx_stats_t *st_p) {
    UX_LOCK(ux);
    *st_p = ux->st;
    UX_UNLOCK(ux);
}

static tdm_ucx_op_t *op_get(tdm_ucx_t *ux) {
    UX_LOCK(ux);
    tdm_ucx_op_t *op = ux->op_free;
    if (op)
        ux->op_free = op->next;
    UX_UNLOCK(ux);
    if (!op)
        op = malloc(sizeof(*op));
    if (op)
        op->ux = ux;
    return op;
}

static void op_put(tdm_ucx_t *ux, tdm_ucx_op_t *op) {
    UX_LOCK(ux);
    op->next = ux->op_free;
    ux->op_free = op;
    UX_UNLOCK(ux);
}

static int check_peer(tdm_ucx_t *ux, int peer, const char *call) {
    if (peer < 0 || peer >= ux->nranks)
        return fail(ux, TDM_UCX_ERR_INVALID, "%s: peer %d out of range 0..%d (rank %d)", call, peer,
                    ux->nranks - 1, ux->rank);
    tdm_ucx_peer_t *p = &ux->peers[peer];
    int failed = __atomic_load_n(&p->failed, __ATOMIC_ACQUIRE);
    if (failed)
        return fail(ux, failed, "%s: peer rank %d (host %s) has failed (rank %d)", call, peer,
                    p->host, ux->rank);
    return 0;
}

/* ---- peers and endpoints ---------------------------------------------------------------- */

/* Move the ops toward `rank` from `list` onto `*dead` (caller holds `lock`); how many. */
static long ops_take_peer(tdm_ucx_op_t **list, int rank, tdm_ucx_op_t **dead) {
    long n = 0;
    for (tdm_ucx_op_t **pp = list; *pp;) {
        tdm_ucx_op_t *op = *pp;
        if (op->peer == rank) {
            *pp = op->next;
            op->next = *dead;
            *dead = op;
            n++;
        } else {
            pp = &op->next;
        }
    }
    return n;
}

static void ep_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status) {
    tdm_ucx_peer_t *p = arg;
    tdm_ucx_t *ux = p->ux;
    if (__atomic_exchange_n(&p->failed, TDM_UCX_ERR_PEER, __ATOMIC_ACQ_REL))
        return;
    char msg[256];
    snprintf(msg, sizeof(msg), "peer rank %d (host %s) failed, seen by rank %d (host %s): %s",
             p->rank, p->host, ux->rank, ux->host, ucs_status_string(status));
    if (ux->peer_error) {
        /* the caller decides what it means (a peer that left after the job's end is no
         * error) and says it: kept, logged only for debugging here */
        UX_LOCK(ux);
        snprintf(ux->err, sizeof(ux->err), "%s", msg);
        UX_UNLOCK(ux);
        tdm_debug(UCX, "%s", msg);
    } else {
        fail(ux, TDM_UCX_ERR_PEER, "%s", msg);
    }
    /* reads queued toward it will never get a token's worth of progress, and streams to
     * it no go: fail them */
    tdm_ucx_op_t *dead = NULL;
    UX_LOCK(ux);
    ops_take_peer(&ux->stream_wait, p->rank, &dead);
    long reads = ops_take_peer(&ux->read_head, p->rank, &dead);
    __atomic_fetch_sub(&ux->reads_waiting, reads, __ATOMIC_RELAXED);
    ux->read_tail = NULL;
    for (tdm_ucx_op_t *op = ux->read_head; op; op = op->next)
        ux->read_tail = op;
    UX_UNLOCK(ux);
    while (dead) {
        tdm_ucx_op_t *op = dead;
        dead = op->next;
        if (op->done)
            op->done(op->arg, TDM_UCX_ERR_PEER);
        op_put(ux, op);
    }
    if (ux->peer_error)
        ux->peer_error(ux->peer_error_arg, p->rank, msg);
}

/* Whether large payloads to this endpoint go as a stream: when every lane is UCX's tcp,
 * whose put-based rendezvous costs two trips more than a stream of eager chunks; on
 * RDMA hardware UCX's own rendezvous is the zero-copy one to keep. UCX 1.13 has no query
 * for an endpoint's transports, so this reads its description (once per peer). */
static bool stream_lanes(tdm_ucx_t *ux, ucp_ep_h ep) {
    if (!ux->stream_min)
        return false;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return false;
    ucp_ep_print_info(ep, f);
    fclose(f);
    int lanes = 0, tcp = 0;
    /* "#   lane[0]:  0:tcp/ncl0.0 md[0] -> ..." */
    for (const char *l = text; l && (l = strstr(l, "lane[")); l++) {
        const char *colon = strstr(l, "]:");
        const char *eol = strchr(l, '\n');
        if (!colon || (eol && colon > eol))
            continue;
        lanes++;
        const char *tl = strstr(colon, ":tcp/");
        tcp += tl && (!eol || tl < eol);
    }
    free(text);
    return lanes > 0 && tcp == lanes;
}

static int ep_get(tdm_ucx_t *ux, int peer, ucp_ep_h *ep_p) {
    tdm_ucx_peer_t *p = &ux->peers[peer];
    ucp_ep_h ep = __atomic_load_n(&p->ep, __ATOMIC_ACQUIRE);
    if (ep) {
        *ep_p = ep;
        return 0;
    }
    if (ux->mt)
        pthread_mutex_lock(&ux->ep_lock);
    ep = p->ep;
    int rc = 0;
    if (!ep && !p->addr) {
        rc = TDM_UCX_ERR_INVALID;
    } else if (!ep) {
        ucp_ep_params_t prm = {
            .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                          UCP_EP_PARAM_FIELD_ERR_HANDLER,
            .address = p->addr,
            /* PEER mode costs the zero-copy rendezvous over tcp (TANDEM_UCX_PEER_ERRORS);
             * without it a broken connection still reaches the handler below */
            .err_mode = ux->peer_errors ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE,
            .err_handler = {.cb = ep_error_cb, .arg = p},
        };
        ucs_status_t s = ucp_ep_create(ux->worker, &prm, &ep);
        if (s == UCS_OK) {
            p->stream = stream_lanes(ux, ep); /* before the endpoint is seen */
            __atomic_store_n(&p->ep, ep, __ATOMIC_RELEASE);
        } else {
            if (ux->mt)
                pthread_mutex_unlock(&ux->ep_lock);
            return fail(ux,
                        s == UCS_ERR_UNREACHABLE ? TDM_UCX_ERR_NO_TRANSPORT : TDM_UCX_ERR_CONNECT,
                        "ucp_ep_create from rank %d (host %s) to rank %d (host %s) failed: %s",
                        ux->rank, ux->host, peer, p->host, ucs_status_string(s));
        }
    }
    if (ux->mt)
        pthread_mutex_unlock(&ux->ep_lock);
    if (rc)
        return fail(ux, rc, "rank %d: no address for peer rank %d (tdm_ucx_peer_set first)",
                    ux->rank, peer);
    *ep_p = ep;
    return 0;
}

int tdm_ucx_address(tdm_ucx_t *ux, const void **blob_p, size_t *len_p) {
    *blob_p = ux->blob;
    *len_p = ux->blob_len;
    return 0;
}

int tdm_ucx_peer_set(tdm_ucx_t *ux, int peer, const void *blob, size_t len) {
    if (peer < 0 || peer >= ux->nranks)
        return fail(ux, TDM_UCX_ERR_INVALID,
                    "tdm_ucx_peer_set: peer %d out of range 0..%d (rank %d)", peer, ux->nranks - 1,
                    ux->rank);
    tdm_ucx_blob_t b;
    if (!blob || len < sizeof(b))
        return fail(ux, TDM_UCX_ERR_INVALID,
                    "tdm_ucx_peer_set: address of peer %d is %zu bytes, shorter than its %zu-byte "
                    "header (rank %d)",
                    peer, len, sizeof(b), ux->rank);
    memcpy(&b, blob, sizeof(b));
    if (b.magic != TDM_UCX_BLOB_MAGIC || b.rank != peer || b.addr_len != len - sizeof(b) ||
        b.addr_len == 0)
        return fail(ux, TDM_UCX_ERR_INVALID,
                    "tdm_ucx_peer_set: the address given for peer %d is not a Tandem UCX address "
                    "of that rank (magic %#x, rank %d, %u+%zu bytes; rank %d)",
                    peer, b.magic, b.rank, b.addr_len, sizeof(b), ux->rank);
    tdm_ucx_peer_t *p = &ux->peers[peer];
    if (p->addr)
        return fail(ux, TDM_UCX_ERR_INVALID,
                    "tdm_ucx_peer_set: peer %d already has an address "
                    "(rank %d)",
                    peer, ux->rank);
    void *a = malloc(b.addr_len);
    if (!a)
        return fail(ux, TDM_UCX_ERR_NOMEM, "tdm_ucx_peer_set: out of memory (rank %d)", ux->rank);
    memcpy(a, (const char *)blob + sizeof(b), b.addr_len);
    memcpy(p->host, b.host, sizeof(p->host));
    p->host[sizeof(p->host) - 1] = '\0';
    p->addr_len = b.addr_len;
    p->addr = a;
    return 0;
}

int tdm_ucx_connect(tdm_ucx_t *ux, int peer) {
    int rc = check_peer(ux, peer, "tdm_ucx_connect");
    ucp_ep_h ep;
    return rc ? rc : ep_get(ux, peer, &ep);
}

const char *tdm_ucx_peer_host(tdm_ucx_t *ux, int peer) {
    if (peer < 0 || peer >= ux->nranks || !ux->peers[peer].addr)
        return "?";
    return ux->peers[peer].host;
}

/* ---- active messages -------------------------------------------------------------------- */

/* A request UCX completed: freed, uncounted, its status in Tandem's terms. */
static int req_end(tdm_ucx_t *ux, void *req, ucs_status_t status) {
    ucp_request_free(req);
    TDM_COUNTER_SUB(&ux->pending, 1);
    return map_status(status);
}

static void send_done_cb(void *req, ucs_status_t status, void *user_data) {
    tdm_ucx_op_t *op = user_data;
    tdm_ucx_t *ux = op->ux;
    int rc = req_end(ux, req, status);
    if (rc && op->kind != OP_GET)
        tdm_debug(UCX, "operation toward rank %d ended with %s", op->peer,
                  ucs_status_string(status));
    if (op->kind == OP_GET) {
        UX_LOCK(ux);
        ux->read_tokens++;
        UX_UNLOCK(ux);
    }
    if (op->done)
        op->done(op->arg, rc);
    op_put(ux, op);
    UX_EVENT(ux);
}

/* UCX's parameters for an operation that completes `op` through send_done_cb. */
static ucp_request_param_t op_param(tdm_ucx_op_t *op) {
    return (ucp_request_param_t){
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.send = send_done_cb,
        .user_data = op,
    };
}

/* Whether an operation counted in `pending` before its UCX call completes later (its
 * callback runs from progress); if not (done inside the call, or failed) it is uncounted. */
static bool op_issued(tdm_ucx_t *ux, ucs_status_ptr_t sp) {
    if (sp != NULL && !UCS_PTR_IS_ERR(sp))
        return true;
    TDM_COUNTER_SUB(&ux->pending, 1);
    return false;
}

/* An operation UCX did not keep: `op` (if any) goes back to the free list, and the call's
 * outcome is DONE, or its failure logged as "<what the caller names> failed: <UCX's why>". */
__attribute__((format(printf, 4, 5))) static int
op_not_issued(tdm_ucx_t *ux, ucs_status_ptr_t sp, tdm_ucx_op_t *op, const char *fmt, ...) {
    if (op)
        op_put(ux, op);
    if (sp == NULL)
        return TDM_UCX_DONE;
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    ucs_status_t s = UCS_PTR_STATUS(sp);
    return fail(ux, map_status(s), "%s failed: %s", what, ucs_status_string(s));
}

/* The end of starting an operation counted in `pending`: PENDING when UCX keeps it (its
 * callback will run), else op_not_issued's outcome; the message's arguments are evaluated
 * only then, off the send path. */
#define OP_END(_ux, _sp, _op, ...)                                                                 \
    (op_issued((_ux), (_sp)) ? TDM_UCX_PENDING : op_not_issued((_ux), (_sp), (_op), __VA_ARGS__))

/* One active message: the engine's header and a payload (`data`, which UCX reads until
 * the send completes), with `flags` in the prefix and `am_flags` for UCX (its
 * UCP_AM_SEND_FLAG_EAGER or _RNDV; 0: UCX chooses by size). */
static int am_send(tdm_ucx_t *ux, int peer, const char *what, const void *hdr, size_t hdr_len,
                   const void *data, size_t len, uint32_t flags, uint32_t am_flags,
                   tdm_ucx_op_t *op, ucp_ep_h ep) {
    tdm_ucx_prefix_t pre = {.src = (uint32_t)ux->rank, .hdr_len = (uint32_t)hdr_len | flags};
    memcpy(op->hdr, &pre, sizeof(pre));
    if (hdr_len)
        memcpy(op->hdr + sizeof(pre), hdr, hdr_len);
    ucp_request_param_t prm = op_param(op);
    if (am_flags) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
        prm.flags = am_flags;
    }
    TDM_COUNTER_ADD(&ux->pending, 1);
    ucs_status_ptr_t sp =
        ucp_am_send_nbx(ep, TDM_UCX_AM_ID, op->hdr, sizeof(pre) + hdr_len, data, len, &prm);
    UX_COUNT(ux, am_sent, 1);
    int rc =
        OP_END(ux, sp, op, "%s: ucp_am_send_nbx of %zu bytes from rank %d to rank %d (host %s)",
               what, len, ux->rank, peer, ux->peers[peer].host);
    if (rc == TDM_UCX_PENDING)
        UX_COUNT(ux, am_sent_pending, 1);
    return rc;
}

/* The checks every send makes, its endpoint and its operation. */
static int send_prepare(tdm_ucx_t *ux, int peer, const char *what, size_t hdr_len, ucp_ep_h *ep_p,
                        tdm_ucx_op_t **op_p) {
    int rc = check_peer(ux, peer, what);
    if (rc)
        return rc;
    if (hdr_len > TDM_UCX_HDR_MAX)
        return fail(ux, TDM_UCX_ERR_INVALID,
                    "%s: header of %zu bytes to rank %d is longer than %d (rank %d)", what, hdr_len,
                    peer, TDM_UCX_HDR_MAX, ux->rank);
    if ((rc = ep_get(ux, peer, ep_p)))
        return rc;
    if (!(*op_p = op_get(ux)))
        return fail(ux, TDM_UCX_ERR_NOMEM, "%s: out of memory (rank %d)", what, ux->rank);
    return 0;
}

/* A send's operation, set before UCX sees it: under MULTI another thread's progress may
 * complete it. */
static void send_op_init(tdm_ucx_op_t *op, int peer, tdm_ucx_done_fn_t done, void *arg) {
    op->kind = OP_SEND;
    op->peer = peer;
    op->done = done;
    op->arg = arg;
}

int tdm_ucx_send(tdm_ucx_t *ux, int peer, const void *hdr, size_t hdr_len, const void *data,
                 size_t len, tdm_ucx_done_fn_t done, void *arg) {
    if (len > ux->am_max)
        return fail(ux, TDM_UCX_ERR_TOO_BIG,
                    "tdm_ucx_send: packet of %zu bytes to rank %d is larger than "
                    "TANDEM_UCX_AM_MAX=%zu (rank %d)",
                    len, peer, ux->am_max, ux->rank);
    ucp_ep_h ep;
    tdm_ucx_op_t *op;
    int rc = send_prepare(ux, peer, "tdm_ucx_send", hdr_len, &ep, &op);
    if (rc)
        return rc;
    send_op_init(op, peer, done, arg);
    return am_send(ux, peer, "tdm_ucx_send", hdr, hdr_len, data, len, 0, 0, op, ep);
}

/* A framed send's completion: the frame in front of the packet says whom to tell. */
static void framed_done_cb(void *req, ucs_status_t status, void *user_data) {
    tdm_ucx_frame_t *f = user_data;
    tdm_ucx_t *ux = f->ux;
    int rc = req_end(ux, req, status);
    if (rc)
        tdm_debug(UCX, "a packet toward rank %u ended with %s", f->to, ucs_status_string(status));
    UX_EVENT(ux);
    f->done(f->arg, rc); /* may reuse the packet's buffer: the last look at f */
}

int tdm_ucx_send_framed(tdm_ucx_t *ux, int peer, void *pkt, size_t len, tdm_ucx_done_fn_t done,
                        void *arg) {
    if (len + sizeof(tdm_ucx_prefix_t) > FRAMED_MAX || len > ux->am_max || !done)
        return tdm_ucx_send(ux, peer, NULL, 0, pkt, len, done, arg);
    int rc = check_peer(ux, peer, "tdm_ucx_send_framed");
    ucp_ep_h ep;
    if (rc || (rc = ep_get(ux, peer, &ep)))
        return rc;
    /* no operation from the free list: the frame holds what the completion needs */
    tdm_ucx_frame_t *f = (tdm_ucx_frame_t *)((unsigned char *)pkt - TDM_UCX_FRAME);
    f->ux = ux;
    f->done = done;
    f->arg = arg;
    f->to = (uint32_t)peer;
    f->pre = (tdm_ucx_prefix_t){.src = (uint32_t)ux->rank, .hdr_len = 0};
    ucp_request_param_t prm = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = framed_done_cb,
        .user_data = f,
        .flags = UCP_AM_SEND_FLAG_EAGER,
    };
    TDM_COUNTER_ADD(&ux->pending, 1);
    ucs_status_ptr_t sp =
        ucp_am_send_nbx(ep, TDM_UCX_AM_ID, NULL, 0, &f->pre, sizeof(f->pre) + len, &prm);
    UX_COUNT(ux, am_sent, 1);
    rc = OP_END(ux, sp, NULL,
                "tdm_ucx_send_framed: ucp_am_send_nbx of %zu bytes from rank %d to rank %d "
                "(host %s)",
                len, ux->rank, peer, ux->peers[peer].host);
    if (rc == TDM_UCX_PENDING)
        UX_COUNT(ux, am_sent_pending, 1);
    return rc;
}

/* ---- streams: a large payload as tagged chunks after the receiver's go ---------------- */

/* Over tcp UCX's rendezvous is RTS, RTR, a put, its acknowledgement and ATP before the
 * receive completes; a stream is the announcement, the go, then chunks that UCX sends
 * eagerly and copies straight into receives posted before the go (docs/performance.md). */

static void stream_unlink(tdm_ucx_t *ux, tdm_ucx_op_t **list, tdm_ucx_op_t *op) {
    UX_LOCK(ux);
    for (tdm_ucx_op_t **pp = list; *pp; pp = &(*pp)->next)
        if (*pp == op) {
            *pp = op->next;
            break;
        }
    UX_UNLOCK(ux);
}

/* One of a stream's requests ended (or, rc < 0, could not start): the last one ends the
 * stream with its first error. */
static void stream_part_done(tdm_ucx_t *ux, tdm_ucx_op_t *op, int rc) {
    if (rc && !op->err)
        op->err = rc;
    if (__atomic_sub_fetch(&op->left, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    rc = op->err;
    if (!rc && op->kind != OP_SEND && op->got != op->len)
        rc = fail(ux, TDM_UCX_ERR_IO,
                  "rank %d: a stream of %zu bytes from rank %d (host %s) brought %zu", ux->rank,
                  op->len, op->peer, ux->peers[op->peer].host, op->got);
    if (op->done)
        op->done(op->arg, rc);
    op_put(ux, op);
    UX_EVENT(ux);
}

static void stream_sent_cb(void *req, ucs_status_t status, void *user_data) {
    tdm_ucx_op_t *op = user_data;
    stream_part_done(op->ux, op, req_end(op->ux, req, status));
}

static void stream_recv_cb(void *req, ucs_status_t status, const ucp_tag_recv_info_t *info,
                           void *user_data) {
    tdm_ucx_op_t *op = user_data;
    if (status == UCS_OK)
        __atomic_add_fetch(&op->got, info->length, __ATOMIC_RELAXED);
    stream_part_done(op->ux, op, req_end(op->ux, req, status));
}

static size_t stream_chunks(size_t len, size_t chunk) {
    return len / chunk + (len % chunk != 0);
}

/* The receiver's go for `m` (chunk 0: the payload was dropped, send nothing). */
static int stream_cts(tdm_ucx_t *ux, int peer, const tdm_ucx_tagmsg_t *m) {
    ucp_ep_h ep;
    tdm_ucx_op_t *op;
    int rc = send_prepare(ux, peer, "tdm_ucx_fetch", 0, &ep, &op);
    if (rc)
        return rc;
    send_op_init(op, peer, NULL, NULL);
    op->tagmsg = *m;
    return am_send(ux, peer, "tdm_ucx_fetch", NULL, 0, &op->tagmsg, sizeof(op->tagmsg), PREFIX_CTS,
                   UCP_AM_SEND_FLAG_EAGER, op, ep);
}

/* Post a stream's chunk receives into buf, then send the go: every chunk then finds its
 * receive posted, and UCX copies it in from the socket's segment. */
static int stream_recv(tdm_ucx_t *ux, tdm_ucx_op_t *op, void *buf, uint64_t tag, size_t chunk) {
    size_t len = op->len, n = stream_chunks(len, chunk);
    int peer = op->peer;
    op->left = (unsigned)n; /* no chunk can land before the go: op outlives the loop */
    op->err = 0;
    op->got = 0;
    for (size_t i = 0; i < n; i++) {
        size_t off = i * chunk, part = len - off < chunk ? len - off : chunk;
        ucp_tag_recv_info_t info = {0};
        ucp_request_param_t prm = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                            UCP_OP_ATTR_FIELD_RECV_INFO,
            .cb.recv = stream_recv_cb,
            .user_data = op,
            .recv_info.tag_info = &info,
        };
        TDM_COUNTER_ADD(&ux->pending, 1);
        ucs_status_ptr_t sp = ucp_tag_recv_nbx(ux->worker, (unsigned char *)buf + off, part, tag,
                                               (ucp_tag_t)-1, &prm);
        if (op_issued(ux, sp))
            continue;
        int rc = 0;
        if (sp == NULL)
            __atomic_add_fetch(&op->got, info.length, __ATOMIC_RELAXED);
        else
            rc = fail(ux, map_status(UCS_PTR_STATUS(sp)),
                      "rank %d: ucp_tag_recv_nbx of a %zu-byte chunk from rank %d (host %s) "
                      "failed: %s",
                      ux->rank, part, peer, ux->peers[peer].host,
                      ucs_status_string(UCS_PTR_STATUS(sp)));
        stream_part_done(ux, op, rc);
    }
    UX_COUNT(ux, fetches, 1);
    UX_COUNT(ux, streams_fetched, 1);
    tdm_ucx_tagmsg_t m = {.tag = tag, .len = len, .chunk = chunk};
    int rc = stream_cts(ux, peer, &m);
    /* (without the go the sender never sends: the peer has failed, and the job ends) */
    return rc < 0 ? rc : TDM_UCX_PENDING;
}

/* A go arrived (inside UCX's callback): the stream waits for progress to send it. */
static ucs_status_t stream_go(tdm_ucx_t *ux, int src, const void *data, size_t length) {
    tdm_ucx_tagmsg_t m;
    if (length != sizeof(m)) {
        tdm_error(UCX, "rank %d: dropped a %zu-byte go from rank %d (not Tandem's)", ux->rank,
                  length, src);
        return UCS_OK;
    }
    memcpy(&m, data, sizeof(m));
    tdm_ucx_op_t *op = NULL;
    UX_LOCK(ux);
    for (tdm_ucx_op_t **pp = &ux->stream_wait; *pp; pp = &(*pp)->next)
        if ((*pp)->tagmsg.tag == m.tag && (*pp)->peer == src) {
            op = *pp;
            *pp = op->next;
            op->tagmsg.chunk = m.chunk; /* 0: dropped */
            op->next = ux->stream_go;
            ux->stream_go = op;
            break;
        }
    UX_UNLOCK(ux);
    if (!op)
        tdm_error(UCX, "rank %d: a go from rank %d for tag %#llx, which no stream waits for",
                  ux->rank, src, (unsigned long long)m.tag);
    UX_EVENT(ux);
    return UCS_OK;
}

/* Send the chunks of every stream whose go came (from progress, outside UCX's callback). */
static void stream_send(tdm_ucx_t *ux, tdm_ucx_op_t *op) {
    size_t chunk = op->tagmsg.chunk;
    size_t n = chunk ? stream_chunks(op->len, chunk) : 0;
    op->left = (unsigned)n + 1; /* + 1 until every chunk is handed to UCX */
    op->err = 0;
    ucp_ep_h ep = NULL;
    int rc = n ? check_peer(ux, op->peer, "tdm_ucx_send_rndv") : 0;
    if (!rc && n)
        rc = ep_get(ux, op->peer, &ep);
    for (size_t i = 0; i < n; i++) {
        if (rc) {
            stream_part_done(ux, op, rc);
            continue;
        }
        size_t off = i * chunk, part = op->len - off < chunk ? op->len - off : chunk;
        ucp_request_param_t prm = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
            .cb.send = stream_sent_cb,
            .user_data = op,
        };
        TDM_COUNTER_ADD(&ux->pending, 1);
        ucs_status_ptr_t sp = ucp_tag_send_nbx(ep, (const unsigned char *)op->local + off, part,
                                               op->tagmsg.tag, &prm);
        if (op_issued(ux, sp))
            continue;
        if (sp != NULL)
            rc = fail(ux, map_status(UCS_PTR_STATUS(sp)),
                      "ucp_tag_send_nbx of a %zu-byte chunk from rank %d to rank %d (host %s) "
                      "failed: %s",
                      part, ux->rank, op->peer, ux->peers[op->peer].host,
                      ucs_status_string(UCS_PTR_STATUS(sp)));
        stream_part_done(ux, op, rc);
    }
    stream_part_done(ux, op, 0);
}

static void stream_start(tdm_ucx_t *ux) {
    if (!__atomic_load_n(&ux->stream_go, __ATOMIC_RELAXED))
        return;
    UX_LOCK(ux);
    tdm_ucx_op_t *list = ux->stream_go;
    ux->stream_go = NULL;
    UX_UNLOCK(ux);
    while (list) {
        tdm_ucx_op_t *op = list;
        list = op->next;
        stream_send(ux, op);
    }
}

/* The header as an active message announcing a tag, the data as a synchronous tagged send
 * under it, or as a stream (above) to a peer over tcp from TANDEM_UCX_STREAM_MIN bytes;
 * TANDEM_UCX_RNDV=am: one active message by UCX's rendezvous (below). Matching
 * stays the engine's: the tag is unique, and the receiver posts it exactly. */
int tdm_ucx_send_rndv(tdm_ucx_t *ux, int peer, const void *hdr, size_t hdr_len, const void *data,
                      size_t len, tdm_ucx_done_fn_t done, void *arg) {
    ucp_ep_h ep;
    tdm_ucx_op_t *op;
    int rc = send_prepare(ux, peer, "tdm_ucx_send_rndv", hdr_len, &ep, &op);
    if (rc)
        return rc;
    if (ux->rndv_am && len > 0) {
        /* One message: the header rides UCX's rendezvous announcement, and the receiver
         * fetches the data straight into the matched buffer (ucp_am_recv_data_nbx). The
         * send completes once it did, so a synchronous send's promise holds. (An empty
         * payload has nothing to fetch: it keeps the tag form.) */
        send_op_init(op, peer, done, arg);
        UX_COUNT(ux, rndv_sent, 1);
        return am_send(ux, peer, "tdm_ucx_send_rndv", hdr, hdr_len, data, len, PREFIX_FETCH,
                       UCP_AM_SEND_FLAG_RNDV, op, ep);
    }
    tdm_ucx_op_t *dop = op_get(ux);
    if (!dop) {
        op_put(ux, op);
        return fail(ux, TDM_UCX_ERR_NOMEM, "tdm_ucx_send_rndv: out of memory (rank %d)", ux->rank);
    }
    uint64_t seq = __atomic_fetch_add(&ux->tag_seq, 1, __ATOMIC_RELAXED);
    uint64_t tag = ((uint64_t)ux->rank << TAG_SEQ_BITS) | (seq & ((1ull << TAG_SEQ_BITS) - 1));
    bool stream = ux->peers[peer].stream && len >= ux->stream_min;
    send_op_init(op, peer, NULL, NULL); /* the data's completion is the send's */
    op->tagmsg = (tdm_ucx_tagmsg_t){.tag = tag, .len = len, .chunk = stream ? ux->stream_chunk : 0};
    send_op_init(dop, peer, done, arg);
    if (stream) {
        /* waiting for the go before the announcement leaves: the go may come at once */
        dop->local = (void *)data;
        dop->len = len;
        dop->tagmsg = op->tagmsg;
        UX_LOCK(ux);
        dop->next = ux->stream_wait;
        ux->stream_wait = dop;
        UX_UNLOCK(ux);
    }
    /* the announcement is 24 bytes: never UCX's own rendezvous */
    rc = am_send(ux, peer, "tdm_ucx_send_rndv", hdr, hdr_len, &op->tagmsg, sizeof(op->tagmsg),
                 PREFIX_FETCH, UCP_AM_SEND_FLAG_EAGER, op, ep);
    if (rc < 0) {
        if (stream)
            stream_unlink(ux, &ux->stream_wait, dop);
        op_put(ux, dop);
        return rc;
    }
    UX_COUNT(ux, rndv_sent, 1);
    if (stream) {
        UX_COUNT(ux, streams, 1);
        return TDM_UCX_PENDING; /* dop ends when its chunks have left (stream_send) */
    }
    ucp_request_param_t prm = op_param(dop);
    TDM_COUNTER_ADD(&ux->pending, 1);
    /* synchronous: done only once the receiver has posted the tag, i.e. matched the message
     * (MPI_Ssend's promise), whether UCX moves it eagerly or by its own rendezvous */
    ucs_status_ptr_t sp = ucp_tag_send_sync_nbx(ep, data, len, tag, &prm);
    return OP_END(ux, sp, dop,
                  "ucp_tag_send_sync_nbx of %zu bytes from rank %d to rank %d (host %s)", len,
                  ux->rank, peer, ux->peers[peer].host);
}

static void rx_enqueue(tdm_ucx_t *ux, tdm_ucx_peer_t *p, tdm_ucx_rx_t *rx) {
    rx->next = NULL;
    if (p->rx_tail)
        p->rx_tail->next = rx;
    else
        p->rx_head = rx;
    p->rx_tail = rx;
    if (!p->rx_active) {
        p->rx_active = true;
        p->next_active = ux->rx_active;
        ux->rx_active = p;
    }
}

/* A tdm_ucx_send_rndv packet: its header goes to recv_data at once (in the peer's order,
 * behind any packet of it still being fetched), its data as a handle naming the tag. */
static ucs_status_t am_recv_fetchable(tdm_ucx_t *ux, tdm_ucx_peer_t *p, const void *hdr,
                                      size_t hdr_len, void *data, size_t length, bool rndv) {
    if (!ux->recv_data || (!rndv && length != sizeof(tdm_ucx_tagmsg_t))) {
        tdm_error(UCX, "rank %d: dropped a rendezvous packet from rank %d (%s)", ux->rank, p->rank,
                  ux->recv_data ? "not Tandem's" : "no handler");
        return UCS_OK; /* (a rendezvous UCX then ends at the sender) */
    }
    tdm_ucx_tagmsg_t m = {.len = length};
    if (!rndv)
        memcpy(&m, data, sizeof(m));
    tdm_ucx_data_t *d = malloc(sizeof(*d));
    tdm_ucx_rx_t *rx = d && p->rx_head ? calloc(1, sizeof(*rx)) : NULL;
    if (!d || (p->rx_head && !rx)) {
        free(d);
        fail(ux, TDM_UCX_ERR_NOMEM, "rank %d: out of memory for a packet from rank %d", ux->rank,
             p->rank);
        return UCS_OK;
    }
    /* UCX's rendezvous: the descriptor stays valid until fetched (UCS_INPROGRESS) */
    *d = (tdm_ucx_data_t){.tag = m.tag,
                          .desc = rndv ? data : NULL,
                          .len = (size_t)m.len,
                          .chunk = (size_t)m.chunk,
                          .peer = p->rank};
    if (!rx) {
        ux->st.am_recv++;
        ux->recv_data(ux->recv_arg, p->rank, hdr, hdr_len, d, d->len);
    } else {
        rx->ux = ux;
        rx->peer = p->rank;
        rx->state = RX_READY;
        rx->hdr_len = hdr_len;
        memcpy(rx->hdr, hdr, hdr_len);
        rx->len = d->len;
        rx->fdata = d;
        rx_enqueue(ux, p, rx);
    }
    return rndv ? UCS_INPROGRESS : UCS_OK;
}

static ucs_status_t am_recv_cb(void *arg, const void *header, size_t header_length, void *data,
                               size_t length, const ucp_am_recv_param_t *param) {
    tdm_ucx_t *ux = arg;
    void *desc = data; /* what UCX knows the payload by */
    tdm_ucx_prefix_t pre;
    if (header_length == 0 && length >= sizeof(pre) &&
        !(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        /* a framed packet (forced eager): the prefix is the payload's start */
        memcpy(&pre, data, sizeof(pre));
        if (pre.hdr_len != 0 || pre.src >= (uint32_t)ux->nranks) {
            tdm_error(UCX, "rank %d: dropped a framed active message from rank %u (prefix %u)",
                      ux->rank, pre.src, pre.hdr_len);
            return UCS_OK;
        }
        header = data; /* a prefix and no header of the engine's */
        header_length = sizeof(pre);
        data = (unsigned char *)data + sizeof(pre);
        length -= sizeof(pre);
    } else if (header_length < sizeof(pre)) {
        tdm_error(UCX, "rank %d: dropped an active message with a %zu-byte header (not Tandem's)",
                  ux->rank, header_length);
        return UCS_OK;
    } else {
        memcpy(&pre, header, sizeof(pre));
    }
    if ((pre.hdr_len & PREFIX_CTS) && header_length == sizeof(pre) &&
        pre.src < (uint32_t)ux->nranks)
        return stream_go(ux, (int)pre.src, data, length);
    bool fetchable = (pre.hdr_len & PREFIX_FETCH) != 0;
    pre.hdr_len &= ~PREFIX_FETCH;
    if (pre.src >= (uint32_t)ux->nranks || pre.hdr_len != header_length - sizeof(pre)) {
        tdm_error(UCX, "rank %d: dropped an active message from rank %u with header %u+%zu bytes",
                  ux->rank, pre.src, pre.hdr_len, header_length);
        return UCS_OK;
    }
    tdm_ucx_peer_t *p = &ux->peers[pre.src];
    const unsigned char *hdr = (const unsigned char *)header + sizeof(pre);
    bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
    UX_EVENT(ux);
    if (fetchable)
        return am_recv_fetchable(ux, p, hdr, pre.hdr_len, data, length, rndv);
    if (!rndv && !p->rx_head) {
        ux->st.am_recv++;
        ux->recv(ux->recv_arg, (int)pre.src, hdr, pre.hdr_len, data, length);
        return UCS_OK;
    }
    /* an earlier packet of this peer is still being fetched, or this one must be:
     * it waits in the peer's queue so the peer's order holds */
    tdm_ucx_rx_t *rx = calloc(1, sizeof(*rx));
    if (!rx) {
        fail(ux, TDM_UCX_ERR_NOMEM, "rank %d: out of memory queueing a packet from rank %u",
             ux->rank, pre.src);
        return rndv ? UCS_ERR_NO_MEMORY : UCS_OK;
    }
    rx->ux = ux;
    rx->peer = (int)pre.src;
    rx->hdr_len = pre.hdr_len;
    memcpy(rx->hdr, hdr, pre.hdr_len);
    rx->len = length;
    ucs_status_t ret = UCS_OK;
    if (rndv) {
        rx->state = RX_FETCH;
        rx->desc = data;
        rx->next_fetch = NULL;
        if (ux->fetch_tail)
            ux->fetch_tail->next_fetch = rx;
        else
            ux->fetch_head = rx;
        ux->fetch_tail = rx;
        ret = UCS_INPROGRESS;
    } else if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) {
        rx->state = RX_READY;
        rx->desc = desc;
        rx->held = true;
        rx->data = data;
        ret = UCS_INPROGRESS;
    } else {
        rx->state = RX_READY;
        rx->buf = malloc(length ? length : 1);
        if (!rx->buf) {
            free(rx);
            fail(ux, TDM_UCX_ERR_NOMEM, "rank %d: out of memory copying %zu bytes from rank %u",
                 ux->rank, length, pre.src);
            return UCS_OK;
        }
        memcpy(rx->buf, data, length);
        rx->data = rx->buf;
    }
    rx_enqueue(ux, p, rx);
    return ret;
}

static void fetch_done_cb(void *req, ucs_status_t status, size_t length, void *user_data) {
    tdm_ucx_rx_t *rx = user_data;
    tdm_ucx_t *ux = rx->ux;
    ucp_request_free(req);
    TDM_COUNTER_SUB(&ux->pending, 1);
    if (status != UCS_OK) {
        rx->state = RX_FAILED;
        fail(ux, map_status(status),
             "rank %d: fetching a %zu-byte packet from rank %d (host %s) failed: %s", ux->rank,
             rx->len, rx->peer, ux->peers[rx->peer].host, ucs_status_string(status));
    } else {
        rx->state = RX_READY;
    }
    UX_EVENT(ux);
}

/* Start the rendezvous fetches the AM callback queued (outside UCX's callback). */
static void fetch_start(tdm_ucx_t *ux) {
    while (ux->fetch_head) {
        tdm_ucx_rx_t *rx = ux->fetch_head;
        ux->fetch_head = rx->next_fetch;
        if (!ux->fetch_head)
            ux->fetch_tail = NULL;
        rx->buf = malloc(rx->len ? rx->len : 1);
        if (!rx->buf) {
            fail(ux, TDM_UCX_ERR_NOMEM, "rank %d: out of memory for a %zu-byte packet from rank %d",
                 ux->rank, rx->len, rx->peer);
            ucp_am_data_release(ux->worker, rx->desc);
            rx->state = RX_FAILED;
            continue;
        }
        rx->data = rx->buf;
        rx->state = RX_FETCHING;
        ucp_request_param_t prm = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
            .cb.recv_am = fetch_done_cb,
            .user_data = rx,
        };
        TDM_COUNTER_ADD(&ux->pending, 1);
        ucs_status_ptr_t sp = ucp_am_recv_data_nbx(ux->worker, rx->desc, rx->buf, rx->len, &prm);
        rx->desc = NULL; /* UCX owns it now, whatever the outcome */
        ux->st.am_recv_rndv++;
        if (sp == NULL) {
            TDM_COUNTER_SUB(&ux->pending, 1);
            rx->state = RX_READY;
        } else if (UCS_PTR_IS_ERR(sp)) {
            TDM_COUNTER_SUB(&ux->pending, 1);
            rx->state = RX_FAILED;
            fail(ux, map_status(UCS_PTR_STATUS(sp)),
                 "rank %d: ucp_am_recv_data_nbx of %zu bytes from rank %d (host %s) failed: %s",
                 ux->rank, rx->len, rx->peer, ux->peers[rx->peer].host,
                 ucs_status_string(UCS_PTR_STATUS(sp)));
        }
    }
}

static void rx_free(tdm_ucx_t *ux, tdm_ucx_rx_t *rx) {
    if (rx->desc)
        ucp_am_data_release(ux->worker, rx->desc);
    if (rx->fdata)
        tdm_ucx_data_drop(ux, rx->fdata);
    free(rx->buf);
    free(rx);
}

/* Deliver, per peer, the queued packets that are ready, in order. A failed fetch
 * ends delivery from that peer: what follows it would be out of order. */
static void rx_drain(tdm_ucx_t *ux) {
    tdm_ucx_peer_t **pp = &ux->rx_active;
    while (*pp) {
        tdm_ucx_peer_t *p = *pp;
        tdm_ucx_rx_t *rx;
        while ((rx = p->rx_head) && (rx->state == RX_READY || rx->state == RX_FAILED)) {
            if (rx->state == RX_FAILED) {
                if (!__atomic_exchange_n(&p->failed, TDM_UCX_ERR_PEER, __ATOMIC_ACQ_REL) &&
                    ux->peer_error)
                    ux->peer_error(ux->peer_error_arg, p->rank, ux->err);
                /* drop it and everything behind it that no fetch still writes into */
                while ((rx = p->rx_head) && rx->state != RX_FETCHING) {
                    p->rx_head = rx->next;
                    rx_free(ux, rx);
                }
                break;
            }
            p->rx_head = rx->next;
            ux->st.am_recv++;
            if (rx->fdata) {
                tdm_ucx_data_t *d = rx->fdata;
                rx->fdata = NULL; /* the receiver's now */
                ux->recv_data(ux->recv_arg, rx->peer, rx->hdr, rx->hdr_len, d, rx->len);
            } else {
                ux->recv(ux->recv_arg, rx->peer, rx->hdr, rx->hdr_len, rx->data, rx->len);
            }
            rx_free(ux, rx);
        }
        if (!p->rx_head) {
            p->rx_tail = NULL;
            p->rx_active = false;
            *pp = p->next_active;
        } else {
            pp = &p->next_active;
        }
    }
}

static void tag_recv_done_cb(void *req, ucs_status_t status, const ucp_tag_recv_info_t *info,
                             void *user_data) {
    tdm_ucx_op_t *op = user_data;
    if (status == UCS_OK && info->length != op->len)
        status = UCS_ERR_MESSAGE_TRUNCATED; /* not the announced length: not ours */
    send_done_cb(req, status, user_data);
}

static void am_fetch_done_cb(void *req, ucs_status_t status, size_t length, void *user_data) {
    tdm_ucx_op_t *op = user_data;
    if (status == UCS_OK && length != op->len)
        status = UCS_ERR_MESSAGE_TRUNCATED;
    send_done_cb(req, status, user_data);
}

/* Post the receive of a payload into buf (len bytes): its tag, or its rendezvous. */
static int tag_recv(tdm_ucx_t *ux, tdm_ucx_data_t *data, void *buf, tdm_ucx_op_kind_t kind,
                    tdm_ucx_done_fn_t done, void *arg) {
    size_t len = data->len, chunk = data->chunk;
    int peer = data->peer;
    uint64_t tag = data->tag;
    void *desc = data->desc;
    free(data);
    tdm_ucx_op_t *op = op_get(ux);
    if (!op)
        return fail(ux, TDM_UCX_ERR_NOMEM, "tdm_ucx_fetch: out of memory (rank %d)", ux->rank);
    op->kind = kind;
    op->peer = peer;
    op->done = done;
    op->arg = arg;
    op->len = len;
    if (chunk)
        return stream_recv(ux, op, buf, tag, chunk);
    if (desc) {
        ucp_request_param_t prm = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
            .cb.recv_am = am_fetch_done_cb,
            .user_data = op,
        };
        TDM_COUNTER_ADD(&ux->pending, 1);
        ucs_status_ptr_t sp = ucp_am_recv_data_nbx(ux->worker, desc, buf, len, &prm);
        UX_COUNT(ux, fetches, 1);
        UX_COUNT(ux, fetches_am, 1);
        return OP_END(ux, sp, op,
                      "rank %d: ucp_am_recv_data_nbx of %zu bytes from rank %d (host %s)", ux->rank,
                      len, peer, ux->peers[peer].host);
    }
    ucp_tag_recv_info_t info = {0};
    ucp_request_param_t prm = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_RECV_INFO,
        .cb.recv = tag_recv_done_cb,
        .user_data = op,
        .recv_info.tag_info = &info, /* (UCX 1.13 wants it; the callback gets its own) */
    };
    TDM_COUNTER_ADD(&ux->pending, 1);
    ucs_status_ptr_t sp = ucp_tag_recv_nbx(ux->worker, buf, len, tag, (ucp_tag_t)-1, &prm);
    UX_COUNT(ux, fetches, 1);
    /* (done at once: a longer message fails with MESSAGE_TRUNCATED) */
    return OP_END(ux, sp, op, "rank %d: ucp_tag_recv_nbx of %zu bytes from rank %d (host %s)",
                  ux->rank, len, peer, ux->peers[peer].host);
}

int tdm_ucx_fetch(tdm_ucx_t *ux, tdm_ucx_data_t *data, void *buf, tdm_ucx_done_fn_t done,
                  void *arg) {
    return tag_recv(ux, data, buf, OP_FETCH, done, arg);
}

static void drop_done(void *arg, int status) {
    (void)status;
    free(arg);
}

void tdm_ucx_data_drop(tdm_ucx_t *ux, tdm_ucx_data_t *data) {
    if (data->chunk) {
        /* a stream's sender waits for a go: one that says "send nothing" */
        tdm_ucx_tagmsg_t m = {.tag = data->tag, .len = data->len, .chunk = 0};
        int peer = data->peer;
        free(data);
        stream_cts(ux, peer, &m);
        return;
    }
    /* the sender completes when its data was taken: taken into a buffer thrown away */
    void *scratch = malloc(data->len ? data->len : 1);
    if (!scratch) {
        fail(ux, TDM_UCX_ERR_NOMEM, "rank %d: out of memory dropping %zu bytes from rank %d",
             ux->rank, data->len, data->peer);
        free(data);
        return;
    }
    if (tag_recv(ux, data, scratch, OP_DROP, drop_done, scratch) != TDM_UCX_PENDING)
        free(scratch);
}

/* ---- progress and waiting --------------------------------------------------------------- */

static void reads_issue(tdm_ucx_t *ux);

int tdm_ucx_progress(tdm_ucx_t *ux) {
    if (ux->mt && !tdm_lock_try(&ux->progress_lock))
        return 0;
    __atomic_store_n(&ux->events, 0u, __ATOMIC_RELAXED);
    /* queued reads first (seed 001 §4.2): they were asked for before any new one */
    reads_issue(ux);
    UX_EVENTS_ADD(ux, ucp_worker_progress(ux->worker));
    fetch_start(ux);
    stream_start(ux);
    reads_issue(ux);
    rx_drain(ux);
    int n = (int)__atomic_load_n(&ux->events, __ATOMIC_RELAXED);
    if (ux->mt)
        tdm_lock_release(&ux->progress_lock);
    return n;
}

int tdm_ucx_efd(tdm_ucx_t *ux) {
    return ux->efd;
}

int tdm_ucx_arm(tdm_ucx_t *ux) {
    /* the fetch list and receive queues are the progress thread's: one progressing now
     * has work in hand, so the caller polls again instead of sleeping */
    if (ux->mt && !tdm_lock_try(&ux->progress_lock))
        return 1;
    /* work of our own that no UCX event will announce */
    bool busy = ux->fetch_head || ux->rx_active;
    UX_LOCK(ux);
    busy = busy || (ux->read_head && ux->read_tokens > 0) || ux->stream_go;
    UX_UNLOCK(ux);
    ucs_status_t s = busy ? UCS_ERR_BUSY : ucp_worker_arm(ux->worker);
    if (ux->mt)
        tdm_lock_release(&ux->progress_lock);
    if (s == UCS_OK)
        return 0;
    if (s == UCS_ERR_BUSY)
        return 1;
    return fail(ux, map_status(s), "ucp_worker_arm failed on rank %d (host %s): %s", ux->rank,
                ux->host, ucs_status_string(s));
}

/* ---- registration and remote keys ------------------------------------------------------- */

static void reg_unlink(tdm_ucx_t *ux, tdm_ucx_mem_t *m) {
    if (m->prev)
        m->prev->next = m->next;
    else
        ux->reg_head = m->next;
    if (m->next)
        m->next->prev = m->prev;
    else
        ux->reg_tail = m->prev;
}

static void reg_push_front(tdm_ucx_t *ux, tdm_ucx_mem_t *m) {
    m->prev = NULL;
    m->next = ux->reg_head;
    if (ux->reg_head)
        ux->reg_head->prev = m;
    else
        ux->reg_tail = m;
    ux->reg_head = m;
}

static void reg_destroy(tdm_ucx_t *ux, tdm_ucx_mem_t *m) {
    ucp_rkey_buffer_release(m->rkey_buf);
    ucp_mem_unmap(ux->ctx, m->memh);
    free(m);
}

/* UCM's callback, before memory leaves the address space (see reg_hooked). */
static void reg_unmapped_cb(ucm_event_type_t type, ucm_event_t *ev, void *arg) {
    (void)type;
    tdm_ucx_t *ux = arg;
    uintptr_t lo = (uintptr_t)ev->vm_unmapped.address, hi = lo + ev->vm_unmapped.size;
    if (hi <= atomic_load_explicit(&ux->reg_lo, memory_order_relaxed) ||
        lo >= atomic_load_explicit(&ux->reg_hi, memory_order_relaxed))
        return;
    pthread_mutex_lock(&ux->unmapped_mu);
    if (ux->unmapped_n < UNMAPPED_MAX) {
        ux->unmapped[ux->unmapped_n].lo = lo;
        ux->unmapped[ux->unmapped_n].hi = hi;
        ux->unmapped_n++;
    } else {
        ux->unmapped_all = true;
    }
    pthread_mutex_unlock(&ux->unmapped_mu);
}

/* Once, at the first registration: UCM installs its hooks then, so a job that registers
 * nothing pays nothing. Under `lock`. */
static void reg_hook(tdm_ucx_t *ux) {
    ux->reg_hook_tried = true;
    if (ux->reg_cap == 0)
        return;
    atomic_store(&ux->reg_lo, UINTPTR_MAX);
    atomic_store(&ux->reg_hi, 0);
    ucs_status_t s = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, reg_unmapped_cb, ux);
    if (s == UCS_OK) {
        ux->reg_hooked = true;
        return;
    }
    tdm_debug(UCX,
              "rank %d: no memory hook from UCX (%s; UCX_MEM_EVENTS=no?): registrations are "
              "released at their last use",
              ux->rank, ucs_status_string(s));
    ux->reg_cap = 0;
}

/* Drops the cached registrations whose memory was unmapped; those no operation uses are
 * returned for reg_destroy outside the lock. Under `lock`. */
static tdm_ucx_mem_t *reg_drop_unmapped(tdm_ucx_t *ux) {
    if (!ux->reg_hooked)
        return NULL; /* nothing reports, and nothing idle is kept */
    pthread_mutex_lock(&ux->unmapped_mu);
    int n = ux->unmapped_n;
    bool all = ux->unmapped_all;
    __typeof__(ux->unmapped) r;
    memcpy(r, ux->unmapped, sizeof(r[0]) * (size_t)n);
    ux->unmapped_n = 0;
    ux->unmapped_all = false;
    pthread_mutex_unlock(&ux->unmapped_mu);
    if (n == 0 && !all)
        return NULL;
    tdm_ucx_mem_t *dead = NULL;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (tdm_ucx_mem_t *m = ux->reg_head, *next; m; m = next) {
        next = m->next;
        uintptr_t b = (uintptr_t)m->base, e = b + m->len;
        bool hit = all;
        for (int i = 0; i < n && !hit; i++)
            hit = b < r[i].hi && r[i].lo < e;
        if (!hit) {
            lo = b < lo ? b : lo;
            hi = e > hi ? e : hi;
            continue;
        }
        reg_unlink(ux, m);
        ux->st.reg_dropped++;
        m->stale = true;
        if (m->refs == 0) {
            ux->reg_idle--;
            m->next = dead;
            dead = m;
        }
    }
    atomic_store_explicit(&ux->reg_lo, lo, memory_order_relaxed);
    atomic_store_explicit(&ux->reg_hi, hi, memory_order_relaxed);
    return dead;
}

static void reg_destroy_list(tdm_ucx_t *ux, tdm_ucx_mem_t *m) {
    while (m) {
        tdm_ucx_mem_t *next = m->next;
        reg_destroy(ux, m);
        m = next;
    }
}

int tdm_ucx_mem_reg(tdm_ucx_t *ux, void *base, size_t len, tdm_ucx_mem_t **mem_p) {
    if (!base || !len)
        return fail(ux, TDM_UCX_ERR_INVALID, "tdm_ucx_mem_reg: empty range %p+%zu (rank %d)", base,
                    len, ux->rank);
    UX_LOCK(ux);
    if (!ux->reg_hook_tried)
        reg_hook(ux);
    tdm_ucx_mem_t *dead = reg_drop_unmapped(ux);
    for (tdm_ucx_mem_t *m = ux->reg_head; m; m = m->next) {
        if (m->base == base && m->len == len) {
            if (m->refs++ == 0)
                ux->reg_idle--;
            reg_unlink(ux, m);
            reg_push_front(ux, m);
            ux->st.reg_hits++;
            UX_UNLOCK(ux);
            reg_destroy_list(ux, dead);
            *mem_p = m;
            return 0;
        }
    }
    ux->st.reg_misses++;
    UX_UNLOCK(ux);
    reg_destroy_list(ux, dead);
    tdm_ucx_mem_t *m = calloc(1, sizeof(*m));
    if (!m)
        return fail(ux, TDM_UCX_ERR_NOMEM, "tdm_ucx_mem_reg: out of memory (rank %d)", ux->rank);
    ucp_mem_map_params_t prm = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
        .address = base,
        .length = len,
    };
    ucs_status_t s = ucp_mem_map(ux->ctx, &prm, &m->memh);
    if (s != UCS_OK) {
        free(m);
        return fail(ux, map_status(s), "ucp_mem_map of %p+%zu failed on rank %d (host %s): %s",
                    base, len, ux->rank, ux->host, ucs_status_string(s));
    }
    s = ucp_rkey_pack(ux->ctx, m->memh, &m->rkey_buf, &m->rkey_len);
    if (s != UCS_OK) {
        ucp_mem_unmap(ux->ctx, m->memh);
        free(m);
        return fail(ux, map_status(s), "ucp_rkey_pack of %p+%zu failed on rank %d (host %s): %s",
                    base, len, ux->rank, ux->host, ucs_status_string(s));
    }
    m->base = base;
    m->len = len;
    m->refs = 1;
    UX_LOCK(ux);
    reg_push_front(ux, m);
    /* widen the hook's filter before the buffer can be unmapped (its use has not begun) */
    uintptr_t b = (uintptr_t)base, e = b + len;
    if (b < atomic_load_explicit(&ux->reg_lo, memory_order_relaxed))
        atomic_store_explicit(&ux->reg_lo, b, memory_order_relaxed);
    if (e > atomic_load_explicit(&ux->reg_hi, memory_order_relaxed))
        atomic_store_explicit(&ux->reg_hi, e, memory_order_relaxed);
    UX_UNLOCK(ux);
    *mem_p = m;
    return 0;
}

void tdm_ucx_mem_dereg(tdm_ucx_t *ux, tdm_ucx_mem_t *mem) {
    tdm_ucx_mem_t *evict = NULL;
    UX_LOCK(ux);
    if (--mem->refs == 0 && mem->stale) {
        evict = mem; /* dropped from the cache while in use */
        evict->next = NULL;
    } else if (mem->refs == 0) {
        ux->reg_idle++;
        /* evict the least recently used idle registrations beyond the cap */
        for (tdm_ucx_mem_t *m = ux->reg_tail; m && ux->reg_idle > ux->reg_cap;) {
            tdm_ucx_mem_t *prev = m->prev;
            if (m->refs == 0) {
                reg_unlink(ux, m);
                ux->reg_idle--;
                m->next = evict;
                evict = m;
            }
            m = prev;
        }
    }
    UX_UNLOCK(ux);
    while (evict) {
        tdm_ucx_mem_t *m = evict;
        evict = m->next;
        reg_destroy(ux, m);
    }
}

void tdm_ucx_mem_rkey(const tdm_ucx_mem_t *mem, const void **rkey_p, size_t *len_p) {
    *rkey_p = mem->rkey_buf;
    *len_p = mem->rkey_len;
}

int tdm_ucx_rkey_unpack(tdm_ucx_t *ux, int peer, const void *packed, size_t len,
                        tdm_ucx_rkey_t **rkey_p) {
    int rc = check_peer(ux, peer, "tdm_ucx_rkey_unpack");
    if (rc)
        return rc;
    if (!packed || !len)
        return fail(ux, TDM_UCX_ERR_INVALID,
                    "tdm_ucx_rkey_unpack: empty key from rank %d (rank %d)", peer, ux->rank);
    ucp_ep_h ep;
    if ((rc = ep_get(ux, peer, &ep)))
        return rc;
    tdm_ucx_rkey_t *k = malloc(sizeof(*k));
    if (!k)
        return fail(ux, TDM_UCX_ERR_NOMEM, "tdm_ucx_rkey_unpack: out of memory (rank %d)",
                    ux->rank);
    ucs_status_t s = ucp_ep_rkey_unpack(ep, packed, &k->rkey);
    if (s != UCS_OK) {
        free(k);
        return fail(ux, map_status(s),
                    "ucp_ep_rkey_unpack of a %zu-byte key from rank %d (host %s) failed on rank "
                    "%d: %s",
                    len, peer, ux->peers[peer].host, ux->rank, ucs_status_string(s));
    }
    k->peer = peer;
    *rkey_p = k;
    return 0;
}

void tdm_ucx_rkey_release(tdm_ucx_t *ux, tdm_ucx_rkey_t *rkey) {
    ucp_rkey_destroy(rkey->rkey);
    free(rkey);
}

/* ---- get, put, flush -------------------------------------------------------------------- */

/* Hand one read (holding a token) to UCX. `deferred`: it waited in the FIFO, so
 * its caller was told PENDING and its completion must be reported here. */
static int read_start(tdm_ucx_t *ux, tdm_ucx_op_t *op, bool deferred) {
    ucp_ep_h ep = ux->peers[op->peer].ep;
    ucp_request_param_t prm = op_param(op);
    TDM_COUNTER_ADD(&ux->pending, 1);
    ucs_status_ptr_t sp = ucp_get_nbx(ep, op->local, op->len, op->remote, op->rkey->rkey, &prm);
    if (op_issued(ux, sp))
        return TDM_UCX_PENDING;
    UX_LOCK(ux);
    ux->read_tokens++;
    UX_UNLOCK(ux);
    int rc = TDM_UCX_DONE;
    if (UCS_PTR_IS_ERR(sp))
        rc = fail(ux, map_status(UCS_PTR_STATUS(sp)),
                  "ucp_get_nbx of %zu bytes from rank %d (host %s) failed on rank %d: %s", op->len,
                  op->peer, ux->peers[op->peer].host, ux->rank,
                  ucs_status_string(UCS_PTR_STATUS(sp)));
    if (deferred) {
        op->done(op->arg, rc);
        UX_EVENT(ux);
    }
    op_put(ux, op);
    return rc;
}

/* Take a token; under lock. */
static void read_take_token(tdm_ucx_t *ux) {
    ux->read_tokens--;
    uint64_t out = (uint64_t)(ux->read_limit - ux->read_tokens);
    if (out > ux->st.reads_max_outstanding)
        ux->st.reads_max_outstanding = out;
    ux->st.reads++;
}

static void reads_issue(tdm_ucx_t *ux) {
    /* the FIFO is empty almost always: a look without the lock, once per progress call (a
     * read queued meanwhile is issued by the next one; tdm_ucx_arm looks under the lock) */
    if (!__atomic_load_n(&ux->reads_waiting, __ATOMIC_RELAXED))
        return;
    for (;;) {
        UX_LOCK(ux);
        tdm_ucx_op_t *op = ux->read_head;
        if (!op || ux->read_tokens == 0) {
            UX_UNLOCK(ux);
            return;
        }
        ux->read_head = op->next;
        if (!ux->read_head)
            ux->read_tail = NULL;
        __atomic_fetch_sub(&ux->reads_waiting, 1, __ATOMIC_RELAXED);
        read_take_token(ux);
        UX_UNLOCK(ux);
        read_start(ux, op, true);
    }
}

static int rma_prepare(tdm_ucx_t *ux, const char *call, int peer, const void *local, size_t len,
                       tdm_ucx_rkey_t *rkey, tdm_ucx_done_fn_t done) {
    int rc = check_peer(ux, peer, call);
    if (rc)
        return rc;
    if (!rkey || rkey->peer != peer || !done || (!local && len))
        return fail(ux, TDM_UCX_ERR_INVALID, "%s: %s toward rank %d (rank %d)", call,
                    !rkey                ? "no remote key"
                    : !done              ? "no completion callback"
                    : rkey->peer != peer ? "a remote key of another peer"
                                         : "no local buffer",
                    peer, ux->rank);
    return 0;
}

int tdm_ucx_get(tdm_ucx_t *ux, int peer, void *local, size_t len, uint64_t remote,
                tdm_ucx_rkey_t *rkey, tdm_ucx_done_fn_t done, void *arg) {
    int rc = rma_prepare(ux, "tdm_ucx_get", peer, local, len, rkey, done);
    if (rc)
        return rc;
    tdm_ucx_op_t *op = op_get(ux);
    if (!op)
        return fail(ux, TDM_UCX_ERR_NOMEM, "tdm_ucx_get: out of memory (rank %d)", ux->rank);
    *op = (tdm_ucx_op_t){.ux = ux,
                         .kind = OP_GET,
                         .peer = peer,
                         .done = done,
                         .arg = arg,
                         .local = local,
                         .len = len,
                         .remote = remote,
                         .rkey = rkey};
    UX_LOCK(ux);
    if (ux->read_tokens > 0 && !ux->read_head) {
        read_take_token(ux);
        UX_UNLOCK(ux);
        return read_start(ux, op, false);
    }
    /* no token, or older reads wait: behind them (seed 001 §4.2) */
    op->next = NULL;
    if (ux->read_tail)
        ux->read_tail->next = op;
    else
        ux->read_head = op;
    ux->read_tail = op;
    __atomic_fetch_add(&ux->reads_waiting, 1, __ATOMIC_RELAXED);
    ux->st.reads_queued++;
    UX_UNLOCK(ux);
    return TDM_UCX_PENDING;
}

int tdm_ucx_put(tdm_ucx_t *ux, int peer, const void *local, size_t len, uint64_t remote,
                tdm_ucx_rkey_t *rkey, tdm_ucx_done_fn_t done, void *arg) {
    int rc = rma_prepare(ux, "tdm_ucx_put", peer, local, len, rkey, done);
    if (rc)
        return rc;
    tdm_ucx_op_t *op = op_get(ux);
    if (!op)
        return fail(ux, TDM_UCX_ERR_NOMEM, "tdm_ucx_put: out of memory (rank %d)", ux->rank);
    *op = (tdm_ucx_op_t){.ux = ux, .kind = OP_PUT, .peer = peer, .done = done, .arg = arg};
    ucp_request_param_t prm = op_param(op);
    UX_COUNT(ux, writes, 1);
    TDM_COUNTER_ADD(&ux->pending, 1);
    ucs_status_ptr_t sp = ucp_put_nbx(ux->peers[peer].ep, local, len, remote, rkey->rkey, &prm);
    return OP_END(ux, sp, op, "ucp_put_nbx of %zu bytes to rank %d (host %s) on rank %d", len, peer,
                  ux->peers[peer].host, ux->rank);
}

int tdm_ucx_flush(tdm_ucx_t *ux, int peer, tdm_ucx_done_fn_t done, void *arg) {
    int rc = check_peer(ux, peer, "tdm_ucx_flush");
    if (rc)
        return rc;
    ucp_ep_h ep = ux->peers[peer].ep;
    if (!ep)
        return TDM_UCX_DONE; /* nothing was ever sent to it */
    tdm_ucx_op_t *op = op_get(ux);
    if (!op)
        return fail(ux, TDM_UCX_ERR_NOMEM, "tdm_ucx_flush: out of memory (rank %d)", ux->rank);
    *op = (tdm_ucx_op_t){.ux = ux, .kind = OP_FLUSH, .peer = peer, .done = done, .arg = arg};
    ucp_request_param_t prm = op_param(op);
    TDM_COUNTER_ADD(&ux->pending, 1);
    ucs_status_ptr_t sp = ucp_ep_flush_nbx(ep, &prm);
    return OP_END(ux, sp, op, "ucp_ep_flush_nbx toward rank %d (host %s) on rank %d", peer,
                  ux->peers[peer].host, ux->rank);
}

/* ---- start-up and shutdown -------------------------------------------------------------- */

/* `word` is an element of the comma-separated `list`. */
static bool list_has(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

/* Will UCX open its tcp transport? A key that no transport reads makes UCX warn on every
 * rank, e.g. on an InfiniBand cluster with UCX_TLS=rc,sm,self or UCX_NET_DEVICES=mlx5_0:1. */
static bool tcp_expected(void) {
    const char *tls = getenv("UCX_TLS");
    if (tls && *tls) {
        bool neg = tls[0] == '^';
        if (neg ? list_has(tls + 1, "tcp") : !list_has(tls, "tcp") && !list_has(tls, "all"))
            return false;
    }
    const char *dev = getenv("UCX_NET_DEVICES");
    if (!dev || !*dev || list_has(dev, "all"))
        return true;
    /* a network interface among the devices (not an HCA's port such as mlx5_0:1) */
    char name[IF_NAMESIZE + 1];
    for (const char *p = dev; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        size_t n = strcspn(p, ",:");
        if (n > 0 && n < sizeof(name)) {
            memcpy(name, p, n);
            name[n] = '\0';
            if (if_nametoindex(name))
                return true;
        }
    }
    return false;
}

/* UCX's tcp transport sends in segments of 8 KiB by default: a message of a few of them
 * goes by its zero-copy path, which took 2.5 times as long at 32 KiB as one segment does
 * (docs/performance.md). TANDEM_UCX_TCP_SEG makes it one segment, unless the user set
 * the segment sizes (a transmit segment must fit the receiver's). */
static void tcp_segments(tdm_ucx_t *ux, ucp_config_t *config) {
    size_t seg = (size_t)TDM_PARAM_I(UCX_TCP_SEG);
    if (!seg || getenv("UCX_TCP_TX_SEG_SIZE") || getenv("UCX_TCP_RX_SEG_SIZE") ||
        getenv("UCX_TX_SEG_SIZE") || !tcp_expected())
        return;
    char v[32];
    snprintf(v, sizeof(v), "%zu", seg);
    /* the key without its transport's prefix: tcp is the transport that has it */
    ucs_status_t s = ucp_config_modify(config, "TX_SEG_SIZE", v);
    if (s != UCS_OK)
        tdm_warn(UCX, "rank %d: UCX refused a tcp segment of %zu bytes (%s): UCX's own kept",
                 ux->rank, seg, ucs_status_string(s));
}

int tdm_ucx_ep_print(tdm_ucx_t *ux, int peer, FILE *f) {
    ucp_ep_h ep;
    int rc = check_peer(ux, peer, "tdm_ucx_ep_print");
    if (rc || (rc = ep_get(ux, peer, &ep)))
        return rc;
    ucp_ep_print_info(ep, f);
    return 0;
}

int tdm_ucx_init(const tdm_ucx_config_t *cfg, tdm_ucx_t **ux_p) {
    tdm_params_init();
    char why[400];
    if (ucx_load(why, sizeof(why)) != 0)
        return fail(NULL, TDM_UCX_ERR_NO_TRANSPORT, "tdm_ucx_init on rank %d: %s",
                    cfg ? cfg->rank : -1, why);
    if (!cfg || cfg->nranks < 1 || cfg->rank < 0 || cfg->rank >= cfg->nranks || !cfg->recv)
        return fail(NULL, TDM_UCX_ERR_INVALID,
                    "tdm_ucx_init: bad configuration (rank %d of %d, receive callback %s)",
                    cfg ? cfg->rank : -1, cfg ? cfg->nranks : 0,
                    cfg && cfg->recv ? "set" : "missing");
    tdm_ucx_t *ux = calloc(1, sizeof(*ux));
    tdm_ucx_peer_t *peers = ux ? calloc((size_t)cfg->nranks, sizeof(*peers)) : NULL;
    if (!peers) {
        free(ux);
        return fail(NULL, TDM_UCX_ERR_NOMEM, "tdm_ucx_init: out of memory for %d peers (rank %d)",
                    cfg->nranks, cfg->rank);
    }
    ux->rank = cfg->rank;
    ux->nranks = cfg->nranks;
    ux->mt = cfg->multi_thread;
    ux->recv = cfg->recv;
    ux->recv_arg = cfg->recv_arg;
    ux->recv_data = cfg->recv_data;
    ux->peer_error = cfg->peer_error;
    ux->peer_error_arg = cfg->peer_error_arg;
    ux->peers = peers;
    for (int i = 0; i < cfg->nranks; i++) {
        peers[i].ux = ux;
        peers[i].rank = i;
        strcpy(peers[i].host, "?");
    }
    tdm_lock_init(&ux->lock);
    tdm_lock_init(&ux->progress_lock);
    pthread_mutex_init(&ux->ep_lock, NULL);
    pthread_mutex_init(&ux->unmapped_mu, NULL);
    ux->read_limit = ux->read_tokens = (int)TDM_PARAM_I(UCX_MAX_READS);
    ux->reg_cap = (int)TDM_PARAM_I(UCX_REG_CACHE);
    ux->am_max = (size_t)TDM_PARAM_I(UCX_AM_MAX);
    ux->peer_errors = TDM_PARAM_I(UCX_PEER_ERRORS) != 0;
    ux->rndv_am = !strcmp(TDM_PARAM_S(UCX_RNDV), "am");
    ux->stream_min = (size_t)TDM_PARAM_I(UCX_STREAM_MIN);
    ux->stream_chunk = (size_t)TDM_PARAM_I(UCX_STREAM_CHUNK);
    if (gethostname(ux->host, sizeof(ux->host)) != 0)
        strcpy(ux->host, "?");
    ux->host[sizeof(ux->host) - 1] = '\0';

    const char *tls = getenv("UCX_TLS");
    ucp_config_t *config;
    ucs_status_t s = ucp_config_read(NULL, NULL, &config);
    if (s != UCS_OK) {
        fail(ux, TDM_UCX_ERR_IO, "ucp_config_read failed on rank %d (host %s): %s", ux->rank,
             ux->host, ucs_status_string(s));
        goto err_free;
    }
    tcp_segments(ux, config);
    ucp_params_t prm = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features = UCP_FEATURE_AM | UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP,
        .mt_workers_shared = 0,
    };
    s = ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &prm, config, &ux->ctx);
    ucp_config_release(config);
    if (s != UCS_OK) {
        fail(ux, TDM_UCX_ERR_NO_TRANSPORT,
             "ucp_init failed on rank %d (host %s): %s (UCX_TLS=%s): no usable UCX transport",
             ux->rank, ux->host, ucs_status_string(s), tls ? tls : "unset");
        goto err_free;
    }
    ucp_worker_params_t wp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = ux->mt ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SINGLE,
    };
    s = ucp_worker_create(ux->ctx, &wp, &ux->worker);
    if (s != UCS_OK) {
        fail(ux, map_status(s) == TDM_UCX_ERR_IO ? TDM_UCX_ERR_NO_TRANSPORT : map_status(s),
             "ucp_worker_create failed on rank %d (host %s): %s (UCX_TLS=%s)", ux->rank, ux->host,
             ucs_status_string(s), tls ? tls : "unset");
        goto err_cleanup;
    }
    ucp_worker_attr_t wa = {.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE};
    s = ucp_worker_query(ux->worker, &wa);
    if (s == UCS_OK && ux->mt && wa.thread_mode != UCS_THREAD_MODE_MULTI) {
        fail(ux, TDM_UCX_ERR_UNSUPPORTED,
             "rank %d (host %s): this UCX gives no thread-safe worker (UCS_THREAD_MODE_MULTI) "
             "for MPI_THREAD_MULTIPLE",
             ux->rank, ux->host);
        goto err_worker;
    }
    ucp_address_t *addr;
    size_t addr_len;
    s = ucp_worker_get_address(ux->worker, &addr, &addr_len);
    if (s != UCS_OK) {
        fail(ux, TDM_UCX_ERR_NO_TRANSPORT,
             "ucp_worker_get_address failed on rank %d (host %s): %s (UCX_TLS=%s)", ux->rank,
             ux->host, ucs_status_string(s), tls ? tls : "unset");
        goto err_worker;
    }
    ux->blob_len = sizeof(tdm_ucx_blob_t) + addr_len;
    ux->blob = malloc(ux->blob_len);
    if (!ux->blob) {
        ucp_worker_release_address(ux->worker, addr);
        fail(ux, TDM_UCX_ERR_NOMEM, "tdm_ucx_init: out of memory (rank %d)", ux->rank);
        goto err_worker;
    }
    tdm_ucx_blob_t b = {
        .magic = TDM_UCX_BLOB_MAGIC, .rank = ux->rank, .addr_len = (uint32_t)addr_len};
    memcpy(b.host, ux->host, sizeof(b.host));
    memcpy(ux->blob, &b, sizeof(b));
    memcpy((char *)ux->blob + sizeof(b), addr, addr_len);
    ucp_worker_release_address(ux->worker, addr);

    ucp_am_handler_param_t hp = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                      UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG,
        .id = TDM_UCX_AM_ID,
        .flags = UCP_AM_FLAG_WHOLE_MSG,
        .cb = am_recv_cb,
        .arg = ux,
    };
    s = ucp_worker_set_am_recv_handler(ux->worker, &hp);
    if (s == UCS_OK)
        s = ucp_worker_get_efd(ux->worker, &ux->efd);
    if (s != UCS_OK) {
        fail(ux, map_status(s), "setting up the UCX worker failed on rank %d (host %s): %s",
             ux->rank, ux->host, ucs_status_string(s));
        goto err_blob;
    }
    tdm_debug(UCX, "rank %d: UCX %s worker on %s, %zu-byte address", ux->rank,
              ucp_get_version_string(), ux->host, addr_len);
    *ux_p = ux;
    return 0;

err_blob:
    free(ux->blob);
err_worker:
    ucp_worker_destroy(ux->worker);
err_cleanup:
    ucp_cleanup(ux->ctx);
err_free:;
    /* the message lives in ux; keep it in the log (already emitted) */
    int rc = TDM_UCX_ERR_NO_TRANSPORT;
    if (strstr(ux->err, "thread-safe"))
        rc = TDM_UCX_ERR_UNSUPPORTED;
    else if (strstr(ux->err, "out of memory"))
        rc = TDM_UCX_ERR_NOMEM;
    tdm_lock_fini(&ux->lock);
    tdm_lock_fini(&ux->progress_lock);
    pthread_mutex_destroy(&ux->ep_lock);
    pthread_mutex_destroy(&ux->unmapped_mu);
    free(ux->peers);
    free(ux);
    return rc;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* End every op of a list that UCX never held (queued reads, streams without their go). */
static void ops_end_all(tdm_ucx_op_t *op, int status) {
    for (tdm_ucx_op_t *next; op; op = next) {
        next = op->next;
        if (op->done)
            op->done(op->arg, status);
        free(op);
    }
}

int tdm_ucx_fini(tdm_ucx_t *ux) {
    int rc = 0;
    int n = 0;
    void **reqs = calloc((size_t)ux->nranks, sizeof(*reqs));
    int *who = calloc((size_t)ux->nranks, sizeof(*who));
    /* reads still waiting for a token will not be issued */
    UX_LOCK(ux);
    tdm_ucx_op_t *queued = ux->read_head;
    ux->read_head = ux->read_tail = NULL;
    __atomic_store_n(&ux->reads_waiting, 0, __ATOMIC_RELAXED);
    /* nor streams whose go did not come, or was not acted on */
    tdm_ucx_op_t *waiting = ux->stream_wait, *going = ux->stream_go;
    ux->stream_wait = ux->stream_go = NULL;
    UX_UNLOCK(ux);
    ops_end_all(queued, TDM_UCX_ERR_TIMEOUT);
    ops_end_all(waiting, TDM_UCX_ERR_TIMEOUT);
    ops_end_all(going, TDM_UCX_ERR_TIMEOUT);
    for (int i = 0; i < ux->nranks; i++) {
        tdm_ucx_peer_t *p = &ux->peers[i];
        if (!p->ep)
            continue;
        /* a failed peer's endpoint can only be closed by force; a live one is flushed
         * first, so what was sent reaches it */
        ucp_request_param_t prm = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
            .flags = p->failed ? UCP_EP_CLOSE_FLAG_FORCE : 0,
        };
        ucs_status_ptr_t sp = ucp_ep_close_nbx(p->ep, &prm);
        p->ep = NULL;
        if (UCS_PTR_IS_PTR(sp) && sp && reqs && who) {
            reqs[n] = sp;
            who[n++] = i;
        } else if (UCS_PTR_IS_ERR(sp)) {
            tdm_debug(UCX, "rank %d: closing the endpoint to rank %d: %s", ux->rank, i,
                      ucs_status_string(UCS_PTR_STATUS(sp)));
        }
    }
    double deadline = now_ms() + (double)TDM_PARAM_I(UCX_CLOSE_TIMEOUT_MS);
    for (;;) {
        int open = 0;
        for (int k = 0; k < n; k++) {
            if (!reqs[k])
                continue;
            ucs_status_t s = ucp_request_check_status(reqs[k]);
            if (s == UCS_INPROGRESS) {
                open++;
                continue;
            }
            ucp_request_free(reqs[k]);
            reqs[k] = NULL;
        }
        /* a failed peer's operations end with errors from progress: run it until they have */
        long ops = TDM_COUNTER_READ(&ux->pending);
        if (!open && ops == 0)
            break;
        if (now_ms() > deadline) {
            if (ops)
                rc = fail(ux, TDM_UCX_ERR_TIMEOUT,
                          "rank %d (host %s): %ld UCX operations did not complete within "
                          "TANDEM_UCX_CLOSE_TIMEOUT_MS=%lld ms of shutdown",
                          ux->rank, ux->host, ops, (long long)TDM_PARAM_I(UCX_CLOSE_TIMEOUT_MS));
            for (int k = 0; k < n; k++) {
                if (!reqs[k])
                    continue;
                rc = fail(ux, TDM_UCX_ERR_TIMEOUT,
                          "rank %d (host %s): closing the connection to rank %d (host %s) did "
                          "not finish within TANDEM_UCX_CLOSE_TIMEOUT_MS=%lld ms; giving up on it",
                          ux->rank, ux->host, who[k], ux->peers[who[k]].host,
                          (long long)TDM_PARAM_I(UCX_CLOSE_TIMEOUT_MS));
                ucp_request_free(reqs[k]);
                reqs[k] = NULL;
            }
            break;
        }
        tdm_ucx_progress(ux);
        if (tdm_ucx_arm(ux) == 0) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL); /* the efd would do; a short nap keeps this simple and bounded */
        }
    }
    free(reqs);
    free(who);
    for (int i = 0; i < ux->nranks; i++) {
        tdm_ucx_peer_t *p = &ux->peers[i];
        while (p->rx_head) {
            tdm_ucx_rx_t *rx = p->rx_head;
            p->rx_head = rx->next;
            if (rx->state != RX_FETCHING)
                rx_free(ux, rx);
        }
        free(p->addr);
    }
    if (ux->reg_hooked) /* returns once no callback runs */
        ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, reg_unmapped_cb, ux);
    while (ux->reg_head) {
        tdm_ucx_mem_t *m = ux->reg_head;
        if (m->refs)
            tdm_warn(UCX, "rank %d: registration %p+%zu still in use at shutdown", ux->rank,
                     m->base, m->len);
        reg_unlink(ux, m);
        reg_destroy(ux, m);
    }
    ucp_worker_destroy(ux->worker);
    ucp_cleanup(ux->ctx);
    while (ux->op_free) {
        tdm_ucx_op_t *op = ux->op_free;
        ux->op_free = op->next;
        free(op);
    }
    free(ux->blob);
    free(ux->peers);
    tdm_lock_fini(&ux->lock);
    tdm_lock_fini(&ux->progress_lock);
    pthread_mutex_destroy(&ux->ep_lock);
    pthread_mutex_destroy(&ux->unmapped_mu);
    free(ux);
    return rc;
}

#else /* !TDM_HAVE_UCX: every call says the library was built without it */

struct tdm_ucx {
    int unused;
};

bool tdm_ucx_built(void) {
    return false;
}

static int unsupported(const char *call) {
    tdm_error(UCX, "%s: this Tandem was built without UCX (libucx-dev, TANDEM_UCX=AUTO|ON)", call);
    return TDM_UCX_ERR_UNSUPPORTED;
}

int tdm_ucx_init(const tdm_ucx_config_t *cfg, tdm_ucx_t **ux_p) {
    return unsupported("tdm_ucx_init");
}
int tdm_ucx_fini(tdm_ucx_t *ux) {
    return unsupported("tdm_ucx_fini");
}
int tdm_ucx_address(tdm_ucx_t *ux, const void **blob_p, size_t *len_p) {
    return unsupported("tdm_ucx_address");
}
int tdm_ucx_peer_set(tdm_ucx_t *ux, int peer, const void *blob, size_t len) {
    return unsupported("tdm_ucx_peer_set");
}
int tdm_ucx_connect(tdm_ucx_t *ux, int peer) {
    return unsupported("tdm_ucx_connect");
}
int tdm_ucx_ep_print(tdm_ucx_t *ux, int peer, FILE *f) {
    return unsupported("tdm_ucx_ep_print");
}
const char *tdm_ucx_peer_host(tdm_ucx_t *ux, int peer) {
    return "?";
}
int tdm_ucx_send(tdm_ucx_t *ux, int peer, const void *hdr, size_t hdr_len, const void *data,
                 size_t len, tdm_ucx_done_fn_t done, void *arg) {
    return unsupported("tdm_ucx_send");
}
int tdm_ucx_send_framed(tdm_ucx_t *ux, int peer, void *pkt, size_t len, tdm_ucx_done_fn_t done,
                        void *arg) {
    return unsupported("tdm_ucx_send_framed");
}
int tdm_ucx_send_rndv(tdm_ucx_t *ux, int peer, const void *hdr, size_t hdr_len, const void *data,
                      size_t len, tdm_ucx_done_fn_t done, void *arg) {
    return unsupported("tdm_ucx_send_rndv");
}
int tdm_ucx_fetch(tdm_ucx_t *ux, tdm_ucx_data_t *data, void *buf, tdm_ucx_done_fn_t done,
                  void *arg) {
    return unsupported("tdm_ucx_fetch");
}
void tdm_ucx_data_drop(tdm_ucx_t *ux, tdm_ucx_data_t *data) {}
int tdm_ucx_progress(tdm_ucx_t *ux) {
    return 0;
}
int tdm_ucx_efd(tdm_ucx_t *ux) {
    return -1;
}
int tdm_ucx_arm(tdm_ucx_t *ux) {
    return unsupported("tdm_ucx_arm");
}
int tdm_ucx_mem_reg(tdm_ucx_t *ux, void *base, size_t len, tdm_ucx_mem_t **mem_p) {
    return unsupported("tdm_ucx_mem_reg");
}
void tdm_ucx_mem_dereg(tdm_ucx_t *ux, tdm_ucx_mem_t *mem) {}
void tdm_ucx_mem_rkey(const tdm_ucx_mem_t *mem, const void **rkey_p, size_t *len_p) {
    *rkey_p = NULL;
    *len_p = 0;
}
int tdm_ucx_rkey_unpack(tdm_ucx_t *ux, int peer, const void *packed, size_t len,
                        tdm_ucx_rkey_t **rkey_p) {
    return unsupported("tdm_ucx_rkey_unpack");
}
void tdm_ucx_rkey_release(tdm_ucx_t *ux, tdm_ucx_rkey_t *rkey) {}
int tdm_ucx_get(tdm_ucx_t *ux, int peer, void *local, size_t len, uint64_t remote,
                tdm_ucx_rkey_t *rkey, tdm_ucx_done_fn_t done, void *arg) {
    return unsupported("tdm_ucx_get");
}
int tdm_ucx_put(tdm_ucx_t *ux, int peer, const void *local, size_t len, uint64_t remote,
                tdm_ucx_rkey_t *rkey, tdm_ucx_done_fn_t done, void *arg) {
    return unsupported("tdm_ucx_put");
}
int tdm_ucx_flush(tdm_ucx_t *ux, int peer, tdm_ucx_done_fn_t done, void *arg) {
    return unsupported("tdm_ucx_flush");
}
const char *tdm_ucx_errmsg(tdm_ucx_t *ux) {
    return "this Tandem was built without UCX";
}
void tdm_ucx_stats(tdm_ucx_t *ux, tdm_ucx_stats_t *st_p) {
    memset(st_p, 0, sizeof(*st_p));
}

#endif
