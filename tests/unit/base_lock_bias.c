/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * base/lock.h, the bias: the thread that raised tdm_threaded takes locks with plain stores
 * (a try on a lock it holds still fails) and adds to counters exactly; a second thread taking
 * a lock revokes the bias and waits while the owner is inside a section (it never enters
 * while the owner holds the lock); after it every thread locks for real (the owner's
 * lock word is written) and no update is lost while the bias is revoked in the middle of
 * the owner's stream of sections; a thread holding the MPI_T lock never waits for the
 * owner, which may take that lock inside a section (no deadlock: an alarm fails the test);
 * a second thread's counter add or reference count change revokes the bias too, and
 * neither loses an update when that happens in the middle of the owner's own adds.
 */
#include "base/lock.h"
#include "base/params.h"
#include "base/ref.h"
#include "mpit/mpit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ITERS 200000

static int errs;
#define CHECK(_c, ...)                                                                             \
    do {                                                                                           \
        if (!(_c)) {                                                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            errs++;                                                                                \
        }                                                                                          \
    } while (0)

static tdm_lock_t lock_a = TDM_LOCK_INITIALIZER, lock_b = TDM_LOCK_INITIALIZER;
static int owner_inside; /* the owner is in its section on lock_a */
static int second_inside;
static long plain_sum; /* under lock_a only */
static int go;

/* Takes lock_a once: it must not get it while the owner is inside. */
static void *second_once(void *arg) {
    (void)arg;
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    tdm_lock_acquire(&lock_a);
    __atomic_store_n(&second_inside, 1, __ATOMIC_RELAXED);
    CHECK(!__atomic_load_n(&owner_inside, __ATOMIC_RELAXED),
          "the second thread took the lock while the owner held it by the bias");
    plain_sum++;
    __atomic_store_n(&second_inside, 0, __ATOMIC_RELAXED);
    tdm_lock_release(&lock_a);
    return NULL;
}

/* Adds under lock_a, starting when the owner is in the middle of its own loop. */
static void *second_adder(void *arg) {
    (void)arg;
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    for (int i = 0; i < ITERS; i++) {
        tdm_lock_acquire(&lock_a);
        plain_sum++;
        tdm_lock_release(&lock_a);
    }
    return NULL;
}

static uint64_t count_u64;
static int refs;

/* Adds to a counter (arg NULL) or changes a reference count, from the middle of the
 * owner's loop on. */
static void *second_counter(void *arg) {
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    for (int i = 0; i < ITERS; i++) {
        if (!arg) {
            TDM_COUNTER_ADD(&count_u64, 2);
        } else {
            tdm_ref_inc(&refs);
            tdm_ref_inc(&refs);
            tdm_ref_dec(&refs);
        }
    }
    return NULL;
}

/* Holds the MPI_T lock while it takes an engine lock for the first time. */
static void *mpit_holder(void *arg) {
    (void)arg;
    tdm_mpit_lock();
    tdm_lock_acquire(&lock_b);
    tdm_lock_release(&lock_b);
    tdm_mpit_unlock();
    return NULL;
}

