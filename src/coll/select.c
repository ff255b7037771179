/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Algorithm choice for every collective: TANDEM_<COLL>_ALGORITHM when set,
 * otherwise by message size against TANDEM_<COLL>_LARGE. When ranks outnumber
 * cores (TANDEM_OVERSUBSCRIBED, set by mpirun for every rank alike) the barrier,
 * the small Allreduce and every Bcast, Allgather, Alltoall and Reduce (up to
 * TANDEM_COLL_LINEAR_TMP_MAX held at the root, the binomial tree above) go
 * linear: there the cost is how often a rank must be scheduled, not how many
 * hops a message takes. The large-message algorithms of the reductions combine blocks in ring
 * order, so they are used for commutative ops only (a forced one falls back,
 * logged at debug level).
 */
#include "select.h"

#include "../base/lock.h"
#include "../base/log.h"
#include "../base/params.h"
#include "../net/net.h"

#include <stdio.h>
#include <string.h>

unsigned long long tdm_coll_algo_runs[TDM_COLL_NFLAT][TDM_COLL_MAX_ALGOS];
unsigned long long tdm_coll_algo_bytes[TDM_COLL_NFLAT][TDM_COLL_MAX_ALGOS];
unsigned long long tdm_coll_node_runs[TDM_COLL_NKINDS];
unsigned long long tdm_coll_node_bytes[TDM_COLL_NKINDS];

typedef struct coll_choice {
    const char *name;                      /* for log messages */
    tdm_param_id_t algo;                   /* TANDEM_<COLL>_ALGORITHM */
    tdm_param_id_t large;                  /* TANDEM_<COLL>_LARGE */
    const char *algos[TDM_COLL_MAX_ALGOS]; /* names of algorithms 0, 1 (and 2) */
    bool large_needs_commute;
    int large_min_size;        /* the large algorithm only pays from this many ranks */
    bool oversubscribed;       /* auto picks algorithm 1 when ranks outnumber cores,
                                  algorithm 0 otherwise (`large` is then unused) */
    bool linear_any_size;      /* oversubscribed, auto takes algorithm 2 at every size,
                                  not only below TANDEM_COLL_LINEAR_MAX */
    bool linear_tmp;           /* algorithm 2 keeps every rank's data at the root: at
                                  most TANDEM_COLL_LINEAR_TMP_MAX bytes of it */
    bool small_oversubscribed; /* oversubscribed, auto takes algorithm 0 at every
                                  size where it does not go linear (`large` is then
                                  unused) */
    int linear_min_size;       /* oversubscribed, auto takes algorithm 2 only from
                                  this many ranks */
} coll_choice_t;

