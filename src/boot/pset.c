/* SPDX-License-Identifier: BSD-3-Clause */
/* Process sets: the two the standard mandates, both known from the launch alone. */
#include "boot.h"

#include <strings.h>

static const char *const pset_names[] = {"mpi://WORLD", "mpi://SELF"};
#define NPSETS ((int)(sizeof(pset_names) / sizeof(pset_names[0])))

int tdm_boot_pset_count(void) {
    return NPSETS;
}

tdm_boot_pset_t tdm_boot_pset(const tdm_boot_info_t *info, int i) {
    if (i == 0)
        return (tdm_boot_pset_t){.name = pset_names[0], .first = 0, .count = info->size};
    return (tdm_boot_pset_t){.name = pset_names[1], .first = info->rank, .count = 1};
}

int tdm_boot_pset_find(const char *name) {
    for (int i = 0; i < NPSETS; i++) {
        if (strcasecmp(name, pset_names[i]) == 0)
            return i;
    }
    return -1;
}
