/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one place where protocol decisions are made.
 *
 *  - eager or rendezvous: by size (TANDEM_EAGER_LIMIT), in send.c's caller;
 *  - no CMA for the pair, or a buffer CMA cannot address: the two-copy pipeline;
 *  - TANDEM_RNDV_PROTOCOL=rget|rput|coop|pipeline: that protocol (rtr: receives
 *    announce themselves; a send that finds no usable announcement gets RPUT);
 *  - auto (COOP-hybrid, seed 000 §II-D):
 *      COOP-coll, Table II, where the call types decide:
 *                      Recv    Irecv
 *          Send        COOP    RPUT   (Ssend and Rsend as Send; Rsend x Irecv
 *          Isend       RGET    load    may already have used an RTR)
 *          Bsend       RGET    RPUT
 *      COOP-load where they don't (Isend x Irecv): the side with fewer copies
 *      pending copies, when it has TANDEM_COOP_LOAD_MARGIN fewer; COOP when
 *      the loads are closer than that (a difference of one copy is mostly
 *      transient: in the 3D stencil it sent 18% of the messages of a rank down
 *      a single-copy path and put copies per rank 1-3% apart, against 0-1.6%
 *      with a margin of 2);
 *      An Irecv posted before its send announces its buffer (RTR); the sender
 *      writes into it without an RTS where Table II has the sender copy
 *      (Send, Ssend, Rsend, Bsend x Irecv: RPUT) and, for Isend x Irecv, only
 *      when COOP-load would have the sender copy (it has fewer copies
 *      pending); otherwise it sends an RTS and the receiver decides as above;
 *      COOP only from TANDEM_COOP_MIN up (below it, splitting costs more than
 *      it gains: one side copies, RGET, with the fewest control packets), and
 *      only above the eager limit: a rendezvous of the adaptive eager range
 *      (8-16 KiB) is one its receiver timed as faster than the ring, which
 *      happens with the CPUs far, where COOP's extra CTS, syscall and FIN
 *      cost most. 2 ranks, bench/coll, every message of the range forced to
 *      rendezvous, CPUs far, medians of 5-6 runs, COOP -> RGET: Bcast 12 KiB
 *      4.21 -> 3.70 us, 16 KiB 4.26 -> 4.18; Reduce 5.27 -> 4.00, 5.20 ->
 *      4.36 (the root's op then reads lines its own core wrote, not the
 *      sender's); Scatter 4.38 -> 3.78; Gather 4.27 -> 3.90 (Open MPI
 *      3.6-4.3); with the CPUs near the range goes eagerly and nothing moves;
 *      no COOP either for a collective's receive whose data it combines at
 *      once (sched.c marks it, TDM_MODE_CONSUMES) when the pair's adaptive
 *      eager range goes by rendezvous (tdm_p2p_range_cma: its receivers
 *      timed CMA faster than the ring, as with the CPUs far): the op would
 *      then read the sender's half from the other core's cache. 2-rank
 *      Reduce, CPUs far, 5 gated runs, COOP -> RGET: 32 KiB 6.64 -> 5.39 us,
 *      64 KiB 9.24 -> 7.95, 128 KiB 14.79 -> 13.21 (Open MPI 5.33, 7.81,
 *      12.98). With the CPUs near COOP stays, and wins: 64 KiB 5.46 against
 *      7.06 by RGET (Open MPI 7.05);
 *      no COOP in an exchange (the receiver has rendezvous sends of its own
 *      to the sender in flight): both cores copy anyway, each its incoming
 *      message, and COOP's halves only add control packets and syscalls;
 *      an exchange larger than the eager limit and of at most
 *      TANDEM_EXCHANGE_PIPELINE_MAX bytes goes by the two-copy pipeline, when
 *      no rank waits for a core (a rendezvous at or below the eager limit is
 *      the adaptive eager range's, whose other way is the ring already, so it
 *      reads by CMA: 2-rank Allgather 16 KiB, CPUs far, medians of 8
 *      interleaved runs, 8.36 -> 5.36 us, near 2.63 -> 2.73): with both cores
 *      busy, copying through the ring (in cache at this size) costs less
 *      than a CMA read's page pinning. 2 ranks, bench/coll, medians of 6
 *      interleaved runs, RGET -> pipeline: Alltoall 12 KiB 4.19 -> 3.00 us,
 *      16 KiB 4.59 -> 3.61, 24 KiB 5.48 -> 5.18, 32 KiB 7.44 -> 6.87 (but
 *      6.09 -> 6.41 in another series), 48 KiB 8.24 -> 8.69; Allgather
 *      16 KiB 4.65 -> 3.70; bibw 12 KiB 6.0-8.1 -> 9.1-10.6 GB/s, 16 KiB
 *      7.5-9.9 -> 9.5-10.0, 24 KiB 9.5-12.5 -> 9.4-9.7;
 *      a larger exchange, up to TANDEM_EXCHANGE_ADAPTIVE_MAX, goes by RGET or by
 *      the pipeline, whichever took less time per byte lately between the pair
 *      (proto.h, adaptive exchanges): which one wins depends on where the host
 *      places the two processes. 2 ranks, bench/coll, medians of 6-8
 *      interleaved runs split by the host probe, CPUs near (c2c under 80 ns),
 *      RGET / pipeline forced / adaptive: Alltoall 64 KiB 12.4 / 8.1 / 8.3 us,
 *      256 KiB 44.3 / 29.0 / 29.4, 1 MiB 169.8 / 125.4 / 131.2, 4 MiB 1213 /
 *      975 / 1009; Allgather 64 KiB 12.7 / 7.0 / 8.2, 1 MiB 165 / 123 / 128;
 *      CPUs far: Alltoall 64 KiB 14.1 / 23.4 / 14.7, 1 MiB 176 / 379 / 186,
 *      Allgather 1 MiB 188 / 328 / 178 (Open MPI near 13.1, 173, 159; far
 *      14.9, 171, 175). On the host of 25 November the adaptive way lost at
 *      1-4 MiB and won below (medians of 10 runs, adaptive / RGET / Open MPI:
 *      Alltoall 256 KiB 23.9 / 28.3 / 29.2, 1 MiB 112 / 109 / 109, 4 MiB 799 /
 *      705 / 725; Allgather 256 KiB 26.9 / 27.6 / 30.1, 4 MiB 660 / 608 / 623),
 *      hence a 512 KiB default for a while; on the host of the next session
 *      the adaptive way won near at 1-4 MiB and lost nothing clear far (2
 *      ranks, bench/coll, 14 interleaved runs split by the host probe, up to
 *      512 KiB against up to 8 MiB (Open MPI): near, Allgather 1 MiB 157.7
 *      against 130.4 us (170.0), 2 MiB 323 against 296 (360); Alltoall 1 MiB
 *      159.7 against 128.2 (168.1), 2 MiB 411 against 340 (427), 4 MiB 1223
 *      against 1034 (1295); far, Allgather 1 MiB 169.2 against 168.2 (172.8),
 *      4 MiB 1259 against 1087 (1306); Alltoall 1 MiB 178.2 against 167.2
 *      (170.6), 4 MiB 1230 against 1192 (1206); a second series far, 4 MiB
 *      1186 against 1210 and 1333 against 1224), hence the 4 MiB default (the
 *      largest size bench/coll runs); it starts right above the eager limit
 *      (TANDEM_EXCHANGE_ADAPTIVE_MIN, 16 KiB). It started at 128 KiB for a
 *      while, on a host where below that the pipeline's looks cost more than
 *      they ever found (that day, bench/coll, 2 ranks, medians
 *      of 5 runs gated by the host probe, adaptive -> RGET alone: CPUs far,
 *      Allgather 32 KiB 7.27 -> 6.15 us, 64 KiB 10.16 -> 8.93, Alltoall
 *      64 KiB 9.27 -> 8.96 (Open MPI 6.87, 9.70, 9.49); CPUs near, Allgather
 *      32 KiB 5.49 -> 5.15, 64 KiB 8.15 -> 7.83, 96 KiB 12.36 -> 10.81,
 *      128 KiB 14.32 -> 13.85 (Open MPI 5.29, 8.00, 11.79, 13.93); at 256 KiB
 *      the pipeline still wins near, 25.8 against 28.6); on the host of the
 *      next session a CMA read cost a third more than the ring's two copies
 *      with the CPUs near, and the looks cost little far (2 ranks, bench/coll,
 *      10-12 interleaved runs split by the host probe, RGET alone -> adaptive
 *      (Open MPI): near, Allgather 24 KiB 7.03 -> 4.70 us (6.71), 32 KiB
 *      8.35 -> 5.16 (8.12), 64 KiB 12.85 -> 8.70 (14.22), 128 KiB 24.6 ->
 *      15.5 (26.3); Alltoall 32 KiB 8.38 -> 4.68 (8.26), 64 KiB 13.45 ->
 *      8.66 (12.43), 128 KiB 26.4 -> 16.7 (23.6); Allreduce 48 KiB 10.9 ->
 *      7.0 (18.8); far, Allgather 24 KiB 8.67 -> 9.05 (9.13), 64 KiB 14.80
 *      -> 14.76 (16.05), Alltoall 32 KiB 9.60 -> 9.74 (10.37), 64 KiB 14.84
 *      -> 15.27 (15.44), Allreduce 48 KiB 14.3 -> 15.8 (34.4));
 *      one way (no exchange), both calls blocking (Send, Ssend or Rsend x
 *      Recv), above the eager limit and up to TANDEM_RNDV_ADAPTIVE_MAX: the
 *      protocol above or the pipeline, whichever the receiver timed as the
 *      cheaper lately (proto.h, adaptive one-way rendezvous; not while
 *      the pair's adaptive eager range goes by rendezvous). 2 ranks, 10
 *      interleaved runs split by the host probe, off -> on (Open MPI): CPUs
 *      near, ping-pong 24 KiB 4.47 -> 2.46 us (5.21), 64 KiB 7.00 -> 4.19
 *      (9.37), 256 KiB 18.4 -> 13.8 (31.4), 512 KiB 34.2 -> 26.8 (56.7);
 *      bench/coll Bcast 32 KiB 5.63 -> 4.31 (5.84), 128 KiB 10.9 -> 7.65
 *      (15.5), Gather 32 KiB 5.91 -> 3.52 (7.28), 512 KiB 51.3 -> 39.7
 *      (71.4), Reduce 128 KiB 15.0 -> 10.2 (20.3), Scatter 32 KiB 5.82 ->
 *      3.46 (7.08); CPUs far (the looks at the pipeline cost): ping-pong
 *      24 KiB 5.99 -> 6.51 (6.56), 64 KiB 8.99 -> 9.01 (11.45), 512 KiB
 *      35.9 -> 38.5 (63.7); Bcast 32 KiB 7.12 -> 7.40 (7.03), Gather 32 KiB
 *      7.76 -> 8.25 (8.46), Scatter 32 KiB 7.17 -> 8.06 (8.32), 128 KiB
 *      17.0 -> 16.9 (21.2). At 1 MiB and above the pipeline no longer won
 *      near (Bcast 1 MiB 66.9 COOP against 69.4 forced pipeline, 4 MiB 231
 *      against 249) and lost two to three times far, hence 512 KiB;
 *      COOP-chunked for every CMA copy longer than TANDEM_COPY_CHUNK;
 *      no COOP when ranks outnumber cores (TANDEM_OVERSUBSCRIBED): both halves
 *      need both processes on a core at once, so a descheduled peer stalls
 *      the other; one side copies (RGET). 3D stencil, 1 MiB faces, 4 ranks on
 *      2 cores (medians of 6): COOP 1763 us, RGET 1503, RPUT 1887. Isend x
 *      Irecv then gets RGET whatever the loads: copies pending say little
 *      about who gets a core next (load-chosen RGET/RPUT put copies per rank
 *      up to 7.4% apart; RGET alone 0.2%).
 */
#include "p2p_impl.h"
#include "../base/params.h"
#include "../net/cma.h"
#include "../net/shm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const tdm_proto_t *const tdm_protos[TDM_PROTO_COUNT] = {
#define TDM_PROTO(_id, _sym, _opt) [TDM_PROTO_##_id] = &_sym,
#include "proto/registry.def"
#undef TDM_PROTO
};

