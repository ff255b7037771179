/* SPDX-License-Identifier: BSD-3-Clause */
#include "comm.h"
#include "../base/log.h"
#include "mpi.h"

#include <stdlib.h>
#include <string.h>

static tdm_comm_t world_obj, self_obj;
tdm_comm_t *tdm_comm_world, *tdm_comm_self;

int tdm_comm_init(int world_rank, int world_size) {
    world_obj = (tdm_comm_t){.handle = MPI_COMM_WORLD, .refs = 1, .ctx = 0, .rank = world_rank,
                             .size = world_size, .errhandler = MPI_ERRORS_ARE_FATAL};
    strcpy(world_obj.name, "MPI_COMM_WORLD");
    self_obj = (tdm_comm_t){.handle = MPI_COMM_SELF, .refs = 1, .ctx = 2, .rank = 0, .size = 1,
                            .errhandler = MPI_ERRORS_ARE_FATAL};
    self_obj.world = malloc(sizeof(int));
    if (!self_obj.world)
        return -1;
    self_obj.world[0] = world_rank;
    strcpy(self_obj.name, "MPI_COMM_SELF");
    tdm_comm_world = &world_obj;
    tdm_comm_self = &self_obj;
    return 0;
}

void tdm_comm_fini(void) {
    free(self_obj.world);
    self_obj.world = NULL;
    tdm_comm_world = tdm_comm_self = NULL;
}

tdm_comm_t *tdm_comm_get(int handle) {
    if (handle == MPI_COMM_WORLD)
        return tdm_comm_world;
    if (handle == MPI_COMM_SELF)
        return tdm_comm_self;
    return NULL;
}
