/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Performance variables: every layer's table (base/pvar.h) numbered one after
 * another, sessions, and handles that give each tool its own view.
 *
 * Levels, sizes, states, percentages and the generic ones are continuous and
 * read-only: a handle reads the value now. Counters, aggregates and timers are
 * started and stopped: a handle adds up what happened while it was started
 * (snapshots of the process-wide value at start, sums at stop), so handles
 * never disturb each other or the engine. A watermark handle keeps its own
 * mark; the owner keeps one process-wide mark, which starting or resetting any
 * handle of the variable first folds into every started handle, then resets
 * to the level: each started handle's mark is then the max (min) of its own
 * and the process-wide one, exactly over its interval.
 */
#include "mpit_impl.h"
#include "../coll/select.h"
#include "../p2p/p2p.h"
#include "../rma/rma.h"

#include <stdlib.h>
#include <string.h>

/* ---- the tool interface's own variables ---- */

static uint64_t library_state(int i) {
    (void)i;
    return (uint64_t)tdm_mpit_phase;
}
static uint64_t clock_ns(int i) {
    (void)i;
    return tdm_event_clock_ns();
}
static const tdm_pvar_desc_t own_pvars[] = {
    {.name = "tandem_library_state",
     .desc = "where MPI is in this process: not initialized (before its first MPI_Init or "
             "MPI_Session_init), initialized (MPI_Init or a session in effect), finalized "
             "(after the last MPI_Finalize or MPI_Session_finalize)",
     .category = "tandem_introspection",
     .cls = TDM_PVC_STATE,
     .type = TDM_PVT_INT,
     .verbosity = TDM_PVERB_USER,
     .get = library_state,
     .items = "tandem_library_state"},
    {.name = "tandem_clock_ns",
     .desc = "the process's monotonic clock in nanoseconds, the timestamps of its events "
             "(source tandem_clock): reads of other variables can be placed among events",
     .category = "tandem_introspection",
     .cls = TDM_PVC_GENERIC,
     .verbosity = TDM_PVERB_TUNER,
     .get = clock_ns},
};

static const struct {
    const tdm_pvar_desc_t *descs;
    const int *n;
} tables[] = {
    {tdm_p2p_pvars, &tdm_p2p_npvars},
    {tdm_coll_pvars, &tdm_coll_npvars},
    {tdm_comm_pvars, &tdm_comm_npvars},
    {tdm_rma_pvars, &tdm_rma_npvars},
};
#define NTABLES (sizeof(tables) / sizeof(tables[0]))
static const int own_n = (int)(sizeof(own_pvars) / sizeof(own_pvars[0]));

int tdm_mpit_pvar_num(void) {
    int n = own_n;
    for (size_t t = 0; t < NTABLES; t++)
        n += *tables[t].n;
    return n;
}

const tdm_pvar_desc_t *tdm_mpit_pvar_desc(int i) {
    if (i < 0)
        return NULL;
    for (size_t t = 0; t < NTABLES; t++) {
        if (i < *tables[t].n)
            return &tables[t].descs[i];
        i -= *tables[t].n;
    }
    return i < own_n ? &own_pvars[i] : NULL;
}

void tdm_mpit_pvar_init(void) {
    /* a registry naming a category params.def does not declare is a mistake the
     * tests catch (mpit/enumerate); say it here too */
    for (int i = 0; i < tdm_mpit_pvar_num(); i++)
        if (tdm_mpit_cat_of(tdm_mpit_pvar_desc(i)->category) < 0)
            tdm_warn(MPIT, "%s names the unknown category %s", tdm_mpit_pvar_desc(i)->name,
                     tdm_mpit_pvar_desc(i)->category);
}

static bool continuous(const tdm_pvar_desc_t *d) {
    switch (d->cls) {
    case TDM_PVC_COUNTER:
    case TDM_PVC_AGGREGATE:
    case TDM_PVC_TIMER:
    case TDM_PVC_HIGHWATERMARK:
    case TDM_PVC_LOWWATERMARK:
        return false;
    }
    return true;
}

static bool watermark(const tdm_pvar_desc_t *d) {
    return d->cls == TDM_PVC_HIGHWATERMARK || d->cls == TDM_PVC_LOWWATERMARK;
}

