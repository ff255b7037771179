/* SPDX-License-Identifier: BSD-3-Clause */
/* The peer table, the transports' start-up and the address exchange (net.h). */
#include "net_impl.h"
#include "../base/log.h"
#include "../base/params.h"
#include "../base/util.h"
#include "../boot/boot.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

tdm_net_t tdm_net;

#ifdef TDM_NET_HAVE_REMOTE
const tdm_net_ops_t *tdm_net_remote;
/* what UCX does for a peer of another node (remote.c): packets, and get/put of registered
 * memory (rdma.h); no cells and no CMA, so the engine picks eager and the pipeline, or a
 * rendezvous that reads or writes by RDMA */
#define REMOTE_CAPS (TDM_NET_CAP_AM | TDM_NET_CAP_RDMA)
#else
#define REMOTE_CAPS 0
#endif

static size_t page_up(size_t n) {
    long page = sysconf(_SC_PAGESIZE);
    size_t p = page > 0 ? (size_t)page : 4096;
    return (n + p - 1) / p * p;
}

/* ---- the address exchange ---- */

/* In the job's memfd (TANDEM_NODE_SPLIT under mpirun), after every node's segment: one
 * slot per rank. A slot is written once by its rank, and `ready` is its hand-off. */
#define XCHG_SLOT 8192
typedef struct xchg_slot {
    _Atomic uint32_t ready;
    uint32_t len;
    unsigned char blob[XCHG_SLOT - 8];
} xchg_slot_t;

/* Where the exchange slots start: after the last node's segment (set by tdm_net_init). */
static size_t xchg_offset;

#ifdef TDM_NET_HAVE_REMOTE
static int exchange_memfd(const tdm_net_config_t *cfg, const void *blob, size_t len,
                          const char **what_p) {
    if (len > sizeof(((xchg_slot_t *)0)->blob)) {
        tdm_error(NET, "rank %d: the UCX address is %zu bytes, more than the %zu of its slot",
                  cfg->rank, len, sizeof(((xchg_slot_t *)0)->blob));
        *what_p = "the UCX address does not fit the exchange slot";
        return -1;
    }
    size_t bytes = (size_t)cfg->size * sizeof(xchg_slot_t);
    xchg_slot_t *slots =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, cfg->shm_fd, (off_t)xchg_offset);
    if (slots == MAP_FAILED) {
        tdm_error(NET, "rank %d: mapping the address slots (%zu bytes at %zu) failed: %m",
                  cfg->rank, bytes, xchg_offset);
        *what_p = "cannot map the address exchange";
        return -1;
    }
    xchg_slot_t *me = &slots[cfg->rank];
    memcpy(me->blob, blob, len);
    me->len = (uint32_t)len;
    atomic_store_explicit(&me->ready, 1, memory_order_release);
    int rc = 0;
    for (int r = 0; r < cfg->size && rc == 0; r++) {
        if (tdm_net.peer[r].tp != TDM_NET_REMOTE)
            continue;
        /* start-up only: a rank not there yet is waited for by sleeping, as the node's
         * barrier does; one that never comes ends the job through mpirun */
        while (!atomic_load_explicit(&slots[r].ready, memory_order_acquire))
            nanosleep(&(struct timespec){0, 100 * 1000}, NULL);
        if (tdm_net_remote_peer(r, slots[r].blob, slots[r].len) != 0) {
            *what_p = "a rank of another node published a bad UCX address";
            rc = -1;
        }
    }
    munmap(slots, bytes);
    return rc;
}

/* In the launcher's key-value space: "tdm-ucx-R" holds the blob's length, and
 * "tdm-ucx-R-i" its hex digits, XCHG_PART of them per key. */
#define XCHG_PART 960

