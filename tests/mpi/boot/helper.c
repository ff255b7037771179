/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rank that starts another MPI program (a helper, here this program again) with
 * system() or fork + execve, as programs do to call a tool. The helper has files of its
 * own open on the descriptor numbers of the rank's TANDEM_SHM_FD and TANDEM_CTL_FD: a
 * 5 MiB data file (read-write or write-only) and a log file. It must start as a working
 * singleton (MPI_COMM_WORLD of size 1, messages to itself, a collective) and leave both
 * files as they were: never resize, map or write a file it was not given. The rank's job
 * goes on unaffected, and the rank's environment holds no launch variable after MPI_Init.
 *
 * usage: helper MODE [rw|wo]
 *   system   system() with the environment the library leaves (no launch variables)
 *   saved    the launch variables, saved before MPI_Init, are put back before system()
 *            (a program that saves and restores its environment)
 *   execve   fork + execve with the saved launch variables in the environment passed
 *   inherit  as saved, and the rank's own segment and control descriptors are passed on
 *            (close-on-exec cleared): the helper holds the job's real descriptors but is
 *            not the process mpirun started as that rank
 *   rw|wo    how the helper opens its data file (default rw)
 * (internal) helper child RANK ACCESS SHMFD CTLFD DATA LOG
 */
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DATA_BYTES (5u << 20)

static const char *const launch_vars[] = {
    "TANDEM_RANK",   "TANDEM_SIZE",   "TANDEM_LOCAL_RANK", "TANDEM_LOCAL_SIZE",
    "TANDEM_SHM_FD", "TANDEM_CTL_FD", "TANDEM_JOBID",      "TANDEM_OVERSUBSCRIBED"};
#define NVARS (sizeof(launch_vars) / sizeof(launch_vars[0]))

static int errs;
static const char *who = "rank";
static int me;

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && ++errs <= 20) {                                                            \
            fprintf(stderr, "%s %d line %d: ", who, me, __LINE__);                                 \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static unsigned char pattern(int rank, size_t i) {
    return (unsigned char)(i * 7 + (size_t)rank * 13 + (i >> 12));
}

/* A singleton works: messages to itself (eager and rendezvous sizes) and collectives. */
static void check_singleton(void) {
    int size = -1, rank = -1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(size == 1 && rank == 0, "helper is rank %d of %d, not a singleton", rank, size);
    size_t n = 1u << 20;
    unsigned char *a = malloc(n), *b = calloc(n, 1);
    for (size_t i = 0; i < n; i++)
        a[i] = (unsigned char)i;
    MPI_Sendrecv(a, (int)n, MPI_BYTE, 0, 5, b, (int)n, MPI_BYTE, 0, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(memcmp(a, b, n) == 0, "1 MiB message to itself arrived wrong");
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == 1, "Allreduce on the singleton gave %d", sum);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Barrier(dup);
    MPI_Comm_free(&dup);
    free(a);
    free(b);
}

static void check_file(int fd, const char *path, size_t want, int rank, ino_t ino) {
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_ino == ino, "descriptor %d no longer holds %s", fd, path);
    CHECK(stat(path, &st) == 0 && (size_t)st.st_size == want,
          "%s is %lld bytes after MPI_Init, not %zu", path, (long long)st.st_size, want);
    if (!want)
        return;
    int rd = open(path, O_RDONLY);
    unsigned char *buf = malloc(want);
    size_t got = 0;
    ssize_t n;
    while (rd >= 0 && got < want && (n = read(rd, buf + got, want - got)) > 0)
        got += (size_t)n;
    size_t bad = 0;
    for (size_t i = 0; i < got; i++)
        bad += buf[i] != pattern(rank, i);
    CHECK(got == want && bad == 0, "%s: %zu of %zu bytes read back, %zu changed", path, got, want,
          bad);
    free(buf);
    if (rd >= 0)
        close(rd);
}

/* The helper: own files on the rank's descriptor numbers, then MPI_Init. */
static int child(int argc, char **argv) {
    who = "helper of rank";
    if (argc < 8) {
        fprintf(stderr, "helper child: arguments missing\n");
        return 2;
    }
    me = atoi(argv[2]);
    const char *access = argv[3];
    int shm_fd = atoi(argv[4]), ctl_fd = atoi(argv[5]);
    const char *data = argv[6], *log = argv[7];
    struct stat st;
    ino_t data_ino = 0, log_ino = 0;
    if (strcmp(data, "-") != 0) {
        int fd = open(data, strcmp(access, "wo") ? O_RDWR : O_WRONLY);
        CHECK(fd >= 0 && dup2(fd, shm_fd) == shm_fd, "cannot open %s on %d: %s", data, shm_fd,
              strerror(errno));
        if (fd != shm_fd)
            close(fd);
        fstat(shm_fd, &st);
        data_ino = st.st_ino;
        fd = open(log, O_WRONLY | O_APPEND);
        CHECK(fd >= 0 && dup2(fd, ctl_fd) == ctl_fd, "cannot open %s on %d: %s", log, ctl_fd,
              strerror(errno));
        if (fd != ctl_fd)
            close(fd);
        fstat(ctl_fd, &st);
        log_ino = st.st_ino;
    }
    MPI_Init(&argc, &argv);
    check_singleton();
    MPI_Finalize();
    if (data_ino) {
        check_file(shm_fd, data, DATA_BYTES, me, data_ino);
        check_file(ctl_fd, log, 0, me, log_ino);
    }
    return errs ? 1 : 0;
}

