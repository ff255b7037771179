/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpirun: starts the ranks of a single-node Tandem MPI job following the launcher
 * contract of src/boot/boot.h, relays their input and output, and ends the whole job
 * within a second as soon as one rank fails. Nothing it starts outlives it.
 *
 * Process model: every rank is the leader of its own process group, so a signal to
 * the group also reaches the rank's own children. mpirun is a child subreaper, so a
 * grandchild that escapes its group (setsid, double fork) is reparented to mpirun and
 * killed when the job ends. Ranks get PR_SET_PDEATHSIG so they die with mpirun.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "../src/boot/boot.h"

#ifndef TANDEM_VERSION
#define TANDEM_VERSION "unknown"
#endif

/* Between SIGTERM and SIGKILL when a job is ended: long enough for a rank to flush its
 * output, short enough that the whole job is gone well within a second. */
#define GRACE_MS 400
/* On --timeout, how long ranks that were asked for their pending operations (SIGUSR1) may
 * take to print them before the job is ended; each says "D" when done, so this is only
 * waited out when a rank cannot answer. */
#define DUMP_WAIT_MS 2000
/* How long ranks may stay unreaped after SIGKILL (uninterruptible sleep) before mpirun
 * gives up waiting for them. */
#define KILL_WAIT_MS 5000
#define STATUS_TIMEOUT 124
#define STATUS_NO_FINALIZE 1
#define STATUS_USAGE 2
#define LINE_MAX_RELAY 4096
#define MAX_RANKS 4096

enum { BIND_AUTO, BIND_NONE, BIND_CORE };
enum { STAGE_SETUP, STAGE_BIND, STAGE_WDIR, STAGE_EXEC }; /* where starting a rank failed */
enum { STDIN_NULL, STDIN_INHERIT, STDIN_RELAY };

typedef struct relay {
    int fd;     /* read end of the rank's stdout or stderr pipe, -1 when closed */
    int out_fd; /* 1 or 2 */
    size_t len;
    char buf[LINE_MAX_RELAY];
} relay_t;

typedef struct rank {
    int rank;
    pid_t pid;   /* 0 until started; kept after exit for messages */
    int running; /* started and not reaped yet */
    int exec_failed;
    int ctl_fd; /* read end of the control pipe, -1 once closed */
    size_t ctl_len;
    char ctl_buf[128];
    int inited, finalized;
    int dump_asked, dumped; /* SIGUSR1 sent on --timeout; "D" came back */
    relay_t out[2];         /* --tag-output only */
} rank_t;

typedef struct opts {
    int np;
    double timeout_s; /* 0: none */
    int tag_output;
    int bind;
    const char *wdir;
    const char *hosts;    /* -hosts/-H naming another host: the job is Hydra's */
    const char *hostfile; /* --hostfile: the job is Hydra's */
    const char *ppn;      /* -ppn for Hydra (ignored on this node alone) */
    char **argv;          /* program and its arguments */
} opts_t;

static struct job {
    opts_t opt;
    rank_t *ranks;
    int running;
    int ending;          /* teardown started */
    int dumping;         /* timed out: waiting for the ranks' pending operations first */
    int64_t dump_until;  /* when to stop waiting for them */
    int killed;          /* SIGKILL sent */
    int64_t kill_at_ms;  /* when to send SIGKILL */
    int64_t deadline_ms; /* --timeout; 0 for none */
    int64_t killed_at_ms;
    int status;
    int status_set;
    int sigfd;
    int stdin_mode;
    int stdin_src; /* fd 0 while relaying, -1 when done */
    int stdin_dst; /* write end of rank 0's stdin pipe, -1 when done */
    size_t stdin_len, stdin_off;
    char stdin_buf[65536];
    cpu_set_t cpus;
    int ncpus;
    int bind_block; /* CPUs per rank when bound: 1 for --bind-to core */
    sigset_t oldmask;
} job;

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    int n = snprintf(buf, sizeof(buf), "mpirun: ");
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(buf);
    buf[len++] = '\n';
    /* one write per message so that it is not interleaved with relayed output */
    ssize_t w = write(2, buf, len);
    (void)w;
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: mpirun [options] -n N program [args...]\n"
            "Start N ranks of an MPI program on this node (Tandem MPI %s).\n"
            "\n"
            "options:\n"
            "  -n, -np N            number of ranks (default 1)\n"
            "  --timeout S          end the job after S seconds (exit status 124);\n"
            "                       MPIEXEC_TIMEOUT=S in the environment does the same\n"
            "  --tag-output         prefix every output line with [rank]\n"
            "                       (also -prepend-rank, -l)\n"
            "  --bind-to core|hwthread|none\n"
            "                       core: bind rank r to the r-th CPU mpirun may use\n"
            "                       (modulo their number); by default, 2 or more ranks\n"
            "                       that do not outnumber those CPUs take equal blocks\n"
            "                       of them in order (rank r the r-th), else none\n"
            "  -x NAME[=VALUE]      export NAME (with VALUE) to the ranks\n"
            "  -env, -genv NAME VALUE  set NAME=VALUE for the ranks\n"
            "  -wdir DIR            working directory of the ranks\n"
            "  -h, --help           this help\n"
            "  -V, --version        print the version\n"
            "  -H, -host, -hosts H1[:N],H2...  --hostfile, -f FILE\n"
            "                       ranks on other hosts: the job is handed to MPICH's\n"
            "                       mpiexec.hydra (same program, arguments, -n, -wdir,\n"
            "                       --tag-output, --bind-to core, --timeout); this host\n"
            "                       alone stays here\n"
            "accepted for compatibility and ignored: --oversubscribe, --allow-run-as-root,\n"
            "  -ppn N (passed to mpiexec.hydra)\n"
            "\n"
            "The environment is passed to every rank. Standard input goes to rank 0 only.\n"
            "If a rank is killed, exits with a non-zero status, exits without calling\n"
            "MPI_Finalize or calls MPI_Abort, the whole job is ended within a second and\n"
            "mpirun exits with that rank's status (128+S for signal S). SIGINT, SIGTERM,\n"
            "SIGUSR1 and SIGUSR2 are forwarded to every rank. On SIGUSR1 each rank prints\n"
            "its pending MPI operations; --timeout asks for that before it ends the job.\n",
            TANDEM_VERSION);
}

