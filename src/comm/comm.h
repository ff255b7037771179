/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicators as the bindings see them.
 *
 * Rank map. A communicator maps its ranks to MPI_COMM_WORLD ranks. When the map
 * is affine (world = map.base + rank * map.stride: MPI_COMM_WORLD, MPI_COMM_SELF,
 * their duplicates, regular splits) `world` is NULL and the map costs O(1)
 * memory; otherwise `world` points at a rank array shared with the groups made
 * from it. tdm_comm_world_rank() is O(1) either way. Per-peer engine state is
 * created by the engine on first use, never per communicator.
 *
 * Context ids. `ctx` is for point-to-point and `ctx + 1` for collectives, so
 * the two never match each other's messages. Ids are even; id 0 is
 * MPI_COMM_WORLD's, 2 MPI_COMM_SELF's, 4 the boot communicator's (below). A new
 * communicator's id is agreed among
 * the processes that create it (see ctxid.c): the union of the ids each of them
 * uses, reduced over the parent communicator, and the lowest id free in it.
 * Two communicators that share a process therefore never share an id, the
 * number of communicators is bounded only by memory, and only the members of
 * the parent take part in a creation.
 *
 * Internal messages. comm/ exchanges its agreement messages on the parent's
 * collective context (ctx + 1) with negative tags (TDM_COMM_TAG_*), so they
 * cannot meet user messages (ctx) or collective algorithms, which use tags >= 0
 * on ctx + 1.
 *
 * Lifetime. `refs` counts the user's handle and every operation in flight: the
 * p2p engine calls tdm_comm_retain() when a request takes a communicator and
 * tdm_comm_release() when it drops it. MPI_Comm_free runs the attribute delete
 * callbacks, kills the handle (tdm_comm_get no longer finds it) and drops the
 * user's reference; the object, its context id and its handle slot are
 * reclaimed when the last reference goes.
 *
 * Origin. Every communicator and group records what it was derived from
 * (`session`): 0 for the World Model (MPI_Init), otherwise the serial number of
 * the MPI session (src/mpi/session.c). Objects of different origins must not be
 * mixed in one call, and when its origin ends (MPI_Finalize, MPI_Session_finalize)
 * a communicator is orphaned: tdm_comm_get no longer finds it, MPI_Comm_free still
 * releases it (tdm_comm_get_orphan).
 *
 * Threads (MPI_THREAD_MULTIPLE; base/lock.h). Who protects what:
 * - the handle tables of communicators, groups and info objects (base/htab.h):
 *   their own locks to change, none to look up;
 * - `refs` (and a rank array's and a group's): atomic when threaded (base/ref.h);
 * - context ids: ctxid.c's lock (its top comment: hooks never wait for it);
 * - attribute lists: attr.c's list lock; keyvals: attr.c's keyval lock;
 * - `errhandler`: swapped atomically by src/mpi (errors.c);
 * - `pv`: counters (TDM_COUNTER_ADD);
 * - everything else (name, hints, agree_seq, coll, topo) belongs to the calls
 *   on this communicator, which the user orders: MPI forbids concurrent
 *   collectives (creation included) on one communicator, and setting a name or
 *   info while another thread reads it is the user's race.
 *
 * The boot communicator. Creating a communicator from a group alone
 * (MPI_Comm_create_from_group, MPI_Intercomm_create_from_groups) has no parent to
 * talk over: the group's members talk over a hidden communicator spanning the whole
 * job on the reserved context 4 (fromgroup.c), which exists whenever the library is
 * initialised in either model and has no user handle.
 */
#ifndef TDM_COMM_H
#define TDM_COMM_H

#include "group.h"
#include "../base/pvar.h"
#include "../base/ref.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tdm_attr_list;
struct tdm_info;

/* What was done on a communicator: the performance variables bound to it
 * (pvars.def), kept by plain increments where the work starts. */
typedef struct tdm_comm_pv {
    uint64_t sent_msgs, sent_bytes; /* point-to-point messages the user sent on it (src/mpi) */
    uint64_t recvs;                 /* receives the user posted on it (src/mpi) */
    uint64_t coll_ops;              /* collectives started on it (coll/sched.c) */
} tdm_comm_pv_t;

