/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_split_type by hardware, process set and directory, checked against a
 * reference the test computes from /sys itself (with other files than the
 * library reads where Linux has them: core_id, the caches' CPU lists):
 *  - MPI_COMM_TYPE_HW_GUIDED with every level hwloc names ("Machine", "Package",
 *    "Die", "NUMANode", "L3Cache", "L2Cache", "L1Cache", "Core", "PU" and aliases
 *    in any case), each rank bound to one CPU and then to all: the ranks whose
 *    CPUs lie in the same instance, ordered by key, MPI_COMM_NULL for a rank not
 *    within one instance, for unknown values, a missing key, MPI_INFO_NULL; ranks
 *    giving different values are never grouped; the hint says the value;
 *  - MPI_COMM_TYPE_HW_UNGUIDED: the largest level that splits the ranks (a strict
 *    subset for each), named in the info argument and the hint, MPI_COMM_NULL when
 *    none does; splitting again until MPI_COMM_NULL shrinks every time;
 *  - MPI_COMM_TYPE_RESOURCE_GUIDED with "mpi_pset_name" (mpi://WORLD, mpi://SELF,
 *    an unknown set) and with "mpi_hw_resource_type";
 *  - MPIX_COMM_TYPE_NEIGHBORHOOD with "nbhd_common_dirname" (one directory, one
 *    per parity, a missing one), "network_topo", and MPICH 4.0's value 4 for it;
 *  - an intercommunicator: the processes of each group that group together,
 *    connected (MPI_COMM_NULL when the other group has none).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tutil.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#define NLEVELS 9
static const char *const names[NLEVELS] = {"Machine", "Package", "Die",  "NUMANode", "L3Cache",
                                           "L2Cache", "L1Cache", "Core", "PU"};
static const char *const aliases[NLEVELS] = {"machine", "SOCKET",  "die",  "numanode", "l3cache",
                                             "L2CACHE", "l1cache", "CORE", "HWThread"};

static int size;
static cpu_set_t full; /* every CPU this process may use */

static long read_long(const char *path) {
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static int read_str(const char *path, char *buf, int len) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, len, f) != NULL;
    fclose(f);
    return ok ? 0 : -1;
}

static unsigned hash_str(const char *s) {
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h & 0x7fffffff;
}

/* The instance of level l holding cpu, as a non-negative number, or -1. */
static long instance(int cpu, int l) {
    char path[256], buf[4096];
    switch (l) {
    case 0:
        return 0;
    case 1:
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
                 cpu);
        return read_long(path);
    case 2: {
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
                 cpu);
        long p = read_long(path);
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/die_id", cpu);
        long d = read_long(path);
        return p < 0 || d < 0 ? -1 : p * 1000 + d;
    }
    case 3: {
        if (access("/sys/devices/system/node", F_OK) != 0)
            return 0;
        for (int n = 0; n < 1024; n++) {
            snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpu%d", n, cpu);
            if (access(path, F_OK) == 0)
                return n;
        }
        return -1;
    }
    case 4:
    case 5:
    case 6: {
        int want = 7 - l; /* L3, L2, L1 */
        for (int i = 0; i < 16; i++) {
            snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu,
                     i);
            long lev = read_long(path);
            if (lev < 0)
                break;
            snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu,
                     i);
            if (lev != want || read_str(path, buf, sizeof(buf)) || strncmp(buf, "Instr", 5) == 0)
                continue;
            snprintf(path, sizeof(path),
                     "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, i);
            return read_str(path, buf, sizeof(buf)) ? -1 : (long)hash_str(buf);
        }
        return -1;
    }
    case 7: {
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
                 cpu);
        long p = read_long(path);
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
        long c = read_long(path);
        return p < 0 || c < 0 ? -1 : p * 100000 + c;
    }
    default:
        return cpu;
    }
}

/* The instance of level l holding every CPU of the current affinity, or -1. */
static long my_instance(int l) {
    cpu_set_t set;
    sched_getaffinity(0, sizeof(set), &set);
    long inst = -2;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        long v = instance(cpu, l);
        if (v < 0 || (inst != -2 && v != inst))
            return -1;
        inst = v;
    }
    return inst < 0 ? -1 : inst;
}