static int parse_int(const char *opt, const char *s, int lo, int hi) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        msg("%s needs an integer between %d and %d, not '%s'", opt, lo, hi, s);
        exit(STATUS_USAGE);
    }
    return (int)v;
}

static double parse_seconds(const char *opt, const char *s) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || v > 1e7) {
        msg("%s needs a number of seconds, not '%s'", opt, s);
        exit(STATUS_USAGE);
    }
    return v;
}

static int is_this_host(const char *h) {
    char name[256];
    if (!strcmp(h, "localhost") || !strcmp(h, "127.0.0.1") || !strcmp(h, "::1"))
        return 1;
    if (gethostname(name, sizeof(name)) != 0)
        return 0;
    name[sizeof(name) - 1] = 0;
    if (!strcmp(h, name))
        return 1;
    /* short names on either side */
    size_t hl = strcspn(h, "."), nl = strcspn(name, ".");
    return hl == nl && !strncmp(h, name, hl);
}

/* Does the host list (host[:slots],...) name a host other than this one? */
static int names_other_host(const char *list) {
    char *copy = strdup(list), *save = NULL;
    int other = 0;
    for (char *h = strtok_r(copy, ",", &save); h && !other; h = strtok_r(NULL, ",", &save)) {
        h[strcspn(h, ":")] = 0; /* host:slots */
        other = *h && !is_this_host(h);
    }
    free(copy);
    return other;
}

/* A job for other hosts goes to MPICH's Hydra, which starts the ranks there through ssh and
 * speaks PMI to them (src/boot/pmi.c): the same program, arguments and options. */
static void hand_to_hydra(const opts_t *o) {
    char *argv[64 + 1024];
    int n = 0;
    char np[16], tmo[32];
    snprintf(np, sizeof(np), "%d", o->np);
    argv[n++] = "mpiexec.hydra";
    argv[n++] = "-n";
    argv[n++] = np;
    if (o->hosts) {
        argv[n++] = "-hosts";
        argv[n++] = (char *)o->hosts;
    }
    if (o->hostfile) {
        argv[n++] = "-f";
        argv[n++] = (char *)o->hostfile;
    }
    if (o->ppn) {
        argv[n++] = "-ppn";
        argv[n++] = (char *)o->ppn;
    }
    if (o->wdir) {
        argv[n++] = "-wdir";
        argv[n++] = (char *)o->wdir;
    }
    if (o->tag_output)
        argv[n++] = "-prepend-rank";
    if (o->bind == BIND_CORE) {
        argv[n++] = "-bind-to";
        argv[n++] = "core";
    }
    /* Hydra leaves ranks unbound, and unbound ranks bind themselves (TANDEM_BIND) unless
     * told that no binding was asked for */
    if (o->bind == BIND_NONE)
        setenv("TANDEM_BIND", "none", 1);
    /* Hydra's timeout is MPIEXEC_TIMEOUT, whole seconds */
    if (o->timeout_s > 0) {
        snprintf(tmo, sizeof(tmo), "%.0f", o->timeout_s < 1 ? 1 : o->timeout_s + 0.5);
        setenv("MPIEXEC_TIMEOUT", tmo, 1);
    }
    /* -x and -env were set in this environment, which Hydra passes on whole */
    for (int i = 0; o->argv[i]; i++) {
        if (n >= (int)(sizeof(argv) / sizeof(argv[0])) - 1) {
            msg("too many program arguments to hand to mpiexec.hydra");
            exit(STATUS_USAGE);
        }
        argv[n++] = o->argv[i];
    }
    argv[n] = NULL;
    execvp(argv[0], argv);
    int e = errno;
    msg("%s%s names other hosts: this mpirun starts jobs on this node only and hands others "
        "to MPICH's mpiexec.hydra, which %s (%s). Install Debian's mpich package "
        "(apt-get install mpich), or run: mpiexec.hydra -n %d %s %s %s ...",
        o->hostfile ? "--hostfile " : "--hosts ", o->hostfile ? o->hostfile : o->hosts,
        e == ENOENT ? "is not installed" : "cannot be started", strerror(e), o->np,
        o->hostfile ? "-f" : "-hosts", o->hostfile ? o->hostfile : o->hosts, o->argv[0]);
    exit(127);
}

