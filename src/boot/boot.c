/* SPDX-License-Identifier: BSD-3-Clause */
#include "boot.h"
#include "pmi.h"
#include "pmix.h"
#include "../base/log.h"
#include "../base/params.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Is the memfd `fd` the segment of the job the variables name? NULL when it is, else why
 * not. Nothing here writes, resizes or maps the descriptor. */
static const char *check_segment(int fd, const tdm_boot_info_t *info, bool sealed,
                                 tdm_boot_stamp_t *stamp_p, bool *foreign_p, char *why,
                                 size_t len) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0) {
        snprintf(why, len, "descriptor %d (TANDEM_SHM_FD) is not open", fd);
        return why;
    }
    if ((fl & O_ACCMODE) != O_RDWR) {
        snprintf(why, len, "descriptor %d (TANDEM_SHM_FD) is not open for reading and writing", fd);
        return why;
    }
    char path[64], target[256], want[sizeof(target)];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    target[n >= 0 ? n : 0] = 0;
    /* a Tandem segment this library cannot prove: most likely from the mpirun of another
     * Tandem version, which must not go unnoticed (cleared when the checks pass) */
    *foreign_p = !strncmp(target, "/memfd:tandem-shm", 17);
    struct stat st;
    /* only a memfd (or another tmpfs file) has seals; mpirun's is sealed against shrinking */
    int seals = fcntl(fd, F_GET_SEALS);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (sealed && seals != (F_SEAL_SHRINK | F_SEAL_SEAL))) {
        snprintf(why, len, "descriptor %d (TANDEM_SHM_FD) is not a memfd sealed by mpirun", fd);
        return why;
    }
    /* without /proc the seals and the stamp decide alone */
    snprintf(want, sizeof(want), "/memfd:" TDM_BOOT_MEMFD_NAME "%s (deleted)", info->jobid);
    if (sealed && n >= 0 && strcmp(target, want) != 0) {
        snprintf(why, len, "descriptor %d (TANDEM_SHM_FD) is %.120s, not this job's memfd", fd,
                 target);
        return why;
    }
    tdm_boot_stamp_t stamp;
    if ((size_t)st.st_size < tdm_boot_stamp_bytes(info->size) ||
        pread(fd, &stamp, sizeof(stamp), 0) != (ssize_t)sizeof(stamp) ||
        stamp.magic != TDM_BOOT_STAMP_MAGIC || stamp.version != TDM_BOOT_STAMP_VERSION) {
        snprintf(why, len, "descriptor %d (TANDEM_SHM_FD) has no launcher stamp", fd);
        return why;
    }
    stamp.jobid[sizeof(stamp.jobid) - 1] = 0;
    long page = sysconf(_SC_PAGESIZE);
    if (strcmp(stamp.jobid, info->jobid) != 0 || stamp.size != (uint32_t)info->size ||
        stamp.seg_offset < tdm_boot_stamp_bytes(info->size) ||
        (page > 0 && stamp.seg_offset % (uint64_t)page) ||
        stamp.seg_offset > (uint64_t)st.st_size) {
        snprintf(why, len, "the segment on descriptor %d is job %.63s of %u ranks, not this one",
                 fd, stamp.jobid, stamp.size);
        return why;
    }
    *stamp_p = stamp;
    *foreign_p = false;
    return NULL;
}

/* Is `ctl` the control pipe mpirun made for this rank? */
static const char *check_ctl(int shm_fd, int ctl, const tdm_boot_info_t *info, char *why,
                             size_t len) {
    struct stat st;
    tdm_boot_slot_t slot;
    int fl = fcntl(ctl, F_GETFL);
    off_t at = (off_t)(sizeof(tdm_boot_stamp_t) + (size_t)info->rank * sizeof(slot));
    if (fl < 0 || (fl & O_ACCMODE) != O_WRONLY || fstat(ctl, &st) != 0 || !S_ISFIFO(st.st_mode) ||
        pread(shm_fd, &slot, sizeof(slot), at) != (ssize_t)sizeof(slot) ||
        slot.ctl_ino != (uint64_t)st.st_ino) {
        snprintf(why, len, "descriptor %d (TANDEM_CTL_FD) is not mpirun's control pipe of rank %d",
                 ctl, info->rank);
        return why;
    }
    return NULL;
}

/* Take the rank in the stamp: a process that holds the job's descriptors without being the
 * one mpirun started (they were passed on to a child) finds it taken. */
