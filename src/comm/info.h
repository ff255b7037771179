/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Info objects: an ordered list of (key, value) strings. Keys keep the order
 * in which they were first set (MPI_Info_get_nthkey); setting an existing key
 * replaces its value in place. Used by MPI_Info_* and as the hints of
 * communicators (and later windows and files).
 *
 * Handles: user objects 0x9c000000 | index; MPI_INFO_ENV (0x5c000001) is a
 * predefined read-only object filled on first use.
 */
#ifndef TDM_COMM_INFO_H
#define TDM_COMM_INFO_H

#include <stdbool.h>

typedef struct tdm_info_entry {
    char *key;
    char *val;
} tdm_info_entry_t;

typedef struct tdm_info {
    int handle;    /* 0 for objects with no user handle (hints kept by a communicator) */
    bool readonly; /* MPI_INFO_ENV */
    int n, cap;
    tdm_info_entry_t *e;
} tdm_info_t;

#define TDM_INFO_USER_BASE 0x9c000000u
#define TDM_INFO_INDEX_MASK 0x03ffffffu
#define TDM_INFO_ENV_HANDLE 0x5c000001

/* New empty object; with_handle: registered in the handle table. NULL: no memory. */
tdm_info_t *tdm_info_new(bool with_handle);
/* Copy of src (NULL src: empty); with_handle as above. */
tdm_info_t *tdm_info_dup(const tdm_info_t *src, bool with_handle);
void tdm_info_free(tdm_info_t *info);
/* The object a handle names (MPI_INFO_ENV included), or NULL. */
tdm_info_t *tdm_info_get(int handle);
/* 0, or -1 out of memory. */
int tdm_info_set(tdm_info_t *info, const char *key, const char *val);
/* Value of key, or NULL. */
const char *tdm_info_find(const tdm_info_t *info, const char *key);
/* true if the key was there. */
bool tdm_info_delete(tdm_info_t *info, const char *key);

/* What MPI_INFO_ENV says about the job; it is filled again on its next use when
 * these change (it may be read before MPI_Init, when less is known). */
void tdm_info_env_init(int world_size, const char *thread_level);
/* Info objects live as long as the process, not MPI: MPI-4.1 §11.4.1 lets the
 * Info functions be called before MPI_Init and after MPI_Finalize, on objects made
 * at any time. */

#endif
