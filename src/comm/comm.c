/* SPDX-License-Identifier: BSD-3-Clause */
/* Communicator objects: handles, creation, destruction, comparison. */
#include "comm.h"
#include "../p2p/p2p.h"
#include "../p2p/req.h"
#include "attr.h"
#include "comm_impl.h"
#include "../base/htab.h"
#include "info.h"
#include "../base/log.h"
#include "../base/abi.h"
#include "../net/net.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(TDM_MPI_UNDEFINED == -32766, "group.c and comm.c use MPICH's MPI_UNDEFINED");
_Static_assert(TDM_MPI_IDENT == 0 && TDM_MPI_CONGRUENT == 1 && TDM_MPI_SIMILAR == 2 &&
                   TDM_MPI_UNEQUAL == 3,
               "tdm_comm_compare results");

static tdm_comm_t world_obj, self_obj, boot_obj;
tdm_comm_t *tdm_comm_world, *tdm_comm_self, *tdm_comm_boot;
static bool world_active;
void (*tdm_comm_destroy_hook)(tdm_comm_t *c);
const tdm_comm_topo_ops_t *tdm_comm_topo_ops;

static tdm_htab_t comms = TDM_HTAB_INIT((int)TDM_COMM_INDEX_MASK + 1, false);
static int my_world_rank;
static bool attrs_finalized;

/* requests hold their communicator (src/p2p/req.c calls these) */
static void req_comm_retain(void *c) {
    tdm_comm_retain(c);
}
static void req_comm_release(void *c) {
    tdm_comm_release(c);
}

/* A communicator that lives as long as the library: never freed, handle and context fixed. */
static void builtin_init(tdm_comm_t *c, int handle, uint32_t ctx, int rank, int size,
                         tdm_rankmap_t map, int errhandler, const char *name) {
    *c = (tdm_comm_t){.handle = handle,
                      .refs = 1,
                      .ctx = ctx,
                      .rank = rank,
                      .size = size,
                      .map = map,
                      .errhandler = errhandler,
                      .builtin = 1};
    strcpy(c->name, name);
}

