/* SPDX-License-Identifier: BSD-3-Clause */
#include "lock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Raised by MPI initialisation when it grants MPI_THREAD_MULTIPLE (lock.h says when). */
bool tdm_threaded;

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
