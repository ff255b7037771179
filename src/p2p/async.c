/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous progress (TANDEM_ASYNC_PROGRESS): one thread per process that sleeps on
 * the process's doorbell and progresses the engine when woken, the hybrid polling/event
 * design of seed 001 §4.3. The application's own calls go on polling; both drive the
 * same engine through its locks (p2p_impl.h), which is why the thread makes the process
 * threaded (tdm_threaded) before it starts.
 *
 * States (under `lock`):
 *   unarmed   asleep, not counted in our block's `sleeping`: producers do not ring for it.
 *   armed     asleep and counted: every packet a peer publishes rings the doorbell.
 *   running   woken: it progresses until a poll finds nothing, uncounted meanwhile, so
 *             back-to-back packets cost one wake-up (interrupt suppression).
 * It is armed while `armed` > 0: non-blocking requests left incomplete by their start
 * call (a rendezvous under way, a posted receive, a collective schedule's steps, an RMA
 * request on the message path) count until they complete (TDM_REQ_C_ARMED decides, with
 * the completion, which of the two counts). Blocking calls never arm: their own wait
 * progresses. While a thread of the application waits in the library the thread sleeps
 * uncounted (that wait polls): the first waiter uncounts it, it goes back to sleep
 * uncounted if it was running, and it is counted again when the last wait ends with
 * operations still pending.
 *
 * Kicks: local work no peer rings for (a copy begun by a call that returned, a queue to
 * drain) rings our own doorbell once (`kicked`) until the thread reads the doorbell
 * again; work another thread of ours held when the thread last looked is looked at
 * again after ASYNC_HELD_US, not left to the backstop.
 *
 * Who copies: at a match under the thread, the side whose application waits in the
 * library copies (select.c; this process publishes its waiting count as `app_waiting`).
 *
 * Counting ourselves in `sleeping` needs the same fence as a rank about to block
 * (net/shm.h): set, fence, then look at the rings; a packet published before it is
 * found by that look, one after it rings.
 */
#include "p2p_impl.h"
#include "../base/params.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

bool tdm_p2p_async_on;

/* Longest sleep: the thread is woken by rings, this only covers a membarrier call that
 * failed after registration (net/shm.c), as a blocked rank's own timeout does. */
#define ASYNC_BACKSTOP_US 1000000L
/* Sleep while another thread holds local work (a pair lock taken to post an operation:
 * microseconds), instead of polling for it. */
#define ASYNC_HELD_US 50L

static struct {
    pthread_t tid;
    bool started;
    tdm_lock_t lock;  /* armed, asleep, counted */
    unsigned armed;   /* operations that need progress while the application computes */
    bool asleep;      /* the thread is asleep (or about to sleep) on the doorbell */
    bool counted;     /* its 1 is in procs[rank].sleeping */
    unsigned kicked;  /* rung for local work since it last read the doorbell (atomic) */
    unsigned stop;    /* atomic: leave the loop */
    double cpu_final; /* its CPU seconds, taken as it exits */
} as = {.lock = TDM_LOCK_INITIALIZER};

static _Thread_local bool on_async_thread;

bool tdm_p2p_async_self(void) {
    return on_async_thread;
}

static tdm_shm_proc_t *me(void) {
    return tdm_shm_self();
}

/* Under `lock`: count the sleeping thread in `sleeping`; the caller fences after. */
static bool count_locked(void) {
    if (!as.asleep || as.counted || !as.armed)
        return false;
    atomic_fetch_add_explicit(&me()->sleeping, 1, memory_order_seq_cst);
    TDM_STORE_RELAXED(&as.counted, true);
    return true;
}

static void uncount_locked(void) {
    if (as.counted) {
        atomic_fetch_sub_explicit(&me()->sleeping, 1, memory_order_relaxed);
        TDM_STORE_RELAXED(&as.counted, false);
    }
}

/* Work for the thread that no peer will ring for: cells already in a ring, a copy to
 * go on with, a transmit queue to drain. */