static tdm_mpit_type_t value_type(const tdm_pvar_desc_t *d) {
    return d->type == TDM_PVT_DOUBLE ? TDM_MPIT_DOUBLE
           : d->type == TDM_PVT_INT  ? TDM_MPIT_INT
                                     : TDM_MPIT_UNSIGNED_LONG_LONG;
}

tdm_mpit_rc_t tdm_mpit_pvar_info(int i, tdm_mpit_pvar_info_t *out) {
    const tdm_pvar_desc_t *d = tdm_mpit_pvar_desc(i);
    if (!d)
        return TDM_MPIT_ERR_INVALID_INDEX;
    out->name = d->name;
    out->desc = d->desc;
    out->verbosity = tdm_mpit_verbosity(d->verbosity);
    out->var_class = d->cls;
    out->type = value_type(d);
    out->enumtype = d->items ? tdm_mpit_enum_named(d->items) : NULL;
    out->bind = d->bind;
    out->readonly = continuous(d);
    out->continuous = continuous(d);
    out->atomic = !continuous(d); /* calls are serialised: a read and reset happen as one */
    return TDM_MPIT_OK;
}

/* A name with another class is no match (MPI-4.1 16.3.7: names are unique per class). */
tdm_mpit_rc_t tdm_mpit_pvar_index(const char *name, int var_class, int *i) {
    for (int k = 0; k < tdm_mpit_pvar_num(); k++) {
        const tdm_pvar_desc_t *d = tdm_mpit_pvar_desc(k);
        if (d->cls == var_class && !strcmp(d->name, name)) {
            *i = k;
            return TDM_MPIT_OK;
        }
    }
    return TDM_MPIT_ERR_INVALID_NAME;
}

/* ---- sessions and handles ---- */

typedef union {
    uint64_t u;
    double f;
} val_t;

struct tdm_mpit_pvar_handle {
    struct tdm_mpit_pvar_handle *next; /* in the session */
    int index;
    const tdm_pvar_desc_t *d;
    tdm_comm_t *comm;    /* bound: held until the handle goes, or MPI_Finalize */
    const void *obj;     /* bound: the counters read (the communicator's, or `final`) */
    tdm_comm_pv_t final; /* bound: the communicator's counters at MPI_Finalize */
    int count;
    bool started;
    val_t *acc;  /* counters: the sum of the started intervals; watermarks: the mark */
    val_t *snap; /* counters: the value when started */
};

struct tdm_mpit_session {
    struct tdm_mpit_session *next;
    tdm_mpit_pvar_handle_t *handles;
};
static tdm_mpit_session_t *sessions;

static val_t raw(const tdm_mpit_pvar_handle_t *h, int i) {
    val_t v;
    if (h->d->type == TDM_PVT_DOUBLE)
        v.f = tdm_pvar_double(h->d, h->obj, i);
    else
        v.u = tdm_pvar_u64(h->d, h->obj, i);
    return v;
}

static bool session_live(const tdm_mpit_session_t *s) {
    return tdm_mpit_on_list(sessions, s, offsetof(tdm_mpit_session_t, next));
}

static bool handle_of(const tdm_mpit_session_t *s, const tdm_mpit_pvar_handle_t *h) {
    return tdm_mpit_on_list(s->handles, h, offsetof(tdm_mpit_pvar_handle_t, next));
}

tdm_mpit_rc_t tdm_mpit_session_create(tdm_mpit_session_t **s) {
    tdm_mpit_session_t *n = calloc(1, sizeof(*n));
    if (!n)
        return TDM_MPIT_ERR_MEMORY;
    n->next = sessions;
    sessions = n;
    *s = n;
    return TDM_MPIT_OK;
}

static void handle_drop(tdm_mpit_pvar_handle_t *h) {
    if (h->started && h->d->timing)
        (*h->d->timing)--;
    if (h->comm)
        tdm_comm_release(h->comm);
    free(h->acc);
    free(h->snap);
    free(h);
}

tdm_mpit_rc_t tdm_mpit_session_free(tdm_mpit_session_t *s) {
    for (tdm_mpit_session_t **p = &sessions; *p; p = &(*p)->next) {
        if (*p != s)
            continue;
        *p = s->next;
        while (s->handles) {
            tdm_mpit_pvar_handle_t *n = s->handles->next;
            handle_drop(s->handles);
            s->handles = n;
        }
        free(s);
        return TDM_MPIT_OK;
    }
    return TDM_MPIT_ERR_INVALID_SESSION;
}

