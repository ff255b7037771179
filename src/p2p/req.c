/* SPDX-License-Identifier: BSD-3-Clause */
#include "req.h"
#include "../base/lock.h"
#include "../base/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A fixed table of chunk pointers (32 KiB), never reallocated, so that the pending-operations
 * dump (dump.c) can walk it from a signal handler at any point. */
#define TDM_REQ_MAX_CHUNKS ((TDM_REQ_INDEX_MASK + 1) / TDM_REQ_CHUNK)
static tdm_req_t *chunks[TDM_REQ_MAX_CHUNKS];
static volatile size_t nchunks;
/* The free list, the chunk table's growth and in_use: under alloc_lock (threads of one
 * process allocate and free at once); nchunks is published with release for the lookups,
 * which take no lock. */
static tdm_lock_t alloc_lock = TDM_LOCK_INITIALIZER;
static tdm_req_t *free_list; /* linked through tx.link.next */
static size_t in_use;        /* unthreaded only: threaded, tdm_req_in_use counts the slots */

/* Threaded, each thread keeps up to CACHE_MAX free requests of its own, so that a request's
 * allocation and release take no lock in the steady state; a thread's cache goes back to
 * the free list when it exits (the key's destructor). */
#define CACHE_MAX 32
typedef struct req_cache {
    tdm_req_t *head;
    int n;
    int registered; /* its exit returns the cache (pthread key set) */
} req_cache_t;
/* the default TLS model: libmpi may be dlopen'ed (mpi4py), which the static one forbids */
static __thread req_cache_t cache;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static int grow(void);

static void cache_flush(void *arg) {
    req_cache_t *c = arg;
    tdm_lock_acquire(&alloc_lock);
    while (c->head) {
        tdm_req_t *r = c->head;
        c->head = (tdm_req_t *)r->tx.link.next;
        r->tx.link.next = (tdm_list_t *)free_list;
        free_list = r;
    }
    c->n = 0;
    tdm_lock_release(&alloc_lock);
}

static void cache_key_make(void) {
    pthread_key_create(&cache_key, cache_flush);
}

/* A free request from this thread's cache, else from the free list. */
static tdm_req_t *take_threaded(void) {
    req_cache_t *c = &cache; /* one TLS lookup */
    tdm_req_t *r = c->head;
    if (r) {
        c->head = (tdm_req_t *)r->tx.link.next;
        c->n--;
        return r;
    }
    tdm_lock_acquire(&alloc_lock);
    if (TDM_UNLIKELY(!free_list) && grow() != 0) {
        tdm_lock_release(&alloc_lock);
        return NULL;
    }
    r = free_list;
    free_list = (tdm_req_t *)r->tx.link.next;
    tdm_lock_release(&alloc_lock);
    return r;
}

static void give_threaded(tdm_req_t *r) {
    req_cache_t *c = &cache; /* one TLS lookup */
    if (c->n < CACHE_MAX) {
        if (TDM_UNLIKELY(!c->registered)) {
            /* this thread's first cached request: its exit must return them */
            pthread_once(&cache_once, cache_key_make);
            pthread_setspecific(cache_key, c);
            c->registered = 1;
        }
        r->tx.link.next = (tdm_list_t *)c->head;
        c->head = r;
        c->n++;
        return;
    }
    tdm_lock_acquire(&alloc_lock);
    r->tx.link.next = (tdm_list_t *)free_list;
    free_list = r;
    tdm_lock_release(&alloc_lock);
}

static int grow(void) {
    if (nchunks == TDM_REQ_MAX_CHUNKS) {
        tdm_error(P2P, "more than %u requests outstanding at once", TDM_REQ_INDEX_MASK);
        return -1;
    }
    tdm_req_t *c = calloc(TDM_REQ_CHUNK, sizeof(tdm_req_t));
    if (!c)
        return -1;
    chunks[nchunks] = c;
    /* index 0 is never handed out so that id 0 means "no request" on the wire */
    for (size_t i = TDM_REQ_CHUNK; i-- > 0;) {
        uint32_t index = (uint32_t)(nchunks * TDM_REQ_CHUNK + i);
        if (index == 0)
            continue;
        c[i].id = index;
        c[i].tx.link.next = (tdm_list_t *)free_list;
        free_list = &c[i];
    }
    /* the chunk is whole before it is counted (for the dump and for other threads) */
    TDM_STORE_RELEASE(&nchunks, nchunks + 1);
    return 0;
}

