/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UCX transport (src/net/ucx.h) between two processes that exchange their
 * addresses through pipes: packets of 0 B, 8 B, 64 KiB and 4 MiB both ways with
 * every byte and the order checked; get and put of 1 MiB registered buffers with
 * packed keys, the outstanding-read limit counted; a peer killed mid-job seen as
 * an error, not a hang (a stream waiting for its go too), and a shutdown that
 * returns; the same get, put and flush through net/rdma.h (the calls the
 * rendezvous uses), its registration cache and
 * counters, and its refusal before a transport is bound. Over UCX's default choice
 * (shared memory between these two) and over tcp on loopback.
 *
 *   net_ucx                      every case
 *   net_ucx child RANK RFD WFD   one side (used by the netns test: argv[5] = "netns")
 * Exits 77 when Tandem was built without UCX.
 */
#include "base/params.h"
#include "net/net.h"
#include "net/rdma.h"
#include "net/ucx.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(_c)                                                                                  \
    do {                                                                                           \
        if (!(_c)) {                                                                               \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", me.rank, __FILE__, __LINE__,    \
                    #_c);                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

enum { T_DATA = 1, T_KEY_SRC, T_KEY_DST, T_FIN, T_BYE, T_READY, T_KEY_NET };

typedef struct msg_hdr {
    uint32_t type;
    uint32_t seq;
    uint64_t len;
    uint64_t addr;
} msg_hdr_t;

#define ROUNDS 3
#define NSIZES 4
static const size_t sizes[NSIZES] = {0, 8, 64 << 10, 4 << 20};
#define NMSG (ROUNDS * NSIZES)
#define RMA_LEN (1 << 20)
#define GET_CHUNK (16 << 10)
#define MAX_READS 4

static struct {
    int rank;
    tdm_ucx_t *ux;
    uint32_t expect_seq;
    int received;
    int sends_pending;
    int ops_pending;
    int op_errors;
    unsigned char *key[3]; /* the peer's packed keys: its source and destination buffers, and
                              the one it made through rdma.h */
    size_t key_len[3];
    uint64_t key_addr[3];
    int fin, bye, ready;
    int peer_failed;
    char peer_msg[512];
} me;

static unsigned char pattern(uint32_t seq, size_t i) {
    return (unsigned char)(seq * 131u + i * 7u + (i >> 9) + 1u);
}

static void recv_cb(void *arg, int peer, const void *hdr, size_t hdr_len, const void *data,
                    size_t len) {
    msg_hdr_t h;
    CHECK(peer == 1 - me.rank);
    if (hdr_len == 0 && len >= sizeof(h)) { /* a framed packet: the header leads the data */
        hdr = data;
        hdr_len = sizeof(h);
        data = (const unsigned char *)data + sizeof(h);
        len -= sizeof(h);
    }
    CHECK(hdr_len == sizeof(h));
    if (hdr_len != sizeof(h))
        return;
    memcpy(&h, hdr, sizeof(h));
    switch (h.type) {
    case T_DATA: {
        CHECK(h.seq == me.expect_seq);
        me.expect_seq = h.seq + 1;
        CHECK(h.len == len);
        const unsigned char *d = data;
        size_t bad = 0;
        for (size_t i = 0; i < len; i++)
            bad += d[i] != pattern(h.seq + 1000u * (uint32_t)peer, i);
        if (bad)
            fprintf(stderr, "[rank %d] message %u of %zu bytes: %zu bytes wrong\n", me.rank, h.seq,
                    len, bad);
        CHECK(bad == 0);
        me.received++;
        break;
    }
    case T_KEY_SRC:
    case T_KEY_DST:
    case T_KEY_NET: {
        int k = h.type == T_KEY_NET ? 2 : h.type == T_KEY_DST;
        me.key[k] = malloc(len);
        memcpy(me.key[k], data, len);
        me.key_len[k] = len;
        me.key_addr[k] = h.addr;
        break;
    }
    case T_FIN:
        me.fin++;
        break;
    case T_BYE:
        me.bye++;
        break;
    case T_READY:
        me.ready++;
        break;
    default:
        CHECK(!"unknown packet type");
    }
}

/* Payloads handed over by recv_data (tdm_ucx_send_rndv), in arrival order. */
#define FETCH_N 6
static struct {
    tdm_ucx_data_t *d[FETCH_N];
    size_t len[FETCH_N];
    uint32_t seq[FETCH_N];
    int n;
} held;

static void recv_data_cb(void *arg, int peer, const void *hdr, size_t hdr_len, tdm_ucx_data_t *d,
                         size_t len) {
    msg_hdr_t h;
    CHECK(peer == 1 - me.rank);
    CHECK(hdr_len == sizeof(h) && held.n < FETCH_N);
    if (hdr_len != sizeof(h) || held.n >= FETCH_N)
        return;
    memcpy(&h, hdr, sizeof(h));
    CHECK(h.type == T_DATA);
    CHECK(h.seq == me.expect_seq); /* in order among the plain packets */
    me.expect_seq = h.seq + 1;
    CHECK(h.len == len);
    held.d[held.n] = d;
    held.len[held.n] = len;
    held.seq[held.n] = h.seq;
    held.n++;
    me.received++;
}

static void send_done(void *arg, int status) {
    CHECK(status == 0);
    free(arg);
    me.sends_pending--;
}

/* toward a peer that dies: an error is what is expected */
static void kill_send_done(void *arg, int status) {
    free(arg);
    me.sends_pending--;
}

/* the rendezvous payload the dying peer never fetched: it must end, with an error */
static int kill_rndv_status = 1;
static void kill_rndv_done(void *arg, int status) {
    kill_rndv_status = status;
    kill_send_done(arg, status);
}

static void op_done(void *arg, int status) {
    if (status != 0)
        me.op_errors++;
    me.ops_pending--;
}

static void peer_error(void *arg, int peer, const char *msg) {
    me.peer_failed++;
    snprintf(me.peer_msg, sizeof(me.peer_msg), "%s", msg);
}

/* Progress until *flag reaches want; a hang is caught by the alarm set in main. */
static void wait_for(int *flag, int want) {
    while (*flag < want)
        tdm_ucx_progress(me.ux);
}

static void wait_ops(void) {
    while (me.ops_pending > 0 || me.sends_pending > 0)
        tdm_ucx_progress(me.ux);
}

static void send_msg(uint32_t type, uint32_t seq, uint64_t addr, void *data, size_t len,
                     bool owned) {
    msg_hdr_t h = {.type = type, .seq = seq, .len = len, .addr = addr};
    me.sends_pending++;
    int rc =
        tdm_ucx_send(me.ux, 1 - me.rank, &h, sizeof(h), data, len, send_done, owned ? data : NULL);
    CHECK(rc == TDM_UCX_DONE || rc == TDM_UCX_PENDING);
    if (rc != TDM_UCX_PENDING) {
        me.sends_pending--;
        if (owned)
            free(data);
    }
}

static int write_all(int fd, const void *p, size_t n) {
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, (const char *)p + off, n - off);
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n) {
    for (size_t off = 0; off < n;) {
        ssize_t r = read(fd, (char *)p + off, n - off);
        if (r <= 0)
            return -1;
        off += (size_t)r;
    }
    return 0;
}

/* Bring up the transport and learn the peer's address through the pipes. */
static int start(int rank, int rfd, int wfd) {
    me.rank = rank;
    tdm_ucx_config_t cfg = {.rank = rank,
                            .nranks = 2,
                            .recv = recv_cb,
                            .recv_data = recv_data_cb,
                            .peer_error = peer_error};
    int rc = tdm_ucx_init(&cfg, &me.ux);
    if (rc) {
        fprintf(stderr, "[rank %d] tdm_ucx_init failed: %d\n", rank, rc);
        return -1;
    }
    const void *blob;
    size_t len, plen;
    tdm_ucx_address(me.ux, &blob, &len);
    if (write_all(wfd, &len, sizeof(len)) || write_all(wfd, blob, len) ||
        read_all(rfd, &plen, sizeof(plen))) {
        fprintf(stderr, "[rank %d] address exchange failed\n", rank);
        return -1;
    }
    void *peer = malloc(plen);
    if (!peer || read_all(rfd, peer, plen)) {
        fprintf(stderr, "[rank %d] address exchange failed\n", rank);
        return -1;
    }
    /* a blob that is not the peer's is refused, and so is a truncated one */
    CHECK(tdm_ucx_peer_set(me.ux, rank, peer, plen) == TDM_UCX_ERR_INVALID);
    CHECK(tdm_ucx_peer_set(me.ux, 1 - rank, peer, plen / 2) == TDM_UCX_ERR_INVALID);
    rc = tdm_ucx_peer_set(me.ux, 1 - rank, peer, plen);
    free(peer);
    CHECK(rc == 0);
    return rc ? -1 : 0;
}

/* net/rdma.h over the same transport: refused unbound; bound, a registration of the
 * whole source (a cache hit: the same range is registered above), a get of the peer's
 * second half and a put into the peer's first half, flushed before the FIN. */
#define NET_HALF (RMA_LEN / 2)
static void run_rdma_calls(unsigned char *src) {
    int peer = 1 - me.rank;
    tdm_net_mem_t *m = NULL;
    unsigned char *got = calloc(1, RMA_LEN);
    tdm_net_rdma_bind(NULL);
    CHECK(!tdm_net_rdma_usable(peer));
    CHECK(tdm_net_rdma_reg(src, RMA_LEN, &m) == TDM_NET_RDMA_ERR_NONE && m == NULL);
    CHECK(tdm_net_rdma_get(peer, got, 8, 0, NULL, op_done, NULL) == TDM_NET_RDMA_ERR_NONE);
    CHECK(tdm_net_rdma_flush(peer, op_done, NULL) == TDM_NET_RDMA_ERR_NONE);
    CHECK(strstr(tdm_net_rdma_errmsg(), "no transport") != NULL);

    tdm_net_rdma_bind(me.ux);
    tdm_net_peer_t peers[2] = {{.tp = TDM_NET_REMOTE, .caps = TDM_NET_CAP_RDMA, .node = 0},
                               {.tp = TDM_NET_REMOTE, .caps = TDM_NET_CAP_RDMA, .node = 1}};
    peers[me.rank].tp = TDM_NET_SHM;
    peers[me.rank].caps = 0;
    tdm_net.rank = me.rank;
    tdm_net.size = 2;
    tdm_net.node = me.rank;
    tdm_net.nodes = 2;
    tdm_net.peer = peers;
    CHECK(tdm_net_rdma_usable(peer));
    CHECK(!tdm_net_rdma_usable(me.rank));
    tdm_net_rdma_stats_t s0, s1;
    tdm_net_rdma_stats(&s0);
    CHECK(tdm_net_rdma_reg(src, RMA_LEN, &m) == 0 && m != NULL);
    tdm_net_rdma_stats(&s1);
    CHECK(s1.reg_hits == s0.reg_hits + 1);
    const void *k;
    size_t klen;
    tdm_net_rdma_key(m, &k, &klen);
    CHECK(klen > 0);
    send_msg(T_KEY_NET, 0, (uint64_t)(uintptr_t)src, (void *)k, klen, false);
    wait_ops();
    while (!me.key[2])
        tdm_ucx_progress(me.ux);
    tdm_net_rkey_t *rk = NULL;
    CHECK(tdm_net_rdma_unpack(peer, me.key[2], me.key_len[2], &rk) == 0 && rk != NULL);

    me.ops_pending++;
    int rc = tdm_net_rdma_get(peer, got + NET_HALF, NET_HALF, me.key_addr[2] + NET_HALF, rk,
                              op_done, NULL);
    CHECK(rc == TDM_NET_RDMA_DONE || rc == TDM_NET_RDMA_PENDING);
    if (rc != TDM_NET_RDMA_PENDING)
        me.ops_pending--;
    wait_ops();
    CHECK(me.op_errors == 0);
    size_t bad = 0;
    for (size_t i = NET_HALF; i < RMA_LEN; i++)
        bad += got[i] != pattern(7u + (uint32_t)peer, i);
    CHECK(bad == 0);

    /* both sides' puts land in the other's source after the other read it: wait for
     * the peer's FIN of its get first */
    send_msg(T_FIN, 1, 0, NULL, 0, false);
    wait_for(&me.fin, 2);
    for (size_t i = 0; i < NET_HALF; i++)
        got[i] = (unsigned char)~pattern(7u + (uint32_t)me.rank, i);
    me.ops_pending++;
    rc = tdm_net_rdma_put(peer, got, NET_HALF, me.key_addr[2], rk, op_done, NULL);
    CHECK(rc == TDM_NET_RDMA_DONE || rc == TDM_NET_RDMA_PENDING);
    if (rc != TDM_NET_RDMA_PENDING)
        me.ops_pending--;
    me.ops_pending++;
    rc = tdm_net_rdma_flush(peer, op_done, NULL);
    CHECK(rc == TDM_NET_RDMA_DONE || rc == TDM_NET_RDMA_PENDING);
    if (rc != TDM_NET_RDMA_PENDING)
        me.ops_pending--;
    wait_ops();
    CHECK(me.op_errors == 0);
    send_msg(T_FIN, 2, 0, NULL, 0, false);
    wait_for(&me.fin, 3);
    bad = 0;
    for (size_t i = 0; i < NET_HALF; i++)
        bad += src[i] != (unsigned char)~pattern(7u + (uint32_t)peer, i);
    CHECK(bad == 0);
    tdm_net_rdma_stats(&s1);
    CHECK(s1.reads >= s0.reads + 1 && s1.writes >= s0.writes + 1);

    tdm_net_rdma_release(rk);
    tdm_net_rdma_dereg(m);
    tdm_net_rdma_bind(NULL);
    tdm_net.peer = NULL;
    free(got);
}

/* Packets whose payload the receiver fetches (tdm_ucx_send_rndv) between plain ones: they
 * arrive in order; fetched in reverse order of arrival, the first dropped unread, and every
 * sender's callback runs (a dropped payload completes its send too). */
static void run_fetch(void) {
    static const size_t fetch_sizes[3] = {8, 64 << 10, 4 << 20};
    int peer = 1 - me.rank;
    /* numbered after the first NMSG; the peer's may already be arriving */
    uint32_t seq0 = NMSG;
    for (int i = 0; i < FETCH_N; i++) {
        uint32_t seq = seq0 + (uint32_t)i;
        size_t len = fetch_sizes[i % 3];
        unsigned char *buf = malloc(len);
        for (size_t j = 0; j < len; j++)
            buf[j] = pattern(seq + 1000u * (uint32_t)me.rank, j);
        msg_hdr_t h = {.type = T_DATA, .seq = seq, .len = len};
        me.sends_pending++;
        /* odd ones by rendezvous; the peer drops the first of them (i == 1) */
        int rc = (i & 1) ? tdm_ucx_send_rndv(me.ux, peer, &h, sizeof(h), buf, len,
                                             i == 1 ? kill_send_done : send_done, buf)
                         : tdm_ucx_send(me.ux, peer, &h, sizeof(h), buf, len, send_done, buf);
        CHECK(rc == TDM_UCX_DONE || rc == TDM_UCX_PENDING);
        if (rc != TDM_UCX_PENDING) {
            me.sends_pending--;
            free(buf);
        }
    }
    wait_for(&me.received, NMSG + FETCH_N);
    CHECK(held.n == FETCH_N / 2);
    for (int j = held.n - 1; j >= 1; j--) {
        unsigned char *got = malloc(held.len[j]);
        me.ops_pending++;
        int rc = tdm_ucx_fetch(me.ux, held.d[j], got, op_done, NULL);
        CHECK(rc == TDM_UCX_DONE || rc == TDM_UCX_PENDING);
        if (rc != TDM_UCX_PENDING)
            me.ops_pending--;
        while (me.ops_pending > 0)
            tdm_ucx_progress(me.ux);
        size_t bad = 0;
        for (size_t i = 0; i < held.len[j]; i++)
            bad += got[i] != pattern(held.seq[j] + 1000u * (uint32_t)peer, i);
        CHECK(bad == 0);
        free(got);
    }
    if (held.n > 0)
        tdm_ucx_data_drop(me.ux, held.d[0]);
    wait_ops();
    CHECK(me.op_errors == 0);
    tdm_ucx_stats_t st;
    tdm_ucx_stats(me.ux, &st);
    CHECK(st.rndv_sent == FETCH_N / 2);
    CHECK(st.fetches >= 1); /* the 4 MiB one at least waited at its sender */
    /* TANDEM_UCX_RNDV=am: one UCX message each (its rendezvous), the dropped one fetched
     * too, into a scratch buffer; by default an announcement and a tagged send */
    const char *form = getenv("TANDEM_UCX_RNDV");
    bool am = form && !strcmp(form, "am");
    CHECK(st.fetches_am == (am ? (uint64_t)FETCH_N / 2 : 0u));
    /* over tcp (every lane), payloads from TANDEM_UCX_STREAM_MIN bytes go as streams;
     * the dropped one's go tells its sender to send nothing */
    const char *tls = getenv("UCX_TLS");
    tdm_params_init();
    uint64_t min = (uint64_t)TDM_PARAM_I(UCX_STREAM_MIN); /* 0: never */
    uint64_t streams = 0, streamed_in = 0;
    for (int i = 1; i < FETCH_N; i += 2)
        if (!am && tls && !strcmp(tls, "tcp") && min && fetch_sizes[i % 3] >= min) {
            streams++;
            streamed_in += i != 1;
        }
    CHECK(st.streams == streams);
    CHECK(st.streams_fetched == streamed_in);
}

/* A data packet by tdm_ucx_send_framed: header and payload in one buffer, behind the
 * frame's room (sizes past the framed limit take tdm_ucx_send's path, rendezvous too). */
static void send_framed(uint32_t seq, size_t len) {
    msg_hdr_t h = {.type = T_DATA, .seq = seq, .len = len};
    unsigned char *buf = malloc(TDM_UCX_FRAME + sizeof(h) + len);
    unsigned char *pkt = buf + TDM_UCX_FRAME;
    memcpy(pkt, &h, sizeof(h));
    for (size_t i = 0; i < len; i++)
        pkt[sizeof(h) + i] = pattern(seq + 1000u * (uint32_t)me.rank, i);
    me.sends_pending++;
    int rc = tdm_ucx_send_framed(me.ux, 1 - me.rank, pkt, sizeof(h) + len, send_done, buf);
    CHECK(rc == TDM_UCX_DONE || rc == TDM_UCX_PENDING);
    if (rc != TDM_UCX_PENDING) {
        me.sends_pending--;
        free(buf);
    }
}

static void run_traffic(void) {
    int peer = 1 - me.rank;
    /* bad arguments are refused with an error */
    unsigned char big[TDM_UCX_HDR_MAX + 1] = {0};
    CHECK(tdm_ucx_send(me.ux, 2, NULL, 0, NULL, 0, NULL, NULL) == TDM_UCX_ERR_INVALID);
    CHECK(strstr(tdm_ucx_errmsg(me.ux), "peer 2") != NULL);
    CHECK(tdm_ucx_send(me.ux, peer, big, sizeof(big), NULL, 0, NULL, NULL) == TDM_UCX_ERR_INVALID);

    /* packets of every size, interleaved, both ways at once; every other round framed */
    for (uint32_t seq = 0; seq < NMSG; seq++) {
        size_t len = sizes[seq % NSIZES];
        if ((seq / NSIZES) & 1) {
            send_framed(seq, len);
            continue;
        }
        unsigned char *buf = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++)
            buf[i] = pattern(seq + 1000u * (uint32_t)me.rank, i);
        send_msg(T_DATA, seq, 0, buf, len, true);
    }
    wait_for(&me.received, NMSG);
    wait_ops();
    CHECK(me.expect_seq == NMSG);
    tdm_ucx_stats_t st;
    tdm_ucx_stats(me.ux, &st);
    CHECK(st.am_recv >= NMSG);
    CHECK(st.am_recv_rndv >= 1 || getenv("UCX_TLS") == NULL); /* 4 MiB over tcp: rendezvous */

    /* registered buffers: src holds this rank's pattern, dst receives the peer's put */
    unsigned char *src = malloc(RMA_LEN), *dst = calloc(1, RMA_LEN), *got = calloc(1, RMA_LEN);
    for (size_t i = 0; i < RMA_LEN; i++)
        src[i] = pattern(7u + (uint32_t)me.rank, i);
    tdm_ucx_mem_t *msrc, *mdst, *again;
    CHECK(tdm_ucx_mem_reg(me.ux, src, RMA_LEN, &msrc) == 0);
    CHECK(tdm_ucx_mem_reg(me.ux, dst, RMA_LEN, &mdst) == 0);
    CHECK(tdm_ucx_mem_reg(me.ux, src, RMA_LEN, &again) == 0);
    CHECK(again == msrc); /* the cache */
    tdm_ucx_mem_dereg(me.ux, again);
    const void *k;
    size_t klen;
    tdm_ucx_mem_rkey(msrc, &k, &klen);
    send_msg(T_KEY_SRC, 0, (uint64_t)(uintptr_t)src, (void *)k, klen, false);
    tdm_ucx_mem_rkey(mdst, &k, &klen);
    send_msg(T_KEY_DST, 0, (uint64_t)(uintptr_t)dst, (void *)k, klen, false);
    wait_ops();
    while (!me.key[0] || !me.key[1])
        tdm_ucx_progress(me.ux);
    tdm_ucx_rkey_t *rsrc, *rdst;
    CHECK(tdm_ucx_rkey_unpack(me.ux, peer, me.key[0], me.key_len[0], &rsrc) == 0);
    CHECK(tdm_ucx_rkey_unpack(me.ux, peer, me.key[1], me.key_len[1], &rdst) == 0);

    /* gets: many more than the limit at once; the rest wait in the FIFO */
    tdm_ucx_stats(me.ux, &st);
    uint64_t reads0 = st.reads;
    for (size_t off = 0; off < RMA_LEN; off += GET_CHUNK) {
        me.ops_pending++;
        int rc = tdm_ucx_get(me.ux, peer, got + off, GET_CHUNK, me.key_addr[0] + off, rsrc, op_done,
                             NULL);
        CHECK(rc == TDM_UCX_DONE || rc == TDM_UCX_PENDING);
        if (rc != TDM_UCX_PENDING)
            me.ops_pending--;
    }
    wait_ops();
    CHECK(me.op_errors == 0);
    size_t bad = 0;
    for (size_t i = 0; i < RMA_LEN; i++)
        bad += got[i] != pattern(7u + (uint32_t)peer, i);
    CHECK(bad == 0);
    tdm_ucx_stats(me.ux, &st);
    CHECK(st.reads - reads0 == RMA_LEN / GET_CHUNK);
    CHECK(st.reads_max_outstanding >= 1 && st.reads_max_outstanding <= MAX_READS);
    CHECK(st.reads_queued >= RMA_LEN / GET_CHUNK - MAX_READS);

    /* put the whole source into the peer's destination, flush, then tell it */
    for (size_t off = 0; off < RMA_LEN; off += RMA_LEN / 4) {
        me.ops_pending++;
        int rc = tdm_ucx_put(me.ux, peer, src + off, RMA_LEN / 4, me.key_addr[1] + off, rdst,
                             op_done, NULL);
        CHECK(rc == TDM_UCX_DONE || rc == TDM_UCX_PENDING);
        if (rc != TDM_UCX_PENDING)
            me.ops_pending--;
    }
    me.ops_pending++;
    int rc = tdm_ucx_flush(me.ux, peer, op_done, NULL);
    if (rc != TDM_UCX_PENDING) {
        CHECK(rc == TDM_UCX_DONE);
        me.ops_pending--;
    }
    wait_ops();
    CHECK(me.op_errors == 0);
    send_msg(T_FIN, 0, 0, NULL, 0, false);
    wait_for(&me.fin, 1);
    bad = 0;
    for (size_t i = 0; i < RMA_LEN; i++)
        bad += dst[i] != pattern(7u + (uint32_t)peer, i);
    CHECK(bad == 0);

    run_rdma_calls(src);
    run_fetch();

    /* the peer reads our source no more once both said goodbye */
    send_msg(T_BYE, 0, 0, NULL, 0, false);
    wait_for(&me.bye, 1);
    wait_ops();
    tdm_ucx_rkey_release(me.ux, rsrc);
    tdm_ucx_rkey_release(me.ux, rdst);
    tdm_ucx_mem_dereg(me.ux, msrc);
    tdm_ucx_mem_dereg(me.ux, mdst);
    CHECK(tdm_ucx_fini(me.ux) == 0);
    free(src);
    free(dst);
    free(got);
}

