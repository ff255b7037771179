/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RTR parts of the selection policy (select.c), which the golden table
 * shows only for fixed loads: when a sender uses an announcement, and how the
 * receiver throttles announcements to a peer that leaves them unused; and the
 * adaptive choice between RGET and the pipeline for exchanges: which way it
 * takes from the times it was given, when it looks at the other way, which
 * times it leaves out, and how it follows a move of the host; and that no pair is given
 * a protocol needing a capability it lacks (the protocols' `caps`).
 */
#include "base/params.h"
#include "p2p/p2p_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

#define CHECK(_cond)                                                                               \
    do {                                                                                           \
        if (!(_cond)) {                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #_cond);              \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static void check_rtr_use(void) {
    tdm_select_in_t in = {.send_mode = TDM_MODE_STD};
    /* Isend x Irecv: COOP-load; the sender writes alone only when less loaded */
    CHECK(!tdm_p2p_select_rtr(&in));
    in.load_send = 3, in.load_recv = 3;
    CHECK(!tdm_p2p_select_rtr(&in));
    in.load_send = 4;
    CHECK(!tdm_p2p_select_rtr(&in));
    in.load_send = 2; /* one copy fewer: within TANDEM_COOP_LOAD_MARGIN (2), COOP */
    CHECK(!tdm_p2p_select_rtr(&in));
    in.load_send = 1;
    CHECK(tdm_p2p_select_rtr(&in));
    /* blocking sends, ready and buffered modes: Table II has the sender copy */
    in.load_send = 9, in.load_recv = 0;
    in.send_mode = TDM_MODE_STD | TDM_MODE_BLOCKING;
    CHECK(tdm_p2p_select_rtr(&in));
    in.send_mode = TDM_MODE_READY;
    CHECK(tdm_p2p_select_rtr(&in));
    in.send_mode = TDM_MODE_BUFFERED;
    CHECK(tdm_p2p_select_rtr(&in));
    in.send_mode = TDM_MODE_SYNC;
    CHECK(!tdm_p2p_select_rtr(&in));
}

/* COOP-load with the default margin of 2 */
static void check_coop_load(void) {
    tdm_select_in_t in = {.send_mode = TDM_MODE_STD, .size = 1 << 20, .cma = 1};
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_COOP);
    in.load_send = 1;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_COOP);
    in.load_send = 2;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    in.load_send = 3, in.load_recv = 1;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    in.load_send = 0, in.load_recv = 1;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_COOP);
    in.load_recv = 2;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RPUT);
    /* an exchange: each side reads what it receives */
    in.load_recv = 0, in.exchange = 1;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    in.send_mode = TDM_MODE_STD | TDM_MODE_BLOCKING, in.recv_blocking = 1;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    in.exchange = 0;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_COOP);
}

/* Send x Recv is COOP from TANDEM_COOP_MIN (8K) up, but only above the eager
 * limit: a rendezvous of the adaptive eager range has one side copy (RGET) */
static void check_coop_above_eager(void) {
    size_t saved = tdm_p2p.eager_limit, limit = 16384;
    tdm_p2p.eager_limit = limit;
    tdm_select_in_t in = {.send_mode = TDM_MODE_STD | TDM_MODE_BLOCKING,
                          .recv_blocking = 1,
                          .size = limit + 1,
                          .cma = 1};
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_COOP);
    in.size = limit;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    in.size = 12288;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    /* Isend x Irecv with equal loads is COOP-load's COOP above the limit only */
    in.send_mode = TDM_MODE_STD, in.recv_blocking = 0;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    in.size = limit + 1;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_COOP);
    /* a reduction's receive when the cores look apart: the receiver reads it all */
    in.send_mode = TDM_MODE_STD | TDM_MODE_BLOCKING, in.recv_blocking = 1;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_COOP);
    in.consume_far = 1;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    in.size = 1 << 20;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    in.consume_far = 0, in.send_mode = TDM_MODE_STD, in.recv_blocking = 0;
    /* a smaller eager limit leaves COOP from TANDEM_COOP_MIN */
    tdm_p2p.eager_limit = 4096;
    in.size = 12288;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_COOP);
    tdm_p2p.eager_limit = saved;
}

