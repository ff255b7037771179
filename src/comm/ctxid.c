/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Context ids.
 *
 * Each process keeps a bitmap of the ids its live communicators use (bit i =
 * ids 2i and 2i+1), grown on demand, and a second one of the ids it holds for
 * agreements still running (below). The space is the whole uint32 range; freed
 * ids are reused lowest first, so the bitmaps stay as small as the peak number
 * of live communicators; nothing is global and only the members of a creation
 * take part in it.
 *
 * An agreement runs in rounds over a binomial tree rooted at participant 0:
 *   up    every participant sends its parent the union of its subtree's bitmaps
 *         (used | held, at the time it sends) and, from the second round on, the
 *         subtree's vote on the last proposal;
 *   down  participant 0 proposes an id free in the union, or commits the last
 *         proposal once every vote on it was yes; the word goes down the tree.
 * A participant votes yes to a proposal when the id is neither used nor held
 * here, and then holds it for this agreement until the next word; a commit turns
 * the hold into a use. An id is held for at most one agreement at a time, and an
 * agreement commits only with every participant holding its id, so two
 * agreements sharing a process never commit the same id, however many run at
 * once (non-blocking MPI_Comm_idup, several outstanding, blocking creations in
 * between). No agreement ever waits for another: a clash costs the clashing
 * proposals a round. Two agreements that keep proposing the same id to the same
 * processes could clash forever, so from the second proposal on participant 0
 * takes one of the first 2^round free ids at random (up to 1024): a repeat
 * becomes less likely each round.
 *
 * An intercommunicator's id must be free in both groups: each group runs the
 * agreement above, and their participants 0 (the leaders) join the two rounds
 * over a bridge: the leader of the higher world rank sends its group's union
 * and votes, the other decides for both and sends the word back.
 *
 * Everything runs from the completion hooks of point-to-point requests, so an
 * agreement progresses whenever the process makes progress; the blocking calls
 * start one and wait. A bitmap message carries the words up to the last used
 * bit; up to INLINE_WORDS ride in the first message, the rest follow in a second.
 *
 * Threads (MPI_THREAD_MULTIPLE). Several threads may create communicators from
 * different parents at once, and any thread's progress may complete any
 * agreement's receive. MPICH serialises the creations that share a process
 * through its mask lock (a thread takes the mask only when no creation of a lower
 * context id wants it); here none need to, since no creation waits for another:
 * each blocking creation starts its agreement and waits for its own, and progress
 * from any thread drives every one. What threads share is this file's state: the
 * bitmaps and every agreement's record, under `ctx_lock`. A step of an agreement
 * runs with it held and posts messages, and the engine may run completion hooks
 * inside those calls (base/lock.h), so a hook never waits for the lock: it pushes
 * its slot on `events` (a lock-free stack) and runs the steps only if it gets the
 * lock at once; whoever holds the lock runs what was pushed before letting go (and
 * looks again after, so nothing pushed meanwhile is left behind). Ids given back
 * by destroyed communicators take the same road (`released`), since a communicator
 * may die inside such a call too. Completion callbacks (done) and the references
 * an agreement drops run after the lock is let go: they may destroy communicators.
 */
#include "comm.h"
#include "../base/log.h"
#include "../p2p/p2p.h"
#include "../p2p/part.h"
#include "../base/abi.h"
#include "../base/lock.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The agreements' tags lie clear of every other internal tag on ctx + 1. */
_Static_assert(TDM_COMM_TAG_AGREE(0) < TDM_P2P_PART_TAG_MIN &&
                   TDM_COMM_TAG_AGREE(0x0fffffffu) >
                       TDM_COMM_TAG_FROM_GROUP_BASE + TDM_COMM_TAG_FROM_GROUP_MASK &&
                   TDM_COMM_TAG_FROM_GROUP_BASE > TDM_COMM_TAG_GROUP_BASE + TDM_COMM_TAG_GROUP_MASK,
               "context id agreement tags overlap other internal tags");

#define INLINE_WORDS 32
#define MAX_BITS 0x7fffffffu
#define NO_BIT 0xffffffffu
#define RANDOM_SPAN_MAX 1024

/* ---- this process's ids ---- */

/* ctx_lock: used, held, nwords, rand_state and every agreement's record. */
static tdm_lock_t ctx_lock = TDM_LOCK_INITIALIZER;
static uint64_t *used, *held;
static size_t nwords;
static void ctx_leave(void);