/* Rank 1 dies with traffic in flight; rank 0 must see it as an error. */
static void run_kill(void) {
    if (me.rank == 1) {
        send_msg(T_READY, 0, 0, NULL, 0, false);
        wait_ops();
        wait_for(&me.received, 1);
        raise(SIGKILL);
    }
    wait_for(&me.ready, 1);
    /* first a 1 MiB payload the peer holds and never fetches: over tcp a stream, whose
     * sender waits for a go that never comes */
    size_t rlen = 1 << 20;
    msg_hdr_t rh = {.type = T_DATA, .seq = 0, .len = rlen};
    unsigned char *rbuf = calloc(1, rlen);
    me.sends_pending++;
    if (tdm_ucx_send_rndv(me.ux, 1, &rh, sizeof(rh), rbuf, rlen, kill_rndv_done, rbuf) !=
        TDM_UCX_PENDING) {
        me.sends_pending--;
        free(rbuf);
        kill_rndv_status = -1;
    }
    tdm_ucx_stats_t st;
    tdm_ucx_stats(me.ux, &st);
    const char *tls = getenv("UCX_TLS");
    /* (UCX's own choice may be tcp alone too: its shared memory has no peer error mode) */
    CHECK(!(tls && !strcmp(tls, "tcp")) || st.streams == 1);
    size_t len = 64 << 10;
    int rc = 0;
    uint32_t seq = 1;
    while (!me.peer_failed && rc >= 0) {
        /* a bounded number in flight: the peer stops reading */
        if (me.sends_pending < 16) {
            msg_hdr_t h = {.type = T_DATA, .seq = seq, .len = len};
            unsigned char *buf = malloc(len);
            for (size_t i = 0; i < len; i++)
                buf[i] = pattern(seq, i);
            me.sends_pending++;
            rc = tdm_ucx_send(me.ux, 1, &h, sizeof(h), buf, len, kill_send_done, buf);
            if (rc != TDM_UCX_PENDING) {
                me.sends_pending--;
                free(buf);
            }
            seq++;
        }
        tdm_ucx_progress(me.ux);
    }
    CHECK(me.peer_failed == 1 || rc == TDM_UCX_ERR_PEER);
    const char *msg = me.peer_failed ? me.peer_msg : tdm_ucx_errmsg(me.ux);
    CHECK(strstr(msg, "rank 1") != NULL);
    /* later operations fail at once, naming the peer */
    if (me.peer_failed) {
        CHECK(tdm_ucx_send(me.ux, 1, NULL, 0, NULL, 0, NULL, NULL) == TDM_UCX_ERR_PEER);
        CHECK(strstr(tdm_ucx_errmsg(me.ux), "rank 1 (host ") != NULL);
    }
    /* sends still pending complete (with an error) by the shutdown, which returns */
    tdm_ucx_fini(me.ux);
    CHECK(me.sends_pending == 0);
    CHECK(kill_rndv_status < 0);
}

