/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The launch checks of check_launch.py with real MPI calls: how mpirun sees a job
 * that the library reports on. Needs at least 2 ranks for the failure modes.
 *
 * usage: mpi_launch MODE [ARG]
 *   hello        every rank prints "hello from rank R of N", also on stderr with 'err'
 *   exit N       every rank finalizes; rank 1 then exits with N, the others sleep
 *   kill         rank 1 is killed by SIGKILL while rank 0 waits for its message
 *   abort N      rank 1 calls MPI_Abort(MPI_COMM_WORLD, N) while rank 0 waits
 *   fatal        rank 1 sends to rank -5 (errors are fatal) while rank 0 waits
 *   nofinalize   rank 1 returns from main without MPI_Finalize while rank 0 waits
 *   hang         every rank waits for a message that never comes
 *   trap         prints "ready from rank R", then waits; SIGTERM/SIGINT make it print
 *                "rank R got signal S" and exit 128+S
 *   stdin        every rank reads its standard input and prints how much it got
 *   pending HOW  rank 0 posts an Irecv from rank 1 (tag 77) that nothing matches and an
 *                Isend of 1 MiB to rank 1 (tag 78, rendezvous) that rank 1 never receives;
 *                rank 1 posts an Irecv from rank 0 (tag 79) that nothing matches, once
 *                rank 0's RTS is in (a message tag 80 follows it on the same ring). Then
 *                every rank prints "ready from rank R" and: HOW=wait waits for its
 *                requests; compute: rank 0 computes outside MPI forever; thread: rank 0
 *                waits while its main thread blocks SIGUSR1 and a second thread does not
 *   vanish       once rank 0 is through MPI_Init (it says so), rank 1 sends its pid, starts
 *                an 8 MiB Isend to rank 0 and kills itself; rank 0 waits until that process
 *                is gone, then receives the message
 *                (run rank 1 under a shell that outlives it, so mpirun does not notice)
 *   nocma        a seccomp filter makes process_vm_readv/writev fail with EPERM before
 *                MPI_Init; then an 8 MiB exchange between ranks 0 and 1 (checked), and
 *                "nocma ok from rank R" (exit 77 if seccomp filters are not available)
 */
#include <mpi.h>

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank;

static void on_signal(int sig) {
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "rank %d got signal %d\n", rank, sig);
    if (write(1, buf, (size_t)n) < 0) {
        /* nothing to do */
    }
    _exit(128 + sig);
}

