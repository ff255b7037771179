/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Events (events.def): registrations, their callbacks per safety level, the
 * one source (the monotonic clock) and delivery.
 *
 * Events are raised inside the library, where a callback must not call MPI:
 * the requirement is MPI_T_CB_REQUIRE_MPI_RESTRICTED, and each registration
 * gets the callback registered for the lowest level that meets it (a
 * callback safe in more contexts can do less). A registration with none of
 * those counts the event as dropped; its dropped handler hears of the count
 * before its next delivery, or when it is freed. tdm_event_on[] is set while
 * some registration of the event has a callback or a dropped handler, so an
 * event nobody listens to costs one branch where it happens.
 */
#include "mpit_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SAFETY_NONE, SAFETY_RESTRICTED, SAFETY_LEVELS = 4 };
#define MAX_ELEMS 8

static tdm_mpit_event_calls_t calls;

/* each event's name and layout, from events.def, made once */
typedef struct ev_layout {
    char name[64];
    int n;
    tdm_mpit_type_t types[MAX_ELEMS];
    long displs[MAX_ELEMS];
    size_t size;
} ev_layout_t;
static ev_layout_t layouts[TDM_EV_COUNT];
static bool laid_out;

struct tdm_mpit_event_reg {
    struct tdm_mpit_event_reg *next; /* of the same event */
    int event;
    struct {
        void *fn, *user;
    } cb[SAFETY_LEVELS];
    void *dropped_fn;
    long long dropped;
    int delivering; /* inside its callback: a free waits for the callback to return */
    bool doomed;
};
static tdm_mpit_event_reg_t *regs[TDM_EV_COUNT];

struct tdm_mpit_event_inst {
    int event;
    uint64_t ts;
    struct tdm_mpit_event_inst *outer; /* an instance being delivered when this one came */
    _Alignas(8) unsigned char data[MAX_ELEMS * 8];
};
/* per thread: two threads may deliver events at once, each its own chain */
static _Thread_local tdm_mpit_event_inst_t *current; /* the instance whose callbacks run */

static void layout_all(void) {
    for (int e = 0; e < TDM_EV_COUNT; e++) {
        ev_layout_t *l = &layouts[e];
        const tdm_event_desc_t *d = &tdm_event_descs[e];
        int k = snprintf(l->name, sizeof(l->name), "tandem_%s", d->id);
        for (int i = 7; i < k && i < (int)sizeof(l->name); i++)
            l->name[i] =
                (char)(l->name[i] >= 'A' && l->name[i] <= 'Z' ? l->name[i] + 32 : l->name[i]);
        size_t off = 0;
        for (const char *p = d->elements; *p && l->n < MAX_ELEMS;) {
            const char *colon = strchr(p, ':');
            if (!colon)
                break;
            bool i32 = colon[1] == 'i';
            size_t size = i32 ? sizeof(int) : sizeof(uint64_t);
            off = (off + size - 1) / size * size; /* as a C struct lays it out */
            l->types[l->n] = i32 ? TDM_MPIT_INT : TDM_MPIT_UNSIGNED_LONG_LONG;
            l->displs[l->n] = (long)off;
            l->n++;
            off += size;
            p = colon + 2;
            while (*p == ' ')
                p++;
        }
        l->size = off;
    }
    laid_out = true;
}

void tdm_mpit_event_set_calls(const tdm_mpit_event_calls_t *c) {
    calls = *c;
}

/* An event is raised only while someone listens for it. */
static void update_on(int e) {
    bool on = false;
    for (tdm_mpit_event_reg_t *r = regs[e]; r && !on; r = r->next) {
        on = r->dropped_fn != NULL;
        for (int s = 0; s < SAFETY_LEVELS; s++)
            on = on || r->cb[s].fn != NULL;
    }
    __atomic_store_n(&tdm_event_on[e], on, __ATOMIC_RELAXED);
}

static void reg_drop(tdm_mpit_event_reg_t *r) {
    for (tdm_mpit_event_reg_t **p = &regs[r->event]; *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            break;
        }
    }
    update_on(r->event);
    free(r);
}

