/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned point-to-point communication (MPI-4.1 chapter 4) as the layers
 * above see it; the engine side is part.c.
 *
 * A partitioned send and receive are persistent requests (kinds TDM_REQ_PSEND
 * and TDM_REQ_PRECV) matched once, at init, by (context, source, tag) in init
 * order, in queues of their own: an ordinary receive never matches a
 * partitioned send, nor a partitioned receive an ordinary message. Each start
 * opens a round whose completion is `inner` (a TDM_REQ_OTHER request the
 * Wait/Test family completes, as for persistent point-to-point); the request is
 * active from the start until that inner request has been finished.
 *
 * The two sides may split the same bytes into different partition counts and
 * datatypes. Partitions marked ready are sent as soon as the receiver has
 * started the round, each run of consecutive ready partitions as one ordinary
 * message (eager or rendezvous, as the engine chooses) on `data_ctx`, an
 * internal context of the communicator, with tag TDM_P2P_PART_TAG of the
 * receive, so no user receive can take it. A receive partition has arrived
 * once all of its bytes have.
 */
#ifndef TDM_P2P_PART_H
#define TDM_P2P_PART_H

#include "p2p.h"

/* The tag of a partitioned receive's data: -64 - its request index, so
 * [TDM_P2P_PART_TAG_MIN, -64] on the data context (src/mpi/part.c checks that
 * the communicator's internal tags stay clear of it). */
#define TDM_P2P_PART_TAG(_rreq_id) (-64 - (int)((_rreq_id)&TDM_REQ_INDEX_MASK))
#define TDM_P2P_PART_TAG_MIN (-64 - (int)TDM_REQ_INDEX_MASK)

typedef struct tdm_part_args {
    void *buf;
    int partitions; /* >= 1 */
    size_t count;   /* items of dt per partition; partitions * count * dt->size fits a size_t */
    tdm_dtype_t *dt;
    int peer;          /* the peer's rank in the communicator (remote group), or TDM_PROC_NULL */
    int peer_world;    /* its world rank */
    int self_rank;     /* ours in the communicator */
    int tag;           /* >= 0 */
    uint32_t ctx;      /* the communicator's context: the matching key */
    uint32_t data_ctx; /* where the pieces travel: a context no user receive is posted on */
    void *comm;        /* the upper layer's communicator (held by the request) */
} tdm_part_args_t;

/* Create an inactive partitioned send (announced to the receiver at once) or
 * receive (matched now if the send's announcement is here, else when it comes). */
tdm_rc_t tdm_p2p_psend_init(const tdm_part_args_t *a, tdm_req_t **req_p);
tdm_rc_t tdm_p2p_precv_init(const tdm_part_args_t *a, tdm_req_t **req_p);
/* Start a round of an inactive partitioned request: every partition not ready
 * (send) or not arrived (receive); r->inner is the round's completion. */
tdm_rc_t tdm_p2p_part_start(tdm_req_t *r);
/* Number of partitions of a partitioned request. */
int tdm_p2p_part_partitions(const tdm_req_t *r);
/* Send side, active round: is partition i marked ready? */
bool tdm_p2p_part_is_ready(const tdm_req_t *r, int i);
/* Mark partitions ready (checked by the caller: in range, not ready yet, the
 * request active), the range [lo, hi] or the n of list, then send what can go. */
void tdm_p2p_part_ready_range(tdm_req_t *r, int lo, int hi);
void tdm_p2p_part_ready_list(tdm_req_t *r, const int *list, int n);
/* Receive side, active round: has receive partition i arrived whole? */
bool tdm_p2p_part_arrived(const tdm_req_t *r, int i);
/* Release an inactive partitioned request (its round finished or never started). */
void tdm_p2p_part_free(tdm_req_t *r);

#endif
