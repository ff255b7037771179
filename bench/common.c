/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void bench_ctl_bcast(void *buf, int count, MPI_Datatype type);

/* Sizes up to this many bytes count as small: more iterations, more warm-up (as OSU). */
#define BENCH_SMALL 8192

static int bench_rank = -1;

double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_fail(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "bench: error: rank %d: ", bench_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

void bench_note(const bench_t *b, const char *fmt, ...) {
    va_list ap;
    if (b->rank != 0)
        return;
    fputs("# ", stdout);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

void bench_row(const bench_t *b, const char *bench, const char *param, size_t size,
               const char *metric, double value) {
    if (b->rank != 0)
        return;
    printf("%s,%s,%zu,%s,%.6g\n", bench, param ? param : "-", size, metric, value);
    fflush(stdout);
}

/* "16K" -> 16384; returns -1 on a malformed number. */
static long long bench_parse_bytes(const char *s, const char **end_p) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    *end_p = end;
    return v;
}

int bench_sizes_parse(const char *spec, size_t *sizes, int max) {
    const char *p = spec;
    int n = 0;
    if (strchr(spec, ':')) {
        long long lo, hi, f = 2;
        if ((lo = bench_parse_bytes(p, &p)) < 0 || *p++ != ':')
            return -1;
        if ((hi = bench_parse_bytes(p, &p)) < 0)
            return -1;
        if (*p == ':') {
            p++;
            if ((f = bench_parse_bytes(p, &p)) < 2)
                return -1;
        }
        if (*p || hi < lo)
            return -1;
        if (lo == 0) {
            sizes[n++] = 0;
            lo = 1;
        }
        for (long long s = lo; s <= hi && n < max; s *= f)
            sizes[n++] = (size_t)s;
        return n;
    }
    while (*p) {
        long long v = bench_parse_bytes(p, &p);
        if (v < 0 || n >= max)
            return -1;
        sizes[n++] = (size_t)v;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return n;
}

static int bench_factors_parse(const char *spec, double *f, int max) {
    const char *p = spec;
    int n = 0;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || v < 0 || n >= max)
            return -1;
        f[n++] = v;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return n;
}

size_t bench_size_max(const bench_t *b) {
    size_t m = 0;
    for (int i = 0; i < b->nsizes; i++)
        if (b->sizes[i] > m)
            m = b->sizes[i];
    return m;
}

static void bench_usage(const char *name, const bench_defaults_t *d) {
    fprintf(stderr,
            "usage: %s [options]\n"
            "  -s SIZES   sizes: MIN:MAX[:FACTOR] or a list A,B,C (suffixes K M G) [%s]\n"
            "  -i N       iterations per size, at most [%ld]\n"
            "  -n N       iterations per size, at least (past the time budget) [%ld]\n"
            "  -x N       warm-up iterations for small sizes (large: N/10) [%ld]\n"
            "  -T SEC     time budget per size [%g]\n"
            "  -w N       window: messages in flight per iteration [%d]\n"
            "  -b MODE    single: one reused buffer (in cache, as OSU); multi: one per slot\n"
            "  -o BYTES   start every buffer BYTES (a multiple of 8, under 4096) past a\n"
            "             page boundary [0] (malloc puts large blocks 16 bytes in)\n"
            "  -v         validate every byte of every message (numbers not meaningful)\n"
            "  -t PREFIX  print MPI_T performance variables whose names start with one of\n"
            "             the comma-separated PREFIX list ('all' for every one)\n"
            "  -M         initialise with MPI_THREAD_MULTIPLE (fail if not provided)\n"
            "%s",
            name, d->sizes, d->iters, d->iters_min, d->warmup, d->budget_s, d->window,
            d->usage ? d->usage : "");
}

#ifndef BENCH_NO_MPIT
/* MPI_T state, when -t was given. A variable may have several elements (one per
 * size class, say: reported as name[i]) and may be bound to a communicator
 * (MPI_COMM_WORLD's: reported as name(world)). */
#define BENCH_MPIT_MAX 256
#define BENCH_MPIT_ELEMS 16
static struct {
    int active;
    MPI_T_pvar_session session;
    int nvars;
    int index[BENCH_MPIT_MAX];
    int count[BENCH_MPIT_MAX];
    MPI_T_pvar_handle handle[BENCH_MPIT_MAX];
    MPI_Datatype type[BENCH_MPIT_MAX];
    char name[BENCH_MPIT_MAX][136];
} bench_mpit;

static int bench_mpit_match(const char *list, const char *name) {
    char buf[256];
    if (!strcasecmp(list, "all"))
        return 1;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (!strncasecmp(name, tok, strlen(tok)))
            return 1;
    return 0;
}

static int bench_mpit_type_ok(MPI_Datatype t) {
    return t == MPI_INT || t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG ||
           t == MPI_UNSIGNED_LONG_LONG || t == MPI_COUNT || t == MPI_DOUBLE;
}

static void bench_mpit_start(bench_t *b) {
    int provided, num;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        bench_note(b, "mpit unavailable: MPI_T_init_thread failed");
        return;
    }
    bench_mpit.active = 1;
    if (MPI_T_pvar_get_num(&num) != MPI_SUCCESS ||
        MPI_T_pvar_session_create(&bench_mpit.session) != MPI_SUCCESS) {
        bench_note(b, "mpit: no performance variables");
        return;
    }
    for (int i = 0; i < num && bench_mpit.nvars < BENCH_MPIT_MAX; i++) {
        char name[128], desc[256];
        int name_len = sizeof name, desc_len = sizeof desc;
        int verbosity, var_class, bind, readonly, continuous, atomic, count;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &enumtype, desc,
                                &desc_len, &bind, &readonly, &continuous, &atomic) != MPI_SUCCESS)
            continue;
        if ((bind != MPI_T_BIND_NO_OBJECT && bind != MPI_T_BIND_MPI_COMM) ||
            !bench_mpit_type_ok(type) || !bench_mpit_match(b->mpit, name))
            continue;
        int k = bench_mpit.nvars;
        MPI_Comm world = MPI_COMM_WORLD;
        if (MPI_T_pvar_handle_alloc(bench_mpit.session, i,
                                    bind == MPI_T_BIND_MPI_COMM ? (void *)&world : NULL,
                                    &bench_mpit.handle[k], &count) != MPI_SUCCESS)
            continue;
        if (count < 1 || count > BENCH_MPIT_ELEMS) {
            MPI_T_pvar_handle_free(bench_mpit.session, &bench_mpit.handle[k]);
            continue;
        }
        if (!continuous &&
            MPI_T_pvar_start(bench_mpit.session, bench_mpit.handle[k]) != MPI_SUCCESS) {
            MPI_T_pvar_handle_free(bench_mpit.session, &bench_mpit.handle[k]);
            continue;
        }
        bench_mpit.index[k] = i;
        bench_mpit.count[k] = count;
        bench_mpit.type[k] = type;
        snprintf(bench_mpit.name[k], sizeof bench_mpit.name[k], "%s%s", name,
                 bind == MPI_T_BIND_MPI_COMM ? "(world)" : "");
        bench_mpit.nvars++;
    }
    bench_note(b, "mpit: %d performance variables match '%s'", bench_mpit.nvars, b->mpit);
}

