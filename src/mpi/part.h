/* SPDX-License-Identifier: BSD-3-Clause */
/* Partitioned requests as pt2pt.c (MPI_Start) and request.c (freeing,
 * cancelling) handle them; the bindings are in part.c. */
#ifndef TDM_MPI_PART_H
#define TDM_MPI_PART_H

#include "bind.h"

static inline bool tdm_mpi_is_part(const tdm_req_t *r) {
    return r->kind == TDM_REQ_PSEND || r->kind == TDM_REQ_PRECV;
}
/* MPI_Start of an inactive partitioned request: a new round. */
int tdm_mpi_part_start(tdm_req_t *r, const char *fn);
/* MPI_Request_free: refused while a round is under way, else *request becomes
 * MPI_REQUEST_NULL. */
int tdm_mpi_part_free(tdm_req_t *r, MPI_Request *request, const char *fn);
/* MPI_Cancel: refused while a round is under way; otherwise nothing to do. */
int tdm_mpi_part_cancel(tdm_req_t *r, MPI_Request request, const char *fn);

#endif
