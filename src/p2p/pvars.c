/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's performance variables (pvars.def) as a table for src/mpit and the printer. */
#include "p2p_impl.h"
#include "../base/params.h"
#include "../net/rdma.h"

#include <stdio.h>

tdm_p2p_stats_t tdm_p2p_stats;

static uint64_t tdm_p2p_pv_eager_long_msgs(int i) {
    (void)i;
    return TDM_COUNTER_READ(&tdm_p2p_stats.eager_msgs) -
           TDM_COUNTER_READ(&tdm_p2p_stats.short_msgs);
}
static uint64_t tdm_p2p_pv_eager_long_bytes(int i) {
    (void)i;
    return TDM_COUNTER_READ(&tdm_p2p_stats.eager_bytes) -
           TDM_COUNTER_READ(&tdm_p2p_stats.short_bytes);
}
static uint64_t tdm_p2p_pv_ring_bytes(int i) {
    (void)i;
    return tdm_shm.ring_bytes;
}
static uint64_t tdm_p2p_pv_requests_in_use(int i) {
    (void)i;
    return tdm_req_in_use();
}

int tdm_p2p_waiters(void) {
    return TDM_LOAD_RELAXED(&tdm_p2p.waiting);
}
static uint64_t tdm_p2p_pv_threads_waiting(int i) {
    (void)i;
    return (uint64_t)tdm_p2p_waiters();
}

static double tdm_p2p_pv_async_cpu(int i) {
    (void)i;
    return tdm_p2p_async_cpu_seconds();
}

const tdm_pvar_desc_t tdm_p2p_pvars[TDM_P2P_PV_COUNT] = {
#define TDM_PVAR(_id, ...) TDM_PVAR_DESC(TDM_P2P_PV_##_id, _id, __VA_ARGS__)
#include "pvars.def"
#undef TDM_PVAR
};
const int tdm_p2p_npvars = TDM_P2P_PV_COUNT;

/* The counters as the registry (pvars.def) reads them, summed over size classes. */
static unsigned long long pv(int id) {
    return (unsigned long long)tdm_pvar_sum(&tdm_p2p_pvars[id], NULL);
}

void tdm_p2p_stats_print(void) {
    static const int proto_pv[TDM_PROTO_COUNT] = {
#define TDM_PROTO(_id, _wire, _sym, _word, _what)                                                  \
    [TDM_PROTO_##_id] = TDM_P2P_PV_rndv_##_word##_msgs,
#include "proto/registry.def"
#undef TDM_PROTO
    };
    char line[768];
    int off = snprintf(line, sizeof(line),
                       "tandem: rank %d protocol stats: eager %llu (sent at once %llu), "
                       "received at once %llu, short %llu",
                       tdm_p2p.rank, pv(TDM_P2P_PV_eager_msgs), pv(TDM_P2P_PV_eager_sent_at_once),
                       pv(TDM_P2P_PV_received_at_once), pv(TDM_P2P_PV_eager_short_msgs));
    for (int i = 0; i < TDM_PROTO_COUNT; i++)
        off += snprintf(line + off, sizeof(line) - (size_t)off, ", %s %llu", tdm_p2p_proto_word(i),
                        pv(proto_pv[i]));
    snprintf(line + off, sizeof(line) - (size_t)off,
             "; copies %llu, bytes read %llu, bytes written %llu, cma fallbacks %llu, rtr "
             "announced %llu, adaptive eager %llu rendezvous %llu (pulled unexpected %llu), "
             "adaptive one-way pipeline %llu cma %llu, adaptive exchanges pipeline %llu rget "
             "%llu; read alone from a stalled sender %llu, waits yielded %llu blocked %llu "
             "contended %llu\n",
             pv(TDM_P2P_PV_cma_copies), pv(TDM_P2P_PV_cma_bytes_read),
             pv(TDM_P2P_PV_cma_bytes_written), pv(TDM_P2P_PV_cma_fallbacks),
             pv(TDM_P2P_PV_rtr_announced), pv(TDM_P2P_PV_adapt_eager_eager),
             pv(TDM_P2P_PV_adapt_eager_rndv), pv(TDM_P2P_PV_adapt_eager_pulled),
             pv(TDM_P2P_PV_adapt_oneway_pipeline), pv(TDM_P2P_PV_adapt_oneway_cma),
             pv(TDM_P2P_PV_adapt_exchange_pipeline), pv(TDM_P2P_PV_adapt_exchange_rget),
             pv(TDM_P2P_PV_rndv_stalled_rget), pv(TDM_P2P_PV_wait_yields),
             pv(TDM_P2P_PV_wait_blocks), pv(TDM_P2P_PV_wait_contended));
    fputs(line, stderr);
    if (tdm_net.nodes > 1) {
        tdm_net_rdma_stats_t r;
        tdm_net_rdma_stats(&r);
        fprintf(stderr,
                "tandem: rank %d between nodes: rdma reads %llu (queued for a token %llu), puts "
                "%llu, registrations cached %llu made %llu, messages attached to an rts %llu "
                "(streamed %llu), fetched %llu (streamed %llu)\n",
                tdm_p2p.rank, (unsigned long long)r.reads, (unsigned long long)r.reads_queued,
                (unsigned long long)r.writes, (unsigned long long)r.reg_hits,
                (unsigned long long)r.reg_misses, (unsigned long long)r.data_sent,
                (unsigned long long)r.streams, (unsigned long long)r.fetches,
                (unsigned long long)r.streams_fetched);
    }
    if (tdm_p2p_async_on)
        fprintf(stderr,
                "tandem: rank %d progress thread: wake-ups %llu, progress calls %llu, events "
                "%llu, cpu %.6f s\n",
                tdm_p2p.rank, pv(TDM_P2P_PV_async_wakeups), pv(TDM_P2P_PV_async_progress_calls),
                pv(TDM_P2P_PV_async_events), tdm_p2p_async_cpu_seconds());
}
