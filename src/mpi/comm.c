/* SPDX-License-Identifier: BSD-3-Clause */
/* Communicator bindings: creation, freeing, comparison, names, info hints. */
#include "bind.h"
#include "../comm/attr.h"
#include "../comm/group.h"
#include "../comm/hwtopo.h"
#include "../comm/info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* An argument that must be an intracommunicator. */
#define CHECK_INTRA(_fn, _comm, _name)                                                             \
    do {                                                                                           \
        if (TDM_UNLIKELY((_comm)->inter))                                                          \
            return tdm_mpi_err(_comm, MPI_ERR_COMM, _fn,                                           \
                               "%s must be an intracommunicator, not an intercommunicator",        \
                               _name);                                                             \
    } while (0)

/* Map a creation result (see comm.h) to an MPI error code. */
static int create_error(tdm_comm_t *c, int rc, const char *fn) {
    if (rc > 0) /* an attribute copy callback's code */
        return tdm_mpi_err_code(c, rc, fn);
    return tdm_mpi_err(c, MPI_ERR_OTHER, fn,
                       "cannot create the communicator (out of memory or a failed exchange "
                       "with the other ranks; see the log)");
}

/* A new communicator inherits its parent's error handler (MPI-4.1 §9.3); the
 * reference comes from Comm_get_errhandler and goes back in Comm_free. */
static void adopt(tdm_comm_t *parent, tdm_comm_t *c, MPI_Comm *newcomm) {
    MPI_Errhandler eh;
    if (PMPI_Comm_get_errhandler(parent->handle, &eh) == MPI_SUCCESS)
        c->errhandler = eh;
    *newcomm = c->handle;
}

/* The end of a creation: its error, or the new communicator (MPI_COMM_NULL where
 * this process is not in it) adopting its parent's error handler. */
static int created(tdm_comm_t *parent, int rc, tdm_comm_t *nc, const char *fn, MPI_Comm *newcomm) {
    if (rc)
        return create_error(parent, rc, fn);
    if (!nc)
        *newcomm = MPI_COMM_NULL;
    else
        adopt(parent, nc, newcomm);
    return MPI_SUCCESS;
}

static int dup_common(const char *fn, MPI_Comm comm, MPI_Info info, bool with_info,
                      MPI_Comm *newcomm) {
    tdm_comm_t *c, *nc;
    tdm_info_t *hints = NULL;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_PTR(fn, c, newcomm, "newcomm");
    if (with_info)
        TDM_GET_INFO_OR_NULL(fn, c, info, hints);
    tdm_info_t empty = {0};
    int rc = tdm_comm_dup(c, with_info ? (hints ? hints : &empty) : NULL, &nc);
    return created(c, rc, nc, fn, newcomm);
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    return dup_common("MPI_Comm_dup", comm, MPI_INFO_NULL, false, newcomm);
}
TDM_WEAK(MPI_Comm_dup)

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    return dup_common("MPI_Comm_dup_with_info", comm, info, true, newcomm);
}
TDM_WEAK(MPI_Comm_dup_with_info)

/* Non-blocking duplication: the new handle at once, its context agreed while the
 * program goes on (src/comm/ctxid.c); the request completes when it is known. */
static void idup_done(void *arg, int rc) {
    tdm_req_t *r = arg;
    r->status.error = rc ? TDM_ERR_OTHER : TDM_OK;
    tdm_p2p_complete(r);
}

static int idup_common(const char *fn, MPI_Comm comm, MPI_Info info, bool with_info,
                       MPI_Comm *newcomm, MPI_Request *request) {
    tdm_comm_t *c, *nc;
    tdm_info_t *hints = NULL;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_PTR(fn, c, newcomm, "newcomm");
    TDM_CHECK_PTR(fn, c, request, "request");
    if (with_info)
        TDM_GET_INFO_OR_NULL(fn, c, info, hints);
    tdm_req_t *r = tdm_req_alloc(TDM_REQ_OTHER);
    if (!r)
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a request");
    tdm_req_set_comm(r, c);
    r->status.source = MPI_ANY_SOURCE;
    r->status.tag = MPI_ANY_TAG;
    tdm_info_t empty = {0};
    int rc = tdm_comm_idup(c, with_info ? (hints ? hints : &empty) : NULL, idup_done, r, &nc);
    if (rc) {
        tdm_p2p_release(r);
        return create_error(c, rc, fn);
    }
    adopt(c, nc, newcomm);
    *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    return idup_common("MPI_Comm_idup", comm, MPI_INFO_NULL, false, newcomm, request);
}
TDM_WEAK(MPI_Comm_idup)

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                             MPI_Request *request) {
    return idup_common("MPI_Comm_idup_with_info", comm, info, true, newcomm, request);
}
TDM_WEAK(MPI_Comm_idup_with_info)

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Comm_split";
    tdm_comm_t *c, *nc;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_PTR(fn, c, newcomm, "newcomm");
    if (color < 0 && color != MPI_UNDEFINED)
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "invalid color %d (must be >= 0 or MPI_UNDEFINED)",
                           color);
    int rc =
        c->inter ? tdm_comm_inter_split(c, color, key, &nc) : tdm_comm_split(c, color, key, &nc);
    return created(c, rc, nc, fn, newcomm);
}
TDM_WEAK(MPI_Comm_split)

