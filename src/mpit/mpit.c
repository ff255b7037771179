/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_T's life (nested init/fini, MPI's phase), strings, enumerations and categories. */
#include "mpit_impl.h"
#include "../p2p/p2p.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

tdm_mpit_phase_t tdm_mpit_phase = TDM_MPIT_BEFORE;
static int refs; /* MPI_T_init_thread calls not yet finalized; under mpit_lock */

/* a real mutex even unthreaded (tdm_threaded is MPI's level, not MPI_T's) */
static pthread_mutex_t mpit_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void tdm_mpit_lock(void) {
    /* event delivery takes this lock inside engine sections (base/lock.h, the bias) */
    tdm_lock_bias_revoke();
    pthread_mutex_lock(&mpit_lock);
}
void tdm_mpit_unlock(void) {
    pthread_mutex_unlock(&mpit_lock);
}

void tdm_mpit_set_phase(tdm_mpit_phase_t phase) {
    tdm_mpit_phase = phase;
}

static void enums_init(void);

tdm_mpit_rc_t tdm_mpit_init(void) {
    /* the tunables MPI_T shows are read now if MPI_Init has not read them yet */
    tdm_params_init();
    enums_init();
    if (refs++ == 0) {
        tdm_mpit_pvar_init();
        tdm_mpit_event_init();
    }
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_fini(void) {
    if (refs == 0)
        return TDM_MPIT_ERR_NOT_INITIALIZED;
    if (--refs == 0) {
        tdm_mpit_event_fini();
        tdm_mpit_pvar_fini();
        tdm_mpit_cvar_fini();
    }
    return TDM_MPIT_OK;
}

bool tdm_mpit_ready(void) {
    return refs > 0;
}

void tdm_mpit_strout(char *dst, int *len, const char *src) {
    if (!len)
        return;
    int n = (int)strlen(src);
    if (dst && *len > 0) {
        int k = n < *len - 1 ? n : *len - 1;
        memcpy(dst, src, (size_t)k);
        dst[k] = '\0';
    }
    *len = n + 1;
}

/* ---- enumerations ---- */

/* one per STRING tunable with words, and the named ones of pvars and events */
#define EXTRA_ENUMS 4
static tdm_mpit_enum_t enums[TDM_PARAM_COUNT + EXTRA_ENUMS];
static int nenums;
static int param_enum[TDM_PARAM_COUNT]; /* index + 1 into enums, 0: none */

static char *dup_or_die(const char *s) {
    char *d = strdup(s);
    if (!d) {
        tdm_error(MPIT, "out of memory building the MPI_T enumerations");
        abort();
    }
    return d;
}

static void enum_add(const char *name, int n, const char *const *items, const int *values) {
    tdm_mpit_enum_t *e = &enums[nenums++];
    e->name = name;
    e->n = n;
    e->items = calloc((size_t)n, sizeof(*e->items));
    e->values = calloc((size_t)n, sizeof(*e->values));
    if (!e->items || !e->values) {
        tdm_error(MPIT, "out of memory building the MPI_T enumerations");
        abort();
    }
    for (int i = 0; i < n; i++) {
        e->items[i] = dup_or_die(items[i]);
        e->values[i] = values ? values[i] : i;
    }
}

static void enums_init(void) {
    if (nenums)
        return;
    for (int p = 0; p < TDM_PARAM_COUNT; p++) {
        int n = tdm_param_nchoices((tdm_param_id_t)p);
        if (n == 0)
            continue;
        const char *items[16];
        char words[16][64];
        for (int i = 0; i < n && i < 16; i++) {
            tdm_param_choice_name((tdm_param_id_t)p, i, words[i], sizeof(words[i]));
            items[i] = words[i];
        }
        char name[96];
        snprintf(name, sizeof(name), "TANDEM_%s", tdm_param_descs[p].name);
        enum_add(dup_or_die(name), n < 16 ? n : 16, items, NULL);
        param_enum[p] = nenums;
    }
    static const char *const state[] = {"not_initialized", "initialized", "finalized"};
    enum_add("tandem_library_state", 3, state, NULL);
    static const char *const kinds[] = {"exchange", "one_way", "eager_range"};
    enum_add("tandem_adapt_kind", 3, kinds, NULL);
    static const char *const reasons[] = {"probe", "copy_failed", "peer"};
    enum_add("tandem_cma_off_reason", 3, reasons, NULL);
    int np = tdm_p2p_proto_count();
    const char *protos[16];
    for (int i = 0; i < np && i < 16; i++)
        protos[i] = tdm_p2p_proto_word(i);
    enum_add("tandem_rndv_protocol", np < 16 ? np : 16, protos, NULL);
}

bool tdm_mpit_enum_valid(const tdm_mpit_enum_t *e) {
    return e >= enums && e < enums + nenums;
}

void tdm_mpit_enum_info(const tdm_mpit_enum_t *e, int *num, const char **name_p) {
    *num = e->n;
    *name_p = e->name;
}

tdm_mpit_rc_t tdm_mpit_enum_item(const tdm_mpit_enum_t *e, int i, int *value, const char **name_p) {
    if (i < 0 || i >= e->n)
        return TDM_MPIT_ERR_INVALID_INDEX; /* MPI-4: no longer MPI_T_ERR_INVALID_ITEM */
    *value = e->values[i];
    *name_p = e->items[i];
    return TDM_MPIT_OK;
}

tdm_mpit_enum_t *tdm_mpit_enum_named(const char *name) {
    if (!name || !*name)
        return NULL;
    for (int i = 0; i < nenums; i++)
        if (!strcmp(enums[i].name, name))
            return &enums[i];
    return NULL;
}

tdm_mpit_enum_t *tdm_mpit_enum_of_param(tdm_param_id_t id) {
    return param_enum[id] ? &enums[param_enum[id] - 1] : NULL;
}

/* ---- categories: 0 is "tandem", the parent of params.def's categories (1..) ---- */

int tdm_mpit_cat_num(void) {
    return 1 + TDM_PCAT_COUNT;
}

int tdm_mpit_cat_of(const char *name) {
    for (int c = 0; c < TDM_PCAT_COUNT; c++)
        if (!strcmp(tdm_param_cats[c].name, name))
            return 1 + c;
    return -1;
}

/* Members of category c: 'c' cvars, 'p' pvars, 's' subcategories, 'e' events.
 * Writes at most len indices (indices NULL: counts only); returns the count. */
static int members(int c, char which, int len, int *indices) {
    int n = 0;
#define ADD(_i)                                                                                    \
    do {                                                                                           \
        if (indices && n < len)                                                                    \
            indices[n] = (_i);                                                                     \
        n++;                                                                                       \
    } while (0)
    switch (which) {
    case 's':
        if (c == 0)
            for (int k = 0; k < TDM_PCAT_COUNT; k++)
                ADD(1 + k);
        break;
    case 'c':
        for (int i = 0; c > 0 && i < TDM_PARAM_COUNT; i++)
            if ((int)tdm_param_category((tdm_param_id_t)i) == c - 1)
                ADD(i);
        break;
    case 'p':
        for (int i = 0; c > 0 && i < tdm_mpit_pvar_num(); i++)
            if (tdm_mpit_cat_of(tdm_mpit_pvar_desc(i)->category) == c)
                ADD(i);
        break;
    case 'e':
        for (int i = 0; c > 0 && i < TDM_EV_COUNT; i++)
            if (tdm_mpit_cat_of(tdm_event_descs[i].category) == c)
                ADD(i);
        break;
    }
#undef ADD
    return n;
}

tdm_mpit_rc_t tdm_mpit_cat_info(int c, tdm_mpit_cat_info_t *out) {
    if (c < 0 || c >= tdm_mpit_cat_num())
        return TDM_MPIT_ERR_INVALID_INDEX;
    out->name = c == 0 ? "tandem" : tdm_param_cats[c - 1].name;
    out->desc = c == 0 ? "Tandem MPI: every variable and event, by the part of the library "
                         "they belong to"
                       : tdm_param_cats[c - 1].desc;
    out->ncvars = members(c, 'c', 0, NULL);
    out->npvars = members(c, 'p', 0, NULL);
    out->ncats = members(c, 's', 0, NULL);
    out->nevents = members(c, 'e', 0, NULL);
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_cat_index(const char *name, int *c) {
    if (!strcmp(name, "tandem")) {
        *c = 0;
        return TDM_MPIT_OK;
    }
    int k = tdm_mpit_cat_of(name);
    if (k < 0)
        return TDM_MPIT_ERR_INVALID_NAME;
    *c = k;
    return TDM_MPIT_OK;
}

tdm_mpit_rc_t tdm_mpit_cat_members(int c, char which, int len, int *indices) {
    if (c < 0 || c >= tdm_mpit_cat_num())
        return TDM_MPIT_ERR_INVALID_INDEX;
    members(c, which, len, indices);
    return TDM_MPIT_OK;
}
