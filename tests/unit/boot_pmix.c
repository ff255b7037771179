/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PMIx client (src/boot/pmix.c) against a fake PMIx library: this program defines
 * PMIx_Init, PMIx_Get, ... itself (exported, so the client's dlsym finds them when it is
 * told to load "the program"), each answering as the scenario says. A well-formed server
 * must give rank, size, node map and a working key-value space; each odd answer (a failed
 * call, a value of the wrong type, a missing key, a map that contradicts the local size)
 * must give an error naming the call, key or rank, never a crash or a wrong job. A missing
 * libpmix, or a library without PMIx's entry points, must say what is missing.
 */
#include "boot/pmix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !TDM_HAVE_PMIX
int main(void) {
    printf("SKIP: built without PMIx's headers (libpmix-dev)\n");
    return 77;
}
#else
#include <pmix.h>

static int failed, passed;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (_cond) {                                                                               \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL line %d: ", __LINE__);                                                    \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

/* ---- the scenario the fake server plays ---- */
static struct {
    pmix_status_t init_st, fence_st;
    int rank, size;      /* size < 0: no PMIX_JOB_SIZE */
    bool size_as_string; /* PMIX_JOB_SIZE of the wrong type */
    int local_size;      /* < 0: none */
    int nodeid[8];       /* < 0: no PMIX_NODEID for that rank */
    const char *host[8]; /* NULL: no PMIX_HOSTNAME */
    bool kvs_int;        /* values come back as integers */
    int aborted, abort_code, finalized, fences;
} sc;

#define KVS_MAX 32
static struct {
    int rank;
    char key[64], value[256];
} kvs[KVS_MAX];
static int nkvs;

static void reset(void) {
    memset(&sc, 0, sizeof(sc));
    sc.rank = 2;
    sc.size = 4;
    sc.local_size = 2;
    int ids[8] = {0, 0, 1, 1, -1, -1, -1, -1};
    memcpy(sc.nodeid, ids, sizeof(ids));
    static const char *hosts[8] = {"a", "a", "b", "b"};
    memcpy(sc.host, hosts, sizeof(hosts));
    nkvs = 0;
}

pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo) {
    if (sc.init_st != PMIX_SUCCESS)
        return sc.init_st;
    snprintf(proc->nspace, sizeof(proc->nspace), "fake-ns");
    proc->rank = (pmix_rank_t)sc.rank;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo) {
    sc.finalized++;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[], size_t nprocs) {
    sc.aborted++;
    sc.abort_code = status;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val) {
    if (val->type != PMIX_STRING || nkvs == KVS_MAX)
        return PMIX_ERR_BAD_PARAM;
    kvs[nkvs].rank = sc.rank;
    snprintf(kvs[nkvs].key, sizeof(kvs[nkvs].key), "%s", key);
    snprintf(kvs[nkvs].value, sizeof(kvs[nkvs].value), "%s", val->data.string);
    nkvs++;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Commit(void) {
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                         size_t ninfo) {
    sc.fences++;
    return sc.fence_st;
}

static pmix_value_t *new_value(void) {
    return calloc(1, sizeof(pmix_value_t));
}

pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                       size_t ninfo, pmix_value_t **val) {
    pmix_value_t *v = new_value();
    int r = (int)proc->rank;
    if (!strcmp(key, PMIX_JOB_SIZE) && sc.size >= 0) {
        if (sc.size_as_string) {
            v->type = PMIX_STRING;
            v->data.string = strdup("4");
        } else {
            v->type = PMIX_UINT32;
            v->data.uint32 = (uint32_t)sc.size;
        }
    } else if (!strcmp(key, PMIX_LOCAL_SIZE) && sc.local_size >= 0) {
        v->type = PMIX_UINT32;
        v->data.uint32 = (uint32_t)sc.local_size;
    } else if (!strcmp(key, PMIX_LOCAL_RANK)) {
        v->type = PMIX_UINT16;
        v->data.uint16 = 0;
    } else if (!strcmp(key, PMIX_NODEID) && r < 8 && sc.nodeid[r] >= 0) {
        v->type = PMIX_UINT32;
        v->data.uint32 = (uint32_t)sc.nodeid[r];
    } else if (!strcmp(key, PMIX_HOSTNAME) && r < 8 && sc.host[r]) {
        v->type = PMIX_STRING;
        v->data.string = strdup(sc.host[r]);
    } else {
        for (int i = 0; i < nkvs; i++) {
            if (kvs[i].rank == r && !strcmp(kvs[i].key, key)) {
                if (sc.kvs_int) {
                    v->type = PMIX_INT;
                    v->data.integer = 5;
                } else {
                    v->type = PMIX_STRING;
                    v->data.string = strdup(kvs[i].value);
                }
                *val = v;
                return PMIX_SUCCESS;
            }
        }
        free(v);
        return PMIX_ERR_NOT_FOUND;
    }
    *val = v;
    return PMIX_SUCCESS;
}

