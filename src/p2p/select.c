/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one place where protocol decisions are made (select.h): eager or
 * rendezvous at the sender, the rendezvous protocol at the receiver, RTR, the
 * adaptive choices' applicability, COOP's split. Each is a function of its
 * inputs and of the settings read here; the rules as a table are in
 * docs/architecture.md, the measurements behind them in docs/performance.md.
 */
#include "p2p_impl.h"
#include "../base/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

const tdm_proto_t *const tdm_protos[TDM_PROTO_ALL] = {
#define TDM_PROTO(_id, _wire, _sym, _word, _pv) [TDM_PROTO_##_id] = &_sym,
#define TDM_PROTO_LOCAL(_id, _sym) [TDM_PROTO_##_id] = &_sym,
#include "proto/registry.def"
#undef TDM_PROTO
#undef TDM_PROTO_LOCAL
};

static const char *const opt_names[TDM_PROTO_COUNT] = {
#define TDM_PROTO(_id, _wire, _sym, _word, _pv) [TDM_PROTO_##_id] = #_word,
#include "proto/registry.def"
#undef TDM_PROTO
};

static tdm_proto_id_t forced = TDM_PROTO_AUTO;
static uint64_t coop_min;
static uint64_t exchange_pipeline_max;
static uint64_t exchange_adaptive_max;
static uint64_t exchange_adaptive_min;
static uint64_t rndv_adaptive_max;
static uint64_t eager_adaptive_min;
static int64_t load_margin;
static bool oversubscribed;

const char *tdm_proto_name(tdm_proto_id_t id) {
    return id < TDM_PROTO_ALL && tdm_protos[id] ? tdm_protos[id]->name : "auto";
}

/* Whatever failed, the rest goes through the rings: they cannot fail midway
 * and need nothing the pair may have lost (CMA is off for it by then). */
tdm_proto_id_t tdm_p2p_select_fallback(tdm_proto_id_t failed) {
    (void)failed;
    return TDM_PROTO_PIPELINE;
}

int tdm_p2p_proto_count(void) {
    return TDM_PROTO_COUNT;
}

const char *tdm_p2p_proto_word(int id) {
    return id >= 0 && id < TDM_PROTO_COUNT ? opt_names[id] : NULL;
}

tdm_proto_id_t tdm_p2p_select_forced(void) {
    return forced;
}

/* 16 KiB by default, with ranks outnumbering cores too: up to there the ring
 * beat a CMA read in both placements of the host's vCPUs, and a larger limit
 * lost twice over with them far apart. At most a quarter ring: at half a ring
 * two exchanges in flight fill it. */
size_t tdm_p2p_eager_limit_param(bool oversubscribed) {
    size_t limit = (size_t)TDM_PARAM_I(EAGER_LIMIT);
    if (tdm_param_srcs[TDM_PARAM_EAGER_LIMIT] != TDM_PSRC_DEFAULT)
        return limit;
    /* a default limit leaves a small ring (TANDEM_SHM_CELLS, _CELL_SIZE set) its
     * headroom too */
    size_t quarter = (size_t)TDM_PARAM_I(SHM_CELLS) * (size_t)TDM_PARAM_I(SHM_CELL_SIZE) / 4;
    limit = TDM_MIN(limit, quarter);
    if (!oversubscribed)
        return limit;
    size_t over = (size_t)TDM_PARAM_I(EAGER_LIMIT_OVERSUBSCRIBED);
    if (tdm_param_srcs[TDM_PARAM_EAGER_LIMIT_OVERSUBSCRIBED] == TDM_PSRC_DEFAULT)
        over = TDM_MIN(over, quarter);
    return TDM_MAX(over, limit);
}

/* 128 KiB by default: over TCP a rendezvous costs more round trips than the extra copies
 * of one or two packets, so up to here eager wins in latency and in streams; above it
 * the message attached to the RTS moves with no copy and keeps more bandwidth
 * (docs/performance.md). The ring's quarter-ring bound does not apply (no ring). */
size_t tdm_p2p_eager_limit_remote_param(void) {
    return (size_t)TDM_PARAM_I(EAGER_LIMIT_REMOTE);
}