static const coll_choice_t choices[TDM_COLL_NFLAT] = {
    [TDM_COLL_BCAST] = {"bcast",
                        TDM_PARAM_BCAST_ALGORITHM,
                        TDM_PARAM_BCAST_LARGE,
                        {"binomial", "scatter_ring", "linear"},
                        false,
                        3,
                        false,
                        /* oversubscribed, every receiver copying from the root at
                         * once beats trees and rings at every size: 4 ranks on 2
                         * cores, 256 KiB 44/38 -> 33 us, 4 MiB 774/779 -> 528 us
                         * (binomial/scatter_ring -> linear; Open MPI 37, 1043) */
                        true},
    [TDM_COLL_REDUCE] = {"reduce",
                         TDM_PARAM_REDUCE_ALGORITHM,
                         TDM_PARAM_REDUCE_LARGE,
                         {"binomial", "scatter_gather", "linear"},
                         true,
                         3,
                         false,
                         /* oversubscribed, the root combining every rank's data
                          * beat the tree and the ring at every size: 4 ranks on
                          * 2 cores, medians of 4 interleaved runs, 64 KiB 28 ->
                          * 11 us, 1 MiB 304 -> 109 us, 4 MiB 1.60 -> 1.35 ms
                          * (binomial/scatter_gather -> linear; Open MPI 35 us,
                          * 412 us, 2.5 ms). With the CPUs far apart it is the
                          * root's lone copying that counts: 1 MiB linear 445-454
                          * us, binomial 258-276, the ring 418-627 (Open MPI
                          * 300-309; 5 runs each, gated by the host probe);
                          * near, binomial 215 against linear 88 (Open MPI
                          * 273-292). Hence linear only up to
                          * TANDEM_COLL_LINEAR_TMP_MAX (2 MiB at the root: 512
                          * KiB on 4 ranks, linear 43 us near and 202-217 far,
                          * binomial 146 far; Open MPI 296-344), the tree above */
                         true,
                         true,
                         true},
    /* The ring from 3 ranks only. On 2 it is an exchange of halves, the op, and
     * an exchange of the reduced halves, which each side reads from the other
     * core's cache just after the op wrote them; recursive doubling's one
     * exchange reads the callers' buffers. 2 ranks, bench/coll, medians of 4
     * runs gated by the host probe, ring -> recursive doubling: CPUs far, 256
     * KiB 93.9 -> 30.4 us, 1 MiB 448 -> 109, 4 MiB 1374 -> 548 (Open MPI 157,
     * 581, 2301); near, 128 KiB 22.3 -> 13.6, 256 KiB 40.3 -> 27.6, 1 MiB
     * 105.9 -> 108.9, 4 MiB 637 -> 569 (Open MPI 31.5, 57.1, 140, 681).
     * (An older host had 2 ranks, 4 MiB: ring 0.80 ms, recursive doubling
     * 1.25.) Oversubscribed,
     * small messages go linear from 5 ranks: with request-less small messages
     * (sched.c), recursive doubling's two rounds beat the root's fan-in and
     * fan-out on 3 and 4 ranks, and lose from 6 (2 cores, bench/coll, medians
     * of 4-10 interleaved runs, 8 B, linear -> recursive doubling: 3 ranks 4.25
     * -> 3.19 us, 4 ranks 5.83 -> 4.52, 5 ranks 6.74 -> 6.55, 6 ranks 8.19 ->
     * 8.07, 8 ranks 11.9 -> 13.2; 1 KiB on 5 ranks 7.24 -> 7.86). */
    [TDM_COLL_ALLREDUCE] = {"allreduce",
                            TDM_PARAM_ALLREDUCE_ALGORITHM,
                            TDM_PARAM_ALLREDUCE_LARGE,
                            {"recursive_doubling", "ring", "linear"},
                            true,
                            3,
                            .linear_min_size = 5},
    [TDM_COLL_ALLGATHER] = {"allgather",
                            TDM_PARAM_ALLGATHER_ALGORITHM,
                            TDM_PARAM_ALLGATHER_LARGE,
                            {"bruck", "ring", "linear"},
                            false,
                            2,
                            false,
                            true},
    /* Oversubscribed, every exchange posted at once lets whichever rank runs
     * move whatever is ready; pairwise needs both partners of each round
     * scheduled together. 4 ranks on 2 cores, medians of 4 interleaved runs:
     * 64 KiB 73 -> 58 us, 256 KiB 217 -> 175 us, 1 MiB 1.66 -> 1.42 ms
     * (pairwise -> linear; Open MPI 65, 207, 1570). */
    [TDM_COLL_ALLTOALL] = {"alltoall",
                           TDM_PARAM_ALLTOALL_ALGORITHM,
                           TDM_PARAM_ALLTOALL_LARGE,
                           {"linear", "pairwise"},
                           false,
                           2,
                           .small_oversubscribed = true},
    /* Oversubscribed, what a barrier costs is how often each rank must be
     * scheduled: dissemination needs every rank in each of its log p rounds
     * (3 schedulings each on 4 ranks), fan-in/fan-out at rank 0 two. Rank 0
     * also leaves first, so a rooted collective that follows finds its
     * children already waiting. 4 ranks on 2 cores (bench/compare, with the
     * yield-at-once wait): Barrier 1.34x -> 0.99x the better of Open MPI and
     * MPICH; after it Scatter 4 B 2.87 -> 0.31 us, Bcast 4 B 2.97 -> 1.16. */
    [TDM_COLL_BARRIER] = {"barrier",
                          TDM_PARAM_BARRIER_ALGORITHM,
                          TDM_PARAM_COUNT,
                          {"dissemination", "linear"},
                          false,
                          2,
                          true},
};

/* Every kind's name, as the node-aware counters and TANDEM_COLL_INFO give it. */
static const char *const kind_names[TDM_COLL_NKINDS] = {
    [TDM_COLL_BCAST] = "bcast",           [TDM_COLL_REDUCE] = "reduce",
    [TDM_COLL_ALLREDUCE] = "allreduce",   [TDM_COLL_ALLGATHER] = "allgather",
    [TDM_COLL_ALLTOALL] = "alltoall",     [TDM_COLL_BARRIER] = "barrier",
    [TDM_COLL_GATHER] = "gather",         [TDM_COLL_SCATTER] = "scatter",
    [TDM_COLL_ALLGATHERV] = "allgatherv", [TDM_COLL_GATHERV] = "gatherv",
    [TDM_COLL_SCATTERV] = "scatterv"};

