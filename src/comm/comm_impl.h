/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to src/comm/: point-to-point between participants of an internal collective. */
#ifndef TDM_COMM_IMPL_H
#define TDM_COMM_IMPL_H

#include "comm.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Blocking send / receive of raw bytes to / from participant i on parent->ctx + 1. */
int tdm_comm_peer_send(const tdm_comm_peers_t *p, int i, const void *buf, size_t len, int tag);
int tdm_comm_peer_recv(const tdm_comm_peers_t *p, int i, void *buf, size_t len, int tag);

/* The participants of an internal collective (fields as tdm_comm_peers_t's). */
static inline tdm_comm_peers_t tdm_comm_peers(tdm_comm_t *parent, const int *prank, int n, int me,
                                              int tag_up, int tag_down) {
    return (tdm_comm_peers_t){
        .parent = parent, .prank = prank, .n = n, .me = me, .tag_up = tag_up, .tag_down = tag_down};
}

/* A new communicator (registered handle, errhandler copied from parent) over
 * `map` (taken over) with context ctx; NULL if out of memory (logged; the map
 * and the id are released then). */
tdm_comm_t *tdm_comm_new(tdm_comm_t *parent, tdm_rankmap_t map, int rank, uint32_t ctx);

/* ---- splits (comm.c, intercomm.c, split_type.c) ---- */

/* What each process brings to a split: a color (defined = 0: MPI_UNDEFINED, no
 * communicator) and a key. */
typedef struct tdm_comm_split_item {
    uint64_t color;
    int32_t key;
    int32_t defined;
} tdm_comm_split_item_t;

/* Split an intracomm (comm.c) or an intercomm (intercomm.c) by 64-bit colors;
 * results as tdm_comm_split's. */
int tdm_comm_split_color(tdm_comm_t *parent, uint64_t color, bool defined, int key,
                         tdm_comm_t **new_p);
int tdm_comm_inter_split_color(tdm_comm_t *c, uint64_t color, bool defined, int key,
                               tdm_comm_t **new_p);
/* The same once every process's item is known (indexed by rank; an intercomm's
 * two groups apart): the context agreement and the new communicator. */
int tdm_comm_split_items(tdm_comm_t *parent, const tdm_comm_split_item_t *all, tdm_comm_t **new_p);
int tdm_comm_inter_split_items(tdm_comm_t *c, const tdm_comm_split_item_t *local,
                               const tdm_comm_split_item_t *remote, tdm_comm_t **new_p);
/* Every process's `len` bytes at `in`, over both groups of an intercomm: the local
 * group's into lout (local size x len), the remote group's into rout. 0 or -1. */
int tdm_comm_inter_allgather(tdm_comm_t *c, const void *in, size_t len, void *lout, void *rout);
/* This node's color: processes with the same one share memory. */
uint64_t tdm_comm_node_color(void);

/* ---- creation from groups (fromgroup.c) ---- */

/* Bytes of a string tag in a creation check: MPI_MAX_STRINGTAG_LEN (256) and a NUL. */
#define TDM_COMM_STRINGTAG_BYTES 257
/* `stringtag` into a zero-filled key field (longer tags are refused by the bindings). */
void tdm_comm_stringtag_copy(char dst[TDM_COMM_STRINGTAG_BYTES], const char *stringtag);
/* The tag of the messages of creations under `stringtag` on the boot communicator. */
int tdm_comm_from_group_tag(const char *stringtag);
/* Group g's members as boot communicator (world) ranks, from its rank `first` on and
 * wrapping round, so that rank `first` is participant 0; NULL if out of memory (logged). */
int *tdm_comm_group_boot_ranks(const tdm_group_t *g, int first);
/* FNV-1a of a map's size and world ranks in order. */
uint64_t tdm_comm_rankmap_digest(const tdm_rankmap_t *m);

/* What a creation check found different; the largest found wins. */
enum { TDM_VERIFY_GROUP = 1, TDM_VERIFY_LEADER = 2, TDM_VERIFY_TAG = 3 };
/* The argument error of a verdict, and *why_p the words for it. */
tdm_comm_bad_t tdm_comm_verify_class(int verdict, const char **why_p);

#endif
