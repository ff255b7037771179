/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The direct path of passive target epochs (contiguous types to a target whose memory is
 * mapped here) and what must leave it for the general path: every operation's result
 * exact either way, range and epoch errors reported with nothing written outside the
 * target's window, and, on Tandem, the tandem_rma_direct counter grown by exactly the
 * operations that qualify (none with TANDEM_RMA_DIRECT=0 or on an MPI_Win_create window).
 *   direct KIND SYNC   KIND create|allocate|shared, SYNC lock|lock_all
 * Every rank is the origin of the next rank's window (itself on 1 rank).
 */
#include "rmatest.h"

#include <stdint.h>

#define WBYTES 512
#define NELEM (WBYTES / 8)

static int64_t initial(int owner, int i) {
    return (int64_t)owner * 100000 + i;
}

/* The counter of operations done by the direct path (Tandem only; 0 elsewhere). */
static MPI_T_pvar_session pv_s;
static MPI_T_pvar_handle pv_h = MPI_T_PVAR_HANDLE_NULL;

static unsigned long long direct_count(void) {
    unsigned long long v = 0;
    if (pv_h != MPI_T_PVAR_HANDLE_NULL)
        OK(MPI_T_pvar_read(pv_s, pv_h, &v));
    return v;
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: direct create|allocate|shared lock|lock_all\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int kind = rt_parse_kind(argv[1]);
    int lock_all = !strcmp(argv[2], "lock_all");
    const char *env = getenv("TANDEM_RMA_DIRECT");
    int expect_direct = on_tandem && kind != K_CREATE && kind != K_DYNAMIC &&
                        !(env && (!strcmp(env, "0") || !strcmp(env, "off") || !strcmp(env, "no")));
    if (on_tandem) {
        int provided, idx = -1;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        OK(MPI_T_pvar_session_create(&pv_s));
        OK(MPI_T_pvar_get_index("tandem_rma_direct", MPI_T_PVAR_CLASS_COUNTER, &idx));
        if (idx >= 0) {
            int count = 0;
            OK(MPI_T_pvar_handle_alloc(pv_s, idx, NULL, &pv_h, &count));
            OK(MPI_T_pvar_start(pv_s, pv_h));
        }
    }

    /* a window of byte displacements and one of 8-byte units over separate memory */
    rt_win_t w1, w8;
    rt_win_make(kind, WBYTES, 1, MPI_COMM_WORLD, &w1);
    rt_win_make(kind, WBYTES, 8, MPI_COMM_WORLD, &w8);
    MPI_Win_set_errhandler(w1.win, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(w8.win, MPI_ERRORS_RETURN);
    int t = (rank + 1) % size, from = (rank + size - 1) % size;
    int64_t *m1 = (int64_t *)(void *)w1.base, *m8 = (int64_t *)(void *)w8.base;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w1.win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w8.win);
    for (int i = 0; i < NELEM; i++)
        m1[i] = m8[i] = initial(rank, i);
    MPI_Win_unlock(rank, w8.win);
    MPI_Win_unlock(rank, w1.win);
    MPI_Barrier(MPI_COMM_WORLD);

    if (lock_all) {
        OK(MPI_Win_lock_all(0, w1.win));
        OK(MPI_Win_lock_all(0, w8.win));
    } else {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w1.win));
        OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w8.win));
    }
    /* past the epoch's delayed start (TANDEM_RMA_EAGER_OPS) before counting */
    int64_t scratch[NELEM];
    for (int i = 0; i < 16; i++) {
        OK(MPI_Get(scratch, 1, MPI_INT64_T, t, 8 * 40, 1, MPI_INT64_T, w1.win));
        OK(MPI_Get(scratch, 1, MPI_INT64_T, t, 40, 1, MPI_INT64_T, w8.win));
    }
    OK(MPI_Win_flush(t, w1.win));
    OK(MPI_Win_flush(t, w8.win));
    CHECK(scratch[0] == initial(t, 40), "warm-up Get read %lld", (long long)scratch[0]);
    unsigned long long before = direct_count();
    int ndirect = 0; /* operations that qualify for the direct path */
    int64_t v = 1000 + rank, v2[4], res[4], one = 1;
    MPI_Datatype pair, vec;
    MPI_Type_contiguous(2, MPI_INT64_T, &pair);
    MPI_Type_commit(&pair);
    MPI_Type_vector(2, 1, 2, MPI_INT64_T, &vec);
    MPI_Type_commit(&vec);

    /* ---- qualifying operations: contiguous types, aligned elements, in range ---- */
    for (int i = 0; i < 4; i++)
        v2[i] = 7000 + 10 * rank + i;
    OK(MPI_Put(v2, 3, MPI_INT64_T, t, 8 * 2, 3, MPI_INT64_T, w1.win)); /* elements 2..4 */
    ndirect++;
    OK(MPI_Put(v2, 2, MPI_INT64_T, t, 2, 1, pair, w8.win)); /* w8 elements 2, 3 */
    ndirect++;
    memset(res, 0, sizeof(res));
    OK(MPI_Get(res, 2, pair, t, 8 * 10, 4, MPI_INT64_T, w1.win));
    ndirect++;
    OK(MPI_Win_flush(t, w1.win));
    for (int i = 0; i < 4; i++)
        CHECK(res[i] == initial(t, 10 + i), "Get element %d: %lld, expected %lld", i,
              (long long)res[i], (long long)initial(t, 10 + i));
    int64_t acc[2] = {5, -3};
    OK(MPI_Accumulate(acc, 2, MPI_INT64_T, t, 8 * 12, 2, MPI_INT64_T, MPI_SUM, w1.win));
    ndirect++;
    OK(MPI_Get_accumulate(acc, 2, MPI_INT64_T, res, 2, MPI_INT64_T, t, 14, 2, MPI_INT64_T, MPI_SUM,
                          w8.win));
    ndirect++;
    OK(MPI_Win_flush(t, w8.win));
    CHECK(res[0] == initial(t, 14) && res[1] == initial(t, 15), "Get_accumulate fetched %lld %lld",
          (long long)res[0], (long long)res[1]);
    OK(MPI_Fetch_and_op(&one, &res[0], MPI_INT64_T, t, 8 * 16, MPI_SUM, w1.win));
    ndirect++;
    OK(MPI_Fetch_and_op(&one, &res[1], MPI_INT64_T, t, 8 * 16, MPI_NO_OP, w1.win));
    ndirect++;
    OK(MPI_Fetch_and_op(&v, &res[2], MPI_INT64_T, t, 17, MPI_REPLACE, w8.win));
    ndirect++;
    OK(MPI_Win_flush_all(w1.win));
    OK(MPI_Win_flush_all(w8.win));
    CHECK(res[0] == initial(t, 16) && res[1] == initial(t, 16) + 1 && res[2] == initial(t, 17),
          "Fetch_and_op fetched %lld %lld %lld", (long long)res[0], (long long)res[1],
          (long long)res[2]);
    int64_t cmp = initial(t, 18), nv = -5;
    OK(MPI_Compare_and_swap(&nv, &cmp, &res[0], MPI_INT64_T, t, 8 * 18, w1.win));
    ndirect++;
    OK(MPI_Compare_and_swap(&nv, &cmp, &res[1], MPI_INT64_T, t, 8 * 19, w1.win)); /* no swap */
    ndirect++;
    int32_t c32 = (int32_t)initial(t, 20), n32 = 77, r32 = 0; /* the low half, little-endian */
    OK(MPI_Compare_and_swap(&n32, &c32, &r32, MPI_INT32_T, t, 8 * 20, w1.win));
    ndirect++;
    double d = 1e9, dres = 0;
    OK(MPI_Accumulate(&d, 1, MPI_DOUBLE, t, 21, 1, MPI_DOUBLE, MPI_MAX, w8.win));
    ndirect++;
    OK(MPI_Get_accumulate(&d, 1, MPI_DOUBLE, &dres, 1, MPI_DOUBLE, t, 21, 1, MPI_DOUBLE, MPI_MIN,
                          w8.win));
    ndirect++;
    /* the window's last 8 bytes exactly */
    OK(MPI_Put(&v, 1, MPI_INT64_T, t, WBYTES - 8, 1, MPI_INT64_T, w1.win));
    ndirect++;
    OK(MPI_Win_flush(t, w1.win));
    OK(MPI_Win_flush(t, w8.win));
    CHECK(res[0] == initial(t, 18) && res[1] == initial(t, 19),
          "Compare_and_swap fetched %lld %lld", (long long)res[0], (long long)res[1]);
    CHECK(r32 == c32, "Compare_and_swap (int32) fetched %d, expected %d", r32, c32);
    CHECK(dres == 1e9, "Get_accumulate (MPI_MIN on a double) fetched %g", dres);

    /* ---- the general path: non-contiguous types, misaligned elements, requests ---- */
    int64_t src4[4] = {11, 12, 13, 14};
    OK(MPI_Put(src4, 1, vec, t, 8 * 24, 2, MPI_INT64_T, w1.win)); /* 11, 13 */
    OK(MPI_Get(res, 1, vec, t, 8 * 26, 2, MPI_INT64_T, w1.win));  /* into res[0], res[2] */
    OK(MPI_Accumulate(src4, 1, vec, t, 28, 2, MPI_INT64_T, MPI_SUM, w8.win)); /* 11, 13 */
    int64_t mis = 3;
    OK(MPI_Accumulate(&mis, 1, MPI_INT64_T, t, 8 * 30 + 4, 1, MPI_INT64_T, MPI_SUM, w1.win));
    MPI_Request rq;
    OK(MPI_Rput(&v, 1, MPI_INT64_T, t, 8 * 32, 1, MPI_INT64_T, w1.win, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    OK(MPI_Win_flush(t, w1.win));
    OK(MPI_Win_flush(t, w8.win));
    CHECK(res[0] == initial(t, 26) && res[2] == initial(t, 27), "Get into a vector: %lld %lld",
          (long long)res[0], (long long)res[2]);

    /* ---- refused: out of range (nothing written), outside the epoch; the anchors do not
     * check ranges (tests/mpi/anchors.py) ---- */
    if (on_tandem) {
        EXPECT(MPI_Put(&v, 1, MPI_INT64_T, t, WBYTES - 4, 1, MPI_INT64_T, w1.win),
               MPI_ERR_RMA_RANGE, "MPI_Put", "target_disp");
        EXPECT(MPI_Put(v2, 2, MPI_INT64_T, t, NELEM - 1, 2, MPI_INT64_T, w8.win), MPI_ERR_RMA_RANGE,
               "MPI_Put", "target_disp");
        EXPECT(MPI_Get(res, 1, MPI_INT64_T, t, WBYTES, 1, MPI_INT64_T, w1.win), MPI_ERR_RMA_RANGE,
               "MPI_Get", "target_disp");
        EXPECT(MPI_Fetch_and_op(&one, res, MPI_INT64_T, t, NELEM, MPI_SUM, w8.win),
               MPI_ERR_RMA_RANGE, "MPI_Fetch_and_op", "target_disp");
        EXPECT(MPI_Compare_and_swap(&nv, &cmp, res, MPI_INT64_T, t, (MPI_Aint)1 << 61, w8.win),
               MPI_ERR_RMA_RANGE, "MPI_Compare_and_swap", "target_disp");
        EXPECT(MPI_Accumulate(acc, 2, MPI_INT64_T, t, WBYTES - 8, 2, MPI_INT64_T, MPI_SUM, w1.win),
               MPI_ERR_RMA_RANGE, "MPI_Accumulate", "target_disp");
        if (!lock_all && size > 1)
            EXPECT(MPI_Put(&v, 1, MPI_INT64_T, rank, 0, 1, MPI_INT64_T, w1.win), MPI_ERR_RMA_SYNC,
                   "MPI_Put", "not locked");
        /* what the bindings' fast paths must leave to the full checks */
        EXPECT(MPI_Put(&v, 1, MPI_INT64_T, size, 0, 1, MPI_INT64_T, w1.win), MPI_ERR_RANK,
               "MPI_Put", "target_rank");
        EXPECT(MPI_Get(res, 1, MPI_INT64_T, t, -8, 1, MPI_INT64_T, w1.win), MPI_ERR_DISP, "MPI_Get",
               "target_disp");
        unsigned char byte = 1, bres = 0;
        EXPECT(MPI_Fetch_and_op(&byte, &bres, MPI_BYTE, t, 0, MPI_SUM, w1.win), MPI_ERR_OP,
               "MPI_Fetch_and_op", "MPI_SUM");
        EXPECT(MPI_Compare_and_swap(&d, &d, &dres, MPI_DOUBLE, t, 0, w1.win), MPI_ERR_TYPE,
               "MPI_Compare_and_swap", "datatype");
        if (!lock_all && size > 1)
            EXPECT(MPI_Win_flush(rank, w1.win), MPI_ERR_RMA_SYNC, "MPI_Win_flush", "not locked");
        OK(MPI_Put(&v, 1, MPI_INT64_T, MPI_PROC_NULL, 0, 1, MPI_INT64_T, w1.win));
        OK(MPI_Win_flush(MPI_PROC_NULL, w1.win));
    }
    unsigned long long got = direct_count() - before;
    if (lock_all) {
        OK(MPI_Win_unlock_all(w8.win));
        OK(MPI_Win_unlock_all(w1.win));
    } else {
        OK(MPI_Win_unlock(t, w8.win));
        OK(MPI_Win_unlock(t, w1.win));
    }
    if (on_tandem)
        CHECK(got == (unsigned long long)(expect_direct ? ndirect : 0),
              "tandem_rma_direct counted %llu operations, expected %d", got,
              expect_direct ? ndirect : 0);
    MPI_Type_free(&pair);
    MPI_Type_free(&vec);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- what the origin `from` did to this rank's windows ---- */
    int64_t e1[NELEM], e8[NELEM];
    for (int i = 0; i < NELEM; i++)
        e1[i] = e8[i] = initial(rank, i);
    for (int i = 0; i < 3; i++)
        e1[2 + i] = 7000 + 10 * from + i;
    e8[2] = 7000 + 10 * from;
    e8[3] = 7000 + 10 * from + 1;
    e1[12] += 5;
    e1[13] -= 3;
    e8[14] += 5;
    e8[15] -= 3;
    e1[16] += 1;
    e8[17] = 1000 + from;
    e1[18] = -5;
    int32_t lo32 = 77;
    memcpy(&e1[20], &lo32, 4); /* the int32 swapped: the element's first 4 bytes */
    double dd = 1e9;
    memcpy(&e8[21], &dd, 8);
    e1[NELEM - 1] = 1000 + from;
    e1[24] = 11;
    e1[25] = 13;
    e8[28] += 11;
    e8[29] += 13;
    {
        int64_t x;
        memcpy(&x, (char *)&e1[30] + 4, 8); /* bytes 4..11 of elements 30, 31 */
        x += 3;
        memcpy((char *)&e1[30] + 4, &x, 8);
    }
    e1[32] = 1000 + from;
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w1.win);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w8.win);
    for (int i = 0; i < NELEM; i++) {
        CHECK(m1[i] == e1[i], "byte window element %d: %lld, expected %lld", i, (long long)m1[i],
              (long long)e1[i]);
        CHECK(m8[i] == e8[i], "8-byte window element %d: %lld, expected %lld", i, (long long)m8[i],
              (long long)e8[i]);
    }
    MPI_Win_unlock(rank, w8.win);
    MPI_Win_unlock(rank, w1.win);
    rt_win_free(&w8);
    rt_win_free(&w1);
    if (on_tandem) {
        if (pv_h != MPI_T_PVAR_HANDLE_NULL)
            OK(MPI_T_pvar_handle_free(pv_s, &pv_h));
        OK(MPI_T_pvar_session_free(&pv_s));
        MPI_T_finalize();
    }
    return rt_finish();
}
