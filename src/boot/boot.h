/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How a process learns its job.
 *
 * Launcher contract (tools/mpirun.c sets these for every rank it starts; all are
 * declared in src/base/params.def with scope "launcher"):
 *   TANDEM_RANK          rank in MPI_COMM_WORLD (0..size-1)
 *   TANDEM_SIZE          number of ranks in the job
 *   TANDEM_LOCAL_RANK    rank among the processes on this node
 *   TANDEM_LOCAL_SIZE    number of processes on this node
 *   TANDEM_SHM_FD        number of an inherited memfd, never named in /dev/shm: created by
 *                        mpirun as "tandem-shm:<jobid>", opened read-write, sealed against
 *                        shrinking (F_SEAL_SHRINK | F_SEAL_SEAL), and starting with the
 *                        launcher's stamp (tdm_boot_stamp_t below). The node segment follows
 *                        the stamp: every local rank grows the memfd to the same computed size
 *                        and maps it. The segment dies with the last process holding it.
 *   TANDEM_CTL_FD        write end of a pipe to mpirun (its inode is in the rank's stamp
 *                        slot). The library writes one line per event: "I <pid>\n" when it
 *                        gets its first user (MPI_Init or MPI_Session_init), "F\n" when its
 *                        last user finalizes (MPI_Finalize or MPI_Session_finalize; a later
 *                        MPI_Session_init sends "I" again), "A <code>\n" from MPI_Abort
 *                        (then exits with <code>), "E <code>\n" before it exits with <code>
 *                        after a fatal error, "D\n" when it has printed its pending operations
 *                        after SIGUSR1 (p2p/dump.c). mpirun treats a rank exiting with
 *                        status 0 after an "I" not followed by "F" as an error.
 *   TANDEM_JOBID         unique string for the job (mpirun pid and start time)
 *   TANDEM_OVERSUBSCRIBED 1 when ranks outnumber the CPUs mpirun may use; the
 *                        library then yields and blocks instead of spinning.
 *
 * A process is the rank these variables name only if its descriptors prove it: the memfd
 * is the job's (name, seals, read-write, stamp with this job id and size), the control
 * descriptor is the pipe mpirun made for that rank (inode in the stamp), and no other
 * process has taken the rank (the slot's claim). Anything else, above all a program a rank
 * started with system() or execve while passing these variables on, with files of its own
 * on those descriptor numbers, is a singleton: its descriptors are never resized, mapped
 * or written. That is quiet, except for a Tandem memfd that fails the proof (the mpirun of
 * another Tandem version): a warning, or the job would run as singletons unnoticed.
 * Once read, the variables are removed from the environment, so that the rank's own
 * children do not inherit them; the descriptors are close-on-exec.
 * Without TANDEM_RANK the process is a singleton: rank 0 of 1, with a private memfd.
 *
 * Started by a PMI launcher instead (PMI_FD or PMI_PORT set, TANDEM_RANK not): rank and size
 * come from PMI (pmi.h), the node map from PMI_process_mapping or from an exchange of host
 * names and boot ids; the node's lowest rank makes the memfd as mpirun would (same name,
 * seals and stamp, the PMI kvsname as job id) and the others take it from that process
 * (pidfd_getfd, else /proc/PID/fd/N, else a /dev/shm name unlinked as soon as every local
 * rank has it). There is no control pipe: MPI_Abort and fatal errors end the job through
 * PMI, and the launcher reports a rank that dies. See src/boot/README.md.
 */
#ifndef TDM_BOOT_H
#define TDM_BOOT_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the launcher's stamp at offset 0 of the memfd (written by mpirun) ---- */

#define TDM_BOOT_STAMP_MAGIC 0x3130424f4a4d4454ull /* "TDMJOB01" */
#define TDM_BOOT_STAMP_VERSION 1u
#define TDM_BOOT_MEMFD_NAME "tandem-shm:" /* followed by the job id */

typedef struct tdm_boot_stamp {
    uint64_t magic;      /* TDM_BOOT_STAMP_MAGIC */
    uint32_t version;    /* TDM_BOOT_STAMP_VERSION */
    uint32_t size;       /* ranks in the job (TANDEM_SIZE) */
    uint64_t seg_offset; /* where the node segment starts: a multiple of the page size, at
                            least tdm_boot_stamp_bytes(size) */
    char jobid[64];      /* TANDEM_JOBID, NUL-terminated */
    unsigned char rsvd[40];
} tdm_boot_stamp_t;

/* One per rank, right after the stamp (slot r at sizeof(stamp) + r * sizeof(slot)). */
typedef struct tdm_boot_slot {
    uint64_t ctl_ino; /* inode of the rank's control pipe (mpirun writes it before the fork) */
    int32_t claimed;  /* pid of the process that took the rank in MPI_Init, 0 before */
    uint32_t rsvd;
} tdm_boot_slot_t;

_Static_assert(sizeof(tdm_boot_stamp_t) == 128, "stamp layout");
_Static_assert(sizeof(tdm_boot_slot_t) == 16, "slot layout");

/* Bytes of the stamp and its slots for a job of `size` ranks (not rounded to pages). */
static inline size_t tdm_boot_stamp_bytes(int size) {
    return sizeof(tdm_boot_stamp_t) + (size_t)size * sizeof(tdm_boot_slot_t);
}

/* ---- the library's side ---- */