static int grow(size_t words) {
    if (words <= nwords)
        return 0;
    size_t nw = nwords ? nwords : 4;
    while (nw < words)
        nw *= 2;
    uint64_t *u = realloc(used, nw * sizeof(uint64_t));
    if (u)
        used = u;
    uint64_t *h = u ? realloc(held, nw * sizeof(uint64_t)) : NULL;
    if (!h) {
        tdm_error(COMM, "out of memory for the context id bitmaps (%zu words)", nw);
        return -1;
    }
    held = h;
    memset(used + nwords, 0, (nw - nwords) * sizeof(uint64_t));
    memset(held + nwords, 0, (nw - nwords) * sizeof(uint64_t));
    nwords = nw;
    return 0;
}

static bool bit_in(const uint64_t *w, size_t n, uint32_t bit) {
    return bit / 64 < n && (w[bit / 64] & (1ull << (bit % 64)));
}

static int mark(uint32_t bit) {
    if (grow(bit / 64 + 1))
        return -1;
    used[bit / 64] |= 1ull << (bit % 64);
    return 0;
}

int tdm_comm_ctxid_init(void) {
    /* MPI_COMM_WORLD (0, 1), MPI_COMM_SELF (2, 3) and the boot communicator (4, 5) */
    if (mark(0) || mark(1) || mark(2))
        return -1;
    return 0;
}

static void unmark(uint32_t bit) {
    if (bit_in(used, nwords, bit))
        used[bit / 64] &= ~(1ull << (bit % 64));
}

/* Ids given back while another thread held ctx_lock (see the top of the file). */
typedef struct release_ev {
    struct release_ev *next;
    uint32_t bit;
} release_ev_t;
static release_ev_t *released;

void tdm_comm_ctxid_release(uint32_t ctx) {
    if (ctx == TDM_COMM_CTX_NONE)
        return;
    if (!tdm_threaded) {
        unmark(ctx / 2);
        return;
    }
    release_ev_t *ev = malloc(sizeof(*ev));
    if (!ev) { /* the id stays marked used: never reused, never wrong */
        tdm_warn(COMM, "out of memory giving back context id %u; it stays in use", ctx);
        return;
    }
    ev->bit = ctx / 2;
    ev->next = __atomic_load_n(&released, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&released, &ev->next, ev, true, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
        ;
    if (tdm_lock_try(&ctx_lock))
        ctx_leave();
}

void tdm_comm_ctxid_fini(void) {
    release_ev_t *rel = __atomic_exchange_n(&released, NULL, __ATOMIC_ACQ_REL);
    while (rel) {
        release_ev_t *next = rel->next;
        free(rel);
        rel = next;
    }
    free(used);
    free(held);
    used = held = NULL;
    nwords = 0;
}

/* Words up to and including the last non-zero one. */
static size_t trimmed(const uint64_t *w, size_t n) {
    while (n > 0 && w[n - 1] == 0)
        n--;
    return n;
}

/* used | held, trimmed, into a new array; its length in *n_p. NULL: no memory. */
static uint64_t *snapshot(size_t *n_p) {
    size_t n = nwords;
    while (n > 0 && (used[n - 1] | held[n - 1]) == 0)
        n--;
    uint64_t *w = malloc((n ? n : 1) * sizeof(uint64_t));
    if (!w)
        return NULL;
    for (size_t i = 0; i < n; i++)
        w[i] = used[i] | held[i];
    *n_p = n;
    return w;
}

/* OR src (n words; NULL: none, only grow) into *acc_p (length *nacc_p, grown as
 * needed). */
static int or_into(uint64_t **acc_p, size_t *nacc_p, const uint64_t *src, size_t n) {
    if (n > *nacc_p) {
        uint64_t *a = realloc(*acc_p, n * sizeof(uint64_t));
        if (!a) {
            tdm_error(COMM, "out of memory for a context id bitmap of %zu words", n);
            return -1;
        }
        memset(a + *nacc_p, 0, (n - *nacc_p) * sizeof(uint64_t));
        *acc_p = a;
        *nacc_p = n;
    }
    for (size_t k = 0; src && k < n; k++)
        (*acc_p)[k] |= src[k];
    return 0;
}

static uint64_t rand_state;

static uint64_t next_random(void) {
    if (!rand_state) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        rand_state =
            ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
        rand_state |= 1;
    }
    rand_state ^= rand_state << 13; /* xorshift64 */
    rand_state ^= rand_state >> 7;
    rand_state ^= rand_state << 17;
    return rand_state;
}

