/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicators from groups, without a parent (a session's groups):
 *  - creations on overlapping groups under way at the same time: group i is ranks
 *    i and i+1 (mod n), each process creates its two in index order, so a process
 *    gets the messages of its second creation while it is still in its first;
 *  - two communicators of one group under two string tags have two contexts;
 *  - two different string tags whose hashes collide are told apart: the creation
 *    fails on every member with MPI_ERR_ARG instead of mixing them;
 *  - intercommunicators from two groups (halves; evens and odds with other leaders):
 *    point-to-point, collectives, merge;
 *  - bad arguments, each reported on the errhandler argument with its class;
 *  - a session finalized with its communicators still held, then freed.
 */
#include "stest.h"

static MPI_Session s;
static int rank, size;

static MPI_Group world_group(void) {
    MPI_Group g;
    T_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    return g;
}

/* The WORLD group, made once: translating ranks into it. */
static MPI_Group cached = MPI_GROUP_NULL;
static MPI_Group world_group_cached(void) {
    if (cached == MPI_GROUP_NULL)
        cached = world_group();
    return cached;
}
static void world_group_release(void) {
    if (cached != MPI_GROUP_NULL)
        MPI_Group_free(&cached);
}

static MPI_Comm create(MPI_Group g, const char *tag) {
    MPI_Comm c = MPI_COMM_NULL;
    T_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    return c;
}

static void overlapping(void) {
    if (size < 2)
        return;
    MPI_Group w = world_group();
    /* my groups: i = rank - 1 and i = rank (mod size), created in index order */
    int idx[2] = {(rank + size - 1) % size, rank};
    if (idx[0] > idx[1]) {
        int t = idx[0];
        idx[0] = idx[1];
        idx[1] = t;
    }
    MPI_Comm c[2];
    for (int k = 0; k < 2; k++) {
        int i = idx[k];
        MPI_Group g;
        MPI_Group_incl(w, 2, (int[]){i, (i + 1) % size}, &g);
        char tag[64];
        snprintf(tag, sizeof(tag), "org.tandem.test.ring.%d", i);
        c[k] = create(g, tag);
        int r = -1, n = -1;
        MPI_Comm_rank(c[k], &r);
        MPI_Comm_size(c[k], &n);
        T_CHECK(n == 2 && r == (rank == i ? 0 : 1), "group %d: rank %d of %d", i, r, n);
        MPI_Group_free(&g);
    }
    /* every pair talks on its own communicator; receives on both are posted before
     * any send, so a message on the wrong context would be caught */
    int got[2] = {-1, -1};
    MPI_Request rq[2];
    for (int k = 0; k < 2; k++)
        T_OK(MPI_Irecv(&got[k], 1, MPI_INT, MPI_ANY_SOURCE, 9, c[k], &rq[k]));
    for (int k = 1; k >= 0; k--) {
        int v = 1000 * idx[k] + rank;
        T_OK(MPI_Send(&v, 1, MPI_INT, 1 - (rank == idx[k] ? 0 : 1), 9, c[k]));
    }
    T_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 2; k++) {
        int i = idx[k], other = rank == i ? (i + 1) % size : i;
        T_CHECK(got[k] == 1000 * i + other, "group %d: got %d, want %d", i, got[k],
                1000 * i + other);
        int sum = -1;
        T_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c[k]));
        T_CHECK(sum == i + (i + 1) % size, "group %d: allreduce %d", i, sum);
        MPI_Comm_free(&c[k]);
    }
    MPI_Group_free(&w);
}

static void two_tags(void) {
    MPI_Group w = world_group();
    MPI_Comm x = create(w, "org.tandem.test.x"), y = create(w, "org.tandem.test.y");
    int cmp = -1;
    T_OK(MPI_Comm_compare(x, y, &cmp));
    T_CHECK(cmp == MPI_CONGRUENT, "compare %d", cmp);
    int to = (rank + 1) % size, from = (rank + size - 1) % size, gx = -1, gy = -1;
    MPI_Request r;
    T_OK(MPI_Irecv(&gy, 1, MPI_INT, from, 0, y, &r));
    T_OK(MPI_Send(&(int){rank + 100}, 1, MPI_INT, to, 0, x));
    T_OK(MPI_Send(&(int){rank + 200}, 1, MPI_INT, to, 0, y));
    T_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    T_OK(MPI_Recv(&gx, 1, MPI_INT, from, 0, x, MPI_STATUS_IGNORE));
    T_CHECK(gx == from + 100 && gy == from + 200, "x got %d, y got %d (from %d)", gx, gy, from);
    /* the longest string tag there may be */
    char tag[MPI_MAX_STRINGTAG_LEN + 1];
    memset(tag, 'q', MPI_MAX_STRINGTAG_LEN);
    tag[MPI_MAX_STRINGTAG_LEN] = 0;
    MPI_Comm z = create(w, tag);
    T_OK(MPI_Barrier(z));
    MPI_Comm_free(&z);
    MPI_Comm_free(&x);
    MPI_Comm_free(&y);
    MPI_Group_free(&w);
}

