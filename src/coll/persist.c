/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent collectives (MPI-4.0 6.13): MPI_<Coll>_init checks its arguments
 * with the same code as MPI_I<coll> (src/mpi/coll.c) and binds them to an inactive
 * persistent request of kind TDM_REQ_OTHER. The request reuses the persistent
 * point-to-point mechanism: MPI_Start builds a fresh schedule with the I-form's
 * builder and makes it `inner`, and request.c's Wait/Test family completes
 * `inner` and leaves the request inactive.
 *
 * The request's tag is taken at init, from the communicator's sequence of
 * persistent collectives (coll/sched.c): init calls are collective and made in
 * the same order on every rank, but starts need not be (MPI-4.1 6.13), and a
 * persistent collective never matches a blocking or non-blocking one. A tag
 * taken at each start (as it once was, from the blocking collectives'
 * sequence) mismatched the messages of requests started in different orders
 * and of collectives called between the starts. The schedule itself is built
 * at each start, with that tag bound, so nothing of it stays pinned while the
 * request is inactive.
 *
 * Count and displacement arrays are copied at init (the user may reuse them),
 * and the datatypes and op are retained until MPI_Request_free, so a type the
 * user frees after init keeps working. The neighbourhood collectives (topo.c)
 * bind the same way; their arrays have the topology's in- and out-degree
 * entries, not the communicator's size, and the neighbour lists are copied
 * with them. On an intercommunicator (coll_inter.c binds the same way, and
 * tdm_coll_call_run picks the two-group builders) the per-peer arrays have an
 * entry per remote rank, except Reduce_scatter's recvcounts (per local rank),
 * and a rooted collective's arrays are significant only where root is MPI_ROOT.
 */
#include "persist.h"

#include <stdlib.h>
#include <string.h>

/* The two-group meanings of cc's fields (coll/inter.h); the checks refuse SCAN
 * on intercommunicators and topologies are never built on them, so those two
 * kinds cannot reach here. */
static int ccall_run_inter(tdm_comm_t *c, const tdm_coll_call_t *cc, tdm_req_t **req_p) {
    switch (cc->kind) {
    case TDM_COLL_CALL_BARRIER:
        return tdm_coll_inter_barrier(c, req_p);
    case TDM_COLL_CALL_BCAST:
        return tdm_coll_inter_bcast(cc->rbuf, cc->rcount, cc->rdt, cc->root, c, req_p);
    case TDM_COLL_CALL_REDUCE:
        return tdm_coll_inter_reduce(cc->sbuf, cc->rbuf, cc->rcount, cc->rdt, cc->op, cc->root, c,
                                     req_p);
    case TDM_COLL_CALL_ALLREDUCE:
        return tdm_coll_inter_allreduce(cc->sbuf, cc->rbuf, cc->rcount, cc->rdt, cc->op, c, req_p);
    case TDM_COLL_CALL_GATHERV:
        return tdm_coll_inter_gatherv(cc->sbuf, cc->scount, cc->sdt, cc->rbuf, cc->rcounts,
                                      cc->rdispls, cc->rcount, cc->rdt, cc->root, c, req_p);
    case TDM_COLL_CALL_SCATTERV:
        return tdm_coll_inter_scatterv(cc->sbuf, cc->scounts, cc->sdispls, cc->scount, cc->sdt,
                                       cc->rbuf, cc->rcount, cc->rdt, cc->root, c, req_p);
    case TDM_COLL_CALL_ALLGATHERV:
        return tdm_coll_inter_allgatherv(cc->sbuf, cc->scount, cc->sdt, cc->rbuf, cc->rcounts,
                                         cc->rdispls, cc->rcount, cc->rdt, c, req_p);
    case TDM_COLL_CALL_ALLTOALLW:
        return tdm_coll_inter_alltoallw(cc->sbuf, cc->scounts, cc->sdispls, cc->sdts, cc->scount,
                                        cc->sdt, cc->rbuf, cc->rcounts, cc->rdispls, cc->rdts,
                                        cc->rcount, cc->rdt, c, req_p);
    case TDM_COLL_CALL_REDUCE_SCATTER:
        return tdm_coll_inter_reduce_scatter(cc->sbuf, cc->rbuf, cc->rcounts, cc->rcount, cc->rdt,
                                             cc->op, c, req_p);
    case TDM_COLL_CALL_SCAN:
    case TDM_COLL_CALL_NEIGHBOR:
        break;
    }
    return TDM_ERR_INTERN;
}

