/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Many small Puts and Gets to user memory (MPI_Win_create, dynamic windows), which Tandem
 * combines into one process_vm_writev/readv per batch: every element exact afterwards,
 * contiguous and derived types on either side, in every synchronization mode; a Get or
 * an accumulate after Puts to the same element sees them, requests among them complete
 * with the right data. On Tandem the counters tandem_rma_combined and
 * tandem_rma_combined_calls show that the Puts and Gets were combined (several to a
 * call), or that they were not where they may not be: forced eager with
 * TANDEM_RMA_EAGER_BATCH=1, CMA off (messages), one rank (the window is here).
 *   combine KIND SYNC   KIND create|dynamic, SYNC lock|lock_all|pscw|fence
 * Every rank writes and reads the next rank's window.
 */
#include "rmatest.h"

#define NELEM 4096 /* int64 elements in each window */
#define NOPS 3000  /* operations per phase */
#define SPAN (NELEM - 8)

static int64_t initial(int owner, int e) {
    return (int64_t)owner * 1000000 + e;
}

static int64_t written(int owner, int e) {
    return -((int64_t)owner * 1000000 + e) - 7;
}

/* Operation i of the Put phase: its first element j, and its form: 0 one element, 1 two
 * elements into a target vector (j, j+3), 2 two elements from an origin vector (j, j+1). */
static int put_elem(int i) {
    return (int)((long)i * 7 % SPAN);
}
static int put_form(int i) {
    return i % 10 == 7 ? 1 : i % 10 == 8 ? 2 : 0;
}

/* Which elements of a window the Put phase writes. */
static void put_marks(unsigned char *mark) {
    memset(mark, 0, NELEM);
    for (int i = 0; i < NOPS; i++) {
        int j = put_elem(i), f = put_form(i);
        mark[j] = 1;
        if (f == 1)
            mark[j + 3] = 1;
        if (f == 2)
            mark[j + 1] = 1;
    }
}

static MPI_T_pvar_session pv_s;
static MPI_T_pvar_handle pv_ops = MPI_T_PVAR_HANDLE_NULL, pv_calls = MPI_T_PVAR_HANDLE_NULL;

static void pvar_open(const char *name, MPI_T_pvar_handle *h) {
    int idx = -1, count = 0;
    OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx));
    if (idx < 0)
        return;
    OK(MPI_T_pvar_handle_alloc(pv_s, idx, NULL, h, &count));
    OK(MPI_T_pvar_start(pv_s, *h));
}

static unsigned long long pvar(MPI_T_pvar_handle h) {
    unsigned long long v = 0;
    if (h != MPI_T_PVAR_HANDLE_NULL)
        OK(MPI_T_pvar_read(pv_s, h, &v));
    return v;
}

enum { S_LOCK, S_LOCK_ALL, S_PSCW, S_FENCE };
static int sync_mode, t, from;
static MPI_Group g_t, g_from;

static void open_epoch(MPI_Win win) {
    switch (sync_mode) {
    case S_LOCK:
        OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        break;
    case S_LOCK_ALL:
        OK(MPI_Win_lock_all(0, win));
        break;
    case S_PSCW:
        OK(MPI_Win_post(g_from, 0, win));
        OK(MPI_Win_start(g_t, 0, win));
        break;
    default:
        OK(MPI_Win_fence(0, win));
    }
}

/* Halfway through a passive epoch: a flush. */
static void mid_epoch(MPI_Win win) {
    if (sync_mode == S_LOCK)
        OK(MPI_Win_flush(t, win));
    else if (sync_mode == S_LOCK_ALL)
        OK(MPI_Win_flush_all(win));
}

