/* SPDX-License-Identifier: BSD-3-Clause */
/* Start-up, shut-down and the environment queries of MPI. */
#include "bind.h"
#include "../base/lock.h"
#include "../base/params.h"
#include "../coll/select.h"
#include "../mpit/mpit.h"
#include "../rma/rma.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

tdm_mpi_state_t tdm_mpi;

static void show_binding(void) {
    cpu_set_t set;
    char list[512] = "";
    size_t off = 0;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        tdm_warn(MPI, "sched_getaffinity failed: %m");
        return;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE && off < sizeof(list) - 16; cpu++) {
        if (CPU_ISSET(cpu, &set))
            off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%d", off ? "," : "", cpu);
    }
    char host[256];
    gethostname(host, sizeof(host));
    fprintf(stderr, "tandem: rank %d (pid %d) on %s runs on cpus %s (%s)\n", tdm_mpi.boot.rank,
            (int)getpid(), host, list, tdm_boot_bind_reason(&tdm_mpi.boot));
}

/* For the pending-operations dump (p2p/dump.c), from a signal handler: field reads only. */
static void dump_comm(void *comm, uint32_t ctx, int world, tdm_p2p_dump_comm_t *out_p) {
    tdm_comm_t *c = comm, *cw = tdm_comm_world, *cs = tdm_comm_self;
    if (!c) {
        /* an unexpected message names a context only: the predefined ones are known
         * (while a user of the library has them set up) */
        if (cw && ctx / 2 == cw->ctx / 2)
            c = cw;
        else if (cs && ctx / 2 == cs->ctx / 2)
            c = cs;
        else
            return;
    }
    out_p->name = c->name;
    out_p->ctx = c->ctx;
    if (world < 0)
        return;
    for (int r = 0, n = tdm_comm_peer_size(c); r < n; r++) {
        if (tdm_comm_peer_world(c, r) == world) {
            out_p->peer = r;
            return;
        }
    }
}

/* A peer of another node failed (net/remote.c): the job ends, through the launcher. */
static void net_fatal(const char *why) {
    tdm_mpi_abort_job(1, why);
}

/* mpirun waits for this line after the SIGUSR1 of a timeout (one write: signal-safe) */
static void dump_done(void) {
    tdm_boot_report(&tdm_mpi.boot, "D");
}

/*
 * The library's users are the World Model (MPI_Init to MPI_Finalize) and each
 * open session; they come and go in any order. The first user of the process
 * sets up the transport (boot, shared memory, the p2p engine), once: it waits
 * for every process of the job to map the segment, as MPI_Init always did. The
 * objects (datatypes, communicators, groups) are set up by every
 * first user and torn down by every last one, which also reports "F" to the
 * launcher (a later first user reports "I" again). The transport stays between
 * users: peers that still run keep using the rings with this process at the
 * positions both sides know, and setting them up anew would need every peer to
 * agree, which a local MPI_Session_init cannot wait for (tdm_p2p_drain).
 */
void tdm_mpi_users_add(void) {
    if (tdm_mpi.users++ > 0)
        return;
    bool first = !tdm_mpi.transport;
    if (first) {
        if (tdm_boot_init(&tdm_mpi.boot) != 0)
            tdm_mpi_abort_job(1, "cannot learn the job layout (see the message above)");
    }
    if (tdm_dtype_init() != 0 || tdm_comm_init(tdm_mpi.boot.rank, tdm_mpi.boot.size) != 0)
        tdm_mpi_abort_job(1, "out of memory setting up the predefined datatypes and "
                             "communicators in MPI initialisation");
    if (first) {
        tdm_p2p_config_t cfg = {.rank = tdm_mpi.boot.rank,
                                .size = tdm_mpi.boot.size,
                                .oversubscribed = tdm_mpi.boot.oversubscribed,
                                .shm_fd = tdm_mpi.boot.shm_fd,
                                .shm_offset = tdm_mpi.boot.shm_offset,
                                .node_of = tdm_mpi.boot.node_of,
                                .nodes = tdm_mpi.boot.nodes,
                                .shm_shared = tdm_mpi.boot.shm_shared,
                                .fatal = net_fatal};
        const char *what = NULL;
        if (tdm_p2p_init(&cfg, &what) != 0) {
            char why[256];
            snprintf(why, sizeof(why),
                     "MPI initialisation: point-to-point communication cannot start: %s%s",
                     what ? what : "(no cause given)", what ? " (see the message above)" : "");
            tdm_mpi_abort_job(1, why);
        }
        tdm_p2p_dump_init(&(tdm_p2p_dump_hooks_t){.comm = dump_comm, .done = dump_done});
        tdm_mpi.transport = 1;
    }
    tdm_p2p_async_start(); /* after every drain too: the last user stopped it */
    char line[32];
    snprintf(line, sizeof(line), "I %d", (int)getpid());
    tdm_boot_report(&tdm_mpi.boot, line);
    if (first && TDM_PARAM_I(SHOW_BINDING))
        show_binding();
    if (first && TDM_PARAM_I(COLL_INFO) && tdm_mpi.boot.rank == 0) {
        tdm_coll_select_print(stderr);
        if (tdm_mpi.boot.nodes > 1)
            tdm_coll_node_print(stderr, tdm_comm_world, "MPI_COMM_WORLD");
    }
    tdm_debug(MPI, "initialised rank %d of %d%s", tdm_mpi.boot.rank, tdm_mpi.boot.size,
              tdm_mpi.boot.oversubscribed ? " (oversubscribed: waits block)" : "");
    tdm_mpit_set_phase(TDM_MPIT_RUNNING);
}

