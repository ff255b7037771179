/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbourhood collectives (MPI 3.1 §7.6): one round with a receive from
 * every in-neighbour and a send to every out-neighbour. All five forms
 * (allgather, allgatherv, alltoall, alltoallv, alltoallw) are this exchange
 * with blocks laid out differently (coll.h, tdm_coll_nside_t). Receives go
 * first so that a neighbour's eager data finds them posted. Two messages to
 * one process carry the same tag and match in posting order (the
 * non-overtaking rule); that is what orders repeated neighbours.
 */
#include "sched.h"

static char *blk_addr(const tdm_coll_nside_t *s, int i) {
    if (s->whole)
        return s->buf;
    if (s->bdispls)
        return (char *)s->buf + s->bdispls[i];
    size_t items = tdm_coll_disp_of(s->displs, s->count, i);
    return tdm_coll_at(s->buf, items, s->dt);
}

static void post(tdm_sched_t *sc, const tdm_coll_nside_t *s, int i, bool send) {
    int peer = s->peers[i];
    if (peer < 0) /* MPI_PROC_NULL */
        return;
    size_t n = tdm_coll_count_of(s->counts, s->count, i);
    tdm_dtype_t *dt = s->dts ? s->dts[i] : s->dt;
    if (send)
        tdm_sched_send(sc, blk_addr(s, i), n, dt, peer, 0);
    else
        tdm_sched_recv(sc, blk_addr(s, i), n, dt, peer, 0);
}

int tdm_coll_neighbor(const tdm_coll_nside_t *send, const tdm_coll_nside_t *recv, bool cart,
                      tdm_comm_t *comm, tdm_req_t **req_p) {
    tdm_sched_t *s = tdm_sched_new(comm, req_p == NULL);
    if (!s)
        return TDM_ERR_NOMEM;
    for (int i = 0; i < recv->n; i++)
        post(s, recv, cart ? i ^ 1 : i, false);
    for (int i = 0; i < send->n; i++)
        post(s, send, i, true);
    return tdm_sched_run(s, req_p);
}
