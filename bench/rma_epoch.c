/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One passive-target epoch of many small Puts to one target (issue 25, seed
 * 003 §3.4): rank 0 locks rank 1's window (MPI_LOCK_SHARED, as the OSU
 * tests), issues -i N (10 million) Puts of 8 bytes and unlocks. A library
 * that keeps an object per operation until the epoch closes grows with N;
 * one with bounded resources does not. Reported: the epoch's time (Lock to
 * Unlock) and the peak resident memory (VmHWM) of every rank, with the
 * VmHWM before the epoch beside it.
 *
 *   -a KIND   window: create, allocate or dynamic [allocate]
 *   -i N      Puts in the epoch [10000000]
 *   -T SEC    give up after SEC seconds in the epoch [300]
 *   -c MIB    give up when a rank's resident memory passes MIB MiB [4096]
 *
 * The Puts cycle over a window of 1 MiB (131072 slots of 8 bytes), and every
 * Put to a slot carries that slot's own value, so the result does not depend
 * on the order in which the library applies them: after the epoch every slot
 * must hold its value (checked in full on the target).
 *
 * Rank 1 waits in MPI_Test on a control message meanwhile (an MPI call, so a
 * library that needs the target's progress gets it) and watches its own
 * memory and the time. A rank that gives up prints
 *     # failed put_epoch KIND:lock: gave up after ... (why)
 * and the rows put_epoch,KIND:lock,8,gave_up_puts,N and gave_up_rss_MiB,R,
 * then ends the run (MPI_Abort): a library that cannot finish is reported as
 * such, it does not take the machine's memory. MPI_ERR_UNSUPPORTED_OPERATION
 * on window creation or on the epoch's calls gives the row
 * put_epoch,KIND:lock,0,unsupported,1 and a comment "# unsupported ...".
 *
 * Rows (rank 0): put_epoch,KIND:lock,8,METRIC,VALUE with METRIC
 *   time_s          Lock + N Puts + Unlock, seconds
 *   put_ns          the same per Put, nanoseconds
 *   puts            N
 *   rss_peak_MiB    largest VmHWM of the ranks after the epoch
 *   rss_peak_MiB_rK VmHWM of rank K after the epoch
 *   rss_before_MiB  largest VmHWM of the ranks just before the epoch
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EPOCH_SLOTS 131072 /* 1 MiB of 8-byte slots */
#define EPOCH_CHECK 65536  /* Puts between two looks at the clock and the memory */
#define EPOCH_TAG 31998

static const char *const kind_names[] = {"create", "allocate", "dynamic"};

/* VmHWM or VmRSS from /proc/self/status, in MiB; -1 when unknown. */
static double proc_mib(const char *field) {
    char line[256];
    size_t len = strlen(field);
    double v = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, len) && line[len] == ':') {
            v = atof(line + len + 1) / 1024.0; /* kB */
            break;
        }
    fclose(f);
    return v;
}

/* Resident memory in MiB from /proc/self/statm: cheaper than status, read often. */
static double rss_mib(void) {
    long size = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &size, &res) != 2)
        res = -1;
    fclose(f);
    return res < 0 ? -1 : (double)res * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

static int first_rc = MPI_SUCCESS;
static char first_call[64];

static int note_rc(int rc, const char *call) {
    if (rc != MPI_SUCCESS && first_rc == MPI_SUCCESS) {
        first_rc = rc;
        snprintf(first_call, sizeof first_call, "%s", call);
    }
    return rc != MPI_SUCCESS;
}
#define CALL(fn, ...) note_rc(fn(__VA_ARGS__), #fn)

static void give_up(const bench_t *b, const char *param, long puts, double t, double rss,
                    const char *why) {
    /* every rank may give up, so print here (stdout, flushed) rather than on rank 0 only */
    printf("# failed put_epoch %s: rank %d gave up after %ld Puts, %.1f s, resident %.0f MiB: "
           "%s\n",
           param, b->rank, puts, t, rss, why);
    printf("put_epoch,%s,8,gave_up_puts,%ld\nput_epoch,%s,8,gave_up_rss_MiB,%.1f\n", param, puts,
           param, rss);
    fflush(stdout);
    bench_fail("put_epoch %s: %s", param, why);
}