typedef struct tdm_comm {
    int handle;
    int refs; /* user handle + pending operations */
    uint32_t ctx;
    int rank, size;
    tdm_comm_pv_t pv;  /* next to the fields every call reads: its counting costs no line */
    int *world;        /* comm rank -> world rank; NULL when the map is affine */
    tdm_rankmap_t map; /* the map (map.base/map.stride used when world is NULL) */
    int errhandler;    /* MPI_Errhandler handle (the communicator holds a reference) */
    char name[128];    /* MPI_MAX_OBJECT_NAME */
    /* owned by comm/ */
    struct tdm_attr_list *attrs; /* cached attributes (NULL: none) */
    struct tdm_info *hints;      /* info hints set by the user (NULL: none) */
    uint8_t freed;               /* TDM_COMM_FREED | TDM_COMM_ORPHANED: the handle is dead */
    uint8_t builtin;             /* MPI_COMM_WORLD / MPI_COMM_SELF */
    uint8_t inter;               /* intercommunicator (see below) */
    uint32_t session;            /* origin: 0 World Model, else a session's serial */
    uint32_t agree_seq;          /* creations started on it (all members count alike) */
    /* Intercommunicators (MPI-3.1 §6.6; intercomm.c). rank/size/map are the
     * local group; point-to-point ranks name the `remote` group (the sender
     * puts its local rank in the envelope, which is the rank the receiver
     * names). `ctx` is agreed by both groups; `local` is a hidden
     * intracommunicator over the local group on a context of its own (the
     * intercomm holds its only reference), for the local phases of
     * collectives and for creation exchanges. Unused (zero) on intracomms. */
    tdm_rankmap_t remote;
    struct tdm_comm *local;
    struct tdm_comm_nodes *nodes; /* the node map, built at first use (tdm_comm_nodes) */
    /* owned by other layers, NULL until they use them; freed through the hook below */
    void *coll; /* per-communicator collective state (coll/) */
    void *topo; /* topology (topo/), through tdm_comm_topo_ops */
} tdm_comm_t;

/* Values of `freed`: the user freed the handle; its origin (World Model or session)
 * was finalized while the user still held it. */
#define TDM_COMM_FREED 1u
#define TDM_COMM_ORPHANED 2u

/* Handles of user communicators: 0x84000000 | index (MPICH's "direct" comm kind). */
#define TDM_COMM_USER_BASE 0x84000000u
#define TDM_COMM_INDEX_MASK 0x03ffffffu

/* No context id (yet): a communicator whose agreement is running or failed. */
#define TDM_COMM_CTX_NONE 0xffffffffu

/* Internal tags on the parent's collective context (see above). */
#define TDM_COMM_TAG_GATHER (-18) /* allgather helper: gather */
#define TDM_COMM_TAG_BCAST (-19)  /* allgather helper: broadcast */
#define TDM_COMM_TAG_INTER (-20)  /* leaders' exchanges on an intercomm's ctx + 1 */
/* Context id agreements over a whole communicator (and an intercomm's leaders'
 * part): the n-th creation on a communicator uses tag TDM_COMM_TAG_AGREE(n), so
 * creations running at once (MPI_Comm_idup) never take each other's messages. */
#define TDM_COMM_TAG_AGREE(_seq) (-0x10000000 - (int)((_seq)&0x0fffffffu))
/* MPI_Comm_create_group: user tag t maps to TDM_COMM_TAG_GROUP_BASE + (t & mask) */
#define TDM_COMM_TAG_GROUP_BASE (-0x7fffffff - 1)
#define TDM_COMM_TAG_GROUP_MASK 0x3fffffff
/* Creations from groups, on the boot communicator: a hash h of the string tag maps
 * to TDM_COMM_TAG_FROM_GROUP_BASE + (h & mask) (fromgroup.c) */
#define TDM_COMM_TAG_FROM_GROUP_BASE (-0x40000000)
#define TDM_COMM_TAG_FROM_GROUP_MASK 0x1fffffff

extern tdm_comm_t *tdm_comm_world, *tdm_comm_self, *tdm_comm_boot;