/* Accept -opt, --opt; return the value of "-opt V" / "--opt=V" forms or NULL. */
static int opt_is(const char *arg, const char *name) {
    if (arg[0] != '-')
        return 0;
    arg += (arg[1] == '-') ? 2 : 1;
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

static const char *opt_value(int argc, char **argv, int *i) {
    const char *eq = strchr(argv[*i], '=');
    if (eq)
        return eq + 1;
    if (*i + 1 >= argc) {
        msg("option '%s' needs a value", argv[*i]);
        exit(STATUS_USAGE);
    }
    return argv[++*i];
}

static void parse_args(int argc, char **argv, opts_t *o) {
    int i;
    const char *v;
    o->np = 1;
    o->timeout_s = 0;
    o->tag_output = 0;
    o->bind = BIND_AUTO;
    o->wdir = NULL;
    o->hosts = o->hostfile = o->ppn = NULL;
    const char *env_timeout = getenv("MPIEXEC_TIMEOUT");
    if (env_timeout && *env_timeout)
        o->timeout_s = parse_seconds("MPIEXEC_TIMEOUT", env_timeout);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-')
            break;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (!strcmp(a, "-h") || opt_is(a, "help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "-V") || opt_is(a, "version")) {
            printf("mpirun (Tandem MPI) %s\n", TANDEM_VERSION);
            exit(0);
        } else if (opt_is(a, "n") || opt_is(a, "np") || opt_is(a, "c")) {
            v = opt_value(argc, argv, &i);
            o->np = parse_int("-n", v, 1, MAX_RANKS);
        } else if (opt_is(a, "timeout")) {
            o->timeout_s = parse_seconds("--timeout", opt_value(argc, argv, &i));
        } else if (opt_is(a, "tag-output") || opt_is(a, "prepend-rank") || opt_is(a, "l")) {
            o->tag_output = 1;
        } else if (opt_is(a, "bind-to") || opt_is(a, "bind")) {
            v = opt_value(argc, argv, &i);
            if (!strcmp(v, "core") || !strcmp(v, "hwthread") || !strcmp(v, "cpu"))
                o->bind = BIND_CORE;
            else if (!strcmp(v, "none"))
                o->bind = BIND_NONE;
            else {
                msg("--bind-to takes core, hwthread or none, not '%s'", v);
                exit(STATUS_USAGE);
            }
        } else if (opt_is(a, "x")) {
            v = opt_value(argc, argv, &i);
            const char *eq = strchr(v, '=');
            if (eq) {
                char *name = strndup(v, (size_t)(eq - v));
                setenv(name, eq + 1, 1);
                free(name);
            } /* a bare name is exported anyway: the whole environment is */
        } else if (opt_is(a, "env") || opt_is(a, "genv")) {
            if (i + 2 >= argc) {
                msg("option '%s' needs a name and a value", a);
                exit(STATUS_USAGE);
            }
            setenv(argv[i + 1], argv[i + 2], 1);
            i += 2;
        } else if (opt_is(a, "wdir") || opt_is(a, "wd")) {
            o->wdir = opt_value(argc, argv, &i);
        } else if (opt_is(a, "host") || opt_is(a, "hosts") || opt_is(a, "H")) {
            v = opt_value(argc, argv, &i);
            if (names_other_host(v))
                o->hosts = v;
        } else if (opt_is(a, "hostfile") || opt_is(a, "machinefile") || opt_is(a, "f")) {
            o->hostfile = opt_value(argc, argv, &i);
        } else if (opt_is(a, "ppn") || opt_is(a, "npernode") || opt_is(a, "N")) {
            o->ppn = opt_value(argc, argv, &i);
        } else if (opt_is(a, "oversubscribe") || opt_is(a, "allow-run-as-root")) {
            /* ignored: ranks always may outnumber CPUs; running as root is allowed */
        } else {
            msg("unknown option '%s' (see mpirun --help)", a);
            exit(STATUS_USAGE);
        }
    }
    if (i >= argc) {
        msg("no program given (see mpirun --help)");
        exit(STATUS_USAGE);
    }
    o->argv = argv + i;
    if (o->hosts || o->hostfile)
        hand_to_hydra(o);
}

/* ---- job state ---------------------------------------------------------- */

static void set_status(int status) {
    if (!job.status_set) {
        job.status = status;
        job.status_set = 1;
    }
}

static void signal_groups(int sig) {
    for (int r = 0; r < job.opt.np; r++) {
        rank_t *rk = &job.ranks[r];
        /* only unreaped ranks: their pid (and so their group id) cannot have been reused */
        if (rk->running && kill(-rk->pid, sig) != 0 && kill(rk->pid, sig) != 0 && errno != ESRCH)
            msg("cannot send signal %d to rank %d (pid %d): %s", sig, r, (int)rk->pid,
                strerror(errno));
    }
}

static void end_job(void) {
    if (job.ending)
        return;
    job.ending = 1;
    job.kill_at_ms = now_ms() + GRACE_MS;
    signal_groups(SIGTERM);
}

static void kill_job(void) {
    if (job.killed)
        return;
    job.ending = 1;
    job.dumping = 0;
    job.killed = 1;
    job.killed_at_ms = now_ms();
    signal_groups(SIGKILL);
    /* a job that is being killed needs no more input */
    if (job.stdin_dst >= 0) {
        close(job.stdin_dst);
        job.stdin_dst = -1;
    }
}

/* --timeout: ask every rank that runs MPI (it said "I") to print what it waits for; ranks
 * that never initialised MPI would only die of the signal. Returns how many were asked. */
static int ask_dumps(void) {
    int asked = 0;
    for (int r = 0; r < job.opt.np; r++) {
        rank_t *rk = &job.ranks[r];
        /* the rank alone, not its group: its own children have nothing to print */
        if (rk->running && rk->inited && kill(rk->pid, SIGUSR1) == 0) {
            rk->dump_asked = 1;
            asked++;
        }
    }
    return asked;
}

static int dumps_done(void) {
    for (int r = 0; r < job.opt.np; r++) {
        rank_t *rk = &job.ranks[r];
        if (rk->running && rk->dump_asked && !rk->dumped)
            return 0;
    }
    return 1;
}

static void fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(int status, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    if (job.ending)
        return; /* a consequence of the first failure, not news */
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    msg("%s; ending the job", buf);
    set_status(status);
    end_job();
}

/* ---- control lines from the library ------------------------------------- */

static void ctl_line(rank_t *rk, const char *line) {
    if (line[0] == 'I' && (line[1] == ' ' || line[1] == 0)) {
        /* again after "F" when a session starts the library anew (MPI-4 sessions):
         * it must be finalized again before the rank exits */
        rk->inited = 1;
        rk->finalized = 0;
    } else if (line[0] == 'F' && line[1] == 0) {
        rk->finalized = 1;
    } else if (line[0] == 'E' && (line[1] == ' ' || line[1] == 0)) {
        /* a fatal error (MPI_Init failed, errors are fatal): the rank said why on stderr */
        int code = atoi(line + 1);
        fail(code & 0xff, "rank %d (pid %d) stopped at a fatal MPI error (its message is above)",
             rk->rank, (int)rk->pid);
    } else if (line[0] == 'D' && line[1] == 0) {
        rk->dumped = 1;
    } else if (line[0] == 'A' && (line[1] == ' ' || line[1] == 0)) {
        int code = atoi(line + 1);
        fail(code & 0xff, "rank %d (pid %d) called MPI_Abort with error code %d", rk->rank,
             (int)rk->pid, code);
    } else {
        msg("rank %d (pid %d) sent an unknown control line '%s'", rk->rank, (int)rk->pid, line);
    }
}

static void ctl_close(rank_t *rk) {
    if (rk->ctl_fd >= 0) {
        close(rk->ctl_fd);
        rk->ctl_fd = -1;
    }
}

/* Read everything available on a rank's control pipe. */
static void ctl_read(rank_t *rk) {
    while (rk->ctl_fd >= 0) {
        ssize_t n = read(rk->ctl_fd, rk->ctl_buf + rk->ctl_len, sizeof(rk->ctl_buf) - rk->ctl_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            ctl_close(rk);
            return;
        }
        rk->ctl_len += (size_t)n;
        char *start = rk->ctl_buf, *nl;
        while ((nl = memchr(start, '\n', rk->ctl_len - (size_t)(start - rk->ctl_buf)))) {
            *nl = 0;
            ctl_line(rk, start);
            start = nl + 1;
        }
        rk->ctl_len -= (size_t)(start - rk->ctl_buf);
        memmove(rk->ctl_buf, start, rk->ctl_len);
        if (rk->ctl_len == sizeof(rk->ctl_buf)) {
            msg("rank %d (pid %d) sent an overlong control line", rk->rank, (int)rk->pid);
            rk->ctl_len = 0;
        }
    }
}

/* ---- --tag-output relay ------------------------------------------------- */

static void write_all(int fd, const char *p, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* our own output is gone (EPIPE): drop the rank's output */
        p += n;
        len -= (size_t)n;
    }
}