/* The id to propose in `round`: the lowest free one first, then one of the first
 * min(2^round, RANDOM_SPAN_MAX) free ones at random (see the top of the file). */
static uint32_t choose(const uint64_t *w, size_t n, int round) {
    uint32_t span = round >= 10 ? RANDOM_SPAN_MAX : 1u << round;
    uint32_t pick = round == 0 ? 0 : (uint32_t)(next_random() % span);
    for (size_t i = 0;; i++) {
        uint64_t freebits = i < n ? ~w[i] : ~0ull;
        while (freebits) {
            if (pick-- == 0)
                return (uint32_t)(i * 64 + (size_t)__builtin_ctzll(freebits));
            freebits &= freebits - 1;
        }
    }
}

/* ---- agreements ---- */

/* Votes in an up message; a subtree's vote is its worst. */
enum { VOTE_NONE = 0, VOTE_YES = 1, VOTE_NO = 2, VOTE_FAIL = 3 };
/* Words going down. */
enum { WORD_PROPOSE = 1, WORD_COMMIT = 2, WORD_FAIL = 3 };
/* What the agreement waits for. */
enum { PH_UP, PH_WORD, PH_LEADER };
/* What a receive fills. */
enum { SLOT_BITMAP, SLOT_WORD };

typedef struct agree agree_t;

typedef struct slot {
    agree_t *a;
    int kind;
    /* the receive's outcome, as its hook saw it, while the slot waits on `events` */
    struct slot *next;
    tdm_rc_t err;
    size_t bytes;
} slot_t;

/* Receives completed while another thread held ctx_lock (see the top of the file). */
static slot_t *events;

/* A bitmap message from a child or the other leader: the first part inline,
 * the rest (rest != NULL while it is being received) after. */
typedef struct inbox {
    slot_t s;
    int from; /* participant index, or -1: the other leader */
    uint64_t first[INLINE_WORDS];
    uint64_t *rest;
} inbox_t;

struct agree {
    tdm_comm_peers_t p; /* p.prank is ours (a copy) or NULL */
    bool bridged, decider;
    tdm_comm_bridge_t b;
    tdm_comm_ctxid_done_fn_t done;
    void *arg;
    int phase, round;
    int parent; /* participant index, -1 at participant 0 */
    int nchildren;
    int children[32];
    inbox_t *boxes; /* nchildren + 1 (the last one for the other leader) */
    slot_t word_slot;
    uint32_t word[2]; /* kind, id */
    int pending;      /* receives (and a guard) the current phase waits for */
    uint64_t *acc;    /* union of the bitmaps of this round */
    size_t nacc;
    int vote;          /* this subtree's (group's, both groups') vote on the proposal */
    uint32_t proposal; /* participant 0 and the decider: the last proposal */
    uint32_t hold;     /* the id held here for this agreement, or NO_BIT */
    bool failed;       /* a local step failed: vote VOTE_FAIL */
    int rc;            /* ended: the result (the id is `proposal`) */
    agree_t *next_ended;
};

static tdm_dtype_t *bytes_type(void) {
    return tdm_dtype_get(TDM_MPI_BYTE);
}

static int peer_rank(const agree_t *a, int i) {
    return a->p.prank ? a->p.prank[i] : i;
}

static void hold_release(agree_t *a) {
    if (a->hold != NO_BIT) {
        held[a->hold / 64] &= ~(1ull << (a->hold % 64));
        a->hold = NO_BIT;
    }
}

static void slot_arrived(slot_t *slot, tdm_rc_t err, size_t bytes);

/* Agreements that ended, whose callbacks and references wait for ctx_lock to be
 * let go (see the top of the file); the lock holder's list. */
static agree_t *ended;

static void finish(agree_t *a, int rc, uint32_t bit) {
    hold_release(a);
    if (rc == 0 && mark(bit))
        rc = -1;
    for (int i = 0; i <= a->nchildren; i++)
        free(a->boxes[i].rest);
    free(a->boxes);
    free(a->acc);
    free((void *)a->p.prank);
    a->boxes = NULL;
    a->acc = NULL;
    a->p.prank = NULL;
    a->rc = rc;
    a->proposal = bit;
    a->next_ended = ended;
    ended = a;
}