/* The TANDEM_<COLL>_ALGORITHM setting, parsed once: -1 auto, or 0/1/2; again after
 * a write through MPI_T (tdm_coll_reconfigure): a strcmp per call showed in small
 * Allreduce. */
static int parsed[TDM_COLL_NFLAT];
static bool done[TDM_COLL_NFLAT];
/* TANDEM_COLL_NODE_AWARE, parsed once as well */
enum { NODE_AUTO, NODE_ON, NODE_OFF };
static int node_mode;
static bool node_done;

void tdm_coll_reconfigure(void) {
    for (int k = 0; k < TDM_COLL_NFLAT; k++)
        TDM_STORE_RELEASE(&done[k], false);
    TDM_STORE_RELEASE(&node_done, false);
}

static int node_aware_mode(void) {
    if (TDM_LIKELY(TDM_LOAD_ACQUIRE(&node_done)))
        return TDM_LOAD_RELAXED(&node_mode);
    const char *v = TDM_PARAM_S(COLL_NODE_AWARE);
    int mode = NODE_AUTO;
    if (v && !strcmp(v, "on"))
        mode = NODE_ON;
    else if (v && !strcmp(v, "off"))
        mode = NODE_OFF;
    else if (v && *v && strcmp(v, "auto") != 0)
        tdm_warn(COLL, "unknown TANDEM_COLL_NODE_AWARE '%s' (known: auto, on, off); using auto", v);
    TDM_STORE_RELAXED(&node_mode, mode);
    TDM_STORE_RELEASE(&node_done, true);
    return mode;
}

static int forced_algo(tdm_coll_kind_t kind);

/* Which kinds have a node-aware form. */
static bool node_kind(tdm_coll_kind_t kind) {
    return kind != TDM_COLL_ALLTOALL;
}

/* The decision alone, for a communicator of several nodes (no counting). */
static const tdm_comm_nodes_t *node_decide(tdm_coll_kind_t kind, tdm_comm_t *comm, bool commute) {
    int mode = node_aware_mode();
    if (mode == NODE_OFF || !node_kind(kind) || comm->inter)
        return NULL;
    const tdm_comm_nodes_t *nm = tdm_comm_nodes(comm);
    if (!nm || nm->n < 2)
        return NULL;
    if (nm->max_local < 2 && mode != NODE_ON) /* one rank per node: no local step to save */
        return NULL;
    if (!commute && !nm->blocks) /* combining node by node would break rank order */
        return NULL;
    if (mode == NODE_AUTO && forced_algo(kind) >= 0) /* a flat algorithm asked for by name */
        return NULL;
    return nm;
}

bool tdm_coll_node_maybe(void) {
    return tdm_net.nodes > 1;
}

const tdm_comm_nodes_t *tdm_coll_node_choose(tdm_coll_kind_t kind, tdm_comm_t *comm, size_t bytes,
                                             bool commute) {
    /* a job of one node never gets further */
    if (TDM_LIKELY(tdm_net.nodes <= 1))
        return NULL;
    const tdm_comm_nodes_t *nm = node_decide(kind, comm, commute);
    if (nm) {
        TDM_COUNTER_ADD_LOOSE(&tdm_coll_node_runs[kind], 1);
        TDM_COUNTER_ADD_LOOSE(&tdm_coll_node_bytes[kind], bytes);
    }
    return nm;
}

static int forced_algo(tdm_coll_kind_t kind) {
    /* Allgatherv runs Allgather's algorithms; Gather(v) and Scatter(v) have one each */
    if (kind == TDM_COLL_ALLGATHERV)
        kind = TDM_COLL_ALLGATHER;
    else if (kind >= TDM_COLL_NFLAT)
        return -1;
    /* threads that parse it at once store the same value */
    if (TDM_LIKELY(TDM_LOAD_ACQUIRE(&done[kind])))
        return TDM_LOAD_RELAXED(&parsed[kind]);
    const coll_choice_t *c = &choices[kind];
    const char *forced = tdm_param_vals[c->algo].s;
    int algo = -1;
    if (forced && *forced && strcmp(forced, "auto") != 0) {
        for (int i = 0; i < TDM_COLL_MAX_ALGOS; i++)
            if (c->algos[i] && strcmp(forced, c->algos[i]) == 0)
                algo = i;
        if (algo < 0)
            tdm_warn(COLL, "unknown %s algorithm '%s' (known: auto, %s, %s%s%s); using auto",
                     c->name, forced, c->algos[0], c->algos[1], c->algos[2] ? ", " : "",
                     c->algos[2] ? c->algos[2] : "");
    }
    TDM_STORE_RELAXED(&parsed[kind], algo);
    TDM_STORE_RELEASE(&done[kind], true);
    return algo;
}

