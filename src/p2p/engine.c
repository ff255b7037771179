/* SPDX-License-Identifier: BSD-3-Clause */
/* Progress, packet dispatch, transmit queues, waiting, start-up and shut-down. */
#include "proto/eager.h"
#include "../base/params.h"
#include "../base/copy.h"
#include "../net/net.h"
#include "../net/rdma.h"

#include <stdio.h>

#include <sched.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

tdm_p2p_state_t tdm_p2p;

int tdm_p2p_init(const tdm_p2p_config_t *cfg, const char **what_p) {
    tdm_p2p_state_t *p = &tdm_p2p;
    tdm_net_config_t net = {.rank = cfg->rank,
                            .size = cfg->size,
                            .node_of = cfg->node_of,
                            .nodes = cfg->nodes,
                            .shm_fd = cfg->shm_fd,
                            .shm_offset = cfg->shm_offset,
                            .shm_shared = cfg->shm_shared,
                            .fatal = cfg->fatal};
    if (tdm_net_init(&net, what_p) != 0)
        return -1;
    p->rank = cfg->rank;
    p->size = cfg->size;
    p->oversubscribed = cfg->oversubscribed;
    p->eager_limit = tdm_p2p_eager_limit_param(p->oversubscribed);
    p->eager_limit_remote = tdm_p2p_eager_limit_remote_param();
    if (p->oversubscribed) {
        /* another rank needs this core: hand it over at once, by yielding (a
         * blocked rank needs a futex wake and a scheduler pass per message) */
        p->spins = TDM_PARAM_I(WAIT_SPINS_OVERSUBSCRIBED);
        p->yields = TDM_PARAM_I(WAIT_YIELDS_OVERSUBSCRIBED);
    } else {
        /* the core is this rank's: poll, then block; a yield would hand the core to
         * whatever else runs on it (docs/architecture.md, waiting) */
        p->spins = 0;
        p->yields = TDM_PARAM_I(WAIT_YIELDS);
        p->spin_units = (uint32_t)(TDM_PARAM_I(WAIT_SPIN_US) * 1000 / 1024);
        p->spin_contended_units = (uint32_t)(TDM_PARAM_I(WAIT_SPIN_CONTENDED_US) * 1000 / 1024);
    }
    p->block_us = TDM_PARAM_I(WAIT_BLOCK_US);
    p->copy_chunk = tdm_p2p_copy_chunk_param(p->oversubscribed);
    for (int b = 0; b < TDM_MATCH_BUCKETS; b++) {
        tdm_lock_init(&p->match[b].lock);
        tdm_list_init(&p->match[b].posted);
        tdm_list_init(&p->match[b].unexp);
    }
    tdm_lock_init(&p->copy_lock);
    tdm_lock_init(&p->hooks_lock);
    tdm_list_init(&p->copyq);
    tdm_list_init(&p->rdmaq);
    p->peers = aligned_alloc(TDM_CACHELINE, (size_t)p->size * sizeof(tdm_p2p_peer_t));
    p->txq = calloc((size_t)p->size, sizeof(tdm_list_t));
    p->rtrq = calloc((size_t)p->size, sizeof(tdm_list_t));
    p->rx = calloc((size_t)p->size, sizeof(tdm_rx_cursor_t));
    p->tx_count = calloc((size_t)p->size, sizeof(uint32_t));
    p->rx_count = calloc((size_t)p->size, sizeof(uint32_t));
    p->txlog = calloc((size_t)p->size * TDM_TXLOG, sizeof(tdm_txlog_ent_t));
    p->rndv_out = calloc((size_t)p->size, sizeof(uint32_t));
    if (!p->peers || !p->txq || !p->rx || !p->rtrq || !p->tx_count || !p->rx_count || !p->txlog ||
        !p->rndv_out) {
        tdm_error(P2P, "out of memory for %d peers", p->size);
        *what_p = "out of memory for the per-peer queues";
        return -1;
    }
    for (int i = 0; i < p->size; i++) {
        tdm_lock_init(&p->peers[i].lock);
        tdm_list_init(&p->txq[i]);
        tdm_list_init(&p->rtrq[i]);
    }
    if (tdm_p2p_select_init() != 0 || tdm_p2p_adapt_init() != 0) {
        *what_p = "the rendezvous protocol settings are invalid";
        return -1;
    }
    if (TDM_PARAM_I(PROTO_INFO) && p->rank == 0)
        tdm_p2p_select_print(stderr);
    return 0;
}