static const char *claim_rank(int shm_fd, const tdm_boot_info_t *info, char *why, size_t len) {
    size_t bytes = tdm_boot_stamp_bytes(info->size);
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
    if (map == MAP_FAILED) {
        snprintf(why, len, "mapping the launcher stamp failed: %s", strerror(errno));
        return why;
    }
    tdm_boot_slot_t *slot =
        (tdm_boot_slot_t *)((char *)map + sizeof(tdm_boot_stamp_t)) + info->rank;
    int32_t expected = 0, me = (int32_t)getpid();
    bool taken = !__atomic_compare_exchange_n(&slot->claimed, &expected, me, false,
                                              __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
                 expected != me;
    munmap(map, bytes);
    if (taken) {
        snprintf(why, len, "rank %d of the job was taken by pid %d", info->rank, (int)expected);
        return why;
    }
    return NULL;
}

/* The launch variables are for this process only: a program it starts must not find them. */
static void forget_launch_vars(void) {
    for (int i = 0; i < TDM_PARAM_COUNT; i++) {
        if (tdm_param_descs[i].scope != TDM_PSCOPE_LAUNCHER)
            continue;
        char var[128];
        snprintf(var, sizeof(var), "TANDEM_%s", tdm_param_descs[i].name);
        unsetenv(var);
    }
}

static int make_singleton(tdm_boot_info_t *info) {
    static int one_node[1];
    info->nodes = 1;
    info->node_of = one_node;
    info->shm_shared = 0;
    info->rank = 0;
    info->size = 1;
    info->local_rank = 0;
    info->local_size = 1;
    info->ctl_fd = -1;
    info->shm_offset = 0;
    info->bind = TDM_BOOT_BIND_ALONE;
    info->shm_fd = memfd_create("tandem-shm", MFD_CLOEXEC);
    if (info->shm_fd < 0) {
        tdm_error(BOOT, "memfd_create for the singleton segment failed: %m");
        return -errno;
    }
    snprintf(info->jobid, sizeof(info->jobid), "singleton-%d", (int)getpid());
    return 0;
}

/* ---- started by a PMI launcher (Hydra, srun --mpi=pmi2) ---- */

static tdm_pmi_t boot_pmi = {.fd = -1};
/* Hydra 4.0 does not know PMI-2's abort command (it ends the job with status 255), but it
 * reads each message in the form it comes in: there, abort is sent as a PMI-1 line. */
static bool boot_pmi_hydra;

/* the process that connected: a child it forks shares the socket but is not the rank */
static pid_t boot_pmi_pid;

/* started by a PMIx server instead (Open MPI's mpirun, srun --mpi=pmix): its client */
static tdm_pmix_t boot_pmix;
static bool boot_is_pmix;

static void pmi_goodbye(void) {
    char why[256];
    if (getpid() != boot_pmi_pid)
        return;
    if (boot_is_pmix ? tdm_pmix_finalize(&boot_pmix, why, sizeof(why)) != 0
                     : boot_pmi.fd >= 0 && tdm_pmi_finalize(&boot_pmi, why, sizeof(why)) != 0)
        tdm_warn(BOOT, "%s", why);
}

int tdm_boot_kvs_put(const char *key, const char *value, char *why, size_t len) {
    return boot_is_pmix ? tdm_pmix_put(&boot_pmix, key, value, why, len)
                        : tdm_pmi_put(&boot_pmi, key, value, why, len);
}

int tdm_boot_kvs_fence(char *why, size_t len) {
    return boot_is_pmix ? tdm_pmix_fence(&boot_pmix, why, len) : tdm_pmi_fence(&boot_pmi, why, len);
}

int tdm_boot_kvs_get(int rank, const char *key, char *value, size_t vlen, char *why, size_t len) {
    return boot_is_pmix ? tdm_pmix_get(&boot_pmix, rank, key, value, vlen, why, len)
                        : tdm_pmi_get(&boot_pmi, key, value, vlen, why, len);
}

/* End the job through the launcher; one call, no answer awaited beyond the launcher's own. */
static void launcher_abort(int code, const char *msg) {
    if (boot_is_pmix)
        tdm_pmix_abort(&boot_pmix, code, msg);
    else
        tdm_pmi_abort(&boot_pmi, code, boot_pmi_hydra, msg);
}

/* "<host>,<boot id>,<name>": the first two make two processes one node's (as UCX decides);
 * the name is the launcher's for the host when it gives one (Hydra's -hosts names), for
 * messages. */
static void host_key_value(char *out, size_t len) {
    char host[256] = "", boot[64] = "";
    gethostname(host, sizeof(host) - 1);
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, boot, sizeof(boot) - 1);
        boot[n > 0 ? n : 0] = 0;
        close(fd);
    }
    boot[strcspn(boot, "\n")] = 0;
    const char *name = getenv("MPIR_CVAR_CH3_INTERFACE_HOSTNAME");
    snprintf(out, len, "%.100s,%.40s,%.60s", host[0] ? host : "unknown", boot[0] ? boot : "none",
             name && *name ? name
             : host[0]     ? host
                           : "unknown");
    /* a value travels in a line of key=value words */
    for (char *c = out; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '-' || *c == '_' || *c == ','))
            *c = '_';
}

/* The node part of a host value (its length), and its name for messages. */
static size_t host_identity(const char *v) {
    const char *c = strchr(v, ',');
    return c && strchr(c + 1, ',') ? (size_t)(strchr(c + 1, ',') - v) : strlen(v);
}

static const char *host_name(const char *v) {
    size_t n = host_identity(v);
    return v[n] ? v + n + 1 : v;
}

