/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the tests of tests/mpi/session: checks that count errors, and the
 * verdict over a communicator of either model (sessions-only programs have no
 * MPI_COMM_WORLD to gather it on).
 */
#ifndef TANDEM_TESTS_STEST_H
#define TANDEM_TESTS_STEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_errs;
static int t_rank = -1;

#define T_CHECK(_cond, ...)                                                                        \
    do {                                                                                           \
        if (!(_cond)) {                                                                            \
            t_errs++;                                                                              \
            if (t_errs < 20) {                                                                     \
                fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", t_rank, __FILE__, __LINE__,  \
                        #_cond);                                                                   \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fprintf(stderr, "\n");                                                             \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* An MPI call that must succeed. */
#define T_OK(_call)                                                                                \
    do {                                                                                           \
        int _rc = (_call);                                                                         \
        if (_rc != MPI_SUCCESS) {                                                                  \
            char _s[MPI_MAX_ERROR_STRING];                                                         \
            int _l;                                                                                \
            MPI_Error_string(_rc, _s, &_l);                                                        \
            fprintf(stderr, "rank %d: %s:%d: %s failed: %s\n", t_rank, __FILE__, __LINE__, #_call, \
                    _s);                                                                           \
            t_errs++;                                                                              \
        }                                                                                          \
    } while (0)

/* An MPI call that must fail with error class _class and a message that names the
 * function _fn (and, through the library's format, the rank). */
#define T_FAILS(_class, _fn, _call)                                                                \
    do {                                                                                           \
        int _rc = (_call), _cls = -1, _l = 0;                                                      \
        char _s[MPI_MAX_ERROR_STRING] = "";                                                        \
        if (_rc != MPI_SUCCESS) {                                                                  \
            MPI_Error_class(_rc, &_cls);                                                           \
            MPI_Error_string(_rc, _s, &_l);                                                        \
        }                                                                                          \
        if (_cls != (_class)) {                                                                    \
            fprintf(stderr, "rank %d: %s:%d: %s returned class %d, expected %s (%d): %s\n",        \
                    t_rank, __FILE__, __LINE__, #_call, _cls, #_class, (_class), _s);              \
            t_errs++;                                                                              \
        } else if (!strstr(_s, _fn) || !strstr(_s, "rank")) {                                      \
            fprintf(stderr,                                                                        \
                    "rank %d: %s:%d: the message of %s does not name %s and the rank: %s\n",       \
                    t_rank, __FILE__, __LINE__, #_call, _fn, _s);                                  \
            t_errs++;                                                                              \
        }                                                                                          \
    } while (0)

/* The error string of a code contains `what`? */
static inline int t_msg_has(int code, const char *what) {
    char s[MPI_MAX_ERROR_STRING] = "";
    int l = 0;
    MPI_Error_string(code, s, &l);
    return strstr(s, what) != NULL;
}

/* Sum the error counts of comm's processes (which must be every process of the
 * job) and print the verdict on its rank 0. Point-to-point only. */
static inline void t_verdict(MPI_Comm comm) {
    int size, rank, total = t_errs;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, 32767, comm, MPI_STATUS_IGNORE);
            total += e;
        }
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
        fflush(stdout);
    } else {
        MPI_Send(&t_errs, 1, MPI_INT, 0, 32767, comm);
    }
}

/* A communicator over every process of the job from session s. */
static inline MPI_Comm t_world_comm(MPI_Session s, const char *tag) {
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    T_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    T_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_Group_free(&g);
    if (c != MPI_COMM_NULL)
        MPI_Comm_rank(c, &t_rank);
    return c;
}

#endif
