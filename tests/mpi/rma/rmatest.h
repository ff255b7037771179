/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the one-sided tests (tests/mpi/rma): checks that count errors,
 * the expected error class of a refused call (and, on Tandem, a message naming
 * the call, the argument and the rank), the window kinds made one way, and the
 * verdict. The programs also build with MPICH's and Open MPI's mpicc, so they
 * use nothing but MPI; what differs on Tandem is found by its library version.
 */
#ifndef TANDEM_TESTS_RMATEST_H
#define TANDEM_TESTS_RMATEST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size, errs;
static int on_tandem; /* messages are checked only where their wording is ours */

#define CHECK(_cond, ...)                                                                          \
    do {                                                                                           \
        if (!(_cond) && errs++ < 20) {                                                             \
            fprintf(stderr, "[%d] %s:%d: ", rank, __FILE__, __LINE__);                             \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define OK(_call)                                                                                  \
    do {                                                                                           \
        int rc_ = (_call);                                                                         \
        if (rc_ != MPI_SUCCESS && errs++ < 20) {                                                   \
            char s_[MPI_MAX_ERROR_STRING] = "";                                                    \
            int l_ = 0;                                                                            \
            MPI_Error_string(rc_, s_, &l_);                                                        \
            fprintf(stderr, "[%d] %s:%d: %s failed: %s\n", rank, __FILE__, __LINE__, #_call, s_);  \
        }                                                                                          \
    } while (0)

/* rc must be of class `cls`; on Tandem its message names `fn`, the rank and `word`. */
static inline void rt_expect(int line, const char *what, int rc, int cls, const char *clsname,
                             const char *fn, const char *word) {
    char msg[MPI_MAX_ERROR_STRING] = "", want[32];
    int len = 0, got = -1;
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &got);
        MPI_Error_string(rc, msg, &len);
    }
    snprintf(want, sizeof(want), "rank %d", rank);
    int bad = got != cls;
    if (on_tandem && !bad)
        bad = !strstr(msg, fn) || !strstr(msg, want) || (word && !strstr(msg, word));
    if (bad && errs++ < 40)
        fprintf(stderr, "[%d] line %d: %s: expected %s (%d)%s%s%s%s; got rc %d class %d: %s\n",
                rank, line, what, clsname, cls, on_tandem ? " naming " : "", on_tandem ? fn : "",
                on_tandem && word ? " and " : "", on_tandem && word ? word : "", rc, got, msg);
}
#define EXPECT(_call, _cls, _fn, _word)                                                            \
    rt_expect(__LINE__, #_call, (_call), (_cls), #_cls, (_fn), (_word))

/* Seconds on the monotonic clock: the wall-time bounds of tests whose ranks wait for each
 * other without MPI calls (a bound is a timeout, never a timing assertion). */
static inline double rt_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* What rt_init does after MPI_Init, for programs that initialise otherwise. */
static inline void rt_setup(void) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(ver, &len);
    on_tandem = strstr(ver, "Tandem") != NULL;
}

static inline void rt_init(int *argc, char ***argv) {
    MPI_Init(argc, argv);
    rt_setup();
}

/* Sum the error counts on rank 0, print the verdict, finalize. */
static inline int rt_finish(void) {
    int total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

/* ---- window kinds ---------------------------------------------------------------------- */
enum rt_kind { K_CREATE, K_ALLOCATE, K_SHARED, K_SHARED_NONCONTIG, K_DYNAMIC, K_NKINDS };
static const char *const rt_kind_names[] = {"create", "allocate", "shared", "shared_noncontig",
                                            "dynamic"};

static inline int rt_parse_kind(const char *s) {
    for (int k = 0; k < K_NKINDS; k++)
        if (!strcmp(s, rt_kind_names[k]))
            return k;
    if (rank == 0)
        fprintf(stderr,
                "unknown window kind '%s' (create, allocate, shared, shared_noncontig, "
                "dynamic)\n",
                s);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return -1;
}

typedef struct {
    MPI_Win win;
    int kind;
    char *base;      /* this rank's window memory */
    MPI_Aint bytes;  /* its size */
    int disp_unit;   /* of every rank (dynamic windows: 1) */
    void *mem;       /* what was malloc'd (create, dynamic) */
    MPI_Aint *tbase; /* dynamic windows: each rank's attached address */
} rt_win_t;

/* A window of `bytes` bytes on every rank of `comm`, of the given kind. Memory of
 * Win_create and of dynamic windows is plain malloc'd memory (not MPI_Alloc_mem):
 * the library must reach it as user memory. */
static inline void rt_win_make(int kind, MPI_Aint bytes, int disp_unit, MPI_Comm comm,
                               rt_win_t *w) {
    int csize;
    MPI_Comm_size(comm, &csize);
    memset(w, 0, sizeof(*w));
    w->kind = kind;
    w->bytes = bytes;
    w->disp_unit = kind == K_DYNAMIC ? 1 : disp_unit;
    MPI_Info info = MPI_INFO_NULL;
    switch (kind) {
    case K_CREATE:
        w->mem = malloc(bytes ? (size_t)bytes : 1);
        w->base = w->mem;
        OK(MPI_Win_create(w->base, bytes, disp_unit, MPI_INFO_NULL, comm, &w->win));
        break;
    case K_ALLOCATE:
        OK(MPI_Win_allocate(bytes, disp_unit, MPI_INFO_NULL, comm, &w->base, &w->win));
        break;
    case K_SHARED_NONCONTIG:
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        /* fall through */
    case K_SHARED:
        OK(MPI_Win_allocate_shared(bytes, disp_unit, info, comm, &w->base, &w->win));
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        break;
    case K_DYNAMIC: {
        w->mem = malloc(bytes ? (size_t)bytes : 1);
        w->base = w->mem;
        OK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w->win));
        OK(MPI_Win_attach(w->win, w->base, bytes));
        MPI_Aint mine;
        MPI_Get_address(w->base, &mine);
        w->tbase = malloc(sizeof(MPI_Aint) * (size_t)csize);
        MPI_Allgather(&mine, 1, MPI_AINT, w->tbase, 1, MPI_AINT, comm);
        break;
    }
    }
}

static inline void rt_win_free(rt_win_t *w) {
    if (w->kind == K_DYNAMIC)
        OK(MPI_Win_detach(w->win, w->base));
    OK(MPI_Win_free(&w->win));
    CHECK(w->win == MPI_WIN_NULL, "MPI_Win_free did not set the handle to MPI_WIN_NULL");
    free(w->mem);
    free(w->tbase);
    memset(w, 0, sizeof(*w));
}

/* The target displacement of byte `off` of `target`'s window (a multiple of disp_unit). */
static inline MPI_Aint rt_disp(const rt_win_t *w, int target, MPI_Aint off) {
    if (w->kind == K_DYNAMIC)
        return w->tbase[target] + off;
    return off / w->disp_unit;
}

#endif