/* Any thread (the progress thread too) may raise an event while another frees
 * registrations: delivery holds the MPI_T lock, which is recursive, so a
 * callback may call MPI_T. */
static void sink(tdm_event_id_t id, const int64_t *vals, int n) {
    tdm_mpit_lock();
    const ev_layout_t *l = &layouts[id];
    tdm_mpit_event_inst_t inst = {.event = id, .ts = tdm_event_clock_ns(), .outer = current};
    for (int i = 0; i < n && i < l->n; i++) {
        if (l->types[i] == TDM_MPIT_INT) {
            int x = (int)vals[i];
            memcpy(inst.data + l->displs[i], &x, sizeof(x));
        } else {
            uint64_t x = (uint64_t)vals[i];
            memcpy(inst.data + l->displs[i], &x, sizeof(x));
        }
    }
    current = &inst;
    tdm_mpit_event_reg_t *r = regs[id];
    while (r) {
        tdm_mpit_event_reg_t *next = r->next;
        int s = SAFETY_RESTRICTED;
        while (s < SAFETY_LEVELS && !r->cb[s].fn)
            s++;
        if (s == SAFETY_LEVELS || r->doomed) {
            r->dropped++;
            r = next;
            continue;
        }
        r->delivering++;
        if (r->dropped && r->dropped_fn)
            calls.dropped(r->dropped_fn, r->dropped, r, 0, SAFETY_RESTRICTED, r->cb[s].user);
        r->dropped = 0;
        calls.event(r->cb[s].fn, &inst, r, SAFETY_RESTRICTED, r->cb[s].user);
        next = r->next; /* the callback may have registered more */
        if (--r->delivering == 0 && r->doomed)
            reg_drop(r);
        r = next;
    }
    current = inst.outer;
    tdm_mpit_unlock();
}

void tdm_mpit_event_init(void) {
    if (!laid_out)
        layout_all();
    tdm_event_sink = sink;
}

void tdm_mpit_event_fini(void) {
    for (int e = 0; e < TDM_EV_COUNT; e++) {
        __atomic_store_n(&tdm_event_on[e], 0, __ATOMIC_RELAXED);
        while (regs[e]) {
            tdm_mpit_event_reg_t *n = regs[e]->next;
            free(regs[e]);
            regs[e] = n;
        }
    }
}

int tdm_mpit_event_num(void) {
    return TDM_EV_COUNT;
}

