/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Schedules: what every collective algorithm builds (see coll.h).
 *
 * A builder appends steps; tdm_sched_round() closes a round: the steps after
 * it start only when every send and receive before it completed. Local steps
 * (copy, reduce) run in order when reached. Buffers handed to steps must stay
 * valid until the schedule ends; temporaries from tdm_sched_tmp*() are freed
 * with the schedule. The schedule retains every datatype and op it names.
 *
 * Threads (MPI_THREAD_MULTIPLE): a schedule is built by one thread, the caller
 * of a collective on its communicator, and the per-communicator state (tag
 * sequences, `comm->coll`) is only touched by such calls, which MPI has the user
 * order on each communicator: no lock. Running, a schedule is advanced by its
 * completion hooks from any thread's progress; sched.c's top comment says how a
 * step runs exactly once. The process-wide caches (freed schedules, large
 * temporaries, the copy chooser) are under sched.c's cache lock; the chooser's
 * counters are TDM_COUNTER_ADD; user ops live in a handle table (op.c).
 */
#ifndef TDM_COLL_SCHED_H
#define TDM_COLL_SCHED_H

#include "coll.h"

/* Step flag: a send/receive the caller would post ahead without waiting on it
 * (a root's fan-out): always started as a non-blocking call, so the rendezvous
 * selection sees Isend/Irecv at that side. */
#define TDM_SCHED_AHEAD 1
/* Step flag, intercommunicators only: the peer is a rank of the remote group.
 * Unflagged steps of an intercomm's schedule go to local ranks (over its hidden
 * local intracomm's context), so the intracomm algorithms build the local phases. */
#define TDM_SCHED_REMOTE 2
/* Step flag, set by tdm_sched_reduce on the receives of the round before it
 * that land in one of its buffers: the rendezvous selection then has this side
 * copy the data (RGET, not COOP), so it is in this core's cache for the op. */
#define TDM_SCHED_CONSUMED 4

tdm_sched_t *tdm_sched_new(tdm_comm_t *comm, bool blocking);

/* Call before adding steps: a blocking schedule whose messages are at most
 * `bytes` each and small (sched.c) then runs every step as it is added, with
 * the same messages, tags and rounds. */
void tdm_sched_immediate(tdm_sched_t *s, size_t bytes);
/* Temporary of `bytes`; NULL (and the schedule fails with NOMEM) on ENOMEM. */
void *tdm_sched_tmp(tdm_sched_t *s, size_t bytes);
/* Free the large temporaries kept between collectives (MPI_Finalize). */
void tdm_sched_cache_fini(void);
/* Temporary for `count` items of dt, addressed like a user buffer (true_lb applied). */
void *tdm_sched_tmp_items(tdm_sched_t *s, size_t count, tdm_dtype_t *dt);
void tdm_sched_send(tdm_sched_t *s, const void *buf, size_t count, tdm_dtype_t *dt, int peer,
                    int flags);
void tdm_sched_recv(tdm_sched_t *s, void *buf, size_t count, tdm_dtype_t *dt, int peer, int flags);
/* Local copy of the data of (sbuf, scount, sdt) into (rbuf, rcount, rdt). */
void tdm_sched_copy(tdm_sched_t *s, const void *sbuf, size_t scount, tdm_dtype_t *sdt, void *rbuf,
                    size_t rcount, tdm_dtype_t *rdt);
/* inout = in op inout. */
void tdm_sched_reduce(tdm_sched_t *s, const void *in, void *inout, size_t count, tdm_dtype_t *dt,
                      tdm_op_t *op);
void tdm_sched_round(tdm_sched_t *s);
/* A step that builds the rest of the schedule once everything before it is done (it ends
 * the round before it): fn(s, arg) then adds the steps that follow, sized by what the
 * steps before received (a node's counts, known to its leader only when they arrive).
 * It must be the last step the builder adds; fn may set views and take temporaries.
 * `arg` must live as long as the schedule (a temporary of it); `keep` (or NULL), a
 * datatype fn uses, is retained until the schedule ends. Immediate: fn runs at once. */
typedef void tdm_sched_then_fn_t(tdm_sched_t *s, void *arg);
void tdm_sched_then(tdm_sched_t *s, tdm_sched_then_fn_t *fn, void *arg, tdm_dtype_t *keep);
/* Start the schedule (which it then owns). req_p NULL: wait for it and free it.
 * Returns TDM_OK or the first error (a failed build, truncation...). */
int tdm_sched_run(tdm_sched_t *s, tdm_req_t **req_p);
/* The caller's rank in the schedule's communicator; its size into *size_p. */
int tdm_sched_rank(const tdm_sched_t *s, int *size_p);
/* Build the steps that follow over a sub-group of the communicator: `ranks[0..n-1]`
 * (communicator ranks; the array must outlive the building only), this process being
 * ranks[me]. tdm_sched_rank then answers (me, n) and the peers of sends and receives
 * are indices into `ranks`, so any algorithm runs over a node's ranks or the nodes'
 * leaders unchanged; all on the communicator's collective context and tag. ranks NULL:
 * the whole communicator again. */
void tdm_sched_view(tdm_sched_t *s, const int *ranks, int n, int me);
/* Discard a schedule that was never run. */
void tdm_sched_free(tdm_sched_t *s);

/* Helpers for algorithms. */
static inline void *tdm_coll_at(const void *buf, size_t items, const tdm_dtype_t *dt) {
    return (char *)buf + (ptrdiff_t)items * tdm_dtype_extent(dt);
}
/* a mod p for a in [-p, 2p): the tree and ring builders' peer arithmetic
 * without an integer division (three idivs were half of a 2-rank binomial
 * Bcast's builder). */
static inline int tdm_coll_wrap(int a, int p) {
    return a < 0 ? a + p : a >= p ? a - p : a;
}
/* Block i of `count` items split in n near-equal blocks: start and length. */
static inline size_t tdm_coll_blk_start(size_t count, int n, int i) {
    size_t q = count / (size_t)n, r = count % (size_t)n;
    return (size_t)i * q + ((size_t)i < r ? (size_t)i : r);
}
static inline size_t tdm_coll_blk_len(size_t count, int n, int i) {
    return count / (size_t)n + ((size_t)i < count % (size_t)n ? 1 : 0);
}
tdm_dtype_t *tdm_coll_byte_type(void);

#endif