/* PMI's job id as Tandem's (at most 63 characters: a long one keeps its start and a hash). */
static void pmi_jobid(const char *kvs, char *out, size_t len) {
    if (strlen(kvs) < len) {
        snprintf(out, len, "%s", kvs);
        return;
    }
    uint64_t h = 1469598103934665603ull;
    for (const char *c = kvs; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    snprintf(out, len, "%.*s-%016llx", (int)(len - 18), kvs, (unsigned long long)h);
}

/* The node's lowest rank makes the segment: mpirun's memfd, name, stamp and seals. */
static int make_node_segment(const tdm_boot_info_t *info, char *why, size_t len) {
    char name[128];
    snprintf(name, sizeof(name), TDM_BOOT_MEMFD_NAME "%s", info->jobid);
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    size_t bytes = tdm_boot_stamp_bytes(info->size);
    tdm_boot_stamp_t stamp = {.magic = TDM_BOOT_STAMP_MAGIC,
                              .version = TDM_BOOT_STAMP_VERSION,
                              .size = (uint32_t)info->size,
                              .seg_offset =
                                  (bytes + (size_t)page - 1) / (size_t)page * (size_t)page};
    snprintf(stamp.jobid, sizeof(stamp.jobid), "%s", info->jobid);
    if (fd < 0 || ftruncate(fd, (off_t)stamp.seg_offset) != 0 ||
        pwrite(fd, &stamp, sizeof(stamp), 0) != (ssize_t)sizeof(stamp) ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
        snprintf(why, len, "cannot make the node's shared memory (memfd): %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* The same under a /dev/shm name, for when no local rank may take another's descriptor. */
static int make_named_segment(const tdm_boot_info_t *info, const char *name, char *why,
                              size_t len) {
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    size_t bytes = tdm_boot_stamp_bytes(info->size);
    tdm_boot_stamp_t stamp = {.magic = TDM_BOOT_STAMP_MAGIC,
                              .version = TDM_BOOT_STAMP_VERSION,
                              .size = (uint32_t)info->size,
                              .seg_offset =
                                  (bytes + (size_t)page - 1) / (size_t)page * (size_t)page};
    snprintf(stamp.jobid, sizeof(stamp.jobid), "%s", info->jobid);
    if (fd < 0 || ftruncate(fd, (off_t)stamp.seg_offset) != 0 ||
        pwrite(fd, &stamp, sizeof(stamp), 0) != (ssize_t)sizeof(stamp)) {
        snprintf(why, len, "cannot make the node's shared memory as /dev/shm%s: %s", name,
                 strerror(errno));
        if (fd >= 0) {
            close(fd);
            shm_unlink(name);
        }
        return -1;
    }
    return fd;
}

/* Take descriptor `num` of process `pid` (the node's lowest rank), as `mode` allows. */
static int take_fd(pid_t pid, int num, const char *mode, char *why, size_t len) {
    int fd = -1, e1 = 0, e2 = 0;
    bool any = !strcmp(mode, "auto");
    if (any || !strcmp(mode, "pidfd")) {
        /* the same ptrace right CMA needs (PTRACE_MODE_ATTACH) */
        int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pfd >= 0) {
            fd = (int)syscall(SYS_pidfd_getfd, pfd, num, 0);
            e1 = errno;
            close(pfd);
        } else {
            e1 = errno;
        }
        if (fd >= 0)
            fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    if (fd < 0 && (any || !strcmp(mode, "proc"))) {
        /* opening the magic link needs only PTRACE_MODE_READ, which Yama leaves alone */
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, num);
        fd = open(path, O_RDWR | O_CLOEXEC);
        e2 = errno;
    }
    if (fd < 0)
        snprintf(why, len, "cannot take descriptor %d of pid %d (pidfd_getfd: %s; /proc: %s)", num,
                 (int)pid, e1 ? strerror(e1) : "not tried", e2 ? strerror(e2) : "not tried");
    return fd;
}

/* "ranks 0-1 on node0, 2-3 on node1": the runs of ranks of the node map (a long one cut). */
static void describe_nodes(const int *node_of, int size, char hosts[][64], char *out, size_t len) {
    size_t o = 0;
    out[0] = 0;
    for (int r = 0; r < size;) {
        int e = r;
        while (e + 1 < size && node_of[e + 1] == node_of[r])
            e++;
        if (o + 100 > len) { /* a long map: the start says enough */
            snprintf(out + o, len - o, ", ...");
            return;
        }
        const char *lead = o ? ", " : size > 1 ? "ranks " : "rank ";
        if (e > r)
            o += (size_t)snprintf(out + o, len - o, "%s%d-%d on %.63s", lead, r, e, hosts[r]);
        else
            o += (size_t)snprintf(out + o, len - o, "%s%d on %.63s", lead, r, hosts[r]);
        r = e + 1;
    }
}

int tdm_boot_node_split(const char *how, int *node_of, int size, char *why, size_t len) {
    enum { SPLIT_OFF, SPLIT_NOLOCAL, SPLIT_ODD_EVEN, SPLIT_GROUPS } mode = SPLIT_OFF;
    long group = 0;
    if (!how[0] || !strcmp(how, "off")) {
        mode = SPLIT_OFF;
    } else if (!strcmp(how, "nolocal")) {
        mode = SPLIT_NOLOCAL;
    } else if (!strcmp(how, "odd-even")) {
        mode = SPLIT_ODD_EVEN;
    } else {
        char *end;
        errno = 0;
        group = strtol(how, &end, 10);
        if (end == how || *end || errno || group < 1) {
            snprintf(why, len,
                     "TANDEM_NODE_SPLIT=%.40s is not off, nolocal, odd-even or a number of ranks "
                     "per node (1 or more)",
                     how);
            return -1;
        }
        mode = SPLIT_GROUPS;
    }
    /* each rank's part of its node: the node of the map is (node, part) */
    int *part = malloc((size_t)size * sizeof(int));
    if (!part) {
        snprintf(why, len, "out of memory for the node map of %d ranks", size);
        return -1;
    }
    for (int r = 0; r < size; r++) {
        int local = 0;
        if (mode == SPLIT_GROUPS)
            for (int q = 0; q < r; q++)
                local += node_of[q] == node_of[r];
        part[r] = mode == SPLIT_NOLOCAL    ? r
                  : mode == SPLIT_ODD_EVEN ? r & 1
                  : mode == SPLIT_GROUPS   ? (int)(local / group)
                                           : 0;
    }
    /* number the nodes by their lowest ranks (the map every rank computes alike) */
    int nodes = 0;
    int *first = malloc((size_t)size * sizeof(int)); /* of each new node, its lowest rank */
    int *id = malloc((size_t)size * sizeof(int));
    if (!first || !id) {
        free(first);
        free(id);
        free(part);
        snprintf(why, len, "out of memory for the node map of %d ranks", size);
        return -1;
    }
    for (int r = 0; r < size; r++) {
        int k = 0;
        while (k < nodes && !(node_of[first[k]] == node_of[r] && part[first[k]] == part[r]))
            k++;
        if (k == nodes)
            first[nodes++] = r;
        id[r] = k;
    }
    memcpy(node_of, id, (size_t)size * sizeof(int));
    free(part);
    free(first);
    free(id);
    return nodes;
}

/* A transport that reaches other nodes is built (src/net/net.h): jobs may span nodes. */
#ifdef TDM_NET_HAVE_REMOTE
#define BOOT_NET_REMOTE 1
#else
#define BOOT_NET_REMOTE 0
#endif

/* The refusal of a job on more than one node, as its lowest rank says it. */
static void nodes_refused(const int *node_of, int size, char hosts[][64], char *why, size_t len) {
    char map[400];
    const char *split = TDM_PARAM_S(NODE_SPLIT);
    bool splits = split[0] && strcmp(split, "off") != 0;
    char(*names)[64] = splits ? calloc((size_t)size, sizeof(*names)) : NULL;
    if (names) {
        /* a node of the split is part of a host: say which */
        for (int r = 0; r < size; r++)
            snprintf(names[r], sizeof(names[r]), "node%d of %.40s", node_of[r],
                     hosts[r][0] ? hosts[r] : "this host");
        hosts = names;
    }
    describe_nodes(node_of, size, hosts, map, sizeof(map));
    free(names);
    snprintf(why, len,
             "%s%s%s%s: this build has no inter-node transport (built without UCX: install "
             "libucx-dev and rebuild); run the job on one node",
             map, splits ? " (TANDEM_NODE_SPLIT=" : "", splits ? split : "", splits ? ")" : "");
}

/* Hydra stops relaying a process's output once it ends the job: give what is still in the
 * stdout and stderr pipes (the reason for the abort) a moment to be read first. */
static void wait_output_read(void) {
    for (int i = 0; i < 500; i++) {
        int left = 0, n;
        for (int fd = 1; fd <= 2; fd++) {
            struct stat st;
            if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && ioctl(fd, FIONREAD, &n) == 0)
                left += n;
        }
        if (!left)
            return;
        usleep(1000);
    }
}

/* A job that cannot run: its lowest rank says why and ends it through PMI; the others wait
 * to be ended with it (and end it themselves should that never come). */
static _Noreturn void pmi_job_fails(const char *why) {
    if ((boot_is_pmix ? boot_pmix.rank : boot_pmi.rank) != 0) {
        /* under a PMIx server there is no socket of ours to watch: this only waits */
        struct pollfd pfd = {.fd = boot_pmi.fd, .events = POLLIN};
        poll(&pfd, 1, 10000);
    }
    tdm_error(BOOT, "%s", why);
    wait_output_read();
    launcher_abort(1, why);
    struct pollfd pfd = {.fd = boot_pmi.fd, .events = POLLIN};
    poll(&pfd, 1, 2000);
    _exit(1);
}

/* This kernel's boot time (/proc/stat's btime, seconds), "" when unknown. */
static void boot_time_value(char *out, size_t len) {
    char line[256];
    out[0] = 0;
    FILE *f = fopen("/proc/stat", "re");
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "btime ", 6)) {
            snprintf(out, len, "%.*s", (int)strcspn(line + 6, "\n"), line + 6);
            break;
        }
    if (f)
        fclose(f);
}

