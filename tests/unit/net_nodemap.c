/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node map and the transports over it: TANDEM_NODE_SPLIT's ways of making nodes of
 * one host (tdm_boot_node_split, on a one-node map and on a map of two real nodes, and
 * the values it refuses); a node's segment sized and indexed by its own ranks (two
 * processes that are world ranks 1 and 3 of a job of 4 exchange packets through a
 * segment of 2, and neither sees ranks 0 and 2 as local); and tdm_net_init, which serves
 * the ranks of one node by shm + CMA and the ranks of other nodes by UCX (net/remote.c:
 * the addresses traded through the job's memfd, packets of every size in order both ways
 * while the receiver blocks on its doorbell, the job-wide barrier, and a peer's death
 * reported with its rank and host) or, with no transport built for other nodes, refuses
 * a map that spans two with the ranks named.
 */
#include "base/params.h"
#include "boot/boot.h"
#include "net/net.h"
#include "p2p/wire.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* Split `map` (n ranks) by `how`; compare with `want` and its node count. */
static void split_case(const char *how, const int *map, int n, const int *want, int nodes) {
    int got[16];
    char why[256] = "";
    memcpy(got, map, (size_t)n * sizeof(int));
    int k = tdm_boot_node_split(how, got, n, why, sizeof(why));
    if (k != nodes) {
        fprintf(stderr, "TANDEM_NODE_SPLIT=%s: %d nodes, expected %d (%s)\n", how, k, nodes, why);
        failures++;
        return;
    }
    for (int r = 0; r < n; r++)
        if (got[r] != want[r]) {
            fprintf(stderr, "TANDEM_NODE_SPLIT=%s: rank %d on node %d, expected %d\n", how, r,
                    got[r], want[r]);
            failures++;
        }
}

static void check_split(void) {
    const int one[6] = {0, 0, 0, 0, 0, 0};
    split_case("off", one, 4, (const int[]){0, 0, 0, 0}, 1);
    split_case("", one, 3, (const int[]){0, 0, 0}, 1);
    split_case("nolocal", one, 4, (const int[]){0, 1, 2, 3}, 4);
    split_case("odd-even", one, 5, (const int[]){0, 1, 0, 1, 0}, 2);
    split_case("2", one, 5, (const int[]){0, 0, 1, 1, 2}, 3);
    split_case("6", one, 5, (const int[]){0, 0, 0, 0, 0}, 1);
    /* two real nodes, their ranks alternating: each node is split on its own, and the
     * nodes are numbered by their lowest ranks */
    const int two[6] = {0, 1, 0, 1, 0, 1};
    split_case("off", two, 6, (const int[]){0, 1, 0, 1, 0, 1}, 2);
    split_case("2", two, 6, (const int[]){0, 1, 0, 1, 2, 3}, 4);
    split_case("odd-even", (const int[]){0, 0, 1, 1}, 4, (const int[]){0, 1, 2, 3}, 4);
    split_case("nolocal", two, 2, (const int[]){0, 1}, 2);
    /* ids from a launcher need not be dense: the result is */
    split_case("off", (const int[]){7, 7, 3, 3}, 4, (const int[]){0, 0, 1, 1}, 2);
    const char *bad[] = {"x", "0", "-2", "2x", "odd"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int map[2] = {0, 0};
        char why[256] = "";
        CHECK(tdm_boot_node_split(bad[i], map, 2, why, sizeof(why)) == -1);
        CHECK(strstr(why, "TANDEM_NODE_SPLIT=") && strstr(why, bad[i]));
    }
}

/* World ranks 1 and 3 of a job of 4 on one node: the child is 1 (local 0), the parent 3. */
static void check_segment(void) {
    int fd = memfd_create("net_nodemap", 0);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    const int locals[2] = {1, 3};
    CHECK(tdm_shm_bytes(2) < tdm_shm_bytes(4));
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        if (tdm_shm_init(fd, 0, locals, 2, 0, 4) != 0)
            _exit(2);
        bad |= tdm_shm.bytes != tdm_shm_bytes(2);
        bad |= tdm_shm_is_local(0) || !tdm_shm_is_local(1) || tdm_shm_is_local(2);
        bad |= tdm_shm_proc(1) != &tdm_shm.procs[0] || tdm_shm_self() != &tdm_shm.procs[0];
        char *b;
        while (!(b = tdm_shm_send_reserve(3)))
            ;
        memcpy(b, "ping", 5);
        tdm_shm_send_commit(3);
        while (!(b = tdm_shm_recv_peek(3)))
            usleep(100);
        bad |= strcmp(b, "pong") != 0;
        tdm_shm_recv_release(3);
        tdm_shm_fini();
        _exit(bad ? 1 : 0);
    }
    CHECK(tdm_shm_init(fd, 0, locals, 2, 1, 4) == 0);
    CHECK(tdm_shm.nranks == 2 && tdm_shm.rank == 1 && tdm_shm.bytes == tdm_shm_bytes(2));
    CHECK(tdm_shm_proc(3) == &tdm_shm.procs[1] && tdm_shm_proc(1)->pid == (int32_t)pid);
    CHECK(tdm_shm_pair(1, 3) == &tdm_shm.pairs[1] && tdm_shm_pair(3, 1) == &tdm_shm.pairs[2]);
    char *b;
    while (!(b = tdm_shm_recv_peek(1)))
        usleep(100);
    CHECK(strcmp(b, "ping") == 0);
    tdm_shm_recv_release(1);
    while (!(b = tdm_shm_send_reserve(1)))
        ;
    memcpy(b, "pong", 5);
    tdm_shm_send_commit(1);
    int st = -1;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    tdm_shm_fini();
    close(fd);
}

