/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control variables: params.def's lines, in its order. A bool is an MPI_INT
 * (0 or 1), an int an MPI_INT (MPI_COUNT if its range needs 64 bits), a size
 * an MPI_UNSIGNED_LONG_LONG, a string with words an MPI_INT naming a word of
 * its enumeration, any other string MPI_CHAR (TDM_MPIT_STRLEN bytes). A write
 * is checked against the RANGE as the environment is, then takes effect as the
 * line's SCOPE says (params.def).
 */
#include "mpit_impl.h"
#include "../coll/select.h"
#include "../p2p/p2p.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define TDM_MPIT_STRLEN 256 /* MPI_CHAR cvars: the buffer a read fills, terminator included */

struct tdm_mpit_cvar_handle {
    struct tdm_mpit_cvar_handle *next;
    int index;
};
static tdm_mpit_cvar_handle_t *handles;

int tdm_mpit_cvar_num(void) {
    return TDM_PARAM_COUNT;
}

static tdm_mpit_type_t cvar_type(tdm_param_id_t id) {
    const tdm_param_desc_t *d = &tdm_param_descs[id];
    long long lo, hi;
    switch (d->type) {
    case TDM_PTYPE_BOOL:
        return TDM_MPIT_INT;
    case TDM_PTYPE_INT:
        if (tdm_param_bounds(id, &lo, &hi) == 0 && lo >= INT_MIN && hi <= INT_MAX)
            return TDM_MPIT_INT;
        return TDM_MPIT_COUNT;
    case TDM_PTYPE_SIZE:
        return TDM_MPIT_UNSIGNED_LONG_LONG;
    case TDM_PTYPE_STRING:
        return tdm_param_nchoices(id) ? TDM_MPIT_INT : TDM_MPIT_CHAR;
    }
    return TDM_MPIT_INT;
}

static tdm_mpit_scope_t cvar_scope(tdm_pscope_t s) {
    switch (s) {
    case TDM_PSCOPE_LOCAL:
    case TDM_PSCOPE_LOCAL_RUN:
        return TDM_MPIT_SCOPE_LOCAL;
    case TDM_PSCOPE_JOB:
    case TDM_PSCOPE_JOB_RUN:
        return TDM_MPIT_SCOPE_ALL_EQ;
    case TDM_PSCOPE_LAUNCHER:
    case TDM_PSCOPE_WRAPPER:
        break;
    }
    return TDM_MPIT_SCOPE_CONSTANT;
}