/* This rank's index among the job's ranks on this machine, and their number: the ranks of
 * every node whose lowest rank's kernel booted when this one's did. Not the boot id: the
 * namespace cluster gives each of its nodes one of its own (UCX must see them as hosts
 * apart), but their ranks share this machine's CPUs, as TANDEM_NODE_SPLIT's nodes and
 * Hydra's -hosts names under its fork launcher do. Two machines booted in the same second
 * count as one, which can only leave their ranks unbound or bound to later CPUs, never
 * two on one CPU. */
static int machine_ranks(const int *node_of, int nodes, int size, int me, int *rank_p, int *size_p,
                         char *why, size_t len) {
    char key[64], val[TDM_PMI_VALUE_MAX], mine[64];
    signed char *same = calloc((size_t)nodes, 1); /* 0 unknown, 1 this machine, -1 not */
    if (!same) {
        snprintf(why, len, "out of memory for the node map of %d ranks", size);
        return -1;
    }
    boot_time_value(mine, sizeof(mine));
    int rank = 0, count = 0;
    for (int r = 0; r < size; r++) {
        int n = node_of[r];
        if (!same[n] && n == node_of[me]) {
            same[n] = 1;
        } else if (!same[n]) {
            snprintf(key, sizeof(key), "tdm-btime-%d", r);
            int got = tdm_boot_kvs_get(r, key, val, sizeof(val), why, len);
            if (got < 0) {
                free(same);
                return -1;
            }
            same[n] = got && mine[0] && !strcmp(val, mine) ? 1 : -1;
        }
        if (same[n] > 0) {
            rank += r < me;
            count++;
        }
    }
    free(same);
    *rank_p = rank;
    *size_p = count;
    return 0;
}

