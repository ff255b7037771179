/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to src/comm/: point-to-point between participants of an internal collective. */
#ifndef TDM_COMM_IMPL_H
#define TDM_COMM_IMPL_H

#include "comm.h"

#include <stddef.h>

/* Blocking send / receive of raw bytes to / from participant i on parent->ctx + 1. */
int tdm_comm_peer_send(const tdm_comm_peers_t *p, int i, const void *buf, size_t len, int tag);
int tdm_comm_peer_recv(const tdm_comm_peers_t *p, int i, void *buf, size_t len, int tag);

/* A new communicator (registered handle, errhandler copied from parent) over
 * `map` (taken over) with context ctx; NULL if out of memory (logged; the map
 * and the id are released then). */
tdm_comm_t *tdm_comm_new(tdm_comm_t *parent, tdm_rankmap_t map, int rank, uint32_t ctx);

#endif
