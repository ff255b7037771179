/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The segment UCX's tcp transport sends in (TANDEM_UCX_TCP_SEG, src/net/ucx.c): read from
 * UCX's own description of an endpoint between two transports of this process over tcp
 * on loopback, where the largest short active message is the segment less its header.
 * By default a 64 KiB message less UCX's header is short (one segment); TANDEM_UCX_TCP_SEG=0 keeps
 * UCX's 8 KiB; a segment size the user gave UCX wins over Tandem's. Where UCX opens no tcp
 * transport (UCX_TLS without it, UCX_NET_DEVICES naming no network interface) nothing is
 * set, and UCX has no unused key to warn about on every rank. Each case in a child
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

/* In a child with `env` and `env2` set ("NAME=VALUE" or NULL): short_max's answer; the
 * child's output, when `err` is given, into err[0..len-1]. */
static long in_child(const char *env, const char *env2, char *err, size_t len) {
    int p[2];
    FILE *ef = err ? tmpfile() : NULL;
    if (pipe(p) != 0 || (err && !ef))
        return -1;
    fflush(NULL); /* the child must not write our buffered output again */
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        if (ef) { /* UCX logs to standard output */
            dup2(fileno(ef), 1);
            dup2(fileno(ef), 2);
        }
        if (env)
            putenv((char *)env);
        if (env2)
            putenv((char *)env2);
        long n = short_max();
        fflush(NULL); /* UCX's log lines sit in stdio's buffer */
        _exit(write(p[1], &n, sizeof(n)) == sizeof(n) ? 0 : 1);
    }
    close(p[1]);
    long n = -1;
    if (read(p[0], &n, sizeof(n)) != sizeof(n))
        n = -1;
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    if (ef) {
        rewind(ef);
        size_t got = fread(err, 1, len - 1, ef);
        err[got] = '\0';
        fclose(ef);
    }
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
    long def = in_child(NULL, NULL, NULL, 0), off = in_child("TANDEM_UCX_TCP_SEG=0", NULL, NULL, 0),
         user = in_child("UCX_TCP_TX_SEG_SIZE=16k", NULL, NULL, 0);
    printf("largest short message: %ld by default, %ld with TANDEM_UCX_TCP_SEG=0, %ld with "
           "UCX_TCP_TX_SEG_SIZE=16k\n",
           def, off, user);
    if (def < 64 * 1024 - 64 || def >= 64 * 1024) {
        fprintf(stderr, "by default a 64 KiB segment was expected\n");
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
    /* no tcp transport: no segment set, so no warning from UCX (and its endpoint works) */
    static const char *no_tcp[][2] = {{"UCX_TLS=sm,self", NULL},
                                      {"UCX_TLS=^tcp", NULL},
                                      {"UCX_TLS=all", "UCX_NET_DEVICES=mlx5_0:1"}};
    for (size_t i = 0; i < sizeof(no_tcp) / sizeof(no_tcp[0]); i++) {
        char err[4096];
        long n = in_child(no_tcp[i][0], no_tcp[i][1], err, sizeof(err));
        if (n < 0 || strstr(err, "invalid configuration")) {
            fprintf(stderr, "%s %s: %ld, the child said:\n%s\n", no_tcp[i][0],
                    no_tcp[i][1] ? no_tcp[i][1] : "", n, err);
            failed++;
        }
    }
    if (!failed)
        printf("No Errors\n");
    return failed ? 1 : 0;
}
