/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion: Wait/Test and their all/any/some forms, freeing, cancelling,
 * statuses, generalized requests. */
#include "bind.h"
#include "coll_persist.h"
#include "part.h"

#include <stdlib.h>

tdm_req_t *tdm_mpi_req_get(MPI_Request h) {
    if (((unsigned)h & ~TDM_REQ_INDEX_MASK) != TDM_REQ_HANDLE_BASE)
        return NULL;
    return tdm_req_by_index((unsigned)h & TDM_REQ_INDEX_MASK);
}

void tdm_mpi_status_set(MPI_Status *st, const tdm_status_t *s) {
    if (st == MPI_STATUS_IGNORE)
        return;
    /* MPI_ERROR is left alone: only the calls that return several statuses set it,
     * and only when they return MPI_ERR_IN_STATUS (MPI-3.1 3.2.5) */
    st->MPI_SOURCE = s->source;
    st->MPI_TAG = s->tag;
    st->count_hi_and_cancelled = s->cancelled ? 1 : 0;
    tdm_mpi_status_set_bytes(st, (MPI_Count)s->bytes);
}

/* Acquire loads: a request completed by another thread is seen whole (p2p/req.h). */
static bool is_complete(tdm_req_t *r) {
    if (r->persistent) {
        /* inner is read once: a second thread finishing it (erroneous) clears it */
        tdm_req_t *in = TDM_LOAD_RELAXED(&r->inner);
        return !r->active || !in || tdm_req_done(in);
    }
    return tdm_req_done(r);
}

typedef int (*greq_query_fn_t)(void *, MPI_Status *);
typedef int (*greq_free_fn_t)(void *);
typedef int (*greq_cancel_fn_t)(void *, int);

/* A generalized request's status, from its query function: filled in a status of our
 * own and copied but for MPI_ERROR, which is not the query's to set in the user's
 * status (the query's return value is the error). */
static int greq_status(tdm_req_t *r, MPI_Status *st) {
    MPI_Status tmp;
    tdm_mpi_status_empty(&tmp);
    tmp.MPI_ERROR = MPI_SUCCESS;
    int err = ((greq_query_fn_t)r->greq_query)(r->greq_state, &tmp);
    if (st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = tmp.MPI_SOURCE;
        st->MPI_TAG = tmp.MPI_TAG;
        st->count_lo = tmp.count_lo;
        st->count_hi_and_cancelled = tmp.count_hi_and_cancelled;
    }
    return err;
}

/* req_finish_id's id for a request the caller has claimed already (no request has id 0) */
#define TDM_REQ_CLAIMED_ID 0u

/* Two threads finishing one request at once (MPI-4.1 11.6.2: two threads may not wait
 * on the same request, a request is completed once; nor may one free it while another
 * waits on it): the one that claims it finishes it, the other gets this error. */
static int req_lost(MPI_Request h, const char *fn) {
    return tdm_mpi_err(NULL, MPI_ERR_REQUEST, fn,
                       "request %#x was completed or freed by another thread at the same time "
                       "(two threads may not wait on one request, MPI-4.1 11.6.2)",
                       (unsigned)h);
}

/* The request is complete: report its status, release it (persistent ones go
 * back to inactive), set the handle. Returns the operation's error code, reported
 * as an error of `fn`. `id`: r's id when the caller found it (tdm_p2p_req_claim). */