static void relay_emit(int rank, relay_t *rl, const char *p, size_t len, int add_nl) {
    char buf[LINE_MAX_RELAY + 32];
    int n = snprintf(buf, sizeof(buf), "[%d] ", rank);
    memcpy(buf + n, p, len);
    len += (size_t)n;
    if (add_nl)
        buf[len++] = '\n';
    write_all(rl->out_fd, buf, len);
}

static void relay_flush(int rank, relay_t *rl) {
    if (rl->len > 0) {
        relay_emit(rank, rl, rl->buf, rl->len, 1);
        rl->len = 0;
    }
}

static void relay_read(rank_t *rk, relay_t *rl) {
    ssize_t n;
    do {
        n = read(rl->fd, rl->buf + rl->len, sizeof(rl->buf) - rl->len);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN)
        return;
    if (n <= 0) {
        relay_flush(rk->rank, rl);
        close(rl->fd);
        rl->fd = -1;
        return;
    }
    rl->len += (size_t)n;
    char *start = rl->buf, *nl;
    while ((nl = memchr(start, '\n', rl->len - (size_t)(start - rl->buf)))) {
        relay_emit(rk->rank, rl, start, (size_t)(nl - start) + 1, 0);
        start = nl + 1;
    }
    rl->len -= (size_t)(start - rl->buf);
    memmove(rl->buf, start, rl->len);
    if (rl->len == sizeof(rl->buf))
        relay_flush(rk->rank, rl); /* a line longer than the buffer goes out in pieces */
}

/* ---- stdin relay (only when stdin is a terminal) ------------------------ */

static void stdin_close(void) {
    if (job.stdin_dst >= 0)
        close(job.stdin_dst);
    job.stdin_dst = -1;
    job.stdin_src = -1;
}

static void stdin_pump(short revents_src, short revents_dst) {
    if (job.stdin_src >= 0 && job.stdin_len == 0 && (revents_src & (POLLIN | POLLHUP))) {
        ssize_t n = read(job.stdin_src, job.stdin_buf, sizeof(job.stdin_buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return;
        if (n <= 0) {
            stdin_close();
            return;
        }
        job.stdin_len = (size_t)n;
        job.stdin_off = 0;
        revents_dst = POLLOUT; /* try at once */
    }
    if (job.stdin_dst >= 0 && job.stdin_len > 0 && (revents_dst & (POLLOUT | POLLERR))) {
        ssize_t n = write(job.stdin_dst, job.stdin_buf + job.stdin_off, job.stdin_len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            return;
        if (n < 0) { /* rank 0 closed its stdin */
            stdin_close();
            return;
        }
        job.stdin_off += (size_t)n;
        job.stdin_len -= (size_t)n;
    }
}

/* ---- watchdog ----------------------------------------------------------- */

/* SIGKILL to mpirun cannot be caught: its ranks then die of PR_SET_PDEATHSIG, but their
 * own children would live on. A small helper process, in a process group of its own,
 * learns each rank's pid through a pipe; if the pipe closes without the final 0 (mpirun
 * died), it kills the ranks' process groups. */
static int watch_fd = -1;

static void watchdog_start(int np) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid > 0) {
        close(p[0]);
        watch_fd = p[1];
        return;
    }
    /* the watchdog: no signal from a terminal or from a kill of mpirun's group reaches it */
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    setpgid(0, 0);
    prctl(PR_SET_NAME, "mpirun-watch");
    close(p[1]);
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3 && null >= 0; fd++)
        dup2(null, fd); /* hold none of the pipes that readers of mpirun's output wait on */
    pid_t *pids = calloc((size_t)np, sizeof(pid_t));
    int n = 0;
    for (;;) {
        pid_t v;
        ssize_t got = read(p[0], &v, sizeof(v));
        if (got < 0 && errno == EINTR)
            continue;
        if (got == (ssize_t)sizeof(v) && v == 0)
            _exit(0); /* mpirun ended the job itself */
        if (got == (ssize_t)sizeof(v) && pids && n < np) {
            pids[n++] = v;
            continue;
        }
        for (int i = 0; i < n; i++)
            kill(-pids[i], SIGKILL);
        _exit(0);
    }
}

