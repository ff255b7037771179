/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client of a PMIx server (Open MPI's mpirun and its orted, Slurm's srun --mpi=pmix,
 * PRRTE): the same few services as pmi.h (rank, size, node map, key-value space, abort,
 * finalize), through the server's own library. libpmix is loaded when a process finds
 * itself started by a PMIx server, never linked: libmpi loads and runs everywhere else,
 * and where libpmix is missing the process says what is missing and which package has it.
 *
 *   PMIx_Init                       the rank (from the proc it fills) and the namespace
 *   PMIx_Get(wildcard, job size)    the size; local rank and size of this process
 *   PMIx_Get(rank r, node id)       the node map (PMIX_NODEID, else PMIX_HOSTNAME of every r)
 *   PMIx_Put(global) + Commit       a key's value, seen by every rank after a fence
 *   PMIx_Fence(all, collect data)   the fence
 *   PMIx_Get(rank r, key, optional) a value rank r put (after a fence: from the local store)
 *   PMIx_Abort(code, msg, all)      end the job
 *   PMIx_Finalize                   say goodbye
 *
 * Every answer is checked (status, the type of the value); an error names the call, the
 * key, the rank and PMIx's own word for the status.
 */
#ifndef TDM_BOOT_PMIX_H
#define TDM_BOOT_PMIX_H

#include <stdbool.h>
#include <stddef.h>

#define TDM_PMIX_NSPACE_MAX 256
#define TDM_PMIX_LIBRARY "libpmix.so.2" /* PMIx 2.x to 5.x keep this soname */

typedef struct tdm_pmix {
    void *lib;                  /* the dlopen handle of libpmix (or of the program: tests) */
    const void *fns;            /* its entry points (private to pmix.c) */
    bool up;                    /* PMIx_Init succeeded and no finalize yet */
    int rank, size;             /* in the namespace */
    int local_rank, local_size; /* -1 when the server does not say */
    char nspace[TDM_PMIX_NSPACE_MAX];
} tdm_pmix_t;

/* Was this process started by a PMIx server? (PMIX_NAMESPACE and PMIX_RANK, or a
 * PMIX_SERVER_URI* variable, in the environment.) */
bool tdm_pmix_env(void);
/* The PMIx variables a child of this process must not inherit (it would speak to the
 * server as this rank): removed from the environment. */
void tdm_pmix_forget_env(void);

/* Load `lib` (TDM_PMIX_LIBRARY; NULL: the entry points of the program itself, the unit
 * test's fakes), PMIx_Init, and learn rank, size, local rank and size. 0, or -1 with *why
 * naming what failed (a missing library: its name and the Debian package). */
int tdm_pmix_init(tdm_pmix_t *p, const char *lib, char *why, size_t len);
/* node_of[r] for every rank: equal for ranks on one node, from the server's node ids when
 * it gives every rank's, else from its host names when it gives every rank's (*source_p
 * names which); `hosts[r]` the host's name when the server gives it ("" otherwise). The
 * number of distinct nodes; 0 when the server gives neither for every rank (the caller
 * then finds the nodes another way); -1 with *why. */
int tdm_pmix_node_map(tdm_pmix_t *p, int *node_of, char (*hosts)[64], const char **source_p,
                      char *why, size_t len);
/* Store key=value for every rank of the job (seen after the next fence). */
int tdm_pmix_put(tdm_pmix_t *p, const char *key, const char *value, char *why, size_t len);
/* Commit this process's puts and wait for every rank's (their data collected here). */
int tdm_pmix_fence(tdm_pmix_t *p, char *why, size_t len);
/* The value `rank` put under `key`: 1, 0 when it put none, -1 on an error. */
int tdm_pmix_get(tdm_pmix_t *p, int rank, const char *key, char *value, size_t vlen, char *why,
                 size_t len);
/* Ask the server to end the whole job with `code`, `msg` its reason. */
void tdm_pmix_abort(tdm_pmix_t *p, int code, const char *msg);
/* PMIx_Finalize (the server then knows this exit is a normal one). */
int tdm_pmix_finalize(tdm_pmix_t *p, char *why, size_t len);

#endif