/* What a split type and its info keys ask this process for (see tdm_comm_split_type):
 * *kind_p and *arg_p, and in *hint_p / *val_p the hint the new communicator will
 * report (NULL: none). */
typedef struct split_req {
    tdm_split_kind_t kind;
    uint64_t arg;
    const char *hint, *val;
} split_req_t;

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* "mpi_hw_resource_type": "mpi_shared_memory" is MPI_COMM_TYPE_SHARED (MPI-4.1
 * §7.4.2), the others name a hardware level this machine describes (hwloc's
 * names); anything else gives MPI_COMM_NULL. */
static split_req_t hw_guided(const char *type) {
    split_req_t r = {.kind = TDM_SPLIT_NONE};
    if (!type)
        return r;
    int level = tdm_comm_hw_level(type);
    if (strcmp(type, "mpi_shared_memory") == 0)
        r.kind = TDM_SPLIT_SHARED;
    else if (level >= 0)
        r = (split_req_t){.kind = TDM_SPLIT_HW, .arg = (uint64_t)level};
    if (r.kind != TDM_SPLIT_NONE) {
        r.hint = "mpi_hw_resource_type";
        r.val = type;
    }
    return r;
}

/* MPICH's neighbourhoods: "nbhd_common_dirname" groups the processes of a node
 * that name the same existing directory (one inode; processes of different nodes
 * are never grouped, even on a shared file system, as nothing here tells whether
 * they see one); "network_topo" describes a network this single-node library does
 * not have, and gives MPI_COMM_NULL like any other key. */
static split_req_t neighborhood(const tdm_info_t *in) {
    split_req_t r = {.kind = TDM_SPLIT_NONE};
    const char *dir = in ? tdm_info_find(in, "nbhd_common_dirname") : NULL;
    struct stat st;
    if (dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
        uint64_t h = fnv1a(0xcbf29ce484222325ull, &st.st_dev, sizeof(st.st_dev));
        r = (split_req_t){.kind = TDM_SPLIT_NODE_COLOR,
                          .arg = fnv1a(h, &st.st_ino, sizeof(st.st_ino)),
                          .hint = "nbhd_common_dirname",
                          .val = dir};
    }
    return r;
}

/* MPI-4.1's MPI_COMM_TYPE_RESOURCE_GUIDED: a process set ("mpi_pset_name": the
 * processes of one instance of it) or a hardware resource, as HW_GUIDED. */
