/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tdm_boot_init takes the rank the launch variables name only when the descriptors prove
 * it (src/boot/boot.h): each case builds a job the way mpirun does (memfd named after the
 * job, stamp, seals, the control pipe's inode in the rank's slot), spoils one thing, sets
 * the variables and calls tdm_boot_init in a child process (the tunables are read once per
 * process). A spoiled case must give a singleton and leave the file that sits on the
 * descriptor number exactly as it was, and say nothing at the default log level (a helper's
 * output is its own), except for the segment of an mpirun that makes no stamp (another
 * Tandem version): that one warns. The genuine job gives the rank, the segment's offset and
 * the control pipe, both close-on-exec. Either way no launch variable is left in the
 * environment.
 */
#include "boot/boot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SIZE 2
#define RANK 1
#define JOBID "4242-1700000000123"
#define FILE_BYTES (64 * 1024)

static int failed, passed;

typedef struct job {
    int shm;    /* the job's memfd, as mpirun makes it */
    int ctl[2]; /* the rank's control pipe */
    size_t seg_offset;
} job_t;

static int make_memfd(const char *name, bool seal, const char *jobid, int size) {
    int fd = memfd_create(name, MFD_CLOEXEC | (seal ? MFD_ALLOW_SEALING : 0));
    size_t bytes = (tdm_boot_stamp_bytes(size) + 4095) / 4096 * 4096;
    tdm_boot_stamp_t stamp = {.magic = TDM_BOOT_STAMP_MAGIC,
                              .version = TDM_BOOT_STAMP_VERSION,
                              .size = (uint32_t)size,
                              .seg_offset = bytes};
    snprintf(stamp.jobid, sizeof(stamp.jobid), "%s", jobid);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0 ||
        pwrite(fd, &stamp, sizeof(stamp), 0) != (ssize_t)sizeof(stamp) ||
        (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0)) {
        perror("boot_verify: making a memfd");
        exit(1);
    }
    return fd;
}

static void stamp_ctl(int shm, int rank, int ctl_wr) {
    struct stat st;
    tdm_boot_slot_t slot = {0};
    fstat(ctl_wr, &st);
    slot.ctl_ino = (uint64_t)st.st_ino;
    if (pwrite(shm, &slot, sizeof(slot),
               (off_t)(sizeof(tdm_boot_stamp_t) + (size_t)rank * sizeof(slot))) != sizeof(slot)) {
        perror("boot_verify: stamping the control pipe");
        exit(1);
    }
}

static job_t make_job(void) {
    job_t j;
    j.shm = make_memfd(TDM_BOOT_MEMFD_NAME JOBID, true, JOBID, SIZE);
    if (pipe2(j.ctl, O_CLOEXEC) != 0)
        exit(1);
    stamp_ctl(j.shm, RANK, j.ctl[1]);
    j.seg_offset = 4096;
    return j;
}

static void close_job(job_t *j) {
    close(j->shm);
    close(j->ctl[0]);
    close(j->ctl[1]);
}

/* A file of our own with known contents; its descriptor opened with `flags`. */
static int make_file(char *path, int flags) {
    strcpy(path, "/tmp/tandem-boot-verify-XXXXXX");
    int fd = mkstemp(path);
    unsigned char buf[FILE_BYTES];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)(i * 31 + 5);
    if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
        perror("boot_verify: making a file");
        exit(1);
    }
    close(fd);
    fd = open(path, flags | O_CLOEXEC);
    if (fd < 0)
        exit(1);
    return fd;
}

static bool file_intact(const char *path) {
    unsigned char buf[FILE_BYTES + 1];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
    if (fd >= 0)
        close(fd);
    if (n != FILE_BYTES)
        return false;
    for (size_t i = 0; i < FILE_BYTES; i++)
        if (buf[i] != (unsigned char)(i * 31 + 5))
            return false;
    return true;
}

typedef struct outcome {
    int rc, rank, size, ctl_fd, shm_cloexec, ctl_cloexec, vars_left;
    size_t shm_offset;
    char said[256]; /* what tdm_boot_init wrote on stderr */
} outcome_t;

static const char *const vars[] = {"TANDEM_RANK",       "TANDEM_SIZE",          "TANDEM_LOCAL_RANK",
                                   "TANDEM_LOCAL_SIZE", "TANDEM_SHM_FD",        "TANDEM_CTL_FD",
                                   "TANDEM_JOBID",      "TANDEM_OVERSUBSCRIBED"};

/* tdm_boot_init in a child with the variables naming `shm` and `ctl` (they must be
 * inheritable: the child is forked, not exec'd, so they are). */