tdm_mpit_rc_t tdm_mpit_cvar_info(int i, tdm_mpit_cvar_info_t *out) {
    if (i < 0 || i >= TDM_PARAM_COUNT)
        return TDM_MPIT_ERR_INVALID_INDEX;
    const tdm_param_desc_t *d = &tdm_param_descs[i];
    /* the name of the environment variable: the one users know */
    static char names[TDM_PARAM_COUNT][96];
    if (!names[i][0])
        snprintf(names[i], sizeof(names[i]), "TANDEM_%s", d->name);
    out->name = names[i];
    out->desc = d->desc;
    out->verbosity = tdm_mpit_verbosity(d->verbosity);
    out->type = cvar_type((tdm_param_id_t)i);
    out->enumtype = tdm_mpit_enum_of_param((tdm_param_id_t)i);
    out->scope = cvar_scope(d->scope);
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_cvar_index(const char *name, int *i) {
    if (strncmp(name, "TANDEM_", 7) != 0)
        return TDM_MPIT_ERR_INVALID_NAME;
    for (int k = 0; k < TDM_PARAM_COUNT; k++) {
        if (!strcmp(name + 7, tdm_param_descs[k].name)) {
            *i = k;
            return TDM_MPIT_OK;
        }
    }
    return TDM_MPIT_ERR_INVALID_NAME;
}

static bool live(const tdm_mpit_cvar_handle_t *h) {
    return tdm_mpit_on_list(handles, h, offsetof(tdm_mpit_cvar_handle_t, next));
}

tdm_mpit_rc_t tdm_mpit_cvar_alloc(int i, tdm_mpit_cvar_handle_t **h, int *count) {
    if (i < 0 || i >= TDM_PARAM_COUNT)
        return TDM_MPIT_ERR_INVALID_INDEX;
    tdm_mpit_cvar_handle_t *n = calloc(1, sizeof(*n));
    if (!n)
        return TDM_MPIT_ERR_MEMORY;
    n->index = i;
    n->next = handles;
    handles = n;
    *h = n;
    *count = cvar_type((tdm_param_id_t)i) == TDM_MPIT_CHAR ? TDM_MPIT_STRLEN : 1;
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_cvar_free(tdm_mpit_cvar_handle_t *h) {
    for (tdm_mpit_cvar_handle_t **p = &handles; *p; p = &(*p)->next) {
        if (*p == h) {
            *p = h->next;
            free(h);
            return TDM_MPIT_OK;
        }
    }
    return TDM_MPIT_ERR_INVALID_HANDLE;
}

void tdm_mpit_cvar_fini(void) {
    while (handles) {
        tdm_mpit_cvar_handle_t *n = handles->next;
        free(handles);
        handles = n;
    }
}

tdm_mpit_rc_t tdm_mpit_cvar_read(tdm_mpit_cvar_handle_t *h, void *buf) {
    if (!live(h))
        return TDM_MPIT_ERR_INVALID_HANDLE;
    tdm_param_id_t id = (tdm_param_id_t)h->index;
    const tdm_param_val_t *v = &tdm_param_vals[id];
    switch (cvar_type(id)) {
    case TDM_MPIT_INT:
        if (tdm_param_descs[id].type == TDM_PTYPE_STRING)
            *(int *)buf = tdm_param_choice_index(id, v->s ? v->s : "");
        else
            *(int *)buf = (int)v->i;
        break;
    case TDM_MPIT_COUNT:
        *(long long *)buf = v->i;
        break;
    case TDM_MPIT_UNSIGNED_LONG_LONG:
        *(unsigned long long *)buf = (unsigned long long)v->i;
        break;
    case TDM_MPIT_CHAR:
        snprintf(buf, TDM_MPIT_STRLEN, "%s", v->s ? v->s : "");
        break;
    case TDM_MPIT_DOUBLE:
        break;
    }
    return TDM_MPIT_OK;
}

/* After a run-time write: the layers that cache the value take it. */
static void apply(tdm_param_id_t id) {
    if (id == TDM_PARAM_LOG) {
        for (int c = 0; c < TDM_LOG_COMP_COUNT; c++)
            tdm_log_levels[c] = TDM_LOG_WARN;
        tdm_log_configure(TDM_PARAM_S(LOG));
        return;
    }
    tdm_p2p_reconfigure();
    tdm_coll_reconfigure();
}

tdm_mpit_rc_t tdm_mpit_cvar_write(tdm_mpit_cvar_handle_t *h, const void *buf) {
    if (!live(h))
        return TDM_MPIT_ERR_INVALID_HANDLE;
    tdm_param_id_t id = (tdm_param_id_t)h->index;
    const tdm_param_desc_t *d = &tdm_param_descs[id];
    bool runs = d->scope == TDM_PSCOPE_LOCAL_RUN || d->scope == TDM_PSCOPE_JOB_RUN;
    if (d->scope == TDM_PSCOPE_LAUNCHER || d->scope == TDM_PSCOPE_WRAPPER) {
        tdm_info(MPIT, "MPI_T_cvar_write: TANDEM_%s is %s: it cannot be written", d->name,
                 d->scope == TDM_PSCOPE_LAUNCHER ? "set by mpirun" : "read by mpicc only");
        return TDM_MPIT_ERR_SET_NEVER;
    }
    if (!runs && tdm_mpit_phase != TDM_MPIT_BEFORE) {
        tdm_info(MPIT, "MPI_T_cvar_write: TANDEM_%s is read at MPI_Init: write it before MPI_Init",
                 d->name);
        return TDM_MPIT_ERR_SET_NOT_NOW;
    }
    tdm_param_val_t v;
    char text[TDM_MPIT_STRLEN], why[256];
    switch (cvar_type(id)) {
    case TDM_MPIT_INT: {
        int x = *(const int *)buf;
        if (d->type == TDM_PTYPE_STRING) {
            if (tdm_param_choice_name(id, x, text, sizeof(text)) != 0) {
                tdm_info(MPIT,
                         "MPI_T_cvar_write: %d is not an item of TANDEM_%s's enumeration "
                         "(0..%d)",
                         x, d->name, tdm_param_nchoices(id) - 1);
                return TDM_MPIT_ERR_INVALID;
            }
            v.s = text;
        } else if (d->type == TDM_PTYPE_BOOL && x != 0 && x != 1) {
            tdm_info(MPIT, "MPI_T_cvar_write: TANDEM_%s takes 0 or 1, not %d", d->name, x);
            return TDM_MPIT_ERR_INVALID;
        } else {
            v.i = x;
        }
        break;
    }
    case TDM_MPIT_COUNT:
        v.i = *(const long long *)buf;
        break;
    case TDM_MPIT_UNSIGNED_LONG_LONG: {
        unsigned long long x = *(const unsigned long long *)buf;
        v.i = x > (unsigned long long)LLONG_MAX ? -1 : (long long)x; /* -1: out of every range */
        break;
    }
    case TDM_MPIT_CHAR:
        snprintf(text, sizeof(text), "%s", (const char *)buf);
        v.s = text;
        break;
    default:
        return TDM_MPIT_ERR_INVALID;
    }
    if (tdm_param_set(id, &v, why, sizeof(why)) != 0) {
        tdm_info(MPIT, "MPI_T_cvar_write: the value for TANDEM_%s %s", d->name, why);
        return TDM_MPIT_ERR_INVALID;
    }
    /* once set up, the transport stays between MPI's users (sessions): a write
     * applies now, whether or not MPI has a user at this moment */
    if (runs && tdm_mpit_phase != TDM_MPIT_BEFORE)
        apply(id);
    tdm_debug(MPIT, "TANDEM_%s written through MPI_T", d->name);
    return TDM_MPIT_OK;
}
