/* SPDX-License-Identifier: BSD-3-Clause */
/* The adaptive choices' timing: cells per peer and size class, stamps, the
 * pair's published words (adapt.h). */
#include "p2p_impl.h"
#include "../base/params.h"
#include "../net/net.h"

#include <stdlib.h>
#include <time.h>

static tdm_adapt_cell_t **xchg_tab;   /* per peer: TDM_ADAPT_CLASSES cells, made at first use */
static tdm_adapt_cell_t **eager_tab;  /* the same, for the eager range (as receiver) */
static tdm_adapt_cell_t **oneway_tab; /* the same, for one-way rendezvous (as receiver) */
/* per peer, when the last timed receive of the eager range from it completed
 * (the low 32 bits of the clock, as the stamps) */
static uint32_t *range_done;
static bool eager_range_rndv; /* test hook: the range always by rendezvous */

/* An exchange ends when my send to the peer has completed too: a timed receive
 * that completes first waits here (one per peer: one message each way). */
typedef struct adapt_pending {
    tdm_adapt_cell_t *c;
    uint64_t t0, bytes;
    uint8_t pipeline, on;
} adapt_pending_t;
static adapt_pending_t *adapt_pend;

int tdm_p2p_adapt_init(void) {
    eager_range_rndv = TDM_PARAM_I(TEST_EAGER_ADAPTIVE_RNDV) != 0;
    /* the per-peer tables exist from the start: a peer's row and entry are its pair's
     * (p2p_impl.h), made at its first use under that pair's lock */
    size_t n = (size_t)tdm_p2p.size;
    xchg_tab = calloc(n, sizeof(*xchg_tab));
    eager_tab = calloc(n, sizeof(*eager_tab));
    oneway_tab = calloc(n, sizeof(*oneway_tab));
    range_done = calloc(n, sizeof(*range_done));
    adapt_pend = calloc(n, sizeof(*adapt_pend));
    return xchg_tab && eager_tab && oneway_tab && range_done && adapt_pend ? 0 : -1;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static tdm_adapt_cell_t *cell_of(tdm_adapt_cell_t ***tab, int peer, uint64_t size) {
    if (!*tab) {
        *tab = calloc((size_t)tdm_p2p.size, sizeof(**tab));
        if (!*tab)
            return NULL;
    }
    if (!(*tab)[peer])
        (*tab)[peer] = calloc(TDM_ADAPT_CLASSES, sizeof(tdm_adapt_cell_t));
    return (*tab)[peer] ? &(*tab)[peer][tdm_adapt_class(size)] : NULL;
}

/* A decision of a cell (kind TDM_ADAPT_*, for `peer` and size class k),
 * counted: a look at the way not taken begins when `judge` is set, and a change
 * of way raises tandem_adapt_changed. */
static bool choose_counted(tdm_adapt_cell_t *c, int kind, int peer, unsigned k, unsigned warm0,
                           unsigned warm1) {
    uint8_t way0 = c->way, judge0 = c->judge;
    bool way = tdm_adapt_choose(c, warm0, warm1);
    if (c->judge && !judge0)
        TDM_COUNTER_ADD(&tdm_p2p_stats.adapt_looks[kind][k], 1);
    if (c->way != way0)
        TDM_EVENT_RAISE(ADAPT_CHANGED, peer, kind, k, c->way, c->judge);
    return way;
}

/* Set bit k of a pair word to `on` (only its one writer calls this). */
static void word_set(_Atomic uint32_t *word, unsigned k, bool on) {
    uint32_t bits = atomic_load_explicit(word, memory_order_relaxed);
    uint32_t want = on ? bits | (1u << k) : bits & ~(1u << k);
    if (want != bits)
        atomic_store_explicit(word, want, memory_order_relaxed);
}

uint32_t tdm_p2p_stamp(void) {
    return (uint32_t)now_ns() | 1u;
}

uint32_t tdm_p2p_rndv_stamp(uint32_t stamp) {
    if (!stamp)
        return 0;
    uint32_t travel = (uint32_t)now_ns() - stamp;
    return (stamp - travel) | 1u;
}

uint32_t tdm_p2p_adapt_start(uint32_t stamp, uint32_t prev_done) {
    return prev_done && (int32_t)(prev_done - stamp) > 0 ? prev_done : stamp;
}

/* ---- the eager range ---- */

bool tdm_p2p_range_cma(int peer) {
    int me = tdm_p2p.rank;
    if (!tdm_net_local(peer))
        return false; /* no pair words (nor CMA) with a peer of another node */
    if (eager_range_rndv)
        return true;
    return (atomic_load_explicit(tdm_p2p_pair_word(peer, me, TDM_PAIR_EAGER_RNDV),
                                 memory_order_relaxed) |
            atomic_load_explicit(tdm_p2p_pair_word(me, peer, TDM_PAIR_EAGER_RNDV),
                                 memory_order_relaxed)) != 0;
}

uint32_t tdm_p2p_adapt_eager_send(int peer, size_t bytes, const tdm_dtype_t *dt, bool *rndv) {
    *rndv = false;
    /* one that comes unexpected is read at once by the receiver: only a buffer
     * it can read takes the range */
    if (!tdm_layout_describable(dt) || !tdm_net_cma(peer))
        return 0;
    uint32_t stamp = tdm_p2p_stamp();
    /* the way the receiver timed as faster, or, from the lower rank of a pair
     * that has lately received the range from the peer too, the way it timed
     * for the peer's messages (the higher rank follows that one anyway) */
    bool paired = range_done && tdm_p2p_range_paired(tdm_p2p.rank, peer, stamp, range_done[peer]);
    _Atomic uint32_t *word = paired ? tdm_p2p_pair_word(peer, tdm_p2p.rank, TDM_PAIR_EAGER_RNDV)
                                    : tdm_p2p_pair_word(tdm_p2p.rank, peer, TDM_PAIR_EAGER_RNDV);
    uint32_t bits = atomic_load_explicit(word, memory_order_relaxed);
    unsigned k = tdm_adapt_class(bytes);
    *rndv = eager_range_rndv || ((bits >> k) & 1u);
    TDM_COUNTER_ADD(&tdm_p2p_stats.adapt[TDM_ADAPT_EAGER][*rndv][k], 1);
    return stamp;
}

void tdm_p2p_eager_adapt_done(tdm_req_t *r, bool rndv) {
    uint64_t bytes = r->msg_size;
    uint32_t now = (uint32_t)now_ns(), start = r->t_sent;
    r->t_sent = 0;
    if (!tdm_net_local(r->peer_world))
        return; /* the eager range has no rendezvous way to time with another node */
    /* timed from the send, or from the previous completion from that sender: a
     * stream by its gap between completions, its throughput; a ping-pong by its
     * latency */
    if (!range_done)
        range_done = calloc((size_t)tdm_p2p.size, sizeof(*range_done));
    if (range_done) {
        start = tdm_p2p_adapt_start(start, range_done[r->peer_world]);
        range_done[r->peer_world] = now | 1u;
    }
    uint32_t dt = now - start;
    if (r->bytes < bytes)
        return; /* truncated: not the message's cost */
    tdm_adapt_cell_t *c = cell_of(&eager_tab, r->peer_world, bytes);
    if (!c)
        return;
    c->by_min = 1;
    /* after a change to eager, two ring cycles of its messages go untimed: the
     * first ones write cells whose lines are no longer the sender's */
    size_t body = tdm_net_body_size(r->peer_world);
    size_t cells = (bytes + sizeof(tdm_pkt_eager_t) + body - 1) / body;
    unsigned warm_eager = (unsigned)TDM_MIN(2u * tdm_shm.ncells / cells, 65535u);
    /* this message's cost, then the way for the sender's next ones */
    tdm_adapt_begin(c, warm_eager, 1);
    tdm_adapt_record(c, rndv, dt, bytes);
    unsigned k = tdm_adapt_class(bytes);
    bool want = choose_counted(c, TDM_ADAPT_EAGER, r->peer_world, k, warm_eager, 1);
    word_set(tdm_p2p_pair_word(r->peer_world, tdm_p2p.rank, TDM_PAIR_EAGER_RNDV), k, want);
}

/* ---- adaptive rendezvous (exchanges, one way) ---- */

/* A timed choice: true for the pipeline; the receive's completion records its
 * time in `c` (tdm_p2p_adapt_done). */
static bool timed(tdm_rndv_t *st, tdm_adapt_cell_t *c, int peer, uint64_t size, int kind) {
    bool pipeline = choose_counted(c, kind, peer, tdm_adapt_class(size), 1,
                                   tdm_adapt_warm(tdm_shm.ring_bytes, size));
    st->adapt = (uint8_t)(tdm_adapt_class(size) + 1);
    st->adapt_oneway = kind == TDM_ADAPT_ONEWAY;
    st->t0 = now_ns();
    return pipeline;
}

bool tdm_p2p_adapt_rndv(tdm_req_t *r, int kind, uint64_t size) {
    tdm_rndv_t *st = tdm_rndv(r);
    int me = tdm_p2p.rank, peer = r->peer_world;
    unsigned k = tdm_adapt_class(size);
    if (kind == TDM_ADAPT_ONEWAY) {
        tdm_adapt_cell_t *c = cell_of(&oneway_tab, peer, size);
        bool pipeline = c && timed(st, c, peer, size, kind);
        if (c)
            TDM_COUNTER_ADD(&tdm_p2p_stats.adapt[TDM_ADAPT_ONEWAY][pipeline][k], 1);
        return pipeline;
    }
    /* an exchange: the lower rank times and publishes, the higher follows */
    _Atomic uint32_t *word =
        tdm_p2p_pair_word(TDM_MIN(me, peer), TDM_MAX(me, peer), TDM_PAIR_XCHG_PIPELINE);
    bool pipeline = (atomic_load_explicit(word, memory_order_relaxed) >> k) & 1u;
    tdm_adapt_cell_t *c = me < peer ? cell_of(&xchg_tab, peer, size) : NULL;
    if (c) {
        pipeline = timed(st, c, peer, size, kind);
        word_set(word, k, pipeline);
    }
    TDM_COUNTER_ADD(&tdm_p2p_stats.adapt[TDM_ADAPT_XCHG][pipeline][k], 1);
    return pipeline;
}

void tdm_p2p_adapt_done(tdm_req_t *r) {
    tdm_rndv_t *st = tdm_rndv(r);
    int peer = r->peer_world;
    tdm_adapt_cell_t *c = &(st->adapt_oneway ? oneway_tab : xchg_tab)[peer][st->adapt - 1];
    bool pipeline = r->proto == TDM_PROTO_PIPELINE;
    st->adapt = 0;
    if (!st->adapt_oneway && tdm_p2p.rndv_out[peer] > 0) {
        if (!adapt_pend)
            adapt_pend = calloc((size_t)tdm_p2p.size, sizeof(*adapt_pend));
        if (adapt_pend) {
            adapt_pend[peer] = (adapt_pending_t){c, st->t0, st->total, pipeline, 1};
            return;
        }
    }
    tdm_adapt_record(c, pipeline, now_ns() - st->t0, st->total);
}

void tdm_p2p_adapt_sends_done(int peer) {
    if (!adapt_pend || !adapt_pend[peer].on)
        return;
    adapt_pending_t *p = &adapt_pend[peer];
    p->on = 0;
    tdm_adapt_record(p->c, p->pipeline, now_ns() - p->t0, p->bytes);
}