int tdm_coll_call_run(tdm_comm_t *c, const tdm_coll_call_t *cc, tdm_req_t **req_p) {
    if (TDM_UNLIKELY(c->inter))
        return ccall_run_inter(c, cc, req_p);
    switch (cc->kind) {
    case TDM_COLL_CALL_BARRIER:
        return tdm_coll_barrier(c, req_p);
    case TDM_COLL_CALL_BCAST:
        return tdm_coll_bcast(cc->rbuf, cc->rcount, cc->rdt, cc->root, c, req_p);
    case TDM_COLL_CALL_REDUCE:
        return tdm_coll_reduce(cc->sbuf, cc->rbuf, cc->rcount, cc->rdt, cc->op, cc->root, c, req_p);
    case TDM_COLL_CALL_ALLREDUCE:
        return tdm_coll_allreduce(cc->sbuf, cc->rbuf, cc->rcount, cc->rdt, cc->op, c, req_p);
    case TDM_COLL_CALL_SCAN:
        return tdm_coll_scan(cc->sbuf, cc->rbuf, cc->rcount, cc->rdt, cc->op, cc->exclusive, c,
                             req_p);
    case TDM_COLL_CALL_GATHERV:
        return tdm_coll_gatherv(cc->sbuf, cc->scount, cc->sdt, cc->rbuf, cc->rcounts, cc->rdispls,
                                cc->rcount, cc->rdt, cc->root, cc->fixed, c, req_p);
    case TDM_COLL_CALL_SCATTERV:
        return tdm_coll_scatterv(cc->sbuf, cc->scounts, cc->sdispls, cc->scount, cc->sdt, cc->rbuf,
                                 cc->rcount, cc->rdt, cc->root, cc->fixed, c, req_p);
    case TDM_COLL_CALL_ALLGATHERV:
        return tdm_coll_allgatherv(cc->sbuf, cc->scount, cc->sdt, cc->rbuf, cc->rcounts,
                                   cc->rdispls, cc->rcount, cc->rdt, c, req_p);
    case TDM_COLL_CALL_ALLTOALLW:
        return tdm_coll_alltoallw(cc->sbuf, cc->scounts, cc->sdispls, cc->sdts, cc->scount, cc->sdt,
                                  cc->rbuf, cc->rcounts, cc->rdispls, cc->rdts, cc->rcount, cc->rdt,
                                  c, req_p);
    case TDM_COLL_CALL_REDUCE_SCATTER:
        return tdm_coll_reduce_scatter(cc->sbuf, cc->rbuf, cc->rcounts, cc->rcount, cc->rdt, cc->op,
                                       c, req_p);
    case TDM_COLL_CALL_NEIGHBOR:
        return tdm_coll_neighbor(&cc->nsend, &cc->nrecv, cc->cart, c, req_p);
    }
    return TDM_ERR_INTERN;
}

typedef struct persist_coll {
    tdm_coll_call_t cc; /* arrays point into `arrays` and `dts` */
    int64_t *arrays;    /* copies of the significant count/displacement arrays, as
                           given (int or 64-bit elements), each 8-byte aligned */
    tdm_dtype_t **dts;  /* Alltoallw: copies of the send then receive type arrays */
    int ndts;           /* entries of dts (each retained) */
    void *nmem[2];      /* neighbourhood kind: the send, receive side's arrays (nside_copy) */
    int tag;            /* every start's schedule takes it (tdm_coll_persist_tag) */
} persist_coll_t;

/* Bytes of an n-entry array of a's kind. */
static size_t arr_bytes(tdm_coll_arr_t a, size_t n) {
    return n * (a.wide ? sizeof(int64_t) : sizeof(int));
}

/* Point *a (n entries, if present) at a copy of it made at `to`. */
static void arr_copy(tdm_coll_arr_t *a, size_t n, int64_t *to) {
    if (a->p)
        a->p = memcpy(to, a->p, arr_bytes(*a, n));
}

/* Copy the arrays of a neighbourhood side (s->n entries each) into one block,
 * *mem_p, and point s at the copies. -1 on ENOMEM (s then unchanged). */