int tdm_coll_forced(tdm_coll_kind_t kind) {
    return forced_algo(kind);
}

/* The decision alone (the table printer uses it too); tdm_coll_choose counts it. */
static int decide(tdm_coll_kind_t kind, size_t bytes, int comm_size, bool commute) {
    const coll_choice_t *c = &choices[kind];
    int algo = forced_algo(kind);
    bool oversubscribed = TDM_PARAM_I(OVERSUBSCRIBED) != 0;
    if (algo < 0 && c->oversubscribed)
        algo = oversubscribed;
    else if (algo < 0 && c->algos[2] && oversubscribed && comm_size >= c->linear_min_size &&
             (bytes < (size_t)TDM_PARAM_I(COLL_LINEAR_MAX) ||
              (c->linear_any_size &&
               (!c->linear_tmp ||
                bytes <= (size_t)TDM_PARAM_I(COLL_LINEAR_TMP_MAX) / (size_t)comm_size))))
        algo = 2;
    else if (algo < 0 && c->small_oversubscribed && oversubscribed)
        algo = 0;
    else if (algo < 0)
        algo = bytes >= (size_t)tdm_param_vals[c->large].i && comm_size >= c->large_min_size;
    if (algo == 1 && c->large_needs_commute && !commute) {
        tdm_debug(COLL, "%s: %s needs a commutative op; using %s", c->name, c->algos[1],
                  c->algos[0]);
        algo = 0;
    }
    return algo;
}

int tdm_coll_decide(tdm_coll_kind_t kind, size_t bytes, int comm_size, bool commute) {
    return decide(kind, bytes, comm_size, commute);
}

int tdm_coll_choose(tdm_coll_kind_t kind, size_t bytes, int comm_size, bool commute) {
    int algo = decide(kind, bytes, comm_size, commute);
    /* every collective call passes here, from any thread: no locked add per call */
    TDM_COUNTER_ADD_LOOSE(&tdm_coll_algo_runs[kind][algo], 1);
    TDM_COUNTER_ADD_LOOSE(&tdm_coll_algo_bytes[kind][algo], bytes);
    return algo;
}

void tdm_coll_select_print(void *fp) {
    FILE *f = fp;
    static const size_t sizes[] = {4, 64, 1024, 16384, 65536, 262144, 1048576, 4194304};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    fprintf(f, "tandem: collective algorithms (bytes: whole buffer for bcast/reduce/allreduce,"
               " one rank's block for allgather/alltoall; commutative op)\n");
    for (int k = 0; k < TDM_COLL_NFLAT; k++) {
        const coll_choice_t *c = &choices[k];
        if (c->oversubscribed) { /* one choice for every size */
            fprintf(f, "  %s (0 = %s, 1 = %s): %d%s\n", c->name, c->algos[0], c->algos[1],
                    decide((tdm_coll_kind_t)k, 0, 2, true),
                    TDM_PARAM_I(OVERSUBSCRIBED) ? " (oversubscribed)" : "");
            continue;
        }
        fprintf(f, "  %s (0 = %s, 1 = %s", c->name, c->algos[0], c->algos[1]);
        if (c->algos[2])
            fprintf(f, ", 2 = %s", c->algos[2]);
        fprintf(f, ")\n    ranks");
        for (int i = 0; i < nsizes; i++)
            fprintf(f, " %7zu", sizes[i]);
        fputc('\n', f);
        for (int n = 2; n <= 8; n++) {
            fprintf(f, "    %5d", n);
            for (int i = 0; i < nsizes; i++) {
                fprintf(f, " %7d", decide((tdm_coll_kind_t)k, sizes[i], n, true));
            }
            fputc('\n', f);
        }
    }
}