static int exchange_kvs(const tdm_net_config_t *cfg, const void *blob, size_t len,
                        const char **what_p) {
    static const char hex[] = "0123456789abcdef";
    char key[64], val[XCHG_PART + 1], why[400];
    const unsigned char *b = blob;
    size_t parts = (2 * len + XCHG_PART - 1) / XCHG_PART;
    snprintf(key, sizeof(key), "tdm-ucx-%d", cfg->rank);
    snprintf(val, sizeof(val), "%zu", len);
    if (tdm_boot_kvs_put(key, val, why, sizeof(why)) < 0)
        goto fail;
    for (size_t i = 0; i < parts; i++) {
        size_t from = i * XCHG_PART / 2, n = TDM_MIN(len - from, (size_t)XCHG_PART / 2);
        for (size_t k = 0; k < n; k++) {
            val[2 * k] = hex[b[from + k] >> 4];
            val[2 * k + 1] = hex[b[from + k] & 15];
        }
        val[2 * n] = '\0';
        snprintf(key, sizeof(key), "tdm-ucx-%d-%zu", cfg->rank, i);
        if (tdm_boot_kvs_put(key, val, why, sizeof(why)) < 0)
            goto fail;
    }
    if (tdm_boot_kvs_fence(why, sizeof(why)) < 0)
        goto fail;
    unsigned char *peer = NULL;
    for (int r = 0; r < cfg->size; r++) {
        if (tdm_net.peer[r].tp != TDM_NET_REMOTE)
            continue;
        snprintf(key, sizeof(key), "tdm-ucx-%d", r);
        int got = tdm_boot_kvs_get(r, key, val, sizeof(val), why, sizeof(why));
        char *end;
        unsigned long plen = got == 1 ? strtoul(val, &end, 10) : 0;
        if (got < 0)
            goto fail_peer;
        if (got == 0 || *end || plen == 0 || plen > 1u << 20) {
            snprintf(why, sizeof(why), "rank %d published no usable UCX address (%s='%.40s')", r,
                     key, got == 1 ? val : "");
            goto fail_peer;
        }
        unsigned char *nb = realloc(peer, plen);
        if (!nb) {
            snprintf(why, sizeof(why), "out of memory for the address of rank %d", r);
            goto fail_peer;
        }
        peer = nb;
        for (size_t i = 0, have = 0; have < plen; i++) {
            snprintf(key, sizeof(key), "tdm-ucx-%d-%zu", r, i);
            got = tdm_boot_kvs_get(r, key, val, sizeof(val), why, sizeof(why));
            if (got < 0)
                goto fail_peer;
            size_t n = got == 1 ? strlen(val) / 2 : 0;
            if (n == 0 || have + n > plen) {
                snprintf(why, sizeof(why), "rank %d's UCX address is cut short at %s", r, key);
                goto fail_peer;
            }
            for (size_t k = 0; k < n; k++) {
                int hi = val[2 * k], lo = val[2 * k + 1];
                hi = hi <= '9' ? hi - '0' : hi - 'a' + 10;
                lo = lo <= '9' ? lo - '0' : lo - 'a' + 10;
                if (hi < 0 || hi > 15 || lo < 0 || lo > 15) {
                    snprintf(why, sizeof(why), "rank %d's UCX address is not hex at %s", r, key);
                    goto fail_peer;
                }
                peer[have + k] = (unsigned char)(hi << 4 | lo);
            }
            have += n;
        }
        if (tdm_net_remote_peer(r, peer, plen) != 0) {
            free(peer);
            *what_p = "a rank of another node published a bad UCX address";
            return -1;
        }
    }
    free(peer);
    return 0;
fail_peer:
    free(peer);
fail:
    tdm_error(NET, "rank %d: exchanging UCX addresses through the launcher: %s", cfg->rank, why);
    *what_p = "the UCX addresses could not be exchanged";
    return -1;
}

int tdm_net_exchange(const tdm_net_config_t *cfg, const void *blob, size_t len,
                     const char **what_p) {
    return cfg->shm_shared ? exchange_memfd(cfg, blob, len, what_p)
                           : exchange_kvs(cfg, blob, len, what_p);
}

#endif

/* Every rank grows the shared memfd to the same size, so no grow is a shrink (it is
 * sealed against shrinking). */
static int memfd_grow(int fd, size_t need) {
    for (;;) {
        struct stat st;
        if (fstat(fd, &st) != 0)
            return -1;
        if ((size_t)st.st_size >= need || ftruncate(fd, (off_t)need) == 0)
            return 0;
        if (errno != EPERM && errno != EINTR)
            return -1;
    }
}