/* Exchanges up to TANDEM_EXCHANGE_PIPELINE_MAX (16K) go by the pipeline, but
 * only above the eager limit: below it a rendezvous is the adaptive eager
 * range's, whose other way is the ring already, so it reads by CMA */
static void check_exchange_pipeline(void) {
    size_t limit = tdm_p2p.eager_limit;
    tdm_select_in_t in = {.send_mode = TDM_MODE_STD, .size = 12288, .cma = 1, .exchange = 1};
    tdm_p2p.eager_limit = 8192;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_PIPELINE);
    tdm_p2p.eager_limit = 16384;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    in.size = 16384;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    tdm_p2p.eager_limit = 8192;
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_PIPELINE);
    in.size = 16385; /* above EXCHANGE_PIPELINE_MAX: RGET (the adaptive way is chosen later) */
    CHECK(tdm_p2p_select(&in) == TDM_PROTO_RGET);
    tdm_p2p.eager_limit = limit;
}

/* Whatever the inputs, a pair without CMA gets a protocol that needs none (the pipeline),
 * and a pair with it one whose needs it meets. */
static void check_caps(void) {
    static const uint8_t modes[] = {TDM_MODE_STD, TDM_MODE_SYNC, TDM_MODE_READY, TDM_MODE_BUFFERED};
    static const uint64_t sizes[] = {1024, 12288, 65536, 1 << 20, (uint64_t)64 << 20};
    for (int cma = 0; cma < 2; cma++)
        for (unsigned m = 0; m < sizeof(modes); m++)
            for (int bits = 0; bits < 32; bits++)
                for (unsigned z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
                    tdm_select_in_t in = {
                        .send_mode = (uint8_t)(modes[m] | (bits & 1 ? TDM_MODE_BLOCKING : 0)),
                        .recv_blocking = (bits >> 1) & 1,
                        .exchange = (bits >> 2) & 1,
                        .sender_stalled = (bits >> 3) & 1,
                        .load_send = bits & 16 ? 0 : 9,
                        .load_recv = bits & 16 ? 9 : 0,
                        .size = sizes[z],
                        .cma = cma};
                    tdm_proto_id_t p = tdm_p2p_select(&in);
                    unsigned needs = tdm_protos[p]->caps & ~(cma ? TDM_CAP_CMA : 0u);
                    CHECK(!needs);
                    CHECK(cma || p == TDM_PROTO_PIPELINE);
                }
}

static void check_announce_throttle(void) {
    tdm_rtr_history_t h = {0};
    /* a peer that never uses them: the first 16 go out, then one in 16 */
    int made = 0;
    for (int i = 0; i < 16; i++)
        made += tdm_p2p_select_announce(&h);
    CHECK(made == 16);
    made = 0;
    for (int i = 0; i < 160; i++)
        made += tdm_p2p_select_announce(&h);
    CHECK(made == 10);
    /* the peer starts using them (only the probes, at first): within 12 probes
     * announcements resume in full */
    for (int i = 0; i < 16 * 12; i++) {
        if (tdm_p2p_select_announce(&h))
            h.used++;
    }
    made = 0;
    for (int i = 0; i < 32; i++) {
        int a = tdm_p2p_select_announce(&h);
        made += a;
        h.used += (unsigned)a;
    }
    CHECK(made == 32);
    /* a peer that uses every one is never throttled, however long it runs */
    tdm_rtr_history_t all = {0};
    made = 0;
    for (int i = 0; i < 1000; i++) {
        int a = tdm_p2p_select_announce(&all);
        made += a;
        all.used += (unsigned)a;
    }
    CHECK(made == 1000);
}

/* one timed receive of 1 KiB taking `ns_per_kib` */
static void feed(tdm_adapt_cell_t *c, bool pipeline, uint64_t ns_per_kib) {
    tdm_adapt_record(c, pipeline, ns_per_kib, 1024);
}

/* Decisions until the next one that differs from `way`, taking them (at most `max`). */
static int run_of(tdm_adapt_cell_t *c, bool way, unsigned warm0, unsigned warm1, int max,
                  uint64_t cost) {
    int n = 0;
    while (n < max) {
        tdm_adapt_cell_t save = *c;
        if (tdm_adapt_choose(c, warm0, warm1) != way) {
            *c = save;
            break;
        }
        feed(c, way, cost);
        n++;
    }
    return n;
}

