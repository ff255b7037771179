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
 *   TANDEM_SHM_FD        number of an inherited memfd (created by mpirun with size 0,
 *                        never named in /dev/shm). Every local rank ftruncate()s it to
 *                        the same computed size (idempotent) and maps it. The segment
 *                        dies with the last process holding it.
 *   TANDEM_CTL_FD        write end of a pipe/socket to mpirun. The library writes one
 *                        line per event: "I <pid>\n" when it gets its first user
 *                        (MPI_Init or MPI_Session_init), "F\n" when its last user
 *                        finalizes (MPI_Finalize or MPI_Session_finalize; a later
 *                        MPI_Session_init sends "I" again), "A <code>\n" from MPI_Abort
 *                        (then exits with <code>). mpirun treats a rank exiting with
 *                        status 0 after an "I" not followed by "F" as an error.
 *   TANDEM_JOBID         unique string for the job (mpirun pid and start time)
 *   TANDEM_OVERSUBSCRIBED 1 when ranks outnumber the CPUs mpirun may use; the
 *                        library then yields and blocks instead of spinning.
 * Without TANDEM_RANK the process is a singleton: rank 0 of 1, with a private memfd.
 */
#ifndef TDM_BOOT_H
#define TDM_BOOT_H

#include <stddef.h>

typedef struct tdm_boot_info {
    int rank;
    int size;
    int local_rank;
    int local_size;
    int shm_fd;         /* memfd holding the node segment, owned by the process */
    int ctl_fd;         /* -1 for a singleton */
    int oversubscribed; /* wait by yielding/blocking, never by spinning */
    char jobid[64];
} tdm_boot_info_t;

/* Fill *info_p from the environment; 0 on success, -errno on failure (logged). */
int tdm_boot_init(tdm_boot_info_t *info_p);
/* Report an event line to the launcher ("F", "A 3", ...); no-op for a singleton. */
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