const char *PMIx_Error_string(pmix_status_t status) {
    return status == PMIX_ERR_UNREACH ? "UNREACHABLE" : "SOME-ERROR";
}

void PMIx_Value_destruct(pmix_value_t *val) {
    if (val->type == PMIX_STRING)
        free(val->data.string);
    val->type = PMIX_UNDEF;
}

/* ---- the cases ---- */

static int start(tdm_pmix_t *p, char *why, size_t len) {
    why[0] = 0;
    return tdm_pmix_init(p, NULL, why, len);
}

int main(void) {
    tdm_pmix_t p;
    char why[512], val[256], hosts[8][64];
    int node_of[8];
    const char *source = NULL;

    /* a good server */
    reset();
    CHECK(start(&p, why, sizeof(why)) == 0, "good init: %s", why);
    CHECK(p.rank == 2 && p.size == 4 && p.local_size == 2 && !strcmp(p.nspace, "fake-ns"),
          "rank %d size %d local %d nspace %s", p.rank, p.size, p.local_size, p.nspace);
    int nodes = tdm_pmix_node_map(&p, node_of, hosts, &source, why, sizeof(why));
    CHECK(nodes == 2 && node_of[0] == node_of[1] && node_of[2] == node_of[3] &&
              node_of[0] != node_of[2] && !strcmp(hosts[3], "b") && source &&
              !strcmp(source, "PMIX_NODEID"),
          "node map by id: %d nodes (%s)", nodes, nodes < 0 ? why : "");
    CHECK(tdm_pmix_put(&p, "tdm-x-2", "hello", why, sizeof(why)) == 0, "put: %s", why);
    CHECK(tdm_pmix_fence(&p, why, sizeof(why)) == 0 && sc.fences == 1, "fence: %s", why);
    CHECK(tdm_pmix_get(&p, 2, "tdm-x-2", val, sizeof(val), why, sizeof(why)) == 1 &&
              !strcmp(val, "hello"),
          "get of a put key");
    CHECK(tdm_pmix_get(&p, 1, "tdm-x-2", val, sizeof(val), why, sizeof(why)) == 0,
          "a key rank 1 did not put is not there");
    CHECK(tdm_pmix_get(&p, 9, "tdm-x-2", val, sizeof(val), why, sizeof(why)) == -1 &&
              strstr(why, "rank 9"),
          "get from rank 9 of 4: '%s'", why);
    CHECK(tdm_pmix_get(&p, 2, "tdm-x-2", val, 3, why, sizeof(why)) == -1 && strstr(why, "tdm-x-2"),
          "a value longer than the buffer: '%s'", why);
    sc.kvs_int = true;
    CHECK(tdm_pmix_get(&p, 2, "tdm-x-2", val, sizeof(val), why, sizeof(why)) == -1 &&
              strstr(why, "not a string") && strstr(why, "tdm-x-2"),
          "an integer where a string was put: '%s'", why);
    sc.kvs_int = false;
    sc.fence_st = PMIX_ERR_TIMEOUT;
    CHECK(tdm_pmix_fence(&p, why, sizeof(why)) == -1 && strstr(why, "PMIx_Fence failed") &&
              strstr(why, "SOME-ERROR"),
          "failed fence: '%s'", why);
    tdm_pmix_abort(&p, 7, "test");
    CHECK(sc.aborted == 1 && sc.abort_code == 7, "abort sent with code %d", sc.abort_code);
    CHECK(tdm_pmix_finalize(&p, why, sizeof(why)) == 0 && sc.finalized == 1, "finalize");
    CHECK(tdm_pmix_finalize(&p, why, sizeof(why)) == 0 && sc.finalized == 1, "finalize once");
    CHECK(tdm_pmix_put(&p, "k", "v", why, sizeof(why)) == -1, "put after finalize refused");

    /* no node ids: host names decide */
    reset();
    for (int r = 0; r < 8; r++)
        sc.nodeid[r] = -1;
    sc.host[1] = "b";
    sc.host[2] = "a";
    CHECK(start(&p, why, sizeof(why)) == 0, "init: %s", why);
    nodes = tdm_pmix_node_map(&p, node_of, hosts, &source, why, sizeof(why));
    CHECK(nodes == 2 && node_of[0] == node_of[2] && node_of[1] == node_of[3] &&
              node_of[0] != node_of[1] && source && !strcmp(source, "PMIX_HOSTNAME"),
          "node map by host name: %d nodes (%s)", nodes, nodes < 0 ? why : "");

    /* neither for rank 3: no map from the server (boot.c then exchanges host names) */
    sc.host[3] = NULL;
    nodes = tdm_pmix_node_map(&p, node_of, hosts, &source, why, sizeof(why));
    CHECK(nodes == 0 && !source, "no host of rank 3: %d nodes (%s)", nodes, nodes < 0 ? why : "");

    /* node ids of this node's ranks only (Open MPI 4.1's server): host names decide */
    reset();
    sc.nodeid[0] = sc.nodeid[1] = -1;
    CHECK(start(&p, why, sizeof(why)) == 0, "init: %s", why);
    nodes = tdm_pmix_node_map(&p, node_of, hosts, &source, why, sizeof(why));
    CHECK(nodes == 2 && node_of[0] == node_of[1] && node_of[2] == node_of[3] &&
              node_of[0] != node_of[2] && source && !strcmp(source, "PMIX_HOSTNAME"),
          "node ids of ranks 2-3 only: %d nodes (%s)", nodes, nodes < 0 ? why : "");
    reset();
    sc.nodeid[2] = sc.nodeid[3] = -1;
    CHECK(start(&p, why, sizeof(why)) == 0, "init: %s", why);
    nodes = tdm_pmix_node_map(&p, node_of, hosts, &source, why, sizeof(why));
    CHECK(nodes == 2 && node_of[0] == node_of[1] && node_of[2] == node_of[3] &&
              node_of[0] != node_of[2] && source && !strcmp(source, "PMIX_HOSTNAME"),
          "node ids of ranks 0-1 only: %d nodes (%s)", nodes, nodes < 0 ? why : "");

    /* a map that contradicts PMIX_LOCAL_SIZE */
    reset();
    sc.local_size = 3;
    CHECK(start(&p, why, sizeof(why)) == 0, "init: %s", why);
    nodes = tdm_pmix_node_map(&p, node_of, hosts, &source, why, sizeof(why));
    CHECK(nodes == -1 && strstr(why, "PMIX_LOCAL_SIZE") && strstr(why, "PMIX_NODEID"),
          "local size 3, map 2: '%s'", why);

    /* failures of PMIx_Init and of the job's size */
    reset();
    sc.init_st = PMIX_ERR_UNREACH;
    CHECK(start(&p, why, sizeof(why)) == -1 && strstr(why, "PMIx_Init failed") &&
              strstr(why, "UNREACHABLE"),
          "init refused: '%s'", why);
    reset();
    sc.size = -1;
    CHECK(start(&p, why, sizeof(why)) == -1 && strstr(why, "PMIX_JOB_SIZE"), "no size: '%s'", why);
    reset();
    sc.size_as_string = true;
    CHECK(start(&p, why, sizeof(why)) == -1 && strstr(why, "PMIX_JOB_SIZE") &&
              strstr(why, "not a count"),
          "size of the wrong type: '%s'", why);
    reset();
    sc.rank = 4;
    CHECK(start(&p, why, sizeof(why)) == -1 && strstr(why, "rank 4"), "rank 4 of 4: '%s'", why);

    /* no library, or a library that is not PMIx */
    CHECK(tdm_pmix_init(&p, "libpmix-absent.so.2", why, sizeof(why)) == -1 &&
              strstr(why, "libpmix-absent.so.2") && strstr(why, "libpmix2"),
          "missing library: '%s'", why);
    CHECK(tdm_pmix_init(&p, "libc.so.6", why, sizeof(why)) == -1 && strstr(why, "PMIx_Init"),
          "not a PMIx library: '%s'", why);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
#endif
