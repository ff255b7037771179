/* SPDX-License-Identifier: BSD-3-Clause */
#include "pmix.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static int fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

bool tdm_pmix_env(void) {
    if (getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK"))
        return true;
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, "PMIX_SERVER_URI", 15))
            return true;
    return false;
}

void tdm_pmix_forget_env(void) {
    static const char *const prefixes[] = {
        "PMIX_NAMESPACE=", "PMIX_RANK=", "PMIX_ID=", "PMIX_SERVER_URI"};
    char name[128];
    /* unsetenv moves the entries: look again from the start after each one */
    for (bool again = true; again;) {
        again = false;
        for (char **e = environ; e && *e && !again; e++) {
            for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
                if (strncmp(*e, prefixes[i], strlen(prefixes[i])) != 0)
                    continue;
                size_t n = strcspn(*e, "=");
                if (n >= sizeof(name))
                    break;
                memcpy(name, *e, n);
                name[n] = 0;
                unsetenv(name);
                again = true;
                break;
            }
        }
    }
}

#if TDM_HAVE_PMIX
#include <pmix.h>

/* The entry points this client uses. The header's macros that would call into the library
 * (PMIX_VALUE_RELEASE, PMIX_INFO_LOAD) are not used: only these go through dlsym. */
typedef struct pmix_fns {
    pmix_status_t (*init)(pmix_proc_t *, pmix_info_t[], size_t);
    pmix_status_t (*finalize)(const pmix_info_t[], size_t);
    pmix_status_t (*abort)(int, const char[], pmix_proc_t[], size_t);
    pmix_status_t (*put)(pmix_scope_t, const char[], pmix_value_t *);
    pmix_status_t (*commit)(void);
    pmix_status_t (*fence)(const pmix_proc_t[], size_t, const pmix_info_t[], size_t);
    pmix_status_t (*get)(const pmix_proc_t *, const char[], const pmix_info_t[], size_t,
                         pmix_value_t **);
    const char *(*error_string)(pmix_status_t);
    void (*value_destruct)(pmix_value_t *);
} pmix_fns_t;

static pmix_fns_t pmix_fns;

#define FN(_p) ((const pmix_fns_t *)(_p)->fns)

static const char *status_name(const tdm_pmix_t *p, pmix_status_t st) {
    const char *s = FN(p) && FN(p)->error_string ? FN(p)->error_string(st) : NULL;
    return s ? s : "unknown status";
}

static void bool_info(pmix_info_t *info, const char *key, bool value) {
    memset(info, 0, sizeof(*info));
    snprintf(info->key, sizeof(info->key), "%s", key);
    info->value.type = PMIX_BOOL;
    info->value.data.flag = value;
}

static void release(const tdm_pmix_t *p, pmix_value_t *v) {
    if (!v)
        return;
    FN(p)->value_destruct(v);
    free(v);
}

/* An integer value of any of the integer types servers use for counts and ids. */
static bool value_int(const pmix_value_t *v, long long *out) {
    switch (v->type) {
    case PMIX_INT:
        *out = v->data.integer;
        return true;
    case PMIX_INT8:
        *out = v->data.int8;
        return true;
    case PMIX_INT16:
        *out = v->data.int16;
        return true;
    case PMIX_INT32:
        *out = v->data.int32;
        return true;
    case PMIX_INT64:
        *out = v->data.int64;
        return true;
    case PMIX_UINT:
        *out = v->data.uint;
        return true;
    case PMIX_UINT8:
        *out = v->data.uint8;
        return true;
    case PMIX_UINT16:
        *out = v->data.uint16;
        return true;
    case PMIX_UINT32:
        *out = v->data.uint32;
        return true;
    case PMIX_UINT64:
        *out = v->data.uint64 > INT64_MAX ? -1 : (long long)v->data.uint64;
        return true;
    case PMIX_SIZE:
        *out = v->data.size > INT64_MAX ? -1 : (long long)v->data.size;
        return true;
    default:
        return false;
    }
}

/* PMIx_Get of `key` for `rank` of our namespace into *v_p (the caller releases it).
 * `optional`: the local store only (the job's own data, and what a fence collected), so a
 * missing key answers at once; a missing key gives PMIX_ERR_NOT_FOUND and no value. */
