/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Windows as the bindings see them (win.c, rma.c): the handle, what MPI keeps
 * beside src/rma's window (error handler, name, attributes, hints, the values the
 * predefined attributes point at), the lookup and the error report through the
 * window's handler.
 */
#ifndef TDM_MPI_WIN_H
#define TDM_MPI_WIN_H

#include "bind.h"
#include "../rma/rma.h"

/* Window handles: 0xa0000000 | index (MPICH's direct window kind). */
#define TDM_WIN_USER_BASE 0xa0000000u
#define TDM_WIN_INDEX_MASK 0x03ffffffu

typedef struct tdm_mpi_win {
    int handle;
    tdm_win_t *w;
    int errhandler; /* the window holds a reference; MPI_ERRORS_ARE_FATAL by default */
    char name[MPI_MAX_OBJECT_NAME];
    struct tdm_attr_list *attrs;
    struct tdm_info *hints; /* what MPI_Win_get_info reports (set at creation and by set_info) */
    /* values the predefined attributes point at (MPI-4.1 12.2.6) */
    MPI_Aint attr_size;
    int attr_disp_unit, attr_flavor, attr_model;
} tdm_mpi_win_t;

/* The live window a handle names, or NULL. */
tdm_mpi_win_t *tdm_mpi_win_get(MPI_Win handle);

/* Report an error of the call `fn` on window `mw` through its error handler. */
int tdm_mpi_win_err(tdm_mpi_win_t *mw, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* src/rma's failure `rc` (its message from tdm_rma_why()) as an MPI error on mw. */
int tdm_mpi_win_rma_err(tdm_mpi_win_t *mw, tdm_rma_rc_t rc, const char *fn);

#endif
