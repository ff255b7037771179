/* SPDX-License-Identifier: BSD-3-Clause */
/* MPICH ABI values for the layers below src/mpi (abi.def), so that only the
 * bindings include the public mpi.h. */
#ifndef TDM_BASE_ABI_H
#define TDM_BASE_ABI_H

enum {
#define TDM_ABI(_name, _value) TDM_##_name = _value,
#include "abi.def"
#undef TDM_ABI
};

/* The C types of MPI_Aint, MPI_Offset and MPI_Count (checked in src/mpi/abi.c). */
typedef long tdm_mpi_aint_t;
typedef long tdm_mpi_offset_t;
typedef long tdm_mpi_count_t;

#endif