static void check_adapt(void) {
    CHECK(tdm_adapt_class(16384) == 0);
    CHECK(tdm_adapt_class(16385) == 0);
    CHECK(tdm_adapt_class(32768) == 1);
    CHECK(tdm_adapt_class(65536 + 1) == 2);
    CHECK(tdm_adapt_class(1 << 20) == 6);
    CHECK(tdm_adapt_class(64u << 20) == TDM_ADAPT_CLASSES - 1);
    /* the pipeline runs cold until its ring has cycled once: 512 KiB ring */
    CHECK(tdm_adapt_warm(512 << 10, 65536) == 9);
    CHECK(tdm_adapt_warm(512 << 10, 1 << 20) == 2);
    CHECK(tdm_adapt_warm(512 << 10, 100000) == 7);

    const unsigned warm = 9;
    tdm_adapt_cell_t c = {0};
    /* the first use of a cell runs cold: its first receive is not timed */
    CHECK(!tdm_adapt_choose(&c, 1, warm));
    feed(&c, false, 900);
    CHECK(tdm_adapt_cost(&c, 0) == 0);
    /* a first sample of RGET, then of the pipeline: the pipeline's first
     * `warm` receives are not timed, and it is kept until it has a time */
    CHECK(!tdm_adapt_choose(&c, 1, warm));
    feed(&c, false, 100);
    CHECK(tdm_adapt_cost(&c, 0) == 100);
    for (unsigned i = 0; i < warm + 3; i++) {
        CHECK(tdm_adapt_choose(&c, 1, warm));
        if (i < warm + 1)
            feed(&c, true, i < warm ? 900 : 50); /* cold ones are ignored */
    }
    CHECK(tdm_adapt_cost(&c, 1) == 50);
    /* the pipeline is cheaper; RGET is looked at again after at most 64
     * decisions (cost-based: a look of 3 times 100% excess times 100 = 300,
     * capped at 64 until looks confirm the choice) */
    CHECK(tdm_adapt_period(&c, 1, warm) == 64);
    int n = run_of(&c, true, 1, warm, 1000, 50);
    CHECK(n >= 60 && n <= 64);
    /* the look: one untimed RGET receive, then TDM_ADAPT_SAMPLES timed ones */
    CHECK(run_of(&c, false, 1, warm, 100, 100) == 1 + TDM_ADAPT_SAMPLES);
    CHECK(tdm_adapt_cost(&c, 0) == 100);
    /* the look confirmed the pipeline: the next period doubles */
    n = run_of(&c, true, 1, warm, 1000, 50);
    CHECK(n >= 120 && n <= 128 + (int)warm);
    CHECK(run_of(&c, false, 1, warm, 100, 100) == 1 + TDM_ADAPT_SAMPLES);
    n = run_of(&c, true, 1, warm, 1000, 50);
    CHECK(n >= 250 && n <= 256 + (int)warm);
    CHECK(run_of(&c, false, 1, warm, 100, 100) == 1 + TDM_ADAPT_SAMPLES);
    /* back on the pipeline: its first `warm` receives are not timed */
    for (unsigned i = 0; i < warm; i++) {
        CHECK(tdm_adapt_choose(&c, 1, warm));
        feed(&c, true, 999);
    }
    CHECK(tdm_adapt_cost(&c, 1) == 50);
    /* the host moves the processes apart: the pipeline's times triple; two
     * slow receives outvote the one fast one left, and RGET takes over */
    for (int i = 0; i < 2; i++) {
        CHECK(tdm_adapt_choose(&c, 1, warm));
        feed(&c, true, 300);
    }
    CHECK(tdm_adapt_cost(&c, 1) == 300);
    CHECK(!tdm_adapt_choose(&c, 1, warm));
    feed(&c, false, 999); /* the first after a change is not timed */
    CHECK(tdm_adapt_cost(&c, 0) == 100);
    /* looks at the pipeline now cost 2x per exchange and last warm + 2: a long
     * period by cost, capped again (the host moved), but at 16 looks' length
     * rather than 64: a look is at most a seventeenth of the decisions */
    const int look = (int)warm + TDM_ADAPT_SAMPLES;
    CHECK(tdm_adapt_period(&c, 1, warm) == (unsigned)(16 * look));
    n = run_of(&c, false, 1, warm, 1000, 100);
    CHECK(n >= 16 * look - 4 && n <= 16 * look);
    /* a look at the pipeline lasts warm + TDM_ADAPT_SAMPLES; the host has put
     * the processes back: its fresh times win */
    CHECK(run_of(&c, true, 1, warm, (int)warm + TDM_ADAPT_SAMPLES + 10, 40) ==
          (int)warm + TDM_ADAPT_SAMPLES + 10);
    CHECK(tdm_adapt_cost(&c, 1) == 40);
    CHECK(tdm_adapt_cost(&c, 0) == 100);

    /* one outlier of the way taken does not turn the choice */
    tdm_adapt_cell_t d = {.cost = {{100, 100, 100}, {50, 50, 50}}, .way = 1};
    feed(&d, true, 1000);
    CHECK(tdm_adapt_cost(&d, 1) == 50);
    CHECK(tdm_adapt_choose(&d, 1, warm));
    /* a time for a way no longer current is left out */
    d.way = 0;
    feed(&d, true, 1000);
    feed(&d, true, 1000);
    CHECK(tdm_adapt_cost(&d, 1) == 50);
    /* close costs: looked at every 16 decisions */
    tdm_adapt_cell_t e = {.cost = {{100, 100, 100}, {95, 95, 95}}, .cap = 4096};
    CHECK(tdm_adapt_period(&e, 1, warm) == 16);
    /* far apart and confirmed: 3 decisions x 900% x 100; at most 4096 */
    e.cost[1][0] = e.cost[1][1] = e.cost[1][2] = 10;
    CHECK(tdm_adapt_period(&e, 1, warm) == 2700);
    e.cost[1][0] = e.cost[1][1] = e.cost[1][2] = 5;
    CHECK(tdm_adapt_period(&e, 1, warm) == 4096);
    /* way 0 with a warm-up of its own (the eager range: its first messages after
     * rendezvous ones write cells that are no longer the sender's): after a
     * change to way 0, the first warm0 completions are not timed */
    tdm_adapt_cell_t w = {.cost = {{0, 0, 0}, {50, 50, 50}}, .way = 1, .begun = 1};
    CHECK(run_of(&w, false, 10, 1, 100, 100) == 11);
    CHECK(tdm_adapt_cost(&w, 0) == 100);
    CHECK(tdm_adapt_choose(&w, 10, 1));
    /* a fresh cell leaves its first warm0 completions of way 0 untimed (the
     * eager range's first messages fault in the ring's pages) */
    tdm_adapt_cell_t f = {0};
    for (int i = 0; i < 10; i++) {
        CHECK(!tdm_adapt_choose(&f, 10, 1));
        feed(&f, false, 999);
    }
    CHECK(tdm_adapt_cost(&f, 0) == 0);
    CHECK(!tdm_adapt_choose(&f, 10, 1));
    feed(&f, false, 100);
    CHECK(tdm_adapt_cost(&f, 0) == 100);
    /* completions of the way looked at that come after the look ended (a
     * window of sends went that way) count in the next look's length */
    tdm_adapt_cell_t g = {
        .cost = {{100, 100, 100}, {50, 50, 50}}, .way = 1, .begun = 1, .look_best = 1};
    CHECK(tdm_adapt_period(&g, 1, 1) == 64);
    for (int i = 0; i < 30; i++)
        feed(&g, false, 100);
    CHECK(tdm_adapt_cost(&g, 0) == 100);
    g.n = tdm_adapt_period(&g, 1, 1) - 1;
    CHECK(!tdm_adapt_choose(&g, 1, 1)); /* the look begins */
    CHECK(tdm_adapt_period(&g, 1, 1) == 16 * (1 + TDM_ADAPT_SAMPLES + 30));
    /* a message is timed from its send, or from the previous completion from
     * its sender if later (a stream: the gap between completions) */
    CHECK(tdm_p2p_adapt_start(1000, 0) == 1000);
    CHECK(tdm_p2p_adapt_start(1000, 400) == 1000);
    CHECK(tdm_p2p_adapt_start(1000, 1500) == 1500);
    CHECK(tdm_p2p_adapt_start(0xffffff00u, 0x11u) == 0x11u); /* the clock wrapped */
    CHECK(tdm_p2p_adapt_start(0x11u, 0xffffff00u) == 0x11u);
    /* a pair that sends the range both ways follows the lower rank's timing:
     * the lower rank's sends take the way it timed for the peer's messages,
     * as long as one of those came within the last 200 us */
    CHECK(tdm_p2p_range_paired(0, 1, 5000, 4000));
    CHECK(!tdm_p2p_range_paired(1, 0, 5000, 4000)); /* the higher rank follows as usual */
    CHECK(!tdm_p2p_range_paired(0, 1, 5000, 0));    /* nothing received: a stream */
    CHECK(!tdm_p2p_range_paired(0, 1, 300000, 4000));
    CHECK(tdm_p2p_range_paired(2, 7, 0x100u, 0xffffff00u)); /* the clock wrapped */
    /* and a look at way 0 lasts warm0 + TDM_ADAPT_SAMPLES decisions */
    tdm_adapt_cell_t l = {.cost = {{100, 100, 100}, {50, 50, 50}}, .way = 1};
    l.n = tdm_adapt_period(&l, 10, 1) - 1;
    CHECK(!tdm_adapt_choose(&l, 10, 1));
    CHECK(run_of(&l, false, 10, 1, 100, 100) == 10 + TDM_ADAPT_SAMPLES - 1);
}