int tdm_comm_init(int world_rank, int world_size) {
    tdm_req_set_comm_hooks(req_comm_retain, req_comm_release);
    my_world_rank = world_rank;
    attrs_finalized = false;
    builtin_init(&world_obj, TDM_MPI_COMM_WORLD, 0, world_rank, world_size,
                 tdm_rankmap_affine(world_size, 0, 1), TDM_MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD");
    builtin_init(&self_obj, TDM_MPI_COMM_SELF, 2, 0, 1, tdm_rankmap_affine(1, world_rank, 1),
                 TDM_MPI_ERRORS_ARE_FATAL, "MPI_COMM_SELF");
    builtin_init(&boot_obj, TDM_MPI_COMM_NULL, 4, world_rank, world_size,
                 tdm_rankmap_affine(world_size, 0, 1), TDM_MPI_ERRORS_RETURN,
                 "(creation of communicators from groups)");
    tdm_comm_world = &world_obj;
    tdm_comm_self = &self_obj;
    tdm_comm_boot = &boot_obj;
    world_active = false;
    if (tdm_group_init(world_rank) || tdm_comm_ctxid_init())
        return -1;
    return 0;
}

int tdm_comm_finalize_attrs(void) {
    if (attrs_finalized || !tdm_comm_world)
        return 0;
    int rc = tdm_attr_delete_all(TDM_ATTR_COMM, &self_obj.attrs, TDM_MPI_COMM_SELF);
    if (rc == 0)
        rc = tdm_attr_delete_all(TDM_ATTR_COMM, &world_obj.attrs, TDM_MPI_COMM_WORLD);
    attrs_finalized = true;
    return rc;
}

static void destroy(tdm_comm_t *c) {
    if (c->topo) {
        TDM_LOAD_ACQUIRE(&tdm_comm_topo_ops)->free(c->topo);
        c->topo = NULL;
    }
    if (c->coll)
        TDM_LOAD_ACQUIRE (&tdm_comm_destroy_hook)(c);
    tdm_comm_nodes_free(c);
    tdm_comm_ctxid_release(c->ctx);
    tdm_rankmap_release(&c->map);
    if (c->inter) {
        tdm_rankmap_release(&c->remote);
        if (c->local) /* NULL while (or when) an MPI_Comm_idup found no context */
            tdm_comm_release(c->local);
    }
    tdm_info_free(c->hints);
    /* attributes were deleted by tdm_comm_free; at finalize, drop without callbacks */
    if (c->handle != TDM_MPI_COMM_NULL) /* an intercomm's hidden local comm has no handle */
        tdm_htab_free(&comms, (int)((unsigned)c->handle & TDM_COMM_INDEX_MASK));
    tdm_attr_list_drop(&c->attrs);
    free(c);
}

void tdm_comm_fini(void) {
    tdm_comm_finalize_attrs();
    for (int i = 0; i < tdm_htab_count(&comms); i++) {
        tdm_comm_t *c = tdm_htab_get(&comms, (unsigned)i);
        if (c) {
            /* leaked by the user or still referenced: no callbacks now, just memory */
            destroy(c);
        }
    }
    tdm_htab_fini(&comms);
    tdm_comm_nodes_free(&world_obj);
    tdm_comm_nodes_free(&self_obj);
    tdm_comm_nodes_free(&boot_obj);
    tdm_attr_list_drop(&world_obj.attrs); /* left by a failing delete callback */
    tdm_attr_list_drop(&self_obj.attrs);
    tdm_info_free(world_obj.hints);
    tdm_info_free(self_obj.hints);
    world_obj.hints = self_obj.hints = NULL;
    tdm_comm_world = tdm_comm_self = tdm_comm_boot = NULL;
    world_active = false;
    tdm_group_fini();
    tdm_attr_fini();
    tdm_comm_ctxid_fini();
}

void tdm_comm_world_set_active(bool active) {
    world_active = active;
}

bool tdm_comm_world_active(void) {
    return world_active;
}

tdm_comm_t *tdm_comm_get(int handle) {
    if (handle == TDM_MPI_COMM_WORLD)
        return world_active ? tdm_comm_world : NULL;
    if (handle == TDM_MPI_COMM_SELF)
        return world_active ? tdm_comm_self : NULL;
    if (((unsigned)handle & ~TDM_COMM_INDEX_MASK) != TDM_COMM_USER_BASE)
        return NULL;
    tdm_comm_t *c = tdm_htab_get(&comms, (unsigned)handle & TDM_COMM_INDEX_MASK);
    return c && !c->freed ? c : NULL;
}

tdm_comm_t *tdm_comm_get_orphan(int handle) {
    if (((unsigned)handle & ~TDM_COMM_INDEX_MASK) != TDM_COMM_USER_BASE)
        return NULL;
    tdm_comm_t *c = tdm_htab_get(&comms, (unsigned)handle & TDM_COMM_INDEX_MASK);
    return c && c->freed == TDM_COMM_ORPHANED ? c : NULL;
}

static int cmp_ctx(const void *a, const void *b) {
    uint32_t x = (*(tdm_comm_t *const *)a)->ctx, y = (*(tdm_comm_t *const *)b)->ctx;
    return (x > y) - (x < y);
}

int tdm_comm_list_session(uint32_t session, tdm_comm_t ***list_p) {
    int n = 0;
    tdm_comm_t **list = NULL;
    for (int i = 0; i < tdm_htab_count(&comms); i++) {
        tdm_comm_t *c = tdm_htab_get(&comms, (unsigned)i);
        if (!c || c->freed || c->session != session)
            continue;
        tdm_comm_t **l = realloc(list, (size_t)(n + 1) * sizeof(*l));
        if (!l) {
            tdm_error(COMM, "out of memory listing the communicators of a session");
            free(list);
            return -1;
        }
        list = l;
        list[n++] = c;
    }
    /* one order at every process: a communicator's id is the same at all its members */
    if (n > 1)
        qsort(list, (size_t)n, sizeof(*list), cmp_ctx);
    *list_p = list;
    return n;
}

void tdm_comm_orphan_session(uint32_t session) {
    for (int i = 0; i < tdm_htab_count(&comms); i++) {
        tdm_comm_t *c = tdm_htab_get(&comms, (unsigned)i);
        if (c && !c->freed && c->session == session)
            c->freed = TDM_COMM_ORPHANED;
    }
}

void tdm_comm_release_slow(tdm_comm_t *c) {
    if (c->builtin) {
        c->refs = 1; /* never destroyed before tdm_comm_fini */
        return;
    }
    destroy(c);
}

int tdm_comm_count(void) {
    return tdm_htab_live(&comms);
}

/* A new communicator over `map` (taken over) with the given id; NULL if out of memory
 * (the map is released and the id given back then). */
static tdm_comm_t *comm_new(tdm_comm_t *parent, tdm_rankmap_t map, int rank, uint32_t ctx) {
    tdm_comm_t *c = calloc(1, sizeof(*c));
    int index = c ? tdm_htab_alloc(&comms, c) : -1;
    if (index < 0) {
        tdm_error(COMM, "out of memory for a communicator (%d alive)", tdm_comm_count());
        free(c);
        tdm_rankmap_release(&map);
        tdm_comm_ctxid_release(ctx);
        return NULL;
    }
    c->handle = (int)(TDM_COMM_USER_BASE | (unsigned)index);
    c->refs = 1;
    c->ctx = ctx;
    c->rank = rank;
    c->size = map.n;
    c->map = map;
    c->world = map.arr ? map.arr->r : NULL;
    c->errhandler = parent->errhandler; /* the bindings take the reference */
    c->session = parent->session;
    tdm_trace(COMM, "new communicator %#x: ctx %u, rank %d of %d%s", (unsigned)c->handle, ctx, rank,
              map.n, map.arr ? "" : " (affine map)");
    return c;
}

tdm_comm_t *tdm_comm_new(tdm_comm_t *parent, tdm_rankmap_t map, int rank, uint32_t ctx) {
    return comm_new(parent, map, rank, ctx);
}

/* All of parent, exchanging with the given tags. */
static tdm_comm_peers_t all_of(tdm_comm_t *parent, int tag_up, int tag_down) {
    return tdm_comm_peers(parent, NULL, parent->size, parent->rank, tag_up, tag_down);
}

/* All of parent as the participants of its next context id agreement. */
static tdm_comm_peers_t agree_peers(tdm_comm_t *parent) {
    int tag = TDM_COMM_TAG_AGREE(parent->agree_seq++);
    return all_of(parent, tag, tag);
}

/* What a duplicate takes from its parent besides the context: the remote group,
 * hints, topology and attributes (copy callbacks run here). 0, -1, or a copy
 * callback's code. */
static int dup_fill(tdm_comm_t *parent, const tdm_info_t *hints, tdm_comm_t *c) {
    if (parent->inter) {
        c->inter = 1;
        c->remote = tdm_rankmap_share(&parent->remote);
    }
    const tdm_info_t *h = hints ? hints : parent->hints;
    if (h && h->n > 0 && !(c->hints = tdm_info_dup(h, false)))
        return -1;
    if (parent->topo && !(c->topo = TDM_LOAD_ACQUIRE(&tdm_comm_topo_ops)->dup(parent->topo)))
        return -1;
    int rc = tdm_attr_copy_all(TDM_ATTR_COMM, &parent->attrs, parent->handle, c->handle, &c->attrs);
    return rc > 0 ? rc : rc < 0 ? -1 : 0;
}

int tdm_comm_dup(tdm_comm_t *parent, const tdm_info_t *hints, tdm_comm_t **new_p) {
    uint32_t ctx;
    tdm_comm_t *local = NULL;
    tdm_comm_peers_t p;
    if (parent->inter ? tdm_comm_inter_dup(parent, &ctx, &local)
                      : (p = agree_peers(parent), tdm_comm_ctxid_agree(&p, &ctx)))
        return -1;
    tdm_comm_t *c = comm_new(parent, tdm_rankmap_share(&parent->map), parent->rank, ctx);
    if (!c) {
        if (local)
            tdm_comm_release(local);
        return -1;
    }
    c->local = local;
    int rc = dup_fill(parent, hints, c);
    if (rc != 0) {
        destroy(c);
        return rc;
    }
    *new_p = c;
    return 0;
}

/* ---- MPI_Comm_idup ---- */

typedef struct idup {
    tdm_comm_t *c;
    tdm_comm_idup_done_fn_t done;
    void *arg;
} idup_t;

static void idup_end(idup_t *op, int rc) {
    tdm_comm_idup_done_fn_t done = op->done;
    void *arg = op->arg;
    tdm_comm_t *c = op->c;
    free(op);
    if (rc)
        tdm_error(COMM, "MPI_Comm_idup: no context id for communicator %#x", (unsigned)c->handle);
    tdm_comm_release(c); /* the operation's reference */
    done(arg, rc);
}

static void idup_ctx_done(void *arg, int rc, uint32_t ctx) {
    idup_t *op = arg;
    if (rc == 0)
        op->c->ctx = ctx;
    idup_end(op, rc);
}

static void idup_inter_done(void *arg, int rc, uint32_t ctx, tdm_comm_t *local) {
    idup_t *op = arg;
    if (rc == 0) {
        op->c->ctx = ctx;
        op->c->local = local;
    }
    idup_end(op, rc);
}

int tdm_comm_idup(tdm_comm_t *parent, const tdm_info_t *hints, tdm_comm_idup_done_fn_t done,
                  void *arg, tdm_comm_t **new_p) {
    idup_t *op = malloc(sizeof(*op));
    if (!op) {
        tdm_error(COMM, "out of memory for MPI_Comm_idup");
        return -1;
    }
    tdm_comm_t *c =
        comm_new(parent, tdm_rankmap_share(&parent->map), parent->rank, TDM_COMM_CTX_NONE);
    if (!c) {
        free(op);
        return -1;
    }
    int rc = dup_fill(parent, hints, c);
    if (rc != 0) {
        free(op);
        destroy(c);
        return rc;
    }
    *op = (idup_t){.c = c, .done = done, .arg = arg};
    tdm_comm_retain(c); /* until the context is known, whatever the user does */
    tdm_comm_peers_t p;
    int err = parent->inter
                  ? tdm_comm_inter_idup(parent, idup_inter_done, op)
                  : (p = agree_peers(parent), tdm_comm_ctxid_start(&p, NULL, idup_ctx_done, op));
    if (err) {
        free(op);
        c->refs = 1;
        destroy(c);
        return -1;
    }
    *new_p = c;
    return 0;
}

static int cmp_members(const void *a, const void *b, void *items) {
    const tdm_comm_split_item_t *all = items;
    int x = *(const int *)a, y = *(const int *)b;
    int kx = all[x].key, ky = all[y].key;
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return (x > y) - (x < y);
}

int tdm_comm_split_items(tdm_comm_t *parent, const tdm_comm_split_item_t *all, tdm_comm_t **new_p) {
    int n = parent->size;
    uint64_t color = all[parent->rank].color;
    uint32_t ctx = 0;
    tdm_comm_peers_t p = agree_peers(parent);
    if (tdm_comm_ctxid_agree(&p, &ctx))
        return -1;
    if (!all[parent->rank].defined) {
        tdm_comm_ctxid_release(ctx);
        *new_p = NULL;
        return 0;
    }
    int *members = malloc((size_t)n * sizeof(int));
    if (!members) {
        tdm_error(COMM, "out of memory for a split of %d ranks", n);
        tdm_comm_ctxid_release(ctx);
        return -1;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (all[i].defined && all[i].color == color)
            members[m++] = i;
    }
    qsort_r(members, (size_t)m, sizeof(int), cmp_members, (void *)all);
    int rank = -1;
    for (int i = 0; i < m; i++) {
        if (members[i] == parent->rank)
            rank = i;
        members[i] = tdm_comm_world_rank(parent, members[i]);
    }
    tdm_rankmap_t map;
    if (tdm_rankmap_from_list(members, m, &map)) {
        tdm_error(COMM, "out of memory for the rank map of a %d-rank communicator", m);
        free(members);
        tdm_comm_ctxid_release(ctx);
        return -1;
    }
    free(members);
    tdm_comm_t *c = comm_new(parent, map, rank, ctx);
    if (!c)
        return -1;
    *new_p = c;
    return 0;
}

int tdm_comm_split_color(tdm_comm_t *parent, uint64_t color, bool defined, int key,
                         tdm_comm_t **new_p) {
    int n = parent->size;
    tdm_comm_split_item_t mine = {.color = color, .key = key, .defined = defined};
    tdm_comm_split_item_t *all = malloc((size_t)n * sizeof(*all));
    if (!all) {
        tdm_error(COMM, "out of memory for a split of %d ranks", n);
        return -1;
    }
    tdm_comm_peers_t p = all_of(parent, TDM_COMM_TAG_GATHER, TDM_COMM_TAG_BCAST);
    int err = tdm_comm_allgather(&p, &mine, sizeof(mine), all);
    if (!err)
        err = tdm_comm_split_items(parent, all, new_p);
    free(all);
    return err;
}

int tdm_comm_split(tdm_comm_t *parent, int color, int key, tdm_comm_t **new_p) {
    return tdm_comm_split_color(parent, (uint64_t)(uint32_t)color, color != TDM_MPI_UNDEFINED, key,
                                new_p);
}

/* Processes that share memory are those on one host: FNV-1a of the host name. */
uint64_t tdm_comm_node_color(void) {
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = host; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    /* the node map's node, not the host alone: ranks of one host that TANDEM_NODE_SPLIT
     * puts on several nodes share no memory as far as the program is concerned */
    for (int i = 0; i < 4; i++)
        h = (h ^ (((uint32_t)tdm_net.node >> (8 * i)) & 0xffu)) * 0x100000001b3ull;
    return h;
}

int tdm_comm_create(tdm_comm_t *parent, const tdm_group_t *g, tdm_comm_t **new_p) {
    tdm_comm_peers_t p = agree_peers(parent);
    uint32_t ctx;
    if (tdm_comm_ctxid_agree(&p, &ctx))
        return -1;
    if (g->rank == TDM_MPI_UNDEFINED) {
        tdm_comm_ctxid_release(ctx);
        *new_p = NULL;
        return 0;
    }
    tdm_comm_t *c = comm_new(parent, tdm_rankmap_share(&g->map), g->rank, ctx);
    if (!c)
        return -1;
    *new_p = c;
    return 0;
}

int tdm_comm_create_group(tdm_comm_t *parent, const tdm_group_t *g, int tag, tdm_comm_t **new_p) {
    int n = g->map.n;
    int *prank = malloc((size_t)n * sizeof(int));
    if (!prank) {
        tdm_error(COMM, "out of memory for a group of %d ranks", n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        prank[i] = tdm_rankmap_find(&parent->map, tdm_rankmap_world(&g->map, i));
        if (prank[i] < 0) {
            tdm_error(COMM, "group member %d is not in the parent communicator", i);
            free(prank);
            return -1;
        }
    }
    int t = TDM_COMM_TAG_GROUP_BASE + (tag & TDM_COMM_TAG_GROUP_MASK);
    tdm_comm_peers_t p = tdm_comm_peers(parent, prank, n, g->rank, t, t);
    uint32_t ctx;
    int err = tdm_comm_ctxid_agree(&p, &ctx);
    free(prank);
    if (err)
        return -1;
    tdm_comm_t *c = comm_new(parent, tdm_rankmap_share(&g->map), g->rank, ctx);
    if (!c)
        return -1;
    *new_p = c;
    return 0;
}

int tdm_comm_free(tdm_comm_t *c) {
    int rc = tdm_attr_delete_all(TDM_ATTR_COMM, &c->attrs, c->handle);
    if (rc != 0)
        return rc > 0 ? rc : -1;
    c->freed = TDM_COMM_FREED;
    tdm_comm_release(c);
    return 0;
}

static bool comm_idle(void *c) {
    return !tdm_req_busy_on(c);
}

int tdm_comm_disconnect(tdm_comm_t *c) {
    /* MPI-4.1 §11.10.4: the pending communication completes internally; the
     * matching operations of the other members were posted before they
     * disconnect too, so this ends */
    if (!comm_idle(c))
        tdm_p2p_wait_until(comm_idle, c);
    return tdm_comm_free(c);
}

int tdm_comm_compare(const tdm_comm_t *a, const tdm_comm_t *b) {
    if (a == b)
        return TDM_MPI_IDENT;
    if (a->inter != b->inter)
        return TDM_MPI_UNEQUAL;
    if (a->inter) { /* both groups compared (§6.4.1) */
        if (tdm_rankmap_equal(&a->map, &b->map) && tdm_rankmap_equal(&a->remote, &b->remote))
            return TDM_MPI_CONGRUENT;
        if (tdm_rankmap_same_set(&a->map, &b->map) && tdm_rankmap_same_set(&a->remote, &b->remote))
            return TDM_MPI_SIMILAR;
        return TDM_MPI_UNEQUAL;
    }
    if (tdm_rankmap_equal(&a->map, &b->map))
        return TDM_MPI_CONGRUENT;
    if (tdm_rankmap_same_set(&a->map, &b->map))
        return TDM_MPI_SIMILAR;
    return TDM_MPI_UNEQUAL;
}
