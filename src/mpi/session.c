/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Sessions Model (MPI-4.1 §11.3): sessions, process sets, groups from process
 * sets, and communicators made from a group without a parent communicator. The
 * sessions' error handler calls are in errors.c.
 *
 * A session is a user of the library (init.c): the first of MPI_Init and
 * MPI_Session_init sets the library up, the last finalize tears it down, in any
 * order. Each session has a serial number that the communicators and groups
 * derived from it carry (`session` in comm.h), so objects of different sessions
 * (or of a session and the World Model) are refused when mixed in one call, and a
 * group outlives its session only as a handle to free.
 *
 * MPI_Session_finalize synchronises on every communicator derived from the session
 * that the user has not freed, as if each were disconnected: a barrier on each, in
 * increasing order of context id. A communicator's id is the same at all its
 * members, so every process meets the others in the same order and the barriers
 * cannot deadlock however the communicators overlap. Those communicators are then
 * orphaned: MPI_Comm_free releases them, any other call refuses them.
 */
#include "bind.h"
#include "../coll/coll.h"
#include "../coll/inter.h"
#include "../comm/group.h"
#include "../base/htab.h"
#include "../comm/info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESSION_BASE 0xb8000000u
#define SESSION_INDEX_MASK 0x03ffffffu

static tdm_htab_t sessions = TDM_HTAB_INIT((int)SESSION_INDEX_MASK + 1, false);
static uint32_t last_serial;

static const char *const thread_levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                            "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

tdm_mpi_session_t *tdm_mpi_session_get(MPI_Session handle) {
    if (((unsigned)handle & ~SESSION_INDEX_MASK) != SESSION_BASE)
        return NULL;
    return tdm_htab_get(&sessions, (unsigned)handle & SESSION_INDEX_MASK);
}

bool tdm_mpi_origin_open(uint32_t serial) {
    if (serial == 0)
        return tdm_comm_world_active();
    for (int i = 0; i < tdm_htab_count(&sessions); i++) {
        tdm_mpi_session_t *s = tdm_htab_get(&sessions, (unsigned)i);
        if (s && s->serial == serial)
            return true;
    }
    return false;
}

/* ---- creation and destruction ---- */

/* Errors of MPI_Session_init go to its errhandler argument once that is known good. */
#define INIT_ERR(_eh, _class, ...)                                                                 \
    tdm_mpi_err_eh(_eh, MPI_SESSION_NULL, "MPI_Session_init", _class, "MPI_Session_init",          \
                   __VA_ARGS__)

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session) {
    static const char fn[] = "MPI_Session_init";
    if (!tdm_mpi_errh_valid(errhandler, TDM_ERRH_SESSION))
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn,
                           "invalid errhandler (handle %#x): not a predefined handler or one made "
                           "by MPI_Session_create_errhandler",
                           (unsigned)errhandler);
    if (!session)
        return INIT_ERR(errhandler, MPI_ERR_ARG, "session is NULL");
    tdm_info_t *in = NULL;
    if (info != MPI_INFO_NULL && !(in = tdm_info_get(info)))
        return INIT_ERR(errhandler, MPI_ERR_INFO, "invalid info (handle %#x)", (unsigned)info);
    /* without the key: SERIALIZED (calls serialised by the user are safe from any
     * thread), within what TANDEM_THREAD_LEVEL grants (tdm_mpi_thread_grant) */
    int level = MPI_THREAD_SERIALIZED;
    const char *want = in ? tdm_info_find(in, "thread_level") : NULL;
    if (want) {
        int i = 0;
        while (i < 4 && strcmp(want, thread_levels[i]) != 0)
            i++;
        if (i == 4)
            return INIT_ERR(errhandler, MPI_ERR_INFO_VALUE,
                            "info key \"thread_level\" is \"%s\", not one of MPI_THREAD_SINGLE, "
                            "_FUNNELED, _SERIALIZED, _MULTIPLE",
                            want);
        level = MPI_THREAD_SINGLE + i;
    }
    tdm_mpi_session_t *s = calloc(1, sizeof(*s));
    int index = s ? tdm_htab_alloc(&sessions, s) : -1;
    if (index < 0) {
        free(s);
        return INIT_ERR(errhandler, MPI_ERR_NO_MEM, "out of memory for a session");
    }
    s->handle = (int)(SESSION_BASE | (unsigned)index);
    /* sessions may start in several threads */
    s->serial = __atomic_add_fetch(&last_serial, 1, __ATOMIC_RELAXED);
    s->errhandler = errhandler;
    s->thread_level = level;
    tdm_mpi_errh_retain(errhandler);
    tdm_mpi_users_add();
    s->thread_level = tdm_mpi_thread_grant(level);
    *session = s->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Session_init)