/* c must hold exactly the ranks i with in[i] (world ranks, ordered by keys[] then
 * rank), or be MPI_COMM_NULL if !in[me]; frees it. */
static void expect(MPI_Comm c, const int *in, const int *keys, const char *what) {
    if (!in[t_rank]) {
        T_CHECK(c == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL", what);
        if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
        return;
    }
    T_CHECK(c != MPI_COMM_NULL, "%s: got MPI_COMM_NULL", what);
    if (c == MPI_COMM_NULL)
        return;
    int *m = malloc(sizeof(int) * (size_t)size), n = 0;
    for (int i = 0; i < size; i++) {
        if (!in[i])
            continue;
        int j = n++;
        while (j > 0 && keys[m[j - 1]] > keys[i]) {
            m[j] = m[j - 1];
            j--;
        }
        m[j] = i;
    }
    int csize = -1;
    MPI_Comm_size(c, &csize);
    T_CHECK(csize == n, "%s: size %d, expected %d", what, csize, n);
    if (csize == n) {
        int *got = malloc(sizeof(int) * (size_t)n);
        t_allgather_ints(c, &t_rank, 1, got);
        for (int i = 0; i < n; i++)
            T_CHECK(got[i] == m[i], "%s: rank %d is world %d, expected %d", what, i, got[i], m[i]);
        free(got);
    }
    free(m);
    MPI_Comm_free(&c);
}

static void expect_hint(MPI_Comm c, const char *key, const char *want, const char *what) {
    if (c == MPI_COMM_NULL)
        return;
    MPI_Info used;
    char v[256] = "";
    int flag = 0;
    MPI_Comm_get_info(c, &used);
    MPI_Info_get(used, key, 255, v, &flag);
    T_CHECK(flag && strcmp(v, want) == 0, "%s: hint %s = '%s', expected '%s'", what, key, v, want);
    MPI_Info_free(&used);
}

static MPI_Comm split(MPI_Comm comm, int type, int key, const char *k, const char *v) {
    MPI_Info info = MPI_INFO_NULL;
    if (k) {
        MPI_Info_create(&info);
        MPI_Info_set(info, k, v);
    }
    MPI_Comm c = MPI_COMM_NULL;
    T_OK(MPI_Comm_split_type(comm, type, key, info, &c));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return c;
}

/* HW_GUIDED at every level, and HW_UNGUIDED, in the current binding. */
static void hardware(const char *binding) {
    long inst[NLEVELS], *all = malloc(sizeof(long) * NLEVELS * (size_t)size);
    int *keys = malloc(sizeof(int) * (size_t)size), *in = malloc(sizeof(int) * (size_t)size);
    int iinst[NLEVELS], *iall = malloc(sizeof(int) * NLEVELS * (size_t)size);
    for (int l = 0; l < NLEVELS; l++)
        iinst[l] = (int)(inst[l] = my_instance(l));
    t_allgather_ints(MPI_COMM_WORLD, iinst, NLEVELS, iall);
    for (int i = 0; i < size * NLEVELS; i++)
        all[i] = iall[i];
    for (int i = 0; i < size; i++)
        keys[i] = (i * 7) % 5 - i;
    char what[128];
    for (int l = 0; l < NLEVELS; l++) {
        for (int i = 0; i < size; i++)
            in[i] = inst[l] >= 0 && all[i * NLEVELS + l] == inst[l];
        for (int a = 0; a < 2; a++) {
            const char *v = a ? aliases[l] : names[l];
            snprintf(what, sizeof(what), "%s: HW_GUIDED %s", binding, v);
            MPI_Comm c = split(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, keys[t_rank],
                               "mpi_hw_resource_type", v);
            expect_hint(c, "mpi_hw_resource_type", v, what);
            expect(c, in, keys, what);
        }
    }
    /* different values are not grouped: even ranks Machine, odd ranks Package */
    int mixed = t_rank % 2 ? 1 : 0;
    for (int i = 0; i < size; i++)
        in[i] = i % 2 == t_rank % 2 && all[i * NLEVELS + mixed] >= 0 && inst[mixed] >= 0 &&
                all[i * NLEVELS + mixed] == inst[mixed];
    snprintf(what, sizeof(what), "%s: HW_GUIDED Machine / Package by parity", binding);
    expect(split(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, keys[t_rank], "mpi_hw_resource_type",
                 names[mixed]),
           in, keys, what);

    /* HW_UNGUIDED: the reference level */
    int level = -1;
    for (int l = 0; l < NLEVELS && level < 0; l++) {
        int ok = 1, two = 0;
        for (int i = 0; i < size; i++) {
            ok &= all[i * NLEVELS + l] >= 0;
            two |= all[i * NLEVELS + l] != all[l];
        }
        if (ok && two)
            level = l;
    }
    for (int i = 0; i < size; i++)
        in[i] = level >= 0 && all[i * NLEVELS + level] == inst[level];
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Comm c;
    T_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, keys[t_rank], info, &c));
    snprintf(what, sizeof(what), "%s: HW_UNGUIDED (level %s)", binding,
             level >= 0 ? names[level] : "none");
    char v[64] = "";
    int flag = 0;
    MPI_Info_get(info, "mpi_hw_resource_type", 63, v, &flag);
    if (level >= 0) {
        T_CHECK(flag && strcmp(v, names[level]) == 0, "%s: info says '%s'", what, flag ? v : "");
        expect_hint(c, "mpi_hw_resource_type", names[level], what);
    } else {
        T_CHECK(!flag, "%s: info says '%s' without a communicator", what, v);
    }
    /* keep splitting: each time a strict subset, until MPI_COMM_NULL */
    MPI_Comm cur = c == MPI_COMM_NULL ? MPI_COMM_NULL : c;
    for (int depth = 0; cur != MPI_COMM_NULL && depth < 16; depth++) {
        MPI_Comm next;
        int before, after;
        MPI_Comm_size(cur, &before);
        T_OK(MPI_Comm_split_type(cur, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &next));
        if (next != MPI_COMM_NULL) {
            MPI_Comm_size(next, &after);
            T_CHECK(after < before, "%s: unguided split %d: %d -> %d", what, depth, before, after);
        }
        if (cur != c)
            MPI_Comm_free(&cur);
        cur = next;
    }
    if (cur != MPI_COMM_NULL && cur != c)
        MPI_Comm_free(&cur);
    expect(c, in, keys, what);
    /* the ranks that pass MPI_UNDEFINED meet the others all the same */
    T_OK(MPI_Comm_split_type(MPI_COMM_WORLD,
                             t_rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_HW_UNGUIDED, 0,
                             MPI_INFO_NULL, &c));
    if (t_rank == 0)
        T_CHECK(c == MPI_COMM_NULL, "%s: MPI_UNDEFINED beside HW_UNGUIDED", binding);
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    MPI_Info_free(&info);
    free(all);
    free(iall);
    free(keys);
    free(in);
}