int main(int argc, char **argv) {
    bench_t b;
    const bench_defaults_t d = {.sizes = "8",
                                .iters = 10000000,
                                .iters_min = 1,
                                .warmup = 0,
                                .budget_s = 300,
                                .list = "4096",
                                .variant = "allocate",
                                .usage = "  -a KIND    create|allocate|dynamic [allocate]\n"
                                         "  -i N       Puts in the epoch [10000000]\n"
                                         "  -T SEC     give up after SEC s in the epoch [300]\n"
                                         "  -c MIB     give up past MIB MiB resident [4096]\n"};
    int kind = -1, me, peer;
    char param[32];
    MPI_Comm comm;
    MPI_Win win = MPI_WIN_NULL;
    char *wbase = NULL, *wmem = NULL;
    MPI_Aint rbase = 0;
    const size_t wbytes = (size_t)EPOCH_SLOTS * 8;

    bench_init(&b, "rma_epoch", &d, &argc, &argv);
    for (int i = 0; i < 3; i++)
        if (!strcmp(b.variant, kind_names[i]))
            kind = i;
    double cap_mib = atof(b.list);
    if (b.nprocs != 2 || kind < 0 || cap_mib <= 0) {
        if (b.rank == 0)
            fprintf(stderr, "rma_epoch: 2 ranks, -a create|allocate|dynamic, -c MIB > 0\n");
        MPI_Finalize();
        return 2;
    }
    me = b.rank;
    peer = 1 - me;
    snprintf(param, sizeof param, "%s:lock", kind_names[kind]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    /* Slot s always receives value[s]: the origin's source, one value a slot. */
    int64_t *value = malloc(wbytes);
    if (!value)
        bench_fail("cannot allocate %zu bytes", wbytes);
    for (size_t s = 0; s < EPOCH_SLOTS; s++)
        value[s] = (int64_t)(s * 2654435761u) + 1;

    int created = 0;
    if (kind == 1) {
        created = !CALL(MPI_Win_allocate, (MPI_Aint)wbytes, 8, MPI_INFO_NULL, comm, &wbase, &win);
        if (created) {
            void *attr = NULL;
            int flag = 0;
            /* the standard's window base (see rma.c on MPICH 4.0.2's base pointer) */
            if (!CALL(MPI_Win_get_attr, win, MPI_WIN_BASE, &attr, &flag) && flag)
                wbase = attr;
        }
    } else {
        if (posix_memalign((void **)&wmem, 4096, wbytes))
            bench_fail("cannot allocate %zu bytes", wbytes);
        wbase = wmem;
        if (kind == 0)
            created = !CALL(MPI_Win_create, wbase, (MPI_Aint)wbytes, 8, MPI_INFO_NULL, comm, &win);
        else if ((created = !CALL(MPI_Win_create_dynamic, MPI_INFO_NULL, comm, &win)))
            CALL(MPI_Win_attach, win, wbase, (MPI_Aint)wbytes);
    }
    if (created)
        CALL(MPI_Win_set_errhandler, win, MPI_ERRORS_RETURN);
    if (kind == 2) {
        MPI_Aint mine = 0;
        MPI_Get_address(wbase, &mine);
        MPI_Sendrecv(&mine, 1, MPI_AINT, peer, EPOCH_TAG, &rbase, 1, MPI_AINT, peer, EPOCH_TAG,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (created && first_rc == MPI_SUCCESS) {
        CALL(MPI_Win_lock, MPI_LOCK_EXCLUSIVE, me, 0, win);
        memset(wbase, 0, wbytes);
        CALL(MPI_Win_unlock, me, win);
    }

    double rss_before = bench_allmax(proc_mib("VmHWM"));
    long puts = 0;
    double t_epoch = 0;
    int ok = bench_allmax(first_rc != MPI_SUCCESS) == 0;
    bench_barrier();
    if (ok && me == 0) {
        long n = b.iters;
        double t0 = bench_now();
        if (!CALL(MPI_Win_lock, MPI_LOCK_SHARED, peer, 0, win)) {
            for (long i = 0; i < n; i++) {
                size_t s = (size_t)i % EPOCH_SLOTS;
                /* dynamic windows take the target's address (unit 1), the others a slot */
                MPI_Aint disp = kind == 2 ? rbase + (MPI_Aint)(s * 8) : (MPI_Aint)s;
                if (CALL(MPI_Put, &value[s], 8, MPI_BYTE, peer, disp, 8, MPI_BYTE, win))
                    break;
                puts = i + 1;
                if ((puts % EPOCH_CHECK) == 0) {
                    double t = bench_now() - t0, rss = rss_mib();
                    if (t > b.budget_s)
                        give_up(&b, param, puts, t, rss, "time limit (-T)");
                    if (rss > cap_mib)
                        give_up(&b, param, puts, t, rss, "resident memory limit (-c)");
                }
            }
            CALL(MPI_Win_unlock, peer, win);
        }
        t_epoch = bench_now() - t0;
        /* the target's wait ends here */
        MPI_Send(&puts, 1, MPI_LONG, 1, EPOCH_TAG, MPI_COMM_WORLD);
    } else if (ok) {
        MPI_Request req;
        int done = 0;
        double t0 = bench_now();
        MPI_Irecv(&puts, 1, MPI_LONG, 0, EPOCH_TAG, MPI_COMM_WORLD, &req);
        for (long spin = 1; !done; spin++) {
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            if (!done && spin % 4096 == 0) {
                double t = bench_now() - t0, rss = rss_mib();
                /* rank 0 keeps its own limit; this one is for a target that grows */
                if (t > b.budget_s + 30)
                    give_up(&b, param, -1, t, rss, "time limit (-T) as the target");
                if (rss > cap_mib)
                    give_up(&b, param, -1, t, rss, "resident memory limit (-c) as the target");
            }
        }
    }
    ok = ok && bench_allmax(first_rc != MPI_SUCCESS) == 0;
    if (!ok) {
        int cls = MPI_ERR_OTHER, len = 0, unsupported;
        char msg[MPI_MAX_ERROR_STRING] = "";
        if (first_rc != MPI_SUCCESS) {
            MPI_Error_class(first_rc, &cls);
            MPI_Error_string(first_rc, msg, &len);
            for (char *p = msg; *p; p++)
                if (*p == '\n' || *p == ',')
                    *p = ' ';
            fprintf(stderr, "bench: rank %d: put_epoch %s: %s: %s\n", me, param, first_call, msg);
        }
        /* 1 when every rank that failed was told "unsupported" */
        unsupported =
            bench_allmax(first_rc != MPI_SUCCESS && cls != MPI_ERR_UNSUPPORTED_OPERATION) == 0;
        if (!unsupported)
            bench_fail("put_epoch %s failed (an error other than MPI_ERR_UNSUPPORTED_OPERATION)",
                       param);
        /* rank 0 reports, with rank 1's message when it had none of its own */
        char what[sizeof msg + sizeof first_call + 2], peer_what[sizeof what];
        snprintf(what, sizeof what, "%s: %s", first_call, msg);
        MPI_Sendrecv(what, (int)sizeof what, MPI_CHAR, peer, EPOCH_TAG, peer_what,
                     (int)sizeof peer_what, MPI_CHAR, peer, EPOCH_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        if (me == 0)
            printf("# unsupported put_epoch %s: %s\nput_epoch,%s,0,unsupported,1\n", param,
                   first_rc != MPI_SUCCESS ? what : peer_what, param);
        fflush(stdout);
        if (created)
            MPI_Win_free(&win);
    } else {
        /* the target's window: every slot its value */
        if (me == 1) {
            CALL(MPI_Win_lock, MPI_LOCK_EXCLUSIVE, me, 0, win);
            long want = puts < EPOCH_SLOTS ? puts : EPOCH_SLOTS;
            for (long s = 0; s < EPOCH_SLOTS; s++) {
                int64_t v = ((int64_t *)wbase)[s];
                if (v != (s < want ? value[s] : 0))
                    bench_fail("put_epoch %s: slot %ld holds %lld after %ld Puts, expected %lld",
                               param, s, (long long)v, puts, (long long)(s < want ? value[s] : 0));
            }
            CALL(MPI_Win_unlock, me, win);
        }
        double hwm = proc_mib("VmHWM"), peak = bench_allmax(hwm);
        double hwm_peer = hwm;
        MPI_Sendrecv(&hwm, 1, MPI_DOUBLE, peer, EPOCH_TAG, &hwm_peer, 1, MPI_DOUBLE, peer,
                     EPOCH_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (puts != b.iters)
            bench_fail("put_epoch %s: %ld Puts of %ld", param, puts, b.iters);
        bench_row(&b, "put_epoch", param, 8, "time_s", t_epoch);
        bench_row(&b, "put_epoch", param, 8, "put_ns", t_epoch * 1e9 / (double)puts);
        bench_row(&b, "put_epoch", param, 8, "puts", (double)puts);
        bench_row(&b, "put_epoch", param, 8, "rss_peak_MiB", peak);
        bench_row(&b, "put_epoch", param, 8, "rss_peak_MiB_r0", me == 0 ? hwm : hwm_peer);
        bench_row(&b, "put_epoch", param, 8, "rss_peak_MiB_r1", me == 0 ? hwm_peer : hwm);
        bench_row(&b, "put_epoch", param, 8, "rss_before_MiB", rss_before);
        if (kind == 2)
            CALL(MPI_Win_detach, win, wbase);
        CALL(MPI_Win_free, &win);
        if (bench_allmax(first_rc != MPI_SUCCESS) != 0)
            bench_fail("put_epoch %s: %s failed after the epoch", param, first_call);
    }
    free(wmem);
    free(value);
    MPI_Comm_free(&comm);
    bench_finalize(&b);
    return 0;
}
