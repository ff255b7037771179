/* SPDX-License-Identifier: BSD-3-Clause */
/* State shared by the files of src/mpit; not for other layers. */
#ifndef TDM_MPIT_IMPL_H
#define TDM_MPIT_IMPL_H

#include "mpit.h"
#include "../base/event.h"
#include "../base/log.h"
#include "../base/params.h"
#include "../base/pvar.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Is `x` on the list from `head`, whose objects link through the pointer at `next_off`?
 * A handle a tool passes may be stale: it is looked for, never followed. */
static inline bool tdm_mpit_on_list(const void *head, const void *x, size_t next_off) {
    for (const char *it = head; it;) {
        if (it == (const char *)x)
            return true;
        memcpy(&it, it + next_off, sizeof(it));
    }
    return false;
}

extern tdm_mpit_phase_t tdm_mpit_phase;

struct tdm_mpit_enum {
    const char *name;
    int n;
    const char **items;
    int *values;
};

/* mpit.c: enumerations, built once per process and never freed (a tool may
 * keep an MPI_T_enum across MPI_T_finalize) */
tdm_mpit_enum_t *tdm_mpit_enum_named(const char *name);
tdm_mpit_enum_t *tdm_mpit_enum_of_param(tdm_param_id_t id);
/* the category a registry names (-1: none) */
int tdm_mpit_cat_of(const char *name);

/* Verbosity of a tdm_pverb_t: the BASIC level of user, tuner or developer. */
static inline int tdm_mpit_verbosity(int pverb) {
    return pverb * 3;
}

/* pvar.c, cvar.c, event.c: drop everything at the last MPI_T_finalize */
void tdm_mpit_pvar_fini(void);
void tdm_mpit_cvar_fini(void);
void tdm_mpit_event_init(void);
void tdm_mpit_event_fini(void);
/* pvar.c: the registry, built at the first MPI_T_init_thread */
void tdm_mpit_pvar_init(void);

#endif
