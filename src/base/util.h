/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers shared by every layer. */
#ifndef TDM_UTIL_H
#define TDM_UTIL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TDM_LIKELY(_x) __builtin_expect(!!(_x), 1)
#define TDM_UNLIKELY(_x) __builtin_expect(!!(_x), 0)
#define TDM_CACHELINE 64
#define TDM_ALIGN_UP(_x, _a) (((_x) + ((_a)-1)) & ~((size_t)(_a)-1))
#define TDM_MIN(_a, _b) ((_a) < (_b) ? (_a) : (_b))
#define TDM_MAX(_a, _b) ((_a) > (_b) ? (_a) : (_b))
#define TDM_SWAP(_type, _a, _b)                                                                    \
    do {                                                                                           \
        _type t_ = (_a);                                                                           \
        (_a) = (_b);                                                                               \
        (_b) = t_;                                                                                 \
    } while (0)
#define TDM_STR2(_x) #_x
#define TDM_STR(_x) TDM_STR2(_x)
#define TDM_CONTAINER_OF(_ptr, _type, _member) ((_type *)((char *)(_ptr)-offsetof(_type, _member)))
#define TDM_HIDDEN __attribute__((visibility("hidden")))

/* Intrusive doubly linked list (circular, with a sentinel head). The compiler keeps the
 * order of the stores (signal fences, no instruction): a signal handler that interrupts
 * an insertion or a removal and walks a list forward by `next` finds it whole (the
 * pending-operations dump, p2p/dump.c). */
typedef struct tdm_list {
    struct tdm_list *prev, *next;
} tdm_list_t;

static inline void tdm_list_init(tdm_list_t *h) {
    h->prev = h->next = h;
}
static inline int tdm_list_empty(const tdm_list_t *h) {
    return h->next == h;
}
static inline void tdm_list_push_back(tdm_list_t *h, tdm_list_t *e) {
    e->prev = h->prev;
    e->next = h;
    atomic_signal_fence(memory_order_seq_cst); /* e whole (and its entry) before it is linked */
    h->prev->next = e;
    h->prev = e;
}
static inline void tdm_list_remove(tdm_list_t *e) {
    e->prev->next = e->next;
    atomic_signal_fence(memory_order_seq_cst); /* unlinked for forward walks first */
    e->next->prev = e->prev;
    e->prev = e->next = e;
}
#define tdm_list_for_each_safe(_it, _tmp, _head)                                                   \
    for ((_it) = (_head)->next, (_tmp) = (_it)->next; (_it) != (_head);                            \
         (_it) = (_tmp), (_tmp) = (_it)->next)

#endif