static bool local_work(bool rings) {
    if (TDM_LOAD_RELAXED(&tdm_p2p.copy_len) || TDM_COUNTER_READ(&tdm_p2p.tx_busy))
        return true;
    if (rings)
        for (int i = 0; i < tdm_net.nlocal - 1; i++)
            if (tdm_net_recv_peek(tdm_net.shm_peers[i]))
                return true;
    return false;
}

/* Work a poll that found nothing left behind: a copy or cells whose pair lock another
 * thread held. (A full transmit queue is not: the consumer rings when it frees a cell.) */
static bool held_work(void) {
    if (TDM_LOAD_RELAXED(&tdm_p2p.copy_len))
        return true;
    for (int i = 0; i < tdm_net.nlocal - 1; i++)
        if (tdm_net_recv_peek(tdm_net.shm_peers[i]))
            return true;
    return false;
}

static void kick(void) {
    if (!__atomic_exchange_n(&as.kicked, 1u, __ATOMIC_ACQ_REL))
        tdm_shm_wake(tdm_p2p.rank);
}

/* Count the sleeping thread if it should be, and wake it for work no peer rings for. */
static void poke(void) {
    tdm_lock_acquire(&as.lock);
    bool fenced = count_locked();
    bool sleeping_armed = as.asleep && as.armed;
    tdm_lock_release(&as.lock);
    if (!sleeping_armed)
        return;
    if (fenced)
        tdm_shm_block_fence();
    else
        atomic_thread_fence(memory_order_seq_cst);
    if (local_work(fenced))
        kick();
}

void tdm_p2p_async_arm(tdm_req_t *req) {
    unsigned old = __atomic_fetch_or(&req->done, TDM_REQ_C_ARMED, __ATOMIC_ACQ_REL);
    if (old & TDM_REQ_C_DONE)
        return; /* completed first: nothing to count */
    tdm_lock_acquire(&as.lock);
    TDM_STORE_RELAXED(&as.armed, as.armed + 1); /* stores under the lock: read without it */
    tdm_lock_release(&as.lock);
    /* the one waiting in the library progresses it; otherwise the thread must hear of it */
    if (!TDM_LOAD_RELAXED(&tdm_p2p.waiting))
        poke();
}

void tdm_p2p_async_disarm(void) {
    tdm_lock_acquire(&as.lock);
    TDM_STORE_RELAXED(&as.armed, as.armed - 1);
    if (as.armed == 0)
        uncount_locked(); /* nothing left: peers stop ringing for it */
    tdm_lock_release(&as.lock);
}

void tdm_p2p_async_after_progress(void) {
    if (on_async_thread || TDM_LOAD_RELAXED(&tdm_p2p.waiting))
        return;
    /* a Test or a start left work of ours behind (a copy begun): the thread goes on with it */
    if (TDM_LOAD_RELAXED(&as.asleep) && TDM_LOAD_RELAXED(&as.armed) && local_work(false))
        poke();
}

void tdm_p2p_async_wait_begin(void) {
    /* the wait polls, and a thread of ours blocked in it is counted itself: a packet that
     * woke the progress thread too would have two threads race for it on one core */
    if (on_async_thread || !TDM_LOAD_RELAXED(&as.counted))
        return;
    tdm_lock_acquire(&as.lock);
    uncount_locked();
    tdm_lock_release(&as.lock);
}

void tdm_p2p_async_wait_end(void) {
    if (TDM_LOAD_RELAXED(&as.asleep) && TDM_LOAD_RELAXED(&as.armed))
        poke();
}