static int nside_copy(tdm_coll_nside_t *s, void **mem_p) {
    size_t n = (size_t)s->n;
    *mem_p = NULL;
    if (n == 0) {
        *s = (tdm_coll_nside_t){.buf = s->buf, .count = s->count, .dt = s->dt, .whole = s->whole};
        return 0;
    }
    /* widest elements first, so every array is aligned; counts and displs
     * get room for 64-bit elements (the _c forms') */
    char *m =
        malloc(n * (sizeof(ptrdiff_t) + sizeof(tdm_dtype_t *) + 2 * sizeof(int64_t) + sizeof(int)));
    if (!m)
        return -1;
    ptrdiff_t *bdispls = (ptrdiff_t *)m;
    tdm_dtype_t **dts = (tdm_dtype_t **)(bdispls + n);
    int64_t *counts = (int64_t *)(dts + n), *displs = counts + n;
    int *peers = (int *)(displs + n);
    memcpy(peers, s->peers, n * sizeof(int));
    s->peers = peers;
    arr_copy(&s->counts, n, counts);
    arr_copy(&s->displs, n, displs);
    if (s->bdispls)
        s->bdispls = memcpy(bdispls, s->bdispls, n * sizeof(ptrdiff_t));
    if (s->dts)
        s->dts = memcpy(dts, s->dts, n * sizeof(*dts));
    *mem_p = m;
    return 0;
}

/* Take (retain) or drop (release) a neighbourhood side's datatype references. */
static void nside_refs(const tdm_coll_nside_t *s, bool retain) {
    void (*fn)(tdm_dtype_t *) = retain ? tdm_dtype_retain : tdm_dtype_release;
    if (s->dt)
        fn(s->dt);
    if (s->dts)
        for (int i = 0; i < s->n; i++)
            fn(s->dts[i]);
}

/* Does this rank read the send / receive arrays of cc (where the I-form checks them)? */
static void arrays_significant(const tdm_comm_t *c, const tdm_coll_call_t *cc, bool *send_p,
                               bool *recv_p) {
    /* on an intercommunicator the root names itself MPI_ROOT; its rank number
     * may equal a remote root's */
    bool am_root = c->inter ? cc->root == TDM_COLL_ROOT : c->rank == cc->root;
    *send_p = *recv_p = true;
    if (cc->kind == TDM_COLL_CALL_GATHERV)
        *recv_p = am_root;
    else if (cc->kind == TDM_COLL_CALL_SCATTERV)
        *send_p = am_root;
    else if (cc->kind == TDM_COLL_CALL_ALLTOALLW)
        *send_p = cc->sbuf != TDM_COLL_IN_PLACE;
}

/* Entries of cc's send and receive arrays (counts, displacements, Alltoallw's
 * types): one per rank of the communicator, or on an intercommunicator one per
 * remote rank (MPI-4.0 6.2.2), except Reduce_scatter's recvcounts, which
 * split the result over the local group. */
static void array_lengths(const tdm_comm_t *c, const tdm_coll_call_t *cc, int *send_p,
                          int *recv_p) {
    *send_p = *recv_p = c->size;
    if (c->inter) {
        *send_p = c->remote.n;
        *recv_p = cc->kind == TDM_COLL_CALL_REDUCE_SCATTER ? c->size : c->remote.n;
    }
}

static void persist_release(persist_coll_t *pc) {
    tdm_coll_call_t *cc = &pc->cc;
    tdm_coll_refs_release(cc->sdt, cc->rdt, cc->op);
    for (int i = 0; i < pc->ndts; i++)
        tdm_dtype_release(pc->dts[i]);
    if (cc->kind == TDM_COLL_CALL_NEIGHBOR) {
        nside_refs(&cc->nsend, false);
        nside_refs(&cc->nrecv, false);
    }
    free(pc->nmem[1]);
    free(pc->nmem[0]);
    free(pc->dts);
    free(pc->arrays);
    free(pc);
}