static void watchdog_add(pid_t pid) {
    if (watch_fd >= 0 && write(watch_fd, &pid, sizeof(pid)) != (ssize_t)sizeof(pid)) {
        close(watch_fd);
        watch_fd = -1;
    }
}

static void watchdog_stop(void) {
    watchdog_add(0);
    if (watch_fd >= 0)
        close(watch_fd);
    watch_fd = -1;
}

/* ---- starting ranks ----------------------------------------------------- */

static void setenv_int(const char *name, long v) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%ld", v);
    setenv(name, buf, 1);
}

static int nth_cpu(int n) {
    int seen = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &job.cpus) && seen++ == n)
            return c;
    return -1;
}

/* In the child between fork and exec. Only reports failure through err_fd. */
static void child_exec(rank_t *rk, int shm_fd, int ctl_wr, int in_fd, int out_wr[2], int err_fd,
                       pid_t parent) __attribute__((noreturn));
static void child_exec(rank_t *rk, int shm_fd, int ctl_wr, int in_fd, int out_wr[2], int err_fd,
                       pid_t parent) {
    int report[2] = {STAGE_SETUP, 0}; /* what failed, errno */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127); /* mpirun died before we armed the death signal */
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &job.oldmask, NULL);

    if (in_fd != 0) {
        if (dup2(in_fd, 0) < 0)
            goto fail;
        if (in_fd > 2)
            close(in_fd);
    }
    for (int s = 0; s < 2; s++)
        if (out_wr[s] >= 0 && dup2(out_wr[s], 1 + s) < 0)
            goto fail;
    /* the two descriptors of the contract survive exec; everything else of mpirun's is
     * close-on-exec */
    if (fcntl(shm_fd, F_SETFD, 0) < 0 || fcntl(ctl_wr, F_SETFD, 0) < 0)
        goto fail;
    setenv_int("TANDEM_RANK", rk->rank);
    setenv_int("TANDEM_LOCAL_RANK", rk->rank);
    setenv_int("TANDEM_CTL_FD", ctl_wr);
    if (job.opt.bind == BIND_CORE && job.ncpus > 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        int first = job.bind_block * rk->rank;
        for (int i = 0; i < job.bind_block; i++)
            CPU_SET(nth_cpu((first + i) % job.ncpus), &set);
        report[0] = STAGE_BIND;
        if (sched_setaffinity(0, sizeof(set), &set) != 0)
            goto fail;
    }
    report[0] = STAGE_WDIR;
    if (job.opt.wdir && chdir(job.opt.wdir) != 0)
        goto fail;
    report[0] = STAGE_EXEC;
    execvp(job.opt.argv[0], job.opt.argv);
fail:
    report[1] = errno;
    if (write(err_fd, report, sizeof(report)) < 0) {
        /* nothing left to report with */
    }
    _exit(127);
}