/* Run what ctx_lock's holder left: events and released ids, under the lock. */
static void run_pending(void) {
    if (!tdm_threaded) /* both lists stay empty: their pushers act at once */
        return;
    release_ev_t *rel = __atomic_exchange_n(&released, NULL, __ATOMIC_ACQ_REL);
    while (rel) {
        release_ev_t *next = rel->next;
        unmark(rel->bit);
        free(rel);
        rel = next;
    }
    slot_t *ev;
    while ((ev = __atomic_exchange_n(&events, NULL, __ATOMIC_ACQ_REL))) {
        slot_t *fifo = NULL; /* the stack is newest first: run them in arrival order */
        while (ev) {
            slot_t *next = ev->next;
            ev->next = fifo;
            fifo = ev;
            ev = next;
        }
        while (fifo) {
            slot_t *next = fifo->next;
            slot_arrived(fifo, fifo->err, fifo->bytes);
            fifo = next;
        }
    }
}

/* Let ctx_lock go: run what was pushed meanwhile, then the ended agreements'
 * callbacks without the lock, and take the lock again if something was pushed
 * after the last look (its pusher found the lock taken and left it to us). */
static void ctx_leave(void) {
    for (;;) {
        run_pending();
        agree_t *done_list = ended;
        ended = NULL;
        tdm_lock_release(&ctx_lock);
        while (done_list) {
            agree_t *a = done_list;
            done_list = a->next_ended;
            tdm_comm_ctxid_done_fn_t done = a->done;
            void *arg = a->arg;
            int rc = a->rc;
            uint32_t bit = a->proposal;
            tdm_comm_release(a->p.parent);
            if (a->bridged)
                tdm_comm_release(a->b.via);
            free(a);
            done(arg, rc, rc == 0 ? bit * 2 : TDM_COMM_CTX_NONE);
        }
        if (!tdm_threaded)
            return;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&events, __ATOMIC_SEQ_CST) &&
            !__atomic_load_n(&released, __ATOMIC_SEQ_CST))
            return;
        if (!tdm_lock_try(&ctx_lock))
            return; /* its holder runs them */
    }
}

/* Where participant i (-1: the other leader) is: communicator, rank, world rank,
 * tag and context of the messages from us to it (to_it) or back. */
typedef struct route {
    tdm_comm_t *c;
    int rank, world, tag;
    uint32_t ctx;
} route_t;

static route_t route(const agree_t *a, int i, bool to_it) {
    route_t r;
    if (i < 0) {
        r.c = a->b.via;
        r.rank = a->b.peer;
        r.world = tdm_comm_peer_world(r.c, r.rank);
        r.tag = a->b.tag;
        r.ctx = a->b.ctx;
        return r;
    }
    r.c = a->p.parent;
    r.rank = peer_rank(a, i);
    r.world = tdm_comm_world_rank(r.c, r.rank);
    /* up to the parent, down to the children */
    bool up = (i == a->parent) == to_it;
    r.tag = up ? a->p.tag_up : a->p.tag_down;
    r.ctx = r.c->ctx + 1;
    return r;
}

static void send_done(tdm_req_t *r) {
    free(r->cb_arg);
}

/* Send len bytes from buf (malloc'ed; taken over) to participant i or the other
 * leader (-1). */
static int post_send(agree_t *a, int i, void *buf, size_t len) {
    route_t rt = route(a, i, true);
    tdm_req_t *r = NULL;
    tdm_rc_t rc = tdm_p2p_isend(buf, len, bytes_type(), rt.world, rt.c->rank, rt.tag, rt.ctx,
                                TDM_MODE_STD, rt.c, false, &r);
    if (rc != TDM_OK) {
        tdm_error(COMM, "context id agreement: send of %zu bytes to rank %d failed (%d)", len,
                  rt.rank, (int)rc);
        free(buf);
        return -1;
    }
    if (!r || !tdm_p2p_req_hook(r, send_done, buf)) { /* sent at once (copied into the ring) */
        if (r)
            tdm_p2p_release(r);
        free(buf);
    }
    return 0;
}