#define PMI_TRY(_call)                                                                             \
    do {                                                                                           \
        if ((_call) < 0)                                                                           \
            goto fail;                                                                             \
    } while (0)

static int boot_from_pmi(tdm_boot_info_t *info, bool pmix) {
    char why[512], key[64], val[TDM_PMI_VALUE_MAX];
    int *node_of = NULL;
    char(*hosts)[64] = NULL;
    char(*idents)[160] = NULL; /* host name and boot id of each rank (no mapping) */
    const char *want = TDM_PARAM_S(PMI_VERSION);
    const char *slurm = getenv("SLURM_MPI_TYPE");
    int version =
        !strcmp(want, "2") || (!strcmp(want, "auto") && slurm && !strcmp(slurm, "pmi2")) ? 2 : 1;
    boot_pmi_hydra = getenv("MPI_LOCALNRANKS") != NULL; /* set by Hydra's proxy only */
    info->ctl_fd = -1;
    info->shm_fd = -1;
    if (pmix) {
        version = TDM_BOOT_PMIX;
        boot_is_pmix = true;
        if (tdm_pmix_init(&boot_pmix, TDM_PMIX_LIBRARY, why, sizeof(why)) != 0) {
            tdm_error(BOOT, "%s", why);
            return -EPROTO;
        }
        /* a program this rank starts must not speak to the server as this rank */
        tdm_pmix_forget_env();
    } else if (tdm_pmi_connect_env(&boot_pmi, version, why, sizeof(why)) != 0) {
        tdm_error(BOOT, "%s", why);
        return -EPROTO;
    }
    info->pmi = version;
    /* a program this rank starts must not talk on its PMI socket (it is close-on-exec) */
    unsetenv("PMI_FD");
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    boot_pmi_pid = getpid();
    atexit(pmi_goodbye);
    info->rank = pmix ? boot_pmix.rank : boot_pmi.rank;
    info->size = pmix ? boot_pmix.size : boot_pmi.size;
    tdm_log_set_rank(info->rank);
    pmi_jobid(pmix ? boot_pmix.nspace : boot_pmi.kvsname, info->jobid, sizeof(info->jobid));
    int size = info->size, me = info->rank;
    node_of = malloc((size_t)size * sizeof(int));
    hosts = calloc((size_t)size, sizeof(*hosts));
    if (!node_of || !hosts) {
        snprintf(why, sizeof(why), "out of memory for the node map of %d ranks", size);
        goto fail;
    }

    /* which ranks share this node */
    char mine[256];
    host_key_value(mine, sizeof(mine));
    snprintf(key, sizeof(key), "tdm-host-%d", me);
    PMI_TRY(tdm_boot_kvs_put(key, mine, why, sizeof(why)));
    /* which nodes share this machine's CPUs (machine_ranks; put by every rank, as
     * TANDEM_BIND may differ between them) */
    char btime[64];
    boot_time_value(btime, sizeof(btime));
    snprintf(key, sizeof(key), "tdm-btime-%d", me);
    PMI_TRY(tdm_boot_kvs_put(key, btime[0] ? btime : "unknown", why, sizeof(why)));
    const char *nodemap = TDM_PARAM_S(PMI_NODEMAP);
    int nodes = 0, found = 0;
    if (pmix && strcmp(nodemap, "hosts") != 0) {
        /* the server's node ids (or host names) of every rank; without them, host names
         * and boot ids through the key-value space as under PMI */
        const char *source = NULL;
        PMI_TRY(found = tdm_pmix_node_map(&boot_pmix, node_of, hosts, &source, why, sizeof(why)));
        if (found) {
            tdm_info(BOOT, "the node map from the PMIx server's %s", source);
            PMI_TRY(nodes = tdm_boot_node_split(TDM_PARAM_S(NODE_SPLIT), node_of, size, why,
                                                sizeof(why)));
        } else if (!strcmp(nodemap, "mapping")) {
            snprintf(why, sizeof(why),
                     "the PMIx server gives neither PMIX_NODEID nor PMIX_HOSTNAME of every rank "
                     "(TANDEM_PMI_NODEMAP=mapping)");
            goto fail;
        }
        if (found)
            found = 1;
    } else if (strcmp(nodemap, "hosts") != 0) {
        PMI_TRY(found = tdm_pmi_job_attr(&boot_pmi, "PMI_process_mapping", val, sizeof(val), why,
                                         sizeof(why)));
        if (found) {
            PMI_TRY(nodes = tdm_pmi_parse_mapping(val, size, node_of, why, sizeof(why)));
            PMI_TRY(nodes = tdm_boot_node_split(TDM_PARAM_S(NODE_SPLIT), node_of, size, why,
                                                sizeof(why)));
        } else if (!strcmp(nodemap, "mapping")) {
            snprintf(why, sizeof(why),
                     "the launcher gives no PMI_process_mapping "
                     "(TANDEM_PMI_NODEMAP=mapping)");
            goto fail;
        }
    }
    /* the lowest rank of a node makes its segment, once the map is known */
    int seg_fd = -1;
    bool creator = false;
    for (int pass = 0; pass < 2; pass++) {
        if (found) {
            int first = me;
            for (int r = 0; r < me; r++)
                if (node_of[r] == node_of[me]) {
                    first = r;
                    break;
                }
            creator = first == me;
            if (creator && seg_fd < 0) {
                PMI_TRY(seg_fd = make_node_segment(info, why, sizeof(why)));
                snprintf(key, sizeof(key), "tdm-seg-%d", node_of[me]);
                snprintf(val, sizeof(val), "%d,%d", (int)getpid(), seg_fd);
                PMI_TRY(tdm_boot_kvs_put(key, val, why, sizeof(why)));
            }
        }
        PMI_TRY(tdm_boot_kvs_fence(why, sizeof(why)));
        if (found)
            break;
        /* no mapping: a node is the ranks with the same host name and boot id (each
         * value read once; a node's first rank is its id) */
        idents = calloc((size_t)size, sizeof(*idents));
        if (!idents) {
            snprintf(why, sizeof(why), "out of memory for the host names of %d ranks", size);
            goto fail;
        }
        for (int r = 0; r < size; r++) {
            snprintf(key, sizeof(key), "tdm-host-%d", r);
            int got;
            PMI_TRY(got = tdm_boot_kvs_get(r, key, val, sizeof(val), why, sizeof(why)));
            if (!got) {
                snprintf(why, sizeof(why), "rank %d put no %s in the key-value space", r, key);
                goto fail;
            }
            snprintf(hosts[r], sizeof(hosts[r]), "%s", host_name(val));
            snprintf(idents[r], sizeof(idents[r]), "%.*s", (int)host_identity(val), val);
            node_of[r] = r;
            for (int q = 0; q < r; q++) {
                if (node_of[q] == q && !strcmp(idents[q], idents[r])) {
                    node_of[r] = q;
                    break;
                }
            }
        }
        PMI_TRY(nodes =
                    tdm_boot_node_split(TDM_PARAM_S(NODE_SPLIT), node_of, size, why, sizeof(why)));
        found = 1;
    }
    /* no transport reaches another node: say so before any segment is made */
    if (nodes > 1 && !BOOT_NET_REMOTE) {
        /* name the nodes by their ranks' host names (the mapping numbers them only) */
        for (int r = 0; r < size && me == 0; r++) {
            if (hosts[r][0] || (r > 0 && node_of[r] == node_of[r - 1]))
                continue;
            snprintf(key, sizeof(key), "tdm-host-%d", r);
            if (tdm_boot_kvs_get(r, key, val, sizeof(val), why, sizeof(why)) == 1)
                snprintf(hosts[r], sizeof(hosts[r]), "%s", host_name(val));
            else
                snprintf(hosts[r], sizeof(hosts[r]), "node %d", node_of[r]);
        }
        nodes_refused(node_of, size, hosts, why, sizeof(why));
        pmi_job_fails(why);
    }

    /* every local rank holds the node's segment */
    int local_rank = 0, local_size = 0, first = -1;
    for (int r = 0; r < size; r++) {
        if (node_of[r] != node_of[me])
            continue;
        if (first < 0)
            first = r;
        local_rank += r < me;
        local_size++;
    }
    const char *mode = TDM_PARAM_S(PMI_SHM);
    tdm_boot_stamp_t stamp;
    bool foreign = false, taken = creator;
    if (!creator && strcmp(mode, "name") != 0) {
        int pid = 0, num = -1, got;
        snprintf(key, sizeof(key), "tdm-seg-%d", node_of[me]);
        PMI_TRY(got = tdm_boot_kvs_get(first, key, val, sizeof(val), why, sizeof(why)));
        if (!got || sscanf(val, "%d,%d", &pid, &num) != 2 || pid <= 0 || num < 0) {
            snprintf(why, sizeof(why), "rank %d published no usable segment (%s='%.60s')", first,
                     key, got ? val : "");
            goto fail;
        }
        seg_fd = take_fd(pid, num, mode, why, sizeof(why));
        const char *bad =
            seg_fd < 0 ? why
                       : check_segment(seg_fd, info, true, &stamp, &foreign, why, sizeof(why));
        taken = !bad;
        if (bad && strcmp(mode, "auto") != 0) {
            char msg[sizeof(why)];
            snprintf(msg, sizeof(msg), "the segment of rank %d (TANDEM_PMI_SHM=%s): %.400s", first,
                     mode, bad);
            snprintf(why, sizeof(why), "%s", msg);
            goto fail;
        }
        if (bad) {
            tdm_info(BOOT, "the segment of rank %d: %s; trying a /dev/shm name", first, bad);
            if (seg_fd >= 0)
                close(seg_fd);
            seg_fd = -1;
        }
    }
    /* did every local rank get it? (after a fence, every rank reads the same answers) */
    snprintf(key, sizeof(key), "tdm-shm-ok-%d", me);
    PMI_TRY(tdm_boot_kvs_put(key, taken ? "1" : "0", why, sizeof(why)));
    PMI_TRY(tdm_boot_kvs_fence(why, sizeof(why)));
    bool all = true;
    for (int r = first; r < size && all; r++) {
        if (node_of[r] != node_of[me] || r == first)
            continue;
        snprintf(key, sizeof(key), "tdm-shm-ok-%d", r);
        int got;
        PMI_TRY(got = tdm_boot_kvs_get(r, key, val, sizeof(val), why, sizeof(why)));
        all = got && !strcmp(val, "1");
    }
    if (!all) {
        /* a name in /dev/shm, for as short as it takes every local rank to open it */
        char name[128];
        snprintf(name, sizeof(name), "/tandem-%s-%d", info->jobid, node_of[me]);
        if (creator) {
            close(seg_fd);
            PMI_TRY(seg_fd = make_named_segment(info, name, why, sizeof(why)));
        }
        PMI_TRY(tdm_boot_kvs_fence(why, sizeof(why)));
        if (!creator) {
            if (seg_fd >= 0)
                close(seg_fd);
            seg_fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
            if (seg_fd < 0)
                snprintf(why, sizeof(why), "cannot open /dev/shm%s: %s", name, strerror(errno));
        }
        /* every local rank has opened it (or failed to): it goes now, whatever comes next */
        int rc = tdm_boot_kvs_fence(why + strlen(why), sizeof(why) - strlen(why));
        if (creator)
            shm_unlink(name);
        if (seg_fd < 0 || rc < 0)
            goto fail;
        const char *bad = check_segment(seg_fd, info, false, &stamp, &foreign, why, sizeof(why));
        if (bad)
            goto fail;
    } else if (creator) {
        const char *bad = check_segment(seg_fd, info, true, &stamp, &foreign, why, sizeof(why));
        if (bad)
            goto fail;
    }
    info->shm_fd = seg_fd;
    info->shm_offset = (size_t)stamp.seg_offset;
    const char *bad = claim_rank(seg_fd, info, why, sizeof(why));
    if (bad)
        goto fail;
    info->local_rank = local_rank;
    info->local_size = local_size;
    info->nodes = nodes;
    info->node_of = node_of;
    node_of = NULL; /* the job's map, kept for the engine */
    /* more local ranks than CPUs to run on: wait by yielding and blocking, as mpirun would
     * have said (TANDEM_OVERSUBSCRIBED=1 forces it) */
    cpu_set_t cpus;
    int ncpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    if (!info->oversubscribed)
        info->oversubscribed = local_size > ncpus;
    /* unbound, two ranks that wake each other end up on one CPU (tdm_boot_bind) */
    if (tdm_boot_bind_unbound(info)) {
        int machine_rank = local_rank, machine_size = local_size;
        if (nodes > 1)
            PMI_TRY(machine_ranks(info->node_of, nodes, size, me, &machine_rank, &machine_size, why,
                                  sizeof(why)));
        tdm_boot_bind(info, machine_rank, machine_size);
    }
    tdm_info(BOOT, "rank %d of %d by %s (%s), %d on this node, segment by %s", me, size,
             pmix           ? "PMIx"
             : version == 2 ? "PMI-2"
                            : "PMI-1",
             info->jobid, local_size,
             creator ? "creating it"
             : all   ? mode
                     : "a /dev/shm name");
    free(node_of);
    free(hosts);
    free(idents);
    return 0;
fail:
    free(node_of);
    free(hosts);
    free(idents);
    tdm_error(BOOT, "%s", why);
    return -EPROTO;
}

