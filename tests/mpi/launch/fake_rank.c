/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in for an MPI program that speaks the launcher contract of src/boot/boot.h
 * directly (no library), so that mpirun can be tested on its own.
 *
 * usage: fake_rank SPEC...
 *   SPEC is R=STEPS (for rank R) or *=STEPS (for every rank without its own SPEC);
 *   STEPS is a comma-separated list run in order, then the rank exits 0:
 *     init         write "I <pid>" on TANDEM_CTL_FD (what MPI_Init does)
 *     fin          write "F" (what MPI_Finalize does)
 *     abort:N      write "A N" and exit N (what MPI_Abort does)
 *     fatal:N      write "E N" and exit N (what a fatal MPI error does)
 *     exit:N       exit with status N
 *     kill:S       raise signal S
 *     sleep:MS     sleep MS milliseconds
 *     hang         sleep until killed
 *     ignterm      ignore SIGTERM (so only SIGKILL ends the rank)
 *     dumper       on SIGUSR1 print "rank R dumped" and write "D" (what the library's
 *                  pending-operations dump does)
 *     ignusr1      ignore SIGUSR1 (a rank that cannot answer mpirun's request for a dump)
 *     trap         on SIGINT/SIGTERM print "rank R got signal S" and exit 128+S
 *     cat          copy standard input to standard output until end of file
 *     print:TEXT   print "TEXT from rank R" on stdout
 *     eprint:TEXT  print "TEXT from rank R" on stderr
 *     lines:N      print N numbered lines "rank R line I" on stdout
 *     partial:TEXT print "TEXT" on stdout without a newline
 *     env          print the TANDEM_* contract variables
 *     fds          check the contract descriptors (memfd of the job with its stamp, control
 *                  pipe)
 *     affinity     print "rank R cpus LIST"
 *     spawn        start a child that sleeps (it stays in the rank's process group)
 *     spawnsid     start a child that calls setsid() and sleeps (escapes the group)
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "boot/boot.h"

static int rank = -1;
static int ctl_fd = -1;

static void ctl(const char *line) {
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%s\n", line);
    if (ctl_fd < 0) {
        fprintf(stderr, "fake_rank: no TANDEM_CTL_FD\n");
        exit(90);
    }
    if (write(ctl_fd, buf, (size_t)n) != n) {
        fprintf(stderr, "fake_rank: rank %d: write to TANDEM_CTL_FD failed: %s\n", rank,
                strerror(errno));
        exit(91);
    }
}

static void on_signal(int sig) {
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "rank %d got signal %d\n", rank, sig);
    if (write(1, buf, (size_t)n) < 0) {
        /* nothing to do */
    }
    _exit(128 + sig);
}

static void on_usr1(int sig) {
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "rank %d dumped\n", rank);
    (void)sig;
    if (write(1, buf, (size_t)n) < 0 || write(ctl_fd, "D\n", 2) < 0) {
        /* nothing to do */
    }
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static long env_long(const char *name) {
    const char *v = getenv(name);
    return v ? strtol(v, NULL, 10) : -1;
}

static void check_fds(void) {
    long shm = env_long("TANDEM_SHM_FD");
    struct stat st;
    char path[64], target[256];
    if (shm < 0 || fstat((int)shm, &st) != 0) {
        printf("rank %d: TANDEM_SHM_FD=%ld is not open\n", rank, shm);
        exit(92);
    }
    snprintf(path, sizeof(path), "/proc/self/fd/%ld", shm);
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    target[n > 0 ? n : 0] = 0;
    if (!strstr(target, "memfd:" TDM_BOOT_MEMFD_NAME)) {
        printf("rank %d: TANDEM_SHM_FD points at '%s', not a memfd\n", rank, target);
        exit(93);
    }
    /* the stamp names this job and this rank's control pipe; the memfd cannot shrink */
    tdm_boot_stamp_t stamp;
    tdm_boot_slot_t slot;
    struct stat cst;
    const char *jobid = getenv("TANDEM_JOBID");
    if (pread((int)shm, &stamp, sizeof(stamp), 0) != (ssize_t)sizeof(stamp) ||
        stamp.magic != TDM_BOOT_STAMP_MAGIC || !jobid || strcmp(stamp.jobid, jobid) != 0 ||
        (long)stamp.size != env_long("TANDEM_SIZE") ||
        pread((int)shm, &slot, sizeof(slot),
              (off_t)(sizeof(stamp) + (size_t)rank * sizeof(slot))) != (ssize_t)sizeof(slot) ||
        fstat(ctl_fd, &cst) != 0 || slot.ctl_ino != (uint64_t)cst.st_ino) {
        printf("rank %d: the segment's stamp does not name this job and control pipe\n", rank);
        exit(97);
    }
    if (fcntl((int)shm, F_GET_SEALS) != (F_SEAL_SHRINK | F_SEAL_SEAL) ||
        ftruncate((int)shm, 0) == 0) {
        printf("rank %d: the segment is not sealed against shrinking\n", rank);
        exit(98);
    }
    /* every rank sizes it the same way; the mapping is shared by the job */
    if (ftruncate((int)shm, (off_t)stamp.seg_offset + 4096) != 0) {
        printf("rank %d: ftruncate of the segment failed: %s\n", rank, strerror(errno));
        exit(94);
    }
    if (fcntl(ctl_fd, F_GETFD) < 0) {
        printf("rank %d: TANDEM_CTL_FD is not open\n", rank);
        exit(95);
    }
    /* none of mpirun's own descriptors (pipes of other ranks, its signalfd, ...) may
     * leak into a rank; what mpirun itself inherited is passed on and not judged here */
    for (int fd = 3; fd < 1024; fd++) {
        if (fd == shm || fd == ctl_fd || fcntl(fd, F_GETFD) < 0)
            continue;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        n = readlink(path, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        if (!strncmp(target, "pipe:", 5) || !strncmp(target, "memfd:", 6) ||
            !strncmp(target, "anon_inode:", 11)) {
            printf("rank %d: descriptor %d (%s) leaked from mpirun\n", rank, fd, target);
            exit(96);
        }
    }
    printf("rank %d fds ok\n", rank);
}

static void spawn(int new_session) {
    pid_t pid = fork();
    if (pid == 0) {
        if (new_session)
            setsid();
        /* keep no descriptor of the job open: the test checks processes, not pipes */
        for (int fd = 0; fd < 1024; fd++)
            close(fd);
        sleep_ms(600 * 1000);
        _exit(0);
    }
}

static void step(const char *s) {
    const char *arg = strchr(s, ':');
    arg = arg ? arg + 1 : "";
    if (!strcmp(s, "init")) {
        char buf[32];
        snprintf(buf, sizeof(buf), "I %d", (int)getpid());
        ctl(buf);
    } else if (!strcmp(s, "fin")) {
        ctl("F");
    } else if (!strncmp(s, "abort:", 6)) {
        char buf[32];
        snprintf(buf, sizeof(buf), "A %d", atoi(arg));
        fflush(NULL);
        ctl(buf);
        exit(atoi(arg));
    } else if (!strncmp(s, "fatal:", 6)) {
        char buf[32];
        snprintf(buf, sizeof(buf), "E %d", atoi(arg));
        fflush(NULL);
        ctl(buf);
        exit(atoi(arg));
    } else if (!strncmp(s, "exit:", 5)) {
        fflush(NULL);
        exit(atoi(arg));
    } else if (!strncmp(s, "kill:", 5)) {
        fflush(NULL);
        raise(atoi(arg));
    } else if (!strncmp(s, "sleep:", 6)) {
        sleep_ms(atol(arg));
    } else if (!strcmp(s, "hang")) {
        fflush(NULL);
        for (;;)
            pause();
    } else if (!strcmp(s, "dumper")) {
        signal(SIGUSR1, on_usr1);
    } else if (!strcmp(s, "ignusr1")) {
        signal(SIGUSR1, SIG_IGN);
    } else if (!strcmp(s, "ignterm")) {
        signal(SIGTERM, SIG_IGN);
    } else if (!strcmp(s, "trap")) {
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
    } else if (!strcmp(s, "cat")) {
        int c;
        while ((c = getchar()) != EOF)
            putchar(c);
        fflush(stdout);
    } else if (!strncmp(s, "print:", 6)) {
        printf("%s from rank %d\n", arg, rank);
        fflush(stdout);
    } else if (!strncmp(s, "eprint:", 7)) {
        fprintf(stderr, "%s from rank %d\n", arg, rank);
    } else if (!strncmp(s, "lines:", 6)) {
        long n = atol(arg);
        for (long i = 0; i < n; i++)
            printf("rank %d line %ld\n", rank, i);
        fflush(stdout);
    } else if (!strncmp(s, "partial:", 8)) {
        printf("%s", arg);
        fflush(stdout);
    } else if (!strcmp(s, "env")) {
        const char *names[] = {"TANDEM_RANK",       "TANDEM_SIZE",  "TANDEM_LOCAL_RANK",
                               "TANDEM_LOCAL_SIZE", "TANDEM_JOBID", "TANDEM_OVERSUBSCRIBED"};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            const char *v = getenv(names[i]);
            printf("rank %d %s=%s\n", rank, names[i], v ? v : "(unset)");
        }
        fflush(stdout);
    } else if (!strcmp(s, "fds")) {
        check_fds();
        fflush(stdout);
    } else if (!strcmp(s, "affinity")) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof(set), &set);
        printf("rank %d cpus", rank);
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                printf(" %d", c);
        printf("\n");
        fflush(stdout);
    } else if (!strcmp(s, "spawn")) {
        spawn(0);
    } else if (!strcmp(s, "spawnsid")) {
        spawn(1);
    } else {
        fprintf(stderr, "fake_rank: unknown step '%s'\n", s);
        exit(99);
    }
}

int main(int argc, char **argv) {
    const char *steps = NULL;
    rank = (int)env_long("TANDEM_RANK");
    ctl_fd = (int)env_long("TANDEM_CTL_FD");
    char own[16];
    snprintf(own, sizeof(own), "%d=", rank);
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], own, strlen(own)))
            steps = argv[i] + strlen(own);
        else if (!steps && !strncmp(argv[i], "*=", 2))
            steps = argv[i] + 2;
    }
    /* an own SPEC wins over * wherever it stands */
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], own, strlen(own)))
            steps = argv[i] + strlen(own);
    if (!steps)
        return 0;
    char *copy = strdup(steps), *save = NULL;
    for (char *s = strtok_r(copy, ",", &save); s; s = strtok_r(NULL, ",", &save))
        step(s);
    free(copy);
    return 0;
}