/* a barrier made of point-to-point messages only: the launch checks need no collectives */
static void sync_all(int size) {
    int x = 0;
    if (rank == 0) {
        for (int r = 1; r < size; r++)
            MPI_Recv(&x, 1, MPI_INT, r, 4241, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int r = 1; r < size; r++)
            MPI_Send(&x, 1, MPI_INT, r, 4241, MPI_COMM_WORLD);
    } else {
        MPI_Send(&x, 1, MPI_INT, 0, 4241, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 0, 4241, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static void wait_forever(void) {
    int x;
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* process_vm_readv/writev fail with EPERM, as under a container's seccomp profile. */
static int deny_cma(void) {
#if defined(__x86_64__)
    const unsigned arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
    const unsigned arch = AUDIT_ARCH_AARCH64;
#else
    return -1;
#endif
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return -1;
    return 0;
}

static void *idle_thread(void *arg) {
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static void pending(int size, const char *how) {
    int x = 0, y = 0;
    size_t big = 1u << 20;
    char *buf = calloc(big, 1);
    MPI_Request rq[2];
    if (rank == 0) {
        MPI_Irecv(&x, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(buf, (int)big, MPI_BYTE, 1, 78, MPI_COMM_WORLD, &rq[1]);
        MPI_Send(&y, 1, MPI_INT, 1, 80, MPI_COMM_WORLD);
    } else if (rank == 1) {
        /* the ring is in order: the RTS of tag 78 has been taken in before this */
        MPI_Recv(&y, 1, MPI_INT, 0, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Irecv(&x, 1, MPI_INT, 0, 79, MPI_COMM_WORLD, &rq[0]);
    }
    if (rank == 0 && !strcmp(how, "thread")) {
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        pthread_t t;
        pthread_create(&t, NULL, idle_thread, NULL); /* inherits an open mask */
        pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    }
    printf("ready from rank %d\n", rank);
    fflush(stdout);
    if (rank == 0 && !strcmp(how, "compute")) {
        volatile unsigned long spin = 0;
        for (;;)
            spin++;
    }
    if (rank == 0)
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    else if (rank == 1)
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    else
        wait_forever();
    (void)size;
}

static void vanish(void) {
    int pid = (int)getpid();
    size_t big = 8u << 20;
    char *buf = calloc(big, 1);
    if (rank == 1) {
        MPI_Request rq;
        /* rank 0 has probed this process for CMA in MPI_Init: its read is the first to fail */
        MPI_Recv(&pid, 1, MPI_INT, 0, 89, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pid = (int)getpid();
        MPI_Send(&pid, 1, MPI_INT, 0, 90, MPI_COMM_WORLD);
        MPI_Isend(buf, (int)big, MPI_BYTE, 0, 91, MPI_COMM_WORLD, &rq);
        raise(SIGKILL);
    }
    if (rank == 0) {
        MPI_Send(&pid, 1, MPI_INT, 1, 89, MPI_COMM_WORLD);
        MPI_Recv(&pid, 1, MPI_INT, 1, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* gone, or a zombie its shell has not reaped: no memory left to read either way */
        for (;;) {
            char path[64], st[512];
            snprintf(path, sizeof(path), "/proc/%d/stat", pid);
            FILE *f = fopen(path, "r");
            size_t n = f ? fread(st, 1, sizeof(st) - 1, f) : 0;
            if (f)
                fclose(f);
            st[n] = 0;
            char *p = strrchr(st, ')');
            if (!f || (p && p[1] == ' ' && p[2] == 'Z'))
                break;
            usleep(1000);
        }
        MPI_Recv(buf, (int)big, MPI_BYTE, 1, 91, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 0 received a message from a rank that had exited\n");
    }
    wait_forever();
}

static void nocma(int size) {
    size_t big = 8u << 20;
    unsigned char *out = malloc(big), *in = calloc(big, 1);
    int peer = rank ^ 1;
    for (size_t i = 0; i < big; i++)
        out[i] = (unsigned char)(i * 7 + (size_t)rank);
    if (peer < size) {
        MPI_Sendrecv(out, (int)big, MPI_BYTE, peer, 5, in, (int)big, MPI_BYTE, peer, 5,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < big; i++) {
            if (in[i] != (unsigned char)(i * 7 + (size_t)peer)) {
                printf("rank %d: byte %zu from rank %d is wrong\n", rank, i, peer);
                return;
            }
        }
    }
    printf("nocma ok from rank %d\n", rank);
}

int main(int argc, char **argv) {
    int size;
    const char *mode = argc > 1 ? argv[1] : "hello";
    int arg = argc > 2 ? atoi(argv[2]) : 0;

    if (!strcmp(mode, "trap")) {
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
    }
    if (!strcmp(mode, "nocma") && deny_cma() != 0) {
        printf("seccomp filters are not available: %s\n", strerror(errno));
        return 77;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (!strcmp(mode, "hello")) {
        printf("hello from rank %d of %d\n", rank, size);
        fflush(stdout);
        fprintf(stderr, "err from rank %d\n", rank);
    } else if (!strcmp(mode, "exit")) {
        MPI_Finalize();
        if (rank == 1)
            return arg;
        sleep(30); /* mpirun must end us long before this */
        return 0;
    } else if (!strcmp(mode, "kill")) {
        sync_all(size);
        if (rank == 1)
            raise(SIGKILL);
        wait_forever();
    } else if (!strcmp(mode, "abort")) {
        sync_all(size);
        if (rank == 1)
            MPI_Abort(MPI_COMM_WORLD, arg);
        wait_forever();
    } else if (!strcmp(mode, "fatal")) {
        sync_all(size);
        if (rank == 1)
            MPI_Send(&size, 1, MPI_INT, -5, 0, MPI_COMM_WORLD);
        wait_forever();
    } else if (!strcmp(mode, "nofinalize")) {
        sync_all(size);
        if (rank == 1)
            return 0;
        wait_forever();
    } else if (!strcmp(mode, "hang")) {
        wait_forever();
    } else if (!strcmp(mode, "trap")) {
        sync_all(size);
        printf("ready from rank %d\n", rank);
        fflush(stdout);
        wait_forever();
    } else if (!strcmp(mode, "stdin")) {
        char buf[4096];
        size_t total = 0, n;
        char first[128] = "";
        while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) {
            if (total == 0) {
                size_t len = strcspn(buf, "\n");
                if (len >= sizeof(first))
                    len = sizeof(first) - 1;
                if (len > n)
                    len = n;
                memcpy(first, buf, len);
                first[len] = 0;
            }
            total += n;
        }
        printf("rank %d read %zu bytes: '%s'\n", rank, total, first);
        fflush(stdout);
    } else if (!strcmp(mode, "pending")) {
        pending(size, argc > 2 ? argv[2] : "wait");
    } else if (!strcmp(mode, "vanish")) {
        vanish();
    } else if (!strcmp(mode, "nocma")) {
        nocma(size);
    } else {
        fprintf(stderr, "mpi_launch: unknown mode '%s'\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 99);
    }
    MPI_Finalize();
    return 0;
}
