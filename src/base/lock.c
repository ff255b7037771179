/* SPDX-License-Identifier: BSD-3-Clause */
#include "lock.h"
#include "log.h"
#include "params.h"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Raised by MPI initialisation when it grants MPI_THREAD_MULTIPLE (lock.h says when). */
bool tdm_threaded;

unsigned tdm_lock_bias;
uintptr_t tdm_lock_owner;
unsigned tdm_lock_owner_depth;

/* Contended: mark the lock 2 (a sleeper) and sleep while another thread holds it. The
 * exchange that finds it 0 takes it, still marked 2, so its release wakes the next sleeper
 * (at worst one wake-up with nobody asleep). */
void tdm_lock_wait_(tdm_lock_t *l) {
    while (__atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE) != 0)
        syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void tdm_lock_wake_(tdm_lock_t *l) {
    syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void tdm_lock_threaded_on(void) {
    if (tdm_threaded)
        return;
    tdm_lock_owner = tdm_lock_self_();
    /* the bias needs the fence only membarrier can put into the owner's instruction stream */
    if (TDM_PARAM_I(LOCK_BIAS) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
        tdm_lock_bias = TDM_BIAS_ON;
    tdm_threaded = true;
}

/* One revoker at a time; the others wait here until the bias is off. */
static pthread_mutex_t revoke_lock = PTHREAD_MUTEX_INITIALIZER;

void tdm_lock_revoke_(void) {
    pthread_mutex_lock(&revoke_lock);
    if (__atomic_load_n(&tdm_lock_bias, __ATOMIC_ACQUIRE) == TDM_BIAS_ON) {
        __atomic_store_n(&tdm_lock_bias, TDM_BIAS_REVOKING, __ATOMIC_SEQ_CST);
        /* Every running thread of the process fences: the owner has either published its
         * open section's count before it, or reads REVOKING after it and locks for real. */
        if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
            /* registered, so it cannot fail; without it no lock could be trusted */
            tdm_error(BASE, "membarrier failed while revoking the lock bias");
            abort();
        }
        /* The owner never waits inside a section: it closes them soon. */
        while (__atomic_load_n(&tdm_lock_owner_depth, __ATOMIC_ACQUIRE) != 0)
            sched_yield();
        __atomic_store_n(&tdm_lock_bias, TDM_BIAS_OFF, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&revoke_lock);
}