void tdm_coll_node_print(void *fp, tdm_comm_t *comm, const char *name) {
    FILE *f = fp;
    const tdm_comm_nodes_t *nm = tdm_comm_nodes(comm);
    if (!nm)
        return;
    static const char *const modes[] = {[NODE_AUTO] = "auto", [NODE_ON] = "on", [NODE_OFF] = "off"};
    fprintf(f,
            "tandem: %s spans %d node%s, up to %d rank%s on one, ranks %s; node-aware (%s):", name,
            nm->n, nm->n == 1 ? "" : "s", nm->max_local, nm->max_local == 1 ? "" : "s",
            nm->blocks ? "node by node" : "interleaved", modes[node_aware_mode()]);
    int any = 0;
    for (int k = 0; k < TDM_COLL_NKINDS; k++)
        if (node_decide((tdm_coll_kind_t)k, comm, true)) {
            fprintf(f, " %s", kind_names[k]);
            any = 1;
        }
    if (!any)
        fprintf(f, " none");
    else if (!node_decide(TDM_COLL_ALLREDUCE, comm, false))
        fprintf(f, " (reductions: commutative ops only)");
    fputc('\n', f);
}

/* The counters as the registry (pvars.def) reads them. */
void tdm_coll_stats_print(int rank) {
    static const int runs_pv[TDM_COLL_NFLAT][TDM_COLL_MAX_ALGOS] = {
        [TDM_COLL_BCAST] = {TDM_COLL_PV_coll_bcast_binomial, TDM_COLL_PV_coll_bcast_scatter_ring,
                            TDM_COLL_PV_coll_bcast_linear},
        [TDM_COLL_REDUCE] = {TDM_COLL_PV_coll_reduce_binomial,
                             TDM_COLL_PV_coll_reduce_scatter_gather,
                             TDM_COLL_PV_coll_reduce_linear},
        [TDM_COLL_ALLREDUCE] = {TDM_COLL_PV_coll_allreduce_recursive_doubling,
                                TDM_COLL_PV_coll_allreduce_ring, TDM_COLL_PV_coll_allreduce_linear},
        [TDM_COLL_ALLGATHER] = {TDM_COLL_PV_coll_allgather_bruck, TDM_COLL_PV_coll_allgather_ring,
                                TDM_COLL_PV_coll_allgather_linear},
        [TDM_COLL_ALLTOALL] = {TDM_COLL_PV_coll_alltoall_linear,
                               TDM_COLL_PV_coll_alltoall_pairwise},
        [TDM_COLL_BARRIER] = {TDM_COLL_PV_coll_barrier_dissemination,
                              TDM_COLL_PV_coll_barrier_linear},
    };
    char line[640];
    int off = snprintf(line, sizeof(line), "tandem: rank %d collective algorithms:", rank);
    for (int k = 0; k < TDM_COLL_NFLAT && off < (int)sizeof(line); k++) {
        off += snprintf(line + off, sizeof(line) - (size_t)off, "%s %s", k ? "," : "",
                        choices[k].name);
        for (int a = 0; a < TDM_COLL_MAX_ALGOS && choices[k].algos[a] && off < (int)sizeof(line);
             a++)
            off +=
                snprintf(line + off, sizeof(line) - (size_t)off, " %s %llu", choices[k].algos[a],
                         (unsigned long long)tdm_pvar_u64(&tdm_coll_pvars[runs_pv[k][a]], NULL, 0));
    }
    /* after the flat ones, so the line's earlier fields read as before */
    off += off < (int)sizeof(line)
               ? snprintf(line + off, sizeof(line) - (size_t)off, "; node-aware:")
               : 0;
    for (int k = 0; k < TDM_COLL_NKINDS && off < (int)sizeof(line); k++)
        if (node_kind((tdm_coll_kind_t)k))
            off += snprintf(line + off, sizeof(line) - (size_t)off, " %s %llu", kind_names[k],
                            (unsigned long long)TDM_LOAD_RELAXED(&tdm_coll_node_runs[k]));
    fprintf(stderr, "%s\n", line);
    fprintf(
        stderr, "tandem: rank %d local copies of 4 MiB and up: memcpy %llu, stream %llu\n", rank,
        (unsigned long long)tdm_pvar_u64(&tdm_coll_pvars[TDM_COLL_PV_coll_copies_memcpy], NULL, 0),
        (unsigned long long)tdm_pvar_u64(&tdm_coll_pvars[TDM_COLL_PV_coll_copies_stream], NULL, 0));
}
