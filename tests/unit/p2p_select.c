/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RTR parts of the selection policy (select.c), which the golden table
 * shows only for fixed loads: when a sender uses an announcement, and how the
 * receiver throttles announcements to a peer that leaves them unused.
 */
#include "base/params.h"
#include "p2p/p2p_impl.h"

#include <stdio.h>
#include <stdlib.h>
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

/* Forced RTR: always announce, always use. Parameters are read once per
 * process, so this runs in a child with its own environment. */
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
        _exit(failures ? 1 : 0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "forced rtr checks failed\n");
        return 1;
    }
    return 0;
}

int main(void) {
    setenv("TANDEM_RNDV_PROTOCOL", "auto", 1);
    failures += check_forced_rtr();
    tdm_params_init();
    if (tdm_p2p_select_init() != 0)
        return 1;
    check_rtr_use();
    check_coop_load();
    check_announce_throttle();
    if (failures)
        return 1;
    printf("p2p_select: ok\n");
    return 0;
}