/* tdm_net_init over a one-node map of 2 (this process and a child), then over a map of
 * two nodes, which this build refuses (no transport reaches another node). */
static void check_net_init(void) {
    int fd = memfd_create("net_nodemap", 0);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    const int node_of[2] = {0, 0};
    tdm_net_config_t cfg = {.size = 2, .node_of = node_of, .nodes = 1, .shm_fd = fd};
    const char *what = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        cfg.rank = 1;
        _exit(tdm_net_init(&cfg, &what) == 0 && tdm_net.nlocal == 2 ? 0 : 1);
    }
    cfg.rank = 0;
    CHECK(tdm_net_init(&cfg, &what) == 0);
    CHECK(tdm_net.nlocal == 2 && tdm_net.shm_peers[0] == 1 && tdm_net.nodes == 1);
    CHECK(tdm_net_local(1) && tdm_net.peer[1].tp == TDM_NET_SHM);
    CHECK(tdm_net_caps(1) == (TDM_NET_CAP_CELLS | TDM_NET_CAP_CMA));
    CHECK(tdm_net_body_size(1) == tdm_shm_body_size());
    int st = -1;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    tdm_net_fini();

#ifdef TDM_NET_HAVE_REMOTE
    close(fd);
#else
    /* rank 0 of a job whose rank 1 is on another node: refused, and said so */
    int err[2];
    CHECK(pipe(err) == 0);
    pid = fork();
    if (pid == 0) {
        dup2(err[1], 2);
        const int two[2] = {0, 1};
        tdm_net_config_t c2 = {.rank = 0, .size = 2, .node_of = two, .nodes = 2, .shm_fd = fd};
        const char *w = NULL;
        int rc = tdm_net_init(&c2, &w);
        _exit(rc == -1 && w && strstr(w, "other nodes") ? 0 : 1);
    }
    close(err[1]);
    char out[1024] = "";
    size_t got = 0;
    ssize_t n;
    while (got < sizeof(out) - 1 && (n = read(err[0], out + got, sizeof(out) - 1 - got)) > 0)
        got += (size_t)n;
    close(err[0]);
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(strstr(out, "rank 1 is on node 1, this rank on node 0: this build has no inter-node "
                      "transport") != NULL);
    close(fd);
#endif
}

#ifdef TDM_NET_HAVE_REMOTE
/* ---- two nodes over UCX, in one memfd (TANDEM_NODE_SPLIT's case) ---- */

#define NPKT 200
static int rx_count, rx_bad;

/* packet i: its number, then bytes (i + k) & 255, of a length that varies with i */
static size_t pkt_len(int i) {
    return 8 + (size_t)i * 7919u % (tdm_net_body_size(1 - tdm_net.rank) - 8);
}

static void on_packet(int peer, const void *body) {
    int i;
    memcpy(&i, body, sizeof(i));
    const unsigned char *b = body;
    bool ok = peer == 1 - tdm_net.rank && i == rx_count;
    for (size_t k = 8; ok && k < pkt_len(i); k++)
        ok = b[k] == (unsigned char)(i + k);
    if (!ok && rx_bad++ < 3)
        fprintf(stderr, "rank %d: packet %d from rank %d is not packet %d or is damaged\n",
                tdm_net.rank, i, peer, rx_count);
    rx_count++;
}

static void progress(void) {
    tdm_net_poll(on_packet, 32);
}

/* Poll; block on the doorbell (with the remote transport armed) when nothing came. The
 * sleep has no useful timeout: only the transport's ring ends it. */
static void poll_or_block(void) {
    uint32_t seen = tdm_net_block_prepare(false);
    if (!tdm_net_poll(on_packet, 32))
        tdm_net_block(seen, 3600L * 1000000L);
    tdm_net_block_done(false);
}

