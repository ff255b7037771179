/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicators as the bindings see them. A communicator maps its ranks to
 * MPI_COMM_WORLD ranks (NULL map = identity, O(1) memory) and owns two context
 * ids: `ctx` for point-to-point and `ctx + 1` for collectives, so the two
 * never match each other's messages.
 */
#ifndef TDM_COMM_H
#define TDM_COMM_H

#include <stdint.h>

typedef struct tdm_comm {
    int handle;
    int refs;           /* user handle + pending operations */
    uint32_t ctx;
    int rank, size;
    int *world;         /* comm rank -> world rank; NULL when identity */
    int errhandler;     /* MPI_Errhandler handle */
    char name[128];
    void *ext;          /* groups, attributes, info, topology (comm/ owns it) */
} tdm_comm_t;

extern tdm_comm_t *tdm_comm_world, *tdm_comm_self;

int tdm_comm_init(int world_rank, int world_size);
void tdm_comm_fini(void);
tdm_comm_t *tdm_comm_get(int handle);

static inline int tdm_comm_world_rank(const tdm_comm_t *c, int rank) {
    return c->world ? c->world[rank] : rank;
}

#endif
