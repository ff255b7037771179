/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How a rank waits for a message that takes long: rank 1 sleeps 30 ms before each of
 * five sends while rank 0 waits in MPI_Recv. When ranks do not outnumber cores a
 * waiting rank polls and then blocks on its doorbell, and never yields its core to
 * whatever else runs there; when they do, it yields before it blocks. The testlist
 * checks rank 0's counters (TANDEM_PROTO_STATS): yields and blocks.
 *
 * arg "colocate": both ranks move to rank 0's CPU and ping-pong. A rank that polled for
 * its peer would keep that peer off the one CPU until its time slice ends; it must see
 * that the peer last ran on its CPU and block instead (run with a polling time far
 * beyond the test's, so that only that rule makes it block).
 *
 * arg "contend" (two ranks): each rank pins itself to its CPU and starts a busy child
 * process beside it there, a task of equal weight that the rank cannot see as a peer.
 * The ranks ping-pong until one of them has found its core contended (the MPI_T counter
 * tandem_wait_contended), and fail if neither has within 60 s. arg "contend-off": the
 * same for 2 s with the contended spin turned off (TANDEM_WAIT_SPIN_CONTENDED_US at or
 * above TANDEM_WAIT_SPIN_US): the counter must stay 0.
 */
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Pin this process to `cpu` alone. */
static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        perror("sched_setaffinity");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Round trip `i` of a ping-pong between ranks 0 and 1, checked. */
static void round_trip(int rank, int i, int *errs) {
    int x = i, peer = 1 - rank;
    if (rank == 0) {
        MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
    }
    if (x != i && (*errs)++ < 5)
        fprintf(stderr, "[%d] ping-pong %d: got %d\n", rank, i, x);
}

/* Ping-pong beside a busy child on this rank's CPU until a rank finds its core contended
 * (or `limit` seconds); the larger of the two ranks' counts of contended periods. */
static unsigned long long contend(int rank, double limit, int *errs) {
    pin(sched_getcpu());
    fflush(NULL);
    pid_t parent = getpid();
    pid_t child = fork(); /* inherits the one-CPU mask */
    if (child == 0) {
        /* never outlives the rank, however the rank ends */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (volatile unsigned long spin = 0; getppid() == parent; spin++) {
        }
        _exit(0);
    }
    int provided, idx, count;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&s);
    if (child < 0 ||
        MPI_T_pvar_get_index("tandem_wait_contended", MPI_T_PVAR_CLASS_COUNTER, &idx) != 0 ||
        MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count) != 0 || count != 1) {
        fprintf(stderr, "[%d] no busy child or no tandem_wait_contended\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_T_pvar_start(s, h);
    unsigned long long mine = 0, all = 0;
    double t0 = now_s();
    for (int i = 0; !all; i++) {
        round_trip(rank, i, errs);
        if (i % 64 == 63) {
            MPI_T_pvar_read(s, h, &mine);
            /* either rank's clock past the limit stops both */
            unsigned long long v[2] = {mine, now_s() - t0 > limit};
            MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
            all = v[0];
            if (v[1])
                break;
        }
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    MPI_T_pvar_session_free(&s);
    MPI_T_finalize();
    return all;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !strcmp(argv[1], "colocate")) {
        int cpu = sched_getcpu();
        MPI_Bcast(&cpu, 1, MPI_INT, 0, MPI_COMM_WORLD);
        pin(cpu);
        for (int i = 0; i < 2000 && size == 2; i++)
            round_trip(rank, i, &errs);
    }
    if (argc > 1 && !strncmp(argv[1], "contend", 7) && size == 2) {
        bool off = !strcmp(argv[1], "contend-off");
        unsigned long long n = contend(rank, off ? 2.0 : 60.0, &errs);
        if (rank == 0 && (off ? n != 0 : n == 0) && errs++ < 5)
            fprintf(stderr, "contended periods: %llu, expected %s\n", n, off ? "none" : "some");
    }
    for (int i = 0; i < 5 && size >= 2 && argc == 1; i++) {
        int x = i;
        if (rank == 1) {
            struct timespec ts = {0, 30 * 1000000L};
            nanosleep(&ts, NULL);
            MPI_Send(&x, 1, MPI_INT, 0, i, MPI_COMM_WORLD);
        } else if (rank == 0) {
            x = -1;
            MPI_Recv(&x, 1, MPI_INT, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (x != i && errs++ < 5)
                fprintf(stderr, "message %d: got %d\n", i, x);
        }
    }
    if (rank == 0 && errs == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return errs != 0;
}