static int make_pipe(int fds[2]) {
    if (pipe2(fds, O_CLOEXEC) != 0) {
        msg("cannot create a pipe: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* The job's memfd: named after the job, its stamp written (boot.h), sealed against
 * shrinking, so that a rank can tell it from any other file on that descriptor number. */
static int make_segment(const char *jobid, int np) {
    char name[128];
    snprintf(name, sizeof(name), TDM_BOOT_MEMFD_NAME "%s", jobid);
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        msg("memfd_create failed: %s", strerror(errno));
        return -1;
    }
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    size_t bytes = tdm_boot_stamp_bytes(np);
    tdm_boot_stamp_t stamp = {.magic = TDM_BOOT_STAMP_MAGIC,
                              .version = TDM_BOOT_STAMP_VERSION,
                              .size = (uint32_t)np,
                              .seg_offset =
                                  (bytes + (size_t)page - 1) / (size_t)page * (size_t)page};
    snprintf(stamp.jobid, sizeof(stamp.jobid), "%s", jobid);
    if (ftruncate(fd, (off_t)stamp.seg_offset) != 0 ||
        pwrite(fd, &stamp, sizeof(stamp), 0) != (ssize_t)sizeof(stamp) ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
        msg("cannot set up the job's shared memory (memfd): %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Record the inode of a rank's control pipe in its stamp slot (before the rank starts). */
static int stamp_ctl(int shm_fd, int rank, int ctl_wr) {
    struct stat st;
    tdm_boot_slot_t slot = {0};
    if (fstat(ctl_wr, &st) != 0)
        return -1;
    slot.ctl_ino = (uint64_t)st.st_ino;
    off_t at = (off_t)(sizeof(tdm_boot_stamp_t) + (size_t)rank * sizeof(slot));
    return pwrite(shm_fd, &slot, sizeof(slot), at) == (ssize_t)sizeof(slot) ? 0 : -1;
}

/* Start one rank. Returns 0, or -1 when the job cannot go on. */
static int start_rank(rank_t *rk, int shm_fd) {
    int ctl[2], errp[2], in_fd = -1, out[2][2] = {{-1, -1}, {-1, -1}}, out_wr[2] = {-1, -1};
    if (make_pipe(ctl) || make_pipe(errp))
        return -1;
    if (stamp_ctl(shm_fd, rk->rank, ctl[1]) != 0) {
        msg("cannot record the control pipe of rank %d: %s", rk->rank, strerror(errno));
        for (int i = 0; i < 2; i++) {
            close(ctl[i]);
            close(errp[i]);
        }
        return -1;
    }
    if (rk->rank == 0 && job.stdin_mode == STDIN_INHERIT) {
        in_fd = 0;
    } else if (rk->rank == 0 && job.stdin_mode == STDIN_RELAY) {
        int p[2];
        if (make_pipe(p))
            return -1;
        in_fd = p[0];
        job.stdin_dst = p[1];
        job.stdin_src = 0;
        fcntl(job.stdin_dst, F_SETFL, O_NONBLOCK);
    } else {
        in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (in_fd < 0) {
            msg("cannot open /dev/null: %s", strerror(errno));
            return -1;
        }
    }
    if (job.opt.tag_output) {
        for (int s = 0; s < 2; s++) {
            if (make_pipe(out[s]))
                return -1;
            out_wr[s] = out[s][1];
        }
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        msg("cannot fork rank %d: %s", rk->rank, strerror(errno));
        return -1;
    }
    if (pid == 0)
        child_exec(rk, shm_fd, ctl[1], in_fd, out_wr, errp[1], parent);
    /* also here, so that the group exists before anyone signals it */
    setpgid(pid, pid);
    watchdog_add(pid);
    rk->pid = pid;
    rk->running = 1;
    job.running++;
    close(ctl[1]);
    close(errp[1]);
    if (in_fd > 0)
        close(in_fd);
    rk->ctl_fd = ctl[0];
    fcntl(rk->ctl_fd, F_SETFL, O_NONBLOCK);
    for (int s = 0; s < 2; s++) {
        rk->out[s].fd = out[s][0];
        rk->out[s].out_fd = 1 + s;
        if (out[s][1] >= 0) {
            close(out[s][1]);
            fcntl(out[s][0], F_SETFL, O_NONBLOCK);
        }
    }
    /* wait for exec: the error pipe closes on success and says what failed otherwise */
    int report[2];
    ssize_t n;
    do {
        n = read(errp[0], report, sizeof(report));
    } while (n < 0 && errno == EINTR);
    close(errp[0]);
    if (n == (ssize_t)sizeof(report)) {
        int err = report[1];
        rk->exec_failed = 1;
        if (report[0] == STAGE_EXEC)
            msg("cannot start rank %d: %s: %s", rk->rank, job.opt.argv[0], strerror(err));
        else if (report[0] == STAGE_WDIR)
            msg("cannot start rank %d: working directory %s: %s", rk->rank, job.opt.wdir,
                strerror(err));
        else if (report[0] == STAGE_BIND)
            msg("cannot start rank %d: binding it to a cpu failed: %s", rk->rank, strerror(err));
        else
            msg("cannot start rank %d: setting up its descriptors failed: %s", rk->rank,
                strerror(err));
        set_status(report[0] == STAGE_EXEC && err == ENOENT ? 127 : 126);
        return -1;
    }
    return 0;
}

/* ---- reaping ------------------------------------------------------------ */

static rank_t *find_rank(pid_t pid) {
    for (int r = 0; r < job.opt.np; r++)
        if (job.ranks[r].running && job.ranks[r].pid == pid)
            return &job.ranks[r];
    return NULL;
}

static void rank_exited(rank_t *rk, int st) {
    /* the control pipe still holds whatever the rank wrote before it died */
    ctl_read(rk);
    if (rk->exec_failed)
        return;
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        fail(128 + sig, "rank %d (pid %d) killed by signal %d (%s)", rk->rank, (int)rk->pid, sig,
             strsignal(sig));
    } else if (WEXITSTATUS(st) != 0) {
        fail(WEXITSTATUS(st), "rank %d (pid %d) exited with status %d", rk->rank, (int)rk->pid,
             WEXITSTATUS(st));
    } else if (rk->inited && !rk->finalized) {
        fail(STATUS_NO_FINALIZE, "rank %d (pid %d) exited without calling MPI_Finalize", rk->rank,
             (int)rk->pid);
    }
}

static void reap(void) {
    for (;;) {
        siginfo_t si;
        si.si_pid = 0;
        /* peek first: while the rank is a zombie its pid, and so its process group id,
         * cannot be reused, so killing what is left of its group is safe */
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0)
            return;
        pid_t pid = si.si_pid;
        rank_t *rk = find_rank(pid);
        if (rk)
            kill(-pid, SIGKILL); /* the rank's own children must not outlive it */
        int st;
        if (waitpid(pid, &st, 0) < 0)
            continue;
        if (rk) {
            rk->running = 0;
            job.running--;
            if (rk->rank == 0 && job.stdin_mode == STDIN_RELAY)
                stdin_close();
            rank_exited(rk, st);
        }
    }
}

/* Kill and reap whatever was reparented to us (subreaper) until nothing is left. */
static void reap_orphans(void) {
    pid_t self = getpid();
    int64_t give_up = now_ms() + 1000;
    for (;;) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char path[64], buf[512];
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            pid_t pid = (pid_t)atoi(e->d_name);
            snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            ssize_t n = read(fd, buf, sizeof(buf) - 1);
            close(fd);
            if (n <= 0)
                continue;
            buf[n] = 0;
            /* "pid (comm) state ppid ...": comm may contain spaces and parentheses */
            char *p = strrchr(buf, ')');
            int ppid;
            char state;
            if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2 || ppid != self)
                continue;
            kill(pid, SIGKILL);
        }
        if (d)
            closedir(d);
        int st;
        while (waitpid(-1, &st, WNOHANG) > 0)
            ;
        if (waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD)
            return;
        if (now_ms() > give_up) {
            msg("processes started by the job could not all be killed");
            return;
        }
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* ---- signals to mpirun -------------------------------------------------- */

static void handle_signal(int sig) {
    switch (sig) {
    case SIGCHLD:
        reap();
        break;
    case SIGINT:
    case SIGTERM:
    case SIGHUP:
    case SIGQUIT:
        if (job.ending) {
            /* asked twice: stop waiting for the grace period */
            kill_job();
            break;
        }
        msg("received signal %d (%s); forwarding it to %d ranks", sig, strsignal(sig), job.running);
        signal_groups(sig);
        set_status(128 + sig);
        job.ending = 1;
        job.kill_at_ms = now_ms() + GRACE_MS;
        break;
    case SIGUSR1:
    case SIGUSR2:
        /* to the ranks themselves: SIGUSR1 makes a rank print its pending operations, and
         * would kill a helper program it runs */
        for (int r = 0; r < job.opt.np; r++)
            if (job.ranks[r].running)
                kill(job.ranks[r].pid, sig);
        break;
    case SIGTSTP:
        /* ^Z reaches only mpirun's group: stop the ranks with it */
        signal_groups(SIGSTOP);
        kill(getpid(), SIGSTOP);
        break;
    case SIGCONT:
        signal_groups(SIGCONT);
        break;
    default:
        break;
    }
}

static void drain_signals(void) {
    struct signalfd_siginfo si;
    for (;;) {
        ssize_t n = read(job.sigfd, &si, sizeof(si));
        if (n != (ssize_t)sizeof(si))
            return;
        handle_signal((int)si.ssi_signo);
    }
}

/* ---- main loop ---------------------------------------------------------- */

static void run_loop(void) {
    int np = job.opt.np;
    /* for each polled descriptor: its rank and what it is (0 control, 1 stdout, 2 stderr) */
    struct pollfd *pfd = calloc((size_t)(3 * np + 3), sizeof(*pfd));
    int *tag_rank = calloc((size_t)(3 * np + 3), sizeof(int));
    int *tag_kind = calloc((size_t)(3 * np + 3), sizeof(int));
    if (!pfd || !tag_rank || !tag_kind) {
        msg("out of memory");
        kill_job();
        return;
    }
    for (;;) {
        int64_t now = now_ms();
        if (!job.ending && job.deadline_ms && now >= job.deadline_ms) {
            msg("job timed out after %g s; killing %d ranks", job.opt.timeout_s, job.running);
            set_status(STATUS_TIMEOUT);
            /* first each rank prints its pending operations: a hang says what it waits for */
            job.ending = 1;
            job.dumping = ask_dumps() > 0;
            job.dump_until = now + DUMP_WAIT_MS;
            if (!job.dumping) {
                job.ending = 0;
                end_job();
            }
        }
        if (job.dumping && (dumps_done() || now >= job.dump_until)) {
            job.dumping = 0;
            job.ending = 0;
            end_job();
        }
        if (job.ending && !job.dumping && !job.killed && now >= job.kill_at_ms)
            kill_job();
        if (job.running == 0)
            break;
        if (job.killed && now - job.killed_at_ms > KILL_WAIT_MS) {
            msg("%d ranks did not end after SIGKILL; giving up on them", job.running);
            break;
        }

        int nfd = 0, wait_ms = -1;
        pfd[nfd++] = (struct pollfd){.fd = job.sigfd, .events = POLLIN};
        for (int r = 0; r < np; r++) {
            rank_t *rk = &job.ranks[r];
            if (rk->ctl_fd >= 0) {
                tag_rank[nfd] = r;
                tag_kind[nfd] = 0;
                pfd[nfd++] = (struct pollfd){.fd = rk->ctl_fd, .events = POLLIN};
            }
            for (int s = 0; s < 2; s++)
                if (rk->out[s].fd >= 0) {
                    tag_rank[nfd] = r;
                    tag_kind[nfd] = 1 + s;
                    pfd[nfd++] = (struct pollfd){.fd = rk->out[s].fd, .events = POLLIN};
                }
        }
        int src_i = -1, dst_i = -1;
        if (job.stdin_src >= 0 && job.stdin_len == 0) {
            src_i = nfd;
            pfd[nfd++] = (struct pollfd){.fd = job.stdin_src, .events = POLLIN};
        }
        if (job.stdin_dst >= 0 && job.stdin_len > 0) {
            dst_i = nfd;
            pfd[nfd++] = (struct pollfd){.fd = job.stdin_dst, .events = POLLOUT};
        }
        int64_t next = 0;
        if (job.dumping)
            next = job.dump_until;
        else if (job.ending && !job.killed)
            next = job.kill_at_ms;
        else if (job.killed)
            next = job.killed_at_ms + KILL_WAIT_MS + 1;
        else if (job.deadline_ms)
            next = job.deadline_ms;
        if (next)
            wait_ms = next > now ? (int)(next - now) : 0;

        int n = poll(pfd, (nfds_t)nfd, wait_ms);
        if (n < 0 && errno != EINTR) {
            msg("poll failed: %s", strerror(errno));
            kill_job();
            continue;
        }
        if (n <= 0)
            continue;
        /* output and control lines before signals, so that a rank's last words are read
         * before its death is judged */
        for (int i = 1; i < nfd; i++) {
            if (!pfd[i].revents || i == src_i || i == dst_i)
                continue;
            rank_t *rk = &job.ranks[tag_rank[i]];
            if (tag_kind[i] == 0)
                ctl_read(rk);
            else
                relay_read(rk, &rk->out[tag_kind[i] - 1]);
        }
        if (src_i >= 0 || dst_i >= 0)
            stdin_pump(src_i >= 0 ? pfd[src_i].revents : 0, dst_i >= 0 ? pfd[dst_i].revents : 0);
        if (pfd[0].revents)
            drain_signals();
    }
    free(pfd);
    free(tag_rank);
    free(tag_kind);
}

/* After the ranks are gone: read what is left in the output pipes. */
static void drain_relays(void) {
    int64_t give_up = now_ms() + 1000;
    for (int r = 0; r < job.opt.np; r++) {
        for (int s = 0; s < 2; s++) {
            relay_t *rl = &job.ranks[r].out[s];
            while (rl->fd >= 0) {
                struct pollfd p = {.fd = rl->fd, .events = POLLIN};
                int64_t left = give_up - now_ms();
                if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
                    relay_flush(r, rl);
                    close(rl->fd);
                    rl->fd = -1;
                    break;
                }
                relay_read(&job.ranks[r], rl);
            }
        }
    }
}

static void ensure_std_fds(void) {
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0) {
            int nfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (nfd >= 0 && nfd != fd) {
                dup2(nfd, fd);
                close(nfd);
            }
            if (fd == 0)
                job.stdin_mode = STDIN_NULL;
        }
}