/* 2 MiB pieces (512 KiB when ranks outnumber cores): each process_vm_readv call
 * costs about 2 us before it copies a byte. */
size_t tdm_p2p_copy_chunk_param(bool oversubscribed) {
    size_t chunk = (size_t)TDM_PARAM_I(COPY_CHUNK);
    if (oversubscribed && tdm_param_srcs[TDM_PARAM_COPY_CHUNK] == TDM_PSRC_DEFAULT)
        chunk = (size_t)TDM_PARAM_I(COPY_CHUNK_OVERSUBSCRIBED);
    return chunk; /* at least 4 KiB: params.def's range */
}

/* The thresholds params.def marks as changeable at run time (JOB_RUN). */
static void read_thresholds(void) {
    coop_min = (uint64_t)TDM_PARAM_I(COOP_MIN);
    exchange_pipeline_max = (uint64_t)TDM_PARAM_I(EXCHANGE_PIPELINE_MAX);
    exchange_adaptive_max = (uint64_t)TDM_PARAM_I(EXCHANGE_ADAPTIVE_MAX);
    exchange_adaptive_min = (uint64_t)TDM_PARAM_I(EXCHANGE_ADAPTIVE_MIN);
    rndv_adaptive_max = (uint64_t)TDM_PARAM_I(RNDV_ADAPTIVE_MAX);
    eager_adaptive_min = (uint64_t)TDM_PARAM_I(EAGER_ADAPTIVE_MIN);
    load_margin = TDM_PARAM_I(COOP_LOAD_MARGIN); /* at least 1: params.def's range */
}

/* A message's protocol is fixed when it is chosen (the eager limit at the send,
 * the rendezvous protocol at the match), so new values apply to the messages
 * sent and matched after the write; the adaptive bookkeeping stays. */
void tdm_p2p_reconfigure(void) {
    read_thresholds();
    tdm_p2p.eager_limit = tdm_p2p_eager_limit_param(tdm_p2p.oversubscribed);
    tdm_p2p.eager_limit_remote = tdm_p2p_eager_limit_remote_param();
    tdm_p2p.copy_chunk = tdm_p2p_copy_chunk_param(tdm_p2p.oversubscribed);
}

int tdm_p2p_select_init(void) {
    const char *want = TDM_PARAM_S(RNDV_PROTOCOL);
    forced = TDM_PROTO_AUTO;
    read_thresholds();
    tdm_p2p.stall_units = (uint32_t)(TDM_PARAM_I(PEER_STALL_US) * 1000 / 1024);
    oversubscribed = TDM_PARAM_I(OVERSUBSCRIBED) != 0;
    if (strcmp(want, "auto") != 0) {
        int found = 0;
        for (int i = 0; i < TDM_PROTO_COUNT; i++) {
            if (!strcmp(want, opt_names[i])) {
                forced = (tdm_proto_id_t)i;
                found = 1;
            }
        }
        if (!found) {
            tdm_error(P2P,
                      "TANDEM_RNDV_PROTOCOL=%s is not one of auto, rget, rput, coop, rtr, "
                      "pipeline, am",
                      want);
            return -1;
        }
    }
    return 0;
}

/* Under the progress thread, a side's application computes outside the library. */
static bool select_computing(const tdm_select_in_t *in) {
    return in->async && !(in->recv_idle && in->send_idle);
}

/* A sender on another node (the node dimension) whose RTS came bare (its message not
 * attached: tdm_p2p_select_data said no, or was forced to). RGET then (seed 001 §4.1: in every
 * order of arrival it needs the fewest control packets, RTS then FIN, and the data moves
 * without the sender's CPU); RPUT when the RTS brought no key (the sender's buffer could
 * not be registered, or its key does not fit a packet) but the receive can be written; the
 * pipeline when neither buffer is addressable (non-contiguous, see rndv_matched). Forced:
 * rget and coop read, rput and rtr write (neither has a form of its own between nodes);
 * am, whose sender had nothing it could attach, the pipeline. */