int tdm_comm_init(int world_rank, int world_size);
/* MPI_COMM_WORLD and MPI_COMM_SELF are handles only while the World Model is
 * initialised; the objects exist whenever the library is (tdm_comm_init). */
void tdm_comm_world_set_active(bool active);
bool tdm_comm_world_active(void);
/* Finalize, first step (while MPI still works): delete the attributes of
 * MPI_COMM_SELF, then of MPI_COMM_WORLD, last set first (MPI-4.1 §11.2.4).
 * Returns 0 or the code of the first failing delete callback. Idempotent;
 * tdm_comm_fini calls it if the caller did not. */
int tdm_comm_finalize_attrs(void);
void tdm_comm_fini(void);
/* The communicator a handle names, or NULL (MPI_COMM_NULL, freed, orphaned,
 * MPI_COMM_WORLD/SELF outside the World Model, invalid). */
tdm_comm_t *tdm_comm_get(int handle);
/* The communicator of an orphaned handle the user has not freed, or NULL. */
tdm_comm_t *tdm_comm_get_orphan(int handle);
/* Communicators with a live user handle derived from `session`, in increasing
 * order of context id, into a malloc'ed *list_p (NULL when none). The count, or
 * -1 when out of memory (logged). */
int tdm_comm_list_session(uint32_t session, tdm_comm_t ***list_p);
/* Orphan every user communicator derived from `session` (see Origin above). */
void tdm_comm_orphan_session(uint32_t session);

static inline int tdm_comm_world_rank(const tdm_comm_t *c, int rank) {
    return c->world ? c->world[rank] : c->map.base + rank * c->map.stride;
}

/* Point-to-point peer rank -> world rank: the remote group on intercomms. */
static inline int tdm_comm_peer_world(const tdm_comm_t *c, int rank) {
    if (__builtin_expect(c->inter, 0))
        return tdm_rankmap_world(&c->remote, rank);
    return tdm_comm_world_rank(c, rank);
}
/* Number of point-to-point peers: the remote group's size on intercomms. */
static inline int tdm_comm_peer_size(const tdm_comm_t *c) {
    return __builtin_expect(c->inter, 0) ? c->remote.n : c->size;
}

/* Threaded, the engine takes and drops the references of its requests from any thread
 * (with its own locks held: these take none; a last release destroys, which takes only
 * leaf locks: the handle table's, the attribute lists'): atomic adds then. */
static inline void tdm_comm_retain(tdm_comm_t *c) {
    tdm_ref_inc(&c->refs);
}
/* Drop a reference; the last one destroys the communicator. */
void tdm_comm_release_slow(tdm_comm_t *c);
static inline void tdm_comm_release(tdm_comm_t *c) {
    if (tdm_ref_dec(&c->refs))
        tdm_comm_release_slow(c);
}

/* The performance variables bound to communicators (pvars.def): their object
 * is a communicator's `pv`. */
extern const tdm_pvar_desc_t tdm_comm_pvars[];
extern const int tdm_comm_npvars;

/* The communicator's ranks by node (nodes.c), for node-aware collectives: which node
 * each rank is on (src/net's node map, after TANDEM_NODE_SPLIT: a split "node" is a
 * node here too), the ranks of this process's node, and one leader per node. Nodes are
 * numbered 0 .. n - 1 by their lowest rank in the communicator, so every member builds
 * the same map from the node map alone, with no message. The sub-groups are rank lists
 * of this communicator, not communicators: collectives run them on its own collective
 * context, so the non-blocking forms need no context agreement first. */
typedef struct tdm_comm_nodes {
    int n;         /* nodes the communicator spans */
    int max_local; /* the most ranks one node holds */
    bool blocks;   /* each node's ranks are consecutive: rank order is node order */
    int node;      /* this process's node */
    int nlocal;    /* ranks on this node */
    int local;     /* this process's index among them */
    int leader;    /* this process's node index if it leads its node, else -1 */
    int *node_of;  /* by rank: its node */
    int *locals;   /* the ranks of this node, increasing (nlocal) */
    int *leaders;  /* by node: its lowest rank (n) */
    int *first;    /* by node: where its ranks start in `order` (n + 1; first[n] = size) */
    int *order;    /* every rank, node by node, increasing within each (size) */
} tdm_comm_nodes_t;

