/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * base/lock.h: unthreaded, a lock is not held (a second try succeeds: no cost, no
 * deadlock for a single thread); threaded, it excludes (a try on a held lock fails, and
 * four threads adding under it lose no update), the counters lose no update under four
 * threads, and a release store makes the data written before it visible to an acquire load.
 */
#include "base/lock.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define THREADS 4
#define ITERS 200000

static tdm_lock_t lock = TDM_LOCK_INITIALIZER;
static long locked_sum;
static unsigned long counter;
static size_t counter_sz;
static int payload[64];
static int ready;

static void *adder(void *arg) {
    (void)arg;
    for (int i = 0; i < ITERS; i++) {
        tdm_lock_acquire(&lock);
        locked_sum++;
        tdm_lock_release(&lock);
        TDM_COUNTER_ADD(&counter, 2);
        TDM_COUNTER_ADD(&counter_sz, 1);
        TDM_COUNTER_SUB(&counter_sz, 1);
    }
    return NULL;
}

static void *consumer(void *arg) {
    long *bad = arg;
    while (!TDM_LOAD_ACQUIRE(&ready))
        sched_yield();
    for (int i = 0; i < 64; i++)
        *bad += payload[i] != i * 7;
    return NULL;
}

int main(void) {
    int errs = 0;
#define CHECK(_c, ...)                                                                             \
    do {                                                                                           \
        if (!(_c)) {                                                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            errs++;                                                                                \
        }                                                                                          \
    } while (0)

    /* unthreaded: taking a lock twice on one thread neither blocks nor fails */
    tdm_threaded = false;
    tdm_lock_acquire(&lock);
    CHECK(tdm_lock_try(&lock), "unthreaded: a try on a taken lock failed");
    tdm_lock_release(&lock);
    tdm_lock_release(&lock);
    unsigned w = 1;
    CHECK(TDM_FETCH_OR(&w, 4u) == 1 && w == 5, "unthreaded fetch_or: %u", w);

    tdm_threaded = true;
    tdm_lock_t l2;
    tdm_lock_init(&l2);
    CHECK(tdm_lock_try(&l2), "threaded: a try on a free lock failed");
    CHECK(!tdm_lock_try(&l2), "threaded: a try on a held lock succeeded");
    tdm_lock_release(&l2);
    CHECK(tdm_lock_try(&l2), "threaded: a try after release failed");
    tdm_lock_release(&l2);
    tdm_lock_fini(&l2);
    CHECK(TDM_FETCH_OR(&w, 2u) == 5 && w == 7, "threaded fetch_or: %u", w);

    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, adder, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK(locked_sum == (long)THREADS * ITERS, "locked sum %ld, want %ld", locked_sum,
          (long)THREADS * ITERS);
    CHECK(TDM_COUNTER_READ(&counter) == 2ul * THREADS * ITERS, "counter %lu, want %lu",
          TDM_COUNTER_READ(&counter), 2ul * THREADS * ITERS);
    CHECK(TDM_COUNTER_READ(&counter_sz) == 0, "counter up and down: %zu", counter_sz);

    long bad = 0;
    pthread_t c;
    pthread_create(&c, NULL, consumer, &bad);
    for (int i = 0; i < 64; i++)
        payload[i] = i * 7;
    TDM_STORE_RELEASE(&ready, 1);
    pthread_join(c, NULL);
    CHECK(bad == 0, "%ld words not seen after the acquire load", bad);

    if (errs)
        return 1;
    printf("No Errors\n");
    return 0;
}