void tdm_mpi_users_drop(void) {
    if (--tdm_mpi.users > 0)
        return;
    tdm_boot_report(&tdm_mpi.boot, "F");
    tdm_p2p_drain(tdm_comm_boot->ctx);
    if (TDM_PARAM_I(COLL_STATS))
        tdm_coll_stats_print(tdm_mpi.boot.rank);
    if (TDM_PARAM_I(PROTO_STATS))
        tdm_rma_stats_print(tdm_mpi.boot.rank);
    size_t leaked = tdm_req_in_use();
    if (leaked)
        tdm_debug(MPI, "%zu requests were never completed or freed before the last finalize",
                  leaked);
    tdm_sched_cache_fini();
    tdm_mpit_comm_fini(); /* MPI_T handles bound to communicators keep their counts */
    tdm_comm_fini();
    tdm_dtype_fini();
    tdm_mpit_set_phase(TDM_MPIT_AFTER);
}

const char *tdm_mpi_state_why(void) {
    if (tdm_mpi.users > 0)
        return "while MPI is initialised";
    if (tdm_mpi.finalized)
        return "after MPI_Finalize, with no session open";
    if (tdm_mpi.transport)
        return "after the last MPI_Session_finalize, with no session open";
    return "before MPI_Init or MPI_Session_init";
}

int tdm_mpi_thread_grant(int required) {
    static const char *const words[] = {"single", "funneled", "serialized", "multiple"};
    int max = MPI_THREAD_SINGLE;
    for (int i = 0; i < 4; i++) {
        if (!strcmp(TDM_PARAM_S(THREAD_LEVEL), words[i]))
            max = MPI_THREAD_SINGLE + i;
    }
    int level = required > max ? max : required;
    if (level < MPI_THREAD_SINGLE)
        level = MPI_THREAD_SINGLE;
    /* Raised before the grant returns, so before a second thread may call in; never
     * lowered (a session may still run threads after the World Model ends). */
    if (level == MPI_THREAD_MULTIPLE) /* the progress thread may read it */
        tdm_lock_threaded_on();
    return level;
}

static int init_common(const char *fn, int required, int *provided) {
    if (tdm_mpi.initialized || tdm_mpi.finalized)
        return tdm_mpi_err(NULL, MPI_ERR_OTHER, fn, "MPI is already %s",
                           tdm_mpi.finalized ? "finalized" : "initialized");
    tdm_mpi_users_add();
    tdm_mpi.thread_level = tdm_mpi_thread_grant(required);
    tdm_mpi.main_thread = (unsigned long)pthread_self();
    if (provided)
        *provided = tdm_mpi.thread_level;
    tdm_mpi.initialized = 1;
    tdm_comm_world_set_active(true);
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return init_common("MPI_Init", MPI_THREAD_SINGLE, NULL);
}
TDM_WEAK(MPI_Init)

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    (void)argc;
    (void)argv;
    if (!provided)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Init_thread", "provided is NULL");
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Init_thread", "invalid thread level required=%d",
                           required);
    return init_common("MPI_Init_thread", required, provided);
}
TDM_WEAK(MPI_Init_thread)