static void resources(void) {
    int *keys = calloc((size_t)size, sizeof(int)), *in = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        in[i] = 1;
    MPI_Comm c =
        split(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, "mpi_pset_name", "mpi://WORLD");
    expect_hint(c, "mpi_pset_name", "mpi://WORLD", "pset mpi://WORLD");
    expect(c, in, keys, "RESOURCE_GUIDED mpi://WORLD");
    for (int i = 0; i < size; i++)
        in[i] = i == t_rank;
    expect(split(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, "mpi_pset_name", "mpi://SELF"),
           in, keys, "RESOURCE_GUIDED mpi://SELF");
    for (int i = 0; i < size; i++)
        in[i] = 0;
    expect(
        split(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, "mpi_pset_name", "mpi://nowhere"),
        in, keys, "RESOURCE_GUIDED with an unknown pset");
    expect(split(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, NULL, NULL), in, keys,
           "RESOURCE_GUIDED without info");
    for (int i = 0; i < size; i++)
        in[i] = 1;
    expect(split(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, "mpi_hw_resource_type",
                 "mpi_shared_memory"),
           in, keys, "RESOURCE_GUIDED mpi_shared_memory");

    /* directories */
    char mine[256];
    snprintf(mine, sizeof(mine), "/tmp/tandem-split-hw-%d-%s", (int)getppid(),
             t_rank % 2 ? "odd" : "even");
    mkdir(mine, 0700);
    t_barrier(MPI_COMM_WORLD);
    expect(split(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, 0, "nbhd_common_dirname", "/tmp"), in,
           keys, "NEIGHBORHOOD /tmp");
    /* MPICH 4.0's MPIX_COMM_TYPE_NEIGHBORHOOD was 4 */
    expect(split(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, "nbhd_common_dirname", "/tmp"),
           in, keys, "split type 4 with nbhd_common_dirname");
    for (int i = 0; i < size; i++)
        in[i] = i % 2 == t_rank % 2;
    c = split(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, 0, "nbhd_common_dirname", mine);
    expect_hint(c, "nbhd_common_dirname", mine, "NEIGHBORHOOD by parity");
    expect(c, in, keys, "NEIGHBORHOOD one directory per parity");
    for (int i = 0; i < size; i++)
        in[i] = 0;
    expect(split(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, 0, "nbhd_common_dirname",
                 "/nonexistent/tandem"),
           in, keys, "NEIGHBORHOOD with a missing directory");
    expect(split(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, 0, "network_topo", "switch_level:1"),
           in, keys, "NEIGHBORHOOD network_topo");
    t_barrier(MPI_COMM_WORLD);
    rmdir(mine);
    free(keys);
    free(in);
}

