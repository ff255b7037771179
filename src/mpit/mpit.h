/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI tool information interface (MPI-4.1 chapter 16.3) below the
 * bindings: control variables are params.def's tunables, performance
 * variables the layers' registries (base/pvar.h), events events.def, and the
 * categories params.def's TDM_PARAM_CATEGORY lines. src/mpi/mpit.c maps MPI's
 * handles, constants and error codes to these and back; nothing here needs
 * mpi.h.
 *
 * Every function returns a tdm_mpit_rc_t. Calls are serialised by the user
 * (MPI_T_init_thread provides at most MPI_THREAD_SERIALIZED), as every call of
 * this library is: no locks.
 */
#ifndef TDM_MPIT_H
#define TDM_MPIT_H

#include "../comm/comm.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    TDM_MPIT_OK = 0,
    TDM_MPIT_ERR_INVALID,         /* a bad argument */
    TDM_MPIT_ERR_MEMORY,          /* out of memory */
    TDM_MPIT_ERR_NOT_INITIALIZED, /* no MPI_T_init_thread in effect */
    TDM_MPIT_ERR_INVALID_INDEX,   /* a variable, category, enumeration or source index */
    TDM_MPIT_ERR_INVALID_NAME,    /* no variable of that name */
    TDM_MPIT_ERR_INVALID_HANDLE,  /* not a live handle (of this session) */
    TDM_MPIT_ERR_INVALID_SESSION,
    TDM_MPIT_ERR_OUT_OF_HANDLES,
    TDM_MPIT_ERR_SET_NOT_NOW, /* read at MPI_Init: writable before it only */
    TDM_MPIT_ERR_SET_NEVER,   /* constant */
    TDM_MPIT_ERR_NO_STARTSTOP,
    TDM_MPIT_ERR_NO_WRITE,
    TDM_MPIT_ERR_NO_ATOMIC,
    TDM_MPIT_ERR_NOT_SUPPORTED,
} tdm_mpit_rc_t;

/* Where MPI itself is: before its first user (MPI_Init or MPI_Session_init)
 * set the transport up, while it has one, or after its last one left (the
 * transport stays). Cvars read when the transport is set up can be written
 * before it only; run-time writes reach the layers once it is. */
typedef enum { TDM_MPIT_BEFORE, TDM_MPIT_RUNNING, TDM_MPIT_AFTER } tdm_mpit_phase_t;
void tdm_mpit_set_phase(tdm_mpit_phase_t phase);
/* MPI_Finalize, before the communicators go: handles bound to one keep its
 * final counters. */
void tdm_mpit_comm_fini(void);

/* Nested: every init needs a fini; the last fini frees every session, handle
 * and event registration. */
tdm_mpit_rc_t tdm_mpit_init(void);
tdm_mpit_rc_t tdm_mpit_fini(void);
bool tdm_mpit_ready(void);
/* The one lock of the tool interface: the bindings hold it across every MPI_T call but
 * the event-instance ones (which a callback makes on its own instance), so MPI_T is
 * thread-safe whatever MPI's thread level (MPI_T_init_thread may come before MPI_Init).
 * Recursive: a dropped-events handler that runs inside MPI_T_event_handle_free may call
 * MPI_T. Taken above every other layer's lock; the engine never takes it. */
void tdm_mpit_lock(void);
void tdm_mpit_unlock(void);

/* The standard's string convention (16.3.3): at most *len - 1 characters and
 * a terminator into dst, and *len set to the string's length + 1. */
void tdm_mpit_strout(char *dst, int *len, const char *src);

/* Value types of variables and event elements, as MPI datatypes. */
typedef enum {
    TDM_MPIT_INT,
    TDM_MPIT_UNSIGNED_LONG_LONG,
    TDM_MPIT_COUNT, /* signed 64-bit */
    TDM_MPIT_CHAR,
    TDM_MPIT_DOUBLE,
} tdm_mpit_type_t;
/* MPI_T_SCOPE_* in order from MPI_T_SCOPE_CONSTANT */
typedef enum {
    TDM_MPIT_SCOPE_CONSTANT,
    TDM_MPIT_SCOPE_READONLY,
    TDM_MPIT_SCOPE_LOCAL,
    TDM_MPIT_SCOPE_GROUP,
    TDM_MPIT_SCOPE_GROUP_EQ,
    TDM_MPIT_SCOPE_ALL,
    TDM_MPIT_SCOPE_ALL_EQ,
} tdm_mpit_scope_t;
/* Verbosity: 0..8 in the order of MPI_T_VERBOSITY_USER_BASIC .. MPIDEV_ALL. */