static void bench_mpit_report(bench_t *b) {
    if (!bench_mpit.active)
        return;
    for (int k = 0; k < bench_mpit.nvars; k++) {
        union {
            int i[BENCH_MPIT_ELEMS];
            unsigned u[BENCH_MPIT_ELEMS];
            unsigned long ul[BENCH_MPIT_ELEMS];
            unsigned long long ull[BENCH_MPIT_ELEMS];
            MPI_Count c[BENCH_MPIT_ELEMS];
            double d[BENCH_MPIT_ELEMS];
        } v;
        memset(&v, 0, sizeof v);
        if (MPI_T_pvar_read(bench_mpit.session, bench_mpit.handle[k], &v) != MPI_SUCCESS)
            continue;
        MPI_Datatype t = bench_mpit.type[k];
        for (int e = 0; e < bench_mpit.count[k]; e++) {
            char text[64], elem[16] = "";
            if (t == MPI_INT)
                snprintf(text, sizeof text, "%d", v.i[e]);
            else if (t == MPI_UNSIGNED)
                snprintf(text, sizeof text, "%u", v.u[e]);
            else if (t == MPI_UNSIGNED_LONG)
                snprintf(text, sizeof text, "%lu", v.ul[e]);
            else if (t == MPI_UNSIGNED_LONG_LONG)
                snprintf(text, sizeof text, "%llu", v.ull[e]);
            else if (t == MPI_COUNT)
                snprintf(text, sizeof text, "%lld", (long long)v.c[e]);
            else
                snprintf(text, sizeof text, "%g", v.d[e]);
            if (bench_mpit.count[k] > 1)
                snprintf(elem, sizeof elem, "[%d]", e);
            /* Every rank reports its own counters: they differ (sender, receiver). */
            printf("# mpit rank=%d %s%s=%s\n", b->rank, bench_mpit.name[k], elem, text);
        }
    }
    fflush(stdout);
    for (int k = 0; k < bench_mpit.nvars; k++)
        MPI_T_pvar_handle_free(bench_mpit.session, &bench_mpit.handle[k]);
    if (bench_mpit.nvars)
        MPI_T_pvar_session_free(&bench_mpit.session);
    MPI_T_finalize();
}

