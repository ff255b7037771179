/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to src/comm/: point-to-point between participants of an internal collective. */
#ifndef TDM_COMM_IMPL_H
#define TDM_COMM_IMPL_H

#include "comm.h"

#include <stddef.h>
#include <stdint.h>

/* Blocking send / receive of raw bytes to / from participant i on parent->ctx + 1. */
int tdm_comm_peer_send(const tdm_comm_peers_t *p, int i, const void *buf, size_t len, int tag);
int tdm_comm_peer_recv(const tdm_comm_peers_t *p, int i, void *buf, size_t len, int tag);

/* A new communicator (registered handle, errhandler copied from parent) over
 * `map` (taken over) with context ctx; NULL if out of memory (logged; the map
 * and the id are released then). */
tdm_comm_t *tdm_comm_new(tdm_comm_t *parent, tdm_rankmap_t map, int rank, uint32_t ctx);

/* ---- creation from groups (fromgroup.c) ---- */

/* Bytes of a string tag in a creation check: MPI_MAX_STRINGTAG_LEN (256) and a NUL. */
#define TDM_COMM_STRINGTAG_BYTES 257
/* `stringtag` into a zero-filled key field (longer tags are refused by the bindings). */
void tdm_comm_stringtag_copy(char dst[TDM_COMM_STRINGTAG_BYTES], const char *stringtag);
/* The tag of the messages of creations under `stringtag` on the boot communicator. */
int tdm_comm_from_group_tag(const char *stringtag);
/* FNV-1a of a map's size and world ranks in order. */
uint64_t tdm_comm_rankmap_digest(const tdm_rankmap_t *m);

/* What a creation check found different; the largest found wins. */
enum { TDM_VERIFY_GROUP = 1, TDM_VERIFY_LEADER = 2, TDM_VERIFY_TAG = 3 };
/* The MPI error class of a verdict, and *why_p the words for it. */
int tdm_comm_verify_class(int verdict, const char **why_p);

#endif