static tdm_proto_id_t select_remote(const tdm_select_in_t *in) {
    if (forced == TDM_PROTO_PIPELINE || forced == TDM_PROTO_AM)
        return TDM_PROTO_PIPELINE;
    if (forced == TDM_PROTO_RPUT || forced == TDM_PROTO_RTR)
        return in->rdma_put ? TDM_PROTO_RPUT_RDMA : TDM_PROTO_PIPELINE;
    if (forced != TDM_PROTO_AUTO)
        return in->rdma_get ? TDM_PROTO_RGET_RDMA : TDM_PROTO_PIPELINE;
    if (in->rdma_get)
        return TDM_PROTO_RGET_RDMA;
    return in->rdma_put ? TDM_PROTO_RPUT_RDMA : TDM_PROTO_PIPELINE;
}

static tdm_proto_id_t select_rule(const tdm_select_in_t *in) {
    if (in->remote)
        return select_remote(in);
    if (forced == TDM_PROTO_PIPELINE)
        return TDM_PROTO_PIPELINE;
    if (forced == TDM_PROTO_RTR)
        return TDM_PROTO_RPUT; /* no announcement was usable: the sender copies */
    if (forced != TDM_PROTO_AUTO)
        return forced;
    if (in->sender_stalled)
        return TDM_PROTO_RGET; /* this process copies it all, whenever the sender runs */
    /* A side computes while its progress thread moves the message: the copy is CPU taken
     * from whichever application shares that core, so the side that waits in the library
     * copies it all. When both compute the receiver, whose thread the RTS woke already,
     * copies (one FIN, no CTS: the fewest wake-ups). Never the pipeline then: each ring's
     * worth of cells needs both threads woken again, each wake-up of a thread that shares
     * its core a scheduling delay (bench/icoll's Iallreduce stalled for milliseconds). */
    if (select_computing(in))
        return in->send_idle ? TDM_PROTO_RPUT : TDM_PROTO_RGET;
    /* (a message up to the eager limit comes by RTS only when the adaptive eager
     * range chose it: its other way is the ring already, so it goes by CMA) */
    if (in->exchange && in->size <= exchange_pipeline_max && in->size > tdm_p2p.eager_limit &&
        !oversubscribed)
        return TDM_PROTO_PIPELINE;
    uint8_t mode = in->send_mode & (uint8_t)~TDM_MODE_BLOCKING;
    bool send_blocks = (in->send_mode & TDM_MODE_BLOCKING) != 0;
    tdm_proto_id_t p;
    if (mode == TDM_MODE_BUFFERED)
        p = in->recv_blocking ? TDM_PROTO_RGET : TDM_PROTO_RPUT;
    else if (send_blocks)
        p = in->recv_blocking ? TDM_PROTO_COOP : TDM_PROTO_RPUT;
    else if (in->recv_blocking)
        p = TDM_PROTO_RGET;
    else if (oversubscribed)
        p = TDM_PROTO_RGET; /* copies pending say little about who gets a core next */
    else if (in->load_send + load_margin <= in->load_recv)
        p = TDM_PROTO_RPUT; /* COOP-load: the less loaded side copies */
    else if (in->load_recv + load_margin <= in->load_send)
        p = TDM_PROTO_RGET;
    else
        p = TDM_PROTO_COOP;
    /* a message at or below the eager limit comes by RTS when the adaptive eager
     * range timed that way as the faster: one side copies, with the fewest
     * control packets (COOP's CTS, second syscall and second FIN cost more than
     * half of a 16 KiB copy saves; figures in the header) */
    if (p == TDM_PROTO_COOP && (in->size < coop_min || in->size <= tdm_p2p.eager_limit ||
                                oversubscribed || in->exchange || in->consume_far))
        p = TDM_PROTO_RGET;
    return p;
}

tdm_proto_id_t tdm_p2p_select(const tdm_select_in_t *in) {
    tdm_proto_id_t p = select_rule(in);
    unsigned have = (in->cma && !in->remote ? TDM_CAP_CMA : 0) |
                    (in->remote && (in->rdma_get || in->rdma_put) ? TDM_CAP_RDMA : 0);
    /* a protocol that needs what the pair lacks never qualifies (proto.h `caps`); the
     * pipeline needs nothing but the rings */
    return tdm_protos[p]->caps & ~have ? TDM_PROTO_PIPELINE : p;
}