/* Write queued items toward one peer (its pair lock held), in order, while the ring has room.
 * Each item is unlinked before it is pushed (completion hooks may free the
 * request or queue new packets to the same peer), so `tx_busy` follows the
 * queue's real emptiness at every step. */
static int tx_progress(int peer) {
    tdm_list_t *q = &tdm_p2p.txq[peer];
    int events = 0;
    while (!tdm_list_empty(q)) {
        tdm_txitem_t *it = TDM_CONTAINER_OF(q->next, tdm_txitem_t, link);
        tdm_list_remove(&it->link);
        if (tdm_list_empty(q))
            TDM_COUNTER_SUB(&tdm_p2p.tx_busy, 1);
        bool done;
        if (it->is_ctrl) {
            tdm_ctrl_t *c = (tdm_ctrl_t *)it;
            done = tdm_net_send_copy(peer, c->pkt, c->len, NULL, 0) == 0;
            if (done)
                free(c);
        } else {
            done = tdm_p2p_send_push(TDM_CONTAINER_OF(it, tdm_req_t, tx));
        }
        if (!done) {
            /* back to the head: order toward this peer is kept */
            if (tdm_list_empty(q))
                TDM_COUNTER_ADD(&tdm_p2p.tx_busy, 1);
            it->link.next = q->next;
            it->link.prev = q;
            q->next->prev = &it->link;
            q->next = &it->link;
            return events;
        }
        events++;
    }
    tdm_net_send_blocked(peer, false);
    return events;
}

/* The packet handlers by wire id (proto/registry.def). */
static void (*const handlers[TDM_PKT_TYPES])(int peer, const void *body) = {
#define TDM_PKT(_name, _wire, _handler) [_wire] = _handler,
#include "proto/registry.def"
#undef TDM_PKT
};

static void bad_packet(int peer, const void *body) {
    tdm_error(P2P, "unknown packet type %u from rank %d", *(const uint8_t *)body, peer);
    abort();
}

void tdm_p2p_handle_packet(int peer, const void *body) {
    uint8_t type = *(const uint8_t *)body;
    /* the eager packets directly, inline: through the table they would pay an
     * indirect call that the switch this replaced did not */
    if (TDM_LIKELY(type == TDM_PKT_EAGER_SHORT)) {
        tdm_eager_rx_short(peer, body);
        return;
    }
    if (type == TDM_PKT_EAGER) {
        tdm_eager_rx(peer, body);
        return;
    }
    if (TDM_UNLIKELY(type >= TDM_PKT_TYPES || !handlers[type]))
        bad_packet(peer, body);
    handlers[type](peer, body);
}

/* Handles up to 32 cells from the peer's ring: a bounded batch per peer keeps one busy
 * sender from starving the rest. Threaded, the caller holds the pair's lock. */
static inline int drain_peer(int peer) {
    int events = 0;
    for (; events < 32; events++) {
        void *body = tdm_net_recv_peek(peer);
        if (!body)
            break;
        tdm_p2p_handle_packet(peer, body);
        tdm_net_recv_release(peer);
    }
    return events;
}

/* A packet of a transport polled as a whole (net.h tdm_net_poll), under its pair's lock. */
static void remote_packet(int peer, const void *body) {
    tdm_lock_t *l = &tdm_p2p.peers[peer].lock;
    tdm_lock_acquire(l);
    tdm_p2p_handle_packet(peer, body);
    tdm_lock_release(l);
}

/* Progress when several threads may call in: a pair another thread holds is skipped (it
 * is being drained or written), a ring is looked at before its lock is tried (an idle
 * poll takes no lock), and the hooks of what completed run at the end with no lock held. */