static split_req_t resource_guided(const tdm_info_t *in) {
    const char *pset = in ? tdm_info_find(in, "mpi_pset_name") : NULL;
    if (!pset)
        return hw_guided(in ? tdm_info_find(in, "mpi_hw_resource_type") : NULL);
    split_req_t r = {.kind = TDM_SPLIT_NONE};
    int i = tdm_boot_pset_find(pset);
    if (i >= 0) {
        tdm_boot_pset_t ps = tdm_boot_pset(&tdm_mpi.boot, i);
        uint64_t id[2] = {(uint64_t)i, (uint64_t)ps.first};
        r = (split_req_t){.kind = TDM_SPLIT_COLOR,
                          .arg = fnv1a(0xcbf29ce484222325ull, id, sizeof(id)),
                          .hint = "mpi_pset_name",
                          .val = pset};
    }
    return r;
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Comm_split_type";
    tdm_comm_t *c, *nc;
    tdm_info_t *in;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_PTR(fn, c, newcomm, "newcomm");
    TDM_GET_INFO_OR_NULL(fn, c, info, in);
    split_req_t r = {.kind = TDM_SPLIT_NONE};
    switch (split_type) {
    case MPI_UNDEFINED:
        break;
    case MPI_COMM_TYPE_SHARED:
        r = (split_req_t){
            .kind = TDM_SPLIT_SHARED, .hint = "mpi_hw_resource_type", .val = "mpi_shared_memory"};
        break;
    case MPI_COMM_TYPE_HW_GUIDED:
        r = hw_guided(in ? tdm_info_find(in, "mpi_hw_resource_type") : NULL);
        break;
    case MPI_COMM_TYPE_HW_UNGUIDED:
        r.kind = TDM_SPLIT_HW_UNGUIDED;
        break;
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        /* 4 was MPIX_COMM_TYPE_NEIGHBORHOOD before MPICH 4.2: a program built then
         * passes its keys, which RESOURCE_GUIDED has none of */
        if (in && (tdm_info_find(in, "nbhd_common_dirname") || tdm_info_find(in, "network_topo")))
            r = neighborhood(in);
        else
            r = resource_guided(in);
        break;
    case MPIX_COMM_TYPE_NEIGHBORHOOD:
        r = neighborhood(in);
        break;
    default:
        return tdm_mpi_err(c, MPI_ERR_ARG, fn, "invalid split_type %d", split_type);
    }
    /* every process takes part, so that ranks passing MPI_UNDEFINED or a value
     * they cannot use still meet the others in the exchange */
    int level = -1;
    int rc = tdm_comm_split_type(c, r.kind, r.arg, key, &level, &nc);
    if (rc)
        return create_error(c, rc, fn);
    if (!nc) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (r.kind == TDM_SPLIT_HW_UNGUIDED) {
        /* the level chosen goes back in the info argument too (MPI-4.1 §7.4.2) */
        r.hint = "mpi_hw_resource_type";
        r.val = tdm_comm_hw_name(level);
        if (in && !in->readonly && tdm_info_set(in, r.hint, r.val)) {
            tdm_comm_free(nc);
            return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for the info");
        }
    }
    if (r.hint && (nc->hints || (nc->hints = tdm_info_new(false))))
        tdm_info_set(nc->hints, r.hint, r.val);
    adopt(c, nc, newcomm);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_split_type)

/* Every member of g a member of c, and g of c's origin (session or World Model)? */
static int check_subgroup(const char *fn, tdm_comm_t *c, const tdm_group_t *g) {
    if (!tdm_session_compatible(c->session, g->session))
        return tdm_mpi_err(c, MPI_ERR_GROUP, fn,
                           "the group and the communicator were derived from different sessions "
                           "(or one from the World Model)");
    for (int i = 0; i < g->map.n; i++) {
        if (tdm_rankmap_find(&c->map, tdm_rankmap_world(&g->map, i)) < 0)
            return tdm_mpi_err(c, MPI_ERR_GROUP, fn,
                               "rank %d of the group (world rank %d) is not in the communicator", i,
                               tdm_rankmap_world(&g->map, i));
    }
    return MPI_SUCCESS;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Comm_create";
    tdm_comm_t *c, *nc;
    tdm_group_t *g;
    TDM_GET_COMM(fn, comm, c);
    TDM_GET_GROUP(fn, c, group, g);
    TDM_CHECK_PTR(fn, c, newcomm, "newcomm");
    int err = check_subgroup(fn, c, g);
    if (err)
        return err;
    /* on an intercomm, g is a subgroup of the local group and the result
     * connects it with the group the remote side passed (MPI-3.1 §6.4.2) */
    int rc = c->inter ? tdm_comm_inter_split(c, g->rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0,
                                             g->rank, &nc)
                      : tdm_comm_create(c, g, &nc);
    return created(c, rc, nc, fn, newcomm);
}
TDM_WEAK(MPI_Comm_create)

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Comm_create_group";
    tdm_comm_t *c, *nc;
    tdm_group_t *g;
    TDM_GET_COMM(fn, comm, c);
    CHECK_INTRA(fn, c, "comm");
    TDM_GET_GROUP(fn, c, group, g);
    TDM_CHECK_PTR(fn, c, newcomm, "newcomm");
    TDM_CHECK_TAG(fn, c, tag, false);
    int err = check_subgroup(fn, c, g);
    if (err)
        return err;
    if (g->rank == MPI_UNDEFINED) {
        /* not a member: nothing to agree on */
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int rc = tdm_comm_create_group(c, g, tag, &nc);
    return created(c, rc, nc, fn, newcomm);
}
TDM_WEAK(MPI_Comm_create_group)

/* MPI_Comm_free, and MPI_Comm_disconnect, which first waits for the operations
 * on the communicator that are under way here to complete. */