void tdm_mpit_pvar_fini(void) {
    while (sessions)
        tdm_mpit_session_free(sessions);
}

void tdm_mpit_comm_fini(void) {
    tdm_mpit_lock(); /* MPI_Finalize: another thread may be in an MPI_T call */
    for (tdm_mpit_session_t *s = sessions; s; s = s->next) {
        for (tdm_mpit_pvar_handle_t *h = s->handles; h; h = h->next) {
            if (!h->comm)
                continue;
            h->final = h->comm->pv;
            h->obj = &h->final;
            tdm_comm_release(h->comm);
            h->comm = NULL;
        }
    }
    tdm_mpit_unlock();
}

/* A watermark's process-wide mark (kept by its owner) and the level it follows. */
static uint64_t *mark_of(const tdm_pvar_desc_t *d) {
    return (uint64_t *)(uintptr_t)d->addr;
}

static uint64_t better(const tdm_pvar_desc_t *d, uint64_t a, uint64_t b) {
    if (d->cls == TDM_PVC_HIGHWATERMARK)
        return a > b ? a : b;
    return a < b ? a : b;
}

/* Fold the process-wide mark into every started handle of d, then restart it
 * from the level. */
static void fold_mark(const tdm_pvar_desc_t *d) {
    for (tdm_mpit_session_t *s = sessions; s; s = s->next)
        for (tdm_mpit_pvar_handle_t *h = s->handles; h; h = h->next)
            if (h->d == d && h->started)
                h->acc[0].u = better(d, h->acc[0].u, *mark_of(d));
    *mark_of(d) = *d->watch;
}