static pmix_status_t get_value(tdm_pmix_t *p, pmix_rank_t rank, const char *key, bool optional,
                               pmix_value_t **v_p) {
    pmix_proc_t proc;
    memset(&proc, 0, sizeof(proc));
    snprintf(proc.nspace, sizeof(proc.nspace), "%s", p->nspace);
    proc.rank = rank;
    pmix_info_t info;
    bool_info(&info, PMIX_OPTIONAL, true);
    *v_p = NULL;
    pmix_status_t st = FN(p)->get(&proc, key, optional ? &info : NULL, optional ? 1 : 0, v_p);
    if (st == PMIX_ERR_NOT_FOUND) {
        release(p, *v_p);
        *v_p = NULL;
    }
    return st;
}

/* PMIx_Get of an integer: 1 found, 0 not there, -1 error. */
static int get_int(tdm_pmix_t *p, pmix_rank_t rank, const char *key, const char *name,
                   bool optional, long long *out, char *why, size_t len) {
    pmix_value_t *v;
    pmix_status_t st = get_value(p, rank, key, optional, &v);
    if (st == PMIX_ERR_NOT_FOUND)
        return 0;
    char who[32];
    if (rank == PMIX_RANK_WILDCARD)
        snprintf(who, sizeof(who), "the job");
    else
        snprintf(who, sizeof(who), "rank %u", (unsigned)rank);
    if (st != PMIX_SUCCESS || !v)
        return fail(why, len, "PMIx_Get(%s, %s) failed: %s (%d)", who, name, status_name(p, st),
                    (int)st);
    bool ok = value_int(v, out);
    int type = v->type;
    release(p, v);
    if (!ok || *out < 0 || *out > INT32_MAX)
        return fail(why, len, "PMIx_Get(%s, %s) answered a value of type %d, not a count", who,
                    name, type);
    return 1;
}

/* PMIx_Get of a string, same answers. */
static int get_string(tdm_pmix_t *p, pmix_rank_t rank, const char *key, bool optional, char *out,
                      size_t cap, char *why, size_t len) {
    pmix_value_t *v;
    pmix_status_t st = get_value(p, rank, key, optional, &v);
    if (st == PMIX_ERR_NOT_FOUND)
        return 0;
    if (st != PMIX_SUCCESS || !v)
        return fail(why, len, "PMIx_Get(rank %u, %.80s) failed: %s (%d)", (unsigned)rank, key,
                    status_name(p, st), (int)st);
    int rc = 1;
    if (v->type != PMIX_STRING || !v->data.string)
        rc = fail(why, len, "PMIx_Get(rank %u, %.80s) answered a value of type %d, not a string",
                  (unsigned)rank, key, (int)v->type);
    else if (strlen(v->data.string) >= cap)
        rc = fail(why, len, "PMIx_Get(rank %u, %.80s): a value of %zu bytes, more than %zu",
                  (unsigned)rank, key, strlen(v->data.string), cap - 1);
    else
        snprintf(out, cap, "%s", v->data.string);
    release(p, v);
    return rc;
}

static int load(tdm_pmix_t *p, const char *lib, char *why, size_t len) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        return fail(why, len,
                    "started by a PMIx server (PMIX_NAMESPACE=%.60s), but %s cannot be loaded "
                    "(%.200s): install libpmix (Debian: libpmix2), or launch with Hydra's "
                    "mpiexec or srun --mpi=pmi2",
                    getenv("PMIX_NAMESPACE") ? getenv("PMIX_NAMESPACE") : "?",
                    lib ? lib : "the program", dlerror());
    static const struct {
        const char *name;
        size_t off;
    } syms[] = {
        {"PMIx_Init", offsetof(pmix_fns_t, init)},
        {"PMIx_Finalize", offsetof(pmix_fns_t, finalize)},
        {"PMIx_Abort", offsetof(pmix_fns_t, abort)},
        {"PMIx_Put", offsetof(pmix_fns_t, put)},
        {"PMIx_Commit", offsetof(pmix_fns_t, commit)},
        {"PMIx_Fence", offsetof(pmix_fns_t, fence)},
        {"PMIx_Get", offsetof(pmix_fns_t, get)},
        {"PMIx_Error_string", offsetof(pmix_fns_t, error_string)},
        {"PMIx_Value_destruct", offsetof(pmix_fns_t, value_destruct)},
    };
    pmix_fns_t fns;
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *f = dlsym(h, syms[i].name);
        if (!f) {
            fail(why, len, "%s has no %s: it is not a PMIx client library of version 4 or later",
                 lib ? lib : "the program", syms[i].name);
            if (lib)
                dlclose(h);
            return -1;
        }
        memcpy((char *)&fns + syms[i].off, &f, sizeof(f));
    }
    pmix_fns = fns;
    p->lib = h;
    p->fns = &pmix_fns;
    return 0;
}