int PMPI_Session_finalize(MPI_Session *session) {
    static const char fn[] = "MPI_Session_finalize";
    tdm_mpi_session_t *s;
    if (!session)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "session is NULL");
    TDM_GET_SESSION(fn, *session, s);
    tdm_comm_t **list = NULL;
    int n = tdm_comm_list_session(s->serial, &list);
    int err = MPI_SUCCESS;
    if (n < 0)
        err = tdm_mpi_err_session(s, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < n; i++) {
        tdm_comm_t *c = list[i];
        int rc = c->inter ? tdm_coll_inter_barrier(c, NULL) : tdm_coll_barrier(c, NULL);
        if (rc != TDM_OK && err == MPI_SUCCESS)
            err = tdm_mpi_err_session(s, tdm_mpi_class_of((tdm_rc_t)rc), fn,
                                      "the synchronisation on communicator %#x (%s) failed",
                                      (unsigned)c->handle, c->name);
    }
    free(list);
    tdm_comm_orphan_session(s->serial);
    tdm_mpi_errh_release(s->errhandler);
    tdm_htab_free(&sessions, (int)((unsigned)s->handle & SESSION_INDEX_MASK));
    free(s);
    *session = MPI_SESSION_NULL;
    tdm_mpi_users_drop();
    return err;
}
TDM_WEAK(MPI_Session_finalize)

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used) {
    static const char fn[] = "MPI_Session_get_info";
    tdm_mpi_session_t *s;
    TDM_GET_SESSION(fn, session, s);
    TDM_CHECK_PTR_SESSION(fn, s, info_used, "info_used");
    tdm_info_t *out = tdm_info_new(true);
    if (!out || tdm_info_set(out, "thread_level", thread_levels[s->thread_level])) {
        tdm_info_free(out);
        return tdm_mpi_err_session(s, MPI_ERR_NO_MEM, fn, "out of memory for an info object");
    }
    *info_used = out->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Session_get_info)

/* ---- process sets ---- */

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names) {
    static const char fn[] = "MPI_Session_get_num_psets";
    tdm_mpi_session_t *s;
    tdm_info_t *in;
    TDM_GET_SESSION(fn, session, s);
    TDM_GET_INFO_OR_NULL_SESSION(fn, s, info, in);
    TDM_CHECK_PTR_SESSION(fn, s, npset_names, "npset_names");
    *npset_names = tdm_boot_pset_count();
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Session_get_num_psets)

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                              char *pset_name) {
    static const char fn[] = "MPI_Session_get_nth_pset";
    tdm_mpi_session_t *s;
    tdm_info_t *in;
    TDM_GET_SESSION(fn, session, s);
    TDM_GET_INFO_OR_NULL_SESSION(fn, s, info, in);
    int count = tdm_boot_pset_count();
    if (n < 0 || n >= count)
        return tdm_mpi_err_session(s, MPI_ERR_ARG, fn,
                                   "invalid n=%d (there are %d process sets: 0..%d)", n, count,
                                   count - 1);
    TDM_CHECK_PTR_SESSION(fn, s, pset_len, "pset_len");
    if (*pset_len < 0)
        return tdm_mpi_err_session(s, MPI_ERR_ARG, fn, "invalid *pset_len=%d", *pset_len);
    const char *name = tdm_boot_pset(&tdm_mpi.boot, n).name;
    int need = (int)strlen(name) + 1;
    /* *pset_len 0 asks for the size only; a shorter buffer gets the name truncated,
     * NUL-terminated */
    if (*pset_len > 0) {
        TDM_CHECK_PTR_SESSION(fn, s, pset_name, "pset_name");
        snprintf(pset_name, (size_t)*pset_len, "%s", name);
    }
    *pset_len = need;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Session_get_nth_pset)

/* The index of process set `name`, or an error (returned through *err_p) on s. */
static int find_pset(const char *fn, tdm_mpi_session_t *s, const char *name, int *err_p) {
    if (!name) {
        *err_p = tdm_mpi_err_session(s, MPI_ERR_ARG, fn, "pset_name is NULL");
        return -1;
    }
    int i = tdm_boot_pset_find(name);
    if (i < 0)
        *err_p = tdm_mpi_err_session(
            s, MPI_ERR_ARG, fn,
            "unknown process set \"%.*s\" (this job has mpi://WORLD and mpi://SELF)",
            MPI_MAX_PSET_NAME_LEN, name);
    return i;
}