int tdm_boot_init(tdm_boot_info_t *info_p) {
    tdm_boot_info_t info;
    memset(&info, 0, sizeof(info));
    tdm_params_init();
    info.rank = (int)TDM_PARAM_I(RANK);
    info.oversubscribed = (int)TDM_PARAM_I(OVERSUBSCRIBED);
    forget_launch_vars();
    if (info.rank < 0 && (getenv("PMI_FD") || getenv("PMI_PORT"))) {
        int rc = boot_from_pmi(&info, false);
        *info_p = info;
        return rc;
    }
    if (info.rank < 0 && tdm_pmix_env()) {
        int rc = boot_from_pmi(&info, true);
        *info_p = info;
        return rc;
    }
    if (info.rank < 0) {
        if (make_singleton(&info) != 0)
            return -errno;
        tdm_log_set_rank(0);
        *info_p = info;
        return 0;
    }
    info.size = (int)TDM_PARAM_I(SIZE);
    info.local_rank = (int)TDM_PARAM_I(LOCAL_RANK);
    info.local_size = (int)TDM_PARAM_I(LOCAL_SIZE);
    info.shm_fd = (int)TDM_PARAM_I(SHM_FD);
    info.ctl_fd = (int)TDM_PARAM_I(CTL_FD);
    snprintf(info.jobid, sizeof(info.jobid), "%s", TDM_PARAM_S(JOBID));
    char why[256];
    const char *bad = NULL;
    tdm_boot_stamp_t stamp;
    bool foreign = false;
    if (info.size < 1 || info.rank >= info.size || info.local_size != info.size ||
        info.local_rank != info.rank) {
        snprintf(why, sizeof(why),
                 "the launch variables disagree (TANDEM_RANK=%d TANDEM_SIZE=%d "
                 "TANDEM_LOCAL_RANK=%d TANDEM_LOCAL_SIZE=%d)",
                 info.rank, info.size, info.local_rank, info.local_size);
        bad = why;
    }
    if (!bad && (info.shm_fd < 0 || info.ctl_fd < 0 || !info.jobid[0])) {
        snprintf(why, sizeof(why), "TANDEM_SHM_FD, TANDEM_CTL_FD or TANDEM_JOBID is missing");
        bad = why;
    }
    if (!bad)
        bad = check_segment(info.shm_fd, &info, true, &stamp, &foreign, why, sizeof(why));
    if (!bad)
        bad = check_ctl(info.shm_fd, info.ctl_fd, &info, why, sizeof(why));
    if (!bad)
        bad = claim_rank(info.shm_fd, &info, why, sizeof(why));
    if (bad) {
        /* a program started by a rank, with the rank's variables but not its descriptors:
         * whatever it has open on those numbers is its own */
        if (foreign)
            tdm_warn(BOOT,
                     "TANDEM_RANK=%d is set, but %s: starting as a singleton (was this program "
                     "started by the mpirun of another Tandem installation?)",
                     info.rank, bad);
        else
            tdm_info(BOOT, "TANDEM_RANK=%d is set, but %s: starting as a singleton", info.rank,
                     bad);
        info.oversubscribed = 0;
        if (make_singleton(&info) != 0)
            return -errno;
        tdm_log_set_rank(0);
        *info_p = info;
        return 0;
    }
    info.shm_offset = (size_t)stamp.seg_offset;
    /* mpirun applied its own policy (--bind-to): never bind again under it */
    info.bind = TDM_BOOT_BIND_MPIRUN;
    tdm_log_set_rank(info.rank);
    /* mpirun starts every rank on this host; TANDEM_NODE_SPLIT may make nodes of it, whose
     * segments then follow one another in the one memfd */
    info.node_of = calloc((size_t)info.size, sizeof(int));
    if (!info.node_of) {
        tdm_error(BOOT, "out of memory for the node map of %d ranks", info.size);
        *info_p = info;
        return -ENOMEM;
    }
    info.nodes =
        tdm_boot_node_split(TDM_PARAM_S(NODE_SPLIT), info.node_of, info.size, why, sizeof(why));
    if (info.nodes < 0) {
        tdm_error(BOOT, "%s", why);
        *info_p = info;
        return -EINVAL;
    }
    info.shm_shared = info.nodes > 1;
    if (info.nodes > 1 && !BOOT_NET_REMOTE) {
        char host[64] = "";
        gethostname(host, sizeof(host) - 1);
        char(*hosts)[64] = calloc((size_t)info.size, sizeof(*hosts));
        for (int r = 0; hosts && r < info.size; r++)
            snprintf(hosts[r], sizeof(hosts[r]), "%s", host);
        char msg[512];
        if (hosts)
            nodes_refused(info.node_of, info.size, hosts, msg, sizeof(msg));
        free(hosts);
        /* the lowest rank says it and mpirun ends the job on its report; the others wait
         * for that (and end it themselves should it never come) */
        if (info.rank != 0)
            for (int i = 0; i < 100; i++)
                usleep(100 * 1000);
        tdm_error(BOOT, "%s", hosts ? msg : "out of memory for the node map");
        *info_p = info;
        return -EPROTO;
    }
    /* keep our own children (system(), a shell in MPI_Comm_spawn later) from inheriting them */
    fcntl(info.shm_fd, F_SETFD, FD_CLOEXEC);
    fcntl(info.ctl_fd, F_SETFD, FD_CLOEXEC);
    tdm_log_set_rank(info.rank);
    *info_p = info;
    return 0;
}