typedef struct tdm_boot_info {
    int rank;
    int size;
    int local_rank;
    int local_size;
    int shm_fd;         /* memfd holding the node segment, owned by the process */
    size_t shm_offset;  /* where the segment starts in it (after the stamp; 0: singleton) */
    int ctl_fd;         /* -1 for a singleton */
    int oversubscribed; /* wait by yielding/blocking, never by spinning */
    int pmi;            /* started by a PMI launcher (Hydra, srun): its version, 1 or 2;
                           TDM_BOOT_PMIX by a PMIx server (Open MPI's mpirun); else 0 */
    int nodes;          /* nodes the job spans (TANDEM_NODE_SPLIT applied) */
    int *node_of;       /* node of each rank, 0 .. nodes - 1, numbered by their lowest rank */
    int shm_shared;     /* every node's segment is in shm_fd, one after another (mpirun with
                           TANDEM_NODE_SPLIT: the nodes are one host's) */
    int bind;           /* where the process runs and who decided: TDM_BOOT_BIND_* */
    char jobid[64];
} tdm_boot_info_t;

/* tdm_boot_info_t.bind */
enum {
    TDM_BOOT_BIND_OFF,            /* TANDEM_BIND=none: the launcher's placement kept */
    TDM_BOOT_BIND_MPIRUN,         /* Tandem's mpirun placed it by its own policy */
    TDM_BOOT_BIND_LAUNCHER,       /* another launcher bound it (its mask is narrower than
                                     the machine's or its cgroup's CPUs): kept */
    TDM_BOOT_BIND_SELF,           /* unbound by its launcher: it bound itself to one CPU */
    TDM_BOOT_BIND_ALONE,          /* the job's only rank on this machine: left as it is */
    TDM_BOOT_BIND_OVERSUBSCRIBED, /* the job's ranks on this machine outnumber its CPUs */
    TDM_BOOT_BIND_FAILED,         /* binding failed (warned): left unbound */
};

#define TDM_BOOT_PMIX 3 /* tdm_boot_info_t.pmi of a job a PMIx server started */

/* The job's key-value space under a PMI launcher or a PMIx server (after tdm_boot_init,
 * when info.pmi is set), whichever started the job. Keys and values: no white space, '=' or
 * ';' (PMI-1's line format); a value at most TDM_PMI_VALUE_MAX - 1 bytes (pmi.h).
 * put: key=value for every rank, seen after the next fence. fence: collective over the
 * job. get: the value `rank` put under `key` (PMI ignores the rank, its keys are the
 * job's; PMIx keeps each process's apart): 1, 0 when there is none, -1 on an error.
 * 0 or -1 with *why otherwise. */
int tdm_boot_kvs_put(const char *key, const char *value, char *why, size_t len);
int tdm_boot_kvs_fence(char *why, size_t len);
int tdm_boot_kvs_get(int rank, const char *key, char *value, size_t vlen, char *why, size_t len);

/* Apply TANDEM_NODE_SPLIT (`how`) to the node map `node_of` of `size` ranks and number
 * the nodes 0, 1, ... in the order of their lowest ranks. The number of nodes, or -1
 * with the reason in `why` for a value it does not know. */
int tdm_boot_node_split(const char *how, int *node_of, int size, char *why, size_t len);

/* Under a launcher other than Tandem's mpirun, with TANDEM_BIND=auto: did the launcher
 * leave the process unbound (its mask holds every CPU of the machine or of its cpuset
 * cgroup)? When not, info->bind says why it stays as it is. */
bool tdm_boot_bind_unbound(tdm_boot_info_t *info);
/* Then bind it to the `machine_rank`-th domain of its mask when the job has 2 to as many
 * ranks on this machine (`machine_size`) as the mask has CPUs. Sets info->bind;
 * never fails (a failed bind warns and leaves the process as it was). */
void tdm_boot_bind(tdm_boot_info_t *info, int machine_rank, int machine_size);
/* The rank-th of `size` equal blocks of the CPUs in `mask`, in order (the CPUs left over
 * by the division go to nobody), into *out; returns the block's size, 0 when the ranks
 * outnumber the CPUs. Blocks, not single CPUs: a rank's own threads (OpenMP) keep CPUs of
 * their own, as under Intel MPI's default domains, and no two ranks ever share one. */
int tdm_boot_bind_domain(const cpu_set_t *mask, int rank, int size, cpu_set_t *out);
/* One line saying where the process runs and why (TANDEM_SHOW_BINDING). */
const char *tdm_boot_bind_reason(const tdm_boot_info_t *info);
/* Read a CPU list file ("0-3,8,10-11", sysfs and cgroups): 0, or -1 when it is missing or
 * not a list. */
int tdm_boot_cpulist_read(const char *path, cpu_set_t *set_p);

/* Fill *info_p from the environment; 0 on success, -errno on failure (logged). */
int tdm_boot_init(tdm_boot_info_t *info_p);
/* Report an event line to the launcher ("F", "A 3", ...); no-op for a singleton.
 * Async-signal-safe (one write). Under a PMI launcher only "A <code>" and "E <code>" mean
 * something: the job is ended through PMI (boot.c says how). */
void tdm_boot_report(const tdm_boot_info_t *info, const char *line);

/* ---- process sets (pset.c) ----
 * The named sets of processes a session can ask for (MPI-4.1 §11.3.2). Every process
 * of the job sees the same names at the same indices; membership is a range of world
 * ranks. "mpi://WORLD" is the whole job, "mpi://SELF" the calling process. Names are
 * compared without regard to case, as URIs' scheme and authority are. */
typedef struct tdm_boot_pset {
    const char *name;
    int first, count; /* members: world ranks first .. first + count - 1 */
} tdm_boot_pset_t;

int tdm_boot_pset_count(void);
/* Pset i (0 <= i < tdm_boot_pset_count()) of the job `info` describes. */
tdm_boot_pset_t tdm_boot_pset(const tdm_boot_info_t *info, int i);
/* Index of the pset called `name`, or -1 when there is none. */
int tdm_boot_pset_find(const char *name);

#endif
