/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Corners of the operations, for one window kind. usage: misc KIND
 *  - target displacements are scaled by the target's disp_unit, which differs per rank
 *    (rank r: 4 x (r + 1) bytes; dynamic windows: 1);
 *  - unaligned elements: with disp_unit 1, Put, Get, Accumulate, Fetch_and_op and
 *    Compare_and_swap of long long at odd byte offsets;
 *  - MPI_PROC_NULL as a target in every operation (no effect, buffers untouched, the
 *    request of Rput completes) in a fence and in a Lock_all epoch;
 *  - operations of 0 elements (no effect);
 *  - Lock with MPI_MODE_NOCHECK (every rank only takes shared locks meanwhile), and a
 *    window created with info no_locks=true used with fences only.
 */
#include "rmatest.h"

static int kind;

static void scaled_disp_units(void) {
    /* 16 elements of the target's unit each; rank r's unit is 4 (r + 1) bytes */
    int du = 4 * (rank + 1);
    rt_win_t W;
    rt_win_make(kind, 16 * du, du, MPI_COMM_WORLD, &W);
    memset(W.base, 0, (size_t)16 * du);
    int t = (rank + 1) % size, tdu = kind == K_DYNAMIC ? 1 : 4 * (t + 1);
    int val = 1000 + rank;
    OK(MPI_Win_fence(0, W.win));
    for (int k = 0; k < 16; k += 5) {
        MPI_Aint disp = kind == K_DYNAMIC ? W.tbase[t] + (MPI_Aint)k * 4 * (t + 1) : k;
        OK(MPI_Put(&val, 1, MPI_INT, t, disp, 1, MPI_INT, W.win));
    }
    OK(MPI_Win_fence(0, W.win));
    int src = (rank + size - 1) % size;
    for (int k = 0; k < 16; k++) {
        int got;
        memcpy(&got, W.base + (size_t)k * du, sizeof(int));
        int want = k % 5 == 0 ? 1000 + src : 0;
        CHECK(got == want, "disp_unit %d (origin's own would be %d): unit %d holds %d, expected %d",
              du, tdu, k, got, want);
    }
    rt_win_free(&W);
}

static void unaligned(void) {
    rt_win_t W;
    rt_win_make(kind, 256, 1, MPI_COMM_WORLD, &W);
    memset(W.base, 0, 256);
    int t = (rank + 1) % size;
    long long v = 0x0102030405060708LL + rank, one = 1, got = 0, cmp = 0, nv = 77;
    long long fetched = -1, swapped = -1;
    MPI_Aint d = rt_disp(&W, t, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, W.win));
    OK(MPI_Put(&v, 1, MPI_LONG_LONG, t, d + 3, 1, MPI_LONG_LONG, W.win));
    OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, t, d + 17, 1, MPI_LONG_LONG, MPI_SUM, W.win));
    OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, t, d + 17, 1, MPI_LONG_LONG, MPI_SUM, W.win));
    OK(MPI_Win_flush(t, W.win));
    OK(MPI_Get(&got, 1, MPI_LONG_LONG, t, d + 3, 1, MPI_LONG_LONG, W.win));
    OK(MPI_Fetch_and_op(&one, &fetched, MPI_LONG_LONG, t, d + 17, MPI_SUM, W.win));
    OK(MPI_Compare_and_swap(&nv, &cmp, &swapped, MPI_LONG_LONG, t, d + 33, W.win));
    OK(MPI_Win_unlock(t, W.win));
    CHECK(got == v, "unaligned Get at byte 3: %llx, expected %llx", got, v);
    CHECK(fetched == 2, "unaligned Fetch_and_op at byte 17 fetched %lld, expected 2", fetched);
    CHECK(swapped == 0, "unaligned Compare_and_swap at byte 33 fetched %lld", swapped);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, W.win));
    int src = (rank + size - 1) % size;
    long long want = 0x0102030405060708LL + src, x, y, z;
    memcpy(&x, W.base + 3, 8);
    memcpy(&y, W.base + 17, 8);
    memcpy(&z, W.base + 33, 8);
    CHECK(x == want && y == 3 && z == 77, "unaligned elements: %llx %lld %lld", x, y, z);
    for (int i = 0; i < 3; i++)
        CHECK(W.base[i] == 0 && W.base[11 + i] == 0, "bytes beside an unaligned Put were written");
    OK(MPI_Win_unlock(rank, W.win));
    rt_win_free(&W);
}

