/* SPDX-License-Identifier: BSD-3-Clause */
#include "boot.h"
#include "../base/log.h"
#include "../base/params.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is the memfd `fd` the segment of the job the variables name? NULL when it is, else why
 * not. Nothing here writes, resizes or maps the descriptor. */
static const char *check_segment(int fd, const tdm_boot_info_t *info, tdm_boot_stamp_t *stamp_p,
                                 bool *foreign_p, char *why, size_t len) {
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
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || seals != (F_SEAL_SHRINK | F_SEAL_SEAL)) {
        snprintf(why, len, "descriptor %d (TANDEM_SHM_FD) is not a memfd sealed by mpirun", fd);
        return why;
    }
    /* without /proc the seals and the stamp decide alone */
    snprintf(want, sizeof(want), "/memfd:" TDM_BOOT_MEMFD_NAME "%s (deleted)", info->jobid);
    if (n >= 0 && strcmp(target, want) != 0) {
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
    info->rank = 0;
    info->size = 1;
    info->local_rank = 0;
    info->local_size = 1;
    info->ctl_fd = -1;
    info->shm_offset = 0;
    info->shm_fd = memfd_create("tandem-shm", MFD_CLOEXEC);
    if (info->shm_fd < 0) {
        tdm_error(BOOT, "memfd_create for the singleton segment failed: %m");
        return -errno;
    }
    snprintf(info->jobid, sizeof(info->jobid), "singleton-%d", (int)getpid());
    return 0;
}

int tdm_boot_init(tdm_boot_info_t *info_p) {
    tdm_boot_info_t info;
    memset(&info, 0, sizeof(info));
    tdm_params_init();
    info.rank = (int)TDM_PARAM_I(RANK);
    info.oversubscribed = (int)TDM_PARAM_I(OVERSUBSCRIBED);
    forget_launch_vars();
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
        bad = check_segment(info.shm_fd, &info, &stamp, &foreign, why, sizeof(why));
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
    /* keep our own children (system(), a shell in MPI_Comm_spawn later) from inheriting them */
    fcntl(info.shm_fd, F_SETFD, FD_CLOEXEC);
    fcntl(info.ctl_fd, F_SETFD, FD_CLOEXEC);
    tdm_log_set_rank(info.rank);
    *info_p = info;
    return 0;
}

void tdm_boot_report(const tdm_boot_info_t *info, const char *line) {
    char buf[64];
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