tdm_mpit_rc_t tdm_mpit_pvar_alloc(tdm_mpit_session_t *s, int i, tdm_comm_t *comm,
                                  tdm_mpit_pvar_handle_t **h_p, int *count) {
    if (!session_live(s))
        return TDM_MPIT_ERR_INVALID_SESSION;
    const tdm_pvar_desc_t *d = tdm_mpit_pvar_desc(i);
    if (!d)
        return TDM_MPIT_ERR_INVALID_INDEX;
    if (d->bind != TDM_PVB_NONE && !comm)
        return TDM_MPIT_ERR_INVALID_HANDLE;
    tdm_mpit_pvar_handle_t *h = calloc(1, sizeof(*h));
    int n = tdm_pvar_count(d);
    if (!h || !(h->acc = calloc((size_t)n, sizeof(val_t))) ||
        !(h->snap = calloc((size_t)n, sizeof(val_t)))) {
        if (h)
            free(h->acc);
        free(h);
        return TDM_MPIT_ERR_MEMORY;
    }
    h->index = i;
    h->d = d;
    h->count = n;
    if (d->bind != TDM_PVB_NONE) {
        h->comm = comm;
        h->obj = &comm->pv;
        tdm_comm_retain(comm);
    }
    if (watermark(d))
        h->acc[0].u = *d->watch; /* the starting value: the level now */
    h->next = s->handles;
    s->handles = h;
    *h_p = h;
    *count = n;
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_pvar_free(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h) {
    if (!session_live(s))
        return TDM_MPIT_ERR_INVALID_SESSION;
    for (tdm_mpit_pvar_handle_t **p = &s->handles; *p; p = &(*p)->next) {
        if (*p == h) {
            *p = h->next;
            handle_drop(h);
            return TDM_MPIT_OK;
        }
    }
    return TDM_MPIT_ERR_INVALID_HANDLE;
}

static void start_one(tdm_mpit_pvar_handle_t *h) {
    if (h->started)
        return;
    if (watermark(h->d)) {
        fold_mark(h->d);
    } else {
        for (int i = 0; i < h->count; i++)
            h->snap[i] = raw(h, i);
    }
    if (h->d->timing)
        (*h->d->timing)++;
    h->started = true;
}

static void stop_one(tdm_mpit_pvar_handle_t *h) {
    if (!h->started)
        return;
    if (watermark(h->d)) {
        fold_mark(h->d);
    } else {
        for (int i = 0; i < h->count; i++) {
            val_t v = raw(h, i);
            if (h->d->type == TDM_PVT_DOUBLE)
                h->acc[i].f += v.f - h->snap[i].f;
            else
                h->acc[i].u += v.u - h->snap[i].u;
        }
    }
    if (h->d->timing)
        (*h->d->timing)--;
    h->started = false;
}

static void value(const tdm_mpit_pvar_handle_t *h, int i, val_t *out) {
    if (continuous(h->d)) {
        *out = raw(h, i);
    } else if (!h->started) {
        *out = h->acc[i];
    } else if (watermark(h->d)) {
        out->u = better(h->d, h->acc[i].u, *mark_of(h->d));
    } else {
        val_t v = raw(h, i);
        if (h->d->type == TDM_PVT_DOUBLE)
            out->f = h->acc[i].f + (v.f - h->snap[i].f);
        else
            out->u = h->acc[i].u + (v.u - h->snap[i].u);
    }
}

/* Set a handle's value (write, reset): counters from now on add to `to`. */
static void set_one(tdm_mpit_pvar_handle_t *h, const val_t *to) {
    if (watermark(h->d)) {
        if (h->started)
            fold_mark(h->d);
        h->acc[0] = to ? to[0] : (val_t){.u = *h->d->watch};
        return;
    }
    for (int i = 0; i < h->count; i++) {
        h->acc[i] = to ? to[i] : (val_t){0};
        if (h->started)
            h->snap[i] = raw(h, i);
    }
}

static tdm_mpit_rc_t check(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h, bool all) {
    if (!session_live(s))
        return TDM_MPIT_ERR_INVALID_SESSION;
    if (!all && !handle_of(s, h))
        return TDM_MPIT_ERR_INVALID_HANDLE;
    return TDM_MPIT_OK;
}

static void reset_one(tdm_mpit_pvar_handle_t *h) {
    set_one(h, NULL);
}

/* `one` on handle h, or with `all` on every handle of session s but the continuous ones
 * (MPI-4.1 16.3.7 leaves them out); a continuous h alone is `refused`. */
static tdm_mpit_rc_t each(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h, bool all,
                          void (*one)(tdm_mpit_pvar_handle_t *), tdm_mpit_rc_t refused) {
    tdm_mpit_rc_t rc = check(s, h, all);
    if (rc != TDM_MPIT_OK)
        return rc;
    if (all) {
        for (tdm_mpit_pvar_handle_t *it = s->handles; it; it = it->next)
            if (!continuous(it->d))
                one(it);
        return TDM_MPIT_OK;
    }
    if (continuous(h->d))
        return refused;
    one(h);
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_pvar_start(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h, bool all) {
    return each(s, h, all, start_one, TDM_MPIT_ERR_NO_STARTSTOP);
}

tdm_mpit_rc_t tdm_mpit_pvar_stop(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h, bool all) {
    return each(s, h, all, stop_one, TDM_MPIT_ERR_NO_STARTSTOP);
}

/* read-only variables are the continuous ones */
tdm_mpit_rc_t tdm_mpit_pvar_reset(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h, bool all) {
    return each(s, h, all, reset_one, TDM_MPIT_ERR_NO_WRITE);
}

static size_t elem_size(const tdm_pvar_desc_t *d) {
    return d->type == TDM_PVT_INT ? sizeof(int) : 8;
}

tdm_mpit_rc_t tdm_mpit_pvar_read(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h, void *buf,
                                 bool reset) {
    tdm_mpit_rc_t rc = check(s, h, false);
    if (rc != TDM_MPIT_OK)
        return rc;
    if (reset && continuous(h->d))
        return TDM_MPIT_ERR_NO_WRITE;
    for (int i = 0; i < h->count; i++) {
        val_t v;
        value(h, i, &v);
        char *out = (char *)buf + (size_t)i * elem_size(h->d);
        if (h->d->type == TDM_PVT_INT) {
            int x = (int)v.u;
            memcpy(out, &x, sizeof(x));
        } else {
            memcpy(out, &v, sizeof(v));
        }
    }
    if (reset)
        set_one(h, NULL);
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_pvar_write(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h,
                                  const void *buf) {
    tdm_mpit_rc_t rc = check(s, h, false);
    if (rc != TDM_MPIT_OK)
        return rc;
    if (continuous(h->d))
        return TDM_MPIT_ERR_NO_WRITE;
    val_t *to = calloc((size_t)h->count, sizeof(*to));
    if (!to)
        return TDM_MPIT_ERR_MEMORY;
    for (int i = 0; i < h->count; i++)
        memcpy(&to[i], (const char *)buf + (size_t)i * elem_size(h->d), elem_size(h->d));
    set_one(h, to);
    free(to);
    return TDM_MPIT_OK;
}