static int req_finish_id(tdm_req_t *r, uint32_t id, MPI_Request *handle, MPI_Status *st,
                         const char *fn) {
    int err = MPI_SUCCESS;
    if (r->persistent) {
        tdm_req_t *in = TDM_LOAD_RELAXED(&r->inner);
        if (!r->active || (!in && !tdm_threaded)) {
            tdm_mpi_status_empty(st);
            return MPI_SUCCESS;
        }
        if (!in || !tdm_p2p_req_claim(in, TDM_LOAD_RELAXED(&in->id)))
            return req_lost(*handle, fn);
        MPI_Request ih = tdm_req_handle(in);
        TDM_STORE_RELAXED(&r->inner, NULL);
        r->active = 0;
        r->done = 1;
        return req_finish_id(in, TDM_REQ_CLAIMED_ID, &ih, st, fn);
    }
    if (id != TDM_REQ_CLAIMED_ID && !tdm_p2p_req_claim(r, id))
        return req_lost(*handle, fn);
    tdm_comm_t *c = r->comm; /* claimed: no other thread releases it now */
    if (r->kind == TDM_REQ_GREQ) {
        err = greq_status(r, st);
        int ferr = ((greq_free_fn_t)r->greq_free)(r->greq_state);
        if (!err)
            err = ferr;
        tdm_req_free(r);
        *handle = MPI_REQUEST_NULL;
        if (err)
            err = tdm_mpi_err_code(c, err, fn);
        return err;
    }
    tdm_status_t s = r->status;
    if (r->kind == TDM_REQ_SEND) {
        /* a send's status tells only whether it was cancelled */
        s.source = MPI_ANY_SOURCE;
        s.tag = MPI_ANY_TAG;
        s.bytes = 0;
    }
    if (s.error != TDM_OK) {
        if (s.error == TDM_ERR_TRUNCATE)
            err = tdm_mpi_err(c, MPI_ERR_TRUNCATE, fn,
                              "message from rank %d with tag %d is longer than the receive "
                              "buffer (%zu bytes)",
                              s.source, s.tag, r->bytes);
        else
            err = tdm_mpi_err(c, tdm_mpi_class_of((tdm_rc_t)s.error), fn, "operation failed");
        s.error = TDM_OK;
    }
    tdm_mpi_status_set(st, &s);
    tdm_p2p_release(r);
    *handle = MPI_REQUEST_NULL;
    return err;
}

static int req_finish(tdm_req_t *r, MPI_Request *handle, MPI_Status *st, const char *fn) {
    return req_finish_id(r, TDM_LOAD_RELAXED(&r->id), handle, st, fn);
}

/* Resolve a handle for a completion call: NULL for MPI_REQUEST_NULL; sets *err
 * for an invalid one. */
static tdm_req_t *get_req(MPI_Request h, const char *fn, int *err) {
    *err = MPI_SUCCESS;
    if (h == MPI_REQUEST_NULL)
        return NULL;
    tdm_req_t *r = tdm_mpi_req_get(h);
    if (!r || (TDM_LOAD_RELAXED(&r->kind) == TDM_REQ_OTHER && r->unexp))
        *err = tdm_mpi_err(NULL, MPI_ERR_REQUEST, fn, "invalid request handle %#x", (unsigned)h);
    return r;
}

static bool req_complete_cb(void *arg) {
    return is_complete(arg);
}

typedef struct {
    tdm_req_t *r;
    uint32_t id;
} req_wait_t;

/* Threaded: also done when the request was released meanwhile (another thread finished
 * it; its slot may already hold a request that never completes). */
static bool req_gone_or_complete_cb(void *arg) {
    req_wait_t *w = arg;
    return TDM_LOAD_RELAXED(&w->r->id) != w->id || is_complete(w->r);
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status) {
    int err;
    TDM_CHECK_INIT("MPI_Wait");
    if (!request)
        return tdm_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Wait", "request is NULL");
    tdm_req_t *r = get_req(*request, "MPI_Wait", &err);
    if (err)
        return err;
    if (!r) {
        tdm_mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    uint32_t id = TDM_LOAD_RELAXED(&r->id);
    if (!is_complete(r)) {
        if (TDM_UNLIKELY(tdm_threaded))
            tdm_p2p_wait_until(req_gone_or_complete_cb, &(req_wait_t){r, id});
        else
            tdm_p2p_wait_until(req_complete_cb, r);
    }
    return req_finish_id(r, id, request, status, "MPI_Wait");
}
TDM_WEAK(MPI_Wait)

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    int err;
    TDM_CHECK_INIT("MPI_Test");
    if (!request || !flag)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Test", "%s is NULL",
                           request ? "flag" : "request");
    tdm_req_t *r = get_req(*request, "MPI_Test", &err);
    if (err)
        return err;
    if (!r) {
        *flag = 1;
        tdm_mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    uint32_t id = TDM_LOAD_RELAXED(&r->id);
    if (!is_complete(r))
        tdm_p2p_progress();
    *flag = is_complete(r);
    if (!*flag)
        return MPI_SUCCESS;
    return req_finish_id(r, id, request, status, "MPI_Test");
}
TDM_WEAK(MPI_Test)

typedef struct {
    int n;
    MPI_Request *reqs;
    int next; /* all_done: reqs[0..next) are known complete (or inactive) */
} multi_t;

/* Waitall/Testall: whether every active request is complete. A request stays
 * complete until it is finished, which only the caller does, so the ones found
 * complete are not looked at again: a wait for a window of n messages that
 * arrive one by one costs O(n) lookups, not O(n) per poll. Scanning the whole
 * array at every poll took a third of 2-rank bibw's time at 8 B (perf:
 * tdm_req_by_index and the scan, 64 Isends and 64 Irecvs per Waitall). */
