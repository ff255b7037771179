/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client of the PMI wire protocols, as launchers serve them to the processes they start
 * (MPICH's Hydra: PMI-1 and PMI-2; Slurm's srun --mpi=pmi2: PMI-2, and PMI-1 on the
 * same socket). No PMI library is
 * linked: the protocols are a few text commands on one socket.
 *
 *   PMI-1  one line per message, "cmd=NAME key=value ...\n"; the socket is PMI_FD, or
 *          PMI_PORT=host:port with PMI_ID (then "cmd=initack pmiid=ID" first, and rank
 *          and size come back as "cmd=set" lines).
 *   PMI-2  a 6-character decimal length, then "cmd=NAME;key=value;...;" (";;" is a ';'
 *          inside a value), after PMI-1's init line naming version 2; the socket is
 *          PMI_FD, the rank PMI_RANK, the job PMI_JOBID (Slurm).
 *
 * Every reply is parsed strictly: the command it must answer, every field key=value, the
 * fields the answer needs present and well formed, rc=0. Anything else is an error whose
 * message names the command sent and quotes what came back.
 */
#ifndef TDM_BOOT_PMI_H
#define TDM_BOOT_PMI_H

#include <stdbool.h>
#include <stddef.h>

#define TDM_PMI_VALUE_MAX 1024 /* longest value (PMI-1's vallen_max as Hydra gives it) */
#define TDM_PMI_KVS_MAX 256

typedef struct tdm_pmi {
    int fd;      /* -1: not connected */
    int version; /* 1 or 2 */
    int rank, size, appnum;
    char kvsname[TDM_PMI_KVS_MAX]; /* PMI-1 kvsname, PMI-2 jobid */
    size_t have;                   /* bytes read beyond the last reply (PMI-1 lines) */
    char rbuf[4096];
} tdm_pmi_t;

/* Connect as the environment says (PMI_FD, or PMI_PORT and PMI_ID) and initialise:
 * rank, size, appnum and kvsname are then known. `version` 1 or 2. 0, or -1 with *why. */
int tdm_pmi_connect_env(tdm_pmi_t *p, int version, char *why, size_t len);
/* The same over an open socket `fd`: `rank` and `size` are PMI_RANK and PMI_SIZE (PMI-1
 * with `pmi_id` >= 0, PMI_PORT's way, learns them from the launcher instead; PMI-2 sends
 * the rank and takes both from the reply). `jobid` is PMI_JOBID or NULL: PMI-2's fullinit
 * names it (Slurm refuses a fullinit without it; Hydra sets none). The unit test's way in. */
int tdm_pmi_connect_fd(tdm_pmi_t *p, int fd, int version, int rank, int size, int pmi_id,
                       const char *jobid, char *why, size_t len);

/* Store key=value in the job's key-value space (seen by others after a fence). Keys and
 * values may not hold white space, '=' or ';'. */
int tdm_pmi_put(tdm_pmi_t *p, const char *key, const char *value, char *why, size_t len);
/* Every process's puts are visible to every process after this (PMI-1: barrier). */
int tdm_pmi_fence(tdm_pmi_t *p, char *why, size_t len);
/* 1 and the value, 0 when the key is not there, -1 on an error. */
int tdm_pmi_get(tdm_pmi_t *p, const char *key, char *value, size_t vlen, char *why, size_t len);
/* A job attribute such as PMI_process_mapping: 1 found, 0 not there, -1 error. */
int tdm_pmi_job_attr(tdm_pmi_t *p, const char *key, char *value, size_t vlen, char *why,
                     size_t len);
/* Ask the launcher to end the whole job with `code` (PMI-1 "abort"; PMI-2 "abort" with
 * isworldabort, which carries no code). `v1_line`: send PMI-1's line whatever the version
 * (Hydra 4.0 knows no PMI-2 abort but takes each message in the form it comes in). One
 * write, no reply awaited. */
void tdm_pmi_abort(tdm_pmi_t *p, int code, bool v1_line, const char *msg);
/* Say goodbye (the launcher ends the job if a process exits without it) and close. */
int tdm_pmi_finalize(tdm_pmi_t *p, char *why, size_t len);

/* PMI_process_mapping, "(vector,(node,nodes,ranks_per_node),...)": each block gives
 * `ranks_per_node` consecutive ranks to each of `nodes` nodes from `node` on; when the
 * blocks run out before `size` ranks the pattern starts again (Hydra writes one block for
 * a round-robin over hosts). Fills node_of[0..size-1]; the number of distinct nodes, or -1
 * with *why. */
int tdm_pmi_parse_mapping(const char *map, int size, int *node_of, char *why, size_t len);

#endif