/* fromgroup.c's message tag: FNV-1a 64 folded to 29 bits. Under it the two tags
 * below collide (found by search); were it changed, this test would hang and fail
 * by its timeout, and a new pair must be found. */
static unsigned fold(const char *t) {
    unsigned long long h = 0xcbf29ce484222325ull;
    for (; *t; t++)
        h = (h ^ (unsigned char)*t) * 0x100000001b3ull;
    return (unsigned)((h ^ (h >> 32)) & 0x1fffffff);
}

static void colliding_tags(void) {
    if (size < 2)
        return;
    const char *a = "tandem-collide-26428", *b = "tandem-collide-71804";
    T_CHECK(fold(a) == fold(b), "the pair no longer collides: %#x %#x", fold(a), fold(b));
    MPI_Group w = world_group();
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_create_from_group(w, rank == 0 ? a : b, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    T_FAILS(MPI_ERR_ARG, "MPI_Comm_create_from_group", rc);
    T_CHECK(rc == MPI_SUCCESS || t_msg_has(rc, "different string tags"),
            "the message does not say why");
    T_CHECK(c == MPI_COMM_NULL, "a communicator came out: %#x", (unsigned)c);
    /* and the next creation is not disturbed */
    c = create(w, "org.tandem.test.after-collision");
    T_OK(MPI_Barrier(c));
    MPI_Comm_free(&c);
    MPI_Group_free(&w);
}

/* An intercomm between `mine` (leader lleader) and `other` (leader rleader). */
static void inter(MPI_Group mine, int lleader, MPI_Group other, int rleader, const char *tag,
                  int low) {
    MPI_Comm ic = MPI_COMM_NULL;
    T_OK(MPI_Intercomm_create_from_groups(mine, lleader, other, rleader, tag, MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &ic));
    if (ic == MPI_COMM_NULL)
        return;
    int flag = 0, lsize, rsize, lrank, grank;
    MPI_Comm_test_inter(ic, &flag);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &lrank);
    MPI_Group_rank(mine, &grank);
    int gl, gr;
    MPI_Group_size(mine, &gl);
    MPI_Group_size(other, &gr);
    T_CHECK(flag && lsize == gl && rsize == gr && lrank == grank,
            "inter %d: local %d of %d, remote %d", flag, lrank, lsize, rsize);
    MPI_Group rg;
    int cmp = -1;
    MPI_Comm_remote_group(ic, &rg);
    MPI_Group_compare(rg, other, &cmp);
    T_CHECK(cmp == MPI_IDENT, "remote group compares %d", cmp);
    MPI_Group_free(&rg);
    /* local rank i and remote rank i (mod) exchange world ranks */
    int peer = lrank % rsize;
    MPI_Request rq[64];
    int nrq = 0, from[64];
    for (int i = 0; i < rsize && nrq < 64; i++) {
        if (i % lsize == lrank) {
            from[nrq] = -1;
            T_OK(MPI_Irecv(&from[nrq], 1, MPI_INT, i, 4, ic, &rq[nrq]));
            nrq++;
        }
    }
    T_OK(MPI_Send(&rank, 1, MPI_INT, peer, 4, ic));
    T_OK(MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE));
    for (int k = 0, i = 0; i < rsize && k < nrq; i++) {
        if (i % lsize != lrank)
            continue;
        int want = -1;
        MPI_Group_translate_ranks(other, 1, &i, world_group_cached(), &want);
        T_CHECK(from[k] == want, "remote rank %d sent %d, want world rank %d", i, from[k], want);
        k++;
    }
    /* collectives across: the sum of the remote group's world ranks, and a bcast */
    int sum = -1, want = 0;
    T_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic));
    for (int i = 0; i < rsize; i++) {
        int w = -1;
        MPI_Group_translate_ranks(other, 1, &i, world_group_cached(), &w);
        want += w;
    }
    T_CHECK(sum == want, "inter allreduce %d, want %d", sum, want);
    int v = low ? 77 : -1;
    T_OK(MPI_Bcast(&v, 1, MPI_INT, low ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic));
    T_CHECK(low || v == 77, "inter bcast %d", v);
    MPI_Comm m = MPI_COMM_NULL;
    T_OK(MPI_Intercomm_merge(ic, !low, &m));
    int msize = -1, mrank = -1;
    MPI_Comm_size(m, &msize);
    MPI_Comm_rank(m, &mrank);
    T_CHECK(msize == size && mrank == (low ? lrank : gr + lrank), "merged: %d of %d", mrank, msize);
    MPI_Comm_free(&m);
    MPI_Comm_free(&ic);
}