int tdm_net_init(const tdm_net_config_t *cfg, const char **what_p) {
    tdm_net_t *n = &tdm_net;
    memset(n, 0, sizeof(*n));
    n->rank = cfg->rank;
    n->size = cfg->size;
    n->nodes = cfg->nodes > 0 ? cfg->nodes : 1;
    n->node = cfg->node_of ? cfg->node_of[cfg->rank] : 0;
    n->peer = calloc((size_t)cfg->size, sizeof(tdm_net_peer_t));
    n->locals = calloc((size_t)cfg->size, sizeof(int));
    n->shm_peers = calloc((size_t)cfg->size, sizeof(int));
    int *per_node = calloc((size_t)n->nodes, sizeof(int));
    if (!n->peer || !n->locals || !n->shm_peers || !per_node) {
        free(per_node);
        tdm_error(NET, "out of memory for the transport table of %d ranks", cfg->size);
        *what_p = "out of memory for the transport table";
        return -1;
    }
    int me = 0, remote = -1;
    for (int r = 0; r < cfg->size; r++) {
        int node = cfg->node_of ? cfg->node_of[r] : 0;
        per_node[node]++;
        n->peer[r].node = node;
        if (node == n->node) {
            if (r == cfg->rank)
                me = n->nlocal;
            n->locals[n->nlocal++] = r;
            n->peer[r].tp = TDM_NET_SHM;
            n->peer[r].caps = TDM_NET_CAP_CELLS | TDM_NET_CAP_CMA;
        } else {
            n->peer[r].tp = TDM_NET_REMOTE;
            n->peer[r].caps = REMOTE_CAPS;
            if (remote < 0)
                remote = r;
        }
    }
    /* the ranks the engine polls rings of, in world order */
    for (int l = 0, k = 0; l < n->nlocal; l++)
        if (n->locals[l] != cfg->rank)
            n->shm_peers[k++] = n->locals[l];
#ifndef TDM_NET_HAVE_REMOTE
    if (remote >= 0) {
        /* without a transport built for other nodes src/boot refuses such a job first,
         * with the whole node map */
        tdm_error(NET,
                  "rank %d is on node %d, this rank on node %d: this build has no "
                  "inter-node transport",
                  remote, n->peer[remote].node, n->node);
        free(per_node);
        *what_p = "no transport reaches the ranks of other nodes";
        return -1;
    }
#endif
    /* one memfd for every node (TANDEM_NODE_SPLIT under mpirun): each node's segment
     * follows the ones of the nodes before it, and the address slots follow the last */
    size_t offset = cfg->shm_offset, end = cfg->shm_offset;
    for (int k = 0; cfg->shm_shared && k < n->nodes; k++) {
        if (k == n->node)
            offset = end;
        end += page_up(tdm_shm_bytes(per_node[k]));
    }
    free(per_node);
    xchg_offset = end;
    if (cfg->shm_shared &&
        memfd_grow(cfg->shm_fd, end + page_up((size_t)cfg->size * sizeof(xchg_slot_t))) != 0) {
        tdm_error(NET, "growing the job's shared memfd (fd %d) failed: %m", cfg->shm_fd);
        *what_p = "cannot grow the shared-memory segment";
        return -1;
    }
    if (tdm_shm_init(cfg->shm_fd, offset, n->locals, n->nlocal, me, cfg->size) != 0) {
        *what_p = "cannot set up the shared-memory segment";
        return -1;
    }
    if (tdm_cma_init(cfg->rank, cfg->size) != 0) {
        *what_p = !strcmp(TDM_PARAM_S(CMA), "on")
                      ? "TANDEM_CMA=on, but single-copy transfers (CMA) are not available"
                      : "out of memory for the CMA state";
        return -1;
    }
#ifdef TDM_NET_HAVE_REMOTE
    if (remote >= 0 && tdm_net_remote_init(cfg, what_p) != 0)
        return -1;
#endif
    return 0;
}

void tdm_net_barrier(void (*progress)(void)) {
#ifdef TDM_NET_HAVE_REMOTE
    if (tdm_net_remote) {
        tdm_net_remote->barrier(progress);
        return;
    }
#endif
    tdm_shm_barrier(progress);
}

void tdm_net_quiet(void) {
#ifdef TDM_NET_HAVE_REMOTE
    if (tdm_net_remote)
        tdm_net_remote->quiet();
#endif
}

void tdm_net_fini(void) {
#ifdef TDM_NET_HAVE_REMOTE
    if (tdm_net_remote) {
        tdm_net_remote->fini();
        tdm_net_remote = NULL;
    }
#endif
    tdm_cma_fini();
    tdm_shm_fini();
    free(tdm_net.peer);
    free(tdm_net.locals);
    free(tdm_net.shm_peers);
    memset(&tdm_net, 0, sizeof(tdm_net));
}
