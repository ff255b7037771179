/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Performance variables: each layer declares its counters where it keeps them
 * (src/p2p/pvars.def, src/coll/pvars.def, src/comm/pvars.def) as a table of
 * these descriptors; src/mpit numbers the tables one after another for MPI_T,
 * and the layers' TANDEM_*_STATS printers read the same descriptors, so every
 * figure is counted once and reads the same wherever it is shown.
 *
 * Keeping a counter is a plain increment by its owner; reading one is a plain
 * load (no lock: the library serialises its calls). Watermarks are kept by
 * the owner too (one compare where the level moves); MPI_T folds them into
 * its handles when a handle starts or resets. A timer is only kept while some
 * handle of it is started (`timing` non-zero): its clock reads are off
 * otherwise.
 */
#ifndef TDM_PVAR_H
#define TDM_PVAR_H

#include <stddef.h>
#include <stdint.h>

/* The classes of MPI-4.1 16.3.7, in the order of MPI_T_PVAR_CLASS_* (src/mpi checks it). */
typedef enum {
    TDM_PVC_STATE,         /* one of a set of states (TDM_PVT_INT, `items` names them) */
    TDM_PVC_LEVEL,         /* a resource's use now */
    TDM_PVC_SIZE,          /* a resource's fixed size */
    TDM_PVC_PERCENTAGE,    /* a resource's use, 0.0 .. 1.0 (TDM_PVT_DOUBLE) */
    TDM_PVC_HIGHWATERMARK, /* the highest level `watch` reached (the owner keeps `addr`) */
    TDM_PVC_LOWWATERMARK,  /* the lowest level `watch` reached */
    TDM_PVC_COUNTER,       /* events counted */
    TDM_PVC_AGGREGATE,     /* a sum of values (bytes) */
    TDM_PVC_TIMER,         /* seconds spent (TDM_PVT_DOUBLE) */
    TDM_PVC_GENERIC,       /* anything else */
} tdm_pvar_class_t;

typedef enum { TDM_PVT_U64, TDM_PVT_DOUBLE, TDM_PVT_INT } tdm_pvar_type_t;
typedef enum { TDM_PVB_NONE, TDM_PVB_COMM } tdm_pvar_bind_t;

typedef struct tdm_pvar_desc {
    const char *name;     /* tandem_<what> */
    const char *desc;     /* one paragraph for MPI_T, tandem_info and docs/tunables.md */
    const char *category; /* a category of src/mpit/categories.def */
    uint8_t cls;          /* tdm_pvar_class_t */
    uint8_t type;         /* tdm_pvar_type_t: uint64_t, double or int */
    uint8_t bind;         /* tdm_pvar_bind_t */
    uint8_t verbosity;    /* tdm_pverb_t (params.h) */
    uint16_t count;       /* elements (0: one) */
    uint16_t stride;      /* bytes between elements (0: the element's size) */
    /* where element i is: at addr + i * stride, or for a bound variable at
     * obj + obj_off + i * stride (obj: the object's counters), or get(i) */
    const void *addr;
    size_t obj_off;
    uint64_t (*get)(int i);
    double (*get_double)(int i);
    const uint64_t *watch; /* watermarks: the level they follow */
    unsigned *timing;      /* timers: started handles; the owner times while non-zero */
    const char *items;     /* STATE: the states' names, "a|b|c" (value i is the i-th) */
} tdm_pvar_desc_t;

/* The descriptor of one line of a layer's pvars.def (TDM_PVAR(_id, _cls, _verb, _cat,
 * _desc, fields...)) as the designated initializer of its entry `_ix` in the table. */
#define TDM_PVAR_DESC(_ix, _id, _cls, _verb, _cat, _desc, ...)                                     \
    [_ix] = {.name = "tandem_" #_id,                                                               \
             .desc = _desc,                                                                        \
             .category = _cat,                                                                     \
             .cls = TDM_PVC_##_cls,                                                                \
             .verbosity = TDM_PVERB_##_verb,                                                       \
             __VA_ARGS__},

/* Element i of a variable (obj: the bound object's counters, or NULL). */
uint64_t tdm_pvar_u64(const tdm_pvar_desc_t *d, const void *obj, int i);
double tdm_pvar_double(const tdm_pvar_desc_t *d, const void *obj, int i);
/* The sum of a variable's elements (arrays per size class, for the printers). */
uint64_t tdm_pvar_sum(const tdm_pvar_desc_t *d, const void *obj);
static inline int tdm_pvar_count(const tdm_pvar_desc_t *d) {
    return d->count ? d->count : 1;
}

/* Watermark upkeep by the owner of a level: one compare where it moves. */
static inline void tdm_pvar_level_up(uint64_t *level, uint64_t *high, uint64_t by) {
    *level += by;
    if (*level > *high)
        *high = *level;
}
static inline void tdm_pvar_level_down(uint64_t *level, uint64_t *low, uint64_t by) {
    *level -= by;
    if (*level < *low)
        *low = *level;
}

#endif