static bool all_done(void *arg) {
    multi_t *m = arg;
    for (; m->next < m->n; m->next++) {
        MPI_Request h = m->reqs[m->next];
        tdm_req_t *r = h == MPI_REQUEST_NULL ? NULL : tdm_mpi_req_get(h);
        if (r && !is_complete(r))
            return false;
    }
    return true;
}

/* Index of the first active complete request, or -1 (then *active_p counts the
 * active ones; with one found it is at least 1). */
static int first_complete(int count, MPI_Request reqs[], int *active_p) {
    int active = 0;
    for (int i = 0; i < count; i++) {
        tdm_req_t *r = reqs[i] == MPI_REQUEST_NULL ? NULL : tdm_mpi_req_get(reqs[i]);
        if (!r || (r->persistent && !r->active))
            continue;
        active++;
        if (is_complete(r)) {
            *active_p = active;
            return i;
        }
    }
    *active_p = active;
    return -1;
}

/* Waitany/Waitsome: some active request is complete, or none is active. The
 * scan stops at the first complete one (it counted every request before). */
static bool any_done(void *arg) {
    multi_t *m = arg;
    int active;
    return first_complete(m->n, m->reqs, &active) >= 0 || active == 0;
}

static int check_array(const char *fn, int count, MPI_Request reqs[]) {
    if (count < 0)
        return tdm_mpi_err(NULL, MPI_ERR_COUNT, fn, "invalid count %d", count);
    if (count > 0 && !reqs)
        return tdm_mpi_err(NULL, MPI_ERR_REQUEST, fn, "array_of_requests is NULL");
    for (int i = 0; i < count; i++) {
        int err;
        get_req(reqs[i], fn, &err);
        if (err)
            return err;
    }
    return MPI_SUCCESS;
}

/* Finish every request of the array (all complete); statuses[i] for each. The
 * MPI_ERROR fields are set, each to its request's code, only when one failed. */
static int finish_all(int count, MPI_Request reqs[], MPI_Status statuses[], const char *fn) {
    int any_err = 0;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        tdm_req_t *r = reqs[i] == MPI_REQUEST_NULL ? NULL : tdm_mpi_req_get(reqs[i]);
        int err = MPI_SUCCESS;
        if (r)
            err = req_finish(r, &reqs[i], st, fn);
        else
            tdm_mpi_status_empty(st);
        if (err && !any_err && st != MPI_STATUS_IGNORE) {
            /* first failure: the earlier statuses get MPI_SUCCESS */
            for (int j = 0; j < i; j++)
                statuses[j].MPI_ERROR = MPI_SUCCESS;
        }
        if (err || any_err) {
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = err;
        }
        if (err)
            any_err = 1;
    }
    return any_err ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses) {
    TDM_CHECK_INIT("MPI_Waitall");
    int err = check_array("MPI_Waitall", count, array_of_requests);
    if (err)
        return err;
    multi_t m = {count, array_of_requests, 0};
    tdm_p2p_wait_until(all_done, &m);
    return finish_all(count, array_of_requests, array_of_statuses, "MPI_Waitall");
}
TDM_WEAK(MPI_Waitall)

int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                 MPI_Status *array_of_statuses) {
    TDM_CHECK_INIT("MPI_Testall");
    int err = check_array("MPI_Testall", count, array_of_requests);
    if (err)
        return err;
    if (!flag)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Testall", "flag is NULL");
    multi_t m = {count, array_of_requests, 0};
    if (!all_done(&m))
        tdm_p2p_progress();
    *flag = all_done(&m);
    if (!*flag)
        return MPI_SUCCESS;
    return finish_all(count, array_of_requests, array_of_statuses, "MPI_Testall");
}
TDM_WEAK(MPI_Testall)

