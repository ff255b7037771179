/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared code of the Tandem benchmarks: option parsing, timing, buffers,
 * data checks, the calibrated compute loop and the output format.
 *
 * The benchmarks are plain MPI: they build with any mpicc and call nothing
 * that is specific to one library. Tandem's counters are read through MPI_T
 * only when asked (-t) and only if the library has MPI_T.
 *
 * Output (rank 0, stdout): comment lines start with '#'; data lines are CSV
 * with the fixed schema
 *     bench,param,size,metric,value
 * where bench names the measurement (latency, bw, overlap_send, bcast, ...),
 * param a variant ("-" when none), size a byte count, metric one of
 *     lat_us   mean time of one operation in microseconds (lower is better)
 *     max_us   slowest rank's mean time (lower is better)
 *     bw_MBps  bandwidth in 10^6 bytes per second (higher is better)
 *     msg_rate messages per second (higher is better)
 *     T_us, W_us, ratio, hidden, overlap_pct   overlap figures (see overlap.c)
 * The line "bench,param,size,metric,value" itself is printed once as a header.
 */
#ifndef TANDEM_BENCH_COMMON_H
#define TANDEM_BENCH_COMMON_H

#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_MAX_SIZES 64
#define BENCH_MAX_LIST 32
#define BENCH_MAX_WINDOW 1024

typedef enum { BENCH_BUF_SINGLE = 0, BENCH_BUF_MULTI = 1 } bench_buf_mode_t;

typedef struct {
    const char *name; /* benchmark name, for the header line */
    int rank, nprocs;
    size_t sizes[BENCH_MAX_SIZES];
    int nsizes;
    long iters;                     /* iterations per size, upper bound */
    long iters_min;                 /* iterations done even past the time budget */
    long warmup;                    /* untimed iterations before each size */
    double budget_s;                /* time budget per size (and per W), seconds */
    int window;                     /* messages in flight per iteration (bandwidth) */
    bench_buf_mode_t buf_mode;      /* one reused buffer, or one per window slot */
    size_t buf_offset;              /* -o: each buffer starts this far past a page */
    int validate;                   /* 1: check every byte of every message */
    const char *mpit;               /* -t: pvar name prefixes to report, or NULL */
    const char *list;               /* -c: benchmark specific list (collectives...) */
    const char *variant;            /* -a: benchmark specific variant */
    double factors[BENCH_MAX_LIST]; /* -W: compute time as multiples of T0 */
    int nfactors;
    int thread_multiple; /* -M: MPI_Init_thread asked for MPI_THREAD_MULTIPLE and got it */
} bench_t;

/* Defaults a benchmark passes to bench_init; 0 keeps the common default. */
typedef struct {
    const char *sizes; /* size spec, see bench_sizes_parse */
    long iters, iters_min, warmup;
    double budget_s;
    int window;
    const char *list, *variant, *factors;
    const char *usage;   /* benchmark specific options text */
    int thread_multiple; /* 1: always ask for MPI_THREAD_MULTIPLE (as -M) */
} bench_defaults_t;

/* MPI_Init (MPI_Init_thread with MPI_THREAD_MULTIPLE under -M or when the defaults ask
 * for it: a library that provides less fails the run), parse argv (rank 0 prints errors),
 * print the header. */
void bench_init(bench_t *b, const char *name, const bench_defaults_t *d, int *argc, char ***argv);
/* Report MPI_T counters if asked, MPI_Finalize. */
void bench_finalize(bench_t *b);

/* Print one data line (rank 0 only; others ignore the call). */
void bench_row(const bench_t *b, const char *bench, const char *param, size_t size,
               const char *metric, double value);