int PMPI_Finalize(void) {
    static const char fn[] = "MPI_Finalize";
    if (!tdm_mpi.initialized || tdm_mpi.finalized)
        return tdm_mpi_err(NULL, MPI_ERR_OTHER, fn, "called %s",
                           tdm_mpi.finalized ? "twice" : "before MPI_Init");
    /* MPI-4.1 11.6.2: finalize only after every thread has completed its MPI calls. One
     * still blocked in a call would go on using what finalize takes down, so nothing is
     * taken down and the program hears why (a thread between calls is not seen). */
    int blocked = tdm_threaded ? tdm_p2p_waiters() : 0;
    if (blocked > 0)
        return tdm_mpi_err(NULL, MPI_ERR_OTHER, fn,
                           "%d other thread%s of this process %s still blocked in MPI calls: "
                           "complete them before MPI_Finalize (MPI-4.1 11.6.2)",
                           blocked, blocked > 1 ? "s" : "", blocked > 1 ? "are" : "is");
    /* MPI_COMM_SELF's attributes are deleted first, while MPI still works
     * (their callbacks may communicate) */
    tdm_comm_finalize_attrs();
    /* collective over the World Model's processes, whatever sessions stay open */
    tdm_p2p_barrier();
    /* communicators of the World Model the user still holds die with it; sessions
     * open beside it go on */
    tdm_comm_orphan_session(0);
    tdm_comm_world_set_active(false);
    tdm_mpi.finalized = 1;
    tdm_mpi_users_drop();
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Finalize)

/* MPI_<_name>: one fact about the library's state into *_out; `_any_time`: callable before
 * MPI_Init and after MPI_Finalize too (MPI-4.1 Table 11.1). */
#define STATE_QUERY(_name, _any_time, _out, _value)                                                \
    int P##_name(int *_out) {                                                                      \
        if (!(_any_time))                                                                          \
            TDM_CHECK_INIT(#_name);                                                                \
        TDM_CHECK_PTR(#_name, NULL, _out, #_out);                                                  \
        *(_out) = (_value);                                                                        \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    TDM_WEAK(_name)

STATE_QUERY(MPI_Initialized, true, flag, tdm_mpi.initialized)
STATE_QUERY(MPI_Finalized, true, flag, tdm_mpi.finalized)

int PMPI_Abort(MPI_Comm comm, int errorcode) {
    char why[256];
    tdm_comm_t *c = tdm_mpi.users > 0 ? tdm_comm_get(comm) : NULL;
    snprintf(why, sizeof(why), "rank %d called MPI_Abort on %s with error code %d",
             tdm_mpi.boot.rank, c ? c->name : "an unknown communicator", errorcode);
    tdm_mpi_abort_call(errorcode, why);
}
TDM_WEAK(MPI_Abort)

TDM_MPI_PROPERTY(MPI_Comm_rank, MPI_Comm, tdm_comm_t, c, TDM_GET_COMM, c, int, rank, c->rank)
TDM_MPI_PROPERTY(MPI_Comm_size, MPI_Comm, tdm_comm_t, c, TDM_GET_COMM, c, int, size, c->size)

double PMPI_Wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
TDM_WEAK(MPI_Wtime)

double PMPI_Wtick(void) {
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0)
        return 1e-9;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
TDM_WEAK(MPI_Wtick)

int PMPI_Get_processor_name(char *name, int *resultlen) {
    TDM_CHECK_PTR("MPI_Get_processor_name", NULL, name, "name");
    TDM_CHECK_PTR("MPI_Get_processor_name", NULL, resultlen, "resultlen");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Get_processor_name)

int PMPI_Get_version(int *version, int *subversion) {
    TDM_CHECK_PTR("MPI_Get_version", NULL, version, "version");
    TDM_CHECK_PTR("MPI_Get_version", NULL, subversion, "subversion");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Get_version)

int PMPI_Get_library_version(char *version, int *resultlen) {
    TDM_CHECK_PTR("MPI_Get_library_version", NULL, version, "version");
    TDM_CHECK_PTR("MPI_Get_library_version", NULL, resultlen, "resultlen");
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
             "Tandem MPI %s (MPI %d.%d, MPICH ABI libmpi.so.12)", TANDEM_VERSION_STRING,
             MPI_VERSION, MPI_SUBVERSION);
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Get_library_version)

STATE_QUERY(MPI_Query_thread, false, provided, tdm_mpi.thread_level)
STATE_QUERY(MPI_Is_thread_main, false, flag, (unsigned long)pthread_self() == tdm_mpi.main_thread)

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr) {
    (void)info;
    TDM_CHECK_INIT("MPI_Alloc_mem");
    if (size < 0)
        return tdm_mpi_err(NULL, MPI_ERR_SIZE, "MPI_Alloc_mem", "invalid size %ld", (long)size);
    if (!baseptr)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Alloc_mem", "baseptr is NULL");
    void *p = NULL;
    if (posix_memalign(&p, 64, size ? (size_t)size : 1) != 0)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "cannot allocate %ld bytes",
                           (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Alloc_mem)

int PMPI_Free_mem(void *base) {
    TDM_CHECK_INIT("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Free_mem)

int PMPI_Pcontrol(const int level, ...) {
    /* The standard leaves Pcontrol to profiling layers; Tandem will use it to
     * delimit phases for profile-guided protocol selection. */
    (void)level;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Pcontrol)