int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status) {
    TDM_CHECK_INIT("MPI_Waitany");
    int err = check_array("MPI_Waitany", count, array_of_requests);
    if (err)
        return err;
    if (!index)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Waitany", "index is NULL");
    multi_t m = {count, array_of_requests, 0};
    tdm_p2p_wait_until(any_done, &m);
    int active, i = first_complete(count, array_of_requests, &active);
    if (i < 0) {
        *index = MPI_UNDEFINED;
        tdm_mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    *index = i;
    return req_finish(tdm_mpi_req_get(array_of_requests[i]), &array_of_requests[i], status,
                      "MPI_Waitany");
}
TDM_WEAK(MPI_Waitany)

int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                 MPI_Status *status) {
    TDM_CHECK_INIT("MPI_Testany");
    int err = check_array("MPI_Testany", count, array_of_requests);
    if (err)
        return err;
    if (!index || !flag)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Testany", "%s is NULL",
                           index ? "flag" : "index");
    int active, i = first_complete(count, array_of_requests, &active);
    if (i < 0 && active) {
        tdm_p2p_progress();
        i = first_complete(count, array_of_requests, &active);
    }
    if (!active) {
        *flag = 1;
        *index = MPI_UNDEFINED;
        tdm_mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    *flag = i >= 0;
    *index = MPI_UNDEFINED;
    if (i < 0)
        return MPI_SUCCESS;
    *index = i;
    return req_finish(tdm_mpi_req_get(array_of_requests[i]), &array_of_requests[i], status,
                      "MPI_Testany");
}
TDM_WEAK(MPI_Testany)

static int some_common(int incount, MPI_Request reqs[], int *outcount, int indices[],
                       MPI_Status statuses[], const char *fn) {
    int active = 0, n = 0, any_err = 0;
    for (int i = 0; i < incount; i++) {
        tdm_req_t *r = reqs[i] == MPI_REQUEST_NULL ? NULL : tdm_mpi_req_get(reqs[i]);
        if (!r || (r->persistent && !r->active))
            continue;
        active++;
        if (!is_complete(r))
            continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        int err = req_finish(r, &reqs[i], st, fn);
        if (err && !any_err && st != MPI_STATUS_IGNORE) {
            for (int j = 0; j < n; j++)
                statuses[j].MPI_ERROR = MPI_SUCCESS;
        }
        if ((err || any_err) && st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
        if (err)
            any_err = 1;
        indices[n++] = i;
    }
    *outcount = active ? n : MPI_UNDEFINED;
    return any_err ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

/* Waitsome (`wait`) and Testsome. */
static int some(const char *fn, bool wait, int incount, MPI_Request array_of_requests[],
                int *outcount, int array_of_indices[], MPI_Status *array_of_statuses) {
    TDM_CHECK_INIT(fn);
    int err = check_array(fn, incount, array_of_requests);
    if (err)
        return err;
    if (!outcount || (incount > 0 && !array_of_indices))
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "%s is NULL",
                           outcount ? "array_of_indices" : "outcount");
    if (wait) {
        multi_t m = {incount, array_of_requests, 0};
        tdm_p2p_wait_until(any_done, &m);
    } else {
        tdm_p2p_progress();
    }
    return some_common(incount, array_of_requests, outcount, array_of_indices, array_of_statuses,
                       fn);
}

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status *array_of_statuses) {
    return some("MPI_Waitsome", true, incount, array_of_requests, outcount, array_of_indices,
                array_of_statuses);
}
TDM_WEAK(MPI_Waitsome)

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status *array_of_statuses) {
    return some("MPI_Testsome", false, incount, array_of_requests, outcount, array_of_indices,
                array_of_statuses);
}
TDM_WEAK(MPI_Testsome)

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    int err;
    TDM_CHECK_INIT("MPI_Request_get_status");
    if (!flag)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Request_get_status", "flag is NULL");
    tdm_req_t *r = get_req(request, "MPI_Request_get_status", &err);
    if (err)
        return err;
    if (!r || (r->persistent && !r->active)) {
        *flag = 1;
        tdm_mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!is_complete(r))
        tdm_p2p_progress();
    *flag = is_complete(r);
    if (*flag) {
        tdm_req_t *src = r->persistent ? r->inner : r;
        if (src->kind == TDM_REQ_GREQ) {
            int qerr = greq_status(src, status);
            if (qerr)
                return tdm_mpi_err_code(src->comm, qerr, "MPI_Request_get_status");
        } else {
            tdm_status_t s = src->status;
            if (src->kind == TDM_REQ_SEND) {
                s.source = MPI_ANY_SOURCE;
                s.tag = MPI_ANY_TAG;
                s.bytes = 0;
            }
            tdm_mpi_status_set(status, &s);
        }
    }
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Request_get_status)