static int progress_threaded(void) {
    int events = 0;
    int n = tdm_p2p.size, nshm = tdm_net.nlocal - 1;
    for (int i = 0; i < nshm; i++) {
        int peer = tdm_net.shm_peers[i];
        if (!tdm_net_recv_peek(peer))
            continue;
        tdm_lock_t *l = &tdm_p2p.peers[peer].lock;
        if (!tdm_lock_try(l))
            continue;
        events += drain_peer(peer);
        tdm_lock_release(l);
    }
    events += tdm_net_poll(remote_packet, 32);
    if (TDM_COUNTER_READ(&tdm_p2p.tx_busy)) {
        for (int peer = 0; peer < n; peer++) {
            tdm_lock_t *l = &tdm_p2p.peers[peer].lock;
            if (!tdm_lock_try(l))
                continue;
            if (!tdm_list_empty(&tdm_p2p.txq[peer]))
                events += tx_progress(peer);
            tdm_lock_release(l);
        }
    }
    events += tdm_rndv_copy_progress();
    if (TDM_LOAD_RELAXED(&tdm_p2p.rdma_len))
        events += tdm_rndv_rdma_progress();
    tdm_p2p_part_deferred_run();
    tdm_p2p_hooks_run();
    if (TDM_UNLIKELY(tdm_p2p_dump_pending) && !events)
        tdm_p2p_dump_deferred();
    if (TDM_UNLIKELY(tdm_p2p_async_on))
        tdm_p2p_async_after_progress();
    return events;
}

void tdm_p2p_poll_now_and_then(void) {
    static _Thread_local unsigned calls;
    /* (threaded, counting requests means a walk of every slot: the counter alone decides) */
    if ((!tdm_threaded && tdm_req_in_use() > 0) || (++calls & 15u) == 0)
        tdm_p2p_progress();
}