/* The session and the process set that a query names, and its output argument checked. */
static int pset_args(const char *fn, MPI_Session session, const char *pset_name, const void *out,
                     const char *out_name, tdm_mpi_session_t **s_p, int *i_p) {
    tdm_mpi_session_t *s;
    TDM_GET_SESSION(fn, session, s);
    int err = MPI_SUCCESS;
    int i = find_pset(fn, s, pset_name, &err);
    if (i < 0)
        return err;
    TDM_CHECK_PTR_SESSION(fn, s, out, out_name);
    *s_p = s;
    *i_p = i;
    return MPI_SUCCESS;
}

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info) {
    static const char fn[] = "MPI_Session_get_pset_info";
    tdm_mpi_session_t *s;
    int i, err = pset_args(fn, session, pset_name, info, "info", &s, &i);
    if (err)
        return err;
    char size[16];
    snprintf(size, sizeof(size), "%d", tdm_boot_pset(&tdm_mpi.boot, i).count);
    tdm_info_t *out = tdm_info_new(true);
    if (!out || tdm_info_set(out, "mpi_size", size)) {
        tdm_info_free(out);
        return tdm_mpi_err_session(s, MPI_ERR_NO_MEM, fn, "out of memory for an info object");
    }
    *info = out->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Session_get_pset_info)

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup) {
    static const char fn[] = "MPI_Group_from_session_pset";
    tdm_mpi_session_t *s;
    int i, err = pset_args(fn, session, pset_name, newgroup, "newgroup", &s, &i);
    if (err)
        return err;
    tdm_boot_pset_t ps = tdm_boot_pset(&tdm_mpi.boot, i);
    tdm_group_t *g = tdm_group_new(tdm_rankmap_affine(ps.count, ps.first, 1), -1);
    if (!g)
        return tdm_mpi_err_session(s, MPI_ERR_NO_MEM, fn, "out of memory for a group");
    g->session = s->serial;
    *newgroup = g->handle;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Group_from_session_pset)

/* ---- communicators from groups ---- */

/* Errors of the creations go to their errhandler argument once it is known good
 * (MPI-4.1 §7.4.2); the communicator does not exist yet. */
#define NEW_ERR(_eh, _fn, _class, ...)                                                             \
    tdm_mpi_err_eh(_eh, MPI_COMM_NULL, "the communicator being created", _class, _fn, __VA_ARGS__)

/* The checks both creations make of a group argument, the string tag, info and the
 * output pointer. Returns MPI_SUCCESS or the error, reported on `eh`. */
static int check_group(const char *fn, int eh, MPI_Group handle, const char *what,
                       tdm_group_t **g_p) {
    tdm_group_t *g = tdm_group_get(handle);
    if (!g)
        return NEW_ERR(eh, fn, MPI_ERR_GROUP, "invalid %s (handle %#x)", what, (unsigned)handle);
    if (g->session != TDM_SESSION_ANY && !tdm_mpi_origin_open(g->session))
        return NEW_ERR(eh, fn, MPI_ERR_GROUP, "%s was derived from %s, which has been finalized",
                       what, g->session ? "a session" : "the World Model");
    *g_p = g;
    return MPI_SUCCESS;
}

static int check_common(const char *fn, int eh, const char *stringtag, MPI_Info info,
                        const void *out, tdm_info_t **in_p) {
    if (!stringtag)
        return NEW_ERR(eh, fn, MPI_ERR_ARG, "stringtag is NULL");
    size_t len = strlen(stringtag);
    if (len > MPI_MAX_STRINGTAG_LEN)
        return NEW_ERR(eh, fn, MPI_ERR_ARG,
                       "stringtag of %zu characters (longer than MPI_MAX_STRINGTAG_LEN=%d)", len,
                       MPI_MAX_STRINGTAG_LEN);
    *in_p = NULL;
    if (info != MPI_INFO_NULL && !(*in_p = tdm_info_get(info)))
        return NEW_ERR(eh, fn, MPI_ERR_INFO, "invalid info (handle %#x)", (unsigned)info);
    if (!out)
        return NEW_ERR(eh, fn, MPI_ERR_ARG, "the output communicator pointer is NULL");
    return MPI_SUCCESS;
}

/* The errhandler argument must be fit for a communicator; until it is known to
 * be, errors go to the session of the group (or the default handler). */
static int check_errhandler(const char *fn, MPI_Errhandler eh, MPI_Group group) {
    if (tdm_mpi_errh_valid(eh, TDM_ERRH_COMM))
        return MPI_SUCCESS;
    const char *why = "not a predefined handler or one made by MPI_Comm_create_errhandler";
    tdm_group_t *g = tdm_group_get(group);
    for (int i = 0;
         g && g->session != 0 && g->session != TDM_SESSION_ANY && i < tdm_htab_count(&sessions);
         i++) {
        tdm_mpi_session_t *s = tdm_htab_get(&sessions, (unsigned)i);
        if (s && s->serial == g->session)
            return tdm_mpi_err_session(s, MPI_ERR_ARG, fn, "invalid errhandler (handle %#x): %s",
                                       (unsigned)eh, why);
    }
    return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "invalid errhandler (handle %#x): %s", (unsigned)eh,
                       why);
}

