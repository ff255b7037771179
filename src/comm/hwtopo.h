/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hardware resources for MPI_Comm_split_type (hwtopo.c): the levels this
 * machine's /sys describes, largest first, and which instance of each holds the
 * calling process.
 */
#ifndef TDM_COMM_HWTOPO_H
#define TDM_COMM_HWTOPO_H

#include <stdbool.h>
#include <stdint.h>

typedef enum tdm_hw_level {
    TDM_HW_MACHINE,
    TDM_HW_PACKAGE,
    TDM_HW_DIE,
    TDM_HW_NUMA,
    TDM_HW_L3,
    TDM_HW_L2,
    TDM_HW_L1,
    TDM_HW_CORE,
    TDM_HW_PU,
    TDM_HW_LEVELS
} tdm_hw_level_t;

/* The level a resource type names (hwloc's names, "Machine" .. "PU", and the
 * usual aliases, any case), or -1. */
int tdm_comm_hw_level(const char *name);
/* hwloc's name of a level. */
const char *tdm_comm_hw_name(int level);
/* For each level, the instance holding every CPU the process may run on now (a
 * number >= 0, the same in every process of the node), or -1: its CPUs lie in
 * several instances, or Linux does not describe the level. */
void tdm_comm_hw_instances(int64_t inst[TDM_HW_LEVELS]);

#endif