/* An intercommunicator of the two halves of MPI_COMM_WORLD. */
static void inter(void) {
    if (size < 2)
        return;
    int low = t_rank < size / 2;
    MPI_Comm local, ic, c;
    MPI_Comm_split(MPI_COMM_WORLD, low, t_rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 9, &ic);
    int lsize, rsize, flag = 0, n = -1, rn = -1;
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    T_OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    T_CHECK(c != MPI_COMM_NULL, "intercomm SHARED: MPI_COMM_NULL (one node)");
    if (c != MPI_COMM_NULL) {
        MPI_Comm_test_inter(c, &flag);
        MPI_Comm_size(c, &n);
        MPI_Comm_remote_size(c, &rn);
        T_CHECK(flag && n == lsize && rn == rsize, "intercomm SHARED: inter %d, sizes %d/%d", flag,
                n, rn);
        int x = low, y = -1;
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c);
        T_CHECK(y == (low ? 0 : rsize), "intercomm SHARED: allreduce %d", y);
        MPI_Comm_free(&c);
    }
    T_OK(MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    T_CHECK(c == MPI_COMM_NULL, "intercomm MPI_UNDEFINED");
    /* by PU: the ranks of the other half on my CPU, if any */
    long cpu = my_instance(8);
    int icpu = (int)cpu, *all = malloc(sizeof(int) * (size_t)size);
    t_allgather_ints(MPI_COMM_WORLD, &icpu, 1, all);
    int nl = 0, nr = 0;
    for (int i = 0; i < size; i++) {
        if (cpu < 0 || all[i] != icpu)
            continue;
        if ((i < size / 2) == low)
            nl++;
        else
            nr++;
    }
    c = split(ic, MPI_COMM_TYPE_HW_GUIDED, 0, "mpi_hw_resource_type", "PU");
    if (nr == 0) {
        T_CHECK(c == MPI_COMM_NULL, "intercomm PU: a communicator with no remote rank on my CPU");
    } else {
        T_CHECK(c != MPI_COMM_NULL, "intercomm PU: MPI_COMM_NULL");
        if (c != MPI_COMM_NULL) {
            MPI_Comm_size(c, &n);
            MPI_Comm_remote_size(c, &rn);
            T_CHECK(n == nl && rn == nr, "intercomm PU: sizes %d/%d, expected %d/%d", n, rn, nl,
                    nr);
        }
    }
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    free(all);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv) {
    t_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* every CPU the process may use: the online ones, if the kernel lets it */
    CPU_ZERO(&full);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 0; i < ncpu && i < CPU_SETSIZE; i++)
        CPU_SET(i, &full);
    if (sched_setaffinity(0, sizeof(full), &full) != 0)
        sched_getaffinity(0, sizeof(full), &full);
    hardware("unbound");
    inter();
    /* bound: rank r on the (r mod n)-th CPU */
    int cpus[CPU_SETSIZE], n = 0;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &full))
            cpus[n++] = i;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[t_rank % n], &one);
    T_CHECK(sched_setaffinity(0, sizeof(one), &one) == 0, "cannot bind to cpu %d",
            cpus[t_rank % n]);
    hardware("bound");
    inter();
    resources();
    return t_finish();
}
