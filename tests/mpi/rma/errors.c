/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad input to one-sided calls: each refusal has the right error class, returned
 * through the window's handler (MPI_ERRORS_RETURN on the window and on
 * MPI_COMM_WORLD / MPI_COMM_SELF), with a message naming the call, the argument
 * and the rank (checked on Tandem only: the anchors word theirs otherwise), and
 * harms nothing: refused operations write nothing (memory just past a window stays
 * as it was), and a clean epoch afterwards moves the right data.
 * usage: errors [SECTION] (all by default)
 *   win     MPI_ERR_WIN: MPI_WIN_NULL to an operation, a synchronization, free, names
 *   sync    MPI_ERR_RMA_SYNC: operations and flushes outside an epoch, Unlock without
 *           Lock, Unlock_all without Lock_all, Complete without Start, Wait without
 *           Post, a Put to a target not locked, a Put after a Fence with NOSUCCEED, a
 *           second Post or Start, a Put outside the Start group, Win_free in an epoch
 *   conflict MPI_ERR_RMA_CONFLICT: a second Lock of a locked target (either type),
 *           Lock_all over a Lock, Lock or a second Lock_all in a Lock_all epoch, Start
 *           naming a locked target, Lock of a target in the Start group, a window
 *           locked and exposed at once (Post while its process locks it, Lock of its
 *           own rank while exposed); MPI_ERR_RMA_SYNC where the epochs merely overlap
 *           (Start or Lock of other targets, anything in a fence epoch with
 *           operations); a Post beside a Lock of another target is allowed; every
 *           epoch that was open still works after the refusals
 *   range   MPI_ERR_RMA_RANGE: displacement + extent past the window (the memory just
 *           past it untouched), a huge displacement, a derived target type running
 *           past the end, memory of a dynamic window never attached or detached, any
 *           access to a window of size 0; MPI_ERR_DISP for a negative displacement
 *   type    MPI_ERR_TYPE: null, uncommitted, mixed basic types in an accumulate,
 *           origin and target of different basic types, a derived type in
 *           Fetch_and_op, a double in Compare_and_swap, a result of another type
 *   op      MPI_ERR_OP: a user op, MPI_OP_NULL, BAND on double, MAXLOC on int,
 *           MPI_NO_OP in Accumulate
 *   args    MPI_ERR_RANK, MPI_ERR_COUNT, MPI_ERR_ASSERT (unknown bits, asserts a call
 *           does not take), MPI_ERR_LOCKTYPE, MPI_ERR_DISP and MPI_ERR_SIZE at creation
 *   attach  MPI_ERR_RMA_FLAVOR (attach to a window that is not dynamic),
 *           MPI_ERR_RMA_ATTACH (overlapping attach, detach of memory not attached, more
 *           regions than TANDEM_RMA_ATTACH_MAX on Tandem)
 * MPI_ERR_RMA_SHARED (memory that cannot be shared) cannot happen on one node.
 *
 * The anchors miss many of these (tests/mpi/anchors.py lists what MPICH 4.0.2
 * and Open MPI 4.1.4 do not detect; MPICH crashes on the range section, since it
 * writes where it is told); Tandem must detect them all.
 */
#include "rmatest.h"

#define WB 256 /* bytes of the window; the buffer behind it is 2 x WB */
#define NEL (WB / 8)

static int peer;
static long long *buf;
static MPI_Win win;
static MPI_Group selfgroup;
static long long v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r[8], one = 1, res;

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((long long *)inout)[i] += ((long long *)in)[i];
}

