/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Logging with per-component levels, set at run time with TANDEM_LOG
 * ("debug", or "p2p:debug,shm:trace"). Messages are lowercase, one line, and
 * name the cause (errno text via %m, peer rank, sizes).
 */
#ifndef TDM_LOG_H
#define TDM_LOG_H

typedef enum {
    TDM_LOG_ERROR,
    TDM_LOG_WARN,
    TDM_LOG_INFO,
    TDM_LOG_DEBUG,
    TDM_LOG_TRACE,
} tdm_log_level_t;

/* clang-format off */
#define TDM_LOG_COMPONENTS(_X) \
    _X(BASE, "base")           \
    _X(BOOT, "boot")           \
    _X(SHM, "shm")             \
    _X(CMA, "cma")             \
    _X(NET, "net")             \
    _X(UCX, "ucx")             \
    _X(P2P, "p2p")             \
    _X(DTYPE, "dtype")         \
    _X(COMM, "comm")           \
    _X(COLL, "coll")           \
    _X(RMA, "rma")             \
    _X(MPIT, "mpit")           \
    _X(MPI, "mpi")
/* clang-format on */

typedef enum {
#define TDM_LOG_COMP_ENUM(_id, _name) TDM_LOG_COMP_##_id,
    TDM_LOG_COMPONENTS(TDM_LOG_COMP_ENUM)
#undef TDM_LOG_COMP_ENUM
        TDM_LOG_COMP_COUNT
} tdm_log_comp_t;

extern unsigned char tdm_log_levels[TDM_LOG_COMP_COUNT];

/* Parse a TANDEM_LOG specification; returns 0, or -1 (and warns) on a bad entry. */
int tdm_log_configure(const char *spec);
/* Set the rank shown in every message (-1 before it is known). */
void tdm_log_set_rank(int rank);
void tdm_log_emit(tdm_log_comp_t comp, tdm_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define tdm_log(_comp, _level, ...)                                                                \
    do {                                                                                           \
        if (__builtin_expect(tdm_log_levels[TDM_LOG_COMP_##_comp] >= (_level), 0))                 \
            tdm_log_emit(TDM_LOG_COMP_##_comp, (_level), __VA_ARGS__);                             \
    } while (0)
#define tdm_error(_comp, ...) tdm_log(_comp, TDM_LOG_ERROR, __VA_ARGS__)
#define tdm_warn(_comp, ...) tdm_log(_comp, TDM_LOG_WARN, __VA_ARGS__)
#define tdm_info(_comp, ...) tdm_log(_comp, TDM_LOG_INFO, __VA_ARGS__)
#define tdm_debug(_comp, ...) tdm_log(_comp, TDM_LOG_DEBUG, __VA_ARGS__)
#define tdm_trace(_comp, ...) tdm_log(_comp, TDM_LOG_TRACE, __VA_ARGS__)

#endif
