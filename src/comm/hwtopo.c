/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hardware resources MPI_Comm_split_type can split by, as Linux describes
 * them in /sys/devices/system (the names are hwloc's, which MPI-4.1's
 * "mpi_hw_resource_type" examples use). A process belongs to one instance of a
 * resource when every CPU it may run on (its affinity when asked) lies in that
 * instance; an unbound process on a machine of two cores belongs to no Core, but
 * to the Machine and, with one package, to the Package.
 *
 * Instances are named by numbers that are the same in every process of the node:
 * the package and die ids, the NUMA node's number, and for caches and cores the
 * lowest CPU that shares them.
 */
#include "hwtopo.h"
#include "../base/log.h"
#include "../boot/boot.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SYS_CPU "/sys/devices/system/cpu"
#define SYS_NODE "/sys/devices/system/node"

static const struct {
    const char *name;
    const char *alias[3];
} level_names[TDM_HW_LEVELS] = {
    [TDM_HW_MACHINE] = {"Machine", {"node", NULL}},
    [TDM_HW_PACKAGE] = {"Package", {"socket", NULL}},
    [TDM_HW_DIE] = {"Die", {NULL}},
    [TDM_HW_NUMA] = {"NUMANode", {"numa", NULL}},
    [TDM_HW_L3] = {"L3Cache", {"L3", NULL}},
    [TDM_HW_L2] = {"L2Cache", {"L2", NULL}},
    [TDM_HW_L1] = {"L1Cache", {"L1", "L1dCache", NULL}},
    [TDM_HW_CORE] = {"Core", {NULL}},
    [TDM_HW_PU] = {"PU", {"HWThread", "hwthread", NULL}},
};

int tdm_comm_hw_level(const char *name) {
    for (int l = 0; l < TDM_HW_LEVELS; l++) {
        if (strcasecmp(name, level_names[l].name) == 0)
            return l;
        for (int a = 0; a < 3 && level_names[l].alias[a]; a++) {
            if (strcasecmp(name, level_names[l].alias[a]) == 0)
                return l;
        }
    }
    return -1;
}

const char *tdm_comm_hw_name(int level) {
    return level_names[level].name;
}

/* The first number in a sysfs file (an id, or the first CPU of a list); -1 when
 * the file is missing. */
static long read_first(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long v = -1;
    if (fscanf(f, "%ld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

/* Does the CPU list in `path` ("0-3,8,10-11") hold cpu? */
static bool list_has(const char *path, int cpu) {
    cpu_set_t set;
    return cpu >= 0 && cpu < CPU_SETSIZE && tdm_boot_cpulist_read(path, &set) == 0 &&
           CPU_ISSET(cpu, &set);
}

/* The cache of `level` (1..3) that serves cpu: its lowest CPU; -1 if none. */
static long cache_of(int cpu, int level) {
    char path[256];
    for (int idx = 0; idx < 16; idx++) {
        snprintf(path, sizeof(path), SYS_CPU "/cpu%d/cache/index%d/level", cpu, idx);
        long l = read_first(path);
        if (l < 0)
            break;
        if (l != level)
            continue;
        snprintf(path, sizeof(path), SYS_CPU "/cpu%d/cache/index%d/type", cpu, idx);
        FILE *f = fopen(path, "r");
        char type[32] = "";
        if (f) {
            if (!fgets(type, sizeof(type), f))
                type[0] = '\0';
            fclose(f);
        }
        if (strncmp(type, "Instruction", 11) == 0)
            continue;
        snprintf(path, sizeof(path), SYS_CPU "/cpu%d/cache/index%d/shared_cpu_list", cpu, idx);
        return read_first(path);
    }
    return -1;
}

/* The instance of `level` that holds cpu, or -1 when Linux does not say. */
static long instance_of(int cpu, int level) {
    char path[256];
    switch (level) {
    case TDM_HW_MACHINE:
        return 0;
    case TDM_HW_PACKAGE:
        snprintf(path, sizeof(path), SYS_CPU "/cpu%d/topology/physical_package_id", cpu);
        return read_first(path);
    case TDM_HW_DIE: {
        snprintf(path, sizeof(path), SYS_CPU "/cpu%d/topology/physical_package_id", cpu);
        long pkg = read_first(path);
        snprintf(path, sizeof(path), SYS_CPU "/cpu%d/topology/die_id", cpu);
        long die = read_first(path);
        return pkg < 0 || die < 0 ? -1 : pkg << 16 | die;
    }
    case TDM_HW_NUMA: {
        snprintf(path, sizeof(path), SYS_NODE "/online");
        if (read_first(path) < 0)
            return 0; /* no NUMA description: the machine is one node */
        for (int node = 0; node < 4096; node++) {
            snprintf(path, sizeof(path), SYS_NODE "/node%d/cpulist", node);
            if (list_has(path, cpu))
                return node;
        }
        return -1;
    }
    case TDM_HW_L3:
        return cache_of(cpu, 3);
    case TDM_HW_L2:
        return cache_of(cpu, 2);
    case TDM_HW_L1:
        return cache_of(cpu, 1);
    case TDM_HW_CORE: {
        snprintf(path, sizeof(path), SYS_CPU "/cpu%d/topology/core_cpus_list", cpu);
        long first = read_first(path);
        if (first < 0) {
            snprintf(path, sizeof(path), SYS_CPU "/cpu%d/topology/thread_siblings_list", cpu);
            first = read_first(path);
        }
        return first;
    }
    case TDM_HW_PU:
        return cpu;
    default:
        return -1;
    }
}

void tdm_comm_hw_instances(int64_t inst[TDM_HW_LEVELS]) {
    cpu_set_t set;
    for (int l = 0; l < TDM_HW_LEVELS; l++)
        inst[l] = -2; /* no CPU seen yet */
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        tdm_warn(COMM, "sched_getaffinity failed (%m): no hardware resource holds this process");
        for (int l = 0; l < TDM_HW_LEVELS; l++)
            inst[l] = l == TDM_HW_MACHINE ? 0 : -1;
        return;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        for (int l = 0; l < TDM_HW_LEVELS; l++) {
            if (inst[l] == -1)
                continue;
            long v = instance_of(cpu, l);
            if (v < 0 || (inst[l] != -2 && inst[l] != v))
                inst[l] = -1; /* undescribed, or the CPUs lie in several instances */
            else
                inst[l] = v;
        }
    }
    for (int l = 0; l < TDM_HW_LEVELS; l++) {
        if (inst[l] == -2)
            inst[l] = -1;
    }
}