static void intercomms(void) {
    if (size < 2)
        return;
    MPI_Group w = world_group(), lo, hi;
    int mid = size / 2;
    MPI_Group_range_incl(w, 1, (int[][3]){{0, mid - 1, 1}}, &lo);
    MPI_Group_range_incl(w, 1, (int[][3]){{mid, size - 1, 1}}, &hi);
    if (rank < mid)
        inter(lo, 0, hi, size - mid - 1, "org.tandem.test.halves", 1);
    else
        inter(hi, size - mid - 1, lo, 0, "org.tandem.test.halves", 0);
    MPI_Group_free(&lo);
    MPI_Group_free(&hi);
    /* evens and odds, leaders the last of each */
    MPI_Group ev, od;
    int ne = (size + 1) / 2, no = size / 2;
    MPI_Group_range_incl(w, 1, (int[][3]){{0, size - 1 - (size - 1) % 2, 2}}, &ev);
    MPI_Group_range_incl(w, 1, (int[][3]){{1, size - 1 - size % 2, 2}}, &od);
    if (rank % 2 == 0)
        inter(ev, ne - 1, od, no - 1, "org.tandem.test.parity", 1);
    else
        inter(od, no - 1, ev, ne - 1, "org.tandem.test.parity", 0);
    MPI_Group_free(&ev);
    MPI_Group_free(&od);
    MPI_Group_free(&w);
}