static int free_common(const char *fn, MPI_Comm *comm, bool disconnect) {
    tdm_comm_t *c;
    TDM_CHECK_INIT(fn);
    if (!comm)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "comm is NULL");
    if ((c = tdm_comm_get_orphan(*comm)) != NULL) {
        /* its session (or the World Model) was finalized, which synchronised with
         * the other members already: only this process's handle is left to drop */
        MPI_Errhandler eh = c->errhandler;
        tdm_comm_free(c);
        PMPI_Errhandler_free(&eh);
        *comm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    TDM_GET_COMM(fn, *comm, c);
    if (c->builtin)
        return tdm_mpi_err(c, MPI_ERR_COMM, fn, "%s cannot be %s", c->name,
                           disconnect ? "disconnected" : "freed");
    MPI_Errhandler eh = c->errhandler;
    int rc = disconnect ? tdm_comm_disconnect(c) : tdm_comm_free(c);
    if (rc > 0)
        return tdm_mpi_err_code(c, rc, fn);
    if (rc < 0)
        return tdm_mpi_err(c, MPI_ERR_OTHER, fn, "an attribute delete callback failed");
    PMPI_Errhandler_free(&eh);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int PMPI_Comm_free(MPI_Comm *comm) {
    return free_common("MPI_Comm_free", comm, false);
}
TDM_WEAK(MPI_Comm_free)

/* Any communicator, not only one from MPI_Comm_spawn/connect/accept/join
 * (MPI-4.1 §11.10.4); collective, but nothing more needs agreeing here. */
int PMPI_Comm_disconnect(MPI_Comm *comm) {
    return free_common("MPI_Comm_disconnect", comm, true);
}
TDM_WEAK(MPI_Comm_disconnect)

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result) {
    static const char fn[] = "MPI_Comm_compare";
    tdm_comm_t *a, *b;
    TDM_GET_COMM(fn, comm1, a);
    TDM_GET_COMM(fn, comm2, b);
    TDM_CHECK_PTR(fn, a, result, "result");
    if (a->session != b->session)
        return tdm_mpi_err(a, MPI_ERR_COMM, fn,
                           "comm1 and comm2 were derived from different sessions (or one from the "
                           "World Model)");
    *result = tdm_comm_compare(a, b);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_compare)

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group) {
    static const char fn[] = "MPI_Comm_group";
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_PTR(fn, c, group, "group");
    tdm_group_t *g = tdm_group_new(tdm_rankmap_share(&c->map), c->rank);
    if (!g)
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a group");
    g->session = c->session;
    *group = g->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_group)

TDM_MPI_PROPERTY(MPI_Comm_test_inter, MPI_Comm, tdm_comm_t, c, TDM_GET_COMM, c, int, flag, c->inter)

/* An intercommunicator handle into `_var`. */
#define GET_INTER(_fn, _handle, _var)                                                              \
    do {                                                                                           \
        TDM_GET_COMM(_fn, _handle, _var);                                                          \
        if (TDM_UNLIKELY(!(_var)->inter))                                                          \
            return tdm_mpi_err(_var, MPI_ERR_COMM, _fn, "%s is not an intercommunicator",          \
                               (_var)->name[0] ? (_var)->name : "the communicator");               \
    } while (0)

