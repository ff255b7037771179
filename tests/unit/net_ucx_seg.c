/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The segment UCX's tcp transport sends in (TANDEM_UCX_TCP_SEG, src/net/ucx.c): read from
 * UCX's own description of an endpoint between two transports of this process over tcp
 * on loopback, where the largest short active message is the segment less its header.
 * By default a 32 KiB message is short (one segment); TANDEM_UCX_TCP_SEG=0 keeps UCX's
 * 8 KiB; a segment size the user gave UCX wins over Tandem's. Each case in a child
 * process (tunables are read once per process). Exits 77 without UCX.
 */
#include "net/ucx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void recv_cb(void *arg, int peer, const void *hdr, size_t hdr_len, const void *data,
                    size_t len) {
    (void)arg, (void)peer, (void)hdr, (void)hdr_len, (void)data, (void)len;
}

/* The largest short active message toward the other transport, or -1. */
static long short_max(void) {
    tdm_ucx_t *ux[2];
    for (int r = 0; r < 2; r++) {
        tdm_ucx_config_t cfg = {.rank = r, .nranks = 2, .recv = recv_cb};
        if (tdm_ucx_init(&cfg, &ux[r]) != 0) {
            fprintf(stderr, "tdm_ucx_init failed\n");
            return -1;
        }
    }
    const void *blob;
    size_t len;
    tdm_ucx_address(ux[1], &blob, &len);
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    if (!f || tdm_ucx_peer_set(ux[0], 1, blob, len) != 0 || tdm_ucx_ep_print(ux[0], 1, f) != 0) {
        fprintf(stderr, "no endpoint: %s\n", tdm_ucx_errmsg(ux[0]));
        return -1;
    }
    fclose(f);
    /* "am_send: 0..<egr/short>..N..<egr/zcopy>..." */
    const char *am = strstr(text, "am_send:");
    const char *sh = am ? strstr(am, "<egr/short>..") : NULL;
    long n = sh ? strtol(sh + strlen("<egr/short>.."), NULL, 10) : -1;
    if (n < 0)
        fprintf(stderr, "no short range in UCX's description:\n%s", text);
    free(text);
    return n;
}

/* In a child with `env` set ("NAME=VALUE" or NULL): short_max's answer. */
static long in_child(const char *env) {
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        if (env)
            putenv((char *)env);
        long n = short_max();
        _exit(write(p[1], &n, sizeof(n)) == sizeof(n) ? 0 : 1);
    }
    close(p[1]);
    long n = -1;
    if (read(p[0], &n, sizeof(n)) != sizeof(n))
        n = -1;
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    return n;
}

int main(void) {
    if (!tdm_ucx_built()) {
        printf("SKIP: built without UCX\n");
        return 77;
    }
    setenv("UCX_TLS", "tcp,self", 1);
    setenv("UCX_NET_DEVICES", "lo", 1);
    int failed = 0;
    long def = in_child(NULL), off = in_child("TANDEM_UCX_TCP_SEG=0"),
         user = in_child("UCX_TCP_TX_SEG_SIZE=16k");
    printf("largest short message: %ld by default, %ld with TANDEM_UCX_TCP_SEG=0, %ld with "
           "UCX_TCP_TX_SEG_SIZE=16k\n",
           def, off, user);
    if (def < 32 * 1024 - 64 || def >= 32 * 1024) {
        fprintf(stderr, "by default a 32 KiB segment was expected\n");
        failed++;
    }
    if (off < 8 * 1024 - 64 || off >= 8 * 1024) {
        fprintf(stderr, "TANDEM_UCX_TCP_SEG=0: UCX's 8 KiB segment was expected\n");
        failed++;
    }
    if (user < 16 * 1024 - 64 || user >= 16 * 1024) {
        fprintf(stderr, "UCX_TCP_TX_SEG_SIZE=16k: the user's segment was expected\n");
        failed++;
    }
    if (!failed)
        printf("No Errors\n");
    return failed ? 1 : 0;
}
