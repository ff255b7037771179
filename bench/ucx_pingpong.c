/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UCX transport alone (src/net/ucx.h, no MPI): active-message ping-pong latency
 * and get bandwidth between two processes, to set against `ucx_perftest` over the
 * same path (docs/performance.md). The two find each other through files in DIR
 * (shared by the netns-cluster nodes: only the network is namespaced).
 *
 *   ucx_pingpong RANK DIR [SCALE]     RANK 0 or 1; SCALE multiplies the iterations
 *
 * e.g. netns-cluster exec node1 env UCX_TLS=tcp UCX_NET_DEVICES=ncl0 \
 *          build/tests/bench/ucx_pingpong 1 /tmp/upp &
 *      netns-cluster exec node0 env UCX_TLS=tcp UCX_NET_DEVICES=ncl0 \
 *          build/tests/bench/ucx_pingpong 0 /tmp/upp
 * Rank 0 prints "am_latency_us size S median M average A" (half round trips) and
 * "get_bw_MBps size S best B" (best of 3 runs) lines.
 */
#include "net/ucx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { T_PING = 1, T_KEY, T_DONE };

typedef struct bench_hdr {
    uint32_t type;
    uint32_t pad;
    uint64_t addr;
} bench_hdr_t;

static tdm_ucx_t *ux;
static int me;
static volatile int pongs, done_flag, key_ready, gets_left;
static unsigned char *key;
static size_t key_len;
static uint64_t key_addr;
static unsigned char *payload;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *what) {
    fprintf(stderr, "ucx_pingpong rank %d: %s: %s\n", me, what, ux ? tdm_ucx_errmsg(ux) : "");
    exit(1);
}

static void send_or_die(const bench_hdr_t *h, const void *data, size_t len) {
    int rc = tdm_ucx_send(ux, 1 - me, h, sizeof(*h), data, len, NULL, NULL);
    if (rc < 0)
        die("send");
    /* the payload is a static buffer and the header is copied: nothing to wait for,
     * but a pending send's completion has no callback, so keep the buffer unchanged */
}

static void recv_cb(void *arg, int peer, const void *hdr, size_t hdr_len, const void *data,
                    size_t len) {
    bench_hdr_t h;
    memcpy(&h, hdr, sizeof(h));
    if (h.type == T_PING) {
        if (me == 1)
            send_or_die(&h, payload, len); /* pong, same size */
        else
            pongs++;
    } else if (h.type == T_KEY) {
        key = malloc(len);
        memcpy(key, data, len);
        key_len = len;
        key_addr = h.addr;
        key_ready = 1;
    } else if (h.type == T_DONE) {
        done_flag = 1;
    }
}

static void get_done(void *arg, int status) {
    if (status)
        die("get");
    gets_left--;
}