#else
/* Built for a library without MPI_T (bench/compare probes for it). */
static void bench_mpit_start(bench_t *b) {
    bench_note(b, "mpit unavailable: built without MPI_T");
}
static void bench_mpit_report(bench_t *b) {
    (void)b;
}
#endif

/*
 * Exchange a small and a large message with every other rank before any
 * measurement: libraries set connections and rendezvous paths up lazily
 * (UCX wire-up, CMA probes), and a first message that takes milliseconds
 * would otherwise land in the first size's figure.
 */
static void bench_wireup(const bench_t *b) {
    static const int lens[] = {1, 256 * 1024};
    char *s = malloc((size_t)lens[1]), *r = malloc((size_t)lens[1]);
    if (!s || !r)
        bench_fail("cannot allocate wire-up buffers");
    memset(s, 1, (size_t)lens[1]);
    for (int rep = 0; rep < 2; rep++)
        for (int i = 0; i < 2; i++)
            for (int k = 1; k < b->nprocs; k++) {
                int to = (b->rank + k) % b->nprocs, from = (b->rank - k + b->nprocs) % b->nprocs;
                MPI_Sendrecv(s, lens[i], MPI_CHAR, to, 9, r, lens[i], MPI_CHAR, from, 9,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
    /* Spin-up: 50 ms of small exchanges before the first measurement, so that
     * every library meets cores that are awake. After an MPI_Init that had left
     * the (virtual) CPUs idle, the first size measured came out up to 1.9x slower
     * than the same size measured again later in the run. */
    double t0 = bench_now();
    for (long stop = 0; !stop;) {
        for (int k = 1; k < b->nprocs; k++) {
            int to = (b->rank + k) % b->nprocs, from = (b->rank - k + b->nprocs) % b->nprocs;
            MPI_Sendrecv(s, 1, MPI_CHAR, to, 9, r, 1, MPI_CHAR, from, 9, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        }
        stop = b->rank == 0 && bench_now() - t0 > 0.05;
        bench_ctl_bcast(&stop, 1, MPI_LONG);
    }
    bench_barrier();
    free(s);
    free(r);
}

void bench_init(bench_t *b, const char *name, const bench_defaults_t *d, int *argc, char ***argv) {
    int opt, bad = 0;
    const char *sizes = d->sizes, *factors = d->factors ? d->factors : "0";

    /* -M is known before MPI_Init: the thread level is asked for there */
    int multiple = d->thread_multiple, provided = MPI_THREAD_SINGLE;
    for (int i = 1; i < *argc; i++)
        if (!strcmp((*argv)[i], "-M"))
            multiple = 1;
    if (multiple)
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(argc, argv);
    memset(b, 0, sizeof *b);
    b->thread_multiple = multiple;
    b->name = name;
    MPI_Comm_rank(MPI_COMM_WORLD, &b->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b->nprocs);
    bench_rank = b->rank;
    if (multiple && provided != MPI_THREAD_MULTIPLE)
        bench_fail("%s needs MPI_THREAD_MULTIPLE; the library provides level %d (Tandem: "
                   "TANDEM_THREAD_LEVEL=multiple)",
                   name, provided);
    b->iters = d->iters;
    b->iters_min = d->iters_min;
    b->warmup = d->warmup;
    b->budget_s = d->budget_s;
    b->window = d->window ? d->window : 64;
    b->list = d->list;
    b->variant = d->variant;

    while ((opt = getopt(*argc, *argv, "s:i:n:x:T:w:b:o:vt:c:a:W:Mh")) != -1) {
        switch (opt) {
        case 's':
            sizes = optarg;
            break;
        case 'i':
            b->iters = atol(optarg);
            break;
        case 'n':
            b->iters_min = atol(optarg);
            break;
        case 'x':
            b->warmup = atol(optarg);
            break;
        case 'T':
            b->budget_s = atof(optarg);
            break;
        case 'w':
            b->window = atoi(optarg);
            break;
        case 'b':
            if (!strcmp(optarg, "single"))
                b->buf_mode = BENCH_BUF_SINGLE;
            else if (!strcmp(optarg, "multi"))
                b->buf_mode = BENCH_BUF_MULTI;
            else
                bad = 1;
            break;
        case 'o': {
            char *end;
            long off = strtol(optarg, &end, 0);
            if (*end || off < 0 || off >= 4096 || off % 8) /* doubles stay aligned */
                bad = 1;
            b->buf_offset = (size_t)off;
            break;
        }
        case 'v':
            b->validate = 1;
            break;
        case 't':
            b->mpit = optarg;
            break;
        case 'c':
            b->list = optarg;
            break;
        case 'a':
            b->variant = optarg;
            break;
        case 'W':
            factors = optarg;
            break;
        case 'M':
            break; /* taken before MPI_Init */
        default:
            bad = 1;
            break;
        }
    }
    b->nsizes = bench_sizes_parse(sizes, b->sizes, BENCH_MAX_SIZES);
    b->nfactors = bench_factors_parse(factors, b->factors, BENCH_MAX_LIST);
    if (b->nsizes <= 0 || b->nfactors <= 0 || b->iters < 1 || b->iters_min < 1 || b->warmup < 0 ||
        b->budget_s <= 0 || b->window < 1 || b->window > BENCH_MAX_WINDOW)
        bad = 1;
    if (bad) {
        if (b->rank == 0)
            bench_usage(name, d);
        MPI_Finalize();
        exit(2);
    }
    if (b->iters_min > b->iters)
        b->iters_min = b->iters;

    if (b->rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        /* First line only, no quotes, so the header stays one parseable line. */
        for (int i = 0; i < len; i++) {
            if (lib[i] == '\n' || lib[i] == '\r') {
                lib[i] = 0;
                break;
            }
            if (lib[i] == '"' || lib[i] == ',')
                lib[i] = ' ';
        }
        printf("# tandem-bench bench=%s np=%d buffers=%s offset=%zu window=%d validate=%d "
               "budget=%g iters=%ld iters_min=%ld warmup=%ld thread_level=%s\n",
               name, b->nprocs, b->buf_mode == BENCH_BUF_MULTI ? "multi" : "single", b->buf_offset,
               b->window, b->validate, b->budget_s, b->iters, b->iters_min, b->warmup,
               b->thread_multiple ? "multiple" : "default");
        printf("# library=%s\n", lib);
        if (b->validate)
            printf("# validation of every byte is on: the numbers are not performance figures\n");
        printf("bench,param,size,metric,value\n");
        fflush(stdout);
    }
    if (b->mpit)
        bench_mpit_start(b);
    bench_wireup(b);
}

void bench_finalize(bench_t *b) {
    bench_mpit_report(b);
    MPI_Finalize();
}

void bench_loop_start(const bench_t *b, bench_loop_t *l, size_t size) {
    (void)size;
    memset(l, 0, sizeof *l);
    l->target = b->iters;
    l->min = b->iters_min;
    l->budget = b->budget_s;
}

void bench_loop_warm(const bench_t *b, bench_loop_t *l, size_t size) {
    memset(l, 0, sizeof *l);
    l->target = size <= BENCH_SMALL ? b->warmup : b->warmup / 10;
    if (l->target < 1 && b->warmup > 0)
        l->target = 1;
    l->min = l->target < 1 ? l->target : 1;
    l->budget = b->budget_s / 5;
}

long bench_batch(const bench_t *b, bench_loop_t *l) {
    long n = 0;
    double now = bench_now();
    l->done += l->last;
    l->last_n = l->last;
    l->last_wall = l->last > 0 ? now - l->wall_mark : 0;
    l->wall += l->last_wall;
    if (b->rank == 0) {
        long remaining = l->target - l->done;
        if (remaining <= 0) {
            n = 0;
        } else if (l->done == 0) {
            n = l->min < 4 ? l->min : 4; /* a first estimate of the cost */
            if (n < 1)
                n = 1;
        } else if (l->wall >= l->budget && l->done >= l->min) {
            n = 0;
        } else {
            /*
             * Batches of about a tenth of the budget, not past its end. The cost
             * of an iteration is taken from the last batch alone, so that one
             * stall (a preemption, a lazy connection) does not shrink every
             * later batch and end the loop after a handful of iterations. The
             * budget is wall time (barriers and checks included), so that the
             * run time of a benchmark is predictable.
             */
            double per = l->last_n > 0 ? l->last_wall / (double)l->last_n : 0;
            double want = per > 0 ? (l->budget / 10) / per : (double)remaining;
            double left = per > 0 ? (l->budget - l->wall) / per : (double)remaining;
            if (want > left)
                want = left;
            if (want > 2.0 * (double)l->done + 16)
                want = 2.0 * (double)l->done + 16; /* grow gradually */
            n = want < 1 ? 1 : (want > (double)remaining ? remaining : (long)want);
            if (l->done + n < l->min)
                n = l->min - l->done;
        }
        if (n > remaining)
            n = remaining;
    }
    bench_ctl_bcast(&n, 1, MPI_LONG);
    l->last = n;
    l->wall_mark = bench_now();
    return n;
}

void bench_buf_alloc(const bench_t *b, bench_buf_t *buf, size_t bytes, int nslots) {
    long page = sysconf(_SC_PAGESIZE);
    size_t slot = (bytes ? bytes : 1) + b->buf_offset;
    slot = (slot + (size_t)page - 1) / (size_t)page * (size_t)page;
    if (b->buf_mode == BENCH_BUF_SINGLE || nslots < 1)
        nslots = 1;
    memset(buf, 0, sizeof *buf);
    if (posix_memalign((void **)&buf->mem, (size_t)page, slot * (size_t)nslots))
        bench_fail("cannot allocate %d buffers of %zu bytes: %s", nslots, slot, strerror(errno));
    /* First touch here, not in the timed loop. */
    memset(buf->mem, 0xa5, slot * (size_t)nslots);
    buf->base = buf->mem + b->buf_offset;
    buf->nslots = nslots;
    buf->bytes = slot;
    for (int i = 0; i < BENCH_MAX_WINDOW; i++)
        buf->slot[i] = buf->base + slot * (size_t)(i % nslots);
}

void bench_buf_free(bench_buf_t *buf) {
    free(buf->mem);
    memset(buf, 0, sizeof *buf);
}

static inline uint8_t bench_pattern(uint64_t seed, size_t i) {
    uint64_t h = seed * 0x9E3779B97F4A7C15ull;
    return (uint8_t)((h >> 56) + (uint8_t)(i * 31u));
}

void bench_stamp(const bench_t *b, void *buf, size_t size, uint64_t seed) {
    uint8_t *p = buf;
    if (!size)
        return;
    if (b->validate) {
        for (size_t i = 0; i < size; i++)
            p[i] = bench_pattern(seed, i);
    } else {
        p[0] = bench_pattern(seed, 0);
        p[size - 1] = bench_pattern(seed, size - 1);
    }
}

void bench_poison(const bench_t *b, void *buf, size_t size, uint64_t seed) {
    uint8_t *p = buf;
    if (!size)
        return;
    if (b->validate) {
        for (size_t i = 0; i < size; i++)
            p[i] = (uint8_t)~bench_pattern(seed, i);
    } else {
        p[0] = (uint8_t)~bench_pattern(seed, 0);
        p[size - 1] = (uint8_t)~bench_pattern(seed, size - 1);
    }
}

void bench_check(const bench_t *b, const void *buf, size_t size, uint64_t seed, const char *what,
                 int peer) {
    const uint8_t *p = buf;
    if (!size)
        return;
    if (b->validate) {
        for (size_t i = 0; i < size; i++)
            if (p[i] != bench_pattern(seed, i))
                bench_fail("%s: wrong data from rank %d: message of %zu bytes, byte %zu is 0x%02x, "
                           "expected 0x%02x",
                           what, peer, size, i, p[i], bench_pattern(seed, i));
    } else {
        if (p[0] != bench_pattern(seed, 0) || p[size - 1] != bench_pattern(seed, size - 1))
            bench_fail("%s: wrong data from rank %d: message of %zu bytes, first/last byte "
                       "0x%02x/0x%02x, expected 0x%02x/0x%02x",
                       what, peer, size, p[0], p[size - 1], bench_pattern(seed, 0),
                       bench_pattern(seed, size - 1));
    }
}

static double bench_compute_rate; /* chain steps per microsecond */
static volatile double bench_compute_sink;

static void bench_compute_steps(long n) {
    double x = 1.0;
    for (long i = 0; i < n; i++) {
        x = x * 0.9999999 + 1e-7;
        __asm__ volatile("" : "+x"(x)); /* keep the dependent chain, one step per iteration */
    }
    bench_compute_sink = x;
}

void bench_compute_calibrate(void) {
    const long n = 1L << 20;
    double best = 1e30;
    bench_compute_steps(n); /* warm the core up */
    for (int r = 0; r < 9; r++) {
        double t0 = bench_now();
        bench_compute_steps(n);
        double t = bench_now() - t0;
        if (t < best)
            best = t;
    }
    bench_compute_rate = (double)n / (best * 1e6);
}

void bench_compute_us(double us) {
    if (us <= 0)
        return;
    if (bench_compute_rate <= 0)
        bench_compute_calibrate();
    bench_compute_steps((long)(us * bench_compute_rate + 0.5));
}

static int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_compute_measure(double us, int reps) {
    double t[256];
    if (reps > 256)
        reps = 256;
    if (reps < 1)
        reps = 1;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        bench_compute_us(us);
        t[r] = (bench_now() - t0) * 1e6;
    }
    qsort(t, (size_t)reps, sizeof t[0], bench_cmp_double);
    return reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
}

/*
 * The benchmarks' own control messages (loop decisions, barriers between
 * rounds of a pattern, figures gathered for rank 0) use point-to-point
 * calls only, on a tag of their own, so that the point-to-point and pattern
 * benchmarks run on a library that has no collectives yet, and so that no
 * library's collective algorithm shapes them. They are never timed.
 */
#define BENCH_CTL_TAG 32000

static void bench_ctl_bcast(void *buf, int count, MPI_Datatype type) {
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (rank == 0) {
        for (int p = 1; p < n; p++)
            MPI_Send(buf, count, type, p, BENCH_CTL_TAG, MPI_COMM_WORLD);
    } else {
        MPI_Recv(buf, count, type, 0, BENCH_CTL_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

void bench_barrier(void) {
    int rank, n;
    char token = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (rank == 0) {
        for (int p = 1; p < n; p++)
            MPI_Recv(&token, 1, MPI_CHAR, p, BENCH_CTL_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Send(&token, 1, MPI_CHAR, 0, BENCH_CTL_TAG, MPI_COMM_WORLD);
    }
    bench_ctl_bcast(&token, 1, MPI_CHAR);
}

void bench_bcast_double(double *v) {
    bench_ctl_bcast(v, 1, MPI_DOUBLE);
}

/* Max (op 0) or mean (op 1) of v over all ranks, on all ranks. */
static double bench_ctl_reduce(double v, int op) {
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    double r = v;
    if (rank == 0) {
        for (int p = 1; p < n; p++) {
            double x;
            MPI_Recv(&x, 1, MPI_DOUBLE, p, BENCH_CTL_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            r = op == 0 ? (x > r ? x : r) : r + x;
        }
        if (op == 1)
            r /= n;
    } else {
        MPI_Send(&v, 1, MPI_DOUBLE, 0, BENCH_CTL_TAG, MPI_COMM_WORLD);
    }
    bench_ctl_bcast(&r, 1, MPI_DOUBLE);
    return r;
}

double bench_allmax(double v) {
    return bench_ctl_reduce(v, 0);
}

double bench_allmean(double v) {
    return bench_ctl_reduce(v, 1);
}

/*
 * Core-to-core latency probe. On a virtual machine the host may run the two
 * virtual CPUs on cores that share a cache for a while, then on cores that
 * do not: seen on the development machine, a cache line moves from one to
 * the other in about 30 ns for some seconds, then in about 165 ns for some
 * seconds. A run of a small-message benchmark then measures mostly where the
 * host put the CPUs. Each probe times a cache line passed back and forth
 * between ranks 0 and 1 through a page of their own (no MPI involved), so
 * that every figure can carry the state the machine was in.
 */
#define BENCH_C2C_LINES 64
#define BENCH_C2C_TRIPS 1000

static struct {
    int state; /* 0: not set up, 1: ready, -1: unavailable */
    _Atomic long *page;
    unsigned next; /* the line the next probe uses */
} bench_c2c;

static void bench_c2c_setup(const bench_t *b) {
    char name[64];
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    /* Oversubscribed, the two ranks can share a CPU: the probe would measure
     * the scheduler. */
    int ok = b->nprocs >= 2 && ncpu >= 2 && b->nprocs <= ncpu;
    int fd = -1;
    /* not "tandem*": the test runner fails a test when such a name appears in /dev/shm */
    snprintf(name, sizeof name, "/bench-c2c.%ld", (long)getpid());
    bench_ctl_bcast(name, (int)sizeof name, MPI_CHAR);
    if (ok && b->rank == 0) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 && ftruncate(fd, 4096) != 0) {
            close(fd);
            fd = -1;
        }
    }
    bench_barrier(); /* rank 0 has created it */
    if (ok && b->rank == 1)
        fd = shm_open(name, O_RDWR, 0600);
    bench_barrier(); /* rank 1 has opened it */
    if (ok && b->rank == 0 && fd >= 0)
        shm_unlink(name);
    if (ok && b->rank <= 1) {
        void *p =
            fd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
        if (fd >= 0)
            close(fd);
        if (p == MAP_FAILED)
            ok = 0;
        else
            bench_c2c.page = p;
    }
    /* every rank learns whether both ends are ready: the max of -ok is 0 if one failed */
    double v = bench_ctl_reduce(ok ? -1.0 : 0.0, 0);
    bench_c2c.state = v < 0 ? 1 : -1;
}

double bench_c2c_probe(const bench_t *b) {
    if (bench_c2c.state == 0)
        bench_c2c_setup(b);
    if (bench_c2c.state < 0)
        return NAN;
    _Atomic long *line = bench_c2c.page + (size_t)(bench_c2c.next++ % BENCH_C2C_LINES) * 8;
    if (b->rank == 0)
        atomic_store(line, 0);
    bench_barrier();
    double ns = NAN;
    if (b->rank <= 1) {
        /* rank 0 writes odd values, rank 1 answers with the next even one */
        double t0 = bench_now(), limit = t0 + 0.05;
        int done = 1;
        for (long i = 0; i < BENCH_C2C_TRIPS && done; i++) {
            if (b->rank == 0)
                atomic_store_explicit(line, 2 * i + 1, memory_order_release);
            long want = b->rank == 0 ? 2 * i + 2 : 2 * i + 1;
            for (long spin = 0; atomic_load_explicit(line, memory_order_acquire) != want; spin++) {
                if ((spin & 1023) == 1023 && bench_now() > limit) {
                    done = 0;
                    break;
                }
            }
            if (done && b->rank == 1)
                atomic_store_explicit(line, 2 * i + 2, memory_order_release);
        }
        if (done && b->rank == 0)
            ns = (bench_now() - t0) * 1e9 / (2.0 * BENCH_C2C_TRIPS);
    }
    bench_ctl_bcast(&ns, 1, MPI_DOUBLE);
    return ns;
}

void bench_row_c2c(const bench_t *b, const char *bench, const char *param, size_t size,
                   double before, double after) {
    if (isnan(before) || isnan(after))
        return;
    bench_row(b, bench, param, size, "c2c_ns", before > after ? before : after);
}

/* ---- the multi-threaded benchmarks' runner (common.h) ---- */

typedef struct {
    bench_mt_t *r;
    int t;
} mt_arg_t;

static void *mt_thread(void *p) {
    mt_arg_t *a = p;
    bench_mt_t *r = a->r;
    if (r->warm > 0)
        r->loop(r, a->t, 0, r->warm);
    pthread_barrier_wait(&r->bar);
    double t0 = bench_now();
    r->loop(r, a->t, r->warm, r->iters);
    r->secs[a->t] = bench_now() - t0;
    return NULL;
}

/* Run the loop in r->nthreads threads on ranks 0 and 1 (other ranks wait). */
static void mt_go(bench_mt_t *r) {
    pthread_t th[BENCH_MT_MAX_THREADS];
    mt_arg_t arg[BENCH_MT_MAX_THREADS];
    bench_barrier();
    if (r->b->rank < 2) {
        pthread_barrier_init(&r->bar, NULL, (unsigned)r->nthreads);
        for (int t = 0; t < r->nthreads; t++) {
            arg[t] = (mt_arg_t){r, t};
            r->secs[t] = 0;
            if (pthread_create(&th[t], NULL, mt_thread, &arg[t]) != 0)
                bench_fail("cannot create thread %d", t);
        }
        for (int t = 0; t < r->nthreads; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&r->bar);
    }
    bench_barrier();
}

/* Rank 0's iteration and warm-up counts for this size, from a probe run of a few
 * iterations: the budget's worth, between -n and -i (a tenth of -i for large sizes), and
 * at most a fifth of the budget of warm-up (a library whose threads spin on a shared core
 * can take a scheduler time slice per message). */
static void mt_plan(bench_mt_t *r) {
    const bench_t *b = r->b;
    long cap = r->size <= BENCH_SMALL ? b->iters : b->iters / 10;
    if (cap < b->iters_min)
        cap = b->iters_min;
    r->warm = 0;
    r->iters = cap < 4 ? cap : 4;
    mt_go(r);
    double slowest = 0;
    for (int t = 0; t < r->nthreads; t++)
        slowest = r->secs[t] > slowest ? r->secs[t] : slowest;
    double per = slowest / (double)r->iters, plan[2] = {(double)cap, 0};
    if (per > 0 && b->budget_s / per < plan[0])
        plan[0] = b->budget_s / per;
    if (plan[0] < (double)b->iters_min)
        plan[0] = (double)b->iters_min;
    plan[1] = (double)(r->size <= BENCH_SMALL ? b->warmup : b->warmup / 10);
    if (per > 0 && b->budget_s / 5 / per < plan[1])
        plan[1] = b->budget_s / 5 / per;
    if (plan[1] < 1 && b->warmup > 0)
        plan[1] = 1;
    bench_bcast_double(&plan[0]);
    bench_bcast_double(&plan[1]);
    r->iters = (long)plan[0];
    r->warm = (long)plan[1];
}

/* The thread counts of -c (a list like 1,2,4), into counts; returns how many. */
static int mt_threads_parse(const bench_t *b, int *counts, int max) {
    const char *p = b->list;
    int n = 0;
    while (p && *p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > BENCH_MT_MAX_THREADS || n >= max)
            bench_fail("-c wants thread counts from 1 to %d, like 1,2,4; got '%s'",
                       BENCH_MT_MAX_THREADS, b->list);
        counts[n++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            bench_fail("-c wants thread counts like 1,2,4; got '%s'", b->list);
    }
    if (!n)
        bench_fail("-c names no thread count");
    return n;
}

void bench_mt_run(const bench_t *b, int nbufs, int nslots, bench_mt_loop_fn_t loop,
                  bench_mt_report_fn_t report) {
    int counts[BENCH_MAX_LIST];
    if (b->nprocs < 2)
        bench_fail("%s needs at least 2 ranks, got %d", b->name, b->nprocs);
    int nc = mt_threads_parse(b, counts, BENCH_MAX_LIST), maxt = 0;
    for (int i = 0; i < nc; i++)
        maxt = counts[i] > maxt ? counts[i] : maxt;
    bench_buf_t *bufs = calloc((size_t)maxt * (size_t)nbufs, sizeof(*bufs));
    if (!bufs)
        bench_fail("out of memory for %d threads' buffers", maxt);
    if (b->rank < 2)
        for (int i = 0; i < maxt * nbufs; i++)
            bench_buf_alloc(b, &bufs[i], bench_size_max(b), nslots);
    for (int ci = 0; ci < nc; ci++) {
        char param[16];
        snprintf(param, sizeof param, "%d", counts[ci]);
        for (int si = 0; si < b->nsizes; si++) {
            bench_mt_t run = {.b = b,
                              .nthreads = counts[ci],
                              .size = b->sizes[si],
                              .loop = loop,
                              .bufs = bufs,
                              .nbufs = nbufs};
            mt_plan(&run);
            mt_go(&run);
            report(&run, param);
        }
    }
    if (b->rank < 2)
        for (int i = 0; i < maxt * nbufs; i++)
            bench_buf_free(&bufs[i]);
    free(bufs);
}
