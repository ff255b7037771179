/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timing bookkeeping of the adaptive choices (adapt.c); the choices' rules
 * are select.c's. Three kinds, each a base/adapt.h cell per peer and size class:
 *  - the eager range (TANDEM_EAGER_ADAPTIVE_MIN up to the eager limit): ring or
 *    rendezvous. The sender stamps the message (the cell prefix's spare word);
 *    the receiver times stamp to completion and publishes the cheaper way in
 *    the pair's word TDM_PAIR_EAGER_RNDV; the sender follows.
 *  - exchanges (a rendezvous each way at once): RGET or the pipeline, timed by
 *    the pair's lower rank from match to the end of both transfers and published
 *    in TDM_PAIR_XCHG_PIPELINE; the higher rank follows.
 *  - one-way rendezvous with both calls blocking: the table's protocol or the
 *    pipeline, timed by the receiver alone.
 * Why each is so: docs/performance.md ("The adaptive choices").
 *
 * Owner: the thread that progresses the engine (every table and pending entry
 * here); a pair word is written by one side only (named below) and read by both.
 */
#ifndef TDM_P2P_ADAPT_H
#define TDM_P2P_ADAPT_H

#include "req.h"
#include "../base/adapt.h"
#include "../net/shm.h"

#include <stdbool.h>
#include <stdint.h>

/* The words of the pair slot (net/shm.h `upper`) this engine owns. */
enum {
    /* slot (lower, higher) only: bit k set while exchanges of size class k between
     * the two go by the pipeline; written by the lower rank */
    TDM_PAIR_XCHG_PIPELINE,
    /* slot (sender, receiver): bit k set while the receiver has the eager range's
     * messages of class k come by rendezvous; written by the receiver */
    TDM_PAIR_EAGER_RNDV,
    TDM_PAIR_WORDS
};
_Static_assert(TDM_PAIR_WORDS <= TDM_SHM_PAIR_UPPER, "the engine's pair words fit the slot");

static inline _Atomic uint32_t *tdm_p2p_pair_word(int src, int dst, int word) {
    return &tdm_shm_pair(src, dst)->upper[word];
}

/* Adaptive kinds, as the counters index them. */
enum { TDM_ADAPT_XCHG, TDM_ADAPT_ONEWAY, TDM_ADAPT_EAGER, TDM_ADAPT_KINDS };

/* Read the settings (at tdm_p2p_init). */
int tdm_p2p_adapt_init(void);

/* A stamp: the low 32 bits of CLOCK_MONOTONIC in ns, never 0. */
uint32_t tdm_p2p_stamp(void);
/* Receiver, an RTS stamped `stamp` matched now: the stamp to keep, moved back by
 * the RTS's travel time (the FIN's trip back, which the receiver cannot see). */
uint32_t tdm_p2p_rndv_stamp(uint32_t stamp);
/* When a message stamped `stamp` could start to cost: its stamp, or the previous
 * timed completion from that sender (`prev_done`, 0: none) if that is later. */
uint32_t tdm_p2p_adapt_start(uint32_t stamp, uint32_t prev_done);

/* Sender, a message of the eager range (select.c said TDM_SEND_RANGE): 0 when
 * the peer could not read it (a buffer it cannot address, no CMA), else its
 * stamp; *rndv: the receiver's word says rendezvous. */
uint32_t tdm_p2p_adapt_eager_send(int peer, size_t bytes, const tdm_dtype_t *dt, bool *rndv);
/* Receiver: a stamped receive completed; `rndv`: it came by rendezvous. */
void tdm_p2p_eager_adapt_done(tdm_req_t *r, bool rndv);
/* The eager range between me and `peer` sends some class by rendezvous, either
 * way (its receivers timed a CMA read faster than the ring: no shared cache). */
bool tdm_p2p_range_cma(int peer);

/* Receiver, an RTS matched and select.c named adaptive kind `kind`
 * (TDM_ADAPT_XCHG or TDM_ADAPT_ONEWAY): true to go by the pipeline. Arms the
 * timing that tdm_p2p_adapt_done closes. */
bool tdm_p2p_adapt_rndv(tdm_req_t *r, int kind, uint64_t size);
/* An adaptive receive completed: record its time (an exchange's when my send
 * to the peer has completed too). */
void tdm_p2p_adapt_done(tdm_req_t *r);
/* My last rendezvous send to `peer` completed. */
void tdm_p2p_adapt_sends_done(int peer);

#endif