bool tdm_p2p_select_rtr(const tdm_select_in_t *in) {
    if (forced == TDM_PROTO_RTR)
        return true;
    if (forced != TDM_PROTO_AUTO)
        return false;
    uint8_t mode = in->send_mode & (uint8_t)~TDM_MODE_BLOCKING;
    if (mode == TDM_MODE_READY || mode == TDM_MODE_BUFFERED || (in->send_mode & TDM_MODE_BLOCKING))
        return true; /* Table II: x Irecv gives RPUT; the announcement saves the RTS/CTS */
    /* Isend x Irecv: COOP-load. Writing alone when the loads are equal would
     * take COOP's half of the copy from the receiver (stencil copies per rank
     * drifted 5% apart that way, and the time by 30%). */
    return !oversubscribed && in->load_send + load_margin <= in->load_recv;
}

bool tdm_p2p_select_announce(tdm_rtr_history_t *h) {
    if (forced == TDM_PROTO_RTR)
        return true;
    if (h->sent >= 16 && h->used * 4 < h->sent && (++h->skipped & 15) != 0)
        return false;
    if (++h->sent >= 64) { /* decay: recent behaviour counts */
        h->sent /= 2;
        h->used /= 2;
    }
    return true;
}

int tdm_p2p_select_adaptive(const tdm_select_in_t *in, tdm_proto_id_t p) {
    if (forced != TDM_PROTO_AUTO || oversubscribed || in->sender_stalled || select_computing(in) ||
        in->remote)
        return -1; /* (computing: see tdm_p2p_select) */
    /* one message each way: with more in flight (a window of them) the ring
     * carries them one after another while CMA copies each at once */
    if (p == TDM_PROTO_RGET && in->one_out && in->size > exchange_pipeline_max &&
        in->size > exchange_adaptive_min && in->size <= exchange_adaptive_max)
        return TDM_ADAPT_XCHG;
    /* one way, both calls blocking (a non-blocking side may be computing, and a
     * pipeline would wait for it), unless the cores share no cache */
    if (p != TDM_PROTO_PIPELINE && !in->exchange && in->size > tdm_p2p.eager_limit &&
        in->size <= rndv_adaptive_max && in->recv_blocking && (in->send_mode & TDM_MODE_BLOCKING) &&
        (in->send_mode & (uint8_t)~TDM_MODE_BLOCKING) != TDM_MODE_BUFFERED && !in->range_cma)
        return TDM_ADAPT_ONEWAY;
    return -1;
}

bool tdm_p2p_select_announces(bool recv_blocking, size_t bytes) {
    /* RTR's ordering rule counts the envelopes one matching thread has taken from a ring
     * when it posts (rndv_rtr.c); with threads posting beside progress that count means
     * nothing, so under MPI_THREAD_MULTIPLE no receive is announced (RTS/CTS instead) */
    if (tdm_threaded)
        return false;
    /* auto: only receives that let the caller compute (Irecv) */
    if (forced != TDM_PROTO_RTR && (forced != TDM_PROTO_AUTO || recv_blocking))
        return false;
    return bytes > tdm_p2p.eager_limit;
}

/* A sender on another node attaches the message to its RTS (am): the transport moves it
 * as it moves its own rendezvous, straight into the receive buffer at the match, with no
 * FIN (over TCP, where get is emulated by messages, several times the bandwidth of
 * rget_rdma: docs/performance.md). A non-contiguous message is packed first, up to
 * DATA_PACK_MAX: larger, the pipeline keeps the memory to its packets. Forcing any other
 * protocol keeps the RTS bare, for the receiver to choose. */
#define DATA_PACK_MAX ((size_t)64 << 20)
bool tdm_p2p_select_data(bool contig, size_t bytes) {
    if (forced != TDM_PROTO_AUTO && forced != TDM_PROTO_AM)
        return false;
    return contig || bytes <= DATA_PACK_MAX;
}

tdm_send_way_t tdm_p2p_select_send(size_t bytes, bool remote) {
    if (TDM_UNLIKELY(remote)) /* the adaptive eager range times CMA: none between nodes */
        return bytes > tdm_p2p.eager_limit_remote ? TDM_SEND_RNDV : TDM_SEND_EAGER;
    if (bytes > tdm_p2p.eager_limit)
        return TDM_SEND_RNDV;
    if (!eager_adaptive_min || bytes <= eager_adaptive_min || oversubscribed ||
        forced != TDM_PROTO_AUTO)
        return TDM_SEND_EAGER;
    return TDM_SEND_RANGE;
}

