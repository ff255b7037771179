/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Events (events.def). Raising one costs one predictable branch while no tool
 * listens: tdm_event_on[id] is set by src/mpit only while a registration for
 * the event has a callback that may run inside the library. It is read
 * relaxed: MPI_T may turn an event off while another thread raises it.
 */
#ifndef TDM_EVENT_H
#define TDM_EVENT_H

#include <stdint.h>

typedef enum {
#define TDM_EVENT(_id, ...) TDM_EV_##_id,
#include "events.def"
#undef TDM_EVENT
    TDM_EV_COUNT
} tdm_event_id_t;

typedef struct tdm_event_desc {
    const char *id; /* "UNEXP_ENQUEUED": the MPI_T name is tandem_unexp_enqueued */
    const char *category;
    uint8_t verbosity; /* tdm_pverb_t */
    const char *elements;
    const char *enum_name;
    const char *desc;
} tdm_event_desc_t;

extern const tdm_event_desc_t tdm_event_descs[TDM_EV_COUNT];
extern unsigned char tdm_event_on[TDM_EV_COUNT];
/* Where raised events go (src/mpit sets it before turning any event on). */
extern void (*tdm_event_sink)(tdm_event_id_t id, const int64_t *vals, int n);

#define TDM_EVENT_RAISE(_id, ...)                                                                  \
    do {                                                                                           \
        if (__builtin_expect(__atomic_load_n(&tdm_event_on[TDM_EV_##_id], __ATOMIC_RELAXED), 0)) { \
            const int64_t _vals[] = {__VA_ARGS__};                                                 \
            tdm_event_sink(TDM_EV_##_id, _vals, (int)(sizeof(_vals) / sizeof(_vals[0])));          \
        }                                                                                          \
    } while (0)

/* The clock of event timestamps and of tandem_clock_ns: CLOCK_MONOTONIC in ns. */
uint64_t tdm_event_clock_ns(void);

#endif