/* The end of both creations, once src/comm returned `rc` (0, or < 0 for a failure it
 * logged) and no argument error: the new `what` c gets its handler and hints, and its
 * handle goes to the user. */
static int adopt(const char *fn, int rc, const char *what, tdm_comm_t *c, MPI_Errhandler eh,
                 const tdm_info_t *in, MPI_Comm *out) {
    if (rc)
        return NEW_ERR(eh, fn, MPI_ERR_OTHER,
                       "cannot create the %s (out of memory or a failed exchange with the other "
                       "members; see the log)",
                       what);
    tdm_mpi_errh_retain(eh);
    c->errhandler = eh;
    if (in && in->n > 0 && !(c->hints = tdm_info_dup(in, false)))
        return tdm_mpi_err(c, MPI_ERR_NO_MEM, fn, "out of memory for the hints");
    *out = c->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm) {
    static const char fn[] = "MPI_Comm_create_from_group";
    TDM_CHECK_INIT(fn);
    int err = check_errhandler(fn, errhandler, group);
    tdm_group_t *g;
    tdm_info_t *in;
    if (err || (err = check_group(fn, errhandler, group, "group", &g)) ||
        (err = check_common(fn, errhandler, stringtag, info, newcomm, &in)))
        return err;
    if (g->rank == MPI_UNDEFINED) {
        /* not a member (MPI_GROUP_EMPTY among others): nothing to take part in */
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    const char *why = "";
    tdm_comm_t *c;
    int rc = tdm_comm_from_group(g, stringtag, &why, &c);
    if (rc > 0)
        return NEW_ERR(errhandler, fn, tdm_mpi_comm_bad_class(rc),
                       "%s (stringtag \"%s\", group of %d)", why, stringtag, g->map.n);
    return adopt(fn, rc, "communicator", c, errhandler, in, newcomm);
}
TDM_WEAK(MPI_Comm_create_from_group)

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm) {
    static const char fn[] = "MPI_Intercomm_create_from_groups";
    TDM_CHECK_INIT(fn);
    int err = check_errhandler(fn, errhandler, local_group);
    tdm_group_t *lg, *rg;
    tdm_info_t *in;
    if (err || (err = check_group(fn, errhandler, local_group, "local_group", &lg)) ||
        (err = check_group(fn, errhandler, remote_group, "remote_group", &rg)) ||
        (err = check_common(fn, errhandler, stringtag, info, newintercomm, &in)))
        return err;
    if (lg->rank == MPI_UNDEFINED)
        return NEW_ERR(errhandler, fn, MPI_ERR_GROUP,
                       "the calling process is not a member of local_group (size %d)", lg->map.n);
    if (rg->map.n == 0)
        return NEW_ERR(errhandler, fn, MPI_ERR_GROUP, "remote_group is empty");
    if (lg->session != rg->session)
        return NEW_ERR(errhandler, fn, MPI_ERR_GROUP,
                       "local_group and remote_group were derived from different sessions (or "
                       "one from the World Model)");
    if (local_leader < 0 || local_leader >= lg->map.n)
        return NEW_ERR(errhandler, fn, MPI_ERR_RANK,
                       "invalid local_leader %d (local_group of size %d)", local_leader, lg->map.n);
    if (remote_leader < 0 || remote_leader >= rg->map.n)
        return NEW_ERR(errhandler, fn, MPI_ERR_RANK,
                       "invalid remote_leader %d (remote_group of size %d)", remote_leader,
                       rg->map.n);
    for (int i = 0; i < rg->map.n; i++) {
        int w = tdm_rankmap_world(&rg->map, i);
        if (tdm_rankmap_find(&lg->map, w) >= 0)
            return NEW_ERR(errhandler, fn, MPI_ERR_GROUP,
                           "local_group and remote_group overlap: both hold world rank %d "
                           "(rank %d of remote_group)",
                           w, i);
    }
    const char *why = "";
    tdm_comm_t *c;
    int rc = tdm_comm_inter_from_groups(lg, local_leader, rg, remote_leader, stringtag, &why, &c);
    if (rc > 0)
        return NEW_ERR(errhandler, fn, tdm_mpi_comm_bad_class(rc),
                       "%s (stringtag \"%s\", local_leader %d, remote_leader %d)", why, stringtag,
                       local_leader, remote_leader);
    return adopt(fn, rc, "intercommunicator", c, errhandler, in, newintercomm);
}
TDM_WEAK(MPI_Intercomm_create_from_groups)