void tdm_boot_report(const tdm_boot_info_t *info, const char *line) {
    char buf[64];
    if (info->pmi && (line[0] == 'A' || line[0] == 'E') && line[1] == ' ') {
        /* the launcher ends the job; this process waits for that a while, then exits */
        int code = atoi(line + 2);
        wait_output_read();
        launcher_abort(code ? code : 1,
                       line[0] == 'A' ? "MPI_Abort" : "fatal error (see the message above)");
        boot_pmix.up = false; /* no finalize on the way out */
        if (boot_pmi.fd >= 0) {
            struct pollfd pfd = {.fd = boot_pmi.fd, .events = POLLIN};
            poll(&pfd, 1, 2000);
            boot_pmi.fd = -1; /* no finalize on the way out */
        }
        return;
    }
    if (info->ctl_fd < 0)
        return;
    /* no stdio: the pending-operations dump reports from a signal handler */
    size_t n = strlen(line);
    if (n > sizeof(buf) - 1)
        n = sizeof(buf) - 1;
    memcpy(buf, line, n);
    buf[n++] = '\n';
    int saved = errno;
    /* a single small write to a pipe is atomic; EPIPE means mpirun is gone */
    while (write(info->ctl_fd, buf, n) < 0 && errno == EINTR)
        ;
    errno = saved;
}