/* A bitmap message: [words | vote << 32, first words...], then the rest if any. */
static int send_bitmap(agree_t *a, int i, const uint64_t *w, size_t n, int vote) {
    size_t first = n < INLINE_WORDS - 1 ? n : INLINE_WORDS - 1;
    uint64_t *msg = malloc((first + 1) * sizeof(uint64_t));
    uint64_t *rest = n > first ? malloc((n - first) * sizeof(uint64_t)) : NULL;
    if (!msg || (n > first && !rest)) {
        tdm_error(COMM, "out of memory for a context id message of %zu words", n);
        free(msg);
        free(rest);
        return -1;
    }
    msg[0] = (uint64_t)n | (uint64_t)vote << 32;
    memcpy(msg + 1, w, first * sizeof(uint64_t));
    if (post_send(a, i, msg, (first + 1) * sizeof(uint64_t))) {
        free(rest);
        return -1;
    }
    if (!rest)
        return 0;
    memcpy(rest, w + first, (n - first) * sizeof(uint64_t));
    return post_send(a, i, rest, (n - first) * sizeof(uint64_t));
}

static int send_word(agree_t *a, int i, uint32_t kind, uint32_t bit) {
    uint32_t *w = malloc(2 * sizeof(uint32_t));
    if (!w) {
        tdm_error(COMM, "out of memory for a context id message");
        return -1;
    }
    w[0] = kind;
    w[1] = bit;
    return post_send(a, i, w, 2 * sizeof(uint32_t));
}

static void recv_done(tdm_req_t *r);

/* Receive into buf from participant i or the other leader (-1); counted in
 * a->pending, and reported to `slot` (an inbox or a->word_slot). */
static void post_recv(agree_t *a, int i, void *buf, size_t len, slot_t *slot) {
    route_t rt = route(a, i, false);
    tdm_req_t *r = NULL;
    tdm_rc_t rc = tdm_p2p_irecv_ex(buf, len, bytes_type(), rt.rank, rt.world, rt.tag, rt.ctx, rt.c,
                                   0, NULL, &r);
    if (rc != TDM_OK || !r) {
        tdm_error(COMM, "context id agreement: receive from rank %d failed (%d)", rt.rank, (int)rc);
        a->failed = true;
        return;
    }
    a->pending++;
    if (!tdm_p2p_req_hook(r, recv_done, slot)) { /* the message was here: now (ctx_lock held) */
        slot_arrived(slot, r->status.error, r->status.bytes);
        tdm_p2p_release(r);
    }
}

static void phase_done(agree_t *a);

/* A bitmap part arrived: merge it (and the vote it carries) into this round's. */
static void bitmap_arrived(agree_t *a, inbox_t *box, size_t bytes) {
    if (box->rest) { /* the second part: words INLINE_WORDS - 1 onwards */
        size_t n = bytes / sizeof(uint64_t), off = INLINE_WORDS - 1;
        if (or_into(&a->acc, &a->nacc, NULL, off + n) == 0)
            for (size_t k = 0; k < n; k++)
                a->acc[off + k] |= box->rest[k];
        else
            a->failed = true;
        free(box->rest);
        box->rest = NULL;
        return;
    }
    uint64_t n = box->first[0] & 0xffffffffu;
    int vote = (int)(box->first[0] >> 32);
    if (vote > a->vote)
        a->vote = vote;
    size_t first = n < INLINE_WORDS - 1 ? n : INLINE_WORDS - 1;
    if (or_into(&a->acc, &a->nacc, box->first + 1, first)) {
        a->failed = true;
        return;
    }
    if (n > first) {
        box->rest = malloc((n - first) * sizeof(uint64_t));
        if (!box->rest) {
            tdm_error(COMM, "out of memory for a context id bitmap of %llu words",
                      (unsigned long long)n);
            a->failed = true;
            return;
        }
        post_recv(a, box->from, box->rest, (n - first) * sizeof(uint64_t), &box->s);
    }
}

/* A receive of `slot` completed (ctx_lock held). */
static void slot_arrived(slot_t *slot, tdm_rc_t err, size_t bytes) {
    agree_t *a = slot->a;
    if (err != TDM_OK) {
        tdm_error(COMM, "context id agreement: a receive failed (%d)", err);
        a->failed = true;
    } else if (slot->kind == SLOT_BITMAP) {
        bitmap_arrived(a, (inbox_t *)slot, bytes);
    }
    if (--a->pending == 0)
        phase_done(a);
}

