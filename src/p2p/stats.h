/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's counters (pvars.def declares each as an MPI_T performance variable).
 * Written by any thread with the macros below (base/lock.h); readers (MPI_T, the
 * printer) read them unlocked and may see a count one behind. */
#ifndef TDM_P2P_STATS_H
#define TDM_P2P_STATS_H

#include "adapt.h"
#include "proto.h"
#include "../base/lock.h"

#include <stdint.h>

/* The per-message counters of the eager paths (eager_msgs, eager_bytes, sent_at_once,
 * short_*, received_at_once). Threaded, a relaxed load and store: no atomic add on every
 * message (free of data races; an increment made by two threads at the same instant may
 * count once). Every other counter is TDM_COUNTER_ADD (exact), the queue levels atomic. */
#define TDM_P2P_STAT_ADD(_p, _v) TDM_COUNTER_ADD_LOOSE(_p, _v)

/* Counters, kept by plain increments; pvars.def declares each one as a
 * performance variable (MPI_T) and TANDEM_PROTO_STATS=1 prints them through
 * the same declarations. Adaptive choices are kept per size class
 * (tdm_p2p_adapt_class) and way. */
typedef struct tdm_p2p_stats {
    uint64_t eager_msgs, eager_bytes;      /* every eager send, short ones included */
    uint64_t sent_at_once;                 /* eager sends that left with no request */
    uint64_t short_msgs, short_bytes;      /* eager sends in one cache line (EAGER_SHORT) */
    uint64_t received_at_once;             /* receives of an arrived message, with no request */
    uint64_t proto_msgs[TDM_PROTO_COUNT];  /* rendezvous, by the side that chose the protocol */
    uint64_t proto_bytes[TDM_PROTO_COUNT]; /* their sizes */
    uint64_t bytes_read;                   /* copied by this rank with process_vm_readv */
    uint64_t bytes_written;                /* copied by this rank with process_vm_writev */
    uint64_t copies;                       /* CMA copy parts performed by this rank */
    uint64_t cma_fallbacks; /* rendezvous switched to DATA cells after a CMA failure */
    uint64_t rtr_announced, rtr_used;
    /* adaptive choices made, [kind][way][size class]: an exchange (0 RGET, 1 the
     * pipeline), a one-way rendezvous (0 CMA, 1 the pipeline), the eager range as
     * sent (0 eager, 1 rendezvous); and looks at the way not taken, [kind][class] */
    uint64_t adapt[TDM_ADAPT_KINDS][2][TDM_ADAPT_CLASSES];
    uint64_t adapt_looks[TDM_ADAPT_KINDS][TDM_ADAPT_CLASSES];
    uint64_t adapt_pulled; /* the eager range's rendezvous messages that came unexpected */
    /* queues (match.c): lengths, their watermarks, bytes the unexpected ones hold */
    uint64_t posted_len, posted_high;
    uint64_t unexp_len, unexp_high, unexp_low;
    uint64_t unexp_bytes, unexp_bytes_high;
    double match_time; /* seconds matching, kept while match_timing is non-zero */
    unsigned match_timing;
    uint64_t ring_full;    /* sends and control packets that waited for ring space */
    uint64_t stalled_rget; /* rendezvous read alone since their sender was not running */
    uint64_t wait_yields, wait_blocks; /* sched_yield calls and doorbell blocks of waits */
    uint64_t wait_contended;           /* times waits found the core contended (engine.c) */
    uint64_t async_wakeups, async_calls, async_events; /* the progress thread (async.c) */
} tdm_p2p_stats_t;
extern tdm_p2p_stats_t tdm_p2p_stats;
void tdm_p2p_stats_print(void);
/* Indices into tdm_p2p_pvars (p2p.h), one per line of pvars.def. */
enum {
#define TDM_PVAR(_id, ...) TDM_P2P_PV_##_id,
#include "pvars.def"
#undef TDM_PVAR
    TDM_P2P_PV_COUNT
};

#endif