int main(void) {
    alarm(20); /* a deadlock fails the test here, well before ctest's limit */
    tdm_params_init();
    tdm_lock_threaded_on();
    if (tdm_lock_bias != TDM_BIAS_ON) {
        printf("no membarrier(2) PRIVATE_EXPEDITED here: no bias to test\n");
        return 77;
    }

    /* the owner, biased: sections nest, a try on a free lock succeeds and one on a lock
     * it holds fails (as unbiased: code that runs hooks under a lock relies on it), and
     * the bias holds throughout */
    tdm_lock_acquire(&lock_a);
    CHECK(tdm_lock_try(&lock_b), "the owner's try on a free lock failed under the bias");
    CHECK(!tdm_lock_try(&lock_a), "the owner's try on a lock it holds succeeded");
    CHECK(!tdm_lock_try(&lock_b), "the owner's try on a lock it holds succeeded (nested)");
    tdm_lock_release(&lock_b);
    CHECK(tdm_lock_try(&lock_b), "the owner's try on a released lock failed");
    tdm_lock_release(&lock_b);
    tdm_lock_release(&lock_a);
    CHECK(lock_a.v == 0 && lock_b.v == 0, "lock words %u %u after the releases", lock_a.v,
          lock_b.v);
    CHECK(tdm_lock_bias == TDM_BIAS_ON, "the owner's own sections changed the bias to %u",
          tdm_lock_bias);
    CHECK(tdm_lock_owner_depth == 0, "open sections after the releases: %u", tdm_lock_owner_depth);
    unsigned long counter = 0;
    for (int i = 0; i < 1000; i++)
        TDM_COUNTER_ADD(&counter, 3);
    TDM_COUNTER_SUB(&counter, 1000);
    CHECK(counter == 2000, "biased counter %lu, want 2000", counter);
    CHECK(tdm_lock_owner_depth == 0, "open sections after the counters: %u", tdm_lock_owner_depth);

    /* the MPI_T lock: another thread holding it revokes before it may wait for the owner,
     * who takes it inside a section (as event delivery does) */
    tdm_lock_acquire(&lock_a);
    pthread_t m;
    pthread_create(&m, NULL, mpit_holder, NULL);
    usleep(50000); /* lets the thread take the MPI_T lock first, if it can */
    tdm_mpit_lock();
    tdm_mpit_unlock();
    tdm_lock_release(&lock_a);
    pthread_join(m, NULL);
    CHECK(tdm_lock_bias == TDM_BIAS_OFF, "bias %u after another thread took a lock", tdm_lock_bias);
    if (errs) /* the rest needs a fresh bias */
        return 1;

    /* a fresh bias, as at initialisation (no other thread is running) */
    tdm_lock_bias = TDM_BIAS_ON;

    /* revocation while the owner is inside: the second thread waits for the release */
    tdm_lock_acquire(&lock_a);
    __atomic_store_n(&owner_inside, 1, __ATOMIC_RELAXED);
    pthread_t t;
    pthread_create(&t, NULL, second_once, NULL);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    usleep(50000); /* room for the second thread to enter wrongly */
    CHECK(!__atomic_load_n(&second_inside, __ATOMIC_RELAXED),
          "the second thread is inside while the owner holds the lock");
    plain_sum++;
    __atomic_store_n(&owner_inside, 0, __ATOMIC_RELAXED);
    tdm_lock_release(&lock_a);
    pthread_join(t, NULL);
    CHECK(plain_sum == 2, "sum %ld after one section each, want 2", plain_sum);
    CHECK(tdm_lock_bias == TDM_BIAS_OFF, "bias %u after revocation", tdm_lock_bias);
    tdm_lock_acquire(&lock_a); /* revoked: the owner locks for real */
    CHECK(__atomic_load_n(&lock_a.v, __ATOMIC_RELAXED) != 0,
          "the owner's lock word is 0 after the bias was revoked");
    tdm_lock_release(&lock_a);

    /* revocation in the middle of the owner's stream of sections: no update lost */
    tdm_lock_bias = TDM_BIAS_ON;
    __atomic_store_n(&go, 0, __ATOMIC_RELAXED);
    plain_sum = 0;
    pthread_create(&t, NULL, second_adder, NULL);
    for (int i = 0; i < ITERS; i++) {
        if (i == ITERS / 10)
            __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
        tdm_lock_acquire(&lock_a);
        plain_sum++;
        tdm_lock_release(&lock_a);
    }
    pthread_join(t, NULL);
    CHECK(plain_sum == 2L * ITERS, "sum %ld, want %ld", plain_sum, 2L * ITERS);

    /* counters, then reference counts: the second thread's first change revokes */
    for (int kind = 0; kind < 2; kind++) {
        tdm_lock_bias = TDM_BIAS_ON;
        __atomic_store_n(&go, 0, __ATOMIC_RELAXED);
        pthread_create(&t, NULL, second_counter, kind ? &refs : NULL);
        for (int i = 0; i < ITERS; i++) {
            if (i == ITERS / 10)
                __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
            if (!kind) {
                TDM_COUNTER_ADD(&count_u64, 2);
            } else {
                tdm_ref_inc(&refs);
                tdm_ref_inc(&refs);
                tdm_ref_dec(&refs);
            }
        }
        pthread_join(t, NULL);
        CHECK(tdm_lock_bias == TDM_BIAS_OFF, "bias %u after another thread's %s", tdm_lock_bias,
              kind ? "reference counts" : "counter adds");
    }
    CHECK(count_u64 == 4ul * ITERS, "counter %llu, want %llu", (unsigned long long)count_u64,
          4ull * ITERS);
    CHECK(refs == 2 * ITERS, "reference count %d, want %d", refs, 2 * ITERS);

    if (errs)
        return 1;
    printf("No Errors\n");
    return 0;
}