static void *async_main(void *arg) {
    (void)arg;
    on_async_thread = true;
    tdm_shm_proc_t *p = me();
    for (;;) {
        /* progress until a poll finds nothing: one wake-up for a burst of packets */
        int n;
        do {
            n = tdm_p2p_progress();
            TDM_COUNTER_ADD(&tdm_p2p_stats.async_calls, 1);
            TDM_COUNTER_ADD(&tdm_p2p_stats.async_events, (uint64_t)n);
        } while (n && !__atomic_load_n(&as.stop, __ATOMIC_ACQUIRE));
        if (__atomic_load_n(&as.stop, __ATOMIC_ACQUIRE))
            break;
        tdm_lock_acquire(&as.lock);
        TDM_STORE_RELAXED(&as.asleep, true);
        /* armed only while nobody of ours waits in the library (that wait polls) */
        bool fenced = !TDM_LOAD_RELAXED(&tdm_p2p.waiting) && count_locked();
        tdm_lock_release(&as.lock);
        if (fenced)
            tdm_shm_block_fence();
        else
            atomic_thread_fence(memory_order_seq_cst);
        uint32_t seen = atomic_load_explicit(&p->doorbell, memory_order_seq_cst);
        /* Kicks are taken again only now, after `seen`: one from here on changes the
         * doorbell, so the sleep below returns at once; one before it was suppressed, but
         * its work was published before it and the look below finds it. (Cleared before
         * `seen` was read, a kick in between was lost with its ring.) */
        __atomic_store_n(&as.kicked, 0u, __ATOMIC_SEQ_CST);
        n = tdm_p2p_progress(); /* a last look: what came before we were counted */
        TDM_COUNTER_ADD(&tdm_p2p_stats.async_calls, 1);
        TDM_COUNTER_ADD(&tdm_p2p_stats.async_events, (uint64_t)n);
        if (!n && !__atomic_load_n(&as.stop, __ATOMIC_ACQUIRE)) {
            /* The doorbell is rung for every packet while armed, by a poke for local work,
             * and by tdm_p2p_async_stop; the long timeout only backs a failed fence. Local
             * work that progress could not take is held by another thread of ours; one in
             * a wait goes on with it, but one posting an operation (holding a pair lock
             * for a match, not in progress) pokes nobody when it leaves: look again soon. */
            long us = ASYNC_BACKSTOP_US;
            if (!TDM_LOAD_RELAXED(&tdm_p2p.waiting) && held_work())
                us = ASYNC_HELD_US;
            tdm_net_block(seen, us); /* with peers of other nodes, UCX armed first */
            TDM_COUNTER_ADD(&tdm_p2p_stats.async_wakeups, 1);
        }
        tdm_lock_acquire(&as.lock);
        TDM_STORE_RELAXED(&as.asleep, false);
        uncount_locked();
        tdm_lock_release(&as.lock);
    }
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    as.cpu_final = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    return NULL;
}

void tdm_p2p_async_start(void) {
    if (!TDM_PARAM_I(ASYNC_PROGRESS) || as.started)
        return;
    /* The engine must lock as under MPI_THREAD_MULTIPLE once two threads drive it. Raising
     * the flag here is safe: MPI initialisation has not returned, so no other thread of the
     * application is inside the library and no lock is held across the rise (lock.h). */
    tdm_lock_threaded_on();
    tdm_p2p_async_on = true;
    __atomic_store_n(&as.stop, 0u, __ATOMIC_RELAXED);
    /* every signal blocked in it: the hang dump's SIGUSR1 goes to the application's thread */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&as.tid, NULL, async_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        tdm_warn(P2P, "cannot start the progress thread (%s): progress only inside MPI calls",
                 strerror(rc));
        return;
    }
    as.started = true;
}

void tdm_p2p_async_stop(void) {
    if (!as.started)
        return;
    __atomic_store_n(&as.stop, 1u, __ATOMIC_RELEASE);
    tdm_shm_wake(tdm_p2p.rank);
    pthread_join(as.tid, NULL);
    as.started = false;
    /* the application's waits no longer hand off to it; the engine stays threaded */
}

double tdm_p2p_async_cpu_seconds(void) {
    if (!as.started)
        return as.cpu_final;
    clockid_t cid;
    struct timespec ts;
    if (pthread_getcpuclockid(as.tid, &cid) != 0 || clock_gettime(cid, &ts) != 0)
        return as.cpu_final;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