/* Forced RTR: always announce, always use. Parameters are read once per
 * process, so this runs in a child with its own environment. */
/* CMA copy pieces: 2 MiB, or 512 KiB when ranks outnumber cores, unless
 * TANDEM_COPY_CHUNK is set, which then applies to both (at least 4 KiB: a
 * smaller setting is refused, and the defaults stay). The tunables are read
 * once per process: each setting gets a child. */
static int chunk_child(const char *set, size_t want, size_t want_over) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TANDEM_COPY_CHUNK", set, 1);
        setenv("TANDEM_LOG", "error", 1); /* the refusal's message */
        tdm_params_init();
        CHECK(tdm_p2p_copy_chunk_param(false) == want);
        CHECK(tdm_p2p_copy_chunk_param(true) == want_over);
        _exit(failures ? 1 : 0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "copy chunk checks failed with TANDEM_COPY_CHUNK=%s\n", set);
        return 1;
    }
    return 0;
}

static void check_copy_chunk_default(void) {
    CHECK(tdm_p2p_copy_chunk_param(false) == (size_t)2 << 20);
    CHECK(tdm_p2p_copy_chunk_param(true) == (size_t)512 << 10);
}

static int check_forced_rtr(void) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TANDEM_RNDV_PROTOCOL", "rtr", 1);
        tdm_params_init();
        if (tdm_p2p_select_init() != 0)
            _exit(2);
        tdm_rtr_history_t h = {.sent = 50, .used = 0};
        CHECK(tdm_p2p_select_announce(&h));
        tdm_select_in_t in = {.send_mode = TDM_MODE_STD, .load_send = 5};
        CHECK(tdm_p2p_select_rtr(&in));
        check_caps(); /* forced: RPUT where CMA serves, the pipeline where it does not */
        _exit(failures ? 1 : 0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "forced rtr checks failed\n");
        return 1;
    }
    return 0;
}

