/* SPDX-License-Identifier: BSD-3-Clause */
#include "boot.h"
#include "../base/log.h"
#include "../base/params.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int tdm_boot_init(tdm_boot_info_t *info_p) {
    tdm_boot_info_t info;
    memset(&info, 0, sizeof(info));
    tdm_params_init();
    info.rank = (int)TDM_PARAM_I(RANK);
    info.oversubscribed = (int)TDM_PARAM_I(OVERSUBSCRIBED);
    if (info.rank < 0) {
        /* singleton: no launcher, a private segment */
        info.rank = 0;
        info.size = 1;
        info.local_rank = 0;
        info.local_size = 1;
        info.ctl_fd = -1;
        info.shm_fd = memfd_create("tandem-shm", MFD_CLOEXEC);
        if (info.shm_fd < 0) {
            tdm_error(BOOT, "memfd_create for the singleton segment failed: %m");
            return -errno;
        }
        snprintf(info.jobid, sizeof(info.jobid), "singleton-%d", (int)getpid());
    } else {
        info.size = (int)TDM_PARAM_I(SIZE);
        info.local_rank = (int)TDM_PARAM_I(LOCAL_RANK);
        info.local_size = (int)TDM_PARAM_I(LOCAL_SIZE);
        info.shm_fd = (int)TDM_PARAM_I(SHM_FD);
        info.ctl_fd = (int)TDM_PARAM_I(CTL_FD);
        snprintf(info.jobid, sizeof(info.jobid), "%s", TDM_PARAM_S(JOBID));
        if (info.size < 1 || info.rank >= info.size || info.local_size != info.size ||
            info.local_rank != info.rank) {
            tdm_error(BOOT,
                      "inconsistent launch environment: TANDEM_RANK=%d TANDEM_SIZE=%d "
                      "TANDEM_LOCAL_RANK=%d TANDEM_LOCAL_SIZE=%d (single-node jobs only)",
                      info.rank, info.size, info.local_rank, info.local_size);
            return -EINVAL;
        }
        if (info.shm_fd < 0 || fcntl(info.shm_fd, F_GETFD) < 0) {
            tdm_error(BOOT, "TANDEM_SHM_FD=%d is not an open descriptor: %m (start with mpirun)",
                      info.shm_fd);
            return -EBADF;
        }
        /* keep our own children (e.g. a shell in MPI_Comm_spawn later) from inheriting it */
        fcntl(info.shm_fd, F_SETFD, FD_CLOEXEC);
        if (info.ctl_fd >= 0)
            fcntl(info.ctl_fd, F_SETFD, FD_CLOEXEC);
    }
    tdm_log_set_rank(info.rank);
    *info_p = info;
    return 0;
}

void tdm_boot_report(const tdm_boot_info_t *info, const char *line) {
    char buf[64];
    if (info->ctl_fd < 0)
        return;
    int n = snprintf(buf, sizeof(buf), "%s\n", line);
    /* a single small write to a pipe is atomic; EPIPE means mpirun is gone */
    while (write(info->ctl_fd, buf, (size_t)n) < 0 && errno == EINTR)
        ;
}