int tdm_pmix_init(tdm_pmix_t *p, const char *lib, char *why, size_t len) {
    memset(p, 0, sizeof(*p));
    p->local_rank = p->local_size = -1;
    if (load(p, lib, why, len) != 0)
        return -1;
    pmix_proc_t me;
    memset(&me, 0, sizeof(me));
    pmix_status_t st = FN(p)->init(&me, NULL, 0);
    if (st != PMIX_SUCCESS)
        return fail(why, len,
                    "PMIx_Init failed: %s (%d): the PMIx server of this process "
                    "(PMIX_NAMESPACE=%.60s) does not take it",
                    status_name(p, st), (int)st,
                    getenv("PMIX_NAMESPACE") ? getenv("PMIX_NAMESPACE") : "?");
    p->up = true;
    snprintf(p->nspace, sizeof(p->nspace), "%.*s", (int)sizeof(me.nspace), me.nspace);
    if (!p->nspace[0] || me.rank > INT32_MAX)
        return fail(why, len,
                    "PMIx_Init gave namespace '%.60s' and rank %u: not a process of a job",
                    p->nspace, (unsigned)me.rank);
    p->rank = (int)me.rank;
    long long v;
    int got = get_int(p, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, "PMIX_JOB_SIZE", false, &v, why, len);
    if (got < 0)
        return -1;
    if (!got)
        return fail(why, len, "the PMIx server gives no PMIX_JOB_SIZE for namespace %.60s",
                    p->nspace);
    if (v < 1 || v <= p->rank)
        return fail(why, len, "PMIx gives a job of %lld processes and this process rank %d", v,
                    p->rank);
    p->size = (int)v;
    /* the local rank and size are checks on the node map: optional */
    pmix_rank_t me_r = (pmix_rank_t)p->rank;
    got = get_int(p, me_r, PMIX_LOCAL_RANK, "PMIX_LOCAL_RANK", false, &v, why, len);
    if (got < 0)
        return -1;
    if (got)
        p->local_rank = (int)v;
    got = get_int(p, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, "PMIX_LOCAL_SIZE", false, &v, why, len);
    if (got < 0)
        return -1;
    if (got)
        p->local_size = (int)v;
    return 0;
}

int tdm_pmix_node_map(tdm_pmix_t *p, int *node_of, char (*hosts)[64], const char **source_p,
                      char *why, size_t len) {
    long long id;
    int have_id = 0, have_host = 0;
    /* Open MPI 4.1's server gives PMIX_NODEID of its own node's ranks only: the ids decide
     * only when every rank has one, else host names when every rank has one */
    for (int r = 0; r < p->size; r++) {
        int got = get_int(p, (pmix_rank_t)r, PMIX_NODEID, "PMIX_NODEID", false, &id, why, len);
        if (got < 0)
            return -1;
        if (got) {
            node_of[r] = (int)id;
            have_id++;
        }
        char host[256];
        hosts[r][0] = 0;
        got = get_string(p, (pmix_rank_t)r, PMIX_HOSTNAME, false, host, sizeof(host), why, len);
        if (got < 0)
            return -1;
        if (got) {
            snprintf(hosts[r], sizeof(hosts[r]), "%.63s", host);
            have_host++;
        }
    }
    if (have_id == p->size) {
        *source_p = "PMIX_NODEID";
    } else if (have_host == p->size) {
        *source_p = "PMIX_HOSTNAME";
        for (int r = 0; r < p->size; r++) {
            node_of[r] = r; /* a node is a host name: its first rank's number */
            for (int q = 0; q < r; q++)
                if (!strcmp(hosts[q], hosts[r])) {
                    node_of[r] = node_of[q];
                    break;
                }
        }
    } else {
        *source_p = NULL;
        return 0;
    }
    int nodes = 0;
    for (int r = 0; r < p->size; r++) {
        int q = 0;
        while (q < r && node_of[q] != node_of[r])
            q++;
        nodes += q == r;
    }
    /* what the server says of this node must agree with its map */
    int here = 0;
    for (int r = 0; r < p->size; r++)
        here += node_of[r] == node_of[p->rank];
    if (p->local_size > 0 && p->local_size != here)
        return fail(why, len,
                    "the PMIx node map (%s) puts %d ranks on the node of rank %d, "
                    "PMIX_LOCAL_SIZE says %d",
                    *source_p, here, p->rank, p->local_size);
    return nodes;
}

