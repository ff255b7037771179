/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pending-operations dump: on SIGUSR1 (mpirun sends it to every rank when --timeout
 * expires) a rank prints each operation it has in flight (kind, peer, tag, communicator,
 * size, protocol stage) and each message that came without a receive, so a hang says
 * what it waits for.
 *
 * The handler prints at once, whatever the rank is doing: blocked on its doorbell,
 * spinning in a wait loop, computing outside MPI, or in the middle of a library call.
 * That is safe because the dump only reads, and only structures kept readable at every
 * instruction for the thread they live on: the request chunks never move or shrink
 * (req.c), a request slot is cleared before it shows as in use, a request drops its
 * communicator pointer before the reference, and list insertions and removals order
 * their stores for a forward walk (base/util.h). It formats with base/sigfmt.h (no
 * stdio, no malloc) and writes each line with one write(2). The communicator's name
 * comes from the layer above through a hook that only reads fields.
 *
 * The handler is installed with the engine, by the library's first user, and stays as
 * the engine does (src/mpi/init.c): a rank hung in MPI_Finalize's barrier answers, and
 * one computing after its last finalize prints that nothing is pending.
 *
 * If the signal lands on another thread than the one that initialised MPI (a program
 * whose main thread blocks SIGUSR1), reading from there would race with that thread: the
 * handler then only sets a flag and rings the rank's doorbell, and the next progress
 * call of the MPI thread that finds nothing to do prints the dump.
 */
#include "p2p_impl.h"
#include "../base/sigfmt.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static tdm_p2p_dump_hooks_t hooks;
static pid_t owner_tid;
volatile sig_atomic_t tdm_p2p_dump_pending;

static void line_start(tdm_sfmt_t *f) {
    tdm_sfmt_str(f, "tandem[");
    tdm_sfmt_int(f, tdm_p2p.rank);
    tdm_sfmt_str(f, ":");
    tdm_sfmt_int(f, getpid());
    tdm_sfmt_str(f, "] ");
}

/* "MPI_COMM_WORLD", "MPI_COMM_WORLD (collective)" or "context 5"; *peer_p (when asked) the
 * rank in it of world rank `world`. */
static void put_comm(tdm_sfmt_t *f, void *comm, uint32_t ctx, int world, int *peer_p) {
    tdm_p2p_dump_comm_t d = {.name = NULL, .ctx = ctx, .peer = -1};
    if (hooks.comm)
        hooks.comm(comm, ctx, world, &d);
    if (peer_p)
        *peer_p = d.peer;
    if (d.name && d.name[0]) {
        tdm_sfmt_strn(f, d.name, 127);
        if (ctx == d.ctx + 1)
            tdm_sfmt_str(f, " (collective)");
        return;
    }
    tdm_sfmt_str(f, "context ");
    tdm_sfmt_uint(f, ctx);
}

/* A peer by its rank in the communicator, and its world rank when that differs. */
static void put_peer(tdm_sfmt_t *f, int rank, int world) {
    if (rank == TDM_ANY_SOURCE) {
        tdm_sfmt_str(f, "any source");
        return;
    }
    if (rank < 0) {
        tdm_sfmt_str(f, "world rank ");
        tdm_sfmt_int(f, world);
        return;
    }
    tdm_sfmt_str(f, "rank ");
    tdm_sfmt_int(f, rank);
    if (world >= 0 && rank != world) {
        tdm_sfmt_str(f, " (world rank ");
        tdm_sfmt_int(f, world);
        tdm_sfmt_str(f, ")");
    }
}

static void put_tag(tdm_sfmt_t *f, int tag) {
    if (tag == TDM_ANY_TAG) {
        tdm_sfmt_str(f, " any tag");
        return;
    }
    tdm_sfmt_str(f, " tag ");
    tdm_sfmt_int(f, tag);
}

void tdm_p2p_dump_range(tdm_sfmt_t *f, uint64_t done, uint64_t total) {
    tdm_sfmt_uint(f, done);
    tdm_sfmt_str(f, " of ");
    tdm_sfmt_uint(f, total);
    tdm_sfmt_str(f, " bytes");
}

static const char *send_call(const tdm_req_t *s) {
    static const char *const names[2][4] = {{"Isend", "Ibsend", "Issend", "Irsend"},
                                            {"Send", "Bsend", "Ssend", "Rsend"}};
    return names[(s->mode & TDM_MODE_BLOCKING) != 0][s->mode & 3];
}