static void raise_fd_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rlim_t want = (rlim_t)(8 * job.opt.np + 64);
        if (want > rl.rlim_cur) {
            rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
    }
}

int main(int argc, char **argv) {
    job.stdin_mode = STDIN_INHERIT;
    job.stdin_src = job.stdin_dst = -1;
    ensure_std_fds();
    parse_args(argc, argv, &job.opt);
    int np = job.opt.np;
    raise_fd_limit();
    watchdog_start(np);

    if (sched_getaffinity(0, sizeof(job.cpus), &job.cpus) != 0) {
        CPU_ZERO(&job.cpus);
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < n && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &job.cpus);
    }
    job.ncpus = CPU_COUNT(&job.cpus);

    if (job.stdin_mode == STDIN_INHERIT && isatty(0)) {
        /* ranks live in their own process groups, so rank 0 reading the terminal would
         * be stopped by SIGTTIN: relay it, and only while mpirun is in the foreground */
        job.stdin_mode = (tcgetpgrp(0) == getpgrp()) ? STDIN_RELAY : STDIN_NULL;
    }

    job.ranks = calloc((size_t)np, sizeof(rank_t));
    if (!job.ranks) {
        msg("out of memory");
        return 1;
    }
    for (int r = 0; r < np; r++) {
        job.ranks[r].rank = r;
        job.ranks[r].ctl_fd = -1;
        job.ranks[r].out[0].fd = job.ranks[r].out[1].fd = -1;
    }

    sigset_t mask;
    sigemptyset(&mask);
    int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGTSTP, SIGCONT};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&mask, sigs[i]);
    sigprocmask(SIG_BLOCK, &mask, &job.oldmask);
    job.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (job.sigfd < 0) {
        msg("signalfd failed: %s", strerror(errno));
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_DFL); /* an inherited SIG_IGN would reap the ranks behind our back */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        msg("cannot become a child subreaper (%s); escaped grandchildren may survive",
            strerror(errno));

    char jobid[64];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(jobid, sizeof(jobid), "%d-%lld%03ld", (int)getpid(), (long long)ts.tv_sec,
             ts.tv_nsec / 1000000);
    int shm_fd = make_segment(jobid, np);
    if (shm_fd < 0)
        return 1;
    setenv_int("TANDEM_SIZE", np);
    setenv_int("TANDEM_LOCAL_SIZE", np);
    setenv_int("TANDEM_SHM_FD", shm_fd);
    setenv("TANDEM_JOBID", jobid, 1);
    /* a user may force the oversubscribed way of waiting (see params.def) */
    const char *over = getenv("TANDEM_OVERSUBSCRIBED");
    if (!over || !*over)
        setenv("TANDEM_OVERSUBSCRIBED", np > job.ncpus ? "1" : "0", 1);
    over = getenv("TANDEM_OVERSUBSCRIBED");
    int sharing = strcmp(over, "0") && strcasecmp(over, "no") && strcasecmp(over, "off") &&
                  strcasecmp(over, "false");
    /* Unbound, the kernel's wake-up placement pulls two ranks that wake each other onto
     * one CPU, where a rank that polls for its peer keeps that peer off the CPU for a
     * whole time slice: with other work on the node, 8-byte ping-pong took milliseconds.
     * A rank alone has no peer to wait for, and ranks that outnumber the CPUs must share. */
    job.bind_block = 1;
    if (job.opt.bind == BIND_AUTO) {
        job.opt.bind = np >= 2 && np <= job.ncpus && !sharing ? BIND_CORE : BIND_NONE;
        /* chosen, not asked for: a block of CPUs each, so a rank's own threads (OpenMP) are
         * not all pinned to one CPU (as src/boot/bind.c does under other launchers) */
        job.bind_block = job.ncpus / np;
    }

    if (job.opt.timeout_s > 0)
        job.deadline_ms = now_ms() + (int64_t)(job.opt.timeout_s * 1000.0 + 0.5);
    for (int r = 0; r < np; r++) {
        if (start_rank(&job.ranks[r], shm_fd) != 0) {
            set_status(1);
            end_job();
            break;
        }
        /* a signal or a dead rank during a long start-up must not wait for the rest */
        drain_signals();
        if (job.ending)
            break;
    }
    /* every rank holds the segment now; it dies with the last of them */
    close(shm_fd);

    run_loop();
    watchdog_stop();
    reap_orphans();
    drain_relays();
    return job.status_set ? job.status : 0;
}