int tdm_p2p_progress(void) {
    if (TDM_UNLIKELY(tdm_threaded))
        return progress_threaded();
    int events = 0;
    int n = tdm_p2p.size, nshm = tdm_net.nlocal - 1;
    for (int i = 0; i < nshm; i++)
        events += drain_peer(tdm_net.shm_peers[i]);
    events += tdm_net_poll(remote_packet, 32);
    if (tdm_p2p.tx_busy) {
        for (int peer = 0; peer < n; peer++) {
            if (!tdm_list_empty(&tdm_p2p.txq[peer]))
                events += tx_progress(peer);
        }
    }
    if (TDM_UNLIKELY(!tdm_list_empty(&tdm_p2p.copyq)))
        events += tdm_rndv_copy_progress();
    if (TDM_UNLIKELY(tdm_p2p.rdma_len))
        events += tdm_rndv_rdma_progress();
    if (TDM_UNLIKELY(tdm_p2p_dump_pending) && !events)
        tdm_p2p_dump_deferred();
    return events;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* Block on the doorbell: announce it, then look once more, so that a producer
 * that published before seeing `sleeping` has its packet found here. Threaded, `sleeping`
 * counts the threads blocked, and a thread that completes a request or runs a hook rings
 * the doorbell when it is non-zero (tdm_p2p_wake_threads): the futex wakes them all. */
static void wait_block(bool (*done)(void *arg), void *arg) {
    bool counted = TDM_UNLIKELY(tdm_threaded);
    uint32_t seen = tdm_net_block_prepare(counted);
    if (!tdm_p2p_progress() && !done(arg))
        tdm_net_block(seen, tdm_p2p.block_us);
    tdm_net_block_done(counted);
}

/* Ranks outnumber cores: yield after `spins` empty polls, block after `yields`. */
static void wait_shared(bool (*done)(void *arg), void *arg) {
    long idle = 0;
    while (!done(arg)) {
        if (tdm_p2p_progress()) {
            idle = 0;
            continue;
        }
        idle++;
        if (idle < tdm_p2p.spins) {
            cpu_relax();
            continue;
        }
        if (idle < tdm_p2p.spins + tdm_p2p.yields) {
            sched_yield();
            TDM_COUNTER_ADD(&tdm_p2p_stats.wait_yields, 1);
            continue;
        }
        wait_block(done, arg);
        TDM_COUNTER_ADD(&tdm_p2p_stats.wait_blocks, 1);
        idle = tdm_p2p.spins; /* after a wake-up, yield before blocking again */
    }
}

/* Say that this process is polling, and on which CPU (shm.h `beat`). */
static uint32_t wait_beat(tdm_shm_proc_t *me, int *cpu_p) {
    uint32_t now = tdm_shm_clock();
    int cpu = sched_getcpu();
    atomic_store_explicit(&me->beat, now, memory_order_relaxed);
    atomic_store_explicit(&me->cpu, cpu, memory_order_relaxed);
    *cpu_p = cpu;
    return now;
}

/* Another rank, not blocked, last polled on this CPU: polling on would keep it off
 * the CPU it needs (unbound ranks that wake each other end up on one CPU). */
static bool cpu_shared(int cpu) {
    for (int p = 0; p < tdm_shm.nranks; p++) {
        tdm_shm_proc_t *o = &tdm_shm.procs[p];
        if (p != tdm_shm.rank && cpu >= 0 &&
            atomic_load_explicit(&o->cpu, memory_order_relaxed) == cpu &&
            !atomic_load_explicit(&o->sleeping, memory_order_relaxed))
            return true;
    }
    return false;
}

/* Whether another task of the machine wants this core, one the rank cannot see (another
 * job's rank; a rank of this job on a "node" of its own that shares the cores): this
 * thread then waits on the CPU's run queue a good share of the time (run_delay in
 * /proc/thread-self/schedstat). On a quiet core, or beside niced work, that share stays
 * under 10%; beside a task of equal weight it is near half (docs/performance.md). At 20%
 * or more over 50 ms, waits poll only WAIT_SPIN_CONTENDED_US before blocking, for a
 * second; twice as long each time contention returns within a period of the last one's
 * end (to 64 s). Read at most every 50 ms, by waits that poll that long. */
#define CONTENTION_WINDOW_UNITS (50u * 1000u * 1000u / 1024u) /* 50 ms */
#define CONTENTION_SHARE 20u                                  /* percent of the time */
#define CONTENDED_UNITS (1000u * 1000u * 1000u / 1024u)       /* 1 s */
#define CONTENDED_MAX_UNITS (64u * CONTENDED_UNITS)

static __thread struct {
    uint32_t at;        /* shm clock of the mark; 0: none yet */
    uint64_t run_delay; /* the thread's run_delay then (ns) */
} contention_mark;

/* This thread's time waiting on a run queue (ns), or -1. */
static int64_t run_delay_ns(void) {
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[96];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    unsigned long long delay; /* the second field; the first is time on the CPU */
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return sscanf(buf, "%*s %llu", &delay) == 1 ? (int64_t)delay : -1;
}

static void wait_contention(uint32_t now) {
    uint32_t span = now - contention_mark.at;
    if (contention_mark.at && span < CONTENTION_WINDOW_UNITS)
        return;
    int64_t delay = run_delay_ns();
    if (delay < 0)
        return;
    bool first = !contention_mark.at;
    uint64_t waited = (uint64_t)delay - contention_mark.run_delay;
    contention_mark.at = now | 1u;
    contention_mark.run_delay = (uint64_t)delay;
    if (first || waited * 100u < (uint64_t)CONTENTION_SHARE * span * 1024u)
        return;
    uint32_t until = TDM_LOAD_RELAXED(&tdm_p2p.contended_until);
    uint32_t len = TDM_LOAD_RELAXED(&tdm_p2p.contended_len);
    bool on = until && (int32_t)(until - now) > 0;
    if (!on) {
        /* contention back within a period of its end: the next period twice as long */
        bool back = until && (int32_t)(now - until) < (int32_t)len;
        len = back ? (len < CONTENDED_MAX_UNITS / 2 ? 2 * len : CONTENDED_MAX_UNITS)
                   : CONTENDED_UNITS;
        TDM_STORE_RELAXED(&tdm_p2p.contended_len, len);
        TDM_COUNTER_ADD(&tdm_p2p_stats.wait_contended, 1);
    }
    TDM_STORE_RELAXED(&tdm_p2p.contended_until, (now + len) | 1u);
}

/* How long a wait polls with nothing to do before it blocks (shm clock units). */
static inline uint32_t wait_spin_units(uint32_t now) {
    uint32_t until = TDM_LOAD_RELAXED(&tdm_p2p.contended_until);
    if (TDM_UNLIKELY(until) && (int32_t)(until - now) > 0)
        return tdm_p2p.spin_contended_units;
    return tdm_p2p.spin_units;
}

/* `waiting` counts the threads inside a wait (the dump says whether the rank waits). */
static inline int waiting_add(int d) {
    if (TDM_UNLIKELY(tdm_p2p_async_on) && !tdm_p2p_async_self())
        atomic_fetch_add_explicit(&tdm_shm_self()->app_waiting, (uint32_t)d, memory_order_relaxed);
    if (TDM_UNLIKELY(tdm_threaded)) {
        int n = __atomic_add_fetch(&tdm_p2p.waiting, d, __ATOMIC_RELAXED);
        if (n == 1 && d > 0 && TDM_UNLIKELY(tdm_p2p_async_on))
            tdm_p2p_async_wait_begin();
        return n;
    }
    return tdm_p2p.waiting += d;
}

/* The progress thread sleeps uncounted while a thread of ours waits (async.c): the first
 * one in uncounts it, the last one out counts it again if operations are still pending. */
static inline void wait_end(void) {
    if (waiting_add(-1) == 0 && TDM_UNLIKELY(tdm_p2p_async_on))
        tdm_p2p_async_wait_end();
}

/* Threaded, a wait first polls WAIT_UNCOUNTED times outside `waiting`: most blocking calls
 * end there, and counting costs two atomic adds on a line every thread shares. Safe: it only
 * spins (yields and sleeps are counted); `waiting` feeds heuristics, the dump and
 * MPI_Finalize's check for blocked threads, which misses a thread about to wait anyway;
 * the progress thread, which relies on it, makes every wait counted from the start. */
#define WAIT_UNCOUNTED 63

static bool wait_uncounted(bool (*done)(void *arg), void *arg) {
    for (int i = 0; i < WAIT_UNCOUNTED; i++) {
        if (done(arg))
            return true;
        if (!tdm_p2p_progress())
            cpu_relax();
    }
    return done(arg);
}

void tdm_p2p_wait_until(bool (*done)(void *arg), void *arg) {
    if (TDM_UNLIKELY(tdm_threaded) && !tdm_p2p_async_on && !tdm_p2p.oversubscribed &&
        wait_uncounted(done, arg))
        return;
    /* Several threads of this process waiting at once share the cores with each other
     * (and with the thread that will bring what they wait for): they wait as ranks that
     * outnumber cores do, yielding, never polling on a core another needs. */
    if (waiting_add(1) > 1 || tdm_p2p.oversubscribed) {
        wait_shared(done, arg);
        wait_end();
        return;
    }
    /* The core is ours: poll, and after WAIT_SPIN_US with nothing to do block until
     * a producer rings. The clock is read every 64 polls only (it also dates our
     * `beat`). After a wake-up that brought nothing, block again at the next look. */
    tdm_shm_proc_t *me = tdm_shm_self();
    unsigned polls = 0;
    bool busy = false, timing = false, woke = false;
    uint32_t idle_from = 0;
    while (!done(arg)) {
        bool moved = tdm_p2p_progress() != 0;
        busy |= moved;
        if (TDM_LIKELY((++polls & 63) != 0)) {
            if (!moved)
                cpu_relax();
            continue;
        }
        int cpu;
        uint32_t now = wait_beat(me, &cpu);
        if (tdm_p2p.spin_contended_units < tdm_p2p.spin_units)
            wait_contention(now);
        if (busy) {
            busy = woke = false;
            timing = true;
            idle_from = now;
            continue;
        }
        if (!timing) {
            timing = true;
            idle_from = now;
        }
        /* polling on only while no other thread of ours waits too (it may need the core) */
        if (!woke && now - idle_from < wait_spin_units(now) && !cpu_shared(cpu) &&
            (!tdm_threaded || TDM_LOAD_RELAXED(&tdm_p2p.waiting) <= 1))
            continue;
        for (long y = 0; y < tdm_p2p.yields && !busy && !done(arg); y++) {
            sched_yield();
            TDM_COUNTER_ADD(&tdm_p2p_stats.wait_yields, 1);
            busy = tdm_p2p_progress() != 0;
        }
        if (busy || done(arg))
            continue;
        wait_block(done, arg);
        TDM_COUNTER_ADD(&tdm_p2p_stats.wait_blocks, 1);
        woke = true;
    }
    wait_end();
}

static bool req_done(void *arg) {
    return tdm_req_done(arg);
}

void tdm_p2p_wait(tdm_req_t *req) {
    if (!tdm_req_done(req))
        tdm_p2p_wait_until(req_done, req);
}

static bool tx_idle(void *arg) {
    (void)arg;
    return TDM_COUNTER_READ(&tdm_p2p.tx_busy) == 0;
}

static void progress_cb(void) {
    tdm_p2p_progress();
}

void tdm_p2p_barrier(void) {
    /* everything queued must reach the rings before we say we are done */
    tdm_p2p.finalizing = 1;
    tdm_p2p_wait_until(tx_idle, NULL);
    tdm_net_barrier(progress_cb);
    tdm_net_quiet(); /* peers of other nodes may exit from now on */
    tdm_p2p.finalizing = 0;
}

/* A context no communicator ever has (ids are even and below 2^32 - 2): what
 * drain leaves in the queues can match nothing any more. */
#define DEAD_CTX 0xffffffffu

void tdm_p2p_drain(uint32_t keep_ctx) {
    tdm_p2p_async_stop(); /* what it still had to do, the wait below does */
    tdm_p2p_wait_until(tx_idle, NULL);
    /* What no receive will ever take (erroneous programs): a whole message is
     * dropped; one still arriving keeps its entry, which the peer's cursor names,
     * under a dead context. Receives still posted leave the queue, so that no
     * message of a later communicator on a reused context lands in them. */
    tdm_list_t *it, *tmp;
    for (int b = 0; b < TDM_MATCH_BUCKETS; b++) {
        tdm_p2p_bucket_t *bk = &tdm_p2p.match[b];
        tdm_lock_acquire(&bk->lock);
        tdm_list_for_each_safe(it, tmp, &bk->unexp) {
            tdm_unexp_t *ue = TDM_CONTAINER_OF(it, tdm_unexp_t, link);
            if ((ue->ctx & ~1u) == keep_ctx)
                continue;
            bool whole = ue->type == TDM_PKT_RTS
                             ? !(ue->flags & TDM_PKTF_PULL)
                             : ue->received == ue->size && tdm_p2p.rx[ue->src_world].ue != ue;
            if (whole && !ue->claimed && !ue->self_sreq) {
                if (ue->type == TDM_PKT_RTS && (ue->flags & TDM_PKTF_DATA))
                    tdm_net_rdma_drop(
                        (tdm_net_data_t *)(uintptr_t)ue->raddr); /* sender completes */
                tdm_p2p_unexp_remove(ue);
                tdm_p2p_unexp_free(ue);
            } else {
                ue->ctx = DEAD_CTX;
            }
        }
        tdm_list_for_each_safe(it, tmp, &bk->posted) {
            tdm_p2p_posted_remove(TDM_CONTAINER_OF(it, tdm_req_t, link));
        }
        tdm_lock_release(&bk->lock);
    }
    tdm_p2p_unexp_cache_fini();
    tdm_p2p_part_fini();
    if (TDM_PARAM_I(PROTO_STATS))
        tdm_p2p_stats_print();
}
