/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cross Memory Attach: single-copy transfers between local processes with
 * process_vm_readv/process_vm_writev. Whether a pair may use it is probed at
 * start-up with a real read of a known word of each peer; a pair where the
 * kernel refuses (ptrace scope, capabilities, seccomp) uses the two-copy
 * pipeline instead, and the job says once why and how to enable CMA.
 */
#ifndef TDM_NET_CMA_H
#define TDM_NET_CMA_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef enum { TDM_CMA_AUTO, TDM_CMA_ON, TDM_CMA_OFF } tdm_cma_mode_t;

/* Probe every peer (after the segment is up). 0, or -1 if TANDEM_CMA=on and
 * CMA does not work, or out of memory (logged). */
int tdm_cma_init(int rank, int nranks);
void tdm_cma_fini(void);
/* May this process use CMA with `peer` (world rank)? */
bool tdm_cma_usable(int peer);
/* A CMA call with `peer` (process `pid`) failed with `err` mid-job: stop using CMA with
 * it (warns once per job). ESRCH is no permission problem but the peer's end: nothing is
 * disabled and this process says once that the peer has exited; the transfer cannot
 * complete and the job is ending (mpirun reports how the peer ended). */
void tdm_cma_disable(int peer, int pid, int err);

/* One system call: read (write=false) or write the remote iovecs of `pid` from
 * or into the local ones. Returns bytes moved (possibly fewer than asked), or
 * -errno; the failure is logged with both iovec lists. */
ssize_t tdm_cma_copy(int peer, int pid, bool write, const struct iovec *local, int nlocal,
                     const struct iovec *remote, int nremote);

#endif