static char *saved[NVARS];

static void put_back_saved(void) {
    for (size_t i = 0; i < NVARS; i++)
        if (saved[i])
            setenv(launch_vars[i], saved[i], 1);
}

static void make_data(const char *path, int rank) {
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; f && i < DATA_BYTES; i++)
        fputc(pattern(rank, i), f);
    CHECK(f && fclose(f) == 0, "cannot write %s", path);
}

static void set_cloexec(const char *num, int on) {
    if (num)
        fcntl(atoi(num), F_SETFD, on ? FD_CLOEXEC : 0);
}

/* Start the helper the way MODE says; its exit status, or -1. */
static int run_helper(const char *mode, const char *access, const char *self, int rank) {
    char data[] = "/tmp/tandem-helper-data-XXXXXX", log[] = "/tmp/tandem-helper-log-XXXXXX";
    int dfd = mkstemp(data), lfd = mkstemp(log);
    CHECK(dfd >= 0 && lfd >= 0, "mkstemp failed: %s", strerror(errno));
    close(dfd);
    close(lfd);
    make_data(data, rank);
    int inherit = !strcmp(mode, "inherit");
    char rk[16];
    snprintf(rk, sizeof(rk), "%d", rank);
    const char *shm = saved[4] ? saved[4] : "-1", *ctl = saved[5] ? saved[5] : "-1";
    const char *d = inherit ? "-" : data, *l = inherit ? "-" : log;
    int status = -1;
    if (!strcmp(mode, "execve")) {
        extern char **environ;
        size_t n = 0;
        while (environ[n])
            n++;
        char **envp = calloc(n + NVARS + 1, sizeof(char *));
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            envp[k++] = environ[i];
        for (size_t i = 0; i < NVARS; i++) {
            if (!saved[i])
                continue;
            size_t len = strlen(launch_vars[i]) + strlen(saved[i]) + 2;
            envp[k] = malloc(len);
            snprintf(envp[k++], len, "%s=%s", launch_vars[i], saved[i]);
        }
        char *args[] = {(char *)self, "child",   rk,  (char *)access, (char *)shm, (char *)ctl,
                        (char *)d,    (char *)l, NULL};
        pid_t pid = fork();
        if (pid == 0) {
            execve(self, args, envp);
            _exit(127);
        }
        if (pid > 0)
            waitpid(pid, &status, 0);
        free(envp);
    } else {
        if (strcmp(mode, "system") != 0)
            put_back_saved();
        if (inherit) {
            set_cloexec(saved[4], 0);
            set_cloexec(saved[5], 0);
        }
        char cmd[4096 + 512];
        snprintf(cmd, sizeof(cmd), "'%s' child %s %s %s %s %s %s", self, rk, access, shm, ctl, d,
                 l);
        status = system(cmd);
        if (inherit) {
            set_cloexec(saved[4], 1);
            set_cloexec(saved[5], 1);
        }
    }
    /* the helper never changed these, whatever happened to it */
    struct stat st;
    CHECK(stat(data, &st) == 0 && st.st_size == DATA_BYTES,
          "the helper's data file is %lld bytes, not %u", (long long)st.st_size, DATA_BYTES);
    CHECK(stat(log, &st) == 0 && st.st_size == 0, "the helper's log file got %lld bytes",
          (long long)st.st_size);
    unlink(data);
    unlink(log);
    return status;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "child"))
        return child(argc, argv);
    const char *mode = argc > 1 ? argv[1] : "system";
    const char *access = argc > 2 ? argv[2] : "rw";
    for (size_t i = 0; i < NVARS; i++) {
        const char *v = getenv(launch_vars[i]);
        saved[i] = v ? strdup(v) : NULL;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = 0;

    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* the launch variables are read once and removed: children do not inherit them */
    for (size_t i = 0; i < NVARS; i++)
        CHECK(!getenv(launch_vars[i]), "%s is still in the environment after MPI_Init",
              launch_vars[i]);

    int status = run_helper(mode, access, self, me);
    CHECK(status == 0, "the helper (%s, %s) ended with status %#x", mode, access, status);

    /* the job itself is unaffected: a rendezvous-size ring exchange and a collective */
    size_t bytes = 1u << 20;
    unsigned char *out = malloc(bytes), *in = calloc(bytes, 1);
    for (size_t i = 0; i < bytes; i++)
        out[i] = pattern(me, i);
    int right = (me + 1) % size, left = (me + size - 1) % size;
    MPI_Sendrecv(out, (int)bytes, MPI_BYTE, right, 9, in, (int)bytes, MPI_BYTE, left, 9,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    size_t bad = 0;
    for (size_t i = 0; i < bytes; i++)
        bad += in[i] != pattern(left, i);
    CHECK(bad == 0, "%zu bytes from rank %d arrived wrong after the helper ran", bad, left);
    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && total == 0)
        printf(" No Errors\n");
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