/* The node dimension: a sender on another node gets RGET over RDMA when its RTS brought
 * a key, RPUT when only the receive can be keyed, the pipeline otherwise, whatever the
 * call types, loads, exchange or stall; never a CMA protocol, never an adaptive choice;
 * its own eager limit, and no adaptive eager range. */
static void check_remote(const char *forced) {
    bool fr = forced && !strcmp(forced, "rput"), fp = forced && !strcmp(forced, "pipeline");
    bool fg = forced && !strcmp(forced, "rget"), fa = forced && !strcmp(forced, "am");
    /* the sender attaches its message to the RTS (auto, am): any contiguous one, a
     * non-contiguous one packed up to 64 MiB; forced otherwise, never */
    bool attach = !forced || fa;
    CHECK(tdm_p2p_select_data(true, (size_t)1 << 20) == attach);
    CHECK(tdm_p2p_select_data(true, (size_t)1 << 30) == attach);
    CHECK(tdm_p2p_select_data(false, (size_t)64 << 20) == attach);
    CHECK(!tdm_p2p_select_data(false, ((size_t)64 << 20) + 1));
    fp = fp || fa; /* a bare RTS under forced am: nothing could be attached, the pipeline */
    static const uint8_t modes[] = {TDM_MODE_STD, TDM_MODE_STD | TDM_MODE_BLOCKING, TDM_MODE_SYNC,
                                    TDM_MODE_BUFFERED | TDM_MODE_BLOCKING, TDM_MODE_READY};
    for (size_t m = 0; m < sizeof(modes); m++) {
        for (int rb = 0; rb < 2; rb++) {
            tdm_select_in_t in = {.send_mode = modes[m],
                                  .recv_blocking = rb,
                                  .size = 1 << 20,
                                  .cma = 1, /* stale: CMA never serves another node */
                                  .load_send = 5,
                                  .exchange = rb,
                                  .one_out = rb,
                                  .sender_stalled = !rb,
                                  .remote = 1,
                                  .rdma_get = 1,
                                  .rdma_put = 1};
            tdm_proto_id_t p = tdm_p2p_select(&in);
            CHECK(p == (fp ? TDM_PROTO_PIPELINE : fr ? TDM_PROTO_RPUT_RDMA : TDM_PROTO_RGET_RDMA));
            CHECK(tdm_p2p_select_adaptive(&in, p) == -1);
            in.rdma_get = 0;
            p = tdm_p2p_select(&in);
            CHECK(p == (fp || fg ? TDM_PROTO_PIPELINE : TDM_PROTO_RPUT_RDMA));
            in.rdma_put = 0;
            CHECK(tdm_p2p_select(&in) == TDM_PROTO_PIPELINE);
        }
    }
    /* the eager limit between nodes is its own */
    size_t saved = tdm_p2p.eager_limit, saved_r = tdm_p2p.eager_limit_remote;
    tdm_p2p.eager_limit = 16384;
    tdm_p2p.eager_limit_remote = tdm_p2p_eager_limit_remote_param();
    CHECK(tdm_p2p.eager_limit_remote == (size_t)128 << 10);
    CHECK(tdm_p2p_select_send(131072, true) == TDM_SEND_EAGER);
    CHECK(tdm_p2p_select_send(131073, true) == TDM_SEND_RNDV);
    CHECK(tdm_p2p_select_send(262144, true) == TDM_SEND_RNDV);
    CHECK(tdm_p2p_select_send(32768, false) == TDM_SEND_RNDV);
    /* 12 KiB is in the adaptive eager range locally (auto), never between nodes */
    CHECK(tdm_p2p_select_send(12288, true) == TDM_SEND_EAGER);
    tdm_p2p.eager_limit_remote = 0;
    CHECK(tdm_p2p_select_send(1, true) == TDM_SEND_RNDV);
    tdm_p2p.eager_limit = saved;
    tdm_p2p.eager_limit_remote = saved_r;
}