tdm_rc_t tdm_coll_persist_init(tdm_comm_t *c, const tdm_coll_call_t *cc, tdm_req_t **req_p) {
    persist_coll_t *pc = calloc(1, sizeof(*pc));
    if (!pc)
        return TDM_ERR_NOMEM;
    pc->cc = *cc;
    bool send_sig, recv_sig;
    int ns, nr;
    arrays_significant(c, cc, &send_sig, &recv_sig);
    array_lengths(c, cc, &ns, &nr);
    tdm_coll_arr_t *arrays[4] = {&pc->cc.scounts, &pc->cc.sdispls, &pc->cc.rcounts,
                                 &pc->cc.rdispls};
    const bool sig[4] = {send_sig, send_sig, recv_sig, recv_sig};
    const int len[4] = {ns, ns, nr, nr};
    size_t words = 0; /* int64_t units, so that each copy stays aligned */
    for (int a = 0; a < 4; a++) {
        if (!sig[a])
            *arrays[a] = TDM_COLL_ARR_NONE;
        if (arrays[a]->p)
            words +=
                (arr_bytes(*arrays[a], (size_t)len[a]) + sizeof(int64_t) - 1) / sizeof(int64_t);
    }
    if (words && !(pc->arrays = malloc(words * sizeof(int64_t))))
        goto err_free;
    int64_t *at = pc->arrays;
    for (int a = 0; a < 4; a++) {
        if (!arrays[a]->p)
            continue;
        size_t bytes = arr_bytes(*arrays[a], (size_t)len[a]);
        arr_copy(arrays[a], (size_t)len[a], at);
        at += (bytes + sizeof(int64_t) - 1) / sizeof(int64_t);
    }
    if (cc->sdts) {
        /* coll.c and coll_inter.c pass both arrays (coll.c: the receive types
         * twice for MPI_IN_PLACE) */
        if (!(pc->dts = malloc((size_t)(ns + nr) * sizeof(*pc->dts))))
            goto err_free;
        memcpy(pc->dts, cc->sdts, (size_t)ns * sizeof(*pc->dts));
        memcpy(pc->dts + ns, cc->rdts, (size_t)nr * sizeof(*pc->dts));
        pc->cc.sdts = pc->dts;
        pc->cc.rdts = pc->dts + ns;
        pc->ndts = ns + nr;
    }
    if (cc->kind == TDM_COLL_CALL_NEIGHBOR &&
        (nside_copy(&pc->cc.nsend, &pc->nmem[0]) || nside_copy(&pc->cc.nrecv, &pc->nmem[1])))
        goto err_free;
    if ((pc->tag = tdm_coll_persist_tag(c)) < 0)
        goto err_free;
    tdm_req_t *r = tdm_req_alloc(TDM_REQ_OTHER);
    if (!r)
        goto err_free;
    /* nothing can fail from here: take the references persist_release drops */
    if (pc->cc.sdt)
        tdm_dtype_retain(pc->cc.sdt);
    if (pc->cc.rdt)
        tdm_dtype_retain(pc->cc.rdt);
    if (pc->cc.op)
        tdm_op_retain(pc->cc.op);
    for (int i = 0; i < pc->ndts; i++)
        tdm_dtype_retain(pc->dts[i]);
    if (pc->cc.kind == TDM_COLL_CALL_NEIGHBOR) {
        nside_refs(&pc->cc.nsend, true);
        nside_refs(&pc->cc.nrecv, true);
    }
    r->persistent = 1;
    r->active = 0;
    r->done = 1; /* an inactive persistent request completes at once */
    tdm_req_set_comm(r, c);
    r->cb_arg = pc;
    r->status.source = TDM_ANY_SOURCE;
    r->status.tag = TDM_ANY_TAG;
    *req_p = r;
    return TDM_OK;

err_free:
    free(pc->nmem[1]);
    free(pc->nmem[0]);
    free(pc->dts);
    free(pc->arrays);
    free(pc);
    return TDM_ERR_NOMEM;
}

tdm_rc_t tdm_coll_persist_start(tdm_req_t *p) {
    persist_coll_t *pc = p->cb_arg;
    tdm_comm_t *c = p->comm;
    tdm_req_t *r = NULL;
    int rc = tdm_coll_bind_tag(c, pc->tag) == 0 ? tdm_coll_call_run(c, &pc->cc, &r) : TDM_ERR_NOMEM;
    tdm_coll_bind_tag(c, -1); /* unused if the builder failed before its schedule */
    if (TDM_UNLIKELY(rc != TDM_OK))
        return (tdm_rc_t)rc;
    p->inner = r;
    p->active = 1;
    p->done = 0;
    return TDM_OK;
}

void tdm_coll_persist_free(tdm_req_t *p) {
    persist_release(p->cb_arg);
    p->cb_arg = NULL;
    tdm_p2p_release(p);
}