tdm_req_t *tdm_req_alloc(tdm_req_kind_t kind) {
    tdm_req_t *r;
    if (TDM_UNLIKELY(tdm_threaded)) {
        if (!(r = take_threaded()))
            return NULL;
    } else {
        if (TDM_UNLIKELY(!free_list) && grow() != 0)
            return NULL;
        r = free_list;
        free_list = (tdm_req_t *)r->tx.link.next;
        in_use++;
    }
    uint32_t id = r->id;
    memset(r, 0, offsetof(tdm_req_t, proto_state));
    r->id = id;
    atomic_signal_fence(memory_order_seq_cst); /* cleared before it shows as in use */
    TDM_STORE_RELAXED(&r->kind, (uint8_t)kind);
    tdm_list_init(&r->tx.link);
    tdm_list_init(&r->link);
    tdm_list_init(&r->copy_link);
    return r;
}

static void (*comm_retain)(void *);
static void (*comm_release)(void *);

void tdm_req_set_comm_hooks(void (*retain)(void *), void (*release)(void *)) {
    comm_retain = retain;
    comm_release = release;
}

void tdm_req_set_comm(tdm_req_t *r, void *comm) {
    if (comm && comm_retain)
        comm_retain(comm);
    r->comm = comm;
}

void tdm_req_free(tdm_req_t *r) {
    /* unlinked before its reference goes: the dump never follows a freed communicator */
    void *comm = r->comm;
    r->comm = NULL;
    atomic_signal_fence(memory_order_seq_cst);
    if (comm && comm_release && !r->owned)
        comm_release(comm);
    /* a new generation makes ids of the old use stale */
    uint32_t gen = (r->id >> TDM_REQ_INDEX_BITS) + 1;
    uint32_t id = (r->id & TDM_REQ_INDEX_MASK) | (gen << TDM_REQ_INDEX_BITS);
    if ((id >> TDM_REQ_INDEX_BITS) == 0) /* keep ids non-zero after wrap */
        id |= 1u << TDM_REQ_INDEX_BITS;
    TDM_STORE_RELAXED(&r->id, id); /* a thread that claims (core.c) reads it */
    TDM_STORE_RELAXED(&r->kind, (uint8_t)TDM_REQ_FREE);
    if (TDM_UNLIKELY(tdm_threaded)) {
        give_threaded(r);
        return;
    }
    r->tx.link.next = (tdm_list_t *)free_list;
    free_list = r;
    in_use--;
}

tdm_req_t *tdm_req_by_index(uint32_t index) {
    size_t c = index / TDM_REQ_CHUNK;
    if (index == 0 || c >= TDM_LOAD_ACQUIRE(&nchunks))
        return NULL;
    tdm_req_t *r = &chunks[c][index % TDM_REQ_CHUNK];
    return TDM_LOAD_RELAXED(&r->kind) == TDM_REQ_FREE ? NULL : r;
}

tdm_req_t *tdm_req_slot(uint32_t index) {
    size_t c = index / TDM_REQ_CHUNK;
    return c < TDM_LOAD_ACQUIRE(&nchunks) ? &chunks[c][index % TDM_REQ_CHUNK] : NULL;
}

tdm_req_t *tdm_req_lookup(uint32_t id) {
    tdm_req_t *r = tdm_req_by_index(id & TDM_REQ_INDEX_MASK);
    return (r && r->id == id) ? r : NULL;
}

size_t tdm_req_in_use(void) {
    if (!tdm_threaded)
        return in_use;
    /* threaded, no counter is kept on the hot path: count the slots (finalize, MPI_T) */
    size_t n = 0;
    for (size_t c = 0, nc = TDM_LOAD_ACQUIRE(&nchunks); c < nc; c++)
        for (size_t i = 0; i < TDM_REQ_CHUNK; i++)
            n += TDM_LOAD_RELAXED(&chunks[c][i].kind) != TDM_REQ_FREE;
    return n;
}

bool tdm_req_busy_on(const void *comm) {
    for (size_t c = 0, n = TDM_LOAD_ACQUIRE(&nchunks); c < n; c++) {
        for (size_t i = 0; i < TDM_REQ_CHUNK; i++) {
            const tdm_req_t *r = &chunks[c][i];
            if (r->kind != TDM_REQ_FREE && r->comm == comm && !r->persistent && !tdm_req_done(r))
                return true;
        }
    }
    return false;
}
