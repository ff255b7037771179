/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank whose launcher left it unbound binds itself to one CPU (TANDEM_BIND). */
#include "boot.h"
#include "../base/log.h"
#include "../base/params.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tdm_boot_cpulist_read(const char *path, cpu_set_t *set_p) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    cpu_set_t set;
    CPU_ZERO(&set);
    for (char *s = buf; *s && *s != '\n';) {
        char *end;
        long lo = strtol(s, &end, 10), hi = lo;
        if (end == s || lo < 0)
            return -1;
        if (*end == '-')
            hi = strtol(end + 1, &end, 10);
        for (long c = lo; c <= hi && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &set);
        s = *end == ',' ? end + 1 : end;
    }
    *set_p = set;
    return 0;
}

/* The CPUs any process of this machine (or container) may run on: its cpuset cgroup's,
 * else the online ones. A launcher that bound the process gave it fewer. */
static int allowed_cpus(cpu_set_t *set_p) {
    char line[512], path[640];
    cpu_set_t online, set;
    if (tdm_boot_cpulist_read("/sys/devices/system/cpu/online", &online) != 0)
        return -1;
    /* the process's own cgroup first: a container's cpuset is narrower than the machine's,
     * and the file of the cgroup root does not exist under cgroup v2 */
    FILE *f = fopen("/proc/self/cgroup", "r");
    bool found = false;
    while (f && !found && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        /* "id:controllers:path"; cgroup v2's line names no controller */
        char *ctrl = strchr(line, ':'), *cg = ctrl ? strchr(ctrl + 1, ':') : NULL;
        if (!cg)
            continue;
        *cg++ = 0;
        ctrl++;
        if (!*ctrl)
            snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpuset.cpus.effective", cg);
        else if (!strcmp(ctrl, "cpuset") || !strncmp(ctrl, "cpuset,", 7))
            snprintf(path, sizeof(path), "/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus", cg);
        else
            continue;
        found = tdm_boot_cpulist_read(path, &set) == 0 && CPU_COUNT(&set) > 0;
    }
    if (f)
        fclose(f);
    if (found)
        CPU_AND(&online, &online, &set);
    *set_p = online;
    return 0;
}

const char *tdm_boot_bind_reason(const tdm_boot_info_t *info) {
    switch (info->bind) {
    case TDM_BOOT_BIND_SELF:
        return "bound by Tandem: its launcher left it unbound";
    case TDM_BOOT_BIND_MPIRUN:
        return "placed by Tandem's mpirun (--bind-to)";
    case TDM_BOOT_BIND_LAUNCHER:
        return "bound by its launcher";
    case TDM_BOOT_BIND_ALONE:
        return "not bound: the only rank of the job on this machine";
    case TDM_BOOT_BIND_OVERSUBSCRIBED:
        return "not bound: the job's ranks on this machine outnumber its CPUs";
    case TDM_BOOT_BIND_FAILED:
        return "not bound: binding failed";
    default:
        return "not bound: TANDEM_BIND=none";
    }
}

bool tdm_boot_bind_unbound(tdm_boot_info_t *info) {
    cpu_set_t mask, allowed, both;
    if (strcmp(TDM_PARAM_S(BIND), "none") == 0) {
        info->bind = TDM_BOOT_BIND_OFF;
        return false;
    }
    if (sched_getaffinity(0, sizeof(mask), &mask) != 0 || allowed_cpus(&allowed) != 0) {
        tdm_warn(BOOT, "rank %d: cannot read its CPU mask or the machine's CPUs (%m): left unbound",
                 info->rank);
        info->bind = TDM_BOOT_BIND_FAILED;
        return false;
    }
    CPU_AND(&both, &mask, &allowed);
    if (!CPU_EQUAL(&both, &allowed)) {
        info->bind = TDM_BOOT_BIND_LAUNCHER;
        return false;
    }
    return true;
}

int tdm_boot_bind_domain(const cpu_set_t *mask, int rank, int size, cpu_set_t *out) {
    int n = CPU_COUNT(mask), k = size > 0 ? n / size : 0;
    CPU_ZERO(out);
    if (k == 0 || rank < 0 || rank >= size)
        return 0;
    for (int c = 0, seen = 0; c < CPU_SETSIZE && seen < (rank + 1) * k; c++)
        if (CPU_ISSET(c, mask) && seen++ >= rank * k)
            CPU_SET(c, out);
    return k;
}

void tdm_boot_bind(tdm_boot_info_t *info, int machine_rank, int machine_size) {
    cpu_set_t mask, domain;
    if (machine_size < 2) {
        info->bind = TDM_BOOT_BIND_ALONE;
        return;
    }
    if (sched_getaffinity(0, sizeof(mask), &mask) != 0) {
        tdm_warn(BOOT, "rank %d: cannot read its CPU mask (%m): left unbound", info->rank);
        info->bind = TDM_BOOT_BIND_FAILED;
        return;
    }
    if (tdm_boot_bind_domain(&mask, machine_rank, machine_size, &domain) == 0) {
        info->bind = TDM_BOOT_BIND_OVERSUBSCRIBED;
        return;
    }
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &domain))
            first = c;
    if (sched_setaffinity(0, sizeof(domain), &domain) != 0) {
        tdm_warn(BOOT,
                 "rank %d: binding itself to %d cpus from cpu %d failed (%m): left unbound "
                 "(TANDEM_BIND=none keeps the launcher's placement)",
                 info->rank, CPU_COUNT(&domain), first);
        info->bind = TDM_BOOT_BIND_FAILED;
        return;
    }
    info->bind = TDM_BOOT_BIND_SELF;
    tdm_info(BOOT, "rank %d bound itself to %d cpus from cpu %d (rank %d of %d on this machine)",
             info->rank, CPU_COUNT(&domain), first, machine_rank, machine_size);
}