/* ---- enumerations ---- */
typedef struct tdm_mpit_enum tdm_mpit_enum_t;
bool tdm_mpit_enum_valid(const tdm_mpit_enum_t *e);
void tdm_mpit_enum_info(const tdm_mpit_enum_t *e, int *num, const char **name_p);
tdm_mpit_rc_t tdm_mpit_enum_item(const tdm_mpit_enum_t *e, int i, int *value, const char **name_p);

/* ---- control variables: params.def's lines, same indices ---- */
typedef struct tdm_mpit_cvar_info {
    const char *name, *desc;
    int verbosity;
    tdm_mpit_type_t type;
    tdm_mpit_enum_t *enumtype; /* NULL: none */
    tdm_mpit_scope_t scope;
} tdm_mpit_cvar_info_t;
int tdm_mpit_cvar_num(void);
tdm_mpit_rc_t tdm_mpit_cvar_info(int i, tdm_mpit_cvar_info_t *out);
tdm_mpit_rc_t tdm_mpit_cvar_index(const char *name, int *i);
typedef struct tdm_mpit_cvar_handle tdm_mpit_cvar_handle_t;
tdm_mpit_rc_t tdm_mpit_cvar_alloc(int i, tdm_mpit_cvar_handle_t **h, int *count);
tdm_mpit_rc_t tdm_mpit_cvar_free(tdm_mpit_cvar_handle_t *h);
tdm_mpit_rc_t tdm_mpit_cvar_read(tdm_mpit_cvar_handle_t *h, void *buf);
tdm_mpit_rc_t tdm_mpit_cvar_write(tdm_mpit_cvar_handle_t *h, const void *buf);

/* ---- performance variables ---- */
typedef struct tdm_mpit_pvar_info {
    const char *name, *desc;
    int verbosity;
    int var_class; /* tdm_pvar_class_t */
    tdm_mpit_type_t type;
    tdm_mpit_enum_t *enumtype;
    int bind; /* tdm_pvar_bind_t */
    bool readonly, continuous, atomic;
} tdm_mpit_pvar_info_t;
int tdm_mpit_pvar_num(void);
tdm_mpit_rc_t tdm_mpit_pvar_info(int i, tdm_mpit_pvar_info_t *out);
tdm_mpit_rc_t tdm_mpit_pvar_index(const char *name, int var_class, int *i);
typedef struct tdm_mpit_session tdm_mpit_session_t;
typedef struct tdm_mpit_pvar_handle tdm_mpit_pvar_handle_t;
tdm_mpit_rc_t tdm_mpit_session_create(tdm_mpit_session_t **s);
tdm_mpit_rc_t tdm_mpit_session_free(tdm_mpit_session_t *s);
/* A variable bound to a communicator needs `comm` (NULL otherwise: ignored). */
tdm_mpit_rc_t tdm_mpit_pvar_alloc(tdm_mpit_session_t *s, int i, tdm_comm_t *comm,
                                  tdm_mpit_pvar_handle_t **h, int *count);
tdm_mpit_rc_t tdm_mpit_pvar_free(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h);
/* all: every handle of the session (MPI_T_PVAR_ALL_HANDLES) */
tdm_mpit_rc_t tdm_mpit_pvar_start(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h, bool all);
tdm_mpit_rc_t tdm_mpit_pvar_stop(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h, bool all);
tdm_mpit_rc_t tdm_mpit_pvar_reset(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h, bool all);
tdm_mpit_rc_t tdm_mpit_pvar_read(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h, void *buf,
                                 bool reset);
