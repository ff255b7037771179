/* SPDX-License-Identifier: BSD-3-Clause */
#include "cma.h"
#include "shm.h"
#include "../base/event.h"
#include "../base/log.h"
#include "../base/params.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool *usable;
static int nranks_cma;
static int rank_cma; /* this process's world rank */
static bool warned;
static bool gone_reported;
static long fail_after; /* test hook: CMA calls that succeed before failures start */
static long calls;

/* One warning per job, not per process: the first process to find CMA
 * unusable prints it (the others log at info level). */
static void warn_once(int peer, int err) {
    if (warned)
        return;
    warned = true;
    if (atomic_exchange_explicit(&tdm_shm.hdr->cma_warned, 1, memory_order_relaxed)) {
        tdm_info(CMA, "single-copy transfers (CMA) with rank %d are not permitted: %s", peer,
                 strerror(err));
        return;
    }
    tdm_warn(CMA,
             "single-copy transfers (CMA) with rank %d are not permitted: %s; large messages "
             "use the slower two-copy pipeline. To enable CMA: allow ptrace between the "
             "job's processes (echo 0 > /proc/sys/kernel/yama/ptrace_scope, or run with "
             "CAP_SYS_PTRACE), or in a container allow process_vm_readv/writev in the "
             "seccomp profile; TANDEM_CMA=off silences this (TANDEM_LOG=cma:info shows the "
             "failing calls)",
             peer, strerror(err));
}

/* ESRCH: the process is gone (or a zombie: no memory left to read). */
static void peer_gone(int peer, int pid) {
    if (gone_reported)
        return;
    gone_reported = true;
    tdm_error(CMA,
              "rank %d (pid %d) has exited during a transfer with this rank (No such "
              "process); the transfer cannot complete",
              peer, pid);
}

int tdm_cma_init(int rank, int n) {
    /* params.def lists the words in the order of tdm_cma_mode_t */
    int mode = tdm_param_choice_index(TDM_PARAM_CMA, TDM_PARAM_S(CMA));
    fail_after = TDM_PARAM_I(TEST_CMA_FAIL_AFTER);
    nranks_cma = n;
    rank_cma = rank;
    usable = calloc((size_t)n, sizeof(bool));
    if (!usable) {
        tdm_error(CMA, "out of memory for the CMA state of %d ranks", n);
        return -1;
    }
    if (mode == TDM_CMA_OFF)
        return 0;
    for (int peer = 0; peer < n; peer++) {
        /* only a process of this node can be reached by CMA */
        if (peer == rank || !tdm_shm_is_local(peer))
            continue;
        tdm_shm_proc_t *p = tdm_shm_proc(peer);
        uint64_t got = 0;
        struct iovec l = {&got, sizeof(got)};
        struct iovec r = {(void *)(uintptr_t)p->probe_addr, sizeof(got)};
        ssize_t rc = process_vm_readv(p->pid, &l, 1, &r, 1, 0);
        int err = errno;
        if (rc == (ssize_t)sizeof(got) && got == p->probe_val) {
            usable[peer] = true;
            continue;
        }
        if (rc >= 0)
            err = EIO;
        if (mode == TDM_CMA_ON && err == ESRCH) {
            tdm_error(CMA, "TANDEM_CMA=on, but rank %d (pid %d) has exited during MPI_Init", peer,
                      (int)p->pid);
            return -1;
        }
        if (mode == TDM_CMA_ON) {
            tdm_error(CMA,
                      "TANDEM_CMA=on, but single-copy transfers (CMA) with rank %d (pid %d) are "
                      "not permitted: process_vm_readv failed: %s. Allow ptrace between the "
                      "job's processes (echo 0 > /proc/sys/kernel/yama/ptrace_scope, or run with "
                      "CAP_SYS_PTRACE), or in a container allow process_vm_readv/writev in the "
                      "seccomp profile; TANDEM_CMA=auto uses the two-copy pipeline instead",
                      peer, (int)p->pid, strerror(err));
            return -1;
        }
        tdm_debug(CMA, "probe of rank %d (pid %d) failed: %s", peer, (int)p->pid, strerror(err));
        TDM_EVENT_RAISE(CMA_OFF, peer, err, 0);
        /* a peer that died while starting is not a permission problem: mpirun ends the job */
        if (err != ESRCH)
            warn_once(peer, err);
    }
    return 0;
}

void tdm_cma_fini(void) {
    free(usable);
    usable = NULL;
}

static _Atomic uint32_t *pair_off(int from, int to) {
    return &tdm_shm_pair(from, to)->cma_off;
}

bool tdm_cma_usable(int peer) {
    if (!usable[peer])
        return false;
    /* the peer may have stopped (a call of its failed): then both sides stop, or
     * each message would fail once more on this side before falling back */
    if (atomic_load_explicit(pair_off(peer, rank_cma), memory_order_relaxed)) {
        usable[peer] = false;
        TDM_EVENT_RAISE(CMA_OFF, peer, 0, 2);
        return false;
    }
    return true;
}

void tdm_cma_disable(int peer, int pid, int err) {
    if (err == ESRCH) {
        peer_gone(peer, pid);
        return;
    }
    if (peer >= 0 && peer < nranks_cma) {
        if (usable[peer])
            TDM_EVENT_RAISE(CMA_OFF, peer, err, 1);
        usable[peer] = false;
        atomic_store_explicit(pair_off(rank_cma, peer), 1, memory_order_relaxed);
    }
    warn_once(peer, err);
}

ssize_t tdm_cma_copy(int peer, int pid, bool write, const struct iovec *local, int nlocal,
                     const struct iovec *remote, int nremote) {
    ssize_t rc;
    if (fail_after >= 0 && calls++ >= fail_after) {
        errno = EPERM; /* test hook: behave as if the kernel started refusing */
        rc = -1;
    } else if (write) {
        rc =
            process_vm_writev(pid, local, (unsigned long)nlocal, remote, (unsigned long)nremote, 0);
    } else {
        rc = process_vm_readv(pid, local, (unsigned long)nlocal, remote, (unsigned long)nremote, 0);
    }
    if (rc >= 0)
        return rc;
    int err = errno;
    /* The job's one warning (warn_once) says why and what to do; the call itself
     * is logged at info level the first time with each peer (copies already under
     * way when the pair stops using CMA may fail too: debug level). */
    tdm_log_level_t level =
        peer >= 0 && peer < nranks_cma && usable[peer] ? TDM_LOG_INFO : TDM_LOG_DEBUG;
    tdm_log(CMA, level,
            "process_vm_%sv with rank %d (pid %d) failed: %s; local iov[0]={%p,%zu} of %d, "
            "remote iov[0]={%p,%zu} of %d",
            write ? "write" : "read", peer, pid, strerror(err), local[0].iov_base, local[0].iov_len,
            nlocal, remote[0].iov_base, remote[0].iov_len, nremote);
    return -err;
}
