/* SPDX-License-Identifier: BSD-3-Clause */
#include "event.h"
#include "params.h"

#include <time.h>

const tdm_event_desc_t tdm_event_descs[TDM_EV_COUNT] = {
#define TDM_EVENT(_id, _cat, _verb, _elems, _enum, _desc)                                          \
    [TDM_EV_##_id] = {#_id, _cat, TDM_PVERB_##_verb, _elems, _enum, _desc},
#include "events.def"
#undef TDM_EVENT
};

unsigned char tdm_event_on[TDM_EV_COUNT];
void (*tdm_event_sink)(tdm_event_id_t id, const int64_t *vals, int n);

uint64_t tdm_event_clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