static int check_remote_forced(const char *forced) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TANDEM_RNDV_PROTOCOL", forced, 1);
        tdm_params_init();
        if (tdm_p2p_select_init() != 0)
            _exit(2);
        check_remote(forced);
        _exit(failures ? 1 : 0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "remote checks failed with TANDEM_RNDV_PROTOCOL=%s\n", forced);
        return 1;
    }
    return 0;
}

int main(void) {
    setenv("TANDEM_RNDV_PROTOCOL", "auto", 1);
    failures += check_remote_forced("rget");
    failures += check_remote_forced("rput");
    failures += check_remote_forced("pipeline");
    failures += check_remote_forced("am");
    failures += check_forced_rtr();
    failures += chunk_child("1m", (size_t)1 << 20, (size_t)1 << 20);
    failures += chunk_child("4k", 4096, 4096);
    failures += chunk_child("4095", (size_t)2 << 20, (size_t)512 << 10);
    tdm_params_init();
    if (tdm_p2p_select_init() != 0)
        return 1;
    check_copy_chunk_default();
    check_rtr_use();
    check_coop_load();
    check_exchange_pipeline();
    check_coop_above_eager();
    check_announce_throttle();
    check_caps();
    check_adapt();
    check_remote(NULL);
    if (failures)
        return 1;
    printf("p2p_select: ok\n");
    return 0;
}