static void sec_win(void) {
    MPI_Win nullwin = MPI_WIN_NULL;
    MPI_Group g = MPI_GROUP_NULL;
    EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, MPI_WIN_NULL), MPI_ERR_WIN,
           "MPI_Put", "win");
    EXPECT(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Win_fence", "win");
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Win_lock",
           "win");
    EXPECT(MPI_Win_flush_all(MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Win_flush_all", "win");
    EXPECT(MPI_Win_free(&nullwin), MPI_ERR_WIN, "MPI_Win_free", "win");
    EXPECT(MPI_Win_get_group(MPI_WIN_NULL, &g), MPI_ERR_WIN, "MPI_Win_get_group", "win");
    EXPECT(MPI_Win_set_name(MPI_WIN_NULL, "x"), MPI_ERR_WIN, "MPI_Win_set_name", "win");
}

static void sec_sync(void) {
    MPI_Request req = MPI_REQUEST_NULL;
    /* no epoch yet */
    EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_SYNC,
           "MPI_Put", NULL);
    EXPECT(MPI_Get(r, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_SYNC,
           "MPI_Get", NULL);
    EXPECT(MPI_Accumulate(v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, MPI_SUM, win),
           MPI_ERR_RMA_SYNC, "MPI_Accumulate", NULL);
    EXPECT(MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, peer, 0, MPI_SUM, win), MPI_ERR_RMA_SYNC,
           "MPI_Fetch_and_op", NULL);
    EXPECT(MPI_Compare_and_swap(&one, &one, &res, MPI_LONG_LONG, peer, 0, win), MPI_ERR_RMA_SYNC,
           "MPI_Compare_and_swap", NULL);
    EXPECT(MPI_Rput(v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, win, &req), MPI_ERR_RMA_SYNC,
           "MPI_Rput", NULL);
    CHECK(req == MPI_REQUEST_NULL, "a refused MPI_Rput set the request");
    EXPECT(MPI_Win_unlock(peer, win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock", NULL);
    EXPECT(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all", NULL);
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "MPI_Win_complete", NULL);
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "MPI_Win_wait", NULL);
    EXPECT(MPI_Win_flush(peer, win), MPI_ERR_RMA_SYNC, "MPI_Win_flush", NULL);
    EXPECT(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_flush_all", NULL);
    EXPECT(MPI_Win_flush_local(peer, win), MPI_ERR_RMA_SYNC, "MPI_Win_flush_local", NULL);
    EXPECT(MPI_Win_flush_local_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_flush_local_all", NULL);

    /* inside a Lock epoch */
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    if (size > 1) {
        int other = (rank + 2) % size; /* not locked (itself when there are two) */
        EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, other, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_SYNC,
               "MPI_Put", NULL);
    }
    /* Win_free in an epoch is refused; the window stays usable */
    MPI_Win keep = win;
    int rc = MPI_Win_free(&win);
    EXPECT(rc, MPI_ERR_RMA_SYNC, "MPI_Win_free", NULL);
    CHECK(rc == MPI_SUCCESS || win == keep, "a refused MPI_Win_free changed the handle");
    if (rc == MPI_SUCCESS) {
        fprintf(stderr, "[%d] MPI_Win_free in a Lock epoch freed the window: section ends\n", rank);
        win = MPI_WIN_NULL;
        return;
    }
    OK(MPI_Win_unlock(peer, win));

    /* PSCW: a second Post, a second Start, a Put outside the Start group */
    OK(MPI_Win_post(selfgroup, 0, win));
    EXPECT(MPI_Win_post(selfgroup, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_post", NULL);
    OK(MPI_Win_start(selfgroup, 0, win));
    EXPECT(MPI_Win_start(selfgroup, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_start", NULL);
    if (size > 1)
        EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_SYNC,
               "MPI_Put", NULL);
    long long three = 3;
    OK(MPI_Put(&three, 1, MPI_LONG_LONG, rank, 3, 1, MPI_LONG_LONG, win));
    OK(MPI_Win_complete(win));
    OK(MPI_Win_wait(win));
    CHECK(buf[3] == 3, "the Put to itself in a PSCW epoch left %lld", buf[3]);
    buf[3] = 1000 + 3;

    /* no epoch after a Fence with NOSUCCEED */
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_SYNC,
           "MPI_Put", NULL);
}

/* Refusals of epochs that claim memory this process holds already, and of epochs that
 * only overlap; each open epoch moves data afterwards. Writes go to elements 4..7 of
 * the window and are undone after a barrier. */
static void sec_conflict(void) {
    MPI_Group world, peergroup;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, &peergroup);
    int src = (rank + size - 1) % size;
    long long got = 0, mine = 100 + rank;

    /* a Lock: a second one of either type, Lock_all, Start naming the target */
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock",
           "locked");
    EXPECT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock",
           "locked");
    EXPECT(MPI_Win_lock_all(0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock_all", "lock");
    EXPECT(MPI_Win_start(peergroup, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_start", "locked");
    if (size > 1) /* a Start of other targets only overlaps */
        EXPECT(MPI_Win_start(selfgroup, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_start", NULL);
    OK(MPI_Put(&mine, 1, MPI_LONG_LONG, peer, 4, 1, MPI_LONG_LONG, win));
    OK(MPI_Win_unlock(peer, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(buf[4] == 100 + src, "the Put of the Lock epoch left %lld", buf[4]);
    buf[4] = 1004;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Lock_all: Lock of any target, a second Lock_all, Start, Post of the window */
    OK(MPI_Win_lock_all(0, win));
    EXPECT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock",
           "locked");
    EXPECT(MPI_Win_lock_all(0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock_all", "lock");
    EXPECT(MPI_Win_start(peergroup, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_start", "locked");
    EXPECT(MPI_Win_post(selfgroup, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_post", "exposed");
    OK(MPI_Get(&got, 1, MPI_LONG_LONG, peer, 5, 1, MPI_LONG_LONG, win));
    OK(MPI_Win_unlock_all(win));
    CHECK(got == 1005, "the Get of the Lock_all epoch read %lld", got);

    /* its own window locked, then exposed; exposed, then locked */
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    EXPECT(MPI_Win_post(selfgroup, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_post", "exposed");
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Win_post(selfgroup, 0, win));
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock",
           "exposed");
    EXPECT(MPI_Win_lock_all(0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock_all", "exposed");
    OK(MPI_Win_start(selfgroup, 0, win));
    /* a Start epoch: Lock of a target in its group conflicts, of another overlaps */
    EXPECT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock",
           NULL);
    if (size > 1)
        EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_lock", NULL);
    OK(MPI_Put(&mine, 1, MPI_LONG_LONG, rank, 6, 1, MPI_LONG_LONG, win));
    OK(MPI_Win_complete(win));
    OK(MPI_Win_wait(win));
    CHECK(buf[6] == 100 + rank, "the Put of the PSCW epoch left %lld", buf[6]);
    buf[6] = 1006;

    /* a Lock of another target and an exposure of its own window may overlap */
    if (size > 1) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
        OK(MPI_Win_post(selfgroup, 0, win));
        EXPECT(MPI_Win_start(selfgroup, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_start", NULL);
        got = 0;
        /* element 5: the peer's own PSCW epoch below may already be writing its 7 */
        OK(MPI_Get(&got, 1, MPI_LONG_LONG, peer, 5, 1, MPI_LONG_LONG, win));
        OK(MPI_Win_unlock(peer, win));
        CHECK(got == 1005, "the Get of the Lock epoch beside a Post read %lld", got);
        OK(MPI_Win_start(selfgroup, 0, win));
        OK(MPI_Put(&mine, 1, MPI_LONG_LONG, rank, 7, 1, MPI_LONG_LONG, win));
        OK(MPI_Win_complete(win));
        OK(MPI_Win_wait(win));
        CHECK(buf[7] == 100 + rank, "the Put of the PSCW epoch left %lld", buf[7]);
        buf[7] = 1007;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* a fence epoch with operations must be closed first: out of order, no conflict */
    got = 0;
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    OK(MPI_Get(&got, 1, MPI_LONG_LONG, peer, 5, 1, MPI_LONG_LONG, win));
    EXPECT(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC, "MPI_Win_lock_all", "fence");
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_lock", "fence");
    EXPECT(MPI_Win_start(selfgroup, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_start", "fence");
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(got == 1005, "the Get of the fence epoch read %lld", got);
    MPI_Group_free(&peergroup);
    MPI_Group_free(&world);
}

static void sec_range(void) {
    MPI_Request req = MPI_REQUEST_NULL;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, peer, NEL, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_RANGE,
           "MPI_Put", "target_disp");
    EXPECT(MPI_Put(v, 2, MPI_LONG_LONG, peer, NEL - 1, 2, MPI_LONG_LONG, win), MPI_ERR_RMA_RANGE,
           "MPI_Put", "target_disp");
    EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, peer, (MPI_Aint)1 << 60, 1, MPI_LONG_LONG, win),
           MPI_ERR_RMA_RANGE, "MPI_Put", "target_disp");
    EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, peer, -1, 1, MPI_LONG_LONG, win), MPI_ERR_DISP, "MPI_Put",
           "target_disp");
    MPI_Datatype strided; /* 2 elements 31 apart from element 1: ends past the window */
    MPI_Type_vector(2, 1, 31, MPI_LONG_LONG, &strided);
    MPI_Type_commit(&strided);
    EXPECT(MPI_Put(v, 2, MPI_LONG_LONG, peer, 1, 1, strided, win), MPI_ERR_RMA_RANGE, "MPI_Put",
           "target_disp");
    MPI_Type_free(&strided);
    EXPECT(MPI_Get(r, 1, MPI_LONG_LONG, peer, NEL, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_RANGE,
           "MPI_Get", "target_disp");
    EXPECT(MPI_Accumulate(v, 4, MPI_LONG_LONG, peer, NEL - 2, 4, MPI_LONG_LONG, MPI_SUM, win),
           MPI_ERR_RMA_RANGE, "MPI_Accumulate", "target_disp");
    EXPECT(MPI_Get_accumulate(v, 1, MPI_LONG_LONG, r, 1, MPI_LONG_LONG, peer, NEL, 1, MPI_LONG_LONG,
                              MPI_SUM, win),
           MPI_ERR_RMA_RANGE, "MPI_Get_accumulate", "target_disp");
    EXPECT(MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, peer, NEL, MPI_SUM, win), MPI_ERR_RMA_RANGE,
           "MPI_Fetch_and_op", "target_disp");
    EXPECT(MPI_Compare_and_swap(&one, &one, &res, MPI_LONG_LONG, peer, NEL, win), MPI_ERR_RMA_RANGE,
           "MPI_Compare_and_swap", "target_disp");
    EXPECT(MPI_Rput(v, 1, MPI_LONG_LONG, peer, NEL, 1, MPI_LONG_LONG, win, &req), MPI_ERR_RMA_RANGE,
           "MPI_Rput", "target_disp");
    CHECK(req == MPI_REQUEST_NULL, "a refused MPI_Rput set the request");
    /* the last element is in the window */
    long long last = 77;
    OK(MPI_Put(&last, 1, MPI_LONG_LONG, peer, NEL - 1, 1, MPI_LONG_LONG, win));
    OK(MPI_Win_unlock(peer, win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(buf[NEL - 1] == 77, "the Put to the last element left %lld", buf[NEL - 1]);
    buf[NEL - 1] = 1000 + NEL - 1;

    /* a dynamic window: memory never attached, past a region, detached */
    MPI_Win dyn;
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    OK(MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN));
    long long *region = calloc(16, 8), *other = calloc(16, 8);
    OK(MPI_Win_attach(dyn, region, 16 * 8));
    MPI_Aint addrs[2], *all = malloc(sizeof(MPI_Aint) * 2 * (size_t)size);
    MPI_Get_address(region, &addrs[0]);
    MPI_Get_address(other, &addrs[1]);
    MPI_Allgather(addrs, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD);
    OK(MPI_Win_lock_all(0, dyn));
    EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, peer, all[2 * peer + 1], 1, MPI_LONG_LONG, dyn),
           MPI_ERR_RMA_RANGE, "MPI_Put", "target_disp");
    EXPECT(MPI_Put(v, 2, MPI_LONG_LONG, peer, all[2 * peer] + 15 * 8, 2, MPI_LONG_LONG, dyn),
           MPI_ERR_RMA_RANGE, "MPI_Put", "target_disp");
    OK(MPI_Put(v, 2, MPI_LONG_LONG, peer, all[2 * peer] + 14 * 8, 2, MPI_LONG_LONG, dyn));
    OK(MPI_Win_unlock_all(dyn));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(region[13] == 0 && region[14] == 1 && region[15] == 2, "dynamic window: %lld %lld %lld",
          region[13], region[14], region[15]);
    for (int i = 0; i < 16; i++)
        CHECK(other[i] == 0, "memory never attached was written: element %d is %lld", i, other[i]);
    OK(MPI_Win_detach(dyn, region));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock_all(0, dyn));
    EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, peer, all[2 * peer], 1, MPI_LONG_LONG, dyn),
           MPI_ERR_RMA_RANGE, "MPI_Put", "target_disp");
    OK(MPI_Win_unlock_all(dyn));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(region[0] == 0, "detached memory was written: %lld", region[0]);
    OK(MPI_Win_free(&dyn));
    free(all);
    free(region);
    free(other);

    /* a window of size 0: no displacement is in it, but nothing at all is fine */
    MPI_Win zwin;
    void *zbase = NULL;
    OK(MPI_Win_allocate(0, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &zbase, &zwin));
    OK(MPI_Win_set_errhandler(zwin, MPI_ERRORS_RETURN));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, zwin));
    EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, zwin), MPI_ERR_RMA_RANGE,
           "MPI_Put", "target_disp");
    OK(MPI_Put(v, 0, MPI_LONG_LONG, peer, 0, 0, MPI_LONG_LONG, zwin));
    OK(MPI_Win_unlock(peer, zwin));
    OK(MPI_Win_free(&zwin));
}

static void sec_type(void) {
    double d = 1.0, dres = 0;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    EXPECT(MPI_Put(v, 1, MPI_DATATYPE_NULL, peer, 0, 1, MPI_LONG_LONG, win), MPI_ERR_TYPE,
           "MPI_Put", "origin_datatype");
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(2, MPI_LONG_LONG, &uncommitted);
    EXPECT(MPI_Put(v, 2, MPI_LONG_LONG, peer, 0, 1, uncommitted, win), MPI_ERR_TYPE, "MPI_Put",
           "target_datatype");
    MPI_Type_free(&uncommitted);
    MPI_Datatype mixed, types[2] = {MPI_INT, MPI_DOUBLE};
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 8};
    MPI_Type_create_struct(2, bl, dp, types, &mixed);
    MPI_Type_commit(&mixed);
    EXPECT(MPI_Accumulate(v, 1, mixed, peer, 0, 1, mixed, MPI_SUM, win), MPI_ERR_TYPE,
           "MPI_Accumulate", "datatype");
    MPI_Type_free(&mixed);
    EXPECT(MPI_Accumulate(v, 2, MPI_INT, peer, 0, 1, MPI_DOUBLE, MPI_SUM, win), MPI_ERR_TYPE,
           "MPI_Accumulate", "datatype");
    MPI_Datatype ll1;
    MPI_Type_contiguous(1, MPI_LONG_LONG, &ll1);
    MPI_Type_commit(&ll1);
    EXPECT(MPI_Fetch_and_op(&one, &res, ll1, peer, 0, MPI_SUM, win), MPI_ERR_TYPE,
           "MPI_Fetch_and_op", "datatype");
    MPI_Type_free(&ll1);
    EXPECT(MPI_Compare_and_swap(&d, &d, &dres, MPI_DOUBLE, peer, 0, win), MPI_ERR_TYPE,
           "MPI_Compare_and_swap", "datatype");
    EXPECT(MPI_Get_accumulate(v, 1, MPI_LONG_LONG, r, 2, MPI_INT, peer, 0, 1, MPI_LONG_LONG,
                              MPI_SUM, win),
           MPI_ERR_TYPE, "MPI_Get_accumulate", "datatype");
    OK(MPI_Win_unlock(peer, win));
}

static void sec_op(void) {
    double d = 1.0;
    MPI_Op uop;
    MPI_Op_create(user_sum, 1, &uop);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    EXPECT(MPI_Accumulate(v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, uop, win), MPI_ERR_OP,
           "MPI_Accumulate", "op");
    EXPECT(MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, peer, 0, uop, win), MPI_ERR_OP,
           "MPI_Fetch_and_op", "op");
    EXPECT(MPI_Get_accumulate(v, 1, MPI_LONG_LONG, r, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG,
                              uop, win),
           MPI_ERR_OP, "MPI_Get_accumulate", "op");
    EXPECT(MPI_Accumulate(v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, MPI_OP_NULL, win),
           MPI_ERR_OP, "MPI_Accumulate", "op");
    EXPECT(MPI_Accumulate(&d, 1, MPI_DOUBLE, peer, 0, 1, MPI_DOUBLE, MPI_BAND, win), MPI_ERR_OP,
           "MPI_Accumulate", "op");
    EXPECT(MPI_Accumulate(v, 1, MPI_INT, peer, 0, 1, MPI_INT, MPI_MAXLOC, win), MPI_ERR_OP,
           "MPI_Accumulate", "op");
    EXPECT(MPI_Accumulate(v, 1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, MPI_NO_OP, win),
           MPI_ERR_OP, "MPI_Accumulate", "op");
    OK(MPI_Win_unlock(peer, win));
    MPI_Op_free(&uop);
}

static void sec_args(void) {
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    EXPECT(MPI_Put(v, 1, MPI_LONG_LONG, size, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RANK, "MPI_Put",
           "target_rank");
    EXPECT(MPI_Get(r, 1, MPI_LONG_LONG, -3, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RANK, "MPI_Get",
           "target_rank");
    EXPECT(MPI_Put(v, -1, MPI_LONG_LONG, peer, 0, 1, MPI_LONG_LONG, win), MPI_ERR_COUNT, "MPI_Put",
           "origin_count");
    EXPECT(MPI_Get(r, 1, MPI_LONG_LONG, peer, 0, -2, MPI_LONG_LONG, win), MPI_ERR_COUNT, "MPI_Get",
           "target_count");
    OK(MPI_Win_unlock(peer, win));

    EXPECT(MPI_Win_lock(12345, peer, 0, win), MPI_ERR_LOCKTYPE, "MPI_Win_lock", "lock_type");
    EXPECT(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, size, 0, win), MPI_ERR_RANK, "MPI_Win_lock", "rank");
    EXPECT(MPI_Win_unlock(-2, win), MPI_ERR_RANK, "MPI_Win_unlock", "rank");
    EXPECT(MPI_Win_fence(0x7fff0000, win), MPI_ERR_ASSERT, "MPI_Win_fence", "assert");
    /* a library that takes one of these anyway gets the epoch it opened closed again,
     * so that what follows still runs */
    int rc = MPI_Win_lock(MPI_LOCK_SHARED, peer, MPI_MODE_NOPUT, win);
    EXPECT(rc, MPI_ERR_ASSERT, "MPI_Win_lock", "assert");
    if (rc == MPI_SUCCESS)
        MPI_Win_unlock(peer, win);
    rc = MPI_Win_lock_all(MPI_MODE_NOSTORE, win);
    EXPECT(rc, MPI_ERR_ASSERT, "MPI_Win_lock_all", "assert");
    if (rc == MPI_SUCCESS)
        MPI_Win_unlock_all(win);
    int rc_post = MPI_Win_post(selfgroup, MPI_MODE_NOSUCCEED, win);
    EXPECT(rc_post, MPI_ERR_ASSERT, "MPI_Win_post", "assert");
    int rc_start = MPI_Win_start(selfgroup, MPI_MODE_NOPUT, win);
    EXPECT(rc_start, MPI_ERR_ASSERT, "MPI_Win_start", "assert");
    if (rc_post == MPI_SUCCESS || rc_start == MPI_SUCCESS) {
        if (rc_post != MPI_SUCCESS)
            MPI_Win_post(selfgroup, 0, win);
        if (rc_start != MPI_SUCCESS)
            MPI_Win_start(selfgroup, 0, win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
    }

    /* creation, every rank alike */
    MPI_Win bad = MPI_WIN_NULL;
    void *bbase = NULL;
    long long spare[4];
    EXPECT(MPI_Win_create(spare, sizeof(spare), 0, MPI_INFO_NULL, MPI_COMM_WORLD, &bad),
           MPI_ERR_DISP, "MPI_Win_create", "disp_unit");
    EXPECT(MPI_Win_create(spare, -8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &bad), MPI_ERR_SIZE,
           "MPI_Win_create", "size");
    EXPECT(MPI_Win_allocate(-8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &bbase, &bad), MPI_ERR_SIZE,
           "MPI_Win_allocate", "size");
    EXPECT(MPI_Win_allocate_shared(64, -1, MPI_INFO_NULL, MPI_COMM_WORLD, &bbase, &bad),
           MPI_ERR_DISP, "MPI_Win_allocate_shared", "disp_unit");
    CHECK(bad == MPI_WIN_NULL, "a refused creation set the window handle");
}

static void sec_attach(void) {
    long long extra[4];
    EXPECT(MPI_Win_attach(win, extra, sizeof(extra)), MPI_ERR_RMA_FLAVOR, "MPI_Win_attach", NULL);
    MPI_Win dyn;
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    OK(MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN));
    long long *region = calloc(16, 8), *other = calloc(16, 8);
    OK(MPI_Win_attach(dyn, region, 16 * 8));
    int rc = MPI_Win_attach(dyn, region + 4, 8 * 8);
    EXPECT(rc, MPI_ERR_RMA_ATTACH, "MPI_Win_attach", NULL);
    if (rc == MPI_SUCCESS)
        MPI_Win_detach(dyn, region + 4);
    EXPECT(MPI_Win_detach(dyn, other), MPI_ERR_RMA_ATTACH, "MPI_Win_detach", NULL);
    if (on_tandem) {
        /* resource exhaustion: more regions than the tunable allows */
        const char *e = getenv("TANDEM_RMA_ATTACH_MAX");
        int max = e ? atoi(e) : 64, n;
        char *many = malloc((size_t)(max + 1) * 64);
        for (n = 0; n < max + 1; n++) {
            rc = MPI_Win_attach(dyn, many + (size_t)n * 64, 32);
            if (rc != MPI_SUCCESS)
                break;
        }
        CHECK(n == max - 1, "%d more regions attached beside one, expected %d", n, max - 1);
        EXPECT(rc, MPI_ERR_RMA_ATTACH, "MPI_Win_attach", NULL);
        for (int i = 0; i < n; i++)
            OK(MPI_Win_detach(dyn, many + (size_t)i * 64));
        free(many);
    }
    OK(MPI_Win_detach(dyn, region));
    OK(MPI_Win_free(&dyn));
    free(region);
    free(other);
}

static const struct {
    const char *name;
    void (*fn)(void);
} sections[] = {{"win", sec_win},     {"sync", sec_sync},    {"conflict", sec_conflict},
                {"range", sec_range}, {"type", sec_type},    {"op", sec_op},
                {"args", sec_args},   {"attach", sec_attach}};

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    const char *which = argc > 1 ? argv[1] : "all";
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    peer = (rank + 1) % size;

    /* a Win_create window over the first half of a buffer: the second half is
     * memory just past the window */
    buf = malloc(2 * WB);
    for (int i = 0; i < 2 * WB / 8; i++)
        buf[i] = 1000 + i;
    OK(MPI_Win_create(buf, WB, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Comm_group(MPI_COMM_SELF, &selfgroup);

    int found = 0;
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
        if (strcmp(which, "all") && strcmp(which, sections[i].name))
            continue;
        found = 1;
        sections[i].fn();
        if (win == MPI_WIN_NULL)
            break;
        /* nothing the refusals named was written: the window and what lies past it */
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
        for (int j = 0; j < 2 * WB / 8; j++)
            if (buf[j] != 1000 + j) {
                CHECK(0, "%s: element %d %s the window is %lld after refused operations",
                      sections[i].name, j, j < NEL ? "of" : "past", buf[j]);
                buf[j] = 1000 + j;
            }
        OK(MPI_Win_unlock(rank, win));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (!found) {
        if (rank == 0)
            fprintf(stderr, "unknown section '%s'\n", which);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    if (win != MPI_WIN_NULL) {
        /* nothing harmed: a clean fence epoch moves the right data */
        long long out[4], in[4] = {0};
        for (int i = 0; i < 4; i++)
            out[i] = rank * 100 + i;
        OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        OK(MPI_Put(out, 4, MPI_LONG_LONG, peer, 8, 4, MPI_LONG_LONG, win));
        OK(MPI_Win_fence(0, win));
        OK(MPI_Get(in, 4, MPI_LONG_LONG, peer, 8, 4, MPI_LONG_LONG, win));
        OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        int src = (rank + size - 1) % size;
        for (int i = 0; i < 4; i++) {
            CHECK(buf[8 + i] == src * 100 + i, "after the refusals, element %d is %lld", 8 + i,
                  buf[8 + i]);
            CHECK(in[i] == rank * 100 + i, "after the refusals, got back %lld", in[i]);
        }
        OK(MPI_Win_free(&win));
    }
    MPI_Group_free(&selfgroup);
    free(buf);
    return rt_finish();
}