/* The node map of an intracommunicator, built at its first call and kept until it is
 * destroyed; NULL when out of memory (logged) or on an intercommunicator. Called only
 * by the collectives on `c`, which the user orders: no lock. */
const tdm_comm_nodes_t *tdm_comm_nodes(tdm_comm_t *c);
/* Free the map (destruction, finalize). */
void tdm_comm_nodes_free(tdm_comm_t *c);

/* Hook other layers set to free their `coll` state on destruction. */
extern void (*tdm_comm_destroy_hook)(tdm_comm_t *c);

/* How `topo` is copied by tdm_comm_dup and freed on destruction; set by topo/
 * before it hangs its first topology on a communicator (NULL until then).
 * dup returns NULL when out of memory. */
typedef struct tdm_comm_topo_ops {
    void *(*dup)(const void *topo);
    void (*free)(void *topo);
} tdm_comm_topo_ops_t;
extern const tdm_comm_topo_ops_t *tdm_comm_topo_ops;

/* An argument error that a collective creation found, the same at every member;
 * src/mpi reports it as the MPI error class of the same name. */
typedef enum tdm_comm_bad {
    TDM_COMM_BAD_NONE = 0,
    TDM_COMM_BAD_ARG,
    TDM_COMM_BAD_RANK,
    TDM_COMM_BAD_GROUP,
    TDM_COMM_BAD_COMM,
    TDM_COMM_BAD_TAG,
} tdm_comm_bad_t;

/* ---- creation (all collective over the processes named; blocking) ----
 * Results: 0, -1 out of memory (logged), or a positive MPI error code returned
 * by an attribute copy callback (dup). A process that gets no communicator
 * (color MPI_UNDEFINED, not in the group) gets *new_p = NULL. */

/* Duplicate: same group, new context, attributes copied by their callbacks,
 * same error handler; hints from `hints` (NULL: the parent's). */
int tdm_comm_dup(tdm_comm_t *parent, const struct tdm_info *hints, tdm_comm_t **new_p);
/* MPI_Comm_idup: the duplicate at once in *new_p (hints, topology, attributes
 * copied now), its context agreed in the background; it may be used once
 * done(arg, rc) has run with rc 0 (from this call or from progress). Results as
 * tdm_comm_dup's; done does not run when this call fails. */
typedef void (*tdm_comm_idup_done_fn_t)(void *arg, int rc);
int tdm_comm_idup(tdm_comm_t *parent, const struct tdm_info *hints, tdm_comm_idup_done_fn_t done,
                  void *arg, tdm_comm_t **new_p);
/* Split by color (-32766 = MPI_UNDEFINED: no communicator) ordered by key,
 * then parent rank. */
int tdm_comm_split(tdm_comm_t *parent, int color, int key, tdm_comm_t **new_p);
/* MPI_Comm_split_type (split_type.c), on an intra- or intercommunicator: how this
 * process groups, and its `arg`:
 *   TDM_SPLIT_NONE         MPI_UNDEFINED, or a value it cannot use: no communicator
 *   TDM_SPLIT_SHARED       the processes that share memory (the node)
 *   TDM_SPLIT_HW           one instance of hardware level `arg` (hwtopo.h): none if the
 *                          process is not within one
 *   TDM_SPLIT_HW_UNGUIDED  the largest level that splits the processes taking part
 *                          (all of them within one instance of it); *level_p says which,
 *                          -1 when no level does (no communicator anywhere)
 *   TDM_SPLIT_COLOR        processes that give the same `arg` (anywhere)
 *   TDM_SPLIT_NODE_COLOR   processes of one node that give the same `arg`
 * Processes that choose differently are never grouped together. On an intercomm the
 * result connects the processes of each group that grouped together, as
 * MPI_Comm_split does (none when the other group has none). */
typedef enum tdm_split_kind {
    TDM_SPLIT_NONE,
    TDM_SPLIT_SHARED,
    TDM_SPLIT_HW,
    TDM_SPLIT_HW_UNGUIDED,
    TDM_SPLIT_COLOR,
    TDM_SPLIT_NODE_COLOR,
} tdm_split_kind_t;
int tdm_comm_split_type(tdm_comm_t *c, tdm_split_kind_t kind, uint64_t arg, int key, int *level_p,
                        tdm_comm_t **new_p);
