/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net/ucx.c's registration cache and unmapped memory. A registration pins the pages
 * behind its addresses on RDMA hardware; one kept after its buffer was unmapped would
 * reach the old pages when the address is mapped again (the next malloc of that size),
 * and a transfer would read or write memory the program no longer has. So:
 * - a buffer registered again while mapped is a cache hit;
 * - once unmapped and mapped again at the same address, its registration is made anew
 *   (a miss; the old one counted as dropped), for munmap and for free() of a large
 *   malloc alike;
 * - a registration in use when its memory is unmapped leaves the cache and is released
 *   at its last use;
 * - where UCX gives no memory hook (UCX_MEM_EVENTS=no) nothing idle is kept at all.
 * Each case runs in a child process: UCX reads UCX_* when it is loaded.
 */
#include "net/ucx.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(_c)                                                                                  \
    do {                                                                                           \
        if (!(_c)) {                                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #_c);                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define LEN (1u << 20)

static void no_recv(void *arg, int peer, const void *hdr, size_t hdr_len, const void *data,
                    size_t len) {
    (void)arg, (void)peer, (void)hdr, (void)hdr_len, (void)data, (void)len;
}

static tdm_ucx_t *ux;

static tdm_ucx_stats_t stats(void) {
    tdm_ucx_stats_t st;
    tdm_ucx_stats(ux, &st);
    return st;
}

/* registers base+len and releases it at once; 1 when it was a cache hit */
static int reg_once(void *base, size_t len) {
    tdm_ucx_stats_t s0 = stats();
    tdm_ucx_mem_t *m = NULL;
    CHECK(tdm_ucx_mem_reg(ux, base, len, &m) == 0 && m);
    if (m)
        tdm_ucx_mem_dereg(ux, m);
    return stats().reg_hits == s0.reg_hits + 1;
}

/* Maps LEN bytes at `at` exactly (it was just unmapped), or NULL. */
static void *map_at(void *at) {
    void *p = mmap(at, LEN, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED || p != at) {
        fprintf(stderr, "cannot map %p again: %s\n", at,
                p == MAP_FAILED ? strerror(errno) : "moved");
        return NULL;
    }
    return p;
}

static void run_hooked(void) {
    void *a = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != MAP_FAILED);
    CHECK(!reg_once(a, LEN)); /* the first registration */
    CHECK(reg_once(a, LEN));  /* kept idle: a hit */

    /* unmapped and mapped again at the same address: made anew */
    tdm_ucx_stats_t s0 = stats();
    munmap(a, LEN);
    CHECK(map_at(a) != NULL);
    CHECK(!reg_once(a, LEN));
    CHECK(stats().reg_dropped == s0.reg_dropped + 1);
    CHECK(reg_once(a, LEN)); /* and that one is cached again */

    /* an unmapping elsewhere leaves it cached */
    void *other = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(other, LEN);
    CHECK(reg_once(a, LEN));

    /* in use while unmapped: out of the cache, released at its last use */
    tdm_ucx_mem_t *busy = NULL, *fresh = NULL;
    CHECK(tdm_ucx_mem_reg(ux, a, LEN, &busy) == 0);
    munmap(a, LEN);
    CHECK(map_at(a) != NULL);
    CHECK(tdm_ucx_mem_reg(ux, a, LEN, &fresh) == 0);
    CHECK(fresh != busy);
    tdm_ucx_mem_dereg(ux, busy);
    tdm_ucx_mem_dereg(ux, fresh);
    CHECK(reg_once(a, LEN)); /* the fresh one stays cached */
    munmap(a, LEN);

    /* free() of a large malloc gives its memory back (glibc maps it apart) */
    size_t big = 8u << 20;
    char *h = malloc(big);
    CHECK(h != NULL);
    CHECK(!reg_once(h, big));
    CHECK(reg_once(h, big));
    s0 = stats();
    free(h);
    char *h2 = malloc(big);
    CHECK(!reg_once(h2, big));
    CHECK(stats().reg_dropped == s0.reg_dropped + 1);
    free(h2);
}

static void run_unhooked(void) {
    void *a = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(!reg_once(a, LEN));
    CHECK(!reg_once(a, LEN)); /* nothing idle kept: nothing could tell it went stale */
    tdm_ucx_mem_t *m1 = NULL, *m2 = NULL;
    CHECK(tdm_ucx_mem_reg(ux, a, LEN, &m1) == 0);
    CHECK(tdm_ucx_mem_reg(ux, a, LEN, &m2) == 0);
    CHECK(m1 == m2); /* in use, it is shared */
    tdm_ucx_mem_dereg(ux, m1);
    tdm_ucx_mem_dereg(ux, m2);
    munmap(a, LEN);
}

static int child(bool hooked) {
    if (!hooked)
        setenv("UCX_MEM_EVENTS", "no", 1);
    tdm_ucx_config_t cfg = {.rank = 0, .nranks = 1, .recv = no_recv};
    int rc = tdm_ucx_init(&cfg, &ux);
    if (rc) {
        fprintf(stderr, "tdm_ucx_init failed: %d\n", rc);
        return 1;
    }
    if (hooked)
        run_hooked();
    else
        run_unhooked();
    tdm_ucx_fini(ux);
    return failures ? 1 : 0;
}

int main(void) {
    if (!tdm_ucx_built()) {
        printf("skipped: this Tandem was built without UCX\n");
        return 77;
    }
    int bad = 0;
    for (int hooked = 1; hooked >= 0; hooked--) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0)
            _exit(child(hooked));
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "%s: failed (status %#x)\n",
                    hooked ? "with UCX's memory hook" : "without it", status);
            bad++;
        }
    }
    if (bad)
        return 1;
    printf("No Errors\n");
    return 0;
}