tdm_mpit_rc_t tdm_mpit_event_info(int i, tdm_mpit_event_info_t *out) {
    if (i < 0 || i >= TDM_EV_COUNT)
        return TDM_MPIT_ERR_INVALID_INDEX;
    const tdm_event_desc_t *d = &tdm_event_descs[i];
    out->name = layouts[i].name;
    out->desc = d->desc;
    out->verbosity = tdm_mpit_verbosity(d->verbosity);
    out->nelems = layouts[i].n;
    out->types = layouts[i].types;
    out->displs = layouts[i].displs;
    out->enumtype = tdm_mpit_enum_named(d->enum_name);
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_event_index(const char *name, int *i) {
    for (int e = 0; e < TDM_EV_COUNT; e++) {
        if (!strcmp(layouts[e].name, name)) {
            *i = e;
            return TDM_MPIT_OK;
        }
    }
    return TDM_MPIT_ERR_INVALID_NAME;
}

bool tdm_mpit_event_reg_valid(const tdm_mpit_event_reg_t *reg) {
    for (int e = 0; e < TDM_EV_COUNT; e++)
        for (tdm_mpit_event_reg_t *r = regs[e]; r; r = r->next)
            if (r == reg && !r->doomed)
                return true;
    return false;
}

tdm_mpit_rc_t tdm_mpit_event_alloc(int i, tdm_mpit_event_reg_t **reg) {
    if (i < 0 || i >= TDM_EV_COUNT)
        return TDM_MPIT_ERR_INVALID_INDEX;
    tdm_mpit_event_reg_t *r = calloc(1, sizeof(*r));
    if (!r)
        return TDM_MPIT_ERR_MEMORY;
    r->event = i;
    /* registrations are delivered in the order they were made */
    tdm_mpit_event_reg_t **p = &regs[i];
    while (*p)
        p = &(*p)->next;
    *p = r;
    *reg = r;
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_event_register(tdm_mpit_event_reg_t *reg, int safety, void *fn, void *user) {
    if (!tdm_mpit_event_reg_valid(reg))
        return TDM_MPIT_ERR_INVALID_HANDLE;
    if (safety < 0 || safety >= SAFETY_LEVELS || !fn)
        return TDM_MPIT_ERR_INVALID;
    reg->cb[safety].fn = fn;
    reg->cb[safety].user = user;
    update_on(reg->event);
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_event_set_dropped(tdm_mpit_event_reg_t *reg, void *fn) {
    if (!tdm_mpit_event_reg_valid(reg))
        return TDM_MPIT_ERR_INVALID_HANDLE;
    reg->dropped_fn = fn;
    update_on(reg->event);
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_event_free(tdm_mpit_event_reg_t *reg, void *free_fn, void *user) {
    if (!tdm_mpit_event_reg_valid(reg))
        return TDM_MPIT_ERR_INVALID_HANDLE;
    /* drops not told yet are told now, from here, where any MPI call is allowed */
    if (reg->dropped && reg->dropped_fn) {
        int s = 0;
        while (s < SAFETY_LEVELS - 1 && !reg->cb[s].fn)
            s++;
        calls.dropped(reg->dropped_fn, reg->dropped, reg, 0, SAFETY_NONE, reg->cb[s].user);
        reg->dropped = 0;
    }
    if (free_fn)
        calls.freed(free_fn, reg, SAFETY_NONE, user);
    if (reg->delivering) {
        reg->doomed = true; /* freed from its own callback: gone when it returns */
        return TDM_MPIT_OK;
    }
    reg_drop(reg);
    return TDM_MPIT_OK;
}

static bool inst_live(const tdm_mpit_event_inst_t *inst) {
    for (const tdm_mpit_event_inst_t *i = current; i; i = i->outer)
        if (i == inst)
            return true;
    return false;
}

tdm_mpit_rc_t tdm_mpit_event_read(tdm_mpit_event_inst_t *inst, int elem, void *buf) {
    if (!inst_live(inst))
        return TDM_MPIT_ERR_INVALID_HANDLE;
    const ev_layout_t *l = &layouts[inst->event];
    if (elem < 0 || elem >= l->n)
        return TDM_MPIT_ERR_INVALID_INDEX;
    memcpy(buf, inst->data + l->displs[elem],
           l->types[elem] == TDM_MPIT_INT ? sizeof(int) : sizeof(uint64_t));
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_event_copy(tdm_mpit_event_inst_t *inst, void *buf) {
    if (!inst_live(inst))
        return TDM_MPIT_ERR_INVALID_HANDLE;
    memcpy(buf, inst->data, layouts[inst->event].size);
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_event_timestamp(tdm_mpit_event_inst_t *inst, long long *ts) {
    if (!inst_live(inst))
        return TDM_MPIT_ERR_INVALID_HANDLE;
    *ts = (long long)inst->ts;
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_event_source(tdm_mpit_event_inst_t *inst, int *source) {
    if (!inst_live(inst))
        return TDM_MPIT_ERR_INVALID_HANDLE;
    *source = 0;
    return TDM_MPIT_OK;
}

int tdm_mpit_source_num(void) {
    return 1;
}

tdm_mpit_rc_t tdm_mpit_source_info(int i, const char **name, const char **desc, bool *ordered,
                                   long long *ticks_per_second, long long *max_ticks) {
    if (i != 0)
        return TDM_MPIT_ERR_INVALID_INDEX;
    *name = "tandem_clock";
    *desc = "this process's monotonic clock (CLOCK_MONOTONIC) in nanoseconds: the timestamp "
            "of every event, raised in the order they happen";
    *ordered = true;
    *ticks_per_second = 1000000000;
    *max_ticks = INT64_MAX;
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_source_timestamp(int i, long long *ts) {
    if (i != 0)
        return TDM_MPIT_ERR_INVALID_INDEX;
    *ts = (long long)tdm_event_clock_ns();
    return TDM_MPIT_OK;
}