/* The request that Request_free or Cancel acts on: neither takes MPI_REQUEST_NULL. */
static int get_live_req(const char *fn, const MPI_Request *request, tdm_req_t **r_p) {
    int err;
    TDM_CHECK_INIT(fn);
    if (!request)
        return tdm_mpi_err(NULL, MPI_ERR_REQUEST, fn, "request is NULL");
    tdm_req_t *r = get_req(*request, fn, &err);
    if (err)
        return err;
    if (!r)
        return tdm_mpi_err(NULL, MPI_ERR_REQUEST, fn, "request is MPI_REQUEST_NULL");
    *r_p = r;
    return MPI_SUCCESS;
}

int PMPI_Request_free(MPI_Request *request) {
    tdm_req_t *r;
    int err = get_live_req("MPI_Request_free", request, &r);
    if (err)
        return err;
    if (tdm_mpi_is_part(r))
        return tdm_mpi_part_free(r, request, "MPI_Request_free");
    if (r->persistent && r->kind == TDM_REQ_OTHER) {
        /* a persistent collective: freeing it while active is erroneous (MPI-4.0 6.13) */
        if (r->active)
            return tdm_mpi_err(r->comm, MPI_ERR_REQUEST, "MPI_Request_free",
                               "persistent collective request %#x is active (complete it first)",
                               (unsigned)*request);
        tdm_coll_persist_free(r);
    } else if (r->persistent) {
        if (r->active && r->inner) /* the operation goes on; released when it completes */
            tdm_p2p_req_free_user(r->inner);
        tdm_p2p_release(r);
    } else if (r->kind == TDM_REQ_GREQ) {
        /* FREED, and CLAIMED when already complete, in one step (as tdm_p2p_req_free_user):
         * complete, it is freed now; else free_fn runs at MPI_Grequest_complete */
        unsigned d = __atomic_load_n(&r->done, __ATOMIC_ACQUIRE), want;
        do {
            if (d & TDM_REQ_C_CLAIMED) /* a waiter in another thread finishes it */
                break;
            want = d | TDM_REQ_C_FREED | (d & TDM_REQ_C_DONE ? TDM_REQ_C_CLAIMED : 0);
        } while (!__atomic_compare_exchange_n(&r->done, &d, want, false, __ATOMIC_ACQ_REL,
                                              __ATOMIC_ACQUIRE));
        if ((d & (TDM_REQ_C_DONE | TDM_REQ_C_CLAIMED)) == TDM_REQ_C_DONE) {
            ((greq_free_fn_t)r->greq_free)(r->greq_state);
            tdm_req_free(r);
        }
    } else {
        tdm_p2p_req_free_user(r); /* now if complete, else by whichever thread completes it */
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Request_free)

int PMPI_Cancel(MPI_Request *request) {
    tdm_req_t *r;
    int err = get_live_req("MPI_Cancel", request, &r);
    if (err)
        return err;
    if (tdm_mpi_is_part(r))
        return tdm_mpi_part_cancel(r, *request, "MPI_Cancel");
    if (r->persistent)
        r = r->active ? r->inner : NULL;
    if (!r)
        return MPI_SUCCESS;
    if (r->kind == TDM_REQ_GREQ) {
        err = ((greq_cancel_fn_t)r->greq_cancel)(r->greq_state, r->done);
        return err ? tdm_mpi_err_code(r->comm, err, "MPI_Cancel") : MPI_SUCCESS;
    }
    tdm_p2p_cancel(r);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Cancel)

int PMPI_Test_cancelled(const MPI_Status *status, int *flag) {
    if (!status || status == MPI_STATUS_IGNORE || !flag)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Test_cancelled", "%s",
                           flag ? "status is NULL or MPI_STATUS_IGNORE" : "flag is NULL");
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Test_cancelled)

int PMPI_Status_set_cancelled(MPI_Status *status, int flag) {
    if (!status || status == MPI_STATUS_IGNORE)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled",
                           "status is NULL or MPI_STATUS_IGNORE");
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Status_set_cancelled)

/* ---- counts ---- */

static int count_common(const char *fn, const MPI_Status *status, MPI_Datatype datatype,
                        int elements, MPI_Count *out) {
    tdm_dtype_t *dt;
    TDM_CHECK_INIT(fn);
    if (!status || status == MPI_STATUS_IGNORE)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, fn, "status is NULL or MPI_STATUS_IGNORE");
    TDM_GET_DTYPE(fn, NULL, datatype, dt);
    MPI_Count bytes = tdm_mpi_status_bytes(status);
    if (elements) {
        long long n = tdm_dtype_elements(dt, (size_t)bytes);
        *out = n < 0 ? MPI_UNDEFINED : (MPI_Count)n;
    } else if (dt->size == 0) {
        *out = bytes == 0 ? 0 : MPI_UNDEFINED;
    } else {
        *out = bytes % (MPI_Count)dt->size ? MPI_UNDEFINED : bytes / (MPI_Count)dt->size;
    }
    return MPI_SUCCESS;
}