/* Print a comment line on rank 0. */
void bench_note(const bench_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print an error with the rank, then MPI_Abort. */
void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Monotonic clock in seconds (not MPI_Wtime: the same clock for every library). */
double bench_now(void);

/* Parse "0:16M:2" (0 then 1,2,4..16M), "1K:1M:4", or a list "8,16K,1M". */
int bench_sizes_parse(const char *spec, size_t *sizes, int max);
size_t bench_size_max(const bench_t *b);

/*
 * Iteration control with a time budget. All ranks of MPI_COMM_WORLD call
 * bench_batch with the same arguments sequence; rank 0 decides how many
 * iterations the next batch has (0: stop) from the work done and the wall
 * time spent, and broadcasts the decision outside any timed region. A batch
 * is sized to about a tenth of the budget. The caller adds its timed
 * seconds to 'elapsed' for its own figures.
 */
typedef struct {
    long done; /* iterations finished before the current batch */
    long last; /* iterations of the current batch */
    long target, min;
    double budget;  /* seconds */
    double elapsed; /* rank 0's timed seconds so far: the caller adds to it */
    /* Internal: wall time of the loop and of the last batch, for the budget. */
    long last_n;
    double wall, last_wall, wall_mark;
} bench_loop_t;
/* The timed loop of one size: b->iters at most, b->iters_min at least. */
void bench_loop_start(const bench_t *b, bench_loop_t *l, size_t size);
/* The warm-up loop of one size: b->warmup (large sizes: a tenth), a fifth of the budget. */
void bench_loop_warm(const bench_t *b, bench_loop_t *l, size_t size);
long bench_batch(const bench_t *b, bench_loop_t *l);

/*
 * Buffers: page aligned (or -o BYTES past a page boundary, as malloc places
 * large blocks 16 bytes in), first touched, sized for the largest message. In
 * multi mode each window slot has its own buffer (out of cache for large
 * windows), in single mode every slot is the same buffer (in cache, as the
 * OSU suite does).
 */
typedef struct {
    char *mem;  /* the allocation */
    char *base; /* slot 0: mem + the -o offset */
    char *slot[BENCH_MAX_WINDOW];
    int nslots;
    size_t bytes; /* bytes of one slot */
} bench_buf_t;
void bench_buf_alloc(const bench_t *b, bench_buf_t *buf, size_t bytes, int nslots);
void bench_buf_free(bench_buf_t *buf);
/* The buffer of window slot i (slot 0 in single mode). */
static inline char *bench_buf_slot(const bench_buf_t *buf, int i) {
    return buf->slot[i % buf->nslots];
}

/*
 * Data checks. The sender stamps a message with a seed both sides know; the
 * receiver poisons its buffer before receiving and checks after. In normal
 * mode only the first and last byte are stamped and checked (cheap, but a
 * library that does not move the data fails); with -v every byte is.
 */
void bench_stamp(const bench_t *b, void *buf, size_t size, uint64_t seed);
void bench_poison(const bench_t *b, void *buf, size_t size, uint64_t seed);
void bench_check(const bench_t *b, const void *buf, size_t size, uint64_t seed, const char *what,
                 int peer);
/* A seed from an iteration, a window slot and a sender rank. */
static inline uint64_t bench_seed(long iter, int slot, int sender) {
    return ((uint64_t)iter * 1024u + (uint64_t)slot) * 64u + (uint64_t)sender + 1u;
}

/*
 * Busy compute that calls no MPI and no system call: a dependent
 * floating-point chain, calibrated once (bench_compute_calibrate) so that
 * bench_compute_us(W) takes W microseconds on an idle core. If the core is
 * shared with something else (another rank, a progress thread), it takes
 * longer, which is the point: a clock-based spin would hide that.
 */
void bench_compute_calibrate(void);
void bench_compute_us(double us);
/* Median measured time of bench_compute_us(us) over reps runs, in microseconds. */
double bench_compute_measure(double us, int reps);

/*
 * Control between ranks, outside timed regions, with point-to-point calls
 * only (a library without collectives still runs the point-to-point and
 * pattern benchmarks): a barrier, a broadcast from rank 0, and the max or
 * mean of a per-rank double, on all ranks.
 */
void bench_barrier(void);
void bench_bcast_double(double *v);
double bench_allmax(double v);
double bench_allmean(double v);

/* One-way time (ns) of a cache line between ranks 0 and 1, on every rank;
 * NaN when it cannot be measured (one rank, more ranks than CPUs). Collective. */
double bench_c2c_probe(const bench_t *b);
/* The row "c2c_ns" of one figure: the slower of the probes taken just before
 * and just after it (none when a probe could not be taken). */
void bench_row_c2c(const bench_t *b, const char *bench, const char *param, size_t size,
                   double before, double after);

/*
 * The multi-threaded benchmarks (latency_mt, mr_mt): T threads on each of ranks 0 and 1,
 * thread t of rank 0 paired with thread t of rank 1 (tag t), the library initialised with
 * MPI_THREAD_MULTIPLE. The iteration count of a size is decided on the main threads before
 * the threads start (bench_batch's control messages cannot run beside them): a probe run of
 * a few iterations gives the cost of one, and the count fills the time budget, between -n
 * and -i. Each thread warms up, meets the others of its rank at a barrier, then times its
 * own loop.
 */
#define BENCH_MT_MAX_THREADS 64

typedef struct bench_mt bench_mt_t;
/* One thread's loop: iterations [first, first + n) of a size; reports errors through
 * bench_fail. */
typedef void (*bench_mt_loop_fn_t)(bench_mt_t *r, int t, long first, long n);
/* The rows of one thread count (param) and size, from every thread's timed seconds. */
typedef void (*bench_mt_report_fn_t)(const bench_mt_t *r, const char *param);

struct bench_mt {
    const bench_t *b;
    int nthreads;
    size_t size;
    long warm, iters;
    bench_mt_loop_fn_t loop;
    /* thread t's buffers: bufs[t * nbufs + i], i < nbufs, each of the largest size and
     * nslots slots (ranks 0 and 1) */
    bench_buf_t *bufs;
    int nbufs;
    double secs[BENCH_MT_MAX_THREADS]; /* each thread's timed seconds */
    pthread_barrier_t bar;
};

/* Every thread count of -c at every size: allocates nbufs buffers of nslots slots per
 * thread, runs `loop` in the threads, calls `report` on every rank, frees the buffers.
 * Fails the run with fewer than 2 ranks. */
void bench_mt_run(const bench_t *b, int nbufs, int nslots, bench_mt_loop_fn_t loop,
                  bench_mt_report_fn_t report);
/* Thread t's buffer i. */
static inline bench_buf_t *bench_mt_buf(const bench_mt_t *r, int t, int i) {
    return &r->bufs[t * r->nbufs + i];
}

#endif