/* MPI_Comm_create: collective over all of parent; `g` must be a subgroup of
 * parent (checked by the caller); processes not in g get NULL. */
int tdm_comm_create(tdm_comm_t *parent, const tdm_group_t *g, tdm_comm_t **new_p);
/* MPI_Comm_create_group: collective over the members of g only; `tag` tells
 * concurrent calls apart. g must be a subgroup of parent containing the caller. */
int tdm_comm_create_group(tdm_comm_t *parent, const tdm_group_t *g, int tag, tdm_comm_t **new_p);
/* MPI_Comm_free: delete attributes (a failing callback aborts the free and its
 * code is returned), kill the handle, drop the user's reference. */
int tdm_comm_free(tdm_comm_t *c);
/* MPI_Comm_disconnect: wait until no operation on c is under way here, then free
 * it as tdm_comm_free does. */
int tdm_comm_disconnect(tdm_comm_t *c);

/* ---- intercommunicators (intercomm.c) ----
 * Same result convention as above; > 0 from tdm_comm_intercomm_create is the
 * tdm_comm_bad_t the local leader reported (passed in as leader_err there). */

/* MPI_Intercomm_create, collective over `local` (an intracomm). At the leader,
 * `peer`/`remote_leader`/`tag` name the exchange with the remote leader and
 * leader_err is 0 or the kind of argument error it found (the other local
 * ranks then return it, and no exchange happens). A positive result
 * comes with *why_p saying what went wrong (the leader's error; overlapping groups). */
int tdm_comm_intercomm_create(tdm_comm_t *local, int leader, tdm_comm_t *peer, int remote_leader,
                              int tag, tdm_comm_bad_t leader_err, const char **why_p,
                              tdm_comm_t **new_p);
/* MPI_Intercomm_merge: the intracomm over both groups, the group passing
 * high = false first (equal: the group whose rank 0 has the lower world rank). */
int tdm_comm_intercomm_merge(tdm_comm_t *inter, bool high, tdm_comm_t **new_p);
/* MPI_Comm_split on an intercomm: NULL unless both groups have members of color. */
int tdm_comm_inter_split(tdm_comm_t *inter, int color, int key, tdm_comm_t **new_p);
/* The inter part of tdm_comm_dup: agree a context with the remote group and
 * give `c` (a copy of parent's local side) parent's remote group and a local comm. */
int tdm_comm_inter_dup(tdm_comm_t *parent, uint32_t *ctx_p, tdm_comm_t **local_p);
/* The same without waiting: done(arg, rc, ctx, local) runs once both are agreed
 * (rc 0) or either failed (-1), from this call or from progress; -1 here: not
 * started, done will not run. */
typedef void (*tdm_comm_inter_dup_done_fn_t)(void *arg, int rc, uint32_t ctx, tdm_comm_t *local);
int tdm_comm_inter_idup(tdm_comm_t *parent, tdm_comm_inter_dup_done_fn_t done, void *arg);

/* ---- communicators from groups, without a parent (fromgroup.c, intercomm.c) ----
 * Collective over the members of the group(s) only; they talk over the boot
 * communicator with a tag hashed from `stringtag`, and first check that every
 * member passed the same string tag and group(s) (a hash collision or a
 * mismatched call then fails instead of mixing two creations). Results: 0, -1
 * (out of memory or a failed exchange, logged), or a positive tdm_comm_bad_t with
 * *why_p saying what disagreed. The caller must be a member; new comms take the
 * group's origin. */

/* MPI_Comm_create_from_group. */
int tdm_comm_from_group(const tdm_group_t *g, const char *stringtag, const char **why_p,
                        tdm_comm_t **new_p);
/* MPI_Intercomm_create_from_groups: the groups must be disjoint (checked by the
 * caller), leaders are ranks in their groups. */
int tdm_comm_inter_from_groups(const tdm_group_t *lg, int lleader, const tdm_group_t *rg,
                               int rleader, const char *stringtag, const char **why_p,
                               tdm_comm_t **new_p);