/* The request's stage, in its protocol's words (proto/). */
static void put_stage(tdm_sfmt_t *f, tdm_req_t *r, int peer) {
    if (r->kind == TDM_REQ_RECV && r->proto == TDM_PROTO_NONE) {
        tdm_sfmt_str(f, "posted, no matching message has come");
        if (tdm_rndv(r)->announced)
            tdm_sfmt_str(f, " (buffer announced to the sender: rtr)");
        return;
    }
    const tdm_proto_t *p = r->proto < TDM_PROTO_ALL ? tdm_protos[r->proto] : NULL;
    if (p && p->show)
        p->show(f, r, peer);
    else
        tdm_sfmt_str(f, "completing");
}

/* One line per pending request; returns 1 if it printed one. */
static int dump_req(int fd, tdm_sfmt_t *f, tdm_req_t *r, size_t *completed_p) {
    if (r->kind == TDM_REQ_FREE)
        return 0;
    if (r->persistent && !r->active)
        return 0; /* an inactive persistent request is not an operation */
    if (r->done) {
        (*completed_p)++;
        return 0;
    }
    line_start(f);
    tdm_sfmt_str(f, "pending: ");
    int peer = -1;
    switch (r->kind) {
    case TDM_REQ_SEND: {
        tdm_sfmt_str(f, send_call(r));
        tdm_sfmt_str(f, " to ");
        char name[160];
        tdm_sfmt_t nf;
        tdm_sfmt_init(&nf, name, sizeof(name));
        put_comm(&nf, r->comm, r->ctx, r->peer_world, &peer);
        put_peer(f, peer, r->peer_world);
        put_tag(f, r->tag);
        tdm_sfmt_str(f, " on ");
        tdm_sfmt_strn(f, name, nf.len);
        tdm_sfmt_str(f, ", ");
        tdm_sfmt_uint(f, r->bytes);
        tdm_sfmt_str(f, " bytes: ");
        put_stage(f, r, peer >= 0 ? peer : r->peer_world);
        break;
    }
    case TDM_REQ_RECV:
        tdm_sfmt_str(f, r->mode & TDM_MODE_BLOCKING ? "Recv" : "Irecv");
        if (!r->comm) {
            /* the library's own receive of a message that came unexpected */
            tdm_sfmt_str(f, " (an unexpected message, by the library) from world rank ");
            tdm_sfmt_int(f, r->peer_world);
            tdm_sfmt_str(f, ", ");
        } else {
            tdm_sfmt_str(f, " from ");
            put_peer(f, r->peer,
                     r->peer == TDM_ANY_SOURCE || r->peer_world < 0 ? r->peer : r->peer_world);
            put_tag(f, r->tag);
            tdm_sfmt_str(f, " on ");
            put_comm(f, r->comm, r->ctx, -1, NULL);
            tdm_sfmt_str(f, ", ");
        }
        tdm_sfmt_uint(f, r->bytes);
        tdm_sfmt_str(f, "-byte buffer: ");
        put_stage(f, r, r->peer_world);
        break;
    case TDM_REQ_GREQ:
        tdm_sfmt_str(f, "generalized request, not yet completed by the program "
                        "(MPI_Grequest_complete)");
        break;
    default:
        if (r->unexp)
            return 0; /* an MPI_Message handle: its message is listed below if unreceived */
        tdm_sfmt_str(f, "request on ");
        put_comm(f, r->comm, r->ctx, -1, NULL);
        tdm_sfmt_str(f, r->persistent ? " (persistent operation, started)"
                                      : " (a nonblocking collective or combined operation; its "
                                        "messages are listed apart)");
    }
    tdm_sfmt_write_line(f, fd);
    return 1;
}

/* An unexpected message carries a context id only: the communicator of a request on
 * that context (or on its collective twin) names it. */
static void *comm_of_ctx(uint32_t ctx) {
    for (uint32_t i = 1;; i++) {
        tdm_req_t *r = tdm_req_slot(i);
        if (!r)
            return NULL;
        if (r->kind == TDM_REQ_FREE || !r->comm || !hooks.comm)
            continue;
        tdm_p2p_dump_comm_t d = {.name = NULL, .ctx = ctx, .peer = -1};
        hooks.comm(r->comm, r->ctx, -1, &d);
        if (d.name && (ctx == d.ctx || ctx == d.ctx + 1))
            return r->comm;
    }
}

