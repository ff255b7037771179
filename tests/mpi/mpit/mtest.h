/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of the MPI_T tests: checks that count failures, and variables found by name. */
#ifndef TANDEM_TESTS_MTEST_H
#define TANDEM_TESTS_MTEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int m_errs;
static int m_rank = -1;

#define M_CHECK(_cond, ...)                                                                        \
    do {                                                                                           \
        if (!(_cond)) {                                                                            \
            m_errs++;                                                                              \
            if (m_errs < 30) {                                                                     \
                fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", m_rank, __FILE__, __LINE__,  \
                        #_cond);                                                                   \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fprintf(stderr, "\n");                                                             \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* A call that must return `want` (MPI_SUCCESS or an MPI_T_ERR_* class). */
#define M_RC(_want, _call)                                                                         \
    do {                                                                                           \
        int _rc = (_call);                                                                         \
        M_CHECK(_rc == (_want), "%s returned %d, expected %d", #_call, _rc, (int)(_want));         \
    } while (0)
#define M_OK(_call) M_RC(MPI_SUCCESS, _call)

static inline int m_cvar(const char *name) {
    int i = -1;
    int rc = MPI_T_cvar_get_index(name, &i);
    M_CHECK(rc == MPI_SUCCESS, "no control variable %s (%d)", name, rc);
    return i;
}

static inline int m_pvar(const char *name, int var_class) {
    int i = -1;
    int rc = MPI_T_pvar_get_index(name, var_class, &i);
    M_CHECK(rc == MPI_SUCCESS, "no performance variable %s of class %d (%d)", name, var_class, rc);
    return i;
}

/* A handle of a counter-like pvar (started) in session s. */
static inline MPI_T_pvar_handle m_handle(MPI_T_pvar_session s, const char *name, int var_class,
                                         void *obj, int start) {
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int count = -1;
    int i = m_pvar(name, var_class);
    if (i < 0)
        return h;
    M_OK(MPI_T_pvar_handle_alloc(s, i, obj, &h, &count));
    M_CHECK(count >= 1, "%s: count %d", name, count);
    if (start)
        M_OK(MPI_T_pvar_start(s, h));
    return h;
}

static inline unsigned long long m_read(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
    unsigned long long v[16] = {0};
    M_OK(MPI_T_pvar_read(s, h, v));
    return v[0];
}

/* The sum of an array variable's elements (per size class). */
static inline unsigned long long m_read_sum(MPI_T_pvar_session s, MPI_T_pvar_handle h, int n) {
    unsigned long long v[16] = {0}, sum = 0;
    M_OK(MPI_T_pvar_read(s, h, v));
    for (int i = 0; i < n && i < 16; i++)
        sum += v[i];
    return sum;
}

static inline void m_cvar_write_ull(const char *name, unsigned long long v, int want) {
    MPI_T_cvar_handle h;
    int count;
    int i = m_cvar(name);
    M_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    M_RC(want, MPI_T_cvar_write(h, &v));
    M_OK(MPI_T_cvar_handle_free(&h));
}

static inline void m_cvar_write_int(const char *name, int v, int want) {
    MPI_T_cvar_handle h;
    int count;
    int i = m_cvar(name);
    M_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    M_RC(want, MPI_T_cvar_write(h, &v));
    M_OK(MPI_T_cvar_handle_free(&h));
}

static inline unsigned long long m_cvar_read_ull(const char *name) {
    MPI_T_cvar_handle h;
    int count;
    unsigned long long v = 0;
    int i = m_cvar(name);
    M_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    M_OK(MPI_T_cvar_read(h, &v));
    M_OK(MPI_T_cvar_handle_free(&h));
    return v;
}

static inline int m_cvar_read_int(const char *name) {
    MPI_T_cvar_handle h;
    int count, v = -1;
    int i = m_cvar(name);
    M_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    M_OK(MPI_T_cvar_read(h, &v));
    M_OK(MPI_T_cvar_handle_free(&h));
    return v;
}

/* Every rank's error count to rank 0, which prints " No Errors" when all are 0. */
static inline int m_finish(void) {
    int all = 0;
    MPI_Reduce(&m_errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    return all;
}

#endif