/* Compare: 0 ident, 1 congruent, 2 similar, 3 unequal (MPI_IDENT...). */
int tdm_comm_compare(const tdm_comm_t *a, const tdm_comm_t *b);
/* Communicators alive (user handles not yet freed + freed ones still in use). */
int tdm_comm_count(void);

/* ---- internal collectives over a set of parent ranks (comm_coll.c) ----
 * Blocking, on parent->ctx + 1 with the given internal tag. The participants
 * are parent ranks prank[0..n-1] (NULL: all of parent, in order), `me` the
 * caller's index among them. Replaced by coll/ when that exists. */
typedef struct tdm_comm_peers {
    tdm_comm_t *parent;
    const int *prank;
    int n, me;
    int tag_up, tag_down;
} tdm_comm_peers_t;

/* Every participant's `len` bytes at `in`, concatenated in index order, into `out`
 * (n * len bytes). 0 or -1 (no memory / communication failure, logged). */
int tdm_comm_allgather(const tdm_comm_peers_t *p, const void *in, size_t len, void *out);
/* ---- context id agreement (ctxid.c) ----
 * The participants agree on an id no communicator of any of them uses, and each
 * marks it used. Agreements run in rounds driven by point-to-point completions, so
 * any number may run at once and none waits for another (see ctxid.c). Concurrent
 * agreements must not share the tags of one participant pair: all_of-style
 * agreements over a whole communicator take a fresh pair from its `agree_seq`. */

/* The leaders of an intercommunicator's two groups, joined for an agreement whose
 * id must be free in both: the communicator they share, the other leader's
 * point-to-point rank in it, and the tag and context of their messages. */
typedef struct tdm_comm_bridge {
    tdm_comm_t *via;
    int peer;
    int tag;
    uint32_t ctx;
} tdm_comm_bridge_t;

/* rc 0 and the id, or -1 (a failed exchange or no memory, logged) and
 * TDM_COMM_CTX_NONE. */
typedef void (*tdm_comm_ctxid_done_fn_t)(void *arg, int rc, uint32_t ctx);
/* Start an agreement among p's participants (p is copied); with b, participant 0
 * joins the other group's agreement over it. done runs exactly once, from this
 * call or from progress. -1 (logged): not started, done will not run. */
int tdm_comm_ctxid_start(const tdm_comm_peers_t *p, const tdm_comm_bridge_t *b,
                         tdm_comm_ctxid_done_fn_t done, void *arg);
/* The same, waiting for the result: 0, or -1. */
int tdm_comm_ctxid_agree(const tdm_comm_peers_t *p, uint32_t *ctx_p);
int tdm_comm_ctxid_agree_bridged(const tdm_comm_peers_t *p, const tdm_comm_bridge_t *b,
                                 uint32_t *ctx_p);
/* The binomial tree over participants 0..n-1 that these exchanges use, rooted at 0:
 * me's parent clears me's lowest set bit, and its children are me + m for the powers
 * of two m below the bound returned (me's lowest set bit; at the root, n rounded up
 * to a power of two). */
static inline int tdm_comm_tree_bound(int me, int n) {
    if (me)
        return me & -me;
    int low = 1;
    while (low < n)
        low <<= 1;
    return low;
}
/* Participant 0's `len` bytes at buf to every participant (binomial tree). */
int tdm_comm_bcast(const tdm_comm_peers_t *p, void *buf, size_t len);
/* Did all participants pass the same arguments? Each holds a `len`-byte key;
 * up a binomial tree every participant compares its children's keys with its own
 * by cmp(mine, theirs), which returns 0 when they agree or a positive code, and
 * participant 0 sends the largest code found down: every participant gets 0 when
 * all agree, that code otherwise, or -1 when an exchange failed (logged). */
typedef int (*tdm_comm_verify_fn_t)(const void *mine, const void *theirs);
int tdm_comm_verify(const tdm_comm_peers_t *p, const void *key, size_t len,
                    tdm_comm_verify_fn_t cmp);

/* ---- local context id bookkeeping (ctxid.c) ---- */
int tdm_comm_ctxid_init(void);
void tdm_comm_ctxid_release(uint32_t ctx);
void tdm_comm_ctxid_fini(void);

#endif