static void bad_input(void) {
    static const char fn[] = "MPI_Comm_create_from_group",
                      ifn[] = "MPI_Intercomm_create_from_groups";
    MPI_Group w = world_group(), me;
    MPI_Comm c = MPI_COMM_NULL;
    char tag[MPI_MAX_STRINGTAG_LEN + 2];
    memset(tag, 't', sizeof(tag) - 1);
    tag[sizeof(tag) - 1] = 0;
    T_FAILS(MPI_ERR_ARG, fn,
            MPI_Comm_create_from_group(w, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    T_FAILS(MPI_ERR_ARG, fn,
            MPI_Comm_create_from_group(w, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    T_FAILS(MPI_ERR_GROUP, fn,
            MPI_Comm_create_from_group((MPI_Group)0x88001234, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                       &c));
    T_FAILS(MPI_ERR_GROUP, fn,
            MPI_Comm_create_from_group(MPI_GROUP_NULL, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    T_FAILS(MPI_ERR_INFO, fn,
            MPI_Comm_create_from_group(w, "t", (MPI_Info)0x9c00abcd, MPI_ERRORS_RETURN, &c));
    T_FAILS(MPI_ERR_ARG, fn,
            MPI_Comm_create_from_group(w, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL));
    /* the errhandler must suit a communicator: a session's is refused, on the session */
    MPI_Errhandler seh;
    MPI_Session_create_errhandler((MPI_Session_errhandler_function *)(void (*)(void))abort, &seh);
    T_FAILS(MPI_ERR_ARG, fn, MPI_Comm_create_from_group(w, "t", MPI_INFO_NULL, seh, &c));
    T_FAILS(MPI_ERR_ARG, fn,
            MPI_Comm_create_from_group(w, "t", MPI_INFO_NULL, MPI_ERRHANDLER_NULL, &c));
    MPI_Errhandler_free(&seh);
    T_CHECK(c == MPI_COMM_NULL, "a failed call set newcomm to %#x", (unsigned)c);
    /* not a member, or no members: MPI_COMM_NULL without talking to anyone */
    c = (MPI_Comm)0x1234;
    T_OK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    T_CHECK(c == MPI_COMM_NULL, "MPI_GROUP_EMPTY gave %#x", (unsigned)c);
    MPI_Group_incl(w, 1, (int[]){0}, &me);
    T_OK(MPI_Comm_create_from_group(me, "org.tandem.test.zero", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                    &c));
    T_CHECK((rank == 0) == (c != MPI_COMM_NULL), "group {0} gave %#x", (unsigned)c);
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);

    /* intercommunicators */
    MPI_Group other;
    MPI_Group_excl(w, 1, (int[]){rank}, &other);
    MPI_Group self_g;
    MPI_Group_incl(w, 1, (int[]){rank}, &self_g);
    T_FAILS(MPI_ERR_GROUP, ifn,
            MPI_Intercomm_create_from_groups(self_g, 0, w, 0, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                             &c));
    T_FAILS(MPI_ERR_RANK, ifn,
            MPI_Intercomm_create_from_groups(self_g, 1, w, 0, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                             &c));
    T_FAILS(MPI_ERR_GROUP, ifn,
            MPI_Intercomm_create_from_groups(self_g, 0, MPI_GROUP_EMPTY, 0, "t", MPI_INFO_NULL,
                                             MPI_ERRORS_RETURN, &c));
    if (size > 1) {
        T_FAILS(MPI_ERR_RANK, ifn,
                MPI_Intercomm_create_from_groups(self_g, 0, other, size - 1, "t", MPI_INFO_NULL,
                                                 MPI_ERRORS_RETURN, &c));
        T_FAILS(MPI_ERR_GROUP, ifn,
                MPI_Intercomm_create_from_groups(other, 0, self_g, 0, "t", MPI_INFO_NULL,
                                                 MPI_ERRORS_RETURN, &c));
        /* groups of two sessions */
        MPI_Session s2;
        MPI_Group w2, other2;
        T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
        T_OK(MPI_Group_from_session_pset(s2, "mpi://WORLD", &w2));
        MPI_Group_excl(w2, 1, (int[]){rank}, &other2);
        int rc = MPI_Intercomm_create_from_groups(self_g, 0, other2, 0, "t", MPI_INFO_NULL,
                                                  MPI_ERRORS_RETURN, &c);
        T_FAILS(MPI_ERR_GROUP, ifn, rc);
        T_CHECK(rc == MPI_SUCCESS || t_msg_has(rc, "different sessions"),
                "the message does not say why");
        MPI_Group_free(&w2);
        T_OK(MPI_Session_finalize(&s2));
        /* a group whose session is gone makes no communicator */
        T_FAILS(MPI_ERR_GROUP, fn,
                MPI_Comm_create_from_group(other2, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        MPI_Group_free(&other2);
    }
    MPI_Group_free(&self_g);
    MPI_Group_free(&other);
    MPI_Group_free(&me);
    MPI_Group_free(&w);
}

/* A session finalized while the user still holds communicators derived from it,
 * overlapping ones and an intercommunicator among them: MPI_Session_finalize
 * synchronises on each and returns; MPI_Comm_free then releases them (the library
 * stays up through the test's own session). */
static void left_open(void) {
    MPI_Session t;
    T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &t));
    MPI_Group w, pair = MPI_GROUP_NULL, lo = MPI_GROUP_NULL, hi = MPI_GROUP_NULL;
    T_OK(MPI_Group_from_session_pset(t, "mpi://WORLD", &w));
    MPI_Comm c[4] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
    T_OK(MPI_Comm_create_from_group(w, "org.tandem.test.left.all", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                    &c[0]));
    T_OK(MPI_Comm_dup(c[0], &c[1]));
    if (size > 1) {
        /* pairs (2k, 2k+1), and the halves as an intercommunicator */
        if (rank / 2 * 2 + 1 < size) {
            MPI_Group_incl(w, 2, (int[]){rank / 2 * 2, rank / 2 * 2 + 1}, &pair);
            T_OK(MPI_Comm_create_from_group(pair, "org.tandem.test.left.pair", MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &c[2]));
        }
        int mid = size / 2;
        MPI_Group_range_incl(w, 1, (int[][3]){{0, mid - 1, 1}}, &lo);
        MPI_Group_range_incl(w, 1, (int[][3]){{mid, size - 1, 1}}, &hi);
        T_OK(MPI_Intercomm_create_from_groups(rank < mid ? lo : hi, 0, rank < mid ? hi : lo, 0,
                                              "org.tandem.test.left.inter", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &c[3]));
        MPI_Group_free(&lo);
        MPI_Group_free(&hi);
        if (pair != MPI_GROUP_NULL)
            MPI_Group_free(&pair);
    }
    MPI_Group_free(&w);
    for (int i = 0; i < 4; i++) {
        if (c[i] != MPI_COMM_NULL)
            T_OK(MPI_Barrier(c[i]));
    }
    T_OK(MPI_Session_finalize(&t));
    for (int i = 0; i < 4; i++) {
        if (c[i] != MPI_COMM_NULL) {
            T_OK(MPI_Comm_free(&c[i]));
            T_CHECK(c[i] == MPI_COMM_NULL, "MPI_Comm_free left %#x", (unsigned)c[i]);
        }
    }
}

int main(void) {
    T_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Comm all = t_world_comm(s, "org.tandem.test.fromgroup");
    rank = t_rank;
    MPI_Comm_size(all, &size);
    overlapping();
    two_tags();
    colliding_tags();
    intercomms();
    bad_input();
    left_open();
    t_verdict(all);
    MPI_Comm_free(&all);
    world_group_release();
    T_OK(MPI_Session_finalize(&s));
    return 0;
}