static void close_epoch(MPI_Win win) {
    switch (sync_mode) {
    case S_LOCK:
        OK(MPI_Win_unlock(t, win));
        break;
    case S_LOCK_ALL:
        OK(MPI_Win_unlock_all(win));
        break;
    case S_PSCW:
        OK(MPI_Win_complete(win));
        OK(MPI_Win_wait(win));
        break;
    default:
        OK(MPI_Win_fence(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the targets look at their memory after this */
}

int main(int argc, char **argv) {
    rt_init(&argc, &argv);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: combine create|dynamic lock|lock_all|pscw|fence\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int kind = rt_parse_kind(argv[1]);
    const char *sn = argv[2];
    sync_mode = !strcmp(sn, "lock")       ? S_LOCK
                : !strcmp(sn, "lock_all") ? S_LOCK_ALL
                : !strcmp(sn, "pscw")     ? S_PSCW
                                          : S_FENCE;
    t = (rank + 1) % size;
    from = (rank + size - 1) % size;
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &t, &g_t);
    MPI_Group_incl(world, 1, &from, &g_from);
    MPI_Group_free(&world);

    /* Combining expected: user memory in another process by CMA, unless every operation
     * is eager from the start and eager batches are of one operation. */
    const char *cma = getenv("TANDEM_CMA"), *ops = getenv("TANDEM_RMA_EAGER_OPS"),
               *bytes = getenv("TANDEM_RMA_EAGER_BYTES"), *batch = getenv("TANDEM_RMA_EAGER_BATCH");
    int forced_eager = (ops && !strcmp(ops, "0")) || (bytes && !strcmp(bytes, "0"));
    int expect = size > 1 && !(cma && !strcmp(cma, "off")) &&
                 !(forced_eager && batch && !strcmp(batch, "1"));
    if (on_tandem) {
        int provided;
        MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        OK(MPI_T_pvar_session_create(&pv_s));
        pvar_open("tandem_rma_combined", &pv_ops);
        pvar_open("tandem_rma_combined_calls", &pv_calls);
        CHECK(pv_ops != MPI_T_PVAR_HANDLE_NULL && pv_calls != MPI_T_PVAR_HANDLE_NULL,
              "the counters tandem_rma_combined(_calls) are missing");
    }

    rt_win_t w;
    rt_win_make(kind, NELEM * 8, 8, MPI_COMM_WORLD, &w);
    int64_t *mem = (int64_t *)(void *)w.base;
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, w.win));
    for (int e = 0; e < NELEM; e++)
        mem[e] = initial(rank, e);
    OK(MPI_Win_unlock(rank, w.win));
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Datatype tvec, ovec;
    MPI_Type_vector(2, 1, 3, MPI_INT64_T, &tvec); /* elements 0 and 3 */
    MPI_Type_commit(&tvec);
    MPI_Type_vector(2, 1, 2, MPI_INT64_T, &ovec); /* elements 0 and 2 */
    MPI_Type_commit(&ovec);
    unsigned char mark[NELEM];
    put_marks(mark);

    /* ---- Puts: NOPS small ones, non-adjacent, a flush halfway in passive epochs ---- */
    int64_t(*obuf)[3] = malloc(sizeof(*obuf) * NOPS);
    for (int i = 0; i < NOPS; i++) {
        int j = put_elem(i);
        obuf[i][0] = written(t, j);
        obuf[i][1] = written(t, put_form(i) == 1 ? j + 3 : j + 1);
        obuf[i][2] = written(t, j + 1);
    }
    unsigned long long ops0 = pvar(pv_ops), calls0 = pvar(pv_calls);
    open_epoch(w.win);
    for (int i = 0; i < NOPS; i++) {
        int j = put_elem(i);
        MPI_Aint d = rt_disp(&w, t, (MPI_Aint)j * 8);
        switch (put_form(i)) {
        case 0:
            OK(MPI_Put(obuf[i], 1, MPI_INT64_T, t, d, 1, MPI_INT64_T, w.win));
            break;
        case 1:
            OK(MPI_Put(obuf[i], 2, MPI_INT64_T, t, d, 1, tvec, w.win));
            break;
        default: /* obuf[i][0] and obuf[i][2]: elements j and j + 1 */
            OK(MPI_Put(obuf[i], 1, ovec, t, d, 2, MPI_INT64_T, w.win));
        }
        if (i == NOPS / 2)
            mid_epoch(w.win);
    }
    close_epoch(w.win);
    unsigned long long pops = pvar(pv_ops) - ops0, pcalls = pvar(pv_calls) - calls0;
    for (int e = 0; e < NELEM; e++) {
        int64_t want = mark[e] ? written(rank, e) : initial(rank, e);
        CHECK(mem[e] == want, "after the Puts, element %d is %lld, expected %lld", e,
              (long long)mem[e], (long long)want);
    }
    if (on_tandem && expect)
        CHECK(pops >= NOPS / 2 && pcalls * 4 <= pops,
              "Puts: %llu operations combined in %llu calls, expected most of %d in batches", pops,
              pcalls, NOPS);
    if (on_tandem && !expect)
        CHECK(pops == 0, "Puts: %llu operations combined (in %llu calls), expected none", pops,
              pcalls);

    /* ---- Gets: NOPS small ones, derived target and result types ---- */
    int64_t(*res)[3] = calloc(NOPS, sizeof(*res));
    ops0 = pvar(pv_ops);
    calls0 = pvar(pv_calls);
    open_epoch(w.win);
    for (int i = 0; i < NOPS; i++) {
        int j = (int)((long)i * 11 % SPAN);
        MPI_Aint d = rt_disp(&w, t, (MPI_Aint)j * 8);
        if (i % 10 == 7) /* elements j, j+3 into res[i][0..1] */
            OK(MPI_Get(res[i], 2, MPI_INT64_T, t, d, 1, tvec, w.win));
        else if (i % 10 == 8) /* elements j, j+1 into res[i][0] and res[i][2] */
            OK(MPI_Get(res[i], 1, ovec, t, d, 2, MPI_INT64_T, w.win));
        else
            OK(MPI_Get(res[i], 1, MPI_INT64_T, t, d, 1, MPI_INT64_T, w.win));
        if (i == NOPS / 2)
            mid_epoch(w.win);
    }
    close_epoch(w.win);
    unsigned long long gops = pvar(pv_ops) - ops0, gcalls = pvar(pv_calls) - calls0;
    for (int i = 0; i < NOPS; i++) {
        int j = (int)((long)i * 11 % SPAN);
        int e2 = i % 10 == 7 ? j + 3 : j + 1, k2 = i % 10 == 7 ? 1 : 2;
        int64_t w1 = mark[j] ? written(t, j) : initial(t, j);
        int64_t w2 = mark[e2] ? written(t, e2) : initial(t, e2);
        CHECK(res[i][0] == w1, "Get %d: element %d read %lld, expected %lld", i, j,
              (long long)res[i][0], (long long)w1);
        if (i % 10 == 7 || i % 10 == 8)
            CHECK(res[i][k2] == w2, "Get %d: element %d read %lld, expected %lld", i, e2,
                  (long long)res[i][k2], (long long)w2);
        if (i % 10 == 8)
            CHECK(res[i][1] == 0, "Get %d wrote the gap of its result vector: %lld", i,
                  (long long)res[i][1]);
    }
    if (on_tandem && expect)
        CHECK(gops >= NOPS / 2 && gcalls * 4 <= gops,
              "Gets: %llu operations combined in %llu calls, expected most of %d in batches", gops,
              gcalls, NOPS);
    if (on_tandem && !expect)
        CHECK(gops == 0, "Gets: %llu operations combined (in %llu calls), expected none", gops,
              gcalls);

    /* ---- order: a Get and an accumulate after Puts to the same element see them (MPI
     * calls these accesses conflicting: checked on Tandem, which orders them) ---- */
    int64_t pv[64], got[4] = {0, 0, 0, 0}, hundred = 100, rv = written(t, 3000);
    for (int k = 0; k < 64; k++)
        pv[k] = 5000 + k;
    open_epoch(w.win);
    for (int k = 0; k < 64; k++) /* elements 100..163 */
        OK(MPI_Put(&pv[k], 1, MPI_INT64_T, t, rt_disp(&w, t, (100 + k) * 8), 1, MPI_INT64_T,
                   w.win));
    OK(MPI_Accumulate(&hundred, 1, MPI_INT64_T, t, rt_disp(&w, t, 140 * 8), 1, MPI_INT64_T, MPI_SUM,
                      w.win));
    OK(MPI_Get(&got[0], 1, MPI_INT64_T, t, rt_disp(&w, t, 130 * 8), 1, MPI_INT64_T, w.win));
    OK(MPI_Get(&got[1], 1, MPI_INT64_T, t, rt_disp(&w, t, 140 * 8), 1, MPI_INT64_T, w.win));
    if (sync_mode == S_LOCK || sync_mode == S_LOCK_ALL) {
        /* requests among combined Puts: an Rget of a Put element, an Rput of another */
        MPI_Request rq[2];
        for (int k = 0; k < 8; k++)
            OK(MPI_Put(&pv[k], 1, MPI_INT64_T, t, rt_disp(&w, t, (200 + k) * 8), 1, MPI_INT64_T,
                       w.win));
        OK(MPI_Rget(&got[2], 1, MPI_INT64_T, t, rt_disp(&w, t, 205 * 8), 1, MPI_INT64_T, w.win,
                    &rq[0]));
        OK(MPI_Rput(&rv, 1, MPI_INT64_T, t, rt_disp(&w, t, 3000 * 8), 1, MPI_INT64_T, w.win,
                    &rq[1]));
        OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        if (on_tandem)
            CHECK(got[2] == 5005, "an Rget after Puts read %lld, expected 5005", (long long)got[2]);
    }
    close_epoch(w.win);
    if (on_tandem) {
        CHECK(got[0] == 5030, "a Get after Puts to its element read %lld, expected 5030",
              (long long)got[0]);
        CHECK(got[1] == 5140, "a Get after a Put and an Accumulate read %lld, expected 5140",
              (long long)got[1]);
    }
    for (int k = 0; k < 64; k++) {
        int64_t want = 5000 + k + (k == 40 ? 100 : 0);
        CHECK(mem[100 + k] == want, "element %d is %lld, expected %lld", 100 + k,
              (long long)mem[100 + k], (long long)want);
    }
    if (sync_mode == S_LOCK || sync_mode == S_LOCK_ALL)
        CHECK(mem[3000] == written(rank, 3000), "the Rput's element is %lld, expected %lld",
              (long long)mem[3000], (long long)written(rank, 3000));

    free(obuf);
    free(res);
    MPI_Type_free(&tvec);
    MPI_Type_free(&ovec);
    MPI_Group_free(&g_t);
    MPI_Group_free(&g_from);
    rt_win_free(&w);
    if (on_tandem) {
        if (pv_ops != MPI_T_PVAR_HANDLE_NULL)
            MPI_T_pvar_handle_free(pv_s, &pv_ops);
        if (pv_calls != MPI_T_PVAR_HANDLE_NULL)
            MPI_T_pvar_handle_free(pv_s, &pv_calls);
        MPI_T_pvar_session_free(&pv_s);
        MPI_T_finalize();
    }
    return rt_finish();
}