bool tdm_p2p_select_pull(size_t bytes, bool sync) {
    return bytes <= tdm_p2p.eager_limit && !sync;
}

/* A pair that sends the range both ways: the lower rank's timing decides both
 * ways, so that a look turns both at once (a mixed state cost more than either). */
#define TDM_RANGE_PAIRED_NS 200000u

bool tdm_p2p_range_paired(int me, int peer, uint32_t now, uint32_t last_done) {
    return me < peer && last_done && now - last_done < TDM_RANGE_PAIRED_NS;
}

#define TDM_PAGE 4096u

uint64_t tdm_p2p_select_coop_split(uint64_t total) {
    long long pct = TDM_PARAM_I(COOP_RATIO);
    pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;
    uint64_t split = total * (uint64_t)pct / 100;
    if (split > TDM_PAGE && split < total - TDM_PAGE)
        split &= ~(uint64_t)(TDM_PAGE - 1);
    return split;
}

static const char *size_label(uint64_t v, char *buf, size_t n) {
    if (v >= (1u << 20) && v % (1u << 20) == 0)
        snprintf(buf, n, "%lluM", (unsigned long long)(v >> 20));
    else if (v >= 1024 && v % 1024 == 0)
        snprintf(buf, n, "%lluK", (unsigned long long)(v >> 10));
    else
        snprintf(buf, n, "%llu", (unsigned long long)v);
    return buf;
}

static int decide_proto(const tdm_select_in_t *in) {
    return (int)tdm_p2p_select(in);
}

static int decide_rtr(const tdm_select_in_t *in) {
    return tdm_p2p_select_rtr(in);
}

/* A decision with the copies pending equal, the sender busier by the margin,
 * the receiver busier by it (the table's load:a/b/c); true if all agree. */
static bool three_loads(int (*decide)(const tdm_select_in_t *), tdm_select_in_t in, int out[3]) {
    in.load_send = in.load_recv = 0;
    out[0] = decide(&in);
    in.load_send = load_margin;
    out[1] = decide(&in);
    in.load_send = 0;
    in.load_recv = load_margin;
    out[2] = decide(&in);
    return out[0] == out[1] && out[0] == out[2];
}

/* The node dimension: a sender on another node. The rule reads no call type, load or
 * exchange (select_remote), so one line per kind of buffer says it all. */
static void select_print_remote(FILE *f, uint8_t mode) {
    char a[32];
    static const struct {
        const char *what;
        int get, put;
    } rows[] = {
        {"both buffers contiguous, the sender's registered (its key in the RTS)", 1, 1},
        {"both contiguous, the sender's not registered (no key in the RTS)", 0, 1},
        {"either buffer not contiguous", 0, 0},
    };
    fprintf(f,
            "  a sender on another node (no CMA; TANDEM_EAGER_LIMIT_REMOTE): size 0..%s eager "
            "in the transport's packets; above, all call types:\n",
            size_label(tdm_p2p.eager_limit_remote, a, sizeof(a)));
    bool data = tdm_p2p_select_data(true, 0);
    char p[32];
    size_label(DATA_PACK_MAX, p, sizeof(p));
    char what[96];
    snprintf(what, sizeof(what),
             "the message attached to the RTS (not contiguous: packed, up to %s)", p);
    fprintf(f, "    %-72s %s\n", what, data ? opt_names[TDM_PROTO_AM] : "no (below)");
    fprintf(f, "    the RTS bare (%s):\n",
            data ? "a non-contiguous message larger than that" : "any message");
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tdm_select_in_t in = {.send_mode = mode,
                              .size = tdm_p2p.eager_limit_remote + 1,
                              .remote = 1,
                              .rdma_get = rows[i].get,
                              .rdma_put = rows[i].put};
        fprintf(f, "      %-70s %s\n", rows[i].what, opt_names[tdm_p2p_select(&in)]);
    }
}