static outcome_t boot_child(int shm, int ctl, int size, const char *jobid) {
    int p[2], e[2];
    outcome_t o = {.rc = -999};
    if (pipe(p) != 0 || pipe(e) != 0)
        exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(e[1], 2);
        char v[32];
        snprintf(v, sizeof(v), "%d", RANK);
        setenv("TANDEM_RANK", v, 1);
        setenv("TANDEM_LOCAL_RANK", v, 1);
        snprintf(v, sizeof(v), "%d", size);
        setenv("TANDEM_SIZE", v, 1);
        setenv("TANDEM_LOCAL_SIZE", v, 1);
        snprintf(v, sizeof(v), "%d", shm);
        setenv("TANDEM_SHM_FD", v, 1);
        snprintf(v, sizeof(v), "%d", ctl);
        setenv("TANDEM_CTL_FD", v, 1);
        setenv("TANDEM_JOBID", jobid, 1);
        setenv("TANDEM_OVERSUBSCRIBED", "0", 1);
        tdm_boot_info_t info;
        outcome_t r = {0};
        r.rc = tdm_boot_init(&info);
        r.rank = info.rank;
        r.size = info.size;
        r.ctl_fd = info.ctl_fd;
        r.shm_offset = info.shm_offset;
        r.shm_cloexec = fcntl(shm, F_GETFD) == FD_CLOEXEC;
        r.ctl_cloexec = fcntl(ctl, F_GETFD) == FD_CLOEXEC;
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
            r.vars_left += getenv(vars[i]) != NULL;
        if (write(p[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
            _exit(1);
        _exit(0);
    }
    close(p[1]);
    close(e[1]);
    if (read(p[0], &o, sizeof(o)) != (ssize_t)sizeof(o))
        o.rc = -998;
    close(p[0]);
    waitpid(pid, NULL, 0);
    ssize_t n = read(e[0], o.said, sizeof(o.said) - 1);
    o.said[n > 0 ? n : 0] = 0;
    close(e[0]);
    return o;
}

static void report(const char *name, bool ok, const outcome_t *o) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr,
            "FAIL %s: rc %d, rank %d of %d, ctl_fd %d, offset %zu, cloexec %d/%d, %d launch "
            "variables left, said '%s'\n",
            name, o->rc, o->rank, o->size, o->ctl_fd, o->shm_offset, o->shm_cloexec, o->ctl_cloexec,
            o->vars_left, o->said);
}

static bool singleton(const outcome_t *o) {
    return o->rc == 0 && o->rank == 0 && o->size == 1 && o->ctl_fd == -1 && o->shm_offset == 0 &&
           o->vars_left == 0;
}

/* A spoiled job: singleton, and both files on the descriptor numbers untouched; `loud`:
 * a Tandem segment that is not this job's, which warns (anything else is quiet). */
static void expect_singleton(const char *name, bool loud, int shm, int ctl, int size,
                             const char *jobid, const char *shm_path, const char *ctl_path,
                             int pipe_rd) {
    outcome_t o = boot_child(shm, ctl, size, jobid);
    bool ok = singleton(&o) && (loud ? strstr(o.said, "boot warn") != NULL : !o.said[0]);
    if (shm_path && !file_intact(shm_path)) {
        fprintf(stderr, "FAIL %s: the file on TANDEM_SHM_FD changed\n", name);
        ok = false;
    }
    if (ctl_path && !file_intact(ctl_path)) {
        fprintf(stderr, "FAIL %s: the file on TANDEM_CTL_FD changed\n", name);
        ok = false;
    }
    if (pipe_rd >= 0) {
        char c;
        int fl = fcntl(pipe_rd, F_GETFL);
        fcntl(pipe_rd, F_SETFL, fl | O_NONBLOCK);
        if (read(pipe_rd, &c, 1) > 0) {
            fprintf(stderr, "FAIL %s: something was written on the control descriptor\n", name);
            ok = false;
        }
    }
    report(name, ok, &o);
}

