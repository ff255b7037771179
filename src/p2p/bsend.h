/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffered sends (MPI_Bsend and its kin): the message is packed into a block of
 * the buffer the user attached and sent from there, so the user's call completes
 * at once. Blocks are kept in address order, placed first-fit and given back when
 * their send completes. One buffer per process, used by the bindings' thread only.
 */
#ifndef TDM_P2P_BSEND_H
#define TDM_P2P_BSEND_H

#include "p2p.h"

#include <stdbool.h>
#include <stddef.h>

/* Bytes of bookkeeping each message takes in the buffer (MPI_BSEND_OVERHEAD, which
 * src/mpi/abi.c checks): a buffer of sum(size + overhead) holds those messages. */
#define TDM_P2P_BSEND_OVERHEAD 96

/* Attach `buf` of `size` bytes; false if a buffer is attached already. */
bool tdm_p2p_bsend_attach(void *buf, size_t size);
/* The attached buffer (NULL: none); its size into *size_p. */
void *tdm_p2p_bsend_buffer(size_t *size_p);
/* Wait until every buffered send has completed, then forget the buffer. */
void tdm_p2p_bsend_detach(void);
/* Pack `count` items of dt at buf into a block and start sending it (mode
 * TDM_MODE_BUFFERED, and TDM_MODE_BLOCKING if `blocking`); the send releases its
 * block and itself when it completes. TDM_ERR_BUFFER: no buffer, or no room in it. */
tdm_rc_t tdm_p2p_bsend(const void *buf, size_t count, tdm_dtype_t *dt, int dst_world, int self_rank,
                       int tag, uint32_t ctx, bool blocking, void *comm);

#endif