static int to_int(MPI_Count c) {
    return c > 0x7fffffff ? MPI_UNDEFINED : (int)c;
}

/* Get_count and Get_elements: the int forms say MPI_UNDEFINED for what an int cannot hold. */
#define GET_COUNT_FN(_name, _C, _elements)                                                         \
    int PMPI_##_name(const MPI_Status *status, MPI_Datatype datatype, _C *count) {                 \
        MPI_Count c;                                                                               \
        TDM_CHECK_PTR("MPI_" #_name, NULL, count, "count");                                        \
        int err = count_common("MPI_" #_name, status, datatype, _elements, &c);                    \
        if (!err)                                                                                  \
            *count = sizeof(_C) < sizeof(MPI_Count) ? to_int(c) : (_C)c;                           \
        return err;                                                                                \
    }                                                                                              \
    TDM_WEAK(MPI_##_name)
#define GET_COUNT_FORMS(_s, _C, _D)                                                                \
    GET_COUNT_FN(Get_count##_s, _C, 0)                                                             \
    GET_COUNT_FN(Get_elements##_s, _C, 1)
TDM_MPI_COUNT_FORMS(GET_COUNT_FORMS)

GET_COUNT_FN(Get_elements_x, MPI_Count, 1)

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count) {
    tdm_dtype_t *dt;
    TDM_CHECK_INIT("MPI_Status_set_elements_x");
    if (!status || status == MPI_STATUS_IGNORE)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Status_set_elements_x", "status is NULL");
    TDM_GET_DTYPE("MPI_Status_set_elements_x", NULL, datatype, dt);
    if (count < 0)
        return tdm_mpi_err(NULL, MPI_ERR_COUNT, "MPI_Status_set_elements_x", "invalid count %lld",
                           (long long)count);
    long long bytes = tdm_dtype_elements_bytes(dt, (size_t)count);
    if (bytes < 0)
        return tdm_mpi_err(NULL, MPI_ERR_TYPE, "MPI_Status_set_elements_x",
                           "cannot express %lld elements of datatype %#x in bytes",
                           (long long)count, (unsigned)datatype);
    tdm_mpi_status_set_bytes(status, bytes);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Status_set_elements_x)

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count) {
    return PMPI_Status_set_elements_x(status, datatype, count);
}
TDM_WEAK(MPI_Status_set_elements)

/* ---- generalized requests ---- */

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request) {
    TDM_CHECK_INIT("MPI_Grequest_start");
    if (!query_fn || !free_fn || !cancel_fn || !request)
        return tdm_mpi_err(NULL, MPI_ERR_ARG, "MPI_Grequest_start",
                           "a callback or the request argument is NULL");
    tdm_req_t *r = tdm_req_alloc(TDM_REQ_GREQ);
    if (!r)
        return tdm_mpi_err(NULL, MPI_ERR_NO_MEM, "MPI_Grequest_start", "out of memory");
    tdm_req_set_comm(r, tdm_comm_world);
    r->greq_query = (void *)query_fn;
    r->greq_free = (void *)free_fn;
    r->greq_cancel = (void *)cancel_fn;
    r->greq_state = extra_state;
    *request = tdm_req_handle(r);
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Grequest_start)

int PMPI_Grequest_complete(MPI_Request request) {
    TDM_CHECK_INIT("MPI_Grequest_complete");
    tdm_req_t *r = tdm_mpi_req_get(request);
    if (!r || r->kind != TDM_REQ_GREQ)
        return tdm_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                           "not a generalized request (handle %#x)", (unsigned)request);
    /* release: a waiter in another thread that sees DONE (acquire) sees what the
     * completing thread wrote before, which the query function reads */
    unsigned old = __atomic_fetch_or(&r->done, TDM_REQ_C_DONE, __ATOMIC_ACQ_REL);
    if (old & TDM_REQ_C_DONE)
        return tdm_mpi_err(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                           "generalized request %#x is already complete", (unsigned)request);
    if ((old & TDM_REQ_C_FREED) && tdm_p2p_req_claim_freed(r)) { /* freed by the user */
        ((greq_free_fn_t)r->greq_free)(r->greq_state);
        tdm_req_free(r);
    }
    return MPI_SUCCESS;
}
TDM_WEAK(MPI_Grequest_complete)