int main(void) {
    char path[64], path2[64];

    /* the genuine job: the rank, the segment after the stamp, both descriptors cloexec */
    job_t j = make_job();
    outcome_t o = boot_child(j.shm, j.ctl[1], SIZE, JOBID);
    report("genuine",
           o.rc == 0 && o.rank == RANK && o.size == SIZE && o.ctl_fd == j.ctl[1] &&
               o.shm_offset == j.seg_offset && o.shm_cloexec && o.ctl_cloexec && o.vars_left == 0,
           &o);
    /* the same job again: the rank is taken (by the first child, gone or not) */
    expect_singleton("rank already taken", false, j.shm, j.ctl[1], SIZE, JOBID, NULL, NULL,
                     j.ctl[0]);
    close_job(&j);

    /* a data file of the process's own on the segment's number, read-write and write-only */
    j = make_job();
    int f = make_file(path, O_RDWR);
    expect_singleton("regular file rw", false, f, j.ctl[1], SIZE, JOBID, path, NULL, j.ctl[0]);
    close(f);
    unlink(path);
    f = make_file(path, O_WRONLY);
    expect_singleton("regular file wo", false, f, j.ctl[1], SIZE, JOBID, path, NULL, j.ctl[0]);
    close(f);
    unlink(path);

    /* the job's memfd opened read-only (through /proc): not usable, not taken */
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", j.shm);
    f = open(proc, O_RDONLY | O_CLOEXEC);
    if (f >= 0) {
        expect_singleton("memfd read-only", false, f, j.ctl[1], SIZE, JOBID, NULL, NULL, j.ctl[0]);
        close(f);
    }

    /* memfds that are not the job's: unsealed, another name, another job id or size */
    int m = make_memfd(TDM_BOOT_MEMFD_NAME JOBID, false, JOBID, SIZE);
    stamp_ctl(m, RANK, j.ctl[1]);
    expect_singleton("memfd not sealed", true, m, j.ctl[1], SIZE, JOBID, NULL, NULL, j.ctl[0]);
    close(m);
    m = make_memfd(TDM_BOOT_MEMFD_NAME "1-1", true, JOBID, SIZE);
    stamp_ctl(m, RANK, j.ctl[1]);
    expect_singleton("memfd of another name", true, m, j.ctl[1], SIZE, JOBID, NULL, NULL, j.ctl[0]);
    close(m);
    m = make_memfd(TDM_BOOT_MEMFD_NAME JOBID, true, "1-1", SIZE);
    stamp_ctl(m, RANK, j.ctl[1]);
    expect_singleton("stamp of another job", true, m, j.ctl[1], SIZE, JOBID, NULL, NULL, j.ctl[0]);
    close(m);
    expect_singleton("stamp of another size", true, j.shm, j.ctl[1], SIZE + 1, JOBID, NULL, NULL,
                     j.ctl[0]);
    /* a file in /dev/shm (tmpfs: it has seals, but not mpirun's) with a copy of the stamp;
     * not named tandem*: run_test.py fails an MPI test running beside this one if a tandem*
     * object appears in /dev/shm during it (and removes it) */
    snprintf(path2, sizeof(path2), "/dev/shm/unit-boot-verify-%d", (int)getpid());
    int t = open(path2, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (t >= 0) {
        unlink(path2);
        char page[4096];
        if (pread(j.shm, page, sizeof(page), 0) != (ssize_t)sizeof(page) ||
            pwrite(t, page, sizeof(page), 0) != (ssize_t)sizeof(page))
            exit(1);
        expect_singleton("tmpfs file", false, t, j.ctl[1], SIZE, JOBID, NULL, NULL, j.ctl[0]);
        close(t);
    }
    /* not open at all */
    expect_singleton("segment descriptor closed", false, 900, j.ctl[1], SIZE, JOBID, NULL, NULL,
                     j.ctl[0]);

    /* the job's memfd, but a control descriptor that is not the rank's pipe */
    f = make_file(path, O_WRONLY | O_APPEND);
    expect_singleton("control is a file", false, j.shm, f, SIZE, JOBID, NULL, path, -1);
    close(f);
    unlink(path);
    int other[2];
    if (pipe2(other, O_CLOEXEC) != 0)
        exit(1);
    expect_singleton("control is another pipe", false, j.shm, other[1], SIZE, JOBID, NULL, NULL,
                     other[0]);
    expect_singleton("control descriptor closed", false, j.shm, 901, SIZE, JOBID, NULL, NULL, -1);
    close(other[0]);
    close(other[1]);
    /* after all that, the rank is still free for the process mpirun started */
    o = boot_child(j.shm, j.ctl[1], SIZE, JOBID);
    report("genuine after the refusals", o.rc == 0 && o.rank == RANK && o.ctl_fd == j.ctl[1], &o);
    close_job(&j);

    /* the segment of an mpirun that seals and stamps nothing (an older Tandem): a singleton
     * that says so, since the job would otherwise run as so many singletons unnoticed */
    j = make_job();
    m = memfd_create("tandem-shm", MFD_CLOEXEC);
    if (m < 0 || ftruncate(m, 0) != 0)
        exit(1);
    o = boot_child(m, j.ctl[1], SIZE, JOBID);
    report("older mpirun's segment",
           singleton(&o) && strstr(o.said, "boot warn") &&
               strstr(o.said, "another Tandem installation"),
           &o);
    struct stat mst;
    if (fstat(m, &mst) != 0 || mst.st_size != 0) {
        fprintf(stderr, "FAIL older mpirun's segment: resized to %lld bytes\n",
                (long long)mst.st_size);
        failed++;
    }
    close(m);
    close_job(&j);

    /* no launch variables at all: a singleton, and none appear */
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
            unsetenv(vars[i]);
        tdm_boot_info_t info;
        _exit(tdm_boot_init(&info) == 0 && info.size == 1 && info.ctl_fd == -1 ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    o = (outcome_t){.rc = st};
    report("no variables", WIFEXITED(st) && WEXITSTATUS(st) == 0, &o);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
