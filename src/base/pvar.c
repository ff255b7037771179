/* SPDX-License-Identifier: BSD-3-Clause */
#include "pvar.h"

static const void *elem(const tdm_pvar_desc_t *d, const void *obj, int i, size_t size) {
    size_t stride = d->stride ? d->stride : size;
    const char *base = d->bind != TDM_PVB_NONE ? (const char *)obj + d->obj_off : d->addr;
    return base + (size_t)i * stride;
}

uint64_t tdm_pvar_u64(const tdm_pvar_desc_t *d, const void *obj, int i) {
    if (d->get)
        return d->get(i);
    if (d->bind != TDM_PVB_NONE && !obj)
        return 0;
    if (d->type == TDM_PVT_INT)
        return (uint64_t)(int64_t)__atomic_load_n((const int *)elem(d, obj, i, sizeof(int)),
                                                  __ATOMIC_RELAXED);
    if (d->type == TDM_PVT_DOUBLE)
        return (uint64_t) * (const double *)elem(d, obj, i, sizeof(double));
    /* a relaxed load: counters are written by other threads (base/lock.h) */
    return __atomic_load_n((const uint64_t *)elem(d, obj, i, sizeof(uint64_t)), __ATOMIC_RELAXED);
}

double tdm_pvar_double(const tdm_pvar_desc_t *d, const void *obj, int i) {
    if (d->get_double)
        return d->get_double(i);
    if (d->type != TDM_PVT_DOUBLE)
        return (double)tdm_pvar_u64(d, obj, i);
    if (d->bind != TDM_PVB_NONE && !obj)
        return 0;
    return *(const double *)elem(d, obj, i, sizeof(double));
}

uint64_t tdm_pvar_sum(const tdm_pvar_desc_t *d, const void *obj) {
    uint64_t s = 0;
    for (int i = 0; i < tdm_pvar_count(d); i++)
        s += tdm_pvar_u64(d, obj, i);
    return s;
}