int PMPI_Comm_remote_size(MPI_Comm comm, int *size) {
    static const char fn[] = "MPI_Comm_remote_size";
    tdm_comm_t *c;
    GET_INTER(fn, comm, c);
    TDM_CHECK_PTR(fn, c, size, "size");
    *size = c->remote.n;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_remote_size)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group) {
    static const char fn[] = "MPI_Comm_remote_group";
    tdm_comm_t *c;
    GET_INTER(fn, comm, c);
    TDM_CHECK_PTR(fn, c, group, "group");
    tdm_group_t *g = tdm_group_new(tdm_rankmap_share(&c->remote), MPI_UNDEFINED);
    if (!g)
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for a group");
    g->session = c->session;
    *group = g->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_remote_group)

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm) {
    static const char fn[] = "MPI_Intercomm_create";
    tdm_comm_t *c, *nc = NULL, *peer = NULL;
    TDM_GET_COMM(fn, local_comm, c);
    CHECK_INTRA(fn, c, "local_comm");
    TDM_CHECK_PTR(fn, c, newintercomm, "newintercomm");
    if (local_leader < 0 || local_leader >= c->size)
        return tdm_mpi_err(c, MPI_ERR_RANK, fn, "invalid local_leader %d (local_comm of size %d)",
                           local_leader, c->size);
    /* peer_comm, remote_leader and tag matter at the local leader only; an
     * error there is reported after the other local ranks have been told (they
     * return the same class), so that none of them waits forever */
    tdm_comm_bad_t leader_err = TDM_COMM_BAD_NONE;
    char why[192] = "";
    if (c->rank == local_leader) {
        peer = tdm_comm_get(peer_comm);
        if (!peer) {
            leader_err = TDM_COMM_BAD_COMM;
            snprintf(why, sizeof(why), "invalid peer_comm (handle %#x)", (unsigned)peer_comm);
        } else if (peer->session != c->session) {
            leader_err = TDM_COMM_BAD_COMM;
            snprintf(why, sizeof(why),
                     "peer_comm and local_comm were derived from different sessions (or one "
                     "from the World Model)");
        } else if (remote_leader < 0 || remote_leader >= tdm_comm_peer_size(peer)) {
            leader_err = TDM_COMM_BAD_RANK;
            snprintf(why, sizeof(why), "invalid remote_leader %d (peer_comm of size %d)",
                     remote_leader, tdm_comm_peer_size(peer));
        } else if (!peer->inter && remote_leader == peer->rank) {
            leader_err = TDM_COMM_BAD_RANK;
            snprintf(why, sizeof(why),
                     "remote_leader %d is the local leader itself (rank %d of peer_comm)",
                     remote_leader, peer->rank);
        } else if (tag < 0 || tag > TDM_TAG_UB) {
            leader_err = TDM_COMM_BAD_TAG;
            snprintf(why, sizeof(why), "invalid tag %d (valid: 0..%d)", tag, TDM_TAG_UB);
        }
    }
    const char *what = "";
    int rc = tdm_comm_intercomm_create(c, local_leader, peer, remote_leader, tag, leader_err, &what,
                                       &nc);
    if (rc > 0) {
        if (leader_err)
            return tdm_mpi_err(c, tdm_mpi_comm_bad_class(leader_err), fn, "%s", why);
        return tdm_mpi_err(c, tdm_mpi_comm_bad_class(rc), fn, "%s (local_leader %d)", what,
                           local_leader);
    }
    return created(c, rc, nc, fn, newintercomm);
}
TDM_WEAK(MPI_Intercomm_create)

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) {
    static const char fn[] = "MPI_Intercomm_merge";
    tdm_comm_t *c, *nc;
    GET_INTER(fn, intercomm, c);
    TDM_CHECK_PTR(fn, c, newintracomm, "newintracomm");
    int rc = tdm_comm_intercomm_merge(c, high != 0, &nc);
    return created(c, rc, nc, fn, newintracomm);
}
TDM_WEAK(MPI_Intercomm_merge)

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name) {
    tdm_comm_t *c;
    TDM_GET_COMM("MPI_Comm_set_name", comm, c);
    TDM_CHECK_PTR("MPI_Comm_set_name", c, comm_name, "comm_name");
    /* longer names are truncated to MPI_MAX_OBJECT_NAME - 1 characters */
    snprintf(c->name, sizeof(c->name), "%s", comm_name);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen) {
    tdm_comm_t *c;
    TDM_GET_COMM("MPI_Comm_get_name", comm, c);
    TDM_CHECK_PTR("MPI_Comm_get_name", c, comm_name, "comm_name");
    TDM_CHECK_PTR("MPI_Comm_get_name", c, resultlen, "resultlen");
    _Static_assert(sizeof(c->name) == MPI_MAX_OBJECT_NAME, "name buffer size");
    strcpy(comm_name, c->name);
    *resultlen = (int)strlen(c->name);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_get_name)

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
    static const char fn[] = "MPI_Comm_set_info";
    tdm_comm_t *c;
    tdm_info_t *in;
    TDM_GET_COMM(fn, comm, c);
    TDM_GET_INFO_OR_NULL(fn, c, info, in);
    if (!in || in->n == 0)
        return MPI_SUCCESS;
    if (!c->hints && !(c->hints = tdm_info_new(false)))
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for the hints");
    /* new values replace old ones; hints not named keep their values */
    for (int i = 0; i < in->n; i++) {
        if (tdm_info_set(c->hints, in->e[i].key, in->e[i].val))
            return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for the hints");
    }
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_set_info)

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used) {
    static const char fn[] = "MPI_Comm_get_info";
    tdm_comm_t *c;
    TDM_GET_COMM(fn, comm, c);
    TDM_CHECK_PTR(fn, c, info_used, "info_used");
    tdm_info_t *out = tdm_info_dup(c->hints, true);
    if (!out)
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for an info object");
    *info_used = out->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_get_info)

int PMPI_Comm_get_parent(MPI_Comm *parent) {
    static const char fn[] = "MPI_Comm_get_parent";
    TDM_CHECK_INIT(fn);
    if (!parent)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "parent is NULL");
    /* no process is started by MPI_Comm_spawn (not supported), so none has a
     * parent: MPI-4.1 §11.8.2 says MPI_COMM_NULL then */
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Comm_get_parent)