/* The receive's hook, from any thread's progress: the step runs under ctx_lock,
 * here if it is free, else by its holder before it lets go. */
static void recv_done(tdm_req_t *r) {
    slot_t *slot = r->cb_arg;
    if (!tdm_threaded) {
        slot_arrived(slot, r->status.error, r->status.bytes);
        ctx_leave();
        return;
    }
    slot->err = r->status.error;
    slot->bytes = r->status.bytes;
    slot->next = __atomic_load_n(&events, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&events, &slot->next, slot, true, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
        ;
    if (tdm_lock_try(&ctx_lock))
        ctx_leave();
}

static void begin_round(agree_t *a);
static void word_arrived(agree_t *a, uint32_t kind, uint32_t bit);

/* Participant 0, or the deciding leader: the word of this round for everyone. */
static void decide(agree_t *a) {
    uint32_t kind, bit = 0;
    if (a->vote == VOTE_FAIL) {
        kind = WORD_FAIL;
    } else if (a->round > 0 && a->vote == VOTE_YES) {
        kind = WORD_COMMIT;
        bit = a->proposal;
    } else {
        if (a->round > 0)
            tdm_debug(COMM, "context id agreement: id %u refused (round %d), proposing again",
                      a->proposal * 2, a->round);
        kind = WORD_PROPOSE;
        bit = a->proposal = choose(a->acc, a->nacc, a->round);
        if (bit >= MAX_BITS) {
            tdm_error(COMM, "context ids exhausted (%u communicators alive)", bit);
            kind = WORD_FAIL;
        }
    }
    if (a->bridged && send_word(a, -1, kind, bit))
        kind = WORD_FAIL;
    word_arrived(a, kind, bit);
}

/* The word of this round reached this participant: pass it on, then act on it. */
static void word_arrived(agree_t *a, uint32_t kind, uint32_t bit) {
    for (int k = 0; k < a->nchildren; k++) {
        if (send_word(a, a->children[k], kind, bit))
            kind = WORD_FAIL; /* that subtree waits forever: the failure is logged */
    }
    if (kind == WORD_COMMIT) {
        if (a->hold != bit)
            tdm_error(COMM, "context id agreement: commit of id %u not held here", bit * 2);
        finish(a, a->hold == bit ? 0 : -1, bit);
        return;
    }
    if (kind != WORD_PROPOSE) {
        finish(a, -1, 0);
        return;
    }
    hold_release(a);
    if (bit_in(used, nwords, bit) || bit_in(held, nwords, bit)) {
        a->vote = VOTE_NO;
    } else if (grow(bit / 64 + 1)) {
        a->vote = VOTE_FAIL;
    } else {
        held[bit / 64] |= 1ull << (bit % 64);
        a->hold = bit;
        a->vote = VOTE_YES;
    }
    a->round++;
    begin_round(a);
}

/* Everything the current phase waited for is here. */
static void phase_done(agree_t *a) {
    if (a->failed)
        a->vote = VOTE_FAIL;
    switch (a->phase) {
    case PH_UP: {
        /* the children's unions are in; add ours as it is now */
        size_t n = 0;
        uint64_t *mine = snapshot(&n);
        if (!mine || or_into(&a->acc, &a->nacc, mine, n))
            a->vote = VOTE_FAIL;
        free(mine);
        size_t len = trimmed(a->acc, a->nacc);
        if (a->parent >= 0 || (a->bridged && !a->decider)) {
            /* a failure so far travels in the vote; participant 0 ends the agreement */
            int to = a->parent >= 0 ? a->parent : -1;
            a->phase = PH_WORD;
            a->failed = false;
            if (send_bitmap(a, to, a->acc, len, a->vote)) {
                finish(a, -1, 0);
                return;
            }
            a->pending = 1;
            post_recv(a, to, a->word, sizeof(a->word), &a->word_slot);
            if (--a->pending == 0)
                phase_done(a);
        } else if (a->bridged) {
            a->phase = PH_LEADER;
            a->failed = false;
            a->pending = 1;
            post_recv(a, -1, a->boxes[a->nchildren].first, sizeof(a->boxes[0].first),
                      &a->boxes[a->nchildren].s);
            if (--a->pending == 0)
                phase_done(a);
        } else {
            decide(a);
        }
        return;
    }
    case PH_LEADER: /* the other group's union and vote are in too */
        decide(a);
        return;
    case PH_WORD:
        if (a->failed) {
            finish(a, -1, 0);
            return;
        }
        word_arrived(a, a->word[0], a->word[1]);
        return;
    }
}

/* A round: the children's bitmaps and votes first. */
static void begin_round(agree_t *a) {
    a->phase = PH_UP;
    a->nacc = 0;
    a->pending = 1; /* a guard while the receives are posted */
    for (int k = 0; k < a->nchildren; k++)
        post_recv(a, a->children[k], a->boxes[k].first, sizeof(a->boxes[k].first), &a->boxes[k].s);
    if (--a->pending == 0)
        phase_done(a);
}

int tdm_comm_ctxid_start(const tdm_comm_peers_t *p, const tdm_comm_bridge_t *b,
                         tdm_comm_ctxid_done_fn_t done, void *arg) {
    agree_t *a = calloc(1, sizeof(*a));
    int *prank = p->prank ? malloc((size_t)p->n * sizeof(int)) : NULL;
    if (!a || (p->prank && !prank)) {
        tdm_error(COMM, "out of memory for a context id agreement over %d ranks", p->n);
        free(a);
        free(prank);
        return -1;
    }
    a->p = *p;
    if (prank) {
        memcpy(prank, p->prank, (size_t)p->n * sizeof(int));
        a->p.prank = prank;
    }
    a->done = done;
    a->arg = arg;
    a->hold = NO_BIT;
    a->word_slot = (slot_t){.a = a, .kind = SLOT_WORD};
    /* binomial tree rooted at participant 0: i's parent clears i's lowest set
     * bit, its children are i + m for the powers of two m below that bit */
    int me = p->me, n = p->n;
    a->parent = me ? (me & (me - 1)) : -1;
    for (int m = tdm_comm_tree_bound(me, n) >> 1; m >= 1; m >>= 1) {
        if (me + m < n)
            a->children[a->nchildren++] = me + m;
    }
    a->boxes = calloc((size_t)a->nchildren + 1, sizeof(inbox_t));
    if (!a->boxes) {
        tdm_error(COMM, "out of memory for a context id agreement over %d ranks", p->n);
        free(prank);
        free(a);
        return -1;
    }
    for (int k = 0; k < a->nchildren; k++)
        a->boxes[k] = (inbox_t){.s = {.a = a, .kind = SLOT_BITMAP}, .from = a->children[k]};
    a->boxes[a->nchildren] = (inbox_t){.s = {.a = a, .kind = SLOT_BITMAP}, .from = -1};
    tdm_comm_retain(a->p.parent);
    if (b && me == 0) {
        a->bridged = true;
        a->b = *b;
        tdm_comm_retain(b->via);
        /* the leader of the lower world rank decides for both groups */
        a->decider = tdm_comm_world_rank(a->p.parent, peer_rank(a, 0)) <
                     tdm_comm_peer_world(b->via, b->peer);
    }
    tdm_lock_acquire(&ctx_lock);
    begin_round(a);
    ctx_leave();
    return 0;
}

/* ---- the blocking forms ---- */

typedef struct waiter {
    bool done;
    int rc;
    uint32_t ctx;
} waiter_t;

/* May run in another thread's progress: `done` is stored last, with release. */
static void waiter_done(void *arg, int rc, uint32_t ctx) {
    waiter_t *w = arg;
    w->rc = rc;
    w->ctx = ctx;
    TDM_STORE_RELEASE(&w->done, true);
}

static bool waiter_ready(void *arg) {
    return TDM_LOAD_ACQUIRE(&((waiter_t *)arg)->done);
}

int tdm_comm_ctxid_agree_bridged(const tdm_comm_peers_t *p, const tdm_comm_bridge_t *b,
                                 uint32_t *ctx_p) {
    waiter_t w = {0};
    if (tdm_comm_ctxid_start(p, b, waiter_done, &w))
        return -1;
    if (!waiter_ready(&w))
        tdm_p2p_wait_until(waiter_ready, &w);
    if (w.rc)
        return -1;
    *ctx_p = w.ctx;
    return 0;
}

int tdm_comm_ctxid_agree(const tdm_comm_peers_t *p, uint32_t *ctx_p) {
    return tdm_comm_ctxid_agree_bridged(p, NULL, ctx_p);
}