static int child(int rank, int rfd, int wfd, int kill_case) {
    /* a hang is a failure, not a stuck test: far above the seconds this takes loaded */
    alarm(100);
    setenv("TANDEM_UCX_MAX_READS", "4", 1);
    if (start(rank, rfd, wfd))
        return 1;
    if (kill_case) {
        run_kill();
    } else {
        run_traffic();
    }
    return failures ? 1 : 0;
}

/* One pair of processes; returns 0 when both ended as the case expects. */
static int run_pair(const char *what, const char *tls, int kill_case) {
    int p01[2], p10[2];
    if (pipe(p01) || pipe(p10)) {
        perror("pipe");
        return 1;
    }
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            if (tls) {
                setenv("UCX_TLS", tls, 1);
                setenv("UCX_NET_DEVICES", "lo", 1);
            } else {
                unsetenv("UCX_TLS");
                /* UCX's own choice of transports, but not of network devices: the
                 * namespace cluster's bridge, which other tests bring up and take down
                 * meanwhile, would be one */
                setenv("UCX_NET_DEVICES", "lo", 1);
            }
            /* a killed peer is noticed by UCX's keepalive on transports with no
             * connection to break (shared memory), and operations pending toward it
             * fail, in UCX's peer error mode (the default mode promises neither) */
            setenv("UCX_KEEPALIVE_INTERVAL", "1s", 1);
            if (kill_case)
                setenv("TANDEM_UCX_PEER_ERRORS", "1", 1);
            int rfd = r == 0 ? p10[0] : p01[0], wfd = r == 0 ? p01[1] : p10[1];
            _exit(child(r, rfd, wfd, kill_case));
        }
    }
    close(p01[0]);
    close(p01[1]);
    close(p10[0]);
    close(p10[1]);
    int bad = 0;
    for (int r = 0; r < 2; r++) {
        int status;
        waitpid(pid[r], &status, 0);
        bool killed_ok = kill_case && r == 1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
        if (killed_ok || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
            continue;
        fprintf(stderr, "%s: rank %d %s %d\n", what, r,
                WIFEXITED(status) ? "exited with" : "ended by signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        bad = 1;
    }
    return bad;
}

int main(int argc, char **argv) {
    if (!tdm_ucx_built()) {
        printf("skipped: this Tandem was built without UCX\n");
        return 77;
    }
    if (argc >= 5 && !strcmp(argv[1], "child")) {
        int kill_case = argc >= 6 && !strcmp(argv[5], "kill");
        return child(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), kill_case);
    }
    int bad = 0;
    /* UCX is loaded by tdm_ucx_init, not at start-up: its constructors (signal
     * handlers, UCX_* parsing) cost a job that never uses it nothing */
    if (dlopen("libucs.so.0", RTLD_NOW | RTLD_NOLOAD)) {
        fprintf(stderr, "libucs is loaded before any tdm_ucx_init\n");
        bad++;
    }
    bad += run_pair("default transports", NULL, 0);
    setenv("TANDEM_UCX_STREAM_MIN", "131072", 1);
    bad += run_pair("tcp on loopback", "tcp", 0);
    /* every payload a stream, of 64 KiB chunks to 4 MiB (the default: 128 KiB and up) */
    setenv("TANDEM_UCX_STREAM_MIN", "1", 1);
    bad += run_pair("tcp on loopback, every payload a stream", "tcp", 0);
    setenv("TANDEM_UCX_STREAM_CHUNK", "5000", 1);
    bad += run_pair("tcp on loopback, every payload a stream of 5000-byte chunks", "tcp", 0);
    unsetenv("TANDEM_UCX_STREAM_CHUNK");
    setenv("TANDEM_UCX_STREAM_MIN", "0", 1);
    bad += run_pair("tcp on loopback, no streams", "tcp", 0);
    unsetenv("TANDEM_UCX_STREAM_MIN");
    setenv("TANDEM_UCX_RNDV", "am", 1);
    bad += run_pair("tcp on loopback, rendezvous as one active message", "tcp", 0);
    unsetenv("TANDEM_UCX_RNDV");
    bad += run_pair("tcp on loopback, peer killed", "tcp", 1);
    bad += run_pair("default transports, peer killed", NULL, 1);
    if (bad)
        return 1;
    printf("No Errors\n");
    return 0;
}