void tdm_p2p_select_print(void *fp) {
    FILE *f = fp;
    static const struct {
        const char *name;
        uint8_t mode;
    } sends[] = {
        {"Send", TDM_MODE_STD | TDM_MODE_BLOCKING},
        {"Ssend", TDM_MODE_SYNC | TDM_MODE_BLOCKING},
        {"Rsend", TDM_MODE_READY | TDM_MODE_BLOCKING},
        {"Bsend", TDM_MODE_BUFFERED | TDM_MODE_BLOCKING},
        {"Isend", TDM_MODE_STD},
        {"Issend", TDM_MODE_SYNC},
        {"Irsend", TDM_MODE_READY},
        {"Ibsend", TDM_MODE_BUFFERED},
    };
    char a[32], b[32], c[32];
    uint64_t eager = tdm_p2p.eager_limit;
    uint64_t lows[2] = {eager + 1, coop_min};
    int nranges = coop_min > eager + 1 ? 2 : 1;
    fprintf(f,
            "tandem: protocol selection (TANDEM_RNDV_PROTOCOL=%s, eager limit %s, COOP from %s, "
            "chunk %s%s)\n",
            forced == TDM_PROTO_AUTO ? "auto" : opt_names[forced], size_label(eager, a, sizeof(a)),
            size_label(coop_min, b, sizeof(b)), size_label(tdm_p2p.copy_chunk, c, sizeof(c)),
            oversubscribed && forced == TDM_PROTO_AUTO ? ", oversubscribed: no COOP" : "");
    fprintf(f, "  size 0..%s: eager through the rings (all call types)\n",
            size_label(eager, a, sizeof(a)));
    for (int range = 0; range < nranges; range++) {
        uint64_t lo = lows[range];
        if (range + 1 < nranges)
            fprintf(f, "  size %s..%s:\n", size_label(lo, a, sizeof(a)),
                    size_label(lows[range + 1] - 1, b, sizeof(b)));
        else
            fprintf(f, "  size %s and up:\n", size_label(lo, a, sizeof(a)));
        fprintf(f, "    %-8s %-16s %s\n", "", "Recv", "Irecv");
        for (size_t i = 0; i < sizeof(sends) / sizeof(sends[0]); i++) {
            tdm_select_in_t in = {.send_mode = sends[i].mode, .size = lo, .cma = 1};
            char cell[2][64];
            for (int rb = 1; rb >= 0; rb--) {
                int d[3];
                in.recv_blocking = rb;
                if (three_loads(decide_proto, in, d))
                    snprintf(cell[rb], sizeof(cell[rb]), "%s", opt_names[d[0]]);
                else
                    snprintf(cell[rb], sizeof(cell[rb]), "load:%s/%s/%s", opt_names[d[0]],
                             opt_names[d[1]], opt_names[d[2]]);
            }
            fprintf(f, "    %-8s %-16s %s\n", sends[i].name, cell[1], cell[0]);
        }
    }
    if (forced == TDM_PROTO_RTR || forced == TDM_PROTO_AUTO) {
        fprintf(f,
                "  rtr: %s receives with a known source and tag announce their buffer; the send"
                " that finds one writes into it with no RTS (%s):\n   ",
                forced == TDM_PROTO_RTR ? "all" : "non-blocking (Irecv)",
                forced == TDM_PROTO_RTR ? "always"
                                        : "to a peer that used under 1/4 of its last 16+ "
                                          "announcements, 1 Irecv in 16");
        for (size_t i = 0; i < sizeof(sends) / sizeof(sends[0]); i++) {
            int d[3];
            if (three_loads(decide_rtr, (tdm_select_in_t){.send_mode = sends[i].mode}, d))
                fprintf(f, " %s %s", sends[i].name, d[0] ? "yes" : "no");
            else
                fprintf(f, " %s load:%s/%s/%s", sends[i].name, d[0] ? "yes" : "no",
                        d[1] ? "yes" : "no", d[2] ? "yes" : "no");
            fputc(i + 1 < sizeof(sends) / sizeof(sends[0]) ? ',' : '\n', f);
        }
    }
    if (forced == TDM_PROTO_AUTO) {
        char lim[32], lim2[32], pipe[64] = "", adapt[128] = "";
        uint64_t pipe_top = TDM_MAX(exchange_pipeline_max, (uint64_t)tdm_p2p.eager_limit);
        pipe_top = TDM_MAX(pipe_top, exchange_adaptive_min);
        if (exchange_pipeline_max > tdm_p2p.eager_limit && !oversubscribed)
            snprintf(pipe, sizeof(pipe), "pipeline up to %s, then ",
                     size_label(exchange_pipeline_max, lim, sizeof(lim)));
        if (exchange_adaptive_max > pipe_top && !oversubscribed)
            snprintf(adapt, sizeof(adapt),
                     "; above %s up to %s rget or pipeline, whichever was faster lately "
                     "(timed by the pair's lower rank)",
                     size_label(pipe_top, lim, sizeof(lim)),
                     size_label(exchange_adaptive_max, lim2, sizeof(lim2)));
        fprintf(f,
                "  exchange (the receiver has its own rendezvous send to the sender in "
                "flight): %scoop becomes rget%s\n",
                pipe, adapt);
        if (rndv_adaptive_max > tdm_p2p.eager_limit && !oversubscribed)
            fprintf(f,
                    "  one way, Send/Ssend/Rsend x Recv, above %s up to %s: the table's protocol "
                    "or pipeline, whichever was faster lately (timed by the receiver; not while "
                    "the pair's adaptive eager range goes by rendezvous)\n",
                    size_label(tdm_p2p.eager_limit, lim, sizeof(lim)),
                    size_label(rndv_adaptive_max, lim2, sizeof(lim2)));
    }
    if (forced == TDM_PROTO_AUTO && tdm_p2p.stall_units) {
        tdm_select_in_t st = {.send_mode = TDM_MODE_STD | TDM_MODE_BLOCKING,
                              .recv_blocking = 1,
                              .size = TDM_MAX(coop_min, eager + 1),
                              .cma = 1,
                              .sender_stalled = 1};
        fprintf(f,
                "  a sender that is not running (no poll for %lld us, not blocked in a wait), "
                "any call types: %s\n",
                (long long)TDM_PARAM_I(PEER_STALL_US), opt_names[tdm_p2p_select(&st)]);
    }
    if (forced == TDM_PROTO_AUTO && TDM_PARAM_I(ASYNC_PROGRESS)) {
        tdm_select_in_t as = {.send_mode = TDM_MODE_STD,
                              .size = TDM_MAX(coop_min, eager + 1),
                              .cma = 1,
                              .async = 1,
                              .exchange = 1,
                              .one_out = 1};
        tdm_proto_id_t both = tdm_p2p_select(&as);
        as.recv_idle = 1;
        tdm_proto_id_t rwaits = tdm_p2p_select(&as);
        as.recv_idle = 0;
        as.send_idle = 1;
        fprintf(f,
                "  progress thread on (TANDEM_ASYNC_PROGRESS), a side non-blocking and one "
                "computing outside MPI, exchanges too: the receiver waits in MPI: %s; the sender "
                "does: %s; both compute: %s\n",
                opt_names[rwaits], opt_names[tdm_p2p_select(&as)], opt_names[both]);
    }
    tdm_select_in_t red = {.send_mode = TDM_MODE_STD | TDM_MODE_BLOCKING,
                           .recv_blocking = 1,
                           .consume_far = 1,
                           .size = TDM_MAX(coop_min, eager + 1),
                           .cma = 1};
    fprintf(f,
            "  a collective's receive whose data it reduces at once, when the pair's adaptive "
            "eager range goes by rendezvous, Send x Recv: %s\n",
            opt_names[tdm_p2p_select(&red)]);
    fprintf(f,
            "  (load:a/b/c = copies pending equal / sender %lld more / receiver %lld more;"
            " a pair without CMA uses pipeline)\n",
            (long long)load_margin, (long long)load_margin);
    fprintf(f, "  a copy that fails midway (CMA then off for the pair): the rest by %s\n",
            opt_names[tdm_p2p_select_fallback(TDM_PROTO_COOP)]);
    select_print_remote(f, sends[0].mode);
    fprintf(f, "  protocols (proto/registry.def):\n");
    for (int i = 0; i < TDM_PROTO_ALL; i++) {
        if (tdm_protos[i])
            fprintf(f, "    %-18s %s\n", tdm_protos[i]->name, tdm_protos[i]->desc);
    }
}