static void proc_null_and_empty(void) {
    rt_win_t W;
    rt_win_make(kind, 64, 8, MPI_COMM_WORLD, &W);
    memset(W.base, 0x11, 64);
    long long v[4] = {1, 2, 3, 4}, r[4] = {-1, -1, -1, -1}, res = -1, one = 1;
    MPI_Request rq = MPI_REQUEST_NULL;
    int t = (rank + 1) % size;
    MPI_Aint d = rt_disp(&W, t, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0)
            OK(MPI_Win_fence(0, W.win));
        else
            OK(MPI_Win_lock_all(0, W.win));
        OK(MPI_Put(v, 4, MPI_LONG_LONG, MPI_PROC_NULL, 0, 4, MPI_LONG_LONG, W.win));
        OK(MPI_Get(r, 4, MPI_LONG_LONG, MPI_PROC_NULL, 0, 4, MPI_LONG_LONG, W.win));
        OK(MPI_Accumulate(v, 4, MPI_LONG_LONG, MPI_PROC_NULL, 0, 4, MPI_LONG_LONG, MPI_SUM, W.win));
        OK(MPI_Get_accumulate(v, 4, MPI_LONG_LONG, r, 4, MPI_LONG_LONG, MPI_PROC_NULL, 0, 4,
                              MPI_LONG_LONG, MPI_SUM, W.win));
        OK(MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, MPI_PROC_NULL, 0, MPI_SUM, W.win));
        OK(MPI_Compare_and_swap(&one, &one, &res, MPI_LONG_LONG, MPI_PROC_NULL, 0, W.win));
        /* 0 elements to a real target */
        OK(MPI_Put(v, 0, MPI_LONG_LONG, t, d, 0, MPI_LONG_LONG, W.win));
        OK(MPI_Get(r, 0, MPI_LONG_LONG, t, d, 0, MPI_LONG_LONG, W.win));
        OK(MPI_Accumulate(v, 0, MPI_LONG_LONG, t, d, 0, MPI_LONG_LONG, MPI_SUM, W.win));
        if (pass == 1) {
            OK(MPI_Rput(v, 4, MPI_LONG_LONG, MPI_PROC_NULL, 0, 4, MPI_LONG_LONG, W.win, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            OK(MPI_Rget(r, 4, MPI_LONG_LONG, MPI_PROC_NULL, 0, 4, MPI_LONG_LONG, W.win, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            OK(MPI_Win_unlock_all(W.win));
        } else {
            OK(MPI_Win_fence(0, W.win));
        }
        for (int i = 0; i < 4; i++)
            CHECK(r[i] == -1, "a Get from MPI_PROC_NULL wrote the buffer");
        CHECK(res == -1, "an atomic from MPI_PROC_NULL wrote the result");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 64; i++)
        CHECK((unsigned char)W.base[i] == 0x11, "byte %d changed by operations with no effect", i);
    rt_win_free(&W);
}

static void nocheck_and_no_locks(void) {
    rt_win_t W;
    rt_win_make(kind, 64, 8, MPI_COMM_WORLD, &W);
    memset(W.base, 0, 64);
    MPI_Barrier(MPI_COMM_WORLD);
    long long one = 1;
    for (int t = 0; t < size; t++) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, t, MPI_MODE_NOCHECK, W.win));
        OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, t, rt_disp(&W, t, 0), 1, MPI_LONG_LONG, MPI_SUM,
                          W.win));
        OK(MPI_Win_unlock(t, W.win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, W.win));
    CHECK(((long long *)W.base)[0] == size, "under NOCHECK locks: %lld, expected %d",
          ((long long *)W.base)[0], size);
    OK(MPI_Win_unlock(rank, W.win));
    rt_win_free(&W);

    if (kind == K_DYNAMIC)
        return;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    long long *base = NULL, mem[8] = {0};
    MPI_Win w;
    if (kind == K_CREATE) {
        base = mem;
        OK(MPI_Win_create(base, sizeof(mem), 8, info, MPI_COMM_WORLD, &w));
    } else if (kind == K_ALLOCATE) {
        OK(MPI_Win_allocate(64, 8, info, MPI_COMM_WORLD, &base, &w));
    } else {
        OK(MPI_Win_allocate_shared(64, 8, info, MPI_COMM_WORLD, &base, &w));
    }
    MPI_Info_free(&info);
    memset(base, 0, 64);
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, w));
    long long val = 500 + rank;
    OK(MPI_Put(&val, 1, MPI_LONG_LONG, (rank + 1) % size, rank % 8, 1, MPI_LONG_LONG, w));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));
    int src = (rank + size - 1) % size;
    CHECK(base[src % 8] == 500 + src, "no_locks window: %lld", base[src % 8]);
    OK(MPI_Win_free(&w));
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: misc KIND\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    kind = rt_parse_kind(argv[1]);
    scaled_disp_units();
    unaligned();
    proc_null_and_empty();
    nocheck_and_no_locks();
    return rt_finish();
}