static const char *const opt_names[TDM_PROTO_COUNT] = {
#define TDM_PROTO(_id, _sym, _opt) [TDM_PROTO_##_id] = _opt,
#include "proto/registry.def"
#undef TDM_PROTO
};

tdm_p2p_stats_t tdm_p2p_stats;
static tdm_proto_id_t forced = TDM_PROTO_AUTO;
static uint64_t coop_min;
static uint64_t exchange_pipeline_max;
static uint64_t exchange_adaptive_max;
static uint64_t exchange_adaptive_min;
static tdm_adapt_cell_t **adapt_tab;  /* per peer: TDM_ADAPT_CLASSES cells, made at first use */
static tdm_adapt_cell_t **eager_tab;  /* the same, for the adaptive eager range (as receiver) */
static tdm_adapt_cell_t **oneway_tab; /* the same, for one-way rendezvous (as receiver) */
static uint64_t rndv_adaptive_max;
static uint64_t eager_adaptive_min;
static bool eager_adaptive_rndv; /* test hook: the range always by rendezvous */
static int64_t load_margin;
static uint32_t stall_units; /* PEER_STALL_US in units of the shm clock; 0: never */
static bool oversubscribed;

const char *tdm_proto_name(tdm_proto_id_t id) {
    return id < TDM_PROTO_COUNT ? tdm_protos[id]->name : "auto";
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

/* Not oversubscribed, 16 KiB: a CMA read costs a system call and page pinning
 * that the ring does not (on this kernel the call also runs the host's BPF
 * hooks), and up to 16 KiB the ring won in both states of the host's vCPU
 * placement (bench/README.md, host probe). 2 ranks, eager limit 8 -> 16 KiB,
 * medians of 5-10 interleaved runs split by the probe, CPUs near / far:
 * ping-pong 16 KiB 4.30 -> 1.41 / 5.86 -> 4.72 us; window bandwidth 16 KiB
 * 4.1 -> 16.3 / 3.9 -> 5.6 GB/s; Reduce 16 KiB 5.47 -> 1.63 / 6.47 -> 2.40 us,
 * Bcast 4.13 -> 1.75 / 5.63 -> 2.45, Gather 4.53 -> 1.69 / 6.18 -> 4.43
 * (Open MPI 4.98 / 5.84). At 32 KiB the far state turns it round (ping-pong
 * 7.03 by rendezvous, 7.46 eager; 64 KiB 9.18 against 14.6), so the limit
 * stops at 16 KiB. (Earlier, with a fence on every ring publish, 16 KiB eager
 * took 9.8 us in the far state against 4.1 by rendezvous, and the limit was
 * 8 KiB.)
 * Oversubscribed, 16 KiB: a rendezvous costs scheduling round trips (the
 * receiver must run to copy, the sender to see it done), so on 4 ranks on 2
 * cores 16 KiB eager beat 8 KiB (Allreduce 16 KiB 28 -> 15 us). Larger limits
 * won more while the vCPUs shared a cache (limit 128 KiB, 8 interleaved runs:
 * all seven collectives faster at 128 KiB, Alltoall 111 -> 74 us) and lost
 * more when they did not (Bcast 64 KiB 14 -> 41 us) on the first host, so the
 * default is 16 KiB. On the second host, with the CPUs near, 128 KiB, the
 * quarter-ring cap, won at every size it touches:
 * 4 ranks on 2 cores, medians of 10 interleaved runs, 16 KiB -> 64 KiB limit,
 * 32 KiB / 64 KiB: Allgather 28.6 -> 13.2 / 45.8 -> 25.1 us, Allreduce 33.2 ->
 * 15.5 / 50.7 -> 26.9 (256 KiB 165 -> 86), Alltoall 28.3 -> 14.1 / 46.7 ->
 * 26.4, Bcast 6.7 -> 3.4 / 9.8 -> 6.4, Gather 6.5 -> 3.0 / 9.8 -> 4.8, Reduce
 * 8.6 -> 4.1 / 8.8 -> 6.1, Scatter 6.4 -> 3.7 / 9.5 -> 6.9, the other sizes
 * within 5%; 64 -> 128 KiB (6 runs), 128 KiB: Allgather 80.7 -> 45.4, Alltoall
 * 80.2 -> 45.6, Bcast 16.7 -> 11.4, Gather 16.1 -> 8.3, Reduce 14.2 -> 11.3,
 * Scatter 15.5 -> 11.9, 1 MiB unchanged (Open MPI at 64 KiB: 45.9-64.6 for the
 * exchanges, 9.4-21 for the rooted ones); 5 ranks, 16 KiB -> 128 KiB, 64 KiB:
 * Allreduce 84.6 -> 38.1, Allgather 73.5 -> 49.6, Bcast 10.0 -> 5.8. But with
 * the CPUs far (cache-line probe 170-185 ns) it lost twice as much: 64 KiB,
 * 16 KiB -> 128 KiB limit, Alltoall 52-64 -> 106-123 us, Scatter 11-12 ->
 * 19-56, Gather 12 -> 31, Allreduce 56 -> 90 (Open MPI 46-63, 11-16, 28, 95),
 * and in the published run of f5c5026 6 of Tandem's 11 rounds came far
 * (Alltoall 64 KiB 103 us by the median against 52.8), so the default went
 * back to 16 KiB. Either default is capped at a quarter of a ring: at half
 * a ring two exchanges in flight fill it (Allgather and Alltoall of 256 KiB:
 * 459-473 us eager against 166-190 by rendezvous). */
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

/* Each process_vm_readv call costs about 2 us here before it copies a byte (a
 * 12 KiB read took 2.7-3.1 us), so pieces of 512 KiB cost 2-rank exchanges of
 * 1-4 MiB 3-7%: bench/coll, medians of 5-6 runs, 512 KiB -> 2 MiB pieces, CPUs
 * far: Allgather 1 MiB 110.0 -> 106.1 us, 4 MiB 538 -> 518, Alltoall 1 MiB
 * 110.3 -> 106.6, Bcast 4 MiB 174 -> 165 (Open MPI 107.8, 522, 107.7, 328);
 * near: Allgather 1 MiB 107.9 -> 102.5, 4 MiB 568 -> 527, Alltoall 4 MiB 780
 * -> 720, Gather 4 MiB 307 -> 297 (Open MPI 104.2, 547, 751, 414); bandwidth
 * and ping-pong of 1-16 MiB unchanged. With ranks outnumbering cores the
 * smaller pieces stay: 4 ranks on 2 cores, 1 MiB, 512 KiB -> 2 MiB, Allgather
 * 619 -> 651, Bcast 151 -> 188, Scatter 113 -> 119 (Alltoall 742 -> 680). */
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
    tdm_p2p.copy_chunk = tdm_p2p_copy_chunk_param(tdm_p2p.oversubscribed);
}