int tdm_pmix_put(tdm_pmix_t *p, const char *key, const char *value, char *why, size_t len) {
    if (!p->up)
        return fail(why, len, "PMIx_Put(%.80s): PMIx is not initialised", key);
    if (strlen(key) > PMIX_MAX_KEYLEN)
        return fail(why, len, "PMIx_Put: key '%.60s...' is longer than %d", key, PMIX_MAX_KEYLEN);
    pmix_value_t v;
    memset(&v, 0, sizeof(v));
    v.type = PMIX_STRING;
    v.data.string = (char *)value; /* PMIx_Put copies it */
    pmix_status_t st = FN(p)->put(PMIX_GLOBAL, key, &v);
    if (st != PMIX_SUCCESS)
        return fail(why, len, "PMIx_Put(%.80s) failed: %s (%d)", key, status_name(p, st), (int)st);
    return 0;
}

int tdm_pmix_fence(tdm_pmix_t *p, char *why, size_t len) {
    if (!p->up)
        return fail(why, len, "PMIx_Fence: PMIx is not initialised");
    pmix_status_t st = FN(p)->commit();
    if (st != PMIX_SUCCESS)
        return fail(why, len, "PMIx_Commit failed: %s (%d)", status_name(p, st), (int)st);
    /* collected: a get after the fence answers from the local store, for remote ranks too */
    pmix_info_t info;
    bool_info(&info, PMIX_COLLECT_DATA, true);
    st = FN(p)->fence(NULL, 0, &info, 1);
    if (st != PMIX_SUCCESS)
        return fail(why, len, "PMIx_Fence failed: %s (%d)", status_name(p, st), (int)st);
    return 0;
}

int tdm_pmix_get(tdm_pmix_t *p, int rank, const char *key, char *value, size_t vlen, char *why,
                 size_t len) {
    if (!p->up)
        return fail(why, len, "PMIx_Get(%.80s): PMIx is not initialised", key);
    if (rank < 0 || rank >= p->size)
        return fail(why, len, "PMIx_Get(%.80s): rank %d is not in the job of %d", key, rank,
                    p->size);
    return get_string(p, (pmix_rank_t)rank, key, true, value, vlen, why, len);
}

void tdm_pmix_abort(tdm_pmix_t *p, int code, const char *msg) {
    if (!p->up)
        return;
    /* no procs: every process of this namespace */
    FN(p)->abort(code, msg, NULL, 0);
}

int tdm_pmix_finalize(tdm_pmix_t *p, char *why, size_t len) {
    if (!p->up)
        return 0;
    p->up = false;
    pmix_status_t st = FN(p)->finalize(NULL, 0);
    if (st != PMIX_SUCCESS)
        return fail(why, len, "PMIx_Finalize failed: %s (%d)", status_name(p, st), (int)st);
    return 0;
}

#else /* built without PMIx's headers */

static int no_pmix(char *why, size_t len) {
    return fail(why, len,
                "started by a PMIx server (PMIX_NAMESPACE=%.60s), but this build of Tandem has "
                "no PMIx client (libpmix-dev was not found when it was built): rebuild with it, "
                "or launch with Hydra's mpiexec or srun --mpi=pmi2",
                getenv("PMIX_NAMESPACE") ? getenv("PMIX_NAMESPACE") : "?");
}

int tdm_pmix_init(tdm_pmix_t *p, const char *lib, char *why, size_t len) {
    memset(p, 0, sizeof(*p));
    return no_pmix(why, len);
}
int tdm_pmix_node_map(tdm_pmix_t *p, int *node_of, char (*hosts)[64], const char **source_p,
                      char *why, size_t len) {
    return no_pmix(why, len);
}
int tdm_pmix_put(tdm_pmix_t *p, const char *key, const char *value, char *why, size_t len) {
    return no_pmix(why, len);
}
int tdm_pmix_fence(tdm_pmix_t *p, char *why, size_t len) {
    return no_pmix(why, len);
}
int tdm_pmix_get(tdm_pmix_t *p, int rank, const char *key, char *value, size_t vlen, char *why,
                 size_t len) {
    return no_pmix(why, len);
}
void tdm_pmix_abort(tdm_pmix_t *p, int code, const char *msg) {}
int tdm_pmix_finalize(tdm_pmix_t *p, char *why, size_t len) {
    return 0;
}

#endif