static void fatal_hook(const char *why) {
    fprintf(stderr, "fatal: %s\n", why);
    _exit(42);
}

static int remote_rank(int fd, int rank) {
    const int node_of[2] = {0, 1};
    tdm_net_config_t cfg = {.rank = rank,
                            .size = 2,
                            .node_of = node_of,
                            .nodes = 2,
                            .shm_fd = fd,
                            .shm_shared = 1,
                            .fatal = fatal_hook};
    const char *what = NULL;
    if (tdm_net_init(&cfg, &what) != 0) {
        fprintf(stderr, "rank %d: tdm_net_init: %s\n", rank, what ? what : "?");
        return 1;
    }
    int peer = 1 - rank;
    CHECK(tdm_net.nodes == 2 && tdm_net.nlocal == 1 && !tdm_net_local(peer));
    CHECK(tdm_net.peer[peer].tp == TDM_NET_REMOTE &&
          tdm_net_caps(peer) == (TDM_NET_CAP_AM | TDM_NET_CAP_RDMA));
    CHECK(tdm_net_ucx() != NULL && tdm_net_body_size(peer) >= 4096);
    /* a 64 KiB eager message in one packet: its header and up to 63 bytes of alignment
     * pad beside the payload */
    CHECK(tdm_net_body_size(peer) >= (64u << 10) + sizeof(tdm_pkt_eager_t) + 63u);
    if (rank == 1) {
        for (int i = 0; i < NPKT; i++) {
            unsigned char *b;
            while (!(b = tdm_net_send_reserve(peer)))
                progress();
            memcpy(b, &i, sizeof(i));
            for (size_t k = 8; k < pkt_len(i); k++)
                b[k] = (unsigned char)(i + k);
            tdm_net_send_commit(peer, pkt_len(i));
        }
        while (rx_count < 1)
            poll_or_block();
    } else {
        while (rx_count < NPKT)
            poll_or_block();
        /* one packet back: rank 1 waits for it, blocked */
        int zero = 0;
        unsigned char *b;
        while (!(b = tdm_net_send_reserve(peer)))
            progress();
        memcpy(b, &zero, sizeof(zero));
        for (size_t k = 8; k < pkt_len(0); k++)
            b[k] = (unsigned char)k;
        tdm_net_send_commit(peer, pkt_len(0));
    }
    tdm_net_barrier(progress);
    if (rx_bad)
        return 1;
    if (rank == 1) {
        raise(SIGKILL); /* a node's process dies: rank 0 must hear it */
        return 1;
    }
    for (;;)
        poll_or_block(); /* ends in fatal_hook */
}

static void check_remote(void) {
    /* the peer's death is seen by the transport itself only in UCX's peer error mode:
     * these two processes share a host, where UCX has no connection to break (a job's
     * launcher ends it when a process dies, whatever the mode) */
    tdm_param_vals[TDM_PARAM_UCX_PEER_ERRORS].i = 1; /* (the environment was read) */
    int fd = memfd_create("net_nodemap_remote", 0);
    int err[2];
    CHECK(fd >= 0 && pipe(err) == 0);
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            dup2(err[1], 2);
            _exit(remote_rank(fd, r) + failures);
        }
    }
    close(err[1]);
    char out[4096] = "";
    size_t got = 0;
    ssize_t n;
    while (got < sizeof(out) - 1 && (n = read(err[0], out + got, sizeof(out) - 1 - got)) > 0)
        got += (size_t)n;
    close(err[0]);
    int st[2];
    for (int r = 0; r < 2; r++)
        waitpid(pid[r], &st[r], 0);
    CHECK(WIFSIGNALED(st[1]) && WTERMSIG(st[1]) == SIGKILL);
    CHECK(WIFEXITED(st[0]) && WEXITSTATUS(st[0]) == 42);
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    char want[200];
    snprintf(want, sizeof(want), "fatal: peer rank 1 (host %s) failed, seen by rank 0 (host %s)",
             host, host);
    CHECK(strstr(out, want) != NULL);
    /* the ranks end by the fatal hook or SIGKILL, not by their failure counts: their
     * checks fail by what they print */
    CHECK(strstr(out, "check failed") == NULL);
    if (failures)
        fprintf(stderr, "the two ranks said:\n%s", out);
    close(fd);
}
#endif

int main(void) {
    tdm_params_init();
    check_split();
    check_segment();
    check_net_init();
#ifdef TDM_NET_HAVE_REMOTE
    check_remote();
#endif
    if (failures)
        return 1;
    printf("net_nodemap: ok\n");
    return 0;
}