tdm_mpit_rc_t tdm_mpit_pvar_write(tdm_mpit_session_t *s, tdm_mpit_pvar_handle_t *h,
                                  const void *buf);
/* The registry MPI_T numbers: every layer's table, one after another. */
const tdm_pvar_desc_t *tdm_mpit_pvar_desc(int i);

/* ---- categories ---- */
typedef struct tdm_mpit_cat_info {
    const char *name, *desc;
    int ncvars, npvars, ncats, nevents;
} tdm_mpit_cat_info_t;
int tdm_mpit_cat_num(void);
tdm_mpit_rc_t tdm_mpit_cat_info(int c, tdm_mpit_cat_info_t *out);
tdm_mpit_rc_t tdm_mpit_cat_index(const char *name, int *c);
/* which: 'c' cvars, 'p' pvars, 's' subcategories, 'e' events; at most len indices */
tdm_mpit_rc_t tdm_mpit_cat_members(int c, char which, int len, int *indices);

/* ---- events ---- */
typedef struct tdm_mpit_event_info {
    const char *name, *desc;
    int verbosity;
    int nelems;
    const tdm_mpit_type_t *types;
    const long *displs; /* bytes from the start of the event's data */
    tdm_mpit_enum_t *enumtype;
} tdm_mpit_event_info_t;
typedef struct tdm_mpit_event_reg tdm_mpit_event_reg_t;
typedef struct tdm_mpit_event_inst tdm_mpit_event_inst_t;
/* How callbacks reach the user: src/mpi casts back to MPI's callback types.
 * `fn` is what the user registered. */
typedef struct tdm_mpit_event_calls {
    void (*event)(void *fn, tdm_mpit_event_inst_t *inst, tdm_mpit_event_reg_t *reg, int safety,
                  void *user);
    void (*freed)(void *fn, tdm_mpit_event_reg_t *reg, int safety, void *user);
    void (*dropped)(void *fn, long long count, tdm_mpit_event_reg_t *reg, int source, int safety,
                    void *user);
} tdm_mpit_event_calls_t;
void tdm_mpit_event_set_calls(const tdm_mpit_event_calls_t *calls);
int tdm_mpit_event_num(void);
tdm_mpit_rc_t tdm_mpit_event_info(int i, tdm_mpit_event_info_t *out);
tdm_mpit_rc_t tdm_mpit_event_index(const char *name, int *i);
tdm_mpit_rc_t tdm_mpit_event_alloc(int i, tdm_mpit_event_reg_t **reg);
bool tdm_mpit_event_reg_valid(const tdm_mpit_event_reg_t *reg);
/* safety: 0..3 as MPI_T_CB_REQUIRE_NONE .. ASYNC_SIGNAL_SAFE; fn NULL removes it */
tdm_mpit_rc_t tdm_mpit_event_register(tdm_mpit_event_reg_t *reg, int safety, void *fn, void *user);
tdm_mpit_rc_t tdm_mpit_event_set_dropped(tdm_mpit_event_reg_t *reg, void *fn);
tdm_mpit_rc_t tdm_mpit_event_free(tdm_mpit_event_reg_t *reg, void *free_fn, void *user);
/* Inside a callback only: the instance being delivered. */
tdm_mpit_rc_t tdm_mpit_event_read(tdm_mpit_event_inst_t *inst, int elem, void *buf);
tdm_mpit_rc_t tdm_mpit_event_copy(tdm_mpit_event_inst_t *inst, void *buf);
tdm_mpit_rc_t tdm_mpit_event_timestamp(tdm_mpit_event_inst_t *inst, long long *ts);
tdm_mpit_rc_t tdm_mpit_event_source(tdm_mpit_event_inst_t *inst, int *source);
/* Sources: one, the process's monotonic clock in nanoseconds. */
int tdm_mpit_source_num(void);
tdm_mpit_rc_t tdm_mpit_source_info(int i, const char **name, const char **desc, bool *ordered,
                                   long long *ticks_per_second, long long *max_ticks);
tdm_mpit_rc_t tdm_mpit_source_timestamp(int i, long long *ts);

#endif