static int dump_unexp(int fd, tdm_sfmt_t *f, const tdm_unexp_t *ue) {
    line_start(f);
    tdm_sfmt_str(f, "unexpected: message from ");
    put_peer(f, ue->src, ue->src_world);
    put_tag(f, ue->tag);
    tdm_sfmt_str(f, " on ");
    put_comm(f, comm_of_ctx(ue->ctx), ue->ctx, -1, NULL);
    tdm_sfmt_str(f, ", ");
    tdm_sfmt_uint(f, ue->size);
    if (ue->type == TDM_PKT_RTS) {
        tdm_sfmt_str(f, " bytes: rendezvous (RTS); the sender waits for a matching receive");
    } else {
        tdm_sfmt_str(f, " bytes: eager, ");
        tdm_p2p_dump_range(f, ue->received, ue->size);
        tdm_sfmt_str(f, " arrived; no receive matches it yet");
    }
    tdm_sfmt_write_line(f, fd);
    return 1;
}

void tdm_p2p_dump(int fd) {
    char buf[640];
    tdm_sfmt_t f;
    tdm_sfmt_init(&f, buf, sizeof(buf));
    line_start(&f);
    tdm_sfmt_str(&f, "pending operations of rank ");
    tdm_sfmt_int(&f, tdm_p2p.rank);
    tdm_sfmt_str(&f, tdm_p2p.finalizing ? ", in MPI_Finalize waiting for the other ranks"
                     : tdm_p2p.waiting  ? ", waiting in an MPI call"
                                        : ", not waiting in MPI (computing, or between calls)");
    tdm_sfmt_str(&f, ":");
    tdm_sfmt_write_line(&f, fd);
    size_t nreq = 0, nunexp = 0, completed = 0;
    for (uint32_t i = 1;; i++) {
        tdm_req_t *r = tdm_req_slot(i);
        if (!r)
            break;
        nreq += (size_t)dump_req(fd, &f, r, &completed);
    }
    for (int b = 0; b < TDM_MATCH_BUCKETS; b++) {
        const tdm_list_t *q = &tdm_p2p.match[b].unexp;
        if (!q->next)
            continue; /* the engine is not set up */
        for (const tdm_list_t *it = q->next; it != q; it = it->next)
            nunexp += (size_t)dump_unexp(fd, &f, TDM_CONTAINER_OF(it, tdm_unexp_t, link));
    }
    line_start(&f);
    tdm_sfmt_str(&f, "end of pending operations: ");
    tdm_sfmt_uint(&f, nreq);
    tdm_sfmt_str(&f, " pending, ");
    tdm_sfmt_uint(&f, nunexp);
    tdm_sfmt_str(&f, " unexpected, ");
    tdm_sfmt_uint(&f, completed);
    tdm_sfmt_str(&f, " complete but not yet waited for or freed");
    tdm_sfmt_write_line(&f, fd);
}

static void dump_now(void) {
    tdm_p2p_dump_pending = 0;
    tdm_p2p_dump(STDERR_FILENO);
    if (hooks.done)
        hooks.done();
}

static void on_signal(int sig) {
    (void)sig;
    int saved = errno;
    if ((pid_t)syscall(SYS_gettid) == owner_tid) {
        dump_now();
    } else {
        /* another thread: the MPI thread prints at its next idle progress call */
        tdm_p2p_dump_pending = 1;
        tdm_shm_wake(tdm_p2p.rank);
    }
    errno = saved;
}

void tdm_p2p_dump_deferred(void) {
    if (tdm_p2p_dump_pending)
        dump_now();
}

void tdm_p2p_dump_init(const tdm_p2p_dump_hooks_t *h) {
    hooks = *h;
    owner_tid = (pid_t)syscall(SYS_gettid);
    struct sigaction cur;
    /* a program's own SIGUSR1 handler (or SIG_IGN) is left alone */
    if (sigaction(SIGUSR1, NULL, &cur) != 0 || cur.sa_handler != SIG_DFL ||
        (cur.sa_flags & SA_SIGINFO)) {
        tdm_debug(P2P, "SIGUSR1 has a handler already: no pending-operations dump");
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* the program's own system calls go on */
    sigaction(SIGUSR1, &sa, NULL);
}