static void exchange(const char *dir) {
    const void *blob;
    size_t len;
    tdm_ucx_address(ux, &blob, &len);
    char path[4096], tmp[4200];
    snprintf(path, sizeof(path), "%s/addr.%d", dir, me);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(blob, 1, len, f) != len || fclose(f) || rename(tmp, path))
        die("writing the address file");
    snprintf(path, sizeof(path), "%s/addr.%d", dir, 1 - me);
    for (int tries = 0; access(path, R_OK) != 0; tries++) {
        if (tries > 60000)
            die("no address file from the peer after 60 s");
        usleep(1000);
    }
    f = fopen(path, "rb");
    static unsigned char peer[65536];
    size_t n = f ? fread(peer, 1, sizeof(peer), f) : 0;
    if (f)
        fclose(f);
    if (tdm_ucx_peer_set(ux, 1 - me, peer, n) || tdm_ucx_connect(ux, 1 - me))
        die("connecting");
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (!tdm_ucx_built()) {
        printf("skipped: this Tandem was built without UCX\n");
        return 77;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: ucx_pingpong RANK DIR [SCALE]\n");
        return 2;
    }
    me = atoi(argv[1]);
    double scale = argc > 3 ? atof(argv[3]) : 1.0;
    tdm_ucx_config_t cfg = {.rank = me, .nranks = 2, .recv = recv_cb};
    if (tdm_ucx_init(&cfg, &ux))
        die("init");
    exchange(argv[2]);
    const size_t max = 4 << 20;
    payload = calloc(1, max);
    bench_hdr_t ping = {.type = T_PING};

    /* per round trip, so a busy machine's stalls show in the average and not in the
     * median (ucx_perftest prints both the same way) */
    static const size_t lat_sizes[] = {0, 8, 1024, 65536, 1 << 20};
    for (size_t k = 0; k < sizeof(lat_sizes) / sizeof(lat_sizes[0]); k++) {
        size_t sz = lat_sizes[k];
        int iters = (int)((sz <= 1024 ? 20000 : sz <= 65536 ? 2000 : 200) * scale);
        if (iters < 5)
            iters = 5;
        if (me != 0)
            continue;
        double *t = malloc(sizeof(double) * (size_t)iters), sum = 0;
        pongs = 0;
        for (int i = 0; i < iters; i++) {
            double t0 = now_us();
            send_or_die(&ping, payload, sz);
            while (pongs <= i)
                tdm_ucx_progress(ux);
            t[i] = (now_us() - t0) / 2;
            sum += t[i];
        }
        qsort(t, (size_t)iters, sizeof(t[0]), cmp_double);
        printf("am_latency_us size %zu median %.2f average %.2f\n", sz, t[iters / 2], sum / iters);
        fflush(stdout);
        free(t);
    }

    if (me == 1) {
        tdm_ucx_mem_t *m;
        if (tdm_ucx_mem_reg(ux, payload, max, &m))
            die("register");
        const void *k;
        size_t klen;
        tdm_ucx_mem_rkey(m, &k, &klen);
        bench_hdr_t h = {.type = T_KEY, .addr = (uint64_t)(uintptr_t)payload};
        send_or_die(&h, k, klen);
        while (!done_flag)
            tdm_ucx_progress(ux);
        tdm_ucx_mem_dereg(ux, m);
    } else {
        while (!key_ready)
            tdm_ucx_progress(ux);
        tdm_ucx_rkey_t *rk;
        if (tdm_ucx_rkey_unpack(ux, 1, key, key_len, &rk))
            die("rkey");
        unsigned char *local = malloc(max);
        tdm_ucx_mem_t *lm;
        if (tdm_ucx_mem_reg(ux, local, max, &lm))
            die("register");
        static const size_t bw_sizes[] = {65536, 1 << 20, 4 << 20};
        for (size_t k = 0; k < sizeof(bw_sizes) / sizeof(bw_sizes[0]); k++) {
            size_t sz = bw_sizes[k];
            int window = (int)(max / sz) < 16 ? (int)(max / sz) : 16;
            int iters = (int)((sz <= 65536 ? 200 : 40) * scale);
            if (iters < 3)
                iters = 3;
            double best = 0;
            for (int r = 0; r < 3; r++) {
                double t0 = now_us();
                for (int i = 0; i < iters; i++) {
                    gets_left = window;
                    for (int w = 0; w < window; w++) {
                        int rc = tdm_ucx_get(ux, 1, local + (size_t)w * sz, sz,
                                             key_addr + (size_t)w * sz, rk, get_done, NULL);
                        if (rc < 0)
                            die("get");
                        if (rc == TDM_UCX_DONE)
                            gets_left--;
                    }
                    while (gets_left > 0)
                        tdm_ucx_progress(ux);
                }
                double mbps = (double)sz * window * iters / (now_us() - t0);
                best = mbps > best ? mbps : best;
            }
            printf("get_bw_MBps size %zu best %.0f\n", sz, best);
            fflush(stdout);
        }
        bench_hdr_t h = {.type = T_DONE};
        send_or_die(&h, NULL, 0);
        tdm_ucx_rkey_release(ux, rk);
        tdm_ucx_mem_dereg(ux, lm);
        free(local);
    }
    if (tdm_ucx_fini(ux))
        return 1;
    return 0;
}