int tdm_p2p_select_init(void) {
    const char *want = TDM_PARAM_S(RNDV_PROTOCOL);
    forced = TDM_PROTO_AUTO;
    read_thresholds();
    eager_adaptive_rndv = TDM_PARAM_I(TEST_EAGER_ADAPTIVE_RNDV) != 0;
    stall_units = (uint32_t)(TDM_PARAM_I(PEER_STALL_US) * 1000 / 1024);
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
                      "pipeline",
                      want);
            return -1;
        }
    }
    return 0;
}

tdm_proto_id_t tdm_p2p_select(const tdm_select_in_t *in) {
    if (!in->cma || forced == TDM_PROTO_PIPELINE)
        return TDM_PROTO_PIPELINE;
    if (forced == TDM_PROTO_RTR)
        return TDM_PROTO_RPUT; /* no announcement was usable: the sender copies */
    if (forced != TDM_PROTO_AUTO)
        return forced;
    if (in->sender_stalled)
        return TDM_PROTO_RGET; /* this process copies it all, whenever the sender runs */
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

/* A decision of an adaptive cell (kind TDM_ADAPT_*, for `peer` and size class
 * k), counted: a look at the way not taken begins when `judge` is set, and a
 * change of way raises tandem_adapt_changed. */
static bool adapt_choose_counted(tdm_adapt_cell_t *c, int kind, int peer, unsigned k,
                                 unsigned warm0, unsigned warm1) {
    uint8_t way0 = c->way, judge0 = c->judge;
    bool way = tdm_adapt_choose(c, warm0, warm1);
    if (c->judge && !judge0)
        tdm_p2p_stats.adapt_looks[kind][k]++;
    if (c->way != way0)
        TDM_EVENT_RAISE(ADAPT_CHANGED, peer, kind, k, c->way, c->judge);
    return way;
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

static tdm_adapt_cell_t *adapt_cell(int peer, uint64_t size) {
    return cell_of(&adapt_tab, peer, size);
}

uint32_t tdm_p2p_stamp(void) {
    return (uint32_t)now_ns() | 1u;
}

/* per peer, when the last timed receive of the adaptive eager range from it
 * completed (the low 32 bits of the clock, as the stamps) */
static uint32_t *range_done;

/* A pair that sends the range both ways (an exchange, a ping-pong): the lower
 * rank's timing decides both ways, so that a look turns both at once. Each
 * receiver deciding its own way left one way eager while the other looked at
 * rendezvous, and in that mixed state an exchange cost more than either way
 * (16 KiB, CPUs far: rendezvous looks of 8.2-9.5 us against 6.9-7.6 eager
 * kept Allgather eager, 7.8-8.7 us, while both ways by rendezvous take 4.7) */
#define TDM_RANGE_PAIRED_NS 200000u

bool tdm_p2p_range_paired(int me, int peer, uint32_t now, uint32_t last_done) {
    return me < peer && last_done && now - last_done < TDM_RANGE_PAIRED_NS;
}

bool tdm_p2p_range_cma(int peer) {
    int me = tdm_p2p.rank;
    if (eager_adaptive_rndv)
        return true;
    return (atomic_load_explicit(&tdm_shm_pair(peer, me)->eager_rndv, memory_order_relaxed) |
            atomic_load_explicit(&tdm_shm_pair(me, peer)->eager_rndv, memory_order_relaxed)) != 0;
}

uint32_t tdm_p2p_eager_adaptive(int peer, size_t bytes, const tdm_dtype_t *dt, bool *rndv) {
    *rndv = false;
    /* the size first: every eager send comes here. Only a buffer the receiver
     * can read takes the range, since one that comes unexpected is read at once
     * (engine.c) */
    if (!eager_adaptive_min || bytes <= eager_adaptive_min || bytes > tdm_p2p.eager_limit ||
        oversubscribed || forced != TDM_PROTO_AUTO || !tdm_layout_describable(dt) ||
        !tdm_cma_usable(peer))
        return 0;
    uint32_t stamp = tdm_p2p_stamp();
    /* the way the receiver timed as faster, or, from the lower rank of a pair
     * that has lately received the range from the peer too, the way it timed
     * for the peer's messages (the higher rank follows that one anyway) */
    bool paired = range_done && tdm_p2p_range_paired(tdm_p2p.rank, peer, stamp, range_done[peer]);
    _Atomic uint32_t *word = paired ? &tdm_shm_pair(peer, tdm_p2p.rank)->eager_rndv
                                    : &tdm_shm_pair(tdm_p2p.rank, peer)->eager_rndv;
    uint32_t bits = atomic_load_explicit(word, memory_order_relaxed);
    unsigned k = tdm_adapt_class(bytes);
    *rndv = eager_adaptive_rndv || ((bits >> k) & 1u);
    tdm_p2p_stats.adapt[TDM_ADAPT_EAGER][*rndv][k]++;
    return stamp;
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

void tdm_p2p_eager_adapt_done(tdm_req_t *r, bool rndv) {
    uint64_t bytes = r->msg_size;
    uint32_t now = (uint32_t)now_ns(), start = r->t_sent;
    r->t_sent = 0;
    /* timed from the send, or from the previous completion from that sender
     * (tdm_p2p_adapt_start): a stream by its gap between completions, its
     * throughput; a ping-pong by its latency */
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
     * first ones write cells whose lines are no longer the sender's (proto.h) */
    size_t body = tdm_shm_body_size();
    size_t cells = (bytes + sizeof(tdm_pkt_eager_t) + body - 1) / body;
    unsigned warm_eager = (unsigned)TDM_MIN(2u * tdm_shm.ncells / cells, 65535u);
    /* this message's cost, then the way for the sender's next ones */
    tdm_adapt_begin(c, warm_eager, 1);
    tdm_adapt_record(c, rndv, dt, bytes);
    unsigned k = tdm_adapt_class(bytes);
    bool want = adapt_choose_counted(c, TDM_ADAPT_EAGER, r->peer_world, k, warm_eager, 1);
    _Atomic uint32_t *word = &tdm_shm_pair(r->peer_world, tdm_p2p.rank)->eager_rndv;
    uint32_t bits = atomic_load_explicit(word, memory_order_relaxed);
    uint32_t next = want ? bits | (1u << k) : bits & ~(1u << k);
    if (next != bits) /* only the receiver writes the word */
        atomic_store_explicit(word, next, memory_order_relaxed);
}

/* An exchange ends when my send to the peer has completed too: a timed receive
 * that completes first waits here (one per peer: one message each way). */
typedef struct adapt_pending {
    tdm_adapt_cell_t *c;
    uint64_t t0, bytes;
    uint8_t pipeline, on;
} adapt_pending_t;
static adapt_pending_t *adapt_pend;

void tdm_p2p_adapt_done(tdm_req_t *r) {
    tdm_rndv_t *st = tdm_rndv(r);
    int peer = r->peer_world;
    tdm_adapt_cell_t *c = &(st->adapt_oneway ? oneway_tab : adapt_tab)[peer][st->adapt - 1];
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

void tdm_p2p_select_fini(void) {
    free(adapt_pend);
    adapt_pend = NULL;
    free(range_done);
    range_done = NULL;
    tdm_adapt_cell_t ***tabs[3] = {&adapt_tab, &eager_tab, &oneway_tab};
    for (int t = 0; t < 3; t++) {
        if (!*tabs[t])
            continue;
        for (int i = 0; i < tdm_p2p.size; i++)
            free((*tabs[t])[i]);
        free(*tabs[t]);
        *tabs[t] = NULL;
    }
}

/* A timed choice of an adaptive receive (exchange or one way): true for the
 * pipeline; the receive's completion records its time in `c`
 * (tdm_p2p_adapt_done). */
static bool adapt_timed(tdm_rndv_t *st, tdm_adapt_cell_t *c, int peer, uint64_t size, bool oneway) {
    bool pipeline =
        adapt_choose_counted(c, oneway ? TDM_ADAPT_ONEWAY : TDM_ADAPT_XCHG, peer,
                             tdm_adapt_class(size), 1, tdm_adapt_warm(tdm_shm.ring_bytes, size));
    st->adapt = (uint8_t)(tdm_adapt_class(size) + 1);
    st->adapt_oneway = oneway;
    st->t0 = now_ns();
    return pipeline;
}

/* The peer is neither polling (its beat is older than PEER_STALL_US) nor blocked in
 * a wait: preempted, or computing outside the library. */
static bool peer_stalled(int peer) {
    if (!stall_units || peer == tdm_p2p.rank)
        return false;
    const tdm_shm_proc_t *o = &tdm_shm.procs[peer];
    if (atomic_load_explicit(&o->sleeping, memory_order_relaxed))
        return false;
    uint32_t beat = atomic_load_explicit(&o->beat, memory_order_relaxed);
    return (int32_t)(tdm_shm_clock() - beat) > (int32_t)stall_units;
}

void tdm_p2p_rndv_matched(tdm_req_t *r, const tdm_rts_info_t *rts) {
    tdm_select_in_t in = {
        .send_mode = rts->mode,
        .recv_blocking = (r->mode & TDM_MODE_BLOCKING) != 0,
        .consume_far = (r->mode & TDM_MODE_CONSUMES) && tdm_p2p_range_cma(r->peer_world),
        .size = r->msg_size,
        .cma = r->peer_world != tdm_p2p.rank && tdm_cma_usable(r->peer_world) &&
               (rts->buf.contig || rts->buf.nsegs > 0) && tdm_layout_describable(r->dt),
        .load_send = atomic_load_explicit(&tdm_shm.procs[r->peer_world].copies_pending,
                                          memory_order_relaxed),
        .load_recv =
            atomic_load_explicit(&tdm_shm.procs[tdm_p2p.rank].copies_pending, memory_order_relaxed),
        .exchange = tdm_p2p.rndv_out[r->peer_world] > 0,
    };
    in.sender_stalled = in.cma && forced == TDM_PROTO_AUTO && peer_stalled(r->peer_world);
    tdm_proto_id_t p = tdm_p2p_select(&in);
    if (in.sender_stalled)
        tdm_p2p_stats.stalled_rget++;
    tdm_rndv_t *st = tdm_rndv(r);
    memset(st, 0, sizeof(*st));
    bool adaptive = forced == TDM_PROTO_AUTO && !oversubscribed;
    /* one message each way: with more in flight (a window of them) the ring
     * carries them one after another while CMA copies each at once, and the
     * pipeline lost (bibw 4 MiB 8.0-9.9 GB/s against 14.6-16.1) */
    if (p == TDM_PROTO_RGET && tdm_p2p.rndv_out[r->peer_world] == 1 &&
        in.size > exchange_pipeline_max && in.size > exchange_adaptive_min &&
        in.size <= exchange_adaptive_max && adaptive && !in.sender_stalled) {
        int me = tdm_p2p.rank, peer = r->peer_world;
        unsigned k = tdm_adapt_class(in.size);
        _Atomic uint32_t *word = &tdm_shm_pair(TDM_MIN(me, peer), TDM_MAX(me, peer))->xchg_pipeline;
        uint32_t bits = atomic_load_explicit(word, memory_order_relaxed);
        tdm_adapt_cell_t *c = me < peer ? adapt_cell(peer, in.size) : NULL;
        bool pipeline = (bits >> k) & 1u; /* the higher rank follows */
        if (c) {
            pipeline = adapt_timed(st, c, peer, in.size, false);
            uint32_t want = pipeline ? bits | (1u << k) : bits & ~(1u << k);
            if (want != bits) /* only the lower rank writes the word */
                atomic_store_explicit(word, want, memory_order_relaxed);
        }
        if (pipeline)
            p = TDM_PROTO_PIPELINE;
        tdm_p2p_stats.adapt[TDM_ADAPT_XCHG][pipeline][k]++;
    } else if (p != TDM_PROTO_PIPELINE && !in.exchange && in.size > tdm_p2p.eager_limit &&
               in.size <= rndv_adaptive_max && in.recv_blocking &&
               (in.send_mode & TDM_MODE_BLOCKING) &&
               (in.send_mode & (uint8_t)~TDM_MODE_BLOCKING) != TDM_MODE_BUFFERED && adaptive &&
               !in.sender_stalled && !tdm_p2p_range_cma(r->peer_world)) {
        /* one way, both calls blocking (proto.h, adaptive one-way rendezvous),
         * unless the pair's adaptive eager range says the cores share no cache */
        tdm_adapt_cell_t *c = cell_of(&oneway_tab, r->peer_world, in.size);
        bool pipeline = c && adapt_timed(st, c, r->peer_world, in.size, true);
        if (pipeline)
            p = TDM_PROTO_PIPELINE;
        if (c)
            tdm_p2p_stats.adapt[TDM_ADAPT_ONEWAY][pipeline][tdm_adapt_class(in.size)]++;
    }
    r->stage = TDM_RSTAGE_RNDV;
    r->proto = (uint8_t)p;
    r->remote_id = rts->sreq;
    r->offset = 0;
    tdm_p2p_stats.proto_msgs[p]++;
    tdm_p2p_stats.proto_bytes[p] += r->msg_size;
    TDM_EVENT_RAISE(RNDV_PROTOCOL, r->peer_world, (int64_t)r->msg_size, p);
    tdm_trace(P2P, "rendezvous of %zu bytes from rank %d: %s", r->msg_size, r->peer_world,
              tdm_proto_name(p));
    tdm_protos[p]->recv_start(r, rts);
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
    if (forced == TDM_PROTO_AUTO && stall_units) {
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
}

/* The counters as the registry (pvars.def) reads them, summed over size classes. */
static unsigned long long pv(int id) {
    return (unsigned long long)tdm_pvar_sum(&tdm_p2p_pvars[id], NULL);
}

void tdm_p2p_stats_print(void) {
    static const int proto_pv[TDM_PROTO_COUNT] = {
        [TDM_PROTO_PIPELINE] = TDM_P2P_PV_rndv_pipeline_msgs,
        [TDM_PROTO_RGET] = TDM_P2P_PV_rndv_rget_msgs,
        [TDM_PROTO_RPUT] = TDM_P2P_PV_rndv_rput_msgs,
        [TDM_PROTO_COOP] = TDM_P2P_PV_rndv_coop_msgs,
        [TDM_PROTO_RTR] = TDM_P2P_PV_rndv_rtr_msgs,
    };
    char line[640];
    int off = snprintf(line, sizeof(line),
                       "tandem: rank %d protocol stats: eager %llu (sent at once %llu), "
                       "received at once %llu, short %llu",
                       tdm_p2p.rank, pv(TDM_P2P_PV_eager_msgs), pv(TDM_P2P_PV_eager_sent_at_once),
                       pv(TDM_P2P_PV_received_at_once), pv(TDM_P2P_PV_eager_short_msgs));
    for (int i = 0; i < TDM_PROTO_COUNT; i++)
        off += snprintf(line + off, sizeof(line) - (size_t)off, ", %s %llu", opt_names[i],
                        pv(proto_pv[i]));
    snprintf(line + off, sizeof(line) - (size_t)off,
             "; copies %llu, bytes read %llu, bytes written %llu, cma fallbacks %llu, rtr "
             "announced %llu, adaptive eager %llu rendezvous %llu (pulled unexpected %llu), "
             "adaptive one-way pipeline %llu cma %llu, adaptive exchanges pipeline %llu rget "
             "%llu; read alone from a stalled sender %llu, waits yielded %llu blocked %llu\n",
             pv(TDM_P2P_PV_cma_copies), pv(TDM_P2P_PV_cma_bytes_read),
             pv(TDM_P2P_PV_cma_bytes_written), pv(TDM_P2P_PV_cma_fallbacks),
             pv(TDM_P2P_PV_rtr_announced), pv(TDM_P2P_PV_adapt_eager_eager),
             pv(TDM_P2P_PV_adapt_eager_rndv), pv(TDM_P2P_PV_adapt_eager_pulled),
             pv(TDM_P2P_PV_adapt_oneway_pipeline), pv(TDM_P2P_PV_adapt_oneway_cma),
             pv(TDM_P2P_PV_adapt_exchange_pipeline), pv(TDM_P2P_PV_adapt_exchange_rget),
             pv(TDM_P2P_PV_rndv_stalled_rget), pv(TDM_P2P_PV_wait_yields),
             pv(TDM_P2P_PV_wait_blocks));
    fputs(line, stderr);
}
